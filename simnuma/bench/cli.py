"""``simnuma bench``: build and run the native stride benchmark, describe this host.

- ``bench build [--print-cmd]``: compile the benchmark into the cache (or show how to build it by hand);
- ``bench run FOREGROUND [+ BACKGROUND] [--bg SPEC...] [--size] [--reps] [-o FILE.json]``: run one case;
- ``bench host [-o FILE.yaml] [--suite DIR]``: a board description of this machine for ``simnuma topo``,
  with the memory's bandwidth-latency curves when given a suite;
- ``bench suite [-o DIR]``: the standard cases for this host, one JSON each plus ``suite.json``.
"""
from __future__ import annotations

import json
import shlex
import sys

from ..case import parse_case
from ..errors import BenchError, SimnumaError, SpecError
from ..fileio import OutputFolder, check_output_file, write_atomic, write_json
from ..units import parse_bandwidth_GBps
from ..workload import parse_spec
from .build import build_binary, manual_build_command, planned_build
from .curves import curves_from_reports, read_suite, remote_read_peaks
from .estimate import format_duration
from .host import Host, discover_host
from .run import PAGES, run_bench, summary_lines
from .skeleton import host_topology_yaml
from .suite import run_suite

__all__ = ["register"]


def register(sub) -> None:
    bench = sub.add_parser("bench", help="build and run the native stride benchmark; describe this host")
    bsub = bench.add_subparsers(dest="bench_command", metavar="ACTION")
    bsub.required = True

    build = bsub.add_parser("build", help="compile the benchmark into the per-user cache and print its path")
    build.add_argument("--print-cmd", action="store_true",
                       help="print the compile command and the command to build it by hand, without building")
    build.add_argument("--force", action="store_true", help="rebuild even if a cached build exists")
    build.set_defaults(func=cmd_build)

    run = bsub.add_parser("run", help="run a case FOREGROUND [+ BACKGROUND] of threads N.C.op.M[@RATE], report JSON")
    run.add_argument("specs", nargs="+", metavar="CASE",
                     help="the case, e.g. 0.0.r.0 0.1.w.0 or 0.0.w.0 + 0.1.r.0@0.5GB/s")
    run.add_argument("--bg", nargs="+", action="extend", default=[], metavar="SPEC",
                     help="background threads: they run until the foreground threads end")
    _size_and_reps(run)
    run.add_argument("--allow-misplaced", action="store_true",
                     help="run even if under 99%% of an array's pages are on the intended node")
    _pages(run)
    run.add_argument("-o", "--output", metavar="FILE.json", help="write the JSON here (default: stdout)")
    run.set_defaults(func=cmd_run)

    host = bsub.add_parser("host", help="write a board description (topology YAML) of this machine")
    host.add_argument("-o", "--output", metavar="FILE.yaml", help="write here (default: stdout)")
    host.add_argument("--name", help="the board's name (default: host-<hostname>, or host-<folder> for --sysfs)")
    host.add_argument("--sysfs", default="/sys", metavar="ROOT",
                      help="read the machine from ROOT (default /sys); for a copy of another machine's sysfs, its"
                           " CPU model from ROOT/cpuinfo (a copy of its /proc/cpuinfo) where there is one")
    host.add_argument("--memory-bandwidth", metavar="BW",
                      help="peak DRAM bandwidth per node from the machine's specification, e.g. '307.2 GB/s'"
                           " (channels x transfer rate x 8 B); single-thread cases cannot determine it")
    host.add_argument("--memory-source", metavar="TEXT",
                      help="where --memory-bandwidth comes from, kept in the file's comment")
    host.add_argument("--suite", metavar="DIR",
                      help="a suite of this machine (simnuma bench suite -o DIR): describe the memory by the"
                           " bandwidth-latency curves of its loaded-latency cases (memory.model: curve)")
    host.set_defaults(func=cmd_host)

    suite = bsub.add_parser("suite", help="run the standard cases for this host")
    suite.add_argument("-o", "--output", default="bench-suite", metavar="DIR",
                       help="folder for one JSON per case and suite.json (default: bench-suite)")
    _size_and_reps(suite, "timed repetitions of each case per round (default 3)", default_reps="3",
                   size_help="bytes per array of every case, e.g. 64MiB (default: 4 x the last-level cache, at"
                             " least 64 MiB, limited so that the largest case on a node takes at most half its"
                             " memory and no array exceeds 1 GiB; see docs/bench.md)")
    suite.add_argument("--rounds", default="5", metavar="N",
                       help="passes over all cases, alternately forwards and backwards; each case's report merges"
                            " its N x reps repetitions, so that all cases sample the same stretch of a drifting"
                            " machine (default 5)")
    _pages(suite)
    suite.set_defaults(func=cmd_suite)


def _size_and_reps(parser, reps_help: str = "timed repetitions (default 5)", default_reps: str = "5",
                   size_help: str = "bytes per array, e.g. 64MiB (default: 4 x the last-level cache, at least"
                                    " 64 MiB)") -> None:
    parser.add_argument("--size", metavar="BYTES", help=size_help)
    parser.add_argument("--reps", default=default_reps, metavar="N", help=reps_help)


