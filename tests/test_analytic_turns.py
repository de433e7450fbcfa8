"""The analytic model's sharing of a full memory or probe lookup in turns among what feeds it (analytic/turns.py)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simnuma
from simnuma import load_topology, simulate
from simnuma.analytic.turns import port_shares, water_fill

amounts = st.floats(min_value=0.0, max_value=10.0, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(amounts, st.floats(min_value=0.1, max_value=8.0)), min_size=1, max_size=8),
       st.floats(min_value=0.1, max_value=10.0))
def test_water_fill_is_max_min_fair(rows, capacity):
    """No share above its demand; all of the capacity given where the demands exceed it; and no share that stops
    short of its demand at a lower level (share over weight) than any other's."""
    demands = [d for d, _w in rows]
    weights = [w for _d, w in rows]
    shares = water_fill(demands, weights, capacity)
    assert all(0.0 <= s <= d * (1 + 1e-9) for s, d in zip(shares, demands))
    assert sum(shares) == pytest.approx(min(capacity, sum(demands)), rel=1e-9, abs=1e-12)
    levels = [s / w for s, w in zip(shares, weights)]
    for s, d, level in zip(shares, demands, levels):
        if s < d * (1 - 1e-9):
            assert level >= max(levels) * (1 - 1e-9)


def _greedy(customers: float = 8.0) -> tuple:
    return (customers, 100.0, 0.0)   # (customers, cycle ns, pace ns): unpaced


def test_a_thread_with_one_line_in_flight_waits_no_turn_behind_the_lines_of_the_others():
    """At an SRI, a chase asking 1% of a full memory beside three greedy streams asking 40% each gets all it asks;
    the streams split the rest evenly (33% each), not in proportion to their lines in flight."""
    rows = {"chase": (1.0, 100.0, 0.0), "a": _greedy(), "b": _greedy(4.0), "c": _greedy()}
    users = [("chase", 1.0), ("a", 5.0), ("b", 10.0), ("c", 5.0)]
    sri = (("sri", 0), 2, True)
    rates = port_shares(users, rows, {label: sri for label, _d in users})
    assert rates["chase"] == pytest.approx(1.0 / 100.0)
    taken = {label: d * rates[label] for label, d in users}
    assert taken["a"] == pytest.approx(taken["b"]) == pytest.approx(taken["c"]) == pytest.approx(0.99 / 3)


def test_links_share_in_proportion_to_their_buffers_and_their_threads_in_order():
    """Two links feed a full probe lookup, one with twice the buffers of the other: it gets two thirds of it,
    however many lines its threads keep in flight; behind one link, two threads of 8 and 2 lines in flight share
    their third as one queue served in order (the common wait), 4 to 1."""
    rows = {"x": _greedy(), "y": _greedy(2.0), "z": _greedy(40.0)}
    users = [("x", 5.0), ("y", 5.0), ("z", 5.0)]   # asking 0.4, 0.1 and 2.0 of the resource
    port_of = {"x": (("link", 1, 0), 2, False), "y": (("link", 1, 0), 2, False), "z": (("link", 2, 0), 4, False)}
    rates = port_shares(users, rows, port_of)
    assert 5.0 * rates["z"] == pytest.approx(2.0 / 3.0)
    assert 5.0 * (rates["x"] + rates["y"]) == pytest.approx(1.0 / 3.0)
    assert rates["x"] / rates["y"] == pytest.approx(4.0)


def test_a_port_that_asks_less_than_its_share_keeps_what_it_asks():
    """A link asking 1% of a full resource beside one asking 200%: it keeps its 1%, the other gets the 99% left."""
    rows = {"x": (1.0, 100.0, 0.0), "z": _greedy(200.0)}
    port_of = {"x": (("link", 1, 0), 4, False), "z": (("link", 2, 0), 4, False)}
    rates = port_shares([("x", 1.0), ("z", 1.0)], rows, port_of)
    assert rates["x"] == pytest.approx(0.01)
    assert rates["z"] == pytest.approx(0.99)


def test_a_memory_whose_queue_holds_every_line_serves_them_in_order():
    """A chase beside fifteen greedy readers whose 481 lines in flight all fit in the DRAM queue's 512 entries:
    the memory serves them first come, first served, so the chase waits behind every line, as in the
    simulation (within 5%): no turns."""
    from model.test_curve import curve_board

    board = curve_board(cores=16, window=32)
    background = [f"0.{k}.r.0" for k in range(1, 16)]
    analytic = simnuma.analyze(board, ["0.0.l.0"], background, size_bytes=1 << 20).thread("0.0.l.0")
    simulated = simulate(board, ["0.0.l.0"], background, size_bytes=1 << 20, baseline=False).thread("0.0.l.0")
    assert analytic["latency_ns"]["mean"] > 1000.0
    assert analytic["latency_ns"]["mean"] == pytest.approx(simulated["latency_ns"]["mean"], rel=0.05)


def test_a_full_memory_shares_in_turns_as_the_simulation_does():
    """The Quartet's node-0 writers beside a background reader at 3 GB/s on every other node: node 2's memory is
    full, and its DRAM queue takes the remote writer's requests (behind link 0->2) in turns with the local
    reader's (behind node 2's SRI).  The analytic writer gets the share the simulation gives it (within 15%);
    served as one queue in order, its 5 lines in flight against the reader's 32 left it less than half of it."""
    quartet = load_topology("quartet")
    case = ["0.0.w.0", "0.1.w.2"]
    background = [str(s) for s in simnuma.case.parse_case("0.0.w.0 0.1.w.2 + others@high").background_on(quartet)]
    size = 8 << 20
    analytic = simnuma.analyze(quartet, case, background, size_bytes=size)
    simulated = simulate(quartet, case, background, size_bytes=size, baseline=False)
    writer_a, writer_s = (r.thread("0.1.w.2")["bandwidth_GBps"] for r in (analytic, simulated))
    assert writer_a == pytest.approx(writer_s, rel=0.15)
    assert analytic.makespan_ns == pytest.approx(simulated.to_dict()["makespan_ns"], rel=0.15)
