"""A board description (topology YAML) of the machine this runs on.

``simnuma bench host`` writes it: the nodes, their core counts and the links
come from sysfs (links inferred from the node distance matrix); every timing,
bandwidth and buffer parameter is a placeholder marked ``assumption``, for
``simnuma calibrate`` to fit against ``simnuma bench suite`` measurements.
The distance matrix and per-node memory are kept in comments, because the
board language has no field for them.

Given the bandwidth-latency curves of a suite (:mod:`simnuma.bench.curves`),
the memory is described by them instead of by a peak bandwidth and an
efficiency: ``model: curve``, the idle latency as a placeholder to fit, a
queue of the lines in flight at the read curve's most loaded point (Little's
law) less those the model keeps ahead of it (:func:`curve_queue`), and one
curve per read/write mix.

The links, their kinds and their placeholders are :mod:`simnuma.bench.links`'.
"""
from __future__ import annotations

import math
import re
import socket
from collections import Counter
from pathlib import Path


from .host import Host, format_bytes
from .links import LinkInference, carried_over, distance_kinds, infer_links, link_lines, measured_bandwidth_line
from ..case import parse_case
from ..workload import parse_spec
from ..units import LINE_BYTES

__all__ = ["infer_links", "host_topology_yaml", "LinkInference", "curve_memory_lines", "curve_queue", "lines_ahead",
           "QUEUE_PER_CORE", "SRI_PER_CORE", "sri_buffers"]

# Per-node queue slots per core in the skeleton: a current core keeps a few dozen
# L2 misses in flight, so a node's request queue must not be K8-sized (2/3/3).
QUEUE_PER_CORE = 48
# SRI buffers per core and class, and at least one core's misses in flight (QUEUE_PER_CORE): a request holds
# one only until the memory or a link takes it, so they do not limit a core; when the memory is full, the
# cores' misses wait in the cores and take them in turns (sri.py), as K8's two cores share its 2 request
# buffers.  Room for every core's lines would let a queue of them form in front of the memory, first come
# first served, which a core's next miss would wait behind.
SRI_PER_CORE = 2
FIFO_LOCAL_LATENCY_NS = 90     # the memory latency a board without curves assumes until calibrated
LINK_DEFAULT_LATENCY = "  latency: 40 ns           # assumption: per hop; calibrate on a multi-node host"
LINK_DEFAULT_BANDWIDTH = "  bandwidth: 20 GB/s       # assumption: per direction; calibrate on a multi-node host"
LINK_DEFAULT_LATENCY_UNUSED = ("  latency: 40 ns           # no link takes it: each takes its kind's (link_kinds,"
                               " below), which calibrate fits")
CURVE_LOCAL_LATENCY_NS = 80    # the idle latency a curve memory assumes until calibrated
MIN_CURVE_QUEUE = 16   # a curve memory's queue at least (curves of a machine its cores barely load)


def sri_buffers(cores: int) -> int:
    """The SRI buffers of each class of a node of ``cores`` cores: 2 a core, and room for one core's misses."""
    return max(QUEUE_PER_CORE, SRI_PER_CORE * cores)


def _board_name(host: Host) -> str:
    """``host-<hostname>``; for a copy of another machine's sysfs, named after its folder (``/data/epyc/sys``:
    ``host-epyc``), since this machine's name is not that one's."""
    if host.sysfs_root == "/sys":
        raw = socket.gethostname()
    else:
        root = Path(host.sysfs_root).resolve()
        raw = root.parent.name if root.name == "sys" else root.name
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", raw).strip("-") or "machine"
    return f"host-{name}"


