"""Running the standard set of benchmark cases (:mod:`.plan` says which) and writing its index.

:func:`run_suite` writes one JSON report per case and an index ``suite.json``
holding every case's headline figures, the case groups, the estimate of the
duration and the observations the set supports (do two threads move more data
than one?).  With ``rounds`` it runs the whole set several times and merges
each case's rounds (:mod:`simnuma.bench.merge`), so that on a drifting machine
every case samples the same stretch of time.
"""
from __future__ import annotations

import time
from pathlib import Path

from ..errors import BenchError, SpecError
from ..fileio import progress, write_json
from .cores import home_note, memory_allowed
from .cpulists import format_cpulist
from .estimate import Probe, estimate_text, probe_host, suite_seconds
from .host import Host, discover_host, format_bytes
from .merge import merge_reports
from .plan import (BACKGROUND_RATES, INDEX_FORMAT, MIXES, MOST_STREAM_COUNTS, PACED_FRACTIONS, PlannedCase, SuitePlan, _home_node,
                   first_core, paced_rates, quota_note, second_core, stream_counts, suite_array_size, suite_cases, suite_plan)
from .run import parse_count, parse_pages, parse_reps, parse_size, run_bench

__all__ = ["PlannedCase", "SuitePlan", "suite_plan", "suite_cases", "run_suite", "parse_rounds", "INDEX_FORMAT",
           "BACKGROUND_RATES", "observe_scaling", "stream_counts", "paced_rates", "MIXES", "MOST_STREAM_COUNTS",
           "PACED_FRACTIONS"]


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
                                "GBps_median": t["GBps"]["median"],
                                "ns_per_access_best": t["ns_per_access"]["best"],
                                "ns_per_access_median": t["ns_per_access"]["median"],
                                "cpu_share_median": t["cpu_share"]["median"],
                                "placement": t["placement"]["fraction"]} for t in threads},
        "warnings": report["warnings"],
    }


def _check_home_allowed(host: Host, home) -> None:
    """The suite measures from the first core of the home node this process may use, on the node's memory (its
    probe, its single threads, the chase): refuse at once, in one line, where it may use none of the node's CPUs
    or not its memory (then no node with memory has both: :func:`~simnuma.bench.plan._home_node` would have taken
    another)."""
    mems = host.allowed_mems
    if not memory_allowed(host, home):
        with_memory = format_cpulist(n.id for n in host.nodes if n.cpus and n.has_memory)
        raise BenchError(f"bench suite: none of the nodes with CPUs and memory ({with_memory}) is among the memory"
                         f" nodes this process may use (Mems_allowed: {format_cpulist(mems)}; a cpuset restricts it);"
                         f" run it where the memory of one of them is allowed (a cpuset whose cpuset.mems holds"
                         f" {home.id})")
    if not any(map(host.may_use, home.cpus)):
        where = ("a node with memory" if mems is None else
                 f"a node whose memory it may use (Mems_allowed: {format_cpulist(mems)})")
        raise BenchError(f"bench suite: it runs from node {home.id} (CPUs {format_cpulist(home.cpus)}), none of whose"
                         f" CPUs this process may use (allowed CPUs: {format_cpulist(host.allowed_cpus)}; a cpuset or"
                         f" CPU affinity restricts it); run it where a CPU of {where} is allowed (e.g."
                         f" taskset -c {home.cpus[0]},...)")
    quota = host.cpu_quota
    if quota is not None and quota.cpus < 1.0:
        raise BenchError(f"bench suite: this process's CPU quota is {quota.text()}: even one thread would measure"
                         " the quota, not the machine; run it where no quota below one CPU applies")


def observe_scaling(entries: dict, host: Host, op: str) -> dict | None:
    """Do two threads on the home node move more data than one? With the reasons when they do not."""
    node = _home_node(host)
    home, j, k = node.id, first_core(host, node), second_core(host, node)
    single = entries.get(f"{home}.{j}.{op}.{home}")
    pair = entries.get(f"{home}.{j}.{op}.{home} {home}.{k}.{op}.{home}")
    if not single or not pair or "error" in single or "error" in pair:
        return None
    one = single["threads"][f"{home}.{j}.{op}.{home}"]["GBps_best"]
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


def _run_round(case: PlannedCase, host: Host, size_bytes, reps: int, pages: str) -> dict:
    """One round of ``case``: its report, or ``{"error": ...}`` (what the benchmark refused, or what this host
    does not allow the case: the suite goes on, and keeps what it measured)."""
    try:
        return run_bench(case.threads, case.background, size_bytes=size_bytes, reps=reps, host=host, pages=pages)
    except (BenchError, SpecError) as exc:
        return {"error": str(exc)}


def _round_order(cases: list, number: int) -> list:
    """Round 0 runs the cases in order, round 1 backwards, and so on: a steady drift weighs on all alike."""
    return list(cases) if number % 2 == 0 else list(reversed(cases))


def _measure_in_rounds(cases: list, host: Host, size_bytes, reps: int, rounds: int, bar, pages: str = "auto",
                       estimates: dict | None = None) -> tuple:
    """``(reports, elapsed_seconds)`` by case name: each case's reports of every round, and the time they took.

    The progress ``bar`` advances by each case's estimated seconds (one per case without ``estimates``).
    """
    reports: dict[str, list[dict]] = {case.name: [] for case in cases}
    elapsed = {case.name: 0.0 for case in cases}
    for number in range(rounds):
        for case in _round_order(cases, number):
            done = reports[case.name]
            if not (done and "error" in done[-1]):  # a case that failed is not run again
                bar.set_postfix_str(f"round {number + 1}/{rounds}: {case.name}", refresh=False)
                started = time.monotonic()
                done.append(_run_round(case, host, size_bytes, reps, pages))
                elapsed[case.name] += time.monotonic() - started
            bar.update(estimates[case.name] if estimates else 1)
    return reports, elapsed


