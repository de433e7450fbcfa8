"""The analytic model's solver (``simnuma.analytic``): Schweitzer's approximate MVA with bounds.

Every class's throughput is its customers over its cycle: the latency of a transaction (its request, then the
longest of its branches, each visit to a queueing station stretched by what waits there, plus the fixed delays
and what a memory adds at its load), its miss buffer's hold, and no less than its pace.  What waits at a station is
the other classes' queues and this class's less one customer's share (Schweitzer); services here are constant (a
packet's serialisation, a burst), so it counts half, as M/D/1 waits half of M/M/1.

Then, in every iteration, two kinds of bound: no station is offered more than it serves, and no buffer pool
turns its slots round faster than they come back.  A link's receive buffer is held from the use of its credit
until the next stage takes the packet and its credit is back (``flows.py``), plus whatever the packet waits for
its turn on the link; a node's DRAM queue entry from a read's admission until its data leave, a write-back's
until its burst has ended.  A class through a station or pool offered more is slowed to fit, and the other
classes see it at the slower rate: the bounds are part of the fixed point.
"""
from __future__ import annotations

from operator import mul

from .flows import MEMORY, ThreadClass
from .memory import STREAMS, MemoryStation

__all__ = ["Network"]

# Service times here are constant (a packet's serialisation, a line's burst): an arrival waits about half what
# it would behind exponential services (M/D/1 against M/M/1), so what waits at a station counts half.
QUEUEING = 0.5
ITERATIONS = 2000
TOLERANCE = 1e-4   # relative change of every throughput between iterations: far inside the model's own error
ROUNDS = 20        # solutions with the bounds' rates held, at most (each slows at least one class further)
SATURATED = 0.95
MOST_POOLS = 8     # the fullest buffer pools a result lists


