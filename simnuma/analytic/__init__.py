"""An analytic model beside the simulation: the board and workload as a closed queueing network, solved by
approximate mean value analysis (Schweitzer's, with a fork-join maximum for the probes).

Every thread is a closed class of ``window`` customers (its lines in flight; a latency chase one; a paced
thread ``core.requests`` of them, each cycling no faster than ``requests / rate`` per line, so that the thread
goes at its rate unless its lines in flight cannot carry it).  A miss visits:

* **queueing stations**, each with the service demand the miss puts on it: every link direction (the bytes
  of each packet crossing it: request 8, probe 8, probe response 4, read data 68, source-done 4, victim 72,
  and a 4-byte NOP on the reverse direction for each packet received), the home memory (:class:`~simnuma.analytic.memory.MemoryStation`: the
  time a read and a write hold it), and each probed node's probe lookup (``probe.lookup`` shared by
  ``sri.probe_queue`` slots, as Seidmann's approximation of a multi-server station: a queue of
  ``lookup / slots`` and a delay of the rest);
* **delay stations**, fixed latencies: the SRI, each crossbar (the sender's, for what the MCT sends) and link
  flight on the way, the memory's latency; and, depending on the load, what the memory adds: a DRAM's wait
  for the write episode a read meets, or a curve memory's loaded latency at its bandwidth and read share.

A read's latency is its request's path to the home, then the longer of the memory path (DRAM and the data
back) and the slowest probe's round trip (to the probed node, its lookup, the response to the requester);
a write's miss buffer stays busy ``core.hold.w`` more.  The throughput of a class is its customers over its
cycle; each station's residence time grows with the customers of the other classes queued there (and of
its own, less one).  Then two kinds of bound: no station is offered more than it serves, and no buffer pool
turns its credits round faster than they come back (each packet holds a receive buffer from its credit's use
until the next stage takes it, plus the NOP's way back).

What it lacks, by design: blocking (a packet waiting for a credit, a chain of full buffers backing up), so it
sees a pool only when its credits are the limit; the DRAM's banks and scheduler (it has average row openings,
turnarounds, rank gaps and refresh, not their timing); the order of packets within a link, and any bunching of
a thread's lines.  ``beside`` names those where the two disagree.
"""
from __future__ import annotations

import math
import time
from operator import mul
from dataclasses import dataclass, field

from .. import __version__
from ..case import Case
from ..model.system import DEFAULT_SIZE_BYTES
from ..topology import load_topology
from ..workload import Workload
from .memory import STREAMS, MemoryStation

__all__ = ["analyze", "AnalyticResult"]

LINE = 64
OP_TRANSACTIONS = {"r": (False,), "w": (True,), "t": (False, False, True), "l": (False,)}
PACKET_BYTES = {"read_req": 8, "probe": 8, "probe_resp": 4, "read_resp": 68, "source_done": 4, "victim": 72}
NOP = 4
SATURATED = 0.95
# Service times here are constant (a packet's serialisation, a line's burst): an arrival waits about half what
# it would behind exponential services (M/D/1 against M/M/1), so what waits at a station counts half.
QUEUEING = 0.5
ITERATIONS = 2000
TOLERANCE = 1e-4   # relative change of every throughput between iterations: far inside the model's own error


@dataclass
class _Class:
    label: str
    node: int
    home: int
    op: str
    customers: int
    think_ns: float
    hold_ns: float
    foreground: bool
    demands: dict = field(default_factory=dict)   # station -> ns per transaction (averaged over the op's pattern)
    credits: dict = field(default_factory=dict)   # buffer pool -> slot-ns held per transaction, over its slots
    writes: float = 0.0                            # write-backs to the home memory per transaction (one read each)
    paths: list = field(default_factory=list)      # per transaction of the pattern: (request, [branches])


class AnalyticResult:
    """What ``analyze`` found, with ``to_dict()`` in the shape of ``simnuma.simulate``'s result."""

    def __init__(self, data: dict):
        self._data = data

    def to_dict(self) -> dict:
        import copy

        return copy.deepcopy(self._data)

    def thread(self, spec: str) -> dict:
        for t in self._data["threads"]:
            if t["spec"] == spec:
                return t
        raise KeyError(spec)

    @property
    def makespan_ns(self) -> float:
        return self._data["makespan_ns"]


