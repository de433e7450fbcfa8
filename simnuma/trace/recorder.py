"""The recorder: what moved where and when, from the hooks the model calls while a run goes on.

The model's components call a :class:`Recorder` where a transaction starts and completes, where a
packet waits for and gets an SRI buffer, goes onto a link (and where a NOP returns credits), where
a request reaches a memory, is admitted to its DRAM queue and served, where read data leave, and
where a probe arrives and is looked up (``System.observe``).  The recorder keeps plain records and
never changes what it sees, so a run with one gives the same result as a run without
(``tests/test_trace.py``).

It records within a *window* (with ``follow=False``, samples alone, over all of a run): from
``start_ns`` to ``end_ns`` of simulated time, or the first ``transactions`` transactions (the
window then closes when the last of them completes).  Only
transactions that start inside the window are followed; a packet, a memory access or a probe
belongs to the window when its transaction does (a NOP when it is sent inside the window).  Every
``sample_ns`` it also samples the board, without events of its own: when a transaction completes
after the next multiple of ``sample_ns`` is due (and once more as the run ends), it reads each buffer pool's occupancy and each link's busy
time since the last sample (the exact accounting of :mod:`simnuma.model.credit` and
:mod:`simnuma.model.link`) and each thread's completions.
"""
from __future__ import annotations

import math
from typing import Any
from dataclasses import dataclass, field

from ..errors import SimnumaError

__all__ = ["Recorder", "TxnRecord", "Slice", "Sample", "parse_window"]


@dataclass
class TxnRecord:
    """One transaction followed through the board: its times at each stage (ns), None where it did not pass."""

    id: int
    thread: str
    requester: int          # node ids
    home: int
    is_write: bool
    issued: float
    req_sent: float | None = None      # the request holds an SRI buffer and enters the crossbar
    at_home: float | None = None       # ... reaches the home MCT
    admitted: float | None = None      # ... has a DRAM queue entry
    data_ready: float | None = None    # the DRAM has the data (controller latency included)
    data_left: float | None = None     # the data hold an MCT buffer and enter the crossbar
    data_in: float | None = None       # the data reached the requester
    done: float | None = None          # data and every probe response are in
    hops: list = field(default_factory=list)   # (link name, kind, start ns, end ns) of its packets


@dataclass(frozen=True)
class Slice:
    """Something that took time on one track: a packet on a link, a DRAM access, a probe lookup..."""

    track: tuple            # ("link", "0->1") or ("node", node id, unit)
    name: str               # packet kind, "read", "write", "lookup", "queue"...
    start: float
    end: float
    txn: int | None = None  # the transaction it belongs to (None: a NOP)


@dataclass(frozen=True)
class Sample:
    """The board between the previous sample and ``at_ns``: averages over that interval."""

    at_ns: float
    since_ns: float
    links: dict             # link name -> utilisation (0..1)
    buffers: dict           # pool name -> mean slots held
    threads: dict           # thread label -> GB/s


def parse_window(text: str) -> tuple:
    """``(start_ns, end_ns, transactions)`` of a ``--trace-window``: ``20us`` (the first 20 us), ``10us:30us``,
    or a number of transactions (``500``); raises ValueError with what is expected."""
    from ..units import UnitError, parse_quantity

    text = str(text).strip()
    if text.isdigit():
        count = int(text)
        if count < 1:
            raise ValueError(f"expected at least one transaction, got {text!r}")
        return 0.0, math.inf, count
    first, sep, second = text.partition(":")
    try:
        times = [parse_quantity(part.strip(), "time") for part in ((first, second) if sep else (first,))]
    except UnitError:
        raise ValueError(f"expected a time span such as 20us or 10us:30us, or a number of transactions such as"
                         f" 500, got {text!r}") from None
    start, end = (0.0, times[0]) if not sep else (times[0], times[1])
    if not (math.isfinite(start) and math.isfinite(end)) or start < 0 or end <= start:
        raise ValueError(f"expected a window that starts at 0 or later and ends after it starts, got {text!r}")
    return start, end, None


