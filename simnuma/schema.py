"""The vocabulary of board descriptions: which keys exist and what each holds.

A schema is a nested mapping from key to either a sub-schema (a mapping) or a
field kind.  Kinds: ``int`` (a positive whole number), ``fraction`` (a number
in (0, 1]), ``bool``, ``str``, and the unit kinds of :mod:`simnuma.units`
(``time``, ``bandwidth``, ``frequency``, ``size``), which must be positive.
The memory block adds choices (``memory_model``, ``scheduler``,
``page_policy``), ``dram_time`` (a time or a number of DRAM clocks),
``address_map`` and ``curves`` (see :mod:`simnuma.memparams`).
"""
from __future__ import annotations

import difflib

from .memparams import (MEMORY_MODELS, PAGE_POLICIES, SCHEDULERS, TIMINGS, parse_address_map, parse_choice,
                        parse_curves, parse_dram_time)
from .units import UnitError, parse_quantity

__all__ = ["NODE_SCHEMA", "LINK_SCHEMA", "NODE_OPTIONAL", "LINK_OPTIONAL", "LINK_RATE_KEYS", "TOP_KEYS", "check_value",
           "closest", "schema_kind", "suggest"]

NODE_SCHEMA = {
    "cores": "int",
    "ports": "int",
    "core": {"window": {"r": "int", "w": "int", "t": "int"}, "hold": {"r": "time", "w": "time", "t": "time"},
             "requests": "int"},
    "memory": {
        "model": "memory_model",
        "latency": "time",
        "queue": "int",
        "bandwidth": "bandwidth",
        "efficiency": "fraction",
        "curves": "curves",
        "dram": {
            "channels": "int", "width_bits": "int", "clock": "frequency", "ranks": "int", "banks": "int",
            "row": "size", "address_map": "address_map",
            "scheduler": "scheduler", "bypass_limit": "int", "write_burst": "int", "page_policy": "page_policy", "idle_close": "dram_time",
            "os_page": "size",
            "timings": {t: "dram_time" for t in TIMINGS},
        },
    },
    "sri": {
        "latency": "time",
        "buffers": {"request": "int", "posted": "int", "response": "int"},
        "probe_queue": "int",
    },
    "mct": {"buffers": {"response": "int", "probe": "int"}},
    "xbar": {"latency": "time"},
    "probe": {"lookup": "time"},
}

LINK_SCHEMA = {
    "width_bits": "int",
    "clock": "frequency",
    "ddr": "bool",
    "bandwidth": "bandwidth_spec",
    "latency": "time",
    "buffers": {"request": "int", "posted": "int", "response": "int", "probe": "int"},
    "data_buffers": {"posted": "int", "response": "int"},
}

# keys (dotted paths from the schema's root) that may be left out everywhere; a resolved
# parameter that nobody gives is None.  A new node parameter that boards written before it
# must still load with goes here (with a NodeParams field that defaults to None).
NODE_OPTIONAL = frozenset({"core.hold", "core.requests", "memory.model", "memory.bandwidth", "memory.efficiency", "memory.curves",
                           "memory.dram"})
# which memory keys a node needs depends on its memory model: simnuma.memparams.MODEL_KEYS
LINK_OPTIONAL = frozenset({"bandwidth", "data_buffers", "width_bits", "clock", "ddr"})

# a link's rate is either 'bandwidth' or the three signalling keys after it
LINK_RATE_KEYS = ("bandwidth", "width_bits", "clock", "ddr")

TOP_KEYS = ("name", "description", "defaults", "link_defaults", "nodes", "links", "io",
            "routing", "routes", "coherence", "layout")


def closest(key: object, valid) -> str | None:
    """The valid key nearest to a misspelt ``key``, or None when none is close."""
    close = difflib.get_close_matches(str(key), [str(v) for v in valid], n=1, cutoff=0.6)
    return close[0] if close else None


def suggest(key: object, valid) -> str:
    """``unknown key (did you mean 'latency'?)``, or the list of valid keys when none is close."""
    close = closest(key, valid)
    if close is not None:
        return f"unknown key (did you mean {close!r}?)"
    return "unknown key; expected one of: " + ", ".join(str(v) for v in valid)


def schema_kind(schema: dict, parts) -> object:
    """The kind (or sub-schema) at the key path ``parts`` of ``schema``; None if there is none."""
    kind: object = schema
    for part in parts:
        if not isinstance(kind, dict) or part not in kind:
            return None
        kind = kind[part]
    return kind if parts else None


_CHOICES = {"memory_model": (MEMORY_MODELS, "a memory model"), "scheduler": (SCHEDULERS, "a scheduling policy"),
            "page_policy": (PAGE_POLICIES, "a row-buffer policy")}


def check_value(kind: str, value: object):
    """Return the value in internal units, or raise ValueError with a message."""
    if kind in _CHOICES:
        allowed, what = _CHOICES[kind]
        return parse_choice(value, allowed, what)
    if kind == "dram_time":
        return parse_dram_time(value)
    if kind == "address_map":
        return parse_address_map(value)
    if kind == "curves":
        return parse_curves(value)
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected a positive whole number, got {value!r}")
        if value <= 0:
            raise ValueError(f"must be positive, got {value}")
        return value
    if kind == "fraction":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"expected a number in (0, 1], got {value!r}")
        if not 0 < value <= 1:
            raise ValueError(f"must be in (0, 1], got {value}")
        return float(value)
    if kind == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"expected true or false, got {value!r}")
        return value
    if kind == "str":
        if not isinstance(value, str):
            raise ValueError(f"expected text, got {value!r}")
        return value
    try:
        quantity = parse_quantity(value, kind)
    except UnitError as exc:
        raise ValueError(str(exc)) from None
    if quantity <= 0:
        raise ValueError(f"must be positive, got {value!r}")
    return quantity
