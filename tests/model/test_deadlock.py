"""A run that cannot move stops with the cycle of full buffers that holds it; a slow run is left alone."""
from __future__ import annotations

import csv
import json
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnuma import load_topology, parse_topology, simulate
from simnuma.case import parse_case
from simnuma.cli import main
from simnuma.model.deadlock import STALL_NS, DeadlockError

from .helpers import quartet_sockets_text


def ring_text(n: int) -> str:
    """``n`` Quartet sockets in a ring, broadcast coherence: the wiring on which K8 probe buffers deadlock."""
    return quartet_sockets_text(f"ring{n}", n, [(i, (i + 1) % n) for i in range(n)])


RING = parse_topology(ring_text(8), "ring8.yaml")
READERS = [f"{s}.0.r.{s}" for s in range(8)]


@pytest.mark.parametrize("mode", ["exact", "steady"])
def test_a_ring_of_k8_sockets_deadlocks_and_says_where(mode):
    with pytest.raises(DeadlockError) as exc:
        simulate(RING, READERS, size_bytes=1 << 16, mode=mode, baseline=False)
    message, d = str(exc.value), exc.value.diagnosis
    assert message.startswith("deadlock: no transaction completed in 1 ms") and "\n" not in message
    assert sorted(d["cycle"]) == sorted(f"link {i}->{(i + 1) % 8} probe cmd" for i in range(8)) or \
        sorted(d["cycle"]) == sorted(f"link {(i + 1) % 8}->{i} probe cmd" for i in range(8))
    assert d["outstanding"] > 0 and d["stalled_ns"] >= STALL_NS and set(d["cycle"]) <= set(d["full"])
    assert pickle.loads(pickle.dumps(exc.value)).diagnosis == d     # as it comes back from a worker


def test_the_command_line_gives_one_line_and_the_json_the_diagnosis(tmp_path, capsys):
    board = tmp_path / "ring8.yaml"
    board.write_text(ring_text(8))
    assert main(["run", str(board), *READERS, "--size", "64KiB", "--json"]) == 2
    out, err = capsys.readouterr()
    assert len(err.strip().splitlines()) == 1 and err.startswith("deadlock: ")
    doc = json.loads(out)
    assert doc["error"] == "deadlock" and len(doc["cycle"]) == 8 and doc["message"] == err.strip()


def test_a_ring_of_six_does_not_deadlock():
    ring6 = parse_topology(ring_text(6), "ring6.yaml")
    result = simulate(ring6, [f"{s}.0.r.{s}" for s in range(6)], size_bytes=1 << 16, mode="exact", baseline=False)
    assert result.makespan_ns > 0


def test_a_slow_thread_is_not_a_deadlock():
    """A thread paced far below its memory's speed spends milliseconds between completions: not a stall."""
    result = simulate(load_topology("dual"), ["0.0.r.1@0.005GB/s"], size_bytes=1 << 15, mode="exact", baseline=False)
    assert result.makespan_ns > 3 * STALL_NS


@pytest.mark.parametrize("change", ["link_defaults.latency", "defaults.memory.latency", "defaults.probe.lookup"])
def test_a_board_of_millisecond_latencies_is_slow_not_stuck(change):
    """A latency the board language takes (up to 1 ms) makes a transaction longer than STALL_NS: not a stall."""
    board = load_topology("dual").with_parameters({change: "1 ms"})
    result = simulate(board, ["0.0.r.1"], size_bytes=1 << 12, mode="exact", baseline=False)
    assert result.makespan_ns > 3 * STALL_NS


# ---------------------------------------------------------------- the board language warns beforehand

def test_topo_check_warns_about_routes_that_admit_a_cyclic_wait(tmp_path, capsys):
    from simnuma.topology.channels import dependency_cycle

    assert sorted(dependency_cycle(RING)) in (sorted((i, (i + 1) % 8) for i in range(8)),
                                              sorted(((i + 1) % 8, i) for i in range(8)))
    for name in ("quartet", "x6440", "dual", "ladder8", "quartet-full"):
        assert dependency_cycle(load_topology(name)) == (), name
    assert len(dependency_cycle(load_topology("twisted-ladder8"))) == 8
    board = tmp_path / "ring8.yaml"
    board.write_text(ring_text(8))
    assert main(["topo", "check", str(board)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("ok (ring8: 8 nodes, 8 links)")
    assert out[1].startswith(f"{board}: warning: the routes admit a cyclic wait among link buffers")
    assert main(["topo", "check", "quartet"]) == 0
    assert "warning" not in capsys.readouterr().out


def test_updown_routes_remove_the_cycle_and_the_deadlock():
    from simnuma.topology.channels import dependency_cycle

    ring = RING.with_parameters({"routing": "updown"})
    assert ring.routing == "updown" and dependency_cycle(ring) == ()
    assert ring.route(3, 5) == (3, 2, 1, 0, 7, 6, 5)        # never up after down: around, not across node 4
    assert max(ring.hops(a, b) for a in ring.node_ids for b in ring.node_ids) == 6
    result = simulate(ring, READERS, size_bytes=1 << 16, mode="exact", baseline=False)
    assert result.makespan_ns > 0
    for name in ("quartet", "x6440", "ladder8"):     # where shortest routes are already acyclic, some stay
        board = load_topology(name)
        assert dependency_cycle(board.with_parameters({"routing": "updown"})) == ()
    twisted = load_topology("twisted-ladder8").with_parameters({"routing": "updown"})
    assert dependency_cycle(twisted) == ()


def test_updown_routes_survive_relabelling():
    ring = RING.with_parameters({"routing": "updown"})
    mapping = {i: (i + 3) % 8 for i in range(8)}
    moved = ring.relabel(mapping)
    for (a, b), route in ring.routes.items():
        assert moved.route(mapping[a], mapping[b]) == tuple(mapping[n] for n in route)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 10).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.integers(0, 10_000), min_size=n - 1, max_size=n - 1),
    st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=2 * n))))
