"""The memory block of a board: which model a node's memory has, and that model's parameters.

Three models, chosen per node with ``memory.model``:

``fifo``
    the DRAM as one first-come-first-served server sustaining ``bandwidth`` x
    ``efficiency``, behind a fixed access ``latency`` (boards written before the
    other two existed, and what-ifs where the memory should not matter);
``dram``
    channels, ranks and banks with open rows, the datasheet timings of the
    parts (``memory.dram``), refresh, and the controller's scheduling policy;
    the sustained efficiency is something the model reports;
``curve``
    a memory whose timings and controller are not published: its latency
    follows measured bandwidth-latency curves (``memory.curves``, written by
    ``simnuma bench host --suite``) from its current load and read share.

This module parses and checks those parameters (it knows no SimPy); the
models themselves live in :mod:`simnuma.model.dram`,
:mod:`simnuma.model.curve` and :mod:`simnuma.model.mct`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..units import LINE_BYTES, UnitError, parse_quantity

__all__ = ["IDLE_LADDER_CLK", "MEMORY_MODELS", "RELEASES", "BUFFER_RELEASES", "SCHEDULERS", "PAGE_POLICIES",
           "ADDRESS_FIELDS", "TIMINGS", "OPTIONAL_TIMINGS",
           "DramParams", "MemoryCurve", "parse_choice", "parse_dram_time", "parse_address_map", "parse_curves",
           "check_dram", "dram_time_ns", "format_dram_time", "MemoryParamError", "LINE_BYTES"]

MEMORY_MODELS = ("fifo", "dram", "curve")
RELEASES = ("data", "done")   # when a read's DRAM queue entry is free (memory.release)
BUFFER_RELEASES = ("start", "end")   # when a packet's buffer is free as it is sent on a link (link.release)
SCHEDULERS = ("fr-fcfs", "fcfs")
PAGE_POLICIES = ("open", "closed")
ADDRESS_FIELDS = ("row", "rank", "bank", "column", "channel")
# DRAM timings, each a time ("15 ns") or a number of DRAM clocks ("3 clk")
TIMINGS = ("CL", "CWL", "tRCD", "tRP", "tRAS", "tRTP", "tWR", "tWTR", "tRTW", "tRRD", "tFAW", "tRTRS", "tRFC",
           "tREFI")
OPTIONAL_TIMINGS = frozenset({"tFAW"})   # DDR and DDR2 parts of 4 banks have no four-activate window
# which keys each model needs, their defaults and the DramParams field each becomes: simnuma.topology.params


class MemoryParamError(ValueError):
    """Values that are each valid but do not fit together; ``path`` is below ``memory``."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def parse_choice(value: object, allowed: tuple, what: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        options = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"expected {what}: one of {options}, got {value!r}")
    return value


def parse_dram_time(value: object) -> tuple:
    """``"15 ns"`` -> ``(15.0, "ns")``; ``"3 clk"`` -> ``(3.0, "clk")`` (DRAM clocks, resolved with the clock)."""
    if isinstance(value, str):
        text = value.strip()
        for suffix in ("clk", "tCK"):
            if text.endswith(suffix):
                number = text[: -len(suffix)].strip()
                try:
                    clocks = float(number)
                except ValueError:
                    raise ValueError(f"expected a number of clocks such as '3 clk', got {value!r}") from None
                if not math.isfinite(clocks) or clocks < 0:
                    raise ValueError(f"expected a number of clocks >= 0, got {value!r}")
                return clocks, "clk"
    try:
        ns = parse_quantity(value, "time")
    except UnitError as exc:
        raise ValueError(f"{exc} or a number of DRAM clocks such as '3 clk'") from None
    if ns < 0:
        raise ValueError(f"must not be negative, got {value!r}")
    return ns, "ns"


def format_dram_time(value: tuple) -> str:
    number, unit = value
    text = str(int(number)) if float(number).is_integer() else repr(float(number))
    return f"{text} {unit}"


