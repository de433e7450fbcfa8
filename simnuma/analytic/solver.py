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
data leave (with ``memory.release: done``, until its longest branch ends and its source-done is back), a
write-back's until its burst has ended.  The solution is found again in rounds, with the classes
an overloaded resource holds back capped at what it lets through (``Network.solve``), so that the others see
them at their slower rate: a full memory, DRAM queue or probe lookup shares itself in turns among the links and
SRI that feed it (``turns.py``), any other resource as one queue served in order.  Near a steep loaded-latency
curve both loops are damped (``damping.py``).
"""
from __future__ import annotations

from typing import Final

from .flows import Board, Holds, Transaction, branches_ns, compile_paths, cycle_ns, in_order_sum
from .damping import LEAST_GAIN, damped_caps
from .memory import MemoryStation, home_memories
from .turns import common_wait, port_shares, ports, rate_at

__all__ = ["Network"]

# a memory whose latency depends on its load, for the inner loop, and the classes numbered for it (``_number``)
Loaded = tuple[int, float, MemoryStation, bool, list[tuple[int, float, float]]]
Numbered = tuple[list[str], list[list[float]], list[tuple[Transaction, ...]], list[float], list[float], list[float],
                 list[tuple[int, ...]], list[Loaded], list[int], list[float]]

# Service times here are constant (a packet's serialisation, a line's burst): an arrival waits about half what
# it would behind exponential services (M/D/1 against M/M/1), so what waits at a station counts half.
QUEUEING: Final = 0.5
TOLERANCE: Final = 1e-4   # relative change of every throughput between iterations: far inside the model's own error
ROUNDS: Final = 100       # rounds of the solution, at most (classes held at the bounds' rates, or iterations going on)
ROUND_ITERATIONS: Final = 25   # iterations a round takes at most before its bounds are checked
CAPS_SETTLE: Final = 5e-3      # the caps have settled when none moves by more than this share between rounds (the
#                                results move by under 0.3% against 1e-3)
SATURATED: Final = 0.95
MOST_POOLS: Final = 8     # the fullest buffer pools a result lists


class Network:
    """The classes of one case on their stations and buffer pools, ready to solve."""

    def __init__(self, topology, classes: list, cache: dict, closed: frozenset = frozenset()):
        self.topology, self.classes, self.cache = topology, classes, cache
        self.closed = closed   # home memories whose rows the idle timer closes between trains (memory.idle_closures)
        self.last: dict = {}   # the throughputs the last round ended with
        self.ports: dict | None = None   # per memory, DRAM queue and probe lookup: what feeds each class (turns.py)
        self._setup(None)

    def _setup(self, shares: dict | None) -> None:
        """Stations, demands and compiled paths, with each home memory at ``shares`` of reads (a curve memory's
        peak depends on it), or at the share its threads' customers give."""
        classes, cache = self.classes, self.cache
        self.memories = memories = home_memories(self.topology, classes, cache, shares, self.closed)
        memory_demand = {c.label: memories[c.home].read_ns + c.writes * memories[c.home].write_ns for c in classes}
        # every station and buffer pool the board has, numbered once for all its cases: a case's classes use some
        # of them (the others add nothing to any sum), and what is compiled against the numbers is kept per flow
        board: Board = cache["board"]   # (flows.board_cache)
        self.board = board
        self.stations, self.resources, self.index = board.stations, board.resources, board.index
        self.compiled: dict[str, tuple[Transaction, ...]] = {}
        self.demand: dict[str, list[float]] = {}
        self.uses: dict[str, tuple[int, ...]] = {}
        used: set[int] = set()
        for c in classes:
            m = memories[c.home]
            key = ("compiled", c.node, c.home, c.op, m.read_ns, m.delay_ns, m.scattered_ns)
            compiled = cache.get(key)
            if compiled is None:
                compiled = cache[key] = compile_paths(c, m)
            self.compiled[c.label] = compiled
            row = list(c.row)
            row[board.nodes[c.home].memory] = memory_demand[c.label]
            self.demand[c.label] = row
            self.uses[c.label] = c.uses
            used.update(c.uses)
        self.used = sorted(used)   # the stations this case's classes use, in the board's order
        # memories whose latency depends on their load, with the station index and the classes there
        self.loaded = [(board.nodes[home].memory, m, [c for c in classes if c.home == home])
                       for home, m in memories.items() if m.model == "curve" or m.episode_ns]
        self._limits(board)
        self._number()
        # the memories that serve their queue's lines in order (not a curve's), by station; each class's
        # write-backs per transaction
        self.in_order = {board.nodes[home].memory: home for home, m in memories.items() if m.model != "curve"}
        self.writes = {c.label: c.writes for c in classes}

    def _number(self) -> None:
        """The classes numbered in their order, as the inner loop (``_iterate``) reads them, kept until the stations
        are set up again: per class its label, demand row, compiled paths, customers, pace, hold and the stations it
        uses; per memory whose latency depends on its load, (station, a read's time there, the memory, whether its
        wait moves part of the way each iteration (a curve's), [(class, write-backs per transaction, the share of an
        episode its reads wait)]); per class, its home memory's station if that is one of those (else -1), and a
        read's time there."""
        classes = self.classes
        labels = [c.label for c in classes]
        number = {label: k for k, label in enumerate(labels)}
        # a local writer's fill reaches its DRAM right behind its own write-back (they leave the core together, the
        # write-back first), so it meets the write episode from its start; any other read, a remote writer's fill
        # included (its request overtakes the write-back's data on the first link), meets it at a random point.
        # A local triad's reads all count as behind: only one transaction in three is issued as a write-back
        # leaves, but under Family 10h's write bursts a drain holds every read queued at the memory (counting
        # only those puts the X6440's idle triads 6% fast; docs/analytic.md)
        loaded: list[Loaded] = [
            (i, m.read_ns, m, m.model == "curve",
             [(number[c.label], c.writes, 1.0 if c.writes and c.home == c.node else m.residual) for c in there])
            for i, m, there in self.loaded]
        stretch = [-1] * len(classes)
        read_ns = [1.0] * len(classes)
        for i, ns, _m, _curve, there in loaded:
            for k, _w, _share in there:
                stretch[k], read_ns[k] = i, ns
        self.numbered: Numbered = (labels, [self.demand[label] for label in labels],
                                   [self.compiled[label] for label in labels], [float(c.customers) for c in classes],
                                   [c.period_ns for c in classes], [c.hold_ns for c in classes],
                                   [self.uses[label] for label in labels], loaded, stretch, read_ns)

    def _limits(self, board: Board) -> None:
        """What the bounds check: per buffer pool, what each class holds (with the link station where its packets
        also queue); per node, its DRAM queue's entries and the classes that use it."""
        self.holds: dict[str, Holds] = {c.label: c.pools for c in self.classes}
        # each node's DRAM queue: a read holds an entry for its time in the memory (with memory.release: done, from
        # its arrival to its end and its source-done's way back: ``done`` ns, else -1), a write-back for its burst
        self.queues = [(board.nodes[home].memory, self.index[("queue", home)], board.nodes[home].memory_queue, m,
                        [(k, c.label, c.writes, m.scattered_ns if c.op == "l" else 0.0,
                          c.done_ns if board.nodes[home].release_at_done else -1.0)
                         for k, c in enumerate(self.classes) if c.home == home])
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
        gains: dict[str, tuple[float, float, bool]] = {}
        self.swings = ([0.5] * len(self.loaded), [0.0] * len(self.loaded))
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
            caps = damped_caps(caps, new_caps, gains)
            if not settled:
                state = None   # the stations changed with the memory's peak: start again from empty queues,
                gains.clear()  # and with undamped steps (a new problem's fixed point)
                self.swings = ([0.5] * len(self.loaded), [0.0] * len(self.loaded))
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
              caps: dict[str, float], latencies: dict[str, float]) -> dict[str, float]:
        """The next round's caps (``solve``).  A full memory, DRAM queue or probe lookup shares what it serves in
        turns among what feeds it (``turns.py``: each link or SRI in proportion to its buffers, an SRI's threads
        alike, a link's threads in order).  Any other overloaded resource makes every class through it wait the
        same extra time a transaction, as a queue served in order would: the wait at which its classes, each at
        its customers over its cycle and that wait (no faster than its pace), take exactly what it serves.  A held
        class whose resources all have room may rise as far as the fullest lets it."""
        over = [k for k, u in loads.items() if u > 1.0 + 1e-12]
        if not over and not caps:
            return {}   # nothing overloaded, nothing held: the common case
        rows: dict[str, tuple[float, float, float]] = {
            c.label: (float(c.customers), latencies[c.label] + c.hold_ns, c.period_ns) for c in self.classes}
        scale: dict[str, float] = {}
        stations = len(self.stations)
        # each overloaded buffer pool or DRAM queue's classes, with what they take of it, in the classes' order
        pooled: dict[int, list[tuple[str, float]]] = {k: [] for k in over if k >= stations}
        if pooled:
            for label, terms in demands.items():
                for r, d in terms:
                    found = pooled.get(r)
                    if found is not None:
                        found.append((label, d))
        for k in over:
            if k < stations:
                users = [(label, dem[k]) for label, dem in self.demand.items() if dem[k]]
            else:
                users = pooled[k]
            if self.ports is None:
                self.ports = ports(self.board, self.classes)
            port_of = self.ports.get(k)
            if port_of is not None and all(label in port_of for label, _d in users):
                # a memory, DRAM queue or probe lookup: in turns among what feeds it (turns.py)
                rates = port_shares(users, rows, port_of, self._behind_ns(k, users, throughput))
            else:
                wait = common_wait([(d, *rows[label]) for label, d in users])
                rates = {label: rate_at(rows[label], wait) for label, _d in users}
            for label, _d in users:
                x = rates[label]
                s = x / throughput[label] if throughput[label] else 1.0
                least = scale.get(label)
                scale[label] = s if least is None or s < least else least
        out: dict[str, float] = {}
        for label, x in throughput.items():
            if label in scale and scale[label] < 1.0 - 1e-9:
                out[label] = x * scale[label]
            elif label in caps:   # held, and its resources have room: it may rise to the fullest
                dem = self.demand[label]
                fullest = max([loads[i] for i in self.uses[label] if dem[i]]
                              + [loads[k] for k, _d in demands[label]])
                out[label] = x / fullest if fullest > 0.0 else caps[label]
        return out

    def _behind_ns(self, k: int, users: list[tuple[str, float]], throughput: dict[str, float]) -> float:
        """What a line admitted to a full DRAM queue waits behind the others there, where station ``k`` is a
        memory that serves them in order (turns.py): the queue's entries less one, at a line's mean time there."""
        home = self.in_order.get(k)
        if home is None:
            return 0.0
        lines = sum(throughput[label] * (1.0 + self.writes[label]) for label, _d in users)
        busy = sum(throughput[label] * d for label, d in users)
        return (self.board.nodes[home].memory_queue - 1) * busy / lines if lines else 0.0

    def _iterate(self, caps: dict, start) -> tuple:
        """Schweitzer's iteration with the classes in ``caps`` held at no more than their cap, from ``start`` (a
        previous round's state) or from Schweitzer's start: ``(throughput, latency, iterations, (factors, waits,
        total queue, queues), converged)`` where it stopped, at the fixed point or after ROUND_ITERATIONS.

        The classes are numbered in their order (``_number``), and every sum is a loop in that order: the compiled
        solver (``simnuma.model.native``) and its source add the same numbers in the same order.  Each class's queue
        and factors are lists of the board's width, set in place where the class has demand; elsewhere they stay
        empty (the factors 1), and nothing reads them there."""
        classes = self.classes
        n = len(classes)
        width = len(self.stations)
        labels, demand, paths, customers, period, hold, uses, loaded, stretch, read_ns = self.numbered
        held = [c.label in caps for c in classes]
        cap = [float(caps.get(c.label, 0.0)) for c in classes]
        queue: list[list[float]]
        waits: list[list[float]]
        if start is None:
            # Schweitzer's start: each class's customers spread over the stations it uses, as its demands are
            queue = []
            for k in range(n):
                whole = in_order_sum(demand[k]) or 1.0
                queue.append([customers[k] * d / whole for d in demand[k]])
            waits = [[0.0] * width for _ in range(n)]
            throughput = [0.0] * n
        else:
            _factors, last_waits, _total_queue, last_queue = start
            queue = [last_queue[label] for label in labels]
            waits = [last_waits[label] for label in labels]
            throughput = [float(self.last[label]) for label in labels]
        used: list[int] = self.used
        latencies = [0.0] * n
        # per memory whose latency depends on its load: the share of the way its wait moves each iteration, and
        # the last step it took (kept from round to round: ``self.swings``)
        gains, swings = self.swings
        # per class, 1 + what waits at each station it uses (it reads no other)
        factors: list[list[float]] = [[1.0] * width for _ in range(n)]
        changed = 0.0
        iterations = 0
        # every class's queue at each station, and 1 + QUEUEING x that, each iteration
        total, base = [0.0] * width, [1.0] * width
        for iterations in range(1, ROUND_ITERATIONS + 1):
            _columns(queue, used, total, base)
            changed = 0.0
            solved = [0.0] * n
            for k in range(n):
                # residence per unit demand at each station it uses: 1 + what waits there (own customers less one)
                mine = QUEUEING / customers[k]
                own = queue[k]
                factor = factors[k]
                for i in uses[k]:
                    factor[i] = base[i] - own[i] * mine
                # what its memory adds at its load, as a stretch of a read's time there: for its latency, not its
                # queue
                i = stretch[k]
                if i >= 0:
                    unstretched = factor[i]
                    factor[i] = unstretched + waits[k][i] / read_ns[k]
                    latency = cycle_ns(paths[k], factor)
                    factor[i] = unstretched
                else:
                    latency = cycle_ns(paths[k], factor)
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
                _queue(queue[k], throughput[k], demand[k], factors[k], uses[k])
            for j in range(len(loaded)):
                i, _read_ns, m, damped, there = loaded[j]
                reads = writes = 0.0
                for k, w, _share in there:
                    reads += throughput[k]
                    writes += throughput[k] * w
                wait = m.wait_ns(reads, writes)   # at this round's load, for the next round ...
                gain = 1.0
                if damped:
                    # ... for a curve, part of the way from the last (half, and half as much again each time the
                    # wait turns back): a steep curve would otherwise swing the load round a fixed point
                    k0, _w, share0 = there[0]
                    step = wait * share0 - waits[k0][i]
                    if step * swings[j] < 0.0:
                        gains[j] = max(LEAST_GAIN, 0.5 * gains[j])
                    swings[j] = step
                    gain = gains[j]
                for k, _w, share in there:
                    before = waits[k][i]
                    after = before + gain * (wait * share - before)
                    waits[k][i] = after
                    # the waits settle too, measured against a read's whole time in the memory (half the way
                    # to where this round's load puts them: how far a step goes without the turns' damping)
                    scale = m.delay_ns + after
                    left = abs(wait * share - before) * (0.5 if damped else 1.0)
                    if left > changed * scale:
                        changed = left / scale
            if changed < TOLERANCE:
                break
        converged = changed < TOLERANCE
        out = dict(zip(labels, throughput))
        self.last = out
        _columns(queue, used, total, base)
        state = (dict(zip(labels, factors)), dict(zip(labels, waits)), total, dict(zip(labels, queue)))
        return out, dict(zip(labels, latencies)), iterations, state, converged

    def _demands(self, state) -> dict[str, list[tuple[int, float]]]:
        """What each class takes of every buffer pool and DRAM queue per transaction at the solver's ``state``:
        ``{label: [(resource, share)]}``.  A packet holding a link's credit also waits for the other classes'
        packets on the link (its own class's, where the pool is what holds them back, wait for credits, not on the
        link)."""
        factors, waits, total, queue = state
        out: dict[str, list[tuple[int, float]]] = {}
        alone = len(self.classes) == 1   # no other thread's packets to wait behind
        for label, holds in self.holds.items():
            out[label] = (list(zip(holds.pools, holds.held_ns)) if alone
                          else _held(holds, self.board.pool_link, total, queue[label]))
        for i, r, slots, m, there in self.queues:
            for k, label, writes, scattered_ns, done_ns in there:   # (a chase opens a row for every line)
                f = factors[label][i]
                if done_ns < 0.0:
                    read_ns = m.delay_ns + scattered_ns + m.bus_hold_ns * f + waits[label][i]
                else:
                    read_ns = self._to_the_end_ns(k, factors[label], waits[label]) + done_ns
                hold = read_ns + writes * m.write_hold_ns * f
                out[label].append((r, hold / slots))
        return out

    def _to_the_end_ns(self, k: int, factor: list[float], waits: list[float]) -> float:
        """How long a read of class number ``k`` takes from its arrival at the home to its end at the requester: the
        longest of its branches, its memory's stretched by what the memory adds at its load (as its latency is)."""
        _labels, _demand, paths, _customers, _period, _hold, _uses, _loaded, stretch, read_ns = self.numbered
        i = stretch[k]
        if i < 0:
            return branches_ns(paths[k], factor)
        stretched = list(factor)
        stretched[i] += waits[i] / read_ns[k]
        return branches_ns(paths[k], stretched)

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


