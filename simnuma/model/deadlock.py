"""Noticing a run that makes no progress, and naming the cycle of full buffers that holds it.

A board nobody has built can deadlock: on a ring of K8 sockets with broadcast
probes every probe buffer fills, each waiting for a slot in the next one
around the ring, and no transaction completes again.  Nothing in the model
ever times out, so such a run would go on forever.  A :class:`ProgressWatch`
looks every quarter of its window of simulated time: when transactions are
outstanding and none has completed for the window, it stops the run with a
:class:`DeadlockError`.  A live run cannot look like that: a transaction's
latency is hundreds of nanoseconds even behind full queues, so a millisecond
(:data:`STALL_NS`) without a completion while one waits means that nothing can
move.  On a board whose latencies are that long (a hop of a millisecond) the
window is :data:`STALL_LATENCIES` times the longest of them (:func:`stall_ns`).

The diagnosis follows the wait-for relation between buffer pools: a packet
waiting for a slot of pool B while it holds a slot of pool A makes the edge
A -> B.  A cycle of such edges among full pools is a deadlock (Dally and
Seitz's condition); it is named pool by pool, with each pool's node or link
direction, in the error's one line and in :attr:`DeadlockError.diagnosis`.

Abstracts away: livelock (packets that move without completing, which this
model's fixed routes do not produce) and stalls shorter than the window.
"""
from __future__ import annotations

import networkx as nx

from ..errors import SimnumaError
from .events import call_at

__all__ = ["DeadlockError", "ProgressWatch", "STALL_NS", "CHECK_NS", "STALL_LATENCIES", "stall_ns", "wait_for_graph",
           "diagnose", "congested_cycle", "warn_of_a_congested_cycle", "CONGESTED_SHARE"]

STALL_NS = 1_000_000.0   # 1 ms of simulated time: thousands of memory latencies, even under full load
CHECK_NS = STALL_NS / 4
STALL_LATENCIES = 100    # a window is at least this many of the board's longest latency


def stall_ns(topology) -> float:
    """How long a run may go without a completion before it counts as stuck: :data:`STALL_NS`, or
    :data:`STALL_LATENCIES` times the board's longest latency (a hop, a memory, a probe, a DRAM timing other
    than the refresh interval, a point of a loaded-latency curve) where that is longer."""
    longest = 0.0
    for node in topology.nodes:
        times = [node.memory_latency_ns, node.sri_latency_ns, node.xbar_latency_ns, node.probe_lookup_ns,
                 node.probe_occupancy_ns, *(node.hold_ns or {}).values()]
        if node.dram is not None:
            times += [t for name, t in node.dram.timings_ns.items() if name != "tREFI"]
        for curve in node.curves or ():
            times += [ns for _, ns in curve.points]
        longest = max([longest, *(t for t in times if t)])
    for link in topology.links:
        longest = max(longest, link.latency_ns)
    return max(STALL_NS, STALL_LATENCIES * longest)


class DeadlockError(SimnumaError):
    """A run stopped because nothing could move; ``diagnosis`` holds what was found (JSON-ready)."""

    def __init__(self, message: str, diagnosis: dict):
        super().__init__(message)
        self.diagnosis = diagnosis

    def __reduce__(self):   # crosses from a worker process to the main one intact
        return (type(self), (str(self), self.diagnosis))


class ProgressWatch:
    """Checks, every quarter of its window, that some transaction completed while any was outstanding.

    It only reads the model's counters and buffers: a run that does not
    deadlock gives the same results with it as without it.
    """

    def __init__(self, system):
        self.system = system
        self.env = system.env
        self.completed = 0
        self.since_ns = 0.0
        self.stall_ns = stall_ns(system.topology)
        self.check_ns = self.stall_ns / 4

    def start(self) -> None:
        call_at(self.env.clock, self.env.now_ns + self.check_ns, self._check)

    def _check(self, _arg=None) -> None:
        coherence = self.system.coherence
        now = self.env.now_ns
        if coherence.completed != self.completed or coherence.started == coherence.completed:
            self.completed = coherence.completed
            self.since_ns = now
        elif now - self.since_ns >= self.stall_ns:
            raise deadlock_error(self.system, now - self.since_ns)
        call_at(self.env.clock, now + self.check_ns, self._check)


def wait_for_graph(pools) -> nx.DiGraph:
    """Edges ``holder pool -> awaited pool`` for every waiting request that holds a slot elsewhere.

    Each waiting request names the slots its party holds (:meth:`CreditPool.request`'s ``held`` and
    ``held_data``; a probe's copies count toward the one MCT probe buffer they share).
    """
    graph = nx.DiGraph()
    for pool in pools:
        for _fn, _arg, held, held_data, _since in pool.waiters:
            for h in (held, held_data):
                if h is not None and h.account is not pool:
                    graph.add_edge(h.account.name, pool.name)
    return graph


