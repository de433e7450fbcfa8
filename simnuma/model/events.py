"""The one scheduling primitive the hot path uses.

Components never start a SimPy process per packet: they schedule a bare,
already-triggered :class:`simpy.events.Event` whose only callback calls a bound
method with one argument.  That keeps a packet hop to a single heap push and
pop in SimPy's own event loop.
"""
from __future__ import annotations

from heapq import heappush

from simpy.events import NORMAL

__all__ = ["Call", "call_at"]


def _fire(event) -> None:
    event.fn(event.arg)


class Call:
    """An already-triggered event that calls ``fn(arg)`` when SimPy processes it.

    It carries only what ``Environment.step`` reads of an event (``callbacks``
    and ``_ok``), so it is cheaper to make than a full :class:`simpy.Event`.
    """

    __slots__ = ("callbacks", "_ok", "fn", "arg")

    def __init__(self, fn, arg):  # noqa: D107 - deliberately minimal
        self.callbacks = [_fire]
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
