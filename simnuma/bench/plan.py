"""The standard set of benchmark cases for a host (:func:`suite_plan`); :mod:`.suite` runs it.

The set depends on the host (nodes with CPUs, nodes with memory, CPU count):

- single threads: ops r, w, t and l from the first core of every node with
  CPUs to every node with memory (its first CPU this process may use,
  :func:`first_core`; core 0 below stands for it);
- two threads on one node (the home node: the first with CPUs and memory that
  this process may use and, if possible, two CPUs; :func:`~.cores._home_node`):
  r+r, w+w and r+w on local memory; on a multi-node host also a local writer
  (reader) beside one writing (reading) the nearest other node whose memory
  this process may use (its cpuset's ``Mems_allowed``);
- on a multi-node host, crossfire (``a.0.w.b b.0.w.a``, and the same for reads)
  and the same hops without crossfire (``a.0.w.b b.0.w.c``; on two nodes the
  second thread stays local: ``a.0.w.b b.0.w.b``);
- loaded writers: two local writers (one when CPUs are short) beside one to
  three background readers of local memory at two rates (of the home node's
  memory on a node without memory this process may use);
- loaded latency, on the home node H: the latency chase ``H.0.l.H`` beside 1 to
  K unthrottled background streams of local memory (K = the node's other CPUs,
  leaving out the hardware threads of the chase's own core, whose sharing of
  the core would be measured instead of the memory's; at most
  :data:`MOST_STREAM_COUNTS` counts, spread from 1 to K), and beside K
  streams paced to rising total rates (6 to 8 rates, from 10% to 120% of K x
  the unthrottled single-thread bandwidth, which the suite measures first),
  for each mix: ``r`` (all reads), ``t`` (triad, 3/4 reads), ``w`` (fill and
  write-back, 1/2 reads);
- the peak: every CPU of the home node streaming local memory (r, w, t) in the
  foreground;
- the remote peaks, on a multi-node host: every CPU of the home node reading
  the memory of the first node at each distance from it (the first whose
  memory this process may use), where the links' bandwidth decides.

No case uses more threads than the host has CPUs or more memory than a node
has free; the cases that would are listed as skipped with the reason.  A case
that two groups share (on a two-CPU node the peak of r is the r+r pair) runs
once and is listed in both groups.

Every case of a suite uses one array size (:func:`suite_array_size`): the
benchmark's default (:func:`~simnuma.bench.host.default_size_bytes`: 4 x the
last-level cache instance of one CPU, at least 64 MiB), unless the arrays of
the largest case on a node would take more than :data:`MEMORY_SHARE` of that
node's memory, or an array would exceed :data:`MOST_ARRAY_BYTES`; then the
largest size within both, in whole 2 MiB.  The default keeps a single thread's
array four times the cache it can use, so that caching moves its figure by a
quarter at most; the suite runs many threads at once (every CPU of a node at
its peak, three arrays each for the triad) and every case in several rounds,
so on a host with a large cache and many CPUs per node the default would take
more memory than the node has and far longer than it needs.  Smaller arrays
may stay partly in cache: the suite says so in one line.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from ..case import SEPARATOR, Case, parse_case
from ..tables import count
from ..units import format_bandwidth
from ..workload import parse_spec
from .cores import _home_node, allowed_cores, beside_first, first_core, home_note, memory_allowed, second_core
from .cpulists import format_cpulist
from .host import Host, array_count, format_bytes
from .sizing import MEMORY_SHARE, MOST_ARRAY_BYTES, ArraySize, suite_array_size

__all__ = ["PlannedCase", "planned", "SuitePlan", "suite_plan", "suite_cases", "INDEX_FORMAT", "BACKGROUND_RATES", "stream_counts",
           "paced_rates", "MIXES", "MOST_STREAM_COUNTS", "PACED_FRACTIONS", "ArraySize", "suite_array_size",
           "MEMORY_SHARE", "MOST_ARRAY_BYTES", "first_core", "second_core"]

INDEX_FORMAT = "simnuma-bench-suite/1"
BACKGROUND_RATES = ("0.5GB/s", "2GB/s")
SINGLE_OPS = ("r", "w", "t", "l")
MIXES = ("r", "t", "w")            # background ops of the loaded-latency cases: 100%, 75% and 50% reads
MOST_STREAM_COUNTS = 8             # unthrottled stream counts per mix, spread from 1 to K
PACED_FRACTIONS = (0.1, 1.2)       # paced totals from 10% to 120% of K x the single-thread bandwidth
_LONGEST_STEM = 120                # report file names stay far below the 255 bytes a file system allows


@dataclass(frozen=True)
class PlannedCase:
    """One benchmark run of a suite: its case, the group it is planned for, and what it is for."""

    kind: str
    case: Case
    purpose: str = ""

    @property
    def name(self) -> str:
        """The case's canonical notation."""
        return self.case.name

    @property
    def threads(self) -> tuple:
        return self.case.threads

    @property
    def background(self) -> tuple:
        return self.case.background

    @property
    def file_name(self) -> str:
        """The case's report file: its name made safe, shortened with a digest when a file name would be long."""
        stem = self.name.replace(f" {SEPARATOR} ", "--bg--").replace(" ", "_").replace("/s", "ps")
        stem = re.sub(r"[^A-Za-z0-9._@+-]", "_", stem)
        if len(stem) > _LONGEST_STEM:
            digest = hashlib.sha256(self.name.encode()).hexdigest()[:12]
            stem = f"{stem[:_LONGEST_STEM - 14]}--{digest}"
        return stem + ".json"


