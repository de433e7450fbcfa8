"""A memory-only node (CXL memory, HBM in flat mode): arrays go there, threads do not, probes skip it, and the
matrices and exports give it a column but no row."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import simnuma
from simnuma import load_topology, simulate
from simnuma.cli import main
from simnuma.errors import SpecError, TopologyError
from simnuma.formats.export import export, slit_distances
from simnuma.formats.matrix import compute_matrices, mlc_text
from simnuma.formats.imports import parse_mlc
from simnuma.topology import parse_topology

DUAL_TEXT = (Path(simnuma.__file__).resolve().parent.parent / "topologies" / "dual.yaml").read_text()


def with_memory_node(text: str = DUAL_TEXT) -> str:
    """The two-socket board with a memory-only node 2 hanging off socket 0 (as a CXL memory device would)."""
    text = text.replace("name: dual", "name: dual-cxl", 1)
    text = text.replace("  - {id: 1}\nlinks:", "  - {id: 1}\n  - {id: 2, cores: 0}\nlinks:", 1)
    text = text.replace("  - {a: 0, b: 1}", "  - {a: 0, b: 1}\n  - {a: 0, b: 2}", 1)
    return text.replace("layout: {0: [0, 0], 1: [1, 0]}", "layout: {0: [0, 0], 1: [1, 0], 2: [0, 1]}")


@pytest.fixture(scope="module")
def board():
    return parse_topology(with_memory_node(), "dual-cxl.yaml")


def test_the_board_knows_where_threads_run(board):
    assert board.node_ids == (0, 1, 2) and board.core_node_ids == (0, 1)
    assert board.node(2).cores == 0


def test_a_thread_on_it_is_refused_in_one_line(board):
    with pytest.raises(SpecError, match="node 2 has no cores \\(a memory-only node\\): it holds arrays, it runs no"):
        simulate(board, ["2.0.r.2"])


def test_a_board_without_any_core_is_refused():
    text = with_memory_node().replace("  cores: 2 ", "  cores: 0 ", 1)
    with pytest.raises(TopologyError, match="defaults.cores: no node has a core"):
        parse_topology(text, "none.yaml")


def test_its_memory_serves_threads_and_no_probe_goes_to_it(board):
    r = simulate(board, ["0.0.r.2", "1.0.w.2"], size_bytes=4 << 20)
    assert [m.node for m in r.memory if m.bandwidth_GBps > 0] == [2]
    plain = simulate(load_topology("dual"), ["0.0.r.1"], size_bytes=4 << 20)
    alone = simulate(board, ["0.0.r.1"], size_bytes=4 << 20)
    # node 2 has no cache: a read homed on node 1 probes node 0 only, as on the board without node 2
    assert alone.makespan_ns == pytest.approx(plain.makespan_ns, rel=0.01)
    to_node_2 = {(l.src, l.dst): l.bytes for l in alone.links if 2 in (l.src, l.dst)}
    assert to_node_2 == {(0, 2): 0.0, (2, 0): 0.0}
    analytic = simnuma.analyze(board, ["0.0.r.1"], size_bytes=4 << 20)
    assert analytic.makespan_ns == pytest.approx(alone.makespan_ns, rel=0.05)


def test_matrices_give_it_a_column_and_no_row(board, tmp_path):
    m = compute_matrices(board, 2, tmp_path / "cache", parts=("latency", "bandwidth"))
    assert m.nodes == (0, 1, 2) and m.rows == (0, 1)
    assert len(m.latency_ns) == 2 and all(len(row) == 3 for row in m.latency_ns)
    assert m.latency_ns[0][2] < m.latency_ns[1][2]      # one hop nearer socket 0 than socket 1
    data = parse_mlc(mlc_text(m))
    assert {i for i, _ in data["latency"]} == {0, 1} and {j for _, j in data["latency"]} == {0, 1, 2}
    dist = slit_distances(m)
    assert dist[2][2] == 10 and dist[2][0] == dist[0][2] and dist[2][1] == dist[1][2]
    numactl = export("numactl", board, m, 1024)
    assert "\nnode 2 cpus:\nnode 2 size: 1024 MB\n" in numactl
    qemu = export("qemu", board, m, 256)
    assert "-numa node,nodeid=2,memdev=mem2,initiator=0" in qemu
    assert "initiator=2," not in qemu
    if shutil.which("qemu-system-x86_64"):
        options = " ".join(line for line in qemu.splitlines() if not line.startswith("#")).split()
        try:
            run = subprocess.run(["qemu-system-x86_64", *options, "-nodefaults", "-display", "none", "-S",
                                  "-no-user-config", "-accel", "tcg", "-monitor", "none", "-serial", "none"],
                                 capture_output=True, text=True, timeout=5)
            pytest.fail(f"qemu refused the options (exit {run.returncode}): {run.stderr.strip()}")
        except subprocess.TimeoutExpired:
            pass
    lstopo = shutil.which("lstopo-no-graphics") or shutil.which("lstopo")
    if lstopo:
        xml = tmp_path / "cxl.xml"
        xml.write_text(export("hwloc", board, m, 1024))
        shown = subprocess.run([lstopo, "--input", str(xml), "--of", "console", "-p"], capture_output=True,
                               text=True)
        assert shown.returncode == 0 and "NUMANode P#2" in shown.stdout, shown.stderr


def test_sweeps_place_no_thread_on_it(board):
    from simnuma.sweeps.spec import CaseSet
    from simnuma.sweeps.workloads import plan_cases

    cases = plan_cases(CaseSet("single", ops=("r",), label="single"), board)
    assert {c.case.threads[0].split(".")[0] for c in cases} == {"0", "1"}
    assert {c.case.threads[0].split(".")[-1] for c in cases} == {"0", "1", "2"}


def test_run_and_topo_check_from_the_command_line(tmp_path, capsys):
    path = tmp_path / "dual-cxl.yaml"
    path.write_text(with_memory_node())
    assert main(["topo", "check", str(path)]) == 0
    assert main(["run", str(path), "0.0.w.2", "--size", "1MiB"]) == 0
    assert "0.0.w.2" in capsys.readouterr().out
    assert main(["run", str(path), "2.0.r.0", "--size", "1MiB"]) == 2
    assert "memory-only node" in capsys.readouterr().err


def first_node_memory_only() -> str:
    """A board whose node 0 is the memory-only one, behind node 1: ids 0 (memory), 1 and 2 (sockets)."""
    text = DUAL_TEXT.replace("name: dual", "name: memory-first", 1)
    text = text.replace("  - {id: 0}\n  - {id: 1}\nlinks:", "  - {id: 0, cores: 0}\n  - {id: 1}\n  - {id: 2}\nlinks:", 1)
    text = text.replace("  - {a: 0, b: 1}", "  - {a: 0, b: 1}\n  - {a: 1, b: 2}", 1)
    text = text.replace("  - {node: 0}\n  - {node: 1}", "  - {node: 1}\n  - {node: 2}", 1)
    return text.replace("layout: {0: [0, 0], 1: [1, 0]}", "layout: {0: [0, 0], 1: [1, 0], 2: [2, 0]}")


def test_a_memory_only_first_node_keeps_the_baseline_mlc_import_and_sweeps_on_nodes_with_cores(tmp_path):
    from simnuma.case import baseline_case
    from simnuma.formats.imports import reference_yaml
    from simnuma.sweeps.spec import CaseSet
    from simnuma.sweeps.workloads import plan_cases

    board = parse_topology(first_node_memory_only(), "first.yaml")
    assert baseline_case(board).threads == ("1.0.r.1",)
    mlc = ("Measuring idle latencies (in ns)...\n\t\tNuma node\nNuma node\t     0\t     1\t     2\n"
           "       1\t 150.0\t 100.0\t 130.0\n       2\t 170.0\t 130.0\t 100.0\n\n"
           "Measuring Loaded Latencies for the system\nUsing Read-only traffic type\nInject\tLatency\tBandwidth\n"
           "Delay\t(ns)\tMB/sec\n==========================\n 00000\t300.00\t  9000.0\n 05000\t110.00\t   400.0\n")
    import yaml

    doc = yaml.safe_load(reference_yaml("mlc", mlc, board, "first.txt"))
    loaded = [m for m in doc["measurements"] if "+" in m["case"]]
    assert loaded and all(m["case"].startswith("1.0.l.1 + ") for m in loaded)
    crossfire = plan_cases(CaseSet("crossfire", ops=("w",), label="crossfire"), board)
    assert {c.case.threads for c in crossfire if c.kind == "crossfire"} == {("1.0.w.2", "2.0.w.1")}


def test_a_sweep_says_when_a_set_plans_no_case_on_a_board(tmp_path, capsys):
    board = tmp_path / "middle.yaml"    # the memory node between the sockets: no link joins two nodes with cores
    text = DUAL_TEXT.replace("name: dual", "name: middle", 1)
    text = text.replace("  - {id: 0}\n  - {id: 1}\nlinks:", "  - {id: 0}\n  - {id: 1, cores: 0}\n  - {id: 2}\nlinks:", 1)
    text = text.replace("  - {a: 0, b: 1}", "  - {a: 0, b: 1}\n  - {a: 1, b: 2}", 1)
    text = text.replace("  - {node: 0}\n  - {node: 1}", "  - {node: 0}\n  - {node: 2}", 1)
    board.write_text(text.replace("layout: {0: [0, 0], 1: [1, 0]}", "layout: {0: [0, 0], 1: [1, 0], 2: [2, 0]}"))
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(f"name: middle\nboards: [{board}]\ncases:\n  - {{set: crossfire, op: r}}\n  - 0.0.r.2\n"
                     "size: 1 MiB\nrank: [mean_time_percent]\n")
    code = main(["sweep", str(sweep), "-o", str(tmp_path / "out"), "--jobs", "1"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "note: middle: the set crossfire r plans no case on it" in captured.err
    assert "Note: middle: the set crossfire r plans no case on it" in (tmp_path / "out" / "summary.md").read_text()



def pooled(routing: str = "shortest"):
    """The Quartet square with node 0 a memory pool that sockets 1 and 2 share (each also linked to socket 3)."""
    return load_topology("quartet").with_parameters({"nodes.0.cores": 0, "routing": routing})


@pytest.mark.parametrize("routing", ["shortest", "updown"])
def test_a_memory_pool_between_sockets_passes_no_traffic_between_them(routing):
    """1->2 goes by socket 3, not through the pool, which holds memory and routes nothing (both are two hops, and
    the pool has the lower id); the pool's own traffic takes the shortest way."""
    board = pooled(routing)
    assert board.route(1, 2) == (1, 3, 2) and board.route(2, 1) == (2, 3, 1)
    assert board.route(1, 0) == (1, 0) and board.route(3, 0) == (3, 1, 0)
    assert board.relabel({0: 3, 1: 2, 2: 1, 3: 0}).route(2, 1) == (2, 0, 1)
    with_cores = load_topology("quartet").with_parameters({"routing": routing})
    assert with_cores.route(1, 2) == (1, 0, 2)


def test_a_memory_only_node_forwards_where_nothing_else_joins_two_sockets():
    board = load_topology("quartet").with_parameters({"nodes.0.cores": 0, "nodes.3.cores": 0})
    assert board.route(1, 2) == (1, 0, 2)
