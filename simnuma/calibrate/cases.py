"""The simulated cases behind a set of measurements, how a measurement is predicted from them,
and the checks that measurements and board belong together."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..case import Case, baseline_case, parse_case
from ..errors import CalibrationError, SpecError
from ..measurements import MeasurementSet
from ..model.result import by_pair
from ..model.system import DEFAULT_SIZE_BYTES, LINE_BYTES
from ..runner import Job
from ..topology import Topology
from ..workload import Workload, parse_spec

STRIDE_OPS = frozenset({"r", "w", "t"})   # ops of the default calibration cases


# ------------------------------------------------------------------ simulating measured cases

@dataclass(frozen=True)
class SimCase:
    """A measured case as the model runs it: the case (a latency chase ``l`` is simulated as one) and the
    array size."""

    case: Case
    size_bytes: int

    @property
    def key(self) -> tuple:
        return (self.case.name, self.size_bytes)

    @property
    def ops(self) -> frozenset:
        """Ops whose windows the simulation depends on (a chase has one line in flight, whatever its window)."""
        return self.case.ops - {"l"}

    def job(self, topology: Topology, changes: tuple, seed: int, board: str) -> Job:
        """The runner's job for this case on ``topology`` (hash ``board``) with parameter ``changes``."""
        return Job(topology, self.case.placed(topology), self.size_bytes, "steady", seed, changes, board)


def sim_case(case: Case, size_bytes: int | None) -> SimCase:
    """How the model runs ``case``."""
    return SimCase(case, size_bytes or DEFAULT_SIZE_BYTES)


def figures(result: dict) -> dict:
    """The figures of a simulated result (``Result.to_dict()``) that measurements can refer to."""
    threads = {}
    for t in result["threads"]:
        accesses = t["bytes"] / LINE_BYTES if t["bytes"] else 0
        threads[t["spec"]] = {
            "GBps": t["bandwidth_GBps"],
            "ns_per_access": t["time_ns"] / accesses if accesses else math.nan,
        }
    makespan = result["makespan_ns"]
    return {
        "makespan_ns": makespan,
        "threads": threads,
        "memory": {m["node"]: m["bandwidth_GBps"] for m in result["memory"]},
        "links": {pair: tuple(total) for pair, total in by_pair(
            result["links"], lambda l: (l["bandwidth_GBps"], l["control_bytes"] / makespan),
            lambda rows: [sum(col) for col in zip(*rows)]).items()},   # links in parallel: what the pair carried
    }


def _baseline(m, topology: Topology) -> Case:
    """The case a time % of ``m`` is relative to: the dataset's baseline, or the board's."""
    return parse_case(m.baseline) if m.baseline else baseline_case(topology)


def sim_cases_for(topology: Topology, data: MeasurementSet) -> dict:
    """``{(case name, size): SimCase}`` for every case ``data`` needs, baselines included."""
    out: dict[tuple, SimCase] = {}
    for m in data:
        sim = sim_case(m.case, m.size_bytes)
        out.setdefault(sim.key, sim)
        if m.metric == "time_percent":
            bsim = sim_case(_baseline(m, topology), m.size_bytes)
            out.setdefault(bsim.key, bsim)
    return out


def _identity(m, topology: Topology) -> bool:
    """Whether ``m`` holds by definition: the time % of the case it is a percentage of (100)."""
    return m.metric == "time_percent" and _baseline(m, topology).name == m.case.name


def independent_count(data, topology: Topology) -> int:
    """How many of the measurements of ``data`` say something of their own: not an identity (the baseline's own
    time %), and of the threads of one case that a symmetry of the board interchanges (every core of a node
    streaming its memory), one: the model gives them one figure, so the others tell a fit nothing more."""
    return len({key for key in _subjects(data, topology) if key is not None})


def twin_weights(data, topology: Topology) -> list:
    """Each measurement's weight in a fit: 1 / the size of its group of interchangeable threads
    (:func:`independent_count`), so that a group weighs as one measurement (every core of a 64-core node
    streaming its memory, 64 figures the model gives alike, as much as one single thread); identities 1."""
    keys = _subjects(data, topology)
    sizes: dict = {}
    for key in keys:
        sizes[key] = sizes.get(key, 0) + 1
    return [1.0 if key is None else 1.0 / sizes[key] for key in keys]


def _subjects(data, topology: Topology) -> list:
    """Per measurement, what it says something of (its case, size, metric and node, link or group of
    interchangeable threads); None for an identity."""
    from ..model.symmetry import exchangeable_groups
    from ..workload import parse_spec

    twin_of: dict = {}   # case name -> {thread label: the lowest index of its exchangeable group}, once a case

    def twin(case, thread: str):
        if case.name not in twin_of:
            foreground = [parse_spec(t) for t in case.threads]
            groups = exchangeable_groups(topology, foreground, [parse_spec(t) for t in case.background])
            twin_of[case.name] = {foreground[i].label: min(g) for g in groups for i in g}
        return twin_of[case.name].get(thread, thread)   # a background thread has no twin

    out: list = []
    for m in data:
        if _identity(m, topology):
            out.append(None)
        else:
            subject = (m.node, m.link) if m.thread is None else twin(m.case, m.thread)
            out.append((m.case.name, m.size_bytes, m.metric, subject))
    return out


