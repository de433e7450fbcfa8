"""The reference-dataset format (``simnuma-reference/1``): published measurements in YAML, checked
key by key."""
from __future__ import annotations

import math
from typing import NoReturn

from ..errors import CalibrationError, SpecError
from ..units import UnitError, parse_array_bytes, parse_quantity
from ..workload import parse_spec
from ..yamlsrc import document_kind, load_yaml, path_text
from .data import _LINK, METRICS, REFERENCE_FORMAT, MachineInfo, Measurement, MeasurementSet, parse_case


# the largest value of a kind that a measurement of one thread, memory or link can have; beyond it a unit was
# lost (bytes or MB per second read as GB/s, picoseconds as nanoseconds)
_PLAUSIBLE = {"bandwidth": 10_000.0, "time": 1e6}
_EXAMPLE = {"bandwidth": "4.5 GB/s", "time": "95 ns"}


class _Reference:
    """Reads one reference dataset, raising on its first problem with file:line: key."""

    TOP = ("format", "name", "board", "host", "description", "size", "baseline", "sources", "measurements")
    ENTRY = ("case", "background", "metric", "value", "source", "thread", "node", "link", "note")

    def __init__(self, content: str, shown: str):
        self.shown = shown
        self.src = load_yaml(content, shown)
        if self.src.problems:
            raise CalibrationError(str(self.src.problems[0]))

    def at(self, path) -> str:
        """``file:line: key.path`` of ``path``, as a message starts."""
        line = self.src.line(tuple(path))
        where = f"{self.shown}:{line}" if line is not None else self.shown
        key = path_text(tuple(path))
        return f"{where}: {key}" if key else where

    def fail(self, path, message) -> NoReturn:
        raise CalibrationError(f"{self.at(path)}: {message}")

    def read(self) -> MeasurementSet:
        data = self.src.data
        if not isinstance(data, dict):
            self.fail((), f"a reference dataset is a mapping with 'format: {REFERENCE_FORMAT}' and 'measurements'")
        kind = document_kind(data)
        if kind not in (None, "a reference dataset"):
            self.fail(("format",) if "format" in data else (), f"this is {kind}, not a reference dataset of measurements")
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
        out = []
        seen: dict[tuple, int] = {}   # what a measurement measures (threads in any order) -> its index
        for i, entry in enumerate(entries):
            m = self.entry(entry, ("measurements", i), machine, size, baseline, sources)
            if m.workload_key in seen:
                self.fail(("measurements", i), f"{m.key} is measured twice (also measurements"
                                               f"[{seen[m.workload_key]}], its threads perhaps in another order)")
            seen[m.workload_key] = i
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
            return parse_array_bytes(data["size"])
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
            self.fail(path, "expected a mapping such as {case: 0.0.r.0, metric: time_percent, value: 100}")
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
        where = tuple((key, self.at(path + (key,))) for key in ("case", "node", "link") if key in entry)
        if baseline is not None:
            where += (("baseline", self.at(("baseline",))),)
        return Measurement(case=case, metric=metric, value=value, source=str(citation).strip(), machine=machine,
                           origin=self.shown, size_bytes=size, baseline=baseline, where=where, **subject)

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
        unit, limit = METRICS[metric][0], _PLAUSIBLE.get(kind or "")
        if kind and limit is not None and value > limit:
            self.fail(path, f"{value:g} {unit} is beyond any memory system (at most {limit:g} {unit});"
                            f" expected {unit}, got {raw!r}: give the unit (e.g. '{_EXAMPLE[kind]}')")
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
                spec = parse_spec(thread)
            except SpecError as exc:
                self.fail(path + ("thread",), str(exc))
            if spec.label not in case.threads + case.background:
                self.fail(path + ("thread",), f"{spec.label!r} is not a thread of the case {case.name!r}")
            if metric == "thread_latency_ns" and spec.op != "l":
                self.fail(path + ("metric",), f"thread_latency_ns is a latency chase's time per access (op 'l');"
                                              f" {spec.label!r} streams: give its thread_GBps")
            return {"thread": spec.label}
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
