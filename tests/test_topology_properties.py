"""Property tests of the board language on random boards.

The strategy builds random connected boards of 1..8 nodes with random ids,
parameters, per-node overrides, per-link bandwidth overrides, I/O ports,
explicit routes and layouts, writes them as YAML text and loads them.
"""
from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simnuma import bundled
from simnuma.errors import TopologyError
from simnuma.topology import Topology, bundled_topologies, parse_topology
from simnuma.units import format_bandwidth, format_frequency, format_time
from simnuma.yamlsrc import dump_yaml, load_yaml

# ---------------------------------------------------------------- strategies

positive = st.floats(min_value=0.01, max_value=500.0, allow_nan=False, allow_infinity=False)
small_int = st.integers(min_value=1, max_value=16)
fraction = st.floats(min_value=0.05, max_value=1.0, allow_nan=False)


def time_text(draw):
    return draw(st.sampled_from([
        format_time(draw(positive)),
        f"{draw(st.integers(1, 900))} ps",
        f"{draw(st.integers(1, 5))} us",
        f"{draw(positive)}ns",
    ]))


def bandwidth_text(draw):
    return draw(st.sampled_from([
        format_bandwidth(draw(positive)),
        f"{draw(st.integers(100, 9000))} MB/s",
        f"{draw(positive)}GB/s",
    ]))


@st.composite
def node_params(draw, complete=True):
    """A full ``defaults`` section, or (complete=False) a random part of one for an override."""
    sections = {
        "cores": lambda: draw(st.integers(1, 8)),
        "core": lambda: {"window": {op: draw(small_int) for op in "rwt"}},
        "memory": lambda: {"bandwidth": bandwidth_text(draw), "efficiency": draw(fraction),
                           "latency": time_text(draw), "queue": draw(small_int)},
        "sri": lambda: {"latency": time_text(draw),
                        "buffers": {vc: draw(small_int) for vc in ("request", "posted", "response")},
                        "probe_queue": draw(small_int)},
        "mct": lambda: {"buffers": {"response": draw(small_int), "probe": draw(small_int)}},
        "xbar": lambda: {"latency": time_text(draw)},
        "probe": lambda: {"lookup": time_text(draw)},
    }
    keys = list(sections) if complete else draw(st.lists(st.sampled_from(list(sections)), unique=True,
                                                         max_size=3))
    return {key: sections[key]() for key in keys}


@st.composite
def link_rate(draw):
    """A link's rate: signalling keys, one bandwidth, or a bandwidth per direction."""
    kind = draw(st.sampled_from(["signalling", "bandwidth", "directions"]))
    if kind == "signalling":
        return {"width_bits": draw(st.sampled_from([2, 4, 8, 16, 32])),
                "clock": format_frequency(draw(st.sampled_from([0.2, 0.4, 0.8, 1.0, 1.6, 2.2, 2.6]))),
                "ddr": draw(st.booleans())}
    if kind == "bandwidth":
        return {"bandwidth": bandwidth_text(draw)}
    return {"bandwidth": {"a_to_b": bandwidth_text(draw), "b_to_a": bandwidth_text(draw)}}


@st.composite
def connected_edges(draw, ids):
    """A random spanning tree on ``ids`` plus random extra links."""
    order = draw(st.permutations(ids))
    edges = set()
    for i in range(1, len(order)):
        parent = order[draw(st.integers(0, i - 1))]
        edges.add(frozenset((order[i], parent)))
    pairs = [frozenset((a, b)) for i, a in enumerate(ids) for b in ids[i + 1:]]
    extra = draw(st.lists(st.sampled_from(pairs), max_size=len(ids))) if pairs else []
    edges.update(extra)
    return sorted(tuple(draw(st.permutations(sorted(e)))) for e in edges)


