"""Sweeps: the wiring search, the sweep language, running (locally, cached, on Dask) and the outputs."""
from __future__ import annotations

import csv
import itertools
import json

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simnuma
from simnuma.cli import main
from simnuma.sweeps import SweepError, parse_sweep, run_sweep, wirings
from simnuma.sweeps.output import pareto_front, ranked
from simnuma.sweeps.wirings import named_wirings, wiring_board
from simnuma.topology import bundled_topologies, load_topology

QUICK = """\
name: quick
boards:
  - wirings: {sockets: 4, ports: 3, io: 1, spare_ports: true}
    from: quartet
cases:
  - {set: single, ops: [r]}
  - {set: crossfire, op: w}
size: 256KiB
"""

GRID = """\
name: grid
boards:
  - dual
  - {board: dual, label: dual-fast, changes: {link_defaults.latency: 5 ns}}
grid:
  link_defaults.bandwidth: [2 GB/s, 8 GB/s]
cases:
  - 0.0.w.1 1.0.w.0
  - {set: local, op: r}
size: 256KiB
"""


# ---------------------------------------------------------------- the wiring search

def _graphs(found):
    return [w.graph() for w in found]


@pytest.mark.parametrize("sockets,ports,io,spare,count", [
    (4, 3, 0, True, 6),      # every connected graph on four vertices
    (4, 3, 1, True, 5),      # ... but the complete one, which leaves no port for I/O
    (4, 3, 0, False, 1),     # every port wired: the complete graph (the Quartet's "full" what-if)
    (4, 3, 2, False, 1),     # two I/O sockets: the X6440's ladder
    (4, 3, 4, False, 1),     # every socket with I/O: the Quartet's square
    (6, 3, 0, False, 2),     # the two cubic graphs on six vertices: K3,3 and the prism
    pytest.param(8, 3, 0, False, 5, marks=pytest.mark.slow),   # the five connected cubic graphs on eight vertices (5 s)
    (2, 3, 0, True, 1),
])
def test_wiring_counts_are_the_known_ones(sockets, ports, io, spare, count):
    found = wirings(sockets, ports, io, spare)
    assert len(found) == count
    assert [w.name for w in found] == [f"w{sockets}-{k}" for k in range(1, count + 1)]


def test_links_in_parallel_make_multigraphs():
    assert len(wirings(4, 3, 0, True, parallel=2)) == 12
    two = wirings(2, 4, 0, True, parallel=4)
    assert [len(w.links) for w in two] == [4, 3, 2, 1]
    board = wiring_board(load_topology("dual"), two[1])
    assert [(link.a, link.b, link.count) for link in board.links] == [(0, 1, 3)]
    assert board.node(0).ports == 4


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 6), st.integers(1, 4), st.booleans(), st.integers(1, 3), st.data())
def test_wirings_are_connected_within_their_ports_and_pairwise_different(sockets, ports, spare, parallel, data):
    io = data.draw(st.integers(0, sockets))
    found = wirings(sockets, ports, io, spare, parallel)
    graphs = _graphs(found)
    for w, g in zip(found, graphs):
        assert nx.is_connected(g)
        assert max(w.counts().values(), default=1) <= parallel
        degree = dict(g.degree)
        assert all(degree[s] <= ports for s in range(sockets))
        assert all(degree[s] <= ports - 1 for s in w.io) and len(w.io) == io
        if not spare:   # every port not kept for I/O is wired
            assert sorted(degree.values()) == sorted([ports] * (sockets - io) + [ports - 1] * io)
    for a, b in itertools.combinations(graphs, 2):
        assert not nx.is_isomorphic(a, b)


def test_renaming_a_bundled_board_finds_the_same_wiring():
    boards = [load_topology(n) for n in bundled_topologies()]
    found = named_wirings(wirings(8, 3, 4), boards)
    names = {m for w in found for m in w.matches}
    assert {"ladder8", "twisted-ladder8"} <= names
    x6440 = load_topology("x6440").relabel({0: 3, 1: 0, 2: 1, 3: 2})
    assert named_wirings(wirings(4, 3, 1, True), [x6440])[0].matches == (x6440.name,)


