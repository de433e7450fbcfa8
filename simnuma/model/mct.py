"""The memory controller (MCT) and DRAM of a node.

Models: the MCT's DRAM queue (``memory.queue`` entries: a request or victim
write waits in its crossbar buffer until an entry is free), the DRAM as a
first-come-first-served server with a sustained bandwidth of peak x efficiency
per 64-byte line plus a fixed access latency that does not occupy it, and the
MCT's crossbar command buffers (K8: response 5, probe 2) through which read
data and coherence probes leave.  A probe broadcast takes one probe buffer;
the crossbar copies it to every target, and the buffer is free once the last
copy has left.  A read holds its queue entry until its data
has a crossbar buffer; a victim write until DRAM has absorbed it.

Abstracts away: banks, pages and refresh.  The efficiency factor stands for
them: a line occupies DRAM for its transfer at peak bandwidth plus a loss
drawn uniformly between zero and twice the mean loss, so the mean occupancy is
exactly 64 B / (peak x efficiency).  The draw (seeded) keeps concurrent streams
from locking into one arbitrary phase, as real DRAM timing does.
Read/write turnaround is not modelled separately.
"""
from __future__ import annotations

from .credit import CreditPool, release_buffers
from .events import call_at
from .packet import LINE_BYTES, PROBE, RESPONSE, Packet
from .xbar import enter_fabric

__all__ = ["MCT"]


class MCT:
    """Memory controller and DRAM of node ``index``."""

    __slots__ = ("env", "index", "node_id", "queue", "pools", "service_ns", "transfer_ns", "loss_ns", "rng",
                 "access_ns", "dram_free_at",
                 "xbar_delay_ns", "xbar", "coherence", "routes", "lines", "busy_ns")

    def __init__(self, env, index: int, node_id: int, params, rng):
        self.env = env
        self.index = index
        self.node_id = node_id
        self.queue = CreditPool(env, params.memory_queue, f"N{node_id} mct dram queue")
        self.pools = [None] * 4
        self.pools[RESPONSE] = CreditPool(env, params.mct_buffers["response"], f"N{node_id} mct->xbar response")
        self.pools[PROBE] = CreditPool(env, params.mct_buffers["probe"], f"N{node_id} mct->xbar probe")
        self.service_ns = LINE_BYTES / (params.memory_bandwidth_GBps * params.memory_efficiency)
        self.transfer_ns = LINE_BYTES / params.memory_bandwidth_GBps
        self.loss_ns = 2.0 * (self.service_ns - self.transfer_ns)
        self.rng = rng.random
        self.access_ns = params.memory_latency_ns
        self.dram_free_at = 0.0
        self.xbar_delay_ns = params.xbar_latency_ns
        self.xbar = None
        self.coherence = None
        self.routes = None
        self.lines = 0
        self.busy_ns = 0.0

    def pool_list(self):
        return [self.queue, self.pools[RESPONSE], self.pools[PROBE]]

    def accept(self, pkt) -> None:
        """A read request or victim write for this node's memory is in the crossbar."""
        self.queue.request(self._admitted, pkt)

    def _admitted(self, pkt) -> None:
        now = self.env._now
        release_buffers(pkt, now)
        start = self.dram_free_at if self.dram_free_at > now else now
        service = self.transfer_ns + self.loss_ns * self.rng()
        self.dram_free_at = start + service
        self.busy_ns += service
        self.lines += 1
        done = self.dram_free_at + self.access_ns
        if pkt.kind == "victim":
            self.queue.release(done)
            return
        txn = pkt.txn
        call_at(self.env, done, self._read_done, txn)
        self.coherence.home_admitted(txn, self)

    def _read_done(self, txn) -> None:
        resp = Packet("read_resp", txn, self.index, txn.requester, self.routes[txn.requester])
        self.pools[RESPONSE].request(self._send_data, resp)

    def _send_data(self, pkt) -> None:
        now = self.env._now
        self.queue.release(now)
        self._enter_xbar(pkt, RESPONSE)

    def broadcast(self, probes) -> None:
        """Send one broadcast probe: a single MCT probe buffer, copied by the crossbar to every target.

        ``probes`` are the copies, one per target node, in the order they
        enter their links; the buffer is free once the last copy has left.
        """
        self.pools[PROBE].request(self._send_broadcast, probes)

    def _send_broadcast(self, probes) -> None:
        hold = _BroadcastHold(self.pools[PROBE], len(probes))
        for pkt in probes:
            pkt.path = self.routes[pkt.dst]
            pkt.held = hold
            pkt.held_data = None
            enter_fabric(self.env, pkt, self.xbar_delay_ns, self.xbar)

    def _enter_xbar(self, pkt, vc) -> None:
        pkt.held = self.pools[vc]
        pkt.held_data = None
        enter_fabric(self.env, pkt, self.xbar_delay_ns, self.xbar)


class _BroadcastHold:
    """The MCT probe buffer shared by the copies of one broadcast; freed when the last copy leaves."""

    __slots__ = ("pool", "copies", "latest_ns")

    def __init__(self, pool, copies: int):
        self.pool = pool
        self.copies = copies
        self.latest_ns = 0.0

    def release(self, when_ns: float) -> float:
        if when_ns > self.latest_ns:
            self.latest_ns = when_ns
        self.copies -= 1
        if self.copies == 0:
            return self.pool.release(self.latest_ns)
        return when_ns
