"""Other tools' measurements as reference datasets that ``simnuma validate`` reads (``simnuma import``).

Each importer reads a tool's text output and writes a ``simnuma-reference/1`` file for a board (the
one ``simnuma bench host`` wrote for the machine, or any board whose nodes and cores the output
fits), every measurement with the case simnuma simulates for it.  The tools' conventions:

* **Intel MLC** (``mlc`` with no options, or ``--latency_matrix``, ``--bandwidth_matrix``,
  ``--loaded_latency``): MB/sec are 10^6 bytes a second; latencies are ns.  The idle latency
  matrix (row: the node the measuring thread runs on, column: the node its buffer is on) becomes
  the latency chase ``i.0.l.j``; the bandwidth matrix (every core of node i reading node j,
  read-only traffic; another traffic type is refused) the memory bandwidth of node j in the case
  of every core of node i reading it, and the one-reader grid ``simnuma matrix`` prints beside it
  the bandwidth of the thread ``i.0.r.j``; each loaded-latency line the chase ``0.0.l.0`` beside every other core reading its own
  node's memory, each at an equal share of the measured bandwidth.
* **STREAM** (``stream.c``): rates are MB/s of 10^6 bytes, counting 24 bytes a Triad iteration (8 B
  of ``a`` written, 8 B each of ``b`` and ``c`` read) and not the write-allocate fill of ``a``;
  simnuma's triad thread counts the same bytes.  The best Triad rate of a one-thread run becomes
  the bandwidth of the triad thread ``--case`` names (STREAM does not say where it ran).
* **likwid-bench**: ``MByte/s`` are 10^6 bytes a second, counting the bytes the kernel's loads and
  stores name (a store kernel's write-allocate fill is not counted).  ``load`` becomes a read
  thread, ``store`` a write thread and ``stream`` (``a = b + s * c``) a triad thread, one thread,
  placed by ``--case``.
"""
from __future__ import annotations

import math
import re

from ..errors import SpecError
from ..yamlsrc import dump_yaml

__all__ = ["IMPORTS", "detect_tool", "parse_mlc", "parse_stream", "parse_likwid", "reference_yaml"]

IMPORTS = ("mlc", "stream", "likwid")
_NUMBER = r"[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?"


def detect_tool(text: str) -> str | None:
    """Which tool printed ``text`` (``mlc``, ``stream``, ``likwid``), or None."""
    head = text[:4000]
    if "Intel(R) Memory Latency Checker" in head or re.search(r"^Measuring idle latencies", head, re.M):
        return "mlc"
    if re.search(r"^STREAM version", head, re.M) or re.search(r"^Triad:\s", text, re.M):
        return "stream"
    if "LIKWID MICRO BENCHMARK" in head:
        return "likwid"
    return None


def _grid_after(lines: list, start: int) -> tuple:
    """``(grid, dashed)`` of the MLC grid after line ``start``: ``{(row node, column node): value}`` and the rows
    MLC printed all ``-`` (a node without CPUs, from which it measures nothing).

    The header row is ``Numa node`` and the nodes (``Socket`` and the nodes in MLC 2's ``Memory node`` grids).  A
    row of the grid that is not all numbers, has another count of them than the header has columns, or repeats a
    node is a SpecError naming its line (a damaged or edited output), never a shorter grid.  The grid ends at a
    blank line or at the next section's title: a section MLC could not measure (it says why instead) has none."""
    out: dict = {}
    dashed: set = set()
    columns = None
    for number, line in enumerate(lines[start + 1:], start + 2):
        words = line.split()
        if not words:
            if columns is not None and (out or dashed):
                break
            continue
        if words[0].lower() == "measuring":
            break
        label = 1 if words[0] == "Socket" else 2
        if (words[:2] == ["Numa", "node"] or words[0] == "Socket") and len(words) > label and all(
                w.isdigit() for w in words[label:]):
            columns = [int(w) for w in words[label:]]
            continue
        if words[:2] in (["Numa", "node"], ["Memory", "node"]):
            continue
        if columns is None:
            continue
        if not words[0].isdigit():
            break
        if len(words) != len(columns) + 1:
            raise SpecError(f"line {number}: the row of node {words[0]} has {len(words) - 1} values for"
                            f" {len(columns)} columns")
        row = int(words[0])
        if row in dashed or any((row, col) in out for col in columns):
            raise SpecError(f"line {number}: a second row for node {row} in one grid")
        if all(w == "-" for w in words[1:]):
            dashed.add(row)
            continue
        for col, value in zip(columns, words[1:]):
            try:
                out[(row, col)] = float(value)
            except ValueError:
                raise SpecError(f"line {number}: node {row} to node {col} is {value!r}; expected a number") from None
    return out, dashed


