"""The scheduling primitives the hot path uses.

Components never start a SimPy process per packet: they schedule a bare,
already-triggered :class:`simpy.events.Event` whose only callback calls a bound
method with one argument.  That keeps a packet hop to a single heap push and
pop in SimPy's own event loop.  A packet on its way between two components is
itself that event (:func:`deliver_at`): it carries the ``callbacks`` SimPy
reads, so its hops allocate nothing.
"""
from __future__ import annotations

from heapq import heappush

from simpy.events import NORMAL

from .packet import Packet

__all__ = ["Call", "call_at", "deliver_at", "later"]


def _fire(event) -> None:
    event.fn(event.arg)


_FIRE = (_fire,)   # SimPy only iterates an event's callbacks (and then drops them): one tuple serves all


class Call:
    """An already-triggered event that calls ``fn(arg)`` when SimPy processes it.

    It carries only what ``Environment.step`` reads of an event (``callbacks``
    and ``_ok``), so it is cheaper to make than a full :class:`simpy.Event`.
    """

    __slots__ = ("callbacks", "_ok", "fn", "arg")

    def __init__(self, fn, arg):  # noqa: D107 - deliberately minimal
        self.callbacks = _FIRE
        self._ok = True
        self.fn = fn
        self.arg = arg


def call_at(env, when_ns: float, fn, arg=None) -> None:
    """Call ``fn(arg)`` at absolute simulated time ``when_ns`` (not before now).

    Equivalent to ``env.schedule(Call(...), NORMAL, delay)``, pushed straight
    onto SimPy's event heap with SimPy's own ordering key (time, priority,
    insertion id) to save a call on the hottest path of the simulator.
    """
    now = env._now
    heappush(env._queue, (when_ns if when_ns > now else now, NORMAL, next(env._eid), Call(fn, arg)))


def deliver_at(env, when_ns: float, pkt, callbacks: tuple) -> None:
    """Hand ``pkt`` to ``callbacks`` (a 1-tuple of a method taking the packet) at ``when_ns`` (not before now).

    The packet is the event: SimPy calls ``callbacks[0](pkt)``.  A packet is
    in one place at a time, so it is on the event heap at most once.
    """
    _claim(pkt, callbacks)
    now = env._now
    heappush(env._queue, (when_ns if when_ns > now else now, NORMAL, next(env._eid), pkt))


def later(fn, arg):
    """The event that calls ``fn(arg)``: ``arg`` itself where it is a packet (see :func:`deliver_at`), else a Call."""
    if type(arg) is Packet:
        _claim(arg, (fn,))
        return arg
    return Call(fn, arg)


def _claim(pkt, callbacks: tuple) -> None:
    """Make ``pkt`` the event that calls ``callbacks``; it must not be on the heap already."""
    if pkt.callbacks is not None:
        raise RuntimeError(f"a {pkt.kind} packet was put on the event heap while already on it")
    pkt.callbacks = callbacks