def planned(kind: str, threads, background=(), purpose: str = "") -> PlannedCase:
    """A planned case of explicit threads (spec labels)."""
    return PlannedCase(kind, parse_case(list(threads), list(background)), purpose)


@dataclass
class SuitePlan:
    """The cases of a suite, the cases skipped (with why), and the groups each case belongs to."""

    host: Host
    size_bytes: int | None           # None: the arrays' memory is not checked (the plan that sizes them)
    cases: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    groups: dict = field(default_factory=dict)   # group -> case names, in order
    notes: list = field(default_factory=list)    # choices of the plan a reader of the index should know

    def add(self, case: PlannedCase, group: str | None = None) -> None:
        """Plan ``case`` (once: a case already planned only joins ``group``), or skip it with the reason."""
        group = group or case.kind
        if any(c.name == case.name for c in self.cases):
            self._join(group, case.name)
            return
        reason = self._unfit(case)
        if reason:
            self.skipped.append({"case": case.name, "kind": group, "reason": reason})
            return
        self.cases.append(case)
        self._join(group, case.name)

    def _join(self, group: str, name: str) -> None:
        names = self.groups.setdefault(group, [])
        if name not in names:
            names.append(name)

    def _unfit(self, case: PlannedCase) -> str:
        needed = len(case.threads) + len(case.background)
        if needed > self.host.cpu_count:
            return f"needs {needed} CPUs, the host has {self.host.cpu_count}"
        quota = self.host.cpu_quota
        if quota is not None and needed > quota.cpus:
            return (f"runs {needed} threads at once, more than this process's CPU quota of {quota.text()}: it would"
                    " measure the quota, not the machine")
        barred = self._not_allowed(case)
        if barred:
            return (f"{count(len(barred), 'CPU')} it runs on ({format_cpulist(barred)}) not allowed to this process"
                    " (a cpuset or CPU affinity restricts it)")
        mems = self.host.allowed_mems
        outside = sorted(n for n in arrays_by_node(case) if mems is not None and n not in mems)
        if outside:
            return (f"its arrays go on node(s) {format_cpulist(outside)}, outside the memory nodes this process may"
                    f" use (Mems_allowed: {format_cpulist(mems)}; a cpuset restricts it)")
        if self.size_bytes is None:
            return ""
        arrays = arrays_by_node(case)
        for node in self.host.nodes:
            need = self.size_bytes * arrays.get(node.id, 0)
            if need and node.memory_free_bytes is not None and need > node.memory_free_bytes:
                return (f"its arrays need {format_bytes(need)} on node {node.id}, which has"
                        f" {format_bytes(node.memory_free_bytes)} free")
        return ""

    def _not_allowed(self, case: PlannedCase) -> list:
        """The CPUs the case's threads would run on that this process may not use (none when not known)."""
        cpus = []
        for text in case.threads + case.background:
            spec = parse_spec(text)
            node = self.host.node(spec.node)
            if node is not None and spec.core < len(node.cpus) and not self.host.may_use(node.cpus[spec.core]):
                cpus.append(node.cpus[spec.core])
        return cpus


def arrays_by_node(case: PlannedCase) -> dict:
    """``{node id: arrays}``: how many arrays the case's threads (foreground and background) put on each node."""
    out: dict[int, int] = {}
    for text in case.threads + case.background:
        spec = parse_spec(text)
        out[spec.mem_node] = out.get(spec.mem_node, 0) + array_count(spec.op)
    return out


def _nearest(host: Host, origin, candidates):
    """The candidate closest to ``origin`` by distance (lowest id on ties, or without distances)."""
    def key(node):
        distance = host.distance(origin.id, node.id)
        return (distance if distance is not None else 0, node.id)
    return min(candidates, key=key) if candidates else None


