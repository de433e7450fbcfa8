"""The standard set of benchmark cases for a host, and running it.

The set depends on the host (nodes with CPUs, nodes with memory, CPU count):

- single threads: ops r, w, t and l from the first core of every node with
  CPUs to every node with memory;
- two threads on one node (the home node: the first with CPUs and memory and,
  if possible, two CPUs): r+r, w+w and r+w on local memory; on a multi-node
  host also a local writer (reader) beside one writing (reading) the nearest
  other node;
- on a multi-node host, crossfire (``a.0.w.b b.0.w.a``, and the same for reads)
  and the same hops without crossfire (``a.0.w.b b.0.w.c``; on two nodes the
  second thread stays local: ``a.0.w.b b.0.w.b``);
- loaded writers: two local writers (one when CPUs are short) beside one to
  three background readers of local memory at two rates.

No case uses more threads than the host has CPUs; the cases that would are
listed as skipped with the reason.  :func:`run_suite` writes one JSON report
per case and an index ``suite.json`` holding every case's headline figures
and the observations the set supports (do two threads move more data than
one?).  With ``rounds`` it runs the whole set several times and merges each
case's rounds (:mod:`simnuma.bench.merge`), so that on a drifting machine every
case samples the same stretch of time.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BenchError
from ..fileio import progress, write_json
from .host import Host, discover_host, format_bytes
from .merge import merge_reports
from .run import parse_count, parse_reps, parse_size, run_bench

__all__ = ["Case", "suite_cases", "run_suite", "parse_rounds", "INDEX_FORMAT", "BACKGROUND_RATES", "observe_scaling"]

INDEX_FORMAT = "simnuma-bench-suite/1"
BACKGROUND_RATES = ("0.5GB/s", "2GB/s")
SINGLE_OPS = ("r", "w", "t", "l")


@dataclass(frozen=True)
class Case:
    """One benchmark run: foreground threads, background threads, and what it is for."""

    kind: str
    threads: tuple
    background: tuple = ()
    purpose: str = ""

    @property
    def name(self) -> str:
        name = " ".join(self.threads)
        if self.background:
            name += " bg " + " ".join(self.background)
        return name

    @property
    def file_name(self) -> str:
        stem = self.name.replace(" bg ", "--bg--").replace(" ", "_").replace("/s", "ps")
        return re.sub(r"[^A-Za-z0-9._@+-]", "_", stem) + ".json"


@dataclass
class _Plan:
    cases: list = field(default_factory=list)
    skipped: list = field(default_factory=list)

    def add(self, case: Case, cpus_available: int) -> None:
        needed = len(case.threads) + len(case.background)
        if needed > cpus_available:
            self.skipped.append({"case": case.name, "kind": case.kind,
                                 "reason": f"needs {needed} CPUs, the host has {cpus_available}"})
        else:
            self.cases.append(case)


def _home_node(host: Host):
    usable = [n for n in host.nodes if n.cpus and n.has_memory]
    if not usable:
        raise BenchError("no node of this host has both CPUs and memory")
    return next((n for n in usable if len(n.cpus) >= 2), usable[0])


def _nearest(host: Host, origin, candidates):
    """The candidate closest to ``origin`` by distance (lowest id on ties, or without distances)."""
    def key(node):
        distance = host.distance(origin.id, node.id)
        return (distance if distance is not None else 0, node.id)
    return min(candidates, key=key) if candidates else None


def _singles(host: Host, plan: _Plan) -> None:
    for node in (n for n in host.nodes if n.cpus):
        for memory in (m for m in host.nodes if m.has_memory):
            for op in SINGLE_OPS:
                plan.add(Case("single", (f"{node.id}.0.{op}.{memory.id}",),
                              purpose="one thread alone: the reference for every other case"), host.cpu_count)


def _same_node_pairs(host: Host, plan: _Plan, a, b) -> None:
    x = a.id
    pairs = [("r", "r"), ("w", "w"), ("r", "w")]
    for first, second in pairs:
        plan.add(Case("same-node", (f"{x}.0.{first}.{x}", f"{x}.1.{second}.{x}"),
                      purpose="two threads sharing one node's memory"), host.cpu_count)
    if b is not None:
        for op in ("w", "r"):
            plan.add(Case("same-node", (f"{x}.0.{op}.{x}", f"{x}.1.{op}.{b.id}"),
                          purpose="second thread sent one hop away instead of sharing local memory"),
                     host.cpu_count)


def _crossfire_pairs(host: Host, plan: _Plan, a, b) -> None:
    others = [n for n in host.nodes if n.has_memory and n.id not in (a.id, b.id)]
    by_distance = [n for n in others if host.distance(b.id, n.id) == host.distance(b.id, a.id)]
    third = _nearest(host, b, by_distance or others) or b
    for op in ("w", "r"):
        plan.add(Case("crossfire", (f"{a.id}.0.{op}.{b.id}", f"{b.id}.0.{op}.{a.id}"),
                      purpose="two threads using each other's memory over the same link"), host.cpu_count)
        plan.add(Case("no-crossfire", (f"{a.id}.0.{op}.{b.id}", f"{b.id}.0.{op}.{third.id}"),
                      purpose="the same first thread without traffic coming back over its link"),
                 host.cpu_count)


def _background_cpus(host: Host, home, taken: set) -> list:
    """Free (node, core) slots, other nodes first (round robin), then the home node."""
    queues = [[(n, c) for c in range(len(n.cpus)) if (n.id, c) not in taken]
              for n in host.nodes if n.cpus and n.id != home.id]
    slots = []
    while any(queues):
        for queue in queues:
            if queue:
                slots.append(queue.pop(0))
    slots += [(home, c) for c in range(len(home.cpus)) if (home.id, c) not in taken]
    return slots


def _loaded_writers(host: Host, plan: _Plan, home) -> None:
    x = home.id
    for readers in (1, 2, 3):
        writers = 2 if len(home.cpus) >= 2 and host.cpu_count >= 2 + readers else 1
        threads = tuple(f"{x}.{c}.w.{x}" for c in range(writers))
        slots = _background_cpus(host, home, {(x, c) for c in range(writers)})
        for rate in BACKGROUND_RATES:
            if writers + readers > host.cpu_count:
                plan.skipped.append({"case": f"{writers} writer(s) on node {x} + {readers} background reader(s)"
                                             f" at {rate}", "kind": "loaded",
                                     "reason": f"needs {writers + readers} CPUs, the host has {host.cpu_count}"})
                continue
            background = tuple(f"{n.id}.{c}.r.{n.id if n.has_memory else x}@{rate}" for n, c in slots[:readers])
            plan.add(Case("loaded", threads, background,
                          purpose=f"local writers under {readers} background reader(s) at {rate}"), host.cpu_count)


def suite_cases(host: Host) -> tuple:
    """``(cases, skipped)`` for ``host``; skipped entries say why a case does not fit."""
    plan = _Plan()
    home = _home_node(host)
    others = [n for n in host.nodes if n.cpus and n.has_memory and n.id != home.id]
    nearest = _nearest(host, home, others)
    _singles(host, plan)
    if len(home.cpus) >= 2:
        _same_node_pairs(host, plan, home, nearest)
    else:
        plan.skipped.append({"case": f"{home.id}.0.w.{home.id} {home.id}.1.w.{home.id}", "kind": "same-node",
                             "reason": f"node {home.id} has only one CPU"})
    if nearest is not None:
        _crossfire_pairs(host, plan, home, nearest)
    _loaded_writers(host, plan, home)
    return plan.cases, plan.skipped


# ------------------------------------------------------------------ running

def _headline(report: dict) -> dict:
    threads = report["threads"]
    foreground = [t for t in threads if t["role"] == "foreground"]
    wall = report["wall_seconds"]
    total_bytes = sum(t["bytes"] for t in foreground)
    return {
        "wall_seconds": {"min": wall["min"], "median": wall["median"]},
        "foreground_total_GBps": total_bytes / wall["min"] / 1e9 if wall["min"] > 0 else None,
        "threads": {t["spec"]: {"role": t["role"], "GBps_best": t["GBps"]["best"],
                                "ns_per_access_best": t["ns_per_access"]["best"],
                                "cpu_share_median": t["cpu_share"]["median"],
                                "placement": t["placement"]["fraction"]} for t in threads},
        "warnings": report["warnings"],
    }


def observe_scaling(entries: dict, host: Host, op: str) -> dict | None:
    """Do two threads on the home node move more data than one? With the reasons when they do not."""
    home = _home_node(host).id
    single = entries.get(f"{home}.0.{op}.{home}")
    pair = entries.get(f"{home}.0.{op}.{home} {home}.1.{op}.{home}")
    if not single or not pair or "error" in single or "error" in pair:
        return None
    one = single["threads"][f"{home}.0.{op}.{home}"]["GBps_best"]
    two = pair["foreground_total_GBps"]
    word = {"r": "readers", "w": "writers"}[op]
    observation = {
        "claim": f"two local {word} on node {home} move more data per second than one",
        "one_thread_GBps": one,
        "two_threads_total_GBps": two,
        "ratio": two / one if one else None,
        "holds": bool(two and one and two > one),
    }
    caveats = _contention(single, pair)
    observation["conclusive"] = not caveats
    if caveats:
        observation["caveats"] = caveats
    if not observation["holds"]:
        virtual = [_VIRTUAL_MACHINE] if host.hypervisor else []
        observation["why_not"] = _saturation(two, one) + caveats + virtual or ["no explanation found in the reports"]
    return observation


_VIRTUAL_MACHINE = ("this is a virtual machine: its CPUs may be hardware threads of one physical core and share"
                    " memory bandwidth with other guests")


def _saturation(two: float, one: float) -> list:
    if two is not None and one and two >= 0.95 * one:
        return ["the pair reaches about the single thread's bandwidth: one thread already saturates what this"
                " node's memory (or the path to it) delivers"]
    return []


def _contention(single: dict, pair: dict) -> list:
    """Reasons, found in the reports, why the figures may not show the memory system alone."""
    reasons = []
    warnings = single["warnings"] + pair["warnings"]
    if any("of the time on its CPU" in w for w in warnings):
        reasons.append("the threads did not have their CPUs to themselves (see the cpu_share of each report):"
                       " other processes were running; rerun on a quiet machine")
    if any("spread" in w for w in warnings):
        reasons.append("the repetitions spread more than 5%: other work was running; rerun on a quiet machine"
                       " or with more --reps")
    return reasons


def load_average() -> list | None:
    """The 1, 5 and 15 minute load averages of /proc/loadavg (None where unreadable)."""
    try:
        with open("/proc/loadavg", encoding="ascii") as fh:
            return [float(x) for x in fh.read().split()[:3]]
    except (OSError, ValueError):
        return None


def _run_round(case: Case, host: Host, size_bytes, reps: int) -> dict:
    """One round of ``case``: its report, or ``{"error": ...}``."""
    try:
        return run_bench(case.threads, case.background, size_bytes=size_bytes, reps=reps, host=host)
    except BenchError as exc:
        return {"error": str(exc)}


def _round_order(cases: list, number: int) -> list:
    """Round 0 runs the cases in order, round 1 backwards, and so on: a steady drift weighs on all alike."""
    return list(cases) if number % 2 == 0 else list(reversed(cases))


def _measure_in_rounds(cases: list, host: Host, size_bytes, reps: int, rounds: int, bar) -> tuple:
    """``(reports, elapsed_seconds)`` by case name: each case's reports of every round, and the time they took."""
    reports = {case.name: [] for case in cases}
    elapsed = {case.name: 0.0 for case in cases}
    for number in range(rounds):
        for case in _round_order(cases, number):
            done = reports[case.name]
            if not (done and "error" in done[-1]):  # a case that failed is not run again
                bar.set_postfix_str(f"round {number + 1}/{rounds}: {case.name}", refresh=False)
                started = time.monotonic()
                done.append(_run_round(case, host, size_bytes, reps))
                elapsed[case.name] += time.monotonic() - started
            bar.update(1)
    return reports, elapsed


