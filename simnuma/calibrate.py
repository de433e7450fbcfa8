"""Calibration: fitting a board's free parameters to measured cases.

A calibration fits named free parameters (:data:`PARAMETERS`: the memory
latency, a FIFO memory's efficiency, the DRAM queue, link, crossbar and probe
latencies, the per-op outstanding windows, ...) to the measurements of chosen
cases (by default the single-thread stride cases, the idle latency chase when
it ran on huge pages, and the peaks: :func:`choose_cases`) by bounded least
squares on relative residuals ``(predicted - measured) / measured``,
predicting every measurement with the model itself in steady mode.  A
parameter the board's memory model does not have is refused, and the default
fit holds only what the chosen cases can identify (:func:`default_fit`).

The fit in outline (``docs/calibration.md`` has the details):

1. Continuous parameters are scaled to [0, 1] over their physical bounds and
   fitted with :func:`scipy.optimize.least_squares` (trust region), with a
   forward-difference Jacobian of step :data:`DIFF_STEP` whose perturbed
   points are simulated together on a process pool.  Every simulation is
   cached by case and by the parameter values it depends on.
2. Windows and the DRAM queue are integers.  After the fit at the board's
   own values, every combination of the windows is screened: its residuals
   at the fitted continuous values (cheap: a case depends only on the windows
   of its own ops) plus the linear correction the Jacobian allows; the queue
   is screened on a ladder of powers of two and bisected where the cost
   changes.  The best are followed by a few frozen-Jacobian steps and the
   most promising refitted.  Parameters on a plateau or at a bound are also
   tried across their ranges.
3. At the solution, each continuous parameter gets a 95% interval from the
   Jacobian (residual variance, floored at the model's 1% precision) and its
   correlations; each integer the range of values whose cost stays within
   the 95% level.  A parameter no prediction depends on, one whose interval
   spans most of its range, or one correlated beyond 0.95 with another is
   *not identified*: it keeps the board's value and the others are refitted.

:func:`calibrated_yaml` writes the fitted board: the original file with the
fitted values substituted in place (comments kept) where possible, and a
comment block saying what was fitted to what, including a machine-readable
``# simnuma-calibration: {...}`` line that :func:`read_calibration_record`
parses back, so that validation can refuse the calibration cases.
"""
from __future__ import annotations

import datetime as _dt
import itertools
import json
import math
import multiprocessing
import re
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace

import numpy as np

from . import __version__
from .errors import CalibrationError, SimnumaError, SpecError, TopologyError
from .measurements import Case, MeasurementSet, parse_case
from .memparams import MEMORY_MODELS
from .model import simulate
from .topology import Topology, load_topology, parse_topology
from .workload import OPS, Workload, parse_spec

__all__ = [
    "FreeParameter",
    "PARAMETERS",
    "DEFAULT_FIT",
    "default_fit",
    "parse_fit",
    "Calibration",
    "ParameterFit",
    "FitRow",
    "calibrate",
    "choose_cases",
    "chase_pages_problem",
    "is_peak",
    "predict",
    "check_measurements",
    "calibrated_yaml",
    "read_calibration_record",
    "RECORD_PREFIX",
    "DIFF_STEP",
]

DEFAULT_SIZE_BYTES = 64 * 2**20
STRIDE_OPS = frozenset({"r", "w", "t"})   # ops of the default calibration cases
DIFF_STEP = 0.05             # finite-difference step, as a fraction of a parameter's range
NOISE_FLOOR = 0.01           # relative precision of one steady-mode prediction (its 1% confidence target)
NOISE_PRIOR_DOF = 4          # the weight, in degrees of freedom, of that precision in the residual variance
NEGLIGIBLE_CHANGE = 1e-3     # a parameter whose step moves no prediction by more than this is unused
CONFIDENCE = 0.95            # the level of the intervals and of the integers' ranges
UNIDENTIFIED_WIDTH = 0.5     # a 95% interval over more than this share of the range: not identified
STRONG_CORRELATION = 0.95    # |r| above this with another fitted parameter: only their combination is determined
MAX_FIT_EVALUATIONS = 15     # residual evaluations per continuous fit (Jacobians come on top)
FIT_FTOL = 1e-2              # stop when the cost falls by less than 1% (predictions are precise to ~1%)
FIT_XTOL = 1e-2              # ... or the step is under 1% of the scaled parameters
JACOBIAN_REFRESH = 2         # accepted steps between finite-difference Jacobians (Broyden updates between)
WINDOW_VERIFIED = 3          # screened integer combinations followed by chord steps: the best predicted ...
WINDOW_VERIFIED_BASE = 2     # ... and the best by their simulated cost at the fit's continuous values
WINDOW_CHORD_STEPS = 2       # frozen-Jacobian Gauss-Newton steps per followed combination
WINDOW_CANDIDATES = 2        # of those, the best ones refitted ...
WINDOW_PROMISE = 3.0         # ... if their cost is under this multiple of the incumbent's
SEARCH_ROUNDS = 3            # rounds of looking for better starts (windows: the grid, then neighbours)
SCAN_FRACTIONS = (1 / 6, 1 / 2, 5 / 6)   # where in its range each parameter is tried by the scan
WIDE_INTEGER = 64            # integers with more values than this (the DRAM queue, wide windows) are searched on a ladder
DOCUMENT_DIGITS = 4          # significant digits of a fitted value in the calibrated board
RECORD_PREFIX = "# simnuma-calibration: "
_BLOCK_START = "# ---- simnuma calibrate"
_BLOCK_END = "# ---- end of simnuma calibrate"


# ------------------------------------------------------------------ free parameters

@dataclass(frozen=True)
class FreeParameter:
    """A parameter a calibration may fit: its document path, unit and physical bounds.

    ``models`` are the memory models (``memory.model``) that have it; a
    parameter of another model is refused (:func:`parse_fit`).
    """

    name: str
    path: str
    unit: str
    low: float
    high: float
    description: str
    integer: bool = False
    models: tuple = MEMORY_MODELS

    @property
    def op(self) -> str | None:
        """For a per-op core parameter (``core.window.<op>``, ``core.hold.<op>``), the op it belongs to."""
        return self.name.rsplit(".", 1)[1] if self.name.startswith("core.") else None

    @property
    def wide(self) -> bool:
        """An integer whose range is searched on a ladder and by bisection, not value by value."""
        return self.integer and self.high - self.low + 1 > WIDE_INTEGER

    def prior(self, topology: Topology) -> float:
        """The value the board gives (its first node or link)."""
        node = topology.nodes[0]
        if self.name.startswith("core.window."):
            return float(node.window[self.op])
        if self.name.startswith("core.hold."):
            return float((node.hold_ns or {}).get(self.op, 0.0))  # not given: no hold
        getters = {
            "memory.latency": lambda: node.memory_latency_ns,
            "memory.efficiency": lambda: node.memory_efficiency,
            "memory.bandwidth": lambda: node.memory_bandwidth_GBps,
            "memory.queue": lambda: float(node.memory_queue),
            "sri.latency": lambda: node.sri_latency_ns,
            "xbar.latency": lambda: node.xbar_latency_ns,
            "probe.lookup": lambda: node.probe_lookup_ns,
            "link.latency": lambda: topology.links[0].latency_ns if topology.links else None,
        }
        return getters[self.name]()

    def for_board(self, topology: Topology) -> "FreeParameter":
        """The parameter as the board means it: its memory model's description and bounds, widened
        when the board's own value sits on or past one (to half or twice that value; an integer's
        upper bound to twice it, as far as 1024 or 4096).

        Raises CalibrationError when a node's memory model does not have it.
        """
        models = board_memory_models(topology)
        for model in models:
            if model not in self.models:
                raise CalibrationError(f"--fit {self.name}: board {topology.name!r} has a {model} memory"
                                       f" (memory.model: {model}), {_NOT_IN_MODEL[model]}; {self.name} belongs"
                                       f" to the {' and '.join(self.models)} memory only")
        variant = _MODEL_VARIANTS.get((self.name, models[0])) if len(models) == 1 else None
        out = replace(self, **variant) if variant else self
        prior = out.prior(topology)
        if prior is None or prior <= 0 or out.name == "memory.efficiency" or out.low < prior < out.high:
            return out
        if out.integer:   # a window (or queue) at or past its bound: room up to twice the board's value
            top = _INTEGER_MAX.get(out.name, 1024)
            return out.with_bounds(out.low, max(out.high, min(top, 2 * int(round(prior)))))
        return out.with_bounds(min(out.low, prior / 2), max(out.high, 2 * prior))

    def rounded(self, value: float) -> float:
        """``value`` as written to a board file: a whole number, or four significant digits."""
        return float(int(round(value))) if self.integer else float(_round(value, DOCUMENT_DIGITS))

    def document_value(self, value: float):
        """``value`` as the board document writes it (``38.62 ns``, ``0.6214``, ``3``)."""
        value = self.rounded(value)
        if self.integer:
            return int(value)
        if self.unit == "ns":
            return f"{_round(value, DOCUMENT_DIGITS)} ns"
        if self.unit == "GB/s":
            return f"{_round(value, DOCUMENT_DIGITS)} GB/s"
        return _round(value, DOCUMENT_DIGITS)

    def format(self, value: float, uncertainty: float | None = None) -> str:
        """``38.6 ± 2.1 ns``."""
        if self.integer:
            return f"{int(round(value))}"
        unit = f" {self.unit}" if self.unit else ""
        if uncertainty is None or not math.isfinite(uncertainty):
            return f"{_round(value, 3)}{unit}"
        return f"{_round(value, 3)} ± {_round(uncertainty, 2)}{unit}"

    @property
    def bounds_text(self) -> str:
        """``20..120 ns``."""
        unit = f" {self.unit}" if self.unit and not self.integer else ""
        return f"{_round(self.low, 4)}..{_round(self.high, 4)}{unit}"

    def with_bounds(self, low: float, high: float) -> "FreeParameter":
        return replace(self, low=low, high=high)


def board_memory_models(topology: Topology) -> tuple:
    """The memory models of the board's nodes, each once, in node order."""
    return tuple(dict.fromkeys(n.memory_model for n in topology.nodes))


# why a memory model has no such parameter
_NOT_IN_MODEL = {
    "fifo": "a fixed-latency server",
    "dram": "whose peak and sustained bandwidth follow from its organisation and datasheet timings"
            " (memory.dram), which are facts and never fitted; the sustained efficiency is an output",
    "curve": "whose bandwidth and loaded latency are its measured curves (memory.curves)",
}
# what memory.latency means, and its physical bounds, in each memory model
_MODEL_VARIANTS = {
    ("memory.latency", "fifo"): {"description": "DRAM access latency (fixed, beside the bandwidth server)"},
    ("memory.latency", "dram"): {"description": "memory controller latency on top of the DRAM's own timings",
                                 "low": 1.0, "high": 120.0},
    ("memory.latency", "curve"): {"description": "idle memory latency (the curves add the loaded part)",
                                  "low": 20.0, "high": 200.0},
}


def _round(value: float, digits: int):
    """``value`` to ``digits`` significant digits, as an int when whole."""
    if value == 0:
        return 0
    if not math.isfinite(value):
        return value
    rounded = float(f"{value:.{digits}g}")
    return int(rounded) if rounded.is_integer() else rounded


