"""The suite's array size: the benchmark's default, limited by the nodes' memory and a cap, on injected hosts."""
from __future__ import annotations

import io

import pytest
from benchutil import stride_json
from test_bench_suite_latency import fake_report, probe

from simnuma.bench import suite as suite_module
from simnuma.bench.host import Host, HostNode, default_size_bytes, discover_host, resolve_threads
from simnuma.bench.plan import MEMORY_SHARE, MOST_ARRAY_BYTES, arrays_by_node, suite_array_size, suite_plan
from simnuma.bench.suite import run_suite

MiB = 1 << 20
GiB = 1 << 30


def big_host(cpus: int, llc_bytes: int, memory_bytes: int | None, nodes: int = 1) -> Host:
    """``nodes`` nodes of ``cpus`` CPUs and ``memory_bytes`` each (all of it free), one LLC instance of ``llc_bytes``."""
    return Host("/x", tuple(HostNode(n, tuple(range(n * cpus, (n + 1) * cpus)), memory_bytes, memory_bytes)
                            for n in range(nodes)), None, (), llc_bytes, None, None, "test CPU", "Linux 6", True)


def most_arrays_on_a_node(host: Host, size_bytes: int) -> int:
    plan = suite_plan(host, {"r": 13.0, "w": 10.0, "t": 17.0}, size_bytes)
    assert not any("its arrays need" in s["reason"] for s in plan.skipped)   # nothing skipped for memory
    return max(n for case in plan.cases for n in arrays_by_node(case).values())


def test_the_default_is_kept_where_the_memory_holds_it():
    """Two CPUs, a 32 MiB L3 (the development machine): 4 x the LLC, no line printed."""
    host = big_host(2, 32 * MiB, 24 * GiB)
    chosen = suite_array_size(host)
    assert chosen.size_bytes == default_size_bytes(host) == 128 * MiB and not chosen.limited
    assert chosen.rule == "default: 4 x the 32 MiB last-level cache, in whole 2 MiB"
    assert suite_array_size(big_host(4, MiB, 8 * GiB)).rule == "default: the 64 MiB minimum, in whole 2 MiB"


def test_many_cpus_per_node_bring_the_arrays_within_half_the_nodes_memory():
    """192 CPUs on a node of 384 GiB with 96 MiB L3 instances: the triad peak has 576 arrays, which at
    the default 384 MiB would take 216 GiB; they get 340 MiB, 191 GiB in all."""
    host = big_host(192, 96 * MiB, 384 * GiB)
    chosen = suite_array_size(host)
    assert chosen.wanted_bytes == 384 * MiB and chosen.size_bytes == 340 * MiB and chosen.limited
    assert chosen.size_bytes % (2 * MiB) == 0
    arrays = most_arrays_on_a_node(host, chosen.size_bytes)
    assert arrays == 576
    assert arrays * chosen.size_bytes <= MEMORY_SHARE * 384 * GiB < arrays * (chosen.size_bytes + 2 * MiB)
    assert chosen.note() == (
        "bench suite: arrays of 340 MiB, not 384 MiB (4 x the 96 MiB last-level cache): the 576 arrays of the largest"
        " case on node 0 (a peak case) must fit in 50% of its 384 GiB of memory; arrays this small may stay partly"
        " in cache")
    assert suite_plan(host).size_bytes == chosen.size_bytes      # the plan's default is the suite's size
    assert suite_array_size(big_host(192, 96 * MiB, 768 * GiB)).size_bytes == 384 * MiB   # twice the memory: no limit


def test_each_node_holds_its_own_largest_case_and_the_tightest_sets_the_size():
    """Node 0 (64 GiB) holds the peaks, 72 arrays: 455 MiB each would do.  Node 1 (2 GiB) holds at most a
    single triad's three arrays: 341 MiB each.  Node 1 sets the size."""
    nodes = (HostNode(0, tuple(range(24)), 64 * GiB, 64 * GiB), HostNode(1, tuple(range(24, 48)), 2 * GiB, 2 * GiB))
    host = Host("/x", nodes, ((10, 20), (20, 10)), (), 256 * MiB, None, None, "test CPU", "Linux 6", True)
    chosen = suite_array_size(host)
    assert chosen.wanted_bytes == GiB and chosen.size_bytes == 340 * MiB
    assert ": the 3 arrays of the largest case on node 1 (a single case) must fit in 50% of its 2 GiB of memory;" \
        in chosen.note()
    plan = suite_plan(host, {"r": 13.0, "w": 10.0, "t": 17.0}, chosen.size_bytes)
    for node in nodes:
        most = max(arrays_by_node(case).get(node.id, 0) for case in plan.cases)
        assert most * chosen.size_bytes <= MEMORY_SHARE * node.memory_total_bytes
    assert max(arrays_by_node(case).get(0, 0) for case in plan.cases) == 72


@pytest.mark.parametrize("memory_bytes", [256 * GiB, None])   # None: the node's memory is unknown
def test_an_array_is_capped_whatever_the_memory(memory_bytes):
    """A last-level cache reported as 1.1 GiB (one instance): 4 x it is 4.4 GiB per array; the cap is 1 GiB."""
    chosen = suite_array_size(big_host(16, 1126 * MiB, memory_bytes))
    assert chosen.wanted_bytes == 4504 * MiB and chosen.size_bytes == MOST_ARRAY_BYTES == GiB
    assert chosen.note() == (
        "bench suite: arrays of 1 GiB, not 4.4 GiB (4 x the 1.1 GiB last-level cache): the suite's cap of 1 GiB per"
        " array (a pass of the latency chase grows with its array); arrays this small may stay partly in cache")
    assert chosen.rule.endswith("limited to 1 GiB: the suite's cap of 1 GiB per array (a pass of the latency chase"
                                " grows with its array)")


