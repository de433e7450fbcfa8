"""Studies: sets of simulated cases on one or more boards, and the claims they test.

A study is a YAML file (bundled ones live in ``experiments/``, installed as the
data package ``simnuma.studies``).  It names its boards, lists its cases in the
thread notation, says how to plot them, and states claims in a form a program
can check.  The language is documented in ``docs/studies.md``; in short:

* a **case** is ``FOREGROUND [+ BACKGROUND]``: foreground thread specs
  (``0.0.w.1 1.0.w.0``), then optionally background threads, either explicit
  specs (``2.0.r.2@4GB/s``) or a named set ``SUBSCRIPTION@LOAD``
  (``full@very-high``);
* a **subscription** says which cores run background threads: ``high`` one
  per node on its lowest core without a foreground thread (on the Quartet with
  foreground threads on N0/C0 and N1/C0: N0/C1, N1/C1, N2/C0, N3/C0),
  ``full`` every core without a foreground thread, ``others`` core 0 of every
  node that runs no foreground thread;
* a **load** is the demand of each background thread, which reads its local
  memory: ``idle`` (no background threads), ``low`` 0.5 GB/s, ``medium``
  1.5 GB/s, ``high`` 3 GB/s, ``very-high`` 4 GB/s (``LOADS_GBps``), or a rate;
* a **board** is a bundled board or a file, optionally with another board's
  node and link parameters (``parameters_from``) and dotted-path ``changes``;
* a **claim** compares cases (``slower``, ``faster``, ``about_equal``,
  ``differ``, ``ordering``, ``slows_more``, ``difference_shrinks``,
  ``reverses``) or checks a resource (``link_utilization_above``/``_below``,
  ``memory_utilization_above``/``_below``, ``bottleneck``).

:func:`load_study` validates a study completely — every spec is placed on its
board — and reports problems as ``file:line: key.path: message``.
:func:`run_studies` simulates the cases of several studies at once
(identical cases are simulated once, on a process pool) and evaluates the
claims.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from dataclasses import dataclass, field
from . import bundled
from pathlib import Path

from .errors import SimnumaError, SpecError, StudyError
from .schema import closest
from .topology import Topology, load_topology, topology_from_dict
from .units import UnitError, format_bandwidth, parse_quantity, parse_size_bytes
from .workload import MODEL_OPS, ThreadSpec, Workload, parse_spec
from .yamlsrc import load_yaml
from .model.result import bottleneck_text

__all__ = [
    "StudyError",
    "LOADS_GBps",
    "SUBSCRIPTIONS",
    "PLOT_KINDS",
    "METRICS",
    "CLAIM_KINDS",
    "CaseText",
    "parse_case",
    "background_threads",
    "Board",
    "Case",
    "Claim",
    "Operand",
    "Study",
    "CaseMetrics",
    "ClaimOutcome",
    "StudyResult",
    "Job",
    "bundled_studies",
    "load_study",
    "parse_study",
    "board_hash",
    "parameters_from",
    "evaluate_claim",
    "metrics_from_result",
    "plan_jobs",
    "run_jobs",
    "run_studies",
]

STUDY_FORMAT = "simnuma-study/1"
DEFAULT_SIZE_BYTES = 64 * 2**20

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


# ---------------------------------------------------------------- finding studies

def bundled_studies() -> list:
    """Names of the bundled studies, in the order ``simnuma reproduce`` runs them."""
    return bundled.names("studies")


def _study_text(name_or_path: str) -> tuple:
    """``(text, shown name, folder for relative board paths)`` of a study by path or bundled name."""
    text = str(name_or_path)
    path = Path(text)
    if path.suffix in (".yaml", ".yml") or "/" in text or path.is_file():
        try:
            return path.read_text(encoding="utf-8"), text, path.resolve().parent
        except OSError as exc:
            raise StudyError(f"{text}: cannot read study file: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise StudyError(f"{text}: not UTF-8 text (byte {exc.start})") from None
    names = bundled_studies()
    if text in names:
        found = bundled.read("studies", text)
        return found[0], found[1], None
    near = closest(text, names)
    hint = f" (did you mean {near!r}?)" if near else ""
    raise StudyError(f"unknown study {text!r}{hint}; bundled studies: {', '.join(names) or 'none'}")


def load_study(name_or_path) -> Study:
    """Load and validate a study by bundled name or by path."""
    text, shown, folder = _study_text(name_or_path)
    return parse_study(text, shown, folder)


def parse_study(text: str, file: str = "<string>", folder=None) -> Study:
    """Validate study YAML; raise StudyError listing every problem as ``file:line: key.path: message``."""
    return _StudyReader(load_yaml(text, file), folder).read()


# ---------------------------------------------------------------- reading a study file

_TOP_KEYS = ("format", "name", "title", "description", "board", "boards", "size", "plot", "board_figure",
             "cases", "claims")
_CASE_ENTRY_KEYS = ("case", "placements", "subscriptions", "loads", "matrix", "boards", "group")
_BOARD_KEYS = ("board", "parameters_from", "changes")
# What stays the board's own when it takes another board's parameters: its shape, not its timing.
_STRUCTURAL_DEFAULTS = ("cores", "ports")


class _Invalid(Exception):
    """Raised inside the reader after a problem was recorded, to skip the rest of an entry."""


class _StudyReader:
    """Reads one study document, recording every problem with its line."""

    def __init__(self, src, folder):
        self.src = src
        self.folder = folder
        self.problems = list(src.problems)

    # -- problems
    def err(self, path, message):
        self.problems.append(self.src.problem(tuple(path), message))

    def fail(self, path, message):
        self.err(path, message)
        raise _Invalid()

    def raise_problems(self):
        seen, unique = set(), []
        for p in sorted(self.problems, key=lambda p: p.line or 0):
            if str(p) not in seen:
                seen.add(str(p))
                unique.append(p)
        raise StudyError("\n".join(str(p) for p in unique))

    # -- the document
    def read(self) -> Study:
        data = self.src.data
        if self.problems:
            self.raise_problems()
        if not isinstance(data, dict):
            self.err((), "expected a study: a mapping with name, board, cases and claims")
            self.raise_problems()
        for key in data:
            if key not in _TOP_KEYS:
                near = closest(key, _TOP_KEYS)
                self.err((key,), f"unknown key (did you mean {near!r}?)" if near else
                         f"unknown key; expected one of: {', '.join(_TOP_KEYS)}")
        self.check_format(data)
        name = self.name(data)
        boards = self.boards(data)
        size = self.size(data)
        plot = self.plot(data)
        cases = self.cases(data, boards) if boards else []
        claims = self.claims(data, boards, cases) if cases else []
        figure = self.board_figure(data, boards, cases) if cases else ()
        if self.problems:
            self.raise_problems()
        return Study(name=name, title=self.text(data, "title", name), description=self.text(data, "description", ""),
                     source=self.src.file, boards=boards, size_bytes=size, plot=plot, cases=cases, claims=claims,
                     board_figure=figure)

    def check_format(self, data):
        if "format" in data and data["format"] != STUDY_FORMAT:
            self.err(("format",), f"expected {STUDY_FORMAT!r}, got {data['format']!r}")

    def text(self, data, key, default):
        value = data.get(key, default)
        if not isinstance(value, str):
            self.err((key,), f"expected text, got {value!r}")
            return default
        return " ".join(value.split())

    def name(self, data) -> str:
        name = data.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            self.err(("name",) if "name" in data else (), f"expected a study name of letters, digits, '_', '.'"
                                                          f" and '-' (it names the output files), got {name!r}")
            return "study"
        return name

    def size(self, data) -> int:
        if "size" not in data:
            return DEFAULT_SIZE_BYTES
        try:
            size = parse_size_bytes(str(data["size"]))
        except UnitError as exc:
            self.err(("size",), str(exc))
            return DEFAULT_SIZE_BYTES
        if size < 64:
            self.err(("size",), f"an array needs at least one 64 B line, got {data['size']!r}")
        return size

    def plot(self, data) -> str:
        kind = data.get("plot", "bars")
        if kind not in PLOT_KINDS:
            near = closest(kind, PLOT_KINDS)
            hint = f" (did you mean {near!r}?)" if near else ""
            self.err(("plot",), f"unknown plot kind {kind!r}{hint}; expected one of {', '.join(PLOT_KINDS)}")
            return "bars"
        return kind

    # -- boards
    def boards(self, data) -> dict:
        if ("board" in data) == ("boards" in data):
            self.err((), "give either 'board: NAME' or 'boards: {LABEL: NAME, ...}' (exactly one of them)")
            return {}
        if "board" in data:
            base = data["board"]
            label = Path(str(base)).stem if isinstance(base, str) else "board"
            board = self.board(("board",), label, base, {})
            return {label: board} if board else {}
        raw = data["boards"]
        if not isinstance(raw, dict) or not raw:
            self.err(("boards",), "expected a mapping from a label to a board, e.g. {broadcast: x6440}")
            return {}
        out = {}
        for label, entry in raw.items():
            path = ("boards", label)
            if not isinstance(label, str) or not _NAME.match(label):
                self.err(path, f"a board label is letters, digits, '_', '.' and '-', got {label!r}")
                continue
            base, like, changes = self.board_entry(path, entry)
            board = self.board(path, label, base, changes, like) if base is not None else None
            if board:
                out[label] = board
        return out

    def board_entry(self, path, entry) -> tuple:
        """``(board, parameters_from or None, changes)`` of one entry of ``boards``."""
        if isinstance(entry, str):
            return entry, None, {}
        if not isinstance(entry, dict) or "board" not in entry:
            self.err(path, "expected a board name or {board: NAME, parameters_from: NAME, changes: {path: value}}")
            return None, None, {}
        for key in entry:
            if key not in _BOARD_KEYS:
                self.err(path + (key,), f"unknown key; expected one of: {', '.join(_BOARD_KEYS)}")
        changes = entry.get("changes") or {}
        if not isinstance(changes, dict):
            self.err(path + ("changes",), "expected a mapping such as {coherence: probe_filter}")
            changes = {}
        return entry["board"], entry.get("parameters_from"), changes

    def load_board(self, path, name):
        """A board by bundled name, or by file (relative to the study file first)."""
        if not isinstance(name, str) or not name:
            self.fail(path, f"expected a bundled board name or a board file, got {name!r}")
        where = name
        if self.folder is not None and not Path(name).is_absolute() and (self.folder / name).is_file():
            where = str(self.folder / name)
        try:
            return load_topology(where)
        except SimnumaError as exc:
            self.fail(path, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)

    def board(self, path, label, base, changes, like=None):
        """The board of one label: ``base``, with ``like``'s parameters, then ``changes``; None if invalid."""
        try:
            topology = self.load_board(path, base)
            source = base
            if like is not None:
                topology = parameters_from(topology, self.load_board(path + ("parameters_from",), like))
                source = f"{base} with the parameters of {like}"
            if changes:
                topology = topology.with_parameters(changes)
        except _Invalid:
            return None
        except SimnumaError as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self.err(path + (("changes",) if changes and "with_parameters" in first else ()), first)
            return None
        return Board(label, source, dict(changes), topology)

    # -- cases
    def cases(self, data, boards) -> list:
        raw = data.get("cases")
        if not isinstance(raw, list) or not raw:
            self.err(("cases",) if "cases" in data else (), "expected a list of cases, e.g. ['0.0.r.0', '0.0.w.1']")
            return []
        out, seen = [], {}
        for i, entry in enumerate(raw):
            try:
                for case in self.case_entry(("cases", i), entry, boards):
                    if case.key in seen:
                        merged = seen[case.key]
                        groups = tuple(dict.fromkeys(merged.groups + case.groups))
                        out[out.index(merged)] = seen[case.key] = _with_groups(merged, groups)
                    else:
                        seen[case.key] = case
                        out.append(case)
            except _Invalid:
                continue
        return out

    def case_entry(self, path, entry, boards) -> list:
        if isinstance(entry, str):
            label, text = self.split_board(path, entry, boards)
            labels = [label] if label else list(boards)
            return [self.place(path, text, boards[b], ()) for b in labels]
        if not isinstance(entry, dict):
            self.fail(path, f"expected a case text or a mapping (case/placements/matrix), got {entry!r}")
        for key in entry:
            if key not in _CASE_ENTRY_KEYS:
                near = closest(key, _CASE_ENTRY_KEYS)
                self.fail(path + (key,), f"unknown key (did you mean {near!r}?)" if near else
                          f"unknown key; expected one of: {', '.join(_CASE_ENTRY_KEYS)}")
        labels = self.entry_boards(path, entry, boards)
        groups = self.entry_groups(path, entry)
        forms = [k for k in ("case", "placements", "matrix") if k in entry]
        if len(forms) != 1:
            self.fail(path, "give exactly one of 'case', 'placements' (with loads) or 'matrix'")
        texts_for = self.entry_texts(path, entry, forms[0])
        if forms[0] == "matrix":
            groups = tuple(dict.fromkeys((MATRIX_GROUP,) + groups))
        return [self.place(path, text, boards[b], groups) for b in labels for text in texts_for(boards[b])]

    def entry_boards(self, path, entry, boards) -> list:
        if "boards" not in entry:
            return list(boards)
        labels = entry["boards"]
        if isinstance(labels, str):
            labels = [labels]
        if not isinstance(labels, list) or not labels:
            self.fail(path + ("boards",), f"expected a list of board labels of this study: {', '.join(boards)}")
        for j, label in enumerate(labels):
            if label not in boards:
                self.fail(path + ("boards", j), f"unknown board {label!r}; this study's boards: {', '.join(boards)}")
        return labels

    def entry_groups(self, path, entry) -> tuple:
        group = entry.get("group")
        if group is None:
            return ()
        if not isinstance(group, str) or not _NAME.match(group):
            self.fail(path + ("group",), f"expected a group name, got {group!r}")
        return (group,)

    def entry_texts(self, path, entry, form):
        """A function from a Board to the case texts the entry stands for."""
        if form == "case":
            text = entry["case"]
            if not isinstance(text, str):
                self.fail(path + ("case",), f"expected a case text, got {text!r}")
            return lambda board: [text]
        if form == "matrix":
            op = entry["matrix"]
            if op not in MODEL_OPS:
                self.fail(path + ("matrix",), f"expected an op ({', '.join(MODEL_OPS)}): the matrix runs "
                                              f"N.0.op.M for every node N and M")
            return lambda board: [f"{a}.0.{op}.{b}" for a in board.topology.node_ids for b in board.topology.node_ids]
        return self.grid(path, entry)

    def grid(self, path, entry):
        placements = self.text_list(path + ("placements",), entry["placements"])
        subs = self.text_list(path + ("subscriptions",), entry.get("subscriptions", ["high"]))
        loads = self.text_list(path + ("loads",), entry.get("loads", ["idle"]))
        for j, sub in enumerate(subs):
            if sub not in SUBSCRIPTIONS:
                near = closest(sub, SUBSCRIPTIONS)
                self.fail(path + ("subscriptions", j), f"unknown subscription {sub!r}"
                          + (f" (did you mean {near!r}?)" if near else f"; expected one of {', '.join(SUBSCRIPTIONS)}"))
        for j, load in enumerate(loads):
            try:
                _parse_load(load)
            except SpecError as exc:
                self.fail(path + ("loads", j), str(exc))
        texts = [p if load == "idle" else f"{p} + {sub}@{load}" for sub in subs for load in loads for p in placements]
        return lambda board: list(dict.fromkeys(texts))

    def text_list(self, path, value) -> list:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            self.fail(path, f"expected a list of texts, got {value!r}")
        return value

    def split_board(self, path, text, boards) -> tuple:
        """``(label or None, case text)`` of ``LABEL: CASE``."""
        m = _BOARD_PREFIX.match(text)
        if not m:
            return None, text
        label, rest = m.groups()
        if label not in boards:
            self.fail(path, f"unknown board {label!r} in {text!r}; this study's boards: {', '.join(boards)}")
        return label, rest

    def place(self, path, text, board: Board, groups) -> Case:
        """The case ``text`` on ``board``, or a recorded problem."""
        try:
            parsed = parse_case(text)
            background = background_threads(board.topology, parsed)
            Workload(parsed.foreground, background).check(board.topology)
        except SpecError as exc:
            self.fail(path, f"{exc}" + (f" (board {board.label})" if "board" not in str(exc) else ""))
        return Case(board=board.label, text=parsed.text, placement=parsed.placement,
                    foreground=tuple(s.label for s in parsed.foreground),
                    background=tuple(s.label for s in background), load=parsed.load,
                    subscription=parsed.subscription, groups=tuple(groups))

    # -- references from claims and the board figure
    def ref(self, path, text, cases_by_key, boards, board=None) -> tuple:
        """The case key a reference names: ``CASE`` or ``LABEL: CASE``."""
        if not isinstance(text, str):
            self.fail(path, f"expected a case such as '0.0.w.1 1.0.w.0' or 'LABEL: CASE', got {text!r}")
        label, rest = self.split_board(path, text, boards)
        label = label or board
        if label is None:
            if len(boards) > 1:
                self.fail(path, f"{text!r}: this study has several boards ({', '.join(boards)}); "
                                f"name one, e.g. '{next(iter(boards))}: {text.strip()}'")
            label = next(iter(boards))
        try:
            canonical = parse_case(rest).text
        except SpecError as exc:
            self.fail(path, str(exc))
        key = (label, canonical)
        if key not in cases_by_key:
            self.fail(path, f"no case {canonical!r} on board {label!r} in this study's cases")
        return key

    def operand(self, path, value, cases_by_key, boards, cases) -> Operand:
        if isinstance(value, str):
            return Operand((self.ref(path, value, cases_by_key, boards),))
        if not isinstance(value, dict):
            self.fail(path, f"expected a case, or {{mean|max|min: [cases] or GROUP, board: LABEL}}, got {value!r}")
        reducers = [k for k in ("mean", "max", "min") if k in value]
        extra = [k for k in value if k not in ("mean", "max", "min", "board")]
        if len(reducers) != 1 or extra:
            self.fail(path, "expected exactly one of mean, max, min (and optionally board)")
        how = reducers[0]
        board = value.get("board")
        if board is not None and board not in boards:
            self.fail(path + ("board",), f"unknown board {board!r}; this study's boards: {', '.join(boards)}")
        members = value[how]
        if isinstance(members, str) and not _looks_like_case(members):
            keys = self.group_keys(path + (how,), members, board, boards, cases)
        elif isinstance(members, list) and members:
            keys = tuple(self.ref(path + (how, j), m, cases_by_key, boards, board) for j, m in enumerate(members))
        else:
            self.fail(path + (how,), "expected a list of cases or the name of a group of cases")
        return Operand(keys, how)

    def group_keys(self, path, name, board, boards, cases) -> tuple:
        if board is None:
            if len(boards) > 1:
                self.fail(path, f"group {name!r}: name the board too, e.g. board: {next(iter(boards))}")
            board = next(iter(boards))
        keys = tuple(c.key for c in cases if c.board == board and (name == ALL_GROUP or name in c.groups))
        if not keys:
            known = sorted({g for c in cases for g in c.groups})
            self.fail(path, f"no group {name!r} on board {board!r}; groups: {', '.join(known) or 'none'}")
        return keys

    # -- claims
    def claims(self, data, boards, cases) -> list:
        raw = data.get("claims", [])
        if not isinstance(raw, list):
            self.err(("claims",), "expected a list of claims")
            return []
        by_key = {c.key: c for c in cases}
        out = []
        for i, entry in enumerate(raw):
            try:
                out.append(self.claim(("claims", i), entry, by_key, boards, cases))
            except _Invalid:
                continue
        return out

    def claim(self, path, entry, by_key, boards, cases) -> Claim:
        if not isinstance(entry, dict):
            self.fail(path, f"expected a claim mapping such as {{slower: A, than: B, says: ...}}, got {entry!r}")
        kinds = [k for k in entry if k in CLAIM_KINDS]
        if len(kinds) != 1:
            self.fail(path, "a claim takes exactly one of: " + ", ".join(CLAIM_KINDS))
        kind = kinds[0]
        spec = CLAIM_KINDS[kind]
        allowed = {kind, "says", "phenomenon", "metric", *spec.options}
        for key in entry:
            if key not in allowed:
                near = closest(key, sorted(allowed))
                self.fail(path + (key,), f"unknown key for a {kind!r} claim" +
                          (f" (did you mean {near!r}?)" if near else f"; expected: {', '.join(sorted(allowed))}"))
        says = entry.get("says")
        if not isinstance(says, str) or not says.strip():
            self.fail(path, "a claim needs 'says': a sentence saying what it checks")
        if "phenomenon" not in entry or entry["phenomenon"] in (None, ""):
            self.fail(path, "a claim needs 'phenomenon': the note's phenomenon number, or a short name")
        metric = entry.get("metric", "time")
        if metric not in METRICS:
            self.fail(path + ("metric",), f"unknown metric {metric!r}; expected one of {', '.join(METRICS)}")
        ctx = _ClaimContext(self, path, entry, by_key, boards, cases)
        args = spec.read(ctx, entry[kind])
        return Claim(kind=kind, says=" ".join(says.split()), phenomenon=str(entry["phenomenon"]), args=args,
                     metric=metric, line=self.src.line(path))

    def board_figure(self, data, boards, cases) -> tuple:
        by_key = {c.key: c for c in cases}
        if "board_figure" not in data:
            return ()
        value = data["board_figure"]
        try:
            if isinstance(value, str) and _BOARD_PREFIX.match(value) is None:
                keys = tuple((label, parse_case(value).text) for label in boards)
                keys = tuple(k for k in keys if k in by_key)
                if not keys:
                    self.fail(("board_figure",), f"no case {value!r} in this study's cases")
                return keys
            return (self.ref(("board_figure",), value, by_key, boards),)
        except (_Invalid, SpecError) as exc:
            if isinstance(exc, SpecError):
                self.err(("board_figure",), str(exc))
            return ()


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


