"""What a measurement set holds: cases, measured values with units and sources, and the machine."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import CalibrationError
from ..fileio import UnreadableInput, read_input
from ..case import Case, parse_case  # noqa: F401 - a measurement's case is the one Case

REFERENCE_FORMAT = "simnuma-reference/1"
BENCH_FORMAT = "simnuma-bench/2"
# every benchmark report format this loader reads: version 2 added the pages of each thread's arrays
# (the latency chase on huge pages); a version 1 chase ran on base pages
BENCH_FORMATS = ("simnuma-bench/1", BENCH_FORMAT)
SUITE_FORMAT = "simnuma-bench-suite/1"

# metric -> (unit, what it needs besides the case, the unit kind of a value given with a unit)
METRICS = {
    "time_percent": ("%", None, None),
    "thread_GBps": ("GB/s", "thread", "bandwidth"),
    "thread_latency_ns": ("ns", "thread", "time"),
    "memory_GBps": ("GB/s", "node", "bandwidth"),
    "link_GBps": ("GB/s", "link", "bandwidth"),
    "link_control_GBps": ("GB/s", "link", "bandwidth"),
}
_LINK = re.compile(r"^\s*(\d+)\s*->\s*(\d+)\s*$")


# ------------------------------------------------------------------ the data

@dataclass(frozen=True)
class MachineInfo:
    """The machine a set of measurements was taken on.

    ``board`` is the board (topology) name a reference dataset names; a
    benchmark report instead describes the host: its CPU model and the CPUs of
    each NUMA node (``nodes``: ``((node id, CPU count, has memory), ...)``).
    """

    description: str
    board: str | None = None
    cpu_model: str | None = None
    nodes: tuple | None = None

    @property
    def key(self) -> tuple:
        """What two measurement files must share to come from the same machine."""
        return (self.board, self.cpu_model, self.nodes)

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"description": self.description}
        if self.board is not None:
            out["board"] = self.board
        if self.cpu_model is not None:
            out["cpu_model"] = self.cpu_model
        if self.nodes is not None:
            out["nodes"] = [{"id": n, "cpus": c, "memory": m} for n, c, m in self.nodes]
        return out


@dataclass(frozen=True)
class Measurement:
    """One measured number of one case."""

    case: Case
    metric: str
    value: float
    source: str
    machine: MachineInfo
    origin: str                 # the file it was read from (as given, or the dataset's bundled path)
    thread: str | None = None   # thread_* metrics
    node: int | None = None     # memory_GBps
    link: tuple | None = None   # link_* metrics: (src, dst)
    size_bytes: int | None = None
    baseline: str | None = None  # time_percent: the reference case (one idle local reader)
    caveat: str = ""            # why the number may not be trusted (a shared CPU, spread repetitions)
    huge_fraction: float | None = None  # share of the thread's arrays on huge pages; None: the source does not say
    repetitions: tuple = ()     # the metric's value in each timed repetition (empty: the source gives none)
    where: tuple = ()           # ((key, 'file:line: key.path'), ...): where a reference dataset gives its keys

    def at(self, key: str) -> str:
        """Where the measurement gives ``key`` (``case``, ``node``, ``link``, ``baseline``), as a message starts:
        ``file:line: key.path`` in a reference dataset, else the file and the measurement."""
        return dict(self.where).get(key, f"{self.origin}: {self.key}")

    @property
    def unit(self) -> str:
        return METRICS[self.metric][0]

    @property
    def label(self) -> str:
        """The metric and its subject: ``time %``, ``0.0.r.1 GB/s``, ``link 0->1 control GB/s``."""
        if self.metric == "time_percent":
            return "time %"
        if self.metric == "thread_GBps":
            return f"{self.thread} GB/s"
        if self.metric == "thread_latency_ns":
            return f"{self.thread} latency ns"
        if self.metric == "memory_GBps":
            return f"memory N{self.node} GB/s"
        assert self.link is not None   # link_* metrics have their link
        src, dst = self.link
        part = " control" if self.metric == "link_control_GBps" else ""
        return f"link {src}->{dst}{part} GB/s"

    def error_percent(self, predicted: float) -> float:
        """How far ``predicted`` is from the measured value, in percent of it."""
        return 100.0 * (predicted - self.value) / self.value

    @property
    def error_bar(self) -> tuple | None:
        """``(low, high)``: the lowest and the highest value of the repetitions, the value itself included.

        None with fewer than two repetitions (a reference dataset, a report
        that lists none, a single repetition): nothing says how far the
        value moves.  The benchmark's value is its best repetition, so it is
        one end of the bar (the top of a bandwidth's, the bottom of a latency's).
        """
        if len(self.repetitions) < 2:
            return None
        values = (*self.repetitions, self.value)
        return min(values), max(values)

    def within_error_bar(self, predicted: float) -> bool | None:
        """Whether ``predicted`` lies inside :attr:`error_bar` (None: the measurement has none)."""
        bar = self.error_bar
        return None if bar is None else bar[0] <= predicted <= bar[1]

    @property
    def key(self) -> str:
        """Unique within a set: the case and the label."""
        return f"{self.case.name} | {self.label}"

    @property
    def workload_key(self) -> tuple:
        """The same for the same threads listed in another order: what two measurements of one thing share."""
        return tuple(sorted(self.case.threads)), tuple(sorted(self.case.background)), self.label

    def to_dict(self) -> dict:
        out = {"case": self.case.name, "threads": list(self.case.threads),
               "background": list(self.case.background), "metric": self.metric, "label": self.label,
               "value": self.value, "unit": self.unit, "source": self.source, "origin": self.origin}
        if self.thread is not None:
            out["thread"] = self.thread
        if self.node is not None:
            out["node"] = self.node
        if self.link is not None:
            out["link"] = f"{self.link[0]}->{self.link[1]}"
        if self.size_bytes is not None:
            out["size_bytes"] = self.size_bytes
        if self.caveat:
            out["caveat"] = self.caveat
        if self.huge_fraction is not None:
            out["huge_fraction"] = self.huge_fraction
        if self.repetitions:
            out["repetitions"] = list(self.repetitions)
        return out


@dataclass(frozen=True)
class MeasurementSet:
    """Measurements of one machine, from one or more files."""

    measurements: tuple
    machine: MachineInfo
    files: tuple = field(default_factory=tuple)
    peaks: frozenset = frozenset()   # the cases a suite planned as peaks (of every CPU it could use), by name
    notes: tuple = ()                # what a source held and the set does not (a tool output's sections not imported)

    def __len__(self) -> int:
        return len(self.measurements)

    def __iter__(self):
        return iter(self.measurements)

    @property
    def cases(self) -> tuple:
        """Every measured case, in the order first measured."""
        seen: dict[str, Case] = {}
        for m in self.measurements:
            seen.setdefault(m.case.name, m.case)
        return tuple(seen.values())

    def select(self, case_names) -> "MeasurementSet":
        """Only the measurements of the cases named (``Case.name``)."""
        wanted = set(case_names)
        return replace(self, measurements=tuple(m for m in self.measurements if m.case.name in wanted))

    def exclude(self, case_names) -> "MeasurementSet":
        """The measurements of every case not named."""
        unwanted = set(case_names)
        return replace(self, measurements=tuple(m for m in self.measurements if m.case.name not in unwanted))

    def single_thread_cases(self) -> tuple:
        return tuple(c for c in self.cases if c.single_thread)

    def multi_thread_cases(self) -> tuple:
        return tuple(c for c in self.cases if not c.single_thread)


# ------------------------------------------------------------------ reading files

def _read_text(path: Path, shown: str) -> str:
    try:
        return read_input(path)
    except UnreadableInput as exc:
        reason = str(exc)
        raise CalibrationError(f"{shown}: {reason}" if reason.startswith("not ") else
                               f"{shown}: cannot read: {reason}") from None


def _parse_json(content: str, shown: str):
    try:
        return json.loads(content)
    except json.JSONDecodeError as exc:
        raise CalibrationError(f"{shown}:{exc.lineno}: malformed JSON: {exc.msg}") from None
