"""Plain-text tables for the terminal, one format for every command.

>>> print("\\n".join(text_table(["case", "GB/s"], [["0.0.r.0", 1.64], ["0.0.w.1 1.0.w.0", 2.2]])))
case             GB/s
---------------  ----
0.0.r.0          1.64
0.0.w.1 1.0.w.0  2.2
"""
from __future__ import annotations

__all__ = ["text_table", "count"]


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
