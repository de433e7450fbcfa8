"""The board language: YAML board descriptions in, a validated and immutable :class:`Topology` out.

A board is a set of nodes (sockets), the coherent links between them, I/O ports, a routing
table and a coherence mode; node parameters are written once under ``defaults`` and link
parameters under ``link_defaults``, and any node or link may override them.  Loading reports
every problem in a file at once, each as ``file:line: key.path: message``.  The language is
documented in ``docs/topology.md``.

* :mod:`.params`: every board parameter declared once (key, kind, unit, default, field, doc, fit bounds);
* :mod:`.schema`: the keys and value kinds of a board file, derived from that table;
* :mod:`.memparams`: the memory block (the ``fifo``, ``dram`` and ``curve`` models' parameters);
* :mod:`.paramdocs`: the parameter tables of ``docs/topology.md``, generated from the table;
* :mod:`.board`: :class:`Topology`, :class:`NodeParams`, :class:`LinkParams` (what the model reads);
* :mod:`.changes`: a board with dotted-path parameter changes (``with_parameters``);
* :mod:`.loading`: bundled boards by name, board files by path;
* :mod:`.checker` and :mod:`.validator`: every key, value, node, link, port and route checked;
* :mod:`.channels`: whether a board's routes admit a cyclic wait among its link buffers;
* :mod:`.helpers`: small shared pieces (node ids in messages; node and link parameters from resolved
  fields, by the parameter table of :mod:`simnuma.topology.params`).
"""
from ..errors import TopologyError
from .board import COHERENCE_MODES, ROUTING_MODES, VCS, LinkParams, NodeParams, Topology
from .routing import shortest_route
from .helpers import format_link_bandwidth
from .loading import bundled_topologies, load_topology, parse_topology, topology_from_dict

__all__ = [
    "COHERENCE_MODES", "ROUTING_MODES", "VCS", "LinkParams", "NodeParams", "Topology", "TopologyError",
    "bundled_topologies", "format_link_bandwidth", "load_topology", "parse_topology", "shortest_route",
    "topology_from_dict",
]
