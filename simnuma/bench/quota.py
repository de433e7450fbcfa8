"""The CPU time this process may use, where a control group caps it (a container's ``--cpus``, a Kubernetes CPU
limit, a systemd ``CPUQuota=``).

A quota does not show in the CPUs a process may run on: under ``docker --cpus=4`` on a 64-CPU node the affinity
still lists every CPU, and 64 threads run, each a sixteenth of the time.  A case with more threads than the
quota then measures the quota, not the memory.  :func:`cpu_quota` reads it: the smallest of the quotas of the
process's control group and of every group above it, in cgroup v2 (``cpu.max``: quota and period in
microseconds, or ``max``) and in v1's ``cpu`` controller (``cpu.cfs_quota_us``, -1 for none, over
``cpu.cfs_period_us``), each found where ``/proc/self/mountinfo`` says its hierarchy is mounted.

Abstracts away: the burst a quota may allow (``cpu.max.burst``), and CPU shares or weights, which divide the
CPUs only among processes that all want them.
"""
from __future__ import annotations

from pathlib import Path, PurePosixPath

__all__ = ["CpuQuota", "cpu_quota"]


class CpuQuota:
    """A cap on CPU time: ``cpus`` (quota over period) and where it is set (``source``, the file and its text)."""

    def __init__(self, cpus: float, source: str):
        self.cpus = cpus
        self.source = source

    def __repr__(self) -> str:
        return f"CpuQuota({self.cpus:g}, {self.source!r})"

    def text(self) -> str:
        return f"{self.cpus:g} CPUs ({self.source})"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def _groups(text: str) -> dict:
    """``{controller: path}`` from ``/proc/self/cgroup`` (``hierarchy:controllers:path``); cgroup v2's under ``""``."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(",") if parts[1] else [""]:
            out[controller] = parts[2]
    return out


def _mounts(text: str) -> dict:
    """``{"cpu" or "": (root, mount point)}`` of the cgroup v1 hierarchy with the cpu controller and of cgroup v2,
    from ``/proc/self/mountinfo``."""
    out: dict[str, tuple[str, str]] = {}
    for line in text.splitlines():
        fields, _, tail = line.partition(" - ")
        head, rest = fields.split(), tail.split()
        if len(head) < 5 or len(rest) < 3:
            continue
        if rest[0] == "cgroup2":
            out.setdefault("", (head[3], head[4]))
        elif rest[0] == "cgroup" and "cpu" in rest[2].split(","):
            out.setdefault("cpu", (head[3], head[4]))
    return out


def _limit(folder: Path, v2: bool) -> float | None:
    """The CPUs the group of ``folder`` may use, or None where it sets no quota."""
    if v2:
        fields = _read(folder / "cpu.max").split()
        if len(fields) != 2 or fields[0] == "max":
            return None
        quota, period = fields
    else:
        quota, period = _read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us")
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    return q / p if q > 0 and p > 0 else None


def cpu_quota(proc: str | Path = "/proc", root: str | Path = "/") -> CpuQuota | None:
    """The smallest CPU quota on this process's control group and those above it, or None where none is set or
    it cannot be read.  ``proc`` and ``root`` (under which the mount points are) are for a copy of them."""
    proc, root = Path(proc), Path(root)
    groups = _groups(_read(proc / "self/cgroup"))
    best: CpuQuota | None = None
    for key, (mount_root, mount_point) in _mounts(_read(proc / "self/mountinfo")).items():
        path = groups.get(key)
        if path is None:
            continue
        try:
            inside = PurePosixPath(path).relative_to(mount_root)
        except ValueError:
            inside = PurePosixPath(".")   # a group outside the mount's view (a cgroup namespace): its root
        top = root / mount_point.lstrip("/")
        folder = top / inside
        while True:
            cpus = _limit(folder, key == "")
            if cpus is not None and (best is None or cpus < best.cpus):
                name = "cpu.max" if key == "" else "cpu.cfs_quota_us"
                shown = folder.relative_to(root)
                best = CpuQuota(cpus, f"/{shown}/{name}")
            if folder == top or top not in folder.parents:
                break
            folder = folder.parent
    return best