def _hops(topology, a: int, b: int) -> list:
    """``[(src, dst)]`` of the route from a to b."""
    route = topology.route(a, b)
    return list(zip(route, route[1:]))


MEMORY = -1.0   # a path's visit to the home memory, whose service the solver knows from every thread there
HEADER_BYTES = {"read_resp": 4, "victim": 8}   # a data packet's command part: what a later hop waits for (cut-through)


VC = {"read_req": "request", "probe": "probe", "probe_resp": "response", "read_resp": "response",
      "source_done": "response", "victim": "posted"}


def _path(topology, a: int, b: int, kind: str, c: _Class, weight: float, lag_ns: float = 0.0) -> list:
    """The stations of a packet of ``kind`` from a to b, adding its bytes to ``c.demands`` (and a credit NOP on each
    reverse direction) and the time it holds each receive buffer to ``c.credits``; returns the path as
    ``[(station, service ns it waits for, fixed delay ns)]``: each link direction, then its flight and the crossbar
    it enters.  A data packet forwarded on is routed on its header (cut-through): after the first hop it waits for
    its header's serialisation only.  ``lag_ns`` is the crossbar (and SRI) latency a packet pays in flight on its
    first hop."""
    out = []
    hops = _hops(topology, a, b)
    for k, (src, dst) in enumerate(hops):
        link = topology.link(src, dst)
        ns_per_byte = 1.0 / link.bandwidth_GBps(src, dst)
        key = ("link", src, dst)
        c.demands[key] = c.demands.get(key, 0.0) + weight * PACKET_BYTES[kind] * ns_per_byte / link.count
        back = ("link", dst, src)
        back_ns_per_byte = 1.0 / link.bandwidth_GBps(dst, src)
        c.demands[back] = c.demands.get(back, 0.0) + weight * NOP * back_ns_per_byte / link.count
        waits = PACKET_BYTES[kind] if k == 0 else HEADER_BYTES.get(kind, PACKET_BYTES[kind])
        flight_ns = link.latency_ns + topology.node(dst).xbar_latency_ns
        # a packet takes one of the pair's links: links in parallel are a multi-server station (Seidmann's: a queue
        # of the pair's share of the serialisation, and a delay of the rest)
        serial_ns = waits * ns_per_byte
        out.append((key, serial_ns / link.count, flight_ns + serial_ns * (1.0 - 1.0 / link.count)))
        # a receive buffer is held from its credit's use until the next stage takes the packet (the next link
        # forwards it on its header; the consumer takes it whole), and comes back in a NOP over the reverse
        sent = PACKET_BYTES[kind] if k == len(hops) - 1 else HEADER_BYTES.get(kind, PACKET_BYTES[kind])
        held_ns = ((lag_ns if k == 0 else 0.0) + sent * ns_per_byte + flight_ns
                   + NOP * back_ns_per_byte + link.latency_ns)
        vc = VC[kind]
        pools = [("credit", src, dst, vc, link.buffers[vc] * link.count)]
        if kind in HEADER_BYTES and link.data_buffers.get(vc):
            pools.append(("data credit", src, dst, vc, link.data_buffers[vc] * link.count))
        for *name, slots in pools:
            pool = tuple(name)
            c.credits[pool] = c.credits.get(pool, 0.0) + weight * held_ns / slots
    return out


def _build(topology, spec, foreground: bool, coherence: str) -> _Class:
    node = topology.node(spec.node)
    customers = 1 if spec.op == "l" else node.window[spec.op]
    think = 0.0
    if spec.rate_GBps:
        customers = max(customers, node.requests or customers)
        think = customers * LINE / spec.rate_GBps      # ns per line of a customer, at the rate
    c = _Class(spec.label, spec.node, spec.mem_node, spec.op, customers, think, 0.0, foreground)
    held = _FLOWS.get(id(topology))
    if held is None or held[0] is not topology:
        if len(_FLOWS) >= 64:
            _FLOWS.clear()
        held = _FLOWS[id(topology)] = (topology, {})
    known: dict = held[1]
    flows = (spec.node, spec.mem_node, spec.op, coherence)
    if flows not in known:
        _flows(topology, c, coherence)
        known[flows] = (c.demands, c.credits, c.paths, c.hold_ns, c.writes)
    c.demands, c.credits, c.paths, c.hold_ns, c.writes = known[flows]   # read only from here on
    return c


