"""Loading measurements from files, benchmark suite folders and bundled reference datasets by name."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .. import bundled
from ..errors import CalibrationError, shown
from ..fileio import path_kind
from .data import BENCH_FORMAT, BENCH_FORMATS, REFERENCE_FORMAT, SUITE_FORMAT, MeasurementSet, _parse_json, _read_text
from .reference import _load_reference
from .reports import _load_suite_dir, _load_suite_index, _set_from_reports

# ------------------------------------------------------------------ loading

def load_measurements(sources, topology=None, tool_case: str | None = None) -> MeasurementSet:
    """Read every source (paths or dataset names) into one set of one machine.

    With ``topology``, a source that is another tool's output (Intel MLC, STREAM, likwid-bench:
    :mod:`simnuma.formats.imports`) is read as the reference dataset ``simnuma import`` would write for
    that board, a one-thread run placed by ``tool_case``.  Raises CalibrationError when a source
    cannot be read, when two sources describe different machines, or when a measurement appears twice.
    """
    if isinstance(sources, (str, Path)):
        sources = [sources]
    sets = [load_source(s, topology, tool_case) for s in sources]
    if not sets:
        raise CalibrationError("no measurement file given")
    first = sets[0]
    for other in sets[1:]:
        if other.machine.key != first.machine.key:
            raise CalibrationError(f"{other.files[0]}: measured on {other.machine.description}, but"
                                   f" {first.files[0]} on {first.machine.description}: one machine at a time")
    seen: dict[tuple, str] = {}   # what a measurement measures (threads in any order) -> the file it is in
    for s in sets:
        for m in s.measurements:
            if m.workload_key in seen:
                raise CalibrationError(f"{m.origin}: {m.key} is measured twice (also in {seen[m.workload_key]})")
            seen[m.workload_key] = m.origin
    measurements = tuple(m for s in sets for m in s.measurements)
    files = tuple(f for s in sets for f in s.files)
    return MeasurementSet(measurements, first.machine, files, frozenset().union(*(s.peaks for s in sets)),
                          tuple(note for s in sets for note in s.notes))


def load_source(source, topology=None, tool_case: str | None = None) -> MeasurementSet:
    """One file, folder or dataset name (a tool's output too, given the board: see load_measurements)."""
    text = str(source)
    path = Path(text)
    kind = path_kind(text)
    if kind == "folder":
        return _load_suite_dir(path)
    if kind:     # a file, or something that is not one: reading it says which
        return _load_file(path, shown(text), topology, tool_case)
    bundled = resolve_reference(text)
    if bundled is not None:
        content, where = bundled
        return _load_reference(content, where)
    names = ", ".join(reference_datasets()) or "none"
    raise CalibrationError(f"{shown(text)}: no such measurement file, folder or reference dataset"
                           f" (bundled datasets: {names})")


def _load_file(path: Path, shown: str, topology=None, tool_case: str | None = None) -> MeasurementSet:
    content = _read_text(path, shown)
    if topology is not None and not content.lstrip().startswith("{"):
        from ..errors import SpecError
        from ..formats.imports import detect_tool, reference_yaml

        tool = detect_tool(content)
        if tool is not None:
            notes: list = []
            try:
                content = reference_yaml(tool, content, topology, path.name, tool_case, notes)
            except SpecError as exc:
                raise CalibrationError(f"{shown}: {tool} output: {exc}") from None
            loaded = _load_reference(content, shown)
            return replace(loaded, notes=tuple(f"{shown}: {note}" for note in notes))
    if path.suffix.lower() == ".json" or content.lstrip().startswith("{"):
        data = _parse_json(content, shown)
        kind = data.get("format") if isinstance(data, dict) else None
        if kind in BENCH_FORMATS:
            return _set_from_reports([(data, shown)], shown)
        if kind == SUITE_FORMAT:
            return _load_suite_index(data, path.parent, shown)
        if kind == REFERENCE_FORMAT:
            return _load_reference(content, shown)
        raise CalibrationError(f"{shown}: unknown format {kind!r}; expected {BENCH_FORMAT!r} (simnuma bench run),"
                               f" {SUITE_FORMAT!r} (simnuma bench suite) or {REFERENCE_FORMAT!r}")
    try:
        return _load_reference(content, shown)
    except CalibrationError as exc:
        if _a_mapping(content):
            raise   # a YAML document (a reference dataset, a board...): its own error says what and where
        what = ("nor the output of a tool simnuma reads (Intel MLC, STREAM, likwid-bench)" if topology is not None
                else "(a tool's output, Intel MLC, STREAM or likwid-bench, is read here once simnuma import has made"
                     " it a reference dataset)")
        raise CalibrationError(f"{shown}: not measurements (a simnuma bench report or suite, a reference dataset)"
                               f" {what} ({exc})") from None


def _a_mapping(text: str) -> bool:
    """Whether ``text`` is a YAML mapping, as every measurement file and board is."""
    import yaml

    try:
        return isinstance(yaml.safe_load(text), dict)
    except yaml.YAMLError:
        return False


# -- reference datasets

def reference_datasets() -> list:
    """Names of the bundled reference datasets."""
    return bundled.names("reference")


def resolve_reference(name: str):
    """``(text, shown path)`` of a bundled dataset by name, or None."""
    return bundled.read("reference", name)
