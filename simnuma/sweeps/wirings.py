"""Every wiring of N sockets, up to isomorphism, as boards.

A wiring is a connected graph of sockets joined by coherent links in which no
socket uses more links than it has ports, ``io`` sockets keep one port for an
I/O link, and (unless ``spare_ports``) every other port carries a link: an
unwired HyperTransport port is bandwidth left on the table.  With ``parallel``
above one, two sockets may be joined by up to that many links (a multigraph).
Two wirings that a renaming of the sockets turns into each other are the same
wiring, and only one of them is kept (:func:`wirings`).

The search enumerates labelled graphs degree sequence by degree sequence, by
backtracking over the socket pairs in order with each socket's remaining
ports as the bound, and keeps a graph unless one kept before is isomorphic to
it: the comparison is made only between graphs of equal invariants (each
socket's degree, its distances to the others and its links per neighbour),
confirmed by networkx's VF2.  Eight sockets of three ports with two I/O
sockets give 19 wirings from about 10,000 labelled graphs in a few seconds.
The search counts its steps (:data:`MOST_STEPS`) and gives up with
:class:`TooManyWirings` past them: a bound on its work, the same on every
machine, where nine sockets of four ports with spare ports would take hours.

:func:`wiring_board` makes a board of a wiring: the template board's node and
link parameters, its coherence and its routing rule (``shortest`` when the
template gives routes by table), ``io`` I/O links on sockets with a free port,
each socket with the wiring's ports, and the names of the bundled boards the
wiring is (``quartet``, ``x6440``, ``ladder8``...).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import networkx as nx

from ..errors import TopologyError

__all__ = ["Wiring", "wirings", "wiring_board", "MOST_STEPS", "TooManyWirings"]

# The search's work in steps, each about a microsecond on the two-core development machine (0.9 to 1.1 million
# steps a second whatever the search): a degree sequence or a node of the backtracking is one step, a labelled
# graph's checks (connected, its invariant) GRAPH_STEPS, each pair of sockets VF2 tries while comparing two graphs
# PAIR_STEPS.  Counting steps rather than seconds, a search gives the same answer on every machine.
GRAPH_STEPS = 120
PAIR_STEPS = 7
MOST_STEPS = 25_000_000     # about 25 s there: every documented search fits (eight sockets of three ports with
#                             spare ports, the largest, takes 20 million); nine sockets of four ports would take hours


class TooManyWirings(ValueError):
    """The search would take more than :data:`MOST_STEPS` steps."""


class _Budget:
    """The steps a search has left; :class:`TooManyWirings` naming the request and what to change when spent."""

    def __init__(self, request: dict, steps: int):
        self.left = steps
        self.request = {**request, "steps": steps}

    def spend(self, steps: int = 1) -> None:
        self.left -= steps
        if self.left < 0:
            r = self.request
            fewer = ["fewer sockets", "fewer ports"]
            if r["spare_ports"]:
                fewer.append("spare_ports: false")
            if r["parallel"] > 1:
                fewer.append("fewer links in parallel")
            raise TooManyWirings(
                f"the search for every wiring of {r['sockets']} sockets of {r['ports']} ports"
                + (" with spare ports" if r["spare_ports"] else "")
                + (f" and up to {r['parallel']} links in parallel" if r["parallel"] > 1 else "")
                + f" passed its bound of {r['steps']:,} steps unfinished; give {', '.join(fewer[:-1])} or {fewer[-1]}")


class _CountingMatcher(nx.algorithms.isomorphism.GraphMatcher):
    """networkx's VF2 matcher, charging ``budget`` for every pair of sockets it tries."""

    def __init__(self, g1, g2, budget: _Budget):
        super().__init__(g1, g2)
        self.budget = budget

    def syntactic_feasibility(self, g1_node, g2_node):
        self.budget.spend(PAIR_STEPS)
        return super().syntactic_feasibility(g1_node, g2_node)