def _finish_case(case: PlannedCase, reports: list, elapsed_seconds: float, out_dir: Path) -> dict:
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


# the bar counts estimated seconds: its percentage and remaining time mean something, its counts do not
_BAR_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {elapsed}<{remaining}{postfix}"


def run_suite(out_dir, size_bytes=None, reps: int = 3, host: Host | None = None, stream=None,
              rounds: int = 5, pages: str = "auto", probe: Probe | None = None, announce=None) -> dict:
    """Run every case of :func:`suite_plan`; write one JSON per case and ``suite.json``; return the index.

    Every case (and the probe) uses arrays of ``size_bytes``, by default
    :func:`~simnuma.bench.plan.suite_array_size`: the benchmark's default,
    limited by the nodes' memory and a cap; when a limit applies,
    ``announce`` (a callable taking one line) is told so and why first.  Then
    a probe (:func:`~simnuma.bench.estimate.probe_host`, unless ``probe`` is
    given) measures one idle thread of each op: the paced loaded-latency
    cases are planned against its bandwidths, and the suite's duration is
    estimated from its times and passed to ``announce`` before any case
    runs.  The cases are measured in ``rounds``
    passes of ``reps`` repetitions each (alternately forwards and backwards), so
    that every case samples the same stretch of time; each case's report merges
    its rounds (:func:`merge_reports`).  ``pages`` is the benchmark's ``--pages``.
    A case that fails is not run again.  Raises BenchError after writing the
    index when any case failed.
    """
    out_dir = Path(out_dir)
    host = host or discover_host()
    reps = parse_reps(reps)
    rounds = parse_rounds(rounds)
    pages = parse_pages(pages)
    home = _home_node(host)
    _check_home_allowed(host, home)      # first: the plan that sizes the arrays plans from the home node
    note = home_note(host, home)         # why not the node it would take were every memory node allowed
    for line in (note, quota_note(host)):
        if line and announce is not None:
            announce(f"bench suite: {line}")
    size, size_rule = _array_size(host, size_bytes, announce)
    started = time.monotonic()
    date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    load_before = load_average()
    probe = probe or probe_host(host, home.id, size, pages)
    plan = suite_plan(host, probe.stream_GBps, probe.size_bytes)
    estimates = suite_seconds(plan.cases, probe, reps)
    if announce is not None:
        announce(estimate_text(estimates, rounds, reps, probe))
    bar = progress(total=rounds * sum(estimates.values()), desc="bench suite", stream=stream, bar_format=_BAR_FORMAT)
    measuring = time.monotonic()
    try:
        reports, elapsed = _measure_in_rounds(plan.cases, host, size, reps, rounds, bar, pages, estimates)
    finally:
        bar.close()
    measured_seconds = time.monotonic() - measuring
    entries = {case.name: _finish_case(case, reports[case.name], elapsed[case.name], out_dir) for case in plan.cases}
    index = _index(host, plan.cases, plan.skipped, entries, size, reps, time.monotonic() - started)
    index["size_rule"] = size_rule
    index["rounds"] = rounds
    index["date"] = date
    index["pages"] = pages
    index["groups"] = plan.groups
    index["notes"] = plan.notes
    index["estimate"] = {
        "seconds": rounds * sum(estimates.values()),
        "measured_seconds": measured_seconds,
        "method": estimate_text(estimates, rounds, reps, probe),
        "per_case_seconds": estimates,
        "probe": probe.to_dict(),
    }
    index["load_average"] = {"before": load_before, "after": load_average()}
    write_json(out_dir / "suite.json", index)
    failed = [name for name, entry in entries.items() if "error" in entry]
    if failed:
        first = entries[failed[0]]["error"]
        raise BenchError(f"{len(failed)} of {len(plan.cases)} suite cases failed (first: {failed[0]!r}: {first});"
                         f" see {out_dir / 'suite.json'}")
    return index


def parse_rounds(text) -> int:
    return parse_count(text, "--rounds", 10_000)


def _array_size(host: Host, size_bytes, announce) -> tuple:
    """``(bytes per array, how it was chosen)``: ``--size`` as given, else the suite's rule (a limit announced)."""
    if size_bytes is not None:
        return parse_size(size_bytes), "--size"
    chosen = suite_array_size(host)
    if chosen.limited and announce is not None:
        announce(chosen.note())
    return chosen.size_bytes, chosen.rule


def _index(host: Host, cases, skipped, entries, size, reps, elapsed_seconds) -> dict:
    observations = [o for o in (observe_scaling(entries, host, "r"), observe_scaling(entries, host, "w")) if o]
    return {
        "format": INDEX_FORMAT,
        "host": host.to_dict(),
        "size_bytes": size,
        "size": format_bytes(size),
        "reps": reps,
        "elapsed_seconds": elapsed_seconds,
        "cases": [{"name": c.name, "kind": c.kind, "threads": list(c.threads), "background": list(c.background),
                   "purpose": c.purpose, **entries[c.name]} for c in cases],
        "skipped": skipped,
        "observations": observations,
    }