def _failure(lines: list, k: int) -> str:
    """What MLC printed under the section titled at line ``k`` instead of a grid (its ``***`` line), or ''."""
    for line in lines[k + 1:k + 6]:
        if line.strip().lower().startswith("measuring"):
            break
        if line.strip().startswith("***"):
            return line.strip().lstrip("*").strip()
    return ""


def _section_lines(lines: list, k: int) -> str:
    """The lines MLC prints under a section's title at line ``k`` before its data (units, traffic), lower case."""
    return " ".join(lines[k:k + 5]).lower()


def _bandwidth_unit_MBps(lines: list, k: int) -> float:
    """MB/s per value of the bandwidth grid titled at line ``k``: MLC says 'Bandwidths are in MB/sec' under its
    title; an earlier ``simnuma matrix`` wrote (GB/s) in it."""
    around = _section_lines(lines, k)
    if "mb/sec" in around:
        return 1.0
    if "(gb/s)" in around:
        return 1000.0
    raise SpecError(f"line {k + 1}: a bandwidth grid that names no unit; expected MLC's line 'Bandwidths are in"
                    " MB/sec' under its title")


def _read_only(lines: list, k: int) -> None:
    """SpecError unless the section titled at line ``k`` measured read-only traffic (MLC's default), where it says."""
    said = (re.match(r"^\s*using (.+) traffic type", line.lower()) for line in lines[k + 1:k + 5])
    m = next((m for m in said if m), None)
    if m and m.group(1).strip() != "read-only":
        raise SpecError(f"line {k + 1}: {lines[k].strip()!r} measured {m.group(1).strip()} traffic; simnuma imports"
                        " MLC's read-only traffic (its default), which its read threads make")


