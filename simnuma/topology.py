"""Board descriptions: YAML in, a validated and immutable :class:`Topology` out.

A board is a set of nodes (sockets), the coherent links between them, I/O
ports, a routing table and a coherence mode.  Node parameters are written once
under ``defaults`` and inherited by every node, which may override any field;
link parameters likewise under ``link_defaults``.

Routing ``shortest`` takes, among the shortest paths from a to b, the one
whose sequence of node ids is lexicographically smallest (so 0->3 on the
Quartet square goes 0, 1, 3).  Entries under ``routes`` replace single pairs,
as a BIOS programs its routing table; routing ``table`` requires an entry for
every ordered pair.

Loading reports every problem in a file at once, each as
``file:line: key.path: message``.  The language is documented in
``docs/topology.md``.
"""
from __future__ import annotations

import copy
import difflib
import math
import numbers
import re
from dataclasses import dataclass
from . import bundled
from pathlib import Path

import networkx as nx
import yaml

from .errors import Problem, TopologyError
from .memparams import MODEL_KEYS, DramParams, MemoryParamError, dram_params
from .schema import (LINK_OPTIONAL, LINK_RATE_KEYS, LINK_SCHEMA, NODE_OPTIONAL, NODE_SCHEMA, TOP_KEYS,
                     check_value, closest, schema_kind, suggest)
from .units import format_bandwidth, format_frequency, format_time
from .yamlsrc import Source, load_yaml, path_text, source_from_data

__all__ = [
    "Topology",
    "NodeParams",
    "LinkParams",
    "load_topology",
    "parse_topology",
    "bundled_topologies",
    "VCS",
]

VCS = ("request", "posted", "response", "probe")
COHERENCE_MODES = ("broadcast", "probe_filter")
ROUTING_MODES = ("shortest", "table")
_ROUTE_KEY = re.compile(r"^\s*(-?\d+)\s*->\s*(-?\d+)\s*$")
_LINK_KEY = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*$")


@dataclass(frozen=True)
class NodeParams:
    """The resolved parameters of one node (socket), in internal units."""

    id: int
    cores: int
    ports: int
    window: dict  # op -> outstanding lines
    memory_bandwidth_GBps: float
    memory_efficiency: float
    memory_latency_ns: float
    memory_queue: int
    sri_latency_ns: float
    sri_buffers: dict  # vc -> SRI->XBar command buffers
    sri_probe_queue: int
    mct_buffers: dict  # vc -> MCT->XBar command buffers
    xbar_latency_ns: float
    probe_lookup_ns: float
    hold_ns: dict = None  # op -> time a miss buffer stays busy after its fill (0 when not given)
    requests: int = None  # memory requests a core can keep in flight; bounds a paced thread (None: its op window)
    memory_model: str = "fifo"  # fifo | dram | curve (simnuma.memparams)
    dram: DramParams = None  # the dram model's organisation, timings and policy
    curves: tuple = None  # the curve model's loaded-latency curves (MemoryCurve, by read share)

    @property
    def memory_sustained_GBps(self) -> float | None:
        """What the memory sustains when it is given: peak x efficiency (fifo), the most a curve reached
        (curve); None for the dram model, whose sustained bandwidth a run reports."""
        if self.memory_model == "fifo":
            return self.memory_bandwidth_GBps * self.memory_efficiency
        if self.memory_model == "curve":
            return max(c.max_GBps for c in self.curves)
        return None


