"""The DRAM model against what its timings say in closed form, and its invariants.

Every board here is one node with one core, so that nothing but the DRAM
limits a thread that keeps many lines in flight; numbers are DDR400-like
(tCK 5 ns, a 64-byte line in 10 ns on a 128-bit channel).
"""
from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnuma.errors import TopologyError
from simnuma.model import simulate

from .helpers import one_node_board

TCK = 5.0
BURST = 10.0
TIMINGS = dict(CL=4, CWL=2, tRCD=3, tRP=3, tRAS=8, tRTP=2, tWR=3, tWTR=2, tRTW=3, tRRD=2, tRTRS=1, tRFC=14,
               tREFI=1560)   # in clocks


def dram_board(cores: int = 1, window: int = 32, ranks: int = 2, banks: int = 4, scheduler: str = "fr-fcfs",
               bypass: int = 4, trefi_clk: int | None = None, page: str = "4 KiB", policy: str = "open",
               queue: int = 64, write_burst: int | None = None, idle: str = "",
               amap: str = "row.rank.bank.column.channel") -> object:
    timings = dict(TIMINGS)
    if trefi_clk is not None:
        timings["tREFI"] = trefi_clk
    text = ", ".join(f"{k}: {v} clk" for k, v in timings.items())
    burst = f"write_burst: {write_burst}, " if write_burst else ""
    burst += idle   # e.g. "idle_close: 16 clk, idle_dynamic: true, "
    return one_node_board("dram1", f"""
    model: dram
    latency: 20 ns
    queue: {queue}
    dram: {{channels: 1, width_bits: 128, clock: 200 MHz, ranks: {ranks}, banks: {banks}, row: 32 KiB,
           address_map: {amap}, scheduler: {scheduler}, bypass_limit: {bypass},
           {burst}page_policy: {policy}, os_page: {page}, timings: {{{text}}}}}""", cores, window)


def memory(result) -> dict:
    return result.memory[0]


def run(board, threads, size=2**20, mode="exact", seed=1):
    return simulate(board, threads, size_bytes=size, mode=mode, seed=seed, baseline=False)


def test_one_stream_hits_its_rows_and_fills_the_bus():
    """A lone reader with many lines in flight: a row miss per 4 KiB page, the bus busy but for page changes.

    The next page's row is opened while the bus serves the current one, unless
    it lands in the same bank (one page in 8: the bank must first close the
    row, tRTP + tRP + tRCD after the last read command, against one burst) or
    on the other rank (one in 2: tRTRS).
    """
    board = dram_board(trefi_clk=10**7)   # no refresh within the run
    m = memory(run(board, ["0.0.r.0"], size=4 * 2**20))
    assert m["row_hits"] == pytest.approx(63 / 64, abs=0.002)
    assert m["turnarounds_per_line"] == 0
    page_ns = 64 * BURST
    same_bank = (TIMINGS["tRTP"] + TIMINGS["tRP"] + TIMINGS["tRCD"]) * TCK - BURST
    expected = 6.4 * page_ns / (page_ns + same_bank / 8 + TIMINGS["tRTRS"] * TCK / 2)
    assert m["bandwidth_GBps"] == pytest.approx(expected, rel=0.003)


def test_refresh_costs_trfc_per_trefi():
    """Refresh closes the rank's rows and holds it tRFC every tREFI (the other rank's work goes on)."""
    no_refresh = memory(run(dram_board(ranks=1, trefi_clk=10**7), ["0.0.r.0"]))["bandwidth_GBps"]
    refreshed = memory(run(dram_board(ranks=1), ["0.0.r.0"]))["bandwidth_GBps"]
    lost = 1 - refreshed / no_refresh
    # tRFC plus reopening the row (tRP + tRCD) and the CAS latency the pipeline refills, per tREFI
    expected = (TIMINGS["tRFC"] + TIMINGS["tRP"] + TIMINGS["tRCD"] + TIMINGS["CL"]) / TIMINGS["tREFI"]
    assert lost == pytest.approx(expected, rel=0.25)
    assert lost > TIMINGS["tRFC"] / TIMINGS["tREFI"] * 0.9


