"""A rerun into an output folder leaves none of the previous run's files that it did not write again, and never
removes a file the user put there (or changed), another command's outputs, or a sweep's cache."""
from __future__ import annotations

import json
import sys

import pytest

from simnuma.cli import main
from simnuma.fileio import MANIFEST_NAME, OutputFolder


def run(out, command, files: dict) -> None:
    with OutputFolder(out, command=command) as staging:
        for name, text in files.items():
            (staging / name).write_text(text)


def names(folder) -> list:
    return sorted(p.name for p in folder.iterdir() if p.name != MANIFEST_NAME)


def test_a_rerun_removes_what_the_previous_run_wrote_and_it_did_not(tmp_path):
    out = tmp_path / "out"
    run(out, "sweep", {"points.csv": "1", "rate.png": "figure"})
    (out / "notes.txt").write_text("the user's own file")
    (out / "cache").mkdir()
    (out / "cache" / "point.json").write_text("{}")
    run(out, "sweep", {"points.csv": "2"})
    assert names(out) == ["cache", "notes.txt", "points.csv"]
    assert (out / "points.csv").read_text() == "2" and (out / "cache" / "point.json").exists()
    record = json.loads((out / MANIFEST_NAME).read_text())
    assert list(record["runs"]) == ["sweep"] and list(record["runs"]["sweep"]) == ["points.csv"]


def test_a_recorded_file_the_user_changed_or_replaced_stays(tmp_path):
    out = tmp_path / "out"
    run(out, "sweep", {"a.png": "figure", "b.csv": "table", "c.md": "summary"})
    (out / "a.png").write_text("the user's edit")
    (out / "b.csv").unlink()
    (out / "b.csv").mkdir()              # a folder of the user's where a recorded file was
    (out / "c.md").unlink()
    (out / "c.md").symlink_to(tmp_path / "elsewhere.md")
    (tmp_path / "elsewhere.md").write_text("summary")     # the same bytes, through a link
    run(out, "sweep", {"points.csv": "1"})
    assert names(out) == ["a.png", "b.csv", "c.md", "points.csv"]
    assert (tmp_path / "elsewhere.md").read_text() == "summary"


def test_a_failed_run_removes_nothing_and_keeps_the_record(tmp_path):
    out = tmp_path / "out"
    run(out, "sweep", {"a.png": "figure"})
    record = (out / MANIFEST_NAME).read_text()
    with pytest.raises(RuntimeError):
        with OutputFolder(out, command="sweep") as staging:
            (staging / "b.png").write_text("figure")
            raise RuntimeError("the run failed part way")
    assert names(out) == ["a.png"] and (out / MANIFEST_NAME).read_text() == record
    run(out, "sweep", {"b.png": "figure"})
    assert names(out) == ["b.png"]


def test_another_commands_files_stay_and_a_file_rewritten_belongs_to_its_last_writer(tmp_path):
    out = tmp_path / "out"
    run(out, "reproduce", {"REPORT.md": "report", "shared.csv": "reproduce's"})
    run(out, "sweep", {"summary.md": "summary", "shared.csv": "the sweep's"})
    run(out, "sweep", {"points.csv": "1"})
    assert names(out) == ["REPORT.md", "points.csv"]    # the sweep's shared.csv went with the sweep's summary
    run(out, "reproduce", {"REPORT.md": "report"})
    assert names(out) == ["REPORT.md", "points.csv"]


def test_a_record_naming_files_outside_the_folder_is_ignored(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("figure")
    run(out, "sweep", {"a.png": "figure"})
    record = json.loads((out / MANIFEST_NAME).read_text())
    digest = record["runs"]["sweep"]["a.png"]
    record["runs"]["sweep"] = {"../victim.txt": digest, str(victim): digest, MANIFEST_NAME: digest, ".": digest}
    (out / MANIFEST_NAME).write_text(json.dumps(record))
    run(out, "sweep", {"b.png": "figure"})
    assert victim.read_text() == "figure" and names(out) == ["a.png", "b.png"]
    (out / MANIFEST_NAME).write_text("not json {")
    run(out, "sweep", {"c.png": "figure"})             # an unreadable record: nothing removed, a new one written
    assert names(out) == ["a.png", "b.png", "c.png"]
    assert list(json.loads((out / MANIFEST_NAME).read_text())["runs"]["sweep"]) == ["c.png"]


GRID = """\
name: grid
boards: [dual]
grid:
  link_defaults.bandwidth: [2 GB/s, 8 GB/s]
cases:
  - 0.0.r.1
size: 256KiB
"""

PLAIN = """\
name: plain
boards: [dual]
cases:
  - 0.0.r.1
size: 256KiB
"""


def test_a_sweep_rerun_into_its_folder_leaves_no_stale_figure_or_table(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    pytest.importorskip("pyarrow")
    out = tmp_path / "out"
    for name, text in (("grid.yaml", GRID), ("plain.yaml", PLAIN)):
        (tmp_path / name).write_text(text)
    assert main(["sweep", str(tmp_path / "grid.yaml"), "-o", str(out), "--jobs", "1"]) == 0
    assert {"link_defaults.bandwidth.png", "points.parquet", "cache"} <= set(names(out))
    (out / "my-notes.md").write_text("mine")
    monkeypatch.setitem(sys.modules, "pyarrow", None)      # pyarrow gone: no Parquet table this time
    assert main(["sweep", str(tmp_path / "plain.yaml"), "-o", str(out), "--jobs", "1"]) == 0
    assert names(out) == ["cache", "configurations.csv", "my-notes.md", "pareto.png", "points.csv", "summary.md",
                          "sweep.json"]
    assert len(list((out / "cache").glob("*.json"))) == 6        # both sweeps' simulations (4 and 2) kept


def test_a_command_says_what_it_removed(tmp_path, capsys):
    """A sweep rerun without its grid parameter's figure says it removed it."""
    from simnuma.cli import main

    sweep = tmp_path / "s.yaml"
    sweep.write_text("name: s\nboards: [dual]\ngrid: {link_defaults.latency: [10 ns, 20 ns]}\ncases: [0.0.r.1]\n"
                     "size: 64KiB\n")
    out = tmp_path / "out"
    assert main(["sweep", str(sweep), "-o", str(out)]) == 0
    figures = sorted(p.name for p in out.glob("link_defaults*.png"))
    sweep.write_text("name: s\nboards: [dual]\ncases: [0.0.r.1]\nsize: 64KiB\n")
    capsys.readouterr()
    assert main(["sweep", str(sweep), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    if figures:    # with matplotlib
        assert f"note: removed {len(figures)} file(s) the previous sweep run wrote in {out}" in err
        assert not list(out.glob("link_defaults*.png"))
