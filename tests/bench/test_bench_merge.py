"""Merging one case's rounds into one report, and the suite measuring in rounds."""
from __future__ import annotations

import copy
import json
import os

import pytest
from benchutil import SPREAD_ABS_TOLERANCE

from simnuma.bench import suite as suite_module
from simnuma.bench.estimate import OpCost, Probe
from simnuma.bench.host import Host, HostNode
from simnuma.bench.merge import merge_reports
from simnuma.bench.run import run_bench
from simnuma.bench.suite import run_suite, suite_cases
from simnuma.case import parse_case
from simnuma.errors import BenchError

SUMMARIES = ("bytes", "accesses", "GBps", "ns_per_access", "seconds", "cpu_share", "spread", "placement")


@pytest.fixture(scope="module")
def native_report(stride) -> dict:
    """A real report with a foreground and a rate-limited background thread."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs")
    return run_bench(["0.0.r.0"], background=["0.1.r.0@1GB/s"], size_bytes="4MiB", reps=3)


def assert_close(got, expected, where=""):
    if isinstance(expected, dict):
        assert set(got) == set(expected), where
        for key in expected:
            assert_close(got[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert len(got) == len(expected), where
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_close(g, e, f"{where}[{i}]")
    elif isinstance(expected, float):
        assert got == pytest.approx(expected, rel=1e-6), where
    else:
        assert got == expected, where


def test_one_round_merges_to_the_native_summaries(native_report):
    """The merge recomputes every summary with the benchmark's own rules: one round comes out unchanged."""
    merged = merge_reports([native_report])
    for got, native in zip(merged["threads"], native_report["threads"]):
        for key in SUMMARIES:
            where = f"{native['spec']}/{native['role']}.{key}"
            if key == "spread":
                assert got[key] == pytest.approx(native[key], rel=1e-6, abs=SPREAD_ABS_TOLERANCE), where
            else:
                assert_close(got[key], native[key], where)
    assert_close(merged["wall_seconds"], native_report["wall_seconds"])
    assert merged["reps"] == native_report["reps"]
    assert merged["warnings"] == native_report["warnings"]


def with_seconds(report: dict, seconds: list) -> dict:
    """``report`` with every thread's repetitions taking ``seconds`` (its summaries left stale on purpose)."""
    changed = copy.deepcopy(report)
    for thread in changed["threads"]:
        thread["seconds"]["all"] = list(seconds)
        thread["bytes_all"] = [thread["bytes_all"][0]] * len(seconds)
        thread["cpu_share"]["all"] = [1.0] * len(seconds)
    changed["wall_seconds"]["all"] = list(seconds)
    changed["reps"] = len(seconds)
    changed["warnings"] = []
    return changed


def test_rounds_pool_their_repetitions(native_report):
    slow = with_seconds(native_report, [0.004, 0.004, 0.005])
    fast = with_seconds(native_report, [0.002, 0.003])
    merged = merge_reports([slow, fast])
    assert merged["reps"] == 5
    assert [r["reps"] for r in merged["rounds"]] == [3, 2]
    foreground = merged["threads"][0]
    moved = foreground["bytes_all"][0]
    assert foreground["seconds"]["all"] == [0.004, 0.004, 0.005, 0.002, 0.003]
    assert foreground["seconds"]["median"] == 0.004
    assert foreground["GBps"]["best"] == pytest.approx(moved / 0.002 / 1e9)
    assert foreground["ns_per_access"]["best"] == pytest.approx(64 / (moved / 0.002 / 1e9))
    assert foreground["spread"] == pytest.approx(1.5)
    assert any("'0.0.r.0': repetitions spread 150.0%" in w for w in merged["warnings"])
    assert merged["wall_seconds"]["min"] == 0.002


def test_even_counts_take_the_mean_of_the_middle_two(native_report):
    merged = merge_reports([with_seconds(native_report, [0.001, 0.004]), with_seconds(native_report, [0.002, 0.003])])
    assert merged["threads"][0]["seconds"]["median"] == pytest.approx(0.0025)