@dataclass(frozen=True)
class LinkParams:
    """A coherent link between nodes ``a`` and ``b``; both directions."""

    a: int
    b: int
    bandwidth_ab_GBps: float
    bandwidth_ba_GBps: float
    latency_ns: float
    buffers: dict  # vc -> receiver command buffers
    data_buffers: dict  # vc -> receiver data buffers

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
                 "routing", "source", "_doc", "_routes", "_hops", "_graph", "_index", "_link_index")

    def __init__(self, doc: dict, nodes, links, routes, source: str = "<dict>"):
        setter = object.__setattr__
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
        setter(self, "_routes", dict(routes))
        setter(self, "_index", {n.id: i for i, n in enumerate(self.nodes)})
        link_index = {}
        for link in self.links:
            link_index[(link.a, link.b)] = link
            link_index[(link.b, link.a)] = link
        setter(self, "_link_index", link_index)
        graph = _graph(self.node_ids, ((link.a, link.b) for link in self.links))
        setter(self, "_graph", nx.freeze(graph))
        lengths = dict(nx.all_pairs_shortest_path_length(graph))
        setter(self, "_hops", {(a, b): lengths[a][b] for a in lengths for b in lengths[a]})

    def __setattr__(self, key, value):
        raise AttributeError(f"Topology is immutable (tried to set {key!r})")

    def __reduce__(self):
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
                link.latency_ns, sorted(link.buffers.items()), sorted(link.data_buffers.items()))
        return (self.name, self.description, self.coherence, self.nodes, sorted(links.items()),
                sorted(self.io), sorted(self._routes.items()), sorted(self.layout.items()))

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

    def bfs_hops(self, a: int, b: int) -> int:
        """Length of a shortest path from a to b."""
        self._check_pair(a, b)
        return self._hops[(a, b)]

    def route(self, a: int, b: int) -> tuple:
        """The node sequence a packet from a to b follows (``(a,)`` when a == b)."""
        self._check_pair(a, b)
        if a == b:
            return (a,)
        return self._routes[(a, b)]

    @property
    def routes(self) -> dict:
        """``{(a, b): (a, ..., b)}`` for every ordered pair of different nodes."""
        return dict(self._routes)

    def hop_matrix(self) -> list:
        """Route hop counts; rows and columns in ``node_ids`` order."""
        ids = self.node_ids
        return [[self.hops(a, b) for b in ids] for a in ids]

    def diameter(self) -> int:
        """The largest route hop count on the board."""
        return max((len(r) - 1 for r in self._routes.values()), default=0)

    # -- documents
    def to_dict(self) -> dict:
        """The board as a plain document (units as text) that loads to an equal board."""
        return copy.deepcopy(self._doc)

    def to_yaml(self, header: str = "") -> str:
        """The board as YAML; ``header`` lines are written first as ``#`` comments."""
        text = yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=None, width=100,
                              allow_unicode=True)
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
        }

    # -- variants
    def with_parameters(self, changes: dict) -> "Topology":
        """A copy with parameters changed: ``{"defaults.memory.latency": "50 ns", ...}``.

        Keys are dotted paths: ``defaults.<field>`` and ``link_defaults.<field>``
        change the whole board (node and link overrides of that field are
        dropped), ``nodes.<id>.<field>`` and ``links.<a>-<b>.<field>`` one node
        or link, and ``name``, ``description``, ``coherence`` or ``routing`` the
        board.  A bare number for a field with units is taken in internal
        units (ns, GB/s, GHz): ``{"link_defaults.latency": 15.0}``.
        """
        doc = self.to_dict()
        for dotted, value in changes.items():
            _apply_change(doc, str(dotted), value, self)
        return topology_from_dict(doc, source=self.source)

    def relabel(self, mapping: dict) -> "Topology":
        """The same board with node ``i`` renamed ``mapping[i]``.

        Every packet keeps its physical path: with ``shortest`` routing, pairs
        whose tie-break would change under the new names get explicit routes.
        """
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
        new_routes = {(m[a], m[b]): tuple(m[x] for x in r) for (a, b), r in self._routes.items()}
        if self.routing == "table":
            keep = new_routes
        else:
            graph = nx.relabel_nodes(self._graph, m)
            keep = {pair: r for pair, r in new_routes.items() if r != shortest_route(graph, *pair)}
        doc.pop("routes", None)
        if keep:
            doc["routes"] = {f"{a}->{b}": list(r) for (a, b), r in sorted(keep.items())}
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
            "latency_ns": link.latency_ns}


# ---------------------------------------------------------------- with_parameters

_TOP_SCALARS = ("name", "description", "coherence", "routing")


def _apply_change(doc: dict, dotted: str, value, topo: Topology) -> None:
    """Apply one ``with_parameters`` entry to ``doc`` in place."""
    parts = dotted.split(".")
    head, rest = parts[0], parts[1:]
    if head in _TOP_SCALARS and not rest:
        doc[head] = value
        return
    if head == "defaults":
        _set_field(doc.setdefault("defaults", {}), rest, value, NODE_SCHEMA, dotted, topo)
        for node in doc["nodes"]:
            _drop_field(node, rest, is_link=False)
    elif head == "link_defaults":
        _set_field(doc.setdefault("link_defaults", {}), rest, value, LINK_SCHEMA, dotted, topo)
        for link in doc.get("links") or []:
            _drop_field(link, rest, is_link=True)
    elif head == "nodes" and rest:
        _set_field(_node_entry(doc, rest[0], topo, dotted), rest[1:], value, NODE_SCHEMA, dotted, topo)
    elif head == "links" and rest:
        _set_field(_link_entry(doc, rest[0], topo, dotted), rest[1:], value, LINK_SCHEMA, dotted, topo)
    else:
        valid = _TOP_SCALARS + ("defaults", "link_defaults", "nodes", "links")
        raise _change_error(topo, dotted, suggest(head, valid))


def _node_entry(doc: dict, key: str, topo: Topology, dotted: str) -> dict:
    for node in doc["nodes"]:
        if str(node["id"]) == key:
            return node
    raise _change_error(topo, dotted, f"no node {key}; nodes are {list(topo.node_ids)}")


def _link_entry(doc: dict, key: str, topo: Topology, dotted: str) -> dict:
    m = _LINK_KEY.match(key)
    ends = {int(m.group(1)), int(m.group(2))} if m else None
    for link in doc.get("links") or []:
        if ends == {link["a"], link["b"]}:
            return link
    names = ", ".join(f"{link.a}-{link.b}" for link in topo.links)
    raise _change_error(topo, dotted, f"no link {key}; links are {names}")


