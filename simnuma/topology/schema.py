"""The vocabulary of board descriptions: which keys exist and what each holds.

The node and link schemas are derived from the parameter table, :mod:`simnuma.topology.params`.
A schema is a nested mapping from key to either a sub-schema (a mapping) or a
field kind.  Kinds: ``int`` (a positive whole number), ``fraction`` (a number
in (0, 1]), ``bool``, ``str``, and the unit kinds of :mod:`simnuma.units`
(``time``, ``bandwidth``, ``frequency``, ``size``), which must be positive.
The memory block adds choices (``memory_model``, ``scheduler``,
``page_policy``), ``dram_time`` (a time or a number of DRAM clocks),
``address_map`` and ``curves`` (see :mod:`simnuma.topology.memparams`).
"""
from __future__ import annotations

import re


from .memparams import (BUFFER_RELEASES, MEMORY_MODELS, PAGE_POLICIES, RELEASES, SCHEDULERS, parse_address_map,
                        parse_choice, parse_curves, parse_dram_time)
from .params import optional_paths, rate_keys, schema
from ..errors import closest, suggest  # noqa: F401 - the validator's wording
from ..units import UnitError, parse_quantity

__all__ = ["NODE_SCHEMA", "LINK_SCHEMA", "LINK_KIND_NAME", "NODE_OPTIONAL", "LINK_OPTIONAL", "LINK_RATE_KEYS", "TOP_KEYS", "check_value",
           "closest", "schema_kind", "suggest"]

# derived from the parameter table (simnuma.topology.params), the one place a board parameter is declared
NODE_SCHEMA = schema("node")
LINK_SCHEMA = schema("link")

# keys (dotted paths from the schema's root) that may be left out everywhere; a resolved
# parameter that nobody gives is None.  A new node parameter that boards written before it
# must still load with is declared with a default (simnuma.topology.params).
NODE_OPTIONAL = optional_paths("node")
# which memory keys a node needs depends on its memory model: simnuma.topology.params.needed_memory_keys
LINK_OPTIONAL = optional_paths("link")

# a link's rate is either 'bandwidth' or the three signalling keys after it
LINK_RATE_KEYS = rate_keys()

TOP_KEYS = ("name", "description", "defaults", "link_defaults", "link_kinds", "nodes", "links", "io",
            "routing", "routes", "coherence", "layout")

# a link kind's name (``link_kinds``, a link's ``kind``): no dots, so that ``link_kinds.<name>.<field>`` is a path
LINK_KIND_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


def schema_kind(schema: dict, parts) -> object:
    """The kind (or sub-schema) at the key path ``parts`` of ``schema``; None if there is none."""
    kind: object = schema
    for part in parts:
        if not isinstance(kind, dict) or part not in kind:
            return None
        kind = kind[part]
    return kind if parts else None


_CHOICES = {"memory_model": (MEMORY_MODELS, "a memory model"), "scheduler": (SCHEDULERS, "a scheduling policy"),
            "page_policy": (PAGE_POLICIES, "a row-buffer policy"), "release": (RELEASES, "a release rule"),
            "buffer_release": (BUFFER_RELEASES, "a release rule")}


# What a board value can plausibly be: far beyond these it is a slip of the unit (``2.709 s`` for
# ns, ``1 kHz`` for GHz) or of the digits, and a run could not end (or allocate its buffers).
MOST_COUNT = 65_536                       # cores, ports, buffers, queue entries, windows
PLAUSIBLE = {                             # kind -> (lowest, highest, in internal units, what it is)
    "time": (0.0, 1e6, "a board's latencies and holds are nanoseconds to microseconds"),
    "frequency": (1e-3, 100.0, "a clock is between 1 MHz and 100 GHz"),
    "bandwidth": (1e-3, 1e5, "a link or memory moves between 1 MB/s and 100 TB/s"),
}


def _plausible(kind: str, quantity: float, value: object) -> float:
    """``quantity``, or ValueError when it is far outside what the kind can plausibly be."""
    bounds = PLAUSIBLE.get(kind)
    if bounds is not None and not bounds[0] <= quantity <= bounds[1]:
        raise ValueError(f"{value!r} is implausible: {bounds[2]} (a unit slip?)")
    return quantity


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
    if kind in ("int", "count0"):
        what = "a positive whole number" if kind == "int" else "a whole number >= 0"
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected {what}, got {value!r}")
        if value < (1 if kind == "int" else 0):
            raise ValueError(f"must be positive, got {value}" if kind == "int" else f"expected {what}, got {value}")
        if value > MOST_COUNT:
            raise ValueError(f"{value} is implausible: at most {MOST_COUNT} (cores, ports, buffers, queue entries)")
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
    return _plausible(kind, quantity, value)
