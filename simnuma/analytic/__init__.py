"""An analytic model beside the simulation: the board and workload as a closed queueing network, solved by
approximate mean value analysis (Schweitzer's, with a fork-join maximum for the probes).

Every thread is a closed class of ``window`` customers (its lines in flight; a latency chase one; a paced
thread ``core.requests`` of them, each cycling no faster than ``requests x 64 B / rate`` per transaction, so
that the thread goes at its rate unless its lines in flight cannot carry it).  A miss visits (``flows.py``):

* **queueing stations**, each with the service demand the miss puts on it: every link direction (the bytes
  of each packet crossing it, and a 4-byte NOP on the reverse direction for each packet received), the home
  memory (``memory.py``: the time a read and a write hold it), and each probed node's probe lookup
  (the time a probe holds a slot, ``probe.occupancy`` or its whole ``probe.lookup``, shared by
  ``sri.probe_queue`` slots, as Seidmann's approximation of a multi-server station);
* **delay stations**, fixed latencies: the SRI, each crossbar and link flight on the way, the memory's
  latency; and, depending on the load, what the memory adds: a DRAM's wait for the write episode a read
  meets, or a curve memory's loaded latency at its bandwidth and read share.

A read's latency is its request's path to the home, then the longer of the memory path (DRAM and the data
back) and the slowest probe's round trip; a write's miss buffer stays busy ``core.hold.w`` more.  The solver
(``solver.py``) finds each class's throughput, then bounds it: no station is offered more than it serves,
no link buffer pool turns its credits round faster than they come back, no DRAM queue holds more lines than
its entries; a class a bound slows is held there and the others solved again.

What it lacks, by design: blocking (a packet waiting for a credit, a chain of full buffers backing up), so it
sees a pool only when its credits are the limit; the DRAM's banks and scheduler (it has averages of their row
openings and conflicts, turnarounds, rank gaps and refresh, not their timing); the order of packets within a
link, and any bunching of a thread's lines.  ``beside`` names those where the two disagree.
"""
from __future__ import annotations

import copy
import math
import time

from .. import __version__
from ..case import Case
from ..model.system import DEFAULT_SIZE_BYTES
from ..topology import load_topology
from ..units import LINE_BYTES
from ..report import heading, role_tag
from ..workload import Workload
from .flows import board_cache, thread_class
from .memory import idle_closures
from .solver import ROUNDS, Network

__all__ = ["analyze", "AnalyticResult", "case_analysis", "render_analysis", "beside", "AGREES"]


class AnalyticResult:
    """What ``analyze`` found, with ``to_dict()`` in the shape of ``simnuma.simulate``'s result."""

    def __init__(self, data: dict):
        self._data = data

    def to_dict(self) -> dict:
        return copy.deepcopy(self._data)

    def thread(self, spec: str) -> dict:
        for t in self._data["threads"]:
            if t["spec"] == spec:
                return t
        raise KeyError(spec)

    @property
    def makespan_ns(self) -> float:
        return self._data["makespan_ns"]


