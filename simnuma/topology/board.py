"""What the model reads of a board: :class:`Topology` (nodes, links, I/O, routes, coherence) and the
parameters of each node and link.

Routing ``shortest`` takes, among the shortest paths from a to b, the one whose sequence of node
ids is lexicographically smallest (so 0->3 on the Quartet square goes 0, 1, 3).  Entries under
``routes`` replace single pairs, as a BIOS programs its routing table; routing ``table``
requires an entry for every ordered pair.  Routing ``updown`` takes the smallest of the shortest
up*/down* paths instead, which cannot wait on each other in a cycle (both in :mod:`.routing`)."""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass

import networkx as nx

from ..errors import TopologyError
from ..yamlsrc import dump_yaml
from .memparams import DramParams
from .routing import default_route

VCS = ("request", "posted", "response", "probe")
COHERENCE_MODES = ("broadcast", "probe_filter")
ROUTING_MODES = ("shortest", "table", "updown")
# the packet classes a node's routing table routes separately, as K8's does (BKDG K8, F0x40-F0x5C: request,
# response and broadcast routes per destination): requests and posted writes, responses, probes
ROUTE_CLASSES = ("request", "response", "probe")
_ROUTE_KEY = re.compile(r"^\s*(-?\d+)\s*->\s*(-?\d+)\s*$")
_LINK_KEY = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*$")


@dataclass(frozen=True)
class NodeParams:
    """The resolved parameters of one node (socket), in internal units.

    Each field is the value of the board parameter declared with it in :mod:`simnuma.topology.params` (its
    key, kind, default and meaning are there), or its default when the board does not give it.
    """

    id: int
    cores: int
    ports: int
    window: dict  # op -> outstanding lines
    memory_bandwidth_GBps: float
    memory_efficiency: float
    memory_latency_ns: float
    memory_queue: int
    memory_release: str  # when a read's DRAM queue entry is free: data | done (simnuma.topology.memparams.RELEASES)
    sri_latency_ns: float
    sri_buffers: dict  # vc -> SRI->XBar command buffers
    sri_probe_queue: int
    mct_buffers: dict  # vc -> MCT->XBar command buffers
    xbar_latency_ns: float
    probe_lookup_ns: float
    probe_occupancy_ns: float  # how long a probe holds its XBar->SRI slot (not given: its lookup)
    hold_ns: dict  # op -> time a miss buffer stays busy after its fill (0 when not given)
    requests: int | None  # memory requests a core can keep in flight; bounds a paced thread (None: its op window)
    memory_model: str  # fifo | dram | curve (simnuma.topology.memparams)
    dram: DramParams | None  # the dram model's organisation, timings and policy
    curves: tuple | None  # the curve model's loaded-latency curves (MemoryCurve, by read share)

    @property
    def memory_sustained_GBps(self) -> float | None:
        """What the memory sustains when it is given: peak x efficiency (fifo), the most a curve reached
        (curve); None for the dram model, whose sustained bandwidth a run reports."""
        if self.memory_model == "fifo":
            return self.memory_bandwidth_GBps * self.memory_efficiency
        if self.memory_model == "curve" and self.curves:
            return max(c.max_GBps for c in self.curves)
        return None


@dataclass(frozen=True)
class LinkParams:
    """A coherent link between nodes ``a`` and ``b``; both directions.

    Each field but the ends is the value of the link parameter declared with it in :mod:`simnuma.topology.params`.
    """

    a: int
    b: int
    bandwidth_ab_GBps: float
    bandwidth_ba_GBps: float
    latency_ns: float
    buffers: dict  # vc -> receiver command buffers
    data_buffers: dict  # vc -> receiver data buffers
    count: int = 1  # links in parallel between a and b, each with these parameters
    release: str = "start"  # when the buffer a packet leaves from is free: start | end of its transmission here
    kind: str | None = None  # the board's link kind it takes parameters from (link_kinds), None for none

    def bandwidth_GBps(self, src: int, dst: int) -> float:
        """Bandwidth of the direction ``src -> dst``."""
        if (src, dst) == (self.a, self.b):
            return self.bandwidth_ab_GBps
        if (src, dst) == (self.b, self.a):
            return self.bandwidth_ba_GBps
        raise KeyError(f"link {self.a}-{self.b} has no direction {src}->{dst}")

    @property
    def directions(self) -> tuple:
        """``((a, b), (b, a))``."""
        return ((self.a, self.b), (self.b, self.a))