def test_strict_alternation_of_reads_and_writes_pays_both_turnarounds():
    """A writer's fills and write-backs, served in order: read, tRTW, write, tWTR + CL, read, ..."""
    board = dram_board(scheduler="fcfs", banks=8, ranks=1, trefi_clk=10**7)
    m = memory(run(board, ["0.0.w.0"]))
    assert m["turnarounds_per_line"] == pytest.approx(1.0, abs=0.05)
    pair_ns = 2 * BURST + (TIMINGS["tRTW"] + TIMINGS["tWTR"] + TIMINGS["CL"]) * TCK
    expected_GBps = 2 * 64 / pair_ns
    # collisions of the fill and write-back pages in one bank cost a little more
    assert m["bandwidth_GBps"] == pytest.approx(expected_GBps, rel=0.06)
    assert m["bandwidth_GBps"] < expected_GBps * 1.01


def test_first_ready_batches_reads_and_writes():
    """FR-FCFS serves the writes that need no turnaround first: fewer turnarounds, more bandwidth than in order."""
    fcfs = memory(run(dram_board(scheduler="fcfs", trefi_clk=10**7), ["0.0.w.0"]))
    frfcfs = memory(run(dram_board(scheduler="fr-fcfs", bypass=16, trefi_clk=10**7), ["0.0.w.0"]))
    assert frfcfs["turnarounds_per_line"] < 0.5 * fcfs["turnarounds_per_line"]
    assert frfcfs["bandwidth_GBps"] > 1.1 * fcfs["bandwidth_GBps"]


def test_write_bursts_pay_at_most_two_turnarounds_per_burst():
    """With a write-burst limit B, writes wait until B are queued, then every queued write goes (those
    arriving meanwhile too): a writer's fills and write-backs turn the bus around at most twice per B
    writes, 1/B per line.  Longer bursts, fewer turnarounds, more bandwidth; in order, far more than
    the strict alternation without bursts."""
    plain = memory(run(dram_board(scheduler="fcfs", banks=8, ranks=1, trefi_clk=10**7), ["0.0.w.0"]))
    seen = []
    for burst in (4, 8, 16):
        m = memory(run(dram_board(scheduler="fcfs", banks=8, ranks=1, trefi_clk=10**7, write_burst=burst),
                       ["0.0.w.0"]))
        assert 0 < m["turnarounds_per_line"] <= 1 / burst
        assert m["utilization"] <= 1.0
        seen.append((m["turnarounds_per_line"], m["bandwidth_GBps"]))
    assert seen[0][1] > 2 * plain["bandwidth_GBps"]
    assert [t for t, _ in seen] == sorted((t for t, _ in seen), reverse=True)
    assert [b for _, b in seen] == sorted(b for _, b in seen)


def test_a_write_burst_longer_than_the_queue_is_refused():
    from simnuma.topology import TopologyError
    with pytest.raises(TopologyError, match="write_burst"):
        dram_board(queue=8, write_burst=16)


@pytest.mark.parametrize("window", [8, 32])
def test_two_streams_in_one_bank_conflict(window):
    """One bank: two readers' rows alternate, and every switch costs a precharge and an activation.

    Each stream's requests come back to the controller together, a window's
    worth at a time, and first-ready scheduling serves a batch of row hits
    before it turns to the other stream: about one conflict per window of
    lines, each leaving the bus idle for the row switch.
    """
    alone = memory(run(dram_board(window=window, ranks=1, banks=1, trefi_clk=10**7), ["0.0.r.0"]))
    pair = memory(run(dram_board(cores=2, window=window, ranks=1, banks=1, trefi_clk=10**7),
                      ["0.0.r.0", "0.1.r.0"]))
    assert alone["row_conflicts"] < 0.02
    assert pair["row_conflicts"] == pytest.approx(1 / window, rel=0.4)
    switch_ns = (TIMINGS["tRTP"] + TIMINGS["tRP"] + TIMINGS["tRCD"]) * TCK - BURST
    lost = 1 - pair["bandwidth_GBps"] / alone["bandwidth_GBps"]
    per_line = (pair["row_conflicts"] - alone["row_conflicts"]) * switch_ns / BURST
    assert lost == pytest.approx(per_line / (1 + per_line), rel=0.35)


def test_closed_page_activates_every_line():
    m = memory(run(dram_board(policy="closed", trefi_clk=10**7), ["0.0.r.0"]))
    assert m["row_hits"] == 0
    assert m["row_empties"] == pytest.approx(1.0, abs=1e-9)