def _held(holds: Holds, pool_link: list[int], total: list[float], own: list[float]) -> list[tuple[int, float]]:
    """``[(pool, ns held per transaction over its slots)]`` of a class's ``holds``, each packet's hold lengthened
    by what it waits for on its link's station (``pool_link``): the other classes' customers queued there
    (``total`` less ``own``), each a serialisation, added in the packets' order."""
    out = []
    serial_ns, start = holds.serial_ns, 0
    for j in range(len(holds.pools)):
        pool, end = holds.pools[j], holds.ends[j]
        link = pool_link[pool]
        others = total[link] - own[link]
        behind = 0.0
        for s in range(start, end):
            behind += others * serial_ns[s]
        out.append((pool, holds.held_ns[j] + QUEUEING * behind))
        start = end
    return out


def _columns(rows: list[list[float]], used: list[int], total: list[float], base: list[float]) -> None:
    """Set each column's ``total`` over ``rows`` (added in their order), and ``base``, 1 + ``QUEUEING`` x that
    total; only the columns ``used`` can be other than nothing (0 and 1, as they are left)."""
    for i in used:
        t = 0.0
        for row in rows:
            t += row[i]
        total[i] = t
        base[i] = 1.0 + QUEUEING * t


def _queue(out: list[float], x: float, demand: list[float], factor: list[float], uses: tuple[int, ...]) -> None:
    """Set a class's queue ``out`` at each station at throughput ``x``: its demand there stretched by ``factor``
    (``uses`` being where it has any; elsewhere its queue is empty, and stays so)."""
    for i in uses:
        out[i] = x * demand[i] * factor[i]


def _station_name(key: tuple) -> str:
    if key[0] == "link":
        return f"link {key[1]}->{key[2]}"
    return f"memory N{key[1]}" if key[0] == "memory" else f"probes N{key[1]}" if key[0] == "probe" else "none"


def _pool_name(key: tuple) -> str:
    """``link 0->1 probe buffers``: a buffer pool in words (``data buffers`` for a channel's data)."""
    kind, src, dst, vc = key
    return f"link {src}->{dst} {vc} {'data buffers' if kind == 'data credit' else 'buffers'}"
