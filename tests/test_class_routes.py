"""Routes per packet class: a board's requests, responses and probes may take different paths, as K8's
routing tables route them (request, response and broadcast routes per destination)."""
from __future__ import annotations

import pytest

from simnuma import analyze, load_topology, parse_topology, simulate
from simnuma.errors import TopologyError
from simnuma.model.symmetry import exchangeable_groups
from simnuma.topology.channels import cycle_warning, dependency_cycle
from simnuma.workload import parse_specs

# the Quartet square with its two-hop pairs routed per class (requests and responses of a pair apart)
SPLIT = """
routes:
  "0->3": {request: [0, 2, 3], response: [0, 1, 3], probe: [0, 2, 3]}
  "3->0": {request: [3, 1, 0], response: [3, 2, 0], probe: [3, 1, 0]}
  "1->2": {request: [1, 3, 2], response: [1, 0, 2], probe: [1, 3, 2]}
  "2->1": {request: [2, 0, 1], response: [2, 3, 1], probe: [2, 0, 1]}
"""


def quartet_text() -> str:
    return load_topology("quartet").to_yaml()


def with_routes(routes: str):
    return parse_topology(quartet_text().replace("routing: shortest\n", "routing: shortest\n" + routes.lstrip("\n")),
                          "board.yaml")


def problems(routes: str) -> list:
    with pytest.raises(TopologyError) as info:
        with_routes(routes)
    return [(p.path, p.message) for p in info.value.problems]


def test_each_class_takes_its_own_route():
    board = with_routes(SPLIT)
    assert board.route(0, 3) == board.route(0, 3, "request") == (0, 2, 3)
    assert board.route(0, 3, "response") == (0, 1, 3)
    assert board.route(3, 0, "probe") == (3, 1, 0)
    assert board.routes[(0, 3)] == (0, 2, 3)          # the request routes, as before
    assert board.class_routes("response")[(3, 0)] == (3, 2, 0)
    assert board.route(0, 1, "response") == (0, 1)    # pairs not given: the board's routing for every class
    assert set(board.split_routes()) == {(0, 3), (3, 0), (1, 2), (2, 1)}
    assert board.summary()["split_routes"]["0->3"] == {"request": [0, 2, 3], "response": [0, 1, 3],
                                                      "probe": [0, 2, 3]}


def test_classes_left_out_follow_the_request_route_or_the_routing():
    board = with_routes('routes:\n  "0->3": {response: [0, 2, 3]}\n  "3->0": {request: [3, 2, 0]}\n')
    assert board.route(0, 3, "request") == board.route(0, 3, "probe") == (0, 1, 3)   # shortest, lexicographic
    assert board.route(0, 3, "response") == (0, 2, 3)
    assert {board.route(3, 0, cls) for cls in ("request", "response", "probe")} == {(3, 2, 0)}
    assert set(board.split_routes()) == {(0, 3)}


def test_an_unknown_class_is_named_and_a_table_needs_each_request_route():
    board = with_routes(SPLIT)
    with pytest.raises(KeyError, match="no packet class 'posted'; classes are request, response, probe"):
        board.route(0, 3, "posted")
    table = load_topology("quartet").to_yaml().replace("routing: shortest", "routing: table\nroutes: {" + ", ".join(
        f"'{a}->{b}': {list(r)}" for (a, b), r in load_topology("quartet").routes.items() if (a, b) != (0, 3))
        + ", '0->3': {response: [0, 2, 3]}}")
    with pytest.raises(TopologyError) as info:
        parse_topology(table, "board.yaml")
    assert [p.message for p in info.value.problems] == [
        "routing 'table' needs a route for every ordered pair; missing: 0->3 (no request route)"]


def test_a_list_routes_every_class():
    board = with_routes('routes:\n  "0->3": [0, 2, 3]\n')
    assert {board.route(0, 3, cls) for cls in ("request", "response", "probe")} == {(0, 2, 3)}
    assert board.split_routes() == {}


def test_split_routes_make_another_board_and_survive_the_round_trip():
    board = with_routes(SPLIT)
    assert board != load_topology("quartet")
    again = parse_topology(board.to_yaml())
    assert again == board and again.split_routes() == board.split_routes()


def test_relabelling_keeps_every_class_on_its_physical_path():
    board = with_routes(SPLIT)
    m = {0: 3, 1: 2, 2: 1, 3: 0}
    renamed = board.relabel(m)
    for cls in ("request", "response", "probe"):
        for (a, b), route in board.class_routes(cls).items():
            assert renamed.route(m[a], m[b], cls) == tuple(m[x] for x in route)
    assert parse_topology(renamed.to_yaml()) == renamed


@pytest.mark.parametrize("routes, expected", [
    ('routes:\n  "0->3": {reply: [0, 2, 3]}\n',
     [("routes.0->3.reply", "unknown packet class 'reply'; classes are request, response, probe")]),
    ('routes:\n  "0->3": {}\n',
     [("routes.0->3", "expected a route per packet class, such as {request: [...], response: [...]}; classes are"
                      " request, response, probe")]),
    ('routes:\n  "0->3": {response: [0, 3]}\n',
     [("routes.0->3.response", "route does not follow links: there is no link 0-3")]),
])
def test_mistakes_in_class_routes_are_named_by_their_key(routes, expected):
    assert problems(routes) == expected


