"""A memory whose latency follows measured bandwidth-latency curves.

Models (``memory.model: curve``): the memory of a machine whose DRAM timings
and controller are not published, from what a benchmark can measure — the
latency of a dependent-load chase while other threads load the memory with a
known bandwidth and read share (loaded latency, as Intel's MLC measures it;
``simnuma bench suite`` measures it and ``simnuma bench host --suite`` writes
the curves into the board).  This is the approach of the Mess framework
(Esmaili-Dokht et al., MICRO 2024): the memory keeps an estimate of the
bandwidth it is serving and of the share of reads in it (exponentially
weighted over ``WINDOW_NS``), and every access takes the board's idle latency
(``memory.latency``) plus what the curves add at that load:

    latency = memory.latency + curve(bandwidth, reads) - curve(idle, reads)

where ``curve(b, r)`` interpolates linearly in bandwidth along each measured
curve and linearly in read share between the two nearest curves (the nearest
one outside their range).  Past a curve's last point the latency keeps rising
with the last segment's slope, but at least doubling over the next 10% of
bandwidth.  A curve may also give a ``peak``: the most streams of its mix drew
without the chase (``bench host --suite`` takes it from the suite's
single-thread and all-cores cases), when that is above its last point, as on a
machine with too few CPUs to load its memory beside the chase; the latency
then follows the last segment's trend up to the peak and rises steeply only
past it.  A trend measured on the wall of saturation would climb far over a
few GB/s, so a curve may bound it with ``peak_latency``: the most latency
Little's law allows at the peak if its streams keep no more lines in flight
each than a loaded case's streams, held by the memory, did (``bench host
--suite`` works it out: :func:`simnuma.bench.curves.peak_latency_bound`).
And the memory serves no more than the most the curves reached at
that read share (the peak where there is one): accesses also pass a first-come-first-served server of that
rate, and an access is done at the later of its curve latency and its turn at
the server — so that however many lines threads keep in flight, the bandwidth
stays at the measured peak and the excess waits in line, as Little's law
wants.  A write-back is done at its turn at the server: the curves are a
read's latency, and a controller buffers write-backs apart and acknowledges
them as it takes them, so they hold a queue entry only that long (and the
queue, which ``bench host`` sizes by Little's law on the read curve, holds
the reads a mix keeps in flight).  The chase's own on-chip path is the
board's (SRI, crossbar), which is why only the difference is taken from the
curve.

The utilisation reported is the bandwidth served over the most the curves
reach at the served read share.

Abstracts away: everything inside the memory — banks, rows, refresh,
scheduling — which the curves contain as measured, and any dependence of
latency on the access pattern beyond the read share (the curves are measured
with streaming threads).
"""
from __future__ import annotations

import math
from typing import Any


from .events import Clock
from .mct import MCT, Memory
from .packet import LINE_BYTES, Packet

__all__ = ["CurveMemory", "curve_latency_ns", "latency_along", "WINDOW_NS"]

WINDOW_NS = 2000.0        # time constant of the bandwidth and read-share estimates
STEEP_FRACTION = 0.10     # past the last point, latency at least doubles over this fraction of its bandwidth


def latency_along(points: tuple, bandwidth: float, peak_GBps: float = 0.0, peak_latency_ns: float = 0.0) -> float:
    """Latency of one curve at ``bandwidth``: linear between points, steeply rising past the last.

    With a peak above the last point (streams alone drew more than the loaded
    cases reached), the last segment's trend (never falling) carries on up
    to the peak, and the steep rise starts there; where the curve also gives
    the most latency Little's law allows at the peak (``peak_latency_ns``),
    the trend rises no faster than to reach it there.
    """
    if bandwidth <= points[0][0]:
        return points[0][1]
    for (b0, l0), (b1, l1) in zip(points, points[1:]):
        if bandwidth <= b1:
            return l0 + (l1 - l0) * (bandwidth - b0) / (b1 - b0)
    (b0, l0), (b1, l1) = points[-2], points[-1]
    trend = max((l1 - l0) / (b1 - b0), 0.0)
    if peak_GBps > b1 and peak_latency_ns:
        trend = min(trend, max(peak_latency_ns - l1, 0.0) / (peak_GBps - b1))
    if peak_GBps > b1:
        if bandwidth <= peak_GBps:
            return l1 + trend * (bandwidth - b1)
        l1, b1 = l1 + trend * (peak_GBps - b1), peak_GBps
    slope = max(trend, l1 / (STEEP_FRACTION * b1))
    return l1 + slope * (bandwidth - b1)


