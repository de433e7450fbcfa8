"""What a validated study holds: its boards, cases, claims and the operands claims compare."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..case import Case, explicit_case
from ..runner import board_hash
from ..topology import Topology, topology_from_dict

# ---------------------------------------------------------------- studies

@dataclass(frozen=True)
class Board:
    """One board of a study: a label, the board it starts from and the parameters it changes."""

    label: str
    base: str
    changes: dict
    topology: Topology

    @cached_property
    def hash(self) -> str:
        """The board's parameters hash (computed once: it serialises the whole board)."""
        return board_hash(self.topology)


@dataclass(frozen=True)
class StudyCase:
    """A case of a study placed on one of its boards: the named background set resolved to threads."""

    board: str              # the board's label in the study
    case: Case              # as written (canonical)
    background: tuple       # every background thread's label, the named set resolved on the board
    groups: tuple = ()

    @property
    def text(self) -> str:
        """The canonical notation."""
        return self.case.name

    @property
    def placement(self) -> str:
        """The foreground part."""
        return self.case.placement

    @property
    def foreground(self) -> tuple:
        """The foreground threads' labels."""
        return self.case.threads

    @property
    def load(self) -> str:
        return self.case.load

    @property
    def subscription(self) -> str | None:
        return self.case.subscription

    @property
    def simulated(self) -> Case:
        """What is simulated: the foreground with every background thread explicit."""
        return explicit_case(self.case.threads, self.background)

    @property
    def key(self) -> tuple:
        return (self.board, self.text)

    def hops(self, topology: Topology) -> tuple:
        """Route hop count of every foreground thread."""
        return tuple(topology.hops(s.node, s.mem_node) for s in self.case.specs)


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
    cases: list             # StudyCase, in the order written (per board)
    claims: list
    board_figure: tuple = ()  # case keys drawn on the board figure

    def case(self, key: tuple) -> StudyCase:
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
    cores and ports), ``link_defaults`` and ``link_kinds`` of ``like`` replace
    ``board``'s, and ``board``'s per-node and per-link overrides of them are
    dropped.  A link takes the kind of ``like``'s link between the same nodes,
    else the one kind of all ``like``'s links (TopologyError where they are of
    several).
    """
    doc, source = board.to_dict(), like.to_dict()
    own = doc.get("defaults") or {}
    defaults = {k: v for k, v in (source.get("defaults") or {}).items() if k not in _STRUCTURAL_DEFAULTS}
    defaults.update({k: own[k] for k in _STRUCTURAL_DEFAULTS if k in own})
    doc["defaults"] = defaults
    doc["link_defaults"] = source.get("link_defaults") or {}
    doc.pop("link_kinds", None)
    if source.get("link_kinds"):
        doc["link_kinds"] = source["link_kinds"]
    kinds = {frozenset((link.a, link.b)): link.kind for link in like.links}
    for node in doc.get("nodes") or []:
        for key in [k for k in node if k not in ("id",) + _STRUCTURAL_DEFAULTS]:
            del node[key]
    for link in doc.get("links") or []:
        for key in [k for k in link if k not in ("a", "b")]:
            del link[key]
        kind = kinds.get(frozenset((link["a"], link["b"])), _NO_PAIR)
        if kind is _NO_PAIR:
            kind = like.only_link_kind(f"link {link['a']}-{link['b']} of board {board.name!r}, which it does not have,")
        if kind is not None:
            link["kind"] = kind
    return topology_from_dict(doc, source=board.source)


_NO_PAIR = object()   # a pair the board that gives the parameters does not link