def test_a_cyclic_wait_is_one_within_a_class():
    """Each class has buffers of its own: the split Quartet has a cycle of link directions only across
    classes (0->1 response, 1->3, 3->2 request, 2->0), which no buffer can close."""
    assert dependency_cycle(with_routes(SPLIT)) == ()
    one_class = with_routes('routes:\n  "0->3": [0, 1, 3]\n  "1->2": [1, 3, 2]\n  "3->0": [3, 2, 0]\n'
                            '  "2->1": [2, 0, 1]\n')
    assert len(dependency_cycle(one_class)) == 4
    within = with_routes('routes:\n  "0->3": {response: [0, 1, 3]}\n  "1->2": {response: [1, 3, 2]}\n'
                         '  "3->0": {response: [3, 2, 0]}\n  "2->1": {response: [2, 0, 1]}\n')
    assert {d[2] for d in dependency_cycle(within)} == {"response"}
    assert "(response routes: " in cycle_warning(within)


def _data_bytes(result: dict, src: int, dst: int) -> float:
    return sum(row["data_bytes"] for row in result["links"] if (row["src"], row["dst"]) == (src, dst))


def test_the_simulation_sends_each_packet_on_its_class_route():
    """A thread on node 0 reading node 3: requests go 0-2-3, the data come back 3-2-0, node 3's probe
    reaches node 0 over 3-1-0 (a command with no data)."""
    result = simulate(with_routes(SPLIT), ["0.0.r.3"], size_bytes=1 << 20, mode="exact").to_dict()
    lines_bytes = 1 << 20   # every line of the array, once
    assert _data_bytes(result, 3, 2) == pytest.approx(lines_bytes) and _data_bytes(result, 2, 0) == pytest.approx(lines_bytes)
    assert _data_bytes(result, 3, 1) == 0 and _data_bytes(result, 1, 0) == 0
    control = {(row["src"], row["dst"]): row["control_bytes"] for row in result["links"]}
    assert control[(3, 1)] > 0 and control[(1, 0)] > 0 and control[(0, 2)] > 0
    plain = simulate("quartet", ["0.0.r.3"], size_bytes=1 << 20, mode="exact").to_dict()
    assert _data_bytes(plain, 3, 1) == pytest.approx(lines_bytes) and _data_bytes(plain, 3, 2) == 0


def test_the_analytic_model_puts_each_class_on_its_route():
    split = analyze(with_routes(SPLIT), ["0.0.r.3"]).to_dict()
    busy = {(row["src"], row["dst"]): row["utilization"] for row in split["links"]}
    plain = analyze("quartet", ["0.0.r.3"]).to_dict()
    plain_busy = {(row["src"], row["dst"]): row["utilization"] for row in plain["links"]}
    # the data on 3-2-0 and only two probes on 3-1; on the plain square the other way round
    assert busy[(3, 2)] > 3 * busy[(3, 1)] and busy[(2, 0)] > 3 * busy[(1, 0)]
    assert plain_busy[(3, 1)] > 3 * plain_busy[(3, 2)] and plain_busy[(1, 0)] > 3 * plain_busy[(2, 0)]


def test_symmetries_must_keep_every_class_route():
    """Node 0 reading node 1 and node 1 reading node 0 are interchangeable on the plain square (0 <-> 1,
    2 <-> 3 maps its routes onto themselves) and on the split one, not when one pair's responses alone
    take another way round."""
    threads = parse_specs(["0.0.r.1", "1.0.r.0"])
    assert exchangeable_groups(load_topology("quartet"), threads, ()) == [[0, 1]]
    assert exchangeable_groups(with_routes(SPLIT), threads, ()) == [[0, 1]]
    lopsided = with_routes('routes:\n  "3->0": {response: [3, 2, 0]}\n')
    assert exchangeable_groups(lopsided, threads, ()) == [[0], [1]]


def test_full_buffers_back_up_along_each_class_route():
    """The pairs of buffers whose waits a run accounts for follow each class's routes: node 3's responses to
    node 0 leave over 3->2, its probes for node 0 over 3->1, and node 0's requests for node 3 over 0->2."""
    from simnuma.model.feeds import buffer_feeds
    from simnuma.model.system import System
    from simnuma.workload import Workload

    system = System(with_routes(SPLIT), Workload.build(["0.0.r.0"], []), 4096, 1)
    feeds = buffer_feeds(system)
    assert set(feeds["N3 mct->xbar response"]) == {f"link 3->{n} response {k}" for n in (1, 2) for k in ("cmd", "data")}
    assert set(feeds["N3 mct->xbar probe"]) == {"link 3->1 probe cmd", "link 3->2 probe cmd"}
    assert set(feeds["link 3->2 response cmd"]) == {"link 2->0 response cmd", "link 2->0 response data"}   # via 2
    assert "link 1->0 response cmd" not in feeds["link 3->1 response cmd"]         # ... not via 1
    assert set(feeds["link 3->1 probe cmd"]) == {"N1 xbar->sri probe", "link 1->0 probe cmd"}   # probes via 1
    assert set(feeds["link 0->2 request cmd"]) == {"N2 mct dram queue", "link 2->3 request cmd"}
    assert set(feeds["link 0->1 request cmd"]) == {"N1 mct dram queue"}            # 0->3 requests not via 1
    # and a run's measured waits all fall on those pairs: two-hop writers crossing under load wait on each
    # class's next buffer, and no wait is dropped from the accounts
    from simnuma.model import simulate

    r = simulate(with_routes(SPLIT), ["0.0.w.3", "3.0.w.0"], ["1.0.r.1@3GB/s", "2.0.r.2@3GB/s"], size_bytes=2**17,
                 mode="exact", baseline=False).to_dict()
    assert max(q["blocked"] for q in r["queues"]) > 0.1
    for q in r["queues"]:
        assert sum(q["waits_on"].values()) == pytest.approx(q["blocked"], rel=1e-9, abs=1e-12), q["name"]
