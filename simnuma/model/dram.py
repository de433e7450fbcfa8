"""DRAM with channels, ranks and banks, and the controller that schedules it.

Models, per node (``memory.model: dram``):

* **Organisation.**  ``channels`` independent channels, each with a data bus ``width_bits`` wide
  moving two transfers per DRAM clock, ``ranks`` ranks per channel and ``banks`` banks per rank.
  A 64-byte line occupies its channel's bus for ``burst_ns`` (64 B / width / 2 clocks).  The
  address map (:mod:`simnuma.model.pages`) takes a line's physical address to its channel, rank,
  bank and row.
* **Banks with an open row.**  A bank keeps its last row open (``page_policy: open``; with
  ``idle_close`` it closes a row nobody has used for that long, as K8's idle cycle limit
  does; with ``idle_dynamic`` each bank's limit moves along K8's limits of 0 to 256 clocks, a step
  up when the idle timer closed the row a request wants, a step down on a row conflict, as K8's dynamic
  idle cycle counter adjusts to page misses and conflicts) or closes it after every access
  (``closed``).  A column command to the open row is a
  *hit* (data after CL, or CWL for a write); a closed bank first activates the row (tRCD); an
  open bank holding another row first precharges it (tRP) — a *conflict*.  A row stays open
  at least tRAS, a precharge waits tRTP after a read command and tWR after the end of write
  data; activations of one rank are at least tRRD apart, and at most four fall in any tFAW.
* **The data bus.**  Bursts do not overlap; a read command waits tWTR after the end of write data
  (write-to-read turnaround), a write burst starts tRTW after the end of read data (read-to-write
  turnaround), and bursts of different ranks are tRTRS apart.
* **Refresh.**  Every tREFI each rank precharges its banks and refreshes for
  tRFC, the ranks of a channel staggered; a refresh closes every row.
* **The controller.**  Requests wait in the node's DRAM queue (``memory.queue`` entries, shared by
  the channels; :mod:`simnuma.model.mct` admits them).  ``fcfs`` serves each channel's requests in
  arrival order; ``fr-fcfs`` (first ready, first come first served) serves the request whose data
  can move first — row hits and bursts that need no turnaround win — the oldest among equals, and
  a request overtaken ``bypass_limit`` times goes next.
  With ``write_burst`` (Family 10h's MctWrLimit) writes wait in the queue while reads go on,
  until that many writes are queued; then every queued write is written, back to back, before
  reads go on again.  The queue holding them is the one reads need, so a burst limit near the
  queue's depth starves reads.  Precharges and activations for queued requests overlap other
  banks' transfers: a bank is prepared for a request as soon as it has arrived and the bank
  allows, whatever the bus is doing.  Read data leave the controller
  ``memory.latency`` after their burst (the controller's pipeline and the
  crossing to the crossbar); a write's queue entry is free when its burst has
  ended.

The sustained bandwidth is not an input: it is what these mechanisms let through, and the run
reports it with the row-hit rate and the turnarounds.

Abstracts away: the command bus (one command per clock), power-down, on-die termination, read and
write queues separate from the shared one, a controller's timeout or flush of writes that never
reach the burst limit, and the data (no ECC, no errors).
"""
from __future__ import annotations

from math import ceil

from .banks import Bank, Channel, Choice, Pending, Rank, Request, exact_grid
from .events import Clock, Port, call_at
from .mct import MCT, Memory
from .pages import AddressMap, PagePlacer

__all__ = ["DRAM", "COUNTERS"]

_INF = float("inf")

# extensive counters, in the order of DRAM.counters()
COUNTERS = ("lines", "busy_ns", "bus_ns", "reads", "writes", "hits", "empties", "conflicts", "turnarounds",
            "refreshes", "read_ns")


