"""Observers and accumulators for a model run.

Components keep plain counters (bytes, busy time, and each buffer pool its
exact occupancy: :class:`~simnuma.model.credit.CreditPool`); the observers
here read them from outside: a latency histogram per thread, and snapshots of
every counter so that steady mode can measure a window and extrapolate it.
"""
from __future__ import annotations

import math

__all__ = ["LatencyHistogram", "counter_snapshot"]


class LatencyHistogram:
    """Counts of latencies in 1-ns bins; constant memory per thread."""

    __slots__ = ("counts", "n", "total")

    def __init__(self):
        self.counts = []
        self.n = 0
        self.total = 0.0

    def add(self, ns: float) -> None:
        b = int(ns)
        counts = self.counts
        if b >= len(counts):
            counts.extend([0] * (b + 1 - len(counts)))
        counts[b] += 1
        self.n += 1
        self.total += ns

    def mean(self) -> float:
        return self.total / self.n if self.n else math.nan

    def quantile(self, q: float) -> float:
        """The q-quantile, to the 1-ns bin (its midpoint)."""
        if not self.n:
            return math.nan
        target = q * self.n
        seen = 0
        for b, c in enumerate(self.counts):
            seen += c
            if seen >= target and c:
                return b + 0.5
        return len(self.counts) - 0.5

    def summary(self) -> dict:
        return {"mean": self.mean(), "p50": self.quantile(0.5), "p99": self.quantile(0.99),
                "histogram": self.histogram()}

    def histogram(self, most_bins: int = 100) -> dict:
        """The counts in at most ``most_bins`` bins of a whole number of ns: ``{start_ns, bin_ns, counts}``
        (bin k holds the latencies from start + k x bin to the next)."""
        counts = self.counts
        first = next((b for b, c in enumerate(counts) if c), 0)
        span = len(counts) - first
        width = max(1, -(-span // max(1, most_bins - 1)))   # aligning the start adds at most one bin
        start = first - first % width
        binned = [0] * (-(-(len(counts) - start) // width)) if counts else []
        for b in range(start, len(counts)):
            binned[(b - start) // width] += counts[b]
        return {"start_ns": float(start), "bin_ns": float(width), "counts": binned}


def counter_snapshot(system) -> list:
    """Every extensive counter of the system, in a fixed order."""
    now = system.env.now
    out = [now]
    for link in system.link_list:
        out += [link.cmd_bytes, link.data_bytes, link.sent_busy_ns(now)]
    for mct in system.mcts:
        out += mct.memory.counters()
    for t in system.foreground + system.background:
        out.append(t.completed)
    held, full = zip(*(pool.occupancy_ns(now) for pool in system.pools)) if system.pools else ((), ())
    out += held    # slot-ns each pool held
    out += full    # ns each pool was full
    waited = [pool.waited() for pool in system.pools]
    out += [sum(w.values()) for w in waited]   # slot-ns each pool's holders waited for another
    out += [pool.waits.get(target, 0.0) for pool, target in system.wait_edges]   # ... by the pool awaited
    return out
