"""Discovering the NUMA layout of a machine from sysfs, and placing threads on it.

Everything comes from files, so a fixture tree can stand in for ``/sys``:

- nodes: the ``nodeN`` directories of ``ROOT/devices/system/node`` (none: one
  node 0 holding the CPUs of ``ROOT/devices/system/cpu/online``);
- CPUs of a node: ``nodeN/cpulist``; core C of node N is the C-th CPU listed;
- memory: ``MemTotal`` of ``nodeN/meminfo``, and what a node can give an array: its ``MemFree`` and the
  caches the kernel reclaims first, ``Inactive(file)`` and ``KReclaimable`` (on a one-node host read from
  the real ``/sys``, the larger of that and the same of ``/proc/meminfo``);
- distances: ``nodeN/distance`` (the firmware's SLIT, 10 = local);
- the firmware's HMAT, where the kernel exposes it: ``nodeN/access0/initiators/{read,write}_{latency,
  bandwidth}`` (ns and MB/s from the nearest initiators, the ``nodeX`` links beside them);
- caches: ``ROOT/devices/system/cpu/cpuX/cache/index*/{level,type,size}`` of the
  first CPU; the last-level cache (one instance: sysfs gives the size of the
  instance the CPU shares with those of its ``shared_cpu_list``) sets the
  default array size;
- hardware threads sharing a core: ``ROOT/devices/system/cpu/cpuX/topology/
  thread_siblings_list``, where readable;
- transparent huge pages (the mode and the huge page size) and the cpufreq
  governor, where readable;
- the CPU model and the hypervisor flag from ``/proc/cpuinfo``; for any other
  ROOT (a copy of another machine's sysfs) from ``ROOT/cpuinfo``, a copy of
  that machine's ``/proc/cpuinfo``, where there is one (the model is
  ``unknown`` without it, and so is the kernel);
- on the real ``/sys`` only, the CPUs this process may run on (its affinity:
  a cpuset, ``taskset``, ``numactl`` or a batch scheduler restricts it) and the
  memory nodes its cpuset allows (``Mems_allowed_list`` of ``/proc/self/status``).

:func:`resolve_threads` applies the same rules, with the same messages, as the
native benchmark (``stride.c``), so bad requests fail before anything runs.
"""
from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import BenchError, SpecError
from ..tables import count
from ..workload import OPS, ThreadSpec, parse_spec
from .cpulists import allowed_cpus, allowed_mems, format_cpulist, parse_cpulist
from .quota import CpuQuota, cpu_quota
from .meminfo import available, meminfo_bytes

__all__ = [
    "HostNode",
    "Cache",
    "Host",
    "ResolvedThread",
    "discover_host",
    "parse_cpulist",
    "resolve_threads",
    "array_count",
    "default_size_bytes",
    "format_bytes",
    "format_cpulist",
    "MIN_DEFAULT_BYTES",
]

MIN_DEFAULT_BYTES = 64 << 20
DEFAULT_SIZE_ALIGN = 2 << 20  # the default size is whole 2 MiB: whole huge pages on x86
_NODE_DIR = re.compile(r"^node(\d{1,6})$")


@dataclass(frozen=True)
class HostNode:
    """One NUMA node: its CPUs in sysfs order and its memory (None when unknown)."""

    id: int
    cpus: tuple
    memory_total_bytes: int | None
    memory_free_bytes: int | None
    free_source: str = ""

    @property
    def has_memory(self) -> bool:
        return self.memory_total_bytes != 0


@dataclass(frozen=True)
class HmatEntry:
    """The HMAT's access class 0 of one memory node: its nearest initiators and what they see (None: not given)."""

    target: int
    initiators: tuple
    read_latency_ns: int | None
    write_latency_ns: int | None
    read_bandwidth_MBps: int | None
    write_bandwidth_MBps: int | None

    def to_dict(self) -> dict:
        return {"target": self.target, "initiators": list(self.initiators), "read_latency_ns": self.read_latency_ns,
                "write_latency_ns": self.write_latency_ns, "read_bandwidth_MBps": self.read_bandwidth_MBps,
                "write_bandwidth_MBps": self.write_bandwidth_MBps}


@dataclass(frozen=True)
class Cache:
    level: int
    type: str
    size_bytes: int


