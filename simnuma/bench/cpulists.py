"""Lists of CPUs and nodes as sysfs writes them (``0-3,8``), and the CPUs and memory nodes this process may use.

A cpuset (a container, a systemd slice), ``taskset``, ``numactl`` or a batch
scheduler can confine a process to fewer CPUs and memory nodes than sysfs
lists: :func:`allowed_cpus` is the process's affinity (``sched_getaffinity``,
``Cpus_allowed``), :func:`allowed_mems` its cpuset's memory nodes
(``Mems_allowed_list`` of ``/proc/self/status``).
"""
from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["parse_cpulist", "format_cpulist", "allowed_cpus", "allowed_mems"]


def parse_cpulist(text: str) -> tuple:
    """``"0-3,8,10-11"`` -> (0, 1, 2, 3, 8, 10, 11); ValueError when malformed."""
    cpus: list[int] = []
    for part in text.replace(" ", ",").split(","):
        part = part.strip()
        if not part:
            continue
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise ValueError(f"malformed cpulist entry {part!r}")
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) is not None else first
        if last < first:
            raise ValueError(f"malformed cpulist range {part!r}")
        cpus.extend(range(first, last + 1))
    return tuple(cpus)


def allowed_cpus() -> frozenset | None:
    try:
        return frozenset(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def allowed_mems() -> frozenset | None:
    try:
        text = Path("/proc/self/status").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    m = re.search(r"^Mems_allowed_list:\s*(\S*)\s*$", text or "", re.MULTILINE)
    try:
        return frozenset(parse_cpulist(m.group(1))) if m else None
    except ValueError:
        return None


def format_cpulist(ids) -> str:
    """(0, 1, 2, 3, 8) -> ``"0-3,8"`` (``"none"`` when empty), as the native benchmark writes lists of ids."""
    ids = sorted(ids)
    parts: list[str] = []
    start = None
    for i, value in enumerate(ids):
        if start is None:
            start = value
        if i + 1 == len(ids) or ids[i + 1] != value + 1:
            parts.append(str(start) if start == value else f"{start}-{value}")
            start = None
    return ",".join(parts) or "none"
