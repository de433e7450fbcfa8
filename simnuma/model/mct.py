"""The memory controller (MCT) of a node, and the FIFO memory.

Models: the MCT's DRAM queue (``memory.queue`` entries: a read request or a
victim write waits in its crossbar buffer until an entry is free), the
handing of admitted requests to the node's memory, and the MCT's crossbar
command buffers (K8: response 5, probe 2) through which read data and
coherence probes leave.  A probe broadcast takes one probe buffer; the
crossbar copies it to every target, and the buffer is free once the last copy
has left.  A read holds its queue entry until its data has a crossbar buffer
(``memory.release: data``) or until the read is complete, its source-done
back from the requester (``done``: :meth:`read_complete`); a victim write
until the memory has absorbed it.

The memory behind the queue is one of three models (``memory.model``):
:class:`FifoMemory` here, :class:`~simnuma.model.dram.DRAM` (banks, rows,
timings, scheduling) or :class:`~simnuma.model.curve.CurveMemory` (measured
bandwidth-latency curves).  Each takes admitted requests with ``submit`` and
calls :meth:`MCT.read_data` when a read's data are ready to leave; each frees
a victim's queue entry itself.

Abstracts away (FIFO memory): banks, pages, refresh and read/write turnarounds.
Its efficiency factor stands for them: a line occupies the DRAM for its
transfer at peak bandwidth plus a loss drawn uniformly between zero and twice
the mean loss, so that the mean occupancy is exactly 64 B / (peak x
efficiency); a fixed access latency (``memory.latency``) does not occupy it.
The draw (seeded) keeps concurrent streams from locking into one arbitrary
phase.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from .credit import CreditPool, release_buffers
from .events import Clock, Component, Port, deliver_at
from .packet import LINE_BYTES, PROBE, RESPONSE, Packet
from .xbar import XBar, enter_fabric

if TYPE_CHECKING:
    from .coherence import Coherence, Transaction
    from .link import LinkDirection

__all__ = ["MCT", "Memory", "FifoMemory", "make_memory"]

_ACCEPT: Final = 0          # the callbacks of an MCT (MCT.handle)
_ADMITTED: Final = 1
_READ_DATA: Final = 2
_SEND_DATA: Final = 3
_SEND_BROADCAST: Final = 4


class Memory(Component):
    """What an MCT asks of the memory behind it: :meth:`submit` an admitted request."""

    def submit(self, pkt: Packet, is_write: bool, line_address: Any) -> None:
        """Serve ``pkt``'s line (at ``line_address``, for a memory that needs it); then ``MCT.line_done``."""
        raise NotImplementedError