@dataclass(frozen=True)
class Host:
    """The machine as sysfs describes it."""

    sysfs_root: str
    nodes: tuple
    distances: tuple | None  # rows in node order, None when unreadable
    caches: tuple
    llc_bytes: int
    transparent_hugepage: str | None
    cpufreq_governor: str | None
    cpu_model: str
    kernel: str
    numa_visible: bool
    hypervisor: bool = False
    huge_page_bytes: int | None = None  # transparent huge page size (hpage_pmd_size), None when unknown
    thread_siblings: tuple = ()         # groups of CPUs that are hardware threads of one core (where sysfs says)
    hmat: tuple = ()                    # HmatEntry per memory node whose HMAT access class 0 sysfs exposes
    allowed_cpus: frozenset | None = None   # CPUs this process may run on (None: not known, not checked)
    allowed_mems: frozenset | None = None   # memory nodes its cpuset allows (None: not known, not checked)
    distance_problem: str = ""          # why the distances could not be read, where a node's file is wrong
    cpu_quota: CpuQuota | None = None   # a control group's cap on this process's CPU time (None: none known)

    @property
    def node_ids(self) -> tuple:
        return tuple(n.id for n in self.nodes)

    @property
    def cpu_count(self) -> int:
        return sum(len(n.cpus) for n in self.nodes)

    def node(self, node_id: int) -> HostNode | None:
        for n in self.nodes:
            if n.id == node_id:
                return n
        return None

    def may_use(self, cpu: int) -> bool:
        """Whether this process may run on ``cpu`` (True where its affinity is not known)."""
        return self.allowed_cpus is None or cpu in self.allowed_cpus

    def siblings(self, cpu: int) -> tuple:
        """The other hardware threads of ``cpu``'s core (empty when none, or unknown)."""
        for group in self.thread_siblings:
            if cpu in group:
                return tuple(c for c in group if c != cpu)
        return ()

    def distance(self, a: int, b: int) -> int | None:
        if self.distances is None:
            return None
        ids = self.node_ids
        return self.distances[ids.index(a)][ids.index(b)]

    def to_dict(self) -> dict:
        return {
            "cpu_model": self.cpu_model,
            "kernel": self.kernel,
            "sysfs": self.sysfs_root,
            "numa_visible": self.numa_visible,
            "cpus": self.cpu_count,
            "nodes": [{"id": n.id, "cpus": list(n.cpus), "memory_bytes": n.memory_total_bytes,
                       "free_bytes": n.memory_free_bytes} for n in self.nodes],
            "distances": [list(r) for r in self.distances] if self.distances is not None else None,
            "hmat": [h.to_dict() for h in self.hmat],
            "cpu_quota": {"cpus": self.cpu_quota.cpus, "source": self.cpu_quota.source} if self.cpu_quota else None,
            "caches": [{"level": c.level, "type": c.type, "size_bytes": c.size_bytes} for c in self.caches],
            "llc_bytes": self.llc_bytes,
            "transparent_hugepage": self.transparent_hugepage,
            "huge_page_bytes": self.huge_page_bytes,
            "thread_siblings": [list(g) for g in self.thread_siblings],
            "cpufreq_governor": self.cpufreq_governor,
        }


@dataclass(frozen=True)
class ResolvedThread:
    """A thread spec placed on a CPU of the host."""

    spec: ThreadSpec
    role: str  # "foreground" or "background"
    cpu: int

    @property
    def label(self) -> str:
        return self.spec.label


# ------------------------------------------------------------------ reading

def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").rstrip()
    except OSError:
        return None


def _node_ids(root: Path) -> list:
    folder = root / "devices/system/node"
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(int(m.group(1)) for m in map(_NODE_DIR.match, names) if m)


def _read_node(root: Path, node_id: int) -> HostNode:
    folder = root / f"devices/system/node/node{node_id}"
    text = _read(folder / "cpulist")
    try:
        cpus = parse_cpulist(text) if text is not None else ()
    except ValueError:
        raise BenchError(f"malformed cpulist in {folder / 'cpulist'}: {text!r}") from None
    meminfo = _read(folder / "meminfo")
    return HostNode(node_id, cpus, meminfo_bytes(meminfo, "MemTotal"), *available(meminfo, str(folder / "meminfo")))