@dataclass(frozen=True)
class Wiring:
    """One wiring: ``links`` as sorted ``(a, b)`` pairs of sockets ``0 .. sockets-1``, ``io`` the sockets that
    keep a port for I/O, and the bundled boards it is (``matches``)."""

    name: str
    sockets: int
    links: tuple              # one (a, b) per link: a pair joined by links in parallel appears that many times
    io: tuple
    matches: tuple = ()
    ports: int = 0            # each socket's ports (0: as the template board says)

    def graph(self) -> nx.MultiGraph:
        g = nx.MultiGraph()
        g.add_nodes_from(range(self.sockets))
        g.add_edges_from(self.links)
        return g

    def counts(self) -> dict:
        """``{(a, b): links in parallel}`` for every joined pair."""
        out: dict = {}
        for pair in self.links:
            out[pair] = out.get(pair, 0) + 1
        return out

    @property
    def diameter(self) -> int:
        return nx.diameter(self.graph()) if self.sockets > 1 else 0


def wirings(sockets: int, ports: int, io: int = 0, spare_ports: bool = False, parallel: int = 1,
            most_steps: int | None = None) -> list:
    """Every connected wiring of ``sockets`` sockets of ``ports`` ports, up to isomorphism (see the module).

    Ordered by link count (most first), then by diameter and the links themselves; named
    ``w<sockets>-<index>`` in that order.  Raises ValueError for an impossible request and
    :class:`TooManyWirings` when the search takes more than ``most_steps`` steps (see :data:`MOST_STEPS`).
    """
    if sockets < 1:
        raise ValueError("expected at least one socket")
    if ports < 1:
        raise ValueError("expected at least one port per socket")
    if not 0 <= io <= sockets:
        raise ValueError(f"expected 0 to {sockets} I/O sockets, got {io}")
    if parallel < 1:
        raise ValueError(f"expected at least one link per joined pair, got {parallel}")
    if sockets == 1:
        return [Wiring("w1-1", 1, (), tuple(range(io)), (), ports)]
    kept: list = []
    buckets: dict = {}
    budget = _Budget({"sockets": sockets, "ports": ports, "spare_ports": spare_ports, "parallel": parallel},
                     MOST_STEPS if most_steps is None else most_steps)
    for degrees in _degree_sequences(sockets, ports, io, spare_ports):
        budget.spend()
        for links in _labelled(degrees, budget, parallel):
            budget.spend(GRAPH_STEPS)
            g = nx.MultiGraph()
            g.add_nodes_from(range(sockets))
            g.add_edges_from(links)
            if not nx.is_connected(g):
                continue
            key = _invariant(g)
            same = buckets.setdefault(key, [])
            if any(_CountingMatcher(g, other, budget).is_isomorphic() for other in same):
                continue
            same.append(g)
            kept.append((g, degrees))
    found = []
    for g, degrees in kept:
        links = tuple(sorted(tuple(sorted(e[:2])) for e in g.edges))
        spare = [s for s in range(sockets) if g.degree(s) < ports]
        found.append((links, tuple(sorted(spare, key=lambda s: (g.degree(s), s))[:io]), g))
    found.sort(key=lambda f: (-len(f[0]), -len(set(f[0])), nx.diameter(f[2]), f[0]))
    return [Wiring(f"w{sockets}-{k + 1}", sockets, links, tuple(sorted(io_nodes)), (), ports)
            for k, (links, io_nodes, _) in enumerate(found)]


def _degree_sequences(sockets: int, ports: int, io: int, spare_ports: bool):
    """Non-increasing degree sequences a wiring may have (each a tuple, socket 0 first)."""
    if not spare_ports:
        # every port wired but one on each of ``io`` sockets
        degrees = tuple([ports] * (sockets - io) + [ports - 1] * io)
        if degrees[-1] >= 1 and sum(degrees) % 2 == 0:
            yield degrees
        return
    top = ports
    for degrees in itertools.combinations_with_replacement(range(top, 0, -1), sockets):
        if sum(degrees) % 2 or sum(degrees) < 2 * (sockets - 1):
            continue
        if sum(1 for d in degrees if d < ports) < io:
            continue          # not enough sockets with a port free for I/O
        yield degrees