def test_updown_routes_never_admit_a_cyclic_wait(board):
    """On any connected wiring (a random tree plus random extra links), up*/down* routes have no cycle."""
    import networkx as nx

    from simnuma.topology.routing import updown_route

    n, parents, extra = board
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from((i, parents[i - 1] % i) for i in range(1, n))
    g.add_edges_from((a, b) for a, b in extra if a != b)
    dependencies = nx.DiGraph()
    for a in range(n):
        for b in range(n):
            if a == b:
                continue
            route = updown_route(g, a, b)
            assert route[0] == a and route[-1] == b and len(set(route)) == len(route)
            assert all(g.has_edge(x, y) for x, y in zip(route, route[1:]))
            dependencies.add_edges_from(((x, y), (y, z)) for x, y, z in zip(route, route[1:], route[2:]))
    assert nx.is_directed_acyclic_graph(dependencies)


def test_a_sweep_ranks_a_board_that_deadlocks_last_and_goes_on(tmp_path, capsys):
    """A deadlock is an outcome of a sweep's point, not the end of the sweep: the ring's case is recorded with
    its cycle, the configuration ranks after the one with up*/down* routes, and the summary names the case."""
    (tmp_path / "ring8.yaml").write_text(ring_text(8))
    sweep = tmp_path / "rings.yaml"
    sweep.write_text("name: rings\nboards: [ring8.yaml, {board: ring8.yaml, changes: {routing: updown},"
                     " label: ring8-updown}]\ncases:\n  - " + " ".join(READERS) + "\n  - {set: local, op: r}\n"
                     "size: 64KiB\n")
    out = tmp_path / "out"
    assert main(["sweep", str(sweep), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "  1. ring8-updown:" in text and "  2. ring8: " in text and "; deadlocked in 1 simulation" in text
    points = list(csv.DictReader((out / "points.csv").open()))
    stuck = [p for p in points if p["bottleneck"] == "deadlock"]
    assert [p["board"] for p in stuck] == ["ring8"] and stuck[0]["time_ns"] == ""
    assert stuck[0]["deadlock"].startswith("deadlock: no transaction completed") and "probe cmd" in stuck[0]["deadlock"]
    configurations = {c["board"]: c for c in csv.DictReader((out / "configurations.csv").open())}
    assert configurations["ring8"]["deadlocks"] == "1" and configurations["ring8-updown"]["deadlocks"] == ""
    assert configurations["ring8"]["local_latency_ns_worst"]      # the cases that ran still count
    summary = (out / "summary.md").read_text()
    assert "Deadlocked" in summary and f"- ring8: 1 simulation, the first {' '.join(READERS)}: deadlock: " in summary
    # a study, where every case must run, still stops at the deadlock in one line
    study = tmp_path / "ring-study.yaml"
    study.write_text("name: ring\nboard: ring8.yaml\nsize: 64KiB\ncases:\n  - " + " ".join(READERS) + "\n")
    assert main(["reproduce", str(study), "-o", str(tmp_path / "study")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "deadlock: no transaction completed" in err, err


def test_steady_mode_warns_when_the_buffers_of_a_cyclic_wait_were_congested():
    """A ring of five under high load in full subscription: the probe buffers around the ring are full most of
    the window, so a longer run could fall into a congested state the window did not reach; steady mode says so.
    With up*/down* routes there is no such cycle, and on the Quartet (none either) nothing is said."""
    ring = parse_topology(ring_text(5), "ring5.yaml")
    case = parse_case("0.0.r.3 + full@high")
    background = [s.label for s in case.background_on(ring)]
    result = simulate(ring, list(case.threads), background, size_bytes=1 << 20, baseline=False)
    (warning,) = result.warnings
    assert warning.startswith("steady mode: the probe command buffers of a cyclic wait the routes admit (")
    ring_text_of_warning = warning.split("(", 1)[1].split(";", 1)[0]
    hops = [tuple(map(int, hop.split("->"))) for hop in ring_text_of_warning.split(" -> ")]
    assert hops[0] == hops[-1] and len(hops) == 6 and all(abs(a - b) % 5 in (1, 4) for a, b in hops)
    assert "--exact" in warning and "routing: updown" in warning
    # arrays small enough that the window is the whole run (nothing extrapolated): nothing was missed
    whole = simulate(ring, list(case.threads), background, size_bytes=1 << 16, baseline=False)
    assert whole.extrapolated_ns == 0.0 and whole.warnings == ()
    updown = simulate(ring.with_parameters({"routing": "updown"}), list(case.threads), background,
                      size_bytes=1 << 20, baseline=False)
    assert updown.warnings == ()
    quartet = load_topology("quartet")
    case = parse_case("0.0.w.1 1.0.w.3 + full@very-high")
    loaded = simulate(quartet, list(case.threads), [s.label for s in case.background_on(quartet)],
                      size_bytes=1 << 20, baseline=False)
    assert loaded.warnings == ()


def test_the_summary_names_the_grid_point_that_deadlocked(tmp_path, capsys):
    (tmp_path / "ring8.yaml").write_text(ring_text(8))
    sweep = tmp_path / "rings.yaml"
    sweep.write_text("name: rings\nboards: [ring8.yaml]\ngrid: {routing: [shortest, updown]}\ncases:\n  - "
                     + " ".join(READERS) + "\nsize: 64KiB\n")
    assert main(["sweep", str(sweep), "-o", str(tmp_path / "out")]) == 0
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "- ring8 routing=shortest: 1 simulation, the first" in summary and "routing=updown: 1" not in summary
