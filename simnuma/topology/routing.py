"""Default routes: the shortest (lexicographically smallest) and up*/down* routes a board's ``routing`` gives the
pairs its file does not route itself, keeping off memory-only nodes where they can."""
from __future__ import annotations

import networkx as nx

__all__ = ["shortest_route", "updown_route", "default_route"]


def shortest_route(g: nx.Graph, a: int, b: int) -> tuple:
    """The lexicographically smallest of the shortest paths from a to b."""
    dist = nx.single_source_shortest_path_length(g, b)
    path = [a]
    here = a
    while here != b:
        here = min(n for n in g.neighbors(here) if dist.get(n, -1) == dist[here] - 1)
        path.append(here)
    return tuple(path)


def updown_route(g: nx.Graph, a: int, b: int, within: nx.Graph | None = None, root: int | None = None) -> tuple:
    """The lexicographically smallest of the shortest up*/down* paths from a to b.

    Up*/down* routing (Schroeder et al., Autonet, 1991): the nodes are ranked by
    their distance from the lowest-numbered node (then by id); a hop towards a
    lower rank goes up, any other down, and a route never goes up after it has
    gone down.  Such routes cannot form a cycle of link directions each waiting
    on the next, on any connected board, at the price of some longer routes.
    ``within``: a part of ``g`` the route keeps to (ranked as in ``g``, so that
    every route keeps the one order), ``LookupError`` where it has none;
    ``root``: the node ranked first, if not the lowest-numbered.
    """
    if root is None:
        root = min(g.nodes)
    level = nx.single_source_shortest_path_length(g, root)
    if within is not None:
        g = within

    def up(u, v) -> bool:
        return (level[v], v) < (level[u], u)

    # distance to b from every state (node, gone down yet), by a search backwards from b
    dist = {(b, False): 0, (b, True): 0}
    frontier = [(b, False), (b, True)]
    while frontier:
        reached = []
        for v, down in frontier:
            for u in g.neighbors(v):
                if up(u, v):     # an up hop leaves and keeps the up phase
                    before = [] if down else [(u, False)]
                else:            # a down hop, from either phase, ends in the down phase
                    before = [(u, False), (u, True)] if down else []
                for state in before:
                    if state not in dist:
                        dist[state] = dist[(v, down)] + 1
                        reached.append(state)
        frontier = reached
    path, state = [a], (a, False)
    while state[0] != b:
        u, down = state
        steps = [(v, down or not up(u, v)) for v in g.neighbors(u) if not (down and up(u, v))]
        if state not in dist:
            raise LookupError(f"no up*/down* route from {a} to {b}")
        state = min((s for s in steps if dist.get(s) == dist[state] - 1), key=lambda s: (s[0], s[1]))
        path.append(state[0])
    return tuple(path)


def default_route(routing: str, g: nx.Graph, a: int, b: int, forwarding=None) -> tuple:
    """The route the ``routing`` mode gives a pair the file does not route itself.

    ``forwarding``: the nodes that pass packets on (those with cores); where some do not (memory-only nodes: a CXL
    memory or an HBM stack holds memory and routes nothing between sockets), a route passes through them only
    where the others leave no way."""
    if forwarding is None or all(n in forwarding for n in g.nodes):
        return updown_route(g, a, b) if routing == "updown" else shortest_route(g, a, b)
    root = min(forwarding, default=None)   # up*/down* ranks from a node that forwards, every pair alike
    through = g.subgraph([n for n in g.nodes if n in forwarding or n in (a, b)])
    if nx.has_path(through, a, b):
        try:
            return updown_route(g, a, b, through, root) if routing == "updown" else shortest_route(through, a, b)
        except LookupError:
            pass   # up*/down* leaves no way round the memory-only nodes
    return updown_route(g, a, b, root=root) if routing == "updown" else shortest_route(g, a, b)

