"""MLC-style matrices and the exports, checked by the tools that read them where they are installed."""
from __future__ import annotations

import json
import shutil
import subprocess
from types import SimpleNamespace

import pytest

from simnuma import load_topology
from simnuma.cli import main
from simnuma.formats.export import _hmat_bandwidths_MBps, _hwloc_bitmap, export, slit_distances
from simnuma.formats.matrix import Matrices, compute_matrices, matrices_csv, mlc_text

DUAL = load_topology("dual")
QUARTET = load_topology("quartet")


@pytest.fixture(scope="module")
def dual(tmp_path_factory):
    return compute_matrices(DUAL, 2, tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def quartet(tmp_path_factory):
    return compute_matrices(QUARTET, 2, tmp_path_factory.mktemp("cache"), parts=("latency", "bandwidth"))


def test_the_matrices_say_what_distance_costs(dual, quartet):
    assert dual.latency_ns[0][0] < dual.latency_ns[0][1] and dual.latency_ns[1][1] < dual.latency_ns[1][0]
    assert dual.node_bandwidth_GBps[0][0] > dual.node_bandwidth_GBps[0][1]
    hops = QUARTET.hop_matrix()
    for i in range(4):
        for j in range(4):
            for k in range(4):
                if hops[i][j] < hops[i][k]:
                    assert quartet.latency_ns[i][j] < quartet.latency_ns[i][k]
    for points in dual.loaded.values():     # more load, more bandwidth on the memory and a slower chase
        assert [bw for _, bw, _ in points] == sorted(bw for _, bw, _ in points)
        assert points[-1][2] > 2 * points[0][2]


def test_mlc_layout_and_csv(dual):
    text = mlc_text(dual)
    assert "Measuring idle latencies (in ns)..." in text and "Numa node" in text
    rows = [line.split("\t") for line in text.splitlines() if line.startswith("      0\t")]
    assert float(rows[0][-2]) == pytest.approx(dual.latency_ns[0][0], abs=0.06)
    csv_rows = matrices_csv(dual).splitlines()
    assert csv_rows[0] == "measurement,from_node,to_node,offered_share_of_peak,value,unit,board,board_hash,seed,version"
    assert len(csv_rows) == 1 + 3 * 4 + 2 * 2 * 6
    trace = f",dual,{dual.board_hash},{dual.seed},{dual.version}"
    assert all(row.endswith(trace) for row in csv_rows[1:])
    loaded = [row.split(",") for row in csv_rows if row.startswith("loaded_latency,")]
    assert {(row[1], row[2]) for row in loaded} == {("0", "0"), ("1", "1")}   # each node's own core 0 chased


def test_slit_is_firmware_like(quartet):
    dist = slit_distances(quartet)
    hops = QUARTET.hop_matrix()
    for i in range(4):
        assert dist[i][i] == 10
        for j in range(4):
            if i != j:
                assert 11 <= dist[i][j] <= 254
                assert (dist[i][j] > 12) == (hops[i][j] == 2)   # one hop 12, two hops 15 on the Quartet
    assert dist == [list(r) for r in zip(*dist)]               # the square is symmetric


def test_numactl_hardware_layout(quartet):
    text = export("numactl", QUARTET, quartet, 2048)
    assert text.startswith("available: 4 nodes (0-3)\nnode 0 cpus: 0 1\nnode 0 size: 2048 MB\n")
    assert "node distances:\nnode    0   1   2   3\n  0:   10  12  12  15\n" in text


@pytest.mark.skipif(shutil.which("iasl") is None, reason="iasl (Debian acpica-tools) is not installed")
def test_iasl_compiles_the_acpi_slit(quartet, tmp_path):
    source = tmp_path / "slit.dsl"
    source.write_text(export("acpi", QUARTET, quartet))
    run = subprocess.run(["iasl", str(source)], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    table = (tmp_path / "slit.aml").read_bytes()
    assert table[:4] == b"SLIT" and len(table) == 44 + 16 and sum(table) % 256 == 0
    assert list(table[44:48]) == slit_distances(quartet)[0]


def test_the_acpi_slit_of_a_board_with_any_name_is_ascii_for_iasl(quartet, tmp_path):
    """iasl reads ASCII only and takes an OEM Table ID of 8 characters: a board named 'réseau "ö" */ x' keeps its
    ASCII letters and digits there, and its comment cannot end early."""
    from dataclasses import replace

    text = export("acpi", QUARTET, replace(quartet, board='réseau "ö" */ x'))
    text.encode("ascii")
    assert '"RSEAUX  "' in text and text.count("*/") == 1
    if shutil.which("iasl"):
        (tmp_path / "named.dsl").write_text(text)
        run = subprocess.run(["iasl", "named.dsl"], capture_output=True, text=True, cwd=tmp_path)
        assert run.returncode == 0 and (tmp_path / "named.aml").exists(), run.stdout + run.stderr


@pytest.mark.skipif(shutil.which("lstopo-no-graphics") is None and shutil.which("lstopo") is None,
                    reason="hwloc's lstopo (Debian hwloc-nox) is not installed")
def test_lstopo_reads_the_hwloc_xml(quartet, tmp_path):
    lstopo = shutil.which("lstopo-no-graphics") or shutil.which("lstopo")
    xml = tmp_path / "quartet.xml"
    xml.write_text(export("hwloc", QUARTET, quartet, 2048))
    shown = subprocess.run([lstopo, "--input", str(xml), "--distances"], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert "NUMALatency" in shown.stdout and "    0    10    12    12    15" in shown.stdout
    attrs = subprocess.run([lstopo, "--input", str(xml), "--memattrs"], capture_output=True, text=True)
    assert attrs.returncode == 0 and "name `Bandwidth'" in attrs.stdout and "name `Latency'" in attrs.stdout
    latency_00 = round(quartet.latency_ns[0][0])
    assert f"NUMANode L#0 = {latency_00} from cpuset 0x00000003" in attrs.stdout


@pytest.mark.skipif(shutil.which("qemu-system-x86_64") is None,
                    reason="qemu-system-x86_64 (Debian qemu-system-x86) is not installed")
def test_qemu_takes_the_numa_options(quartet):
    _qemu_accepts(export("qemu", QUARTET, quartet, 256))


def test_the_commands(tmp_path, capsys):
    assert main(["matrix", "dual", "--json", "--csv", str(tmp_path / "m.csv"), "--cache", str(tmp_path / "c")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["board"] == "dual" and len(data["idle_latency_ns"]) == 2 and data["board_hash"]
    assert (tmp_path / "m.csv").read_text().startswith("measurement,")
    assert main(["export", "slit", "dual", "--cache", str(tmp_path / "c"), "-o", str(tmp_path / "s.txt")]) == 0
    assert "   0   10  " in (tmp_path / "s.txt").read_text()
    assert main(["export", "numactl", "dual", "--memory", "lots"]) == 2
    assert "--memory: expected a size" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:   # argparse refuses an unknown format in one line
        main(["export", "nope", "dual"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err


class _Board:
    """What the exports read of a board: its node ids and each node's cores."""

    def __init__(self, cores: dict):
        self.cores = cores
        self.node_ids = tuple(cores)

    def node(self, nid):
        return SimpleNamespace(cores=self.cores[nid])


def _matrices(ids, local_GBps=150.0, remote_GBps=10.0) -> Matrices:
    n = len(ids)
    latency = [[90.0 if i == j else 140.0 for j in range(n)] for i in range(n)]
    bandwidth = [[local_GBps if i == j else remote_GBps for j in range(n)] for i in range(n)]
    return Matrices("wide", "0123456789ab", tuple(ids), latency, bandwidth, bandwidth, {}, 1, "0.1.0")


def _qemu_accepts(text: str) -> None:
    options = " ".join(line for line in text.splitlines() if not line.startswith("#")).split()
    command = ["qemu-system-x86_64", *options, "-nodefaults", "-display", "none", "-S", "-no-user-config",
               "-accel", "tcg", "-monitor", "none", "-serial", "none"]
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=5)
    except subprocess.TimeoutExpired:
        return   # built and paused: every option was taken
    pytest.fail(f"qemu refused the options (exit {run.returncode}): {run.stderr.strip()}")


def test_node_ids_and_cpu_sets_as_the_tools_write_them():
    text = export("numactl", _Board({0: 1, 1: 1, 3: 1, 5: 1, 6: 1, 7: 1}), _matrices([0, 1, 3, 5, 6, 7]), 1024)
    assert text.startswith("available: 6 nodes (0-1,3,5-7)\n")
    assert _hwloc_bitmap([0, 1]) == "0x00000003" and _hwloc_bitmap([]) == "0x00000000"
    assert _hwloc_bitmap(range(33)) == "0x00000001,0xffffffff"
    assert _hwloc_bitmap([64]) == "0x00000001,0x00000000,0x00000000"
    text = export("numactl", _Board({0: 2, 2: 2}), _matrices([0, 2]), 1024)
    assert text.startswith("available: 2 nodes (0,2)\n")


@pytest.mark.parametrize("local_GBps", [1.7, 65.0, 150.0, 460.0])
def test_hmat_bandwidths_fit_qemus_sixteen_bit_entries(local_GBps):
    rows, step = _hmat_bandwidths_MBps(_matrices([0, 1], local_GBps, 0.9).node_bandwidth_GBps)
    values = [v for row in rows for v in row]
    assert step & (step - 1) == 0 and all(v % step == 0 for v in values)
    in_bytes = [v << 20 for v in values]                  # QEMU's M: MiB
    bits = 0
    for v in in_bytes:
        bits |= v
    low = (bits & -bits).bit_length() - 1                 # QEMU: one base unit, entries of 16 bits
    assert bits.bit_length() - low <= 16 and max(in_bytes) >> low < 0xFFFF
    assert max(values) == pytest.approx(local_GBps * 1000, rel=max(step / (local_GBps * 1000), 1e-9))


@pytest.mark.skipif(shutil.which("qemu-system-x86_64") is None,
                    reason="qemu-system-x86_64 (Debian qemu-system-x86) is not installed")
@pytest.mark.parametrize("cores", [{0: 2, 1: 4}, {0: 40, 2: 40}])
def test_qemu_takes_unequal_nodes_sparse_ids_and_a_modern_memory(cores):
    text = export("qemu", _Board(cores), _matrices(list(cores), 300.0, 12.3), 256)
    _qemu_accepts(text)
    if list(cores) == [0, 2]:
        assert "# QEMU's nodes 0..1 are the board's nodes 0, 2, in that order" in text


@pytest.mark.skipif(shutil.which("lstopo-no-graphics") is None and shutil.which("lstopo") is None,
                    reason="hwloc's lstopo (Debian hwloc-nox) is not installed")
def test_lstopo_reads_a_board_of_more_than_64_cpus_with_sparse_node_ids(tmp_path):
    lstopo = shutil.which("lstopo-no-graphics") or shutil.which("lstopo")
    xml = tmp_path / "wide.xml"
    xml.write_text(export("hwloc", _Board({0: 40, 2: 40}), _matrices([0, 2]), 1024))
    shown = subprocess.run([lstopo, "--input", str(xml), "--of", "console", "-p"], capture_output=True, text=True)
    assert shown.returncode == 0 and "out-of-order" not in shown.stderr, shown.stderr
    assert "NUMANode P#2" in shown.stdout and "PU P#79" in shown.stdout
    attrs = subprocess.run([lstopo, "--input", str(xml), "--memattrs"], capture_output=True, text=True)
    assert "= 90 from cpuset 0x000000ff,0xffffffff (Package" in attrs.stdout
