"""Bandwidth-latency curves out of a suite's loaded-latency cases.

A loaded-latency case is a latency chase (one foreground ``l`` thread) beside
background streams of one op, all on the chase's memory node: ``0.0.l.0 +
0.1.r.0 0.2.r.0`` or ``0.0.l.0 + 0.1.w.0@2GB/s``.  Each one is a point of the
curve of its mix (the op of the streams): the memory bandwidth the node
served, and the chase's latency.  The idle chase (``0.0.l.0`` alone) is the
first point of every curve.

The memory bandwidth of a case is the bytes per second the node's memory
serves to every thread whose arrays are on it, from each thread's reported
GB/s (:data:`MEMORY_BYTES_PER_REPORTED_BYTE`):

- ``r``: x 1 (one line read per line);
- ``w``: x 2 (the write-allocate fill and the write-back of each line);
- ``t``: x 4/3 (the report counts three arrays' bytes, as STREAM does; memory
  serves b, c, the fill of a and the write-back of a);
- ``l``: 64 B per access, 64 / ns_per_access.

Every figure is a median over the case's repetitions in which the chase had
its CPU to itself (``cpu_share`` at least :data:`CPU_SHARE_TRUSTED`; all of them
when none did): a chase descheduled by other work would time the scheduler.
Each thread's rate is taken in those same repetitions (a background stream
runs exactly as long as the chase in each), and medians keep the points of a
curve comparable with one another and with the idle chase.  A curve's
``read_fraction`` is the share of reads in the traffic of all its points
(:data:`READ_SHARE`: r 1, w 1/2, t 3/4, l 1), rounded to two decimals.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from statistics import median

from ..case import parse_case
from ..errors import BenchError, SpecError
from ..workload import parse_spec
from .run import FORMATS
from ..units import LINE_BYTES  # noqa: F401 - the one definition

__all__ = ["CurvePoint", "Curve", "curves_from_suite", "peak_latency_bound", "curves_from_reports", "read_suite",
           "memory_traffic", "MEMORY_BYTES_PER_REPORTED_BYTE", "READ_SHARE", "LINE_BYTES", "CPU_SHARE_TRUSTED"]

MEMORY_BYTES_PER_REPORTED_BYTE = {"r": 1.0, "w": 2.0, "t": 4.0 / 3.0}
READ_SHARE = {"r": 1.0, "w": 0.5, "t": 0.75, "l": 1.0}
CPU_SHARE_TRUSTED = 0.9    # a chase with less of its CPU than this in a repetition shared it with other work
# a point within this share of the bandwidth of the one before it adds nothing a curve of latency against bandwidth
# can hold: past saturation, loads that rise further leave the bandwidth where it is and only queue (the model
# queues the excess itself), so of such points the least loaded, the one of least latency, is kept
SAME_BANDWIDTH = 0.005
SUITE_INDEX = "suite.json"


@dataclass(frozen=True)
class CurvePoint:
    """One case on a curve: the node's memory bandwidth and the chase's latency."""

    bandwidth_GBps: float
    latency_ns: float
    case: str
    read_GBps: float       # the part of bandwidth_GBps that is reads
    repetitions: int = 0   # repetitions the figures are medians of (0: the report's own medians)
    of: int = 0            # repetitions the case has
    trusted: bool = True   # False when the chase shared its CPU in every repetition

    def to_dict(self) -> dict:
        return {"bandwidth_GBps": self.bandwidth_GBps, "latency_ns": self.latency_ns, "case": self.case,
                "read_GBps": self.read_GBps, "repetitions": self.repetitions, "of": self.of,
                "trusted": self.trusted}


@dataclass(frozen=True)
class Curve:
    """The chase's latency against its node's memory bandwidth, for one mix of background streams."""

    mix: str               # the op of the streams: r, w or t
    node: int              # the memory node of the chase and the streams
    chase: str             # the chase's spec
    points: tuple          # CurvePoint, the idle chase first, then by bandwidth
    read_fraction: float   # share of reads in the traffic of all points, two decimals
    dropped: tuple = ()    # cases whose bandwidth was not above the idle chase's (no place on the curve)
    peak_GBps: float = 0.0  # the most streams of the mix alone drew from the node, when above the last point
    peak_case: str = ""    # ... and the case that drew it
    lone_GBps: float = 0.0  # the most one stream of the mix alone drew from the node (0: the suite has none)
    peak_latency_ns: float = 0.0  # the most latency Little's law allows at the peak (peak_latency_bound; 0: none)
    peak_latency_case: str = ""   # ... and the loaded case that bounds it

    @property
    def untrusted(self) -> list:
        """Cases of the points measured only while the chase shared its CPU with other work."""
        return [p.case for p in self.points if not p.trusted]

    @property
    def pairs(self) -> list:
        """``[(GB/s, ns), ...]`` in curve order."""
        return [(p.bandwidth_GBps, p.latency_ns) for p in self.points]

    def to_dict(self) -> dict:
        return {"mix": self.mix, "node": self.node, "chase": self.chase, "read_fraction": self.read_fraction,
                "points": [p.to_dict() for p in self.points], "dropped": list(self.dropped),
                "peak_GBps": self.peak_GBps, "peak_case": self.peak_case, "lone_GBps": self.lone_GBps,
                "peak_latency_ns": self.peak_latency_ns, "peak_latency_case": self.peak_latency_case}

    @property
    def lone_lines(self) -> float:
        """The lines one stream of the mix kept in flight alone, by Little's law: its bandwidth x the idle chase's
        latency / 64 B (at least: its own latency is no less); 0 without a lone stream."""
        return self.lone_GBps * self.points[0].latency_ns / 64.0


def _trusted_repetitions(report: dict) -> tuple:
    """``(indices, trusted)``: the repetitions in which the chase had its CPU, or all of them (``trusted``
    False) when it never did; ``(None, True)`` for a report without per-repetition figures."""
    threads = report["threads"]
    chase = next(t for t in threads if t["role"] == "foreground")
    shares = (chase.get("cpu_share") or {}).get("all")
    count = len(shares) if isinstance(shares, list) else 0
    if (not isinstance(shares, list) or not count
            or any(len((t.get("GBps") or {}).get("all") or ()) != count for t in threads)):
        return None, True
    trusted = [i for i, share in enumerate(shares) if share >= CPU_SHARE_TRUSTED]
    return (trusted, True) if trusted else (list(range(count)), False)


def _rate(thread: dict, repetitions) -> float:
    """The thread's GB/s: the median over ``repetitions`` (its report's median when None)."""
    if repetitions is None:
        return thread["GBps"]["median"]
    return median(thread["GBps"]["all"][i] for i in repetitions)


def memory_traffic(report: dict, node: int, repetitions=None) -> tuple:
    """``(GB/s, read GB/s)`` the memory of ``node`` serves to the report's threads whose arrays are on it.

    Each thread's rate is its median over ``repetitions`` (indices), or its report's median.
    """
    total = reads = 0.0
    for thread in report["threads"]:
        spec = parse_spec(thread["spec"])
        if spec.mem_node != node:
            continue
        if spec.op == "l" and repetitions is None:
            ns = thread["ns_per_access"]["median"]
            served = LINE_BYTES / ns if ns else 0.0
        else:
            served = _rate(thread, repetitions) * MEMORY_BYTES_PER_REPORTED_BYTE.get(spec.op, 1.0)
        total += served
        reads += served * READ_SHARE[spec.op]
    return total, reads


def _chase_and_mix(report: dict):
    """``(chase spec, mix op or None for the idle chase)`` of a latency case, else None."""
    threads = report.get("threads") or []
    foreground = [t for t in threads if t.get("role") == "foreground"]
    background = [t for t in threads if t.get("role") == "background"]
    if len(foreground) != 1:
        return None
    chase = parse_spec(foreground[0]["spec"])
    if chase.op != "l" or chase.rate_GBps is not None:
        return None
    if not background:
        return chase, None
    specs = [parse_spec(t["spec"]) for t in background]
    ops = {s.op for s in specs}
    if len(ops) != 1 or ops <= {"l"} or any(s.mem_node != chase.mem_node for s in specs):
        return None
    return chase, ops.pop()


def _point(report: dict, case: str, node: int) -> CurvePoint:
    chase = next(t for t in report["threads"] if t["role"] == "foreground")
    repetitions, trusted = _trusted_repetitions(report)
    total, reads = memory_traffic(report, node, repetitions)
    if repetitions is None:
        return CurvePoint(bandwidth_GBps=total, latency_ns=chase["ns_per_access"]["median"], case=case,
                          read_GBps=reads)
    latency = median(LINE_BYTES / chase["GBps"]["all"][i] for i in repetitions)
    return CurvePoint(bandwidth_GBps=total, latency_ns=latency, case=case, read_GBps=reads,
                      repetitions=len(repetitions), of=len(chase["GBps"]["all"]), trusted=trusted)


def _stream_peaks(reports) -> tuple[dict, dict]:
    """``({(node, op): (GB/s, case)}, {(node, op): GB/s})``: the most memory bandwidth streams of one op drew
    from their own node with no chase beside them (single streams and all-cores peaks), and the most one stream
    alone drew; each thread at its best repetition (the figure calibration fits too)."""
    peaks: dict[tuple[int, str], tuple[float, str]] = {}
    lone: dict[tuple[int, str], float] = {}
    for case, report in reports:
        specs = [parse_spec(t["spec"]) for t in report.get("threads") or []]
        if (not specs or len({s.op for s in specs}) != 1 or len({s.mem_node for s in specs}) != 1
                or any(s.node != s.mem_node for s in specs)):   # another node's memory: the way there may hold it
            continue
        op, node = specs[0].op, specs[0].mem_node
        if op == "l" or any(s.rate_GBps is not None for s in specs):
            continue
        total = sum((t["GBps"].get("best") or t["GBps"]["median"]) * MEMORY_BYTES_PER_REPORTED_BYTE.get(op, 1.0)
                    for t in report["threads"])
        if total > peaks.get((node, op), (0.0, ""))[0]:
            peaks[(node, op)] = (total, case)
        if len(specs) == 1 and total > lone.get((node, op), 0.0):
            lone[(node, op)] = total
    return peaks, lone


def peak_latency_bound(cases, last: CurvePoint, peak_GBps: float, peak_case: str) -> tuple[float, str]:
    """``(ns, case)``: the most latency Little's law allows at a curve's peak, from the one of its loaded ``cases``
    that bounds it most; ``(0.0, "")`` where none gives a bound.

    A case's streams (``n`` of them beside the chase, bandwidth ``b``, latency
    ``l``) each kept ``b x l / 64 B / n`` lines in flight.  The peak's ``N``
    streams draw ``P`` on a memory at least as loaded, where a stream keeps no
    more lines than that: its window is the same, and a memory that holds back
    lines shares what it holds among more streams.  So the latency there is at
    most ``l x (N / n) x (b / P)``.  That holds for a case whose streams were
    held by the memory, not by their pace: unpaced, or asking for more than the
    memory gave them; streams that got their pace (within
    :data:`SAME_BANDWIDTH`) kept fewer lines than they would unpaced, and give
    no bound.  Of the cases' bounds the least, but never below the latency of
    the curve's ``last`` point (a curve's latency does not fall).
    """
    if peak_GBps <= last.bandwidth_GBps or not peak_case:
        return 0.0, ""
    peak_streams = len(parse_case(peak_case).threads)
    bounds = [(bound, p.case) for bound, p in ((_bound_from(p, peak_streams, peak_GBps), p) for p in cases) if bound]
    if not bounds:
        return 0.0, ""
    bound, case = min(bounds)
    return max(bound, last.latency_ns), case


def _bound_from(point: CurvePoint, peak_streams: int, peak_GBps: float) -> float:
    """One case's bound on the latency at the peak (:func:`peak_latency_bound`), 0 when its streams got their pace."""
    streams = [parse_spec(s) for s in parse_case(point.case).background]
    if not streams:
        return 0.0
    rates = [s.rate_GBps * MEMORY_BYTES_PER_REPORTED_BYTE.get(s.op, 1.0) for s in streams if s.rate_GBps is not None]
    if len(rates) == len(streams):
        asked = sum(rates)
        served = point.bandwidth_GBps - LINE_BYTES / point.latency_ns   # the chase's own aside
        if served >= asked * (1.0 - SAME_BANDWIDTH):
            return 0.0
    return point.latency_ns * peak_streams / len(streams) * point.bandwidth_GBps / peak_GBps


