"""Link kinds: links that share parameters by name (``link_kinds``), as a board's resolution, its changes and its
calibration see them (one latency fitted per kind)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnuma.calibrate import calibrate, calibrated_yaml, parse_fit
from simnuma.calibrate.parameters import default_fit
from simnuma.errors import CalibrationError, TopologyError
from simnuma.measurements import MachineInfo, Measurement, MeasurementSet, parse_case
from simnuma.model import simulate
from simnuma.topology import parse_topology

REPO = Path(__file__).resolve().parents[1]
SIZE = 1 << 20

BOARD = """\
name: kinds
description: two clusters of a socket and a socket beyond
defaults:
  cores: 2
  ports: 3
  core: {window: {r: 3, w: 3, t: 3}}
  memory: {bandwidth: 20 GB/s, efficiency: 0.7, latency: 80 ns, queue: 32}
  sri: {latency: 2 ns, buffers: {request: 4, posted: 4, response: 4}, probe_queue: 8}
  mct: {buffers: {response: 4, probe: 2}}
  xbar: {latency: 2 ns}
  probe: {lookup: 20 ns}
link_defaults:
  bandwidth: 20 GB/s
  latency: 30 ns            # assumption
  buffers: {request: 8, posted: 8, response: 8, probe: 8}
link_kinds:
  cluster:
    latency: 30 ns          # assumption: calibrate
  socket:
    latency: 30 ns          # assumption: calibrate
nodes: [{id: 0}, {id: 1}, {id: 2}]
links:
  - {a: 0, b: 1, kind: cluster}
  - {a: 0, b: 2, kind: socket}
  - {a: 1, b: 2, kind: socket}
