"""The analytic model's solver (``simnuma.analytic``): Schweitzer's approximate MVA with bounds.

Every class's throughput is its customers over its cycle: the latency of a transaction (its request, then the
longest of its branches, each visit to a queueing station stretched by what waits there, plus the fixed delays
and what a memory adds at its load), its miss buffer's hold, and no less than its pace.  What waits at a station is
the other classes' queues and this class's less one customer's share (Schweitzer); services here are constant (a
packet's serialisation, a burst), so it counts half, as M/D/1 waits half of M/M/1.

Then the bounds: no station is offered more than it serves, no buffer pool turns its slots round faster than
they come back, no DRAM queue holds more lines than its entries.  A link's receive buffer is held from the use of
its credit until the next stage takes the packet and its credit is back (``flows.py``), plus whatever the packet
waits behind other threads' packets on the link; a node's DRAM queue entry from a read's admission until its
data leave, a write-back's until its burst has ended.  The solution is found again in rounds, with the classes
an overloaded resource holds back capped at what it lets through (``Network.solve``), so that the others see
them at their slower rate.
"""
from __future__ import annotations

from .flows import MEMORY, NO_STATION, ThreadClass
from .memory import MemoryStation, home_memories

__all__ = ["Network"]

# a path compiled for the inner loop: (fixed delay ns, station indices, service ns at each), and a transaction:
# its request's path, then its branches
Path = tuple[float, tuple[int, ...], tuple[float, ...]]
Transaction = tuple[Path, tuple[Path, ...]]

# Service times here are constant (a packet's serialisation, a line's burst): an arrival waits about half what
# it would behind exponential services (M/D/1 against M/M/1), so what waits at a station counts half.
QUEUEING = 0.5
TOLERANCE = 1e-4   # relative change of every throughput between iterations: far inside the model's own error
ROUNDS = 100       # rounds of the solution, at most (classes held at the bounds' rates, or iterations going on)
ROUND_ITERATIONS = 25   # iterations a round takes at most before its bounds are checked
CAPS_SETTLE = 5e-3  # the caps have settled when none moves by more than this share between rounds (the results
#                    move by under 0.3% against 1e-3)
SATURATED = 0.95
MOST_POOLS = 8     # the fullest buffer pools a result lists


