"""Plain-text tables for the terminal, one format for every command.

>>> print("\\n".join(text_table(["case", "GB/s"], [["0.0.r.0", 1.64], ["0.0.w.1 1.0.w.0", 2.2]])))
case             GB/s
---------------  ----
0.0.r.0          1.64
0.0.w.1 1.0.w.0  2.2
"""
from __future__ import annotations

__all__ = ["text_table", "count", "short_case", "LONG_CASE"]

LONG_CASE = 120  # characters: a case name longer than this is squeezed in tables (short_case)


def count(number: int, noun: str) -> str:
    """``1 link``, ``2 links``: a number of things, in words a reader expects.

    >>> count(1, "configuration"), count(3, "link")
    ('1 configuration', '3 links')
    """
    return f"{number} {noun}{'' if number == 1 else 's'}"


def text_table(headers, rows) -> list:
    """Lines of a table: left-aligned columns two spaces apart, a rule under the headers, no trailing blanks."""
    rows = [[str(c) for c in r] for r in rows]
    widths = [max([len(str(h))] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    lines = ["  ".join(f"{h:<{w}}" for h, w in zip(map(str, headers), widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(f"{c:<{w}}" for c, w in zip(r, widths)).rstrip() for r in rows]
    return lines


def short_case(case: str, width: int = LONG_CASE) -> str:
    """A case's name as a table shows it: one longer than ``width`` keeps, of each side of its ``+``, the first
    two threads and the last, and says how many there are (files and JSON keep the whole name).

    >>> short_case("0.0.l.0 + " + " ".join(f"0.{k}.w.0@2GB/s" for k in range(1, 64)))
    '0.0.l.0 + 0.1.w.0@2GB/s 0.2.w.0@2GB/s ... 0.63.w.0@2GB/s (63 threads)'
    >>> short_case("0.0.w.1 1.0.w.0")
    '0.0.w.1 1.0.w.0'
    """
    if len(case) <= width:
        return case
    return " + ".join(_squeezed(side.split()) for side in case.split(" + "))


def _squeezed(words: list) -> str:
    if len(words) <= 4:
        return " ".join(words)
    return f"{words[0]} {words[1]} ... {words[-1]} ({len(words)} threads)"
