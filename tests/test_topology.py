"""The Topology API and the bundled boards."""
from __future__ import annotations

import copy
import pickle
import re

import networkx as nx
import pytest

from simnuma import TopologyError, bundled, bundled_topologies, load_topology, parse_topology
from simnuma.topology import LinkParams, NodeParams, Topology

EXPECTED_BOARDS = {"quartet", "x6440", "quartet-full", "ladder8", "twisted-ladder8", "dual"}


def board_text(name: str) -> str:
    return bundled.read("boards", name)[0]


# ---------------------------------------------------------------- bundled boards

def test_the_bundled_boards_are_all_there():
    assert EXPECTED_BOARDS <= set(bundled_topologies())


@pytest.mark.parametrize("name", sorted(EXPECTED_BOARDS))
def test_every_bundled_board_loads_by_name(name):
    topo = load_topology(name)
    assert topo.name == name
    assert topo.source == f"{name}.yaml"
    assert nx.is_connected(topo.graph)
    assert set(topo.layout) == set(topo.node_ids)
    for node in topo.nodes:
        used = topo.graph.degree(node.id) + topo.io.count(node.id)
        assert used <= node.ports


@pytest.mark.parametrize("name", sorted(EXPECTED_BOARDS))
def test_every_number_in_a_bundled_board_has_a_comment(name):
    """Each line of 'defaults' and 'link_defaults' that holds a number says where it comes from."""
    section = None
    for number, line in enumerate(board_text(name).splitlines(), start=1):
        if re.match(r"^\S", line):
            section = line.split(":")[0]
            continue
        value = line.split("#")[0]
        if section in ("defaults", "link_defaults") and re.search(r"\d", value):
            assert "#" in line, f"{name}.yaml:{number}: a number without a source or 'assumption': {line!r}"


def test_quartet_is_the_square_of_the_app_note():
    topo = load_topology("quartet")
    assert sorted(tuple(sorted((l.a, l.b))) for l in topo.links) == [(0, 1), (0, 2), (1, 3), (2, 3)]
    assert topo.hops(0, 3) == topo.hops(1, 2) == 2
    assert topo.route(0, 3) == (0, 1, 3)
    assert topo.link(0, 1).bandwidth_GBps(0, 1) == 4.0
    node = topo.node(0)
    assert node.memory_model == "dram" and node.memory_sustained_GBps is None  # sustained is what the DRAM lets through
    assert node.memory_bandwidth_GBps == pytest.approx(6.4)   # DDR400 on 128 bits
    assert (node.dram.channels, node.dram.ranks, node.dram.banks, node.dram.row_bytes) == (1, 2, 4, 32 * 1024)


def test_x6440_is_the_ladder_with_io_on_the_outer_sockets():
    topo = load_topology("x6440")
    assert sorted(tuple(sorted((l.a, l.b))) for l in topo.links) == [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)]
    assert sorted(topo.io) == [0, 3]
    assert topo.hops(0, 3) == 2
    assert all(topo.hops(a, b) == 1 for a in (1, 2) for b in topo.node_ids if b != a)
    assert topo.node(0).cores == 4 and topo.node(0).ports == 4
    assert topo.node(1).memory_bandwidth_GBps == pytest.approx(10.67, rel=1e-3)   # DDR2-667, two 64-bit channels


def test_what_if_boards():
    full = load_topology("quartet-full")
    assert full.diameter() == 1 and len(full.links) == 6
    assert all(full.graph.degree(n) + full.io.count(n) == 4 for n in full.node_ids)
    assert load_topology("dual").diameter() == 1
    ladder, twisted = load_topology("ladder8"), load_topology("twisted-ladder8")
    assert (ladder.diameter(), twisted.diameter()) == (4, 3)
    assert len(ladder.links) == len(twisted.links) == 10
    assert max(ladder.graph.degree(n) + ladder.io.count(n) for n in ladder.node_ids) <= 4
    assert max(twisted.graph.degree(n) + twisted.io.count(n) for n in twisted.node_ids) <= 4


