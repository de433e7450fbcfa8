"""Other tools' output as reference datasets: MLC, STREAM and likwid-bench, validated against a board."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from simnuma import load_topology
from simnuma.cli import main
from simnuma.errors import SpecError
from simnuma.formats.imports import parse_likwid, parse_mlc, parse_stream, reference_yaml
from simnuma.formats.matrix import MLC_MB_PER_SEC, Matrices, mlc_text
from simnuma.measurements import load_measurements

TOOLS = Path(__file__).resolve().parent / "fixtures" / "tools"
DUAL = load_topology("dual")


def test_mlc_sections():
    data = parse_mlc((TOOLS / "mlc-dual.txt").read_text())
    assert data["latency"] == {(0, 0): 101.4, (0, 1): 136.9, (1, 0): 137.2, (1, 1): 101.1}
    assert data["bandwidth"][(0, 1)] == 2533.8
    assert data["loaded"][0] == (0, 312.45, 7987.1) and len(data["loaded"]) == 5
    assert data["skipped"] == ["Measuring Peak Injection Memory Bandwidths for the system (line 8)",
                               "Measuring cache-to-cache transfer latency (in ns) (line 39)"]


def test_simnuma_matrix_output_reads_back_as_it_was_printed(tmp_path):
    """`simnuma matrix` prints MLC's layout and units (MB/sec), so import and validate read it as written."""
    m = Matrices("dual", "0123456789ab", (0, 1), [[100.0, 140.0], [141.0, 99.5]], [[1.73, 1.58], [1.57, 1.72]],
                 [[3.34, 2.5], [2.51, 3.37]], {0: [(0.1, 1.2, 114.2), (0.5, 3.67, 136.0)]}, 1, "0.1.0")
    text = mlc_text(m)
    assert "\n      0\t  100.0\t  140.0\n" in text          # one tab after the row's node, as MLC prints it
    data = parse_mlc(text)
    assert data["latency"] == {(0, 0): 100.0, (0, 1): 140.0, (1, 0): 141.0, (1, 1): 99.5}
    assert data["one_reader"] == pytest.approx({(0, 0): 1730.0, (0, 1): 1580.0, (1, 0): 1570.0, (1, 1): 1720.0})
    assert data["bandwidth"] == pytest.approx({(0, 0): 3340.0, (0, 1): 2500.0, (1, 0): 2510.0, (1, 1): 3370.0})
    assert data["loaded"] == [] and len(data["skipped"]) == 1 and data["skipped"][0].startswith("Loaded latencies")
    doc = yaml.safe_load(reference_yaml("mlc", text, DUAL, "dual.mlc"))
    values = {(m["case"], m["metric"]): m["value"] for m in doc["measurements"]}
    assert values[("0.0.r.1", "thread_GBps")] == "1580.0 MB/s"
    assert values[("1.0.r.0 1.1.r.0", "memory_GBps")] == "2510.0 MB/s"
    assert "not imported: Loaded latencies per memory node" in doc["description"]
    old = (text.replace("Measuring Memory Bandwidths between nodes within system", "Measuring memory bandwidths"
                        " between nodes, every core of a node reading (GB/s)...")
           .replace("Measuring Memory Bandwidths between nodes, one reader (simnuma: core 0 of the row's node)",
                    "Measuring memory bandwidths between nodes, one reader (GB/s)...")
           .replace(MLC_MB_PER_SEC, "").replace("2510.0", "2.51").replace("1580.0", "1.58"))
    earlier = parse_mlc(old)                          # an earlier simnuma matrix printed GB/s in the titles
    assert earlier["bandwidth"][(1, 0)] == pytest.approx(2510.0) and earlier["one_reader"][(0, 1)] == 1580.0


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace(" 4051.2", " -"), "line 24: node 0 to node 0 is '-'; expected a number"),
    (lambda t: t.replace("\t 2530.5", ""), "line 25: the row of node 1 has 1 values for 2 columns"),
    (lambda t: t.replace("Bandwidths are in MB/sec (1 MB/sec = 1,000,000 Bytes/sec)\nUsing all the threads from each"
                         " core if Hyper-threading is enabled\nUsing Read-only", "Using Read-only"),
     "line 18: a bandwidth grid that names no unit"),
    (lambda t: t.replace("Using Read-only traffic type\n\t\tNuma", "Using 1:1 Reads-Writes traffic type\n\t\tNuma"),
     "line 18: 'Measuring Memory Bandwidths between nodes within system' measured 1:1 reads-writes traffic"),
])
def test_a_damaged_or_other_mlc_grid_is_refused_with_its_line(edit, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        parse_mlc(edit((TOOLS / "mlc-dual.txt").read_text()))


def test_stream_and_likwid():
    stream = parse_stream((TOOLS / "stream-1thread.txt").read_text())
    assert stream == {"threads": 1, "array_elements": 10_000_000,
                      "best_MBps": {"Copy": 4412.7, "Scale": 4351.6, "Add": 4719.6, "Triad": 4693.9}}
    assert parse_likwid((TOOLS / "likwid-load.txt").read_text()) == {"test": "load", "threads": 1, "MBps": 15847.73}


def test_an_mlc_import_is_a_dataset_validate_reads(tmp_path):
    text = reference_yaml("mlc", (TOOLS / "mlc-dual.txt").read_text(), DUAL, "mlc-dual.txt")
    doc = yaml.safe_load(text)
    assert doc["board"] == "dual" and doc["format"] == "simnuma-reference/1"
    cases = [m["case"] for m in doc["measurements"]]
    assert "0.0.l.1" in cases and "0.0.r.1 0.1.r.1" in cases
    assert "0.0.l.0 + 0.1.r.0@2.662GB/s 1.0.r.1@2.662GB/s 1.1.r.1@2.662GB/s" in cases   # 7987.1 MB/s, 3 cores
    path = tmp_path / "mlc.yaml"
    path.write_text(text)
    measured = load_measurements([str(path)])
    assert len(measured.measurements) == 4 + 4 + 5
    latency = next(m for m in measured.measurements if m.case.name == "1.0.l.0")
    assert latency.value == pytest.approx(137.2)


@pytest.mark.parametrize("fmt,file,case,value", [
    ("stream", "stream-1thread.txt", "1.0.t.1", 4.6939),
    ("likwid", "likwid-load.txt", "0.0.r.0", 15.84773),
])
def test_one_thread_runs(tmp_path, fmt, file, case, value):
    text = reference_yaml(fmt, (TOOLS / file).read_text(), DUAL, file, case)
    path = tmp_path / "r.yaml"
    path.write_text(text)
    (m,) = load_measurements([str(path)]).measurements
    assert m.case.name == case and m.metric == "thread_GBps" and m.value == pytest.approx(value)


@pytest.mark.parametrize("fmt,text,case,message", [
    ("mlc", "nothing here", None, "no MLC measurement found"),
    ("stream", "Copy: 1.0 2 3 4\n", None, "no STREAM result found"),
    ("stream", (TOOLS / "stream-1thread.txt").read_text().replace("counted = 1", "counted = 8"), None,
     "the run used 8 threads"),
    ("stream", (TOOLS / "stream-1thread.txt").read_text(), "0.0.r.0", "expected one thread N.C.t.M"),
    ("likwid", "Test: copy\nMByte/s: 5\n", None, "likwid-bench test 'copy'"),
    ("mlc", (TOOLS / "mlc-dual.txt").read_text().replace("       1\t 137.2", "       7\t 137.2"), None,
     "NUMA nodes [7]"),
    ("stream", (TOOLS / "stream-1thread.txt").read_text().replace("Triad:           4693.9", "Triad:           -4693.9"),
     None, "the best Triad rate is -4693.9 MB/s; expected a positive number"),
    ("likwid", (TOOLS / "likwid-load.txt").read_text().replace("15847.73", "0"), None,
     "the load rate is 0 MB/s; expected a positive number"),
    ("mlc", (TOOLS / "mlc-dual.txt").read_text().replace(" 137.2", " -137.2"), None,
     "the idle latency from node 1 to node 0 is -137.2 ns"),
    ("stream", (TOOLS / "stream-1thread.txt").read_text(), "0.0.t.0@1GB/s", "expected one thread N.C.t.M"),
])
def test_what_cannot_be_imported_says_why(fmt, text, case, message):
    with pytest.raises(SpecError, match=message.replace("[", r"\[").replace("]", r"\]")):
        reference_yaml(fmt, text, DUAL, "x.txt", case)


def test_import_then_validate_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "stream.yaml"
    assert main(["import", "stream", str(TOOLS / "stream-1thread.txt"), "--board", "dual", "--case", "0.0.t.0",
                 "-o", str(out)]) == 0
    assert "1 measurement of board dual" in capsys.readouterr().out
    assert main(["validate", "dual", str(out), "--jobs", "1", "-o", str(tmp_path / "v")]) == 0
    assert "0.0.t.0" in capsys.readouterr().out
    assert main(["import", "mlc", str(tmp_path / "missing.txt"), "--board", "dual", "-o", str(tmp_path / "m.yaml")]) == 2
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.parametrize("board,fixture,extra,measured", [
    ("quartet", "mlc-4node.txt", [], "1.0.l.2"),
    ("quartet", "stream-1thread.txt", [], "0.0.t.0"),
    ("x6440", "stream-x6440-cpu1.txt", ["--case", "1.0.t.1"], None),
])
def test_a_tool_output_validates_against_a_calibrated_board_in_one_command(capsys, board, fixture, extra, measured):
    code = main(["validate", board, str(TOOLS / fixture), "--jobs", "2", *extra])
    captured = capsys.readouterr()
    if measured is None:      # the X6440 was calibrated on this very measurement: nothing is left to predict
        assert code == 2 and "was used to calibrate board 'x6440'; nothing is left to validate" in captured.err
    else:
        assert code == 0 and measured in captured.out and "mean" in captured.out
