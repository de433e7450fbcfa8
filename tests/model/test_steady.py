"""Steady mode against exact mode, and monotonicity under background load."""
from __future__ import annotations

import pytest

from simnuma.model import simulate
from simnuma.topology import load_topology

QUARTET = load_topology("quartet")
SIZE = 1 * 2**20

CASES = {
    "read": (["0.0.r.3"], []),
    "write": (["0.0.w.1"], []),
    "crossfire": (["0.0.w.1", "1.0.w.0"], []),
    "unequal-finish": (["0.0.w.0", "0.1.r.1"], []),
    "background": (["0.0.w.1", "1.0.w.3"], ["2.0.r.2@1.5GB/s", "3.1.r.3@4GB/s"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_steady_agrees_with_exact_within_one_percent(name):
    fg, bg = CASES[name]
    exact = simulate(QUARTET, fg, bg, size_bytes=SIZE, mode="exact", baseline=False)
    steady = simulate(QUARTET, fg, bg, size_bytes=SIZE, mode="steady", baseline=False)
    assert steady.extrapolated_ns > 0.2 * steady.makespan_ns, "steady mode did not extrapolate"
    for te, ts in zip(exact.threads, steady.threads):
        if te["role"] == "foreground":
            assert ts["time_ns"] == pytest.approx(te["time_ns"], rel=0.01), te["spec"]
    for le, ls in zip(exact.links, steady.links):
        assert ls["utilization"] == pytest.approx(le["utilization"], rel=0.03, abs=0.005)


@pytest.mark.parametrize("fg", [["0.0.w.1"], ["0.0.r.0", "0.1.w.2"]])
def test_more_background_load_never_speeds_a_thread_up(fg):
    background = ["1.1.r.1", "2.0.r.2", "3.1.r.3"]
    times = []
    for rate in ("0.5GB/s", "1.5GB/s", "3GB/s", "4GB/s"):
        r = simulate(QUARTET, fg, [f"{b}@{rate}" for b in background], size_bytes=64 * 2**20, baseline=False)
        times.append([t["time_ns"] for t in r.threads if t["role"] == "foreground"])
    idle = simulate(QUARTET, fg, size_bytes=64 * 2**20, baseline=False)
    times.insert(0, [t["time_ns"] for t in idle.threads])
    for lighter, heavier in zip(times, times[1:]):
        for a, b in zip(lighter, heavier):
            assert b >= a * (1 - 0.02)   # two steady-mode estimates, each within its 1% target
