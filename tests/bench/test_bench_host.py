"""Host discovery from sysfs, in Python and in the native benchmark, on fixture machines and this one."""
from __future__ import annotations

import os
import shutil

import pytest
from benchutil import FIXTURE_NAMES, run_stride, stride_json, sysfs

from simnuma.bench.host import Cache, default_size_bytes, discover_host, parse_cpulist

MiB = 1 << 20


def test_two_node_server():
    host = discover_host(sysfs("two_node"))
    assert host.node_ids == (0, 1)
    assert host.node(1).cpus == tuple(range(8, 16)) + tuple(range(24, 32))
    assert host.node(0).memory_total_bytes == 65536000 * 1024
    assert host.node(1).memory_free_bytes == 61000000 * 1024
    assert host.distances == ((10, 21), (21, 10))
    assert host.llc_bytes == 22 * MiB
    assert Cache(2, "Unified", MiB) in host.caches
    assert host.transparent_hugepage == "always" and host.huge_page_bytes == 2 * MiB
    assert host.cpufreq_governor == "performance"
    assert host.cpu_count == 32 and host.numa_visible
    assert default_size_bytes(host) == 88 * MiB


def test_quartet_like_four_node_board():
    host = discover_host(sysfs("four_node"))
    assert host.node_ids == (0, 1, 2, 3)
    assert [n.cpus for n in host.nodes] == [(0, 1), (2, 3), (4, 5), (6, 7)]
    assert host.distance(0, 3) == 22 and host.distance(1, 3) == 16
    assert host.llc_bytes == MiB  # no L3: the L2 is the last level
    assert default_size_bytes(host) == 64 * MiB  # never below 64 MiB
    assert host.transparent_hugepage == "never" and host.huge_page_bytes is None  # no hpage_pmd_size
    assert host.cpufreq_governor is None


def test_sparse_ids_and_memoryless_node():
    host = discover_host(sysfs("sparse"))
    assert host.node_ids == (0, 2, 3)
    assert host.node(1) is None
    assert host.node(2).cpus == (4, 5, 8)
    assert host.node(3).cpus == (6, 7, 9)
    assert not host.node(3).has_memory and host.node(2).has_memory
    assert host.distance(0, 3) == 30 and host.distance(3, 2) == 20
    assert host.llc_bytes == 8 * MiB


def test_no_numa_directories_means_one_node_with_every_cpu(tmp_path, stride):
    (tmp_path / "devices/system/cpu").mkdir(parents=True)
    (tmp_path / "devices/system/cpu/online").write_text("0-3\n")
    host = discover_host(tmp_path)
    assert host.node_ids == (0,) and host.node(0).cpus == (0, 1, 2, 3)
    assert not host.numa_visible
    report = stride_json(stride, "--sysfs", tmp_path, "--resolve", "0.3.r.0")
    assert report["host"]["nodes"][0]["cpus"] == [0, 1, 2, 3]
    assert report["threads"][0]["cpu"] == 3


@pytest.mark.parametrize("text, cpus", [
    ("0-3", (0, 1, 2, 3)), ("0-1,8,10-11", (0, 1, 8, 10, 11)), ("", ()), ("5", (5,)), ("0-1, 4\n", (0, 1, 4)),
])
def test_parse_cpulist(text, cpus):
    assert parse_cpulist(text) == cpus


@pytest.mark.parametrize("text", ["0-", "a", "3-1", "1--2"])
def test_parse_cpulist_rejects_malformed(text):
    with pytest.raises(ValueError):
        parse_cpulist(text)


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_native_and_python_discovery_agree(stride, name):
    report = stride_json(stride, "--sysfs", sysfs(name), "--resolve", "0.0.r.0")
    python = discover_host(sysfs(name)).to_dict()
    native = report["host"]
    for key in ("nodes", "distances", "caches", "llc_bytes", "transparent_hugepage", "huge_page_bytes",
                "cpufreq_governor", "cpus"):
        assert native[key] == python[key], key
    assert report["size_bytes"] == default_size_bytes(discover_host(sysfs(name)))