def _window(op: str, what: str) -> FreeParameter:
    return FreeParameter(f"core.window.{op}", f"defaults.core.window.{op}", "lines", 1, 8,
                         f"outstanding lines per core for {what} (miss buffers and prefetch)", integer=True)


def _hold(op: str, what: str) -> FreeParameter:
    return FreeParameter(f"core.hold.{op}", f"defaults.core.hold.{op}", "ns", 0.1, 60.0,
                         f"time a miss buffer stays busy after its fill for {what} (installing the line"
                         + (", merging the store and moving the victim out)" if op != "r" else ")"))


PARAMETERS = {p.name: p for p in (
    FreeParameter("memory.latency", "defaults.memory.latency", "ns", 20.0, 120.0, "DRAM access latency"),
    FreeParameter("memory.efficiency", "defaults.memory.efficiency", "", 0.4, 0.95,
                  "sustained fraction of the DRAM peak bandwidth", models=("fifo",)),
    FreeParameter("memory.bandwidth", "defaults.memory.bandwidth", "GB/s", 1.0, 400.0,
                  "peak DRAM bandwidth per node", models=("fifo",)),
    FreeParameter("memory.queue", "defaults.memory.queue", "entries", 1, 512,
                  "requests the memory controller's DRAM queue holds", integer=True),
    FreeParameter("link.latency", "link_defaults.latency", "ns", 1.0, 60.0, "link and PHY latency per hop"),
    FreeParameter("xbar.latency", "defaults.xbar.latency", "ns", 0.5, 20.0, "crossbar traversal"),
    FreeParameter("sri.latency", "defaults.sri.latency", "ns", 0.5, 20.0, "SRI pass-through latency"),
    FreeParameter("probe.lookup", "defaults.probe.lookup", "ns", 1.0, 60.0,
                  "cache probe lookup before the response"),
    _window("r", "reads"),
    _window("w", "writes"),
    _window("t", "triads"),
    _hold("r", "reads"),
    _hold("w", "writes"),
    _hold("t", "triads"),
)}

# every parameter a default fit may hold; default_fit() takes those the chosen cases can identify
DEFAULT_FIT = ("memory.latency", "memory.efficiency", "memory.queue", "link.latency", "xbar.latency",
               "probe.lookup", "core.window.r", "core.window.w", "core.window.t")
_INTEGER_MAX = {"memory.queue": 4096}   # other integers (windows): 1024
_BOUNDS = re.compile(r"^([A-Za-z_.]+)\s*=\s*([-+0-9.eE]+)\s*:\s*([-+0-9.eE]+)$")


def default_fit(topology: Topology, cases) -> list:
    """The names of the parameters the chosen ``cases`` can identify on ``topology``.

    Always the memory latency and the crossbar; the window of every stride op
    measured; the link latency when a thread crosses a link; the probe lookup
    when a multi-node board broadcasts probes; the DRAM queue (and, for a
    FIFO memory, its efficiency) only with a peak, the only case that fills
    the queue and loads the memory.
    """
    specs = [parse_spec(s) for c in cases for s in c.threads + c.background]
    ops = {s.op for s in specs}
    peaks = any(is_peak(c, topology) for c in cases)
    fifo = board_memory_models(topology) == ("fifo",)
    wanted = {
        "memory.latency": True,
        "memory.efficiency": peaks and fifo,
        "memory.queue": peaks,
        "link.latency": bool(topology.links) and any(s.node != s.mem_node for s in specs),
        "xbar.latency": True,
        "probe.lookup": topology.coherence == "broadcast" and len(topology.nodes) > 1,
    }
    return [n for n in DEFAULT_FIT if wanted.get(n, n.startswith("core.window.") and n[-1] in ops)]


def parse_fit(items=None, topology: Topology | None = None, cases=()) -> list:
    """Free parameters from ``NAME`` or ``NAME=LOW:HIGH`` items.

    Without items, the default fit (:func:`default_fit` for ``cases`` on
    ``topology``; every name of :data:`DEFAULT_FIT` without a board).  With
    a board, each parameter takes the meaning and bounds of its memory model,
    and one the board's memory model does not have is refused.
    """
    if not items:
        names = default_fit(topology, cases) if topology is not None else list(DEFAULT_FIT)
        return [PARAMETERS[n].for_board(topology) if topology is not None else PARAMETERS[n] for n in names]
    out, seen = [], set()
    for item in items:
        text = str(item).strip()
        m = _BOUNDS.match(text)
        name = m.group(1) if m else text
        if name not in PARAMETERS:
            if name.startswith("memory.dram"):
                raise CalibrationError(f"--fit {text!r}: the DRAM's organisation and timings (memory.dram) are"
                                       " datasheet facts, not fitted; fit memory.latency (the controller) or"
                                       " memory.queue")
            raise CalibrationError(f"--fit {text!r}: unknown parameter; expected one of: {', '.join(PARAMETERS)}"
                                   " (optionally NAME=LOW:HIGH)")
        if name in seen:
            raise CalibrationError(f"--fit {name!r} is given twice")
        seen.add(name)
        param = PARAMETERS[name].for_board(topology) if topology is not None else PARAMETERS[name]
        if m:
            param = _bounded(param, float(m.group(2)), float(m.group(3)), text)
        out.append(param)
    return out


def _bounded(param: FreeParameter, low: float, high: float, text: str) -> FreeParameter:
    if not (math.isfinite(low) and math.isfinite(high) and 0 < low < high):
        raise CalibrationError(f"--fit {text!r}: bounds must be positive with LOW < HIGH")
    if param.name == "memory.efficiency" and high > 1:
        raise CalibrationError(f"--fit {text!r}: an efficiency is at most 1")
    top = _INTEGER_MAX.get(param.name, 1024)
    if param.integer and (low != int(low) or high != int(high) or high > top):
        raise CalibrationError(f"--fit {text!r}: {param.name} bounds are whole numbers from 1 to {top}")
    return param.with_bounds(low, high)


# ------------------------------------------------------------------ simulating measured cases

@dataclass(frozen=True)
class SimCase:
    """A measured case as the model runs it (a latency chase ``l`` is simulated as one)."""

    case: Case
    size_bytes: int
    threads: tuple
    background: tuple

    @property
    def key(self) -> tuple:
        return (self.case.name, self.size_bytes)

    @property
    def ops(self) -> frozenset:
        """Ops whose windows the simulation depends on (a chase has one line in flight, whatever its window)."""
        return frozenset(parse_spec(label).op for label in self.threads + self.background) - {"l"}


def sim_case(case: Case, size_bytes: int | None) -> SimCase:
    """How the model runs ``case``."""
    return SimCase(case, size_bytes or DEFAULT_SIZE_BYTES, tuple(case.threads), tuple(case.background))


def _compact(result) -> dict:
    """The figures of a Result that measurements can refer to."""
    threads = {}
    for t in result.threads:
        accesses = t["bytes"] / 64 if t["bytes"] else 0
        threads[t["spec"]] = {
            "GBps": t["bandwidth_GBps"],
            "ns_per_access": t["time_ns"] / accesses if accesses else math.nan,
        }
    makespan = result.makespan_ns
    return {
        "makespan_ns": makespan,
        "threads": threads,
        "memory": {m["node"]: m["bandwidth_GBps"] for m in result.memory},
        "links": {(l["src"], l["dst"]): (l["bandwidth_GBps"], l["control_bytes"] / makespan) for l in result.links},
    }


def run_sim_case(task) -> dict:
    """Simulate one case (``(topology, changes, SimCase, seed)``); a pool worker's job."""
    topology, changes, sim, seed = task
    board = topology.with_parameters(changes) if changes else topology
    result = simulate(board, list(sim.threads), list(sim.background), size_bytes=sim.size_bytes, mode="steady",
                      seed=seed, baseline=False)
    return _compact(result)


def _baseline_label(topology: Topology) -> str:
    first = topology.node_ids[0]
    return f"{first}.0.r.{first}"


def sim_cases_for(topology: Topology, data: MeasurementSet) -> dict:
    """``{(case name, size): SimCase}`` for every case ``data`` needs, baselines included."""
    out = {}
    for m in data:
        sim = sim_case(m.case, m.size_bytes)
        out.setdefault(sim.key, sim)
        if m.metric == "time_percent":
            base = parse_case(m.baseline or _baseline_label(topology))
            bsim = sim_case(base, m.size_bytes)
            out.setdefault(bsim.key, bsim)
    return out


def _identity(m, topology: Topology) -> bool:
    """Whether ``m`` holds by definition: the time % of the case it is a percentage of (100)."""
    return m.metric == "time_percent" and parse_case(m.baseline or _baseline_label(topology)).name == m.case.name


def predicted_value(m, results: dict, topology: Topology) -> float:
    """The model's value of measurement ``m`` from simulated ``results`` (keyed like SimCase.key)."""
    size = m.size_bytes or DEFAULT_SIZE_BYTES
    res = results[(m.case.name, size)]
    if m.metric == "time_percent":
        base = parse_case(m.baseline or _baseline_label(topology))
        return 100.0 * res["makespan_ns"] / results[(base.name, size)]["makespan_ns"]
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
    for case in data.cases:
        _check_case(topology, case)
    for m in data:
        if m.metric == "memory_GBps" and m.node not in topology.node_ids:
            raise CalibrationError(f"{m.origin}: {m.key}: board {topology.name!r} has no node {m.node}")
        if m.metric.startswith("link_") and m.link not in set(topology.directions):
            raise CalibrationError(f"{m.origin}: {m.key}: board {topology.name!r} has no link"
                                   f" {m.link[0]}->{m.link[1]}")
        if m.metric == "time_percent":
            _check_case(topology, parse_case(m.baseline or _baseline_label(topology)))


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


def _check_case(topology: Topology, case: Case) -> None:
    try:
        Workload.build(case.threads, case.background, ops=OPS).check(topology)
    except SpecError as exc:
        raise CalibrationError(f"case {case.name!r} cannot be placed on board {topology.name!r}: {exc}") from None


# ------------------------------------------------------------------ evaluating many parameter sets

