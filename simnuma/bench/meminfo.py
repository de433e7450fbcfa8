"""What a node's ``meminfo`` (``nodeN/meminfo``, or ``/proc/meminfo``) says of its memory, as the benchmark reads it.

A node's free memory, for the check that a case's arrays fit, is what it can give an array: its ``MemFree``
and the caches the kernel reclaims first for an allocation bound to the node (``RECLAIMABLE``), as
``stride.c``'s ``available_bytes`` counts it, so that the two refuse alike.
"""
from __future__ import annotations

import re

__all__ = ["RECLAIMABLE", "available", "meminfo_bytes"]


def meminfo_bytes(text: str | None, key: str) -> int | None:
    """The bytes of ``key`` in a meminfo's ``text`` (given in kB), or None where it has no such line."""
    if text is None:
        return None
    m = re.search(rf"{re.escape(key)}:\s*(\d+)\s*kB", text)
    return int(m.group(1)) * 1024 if m else None


RECLAIMABLE = ("Inactive(file)", "KReclaimable")   # what the kernel reclaims first for a bound allocation


def available(text: str | None, where: str) -> tuple[int | None, str]:
    """``(bytes, source)``: a meminfo's free memory and the page cache and kernel caches the kernel reclaims
    first (``RECLAIMABLE``) where it has them, as binding an array to the node reclaims them before it fails;
    ``source`` says which were counted, and where (as the benchmark's own message does)."""
    free = meminfo_bytes(text, "MemFree")
    counted = ["MemFree"]
    for key in RECLAIMABLE:
        more = meminfo_bytes(text, key)
        if free is not None and more:
            free += more
            counted.append(key)
    return free, f"{' + '.join(counted)} in {where}"