def _finish_case(case: Case, reports: list, elapsed_seconds: float, out_dir: Path) -> dict:
    failed = [r for r in reports if "error" in r]
    if failed:
        return {"error": failed[0]["error"], "elapsed_seconds": elapsed_seconds}
    report = merge_reports(reports)
    path = write_json(out_dir / case.file_name, report)
    entry = _headline(report)
    entry["file"] = path.name
    entry["rounds"] = len(reports)
    entry["elapsed_seconds"] = elapsed_seconds
    return entry


def run_suite(out_dir, size_bytes=None, reps: int = 3, host: Host | None = None, stream=None,
              rounds: int = 5) -> dict:
    """Run every case of :func:`suite_cases`; write one JSON per case and ``suite.json``; return the index.

    The cases are measured in ``rounds`` passes of ``reps`` repetitions each
    (alternately forwards and backwards), so that every case samples the same
    stretch of time; each case's report merges its rounds (:func:`merge_reports`).
    A case that fails is not run again.  Raises BenchError after writing the
    index when any case failed.
    """
    out_dir = Path(out_dir)
    host = host or discover_host()
    size = parse_size(size_bytes) if size_bytes is not None else None
    reps = parse_reps(reps)
    rounds = parse_rounds(rounds)
    cases, skipped = suite_cases(host)
    started = time.monotonic()
    load_before = load_average()
    bar = progress(total=len(cases) * rounds, desc="bench suite", stream=stream)
    try:
        reports, elapsed = _measure_in_rounds(cases, host, size, reps, rounds, bar)
    finally:
        bar.close()
    entries = {case.name: _finish_case(case, reports[case.name], elapsed[case.name], out_dir) for case in cases}
    index = _index(host, cases, skipped, entries, size, reps, time.monotonic() - started)
    index["rounds"] = rounds
    index["load_average"] = {"before": load_before, "after": load_average()}
    write_json(out_dir / "suite.json", index)
    failed = [name for name, entry in entries.items() if "error" in entry]
    if failed:
        first = entries[failed[0]]["error"]
        raise BenchError(f"{len(failed)} of {len(cases)} suite cases failed (first: {failed[0]!r}: {first});"
                         f" see {out_dir / 'suite.json'}")
    return index


def parse_rounds(text) -> int:
    return parse_count(text, "--rounds", 10_000)


def _index(host: Host, cases, skipped, entries, size, reps, elapsed_seconds) -> dict:
    observations = [o for o in (observe_scaling(entries, host, "r"), observe_scaling(entries, host, "w")) if o]
    return {
        "format": INDEX_FORMAT,
        "host": host.to_dict(),
        "size_bytes": size,
        "size": format_bytes(size) if size else "default (4 x the last-level cache, at least 64 MiB)",
        "reps": reps,
        "elapsed_seconds": elapsed_seconds,
        "cases": [{"name": c.name, "kind": c.kind, "threads": list(c.threads), "background": list(c.background),
                   "purpose": c.purpose, **entries[c.name]} for c in cases],
        "skipped": skipped,
        "observations": observations,
    }