class Network:
    """The classes of one case on their stations and buffer pools, ready to solve."""

    def __init__(self, topology, classes: list, cache: dict, closed: frozenset = frozenset()):
        self.topology, self.classes, self.cache = topology, classes, cache
        self.closed = closed   # home memories whose rows the idle timer closes between trains (memory.idle_closures)
        self.last: dict = {}   # the throughputs the last round ended with
        self._setup(None)

    def _setup(self, shares: dict | None) -> None:
        """Stations, demands and compiled paths, with each home memory at ``shares`` of reads (a curve memory's
        peak depends on it), or at the share its threads' customers give."""
        classes, cache = self.classes, self.cache
        self.memories = memories = home_memories(self.topology, classes, cache, shares, self.closed)
        memory_demand = {c.label: memories[c.home].read_ns + c.writes * memories[c.home].write_ns for c in classes}
        # every station and buffer pool the board has, numbered once for all its cases: a case's classes use some
        # of them (the others add nothing to any sum), and what is compiled against the numbers is kept per flow
        stations, resources, index = cache["stations"]   # (flows.board_cache)
        self.stations, self.resources, self.index = stations, resources, index
        self.compiled: dict[str, tuple[Transaction, ...]] = {}
        self.demand: dict[str, list[float]] = {}
        self.uses: dict[str, list[int]] = {}
        used: set[int] = set()
        for c in classes:
            m = memories[c.home]
            key = ("compiled", c.node, c.home, c.op, m.read_ns, m.delay_ns, m.scattered_ns)
            if key not in cache:
                cache[key] = _compile(c, m)
            self.compiled[c.label] = cache[key]
            home = index[("memory", c.home)]
            row_key = ("row", c.node, c.home, c.op)
            if row_key not in cache:
                cache[row_key] = _row(c.demands, len(stations), home)
            row, uses = cache[row_key]
            row = row[:]
            row[home] = memory_demand[c.label]
            self.demand[c.label] = row
            self.uses[c.label] = uses
            used.update(uses)
        self.used = sorted(used)   # the stations this case's classes use, in the board's order
        # memories whose latency depends on their load, with the station index and the classes there
        self.loaded = [(index[("memory", home)], m, [c for c in classes if c.home == home])
                       for home, m in memories.items() if m.model == "curve" or m.episode_ns]
        self._limits(self.topology, cache)

    def _limits(self, topology, cache: dict) -> None:
        """What the bounds check: per buffer pool, what each class holds (with the link stations where its packets
        also queue); per node, its DRAM queue's entries and the classes that use it."""
        self.pool_terms: dict[str, list[tuple[int, float, tuple]]] = {}
        for c in self.classes:
            key = ("pools", c.node, c.home, c.op)
            if key not in cache:
                cache[key] = [(k, held, c.holds.get(k, ())) for k, held in c.credits.items()]
            self.pool_terms[c.label] = cache[key]
        # each node's DRAM queue: a read holds an entry for its time in the memory, a write-back for its burst
        self.queues = [(self.index[("memory", home)], self.index[("queue", home)], topology.node(home).memory_queue, m,
                        [(c.label, c.writes, m.scattered_ns if c.op == "l" else 0.0)
                         for c in self.classes if c.home == home])
                       for home, m in self.memories.items()]

    def solve(self) -> tuple:
        """``(throughput, latency, iterations)`` at the fixed point (module docstring).  Each round solves with some
        classes held at a cap, then reads every resource's load at that solution: a class is held to what its
        fullest resource lets through (an overloaded one makes all its classes wait the same, ``_caps``), and a
        held class whose resources have room again may rise, until the caps settle.  A curve memory's peak
        follows the read share the round's throughputs give."""
        caps: dict = {}
        state = None
        iterations = 0
        self.offered: dict[int, float] = {}
        self.rounds = 0
        for self.rounds in range(1, ROUNDS + 1):
            # from the last round's end; a round that has not converged in ROUND_ITERATIONS has its bounds
            # checked anyway (an overloaded network converges slowly, a capped one fast), and goes on next round
            throughput, latencies, used, state, converged = self._iterate(caps, state)
            iterations += used
            demands = self._demands(state)
            self.loads = self._loads(throughput, demands)
            if not self.offered:
                self.offered = self.loads   # what the classes asked for, before any bound
            settled = self._reshare(throughput)
            new_caps = self._caps(throughput, demands, self.loads, caps, latencies)
            held = set(new_caps) == set(caps) and all(abs(new_caps[k] - caps[k]) <= CAPS_SETTLE * caps[k] for k in caps)
            if converged and settled and held:
                break
            caps = new_caps
            if not settled:
                state = None   # the stations changed with the memory's peak: start again from empty queues
        return throughput, latencies, iterations

    def _reshare(self, throughput: dict) -> bool:
        """Whether every curve memory's read share is what the throughputs give; if not, set them up again so."""
        shares = {}
        for home, m in self.memories.items():
            if m.model != "curve":
                continue
            there = [c for c in self.classes if c.home == home]
            reads = sum(throughput[c.label] for c in there)
            writes = sum(throughput[c.label] * c.writes for c in there)
            if reads + writes > 0.0:
                shares[home] = round(reads / (reads + writes), 3)
        if all(abs(share - self.memories[home].read_share) < 0.005 for home, share in shares.items()):
            return True
        self._setup(shares)
        return False

    def _caps(self, throughput: dict[str, float], demands: dict[str, list[tuple[int, float]]], loads: dict[int, float],
              caps: dict, latencies: dict) -> dict:
        """The next round's caps (``solve``).  An overloaded resource makes every class through it wait the same
        extra time a transaction, as a queue served in turn would: the wait at which its classes, each at its
        customers over its cycle and that wait (no faster than its pace), take exactly what it serves.  A held
        class whose resources all have room may rise as far as the fullest lets it."""
        over = [k for k, u in loads.items() if u > 1.0 + 1e-12]
        if not over and not caps:
            return {}   # nothing overloaded, nothing held: the common case
        rows = {c.label: (c.customers, latencies[c.label] + c.hold_ns, c.period_ns) for c in self.classes}
        scale: dict = {}
        for k in over:
            if k < len(self.stations):
                users = [(label, dem[k]) for label, dem in self.demand.items() if dem[k]]
            else:
                users = [(label, d) for label, terms in demands.items() for r, d in terms if r == k]
            wait = _common_wait([(d,) + rows[label] for label, d in users])
            for label, _d in users:
                customers, cycle, period = rows[label]
                x = customers / max(cycle + wait, period)
                s = x / throughput[label] if throughput[label] else 1.0
                scale[label] = min(scale.get(label, s), s)
        out = {}
        for label, x in throughput.items():
            if label in scale and scale[label] < 1.0 - 1e-9:
                out[label] = x * scale[label]
            elif label in caps:   # held, and its resources have room: it may rise to the fullest
                dem = self.demand[label]
                fullest = max([loads[i] for i, d in enumerate(dem) if d]
                              + [loads[k] for k, _d in demands[label]])
                out[label] = x / fullest if fullest > 0.0 else caps[label]
        return out

    def _iterate(self, caps: dict, start) -> tuple:
        """Schweitzer's iteration with the classes in ``caps`` held at no more than their cap, from ``start`` (a
        previous round's state) or from Schweitzer's start: ``(throughput, latency, iterations, (factors, waits,
        total queue, queues), converged)`` where it stopped, at the fixed point or after ROUND_ITERATIONS.

        The classes are numbered here, in their order, and every sum is a loop in that order: the compiled solver
        (``simnuma.model.native``) and its source add the same numbers in the same order."""
        classes = self.classes
        n = len(classes)
        width = len(self.stations)
        labels = [c.label for c in classes]
        demand: list[list[float]] = [self.demand[label] for label in labels]
        paths: list[tuple[Transaction, ...]] = [self.compiled[label] for label in labels]
        customers = [float(c.customers) for c in classes]
        period = [c.period_ns for c in classes]
        hold = [c.hold_ns for c in classes]
        held = [c.label in caps for c in classes]
        cap = [float(caps.get(c.label, 0.0)) for c in classes]
        queue: list[list[float]]
        waits: list[list[float]]
        if start is None:
            # Schweitzer's start: each class's customers spread over the stations it uses, as its demands are
            queue = []
            for k in range(n):
                whole = _total(demand[k]) or 1.0
                queue.append([customers[k] * d / whole for d in demand[k]])
            waits = [[0.0] * width for _ in range(n)]
            throughput = [0.0] * n
        else:
            _factors, last_waits, _total_queue, last_queue = start
            queue = [last_queue[label] for label in labels]
            waits = [last_waits[label] for label in labels]
            throughput = [float(self.last[label]) for label in labels]
        # a local writer's fill reaches its DRAM right behind its own write-back (they leave the core together, the
        # write-back first), so it meets the write episode from its start; any other read, a remote writer's fill
        # included (its request overtakes the write-back's data on the first link), meets it at a random point.
        # A local triad's reads all count as behind: only one transaction in three is issued as a write-back
        # leaves, but under Family 10h's write bursts a drain holds every read queued at the memory (counting
        # only those puts the X6440's idle triads 6% fast; docs/analytic.md)
        number = {label: k for k, label in enumerate(labels)}
        # per memory whose latency depends on its load: (station, a read's time there, the memory, whether its
        # wait moves halfway each iteration (a curve's), [(class, write-backs per transaction, the share of an
        # episode its reads wait)])
        loaded: list[tuple[int, float, MemoryStation, bool, list[tuple[int, float, float]]]] = [
            (i, m.read_ns, m, m.model == "curve",
             [(number[c.label], c.writes, 1.0 if c.writes and c.home == c.node else m.residual) for c in there])
            for i, m, there in self.loaded]
        uses: list[list[int]] = [self.uses[label] for label in labels]
        used: list[int] = self.used
        latencies = [0.0] * n
        factors: list[list[float]] = [[] for _ in range(n)]
        changed = 0.0
        iterations = 0
        total: list[float] = []
        for iterations in range(1, ROUND_ITERATIONS + 1):
            total, base = _columns(queue, used, width)
            changed = 0.0
            solved = [0.0] * n
            for k in range(n):
                # residence per unit demand at each station: 1 + what waits there (own customers less one); where the
                # class has no demand, its own queue is empty and the factor is the base
                mine = QUEUEING / customers[k]
                own = queue[k]
                factor = base[:]
                for i in uses[k]:
                    factor[i] = base[i] - own[i] * mine
                factors[k] = factor
                # what a memory adds at its load, as a stretch of a read's time there
                stretched = factor
                if loaded:
                    stretched = factor[:]
                    own_waits = waits[k]
                    for i, read_ns, _m, _halfway, _there in loaded:
                        stretched[i] += own_waits[i] / read_ns
                latency = _cycle_ns(paths[k], stretched)
                latencies[k] = latency
                # a paced thread issues no faster than its rate, whatever its lines take
                cycle = latency + hold[k]
                x = customers[k] / (cycle if cycle > period[k] else period[k])
                if held[k] and x > cap[k]:
                    x = cap[k]
                before = throughput[k]
                if abs(x - before) > changed * x:
                    changed = abs(x - before) / x if x else 0.0
                solved[k] = x
            throughput = solved
            for k in range(n):
                queue[k] = _queue(throughput[k], demand[k], factors[k], uses[k], width)
            for i, _read_ns, m, halfway, there in loaded:
                reads = writes = 0.0
                for k, w, _share in there:
                    reads += throughput[k]
                    writes += throughput[k] * w
                wait = m.wait_ns(reads, writes)   # at this round's load, for the next round ...
                for k, _w, share in there:
                    # ... for a curve, halfway from the last: a steep curve would otherwise swing the load round a
                    # fixed point
                    before = waits[k][i]
                    after = 0.5 * (before + wait * share) if halfway else wait * share
                    waits[k][i] = after
                    # the waits settle too, measured against a read's whole time in the memory
                    scale = m.delay_ns + after
                    if abs(after - before) > changed * scale:
                        changed = abs(after - before) / scale
            if changed < TOLERANCE:
                break
        converged = changed < TOLERANCE
        out = dict(zip(labels, throughput))
        self.last = out
        total, _base = _columns(queue, used, width)
        state = (dict(zip(labels, factors)), dict(zip(labels, waits)), total, dict(zip(labels, queue)))
        return out, dict(zip(labels, latencies)), iterations, state, converged

    def _demands(self, state) -> dict[str, list[tuple[int, float]]]:
        """What each class takes of every buffer pool and DRAM queue per transaction at the solver's ``state``:
        ``{label: [(resource, share)]}``.  A packet holding a link's credit also waits for the other classes'
        packets on the link (its own class's, where the pool is what holds them back, wait for credits, not on the
        link)."""
        factors, waits, total, queue = state
        out: dict[str, list[tuple[int, float]]] = {}
        for c in self.classes:
            label = c.label
            if len(self.classes) == 1:   # no other thread's packets to wait behind
                out[label] = [(k, held) for k, held, _queued in self.pool_terms[label]]
                continue
            out[label] = [(k, held + QUEUEING * _behind(queued, total, queue[label]) if queued else held)
                          for k, held, queued in self.pool_terms[label]]
        for i, r, slots, m, there in self.queues:
            for label, writes, scattered_ns in there:   # (a chase opens a row for every line)
                f = factors[label][i]
                hold = m.delay_ns + scattered_ns + m.bus_hold_ns * f + waits[label][i] + writes * m.write_hold_ns * f
                out[label].append((r, hold / slots))
        return out

    def _loads(self, throughput: dict[str, float], demands: dict[str, list[tuple[int, float]]]) -> dict[int, float]:
        """Every resource's share in use at ``throughput``, by its number on the board: stations (their
        utilisation), buffer pools (slots in use) and DRAM queues (entries in use)."""
        rows = [(x, self.demand[label]) for label, x in throughput.items()]
        loads: dict[int, float] = {}
        for i in self.used:
            busy = 0.0
            for x, demand in rows:   # added in the classes' order
                busy += x * demand[i]
            loads[i] = busy
        for label, terms in demands.items():
            x = throughput[label]
            for k, d in terms:
                loads[k] = loads.get(k, 0.0) + x * d
        return loads

    def usage(self) -> dict:
        """The result's ``links``, ``memory``, ``probes``, ``credits`` (the fullest link buffer pools, those at
        least a quarter in use) and ``bottleneck``, at the solution."""
        loads, resources = self.loads, self.resources
        stations = len(self.stations)
        offered = self.offered   # before any bound held a class back
        links, memory, probes = [], [], []
        station: tuple = ("none",)
        queue: tuple = ("queue", -1)
        busy = entries = 0.0
        pools: list[tuple[float, int]] = []
        for r, u in loads.items():   # the first of the busiest wins
            k = resources[r]
            if r < stations:
                if k[0] == "link":
                    links.append({"src": k[1], "dst": k[2], "utilization": u, "offered": offered.get(r, u)})
                elif k[0] == "memory":
                    memory.append({"node": k[1], "utilization": u, "offered": offered.get(r, u)})
                else:
                    probes.append({"node": k[1], "utilization": min(1.0, u)})
                if u > busy or station[0] == "none":
                    station, busy = k, u
            elif k[0] == "queue":
                if u > entries or queue[1] == -1:
                    queue, entries = k, u
            elif u >= 0.25:
                pools.append((u, r))
        pools = sorted(pools, reverse=True)[:MOST_POOLS]
        if pools and pools[0][0] >= SATURATED and pools[0][0] > max(busy, entries):   # credits the limit
            resource, u, limit = _pool_name(resources[pools[0][1]]), pools[0][0], "credits"
        elif entries >= SATURATED and entries > busy:   # the DRAM queue's entries the limit
            resource, u, limit = f"N{queue[1]} DRAM queue", entries, "queue"
        else:
            resource, u, limit = _station_name(station), busy, "busy"
        bottleneck = {"resource": resource, "utilization": min(1.0, u), "limit": limit if u >= SATURATED else "none"}
        return {"links": sorted(links, key=lambda r: (r["src"], r["dst"])),
                "memory": sorted(memory, key=lambda r: r["node"]), "probes": probes,
                "credits": [{"pool": _pool_name(resources[r]), "in_use": min(1.0, u)} for u, r in pools],
                "bottleneck": bottleneck}