def _change_error(topo: Topology, dotted: str, message: str) -> TopologyError:
    return TopologyError([Problem(topo.source, None, "", f"with_parameters: {dotted!r}: {message}")])


def _set_field(target: dict, parts: list, value, schema: dict, dotted: str, topo: Topology) -> None:
    """Set ``parts`` in ``target``, converting numbers to text with internal units."""
    kind = schema_kind(schema, parts)
    if kind is None:
        prefix = dotted[:len(dotted) - len(".".join(parts))]
        raise _change_error(topo, dotted, "no such parameter" + _nearest_field(schema, parts, prefix))
    for p in parts[:-1]:
        child = target.get(p)
        if not isinstance(child, dict):
            child = target[p] = {}
        target = child
    target[parts[-1]] = _document_value(kind, value)
    if schema is LINK_SCHEMA and len(parts) == 1 and parts[0] in LINK_RATE_KEYS:
        # 'bandwidth' and 'width_bits'/'clock'/'ddr' are alternatives on one level
        others = ("bandwidth",) if parts[0] != "bandwidth" else ("width_bits", "clock", "ddr")
        for other in others:
            target.pop(other, None)


def _nearest_field(schema: dict, parts: list, prefix: str) -> str:
    """`` (did you mean 'defaults.memory.latency'?)`` for the closest field path of ``schema``."""
    fields = list(_field_paths(schema))
    close = difflib.get_close_matches(".".join(parts), fields, n=1, cutoff=0.6)
    return f" (did you mean {prefix + close[0]!r}?)" if close else ""


def _field_paths(schema: dict, prefix: str = ""):
    for key, kind in schema.items():
        if isinstance(kind, dict):
            yield from _field_paths(kind, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}"


def _drop_field(entry: dict, parts: list, is_link: bool) -> None:
    """Remove an override of ``parts`` (for a link rate, every rate key) from one entry."""
    if is_link and len(parts) == 1 and parts[0] in LINK_RATE_KEYS:
        for key in LINK_RATE_KEYS:
            entry.pop(key, None)
        return
    for p in parts[:-1]:
        if not isinstance(entry, dict) or p not in entry:
            return
        entry = entry[p]
    if isinstance(entry, dict):
        entry.pop(parts[-1], None)


_FORMATTERS = {"time": format_time, "bandwidth": format_bandwidth, "bandwidth_spec": format_bandwidth,
               "frequency": format_frequency}


def _document_value(kind, value):
    """``value`` as it would be written in a file (numbers in internal units get their unit)."""
    if isinstance(kind, dict):
        if not isinstance(value, dict):
            return value
        return {k: _document_value(kind.get(k, "str"), v) for k, v in value.items()}
    if kind == "bandwidth_spec" and isinstance(value, dict):
        return {k: _document_value("bandwidth", v) for k, v in value.items()}
    is_number = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if kind in _FORMATTERS and is_number:
        return _FORMATTERS[kind](float(value))
    if kind in ("int", "fraction") and is_number:
        return int(value) if kind == "int" and float(value).is_integer() else float(value)
    return value


# ---------------------------------------------------------------- loading

def bundled_topologies() -> list:
    """Names of the boards that ship with simnuma."""
    return bundled.names("boards")


def _bundled_text(name: str):
    """``(text, source name)`` of a bundled board; its source is the file name (``quartet.yaml``), as results record it."""
    found = bundled.read("boards", name)
    return (found[0], found[1].rsplit("/", 1)[-1]) if found else None


def _looks_like_path(text: str) -> bool:
    path = Path(text)
    return path.suffix in (".yaml", ".yml") or "/" in text or "\\" in text or path.exists()


def load_topology(name_or_path) -> Topology:
    """Load a bundled board by name (``quartet``) or a board file by path."""
    if isinstance(name_or_path, Topology):
        return name_or_path
    text_name = str(name_or_path)
    if _looks_like_path(text_name):
        return parse_topology(_read_board_file(text_name), text_name)
    bundled = _bundled_text(text_name)
    if bundled is None:
        names = ", ".join(bundled_topologies())
        raise TopologyError([Problem(text_name, None, "",
                                     f"no such board file or bundled board; bundled boards: {names}")])
    return parse_topology(bundled[0], bundled[1])


