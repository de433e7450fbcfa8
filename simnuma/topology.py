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
``file:line: key.path: message``.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import networkx as nx
import yaml

from .errors import Problem, TopologyError
from .schema import LINK_OPTIONAL, LINK_SCHEMA, NODE_SCHEMA, TOP_KEYS, check_value, suggest
from .units import format_bandwidth, format_frequency, format_time
from .yamlsrc import Source, load_yaml, path_text

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
_ROUTE_KEY = re.compile(r"^\s*(-?\d+)\s*->\s*(-?\d+)\s*$")


@dataclass(frozen=True)
class NodeParams:
    """The resolved parameters of one node (socket)."""

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

    @property
    def memory_sustained_GBps(self) -> float:
        return self.memory_bandwidth_GBps * self.memory_efficiency


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
        return self.bandwidth_ab_GBps if (src, dst) == (self.a, self.b) else self.bandwidth_ba_GBps


class Topology:
    """An immutable, validated board.

    ``nodes`` and ``links`` hold resolved parameters; ``graph`` is a frozen
    networkx graph; ``hops(a, b)`` and ``route(a, b)`` answer from precomputed
    tables.  ``to_dict()`` gives a document that loads back to an equal board.
    """

    __slots__ = ("name", "description", "nodes", "links", "io", "coherence", "layout",
                 "routing", "source", "_doc", "_routes", "_hops", "_graph", "_index", "_link_index")

    def __init__(self, doc: dict, nodes, links, routes, source: str = "<dict>"):
        setter = object.__setattr__
        setter(self, "_doc", doc)
        setter(self, "name", doc["name"])
        setter(self, "description", doc.get("description", ""))
        setter(self, "nodes", tuple(nodes))
        setter(self, "links", tuple(links))
        setter(self, "io", tuple(entry["node"] for entry in doc.get("io", [])))
        setter(self, "coherence", doc.get("coherence", "broadcast"))
        setter(self, "routing", doc.get("routing", "shortest"))
        setter(self, "layout", {int(k): tuple(v) for k, v in doc.get("layout", {}).items()})
        setter(self, "source", source)
        setter(self, "_routes", dict(routes))
        setter(self, "_index", {n.id: i for i, n in enumerate(self.nodes)})
        setter(self, "_link_index", {})
        for link in self.links:
            self._link_index[(link.a, link.b)] = link
            self._link_index[(link.b, link.a)] = link
        g = nx.Graph()
        g.add_nodes_from(n.id for n in self.nodes)
        g.add_edges_from((link.a, link.b) for link in self.links)
        setter(self, "_graph", nx.freeze(g))
        lengths = dict(nx.all_pairs_shortest_path_length(g))
        setter(self, "_hops", {(a, b): lengths[a][b] for a in lengths for b in lengths[a]})

    def __setattr__(self, key, value):
        raise AttributeError(f"Topology is immutable (tried to set {key!r})")

    def __eq__(self, other):
        return isinstance(other, Topology) and self.to_dict() == other.to_dict()

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f"<Topology {self.name!r}: {len(self.nodes)} nodes, {len(self.links)} links>"

    @property
    def graph(self) -> nx.Graph:
        return self._graph

    @property
    def node_ids(self) -> tuple:
        return tuple(n.id for n in self.nodes)

    def node(self, node_id: int) -> NodeParams:
        try:
            return self.nodes[self._index[node_id]]
        except KeyError:
            raise KeyError(f"no node {node_id} on board {self.name!r}") from None

    def link(self, a: int, b: int) -> LinkParams:
        return self._link_index[(a, b)]

    def hops(self, a: int, b: int) -> int:
        """Number of links on the route from a to b (the route table's, not BFS)."""
        return len(self._routes[(a, b)]) - 1 if a != b else 0

    def bfs_hops(self, a: int, b: int) -> int:
        return self._hops[(a, b)]

    def route(self, a: int, b: int) -> tuple:
        """The node sequence a packet from a to b follows (``(a,)`` when a == b)."""
        if a == b:
            return (a,)
        return self._routes[(a, b)]

    @property
    def routes(self) -> dict:
        return dict(self._routes)

    def hop_matrix(self) -> list:
        ids = self.node_ids
        return [[self.hops(a, b) for b in ids] for a in ids]

    def to_dict(self) -> dict:
        """The board as a plain document (units as text) that loads to an equal board."""
        return copy.deepcopy(self._doc)

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=None, width=100)

    def summary(self) -> dict:
        """Machine-readable summary for ``topo show --json``."""
        links = []
        for link in self.links:
            links.append({
                "a": link.a, "b": link.b,
                "bandwidth_GBps": {f"{link.a}->{link.b}": link.bandwidth_ab_GBps,
                                   f"{link.b}->{link.a}": link.bandwidth_ba_GBps},
                "latency_ns": link.latency_ns,
            })
        return {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "coherence": self.coherence,
            "routing": self.routing,
            "nodes": [{"id": n.id, "cores": n.cores, "ports": n.ports,
                       "memory_GBps": n.memory_bandwidth_GBps,
                       "memory_sustained_GBps": n.memory_sustained_GBps} for n in self.nodes],
            "io": list(self.io),
            "links": links,
            "hops": self.hop_matrix(),
            "routes": {f"{a}->{b}": list(r) for (a, b), r in sorted(self._routes.items())},
        }

    def with_parameters(self, changes: dict) -> "Topology":
        """A copy with parameters changed: ``{"defaults.memory.latency": "50 ns", ...}``.

        Keys are dotted paths into the document; node overrides of the same
        field are replaced too, so the change applies to the whole board.
        """
        doc = self.to_dict()
        for dotted, value in changes.items():
            parts = dotted.split(".")
            _set_path(doc, parts, value)
            if parts[0] == "defaults":
                for node in doc["nodes"]:
                    _drop_path(node, parts[1:])
            elif parts[0] == "link_defaults":
                for link in doc.get("links", []):
                    _drop_path(link, parts[1:])
        return topology_from_dict(doc, source=self.source)

    def relabel(self, mapping: dict) -> "Topology":
        """The same board with node ``i`` renamed ``mapping[i]``; routes are kept as a table."""
        doc = self.to_dict()
        m = {int(k): int(v) for k, v in mapping.items()}
        for node in doc["nodes"]:
            node["id"] = m[node["id"]]
        doc["nodes"].sort(key=lambda n: n["id"])
        for link in doc.get("links", []):
            link["a"], link["b"] = m[link["a"]], m[link["b"]]
            bw = link.get("bandwidth")
            if isinstance(bw, dict) and {"a_to_b", "b_to_a"} <= set(bw):
                pass  # direction names stay attached to a and b
        for entry in doc.get("io", []):
            entry["node"] = m[entry["node"]]
        doc["routing"] = "table"
        doc["routes"] = {f"{m[a]}->{m[b]}": [m[x] for x in r] for (a, b), r in self._routes.items()}
        if "layout" in doc:
            doc["layout"] = {m[int(k)]: v for k, v in doc["layout"].items()}
        return topology_from_dict(doc, source=self.source)