def test_a_wiring_board_keeps_the_template_parameters():
    quartet = load_topology("quartet")
    w = wirings(4, 3, 2)[0]
    board = wiring_board(quartet, w)
    assert [(link.a, link.b) for link in board.links] == list(w.links)
    assert board.to_dict()["defaults"] == quartet.to_dict()["defaults"]
    assert board.hops(2, 3) == 2 and board.diameter() == 2
    assert wiring_board(quartet, w, "updown").routing == "updown"


# ---------------------------------------------------------------- the language

def test_every_problem_of_a_sweep_file_at_once_with_its_line(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("""\
name: bad sweep
boards:
  - quartet
  - {board: quartet, changes: {link_defaults.bandwith: 8 GB/s}}
  - {wirings: {sockets: 4, ports: 0}}
grid:
  link_defaults.bandwidth: [4 GB/s, fast]
cases:
  - 0.0.w.9
  - {set: singel}
metrics: [speed]
rank: [latency]
seed: -1
""")
    out = tmp_path / "out"
    assert main(["sweep", str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    expected = [
        ":1: name: expected a sweep name",
        ":4: boards[1].changes.link_defaults.bandwith: no such parameter (did you mean 'link_defaults.bandwidth'?)",
        ":5: boards[2].wirings.ports: expected a whole number >= 1, got 0",
        ":7: grid.link_defaults.bandwidth[1]: on quartet: expected a bandwidth",
        ":9: cases[0]: on quartet: '0.0.w.9': no memory node 9",
        ":10: cases[1].set: unknown set 'singel' (did you mean 'single'?)",
        ":11: metrics[0]: unknown name 'speed'",
        ":12: rank[0]: unknown name 'latency'",
        ":13: seed: expected a whole number from 0 to 2^63 - 1",
    ]
    assert len(err) == len(expected)
    for line, part in zip(err, expected):
        assert part in line and line.startswith(str(bad))
    assert not out.exists()     # nothing written


@pytest.mark.parametrize("text,message", [
    ("name: x\nboards: []\ncases: [0.0.r.0]\n", "boards: expected a list of boards"),
    ("name: x\nboards: [quartet]\n", "expected a list of cases"),
    ("name: x\nboards: [quartet, quartet]\ncases: [0.0.r.0]\n", "two boards are labelled 'quartet'"),
    ("name: x\nboards: [{wirings: {sockets: 4, ports: 1}}]\ncases: [0.0.r.0]\n", "no connected wiring"),
    ("name: x\nboards: [quartet]\ncases: [{set: crossfire, op: w, ops: [r]}]\n", "give 'op' or 'ops'"),
    ("name: x\nboards: [quartet]\ncases: [{set: single, background: lots@x}]\n", "cases[0].background"),
    ("name: x\nboards: [quartet]\ncases: [0.0.r.0]\nmode: fast\n", "mode: expected steady or exact"),
    ("name: x\nboards: [{wirings: {sockets: 4, ports: 3}, routing: table}]\ncases: [0.0.r.0]\n",
     "boards[0].routing: expected one of shortest, updown"),
    ("name: x\nformat: simnuma-sweep/9\nboards: [quartet]\ncases: [0.0.r.0]\n", "format: expected"),
])
def test_bad_sweeps_say_where(text, message):
    with pytest.raises(SweepError) as info:
        parse_sweep(text, "s.yaml")
    assert message in str(info.value)
    assert all(line.startswith("s.yaml") for line in str(info.value).splitlines())


@pytest.mark.parametrize("text,message", [
    ("name: x\nboards: [quartet]\ngrid: {defaults.memory.latncy: [50 ns, 60 ns]}\ncases: [0.0.r.0]\n",
     "s.yaml:3: grid.defaults.memory.latncy: on quartet: no such parameter"),
    ("name: x\nboards: [{board: quartet, label: \"a\\nb\"}]\ncases: [0.0.r.0]\n",
     "s.yaml:2: boards[0].label: expected a label (text on one line), got 'a\\nb'"),
    ("name: x\nboards: [quartet]\ncases: [{set: crossfire}]\nrank: [all_to_all_GBps]\n",
     "s.yaml:4: rank[0]: all_to_all_GBps comes from the all-to-all cases ({set: all-to-all})"),
    ("name: x\nboards: [quartet]\ncases: [{set: single, background: full@low}]\nrank: [local_latency_ns_worst]\n",
     "s.yaml:4: rank[0]: local_latency_ns_worst comes from the idle single-thread cases"),
])
def test_one_mistake_in_a_sweep_is_one_line(text, message):
    with pytest.raises(SweepError) as info:
        parse_sweep(text, "s.yaml")
    assert str(info.value).startswith(message) and "\n" not in str(info.value), str(info.value)


def test_the_default_ranking_uses_what_the_cases_give():
    sweep = parse_sweep("name: x\nboards: [quartet]\ncases: [{set: single, background: full@low}, {set: crossfire}]\n")
    assert sweep.rank == ("crossfire_penalty",)


def test_the_grid_is_the_product_on_every_board():
    sweep = parse_sweep(GRID)
    names = [c.name for c in sweep.configs()]
    assert names == ["dual [link_defaults.bandwidth=2 GB/s]", "dual [link_defaults.bandwidth=8 GB/s]",
                     "dual-fast [link_defaults.bandwidth=2 GB/s]", "dual-fast [link_defaults.bandwidth=8 GB/s]"]
    assert sweep.rank == ("local_latency_ns_worst",)


# ---------------------------------------------------------------- running

def test_a_sweep_runs_caches_and_resumes(tmp_path):
    sweep = parse_sweep(GRID)
    cache = tmp_path / "cache"
    first = run_sweep(sweep, 2, cache)
    assert first.info["simulated"] == first.info["simulations"] and first.info["cached"] == 0
    assert len(first.configurations) == 4
    assert len(first.points) == 4 * (1 + 2)        # the crossfire pair and the two local readers per board
    for row in first.points:
        assert {"board", "board_hash", "link_defaults.bandwidth", "workload", "case", "time_percent", "seed",
                "version"} <= set(row)
    slow, fast = (next(r for r in first.points if r["board"] == "dual" and r["case"] == "0.0.w.1 1.0.w.0"
                       and r["link_defaults.bandwidth"] == bw) for bw in ("2 GB/s", "8 GB/s"))
    assert fast["time_ns"] < slow["time_ns"]        # the crossfire writers saturate the slower link
    again = run_sweep(sweep, 2, cache)
    assert again.info["simulated"] == 0 and again.points == first.points
    files = sorted(cache.glob("*.json"))
    for f in files[:3]:                           # an interrupted sweep: three points were never written
        f.unlink()
    resumed = run_sweep(sweep, 1, cache)
    assert resumed.info["simulated"] == 3 and resumed.points == first.points


def test_the_x6440_wiring_is_asymmetric_and_the_square_is_not():
    run = run_sweep(parse_sweep(QUICK), 2)
    by = {r["matches"]: r for r in run.configurations if r["matches"]}
    assert by["x6440"]["local_latency_spread"] > 0.10          # CPU0 and CPU3 probe a socket two hops away
    assert abs(by["quartet"]["local_latency_spread"]) < 0.02    # every socket of a square looks alike
    best = ranked(run.configurations, ("local_latency_ns_worst",))
    assert best[-1]["diameter"] == 3                           # the path of four sockets comes last
    assert all(r["crossfire_penalty"] > 0 for r in run.configurations)


def test_pareto_front():
    rows = [{"links": 3, "mean_time_percent": 150.0}, {"links": 4, "mean_time_percent": 120.0},
            {"links": 4, "mean_time_percent": 130.0}, {"links": 5, "mean_time_percent": 125.0}]
    assert pareto_front(rows, "links", "mean_time_percent") == rows[:2]


def test_the_command_writes_the_table_summary_and_figures(tmp_path, capsys):
    sweep_file = tmp_path / "quick.yaml"
    sweep_file.write_text(QUICK)
    out = tmp_path / "out"
    assert main(["sweep", str(sweep_file), "-o", str(out), "--jobs", "2"]) == 0
    text = capsys.readouterr().out
    assert "quick: 5 configurations" in text
    names = {p.name for p in out.iterdir()}
    assert {"points.csv", "configurations.csv", "summary.md", "sweep.json", "cache"} <= names
    rows = list(csv.DictReader((out / "points.csv").open()))
    assert len(rows) == json.loads((out / "sweep.json").read_text())["run"]["points"]
    summary = (out / "summary.md").read_text()
    assert "| 1 |" in summary and "x6440" in summary and "local_latency_spread" in summary
    assert main(["sweep", str(sweep_file), "-o", str(out)]) == 0
    assert "from the cache" in capsys.readouterr().out
    pytest.importorskip("pyarrow")
    import pandas as pd

    table = pd.read_parquet(out / "points.parquet")
    assert len(table) == len(rows)


def test_the_python_api_returns_data_frames(tmp_path):
    pytest.importorskip("pandas")
    points = simnuma.sweep(GRID, jobs=1)
    assert len(points) == 12 and "time_percent" in points.columns
    best = simnuma.sweep(GRID, jobs=1, configurations=True)
    assert list(best["board"])[0] in ("dual", "dual-fast") and len(best) == 4


def test_a_sweep_on_a_dask_cluster_gives_the_local_results(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    sweep = parse_sweep(GRID)
    local = run_sweep(sweep, 1)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster:
        with distributed.Client(cluster) as client:
            remote = run_sweep(sweep, dask=client, cache_dir=tmp_path / "cache")
        assert remote.points == local.points and remote.configurations == local.configurations
        assert remote.info["simulated"] == remote.info["simulations"]
        sweep_file = tmp_path / "grid.yaml"
        sweep_file.write_text(GRID)
        assert main(["sweep", str(sweep_file), "-o", str(tmp_path / "out"), "--dask", cluster.scheduler_address,
                     "--cache", str(tmp_path / "cache")]) == 0
    out = capsys.readouterr().out
    assert f"({remote.info['simulations']} from the cache)" in out     # the cluster's points, cached as they came


@pytest.mark.slow
def test_the_eight_socket_ladders_come_out_where_they_belong():
    """The bundled 8-socket sweep (35 s on two cores): of the 25 fully wired boards with four I/O sockets,
    the twisted ladder ranks near the top by mean remote latency and the ladder near the bottom."""
    from pathlib import Path

    from simnuma.sweeps import load_sweep

    sweep = load_sweep(Path(__file__).resolve().parent.parent / "experiments" / "sweeps" / "eight-socket-wirings.yaml")
    run = run_sweep(sweep, 2)
    order = [r["matches"] for r in ranked(run.configurations, sweep.rank)]
    assert len(order) == 25
    assert order.index("twisted-ladder8") < 3
    assert order.index("ladder8") > 15


def test_an_analytic_prefilter_simulates_only_the_best(tmp_path, capsys):
    sweep = parse_sweep(QUICK)
    full = run_sweep(sweep, 2)
    filtered = run_sweep(sweep, 2, prefilter_top=1)
    sources = {r["board"]: r["source"] for r in filtered.configurations}
    assert len(sources) == len(full.configurations) == 5
    assert 1 <= list(sources.values()).count("simulation") < 5 and filtered.info["analytic_only"] >= 1
    assert filtered.info["simulations"] < full.info["simulations"]
    best = ranked(full.configurations, sweep.rank)[0]["board"]
    assert sources[best] == "simulation"          # the analytic model keeps the simulation's best
    simulated = {r["board"]: r for r in full.configurations}
    for row in filtered.configurations:
        if row["source"] == "simulation":
            assert row["local_latency_ns_worst"] == simulated[row["board"]]["local_latency_ns_worst"]
    sweep_file = tmp_path / "quick.yaml"
    sweep_file.write_text(QUICK)
    assert main(["sweep", str(sweep_file), "-o", str(tmp_path / "out"), "--top", "1"]) == 2
    assert "--prefilter analytic and --top K go together" in capsys.readouterr().err
    assert main(["sweep", str(sweep_file), "-o", str(tmp_path / "out"), "--prefilter", "analytic", "--top", "1"]) == 0
    assert "solved by the analytic model only" in capsys.readouterr().out
    assert "| analytic |" in (tmp_path / "out" / "summary.md").read_text()