def _header(host: Host) -> list:
    lines = [
        f"# Board description of {'this host' if host.sysfs_root == '/sys' else 'a machine'}, written by"
        f" `simnuma bench host` from {host.sysfs_root}.",
        f"# CPU: {host.cpu_model}; kernel: {host.kernel}; {len(host.nodes)} NUMA node(s), {host.cpu_count} CPUs;",
        f"# last-level cache {format_bytes(host.llc_bytes)}; transparent huge pages: {host.transparent_hugepage}.",
        "# Nodes, cores and links come from the machine.  Every value marked \"assumption\" is a",
        "# placeholder: run `simnuma bench suite` and let `simnuma calibrate` fit it.",
        "#",
        "# nodes (from sysfs): id, CPUs in sysfs order (core C = the C-th), memory",
    ]
    for n in host.nodes:
        cpus = ",".join(str(c) for c in n.cpus) or "none"
        memory = format_bytes(n.memory_total_bytes) if n.memory_total_bytes is not None else "unknown"
        lines.append(f"#   node {n.id}: cpus [{cpus}], memory {memory}")
    lines.append("# node distances (ACPI SLIT from nodeN/distance; 10 = local), rows and columns in node order:")
    if host.distances is None:
        lines.append("#   distances: unknown")
    else:
        lines.append(f"#   distance_nodes: {list(host.node_ids)}")
        for node_id, row in zip(host.node_ids, host.distances):
            lines.append(f"#   distance[{node_id}]: {list(row)}")
    if host.hmat:
        lines.append("# the firmware's HMAT (nodeN/access0/initiators: from the nearest initiators; ns, MB/s):")
        for h in host.hmat:
            lines.append(f"#   hmat[{h.target}]: initiators {list(h.initiators)}, read latency {h.read_latency_ns},"
                         f" write latency {h.write_latency_ns}, read bandwidth {h.read_bandwidth_MBps}, write bandwidth"
                         f" {h.write_bandwidth_MBps}")
    return lines


def _memory_line(bandwidth_GBps: float | None, source: str | None) -> str:
    """The ``bandwidth:`` line of ``memory``: the machine's documented peak, or a marked placeholder.

    No single-thread case comes near a node's memory capacity, so calibration
    cannot determine the peak; it has to come from the machine's specification
    (channels x transfer rate x 8 B), which sysfs does not expose.
    """
    if bandwidth_GBps is None:
        return ("    bandwidth: 25.6 GB/s   # assumption: peak DRAM bandwidth per node, a placeholder that single-thread"
                " cases cannot determine; give the machine's with `simnuma bench host --memory-bandwidth`")
    text = f"{bandwidth_GBps:g} GB/s"
    why = source or "given with `simnuma bench host --memory-bandwidth`"
    return f"    bandwidth: {text:<12} # peak DRAM bandwidth per node: {why}"


def _fifo_memory_lines(bandwidth_GBps: float | None, source: str | None) -> list:
    return [
        _memory_line(bandwidth_GBps, source),
        "    efficiency: 0.70       # assumption: sustained fraction of the peak; calibrate",
        f"    latency: {FIFO_LOCAL_LATENCY_NS} ns         # assumption: DRAM access latency; calibrate (see the l cases of the"
        " suite)",
        "    queue: 32              # assumption: memory controller queue depth",
    ]


def _decimals_apart(values: list) -> int:
    """The fewest decimals (1 to 3) that write ``values`` (ascending) as distinct, positive numbers."""
    for decimals in (1, 2, 3):
        texts = [f"{v:.{decimals}f}" for v in values]
        if len(set(texts)) == len(texts) and all(float(t) > 0 for t in texts):
            return decimals
    return 3


def curve_memory_lines(cores: int, curves: list, source: str) -> list:
    """The ``memory:`` lines of a board whose memory follows measured bandwidth-latency ``curves``.

    ``curves`` are :class:`~simnuma.bench.curves.Curve` objects; ``source``
    says where they come from (host and date), in the comment of ``curves:``.
    Points are written ``[GB/s, ns]`` with units, bandwidths with one decimal
    (more where one decimal would write two points of a curve alike).
    """
    queue, held, ahead = curve_queue(curves, cores)
    ahead_text = (f", less the {ahead} that the SRI's buffers and the other cores' turns hold ahead of the queue"
                  " once it is full" if ahead else "")
    lines = [
        "    model: curve            # memory latency from its load and read share (loaded-latency curves measured by"
        " simnuma bench suite)",
        f"    latency: {CURVE_LOCAL_LATENCY_NS} ns          # assumption: idle DRAM latency, for simnuma calibrate to fit"
        " (fit it on the idle"
        " chase)",
        f"    queue: {queue:<17}# MCT queue: the {held} lines in flight at the read curve's most loaded point"
        f" (Little's law: bandwidth x latency / 64 B){ahead_text}, so that past it the excess waits in the cores, as on"
        " the machine",
        f"    curves:                 # {source}: memory bandwidth, chase latency",
    ]
    for curve in sorted(curves, key=lambda c: -c.read_fraction):
        bandwidths = [p.bandwidth_GBps for p in curve.points]
        decimals = _decimals_apart(bandwidths)
        points = ", ".join(f"[{p.bandwidth_GBps:.{decimals}f} GB/s, {p.latency_ns:.0f} ns]" for p in curve.points)
        shared = len(curve.untrusted)
        caveat = f"; {shared} of them measured while the chase shared its CPU with other work" if shared else ""
        lines.append(f"      - read_fraction: {curve.read_fraction!r:<10}# {_MIX_TEXT.get(curve.mix, curve.mix)}"
                     f" beside the chase {curve.chase}, {len(curve.points) - 1} loaded point(s){caveat}")
        lines.append(f"        points: [{points}]")
        if curve.peak_GBps:
            lines.append(f"        peak: {curve.peak_GBps:.{decimals}f} GB/s{'':<8}# the most this mix drew without the chase"
                         f" ({curve.peak_case}): the curve's trend goes on up to it")
        if curve.peak_latency_ns:
            lines.append(f"        peak_latency: {curve.peak_latency_ns:.0f} ns{'':<4}# at most, by Little's law: its"
                         f" {_streams(curve.peak_case)} streams keeping no more lines in flight each than the"
                         f" {_streams_text(curve.peak_latency_case)} beside the chase did")
    return lines


