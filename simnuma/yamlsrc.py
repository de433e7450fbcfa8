"""YAML reading that remembers where every value came from.

Validation messages say ``file:line: key.path: message``; to do that the loader
keeps, beside the plain Python data, a map from each key path (a tuple of keys
and list indices) to the line it was written on.  Duplicate mapping keys, which
plain PyYAML silently merges, are reported as problems.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from .errors import Problem

__all__ = ["Source", "load_yaml", "path_text"]

Path = tuple


def path_text(path: Path) -> str:
    """``('links', 2, 'a')`` -> ``links[2].a``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


@dataclass
class Source:
    """Plain data read from a YAML file, with the line of every key path."""

    file: str
    data: object
    lines: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)

    def line(self, path: Path) -> int | None:
        """Line of ``path``, or of its nearest ancestor that has one."""
        path = tuple(path)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), None)

    def problem(self, path: Path, message: str) -> Problem:
        return Problem(self.file, self.line(path), path_text(tuple(path)), message)


def _convert(node, path, lines, problems, file):
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        out = {}
        for key_node, value_node in node.value:
            key = _scalar(key_node)
            if isinstance(key, (list, dict)):
                problems.append(Problem(file, key_node.start_mark.line + 1, "", "a mapping key must be a scalar"))
                continue
            child = path + (key,)
            if key in out:
                problems.append(Problem(file, key_node.start_mark.line + 1, path_text(child),
                                        f"duplicate key (first given on line {lines[child]})"))
                continue
            lines[child] = key_node.start_mark.line + 1
            out[key] = _convert(value_node, child, lines, problems, file)
        return out
    if isinstance(node, yaml.SequenceNode):
        items = []
        for i, item in enumerate(node.value):
            items.append(_convert(item, path + (i,), lines, problems, file))
        return items
    return _scalar(node)


_CONSTRUCTOR = yaml.SafeLoader("")


def _scalar(node):
    if isinstance(node, yaml.ScalarNode):
        return _CONSTRUCTOR.construct_object(node, deep=True)
    return _CONSTRUCTOR.construct_object(node, deep=True)


def load_yaml(text: str, file: str = "<string>") -> Source:
    """Parse ``text``; syntax errors become problems rather than exceptions."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        msg = f"YAML syntax error: {exc.problem or exc}"
        return Source(file, None, {}, [Problem(file, line, "", msg)])
    except yaml.YAMLError as exc:  # pragma: no cover - other reader errors
        return Source(file, None, {}, [Problem(file, None, "", f"YAML error: {exc}")])
    if node is None:
        return Source(file, None, {(): 1}, [])
    lines: dict = {}
    problems: list = []
    try:
        data = _convert(node, (), lines, problems, file)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return Source(file, None, {}, [Problem(file, mark.line + 1 if mark else None, "", f"YAML error: {exc}")])
    return Source(file, data, lines, problems)
