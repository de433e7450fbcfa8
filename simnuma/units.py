"""Strict parsing and formatting of physical quantities.

simnuma keeps one internal unit system: time in nanoseconds, sizes in bytes,
bandwidth in bytes per nanosecond (numerically equal to GB/s with GB = 10^9 B)
and frequency in GHz (cycles per nanosecond).  Input files carry units as
suffixes (``4 GB/s``, ``60 ns``, ``1 GHz``, ``64 MiB``); they are converted once,
here.  A bare number where a unit is required is an error: ``60`` could mean
nanoseconds or cycles, and simnuma refuses to guess.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping

__all__ = [
    "UnitError",
    "parse_time_ns",
    "parse_size_bytes",
    "parse_bandwidth_GBps",
    "parse_frequency_GHz",
    "parse_quantity",
    "format_time",
    "format_size",
    "format_bandwidth",
    "format_frequency",
    "KINDS",
    "LINE_BYTES",
    "MOST_ARRAY_BYTES",
]

LINE_BYTES = 64   # the cache line: every thread strides by it, every memory transaction moves one
MOST_ARRAY_BYTES = 2**50   # 1024 TiB per thread: beyond any machine's memory; results' byte counts stay exact


class UnitError(ValueError):
    """A quantity could not be parsed; the message says what was expected."""


_TIME = {"ps": 1e-3, "ns": 1.0, "us": 1e3, "\u00b5s": 1e3, "\u03bcs": 1e3, "ms": 1e6, "s": 1e9}
_SIZE = {
    "B": 1, "kB": 10**3, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
    "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40,
}
# bytes per nanosecond
_BANDWIDTH = {
    "B/s": 1e-9, "kB/s": 1e-6, "KB/s": 1e-6, "MB/s": 1e-3, "GB/s": 1.0, "TB/s": 1e3,
    "KiB/s": 2**10 * 1e-9, "MiB/s": 2**20 * 1e-9, "GiB/s": 2**30 * 1e-9,
}
_FREQUENCY = {"Hz": 1e-9, "kHz": 1e-6, "MHz": 1e-3, "GHz": 1.0}

KINDS: dict[str, tuple[Mapping[str, float], str]] = {   # kind -> (unit -> internal units, an example)
    "time": (_TIME, "a time such as '60 ns'"),
    "size": (_SIZE, "a size such as '64 MiB'"),
    "bandwidth": (_BANDWIDTH, "a bandwidth such as '4 GB/s'"),
    "frequency": (_FREQUENCY, "a frequency such as '1 GHz'"),
}

_BARE_NUMBER = re.compile(r"^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$")
_QUANTITY = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-z\u00b5\u03bc/]+)\s*$")


def parse_quantity(text: object, kind: str) -> float:
    """Parse ``text`` as a quantity of ``kind`` and return it in internal units.

    >>> parse_quantity("4 GB/s", "bandwidth")
    4.0
    >>> parse_quantity("1.5us", "time")
    1500.0
    """
    table, example = KINDS[kind]
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise UnitError(f"expected {example}, got {text!r}")
    if isinstance(text, (int, float)):
        raise UnitError(f"expected {example}, got the bare number {text!r} (a unit is required)")
    m = _QUANTITY.match(text)
    if not m:
        if _BARE_NUMBER.match(text):
            raise UnitError(f"expected {example}, got the bare number {text.strip()!r} (a unit is required)")
        raise UnitError(f"expected {example}, got {text!r}")
    number, unit = m.groups()
    if unit not in table:
        known = ", ".join(table)
        raise UnitError(f"unknown unit {unit!r} in {text!r}; expected one of: {known}")
    value = float(number) * table[unit]
    if not math.isfinite(value):
        raise UnitError(f"expected a finite quantity, got {text!r}")
    if kind == "size":
        if value != int(value):
            raise UnitError(f"expected a whole number of bytes, got {text!r}")
        return int(value)
    return value


def parse_time_ns(text: object) -> float:
    """``"95 ns"`` -> 95.0 (nanoseconds)."""
    return parse_quantity(text, "time")


def parse_size_bytes(text: object) -> int:
    """``"64 MiB"`` -> 67108864 (bytes)."""
    return int(parse_quantity(text, "size"))


def parse_array_bytes(text: object) -> int:
    """An array size per thread (``64MiB``, ``64 MiB``): at least one line, at most MOST_ARRAY_BYTES; UnitError
    saying what is expected otherwise."""
    size = parse_size_bytes(str(text).replace(" ", ""))
    if size < LINE_BYTES:
        raise UnitError(f"an array needs at least one {LINE_BYTES} B line, got {text!r}")
    if size > MOST_ARRAY_BYTES:
        raise UnitError(f"an array is at most 1024 TiB per thread, got {text!r}")
    return size


def parse_bandwidth_GBps(text: object) -> float:
    """``"4 GB/s"`` -> 4.0 (bytes per nanosecond, i.e. GB/s with GB = 10^9 B)."""
    return parse_quantity(text, "bandwidth")


def parse_frequency_GHz(text: object) -> float:
    """``"1 GHz"`` -> 1.0 (cycles per nanosecond)."""
    return parse_quantity(text, "frequency")


def _num(value: float) -> str:
    """Shortest text that reads back as exactly ``value``."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def format_time(ns: float) -> str:
    """Text that :func:`parse_time_ns` reads back as exactly ``ns``."""
    return f"{_num(ns)} ns"


def format_bandwidth(GBps: float) -> str:
    """Text that :func:`parse_bandwidth_GBps` reads back as exactly ``GBps``."""
    return f"{_num(GBps)} GB/s"


def format_frequency(GHz: float) -> str:
    """Text that :func:`parse_frequency_GHz` reads back as exactly ``GHz``."""
    return f"{_num(GHz)} GHz"


def format_size(nbytes: int) -> str:
    """The largest binary unit that divides ``nbytes`` exactly: 67108864 -> ``64 MiB``."""
    for unit in ("GiB", "MiB", "KiB"):
        scale = _SIZE[unit]
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale} {unit}"
    return f"{int(nbytes)} B"