def _read_board_file(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise TopologyError([Problem(path, None, "", f"cannot read board file: {reason}")]) from None
    except UnicodeDecodeError as exc:
        raise TopologyError([Problem(path, None, "", f"not UTF-8 text (byte {exc.start})")]) from None


def parse_topology(text: str, file: str = "<string>") -> Topology:
    """Validate YAML text into a Topology; raise TopologyError listing every problem."""
    return _build(load_yaml(text, file))


def topology_from_dict(doc: dict, source: str = "<dict>") -> Topology:
    """Validate a plain document (as ``to_dict`` gives) into a Topology."""
    return _build(source_from_data(doc, source))


def _build(src: Source) -> Topology:
    v = _Validator(src)
    topo = v.run() if src.data is not None or not src.problems else None
    if v.problems:
        v.problems.sort(key=lambda p: (p.line or 0))
        raise TopologyError(v.problems)
    return topo


# ---------------------------------------------------------------- validation

class _Validator:
    """Checks one document; collects every problem in ``problems``."""

    def __init__(self, src: Source):
        self.src = src
        self.problems: list = list(src.problems)
        self.missing: dict = {}  # (scope, field path) -> [(owner path, owner name)]
        self.misspelt: set = set()  # key paths a "did you mean" pointed at
        self.bad_link_ends = False

    def err(self, path, message):
        self.problems.append(self.src.problem(tuple(path), message))

    def has_problem_under(self, path) -> bool:
        """Whether a problem was already reported at ``path`` or inside it."""
        prefix = path_text(tuple(path))
        return any(p.path == prefix or p.path.startswith((prefix + ".", prefix + "["))
                   for p in self.problems)

    # -- generic helpers
    def check_keys(self, mapping, valid, path) -> bool:
        if not isinstance(mapping, dict):
            self.err(path, f"expected a mapping, got {mapping!r}")
            return False
        for key in mapping:
            if key not in valid:
                self.err(tuple(path) + (key,), suggest(key, valid))
                near = closest(key, valid)
                if near is not None:
                    self.misspelt.add(tuple(path) + (near,))
        return True

    def check_schema(self, mapping, schema, path, extra=()):
        """Check keys and values of a (possibly partial) parameter mapping.

        ``extra`` keys are allowed too and left to the caller to check.
        """
        if not self.check_keys(mapping, tuple(extra) + tuple(schema), path):
            return
        if schema is LINK_SCHEMA and _gives(mapping, "bandwidth") and _gives(mapping, *LINK_RATE_KEYS[1:]):
            self.err(tuple(path) + ("bandwidth",),
                     "give either 'bandwidth' or 'width_bits'/'clock'/'ddr' here, not both")
        for key, value in mapping.items():
            if key not in schema or value is None:
                continue  # unknown keys are reported above; null means "not given"
            kind = schema[key]
            sub = tuple(path) + (key,)
            if isinstance(kind, dict):
                self.check_schema(value, kind, sub)
            elif kind == "bandwidth_spec":
                self.check_bandwidth_spec(value, sub)
            else:
                self.check_leaf(kind, value, sub)

    def check_leaf(self, kind, value, path):
        try:
            check_value(kind, value)
        except ValueError as exc:
            self.err(path, str(exc))

    def check_bandwidth_spec(self, value, path):
        if not isinstance(value, dict):
            self.check_leaf("bandwidth", value, path)
            return
        if not self.check_keys(value, ("a_to_b", "b_to_a"), path):
            return
        for key in ("a_to_b", "b_to_a"):
            if key not in value:
                self.err(path, f"missing {key!r} (a per-direction bandwidth needs both directions)")
            else:
                self.check_leaf("bandwidth", value[key], tuple(path) + (key,))

    def resolve(self, base, override, schema, path, owner, scope, optional=frozenset()):
        """Merge ``override`` over ``base`` into internal values (None where invalid).

        Values are checked by ``check_schema``; here a leaf that neither gives
        is recorded as missing, unless it or an enclosing mapping is in
        ``optional`` (dotted paths from the schema's root) or its enclosing
        mapping is itself broken.
        """
        out = {}
        broken = (base is not None and not isinstance(base, dict)) or \
                 (override is not None and not isinstance(override, dict))
        base = base if isinstance(base, dict) else {}
        override = override if isinstance(override, dict) else {}
        for key, kind in schema.items():
            b, o = base.get(key), override.get(key)
            if isinstance(kind, dict):
                sub_optional = _optional_below(optional, key)
                out[key] = self.resolve(b, o, kind, tuple(path) + (key,), owner,
                                        tuple(scope) + (key,), sub_optional)
                continue
            value = o if o is not None else b
            if value is None:
                if key not in optional and "" not in optional and not broken:
                    self.missing.setdefault((scope[0], tuple(scope[1:]) + (key,)), []).append(
                        (tuple(path) + (key,), owner))
                out[key] = None
            elif kind == "bandwidth_spec":
                out[key] = _bandwidth_pair(value)
            else:
                out[key] = _value_or_none(kind, value)
        return out

    def under_misspelt(self, path: tuple) -> bool:
        """Whether ``path`` is, or is inside, a key that a "did you mean" already pointed at."""
        return any(path[:k] in self.misspelt for k in range(1, len(path) + 1))

    def report_missing(self, scope: str, count: int, what: str):
        """One problem per field missing everywhere, else one per owner lacking it."""
        for (sc, field), owners in sorted(self.missing.items(), key=lambda kv: str(kv[0])):
            if sc != scope or self.under_misspelt((scope,) + field):
                continue
            owners = [(path, owner) for path, owner in owners if not self.under_misspelt(path)]
            if len(owners) == count and count > 1:
                self.err((scope,) + field, f"missing: every {what} needs it (set it here or on each {what})")
            else:
                for path, owner in owners:
                    self.err(path, f"missing for {owner} (set it in {scope} or on the {what})")

    # -- the document
    def run(self):
        data = self.src.data
        if not isinstance(data, dict):
            self.err((), "a board description must be a mapping with at least 'name', 'defaults',"
                         " 'nodes' and 'links'")
            return None
        self.check_keys(data, TOP_KEYS, ())
        self.header(data)
        defaults = self.section(data, "defaults", NODE_SCHEMA)
        link_defaults = self.section(data, "link_defaults", LINK_SCHEMA)
        nodes = self.nodes(data, defaults)
        ids = {n.id for n in nodes} if nodes else _AnyNode()  # no usable node: 'nodes' was reported
        edges, links = self.links(data, link_defaults, ids)
        io = self.io(data, ids)
        self.ports(nodes, edges, io, data)
        self.choice(data, "coherence", COHERENCE_MODES, "broadcast")
        routing_ok = self.choice(data, "routing", ROUTING_MODES, "shortest")
        self.layout(data, ids)
        if not nodes:
            return None
        graph = _graph(sorted(ids), edges)
        routes = {}
        if self.connected(graph) and routing_ok:
            routes = self.routes(data, graph, sorted(ids))
        if self.problems:
            return None
        if len(links) != len(edges):  # every link without parameters must have been reported
            raise AssertionError(f"{self.src.file}: links without parameters and no problem reported")
        return Topology(data, nodes, links, routes, source=self.src.file)

    def header(self, data):
        name = data.get("name")
        if name is None:
            self.err((), "missing 'name'")
        elif not isinstance(name, str) or not name.strip():
            self.err(("name",), f"expected a non-empty name, got {name!r}")
        if data.get("description") is not None and not isinstance(data["description"], str):
            self.err(("description",), "expected text")

    def section(self, data, key, schema) -> dict:
        raw = data.get(key)
        if raw is None:
            return {}
        self.check_schema(raw, schema, (key,))
        return raw if isinstance(raw, dict) else {}

    def choice(self, data, key, allowed, default) -> bool:
        value = data.get(key)
        value = default if value is None else value
        if value not in allowed:
            options = " or ".join(repr(a) for a in allowed)
            self.err((key,), f"expected {options}, got {value!r}")
            return False
        return True

    def connected(self, graph) -> bool:
        """Report a disconnected board (unless a link with a bad end makes it look so)."""
        if self.bad_link_ends:
            return False
        if len(graph) > 1 and not nx.is_connected(graph):
            parts = sorted(sorted(c) for c in nx.connected_components(graph))
            self.err(("links",), "the board is disconnected: nodes "
                     + " | ".join(", ".join(str(n) for n in p) for p in parts)
                     + " cannot reach each other")
            return False
        return True

    # -- nodes
    def nodes(self, data, defaults) -> list:
        raw = data.get("nodes")
        if raw is None:
            self.err((), "missing 'nodes'")
            return []
        if not isinstance(raw, list) or not raw:
            self.err(("nodes",), "expected a non-empty list of nodes such as [{id: 0}, {id: 1}]")
            return []
        seen, out = {}, []
        for i, entry in enumerate(raw):
            if not isinstance(entry, dict):
                self.err(("nodes", i), f"expected a mapping such as {{id: {i}}}, got {entry!r}")
                continue
            self.check_schema(entry, NODE_SCHEMA, ("nodes", i), extra=("id",))
            nid = self.node_id(entry, i, seen)
            if nid is None:
                continue
            override = {k: v for k, v in entry.items() if k != "id"}
            r = self.resolve(defaults, override, NODE_SCHEMA, ("nodes", i), f"node {nid}", ("defaults",),
                             optional=NODE_OPTIONAL)
            self.memory_keys(r["memory"], ("nodes", i, "memory"), f"node {nid}")
            out.append((nid, i, r))
        self.report_missing("defaults", len(out), "node")
        return self.node_params(out, data)

    def memory_keys(self, memory: dict, path: tuple, owner: str) -> None:
        """Record as missing what the node's memory model needs and nobody gives."""
        if self.has_problem_under(("defaults", "memory", "model")) or self.has_problem_under(path + ("model",)):
            return   # an unknown model was reported; what it would need is unknown
        model = memory["model"] or "fifo"
        needed = [k for k in MODEL_KEYS[model] if k not in ("latency", "queue")]  # those every model needs
        if model == "dram" and isinstance(memory["dram"], dict) and memory["dram"].get("scheduler") == "fr-fcfs":
            needed.append("dram.bypass_limit")
        for dotted in needed:
            parts = dotted.split(".")
            value = memory
            for part in parts:
                value = value.get(part) if isinstance(value, dict) else None
            if value is None and not self.has_problem_under(("defaults", "memory") + tuple(parts)):
                self.missing.setdefault(("defaults", ("memory",) + tuple(parts)), []).append(
                    (path + tuple(parts), f"{owner} (memory model {model!r})"))

    def node_params(self, resolved: list, data: dict) -> list:
        """NodeParams of every node; a memory whose values conflict is reported once if every node shares it."""
        out, conflicts = [], {}
        for nid, i, r in resolved:
            try:
                out.append(_node_params(nid, r))
            except MemoryParamError as exc:
                conflicts.setdefault((exc.path, exc.message), []).append(i)
        for (sub, message), positions in conflicts.items():
            where = (("defaults", "memory") if len(positions) == len(resolved) and len(resolved) > 1
                     else ("nodes", positions[0], "memory"))
            self.err(where + tuple(sub.split(".")), message)
        return out

    def node_id(self, entry, i, seen):
        """The id of ``nodes[i]``, or None (reported) when it is unusable."""
        path = ("nodes", i)
        nid = entry.get("id")
        if nid is None:
            self.err(path, f"missing 'id' (a whole number >= 0, e.g. {{id: {i}}})")
            return None
        if isinstance(nid, bool) or not isinstance(nid, int) or nid < 0:
            self.err(path + ("id",), f"expected a node id (a whole number >= 0), got {nid!r}")
            return None
        if nid in seen:
            self.err(path + ("id",), f"duplicate node {nid} (first at nodes[{seen[nid]}])")
            return None
        seen[nid] = i
        return nid

    # -- links
    def links(self, data, link_defaults, ids):
        """``(edges, params)``: the well-formed links' ends, and the fully valid links' parameters."""
        raw = data.get("links")
        if raw is None:
            return [], []
        if not isinstance(raw, list):
            self.err(("links",), "expected a list of links such as [{a: 0, b: 1}]")
            self.bad_link_ends = True
            return [], []
        edges, out, seen = [], [], {}
        for i, entry in enumerate(raw):
            path = ("links", i)
            if not isinstance(entry, dict):
                self.err(path, f"expected a mapping such as {{a: 0, b: 1}}, got {entry!r}")
                self.bad_link_ends = True
                continue
            self.check_schema(entry, LINK_SCHEMA, path, extra=("a", "b"))
            override = {k: v for k, v in entry.items() if k not in ("a", "b")}
            ends = self.link_ends(entry, path, ids, seen, i)
            if ends is None:
                continue
            edges.append(ends)
            link = self.link_params(ends, link_defaults, override, path)
            if link is not None:
                out.append(link)
        self.report_missing("link_defaults", len(edges), "link")
        return edges, out

    def link_ends(self, entry, path, ids, seen, i):
        ends = []
        for end in ("a", "b"):
            nid = entry.get(end)
            if nid is None:
                self.err(path, f"missing {end!r} (the link's end nodes)")
            elif isinstance(nid, bool) or not isinstance(nid, int) or nid not in ids:
                self.err(path + (end,), f"unknown node {nid!r}; nodes are {_listing(ids)}")
            else:
                ends.append(nid)
        if len(ends) != 2:
            self.bad_link_ends = True
            return None
        a, b = ends
        if a == b:
            self.err(path, f"self link: a link must join two different nodes, got {a}-{b}")
            return None
        key = frozenset(ends)
        if key in seen:
            self.err(path, f"duplicate link {a}-{b} (first at links[{seen[key]}])")
            return None
        seen[key] = i
        return a, b

    def link_params(self, ends, link_defaults, override, path):
        a, b = ends
        r = self.resolve(link_defaults, override, LINK_SCHEMA, path, f"link {a}-{b}", ("link_defaults",),
                         optional=LINK_OPTIONAL)
        bandwidth = self.link_bandwidth(link_defaults, override, r, path)
        buffers = r["buffers"]
        if bandwidth is None or r["latency"] is None or any(v is None for v in buffers.values()):
            return None
        data_buffers = {vc: r["data_buffers"][vc] if r["data_buffers"][vc] is not None else buffers[vc]
                        for vc in ("posted", "response")}
        return LinkParams(a=a, b=b, bandwidth_ab_GBps=bandwidth[0], bandwidth_ba_GBps=bandwidth[1],
                          latency_ns=r["latency"], buffers=dict(buffers), data_buffers=data_buffers)

    def link_bandwidth(self, link_defaults, override, r, path):
        """Per-direction bandwidth: the link's own setting wins over link_defaults."""
        for level in (override, link_defaults):
            if _gives(level, "bandwidth"):
                return _bandwidth_pair(level["bandwidth"])
            if _gives(level, *LINK_RATE_KEYS[1:]):
                return self.signalling_rate(r, path)
        if not self.has_problem_under(path) and not self.under_misspelt(("link_defaults",)):
            self.err(path, "set either 'bandwidth' or all of 'width_bits', 'clock' and 'ddr'"
                           " (here or in link_defaults)")
        return None

    def signalling_rate(self, r, path):
        """Bandwidth from width, clock and double data rate, or None (reported) when incomplete."""
        width, clock, ddr = r["width_bits"], r["clock"], r["ddr"]
        if width is None or clock is None or ddr is None:
            missing = [k for k, v in (("width_bits", width), ("clock", clock), ("ddr", ddr)) if v is None]
            if not self.has_problem_under(path):
                self.err(path, f"'width_bits', 'clock' and 'ddr' go together; missing or invalid: "
                               f"{', '.join(missing)} (here or in link_defaults)")
            return None
        per_direction = width / 8 * clock * (2 if ddr else 1)
        return per_direction, per_direction

    # -- io and ports
    def io(self, data, ids) -> list:
        raw = data.get("io")
        if raw is None:
            return []
        if not isinstance(raw, list):
            self.err(("io",), "expected a list of I/O ports such as [{node: 0}]")
            return []
        out = []
        for i, entry in enumerate(raw):
            path = ("io", i)
            if not isinstance(entry, dict):
                self.err(path, f"expected a mapping such as {{node: 0}}, got {entry!r}")
                continue
            self.check_keys(entry, ("node", "name"), path)
            if "name" in entry and not isinstance(entry["name"], str):
                self.err(path + ("name",), "expected text")
            nid = entry.get("node")
            if isinstance(nid, bool) or not isinstance(nid, int) or nid not in ids:
                self.err(path + ("node",), f"unknown node {nid!r}; nodes are {_listing(ids)}")
                continue
            out.append(nid)
        return out

    def ports(self, nodes, edges, io, data):
        for node in nodes:
            n_links = sum(1 for a, b in edges if node.id in (a, b))
            n_io = io.count(node.id)
            if node.ports is not None and n_links + n_io > node.ports:
                self.err(("nodes", self._node_pos(data, node.id)),
                         f"node {node.id} has {node.ports} {_plural(node.ports, 'port')} but uses"
                         f" {n_links + n_io}"
                         f" ({n_links} coherent {_plural(n_links, 'link')} + {n_io} I/O"
                         f" {_plural(n_io, 'port')})")

    @staticmethod
    def _node_pos(data, nid):
        for i, entry in enumerate(data.get("nodes") or []):
            if isinstance(entry, dict) and entry.get("id") == nid:
                return i
        return 0

    # -- layout
    def layout(self, data, ids):
        raw = data.get("layout")
        if raw is None:
            return
        if not isinstance(raw, dict):
            self.err(("layout",), "expected a mapping from node id to [x, y], e.g. {0: [0, 1], 1: [1, 1]}")
            return
        where = {}
        for key, value in raw.items():
            path = ("layout", key)
            if key not in ids:
                self.err(path, f"unknown node {key!r}; nodes are {_listing(ids)}")
            elif (not isinstance(value, list) or len(value) != 2
                    or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                               for x in value)):
                self.err(path, f"expected a position [x, y], got {value!r}")
            elif tuple(value) in where:
                self.err(path, f"node {key} is at the same position as node {where[tuple(value)]}")
            else:
                where[tuple(value)] = key
        unplaced = sorted(set(ids) - set(raw))
        if unplaced:
            self.err(("layout",), f"no position for {_plural(len(unplaced), 'node')} "
                                  f"{', '.join(str(n) for n in unplaced)} (give every node one, or no layout)")

    # -- routes
    def routes(self, data, graph, ids) -> dict:
        given = self.given_routes(data, graph, set(ids))
        mode = data.get("routing") or "shortest"
        routes, missing = {}, []
        for a in ids:
            for b in ids:
                if a == b:
                    continue
                if (a, b) in given:
                    routes[(a, b)] = given[(a, b)]
                elif mode == "table":
                    missing.append(f"{a}->{b}")
                else:
                    routes[(a, b)] = shortest_route(graph, a, b)
        if missing:
            shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
            self.err(("routes",), f"routing 'table' needs a route for every ordered pair; missing: {shown}")
        return routes

    def given_routes(self, data, graph, ids) -> dict:
        raw = data.get("routes")
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            self.err(("routes",), "expected a mapping such as {\"0->3\": [0, 1, 3]}")
            return {}
        given, first_key = {}, {}
        for key, path_nodes in raw.items():
            pair = self.route_pair(key, ids)
            if pair is None:
                continue
            if pair in first_key:
                self.err(("routes", key), f"a second route for {pair[0]}->{pair[1]} "
                                          f"(first given as {first_key[pair]!r})")
                continue
            first_key[pair] = key
            route = self.check_route(("routes", key), pair, path_nodes, graph)
            if route is not None:
                given[pair] = route
        return given

    def route_pair(self, key, ids):
        m = _ROUTE_KEY.match(str(key))
        if not m:
            self.err(("routes", key), f"expected a key of the form 'a->b', got {key!r}")
            return None
        a, b = int(m.group(1)), int(m.group(2))
        if a not in ids or b not in ids:
            self.err(("routes", key), f"unknown node in {key!r}; nodes are {sorted(ids)}")
            return None
        if a == b:
            self.err(("routes", key), "a route must join two different nodes")
            return None
        return a, b

    def check_route(self, path, pair, nodes, graph):
        a, b = pair
        if (not isinstance(nodes, list) or not nodes
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in nodes)):
            self.err(path, f"expected a list of node ids such as [{a}, ..., {b}], got {nodes!r}")
            return None
        problem = None
        if nodes[0] != a:
            problem = f"route must start at {a}, starts at {nodes[0]}"
        elif nodes[-1] != b:
            problem = f"route does not reach its destination {b}: ends at {nodes[-1]}"
        elif len(set(nodes)) != len(nodes):
            problem = f"route visits a node twice: {nodes}"
        else:
            missing = [(x, y) for x, y in zip(nodes, nodes[1:]) if not graph.has_edge(x, y)]
            if missing:
                problem = f"route does not follow links: there is no link {missing[0][0]}-{missing[0][1]}"
        if problem:
            self.err(path, problem)
            return None
        return tuple(nodes)


