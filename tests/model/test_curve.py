"""The curve memory: latency from measured bandwidth-latency curves."""
from __future__ import annotations

import pytest

from simnuma.topology.memparams import parse_curves
from simnuma.model import simulate
from simnuma.model.curve import curve_latency_ns

from .helpers import one_node_board

CURVES = """
    - read_fraction: 1.0
      points: [[1 GB/s, 100 ns], [10 GB/s, 110 ns], [20 GB/s, 150 ns]]
    - read_fraction: 0.5
      points: [[1 GB/s, 100 ns], [8 GB/s, 120 ns], [14 GB/s, 200 ns]]
"""


def curve_board(cores: int = 8, window: int = 8) -> object:
    return one_node_board("curve1", f"""
    model: curve
    latency: 60 ns
    queue: 512
    curves:{CURVES}""", cores, window)


def curves():
    import yaml
    return parse_curves(yaml.safe_load(CURVES))


def test_latency_added_interpolates_along_a_curve():
    c = curves()
    assert curve_latency_ns(c, 1.0, 1.0) == (0.0, 20.0)
    assert curve_latency_ns(c, 5.5, 1.0)[0] == pytest.approx(5.0)
    assert curve_latency_ns(c, 15.0, 1.0)[0] == pytest.approx(30.0)


def test_latency_added_interpolates_between_read_shares():
    c = curves()
    added, most = curve_latency_ns(c, 8.0, 0.75)
    reads = 100 + 10 * 7 / 9 - 100        # the all-read curve at 8 GB/s
    mixed = 20.0                          # the half-read curve at 8 GB/s
    assert added == pytest.approx((reads + mixed) / 2)
    assert most == pytest.approx(17.0)
    assert curve_latency_ns(c, 8.0, 0.2) == curve_latency_ns(c, 8.0, 0.5)   # nearest curve outside the range


def test_past_the_last_point_latency_climbs_steeply():
    c = curves()
    at_max = curve_latency_ns(c, 20.0, 1.0)[0]
    beyond = curve_latency_ns(c, 22.0, 1.0)[0]
    assert beyond - at_max >= 150 / (0.1 * 20) * 2 - 1e-9   # at least doubling over the next 10%


def test_an_idle_chase_sees_the_idle_latency():
    r = simulate(curve_board(), ["0.0.l.0"], size_bytes=2**20, baseline=False)
    lat = r.thread("0.0.l.0")["latency_ns"]["mean"]
    # core -> SRI -> crossbar -> MCT and back: the board's idle path around memory.latency
    assert 60 < lat < 60 + 10


def test_load_raises_the_chase_latency_as_the_curve_says():
    idle = simulate(curve_board(), ["0.0.l.0"], size_bytes=2**20, baseline=False)
    loaded = simulate(curve_board(), ["0.0.l.0"], ["0.1.r.0@5GB/s"], size_bytes=2**20, baseline=False)
    bandwidth = loaded.memory[0]["bandwidth_GBps"]
    assert bandwidth == pytest.approx(5.0 + 64 / loaded.thread("0.0.l.0")["latency_ns"]["mean"], rel=0.05)
    expected = curve_latency_ns(curves(), bandwidth, 1.0)[0]
    added = loaded.thread("0.0.l.0")["latency_ns"]["mean"] - idle.thread("0.0.l.0")["latency_ns"]["mean"]
    assert added == pytest.approx(expected, abs=1.5)


def test_unthrottled_threads_cannot_drive_the_memory_far_past_the_measured_peak():
    r = simulate(curve_board(cores=8, window=16), [f"0.{k}.r.0" for k in range(8)], size_bytes=2**20,
                 baseline=False)
    m = r.memory[0]
    assert 15.0 < m["bandwidth_GBps"] <= 20.0 * 1.1
    assert 0 < m["utilization"] <= 1.0


def test_write_share_lowers_the_most_the_memory_serves():
    reads = simulate(curve_board(cores=8, window=16), [f"0.{k}.r.0" for k in range(8)], size_bytes=2**19,
                     baseline=False).memory[0]["bandwidth_GBps"]
    writes = simulate(curve_board(cores=8, window=16), [f"0.{k}.w.0" for k in range(8)], size_bytes=2**19,
                      baseline=False).memory[0]["bandwidth_GBps"]
    assert writes < reads
    assert writes <= 14.0 * 1.1


def test_writers_are_held_to_the_write_curves_peak():
    """Eight writers: a fill and a write-back a line, half reads, the write curve's share, whose most is 14 GB/s;
    a curve of 60% reads reaches 28.  The read share is weighed over the bandwidth's window, so it does not swing
    toward the other curve's peak: with the share weighed over the last 64 accesses, every swing up read the
    memory part way to 28 GB/s and none down had a curve to read, and the memory served 14.28 GB/s."""
    board = one_node_board("curve2", """
    model: curve
    latency: 60 ns
    queue: 512
    curves:
    - read_fraction: 0.6
      points: [[1 GB/s, 100 ns], [20 GB/s, 110 ns], [28 GB/s, 150 ns]]
    - read_fraction: 0.5
      points: [[1 GB/s, 100 ns], [8 GB/s, 120 ns], [14 GB/s, 200 ns]]""", 8, 16)
    r = simulate(board, [f"0.{k}.w.0" for k in range(8)], size_bytes=2**21, baseline=False)
    assert 13.5 < r.memory[0]["bandwidth_GBps"] <= 14.0 * 1.005