def parse_address_map(value: object) -> tuple:
    """``"row.rank.bank.column.channel"`` (most significant first) -> a tuple of the five fields."""
    if not isinstance(value, str):
        raise ValueError(f"expected the address fields from most to least significant, such as"
                         f" 'row.rank.bank.column.channel', got {value!r}")
    fields = tuple(p.strip() for p in value.split("."))
    unknown = [f for f in fields if f not in ADDRESS_FIELDS]
    if unknown:
        raise ValueError(f"unknown address field {unknown[0]!r}; the fields are {', '.join(ADDRESS_FIELDS)}")
    if sorted(fields) != sorted(ADDRESS_FIELDS):
        missing = [f for f in ADDRESS_FIELDS if f not in fields]
        twice = sorted({f for f in fields if fields.count(f) > 1})
        what = f"missing {', '.join(missing)}" if missing else f"{', '.join(twice)} given twice"
        raise ValueError(f"every field once, from most to least significant, such as"
                         f" 'row.rank.bank.column.channel': {what}")
    return fields


@dataclass(frozen=True)
class MemoryCurve:
    """A measured loaded-latency curve: memory bandwidth (GB/s) against chase latency (ns), for one read share."""

    read_fraction: float
    points: tuple  # ((GB/s, ns), ...) by rising bandwidth
    peak_GBps: float = 0.0  # the most streams of this mix drew without the chase, when above the last point
    peak_latency_ns: float = 0.0  # the most latency Little's law allows at the peak (0: no bound given)

    @property
    def max_GBps(self) -> float:
        return max(self.points[-1][0], self.peak_GBps)


def parse_curves(value: object) -> tuple:
    """The ``memory.curves`` list -> a tuple of :class:`MemoryCurve`, by rising read share."""
    example = "[{read_fraction: 1.0, points: [[1.2 GB/s, 96 ns], [13 GB/s, 101 ns]]}, ...]"
    if not isinstance(value, list) or not value:
        raise ValueError(f"expected a list of curves such as {example}, got {value!r}")
    curves = []
    for i, entry in enumerate(value):
        where = f"curves[{i}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{where}: expected a mapping such as {{read_fraction: 1.0, points: [...]}}")
        extra = sorted(set(entry) - {"read_fraction", "points", "peak", "peak_latency"}, key=str)
        if extra:
            raise ValueError(f"{where}.{extra[0]}: unknown key; expected read_fraction, points, peak and peak_latency")
        share = entry.get("read_fraction")
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
            raise ValueError(f"{where}.read_fraction: expected the share of reads in the memory traffic,"
                             f" a number in [0, 1], got {share!r}")
        points = _curve_points(entry.get("points"), where)
        peak = 0.0
        if entry.get("peak") is not None:
            try:
                peak = parse_quantity(entry["peak"], "bandwidth")
            except UnitError as exc:
                raise ValueError(f"{where}.peak: {exc}") from None
            _within_reason(peak, points[-1][1], f"{where}.peak", entry["peak"])
            if peak <= points[-1][0]:
                raise ValueError(f"{where}.peak: expected a bandwidth above the last point's"
                                 f" {points[-1][0]:g} GB/s, got {entry['peak']}")
        curves.append(MemoryCurve(float(share), points, peak, _peak_latency(entry, points, peak, where)))
    shares = [c.read_fraction for c in curves]
    if len(set(shares)) != len(shares):
        raise ValueError(f"two curves have the read fraction {sorted(s for s in shares if shares.count(s) > 1)[0]}")
    return tuple(sorted(curves, key=lambda c: c.read_fraction))


def _peak_latency(entry: dict, points: tuple, peak: float, where: str) -> float:
    """A curve's ``peak_latency`` (ns, 0 when not given): only beside a peak, and no less than the last point's."""
    if entry.get("peak_latency") is None:
        return 0.0
    if not peak:
        raise ValueError(f"{where}.peak_latency: a latency at the peak needs the peak's bandwidth (peak: ...)")
    try:
        latency = parse_quantity(entry["peak_latency"], "time")
    except UnitError as exc:
        raise ValueError(f"{where}.peak_latency: {exc}") from None
    _within_reason(peak, latency, f"{where}.peak_latency", entry["peak_latency"])
    if latency < points[-1][1]:
        raise ValueError(f"{where}.peak_latency: expected at least the last point's {points[-1][1]:g} ns"
                         f" (the latency never falls with the bandwidth), got {entry['peak_latency']}")
    return latency


