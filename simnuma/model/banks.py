"""The state of a DRAM controller (:mod:`simnuma.model.dram`): its channels, their banks and ranks, and the requests
queued for them, with the two helpers the controller is set up with.

A bank holds its open row and when its next column command, precharge and activation may come; a rank its last
activations (tRRD, tFAW) and its next refresh; a channel its queue, its banks and ranks, its data bus and the
decision the controller has due for it.  What they do is the controller's: this module only holds them.
"""
from __future__ import annotations

from .ledger import SpanLedger

__all__ = ["Bank", "Rank", "Request", "Channel", "Choice", "Pending", "exact_grid"]


# (index in the queue, column ns, data ns, activation ns or -1 for a row hit): a request chosen to serve;
# with the queue's length when it was chosen, a choice that waits for its time (_confirm)
Choice = tuple[int, float, float, float]
Pending = tuple[int, float, float, float, int]


class Bank:
    __slots__ = ("row", "col_ready_ns", "pre_ready_ns", "act_ready_ns", "used_ns", "idle_ns", "idle_step")

    def __init__(self, idle_ns: float = 0.0, idle_step: int = 0):
        self.row = -1              # the open row, -1 when precharged
        self.col_ready_ns = 0.0    # earliest column command to the open row
        self.pre_ready_ns = 0.0    # earliest precharge of the open row
        self.act_ready_ns = 0.0    # earliest activation when precharged
        self.used_ns = 0.0         # end of the last burst
        self.idle_ns = idle_ns     # its open row is closed after this long unused (with idle_close)
        self.idle_step = idle_step  # where that limit is on the controller's ladder (a dynamic idle limit)


class Rank:
    __slots__ = ("act_ns", "faw", "refresh_due_ns")

    def __init__(self, first_refresh_ns: float):
        self.act_ns = -1e18        # the latest activation
        self.faw = [-1e18] * 4     # the last four activations, oldest first
        self.refresh_due_ns = first_refresh_ns


class Request:
    __slots__ = ("pkt", "is_write", "rank", "bank", "row", "arrive_ns", "bypassed", "b", "r")

    def __init__(self, pkt, is_write: bool, rank: int, bank: int, row: int, arrive_ns: float, b: Bank, r: Rank):
        self.pkt = pkt
        self.is_write = is_write
        self.rank = rank
        self.bank = bank           # index within the channel: rank x banks + bank
        self.row = row
        self.arrive_ns = arrive_ns
        self.bypassed = 0
        self.b = b                 # the bank and the rank themselves
        self.r = r


class Channel:
    __slots__ = ("index", "queue", "banks", "ranks", "bus_free_ns", "write_end_ns", "last_write", "last_rank",
                 "epoch_ns", "token", "pending", "ledger")

    def __init__(self, index: int, ranks: int, banks: int, trefi_ns: float, idle_ns: float, idle_step: int):
        self.index = index
        self.queue: list[Request] = []
        self.banks = [Bank(idle_ns, idle_step) for _ in range(ranks * banks)]
        self.ranks = [Rank(trefi_ns * (r + 1) / ranks) for r in range(ranks)]
        self.bus_free_ns = 0.0
        self.write_end_ns = -1e18
        self.last_write = False
        self.last_rank = -1
        self.epoch_ns: float | None = None   # when the next scheduling decision is due, None when idle
        self.token = 0             # invalidates superseded decision events
        self.pending: Pending | None = None   # the choice the due decision event made, and the queue's length
        self.ledger = SpanLedger()           # the bursts' busy and bus time booked ahead of now


def exact_grid(tck_ns: float, timings_ns) -> bool:
    """Whether clock-edge arithmetic is exact: the clock period a short binary fraction of a
    nanosecond and every timing a whole number of periods (DDR400's 5 ns, not DDR2-667's 3.0003 ns)."""
    if tck_ns * 1024 != int(tck_ns * 1024):
        return False
    return all(round(t / tck_ns) * tck_ns == t for t in timings_ns)
