"""Tool outputs as real runs print them when something is off: a section MLC could not measure, MLC 2's grid
header, a memory-only node's row of '-', two runs in one file, a big machine's small loaded-latency shares,
STREAM's failed validation, likwid-bench's thread count; each imported right or refused in one line."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from simnuma import load_topology
from simnuma.errors import CalibrationError, SpecError
from simnuma.formats.imports import parse_likwid, parse_mlc, reference_yaml
from simnuma.measurements import load_measurements
from simnuma.topology import parse_topology

TOOLS = Path(__file__).resolve().parent / "fixtures" / "tools"
DUAL = load_topology("dual")
HEADER = "Intel(R) Memory Latency Checker - v3.11\nCommand line parameters: --latency_matrix\n\n"
BANDWIDTH = ("Measuring Memory Bandwidths between nodes within system \n"
             "Bandwidths are in MB/sec (1 MB/sec = 1,000,000 Bytes/sec)\n"
             "Using all the threads from each core if Hyper-threading is enabled\nUsing Read-only traffic type\n"
             "\t\tNuma node\nNuma node\t     0\t     1\t\n       0\t 4051.2\t 2533.8\t\n       1\t 2530.5\t 4049.9\t\n")


def _latency(rows: str, columns: str = "0\t     1") -> str:
    return (HEADER + "Measuring idle latencies for random access (in ns)...\n\t\tNuma node\n"
            f"Numa node\t     {columns}\t\n{rows}\n")


def with_memory_node():
    """The two-socket board with a memory-only node 2 behind socket 0 (a CXL memory)."""
    doc = DUAL.to_dict()
    doc["name"] = "dual-cxl"
    doc["nodes"].append({"id": 2, "cores": 0})
    doc["links"].append({"a": 0, "b": 2})
    doc.pop("layout", None)
    return parse_topology(yaml.safe_dump(doc), "dual-cxl.yaml")


def test_a_section_mlc_could_not_measure_is_not_read_from_the_next_one():
    """MLC 3.11 prints why instead of the grid; the bandwidth matrix below is not taken for latencies."""
    text = (HEADER + "Measuring idle latencies for random access (in ns)...\n"
            "*** Failed to allocate 2000.000MiB on node 1 for latency measurement; skipping\n\n" + BANDWIDTH)
    data = parse_mlc(text)
    assert data["latency"] == {} and data["bandwidth"][(0, 1)] == 2533.8
    assert data["skipped"] == ["Measuring idle latencies for random access (in ns) (line 4): no grid, MLC printed:"
                               " Failed to allocate 2000.000MiB on node 1 for latency measurement; skipping"]
    notes: list = []
    doc = yaml.safe_load(reference_yaml("mlc", text, DUAL, "failed.mlc", notes=notes))
    assert {m["metric"] for m in doc["measurements"]} == {"memory_GBps"}
    assert notes == [f"not imported: {data['skipped'][0]}"]


def test_mlc_2_grids_with_a_socket_header_are_read():
    text = ("Intel(R) Memory Latency Checker - v2.3\nMeasuring idle latencies (in ns)...\n\tMemory node\n"
            "Socket\t     0\t     1\t\n     0\t  98.1\t 137.0\t\n     1\t 136.8\t  98.0\t\n")
    assert parse_mlc(text)["latency"] == {(0, 0): 98.1, (0, 1): 137.0, (1, 0): 136.8, (1, 1): 98.0}


def test_a_memory_only_nodes_row_of_dashes_is_skipped_where_the_board_says_it_has_no_cores():
    text = _latency("       0\t  98.2\t 136.9\t 137.0\t\n       1\t 137.4\t  97.9\t 162.1\t\n"
                    "       2\t     -\t     -\t     -\t", "0\t     1\t     2")
    doc = yaml.safe_load(reference_yaml("mlc", text, with_memory_node(), "cxl.mlc"))
    assert sorted(m["case"] for m in doc["measurements"])[:3] == ["0.0.l.0", "0.0.l.1", "0.0.l.2"]
    assert len(doc["measurements"]) == 6
    three = DUAL.to_dict()
    three["nodes"].append({"id": 2})
    three["links"].append({"a": 0, "b": 2})
    three.pop("layout", None)
    with pytest.raises(SpecError, match="row of node 2 is all '-' .* gives it 2 cores"):
        reference_yaml("mlc", text, parse_topology(yaml.safe_dump(three), "three.yaml"), "cxl.mlc")
    numbers = text.replace("       2\t     -\t     -\t     -", "       2\t 200.0\t 210.0\t 220.0")
    with pytest.raises(SpecError, match="measures from node 2, which board 'dual-cxl' gives no cores"):
        reference_yaml("mlc", numbers, with_memory_node(), "cxl.mlc")


@pytest.mark.parametrize("edit, message", [
    (lambda t: t + "\n" + t, "line 13: a second 'Measuring idle latencies for random access \\(in ns\\)...' \\(the"
                             " first at line 4\\): give one MLC run per file"),
    (lambda t: t.replace("       1\t 137.4", "       0\t 137.4"), "line 8: a second row for node 0 in one grid"),
])
def test_two_runs_or_a_repeated_row_are_refused(edit, message):
    text = edit(_latency("       0\t  98.2\t 136.9\t\n       1\t 137.4\t  97.9\t"))
    with pytest.raises(SpecError, match=message):
        parse_mlc(text)


def test_small_shares_of_a_big_machines_loaded_bandwidth_keep_their_digits():
    """80 cores sharing 1800 MB/s: 22.78 MB/s a core (was written 0.023 GB/s, 1% off); 20 MB/s among 79 cores is
    under simnuma's slowest thread (1 MB/s) and left out with a note (was: the whole import refused)."""
    doc = DUAL.to_dict()
    doc["defaults"]["cores"] = 40
    big = parse_topology(yaml.safe_dump(doc), "big.yaml")
    text = (HEADER + "Measuring Loaded Latencies for the system\nUsing all the threads from each core if"
            " Hyper-threading is enabled\nUsing Read-only traffic type\nInject\tLatency\tBandwidth\nDelay\t(ns)\t"
            "MB/sec\n==========================\n 00000\t312.45\t 180000.0\n 02000\t140.20\t   1800.0\n"
            " 20000\t120.10\t     20.0\n\n")
    notes: list = []
    out = yaml.safe_load(reference_yaml("mlc", text, big, "big.mlc", notes=notes))["measurements"]
    assert [m["case"].split()[2] for m in out] == ["0.1.r.0@2.278GB/s", "0.1.r.0@22.78MB/s"]
    assert notes == ["MLC inject delay 20000: 20 MB/s shared by 79 cores is 0.25 MB/s a core, under simnuma's"
                     " slowest rate of 1 MB/s a thread"]


