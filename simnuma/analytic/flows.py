"""What one thread's transactions put on a board, for the analytic model (``simnuma.analytic``).

A thread is a :class:`ThreadClass`: its customers (lines in flight), its pace, and its flow, what each transaction
of its op's pattern does: the path of a miss (the request to the home, then branches that run side by side: the
memory and the data back, each probe's round trip), the service each station gets per transaction (``row``), and
the time each packet holds a link's receive buffers (``pools``).  The packets are the simulation's
(:data:`simnuma.model.packet.KINDS`).

Stations and buffer pools go by their number on the board (:func:`board_resources`: a link direction is
``("link", src, dst)``, a memory ``("memory", node)``, a probe lookup ``("probe", node)``, a buffer pool
``("credit" or "data credit", src, dst, vc)``, a DRAM queue ``("queue", node)``).

The flows depend only on the board and on (node, memory, op): they are worked out once per board and kept, since
the same ones recur in every case of a study and every point of a sweep; so is what they are made of, each
packet's way from node to node (:class:`Segment`) and what the flows read of each node and link direction
(:class:`Board`).  What is kept is tuples of plain values where it can be: the garbage collector stops scanning
those once it has seen them.
"""
from __future__ import annotations

from typing import Final

from ..model.core import OP_PATTERNS
from ..model.packet import KINDS, NOP_BYTES, VC_NAMES
from ..topology.board import ROUTE_CLASSES
from ..units import LINE_BYTES
from .memory import MemoryStation

__all__ = ["ThreadClass", "Board", "Holds", "thread_class", "board_cache", "board_resources", "compile_paths",
           "cycle_ns", "branches_ns", "longest_ns", "path_ns", "in_order_sum"]

PACKET_BYTES: Final = {kind: cmd + data for kind, (_vc, cmd, data) in KINDS.items()}
HEADER_BYTES: Final = {kind: cmd for kind, (_vc, cmd, _data) in KINDS.items()}   # what a later hop waits for (cut-through)
VC: Final = {kind: VC_NAMES[vc] for kind, (vc, _cmd, _data) in KINDS.items()}
CARRIES_DATA: Final = {kind for kind, (_vc, _cmd, data) in KINDS.items() if data}

# a path as the solver's inner loop reads it: (fixed delay ns, station numbers, service ns at each)
Path = tuple[float, tuple[int, ...], tuple[float, ...]]
# the memory branch before the memory is known: (its station, the fixed delays ns after the memory's own, in their
# order, and the stations and services after it)
MemoryBranch = tuple[int, tuple[float, ...], tuple[int, ...], tuple[float, ...]]
# a flow's transaction: its request's path, the memory branch, each probe's round trip; and as the solver reads it,
# its request's path, then its branches (the memory's first)
FlowTransaction = tuple[Path, MemoryBranch, tuple[Path, ...]]
Transaction = tuple[Path, tuple[Path, ...]]


class Holds:
    """What a flow holds of the buffer pools it uses, per transaction, each pool in the order the flow first uses
    it: its number, the ns its packets hold its slots (over the slots), and the ns each packet serialises on the
    pool's link (over the slots; pool ``j``'s are ``serial_ns[ends[j - 1]:ends[j]]``), where they also queue.  Flat
    tuples of plain values: a board keeps one per flow, and the garbage collector soon stops scanning them."""

    def __init__(self, credits: dict[int, float], serials: dict[int, list[float]]):
        self.pools: tuple[int, ...] = tuple(credits)
        self.held_ns: tuple[float, ...] = tuple(credits.values())
        every: list[float] = []
        ends: list[int] = []
        for pool in credits:
            every += serials[pool]
            ends.append(len(every))
        self.serial_ns: tuple[float, ...] = tuple(every)
        self.ends: tuple[int, ...] = tuple(ends)