def parse_mlc(text: str) -> dict:
    """MLC's output: ``{"latency": {(i, j): ns}, "bandwidth": {(i, j): MB/s}, "one_reader": {(i, j): MB/s},
    "loaded": [(delay, ns, MB/s)], "dashed": {grid: rows all '-'}, "skipped": [title (line N), ...]}``.

    ``bandwidth`` is MLC's matrix (every core of node i reading node j); ``one_reader`` the grid of one reader
    that ``simnuma matrix`` prints beside it.  Sections simnuma does not simulate as measured (MLC's peak
    injection bandwidths, cache-to-cache transfers, ``simnuma matrix``'s loaded latencies per node), and sections
    MLC could not measure, are listed in ``skipped``.  A file of two runs (a section twice) is refused: their
    numbers would be neither one run's nor repetitions."""
    from .matrix import LOADED_TITLE

    lines = text.splitlines()
    out: dict = {"latency": {}, "bandwidth": {}, "one_reader": {}, "loaded": [], "dashed": {}}
    skipped = []
    first: dict = {}   # section -> the line of its title

    def take(key: str, k: int) -> None:
        if key in first:
            raise SpecError(f"line {k + 1}: a second {lines[k].strip()!r} (the first at line {first[key]}): give one"
                            " MLC run per file")
        first[key] = k + 1

    def grid(key: str, k: int, scale: float = 1.0) -> None:
        values, dashed = _grid_after(lines, k)
        if not values and not dashed:
            why = _failure(lines, k)
            skipped.append(f"{lines[k].strip().rstrip('.')} (line {k + 1}): no grid"
                           + (f", MLC printed: {why}" if why else ""))
            return
        out[key] = {pair: value * scale for pair, value in values.items()}
        out["dashed"][key] = dashed

    for k, line in enumerate(lines):
        low = line.strip().lower()
        if low.startswith("measuring idle latencies"):
            take("latency", k)
            grid("latency", k)
        elif low.startswith("measuring memory bandwidths between nodes"):
            _read_only(lines, k)
            key = "one_reader" if "one reader" in low else "bandwidth"
            take(key, k)
            grid(key, k, _bandwidth_unit_MBps(lines, k))
        elif low.startswith("measuring loaded latencies"):
            _read_only(lines, k)
            take("loaded", k)
            for row in lines[k + 1:]:
                m = re.match(rf"^\s*(\d+)\s+({_NUMBER})\s+({_NUMBER})\s*$", row)
                if m:
                    out["loaded"].append((int(m.group(1)), float(m.group(2)), float(m.group(3))))
                elif out["loaded"] and not row.strip():
                    break
        elif low.startswith("measuring ") or low.startswith(LOADED_TITLE.lower()):
            skipped.append(f"{line.strip().rstrip('.')} (line {k + 1})")
    if not any(out[key] for key in ("latency", "bandwidth", "one_reader", "loaded")):
        raise SpecError("no MLC measurement found: expected 'Measuring idle latencies', 'Measuring Memory Bandwidths"
                        " between nodes' or 'Measuring Loaded Latencies' sections with their numbers"
                        + (f" (not imported: {'; '.join(skipped)})" if skipped else ""))
    out["skipped"] = skipped
    return out


def parse_stream(text: str) -> dict:
    """``{"threads": n or None, "array_elements": n or None, "best_MBps": {"Triad": ..., ...}}`` of STREAM's output."""
    best = {}
    for m in re.finditer(rf"^(Copy|Scale|Add|Triad):\s+({_NUMBER})\s", text, re.M):
        best[m.group(1)] = float(m.group(2))
    if "Triad" not in best:
        raise SpecError("no STREAM result found: expected a line 'Triad:  <best rate MB/s> ...'")
    failed = re.search(r"^Failed Validation.*$", text, re.M)
    if failed:
        raise SpecError(f"STREAM says {failed.group(0).strip()!r}: its arrays did not hold the values its kernels"
                        " compute, so its rates are not to be trusted")
    threads = (re.search(r"Number of Threads counted\s*=\s*(\d+)", text)       # what ran, else what was asked
               or re.search(r"Number of Threads requested\s*=\s*(\d+)", text))
    elements = re.search(r"Array size\s*=\s*(\d+)", text)
    return {"threads": int(threads.group(1)) if threads else None,
            "array_elements": int(elements.group(1)) if elements else None, "best_MBps": best}


def parse_likwid(text: str) -> dict:
    """``{"test": name, "threads": n, "MBps": rate}`` of likwid-bench's output."""
    test = re.search(r"^Test:\s*(\S+)", text, re.M)
    rate = re.search(rf"^MByte/s:\s*({_NUMBER})", text, re.M)
    if not test or not rate:
        raise SpecError("no likwid-bench result found: expected lines 'Test: <kernel>' and 'MByte/s: <rate>'")
    threads = (re.search(r"^Using (\d+) threads", text, re.M)            # likwid-bench 4 and 5
               or re.search(r"^Number of threads:\s*(\d+)", text, re.M))
    return {"test": test.group(1), "threads": int(threads.group(1)) if threads else 1, "MBps": float(rate.group(1))}


