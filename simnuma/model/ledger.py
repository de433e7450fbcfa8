"""Busy time counted when work is committed, read back as time up to now.

A server that books its work ahead of the clock (a DRAM channel commits a
burst at its column command, some nanoseconds before the data moves) counts
the busy time of that work at once.  Counters read at a given time must not
include what lies after it, or the busy time of a window between two readings
could exceed the window: utilisation above one.  :class:`SpanLedger` keeps
the spans booked ahead and says how much of them is still to come.
"""
from __future__ import annotations

from collections import deque

__all__ = ["SpanLedger"]


class SpanLedger:
    """The recent busy spans of one server, each with the part in which data moves.

    A span is ``(busy from, data from, end)``: the server is busy from the
    first time, moving data from the second.  Spans of one server do not
    overlap and are booked in time order.  A span committed late may start
    before the last reading (work that waited on the server since before
    then); it is counted only from that reading on, so that the busy time
    read over any window fits in it.
    """

    __slots__ = ("spans", "closed_ns")

    def __init__(self):
        self.spans: deque[tuple[float, float, float]] = deque()
        self.closed_ns = 0.0    # the last reading: busy time before it is counted already

    def book(self, busy_from_ns: float, data_from_ns: float, end_ns: float, now_ns: float) -> float:
        """Record a span committed at ``now_ns``; returns the busy time it adds."""
        if busy_from_ns < self.closed_ns:
            busy_from_ns = self.closed_ns
        spans = self.spans
        while spans and spans[0][2] <= now_ns:
            spans.popleft()
        spans.append((busy_from_ns, data_from_ns, end_ns))
        return end_ns - busy_from_ns

    def ahead(self, now_ns: float) -> tuple[float, float]:
        """``(busy, data)`` time of the booked spans after ``now_ns``; a reading: closes what lies before it."""
        self.closed_ns = now_ns
        busy_ns = data_ns = 0.0
        for busy_from, data_from, end in self.spans:
            if end > now_ns:
                busy_ns += end - (busy_from if busy_from > now_ns else now_ns)
                data_ns += end - (data_from if data_from > now_ns else now_ns)
        return busy_ns, data_ns
