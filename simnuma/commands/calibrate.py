"""``simnuma calibrate`` and ``simnuma validate``: fit a board to measurements, then check its predictions."""
from __future__ import annotations

import sys
from pathlib import Path

from ..errors import CalibrationError

__all__ = ["register"]


def register(sub) -> None:
    cal = sub.add_parser(
        "calibrate", help="fit a board's free parameters to measured cases and write the calibrated board",
        description="Fit free parameters of TOPO (bounded least squares on relative residuals, the model in"
                    " steady mode) to the measured cases (default: the single-thread stride cases, the idle"
                    " chase measured on huge pages and the peaks) and write the calibrated board, whose comments"
                    " record what was fitted to what, with 95% intervals, correlations and the parameters the"
                    " measurements do not identify.")
    cal.add_argument("board", metavar="TOPO", help="bundled board name (e.g. quartet) or board YAML file")
    cal.add_argument("sources", nargs="+", metavar="MEASUREMENTS",
                     help="benchmark JSON, suite folder or suite.json, or reference dataset (path or name,"
                          " e.g. quartet-single-thread)")
    cal.add_argument("--fit", nargs="+", metavar="PARAM[=LOW:HIGH]",
                     help="parameters to fit (default: what the cases can identify: memory.latency, xbar.latency,"
                          " the windows core.window.<op> of the ops measured, link.latency when a thread crosses"
                          " a link (one per kind of link on a board with link_kinds: link.latency@KIND),"
                          " probe.lookup on a broadcasting board, memory.queue (and a fifo memory's"
                          " memory.efficiency) with a peak); see docs/calibration.md for all names and bounds")
    cal.add_argument("--cases", nargs="+", metavar="SPEC",
                     help="cases to fit, e.g. 0.0.r.1 '0.0.w.0 0.1.w.0' (default: every single-thread r, w or t"
                          " case, the idle chase l when measured on huge pages, and every peak: all cores of one"
                          " node streaming its memory)")
    cal.add_argument("-o", "--output", required=True, metavar="CALIBRATED.yaml", help="calibrated board to write")
    cal.add_argument("--jobs", type=int, default=2, metavar="N", help="simulations run in parallel (default 2)")
    cal.add_argument("--max-evaluations", type=int, default=None, metavar="N",
                     help="residual evaluations per continuous fit (default 15)")
    cal.add_argument("--seed", type=int, default=1, help="random seed of the simulations (default 1)")
    cal.add_argument("--json", metavar="FILE", help="also write the fit as JSON")
    cal.set_defaults(func=cmd_calibrate)

    val = sub.add_parser(
        "validate", help="predict the measured cases a calibration did not use and report the errors",
        description="Predict every measured case not used to calibrate TOPO and report predicted, measured"
                    " and error per case, the measured value's error bar (the range of its repetitions; n/a"
                    " without them) and whether the prediction lies within it, the mean and worst absolute"
                    " error, and a warning when the calibration had more free parameters than independent"
                    " measurements; with -o, also Markdown, CSV,"
                    " JSON, a parity plot and a bar chart.")
    val.add_argument("board", metavar="TOPO", help="calibrated board YAML (or a bundled board name)")
    val.add_argument("sources", nargs="+", metavar="MEASUREMENTS",
                     help="benchmark JSON, suite folder or suite.json, reference dataset (path or name), or the output of"
             " Intel MLC, STREAM or likwid-bench")
    val.add_argument("-o", "--output", metavar="DIR", help="folder for validation.md, .csv, .json and the plots")
    val.add_argument("--jobs", type=int, default=2, metavar="N", help="simulations run in parallel (default 2)")
    val.add_argument("--seed", type=int, default=1, help="random seed of the simulations (default 1)")
    val.add_argument("--case", metavar="SPEC", dest="tool_case",
                     help="where a one-thread STREAM or likwid-bench run given as MEASUREMENTS ran (default: core 0 of"
                          " the first node on its own memory), e.g. 1.0.t.1")
    val.add_argument("--include-untrusted", action="store_true",
                     help="count in the mean and worst error the measurements the benchmark marked untrusted (*);"
                          " by default they are listed but left out of those figures")
    val.set_defaults(func=cmd_validate)


def _stderr_log(text: str) -> None:
    if sys.stderr.isatty():
        print(f"  {text}", file=sys.stderr)