def test_a_peak_carries_the_last_trend_on_and_raises_the_most_the_memory_serves():
    """Streams alone drew 30 GB/s, more than the loaded cases' 20: up to the peak the latency follows the
    last segment's trend (4 ns per GB/s), past it the steep rise; the server's rate is the peak."""
    import yaml
    raw = yaml.safe_load(CURVES)
    raw[0]["peak"] = "30 GB/s"
    c = parse_curves(raw)
    assert curve_latency_ns(c, 25.0, 1.0) == (pytest.approx(50.0 + 4 * 5), 30.0)
    at_peak = curve_latency_ns(c, 30.0, 1.0)[0]
    assert curve_latency_ns(c, 33.0, 1.0)[0] - at_peak >= (100 + at_peak) / (0.1 * 30) * 3 - 1e-9


def test_a_latency_at_the_peak_bounds_the_trend_up_to_it():
    """The last segment rises 4 ns per GB/s; with at most 160 ns at the 30 GB/s peak, the latency rises no faster
    than to reach that there (1 ns per GB/s), and past the peak steeply from it.  A bound above the trend
    changes nothing."""
    import yaml
    raw = yaml.safe_load(CURVES)
    raw[0]["peak"] = "30 GB/s"
    raw[0]["peak_latency"] = "160 ns"
    c = parse_curves(raw)
    assert c[1].peak_latency_ns == 160.0
    assert curve_latency_ns(c, 25.0, 1.0) == (pytest.approx(55.0), 30.0)
    assert curve_latency_ns(c, 30.0, 1.0)[0] == pytest.approx(60.0)
    assert curve_latency_ns(c, 33.0, 1.0)[0] - 60.0 >= 160.0 / (0.1 * 30) * 3 - 1e-9
    raw[0]["peak_latency"] = "400 ns"
    loose = parse_curves(raw)
    assert curve_latency_ns(loose, 25.0, 1.0)[0] == pytest.approx(50.0 + 4 * 5)


@pytest.mark.parametrize("entry, message", [
    ({"peak_latency": "160 ns"}, "peak_latency: a latency at the peak needs the peak's bandwidth"),
    ({"peak": "30 GB/s", "peak_latency": "140 ns"}, "peak_latency: expected at least the last point's 150 ns"),
    ({"peak": "30 GB/s", "peak_latency": "160"}, "peak_latency: expected"),
])
def test_a_latency_at_the_peak_that_cannot_be_is_refused(entry, message):
    import yaml
    raw = yaml.safe_load(CURVES)
    raw[0].update(entry)
    with pytest.raises(ValueError, match=message):
        parse_curves(raw)


def test_a_peak_below_the_last_point_is_refused():
    import yaml
    raw = yaml.safe_load(CURVES)
    raw[0]["peak"] = "15 GB/s"
    with pytest.raises(ValueError, match="peak: expected a bandwidth above the last point"):
        parse_curves(raw)


def chase_beside(readers: int, queue: int, sri: int) -> float:
    board = one_node_board("saturating", f"""
    model: curve
    latency: 60 ns
    queue: {queue}
    curves:{CURVES}""", readers + 1, 16, sri=sri)
    r = simulate(board, ["0.0.l.0"], [f"0.{k}.r.0" for k in range(1, readers + 1)], size_bytes=2**18,
                 baseline=False)
    return r.thread("0.0.l.0")["latency_ns"]["mean"]


def test_past_saturation_the_chase_waits_a_turn_of_each_core_not_behind_every_line():
    """The memory holds what Little's law says it held at the curve's last point (20 GB/s x 150 ns / 64 B =
    47 lines); the streams' other lines wait in their cores and take the SRI's buffers in turns with the
    chase's.  So twice the streams (16 x 16 lines against 8 x 16) leave the chase near the curve's latency
    at saturation: one turn more per core, not 128 lines more.  First come, first served at the SRI, the
    chase would wait behind every line the others keep in flight: 8 x 16 x 3.2 ns = 410 ns more."""
    turn_ns = 64 / 20.0                     # a line's turn at the memory's 20 GB/s
    eight, sixteen = chase_beside(8, 47, 4), chase_beside(16, 47, 4)
    assert 150 + 15 < eight < 150 + 8 * turn_ns + 60          # the curve at saturation, its path, one round of turns
    assert sixteen - eight < 8 * turn_ns + 10                 # eight more cores: eight more turns at most
    assert chase_beside(16, 47, 512) - sixteen > 100          # a deep SRI queue in front of the memory: the chase
    # waits behind the lines it holds
