"""Wiring a board's components and running a workload on them.

:class:`System` builds every component from a :class:`~simnuma.topology.Topology`
before the run — an SRI, crossbar and MCT per node, two link directions per
link, the routes as tuples of link directions — and attaches the observers.
:func:`simulate` runs it in one of two modes:

* ``exact`` simulates every line of every foreground array;
* ``steady`` (default) simulates, per phase (the set of foreground threads
  still running), a warm-up and then batches until the 95% confidence
  half-width of every running thread's throughput is within 1% of its mean,
  and extrapolates the phase to the moment the next thread finishes.  Threads
  that a symmetry of the board and workload interchanges share one pooled
  throughput (:mod:`simnuma.model.symmetry`).
"""
from __future__ import annotations

import math
from typing import Any
import random
import time as _time

import simpy

from ..errors import SpecError
from ..topology import Topology, load_topology
from ..workload import MODEL_OPS, ThreadSpec, Workload
from .events import Environment
from .coherence import Coherence
from .core import OP_PATTERNS, Thread
from .routes import route_lanes, wire_links
from .mct import MCT
from .pages import ArrayPages
from .result import Result, build_result
from .sri import SRI
from .deadlock import ProgressWatch, warn_of_a_congested_cycle
from .feeds import buffer_feeds
from .batches import half_width, independent_batches, merged
from .stats import counter_snapshot
from .symmetry import exchangeable_groups
from .xbar import XBar
from ..case import baseline_case
from ..units import LINE_BYTES, format_size

__all__ = ["System", "simulate", "DEFAULT_SIZE_BYTES", "MODES"]

DEFAULT_SIZE_BYTES = 64 * 2**20

BACKGROUND_ARRAY_BYTES = 64 * 2**20   # a background thread walks a 64 MB array round and round (app note 40555)
MODES = ("steady", "exact")
MOST_EXACT_BYTES = 4 * 2**30   # 64 M lines a thread: hours at exact mode's speed


