"""Where a thread's array lies in DRAM: pages, frames and the address map.

Models: each array of a thread (one for ``r``, ``w`` and ``l``, three for the
triad) is contiguous in virtual memory and cut into the operating system's
pages (``memory.dram.os_page``); every page lands in a physical frame of its
own, as the pages of a large allocation do.  The DRAM's address map
(``memory.dram.address_map``, most significant field first) splits a physical
line address into row, rank, bank, column and channel.  The frame bits that
choose a channel, rank or bank form the page's *slot*; there are S of them
(``AddressMap.slots``).

How frames are chosen.  With frames drawn independently at random, two
streams on one memory (a writer's fills and its write-backs, the triad's three
arrays, two threads) land in the same bank on one page in S, by chance: over
the few dozen pages a steady-state window covers, that chance decides the
result (a few percent for a single writer).  So a page's frame is chosen when
a stream first touches it, so that, page after page, it shares a bank (or a
rank, or a channel) with each other active stream's current page as often as
an independent uniformly random frame would on average, never by luck (a
low-discrepancy design: :class:`PagePlacer`).  Which of the equally good slots
it takes, and the row, are drawn (seeded).  Once chosen, a frame stays: a
stream that comes back to a page finds it where it was.

Abstracts away: the allocator's real choices (runs of physically contiguous
pages), other processes' pages in the same rows, and the DRAM's capacity
(rows are drawn from 2^20 per bank).
"""
from __future__ import annotations

import random
from typing import Any

__all__ = ["AddressMap", "PagePlacer", "ArrayPages", "ROW_BITS", "ACTIVE_NS"]

ROW_BITS = 20
ACTIVE_NS = 10_000.0   # a stream that touched the memory this recently is one the next page may meet


def _log2(n: int) -> int:
    return n.bit_length() - 1


