"""The board description written from a host: valid for the topology loader, links from the distances."""
from __future__ import annotations

import shutil

import pytest
from benchutil import FIXTURE_NAMES, call_cli, run_cli, sysfs

from simnuma.bench.host import discover_host
from simnuma.bench.skeleton import host_topology_yaml, infer_links
from simnuma.topology import parse_topology

EXPECTED_LINKS = {
    "two_node": [(0, 1)],
    "four_node": [(0, 1), (0, 2), (1, 3), (2, 3)],  # the Quartet's square, from SLIT 16/22
    "sparse": [(0, 2), (2, 3)],
}


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_boards_load(name):
    host = discover_host(sysfs(name))
    topo = parse_topology(host_topology_yaml(host, name=f"fixture-{name}"), f"{name}.yaml")
    assert topo.node_ids == host.node_ids
    assert [(link.a, link.b) for link in topo.links] == EXPECTED_LINKS[name]
    for node in host.nodes:
        assert topo.node(node.id).cores == max(1, len(node.cpus))


def test_quartet_square_routes_two_hops_diagonally():
    topo = parse_topology(host_topology_yaml(discover_host(sysfs("four_node")), name="q"), "q.yaml")
    assert topo.hops(0, 3) == 2 and topo.hops(1, 2) == 2 and topo.hops(0, 1) == 1


def test_distances_and_memory_are_kept_as_comments():
    text = host_topology_yaml(discover_host(sysfs("sparse")), name="s")
    assert "#   distance_nodes: [0, 2, 3]" in text
    assert "#   distance[3]: [30, 20, 10]" in text
    assert "#   node 2: cpus [4,5,8], memory 4 GiB" in text
    assert "- {id: 3}   # no memory on this host (memoryless node): place no array here" in text


def test_parameters_are_marked_as_assumptions():
    text = host_topology_yaml(discover_host(sysfs("two_node")), name="t")
    for key in ("window:", "bandwidth: 25.6 GB/s", "latency: 90 ns", "lookup:", "latency: 40 ns"):
        line = next(line for line in text.splitlines() if key in line)
        assert "assumption" in line, line


def test_this_host_loads():
    topo = parse_topology(host_topology_yaml(discover_host()), "host.yaml")
    assert len(topo.nodes) == len(discover_host().nodes)


def test_this_hosts_sysfs_however_written_is_this_host():
    """``--sysfs /sys/`` is this machine's sysfs, not a copy of another's: same CPU model, kernel and name."""
    plain = discover_host()
    for written in ("/sys/", "//sys", "/sys/devices/.."):
        host = discover_host(written)
        assert host.sysfs_root == "/sys"
        assert (host.cpu_model, host.kernel) == (plain.cpu_model, plain.kernel)
        assert [(n.id, n.cpus, n.memory_total_bytes, n.free_source) for n in host.nodes] == [
            (n.id, n.cpus, n.memory_total_bytes, n.free_source) for n in plain.nodes]


def test_unambiguous_distances_give_no_notes():
    square = ((10, 16, 16, 22), (16, 10, 22, 16), (16, 22, 10, 16), (22, 16, 16, 10))
    inference = infer_links([0, 1, 2, 3], square)
    assert inference.links == [(0, 1), (0, 2), (1, 3), (2, 3)] and not inference.ambiguous


def test_clustered_distances_are_connected_and_flagged():
    """Two sockets of two sub-NUMA clusters: every cluster is as far from each of the other socket's, so each pair
    is linked (one bridge would put a pair at distance 21 three hops apart, another one hop) and the file says
    the distances do not give the count."""
    snc = ((10, 11, 21, 21), (11, 10, 21, 21), (21, 21, 10, 11), (21, 21, 11, 10))
    inference = infer_links([0, 1, 2, 3], snc)
    assert inference.links == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    assert inference.ambiguous
    assert any("linked every pair at distance 21 between the groups they leave apart (4 links: 0-2, 0-3, 1-2, 1-3)"
               in note for note in inference.notes)
    assert not any("rank some pairs differently" in note for note in inference.notes)