def test_a_dynamic_idle_limit_keeps_the_rows_a_paced_stream_comes_back_to():
    """A stream paced at a line every 128 ns leaves each row idle about 118 ns between bursts: a fixed limit of 16
    clocks (80 ns) closes it before most of them, and the next line of the same row pays an activation.  A dynamic
    limit steps up to 32 clocks (160 ns) the first time that happens and keeps the row open from then on: the stream
    hits its rows as often as with rows never closed."""
    def rows(idle):
        return memory(run(dram_board(idle=idle, trefi_clk=10**7), ["0.0.r.0@0.5GB/s"]))

    never = rows("")
    fixed = rows("idle_close: 16 clk, ")
    dynamic = rows("idle_close: 16 clk, idle_dynamic: true, ")
    assert fixed["row_empties"] > 0.5 and fixed["read_ns"] > never["read_ns"] + 0.5 * TIMINGS["tRCD"] * TCK
    assert dynamic["row_hits"] == pytest.approx(never["row_hits"], abs=0.01)
    assert dynamic["read_ns"] == pytest.approx(never["read_ns"], rel=0.02)


def test_a_dynamic_idle_limit_needs_one_of_the_controller_s_limits():
    from simnuma.topology import TopologyError
    with pytest.raises(TopologyError, match="idle_close: with idle_dynamic, the dynamic idle limit starts at idle_close,"
                                            " which must be one of K8's limits, 4, 8, 16, 32, 64, 128 or 256 clk,"
                                            " got 15 clk"):
        dram_board(idle="idle_close: 15 clk, idle_dynamic: true, ")
    with pytest.raises(TopologyError, match="got none"):
        dram_board(idle="idle_dynamic: true, ")
    with pytest.raises(TopologyError, match="idle_dynamic: a dynamic idle limit needs page_policy: open"):
        dram_board(policy="closed", idle="idle_close: 16 clk, idle_dynamic: true, ")


def test_a_chase_sees_the_row_miss_latency():
    """One line in flight at scattered rows: every access opens a row (and often closes another)."""
    m = memory(run(dram_board(trefi_clk=10**7), ["0.0.l.0"], size=4 * 2**20))
    assert m["row_hits"] < 0.01
    floor = (TIMINGS["tRCD"] + TIMINGS["CL"]) * TCK + BURST
    assert m["read_ns"] >= floor


@pytest.mark.parametrize("threads", [["0.0.w.0"], ["0.0.w.0", "0.1.w.0"], ["0.0.t.0"]])
def test_two_seeds_agree_within_one_percent(threads):
    """Page placements of different seeds give the same result: the placement design, not luck, sets
    how often streams meet in a bank (exact mode, so that only the layouts differ)."""
    board = dram_board(cores=2, window=4)
    size = 2 * 2**20 if threads == ["0.0.t.0"] else 4 * 2**20
    a = run(board, threads, size=size, seed=1).makespan_ns
    b = run(board, threads, size=size, seed=2).makespan_ns
    assert b == pytest.approx(a, rel=0.01)


def test_steady_agrees_with_exact():
    board = dram_board(cores=2, window=4)
    steady = run(board, ["0.0.w.0", "0.1.r.0"], size=4 * 2**20, mode="steady").makespan_ns
    exact = run(board, ["0.0.w.0", "0.1.r.0"], size=4 * 2**20, mode="exact").makespan_ns
    assert steady == pytest.approx(exact, rel=0.01)


def test_same_seed_same_json():
    board = dram_board(cores=2, window=4)
    a = run(board, ["0.0.w.0", "0.1.t.0"], size=2**20, mode="steady", seed=5).to_dict()
    b = run(board, ["0.0.w.0", "0.1.t.0"], size=2**20, mode="steady", seed=5).to_dict()
    assert a == b


@settings(max_examples=8, deadline=None)
@given(ops=st.lists(st.sampled_from("rwt"), min_size=1, max_size=4))
def test_more_streams_never_beat_one_streams_row_hit_peak(ops):
    """However many streams share the memory, it serves no more than one stream alone at the row-hit peak."""
    peak = memory(run(dram_board(trefi_clk=10**7), ["0.0.r.0"]))["bandwidth_GBps"]
    board = dram_board(cores=len(ops), trefi_clk=10**7)
    m = memory(run(board, [f"0.{k}.{op}.0" for k, op in enumerate(ops)], size=2**19))
    assert m["bandwidth_GBps"] <= peak * 1.005
    assert 0 <= m["utilization"] <= 1 and 0 <= m["bus_utilization"] <= m["utilization"] + 1e-9
    assert not math.isnan(m["efficiency"])