class Evaluator:
    """Simulates cases for parameter sets, in parallel, with a cache.

    A case's cache key holds the continuous parameter values and only the
    windows of the ops the case uses, so screening windows reuses work.
    """

    def __init__(self, topology: Topology, data: MeasurementSet, params: list, processes: int = 2,
                 seed: int = 1, progress=None):
        self.topology = topology
        self.data = data
        self.params = list(params)
        self.seed = seed
        self.sims = sim_cases_for(topology, data)
        self.measured = np.array([m.value for m in data])
        self.independent = sum(not _identity(m, topology) for m in data)   # the baseline's own time % is not
        self.cache: dict = {}
        self.simulations = 0
        self.evaluations = 0
        self.progress = progress
        self.processes = max(1, int(processes))
        self._pool = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def _pool_or_none(self):
        if self.processes <= 1:
            return None
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self.processes,
                                             mp_context=multiprocessing.get_context("fork"))
        return self._pool

    def changes(self, values: dict) -> dict:
        """``with_parameters`` changes for ``{parameter name: value}``."""
        out = {}
        for p in self.params:
            v = values[p.name]
            if p.name.startswith("core.hold.") and v <= 0:
                continue  # no hold: the board leaves it out
            out[p.path] = int(round(v)) if p.integer else float(v)
        return out

    def _key(self, sim: SimCase, values: dict) -> tuple:
        ops = sim.ops
        relevant = tuple((p.name, round(values[p.name], 9)) for p in self.params if p.op is None or p.op in ops)
        return (sim.key, relevant)

    def results_many(self, value_sets: list) -> list:
        """Simulated results of every case for each parameter set (``{sim key: figures}`` each)."""
        todo = {}
        for values in value_sets:
            changes = None
            for sim in self.sims.values():
                key = self._key(sim, values)
                if key not in self.cache and key not in todo:
                    changes = changes if changes is not None else self.changes(values)
                    todo[key] = (self.topology, changes, sim, self.seed)
        self._run(todo)
        self.evaluations += len(value_sets)
        return [{sim.key: self.cache[self._key(sim, values)] for sim in self.sims.values()}
                for values in value_sets]

    def _run(self, todo: dict) -> None:
        if not todo:
            return
        keys = list(todo)
        pool = self._pool_or_none()
        try:
            if pool is None:
                outputs = (run_sim_case(todo[k]) for k in keys)
            else:
                outputs = pool.map(run_sim_case, [todo[k] for k in keys])
            for key, out in zip(keys, outputs):
                self.cache[key] = out
                self.simulations += 1
                if self.progress is not None:
                    self.progress(1)
        except SimnumaError as exc:
            raise CalibrationError(f"a simulation failed during the fit: {exc}") from None

    def predictions(self, values: dict) -> np.ndarray:
        return self.predictions_many([values])[0]

    def predictions_many(self, value_sets: list) -> list:
        out = []
        for results in self.results_many(value_sets):
            out.append(np.array([predicted_value(m, results, self.topology) for m in self.data]))
        return out

    def residuals_many(self, value_sets: list) -> list:
        """Relative residuals ``(predicted - measured) / measured`` for each parameter set."""
        res = [(p - self.measured) / self.measured for p in self.predictions_many(value_sets)]
        for r in res:
            if not np.all(np.isfinite(r)):
                raise CalibrationError("the model gave no finite prediction for some measurement"
                                       " (a thread that never finished?)")
        return res


# ------------------------------------------------------------------ the fit

@dataclass
class _Fit:
    """One continuous fit at fixed integer parameters (windows, queue)."""

    ints: dict
    u: np.ndarray
    residuals: np.ndarray
    jacobian: np.ndarray | None
    status: int
    message: str
    fresh: bool = False           # the Jacobian is a finite-difference one at ``u``

    @property
    def cost(self) -> float:
        return float(np.sum(self.residuals ** 2))


def _ladder(p: FreeParameter) -> list:
    """A wide integer's first values: its bounds and the powers of two between them."""
    low, high = int(p.low), int(p.high)
    values = {low, high}
    v = 1
    while v < high:
        if v > low:
            values.add(v)
        v *= 2
    return sorted(values)