coherence: probe_filter
"""


def board(text: str = BOARD):
    return parse_topology(text, "kinds.yaml")


def with_links(links: str, kinds: str = "link_kinds: {cluster: {latency: 8 ns, bandwidth: 60 GB/s}, socket: {}}"):
    head = BOARD[:BOARD.index("link_kinds:")]
    return parse_topology(head + kinds + "\nnodes: [{id: 0}, {id: 1}, {id: 2}]\nlinks:\n" + links
                          + "coherence: probe_filter\n", "kinds.yaml")


# ------------------------------------------------------------------ the board

def test_a_link_takes_its_own_over_its_kind_over_the_defaults():
    topo = with_links("  - {a: 0, b: 1, kind: cluster}\n  - {a: 0, b: 2, kind: cluster, latency: 9 ns}\n"
                      "  - {a: 1, b: 2, kind: socket, buffers: {probe: 2}}\n")
    assert [(link.kind, link.latency_ns, link.bandwidth_ab_GBps) for link in topo.links] == [
        ("cluster", 8.0, 60.0), ("cluster", 9.0, 60.0), ("socket", 30.0, 20.0)]
    assert topo.link(1, 2).buffers == {"request": 8, "posted": 8, "response": 8, "probe": 2}   # mapping by mapping
    assert topo.link_kinds == ("cluster", "socket")


def test_a_link_that_gives_its_own_rate_takes_none_of_its_kinds():
    topo = with_links("  - {a: 0, b: 1, kind: cluster, clock: 1 GHz, width_bits: 16, ddr: true}\n"
                      "  - {a: 0, b: 2}\n  - {a: 1, b: 2}\n")
    assert topo.link(0, 1).bandwidth_ab_GBps == 4.0 and topo.link(0, 1).latency_ns == 8.0
    assert topo.link(0, 2).kind is None and topo.link(0, 2).latency_ns == 30.0


@pytest.mark.parametrize("links, kinds, message", [
    ("  - {a: 0, b: 1, kind: clustr}\n  - {a: 0, b: 2}\n", None,
     "kinds.yaml:19: links[0].kind: unknown link kind 'clustr' (did you mean 'cluster'?); kinds are cluster, socket"),
    ("  - {a: 0, b: 1, kind: cluster}\n  - {a: 0, b: 2}\n", "link_defaults2: {}",
     "kinds.yaml:16: link_defaults2: unknown key"),
    ("  - {a: 0, b: 1}\n  - {a: 0, b: 2}\n", "link_kinds: {a.b: {latency: 1 ns}}",
     "kinds.yaml:16: link_kinds.a.b: expected a kind name (a letter, then letters, digits, '-' or '_'), got 'a.b'"),
    ("  - {a: 0, b: 1}\n  - {a: 0, b: 2}\n", "link_kinds: {x: 3}",
     "kinds.yaml:16: link_kinds.x: expected a mapping of link parameters such as {latency: 40 ns}, got 3"),
    ("  - {a: 0, b: 1}\n  - {a: 0, b: 2}\n", "link_kinds: {x: {latncy: 3 ns}}",
     "kinds.yaml:16: link_kinds.x.latncy: unknown key (did you mean 'latency'?)"),
    ("  - {a: 0, b: 1}\n  - {a: 0, b: 2}\n", "link_kinds: [x]",
     "kinds.yaml:16: link_kinds: expected a mapping of kind names to link parameters, such as"
     " {socket: {latency: 40 ns}}"),
])
def test_mistakes_in_kinds_are_said_where_they_are(links, kinds, message):
    with pytest.raises(TopologyError) as err:
        with_links(links, *([kinds] if kinds else []))
    assert str(err.value).startswith(message)


def test_a_kind_nobody_defines_is_refused_on_the_command_line_in_one_line(tmp_path):
    path = tmp_path / "kinds.yaml"
    path.write_text(BOARD.replace("kind: socket}\n  - {a: 1", "kind: sockt}\n  - {a: 1"))
    out = subprocess.run([sys.executable, "-m", "simnuma", "topo", "check", str(path)], capture_output=True,
                         text=True, cwd=REPO)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip() == (f"{path}:24: links[1].kind: unknown link kind 'sockt' (did you mean 'socket'?);"
                                  " kinds are cluster, socket")


def test_changes_by_kind_and_by_default():
    topo = board().with_parameters({"links.0-2.latency": 12.0})
    by_kind = topo.with_parameters({"link_kinds.socket.latency": 50.0})
    assert [link.latency_ns for link in by_kind.links] == [30.0, 50.0, 50.0]   # the link's own is dropped
    by_default = by_kind.with_parameters({"link_defaults.latency": 5.0})       # kinds keep what they give
    assert [link.latency_ns for link in by_default.links] == [30.0, 50.0, 50.0]
    assert parse_topology(by_kind.to_yaml(), "again.yaml") == by_kind
    with pytest.raises(TopologyError, match="no link kind 'sockt'; kinds are cluster, socket"):
        topo.with_parameters({"link_kinds.sockt.latency": 1.0})


def test_kinds_are_part_of_the_board_and_survive_relabelling():
    topo = board()
    unkinded = parse_topology(BOARD.replace(", kind: cluster", "").replace(", kind: socket", ""), "k.yaml")
    assert [link.latency_ns for link in unkinded.links] == [30.0] * 3 and unkinded != topo
    swapped = topo.relabel({0: 2, 1: 1, 2: 0})
    assert swapped.link(2, 1).kind == "cluster" and swapped.link(0, 2).kind == "socket"
    assert swapped.relabel({0: 2, 1: 1, 2: 0}) == topo


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([None, "cluster", "socket"]), st.sampled_from([None, 3, 4])),
                min_size=3, max_size=3),
       st.sampled_from([None, 1, 2]), st.sampled_from([None, 5, 6]))
def test_resolution_order_property(links, cluster_latency, socket_latency):
    """Whatever gives it, a link's latency is its own, else its kind's, else the default's."""
    kinds = {"cluster": cluster_latency, "socket": socket_latency}
    entries = ""
    for (a, b), (kind, own) in zip(((0, 1), (0, 2), (1, 2)), links):
        entries += (f"  - {{a: {a}, b: {b}" + (f", kind: {kind}" if kind else "")
                    + (f", latency: {own} ns" if own else "") + "}\n")
    text = "link_kinds: {" + ", ".join(f"{k}: {{latency: {v} ns}}" if v else f"{k}: {{}}" for k, v in kinds.items()) + "}"
    topo = with_links(entries, text)
    for link, (kind, own) in zip(topo.links, links):
        assert link.latency_ns == (own or (kinds[kind] if kind else None) or 30)
        assert link.kind == kind


# ------------------------------------------------------------------ calibration

MACHINE = MachineInfo("board 'kinds'", board="kinds")
CASES = ["0.0.r.0", "0.0.r.1", "0.0.r.2"]
TRUTH = {"link_kinds.cluster.latency": 8.0, "link_kinds.socket.latency": 50.0}