class MCT(Component):
    """Memory controller of node ``index``: the DRAM queue, the crossbar buffers, and a memory behind them."""

    __slots__ = ("env", "clock", "index", "node_id", "queue", "release_at_data", "pools", "memory", "model", "addressed",
                 "xbar_delay_ns", "xbar", "coherence", "resp_routes", "probe_routes", "data_ready", "observer",
                 "acceptor", "admitter", "sender", "broadcaster")

    memory: Memory

    # wired by the System once every component exists (unset until then)
    xbar: XBar
    coherence: Coherence
    resp_routes: list[tuple[LinkDirection, ...]]   # resp_routes[dst + lane]: the link directions of a response to dst
    probe_routes: list[tuple[LinkDirection, ...]]  # ... and of a probe

    def __init__(self, env, index: int, node_id: int, params, rng, seed: str = ""):
        self.env = env
        self.clock: Clock = env.clock
        self.index = index
        self.node_id = node_id
        self.queue = CreditPool(env, params.memory_queue, f"N{node_id} mct dram queue")
        self.release_at_data = params.memory_release == "data"   # a read's entry is free as its data leave
        self.pools: list[CreditPool | None] = [None] * 4   # per virtual channel: the MCT sends responses and probes
        self.pools[RESPONSE] = CreditPool(env, params.mct_buffers["response"], f"N{node_id} mct->xbar response")
        self.pools[PROBE] = CreditPool(env, params.mct_buffers["probe"], f"N{node_id} mct->xbar probe")
        self.memory = make_memory(env, params, rng, self, seed)
        self.model = params.memory_model
        self.addressed = self.model == "dram"   # whether the memory needs each line's address
        self.xbar_delay_ns = params.xbar_latency_ns
        self.data_ready: tuple = (Port(self, _READ_DATA),)   # the callbacks of a read whose data the memory has
        self.observer: Any = None             # a trace's recorder (simnuma.trace), None when nothing records
        self.acceptor = Port(self, _ACCEPT)               # accept, as a callback
        self.admitter = Port(self, _ADMITTED)             # _admitted, as a callback
        self.sender = Port(self, _SEND_DATA)              # _send_data, as a callback
        self.broadcaster = Port(self, _SEND_BROADCAST)    # _send_broadcast, as a callback

    def handle(self, code: int, arg: Any) -> None:
        if code == _ACCEPT:
            self.accept(arg)
        elif code == _ADMITTED:
            self._admitted(arg)
        elif code == _READ_DATA:
            self.read_data(arg)
        elif code == _SEND_DATA:
            self._send_data(arg)
        else:
            self._send_broadcast(arg)

    def pool_list(self):
        return [self.queue, self.pools[RESPONSE], self.pools[PROBE]]

    def accept(self, pkt: Packet) -> None:
        """A read request or victim write for this node's memory is in the crossbar."""
        if self.observer is not None:
            self.observer.mct_arrive(self, pkt)
        if self.queue.take_ready(self.clock.now_ns):   # an entry is free now: CreditPool.request's grant, inlined
            self._admitted(pkt)
        else:
            self.queue.request(self.admitter, pkt, pkt.held, pkt.held_data)

    def _admitted(self, pkt: Packet) -> None:
        if self.observer is not None:
            self.observer.mct_admit(self, pkt)
        release_buffers(pkt, self.clock.now_ns)
        txn: Transaction = pkt.txn
        if pkt.kind == "victim":
            self.memory.submit(pkt, True, txn.victim_address)
            return
        self.memory.submit(pkt, False, txn.address)
        self.coherence.home_admitted(txn, self)

    def line_done(self, txn: Transaction, is_write: bool, done_ns: float) -> None:
        """The memory is done with a line at ``done_ns``: a write's queue entry is free then, a read's data leave."""
        if self.observer is not None:
            self.observer.memory_done(self, txn, is_write, done_ns)
        if is_write:
            self.queue.release(done_ns)
        else:
            deliver_at(self.clock, done_ns, txn, self.data_ready)   # the transaction is the event

    def read_data(self, txn: Transaction) -> None:
        """The memory has a read's data: it leaves through an MCT response buffer."""
        resp = Packet("read_resp", txn, self.index, txn.requester, self.resp_routes[txn.requester + txn.lane])
        # the read keeps its DRAM queue entry until its data have a response buffer
        self.pools[RESPONSE].request(self.sender, resp, self.queue)  # type: ignore[union-attr]  # the pool is set

    def _send_data(self, pkt: Packet) -> None:
        now = self.clock.now_ns
        if self.observer is not None:
            self.observer.data_leaves(self, pkt)
        if self.release_at_data:
            self.queue.release(now)
        self._enter_xbar(pkt, RESPONSE)

    def read_complete(self) -> None:
        """A read homed here is complete (its source-done is in): with ``memory.release: done`` its entry is free."""
        if not self.release_at_data:
            self.queue.release(self.clock.now_ns)

    def broadcast(self, probes) -> None:
        """Send one broadcast probe: a single MCT probe buffer, copied by the crossbar to every target.

        ``probes`` are the copies, one per target node, in the order they
        enter their links; the buffer is free once the last copy has left.
        """
        self.pools[PROBE].request(self.broadcaster, probes)  # type: ignore[union-attr]  # the PROBE pool is set

    def _send_broadcast(self, probes: list[Packet]) -> None:
        pool = self.pools[PROBE]
        assert pool is not None   # (broadcast took a buffer of it)
        hold = _BroadcastHold(pool, len(probes))
        for pkt in probes:
            txn: Transaction = pkt.txn
            pkt.path = self.probe_routes[pkt.dst + txn.lane]
            pkt.held = hold
            pkt.held_data = None
            enter_fabric(self.clock, pkt, self.xbar_delay_ns, self.xbar)

    def _enter_xbar(self, pkt: Packet, vc: int) -> None:
        pool = self.pools[vc]
        assert pool is not None   # (_send_data took a buffer of it)
        pkt.held = pool
        pkt.held_data = None
        enter_fabric(self.clock, pkt, self.xbar_delay_ns, self.xbar)