class Topology:
    """An immutable, validated board.

    ``nodes`` and ``links`` hold resolved parameters; ``graph`` is a frozen
    networkx graph; ``hops(a, b)`` and ``route(a, b)`` answer from precomputed
    tables.  ``to_dict()`` gives a document that loads back to an equal board.
    Two boards are equal when they describe the same hardware: the same name,
    description, node and link parameters, I/O ports, routes, coherence and
    layout, whatever the order or spelling of the file (``shortest`` routing
    equals a ``table`` holding the same routes).
    """

    __slots__ = ("name", "description", "nodes", "links", "io", "coherence", "layout",
                 "routing", "source", "_doc", "_routes", "_class_routes", "_graph", "_index", "_link_index")
    name: str
    description: str
    nodes: tuple[NodeParams, ...]
    links: tuple[LinkParams, ...]
    io: tuple
    coherence: str
    layout: dict
    routing: str
    source: str
    _doc: dict
    _routes: dict[tuple[int, int], tuple[int, ...]]
    _class_routes: dict[str, dict[tuple[int, int], tuple[int, ...]]]
    _graph: nx.Graph
    _index: dict[int, int]
    _link_index: dict[tuple[int, int], LinkParams]

    def __init__(self, doc: dict, nodes, links, routes, source: str = "<dict>"):
        """``routes``: ``{(a, b): route}`` for every class, or ``{class: {(a, b): route}}`` per class."""
        setter = object.__setattr__
        if not routes or not all(cls in ROUTE_CLASSES for cls in routes):
            routes = {cls: routes for cls in ROUTE_CLASSES}
        setter(self, "_doc", doc)
        setter(self, "name", doc["name"])
        setter(self, "description", doc.get("description", "") or "")
        setter(self, "nodes", tuple(sorted(nodes, key=lambda n: n.id)))
        setter(self, "links", tuple(links))
        setter(self, "io", tuple(entry["node"] for entry in doc.get("io") or []))
        setter(self, "coherence", doc.get("coherence") or "broadcast")
        setter(self, "routing", doc.get("routing") or "shortest")
        setter(self, "layout", {int(k): tuple(v) for k, v in (doc.get("layout") or {}).items()})
        setter(self, "source", source)
        setter(self, "_class_routes", {cls: dict(routes[cls]) for cls in ROUTE_CLASSES})
        setter(self, "_routes", self._class_routes["request"])
        setter(self, "_index", {n.id: i for i, n in enumerate(self.nodes)})
        link_index = {}
        for link in self.links:
            link_index[(link.a, link.b)] = link
            link_index[(link.b, link.a)] = link
        setter(self, "_link_index", link_index)
        graph = _graph(self.node_ids, ((link.a, link.b) for link in self.links))
        setter(self, "_graph", nx.freeze(graph))

    def __setattr__(self, key, value):
        raise AttributeError(f"Topology is immutable (tried to set {key!r})")

    def __reduce__(self):
        from .loading import topology_from_dict  # a Topology rebuilds through the loader (a cycle of modules)

        return (topology_from_dict, (self.to_dict(), self.source))

    def _key(self) -> tuple:
        """Everything that makes two boards the same hardware, in a canonical order."""
        links = {}
        for link in self.links:
            lo, hi = sorted((link.a, link.b))
            links[(lo, hi)] = (
                ((link.a, link.b, link.bandwidth_ab_GBps), (link.b, link.a, link.bandwidth_ba_GBps))
                if link.a == lo else
                ((link.b, link.a, link.bandwidth_ba_GBps), (link.a, link.b, link.bandwidth_ab_GBps)),
                link.latency_ns, sorted(link.buffers.items()), sorted(link.data_buffers.items()), link.count, link.release,
                link.kind)
        return (self.name, self.description, self.coherence, self.nodes, sorted(links.items()),
                sorted(self.io), [sorted(self._class_routes[c].items()) for c in ROUTE_CLASSES],
                sorted(self.layout.items()))

    def __eq__(self, other):
        if not isinstance(other, Topology):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self):
        return hash((self.name, len(self.nodes), len(self.links)))

    def __repr__(self):
        return f"<Topology {self.name!r}: {len(self.nodes)} nodes, {len(self.links)} links>"

    # -- queries
    @property
    def graph(self) -> nx.Graph:
        """The coherent links as a frozen undirected networkx graph on the node ids."""
        return self._graph

    @property
    def node_ids(self) -> tuple:
        """Node ids in ascending order (the order of ``nodes`` and of the hop matrix)."""
        return tuple(n.id for n in self.nodes)

    @property
    def core_node_ids(self) -> tuple:
        """The ids of the nodes with cores, ascending: where threads run (the others are memory-only nodes)."""
        return tuple(n.id for n in self.nodes if n.cores)

    @property
    def link_kinds(self) -> tuple:
        """The names of the link kinds the board's links take parameters from, each once, in link order."""
        return tuple(dict.fromkeys(link.kind for link in self.links if link.kind is not None))

    def only_link_kind(self, whose: str) -> str | None:
        """The link kind every link takes (None for none), for new links built from this board's (``whose`` links:
        a wiring's, a what-if's); TopologyError where its links are of more than one kind, between which the board
        cannot choose for them."""
        kinds = sorted({link.kind or "no kind" for link in self.links})
        if len(kinds) > 1:
            raise TopologyError(f"board {self.name!r} has links of {len(kinds)} kinds ({', '.join(kinds)}): which of"
                                f" them {whose} would take, it does not say; give a board whose links are of one kind")
        return self.links[0].kind if self.links else None

    @property
    def directions(self) -> tuple:
        """Every link direction ``(src, dst)``, two per link, in link order."""
        return tuple(d for link in self.links for d in link.directions)

    @property
    def io_ports(self) -> tuple:
        """``(node, name)`` for every I/O port; ``name`` is '' when the file gives none."""
        return tuple((entry["node"], entry.get("name") or "") for entry in self._doc.get("io") or [])

    def node(self, node_id: int) -> NodeParams:
        try:
            return self.nodes[self._index[node_id]]
        except KeyError:
            raise KeyError(f"no node {node_id!r} on board {self.name!r}") from None

    def link(self, a: int, b: int) -> LinkParams:
        try:
            return self._link_index[(a, b)]
        except KeyError:
            raise KeyError(f"no link {a!r}-{b!r} on board {self.name!r}") from None

    def _check_pair(self, a: int, b: int) -> None:
        for n in (a, b):
            if n not in self._index:
                raise KeyError(f"no node {n!r} on board {self.name!r}")

    def hops(self, a: int, b: int) -> int:
        """Number of links on the route from a to b (the route table's, not BFS)."""
        self._check_pair(a, b)
        return len(self._routes[(a, b)]) - 1 if a != b else 0

    def route(self, a: int, b: int, cls: str = "request") -> tuple:
        """The node sequence a packet of class ``cls`` (``ROUTE_CLASSES``) from a to b follows (``(a,)`` when
        a == b)."""
        self._check_pair(a, b)
        if cls not in self._class_routes:
            raise KeyError(f"no packet class {cls!r}; classes are {', '.join(ROUTE_CLASSES)}")
        if a == b:
            return (a,)
        return self._class_routes[cls][(a, b)]

    @property
    def routes(self) -> dict:
        """``{(a, b): (a, ..., b)}``: the request route of every ordered pair of different nodes."""
        return dict(self._routes)

    def class_routes(self, cls: str) -> dict:
        """``{(a, b): (a, ..., b)}``: the route of packet class ``cls`` for every ordered pair."""
        return dict(self._class_routes[cls])

    def split_routes(self) -> dict:
        """``{(a, b): {class: route}}`` for the pairs whose classes take different routes."""
        return _split_routes(self._class_routes)

    def hop_matrix(self) -> list:
        """Route hop counts; rows and columns in ``node_ids`` order."""
        ids = self.node_ids
        return [[self.hops(a, b) for b in ids] for a in ids]

    def link_count(self) -> int:
        """The board's coherent links, each of a pair in parallel (``count``) counted."""
        return sum(link.count for link in self.links)

    def diameter(self) -> int:
        """The largest route hop count on the board."""
        return max((len(r) - 1 for r in self._routes.values()), default=0)

    # -- documents
    def to_dict(self) -> dict:
        """The board as a plain document (units as text) that loads to an equal board."""
        return copy.deepcopy(self._doc)

    def to_yaml(self, header: str = "") -> str:
        """The board as YAML; ``header`` lines are written first as ``#`` comments."""
        text = dump_yaml(self.to_dict(), sort_keys=False, default_flow_style=None, width=100, allow_unicode=True)
        comments = "".join(f"# {line}".rstrip() + "\n" for line in header.splitlines())
        return comments + text

    def summary(self) -> dict:
        """Machine-readable summary for ``topo show --json``."""
        return {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "coherence": self.coherence,
            "routing": self.routing,
            "nodes": [_node_summary(n, self.io.count(n.id)) for n in self.nodes],
            "io": [{"node": node, "name": name} for node, name in self.io_ports],
            "links": [_link_summary(link) for link in self.links],
            "hops": self.hop_matrix(),
            "diameter": self.diameter(),
            "routes": {f"{a}->{b}": list(r) for (a, b), r in sorted(self._routes.items())},
            "split_routes": {f"{a}->{b}": {cls: list(r) for cls, r in entry.items()}
                             for (a, b), entry in self.split_routes().items()},
        }

    # -- variants
    def with_parameters(self, changes: dict) -> "Topology":
        """A copy with parameters changed: ``{"defaults.memory.latency": "50 ns", ...}``.

        Keys are dotted paths: ``defaults.<field>`` and ``link_defaults.<field>``
        change the whole board (node and link overrides of that field are
        dropped; a link kind that gives the field keeps it),
        ``link_kinds.<name>.<field>`` the links of one kind (their own
        overrides dropped), ``nodes.<id>.<field>`` and ``links.<a>-<b>.<field>``
        one node or link, and ``name``, ``description``, ``coherence`` or
        ``routing`` the board.  A bare number for a field with units is taken in internal
        units (ns, GB/s, GHz): ``{"link_defaults.latency": 15.0}``.
        """
        from .changes import apply_change
        from .loading import topology_from_dict

        doc = self.to_dict()
        for dotted, value in changes.items():
            apply_change(doc, str(dotted), value, self)
        return topology_from_dict(doc, source=self.source)

    def relabel(self, mapping: dict) -> "Topology":
        """The same board with node ``i`` renamed ``mapping[i]``.

        Every packet keeps its physical path: with ``shortest`` or ``updown``
        routing, pairs whose route would change under the new names get explicit
        routes.
        """
        from .loading import topology_from_dict

        m = self._check_mapping(mapping)
        doc = self.to_dict()
        for node in doc["nodes"]:
            node["id"] = m[node["id"]]
        doc["nodes"].sort(key=lambda n: n["id"])
        for link in doc.get("links") or []:
            link["a"], link["b"] = m[link["a"]], m[link["b"]]
        for entry in doc.get("io") or []:
            entry["node"] = m[entry["node"]]
        if "layout" in doc and doc["layout"]:
            doc["layout"] = {m[int(k)]: v for k, v in doc["layout"].items()}
        renamed = {cls: {(m[a], m[b]): tuple(m[x] for x in r) for (a, b), r in self._class_routes[cls].items()}
                   for cls in ROUTE_CLASSES}
        graph = nx.relabel_nodes(self._graph, m)
        forwarding = frozenset(m[n] for n in self.core_node_ids)
        doc.pop("routes", None)
        keep: dict = {}
        split = _split_routes(renamed)
        for pair, request in sorted(renamed["request"].items()):
            if pair in split:
                keep[f"{pair[0]}->{pair[1]}"] = {cls: list(r) for cls, r in split[pair].items()}
            elif self.routing == "table" or request != default_route(self.routing, graph, *pair, forwarding):
                keep[f"{pair[0]}->{pair[1]}"] = list(request)
        if keep:
            doc["routes"] = keep
        return topology_from_dict(doc, source=self.source)

    def _check_mapping(self, mapping: dict) -> dict:
        if not all(_is_id(k) and _is_id(v) for k, v in mapping.items()):
            raise TopologyError(f"relabel: node ids must be whole numbers >= 0, got {mapping!r}")
        m = dict(mapping)
        ids = set(self.node_ids)
        if set(m) != ids:
            raise TopologyError(f"relabel: the mapping must name every node exactly once; nodes are "
                                f"{sorted(ids)}, the mapping has {sorted(m)}")
        if len(set(m.values())) != len(m):
            raise TopologyError(f"relabel: two nodes would get the same id: {m}")
        return m


