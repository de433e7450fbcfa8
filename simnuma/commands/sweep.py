"""``simnuma sweep``: many boards, grids and workloads in one run; a tidy table, a ranked summary, figures."""
from __future__ import annotations

import sys
from pathlib import Path

from ..tables import count
from .reproduce import _jobs, _positive_int as _positive


def register(sub) -> None:
    p = sub.add_parser(
        "sweep", help="run a sweep file: boards (or every wiring) x parameter grid x workloads, ranked",
        description="Simulate every configuration of a sweep file (each board at each point of its parameter"
                    " grid) on every case of its workloads, then write a tidy table (points.csv, and Parquet"
                    " with pyarrow), the configurations ranked (configurations.csv, summary.md), sweep.json and"
                    " figures. Finished points are kept in a cache (DIR/cache by default): an interrupted sweep"
                    " resumes, a repeated one simulates nothing. See docs/sweeps.md.")
    p.add_argument("file", metavar="SWEEP.yaml", help="the sweep file")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="folder for the tables and figures")
    p.add_argument("--jobs", type=_jobs, default=None, metavar="N",
                   help="simulations run in parallel on this machine (default: the number of CPUs)")
    p.add_argument("--dask", default=None, metavar="ADDRESS",
                   help="run the simulations on a Dask distributed cluster (its scheduler, e.g. tcp://host:8786)")
    p.add_argument("--prefilter", choices=["analytic"], default=None,
                   help="rank every configuration with the analytic model first (docs/analytic.md) and simulate only"
                        " the --top best and those within its known error of them")
    p.add_argument("--top", type=_positive, default=None, metavar="K",
                   help="how many configurations --prefilter keeps (at least)")
    p.add_argument("--cache", default=None, metavar="DIR",
                   help="folder of finished points (default: DIR/cache inside the output folder)")
    p.set_defaults(func=cmd_sweep)


DASK_TIMEOUT_S = 10   # how long --dask waits for its scheduler to answer


def _dask_client(address: str):
    """A client of the Dask scheduler at ``address``; a mistake or an unreachable scheduler is one line."""
    from ..errors import SimnumaError

    try:
        from distributed import Client
    except ImportError:
        raise SimnumaError("--dask: the distributed package is not installed (pip install 'simnuma[dask]')") from None
    try:
        return Client(address, timeout=DASK_TIMEOUT_S)
    except (OSError, ValueError, TypeError) as exc:
        raise SimnumaError(f"--dask {address!r}: cannot reach a Dask scheduler there: {exc}") from None


def cmd_sweep(args) -> int:
    from ..fileio import OutputFolder, check_output_folder, progress
    from ..runner import default_workers
    from ..sweeps import load_sweep, run_sweep
    from ..sweeps.output import ranked, write_sweep_outputs

    from ..errors import SimnumaError

    if (args.prefilter is None) != (args.top is None):
        raise SimnumaError("--prefilter analytic and --top K go together: give both, or neither")
    sweep = load_sweep(args.file)           # every problem of the file, before anything is written
    client = _dask_client(args.dask) if args.dask is not None else None
    cache = args.cache
    if cache is not None:
        check_output_folder(cache, "--cache")
    out = OutputFolder(args.output, "-o", command="sweep")
    try:
        with out as staging:
            bar = progress(desc="simulating")

            def sized(total: int) -> None:    # the simulations are known once the sweep is planned
                bar.total = total
                bar.refresh()

            try:
                run = run_sweep(sweep, args.jobs or default_workers(), cache or Path(args.output) / "cache",
                                client, on_done=lambda cached: bar.update(1), prefilter_top=args.top, on_start=sized)
            finally:
                bar.close()
            written = write_sweep_outputs(staging, run)
        if out.removed_note():
            print(out.removed_note(), file=sys.stderr)
    finally:
        if client is not None:
            client.close()
    best = ranked(run.configurations, sweep.rank)[:3]
    info = run.info
    print(f"{sweep.name}: {count(info['configurations'], 'configuration')}, {count(info['points'], 'case')},"
          f" {count(info['simulations'], 'simulation')} ({info['cached']} from the cache) in {info['wall_s']:.0f} s"
          + (f"; {count(info['analytic_only'], 'configuration')} solved by the analytic model only"
             if info.get("analytic_only") else ""))
    for note in info.get("notes") or ():
        print(f"note: {note}", file=sys.stderr)
    metric = sweep.rank[0]
    for k, row in enumerate(best, 1):
        value = row.get(metric)
        shown = f"{value:.4g}" if isinstance(value, float) else str(value)
        print(f"  {k}. {row['board']}" + (f" ({row['matches']})" if row.get("matches") else "")
              + "".join(f" {path}={row[path]}" for path, _ in sweep.grid) + f": {metric} {shown}"
              + (" (analytic, not simulated)" if row.get("source") == "analytic" else "")
              + (f"; deadlocked in {count(row['deadlocks'], 'simulation')}" if row.get("deadlocks") else ""))
    stuck = sum(1 for row in run.configurations if row.get("deadlocks"))
    if stuck:
        print(f"{count(stuck, 'configuration')} deadlocked in some simulation, ranked last (summary.md lists them)")
    print(f"wrote {', '.join(written)} in {args.output}")
    return 0
