"""Reading a study file: bundled studies by name, every key checked, problems as
``file:line: key.path: message``."""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import NoReturn

from ..case import SUBSCRIPTIONS, _parse_load, parse_case
from ..errors import SimnumaError, SpecError, StudyError, closest
from ..topology.loading import load_topology_near
from ..units import UnitError, parse_array_bytes
from ..workload import MODEL_OPS, Workload
from ..yamlsrc import document_kind, load_yaml
from .claims import CLAIM_KINDS, _ClaimContext
from .finding import study_text
from .notation import (
    _BOARD_PREFIX,
    _NAME,
    ALL_GROUP,
    DEFAULT_SIZE_BYTES,
    MATRIX_GROUP,
    METRICS,
    PLOT_KINDS,
    STUDY_FORMAT,
)
from .records import Board, Claim, Operand, Study, StudyCase, parameters_from

def load_study(name_or_path) -> Study:
    """Load and validate a study by bundled name or by path."""
    text, name, folder = study_text(name_or_path)
    return parse_study(text, name, folder)


def parse_study(text: str, file: str = "<string>", folder=None) -> Study:
    """Validate study YAML; raise StudyError listing every problem as ``file:line: key.path: message``."""
    return _StudyReader(load_yaml(text, file), folder).read()


# ---------------------------------------------------------------- reading a study file

_TOP_KEYS = ("format", "name", "title", "description", "board", "boards", "size", "plot", "board_figure",
             "cases", "claims")
_CASE_ENTRY_KEYS = ("case", "placements", "subscriptions", "loads", "matrix", "boards", "group")
_BOARD_KEYS = ("board", "parameters_from", "changes")
# What stays the board's own when it takes another board's parameters: its shape, not its timing.


class _Invalid(Exception):
    """Raised inside the reader after a problem was recorded, to skip the rest of an entry."""


def _case_text(entry) -> tuple | None:
    """``(board label or None, case in canonical form)``: what a one-case entry of 'cases' (``CASE`` or ``LABEL:
    CASE``) means; None for a mapping, or text that does not parse as a case."""
    if not isinstance(entry, str):
        return None
    m = _BOARD_PREFIX.match(entry)
    try:
        return (m.group(1) if m else None), parse_case(m.group(2) if m else entry).text
    except SpecError:
        return None


class _StudyReader:
    """Reads one study document, recording every problem with its line."""

    def __init__(self, src, folder):
        self.src = src
        self.folder = folder
        self.problems = list(src.problems)
        # the cases broken entries of 'cases' meant (reported already: a reference to one follows from it);
        # None once an entry that is not one case text was broken
        self.bad_cases: set[tuple] | None = set()

    # -- problems
    def err(self, path, message):
        self.problems.append(self.src.problem(tuple(path), message))

    def fail(self, path, message) -> NoReturn:
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
        kind = document_kind(data)     # another of simnuma's documents: one line, not one per key
        if not isinstance(data, dict) or kind not in (None, "a study"):
            self.err(("format",) if kind and "format" in data else (), f"this is {kind}, not a study" if kind else
                     "expected a study: a mapping with name, board, cases and claims")
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
        if plot == "matrix" and cases and not self.bad_cases and not any(MATRIX_GROUP in c.groups for c in cases):
            self.err(("plot",), "a matrix plot draws the cases of a matrix entry; add one to cases, e.g. {matrix: r}")
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
            return parse_array_bytes(data["size"])
        except UnitError as exc:
            self.err(("size",), str(exc))
            return DEFAULT_SIZE_BYTES

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
        try:
            return load_topology_near(name, self.folder)
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
        out: list[StudyCase] = []
        seen: dict[tuple, StudyCase] = {}   # case key -> the case (its groups merged)
        for i, entry in enumerate(raw):
            try:
                for case in self.case_entry(("cases", i), entry, boards):
                    if case.key in seen:
                        merged = seen[case.key]
                        groups = tuple(dict.fromkeys(merged.groups + case.groups))
                        out[out.index(merged)] = seen[case.key] = replace(merged, groups=groups)
                    else:
                        seen[case.key] = case
                        out.append(case)
            except _Invalid:
                meant = _case_text(entry)
                self.bad_cases = None if meant is None or self.bad_cases is None else self.bad_cases | {meant}
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
        if group == MATRIX_GROUP:
            self.fail(path + ("group",), f"the group {MATRIX_GROUP!r} is the matrix entries' ({{matrix: r}});"
                                         " give this group another name")
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

    def place(self, path, text, board: Board, groups) -> StudyCase:
        """The case ``text`` on ``board``, or a recorded problem."""
        try:
            case = parse_case(text)
            background = case.background_on(board.topology)
            Workload(case.specs, background).check(board.topology)
        except SpecError as exc:
            self.fail(path, f"{exc}" + (f" (board {board.label})" if "board" not in str(exc) else ""))
        return StudyCase(board.label, case, tuple(s.label for s in background), tuple(groups))

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
            self.missing_case(path, f"no case {canonical!r} on board {label!r} in this study's cases", canonical, label)
        return key

    def missing_case(self, path, message, canonical: str | None = None, board: str | None = None) -> NoReturn:
        """Stop at a reference to a case (``canonical``; None: a group) the study lacks: reported, unless a
        broken entry of 'cases' may have meant it."""
        bad = self.bad_cases   # (board label, or None for every board; case) per broken entry
        if bad is None or (bad if canonical is None else
                           any(c == canonical and (b is None or board is None or b == board) for b, c in bad)):
            raise _Invalid()
        self.fail(path, message)

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
            self.missing_case(path, f"no group {name!r} on board {board!r}; groups: {', '.join(known) or 'none'}")
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
        phenomenon = entry["phenomenon"]
        if not (isinstance(phenomenon, str) and phenomenon.isprintable() or type(phenomenon) is int and 0 < phenomenon < 7):
            self.fail(path + ("phenomenon",), f"expected the note's phenomenon number (1 to 6) or a short name, got {phenomenon!r}")
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
                    self.missing_case(("board_figure",), f"no case {value!r} in this study's cases",
                                      parse_case(value).text)
                return keys
            return (self.ref(("board_figure",), value, by_key, boards),)
        except (_Invalid, SpecError) as exc:
            if isinstance(exc, SpecError):
                self.err(("board_figure",), str(exc))
            return ()


def _looks_like_case(text: str) -> bool:
    return bool(re.search(r"\d+\.\d+\.[a-z]+\.\d+", text))