def curve_queue(curves: list, cores: int = 0) -> tuple[int, int, int]:
    """``(queue, held, ahead)``: the lines in flight at the read curve's most loaded point by Little's law
    (``held``: bandwidth x latency / 64 B), less those a node of ``cores`` keeps ahead of its queue there.

    Of the curve of most reads (the all-read curve where the suite has one):
    the chase is a read, and a controller buffers write-backs apart from the
    reads, so the read curve is the one whose count is all of the kind the
    chase waits behind.  Its point of most bandwidth; where the curve gives
    a peak above it, the latency there along the last segment's trend, no
    higher than the curve's ``peak_latency_ns`` (as the model reads the curve
    up to its peak).  The chase's whole latency is
    taken, its way to the memory included, so ``held`` counts every line in
    flight on that way.  Where the streams of that case would have kept
    more lines in flight than that (each as many as a lone stream did,
    :attr:`~simnuma.bench.curves.Curve.lone_lines`), the model keeps up to
    :func:`lines_ahead` of them ahead of the queue once it is full
    (``ahead``), and the queue holds the rest; but never fewer than the
    memory held at the curve's last measured point, so that the model's
    memory still reaches every bandwidth measured (its entries are held
    for the curve's latency, and a shorter queue would cap it below).  At
    least :data:`MIN_CURVE_QUEUE`.
    """
    from ..model.curve import latency_along

    if not curves:
        return MIN_CURVE_QUEUE, 0, 0
    curve = max(curves, key=lambda c: c.read_fraction)
    pairs = tuple(sorted(curve.pairs))
    bandwidth = max(pairs[-1][0], curve.peak_GBps) if len(pairs) > 1 else pairs[-1][0]
    latency = latency_along(pairs, bandwidth, curve.peak_GBps, curve.peak_latency_ns)
    held = math.ceil(bandwidth * latency / LINE_BYTES)   # GB/s x ns = B
    last = max(curve.points, key=lambda p: p.bandwidth_GBps)
    case = curve.peak_case if curve.peak_GBps > last.bandwidth_GBps else last.case
    wanted = int(_streams(case) * curve.lone_lines) if curve.lone_lines else 0   # what its streams kept alone
    at_last = math.ceil(last.bandwidth_GBps * last.latency_ns / LINE_BYTES)   # held at the last point measured
    ahead = min(lines_ahead(cores), max(0, wanted - held), max(0, held - at_last)) if cores else 0
    return max(MIN_CURVE_QUEUE, held - ahead), held, ahead


def _streams(case: str) -> int:
    """The streams of a suite's case: its threads, or those beside the chase (``CHASE + STREAMS``)."""
    parsed = parse_case(case)
    return len(parsed.background) or len(parsed.threads)


def _streams_text(case: str) -> str:
    """``63 streams`` or ``63 streams paced at 9.1 GB/s`` (one rate for all) of a loaded case's background."""
    background = parse_case(case).background
    rates = {parse_spec(s).rate_GBps for s in background}
    rate = rates.pop() if len(rates) == 1 else None
    return f"{len(background)} streams" + (f" paced at {rate:g} GB/s" if rate is not None else "")


def lines_ahead(cores: int) -> int:
    """The reads a node of ``cores`` holds ahead of its memory's queue once that is full and every core has more
    to send: the SRI's request buffers (:func:`sri_buffers`) and one request of each other core, presented for
    its turn at them (``model/sri.py``).  The machine's measured latency covers their wait, so the queue does not
    hold them too."""
    return sri_buffers(cores) + cores - 1


_MIX_TEXT = {"r": "read streams (r)", "w": "write streams (w: fill + write-back)",
             "t": "triad streams (t: 3 reads + 1 write-back)"}


