"""``simnuma run``: simulate stride threads on a board."""
from __future__ import annotations

import json
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
    p.add_argument("--set", action="append", default=[], metavar="PATH=VALUE", dest="changes",
                   help="change one board parameter for this run, e.g. --set link_defaults.bandwidth='8 GB/s' or"
                        " --set nodes.3.memory.queue=32 (repeatable; paths as in docs/api.md)")
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


def parse_changes(items) -> dict:
    """``--set PATH=VALUE`` options as ``with_parameters`` changes (the value read as YAML: ``32``, ``8 GB/s``)."""
    import yaml

    changes = {}
    for item in items:
        shown = item if item.isprintable() else repr(item)
        path, sep, text = item.partition("=")
        path = path.strip()
        if not sep or not path or not text.strip():
            raise SpecError(f"--set {shown}: expected PATH=VALUE, e.g. link_defaults.bandwidth=8GB/s")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError:
            value = text.strip()
        if isinstance(value, (dict, list)) or value is None:
            raise SpecError(f"--set {shown}: expected one value after '=', got {text!r}")
        changes[path] = value
    return changes


def apply_changes(topo, changes: dict):
    """The board with ``changes``; a change it refuses is one line naming the ``--set`` option."""
    from ..errors import TopologyError

    for path, value in changes.items():
        try:
            topo.with_parameters({path: value})
        except TopologyError as exc:
            message = str(exc).splitlines()[0]
            message = message.split(": ", 1)[1] if ": " in message else message
            message = message.removeprefix("with_parameters: ").removeprefix(f"{path!r}: ").removeprefix(f"{path}: ")
            item = f"{path}={value}"
            raise SpecError(f"--set {item if item.isprintable() else repr(item)}: {message}") from None
    return topo.with_parameters(changes)


def cmd_run(args) -> int:
    from ..case import parse_case
    from ..fileio import check_output_file, progress, write_json
    from ..model import simulate
    from ..model.deadlock import DeadlockError
    from ..report import render_result
    from ..topology import load_topology

    if args.output is not None:
        check_output_file(args.output, "-o")      # before the simulation
    topo = load_topology(args.board)
    changes = parse_changes(args.changes)
    if changes:
        topo = apply_changes(topo, changes)
    case = parse_case(args.specs, args.bg).placed(topo)
    size = parse_size(args.size)
    bar = progress(total=1000, desc="simulating")
    state = {"n": 0}

    def tick(fraction):
        n = int(fraction * 1000)
        if n > state["n"]:
            bar.update(n - state["n"])
            state["n"] = n

    try:
        result = simulate(topo, case.threads, case.background, size_bytes=size, mode="exact" if args.exact else "steady",
                          seed=args.seed, progress=tick)
    except DeadlockError as exc:
        if args.json:       # the diagnosis for a program, the one line (stderr, exit 2) for a person
            json.dump({"error": "deadlock", "message": str(exc), **exc.diagnosis}, sys.stdout, indent=2)
            print()
        raise
    finally:
        bar.close()
    data = result.to_dict()
    from ..runner import board_hash

    data["board_hash"] = board_hash(topo)
    if changes:
        data["changes"] = {path: str(value) for path, value in changes.items()}
    if args.output is not None:
        write_json(args.output, data)
    if args.json:
        json.dump(data, sys.stdout, indent=2)
        print()
    else:
        print(render_result(data))
    return 0
