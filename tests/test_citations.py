"""Every fact in a bundled YAML file says where it comes from (issue 13, point 6).

A *value line* of a bundled board (``topologies/``), study (``experiments/``) or reference dataset
(``experiments/reference/``) sets a number or a quantity (``latency: 9.671 ns``,
``buffers: {request: 2, posted: 3, response: 3}``, ``value: 3.5 GB/s``, a thread's rate
``0.1.r.0@4GB/s``), a boolean (``ddr: true``) or one of the hardware choices in ``FACT_KEYS``.
It must carry a citation in one of three places:

* its own comment (with the comment lines that continue it, indented further than the key);
* the nearest comment block above it among its siblings (the block heading a group of list items
  or keys), the comment block at the top of the file excepted: that introduces the file;
* the comment of a mapping or list that encloses it (the comment on the parent's line, or the
  block directly above the parent).

A citation is the short name of a source in the Sources table of ``docs/reference.md``
(``AN40555``, ``BKDG K8``, ...), ``docs/reference.md`` itself, ``assumption`` (no public document
gives the value), or ``simnuma calibrate`` (fitted, saying on what).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from simnuma.calibrate.boardfile import split_comment   # the one YAML comment splitter

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "reference.md"
BUNDLED = sorted([*ROOT.glob("topologies/*.yaml"), *ROOT.glob("experiments/*.yaml"),
                  *ROOT.glob("experiments/reference/*.yaml")])

# Keys whose numbers are structure, not facts about hardware or measurements.
EXEMPT_KEYS = {
    "id": "a node's number names the node",
    "a": "a link's end: the wiring is cited on the board's links: block or header",
    "b": "a link's end: the wiring is cited on the board's links: block or header",
    "node": "the node an I/O link, a measurement or a claim is about: a name, not a value",
    "phenomenon": "a claim's label: the number of a phenomenon in docs/reference.md's numbered list",
}
# Keys whose (non-numeric) values are still facts about the hardware.
FACT_KEYS = {"coherence", "routing", "scheduler", "page_policy", "address_map"}

_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:\s*[A-Za-z%][\w/%]*)?")
_PAIR = re.compile(r"(?<![\w.-])([A-Za-z_][\w-]*)\s*:(?:\s+|$)([^,{}\[\]]*)")
_BLOCK_SCALAR = re.compile(r":\s*[>|][-+]?\s*$")


def source_names(text: str | None = None) -> list:
    """The short names in the Sources table of docs/reference.md (``| **NAME** | ... |``)."""
    text = REFERENCE.read_text(encoding="utf-8") if text is None else text
    section = text.split("## Sources", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\|\s*\*\*(.+?)\*\*\s*\|", section, flags=re.M)


def citation_pattern(names) -> re.Pattern:
    alternatives = [rf"(?<![\w-]){re.escape(n)}(?![\w-])" for n in names]
    alternatives += [r"docs/reference\.md", r"(?i:\bassumptions?\b)", r"simnuma calibrate"]
    return re.compile("|".join(alternatives))


class _Line:
    """A logical line: one physical line, or a flow collection continued over several."""

    def __init__(self, first: int, indent: int):
        self.first = first          # 0-based number of its first physical line
        self.last = first
        self.indent = indent
        self.code = ""
        self.comments = []          # its own comments, one per physical line that has one
        self.comment_only = False
        self.column = indent        # a comment-only line: where its '#' is
        self.trailing = []          # comment-only lines continuing its comment (indented further)


def logical_lines(text: str) -> list:
    """The lines of a YAML text as :class:`_Line`, block-scalar content and blank lines left out."""
    out = []
    scalar_indent = None            # inside a block scalar of a key at this indent
    open_line, depth = None, 0
    for number, raw in enumerate(text.splitlines()):
        stripped = raw.strip()
        indent = len(raw) - len(raw.lstrip())
        if scalar_indent is not None:
            if not stripped or indent > scalar_indent:
                continue
            scalar_indent = None
        if not stripped:
            continue
        code, comment = split_comment(raw)
        if open_line is not None:   # a flow collection continues
            open_line.last = number
            open_line.code += " " + code.strip()
            if comment is not None:
                open_line.comments.append(comment)
            depth += _depth(code)
            if depth <= 0:
                open_line, depth = None, 0
            continue
        line = _Line(number, indent)
        if not code.strip():
            line.comment_only = True
            line.column = indent
            line.comments.append(comment)
            above = out[-1] if out else None
            if above is not None and not above.comment_only and above.comments and indent > above.indent \
                    and above.last + len(above.trailing) == number - 1:
                above.trailing.append(comment)     # continues the comment of the line above
                continue
            out.append(line)
            continue
        line.code = code.strip()
        if comment is not None:
            line.comments.append(comment)
        out.append(line)
        depth = _depth(code)
        if depth > 0:
            open_line = line
        elif _BLOCK_SCALAR.search(code.rstrip()):
            scalar_indent = indent
    return out


def _depth(code: str) -> int:
    code = re.sub(r"\"[^\"]*\"|'[^']*'", "", code)
    return code.count("{") + code.count("[") - code.count("}") - code.count("]")


def facts(code: str) -> list:
    """The keys on a line of code that set a fact (``@RATE`` for a thread's rate)."""
    code = re.sub(r"\"[^\"]*\"|'[^']*'", "", code)
    found = []
    for key, value in _PAIR.findall(code):
        value = value.strip()
        if key in EXEMPT_KEYS:
            continue
        if _NUMBER.fullmatch(value) or value in ("true", "false") or (key in FACT_KEYS and value):
            found.append(key)
    if re.search(r"@[-+]?\.?\d", code):
        found.append("@RATE")
    return found


def _comment_of(line: _Line) -> str:
    return " ".join(line.comments + line.trailing)


def _block_above(lines: list, k: int, indent: int, header_end: int) -> str:
    """The nearest comment block above ``lines[k]`` among its siblings (not the file's header)."""
    j = k - 1
    while j >= 0:
        line = lines[j]
        if line.comment_only:
            if line.column > indent:
                j -= 1
                continue
            block = []
            while j >= 0 and lines[j].comment_only and lines[j].column <= indent:
                block.append(lines[j])
                j -= 1
            if block[-1].first < header_end:
                return ""
            return " ".join(_comment_of(b) for b in block)
        if line.indent < indent:
            return ""               # the parent: no sibling block above
        j -= 1
    return ""


def uncited(text: str, pattern: re.Pattern) -> list:
    """``(line number, keys, line)`` of every value line of ``text`` that cites nothing."""
    lines = logical_lines(text)
    physical = text.splitlines()
    header_end = next((line.first for line in lines if not line.comment_only), len(physical))
    missing = []
    for k, line in enumerate(lines):
        if line.comment_only:
            continue
        keys = facts(line.code)
        if not keys:
            continue
        context = [_comment_of(line), _block_above(lines, k, line.indent, header_end)]
        indent = line.indent
        for j in range(k - 1, -1, -1):      # every enclosing mapping or list
            parent = lines[j]
            if parent.comment_only or parent.indent >= indent:
                continue
            indent = parent.indent
            context += [_comment_of(parent), _block_above(lines, j, parent.indent, header_end)]
            if indent == 0:
                break
        if not pattern.search(" ".join(context)):
            missing.append((line.first + 1, keys, physical[line.first].strip()))
    return missing


# ------------------------------------------------------------------ the checker itself

PATTERN_FOR_TESTS = citation_pattern(["AN40555", "BKDG K8"])


def test_an_uncited_number_is_reported():
    text = ("# a board (AN40555): the header cites, but sources no value\n"
            "defaults:\n"
            "  cores: 2                # dual-core\n"
            "  memory:\n"
            "    latency: 60 ns        # assumption\n"
            "    bandwidth: 6.4 GB/s\n")
    assert [(n, keys) for n, keys, _ in uncited(text, PATTERN_FOR_TESTS)] == [(3, ["cores"]), (6, ["bandwidth"])]


def test_citations_count_on_the_line_in_its_continuation_in_the_block_above_and_on_the_parent():
    text = ("defaults:\n"
            "  cores: 2                # dual-core, the note's\n"
            "                          # processors (AN40555)\n"
            "  ports: 3                # three links per socket\n"
            "  dram:                   # BKDG K8, DRAM controller\n"
            "    clock: 200 MHz\n"
            "measurements:\n"
            "  # single-thread times, AN40555 Figs. 3 and 4\n"
            "  - {case: 0.0.r.0, metric: time_percent, value: 100}\n"
            "  - {case: 0.0.r.1, metric: time_percent,\n"
            "     value: 108}\n"
            "  # link loads\n"
            "  - {case: 0.0.r.1, link: 0->1, value: 752 MB/s}\n"
            "  - {case: 0.0.w.1, link: 0->1, value: 2.2 GB/s}   # BKDG K8, not really\n"
            "description: >-\n"
            "  prose with numbers: 3 GB/s\n"
            "nodes:\n"
            "  - {id: 0}\n"
            "links:\n"
            "  - {a: 0, b: 1}\n")
    # the continuation of cores' comment does not source ports; the block above a list item counts
    # for the items up to the next block; block scalars and exempt keys are not value lines
    assert [n for n, _, _ in uncited(text, PATTERN_FOR_TESTS)] == [4, 13]


def test_a_rate_and_a_boolean_are_facts_and_quoted_text_is_not():
    assert facts("background: [0.1.r.0@4GB/s, 1.1.r.1@4GB/s]") == ["@RATE"]
    assert facts("ddr: true") == ["ddr"]
    assert facts("coherence: broadcast") == ["coherence"]
    assert facts('faster: "quartet-full: 0.0.r.3"') == []
    assert facts("baseline: 0.0.r.0") == [] and facts("link: 0->1") == []
    assert facts("window: {r: 3, w: 5, t: 3}") == ["r", "w", "t"]


def test_the_reference_page_lists_its_sources():
    names = source_names()
    assert len(names) >= 10 and "AN40555" in names, names


# ------------------------------------------------------------------ the bundled files

@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_value_in_a_bundled_yaml_cites_its_source(path):
    missing = uncited(path.read_text(encoding="utf-8"), citation_pattern(source_names()))
    assert not missing, "\n".join(f"{path.relative_to(ROOT)}:{n}: {', '.join(keys)} cites no source of "
                                  f"docs/reference.md, 'assumption' or 'simnuma calibrate': {line}"
                                  for n, keys, line in missing)


def test_the_bundled_files_are_found():
    names = {p.relative_to(ROOT).as_posix() for p in BUNDLED}
    assert {"topologies/quartet.yaml", "topologies/x6440.yaml", "experiments/quartet-crossfire.yaml",
            "experiments/reference/quartet-single-thread.yaml"} <= names


_PATH = re.compile(r"(?<![\w./-])((?:\.\.?/)?[\w.-]+(?:/[\w.-]+)*\.(?:md|yaml|py))\b")


@pytest.mark.parametrize("path", [*BUNDLED, REFERENCE], ids=lambda p: str(p.relative_to(ROOT)))
def test_cited_files_are_in_the_repository(path):
    """A file a comment (or the reference page) names exists in the repository: nothing refers outside it."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".yaml":     # its comments, but not a command line shown as an example (it names its output)
        comments = (split_comment(line)[1] for line in text.splitlines())
        text = "\n".join(c for c in comments if c and not c.strip().startswith("simnuma "))
    bad = []
    for name in _PATH.findall(text):
        candidates = [(ROOT / name).resolve(), (path.parent / name).resolve()]
        if not any(c.is_relative_to(ROOT) and c.exists() and ".venv" not in c.parts for c in candidates):
            bad.append(name)
    assert not bad, f"{path.relative_to(ROOT)} names files that are not in the repository: {bad}"
