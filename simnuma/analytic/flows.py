"""What one thread's transactions put on a board, for the analytic model (``simnuma.analytic``).

A thread is a :class:`ThreadClass`: its customers (lines in flight), its pace, and per transaction of its op's
pattern the path of a miss: the request to the home, then branches that run side by side (the memory and the data
back; each probe's round trip).  A path is a tuple of ``(station, service ns, fixed delay ns)``: a link direction
with the time a packet waits for its serialisation, a visit to the home memory (``MEMORY``: its time is the
memory's, known only once every thread there is), or ``NO_STATION`` for a fixed latency.  Alongside: the service
each station gets per transaction (``demands``), and the time each packet holds a link's receive buffers
(``credits``, ``holds``).  The packets are the simulation's (:data:`simnuma.model.packet.KINDS`).

Stations and buffer pools go by their number on the board (:func:`board_resources`: a link direction is
``("link", src, dst)``, a memory ``("memory", node)``, a probe lookup ``("probe", node)``, a buffer pool
``("credit" or "data credit", src, dst, vc)``, a DRAM queue ``("queue", node)``).

The flows depend only on the board and on (node, memory, op): they are worked out once per board and kept, since
the same ones recur in every case of a study and every point of a sweep.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..model.core import OP_PATTERNS
from ..model.packet import KINDS, NOP_BYTES, VC_NAMES
from ..topology.board import ROUTE_CLASSES
from ..units import LINE_BYTES

__all__ = ["ThreadClass", "thread_class", "board_cache", "board_resources", "MEMORY", "NO_STATION"]

PACKET_BYTES = {kind: cmd + data for kind, (_vc, cmd, data) in KINDS.items()}
HEADER_BYTES = {kind: cmd for kind, (_vc, cmd, _data) in KINDS.items()}   # what a later hop waits for (cut-through)
VC = {kind: VC_NAMES[vc] for kind, (vc, _cmd, _data) in KINDS.items()}
CARRIES_DATA = {kind for kind, (_vc, _cmd, data) in KINDS.items() if data}
MEMORY = object()   # a path's visit to the home memory, whose time the solver knows from every thread there
NO_STATION = -1     # a path's fixed latency
# a hop of a packet: ((station, ns of it), ...) and ((buffer pool, ns held, link station, ns serialised), ...)
Hop = tuple[tuple[tuple[int, float], ...], tuple[tuple[int, float, int, float], ...]]


@dataclass
class ThreadClass:
    """One thread as a closed class: its customers and what each transaction of its pattern does."""

    label: str
    node: int
    home: int
    op: str
    customers: int
    period_ns: float                               # a customer's shortest cycle at the thread's rate (0: unpaced)
    foreground: bool
    hold_ns: float = 0.0                           # a write's miss buffer busy after its fill, per transaction
    writes: float = 0.0                            # write-backs to the home memory per transaction (one read each)
    train_ns: float = 0.0                          # how closely its requests follow each other (_spacing_ns): the
    #                                                lines in flight reach the home as a train this far apart
    demands: dict = field(default_factory=dict)    # station number -> ns per transaction (averaged over the pattern)
    credits: dict = field(default_factory=dict)    # receive buffer pool number -> ns held per transaction over its
    #                                                slots
    holds: dict = field(default_factory=dict)      # buffer pool number -> ((link station number, ns serialised per
    #                                                transaction over its slots), ...): where its packets also queue
    paths: list = field(default_factory=list)      # per transaction of the pattern: (request, [branches])


def thread_class(topology, spec, foreground: bool) -> ThreadClass:
    """The class of thread ``spec`` on ``topology`` (its flows from the board's cache)."""
    node = topology.node(spec.node)
    customers = 1 if spec.op == "l" else node.window[spec.op]
    period = 0.0
    if spec.rate_GBps:
        customers = max(customers, node.requests or customers)
        # every transaction moves a line: the thread issues one every 64 B / rate, a customer every
        # customers x 64 B / rate
        period = customers * LINE_BYTES / spec.rate_GBps
    c = ThreadClass(spec.label, spec.node, spec.mem_node, spec.op, customers, period, foreground)
    known = board_cache(topology)
    key = (spec.node, spec.mem_node, spec.op)
    if key not in known:
        _flows(topology, c)
        known[key] = (c.demands, c.credits, c.holds, c.paths, c.hold_ns, c.writes, c.train_ns)
    c.demands, c.credits, c.holds, c.paths, c.hold_ns, c.writes, c.train_ns = known[key]   # read only from here on
    return c


# Per board (kept alive here, so that its id is not reused): its flows and the solver's compiled paths.  A few
# dozen boards at most; a sweep's points are new boards, and the oldest are let go.
_BOARDS: dict = {}
_MOST_BOARDS = 64
_MOST_ENTRIES = 20_000   # flows, paths, compiled classes and memories of one board


def forget() -> None:
    """Empty the cache of every board (what a benchmark of first looks does between passes)."""
    _BOARDS.clear()


def board_cache(topology) -> dict:
    """The analytic model's cache for ``topology``; its ``"stations"`` are :func:`board_resources` and a dict of
    each resource's number."""
    held = _BOARDS.get(id(topology))
    if held is None or held[0] is not topology:
        if len(_BOARDS) >= _MOST_BOARDS:
            _BOARDS.pop(next(iter(_BOARDS)))
        held = _BOARDS[id(topology)] = (topology, {})
    cache: dict = held[1]
    if len(cache) > _MOST_ENTRIES:   # a long sweep on one board: start again rather than grow
        cache.clear()
    if "stations" not in cache:
        stations, resources = board_resources(topology)
        cache["stations"] = (stations, resources, {k: i for i, k in enumerate(resources)})
    return cache


def board_resources(topology) -> tuple[list[tuple], list[tuple]]:
    """Every queueing station of ``topology`` in the solver's order (each link direction, each node's memory and
    probe lookup), and every resource the bounds check: those stations, then each link direction's buffer pools
    (in the order of their names), then each node's DRAM queue.  A resource's number is its place here."""
    directions = [(a, b) for link in topology.links for a, b in ((link.a, link.b), (link.b, link.a))]
    stations: list[tuple] = [("link", a, b) for a, b in directions]
    stations += [(kind, n) for n in topology.node_ids for kind in ("memory", "probe")]
    stations.sort()
    pools = sorted([(kind, a, b, vc) for a, b in directions for vc in VC_NAMES for kind in ("credit", "data credit")])
    return stations, stations + pools + [("queue", n) for n in topology.node_ids]


_ROUTE_CLASS = {"read_req": "request", "victim": "request", "probe": "probe"}   # the rest: responses


def _hops(topology, a: int, b: int, kind: str) -> list:
    """``[(src, dst)]`` of the route a packet of ``kind`` takes from a to b."""
    known = board_cache(topology)
    if "routes" not in known:   # every class's routes, read once per board
        known["routes"] = {cls: topology.class_routes(cls) for cls in ROUTE_CLASSES}
    route = (a,) if a == b else known["routes"][_ROUTE_CLASS.get(kind, "response")][(a, b)]
    return list(zip(route, route[1:]))


def _direction(topology, src: int, dst: int) -> tuple:
    """What a hop reads of the link direction src -> dst, once per board: ``(ns per byte, ns per byte back, links
    in parallel, flight latency ns, receive buffers, data buffers, the far crossbar's latency ns)``."""
    known = board_cache(topology)
    key = ("direction", src, dst)
    if key not in known:
        link = topology.link(src, dst)
        known[key] = (1.0 / link.bandwidth_GBps(src, dst), 1.0 / link.bandwidth_GBps(dst, src), link.count,
                      link.latency_ns, link.buffers, link.data_buffers, topology.node(dst).xbar_latency_ns)
    return known[key]


def _path(topology, a: int, b: int, kind: str, c: ThreadClass, weight: float, lag_ns: float) -> tuple:
    """The path of a packet of ``kind`` from a to b: each link direction, then its flight and the crossbar it
    enters.  Adds its bytes to ``c.demands`` (and a credit NOP on each reverse direction) and the time it holds each
    receive buffer to ``c.credits``.  ``lag_ns`` is the crossbar (and SRI) latency it pays in flight on its first
    hop."""
    known = board_cache(topology)
    key = ("hops", a, b, kind, lag_ns)
    if key not in known:
        known[key] = _hops_of(topology, a, b, kind, lag_ns)
    entry: tuple[tuple, tuple[Hop, ...]] = known[key]
    path, hops = entry
    demands: dict[int, float] = c.demands
    credits: dict[int, float] = c.credits
    holds: dict[int, list[tuple[int, float]]] = c.holds
    for uses, pools in hops:
        for k, ns in uses:
            demands[k] = demands.get(k, 0.0) + weight * ns
        for pool, held_ns, link, serial_ns in pools:
            credits[pool] = credits.get(pool, 0.0) + weight * held_ns
            queued = holds.get(pool)
            if queued is None:
                queued = holds[pool] = []
            queued.append((link, weight * serial_ns))
    return path   # the board's own tuple, read only: callers add it to their lists


def _hops_of(topology, a: int, b: int, kind: str, lag_ns: float) -> tuple[tuple, tuple[Hop, ...]]:
    """A packet of ``kind`` from a to b: its path, ``((link station, service ns, fixed delay ns), ...)``, and per
    hop ``(((station, ns of it), ...), ((buffer pool, ns held over its slots, link station, ns serialised over its
    slots), ...))``, stations and pools by their numbers."""
    path: list[tuple[int, float, float]] = []
    out: list[Hop] = []
    hops = _hops(topology, a, b, kind)
    index = board_cache(topology)["stations"][2]
    for k, (src, dst) in enumerate(hops):
        ns_per_byte, back_ns_per_byte, count, latency_ns, buffers, data_buffers, xbar_ns = _direction(topology, src,
                                                                                                       dst)
        key, back = index[("link", src, dst)], index[("link", dst, src)]
        uses = ((key, PACKET_BYTES[kind] * ns_per_byte / count),
                (back, NOP_BYTES * back_ns_per_byte / count))   # and a credit NOP on the reverse
        # a data packet forwarded on is routed on its header (cut-through): after the first hop it waits for
        # its header only; links in parallel are a multi-server station (a packet takes one of them: as
        # Seidmann's approximation, a queue of the pair's share of its serialisation and a delay of the rest)
        serial_ns = (PACKET_BYTES[kind] if k == 0 else HEADER_BYTES[kind]) * ns_per_byte
        flight_ns = latency_ns + xbar_ns
        # a receive buffer is held from its credit's use until the next stage takes the packet (the next link
        # forwards it on its header; the consumer takes it whole), and comes back in a NOP over the reverse;
        # and longer while the packet waits for its turn on the link (the solver adds that wait)
        sent_ns = (PACKET_BYTES[kind] if k == len(hops) - 1 else HEADER_BYTES[kind]) * ns_per_byte
        held_ns = (lag_ns if k == 0 else 0.0) + sent_ns + flight_ns + NOP_BYTES * back_ns_per_byte + latency_ns
        vc = VC[kind]
        slots = [(index[("credit", src, dst, vc)], buffers[vc] * count)]
        if kind in CARRIES_DATA:
            slots.append((index[("data credit", src, dst, vc)], data_buffers[vc] * count))
        pools = tuple([(pool, held_ns / n, key, serial_ns / count / n) for pool, n in slots])
        path.append((key, serial_ns / count, flight_ns + serial_ns * (1.0 - 1.0 / count)))
        out.append((uses, pools))
    # tuples, not lists: a board's caches live long, and the garbage collector stops scanning a tuple of plain
    # values once it has seen it
    return tuple(path), tuple(out)


def _flows(topology, c: ThreadClass) -> None:
    """Fill ``c``'s demands, buffer pools, paths, hold and write-backs from its op's transactions."""
    node, home = topology.node(c.node), topology.node(c.home)
    pattern = OP_PATTERNS[c.op]
    share = 1.0 / len(pattern)
    sri_lag = node.sri_latency_ns + node.xbar_latency_ns
    index = board_cache(topology)["stations"][2]
    for is_write in pattern:
        request: list = [(NO_STATION, 0.0, sri_lag)]
        request += _path(topology, c.node, c.home, "read_req", c, share, sri_lag)
        c.train_ns = _spacing_ns(topology, c.node, c.home, "read_req", sri_lag)
        # its service and latency are the solver's MemoryStation of the home; what the MCT sends (data, probes)
        # crosses its own crossbar first
        branch: list = [(index[("memory", c.home)], MEMORY, 0.0), (NO_STATION, 0.0, home.xbar_latency_ns)]
        if c.home != c.node:
            branch += _path(topology, c.home, c.node, "read_resp", c, share, home.xbar_latency_ns)
        branches = [branch]
        if topology.coherence == "broadcast":
            branches += [_probe(topology, c, target, share, index[("probe", target)])
                         for target in topology.node_ids if target != c.home]
        if c.home != c.node:
            _path(topology, c.node, c.home, "source_done", c, share, sri_lag)
        if is_write:
            _path(topology, c.node, c.home, "victim", c, share, sri_lag)
            c.writes += share
            c.hold_ns += share * (node.hold_ns or {}).get(c.op, 0.0)
        c.paths.append((tuple(request), tuple([tuple(b) for b in branches])))
    for pool, queued in c.holds.items():
        c.holds[pool] = tuple(queued)


def _spacing_ns(topology, a: int, b: int, kind: str, lag_ns: float) -> float:
    """The closest a packet of ``kind`` from a to b follows the one before it when nothing else is on its way: the
    time its tightest receive buffer pool holds a slot (a credit's round trip over the pool's slots); 0 where it
    crosses no link.  ``_path`` has worked out its hops."""
    _path_, hops = board_cache(topology)[("hops", a, b, kind, lag_ns)]
    return max([held for _uses, pools in hops for _pool, held, _link, _serial in pools], default=0.0)


def _probe(topology, c: ThreadClass, target: int, share: float, key: int) -> list:
    """A probe's round trip: from the home's MCT to ``target``, its lookup there (station ``key``:
    ``probe.lookup`` shared by ``sri.probe_queue`` slots, as Seidmann's multi-server station), and the response
    to the requester."""
    home, lookup = topology.node(c.home), topology.node(target)
    path: list = [(NO_STATION, 0.0, home.xbar_latency_ns)]
    path += _path(topology, c.home, target, "probe", c, share, home.xbar_latency_ns)
    slots = lookup.sri_probe_queue
    c.demands[key] = c.demands.get(key, 0.0) + share * lookup.probe_lookup_ns / slots
    path.append((key, lookup.probe_lookup_ns / slots, lookup.probe_lookup_ns * (1 - 1 / slots)))
    if target != c.node:
        lag = lookup.sri_latency_ns + lookup.xbar_latency_ns
        path.append((NO_STATION, 0.0, lag))
        path += _path(topology, target, c.node, "probe_resp", c, share, lag)
    return path