def _set_path(doc, parts, value):
    for p in parts[:-1]:
        doc = doc.setdefault(p, {})
    doc[parts[-1]] = value


def _drop_path(doc, parts):
    for p in parts[:-1]:
        if not isinstance(doc, dict) or p not in doc:
            return
        doc = doc[p]
    if isinstance(doc, dict):
        doc.pop(parts[-1], None)


# ---------------------------------------------------------------- loading

def bundled_topologies() -> list:
    """Names of the boards that ship with simnuma."""
    folder = resources.files("simnuma") / "topologies"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml"))


def _bundled_text(name: str):
    folder = resources.files("simnuma") / "topologies"
    entry = folder / f"{name}.yaml"
    if entry.is_file():
        return entry.read_text(encoding="utf-8"), f"{name}.yaml"
    return None


def load_topology(name_or_path) -> Topology:
    """Load a bundled board by name (``quartet``) or a board file by path."""
    if isinstance(name_or_path, Topology):
        return name_or_path
    text_name = str(name_or_path)
    path = Path(text_name)
    if path.suffix in (".yaml", ".yml") or path.exists() or "/" in text_name:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise TopologyError([Problem(text_name, None, "", f"cannot read board file: {exc.strerror}")]) from None
        return parse_topology(text, text_name)
    bundled = _bundled_text(text_name)
    if bundled is None:
        names = ", ".join(bundled_topologies())
        raise TopologyError([Problem(text_name, None, "",
                                     f"no such board file or bundled board; bundled boards: {names}")])
    return parse_topology(bundled[0], bundled[1])