def _board_text(board: str):
    """``(topology, its YAML text)`` for a bundled name or a path."""
    from ..topology import load_topology
    from ..topology.loading import _bundled_text

    topology = load_topology(board)
    path = Path(board)
    if path.is_file():
        return topology, path.read_text(encoding="utf-8")
    entry = _bundled_text(board)
    return topology, entry[0] if entry else None


def _display_sources(sources) -> list:
    """Measurement sources as the calibrated board's comments name them (a bundled dataset by its path)."""
    from ..measurements import resolve_reference

    shown = []
    for s in sources:
        bundled = None if Path(s).exists() else resolve_reference(str(s))
        shown.append(bundled[1] if bundled else str(s))
    return shown


def _check_jobs(jobs: int) -> int:
    from ..runner import jobs_problem

    problem = jobs_problem(jobs)
    if problem:
        raise CalibrationError(f"--jobs {jobs}: {problem}")
    return jobs


def _check_outputs(output: str, json_path: str | None, board: str, sources) -> None:
    """``-o`` and ``--json``, checked before the fit: files simnuma may write, two of them, and neither a
    measurement file (nor ``--json`` the board, which ``-o`` may replace with its calibrated copy)."""
    from ..fileio import check_output_file

    measurements = tuple(("a measurement file", s) for s in sources)
    check_output_file(output, "-o", measurements)
    if json_path is not None:
        check_output_file(json_path, "--json", measurements + (("the board", board),))
        if Path(json_path).resolve() == Path(output).resolve():
            raise CalibrationError(f"--json {json_path}: the same file as -o {output}; give another")


def _max_evaluations(value: int | None) -> int:
    from ..calibrate.parameters import MAX_FIT_EVALUATIONS, MOST_FIT_EVALUATIONS

    if value is None:
        return MAX_FIT_EVALUATIONS
    if value < 2:
        raise CalibrationError(f"--max-evaluations {value}: expected at least 2")
    if value > MOST_FIT_EVALUATIONS:
        raise CalibrationError(f"--max-evaluations {value}: expected at most {MOST_FIT_EVALUATIONS} (a fit converges"
                               f" in tens; the default is {MAX_FIT_EVALUATIONS})")
    return value


def cmd_calibrate(args) -> int:
    from ..calibrate import calibrate, calibrated_yaml
    from ..fileio import progress, write_atomic, write_json
    from ..measurements import load_measurements

    _check_outputs(args.output, args.json, args.board, args.sources)   # now, before the fit
    jobs = _check_jobs(args.jobs)
    max_evaluations = _max_evaluations(args.max_evaluations)
    topology, text = _board_text(args.board)
    data = load_measurements(args.sources)
    bar = progress(desc="calibrating (simulations)")
    try:
        cal = calibrate(topology, data, fit=args.fit, cases=args.cases, processes=jobs, seed=args.seed,
                        max_evaluations=max_evaluations, progress=bar.update, log=_stderr_log)
    finally:
        bar.close()
    content = calibrated_yaml(cal, text, _display_sources(args.sources),
                              warn=lambda message: print(f"warning: {message}", file=sys.stderr))
    print(cal.render_text())
    if args.json is not None:
        write_json(args.json, cal.to_dict())
    write_atomic(args.output, content)
    print(f"wrote {args.output}")
    return 0


def _set_total(bar, n: int) -> None:
    """Give a progress bar its total once it is known (the simulations a validation needs)."""
    bar.total = n
    bar.refresh()


def cmd_validate(args) -> int:
    from ..fileio import OutputFolder, progress
    from ..measurements import load_measurements
    from ..calibrate.validate import validate, write_outputs

    out = OutputFolder(args.output, "-o", command="validate") if args.output is not None else None  # checked now
    jobs = _check_jobs(args.jobs)
    if args.tool_case is not None:   # checked at once: it is read only where a tool's output is given
        from ..formats.imports import tool_case

        tool_case(args.tool_case)
    topology, text = _board_text(args.board)
    data = load_measurements(args.sources, topology, args.tool_case)
    bar = progress(desc="validating (simulations)")
    try:
        report = validate(topology, data, board_text=text, processes=jobs, seed=args.seed, progress=bar.update,
                          include_untrusted=args.include_untrusted, total=lambda n: _set_total(bar, n))
    finally:
        bar.close()
    print(report.render_text())
    if out is not None:
        with out as staging:
            written, note = write_outputs(report, staging)
        if out.removed_note():
            print(out.removed_note(), file=sys.stderr)
        for path in written:
            print(f"wrote {out.path / path.name}")
        if note:
            print(note)
    return 0