class _Search:
    """The continuous fits and the integer (window, queue) search of one calibration.

    ``fixed`` holds continuous parameters kept at given values (the
    unidentified ones, once they are reset to their priors).
    """

    def __init__(self, ev: Evaluator, params: list, priors: dict, max_evaluations: int, log, fixed=None):
        self.ev = ev
        self.fixed = dict(fixed or {})
        self.continuous = [p for p in params if not p.integer and p.name not in self.fixed]
        self.integers = [p for p in params if p.integer]
        self.priors = priors
        self.low = np.array([p.low for p in self.continuous])
        self.span = np.array([p.high - p.low for p in self.continuous])
        self.max_evaluations = max_evaluations
        self.log = log
        self.fits: dict = {}          # integer tuple -> _Fit
        self.tried: set = set()       # integer tuples followed by chord steps or fitted
        self.screened = 0
        self.costs: dict = {}         # integer tuple -> lowest cost seen (screened, after chord steps, or fitted)

    def share(self, other: "_Search") -> "_Search":
        """Take over what ``other`` has learnt (fits, costs, counters); returns self."""
        self.fits, self.tried, self.costs, self.screened = dict(other.fits), other.tried, other.costs, other.screened
        return self

    # -- coordinates
    def values(self, u, ints: dict) -> dict:
        """Every parameter's value: fixed ones, continuous ones from ``u``, the integers.

        Continuous values are rounded as the calibrated board writes them
        (four significant digits, far below any step of the search), so that
        the board's own predictions come from the simulations of the fit.
        """
        out = dict(self.fixed)
        out.update({p.name: p.rounded(lo + x * s) for p, lo, x, s in zip(self.continuous, self.low, u, self.span)})
        out.update(ints)
        return out

    def u_of(self, values: dict) -> np.ndarray:
        x = np.array([values[p.name] for p in self.continuous], dtype=float)
        return np.clip((x - self.low) / self.span, 0.0, 1.0) if len(x) else x

    def ikey(self, ints: dict) -> tuple:
        return tuple(int(ints[p.name]) for p in self.integers)

    def note_cost(self, key: tuple, cost: float) -> None:
        """Remember the lowest cost known for a combination of the integers."""
        if cost < self.costs.get(key, math.inf):
            self.costs[key] = cost

    def itext(self, ints: dict) -> str:
        return ", ".join(f"{_short(p)}={int(ints[p.name])}" for p in self.integers) or "-"

    # -- Jacobian: forward differences, all perturbed points simulated together
    def jacobian(self, u, ints: dict) -> np.ndarray:
        n = len(u)
        steps = np.where(u + DIFF_STEP <= 1.0, DIFF_STEP, -DIFF_STEP)
        points = []
        for j in range(n):
            point = np.array(u, dtype=float)
            point[j] += steps[j]
            points.append(point)
        res = self.ev.residuals_many([self.values(u, ints)] + [self.values(p, ints) for p in points])
        if not n:
            return np.zeros((len(res[0]), 0))
        return np.column_stack([(res[j + 1] - res[0]) / steps[j] for j in range(n)])

    def fit(self, ints: dict, u0, jacobian=None) -> _Fit:
        """Fit the continuous parameters at fixed integers ``ints`` starting from ``u0``.

        The Jacobian is a finite-difference one at the start (or ``jacobian``,
        that of a neighbouring fit, when given) and after every
        :data:`JACOBIAN_REFRESH` accepted steps; in between it is updated from
        the steps taken (Broyden's rank-one update), which costs no simulation.
        The returned fit's Jacobian is whatever the last step used; call
        :meth:`refresh` for a finite-difference one at the solution.
        """
        from scipy.optimize import least_squares

        key = self.ikey(ints)
        self.tried.add(key)
        if not self.continuous:
            r = self.ev.residuals_many([self.values(np.zeros(0), ints)])[0]
            result = _Fit(dict(ints), np.zeros(0), r, np.zeros((len(r), 0)), 1, "no continuous parameter", True)
            self.fits[key] = result
            self.note_cost(key, result.cost)
            return result

        def fun(u):
            return self.ev.residuals_many([self.values(u, ints)])[0]

        state = {"J": jacobian, "u": None, "r": None, "calls": 0, "fresh": False}

        def jac(u):
            u = np.array(u, dtype=float)
            r = fun(u)  # cached: least_squares evaluated it just before
            if state["J"] is None or (state["calls"] and state["calls"] % JACOBIAN_REFRESH == 0):
                J, fresh = self.jacobian(u, ints), True
            elif state["u"] is None:
                J, fresh = state["J"], False
            else:
                J, fresh = _broyden(state["J"], u - state["u"], r - state["r"]), False
            state.update(J=J, u=u, r=r, calls=state["calls"] + 1, fresh=fresh)
            return J

        sol = least_squares(fun, np.clip(u0, 0.0, 1.0), jac=jac, bounds=(0.0, 1.0), method="trf",
                            ftol=FIT_FTOL, xtol=FIT_XTOL, gtol=1e-8, x_scale=1.0, max_nfev=self.max_evaluations)
        fresh = state["fresh"] and state["u"] is not None and np.array_equal(state["u"], sol.x)
        result = _Fit(dict(ints), sol.x, sol.fun, sol.jac, sol.status, sol.message, fresh)
        if key not in self.fits or result.cost < self.fits[key].cost:
            self.fits[key] = result
        self.note_cost(key, result.cost)
        self.log(f"fit at {self.itext(ints)}: cost {result.cost:.4g} after {sol.nfev} evaluations"
                 f" ({'converged' if sol.status > 0 else 'evaluation limit'})")
        return result

    def refresh(self, fit: _Fit) -> _Fit:
        """``fit`` with a finite-difference Jacobian at its solution."""
        if fit.fresh:
            return fit
        fresh = replace(fit, jacobian=self.jacobian(fit.u, fit.ints), fresh=True)
        self.fits[self.ikey(fit.ints)] = fresh
        return fresh

    def precision(self, fit: _Fit) -> float:
        """The cost of residuals as large as a steady-mode prediction's precision (1% each)."""
        return NOISE_FLOOR ** 2 * len(fit.residuals)

    # -- integers
    def grid(self, ints: dict) -> list:
        """Every combination of the windows' values (wide integers as in ``ints``)."""
        axes = [[int(ints[p.name])] if p.wide else range(int(p.low), int(p.high) + 1) for p in self.integers]
        return [dict(zip((p.name for p in self.integers), combo)) for combo in itertools.product(*axes)]

    def neighbours(self, ints: dict) -> list:
        """The combinations whose windows differ from ``ints`` by at most one each (wide integers as in ``ints``)."""
        axes = []
        for p in self.integers:
            v = int(ints[p.name])
            axes.append([v] if p.wide else [x for x in (v - 1, v, v + 1) if p.low <= x <= p.high])
        combos = [dict(zip((p.name for p in self.integers), combo)) for combo in itertools.product(*axes)]
        return [c for c in combos if self.ikey(c) != self.ikey(ints)]

    def _screen_all(self, fit: _Fit, combos: list) -> tuple:
        """``(predicted costs, start points, costs at the fit's u)`` of ``combos`` (see :meth:`screen`)."""
        R = np.array(self.ev.residuals_many([self.values(fit.u, c) for c in combos]))
        self.screened += len(combos)
        J = fit.jacobian
        if J is None or not J.shape[1]:
            costs, starts = np.sum(R ** 2, axis=1), np.tile(fit.u, (len(combos), 1))
        else:
            starts = np.clip(fit.u - R @ np.linalg.pinv(J).T, 0.0, 1.0)
            costs = np.sum((R + (starts - fit.u) @ J.T) ** 2, axis=1)
        base = np.sum(R ** 2, axis=1)
        for cost, ints in zip(base, combos):
            self.note_cost(self.ikey(ints), float(cost))
        return costs, starts, base

    def screen(self, fit: _Fit, combos: list) -> list:
        """``[(predicted cost, ints, start u, cost at the fit's u, fit's u)]`` for the ``combos`` not tried yet.

        The predicted cost is that of the residuals at the fitted continuous
        values after the linear (Gauss-Newton) step the Jacobian allows,
        clipped to the bounds; all combinations are predicted at once.  The
        list holds the best predicted first, then (as the linear step can
        mislead where a bandwidth goes as one over a latency) the best by the
        simulated cost at the fit's own values.
        """
        combos = [c for c in combos if self.ikey(c) not in self.tried]
        if not combos:
            return []
        costs, starts, base = self._screen_all(fit, combos)
        order = list(np.argsort(costs, kind="stable")[:WINDOW_VERIFIED])
        order += [i for i in np.argsort(base, kind="stable") if i not in order][:WINDOW_VERIFIED_BASE]
        return [(float(costs[i]), combos[i], starts[i], float(base[i]), fit.u) for i in order]

    def explore(self, fit: _Fit, p: FreeParameter) -> list:
        """A wide integer (the queue) searched at the fit: ranked like :meth:`screen`.

        Its ladder of powers of two is screened first; then the gaps between
        two screened values across which the cost changes (by more than 1%)
        are halved, the two with the lowest costs at their ends at a time,
        until none is left.  A plateau (a queue deep enough that no case
        fills it) is left alone.  Scores are the lower of the simulated cost
        and the cost after the linear step.
        """
        seen = {}     # value -> (score, predicted cost, start u, base cost)
        values = _ladder(p)
        for _ in range(int(p.high - p.low).bit_length() + 2):
            combos = [{**fit.ints, p.name: v} for v in values if v not in seen]
            if not combos:
                break
            costs, starts, base = self._screen_all(fit, combos)
            for c, cost, start, b in zip(combos, costs, starts, base):
                seen[c[p.name]] = (min(float(cost), float(b)), float(cost), start, float(b))
            ordered = sorted(seen)
            gaps = [(min(seen[a][0], seen[b][0]), (a + b) // 2) for a, b in zip(ordered, ordered[1:])
                    if b - a > 1 and abs(seen[a][0] - seen[b][0]) > 0.01 * max(seen[a][0], seen[b][0])]
            values = [mid for _, mid in sorted(gaps)[:2]]
        ranked = sorted((item for item in seen.items() if self.ikey({**fit.ints, p.name: item[0]}) not in self.tried),
                        key=lambda item: item[1][0])[:WINDOW_VERIFIED]
        self.log(f"searched {p.name} over {len(seen)} values at {self.itext(fit.ints)}; best: "
                 + ", ".join(f"{v} ({score:.3g})" for v, (score, _, _, _) in ranked))
        return [(cost, {**fit.ints, p.name: v}, start, b, fit.u) for v, (_, cost, start, b) in ranked]

    def verify(self, ranked: list, jacobian, best_cost: float) -> list:
        """Follow the promising ranked combinations with a few frozen-Jacobian (chord) steps.

        A combination is followed when its predicted cost or its cost at the
        fit's values is under :data:`WINDOW_PROMISE` times ``best_cost``
        (only those can become refit candidates).  Each step goes from the
        best point so far along the linear (Gauss-Newton) step; a step that
        made things worse is halved instead.  Returns ``[(cost, ints, u)]`` of
        the best point each reached, best first; the steps of all
        combinations are simulated together.
        """
        for _, ints, _, _, _ in ranked:
            self.tried.add(self.ikey(ints))
        if not self.continuous:
            return sorted(((base, c, u0) for _, c, _, base, u0 in ranked), key=lambda item: item[0])
        # [ints, next point, best cost, best point]
        top = [[c, u, base, u0] for pred, c, u, base, u0 in ranked if min(pred, base) < WINDOW_PROMISE * best_cost]
        out = [(base, c, u0) for pred, c, _, base, u0 in ranked if min(pred, base) >= WINDOW_PROMISE * best_cost]
        for _ in range(WINDOW_CHORD_STEPS if top else 0):
            residuals = self.ev.residuals_many([self.values(u, c) for c, u, _, _ in top])
            for item, r in zip(top, residuals):
                cost = float(np.sum(r ** 2))
                if cost < item[2]:
                    item[2], item[3] = cost, item[1]
                    item[1] = _linear_step(jacobian, r, item[1])
                else:
                    item[1] = (item[1] + item[3]) / 2
        for c, _, cost, _ in top:
            self.note_cost(self.ikey(c), cost)
        return sorted([(cost, c, u) for c, _, cost, u in top] + out, key=lambda item: item[0])

    def scan(self, fit: _Fit) -> list:
        """Parameters on a plateau or at a bound tried across their ranges (others at the fit).

        Returns ``[(cost, ints, u)]``, best first.  A local fit cannot leave a
        region where some parameter has no effect (a FIFO memory's efficiency
        while memory is far from saturated, say), and may stop at a bound
        where the predictions bend; the scan looks past both.  Parameters that
        move a prediction inside their range are left to the fit.
        """
        points = []
        for j in range(len(self.continuous)):
            inside = 0.01 < fit.u[j] < 0.99
            if inside and np.max(np.abs(fit.jacobian[:, j])) * DIFF_STEP >= NEGLIGIBLE_CHANGE:
                continue
            for fraction in SCAN_FRACTIONS:
                if abs(fraction - fit.u[j]) >= 0.1:
                    u = np.array(fit.u, dtype=float)
                    u[j] = fraction
                    points.append(u)
        if not points:
            return []
        residuals = self.ev.residuals_many([self.values(u, fit.ints) for u in points])
        return sorted(((float(np.sum(r ** 2)), dict(fit.ints), u) for r, u in zip(residuals, points)),
                      key=lambda item: item[0])

    def run(self, start: dict, u0) -> _Fit:
        """Fit at the integers ``start``, then look for better starts and refit from the most promising.

        Each round screens combinations of the windows (the whole grid first,
        then the neighbours of a new best) and searches each wide integer (the
        queue, :meth:`explore`); the first round also scans parameters on a
        plateau or at a bound.  The best candidates, by simulated cost after
        a few chord steps, are refitted.  Rounds stop when no refit improves
        the best fit, or when the fit is as good as a prediction is precise
        (then the screen only tells which integers fit as well).
        """
        best = self.refresh(self.fit(start, u0))
        combos = self.grid(best.ints)
        for round_no in range(SEARCH_ROUNDS):
            candidates = []
            screened_before = self.screened
            ranked = self.screen(best, combos)
            for p in self.integers:
                if p.wide:
                    ranked += self.explore(best, p)
            if best.cost <= self.precision(best):
                break         # as good as a prediction is precise: the screen only tells which integers fit as well
            if ranked:
                checked = self.verify(ranked, best.jacobian, best.cost)
                self.log(f"screened {self.screened - screened_before} combinations around {self.itext(best.ints)};"
                         f" the best after up to {WINDOW_CHORD_STEPS} chord steps: "
                         + "; ".join(f"{self.itext(c)} cost {cost:.3g}" for cost, c, _ in checked))
                candidates += checked
            if self.continuous and round_no == 0:
                scanned = self.scan(best)
                if scanned:
                    self.log(f"scanned {len(scanned)} points of parameters on a plateau or at a bound;"
                             f" best cost {scanned[0][0]:.3g}")
                    candidates += scanned[:1]
            candidates.sort(key=lambda item: item[0])
            chosen = [c for c in candidates if c[0] < WINDOW_PROMISE * best.cost][:WINDOW_CANDIDATES]
            incumbent, improved = best, False
            for _, ints, u_start in chosen:
                candidate = self.fit(ints, u_start, jacobian=incumbent.jacobian)
                if candidate.cost < best.cost:
                    best, improved = candidate, True
            if not improved:
                break
            best = self.refresh(best)
            combos = self.neighbours(best.ints)
        return self.finish(best)

    def finish(self, best: _Fit) -> _Fit:
        """Continue a best fit that stopped at the evaluation limit; raise if it still has not converged.

        The result has a finite-difference Jacobian at its solution.
        """
        if best.status == 0:
            self.log(f"continuing the fit at {self.itext(best.ints)}")
            best = self.fit(best.ints, best.u, jacobian=best.jacobian)
        if best.status == 0:
            raise CalibrationError(f"the fit did not converge within {2 * self.max_evaluations} evaluations"
                                   f" ({self.itext(best.ints)}, cost {best.cost:.3g}); fit fewer"
                                   " parameters or allow more with --max-evaluations")
        return self.refresh(best)


def _short(p: FreeParameter) -> str:
    """``r`` for core.window.r, ``queue`` for memory.queue."""
    return p.op if p.op else p.name.rsplit(".", 1)[1]


def _broyden(J, du, dr):
    """Broyden's rank-one update of the Jacobian ``J`` after the step ``du`` changed the residuals by ``dr``."""
    norm = float(du @ du)
    if norm <= 1e-12:
        return J
    return J + np.outer(dr - J @ du, du) / norm


def _linear_step(J, r, u):
    """The point in [0, 1] minimising ``|r + J (x - u)|``: a bounded Gauss-Newton step from ``u``."""
    from scipy.optimize import lsq_linear

    if J is None or not J.shape[1]:
        return u
    return np.clip(u + lsq_linear(J, -r, bounds=(-u, 1.0 - u)).x, 0.0, 1.0)


# ------------------------------------------------------------------ results

@dataclass(frozen=True)
class ParameterFit:
    """The outcome for one free parameter.

    An identified parameter has its fitted ``value``, a 95% ``interval`` (for
    an integer: the lowest and highest values that fit within the 95% level)
    and its ``correlations`` with the other fitted parameters.  One the
    measurements do not identify keeps the board's value (``value`` is the
    prior) and ``note`` says why.
    """

    param: FreeParameter
    prior: float | None             # None: the board has no such parameter (a link's on a one-node board)
    value: float | None
    uncertainty: float | None       # one standard deviation, in the parameter's unit (continuous parameters)
    identified: bool
    note: str = ""
    interval: tuple | None = None   # 95% (low, high), in the parameter's unit
    correlations: dict = field(default_factory=dict, compare=False)   # other fitted parameter -> r

    @property
    def at_bound(self) -> bool:
        if not self.identified:
            return False
        if self.param.integer:
            return self.value in (self.param.low, self.param.high)
        span = self.param.high - self.param.low
        return self.value - self.param.low < 0.01 * span or self.param.high - self.value < 0.01 * span

    @property
    def partner(self) -> tuple | None:
        """``(name, r)`` of the fitted parameter it is most strongly correlated with.

        A continuous parameter's partner is continuous: its interval holds
        the integers at their values, which their profiles set; an integer's
        is any (from the model linearised in it).
        """
        pool = {n: r for n, r in self.correlations.items()
                if self.param.integer or not (n in PARAMETERS and PARAMETERS[n].integer)}
        if not pool:
            return None
        name = max(pool, key=lambda n: abs(pool[n]))
        return name, pool[name]

    def interval_text(self) -> str:
        """``35.1..49.3 ns``, ``3..4`` or ``-``."""
        if self.interval is None:
            return "-"
        low, high = self.interval
        if self.param.integer:
            return f"{int(low)}..{int(high)}" if high > low else f"{int(low)}"
        unit = f" {self.param.unit}" if self.param.unit else ""
        return f"{_round(low, 3)}..{_round(high, 3)}{unit}"

    def partner_text(self) -> str:
        """``-0.62 with xbar.latency`` or ``-``."""
        if self.partner is None:
            return "-"
        name, r = self.partner
        return f"{r:+.2f} with {name}"

    def to_dict(self) -> dict:
        return {"name": self.param.name, "path": self.param.path, "unit": self.param.unit,
                "description": self.param.description, "bounds": [self.param.low, self.param.high],
                "prior": self.prior, "value": self.value, "uncertainty": self.uncertainty,
                "interval_95": list(self.interval) if self.interval else None, "identified": self.identified,
                "at_bound": self.at_bound, "integer": self.param.integer,
                "correlations": {k: round(v, 4) for k, v in self.correlations.items()},
                "strongest_correlation": ({"parameter": self.partner[0], "r": round(self.partner[1], 4)}
                                          if self.partner else None),
                "note": self.note}


@dataclass(frozen=True)
class FitRow:
    """One measurement beside its fitted prediction."""

    measurement: object
    fitted: float

    @property
    def residual_percent(self) -> float:
        return self.measurement.error_percent(self.fitted)

    def to_dict(self) -> dict:
        m = self.measurement
        return {"case": m.case.name, "metric": m.metric, "label": m.label, "unit": m.unit, "measured": m.value,
                "fitted": self.fitted, "residual_percent": self.residual_percent, "source": m.source,
                "caveat": m.caveat}


@dataclass
class Calibration:
    """A finished calibration: the fitted board, the fit per measurement and per parameter."""

    prior_topology: Topology
    topology: Topology
    data: MeasurementSet
    cases: tuple
    parameters: list
    rows: list
    simulations: int
    evaluations: int
    screened: int
    fitted_windows: int
    wall_seconds: float
    date: str = field(default_factory=lambda: _dt.date.today().isoformat())
    left_out: list = field(default_factory=list)   # [(measurement, why)]: default cases not fitted
    warnings: list = field(default_factory=list)   # one line each
    correlation: dict = field(default_factory=dict)   # {"parameters": [names], "matrix": [[r]]} of the fitted ones
    independent: int = 0                           # measurements that are not identities

    @property
    def fitted(self) -> list:
        return [p for p in self.parameters if p.identified]

    @property
    def unidentified(self) -> list:
        return [p for p in self.parameters if not p.identified]

    @property
    def written(self) -> list:
        """The parameters the calibrated board changes: the fitted ones, and unidentified ones whose board
        value the measurements exclude (held at the nearest value they allow)."""
        return [p for p in self.parameters if p.identified or p.value is not None and p.value != p.prior]

    @property
    def worst(self) -> FitRow:
        return max(self.rows, key=lambda r: abs(r.residual_percent))

    @property
    def mean_abs_residual_percent(self) -> float:
        return float(np.mean([abs(r.residual_percent) for r in self.rows]))

    def changes(self) -> dict:
        """``with_parameters`` changes of the parameters the calibrated board changes."""
        return {p.param.path: p.param.document_value(p.value) for p in self.written}

    def record(self) -> dict:
        """The machine-readable summary written into the calibrated board's comments."""
        return {
            "version": __version__,
            "date": self.date,
            "board": self.prior_topology.name,
            "measurements": list(self.data.files),
            "machine": self.data.machine.to_dict(),
            "cases": [c.name for c in self.cases],
            "fitted": {p.param.name: {"value": _round(p.value, 4), "uncertainty": _maybe(p.uncertainty),
                                      "interval_95": [_round(x, 4) for x in p.interval] if p.interval else None,
                                      "at_bound": p.at_bound}
                       for p in self.fitted},
            "not_identified": {p.param.name: p.note for p in self.unidentified},
            "correlation": {"parameters": self.correlation.get("parameters", []),
                            "matrix": [[round(x, 3) for x in row] for row in self.correlation.get("matrix", [])]},
            "left_out": [{"measurement": m.key, "reason": why} for m, why in self.left_out],
            "warnings": list(self.warnings),
            "mean_abs_residual_percent": round(self.mean_abs_residual_percent, 3),
            "worst_residual_percent": round(self.worst.residual_percent, 3),
        }

    def to_dict(self) -> dict:
        return {**self.record(), "parameters": [p.to_dict() for p in self.parameters],
                "rows": [r.to_dict() for r in self.rows], "independent_measurements": self.independent,
                "simulations": self.simulations, "evaluations": self.evaluations,
                "window_combinations_screened": self.screened, "window_combinations_fitted": self.fitted_windows,
                "wall_seconds": self.wall_seconds}

    def render_text(self) -> str:
        """The terminal report: the fit per measurement, then per parameter."""
        out = [f"calibrated board {self.prior_topology.name!r} on {', '.join(self.data.files)}"
               f" ({len(self.cases)} cases, {len(self.rows)} measurements)", ""]
        rows = [[r.measurement.case.name, r.measurement.label, _num(r.measurement.value), _num(r.fitted),
                 f"{r.residual_percent:+.1f}%" + (" *" if r.measurement.caveat else "")] for r in self.rows]
        out += _table(["case", "metric", "measured", "fitted", "residual"], rows)
        out.append(f"mean |residual| {self.mean_abs_residual_percent:.1f}%, worst {self.worst.residual_percent:+.1f}%"
                   f" ({self.worst.measurement.key})")
        out += [f"* {r.measurement.key}: {r.measurement.caveat}" for r in self.rows if r.measurement.caveat]
        out += [f"left out: {m.key}: {why}" for m, why in self.left_out]
        out += [f"warning: {w}" for w in self.warnings]
        out.append("")
        rows = []
        for p in self.parameters:
            value = "-" if p.value is None else p.param.format(p.value)
            state = ("fitted, at a bound" if p.at_bound else "fitted") if p.identified else "not identified, kept"
            rows.append([p.param.name, value, p.interval_text(), "-" if p.prior is None else p.param.format(p.prior),
                         p.param.bounds_text, state, p.partner_text() if p.identified else "-", p.note])
        out += _table(["parameter", "value", "95% interval", "prior", "bounds", "", "strongest correlation",
                       "note"], rows)
        out.append("")
        out.append(f"{self.simulations} simulations, {self.evaluations} parameter sets,"
                   f" {self.screened} integer combinations screened, {self.fitted_windows} fitted;"
                   f" {self.wall_seconds:.1f} s")
        return "\n".join(out)


def _maybe(x):
    return None if x is None or not math.isfinite(x) else _round(x, 3)


def _num(x: float) -> str:
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:.1f}"
    return f"{x:#.3g}"