def curves_from_reports(reports) -> list:
    """Curves from ``[(case name, report dict), ...]``: one per chase and mix that has an idle chase.

    Points are kept by bandwidth; one at most the idle chase's bandwidth, or within ``SAME_BANDWIDTH``
    of the point kept before it, is dropped (``dropped``).

    A curve's peak is the most its mix's streams drew alone (:func:`_stream_peaks`) when that is
    above its last point: a machine with few CPUs cannot load its memory beside the chase; with it,
    the most latency Little's law allows there (:func:`peak_latency_bound`).
    """
    peaks, lone = _stream_peaks(reports)
    idle = {}
    loaded: dict[tuple[str, str], list[tuple[str, dict]]] = {}   # (chase, mix) -> [(case, report)]
    for case, report in reports:
        found = _chase_and_mix(report)
        if found is None:
            continue
        chase, mix = found
        if mix is None:
            idle[chase.label] = (case, report, chase)
        else:
            loaded.setdefault((chase.label, mix), []).append((case, report))
    curves = []
    for (label, mix), cases in loaded.items():
        if label not in idle:
            continue
        idle_case, idle_report, chase = idle[label]
        first = _point(idle_report, idle_case, chase.mem_node)
        points = sorted((_point(r, c, chase.mem_node) for c, r in cases), key=lambda p: p.bandwidth_GBps)
        everything = [first]
        dropped_cases = []
        for p in points:
            if p.bandwidth_GBps <= first.bandwidth_GBps:
                dropped_cases.append(p.case)
            elif len(everything) == 1 or p.bandwidth_GBps > everything[-1].bandwidth_GBps * (1.0 + SAME_BANDWIDTH):
                everything.append(p)
            elif p.latency_ns < everything[-1].latency_ns:   # of one bandwidth, the least loaded: the least latency
                dropped_cases.append(everything[-1].case)
                everything[-1] = p
            else:
                dropped_cases.append(p.case)
        dropped = tuple(dropped_cases)
        traffic = sum(p.bandwidth_GBps for p in everything)
        read_fraction = round(sum(p.read_GBps for p in everything) / traffic, 2) if traffic else 1.0
        peak, peak_case = peaks.get((chase.mem_node, mix), (0.0, ""))
        if peak <= everything[-1].bandwidth_GBps:
            peak, peak_case = 0.0, ""
        bound, bound_case = peak_latency_bound(points, everything[-1], peak, peak_case)
        curves.append(Curve(mix=mix, node=chase.mem_node, chase=label, points=tuple(everything),
                            read_fraction=read_fraction, dropped=dropped, peak_GBps=peak, peak_case=peak_case,
                            lone_GBps=lone.get((chase.mem_node, mix), 0.0),
                            peak_latency_ns=bound, peak_latency_case=bound_case))
    return sorted(curves, key=lambda c: (c.chase, -c.read_fraction, c.mix))


