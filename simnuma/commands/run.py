"""``simnuma run``: simulate stride threads on a board."""
from __future__ import annotations

import json
import os
import sys

from ..errors import SpecError
from ..units import LINE_BYTES, MOST_ARRAY_BYTES, UnitError, parse_size_bytes


def register(sub) -> None:
    p = sub.add_parser("run", help="simulate threads on a board and report times, link and memory loads",
                       description="Simulate a case FOREGROUND [+ BACKGROUND]: threads N.C.op.M[@RATE] (node N,"
                                   " core C, op r/w/t/l, array on node M), and after '+' background threads or a"
                                   " named set such as high@low.")
    p.add_argument("board", metavar="TOPO", help="bundled board name (e.g. quartet) or YAML file")
    p.add_argument("specs", nargs="+", metavar="CASE",
                   help="the case, e.g. 0.0.w.1 1.0.w.0 or 0.0.w.1 1.0.w.0 + high@low (see docs/studies.md)")
    p.add_argument("--bg", nargs="+", default=[], metavar="SPEC",
                   help="more background threads (run until the foreground is done), e.g. 2.0.r.2@0.5GB/s")
    p.add_argument("--size", default="64MiB", help="array size per foreground thread (default 64MiB)")
    p.add_argument("--exact", action="store_true", help="simulate every line instead of steady-state extrapolation")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    add_changes_option(p, "change one board parameter for this run, e.g. --set link_defaults.bandwidth='8 GB/s'"
                          " or --set nodes.3.memory.queue=32 (repeatable; paths as in docs/api.md)")
    p.add_argument("--trace", metavar="FILE.json",
                   help="write a trace of the run in the Chrome/Perfetto trace-event format (ui.perfetto.dev);"
                        " FILE.json.gz writes it compressed, about 16 times smaller (Perfetto opens it)")
    p.add_argument("--trace-window", default="1000", metavar="WINDOW",
                   help="what the trace holds: a number of transactions (default 1000), a span such as 20us,"
                        " or FROM:TO such as 10us:30us")
    p.add_argument("--timeline", metavar="FILE.csv",
                   help="write link utilisation, buffer occupancy and thread bandwidth over simulated time (and,"
                        " with matplotlib, FILE.png and the latency histograms FILE-latency.png)")
    p.add_argument("--interval", default="1us", metavar="TIME",
                   help="sample interval of the counters of --trace, --timeline and --animate (default 1us)")
    p.add_argument("--animate", metavar="FILE.gif", help="write an animation of the board over the run (matplotlib)")
    p.add_argument("--analytic", action="store_true",
                   help="solve the case with the analytic model (approximate MVA, docs/analytic.md) instead of"
                        " simulating it: in a millisecond, without finite buffers or DRAM banks")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("-o", "--output", metavar="FILE", help="also write the JSON result to FILE (atomically)")
    p.set_defaults(func=cmd_run)


def parse_size(text: str) -> int:
    """``--size``: an array of at least one line and at most :data:`~simnuma.units.MOST_ARRAY_BYTES` per thread."""
    try:
        size = parse_size_bytes(text.replace(" ", ""))
    except UnitError as exc:
        raise SpecError(f"--size: {exc}") from None
    if not LINE_BYTES <= size <= MOST_ARRAY_BYTES:
        raise SpecError(f"--size: expected an array of {LINE_BYTES} B to 1024 TiB per thread, got {text!r}")
    return size


def add_changes_option(p, help_text: str) -> None:
    """``--set PATH=VALUE`` (repeatable) on parser ``p``: what :func:`changed_board` reads."""
    p.add_argument("--set", action="append", default=[], metavar="PATH=VALUE", dest="changes", help=help_text)


def changed_board(board: str, items) -> tuple:
    """``(board, changes)``: the board named or given as a file, with the ``--set`` changes ``items`` made."""
    from ..topology import load_topology

    topo = load_topology(board)
    changes = parse_changes(items)
    if changes:
        topo = apply_changes(topo, changes)
    return topo, changes


def parse_changes(items) -> dict:
    """``--set PATH=VALUE`` options as ``with_parameters`` changes (the value read as a board file's: ``32``,
    ``8 GB/s``)."""
    from ..yamlsrc import load_yaml

    changes = {}
    for item in items:
        shown = item if item.isprintable() else repr(item)
        path, sep, text = item.partition("=")
        path = path.strip()
        if not sep or not path or not text.strip():
            raise SpecError(f"--set {shown}: expected PATH=VALUE, e.g. link_defaults.bandwidth=8GB/s")
        source = load_yaml(text)
        value = text.strip() if source.problems else source.data
        if isinstance(value, (dict, list)) or value is None:
            raise SpecError(f"--set {shown}: expected one value after '=', got {text!r}")
        changes[path] = value
    return changes


def apply_changes(topo, changes: dict):
    """The board with ``changes``, made together (one may need another, as ``idle_dynamic`` an ``idle_close``); where
    the board refuses them, one line naming the first ``--set`` option it refuses on its own."""
    from ..errors import TopologyError

    try:
        return topo.with_parameters(changes)
    except TopologyError as exc:
        together = _refusal(exc)
    for path, value in changes.items():
        try:
            topo.with_parameters({path: value})
        except TopologyError as exc:
            message = _refusal(exc).removeprefix(f"{path!r}: ").removeprefix(f"{path}: ")
            item = f"{path}={value}"
            raise SpecError(f"--set {item if item.isprintable() else repr(item)}: {message}") from None
    # each alone is accepted, all together not
    raise SpecError(f"--set {', '.join(changes)}: together: {together}")