def _singles(host: Host, plan: SuitePlan) -> None:
    for node in (n for n in host.nodes if n.cpus):
        core = first_core(host, node)
        for memory in (m for m in host.nodes if m.has_memory):
            for op in SINGLE_OPS:
                plan.add(planned("single", (f"{node.id}.{core}.{op}.{memory.id}",),
                              purpose="one thread alone: the reference for every other case"))


def _same_node_pairs(plan: SuitePlan, a, b) -> None:
    x, j, k = a.id, first_core(plan.host, a), second_core(plan.host, a)
    if a.cpus[k] in plan.host.siblings(a.cpus[j]):
        plan.notes.append(f"every CPU of node {x} is a hardware thread of one core: the pairs on it share that"
                          " core as well as the memory")
    pairs = [("r", "r"), ("w", "w"), ("r", "w")]
    for first, second in pairs:
        plan.add(planned("same-node", (f"{x}.{j}.{first}.{x}", f"{x}.{k}.{second}.{x}"),
                      purpose="two threads sharing one node's memory"))
    if b is not None:
        for op in ("w", "r"):
            plan.add(planned("same-node", (f"{x}.{j}.{op}.{x}", f"{x}.{k}.{op}.{b.id}"),
                          purpose="second thread sent one hop away instead of sharing local memory"))


def _crossfire_pairs(host: Host, plan: SuitePlan, a, b) -> None:
    others = [n for n in host.nodes if memory_allowed(host, n) and n.id not in (a.id, b.id)]
    # as far from b as a is, so that only the distance from a changes; none such: b's own memory (on two nodes)
    by_distance = [n for n in others if host.distance(b.id, n.id) == host.distance(b.id, a.id)]
    third = _nearest(host, b, by_distance) or b
    i, j = first_core(host, a), first_core(host, b)
    for op in ("w", "r"):
        plan.add(planned("crossfire", (f"{a.id}.{i}.{op}.{b.id}", f"{b.id}.{j}.{op}.{a.id}"),
                      purpose="two threads using each other's memory over the same link"))
        plan.add(planned("no-crossfire", (f"{a.id}.{i}.{op}.{b.id}", f"{b.id}.{j}.{op}.{third.id}"),
                      purpose="the same first thread without traffic coming back over its link"))


def _background_cpus(host: Host, home, taken: set) -> list:
    """Free (node, core) slots this process may use, other nodes first (round robin), then the home node."""
    queues = [[(n, c) for c in range(len(n.cpus)) if (n.id, c) not in taken and host.may_use(n.cpus[c])]
              for n in host.nodes if n.cpus and n.id != home.id]
    slots = []
    while any(queues):
        for queue in queues:
            if queue:
                slots.append(queue.pop(0))
    slots += [(home, c) for c in range(len(home.cpus)) if (home.id, c) not in taken and host.may_use(home.cpus[c])]
    return slots


def _loaded_writers(host: Host, plan: SuitePlan, home) -> None:
    x = home.id
    for readers in (1, 2, 3):
        second = second_core(host, home)
        writers = 2 if len(home.cpus) >= 2 and host.may_use(home.cpus[second]) and host.cpu_count >= 2 + readers else 1
        cores = (first_core(host, home), second)[:writers]
        threads = tuple(f"{x}.{c}.w.{x}" for c in cores)
        slots = _background_cpus(host, home, {(x, c) for c in cores})
        for rate in BACKGROUND_RATES:
            if writers + readers > host.cpu_count or readers > len(slots):
                reason = (f"needs {writers + readers} CPUs, the host has {host.cpu_count}"
                          if writers + readers > host.cpu_count else
                          f"needs {readers} CPU(s) for its readers besides the writers', this process may use"
                          f" {len(slots)} (a cpuset or CPU affinity restricts it)")
                plan.skipped.append({"case": f"{writers} writer(s) on node {x} + {readers} background reader(s)"
                                             f" at {rate}", "kind": "loaded", "reason": reason})
                continue
            background = tuple(f"{n.id}.{c}.r.{n.id if memory_allowed(host, n) else x}@{rate}" for n, c in slots[:readers])
            plan.add(planned("loaded", threads, background,
                          purpose=f"local writers under {readers} background reader(s) at {rate}"))