def analyze(topology, threads, background=(), size_bytes: int = DEFAULT_SIZE_BYTES) -> AnalyticResult:
    """Solve ``threads`` (and paced ``background``) on ``topology`` by approximate MVA (see the module)."""
    start = time.perf_counter()
    topology = load_topology(topology)
    workload = Workload.build(threads, background)
    workload.check(topology)
    classes = [thread_class(topology, s, True) for s in workload.threads]
    classes += [thread_class(topology, s, False) for s in workload.background]
    net = Network(topology, classes, board_cache(topology))
    throughput, latencies, iterations = net.solve()
    closed = idle_closures(topology, classes, throughput)
    if closed:   # solved again with those rows closed between trains
        net = Network(topology, classes, board_cache(topology), closed)
        throughput, latencies, more = net.solve()
        iterations += more
    lines = max(1, size_bytes // LINE_BYTES)
    out_threads: list[dict] = []
    for c in classes:
        x = throughput[c.label]
        per_line_ns = len(c.paths) / x if x else math.inf
        # what a transaction took: as solved, or, where a bound slowed the class below its pace, Little's law over
        # a window slot
        cycle_ns = c.customers / x if x else math.inf
        at_pace = c.period_ns and cycle_ns <= c.period_ns * (1.0 + 1e-9)
        latency = latencies[c.label] if at_pace else max(latencies[c.label], cycle_ns - c.hold_ns)
        out_threads.append({"spec": c.label, "role": "foreground" if c.foreground else "background",
                            "time_ns": lines * per_line_ns if c.foreground else None,
                            "bandwidth_GBps": LINE_BYTES * x, "latency_ns": {"mean": latency},
                            "percent_of_local_read": None})
    makespan = max(lines * len(c.paths) / throughput[c.label] if throughput[c.label] else math.inf
                   for c in classes if c.foreground)
    for t in out_threads:
        if t["role"] == "background":
            t["time_ns"] = makespan
    data = {"version": __version__, "topology": topology.name, "mode": "analytic", "size_bytes": size_bytes,
            "threads": out_threads, "makespan_ns": makespan, **net.usage(),
            "solve_s": time.perf_counter() - start, "iterations": iterations}
    for m in data["memory"]:   # whether its reader's trains each open a row the idle timer closed (idle_closures)
        m["idle_closed"] = m["node"] in closed
    if net.rounds >= ROUNDS:
        data["warnings"] = [f"the analytic model did not converge ({net.rounds} rounds, {iterations} iterations):"
                            " its numbers are where the last round stopped"]
    return AnalyticResult(data)


def case_analysis(topology, case: Case, size_bytes: int = DEFAULT_SIZE_BYTES) -> AnalyticResult:
    """``analyze`` of a case (its named background set placed on the board)."""
    placed = case.placed(topology)
    return analyze(topology, placed.threads, placed.background, size_bytes)


def render_analysis(data: dict) -> str:
    """The text ``simnuma run --analytic`` prints."""
    lines = heading(data, "analytic (approximate MVA, docs/analytic.md)") + [""]
    width = max(len(t["spec"]) for t in data["threads"])
    lines.append(f"{'thread':<{width}}  role  time (ms)  GB/s    latency ns")
    for t in data["threads"]:
        lines.append(f"{t['spec']:<{width}}  {role_tag(t['role']):<4}  {t['time_ns'] / 1e6:9.3f}  {t['bandwidth_GBps']:6.3f}"
                     f"  {t['latency_ns']['mean']:10.1f}")
    busy = sorted(data["links"], key=lambda r: -r["utilization"])[:4]
    lines += ["", "busiest links: " + ", ".join(f"{r['src']}->{r['dst']} {100 * r['utilization']:.0f}%" for r in busy),
              "memory: " + ", ".join(f"N{r['node']} {100 * r['utilization']:.0f}%"
                                     + (" (the idle timer closes its row between the reader's trains)"
                                        if r.get("idle_closed") else "") for r in data["memory"])]
    b = data["bottleneck"]
    if b["limit"] == "busy":
        lines.append(f"bottleneck: {b['resource']} ({100 * b['utilization']:.1f}% busy)")
    elif b["limit"] == "credits":
        lines.append(f"bottleneck: {b['resource']} (their credits cannot come back faster)")
    elif b["limit"] == "queue":
        lines.append(f"bottleneck: {b['resource']} (every entry taken)")
    else:
        lines.append(f"bottleneck: nothing saturates; the busiest is {b['resource']} at {100 * b['utilization']:.1f}%")
    loaded = any(t["role"] == "background" for t in data["threads"])
    if loaded and (b["limit"] in ("credits", "queue") or (b["limit"] == "busy" and b["utilization"] >= SATURATED)):
        lines.append("saturated: the analytic model shares a full memory or probe lookup in turns and anything else as"
                     " one queue served in order; under such load its times have come out from a quarter to one and a"
                     " half times the simulation's (docs/analytic.md): simulate what you conclude from")
    lines += [f"warning: {w}" for w in data.get("warnings") or ()]
    lines.append(f"solved in {1e3 * data['solve_s']:.1f} ms; the analytic model has no blocking (buffer pools only"
                 " bound their rate) and averages the DRAM's banks and scheduling: docs/analytic.md says where it"
                 " parts from the simulation")
    return "\n".join(lines)


AGREES = 0.10   # beyond this the report says what the analytic model lacks
SATURATED = 0.95   # a resource this busy or more under background load: the analytic model's weakest numbers


def beside(simulated: dict, analytic_ns: float) -> tuple:
    """``(difference, note)`` of an analytic time against a simulated result: the note, where they part by more
    than :data:`AGREES`, names what the simulation has there and the analytic model lacks."""
    diff = analytic_ns / simulated["makespan_ns"] - 1.0
    if abs(diff) <= AGREES:
        return diff, ""
    b = simulated.get("bottleneck") or {}
    if b.get("limit") == "full buffer":
        return diff, (f"no blocking in the analytic model (its buffers only bound how fast their credits come"
                      f" back): {b.get('buffer')} is full {100 * (b.get('full_fraction') or 0):.0f}% of the time")
    if str(b.get("resource", "")).startswith("memory"):
        return diff, ("no DRAM banks or scheduler in the analytic model (only averages of their row conflicts,"
                      " turnarounds, rank gaps and refresh): the memory limits here")
    return diff, "the approximate MVA's queueing (no blocking, no order of packets within a link)"