# a flow: (demand ns per transaction at each station, the stations it uses (its home memory's last), its buffer
# pools, its transactions, miss buffer hold ns per transaction, write-backs per transaction, its requests' spacing ns,
# the ns its source-done takes back to the home (0 for a local memory))
Flow = tuple[tuple[float, ...], tuple[int, ...], Holds, tuple[FlowTransaction, ...], float, float, float, float]


class ThreadClass:
    """One thread as a closed class: its customers and its flow (the board's, read only)."""

    def __init__(self, label: str, node: int, home: int, op: str, customers: int, period_ns: float,
                 foreground: bool, flow: Flow):
        self.label = label
        self.node = node
        self.home = home
        self.op = op
        self.customers = customers
        self.period_ns = period_ns   # a customer's shortest cycle at the thread's rate (0: unpaced)
        self.foreground = foreground
        # station number -> ns per transaction (averaged over the pattern; the home memory's is the solver's), and
        # the stations with any (and the home memory); its buffer pools; per transaction of the pattern its paths;
        # a write's miss buffer busy after its fill, and write-backs to the home memory (one read each), per
        # transaction; how closely its requests follow each other (``_flow``): the lines in flight reach the home
        # as a train this far apart; the time its source-done takes back to the home
        self.row, self.uses, self.pools, self.paths, self.hold_ns, self.writes, self.train_ns, self.done_ns = flow


def thread_class(topology, spec, foreground: bool) -> ThreadClass:
    """The class of thread ``spec`` on ``topology`` (its flow from the board's cache)."""
    known = board_cache(topology)
    board: Board = known["board"]
    node = board.nodes[spec.node]
    customers = 1 if spec.op == "l" else node.window[spec.op]
    period = 0.0
    if spec.rate_GBps:
        customers = max(customers, node.requests or customers)
        # every transaction moves a line: the thread issues one every 64 B / rate, a customer every
        # customers x 64 B / rate
        period = customers * LINE_BYTES / spec.rate_GBps
    key = (spec.node, spec.mem_node, spec.op)
    flow = known.get(key)
    if flow is None:
        flow = known[key] = _flow(board, spec.node, spec.mem_node, spec.op)
    return ThreadClass(spec.label, spec.node, spec.mem_node, spec.op, customers, period, foreground, flow)


# Per board (kept alive here, so that its id is not reused): its flows and the solver's compiled paths.  A few
# dozen boards at most; a sweep's points are new boards, and the oldest are let go.
_BOARDS: Final[dict] = {}
_MOST_BOARDS: Final = 64
_MOST_ENTRIES: Final = 20_000   # flows, compiled classes and memories of one board (its segments go with them)


def forget() -> None:
    """Empty the cache of every board (what a benchmark of first looks does between passes)."""
    _BOARDS.clear()


def board_cache(topology) -> dict:
    """The analytic model's cache for ``topology``; its ``"board"`` is the :class:`Board`."""
    held = _BOARDS.get(id(topology))
    if held is None or held[0] is not topology:
        if len(_BOARDS) >= _MOST_BOARDS:
            _BOARDS.pop(next(iter(_BOARDS)))
        held = _BOARDS[id(topology)] = (topology, {})
    cache: dict = held[1]
    if len(cache) > _MOST_ENTRIES:   # a long sweep on one board: start again rather than grow
        cache.clear()
    if "board" not in cache:
        cache["board"] = Board(topology)
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


class Node:
    """What the flows read of a node, once per board."""

    def __init__(self, node, index: dict):
        self.window: dict = node.window
        self.requests: int | None = node.requests
        self.hold_ns: dict = node.hold_ns or {}
        self.memory_queue: int = node.memory_queue
        self.release_at_done: bool = node.memory_release == "done"   # a read holds its DRAM queue entry to its end
        self.xbar_ns: float = node.xbar_latency_ns
        self.sri_lag_ns: float = node.sri_latency_ns + node.xbar_latency_ns   # the SRI and crossbar on the way out
        self.probe_lookup_ns: float = node.probe_lookup_ns
        self.probe_slot_ns: float = node.probe_occupancy_ns   # how long a probe holds its slot (probe.occupancy)
        self.probe_slots: int = node.sri_probe_queue
        self.cached: bool = node.cores > 0   # a memory-only node has no cache to probe
        self.memory: int = index[("memory", node.id)]   # its stations' numbers
        self.probe: int = index[("probe", node.id)]


