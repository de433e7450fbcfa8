"""Every validation rule of the board language, with its message and line.

The files under tests/topology_files/ are good_line3.yaml with one mistake
each (bad_many.yaml has four); each test asserts the exact problem reported.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from simnuma.errors import TopologyError
from simnuma.topology import load_topology, parse_topology

FILES = Path(__file__).parent / "topology_files"
GOOD = (FILES / "good_line3.yaml").read_text(encoding="utf-8")


def problems_of(name: str) -> list:
    with pytest.raises(TopologyError) as info:
        load_topology(FILES / name)
    return info.value.problems


def problems_in(text: str) -> list:
    with pytest.raises(TopologyError) as info:
        parse_topology(text, "board.yaml")
    return info.value.problems


def test_the_base_fixture_is_valid():
    topo = load_topology(FILES / "good_line3.yaml")
    assert topo.node_ids == (0, 1, 2)
    assert topo.node(2).memory_latency_ns == 70.0
    assert topo.link(1, 2).bandwidth_GBps(2, 1) == 2.0
    assert topo.route(2, 0) == (2, 1, 0)


# file, line, key path, message: the one problem each bad file must give
RULES = [
    ("bad_unknown_key.yaml", 13, "defaults.memory.latncy", "unknown key (did you mean 'latency'?)"),
    ("bad_unknown_node.yaml", 36, "links[0].b", "unknown node 7; nodes are [0, 1, 2]"),
    ("bad_duplicate_node.yaml", 34, "nodes[2].id", "duplicate node 1 (first at nodes[1])"),
    ("bad_self_link.yaml", 37, "links[1]", "self link: a link must join two different nodes, got 2-2"),
    ("bad_duplicate_link.yaml", 37, "links[1]", "duplicate link 1-0 (first at links[0])"),
    ("bad_too_many_ports.yaml", 33, "nodes[1]",
     "node 1 has 1 port but uses 2 (2 coherent links + 0 I/O ports)"),
    ("bad_disconnected.yaml", 35, "links", "the board is disconnected: nodes 0, 1 | 2 cannot reach each other"),
    ("bad_zero_bandwidth.yaml", 37, "links[1].bandwidth.b_to_a", "must be positive, got '0 GB/s'"),
    ("bad_negative_latency.yaml", 29, "link_defaults.latency", "must be positive, got '-20 ns'"),
    ("bad_zero_buffers.yaml", 30, "link_defaults.buffers.response", "must be positive, got 0"),
    ("bad_unit_unknown.yaml", 13, "defaults.memory.latency",
     "unknown unit 'nsec' in '60 nsec'; expected one of: ps, ns, us, \u00b5s, \u03bcs, ms, s"),
    ("bad_bare_number.yaml", 29, "link_defaults.latency",
     "expected a time such as '60 ns', got the bare number 20 (a unit is required)"),
    ("bad_route_off_links.yaml", 42, "routes.2->0", "route does not follow links: there is no link 2-0"),
    ("bad_route_wrong_end.yaml", 42, "routes.2->0", "route does not reach its destination 0: ends at 1"),
    ("bad_route_class.yaml", 42, "routes.2->0.reply",
     "unknown packet class 'reply'; classes are request, response, probe"),
    ("bad_yaml_syntax.yaml", 34, "",
     "YAML syntax error: expected ',' or '}', but got '{' (while parsing a flow mapping that starts on line 33)"),
    ("bad_duplicate_key.yaml", 7, "defaults.cores", "duplicate key (first given on line 6)"),
    ("bad_missing_field.yaml", 10, "defaults.memory.queue",
     "missing: every node needs it (set it here or on each node)"),
]


@pytest.mark.parametrize("name, line, path, message", RULES, ids=[r[0] for r in RULES])
def test_each_rule_reports_one_problem_with_line_and_path(name, line, path, message):
    problems = problems_of(name)
    assert [(p.line, p.path, p.message) for p in problems] == [(line, path, message)]
    where = f"{FILES / name}:{line}"
    assert str(problems[0]) == (f"{where}: {path}: {message}" if path else f"{where}: {message}")


def test_every_problem_of_a_file_is_reported_at_once_in_line_order():
    problems = problems_of("bad_many.yaml")
    assert [(p.line, p.path) for p in problems] == [
        (18, "defaults.sri.probe_queue"),
        (21, "defaults.xbr"),
        (39, "io[0].node"),
        (43, "coherence"),
    ]
    assert problems[1].message == "unknown key (did you mean 'xbar'?)"
    assert problems[0].message == "expected a positive whole number, got '8 buffers'"


def test_every_rule_has_a_fixture():
    fixtures = {p.name for p in FILES.glob("bad_*.yaml")}
    assert fixtures == {r[0] for r in RULES} | {"bad_many.yaml"}


# ---------------------------------------------------------------- rules written inline

def test_misspelt_top_level_key_gets_a_suggestion():
    [problem] = problems_in(GOOD.replace("link_defaults:", "link_default:"))
    assert problem.path == "link_default"
    assert problem.message == "unknown key (did you mean 'link_defaults'?)"


def test_unknown_key_far_from_any_lists_the_valid_ones():
    [problem] = problems_in(GOOD.replace("routing: shortest", "zzz: 1\nrouting: shortest"))
    assert problem.message.startswith("unknown key; expected one of: name, description, defaults")


def test_bandwidth_and_signalling_keys_exclude_each_other():
    [problem] = problems_in(GOOD.replace("  ddr: true\n", "  ddr: true\n  bandwidth: 3 GB/s\n"))
    assert (problem.line, problem.path) == (29, "link_defaults.bandwidth")
    assert "either 'bandwidth' or 'width_bits'/'clock'/'ddr'" in problem.message


def test_incomplete_signalling_keys():
    problems = problems_in(GOOD.replace("  width_bits: 16\n", ""))
    assert [p.path for p in problems] == ["links[0]"]
    assert "missing or invalid: width_bits" in problems[0].message


def test_per_direction_bandwidth_needs_both_directions():
    [problem] = problems_in(GOOD.replace("{a_to_b: 4 GB/s, b_to_a: 2 GB/s}", "{a_to_b: 4 GB/s}"))
    assert problem.path == "links[1].bandwidth"
    assert "missing 'b_to_a'" in problem.message


def test_routing_table_needs_every_pair():
    [problem] = problems_in(GOOD.replace("routing: shortest", "routing: table"))
    assert problem.path == "routes"
    assert problem.message.endswith("missing: 0->1, 0->2, 1->0, 1->2, 2->1")


def test_a_route_given_twice():
    [problem] = problems_in(GOOD.replace('  "2->0": [2, 1, 0]\n', '  "2->0": [2, 1, 0]\n  "2 -> 0": [2, 1, 0]\n'))
    assert problem.message == "a second route for 2->0 (first given as '2->0')"


def test_a_route_that_visits_a_node_twice():
    [problem] = problems_in(GOOD.replace('"2->0": [2, 1, 0]', '"2->0": [2, 1, 2, 1, 0]'))
    assert problem.message.startswith("route visits a node twice")


def test_unknown_coherence_and_routing_modes():
    problems = problems_in(GOOD.replace("coherence: broadcast", "coherence: directory")
                           .replace("routing: shortest", "routing: adaptive"))
    assert [p.message for p in problems] == ["expected 'shortest' or 'table' or 'updown', got 'adaptive'",
                                             "expected 'broadcast' or 'probe_filter', got 'directory'"]


def test_io_on_an_unknown_node_and_too_many_io_ports():
    problems = problems_in(GOOD.replace("  - {node: 0, name: southbridge}\n",
                                        "  - {node: 5}\n  - {node: 1}\n  - {node: 1}\n"))
    assert [(p.path, p.message) for p in problems] == [
        ("nodes[1]", "node 1 has 3 ports but uses 4 (2 coherent links + 2 I/O ports)"),
        ("io[0].node", "unknown node 5; nodes are [0, 1, 2]"),
    ]


def test_layout_must_place_every_node_once():
    assert problems_in(GOOD.replace(", 2: [2, 0]}", "}"))[0].message.startswith("no position for node 2")
    assert problems_in(GOOD.replace("2: [2, 0]", "2: [1, 0]"))[0].message == \
        "node 2 is at the same position as node 1"


def test_a_node_without_id():
    [problem] = problems_in(GOOD.replace("  - {id: 1}\n", "  - {cores: 2}\n").replace("  - {a: 0, b: 1}\n", "")
                            .replace("  - {a: 1, b: 2, bandwidth: {a_to_b: 4 GB/s, b_to_a: 2 GB/s}}\n",
                                     "  - {a: 0, b: 2}\n").replace('"2->0": [2, 1, 0]', '"2->0": [2, 0]')
                            .replace(" 1: [1, 0],", ""))
    assert (problem.path, problem.message) == ("nodes[1]", "missing 'id' (a whole number >= 0, e.g. {id: 1})")


def test_a_broken_nodes_section_does_not_make_every_reference_a_problem():
    problems = problems_in(GOOD.replace("nodes:\n  - {id: 0}\n  - {id: 1}\n", "nodes:\n  - {id: x}\n")
                           .replace("  - {id: 2, memory: {latency: 70 ns}}\n", ""))
    assert [p.path for p in problems] == ["nodes[0].id"]


def test_explicit_null_means_not_given():
    topo = parse_topology(GOOD.replace("  - {id: 0}\n", "  - {id: 0, memory: null, cores: null}\n"))
    assert topo.node(0).cores == 2


def test_merge_keys_are_supported():
    text = GOOD.replace("link_defaults:\n", "link_defaults: &links\n").replace(
        "  - {a: 0, b: 1}\n", "  - {<<: *links, a: 0, b: 1, latency: 7 ns}\n")
    topo = parse_topology(text)
    assert topo.link(0, 1).latency_ns == 7.0


def test_recursive_alias_is_a_problem_not_a_crash():
    [problem, *_] = problems_in("name: &x [1, *x]\n")
    assert problem.message == "recursive alias (an anchor used inside itself)"


def test_what_the_yaml_reading_reported_is_not_reported_again_for_the_whole_value():
    """A recursive alias in the name is one problem; the name that holds it is not a second one."""
    problems = problems_in(GOOD.replace("name: line3", "name: &x [1, *x]"))
    assert [(p.path, p.message) for p in problems] == [("name[1]", "recursive alias (an anchor used inside itself)")]


def test_unconstructible_scalars_are_problems():
    problems = problems_in(GOOD.replace("name: line3", "name: !python/object:os.system ls"))
    assert problems[0].line == 3
    assert "could not determine a constructor" in problems[0].message


@pytest.mark.parametrize("text, message", [
    ("", "a board description must be a mapping"),
    ("- 1\n", "a board description must be a mapping"),
    ("name: x\n", "missing 'nodes'"),
])
def test_documents_that_are_not_boards(text, message):
    assert message in problems_in(text)[0].message


def test_missing_file_and_unknown_name(tmp_path):
    with pytest.raises(TopologyError, match="cannot read board file"):
        load_topology(tmp_path / "nope.yaml")
    with pytest.raises(TopologyError, match="bundled boards: .*quartet"):
        load_topology("no-such-board")


def test_a_file_that_is_not_text(tmp_path):
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"name: \xff\xfe\n")
    with pytest.raises(TopologyError, match="not UTF-8 text"):
        load_topology(path)


@pytest.mark.parametrize("old,new,path,message", [
    ("    latency: 60 ns", "    latency: 60 s", "defaults.memory.latency", "'60 s' is implausible"),
    ("  cores: 2", "  cores: 1000000000000", "defaults.cores", "at most 65536"),
    ("  cores: 2", "  cores: 100000000000000000000000", "defaults.cores", "at most 65536"),
    ("  cores: 2", "  cores: 1:30", "defaults.cores", "expected a whole number >= 0, got '1:30'"),
    ("    bandwidth: 6.4 GB/s", "    bandwidth: 6.4 kB/s", "defaults.memory.bandwidth", "implausible"),
])
def test_implausible_values_and_yaml_1_1_numbers_are_refused(old, new, path, message):
    assert old in GOOD
    problems = problems_in(GOOD.replace(old, new, 1))
    assert [(p.path, message in p.message) for p in problems] == [(path, True)], problems


@pytest.mark.parametrize("old, new, path", [
    ("  - {id: 2, memory: {latency: 70 ns}}", "  - {id: two, memory: {latency: 70 ns}}", "nodes[2].id"),
    ("  - {id: 2, memory: {latency: 70 ns}}", "  - {id: 1, memory: {latency: 70 ns}}", "nodes[2].id"),
    ("  - {id: 2, memory: {latency: 70 ns}}", "  - {memory: {latency: 70 ns}}", "nodes[2]"),
    ("  - {id: 2, memory: {latency: 70 ns}}", "  - 2", "nodes[2]"),
    ("  width_bits: 16\n", "  width_bits: 0\n", "link_defaults.width_bits"),
    ("  clock: 1 GHz\n", "  clock: 1 GB\n", "link_defaults.clock"),
    ("  ddr: true\n", "  ddr: maybe\n", "link_defaults.ddr"),
    ("{0: [0, 0], 1: [1, 0], 2: [2, 0]}", "{0: [0, 0], 1: [1, 0], 3: [2, 0]}", "layout[3]"),
    ("  cores: 2", "  cores: " + "9" * 5000, "defaults.cores"),
    ("routing: shortest", "routing: !!python/object:os.system ls", "routing"),
])
def test_one_mistake_is_one_problem_not_also_those_that_follow_from_it(old, new, path):
    assert old in GOOD
    problems = problems_in(GOOD.replace(old, new, 1))
    assert [p.path for p in problems] == [path], problems
    assert len(str(problems[0])) < 200


def test_a_board_name_is_one_line():
    [problem] = problems_in(GOOD.replace("name: line3", 'name: "line\\n3"'))
    assert (problem.path, problem.message) == ("name", "expected a non-empty name on one line, got 'line\\n3'")


def test_a_memory_of_more_banks_than_any_dram_is_refused():
    text = (FILES / "good_line3.yaml").read_text().replace("""    bandwidth: 6.4 GB/s
    efficiency: 0.70
    latency: 60 ns""", """    model: dram
    latency: 40 ns
    dram: {channels: 2, width_bits: 64, clock: 200 MHz, ranks: 4, banks: 256, row: 8 KiB,
           address_map: row.rank.bank.column.channel, scheduler: fr-fcfs, bypass_limit: 4, page_policy: open,
           os_page: 4 KiB,
           timings: {CL: 3 clk, CWL: 1 clk, tRCD: 15 ns, tRP: 15 ns, tRAS: 40 ns, tRTP: 2 clk, tWR: 15 ns,
                     tWTR: 2 clk, tRTW: 3 clk, tRRD: 10 ns, tRTRS: 1 clk, tRFC: 70 ns, tREFI: 7.8 us}}""")
    [problem] = problems_in(text)
    assert (problem.path, problem.message) == (
        "defaults.memory.dram.banks", "2 channels x 4 ranks x 256 banks make 2048 banks; at most 1024 (a memory"
        " has a few hundred at most)")
    assert parse_topology(text.replace("banks: 256", "banks: 128")).node(0).dram.banks == 128
