"""The board validator: every section of a board file checked, every problem reported with its line."""
from __future__ import annotations

import math

import networkx as nx

from .memparams import MemoryParamError
from .params import needed_memory_keys
from .schema import (
    LINK_OPTIONAL,
    LINK_RATE_KEYS,
    LINK_SCHEMA,
    NODE_OPTIONAL,
    NODE_SCHEMA,
    TOP_KEYS,
)
from .board import _ROUTE_KEY, COHERENCE_MODES, ROUTE_CLASSES, ROUTING_MODES, Topology, _graph
from .routing import default_route
from .kinds import _LinkKinds, _over_kind
from ..yamlsrc import document_kind
from .helpers import (
    _AnyNode,
    _bandwidth_pair,
    _gives,
    _link_params,
    _listing,
    _node_params,
    _plural,
)

# ---------------------------------------------------------------- validation

class _Validator(_LinkKinds):
    """Checks one document; collects every problem in ``problems``."""

    def run(self):
        data = self.src.data
        if not isinstance(data, dict):
            self.err((), "a board description must be a mapping with at least 'name', 'defaults',"
                         " 'nodes' and 'links'")
            return None
        kind = document_kind(data)
        if kind not in (None, "a board"):
            self.err(("format",), f"this is {kind}, not a board description")
            return None
        self.check_keys(data, TOP_KEYS, ())
        self.header(data)
        defaults = self.section(data, "defaults", NODE_SCHEMA)
        link_defaults = self.section(data, "link_defaults", LINK_SCHEMA)
        kinds = self.link_kinds(data)
        nodes = self.nodes(data, defaults)
        if nodes and all(n.cores is not None for n in nodes) and not any(n.cores for n in nodes):
            self.err(("defaults", "cores") if "cores" in (data.get("defaults") or {}) else ("nodes",),
                     "no node has a core: a board needs at least one to run threads (0 cores make a memory-only"
                     " node)")
        ids = {n.id for n in nodes} if nodes else _AnyNode()  # no usable node: 'nodes' was reported
        edges, links = self.links(data, link_defaults, ids, kinds)
        io = self.io(data, ids)
        self.ports(nodes, edges, io, data, links)
        self.choice(data, "coherence", COHERENCE_MODES, "broadcast")
        routing_ok = self.choice(data, "routing", ROUTING_MODES, "shortest")
        self.layout(data, ids)
        if not nodes:
            return None
        graph = _graph(sorted(ids), edges)
        routes = {}
        if self.connected(graph) and routing_ok:
            routes = self.routes(data, graph, sorted(ids), frozenset(n.id for n in nodes if n.cores))
        if self.problems:
            return None
        if len(links) != len(edges):  # every link without parameters must have been reported
            raise AssertionError(f"{self.src.file}: links without parameters and no problem reported")
        return Topology(data, nodes, links, routes, source=self.src.file)

    def header(self, data):
        name = data.get("name")
        if name is None:
            self.err((), "missing 'name'")
        elif not isinstance(name, str) or not name.strip() or not name.isprintable():
            self.err(("name",), f"expected a non-empty name on one line, got {name!r}")
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
        seen: dict = {}
        out: list = []
        for i, entry in enumerate(raw):
            if not isinstance(entry, dict):
                self.err(("nodes", i), f"expected a mapping such as {{id: {i}}}, got {entry!r}")
                self.bad_node_ids = True
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
        for dotted in needed_memory_keys(model, memory):   # those every model needs are reported by resolve
            parts = dotted.split(".")
            value: object = memory
            for part in parts:
                value = value.get(part) if isinstance(value, dict) else None
            if value is None and not self.has_problem_under(("defaults", "memory") + tuple(parts)):
                self.missing.setdefault(("defaults", ("memory",) + tuple(parts)), []).append(
                    (path + tuple(parts), f"{owner} (memory model {model!r})", ""))

    def node_params(self, resolved: list, data: dict) -> list:
        """NodeParams of every node; a memory whose values conflict is reported once if every node shares it."""
        out: list = []
        conflicts: dict = {}
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
        elif isinstance(nid, bool) or not isinstance(nid, int) or nid < 0:
            self.err(path + ("id",), f"expected a node id (a whole number >= 0), got {nid!r}")
        elif nid in seen:
            self.err(path + ("id",), f"duplicate node {nid} (first at nodes[{seen[nid]}])")
        else:
            seen[nid] = i
            return nid
        self.bad_node_ids = True
        return None

    # -- links
    def links(self, data, link_defaults, ids, kinds=None):
        """``(edges, params)``: the well-formed links' ends, and the fully valid links' parameters."""
        raw = data.get("links")
        if raw is None:
            return [], []
        if not isinstance(raw, list):
            self.err(("links",), "expected a list of links such as [{a: 0, b: 1}]")
            self.bad_link_ends = True
            return [], []
        edges: list = []
        out: list = []
        seen: dict = {}
        for i, entry in enumerate(raw):
            path = ("links", i)
            if not isinstance(entry, dict):
                self.err(path, f"expected a mapping such as {{a: 0, b: 1}}, got {entry!r}")
                self.bad_link_ends = True
                continue
            self.check_schema(entry, LINK_SCHEMA, path, extra=("a", "b", "kind"))
            own = {k: v for k, v in entry.items() if k not in ("a", "b", "kind")}
            kind, kind_params = self.link_kind(entry, path, kinds or {})
            override = _over_kind(kind_params, own)
            ends = self.link_ends(entry, path, ids, seen, i)
            if ends is None:
                continue
            edges.append(ends)
            link = self.link_params(ends, link_defaults, override, path, kind)
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
                if not self.follows_bad_id(nid):
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

    def link_params(self, ends, link_defaults, override, path, kind=None):
        a, b = ends
        owner = f"link {a}-{b}" + (f" of kind {kind}" if kind else "")
        r = self.resolve(link_defaults, override, LINK_SCHEMA, path, owner, ("link_defaults",),
                         optional=LINK_OPTIONAL, also=f"link_kinds.{kind}" if kind else "")
        return _link_params(a, b, r, self.link_bandwidth(link_defaults, override, r, path), kind)

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
            reported = all(self.has_problem_under(("link_defaults", k)) for k in missing)  # invalid there, said there
            if not self.has_problem_under(path) and not reported:
                self.err(path, f"'width_bits', 'clock' and 'ddr' go together; missing or invalid: "
                               f"{', '.join(missing)} (here or in link_defaults)")
            return None
        per_direction = width / 8 * clock * (2 if ddr else 1)
        return per_direction, per_direction

    def follows_bad_id(self, nid) -> bool:
        """Whether an unknown node ``nid`` (a whole number) may be the id a node entry failed to give."""
        return self.bad_node_ids and isinstance(nid, int) and not isinstance(nid, bool) and nid >= 0

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
                if not self.follows_bad_id(nid):
                    self.err(path + ("node",), f"unknown node {nid!r}; nodes are {_listing(ids)}")
                continue
            out.append(nid)
        return out

    def ports(self, nodes, edges, io, data, links=()):
        count = {(link.a, link.b): link.count for link in links}
        for node in nodes:
            n_links = sum(count.get((a, b), 1) for a, b in edges if node.id in (a, b))
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
        where: dict = {}
        unknown = False
        for key, value in raw.items():
            path = ("layout", key)
            if key not in ids:
                unknown = True     # a misnumbered position: the node it meant has none, which need not be said
                if not self.follows_bad_id(key):
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
        if unplaced and not unknown:
            self.err(("layout",), f"no position for {_plural(len(unplaced), 'node')} "
                                  f"{', '.join(str(n) for n in unplaced)} (give every node one, or no layout)")

    # -- routes
    def routes(self, data, graph, ids, forwarding=None) -> dict:
        """``{class: {(a, b): route}}`` for every packet class (``ROUTE_CLASSES``) and ordered pair; ``forwarding``:
        the nodes with cores, the others (memory-only) forward only where nothing else does (``default_route``)."""
        given = self.given_routes(data, graph, set(ids))
        mode = data.get("routing") or "shortest"
        routes: dict = {cls: {} for cls in ROUTE_CLASSES}
        missing = []
        for a in ids:
            for b in ids:
                if a == b:
                    continue
                entry = given.get((a, b), {})
                request = entry.get("request")
                if request is None and mode == "table":
                    missing.append(f"{a}->{b} (no request route)" if entry else f"{a}->{b}")
                    continue
                default = request if request is not None else (
                    default_route(mode, graph, a, b, forwarding) if mode != "table" else None)
                for cls in ROUTE_CLASSES:
                    routes[cls][(a, b)] = entry.get(cls, default)
        if missing:
            shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
            self.err(("routes",), f"routing 'table' needs a route for every ordered pair; missing: {shown}")
        return routes

    def given_routes(self, data, graph, ids) -> dict:
        """``{(a, b): {class: route}}`` as the file gives them: a list is every class's route, a mapping
        names the classes it routes (``request``, ``response``, ``probe``)."""
        raw = data.get("routes")
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            self.err(("routes",), "expected a mapping such as {\"0->3\": [0, 1, 3]}")
            return {}
        given: dict = {}
        first_key: dict = {}
        for key, value in raw.items():
            pair = self.route_pair(key, ids)
            if pair is None:
                continue
            if pair in first_key:
                self.err(("routes", key), f"a second route for {pair[0]}->{pair[1]} "
                                          f"(first given as {first_key[pair]!r})")
                continue
            first_key[pair] = key
            if isinstance(value, dict):
                entry = self.class_routes(("routes", key), pair, value, graph)
            else:
                route = self.check_route(("routes", key), pair, value, graph)
                entry = None if route is None else {cls: route for cls in ROUTE_CLASSES}
            if entry:
                given[pair] = entry
        return given

    def class_routes(self, path, pair, value: dict, graph) -> dict | None:
        """A pair's routes by packet class; the classes left out follow its request route, or without one
        the board's routing."""
        if not value:
            self.err(path, f"expected a route per packet class, such as {{request: [...], response: [...]}};"
                           f" classes are {', '.join(ROUTE_CLASSES)}")
            return None
        entry = {}
        for cls, nodes in value.items():
            if cls not in ROUTE_CLASSES:
                self.err(path + (cls,), f"unknown packet class {cls!r};"
                                        f" classes are {', '.join(ROUTE_CLASSES)}")
                continue
            route = self.check_route(path + (cls,), pair, nodes, graph)
            if route is not None:
                entry[cls] = route
        if "request" in entry:
            entry = {cls: entry.get(cls, entry["request"]) for cls in ROUTE_CLASSES}
        return entry

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

