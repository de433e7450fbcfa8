"""What a run returns: per thread, per link direction, per memory, per buffer.

Every number traces back to its inputs: a Result carries the board's resolved
parameters, the mode, the seed and the simnuma version.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields, replace

from .. import __version__
from .bottleneck import FULL, SATURATED, bottleneck, bottleneck_text

__all__ = ["Result", "ThreadResult", "Latency", "LinkResult", "MemoryResult", "QueueResult", "Bottleneck", "build_result",
           "bottleneck", "bottleneck_text", "SATURATED", "FULL"]


class _Section:
    """A typed part of a result: one attribute per field, and item access and ``to_dict()`` as in the JSON."""

    _raw: dict   # the JSON object (a field of every dataclass below)

    def __getitem__(self, key: str):
        return self._raw[key]

    def __contains__(self, key: object) -> bool:
        return key in self._raw

    def __iter__(self):
        """The JSON object's keys, as a dict's (without this, ``in`` and iteration would try the keys 0, 1, ...)."""
        return iter(self._raw)

    def get(self, key: str, default=None):
        return self._raw.get(key, default)

    def to_dict(self) -> dict:
        return copy.deepcopy(self._raw)


def _section(cls, raw: dict):
    """An instance of ``cls`` from its JSON object (fields it lacks are None; the object is kept for ``to_dict``)."""
    values = {f.name: raw.get(f.name) for f in fields(cls) if f.name != "_raw"}
    return cls(**values, _raw=raw)


@dataclass(frozen=True)
class Latency(_Section):
    """A thread's transaction latency, in ns: mean, median and 99th percentile (1-ns bins), and the histogram
    (``{start_ns, bin_ns, counts}``: at most 100 bins of a whole number of ns)."""

    mean: float
    p50: float
    p99: float
    histogram: dict
    _raw: dict = field(repr=False, compare=False)


@dataclass(frozen=True)
class ThreadResult(_Section):
    """One thread: its finish time, its share of the board's idle local read, bandwidth and latency."""

    spec: str                      # N.C.op.M[@RATE]
    role: str                      # foreground or background
    time_ns: float                 # when it finished (a background thread: the end of the run)
    percent_of_local_read: float | None   # time_ns as % of one idle 0.0.r.0 on the board (None without it)
    bandwidth_GBps: float
    bytes: int
    latency_ns: Latency
    transactions_simulated: int    # lines simulated (steady mode extrapolates the rest)
    _raw: dict = field(repr=False, compare=False)


@dataclass(frozen=True)
class LinkResult(_Section):
    """One link direction: bytes carried (data and control), bandwidth and utilisation of its capacity."""

    src: int
    dst: int
    name: str                 # "0->1"; of links in parallel, "0->1#1", "0->1#2", ...
    bytes: float
    data_bytes: float
    control_bytes: float
    bandwidth_GBps: float
    capacity_GBps: float
    utilization: float
    data_utilization: float
    control_utilization: float
    _raw: dict = field(repr=False, compare=False)


@dataclass(frozen=True)
class MemoryResult(_Section):
    """One node's memory: bandwidth read and written, utilisation, and what its model reports.

    ``model`` is ``dram``, ``fifo`` or ``curve``; the fields a model does not
    report are None (the DRAM's row hits, empties, conflicts, bus turnarounds
    and refreshes; the sustained bandwidth of a FIFO or curve memory).
    """

    node: int
    model: str
    bandwidth_GBps: float
    read_GBps: float
    write_GBps: float
    peak_GBps: float | None
    sustained_GBps: float | None
    utilization: float
    bus_utilization: float | None = None
    efficiency: float | None = None
    row_hits: float | None = None
    row_empties: float | None = None
    row_conflicts: float | None = None
    turnarounds_per_line: float | None = None
    refreshes_per_us: float | None = None
    read_ns: float | None = None
    _raw: dict = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class QueueResult(_Section):
    """One buffer pool: its entries, mean occupancy, the share of the time it was full, and its slots blocked.

    ``blocked`` is the mean number of its slots whose packets were waiting for
    a slot of another pool, ``waits_on`` the same by the pool awaited.
    """

    name: str
    capacity: int
    mean_occupancy: float
    full_fraction: float
    blocked: float
    waits_on: dict = field(hash=False)
    _raw: dict = field(repr=False, compare=False)


@dataclass(frozen=True)
class Bottleneck(_Section):
    """What limits the run: the busiest resource, or the full buffer in front of it where a chain of buffers, each
    waiting on the next, ends (``chain``: the longest such chain, its first buffer to that one)."""

    resource: str
    kind: str
    utilization: float
    limit: str | None
    buffer: str | None
    full_fraction: float | None
    chain: list | None = field(hash=False)
    _raw: dict = field(repr=False, compare=False)

    def __str__(self) -> str:
        return bottleneck_text(self._raw)


