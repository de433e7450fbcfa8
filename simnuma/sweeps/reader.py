"""Reading a sweep file: every key checked, every problem at once as ``file:line: key.path: message``.

The language (``docs/sweeps.md``)::

    name: four-socket-wirings           # names the output; letters, digits, '_', '.', '-'
    boards:                             # bundled names, board files, or generated wirings
      - quartet
      - {board: my-board.yaml, changes: {link_defaults.bandwidth: 8 GB/s}}
      - {wirings: {sockets: 4, ports: 3, io: 1, spare_ports: true}, from: quartet}
    grid:                               # every combination of these values, on every board
      link_defaults.bandwidth: [4 GB/s, 8 GB/s]
    cases:                              # cases in the case notation, or named sets
      - 0.0.w.1 1.0.w.0 + full@very-high
      - {set: single, ops: [r, w]}
      - {set: crossfire, op: w}
    metrics: [time_percent, latency_ns] # per-case columns (default: all)
    rank: [local_latency_ns_worst]      # how the summary orders the boards (default: see below)
    size: 64MiB
    seed: 1
"""
from __future__ import annotations

import itertools

from pathlib import Path
from typing import NoReturn

from ..case import parse_case
from ..errors import SimnumaError, StudyError, closest, shown
from ..fileio import UnreadableInput, read_input
from ..topology import load_topology
from ..topology.loading import load_topology_near
from ..units import UnitError, parse_array_bytes
from ..workload import MODEL_OPS, Workload
from ..yamlsrc import document_kind, load_yaml
from ..study.notation import _NAME
from ..model.system import DEFAULT_SIZE_BYTES
from .spec import AGGREGATES, CASE_METRICS, SET_NAMES, SWEEP_FORMAT, BoardEntry, CaseSet, Sweep
from .wirings import TooManyWirings, named_wirings, wiring_board, wirings

__all__ = ["load_sweep", "parse_sweep", "SweepError"]


_TOP_KEYS = ("format", "name", "title", "description", "boards", "grid", "cases", "metrics", "rank", "size",
             "seed", "mode")
_BOARD_KEYS = ("board", "changes", "label")
_WIRING_ENTRY_KEYS = ("wirings", "from", "routing", "label")
_ROUTINGS = ("shortest", "updown")
_WIRING_KEYS = ("sockets", "ports", "io", "spare_ports", "parallel")
_SET_KEYS = ("set", "op", "ops", "background")
_MOST_POINTS = 100_000
_MOST_CHECKED = 2_000   # configurations whose every grid point is checked before a sweep runs


class SweepError(StudyError):
    """A sweep file is invalid: every problem, one line each."""


class _Invalid(Exception):
    """An entry's problem was recorded; skip the rest of the entry."""


def load_sweep(path) -> Sweep:
    """Read and check a sweep file."""
    text_path = str(path)
    try:
        text = read_input(Path(text_path))
    except UnreadableInput as exc:
        reason = str(exc)
        raise SweepError(f"{shown(text_path)}: {reason}" if reason.startswith("not ") else
                         f"{shown(text_path)}: cannot read sweep file: {reason}") from None
    return parse_sweep(text, text_path, Path(text_path).resolve().parent)


def parse_sweep(text: str, file: str = "<string>", folder=None) -> Sweep:
    """Check sweep YAML; raise SweepError listing every problem."""
    return _SweepReader(load_yaml(text, file), folder).read()


