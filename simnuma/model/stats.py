"""Observers and accumulators for a model run.

Components keep plain counters (bytes, busy time); the observers here read
them from outside: a latency histogram per thread, a sampler of buffer
occupancy, and snapshots of every counter so that steady mode can measure a
window and extrapolate it.
"""
from __future__ import annotations

import math

__all__ = ["LatencyHistogram", "BufferSampler", "counter_snapshot"]


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
        return {"mean": self.mean(), "p50": self.quantile(0.5), "p99": self.quantile(0.99)}


class BufferSampler:
    """Samples the occupancy of every buffer pool at jittered intervals.

    The running sums give each pool's mean occupancy and the fraction of
    samples at which it was full.
    """

    def __init__(self, env, pools, interval_ns: float, rng):
        self.env = env
        self.pools = list(pools)
        self.interval_ns = interval_ns
        self.rng = rng
        self.samples = 0
        self.occupancy = [0] * len(self.pools)
        self.full = [0] * len(self.pools)
        self.process = env.process(self._run())

    def _run(self):
        env = self.env
        rng = self.rng
        occ = self.occupancy
        full = self.full
        # (ready-time heap, capacity, index) per pool; a pool's heap is one list for the whole run
        heaps = [(pool.ready, pool.capacity, i) for i, pool in enumerate(self.pools)]
        while True:
            yield env.timeout(self.interval_ns * (0.5 + rng.random()))
            now = env.now
            self.samples += 1
            for ready, capacity, i in heaps:
                # CreditPool.occupancy(now), inlined (every pool at every sample: a call each cost 3% of
                # exact mode): slots held, or freed with a ready time still to come
                if ready and ready[0] <= now:
                    o = capacity - len(ready)
                    for t in ready:
                        if t > now:
                            o += 1
                    occ[i] += o   # at least one slot is free: not full
                else:   # the earliest free slot is not back yet: all are taken
                    occ[i] += capacity
                    full[i] += 1


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
    s = system.sampler
    out.append(s.samples)
    out += s.occupancy
    out += s.full
    return out
