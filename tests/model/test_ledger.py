"""Busy time counted ahead of the clock and read back up to now: links and DRAM channels."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnuma.model import simulate
from simnuma.model.events import Environment
from simnuma.model.ledger import SpanLedger
from simnuma.model.link import LinkDirection
from simnuma.topology import parse_topology


def _spans(draw_gaps, draw_lengths):
    """Non-overlapping spans in time order: (busy from, data from, end)."""
    t, out = 0.0, []
    for gap, wait, length in zip(draw_gaps, draw_lengths[0], draw_lengths[1]):
        start = t + gap
        out.append((start, start + wait, start + wait + length))
        t = start + wait + length
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 50), min_size=1, max_size=30), st.lists(st.floats(0, 20), min_size=30, max_size=30),
       st.lists(st.floats(0.5, 20), min_size=30, max_size=30), st.lists(st.floats(0, 40), min_size=1, max_size=8),
       st.floats(0, 30))
def test_busy_read_over_any_window_fits_in_it(gaps, waits, lengths, reading_steps, lead_ns):
    """Spans committed up to ``lead_ns`` before they end (some waited since before the last reading):
    between any two readings the busy and data time grow by at most the time between them."""
    spans = _spans(gaps, (waits, lengths))
    readings = []
    t = 0.0
    for step in reading_steps:
        t += step
        readings.append(t)
    ledger = SpanLedger()
    busy = data = 0.0
    events = sorted([(max(0.0, end - lead_ns - length), 1, (b, d, end)) for (b, d, end), length in zip(spans, lengths)]
                    + [(r, 0, None) for r in readings], key=lambda e: (e[0], e[1]))
    last = None
    for when, kind, span in events:
        if kind == 1:
            b, d, end = span
            busy += ledger.book(b, max(d, when), end, when)
            data += end - max(d, when)
        else:
            busy_ahead, data_ahead = ledger.ahead(when)
            now_busy, now_data = busy - busy_ahead, data - data_ahead
            assert 0.0 <= now_data <= now_busy + 1e-9
            if last is not None:
                assert now_busy - last[1] <= when - last[0] + 1e-9
                assert now_busy >= last[1] - 1e-9
            last = (when, now_busy, now_data)


def test_a_link_counts_its_booked_time_up_to_now_less_its_idle_stretches():
    env = Environment()
    link = LinkDirection(env, 0, 1, 0, 1, 4.0, 10.0, dict.fromkeys(("request", "posted", "response", "probe"), 2),
                         {"posted": 2, "response": 2})
    # booked at time 0: busy 0-10, idle 10-20 (a cut-through packet waiting for its tail), busy 20-30
    link.idle_until(10.0, 20.0)
    link.busy_until, link.busy_ns = 30.0, 20.0
    assert [link.sent_busy_ns(t) for t in (0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0)] == \
        [0.0, 5.0, 10.0, 10.0, 10.0, 15.0, 20.0, 20.0]


def test_a_credit_freed_ahead_comes_back_then_without_booking_its_return_direction_idle():
    """A buffer freed at 50 ns (its packet still being sent out of it) returns its credit in a NOP sent then, one
    flight later; the NOP is a command, inserted into what its direction carries, so it does not keep that direction
    idle until 50 ns: what is granted there meanwhile goes at once."""
    env = Environment()
    buffers = dict.fromkeys(("request", "posted", "response", "probe"), 1)
    ab = LinkDirection(env, 0, 1, 0, 1, 4.0, 10.0, buffers, {"posted": 1, "response": 1})
    ba = LinkDirection(env, 1, 0, 1, 0, 4.0, 10.0, buffers, {"posted": 1, "response": 1})
    ab.reverse, ba.reverse = ba, ab
    pool = ab.cmd_pools[0]
    assert pool.take_ready(0.0)
    ready_ns = pool.release(50.0)
    assert ready_ns == pytest.approx(50.0 + 4 / 4.0 + 10.0)   # sent at 50 ns, its 4 bytes, its flight
    assert ba.busy_until == pytest.approx(4 / 4.0) and not ba.gaps   # its time taken now, no idle stretch booked
    assert ba.nops == 1 and ba.sent_busy_ns(1.0) == pytest.approx(1.0)


def _uneven_chain(slow_GBps: float):
    """Three nodes in a line whose first link is slow: data forwarded onto the fast one waits for its tail."""
    return parse_topology(f"""
name: uneven
defaults:
  cores: 2
  ports: 2
  core: {{window: {{r: 4, w: 4, t: 4}}}}
  memory: {{bandwidth: 100 GB/s, efficiency: 1.0, latency: 50 ns, queue: 64}}
  sri: {{latency: 1 ns, buffers: {{request: 15, posted: 15, response: 15}}, probe_queue: 15}}
  mct: {{buffers: {{response: 15, probe: 15}}}}
  xbar: {{latency: 2 ns}}
  probe: {{lookup: 5 ns}}
link_defaults:
  bandwidth: 8 GB/s
  latency: 10 ns
  buffers: {{request: 8, posted: 8, response: 8, probe: 8}}
nodes: [{{id: 0}}, {{id: 1}}, {{id: 2}}]
links: [{{a: 0, b: 1, bandwidth: {slow_GBps} GB/s}}, {{a: 1, b: 2}}]
coherence: broadcast
""", "uneven.yaml")


@pytest.mark.parametrize("mode", ["exact", "steady"])
def test_uneven_links_stay_within_capacity(mode):
    board = _uneven_chain(1.0)
    r = simulate(board, ["0.0.w.2", "2.0.r.0", "0.1.r.2"], ["2.1.w.0@2GB/s"], size_bytes=256 * 1024 if mode == "exact"
                 else 2 * 2**20, mode=mode, baseline=False).to_dict()
    for link in r["links"]:
        assert 0.0 <= link["data_utilization"] <= link["utilization"] <= 1.0, link
    assert max(link["utilization"] for link in r["links"]) > 0.9