class Board:
    """What the flows and the solver read of a board, numbered once: its stations and resources (and each one's
    number, and each buffer pool's link station), its nodes and routes; each link direction and each packet's way
    from node to node as the flows first need them."""

    def __init__(self, topology):
        self.topology = topology
        stations, resources = board_resources(topology)
        self.stations: list[tuple] = stations
        self.resources: list[tuple] = resources
        self.index: dict[tuple, int] = {k: i for i, k in enumerate(resources)}
        # each buffer pool's link station (-1 for the other resources)
        self.pool_link: list[int] = [self.index[("link", k[1], k[2])] if k[0] in ("credit", "data credit") else -1
                                     for k in resources]
        self.nodes: dict[int, Node] = {n.id: Node(n, self.index) for n in topology.nodes}
        self.node_ids: tuple = topology.node_ids
        self.broadcast: bool = topology.coherence == "broadcast"
        self.routes: dict[str, dict] = {cls: topology.class_routes(cls) for cls in ROUTE_CLASSES}
        self.directions: dict[tuple[int, int], Direction] = {}
        self.segments: dict[tuple, Segment] = {}

    def direction(self, src: int, dst: int) -> Direction:
        """The link direction src -> dst."""
        known = self.directions.get((src, dst))
        if known is None:
            known = self.directions[(src, dst)] = Direction(self, src, dst)
        return known

    def segment(self, a: int, b: int, kind: str) -> Segment:
        """A packet of ``kind`` from a to b."""
        key = (a, b, kind)
        known = self.segments.get(key)
        if known is None:
            route = (a,) if a == b else self.routes[_ROUTE_CLASS.get(kind, "response")][(a, b)]
            # what the MCT sends (data, probes) crosses its own crossbar first; what a core or an SRI sends, the
            # SRI and the crossbar
            lag_ns = self.nodes[a].xbar_ns if kind in _FROM_MCT else self.nodes[a].sri_lag_ns
            known = self.segments[key] = Segment(self, route, kind, lag_ns)
        return known


_ROUTE_CLASS: Final = {"read_req": "request", "victim": "request", "probe": "probe"}   # the rest: responses
_FROM_MCT: Final = ("read_resp", "probe")


class Direction:
    """What a hop reads of a link direction: its rate each way, its links in parallel, its flight latency, the
    crossbar it enters, and its stations' and buffer pools' numbers with their slots."""

    def __init__(self, board: Board, src: int, dst: int):
        link = board.topology.link(src, dst)
        index = board.index
        self.ns_per_byte: float = 1.0 / link.bandwidth_GBps(src, dst)
        self.back_ns_per_byte: float = 1.0 / link.bandwidth_GBps(dst, src)
        self.count: int = link.count
        self.latency_ns: float = link.latency_ns
        self.release_at_end: bool = link.release == "end"   # a packet frees the buffer it leaves from once sent
        self.xbar_ns: float = board.nodes[dst].xbar_ns   # the far crossbar's
        self.station: int = index[("link", src, dst)]
        self.back: int = index[("link", dst, src)]
        # per virtual channel: (pool, slots) of its receive buffers and of its data buffers
        self.buffers: dict[str, tuple[int, int]] = {
            vc: (index[("credit", src, dst, vc)], link.buffers[vc] * link.count) for vc in link.buffers}
        self.data_buffers: dict[str, tuple[int, int]] = {
            vc: (index[("data credit", src, dst, vc)], link.data_buffers[vc] * link.count) for vc in link.data_buffers}