def _defaults(cores: int, ports: int, memory_lines: list, link_default_lines: tuple) -> list:
    """The ``defaults:`` and ``link_defaults:`` lines; ``link_default_lines`` are link_defaults' bandwidth and
    latency."""
    queue = QUEUE_PER_CORE * cores
    sri = sri_buffers(cores)
    return [
        "defaults:",
        f"  cores: {cores}                  # CPUs (hardware threads) of most nodes; other counts are set per node",
        f"  ports: {ports}                  # inferred links + one I/O port",
        "  core:",
        "    window: {r: 10, w: 10, t: 10}   # assumption: lines in flight per core; calibrate",
        "  memory:",
        *memory_lines,
        "  sri:",
        "    latency: 2 ns          # assumption: core-to-fabric latency; calibrate",
        f"    buffers: {{request: {sri}, posted: {sri}, response: {sri}}}   # assumption: {SRI_PER_CORE} per core (K8: 2/3/3"
        f" for two cores), at least one core's {QUEUE_PER_CORE} misses; past them a core's misses wait in the core"
        " and take these in turns with the other cores'",
        f"    probe_queue: {queue}         # assumption: as the request queue",
        "  mct:",
        f"    buffers: {{response: {queue}, probe: {queue}}}   # assumption: as the request queue",
        "  xbar:",
        "    latency: 5 ns          # assumption: crossbar / mesh traversal; calibrate",
        "  probe:",
        "    lookup: 20 ns          # assumption: cache probe lookup; calibrate",
        "link_defaults:",
        *link_default_lines,
        f"  buffers: {{request: {queue}, posted: {queue}, response: {queue}, probe: {queue}}}   # assumption: as the"
        f" request queue, room for every core's misses in flight, so that the link's bandwidth and latency decide"
        " (a HyperTransport receiver's 15 credits a class would hold a many-core socket's streams to a few GB/s);"
        " give the machine's own where its documents do",
    ]


def _node_lines(host: Host, default_cores: int, hmat_bandwidth: bool = False, curves: bool = False) -> list:
    """The ``nodes:`` lines: a node whose CPU count is not the default's gets its own, and queues for its own
    cores; with ``hmat_bandwidth``, a node whose read bandwidth the firmware's HMAT gives takes it as its memory's
    peak.  A memory-only node (no CPUs) takes its HMAT bandwidth in any case, since the board's memory (the
    ``--memory-bandwidth`` given, or the ``curves`` a suite measured) is the sockets' DRAM, not that device's."""
    lines = ["nodes:"]
    hmat = {h.target: h.read_bandwidth_MBps for h in host.hmat if h.read_bandwidth_MBps}
    for n in host.nodes:
        fields = [f"id: {n.id}"]
        comments = []
        if not n.cpus:
            fields.append("cores: 0")
            comments.append("no CPUs on this host (a memory-only node: CXL memory, HBM in flat mode; or a socket"
                            " whose CPUs are all offline): arrays, no threads" if n.has_memory
                            else "neither CPUs nor memory on this host (a socket whose CPUs are all offline?):"
                                 " nothing runs or is placed here")
            if n.has_memory and n.id in hmat and not hmat_bandwidth:
                bandwidth = f"{hmat[n.id] / 1000:g} GB/s"
                if curves:
                    fields.append(f"memory: {{model: fifo, bandwidth: {bandwidth}, efficiency: 0.70}}")
                    comments.append("its own memory: the firmware's HMAT bandwidth (read, from its nearest"
                                    " initiators), 70% of it sustained (an assumption), not the curves of the"
                                    " sockets' DRAM")
                else:
                    fields.append(f"memory: {{bandwidth: {bandwidth}}}")
                    comments.append("peak memory bandwidth: the firmware's HMAT (read, from its nearest initiators),"
                                    " not the sockets' DRAM")
            elif n.has_memory and curves:
                comments.append("its memory takes the curves measured on the sockets' DRAM: give it its own"
                                " (memory: {model: fifo, bandwidth: ..., efficiency: ...})")
            elif n.has_memory and not hmat_bandwidth:
                comments.append("its memory takes the defaults' peak, the sockets' DRAM: give it its own"
                                " (memory: {bandwidth: ...})")
        elif len(n.cpus) != default_cores:
            q = QUEUE_PER_CORE * len(n.cpus)   # its own cores' room, as the defaults give the others'
            b = sri_buffers(len(n.cpus))
            fields.append(f"cores: {len(n.cpus)}, sri: {{buffers: {{request: {b}, posted: {b},"
                          f" response: {b}}}, probe_queue: {q}}}, mct: {{buffers: {{response: {q}, probe: {q}}}}}")
            comments.append(f"SRI buffers and queues for its own cores ({SRI_PER_CORE} and {QUEUE_PER_CORE} a core)")
        if n.has_memory and n.id in hmat and hmat_bandwidth:
            fields.append(f"memory: {{bandwidth: {hmat[n.id] / 1000:g} GB/s}}")
            comments.append("peak memory bandwidth: the firmware's HMAT (read, from its nearest initiators)")
        if not n.has_memory and n.cpus:
            comments.append("no memory on this host (memoryless node): place no array here")
        comment = f"   # {'; '.join(comments)}" if comments else ""
        lines.append(f"  - {{{', '.join(fields)}}}{comment}")
    return lines


