"""Small pieces the board modules share: node ids in messages, resolved node parameters, routes,
link bandwidth text."""
from __future__ import annotations

from ..memparams import dram_params
from ..schema import (
    check_value,
)
from ..units import format_bandwidth
from .board import LinkParams, NodeParams


class _AnyNode(frozenset):
    """Stands for the node ids when the 'nodes' section is unusable: every whole number >= 0 passes,
    so references to nodes are not reported a second time."""

    def __contains__(self, item):
        return isinstance(item, int) and not isinstance(item, bool) and item >= 0


def _listing(ids) -> str:
    return "unknown (see the problems in 'nodes')" if isinstance(ids, _AnyNode) else str(sorted(ids))


def _optional_below(optional, key: str) -> frozenset:
    """The optional paths inside ``key``; ``""`` marks the whole mapping optional."""
    if key in optional or "" in optional:
        return frozenset({""})
    prefix = key + "."
    return frozenset(p[len(prefix):] for p in optional if p.startswith(prefix))


def _gives(mapping, *keys) -> bool:
    """Whether ``mapping`` gives a value (not null) for any of ``keys``."""
    return isinstance(mapping, dict) and any(mapping.get(k) is not None for k in keys)


def _plural(n: int, word: str) -> str:
    return word if n == 1 else word + "s"


def _value_or_none(kind, value):
    try:
        return check_value(kind, value)
    except ValueError:
        return None  # reported by check_schema


def _bandwidth_pair(value):
    """``(a_to_b, b_to_a)`` in GB/s from a bandwidth or a per-direction mapping; None if invalid."""
    if isinstance(value, dict):
        ab = _value_or_none("bandwidth", value.get("a_to_b"))
        ba = _value_or_none("bandwidth", value.get("b_to_a"))
        return (ab, ba) if ab is not None and ba is not None else None
    bw = _value_or_none("bandwidth", value)
    return (bw, bw) if bw is not None else None


def _node_params(nid: int, r: dict) -> NodeParams:
    """NodeParams from resolved values (None where a value is missing or invalid: reported elsewhere)."""
    memory = r["memory"]
    model = memory["model"] or "fifo"
    dram = curves = None
    bandwidth, efficiency = memory["bandwidth"], memory["efficiency"]
    if model == "dram":
        dram = dram_params(memory)
        bandwidth, efficiency = (dram.peak_GBps if dram is not None else None), None
    elif model == "curve":
        curves = memory["curves"]
        bandwidth, efficiency = (max(c.max_GBps for c in curves) if curves else None), None
    return NodeParams(
        id=nid, cores=r["cores"], ports=r["ports"], window=dict(r["core"]["window"]),
        memory_bandwidth_GBps=bandwidth, memory_efficiency=efficiency,
        memory_latency_ns=memory["latency"], memory_queue=memory["queue"], memory_model=model, dram=dram,
        curves=curves,
        sri_latency_ns=r["sri"]["latency"], sri_buffers=dict(r["sri"]["buffers"]),
        sri_probe_queue=r["sri"]["probe_queue"], mct_buffers=dict(r["mct"]["buffers"]),
        xbar_latency_ns=r["xbar"]["latency"], probe_lookup_ns=r["probe"]["lookup"],
        hold_ns={op: (ns or 0.0) for op, ns in r["core"]["hold"].items()}, requests=r["core"]["requests"],
    )


def format_link_bandwidth(link: LinkParams) -> str:
    """``4 GB/s`` for a symmetric link, ``a->b / b->a`` figures otherwise."""
    if link.bandwidth_ab_GBps == link.bandwidth_ba_GBps:
        return format_bandwidth(link.bandwidth_ab_GBps)
    return f"{format_bandwidth(link.bandwidth_ab_GBps)} / {format_bandwidth(link.bandwidth_ba_GBps)}"
