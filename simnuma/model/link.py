"""One direction of a HyperTransport link, with credit flow control.

Models: serialisation of each packet at the direction's bandwidth, a fixed
flight latency, and the receiver's per-virtual-channel command and data
buffers.  A packet leaves only once it
holds a credit for a free buffer of its channel at the receiver; the buffer it
held at the sender (the receive buffer of the link it came in on, or its
SRI's or MCT's) is freed when its transmission starts (``release: start``),
because the link's transmitter then holds the packet it is serialising (app
note 40555, A.1: the crossbar's HyperTransport buffers queue packets *to be
sent* on the outgoing link).  With ``release: end`` it is freed once the
packet's last byte has been sent, no earlier than its tail has come in (a
transmitter that sends the packet out of that buffer).  A packet granted
behind others keeps its buffer until its own turn.
A data packet bound further on is routed by the receiver on its header (cut-
through): it reaches the next crossbar when its command has, and its tail can
leave the next link no earlier than it has come in.  A packet for the node
itself is handed over once its tail is in.  Data packets are sent first
granted, first sent.  HyperTransport lets control packets be inserted
into the data of another packet: a command packet (request, probe, response
without data) waits only for the commands granted before it, and stretches
the data transfer it is inserted into by its own serialisation time.  Credits
come back in 4-byte NOP packets on the opposite direction, inserted the same
way at once, arriving one flight latency later.

Abstracts away: CRC windows, link training and power states, and the
arbitration between virtual channels beyond the command/data distinction.
"""
from __future__ import annotations

from collections import deque
import heapq
from typing import Any, Final

from .credit import CreditPool
from .events import Clock, Component, Port, deliver_at
from .packet import NOP_BYTES, POSTED, RESPONSE, VC_NAMES, Packet

heappush: Final = heapq.heappush   # a C static in the compiled model: no lookup in the module's globals per call

__all__ = ["LinkDirection", "LinkBuffers"]


class LinkBuffers(CreditPool):
    """Receive buffers of one channel at the far end of a link direction.

    A freed buffer is usable by the sender once the NOP returning its credit
    has crossed back.  One NOP returns both the command and the data credit of
    a packet that carried data.
    """

    __slots__ = ("link",)

    def __init__(self, env, capacity: int, name: str, link: LinkDirection):
        super().__init__(env, capacity, name)
        self.link = link   # the direction whose receiver holds these buffers (its reverse carries the NOPs)

    def release(self, when_ns: float) -> float:
        """Freed at ``when_ns``: a 4-byte NOP on the opposite direction returns the credit.

        The NOP leaves at ``when_ns`` (now at the earliest) and arrives one
        flight latency after it has been sent.  It is a command packet,
        inserted into that direction's transfers: it stretches what is queued
        there by its own time, and on an idle direction it takes its time at
        the end of what is booked.  It never holds back what is granted after
        it, as a transfer booked ahead would (a credit freed in the future,
        when its packet has been sent, leaves the direction free until then).
        So its 1 ns or so of link time is counted where the booking ended,
        while a trace shows the NOP when it is sent, up to a packet's
        transmission later.
        """
        back = self.link.reverse
        nop_ns = back.nop_ns
        now = self.clock.now_ns
        sent_ns = when_ns if when_ns > now else now
        busy_until = back.busy_until
        # inserted ahead of what is queued; on an idle direction, its time is taken where the booking ends
        back.busy_until = (busy_until if busy_until > now else now) + nop_ns
        back.busy_ns += nop_ns
        back.cmd_bytes += NOP_BYTES
        back.nops += 1
        if back.observer is not None:
            back.observer.nop(back, sent_ns, sent_ns + nop_ns)
        t = when_ns + nop_ns + back.latency_ns
        # give_back(t), inlined: every packet on every hop comes through here (a call costs 1-3% of exact mode)
        if self.waiters:
            self.grant_next(t)
        else:
            heappush(self.ready, t)
        return t


_SEND: Final = 0            # the callbacks of a link direction (LinkDirection.handle)
_TRANSMIT: Final = 1
_COMMAND_CREDIT: Final = 2