_LIKWID_OPS = {"load": "r", "store": "w", "stream": "t"}


def _positive(value: float, what: str, unit: str) -> float:
    """``value``, or SpecError when the tool's number is not a positive one (a damaged or edited output)."""
    if not (math.isfinite(value) and value > 0):
        raise SpecError(f"{what} is {value:g} {unit}; expected a positive number")
    return value


def _rate_text(MBps: float) -> str:
    """A background thread's rate as its spec writes it, to four significant digits."""
    return f"{MBps / 1000:.4g}GB/s" if MBps >= 1000 else f"{MBps:.4g}MB/s"


def _check_rows(data: dict, topology) -> None:
    """SpecError where MLC measured from a node the board gives no cores, or printed '-' for one that has some."""
    for key in ("latency", "bandwidth", "one_reader"):
        for i in sorted({i for i, _j in data.get(key, {})}):
            if not topology.node(i).cores:
                raise SpecError(f"the MLC output measures from node {i}, which board {topology.name!r} gives no cores"
                                " (a memory-only node, whose row MLC prints as '-')")
        for i in sorted(data.get("dashed", {}).get(key, ())):
            if topology.node(i).cores:
                raise SpecError(f"the MLC output's row of node {i} is all '-' (MLC ran nothing there: it saw no CPU"
                                f" on it), but board {topology.name!r} gives it {topology.node(i).cores} cores")


def _measurements_mlc(data: dict, topology, notes: list) -> list:
    ids = set(topology.node_ids)
    unknown = {n for key in ("latency", "bandwidth", "one_reader") for pair in data.get(key, {}) for n in pair}
    unknown |= {n for rows in data.get("dashed", {}).values() for n in rows}
    if unknown - ids:
        raise SpecError(f"the MLC output has NUMA nodes {sorted(unknown - ids)} that board {topology.name!r} does not"
                        f" (nodes {sorted(ids)})")
    _check_rows(data, topology)
    out = []
    for (i, j), ns in sorted(data["latency"].items()):
        _positive(ns, f"the idle latency from node {i} to node {j}", "ns")
        out.append({"case": f"{i}.0.l.{j}", "metric": "thread_latency_ns", "thread": f"{i}.0.l.{j}",
                    "value": f"{ns} ns", "source": "mlc"})
    for (i, j), mbps in sorted(data["bandwidth"].items()):
        _positive(mbps, f"the bandwidth from node {i} to node {j}", "MB/s")
        case = " ".join(f"{i}.{c}.r.{j}" for c in range(topology.node(i).cores))
        out.append({"case": case, "metric": "memory_GBps", "node": j, "value": f"{mbps} MB/s", "source": "mlc"})
    for (i, j), mbps in sorted(data.get("one_reader", {}).items()):
        _positive(mbps, f"one reader's bandwidth from node {i} to node {j}", "MB/s")
        out.append({"case": f"{i}.0.r.{j}", "metric": "thread_GBps", "thread": f"{i}.0.r.{j}",
                    "value": f"{mbps} MB/s", "source": "mlc"})
    first = topology.core_node_ids[0]   # where MLC's chase runs: CPU 0, on the first node with CPUs
    others = [(n, c) for n in topology.node_ids for c in range(topology.node(n).cores) if (n, c) != (first, 0)]
    for delay, ns, mbps in data["loaded"]:
        if not others or mbps <= 0:
            continue
        _positive(ns, f"the loaded latency at inject delay {delay}", "ns")
        rate = mbps / len(others)
        if rate < 1.0:
            notes.append(f"MLC inject delay {delay}: {mbps:g} MB/s shared by {len(others)} cores is {rate:.2g} MB/s"
                         " a core, under simnuma's slowest rate of 1 MB/s a thread")
            continue
        background = " ".join(f"{n}.{c}.r.{n}@{_rate_text(rate)}" for n, c in others)
        out.append({"case": f"{first}.0.l.{first} + {background}", "metric": "thread_latency_ns",
                    "thread": f"{first}.0.l.{first}", "value": f"{ns} ns", "source": "mlc",
                    "note": f"MLC inject delay {delay}: {mbps} MB/s in all, shared equally by the other cores"})
    return out


