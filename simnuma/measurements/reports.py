"""The benchmark's reports and suite folders as measurements, with a caveat on every number the
benchmark itself did not trust (CPU share, spread, pages)."""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

from ..errors import CalibrationError, SimnumaError, SpecError
from ..units import LINE_BYTES, MOST_ARRAY_BYTES
from ..workload import parse_spec
from .data import (
    BENCH_FORMAT,
    BENCH_FORMATS,
    MachineInfo,
    Measurement,
    MeasurementSet,
    SUITE_FORMAT,
    _parse_json,
    _read_text,
    parse_case,
)

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
    if size is not None and (isinstance(size, bool) or not isinstance(size, int)
                             or not LINE_BYTES <= size <= MOST_ARRAY_BYTES):
        raise CalibrationError(f"{shown}: size_bytes: expected the bytes of an array, a whole number from"
                               f" {LINE_BYTES} to 1024 TiB, got {size!r}")
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
                               origin=shown, thread=label, size_bytes=size,
                               caveat=_caveat(t, parse_spec(label).op),
                               huge_fraction=thread_huge_fraction(t), repetitions=thread_repetitions(t, metric)))
    return out


def thread_repetitions(thread: dict, metric: str) -> tuple:
    """A benchmark thread's ``metric`` in each timed repetition, from its ``GBps.all``.

    A latency chase's time per access is the line over the bandwidth (as the
    benchmark derives ``ns_per_access``).  Empty when the report lists no
    repetitions or any of them is not a positive number: no error bar then.
    """
    summary = thread.get("GBps")
    rates = summary.get("all") if isinstance(summary, dict) else None
    if not isinstance(rates, list) or not all(_positive(r) for r in rates):
        return ()
    if metric == "thread_latency_ns":
        return tuple(LINE_BYTES / float(r) for r in rates)
    return tuple(float(r) for r in rates)


def _positive(value) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and value > 0)


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
    machine: MachineInfo | None = None
    out = []
    for report, name in reports:
        kind = report.get("format") if isinstance(report, dict) else None
        if kind not in BENCH_FORMATS:
            raise CalibrationError(f"{name}: expected format {BENCH_FORMAT!r}, got {kind!r}")
        this = _machine_of_report(report, name)
        if machine is not None and this.key != machine.key:
            raise CalibrationError(f"{name}: measured on {this.description}, but the other reports on"
                                   f" {machine.description}: one machine at a time")
        machine = this
        out += _report_measurements(report, name, this)
    assert machine is not None   # every caller passes at least one report
    return MeasurementSet(tuple(out), machine, (shown,))


def _load_suite_index(index: dict, folder: Path, shown: str) -> MeasurementSet:
    kind = index.get("format") if isinstance(index, dict) else None
    if kind != SUITE_FORMAT:
        raise CalibrationError(f"{shown}: expected format {SUITE_FORMAT!r}, got {kind!r}")
    cases = index.get("cases")
    if not isinstance(cases, list):
        raise CalibrationError(f"{shown}: the suite index has no 'cases' list")
    reports = []
    for i, entry in enumerate(cases):
        if not isinstance(entry, dict):
            raise CalibrationError(f"{shown}: cases[{i}]: expected a mapping with the case's 'name' and 'file',"
                                   f" got {entry!r}")
        if "error" in entry:
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
    groups = index.get("groups")
    groups = groups if isinstance(groups, dict) else {}
    peaks = [name for group in ("peak", "remote-peak") for name in groups.get(group) or () if isinstance(name, str)]
    return replace(_set_from_reports(reports, shown), peaks=frozenset(_case_name(name) for name in peaks))


def _case_name(text: str) -> str:
    """A case's canonical name (the text as it is where it does not parse: it then names no measured case)."""
    try:
        return parse_case(text).name
    except SimnumaError:
        return text


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
