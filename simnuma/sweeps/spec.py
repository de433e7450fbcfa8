"""What a sweep file says, once read: boards, a parameter grid, workloads, metrics and a ranking."""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

__all__ = ["SWEEP_FORMAT", "SET_NAMES", "CASE_METRICS", "AGGREGATES", "BoardEntry", "CaseSet", "Sweep", "Config"]

SWEEP_FORMAT = "simnuma-sweep/1"

# the named workload sets (simnuma.sweeps.workloads makes their cases on each board)
SET_NAMES = ("single", "local", "pairs", "crossfire", "all-to-all")

# per-case metrics: one column each in the table of points
CASE_METRICS = {
    "time_ns": "the case's time: when its last foreground thread finishes (ns)",
    "time_percent": "that time as % of one idle local reader (0.0.r.0) on the same board",
    "GBps": "the foreground threads' bandwidth, summed (GB/s)",
    "latency_ns": "the foreground threads' mean miss latency, averaged over the threads (ns)",
    "max_link_utilization": "the busiest link direction's utilisation (0..1)",
    "max_memory_utilization": "the busiest memory's utilisation (0..1)",
    "bottleneck": "what limits the case (the resource the report names)",
}

# per-configuration aggregates: (description, better: "min" or "max", the set they need)
AGGREGATES = {
    "links": ("coherent links of the board (a cost)", "min", None),
    "diameter": ("the most hops between two sockets", "min", None),
    "mean_time_percent": ("mean time % over every case of the sweep", "min", None),
    "local_latency_ns_mean": ("mean latency of one thread reading its own node's memory (single or local)", "min",
                              "single"),
    "local_latency_ns_worst": ("the worst socket's local latency", "min", "single"),
    "local_latency_spread": ("worst over best local latency, less one: the asymmetry between sockets", "min",
                             "single"),
    "remote_latency_ns_mean": ("mean latency of one thread reading another node's memory (single)", "min", "single"),
    "remote_latency_ns_worst": ("the worst remote latency", "min", "single"),
    "crossfire_penalty": ("the worst crossfire pair's time over its slower thread's time alone, less one", "min",
                          "crossfire"),
    "all_to_all_GBps": ("every socket streaming from another's memory: total GB/s, mean over the shifts", "max",
                        "all-to-all"),
    "deadlocks": ("simulations in which the board deadlocked, its cases and those its aggregates need (left out"
                  " of the other aggregates; a configuration with any ranks after every one without)", "min", None),
}


@dataclass(frozen=True)
class BoardEntry:
    """One board of the sweep: a label (a column of the table), the board, and where it came from."""

    label: str
    topology: object
    source: str
    matches: tuple = ()       # bundled boards a generated wiring is


@dataclass(frozen=True)
class CaseSet:
    """One entry of ``cases``: a case in the case notation (``case``), or a named set with its op(s)."""

    kind: str                 # "case" or one of SET_NAMES
    case: object = None       # the Case, for kind "case"
    ops: tuple = ("r",)
    background: str = ""      # appended to every case of a set (a named set or explicit threads)
    label: str = ""           # how the table names the entry


@dataclass(frozen=True)
class Config:
    """One board at one point of the grid."""

    board: BoardEntry
    values: tuple             # ((path, value), ...) in grid order

    @property
    def name(self) -> str:
        params = ", ".join(f"{path}={value}" for path, value in self.values)
        return f"{self.board.label} [{params}]" if params else self.board.label


@dataclass(frozen=True)
class Sweep:
    name: str
    title: str
    source: str
    boards: tuple
    grid: tuple               # ((path, (value, ...)), ...)
    cases: tuple              # CaseSets
    metrics: tuple
    rank: tuple               # aggregate names, the first decides
    size_bytes: int
    seed: int = 1
    mode: str = "steady"
    folder: object = field(default=None, compare=False)

    def configs(self) -> list:
        """Every board at every point of the grid (the grid's product, boards outermost)."""
        paths = [path for path, _ in self.grid]
        product = list(itertools.product(*(values for _, values in self.grid)))
        return [Config(board, tuple(zip(paths, point))) for board in self.boards for point in product]