def _read_distances(root: Path, ids: list) -> tuple[tuple | None, str]:
    """``(rows, "")``, or ``(None, what is wrong)`` where a node's distance file is missing or malformed."""
    rows = []
    for node_id in ids:
        path = root / f"devices/system/node/node{node_id}/distance"
        text = _read(path)
        if text is None:
            return None, f"{path}: missing or unreadable"
        try:
            row = tuple(int(x) for x in text.split())
        except ValueError:
            return None, f"{path}: expected integers, got {text.strip()!r}"
        if len(row) != len(ids):
            return None, f"{path}: expected {len(ids)} distances (one per node), got {len(row)}"
        rows.append(row)
    return tuple(rows), ""


def _read_hmat(root: Path, ids: list) -> tuple:
    """HmatEntry of each node whose ``access0/initiators`` folder sysfs has (the kernel's HMAT report)."""
    out = []
    for node_id in ids:
        folder = root / f"devices/system/node/node{node_id}/access0/initiators"
        if not folder.is_dir():
            continue
        values = {}
        for name in ("read_latency", "write_latency", "read_bandwidth", "write_bandwidth"):
            text = _read(folder / name)
            values[name] = int(text) if text is not None and text.strip().isdigit() else None
        initiators = tuple(sorted(int(p.name[4:]) for p in folder.iterdir() if re.fullmatch(r"node\d+", p.name)))
        out.append(HmatEntry(node_id, initiators, values["read_latency"], values["write_latency"],
                             values["read_bandwidth"], values["write_bandwidth"]))
    return tuple(out)


def _single_node(root: Path) -> HostNode:
    text = _read(root / "devices/system/cpu/online")
    try:
        cpus = parse_cpulist(text) if text is not None else ()
    except ValueError:
        cpus = ()
    if not cpus:
        cpus = tuple(range(os.cpu_count() or 1))
    return HostNode(0, cpus, None, None, "")


def _merge_proc_meminfo(node: HostNode) -> HostNode:
    """One node on the real /sys: its memory is the machine's (see the module docstring)."""
    text = _read(Path("/proc/meminfo"))
    total = meminfo_bytes(text, "MemTotal")
    free, proc_source = available(text, "/proc/meminfo")
    memory_total = max(x for x in (node.memory_total_bytes, total, -1) if x is not None)
    memory_free, source = node.memory_free_bytes, node.free_source
    if free is not None and (memory_free is None or free > memory_free):
        memory_free, source = free, proc_source
    return HostNode(node.id, node.cpus, memory_total if memory_total >= 0 else None, memory_free, source)


def _parse_cache_size(text: str) -> int:
    m = re.fullmatch(r"(\d+)\s*([KMG]?)", text.strip())
    if not m:
        return 0
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def _read_caches(root: Path, cpu: int) -> tuple:
    caches = []
    for index in range(32):
        folder = root / f"devices/system/cpu/cpu{cpu}/cache/index{index}"
        level, size = _read(folder / "level"), _read(folder / "size")
        if level is None or size is None or not level.strip().isdigit():
            continue   # a cache sysfs does not describe whole (or a tree not as the kernel writes it)
        caches.append(Cache(int(level), _read(folder / "type") or "Unknown", _parse_cache_size(size)))
    return tuple(caches)


def _llc_bytes(caches: tuple) -> int:
    data = [c for c in caches if c.type != "Instruction"]
    if not data:
        return 0
    top = max(c.level for c in data)
    return max(c.size_bytes for c in data if c.level == top)


def _cpuinfo(root: Path, real: bool) -> str:
    """This machine's ``/proc/cpuinfo``; for a copy of another machine's sysfs, ``ROOT/cpuinfo`` if the copy
    has one (a copy of that machine's ``/proc/cpuinfo``), else nothing: this machine's CPU is not that one's."""
    return _read(Path("/proc/cpuinfo") if real else root / "cpuinfo") or ""


def _cpu_model(cpuinfo: str) -> str:
    for key in ("model name", "Model", "cpu model", "Hardware", "cpu"):
        m = re.search(rf"^{re.escape(key)}\s*:\s*(.*)$", cpuinfo, re.MULTILINE)
        if m and m.group(1).strip():
            return m.group(1).strip()
    return "unknown"