def tool_case(spec: str, op: str | None = None, tool: str = "tool's"):
    """The case (:func:`simnuma.case.parse_case`) a tool's one-thread run ran as, ``--case``: SpecError unless it is
    one unthrottled thread, of ``op`` where the tool's output says which."""
    from ..case import parse_case

    try:
        parsed = parse_case(spec)
    except SpecError as exc:
        raise SpecError(f"--case: {exc}") from None
    if (len(parsed.threads) != 1 or parsed.background or parsed.subscription or parsed.specs[0].rate_GBps is not None
            or op is not None and parsed.specs[0].op != op):
        raise SpecError(f"--case {spec!r}: expected one thread N.C.{op or 'op'}.M (where the {tool} run ran)")
    return parsed


def reference_yaml(fmt: str, text: str, topology, source_name: str, case: str | None = None,
                   notes: list | None = None) -> str:
    """The reference dataset (YAML text) for the output ``text`` of tool ``fmt`` measured on ``topology``'s machine;
    ``notes`` (a list) is told what of the output was not imported, and why."""
    from ..case import parse_case
    from ..workload import Workload

    left_out = ""
    if fmt == "mlc":
        if case is not None:
            raise SpecError("--case: MLC's output says where each of its measurements ran; --case places a STREAM or"
                            " likwid-bench run")
        data = parse_mlc(text)
        measurements = _measurements_mlc(data, topology, notes if notes is not None else [])
        citation = f"Intel Memory Latency Checker output, {source_name}"
        if data["skipped"]:
            left_out = "; not imported: " + "; ".join(data["skipped"])
            if notes is not None:
                notes += [f"not imported: {section}" for section in data["skipped"]]
    elif fmt in ("stream", "likwid"):
        if fmt == "stream":
            data = parse_stream(text)
            threads, rate, op = data["threads"], data["best_MBps"]["Triad"], "t"
            citation = f"STREAM output (best Triad rate), {source_name}"
        else:
            data = parse_likwid(text)
            if data["test"] not in _LIKWID_OPS:
                raise SpecError(f"likwid-bench test {data['test']!r}: simnuma simulates "
                                f"{', '.join(_LIKWID_OPS)} (read, write, STREAM triad)")
            threads, rate, op = data["threads"], data["MBps"], _LIKWID_OPS[data["test"]]
            citation = f"likwid-bench -t {data['test']} output, {source_name}"
        if threads not in (None, 1):
            raise SpecError(f"the run used {threads} threads; simnuma imports one-thread runs, each placed by --case")
        home = topology.core_node_ids[0]   # the first node with cores (a memory-only node runs nothing)
        spec = case or f"{home}.0.{op}.{home}"
        parsed = tool_case(spec, op, fmt)
        _positive(rate, "the best Triad rate" if fmt == "stream" else f"the {data['test']} rate", "MB/s")
        measurements = [{"case": spec, "metric": "thread_GBps", "thread": parsed.threads[0], "value": f"{rate} MB/s",
                         "source": fmt}]
    else:
        raise SpecError(f"unknown format {fmt!r}; expected one of {', '.join(IMPORTS)}")
    for m in measurements:     # every case must run on the board
        c = parse_case(m["case"]).placed(topology)
        Workload.build(c.threads, c.background).check(topology)
    doc = {"format": "simnuma-reference/1", "name": re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{fmt}-{source_name}")[:60],
           "board": topology.name, "description": f"{citation}, imported by simnuma import {fmt}{left_out}",
           "sources": {fmt: citation}, "measurements": measurements}
    return dump_yaml(doc, sort_keys=False, width=120)
