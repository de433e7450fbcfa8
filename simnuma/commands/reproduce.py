"""``simnuma reproduce``: run the studies and write their tables, figures and one report.

For each study the command writes, into the output folder, ``STUDY.csv`` and
``STUDY.json`` (every case: time in ns and % of 0.0.r.0, per-link utilisation,
per-node memory load, bottleneck; each row and file records the simnuma
version, the board's name and parameter hash, the seed and the mode),
``STUDY.png`` (bars in the style of the note) and ``STUDY-board.png`` (the
board with every link direction coloured by its utilisation in the study's
most telling case), then ``REPORT.md`` with every claim PASS or FAIL and the
numbers behind it.  A failed claim is a finding, not an error: the exit status
is 0 unless the input is bad (2).

The folder is written all or nothing (:class:`simnuma.fileio.OutputFolder`):
the files move in only when every study has been simulated and written, and a
second run into the same folder stops at once instead of mixing its files in.
"""
from __future__ import annotations

import sys

import argparse
from pathlib import Path

from ..study.output import REPORT_NAME, write_outputs
from ..study.report import PLOT_HINT


def register(sub) -> None:
    p = sub.add_parser(
        "reproduce", help="run the studies (the Opteron note, the X6440, what-if boards) and check their claims",
        description="Simulate every case of the given studies (default: all bundled studies; identical cases"
                    " once, in parallel), then write per study a CSV, a JSON, a figure and a board figure, and"
                    " REPORT.md with every claim PASS or FAIL. Exit status 0 even when a claim fails.")
    p.add_argument("studies", nargs="*", metavar="STUDY",
                   help="bundled study names or study YAML files (default: every bundled study)")
    p.add_argument("-o", "--output", default="reproduce", metavar="DIR",
                   help="folder for the tables, figures and REPORT.md (default: ./reproduce)")
    p.add_argument("--jobs", type=_jobs, default=None, metavar="N",
                   help="simulations run in parallel (default: the number of CPUs)")
    p.add_argument("--exact", action="store_true",
                   help="simulate every line instead of extrapolating converged steady states")
    p.add_argument("--seed", type=int, default=1, help="random seed of every simulation (default 1)")
    p.add_argument("--size", default=None, metavar="SIZE",
                   help="array size per foreground thread for every study (default: each study's, 64 MiB)")
    p.add_argument("--cache", default=None, metavar="DIR",
                   help="keep every simulated result in DIR and answer the same simulation from it next time"
                        " (keyed by board, case, size, mode, seed and simnuma version and sources)")
    p.add_argument("--list", action="store_true", help="list the bundled studies and exit")
    p.set_defaults(func=cmd_reproduce)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _jobs(text: str) -> int:
    from ..runner import jobs_problem

    value = _positive_int(text)
    problem = jobs_problem(value)
    if problem:
        raise argparse.ArgumentTypeError(f"{problem}, got {text!r}")
    return value


def cmd_reproduce(args) -> int:
    from ..errors import StudyError
    from ..fileio import OutputFolder, check_output_folder, progress
    from .run import parse_size
    from ..runner import default_workers
    from ..study import bundled_studies, load_study, plan_jobs, run_studies

    if args.list:
        for name in bundled_studies():
            print(f"{name:<24} {load_study(name).title}")
        return 0
    names = args.studies or bundled_studies()
    if not names:
        raise StudyError("no study given and no bundled studies found")
    out = OutputFolder(args.output, "-o", command="reproduce")    # checked now, before any simulation
    if args.cache is not None:
        check_output_folder(args.cache, "--cache")
    studies = [load_study(n) for n in names]
    _check_unique(studies)
    size = parse_size(args.size) if args.size is not None else None
    mode = "exact" if args.exact else "steady"
    workers = args.jobs or default_workers()
    total = len(plan_jobs(studies, mode, args.seed, size))
    with out as staging:                     # all or nothing, one run at a time
        bar = progress(total=total, desc="simulating")
        try:
            results, info = run_studies(studies, workers, mode, args.seed, size, on_done=lambda job: bar.update(1),
                                        cache_dir=args.cache)
        finally:
            bar.close()
        plotted = write_outputs(staging, results, info)
    if out.removed_note():
        print(out.removed_note(), file=sys.stderr)
    _print_summary(results, info, Path(args.output), plotted)
    return 0


def _check_unique(studies) -> None:
    from ..errors import StudyError

    seen: dict[str, str] = {}   # study name -> the file it comes from
    for s in studies:
        if s.name in seen:
            raise StudyError(f"{s.source}: study name {s.name!r} is also the name of {seen[s.name]}; "
                             "output files would collide")
        seen[s.name] = s.source


def _print_summary(results, info, out_dir: Path, plotted: bool) -> None:
    width = max(len(r.study.name) for r in results)
    for r in results:
        print(f"{r.study.name:<{width}}  {len(r.study.cases):>4} cases  {r.passed}/{len(r.outcomes)} claims pass"
              + (f"  ({r.failed} FAIL)" if r.failed else ""))
    cached = f" ({info['cached']} from the cache)" if info.get("cached") else ""
    print(f"{info['simulations']} simulations{cached} on {info['workers']} workers in {info['wall_s']:.0f} s; "
          f"wrote {out_dir / REPORT_NAME} and, per study, CSV, JSON" + (" and figures" if plotted else ""))
    if not plotted:
        print(PLOT_HINT)