def read_suite(path) -> tuple:
    """``(index, [(case name, report), ...])`` of a suite folder or its ``suite.json``; BenchError otherwise."""
    path = Path(path)
    index_path = path / SUITE_INDEX if path.is_dir() else path
    if not index_path.is_file():
        raise BenchError(f"{path}: no {SUITE_INDEX} here; give the folder `simnuma bench suite -o DIR` wrote")
    index = _read_json(index_path)
    if not isinstance(index, dict) or not isinstance(index.get("cases"), list):
        raise BenchError(f"{index_path}: not a suite index (no 'cases' list)")
    reports = []
    for entry in index["cases"]:
        if not isinstance(entry, dict) or "error" in entry or not isinstance(entry.get("file"), str):
            continue  # a case that failed measured nothing
        report_path = index_path.parent / entry["file"]
        if not report_path.is_file():
            raise BenchError(f"{index_path}: case {entry.get('name')!r}: report {report_path} is missing")
        report = _read_json(report_path)
        if not isinstance(report, dict) or report.get("format") not in FORMATS:
            raise BenchError(f"{report_path}: not a benchmark report ({' or '.join(FORMATS)})")
        reports.append((str(entry.get("name")), report))
    return index, reports


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BenchError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BenchError(f"{path}: malformed JSON: {exc}") from None