class _SweepReader:
    def __init__(self, src, folder):
        self.src = src
        self.folder = folder
        self.problems = list(src.problems)
        self.bad_cases = False     # an entry of 'cases' was reported: what it would give is unknown

    def err(self, path, message) -> None:
        self.problems.append(self.src.problem(tuple(path), message))

    def fail(self, path, message) -> NoReturn:
        self.err(path, message)
        raise _Invalid()

    def raise_problems(self) -> NoReturn:
        seen, lines = set(), []
        for p in sorted(self.problems, key=lambda p: p.line or 0):
            if str(p) not in seen:
                seen.add(str(p))
                lines.append(str(p))
        raise SweepError("\n".join(lines))

    def unknown_keys(self, path, mapping, valid) -> None:
        for key in mapping:
            if key not in valid:
                near = closest(key, valid)
                self.err(path + (key,), f"unknown key (did you mean {near!r}?)" if near else
                         f"unknown key; expected one of: {', '.join(valid)}")

    # -- the document
    def read(self) -> Sweep:
        data = self.src.data
        if self.problems:
            self.raise_problems()
        if not isinstance(data, dict):
            self.err((), "expected a sweep: a mapping with name, boards and cases")
            self.raise_problems()
        kind = document_kind(data)
        if kind not in (None, "a sweep file"):
            self.err(("format",) if "format" in data else (), f"this is {kind}, not a sweep file")
            self.raise_problems()
        self.unknown_keys((), data, _TOP_KEYS)
        if "format" in data and data["format"] != SWEEP_FORMAT:
            self.err(("format",), f"expected {SWEEP_FORMAT!r}, got {data['format']!r}")
        name = self.name(data)
        boards = self.boards(data)
        grid = self.grid(data, boards)
        cases = self.cases(data, boards)
        metrics = self.names(data, "metrics", CASE_METRICS, tuple(CASE_METRICS))
        rank = self.names(data, "rank", AGGREGATES, ())
        size = self.size(data)
        seed = self.seed(data)
        mode = data.get("mode", "steady")
        if mode not in ("steady", "exact"):
            self.err(("mode",), f"expected steady or exact, got {mode!r}")
        points = len(boards) * _product(grid) * max(1, len(cases))
        if points > _MOST_POINTS:
            self.err(("grid",) if grid else (), f"{points:,} board configurations and cases: more than"
                                               f" {_MOST_POINTS:,}; split the sweep")
        if not self.problems and grid:
            self.grid_points(boards, grid, cases)
        if not self.bad_cases:
            for i, aggregate in enumerate(rank):
                if not _available(aggregate, cases):
                    self.err(("rank", i), f"{aggregate} comes from {_NEEDS[str(AGGREGATES[aggregate][2])]}, which"
                                          " this sweep's cases do not have")
        if self.problems:
            self.raise_problems()
        if not rank:
            rank = _default_rank(cases)
        return Sweep(name=name, title=self.text(data, "title", name), source=self.src.file, boards=tuple(boards),
                     grid=grid, cases=tuple(cases), metrics=metrics, rank=rank, size_bytes=size, seed=seed,
                     mode=mode, folder=self.folder)

    def text(self, data, key, default) -> str:
        value = data.get(key, default)
        return " ".join(value.split()) if isinstance(value, str) else default

    def name(self, data) -> str:
        name = data.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            self.err(("name",) if "name" in data else (), "expected a sweep name of letters, digits, '_', '.' and"
                                                          f" '-', got {name!r}")
            return "sweep"
        return name

    def size(self, data) -> int:
        if "size" not in data:
            return DEFAULT_SIZE_BYTES
        try:
            return parse_array_bytes(data["size"])
        except UnitError as exc:
            self.err(("size",), str(exc))
            return DEFAULT_SIZE_BYTES

    def seed(self, data) -> int:
        seed = data.get("seed", 1)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2 ** 63:
            self.err(("seed",), f"expected a whole number from 0 to 2^63 - 1, got {seed!r}")
            return 1
        return seed

    def names(self, data, key, valid, default) -> tuple:
        raw = data.get(key)
        if raw is None:
            return default
        if isinstance(raw, str):
            raw = [raw]
        if not isinstance(raw, list) or not raw:
            self.err((key,), f"expected a list of names from: {', '.join(valid)}")
            return default
        out = []
        for i, name in enumerate(raw):
            if name not in valid:
                near = closest(name, valid)
                self.err((key, i), f"unknown name {name!r}" + (f" (did you mean {near!r}?)" if near else "")
                         + f"; expected one of: {', '.join(valid)}")
            elif name not in out:
                out.append(name)
        return tuple(out)

    # -- boards
    def boards(self, data) -> list:
        raw = data.get("boards")
        if not isinstance(raw, list) or not raw:
            self.err(("boards",) if "boards" in data else (), "expected a list of boards: bundled names, files,"
                                                              " {board: ..., changes: ...} or {wirings: ...}")
            return []
        out: list = []
        for i, entry in enumerate(raw):
            try:
                out += self.board_entry(("boards", i), entry)
            except _Invalid:
                continue
        seen: dict = {}
        for i, b in enumerate(out):
            if b.label in seen:
                self.err(("boards",), f"two boards are labelled {b.label!r}; give one a 'label'")
            seen[b.label] = i
        return out

    def board_entry(self, path, entry) -> list:
        before = len(self.problems)   # this entry's problems, not an earlier entry's
        if isinstance(entry, str):
            topo = self.load_board(path, entry)
            return [BoardEntry(topo.name, topo, entry)]
        if not isinstance(entry, dict):
            self.fail(path, f"expected a board name, a file, or a mapping, got {entry!r}")
        if "wirings" in entry:
            return self.wiring_entry(path, entry)
        self.unknown_keys(path, entry, _BOARD_KEYS)
        if "board" not in entry:
            self.fail(path, "expected 'board: NAME' (with 'changes' and 'label') or 'wirings: {...}'")
        topo = self.load_board(path + ("board",), entry["board"])
        changes = entry.get("changes") or {}
        if not isinstance(changes, dict):
            self.fail(path + ("changes",), "expected a mapping such as {coherence: probe_filter}")
        for key, value in changes.items():
            try:
                topo.with_parameters({key: value})
            except SimnumaError as exc:
                self.err(path + ("changes", key), _change_message(exc, key))
        if len(self.problems) > before:
            raise _Invalid()
        topo = topo.with_parameters(changes) if changes else topo
        label = entry.get("label", topo.name)
        if not isinstance(label, str) or not label.strip() or not label.isprintable():
            self.fail(path + ("label",), f"expected a label (text on one line), got {label!r}")
        return [BoardEntry(label, topo, str(entry["board"]))]

    def wiring_entry(self, path, entry) -> list:
        self.unknown_keys(path, entry, _WIRING_ENTRY_KEYS)
        spec = entry["wirings"]
        if not isinstance(spec, dict):
            self.fail(path + ("wirings",), "expected {sockets: N, ports: P, io: K, spare_ports: false, parallel: 1}")
        self.unknown_keys(path + ("wirings",), spec, _WIRING_KEYS)
        values = {}
        for key, low, default in (("sockets", 1, None), ("ports", 1, None), ("io", 0, 0), ("parallel", 1, 1)):
            value = spec.get(key, default)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                self.fail(path + ("wirings", key), f"expected a whole number >= {low}, got {value!r}")
            values[key] = value
        spare = spec.get("spare_ports", False)
        if not isinstance(spare, bool):
            self.fail(path + ("wirings", "spare_ports"), f"expected true or false, got {spare!r}")
        if values["sockets"] > 16:
            self.fail(path + ("wirings", "sockets"), "expected at most 16 sockets: the search grows too fast beyond")
        template = self.load_board(path + ("from",), entry.get("from", "quartet"))
        routing = entry.get("routing")
        if routing is not None and routing not in _ROUTINGS:
            self.fail(path + ("routing",), f"expected one of {', '.join(_ROUTINGS)} (a generated board has no"
                                           f" route table), got {routing!r}")
        try:
            found = wirings(values["sockets"], values["ports"], values["io"], spare, values["parallel"])
        except TooManyWirings as exc:
            self.fail(path + ("wirings",), str(exc))     # what to change included
        except ValueError as exc:
            self.fail(path + ("wirings",), str(exc))
        if not found:
            self.fail(path + ("wirings",), f"no connected wiring of {values['sockets']} sockets with {values['ports']}"
                                           f" ports and {values['io']} I/O sockets" +
                      ("" if spare else " with every other port wired (spare_ports: true allows free ports)"))
        from ..topology import bundled_topologies

        found = named_wirings(found, [load_topology(n) for n in bundled_topologies()])
        out = []
        label = entry.get("label")
        if label is not None and (not isinstance(label, str) or not _NAME.match(label)):
            self.fail(path + ("label",), f"expected a prefix for the wirings' names (letters, digits, '_', '.' and '-'),"
                                         f" got {label!r}")
        for k, w in enumerate(found):
            try:
                board = wiring_board(template, w, routing)
            except SimnumaError as exc:   # the template's (the same for every wiring), or this wiring's
                self.fail(path + ("from",), _first_line(exc) if k == 0 else f"{w.name}: {_first_line(exc)}")
            name = f"{label}-{w.name}" if label else w.name
            out.append(BoardEntry(name, board, f"wiring of {template.name}", w.matches))
        return out

    def load_board(self, path, name):
        if not isinstance(name, str) or not name:
            self.fail(path, f"expected a bundled board name or a board file, got {name!r}")
        try:
            return load_topology_near(name, self.folder)
        except SimnumaError as exc:
            self.fail(path, _first_line(exc))

    # -- the grid
    def grid(self, data, boards) -> tuple:
        raw = data.get("grid")
        if raw is None:
            return ()
        if not isinstance(raw, dict):
            self.err(("grid",), "expected a mapping from a parameter path to a list of values")
            return ()
        out = []
        for key, values in raw.items():
            path = ("grid", key)
            if not isinstance(values, list) or not values:
                values = [values]
            if any(isinstance(v, (dict, list)) or v is None for v in values):
                self.err(path, "expected a list of values such as [4 GB/s, 8 GB/s]")
                continue
            if len(set(map(str, values))) != len(values):
                self.err(path, "a value is given twice")
            failures = []     # (value's index, message)
            for j, value in enumerate(values):
                for b in boards:
                    try:
                        b.topology.with_parameters({key: value})
                    except SimnumaError as exc:
                        failures.append((j, f"on {b.label}: {_change_message(exc, key)}"))
                        break
            if len(failures) == len(values) > 1 and len({message for _, message in failures}) == 1:
                self.err(path, failures[0][1])      # the path itself, whatever the value (an unknown parameter)
            else:
                for j, message in failures:
                    self.err(path + (j,) if isinstance(raw[key], list) else path, message)
            if not failures:
                out.append((str(key), tuple(values)))
        return tuple(out)

    def grid_points(self, boards, grid, cases) -> None:
        """Every board at every point of the grid (values of several paths together: ports and a link's count), and
        every case written out on it, checked before anything runs; the first point that fails is reported (the
        sets adapt to each board).  Beyond ``_MOST_CHECKED`` configurations, each value is checked alone."""
        explicit = [(i, c.case) for i, c in enumerate(cases) if c.kind == "case"]
        keys = [key for key, _ in grid]
        points = (itertools.product(*(values for _, values in grid)) if len(boards) * _product(grid) <= _MOST_CHECKED
                  else [tuple(v if k == key else values[0] for k, values in grid) for key, vs in grid for v in vs])
        for values in points:
            point = dict(zip(keys, values))
            for b in boards:
                where = f"on {b.label} at " + ", ".join(f"{k}={v}" for k, v in point.items())
                try:
                    topology = b.topology.with_parameters(point)
                except SimnumaError as exc:
                    self.err(("grid",), f"{where}: {_first_line(exc).split('with_parameters: ')[-1]}")
                    return
                for i, case in explicit:
                    try:
                        placed = case.placed(topology)
                        Workload.build(placed.threads, placed.background).check(topology)
                    except SimnumaError as exc:
                        self.err(("cases", i), f"{where}: {_first_line(exc)}")
                        return

    # -- cases
    def cases(self, data, boards) -> list:
        raw = data.get("cases")
        if not isinstance(raw, list) or not raw:
            self.err(("cases",) if "cases" in data else (), "expected a list of cases or named sets, e.g."
                                                            " ['0.0.w.1 1.0.w.0', {set: single, ops: [r]}]")
            self.bad_cases = True
            return []
        out = []
        for i, entry in enumerate(raw):
            try:
                out.append(self.case_entry(("cases", i), entry, boards))
            except _Invalid:
                self.bad_cases = True
                continue
        return out

    def case_entry(self, path, entry, boards) -> CaseSet:
        if isinstance(entry, str):
            try:
                case = parse_case(entry)
            except SimnumaError as exc:
                self.fail(path, _first_line(exc))
            for b in boards:
                try:
                    placed = case.placed(b.topology)
                    Workload.build(placed.threads, placed.background).check(b.topology)
                except SimnumaError as exc:
                    self.fail(path, f"on {b.label}: {_first_line(exc)}")
            return CaseSet("case", case, label=case.name)
        if not isinstance(entry, dict):
            self.fail(path, f"expected a case text or {{set: NAME, ops: [...]}}, got {entry!r}")
        self.unknown_keys(path, entry, _SET_KEYS)
        kind = entry.get("set")
        if kind not in SET_NAMES:
            near = closest(kind, SET_NAMES)
            self.fail(path + ("set",), f"unknown set {kind!r}" + (f" (did you mean {near!r}?)" if near else "")
                      + f"; expected one of: {', '.join(SET_NAMES)}")
        if "op" in entry and "ops" in entry:
            self.fail(path, "give 'op' or 'ops', not both")
        ops = entry.get("ops", entry.get("op", "w" if kind == "crossfire" else "r"))
        ops = [ops] if isinstance(ops, str) else ops
        if not isinstance(ops, list) or not ops or any(op not in MODEL_OPS or op == "l" and kind != "single"
                                                        for op in ops):
            self.fail(path + ("ops" if "ops" in entry else "op",),
                      f"expected ops from {', '.join(o for o in MODEL_OPS)} (the chase 'l' only in 'single'), got"
                      f" {entry.get('ops', entry.get('op'))!r}")
        background = entry.get("background", "")
        if not isinstance(background, str):
            self.fail(path + ("background",), f"expected a background such as full@very-high, got {background!r}")
        if background:
            try:
                parse_case(f"0.0.r.0 + {background}")
            except SimnumaError as exc:
                self.fail(path + ("background",), _first_line(exc))
        label = f"{kind} {'/'.join(ops)}" + (f" + {background}" if background else "")
        return CaseSet(kind, None, tuple(dict.fromkeys(ops)), background, label)


