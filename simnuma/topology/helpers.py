"""Small pieces the board modules share: node ids in messages, node and link parameters from resolved
fields (by the parameter table, :mod:`simnuma.topology.params`), link bandwidth text."""
from __future__ import annotations

from typing import Any

from .memparams import DramParams, check_dram, dram_time_ns
from .params import LINK_PARAMETERS, NODE_PARAMETERS, REQUIRED, declared, needed_memory_keys
from .schema import (
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


def _resolved(r: dict, p) -> Any:
    """The value of parameter ``p`` in the resolved mapping ``r`` (None where a value is missing or invalid:
    reported elsewhere), with its declared default where it is not given (a family: a dict by key)."""
    value: Any = r
    for part in p.parts:
        value = value.get(part) if isinstance(value, dict) else None
    if not p.keys:
        return p.default if value is None and p.default is not REQUIRED else value
    given = value if isinstance(value, dict) else {}
    out = {}
    for key in p.keys:
        v = given.get(key)
        default = p.key_default(key)
        out[key] = default if v is None and default is not REQUIRED else v
    return out


def _node_params(nid: int, r: dict) -> NodeParams:
    """NodeParams from resolved values (None where a value is missing or invalid: reported elsewhere).

    Every field is the value of the parameter declared with it; a parameter the node's memory model
    does not have is None; a memory without ``memory.bandwidth`` reports its peak (the DRAM's, or the
    most its curves reach).
    """
    model = _resolved(r, declared("memory.model")[0])
    fields: dict[str, Any] = {"id": nid}
    dram = []
    for p in NODE_PARAMETERS:
        value = _resolved(r, p) if model in p.models else None
        if value is None and p.default_from:   # not given: the value of the parameter it follows
            value = fields.get(declared(p.default_from)[0].field)
        if isinstance(p.field, str) and p.field.startswith("dram."):
            dram.append((p, value))
        elif isinstance(p.field, str):
            fields[p.field] = value
    fields["dram"] = _dram_params(dram, r["memory"]) if model == "dram" else None
    if model == "dram":
        fields["memory_bandwidth_GBps"] = fields["dram"].peak_GBps if fields["dram"] is not None else None
    elif model == "curve":
        curves = fields["curves"]
        fields["memory_bandwidth_GBps"] = max(c.max_GBps for c in curves) if curves else None
    return NodeParams(**fields)


def _dram_params(values: list, memory: dict) -> DramParams | None:
    """DramParams from the ``(parameter, value)`` of each ``memory.dram`` parameter (DRAM times in ns at
    the DRAM's clock); None when one the node needs is missing (reported by the validator);
    MemoryParamError when values that are each valid do not fit together."""
    for dotted in needed_memory_keys("dram", memory):
        value: Any = memory
        for part in dotted.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value is None:
            return None
    tck = 1.0 / {p.name: v for p, v in values}["memory.dram.clock"]
    fields: dict[str, Any] = {}
    for p, value in values:
        if p.kind == "dram_time":
            value = ({k: dram_time_ns(v, tck) for k, v in value.items()} if p.keys else dram_time_ns(value, tck))
        fields[p.field[len("dram."):]] = value
    dram = DramParams(**fields)
    check_dram(dram, memory.get("queue"))
    return dram


def _link_params(a: int, b: int, r: dict, bandwidth, kind: str | None = None) -> LinkParams | None:
    """LinkParams from resolved values and the link's rate ``bandwidth`` (``(a_to_b, b_to_a)`` in GB/s);
    None when a value the link needs is missing or invalid (reported elsewhere)."""
    fields: dict[str, Any] = {"a": a, "b": b, "kind": kind}
    values: dict[str, Any] = {}
    for p in LINK_PARAMETERS:
        if p.field is None:
            continue   # a rate the link's bandwidth was computed from
        value = bandwidth if isinstance(p.field, tuple) else _resolved(r, p)
        if value is None or (p.keys and not p.default_from and any(v is None for v in value.values())):
            return None
        values[p.name] = value
    for p in LINK_PARAMETERS:
        if p.field is None:
            continue
        value = values[p.name]
        if p.default_from:
            value = {k: v if v is not None else values[p.default_from][k] for k, v in value.items()}
        if isinstance(p.field, tuple):
            fields.update(zip(p.field, value))
        else:
            fields[p.field] = value
    return LinkParams(**fields)


def format_link_bandwidth(link: LinkParams) -> str:
    """``4 GB/s`` for a symmetric link, ``a->b / b->a`` figures otherwise."""
    if link.bandwidth_ab_GBps == link.bandwidth_ba_GBps:
        return format_bandwidth(link.bandwidth_ab_GBps)
    return f"{format_bandwidth(link.bandwidth_ab_GBps)} / {format_bandwidth(link.bandwidth_ba_GBps)}"
