"""An analytic model beside the simulation: the board and workload as a closed queueing network, solved by
approximate mean value analysis (Schweitzer's, with a fork-join maximum for the probes).

Every thread is a closed class of ``window`` customers (its lines in flight; a latency chase one; a paced
thread ``core.requests`` of them with a think time of ``requests / rate`` per line, so that it cannot go
faster than its rate).  A miss visits:

* **queueing stations**, each with the service demand the miss puts on it: every link direction (the bytes
  of each packet crossing it: request 8, probe 8, probe response 4, read data 68, source-done 4, victim 72,
  and a 4-byte NOP on the reverse direction for each packet received), the home memory (a line's burst on
  the DRAM bus, or 64 B at a FIFO memory's sustained rate; a write's victim another), and each probed
  node's probe lookup (``probe.lookup`` shared by ``sri.probe_queue`` slots, as Seidmann's approximation
  of a multi-server station: a queue of ``lookup / slots`` and a delay of the rest);
* **delay stations**, fixed latencies: the SRI, each crossbar and link flight on the way, the memory
  controller's latency and the DRAM's CAS latency.

A read's latency is its request's path to the home, then the longer of the memory path (DRAM and the data
back) and the slowest probe's round trip (to the probed node, its lookup, the response to the requester);
a write's miss buffer stays busy ``core.hold.w`` more.  The throughput of a class is its customers over its
cycle; each station's residence time grows with the customers of the other classes queued there (and of
its own, less one).

What it lacks, by design: finite buffers and the credit round trips that fill them, so it cannot show a
link held below its bandwidth by a full buffer, or a bottleneck that is a queue rather than a busy server;
bank conflicts, turnarounds and refresh of the DRAM; the order of packets within a link.  ``compare``
names those where the two disagree.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from . import __version__
from .case import Case
from .model.system import DEFAULT_SIZE_BYTES
from .topology import load_topology
from .workload import Workload

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


HEADER_BYTES = {"read_resp": 4, "victim": 8}   # a data packet's command part: what a later hop waits for (cut-through)


def _path(topology, a: int, b: int, kind: str, demands: dict, weight: float) -> list:
    """The stations of a packet of ``kind`` from a to b, adding its bytes to ``demands`` (and a credit NOP on each
    reverse direction); returns the path as ``[(station, service ns it waits for, fixed delay ns)]``: each link
    direction, then its flight and the crossbar it enters.  A data packet forwarded on is routed on its header
    (cut-through): after the first hop it waits for its header's serialisation only."""
    out = []
    for k, (src, dst) in enumerate(_hops(topology, a, b)):
        link = topology.link(src, dst)
        ns_per_byte = 1.0 / (link.bandwidth_GBps(src, dst) * link.count)
        key = ("link", src, dst)
        demands[key] = demands.get(key, 0.0) + weight * PACKET_BYTES[kind] * ns_per_byte
        back = ("link", dst, src)
        demands[back] = demands.get(back, 0.0) + weight * NOP * ns_per_byte
        waits = PACKET_BYTES[kind] if k == 0 else HEADER_BYTES.get(kind, PACKET_BYTES[kind])
        out.append((key, waits * ns_per_byte, link.latency_ns + topology.node(dst).xbar_latency_ns))
    return out


def _memory_service_ns(node) -> float:
    """A line's time on the memory: a DRAM burst over its channels, or 64 B at a FIFO memory's sustained rate."""
    if node.memory_model == "dram" and node.dram is not None:
        return node.dram.burst_ns / node.dram.channels   # the channels serve lines side by side
    sustained = node.memory_sustained_GBps or node.memory_bandwidth_GBps or 1.0
    return LINE / sustained


def _turnaround_ns(node) -> float:
    """What a fill of a thread that writes waits for on a DRAM bus: its own write-back just before it (the
    write's burst, and the bus turning around to write and back, tRTW + tWTR).  Zero for other memories."""
    if node.memory_model == "dram" and node.dram is not None:
        t = node.dram.timings_ns
        return node.dram.burst_ns + t["tRTW"] + t["tWTR"]
    return 0.0


def _memory_delay_ns(node, scattered: bool) -> float:
    """The memory's fixed latency: the controller's, and a DRAM's CAS latency (and, for a chase's scattered
    lines, the precharge and activation of a row that is not open)."""
    if node.memory_model == "dram" and node.dram is not None:
        t = node.dram.timings_ns
        return node.memory_latency_ns + t["CL"] + (t["tRP"] + t["tRCD"] if scattered else 0.0)
    return node.memory_latency_ns


