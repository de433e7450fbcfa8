"""Merging the reports of one case measured in several rounds into one report.

A shared machine's memory bandwidth drifts on a scale of minutes.  When a
suite measures every repetition of one case before moving to the next, the
single-thread and multi-thread cases see different machines, and comparing
them measures the drift.  :func:`run_suite` therefore measures in rounds: each
round runs every case with a few repetitions, and the rounds' reports of a case
are merged here, repetition by repetition, into one report of the same format
(``simnuma-bench/2``) as if the native benchmark had run them all.

Every summary is recomputed from the per-repetition arrays with the native
benchmark's rules: a foreground thread's best GB/s is its median bytes over its
fastest repetition, a background thread's is its fastest repetition's rate, a
median of an even count is the mean of the middle two.  Warnings that depend on
the repetitions (spread, CPU share) are recomputed over all of them; the others
are kept once each.
"""
from __future__ import annotations

from statistics import median

from ..errors import BenchError
from ..units import LINE_BYTES  # noqa: F401 - the one definition

__all__ = ["merge_reports", "SPREAD_WARNING", "CPU_SHARE_WARNING", "LINE_BYTES"]

SPREAD_WARNING = 0.05       # as the native benchmark's SPREAD_WARNING
CPU_SHARE_WARNING = 0.90    # as the native benchmark's CPU_SHARE_WARNING
_PER_REPETITION_WARNINGS = ("repetitions spread", "of the time on its CPU")


def _thread_key(thread: dict) -> tuple:
    return (thread["spec"], thread["role"])


def _check_same_case(reports: list) -> None:
    first = reports[0]
    keys = [_thread_key(t) for t in first["threads"]]
    for number, report in enumerate(reports[1:], start=2):
        got = [_thread_key(t) for t in report["threads"]]
        if got != keys:
            raise BenchError(f"round {number}: threads {got}, expected {keys} as in round 1")
        if report["size_bytes"] != first["size_bytes"]:
            raise BenchError(f"round {number}: arrays of {report['size_bytes']} bytes,"
                             f" expected {first['size_bytes']} as in round 1")


def _rates_GBps(seconds: list, moved: list) -> list:
    return [b / s / 1e9 if s > 0 else 0.0 for b, s in zip(moved, seconds)]


def _merge_thread(parts: list) -> dict:
    merged = dict(parts[0])
    seconds = [s for p in parts for s in p["seconds"]["all"]]
    moved = [b for p in parts for b in p["bytes_all"]]
    shares = [c for p in parts for c in p["cpu_share"]["all"]]
    rates = _rates_GBps(seconds, moved)
    bytes_median = median(moved)
    if merged["role"] == "background":
        best, typical = max(rates), median(rates)
    else:
        best = bytes_median / min(seconds) / 1e9 if min(seconds) > 0 else 0.0
        typical = bytes_median / median(seconds) / 1e9 if median(seconds) > 0 else 0.0
    merged["bytes"] = bytes_median
    merged["bytes_all"] = moved
    merged["accesses"] = bytes_median / LINE_BYTES
    merged["seconds"] = {"min": min(seconds), "median": median(seconds), "max": max(seconds), "all": seconds}
    merged["GBps"] = {"best": best, "median": typical, "all": rates}
    merged["ns_per_access"] = {"best": LINE_BYTES / best if best > 0 else None,
                               "median": LINE_BYTES / typical if typical > 0 else None}
    merged["cpu_share"] = {"min": min(shares), "median": median(shares), "all": shares}
    merged["spread"] = (max(seconds) - min(seconds)) / min(seconds) if min(seconds) > 0 else 0.0
    merged["placement"] = min((p["placement"] for p in parts), key=_placement_rank)
    if "pages" in merged:
        merged["pages"] = min((p["pages"] for p in parts), key=_pages_rank)
    return merged


def _placement_rank(placement: dict) -> float:
    """The least well placed round represents the case (unverified counts as worst)."""
    fraction = placement.get("fraction")
    return -1.0 if fraction is None else fraction


def _pages_rank(pages: dict) -> float:
    """The round furthest from the pages requested represents the case (not measured counts as furthest)."""
    fraction = pages.get("huge_fraction")
    if fraction is None:
        return -1.0
    return fraction if pages.get("requested") == "huge" else 1.0 - fraction


def _repetition_warnings(threads: list) -> list:
    warnings = []
    for t in threads:
        if t["role"] == "background":
            continue
        if t["spread"] > SPREAD_WARNING:
            warnings.append(f"'{t['spec']}': repetitions spread {100 * t['spread']:.1f}% (more than"
                            f" {100 * SPREAD_WARNING:.0f}%): the machine may not be quiet")
        if t["rate_GBps"] is None and t["cpu_share"]["median"] < CPU_SHARE_WARNING:
            warnings.append(f"'{t['spec']}': the thread ran only {100 * t['cpu_share']['median']:.0f}% of the time"
                            " on its CPU (median): other work competed for it")
    return warnings


def merge_reports(reports: list) -> dict:
    """One report holding every repetition of ``reports`` (one per round, same case), in their format.

    The merged report keeps the first round's header, counts all repetitions
    in ``reps``, and lists the rounds (``date``, ``reps``, ``command``) under
    ``rounds``.  Raises BenchError if the reports are not of the same case.
    """
    if not reports:
        raise BenchError("no reports to merge")
    _check_same_case(reports)
    merged = dict(reports[0])
    threads = [_merge_thread([r["threads"][i] for r in reports]) for i in range(len(reports[0]["threads"]))]
    wall = [w for r in reports for w in r["wall_seconds"]["all"]]
    merged["threads"] = threads
    merged["reps"] = len(wall)
    merged["wall_seconds"] = {"min": min(wall), "median": median(wall), "all": wall}
    merged["rounds"] = [{"date": r.get("date"), "reps": r["reps"], "command": r.get("command")} for r in reports]
    kept = []
    for r in reports:
        for w in r["warnings"]:
            if w not in kept and not any(marker in w for marker in _PER_REPETITION_WARNINGS):
                kept.append(w)
    merged["warnings"] = kept + _repetition_warnings(threads)
    return merged
