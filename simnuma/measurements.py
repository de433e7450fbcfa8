"""Measured cases, from any source, in one form.

A :class:`Measurement` is one number measured on a real machine: a case (the
foreground threads and the background threads that ran together, in the
``N.C.op.M[@RATE]`` notation), a metric of that case, its value, where the
number comes from, and the machine it was measured on.  Metrics:

=====================  =====  ==================================================
``time_percent``       %      time until every foreground thread has finished,
                              as a percentage of one idle thread reading local
                              memory (the board's baseline, ``0.0.r.0``)
``thread_GBps``        GB/s   bandwidth of one foreground thread
``thread_latency_ns``  ns     mean time per access of one thread (``l`` chase)
``memory_GBps``        GB/s   bytes per second a node's memory serves
``link_GBps``          GB/s   bytes per second over one link direction, data and
                              control together
``link_control_GBps``  GB/s   the non-data (command) part of ``link_GBps``
=====================  =====  ==================================================

:func:`load_measurements` reads, and may mix, three sources:

* the native benchmark's JSON report (``"format": "simnuma-bench/2"``, or
  ``simnuma-bench/1`` from before the latency chase ran on huge pages): per
  foreground thread its best repetition's GB/s (``thread_GBps``), or for a
  latency chase (op ``l``) its best time per access (``thread_latency_ns``);
* a benchmark suite (``simnuma bench suite -o DIR``): the folder, or its
  ``suite.json`` (``"format": "simnuma-bench-suite/1"``), read through the
  per-case reports it lists;
* a reference dataset of published numbers in YAML (``"format":
  "simnuma-reference/1"``), by path or by name (``quartet-single-thread``):
  bundled datasets live in ``experiments/reference/`` (the ``simnuma.studies``
  package data).

Every problem is a :class:`~simnuma.errors.CalibrationError` of one line
naming the file (and, for YAML, the line and key).
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from . import bundled
from pathlib import Path

from .errors import CalibrationError, SpecError
from .units import UnitError, parse_quantity, parse_size_bytes
from .workload import parse_spec
from .yamlsrc import load_yaml, path_text

__all__ = [
    "Case",
    "Measurement",
    "MachineInfo",
    "MeasurementSet",
    "METRICS",
    "load_measurements",
    "load_source",
    "reference_datasets",
    "resolve_reference",
    "parse_case",
    "REFERENCE_FORMAT",
    "BENCH_FORMAT",
    "BENCH_FORMATS",
    "SUITE_FORMAT",
]

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
_BACKGROUND_SEPARATOR = " bg "


# ------------------------------------------------------------------ the data

@dataclass(frozen=True)
class Case:
    """Threads that ran together: foreground specs and background specs (canonical labels)."""

    threads: tuple
    background: tuple = ()

    @property
    def name(self) -> str:
        """``0.0.w.0 0.1.w.0`` or, with background threads, ``0.0.w.0 bg 1.0.r.1@0.5GB/s``."""
        text = " ".join(self.threads)
        if self.background:
            text += _BACKGROUND_SEPARATOR + " ".join(self.background)
        return text

    @property
    def single_thread(self) -> bool:
        """One foreground thread and no background: the default calibration cases."""
        return len(self.threads) == 1 and not self.background

    @property
    def ops(self) -> frozenset:
        """The ops of every thread of the case."""
        return frozenset(parse_spec(s).op for s in self.threads + self.background)

    def __str__(self) -> str:
        return self.name


def parse_case(threads, background=()) -> Case:
    """A Case from specs (a list, or one string of specs separated by spaces).

    A single string may carry its background after `` bg ``, as
    :attr:`Case.name` writes it.  Raises SpecError for a malformed spec.
    """
    if isinstance(threads, str):
        text = threads.strip()
        if _BACKGROUND_SEPARATOR.strip() in text.split():
            words = text.split()
            at = words.index(_BACKGROUND_SEPARATOR.strip())
            threads, extra = words[:at], words[at + 1:]
            background = list(extra) + list(_split_specs(background))
        else:
            threads = text.split()
    fg = tuple(parse_spec(s).label for s in threads)
    bg = tuple(parse_spec(s).label for s in _split_specs(background))
    if not fg:
        raise SpecError("a case needs at least one foreground thread, e.g. 0.0.r.0")
    return Case(fg, bg)


def _split_specs(specs) -> list:
    if specs is None:
        return []
    if isinstance(specs, str):
        return specs.split()
    return [str(s) for s in specs]


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
        out = {"description": self.description}
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
        src, dst = self.link
        part = " control" if self.metric == "link_control_GBps" else ""
        return f"link {src}->{dst}{part} GB/s"

    def error_percent(self, predicted: float) -> float:
        """How far ``predicted`` is from the measured value, in percent of it."""
        return 100.0 * (predicted - self.value) / self.value

    @property
    def key(self) -> str:
        """Unique within a set: the case and the label."""
        return f"{self.case.name} | {self.label}"

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
        return out


@dataclass(frozen=True)
class MeasurementSet:
    """Measurements of one machine, from one or more files."""

    measurements: tuple
    machine: MachineInfo
    files: tuple = field(default_factory=tuple)

    def __len__(self) -> int:
        return len(self.measurements)

    def __iter__(self):
        return iter(self.measurements)

    @property
    def cases(self) -> tuple:
        """Every measured case, in the order first measured."""
        seen = {}
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


# ------------------------------------------------------------------ loading

def load_measurements(sources) -> MeasurementSet:
    """Read every source (paths or dataset names) into one set of one machine.

    Raises CalibrationError when a source cannot be read, when two sources
    describe different machines, or when a measurement appears twice.
    """
    if isinstance(sources, (str, Path)):
        sources = [sources]
    sets = [load_source(s) for s in sources]
    if not sets:
        raise CalibrationError("no measurement file given")
    first = sets[0]
    for other in sets[1:]:
        if other.machine.key != first.machine.key:
            raise CalibrationError(f"{other.files[0]}: measured on {other.machine.description}, but"
                                   f" {first.files[0]} on {first.machine.description}: one machine at a time")
    seen = {}
    for s in sets:
        for m in s.measurements:
            if m.key in seen:
                raise CalibrationError(f"{m.origin}: {m.key} is measured twice (also in {seen[m.key]})")
            seen[m.key] = m.origin
    measurements = tuple(m for s in sets for m in s.measurements)
    files = tuple(f for s in sets for f in s.files)
    return MeasurementSet(measurements, first.machine, files)


def load_source(source) -> MeasurementSet:
    """One file, folder or dataset name."""
    text = str(source)
    path = Path(text)
    if path.is_dir():
        return _load_suite_dir(path)
    if path.is_file():
        return _load_file(path, text)
    bundled = resolve_reference(text)
    if bundled is not None:
        content, shown = bundled
        return _load_reference(content, shown)
    names = ", ".join(reference_datasets()) or "none"
    raise CalibrationError(f"{text}: no such measurement file, folder or reference dataset"
                           f" (bundled datasets: {names})")


def _read_text(path: Path, shown: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CalibrationError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise CalibrationError(f"{shown}: not UTF-8 text (byte {exc.start})") from None


def _load_file(path: Path, shown: str) -> MeasurementSet:
    content = _read_text(path, shown)
    if path.suffix.lower() == ".json" or content.lstrip().startswith("{"):
        data = _parse_json(content, shown)
        kind = data.get("format") if isinstance(data, dict) else None
        if kind in BENCH_FORMATS:
            return _set_from_reports([(data, shown)], shown)
        if kind == SUITE_FORMAT:
            return _load_suite_index(data, path.parent, shown)
        if kind == REFERENCE_FORMAT:
            return _load_reference(content, shown)
        raise CalibrationError(f"{shown}: unknown format {kind!r}; expected {BENCH_FORMAT!r} (simnuma bench run),"
                               f" {SUITE_FORMAT!r} (simnuma bench suite) or {REFERENCE_FORMAT!r}")
    return _load_reference(content, shown)


def _parse_json(content: str, shown: str):
    try:
        return json.loads(content)
    except json.JSONDecodeError as exc:
        raise CalibrationError(f"{shown}:{exc.lineno}: malformed JSON: {exc.msg}") from None


# -- reference datasets

def reference_datasets() -> list:
    """Names of the bundled reference datasets."""
    return bundled.names("reference")


def resolve_reference(name: str):
    """``(text, shown path)`` of a bundled dataset by name, or None."""
    return bundled.read("reference", name)


class _Reference:
    """Reads one reference dataset, raising on its first problem with file:line: key."""

    TOP = ("format", "name", "board", "host", "description", "size", "baseline", "sources", "measurements")
    ENTRY = ("case", "background", "metric", "value", "source", "thread", "node", "link", "note")

    def __init__(self, content: str, shown: str):
        self.shown = shown
        self.src = load_yaml(content, shown)
        if self.src.problems:
            raise CalibrationError(str(self.src.problems[0]))

    def fail(self, path, message):
        line = self.src.line(tuple(path))
        where = f"{self.shown}:{line}" if line is not None else self.shown
        key = path_text(tuple(path))
        raise CalibrationError(f"{where}: {key}: {message}" if key else f"{where}: {message}")

    def read(self) -> MeasurementSet:
        data = self.src.data
        if not isinstance(data, dict):
            self.fail((), f"a reference dataset is a mapping with 'format: {REFERENCE_FORMAT}' and 'measurements'")
        self.check_keys(data, self.TOP, ())
        if data.get("format") != REFERENCE_FORMAT:
            self.fail(("format",), f"expected {REFERENCE_FORMAT!r}, got {data.get('format')!r}")
        board = self.text(data, "board", ())
        machine = MachineInfo(description=f"board {board!r}" + (f" ({data['host']})" if data.get("host") else ""),
                              board=board)
        size = self.size(data)
        baseline = self.baseline(data)
        sources = data.get("sources") or {}
        if not isinstance(sources, dict):
            self.fail(("sources",), "expected a mapping from a short name to a citation")
        entries = data.get("measurements")
        if not isinstance(entries, list) or not entries:
            self.fail(("measurements",), "expected a non-empty list of measurements")
        out, seen = [], {}
        for i, entry in enumerate(entries):
            m = self.entry(entry, ("measurements", i), machine, size, baseline, sources)
            if m.key in seen:
                self.fail(("measurements", i), f"{m.key} is measured twice (also measurements[{seen[m.key]}])")
            seen[m.key] = i
            out.append(m)
        return MeasurementSet(tuple(out), machine, (self.shown,))

    def check_keys(self, mapping, valid, path):
        for key in mapping:
            if key not in valid:
                self.fail(tuple(path) + (key,), f"unknown key; expected one of: {', '.join(valid)}")

    def text(self, mapping, key, path) -> str:
        value = mapping.get(key)
        if not isinstance(value, str) or not value.strip():
            self.fail(tuple(path) + (key,), f"expected text, got {value!r}")
        return value.strip()

    def size(self, data):
        if "size" not in data:
            return None
        try:
            return parse_size_bytes(data["size"])
        except UnitError as exc:
            self.fail(("size",), str(exc))

    def baseline(self, data):
        if "baseline" not in data:
            return None
        try:
            return parse_spec(data["baseline"]).label
        except SpecError as exc:
            self.fail(("baseline",), str(exc))

    def entry(self, entry, path, machine, size, baseline, sources) -> Measurement:
        if not isinstance(entry, dict):
            self.fail(path, f"expected a mapping such as {{case: 0.0.r.0, metric: time_percent, value: 100}}")
        self.check_keys(entry, self.ENTRY, path)
        for key in ("case", "metric", "value"):
            if key not in entry:
                self.fail(path, f"missing {key!r}")
        try:
            case = parse_case(entry["case"] if isinstance(entry["case"], (str, list)) else str(entry["case"]),
                              entry.get("background", ()))
        except SpecError as exc:
            self.fail(path + ("case",), str(exc))
        metric = entry["metric"]
        if metric not in METRICS:
            self.fail(path + ("metric",), f"unknown metric {metric!r}; expected one of: {', '.join(METRICS)}")
        value = self.value(entry["value"], metric, path + ("value",))
        subject = self.subject(entry, metric, case, path)
        source = entry.get("source")
        if not isinstance(source, str) or not source.strip():
            self.fail(path + ("source",), "every published number needs its source (a key of 'sources' or text)")
        citation = sources.get(source, source)
        return Measurement(case=case, metric=metric, value=value, source=str(citation).strip(), machine=machine,
                           origin=self.shown, size_bytes=size, baseline=baseline, **subject)

    def value(self, raw, metric, path) -> float:
        kind = METRICS[metric][2]
        if isinstance(raw, bool):
            self.fail(path, f"expected a number, got {raw!r}")
        if isinstance(raw, (int, float)):
            value = float(raw)
        elif isinstance(raw, str) and kind is not None:
            try:
                value = parse_quantity(raw, kind)
            except UnitError as exc:
                self.fail(path, str(exc))
        else:
            self.fail(path, f"expected a number in {METRICS[metric][0]}, got {raw!r}")
        if not math.isfinite(value) or value <= 0:
            self.fail(path, f"expected a positive number, got {raw!r}")
        return value

    def subject(self, entry, metric, case, path) -> dict:
        need = METRICS[metric][1]
        if need == "thread":
            thread = entry.get("thread")
            if thread is None:
                if len(case.threads) != 1:
                    self.fail(path, f"{metric} of a case with several threads needs 'thread'")
                thread = case.threads[0]
            try:
                label = parse_spec(thread).label
            except SpecError as exc:
                self.fail(path + ("thread",), str(exc))
            if label not in case.threads + case.background:
                self.fail(path + ("thread",), f"{label!r} is not a thread of the case {case.name!r}")
            return {"thread": label}
        if need == "node":
            node = entry.get("node")
            if isinstance(node, bool) or not isinstance(node, int) or node < 0:
                self.fail(path + ("node",) if "node" in entry else path,
                          f"{metric} needs 'node' (a node id such as 0), got {node!r}")
            return {"node": node}
        if need == "link":
            m = _LINK.match(str(entry.get("link", "")))
            if not m or m.group(1) == m.group(2):
                self.fail(path + ("link",) if "link" in entry else path,
                          f"{metric} needs 'link' as 'src->dst' (e.g. '0->1'), got {entry.get('link')!r}")
            return {"link": (int(m.group(1)), int(m.group(2)))}
        return {}


def _load_reference(content: str, shown: str) -> MeasurementSet:
    return _Reference(content, shown).read()


# -- benchmark reports

def _machine_of_report(report: dict, shown: str) -> MachineInfo:
    host = report.get("host")
    if not isinstance(host, dict) or not isinstance(host.get("nodes"), list):
        raise CalibrationError(f"{shown}: the report has no host description ('host.nodes')")
    try:
        nodes = tuple((int(n["id"]), len(n.get("cpus") or []), n.get("memory_bytes", 1) != 0)
                      for n in host["nodes"])
    except (KeyError, TypeError, ValueError):
        raise CalibrationError(f"{shown}: malformed host.nodes in the report") from None
    model = str(host.get("cpu_model") or "unknown CPU")
    cpus = sum(c for _, c, _ in nodes)
    return MachineInfo(description=f"host {model!r} ({len(nodes)} node(s), {cpus} CPUs)",
                       cpu_model=model, nodes=nodes)


def _report_measurements(report: dict, shown: str, machine: MachineInfo) -> list:
    threads = report.get("threads")
    if not isinstance(threads, list) or not threads:
        raise CalibrationError(f"{shown}: the report has no threads")
    try:
        fg = [t["spec"] for t in threads if t["role"] == "foreground"]
        bg = [t["spec"] for t in threads if t["role"] == "background"]
        case = parse_case(fg, bg)
    except (KeyError, TypeError):
        raise CalibrationError(f"{shown}: malformed threads in the report") from None
    except SpecError as exc:
        raise CalibrationError(f"{shown}: {exc}") from None
    size = report.get("size_bytes")
    source = f"simnuma bench, {shown}" + (f", {report['date']}" if report.get("date") else "")
    out = []
    for t in threads:
        if t.get("role") != "foreground":
            continue
        label = parse_spec(t["spec"]).label
        try:
            if parse_spec(label).op == "l":
                metric, value = "thread_latency_ns", float(t["ns_per_access"]["best"])
            else:
                metric, value = "thread_GBps", float(t["GBps"]["best"])
        except (KeyError, TypeError, ValueError):
            raise CalibrationError(f"{shown}: thread {label!r} lacks its GBps/ns_per_access figures") from None
        if not math.isfinite(value) or value <= 0:
            raise CalibrationError(f"{shown}: thread {label!r} has no positive {metric} ({value!r})")
        out.append(Measurement(case=case, metric=metric, value=value, source=source, machine=machine,
                               origin=shown, thread=label, size_bytes=size if isinstance(size, int) else None,
                               caveat=_caveat(t, parse_spec(label).op),
                               huge_fraction=thread_huge_fraction(t)))
    return out


def thread_huge_fraction(thread: dict) -> float | None:
    """The share of a benchmark thread's arrays on huge pages (``threads[].pages.huge_fraction``).

    None when the report does not say: a report without per-thread pages
    (``simnuma-bench/1``) or one that could not read them; calibration takes
    that as base pages.
    """
    pages = thread.get("pages") if isinstance(thread, dict) else None
    fraction = pages.get("huge_fraction") if isinstance(pages, dict) else None
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not math.isfinite(fraction):
        return None
    return min(max(float(fraction), 0.0), 1.0)


CPU_SHARE_TRUSTED = 0.9    # a thread with less of its CPU than this shared it with other work
SPREAD_TRUSTED = 0.05      # repetitions spread more than this were disturbed
HUGE_TRUSTED = 0.99        # a latency chase with less of its array on huge pages also measures page walks


def _caveat(thread: dict, op: str) -> str:
    """Why a benchmark thread's figure may not be trusted ('' when nothing is known against it)."""
    notes = []
    share = thread.get("cpu_share")
    median = share.get("median") if isinstance(share, dict) else None
    if isinstance(median, (int, float)) and median < CPU_SHARE_TRUSTED:
        notes.append(f"the thread had {100 * median:.0f}% of its CPU")
    spread = thread.get("spread")
    if isinstance(spread, (int, float)) and spread > SPREAD_TRUSTED:
        notes.append(f"repetitions spread {100 * spread:.0f}%")
    if op == "l":
        notes += _chase_pages_caveat(thread.get("pages"))
    return "; ".join(notes)


