"""A board with parameters changed by dotted paths (``defaults.memory.latency``, ``links.0-1.latency``,
``link_kinds.socket.latency``), checked against the schema like a file."""
from __future__ import annotations

import difflib
import numbers

from ..errors import Problem, TopologyError
from .schema import (
    LINK_RATE_KEYS,
    LINK_SCHEMA,
    NODE_SCHEMA,
    schema_kind,
    suggest,
)
from ..units import format_bandwidth, format_frequency, format_time
from .board import _LINK_KEY, Topology

# ---------------------------------------------------------------- with_parameters

_TOP_SCALARS = ("name", "description", "coherence", "routing")


def apply_change(doc: dict, dotted: str, value, topo: Topology) -> None:
    """Apply one ``with_parameters`` entry to ``doc`` in place."""
    parts = dotted.split(".")
    head, rest = parts[0], parts[1:]
    if head in _TOP_SCALARS and not rest:
        doc[head] = value
        return
    if head == "defaults":
        _set_field(doc.setdefault("defaults", {}), rest, value, NODE_SCHEMA, dotted, topo)
        for node in doc["nodes"]:
            _drop_field(node, rest, is_link=False)
    elif head == "link_defaults":
        _set_field(doc.setdefault("link_defaults", {}), rest, value, LINK_SCHEMA, dotted, topo)
        for link in doc.get("links") or []:
            _drop_field(link, rest, is_link=True)
    elif head == "link_kinds" and len(rest) > 1:
        kind = _kind_entry(doc, rest[0], topo, dotted)
        _set_field(kind, rest[1:], value, LINK_SCHEMA, dotted, topo)
        for link in doc.get("links") or []:
            if link.get("kind") == rest[0]:
                _drop_field(link, rest[1:], is_link=True)
    elif head == "nodes" and rest:
        _set_field(_node_entry(doc, rest[0], topo, dotted), rest[1:], value, NODE_SCHEMA, dotted, topo)
    elif head == "links" and rest:
        _set_field(_link_entry(doc, rest[0], topo, dotted), rest[1:], value, LINK_SCHEMA, dotted, topo)
    elif head == "link_kinds":
        example = topo.link_kinds[0] if topo.link_kinds else "socket"
        raise _change_error(topo, dotted, f"expected link_kinds.<kind>.<field>, such as link_kinds.{example}.latency")
    else:
        valid = _TOP_SCALARS + ("defaults", "link_defaults", "link_kinds", "nodes", "links")
        raise _change_error(topo, dotted, suggest(head, valid))


def _node_entry(doc: dict, key: str, topo: Topology, dotted: str) -> dict:
    for node in doc["nodes"]:
        if str(node["id"]) == key:
            return node
    raise _change_error(topo, dotted, f"no node {key}; nodes are {list(topo.node_ids)}")


def _kind_entry(doc: dict, name: str, topo: Topology, dotted: str) -> dict:
    """The parameters of the link kind ``name`` in ``doc`` (an empty mapping where the file gives it none)."""
    kinds = doc.get("link_kinds") or {}
    if name not in kinds:
        known = ", ".join(map(str, kinds)) if kinds else "none (the board has no link_kinds)"
        raise _change_error(topo, dotted, f"no link kind {name!r}; kinds are {known}")
    if not isinstance(kinds[name], dict):
        kinds[name] = {}
    return kinds[name]


def _link_entry(doc: dict, key: str, topo: Topology, dotted: str) -> dict:
    m = _LINK_KEY.match(key)
    ends = {int(m.group(1)), int(m.group(2))} if m else None
    for link in doc.get("links") or []:
        if ends == {link["a"], link["b"]}:
            return link
    names = ", ".join(f"{link.a}-{link.b}" for link in topo.links)
    raise _change_error(topo, dotted, f"no link {key}; links are {names}")


def _change_error(topo: Topology, dotted: str, message: str) -> TopologyError:
    return TopologyError([Problem(topo.source, None, "", f"with_parameters: {dotted!r}: {message}")])


def _set_field(target: dict, parts: list, value, schema: dict, dotted: str, topo: Topology) -> None:
    """Set ``parts`` in ``target``, converting numbers to text with internal units."""
    kind = schema_kind(schema, parts)
    if kind is None:
        prefix = dotted[:len(dotted) - len(".".join(parts))]
        raise _change_error(topo, dotted, "no such parameter" + _nearest_field(schema, parts, prefix))
    for p in parts[:-1]:
        child = target.get(p)
        if not isinstance(child, dict):
            child = target[p] = {}
        target = child
    target[parts[-1]] = _document_value(kind, value)
    if schema is LINK_SCHEMA and len(parts) == 1 and parts[0] in LINK_RATE_KEYS:
        # 'bandwidth' and 'width_bits'/'clock'/'ddr' are alternatives on one level
        others = ("bandwidth",) if parts[0] != "bandwidth" else ("width_bits", "clock", "ddr")
        for other in others:
            target.pop(other, None)


def _nearest_field(schema: dict, parts: list, prefix: str) -> str:
    """`` (did you mean 'defaults.memory.latency'?)`` for the closest field path of ``schema``."""
    fields = list(_field_paths(schema))
    close = difflib.get_close_matches(".".join(parts), fields, n=1, cutoff=0.6)
    return f" (did you mean {prefix + close[0]!r}?)" if close else ""


def _field_paths(schema: dict, prefix: str = ""):
    for key, kind in schema.items():
        if isinstance(kind, dict):
            yield from _field_paths(kind, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}"


def _drop_field(entry: dict, parts: list, is_link: bool) -> None:
    """Remove an override of ``parts`` (for a link rate, every rate key) from one entry."""
    if is_link and len(parts) == 1 and parts[0] in LINK_RATE_KEYS:
        for key in LINK_RATE_KEYS:
            entry.pop(key, None)
        return
    for p in parts[:-1]:
        if not isinstance(entry, dict) or p not in entry:
            return
        entry = entry[p]
    if isinstance(entry, dict):
        entry.pop(parts[-1], None)


_FORMATTERS = {"time": format_time, "bandwidth": format_bandwidth, "bandwidth_spec": format_bandwidth,
               "frequency": format_frequency}


def _document_value(kind, value):
    """``value`` as it would be written in a file (numbers in internal units get their unit)."""
    if isinstance(kind, dict):
        if not isinstance(value, dict):
            return value
        return {k: _document_value(kind.get(k, "str"), v) for k, v in value.items()}
    if kind == "bandwidth_spec" and isinstance(value, dict):
        return {k: _document_value("bandwidth", v) for k, v in value.items()}
    is_number = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if kind in _FORMATTERS and is_number:
        return _FORMATTERS[kind](float(value))
    if kind in ("int", "count0", "fraction") and is_number:
        return int(value) if kind != "fraction" and float(value).is_integer() else float(value)
    return value
