"""HyperTransport packets as the model sees them.

Sizes follow HyperTransport: requests and probes 8 bytes, probe responses and
source-done 4 bytes, a read response 4 bytes plus a 64-byte line, a victim
write 8 bytes plus the line, and a NOP credit-return info packet 4 bytes.
Abstracted away: CRC windows, addresses and unit ids.  A packet with data is
serialised as one block, into which the link inserts command packets
(:mod:`simnuma.model.link`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Final

from .credit import CreditPool
from .events import HeapEvent
from ..units import LINE_BYTES  # noqa: F401 - the one definition

if TYPE_CHECKING:
    from .link import LinkDirection

__all__ = ["Packet", "VC_NAMES", "REQUEST", "POSTED", "RESPONSE", "PROBE", "KINDS", "LINE_BYTES", "NOP_BYTES"]

# Final: the compiled model reads them as constants, not through the module's globals
NOP_BYTES: Final = 4

# virtual channels
REQUEST: Final = 0
POSTED: Final = 1
RESPONSE: Final = 2
PROBE: Final = 3
VC_NAMES: Final = ("request", "posted", "response", "probe")

# kind -> (virtual channel, command bytes, data bytes)
KINDS: Final = {
    "read_req": (REQUEST, 8, 0),
    "probe": (PROBE, 8, 0),
    "probe_resp": (RESPONSE, 4, 0),
    "read_resp": (RESPONSE, 4, LINE_BYTES),
    "victim": (POSTED, 8, LINE_BYTES),
    "source_done": (RESPONSE, 4, 0),
}


class Packet(HeapEvent):
    """One packet in flight: what it is, where it goes, which buffer it holds.

    It is its own event on SimPy's heap while it travels (:func:`~simnuma.model.events.deliver_at`).
    """

    __slots__ = ("kind", "vc", "cmd_bytes", "data_bytes", "txn", "src", "dst", "path", "hop",
                 "held", "held_data", "lag_ns", "tail_ns")
    held: CreditPool   # a pool, or the hold of a broadcast whose copies share one (mct._BroadcastHold, a pool too)
    held_data: CreditPool | None
    path: tuple[LinkDirection, ...]   # typed: the crossbar calls its first link's send as a compiled method

    def __init__(self, kind: str, txn, src: int, dst: int, path: tuple[LinkDirection, ...]):
        vc, cmd, data = KINDS[kind]
        self.kind = kind
        self.vc = vc
        self.cmd_bytes = cmd
        self.data_bytes = data
        self.txn = txn
        self.src = src          # node index where it entered the fabric
        self.dst = dst          # node index where it is consumed
        self.path = path        # LinkDirection objects from src to dst
        self.hop = 0            # index into path of the next link to take
        # held: the command buffer pool it occupies now (set when it takes one)
        self.held_data = None   # the data buffer pool it occupies now (data packets)
        self.lag_ns = 0.0       # latency still to pay on the first hop (SRI/XBar crossing at the source)
        self.tail_ns = 0.0      # when its last byte is in the node it is at (cut-through forwarding)
        self.callbacks = None   # set while it is on SimPy's event heap (events.deliver_at)
