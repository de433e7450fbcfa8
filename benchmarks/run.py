"""Speed and memory benchmarks of the simulator (not part of the test run).

Machines are shared and noisy, so every speed figure is measured between two
samples of SimPy's bare event rate (a loop of timeouts) in the same process,
``--repeat`` times (default 3), printed as min / median / max, and the
requirement is checked on the median ratio:

* exact mode: a ratio (simulated cache-line transactions per second) / (bare
  SimPy events per second) of at least 0.022 on ``quartet 0.0.w.1 1.0.w.0``
  (issue 15, the hot path; 27,500 transactions per second at the reference
  machine's bare rate);
* steady mode: any single case of the Quartet study with 64 MiB arrays in at
  most 5 s on the reference machine, i.e. seconds x (bare rate / reference) <= 5;
* exact mode of a two-thread 64 MiB case stays under 500 MB resident memory
  (measured in a child process; ``--memory`` to run it, it takes minutes);
* calibrating the Quartet on its single-thread reference dataset (the default
  fit, two processes) takes at most 2 minutes on the reference machine, i.e.
  seconds x (bare rate / reference) <= 120 (``--calibration``, under a minute);
  the line after it gives the simulations, the CPU time of the process and its
  workers (how many cores the run really had: a machine shared with other
  work stretches the wall time), and the fit's mean residual.

Run: ``.venv/bin/python benchmarks/run.py [--quick] [--repeat N] [--memory] [--calibration]``.
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

import simpy

# SimPy's bare timeout loop on an idle machine of the reference kind (2 cores,
# CPython 3.11.7, SimPy 4.1): events per second, the median of five runs of
# bare_event_rate() with the machine otherwise idle.  Ratios are scaled by it.
REFERENCE_BARE_EVENTS_PER_S = 1_250_000.0
REQUIRED_EXACT_RATIO = 0.022
REQUIRED_STEADY_S = 5.0
REQUIRED_RSS_MB = 500.0
REQUIRED_CALIBRATION_S = 120.0

STEADY_CASES = [
    (["0.0.r.0"], []),
    (["0.0.w.1", "1.0.w.0"], []),
    (["0.0.w.1", "1.0.w.3"], []),
    (["0.0.w.0", "0.1.w.0"], ["1.0.r.1@4GB/s", "2.0.r.2@4GB/s", "3.0.r.3@4GB/s"]),
    (["0.0.w.1", "1.0.w.3"], ["0.1.r.0@4GB/s", "1.1.r.1@4GB/s", "2.0.r.2@4GB/s", "2.1.r.2@4GB/s",
                              "3.0.r.3@4GB/s", "3.1.r.3@4GB/s"]),
    (["0.0.w.1", "1.0.w.0"], ["0.1.r.0@4GB/s", "1.1.r.1@4GB/s", "2.0.r.2@4GB/s", "2.1.r.2@4GB/s",
                              "3.0.r.3@4GB/s", "3.1.r.3@4GB/s"]),
]


def bare_event_rate(n: int = 300_000) -> float:
    env = simpy.Environment()

    def loop(env):
        for _ in range(n):
            yield env.timeout(1)

    env.process(loop(env))
    t0 = time.perf_counter()
    env.run()
    return n / (time.perf_counter() - t0)


def bracketed(measure, repeat: int) -> list:
    """``[(value, bare rate)]``: ``measure()`` run ``repeat`` times, each between two bare-rate samples.

    The bare rate of a measurement is the mean of the samples just before and
    just after it, so a machine that slows down or speeds up during the run
    moves both together.
    """
    out = []
    for _ in range(repeat):
        before = bare_event_rate()
        value = measure()
        after = bare_event_rate()
        out.append((value, (before + after) / 2))
    return out


def spread(values, spec: str = ".4f") -> str:
    """``min / median / max`` of ``values``, each formatted with ``spec``."""
    values = sorted(values)
    return " / ".join(format(v, spec) for v in (values[0], statistics.median(values), values[-1]))


def exact_rate(size_bytes: int) -> tuple:
    from simnuma.model import simulate

    t0 = time.perf_counter()
    r = simulate("quartet", ["0.0.w.1", "1.0.w.0"], size_bytes=size_bytes, mode="exact", baseline=False)
    seconds = time.perf_counter() - t0
    return r.transactions_simulated / seconds, r.transactions_simulated, seconds


def steady_time(specs, bg) -> float:
    from simnuma.model import simulate

    t0 = time.perf_counter()
    simulate("quartet", specs, bg, size_bytes=64 * 2**20, mode="steady", baseline=False)
    return time.perf_counter() - t0


def calibration_time() -> tuple:
    """``(wall seconds, CPU seconds of this process and its workers, the Calibration)``."""
    from simnuma.calibrate import calibrate
    from simnuma.measurements import load_measurements
    from simnuma.topology import load_topology

    t0, cpu0 = time.perf_counter(), _cpu_seconds()
    cal = calibrate(load_topology("quartet"), load_measurements(["quartet-single-thread"]), processes=2)
    return time.perf_counter() - t0, _cpu_seconds() - cpu0, cal


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the calibration's worker pool)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def memory_child() -> None:
    from simnuma.model import simulate

    simulate("quartet", ["0.0.w.1", "1.0.w.0"], size_bytes=64 * 2**20, mode="exact", baseline=False)
    print(json.dumps({"maxrss_kB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller exact run, fewer steady cases")
    ap.add_argument("--memory", action="store_true", help="also run the 64 MiB exact memory check (minutes)")
    ap.add_argument("--calibration", action="store_true",
                    help="also time calibrating the Quartet on its single-thread dataset (about a minute)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each measurement; the median decides (default 3)")
    ap.add_argument("--memory-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.memory_child:
        memory_child()
        return 0
    ok = True
    repeat = args.repeat
    size = 1 * 2**20 if args.quick else 4 * 2**20
    runs = bracketed(lambda: exact_rate(size), repeat)
    ratios = [rate / bare for (rate, _, _), bare in runs]
    need = REQUIRED_EXACT_RATIO
    passed = statistics.median(ratios) >= need
    ok &= passed
    (_, txns, _), _ = runs[0]
    print(f"exact  quartet 0.0.w.1 1.0.w.0 ({txns} transactions, {repeat} run{'s' if repeat != 1 else ''}): txn/s "
          f"{spread((r for (r, _, _), _ in runs), ',.0f')}; bare events/s {spread((b for _, b in runs), ',.0f')}")
    print(f"       ratio to bare min / median / max {spread(ratios)} (need median >= {need:.4f}, i.e. "
          f"{need * REFERENCE_BARE_EVENTS_PER_S:,.0f} txn/s at reference)  {'PASS' if passed else 'FAIL'}")
    scale = statistics.median(b for _, b in runs) / REFERENCE_BARE_EVENTS_PER_S
    cases = STEADY_CASES[:3] if args.quick else STEADY_CASES
    for specs, bg in cases:
        runs = bracketed(lambda: steady_time(specs, bg), repeat)
        normalised = [seconds * bare / REFERENCE_BARE_EVENTS_PER_S for seconds, bare in runs]
        passed = statistics.median(normalised) <= REQUIRED_STEADY_S
        ok &= passed
        label = " ".join(specs) + (f" --bg {len(bg)} threads" if bg else "")
        print(f"steady 64 MiB {label}: {spread((s for s, _ in runs), '.2f')} s; at reference speed "
              f"{spread(normalised, '.2f')} s (need median <= {REQUIRED_STEADY_S:.0f} s)  {'PASS' if passed else 'FAIL'}")
    if args.calibration:
        seconds, cpu, cal = calibration_time()
        normalised = seconds * scale
        passed = normalised <= REQUIRED_CALIBRATION_S
        ok &= passed
        print(f"calibrate quartet quartet-single-thread (default fit, 2 processes): {seconds:.1f} s,"
              f" {normalised:.1f} s at reference speed (need <= {REQUIRED_CALIBRATION_S:.0f} s)"
              f"  {'PASS' if passed else 'FAIL'}")
        print(f"  {cal.simulations} simulations, {cpu:.1f} CPU s ({cpu / max(seconds, 1e-9):.2f} cores busy),"
              f" mean |residual| {cal.mean_abs_residual_percent:.1f}%, {len(cal.fitted)} parameters fitted,"
              f" {len(cal.unidentified)} not identified")
    if args.memory:
        out = subprocess.run([sys.executable, __file__, "--memory-child"], capture_output=True, text=True,
                             check=True)
        rss_MB = json.loads(out.stdout.strip().splitlines()[-1])["maxrss_kB"] / 1024
        passed = rss_MB < REQUIRED_RSS_MB
        ok &= passed
        print(f"exact 64 MiB 0.0.w.1 1.0.w.0: max resident {rss_MB:.0f} MB (need < {REQUIRED_RSS_MB:.0f} MB)"
              f"  {'PASS' if passed else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