def _change_message(exc, key) -> str:
    """What a board says of a parameter change, without the file and path it would name itself."""
    message = _first_line(exc).split("with_parameters: ")[-1]
    for prefix in (f"{key!r}: ", f"{key}: "):
        if prefix in message:
            message = message.split(prefix, 1)[1]
    return message


def _first_line(exc) -> str:
    text = str(exc).removeprefix("<topology>: ")   # a board's own problem, not one of a file
    return text.splitlines()[0] if text else type(exc).__name__


def _product(grid) -> int:
    n = 1
    for _, values in grid:
        n *= len(values)
    return n


# the cases an aggregate comes from (spec.AGGREGATES), as a message names them
_NEEDS = {"single": "the idle single-thread cases ({set: single}, or {set: local} for the local latencies, without"
                    " background)",
          "crossfire": "the crossfire pairs ({set: crossfire})", "all-to-all": "the all-to-all cases ({set: all-to-all})"}


def _available(aggregate: str, cases) -> bool:
    """Whether the cases give ``aggregate`` a value (as :func:`simnuma.sweeps.workloads.aggregates` computes it)."""
    need = AGGREGATES[aggregate][2]
    if need is None:
        return True
    if need == "single":
        kinds = ("single", "local") if aggregate.startswith("local_") else ("single",)
        return any(c.kind in kinds and not c.background for c in cases)
    return any(c.kind == need for c in cases)


def _default_rank(cases) -> tuple:
    rank = tuple(a for a in ("local_latency_ns_worst", "crossfire_penalty", "all_to_all_GBps") if _available(a, cases))
    return rank or ("mean_time_percent",)
