"""The firmware's SLIT and HMAT, read from sysfs trees, written into the host's board and checked against chases."""
from __future__ import annotations

import shutil
from pathlib import Path

from simnuma.bench.firmware import firmware_disagreements, measured_chase_latencies
from simnuma.bench.host import discover_host
from simnuma.bench.skeleton import host_topology_yaml

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _with_hmat(tmp_path) -> Path:
    """The two-node fixture with an HMAT: node 0's memory as seen from node 0, node 1's from node 1."""
    root = tmp_path / "sys"
    shutil.copytree(FIXTURES / "two_node" / "sys", root)
    for node, latency, bandwidth in ((0, 90, 20000), (1, 95, 19000)):
        folder = root / f"devices/system/node/node{node}/access0/initiators"
        (folder / f"node{node}").mkdir(parents=True)     # a link to the initiator's node in a real sysfs
        (folder / "read_latency").write_text(f"{latency}\n")
        (folder / "write_latency").write_text(f"{latency + 10}\n")
        (folder / "read_bandwidth").write_text(f"{bandwidth}\n")
        (folder / "write_bandwidth").write_text(f"{bandwidth // 2}\n")
    return root


def test_the_hmat_is_read_where_the_kernel_exposes_it(tmp_path):
    assert discover_host(str(FIXTURES / "two_node" / "sys")).hmat == ()
    host = discover_host(str(_with_hmat(tmp_path)))
    assert [(h.target, h.initiators, h.read_latency_ns, h.write_bandwidth_MBps) for h in host.hmat] == [
        (0, (0,), 90, 10000), (1, (1,), 95, 9500)]
    assert host.to_dict()["hmat"][0]["read_bandwidth_MBps"] == 20000
    board = host_topology_yaml(host)
    assert "# the firmware's HMAT" in board and "hmat[1]: initiators [1], read latency 95" in board


def _chase(node, mem, ns) -> tuple:
    return (f"{node}.0.l.{mem}", {"threads": [{"spec": f"{node}.0.l.{mem}", "role": "foreground",
                                               "ns_per_access": {"median": ns}}]})


def test_disagreements_between_the_firmware_and_the_chases(tmp_path):
    host = discover_host(str(_with_hmat(tmp_path)))
    slit = host.distances
    assert slit[0][0] == 10 and slit[0][1] > 10
    agreeing = measured_chase_latencies([_chase(0, 0, 92.0), _chase(0, 1, 92.0 * slit[0][1] / 10), _chase(1, 1, 97.0)])
    assert firmware_disagreements(host, agreeing) == []
    found = firmware_disagreements(host, measured_chase_latencies(
        [_chase(0, 0, 92.0), _chase(0, 1, 400.0), _chase(1, 1, 200.0)]))
    assert any(line.startswith("SLIT says node 0 reaches node 1's memory") for line in found)
    assert any("HMAT says node 1 reads node 1's memory in 95 ns; the chase measured 200 ns" in line for line in found)


def test_a_node_whose_hmat_gives_its_bandwidth_takes_it_as_its_memory_s_peak(tmp_path):
    """Without a documented peak (``--memory-bandwidth``) or measured curves, each node whose HMAT gives a read
    bandwidth (20000 and 19000 MB/s) takes it; with a documented peak given, that one counts for every node."""
    from simnuma.topology import parse_topology

    host = discover_host(str(_with_hmat(tmp_path)))
    board = host_topology_yaml(host, name="hmat")
    assert "  - {id: 0, memory: {bandwidth: 20 GB/s}}   # peak memory bandwidth: the firmware's HMAT" in board
    topo = parse_topology(board, "hmat.yaml")
    assert [topo.node(n).memory_bandwidth_GBps for n in (0, 1)] == [20.0, 19.0]
    given = host_topology_yaml(host, name="hmat", memory_bandwidth_GBps=100.0)
    assert "the firmware's HMAT (read" not in given
    assert [parse_topology(given, "g.yaml").node(n).memory_bandwidth_GBps for n in (0, 1)] == [100.0, 100.0]


def _socket_and_cxl(read_MBps: int = 30000):
    """A socket (node 0) and a CXL memory (node 1, no CPUs) whose HMAT gives its read bandwidth."""
    from simnuma.bench.host import Host, HmatEntry, HostNode

    nodes = (HostNode(0, (0, 1, 2, 3), 1 << 34, 1 << 33), HostNode(1, (), 1 << 36, 1 << 35))
    hmat = (HmatEntry(0, (0,), 90, 90, 200000, 200000), HmatEntry(1, (0,), 250, 250, read_MBps, read_MBps))
    return Host("/x", nodes, ((10, 14), (14, 10)), (), 0, None, None, "test CPU", "Linux 6", True, hmat=hmat)


def test_a_memory_only_node_keeps_its_hmat_bandwidth_whatever_the_sockets_take():
    """The documented peak (``--memory-bandwidth``) is the sockets' DRAM; the CXL memory keeps the HMAT's 30 GB/s,
    and under measured curves (the sockets' DRAM again) it becomes a memory of its own at that bandwidth."""
    from simnuma.bench.curves import Curve, CurvePoint
    from simnuma.topology import parse_topology

    host = _socket_and_cxl()
    given = parse_topology(host_topology_yaml(host, name="g", memory_bandwidth_GBps=307.2), "g.yaml")
    assert [given.node(n).memory_bandwidth_GBps for n in (0, 1)] == [307.2, 30.0]
    points = ((1.0, 100.0), (100.0, 150.0), (200.0, 300.0))
    curves = [Curve("r", 0, "0.0.l.0", tuple(CurvePoint(b, ns, f"case{k}", b) for k, (b, ns) in enumerate(points)),
                    1.0)]
    text = host_topology_yaml(host, name="c", curves=curves)
    assert "not the curves of the sockets' DRAM" in text
    measured = parse_topology(text, "c.yaml")
    assert measured.node(0).memory_model == "curve"
    assert measured.node(1).memory_model == "fifo" and measured.node(1).memory_bandwidth_GBps == 30.0


def test_a_memory_only_node_without_an_hmat_says_what_it_takes():
    host = _socket_and_cxl()
    bare = type(host)(**{**host.__dict__, "hmat": ()})
    text = host_topology_yaml(bare, name="g", memory_bandwidth_GBps=307.2)
    assert "its memory takes the defaults' peak, the sockets' DRAM: give it its own" in text