def predicted_value(m, results: dict, topology: Topology) -> float:
    """The model's value of measurement ``m`` from simulated ``results`` (keyed like SimCase.key)."""
    size = m.size_bytes or DEFAULT_SIZE_BYTES
    res = results[(m.case.name, size)]
    if m.metric == "time_percent":
        return 100.0 * res["makespan_ns"] / results[(_baseline(m, topology).name, size)]["makespan_ns"]
    if m.metric == "thread_GBps":
        return res["threads"][m.thread]["GBps"]
    if m.metric == "thread_latency_ns":
        return res["threads"][m.thread]["ns_per_access"]
    if m.metric == "memory_GBps":
        return res["memory"][m.node]
    total, control = res["links"][m.link]
    return control if m.metric == "link_control_GBps" else total


# ------------------------------------------------------------------ checks

_SKELETON_DESCRIPTION = re.compile(r"^(?P<model>.+), \d+ NUMA node\(s\), \d+ CPUs$")


def check_measurements(topology: Topology, data: MeasurementSet) -> None:
    """Raise CalibrationError unless ``data`` was measured on ``topology``'s machine and fits on it."""
    _check_machine(topology, data)
    placed: set = set()
    for m in data:
        for key, case in (("case", m.case),) + ((("baseline", _baseline(m, topology)),)
                                                 if m.metric == "time_percent" else ()):
            if case.name not in placed:
                _check_case(topology, case, m, key)
                placed.add(case.name)
        if m.metric == "memory_GBps" and m.node not in topology.node_ids:
            raise CalibrationError(f"{m.at('node')}: board {topology.name!r} has no node {m.node}")
        if m.metric.startswith("link_") and m.link not in set(topology.directions):
            raise CalibrationError(f"{m.at('link')}: board {topology.name!r} has no link"
                                   f" {m.link[0]}->{m.link[1]}")


def _check_machine(topology: Topology, data: MeasurementSet) -> None:
    machine = data.machine
    where = data.files[0] if data.files else "measurements"
    if machine.board is not None:
        if machine.board != topology.name:
            raise CalibrationError(f"{where}: measured on board {machine.board!r}, not on board {topology.name!r}"
                                   " (measurements of another machine)")
        return
    host_nodes = {n: cpus for n, cpus, _ in machine.nodes or ()}
    board_nodes = {n.id: n.cores for n in topology.nodes}
    mismatch = set(host_nodes) != set(board_nodes) or any(
        cpus and board_nodes[n] != cpus for n, cpus in host_nodes.items())
    skeleton = _SKELETON_DESCRIPTION.match(topology.description or "")
    if skeleton and machine.cpu_model and skeleton.group("model") != machine.cpu_model:
        mismatch = True
    if mismatch:
        cores = ", ".join(f"N{n}: {c}" for n, c in sorted(board_nodes.items()))
        raise CalibrationError(f"{where}: measured on {machine.description}; board {topology.name!r} has"
                               f" {len(board_nodes)} node(s) with cores {cores}"
                               f"{' and another CPU' if skeleton else ''} (measurements of another host)")


def _check_case(topology: Topology, case: Case, m, key: str) -> None:
    """Raise CalibrationError, saying where measurement ``m`` gives ``case`` (its ``key``), unless it can be placed."""
    try:
        Workload(case.specs, case.background_on(topology)).check(topology)
    except SpecError as exc:
        if key in dict(m.where):
            raise CalibrationError(f"{m.at(key)}: {exc}") from None
        raise CalibrationError(f"{m.origin}: case {case.name!r} cannot be placed on board {topology.name!r}:"
                               f" {exc}") from None


HUGE_PAGES = 0.99   # a chase with at least this share of its array on huge pages timed memory, not page walks


def chase_pages_problem(m) -> str:
    """Why a latency-chase measurement also timed page walks ('' when it ran on huge pages).

    A dependent load into a random line of an array far beyond the TLB's
    reach on base pages also walks the page tables (two-dimensionally in a
    virtual machine), which the model does not have.  A measurement that does
    not say which pages it ran on is taken as base pages.
    """
    fraction = getattr(m, "huge_fraction", None)
    walks = "its latency includes page walks, which the model does not have"
    if fraction is None:
        return f"the source does not say which pages the chase ran on (taken as base pages): {walks}"
    if fraction < HUGE_PAGES:
        return f"the chase had {100 * fraction:.0f}% of its array on huge pages: {walks}"
    return ""


def peak_of(case: Case, topology: Topology, named=frozenset()) -> tuple | None:
    """``(node, memory node)`` of a peak: every core of one node streaming one node's memory (its own, or another's
    over the links: a remote peak), one op (r, w or t), unthrottled, no background; None for another case.  A case
    ``named`` (the suite planned it as a peak: every core of the node the benchmark could use, where a cpuset
    withheld some) needs only its distinct cores of one node."""
    if case.background or case.subscription or len(case.threads) < 2:
        return None
    specs = [parse_spec(s) for s in case.threads]
    node, op, memory = specs[0].node, specs[0].op, specs[0].mem_node
    if op not in STRIDE_OPS or node not in topology.node_ids or memory not in topology.node_ids:
        return None
    if any(s.node != node or s.op != op or s.mem_node != memory or s.rate_GBps for s in specs):
        return None
    cores = [s.core for s in specs]
    if len(set(cores)) != len(cores) or not set(cores) <= set(range(topology.node(node).cores)):
        return None
    whole = len(cores) == topology.node(node).cores
    return (node, memory) if whole or case.name in named else None


def is_peak(case: Case, topology: Topology, named=frozenset()) -> bool:
    """Every core of one node streaming its local memory (:func:`peak_of`)."""
    peak = peak_of(case, topology, named)
    return peak is not None and peak[0] == peak[1]


def is_remote_peak(case: Case, topology: Topology, named=frozenset()) -> bool:
    """Every core of one node streaming another node's memory (:func:`peak_of`): the way there at its peak."""
    peak = peak_of(case, topology, named)
    return peak is not None and peak[0] != peak[1]
