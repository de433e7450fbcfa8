"""The case notation: which threads run together, written one way everywhere.

A case is ``FOREGROUND [+ BACKGROUND]``.  The foreground is one or more thread
specs ``N.C.op.M[@RATE]`` (:mod:`simnuma.workload`): the threads whose time is
measured.  The background, after ``+``, holds explicit threads (``2.0.r.2@4GB/s``)
and at most one named set ``SUBSCRIPTION@LOAD`` (``high@low``, ``full@2GB/s``),
which :meth:`Case.background_on` places on a board the way AMD's note places its
background readers.  ``simnuma run``, ``simnuma bench run``, study files,
measurement files and benchmark reports all read this one grammar
(:func:`parse_case`); ``FOREGROUND bg BACKGROUND``, the spelling of measurement
files and benchmark reports written before, is still read, and a command line's
``--bg SPEC...`` adds explicit background threads.

The baseline of every relative time (``time %``) is :func:`baseline_case`: core 0
of a board's first node reading its own memory, alone.
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import SpecError, closest
from .units import UnitError, format_bandwidth, parse_quantity
from .workload import OPS, ThreadSpec, parse_spec

__all__ = ["Case", "parse_case", "baseline_case", "explicit_case", "LOADS_GBps", "SUBSCRIPTIONS", "SEPARATOR", "OLD_SEPARATOR"]

# Demand of each background thread under the note's named loads (GB/s).  The note
# publishes low (0.5) and very high (4); medium (1.5) and high (3) are assumptions.
LOADS_GBps = {"idle": 0.0, "low": 0.5, "medium": 1.5, "high": 3.0, "very-high": 4.0}
SUBSCRIPTIONS = ("high", "full", "others")
SEPARATOR = "+"          # FOREGROUND + BACKGROUND
OLD_SEPARATOR = "bg"     # FOREGROUND bg BACKGROUND: still read


@dataclass(frozen=True)
class Case:
    """Threads that run together: foreground threads, explicit background threads and a named set.

    ``threads`` and ``background`` hold canonical spec labels; a named set
    (``subscription`` at ``load``, each of its threads demanding ``rate_GBps``)
    becomes threads only on a board (:meth:`background_on`).  ``load`` is
    ``idle`` without background, ``custom`` with explicit threads only.
    """

    threads: tuple
    background: tuple = ()
    subscription: str | None = None
    load: str = "idle"
    rate_GBps: float = 0.0

    @property
    def placement(self) -> str:
        """The foreground part, e.g. ``0.0.w.1 1.0.w.0``."""
        return " ".join(self.threads)

    @property
    def background_text(self) -> str:
        """The background part: the named set, then the explicit threads ('' for none)."""
        named = [f"{self.subscription}@{self.load}"] if self.subscription else []
        return " ".join(named + list(self.background))

    @property
    def name(self) -> str:
        """The canonical notation: ``FOREGROUND`` or ``FOREGROUND + BACKGROUND``."""
        bg = self.background_text
        return f"{self.placement} {SEPARATOR} {bg}" if bg else self.placement

    text = name

    @property
    def specs(self) -> tuple:
        """The foreground threads as :class:`~simnuma.workload.ThreadSpec`."""
        return tuple(parse_spec(s) for s in self.threads)

    @property
    def single_thread(self) -> bool:
        """One foreground thread and no background: the default calibration cases."""
        return len(self.threads) == 1 and not self.background and not self.subscription

    @property
    def ops(self) -> frozenset:
        """The ops of every thread of the case (a named set reads)."""
        ops = {parse_spec(s).op for s in self.threads + self.background}
        return frozenset(ops | ({"r"} if self.subscription else set()))

    def background_on(self, topology) -> tuple:
        """Every background thread on ``topology`` (ThreadSpecs): the named set placed, then the explicit ones.

        ``high`` puts one reader of local memory on the first free core of
        every node, ``full`` one on every free core, ``others`` one on the
        first free core of every node that runs no foreground thread.
        """
        explicit = tuple(parse_spec(s) for s in self.background)
        busy = {(s.node, s.core) for s in self.specs + explicit}
        fg_nodes = {s.node for s in self.specs}
        out = []
        if self.subscription:
            for node in topology.nodes:
                free = [c for c in range(node.cores) if (node.id, c) not in busy]
                if self.subscription == "full":
                    cores = free
                elif self.subscription == "high":
                    cores = free[:1]
                else:  # others
                    cores = free[:1] if node.id not in fg_nodes else []
                out += [ThreadSpec(node.id, c, "r", node.id, self.rate_GBps) for c in cores]
        return tuple(out) + explicit

    def placed(self, topology) -> "Case":
        """This case on ``topology`` as it is simulated: every background thread explicit."""
        return explicit_case(self.threads, tuple(s.label for s in self.background_on(topology)))

    def __str__(self) -> str:
        return self.name


def explicit_case(threads, background=()) -> Case:
    """A case of explicit foreground and background threads (labels), without a named set."""
    return Case(tuple(threads), tuple(background), load="custom" if background else "idle")


def baseline_case(topology) -> Case:
    """The reference of every relative time: core 0 of the first node with cores reading its own memory, alone."""
    first = topology.core_node_ids[0]
    return Case((f"{first}.0.r.{first}",))


def parse_case(text, background=()) -> Case:
    """Read a case: ``FOREGROUND [+ BACKGROUND]`` as one string or as a list of words.

    ``background`` adds explicit background threads (a list of specs, or one
    string of them), as a command line's ``--bg`` does.  Raises SpecError
    naming what is wrong.
    """
    words = _words(text)
    if not words and not _words(background):
        raise SpecError(f"expected a case such as '0.0.w.1 1.0.w.0 + high@low', got {text!r}")
    seps = [i for i, w in enumerate(words) if w in (SEPARATOR, OLD_SEPARATOR)]
    shown = " ".join(words)
    if len(seps) > 1:
        raise SpecError(f"{shown!r}: one '{SEPARATOR}' between foreground and background, not {len(seps)}")
    head, tail = (words[:seps[0]], words[seps[0] + 1:]) if seps else (words, [])
    if seps and not tail:
        raise SpecError(f"{shown!r}: nothing after '{words[seps[0]]}'; give background threads or a set"
                        " such as high@low")
    fg = tuple(parse_spec(tok, OPS).label for tok in head)
    if not fg:
        raise SpecError(f"{shown!r}: no foreground thread given before '{SEPARATOR}'; e.g. 0.0.r.0" if seps
                        else "no foreground thread given; e.g. 0.0.r.0")
    named = None
    explicit: list[str] = []
    for token in tail + _words(background):
        named = _background_token(token, named, explicit)
    sub, load, rate = named or (None, "idle", 0.0)
    if rate == 0:
        sub, load = None, "idle"
    if explicit and sub is None:
        load = "custom"
    return Case(fg, tuple(explicit), sub, load, rate)


def _words(value) -> list:
    """The words of a case given as a string or as a sequence (of strings or ThreadSpecs)."""
    if value is None:
        return []
    if isinstance(value, str):
        return value.replace(SEPARATOR, f" {SEPARATOR} ").split()
    return [w for item in value for w in _words(str(item))]


def _background_token(token: str, named, explicit: list):
    """Read one background token: an explicit thread (appended to ``explicit``) or the named set (returned)."""
    if token == "idle":
        return named
    if token[:1].isdigit():
        explicit.append(parse_spec(token, OPS).label)
        return named
    sub, at, load = token.partition("@")
    if sub not in SUBSCRIPTIONS or not at:
        near = closest(sub, SUBSCRIPTIONS)
        hint = f" (did you mean {near + '@' + load if at else near!r}?)" if near else ""
        raise SpecError(f"{token!r}: expected a background thread N.C.op.M@RATE or a set SUBSCRIPTION@LOAD"
                        f" with SUBSCRIPTION one of {', '.join(SUBSCRIPTIONS)}{hint}")
    if named is not None:
        raise SpecError(f"{token!r}: a case takes at most one background set (already {named[0]}@...)")
    return (sub, *_parse_load(load))


def _parse_load(text: str) -> tuple:
    """``(name, GB/s)`` of a named load or a rate (``2GB/s``)."""
    name = text.strip().lower()
    if name in LOADS_GBps:
        return name, LOADS_GBps[name]
    try:
        rate = parse_quantity(text.strip(), "bandwidth")
    except UnitError:
        raise SpecError(f"unknown load {text!r}; expected one of {', '.join(LOADS_GBps)} or a rate such as"
                        " 2GB/s") from None
    if rate < 0:
        raise SpecError(f"load {text!r}: a rate cannot be negative")
    return format_bandwidth(rate).replace(" ", ""), rate