def _thp_mode(root: Path) -> str | None:
    text = _read(root / "kernel/mm/transparent_hugepage/enabled")
    m = re.search(r"\[(\w+)\]", text or "")
    return m.group(1) if m else None


def _huge_page_bytes(root: Path) -> int | None:
    text = _read(root / "kernel/mm/transparent_hugepage/hpage_pmd_size")
    return int(text) if text and text.isdigit() and int(text) > 0 else None


def _thread_siblings(root: Path, nodes) -> tuple:
    """Groups of two or more CPUs that share a core, from each CPU's ``topology/thread_siblings_list``."""
    groups = set()
    for cpu in (c for n in nodes for c in n.cpus):
        text = _read(root / f"devices/system/cpu/cpu{cpu}/topology/thread_siblings_list")
        try:
            group = parse_cpulist(text) if text else ()
        except ValueError:
            continue
        if len(group) > 1:
            groups.add(tuple(sorted(group)))
    return tuple(sorted(groups))


def discover_host(sysfs_root="/sys") -> Host:
    """Read the machine's nodes, CPUs, memory, distances and caches from ``sysfs_root``."""
    root = Path(sysfs_root)
    real = root.resolve() == Path("/sys").resolve()   # a fixture tree's CPUs and nodes need not be this kernel's
    if real:
        sysfs_root = "/sys"   # however it was written (/sys/, //sys, a link to it): this machine's own
    if not (root / "devices/system").is_dir():
        raise BenchError(f"{root}: not a sysfs tree (no devices/system); give the folder sysfs is mounted on,"
                         " e.g. /sys")
    ids = _node_ids(root)
    if ids:
        nodes = [_read_node(root, i) for i in ids]
        distances, distance_problem = _read_distances(root, ids)
        hmat = _read_hmat(root, ids)
    else:
        nodes, distances, hmat, distance_problem = [_single_node(root)], None, (), ""
    if len(nodes) == 1 and real:
        nodes = [_merge_proc_meminfo(nodes[0])]
    first_cpu = next((n.cpus[0] for n in nodes if n.cpus), 0)
    caches = _read_caches(root, first_cpu)
    governor = None
    for n in nodes:
        if n.cpus:
            governor = _read(root / f"devices/system/cpu/cpu{n.cpus[0]}/cpufreq/scaling_governor") or None
            break
    cpuinfo = _cpuinfo(root, real)
    return Host(
        sysfs_root=str(sysfs_root),
        nodes=tuple(nodes),
        distances=distances,
        distance_problem=distance_problem,
        caches=caches,
        llc_bytes=_llc_bytes(caches),
        transparent_hugepage=_thp_mode(root),
        cpufreq_governor=governor,
        cpu_model=_cpu_model(cpuinfo),
        kernel=f"{platform.system()} {platform.release()}" if real else "unknown",
        numa_visible=bool(ids),
        hypervisor=bool(re.search(r"^flags\s*:.*\bhypervisor\b", cpuinfo, re.MULTILINE)),
        huge_page_bytes=_huge_page_bytes(root),
        thread_siblings=_thread_siblings(root, nodes),
        hmat=hmat,
        allowed_cpus=allowed_cpus() if real else None,
        allowed_mems=allowed_mems() if real else None,
        cpu_quota=cpu_quota() if real else None,
    )


# ------------------------------------------------------------------ placing

def default_size_bytes(host: Host) -> int:
    """4 x the last-level cache, at least 64 MiB, in whole 2 MiB (as the native benchmark does).

    One thread's array four times the cache instance it can use: caching moves
    its figure by a quarter at most.  A suite limits this by the nodes' memory
    and a cap (:func:`simnuma.bench.plan.suite_array_size`).
    """
    size = max(MIN_DEFAULT_BYTES, 4 * host.llc_bytes)
    return (size + DEFAULT_SIZE_ALIGN - 1) // DEFAULT_SIZE_ALIGN * DEFAULT_SIZE_ALIGN


def array_count(op: str) -> int:
    """Arrays per thread: three for the triad, one otherwise."""
    return 3 if op == "t" else 1


def format_bytes(nbytes: int) -> str:
    """``3.1 GiB`` style, exactly as the native benchmark prints sizes."""
    value, unit = float(nbytes), 0
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
    while value >= 1024 and unit < 5:
        value /= 1024
        unit += 1
    if unit == 0 or value == int(value):
        return f"{int(value)} {units[unit]}"
    return f"{value:.1f} {units[unit]}"