class _AnyNode(frozenset):
    """Stands for the node ids when the 'nodes' section is unusable: every whole number >= 0 passes,
    so references to nodes are not reported a second time."""

    def __contains__(self, item):
        return isinstance(item, int) and not isinstance(item, bool) and item >= 0


def _listing(ids) -> str:
    return "unknown (see the problems in 'nodes')" if isinstance(ids, _AnyNode) else str(sorted(ids))


def _optional_below(optional, key: str) -> frozenset:
    """The optional paths inside ``key``; ``""`` marks the whole mapping optional."""
    if key in optional or "" in optional:
        return frozenset({""})
    prefix = key + "."
    return frozenset(p[len(prefix):] for p in optional if p.startswith(prefix))


def _gives(mapping, *keys) -> bool:
    """Whether ``mapping`` gives a value (not null) for any of ``keys``."""
    return isinstance(mapping, dict) and any(mapping.get(k) is not None for k in keys)


def _plural(n: int, word: str) -> str:
    return word if n == 1 else word + "s"


def _value_or_none(kind, value):
    try:
        return check_value(kind, value)
    except ValueError:
        return None  # reported by check_schema


def _bandwidth_pair(value):
    """``(a_to_b, b_to_a)`` in GB/s from a bandwidth or a per-direction mapping; None if invalid."""
    if isinstance(value, dict):
        ab = _value_or_none("bandwidth", value.get("a_to_b"))
        ba = _value_or_none("bandwidth", value.get("b_to_a"))
        return (ab, ba) if ab is not None and ba is not None else None
    bw = _value_or_none("bandwidth", value)
    return (bw, bw) if bw is not None else None


