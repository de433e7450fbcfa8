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
    # its memory's page pairs balance within a page of the reader, beside a faster load generator
    "loaded-reader": (["0.0.r.1"], ["1.1.r.1@4GB/s", "0.1.r.0@4GB/s"]),
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


# ------------------------------------------------------------------ how a phase is measured

def _writer_system():
    from simnuma.model.system import System
    from simnuma.workload import Workload

    system = System(QUARTET, Workload.build(["0.0.w.1"], []), 4 * 2**20, 1)
    system.extrapolated = None
    return system


def test_t_quantile_has_its_two_degree_value():
    from simnuma.model.batches import t975

    assert t975(2) == 4.303 and t975(3) == 3.182 and t975(1) == 12.706
    assert t975(21) == 2.086 and t975(1000) == 1.980          # between entries: the wider interval


def test_batches_cut_a_writers_placement_period_into_whole_parts():
    from simnuma.model.system import STEADY_BATCH_TXNS, _pacer

    system = _writer_system()
    (writer,) = system.foreground
    period = system.placement_period_txns(writer, {writer: 0.02})
    assert period == 8 * 64                                   # S = 8 slots of 4 KiB pages on the Quartet
    pacer, txns, per_period = _pacer(system, (writer,), {writer: 0.02})
    assert (pacer, txns, per_period) == (writer, period, period // STEADY_BATCH_TXNS)


def test_a_placement_period_is_s_page_changes_of_the_slowest_pair_of_streams():
    from simnuma.model.system import System
    from simnuma.workload import Workload

    system = System(QUARTET, Workload.build(["0.0.r.1", "2.0.r.1"], ["1.1.r.1@4GB/s"]), 4 * 2**20, 1)
    reader, other, generator = system.foreground + system.background
    page = 64
    assert system.placement_period_txns(reader, {reader: 0.02}) == page          # alone: it repeats page by page
    # beside a stream 8 times faster, the pair makes its S = 8 page changes within one page of the reader
    assert system.placement_period_txns(reader, {reader: 0.005, generator: 0.04}) == page
    # ... 4 times faster: two pages; as fast: S pages, as for a writer's own two streams
    assert system.placement_period_txns(reader, {reader: 0.01, generator: 0.04}) == 2 * page
    assert system.placement_period_txns(reader, {reader: 0.02, other: 0.02}) == 8 * page
    # the slowest pair decides, whichever thread it holds, in whole pages of the thread asked about
    rates = {reader: 0.04, other: 0.005, generator: 0.01}
    assert system.placement_period_txns(reader, rates) == 8 * 0.04 / 0.01 * page
    assert system.placement_period_txns(other, rates) == 8 * 0.005 / 0.01 * page
    # a thread on another memory has nothing to do with it
    assert system.placement_period_txns(reader, {reader: 0.02, system.foreground[1]: 0.001}) == 8 * page


def test_huge_pages_that_hold_whole_bank_cycles_have_no_placement_to_wait_for():
    """With 2 MiB pages on the Quartet every bit that chooses a rank or bank lies within the page (S = 1): the
    page's frame cannot change a stream's bank pattern, which repeats every 4096 lines (the bank and rank bits
    end at bit 12 of the line address), so a period is that cycle, not pages of 32768 lines; steady mode then
    agrees with exact mode as with 4 KiB pages."""
    from simnuma.model.system import System
    from simnuma.workload import Workload

    huge = QUARTET.with_parameters({"defaults.memory.dram.os_page": "2 MiB"})
    system = System(huge, Workload.build(["0.0.w.0", "1.0.t.1"], []), 4 * 2**20, 1)
    writer, triad = system.foreground
    assert system.mcts[0].memory.amap.slots == 1
    assert system.placement_period_txns(writer, {writer: 0.02, triad: 0.02}) == 4096
    assert system.placement_period_txns(triad, {writer: 0.02, triad: 0.02}) == 3 * 4096
    for case in (["0.0.w.0"], ["0.0.w.0", "0.1.w.0"], ["0.0.t.0"]):
        steady, exact = (simulate(huge, case, size_bytes=4 * 2**20, mode=mode, baseline=False) for mode in
                         ("steady", "exact"))
        assert steady.makespan_ns == pytest.approx(exact.makespan_ns, rel=0.01), case


def test_a_phase_window_holds_at_least_three_whole_periods(monkeypatch):
    import simnuma.model.system as steady

    goals = []
    advance = steady._advance_pacer

    def record(system, pacer, completed, deadline_ns):
        goals.append((pacer, completed))
        advance(system, pacer, completed, deadline_ns)

    monkeypatch.setattr(steady, "_advance_pacer", record)
    system = _writer_system()
    (writer,) = system.foreground
    system.start()
    extra = steady._Extrapolated(len(system.snapshot()))
    assert steady._run_phase(system, (writer,), extra)
    period = system.placement_period_txns(writer, {writer: 0.02})
    _, _, per_period = steady._pacer(system, (writer,), {writer: 0.02})
    assert all(pacer is writer for pacer, _ in goals)
    start = goals[0][1] - period // per_period               # the first batch is a third of a period
    window = goals[-1][1] - start
    assert window % period == 0 and window >= steady.STEADY_MIN_PERIODS * period
    assert len(goals) >= steady.STEADY_MIN_BATCHES


def test_a_phase_that_decides_little_needs_one_period(monkeypatch):
    import simnuma.model.system as steady

    system = _writer_system()
    batches = [(1_000.0, {g: 20.0 for g in system.exchangeable(tuple(system.foreground))})] * 3
    monkeypatch.setattr(steady, "_tolerance", lambda *a: 0.03)
    assert steady._fewest_periods(system, batches, 3) == 1
    monkeypatch.setattr(steady, "_tolerance", lambda *a: 0.015)
    assert steady._fewest_periods(system, batches, 3) == 2
    monkeypatch.setattr(steady, "_tolerance", lambda *a: 0.01)
    assert steady._fewest_periods(system, batches, 3) == 3
    assert steady._fewest_periods(system, batches, 1) == 1   # no period longer than a batch


def _batches(rates, group=("g",)):
    """Batches of 1,000 ns whose group completed ``rate`` x 1,000 lines."""
    return [(1_000.0, {group: r * 1_000.0}) for r in rates]


def test_batch_means_that_follow_one_another_are_merged_before_an_interval_is_drawn():
    import math
    import random

    from simnuma.model.batches import independent_batches, lag1
    from simnuma.model.system import STEADY_LAG1_Z

    rng = random.Random(5)
    independent = [0.02 * (1 + 0.01 * rng.gauss(0, 1)) for _ in range(16)]
    assert independent_batches(_batches(independent), 8, STEADY_LAG1_Z) == _batches(independent)
    # a slow swing: neighbours alike, so each mean says less than an independent one would
    swing = [0.02 * (1 + 0.01 * math.sin(k / 3)) for k in range(32)]
    merged = independent_batches(_batches(swing), 4, STEADY_LAG1_Z)
    assert merged is not None and len(merged) < 32
    assert lag1([done[("g",)] / span for span, done in merged]) <= STEADY_LAG1_Z / math.sqrt(len(merged))
    assert sum(span for span, _ in merged) == sum(span for span, _ in _batches(swing)[:len(merged) * (32 // len(merged))])
    assert independent_batches(_batches(independent[:3]), 4, STEADY_LAG1_Z) is None   # too few for an interval


def test_lag1_autocorrelation():
    from simnuma.model.batches import lag1

    assert lag1([1.0, 1.0, 1.0]) == 0.0
    assert lag1([1.0, -1.0] * 10) < -0.9            # alternating: negative
    assert lag1([float(k) for k in range(20)]) > 0.8   # a trend: strongly positive