def _build(topology, spec, foreground: bool, coherence: str) -> _Class:
    node, home = topology.node(spec.node), topology.node(spec.mem_node)
    pattern = OP_TRANSACTIONS[spec.op]
    customers = 1 if spec.op == "l" else node.window[spec.op]
    think = 0.0
    if spec.rate_GBps:
        customers = max(customers, node.requests or customers)
        think = customers * LINE / spec.rate_GBps      # ns per line of a customer, at the rate
    c = _Class(spec.label, spec.node, spec.mem_node, spec.op, customers, think, 0.0, foreground)
    share = 1.0 / len(pattern)
    memory_key = ("memory", spec.mem_node)
    for is_write in pattern:
        request = [(None, 0.0, node.sri_latency_ns + node.xbar_latency_ns)]
        request += _path(topology, spec.node, spec.mem_node, "read_req", c.demands, share)
        memory = [(memory_key, _memory_service_ns(home), _memory_delay_ns(home, spec.op == "l")
                   + (_turnaround_ns(home) if any(pattern) else 0.0))]
        c.demands[memory_key] = c.demands.get(memory_key, 0.0) + share * _memory_service_ns(home)
        data = _path(topology, spec.mem_node, spec.node, "read_resp", c.demands, share)
        if spec.mem_node == spec.node:
            data = [(None, 0.0, node.xbar_latency_ns)]
        branches = [memory + data]
        if coherence == "broadcast":
            for target in topology.node_ids:
                if target == spec.mem_node:
                    continue
                probe = _path(topology, spec.mem_node, target, "probe", c.demands, share)
                lookup = topology.node(target)
                key = ("probe", target)
                slots = lookup.sri_probe_queue
                c.demands[key] = c.demands.get(key, 0.0) + share * lookup.probe_lookup_ns / slots
                probe.append((key, lookup.probe_lookup_ns / slots, lookup.probe_lookup_ns * (1 - 1 / slots)))
                if target != spec.node:
                    probe += [(None, 0.0, lookup.sri_latency_ns + lookup.xbar_latency_ns)]
                    probe += _path(topology, target, spec.node, "probe_resp", c.demands, share)
                branches.append(probe)
        if spec.mem_node != spec.node:
            _path(topology, spec.node, spec.mem_node, "source_done", c.demands, share)
        if is_write:
            _path(topology, spec.node, spec.mem_node, "victim", c.demands, share)
            c.demands[memory_key] += share * _memory_service_ns(home)
            c.hold_ns += share * (node.hold_ns or {}).get(spec.op, 0.0)
        c.paths.append((request, branches))
    return c


def _compile(c: _Class, index: dict) -> list:
    """``c``'s transactions as ``[(request, [branch, ...])]``, each path ``(fixed delay ns, [(station, service)])``
    with stations as indices: what the solver's inner loop reads."""
    def path(entries) -> tuple:
        return (sum(delay for _, _, delay in entries),
                [(index[station], service) for station, service, _ in entries if station is not None])
    return [(path(request), [path(b) for b in branches]) for request, branches in c.paths]


def _cycle_ns(compiled: list, factor: list) -> float:
    """Mean latency of a transaction: each station's service stretched by ``factor`` (1 + what waits there),
    plus the fixed delays; the longest of the branches after the request."""
    total = 0.0
    for (delay, visits), branches in compiled:
        total += delay + sum(factor[i] * service for i, service in visits)
        total += max(d + sum(factor[i] * service for i, service in v) for d, v in branches)
    return total / len(compiled)


