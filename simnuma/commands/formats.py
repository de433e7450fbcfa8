"""The ecosystem's formats: ``simnuma matrix`` (a board's latency and bandwidth matrices as Intel MLC prints a
machine's), ``simnuma export`` (the board as a SLIT, an ACPI table, numactl -H, QEMU options, hwloc XML) and
``simnuma import`` (MLC, STREAM and likwid-bench output as reference datasets for ``simnuma validate``)."""
from __future__ import annotations

import sys

from .reproduce import _jobs


def register(sub) -> None:
    p = sub.add_parser("matrix", help="the board's idle latency and bandwidth matrices and loaded latency, MLC-style",
                       description="Simulate the idle latency matrix (latency chase, thread on node i, memory on node"
                                   " j), the bandwidth matrices (one reader; every core of node i) and loaded-latency"
                                   " curves per memory node, and print them as Intel MLC prints a machine's.")
    _common(p)
    p.add_argument("--json", action="store_true", help="print the matrices as JSON")
    p.add_argument("--csv", metavar="FILE", help="also write the matrices as CSV (long form)")
    p.add_argument("--figure", metavar="FILE.png", help="also write heat maps and the loaded-latency curves")
    p.set_defaults(func=cmd_matrix)
    from ..formats.export import EXPORTS

    e = sub.add_parser("export", help="the board as a SLIT, an ACPI table, numactl -H, QEMU options or hwloc XML",
                       description="Write the board and its simulated matrices in another tool's format: slit (text),"
                                   " acpi (SLIT source for iasl), numactl (numactl --hardware), qemu (-numa options with"
                                   " the HMAT's latency and bandwidth), hwloc (XML for lstopo --input).")
    e.add_argument("format", choices=EXPORTS, metavar="FORMAT", help=f"one of {', '.join(EXPORTS)}")
    _common(e)
    e.add_argument("--memory", default="2GiB", metavar="SIZE",
                   help="memory per node for numactl, qemu and hwloc (default 2GiB, the Quartet's)")
    e.add_argument("-o", "--output", metavar="FILE", help="write to FILE (atomically) instead of printing")
    e.set_defaults(func=cmd_export)
    from ..formats.imports import IMPORTS

    i = sub.add_parser("import", help="MLC, STREAM or likwid-bench output as measurements simnuma validate reads",
                       description="Read another tool's output (Intel MLC, STREAM, likwid-bench) and write it as a"
                                   " reference dataset of the board's machine, each measurement with the case simnuma"
                                   " simulates for it (docs/formats.md gives each tool's conventions).")
    i.add_argument("format", choices=IMPORTS, metavar="FORMAT", help=f"one of {', '.join(IMPORTS)}")
    i.add_argument("file", metavar="OUTPUT.txt", help="the tool's output, as it printed it")
    i.add_argument("--board", required=True, metavar="TOPO",
                   help="the board of the machine it ran on (bundled name or YAML file, e.g. from simnuma bench host)")
    i.add_argument("--case", metavar="SPEC", help="where a one-thread STREAM or likwid-bench run ran, e.g. 0.0.t.0")
    i.add_argument("-o", "--output", required=True, metavar="FILE.yaml", help="the reference dataset to write")
    i.set_defaults(func=cmd_import)


def _common(p) -> None:
    p.add_argument("board", metavar="TOPO", help="bundled board name (e.g. quartet) or YAML file")
    p.add_argument("--jobs", type=_jobs, default=None, metavar="N", help="simulations in parallel (default: CPUs)")
    p.add_argument("--cache", default=None, metavar="DIR", help="keep every simulated result in DIR for next time")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")


def _matrices(args, parts):
    from ..fileio import check_output_folder, progress
    from ..formats.matrix import compute_matrices, count_jobs
    from ..runner import default_workers
    from ..topology import load_topology

    topo = load_topology(args.board)
    if args.cache is not None:
        check_output_folder(args.cache, "--cache")
    bar = progress(total=count_jobs(topo, parts), desc="simulating")
    try:
        m = compute_matrices(topo, args.jobs or default_workers(), args.cache, args.seed,
                             lambda job, cached: bar.update(1), parts)
    finally:
        bar.close()
    return topo, m


def cmd_matrix(args) -> int:
    from ..errors import SpecError
    from ..fileio import check_output_file, write_atomic
    from ..formats.matrix import matrices_csv, matrices_json, mlc_text, write_heatmap

    if args.figure is not None and not args.figure.lower().endswith(".png"):
        raise SpecError(f"--figure {args.figure!r}: the figure is written as a PNG; give a name ending in .png")
    for option, path in (("--csv", args.csv), ("--figure", args.figure)):
        if path is not None:
            check_output_file(path, option, (("the board", args.board),))
    topo, m = _matrices(args, ("latency", "bandwidth", "loaded"))
    if args.csv is not None:
        write_atomic(args.csv, matrices_csv(m))
    if args.figure is not None and not write_heatmap(args.figure, m):
        print("--figure: matplotlib is not installed (pip install 'simnuma[plot]'); no figure written",
              file=sys.stderr)
    print(matrices_json(m) if args.json else mlc_text(m), end="")
    return 0


def cmd_export(args) -> int:
    from ..errors import SpecError
    from ..fileio import check_output_file, write_atomic
    from ..formats.export import export
    from ..units import UnitError, parse_size_bytes

    try:
        memory = parse_size_bytes(args.memory.replace(" ", ""))
    except UnitError as exc:
        raise SpecError(f"--memory: {exc}") from None
    if not 2**20 <= memory <= 2**50:
        raise SpecError(f"--memory: expected 1 MiB to 1 PiB per node, got {args.memory!r}")
    if args.output is not None:
        check_output_file(args.output, "-o", (("the board", args.board),))
    parts = ("latency", "bandwidth") if args.format in ("qemu", "hwloc") else ("latency",)
    topo, m = _matrices(args, parts)
    text = export(args.format, topo, m, memory // 2**20)
    if args.output is not None:
        write_atomic(args.output, text)
        print(f"wrote {args.output} ({args.format} of board {topo.name}, {m.board_hash})")
    else:
        print(text, end="")
    return 0


def cmd_import(args) -> int:
    from pathlib import Path

    from ..errors import SpecError, shown
    from ..fileio import UnreadableInput, check_output_file, read_input, write_atomic
    from .. import tables
    from ..formats.imports import reference_yaml
    from ..topology import load_topology

    check_output_file(args.output, "-o", ((f"the {args.format} output", args.file), ("the board", args.board)))
    topo = load_topology(args.board)
    name = shown(args.file)
    if not args.file:
        raise SpecError(f"{name}: an empty path names no file")
    try:
        text = read_input(Path(args.file))
    except UnreadableInput as exc:
        raise SpecError(f"{name}: cannot read: {exc}") from None
    notes: list = []
    try:
        out = reference_yaml(args.format, text, topo, Path(args.file).name, args.case, notes)
    except SpecError as exc:
        raise SpecError(f"{name}: as {args.format} output: {exc}") from None
    write_atomic(args.output, out)
    for note in notes:
        print(f"note: {name}: {note}", file=sys.stderr)
    count = out.count("metric:")
    print(f"wrote {args.output}: {tables.count(count, 'measurement')} of board {topo.name}; check them with"
          f" simnuma validate {args.board} {args.output}")
    return 0
