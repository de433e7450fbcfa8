"""The System Request Interface (SRI) of a node.

Models: the queue between the node's cores and its crossbar — requests, victim
writes, probe responses and source-done messages wait here for one of the
SRI's crossbar command buffers of their virtual channel (K8: request 2,
posted 3, response 3) and pay the SRI latency; the cores take the request
buffers in turns (round-robin: a core's next request waits in the core
until its last one has a buffer); and the probe path into the
node's caches — an incoming probe waits for a slot of the XBar-to-SRI probe
queue, is looked up for ``probe_lookup_ns`` and answered to the requester; it
holds its slot for the whole lookup, or for ``probe.occupancy`` where the board
gives one (lookups pipelined when it is shorter).

Abstracts away: the cache hierarchy itself (in the stride test no probe ever
hits, so every probe answers "miss" after the lookup), and which core goes
first when two ask at the same instant (the one that asked first in the
simulation's order); victims, probe responses and source-done messages are
served first come, first served.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from .credit import CreditPool
from .events import Clock, Component, Port, deliver_at, fire
from .xbar import XBar, enter_fabric
from .packet import REQUEST, RESPONSE, VC_NAMES, Packet

if TYPE_CHECKING:
    from .coherence import Coherence, Transaction
    from .core import Thread
    from .link import LinkDirection

__all__ = ["SRI"]


_PROBE_IN: Final = 0     # the callbacks of an SRI (SRI.handle)
_LOOKUP: Final = 1
_ANSWER: Final = 2
_INJECTED: Final = 3


class SRI(Component):
    """Request queue and probe handling of node ``index``."""

    __slots__ = ("env", "clock", "index", "node_id", "inject_delay_ns", "pools", "probe_queue",
                 "lookup_ns", "slot_ns", "xbar", "coherence", "routes", "resp_routes", "answer", "observer", "prober",
                 "looker", "injected")

    # wired by the System once every component exists (unset until then)
    xbar: XBar
    coherence: Coherence
    routes: list[tuple[LinkDirection, ...]]   # routes[dst + lane]: the link directions of a request from here to dst
    resp_routes: list[tuple[LinkDirection, ...]]   # ... and of a response (probe response, source-done)

    def __init__(self, env, index: int, node_id: int, params):
        self.env = env
        self.clock: Clock = env.clock
        self.index = index
        self.node_id = node_id
        self.inject_delay_ns = params.sri_latency_ns + params.xbar_latency_ns
        tag = f"N{node_id} sri->xbar"
        self.pools = [CreditPool(env, params.sri_buffers[vc], f"{tag} {vc}") if vc in params.sri_buffers else None
                      for vc in VC_NAMES]
        self.probe_queue = CreditPool(env, params.sri_probe_queue, f"N{node_id} xbar->sri probe")
        self.lookup_ns = params.probe_lookup_ns
        # how long a probe holds its slot when that is not its lookup (probe.occupancy), else -1: freed as it is answered
        occupancy = params.probe_occupancy_ns
        self.slot_ns = -1.0 if occupancy == self.lookup_ns else occupancy
        self.answer: tuple = (Port(self, _ANSWER),)   # the callbacks of a probe whose lookup is done
        self.prober = Port(self, _PROBE_IN)     # probe_in, as a callback
        self.looker = Port(self, _LOOKUP)       # _lookup, as a callback
        self.injected = Port(self, _INJECTED)   # _injected, as a callback
        self.observer: Any = None       # a trace's recorder (simnuma.trace), None when nothing records

    def handle(self, code: int, arg: Any) -> None:
        if code == _PROBE_IN:
            self.probe_in(arg)
        elif code == _LOOKUP:
            self._lookup(arg)
        elif code == _ANSWER:
            self._answer(arg)
        else:
            self._injected(arg)

    def pool_list(self):
        return [p for p in self.pools if p is not None] + [self.probe_queue]

    def inject(self, pkt: Packet, then=None) -> None:
        """Send ``pkt`` from this node; ``then(pkt)`` runs once it holds a crossbar buffer.

        A core's requests wait for a buffer in turns with the other cores' (the
        SRI arbitrates among its cores round-robin): while one of a core's
        requests waits, the core's later requests wait behind it, and each
        joins the wait only once the one before it has its buffer.  So a core
        with one request in flight (a latency chase) waits for one turn of
        each other core, not behind every line the others keep in flight.
        """
        txn: Transaction = pkt.txn   # typed: its lane is a compiled field
        pkt.path = (self.resp_routes if pkt.vc == RESPONSE else self.routes)[pkt.dst + txn.lane]
        if self.observer is not None:
            self.observer.sri_inject(self, pkt)
        if pkt.vc == REQUEST:
            thread: Thread = txn.thread
            if thread.presenting:   # the core's earlier request waits for a buffer: this one waits behind it
                thread.backlog.append((pkt, then))
                return
        self._present(pkt, then)

    def _present(self, pkt: Packet, then) -> None:
        """``pkt`` asks for a buffer of its channel."""
        pool = self.pools[pkt.vc]
        assert pool is not None   # the board gives every channel a core sends on its SRI buffers
        if pool.take_ready(self.clock.now_ns):
            # a buffer is free now (CreditPool.request's immediate grant, inlined: every packet a core or a
            # probe answer sends comes through here)
            self._enter(pkt, then)
        else:
            if pkt.vc == REQUEST:
                thread: Thread = pkt.txn.thread
                thread.presenting = True
            pool.request(self.injected, (pkt, then))

    def _injected(self, item: tuple[Packet, Any]) -> None:
        pkt = item[0]
        self._enter(pkt, item[1])
        if pkt.vc == REQUEST:
            self._next_of(pkt.txn.thread)

    def _next_of(self, thread: Thread) -> None:
        """A core's request got its buffer: the core's next request joins the wait, behind the other cores'."""
        thread.presenting = False
        backlog = thread.backlog
        while backlog and not thread.presenting:
            pkt, then = backlog.pop(0)
            self._present(pkt, then)

    def _enter(self, pkt: Packet, then) -> None:
        """``pkt`` holds an SRI buffer: it enters the crossbar."""
        pool = self.pools[pkt.vc]
        assert pool is not None   # (inject took a buffer of it)
        pkt.held = pool
        pkt.held_data = None
        if self.observer is not None:
            self.observer.sri_enter(self, pkt)
        enter_fabric(self.clock, pkt, self.inject_delay_ns, self.xbar)
        if then is not None:
            fire(then, pkt)

    def probe_in(self, pkt: Packet) -> None:
        """A probe for this node's caches arrived in the crossbar."""
        if self.observer is not None:
            self.observer.probe_arrive(self, pkt)
        if self.probe_queue.take_ready(self.clock.now_ns):   # a slot is free now: CreditPool.request's grant, inlined
            self._lookup(pkt)
        else:
            self.probe_queue.request(self.looker, pkt, pkt.held, pkt.held_data)

    def _lookup(self, pkt: Packet) -> None:
        now = self.clock.now_ns
        if self.observer is not None:
            self.observer.probe_lookup(self, pkt)
        pkt.held.release(now)
        if self.slot_ns >= 0.0:
            self.probe_queue.release(now + self.slot_ns)
        deliver_at(self.clock, now + self.lookup_ns, pkt, self.answer)

    def _answer(self, probe: Packet) -> None:
        if self.slot_ns < 0.0:
            self.probe_queue.release(self.clock.now_ns)
        txn: Transaction = probe.txn
        if txn.requester == self.index:
            self.coherence.local_probe_response(txn)
        else:
            self.inject(Packet("probe_resp", txn, self.index, txn.requester, ()))
