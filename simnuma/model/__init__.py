"""The SimPy model of a ccNUMA board, one module per hardware block.

:class:`~simnuma.model.system.System` wires the components of a :class:`~simnuma.topology.Topology`
(cores, SRI, XBar, MCT/DRAM, link directions) before the run; ``simulate`` runs a
workload on them and returns a :class:`~simnuma.model.result.Result`.
"""
from .system import simulate

__all__ = ["simulate"]
