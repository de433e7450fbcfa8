"""The thread-spec notation shared by the model, the benchmark and the reports.

``N.C.op.M[@RATE]`` is a thread on node N, core C of that node, doing op ``r``
(read-only), ``w`` (write-only), ``t`` (STREAM triad) or ``l`` (latency: a
dependent-load chase, one line outstanding) over an array on node M.
``@RATE`` (``@0.5GB/s``) throttles the thread's demand.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import SpecError
from .units import UnitError, format_bandwidth, parse_quantity

__all__ = ["ThreadSpec", "parse_spec", "parse_specs", "Workload", "OPS", "MODEL_OPS"]

OPS = ("r", "w", "t", "l")
SLOWEST_RATE_GBps = 1e-3   # 1 MB/s: a paced thread's warm-up alone is then 13 ms of simulated time
MODEL_OPS = ("r", "w", "t", "l")
_SPEC = re.compile(r"^(\d+)\.(\d+)\.([a-z]+)\.(\d+)(?:@(.+))?$")


@dataclass(frozen=True)
class ThreadSpec:
    """One thread: where it runs, what it does, where its array lives."""

    node: int
    core: int
    op: str
    mem_node: int
    rate_GBps: float | None = None

    @property
    def label(self) -> str:
        base = f"{self.node}.{self.core}.{self.op}.{self.mem_node}"
        if self.rate_GBps is None:
            return base
        return f"{base}@{format_bandwidth(self.rate_GBps).replace(' ', '')}"

    def __str__(self) -> str:
        return self.label

    def relabel(self, mapping: dict) -> "ThreadSpec":
        return ThreadSpec(mapping[self.node], self.core, self.op, mapping[self.mem_node], self.rate_GBps)


def parse_spec(text: str, ops=OPS) -> ThreadSpec:
    """Parse one spec; raise SpecError naming what is wrong."""
    if isinstance(text, ThreadSpec):
        return text
    raw = str(text).strip()
    m = _SPEC.match(raw)
    if not m:
        raise SpecError(f"{raw!r}: expected a thread spec N.C.op.M[@RATE], e.g. 0.0.r.1 or 1.1.r.1@0.5GB/s")
    node, core, op, mem, rate = m.groups()
    if op not in ops:
        raise SpecError(f"{raw!r}: unknown op {op!r}; expected one of {', '.join(ops)}")
    rate_GBps = None
    if rate is not None:
        try:
            rate_GBps = parse_quantity(rate, "bandwidth")
        except UnitError as exc:
            raise SpecError(f"{raw!r}: malformed rate: {exc}") from None
        if rate_GBps <= 0:
            raise SpecError(f"{raw!r}: the rate must be positive")
        if rate_GBps < SLOWEST_RATE_GBps:
            raise SpecError(f"{raw!r}: the slowest rate is 1 MB/s (a slower thread would take hours of simulated"
                            " events to measure)")
    return ThreadSpec(int(node), int(core), op, int(mem), rate_GBps)


def parse_specs(texts, ops=OPS) -> list:
    return [parse_spec(t, ops) for t in texts]


@dataclass(frozen=True)
class Workload:
    """Foreground threads (walk their array once) and background threads (run until the foreground ends)."""

    threads: tuple
    background: tuple = ()

    @classmethod
    def build(cls, threads, background=(), ops=MODEL_OPS) -> "Workload":
        fg = tuple(parse_spec(t, ops) for t in threads)
        bg = tuple(parse_spec(t, ops) for t in background)
        if not fg:
            raise SpecError("no foreground thread given; e.g. 0.0.r.0")
        return cls(fg, bg)

    def check(self, topology) -> None:
        """Raise SpecError if a thread cannot be placed on ``topology``."""
        used: dict[tuple[int, int], str] = {}   # (node, core) -> the thread on it
        ids = topology.node_ids
        for spec in self.threads + self.background:
            if spec.node not in ids:
                raise SpecError(f"{spec.label!r}: no node {spec.node} on board {topology.name!r} (nodes {list(ids)})")
            if spec.mem_node not in ids:
                raise SpecError(f"{spec.label!r}: no memory node {spec.mem_node} on board {topology.name!r}"
                                f" (nodes {list(ids)})")
            cores = topology.node(spec.node).cores
            if not cores:
                raise SpecError(f"{spec.label!r}: node {spec.node} has no cores (a memory-only node): it holds"
                                " arrays, it runs no thread")
            if spec.core >= cores:
                raise SpecError(f"{spec.label!r}: node {spec.node} has {cores} cores (0..{cores - 1}),"
                                f" no core {spec.core}")
            where = (spec.node, spec.core)
            if where in used:
                raise SpecError(f"{spec.label!r}: core {spec.node}.{spec.core} already runs {used[where]!r};"
                                " one thread per core")
            used[where] = spec.label

    def relabel(self, mapping: dict) -> "Workload":
        return Workload(tuple(t.relabel(mapping) for t in self.threads),
                        tuple(t.relabel(mapping) for t in self.background))