class Result:
    """The outcome of one simulation; ``to_dict()`` is the JSON of ``simnuma run --json``.

    Every part is typed and read-only: ``threads`` (:class:`ThreadResult`),
    ``links`` (:class:`LinkResult`), ``memory`` (:class:`MemoryResult`),
    ``queues`` (:class:`QueueResult`) and ``bottleneck`` (:class:`Bottleneck`),
    beside what makes the numbers traceable (``version``, ``topology``,
    ``mode``, ``seed``, ``size_bytes`` and the board's resolved
    ``parameters``).  Parts also answer ``part["field"]`` as in the JSON.
    """

    _data: dict
    wall_seconds: float
    version: str
    topology: str
    mode: str
    seed: int
    size_bytes: int
    makespan_ns: float
    makespan_percent: float | None
    baseline_ns: float | None
    simulated_ns: float
    extrapolated_ns: float
    transactions_simulated: int
    parameters: dict
    threads: tuple[ThreadResult, ...]
    links: tuple[LinkResult, ...]
    memory: tuple[MemoryResult, ...]
    queues: tuple[QueueResult, ...]
    bottleneck: Bottleneck | None
    warnings: tuple[str, ...]

    _FIELDS = ("version", "topology", "mode", "seed", "size_bytes", "makespan_ns", "makespan_percent", "baseline_ns",
               "simulated_ns", "extrapolated_ns", "transactions_simulated")

    def __init__(self, data: dict, wall_seconds: float = 0.0):
        put = object.__setattr__
        put(self, "_data", data)
        put(self, "wall_seconds", wall_seconds)   # host time the run took; not part of the result
        for name in self._FIELDS:
            put(self, name, data.get(name))
        put(self, "warnings", tuple(data.get("warnings") or ()))
        put(self, "parameters", data.get("parameters"))
        put(self, "threads", tuple(_thread(t) for t in data.get("threads", ())))
        put(self, "links", tuple(_section(LinkResult, x) for x in data.get("links", ())))
        put(self, "memory", tuple(_section(MemoryResult, x) for x in data.get("memory", ())))
        put(self, "queues", tuple(_section(QueueResult, x) for x in data.get("queues", ())))
        put(self, "bottleneck", _section(Bottleneck, data["bottleneck"]) if data.get("bottleneck") else None)

    def __setattr__(self, key, value):
        raise AttributeError(f"a Result is read-only (tried to set {key!r})")

    def __repr__(self) -> str:
        fg = [t for t in self.threads if t.role == "foreground"]
        percent = f" ({self.makespan_percent:.1f}% of 0.0.r.0)" if self.makespan_percent is not None else ""
        limit = f"; bottleneck {self.bottleneck}" if self.bottleneck else ""
        return (f"<Result {self.topology} {self.mode} seed {self.seed}: {len(fg)} foreground thread(s) "
                f"finish at {self.makespan_ns / 1e3:,.1f} us{percent}{limit}>")

    def to_dict(self) -> dict:
        return copy.deepcopy(self._data)

    def _repr_html_(self) -> str:
        """A table of the threads, the busiest links and the bottleneck, for Jupyter."""
        from html import escape

        def pct(v):
            return "" if v is None else f"{v:.1f}%"

        rows = "".join(
            f"<tr><td>{escape(t.spec)}</td><td>{t.role}</td><td>{t.time_ns / 1e6:.3f}</td>"
            f"<td>{pct(t.percent_of_local_read)}</td><td>{t.bandwidth_GBps:.3f}</td><td>{t.latency_ns.mean:.1f}</td>"
            f"<td>{t.latency_ns.p99:.1f}</td></tr>" for t in self.threads)
        busiest = sorted(self.links, key=lambda link: -link.utilization)[:4]
        links = ", ".join(f"{escape(link.name)} {100 * link.utilization:.0f}%" for link in busiest)
        bottleneck = escape(bottleneck_text(self._data["bottleneck"])) if self.bottleneck else ""
        return (f"<p><b>{escape(self.topology)}</b>, {self.mode} mode, seed {self.seed}, simnuma {self.version}</p>"
                "<table><tr><th>thread</th><th>role</th><th>time (ms)</th><th>% of 0.0.r.0</th><th>GB/s</th>"
                f"<th>latency mean (ns)</th><th>p99</th></tr>{rows}</table>"
                f"<p>busiest links: {links}<br>bottleneck: {bottleneck}</p>")

    def thread(self, spec: str) -> ThreadResult:
        """The thread written ``spec`` (as in the notation, e.g. ``0.0.r.1``)."""
        for t in self.threads:
            if t.spec == spec:
                return t
        raise KeyError(spec)

    def link(self, src: int, dst: int) -> LinkResult:
        """The link direction ``src -> dst`` (of links in parallel, the first: ``links`` has each)."""
        for entry in self.links:
            if entry.src == src and entry.dst == dst:
                return entry
        raise KeyError((src, dst))

    def to_dataframe(self, part: str = "threads"):
        """One part (``threads``, ``links``, ``memory``, ``queues`` or ``waits``) as a pandas DataFrame.

        A row per entry, nested fields flattened (``latency_ns.mean``).  A
        queue's waits by the pool awaited are not flattened into a column per
        pool: ``waits`` gives them in long form, a row per (``queue``,
        ``waits_on``) pair with the mean number of ``slots`` waiting.  pandas
        is optional: without it this raises ImportError saying how to get it.
        """
        if part not in DATAFRAME_PARTS:
            raise ValueError(f"part must be one of {', '.join(DATAFRAME_PARTS)}; got {part!r}")
        try:
            import pandas
        except ImportError:
            raise ImportError("Result.to_dataframe needs pandas: pip install pandas") from None
        if part == "waits":
            rows = [{"queue": q["name"], "waits_on": awaited, "slots": slots}
                    for q in self._data["queues"] for awaited, slots in (q.get("waits_on") or {}).items()]
            return pandas.DataFrame(rows, columns=["queue", "waits_on", "slots"])
        if part == "queues":
            return pandas.json_normalize([{k: v for k, v in q.items() if k != "waits_on"}
                                          for q in self._data["queues"]])
        return pandas.json_normalize(self._data[part])