def _node_params(nid: int, r: dict) -> NodeParams:
    """NodeParams from resolved values (None where a value is missing or invalid: reported elsewhere)."""
    memory = r["memory"]
    model = memory["model"] or "fifo"
    dram = curves = None
    bandwidth, efficiency = memory["bandwidth"], memory["efficiency"]
    if model == "dram":
        dram = dram_params(memory)
        bandwidth, efficiency = (dram.peak_GBps if dram is not None else None), None
    elif model == "curve":
        curves = memory["curves"]
        bandwidth, efficiency = (max(c.max_GBps for c in curves) if curves else None), None
    return NodeParams(
        id=nid, cores=r["cores"], ports=r["ports"], window=dict(r["core"]["window"]),
        memory_bandwidth_GBps=bandwidth, memory_efficiency=efficiency,
        memory_latency_ns=memory["latency"], memory_queue=memory["queue"], memory_model=model, dram=dram,
        curves=curves,
        sri_latency_ns=r["sri"]["latency"], sri_buffers=dict(r["sri"]["buffers"]),
        sri_probe_queue=r["sri"]["probe_queue"], mct_buffers=dict(r["mct"]["buffers"]),
        xbar_latency_ns=r["xbar"]["latency"], probe_lookup_ns=r["probe"]["lookup"],
        hold_ns={op: (ns or 0.0) for op, ns in r["core"]["hold"].items()}, requests=r["core"]["requests"],
    )


def shortest_route(g: nx.Graph, a: int, b: int) -> tuple:
    """The lexicographically smallest of the shortest paths from a to b."""
    dist = nx.single_source_shortest_path_length(g, b)
    path = [a]
    here = a
    while here != b:
        here = min(n for n in g.neighbors(here) if dist.get(n, -1) == dist[here] - 1)
        path.append(here)
    return tuple(path)


def format_link_bandwidth(link: LinkParams) -> str:
    """``4 GB/s`` for a symmetric link, ``a->b / b->a`` figures otherwise."""
    if link.bandwidth_ab_GBps == link.bandwidth_ba_GBps:
        return format_bandwidth(link.bandwidth_ab_GBps)
    return f"{format_bandwidth(link.bandwidth_ab_GBps)} / {format_bandwidth(link.bandwidth_ba_GBps)}"


__all__ += ["shortest_route", "topology_from_dict", "format_link_bandwidth", "format_time", "format_frequency",
            "COHERENCE_MODES", "ROUTING_MODES"]