class Network:
    """The classes of one case on their stations and buffer pools, ready to solve."""

    most_iterations = ITERATIONS

    def __init__(self, topology, classes: list, cache: dict):
        self.classes = classes
        self.memories = memories = _memories(topology, classes, cache)
        demands = {}
        for c in classes:
            m = memories[c.home]
            demands[c.label] = dict(c.demands)
            demands[c.label][("memory", c.home)] = m.read_ns + c.writes * m.write_ns
        self.stations = stations = sorted({k for c in classes for k in demands[c.label]})   # ("link", 0, 1), ...
        self.index = index = {k: i for i, k in enumerate(stations)}
        layout = tuple(stations)
        self.compiled = {}
        for c in classes:
            m = memories[c.home]
            key = ("compiled", c.node, c.home, c.op, layout, m.read_ns, m.delay_ns, m.scattered_ns)
            if key not in cache:
                cache[key] = _compile(c, index, m)
            self.compiled[c.label] = cache[key]
        self.demand = {c.label: [demands[c.label].get(k, 0.0) for k in stations] for c in classes}
        # memories whose latency depends on their load, with the station index and the classes there
        self.loaded = [(index[("memory", home)], m, [c for c in classes if c.home == home])
                       for home, m in memories.items() if m.model == "curve" or m.episode_ns]
        self._limits(topology, cache, layout)

    def _limits(self, topology, cache: dict, layout: tuple) -> None:
        """What the bounds check: per buffer pool, what each class holds (with the link stations where its packets
        also queue); per node, its DRAM queue's entries and the classes that use it."""
        self.pool_terms = {}
        for c in self.classes:
            key = ("pools", c.node, c.home, c.op, layout)
            if key not in cache:
                cache[key] = [(k, held, [(self.index[station], ns) for station, ns in c.holds.get(k, ())])
                              for k, held in c.credits.items()]
            self.pool_terms[c.label] = cache[key]
        # each node's DRAM queue: a read holds an entry for its time in the memory, a write-back for its burst
        self.queues = [(self.index[("memory", home)], topology.node(home).memory_queue, m,
                        [(c.label, c.writes) for c in self.classes if c.home == home])
                       for home, m in self.memories.items()]

    def solve(self) -> tuple:
        """``(throughput, latency, iterations)`` at the fixed point (module docstring).  The bounds are checked at
        the solution; a class they slow is held at that rate (never faster) and the rest solved again, so that they
        see it at its slower rate, until nothing more has to be slowed."""
        caps: dict = {}
        iterations = 0
        state = None
        for _ in range(ROUNDS):
            throughput, latencies, used, state = self._iterate(caps, state)   # from where the last round ended
            iterations += used
            bounded = dict(throughput)
            self.loads = self._bound(bounded, state)
            slowed = {label: x for label, x in bounded.items() if x < throughput[label] * (1.0 - 1e-6)}
            if not slowed:
                break
            caps.update(slowed)
        return bounded, latencies, iterations

    def _iterate(self, caps: dict, start) -> tuple:
        """Schweitzer's iteration with the classes in ``caps`` held at no more than their cap, from ``start`` (a
        previous round's state) or from empty queues: ``(throughput, latency, iterations, (factors, waits, total
        queue, queues))`` at the fixed point."""
        classes = self.classes
        width = len(self.stations)
        if start is None:
            queue = {c.label: [0.0] * width for c in classes}
            waits = {c.label: [0.0] * width for c in classes}
        else:
            _factors, waits, _total, queue = start
        # a local writer's fill reaches its DRAM right behind its own write-back (they leave the core together, the
        # write-back first), so it meets the write episode from its start; any other read, a remote writer's fill
        # included (its request overtakes the write-back's data on the first link), meets it at a random point.
        # A local triad's reads all count as behind: only one transaction in three is issued as a write-back
        # leaves, but under Family 10h's write bursts a drain holds every read queued at the memory (counting
        # only those puts the X6440's idle triads 6% fast; docs/analytic.md)
        behind = {c.label for c in classes if c.writes and c.home == c.node}
        # per memory whose latency depends on its load: (station, a read's time there, the memory, [(label,
        # write-backs per transaction, the share of an episode its reads wait)])
        loaded = [(i, m.read_ns, m, [(c.label, c.writes, 1.0 if c.label in behind else m.residual) for c in there])
                  for i, m, there in self.loaded]
        # per class, what the loop reads: (label, paths, demands, customers, shortest cycle, hold, cap)
        rows = [(c.label, self.compiled[c.label], self.demand[c.label], c.customers, c.period_ns, c.hold_ns,
                 caps.get(c.label)) for c in classes]
        throughput = {c.label: 0.0 for c in classes}
        latencies = {c.label: 0.0 for c in classes}
        factors: dict = {}
        alone = len(classes) == 1
        iterations = 0
        for iterations in range(1, ITERATIONS + 1):
            total = queue[rows[0][0]] if alone else [sum(column) for column in zip(*queue.values())]
            changed = 0.0
            solved = {}
            for label, compiled, _demand, customers, period, hold, cap in rows:
                # residence per unit demand at each station: 1 + what waits there (own customers less one)
                less = 1.0 / customers
                factors[label] = factor = [1.0 + QUEUEING * (t - o * less) for t, o in zip(total, queue[label])]
                # what a memory adds at its load, as a stretch of a read's time there
                stretched = factor
                if loaded:
                    stretched = factor[:]
                    mine = waits[label]
                    for i, read_ns, _m, _there in loaded:
                        stretched[i] += mine[i] / read_ns
                latencies[label] = latency = _cycle_ns(compiled, stretched)
                # a paced thread issues no faster than its rate, whatever its lines take
                cycle = latency + hold
                x = customers / (cycle if cycle > period else period)
                if cap is not None and x > cap:
                    x = cap
                before = throughput[label]
                if abs(x - before) > changed * x:
                    changed = abs(x - before) / x if x else 0.0
                solved[label] = x
            throughput = solved
            for label, _compiled, demand, *_ in rows:
                x = throughput[label]
                queue[label] = [x * d * f for d, f in zip(demand, factors[label])]
            for i, _read_ns, m, there in loaded:
                reads = sum([throughput[label] for label, _w, _share in there])
                writes = sum([throughput[label] * w for label, w, _share in there])
                wait = m.wait_ns(reads, writes)   # at this round's load, for the next round ...
                for label, _w, share in there:
                    # ... halfway from the last: a steep curve would otherwise swing the load round a fixed point
                    waits[label][i] = 0.5 * (waits[label][i] + wait * share)
            if changed < TOLERANCE:
                break
        total = [sum(column) for column in zip(*queue.values())]
        return throughput, latencies, iterations, (factors, waits, total, queue)

    def _demands(self, state) -> dict:
        """What each class takes of every buffer pool and DRAM queue per transaction at the solver's ``state``:
        ``{label: [(resource, share)]}``.  A packet holding a link's credit also waits for the other classes'
        packets on the link (its own class's, where the pool is what holds them back, wait for credits, not on the
        link)."""
        factors, waits, total, queue = state
        out: dict = {}
        for c in self.classes:
            label = c.label
            others = [t - m for t, m in zip(total, queue[label])] if len(self.classes) > 1 else None
            terms = out[label] = []
            for k, held, queued in self.pool_terms[label]:
                if others is not None and queued:
                    held += QUEUEING * sum([others[i] * serial for i, serial in queued])
                terms.append((k, held))
        for i, slots, m, there in self.queues:
            for label, writes in there:
                f = factors[label][i]
                hold = m.delay_ns + m.bus_hold_ns * f + waits[label][i] + writes * m.write_hold_ns * f
                out[label].append((("queue", self.stations[i][1]), hold / slots))
        return out

    def _loads(self, throughput: dict, demands: dict) -> dict:
        """Every resource's share in use at ``throughput``: stations (their utilisation), buffer pools (slots in
        use) and DRAM queues (entries in use)."""
        loads = dict(zip(self.stations, (sum(column) for column in zip(
            *([x * d for d in self.demand[label]] for label, x in throughput.items())))))
        for label, terms in demands.items():
            x = throughput[label]
            for k, d in terms:
                loads[k] = loads.get(k, 0.0) + x * d
        return loads

    def _bound(self, throughput: dict, state) -> dict:
        """Slow the classes through any station, buffer pool or DRAM queue offered more than it can take, in a
        fixed order (module docstring), until none is; the resources' loads then."""
        demands = self._demands(state)
        for _ in range(8):
            loads = self._loads(throughput, demands)
            over = sorted(k for k, u in loads.items() if u > 1.0 + 1e-12)
            if not over:
                return loads
            for k in over:
                users = ([(label, d[self.index[k]]) for label, d in self.demand.items() if d[self.index[k]]]
                         if k in self.index else
                         [(label, d) for label, terms in demands.items() for r, d in terms if r == k])
                offered = sum([throughput[label] * d for label, d in users])
                if offered > 1.0 + 1e-12:
                    for label, _d in users:
                        throughput[label] /= offered
        return self._loads(throughput, demands)

    def usage(self) -> dict:
        """The result's ``links``, ``memory``, ``probes``, ``credits`` (the fullest link buffer pools, those at
        least a quarter in use) and ``bottleneck``, at the solution."""
        loads = self.loads
        utilization = {k: u for k, u in loads.items() if k[0] in ("link", "memory", "probe")}
        links = [{"src": k[1], "dst": k[2], "utilization": min(1.0, u), "offered": u}
                 for k, u in utilization.items() if k[0] == "link"]
        memory = [{"node": k[1], "utilization": min(1.0, u), "offered": u}
                  for k, u in utilization.items() if k[0] == "memory"]
        probes = [{"node": k[1], "utilization": min(1.0, u)} for k, u in utilization.items() if k[0] == "probe"]
        pools = sorted(((u, k) for k, u in loads.items() if k[0] in ("credit", "data credit") and u >= 0.25),
                       reverse=True)[:MOST_POOLS]
        station, busy = max(utilization.items(), key=lambda kv: kv[1], default=(("none",), 0.0))
        queue, entries = max(((k, u) for k, u in loads.items() if k[0] == "queue"), key=lambda kv: kv[1],
                             default=(("queue", -1), 0.0))
        if pools and pools[0][0] >= SATURATED and pools[0][0] > max(busy, entries):   # credits the limit
            resource, u, limit = _pool_name(pools[0][1]), pools[0][0], "credits"
        elif entries >= SATURATED and entries > busy:   # the DRAM queue's entries the limit
            resource, u, limit = f"N{queue[1]} DRAM queue", entries, "queue"
        else:
            resource, u, limit = _station_name(station), busy, "busy"
        bottleneck = {"resource": resource, "utilization": min(1.0, u), "limit": limit if u >= SATURATED else "none"}
        return {"links": sorted(links, key=lambda r: (r["src"], r["dst"])),
                "memory": sorted(memory, key=lambda r: r["node"]), "probes": probes,
                "credits": [{"pool": _pool_name(k), "in_use": min(1.0, u)} for u, k in pools],
                "bottleneck": bottleneck}