def _pages(parser) -> None:
    parser.add_argument("--pages", default="auto", metavar="|".join(PAGES),
                        help="pages of the arrays: auto (default) puts the latency chase on transparent huge pages"
                             " and the streaming ops on base pages; huge or base puts every array on them")


def cmd_build(args) -> int:
    if args.print_cmd:
        print(shlex.join(planned_build().command))
        print(f"# by hand, on a machine without Python: {manual_build_command()}")
        return 0
    built = build_binary(force=args.force)
    state = "cached" if built.cached else "built"
    print(built.path)   # alone on stdout: stride=$(simnuma bench build)
    print(f"{state}: {shlex.join(built.command)}", file=sys.stderr)
    return 0


def _print_warnings(report: dict) -> None:
    for warning in report.get("warnings", []):
        print(f"warning: {warning}", file=sys.stderr)


def cmd_run(args) -> int:
    if args.output is not None:
        check_output_file(args.output, "-o")      # before the benchmark runs
    case = parse_case(args.specs, args.bg)
    if case.subscription:
        raise SpecError(f"{case.name!r}: a named background set ({case.subscription}@{case.load}) is placed on a"
                        " board, not on this host; give the background threads, e.g. + 0.1.r.0@0.5GB/s")
    report = run_bench(case.threads, case.background, size_bytes=args.size, reps=args.reps,
                       allow_misplaced=args.allow_misplaced, pages=args.pages)
    if args.output is not None:
        write_json(args.output, report)
        print("\n".join(summary_lines(report)))
        print(f"wrote {args.output}")
    else:
        print(json.dumps(report, indent=2))
    _print_warnings(report)
    return 0


def cmd_host(args) -> int:
    if args.output is not None:
        check_output_file(args.output, "-o")
    if args.name is not None and (not args.name.strip() or not args.name.isprintable()):
        raise BenchError(f"--name {args.name!r}: expected a board name on one line")
    bandwidth = None
    if args.memory_bandwidth is not None:
        bandwidth = _memory_bandwidth(args.memory_bandwidth)
    elif args.memory_source is not None:
        raise BenchError("--memory-source says where --memory-bandwidth comes from; give --memory-bandwidth too")
    host = discover_host(args.sysfs)
    if host.distance_problem:
        print(f"warning: {host.distance_problem}: the board assumes the nodes wired in a chain (its links comment"
              " says so); give the links yourself (docs/topology.md)", file=sys.stderr)
    suite = read_suite(args.suite) if args.suite else None
    curves, source = (_suite_curves(args.suite, suite, host) if suite is not None else ([], ""))
    if curves and bandwidth is not None:
        raise BenchError("--memory-bandwidth: the memory follows the suite's curves, whose last points are the most"
                         " each mix reaches; drop --memory-bandwidth (or --suite)")
    peaks = _remote_peaks(args.suite, suite) if suite is not None else {}
    text = host_topology_yaml(host, name=args.name, memory_bandwidth_GBps=bandwidth,
                              memory_source=args.memory_source, curves=curves, curves_source=source,
                              remote_peaks=peaks)
    _check_board(text, args.output or "the board")
    if suite is not None:
        text += _firmware_report(args.suite, suite[1], host)
    if args.output is not None:
        write_atomic(args.output, text)
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    return 0


def _remote_peaks(folder, suite: tuple) -> dict:
    """``{(node, memory node): GB/s}`` of the suite's remote peaks (:func:`~simnuma.bench.curves.remote_read_peaks`);
    BenchError for a malformed report."""
    try:
        return remote_read_peaks(suite[1])
    except (KeyError, TypeError, SpecError) as exc:
        raise BenchError(f"--suite {folder}: malformed report in the suite: {exc}") from None


def _check_board(text: str, shown: str) -> None:
    """BenchError unless the board written is one simnuma loads: a measured curve it cannot hold (a latency that
    is not positive, a bandwidth beyond any memory) is refused before anything is written."""
    from ..errors import TopologyError
    from ..topology import parse_topology

    try:
        parse_topology(text, shown)
    except TopologyError as exc:
        first = str(exc).splitlines()[0]
        raise BenchError(f"the board written from this machine would not load: {first}") from None


def _firmware_report(folder, reports, host: Host) -> str:
    """Comment lines for the board (and the same on stderr): where the SLIT and HMAT disagree with the suite's
    ``reports`` (read from ``folder``)."""
    from .firmware import firmware_disagreements, measured_chase_latencies

    latencies = measured_chase_latencies(reports)
    if not latencies or (host.distances is None and not host.hmat):
        return ""
    found = firmware_disagreements(host, latencies)
    head = (f"the firmware's SLIT{' and HMAT' if host.hmat else ''} against the latency chases of {folder}:"
            + ("" if found else " they agree"))
    print("note: " + head + "".join(f"\n  {line}" for line in found), file=sys.stderr)
    return "# " + head + "\n" + "".join(f"#   {line}\n" for line in found)