@pytest.mark.parametrize("idle", ["", "idle_close: 16 clk, ", "idle_close: 16 clk, idle_dynamic: true, "],
                         ids=["open", "idle", "dynamic"])
def test_a_decision_stands_untimed_only_on_an_exact_clock_grid(monkeypatch, request, idle):
    """Where re-timing a decision at its own column time gives it back exactly, not re-timing it changes nothing: with
    open rows, rows closed after an idle limit, and each bank's dynamic idle limit."""
    from simnuma.model import native

    if native.status().startswith("compiled"):   # a compiled module calls exact_grid directly: patch its source
        env = dict(os.environ, **{native.PURE_VARIABLE: "1"})
        test = f"{__file__}::{request.node.name}"
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test], env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-3000:]
        return
    import simnuma.model.dram as dram
    from simnuma.model.banks import exact_grid
    from simnuma.topology import load_topology

    board = dram_board(cores=2, idle=idle)
    threads = ["0.0.w.0", "0.1.r.0"]
    shortcut = run(board, threads).to_dict()
    monkeypatch.setattr(dram, "exact_grid", lambda *a: False)
    timed_again = run(board, threads).to_dict()
    for result in (shortcut, timed_again):
        result.pop("run", None)
    assert shortcut == timed_again
    monkeypatch.undo()
    assert exact_grid(5.0, [15.0, 10.0, 0.0]) and not exact_grid(5.0, [7.5])
    assert not exact_grid(1e3 / 333.3, [15.0])          # DDR2-667's 3.0003 ns clock
    from simnuma.model.system import System
    from simnuma.workload import Workload

    def grid(name):
        return System(load_topology(name), Workload.build(["0.0.r.0"], []), 2**20, 1).mcts[0].memory.exact_grid

    assert grid("quartet") and not grid("x6440")               # DDR400 on 5 ns; DDR2-667 re-timed every time


def test_a_period_of_huge_pages_gets_longer_batches():
    from simnuma.model.system import _MOST_PER_PERIOD, STEADY_MAX_BATCHES, STEADY_MIN_PERIODS, System, _pacer
    from simnuma.workload import Workload

    # bank and rank bits above the row's: a 2 MiB page's frame chooses its bank (S = 8), a period is 8 pages
    system = System(dram_board(page="2 MiB", amap="rank.bank.row.column.channel"), Workload.build(["0.0.w.0"], []),
                    64 * 2**20, 1)
    (writer,) = system.foreground
    _, period, per_period = _pacer(system, (writer,), {writer: 0.02})
    assert period == system.placement_period_txns(writer, {writer: 0.02}) == 8 * 2**15
    assert per_period == _MOST_PER_PERIOD and STEADY_MIN_PERIODS * per_period <= STEADY_MAX_BATCHES
    # the usual map puts them within the page (S = 1): a period is one cycle of the banks and ranks, 4096 lines
    system = System(dram_board(page="2 MiB"), Workload.build(["0.0.w.0"], []), 64 * 2**20, 1)
    (writer,) = system.foreground
    assert system.placement_period_txns(writer, {writer: 0.02}) == 2**12


def test_a_scheduler_count_of_0_switches_its_mechanism_off():
    """``bypass_limit: 0`` passes no request (the order of ``fcfs``); ``write_burst: 0`` gathers no writes
    (as without the key), so a what-if can switch either off with ``--set``."""
    writers = ["0.0.w.0"]
    in_order = run(dram_board(scheduler="fcfs"), writers).to_dict()
    never_passed = run(dram_board(bypass=0), writers).to_dict()
    assert never_passed["makespan_ns"] == in_order["makespan_ns"] != run(dram_board(), writers).makespan_ns
    bursts = dram_board(write_burst=16)
    off = bursts.with_parameters({"defaults.memory.dram.write_burst": 0})
    assert run(off, writers).to_dict()["memory"] == run(dram_board(), writers).to_dict()["memory"]
    assert run(bursts, writers).to_dict()["memory"] != run(dram_board(), writers).to_dict()["memory"]
    with pytest.raises(TopologyError, match="expected a whole number >= 0, got -1"):
        bursts.with_parameters({"defaults.memory.dram.bypass_limit": -1})