def _behind(queued: tuple, total: list[float], own: list[float]) -> float:
    """What a packet waits for on its links' stations (``[(station, ns serialised)]``): the other classes'
    customers queued there (``total`` less ``own``), each a serialisation, added in the stations' order."""
    out = 0.0
    for i, serial in queued:
        out += (total[i] - own[i]) * serial
    return out


def _common_wait(users: list) -> float:
    """The extra wait a transaction (ns) at which ``users`` (``[(share of the resource a transaction, customers,
    cycle ns, pace ns)]``) take exactly all of a resource: each at ``customers / max(cycle + wait, pace)``.  What
    they take falls, convex, as the wait grows: Newton's steps from no wait approach the root from below."""
    wait = 0.0
    for _ in range(50):
        taken = slope = 0.0
        for d, customers, cycle, period in users:
            spent = cycle + wait
            if spent > period:
                taken += d * customers / spent
                slope += d * customers / (spent * spent)
            else:
                taken += d * customers / period   # at its pace: the wait takes nothing from it yet
        if taken <= 1.0 + 1e-9 or slope <= 0.0:
            break
        wait += (taken - 1.0) / slope
    return wait


def _row(demands: dict, width: int, memory: int) -> tuple[list[float], list[int]]:
    """A class's ``demands`` (station number -> ns) as a row over the board's ``width`` stations, and the stations
    it uses: those and its home ``memory``."""
    row = [0.0] * width
    for i, d in demands.items():
        row[i] = float(d)
    return row, list(demands) + [memory]