def _split_routes(class_routes: dict) -> dict:
    """``{(a, b): {class: route}}`` of the pairs whose classes take different routes (``class_routes``:
    ``{class: {(a, b): route}}``), in pair order."""
    out = {}
    for pair, request in sorted(class_routes["request"].items()):
        entry = {cls: class_routes[cls][pair] for cls in ROUTE_CLASSES}
        if any(r != request for r in entry.values()):
            out[pair] = entry
    return out


def _is_id(value) -> bool:
    """Whether ``value`` can be a node id: a whole number >= 0."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _graph(ids, edges) -> nx.Graph:
    g = nx.Graph()
    g.add_nodes_from(ids)
    g.add_edges_from(edges)
    return g


def _node_summary(n: NodeParams, io_ports: int) -> dict:
    return {"id": n.id, "cores": n.cores, "ports": n.ports, "io_ports": io_ports,
            "memory_GBps": n.memory_bandwidth_GBps,
            "memory_model": n.memory_model,
            "memory_sustained_GBps": (round(n.memory_sustained_GBps, 9) if n.memory_sustained_GBps is not None
                                      else None),
            "memory_latency_ns": n.memory_latency_ns}


def _link_summary(link: LinkParams) -> dict:
    return {"a": link.a, "b": link.b,
            "bandwidth_GBps": {f"{link.a}->{link.b}": link.bandwidth_ab_GBps,
                               f"{link.b}->{link.a}": link.bandwidth_ba_GBps},
            "latency_ns": link.latency_ns, "count": link.count, "kind": link.kind}