def host_topology_yaml(host: Host, name: str | None = None, memory_bandwidth_GBps: float | None = None,
                       memory_source: str | None = None, curves: list | None = None,
                       curves_source: str = "measured by simnuma bench suite", remote_peaks: dict | None = None) -> str:
    """The board description of ``host`` as YAML text that ``simnuma topo check`` accepts.

    ``memory_bandwidth_GBps`` is the peak DRAM bandwidth per node from the
    machine's specification, ``memory_source`` where it comes from (written in
    the comment); without it the file keeps a marked placeholder.  With
    ``curves`` (bandwidth-latency curves of a suite, see
    :func:`~simnuma.bench.curves.curves_from_suite`) the memory follows them
    instead (``model: curve``; no peak bandwidth nor efficiency), and
    ``curves_source`` says where they were measured.  ``remote_peaks``
    (``{(node, memory node): data GB/s}``, :func:`~simnuma.bench.curves.remote_read_peaks`) give the links
    the suite's remote peaks crossed, one hop each, their bandwidth's placeholder: the data they carried.
    """
    inference = infer_links(host.node_ids, host.distances, host.distance_problem, [n.id for n in host.nodes if not n.cpus])
    degree: Counter[int] = Counter()   # node id -> links
    for a, b in inference.links:
        degree[a] += 1
        degree[b] += 1
    ports = max((degree[n.id] for n in host.nodes), default=0) + 1
    core_counts = Counter(len(n.cpus) for n in host.nodes if n.cpus)
    default_cores = core_counts.most_common(1)[0][0] if core_counts else 1
    board = name or _board_name(host)
    description = f"{host.cpu_model}, {len(host.nodes)} NUMA node(s), {host.cpu_count} CPUs"
    lines = _header(host)
    lines += [f"name: {_yaml_name(board)}", f"description: {_yaml_text(description)}"]
    if curves:
        memory_lines = curve_memory_lines(default_cores, curves, curves_source)
    else:
        memory_lines = _fifo_memory_lines(memory_bandwidth_GBps, memory_source)
    kinds = distance_kinds(inference, host)
    carried = carried_over(inference, host, remote_peaks or {})
    link_defaults = (
        # the links alike: what one carried is each one's
        measured_bandwidth_line("  bandwidth: ", *max(carried.values())) if carried and not kinds
        else LINK_DEFAULT_BANDWIDTH,
        LINK_DEFAULT_LATENCY_UNUSED if kinds and all(host.distance(a, b) in kinds for a, b in inference.links)
        else LINK_DEFAULT_LATENCY)
    lines += _defaults(default_cores, ports, memory_lines, link_defaults)
    # the firmware's bandwidth of a node's memory, where its HMAT gives one and nothing better was given
    lines += _node_lines(host, default_cores, hmat_bandwidth=not curves and memory_bandwidth_GBps is None,
                         curves=bool(curves))
    lines += link_lines(inference, host, CURVE_LOCAL_LATENCY_NS if curves else FIFO_LOCAL_LATENCY_NS, kinds,
                        carried if kinds else {})
    lines.append("io:                         # assumption: one I/O port per node")
    lines.extend(f"  - {{node: {n.id}}}" for n in host.nodes)
    lines.append("routing: shortest")
    lines.append("coherence: probe_filter     # assumption: current processors filter probes; K8 Opterons broadcast")
    return "\n".join(lines) + "\n"


def _yaml_name(text: str) -> str:
    """``text`` as YAML writes a name: plain where simnuma's reader reads it back as itself, else double-quoted
    (``a: b``, ``#1``, ``1e5``)."""
    from ..yamlsrc import load_yaml

    source = load_yaml(text)
    return text if source.data == text and not source.problems else _yaml_text(text)


def _yaml_text(text: str) -> str:
    """A double-quoted YAML scalar."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