def _node_list(host: Host, keep=lambda n: True) -> str:
    return ", ".join(str(n.id) for n in host.nodes if keep(n))


def _place(host: Host, spec: ThreadSpec) -> int:
    """The CPU of one spec; SpecError when the node, core or memory node cannot be used."""
    label = spec.label
    node = host.node(spec.node)
    if node is None:
        raise SpecError(f"'{label}': no node {spec.node} on this host (nodes {_node_list(host)})")
    if not node.cpus:
        raise SpecError(f"'{label}': node {spec.node} has no CPUs; nodes with CPUs: "
                        f"{_node_list(host, lambda n: bool(n.cpus))}")
    if spec.core >= len(node.cpus):
        raise SpecError(f"'{label}': node {spec.node} has {len(node.cpus)} CPUs (cores 0..{len(node.cpus) - 1}),"
                        f" no core {spec.core}")
    cpu = node.cpus[spec.core]
    if not host.may_use(cpu):
        cores = format_cpulist(c for c, n in enumerate(node.cpus) if host.may_use(n))
        raise SpecError(f"'{label}': CPU {cpu} (node {spec.node} core {spec.core}) is not allowed to this process"
                        f" (allowed CPUs: {format_cpulist(host.allowed_cpus)}; a cpuset or CPU affinity restricts"
                        f" it); " + (f"allowed cores of this node: {cores}" if cores != "none"
                                     else "no core of this node is allowed"))
    memory = host.node(spec.mem_node)
    if memory is None:
        raise SpecError(f"'{label}': no memory node {spec.mem_node} on this host (nodes {_node_list(host)})")
    if not memory.has_memory:
        raise SpecError(f"'{label}': node {spec.mem_node} has no memory; nodes with memory: "
                        f"{_node_list(host, lambda n: n.has_memory)}")
    if host.allowed_mems is not None and spec.mem_node not in host.allowed_mems:
        raise SpecError(f"'{label}': node {spec.mem_node} is not among the memory nodes this process may use"
                        f" (Mems_allowed: {format_cpulist(host.allowed_mems)}; a cpuset restricts it)")
    return cpu


def _check_memory(host: Host, specs: list, size_bytes: int) -> None:
    for node in host.nodes:
        need = sum(size_bytes * array_count(s.op) for s in specs if s.mem_node == node.id)
        if need and node.memory_free_bytes is not None and need > node.memory_free_bytes:
            raise BenchError(f"arrays on node {node.id} need {format_bytes(need)} but node {node.id} has "
                             f"{format_bytes(node.memory_free_bytes)} free ({node.free_source})")


def resolve_threads(host: Host, threads, background=(), size_bytes: int | None = None) -> list:
    """Place foreground and background specs on CPUs of ``host``, as the native benchmark will.

    Raises SpecError for a malformed spec, a missing node or core, a memoryless
    memory node, two threads on one CPU or more threads than CPUs, and
    BenchError when the arrays do not fit in a node's free memory.
    """
    roles = [(parse_spec(t, OPS), "foreground") for t in threads]
    roles += [(parse_spec(t, OPS), "background") for t in background]
    if not any(role == "foreground" for _, role in roles):
        raise SpecError("no foreground thread given; e.g. 0.0.r.0")
    if len(roles) > host.cpu_count:
        raise SpecError(f"{count(len(roles), 'thread')} but this host has only {count(host.cpu_count, 'CPU')}")
    placed: list[ResolvedThread] = []
    used: dict[int, str] = {}   # CPU -> the thread on it
    for spec, role in roles:
        cpu = _place(host, spec)
        if cpu in used:
            raise SpecError(f"'{spec.label}': CPU {cpu} (node {spec.node} core {spec.core}) already runs"
                            f" '{used[cpu]}'; one thread per core")
        used[cpu] = spec.label
        placed.append(ResolvedThread(spec, role, cpu))
    size = size_bytes if size_bytes is not None else default_size_bytes(host)
    _check_memory(host, [p.spec for p in placed], _round_to_pages(size))
    return placed


def _round_to_pages(size_bytes: int) -> int:
    page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
    return (size_bytes + page - 1) // page * page