def synthetic(truth, cases) -> MeasurementSet:
    out = []
    for text in cases:
        case = parse_case(text)
        result = simulate(truth, list(case.threads), size_bytes=SIZE, baseline=False)
        for spec in case.threads:
            out.append(Measurement(case=case, metric="thread_GBps", value=result.thread(spec)["bandwidth_GBps"],
                                   source="synthetic", machine=MACHINE, origin="synthetic", thread=spec,
                                   size_bytes=SIZE))
    return MeasurementSet(tuple(out), MACHINE, ("synthetic",))


def test_link_parameters_expand_to_one_per_kind():
    topo = with_links("  - {a: 0, b: 1, kind: cluster}\n  - {a: 0, b: 2}\n  - {a: 1, b: 2, kind: socket}\n")
    names = [p.name for p in parse_fit(["link.latency=2:90"], topo)]
    assert names == ["link.latency@cluster", "link.latency", "link.latency@socket"]
    cluster, default, socket = parse_fit(["link.latency"], topo)
    assert (cluster.path, cluster.prior(topo)) == ("link_kinds.cluster.latency", 8.0)
    assert (default.path, default.prior(topo)) == ("link_defaults.latency", 30.0)
    assert [p.name for p in parse_fit(["link.latency@socket", "memory.latency"], topo)] == [
        "link.latency@socket", "memory.latency"]
    assert [p.name for p in parse_fit(["link.latency"], board().with_parameters({}))] == [
        "link.latency@cluster", "link.latency@socket"]


