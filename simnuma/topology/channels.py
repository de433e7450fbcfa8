"""Whether a board's routes admit a cyclic wait among its link buffers.

In the model (as in the hardware it describes) a packet keeps the receive
buffer it arrived in until the next link of its route grants it one, in every
virtual channel, and every channel carries packets between every pair of nodes
(requests, probes, responses, victim writes).  So a packet on link direction
``a->b`` that continues on ``b->c`` makes ``a->b`` wait on ``b->c``: the channel
dependency graph of Dally and Seitz, one vertex per link direction, one edge
per pair of consecutive directions of a route.  A cycle in it means a cyclic
wait is possible: if every buffer on the cycle fills with packets bound onward
along it, none can move (a ring of K8 sockets with broadcast probes does
exactly that).  No cycle means the routes alone cannot deadlock the links.
"""
from __future__ import annotations

import networkx as nx

from .board import ROUTE_CLASSES

__all__ = ["channel_dependencies", "dependency_cycle", "cycle_warning"]


def channel_dependencies(topology) -> nx.DiGraph:
    """The channel dependency graph: ``(a, b) -> (b, c)`` for consecutive link directions of every route.

    Each packet class has buffers of its own on every link (its virtual
    channel), so it waits only on its own kind: a board whose classes take
    different routes gets one graph per class, its nodes ``(a, b, class)``.
    """
    graph = nx.DiGraph()
    split = bool(topology.split_routes())
    for cls in ROUTE_CLASSES if split else ROUTE_CLASSES[:1]:
        tag = (cls,) if split else ()
        graph.add_nodes_from(d + tag for d in topology.directions)
        for route in topology.class_routes(cls).values():
            for a, b, c in zip(route, route[1:], route[2:]):
                graph.add_edge((a, b) + tag, (b, c) + tag)
    return graph


def dependency_cycle(topology) -> tuple:
    """One cycle of link directions each waiting on the next (``((a, b), (b, c), ...)``; ``(a, b, class)``
    where the board's classes take different routes), or ``()``."""
    try:
        return tuple(edge[0] for edge in nx.find_cycle(channel_dependencies(topology)))
    except nx.NetworkXNoCycle:
        return ()


def cycle_warning(topology) -> str | None:
    """The one line ``simnuma topo check`` prints for a board whose routes admit a cyclic wait, else None."""
    cycle = dependency_cycle(topology)
    if not cycle:
        return None
    ring = " -> ".join(f"{d[0]}->{d[1]}" for d in cycle + cycle[:1])
    if len(cycle[0]) > 2:   # a board whose classes take different routes: the cycle is one class's
        ring = f"{cycle[0][2]} routes: {ring}"
    return (f"warning: the routes admit a cyclic wait among link buffers ({ring}; a cycle of the channel"
            " dependency graph): a run can deadlock when every buffer on it fills, and then stops with the"
            " cycle it found (docs/model.md, Deadlock)")
