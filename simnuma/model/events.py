"""The scheduling primitives the hot path uses, and the one module that touches SimPy's internals.

SimPy stays the event loop (its ``Environment.run``, stepping with SimPy
4.1's ``step`` compiled on :class:`Clock`); to keep a packet hop cheap the
model pushes entries onto its event heap directly, reads its clock as a field
of a compiled object, and makes packets events of their own.  Those uses of
SimPy internals (``Environment._now``, ``_queue``, ``_eid``, ``step``,
``schedule`` and ``peek`` with their heap entries, an event's ``callbacks`` and
``_ok``) live here and nowhere else; ``pyproject.toml`` pins
SimPy to the versions ``tests/model/test_events.py`` checks them against.

Components never start a SimPy process per packet: they schedule a bare,
already-triggered event whose only callback takes one argument.  That keeps a
packet hop to a single heap push and pop in SimPy's own event loop.  A packet
on its way between two components is itself that event (:func:`deliver_at`):
it carries the ``callbacks`` SimPy reads, so its hops allocate nothing.  The
model's components are :class:`Component` objects and their callbacks
:class:`Port` objects: the event loop and the credit pools call a port as a
compiled method of its component (:func:`fire`), where a bound method would be
a call through the interpreter; any other callable still works.
"""
from __future__ import annotations

import heapq
from typing import Any, Final

import simpy
from simpy.core import EmptySchedule, StopSimulation
from simpy.events import NORMAL, URGENT, EventPriority

heappop: Final = heapq.heappop   # a C static in the compiled model: no lookup in the module's globals per call
heappush: Final = heapq.heappush   # a C static in the compiled model: no lookup in the module's globals per call

_NORMAL: Final = 1   # SimPy's NORMAL priority, as a constant the compiled model inlines
assert _NORMAL == NORMAL

__all__ = ["Clock", "Entry", "Environment", "HeapEvent", "Call", "Component", "Port", "fire", "call_at", "grant_at",
           "deliver_at", "later"]


class Component:
    """A part of the model whose callbacks are :class:`Port` objects: it handles each by the port's code."""

    def handle(self, code: int, arg: Any) -> None:
        """Run the callback numbered ``code`` with ``arg``."""
        raise NotImplementedError(f"{type(self).__name__} has no callback {code}")


class Port:
    """A callback of a :class:`Component`: ``target.handle(code, arg)``, a compiled call where the model makes it.

    Calling the port (``port(arg)``) does the same from anywhere else.
    """

    __slots__ = ("target", "code")

    def __init__(self, target: Component, code: int):
        self.target = target
        self.code = code

    def __call__(self, arg: Any) -> None:
        self.target.handle(self.code, arg)


def fire(fn: Any, arg: Any) -> None:
    """``fn(arg)``: a :class:`Port` through its component's compiled ``handle``, anything else as a call."""
    if isinstance(fn, Port):
        port: Port = fn
        port.target.handle(port.code, arg)
    else:
        fn(arg)


class Entry:
    """One entry of the event heap: SimPy's ``(time, priority, insertion id, event)`` as a compiled object.

    Entries order as SimPy's tuples do (time, then priority, then insertion
    id); one comparison is a compiled method on three fields, where a tuple's
    compares its items as Python objects one by one.
    """

    __slots__ = ("time", "priority", "eid", "event")

    def __init__(self, time: float, priority: int, eid: int, event: Any):
        self.time = time
        self.priority = priority
        self.eid = eid
        self.event = event

    def __lt__(self, other: Entry) -> bool:
        if self.time != other.time:
            return self.time < other.time
        if self.priority != other.priority:
            return self.priority < other.priority
        return self.eid < other.eid


