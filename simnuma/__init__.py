"""simnuma: discrete-event simulation of ccNUMA interconnects.

The public API is small: load a board, describe a case in the
``FOREGROUND [+ BACKGROUND]`` notation of ``N.C.op.M[@RATE]`` threads, simulate
it (or many, with a Runner), and compare with measurements.
"""
from __future__ import annotations

__version__ = "0.1.0"

from .errors import BenchError, CalibrationError, SimnumaError, SpecError, TopologyError
from .topology import Topology, bundled_topologies, load_topology, parse_topology
from .workload import ThreadSpec, Workload, parse_spec
from .case import Case, baseline_case, parse_case
from .model import simulate
from .model.result import Bottleneck, Latency, LinkResult, MemoryResult, QueueResult, Result, ThreadResult
from .runner import Job, ResultCache, Runner
from .sweeps import sweep
from .analytic import analyze

__all__ = [
    "__version__",
    "SimnumaError",
    "TopologyError",
    "SpecError",
    "BenchError",
    "CalibrationError",
    "Topology",
    "load_topology",
    "parse_topology",
    "bundled_topologies",
    "ThreadSpec",
    "Workload",
    "parse_spec",
    "Case",
    "parse_case",
    "baseline_case",
    "simulate",
    "Job",
    "Runner",
    "ResultCache",
    "sweep",
    "analyze",
    "Result",
    "ThreadResult",
    "Latency",
    "LinkResult",
    "MemoryResult",
    "QueueResult",
    "Bottleneck",
]