# what a thread's transactions put on a board's stations and pools, per (node, memory, op, coherence): the same
# flows recur in every case of a study and every point of a sweep.  Keyed by the board object (kept alive here, so
# that its id is not reused), a few dozen boards at most.
_FLOWS: dict = {}


def _flows(topology, c: _Class, coherence: str) -> None:
    """Fill ``c``'s demands, buffer pools, paths and hold from its thread's transactions."""
    node, home = topology.node(c.node), topology.node(c.home)
    pattern = OP_TRANSACTIONS[c.op]
    share = 1.0 / len(pattern)
    sri_lag = node.sri_latency_ns + node.xbar_latency_ns
    memory_key = ("memory", c.home)
    for is_write in pattern:
        request: list = [(None, 0.0, node.sri_latency_ns + node.xbar_latency_ns)]
        request += _path(topology, c.node, c.home, "read_req", c, share, sri_lag)
        memory: list = [(memory_key, MEMORY, 0.0)]   # its service and latency: the solver's MemoryStation of the home
        # what the MCT sends (data, probes) crosses its own crossbar first
        data: list = [(None, 0.0, home.xbar_latency_ns)]
        data += _path(topology, c.home, c.node, "read_resp", c, share, home.xbar_latency_ns)
        if c.home == c.node:
            data = [(None, 0.0, node.xbar_latency_ns)]
        branches = [memory + data]
        if coherence == "broadcast":
            for target in topology.node_ids:
                if target == c.home:
                    continue
                probe: list = [(None, 0.0, home.xbar_latency_ns)]
                probe += _path(topology, c.home, target, "probe", c, share, home.xbar_latency_ns)
                lookup = topology.node(target)
                key = ("probe", target)
                slots = lookup.sri_probe_queue
                c.demands[key] = c.demands.get(key, 0.0) + share * lookup.probe_lookup_ns / slots
                probe.append((key, lookup.probe_lookup_ns / slots, lookup.probe_lookup_ns * (1 - 1 / slots)))
                if target != c.node:
                    probe += [(None, 0.0, lookup.sri_latency_ns + lookup.xbar_latency_ns)]
                    probe += _path(topology, target, c.node, "probe_resp", c, share,
                                   lookup.sri_latency_ns + lookup.xbar_latency_ns)
                branches.append(probe)
        if c.home != c.node:
            _path(topology, c.node, c.home, "source_done", c, share, sri_lag)
        if is_write:
            _path(topology, c.node, c.home, "victim", c, share, sri_lag)
            c.writes += share
            c.hold_ns += share * (node.hold_ns or {}).get(c.op, 0.0)
        c.paths.append((request, branches))


def _compile(c: _Class, index: dict, memory: MemoryStation) -> list:
    """``c``'s transactions as ``[(request, [branch, ...])]``, each path ``(fixed delay ns, stations, services,
    memories)`` with stations as indices: what the solver's inner loop reads (``memories``: where the path meets a
    memory's load-dependent wait).  A visit to the home memory takes a read's time there and adds the memory's
    latency (and, for a chase, a row opened per line) to the path's fixed delay."""
    fixed_ns = memory.delay_ns + (memory.scattered_ns() if c.op == "l" else 0.0)

    def path(entries) -> tuple:
        delay = sum(d for _, _, d in entries) + sum(fixed_ns for _, service, _ in entries if service is MEMORY)
        visits = [(index[station], memory.read_ns if service is MEMORY else service)
                  for station, service, _ in entries if station is not None]
        at_memory = [index[station] for station, service, _ in entries if service is MEMORY]
        return (delay, [i for i, _ in visits], [service for _, service in visits], at_memory)
    return [(path(request), [path(b) for b in branches]) for request, branches in c.paths]


def _cycle_ns(compiled: list, factor: list, waits: list) -> float:
    """Mean latency of a transaction: each station's service stretched by ``factor`` (1 + what waits there), plus
    what a memory adds at its load (its wait for writes, or its curve) and the fixed delays; the longest of the
    branches after the request."""
    total = 0.0
    stretch = factor.__getitem__
    wait = waits.__getitem__
    for request, branches in compiled:
        delay, stations, services, memories = request
        total += delay + sum(map(mul, map(stretch, stations), services))
        if memories:
            total += sum(map(wait, memories))
        longest = 0.0
        for delay, stations, services, memories in branches:
            t = delay + sum(map(mul, map(stretch, stations), services))
            if memories:
                t += sum(map(wait, memories))
            if t > longest:
                longest = t
        total += longest
    return total / len(compiled)


