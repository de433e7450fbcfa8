"""YAML reading that remembers where every value came from.

Validation messages say ``file:line: key.path: message``; to do that the loader
keeps, beside the plain Python data, a map from each key path (a tuple of keys
and list indices) to the line it was written on.  Problems that plain PyYAML
either hides or turns into exceptions become :class:`~simnuma.errors.Problem`
entries instead: syntax errors, duplicate mapping keys (which PyYAML silently
merges), non-scalar keys, recursive aliases and alias expansions too large to
be a board description, and nesting deeper than :data:`MAX_DEPTH` (found by
scanning, before PyYAML's recursive composer could overflow the stack).  Merge
keys (``<<: *anchor``) are supported: explicit keys win over merged ones, and
earlier merged mappings over later ones.  Numbers are read as YAML 1.2 reads
them in one respect that matters here: ``1:30`` is text, not YAML 1.1's
sexagesimal 90.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml

from .errors import Problem

__all__ = ["Source", "load_yaml", "dump_yaml", "source_from_data", "path_text", "document_kind", "MAX_NODES"]

KeyPath = tuple
MERGE_TAG = "tag:yaml.org,2002:merge"
MAX_NODES = 200_000  # YAML nodes after alias expansion; a board has a few hundred
MAX_DEPTH = 64       # nested collections; a board is a few levels deep

# YAML 1.1's base-60 numbers (1:30 is 90), which YAML 1.2 dropped: such a scalar stays text
_SEXAGESIMAL = r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?"
# YAML 1.2's floats with an exponent that YAML 1.1 reads as text: no point (1e2) or an unsigned exponent (1.08e2)
_EXPONENT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)[eE][-+]?[0-9]+$")
_FLOAT = "tag:yaml.org,2002:float"


def _yaml12_numbers(loader):
    """A subclass of ``loader`` whose int and float resolvers read numbers as YAML 1.2 does: no base-60 numbers,
    and every exponent form a float."""
    resolvers = {}
    for first, entries in loader.yaml_implicit_resolvers.items():
        kept = []
        for tag, regexp in entries:
            if tag in ("tag:yaml.org,2002:int", _FLOAT):
                regexp = re.compile(r"^(?!" + _SEXAGESIMAL + r"$)" + regexp.pattern.lstrip("^"), regexp.flags)
            kept.append((tag, regexp))
        resolvers[first] = kept
    for first in "0123456789+-.":
        resolvers[first] = resolvers.get(first, []) + [(_FLOAT, _EXPONENT)]
    return type(f"{loader.__name__}12", (loader,), {"yaml_implicit_resolvers": resolvers})


_LOADER = _yaml12_numbers(yaml.SafeLoader)
_FAST_LOADER = _yaml12_numbers(yaml.CSafeLoader) if hasattr(yaml, "CSafeLoader") else None
# the writer asks the same resolvers whether a text written plain would read back as text, and quotes it if not
_DUMPER = _yaml12_numbers(yaml.SafeDumper)


def dump_yaml(data, **options) -> str:
    """``data`` as YAML that :func:`load_yaml` reads back as ``data`` (``options`` as ``yaml.safe_dump`` takes)."""
    return yaml.dump(data, Dumper=_DUMPER, **options)


def path_text(path: KeyPath) -> str:
    """``('links', 2, 'a')`` -> ``links[2].a``."""
    out = ""
    for part in path:
        if isinstance(part, int) and not isinstance(part, bool):
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
    unreadable: set = field(default_factory=set)   # key paths (as path_text) of values reported unreadable

    def line(self, path: KeyPath) -> int | None:
        """Line of ``path``, or of its nearest ancestor that has one."""
        path = tuple(path)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), None)

    def problem(self, path: KeyPath, message: str) -> Problem:
        return Problem(self.file, self.line(path), path_text(tuple(path)), message)


class _TooLarge(Exception):
    """Alias expansion produced more than MAX_NODES nodes."""


class _Reader:
    """Turns a composed YAML node tree into plain data plus a line map."""

    def __init__(self, file: str):
        self.file = file
        self.lines: dict = {}
        self.problems: list = []
        self.unreadable: set = set()
        self.constructor = yaml.SafeLoader("")
        self.active: set = set()  # ids of the collection nodes being converted (alias cycles)
        self.count = 0

    def close(self) -> None:
        self.constructor.dispose()

    def report(self, node, path: KeyPath, message: str) -> None:
        self.problems.append(Problem(self.file, node.start_mark.line + 1, path_text(path), message))

    def convert(self, node, path: KeyPath, lines: dict):
        self.count += 1
        if self.count > MAX_NODES:
            raise _TooLarge()
        lines.setdefault(path, node.start_mark.line + 1)
        if not isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
            return self.scalar(node, path)
        if id(node) in self.active:
            self.report(node, path, "recursive alias (an anchor used inside itself)")
            return None
        self.active.add(id(node))
        try:
            if isinstance(node, yaml.MappingNode):
                return self.mapping(node, path, lines)
            return [self.convert(item, path + (i,), lines) for i, item in enumerate(node.value)]
        finally:
            self.active.discard(id(node))

    def scalar(self, node, path: KeyPath, key: bool = False):
        """The Python value of a scalar (a value at ``path``, or a ``key`` in the mapping there); an unconstructible
        one is reported and kept as text."""
        try:
            return self.constructor.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
            reason = exc.problem if isinstance(exc, yaml.MarkedYAMLError) and exc.problem else str(exc)
            if isinstance(exc, ValueError) and "digits" in reason:    # Python's limit on int() of a long text
                reason = f"a number of {sum(c.isdigit() for c in node.value)} digits is too long to read"
            text = node.value if len(node.value) <= 40 else node.value[:37] + "..."
            self.report(node, path, f"cannot read the value {text!r}: {reason.splitlines()[0]}")
            if not key:
                self.unreadable.add(path_text(path))
            return node.value
        finally:
            self.constructor.constructed_objects.clear()

    def mapping(self, node, path: KeyPath, lines: dict) -> dict:
        out: dict = {}
        merges = []
        for key_node, value_node in node.value:
            if key_node.tag == MERGE_TAG:
                merges.append(value_node)
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                self.report(key_node, path, "a mapping key must be a scalar (text or a number)")
                continue
            key = self.scalar(key_node, path, key=True)
            child = path + (key,)
            if key in out:
                self.report(key_node, child, f"duplicate key (first given on line {lines[child]})")
                continue
            lines[child] = key_node.start_mark.line + 1
            out[key] = self.convert(value_node, child, lines)
        for value_node in merges:
            self.merge_into(out, value_node, path, lines)
        return out

    def merge_into(self, out: dict, value_node, path: KeyPath, lines: dict) -> None:
        """Apply one ``<<:`` entry: add the keys ``out`` does not have yet."""
        sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
        for source in sources:
            if not isinstance(source, yaml.MappingNode):
                self.report(value_node, path, "a merge key '<<' needs a mapping or a list of mappings")
                return
            merged_lines: dict = {}
            merged = self.convert(source, path, merged_lines)
            if not isinstance(merged, dict):
                return
            for key, value in merged.items():
                if key in out:
                    continue
                out[key] = value
                prefix = path + (key,)
                for sub, line in merged_lines.items():
                    if sub[:len(prefix)] == prefix:
                        lines.setdefault(sub, line)


def load_yaml(text: str, file: str = "<string>") -> Source:
    """Parse ``text``; syntax errors and the problems above become ``Source.problems``."""
    try:
        too_deep = _too_deep(text)
        if too_deep is not None:
            return Source(file, None, {}, [Problem(file, too_deep, "", f"nested more than {MAX_DEPTH} levels deep"
                                                                       " (a board or a study is a few levels deep)")])
        node = _compose(text)
    except yaml.MarkedYAMLError as exc:
        return Source(file, None, {}, [_syntax_problem(file, exc)])
    except yaml.YAMLError as exc:
        return Source(file, None, {}, [Problem(file, None, "", f"YAML error: {exc}")])
    if node is None:
        return Source(file, None, {(): 1}, [])
    reader = _Reader(file)
    try:
        data = reader.convert(node, (), reader.lines)
    except _TooLarge:
        return Source(file, None, {}, [Problem(file, None, "",
                                               f"more than {MAX_NODES} values after expanding aliases")])
    finally:
        reader.close()
    return Source(file, data, reader.lines, reader.problems, reader.unreadable)


def _compose(text: str):
    """The node tree of ``text``: libyaml's parser when present (fast), else PyYAML's.

    Errors always come from PyYAML's parser, so the messages are the same everywhere.
    """
    if _FAST_LOADER is not None:
        try:
            return yaml.compose(text, Loader=_FAST_LOADER)
        except yaml.YAMLError:
            pass
    return yaml.compose(text, Loader=_LOADER)


_OPEN = (yaml.BlockMappingStartToken, yaml.BlockSequenceStartToken, yaml.FlowMappingStartToken,
         yaml.FlowSequenceStartToken)
_CLOSE = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)


def _too_deep(text: str) -> int | None:
    """The line where collections nest deeper than MAX_DEPTH, or None (the scanner keeps no stack of frames)."""
    depth = 0
    try:
        for token in yaml.scan(text, Loader=_FAST_LOADER or _LOADER):
            if isinstance(token, _OPEN):
                depth += 1
                if depth > MAX_DEPTH:
                    return token.start_mark.line + 1
            elif isinstance(token, _CLOSE):
                depth -= 1
    except yaml.MarkedYAMLError as exc:
        # PyYAML 6.0.3 and later stop far deeper nesting in the scanner, which may read ahead of our count
        if "nesting depth" not in str(exc.problem):
            raise
        mark = exc.problem_mark or exc.context_mark
        return mark.line + 1 if mark is not None else 1
    return None


def _syntax_problem(file: str, exc: yaml.MarkedYAMLError) -> Problem:
    """``file:line: YAML syntax error: ...``, naming where the enclosing construct began."""
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark is not None else None
    message = f"YAML syntax error: {exc.problem or exc}"
    context = exc.context_mark
    if exc.context and context is not None and context.line + 1 != line:
        message += f" ({exc.context} that starts on line {context.line + 1})"
    return Problem(file, line, "", message)


# what each of simnuma's documents is, by the start of its format (a board has no format: its nodes say it)
_KINDS = (("simnuma-reference/", "a reference dataset"), ("simnuma-study-result/", "a study's results"),
          ("simnuma-study/", "a study"), ("simnuma-sweep/", "a sweep file"), ("simnuma-bench-suite/", "a benchmark suite index"),
          ("simnuma-bench/", "a benchmark report"))


def document_kind(data: object) -> str | None:
    """What kind of simnuma document ``data`` is (``a study``, ``a board``, ...) as its ``format`` says, or a board
    by its ``nodes``; None when it does not say.  A reader given another kind says so in one line, instead of
    refusing every key."""
    if not isinstance(data, dict):
        return None
    fmt = data.get("format")
    if isinstance(fmt, str):
        return next((kind for prefix, kind in _KINDS if fmt.startswith(prefix)), None)
    if "format" not in data and "nodes" in data and ("links" in data or "defaults" in data):
        return "a board"
    return None


def source_from_data(data: object, file: str = "<dict>") -> Source:
    """A Source for data built in Python: no line numbers, lists for tuples."""
    return Source(file, _plain(data), {}, [])


def _plain(value):
    """Deep copy with tuples turned into lists, as a YAML round trip would give."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
