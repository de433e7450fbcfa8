"""The cases of a sweep's workload entries on one board, and the numbers each case gives.

Named sets, on a board with nodes ``N0 .. Nk`` (each thread on core 0 of its node):

* ``single``: one thread ``n.0.op.m`` for every node ``n`` and memory ``m`` (the idle single-thread matrix);
* ``local``: ``n.0.op.n`` for every node;
* ``pairs``: two threads ``a.0.op.m b.0.op.m'`` for every two nodes ``a < b`` and every two memories;
* ``crossfire``: ``a.0.op.b b.0.op.a`` for every link ``a-b`` (each thread's time alone is simulated too,
  with the same background, for the crossfire penalty);
* ``all-to-all``: for every shift ``k`` of ``1 .. N-1`` every node ``i`` streams from node ``i + k``
  (in node order, round the end), all at once.

A set's ``background`` (``full@very-high``, explicit threads) is added to each of its cases.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..case import Case, baseline_case, parse_case
from .spec import CASE_METRICS
__all__ = ["Planned", "plan_cases", "case_metrics", "aggregates"]


@dataclass(frozen=True)
class Planned:
    """One case of one entry on one board: what it is for (``tags``) and whether the table shows it."""

    case: Case                # as simulated: every background thread explicit
    entry: str                # the workload entry's label
    kind: str                 # "case", a set name, "alone" (a crossfire thread's own time) or "baseline"
    tags: tuple = ()          # ((key, value), ...): op, node, mem, link, shift
    shown: bool = True

    def tag(self, key):
        return dict(self.tags).get(key)


def _case(topology, foreground: str, background: str) -> Case:
    return parse_case(f"{foreground} + {background}" if background else foreground).placed(topology)


def plan_cases(entry, topology) -> list:
    """The :class:`Planned` cases of one workload entry on ``topology``."""
    ids = list(topology.node_ids)
    runs = list(topology.core_node_ids)   # where threads run: a memory-only node only holds arrays
    bg = entry.background
    out = []
    if entry.kind == "case":
        return [Planned(entry.case.placed(topology), entry.label, "case")]
    for op in entry.ops:
        if entry.kind in ("single", "local"):
            for n in runs:
                for m in (ids if entry.kind == "single" else [n]):
                    out.append(Planned(_case(topology, f"{n}.0.{op}.{m}", bg), entry.label, "single",
                                       (("op", op), ("node", n), ("mem", m))))
        elif entry.kind == "pairs":
            for i, a in enumerate(runs):
                for b in runs[i + 1:]:
                    for m1 in ids:
                        for m2 in ids:
                            out.append(Planned(_case(topology, f"{a}.0.{op}.{m1} {b}.0.{op}.{m2}", bg), entry.label,
                                               "pairs", (("op", op),)))
        elif entry.kind == "crossfire":
            for link in topology.links:
                a, b = link.a, link.b
                if a not in runs or b not in runs:
                    continue      # no thread runs on a memory-only node
                tags = (("op", op), ("link", f"{a}-{b}"))
                out.append(Planned(_case(topology, f"{a}.0.{op}.{b} {b}.0.{op}.{a}", bg), entry.label, "crossfire",
                                   tags))
                for x, y in ((a, b), (b, a)):
                    out.append(Planned(_case(topology, f"{x}.0.{op}.{y}", bg), entry.label, "alone", tags, False))
        elif entry.kind == "all-to-all":
            for k in range(1, len(ids)):
                threads = " ".join(f"{n}.0.{op}.{ids[(i + k) % len(ids)]}" for i, n in enumerate(ids) if n in runs)
                out.append(Planned(_case(topology, threads, bg), entry.label, "all-to-all",
                                   (("op", op), ("shift", k))))
    return out


def baseline(topology) -> Planned:
    return Planned(baseline_case(topology), "baseline", "baseline", (), False)


def case_metrics(result: dict, baseline_ns: float | None) -> dict:
    """The per-case columns of the table (``spec.CASE_METRICS``) from a simulated result; a case whose board
    deadlocks has none of them but its bottleneck, ``deadlock``."""
    if "deadlock" in result:
        return {name: None for name in CASE_METRICS} | {"bottleneck": "deadlock"}
    fg = [t for t in result["threads"] if t["role"] == "foreground"]
    time_ns = max(t["time_ns"] for t in fg)
    return {
        "time_ns": time_ns,
        "time_percent": 100.0 * time_ns / baseline_ns if baseline_ns else None,
        "GBps": sum(t["bandwidth_GBps"] for t in fg),
        "latency_ns": statistics.fmean(t["latency_ns"]["mean"] for t in fg),
        "max_link_utilization": max((link["utilization"] for link in result["links"]), default=0.0),
        "max_memory_utilization": max((m["utilization"] for m in result["memory"]), default=0.0),
        "bottleneck": _bottleneck(result["bottleneck"]),
    }


def _bottleneck(b: dict) -> str:
    """The resource that limits a case, short (the report's line names the buffer and its time full too)."""
    if b.get("limit") == "none":
        return "none (latency-bound)"
    return str(b.get("resource"))


def aggregates(topology, planned: list, metrics: list) -> dict:
    """The per-configuration aggregates (``spec.AGGREGATES``) that this configuration's cases allow.

    ``planned`` and ``metrics`` are parallel: each planned case and its :func:`case_metrics`.
    Latency aggregates come from the single-thread cases of the first op given (a read where there is one).
    The cases that deadlock are counted (``deadlocks``) and left out of the other aggregates.
    """
    out: dict = {"links": topology.link_count(), "diameter": topology.diameter()}
    stuck = [p for p, m in zip(planned, metrics) if m["bottleneck"] == "deadlock"]
    if stuck:
        out["deadlocks"] = len(stuck)   # every simulation of the configuration, those its aggregates need too
        lost = {(p.entry, p.tag("op"), p.tag("link")) for p in stuck if p.kind == "alone"}
        kept = [(p, m) for p, m in zip(planned, metrics) if m["bottleneck"] != "deadlock"
                and not (p.kind == "crossfire" and (p.entry, p.tag("op"), p.tag("link")) in lost)]
        planned, metrics = [p for p, _ in kept], [m for _, m in kept]
    shown = [m for p, m in zip(planned, metrics) if p.shown and m.get("time_percent") is not None]
    if shown:
        out["mean_time_percent"] = statistics.fmean(m["time_percent"] for m in shown)
    singles = [(p, m) for p, m in zip(planned, metrics) if p.kind == "single" and not p.case.background]
    if singles:
        ops = [p.tag("op") for p, _ in singles]
        op = "r" if "r" in ops else ("l" if "l" in ops else ops[0])
        local = [m["latency_ns"] for p, m in singles if p.tag("op") == op and p.tag("node") == p.tag("mem")]
        remote = [m["latency_ns"] for p, m in singles if p.tag("op") == op and p.tag("node") != p.tag("mem")]
        if local:
            out["local_latency_ns_mean"] = statistics.fmean(local)
            out["local_latency_ns_worst"] = max(local)
            out["local_latency_spread"] = max(local) / min(local) - 1.0
        if remote:
            out["remote_latency_ns_mean"] = statistics.fmean(remote)
            out["remote_latency_ns_worst"] = max(remote)
    alone: dict = {}
    for p, m in zip(planned, metrics):
        if p.kind == "alone":
            alone.setdefault((p.entry, p.tag("op"), p.tag("link")), []).append(m["time_ns"])
    penalties = [m["time_ns"] / max(alone[(p.entry, p.tag("op"), p.tag("link"))]) - 1.0
                 for p, m in zip(planned, metrics)
                 if p.kind == "crossfire" and (p.entry, p.tag("op"), p.tag("link")) in alone]
    if penalties:
        out["crossfire_penalty"] = max(penalties)
    shifts = [m["GBps"] for p, m in zip(planned, metrics) if p.kind == "all-to-all"]
    if shifts:
        out["all_to_all_GBps"] = statistics.fmean(shifts)
    return out
