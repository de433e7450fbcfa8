"""A core running one stride thread.

Models: a thread that walks its array at a 64-byte stride, keeping at most
``window`` lines outstanding (the window stands for the core's miss buffers
and its prefetcher together) and, when throttled, issuing no faster than its
demand rate.  A throttled thread is a load generator (app note 40555's
background threads, which "ask for data at a rate"): where the board gives
``core.requests``, the memory requests a core can keep in flight, it keeps up to
that many lines in flight, so that it reaches its rate unless the fabric or
the memory cannot serve it; otherwise it has its op's window.  A miss buffer stays busy ``hold_ns`` (``core.hold.<op>``, zero
unless given) after its fill has arrived: the time the core takes to install
the line and, for a store, to merge it and move the dirty victim out.  Then a
read frees its window slot; a write frees it once its victim has entered the
SRI.  A STREAM triad issues, per
line, a read of ``b``, a read of ``c`` and a write of ``a``.  A latency chase
(``l``) has one line outstanding and visits its array's lines in a scattered
order (a fixed permutation), so that every load is a DRAM row miss as in the
benchmark's random cycle.

For a DRAM memory each transaction carries the physical address of its line,
from the array's page layout (:mod:`simnuma.model.pages`); a write also
carries the address of the dirty line it evicts, the line of the same array
written ``VICTIM_DISTANCE_BYTES`` before (the size of K8's L2, which a
streaming writer cycles through; any distance of a page or more gives the
same bank statistics, since pages are placed independently).  A foreground
thread walks its array once; a background thread walks its array round and
round.

Abstracts away: instruction execution (the stride loop is memory-bound) and
cache hits.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from simpy.events import Event

from .events import Clock, Component, Port, call_at
from .stats import LatencyHistogram

if TYPE_CHECKING:
    from .coherence import Coherence, Transaction
    from .pages import ArrayPages

__all__ = ["Thread", "OP_PATTERNS"]

# op -> the sequence of (is_write) transactions one array index costs
OP_PATTERNS = {"r": (False,), "w": (True,), "t": (False, False, True), "l": (False,)}
VICTIM_DISTANCE_BYTES = 1 << 20
CHASE_STRIDE = 2654435761   # a prime: line k of a chase is line (k x CHASE_STRIDE) mod lines


class Thread(Component):
    """One thread of the workload, pinned to a core of node ``node``."""

    __slots__ = ("env", "clock", "spec", "label", "foreground", "node", "home", "pattern", "window", "outstanding",
                 "to_issue", "issued", "completed", "interval_ns", "next_issue_ns", "wake_pending",
                 "stopped", "finish_ns", "latency", "coherence", "on_finish", "hold_ns",
                 "arrays", "streams", "victim_lines", "chase", "watch_at", "watch_event", "lanes", "lane_stride",
                 "waker", "queued", "presenting", "backlog")

    def __init__(self, env, spec, node: int, home: int, window: int, lines: int | None,
                 foreground: bool, coherence: Coherence, on_finish=None, hold_ns: float = 0.0,
                 arrays: list[ArrayPages] | None = None, name: str = ""):
        self.env = env
        self.clock: Clock = env.clock
        self.spec = spec
        self.label = spec.label
        self.foreground = foreground
        self.node = node
        self.home = home
        self.pattern = OP_PATTERNS[spec.op]
        self.window = window
        self.outstanding = 0
        self.to_issue = None if lines is None else lines * len(self.pattern)
        self.issued = 0
        self.completed = 0
        # a rate throttles the demand in bytes per ns; each transaction moves one line
        self.interval_ns: float = 64.0 / spec.rate_GBps if spec.rate_GBps else 0.0
        self.next_issue_ns = 0.0
        self.wake_pending = False
        self.stopped = False
        self.finish_ns: float | None = None
        self.latency = LatencyHistogram()
        self.coherence = coherence
        self.on_finish = on_finish
        self.hold_ns = hold_ns
        # ArrayPages per step of the pattern (b, c, a for a triad), when the memory needs addresses
        self.arrays: list[ArrayPages] | None = arrays
        # the streams of line addresses a DRAM sees from this thread: per array, its fills and its write-backs
        self.streams = [((name, k, "fill"), (name, k, "victim")) for k in range(len(self.pattern))]
        self.victim_lines = VICTIM_DISTANCE_BYTES // 64 // len(self.pattern)
        self.chase = spec.op == "l"
        self.watch_at = -1          # steady mode: trigger watch_event when this many transactions are done
        self.watch_event: Event | None = None
        # links in parallel (system.py): line i of the array takes lane i mod lanes, the offset of its routes
        self.lanes = 1
        self.lane_stride = 0
        # the SRI's round-robin among its cores (sri.py): a request of this core waits for an SRI buffer
        # (presenting), and the core's later requests wait behind it here, in order (backlog)
        self.presenting = False
        self.backlog: list[tuple[Any, Any]] = []
        self.waker = Port(self, 0)    # _wake, as a callback
        self.queued = Port(self, 1)   # victim_queued, as a callback

    def handle(self, code: int, arg: Any) -> None:
        if code == 0:
            self._wake(arg)
        else:
            self.victim_queued(arg)

    def start(self, at_ns: float) -> None:
        self.next_issue_ns = at_ns
        self.wake_pending = True
        call_at(self.clock, at_ns, self.waker)

    def _wake(self, _arg=None) -> None:
        self.wake_pending = False
        self._issue()

    def _issue(self) -> None:
        now = self.clock.now_ns
        while self.outstanding < self.window and not self.stopped:
            if self.to_issue is not None and self.issued >= self.to_issue:
                return
            if self.interval_ns:
                if now < self.next_issue_ns:
                    if not self.wake_pending:
                        self.wake_pending = True
                        call_at(self.clock, self.next_issue_ns, self.waker)
                    return
                self.next_issue_ns = (self.next_issue_ns if self.next_issue_ns > now - self.interval_ns
                                      else now) + self.interval_ns
            steps = len(self.pattern)
            line, step = self.issued // steps, self.issued % steps
            is_write = self.pattern[step]
            self.issued += 1
            self.outstanding += 1
            lane = (line % self.lanes) * self.lane_stride if self.lanes > 1 else 0
            if self.arrays is None:
                self.coherence.start(self, self.node, self.home, is_write, None, None, lane)
            else:
                self._start_addressed(step, line, is_write, now, lane)

    def _start_addressed(self, step: int, line: int, is_write: bool, now: float, lane: int) -> None:
        assert self.arrays is not None   # (a thread of an addressed memory)
        pages = self.arrays[step]
        fill, write_back = self.streams[step]
        n = pages.lines
        if self.chase:
            line = line * CHASE_STRIDE % n
        elif line >= n:
            line %= n
        # the write-back first: the new page of the fill is placed beside the page the write-backs are in now
        victim = pages.address((line - self.victim_lines) % n, write_back, now, False) if is_write else None
        address = pages.address(line, fill, now)
        self.coherence.start(self, self.node, self.home, is_write, address, victim, lane)

    def filled(self, txn: Transaction) -> None:
        """The miss has its data and every probe response."""
        self.completed += 1
        self.latency.add(self.clock.now_ns - txn.issued_ns)
        if self.completed == self.watch_at:
            self.watch_at = -1
            assert self.watch_event is not None   # watch() set both
            self.watch_event.succeed()

    def watch(self, completed: int):
        """An event that triggers once ``completed`` transactions of this thread are done."""
        self.watch_at = completed
        self.watch_event = self.env.event()
        return self.watch_event

    def victim_queued(self, _pkt) -> None:
        self.free_slot()

    def free_slot(self) -> None:
        self.outstanding -= 1
        if self.to_issue is not None and self.issued >= self.to_issue:
            self._finish_if_idle()
            return
        self._issue()

    def _finish_if_idle(self) -> None:
        if self.outstanding == 0 and self.finish_ns is None:
            self.finish_ns = self.clock.now_ns
            if self.on_finish is not None:
                self.on_finish(self)

    def limit(self, lines_left: int) -> None:
        """Steady mode: the thread has ``lines_left`` transactions left to issue from now.

        With none left and none in flight (a paced thread between two lines) it
        is done now: no completion is coming that would end it later.
        """
        self.to_issue = self.issued + max(0, lines_left)
        if self.issued >= self.to_issue:
            self._finish_if_idle()