DATAFRAME_PARTS = ("threads", "links", "memory", "queues", "waits")


def _thread(raw: dict) -> ThreadResult:
    """A ThreadResult whose latency is a Latency too."""
    return replace(_section(ThreadResult, raw), latency_ns=_section(Latency, raw.get("latency_ns") or {}))


def _unpack(system, snap):
    """Split a counter snapshot into named parts."""
    i = 1
    links = []
    for _ in system.link_list:
        links.append(snap[i:i + 3])
        i += 3
    mcts = []
    for mct in system.mcts:
        n = len(mct.memory.COUNTERS)
        mcts.append(dict(zip(mct.memory.COUNTERS, snap[i:i + n])))
        i += n
    threads = []
    for _ in system.foreground + system.background:
        threads.append(snap[i])
        i += 1
    n = len(system.pools)
    held = snap[i:i + n]
    full = snap[i + n:i + 2 * n]
    blocked = snap[i + 2 * n:i + 3 * n]
    i += 3 * n
    waits: dict = {pool.name: {} for pool in system.pools}
    for (pool, target), ns in zip(system.wait_edges, snap[i:]):
        if ns > 0.0:
            waits[pool.name][target] = ns
    return links, mcts, threads, snap[0], held, full, blocked, waits


def build_result(system, mode: str, seed: int, size_bytes: int, baseline_ns, wall_s: float) -> Result:
    real = system.snapshot()
    extra = system.extrapolated.values if system.extrapolated is not None else [0.0] * len(real)
    total = [a + b for a, b in zip(real, extra)]
    links, mcts, done, run_ns, held, full, blocked, waits = _unpack(system, total)
    fg_times = [system.finish_total_ns[t] for t in system.foreground]
    makespan = max(fg_times)
    elapsed = makespan
    pct = (lambda ns: 100.0 * ns / baseline_ns) if baseline_ns else (lambda ns: None)

    threads = []
    all_threads = system.foreground + system.background
    for k, t in enumerate(all_threads):
        if t.foreground:
            time_ns = system.finish_total_ns[t]
            nbytes = system_lines(system) * len(t.pattern) * 64
        else:
            time_ns = elapsed
            nbytes = done[k] * 64
        threads.append({
            "spec": t.label,
            "role": "foreground" if t.foreground else "background",
            "time_ns": time_ns,
            "percent_of_local_read": pct(time_ns) if t.foreground else None,
            "bandwidth_GBps": nbytes / time_ns if time_ns > 0 else 0.0,
            "bytes": nbytes,
            "latency_ns": t.latency.summary(),
            "transactions_simulated": t.latency.n,
        })

    link_rows = [_link_row(d, cmd, data, sent_ns, elapsed) for d, (cmd, data, sent_ns) in zip(system.link_list, links)]
    memory = [_memory_row(m, counts, elapsed) for m, counts in zip(system.mcts, mcts)]
    queues = []
    per_ns = 1.0 / run_ns if run_ns > 0 else 0.0
    for pool, h, f, b in zip(system.pools, held, full, blocked):   # time averages, extrapolated time included
        queues.append({
            "name": pool.name,
            "capacity": pool.capacity,
            "mean_occupancy": min(pool.capacity, max(0.0, h * per_ns)),
            "full_fraction": min(1.0, max(0.0, f * per_ns)),
            "blocked": min(pool.capacity, max(0.0, b * per_ns)),
            "waits_on": {target: ns * per_ns for target, ns in sorted(waits[pool.name].items())},
        })
    queues.sort(key=lambda q: (-q["full_fraction"], -q["mean_occupancy"] / q["capacity"], q["name"]))
    simulated_ns = real[0]
    data = {
        "version": __version__,
        "topology": system.topology.name,
        "mode": mode,
        "seed": seed,
        "size_bytes": size_bytes,
        "threads": threads,
        "makespan_ns": makespan,
        "makespan_percent": pct(makespan),
        "baseline_ns": baseline_ns,
        "links": link_rows,
        "memory": memory,
        "queues": queues,
        "bottleneck": bottleneck(link_rows, memory, queues),
        "simulated_ns": simulated_ns,
        "extrapolated_ns": system.offset_ns,
        "transactions_simulated": system.coherence.completed,
        "warnings": list(system.warnings),
        "parameters": system.topology.to_dict(),
    }
    return Result(data, wall_s)


