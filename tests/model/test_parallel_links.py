"""Links in parallel between two nodes (``count`` in the board language): validation, the spread of traffic,
and what they change."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnuma import load_topology, simulate
from simnuma.errors import TopologyError
from simnuma.model.feeds import buffer_feeds
from simnuma.model.system import System, run_exact
from simnuma.topology.loading import topology_from_dict
from simnuma.workload import Workload

from .helpers import run_to_quiescence
from .test_invariants import _assert_within_capacity

DUAL = load_topology("dual")
SQUARE = load_topology("quartet")


def _with_count(board, count: int, pair=None):
    doc = board.to_dict()
    for link in doc["links"]:
        if pair is None or (link["a"], link["b"]) == pair:
            link["count"] = count
    doc.setdefault("defaults", {})["ports"] = 2 * count + 1 if pair is None else 4
    return topology_from_dict(doc, source=f"{board.name} x{count}")


def test_a_count_of_one_is_the_board_itself():
    doc = DUAL.to_dict()
    doc["links"][0]["count"] = 1
    same = topology_from_dict(doc)
    args = (["0.0.w.1", "1.0.w.0"],)
    a = simulate(DUAL, *args, size_bytes=1 << 18, mode="exact", baseline=False).to_dict()
    b = simulate(same, *args, size_bytes=1 << 18, mode="exact", baseline=False).to_dict()
    for r in (a, b):
        r.pop("wall_s", None)
        r.pop("parameters")   # the board file says count: 1; everything simulated is the same
    assert a == b
    assert [link["name"] for link in a["links"]] == ["0->1", "1->0"]


def test_each_link_of_a_pair_takes_a_port_at_each_end():
    doc = DUAL.to_dict()
    doc["links"][0]["count"] = 3
    with pytest.raises(TopologyError) as info:
        topology_from_dict(doc, "two.yaml")
    assert "node 0 has 3 ports but uses 4 (3 coherent links + 1 I/O port)" in str(info.value)
    doc["links"][0]["count"] = 0
    with pytest.raises(TopologyError) as info:
        topology_from_dict(doc, "two.yaml")
    assert "links[0].count: must be positive" in str(info.value)
    assert DUAL.with_parameters({"defaults.ports": 4, "links.0-1.count": 3}).links[0].count == 3


@pytest.mark.parametrize("count", [2, 3, 4])
def test_a_stream_spreads_evenly_over_the_links_of_a_pair(count):
    """Line i takes link i mod count: each link of the pair carries 1/count of the data."""
    board = _with_count(DUAL, count)
    system = run_to_quiescence(board, ["0.0.r.1"], size_bytes=1 << 16)
    back = [d for d in system.link_list if (d.src_id, d.dst_id) == (1, 0)]
    assert [d.name for d in back] == [f"1->0#{k + 1}" for k in range(count)]
    data = [d.data_bytes for d in back]
    assert sum(data) == (1 << 16)
    assert max(data) - min(data) <= 64


def test_two_links_relieve_crossfire():
    """Crossfire saturates one link each way; two links in parallel, each of its own credits, carry it at
    about half their capacity, and the writers are faster than with one link of twice the bandwidth."""
    case = (["0.0.w.1", "1.0.w.0"],)
    one = simulate(DUAL, *case, size_bytes=1 << 20, baseline=False).to_dict()
    two = simulate(_with_count(DUAL, 2), *case, size_bytes=1 << 20, baseline=False).to_dict()
    wide = simulate(DUAL.with_parameters({"link_defaults.bandwidth": "8 GB/s"}), *case, size_bytes=1 << 20,
                    baseline=False).to_dict()
    assert max(link["utilization"] for link in one["links"]) > 0.85
    assert max(link["utilization"] for link in two["links"]) < 0.6
    assert two["makespan_ns"] < 0.9 * one["makespan_ns"]
    assert two["makespan_ns"] < wide["makespan_ns"]
    _assert_within_capacity(two)


@settings(max_examples=6, deadline=None)
@given(st.sampled_from([(0, 1), (0, 2), (1, 3), (2, 3)]), st.sampled_from(["w", "r"]))
def test_every_request_completes_over_links_in_parallel(pair, op):
    """On the square with one pair doubled, every transaction completes, each link's buffers come back, and
    the buffers of every lane feed the next link of its own lane or the node's memory and probe queue."""
    board = _with_count(SQUARE, 2, pair)
    fg = [f"0.0.{op}.3", f"3.0.{op}.0", f"1.0.{op}.2"]
    system = System(board, Workload.build(fg, ["2.1.r.2@1GB/s"]), 1 << 14, 1)
    system.extrapolated = None
    run_exact(system)
    system.env.run(until=system.env.now + 100_000.0)
    assert system.coherence.started == system.coherence.completed
    for pool in system.pools:
        assert len(pool.ready) == pool.capacity, pool.name
    feeds = buffer_feeds(system)
    a, b = pair
    for k in (1, 2):
        assert f"link {a}->{b}#{k} posted cmd" in feeds


def test_the_bottleneck_names_one_link_of_a_pair():
    board = _with_count(DUAL, 2)
    r = simulate(board, ["0.0.w.1", "1.0.w.0", "0.1.w.1", "1.1.w.0"], size_bytes=1 << 20, baseline=False)
    assert r.bottleneck.resource.startswith(("link 0->1#", "link 1->0#", "memory N"))


def test_topo_check_counts_the_links_in_parallel(tmp_path, capsys):
    from simnuma.cli import main

    board = tmp_path / "pair.yaml"
    board.write_text(_with_count(DUAL, 2).to_yaml())
    assert main(["topo", "check", str(board)]) == 0
    assert capsys.readouterr().out.strip().endswith("ok (dual: 2 nodes, 2 links)")
