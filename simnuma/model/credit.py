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

from collections import deque
from collections.abc import Callable
from heapq import heappop, heappush
from typing import TYPE_CHECKING, Any

from .events import Clock, grant_at

if TYPE_CHECKING:
    from .packet import Packet

__all__ = ["CreditPool", "release_buffers"]


class CreditPool:
    """``capacity`` buffer slots with FIFO waiting.

    Models: a bounded buffer whose occupancy a sender tracks by credits.
    Abstracts away: which slot is used (slots are interchangeable).
    """

    __slots__ = ("env", "clock", "name", "capacity", "ready", "waiters")

    def __init__(self, env, capacity: int, name: str):
        if capacity <= 0:
            raise ValueError(f"{name}: a buffer pool needs at least one slot, got {capacity}")
        self.env = env
        self.clock: Clock = env.clock
        self.name = name
        self.capacity = capacity
        self.ready = [0.0] * capacity  # ready times of free slots (a heap)
        self.waiters: deque[tuple[Callable[[Any], None], Any]] = deque()   # (fn, arg) of the requests waiting

    def request(self, fn, arg) -> None:
        """Call ``fn(arg)`` once a slot is held (now, later, or when one is freed)."""
        ready = self.ready
        if ready:
            ready_ns = heappop(ready)
            if ready_ns <= self.clock.now_ns:   # grant_at's immediate case, inlined (every request comes here)
                fn(arg)
            else:
                grant_at(self.clock, ready_ns, fn, arg)
        else:
            self.waiters.append((fn, arg))

    def release(self, when_ns: float) -> float:
        """The slot's holder frees it at ``when_ns`` (>= now); return when it is usable again.

        Here at once; a subclass whose slots come back later overrides this
        (and gives the slot back with :meth:`give_back` at that time).
        """
        # give_back(when_ns), inlined: a call here cost 1-2% of exact mode
        if self.waiters:
            fn, arg = self.waiters.popleft()
            grant_at(self.clock, when_ns, fn, arg)
        else:
            heappush(self.ready, when_ns)
        return when_ns

    def give_back(self, ready_ns: float) -> None:
        """Make a slot usable again from ``ready_ns`` (a waiting request gets it then)."""
        if self.waiters:
            fn, arg = self.waiters.popleft()
            grant_at(self.clock, ready_ns, fn, arg)
        else:
            heappush(self.ready, ready_ns)

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