def _compile(c: ThreadClass, memory: MemoryStation) -> tuple[Transaction, ...]:
    """``c``'s transactions as ``((request, (branch, ...)), ...)``, each path ``(fixed delay ns, stations, services)``
    (the stations' numbers and the service at each): what the solver's inner loop reads.  A visit to the home memory takes a read's time
    there and adds the memory's latency (and, for a chase, a row opened per line) to the path's fixed delay."""
    fixed_ns = memory.delay_ns + (memory.scattered_ns if c.op == "l" else 0.0)

    def path(entries) -> Path:
        delay = 0.0
        stations: list[int] = []
        services: list[float] = []
        for station, service, d in entries:
            delay += d
            if station == NO_STATION:
                continue
            if service is MEMORY:
                delay += fixed_ns
                service = memory.read_ns
            stations.append(station)
            services.append(float(service))
        return (delay, tuple(stations), tuple(services))
    # tuples: they live in the board's cache, and the garbage collector stops scanning a tuple of plain values
    return tuple([(path(request), tuple([path(b) for b in branches])) for request, branches in c.paths])


def _cycle_ns(compiled: tuple[Transaction, ...], factor: list[float]) -> float:
    """Mean latency of a transaction: each station's service stretched by ``factor`` (1 + what waits there, and
    at a memory what it adds at its load), plus the fixed delays; the longest of the branches after the request."""
    total = 0.0
    for request, branches in compiled:
        delay, stations, services = request
        spent = 0.0
        for j in range(len(stations)):
            spent += factor[stations[j]] * services[j]
        total += delay + spent
        longest = 0.0
        for delay, stations, services in branches:
            spent = 0.0
            for j in range(len(stations)):
                spent += factor[stations[j]] * services[j]
            t = delay + spent
            if t > longest:
                longest = t
        total += longest
    return total / len(compiled)


