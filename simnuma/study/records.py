"""What a validated study holds: its boards, cases, claims and the operands claims compare."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from ..topology import Topology, topology_from_dict
from ..workload import parse_spec

# ---------------------------------------------------------------- studies

def board_hash(topology: Topology) -> str:
    """A short hash of a board's resolved parameters: equal boards, equal hashes."""
    text = json.dumps(topology.to_dict(), sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class Board:
    """One board of a study: a label, the board it starts from and the parameters it changes."""

    label: str
    base: str
    changes: dict
    topology: Topology

    @property
    def hash(self) -> str:
        return board_hash(self.topology)


@dataclass(frozen=True)
class Case:
    """A case placed on one board of a study."""

    board: str              # the board's label in the study
    text: str               # canonical notation
    placement: str          # the foreground part
    foreground: tuple       # spec labels
    background: tuple       # spec labels, the named set resolved
    load: str
    subscription: str | None
    groups: tuple = ()

    @property
    def key(self) -> tuple:
        return (self.board, self.text)

    def hops(self, topology: Topology) -> tuple:
        """Route hop count of every foreground thread."""
        return tuple(topology.hops(s.node, s.mem_node) for s in map(parse_spec, self.foreground))


@dataclass(frozen=True)
class Operand:
    """What a claim compares: one case, or the mean/max/min of several (by case key)."""

    keys: tuple
    reduce: str = "one"     # one, mean, max, min


@dataclass(frozen=True)
class Claim:
    """One machine-checkable statement of a study."""

    kind: str
    says: str
    phenomenon: str
    args: dict              # kind-specific, operands resolved to Operand / case keys
    metric: str = "time"
    line: int | None = None


@dataclass
class Study:
    """A validated study."""

    name: str
    title: str
    description: str
    source: str
    boards: dict            # label -> Board
    size_bytes: int
    plot: str
    cases: list             # Case, in the order written (per board)
    claims: list
    board_figure: tuple = ()  # case keys drawn on the board figure

    def case(self, key: tuple) -> Case:
        for c in self.cases:
            if c.key == key:
                return c
        raise KeyError(key)

    def group(self, name: str, board: str) -> list:
        return [c for c in self.cases if c.board == board and name in c.groups]


def _key_text(key: tuple) -> str:
    return f"{key[0]}: {key[1]}"


_STRUCTURAL_DEFAULTS = ("cores", "ports")   # what parameters_from keeps of a board's own defaults


def parameters_from(board: Topology, like: Topology) -> Topology:
    """``board``'s nodes, links, ports, I/O, routing and coherence with ``like``'s node and link parameters.

    A what-if board built from another board's sockets should keep that board's
    timing when the other board is recalibrated: the ``defaults`` (except
    cores and ports) and ``link_defaults`` of ``like`` replace ``board``'s, and
    ``board``'s per-node and per-link overrides of them are dropped.
    """
    doc, source = board.to_dict(), like.to_dict()
    own = doc.get("defaults") or {}
    defaults = {k: v for k, v in (source.get("defaults") or {}).items() if k not in _STRUCTURAL_DEFAULTS}
    defaults.update({k: own[k] for k in _STRUCTURAL_DEFAULTS if k in own})
    doc["defaults"] = defaults
    doc["link_defaults"] = source.get("link_defaults") or {}
    for node in doc.get("nodes") or []:
        for key in [k for k in node if k not in ("id",) + _STRUCTURAL_DEFAULTS]:
            del node[key]
    for link in doc.get("links") or []:
        for key in [k for k in link if k not in ("a", "b")]:
            del link[key]
    return topology_from_dict(doc, source=board.source)