def test_what_if_boards_share_quartets_sockets():
    quartet = load_topology("quartet").node(0)
    for name in ("quartet-full", "dual", "ladder8", "twisted-ladder8"):
        node = load_topology(name).node(0)
        assert node.memory_bandwidth_GBps == quartet.memory_bandwidth_GBps
        assert node.window == quartet.window
        assert node.sri_buffers == quartet.sri_buffers


# ---------------------------------------------------------------- the object

@pytest.fixture(scope="module")
def quartet() -> Topology:
    return load_topology("quartet")


def test_topology_is_immutable(quartet):
    with pytest.raises(AttributeError):
        quartet.name = "other"
    with pytest.raises(nx.NetworkXError):
        quartet.graph.add_edge(0, 3)
    quartet.to_dict()["nodes"].clear()
    assert len(quartet.nodes) == 4


def test_unknown_nodes_and_links_raise_key_errors(quartet):
    with pytest.raises(KeyError, match="no node 9"):
        quartet.hops(0, 9)
    with pytest.raises(KeyError, match="no node 9"):
        quartet.node(9)
    with pytest.raises(KeyError, match="no link 0-3"):
        quartet.link(0, 3)
    with pytest.raises(KeyError, match="no direction"):
        quartet.link(0, 1).bandwidth_GBps(0, 2)


def test_pickle_and_deepcopy_give_equal_boards(quartet):
    assert pickle.loads(pickle.dumps(quartet)) == quartet
    assert copy.deepcopy(quartet) == quartet


def test_params_field_names(quartet):
    assert {f for f in NodeParams.__dataclass_fields__} >= {
        "id", "cores", "ports", "window", "memory_bandwidth_GBps", "memory_efficiency", "memory_latency_ns",
        "memory_queue", "sri_latency_ns", "sri_buffers", "sri_probe_queue", "mct_buffers", "xbar_latency_ns",
        "probe_lookup_ns"}
    assert set(LinkParams.__dataclass_fields__) == {
        "a", "b", "bandwidth_ab_GBps", "bandwidth_ba_GBps", "latency_ns", "buffers", "data_buffers", "count", "release",
        "kind"}
    assert quartet.link(0, 1).data_buffers == {"posted": 1, "response": 6}


def test_equality_is_about_the_hardware(quartet):
    different = quartet.with_parameters({"link_defaults.latency": "21 ns"})
    assert different != quartet
    text = quartet.to_yaml()
    link_ns = quartet.link(0, 1).latency_ns
    assert f"latency: {link_ns:g} ns" in text  # the calibrated link latency
    spelled_otherwise = parse_topology(text.replace(f"latency: {link_ns:g} ns", f"latency: {link_ns / 1000:g} us"))
    assert spelled_otherwise.link(0, 1).latency_ns == pytest.approx(link_ns, rel=1e-12)
    assert spelled_otherwise.with_parameters({"link_defaults.latency": link_ns}) == quartet
    as_table = parse_topology(quartet.to_yaml().replace("routing: shortest", "routing: table\nroutes: {"
                              + ", ".join(f"'{a}->{b}': {list(r)}" for (a, b), r in quartet.routes.items())
                              + "}"))
    assert as_table.routing == "table" and as_table == quartet


def test_to_yaml_header_is_a_comment(quartet):
    text = quartet.to_yaml(header="calibrated on 2 cases\nsecond line")
    assert text.startswith("# calibrated on 2 cases\n# second line\n")
    assert parse_topology(text) == quartet


def test_summary(quartet):
    s = quartet.summary()
    assert s["name"] == "quartet"
    assert s["hops"] == [[0, 1, 1, 2], [1, 0, 2, 1], [1, 2, 0, 1], [2, 1, 1, 0]]
    assert s["links"][0] == {"a": 0, "b": 1, "bandwidth_GBps": {"0->1": 4.0, "1->0": 4.0},
                             "latency_ns": quartet.link(0, 1).latency_ns, "count": 1, "kind": None}
    assert s["routes"]["0->3"] == [0, 1, 3]
    assert s["nodes"][0]["memory_GBps"] == pytest.approx(6.4) and s["nodes"][0]["memory_model"] == "dram"
    assert s["diameter"] == 2


# ---------------------------------------------------------------- variants

