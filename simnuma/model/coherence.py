"""Coherence transaction flows (K8-style broadcast, or a probe filter).

Models, for a line homed on node H and requested from node S:

* **read** — request S->H; when H's MCT admits it, DRAM starts and (broadcast)
  a probe goes from H to every other node with a cache (a memory-only node,
  without cores, has none); every probed node answers S; H
  sends the data to S.  The read completes at S when the data and every probe
  response are in; S then sends source-done to H, which frees the read's
  DRAM queue entry there if the board says so (``memory.release: done``).
* **write** — the same read-for-ownership, then a posted victim write of a
  dirty line S->H (the stride test's steady state: every fill evicts one).
* **probe_filter** — no broadcast: in the stride test no other node holds the
  line, so the read waits for its data only.

Abstracts away: conflicts between transactions to the same line (the stride
test never has any), and cache hits (every access misses).  A transaction
carries its line's physical address (and its victim's) only for the DRAM,
which needs them to find banks and rows.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .events import Clock, Component, HeapEvent, Port, deliver_at
from .packet import Packet

if TYPE_CHECKING:
    from .core import Thread
    from .mct import MCT
    from .sri import SRI

__all__ = ["Transaction", "Coherence"]


class Transaction(HeapEvent):
    """One cache-line miss of one thread.

    It is its own event on SimPy's heap while the protocol waits on a time
    for it (its data leaving the memory, the core's hold before it retires),
    as a packet is while it travels: those waits allocate nothing.
    """

    __slots__ = ("thread", "requester", "home", "is_write", "pending", "issued_ns", "address", "victim_address",
                 "lane")

    def __init__(self, thread: Thread, requester: int, home: int, is_write: bool, pending: int, issued_ns: float,
                 address=None, victim_address=None, lane: int = 0):
        self.thread = thread
        self.requester = requester
        self.home = home
        self.is_write = is_write
        self.pending = pending
        self.issued_ns = issued_ns
        self.address = address                # physical line address of the line (dram memory only)
        self.victim_address = victim_address  # ... and of the dirty line a write evicts
        self.lane = lane                      # links in parallel: the offset of this line's routes (system.py)
        self.callbacks = None                 # set while it is on SimPy's event heap (events.deliver_at)


class Coherence(Component):
    """Runs the protocol between the nodes' SRIs and MCTs."""

    def __init__(self, env, mode: str, sris: list[SRI], mcts: list[MCT], cached: list[bool] | None = None):
        self.env = env
        self.clock: Clock = env.clock
        self.mode = mode
        self.sris = sris
        self.mcts = mcts
        n = len(sris)
        caches = cached if cached is not None else [True] * n   # a memory-only node has no cache to probe
        if mode == "broadcast":
            self.probe_targets = [tuple(t for t in range(n) if t != home and caches[t]) for home in range(n)]
        else:
            self.probe_targets = [() for _ in range(n)]
        self.probe_order: dict[tuple[int, int], tuple[int, ...]] = {}   # (home, requester) -> probe targets, in order
        self.started = 0
        self.completed = 0
        self.retire: tuple = (Port(self, 0),)   # the callbacks of a transaction whose line the core is done with
        self.observer: Any = None       # a trace's recorder (simnuma.trace), None when nothing records

    def handle(self, code: int, arg: Any) -> None:
        self._retire(arg)

    def start(self, thread: Thread, requester: int, home: int, is_write: bool, address=None,
              victim_address=None, lane: int = 0) -> Transaction:
        pending = 1 + len(self.probe_targets[home])
        txn = Transaction(thread, requester, home, is_write, pending, self.clock.now_ns, address, victim_address,
                          lane)
        self.started += 1
        if self.observer is not None:
            self.observer.txn_start(txn)
        self.sris[requester].inject(Packet("read_req", txn, requester, home, ()))
        return txn

    def home_admitted(self, txn: Transaction, mct: MCT) -> None:
        """The home MCT admitted the request: DRAM is busy; broadcast a probe to the other nodes."""
        home, requester = txn.home, txn.requester
        targets = self.probe_order.get((home, requester))
        if targets is None:
            targets = self.probe_order[(home, requester)] = self._order_probes(home, requester)
        if targets:
            mct.broadcast([Packet("probe", txn, home, t, ()) for t in targets])

    def _order_probes(self, home: int, requester: int) -> tuple:
        """Probe copies sharing a link leave longest round trip first (home -> target -> requester),
        and of equal round trips the one with the longer way out first.

        The order follows the board's structure, so relabelling the nodes of a
        board and its workload together changes no result; only copies whose
        ways out and back are as long as each other's are left in the order of
        their node numbers.
        """
        routes = self.mcts[home].probe_routes
        back = [sri.resp_routes[requester] for sri in self.sris]

        def order(target: int) -> tuple[int, int, int]:
            out = len(routes[target])
            return -(out + len(back[target])), -out, target

        return tuple(sorted(self.probe_targets[home], key=order))

    def delivered(self, pkt: Packet) -> None:
        """A response packet reached its consumer."""
        if self.observer is not None:
            self.observer.delivered(pkt)
        txn: Transaction = pkt.txn
        if pkt.kind != "source_done":
            self._response(txn)
        else:
            self.mcts[txn.home].read_complete()

    def local_probe_response(self, txn: Transaction) -> None:
        self._response(txn)

    def _response(self, txn: Transaction) -> None:
        txn.pending -= 1
        if txn.pending:
            return
        self.completed += 1
        if self.observer is not None:
            self.observer.txn_done(txn)
        requester, home = txn.requester, txn.home
        sri = self.sris[requester]
        thread = txn.thread
        thread.filled(txn)
        if home != requester:
            sri.inject(Packet("source_done", txn, requester, home, ()))
        else:
            self.mcts[home].read_complete()
        if thread.hold_ns:
            deliver_at(self.clock, self.clock.now_ns + thread.hold_ns, txn, self.retire)
        else:
            self._retire(txn)

    def _retire(self, txn: Transaction) -> None:
        """The core is done with the line: free its miss buffer (a write first hands its victim to the SRI)."""
        thread = txn.thread
        if txn.is_write:
            sri = self.sris[txn.requester]
            sri.inject(Packet("victim", txn, txn.requester, txn.home, ()), thread.queued)
        else:
            thread.free_slot()
