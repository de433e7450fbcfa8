"""A control group's CPU quota (``docker --cpus``, a Kubernetes CPU limit, systemd ``CPUQuota=``): read from copies
of ``/proc/self`` and the cgroup file systems, and the suite's cases of more threads than it skipped."""
from __future__ import annotations

import dataclasses

import pytest
from benchutil import sysfs

from simnuma.bench.host import discover_host
from simnuma.bench.plan import suite_plan
from simnuma.bench.quota import CpuQuota, cpu_quota
from simnuma.bench.suite import run_suite
from simnuma.errors import BenchError

V2_MOUNTS = "30 23 0:27 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
V1_MOUNTS = ("31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n"
             "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n"
             "33 31 0:30 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n")


def _tree(tmp_path, mounts: str, cgroup: str, files: dict):
    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    (proc / "self/mountinfo").write_text(mounts)
    (proc / "self/cgroup").write_text(cgroup)
    for path, text in files.items():
        target = tmp_path / "root" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text + "\n")
    return proc, tmp_path / "root"


def test_cgroup_v2_takes_the_smallest_quota_of_the_group_and_those_above(tmp_path):
    """A pod limited to 4 CPUs whose container asks 6: the pod's 4 hold (a parent's quota applies to all below)."""
    proc, root = _tree(tmp_path, V2_MOUNTS, "0::/kubepods/pod1/ctr\n", {
        "sys/fs/cgroup/kubepods/pod1/ctr/cpu.max": "600000 100000",
        "sys/fs/cgroup/kubepods/pod1/cpu.max": "400000 100000",
        "sys/fs/cgroup/kubepods/cpu.max": "max 100000"})
    quota = cpu_quota(proc, root)
    assert quota.cpus == 4.0 and quota.source == "/sys/fs/cgroup/kubepods/pod1/cpu.max"
    assert quota.text() == "4 CPUs (/sys/fs/cgroup/kubepods/pod1/cpu.max)"


def test_cgroup_v1_cfs_quota_in_a_container_that_sees_its_group_as_the_root(tmp_path):
    """docker --cpus=2.5 on cgroup v1 with a cgroup namespace: /proc/self/cgroup says '/', the quota is at the
    mount's top."""
    proc, root = _tree(tmp_path, V1_MOUNTS, "5:memory:/\n4:cpu,cpuacct:/\n0::/\n", {
        "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "250000",
        "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000"})
    assert cpu_quota(proc, root).cpus == 2.5


@pytest.mark.parametrize("files", [
    {"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "-1", "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000"},
    {"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "garbled"},
    {}])
def test_no_quota_where_none_is_set_or_it_cannot_be_read(tmp_path, files):
    proc, root = _tree(tmp_path, V1_MOUNTS, "4:cpu,cpuacct:/\n", files)
    assert cpu_quota(proc, root) is None
    assert cpu_quota(tmp_path / "nowhere", root) is None


def test_this_machine_reads_without_error():
    quota = cpu_quota()
    assert quota is None or quota.cpus > 0


def test_the_suite_skips_the_cases_of_more_threads_than_the_quota_and_says_why():
    host = dataclasses.replace(discover_host(sysfs("four_node")), cpu_quota=CpuQuota(1.5, "/sys/fs/cgroup/cpu.max"))
    plan = suite_plan(host, {"r": 5.0, "w": 3.0, "t": 4.0}, 1 << 26)
    assert plan.cases and all(len(c.threads) + len(c.background) == 1 for c in plan.cases)
    quota_skips = [s for s in plan.skipped if "CPU quota of 1.5 CPUs" in s["reason"]]
    assert {s["kind"] for s in quota_skips} >= {"peak", "crossfire", "loaded"}
    assert any(note.startswith("this process's CPU quota is 1.5 CPUs") for note in plan.notes)
    free = suite_plan(dataclasses.replace(host, cpu_quota=None), {"r": 5.0, "w": 3.0, "t": 4.0}, 1 << 26)
    assert len(free.cases) > len(plan.cases)


def test_a_quota_below_one_cpu_is_refused_before_anything_runs(tmp_path):
    host = dataclasses.replace(discover_host(sysfs("two_node")), cpu_quota=CpuQuota(0.5, "/sys/fs/cgroup/cpu.max"))
    with pytest.raises(BenchError, match="CPU quota is 0.5 CPUs .*even one thread would measure the quota"):
        run_suite(tmp_path / "suite", host=host)