class AddressMap:
    """Bit positions of each field in a physical line address (the byte offset within a line removed)."""

    def __init__(self, dram):
        widths = {"channel": _log2(dram.channels), "rank": _log2(dram.ranks), "bank": _log2(dram.banks),
                  "column": _log2(dram.row_lines), "row": ROW_BITS}
        self.shift = {}
        self.mask = {}
        bit = 0
        for field in reversed(dram.address_map):
            self.shift[field] = bit
            self.mask[field] = (1 << widths[field]) - 1
            bit += widths[field]
        self.page_shift = _log2(dram.os_page_bytes // 64)
        # the frame bits that name a slot (channel, rank or bank), and the other frame bits
        self.slot_bits = [b for f in ("channel", "rank", "bank") for b in self._bits(f) if b >= self.page_shift]
        self.other_bits = [b for f in ("column", "row") for b in self._bits(f) if b >= self.page_shift]
        self.slots = 1 << len(self.slot_bits)

    def slot_cycle_lines(self) -> int:
        """Lines after which a stream's channel, rank and bank repeat (the span of the bits that choose them)."""
        return 1 << max((self.shift[f] + self.mask[f].bit_length() for f in ("channel", "rank", "bank")
                         if self.mask[f]), default=0)

    def _bits(self, field: str) -> list:
        width = self.mask[field].bit_length()
        return list(range(self.shift[field], self.shift[field] + width))

    def frame(self, slot: int, rng) -> int:
        """A frame number whose slot bits spell ``slot`` and whose other bits are random."""
        address = 0
        for k, bit in enumerate(self.slot_bits):
            if slot >> k & 1:
                address |= 1 << bit
        for bit in self.other_bits:
            if rng.random() < 0.5:
                address |= 1 << bit
        return address >> self.page_shift


class PagePlacer:
    """Chooses the frame of every page of the arrays on one memory (module docstring).

    The relation of two pages' slots is one of four classes: the same bank,
    another bank of the same rank, another rank of the same channel, another
    channel.  Each time a stream moves to another page, its relation with every
    other active stream's current page starts afresh; with independent random
    frames each such start would fall in a class with the class's share of the
    slots.  The placer counts, for every pair of streams, the starts in each
    class — those it chose and those that came from pages placed before — and
    gives a stream's new page the slot that keeps the counts closest to those
    shares (the least sum of squared deviations; ties drawn).  A pair's counts
    then stay within about one of their expectation, however long the run.
    """

    __slots__ = ("amap", "rng", "current", "pairs", "classes", "expected")

    def __init__(self, amap: AddressMap, seed: str):
        self.amap = amap
        self.rng = random.Random(seed)
        # stream -> [slot, when it last touched memory, its current page]
        self.current: dict[tuple, list[Any]] = {}
        # (stream, stream) -> [intervals, intervals in each relation x 4, open relation, since]
        self.pairs: dict[tuple, list[Any]] = {}
        fields = [f for f in ("channel", "rank", "bank") for b in amap._bits(f) if b >= amap.page_shift]
        masks = [sum(1 << k for k, f in enumerate(fields) if f == name) for name in ("channel", "rank", "bank")]

        def relation(a: int, b: int) -> int:
            differ = a ^ b
            if differ & masks[0]:
                return 3
            if differ & masks[1]:
                return 2
            return 1 if differ & masks[2] else 0

        slots = amap.slots
        self.classes = [[relation(a, b) for b in range(slots)] for a in range(slots)]
        self.expected = [sum(1 for a in range(slots) if self.classes[a][0] == c) / slots for c in range(4)]

    def _others(self, stream, now: float) -> list:
        """``[(tally, other's slot)]`` of the active streams beside ``stream``, their intervals with it closed.

        An interval that ends where it began (both streams moving at once, as a
        write's fills and write-backs do) is no start of its own and is not counted.
        """
        out = []
        for other, (slot, touched, _) in self.current.items():
            if other == stream or now - touched > ACTIVE_NS:
                continue
            key = (stream, other) if stream < other else (other, stream)   # streams are (thread, array, kind)
            tally = self.pairs.get(key)
            if tally is None:
                tally = self.pairs[key] = [0, 0, 0, 0, 0, -1, now]
            elif tally[5] >= 0 and now > tally[6]:
                tally[0] += 1
                tally[1 + tally[5]] += 1
            out.append((tally, slot))
        return out

    def _open(self, others: list, slot: int, now: float) -> None:
        relations = self.classes[slot]
        for tally, other_slot in others:
            tally[5] = relations[other_slot]
            tally[6] = now

    def touch(self, stream, page: tuple, now: float) -> None:
        """``stream`` uses ``page`` (placed before) at ``now``."""
        mine = self.current.get(stream)
        if mine is not None and mine[2] == page:   # (frame, slot): equal for the same page only
            mine[1] = now
            return
        self._open(self._others(stream, now), page[1], now)
        self.current[stream] = [page[1], now, page]

    def place(self, stream, now: float, chooses: bool = True) -> tuple:
        """``(frame, slot)`` of a new page that ``stream`` touches first.

        A stream that ``chooses`` not takes a random slot: a write's
        write-backs, which only run ahead of its fills at the start, before
        the fills have placed the pages they come back to.  That keeps the
        start of a run like the rest of it, where the fills alone choose.
        """
        others = self._others(stream, now)
        slot = self._best_slot(others) if others and chooses else self.rng.randrange(self.amap.slots)
        self._open(others, slot, now)
        return self.amap.frame(slot, self.rng), slot

    def _best_slot(self, others: list) -> int:
        expected = self.expected
        best, best_cost = [], None
        for candidate, relations in enumerate(self.classes):
            cost = 0.0
            for tally, other_slot in others:
                starts = tally[0] + 1
                hit = relations[other_slot]
                for c in range(4):
                    deviation = tally[1 + c] + (c == hit) - expected[c] * starts
                    cost += deviation * deviation
            if best_cost is None or cost < best_cost - 1e-9:
                best, best_cost = [candidate], cost
            elif cost <= best_cost + 1e-9:
                best.append(candidate)
        return best[0] if len(best) == 1 else self.rng.choice(best)


class ArrayPages:
    """One array: line index -> physical line address, each page's frame chosen on first touch."""

    __slots__ = ("placer", "pages", "shift", "mask", "lines")

    def __init__(self, placer: PagePlacer, lines: int):
        self.placer = placer
        self.pages: dict[int, tuple[int, int]] = {}   # page index -> (frame, slot)
        self.shift = placer.amap.page_shift
        self.mask = (1 << self.shift) - 1
        self.lines = lines

    def address(self, line: int, stream, now: float, chooses: bool = True) -> int:
        """The physical line address of line ``line``, touched by ``stream`` at ``now``."""
        page = self.pages.get(line >> self.shift)
        if page is None:
            frame, slot = self.placer.place(stream, now, chooses)
            page = self.pages[line >> self.shift] = (frame, slot)
            self.placer.current[stream] = [slot, now, page]
        else:
            self.placer.touch(stream, page, now)
        return (page[0] << self.shift) | (line & self.mask)