def genoa_x_sysfs(root, cpus: int = 192, memory_kB: int = 384 << 20):
    """One node of ``cpus`` CPUs; CPU 0's L3 is one 96 MiB instance shared by its CCD (8 cores, 16 threads).

    ``lscpu`` would add the twelve instances up to 1.1 GiB; sysfs gives one.
    """
    node = root / "devices/system/node/node0"
    node.mkdir(parents=True)
    (node / "cpulist").write_text(f"0-{cpus - 1}\n")
    (node / "meminfo").write_text(f"Node 0 MemTotal: {memory_kB} kB\nNode 0 MemFree: {memory_kB} kB\n")
    (node / "distance").write_text("10\n")
    for index, (level, kind, size) in enumerate([(1, "Data", "32K"), (1, "Instruction", "32K"),
                                                 (2, "Unified", "1024K"), (3, "Unified", "98304K")]):
        folder = root / f"devices/system/cpu/cpu0/cache/index{index}"
        folder.mkdir(parents=True)
        (folder / "level").write_text(f"{level}\n")
        (folder / "type").write_text(f"{kind}\n")
        (folder / "size").write_text(f"{size}\n")
        (folder / "shared_cpu_list").write_text("0-7,96-103\n" if level == 3 else "0,96\n")
    return root


def test_the_last_level_cache_is_one_instance_in_python_and_natively(tmp_path, stride):
    root = genoa_x_sysfs(tmp_path / "sys")
    host = discover_host(root)
    assert host.llc_bytes == 96 * MiB                       # the instance, not the 1.1 GiB of all twelve
    assert default_size_bytes(host) == 384 * MiB
    assert stride_json(stride, "--sysfs", root, "--resolve", "0.0.r.0")["size_bytes"] == 384 * MiB
    assert suite_array_size(host).size_bytes == 340 * MiB   # 576 arrays of the triad peak within 192 GiB


def suite_events(tmp_path, monkeypatch, host, size_bytes=None, place=False, homes=None):
    """Run a suite on ``host`` with the benchmark and the probe faked; ``(announced lines, sizes run, index)``.
    With ``place``, every case is placed as the benchmark would place it (a SpecError there fails the case);
    ``homes`` (a list) is told the node each probe measured on."""
    lines, sizes = [], []

    def fake_run_bench(threads, background, size_bytes, reps, host, pages):
        if place:
            resolve_threads(host, threads, background, size_bytes)
        sizes.append(size_bytes)
        return fake_report(threads, background, reps)

    def fake_probe(host, home, size_bytes, pages):
        if homes is not None:
            homes.append(home)
        sizes.append(size_bytes)
        return probe()

    monkeypatch.setattr(suite_module, "run_bench", fake_run_bench)
    monkeypatch.setattr(suite_module, "probe_host", fake_probe)
    index = run_suite(tmp_path, size_bytes=size_bytes, reps=1, rounds=1, host=host, announce=lines.append,
                      stream=io.StringIO())
    return lines, sizes, index


def test_the_suite_says_its_arrays_are_limited_and_uses_that_size_for_every_case(tmp_path, monkeypatch):
    host = big_host(24, 256 * MiB, 32 * GiB)
    chosen = suite_array_size(host)
    lines, sizes, index = suite_events(tmp_path, monkeypatch, host)
    assert lines[0] == chosen.note() and lines[1].startswith("bench suite: ") and "estimated" in lines[1]
    assert len(lines) == 2
    assert set(sizes) == {chosen.size_bytes} and len(sizes) == 1 + len(index["cases"])   # the probe and each case
    assert index["size_bytes"] == chosen.size_bytes and index["size_rule"] == chosen.rule


def test_a_given_size_is_taken_as_it_is(tmp_path, monkeypatch):
    lines, sizes, index = suite_events(tmp_path, monkeypatch, big_host(24, 256 * MiB, 32 * GiB), size_bytes="4GiB")
    assert len(lines) == 1 and "estimated" in lines[0]
    assert set(sizes) == {4 * GiB} and index["size_rule"] == "--size"


def test_a_remote_peak_on_a_small_node_is_skipped_not_a_smaller_suite():
    """Node 1 (2 GiB) cannot hold the 24 arrays of node 0's CPUs reading it at the suite's size: that case is
    skipped with the reason, and the suite keeps the size the other cases allow."""
    nodes = (HostNode(0, tuple(range(24)), 64 * GiB, 64 * GiB), HostNode(1, tuple(range(24, 48)), 2 * GiB, 2 * GiB))
    host = Host("/x", nodes, ((10, 20), (20, 10)), (), 256 * MiB, None, None, "test CPU", "Linux 6", True)
    plan = suite_plan(host, {"r": 13.0, "w": 10.0, "t": 17.0})
    assert plan.size_bytes == 340 * MiB and "remote-peak" not in plan.groups
    (skipped,) = [s for s in plan.skipped if s["kind"] == "remote-peak"]
    assert "its arrays need 8.0 GiB on node 1, which has 2 GiB free" in skipped["reason"]
