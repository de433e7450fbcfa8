"""The array size of every case of a suite (:func:`suite_array_size`): the benchmark's default, unless the largest
case planned on a node would take more than a share of its memory (the rule: :mod:`simnuma.bench.plan`)."""
from __future__ import annotations

from dataclasses import dataclass

from .host import DEFAULT_SIZE_ALIGN, MIN_DEFAULT_BYTES, Host, default_size_bytes, format_bytes

__all__ = ["ArraySize", "suite_array_size", "MEMORY_SHARE", "MOST_ARRAY_BYTES"]

MEMORY_SHARE = 0.5                 # the arrays of the largest case on a node take at most this share of its memory
MOST_ARRAY_BYTES = 1 << 30         # no array of a suite is larger: a chase's pass over 1 GiB is 16.8 M loads


@dataclass(frozen=True)
class ArraySize:
    """The suite's array size: the benchmark's default, or less where a node's memory or the cap sets it."""

    size_bytes: int
    wanted_bytes: int   # the benchmark's default for the host (4 x its last-level cache, at least 64 MiB)
    llc_bytes: int      # the last-level cache the default was derived from
    limit: str = ""     # why ``size_bytes`` is below ``wanted_bytes`` ('' when it is not)

    @property
    def limited(self) -> bool:
        return self.size_bytes < self.wanted_bytes

    @property
    def wanted_text(self) -> str:
        """``4 x the 96 MiB last-level cache`` or ``the 64 MiB minimum``: where the default comes from."""
        if 4 * self.llc_bytes > MIN_DEFAULT_BYTES:
            return f"4 x the {format_bytes(self.llc_bytes)} last-level cache"
        return f"the {format_bytes(MIN_DEFAULT_BYTES)} minimum"

    @property
    def rule(self) -> str:
        """How the size was chosen, for the suite's index."""
        default = f"default: {self.wanted_text}, in whole 2 MiB"
        return f"{default}, limited to {format_bytes(self.size_bytes)}: {self.limit}" if self.limited else default

    def note(self) -> str:
        """The one line the suite prints when the size is limited."""
        return (f"bench suite: arrays of {format_bytes(self.size_bytes)}, not {format_bytes(self.wanted_bytes)}"
                f" ({self.wanted_text}): {self.limit}; arrays this small may stay partly in cache")


def suite_array_size(host: Host) -> ArraySize:
    """The array size of every case of a suite on ``host`` (see the module docstring for the rule and why).

    The benchmark's default, unless the largest planned case on a node would
    need more than :data:`MEMORY_SHARE` of that node's memory (``MemTotal``),
    or an array more than :data:`MOST_ARRAY_BYTES`; then the largest size
    within both, rounded down to whole 2 MiB.
    """
    wanted = default_size_bytes(host)
    limits = [(MOST_ARRAY_BYTES, f"the suite's cap of {format_bytes(MOST_ARRAY_BYTES)} per array (a pass of the"
                                 " latency chase grows with its array)")]
    limits += _memory_limits(host)
    most_bytes, why = min(limits, key=lambda limit: limit[0])
    if most_bytes >= wanted:
        return ArraySize(wanted, wanted, host.llc_bytes)
    size = max(DEFAULT_SIZE_ALIGN, most_bytes // DEFAULT_SIZE_ALIGN * DEFAULT_SIZE_ALIGN)
    return ArraySize(size, wanted, host.llc_bytes, why)


def _memory_limits(host: Host) -> list:
    """``[(bytes per array, why)]``: for each node of known memory, its share over the most arrays a case puts on it."""
    from .plan import _plan, arrays_by_node   # the plan sizes its arrays with this module

    most: dict[int, tuple] = {}   # node id -> (arrays, the case)
    # paced cases put as many arrays on a node as the unpaced ones; a remote peak is skipped where it does not fit
    for case in (c for c in _plan(host, None, None).cases if c.kind != "remote-peak"):
        for node_id, arrays in arrays_by_node(case).items():
            if arrays > most.get(node_id, (0, None))[0]:
                most[node_id] = (arrays, case)
    out = []
    for node in host.nodes:
        if node.id in most and node.memory_total_bytes:
            arrays, case = most[node.id]
            out.append((int(MEMORY_SHARE * node.memory_total_bytes) // arrays,
                        f"the {arrays} arrays of the largest case on node {node.id} (a {case.kind} case) must fit in"
                        f" {MEMORY_SHARE:.0%} of its {format_bytes(node.memory_total_bytes)} of memory"))
    return out