def _table(headers, rows) -> list:
    widths = [max([len(str(h))] + [len(str(r[i])) for r in rows]) for i, h in enumerate(headers)]
    lines = ["  ".join(f"{h:<{w}}" for h, w in zip(headers, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(f"{str(c):<{w}}" for c, w in zip(r, widths)).rstrip() for r in rows]
    return lines


# ------------------------------------------------------------------ what the measurements identify

_NO_EFFECT = "no fitted prediction depends on it"


@dataclass(frozen=True)
class _Verdict:
    """Whether the measurements identify one parameter, and how well."""

    identified: bool
    sigma: float | None = None     # one standard deviation, in the parameter's unit
    interval: tuple | None = None  # 95%, in the parameter's unit (integers: the values within the 95% level)
    reason: str = ""               # why not identified
    width: float = math.inf        # the interval's share of the range: which unidentified parameter goes first
    correlations: dict = field(default_factory=dict, compare=False)


def _noise(search: _Search, fit: _Fit) -> tuple:
    """``(s2, q)``: the variance of one relative residual and the two-sided 95% quantile that goes with it.

    The variance pools the fit's residuals (over its degrees of freedom:
    independent measurements less free parameters, at least one) with the
    model's own precision (1% per prediction) weighted as
    :data:`NOISE_PRIOR_DOF` degrees of freedom, and is floored at that
    precision; Student's t quantile on the pooled degrees of freedom when the
    residuals raise it above the floor, the normal one (1.96) when the floor
    sets it.  Pooling keeps a fit with one or two spare measurements from an
    interval as wide as Student's t on one degree of freedom (12.7) would
    make it, when its residuals are about the model's precision.
    """
    from scipy.stats import norm, t

    dof = max(search.ev.independent - len(search.continuous) - len(search.integers), 1)
    pooled_dof = dof + NOISE_PRIOR_DOF
    variance = (fit.cost + NOISE_PRIOR_DOF * NOISE_FLOOR ** 2) / pooled_dof
    if variance > NOISE_FLOOR ** 2:
        return variance, float(t.ppf(0.5 + CONFIDENCE / 2, pooled_dof))
    return NOISE_FLOOR ** 2, float(norm.ppf(0.5 + CONFIDENCE / 2))


def _classify(search: _Search, fit: _Fit) -> dict:
    """``{name: _Verdict}`` of the continuous parameters being fitted, from the Jacobian at ``fit``.

    Not identified: a parameter no prediction depends on; one whose 95%
    interval spans more than :data:`UNIDENTIFIED_WIDTH` of its range; one
    correlated with another beyond :data:`STRONG_CORRELATION` (only their
    combination is determined).  Correlations are at the fitted integers.
    """
    params = search.continuous
    if not params:
        return {}
    J = fit.jacobian
    m, n = J.shape
    unused = [float(np.max(np.abs(J[:, j]))) * DIFF_STEP < NEGLIGIBLE_CHANGE for j in range(n)]
    s2, q = _noise(search, fit)
    gradient = J.T @ fit.residuals    # half the cost's slope in the scaled coordinates
    active = [j for j in range(n) if not unused[j]]
    sigma_u = np.full(n, np.inf)
    corr = np.zeros((n, n))
    if active:
        Ja = J[:, active]
        cov = s2 * np.linalg.pinv(Ja.T @ Ja, rcond=1e-10)
        diag = np.clip(np.diag(cov), 0.0, None)
        sigma_u[active] = np.sqrt(diag)
        with np.errstate(invalid="ignore", divide="ignore"):
            c = np.nan_to_num(cov / np.sqrt(np.outer(diag, diag)), nan=0.0)
        corr[np.ix_(active, active)] = np.clip(c, -1.0, 1.0)
        rank = np.linalg.matrix_rank(Ja, tol=1e-6 * max(1.0, float(np.abs(Ja).max())))
        if rank < len(active):
            null = np.linalg.svd(Ja)[2][-1]  # the direction the data cannot see
            for k, j in enumerate(active):
                if abs(null[k]) > 0.3:
                    sigma_u[j] = np.inf
    out = {}
    for j, p in enumerate(params):
        span = float(search.span[j])
        correlations = {params[k].name: float(corr[j, k]) for k in active if k != j}
        if unused[j]:
            out[p.name] = _Verdict(False, reason=_NO_EFFECT)
            continue
        if not math.isfinite(sigma_u[j]):
            partner = max(correlations, key=lambda k: abs(correlations[k]), default="other parameters")
            out[p.name] = _Verdict(False, reason=f"it trades off exactly with {partner}: only a combination is"
                                                 " determined", correlations=correlations)
            continue
        lo_u, hi_u = max(0.0, fit.u[j] - q * sigma_u[j]), min(1.0, fit.u[j] + q * sigma_u[j])
        interval = (p.low + lo_u * span, p.low + hi_u * span)
        width = hi_u - lo_u
        strongest = max(correlations, key=lambda k: abs(correlations[k]), default=None)
        verdict = _Verdict(True, float(sigma_u[j] * span), interval, "", width, correlations)
        # at a bound the cost rises inwards: the measurements want it beyond, and its interval is one-sided
        pushing = _at_bound(fit.u[j], float(gradient[j]))
        if strongest is not None and abs(correlations[strongest]) > STRONG_CORRELATION:
            verdict = replace(verdict, identified=False,
                              reason=f"r = {correlations[strongest]:+.2f} with {strongest}: only a combination"
                                     " of the two is determined")
        elif pushing:
            verdict = replace(verdict, reason=f"the measurements want it {pushing} its bound")
        elif width > UNIDENTIFIED_WIDTH:
            text = f"{_round(interval[0], 3)}..{_round(interval[1], 3)}{' ' + p.unit if p.unit else ''}"
            verdict = replace(verdict, identified=False,
                              reason=f"its 95% interval {text} spans {100 * width:.0f}% of its range")
        out[p.name] = verdict
    return out


def _at_bound(u: float, gradient: float) -> str:
    """``below``/``above`` when a scaled value sits on its lower/upper bound with the cost rising inwards."""
    if u <= 0.01 and gradient > 0:
        return "below"
    if u >= 0.99 and gradient < 0:
        return "above"
    return ""


def _integer_verdicts(search: _Search, best: _Fit) -> dict:
    """``{name: _Verdict}`` of the integers: the values whose best known cost is within the 95% level.

    The level is the profile's: a cost within q² times the residual variance
    of the best, q the quantile of the intervals (1.96, so 3.84, when the
    model's precision sets the variance; Student's t otherwise).  The costs known are those of the
    combinations screened, followed by chord steps or refitted (an upper
    bound of each one's best fit).  An integer whose values within the level
    span more than half its range is not identified, unless it sits on a
    bound with its cost rising inwards (the measurements want it beyond).
    """
    s2, q = _noise(search, best)
    threshold = best.cost + q * q * s2
    out = {}
    for k, p in enumerate(search.integers):
        costs = {}
        for key, cost in search.costs.items():
            costs[key[k]] = min(cost, costs.get(key[k], math.inf))
        value = int(best.ints[p.name])
        good = [v for v, c in costs.items() if c <= threshold] + [value]
        low, high = min(good), max(good)
        known = sorted(costs.values())
        inward = costs.get(value - 1 if value == p.high else value + 1, math.inf)
        pushing = ("above" if value == p.high else "below") if value in (p.low, p.high) and inward > best.cost else ""
        if len(known) > 1 and known[-1] - known[0] <= 1e-9 * max(known[-1], 1e-12):
            out[p.name] = _Verdict(False, reason=_NO_EFFECT)
        elif pushing:
            out[p.name] = _Verdict(True, interval=(low, high), reason=f"the measurements want it {pushing} its bound",
                                   width=(high - low + 1) / (p.high - p.low + 1))
        elif high - low + 1 > max(2, (p.high - p.low + 1) // 2):
            out[p.name] = _Verdict(False, interval=(low, high),
                                   reason=f"values {low}..{high} fit within the 95% level: most of its range"
                                          f" {int(p.low)}..{int(p.high)}")
        else:
            out[p.name] = _Verdict(True, interval=(low, high), width=(high - low + 1) / (p.high - p.low + 1))
    return out


def _correlation_matrix(search: _Search, best: _Fit, int_verdicts: dict) -> tuple:
    """``(names, matrix)`` of the correlations between the fitted parameters.

    Between two continuous parameters: from the Jacobian at the fitted
    integers (as their intervals are).  With an integer: from the model
    linearised in that integer, a central difference over its two
    neighbours (simulated at the fit); descriptive only, as an integer is
    set by its profile, not by a slope.
    """
    names = [p.name for p in search.continuous]
    J = best.jacobian if best.jacobian is not None else np.zeros((len(best.residuals), 0))
    ints = [p for p in search.integers if int_verdicts[p.name].identified]
    points, spans = [], []
    for p in ints:
        v = int(best.ints[p.name])
        low, high = max(v - 1, int(p.low)), min(v + 1, int(p.high))
        spans.append(high - low)
        points += [search.values(best.u, {**best.ints, p.name: x}) for x in (low, high)]
    residuals = search.ev.residuals_many(points) if points else []
    columns = [(residuals[2 * k + 1] - residuals[2 * k]) / spans[k] for k in range(len(ints))]
    full = np.column_stack([J] + columns) if columns else J
    out = _corr(full)
    nc = J.shape[1]
    if nc:
        out[:nc, :nc] = _corr(J)
    return names + [p.name for p in ints], np.round(out, 6)


def _corr(J) -> np.ndarray:
    n = J.shape[1]
    if not n:
        return np.zeros((0, 0))
    cov = np.linalg.pinv(J.T @ J, rcond=1e-10)
    diag = np.clip(np.diag(cov), 0.0, None)
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.nan_to_num(cov / np.sqrt(np.outer(diag, diag)), nan=0.0)
    corr = np.clip((corr + corr.T) / 2, -1.0, 1.0)
    np.fill_diagonal(corr, 1.0)
    return corr


# ------------------------------------------------------------------ the entry point

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


def is_peak(case: Case, topology: Topology) -> bool:
    """Every core of one node streaming its local memory: one op (r, w or t), unthrottled, no background."""
    if case.background or len(case.threads) < 2:
        return False
    specs = [parse_spec(s) for s in case.threads]
    node, op = specs[0].node, specs[0].op
    if op not in STRIDE_OPS or node not in topology.node_ids:
        return False
    if any(s.node != node or s.op != op or s.mem_node != node or s.rate_GBps for s in specs):
        return False
    cores = [s.core for s in specs]
    return len(set(cores)) == len(cores) and set(cores) == set(range(topology.node(node).cores))


def choose_cases(data: MeasurementSet, cases=None, topology: Topology | None = None) -> tuple:
    """``(cases to fit, [(measurement, why it was left out)])``.

    Named ``cases`` (measured ones only), else by default: every
    single-thread stride case (op ``r``, ``w`` or ``t``), every idle latency
    chase measured on huge pages (a chase on base pages is left out, see
    :func:`chase_pages_problem`), and, given the board, every peak (every core
    of one node streaming its local memory, :func:`is_peak`).  Cases with
    background threads (loaded latency, paced loads) are validation cases.
    """
    if not cases:
        chosen, left_out = [], []
        for c in data.cases:
            if c.single_thread and c.ops <= STRIDE_OPS:
                chosen.append(c)
            elif c.single_thread and c.ops == {"l"}:
                chase = [m for m in data if m.case == c and m.metric == "thread_latency_ns"]
                problems = [(m, chase_pages_problem(m)) for m in chase]
                problems = [(m, why) for m, why in problems if why]
                if problems:
                    left_out += problems
                else:
                    chosen.append(c)
            elif topology is not None and is_peak(c, topology):
                chosen.append(c)
        if not chosen:
            raise CalibrationError(f"{', '.join(data.files)}: no single-thread stride case (op r, w or t), idle"
                                   " chase on huge pages or peak to calibrate on; name cases with --cases")
        return tuple(chosen), left_out
    measured = {c.name: c for c in data.cases}
    out = []
    for text in cases:
        try:
            name = parse_case(text).name
        except SpecError as exc:
            raise CalibrationError(f"--cases {text!r}: {exc}") from None
        if name not in measured:
            raise CalibrationError(f"--cases {text!r}: not a measured case; measured: "
                                   + ", ".join(measured))
        if measured[name] not in out:
            out.append(measured[name])
    return tuple(out), []


def calibrate(topology, data: MeasurementSet, fit=None, cases=None, processes: int = 2, seed: int = 1,
              max_evaluations: int = MAX_FIT_EVALUATIONS, progress=None, log=None) -> Calibration:
    """Fit ``fit`` (names, ``NAME=LOW:HIGH`` or FreeParameters; default :func:`default_fit`) to ``data``.

    ``cases`` names the cases to fit (default: :func:`choose_cases`).
    ``progress(n)`` is called as simulations finish; ``log(text)`` with the
    steps of the search.  Raises CalibrationError when the measurements do not
    belong to the board, a case cannot be placed, a parameter is not one of
    the board's memory model, or the fit does not converge.
    """
    started = time.perf_counter()
    topology = load_topology(topology)
    chosen, left_out = choose_cases(data, cases, topology)
    subset = data.select(c.name for c in chosen)
    warnings = [f"{m.key}: fitted as named, although {why}" for m in subset
                if m.metric == "thread_latency_ns" and parse_spec(m.thread).op == "l"
                for why in [chase_pages_problem(m)] if why]
    check_measurements(topology, subset)
    ops = frozenset(op for c in chosen for op in sim_case(c, None).ops)
    if fit and all(isinstance(p, FreeParameter) for p in fit):
        params = [p.for_board(topology) if p == PARAMETERS.get(p.name) else p for p in fit]
    else:
        params = parse_fit(fit, topology, chosen)
    params, unusable = _usable(params, topology, ops)
    params = _room_for_littles_law(params, subset, topology)
    priors = {p.name: p.prior(topology) for p in params}
    log = log or (lambda text: None)
    with Evaluator(topology, subset, params, processes, seed, progress) as ev:
        if len(params) > ev.independent:
            warnings.append(f"{len(params)} free parameters for {ev.independent} independent measurements:"
                            " not all of them can be identified")
        search = _Search(ev, params, priors, max_evaluations, log)
        start = {p.name: int(min(max(round(priors[p.name]), p.low), p.high)) for p in search.integers}
        start_values = _start(search, subset, priors, start)
        best = search.run({n: start_values[n] for n in start}, search.u_of(start_values))
        best, verdicts, search = _settle(search, best, priors)
        int_verdicts = _integer_verdicts(search, best)
        moved = {}
        for p in search.integers:
            if not int_verdicts[p.name].identified:
                value, int_verdicts[p.name] = _held_at(p, float(round(priors[p.name])), int_verdicts[p.name])
                if best.ints[p.name] != value:
                    moved[p.name] = int(value)
        if moved:
            log("not identified, back to the board's values: " + ", ".join(f"{n}={v}" for n, v in moved.items()))
            best = search.finish(search.fit({**best.ints, **moved}, best.u))
            best, again, search = _settle(search, best, priors)
            verdicts = {**verdicts, **again}
            int_verdicts = {**_integer_verdicts(search, best), **{n: int_verdicts[n] for n in moved}}
        verdicts.update(int_verdicts)
        names, matrix = _correlation_matrix(search, best, int_verdicts)
        raw = search.values(best.u, best.ints)
        final_values = {p.name: p.rounded(raw[p.name]) for p in params}
        fitted = ev.predictions(final_values)  # of the values as the calibrated board writes them
        parameters = _parameter_fits(params, priors, final_values, verdicts, names, matrix) + unusable
        calibrated = topology.with_parameters(
            {p.param.path: p.param.document_value(p.value) for p in parameters
             if p.identified or p.value is not None and p.value != p.prior})
        return Calibration(prior_topology=topology, topology=calibrated, data=subset, cases=chosen,
                           parameters=parameters, rows=[FitRow(m, float(v)) for m, v in zip(subset, fitted)],
                           simulations=ev.simulations, evaluations=ev.evaluations, screened=search.screened,
                           fitted_windows=len(search.fits), wall_seconds=time.perf_counter() - started,
                           left_out=left_out, warnings=warnings, independent=ev.independent,
                           correlation={"parameters": names, "matrix": matrix.tolist()})


def _start(search: _Search, data: MeasurementSet, priors: dict, ints: dict) -> dict:
    """Where the fit starts: the board's values, or values read off an idle chase when they fit better.

    With an idle latency chase among the measurements and the memory latency
    free, the chase sets it (the chase's latency moves one for one with
    ``memory.latency`` in every memory model), and each free window of an op
    measured by a single local stream starts where Little's law puts it: the
    stream's bandwidth times the chase's latency, in lines.  A core that
    keeps many lines in flight at a long latency (a current one, with its
    prefetchers) is far from the board's guesses, and a local fit from those
    trades the latency down instead of the windows up.  The start with the
    lower cost is taken.
    """
    values = {**priors, **ints}
    params = {p.name: p for p in search.continuous + search.integers}
    chase = [m for m in data if m.metric == "thread_latency_ns" and m.case.single_thread and m.case.ops == {"l"}]
    if not chase or "memory.latency" not in params:
        return values
    m = chase[0]
    index = list(data).index(m)
    predicted = search.ev.predictions(values)[index]
    lat = params["memory.latency"]
    latency = min(max(values["memory.latency"] + m.value - predicted, lat.low), lat.high)
    guess = {**values, "memory.latency": latency}
    for name, lines in _littles_law_windows(data).items():
        if name in params:
            p = params[name]
            guess[name] = int(min(max(round(lines), p.low), p.high))
    guess_ints = {n: guess[n] for n in ints}
    costs = [float(np.sum(r ** 2)) for r in search.ev.residuals_many([search.values(search.u_of(values), ints),
                                                                      search.values(search.u_of(guess), guess_ints)])]
    if costs[1] < costs[0]:
        search.log(f"starting from the idle chase: memory.latency {latency:.3g} ns, {search.itext(guess_ints)}"
                   f" (cost {costs[1]:.3g} against {costs[0]:.3g} at the board's values)")
        return guess
    return values


def _littles_law_windows(data: MeasurementSet) -> dict:
    """``{core.window.<op>: lines}``: each single local stream's bandwidth times the idle chase's latency."""
    chase = [m for m in data if m.metric == "thread_latency_ns" and m.case.single_thread and m.case.ops == {"l"}]
    if not chase:
        return {}
    out = {}
    for stream in data:
        if stream.metric == "thread_GBps" and stream.case.single_thread:
            spec = parse_spec(stream.thread)
            if spec.node == spec.mem_node and spec.op != "l":
                out[f"core.window.{spec.op}"] = stream.value * chase[0].value / 64.0
    return out


def _room_for_littles_law(params: list, data: MeasurementSet, topology: Topology) -> list:
    """Windows whose default range cannot hold what Little's law reads off the measurements get room
    up to twice that (as far as the window's largest value); ranges given with ``--fit`` stay."""
    lines = _littles_law_windows(data)
    out = []
    for p in params:
        want = lines.get(p.name)
        default = PARAMETERS.get(p.name)
        if want and default is not None and p == default.for_board(topology) and want > p.high / 2:
            top = _INTEGER_MAX.get(p.name, 1024)
            p = p.with_bounds(p.low, max(p.high, min(top, 2 * int(round(want)))))
        out.append(p)
    return out


def _usable(params: list, topology: Topology, ops: frozenset):
    """``(parameters to fit, [ParameterFit of those that cannot be])``.

    A link parameter on a board without links, and the window of an op no
    chosen case uses, are not identified by construction.
    """
    out, unusable = [], []
    for p in params:
        prior = p.prior(topology)
        if prior is None:
            unusable.append(ParameterFit(p, None, None, None, False, "the board has no link"))
        elif p.op is not None and p.op not in ops:
            unusable.append(ParameterFit(p, prior, prior, None, False, f"no fitted case uses op {p.op!r}"))
        else:
            out.append(p)
    if not out:
        raise CalibrationError(f"none of the parameters to fit matters for these cases on board {topology.name!r}")
    return out, unusable


def _held_at(p: FreeParameter, prior: float, verdict: _Verdict) -> tuple:
    """``(value, verdict)``: where an unidentified parameter is held, and why.

    At the board's value, unless the measurements exclude it: a value outside
    the parameter's 95% interval (or an integer's range) moves to the nearest
    end of it, the least change to the board the measurements allow.
    """
    if verdict.interval is None or prior is None:
        return prior, verdict
    low, high = verdict.interval
    if low <= prior <= high:
        return prior, verdict
    value = p.rounded(low if prior < low else high)
    note = (f"; held at {p.format(value)}, the end of its 95% {'range' if p.integer else 'interval'} nearest the"
            f" board's {p.format(prior)}")
    return value, replace(verdict, reason=verdict.reason + note)


def _hold_one(search: _Search, best: _Fit, priors: dict, by_name: dict, held: dict, where: dict, worst: str,
              verdict: "_Verdict") -> tuple:
    """``(name, value, verdict, fit, search)``: ``worst`` held where :func:`_held_at` puts it, the rest refitted."""
    value, verdict = _held_at(by_name[worst], priors[worst], verdict)
    fixed = {**search.fixed, **{n: where[n] for n in held}, worst: value}
    keep = [j for j, p in enumerate(search.continuous) if p.name not in fixed]
    start_values = {**search.values(best.u, best.ints), **fixed}
    inner = _Search(search.ev, search.continuous + search.integers, priors, search.max_evaluations, search.log,
                    fixed=fixed).share(search)
    u = inner.u_of(start_values)
    text = f"{worst} at {by_name[worst].format(value)} ({verdict.reason})"
    # moving the held ones to their values; the Jacobian says how far that moves the predictions
    shift = best.jacobian @ (search.u_of(start_values) - best.u)
    if float(np.max(np.abs(shift), initial=0.0)) < NOISE_FLOOR:
        # a small move: one linear step of the rest with the Jacobian they have, kept if it helps
        search.log(f"holding {text}; that moves no prediction by 1%: one linear step of the rest")
        J = best.jacobian[:, keep]
        r = search.ev.residuals_many([inner.values(u, best.ints)])[0]
        stepped = _linear_step(J, r, u)
        r2 = search.ev.residuals_many([inner.values(stepped, best.ints)])[0]
        u, r = (stepped, r2) if float(r2 @ r2) < float(r @ r) else (u, r)
        held_fit = replace(best, u=u, residuals=r, jacobian=J)
    else:
        search.log(f"holding {text} and refitting the rest")
        held_fit = inner.finish(inner.fit(best.ints, u, jacobian=best.jacobian[:, keep]))
    return worst, value, verdict, held_fit, inner


def _settle(search: _Search, best: _Fit, priors: dict):
    """Hold unidentified continuous parameters at the board's values, refitting the rest.

    Parameters nothing depends on are held at once (that changes no
    prediction).  Of the others that are not identified (an interval over
    most of the range, a correlation beyond 0.95), the one with the widest
    interval is held and the rest refitted, until every free one is
    identified; when that one is correlated beyond 0.95 with another free
    one, both are tried and the one whose holding raises the cost least is
    held (a chase fixes the sum of the memory and crossbar latencies: the
    crossbar's assumption is held, not the latency the chase measures).  A board value the measurements exclude is replaced by the
    nearest they allow (:func:`_held_at`).  The profile has the last word:
    when holding a parameter raises the cost beyond the 95% level (q² times
    the residual variance, as for the integers), the measurements reject the held value, and the
    parameter stays free and fitted, with its interval and a note.  Returns
    ``(fit, verdicts, search)``; the search is the last one (its ``fixed``
    holds the held parameters at their values).
    """
    held, where, rejected = {}, {}, {}
    verdicts = {}
    by_name = {p.name: p for p in search.continuous}
    for _ in range(len(search.continuous) + 1):
        verdicts = _classify(search, best)
        unused = [n for n, v in verdicts.items() if not v.identified and v.reason == _NO_EFFECT]
        weak = [n for n, v in verdicts.items() if not v.identified and v.reason != _NO_EFFECT and n not in rejected]
        for name in unused:
            held[name], where[name] = verdicts[name], priors[name]
        if not weak:
            break
        # the widest first; of two that only a combination determines, the one whose holding costs least
        ranked = sorted(weak, key=lambda n: -verdicts[n].width)
        first = verdicts[ranked[0]]
        pairs = {n: r for n, r in first.correlations.items()
                 if abs(r) > STRONG_CORRELATION or not math.isfinite(first.width)}
        partner = max(pairs, key=lambda n: abs(pairs[n])) if pairs else None
        candidates = [ranked[0]] + ([partner] if partner in weak and partner != ranked[0] else [])
        tries = [_hold_one(search, best, priors, by_name, held, where, name, verdicts[name]) for name in candidates]
        worst, value, verdict, held_fit, inner = min(tries, key=lambda t: t[3].cost)
        # the profile's word: a held value that raises the cost beyond the 95% level is one the measurements
        # reject, whatever the linearised interval said
        s2, q = _noise(search, best)
        if held_fit.cost > best.cost + q * q * s2:
            search.log(f"{worst} stays free: held at {by_name[worst].format(value)} the cost rises from"
                       f" {best.cost:.3g} to {held_fit.cost:.3g}, beyond the 95% level ({best.cost + q * q * s2:.3g})")
            rejected[worst] = (value, held_fit.cost)
            continue
        held[worst], where[worst] = verdict, value
        best, search = held_fit, inner
    if held and any(n not in search.fixed for n in held):
        values = {**search.values(best.u, best.ints), **{n: where[n] for n in held}}
        last = search
        search = _Search(search.ev, search.continuous + search.integers, priors, search.max_evaluations, search.log,
                         fixed={**search.fixed, **{n: where[n] for n in held}}).share(last)
        keep = [j for j, p in enumerate(last.continuous) if p.name not in held]
        best = replace(best, u=search.u_of(values), jacobian=best.jacobian[:, keep])
    out = {n: v for n, v in verdicts.items() if n not in held}
    for name, (value, cost) in rejected.items():
        v = out[name]
        if not v.identified:
            reason = (f"its linearised 95% interval is wide, but held at {by_name[name].format(value)} the cost"
                      f" rises beyond the 95% level ({best.cost:.3g} to {cost:.3g}): the measurements reject that")
            out[name] = replace(v, identified=True, reason=reason)
    out.update(held)
    return best, out, search


def _parameter_fits(params: list, priors: dict, values: dict, verdicts: dict, names: list, matrix) -> list:
    out = []
    for p in params:
        v = verdicts[p.name]
        if not v.identified:
            held = values.get(p.name, priors[p.name])    # the board's value, or the nearest the measurements allow
            out.append(ParameterFit(p, priors[p.name], float(held), None, False, v.reason))
            continue
        k = names.index(p.name)
        correlations = {n: float(matrix[k][i]) for i, n in enumerate(names) if i != k}
        interval = v.interval
        if p.integer:
            interval = (float(interval[0]), float(interval[1]))
        out.append(ParameterFit(p, priors[p.name], float(values[p.name]), v.sigma, True, v.reason, interval,
                                correlations))
    return out


# ------------------------------------------------------------------ prediction (validation)

def predict(topology, data: MeasurementSet, processes: int = 2, seed: int = 1, progress=None) -> list:
    """The model's value of every measurement of ``data`` on ``topology`` (same order)."""
    topology = load_topology(topology)
    check_measurements(topology, data)
    with Evaluator(topology, data, [], processes, seed, progress) as ev:
        return [float(v) for v in ev.predictions({})]


# ------------------------------------------------------------------ the calibrated board file

def calibrated_yaml(calibration: Calibration, original_text: str | None = None, sources=None) -> str:
    """The calibrated board as YAML text, with a comment block saying what was fitted to what.

    With the board's ``original_text`` the fitted values are substituted in
    place (every other line and comment kept; the comment of a fitted value
    says so); if that is not possible the board is written afresh.
    ``sources`` names the measurement files as the comments should show
    them (default: as they were read).
    """
    shown = list(sources) if sources else list(calibration.data.files)
    text = _edit_in_place(original_text, calibration, ", ".join(shown)) if original_text is not None else None
    if text is None:
        text = calibration.topology.to_yaml()
    text = _insert_block(_remove_block(text), _comment_block(calibration, shown))
    if parse_topology(text, "<calibrated>") != calibration.topology:
        raise RuntimeError("the calibrated board does not read back as fitted")
    return text


def _comment_block(cal: Calibration, shown: list) -> list:
    lines = [f"{_BLOCK_START} ({cal.date}, simnuma {__version__})",
             f"# fitted to {', '.join(shown)}: {cal.data.machine.description}",
             f"# cases ({len(cal.cases)}): " + "; ".join(c.name for c in cal.cases)]
    for p in cal.parameters:
        if p.identified:
            line = (f"#   {p.param.name} = {p.param.format(p.value)} (95%: {p.interval_text()};"
                    f" prior {p.param.format(p.prior)})")
            if p.at_bound:
                line += "; at a bound"
            if p.partner:
                line += f"; strongest correlation {p.partner_text()}"
            lines.append(line)
        elif p.value is not None and p.value != p.prior:
            lines.append(f"#   {p.param.name} set to {p.param.format(p.value)}: not identified ({p.note})")
        else:
            kept = "-" if p.prior is None else p.param.format(p.prior)
            lines.append(f"#   {p.param.name} kept at {kept}: not identified ({p.note})")
    lines.append("# measured -> fitted (residual):")
    for r in cal.rows:
        lines.append(f"#   {r.measurement.case.name} {r.measurement.label}: {_num(r.measurement.value)} ->"
                     f" {_num(r.fitted)} ({r.residual_percent:+.1f}%)")
    lines.append(f"# mean |residual| {cal.mean_abs_residual_percent:.1f}%, worst {cal.worst.residual_percent:+.1f}%")
    lines += [f"# left out: {m.key}: {why}" for m, why in cal.left_out]
    lines += [f"# warning: {w}" for w in cal.warnings]
    record = dict(cal.record(), measurements=shown)
    lines.append(RECORD_PREFIX + json.dumps(record, sort_keys=True, ensure_ascii=False))
    lines.append(_BLOCK_END)
    return lines


def _remove_block(text: str) -> str:
    lines = text.splitlines(keepends=True)
    out, inside = [], False
    for line in lines:
        if line.startswith(_BLOCK_START):
            inside = True
            continue
        if inside:
            if line.startswith(_BLOCK_END):
                inside = False
            continue
        out.append(line)
    return "".join(out)


def _insert_block(text: str, block: list) -> str:
    """Put the block after the file's leading comment lines (its header), before the first key."""
    lines = text.splitlines(keepends=True)
    at = 0
    while at < len(lines) and lines[at].lstrip().startswith("#"):
        at += 1
    return "".join(lines[:at]) + "".join(line + "\n" for line in block) + "".join(lines[at:])


def read_calibration_record(text: str) -> dict | None:
    """The ``# simnuma-calibration: {...}`` record of a calibrated board's text, or None."""
    for line in text.splitlines():
        if line.startswith(RECORD_PREFIX):
            try:
                record = json.loads(line[len(RECORD_PREFIX):])
            except json.JSONDecodeError:
                raise CalibrationError("the board's simnuma-calibration comment is malformed JSON") from None
            if not isinstance(record, dict) or not isinstance(record.get("cases"), list):
                raise CalibrationError("the board's simnuma-calibration comment lists no cases")
            return record
    return None


def _edit_in_place(text: str, cal: Calibration, shown: str) -> str | None:
    """``text`` with the fitted defaults substituted and their comments updated; None if not possible."""
    import yaml

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    text = _insert_missing(text, root, [p for p in cal.written if _scalar_at(root, p.param.path.split(".")) is None])
    if text is None:
        return None
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    edits = {}     # start index -> (end index, new text)
    notes = {}     # line number -> [fitted parameters on it]
    others = {}    # line number -> keys beside them on that line that were not fitted
    for p in cal.written:
        parts = p.param.path.split(".")
        node = _scalar_at(root, parts)
        if node is None:
            return None
        edits[node.start_mark.index] = (node.end_mark.index, str(p.param.document_value(p.value)))
        line = node.start_mark.line
        notes.setdefault(line, []).append(p)
        for key in _keys_on_line(_node_at(root, parts[:-1]), line):
            if key not in others.setdefault(line, []):
                others[line].append(key)
    for line, fitted in notes.items():
        done = {p.param.path.rsplit(".", 1)[1] for p in fitted}
        others[line] = [key for key in others[line] if key not in done]
    out = text
    for start in sorted(edits, reverse=True):
        end, new = edits[start]
        out = out[:start] + new + out[end:]
    lines = out.splitlines(keepends=True)
    original = text.splitlines()
    for line_no, fitted in notes.items():
        column = len(_split_comment(original[line_no])[0])
        lines[line_no] = _with_comment(lines[line_no], fitted, shown, column, others[line_no])
    out = "".join(lines)
    try:
        if parse_topology(out, "<calibrated>") != cal.topology:
            return None
    except TopologyError:
        return None
    return out


def _insert_missing(text: str, root, params: list) -> str | None:
    """``text`` with a line for each fitted parameter the file does not set yet; None if that is not possible.

    The value goes under the deepest block mapping of its path that exists,
    as ``key: {sub: value}`` on a new line after that mapping's last line.
    """
    import yaml

    groups = {}   # (line to insert after, indent) -> {first missing key: {rest: value}}
    for p in params:
        parts = p.param.path.split(".")
        depth = len(parts) - 1
        while depth > 0 and _node_at(root, parts[:depth]) is None:
            depth -= 1
        mapping = _node_at(root, parts[:depth])
        if not isinstance(mapping, yaml.MappingNode) or mapping.flow_style or not mapping.value:
            return None
        where = (_last_line(mapping), mapping.value[0][0].start_mark.column)
        nested = groups.setdefault(where, {})
        for key in parts[depth:-1]:
            nested = nested.setdefault(key, {})
        nested[parts[-1]] = p.param.document_value(p.value)
    lines = text.splitlines(keepends=True)
    for (after, indent), entries in sorted(groups.items(), reverse=True):
        new = [" " * indent + f"{key}: {_flow(value)}\n" for key, value in entries.items()]
        lines[after + 1:after + 1] = new
    return "".join(lines)


def _flow(value) -> str:
    """A value (a nested dict of scalars) in YAML flow style."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    return str(value)


def _last_line(node) -> int:
    """The last line (0-based) a YAML node's text occupies."""
    import yaml

    if isinstance(node, yaml.MappingNode) and node.value and not node.flow_style:
        return max(_last_line(v) for _, v in node.value)
    if isinstance(node, yaml.SequenceNode) and node.value and not node.flow_style:
        return max(_last_line(v) for v in node.value)
    end = node.end_mark
    return end.line - 1 if end.column == 0 and end.line > node.start_mark.line else end.line


def _node_at(root, parts):
    """The YAML node at the key path ``parts`` (None when there is none)."""
    import yaml

    node = root
    for part in parts:
        if not isinstance(node, yaml.MappingNode):
            return None
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == part:
                node = value
                break
        else:
            return None
    return node


def _scalar_at(root, parts):
    import yaml

    node = _node_at(root, parts)
    return node if isinstance(node, yaml.ScalarNode) else None


def _keys_on_line(mapping, line: int) -> list:
    """Keys of ``mapping`` whose values are scalars written on ``line``."""
    import yaml

    if not isinstance(mapping, yaml.MappingNode):
        return set()
    return [key.value for key, value in mapping.value
            if isinstance(key, yaml.ScalarNode) and isinstance(value, yaml.ScalarNode)
            and value.start_mark.line == line]


def _with_comment(line: str, fitted: list, shown: str, column: int, unfitted=()) -> str:
    """``line`` whose comment says the values on it were fitted (replacing an 'assumption' comment).

    ``unfitted`` names other values on the line that were not fitted (they
    stay assumptions).  The comment stays at ``column`` (where it was) when
    the code still fits before it.
    """
    body, newline = (line[:-1], "\n") if line.endswith("\n") else (line, "")
    code, comment = _split_comment(body)
    if comment is not None:
        comment = _FITTED_NOTE.sub("", comment).strip() or None  # a previous calibration's note goes
    replace_comment = comment is None or _is_assumption(comment)
    if not any(p.identified for p in fitted):    # held where the measurements allow, not fitted
        what = f"{fitted[0].param.description}, set" if replace_comment and len(fitted) == 1 else "set"
        values = "; ".join(f"{p.param.name} not identified: {p.note}" for p in fitted)
        note = f"{what} by simnuma calibrate on {shown} ({values})"
        new_comment = note if replace_comment else f"{comment.rstrip()}; {note}"
        code = code.rstrip()
        pad = " " * max(2, column - len(code)) if comment is not None else "  "
        return f"{code}{pad}# {new_comment}{newline}"
    moved = [p for p in fitted if not p.identified]
    fitted = [p for p in fitted if p.identified]
    windows = all(p.param.name.startswith("core.window.") for p in fitted)
    if len(fitted) == 1:
        p = fitted[0]
        what = f"{p.param.description}, fitted" if replace_comment else "fitted"
    else:
        what = ("outstanding lines per core (miss buffers and prefetch), fitted" if windows and replace_comment
                else "fitted")
    if windows:
        values = ", ".join(f"{p.param.op}: {int(p.value)}" + (f" (95%: {p.interval_text()})" if p.interval
                                                                and p.interval[1] > p.interval[0] else "")
                           for p in fitted) + "; best of a grid search"
    elif len(fitted) == 1:
        values = f"{fitted[0].param.format(fitted[0].value)}, 95%: {fitted[0].interval_text()}"
    else:
        values = ", ".join(f"{p.param.name}: {p.param.format(p.value)} (95%: {p.interval_text()})" for p in fitted)
    note = f"{what} by simnuma calibrate on {shown} ({values})"
    note += "".join(f"; {p.param.name} set, not identified: {p.note}" for p in moved)
    if unfitted and replace_comment:
        note += f"; {', '.join(unfitted)}: assumption, not fitted"
    new_comment = note if replace_comment else f"{comment.rstrip()}; {note}"
    code = code.rstrip()
    pad = " " * max(2, column - len(code)) if comment is not None else "  "
    return f"{code}{pad}# {new_comment}{newline}"


_FITTED_NOTE = re.compile(r"(?:^|;)[^;]*(?:fitted|set) by simnuma calibrate on .*$")


def _split_comment(line: str):
    """``(code including the spaces before '#', comment text)``; comment None when there is none."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i], line[i + 1:].strip()
    return line, None


def _is_assumption(comment: str) -> bool:
    return comment.lower().startswith("assumption")