def by_pair(links: list, value, combine=max) -> dict:
    """``{(src, dst): combine of value(row)}`` over link rows: links in parallel between two nodes become one
    entry (``max`` of their utilisations for the busiest, ``sum`` of their bytes for what the pair carried)."""
    out: dict = {}
    for row in links:
        out.setdefault((row["src"], row["dst"]), []).append(value(row))
    return {pair: values[0] if len(values) == 1 else combine(values) for pair, values in out.items()}


def _link_row(d, cmd_bytes: float, data_bytes: float, sent_ns: float, elapsed: float) -> dict:
    """One link direction over ``elapsed``: what it sent by then, data and control in the share granted.

    ``sent_ns`` is the transmission time up to the end of the run (not what
    was granted ahead of it: :meth:`LinkDirection.sent_busy_ns`), so the
    utilisation is a fraction by construction, not by clamping.
    """
    granted = cmd_bytes + data_bytes
    data_share = data_bytes / granted if granted else 0.0
    sent_bytes = sent_ns / d.ns_per_byte
    utilization = sent_ns / elapsed
    return {
        "src": d.src_id, "dst": d.dst_id, "name": d.name,
        "bytes": sent_bytes, "data_bytes": sent_bytes * data_share, "control_bytes": sent_bytes * (1.0 - data_share),
        "bandwidth_GBps": sent_bytes / elapsed,
        "capacity_GBps": 1.0 / d.ns_per_byte,
        "utilization": utilization,
        "data_utilization": utilization * data_share,
        "control_utilization": utilization * (1.0 - data_share),
    }


def _memory_row(mct, c: dict, elapsed: float) -> dict:
    """One node's memory: what it served, how busy it was, and for a DRAM how (rows, turnarounds, refresh)."""
    memory = mct.memory
    row = {
        "node": mct.node_id,
        "model": mct.model,
        "bandwidth_GBps": c["lines"] * 64 / elapsed,
        "read_GBps": c["reads"] * 64 / elapsed,
        "write_GBps": c["writes"] * 64 / elapsed,
        "peak_GBps": memory.peak_GBps,
        "sustained_GBps": getattr(memory, "sustained_GBps", None),
        "utilization": c["busy_ns"] / elapsed / memory.servers,
    }
    if mct.model == "dram":
        row["bus_utilization"] = c["bus_ns"] / elapsed / memory.servers
        lines = c["lines"] or 1
        row["efficiency"] = row["bandwidth_GBps"] / memory.peak_GBps
        row["row_hits"] = c["hits"] / lines
        row["row_empties"] = c["empties"] / lines
        row["row_conflicts"] = c["conflicts"] / lines
        row["turnarounds_per_line"] = c["turnarounds"] / lines
        row["refreshes_per_us"] = c["refreshes"] / elapsed * 1e3
        row["read_ns"] = c["read_ns"] / c["reads"] if c["reads"] else None
    return row


def system_lines(system) -> int:
    return max(1, system.size_bytes // 64)
