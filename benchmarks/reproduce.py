"""The CPU cost of ``simnuma reproduce`` in bare SimPy event equivalents (not part of the test run).

``simnuma reproduce`` runs every bundled study.  Its cost is measured as the
CPU seconds of the simulations (this process and its worker processes),
multiplied by SimPy's bare event rate measured in the same run, before and
after: a figure in "bare events" that does not depend on how fast or how busy
the machine is.  The requirement (issue 12, the memory system) is at most
``REQUIRED_RATIO`` times the cost of version 0.1.0 with the FIFO memory, which
was measured with this script on the reference machine:
``REFERENCE_BARE_EVENTS`` (median of three runs: 121, 136 and 144 million;
70-78 CPU seconds at 1.3-1.9 million bare events per second).  Issue 15 (the hot path and the steady-state
budget) asks for at most ``MOST_BARE_EVENTS``, about half what ``simnuma reproduce`` cost when it was filed.

Run: ``.venv/bin/python benchmarks/reproduce.py [--repeat N] [--jobs N] [STUDY ...]``.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from run import bare_event_rate  # noqa: E402

from simnuma.runner import default_workers  # noqa: E402
from simnuma.study import bundled_studies, load_study, run_studies  # noqa: E402

REFERENCE_BARE_EVENTS = 135.6e6  # simnuma 0.1.0 (FIFO memory), all bundled studies, seed 1
REQUIRED_RATIO = 1.25
MOST_BARE_EVENTS = 70e6   # issue 15


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def one_run(names, jobs: int) -> tuple:
    """``(cpu seconds, wall seconds, bare rate before, bare rate after)`` of one reproduce."""
    before = bare_event_rate()
    studies = [load_study(n) for n in names]
    cpu0, wall0 = cpu_seconds(), time.perf_counter()
    run_studies(studies, jobs)
    cpu, wall = cpu_seconds() - cpu0, time.perf_counter() - wall0
    after = bare_event_rate()
    return cpu, wall, before, after


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("studies", nargs="*", metavar="STUDY", help="studies to run (default: every bundled one)")
    ap.add_argument("--repeat", type=int, default=3, help="runs; the median decides (default 3)")
    ap.add_argument("--jobs", type=int, default=default_workers(), help="worker processes (default: CPUs)")
    args = ap.parse_args(argv)
    names = args.studies or bundled_studies()
    costs = []
    for k in range(args.repeat):
        cpu, wall, before, after = one_run(names, args.jobs)
        rate = (before + after) / 2
        costs.append(cpu * rate)
        print(f"run {k + 1}: {wall:.1f} s wall, {cpu:.1f} CPU s, bare rate {before:,.0f} / {after:,.0f} events/s"
              f" -> {cpu * rate / 1e6:.1f} million bare events", flush=True)
    median = statistics.median(costs)
    print(f"min / median / max: {min(costs) / 1e6:.1f} / {median / 1e6:.1f} / {max(costs) / 1e6:.1f} million bare events"
          f" (pid {os.getpid()})")
    if args.studies:
        print("(a subset of the studies: no requirement checked)")
        return 0
    ratio = median / REFERENCE_BARE_EVENTS
    passed = ratio <= REQUIRED_RATIO
    print(f"reproduce: {ratio:.2f} x the FIFO-memory reference of {REFERENCE_BARE_EVENTS / 1e6:.0f} million"
          f" (need <= {REQUIRED_RATIO:.2f})  {'PASS' if passed else 'FAIL'}")
    within = median <= MOST_BARE_EVENTS
    print(f"reproduce: {median / 1e6:.1f} million bare events (need <= {MOST_BARE_EVENTS / 1e6:.0f} million)"
          f"  {'PASS' if within else 'FAIL'}")
    return 0 if passed and within else 1


if __name__ == "__main__":
    sys.exit(main())