class Segment:
    """A packet of one kind on its route: the crossbar (and SRI) latency it pays before it leaves; per link
    direction its station, service and fixed delay (its path: the flight and the crossbar it enters); and what it
    puts on stations (its bytes on each link direction, a credit NOP on each reverse) and buffer pools (the time it
    holds each receive buffer, its lag in flight on the first, and its serialisation on the link there), all by
    their numbers."""

    def __init__(self, board: Board, route: tuple, kind: str, lag_ns: float):
        self.lag_ns = lag_ns
        stations: list[int] = []
        services: list[float] = []
        delays: list[float] = []
        uses: list[int] = []
        use_ns: list[float] = []
        pools: list[int] = []
        held: list[float] = []
        serials: list[float] = []
        packet_bytes, header_bytes, vc = PACKET_BYTES[kind], HEADER_BYTES[kind], VC[kind]
        carries_data = kind in CARRIES_DATA
        last = len(route) - 2
        for k in range(len(route) - 1):
            d = board.direction(route[k], route[k + 1])
            ns_per_byte, count = d.ns_per_byte, d.count
            uses += [d.station, d.back]
            use_ns += [packet_bytes * ns_per_byte / count,
                       NOP_BYTES * d.back_ns_per_byte / count]   # and a credit NOP on the reverse
            # a data packet forwarded on is routed on its header (cut-through): after the first hop it waits for
            # its header only; links in parallel are a multi-server station (a packet takes one of them: as
            # Seidmann's approximation, a queue of the pair's share of its serialisation and a delay of the rest)
            serial_ns = (packet_bytes if k == 0 else header_bytes) * ns_per_byte
            flight_ns = d.latency_ns + d.xbar_ns
            # a receive buffer is held from its credit's use until the next stage takes the packet (the consumer
            # takes it whole; the next link, which routes it on its header, sends it out of the buffer, whole with
            # link.release: end), and comes back in a NOP over the reverse; and longer while the packet waits for
            # its turn on the link (the solver adds that wait)
            sent_ns = (packet_bytes if k == last else header_bytes) * ns_per_byte
            if k < last:
                onward = board.direction(route[k + 1], route[k + 2])
                onward_ns = packet_bytes * onward.ns_per_byte
                if onward.release_at_end:
                    sent_ns += onward_ns
                # cut through: its onward transfer ends no earlier than its tail has come in here
                tail_ns = packet_bytes * ns_per_byte - (0.0 if onward.release_at_end else onward_ns)
                if sent_ns < tail_ns:
                    sent_ns = tail_ns
            held_ns = (lag_ns if k == 0 else 0.0) + sent_ns + flight_ns + NOP_BYTES * d.back_ns_per_byte + d.latency_ns
            slots = [d.buffers[vc]]
            if carries_data:
                slots.append(d.data_buffers[vc])
            for pool, n in slots:
                pools.append(pool)
                held.append(held_ns / n)
                serials.append(serial_ns / count / n)
            stations.append(d.station)
            services.append(serial_ns / count)
            delays.append(flight_ns + serial_ns * (1.0 - 1.0 / count))
        self.stations: tuple[int, ...] = tuple(stations)
        self.services: tuple[float, ...] = tuple(services)
        self.delays: tuple[float, ...] = tuple(delays)
        self.uses: tuple[int, ...] = tuple(uses)
        self.use_ns: tuple[float, ...] = tuple(use_ns)
        self.pools: tuple[int, ...] = tuple(pools)
        self.held_ns: tuple[float, ...] = tuple(held)
        self.serial_ns: tuple[float, ...] = tuple(serials)