def test_with_parameters_changes_the_whole_board(quartet):
    before_ns = quartet.node(0).memory_latency_ns
    changed = quartet.with_parameters({"defaults.memory.latency": "50 ns", "link_defaults.latency": 15.0,
                                       "defaults.memory.queue": 24})
    assert {n.memory_latency_ns for n in changed.nodes} == {50.0}
    assert {n.memory_queue for n in changed.nodes} == {24}
    assert {l.latency_ns for l in changed.links} == {15.0}
    assert before_ns != 50.0 and quartet.node(0).memory_latency_ns == before_ns  # the original is untouched


def test_with_parameters_drops_overrides_of_a_default():
    topo = parse_topology(load_topology("quartet").to_yaml().replace(
        "- {id: 2}", "- {id: 2, memory: {latency: 90 ns}}"))
    assert topo.node(2).memory_latency_ns == 90.0
    assert topo.with_parameters({"defaults.memory.latency": "40 ns"}).node(2).memory_latency_ns == 40.0


def test_with_parameters_on_one_node_or_link(quartet):
    changed = quartet.with_parameters({"nodes.1.cores": 4, "links.3-1.bandwidth": {"a_to_b": 2.0, "b_to_a": 3.0}})
    assert [n.cores for n in changed.nodes] == [2, 4, 2, 2]
    link = changed.link(1, 3)
    assert (link.bandwidth_GBps(1, 3), link.bandwidth_GBps(3, 1)) == (2.0, 3.0)
    assert changed.link(0, 1).bandwidth_GBps(0, 1) == 4.0


def test_with_parameters_switches_between_rate_forms(quartet):
    assert quartet.with_parameters({"link_defaults.bandwidth": "6 GB/s"}).link(0, 1).bandwidth_ab_GBps == 6.0
    faster = quartet.with_parameters({"link_defaults.clock": 2.2})
    assert faster.link(0, 1).bandwidth_ab_GBps == pytest.approx(8.8)


@pytest.mark.parametrize("changes, message", [
    ({"defaults.memory.latncy": 1}, "did you mean 'defaults.memory.latency'"),
    ({"defualts.memory.latency": 1}, "did you mean 'defaults'"),
    ({"nodes.9.cores": 1}, "no node 9"),
    ({"links.0-3.latency": "1 ns"}, "no link 0-3"),
    ({"defaults.memory.latency": -1}, "must be positive"),
    ({"defaults.memory.latency": "50"}, "a unit is required"),
])
def test_with_parameters_reports_mistakes(quartet, changes, message):
    with pytest.raises(TopologyError, match=re.escape(message)):
        quartet.with_parameters(changes)


def test_relabel_keeps_physical_paths(quartet):
    swapped = quartet.relabel({0: 3, 1: 2, 2: 1, 3: 0})
    # 0->3 went 0, 1, 3; renamed that is 3, 2, 0, although the shortest tie-break would pick 3, 1, 0
    assert swapped.route(3, 0) == (3, 2, 0)
    assert swapped.relabel({3: 0, 2: 1, 1: 2, 0: 3}) == quartet
    assert swapped.relabel({3: 0, 2: 1, 1: 2, 0: 3}).to_dict() == quartet.to_dict()


@pytest.mark.parametrize("mapping", [{0: 1, 1: 0}, {0: 1, 1: 1, 2: 2, 3: 3}, {0: "a", 1: 1, 2: 2, 3: 3},
                                     {0: -1, 1: 1, 2: 2, 3: 3}])
def test_relabel_needs_a_one_to_one_mapping(quartet, mapping):
    with pytest.raises(TopologyError, match="relabel"):
        quartet.relabel(mapping)


def test_the_example_of_the_language_reference_is_valid():
    from pathlib import Path

    doc = (Path(__file__).parent.parent / "docs" / "topology.md").read_text(encoding="utf-8")
    example = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    topo = parse_topology(example, "docs/topology.md")
    assert topo.name == "pair"
    assert topo.node(1).memory_latency_ns == 70.0 and topo.node(0).memory_latency_ns == 60.0
    assert topo.link(0, 1).bandwidth_GBps(1, 0) == 2.0
    assert topo.io_ports == ((0, "southbridge"),)
