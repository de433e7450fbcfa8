"""The speed of ``simnuma matrix`` on the bundled four-socket boards (issue 18; not part of the test run).

Each board's matrices (idle latency, bandwidth, loaded latency) from a cold cache, between two samples of
SimPy's bare event rate; the seconds are scaled to the reference machine (``run.REFERENCE_BARE_EVENTS_PER_S``).
Requirement: under a minute each on two cores.

Run: ``.venv/bin/python benchmarks/formats.py [--repeat N] [--jobs N]``.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from run import REFERENCE_BARE_EVENTS_PER_S, bare_event_rate  # noqa: E402

from simnuma import load_topology  # noqa: E402
from simnuma.formats.matrix import compute_matrices, count_jobs  # noqa: E402

REQUIRED_S = 60.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per board (default 3); the median decides")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    args = ap.parse_args(argv)
    ok = True
    for name in ("quartet", "x6440"):
        board = load_topology(name)
        scaled = []
        for k in range(args.repeat):
            with tempfile.TemporaryDirectory() as cache:
                before = bare_event_rate()
                start = time.perf_counter()
                compute_matrices(board, args.jobs, cache)
                wall = time.perf_counter() - start
                rate = (before + bare_event_rate()) / 2
            scaled.append(wall * rate / REFERENCE_BARE_EVENTS_PER_S)
            print(f"{name} {k + 1}: {wall:.1f} s at a bare rate of {rate:,.0f}/s, {scaled[-1]:.1f} s on the reference"
                  f" machine (at most {count_jobs(board)} simulations)", flush=True)
        median = statistics.median(scaled)
        passed = median <= REQUIRED_S
        ok &= passed
        print(f"{name}: min / median / max {min(scaled):.1f} / {median:.1f} / {max(scaled):.1f} s on the reference"
              f" machine (need <= {REQUIRED_S:g} s)  {'PASS' if passed else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