class System:
    """All components of one board, wired, with a workload's threads placed on it."""

    extrapolated: _Extrapolated | None   # steady mode's extrapolated counters (set by simulate and run_steady)

    def __init__(self, topology: Topology, workload: Workload, size_bytes: int, seed: int):
        self.topology = topology
        self.workload = workload
        self.seed = seed
        self.rng = random.Random(seed)
        self.env = env = Environment()
        self.ids = topology.node_ids
        index = {nid: i for i, nid in enumerate(self.ids)}
        self.index = index
        self.sris = [SRI(env, i, nid, topology.node(nid)) for i, nid in enumerate(self.ids)]
        self.mcts = [MCT(env, i, nid, topology.node(nid), random.Random(f"{seed}/dram/{nid}"), f"{seed}/dram/{nid}")
                     for i, nid in enumerate(self.ids)]
        self.xbars = [XBar(i, topology.node(nid).xbar_latency_ns) for i, nid in enumerate(self.ids)]
        self.links = wire_links(env, topology, index, self.xbars)   # (src, dst) index -> directions in parallel
        self.link_list = [d for k in sorted(self.links) for d in self.links[k]]
        n = len(self.ids)
        self.lanes, routes = route_lanes(topology, index, self.links)
        resp_routes = route_lanes(topology, index, self.links, "response")[1]
        probe_routes = route_lanes(topology, index, self.links, "probe")[1]
        self.coherence = Coherence(env, topology.coherence, self.sris, self.mcts,
                                   [topology.node(nid).cores > 0 for nid in self.ids])
        for i in range(n):
            self.sris[i].xbar = self.mcts[i].xbar = self.xbars[i]
            self.sris[i].routes = routes[i]
            self.sris[i].resp_routes = self.mcts[i].resp_routes = resp_routes[i]
            self.mcts[i].probe_routes = probe_routes[i]
            self.sris[i].coherence = self.mcts[i].coherence = self.coherence
            self.xbars[i].wire(self.sris[i], self.mcts[i], self.coherence)
        lines = max(1, size_bytes // LINE_BYTES)
        self.size_bytes = size_bytes
        self.foreground = [self._thread(s, lines, True, f"f{k}") for k, s in enumerate(workload.threads)]
        self.background = [self._thread(s, None, False, f"b{k}") for k, s in enumerate(workload.background)]
        self.offset_ns = 0.0          # time extrapolated (steady mode), added to simulated time
        self.warnings: list[str] = []   # what a reader of the result must know (a phase that did not converge)
        self.finish_total_ns: dict[Thread, float] = {}
        self.all_done = env.event()
        pools = []
        for i in range(n):
            pools += self.sris[i].pool_list() + self.mcts[i].pool_list()
        for d in self.link_list:
            pools += d.pools()
        self.pools = pools
        # the edges along which a pool's holders may wait for another (feeds.py), in the snapshot's order
        feeds = buffer_feeds(self)
        self.wait_edges = [(pool, target) for pool in pools for target in feeds[pool.name]]
        self.watch = ProgressWatch(self)
        self._groups: dict[tuple[Thread, ...], list[tuple[Thread, ...]]] = {}

    def _thread(self, spec: ThreadSpec, lines, foreground: bool, position: str) -> Thread:
        thread = self._make_thread(spec, lines, foreground, position)
        if self.lanes > 1:
            thread.lanes, thread.lane_stride = self.lanes, len(self.ids)
        return thread

    def _make_thread(self, spec: ThreadSpec, lines, foreground: bool, position: str) -> Thread:
        node = self.topology.node(spec.node)
        window = 1 if spec.op == "l" else node.window[spec.op]
        if spec.rate_GBps and node.requests:
            window = max(window, node.requests)   # a load generator: its rate, not its loop, sets its pace
        home = self.index[spec.mem_node]
        memory: Any = self.mcts[home].memory   # a DRAM where the memory is addressed
        arrays = None
        if self.mcts[home].addressed:
            array_lines = lines if lines is not None else BACKGROUND_ARRAY_BYTES // LINE_BYTES
            arrays = [ArrayPages(memory.placer, array_lines) for _ in OP_PATTERNS[spec.op]]
        return Thread(self.env, spec, self.index[spec.node], home, window, lines,
                      foreground, self.coherence, self._finished if foreground else None,
                      hold_ns=(node.hold_ns or {}).get(spec.op, 0.0), arrays=arrays, name=position)

    def _finished(self, thread: Thread) -> None:
        self.finish_total_ns[thread] = self.env.now + self.offset_ns
        if all(t.finish_ns is not None for t in self.foreground):
            for t in self.background:
                t.stopped = True
            if not self.all_done.triggered:
                self.all_done.succeed()

    def observe(self, observer) -> None:
        """Let ``observer`` (a trace's recorder, :mod:`simnuma.trace`) see the run: it is called where packets,
        transactions and memory requests move, and only records (the run is the same with or without it)."""
        self.coherence.observer = observer
        for component in self.sris + self.mcts + self.link_list:
            component.observer = observer
        observer.attach(self)

    def exchangeable(self, active: tuple) -> list:
        """Groups (tuples) of the running foreground threads that a symmetry of the run interchanges."""
        groups = self._groups.get(active)
        if groups is None:
            specs = [t.spec for t in active]
            groups = self._groups[active] = [tuple(active[i] for i in g) for g in
                                             exchangeable_groups(self.topology, specs, self.workload.background)]
        return groups

    def placement_period_txns(self, thread: Thread, rates: dict) -> int:
        """Transactions of ``thread`` over which its memory's page placement has been through its design.

        ``rates`` holds the transactions per ns of every thread running.  A
        stream alone on a memory repeats itself page by page.  Where streams
        meet (a write's fills and write-backs, a triad's arrays, threads
        sharing the memory), the placement balances the bank relation of every
        pair of streams over S of the pair's page changes
        (:mod:`simnuma.model.pages`): a pair changes pages as often as the
        faster of the two (a thread's own streams move together), so the
        memory has been through its design once its slowest pair has made S
        page changes.  A thread beside a faster load generator sees that in
        less than one of its own pages, and then needs only its own page.  Where
        no frame bit chooses a bank (pages of whole bank cycles), it is a bank
        cycle.  Without a DRAM there is nothing to wait for (0).
        """
        if thread.arrays is None:
            return 0
        memory: Any = self.mcts[thread.home].memory   # a DRAM (the thread has arrays)
        amap = memory.amap
        page_lines = 1 << amap.page_shift
        one_page = page_lines * len(thread.pattern)
        if amap.slots == 1:   # no frame bit chooses a channel, rank or bank: a huge page holds whole bank cycles,
            return len(thread.pattern) * min(page_lines, amap.slot_cycle_lines())   # which repeat within it
        sharing = [u for u in rates if u.home == thread.home and u.arrays is not None and rates[u] > 0]

        def page_changes_per_ns(u: Thread) -> float:   # of each of u's streams (a chase: every line)
            return rates[u] / len(u.pattern) / (1 if u.chase else page_lines)

        slowest = math.inf   # page changes per ns of the slowest pair of streams
        for k, u in enumerate(sharing):
            if len(u.pattern) + sum(u.pattern) > 1:
                slowest = min(slowest, page_changes_per_ns(u))
            for v in sharing[k + 1:]:
                slowest = min(slowest, max(page_changes_per_ns(u), page_changes_per_ns(v)))
        if slowest == math.inf:
            return one_page
        # whole pages of the thread (the nearest number): a batch that ends within a page would hold part of
        # its bank pattern, and threads that run equally fast make their page changes together
        return one_page * max(1, round(amap.slots / slowest * rates[thread] / one_page))

    def start(self) -> None:
        for t in self.foreground + self.background:
            t.start(self.rng.uniform(0.0, 4.0))
        self.watch.start()

    def active(self) -> tuple:
        return tuple(t for t in self.foreground if t.finish_ns is None)

    def snapshot(self) -> list:
        return counter_snapshot(self)


# ------------------------------------------------------------------ running

class _Progress:
    """Reports the fraction of foreground work done, if a callback wants it."""

    def __init__(self, system: System, callback):
        self.system = system
        self.callback = callback
        self.total = sum(t.to_issue or 0 for t in system.foreground) or 1

    def update(self) -> None:
        if self.callback is not None:
            done = sum(t.completed for t in self.system.foreground)
            self.callback(min(1.0, done / self.total))


def run_exact(system: System, progress=None, chunk_ns: float = 200_000.0) -> None:
    system.start()
    env = system.env
    p = _Progress(system, progress)
    while not system.all_done.triggered:
        env.run(until=simpy.events.AnyOf(env, [system.all_done, env.timeout(chunk_ns)]))
        p.update()


# Steady-mode knobs: they decide statistical accuracy, not results.
STEADY_HALF_WIDTH = 0.01       # 95% CI half-width relative to the mean throughput
STEADY_MIN_BATCHES = 5         # fewest batches a confidence interval is drawn from
STEADY_MIN_PERIODS = 3         # fewest whole placement periods an interval is drawn from, and a window holds
                               # at the full 1% (fewer where a phase needs less: _fewest_periods)
STEADY_MAX_BATCHES = 400
_MOST_PER_PERIOD = STEADY_MAX_BATCHES // (2 * STEADY_MIN_PERIODS)   # longer periods get longer batches
STEADY_BATCH_TXNS = 150        # transactions of the slowest running thread per batch (at least)
STEADY_LAG1_Z = 1.645          # batch means count as independent while their lag-1 autocorrelation is at most
                               # this many standard errors (1/sqrt(n)): a one-sided 95% test (batches.py)
STEADY_WARMUP_TXNS = 200       # transactions of every running thread before measuring

class _Extrapolated:
    """Counters accumulated for time that was extrapolated rather than simulated."""

    def __init__(self, width: int):
        self.values = [0.0] * width

    def add(self, start: list, end: list, scale: float) -> None:
        for i in range(len(self.values)):
            self.values[i] += (end[i] - start[i]) * scale


def run_steady(system: System, progress=None) -> None:
    """Simulate each phase to a converged throughput, then extrapolate it."""
    system.start()
    p = _Progress(system, progress)
    extra = _Extrapolated(len(system.snapshot()))
    system.extrapolated = extra
    while not system.all_done.triggered:
        _run_phase(system, system.active(), extra)
        p.update()


def _advance(system: System, until_ns: float) -> None:
    env = system.env
    if system.all_done.triggered:
        return
    env.run(until=simpy.events.AnyOf(env, [system.all_done, env.timeout(max(0.0, until_ns - env.now))]))


def _pacer(system: System, active: tuple, rates: dict) -> tuple:
    """``(thread, transactions per period, batches per period)``: how the measurement is cut.

    A batch lasts at least ``STEADY_BATCH_TXNS`` transactions of the slowest
    running thread.  Where a thread's page placement has a period longer than
    that (:meth:`System.placement_period_txns`), the longest such period is cut
    into whole batches counted in that thread's completions, so that every few
    batches make one whole period, a window of whole periods of that thread
    holding many periods of the others.  Without one, the slowest thread
    counts ``STEADY_BATCH_TXNS`` per batch and "period" is one batch.
    """
    slowest = min(active, key=lambda t: rates[t])
    batch_ns = STEADY_BATCH_TXNS / rates[slowest]
    pacer, period_txns, period_ns = slowest, STEADY_BATCH_TXNS, batch_ns
    for t in active:
        txns = system.placement_period_txns(t, rates)
        if txns / rates[t] > period_ns:
            pacer, period_txns, period_ns = t, txns, txns / rates[t]
    per_period = max(1, min(int(period_ns / batch_ns), period_txns, _MOST_PER_PERIOD))
    return pacer, period_txns, per_period


def _advance_pacer(system: System, pacer: Thread, completed: int, deadline_ns: float) -> None:
    """Run until ``pacer`` has ``completed`` transactions done (or the deadline, or the end)."""
    env = system.env
    if system.all_done.triggered:
        return
    events = [system.all_done, pacer.watch(completed), env.timeout(max(0.0, deadline_ns - env.now))]
    env.run(until=simpy.events.AnyOf(env, events))
    pacer.watch_at = -1


def _tolerance(system: System, group: tuple, batch_rates: list) -> float:
    """The relative half-width a group's throughput needs: 1% of its threads' finish times.

    An error of x in the rate of a phase moves a thread's finish time by x
    times what is left of it, so a phase that decides only part of the finish
    time needs only the matching part of the precision: once half of a
    thread's time lies behind it, 2% in the rate is 1% in the result.
    """
    rate = sum(batch_rates) / len(batch_rates)
    if rate <= 0:
        return STEADY_HALF_WIDTH
    left_ns = max(t.to_issue - t.completed for t in group) / rate
    done_ns = system.env.now + system.offset_ns
    return STEADY_HALF_WIDTH * (done_ns + left_ns) / left_ns if left_ns > 0 else STEADY_HALF_WIDTH


def _converged(system: System, batches: list, per_period: int) -> bool:
    """Whether every group's throughput is known as precisely as its finish time needs.

    ``batches`` holds, per batch, its length and each group's completions per
    thread.  The interval is drawn from the batches (at least
    ``STEADY_MIN_BATCHES``) or, where batches cut a page placement period, from
    whole periods (at least ``STEADY_MIN_PERIODS``): a period's bank pattern
    shows between batches as variation that whole periods do not have.
    """
    if _precise(system, batches, STEADY_MIN_BATCHES):
        return True
    if per_period == 1:
        return False
    whole = [merged(batches[k * per_period:(k + 1) * per_period]) for k in range(len(batches) // per_period)]
    return _precise(system, whole, STEADY_MIN_PERIODS)


def _fewest_periods(system: System, batches: list, per_period: int) -> int:
    """Whole placement periods the window must hold: ``STEADY_MIN_PERIODS`` at the full 1%.

    Periods differ by about a percent (a writer's, on the Quartet), so a phase
    that needs only part of the precision (see :func:`_tolerance`) needs
    proportionally fewer of them, and never less than one.
    """
    if per_period == 1:
        return 1
    tolerance = min(_tolerance(system, g, [done[g] / span for span, done in batches]) for g in batches[0][1])
    return max(1, min(STEADY_MIN_PERIODS, math.ceil(STEADY_MIN_PERIODS * STEADY_HALF_WIDTH / tolerance - 1e-9)))


def _precise(system: System, batches: list, fewest: int) -> bool:
    """Whether every group's rate over ``batches`` is known to its tolerance.

    ``fewest`` batch means are needed at the full 1%, proportionally fewer
    (never under three) where a phase decides only part of a finish time;
    they must test independent (:func:`~simnuma.model.batches.independent_batches`).
    """
    if len(batches) < 3:
        return False
    groups = batches[0][1]
    tolerance = min(_tolerance(system, g, [done[g] / span for span, done in batches]) for g in groups)
    means = independent_batches(batches, max(3, math.ceil(fewest * STEADY_HALF_WIDTH / tolerance - 1e-9)),
                                STEADY_LAG1_Z)
    if means is None:
        return False
    for group in groups:
        rates = [done[group] / span for span, done in means]
        if half_width(rates) > _tolerance(system, group, rates) * (sum(rates) / len(rates)):
            return False
    return True


def _run_phase(system: System, active: tuple, extra: _Extrapolated) -> bool:
    """One phase: warm up, measure in batches, extrapolate.  False if the phase ended early."""
    env = system.env
    # warm-up: every running thread completes a number of transactions
    running = active + tuple(system.background)
    base = {t: t.completed for t in running}
    warm_from_ns = env.now
    step = 2_000.0
    while not system.all_done.triggered:
        if system.active() != active:
            return False
        if all(t.completed - base[t] >= STEADY_WARMUP_TXNS for t in active):
            break
        _advance(system, env.now + step)
        step = min(step * 1.5, 50_000.0)
    if system.all_done.triggered:
        return False
    t0 = env.now
    span_ns = max(t0 - warm_from_ns, 1.0)
    rates = {t: max((t.completed - base[t]) / span_ns, 1e-9) for t in running}
    pacer, period_txns, per_period = _pacer(system, active, rates)
    batch_ns = period_txns / per_period / rates[pacer]

    groups = system.exchangeable(active)   # interchangeable threads share one (pooled) throughput
    start_snap = system.snapshot()
    start_done = {t: t.completed for t in active}
    start = pacer.completed
    batches: list[tuple[float, dict[tuple[Thread, ...], float]]] = []   # (span ns, {group: completions per thread})
    last = dict(start_done)
    last_ns = env.now
    converged = False
    while True:
        n = len(batches) + 1
        goal = start + n * period_txns // per_period   # every per_period batches: exactly one period
        _advance_pacer(system, pacer, goal, env.now + 100 * batch_ns)
        if system.all_done.triggered or system.active() != active:
            return False
        batches.append((max(env.now - last_ns, 1e-9), {g: sum(t.completed - last[t] for t in g) / len(g) for g in groups}))
        for t in active:
            last[t] = t.completed
        last_ns = env.now
        n = len(batches)
        converged = converged or _converged(system, batches, per_period)
        if n % per_period:
            continue   # the window ends on a whole placement period
        if converged and n >= per_period * _fewest_periods(system, batches, per_period):
            break      # ... and holds enough of them to have the array's statistics
        if n >= STEADY_MAX_BATCHES:
            if not converged:   # the budget is spent: the interval is wider than the target, and the result says so
                system.warnings.append(
                    f"steady mode: the phase of {', '.join(t.label for t in active)} from"
                    f" {(t0 + system.offset_ns) / 1e3:.1f} us did not converge in {STEADY_MAX_BATCHES} batches; its"
                    f" throughput's 95% interval is wider than the {100 * STEADY_HALF_WIDTH:g}% target (--exact"
                    " simulates every line)")
            break
    window_ns = env.now - t0
    rates = {t: sum(u.completed - start_done[u] for u in g) / len(g) / window_ns for g in groups for t in g}
    left = {t: t.to_issue - t.completed for t in active}
    times = {t: left[t] / rates[t] for t in active if rates[t] > 0}
    if not times:
        return False
    jump_ns = min(times.values())
    if jump_ns <= 4 * batch_ns:
        return True  # close to the end: simulate it
    end_snap = system.snapshot()
    extra.add(start_snap, end_snap, jump_ns / window_ns)
    system.offset_ns += jump_ns
    for t in active:
        remaining = left[t] - rates[t] * jump_ns
        not_issued = int(round(remaining)) - t.outstanding
        t.limit(not_issued if times.get(t, math.inf) > jump_ns else 0)
    return True


# ------------------------------------------------------------------ public API

_BASELINE_CACHE: dict = {}


def simulate(topology, threads, background=(), size_bytes: int = DEFAULT_SIZE_BYTES, mode: str = "steady",
             seed: int = 1, progress=None, baseline: bool = True, observer=None) -> Result:
    """Run ``threads`` (and ``background`` threads) on ``topology``; return a Result.

    ``threads`` and ``background`` are specs in the ``N.C.op.M[@RATE]`` notation
    (strings or :class:`~simnuma.workload.ThreadSpec`).  ``progress``, if given,
    is called with the fraction of foreground work done; ``observer`` (a
    :class:`simnuma.trace.Recorder`) records the run as it goes.
    """
    topology = load_topology(topology)
    if mode not in MODES:
        raise SpecError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    if size_bytes < LINE_BYTES:
        raise SpecError(f"array size must be at least {LINE_BYTES} B, got {size_bytes}")
    if mode == "exact" and size_bytes > MOST_EXACT_BYTES:
        raise SpecError(f"exact mode simulates every line: {format_size(size_bytes)} per thread is more than the"
                        f" {MOST_EXACT_BYTES // 2**30} GiB a run can do in hours; use steady mode (the default),"
                        " which extrapolates any size, or a smaller size")
    workload = Workload.build(threads, background, ops=MODEL_OPS)
    workload.check(topology)
    wall0 = _time.perf_counter()
    system = System(topology, workload, size_bytes, seed)
    system.extrapolated = None
    if observer is not None:
        system.observe(observer)
    if mode == "exact":
        run_exact(system, progress)
    else:
        run_steady(system, progress)
        warn_of_a_congested_cycle(system)
    if observer is not None:
        observer.close()   # its last sample, to the end of the run
    wall_s = _time.perf_counter() - wall0
    baseline_ns = None
    if baseline:
        baseline_ns = baseline_time_ns(topology, size_bytes, mode, seed)
    return build_result(system, mode, seed, size_bytes, baseline_ns, wall_s)


def baseline_time_ns(topology: Topology, size_bytes: int, mode: str, seed: int) -> float:
    """Time of the board's baseline case (:func:`~simnuma.case.baseline_case`: ``0.0.r.0`` alone)."""
    key = (topology.to_yaml(), size_bytes, mode, seed)
    if key not in _BASELINE_CACHE:
        res = simulate(topology, baseline_case(topology).threads, size_bytes=size_bytes, mode=mode, seed=seed,
                       baseline=False)
        _BASELINE_CACHE[key] = res.makespan_ns
    return _BASELINE_CACHE[key]