def _total(values: list[float]) -> float:
    """``values`` added in their order (as ``sum`` does before Python 3.12, which compensates)."""
    out = 0.0
    for v in values:
        out += v
    return out


def _columns(rows: list[list[float]], used: list[int], width: int) -> tuple[list[float], list[float]]:
    """Each column's total over ``rows`` (added in their order), and 1 + ``QUEUEING`` x that total; only the
    columns ``used`` can be other than nothing (0 and 1)."""
    total = [0.0] * width
    base = [1.0] * width
    for i in used:
        t = 0.0
        for row in rows:
            t += row[i]
        total[i] = t
        base[i] = 1.0 + QUEUEING * t
    return total, base


def _queue(x: float, demand: list[float], factor: list[float], uses: list[int], width: int) -> list[float]:
    """A class's queue at each station at throughput ``x``: its demand there stretched by ``factor`` (nothing where
    it has no demand, ``uses`` being where it has)."""
    out = [0.0] * width
    for i in uses:
        out[i] = x * demand[i] * factor[i]
    return out


def _station_name(key: tuple) -> str:
    if key[0] == "link":
        return f"link {key[1]}->{key[2]}"
    return f"memory N{key[1]}" if key[0] == "memory" else f"probes N{key[1]}" if key[0] == "probe" else "none"


def _pool_name(key: tuple) -> str:
    """``link 0->1 probe buffers``: a buffer pool in words (``data buffers`` for a channel's data)."""
    kind, src, dst, vc = key
    return f"link {src}->{dst} {vc} {'data buffers' if kind == 'data credit' else 'buffers'}"