def test_two_sockets_of_four_nodes_each_keep_the_distances_order():
    """EPYC NPS4 (10/12 within a socket, 32 across): hop counts rank every pair as the distances do."""
    near, far = 12, 32
    rows = tuple(tuple(10 if i == j else near if i // 4 == j // 4 else far for j in range(8)) for i in range(8))
    inference = infer_links(range(8), rows)
    assert len(inference.links) == 6 + 6 + 16
    assert not any("rank some pairs differently" in note for note in inference.notes)


def test_asymmetric_distances_are_noted():
    inference = infer_links([0, 1], ((10, 20), (22, 10)))
    assert inference.links == [(0, 1)]
    assert any("0->1 is 20 but 1->0 is 22" in note for note in inference.notes)


def test_missing_distances_assume_a_chain():
    inference = infer_links([0, 2, 5], None)
    assert inference.links == [(0, 2), (2, 5)] and inference.ambiguous


def test_ambiguity_notes_are_written_into_the_file():
    from simnuma.bench.host import Host, HostNode

    nodes = tuple(HostNode(i, (2 * i, 2 * i + 1), 1 << 30, 1 << 29) for i in range(4))
    snc = ((10, 11, 21, 21), (11, 10, 21, 21), (21, 21, 10, 11), (21, 21, 11, 10))
    host = Host("/x", nodes, snc, (), 0, None, None, "test CPU", "Linux 6", True)
    text = host_topology_yaml(host, name="snc")
    assert "# links: the nearest pairs do not connect every node; linked every pair at distance 21" in text
    parse_topology(text, "snc.yaml")


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_cli_host_file_passes_topo_check(name, tmp_path, capsys):
    target = tmp_path / f"{name}.yaml"
    code, out, err = call_cli(capsys, "bench", "host", "--sysfs", sysfs(name), "-o", target)
    assert code == 0 and out == f"wrote {target}\n", err
    code, out, err = call_cli(capsys, "topo", "check", target)
    assert code == 0 and "ok" in out, err


def test_a_copy_of_another_machines_sysfs_is_named_after_its_folder_not_this_host(tmp_path, capsys):
    root = tmp_path / "epyc" / "sys"
    shutil.copytree(sysfs("two_node"), root)
    code, out, err = call_cli(capsys, "bench", "host", "--sysfs", root)
    assert code == 0, err
    assert "\nname: host-epyc\n" in out
    assert f"# Board description of a machine, written by `simnuma bench host` from {root}." in out
    assert "# CPU: unknown; kernel: unknown;" in out


def test_cli_host_of_this_machine_in_a_fresh_process(tmp_path):
    target = tmp_path / "host.yaml"
    written = run_cli("bench", "host", "--name", "here", "-o", target)
    assert written.returncode == 0, written.stderr
    checked = run_cli("topo", "check", target)
    assert checked.returncode == 0, checked.stderr
    assert "\nname: here\n" in target.read_text()


def test_memory_peak_from_the_specification_is_written_with_its_source(tmp_path, capsys):
    target = tmp_path / "spec.yaml"
    code, out, err = call_cli(capsys, "bench", "host", "--sysfs", sysfs("two_node"), "-o", target,
                              "--memory-bandwidth", "307.2 GB/s", "--memory-source", "8 x DDR5-4800 (vendor sheet)")
    assert code == 0, err
    topo = parse_topology(target.read_text(), "spec.yaml")
    assert all(n.memory_bandwidth_GBps == pytest.approx(307.2) for n in topo.nodes)
    assert "peak DRAM bandwidth per node: 8 x DDR5-4800 (vendor sheet)" in target.read_text()


def test_without_a_memory_peak_the_placeholder_says_how_to_give_one():
    text = host_topology_yaml(discover_host(sysfs("two_node")), name="t")
    line = next(l for l in text.splitlines() if l.strip().startswith("bandwidth:") and "DRAM" in l)
    assert "assumption" in line and "--memory-bandwidth" in line


@pytest.mark.parametrize("args, message", [
    (["--memory-bandwidth", "4 furlongs"], "--memory-bandwidth: unknown unit 'furlongs'"),
    (["--memory-bandwidth", "0 GB/s"], "--memory-bandwidth: expected a positive bandwidth"),
    (["--memory-source", "a sheet"], "give --memory-bandwidth too"),
    (["--memory-bandwidth", "1e30 GB/s"], "--memory-bandwidth: '1e30 GB/s' is implausible"),
    (["--name", ""], "--name '': expected a board name on one line"),
    (["--name", "a\nb"], "--name 'a\\nb': expected a board name on one line"),
    (["-o", ""], "-o '': an empty path names no file"),
])
def test_bad_memory_options_are_one_line(args, message, capsys):
    code, out, err = call_cli(capsys, "bench", "host", "--sysfs", sysfs("two_node"), *args)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("name", ["a: b", "#1", "12", "true", "[x", "host-1", "1e5", "1:30"])
def test_any_one_line_name_makes_a_board_of_that_name(name, tmp_path, capsys):
    target = tmp_path / "named.yaml"
    code, out, err = call_cli(capsys, "bench", "host", "--sysfs", sysfs("two_node"), "--name", name, "-o", target)
    assert code == 0, err
    assert parse_topology(target.read_text(), "named.yaml").name == name


def test_a_node_without_cpus_is_a_memory_only_node_of_the_board():
    """CXL memory or HBM in flat mode: sysfs lists a node with memory and no CPUs."""
    from simnuma.bench.host import Host, HostNode

    nodes = (HostNode(0, (0, 1, 2, 3), 1 << 34, 1 << 33), HostNode(1, (), 1 << 36, 1 << 35))
    host = Host("/x", nodes, ((10, 20), (20, 10)), (), 0, None, None, "test CPU", "Linux 6", True)
    text = host_topology_yaml(host, name="cxl")
    assert "  - {id: 1, cores: 0}   # no CPUs on this host (a memory-only node" in text
    topo = parse_topology(text, "cxl.yaml")
    assert topo.core_node_ids == (0,) and topo.node(1).cores == 0


def test_a_node_with_other_cores_gets_queues_for_its_own_cores():
    from simnuma.bench.host import Host, HostNode
    from simnuma.bench.skeleton import QUEUE_PER_CORE, SRI_PER_CORE

    nodes = (HostNode(0, tuple(range(8)), 1 << 34, 1 << 33), HostNode(1, tuple(range(8, 16)), 1 << 34, 1 << 33),
             HostNode(2, tuple(range(16, 48)), 1 << 34, 1 << 33))
    host = Host("/x", nodes, ((10, 20, 20), (20, 10, 20), (20, 20, 10)), (), 0, None, None, "test CPU", "Linux 6",
                True)
    topo = parse_topology(host_topology_yaml(host, name="uneven"), "uneven.yaml")
    assert [topo.node(i).cores for i in (0, 1, 2)] == [8, 8, 32]
    assert topo.node(0).sri_buffers["request"] == QUEUE_PER_CORE          # at least one core's misses
    assert topo.node(2).sri_buffers["request"] == 32 * SRI_PER_CORE and topo.node(2).mct_buffers["probe"] == 1536
    assert topo.node(2).sri_probe_queue == 32 * QUEUE_PER_CORE
    assert topo.node(0).memory_queue == topo.node(2).memory_queue    # the memory's queue is not per core


def test_links_of_different_distances_are_kinds_of_their_own():
    """Two sockets of two sub-NUMA clusters: the links within a socket (11) and across (21) are of different
    kinds, each with a latency from its distance for calibrate to fit, each link with its distance; the
    two-node fixture's one link just has its own."""
    from dataclasses import replace

    host = discover_host(sysfs("four_node"))
    snc = ((10, 11, 21, 21), (11, 10, 21, 21), (21, 21, 10, 11), (21, 21, 11, 10))
    text = host_topology_yaml(replace(host, distances=snc), name="snc")
    assert "link_kinds:                 # the links join nodes at 2 distances" in text
    assert "  - {a: 0, b: 1, kind: distance-11}   # distance 11" in text
    assert "  - {a: 0, b: 2, kind: distance-21}   # distance 21" in text
    two = host_topology_yaml(discover_host(sysfs("two_node")), name="two")
    assert "link_kinds" not in two and "  - {a: 0, b: 1}   # distance 21" in two
    topo = parse_topology(text, "snc.yaml")
    latency = {link.kind: link.latency_ns for link in topo.links}
    assert latency == {"distance-11": round(0.05 * 90), "distance-21": round(0.55 * 90)}   # (d - 10) / 20 x 90 ns
    assert topo.link_kinds == ("distance-11", "distance-21")


def test_a_remote_peak_gives_the_bandwidth_of_the_kind_of_link_it_crossed():
    """Two sockets of two clusters: the suite's remote peaks read the other cluster (one hop, distance 11) and the
    other socket (one hop, distance 21) at 90 and 40 GB/s; each kind's bandwidth starts from what its link carried.
    A read two hops away says nothing of one link, and a host whose links are alike takes one in link_defaults."""
    from dataclasses import replace

    host = discover_host(sysfs("four_node"))
    snc = ((10, 11, 21, 21), (11, 10, 21, 21), (21, 21, 10, 11), (21, 21, 11, 10))
    peaks = {(0, 1): 90.0, (0, 2): 40.0, (1, 2): 45.0}
    topo = parse_topology(host_topology_yaml(replace(host, distances=snc), name="snc", remote_peaks=peaks), "s.yaml")
    assert {link.kind: link.bandwidth_ab_GBps for link in topo.links} == {"distance-11": 90.0, "distance-21": 45.0}
    square = parse_topology(host_topology_yaml(host, name="square", remote_peaks={(0, 3): 10.0, (0, 1): 12.5}),
                            "q.yaml")                       # node 3 is two hops from node 0 on the square
    assert {link.bandwidth_ab_GBps for link in square.links} == {12.5}
    assert "at least the 12.5 GB/s of data every CPU of node 0 read from node 1's memory" in host_topology_yaml(
        host, name="square", remote_peaks={(0, 1): 12.5})


def _rows(matrix: str) -> tuple:
    return tuple(tuple(int(v) for v in line.split()) for line in matrix.strip().splitlines())


def test_a_memory_pool_shared_by_two_sockets_hangs_off_both_and_joins_neither():
    """Two sockets 21 apart and a CXL pool 20 from each: the sockets are linked to each other, the pool to both
    (it is not a node between them, though 20 < 21)."""
    inference = infer_links([0, 1, 2], _rows("10 21 20\n21 10 20\n20 20 10"), cpuless=[2])
    assert inference.links == [(0, 1), (0, 2), (1, 2)]
    assert any("node 2 has no CPUs" in note and "nodes with CPUs, 0, 1 (distance 20)" in note for note in inference.notes)
    without = infer_links([0, 1, 2], _rows("10 21 20\n21 10 20\n20 20 10"))
    assert without.links == [(0, 2), (1, 2)]     # read as sockets, the pool would be the sockets' only way


def test_memory_devices_hang_off_their_nearest_node_and_their_distances_to_each_other_are_left_out():
    """Two sockets of two clusters (12 within, 21 apart), each cluster with an HBM node 13 from it; the HBM nodes
    are 12 from each other within a socket, which says nothing of a link between them."""
    rows = _rows("""
        10 12 21 21 13 14 23 23
        12 10 21 21 14 13 23 23
        21 21 10 12 23 23 13 14
        21 21 12 10 23 23 14 13
        13 14 23 23 10 12 21 21
        14 13 23 23 12 10 21 21
        23 23 13 14 21 21 10 12
        23 23 14 13 21 21 12 10""")
    inference = infer_links(range(8), rows, cpuless=[4, 5, 6, 7])
    hbm = [(a, b) for a, b in inference.links if max(a, b) >= 4]
    assert hbm == [(0, 4), (1, 5), (2, 6), (3, 7)]
    assert (0, 1) in inference.links and (2, 3) in inference.links