def _labelled(degrees: tuple, budget: _Budget, parallel: int = 1):
    """Every labelled graph (up to ``parallel`` links per pair) whose socket ``i`` has degree ``degrees[i]``,
    as tuples of links; a step of ``budget`` for each node of the backtracking."""
    n = len(degrees)
    pairs = list(itertools.combinations(range(n), 2))
    last_pair = {a: max(k for k, (x, _) in enumerate(pairs) if x == a) for a in range(n - 1)}
    left = list(degrees)
    links: list = []

    def extend(k: int):
        budget.spend()
        if k == len(pairs):
            if not any(left):
                yield tuple(links)
            return
        a, b = pairs[k]
        for take in range(min(left[a], left[b], parallel), -1, -1):
            left[a] -= take
            left[b] -= take
            if not (k == last_pair.get(a) and left[a]):   # socket a has no pair after this one
                links.extend([(a, b)] * take)
                yield from extend(k + 1)
                del links[len(links) - take:]
            left[a] += take
            left[b] += take

    yield from extend(0)


def _invariant(g) -> tuple:
    """What isomorphic graphs share: each socket's degree, sorted distances to the others and links per
    neighbour, sorted."""
    dist = dict(nx.all_pairs_shortest_path_length(g))
    return tuple(sorted((g.degree(v), tuple(sorted(dist[v].values())),
                         tuple(sorted(g.number_of_edges(v, u) for u in g.neighbors(v)))) for v in g.nodes))


def wiring_board(template, wiring: Wiring, routing: str | None = None):
    """The board of ``wiring`` with ``template``'s parameters (a :class:`~simnuma.topology.Topology`),
    routed by ``routing`` (``shortest`` or ``updown``; default the template's rule, ``shortest`` for a table)."""
    from ..topology.loading import topology_from_dict

    doc = template.to_dict()
    own = [(n["id"], sorted(k for k in n if k != "id")) for n in doc.get("nodes") or () if len(n) > 1]
    if own:
        node, keys = own[0]
        what = "it has no cores (a memory-only node)" if "cores" in keys and template.node(node).cores == 0 \
            else f"it has its own {', '.join(keys)}"
        raise TopologyError(f"{template.name}: node {node}: {what}, and a wiring gives every socket the board's"
                            " defaults; take a board whose nodes all take the defaults (set them under 'defaults')")
    for key in ("layout", "routes", "io"):
        doc.pop(key, None)
    if routing is not None:
        doc["routing"] = routing
    elif doc.get("routing") == "table":
        doc["routing"] = "shortest"
    doc["name"] = wiring.name
    matches = f" (the wiring of {', '.join(wiring.matches)})" if wiring.matches else ""
    doc["description"] = (f"{wiring.sockets} sockets, links {', '.join(_pair_text(p, n) for p, n in wiring.counts().items())}"
                          f"{matches}, with the parameters of {template.name}")
    doc["nodes"] = [{"id": i} for i in range(wiring.sockets)]
    if wiring.ports:
        doc.setdefault("defaults", {})["ports"] = wiring.ports
    kind = template.only_link_kind("a wiring's links")
    doc["links"] = [{"a": a, "b": b, **({"count": n} if n > 1 else {}), **({"kind": kind} if kind else {})}
                    for (a, b), n in wiring.counts().items()]
    if wiring.io:
        doc["io"] = [{"node": s} for s in wiring.io]
    return topology_from_dict(doc, source=f"{template.source} (wiring {wiring.name})")


def _pair_text(pair: tuple, count: int) -> str:
    return f"{pair[0]}-{pair[1]}" + (f" x{count}" if count > 1 else "")


def named_wirings(found: list, boards) -> list:
    """``found`` with ``matches`` set: the names of ``boards`` (Topology objects) whose wiring each one is."""
    graphs = []
    for board in boards:
        g = nx.MultiGraph()
        index = {node: k for k, node in enumerate(board.node_ids)}
        g.add_nodes_from(range(len(index)))
        g.add_edges_from((index[link.a], index[link.b]) for link in board.links for _ in range(link.count))
        graphs.append((board.name, g))
    out = []
    for w in found:
        g = w.graph()
        names = tuple(name for name, other in graphs
                      if other.number_of_nodes() == w.sockets and nx.is_isomorphic(g, other))
        out.append(Wiring(w.name, w.sockets, w.links, w.io, names, w.ports))
    return out
