"""The scheduling primitives the hot path uses, and the one module that touches SimPy's internals.

SimPy stays the event loop; to keep a packet hop cheap the model pushes
entries onto its event heap directly, reads its clock without the property,
and makes packets events of their own.  Those uses of SimPy internals
(``Environment._now``, ``_queue``, ``_eid``, the heap entry layout, an event's
``callbacks`` and ``_ok``) live here and nowhere else; ``pyproject.toml`` pins
SimPy to the versions ``tests/model/test_events.py`` checks them against.

Components never start a SimPy process per packet: they schedule a bare,
already-triggered :class:`simpy.events.Event` whose only callback calls a bound
method with one argument.  That keeps a packet hop to a single heap push and
pop in SimPy's own event loop.  A packet on its way between two components is
itself that event (:func:`deliver_at`): it carries the ``callbacks`` SimPy
reads, so its hops allocate nothing.
"""
from __future__ import annotations

from heapq import heappop, heappush
from typing import Any

import simpy
from simpy.core import EmptySchedule, StopSimulation
from simpy.events import NORMAL, URGENT, EventPriority

__all__ = ["Environment", "HeapEvent", "Call", "call_at", "grant_at", "deliver_at", "later"]


class Environment(simpy.Environment):
    """SimPy's environment with its clock also in a plain attribute, ``now_ns``.

    Components read the time on every event; an attribute costs a third of
    the ``now`` property's call.  :meth:`step` is SimPy 4.1's, setting both.
    """

    def __init__(self):
        super().__init__()
        self.now_ns = self._now

    def step(self) -> None:
        try:
            self.now_ns = self._now = (entry := heappop(self._queue))[0]
        except IndexError:
            raise EmptySchedule from None
        event: Any = entry[3]   # a SimPy event, or a Packet, Transaction or Call: what it has of one is all it reads
        callbacks: Any = event.callbacks   # a list, or a tuple shared by many (_FIRE, a component's callbacks)
        event.callbacks = None   # SimPy's step does the same
        try:
            for callback in callbacks:
                callback(event)
        except StopSimulation:
            event.callbacks = callbacks[callbacks.index(callback) + 1:]
            self.schedule(event, EventPriority(URGENT - 1))
            raise
        if not event._ok and not hasattr(event, "_defused"):
            exc = type(event._value)(*event._value.args)
            exc.__cause__ = event._value
            raise exc


class HeapEvent:
    """What SimPy's event loop reads of an event: ``callbacks`` (set while on the heap) and ``_ok``.

    A :class:`~simnuma.model.packet.Packet` is one, so that a packet on its way
    between two components is itself the event that delivers it; so is a
    :class:`~simnuma.model.coherence.Transaction`, for the waits of the protocol.
    """

    __slots__ = ("callbacks",)
    callbacks: tuple | None
    _ok = True    # already triggered, successfully


def _fire(event) -> None:
    event.fn(event.arg)


_FIRE = (_fire,)   # SimPy only iterates an event's callbacks (and then drops them): one tuple serves all


class Call:
    """An already-triggered event that calls ``fn(arg)`` when SimPy processes it.

    It carries only what ``Environment.step`` reads of an event (``callbacks``
    and ``_ok``), so it is cheaper to make than a full :class:`simpy.Event`.
    """

    __slots__ = ("callbacks", "_ok", "fn", "arg")
    callbacks: tuple | None

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
    in one place at a time, so it is on the event heap at most once.  A
    :class:`~simnuma.model.coherence.Transaction` waiting on a time is
    scheduled the same way.
    """
    if pkt.callbacks is not None:   # _claim, inlined: every hop of every packet comes through here
        _claim(pkt, callbacks)
    pkt.callbacks = callbacks
    now = env._now
    heappush(env._queue, (when_ns if when_ns > now else now, NORMAL, next(env._eid), pkt))


def grant_at(env, when_ns: float, fn, arg) -> None:
    """Call ``fn(arg)`` now if ``when_ns`` has come, else at ``when_ns`` (a credit or buffer slot granted)."""
    if when_ns <= env._now:
        fn(arg)
    else:
        heappush(env._queue, (when_ns, NORMAL, next(env._eid), later(fn, arg)))


def later(fn, arg):
    """The event that calls ``fn(arg)``: ``arg`` itself where it is a packet (see :func:`deliver_at`), else a Call."""
    if isinstance(arg, HeapEvent):
        _claim(arg, (fn,))
        return arg
    return Call(fn, arg)


def _claim(pkt, callbacks: tuple) -> None:
    """Make ``pkt`` the event that calls ``callbacks``; it must not be on the heap already."""
    if pkt.callbacks is not None:
        what = f"{pkt.kind} packet" if hasattr(pkt, "kind") else type(pkt).__name__.lower()
        raise RuntimeError(f"a {what} was put on the event heap while already on it")
    pkt.callbacks = callbacks
