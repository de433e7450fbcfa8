"""One thread against one link: the model against queueing formulas."""
from __future__ import annotations

import pytest

from simnuma.model import simulate

from .helpers import two_node_board


def _isolated_latency_ns(board) -> float:
    r = simulate(board, ["0.0.r.1"], size_bytes=64 * 256, mode="exact", baseline=False)
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
