"""``simnuma topo``: show, check and draw board descriptions."""
from __future__ import annotations

import json
import sys

from ..errors import TopologyError
from ..topology import format_link_bandwidth, load_topology
from ..tables import count
from ..topology.channels import cycle_warning
from ..units import format_time


def register(sub) -> None:
    topo = sub.add_parser("topo", help="show, check or draw a board description")
    tsub = topo.add_subparsers(dest="topo_command", metavar="ACTION")
    tsub.required = True

    show = tsub.add_parser("show", help="print nodes, links, the hop matrix and the route table")
    show.add_argument("board", metavar="NAME|PATH", help="a bundled board name (e.g. quartet) or a YAML file")
    show.add_argument("--json", action="store_true", help="print JSON instead of text")
    show.set_defaults(func=cmd_show)

    check = tsub.add_parser("check", help="validate boards, reporting every problem (exit 0 when all are valid, 2 otherwise)")
    check.add_argument("files", nargs="+", metavar="NAME|PATH", help="board files or bundled board names")
    check.set_defaults(func=cmd_check)

    draw = tsub.add_parser("draw", help="draw a board to a PNG, SVG or PDF file (needs simnuma[plot])")
    draw.add_argument("board", metavar="NAME|PATH", help="a bundled board name (e.g. quartet) or a YAML file")
    draw.add_argument("-o", "--output", required=True, metavar="FILE", help="picture to write (.png, .svg, .pdf)")
    draw.add_argument("--title", default=None, help="title above the picture (default: name and summary)")
    draw.set_defaults(func=cmd_draw)


def render_text(topo) -> str:
    """The human-readable ``topo show`` report."""
    sections = [_header(topo), _nodes_text(topo), _links_text(topo), _hops_text(topo), _routes_text(topo)]
    return "\n\n".join(sections)


def _header(topo) -> str:
    title = f"board {topo.name}" + (f": {topo.description}" if topo.description else "")
    return (f"{title}\nsource {topo.source}; {count(len(topo.nodes), 'node')}, "
            f"{count(topo.link_count(), 'link')}; "
            f"coherence {topo.coherence}; routing {topo.routing}")


def _nodes_text(topo) -> str:
    out = ["nodes"]
    for n in topo.nodes:
        n_links = sum(link.count for link in topo.links if n.id in (link.a, link.b))
        ports = [name for node, name in topo.io_ports if node == n.id]
        named = [name for name in ports if name]
        io = f"{len(ports)} I/O" + (f" ({', '.join(named)})" if named else "")
        out.append(f"  N{n.id}: {count(n.cores, 'core')}; {count(n.ports, 'port')}, {n_links} coherent + {io};"
                   f" {_memory_text(n)}")
    return "\n".join(out)


def _memory_text(n) -> str:
    """One line on a node's memory, by model (and how long a read holds its queue entry, where not to its data)."""
    held = ", a read's queue entry held to its end (memory.release: done)" if n.memory_release == "done" else ""
    return _memory_model_text(n) + held


def _memory_model_text(n) -> str:
    latency = format_time(n.memory_latency_ns)
    if n.memory_model == "dram":
        d = n.dram
        bursts = f", writes in bursts of {d.write_burst}" if d.write_burst else ""
        return (f"memory dram {d.channels} x {d.width_bits}-bit at {2 * d.clock_GHz * 1000:g} MT/s ="
                f" {n.memory_bandwidth_GBps:.3g} GB/s peak, {d.ranks} ranks x {d.banks} banks, {d.scheduler}{bursts},"
                f" queue {n.memory_queue}, controller latency {latency}")
    if n.memory_model == "curve":
        return (f"memory from {len(n.curves)} loaded-latency curves, up to {n.memory_sustained_GBps:.3g} GB/s,"
                f" idle latency {latency}")
    return (f"memory {n.memory_bandwidth_GBps:g} GB/s x {n.memory_efficiency:g} = "
            f"{n.memory_sustained_GBps:.3g} GB/s sustained, latency {latency}")


def _links_text(topo) -> str:
    out = ["links (bandwidth per direction)"]
    if not topo.links:
        out.append("  none")
    for link in topo.links:
        out.append(f"  N{link.a} -> N{link.b}: {link.bandwidth_ab_GBps:g} GB/s   "
                   f"N{link.b} -> N{link.a}: {link.bandwidth_ba_GBps:g} GB/s   "
                   f"latency {format_time(link.latency_ns)}" + (f"   kind {link.kind}" if link.kind else "")
                   + (f"   {link.count} links in parallel" if link.count > 1 else "")
                   + ("   a buffer held until its packet has been sent (link.release: end)" if link.release == "end"
                      else ""))
    return "\n".join(out)


def _hops_text(topo) -> str:
    ids = topo.node_ids
    width = max(3, max(len(f"N{i}") for i in ids) + 1)
    out = [f"hops (row: from, column: to; diameter {topo.diameter()})",
           " " * width + "".join(f"{'N' + str(b):>{width}}" for b in ids)]
    for a, row in zip(ids, topo.hop_matrix()):
        out.append(f"{'N' + str(a):<{width}}" + "".join(f"{h:>{width}}" for h in row))
    return "\n".join(out)


def _routes_text(topo) -> str:
    out = ["routes"]
    if not topo.routes:
        out.append("  none (one node)")
    split = topo.split_routes()
    for (a, b), route in sorted(topo.routes.items()):
        if (a, b) in split:   # requests, responses and probes take different ways: one line each
            for cls, path in split[(a, b)].items():
                out.append(f"  {a}->{b} {cls + ':':<9} " + " -> ".join(str(x) for x in path))
        else:
            out.append(f"  {a}->{b}: " + " -> ".join(str(x) for x in route))
    return "\n".join(out)


def cmd_show(args) -> int:
    topo = load_topology(args.board)
    if args.json:
        print(json.dumps(topo.summary(), indent=2))
    else:
        print(render_text(topo))
    return 0


def cmd_draw(args) -> int:
    from ..draw import save_drawing
    from ..fileio import check_output_file

    check_output_file(args.output, "-o", (("the board", args.board),))
    topo = load_topology(args.board)
    path = save_drawing(topo, args.output, title=args.title)
    print(f"wrote {path}")
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
        print(f"{path}: ok ({topo.name}: {count(len(topo.nodes), 'node')}, {count(topo.link_count(), 'link')})")
        warning = cycle_warning(topo)
        if warning:
            print(f"{path}: {warning}")
    return 2 if failed else 0


__all__ = ["register", "render_text", "format_link_bandwidth"]