@pytest.mark.parametrize("items, message", [
    (["link.latency@sockt"], "board 'kinds' has no links of kind 'sockt'; kinds with links are cluster, socket"),
    (["memory.latency@socket"], "only a link parameter has a kind (memory.latency is a node's)"),
    (["link.latency", "link.latency@socket"], "'link.latency@socket' is given twice"),
    (["link.latncy@socket"], "unknown parameter"),
])
def test_kinds_the_fit_cannot_take_are_refused(items, message):
    with pytest.raises(CalibrationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_fit(items, board())


def test_the_default_fit_takes_the_kinds_a_thread_crosses():
    topo = board()
    assert [n for n in default_fit(topo, [parse_case(c) for c in CASES]) if n.startswith("link.")] == [
        "link.latency@cluster", "link.latency@socket"]
    assert [n for n in default_fit(topo, [parse_case(c) for c in ("0.0.r.0", "0.0.r.1")])
            if n.startswith("link.")] == ["link.latency@cluster"]


def test_a_calibration_tells_the_kinds_apart_and_writes_each_in_place():
    topo = board()
    cal = calibrate(topo, synthetic(topo.with_parameters(TRUTH), CASES), fit=["link.latency", "memory.latency"],
                    cases=CASES, processes=1)
    fitted = {p.param.name: p for p in cal.parameters}
    assert fitted["link.latency@cluster"].value == pytest.approx(8.0, abs=1.0)
    assert fitted["link.latency@socket"].value == pytest.approx(50.0, abs=1.5)
    assert all(p.identified for p in cal.parameters)
    text = calibrated_yaml(cal, BOARD, ["synthetic.json"])
    lines = text.splitlines()
    cluster = lines[lines.index("  cluster:") + 1]
    assert cluster.startswith("    latency: 8.") and "links of kind cluster), fitted by simnuma calibrate" in cluster
    assert "  latency: 30 ns            # assumption" in lines          # the default is left as it was
    again = parse_topology(text, "calibrated.yaml")
    assert [round(link.latency_ns) for link in again.links] == [8, 50, 50]


def test_a_host_with_sub_numa_clusters_is_predicted_only_with_a_latency_per_kind():
    """The board ``bench host`` writes for two sockets of two clusters each, calibrated on one node's single
    threads of a machine whose hop to the other socket takes 35 ns and to the other cluster 6 ns: with a
    latency per kind it predicts other nodes' threads within 2%; with one latency for every link it cannot
    (a thread reading the other cluster's memory comes out far too slow)."""
    import re

    from simnuma.bench.host import Host, HostNode
    from simnuma.bench.skeleton import host_topology_yaml

    nodes = tuple(HostNode(i, tuple(range(4 * i, 4 * i + 4)), 1 << 34, 1 << 33) for i in range(4))
    snc = ((10, 12, 21, 21), (12, 10, 21, 21), (21, 21, 10, 12), (21, 21, 12, 10))
    text = host_topology_yaml(Host("/x", nodes, snc, (), 0, None, None, "test CPU", "Linux 6", True), name="kinds")
    kinded = parse_topology(text, "snc.yaml")
    plain = parse_topology(re.sub(r", kind: distance-\d+", "", text), "plain.yaml")
    truth = kinded.with_parameters({"link_kinds.distance-12.latency": 6.0, "link_kinds.distance-21.latency": 35.0,
                                    "defaults.memory.latency": 85.0})
    fit_cases = [f"0.0.r.{m}" for m in range(4)]
    checks = synthetic(truth, ["1.0.r.0", "1.0.r.2", "0.0.r.1 0.1.r.1"])
    errors = {}
    for name, topo in (("kinds", kinded), ("one", plain)):
        cal = calibrate(topo, synthetic(truth, fit_cases), fit=["link.latency", "memory.latency"], cases=fit_cases,
                        processes=1)
        errors[name] = [simulate(cal.topology, list(m.case.threads), size_bytes=SIZE, baseline=False)
                        .thread(m.thread)["bandwidth_GBps"] / m.value - 1 for m in checks]
    assert max(map(abs, errors["kinds"])) < 0.02
    assert max(map(abs, errors["one"])) > 0.2


# ------------------------------------------------------------------ a link's bandwidth, from a remote peak

def test_a_remote_peak_brings_the_bandwidth_of_each_kind_it_crosses_into_the_default_fit():
    from simnuma.calibrate.cases import is_peak, is_remote_peak

    topo = board()
    remote = parse_case("0.0.r.2 0.1.r.2")                  # every core of node 0 reading node 2's memory
    assert is_remote_peak(remote, topo) and not is_peak(remote, topo)
    assert not is_remote_peak(parse_case("0.0.r.2"), topo) and not is_remote_peak(parse_case("0.0.r.2 0.1.r.1"), topo)
    names = default_fit(topo, [parse_case(c) for c in CASES] + [remote])
    assert [n for n in names if n.startswith("link.")] == [
        "link.latency@cluster", "link.latency@socket", "link.bandwidth@socket"]
    assert "memory.queue" not in names                      # a remote peak does not load its node's memory alone
    plain = parse_topology(BOARD.replace(", kind: cluster", "").replace(", kind: socket", ""), "plain.yaml")
    assert "link.bandwidth" in default_fit(plain, [remote]) and "link.bandwidth" not in default_fit(plain, [
        parse_case("0.0.r.0 0.1.r.0")])


def test_a_calibration_finds_a_link_bandwidth_from_a_remote_peak():
    """The socket links carry 6 GB/s each way where the board says 20: a remote peak of reads and one of writes
    find it (both cores of node 0 streaming node 2's memory), which the single threads alone cannot see (the suite
    measures reads; a fit takes any remote peak)."""
    topo = board()
    truth = topo.with_parameters({"link_kinds.socket.bandwidth": 6.0})
    cases = ["0.0.r.2", "0.0.r.2 0.1.r.2", "0.0.w.2 0.1.w.2"]
    cal = calibrate(topo, synthetic(truth, cases), fit=["link.bandwidth@socket"], cases=cases, processes=1)
    (fitted,) = cal.parameters
    assert fitted.identified and fitted.value == pytest.approx(6.0, rel=0.05)
    assert cal.topology.link(0, 2).bandwidth_ab_GBps == cal.topology.link(1, 2).bandwidth_ba_GBps == fitted.value
    assert cal.topology.link(0, 1).bandwidth_ab_GBps == 20.0
    text = calibrated_yaml(cal, BOARD, ["synthetic.json"])
    assert parse_topology(text, "calibrated.yaml") == cal.topology


# ------------------------------------------------------------------ what the review of kinds found

FLOW = BOARD.replace('''  cluster:
    latency: 30 ns          # assumption: calibrate
  socket:
    latency: 30 ns          # assumption: calibrate''', '''  cluster: {bandwidth: 20 GB/s}   # within a socket
  socket:                   # between sockets''').replace(
    "  - {a: 1, b: 2, kind: socket}", "  - {a: 1, b: 2, kind: socket, latency: 33 ns}")


def test_a_calibrated_kind_is_written_in_place_in_any_layout():
    """A kind written on one line, a kind given no value, and a link of a fitted kind with its own value: the fitted
    values go in place, the link's own value (which the fit replaced) goes, and every comment stays."""
    topo = parse_topology(FLOW, "flow.yaml")
    cal = calibrate(topo, synthetic(topo.with_parameters(TRUTH), CASES), fit=["link.latency"], cases=CASES,
                    processes=1)
    warnings = []
    text = calibrated_yaml(cal, FLOW, ["synthetic.json"], warn=warnings.append)
    assert warnings == [] and parse_topology(text, "calibrated.yaml") == cal.topology
    lines = text.splitlines()
    assert [line for line in lines if line.startswith("  cluster: {bandwidth: 20 GB/s, latency: ")]
    assert [line for line in lines if line.startswith("  socket: {latency: ")]
    assert "  - {a: 1, b: 2, kind: socket}" in lines
    for comment in ("# within a socket", "# between sockets", "  latency: 30 ns            # assumption"):
        assert any(comment in line for line in lines), comment


def test_a_board_that_cannot_be_edited_in_place_is_written_afresh_with_a_warning():
    topo = board()
    cal = calibrate(topo, synthetic(topo.with_parameters(TRUTH), CASES), fit=["link.latency", "memory.latency"],
                    cases=CASES, processes=1)
    warnings = []     # the two kinds written as one mapping (an alias): one place cannot take two values
    text = calibrated_yaml(cal, BOARD.replace("kinds:\n  cluster:", "kinds:\n  cluster: &c").replace(
        "  socket:\n    latency: 30 ns          # assumption: calibrate", "  socket: *c"), ["s.json"], warn=warnings.append)
    assert parse_topology(text, "calibrated.yaml") == cal.topology
    assert warnings and "written afresh: the original's comments are not kept" in warnings[0]


def test_what_if_boards_and_wirings_take_the_kinds_of_the_board_they_copy():
    from simnuma.study.records import parameters_from
    from simnuma.sweeps.wirings import Wiring, wiring_board

    one_kind = parse_topology(BOARD.replace("kind: cluster", "kind: socket"), "one.yaml").with_parameters(
        {"link_kinds.socket.latency": 44.0})
    square = parameters_from(parse_topology(BOARD, "b.yaml").relabel({0: 0, 1: 1, 2: 2}), one_kind)
    assert {(link.kind, link.latency_ns) for link in square.links} == {("socket", 44.0)}
    two = board().with_parameters(TRUTH)
    same = parameters_from(board(), two)            # every pair is one of its links: each keeps that link's kind
    assert [(link.kind, link.latency_ns) for link in same.links] == [("cluster", 8.0), ("socket", 50.0), ("socket", 50.0)]
    wiring = Wiring("w3", 3, ((0, 1), (1, 2)), ())
    assert {link.kind for link in wiring_board(one_kind, wiring).links} == {"socket"}
    with pytest.raises(TopologyError, match=r"board 'kinds' has links of 2 kinds \(cluster, socket\): which of them a"
                                            r" wiring's links would take, it does not say"):
        wiring_board(two, wiring)
    chain = parse_topology(BOARD.replace("  - {a: 1, b: 2, kind: socket}\n", "").replace("ports: 3", "ports: 3"),
                           "chain.yaml")
    with pytest.raises(TopologyError, match="which of them link 1-2 of board 'kinds', which it does not have, would"):
        parameters_from(board(), chain)


def test_links_of_two_kinds_are_never_twins():
    """Two kinds at equal values (before a fit moves them apart) are not interchangeable: a thread reading over a
    cluster link and one reading over a socket link are two measurements."""
    from simnuma.model.symmetry import exchangeable_groups
    from simnuma.workload import parse_spec

    topo = board()
    specs = [parse_spec("0.0.r.1"), parse_spec("0.1.r.2")]
    assert exchangeable_groups(topo, specs, []) == [[0], [1]]
    same = parse_topology(BOARD.replace("kind: cluster", "kind: socket"), "same.yaml")
    assert exchangeable_groups(same, specs, []) == [[0, 1]]


@pytest.mark.parametrize("items, message", [
    (["link.latency@socket", "link.latency@socket"], "--fit 'link.latency@socket' is given twice$"),
    (["link.latency=2:50", "link.latency@socket=3:40"],
     r"--fit 'link.latency@socket' is given twice \(--fit 'link.latency' stands for every kind of link\)"),
    (["link.latency@socket", "link.latency"],
     r"--fit 'link.latency@socket' is given twice \('link.latency' stands for every kind of link\)"),
])
def test_a_parameter_given_twice_says_which_item_stood_for_it(items, message):
    with pytest.raises(CalibrationError, match=message):
        parse_fit(items, board())


def test_a_change_of_a_kind_must_name_its_field():
    with pytest.raises(TopologyError, match="expected link_kinds.<kind>.<field>, such as link_kinds.cluster.latency"):
        board().with_parameters({"link_kinds.cluster": 5.0})
    with pytest.raises(TopologyError, match=r"links\[0\].kind: expected the name of a link kind, got \['cluster'\]"):
        parse_topology(BOARD.replace("kind: cluster}", "kind: [cluster]}"), "k.yaml")
    with pytest.raises(TopologyError, match="got True .quote it: YAML reads on, off, yes, no as true or false."):
        parse_topology(BOARD.replace("  cluster:\n", "  on:\n"), "k.yaml")


def test_a_kinds_prior_is_its_own_value_and_a_missing_value_names_the_kind():
    """A link of the kind with its own latency does not make the kind's prior; a latency nobody gives names the
    kind as a place to give it."""
    text = BOARD.replace("  - {a: 0, b: 2, kind: socket}", "  - {a: 0, b: 2, kind: socket, latency: 44 ns}").replace(
        "  socket:\n    latency: 30 ns", "  socket:\n    latency: 31 ns")
    (socket,) = parse_fit(["link.latency@socket"], parse_topology(text, "k.yaml"))
    assert socket.prior(parse_topology(text, "k.yaml")) == 31.0
    bare = BOARD.replace("  latency: 30 ns            # assumption\n", "").replace(
        "  cluster:\n    latency: 30 ns          # assumption: calibrate\n", "  cluster: {}\n")
    with pytest.raises(TopologyError, match=r"links\[0\].latency: missing for link 0-1 of kind cluster \(set it in"
                                            r" link_defaults, in link_kinds.cluster or on the link\)"):
        parse_topology(bare, "k.yaml")


SOCKET = "  socket:\n    latency: 30 ns          # assumption: calibrate\n"


@pytest.mark.parametrize("socket", ["  socket: ~                # between sockets\n", "  socket: null\n",
                                    "  socket: {bandwidth: 20 GB/s,}   # c\n",
                                    "  socket: {\n    bandwidth: 20 GB/s,   # per way\n  }\n"])
def test_a_kinds_value_goes_into_an_explicit_null_or_a_mapping_with_a_trailing_comma(socket):
    text = BOARD.replace(SOCKET, socket)
    topo = parse_topology(text, "k.yaml")
    cal = calibrate(topo, synthetic(topo.with_parameters({"link_kinds.socket.latency": 45.0}), ["0.0.r.2"]),
                    fit=["link.latency@socket"], cases=["0.0.r.2"], processes=1)
    warnings = []
    out = calibrated_yaml(cal, text, ["s.json"], warn=warnings.append)
    assert warnings == [] and parse_topology(out, "c.yaml") == cal.topology


def test_a_fitted_bandwidth_replaces_the_signalling_keys_in_place_and_takes_the_boards_scale():
    """The Quartet gives its links' rate as width, clock and double data rate: a fitted bandwidth takes their place
    (the rest of the file as it was), within a tenth to ten times the board's 4 GB/s; a board that gives a bandwidth
    per direction is refused, the fit giving both directions one."""
    from simnuma.calibrate.parameters import RATE_RANGE
    from simnuma.measurements import load_measurements

    quartet = (REPO / "topologies" / "quartet.yaml").read_text()
    topo = parse_topology(quartet, "quartet.yaml")
    (bandwidth,) = parse_fit(["link.bandwidth"], topo)
    assert (bandwidth.low, bandwidth.high) == (4.0 / RATE_RANGE, 4.0 * RATE_RANGE)
    cal = calibrate(topo, load_measurements("quartet-single-thread"), fit=["link.bandwidth"], processes=1)
    warnings = []
    out = calibrated_yaml(cal, quartet, ["q.json"], warn=warnings.append)
    assert warnings == [] and parse_topology(out, "c.yaml") == cal.topology
    assert "  width_bits: 16" not in out and "\n  bandwidth: " in out and "# AMD \"Quartet\" 4P" in out
    asymmetric = BOARD.replace("  bandwidth: 20 GB/s\n", "  bandwidth: {a_to_b: 20 GB/s, b_to_a: 10 GB/s}\n")
    with pytest.raises(CalibrationError, match="link_defaults.bandwidth gives its two directions different"):
        parse_fit(["link.bandwidth"], parse_topology(asymmetric.replace(", kind: cluster", "").replace(
            ", kind: socket", ""), "a.yaml"))