def curves_from_suite(path) -> list:
    """The bandwidth-latency curves of the loaded-latency cases of a suite (folder or ``suite.json``).

    One curve per mix (the op of the background streams) with, as its points,
    ``(memory GB/s of the chase's node, chase ns)``: the idle chase first, then
    every case of that mix by bandwidth.  An empty list when the suite has no
    loaded-latency cases.  Raises BenchError (one line) for an unreadable suite.
    """
    _, reports = read_suite(path)
    try:
        return curves_from_reports(reports)
    except (KeyError, TypeError, StopIteration, SpecError) as exc:
        raise BenchError(f"{path}: malformed report in the suite: {exc}") from None


def remote_read_peaks(reports) -> dict:
    """``{(node, memory node): GB/s}``: the most data threads of one node reading one other node's memory together
    drew (the suite's remote peaks; at least two threads, unthrottled, no background), each thread at its best
    repetition."""
    out: dict = {}
    for _, report in reports:
        threads = report.get("threads") or []
        if len(threads) < 2 or any(t.get("role") != "foreground" for t in threads):
            continue
        specs = [parse_spec(t["spec"]) for t in threads]
        ways = {(s.node, s.mem_node) for s in specs}
        if len(ways) != 1 or any(s.op != "r" or s.rate_GBps is not None for s in specs):
            continue
        (way,) = ways
        if way[0] == way[1]:
            continue
        total = sum(t["GBps"].get("best") or t["GBps"]["median"] for t in threads)
        out[way] = max(out.get(way, 0.0), total)
    return out