def stream_counts(most_streams: int, most: int = MOST_STREAM_COUNTS) -> list:
    """How many unthrottled streams to put beside the chase: every count up to ``most``, else ``most`` spread.

    Beyond ``most`` the counts are spread geometrically from 1 to ``most_streams``
    (memory saturates after a few streams, so the low counts matter most), and
    the widest gaps are split until there are ``most``.
    """
    if most_streams <= most:
        return list(range(1, most_streams + 1))
    counts = sorted({round(most_streams ** (i / (most - 1))) for i in range(most)})
    while len(counts) < most:
        gap, at = max((b - a, i) for i, (a, b) in enumerate(zip(counts, counts[1:])))
        counts.insert(at + 1, counts[at] + gap // 2)
    return counts


def _rate_count(streams: int) -> int:
    """Paced rates per mix: 6 beside one stream, 7 beside up to 3, 8 beyond."""
    return 6 if streams <= 1 else 7 if streams <= 3 else 8


def _two_digits(value: float) -> float:
    return float(f"{value:.2g}")


def paced_rates(streams: int, single_GBps: float) -> list:
    """Per-stream rates (GB/s, two significant digits) whose totals rise from 10% to 120% of ``streams`` x
    ``single_GBps``: from a light load to beyond what the unthrottled streams move together."""
    count = _rate_count(streams)
    low, high = PACED_FRACTIONS
    rates = []
    for i in range(count):
        rate = _two_digits((low + (high - low) * i / (count - 1)) * single_GBps)
        if rate > 0 and rate not in rates:
            rates.append(rate)
    return rates


def _rate_label(rate_GBps: float) -> str:
    return format_bandwidth(rate_GBps).replace(" ", "")


def _stream_cores(plan: SuitePlan, home) -> list:
    """Cores of the home node for streams beside the chase on its first core: all others but that core's hardware
    threads."""
    first = first_core(plan.host, home)
    beside = beside_first(plan.host, home)
    cores = [c for c in beside if plan.host.may_use(home.cpus[c])]
    left_out = [f"core {c} (CPU {home.cpus[c]})" for c in range(len(home.cpus)) if c != first and c not in beside]
    if left_out:
        plan.notes.append(f"no stream beside the chase on node {home.id} runs on {', '.join(left_out)}: a hardware"
                          f" thread of the chase's core (CPU {home.cpus[first]}), which would measure the sharing of the"
                          " core rather than the load on the memory")
    _note_barred(plan, home, "the streams beside the chase")
    return cores


def _note_barred(plan: SuitePlan, home, what: str) -> None:
    """Say once per use which CPUs of the home node this process may not use, and so are left out of ``what``."""
    barred = [cpu for cpu in home.cpus if not plan.host.may_use(cpu)]
    if barred:
        plan.notes.append(f"{what} leave out CPU(s) {format_cpulist(barred)} of node {home.id}: not allowed to this"
                          " process (a cpuset or CPU affinity restricts it), so the most loaded points are those of"
                          " the CPUs it may use")


def _loaded_latency(plan: SuitePlan, home, stream_GBps: dict | None) -> None:
    """The chase beside unthrottled and paced local streams of each mix, on the home node."""
    x = home.id
    chase = f"{x}.{first_core(plan.host, home)}.l.{x}"
    plan.add(planned("single", (chase,), purpose="one thread alone: the reference for every other case"),
             group="loaded-latency")
    cores = _stream_cores(plan, home)
    most = len(cores)
    if most < 1:
        plan.skipped.append({"case": f"{chase} beside streams", "kind": "loaded-latency",
                             "reason": f"node {x} has no CPU but the chase's core: no room for a stream beside it"})
        return
    for op in MIXES:
        for streams in stream_counts(most):
            background = tuple(f"{x}.{c}.{op}.{x}" for c in cores[:streams])
            plan.add(planned("loaded-latency", (chase,), background,
                          purpose=f"latency chase beside {streams} unthrottled {op} stream(s) of local memory"))
        single = (stream_GBps or {}).get(op)
        if not single:
            plan.skipped.append({"case": f"{chase} beside {most} paced {op} streams", "kind": "loaded-latency",
                                 "reason": f"no single-thread {op} bandwidth measured to pace the streams against"})
            continue
        for rate in paced_rates(most, single):
            background = tuple(f"{x}.{c}.{op}.{x}@{_rate_label(rate)}" for c in cores)
            plan.add(planned("loaded-latency", (chase,), background,
                          purpose=f"latency chase beside {most} {op} stream(s) paced to {rate * most:.3g} GB/s"
                                  " in all"))


def _peak(plan: SuitePlan, home) -> None:
    """Every CPU of the home node streaming its local memory in the foreground."""
    x = home.id
    cores = allowed_cores(plan.host, home)
    if not cores:
        plan.skipped.append({"case": f"every CPU of node {x} streaming local memory", "kind": "peak",
                             "reason": f"this process may use none of node {x}'s CPUs ({format_cpulist(home.cpus)};"
                                       f" allowed CPUs: {format_cpulist(plan.host.allowed_cpus)}; a cpuset or CPU"
                                       " affinity restricts it)"})
        return
    _note_barred(plan, home, "the peak cases")
    for op in ("r", "w", "t"):
        threads = tuple(f"{x}.{c}.{op}.{x}" for c in cores)
        plan.add(planned("peak", threads, purpose=f"every CPU of node {x} this process may use streaming ({op})"
                                                  " local memory: the peak"), group="peak")


def _remote_peaks(plan: SuitePlan, home) -> None:
    """Every CPU of the home node reading another node's memory, for each distance from it that a node with memory
    lies at (the first such node whose memory this process may use, else the first, its case skipped): the ways to
    the other nodes at their peak, where the links' bandwidth decides, as MLC's bandwidth matrix measures it (reads:
    the data one way, nothing of the memory's write curve).  They do not size the suite's arrays (:mod:`.sizing`):
    on a node with less memory than the home node they are skipped."""
    x = home.id
    cores = allowed_cores(plan.host, home)
    if len(cores) < 2:
        return
    targets: dict = {}   # distance -> the first node with memory at it that this process may use, else the first
    for n in sorted(plan.host.nodes, key=lambda n: not memory_allowed(plan.host, n)):
        if n.has_memory and n.id != x:
            targets.setdefault(plan.host.distance(x, n.id), n)
    for distance, node in sorted(targets.items(), key=lambda item: (item[0] is None, item[0] or 0, item[1].id)):
        threads = tuple(f"{x}.{c}.r.{node.id}" for c in cores)
        at = f" (distance {distance})" if distance is not None else ""
        plan.add(planned("remote-peak", threads, purpose=f"every CPU of node {x} this process may use reading node"
                                                  f" {node.id}'s memory{at}: the way there at its peak"),
                 group="remote-peak")


def suite_plan(host: Host, stream_GBps: dict | None = None, size_bytes: int | None = None) -> SuitePlan:
    """Every case of the suite for ``host``, planned without running anything.

    ``stream_GBps`` maps each streaming op (r, w, t) to one unthrottled thread's
    bandwidth (what :func:`~simnuma.bench.estimate.probe_host` measures); the
    paced loaded-latency cases are planned against it, and skipped without it.
    ``size_bytes`` is the size of each array (default: :func:`suite_array_size`).
    """
    return _plan(host, stream_GBps, size_bytes or suite_array_size(host).size_bytes)


def _plan(host: Host, stream_GBps: dict | None, size_bytes: int | None) -> SuitePlan:
    """The plan at ``size_bytes`` per array (None: every case that has the CPUs, whatever its memory)."""
    plan = SuitePlan(host, size_bytes)
    home = _home_node(host)
    others = [n for n in host.nodes if n.cpus and n.has_memory and n.id != home.id]
    # the nearest whose memory and a CPU this process may use, else whose memory, else the nearest (its cases
    # skipped with the reason)
    allowed = [n for n in others if memory_allowed(host, n)]
    nearest = (_nearest(host, home, [n for n in allowed if allowed_cores(host, n)]) or _nearest(host, home, allowed)
               or _nearest(host, home, others))
    plan.notes += [note for note in (home_note(host, home), quota_note(host)) if note]
    _singles(host, plan)
    if len(home.cpus) >= 2:
        _same_node_pairs(plan, home, nearest)
    else:
        plan.skipped.append({"case": f"{home.id}.{first_core(host, home)}.w.{home.id} {home.id}.1.w.{home.id}",
                             "kind": "same-node",
                             "reason": f"node {home.id} has only one CPU"})
    if nearest is not None:
        _crossfire_pairs(host, plan, home, nearest)
    _loaded_writers(host, plan, home)
    _loaded_latency(plan, home, stream_GBps)
    _peak(plan, home)
    _remote_peaks(plan, home)
    return plan


def quota_note(host: Host) -> str:
    """What a control group's CPU quota below the host's CPUs does to the suite ("" where there is none)."""
    quota = host.cpu_quota
    if quota is None or quota.cpus >= host.cpu_count:
        return ""
    return (f"this process's CPU quota is {quota.text()}: the cases of more threads than that are skipped (they would"
            " measure the quota, not the machine); run the suite where no quota applies to measure them")


def suite_cases(host: Host, stream_GBps: dict | None = None, size_bytes: int | None = None) -> tuple:
    """``(cases, skipped)`` for ``host``; skipped entries say why a case does not fit (see :func:`suite_plan`)."""
    plan = suite_plan(host, stream_GBps, size_bytes)
    return plan.cases, plan.skipped
