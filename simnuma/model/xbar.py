"""The crossbar (XBar) of a node.

Models: the crossing latency and the routing of every packet that enters the
node's crossbar — from the SRI, from the MCT, or from a link — either onward
to the next link of its route or to the local consumer: the MCT for requests
and victim writes, the SRI for probes, probe responses and read data.  A packet
keeps the input buffer it arrived in (link receive buffer, or the SRI's or
MCT's crossbar allocation) until the next stage accepts it, so full buffers
back up hop by hop.

Abstracts away: internal crossbar contention (the switch is non-blocking) and
the separate command/data staging inside the crossbar.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .credit import release_buffers
from .events import Clock, Component, Port, deliver_at

from .packet import Packet

if TYPE_CHECKING:
    from .coherence import Coherence
    from .mct import MCT
    from .sri import SRI

__all__ = ["XBar", "enter_fabric"]


def enter_fabric(clock: Clock, pkt: Packet, delay_ns: float, xbar: XBar) -> None:
    """A packet from the SRI or MCT enters its node's crossbar.

    Bound for another node, it queues for its first link at once and pays the
    SRI/crossbar latency in flight (``lag_ns``), which saves an event per
    packet; bound for this node, it reaches the local consumer after the
    latency.
    """
    if pkt.path:
        pkt.lag_ns = delay_ns
        pkt.hop = 1
        pkt.path[0].send(pkt)
    else:
        deliver_at(clock, clock.now_ns + delay_ns, pkt, xbar.consumers[pkt.kind])


class XBar(Component):
    """Routes packets at node ``index``."""

    __slots__ = ("index", "latency_ns", "sri", "mct", "coherence", "env", "clock", "consumers", "responder")

    # wired by the System once every component exists (unset until then)
    sri: SRI
    mct: MCT
    coherence: Coherence
    clock: Clock

    def __init__(self, index: int, latency_ns: float):
        self.index = index
        self.latency_ns = latency_ns
        self.responder = Port(self, 0)   # respond, as a callback (its only one)

    def handle(self, code: int, arg: Any) -> None:
        self.respond(arg)

    def wire(self, sri: SRI, mct: MCT, coherence: Coherence) -> None:
        """Attach the node's SRI and MCT and the coherence protocol, once every component exists."""
        self.sri, self.mct, self.coherence = sri, mct, coherence
        self.env = sri.env
        self.clock = sri.clock
        to_memory, to_caches, to_requester = (mct.acceptor,), (sri.prober,), (self.responder,)
        # per packet kind: the callbacks of a packet that ends at this node
        self.consumers: dict[str, tuple] = {"read_req": to_memory, "victim": to_memory, "probe": to_caches,
                                            "read_resp": to_requester, "probe_resp": to_requester,
                                            "source_done": to_requester}

    def exit(self, key) -> tuple:
        """The callbacks of a packet that crosses into this crossbar from a link.

        ``key`` is the next link direction of the packet's route, where it is
        forwarded (the crossbar hands it to that link), or the packet's kind
        where it ends here (the crossbar hands it to the local consumer: the
        MCT, the SRI's probe queue, or :meth:`respond`).  A link direction
        asks once per key and keeps the answer, so that an arriving packet
        goes straight to where the crossbar routes it, without a dispatching
        call.
        """
        if isinstance(key, str):
            return self.consumers[key]
        return (key.sender,)

    def respond(self, pkt: Packet) -> None:
        """A response (read data, probe response, source-done) reached its consumer: its buffers are free."""
        release_buffers(pkt, self.clock.now_ns)
        self.coherence.delivered(pkt)
