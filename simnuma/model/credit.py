"""Finite buffers as credit pools.

A :class:`CreditPool` is a set of identical buffer slots.  A sender asks for a
slot with :meth:`CreditPool.request`; the callback runs when one is granted.
A slot that has been released carries the time from which its holder may use
it again (``ready_ns``): for a buffer on the far side of a link that is when the
credit-return packet arrives, which may be in the future.  Keeping those times
instead of scheduling an event per returned credit is what makes flow control
cheap to simulate.

The pool is the simulator's one resource base; a subclass overrides
:meth:`CreditPool.release` when a freed slot becomes usable by the sender
later than it is freed (a link's receive buffers: when the credit is back), and
nothing else.  Waiting requests are served first come, first served, as the
per-virtual-channel FIFOs of HyperTransport are.
"""
from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Any, Final

from .events import Clock, fire, grant_at

heappop: Final = heapq.heappop   # a C static in the compiled model: no lookup in the module's globals per call
heappush: Final = heapq.heappush   # a C static in the compiled model: no lookup in the module's globals per call

if TYPE_CHECKING:
    from .packet import Packet

__all__ = ["CreditPool", "release_buffers"]


class CreditPool:
    """``capacity`` buffer slots with FIFO waiting.

    Models: a bounded buffer whose occupancy a sender tracks by credits.
    Abstracts away: which slot is used (slots are interchangeable).

    Its occupancy is accounted exactly, not sampled: a slot is free from the
    time it is ready until it is taken, so the time slots were free is the
    sum, over slots taken, of how long each had been ready when it was taken
    (``free_ns``), plus how long those still in ``ready`` have been; and the
    pool is full from the moment a take leaves no slot ready until the
    earliest ready time still to come (``full_since``, ``full_ns``).
    :meth:`occupancy_ns` reads both.

    It also measures what its holders wait for: a request that is not granted
    at once names the slots its party holds meanwhile (``held``,
    ``held_data``), and the pool of each adds the time to the grant to its
    count of waits on this pool (:meth:`waited`)
    (:meth:`count_wait`; the copies of a broadcast probe, which share one
    slot, count the time any of them waited).  That is the slot-time a
    buffer spent blocked on the next one, the measured edge along which
    full buffers back up (:func:`simnuma.model.bottleneck.bottleneck`).
    """

    __slots__ = ("env", "clock", "name", "capacity", "ready", "waiters", "free_ns", "full_ns", "full_since",
                 "account", "waits", "wait_to", "wait_to_ns", "wait_to2", "wait_to2_ns")

    def __init__(self, env, capacity: int, name: str):
        if capacity <= 0:
            raise ValueError(f"{name}: a buffer pool needs at least one slot, got {capacity}")
        self.env = env
        self.clock: Clock = env.clock
        self.name = name
        self.capacity = capacity
        self.ready = [0.0] * capacity  # ready times of free slots (a heap)
        self.waiters: list[tuple[Any, Any, Any, Any, float]] = []   # the requests waiting, first come first: (fn,
        # arg, the slots the party holds meanwhile (two, or None), since when); fn a Port of a component, or any callable
        self.free_ns = 0.0       # time the slots taken so far had been free before they were taken
        self.full_ns = 0.0       # time the pool was full, up to full_since
        self.full_since = -1.0   # when the pool became full (and has stayed so, as far as is settled); -1: not full
        self.account: CreditPool = self   # the pool whose waits a holder of this one counts toward
        self.waits: dict[str, float] = {}   # slot-ns this pool's holders waited, by the name of the pool awaited,
        self.wait_to = ""                   # ... but for the two pools they waited for last (their names: the strings
        self.wait_to_ns = 0.0               # are the pools' own, compared by identity), counted here until a third
        self.wait_to2 = ""                  # comes (a link's probe buffer waits on the next link and on its node's
        self.wait_to2_ns = 0.0              # probe slots by turns)

    def take_ready(self, now: float) -> bool:
        """Take a slot if one is ready ``now``, accounting for the time it was free; whether one was.

        :meth:`request`'s immediate grant: the senders on the hot path call this
        and, when it succeeds, go on directly instead of through a callback.
        """
        ready = self.ready
        if not ready or ready[0] > now:
            return False
        self._settle(now)   # the pool, if full, was until the slot at hand came back
        self.free_ns += now - heappop(ready)
        if not ready or ready[0] > now:
            self.full_since = now
        return True

    def request(self, fn, arg, held: CreditPool | None = None, held_data: CreditPool | None = None) -> None:
        """Call ``fn(arg)`` once a slot is held (now, later, or when one is freed).

        ``held`` and ``held_data`` are the slots the requesting party holds
        while it waits (a packet's ``held`` and ``held_data``): each counts
        the wait (:meth:`count_wait`).
        """
        ready = self.ready
        now = self.clock.now_ns
        if self.take_ready(now):   # grant_at's immediate case, inlined (every request comes here)
            fire(fn, arg)
        elif ready:   # full: the slot coming back first goes on to this request without being free
            when_ns = heappop(ready)
            if held is not None:
                held.count_wait(self.name, now, when_ns)
                if held_data is not None:
                    held_data.count_wait(self.name, now, when_ns)
            grant_at(self.clock, when_ns, fn, arg)
        else:
            self.waiters.append((fn, arg, held, held_data, now))

    def grant_next(self, when_ns: float) -> None:
        """Give a slot usable from ``when_ns`` to the first waiting request, counting its wait."""
        fn, arg, held, held_data, since = self.waiters.pop(0)
        if held is not None:
            holder: CreditPool = held
            holder.count_wait(self.name, since, when_ns)
            if held_data is not None:
                holder = held_data
                holder.count_wait(self.name, since, when_ns)
        grant_at(self.clock, when_ns, fn, arg)

    def count_wait(self, awaited: str, since_ns: float, until_ns: float) -> None:
        """A slot of this pool was blocked from ``since_ns`` to ``until_ns`` waiting for the pool named ``awaited``."""
        if awaited is self.wait_to:
            self.wait_to_ns += until_ns - since_ns
        elif awaited is self.wait_to2:
            self.wait_to2_ns += until_ns - since_ns
        else:
            self._wait_for(awaited, until_ns - since_ns)

    def _wait_for(self, awaited: str, wait_ns: float) -> None:
        """Count on ``awaited`` from now on, and on the pool awaited last; what the other had is put with the rest."""
        if self.wait_to2_ns:
            waits = self.waits
            waits[self.wait_to2] = waits.get(self.wait_to2, 0.0) + self.wait_to2_ns
        self.wait_to2 = self.wait_to
        self.wait_to2_ns = self.wait_to_ns
        self.wait_to = awaited
        self.wait_to_ns = wait_ns

    def waited(self) -> dict[str, float]:
        """Slot-ns this pool's holders waited so far, by the name of the pool awaited."""
        self._wait_for("", 0.0)
        self._wait_for("", 0.0)
        return self.waits

    def release(self, when_ns: float) -> float:
        """The slot's holder frees it at ``when_ns`` (>= now); return when it is usable again.

        Here at once; a subclass whose slots come back later overrides this
        (and gives the slot back with :meth:`give_back` at that time).
        """
        # give_back(when_ns), inlined: a call here cost 1-2% of exact mode
        if self.waiters:
            self.grant_next(when_ns)
        else:
            heappush(self.ready, when_ns)
        return when_ns

    def give_back(self, ready_ns: float) -> None:
        """Make a slot usable again from ``ready_ns`` (a waiting request gets it then)."""
        if self.waiters:
            self.grant_next(ready_ns)
        else:
            heappush(self.ready, ready_ns)

    def _settle(self, now: float) -> None:
        """Close a full stretch that a slot's coming back (by ``now``) has ended."""
        ready = self.ready
        if self.full_since >= 0.0 and ready and ready[0] <= now:
            self.full_ns += ready[0] - self.full_since
            self.full_since = -1.0

    def occupancy_ns(self, now: float) -> tuple[float, float]:
        """``(slot-ns held, ns full)`` from the start of the run to ``now`` (not before the last take)."""
        self._settle(now)
        ready = self.ready
        free = self.free_ns
        for t in ready:
            if t < now:
                free += now - t
        full = self.full_ns + (now - self.full_since if self.full_since >= 0.0 else 0.0)
        held = self.capacity * now - free
        return (held if held > 0.0 else 0.0), full   # a pool never used: 0, not a rounding error below it

    def occupancy(self, now: float) -> int:
        """Slots held or not yet returned at ``now``."""
        ready = self.ready
        if not ready or ready[0] > now:   # the earliest free slot is not back yet: all are taken
            return self.capacity
        return self.capacity - len([t for t in ready if t <= now])


def release_buffers(pkt: Packet, when_ns: float) -> None:
    """Free the buffers ``pkt`` holds; a data buffer's credit rides in the same NOP as the command's."""
    ready_ns = pkt.held.release(when_ns)
    if pkt.held_data is not None:
        pkt.held_data.give_back(ready_ns)