def _with_groups(case: Case, groups: tuple) -> Case:
    return Case(case.board, case.text, case.placement, case.foreground, case.background, case.load,
                case.subscription, groups)


def _looks_like_case(text: str) -> bool:
    return bool(re.search(r"\d+\.\d+\.[a-z]+\.\d+", text))


# ---------------------------------------------------------------- claim kinds

class _ClaimContext:
    """What a claim reader needs: the reader, the claim's path and entry, and the study's cases."""

    def __init__(self, reader, path, entry, by_key, boards, cases):
        self.reader, self.path, self.entry = reader, path, entry
        self.by_key, self.boards, self.cases = by_key, boards, cases

    @property
    def kind(self) -> str:
        """The kind key of the claim being read."""
        return next(k for k in self.entry if k in CLAIM_KINDS)

    def operand(self, key, value) -> Operand:
        return self.reader.operand(self.path + key, value, self.by_key, self.boards, self.cases)

    def ref(self, key, value) -> tuple:
        return self.reader.ref(self.path + key, value, self.by_key, self.boards)

    def fail(self, key, message):
        self.reader.fail(self.path + key, message)

    def number(self, name, default=None, low=0.0, high=math.inf) -> float:
        value = self.entry.get(name, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (low <= value <= high):
            self.fail((name,), f"expected a number in [{low:g}, {high:g}], got {value!r}")
        return float(value)

    def operand_list(self, kind, value, minimum) -> tuple:
        """Cases compared one by one: a list, a group name, or ``{group: NAME, board: LABEL}``."""
        if isinstance(value, (str, dict)):
            name, board = (value, None) if isinstance(value, str) else (value.get("group"), value.get("board"))
            if not isinstance(name, str) or (isinstance(value, dict) and set(value) - {"group", "board"}):
                self.fail((kind,), "expected a list of cases, a group name, or {group: NAME, board: LABEL}")
            if board is not None and board not in self.boards:
                self.fail((kind, "board"), f"unknown board {board!r}; this study's boards: {', '.join(self.boards)}")
            keys = self.reader.group_keys(self.path + (kind,), name, board, self.boards, self.cases)
            operands = tuple(Operand((k,)) for k in keys)
        elif isinstance(value, list):
            operands = tuple(self.operand((kind, j), v) for j, v in enumerate(value))
        else:
            operands = ()
        if len(operands) < minimum:
            self.fail((kind,), f"expected at least {minimum} cases (a list, or a group of this study)")
        return operands

    def pair(self, key, value) -> tuple:
        if not isinstance(value, list) or len(value) != 2:
            self.fail(key, "expected a pair [A, B] of cases")
        return (self.operand(key + (0,), value[0]), self.operand(key + (1,), value[1]))

    def resource_target(self, value, need) -> dict:
        """The mapping under the kind key, with exactly the keys ``need``."""
        if not isinstance(value, dict):
            self.fail((self.kind,), f"expected a mapping with {', '.join(need)}")
        for key in value:
            if key not in need:
                self.fail((self.kind, key), f"unknown key; expected: {', '.join(need)}")
        for key in need:
            if key not in value:
                self.fail((self.kind,), f"missing {key!r}")
        return value


@dataclass(frozen=True)
class _ClaimKind:
    """How to read one kind of claim and how to check it."""

    read: object            # (context, value) -> args
    check: object           # (args, claim, values) -> (passed, numbers)
    options: tuple = ()
    help: str = ""


def _read_compare(ctx, value):
    return {"a": ctx.operand((ctx.kind,), value), "b": ctx.operand(("than",), ctx.entry.get("than")),
            "by_percent": ctx.number("by_percent", NOISE_PERCENT, 0.0, 1000.0)}


def _read_spread(ctx, value):
    name = "within_percent" if ctx.kind == "about_equal" else "by_more_than_percent"
    return {"operands": ctx.operand_list(ctx.kind, value, 2), "percent": ctx.number(name, None, 0.0, 1000.0)}


def _read_ordering(ctx, value):
    return {"operands": ctx.operand_list("ordering", value, 2),
            "by_percent": ctx.number("by_percent", NOISE_PERCENT, 0.0, 1000.0)}


def _read_slows_more(ctx, value):
    return {"a": ctx.pair(("slows_more",), value), "b": ctx.pair(("than",), ctx.entry.get("than")),
            "by_points": ctx.number("by_points", NOISE_PERCENT, 0.0, 1e9)}


def _read_shrinks(ctx, value):
    if not isinstance(value, list) or len(value) < 2:
        ctx.fail(("difference_shrinks",), "expected a list of at least two pairs [A, B], in rising order of load")
    return {"pairs": tuple(ctx.pair(("difference_shrinks", j), p) for j, p in enumerate(value)),
            "by_points": ctx.number("by_points", NOISE_PERCENT, 0.0, 1e9)}


def _read_reverses(ctx, value):
    if not isinstance(value, list) or len(value) < 2:
        ctx.fail(("reverses",), "expected a list of at least two pairs [A, B], in rising order of load")
    return {"pairs": tuple(ctx.pair(("reverses", j), p) for j, p in enumerate(value)),
            "by_percent": ctx.number("by_percent", NOISE_PERCENT, 0.0, 1000.0)}


def _read_link(ctx, value):
    target = ctx.resource_target(value, ("case", "link", "value"))
    key = ctx.ref((ctx.kind, "case"), target["case"])
    links = target["link"] if isinstance(target["link"], list) else [target["link"]]
    topo = ctx.boards[key[0]].topology
    directions = []
    for j, text in enumerate(links):
        m = re.fullmatch(r"\s*(\d+)\s*->\s*(\d+)\s*", str(text))
        if not m or (int(m.group(1)), int(m.group(2))) not in topo.directions:
            known = ", ".join(f"{a}->{b}" for a, b in topo.directions)
            ctx.fail((ctx.kind, "link"), f"{text!r} is not a link direction of board {key[0]!r}; directions: {known}")
        directions.append((int(m.group(1)), int(m.group(2))))
    return {"case": key, "links": tuple(directions), "value": _fraction(ctx, target["value"])}


def _read_memory(ctx, value):
    target = ctx.resource_target(value, ("case", "node", "value"))
    key = ctx.ref((ctx.kind, "case"), target["case"])
    node = target["node"]
    if node not in ctx.boards[key[0]].topology.node_ids:
        ctx.fail((ctx.kind, "node"), f"no node {node!r} on board {key[0]!r}")
    return {"case": key, "node": node, "value": _fraction(ctx, target["value"])}


def _read_bottleneck(ctx, value):
    target = ctx.resource_target(value, ("case", "resource"))
    resource = target["resource"]
    if not isinstance(resource, str) or not re.fullmatch(r"(link( \d+->\d+)?|memory( N\d+)?)", resource):
        ctx.fail((ctx.kind, "resource"), f"expected 'link', 'memory', 'link A->B' or 'memory NX', got {resource!r}")
    return {"case": ctx.ref((ctx.kind, "case"), target["case"]), "resource": resource}


def _fraction(ctx, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        ctx.fail((ctx.kind, "value"), f"expected a utilisation in [0, 1], got {value!r}")
    return float(value)


# -- checks: (args, claim, values) -> (passed, numbers)

def _check_slower(args, claim, values):
    return _check_order(args, claim, values, "slower")


def _check_faster(args, claim, values):
    return _check_order(args, claim, values, "faster")


def _check_order(args, claim, values, word: str):
    """A is ``word`` ("slower" or "faster") than B by more than ``by_percent``."""
    a, b = _value(args["a"], claim.metric, values), _value(args["b"], claim.metric, values)
    diff = _percent_slower(a, b, claim.metric) if word == "slower" else _percent_slower(b, a, claim.metric)
    passed = diff > args["by_percent"]
    return passed, (f"{_show(args['a'], claim.metric, values)} vs {_show(args['b'], claim.metric, values)}: "
                    f"{_signed(diff)} {word} (needs > {args['by_percent']:g}%)")


def _spread_percent(operands, metric, values) -> float:
    numbers = [_value(o, metric, values) for o in operands]
    return 100.0 * (max(numbers) - min(numbers)) / min(numbers) if min(numbers) > 0 else math.inf


def _check_about_equal(args, claim, values):
    spread = _spread_percent(args["operands"], claim.metric, values)
    shown = "; ".join(_show(o, claim.metric, values) for o in args["operands"])
    return spread <= args["percent"], f"{shown}: spread {spread:.1f}% (allowed {args['percent']:g}%)"


def _check_differ(args, claim, values):
    spread = _spread_percent(args["operands"], claim.metric, values)
    shown = "; ".join(_show(o, claim.metric, values) for o in args["operands"])
    return spread > args["percent"], f"{shown}: spread {spread:.1f}% (needs > {args['percent']:g}%)"


def _check_ordering(args, claim, values):
    ops = args["operands"]
    steps = [_percent_slower(_value(b, claim.metric, values), _value(a, claim.metric, values), claim.metric)
             for a, b in zip(ops, ops[1:])]
    shown = " < ".join(_show(o, claim.metric, values) for o in ops)
    return all(s > args["by_percent"] for s in steps), (f"{shown} (steps {', '.join(_signed(s) for s in steps)};"
                                                        f" each needs > {args['by_percent']:g}%)")


def _check_slows_more(args, claim, values):
    growth = []
    for near, far in (args["a"], args["b"]):
        growth.append(_percent_points(far, claim.metric, values) - _percent_points(near, claim.metric, values))
    (a0, a1), (b0, b1) = args["a"], args["b"]
    unit = "pts" if claim.metric == "time" else METRIC_UNITS[claim.metric]
    return growth[0] - growth[1] > args["by_points"], (
        f"{_show(a0, claim.metric, values)} -> {_show(a1, claim.metric, values)}: {_signed(growth[0], unit)}; "
        f"{_show(b0, claim.metric, values)} -> {_show(b1, claim.metric, values)}: {_signed(growth[1], unit)} "
        f"(needs more by > {args['by_points']:g} {unit})")


def _check_shrinks(args, claim, values):
    diffs = [_percent_points(a, claim.metric, values) - _percent_points(b, claim.metric, values)
             for a, b in args["pairs"]]
    unit = "pts" if claim.metric == "time" else METRIC_UNITS[claim.metric]
    shown = "; ".join(f"{_short(a, values)} minus {_short(b, values)}: {_signed(d, unit)}"
                      for (a, b), d in zip(args["pairs"], diffs))
    return diffs[0] - diffs[-1] > args["by_points"], f"{shown} (needs last < first by > {args['by_points']:g} {unit})"


def _check_reverses(args, claim, values):
    (a0, b0), (a1, b1) = args["pairs"][0], args["pairs"][-1]
    before = _percent_slower(_value(a0, claim.metric, values), _value(b0, claim.metric, values), claim.metric)
    after = _percent_slower(_value(a1, claim.metric, values), _value(b1, claim.metric, values), claim.metric)
    margin = args["by_percent"]
    passed = before < -margin and after > margin
    return passed, (f"first: {_show(a0, claim.metric, values)} vs {_show(b0, claim.metric, values)}: "
                    f"{_signed(before)} slower (needs < -{margin:g}%); last: {_show(a1, claim.metric, values)} vs "
                    f"{_show(b1, claim.metric, values)}: {_signed(after)} slower (needs > {margin:g}%)")


def _check_link(args, claim, values, above: bool):
    m = values[args["case"]]
    utils = [m.links.get(d, 0.0) for d in args["links"]]
    passed = all((u > args["value"]) if above else (u < args["value"]) for u in utils)
    shown = ", ".join(f"{a}->{b} {100 * u:.1f}%" for (a, b), u in zip(args["links"], utils))
    return passed, f"{_name(args['case'], values)}: {shown} busy ({'>' if above else '<'} {100 * args['value']:g}%)"


def _check_memory(args, claim, values, above: bool):
    u = values[args["case"]].memory.get(args["node"], 0.0)
    passed = u > args["value"] if above else u < args["value"]
    return passed, (f"{_name(args['case'], values)}: memory N{args['node']} {100 * u:.1f}% busy "
                    f"({'>' if above else '<'} {100 * args['value']:g}%)")


def _check_bottleneck(args, claim, values):
    m = values[args["case"]]
    want = args["resource"]
    passed = m.bottleneck == want or m.bottleneck.split(" ")[0] == want
    return passed, f"{_name(args['case'], values)}: bottleneck {m.bottleneck_text}, expected {want}"


CLAIM_KINDS = {
    "slower": _ClaimKind(_read_compare, _check_slower, ("than", "by_percent"),
                         "A is slower than B (longer time, higher latency or lower bandwidth) by more than "
                         "by_percent (default 1, the steady-state noise)"),
    "faster": _ClaimKind(_read_compare, _check_faster, ("than", "by_percent"), "A is faster than B"),
    "about_equal": _ClaimKind(_read_spread, _check_about_equal, ("within_percent",),
                              "the slowest of the cases is at most within_percent slower than the fastest"),
    "differ": _ClaimKind(_read_spread, _check_differ, ("by_more_than_percent",),
                         "the slowest of the cases is more than by_more_than_percent slower than the fastest"),
    "ordering": _ClaimKind(_read_ordering, _check_ordering, ("by_percent",),
                           "the cases from fastest to slowest, each step by more than by_percent (default 1)"),
    "slows_more": _ClaimKind(_read_slows_more, _check_slows_more, ("than", "by_points"),
                             "[near, far]: the time grows more from near to far than in the 'than' pair, by "
                             "more than by_points points of 0.0.r.0 (default 1)"),
    "difference_shrinks": _ClaimKind(_read_shrinks, _check_shrinks, ("by_points",),
                                     "pairs [A, B] in rising load: A's excess over B is smaller in the last "
                                     "pair than in the first"),
    "reverses": _ClaimKind(_read_reverses, _check_reverses, ("by_percent",),
                           "pairs [A, B] in rising load: A is faster than B in the first pair and slower in the "
                           "last, each by more than by_percent (default 1)"),
    "link_utilization_above": _ClaimKind(_read_link, lambda a, c, v: _check_link(a, c, v, True)),
    "link_utilization_below": _ClaimKind(_read_link, lambda a, c, v: _check_link(a, c, v, False)),
    "memory_utilization_above": _ClaimKind(_read_memory, lambda a, c, v: _check_memory(a, c, v, True)),
    "memory_utilization_below": _ClaimKind(_read_memory, lambda a, c, v: _check_memory(a, c, v, False)),
    "bottleneck": _ClaimKind(_read_bottleneck, _check_bottleneck),
}


# ---------------------------------------------------------------- values and evaluation

@dataclass(frozen=True)
class CaseMetrics:
    """The numbers of one simulated case that claims and tables use."""

    time_ns: float                  # until every foreground thread has finished
    latency_ns: float               # mean over foreground threads of their mean latency
    bandwidth_GBps: float           # sum over foreground threads
    baseline_ns: float | None       # 0.0.r.0 alone on the same board
    links: dict = field(default_factory=dict)     # (src, dst) -> utilisation
    memory: dict = field(default_factory=dict)    # node -> utilisation
    bottleneck: str = "none"
    bottleneck_utilization: float = 0.0
    bottleneck_text: str = "none"

    @property
    def percent(self) -> float | None:
        """Time as a percentage of 0.0.r.0 on the same board."""
        return 100.0 * self.time_ns / self.baseline_ns if self.baseline_ns else None

    def value(self, metric: str) -> float:
        return getattr(self, METRICS[metric])


def metrics_from_result(data: dict, baseline_ns) -> CaseMetrics:
    """CaseMetrics from a result dictionary (``Result.to_dict()`` or its compact form)."""
    fg = [t for t in data["threads"] if t["role"] == "foreground"]
    return CaseMetrics(
        time_ns=data["makespan_ns"],
        latency_ns=sum(t["latency_ns"]["mean"] for t in fg) / len(fg),
        bandwidth_GBps=sum(t["bandwidth_GBps"] for t in fg),
        baseline_ns=baseline_ns,
        links={(l["src"], l["dst"]): l["utilization"] for l in data["links"]},
        memory={m["node"]: m["utilization"] for m in data["memory"]},
        bottleneck=data["bottleneck"]["resource"],
        bottleneck_utilization=data["bottleneck"]["utilization"] or 0.0,
        bottleneck_text=bottleneck_text(data["bottleneck"]) if "limit" in data["bottleneck"] else
        data["bottleneck"]["resource"],
    )


def _value(op: Operand, metric: str, values) -> float:
    numbers = [values[k].value(metric) for k in op.keys]
    if op.reduce == "max":
        return max(numbers)
    if op.reduce == "min":
        return min(numbers)
    return sum(numbers) / len(numbers)


def _percent_slower(a: float, b: float, metric: str) -> float:
    """How much slower a is than b, in percent (negative: faster)."""
    if metric == "bandwidth":
        return 100.0 * (b - a) / a if a > 0 else math.inf
    return 100.0 * (a - b) / b if b > 0 else math.inf


def _percent_points(op: Operand, metric: str, values) -> float:
    """The operand's value in points of the first case's 0.0.r.0 time (time), else as is."""
    v = _value(op, metric, values)
    base = values[op.keys[0]].baseline_ns
    return 100.0 * v / base if metric == "time" and base else v


def _name(key: tuple, values) -> str:
    """A case key as text: the board label only when the values span several boards."""
    return key[1] if len({k[0] for k in values}) == 1 else _key_text(key)


def _short(op: Operand, values, metric: str = "time") -> str:
    """The operand as text; a max or min names the case that attains it."""
    if op.reduce == "one":
        return _name(op.keys[0], values)
    boards = ", ".join(dict.fromkeys(k[0] for k in op.keys))
    if op.reduce == "mean":
        return f"mean of {len(op.keys)} cases on {boards}" if len(op.keys) > 4 else \
            f"mean of ({', '.join(_name(k, values) for k in op.keys)})"
    pick = max if op.reduce == "max" else min
    attained = pick(op.keys, key=lambda k: values[k].value(metric))
    scope = f"{len(op.keys)} cases on {boards}" if len(op.keys) > 4 else ", ".join(_name(k, values) for k in op.keys)
    return f"{op.reduce} of ({scope}) = {_name(attained, values)}"


def _show(op: Operand, metric: str, values) -> str:
    """The operand and its value: ``0.0.w.1 1.0.w.0 144.9% = 74.47 ms``."""
    v = _value(op, metric, values)
    if metric == "time":
        bases = {values[k].baseline_ns for k in op.keys}
        base = bases.pop() if len(bases) == 1 else None
        number = (f"{100 * v / base:.1f}% = " if base else "") + f"{v / 1e6:.2f} ms"
    elif metric == "latency":
        number = f"{v:.1f} ns"
    else:
        number = f"{v:.3f} GB/s"
    return f"{_short(op, values, metric)} {number}"


def _signed(value: float, unit: str = "%") -> str:
    sep = "" if unit == "%" else " "
    return f"{value:+.1f}{sep}{unit}"


@dataclass(frozen=True)
class ClaimOutcome:
    """A claim checked against simulated numbers."""

    claim: Claim
    passed: bool
    numbers: str

    @property
    def verdict(self) -> str:
        return "PASS" if self.passed else "FAIL"


def evaluate_claim(claim: Claim, values) -> ClaimOutcome:
    """Check ``claim`` against ``values``: ``{case key: CaseMetrics}``."""
    passed, numbers = CLAIM_KINDS[claim.kind].check(claim.args, claim, values)
    return ClaimOutcome(claim, bool(passed), numbers)


# ---------------------------------------------------------------- running

@dataclass(frozen=True)
class Job:
    """One simulation: a board, threads, array size, mode and seed."""

    topology: Topology
    board_hash: str
    foreground: tuple
    background: tuple
    size_bytes: int
    mode: str
    seed: int

    @property
    def key(self) -> tuple:
        return (self.board_hash, self.foreground, self.background, self.size_bytes, self.mode, self.seed)

    @property
    def cost(self) -> float:
        """A rough relative cost, to start the longest simulations first."""
        return (2 * len(self.foreground) + len(self.background)) * len(self.topology.nodes)


def simulate_job(job: Job) -> dict:
    """Run one job; the compact result (no board parameters) and the seconds it took."""
    from .model import simulate

    start, start_cpu = time.perf_counter(), time.process_time()
    result = simulate(job.topology, list(job.foreground), list(job.background), size_bytes=job.size_bytes,
                      mode=job.mode, seed=job.seed, baseline=False).to_dict()
    result.pop("parameters", None)
    result["queues"] = result["queues"][:6]
    result["wall_s"] = time.perf_counter() - start
    result["cpu_s"] = time.process_time() - start_cpu
    return result


def baseline_case(topology: Topology) -> tuple:
    """The foreground of the reference run: core 0 of the first node reading its own memory."""
    first = topology.node_ids[0]
    return (f"{first}.0.r.{first}",)


def plan_jobs(studies, mode: str = "steady", seed: int = 1, size_bytes: int | None = None) -> dict:
    """``{job key: Job}`` for every case of ``studies`` and each board's 0.0.r.0, without duplicates."""
    jobs = {}
    for study in studies:
        size = size_bytes or study.size_bytes
        for board in study.boards.values():
            job = Job(board.topology, board.hash, baseline_case(board.topology), (), size, mode, seed)
            jobs.setdefault(job.key, job)
        for case in study.cases:
            board = study.boards[case.board]
            job = Job(board.topology, board.hash, case.foreground, case.background, size, mode, seed)
            jobs.setdefault(job.key, job)
    return jobs


def run_jobs(jobs: dict, workers: int = 1, on_done=None) -> dict:
    """Simulate every job (on ``workers`` processes when more than one); ``{key: result dict}``."""
    order = sorted(jobs.values(), key=lambda j: -j.cost)
    results = {}
    if workers <= 1 or len(order) <= 1:
        for job in order:
            results[job.key] = simulate_job(job)
            if on_done:
                on_done(job)
        return results
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=min(workers, len(order))) as pool:
        futures = {pool.submit(simulate_job, job): job for job in order}
        try:
            for future in as_completed(futures):
                job = futures[future]
                results[job.key] = future.result()
                if on_done:
                    on_done(job)
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return results


@dataclass
class StudyResult:
    """A study's cases with their simulated numbers, and its claims checked."""

    study: Study
    mode: str
    seed: int
    size_bytes: int
    results: dict           # case key -> compact result dict
    metrics: dict           # case key -> CaseMetrics
    baselines: dict         # board label -> 0.0.r.0 time in ns
    outcomes: list          # ClaimOutcome

    @property
    def passed(self) -> int:
        return sum(o.passed for o in self.outcomes)

    @property
    def failed(self) -> int:
        return len(self.outcomes) - self.passed


def collect(study: Study, results: dict, mode: str, seed: int, size_bytes: int | None = None) -> StudyResult:
    """Attach simulated results (``{job key: result}``) to a study and check its claims."""
    size = size_bytes or study.size_bytes
    baselines = {}
    for label, board in study.boards.items():
        key = (board.hash, baseline_case(board.topology), (), size, mode, seed)
        baselines[label] = results[key]["makespan_ns"]
    case_results, metrics = {}, {}
    for case in study.cases:
        board = study.boards[case.board]
        data = results[(board.hash, case.foreground, case.background, size, mode, seed)]
        case_results[case.key] = data
        metrics[case.key] = metrics_from_result(data, baselines[case.board])
    outcomes = [evaluate_claim(c, metrics) for c in study.claims]
    return StudyResult(study, mode, seed, size, case_results, metrics, baselines, outcomes)


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def run_studies(studies, workers: int | None = None, mode: str = "steady", seed: int = 1,
                size_bytes: int | None = None, on_done=None) -> tuple:
    """Simulate the cases of ``studies`` (each distinct case once); ``(StudyResults, run info)``."""
    jobs = plan_jobs(studies, mode, seed, size_bytes)
    start = time.perf_counter()
    results = run_jobs(jobs, workers or default_workers(), on_done)
    wall_s = time.perf_counter() - start
    outcomes = [collect(s, results, mode, seed, size_bytes) for s in studies]
    return outcomes, run_info(studies, jobs, results, workers or default_workers(), wall_s)


def run_info(studies, jobs: dict, results: dict, workers: int, wall_s: float) -> dict:
    """How the run went: counts, wall and CPU seconds, the CPU seconds per study, the costliest simulations."""
    cpu = {key: results[key]["cpu_s"] for key in jobs}
    per_study = {}
    for s in studies:
        keys = {k for k, j in jobs.items()
                if any(j.board_hash == s.boards[c.board].hash and j.foreground == c.foreground
                       and j.background == c.background for c in s.cases)}
        per_study[s.name] = sum(cpu[k] for k in keys)
    costliest = sorted(jobs.values(), key=lambda j: -cpu[j.key])[:8]
    return {
        "simulations": len(jobs),
        "cases": sum(len(s.cases) for s in studies),
        "workers": workers,
        "wall_s": wall_s,
        "cpu_s": sum(cpu.values()),
        "cpu_s_per_study": per_study,
        "costliest": [{"board": j.topology.name, "foreground": " ".join(j.foreground),
                       "background": " ".join(j.background), "cpu_s": cpu[j.key]} for j in costliest],
    }


def case_label(case: Case, topology: Topology) -> str:
    """``0.0.w.1 1.0.w.0 [1,1 hops]``: the notation with each foreground thread's hop count."""
    hops = case.hops(topology)
    unit = "hop" if hops == (1,) else "hops"
    return f"{case.placement} [{','.join(map(str, hops))} {unit}]"
