"""The speed of ``simnuma sweep`` (issue 16; not part of the test run).

The sweep: every connected wiring of four sockets with three coherent ports (up to renaming the
sockets: six boards, from a path to the fully connected square), with the Quartet's sockets, each
with every single-thread placement of a reader and a writer, every crossfire pair, and one
full-subscription case, at 64 MiB per thread in steady mode.  Requirements, on the reference
machine's bare SimPy rate (``run.REFERENCE_BARE_EVENTS_PER_S``): from a cold cache in under
2 minutes, from a warm one (the same sweep again) in under 2 seconds.  Each run is bracketed by
bare-rate samples; its seconds are scaled to the reference machine, and the points per second are
printed next to the bare rate.

Run: ``.venv/bin/python benchmarks/sweeps.py [--repeat N] [--jobs N]``.
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

from simnuma.runner import default_workers  # noqa: E402
from simnuma.sweeps import parse_sweep, run_sweep  # noqa: E402

SWEEP = """
name: bench-four-socket-wirings
boards:
  - wirings: {sockets: 4, ports: 3, io: 0, spare_ports: true}
    from: quartet
cases:
  - {set: single, ops: [r, w]}
  - {set: crossfire, op: w}
  - 0.0.w.0 + full@very-high
"""
REQUIRED_COLD_S = 120.0
REQUIRED_WARM_S = 2.0


def timed(sweep, jobs: int, cache: Path) -> tuple:
    before = bare_event_rate()
    start = time.perf_counter()
    run = run_sweep(sweep, jobs, cache)
    wall = time.perf_counter() - start
    after = bare_event_rate()
    return wall, (before + after) / 2, run


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="cold and warm runs each (default 3); the median decides")
    ap.add_argument("--jobs", type=int, default=default_workers(), help="worker processes (default: CPUs)")
    args = ap.parse_args(argv)
    sweep = parse_sweep(SWEEP, "<benchmark>")
    cold, warm = [], []
    for k in range(args.repeat):
        with tempfile.TemporaryDirectory() as folder:
            cache = Path(folder)
            wall, rate, run = timed(sweep, args.jobs, cache)
            scaled = wall * rate / REFERENCE_BARE_EVENTS_PER_S
            cold.append(scaled)
            print(f"cold {k + 1}: {run.info['configurations']} boards, {run.info['points']} points"
                  f" ({run.info['simulations']} simulations) in {wall:.1f} s at a bare rate of {rate:,.0f}/s:"
                  f" {run.info['simulations'] / wall:.1f} simulations/s, {scaled:.1f} s on the reference machine",
                  flush=True)
            wall, rate, run = timed(sweep, args.jobs, cache)
            scaled = wall * rate / REFERENCE_BARE_EVENTS_PER_S
            warm.append(scaled)
            print(f"warm {k + 1}: {run.info['cached']} of {run.info['simulations']} from the cache in {wall:.2f} s"
                  f" ({run.info['points'] / wall:,.0f} points/s), {scaled:.2f} s on the reference machine", flush=True)
    verdicts = []
    for name, values, limit in (("cold", cold, REQUIRED_COLD_S), ("warm", warm, REQUIRED_WARM_S)):
        median = statistics.median(values)
        ok = median <= limit
        verdicts.append(ok)
        print(f"{name}: min / median / max {min(values):.2f} / {median:.2f} / {max(values):.2f} s on the reference"
              f" machine (need <= {limit:g} s)  {'PASS' if ok else 'FAIL'}")
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
