"""The SimPy model of a ccNUMA board, one module per hardware block.

:class:`~simnuma.model.system.System` wires the components of a :class:`~simnuma.topology.Topology`
(cores, SRI, XBar, MCT/DRAM, link directions) before the run; ``simulate`` runs a
workload on them and returns a :class:`~simnuma.model.result.Result`.  The modules every packet
goes through are compiled with mypyc at install where a C compiler is at hand
(:mod:`simnuma.model.native` says which model runs).
"""
from .native import install_source_finder

install_source_finder()   # before any compiled module is imported: their source where the build may not run

from .system import simulate  # noqa: E402

__all__ = ["simulate"]