class Recorder:
    """Records a run within a window (see the module); hand it to ``simulate(..., observer=...)``."""

    def __init__(self, start_ns: float = 0.0, end_ns: float = math.inf, transactions: int | None = None,
                 sample_ns: float = 1000.0, follow: bool = True):
        self.follow = follow            # follow transactions and their packets (False: samples only)
        self.start_ns = start_ns
        self.end_ns = end_ns
        self.transactions = transactions
        self.sample_ns = sample_ns
        self.txns: dict = {}            # Transaction object -> TxnRecord (those followed)
        self.finished: list = []        # TxnRecords, in order of completion
        self.slices: list = []
        self.samples: list = []
        self.started = 0
        self.system: Any = None
        self._arrive: dict = {}         # (node, packet) -> when it reached a queue it may wait in
        self._next_sample = sample_ns
        self._last_sample = 0.0
        self._last_counts: dict = {}

    # -- wiring
    def attach(self, system) -> None:
        if self.system is not None:
            raise SimnumaError("this Recorder has recorded a run already: give each simulate a new one")
        self.system = system
        self.ids = system.ids
        self._baseline = self._read(0.0)

    def _time(self) -> float:
        return self.system.env.now

    def _open(self) -> bool:
        now = self._time()
        if self.transactions is not None:
            return self.started < self.transactions
        return self.start_ns <= now < self.end_ns

    def _record(self, pkt):
        return self.txns.get(pkt.txn)

    # -- transactions
    def txn_start(self, txn) -> None:
        if not self.follow or not self._open():
            return
        self.started += 1
        self.txns[txn] = TxnRecord(self.started, txn.thread.label, self.ids[txn.requester], self.ids[txn.home],
                                   txn.is_write, self._time())

    def txn_done(self, txn) -> None:
        now = self._time()
        rec = self.txns.get(txn)
        if rec is not None:
            rec.done = now
            self.finished.append(rec)
            if self.transactions is not None and len(self.finished) == self.transactions:
                self.end_ns = now
        if now >= self._next_sample:     # samples cover the whole run (a trace keeps those of its window)
            self._sample(now)

    def delivered(self, pkt) -> None:
        rec = self._record(pkt)
        if rec is not None and pkt.kind == "read_resp":
            rec.data_in = self._time()

    # -- waits: a packet arrives where it may wait, and is later taken on
    def _arrived(self, where: tuple, pkt):
        """The record of ``pkt``'s transaction (None: not followed), its arrival at ``where`` noted."""
        rec = self._record(pkt)
        if rec is not None:
            self._arrive[(where, pkt)] = self._time()
        return rec

    def _waited(self, where: tuple, pkt, track: tuple, name: str):
        """The record of ``pkt``'s transaction (None: not followed), its wait at ``where`` added as a slice."""
        rec = self._record(pkt)
        if rec is not None:
            now = self._time()
            since = self._arrive.pop((where, pkt), now)
            if now > since:
                self.slices.append(Slice(track, name, since, now, rec.id))
        return rec

    # -- the SRI
    def sri_inject(self, sri, pkt) -> None:
        self._arrived((sri.node_id, "sri"), pkt)

    def sri_enter(self, sri, pkt) -> None:
        rec = self._waited((sri.node_id, "sri"), pkt, ("node", sri.node_id, "SRI"), f"{pkt.kind} waits")
        if rec is not None and pkt.kind == "read_req":
            rec.req_sent = self._time()

    def probe_arrive(self, sri, pkt) -> None:
        self._arrived((sri.node_id, "probe"), pkt)

    def probe_lookup(self, sri, pkt) -> None:
        rec = self._waited((sri.node_id, "probe"), pkt, ("node", sri.node_id, "SRI"), "probe waits")
        if rec is not None:
            now = self._time()
            self.slices.append(Slice(("node", sri.node_id, "SRI"), "probe lookup", now, now + sri.lookup_ns, rec.id))

    # -- the links
    def on_wire(self, link, pkt, start: float, end: float) -> None:
        rec = self._record(pkt)
        if rec is None:
            return
        self.slices.append(Slice(("link", link.name), pkt.kind, start, end, rec.id))
        rec.hops.append((link.name, pkt.kind, start, end))
        xbar_ns = link.arrival_delay_ns - link.latency_ns
        arrive = end + link.latency_ns
        if xbar_ns > 0:
            self.slices.append(Slice(("node", link.dst_id, "XBar"), pkt.kind, arrive, arrive + xbar_ns, rec.id))

    def nop(self, link, start: float, end: float) -> None:
        if self.follow and self.start_ns <= start < self.end_ns and (self.transactions is None or self.started):
            self.slices.append(Slice(("link", link.name), "nop", start, end, None))

    # -- the memory
    def mct_arrive(self, mct, pkt) -> None:
        rec = self._arrived((mct.node_id, "mct"), pkt)
        if rec is not None and pkt.kind == "read_req":
            rec.at_home = self._time()

    def mct_admit(self, mct, pkt) -> None:
        rec = self._waited((mct.node_id, "mct"), pkt, ("node", mct.node_id, "MCT"), f"{pkt.kind} waits for the DRAM queue")
        if rec is None:
            return
        if pkt.kind == "read_req":
            rec.admitted = self._time()
        else:
            self._arrive[((mct.node_id, "victim"), pkt.txn)] = self._time()

    def memory_done(self, mct, txn, is_write: bool, done_ns: float) -> None:
        rec = self.txns.get(txn)
        if rec is None:
            return
        if is_write:
            since = self._arrive.pop(((mct.node_id, "victim"), txn), self._time())
            self.slices.append(Slice(("node", mct.node_id, "DRAM"), "write", since, done_ns, rec.id))
        else:
            rec.data_ready = done_ns
            since = rec.admitted if rec.admitted is not None else self._time()
            self.slices.append(Slice(("node", mct.node_id, "DRAM"), "read", since, done_ns, rec.id))

    def data_leaves(self, mct, pkt) -> None:
        rec = self._record(pkt)
        if rec is None:
            return
        now = self._time()
        rec.data_left = now
        if rec.data_ready is not None and now > rec.data_ready:
            self.slices.append(Slice(("node", mct.node_id, "MCT"), "data wait for a buffer", rec.data_ready, now,
                                     rec.id))

    # -- samples of the board
    def _read(self, now: float) -> dict:
        s = self.system
        return {
            "links": {d.name: d.sent_busy_ns(now) for d in s.link_list},
            "buffers": {p.name: p.occupancy_ns(now)[0] for p in s.pools},
            "threads": {t.label: t.completed * 64 for t in s.foreground + s.background},   # bytes moved
        }

    def _sample(self, now: float) -> None:
        current = self._read(now)
        last = self._last_counts or self._baseline
        span = now - self._last_sample
        if span > 0:   # over all of the run: a trace keeps those of its window (perfetto.py)
            self.samples.append(Sample(
                now, self._last_sample,
                {k: min(1.0, max(0.0, (v - last["links"][k]) / span)) for k, v in current["links"].items()},
                {k: max(0.0, (v - last["buffers"][k]) / span) for k, v in current["buffers"].items()},
                {k: (v - last["threads"][k]) / span for k, v in current["threads"].items()}))
        self._last_counts = current
        self._last_sample = now
        # the next multiple of the interval: on a fixed grid, so that the rows do not drift later and later
        self._next_sample = (math.floor(now / self.sample_ns) + 1.0) * self.sample_ns

    def close(self) -> None:
        """The last sample, from the one before to the end of the run (``simulate`` calls it as the run ends)."""
        if self.system is not None and self._time() > self._last_sample:
            self._sample(self._time())
