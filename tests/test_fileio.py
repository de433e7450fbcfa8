"""Results are written all or nothing, one run at a time, never through a link or onto a device, and an
output path that cannot be written is found before the work starts."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simnuma.cli import main
from simnuma.errors import SimnumaError
from simnuma.fileio import MANIFEST_NAME, STAGING_PREFIX, OutputFolder, check_output_file, check_output_folder, write_atomic

from test_study import TINY, write

ROOT = Path(__file__).resolve().parent.parent


def snapshot(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------- the pieces

def test_an_output_folder_moves_its_files_in_only_when_the_block_succeeds(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "REPORT.md").write_text("old report")
    (out / "notes.txt").write_text("the user's own file")
    with pytest.raises(RuntimeError):
        with OutputFolder(out) as staging:
            (staging / "REPORT.md").write_text("new report")
            raise RuntimeError("the run failed part way")
    assert snapshot(out) == {"REPORT.md": b"old report", "notes.txt": b"the user's own file"}
    with OutputFolder(out) as staging:
        (staging / "REPORT.md").write_text("new report")
        (staging / "a.json").write_text("{}")
    files = snapshot(out)
    assert files.pop(MANIFEST_NAME)      # the record of what the run wrote
    assert files == {"REPORT.md": b"new report", "a.json": b"{}", "notes.txt": b"the user's own file"}
    assert not list(out.glob(STAGING_PREFIX + "*"))


def test_two_runs_cannot_write_into_one_folder_at_once(tmp_path):
    with OutputFolder(tmp_path / "out"):
        with pytest.raises(SimnumaError, match="another simnuma run is writing into this folder"):
            with OutputFolder(tmp_path / "out"):
                pass
    with OutputFolder(tmp_path / "out"):    # the lock went with the first run
        pass


def test_a_killed_run_leaves_a_staging_folder_the_next_run_removes(tmp_path):
    out = tmp_path / "out"
    (out / (STAGING_PREFIX + "dead")).mkdir(parents=True)
    (out / (STAGING_PREFIX + "dead") / "half.json").write_text("{")
    with OutputFolder(out) as staging:
        (staging / "x.json").write_text("{}")
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST_NAME, "x.json"]


@pytest.mark.parametrize("make,message", [
    (lambda p: p.symlink_to(p.parent / "elsewhere.json"), "symbolic link"),
    (lambda p: os.mkfifo(p), "device, FIFO or socket"),
    (lambda p: p.mkdir(), "a folder"),
])
def test_a_link_a_fifo_or_a_folder_is_never_replaced(tmp_path, make, message):
    target = tmp_path / "result.json"
    make(target)
    with pytest.raises(SimnumaError, match=message):
        write_atomic(target, "{}")
    assert not (tmp_path / "elsewhere.json").exists()


def test_an_unwritable_place_is_named(tmp_path):
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(SimnumaError, match="is not a folder"):
        check_output_file(tmp_path / "a-file" / "sub" / "result.json")
    with pytest.raises(SimnumaError, match="exists and is not a folder"):
        OutputFolder(tmp_path / "a-file")


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_place_the_system_refuses_is_named_before_any_work_even_for_root():
    """Permissions do not tell a pseudo file system (or a read-only mount, or anything for root): a file is tried."""
    with pytest.raises(SimnumaError, match=r"^/proc/result.json: cannot write here: "):
        check_output_file("/proc/result.json")
    with pytest.raises(SimnumaError, match=r"^/proc/fs: cannot write here"):
        check_output_folder("/proc/fs")


def test_the_check_leaves_nothing_behind(tmp_path):
    check_output_file(tmp_path / "result.json")
    check_output_folder(tmp_path)
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- the commands

def test_a_reproduce_that_fails_part_way_leaves_the_previous_results(tmp_path, monkeypatch, capsys):
    study = write(tmp_path, TINY, "tiny.yaml")
    out = tmp_path / "out"
    assert main(["reproduce", str(study), "-o", str(out), "--jobs", "1", "--seed", "3"]) == 0
    before = snapshot(out)
    from simnuma.study import output

    def broken_report(*args, **kwargs):
        raise SimnumaError("REPORT.md: cannot write: disk full")

    monkeypatch.setattr(output, "render_report", broken_report)
    assert main(["reproduce", str(study), "-o", str(out), "--jobs", "1", "--seed", "4"]) == 2
    assert "disk full" in capsys.readouterr().err
    assert snapshot(out) == before


@pytest.mark.parametrize("argv", [
    ["reproduce", "STUDY", "-o", "FILE"],
    ["run", "dual", "0.0.r.0", "-o", "FILE/x.json"],
    ["validate", "dual", "quartet-single-thread", "-o", "FILE"],
    ["calibrate", "dual", "quartet-single-thread", "-o", "FILE/x.yaml"],
])
def test_a_bad_output_path_is_refused_before_any_simulation(tmp_path, monkeypatch, capsys, argv):
    from simnuma import runner
    from simnuma.model import system

    def no_simulation(*args, **kwargs):
        raise AssertionError("simulated before checking the output path")

    monkeypatch.setattr(system, "simulate", no_simulation)
    monkeypatch.setattr(runner, "simulate_job", no_simulation)
    (tmp_path / "FILE").write_text("not a folder")
    study = write(tmp_path, TINY, "tiny.yaml")
    argv = [str(study) if a == "STUDY" else a.replace("FILE", str(tmp_path / "FILE")) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a folder" in err[0], err


@pytest.mark.parametrize("argv, message", [
    (["run", "BOARD", "0.0.r.0", "-o", "BOARD"], "-o BOARD: is the board this command reads"),
    (["run", "BOARD", "0.0.r.0", "--trace", "BOARD"], "--trace BOARD: is the board this command reads"),
    (["export", "slit", "BOARD", "-o", "BOARD"], "-o BOARD: is the board this command reads"),
    (["matrix", "BOARD", "--csv", "BOARD"], "--csv BOARD: is the board this command reads"),
    (["import", "stream", "STREAM", "--board", "dual", "-o", "STREAM"], "-o STREAM: is the stream output this command"),
    (["calibrate", "dual", "REF", "-o", "REF"], "-o REF: is a measurement file this command reads"),
    (["calibrate", "BOARD", "REF", "-o", "OUT", "--json", "BOARD"], "--json BOARD: is the board this command reads"),
])
def test_an_output_is_never_an_input_of_the_command(tmp_path, monkeypatch, capsys, argv, message):
    from simnuma import runner
    from simnuma.model import system

    def no_simulation(*args, **kwargs):
        raise AssertionError("simulated before checking the output path")

    monkeypatch.setattr(system, "simulate", no_simulation)
    monkeypatch.setattr(runner, "simulate_job", no_simulation)
    files = {"BOARD": "board.yaml", "STREAM": "stream.txt", "REF": "ref.yaml", "OUT": "out.yaml"}
    for name in ("BOARD", "STREAM", "REF"):
        (tmp_path / files[name]).write_text(f"the {name}")
    argv = [str(tmp_path / files[a]) if a in files else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    for name, file in files.items():
        message = message.replace(name, str(tmp_path / file))
    assert len(err) == 1 and err[0].startswith(message) and err[0].endswith("; give another path"), err
    assert all((tmp_path / files[n]).read_text() == f"the {n}" for n in ("BOARD", "STREAM", "REF"))


def test_sigterm_stops_the_run_its_workers_and_leaves_the_folder_as_it_was(tmp_path):
    study = write(tmp_path, TINY.replace("size: 64 KiB", "size: 64 MiB").replace("plot: loads", "plot: loads"),
                  "slow.yaml")
    out = tmp_path / "out"
    out.mkdir()
    (out / "REPORT.md").write_text("the previous report")
    proc = subprocess.Popen([sys.executable, "-m", "simnuma", "reproduce", str(study), "-o", str(out), "--jobs", "2",
                             "--exact"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    workers = []
    deadline = time.monotonic() + 120   # a loaded machine starts processes slowly
    while time.monotonic() < deadline and len(workers) < 2:   # the pool's workers are up: the run is under way
        time.sleep(0.2)
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
        workers = [int(pid) for pid in children.read_text().split()] if children.exists() else []
    assert workers, "the run never started its workers"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143 and "terminated" in err and "Traceback" not in err, err
    assert snapshot(out) == {"REPORT.md": b"the previous report"}
    time.sleep(0.5)
    alive = []
    for pid in workers:
        try:
            os.kill(pid, 0)
            alive.append(pid)
        except ProcessLookupError:
            pass
    assert not alive, f"workers {alive} outlived the run"


# ---------------------------------------------------------------- input files

@pytest.mark.parametrize("make,message", [
    (lambda p: os.mkfifo(p), "a device, FIFO or socket"),          # opening it would block
    (lambda p: os.truncate(p.write_text("") or p, 64 * 2**20), "at most 16 MiB"),
    (lambda p: p.write_bytes(b"name: x\x00\n"), "a NUL byte on line 1, byte 7"),
    (lambda p: p.write_bytes(b"name: a\nlinks: \xff\n"), "not UTF-8 text (line 2, byte 15)"),
])
@pytest.mark.parametrize("command", [["topo", "check", "FILE"], ["reproduce", "FILE.yaml", "-o", "OUT"],
                                     ["validate", "quartet", "FILE", "-o", "OUT"]])
def test_an_input_that_is_not_a_small_text_file_is_one_line(tmp_path, capsys, make, message, command):
    path = tmp_path / "input.yaml"
    make(path)
    argv = [str(path) if a in ("FILE", "FILE.yaml") else str(tmp_path / "out") if a == "OUT" else a for a in command]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and str(path) in err[0], err


def test_a_device_as_board_is_refused(capsys):
    assert main(["run", "/dev/zero", "0.0.r.0"]) == 2
    assert "device, FIFO or socket" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["a: " + "[" * 30_000, "a: " + "[" * 5000 + "]" * 5000,
                                  "".join("  " * i + "k:\n" for i in range(200))])
def test_deep_nesting_is_one_problem_not_a_crash(tmp_path, capsys, text):
    board = tmp_path / "deep.yaml"
    board.write_text(text)
    assert main(["topo", "check", str(board)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nested more than 64 levels deep" in err[0], err


def test_numbers_are_read_as_yaml_1_2_reads_them():
    from simnuma.yamlsrc import load_yaml

    assert load_yaml("cores: 1:30\nlatency: 1:30.5\nports: 12\nx: 1.5e+3\n").data == {
        "cores": "1:30", "latency": "1:30.5", "ports": 12, "x": 1500.0}
    # YAML 1.2's exponent forms, which YAML 1.1 leaves as text, are numbers; a text with letters stays text
    assert load_yaml("a: 1e2\nb: 1.08e2\nc: -2.5E-3\nd: .5e1\ne: 8e10fbb70fec\n").data == {
        "a": 100.0, "b": 108.0, "c": -0.0025, "d": 5.0, "e": "8e10fbb70fec"}
    # and what simnuma writes reads back as it was: a text that would read as a number is quoted
    from simnuma.topology import load_topology, parse_topology
    from simnuma.yamlsrc import dump_yaml

    texts = {"a": "1e5", "b": "1.08e2", "c": "1:30", "d": 1e5}
    assert load_yaml(dump_yaml(texts)).data == texts
    doc = load_topology("quartet").to_dict()
    doc["description"] = "1e5"
    assert parse_topology(parse_topology(dump_yaml(doc)).to_yaml()).description == "1e5"


def test_a_bench_suite_keeps_the_cases_that_ran_when_some_failed(tmp_path, monkeypatch, capsys):
    from simnuma.bench import cli as bench_cli
    from simnuma.errors import BenchError

    def suite_with_a_failure(out_dir, **kwargs):
        (out_dir / "0.0.r.0.json").write_text("{}")
        (out_dir / "suite.json").write_text("{}")
        raise BenchError(f"1 of 2 suite cases failed (first: '0.0.w.0': it failed); see {out_dir / 'suite.json'}")

    monkeypatch.setattr(bench_cli, "run_suite", suite_with_a_failure)
    out = tmp_path / "suite"
    assert main(["bench", "suite", "-o", str(out)]) == 2
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST_NAME, "0.0.r.0.json", "suite.json"]
    assert f"see {out / 'suite.json'}" in capsys.readouterr().err

    def suite_that_stops(out_dir, **kwargs):
        (out_dir / "0.0.r.0.json").write_text("{}")
        raise BenchError("the probe that plans the suite failed")

    monkeypatch.setattr(bench_cli, "run_suite", suite_that_stops)
    again = tmp_path / "again"
    assert main(["bench", "suite", "-o", str(again)]) == 2
    assert not again.exists()      # the folder the failed run created is gone again


def test_away_from_a_terminal_a_long_run_writes_a_progress_line_now_and_then(monkeypatch):
    """A batch job's log gets whole lines once the run has lasted the interval, a short run none."""
    import io
    import time

    import simnuma.fileio as fileio

    quick = io.StringIO()
    with fileio.progress(total=5, desc="validating", stream=quick) as bar:
        bar.update(5)
    assert quick.getvalue() == ""
    monkeypatch.setattr(fileio, "LOG_INTERVAL_S", 0.02)
    log = io.StringIO()
    bar = fileio.progress(total=10, desc="calibrating (simulations)", stream=log)
    for _ in range(10):
        time.sleep(0.01)
        bar.update(1)
    bar.close()
    lines = log.getvalue().splitlines()
    assert len(lines) >= 2 and "\r" not in log.getvalue()
    assert lines[-1].startswith("calibrating (simulations): 100%") and "10/10" in lines[-1]