class LinkDirection(Component):
    """Packets from node ``src`` to node ``dst`` over one link."""

    __slots__ = ("env", "clock", "src", "dst", "src_id", "dst_id", "ns_per_byte", "latency_ns", "busy_until",
                 "cmd_busy_until", "cmd_pools", "data_pools", "reverse", "receiver", "exits", "arrival_delay_ns",
                 "cmd_bytes", "data_bytes", "busy_ns", "data_busy_ns", "nops", "nop_ns", "gaps", "tag", "observer",
                 "sender", "transmitter", "credited", "release_at_end")

    reverse: LinkDirection                 # the opposite direction, wired by the system (unset until then)
    receiver: Any                          # the XBar at dst, or what stands in for it (connect; unset until then)
    exits: dict                            # receiver.exit(key) per key asked so far (see _transmit)

    def __init__(self, env, src: int, dst: int, src_id: int, dst_id: int, bandwidth_GBps: float,
                 latency_ns: float, buffers: dict, data_buffers: dict, tag: str = "", release: str = "start"):
        self.env = env
        self.release_at_end = release == "end"   # the buffer a packet leaves from is free once it has been sent
        self.tag = tag             # which of the links in parallel between the two nodes ('#2'; '' for the only one)
        self.observer: Any = None  # a trace's recorder (simnuma.trace), None when nothing records
        self.clock: Clock = env.clock
        self.src, self.dst = src, dst
        self.src_id, self.dst_id = src_id, dst_id
        self.ns_per_byte = 1.0 / bandwidth_GBps
        self.nop_ns = NOP_BYTES * self.ns_per_byte
        self.latency_ns = latency_ns
        self.busy_until = 0.0      # when everything granted so far has been sent
        self.cmd_busy_until = 0.0  # when the command packets granted so far have been sent
        tag = f"link {src_id}->{dst_id}{self.tag}"
        self.cmd_pools = [LinkBuffers(env, buffers[vc], f"{tag} {vc} cmd", self) for vc in VC_NAMES]
        self.data_pools: list[LinkBuffers | None] = [None] * 4   # per virtual channel: posted and response carry data
        for vc in (POSTED, RESPONSE):
            name = VC_NAMES[vc]
            self.data_pools[vc] = LinkBuffers(env, data_buffers[name], f"{tag} {name} data", self)
        self.arrival_delay_ns = latency_ns
        self.cmd_bytes = 0
        self.data_bytes = 0
        self.busy_ns = 0.0         # transmission time granted so far (some of it may lie ahead)
        self.data_busy_ns = 0.0
        self.nops = 0
        self.gaps: deque[tuple[float, float]] = deque()   # idle stretches booked ahead of now, in time order
        self.sender = Port(self, _SEND)                    # send, as a callback
        self.transmitter = Port(self, _TRANSMIT)           # _transmit, as a callback
        self.credited = Port(self, _COMMAND_CREDIT)        # _got_command_credit, as a callback

    def handle(self, code: int, arg: Any) -> None:
        if code == _SEND:
            self.send(arg)
        elif code == _TRANSMIT:
            self._transmit(arg)
        else:
            self._got_command_credit(arg)

    def connect(self, receiver: Any) -> None:
        """Wire the crossbar at ``dst`` that receives this direction's packets."""
        self.receiver = receiver
        self.exits = {}
        self.arrival_delay_ns = self.latency_ns + receiver.latency_ns

    def idle_until(self, from_ns: float, to_ns: float) -> None:
        """Book the direction idle from ``from_ns`` (no earlier than now, no earlier than all booked) to ``to_ns``.

        A transfer granted now may be booked to start later than the
        direction's last booking ends: a cut-through packet whose tail has not
        come in.  The stretch in between is idle: :meth:`sent_busy_ns` must not count it as busy.
        """
        gaps = self.gaps
        now = self.clock.now_ns
        while gaps and gaps[0][1] <= now:
            gaps.popleft()
        gaps.append((from_ns, to_ns))

    def sent_busy_ns(self, now_ns: float) -> float:
        """Transmission time up to ``now_ns``: what was granted, less what is booked after it.

        Transfers are granted ahead of time, so ``busy_ns`` counts time still
        to come.  Everything booked ahead is contiguous from now to
        ``busy_until`` except the idle stretches recorded by
        :meth:`idle_until`, so the time still to come is that span less those
        stretches: the result never grows faster than the clock (a link is
        never busier than its capacity, over any window between two calls).
        """
        ahead_ns = self.busy_until - now_ns
        if ahead_ns <= 0.0:
            return self.busy_ns
        for from_ns, to_ns in self.gaps:
            if to_ns > now_ns:
                ahead_ns -= to_ns - (from_ns if from_ns > now_ns else now_ns)
        return self.busy_ns - ahead_ns

    @property
    def name(self) -> str:
        return f"{self.src_id}->{self.dst_id}{self.tag}"

    def pools(self):
        return [p for p in self.cmd_pools + self.data_pools if p is not None]

    def send(self, pkt: Packet) -> None:
        """Queue ``pkt`` (held in a buffer at ``src``) for this direction.

        A packet whose command credit (and data credit, if it carries data) is
        usable now is transmitted at once, without a callback: what
        :meth:`CreditPool.request` and :func:`~simnuma.model.events.grant_at`
        would do for a slot that is free now, inlined, because every hop of
        every packet comes through here.  Otherwise it waits for the credits
        in order, command credit first.
        """
        now = self.clock.now_ns
        vc = pkt.vc
        pool = self.cmd_pools[vc]
        if pool.take_ready(now):  # a command credit is here now: taken
            if not pkt.data_bytes:
                self._transmit(pkt)
                return
            data_pool = self.data_pools[vc]
            assert data_pool is not None   # a channel that carries data has data buffers
            if data_pool.take_ready(now):  # ... and a data credit
                self._transmit(pkt)
            else:
                data_pool.request(self.transmitter, pkt, pkt.held, pkt.held_data)
        else:
            pool.request(self.credited, pkt, pkt.held, pkt.held_data)

    def _got_command_credit(self, pkt: Packet) -> None:
        if pkt.data_bytes:
            data_pool = self.data_pools[pkt.vc]
            assert data_pool is not None
            data_pool.request(self.transmitter, pkt, pkt.held, pkt.held_data)
        else:
            self._transmit(pkt)

    def _transmit(self, pkt: Packet) -> None:
        clock = self.clock
        now = clock.now_ns
        cmd_ns = pkt.cmd_bytes * self.ns_per_byte
        data_bytes = pkt.data_bytes
        if data_bytes:
            start = self.busy_until if self.busy_until > now else now
            data_ns = data_bytes * self.ns_per_byte
            end = start + cmd_ns + data_ns
            if end < pkt.tail_ns:  # cut through: the tail cannot leave before it has come in
                self.idle_until(start, start + pkt.tail_ns - end)
                start += pkt.tail_ns - end
                end = pkt.tail_ns
            self.busy_until = end
            self.data_busy_ns += data_ns
            self.data_bytes += data_bytes
        else:
            # a command packet is inserted into (and ahead of) data transfers, as
            # HyperTransport allows; it waits only for the commands before it
            start = self.cmd_busy_until if self.cmd_busy_until > now else now
            end = start + cmd_ns
            self.cmd_busy_until = end
            self.busy_until = (self.busy_until if self.busy_until > start else start) + cmd_ns
        self.busy_ns += end - start
        self.cmd_bytes += pkt.cmd_bytes
        # free the buffers it held (release_buffers, inlined): as the transmitter takes it, or (release: end) once
        # it has been sent out of them
        ready_ns = pkt.held.release(end if self.release_at_end else start)
        held_data = pkt.held_data
        if held_data is not None:   # give_back(ready_ns), inlined
            if held_data.waiters:
                held_data.grant_next(ready_ns)
            else:
                heappush(held_data.ready, ready_ns)
        vc = pkt.vc
        pkt.held = self.cmd_pools[vc]
        pkt.held_data = self.data_pools[vc] if data_bytes else None
        arrive_ns = end + self.arrival_delay_ns + pkt.lag_ns
        if self.observer is not None:
            self.observer.on_wire(self, pkt, start, end)
        pkt.lag_ns = 0.0
        path = pkt.path
        hop = pkt.hop
        key: Any   # the next link direction, or the kind of packet the receiving node consumes
        if hop < len(path):
            # forwarded onward: the receiver routes the packet on its header, to the next link of its route
            key = path[hop]
            pkt.hop = hop + 1
            if data_bytes:
                pkt.tail_ns = arrive_ns
                arrive_ns -= data_ns
        else:
            key = pkt.kind
        # where the receiving crossbar sends it (XBar.exit), asked once per key
        try:
            callbacks = self.exits[key]
        except KeyError:
            callbacks = self.exits[key] = self.receiver.exit(key)
        deliver_at(clock, arrive_ns, pkt, callbacks)