def test_stream_that_failed_its_validation_is_refused():
    text = (TOOLS / "stream-1thread.txt").read_text() + (
        "Failed Validation on array c[], AvgRelAbsErr > epsilon (1.000000e-13)\n")
    with pytest.raises(SpecError, match="STREAM says 'Failed Validation on array c"):
        reference_yaml("stream", text, DUAL, "stream.txt")


def test_likwid_bench_says_how_many_threads_ran():
    one = (TOOLS / "likwid-load.txt").read_text()
    assert parse_likwid(one)["threads"] == 1
    two = one.replace("Using 1 threads", "Using 2 threads")
    assert parse_likwid(two)["threads"] == 2
    with pytest.raises(SpecError, match="the run used 2 threads"):
        reference_yaml("likwid", two, DUAL, "likwid.txt")


def test_case_is_for_one_thread_tools_and_its_default_runs_on_a_node_with_cores():
    mlc = (TOOLS / "mlc-dual.txt").read_text()
    with pytest.raises(SpecError, match="--case: MLC's output says where each of its measurements ran"):
        reference_yaml("mlc", mlc, DUAL, "mlc.txt", case="0.0.l.0")
    doc = with_memory_node().to_dict()
    doc["nodes"] = [{"id": 0, "cores": 0}, {"id": 1}, {"id": 2}]
    doc["links"] = [{"a": 0, "b": 1}, {"a": 1, "b": 2}]
    memory_first = parse_topology(yaml.safe_dump(doc), "memfirst.yaml")
    out = yaml.safe_load(reference_yaml("stream", (TOOLS / "stream-1thread.txt").read_text(), memory_first, "s.txt"))
    assert out["measurements"][0]["case"] == "1.0.t.1"


def test_validate_names_what_it_did_not_import_and_what_it_cannot_read(tmp_path):
    from simnuma.calibrate.validate import validate

    failed = tmp_path / "failed.mlc"
    failed.write_text(HEADER + "Measuring idle latencies for random access (in ns)...\n*** Failed to allocate\n\n"
                      + BANDWIDTH)
    data = load_measurements([failed], DUAL)
    assert data.notes == (f"{failed}: not imported: Measuring idle latencies for random access (in ns) (line 4):"
                          " no grid, MLC printed: Failed to allocate",)
    text = validate(DUAL, data).render_text()
    assert f"note: {failed}: not imported: Measuring idle latencies" in text
    other = tmp_path / "notes.txt"
    other.write_text("hello world\nthis is: not yaml: at all\n")
    with pytest.raises(CalibrationError, match="not measurements .* nor the output of a tool simnuma reads"):
        load_measurements([other], DUAL)