def _within_reason(bandwidth: float, latency: float, here: str, point) -> None:
    """ValueError when a point's bandwidth or latency is beyond what any memory has (a unit slip)."""
    from .schema import PLAUSIBLE

    for kind, quantity in (("bandwidth", bandwidth), ("time", latency)):
        if quantity > PLAUSIBLE[kind][1]:
            raise ValueError(f"{here}: {point!r} is implausible: {PLAUSIBLE[kind][2]} (a unit slip?)")


def _curve_points(raw: object, where: str) -> tuple:
    if not isinstance(raw, list) or len(raw) < 2:
        raise ValueError(f"{where}.points: expected at least two [bandwidth, latency] points such as"
                         f" [[1.2 GB/s, 96 ns], [13 GB/s, 101 ns]], got {raw!r}")
    points: list = []
    for k, point in enumerate(raw):
        here = f"{where}.points[{k}]"
        if not isinstance(point, list) or len(point) != 2:
            raise ValueError(f"{here}: expected [bandwidth, latency] such as [13 GB/s, 101 ns], got {point!r}")
        try:
            bandwidth = parse_quantity(point[0], "bandwidth")
            latency = parse_quantity(point[1], "time")
        except UnitError as exc:
            raise ValueError(f"{here}: {exc}") from None
        if bandwidth < 0 or latency <= 0:
            raise ValueError(f"{here}: expected a bandwidth >= 0 and a latency > 0, got {point!r}")
        _within_reason(bandwidth, latency, here, point)
        if points and latency < points[0][1] / 2:
            raise ValueError(f"{here}: a latency under load below half the idle one ({point[1]} against"
                             f" {points[0][1]:g} ns at the first point): the first point is the idle chase")
        if points and bandwidth <= points[-1][0]:
            raise ValueError(f"{here}: points must rise in bandwidth ({point[0]} after"
                             f" {points[-1][0]:g} GB/s)")
        points.append((bandwidth, latency))
    return tuple(points)


# K8's idle cycle limits (BKDG K8 F2x94 IdleCycLimit), the steps a dynamic idle limit moves along
IDLE_LADDER_CLK = (0, 4, 8, 16, 32, 64, 128, 256)


@dataclass(frozen=True)
class DramParams:
    """The resolved DRAM of one node: organisation, address map, timings in ns, controller policy."""

    channels: int
    width_bits: int          # data bits per channel (128 for two ganged 64-bit DIMMs)
    clock_GHz: float         # DRAM clock; data move on both edges
    ranks: int               # per channel
    banks: int               # per rank
    row_bytes: int           # bytes of one row across the channel's width
    address_map: tuple       # fields from most to least significant
    scheduler: str
    bypass_limit: int        # fr-fcfs: a request is overtaken at most this many times
    write_burst: int         # writes wait until this many are queued, then go back to back (0: no bursts)
    page_policy: str
    idle_close_ns: float     # open page: a row idle this long is closed (0: never)
    idle_dynamic: bool       # each bank's idle limit steps along IDLE_LADDER_CLK from idle_close (K8 DCC_EN)
    os_page_bytes: int       # the operating system's page: arrays are contiguous within one
    timings_ns: dict         # TIMINGS -> ns (tFAW 0 when not given)

    @property
    def tck_ns(self) -> float:
        return 1.0 / self.clock_GHz

    @property
    def idle_ladder_ns(self) -> tuple:
        """The steps of a dynamic idle limit in ns (IDLE_LADDER_CLK); empty for a fixed one."""
        return tuple(k * self.tck_ns for k in IDLE_LADDER_CLK) if self.idle_dynamic else ()

    @property
    def idle_start_step(self) -> int:
        """The step of IDLE_LADDER_CLK a dynamic idle limit starts at, ``idle_close`` (0 for a fixed limit)."""
        if not self.idle_dynamic:
            return 0
        clocks = self.idle_close_ns / self.tck_ns
        return min(range(len(IDLE_LADDER_CLK)), key=lambda k: abs(IDLE_LADDER_CLK[k] - clocks))

    @property
    def burst_ns(self) -> float:
        """Time one 64-byte line occupies the channel's data bus (two transfers per clock)."""
        return LINE_BYTES * 8 / self.width_bits / 2 * self.tck_ns

    @property
    def peak_GBps(self) -> float:
        """Every channel's data bus busy: channels x width x 2 transfers per clock."""
        return self.channels * self.width_bits / 8 * 2 * self.clock_GHz

    @property
    def row_lines(self) -> int:
        return self.row_bytes // LINE_BYTES


