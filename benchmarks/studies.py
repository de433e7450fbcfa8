"""Steady mode against exact mode on the bundled studies (not part of the test run).

Steady mode simulates each phase of a case until every running thread's
throughput has converged, then extrapolates; exact mode simulates every line.
The design asks that they agree within 1% on the bundled studies.  This script
runs the chosen studies in both modes with the same (smaller) arrays and prints,
per case, the steady time, the exact time, their difference and PASS/FAIL,
then a summary per study.  The exit status is 1 when any case disagrees.

Run: ``python benchmarks/studies.py [STUDY ...] [--size 4MiB] [--jobs N] [--tolerance 1]``
(default studies: quartet-hops, quartet-equal-hops, quartet-local-readers and
x6440-stream; exact mode takes minutes).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from simnuma.runner import default_workers  # noqa: E402
from simnuma.study import load_study, run_studies  # noqa: E402
from simnuma.units import parse_size_bytes  # noqa: E402

DEFAULT_STUDIES = ("quartet-hops", "quartet-equal-hops", "quartet-local-readers", "x6440-stream")
DEFAULT_SIZE = "4MiB"
TOLERANCE_PERCENT = 1.0


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("studies", nargs="*", default=list(DEFAULT_STUDIES), metavar="STUDY")
    p.add_argument("--size", default=DEFAULT_SIZE, help=f"array size per foreground thread (default {DEFAULT_SIZE})")
    p.add_argument("--jobs", type=int, default=default_workers(), help="parallel simulations (default: CPUs)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--tolerance", type=float, default=TOLERANCE_PERCENT,
                   help=f"largest allowed |steady - exact| / exact, percent (default {TOLERANCE_PERCENT:g})")
    return p.parse_args(argv)


def run_mode(studies, mode: str, args, size_bytes: int):
    """The StudyResults of ``studies`` in ``mode`` and the seconds it took."""
    start = time.perf_counter()
    results, _ = run_studies(studies, args.jobs, mode, args.seed, size_bytes)
    return results, time.perf_counter() - start


def compare(steady, exact, tolerance: float) -> list:
    """``(study, case, steady ns, exact ns, difference %, passed)`` for every case."""
    rows = []
    for s, e in zip(steady, exact):
        for case in s.study.cases:
            t_steady = s.metrics[case.key].time_ns
            t_exact = e.metrics[case.key].time_ns
            diff = 100.0 * (t_steady - t_exact) / t_exact
            name = case.text if len(s.study.boards) == 1 else f"{case.board}: {case.text}"
            rows.append((s.study.name, name, t_steady, t_exact, diff, abs(diff) <= tolerance))
    return rows


def print_rows(rows, tolerance: float) -> None:
    width = max(len(r[1]) for r in rows)
    print(f"{'study':<24} {'case':<{width}} {'steady ms':>11} {'exact ms':>11} {'diff %':>8}  result")
    for study, case, t_steady, t_exact, diff, passed in rows:
        print(f"{study:<24} {case:<{width}} {t_steady / 1e6:>11.4f} {t_exact / 1e6:>11.4f} {diff:>+8.2f}  "
              f"{'PASS' if passed else 'FAIL'}")
    print()
    for study in dict.fromkeys(r[0] for r in rows):
        mine = [r for r in rows if r[0] == study]
        worst = max(abs(r[4]) for r in mine)
        failed = sum(not r[5] for r in mine)
        print(f"{study:<24} {len(mine):>3} cases  worst |diff| {worst:.2f}%  "
              f"{'PASS' if not failed else f'FAIL ({failed} beyond {tolerance:g}%)'}")


def main(argv=None) -> int:
    args = parse_args(argv)
    size = parse_size_bytes(args.size)
    studies = [load_study(name) for name in args.studies]
    print(f"{len(studies)} studies, {sum(len(s.cases) for s in studies)} cases, arrays {args.size}, "
          f"{args.jobs} workers, tolerance {args.tolerance:g}%")
    steady, steady_s = run_mode(studies, "steady", args, size)
    print(f"steady mode: {steady_s:.1f} s")
    exact, exact_s = run_mode(studies, "exact", args, size)
    print(f"exact mode: {exact_s:.1f} s\n")
    rows = compare(steady, exact, args.tolerance)
    print_rows(rows, args.tolerance)
    return 0 if all(r[5] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
