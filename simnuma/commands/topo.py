"""``simnuma topo``: show, check and draw board descriptions."""
from __future__ import annotations

import json
import sys

from ..errors import TopologyError
from ..topology import format_link_bandwidth, load_topology
from ..units import format_time


def register(sub) -> None:
    topo = sub.add_parser("topo", help="show, check or draw a board description")
    tsub = topo.add_subparsers(dest="topo_command", metavar="ACTION")
    tsub.required = True

    show = tsub.add_parser("show", help="print nodes, links, the hop matrix and the route table")
    show.add_argument("board", metavar="NAME|PATH", help="a bundled board name (e.g. quartet) or a YAML file")
    show.add_argument("--json", action="store_true", help="print JSON instead of text")
    show.set_defaults(func=cmd_show)

    check = tsub.add_parser("check", help="validate board files (exit 0 when all are valid, 2 otherwise)")
    check.add_argument("files", nargs="+", metavar="FILE")
    check.set_defaults(func=cmd_check)


def render_text(topo) -> str:
    out = [f"board {topo.name}: {topo.description}".rstrip(": "),
           f"source {topo.source}; coherence {topo.coherence}; routing {topo.routing}", ""]
    out.append("nodes")
    for n in topo.nodes:
        io = sum(1 for x in topo.io if x == n.id)
        out.append(f"  N{n.id}: {n.cores} cores, {n.ports} ports ({io} I/O), memory "
                   f"{n.memory_bandwidth_GBps:g} GB/s x {n.memory_efficiency:g} = "
                   f"{n.memory_sustained_GBps:.3g} GB/s sustained, {format_time(n.memory_latency_ns)}")
    out.append("")
    out.append("links (bandwidth per direction)")
    for link in topo.links:
        out.append(f"  N{link.a} -> N{link.b}: {link.bandwidth_ab_GBps:g} GB/s   "
                   f"N{link.b} -> N{link.a}: {link.bandwidth_ba_GBps:g} GB/s   "
                   f"latency {format_time(link.latency_ns)}")
    ids = topo.node_ids
    width = max(3, max(len(f"N{i}") for i in ids) + 1)
    out.append("")
    out.append("hops (row: from, column: to)")
    out.append(" " * width + "".join(f"{'N' + str(b):>{width}}" for b in ids))
    for a, row in zip(ids, topo.hop_matrix()):
        out.append(f"{'N' + str(a):<{width}}" + "".join(f"{h:>{width}}" for h in row))
    out.append("")
    out.append("routes")
    for (a, b), route in sorted(topo.routes.items()):
        out.append(f"  {a}->{b}: " + " -> ".join(str(x) for x in route))
    return "\n".join(out)


def cmd_show(args) -> int:
    topo = load_topology(args.board)
    if args.json:
        print(json.dumps(topo.summary(), indent=2))
    else:
        print(render_text(topo))
    return 0


def cmd_check(args) -> int:
    failed = False
    for path in args.files:
        try:
            topo = load_topology(path)
        except TopologyError as exc:
            failed = True
            for problem in exc.problems:
                print(problem, file=sys.stderr)
            continue
        print(f"{path}: ok ({topo.name}: {len(topo.nodes)} nodes, {len(topo.links)} links)")
    return 2 if failed else 0


__all__ = ["register", "render_text", "format_link_bandwidth"]
