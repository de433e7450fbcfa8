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

from typing import TYPE_CHECKING

from .credit import release_buffers
from .events import deliver_at

if TYPE_CHECKING:
    from .coherence import Coherence
    from .mct import MCT
    from .sri import SRI

__all__ = ["XBar", "enter_fabric"]


def enter_fabric(env, pkt, delay_ns: float, xbar) -> None:
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
        deliver_at(env, env.now_ns + delay_ns, pkt, xbar.deliver)


class XBar:
    """Routes packets at node ``index``."""

    __slots__ = ("index", "latency_ns", "sri", "mct", "coherence", "deliver")

    # wired by the System once every component exists (unset until then)
    sri: SRI
    mct: MCT
    coherence: Coherence

    def __init__(self, index: int, latency_ns: float):
        self.deliver = (self.arrive,)   # the callbacks of a packet crossing into this crossbar
        self.index = index
        self.latency_ns = latency_ns

    def arrive(self, pkt) -> None:
        """``pkt`` has crossed into this node's crossbar (latency already paid)."""
        if pkt.dst != self.index:
            link = pkt.path[pkt.hop]
            pkt.hop += 1
            link.send(pkt)
            return
        kind = pkt.kind
        if kind == "read_req" or kind == "victim":
            self.mct.accept(pkt)
        elif kind == "probe":
            self.sri.probe_in(pkt)
        else:  # read_resp, probe_resp, source_done
            release_buffers(pkt, self.sri.env.now_ns)
            self.coherence.delivered(pkt)