class Clock:
    """The simulated time and SimPy's event heap, as the hot path reads them.

    A compiled object of fixed layout: reading ``now_ns`` is a field read,
    where an attribute of the environment (a Python object) is a dictionary
    lookup.  Every component keeps the clock of its environment; the
    environment's own clock (``_now``, which SimPy reads) is this one's.
    :meth:`step` is SimPy 4.1's ``Environment.step``; :meth:`steps` is what
    the environment's ``run`` steps with.
    """

    __slots__ = ("now_ns", "queue", "serial", "env", "spare")

    def __init__(self, now_ns: float):
        self.now_ns = now_ns
        self.queue: list = []   # the event heap of Entry objects, set by the environment
        self.serial = 0         # the next insertion id (SimPy's insertion counter, ``_eid``, counts with it)
        self.env: Any = None
        self.spare: list[Entry] = []   # entries popped and done with, to be filled again (no allocation per event)

    def next_id(self) -> int:
        """The next insertion id."""
        serial = self.serial
        self.serial = serial + 1
        return serial

    def entry(self, when_ns: float, event: Any) -> Entry:
        """A heap entry for ``event`` at ``when_ns`` with SimPy's NORMAL priority and the next insertion id."""
        spare = self.spare
        serial = self.serial
        self.serial = serial + 1
        if spare:
            entry = spare.pop()
            entry.time = when_ns
            entry.priority = _NORMAL
            entry.eid = serial
            entry.event = event
            return entry
        return Entry(when_ns, _NORMAL, serial, event)


    def steps(self) -> None:
        """Step until the run is over.

        SimPy's ``Environment.run`` calls ``step`` until it raises
        ``StopSimulation`` (the run's end has come) or ``EmptySchedule``, and
        ends on that exception.  This steps the same way until the same
        exception, without a Python-level call per event.
        """
        while True:
            self.step()

    def step(self) -> None:
        try:
            entry: Entry = heappop(self.queue)
        except IndexError:
            raise EmptySchedule from None
        self.now_ns = entry.time
        event: Any = entry.event   # a SimPy event, or a Packet, Transaction or Call: what it has of one is all it reads
        entry.event = None
        self.spare.append(entry)
        # the model's own events first, read through their compiled classes (they never fail and never stop
        # the run: SimPy's stop is a callback of a SimPy event)
        if isinstance(event, Call):
            call: Call = event
            call.callbacks = None
            fire(call.fn, call.arg)   # its callbacks are always (_fire,): the call itself
            return
        if isinstance(event, HeapEvent):
            heap_event: HeapEvent = event
            handlers = heap_event.callbacks
            if handlers is None:   # put on the heap without a consumer: a mistake in the model, not a result
                raise RuntimeError(f"a {type(event).__name__.lower()} came off the event heap with nothing to call")
            heap_event.callbacks = None
            for handler in handlers:
                fire(handler, event)
            return
        callbacks: Any = event.callbacks   # a list, or a tuple shared by many (_FIRE, a component's callbacks)
        event.callbacks = None   # SimPy's step does the same
        try:
            for callback in callbacks:
                callback(event)
        except StopSimulation:
            event.callbacks = callbacks[callbacks.index(callback) + 1:]
            self.env.schedule(event, EventPriority(URGENT - 1))
            raise
        if not event._ok and not hasattr(event, "_defused"):
            exc = type(event._value)(*event._value.args)
            exc.__cause__ = event._value
            raise exc


class _Serial:
    """SimPy's insertion counter (``Environment._eid``, an iterator of ids) as the clock's ``serial``."""

    def __init__(self, clock: Clock):
        self.clock = clock

    def __iter__(self) -> _Serial:
        return self

    def __next__(self) -> Any:   # (an object: what the compiled iterator protocol returns)
        return self.clock.next_id()


class Environment(simpy.Environment):
    """SimPy's environment, its clock a :class:`Clock` (``clock``) that also runs its event loop.

    SimPy's own code reads and sets ``_now``, which reads and sets the
    clock's ``now_ns``; ``now_ns`` is the same time for code outside the hot
    path.  ``step`` is the clock's; SimPy's ``run`` steps with
    :meth:`Clock.steps` instead, which returns only by the exceptions that
    end ``run``.
    """

    def __init__(self):
        self.clock = Clock(0.0)
        super().__init__()
        self.clock.queue = self._queue
        self._eid = _Serial(self.clock)   # type: ignore[assignment]
        self.clock.env = self
        self.step = self.clock.step   # type: ignore[method-assign]

    def schedule(self, event, priority=NORMAL, delay=0) -> None:
        """SimPy's ``schedule``, with the heap entry an :class:`Entry`."""
        heappush(self.clock.queue, Entry(self.clock.now_ns + delay, priority, self.clock.next_id(), event))

    def peek(self) -> float:
        """SimPy's ``peek``: the time of the next event (infinity when there is none)."""
        queue = self.clock.queue
        return queue[0].time if queue else simpy.core.Infinity

    def run(self, until=None):
        """SimPy's ``run``, stepping with :meth:`Clock.steps`."""
        self.step = self.clock.steps   # type: ignore[method-assign]
        try:
            return super().run(until)
        finally:
            self.step = self.clock.step   # type: ignore[method-assign]

    @property
    def _now(self) -> float:
        return self.clock.now_ns

    @_now.setter
    def _now(self, value: float) -> None:
        self.clock.now_ns = value

    @property
    def now_ns(self) -> float:
        return self.clock.now_ns