class _BroadcastHold(CreditPool):
    """The MCT probe buffer shared by the copies of one broadcast; freed when the last copy leaves.

    What each copy holds (``Packet.held``): a stand-in for the pool, only ever released.  It is a
    :class:`CreditPool` only so that ``Packet.held`` has one type: it keeps none of a pool's own
    state, and nothing but ``release`` and ``count_wait`` may be called on it.
    """

    __slots__ = ("pool", "copies", "latest_ns", "copy_waits")

    def __init__(self, pool: CreditPool, copies: int):  # noqa: D107 - not a pool of its own: no slots
        self.pool = pool
        self.copies = copies
        self.latest_ns = 0.0
        self.account = pool   # a copy waiting for a probe slot holds the MCT's probe buffer
        self.copy_waits: list[tuple[float, float, str]] | None = None   # the copies' waits: (since, until, awaited)

    def count_wait(self, awaited: str, since_ns: float, until_ns: float) -> None:
        """A copy waited from ``since_ns`` to ``until_ns``; counted once the buffer is free (:meth:`release`)."""
        if self.copy_waits is None:
            self.copy_waits = []
        self.copy_waits.append((since_ns, until_ns, awaited))

    def release(self, when_ns: float) -> float:
        if when_ns > self.latest_ns:
            self.latest_ns = when_ns
        self.copies -= 1
        if self.copies == 0:
            if self.copy_waits is not None:
                self._count_waits(self.copy_waits)
            return self.pool.release(self.latest_ns)
        return when_ns

    def _count_waits(self, waited: list[tuple[float, float, str]]) -> None:
        """The buffer was blocked while any copy waited, and on what the copy that waited longest waited for: each
        wait counts the time before a wait that ended later began (every copy's wait was settled by its grant,
        before it left)."""
        pool = self.pool
        ordered = sorted(waited, key=lambda w: -w[1])
        later_from = ordered[0][1]   # where the waits counted so far (those that ended later) began
        for since, until, awaited in ordered:
            end = until if until < later_from else later_from
            if end > since:
                pool.count_wait(awaited, since, end)
            if since < later_from:
                later_from = since


class FifoMemory(Memory):
    """DRAM as one first-come-first-served server at peak x efficiency, behind a fixed access latency."""

    COUNTERS = ("lines", "busy_ns", "reads", "writes")

    __slots__ = ("env", "clock", "mct", "transfer_ns", "loss_ns", "service_ns", "rng", "access_ns", "free_at",
                 "lines", "busy_ns", "reads", "writes", "peak_GBps", "servers")

    def __init__(self, env, params, rng, mct: MCT):
        self.env = env
        self.clock: Clock = env.clock
        self.mct = mct
        self.service_ns = LINE_BYTES / (params.memory_bandwidth_GBps * params.memory_efficiency)
        self.transfer_ns = LINE_BYTES / params.memory_bandwidth_GBps
        self.loss_ns = 2.0 * (self.service_ns - self.transfer_ns)
        self.peak_GBps = params.memory_bandwidth_GBps
        self.rng = rng.random
        self.access_ns = params.memory_latency_ns
        self.free_at = 0.0
        self.servers = 1
        self.lines = 0
        self.busy_ns = 0.0
        self.reads = self.writes = 0

    def submit(self, pkt: Packet, is_write: bool, line_address: Any) -> None:
        now = self.clock.now_ns
        start = self.free_at if self.free_at > now else now
        service = self.transfer_ns + self.loss_ns * self.rng()
        self.free_at = start + service
        self.busy_ns += service
        self.lines += 1
        if is_write:
            self.writes += 1
        else:
            self.reads += 1
        self.mct.line_done(pkt.txn, is_write, self.free_at + self.access_ns)

    @property
    def sustained_GBps(self) -> float:
        return LINE_BYTES / self.service_ns

    def counters(self) -> list:
        """The counters up to now: the service booked ahead of now (``free_at``, contiguous) is not busy yet."""
        now = self.clock.now_ns
        ahead_ns = self.free_at - now if self.free_at > now else 0.0
        return [self.lines, self.busy_ns - ahead_ns, self.reads, self.writes]


def make_memory(env, params, rng, mct: MCT, seed: str = "") -> Memory:
    """The memory model a node's parameters ask for; ``seed`` names its page placement's random stream."""
    if params.memory_model == "dram":
        from .dram import DRAM
        return DRAM(env, params.dram, params.memory_latency_ns, mct, f"{seed}/pages")
    if params.memory_model == "curve":
        from .curve import CurveMemory
        return CurveMemory(env, params, mct)
    return FifoMemory(env, params, rng, mct)