def test_a_copy_of_another_machines_sysfs_names_its_cpu_only_from_its_own_cpuinfo(tmp_path, stride):
    """This machine's /proc/cpuinfo says nothing of the machine a fixture tree was copied from."""
    root = tmp_path / "sys"
    shutil.copytree(sysfs("four_node"), root)
    host = discover_host(root)
    assert (host.cpu_model, host.kernel, host.hypervisor) == ("unknown", "unknown", False)
    assert stride_json(stride, "--sysfs", root, "--resolve", "0.0.r.0")["host"]["cpu_model"] == "unknown"
    (root / "cpuinfo").write_text("processor\t: 0\nmodel name\t: Dual Core AMD Opteron(tm) Processor 875\n"
                                  "flags\t\t: fpu hypervisor\n")
    host = discover_host(root)
    assert host.cpu_model == "Dual Core AMD Opteron(tm) Processor 875" and host.hypervisor
    assert stride_json(stride, "--sysfs", root, "--resolve", "0.0.r.0")["host"]["cpu_model"] == host.cpu_model


def test_this_machine():
    host = discover_host()
    allowed = os.sched_getaffinity(0)
    listed = {cpu for node in host.nodes for cpu in node.cpus}
    assert allowed <= listed
    assert host.node(0) is not None or not host.numa_visible
    assert all(n.memory_free_bytes is None or n.memory_free_bytes > 0 for n in host.nodes if n.has_memory)
    assert default_size_bytes(host) >= max(64 * MiB, 4 * host.llc_bytes)
    assert host.cpu_model and host.kernel.startswith("Linux")


def test_a_folder_that_is_not_sysfs_is_refused(tmp_path):
    from simnuma.errors import BenchError

    with pytest.raises(BenchError, match="not a sysfs tree"):
        discover_host(tmp_path / "nonexistent")
    with pytest.raises(BenchError, match="not a sysfs tree"):
        discover_host(tmp_path)


@pytest.mark.parametrize("text, problem", [(None, "missing or unreadable"), ("21 ten", "expected integers, got '21 ten'"),
                                          ("21", "expected 2 distances (one per node), got 1")])
def test_a_wrong_distance_file_is_named_and_the_board_says_it_assumed_the_links(tmp_path, capsys, text, problem):
    root = tmp_path / "sys"
    shutil.copytree(sysfs("two_node"), root)
    path = root / "devices/system/node/node1/distance"
    if text is None:
        path.unlink()
    else:
        path.write_text(text + "\n")
    host = discover_host(root)
    assert host.distances is None and host.distance_problem == f"{path}: {problem}"
    from simnuma.cli import main

    assert main(["bench", "host", "--sysfs", str(root)]) == 0
    out, err = capsys.readouterr()
    assert err.startswith(f"warning: {path}: {problem}: the board assumes the nodes wired in a chain")
    assert f"# links: the distance matrix could not be read ({path}: {problem})" in out
    assert "links:                      # assumed: a chain (see above)" in out


def test_a_cache_level_that_is_not_a_number_is_left_out(tmp_path):
    root = tmp_path / "sys"
    shutil.copytree(sysfs("two_node"), root)
    levels = sorted(root.glob("devices/system/cpu/cpu0/cache/index*/level"))
    assert levels
    levels[-1].write_text("x\n")
    host = discover_host(root)   # no ValueError: that cache is not described whole
    assert len(host.caches) == len(levels) - 1


def test_a_node_s_file_cache_counts_as_memory_it_can_give(tmp_path, stride):
    """A node whose memory is mostly page cache after large I/O: MemFree 1 GB, Inactive(file) 5 GB and
    KReclaimable 2 GB: 8 GB available, in Python and in the benchmark alike, and the source says so."""
    root = tmp_path / "sys"
    shutil.copytree(sysfs("two_node"), root)
    meminfo = root / "devices/system/node/node1/meminfo"
    meminfo.write_text("Node 1 MemTotal: 64000000 kB\nNode 1 MemFree: 1000000 kB\nNode 1 Active(file): 9000000 kB\n"
                       "Node 1 Inactive(file): 5000000 kB\nNode 1 KReclaimable: 2000000 kB\n")
    node = discover_host(root).node(1)
    assert node.memory_free_bytes == 8000000 * 1024
    assert node.free_source == f"MemFree + Inactive(file) + KReclaimable in {meminfo}"
    done = run_stride(stride, "--sysfs", str(root), "--resolve", "--size", "9GB", "0.0.r.1")
    assert done.returncode == 2
    assert f"node 1 has 7.6 GiB free (MemFree + Inactive(file) + KReclaimable in {meminfo})" in done.stderr
    assert run_stride(stride, "--sysfs", str(root), "--resolve", "--size", "7GB", "0.0.r.1").returncode == 0
