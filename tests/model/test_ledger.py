"""Busy time counted ahead of the clock and read back up to now: links and DRAM channels."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnuma.model import simulate
from simnuma.model.events import Environment
from simnuma.model.ledger import SpanLedger
from simnuma.model.link import LinkDirection

from .helpers import uneven_chain


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
    idle until 50 ns: what is granted there meanwhile starts after the NOP's 1 ns, not at 51 ns."""
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


def test_a_buffer_freed_once_its_packet_is_sent_waits_for_the_tail_coming_in():
    """On a 1 GB/s link into an 8 GB/s one, a victim forwarded on its header would be sent onward in 9 ns, but its
    tail comes in only after 72 ns: held until sent (``release: end``), the middle node's single posted buffer is
    free no earlier than that.  So the
    victims go no faster than one per 72-byte transfer on the slow link, the flight and the crossbar, and the NOP
    (4 bytes at 1 GB/s) and its flight back; and no slower than that with one 8-byte fill request inserted into
    the transfer."""
    board = uneven_chain(1.0).with_parameters(
        {"link_defaults.buffers": {"request": 15, "posted": 1, "response": 15, "probe": 15},
         "link_defaults.release": "end"})
    r = simulate(board, ["0.0.w.2"], size_bytes=64 * 2048, mode="exact", baseline=False)
    line_ns = r.threads[0]["time_ns"] / 2048
    cycle_ns = 72 / 1.0 + 10.0 + 2.0 + 4 / 1.0 + 10.0
    assert cycle_ns <= line_ns <= cycle_ns + 8 / 1.0


@pytest.mark.parametrize("mode", ["exact", "steady"])
def test_uneven_links_stay_within_capacity(mode):
    board = uneven_chain(1.0)
    r = simulate(board, ["0.0.w.2", "2.0.r.0", "0.1.r.2"], ["2.1.w.0@2GB/s"], size_bytes=256 * 1024 if mode == "exact"
                 else 2 * 2**20, mode=mode, baseline=False).to_dict()
    for link in r["links"]:
        assert 0.0 <= link["data_utilization"] <= link["utilization"] <= 1.0, link
    assert max(link["utilization"] for link in r["links"]) > 0.9
