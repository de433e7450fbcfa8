"""Bandwidth-latency curves out of a suite, and the board that `bench host --suite` writes with them."""
from __future__ import annotations

import math

import json
import shutil
from pathlib import Path

import pytest
import yaml
from benchutil import assert_one_line_refusal, call_cli, sysfs

from simnuma.bench.curves import curves_from_suite
from simnuma.bench.host import discover_host
from simnuma.bench.skeleton import curve_queue, host_topology_yaml
from simnuma.errors import BenchError
from simnuma.units import parse_bandwidth_GBps, parse_time_ns

V1_SUITE = Path(__file__).parent / "fixtures" / "v1" / "suite"
TWO_NODE = sysfs("two_node")


def thread(spec: str, role: str, GBps: float | None = None, ns: float | None = None) -> dict:
    """The fields of a report's thread that the curves read: medians of GB/s and ns per access."""
    if ns is not None:
        GBps = 64 / ns
    return {"spec": spec, "role": role, "GBps": {"best": GBps * 1.02, "median": GBps},
            "ns_per_access": {"best": 64 / GBps / 1.02, "median": 64 / GBps}}


def write_suite(folder: Path, cases: dict, host: dict | None = None, date="2026-03-04T05:06:07Z") -> Path:
    """A suite folder: ``cases`` maps a case name to its threads; one simnuma-bench/2 report each."""
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for number, (name, threads) in enumerate(cases.items()):
        report = {"format": "simnuma-bench/2", "date": date, "threads": threads}
        (folder / f"case{number}.json").write_text(json.dumps(report))
        entries.append({"name": name, "file": f"case{number}.json"})
    entries.append({"name": "0.0.l.0 bg 0.1.t.0@99GB/s", "error": "it failed"})
    host = host or discover_host(TWO_NODE).to_dict()
    (folder / "suite.json").write_text(json.dumps({"format": "simnuma-bench-suite/1", "host": host, "date": date,
                                                   "cases": entries}))
    return folder


LATENCY_CASES = {
    "0.0.l.0": [thread("0.0.l.0", "foreground", ns=100.0)],
    "0.0.r.0": [thread("0.0.r.0", "foreground", 13.0)],                       # not a chase: ignored
    "0.0.r.0 0.1.r.0": [thread("0.0.r.0", "foreground", 12.0), thread("0.1.r.0", "foreground", 12.0)],
    "0.0.l.0 bg 0.1.r.0 0.2.r.0": [thread("0.0.l.0", "foreground", ns=160.0),
                                   thread("0.1.r.0", "background", 11.0), thread("0.2.r.0", "background", 11.0)],
    "0.0.l.0 bg 0.1.r.0": [thread("0.0.l.0", "foreground", ns=128.0), thread("0.1.r.0", "background", 12.0)],
    "0.0.l.0 bg 0.1.r.0@2GB/s": [thread("0.0.l.0", "foreground", ns=104.0),
                                 thread("0.1.r.0@2GB/s", "background", 2.0)],
    "0.0.l.0 bg 0.1.w.0": [thread("0.0.l.0", "foreground", ns=200.0), thread("0.1.w.0", "background", 8.0)],
    "0.0.l.0 bg 0.1.w.0@1GB/s": [thread("0.0.l.0", "foreground", ns=110.0),
                                 thread("0.1.w.0@1GB/s", "background", 1.0)],
    "0.0.l.0 bg 0.1.t.0": [thread("0.0.l.0", "foreground", ns=180.0), thread("0.1.t.0", "background", 15.0)],
    # streams of another node's memory, or of two ops: not a point of any curve
    "0.0.l.0 bg 0.1.r.1": [thread("0.0.l.0", "foreground", ns=101.0), thread("0.1.r.1", "background", 9.0)],
    "0.0.l.0 bg 0.1.r.0 0.2.w.0": [thread("0.0.l.0", "foreground", ns=150.0),
                                   thread("0.1.r.0", "background", 9.0), thread("0.2.w.0", "background", 5.0)],
}


@pytest.fixture
def suite(tmp_path) -> Path:
    return write_suite(tmp_path / "suite", LATENCY_CASES)


def by_mix(curves) -> dict:
    return {c.mix: c for c in curves}


def flat(pairs) -> list:
    return [x for pair in pairs for x in pair]