def dram_time_ns(value, tck_ns: float) -> float:
    """A parsed DRAM time (:func:`parse_dram_time`) in ns (0 when not given)."""
    if value is None:
        return 0.0
    number, unit = value
    return number * tck_ns if unit == "clk" else number


# banks of one memory (channels x ranks x banks): a DDR5 server socket has 768; where the pages of an array may
# land is worked out for every pair of banks
MOST_BANKS = 1024


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def check_dram(dram: DramParams, queue: object) -> None:
    """Raise MemoryParamError when values of the DRAM that are each valid do not fit together.

    The single values were checked one by one; here what only the combination
    can say: power-of-two organisation of at most MOST_BANKS banks, a row that holds whole lines, a burst
    that is a whole number of transfers, writes gathered that fit in the
    queue (``queue``: the node's ``memory.queue``), a dynamic idle limit on
    open pages that starts at one of K8's idle cycle limits.
    """
    for key in ("channels", "ranks", "banks"):
        if not _power_of_two(getattr(dram, key)):
            raise MemoryParamError(f"dram.{key}", f"must be a power of two (the address map takes whole bits),"
                                                  f" got {getattr(dram, key)}")
    banks = dram.channels * dram.ranks * dram.banks
    if banks > MOST_BANKS:
        raise MemoryParamError("dram.banks", f"{dram.channels} channels x {dram.ranks} ranks x {dram.banks} banks make"
                                             f" {banks} banks; at most {MOST_BANKS} (a memory has a few hundred at most)")
    if dram.width_bits % 8 or LINE_BYTES * 8 % dram.width_bits:
        raise MemoryParamError("dram.width_bits", f"a 64-byte line must be a whole number of transfers of the"
                                                  f" channel's width, got {dram.width_bits} bits")
    row = dram.row_bytes
    if row % LINE_BYTES or not _power_of_two(row // LINE_BYTES):
        raise MemoryParamError("dram.row", f"a row must hold a power-of-two number of 64-byte lines, got {row} B")
    page = dram.os_page_bytes
    if page % LINE_BYTES or not _power_of_two(page // LINE_BYTES):
        raise MemoryParamError("dram.os_page", f"a page must hold a power-of-two number of 64-byte lines,"
                                               f" got {page} B")
    timings = dram.timings_ns
    if timings["tREFI"] <= timings["tRFC"]:
        raise MemoryParamError("dram.timings.tREFI", f"the refresh interval ({timings['tREFI']:g} ns) must be longer"
                                                     f" than a refresh ({timings['tRFC']:g} ns)")
    if dram.idle_dynamic:
        if dram.page_policy != "open":
            raise MemoryParamError("dram.idle_dynamic", f"a dynamic idle limit needs page_policy: open (rows left open"
                                                        f" until idle), got page_policy: {dram.page_policy}")
        clocks = dram.idle_close_ns / dram.tck_ns
        if not any(abs(clocks - k) < 1e-6 for k in IDLE_LADDER_CLK[1:]):
            limits = ", ".join(str(k) for k in IDLE_LADDER_CLK[1:-1]) + f" or {IDLE_LADDER_CLK[-1]}"
            got = f"{clocks:g} clk" if clocks else "none (a valid idle_close is needed; 0 means never closed)"
            raise MemoryParamError("dram.idle_close", f"with idle_dynamic, the dynamic idle limit starts at idle_close,"
                                                      f" which must be one of K8's limits, {limits} clk, got {got}")
    burst = dram.write_burst
    if burst and isinstance(queue, int) and burst > queue:
        raise MemoryParamError("dram.write_burst", f"writes gathered for a burst must fit in the DRAM queue"
                                                   f" (memory.queue {queue}), got {burst}")