class _Sums:
    """What a flow's packets add up to per transaction as they are counted: ns at each of the board's ``width``
    stations (and the stations touched, in order), buffer pool number -> ns held, and pool number -> the ns each
    packet serialises on its link."""

    def __init__(self, width: int) -> None:
        self.demands = [0.0] * width
        self.touched = [False] * width
        self.uses: list[int] = []
        self.credits: dict[int, float] = {}
        self.serials: dict[int, list[float]] = {}

    def demand(self, k: int, ns: float) -> None:
        """Count ``ns`` at station ``k``."""
        if not self.touched[k]:
            self.touched[k] = True
            self.uses.append(k)
        self.demands[k] += ns

    def add(self, segment: Segment, weight: float) -> None:
        """Count ``weight`` of a packet on ``segment``."""
        uses, use_ns = segment.uses, segment.use_ns
        for j in range(len(uses)):
            self.demand(uses[j], weight * use_ns[j])
        credits, serials = self.credits, self.serials
        pools, held_ns, serial_ns = segment.pools, segment.held_ns, segment.serial_ns
        for j in range(len(pools)):
            pool = pools[j]
            credits[pool] = credits.get(pool, 0.0) + weight * held_ns[j]
            queued = serials.get(pool)
            if queued is None:
                queued = serials[pool] = []
            queued.append(weight * serial_ns[j])

    def read(self, read: Read, weight: float) -> None:
        """Count ``weight`` of a read's packets, and its probes' lookups."""
        request, response, probes, done = read
        self.add(request, weight)
        if response is not None:
            self.add(response, weight)
        for out, lookup, back in probes:
            self.add(out, weight)
            # its lookup: each probe holds a slot (for ``probe.occupancy``, or its whole lookup) of the
            # ``sri.probe_queue`` slots, as Seidmann's multi-server station
            self.demand(lookup.probe, weight * lookup.probe_slot_ns / lookup.probe_slots)
            if back is not None:
                self.add(back, weight)
        if done is not None:
            self.add(done, weight)


# a read's packets: its request, the data back (none from a local memory), each probe (to its target, the lookup
# there, the response back unless the target is the requester), the source-done (none to a local memory)
Read = tuple[Segment, Segment | None, list[tuple[Segment, Node, Segment | None]], Segment | None]


def _read(board: Board, node: int, home: int) -> Read:
    """The packets of a read from ``node`` of a line whose memory is at ``home``."""
    probes: list[tuple[Segment, Node, Segment | None]] = []
    if board.broadcast:
        for target in board.node_ids:
            if target != home and board.nodes[target].cached:
                back = board.segment(target, node, "probe_resp") if target != node else None
                probes.append((board.segment(home, target, "probe"), board.nodes[target], back))
    local = home == node
    return (board.segment(node, home, "read_req"), None if local else board.segment(home, node, "read_resp"), probes,
            None if local else board.segment(node, home, "source_done"))


def _flow(board: Board, node: int, home: int, op: str) -> Flow:
    """The flow of a thread on ``node`` whose memory is at ``home``, from its op's transactions: each a read and,
    for a write, a victim too."""
    here, there = board.nodes[node], board.nodes[home]
    pattern = OP_PATTERNS[op]
    share = 1.0 / len(pattern)
    read = _read(board, node, home)
    sums = _Sums(len(board.stations))
    hold_ns = writes = 0.0
    for is_write in pattern:
        sums.read(read, share)
        if is_write:
            sums.add(board.segment(node, home, "victim"), share)
            writes += share
            hold_ns += share * here.hold_ns.get(op, 0.0)
    request, response, probes, done = read
    # the closest a request follows the one before it when nothing else is on its way: the time its tightest
    # receive buffer pool holds a slot (a credit's round trip over the pool's slots); 0 where it crosses no link
    train_ns = max(request.held_ns, default=0.0)
    uses = tuple(sums.uses + [there.memory])
    pools = Holds(sums.credits, sums.serials)
    transaction = (_path(request, None, None), _memory_branch(there, response),
                   tuple([_path(out, lookup, back) for out, lookup, back in probes]))
    done_ns = 0.0
    if done is not None:   # its fixed delays and its services, unstretched: a 4-byte packet seldom waits
        delay, _stations, services = _path(done, None, None)
        done_ns = delay + in_order_sum(services)
    return tuple(sums.demands), uses, pools, (transaction,) * len(pattern), hold_ns, writes, train_ns, done_ns