def _suite_curves(folder, suite: tuple, host: Host) -> tuple:
    """``(curves, source text)`` of the suite in ``folder`` (``suite``: its index and reports, as read_suite gives
    them) of ``host``; BenchError when it is another machine's."""
    index, reports = suite
    measured = index.get("host") if isinstance(index.get("host"), dict) else {}
    theirs = [(n.get("id"), len(n.get("cpus") or [])) for n in measured.get("nodes") or [] if isinstance(n, dict)]
    ours = [(n.id, len(n.cpus)) for n in host.nodes]
    # a copy of a machine's sysfs without its cpuinfo names no CPU model: its nodes and CPUs must match alone
    model_differs = host.cpu_model != "unknown" and measured.get("cpu_model") != host.cpu_model
    if theirs != ours or model_differs:
        raise BenchError(f"--suite {folder}: measured on {measured.get('cpu_model')!r} with nodes and CPUs {theirs},"
                         f" but this host is {host.cpu_model!r} with {ours}: the suite of another machine")
    try:
        curves = curves_from_reports(reports)
    except (KeyError, TypeError, StopIteration, SpecError) as exc:
        raise BenchError(f"--suite {folder}: malformed report in the suite: {exc}") from None
    if not curves:
        print(f"note: --suite {folder} has no loaded-latency cases (a latency chase beside streams, and the chase"
              " alone): the memory keeps its placeholders", file=sys.stderr)
        return [], ""
    shared = [case for curve in curves for case in curve.untrusted]
    if shared:
        print(f"warning: {len(shared)} point(s) of the curves were measured only while the chase shared its CPU with"
              f" other work (first: {shared[0]!r}): rerun the suite on a quiet machine", file=sys.stderr)
    date = index.get("date") or next((r.get("date") for _, r in reports if r.get("date")), "an unknown date")
    return curves, f"measured by simnuma bench suite on {host.cpu_model}, {str(date)[:10]} ({folder})"


def cmd_suite(args) -> int:
    out = OutputFolder(args.output, command="bench suite")    # checked now; written when every case has run
    failed = None
    with out as staging:
        try:
            index = run_suite(staging, size_bytes=args.size, reps=args.reps, rounds=args.rounds, pages=args.pages,
                              announce=lambda line: print(line, flush=True))
        except BenchError as exc:
            if not (staging / "suite.json").exists():
                raise
            failed = BenchError(str(exc).replace(str(staging), str(out.path)))   # the cases that ran are kept
    if failed is not None:
        raise failed
    if out.removed_note():
        print(out.removed_note(), file=sys.stderr)
    estimate = index["estimate"]
    print(f"{len(index['cases'])} cases in {index['elapsed_seconds']:.1f} s"
          f" ({len(index['skipped'])} skipped; measuring took {format_duration(estimate['measured_seconds'])},"
          f" estimated {format_duration(estimate['seconds'])}); index {args.output}/suite.json")
    for case in index["cases"]:
        total = case.get("foreground_total_GBps")
        chase = [t["ns_per_access_median"] for spec, t in case["threads"].items()
                 if t["role"] == "foreground" and parse_spec(spec).op == "l"]
        figure = f"{chase[0]:8.1f} ns chase " if len(chase) == 1 else f"{total:8.3f} GB/s total"
        print(f"  {case['name']:<48} {figure}  {case['wall_seconds']['min']:.4f} s")
    curves = curves_from_reports(read_suite(args.output)[1])
    for curve in curves:
        points = ", ".join(f"{p.bandwidth_GBps:.1f} GB/s {p.latency_ns:.0f} ns{'' if p.trusted else ' *'}"
                           for p in curve.points)
        print(f"curve {curve.mix} (read fraction {curve.read_fraction}): {points}")
    if any(curve.untrusted for curve in curves):
        print("  * the chase shared its CPU with other work in every repetition of this point")
    for observation in index["observations"]:
        verdict = "holds" if observation["holds"] else "does not hold"
        print(f"{observation['claim']}: {verdict} ({observation['one_thread_GBps']:.3f} GB/s alone,"
              f" {observation['two_threads_total_GBps']:.3f} GB/s for two)")
        for reason in observation.get("why_not", []):
            print(f"  because {reason}")
        if observation["holds"]:
            for caveat in observation.get("caveats", []):
                print(f"  but {caveat}")
    return 0


def _memory_bandwidth(text: str) -> float:
    from ..topology.schema import _plausible

    try:
        value = parse_bandwidth_GBps(text)
    except (SimnumaError, ValueError) as exc:
        raise BenchError(f"--memory-bandwidth: {exc}") from None
    if value <= 0:
        raise BenchError(f"--memory-bandwidth: expected a positive bandwidth such as '307.2 GB/s', got {text!r}")
    try:
        return _plausible("bandwidth", value, text)       # as the board it goes into will check it
    except ValueError as exc:
        raise BenchError(f"--memory-bandwidth: {exc}") from None
