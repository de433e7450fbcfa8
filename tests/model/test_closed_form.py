"""One thread against one link: the model against queueing formulas."""
from __future__ import annotations

import pytest

from simnuma.model import simulate

from .helpers import chain_board, two_node_board


def _isolated_latency_ns(board, spec: str = "0.0.r.1") -> float:
    r = simulate(board, [spec], size_bytes=64 * 256, mode="exact", baseline=False)
    return r.threads[0]["latency_ns"]["mean"]


@pytest.mark.parametrize("window", [1, 2, 3, 5, 8, 12])
def test_window_limited_throughput_matches_littles_law(window):
    """X = min(W / R, link capacity in lines), R the latency of a lone miss."""
    board = two_node_board(window=window, link_GBps=4.0)
    lone = _isolated_latency_ns(two_node_board(window=1, link_GBps=4.0))
    r = simulate(board, ["0.0.r.1"], size_bytes=64 * 4096, mode="exact", baseline=False)
    t = r.threads[0]
    lines_per_ns = 4096 / t["time_ns"]
    # per line, direction 1->0 carries the read response (4 + 64 B) and two 4-B NOPs
    # returning the credits of the request and of the source-done that went 0->1
    line_ns_on_1_to_0 = (4 + 64 + 4 + 4) / 4.0
    expected = min(window / lone, 1.0 / line_ns_on_1_to_0)
    assert lines_per_ns == pytest.approx(expected, rel=0.02)


def test_lone_miss_latency_is_the_sum_of_its_stages():
    """Request 0->1, DRAM, data 1->0, each stage's latency once (probe filter, no contention)."""
    board = two_node_board(window=1, link_GBps=4.0)
    lone = _isolated_latency_ns(board)
    sri, xbar, link, dram_access = 1.0, 2.0, 10.0, 50.0
    dram_service_mean = 64 / 100.0  # 100 GB/s, efficiency 1: no loss, transfer time only
    # with a window of one, each request follows the previous miss's 4-B source-done onto 0->1
    request = sri + xbar + 4 / 4.0 + 8 / 4.0 + link + xbar
    data = xbar + 68 / 4.0 + link + xbar
    assert lone == pytest.approx(request + dram_service_mean + dram_access + data, abs=0.6)


def test_saturated_link_carries_its_bandwidth():
    board = two_node_board(window=32, link_GBps=2.0)
    r = simulate(board, ["0.0.r.1"], size_bytes=64 * 4096, mode="exact", baseline=False)
    link = r.link(1, 0)
    assert link["utilization"] == pytest.approx(1.0, abs=0.02)
    assert link["data_utilization"] == pytest.approx(64 / 76, abs=0.02)  # 68-B response + two NOPs per line
    assert r.bottleneck["resource"] == "link 1->0"


def test_forwarded_data_cuts_through_the_middle_node():
    """One more hop costs a request hop and a data hop of header time only: the middle node
    routes the read response on its command, it does not wait for the 64 B of data."""
    board = chain_board(nodes=3)
    one_hop = _isolated_latency_ns(board, "0.0.r.1")
    two_hops = _isolated_latency_ns(board, "0.0.r.2")
    request_hop = 8 / 4.0 + 10.0 + 2.0      # serialise 8 B, fly, cross the crossbar
    data_hop = 4 / 4.0 + 10.0 + 2.0         # only the 4-B command is waited for
    assert two_hops - one_hop == pytest.approx(request_hop + data_hop, abs=0.6)
    store_and_forward = request_hop + 68 / 4.0 + 10.0 + 2.0
    assert two_hops - one_hop < store_and_forward - 10.0


@pytest.mark.parametrize("release", ["end", "start"])
def test_a_forwarded_packet_frees_its_buffer_once_sent_onward(release):
    """With one posted buffer per link, a two-hop writer's victims are paced by the buffer at the middle node.
    Sent out of that buffer (``release: end``), a victim holds it from its credit's use until its last byte has
    left on the second link: its header in (8 B, the flight, the crossbar), all of it out again (72 B, stretched
    by the 8-byte fill request inserted into it), then the NOP back (4 B) and its flight.  Freed as the onward
    transmission starts (``release: start``), the middle buffer turns round sooner, and the last one paces the
    victims: serialised, flown and crossed, then the NOP back."""
    board = chain_board(nodes=3, window=8).with_parameters(
        {"link_defaults.buffers": {"request": 15, "posted": 1, "response": 15, "probe": 15},
         "link_defaults.release": release})
    r = simulate(board, ["0.0.w.2"], size_bytes=64 * 2048, mode="exact", baseline=False)
    line_ns = r.threads[0]["time_ns"] / 2048
    if release == "end":
        cycle_ns = 8 / 4.0 + 10.0 + 2.0 + (72 + 8) / 4.0 + 4 / 4.0 + 10.0
    else:
        cycle_ns = 72 / 4.0 + 10.0 + 2.0 + 4 / 4.0 + 10.0
    assert line_ns == pytest.approx(cycle_ns, rel=0.03)