def test_round_warnings_are_kept_once_and_spread_is_judged_over_all(native_report):
    a = with_seconds(native_report, [0.0020, 0.0020])
    b = with_seconds(native_report, [0.0020, 0.0021])
    a["warnings"] = ["arrays of 4 MiB are smaller than 4 x the last-level cache",
                     "'0.0.r.0': repetitions spread 9.0% (more than 5%): the machine may not be quiet"]
    b["warnings"] = ["arrays of 4 MiB are smaller than 4 x the last-level cache"]
    merged = merge_reports([a, b])
    assert merged["warnings"] == ["arrays of 4 MiB are smaller than 4 x the last-level cache"]


def test_the_worst_placed_round_represents_the_case(native_report):
    a, b = copy.deepcopy(native_report), copy.deepcopy(native_report)
    b["threads"][0]["placement"] = dict(b["threads"][0]["placement"], fraction=0.5)
    assert merge_reports([a, b])["threads"][0]["placement"]["fraction"] == 0.5


def test_reports_of_different_cases_are_refused(native_report):
    other = copy.deepcopy(native_report)
    other["threads"][0]["spec"] = "0.1.r.0"
    with pytest.raises(BenchError, match="round 2: threads"):
        merge_reports([native_report, other])
    bigger = dict(copy.deepcopy(native_report), size_bytes=native_report["size_bytes"] * 2)
    with pytest.raises(BenchError, match="round 2: arrays of"):
        merge_reports([native_report, bigger])
    with pytest.raises(BenchError, match="no reports"):
        merge_reports([])


def synthetic_probe() -> Probe:
    costs = {op: OpCost(op, 0.1, 0.01, gbps, 64 / gbps) for op, gbps in
             (("r", 13.0), ("w", 10.0), ("t", 17.0), ("l", 0.4))}
    return Probe(4 << 20, costs, 1.0)


def two_cpu_host() -> Host:
    return Host("/sys", (HostNode(0, (0, 1), 24 << 30, 22 << 30),), ((10,),), (), 0, None, None,
                "test CPU", "Linux 6", True)


def test_suite_rounds_alternate_direction_and_merge(native_report, tmp_path, monkeypatch):
    """Round 1 runs the cases forwards, round 2 backwards; a failing case is not run again."""
    calls = []
    broken = "0.0.w.0"

    def fake_run_bench(threads, background, size_bytes, reps, host, pages):
        name = parse_case(list(threads), list(background)).name
        calls.append(name)
        if name == broken:
            raise BenchError("the arrays do not fit")
        report = copy.deepcopy(native_report)
        report["threads"] = [dict(copy.deepcopy(native_report["threads"][0]), spec=s, role="foreground")
                             for s in threads]
        report["threads"] += [dict(copy.deepcopy(native_report["threads"][1]), spec=s, role="background")
                              for s in background]
        return report

    monkeypatch.setattr(suite_module, "run_bench", fake_run_bench)
    host = two_cpu_host()
    probe = synthetic_probe()
    names = [c.name for c in suite_cases(host, probe.stream_GBps)[0]]
    with pytest.raises(BenchError, match=f"1 of {len(names)} suite cases failed"):
        run_suite(tmp_path, size_bytes="4MiB", reps=3, rounds=3, host=host, probe=probe)
    healthy = [n for n in names if n != broken]
    assert calls == names + [n for n in reversed(names) if n != broken] + healthy
    index = json.loads((tmp_path / "suite.json").read_text())
    assert index["rounds"] == 3 and index["reps"] == 3
    for entry in index["cases"]:
        if entry["name"] == broken:
            assert entry["error"] == "the arrays do not fit"
            continue
        report = json.loads((tmp_path / entry["file"]).read_text())
        assert entry["rounds"] == 3 and report["reps"] == 3 * native_report["reps"]
        assert len(report["threads"][0]["seconds"]["all"]) == 3 * native_report["reps"]


def test_rounds_must_be_a_positive_whole_number(tmp_path):
    for bad in ("0", "-1", "two", "1.5"):
        with pytest.raises(BenchError, match="--rounds"):
            run_suite(tmp_path, reps=1, rounds=bad, host=two_cpu_host())