class DRAM(Memory):
    """The DRAM and its scheduler behind one node's MCT."""

    COUNTERS = COUNTERS

    def __init__(self, env, dram, controller_latency_ns: float, mct: MCT, seed: str):
        self.env = env
        self.clock: Clock = env.clock
        self.mct = mct
        self.decide = Port(self, 0)   # _epoch, as a callback (its only one)
        self.amap = AddressMap(dram)
        self.placer = PagePlacer(self.amap, seed)
        t = {name: float(ns) for name, ns in dram.timings_ns.items()}   # floats: the compiled model keeps them unboxed
        self.cl, self.cwl = t["CL"], t["CWL"]
        self.trcd, self.trp, self.tras, self.trtp = t["tRCD"], t["tRP"], t["tRAS"], t["tRTP"]
        self.twr, self.twtr, self.trtw = t["tWR"], t["tWTR"], t["tRTW"]
        self.trrd, self.tfaw, self.trtrs = t["tRRD"], t["tFAW"], t["tRTRS"]
        self.trfc, self.trefi = t["tRFC"], t["tREFI"]
        self.burst_ns, self.tck = float(dram.burst_ns), float(dram.tck_ns)
        self.min_cas = min(self.cl, self.cwl)
        self.banks_per_rank = int(dram.banks)
        self.fcfs: bool = dram.scheduler == "fcfs"
        self.bypass_limit, self.write_burst = int(dram.bypass_limit), int(dram.write_burst)
        self.writes_queued = 0     # writes in the queue, all channels
        self.draining = False      # a write burst is on: writes go, reads wait
        self.drain_ns = 0.0        # when the current (or last) burst began
        self.closed_page: bool = dram.page_policy == "closed"
        self.idle_close_ns: float = float(dram.idle_close_ns)
        # a dynamic idle limit (K8's DCC_EN): each bank's, from idle_close, one step of the ladder up when the timer
        # closed the row a request wants, one down on a page conflict
        self.idle_ladder_ns: list[float] = [float(x) for x in dram.idle_ladder_ns]
        # a decision taken earlier can stand without being timed again only where timing it again
        # at its own column time gives it back exactly (see _confirm)
        self.exact_grid = exact_grid(self.tck, list(t.values()) + [self.burst_ns, self.idle_close_ns])
        self.latency_ns = controller_latency_ns
        self.peak_GBps = dram.peak_GBps
        self.channels = [Channel(c, dram.ranks, dram.banks, self.trefi, self.idle_close_ns, dram.idle_start_step)
                         for c in range(dram.channels)]
        s, m = self.amap.shift, self.amap.mask
        self._decode = (s["channel"], m["channel"], s["rank"], m["rank"], s["bank"], m["bank"], s["row"], m["row"])
        self.servers = dram.channels
        self.lines = 0
        self.busy_ns = 0.0         # channel time moving data or held up by the DRAM (rows, turnarounds, refresh)
        self.bus_ns = 0.0          # channel time moving data
        self.reads = self.writes = 0
        self.hits = self.empties = self.conflicts = 0
        self.turnarounds = self.refreshes = 0
        self.read_ns = 0.0         # summed time from arrival to the end of the burst, reads

    def handle(self, code: int, item: tuple[Channel, int]) -> None:
        self._epoch(item)

    # -- the controller's side
    def submit(self, pkt, is_write: bool, line_address: int) -> None:
        """A request admitted to the DRAM queue."""
        cs, cm, rs, rm, bs, bm, ws, wm = self._decode
        ch = self.channels[(line_address >> cs) & cm]
        rank = (line_address >> rs) & rm
        bank = rank * self.banks_per_rank + ((line_address >> bs) & bm)
        now = self.clock.now_ns
        req = Request(pkt, is_write, rank, bank, (line_address >> ws) & wm, now, ch.banks[bank], ch.ranks[rank])
        ch.queue.append(req)
        if self.write_burst:
            if is_write:
                self.writes_queued += 1
                if not self.draining and self.writes_queued >= self.write_burst:
                    self._burst(True)
                    return
            if not self._eligible(ch, req):
                return
        epoch = ch.epoch_ns
        if epoch is not None:
            # A decision is due at ``epoch``: this request makes it earlier only if its column command can
            # come before.  A lower bound of that time (see _timing): its data no earlier than now's clock
            # edge plus its CAS latency, nor than the bus is free.
            cas = self.cwl if is_write else self.cl
            tck = self.tck
            bound = (ceil(now / tck - 1e-9) * tck + cas) - cas
            bus = ch.bus_free_ns - cas
            if bus > bound:
                bound = bus
            if bound >= epoch:
                return
        col, data, act = self._timing(ch, req, now)
        if epoch is None:
            # the queue was empty: the decision due at ``col`` is this request unless another arrives
            self._schedule(ch, col, (0, col, data, act, 1) if self.exact_grid and not self.write_burst else None)
        elif col < epoch:
            self._schedule(ch, col)

    def _eligible(self, ch: Channel, req: Request) -> bool:
        """With write bursts: whether ``req`` may be served now (a write only in a burst, a read
        only outside one unless its channel has no write left to burst)."""
        if not self.draining:
            return not req.is_write
        return req.is_write or not any(q.is_write for q in ch.queue)

    def _burst(self, on: bool) -> None:
        """A write burst begins or ends: every channel decides afresh (after the current event)."""
        now = self.clock.now_ns
        self.draining = on
        if on:
            self.drain_ns = now
        for ch in self.channels:
            ch.token += 1
            ch.pending = None
            ch.epoch_ns = now
            call_at(self.clock, now, self.decide, (ch, ch.token))

    def _schedule(self, ch: Channel, col_ns: float, pending: Pending | None = None) -> None:
        """A decision is due at ``col_ns``; ``pending`` is the one made already, if any (see :meth:`_confirm`)."""
        now = self.clock.now_ns
        ch.token += 1
        ch.pending = pending
        if col_ns <= now:
            ch.epoch_ns = now
            self._epoch((ch, ch.token))
        else:
            ch.epoch_ns = col_ns
            call_at(self.clock, col_ns, self.decide, (ch, ch.token))

    def _epoch(self, item: tuple[Channel, int]) -> None:
        ch, token = item
        if token != ch.token:
            return  # superseded by an earlier decision
        now = self.clock.now_ns
        queue = ch.queue
        pending, ch.pending = ch.pending, None
        while queue:
            if pending is not None:
                choice = self._confirm(ch, now, pending)
                pending = None
            else:
                choice = self._choose(ch, now)
            if choice is None:
                break   # only writes waiting for a burst
            k, col, data, act = choice
            if col > now:
                ch.token += 1
                ch.epoch_ns = col
                ch.pending = (k, col, data, act, len(queue))
                call_at(self.clock, col, self.decide, (ch, ch.token))
                return
            self._commit(ch, k, col, data, act)
        ch.epoch_ns = None

    # -- choosing
    def _choose(self, ch: Channel, now: float) -> Choice | None:
        """``(index, column ns, data ns, activation ns or -1 for a row hit)`` of the request to serve next.

        The request whose data can move first, the oldest among equals.  No
        request's data can move before the bus is free, nor before the next
        clock edge plus the shorter CAS latency: the first request that moves
        then is the choice, and the rest of the queue need not be looked at.
        """
        queue = ch.queue
        timing = self._timing
        if self.write_burst:
            return self._choose_eligible(ch, now)
        if self.fcfs or len(queue) == 1 or queue[0].bypassed >= self.bypass_limit:
            col, data, act = timing(ch, queue[0], now)   # (a request alone is the choice: no floor to compute)
            return 0, col, data, act
        tck = self.tck
        floor = ceil(now / tck - 1e-9) * tck + self.min_cas
        if floor < ch.bus_free_ns:
            floor = ch.bus_free_ns
        best: Choice | None = None
        best_data = _INF
        for k, req in enumerate(queue):
            col, data, act = timing(ch, req, now)
            if data < best_data:
                best = (k, col, data, act)
                best_data = data
                if best_data <= floor:
                    break
        return best

    def _choose_eligible(self, ch: Channel, now: float) -> Choice | None:
        """:meth:`_choose` among the requests a write burst lets go (None when there is none)."""
        eligible = [(k, req) for k, req in enumerate(ch.queue) if self._eligible(ch, req)]
        if not eligible:
            return None
        k, oldest = eligible[0]
        if self.fcfs or oldest.bypassed >= self.bypass_limit:
            col, data, act = self._timing(ch, oldest, now)
            return k, col, data, act
        best: Choice | None = None
        best_data = _INF
        for k, req in eligible:
            col, data, act = self._timing(ch, req, now)
            if data < best_data:
                best, best_data = (k, col, data, act), data
        return best

    def _confirm(self, ch: Channel, now: float, pending: Pending) -> Choice | None:
        """:meth:`_choose` at the time a decision made earlier is due, from what changed since.

        Nothing was served since (a commit supersedes the decision event), so
        the banks, ranks and bus are as they were.  A request's timing can only
        have grown with the clock (the column command waits at least until
        now); if the chosen request's has not, every other request that was
        there still loses to it, and only those that arrived since can beat
        it.
        """
        if self.write_burst:
            return self._choose_eligible(ch, now)
        k, col, data, act, n = pending
        queue = ch.queue
        if len(queue) == n and self.exact_grid:
            # nothing arrived: the decision stands as made (its column command was due now)
            return k, col, data, act
        col, data_now, act = self._timing(ch, queue[k], now)
        if data_now != data:
            return self._choose(ch, now)
        best = (k, col, data_now, act)
        if self.fcfs or queue[0].bypassed >= self.bypass_limit:
            return best
        best_data = data
        for j in range(n, len(queue)):
            col, data_j, act = self._timing(ch, queue[j], now)
            if data_j < best_data:
                best = (j, col, data_j, act)
                best_data = data_j
        return best

    def _idle_closed(self, bank: Bank, req: Request) -> bool:
        """Whether the bank's open row had been idle its limit when the request arrived (and is closed), with
        ``idle_close``."""
        return self.idle_close_ns != 0.0 and bank.row >= 0 and req.arrive_ns > bank.used_ns + bank.idle_ns

    def _idle_step(self, bank: Bank, step: int) -> None:
        """Move the bank's idle limit ``step`` steps along the ladder (as far as its ends)."""
        k = bank.idle_step + step
        if 0 <= k < len(self.idle_ladder_ns):
            bank.idle_step = k
            bank.idle_ns = self.idle_ladder_ns[k]

    def _timing(self, ch: Channel, req: Request, now: float) -> tuple[float, float, float]:
        """``(column ns, data ns, activation ns or -1 for a row hit)``: the earliest the request's burst can move."""
        bank = req.b
        row = bank.row
        closed = self._idle_closed(bank, req)
        if row == req.row and not closed:
            act = -1.0
            col = bank.col_ready_ns
        else:
            arrive = req.arrive_ns
            if closed:
                act = bank.used_ns + bank.idle_ns
                if bank.pre_ready_ns > act:
                    act = bank.pre_ready_ns
                act += self.trp
            elif row < 0:
                act = bank.act_ready_ns
            else:
                act = (bank.pre_ready_ns if bank.pre_ready_ns > arrive else arrive) + self.trp
            rank = req.r
            floor = rank.act_ns + self.trrd
            if self.tfaw:
                faw = rank.faw[0] + self.tfaw
                if faw > floor:
                    floor = faw
            if arrive > act:
                act = arrive
            if floor > act:
                act = floor
            tck = self.tck
            act = ceil(act / tck) * tck
            col = act + self.trcd
        if col < now:
            col = now
        tck = self.tck
        col = ceil(col / tck - 1e-9) * tck
        bus = ch.bus_free_ns
        last_rank = ch.last_rank
        if last_rank >= 0 and last_rank != req.rank:
            bus += self.trtrs
        if req.is_write:
            if not ch.last_write:
                bus += self.trtw
            cwl = self.cwl
            data = col + cwl
            if data < bus:
                data = bus
            return data - cwl, data, act
        turn = ch.write_end_ns + self.twtr
        if col < turn:
            col = turn
        cl = self.cl
        data = col + cl
        if data < bus:
            data = bus
        return data - cl, data, act

    # -- serving
    def _commit(self, ch: Channel, k: int, col: float, data: float, act: float) -> None:
        req = ch.queue[k]
        rank = ch.ranks[req.rank]
        if data + self.burst_ns > rank.refresh_due_ns:
            self._refresh(ch, rank, req.rank, data + self.burst_ns)
            col, data, act = self._timing(ch, req, self.clock.now_ns)
        queue = ch.queue
        if k:
            for j in range(k):
                older = queue[j]
                if not self.write_burst or self._eligible(ch, older):
                    older.bypassed += 1
        del queue[k]
        bank = ch.banks[req.bank]
        if act < 0.0:   # a row hit: no activation
            self.hits += 1
        else:
            if bank.row < 0 or self._idle_closed(bank, req):
                self.empties += 1
                if self.idle_ladder_ns and bank.row == req.row:   # closed too soon: the row would have hit
                    self._idle_step(bank, 1)
            else:
                self.conflicts += 1
                if self.idle_ladder_ns:   # held too long: another row was wanted
                    self._idle_step(bank, -1)
            bank.row = req.row
            bank.col_ready_ns = act + self.trcd
            bank.pre_ready_ns = act + self.tras
            rank.act_ns = act
            faw = rank.faw
            del faw[0]
            faw.append(act)
        burst = self.burst_ns
        end = data + burst
        if req.is_write:
            if not ch.last_write and ch.last_rank >= 0:
                self.turnarounds += 1
            pre = end + self.twr
            ch.write_end_ns = end
            self.writes += 1
        else:
            if ch.last_write:
                self.turnarounds += 1
            pre = col + self.trtp
            self.reads += 1
            self.read_ns += end - req.arrive_ns
        if pre > bank.pre_ready_ns:
            bank.pre_ready_ns = pre
        if col + burst > bank.col_ready_ns:
            bank.col_ready_ns = col + burst
        bank.used_ns = end
        if self.closed_page:
            bank.row = -1
            bank.act_ready_ns = bank.pre_ready_ns + self.trp
        # busy: the burst, and the wait the DRAM imposed on it beyond an idle channel's CAS latency
        since = req.arrive_ns
        if req.is_write and self.write_burst and self.drain_ns > since:
            since = self.drain_ns   # the wait for the burst is the controller's policy, not the DRAM's
        ideal = ceil(since / self.tck - 1e-9) * self.tck + (self.cwl if req.is_write else self.cl)
        floor = ch.bus_free_ns if ch.bus_free_ns > ideal else ideal
        self.busy_ns += ch.ledger.book(floor if floor < data else data, data, end, self.clock.now_ns)
        ch.bus_free_ns = end
        ch.last_write = req.is_write
        ch.last_rank = req.rank
        self.lines += 1
        self.bus_ns += self.burst_ns
        self.mct.line_done(req.pkt.txn, req.is_write, end if req.is_write else end + self.latency_ns)
        if req.is_write and self.write_burst:
            self.writes_queued -= 1
            if self.draining and not self.writes_queued:
                self._burst(False)

    def _refresh(self, ch: Channel, rank: Rank, r: int, until_ns: float) -> None:
        """Every refresh of rank ``r`` due before ``until_ns``: precharge its banks, refresh for tRFC."""
        banks = ch.banks[r * self.banks_per_rank:(r + 1) * self.banks_per_rank]
        while rank.refresh_due_ns < until_ns:
            start = rank.refresh_due_ns
            if any(b.row >= 0 for b in banks):
                start = max(start, max(b.pre_ready_ns for b in banks)) + self.trp
            done = start + self.trfc
            for b in banks:
                b.row = -1
                b.act_ready_ns = max(b.act_ready_ns, done)
            rank.refresh_due_ns += self.trefi
            self.refreshes += 1

    def counters(self) -> list:
        """The counters up to now: busy and bus time booked ahead of now (:class:`SpanLedger`) are left out."""
        ahead = [ch.ledger.ahead(self.clock.now_ns) for ch in self.channels]
        busy_ns, bus_ns = self.busy_ns - sum(a[0] for a in ahead), self.bus_ns - sum(a[1] for a in ahead)
        return [self.lines, busy_ns, bus_ns, self.reads, self.writes, self.hits,
                self.empties, self.conflicts, self.turnarounds, self.refreshes, self.read_ns]