def _chase_pages_caveat(pages) -> list:
    """A latency chase not (wholly) on huge pages times page walks as well as memory."""
    if not isinstance(pages, dict):
        return ["the chase ran on base pages (a simnuma-bench/1 report): its latency includes TLB misses"]
    fraction = pages.get("huge_fraction")
    if isinstance(fraction, (int, float)) and fraction < HUGE_TRUSTED:
        return [f"the chase had {100 * fraction:.0f}% of its array on huge pages: its latency includes TLB misses"]
    return []


def _set_from_reports(reports, shown: str) -> MeasurementSet:
    """``reports``: ``[(report dict, file shown)]`` of one machine."""
    machine = None
    out = []
    for report, name in reports:
        if report.get("format") not in BENCH_FORMATS:
            raise CalibrationError(f"{name}: expected format {BENCH_FORMAT!r}, got {report.get('format')!r}")
        this = _machine_of_report(report, name)
        if machine is not None and this.key != machine.key:
            raise CalibrationError(f"{name}: measured on {this.description}, but the other reports on"
                                   f" {machine.description}: one machine at a time")
        machine = this
        out += _report_measurements(report, name, this)
    return MeasurementSet(tuple(out), machine, (shown,))


def _load_suite_index(index: dict, folder: Path, shown: str) -> MeasurementSet:
    cases = index.get("cases")
    if not isinstance(cases, list):
        raise CalibrationError(f"{shown}: the suite index has no 'cases' list")
    reports = []
    for entry in cases:
        if not isinstance(entry, dict) or "error" in entry:
            continue  # a case that failed to run measured nothing
        name = entry.get("file")
        if not isinstance(name, str):
            raise CalibrationError(f"{shown}: case {entry.get('name')!r} names no report file")
        path = folder / name
        if not path.is_file():
            raise CalibrationError(f"{shown}: case {entry.get('name')!r}: report {path} is missing")
        reports.append((_parse_json(_read_text(path, str(path)), str(path)), str(path)))
    if not reports:
        raise CalibrationError(f"{shown}: the suite holds no successful case")
    return _set_from_reports(reports, shown)


def _load_suite_dir(folder: Path) -> MeasurementSet:
    index = folder / "suite.json"
    if index.is_file():
        return _load_suite_index(_parse_json(_read_text(index, str(index)), str(index)), folder, str(index))
    reports = []
    for path in sorted(folder.glob("*.json")):
        data = _parse_json(_read_text(path, str(path)), str(path))
        if isinstance(data, dict) and data.get("format") in BENCH_FORMATS:
            reports.append((data, str(path)))
    if not reports:
        raise CalibrationError(f"{folder}: no suite.json and no benchmark report ({BENCH_FORMAT}) in this folder")
    return _set_from_reports(reports, str(folder))