@st.composite
def board_docs(draw, max_nodes=8, overrides=True, explicit_routes=True):
    """A valid board document (plain data) and its graph."""
    n = draw(st.integers(1, max_nodes))
    ids = sorted(draw(st.lists(st.integers(0, 40), min_size=n, max_size=n, unique=True)))
    edges = draw(connected_edges(ids))
    graph = nx.Graph()
    graph.add_nodes_from(ids)
    graph.add_edges_from(edges)
    io_nodes = draw(st.lists(st.sampled_from(ids), max_size=3))
    needed = {i: graph.degree(i) + io_nodes.count(i) for i in ids}
    defaults = draw(node_params())
    defaults["ports"] = max(needed.values()) + draw(st.integers(0, 2)) or 1
    nodes = []
    for i in ids:
        entry = {"id": i}
        if overrides and draw(st.booleans()):
            entry.update(draw(node_params(complete=False)))
        if overrides and draw(st.integers(0, 4)) == 0:
            entry["ports"] = max(1, needed[i])
        nodes.append(entry)
    links = []
    for a, b in edges:
        link = {"a": a, "b": b}
        if overrides and draw(st.integers(0, 2)) == 0:
            link.update(draw(link_rate()))
        if overrides and draw(st.integers(0, 3)) == 0:
            link["latency"] = time_text(draw)
        links.append(link)
    doc = {
        "name": draw(st.text(alphabet="abcdefghijklmnopqrstuvwxyz-0123456789", min_size=1, max_size=12)),
        "description": draw(st.text(max_size=30)),
        "defaults": defaults,
        "link_defaults": {"latency": time_text(draw),
                          "buffers": {vc: draw(small_int) for vc in ("request", "posted", "response", "probe")},
                          **draw(link_rate())},
        "nodes": nodes,
        "links": links,
        "io": [{"node": i} if draw(st.booleans()) else {"node": i, "name": "bridge"} for i in io_nodes],
        "routing": "shortest",
        "coherence": draw(st.sampled_from(["broadcast", "probe_filter"])),
    }
    if draw(st.booleans()):
        doc["link_defaults"]["data_buffers"] = {"posted": draw(small_int), "response": draw(small_int)}
    if explicit_routes and len(ids) > 1 and draw(st.booleans()):
        doc["routes"] = draw(random_routes(graph))
    if draw(st.booleans()):
        doc["layout"] = {i: [k % 4, k // 4] for k, i in enumerate(draw(st.permutations(ids)))}
    return doc, graph


@st.composite
def random_routes(draw, graph):
    """A few explicit routes, each a random simple path between two nodes."""
    ids = sorted(graph)
    routes = {}
    for _ in range(draw(st.integers(1, 3))):
        a, b = draw(st.sampled_from([(x, y) for x in ids for y in ids if x != y]))
        paths = list(nx.all_simple_paths(graph, a, b, cutoff=4)) or [nx.shortest_path(graph, a, b)]
        routes[f"{a}->{b}"] = list(draw(st.sampled_from(paths)))
    return routes


def as_yaml(doc) -> str:
    return dump_yaml(doc, sort_keys=False, allow_unicode=True)


@st.composite
def boards(draw, **kwargs):
    doc, _ = draw(board_docs(**kwargs))
    return parse_topology(as_yaml(doc), "random.yaml")


# ---------------------------------------------------------------- properties

# generating a board draws many values; on a loaded machine that must not count as a failure
robust = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@robust
@given(boards())
def test_yaml_round_trip(topo):
    again = parse_topology(topo.to_yaml())
    assert again == topo
    assert again.to_dict() == topo.to_dict()
    assert again.hop_matrix() == topo.hop_matrix()


@robust
@given(board_docs(), st.randoms(use_true_random=False))
def test_order_and_link_orientation_do_not_matter(doc_graph, rnd):
    doc, _ = doc_graph
    topo = parse_topology(as_yaml(doc))
    shuffled = load_yaml(as_yaml(doc)).data
    rnd.shuffle(shuffled["nodes"])
    rnd.shuffle(shuffled["links"])
    for link in shuffled["links"]:
        if rnd.random() < 0.5:
            reverse_link(link, shuffled["link_defaults"])
    assert parse_topology(as_yaml(shuffled)) == topo


def reverse_link(link: dict, link_defaults: dict) -> None:
    """Swap a link's ends, and its per-direction bandwidths with them (inherited ones included)."""
    link["a"], link["b"] = link["b"], link["a"]
    own_rate = any(k in link for k in ("bandwidth", "width_bits", "clock", "ddr"))
    bw = link.get("bandwidth") if own_rate else link_defaults.get("bandwidth")
    if isinstance(bw, dict):
        link["bandwidth"] = {"a_to_b": bw["b_to_a"], "b_to_a": bw["a_to_b"]}


@robust
@given(boards(explicit_routes=False))
def test_shortest_hops_are_symmetric_bfs_distances(topo):
    distances = dict(nx.all_pairs_shortest_path_length(topo.graph))
    matrix = topo.hop_matrix()
    ids = topo.node_ids
    for i, a in enumerate(ids):
        for j, b in enumerate(ids):
            assert matrix[i][j] == matrix[j][i]
            assert matrix[i][j] == distances[a][b]


@robust
@given(boards())
def test_every_route_follows_links_to_its_destination(topo):
    for a in topo.node_ids:
        for b in topo.node_ids:
            route = topo.route(a, b)
            assert route[0] == a and route[-1] == b
            assert len(set(route)) == len(route)
            for x, y in zip(route, route[1:]):
                assert topo.graph.has_edge(x, y)
                topo.link(x, y)  # the link object exists for every hop
            assert topo.hops(a, b) == len(route) - 1


@robust
@given(boards(explicit_routes=False))
def test_shortest_routes_take_the_smallest_node_sequence(topo):
    for (a, b), route in topo.routes.items():
        candidates = sorted(tuple(p) for p in nx.all_shortest_paths(topo.graph, a, b))
        assert route == candidates[0]


@robust
@given(boards(), st.randoms(use_true_random=False))
def test_relabel_round_trips_and_keeps_every_path(topo, rnd):
    ids = list(topo.node_ids)
    new_ids = rnd.sample(range(0, 60), len(ids))
    mapping = dict(zip(ids, new_ids))
    inverse = {v: k for k, v in mapping.items()}
    renamed = topo.relabel(mapping)
    for a in ids:
        assert renamed.node(mapping[a]).cores == topo.node(a).cores
        for b in ids:
            assert renamed.route(mapping[a], mapping[b]) == tuple(mapping[x] for x in topo.route(a, b))
    for link in topo.links:
        for src, dst in link.directions:
            assert renamed.link(mapping[src], mapping[dst]).bandwidth_GBps(mapping[src], mapping[dst]) == \
                link.bandwidth_GBps(src, dst)
    assert renamed.relabel(inverse) == topo


@robust
@given(boards())
def test_summary_matches_the_board(topo):
    summary = topo.summary()
    assert [n["id"] for n in summary["nodes"]] == list(topo.node_ids)
    assert summary["hops"] == topo.hop_matrix()
    assert len(summary["routes"]) == len(topo.node_ids) * (len(topo.node_ids) - 1)
    for entry, link in zip(summary["links"], topo.links):
        assert entry["bandwidth_GBps"][f"{link.a}->{link.b}"] == link.bandwidth_ab_GBps
        assert entry["bandwidth_GBps"][f"{link.b}->{link.a}"] == link.bandwidth_ba_GBps


# ---------------------------------------------------------------- mutations

JUNK = ["", "- ", "{", "}", "[", "]", ":", "- {id: 0}", "nodes: []", "0", "-1", "1e999 ns", "0 GB/s",
        "60", "ns", "x: y", "&a", "*a", "!!python/object:os.system ls", "<<: 3", "? [1]", "\t", "\"",
        "'", "null", "~", "true", "2020-13-45", "a->b", "[0, 99]", "{a: 0, b: 0}", "latency: 3",
        "routes: {'0->1': [0, 5, 1]}", "layout: {0: [0, 0]}", "@", "%YAML 1.1", "---", "..."]


@st.composite
def mutated_texts(draw):
    doc, _ = draw(board_docs(max_nodes=4))
    lines = as_yaml(doc).splitlines()
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["delete", "change", "insert", "duplicate", "truncate", "swap"]))
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        if kind == "delete":
            del lines[i]
        elif kind == "change":
            head, sep, _ = lines[i].partition(": ")
            lines[i] = head + (sep or ": ") + draw(st.sampled_from(JUNK))
        elif kind == "insert":
            indent = " " * draw(st.sampled_from([0, 2, 4, 6]))
            lines.insert(i, indent + draw(st.sampled_from(JUNK)))
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        elif kind == "truncate":
            lines[i] = lines[i][:draw(st.integers(0, len(lines[i])))]
        else:
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines) + "\n"


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated_texts())
def test_mutated_yaml_gives_a_board_or_a_topology_error(text):
    try:
        topo = parse_topology(text, "mutated.yaml")
    except TopologyError as exc:
        assert exc.problems
        n_lines = text.count("\n") + 1
        for problem in exc.problems:
            assert problem.file == "mutated.yaml"
            assert problem.line is None or 1 <= problem.line <= n_lines
            assert str(problem).startswith("mutated.yaml")
            assert problem.message
        return
    assert isinstance(topo, Topology)
    assert parse_topology(topo.to_yaml()) == topo


@pytest.mark.parametrize("name", bundled_topologies())
def test_every_line_deletion_of_a_bundled_board(name):
    """Deleting any one line of a bundled board gives a board or a TopologyError, nothing else."""
    text = bundled.read("boards", name)[0]
    lines = text.splitlines()
    outcomes = set()
    for i in range(len(lines)):
        mutated = "\n".join(lines[:i] + lines[i + 1:]) + "\n"
        try:
            parse_topology(mutated, f"{name}-mutated.yaml")
            outcomes.add("board")
        except TopologyError as exc:
            assert all(p.file == f"{name}-mutated.yaml" for p in exc.problems)
            outcomes.add("error")
    assert outcomes == {"board", "error"}  # comment lines are harmless, value lines are not