def _memories(topology, classes, cache: dict) -> dict:
    """Each home memory of ``classes`` as the solver sees it, from every thread that uses it (the read share
    counted at one transaction per customer of each); kept per board and mix of threads."""
    out = {}
    for home in sorted({c.home for c in classes}):
        there = [c for c in classes if c.home == home]
        key = ("memory", home, tuple(sorted((c.op, c.customers, c.writes) for c in there)))
        if key not in cache:
            reads = sum(c.customers for c in there)
            writes = sum(c.customers * c.writes for c in there)
            cache[key] = MemoryStation(topology.node(home), sum(STREAMS[c.op] for c in there), writes > 0.0,
                                       reads / (reads + writes), tuple((c.op, c.customers) for c in there))
        out[home] = cache[key]
    return out


def _compile(c: ThreadClass, index: dict, memory: MemoryStation) -> list:
    """``c``'s transactions as ``[(request, [branch, ...])]``, each path ``(fixed delay ns, stations, services)``
    with stations as indices: what the solver's inner loop reads.  A visit to the home memory takes a read's time
    there and adds the memory's latency (and, for a chase, a row opened per line) to the path's fixed delay."""
    fixed_ns = memory.delay_ns + (memory.scattered_ns if c.op == "l" else 0.0)

    def path(entries) -> tuple:
        delay = 0.0
        stations, services = [], []
        for station, service, d in entries:
            delay += d
            if station is None:
                continue
            if service is MEMORY:
                delay += fixed_ns
                service = memory.read_ns
            stations.append(index[station])
            services.append(service)
        return (delay, stations, services)
    return [(path(request), [path(b) for b in branches]) for request, branches in c.paths]


def _cycle_ns(compiled: list, factor: list) -> float:
    """Mean latency of a transaction: each station's service stretched by ``factor`` (1 + what waits there, and
    at a memory what it adds at its load), plus the fixed delays; the longest of the branches after the request."""
    total = 0.0
    stretch = factor.__getitem__
    for (delay, stations, services), branches in compiled:
        total += delay + sum(map(mul, map(stretch, stations), services))
        longest = 0.0
        for delay, stations, services in branches:
            t = delay + sum(map(mul, map(stretch, stations), services))
            if t > longest:
                longest = t
        total += longest
    return total / len(compiled)


def _station_name(key: tuple) -> str:
    if key[0] == "link":
        return f"link {key[1]}->{key[2]}"
    return f"memory N{key[1]}" if key[0] == "memory" else f"probes N{key[1]}" if key[0] == "probe" else "none"


def _pool_name(key: tuple) -> str:
    """``link 0->1 probe buffers``: a buffer pool in words (``data buffers`` for a channel's data)."""
    kind, src, dst, vc = key
    return f"link {src}->{dst} {vc} {'data buffers' if kind == 'data credit' else 'buffers'}"