def _probe_bound_board(window: int, **probe) -> object:
    """Two nodes broadcasting, node 1 looking up one probe at a time for 100 ns (or holding its slot for
    ``probe['occupancy']``): a local reader on node 0 is held by node 1's probe slot, nothing else."""
    changes = {"defaults.sri.probe_queue": 1, "defaults.probe.lookup": "100 ns"}
    changes.update({f"defaults.probe.{key}": value for key, value in probe.items()})
    return two_node_board(window=window, coherence="broadcast").with_parameters(changes)


@pytest.mark.parametrize("occupancy_ns", [None, 50.0, 25.0])
def test_a_node_looks_up_its_probe_slots_over_their_occupancy_per_ns(occupancy_ns):
    """Every local line sends node 1 a probe; with one slot, node 1 answers one probe per occupancy
    (the whole 100-ns lookup when the board gives none), and that is each line's time."""
    probe = {} if occupancy_ns is None else {"occupancy": f"{occupancy_ns} ns"}
    r = simulate(_probe_bound_board(8, **probe), ["0.0.r.0"], size_bytes=64 * 2048, mode="exact",
                 baseline=False)
    line_ns = r.threads[0]["time_ns"] / 2048
    assert line_ns == pytest.approx(occupancy_ns or 100.0, rel=0.03)
    assert r.bottleneck["buffer"] == "N1 xbar->sri probe"


def test_a_shorter_probe_occupancy_leaves_a_lone_miss_as_slow():
    """The occupancy bounds how many probes a node looks up at once, not how long each takes: a lone miss takes
    as long, while eight in flight go faster."""
    whole = _isolated_latency_ns(_probe_bound_board(1), "0.0.r.0")
    pipelined = _isolated_latency_ns(_probe_bound_board(1, occupancy="10 ns"), "0.0.r.0")
    assert pipelined == whole
    assert whole > 100.0 + 2 * 10.0   # the probe's round trip: its lookup and a flight each way
    times = [simulate(_probe_bound_board(8, **probe), ["0.0.r.0"], size_bytes=64 * 1024, mode="exact",
                      baseline=False).makespan_ns for probe in ({}, {"occupancy": "10 ns"})]
    assert times[1] < 0.5 * times[0]


def test_a_probe_occupancy_longer_than_its_lookup_holds_the_slot_past_the_answer():
    """Occupancy 150 ns with a 100-ns lookup: the slot is free 50 ns after the answer, so even one line at a time
    goes at one per 150 ns (a lone miss's round trip is 135 ns), and eight in flight no faster."""
    assert _isolated_latency_ns(_probe_bound_board(1), "0.0.r.0") == pytest.approx(135.0, abs=2.0)
    assert _isolated_latency_ns(_probe_bound_board(1, occupancy="150 ns"), "0.0.r.0") == pytest.approx(150.0,
                                                                                                      abs=1.0)
    r = simulate(_probe_bound_board(8, occupancy="150 ns"), ["0.0.r.0"], size_bytes=64 * 2048, mode="exact",
                 baseline=False)
    assert r.threads[0]["time_ns"] / 2048 == pytest.approx(150.0, rel=0.03)


@pytest.mark.parametrize("release", ["data", "done"])
@pytest.mark.parametrize("spec", ["0.0.r.1", "0.0.r.0"])
def test_a_read_holds_its_dram_queue_entry_as_long_as_the_board_says(release, spec):
    """One DRAM queue entry and eight lines in flight: each line waits for the entry the line before holds, from
    its admission at the home until its data leave the controller (``data``: 50 ns and its 64 B at 100 GB/s), or
    until the read is complete (``done``): for a remote read, also the data's way to the requester (crossbar,
    68 B at 4 GB/s, flight and crossbar) and the source-done's way back (SRI, crossbar, 4 B, flight and
    crossbar); for a local read, the data's crossing of the crossbar to the SRI."""
    board = chain_board(2, window=8).with_parameters({"defaults.memory.queue": 1, "defaults.memory.release": release})
    r = simulate(board, [spec], size_bytes=64 * 2048, mode="exact", baseline=False)
    line_ns = r.threads[0]["time_ns"] / 2048
    in_memory = 50.0 + 64 / 100.0
    if spec == "0.0.r.0":
        to_the_end = 2.0
    else:
        to_the_end = (2.0 + 68 / 4.0 + 10.0 + 2.0) + (1.0 + 2.0 + 4 / 4.0 + 10.0 + 2.0)
    expected = in_memory + (to_the_end if release == "done" else 0.0)
    assert line_ns == pytest.approx(expected, rel=0.01)
    assert r.bottleneck["buffer"] == f"N{spec[-1]} mct dram queue"