def test_one_curve_per_mix_with_the_idle_chase_first(suite):
    curves = by_mix(curves_from_suite(suite))
    assert sorted(curves) == ["r", "t", "w"]
    r = curves["r"]
    assert r.chase == "0.0.l.0" and r.node == 0
    assert [p.case for p in r.points] == ["0.0.l.0", "0.0.l.0 bg 0.1.r.0@2GB/s", "0.0.l.0 bg 0.1.r.0",
                                          "0.0.l.0 bg 0.1.r.0 0.2.r.0"]
    assert flat(r.pairs) == pytest.approx(flat([(0.64, 100.0), (2.0 + 64 / 104, 104.0), (12.0 + 0.5, 128.0),
                                                (22.0 + 0.4, 160.0)]))
    assert all(c.points[0].case == "0.0.l.0" for c in curves.values())


def test_memory_bandwidth_counts_fills_and_write_backs(suite):
    curves = by_mix(curves_from_suite(suite))
    # w: a fill and a write-back per line written; t: the reported 3 arrays' bytes x 4/3
    assert flat(curves["w"].pairs[1:]) == pytest.approx([2 * 1.0 + 64 / 110, 110.0, 2 * 8.0 + 0.32, 200.0])
    assert flat(curves["t"].pairs[1:]) == pytest.approx([15.0 * 4 / 3 + 64 / 180, 180.0])


def test_read_fraction_is_the_traffic_weighted_share_of_reads(suite):
    curves = by_mix(curves_from_suite(suite))
    assert curves["r"].read_fraction == 1.0
    chase = 0.64 + 64 / 110 + 64 / 200
    assert curves["w"].read_fraction == round((chase + 0.5 * (2 + 16)) / (chase + 2 + 16), 2) == 0.54
    chase = 0.64 + 64 / 180
    assert curves["t"].read_fraction == round((chase + 0.75 * 20) / (chase + 20), 2) == 0.76


def test_index_or_folder_alike(suite):
    assert [c.to_dict() for c in curves_from_suite(suite)] == [c.to_dict() for c in
                                                              curves_from_suite(suite / "suite.json")]


def test_a_point_below_the_idle_chase_has_no_place_on_the_curve(tmp_path):
    cases = dict(LATENCY_CASES)
    cases["0.0.l.0 bg 0.1.r.0@0.01GB/s"] = [thread("0.0.l.0", "foreground", ns=400.0),
                                            thread("0.1.r.0@0.01GB/s", "background", 0.01)]
    r = by_mix(curves_from_suite(write_suite(tmp_path / "s", cases)))["r"]
    assert r.dropped == ("0.0.l.0 bg 0.1.r.0@0.01GB/s",) and len(r.points) == 4