def _idle(points: tuple) -> float:
    return points[0][1]


def curve_latency_ns(curves: tuple, bandwidth: float, reads: float) -> tuple:
    """``(added latency ns, most bandwidth GB/s)`` at ``bandwidth`` GB/s with a read share ``reads``."""
    if reads <= curves[0].read_fraction or len(curves) == 1:
        c = curves[0] if reads <= curves[0].read_fraction else curves[-1]
        return latency_along(c.points, bandwidth, c.peak_GBps, c.peak_latency_ns) - _idle(c.points), c.max_GBps
    if reads >= curves[-1].read_fraction:
        c = curves[-1]
        return latency_along(c.points, bandwidth, c.peak_GBps, c.peak_latency_ns) - _idle(c.points), c.max_GBps
    for lo, hi in zip(curves, curves[1:]):
        if reads <= hi.read_fraction:
            w = (reads - lo.read_fraction) / (hi.read_fraction - lo.read_fraction)
            added_lo = latency_along(lo.points, bandwidth, lo.peak_GBps, lo.peak_latency_ns) - _idle(lo.points)
            added_hi = latency_along(hi.points, bandwidth, hi.peak_GBps, hi.peak_latency_ns) - _idle(hi.points)
            return added_lo + w * (added_hi - added_lo), lo.max_GBps + w * (hi.max_GBps - lo.max_GBps)
    raise AssertionError("read share outside the curves")  # pragma: no cover


class CurveMemory(Memory):
    """A node's memory driven by loaded-latency curves (module docstring)."""

    COUNTERS = ("lines", "busy_ns", "reads", "writes", "added_ns")

    __slots__ = ("env", "clock", "mct", "curves", "latency_ns", "rate", "read_rate", "read_share", "last_ns", "free_at", "lines",
                 "busy_ns", "reads", "writes", "added_ns", "peak_GBps", "servers")

    def __init__(self, env, params, mct: MCT):
        self.env = env
        self.clock: Clock = env.clock
        self.mct = mct
        self.curves = params.curves
        self.latency_ns = params.memory_latency_ns
        self.peak_GBps = max(c.max_GBps for c in self.curves)
        self.rate = 0.0            # lines per ns, exponentially weighted
        self.read_rate = 0.0       # ... of them reads
        self.read_share = 1.0
        self.last_ns = 0.0
        self.free_at = 0.0         # when the peak-rate server can take the next line
        self.servers = 1
        self.lines = 0
        self.busy_ns = 0.0
        self.reads = self.writes = 0
        self.added_ns = 0.0        # summed load-dependent latency

    @property
    def sustained_GBps(self) -> float:
        return self.peak_GBps

    def submit(self, pkt: Packet, is_write: bool, line_address: Any) -> None:
        now = self.clock.now_ns
        decay = math.exp(-(now - self.last_ns) / WINDOW_NS)
        self.last_ns = now
        self.rate = self.rate * decay + 1.0 / WINDOW_NS   # each arrival adds 1/window: the mean is the rate
        self.read_rate = self.read_rate * decay + (0.0 if is_write else 1.0 / WINDOW_NS)
        self.read_share = self.read_rate / self.rate    # over the same window: as steady as the bandwidth
        added, most_GBps = curve_latency_ns(self.curves, self.rate * LINE_BYTES, self.read_share)
        service = LINE_BYTES / most_GBps
        self.free_at = (self.free_at if self.free_at > now else now) + service
        done = self.free_at   # a write-back is posted: its entry is free once the memory has taken it
        if not is_write and done < now + self.latency_ns + added:
            done = now + self.latency_ns + added
        self.lines += 1
        self.busy_ns += service
        self.added_ns += added
        if is_write:
            self.writes += 1
        else:
            self.reads += 1
        self.mct.line_done(pkt.txn, is_write, done)

    def counters(self) -> list:
        """The counters up to now: the service booked ahead of now (``free_at``, contiguous) is not busy yet."""
        now = self.clock.now_ns
        ahead_ns = self.free_at - now if self.free_at > now else 0.0
        return [self.lines, self.busy_ns - ahead_ns, self.reads, self.writes, self.added_ns]
