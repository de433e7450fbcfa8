"""The case notation ``FOREGROUND [+ BACKGROUND]``: named loads and subscriptions, and a case's
background threads placed on a board."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import SpecError
from ..model.system import DEFAULT_SIZE_BYTES  # noqa: F401 - one array size for every command
from ..schema import closest
from ..topology import Topology
from ..units import UnitError, format_bandwidth, parse_quantity
from ..workload import MODEL_OPS, ThreadSpec, parse_spec

STUDY_FORMAT = "simnuma-study/1"

# Demand of each background thread under the note's named loads (GB/s).  The note
# publishes low (0.5) and very high (4); medium (1.5) and high (3) are assumptions.
LOADS_GBps = {"idle": 0.0, "low": 0.5, "medium": 1.5, "high": 3.0, "very-high": 4.0}
SUBSCRIPTIONS = ("high", "full", "others")
PLOT_KINDS = ("bars", "loads", "boards", "matrix")
METRICS = {"time": "time_ns", "latency": "latency_ns", "bandwidth": "bandwidth_GBps"}
METRIC_UNITS = {"time": "ns", "latency": "ns", "bandwidth": "GB/s"}
# A comparison counts only beyond steady mode's convergence target (95% confidence half-width of
# every thread's throughput within 1%): smaller differences are inside the simulation's noise.
NOISE_PERCENT = 1.0
MATRIX_GROUP = "matrix"   # the cases of a 'matrix' entry
ALL_GROUP = "all"         # every case of a board
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_BOARD_PREFIX = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9_.-]*)\s*:\s*(.*)$", re.S)


# ---------------------------------------------------------------- the case notation

@dataclass(frozen=True)
class CaseText:
    """A case as written: foreground threads and the background set, before placing it on a board."""

    foreground: tuple            # ThreadSpec
    subscription: str | None     # a named background set, or None
    load: str                    # idle, low, ..., a rate such as '2GB/s', or 'custom' (explicit threads only)
    rate_GBps: float             # demand of each thread of the named set; 0 for none
    explicit: tuple = ()         # explicit background ThreadSpecs

    @property
    def placement(self) -> str:
        """The foreground part, e.g. ``0.0.w.1 1.0.w.0``."""
        return " ".join(s.label for s in self.foreground)

    @property
    def background_text(self) -> str:
        parts = [f"{self.subscription}@{self.load}"] if self.subscription and self.rate_GBps > 0 else []
        return " ".join(parts + [s.label for s in self.explicit])

    @property
    def text(self) -> str:
        """The canonical notation: ``FOREGROUND`` or ``FOREGROUND + BACKGROUND``."""
        bg = self.background_text
        return f"{self.placement} + {bg}" if bg else self.placement


def _parse_load(text: str) -> tuple:
    """``(name, GB/s)`` of a named load or a rate (``2GB/s``)."""
    name = text.strip().lower()
    if name in LOADS_GBps:
        return name, LOADS_GBps[name]
    try:
        rate = parse_quantity(text.strip(), "bandwidth")
    except UnitError:
        raise SpecError(f"unknown load {text!r}; expected one of {', '.join(LOADS_GBps)} or a rate such as"
                        " 2GB/s") from None
    if rate < 0:
        raise SpecError(f"load {text!r}: a rate cannot be negative")
    return format_bandwidth(rate).replace(" ", ""), rate


def _background_token(token: str, found: dict) -> None:
    """Read one background token into ``found`` (the named set, or an explicit thread)."""
    if token == "idle":
        return
    if token[:1].isdigit():
        found["explicit"].append(parse_spec(token, MODEL_OPS))
        return
    sub, at, load = token.partition("@")
    if sub not in SUBSCRIPTIONS or not at:
        near = closest(sub, SUBSCRIPTIONS)
        hint = f" (did you mean {near + '@' + load if at else near!r}?)" if near else ""
        raise SpecError(f"{token!r}: expected a background thread N.C.op.M@RATE or a set SUBSCRIPTION@LOAD"
                        f" with SUBSCRIPTION one of {', '.join(SUBSCRIPTIONS)}{hint}")
    if found["set"] is not None:
        raise SpecError(f"{token!r}: a case takes at most one background set (already {found['set'][0]}@...)")
    found["set"] = (sub, *_parse_load(load))


def parse_case(text) -> CaseText:
    """Parse ``FOREGROUND [+ BACKGROUND]``; raise SpecError naming what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise SpecError(f"expected a case such as '0.0.w.1 1.0.w.0 + high@low', got {text!r}")
    head, plus, tail = text.partition("+")
    fg = tuple(parse_spec(tok, MODEL_OPS) for tok in head.split())
    if not fg:
        raise SpecError(f"{text.strip()!r}: no foreground thread before '+'")
    if plus and not tail.strip():
        raise SpecError(f"{text.strip()!r}: nothing after '+'; give background threads or a set such as high@low")
    found = {"set": None, "explicit": []}
    for token in tail.split():
        _background_token(token, found)
    sub, load, rate = found["set"] or (None, "idle", 0.0)
    if rate == 0:
        sub, load = None, "idle"
    if found["explicit"] and sub is None:
        load = "custom"
    return CaseText(fg, sub, load, rate, tuple(found["explicit"]))


def background_threads(topology: Topology, case: CaseText) -> tuple:
    """The background threads of ``case`` on ``topology``: its named set, then its explicit threads."""
    busy = {(s.node, s.core) for s in case.foreground + case.explicit}
    fg_nodes = {s.node for s in case.foreground}
    out = []
    if case.subscription and case.rate_GBps > 0:
        for node in topology.nodes:
            free = [c for c in range(node.cores) if (node.id, c) not in busy]
            if case.subscription == "full":
                cores = free
            elif case.subscription == "high":
                cores = free[:1]
            else:  # others
                cores = free[:1] if node.id not in fg_nodes else []
            out += [ThreadSpec(node.id, c, "r", node.id, case.rate_GBps) for c in cores]
    return tuple(out) + case.explicit
