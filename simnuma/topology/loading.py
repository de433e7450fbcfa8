"""Loading a board: a bundled one by name (:mod:`simnuma.bundled`), a file by path, a YAML text or a dict."""
from __future__ import annotations

from pathlib import Path

from .. import bundled
from ..errors import Problem, TopologyError
from ..fileio import UnreadableInput, path_kind, read_input
from ..yamlsrc import Source, load_yaml, source_from_data
from .board import Topology
from .validator import _Validator

# ---------------------------------------------------------------- loading

def bundled_topologies() -> list:
    """Names of the boards that ship with simnuma."""
    return bundled.names("boards")


def _bundled_text(name: str):
    """``(text, source name)`` of a bundled board; the source is its file name (``quartet.yaml``), as
    results record it."""
    found = bundled.read("boards", name)
    return (found[0], found[1].rsplit("/", 1)[-1]) if found else None


def _looks_like_path(text: str) -> bool:
    path = Path(text)
    return path.suffix in (".yaml", ".yml") or "/" in text or "\\" in text or path_kind(text) != ""


def load_topology(name_or_path) -> Topology:
    """Load a bundled board by name (``quartet``) or a board file by path."""
    if isinstance(name_or_path, Topology):
        return name_or_path
    text_name = str(name_or_path)
    if _looks_like_path(text_name):
        return parse_topology(_read_board_file(text_name), text_name)
    bundled = _bundled_text(text_name)
    if bundled is None:
        names = ", ".join(bundled_topologies())
        raise TopologyError([Problem(text_name, None, "",
                                     f"no such board file or bundled board; bundled boards: {names}")])
    return parse_topology(bundled[0], bundled[1])


def load_topology_near(name: str, folder=None) -> Topology:
    """:func:`load_topology`, a relative file name looked for in ``folder`` first (the folder of the study or
    sweep file that names the board)."""
    where = name
    if folder is not None and not Path(name).is_absolute() and (Path(folder) / name).is_file():
        where = str(Path(folder) / name)
    return load_topology(where)


def _read_board_file(path: str) -> str:
    try:
        return read_input(path)
    except UnreadableInput as exc:
        reason = str(exc)
        message = reason if reason.startswith("not ") else f"cannot read board file: {reason}"
        raise TopologyError([Problem(path, None, "", message)]) from None


def parse_topology(text: str, file: str = "<string>") -> Topology:
    """Validate YAML text into a Topology; raise TopologyError listing every problem."""
    return _build(load_yaml(text, file))


def topology_from_dict(doc: dict, source: str = "<dict>") -> Topology:
    """Validate a plain document (as ``to_dict`` gives) into a Topology."""
    return _build(source_from_data(doc, source))


def _build(src: Source) -> Topology:
    v = _Validator(src)
    topo = v.run() if src.data is not None or not src.problems else None
    if v.problems or topo is None:
        problems = [p for p in v.problems if p in src.problems or not _within_reported(p.path, src.problems)]
        problems.sort(key=lambda p: (p.line or 0))
        raise TopologyError(problems)
    return topo


def _within_reported(path: str, reported: list) -> bool:
    """Whether the value at ``path`` holds something the YAML reading reported already (a recursive alias in
    it, an unreadable scalar): what the validator then says of the whole value follows from that."""
    return bool(path) and any(q.path.startswith((path + ".", path + "[")) for q in reported)