def in_order_sum(values) -> float:
    """``values`` added in their order (as ``sum`` does before Python 3.12, which compensates)."""
    out = 0.0
    for v in values:
        out += v
    return out


def _path(segment: Segment, lookup: Node | None, back: Segment | None) -> Path:
    """The path of a packet on ``segment``; for a probe, then the ``lookup`` at its target (a queue of a slot's
    share of it and a delay of the rest) and, unless the target is the requester, the response ``back``."""
    delay = 0.0 + segment.lag_ns
    for d in segment.delays:
        delay += d
    if lookup is None:
        return delay, segment.stations, segment.services
    # a slot's share of its hold queues (Seidmann), the rest of the lookup is a delay
    slots, slot_ns = lookup.probe_slots, lookup.probe_slot_ns
    delay += (lookup.probe_lookup_ns - slot_ns) + slot_ns * (1 - 1 / slots)
    stations, services = segment.stations + (lookup.probe,), segment.services + (slot_ns / slots,)
    if back is not None:
        delay += back.lag_ns
        for d in back.delays:
            delay += d
        stations, services = stations + back.stations, services + back.services
    return delay, stations, services


def _memory_branch(home: Node, response: Segment | None) -> MemoryBranch:
    """The memory and the data back, but for the memory's own time and latency (the solver's MemoryStation of
    the home): the home's crossbar, then the response's path unless the home is the requester's node."""
    if response is None:
        return home.memory, (home.xbar_ns,), (), ()
    return home.memory, (home.xbar_ns,) + response.delays, response.stations, response.services


def compile_paths(c: ThreadClass, memory: MemoryStation) -> tuple[Transaction, ...]:
    """``c``'s transactions as ``((request, (branch, ...)), ...)``, each path ``(fixed delay ns, stations, services)``
    (the stations' numbers and the service at each): what the solver's inner loop reads.  The memory branch's visit
    to the home memory takes a read's time there and adds the memory's latency (and, for a chase, a row opened per
    line) to the path's fixed delay."""
    fixed_ns = memory.delay_ns + (memory.scattered_ns if c.op == "l" else 0.0)
    out = []
    for request, (station, delays, stations, services), probes in c.paths:
        delay = 0.0 + fixed_ns
        for d in delays:
            delay += d
        branch = (delay, (station,) + stations, (memory.read_ns,) + services)
        out.append((request, (branch,) + probes))
    # tuples: they live in the board's cache, and the garbage collector stops scanning a tuple of plain values
    return tuple(out)


def cycle_ns(compiled: tuple[Transaction, ...], factor: list[float]) -> float:
    """Mean latency of a transaction: each station's service stretched by ``factor`` (1 + what waits there, and
    at a memory what it adds at its load), plus the fixed delays; the longest of the branches after the request."""
    total = 0.0
    for request, branches in compiled:
        total += path_ns(request, factor)
        total += longest_ns(branches, factor)
    return total / len(compiled)


def branches_ns(compiled: tuple[Transaction, ...], factor: list[float]) -> float:
    """Mean time of a transaction's longest branch after its request (as :func:`cycle_ns` takes it)."""
    total = 0.0
    for _request, branches in compiled:
        total += longest_ns(branches, factor)
    return total / len(compiled)


def longest_ns(branches: tuple[Path, ...], factor: list[float]) -> float:
    longest = 0.0
    for path in branches:
        t = path_ns(path, factor)
        if t > longest:
            longest = t
    return longest


def path_ns(path: Path, factor: list[float]) -> float:
    """A path's fixed delay and its services stretched by ``factor``."""
    delay, stations, services = path
    spent = 0.0
    for j in range(len(stations)):
        spent += factor[stations[j]] * services[j]
    return delay + spent