def parse_topology(text: str, file: str = "<string>") -> Topology:
    src = load_yaml(text, file)
    if src.problems and src.data is None:
        raise TopologyError(src.problems)
    return _build(src)


def topology_from_dict(doc: dict, source: str = "<dict>") -> Topology:
    """Validate a plain document (as ``to_dict`` gives) into a Topology."""
    text = yaml.safe_dump(doc, sort_keys=False)
    return parse_topology(text, source)


def _build(src: Source) -> Topology:
    v = _Validator(src)
    topo = v.run()
    if v.problems:
        v.problems.sort(key=lambda p: (p.line or 0))
        raise TopologyError(v.problems)
    return topo


class _Validator:
    def __init__(self, src: Source):
        self.src = src
        self.problems: list = list(src.problems)

    def err(self, path, message):
        self.problems.append(self.src.problem(tuple(path), message))

    # -- generic helpers
    def check_keys(self, mapping, valid, path):
        if not isinstance(mapping, dict):
            self.err(path, f"expected a mapping, got {type(mapping).__name__}")
            return False
        for key in mapping:
            if key not in valid:
                self.err(tuple(path) + (key,), suggest(key, valid))
        return True

    def check_schema(self, mapping, schema, path):
        """Check keys and values of a (possibly partial) parameter mapping."""
        if not self.check_keys(mapping, schema, path):
            return
        for key, value in mapping.items():
            if key not in schema:
                continue
            kind = schema[key]
            sub = tuple(path) + (key,)
            if isinstance(kind, dict):
                self.check_schema(value, kind, sub)
            elif kind == "bandwidth_spec":
                self.check_bandwidth_spec(value, sub)
            else:
                try:
                    check_value(kind, value)
                except ValueError as exc:
                    self.err(sub, str(exc))

    def check_bandwidth_spec(self, value, path):
        if isinstance(value, dict):
            if not self.check_keys(value, ("a_to_b", "b_to_a"), path):
                return
            for key in ("a_to_b", "b_to_a"):
                if key not in value:
                    self.err(path, f"missing {key!r} (a per-direction bandwidth needs both directions)")
                else:
                    try:
                        check_value("bandwidth", value[key])
                    except ValueError as exc:
                        self.err(tuple(path) + (key,), str(exc))
        else:
            try:
                check_value("bandwidth", value)
            except ValueError as exc:
                self.err(path, str(exc))

    def resolve(self, base, override, schema, path, owner, optional=()):
        """Merge ``override`` over ``base``; report missing leaves; return internal values."""
        out = {}
        for key, kind in schema.items():
            b = base.get(key) if isinstance(base, dict) else None
            o = override.get(key) if isinstance(override, dict) else None
            if isinstance(kind, dict):
                sub_optional = tuple(kind) if key in optional else ()
                out[key] = self.resolve(b or {}, o or {}, kind, tuple(path) + (key,), owner, sub_optional)
                continue
            value = o if o is not None else b
            if value is None:
                if key not in optional:
                    self.err(tuple(path) + (key,),
                             f"missing for {owner} (set it in the defaults or on the {owner.split()[0]})")
                out[key] = None
                continue
            if kind == "bandwidth_spec":
                if isinstance(value, dict):
                    try:
                        out[key] = (check_value("bandwidth", value.get("a_to_b")),
                                    check_value("bandwidth", value.get("b_to_a")))
                    except ValueError:
                        out[key] = None
                else:
                    try:
                        bw = check_value("bandwidth", value)
                        out[key] = (bw, bw)
                    except ValueError:
                        out[key] = None
                continue
            try:
                out[key] = check_value(kind, value)
            except ValueError:
                out[key] = None  # already reported by check_schema
        return out

    # -- the document
    def run(self):
        data = self.src.data
        if not isinstance(data, dict):
            self.err((), "a board description must be a mapping with at least 'name', 'defaults', 'nodes' and 'links'")
            return None
        self.check_keys(data, TOP_KEYS, ())
        name = data.get("name")
        if name is None:
            self.err((), "missing 'name'")
        elif not isinstance(name, str) or not name.strip():
            self.err(("name",), f"expected a non-empty name, got {name!r}")
        if "description" in data and not isinstance(data["description"], str):
            self.err(("description",), "expected text")
        defaults = data.get("defaults", {})
        if defaults is None:
            defaults = {}
        self.check_schema(defaults, NODE_SCHEMA, ("defaults",))
        link_defaults = data.get("link_defaults", {}) or {}
        self.check_schema(link_defaults, LINK_SCHEMA, ("link_defaults",))

        nodes = self.nodes(data, defaults if isinstance(defaults, dict) else {})
        ids = [n.id for n in nodes] if nodes is not None else []
        links = self.links(data, link_defaults if isinstance(link_defaults, dict) else {}, set(ids))
        io = self.io(data, set(ids))
        if nodes:
            self.ports(nodes, links, io, data)
        coherence = data.get("coherence", "broadcast")
        if coherence not in ("broadcast", "probe_filter"):
            self.err(("coherence",), f"expected 'broadcast' or 'probe_filter', got {coherence!r}")
        self.layout(data, set(ids))
        if self.problems or not nodes:
            return None
        g = nx.Graph()
        g.add_nodes_from(ids)
        g.add_edges_from((l.a, l.b) for l in links)
        if len(ids) > 1 and not nx.is_connected(g):
            parts = sorted(sorted(c) for c in nx.connected_components(g))
            self.err(("links",), f"the board is disconnected: {' | '.join(str(p) for p in parts)}")
            return None
        routes = self.routes(data, g, ids)
        if self.problems:
            return None
        return Topology(data, nodes, links, routes, source=self.src.file)

    def nodes(self, data, defaults):
        raw = data.get("nodes")
        if raw is None:
            self.err((), "missing 'nodes'")
            return None
        if not isinstance(raw, list) or not raw:
            self.err(("nodes",), "expected a non-empty list of nodes such as [{id: 0}, {id: 1}]")
            return None
        seen = {}
        out = []
        for i, entry in enumerate(raw):
            path = ("nodes", i)
            if not isinstance(entry, dict):
                self.err(path, f"expected a mapping such as {{id: {i}}}, got {entry!r}")
                continue
            self.check_keys(entry, ("id",) + tuple(NODE_SCHEMA), path)
            nid = entry.get("id")
            if isinstance(nid, bool) or not isinstance(nid, int) or nid < 0:
                self.err(path + ("id",), f"expected a node id (a whole number >= 0), got {nid!r}")
                continue
            if nid in seen:
                self.err(path + ("id",), f"duplicate node {nid} (first at nodes[{seen[nid]}])")
                continue
            seen[nid] = i
            override = {k: v for k, v in entry.items() if k != "id"}
            self.check_schema(override, NODE_SCHEMA, path)
            r = self.resolve(defaults, override, NODE_SCHEMA, path, f"node {nid}")
            try:
                out.append(NodeParams(
                    id=nid, cores=r["cores"], ports=r["ports"], window=dict(r["core"]["window"]),
                    memory_bandwidth_GBps=r["memory"]["bandwidth"],
                    memory_efficiency=r["memory"]["efficiency"],
                    memory_latency_ns=r["memory"]["latency"], memory_queue=r["memory"]["queue"],
                    sri_latency_ns=r["sri"]["latency"], sri_buffers=dict(r["sri"]["buffers"]),
                    sri_probe_queue=r["sri"]["probe_queue"], mct_buffers=dict(r["mct"]["buffers"]),
                    xbar_latency_ns=r["xbar"]["latency"], probe_lookup_ns=r["probe"]["lookup"],
                ))
            except (KeyError, TypeError):  # pragma: no cover - reported above
                pass
        return out

    def links(self, data, link_defaults, ids):
        raw = data.get("links", [])
        if raw is None:
            raw = []
        if not isinstance(raw, list):
            self.err(("links",), "expected a list of links such as [{a: 0, b: 1}]")
            return []
        out = []
        seen = {}
        for i, entry in enumerate(raw):
            path = ("links", i)
            if not isinstance(entry, dict):
                self.err(path, f"expected a mapping such as {{a: 0, b: 1}}, got {entry!r}")
                continue
            self.check_keys(entry, ("a", "b") + tuple(LINK_SCHEMA), path)
            ends = []
            for end in ("a", "b"):
                nid = entry.get(end)
                if nid is None:
                    self.err(path, f"missing {end!r} (the link's end nodes)")
                elif isinstance(nid, bool) or not isinstance(nid, int) or nid not in ids:
                    self.err(path + (end,), f"unknown node {nid!r}; nodes are {sorted(ids)}")
                else:
                    ends.append(nid)
            override = {k: v for k, v in entry.items() if k not in ("a", "b")}
            self.check_schema(override, LINK_SCHEMA, path)
            if len(ends) != 2:
                continue
            a, b = ends
            if a == b:
                self.err(path, f"self link: a link must join two different nodes, got {a}-{b}")
                continue
            key = frozenset((a, b))
            if key in seen:
                self.err(path, f"duplicate link {a}-{b} (first at links[{seen[key]}])")
                continue
            seen[key] = i
            r = self.resolve(link_defaults, override, LINK_SCHEMA, path, f"link {a}-{b}",
                             optional=LINK_OPTIONAL)
            bw = r["bandwidth"]
            if bw is None:
                width, clock, ddr = r["width_bits"], r["clock"], r["ddr"]
                if width is None or clock is None or ddr is None:
                    if not any(p.path.startswith(path_text(path)) for p in self.problems):
                        self.err(path, "set either 'bandwidth' or all of 'width_bits', 'clock' and 'ddr'"
                                       " (here or in link_defaults)")
                    continue
                per_dir = width / 8 * clock * (2 if ddr else 1)
                bw = (per_dir, per_dir)
            buffers = r["buffers"]
            if any(v is None for v in buffers.values()):
                continue
            data_buffers = {vc: (r["data_buffers"][vc] if r["data_buffers"][vc] is not None else buffers[vc])
                            for vc in ("posted", "response")}
            if r["latency"] is None:
                continue
            out.append(LinkParams(a=a, b=b, bandwidth_ab_GBps=bw[0], bandwidth_ba_GBps=bw[1],
                                  latency_ns=r["latency"], buffers=dict(buffers), data_buffers=data_buffers))
        return out

    def io(self, data, ids):
        raw = data.get("io", [])
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
            nid = entry.get("node")
            if isinstance(nid, bool) or not isinstance(nid, int) or nid not in ids:
                self.err(path + ("node",), f"unknown node {nid!r}; nodes are {sorted(ids)}")
                continue
            if "name" in entry and not isinstance(entry["name"], str):
                self.err(path + ("name",), "expected text")
            out.append(nid)
        return out

    def ports(self, nodes, links, io, data):
        used = {n.id: 0 for n in nodes}
        for link in links:
            used[link.a] += 1
            used[link.b] += 1
        for nid in io:
            used[nid] += 1
        for i, node in enumerate(nodes):
            if node.ports is not None and used[node.id] > node.ports:
                n_links = sum(1 for l in links if node.id in (l.a, l.b))
                n_io = sum(1 for x in io if x == node.id)
                self.err(("nodes", self._node_pos(data, node.id)),
                         f"node {node.id} has {node.ports} ports but uses {used[node.id]}"
                         f" ({n_links} coherent links + {n_io} I/O ports)")

    @staticmethod
    def _node_pos(data, nid):
        for i, entry in enumerate(data.get("nodes", [])):
            if isinstance(entry, dict) and entry.get("id") == nid:
                return i
        return 0

    def layout(self, data, ids):
        raw = data.get("layout")
        if raw is None:
            return
        if not isinstance(raw, dict):
            self.err(("layout",), "expected a mapping from node id to [x, y]")
            return
        for key, value in raw.items():
            path = ("layout", key)
            if key not in ids:
                self.err(path, f"unknown node {key!r}; nodes are {sorted(ids)}")
            if (not isinstance(value, list) or len(value) != 2
                    or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value)):
                self.err(path, f"expected a position [x, y], got {value!r}")

    def routes(self, data, g, ids):
        mode = data.get("routing", "shortest")
        if mode not in ("shortest", "table"):
            self.err(("routing",), f"expected 'shortest' or 'table', got {mode!r}")
            return {}
        raw = data.get("routes", {}) or {}
        if not isinstance(raw, dict):
            self.err(("routes",), "expected a mapping such as {\"0->3\": [0, 1, 3]}")
            return {}
        given = {}
        for key, path_nodes in raw.items():
            kpath = ("routes", key)
            m = _ROUTE_KEY.match(str(key))
            if not m:
                self.err(kpath, f"expected a key of the form 'a->b', got {key!r}")
                continue
            a, b = int(m.group(1)), int(m.group(2))
            if a not in ids or b not in ids:
                self.err(kpath, f"unknown node in {key!r}; nodes are {sorted(ids)}")
                continue
            if a == b:
                self.err(kpath, "a route must join two different nodes")
                continue
            if (not isinstance(path_nodes, list) or not path_nodes
                    or not all(isinstance(x, int) and not isinstance(x, bool) for x in path_nodes)):
                self.err(kpath, f"expected a list of node ids such as [{a}, ..., {b}], got {path_nodes!r}")
                continue
            if path_nodes[0] != a:
                self.err(kpath, f"route must start at {a}, starts at {path_nodes[0]}")
                continue
            if path_nodes[-1] != b:
                self.err(kpath, f"route does not reach its destination {b}: ends at {path_nodes[-1]}")
                continue
            bad = [(x, y) for x, y in zip(path_nodes, path_nodes[1:]) if not g.has_edge(x, y)]
            if bad:
                x, y = bad[0]
                self.err(kpath, f"route does not follow links: there is no link {x}-{y}")
                continue
            if len(set(path_nodes)) != len(path_nodes):
                self.err(kpath, f"route visits a node twice: {path_nodes}")
                continue
            given[(a, b)] = tuple(path_nodes)
        routes = {}
        missing = []
        for a in ids:
            for b in ids:
                if a == b:
                    continue
                if (a, b) in given:
                    routes[(a, b)] = given[(a, b)]
                elif mode == "table":
                    missing.append(f"{a}->{b}")
                else:
                    routes[(a, b)] = shortest_route(g, a, b)
        if missing:
            self.err(("routes",), f"routing 'table' needs a route for every pair; missing: {', '.join(missing)}")
        return routes


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
    if link.bandwidth_ab_GBps == link.bandwidth_ba_GBps:
        return format_bandwidth(link.bandwidth_ab_GBps)
    return f"{format_bandwidth(link.bandwidth_ab_GBps)} / {format_bandwidth(link.bandwidth_ba_GBps)}"


__all__ += ["shortest_route", "topology_from_dict", "format_link_bandwidth", "format_time", "format_frequency"]
