"""The analytic model: closed forms, bounds, agreement with the simulation where buffers do not bind."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simnuma
from simnuma import load_topology, simulate
from simnuma.cli import main

from model.helpers import chain_board

LINES = (1 << 20) // 64


def test_one_thread_one_link_is_its_latency():
    """A reader one hop away with one line in flight: nothing queues, so a line takes the sum of the path: SRI and
    crossbar (1 + 2 ns), the request's 8 B at 4 GB/s, the link and the far crossbar (2 + 10 + 2), the memory's
    64 B at 100 GB/s and its 50 ns, the data's 68 B back with the link and crossbar (17 + 10 + 2)."""
    board = chain_board(2, window=1, coherence="probe_filter")
    result = simnuma.analyze(board, ["0.0.r.1"], size_bytes=1 << 20).to_dict()
    latency = (1 + 2) + (2 + 10 + 2) + (0.64 + 50) + (17 + 10 + 2)
    (t,) = result["threads"]
    assert t["latency_ns"]["mean"] == pytest.approx(latency, rel=1e-9)
    assert t["time_ns"] == pytest.approx(LINES * latency, rel=1e-6)
    assert t["bandwidth_GBps"] == pytest.approx(64 / latency, rel=1e-6)


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 4), st.integers(1, 8), st.sampled_from(["probe_filter", "broadcast"]), st.sampled_from("rwt"),
       st.floats(0.5, 8.0))
def test_bounds_hold(nodes, window, coherence, op, link_GBps):
    """Balanced job bounds: no station is offered more than it serves, and a thread's throughput is at most its
    window over its unloaded latency."""
    board = chain_board(nodes, window=window, link_GBps=link_GBps, coherence=coherence)
    spec = f"0.0.{op}.{nodes - 1}"
    alone = simnuma.analyze(chain_board(nodes, window=1, link_GBps=link_GBps, coherence=coherence), [spec]).to_dict()
    result = simnuma.analyze(board, [spec, f"{nodes - 1}.0.{op}.0"]).to_dict()
    for station in result["links"] + result["memory"]:
        assert station["offered"] <= 1.0 + 1e-6
    unloaded = alone["threads"][0]["latency_ns"]["mean"]
    for t in result["threads"]:
        per_transaction = 64 / t["bandwidth_GBps"]
        assert per_transaction >= unloaded / window * (1 - 1e-6)


@settings(max_examples=12, deadline=None)
@given(st.integers(2, 4), st.integers(1, 4), st.sampled_from(["probe_filter", "broadcast"]), st.sampled_from("rw"))
def test_agrees_with_the_simulation_where_buffers_do_not_bind(nodes, window, coherence, op):
    """On chains with 15 buffers of every kind and a fast FIFO memory, one thread: within 8% of the simulation."""
    board = chain_board(nodes, window=window, buffers=15, coherence=coherence)
    spec = f"0.0.{op}.{nodes - 1}"
    analytic = simnuma.analyze(board, [spec], size_bytes=1 << 20).makespan_ns
    simulated = simulate(board, [spec], size_bytes=1 << 20, baseline=False).makespan_ns
    assert analytic == pytest.approx(simulated, rel=0.08)


@pytest.mark.parametrize("case", ["0.0.r.0", "0.0.r.1", "0.0.r.2", "0.0.r.3", "0.0.l.0"])
def test_the_quartet_idle_reads_within_five_percent(case):
    quartet = load_topology("quartet")
    analytic = simnuma.analyze(quartet, [case]).makespan_ns
    simulated = simulate(quartet, [case], baseline=False).makespan_ns
    assert analytic == pytest.approx(simulated, rel=0.05)


def test_run_analytic(capsys):
    assert main(["run", "quartet", "0.0.w.1", "1.0.w.0", "--analytic"]) == 0
    out = capsys.readouterr().out
    assert "analytic (approximate MVA" in out and "0.0.w.1" in out and "busiest links: 0->1" in out
    assert main(["run", "quartet", "0.0.r.1", "--analytic", "--json", "--set", "link_defaults.latency=20ns"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["mode"] == "analytic" and data["changes"] == {"link_defaults.latency": "20ns"} and data["board_hash"]
    assert main(["run", "quartet", "0.0.r.1", "--analytic", "--exact"]) == 2
    assert "--exact: the analytic model solves the case" in capsys.readouterr().err


def test_the_page_example_holds():
    import doctest
    from pathlib import Path

    page = Path(__file__).resolve().parent.parent / "docs" / "analytic.md"
    failed, tried = doctest.testfile(str(page), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert tried and not failed