def diagnose(system, stalled_ns: float) -> dict:
    """What holds the run: the cycle of full buffers if there is one, and every pool with waiters."""
    now = system.env.now_ns
    waiting = {pool.name: len(pool.waiters) for pool in system.pools if pool.waiters}
    full = [pool.name for pool in system.pools if pool.occupancy(now) >= pool.capacity]
    try:
        cycle = [edge[0] for edge in nx.find_cycle(wait_for_graph(system.pools))]
    except nx.NetworkXNoCycle:
        cycle = []
    coherence = system.coherence
    return {"stalled_ns": stalled_ns, "at_ns": now, "outstanding": coherence.started - coherence.completed,
            "completed": coherence.completed, "cycle": cycle, "waiting": waiting, "full": full}


def deadlock_error(system, stalled_ns: float) -> DeadlockError:
    """The one-line error for a run that made no progress for ``stalled_ns``."""
    d = diagnose(system, stalled_ns)
    head = (f"deadlock: no transaction completed in {stalled_ns / 1e6:g} ms of simulated time with"
            f" {d['outstanding']} outstanding (at {d['at_ns'] / 1e6:.3f} ms)")
    if d["cycle"]:
        ring = " -> ".join(d["cycle"] + d["cycle"][:1])
        return DeadlockError(f"{head}; a cycle of full buffers, each waiting on the next: {ring}", d)
    busiest = sorted(d["waiting"].items(), key=lambda kv: -kv[1])[:6]
    names = ", ".join(f"{name} ({n} waiting)" for name, n in busiest) or "none"
    return DeadlockError(f"{head}; no cycle among the waiting buffers found; full buffers with waiters: {names}", d)


CONGESTED_SHARE = 0.5   # a command buffer full at least this share of the simulated time counts as congested
_ROUTE_CLASS = {"request": "request", "posted": "request", "response": "response", "probe": "probe"}


def congested_cycle(system) -> tuple:
    """``(virtual channel, ((a, b), ...))``: a cycle the board's routes admit (``simnuma topo check``) whose
    command buffers of one channel were each full at least :data:`CONGESTED_SHARE` of the simulated time, or
    ``()``.  Steady mode warns of it: a run longer than its window may fall into a congested state, or
    deadlock, on that cycle, which the window did not reach."""
    from ..topology.channels import channel_dependencies
    from .packet import VC_NAMES

    now = system.env.clock.now_ns
    if now <= 0.0:
        return ()
    full: dict = {}   # (a, b, channel) -> the share of time its command buffers were full (the least of parallel links)
    for d in system.link_list:
        for vc, pool in zip(VC_NAMES, d.cmd_pools):
            share = pool.occupancy_ns(now)[1] / now
            key = (d.src_id, d.dst_id, vc)
            full[key] = min(full.get(key, 1.0), share)
    if not any(share >= CONGESTED_SHARE for share in full.values()):
        return ()
    graph = channel_dependencies(system.topology)
    split = bool(system.topology.split_routes())
    for vc in VC_NAMES:
        congested = [n for n in graph if (not split or n[2] == _ROUTE_CLASS[vc])
                     and full.get((n[0], n[1], vc), 0.0) >= CONGESTED_SHARE]
        try:
            cycle = nx.find_cycle(graph.subgraph(congested))
        except nx.NetworkXNoCycle:
            continue
        return vc, tuple((edge[0][0], edge[0][1]) for edge in cycle)
    return ()


def warn_of_a_congested_cycle(system) -> None:
    """Steady mode: say so when the buffers of a cyclic wait the routes admit were congested in the window.

    Nothing is said when nothing was extrapolated: the window was then the whole run."""
    if system.offset_ns <= 0.0:
        return
    found = congested_cycle(system)
    if found:
        vc, cycle = found
        ring = " -> ".join(f"{a}->{b}" for a, b in cycle + cycle[:1])
        system.warnings.append(
            f"steady mode: the {vc} command buffers of a cyclic wait the routes admit ({ring}; simnuma topo check)"
            f" were each full at least {100 * CONGESTED_SHARE:g}% of the simulated window: a longer run can fall"
            " into a slower congested state on that cycle, or deadlock, which the window did not reach and the"
            " extrapolation does not show (--exact simulates every line; routing: updown removes the cycle)")