def per_rep(spec: str, role: str, rates: list, shares: list) -> dict:
    """A thread with per-repetition rates and CPU shares, and report medians taken over all of them."""
    ordered = sorted(rates)
    middle = ordered[len(ordered) // 2]
    return {"spec": spec, "role": role, "GBps": {"best": max(rates), "median": middle, "all": rates},
            "ns_per_access": {"best": 64 / max(rates), "median": 64 / middle},
            "cpu_share": {"min": min(shares), "median": sorted(shares)[len(shares) // 2], "all": shares}}


def test_repetitions_in_which_the_chase_lost_its_cpu_are_left_out(tmp_path):
    """Other work descheduled the chase in repetitions 2 and 4: its latency there times the scheduler."""
    cases = {
        "0.0.l.0": [per_rep("0.0.l.0", "foreground", [0.4, 0.4, 0.4], [1.0, 1.0, 0.99])],
        "0.0.l.0 bg 0.1.r.0": [per_rep("0.0.l.0", "foreground", [64 / 170, 64 / 340, 64 / 172, 64 / 330, 64 / 174],
                                       [0.99, 0.5, 0.98, 0.52, 1.0]),
                               per_rep("0.1.r.0", "background", [20.0, 12.0, 22.0, 11.0, 21.0], [1.0] * 5)],
        "0.0.l.0 bg 0.1.w.0": [per_rep("0.0.l.0", "foreground", [64 / 300, 64 / 320, 64 / 310], [0.6, 0.5, 0.55]),
                               per_rep("0.1.w.0", "background", [9.0, 9.0, 9.0], [0.7, 0.7, 0.7])],
    }
    curves = by_mix(curves_from_suite(write_suite(tmp_path / "s", cases)))
    loaded = curves["r"].points[1]
    assert (loaded.repetitions, loaded.of, loaded.trusted) == (3, 5, True)
    assert loaded.latency_ns == pytest.approx(172.0)
    assert loaded.bandwidth_GBps == pytest.approx(21.0 + 64 / 172)
    assert curves["r"].untrusted == []
    shared = curves["w"].points[1]    # the chase never had its CPU: every repetition, and flagged
    assert (shared.repetitions, shared.trusted) == (3, False) and shared.latency_ns == pytest.approx(310.0)
    assert curves["w"].untrusted == ["0.0.l.0 bg 0.1.w.0"]


def test_untrusted_points_are_flagged_in_the_board(tmp_path, capsys):
    cases = {"0.0.l.0": [per_rep("0.0.l.0", "foreground", [0.4, 0.4], [1.0, 1.0])],
             "0.0.l.0 bg 0.1.w.0": [per_rep("0.0.l.0", "foreground", [64 / 300, 64 / 320], [0.6, 0.5]),
                                    per_rep("0.1.w.0", "background", [9.0, 9.0], [0.7, 0.7])]}
    target = tmp_path / "host.yaml"
    code, _, err = call_cli(capsys, "bench", "host", "--sysfs", TWO_NODE, "--suite", write_suite(tmp_path / "s", cases),
                            "-o", target)
    assert code == 0 and "1 point(s) of the curves were measured only while the chase shared its CPU" in err
    assert "1 loaded point(s); 1 of them measured while the chase shared its CPU with other work" in target.read_text()


def test_no_loaded_latency_no_curves(tmp_path):
    assert curves_from_suite(V1_SUITE) == []   # a version 1 suite: the idle chase but nothing beside it
    only_loaded = {k: v for k, v in LATENCY_CASES.items() if k != "0.0.l.0"}
    assert curves_from_suite(write_suite(tmp_path / "s", only_loaded)) == []   # no idle chase to start from


@pytest.mark.parametrize("make, message", [
    (lambda p: p, "no suite.json here"),
    (lambda p: (p.mkdir(), (p / "suite.json").write_text("{oops"))[0], "malformed JSON"),
    (lambda p: (p.mkdir(), (p / "suite.json").write_text('{"format": "x"}'))[0], "not a suite index"),
])
def test_unreadable_suites_are_one_line(tmp_path, make, message):
    folder = tmp_path / "suite"
    make(folder)
    with pytest.raises(BenchError, match=message) as caught:
        curves_from_suite(folder)
    assert "\n" not in str(caught.value)


def test_missing_report(suite):
    (suite / "case0.json").unlink()
    with pytest.raises(BenchError, match="report .*case0.json is missing"):
        curves_from_suite(suite)


# ------------------------------------------------------------------ the board

def memory_of(text: str) -> dict:
    return yaml.safe_load(text)["defaults"]["memory"]


def test_bench_host_suite_writes_the_curves(suite, tmp_path, capsys):
    target = tmp_path / "host.yaml"
    code, out, err = call_cli(capsys, "bench", "host", "--sysfs", TWO_NODE, "--suite", suite, "-o", target)
    assert code == 0 and out == f"wrote {target}\n", err
    text = target.read_text()
    memory = memory_of(text)
    assert set(memory) == {"model", "latency", "queue", "curves"}   # no peak bandwidth, no efficiency
    assert memory["model"] == "curve" and memory["latency"] == "80 ns"
    curves = memory["curves"]
    held = max(parse_bandwidth_GBps(b) * parse_time_ns(ns) / 64 for b, ns in curves[0]["points"])   # the reads'
    assert memory["queue"] == curve_queue(curves_from_suite(suite))[0] >= held   # Little's law, not cores x 48
    assert [c["read_fraction"] for c in curves] == [1.0, 0.76, 0.54]
    r = curves[0]["points"]
    assert r[0] == ["0.6 GB/s", "100 ns"] and r[-1] == ["22.4 GB/s", "160 ns"]
    for curve in curves:
        bandwidths = [parse_bandwidth_GBps(b) for b, _ in curve["points"]]
        assert bandwidths == sorted(bandwidths) and len(set(bandwidths)) == len(bandwidths)
        assert all(parse_time_ns(ns) > 0 for _, ns in curve["points"])
    assert "points: [[0.6 GB/s, 100 ns], [2.6 GB/s, 104 ns], [12.5 GB/s, 128 ns], [22.4 GB/s, 160 ns]]" in text
    line = next(l for l in text.splitlines() if l.strip().startswith("curves:"))
    assert f"measured by simnuma bench suite on {discover_host(TWO_NODE).cpu_model}, 2026-03-04 ({suite})" in line
    assert "model: curve" in text and "memory.efficiency" not in text


def test_curve_board_loads_once_the_schema_has_curves(suite, tmp_path, capsys):
    """The board language learns `memory.model: curve` on main; until then the YAML's structure is checked above.

    Once it does, the board `bench host --suite` writes must load as it is, curves and all.
    """
    from simnuma.topology import schema

    if "curves" not in schema.NODE_SCHEMA["memory"]:
        pytest.skip("the board schema has no memory curves yet")
    from simnuma.topology import load_topology

    target = tmp_path / "host.yaml"
    code, _, err = call_cli(capsys, "bench", "host", "--sysfs", TWO_NODE, "--suite", suite, "-o", target)
    assert code == 0, err
    topo = load_topology(target)
    assert len(topo.nodes) == 2


def test_close_bandwidths_get_more_decimals(tmp_path, capsys):
    cases = {"0.0.l.0": [thread("0.0.l.0", "foreground", ns=100.0)],
             "0.0.l.0 bg 0.1.r.0@1GB/s": [thread("0.0.l.0", "foreground", ns=130.0),
                                          thread("0.1.r.0@1GB/s", "background", 1.0)],
             "0.0.l.0 bg 0.1.r.0@2GB/s": [thread("0.0.l.0", "foreground", ns=140.0),
                                          thread("0.1.r.0@2GB/s", "background", 1.045)]}
    target = tmp_path / "host.yaml"
    code, _, err = call_cli(capsys, "bench", "host", "--sysfs", TWO_NODE, "--suite", write_suite(tmp_path / "s", cases),
                            "-o", target)
    assert code == 0, err
    (curve,) = memory_of(target.read_text())["curves"]
    assert [b for b, _ in curve["points"]] == ["0.64 GB/s", "1.49 GB/s", "1.50 GB/s"]    # 0.6% apart


def test_points_at_one_bandwidth_are_the_queue_past_saturation_and_the_first_is_kept(tmp_path, capsys):
    """Loads past saturation leave the bandwidth where it is (within 0.5%) and only queue: a curve of latency
    against bandwidth keeps the least loaded of them, and the board it is written into loads."""
    cases = {"0.0.l.0": [thread("0.0.l.0", "foreground", ns=100.0)],
             "0.0.l.0 bg 0.1.r.0": [thread("0.0.l.0", "foreground", ns=130.0), thread("0.1.r.0", "background", 24.93)],
             "0.0.l.0 bg 0.1.r.0@30GB/s": [thread("0.0.l.0", "foreground", ns=140.0),
                                           thread("0.1.r.0@30GB/s", "background", 24.97)]}
    (curve,) = curves_from_suite(write_suite(tmp_path / "s", cases))
    assert [p.latency_ns for p in curve.points] == [100.0, 130.0]
    assert curve.dropped == ("0.0.l.0 bg 0.1.r.0@30GB/s",)
    target = tmp_path / "host.yaml"
    code, _, err = call_cli(capsys, "bench", "host", "--sysfs", TWO_NODE, "--suite", tmp_path / "s", "-o", target)
    assert code == 0, err
    from simnuma.topology import parse_topology

    assert parse_topology(target.read_text(), "host.yaml").node(0).curves


def test_of_points_at_one_bandwidth_the_least_loaded_is_kept_even_where_the_bandwidth_sags(tmp_path):
    """Past saturation a heavier load may draw a little less (the chase slows): the point of least latency stays."""
    cases = {"0.0.l.0": [thread("0.0.l.0", "foreground", ns=100.0)],
             "0.0.l.0 bg 0.1.r.0@10GB/s": [thread("0.0.l.0", "foreground", ns=130.0),
                                           thread("0.1.r.0@10GB/s", "background", 10.0)],
             "0.0.l.0 bg 0.1.r.0@25GB/s": [thread("0.0.l.0", "foreground", ns=150.0),
                                           thread("0.1.r.0@25GB/s", "background", 24.97)],
             "0.0.l.0 bg 0.1.r.0": [thread("0.0.l.0", "foreground", ns=400.0), thread("0.1.r.0", "background", 25.2)]}
    (curve,) = curves_from_suite(write_suite(tmp_path / "s", cases))
    assert [p.latency_ns for p in curve.points] == [100.0, 130.0, 150.0]
    assert curve.dropped == ("0.0.l.0 bg 0.1.r.0",)


def test_a_suite_report_without_its_figures_is_one_line(tmp_path, capsys):
    folder = write_suite(tmp_path / "s", LATENCY_CASES)
    index = json.loads((folder / "suite.json").read_text())
    entry = next(e for e in index["cases"] if e["name"] == "0.0.l.0 bg 0.1.r.0")
    report = folder / entry["file"]
    data = json.loads(report.read_text())
    for t in data["threads"]:
        t.pop("GBps", None)
    report.write_text(json.dumps(data))
    code, _, err = call_cli(capsys, "bench", "host", "--sysfs", TWO_NODE, "--suite", folder)
    assert code == 2 and "malformed report in the suite" in err and len(err.strip().splitlines()) == 1


def test_a_suite_without_loaded_latency_writes_the_board_as_before(tmp_path, capsys):
    folder = shutil.copytree(V1_SUITE, tmp_path / "v1")
    index = json.loads((folder / "suite.json").read_text())
    index["host"] = discover_host(TWO_NODE).to_dict()
    (folder / "suite.json").write_text(json.dumps(index))
    target = tmp_path / "host.yaml"
    code, out, err = call_cli(capsys, "bench", "host", "--sysfs", TWO_NODE, "--suite", folder, "-o", target,
                              "--memory-bandwidth", "307.2 GB/s")
    assert code == 0 and "has no loaded-latency cases" in err
    board = target.read_text()
    before = host_topology_yaml(discover_host(TWO_NODE), memory_bandwidth_GBps=307.2)
    assert board.startswith(before)       # the board as before, and after it what the firmware check found
    assert board[len(before):] == f"# the firmware's SLIT against the latency chases of {folder}: they agree\n"
    assert set(memory_of(board)) == {"bandwidth", "efficiency", "latency", "queue"}


@pytest.mark.parametrize("extra, message", [
    (["--memory-bandwidth", "307.2 GB/s"], "--memory-bandwidth: the memory follows the suite's curves"),
    (["--sysfs", sysfs("four_node")], "the suite of another machine"),
])
def test_bench_host_suite_refusals_are_one_line(suite, tmp_path, capsys, extra, message):
    args = ["bench", "host", "--sysfs", TWO_NODE, "--suite", suite, "-o", tmp_path / "never.yaml", *extra]
    code, out, err = call_cli(capsys, *args)
    assert_one_line_refusal(code, err, message)
    assert not (tmp_path / "never.yaml").exists()


def test_bench_host_without_a_suite_folder_is_one_line(tmp_path, capsys):
    code, out, err = call_cli(capsys, "bench", "host", "--suite", tmp_path / "nowhere")
    assert_one_line_refusal(code, err, "no suite.json here")


def test_a_curve_gets_the_peak_its_streams_drew_alone_when_above_its_last_point(tmp_path):
    """Two readers without the chase drew 30.6 GB/s at best, more than any loaded case: the curve's peak.  Writers
    alone never beat the loaded write case: no peak there."""
    cases = dict(LATENCY_CASES)
    cases["0.0.r.0 0.1.r.0"] = [thread("0.0.r.0", "foreground", 15.0), thread("0.1.r.0", "foreground", 15.0)]
    cases["0.0.w.0"] = [thread("0.0.w.0", "foreground", 3.0)]
    curves = by_mix(curves_from_suite(write_suite(tmp_path / "suite", cases)))
    assert curves["r"].peak_GBps == pytest.approx(30.0 * 1.02) and curves["r"].peak_case == "0.0.r.0 0.1.r.0"
    assert curves["w"].peak_GBps == 0.0   # 6.1 GB/s alone, below the loaded case's 16.3


def test_the_latency_at_the_peak_is_bounded_by_littles_law_from_the_loaded_cases():
    """63 writers beside the chase drew 280 GB/s at 548 ns; 64 alone drew 282.5 GB/s.  Keeping no more lines each,
    64 streams at 282.5 GB/s wait at most 548 x 64/63 x 280/282.5 = 551.8 ns.  From 35 streams the bound is loose
    (64/35), and of several cases the least bound counts; streams paced beyond what they got bound it too, streams
    that got their pace kept fewer lines than unpaced and do not; and it is never below the last point's latency."""
    from simnuma.bench.curves import CurvePoint, peak_latency_bound

    def case(streams: int, rate: str = "", bandwidth: float = 280.0, ns: float = 548.0) -> CurvePoint:
        name = "0.0.l.0 + " + " ".join(f"0.{k}.w.0{rate}" for k in range(1, streams + 1))
        return CurvePoint(bandwidth, ns, name, bandwidth / 2)

    def bound(cases, peak: float = 282.5, streams: int = 64) -> float:
        ns, case = peak_latency_bound(cases, cases[-1], peak, " ".join(f"0.{k}.w.0" for k in range(streams)))
        assert (case in [c.case for c in cases]) if ns else case == ""
        return ns

    assert bound([case(63)]) == pytest.approx(548 * 64 / 63 * 280 / 282.5)
    assert bound([case(35, ns=497.0)]) == pytest.approx(497 * 64 / 35 * 280 / 282.5)
    assert bound([case(63), case(35, ns=497.0)]) == pytest.approx(551.8, abs=0.1)
    assert peak_latency_bound([case(63), case(35, ns=497.0)], case(63), 282.5, "0.0.w.0 0.1.w.0")[1] == case(63).case
    assert bound([case(63, "@9.1GB/s")]) == pytest.approx(551.8, abs=0.1)
    assert bound([case(63, "@2GB/s", 252.0, 150.0)]) == 0.0                  # 252 GB/s asked, 252 served
    assert bound([case(63, "@2GB/s", 252.0, 150.0), case(63)]) == pytest.approx(551.8, abs=0.1)
    assert bound([case(63)], 300.0, 32) == 548.0                             # Little's law allows less: flat
    assert bound([case(63)], 270.0) == 0.0                                   # no peak above the last point


def test_bench_host_writes_the_peak_and_the_board_loads(tmp_path, capsys):
    cases = dict(LATENCY_CASES)
    cases["0.0.r.0 0.1.r.0"] = [thread("0.0.r.0", "foreground", 15.0), thread("0.1.r.0", "foreground", 15.0)]
    folder = write_suite(tmp_path / "suite", cases)
    out = tmp_path / "host.yaml"
    code, _, err = call_cli(capsys, "bench", "host", "--sysfs", TWO_NODE, "--suite", folder, "-o", out)
    assert code == 0, err
    text = out.read_text()
    assert "peak: 30.6 GB/s" in text and "(0.0.r.0 0.1.r.0)" in text
    assert "peak_latency: 160 ns" in text     # two streams beside the chase, two at the peak: no more than 160 ns
    from simnuma.topology import load_topology
    board = load_topology(str(out))
    reads = max(board.node(0).curves, key=lambda c: c.read_fraction)
    assert reads.max_GBps == pytest.approx(30.6) and reads.peak_latency_ns == 160.0


def test_the_queue_is_what_the_memory_held_at_its_most_loaded_point():
    """Little's law on the curve of most reads, at its point of most bandwidth or at its peak along the last
    segment's trend; a write curve, whose write-backs a controller buffers apart, does not size it."""
    from simnuma.bench.curves import Curve, CurvePoint
    from simnuma.bench.skeleton import MIN_CURVE_QUEUE

    def curve(points, peak=0.0):
        return Curve("r", 0, "0.0.l.0", tuple(CurvePoint(b, ns, "c", b) for b, ns in points), 1.0, peak_GBps=peak)

    reads = curve([(1.0, 100.0), (300.0, 200.0), (360.0, 380.0)])
    assert curve_queue([reads])[0] == math.ceil(360 * 380 / 64)          # 2138 lines at 360 GB/s, 380 ns
    writes = curve([(1.0, 100.0), (20.0, 120.0), (30.0, 140.0)], peak=40.0)  # trend 2 ns per GB/s up to the peak
    assert curve_queue([writes])[0] == math.ceil(40 * 160 / 64)
    slow_writes = Curve("w", 0, "0.0.l.0", tuple(CurvePoint(b, ns, "c", b / 2) for b, ns in
                                                  [(1.0, 100.0), (280.0, 550.0)]), 0.5, peak_GBps=282.5)
    assert curve_queue([reads, slow_writes])[0] == curve_queue([reads])[0] < 280 * 550 / 64
    assert curve_queue([curve([(0.5, 90.0), (2.0, 91.0)])])[0] == MIN_CURVE_QUEUE


def test_the_queue_leaves_out_what_waits_ahead_of_it_once_the_streams_want_more():
    """The read curve's count at its peak (130 GB/s x 380 ns / 64 B = 772 lines, along the last trend) covers
    every line on the chase's way; where the streams of the peak's case would have kept more in flight alone
    (each as many as a lone stream: 18 GB/s x 100 ns / 64 B = 28 lines), the SRI's buffers and one request of
    each other core wait ahead of the queue in the model, up to ``lines_ahead(cores)``, and the queue holds the
    rest, never less than the memory held at the last point measured (120 GB/s x 320 ns / 64 B = 600 lines)."""
    from simnuma.bench.curves import Curve, CurvePoint
    from simnuma.bench.skeleton import lines_ahead

    def reads(streams: int, peak: float = 130.0) -> Curve:
        points = ((0.5, 100.0, "0.0.l.0"), (100.0, 200.0, "0.0.l.0 + 0.1.r.0"),
                  (120.0, 320.0, "0.0.l.0 + " + " ".join(f"0.{k}.r.0" for k in range(1, streams))))
        return Curve("r", 0, "0.0.l.0", tuple(CurvePoint(b, ns, case, b) for b, ns, case in points), 1.0,
                     peak_GBps=peak, peak_case=" ".join(f"0.{k}.r.0" for k in range(streams)), lone_GBps=18.0)

    held = math.ceil(130 * 380 / 64)                                  # 772 lines
    assert curve_queue([reads(20)], 32) == (held, held, 0)           # 20 x 28 = 562 lines: none wait ahead
    assert curve_queue([reads(29)], 32) == (held - 43, held, 43)     # 29 x 28 = 815: 43 of them
    assert lines_ahead(32) == 64 + 31                                # the SRI's 2 a core, the 31 others' turns
    assert curve_queue([reads(31)], 32) == (held - 95, held, 95)     # 31 x 28 = 871: as many as the model holds
    assert lines_ahead(64) == 128 + 63
    assert curve_queue([reads(63)], 64) == (600, held, held - 600)   # 1771: the last point's 600 at least
    assert curve_queue([reads(31)]) == (held, held, 0)               # no cores given: Little's law alone
    assert curve_queue([reads(31, peak=0.0)], 32)[2] == 0            # the last point the most loaded: nothing


def test_past_saturation_a_written_board_keeps_the_chase_near_its_curve():
    """A 32-CPU node whose curve saturates at 20 GB/s, where the chase took 300 ns.  The board ``bench host``
    writes holds 94 lines in the memory (Little's law) and lets the cores take the SRI's 64 buffers in turns,
    so the chase beside 31 streams of 16 lines each (496 in flight) waits the curve's latency, its turn among
    the cores and the SRI's buffers ahead of it (95 lines at 3.2 ns); a queue of every core's lines would
    have put it behind all 496: 1.6 us more."""
    from simnuma.bench.curves import Curve, CurvePoint
    from simnuma.bench.host import Host, HostNode
    from simnuma.model import simulate
    from simnuma.topology import parse_topology

    points = ((1.0, 100.0), (10.0, 110.0), (18.0, 160.0), (20.0, 300.0))
    curve = Curve("r", 0, "0.0.l.0", tuple(CurvePoint(b, ns, f"case{k}", b) for k, (b, ns) in enumerate(points)),
                  1.0)
    host = Host("/x", (HostNode(0, tuple(range(32)), 1 << 36, 1 << 35),), ((10,),), (), 0, None, None, "test CPU",
                "Linux 6", True)
    text = host_topology_yaml(host, name="saturating", curves=[curve])
    assert memory_of(text)["queue"] == math.ceil(20 * 300 / 64)
    board = parse_topology(text.replace("window: {r: 10, w: 10, t: 10}", "window: {r: 16, w: 16, t: 16}"),
                           "saturating.yaml")
    idle = simulate(board, ["0.0.l.0"], size_bytes=2**18, baseline=False).thread("0.0.l.0")["latency_ns"]["mean"]
    loaded = simulate(board, ["0.0.l.0"], [f"0.{k}.r.0" for k in range(1, 32)], size_bytes=2**18, baseline=False)
    latency = loaded.thread("0.0.l.0")["latency_ns"]["mean"]
    assert loaded.memory[0]["bandwidth_GBps"] == pytest.approx(20.0, rel=0.05)
    assert idle + 200 - 10 < latency < idle + 200 + (31 + 64) * 64 / 20 + 30
