"""The exceptions simnuma raises for mistakes a user can make, and the wording of a "did you mean" hint.

Every one of them renders as a single line (a board's :class:`TopologyError`
as one line per problem); the command-line interface prints it and exits with
status 2.  Anything else escaping is a bug.  :func:`closest` and
:func:`suggest` find the valid name nearest to a misspelt one.
"""
from __future__ import annotations

import difflib

__all__ = [
    "SimnumaError",
    "TopologyError",
    "SpecError",
    "BenchError",
    "CalibrationError",
    "StudyError",
    "Problem",
    "shown",
]

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One problem found in an input file: where it is and what is wrong."""

    file: str
    line: int | None
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{shown(self.file)}:{self.line}" if self.line is not None else shown(self.file)
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


class SimnumaError(Exception):
    """Base class of every error a user can cause."""


class TopologyError(SimnumaError):
    """A board description is invalid.  ``problems`` lists every problem found."""

    def __init__(self, problems: list[Problem] | str):
        if isinstance(problems, str):
            problems = [Problem("<topology>", None, "", problems)]
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class SpecError(SimnumaError):
    """A thread specification (``N.C.op.M[@RATE]``) is malformed or cannot be placed."""


class BenchError(SimnumaError):
    """The native benchmark cannot be built or run as asked."""


class CalibrationError(SimnumaError):
    """A calibration or validation cannot be carried out as asked."""


class StudyError(SimnumaError):
    """A study cannot be found, or its file is invalid."""


# ---------------------------------------------------------------- wording a mistake

def shown(name: str) -> str:
    """A file name (or a name given for one) as a message shows it: itself, or quoted with escapes when it is
    empty, starts or ends with a space, or holds a character that would not show (a newline, a NUL, a control or
    format character), so that the message stays one line and the name visible."""
    return name if name and name.isprintable() and name == name.strip() else repr(name)


def closest(key: object, valid) -> str | None:
    """The valid key nearest to a misspelt ``key``, or None when none is close."""
    close = difflib.get_close_matches(str(key), [str(v) for v in valid], n=1, cutoff=0.6)
    return close[0] if close else None


def suggest(key: object, valid) -> str:
    """``unknown key (did you mean 'latency'?)``, or the list of valid keys when none is close."""
    close = closest(key, valid)
    if close is not None:
        return f"unknown key (did you mean {close!r}?)"
    return "unknown key; expected one of: " + ", ".join(str(v) for v in valid)