class HeapEvent:
    """What the event loop reads of one of the model's events: ``callbacks`` (set while on the heap).

    A :class:`~simnuma.model.packet.Packet` is one, so that a packet on its way
    between two components is itself the event that delivers it; so is a
    :class:`~simnuma.model.coherence.Transaction`, for the waits of the protocol.
    Such an event never fails (``_ok``, for SimPy code that asks).
    """

    __slots__ = ("callbacks",)
    callbacks: tuple | None
    _ok = True    # already triggered, successfully


def _fire(event: Call) -> None:
    fire(event.fn, event.arg)


_FIRE: Final = (_fire,)   # SimPy only iterates an event's callbacks (and then drops them): one tuple serves all


class Call:
    """An already-triggered event that calls ``fn(arg)`` when SimPy processes it.

    It carries only what :meth:`Clock.step` reads of one of the model's
    events (``callbacks``), so it is cheaper to make than a full
    :class:`simpy.Event`.
    """

    __slots__ = ("callbacks", "fn", "arg")
    callbacks: tuple | None
    _ok = True    # already triggered, successfully

    def __init__(self, fn: Any, arg: Any):  # noqa: D107 - deliberately minimal
        self.callbacks = _FIRE
        self.fn = fn
        self.arg = arg


def call_at(clock: Clock, when_ns: float, fn: Any, arg: Any = None) -> None:
    """Call ``fn(arg)`` at absolute simulated time ``when_ns`` (not before now).

    Equivalent to ``env.schedule(Call(...), NORMAL, delay)``, pushed straight
    onto SimPy's event heap with SimPy's own ordering key (time, priority,
    insertion id) to save a call on the hottest path of the simulator.
    """
    now = clock.now_ns
    heappush(clock.queue, clock.entry(when_ns if when_ns > now else now, Call(fn, arg)))


def deliver_at(clock: Clock, when_ns: float, pkt: HeapEvent, callbacks: tuple) -> None:
    """Hand ``pkt`` to ``callbacks`` (a 1-tuple of a port, or a callable, taking the packet) at ``when_ns`` (not before now).

    The packet is the event: SimPy calls ``callbacks[0](pkt)``.  A packet is
    in one place at a time, so it is on the event heap at most once.  A
    :class:`~simnuma.model.coherence.Transaction` waiting on a time is
    scheduled the same way.
    """
    if pkt.callbacks is not None:   # _claim, inlined: every hop of every packet comes through here
        _claim(pkt, callbacks)
    pkt.callbacks = callbacks
    now = clock.now_ns
    heappush(clock.queue, clock.entry(when_ns if when_ns > now else now, pkt))


def grant_at(clock: Clock, when_ns: float, fn: Any, arg: Any) -> None:
    """Call ``fn(arg)`` now if ``when_ns`` has come, else at ``when_ns`` (a credit or buffer slot granted)."""
    if when_ns <= clock.now_ns:
        fire(fn, arg)
    else:
        heappush(clock.queue, clock.entry(when_ns, later(fn, arg)))


def later(fn: Any, arg: Any) -> Any:
    """The event that calls ``fn(arg)``: ``arg`` itself where it is a packet (see :func:`deliver_at`), else a Call."""
    if isinstance(arg, HeapEvent):
        _claim(arg, (fn,))
        return arg
    return Call(fn, arg)


def _claim(pkt: HeapEvent, callbacks: tuple) -> None:
    """Make ``pkt`` the event that calls ``callbacks``; it must not be on the heap already."""
    if pkt.callbacks is not None:
        what = f"{getattr(pkt, 'kind')} packet" if hasattr(pkt, "kind") else type(pkt).__name__.lower()
        raise RuntimeError(f"a {what} was put on the event heap while already on it")
    pkt.callbacks = callbacks