def _memories(topology, classes) -> dict:
    """Each home memory of ``classes`` as the solver sees it, from every thread that uses it."""
    out = {}
    for home in sorted({c.home for c in classes}):
        there = [c for c in classes if c.home == home]
        out[home] = MemoryStation(topology.node(home), sum(STREAMS[c.op] for c in there), any(c.writes for c in there))
    return out


def analyze(topology, threads, background=(), size_bytes: int = DEFAULT_SIZE_BYTES) -> AnalyticResult:
    """Solve ``threads`` (and paced ``background``) on ``topology`` by approximate MVA (see the module)."""
    start = time.perf_counter()
    topology = load_topology(topology)
    workload = Workload.build(threads, background)
    workload.check(topology)
    classes = [_build(topology, s, True, topology.coherence) for s in workload.threads]
    classes += [_build(topology, s, False, topology.coherence) for s in workload.background]
    net = _Network(topology, classes)
    throughput, latencies, iterations = net.solve()
    solved = dict(throughput)
    net.bound(throughput)
    lines = max(1, size_bytes // LINE)
    out_threads: list[dict] = []
    for c in classes:
        x = throughput[c.label]
        per_line_ns = len(c.paths) / x if x else math.inf
        # what a transaction took: as solved, or, where a bound slowed the class, Little's law over a window slot
        latency = latencies[c.label]
        if x < solved[c.label] * (1.0 - 1e-9):
            latency = c.customers / x - c.hold_ns if x else math.inf
        out_threads.append({"spec": c.label, "role": "foreground" if c.foreground else "background",
                            "time_ns": lines * per_line_ns if c.foreground else None, "bandwidth_GBps": LINE * x,
                            "latency_ns": {"mean": latency}, "percent_of_local_read": None})
    makespan = max(lines * len(c.paths) / throughput[c.label] if throughput[c.label] else math.inf
                   for c in classes if c.foreground)
    for t in out_threads:
        if t["role"] == "background":
            t["time_ns"] = makespan
    data = {"version": __version__, "topology": topology.name, "mode": "analytic", "size_bytes": size_bytes,
            "threads": out_threads, "makespan_ns": makespan, **net.usage(throughput),
            "solve_s": time.perf_counter() - start, "iterations": iterations}
    return AnalyticResult(data)


class _Network:
    """The classes of one case on their stations and buffer pools, ready to solve."""

    def __init__(self, topology, classes: list):
        self.classes = classes
        self.memories = memories = _memories(topology, classes)
        demands = {}
        for c in classes:
            m = memories[c.home]
            demands[c.label] = dict(c.demands)
            demands[c.label][("memory", c.home)] = m.read_ns + c.writes * m.write_ns
        self.stations = stations = sorted({k for c in classes for k in demands[c.label]})   # ("link", 0, 1), ...
        index = {k: i for i, k in enumerate(stations)}
        known = _FLOWS[id(topology)][1]
        layout = tuple(index)
        self.compiled = {}
        for c in classes:
            m = memories[c.home]
            key = ("compiled", c.node, c.home, c.op, layout, m.read_ns, m.delay_ns)
            if key not in known:
                known[key] = _compile(c, index, m)
            self.compiled[c.label] = known[key]
        self.demand = {c.label: [demands[c.label].get(k, 0.0) for k in stations] for c in classes}
        # memories whose latency depends on their load, with the station index and the classes there
        self.loaded = [(index[("memory", home)], m, [c for c in classes if c.home == home])
                       for home, m in memories.items() if m.model == "curve" or m.episode_ns]

    def solve(self) -> tuple:
        """``(throughput, latency, iterations)``: Schweitzer's iteration to a fixed point (module docstring)."""
        classes = self.classes
        queue = {c.label: [0.0] * len(self.stations) for c in classes}
        throughput = {c.label: 0.0 for c in classes}
        latencies = {c.label: 0.0 for c in classes}
        waits = {c.label: [0.0] * len(self.stations) for c in classes}
        # a local writer's fill reaches its DRAM right behind its own write-back (they leave the core together, the
        # write-back first), so it meets the write episode from its start; any other read, a remote writer's fill
        # included (its request overtakes the write-back's data on the first link), meets it at a random point
        behind = {c.label for c in classes if c.writes and c.home == c.node}
        iterations = 0
        for iterations in range(1, ITERATIONS + 1):
            total = [sum(column) for column in zip(*queue.values())]
            changed = 0.0
            factors = {}
            for c in classes:
                # residence per unit demand at each station: 1 + what waits there (own customers less one)
                less = 1.0 / c.customers
                factors[c.label] = factor = [1.0 + QUEUEING * (t - o * less) for t, o in zip(total, queue[c.label])]
                latencies[c.label] = latency = _cycle_ns(self.compiled[c.label], factor, waits[c.label])
                # a paced thread issues no faster than its rate, whatever its lines take: a customer's cycle is at
                # least its share of the rate's period
                cycle = latency + c.hold_ns
                paced = c.think_ns / len(c.paths)
                x = c.customers / (cycle if cycle > paced else paced)
                changed = max(changed, abs(x - throughput[c.label]) / max(x, 1e-12))
                throughput[c.label] = x
            for c in classes:
                x = throughput[c.label]
                queue[c.label] = [x * d * f for d, f in zip(self.demand[c.label], factors[c.label])]
            for i, m, there in self.loaded:
                reads = sum(throughput[c.label] for c in there)
                writes = sum(throughput[c.label] * c.writes for c in there)
                wait = m.wait_ns(reads, writes)   # at this round's load, for the next round
                for c in there:
                    waits[c.label][i] = wait if c.label in behind else wait * m.residual
            if changed < TOLERANCE:
                break
        return throughput, latencies, iterations

    def loads(self, throughput: dict) -> tuple:
        """``(utilization per station, share of slots in use per buffer pool)`` at ``throughput``."""
        utilization = dict(zip(self.stations, (sum(column) for column in zip(
            *([throughput[c.label] * d for d in self.demand[c.label]] for c in self.classes)))))
        credits: dict = {}
        for c in self.classes:
            x = throughput[c.label]
            for k, d in c.credits.items():
                credits[k] = credits.get(k, 0.0) + x * d
        return utilization, credits

    def bound(self, throughput: dict) -> None:
        """Slow the classes through any station offered more than it serves (the asymptotic bound, which the halved
        queueing alone does not keep near saturation), or through any buffer pool whose credits would have to come
        back faster than their round trip allows."""
        utilization, credits = self.loads(throughput)
        if max(utilization.values(), default=0.0) <= 1.0 + 1e-12 and max(credits.values(), default=0.0) <= 1.0 + 1e-12:
            return
        classes = self.classes
        limits = [(k, {c.label: self.demand[c.label][i] for c in classes if self.demand[c.label][i]})
                  for i, k in enumerate(self.stations)]
        per_pool: dict = {}
        for c in classes:
            for k, d in c.credits.items():
                per_pool.setdefault(k, {})[c.label] = d
        limits += sorted(per_pool.items())
        for _ in range(len(limits) + 1):
            over = False
            for _k, per_class in limits:
                offered = sum([throughput[label] * d for label, d in per_class.items()])
                if offered > 1.0 + 1e-12:
                    over = True
                    for label in per_class:
                        throughput[label] /= offered
            if not over:
                break

    def usage(self, throughput: dict) -> dict:
        """The result's ``links``, ``memory``, ``probes``, ``credits`` (each pool's slots in use, as a share) and
        ``bottleneck``, at ``throughput``."""
        utilization, credits = self.loads(throughput)
        links = [{"src": k[1], "dst": k[2], "utilization": min(1.0, u), "offered": u}
                 for k, u in utilization.items() if k[0] == "link"]
        memory = [{"node": k[1], "utilization": min(1.0, u), "offered": u}
                  for k, u in utilization.items() if k[0] == "memory"]
        probes = [{"node": k[1], "utilization": min(1.0, u)} for k, u in utilization.items() if k[0] == "probe"]
        pools = sorted(({"pool": _pool_name(k), "in_use": min(1.0, u)} for k, u in credits.items()),
                       key=lambda r: -r["in_use"])
        station, busy = max(utilization.items(), key=lambda kv: kv[1], default=(("none",), 0.0))
        if pools and pools[0]["in_use"] >= SATURATED and pools[0]["in_use"] > busy:   # credits the limit
            resource, u, limit = pools[0]["pool"], pools[0]["in_use"], "credits"
        else:
            resource, u, limit = _station_name(station), busy, "busy"
        bottleneck = {"resource": resource, "utilization": min(1.0, u), "limit": limit if u >= SATURATED else "none"}
        return {"links": sorted(links, key=lambda r: (r["src"], r["dst"])), "memory": sorted(memory, key=lambda r: r["node"]),
                "probes": probes, "credits": pools, "bottleneck": bottleneck}


def _station_name(key: tuple) -> str:
    if key[0] == "link":
        return f"link {key[1]}->{key[2]}"
    return f"memory N{key[1]}" if key[0] == "memory" else f"probes N{key[1]}" if key[0] == "probe" else "none"


def _pool_name(key: tuple) -> str:
    """``link 0->1 probe buffers``: a buffer pool in words (``data buffers`` for a channel's data)."""
    kind, src, dst, vc = key
    return f"link {src}->{dst} {vc} {'data buffers' if kind == 'data credit' else 'buffers'}"


def case_analysis(topology, case: Case, size_bytes: int = DEFAULT_SIZE_BYTES) -> AnalyticResult:
    """``analyze`` of a case (its named background set placed on the board)."""
    placed = case.placed(topology)
    return analyze(topology, placed.threads, placed.background, size_bytes)


def render_analysis(data: dict) -> str:
    """The text ``simnuma run --analytic`` prints."""
    lines = [f"simnuma {data['version']}  board {data['topology']}  analytic (approximate MVA, docs/analytic.md)  "
             f"array {data['size_bytes'] / 2**20:g} MiB per thread", ""]
    width = max(len(t["spec"]) for t in data["threads"])
    lines.append(f"{'thread':<{width}}  role  time (ms)  GB/s    latency ns")
    for t in data["threads"]:
        lines.append(f"{t['spec']:<{width}}  {t['role'][:2]:<4}  {t['time_ns'] / 1e6:9.3f}  {t['bandwidth_GBps']:6.3f}"
                     f"  {t['latency_ns']['mean']:10.1f}")
    busy = sorted(data["links"], key=lambda r: -r["utilization"])[:4]
    lines += ["", "busiest links: " + ", ".join(f"{r['src']}->{r['dst']} {100 * r['utilization']:.0f}%" for r in busy),
              "memory: " + ", ".join(f"N{r['node']} {100 * r['utilization']:.0f}%" for r in data["memory"])]
    b = data["bottleneck"]
    if b["limit"] == "busy":
        lines.append(f"bottleneck: {b['resource']} ({100 * b['utilization']:.1f}% busy)")
    elif b["limit"] == "credits":
        lines.append(f"bottleneck: {b['resource']} (their credits cannot come back faster)")
    else:
        lines.append(f"bottleneck: nothing saturates; the busiest is {b['resource']} at {100 * b['utilization']:.1f}%")
    lines.append(f"solved in {1e3 * data['solve_s']:.1f} ms; the analytic model has no blocking (buffer pools only"
                 " bound their rate) and no DRAM banks: docs/analytic.md says where it parts from the simulation")
    return "\n".join(lines)


AGREES = 0.10   # beyond this the report says what the analytic model lacks


def beside(simulated: dict, analytic_ns: float) -> tuple:
    """``(difference, note)`` of an analytic time against a simulated result: the note, where they part by more
    than :data:`AGREES`, names what the simulation has there and the analytic model lacks."""
    diff = analytic_ns / simulated["makespan_ns"] - 1.0
    if abs(diff) <= AGREES:
        return diff, ""
    b = simulated.get("bottleneck") or {}
    if b.get("limit") == "full buffer":
        return diff, (f"no blocking in the analytic model (its buffers only bound how fast their credits come"
                      f" back): {b.get('buffer')} is full {100 * (b.get('full_fraction') or 0):.0f}% of the time")
    if str(b.get("resource", "")).startswith("memory"):
        return diff, ("no DRAM banks or scheduler in the analytic model (only average turnarounds, rank gaps and"
                      " refresh): the memory limits here")
    return diff, "the approximate MVA's queueing (no blocking, no order of packets within a link)"
