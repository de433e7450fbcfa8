"""A home memory as the analytic model sees it (``simnuma.analytic``): the time a read and a write hold it, the
fixed latency of a read, and what a read waits at a load, for each of the board's memory models."""
from __future__ import annotations

from ..model.curve import curve_latency_ns
from ..units import LINE_BYTES as LINE

__all__ = ["MemoryStation", "STREAMS", "home_memories", "idle_closures"]

# per op: (sequential read streams, write-back streams) a thread keeps at its memory: a write's fills and
# write-backs, a triad's b, c, a and a's write-backs; a chase's lines are scattered, in no stream
OP_STREAMS = {"r": (1, 0), "w": (1, 1), "t": (3, 1), "l": (0, 0)}
# the streams whose bursts take turns on the bus (a chase's scattered lines count as one)
STREAMS = {op: max(1, reads + writes) for op, (reads, writes) in OP_STREAMS.items()}


class MemoryStation:
    """A home memory as the solver sees it: the time a read and a write hold it (over its channels), the fixed
    latency of a read, and the wait a read meets at a load.

    * **FIFO**: 64 B at the sustained rate; no load-dependent wait beyond the queue.
    * **curve**: 64 B at the most the curves reach, within the idle latency (a line is done at the later of its
      latency and its turn at that rate), and, at the memory's bandwidth and read share, what the measured curves
      add to the idle latency (``curve_latency_ns``, as the simulation's memory does).
    * **DRAM**: a burst per line, plus the rank-to-rank gap (tRTRS) between bursts of different ranks where
      more than one stream shares the memory; writes are written in episodes (``write_burst`` over the
      channels, or as many as first-ready scheduling lets pass a waiting read, ``bypass_limit + 1``), each
      costing the bus its turnarounds (tRTW, and tWTR + CL before read data move again).  A read pays CL and,
      once per row (an OS page per channel, or a row, the smaller), a precharge and an activation, another
      each time a stream sharing its bank has closed its row (``_conflicts``), and a refresh now and then (tRFC,
      every tREFI); under a mix it waits for the write episode it meets: a local writer's
      fill, right behind its own write-back, all of it; any other read, meeting it at a random point, half of it
      (``residual``; the solver picks).  Where the idle timer closes a lone reader's row between its trains
      (``idle_closed``, :func:`idle_closures`), every line waits for that activation too (tRCD).

    Abstracts away: which bank and row a line is in, the scheduler's choices one by one, and any bunching of
    the reads beyond a lone reader's trains.
    """

    def __init__(self, node, streams: int, mixed: bool, read_share: float = 1.0, threads: tuple = (),
                 idle_closed: bool = False):
        self.node = node
        self.read_share = read_share
        self.model = node.memory_model if node.memory_model in ("dram", "curve") else "fifo"
        if self.model == "dram" and node.dram is None:
            self.model = "fifo"
        self.episode_ns = 0.0
        self.episode_writes = 1.0
        self.residual = 1.0 if self.model == "curve" else 0.5
        self.channels = 1
        self.scattered_ns = 0.0
        self.write_hold_ns = 0.0
        if self.model == "dram":
            d = node.dram
            t = d.timings_ns
            self.channels = d.channels
            bus_ns = d.burst_ns + ((1.0 - 1.0 / d.ranks) * t["tRTRS"] if streams > 1 else 0.0)
            self.read_ns = bus_ns / d.channels
            self.write_ns = self.read_ns
            self.write_hold_ns = t["CWL"] + bus_ns   # a write-back's queue entry: until its burst has ended
            if mixed:
                if d.write_burst:
                    self.episode_writes = max(1.0, d.write_burst / d.channels)
                elif d.scheduler == "fr-fcfs":
                    self.episode_writes = d.bypass_limit + 1.0
                turn_ns = t["tRTW"] + t["tWTR"] + t["CL"]
                self.episode_ns = turn_ns + self.episode_writes * bus_ns
                self.write_ns += turn_ns / self.episode_writes / d.channels
            row_lines = min(d.os_page_bytes // LINE // d.channels, d.row_lines) or 1
            refresh_ns = t["tRFC"] ** 2 / (2.0 * t["tREFI"]) if t["tREFI"] else 0.0
            conflict_ns = _conflicts(d, threads, self.episode_writes) * (t["tRP"] + t["tRCD"])
            self.delay_ns = (node.memory_latency_ns + t["CL"] + (t["tRP"] + t["tRCD"]) / row_lines + refresh_ns
                             + conflict_ns)
            if idle_closed:   # a train's first line opens the row the idle timer closed, and its train waits
                self.delay_ns += t["tRCD"]
            # a chase's scattered line opens its row, in a bank whose row the idle timer has closed by then if
            # there is one (it comes back to a bank after as many lines as there are banks), else one to close
            self.scattered_ns = (t["tRCD"] + (0.0 if d.idle_close_ns else t["tRP"])
                                 - (t["tRP"] + t["tRCD"]) / row_lines)
        else:
            self.read_ns = self.write_ns = LINE / self._most_GBps(read_share)
            self.delay_ns = node.memory_latency_ns
            if self.model == "curve":   # a line's turn at the peak rate passes within its latency, unless it queues
                self.delay_ns = max(0.0, self.delay_ns - self.read_ns)
            self.write_hold_ns = self.write_ns
        self.bus_hold_ns = self.read_ns * self.channels   # a line's time on its channel

    def _most_GBps(self, read_share: float) -> float:
        """What the memory serves at most: a curve's most at the read share, or a FIFO memory's sustained rate."""
        if self.model == "curve":
            return curve_latency_ns(self.node.curves, 0.0, read_share)[1]
        return self.node.memory_sustained_GBps or self.node.memory_bandwidth_GBps or 1.0

    def wait_ns(self, reads_per_ns: float, writes_per_ns: float) -> float:
        """What a read waits beyond the queue of lines at the memory, at this load."""
        if self.model == "curve":
            lines = reads_per_ns + writes_per_ns
            if lines <= 0.0:
                return 0.0
            share = reads_per_ns / lines
            # the curve at the bandwidth the memory serves: no more than its most (the rest waits in its queue)
            bandwidth = min(lines * LINE, self._most_GBps(share))
            added, _ = curve_latency_ns(self.node.curves, bandwidth, share)
            return max(0.0, added)
        if not self.episode_ns or reads_per_ns <= 0.0:
            return 0.0
        # the whole episode: what a read meets from its start (``residual`` of it at a random point)
        episodes_per_ns = writes_per_ns / self.channels / self.episode_writes
        return min(1.0, episodes_per_ns * self.episode_ns) * self.episode_ns


def home_memories(topology, classes, cache: dict, shares: dict | None = None, closed: frozenset = frozenset()) -> dict:
    """Each home memory of ``classes`` as the solver sees it, from every thread that uses it, at the read share of
    ``shares`` or else counted at one transaction per customer of each; kept per board, mix of threads and
    share."""
    out = {}
    for home in sorted({c.home for c in classes}):
        there = [c for c in classes if c.home == home]
        reads = sum(c.customers for c in there)
        writes = sum(c.customers * c.writes for c in there)
        share = (shares or {}).get(home, reads / (reads + writes))
        key = ("memory", home, tuple(sorted((c.op, c.customers, c.writes) for c in there)), share, home in closed)
        memory = cache.get(key)
        if memory is None:
            memory = cache[key] = MemoryStation(topology.node(home), sum(STREAMS[c.op] for c in there), writes > 0.0,
                                                share, tuple((c.op, c.customers) for c in there), home in closed)
        out[home] = memory
    return out


def _conflicts(dram, threads: tuple, episode_writes: float) -> float:
    """Row conflicts per read between the memory's streams: a stream's current line is in the bank of another
    stream's one time in as many as a channel has banks (ranks x banks; the page placer draws pages evenly over
    them), and then each switch between the two closes the other's row.  Two read streams switch as often as the
    scheduler cannot serve one's queued row hits in a row (first-ready: up to ``bypass_limit + 1`` of them, as many
    as a stream has queued, its thread's lines in flight over its streams; in order: every time); a read stream
    and a write-back stream once per write episode.  The chances combine as independent ones.  ``threads``: ``(op,
    lines in flight)`` of every thread at the memory."""
    banks = dram.ranks * dram.banks
    streams = []   # (is_write, lines of it queued at a time)
    for op, customers in threads:
        reads, writes = OP_STREAMS[op]
        queued = customers / max(1, reads + writes)
        streams += [(False, queued)] * reads + [(True, queued)] * writes
    read_streams = [queued for is_write, queued in streams if not is_write]
    if not read_streams or len(streams) < 2:
        return 0.0
    first_ready = dram.scheduler == "fr-fcfs"
    writes = len(streams) - len(read_streams)
    total = 0.0
    for queued in read_streams:
        run = min(dram.bypass_limit + 1.0, max(1.0, queued)) if first_ready else 1.0
        clear = (1.0 - 1.0 / banks / run) ** (len(read_streams) - 1)
        clear *= (1.0 - 1.0 / banks / max(1.0, episode_writes)) ** writes
        total += 1.0 - clear
    return total / len(read_streams)


def idle_closures(topology, classes, throughput: dict) -> frozenset:
    """The home memories whose open row the DRAM controller's idle timer closes between a reader's trains of lines,
    at ``throughput`` (transactions per ns by label).

    A reader alone at its home, unpaced, whose requests cross a link, has its lines in flight reach the memory as a
    train, each a request credit's round trip after the one before (``ThreadClass.train_ns``), and the train comes
    round once a cycle (its lines in flight over its throughput).  The row stays open from the end of the train's
    last burst (its arrival, on average half a DRAM clock to the next edge, CL and the burst) until the next train's
    first line; when that wait outlasts the idle limit (a fixed one: a dynamic limit steps up instead) the first line
    finds the row closed and opens it (tRCD), and its train waits behind it.  A local reader's requests cross no
    link: nothing here spaces them, and its lines count as evenly spread, the row open."""
    out = set()
    for home in {c.home for c in classes}:
        there = [c for c in classes if c.home == home]
        node = topology.node(home)
        d = node.dram
        if len(there) != 1 or node.memory_model != "dram" or d is None or not d.idle_close_ns or d.idle_dynamic:
            continue
        c = there[0]
        x = throughput.get(c.label, 0.0)
        if c.op != "r" or c.period_ns or not c.train_ns or x <= 0.0:
            continue
        cycle_ns = c.customers / x
        idle_ns = cycle_ns - (c.customers - 1) * c.train_ns - (d.tck_ns / 2 + d.timings_ns["CL"] + d.burst_ns)
        if idle_ns > d.idle_close_ns:
            out.add(home)
    return frozenset(out)
