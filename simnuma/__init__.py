"""simnuma: discrete-event simulation of ccNUMA interconnects.

The public API is small: load a board, describe threads in the
``N.C.op.M[@RATE]`` notation, simulate, and compare with measurements.
"""
from __future__ import annotations

__version__ = "0.1.0"

from .errors import BenchError, CalibrationError, SimnumaError, SpecError, TopologyError
from .topology import Topology, bundled_topologies, load_topology, parse_topology
from .workload import ThreadSpec, Workload, parse_spec
from .model import simulate
from .model.result import Bottleneck, Latency, LinkResult, MemoryResult, QueueResult, Result, ThreadResult

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
    "simulate",
    "Result",
    "ThreadResult",
    "Latency",
    "LinkResult",
    "MemoryResult",
    "QueueResult",
    "Bottleneck",
]