def analyze(topology, threads, background=(), size_bytes: int = DEFAULT_SIZE_BYTES) -> AnalyticResult:
    """Solve ``threads`` (and paced ``background``) on ``topology`` by approximate MVA (see the module)."""
    start = time.perf_counter()
    topology = load_topology(topology)
    workload = Workload.build(threads, background)
    workload.check(topology)
    classes = [_build(topology, s, True, topology.coherence) for s in workload.threads]
    classes += [_build(topology, s, False, topology.coherence) for s in workload.background]
    stations = sorted({k for c in classes for k in c.demands}, key=str)
    index = {k: i for i, k in enumerate(stations)}
    compiled = {c.label: _compile(c, index) for c in classes}
    demand = {c.label: [c.demands.get(k, 0.0) for k in stations] for c in classes}
    queue = {c.label: [0.0] * len(stations) for c in classes}
    throughput = {c.label: 0.0 for c in classes}
    places = range(len(stations))
    iterations = 0
    for iterations in range(1, ITERATIONS + 1):
        total = [sum(queue[c.label][i] for c in classes) for i in places]
        changed = 0.0
        factors = {}
        for c in classes:
            # residence per unit demand at each station: 1 + what waits there (own customers less one)
            own = queue[c.label]
            factors[c.label] = factor = [1.0 + QUEUEING * (total[i] - own[i] / c.customers) for i in places]
            latency = _cycle_ns(compiled[c.label], factor)
            x = c.customers / (latency + c.hold_ns + c.think_ns / len(c.paths))
            changed = max(changed, abs(x - throughput[c.label]) / max(x, 1e-12))
            throughput[c.label] = x
        for c in classes:
            d, f = demand[c.label], factors[c.label]
            x = throughput[c.label]
            queue[c.label] = [x * d[i] * f[i] for i in places]
        if changed < TOLERANCE:
            break
    # no station serves more than it can: the classes through one offered more are slowed to fit (the
    # asymptotic bound, which the halved queueing alone does not keep near saturation)
    for _ in range(len(stations) + 1):
        over = False
        for k in stations:
            offered = sum(throughput[c.label] * c.demands.get(k, 0.0) for c in classes)
            if offered > 1.0 + 1e-12:
                over = True
                for c in classes:
                    if c.demands.get(k, 0.0) > 0.0:
                        throughput[c.label] /= offered
        if not over:
            break
    utilization = {k: sum(throughput[c.label] * c.demands.get(k, 0.0) for c in classes) for k in stations}
    lines = max(1, size_bytes // LINE)
    out_threads: list[dict] = []
    for c in classes:
        x = throughput[c.label]
        per_line_ns = len(c.paths) / x if x else math.inf
        # Little's law over a window slot: what a transaction took, given the throughput (a bound may have slowed it)
        latency = c.customers / x - c.hold_ns - c.think_ns / len(c.paths) if x else math.inf
        out_threads.append({"spec": c.label, "role": "foreground" if c.foreground else "background",
                            "time_ns": lines * per_line_ns if c.foreground else None, "bandwidth_GBps": LINE * x,
                            "latency_ns": {"mean": latency}, "percent_of_local_read": None})
    makespan = max(lines * len(c.paths) / throughput[c.label] if throughput[c.label] else math.inf
                   for c in classes if c.foreground)
    for t in out_threads:
        if t["role"] == "background":
            t["time_ns"] = makespan
    links = [{"src": k[1], "dst": k[2], "utilization": min(1.0, u), "offered": u}
             for k, u in utilization.items() if k[0] == "link"]
    memory = [{"node": k[1], "utilization": min(1.0, u), "offered": u} for k, u in utilization.items() if k[0] == "memory"]
    probes = [{"node": k[1], "utilization": min(1.0, u)} for k, u in utilization.items() if k[0] == "probe"]
    busiest = max(((f"link {k[1]}->{k[2]}" if k[0] == "link" else f"memory N{k[1]}" if k[0] == "memory"
                    else f"probes N{k[1]}", u) for k, u in utilization.items()), key=lambda kv: kv[1],
                  default=("none", 0.0))
    bottleneck = {"resource": busiest[0], "utilization": min(1.0, busiest[1]),
                  "limit": "busy" if busiest[1] >= SATURATED else "none"}
    data = {"version": __version__, "topology": topology.name, "mode": "analytic", "size_bytes": size_bytes,
            "threads": out_threads, "makespan_ns": makespan, "links": sorted(links, key=lambda r: (r["src"], r["dst"])),
            "memory": sorted(memory, key=lambda r: r["node"]), "probes": probes, "bottleneck": bottleneck,
            "solve_s": time.perf_counter() - start, "iterations": iterations}
    return AnalyticResult(data)


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
    lines.append(f"bottleneck: {b['resource']} ({100 * b['utilization']:.1f}% busy)" if b["limit"] == "busy" else
                 f"bottleneck: nothing saturates; the busiest is {b['resource']} at {100 * b['utilization']:.1f}%")
    lines.append(f"solved in {1e3 * data['solve_s']:.1f} ms; the analytic model has no finite buffers, credit loops"
                 " or DRAM banks: docs/analytic.md says where it parts from the simulation")
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
        return diff, (f"no finite buffers in the analytic model: {b.get('buffer')} is full"
                      f" {100 * (b.get('full_fraction') or 0):.0f}% of the time")
    if str(b.get("resource", "")).startswith("memory"):
        return diff, "no DRAM banks, turnarounds or refresh in the analytic model: the memory limits here"
    return diff, "the approximate MVA's queueing (no blocking, no order of packets within a link)"