def _refusal(exc) -> str:
    """What the board says of a change it refuses, without where (the file) and the API's name."""
    message = str(exc).splitlines()[0]
    message = message.split(": ", 1)[1] if ": " in message else message
    return message.removeprefix("with_parameters: ")


def cmd_run(args) -> int:
    from ..case import parse_case
    from ..fileio import check_output_file, progress
    from ..model import simulate
    from ..model.deadlock import DeadlockError
    from ..report import render_result

    if args.animate is not None and not args.animate.lower().endswith(".gif"):
        raise SpecError(f"--animate {args.animate!r}: an animation is written as a GIF; give a name ending in .gif")
    board = (("the board", args.board),)
    outputs = _outputs(args)
    for option, path in outputs:                         # before the simulation, the figures a timeline draws too
        check_output_file(path, option, board)
    _check_distinct(outputs)
    recorder = _recorder(args)
    topo, changes = changed_board(args.board, args.changes)
    case = parse_case(args.specs, args.bg).placed(topo)
    size = parse_size(args.size)
    if args.analytic:
        return _run_analytic(args, topo, case, size, changes)
    bar = progress(total=1000, desc="simulating")
    state = {"n": 0}

    def tick(fraction):
        n = int(fraction * 1000)
        if n > state["n"]:
            bar.update(n - state["n"])
            state["n"] = n

    try:
        result = simulate(topo, case.threads, case.background, size_bytes=size, mode="exact" if args.exact else "steady",
                          seed=args.seed, progress=tick, observer=recorder)
    except DeadlockError as exc:
        if args.json:       # the diagnosis for a program, the one line (stderr, exit 2) for a person
            json.dump({"error": "deadlock", "message": str(exc), **exc.diagnosis}, sys.stdout, indent=2)
            print()
        raise
    finally:
        bar.close()
    data = traceable(result.to_dict(), topo, changes)
    if recorder is not None:
        _write_recordings(args, recorder, topo, case, data)
    return _emit(args, data, render_result)


def _outputs(args) -> list:
    """``[(option, path)]`` of every file the run writes: ``-o``, the trace, the timeline and the figures it is
    drawn in (``FILE.png``, ``FILE-latency.png``), the animation."""
    from ..trace.files import timeline_figures
    figures = [("--timeline", path) for path in timeline_figures(args.timeline)] if args.timeline else []
    out = [("-o", args.output), ("--trace", args.trace), ("--timeline", args.timeline), *figures, ("--animate", args.animate)]
    return [(option, path) for option, path in out if path is not None]


def _check_distinct(outputs: list) -> None:
    """SpecError where two outputs are one file: the second would silently replace the first."""
    seen: dict = {}
    for option, path in outputs:
        first = seen.setdefault(os.path.realpath(path), (option, path))
        if first != (option, path):
            drawn = " (a timeline draws FILE.png and FILE-latency.png beside it)" if path.endswith(".png") else ""
            raise SpecError(f"{option} {path}: the same file as {first[0]} {first[1]}{drawn}; give each output a"
                            " file of its own")


def traceable(data: dict, topo, changes: dict) -> dict:
    """``data`` with what makes it traceable beside the version and seed: the board's hash and the changes."""
    from ..runner import board_hash

    data["board_hash"] = board_hash(topo)
    if changes:
        data["changes"] = {path: str(value) for path, value in changes.items()}
    return data


def _emit(args, data: dict, render) -> int:
    """Write ``data`` to ``-o`` (atomically) and print it, as JSON or as ``render`` makes it a text."""
    from ..fileio import write_json

    if args.output is not None:
        write_json(args.output, data)
    if args.json:
        json.dump(data, sys.stdout, indent=2)
        print()
    else:
        print(render(data))
    return 0


def _recorder(args):
    """The run's recorder when a trace, a timeline or an animation is asked for (None otherwise)."""
    from ..trace import Recorder, parse_window
    from ..units import UnitError, parse_quantity

    try:    # checked whether or not a recording is asked for: a mistake is not passed over
        interval = parse_quantity(args.interval.strip(), "time")
    except UnitError as exc:
        raise SpecError(f"--interval: {exc}") from None
    if not interval > 0 or interval == float("inf"):
        raise SpecError(f"--interval: expected a positive time such as 1us, got {args.interval!r}")
    try:
        start, end, count = parse_window(args.trace_window)
    except ValueError as exc:
        raise SpecError(f"--trace-window: {exc}") from None
    if args.trace is None and args.timeline is None and args.animate is None:
        return None
    if args.trace is None:
        return Recorder(sample_ns=interval, follow=False)
    return Recorder(start, end, count, sample_ns=interval)


def _write_recordings(args, recorder, topo, case, data) -> None:
    from ..trace.files import write_recordings

    written, notes = write_recordings(recorder, topo, case.name, data, trace=args.trace, window=args.trace_window,
                                      timeline=args.timeline, animate=args.animate)
    print("wrote " + ", ".join(written), file=sys.stderr)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)


def _run_analytic(args, topo, case, size, changes) -> int:
    from ..analytic import case_analysis, render_analysis

    for option, given in (("--exact", args.exact), ("--trace", args.trace), ("--timeline", args.timeline),
                          ("--animate", args.animate)):
        if given:
            raise SpecError(f"{option}: the analytic model solves the case, it does not simulate it; drop {option}"
                            " or --analytic")
    return _emit(args, traceable(case_analysis(topo, case, size).to_dict(), topo, changes), render_analysis)
