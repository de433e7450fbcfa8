"""CPUs and memory nodes this process may not use (a cpuset, taskset, a batch scheduler): refused in one line.

A container or a job step often gets fewer CPUs (and memory nodes) than the
machine has; sysfs lists them all.  Pinning a thread outside the process's
affinity would either fail late with a bare errno (a cgroup cpuset) or,
worse, quietly escape the restriction (``taskset``, a batch scheduler's
affinity) and measure beside somebody else's work.
"""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time

import pytest
from benchutil import REPO, assert_one_line_failure, fake_one_node_view, needs_cpus, stride_json, sysfs

from simnuma.bench.host import discover_host, format_cpulist, resolve_threads
from simnuma.errors import SpecError

SMALL = "4MiB"


def _only_cpu0():
    os.sched_setaffinity(0, {0})


def _stride_on_cpu0(binary, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=120,
                          preexec_fn=_only_cpu0)


def test_format_cpulist_writes_ranges():
    assert format_cpulist([0, 1, 2, 3, 8, 10, 11]) == "0-3,8,10-11"
    assert format_cpulist([5]) == "5" and format_cpulist([]) == "none"
    assert format_cpulist(range(0, 384, 2))[:9] == "0,2,4,6,8"


def test_python_reads_this_process_affinity_from_the_real_sysfs_only():
    assert discover_host().allowed_cpus == frozenset(os.sched_getaffinity(0))
    mems = discover_host().allowed_mems
    assert mems is None or mems <= set(discover_host().node_ids) | {0}
    fixture = discover_host(sysfs("sparse"))
    assert fixture.allowed_cpus is None and fixture.allowed_mems is None


def test_python_refuses_a_cpu_outside_the_affinity():
    host = dataclasses.replace(discover_host(sysfs("two_node")), allowed_cpus=frozenset(range(4, 8)) | {20})
    assert [p.cpu for p in resolve_threads(host, ["0.4.r.0", "0.12.w.1"])] == [4, 20]
    with pytest.raises(SpecError) as caught:
        resolve_threads(host, ["0.0.r.0"])
    assert str(caught.value) == ("'0.0.r.0': CPU 0 (node 0 core 0) is not allowed to this process (allowed CPUs:"
                                 " 4-7,20; a cpuset or CPU affinity restricts it); allowed cores of this node: 4-7,12")
    with pytest.raises(SpecError, match="no core of this node is allowed"):
        resolve_threads(host, ["1.0.r.0"])


def test_python_refuses_a_memory_node_outside_mems_allowed():
    host = dataclasses.replace(discover_host(sysfs("sparse")), allowed_mems=frozenset({0}))
    resolve_threads(host, ["2.0.r.0"])
    with pytest.raises(SpecError) as caught:
        resolve_threads(host, ["2.0.r.2"])
    assert str(caught.value) == ("'2.0.r.2': node 2 is not among the memory nodes this process may use"
                                 " (Mems_allowed: 0; a cpuset restricts it)")


def test_native_resolve_of_a_fixture_ignores_this_machines_affinity(stride):
    """A fixture's CPUs 4-9 are not this machine's: --resolve with --sysfs does not check them."""
    report = stride_json(stride, "--sysfs", sysfs("sparse"), "--resolve", "2.2.l.0", "3.2.r.2")
    assert [t["cpu"] for t in report["threads"]] == [8, 9]


@needs_cpus(0, 1)
def test_native_refuses_a_cpu_outside_the_affinity_instead_of_escaping_it(stride, tmp_path):
    """Before: the thread was pinned to CPU 1 although the process was confined to CPU 0, and the run succeeded."""
    root = fake_one_node_view(tmp_path / "sys", "madvise")
    done = _stride_on_cpu0(stride, "--sysfs", root, "--size", SMALL, "--reps", "1", "0.1.r.0")
    line = assert_one_line_failure(done, "stride: '0.1.r.0': CPU 1 (node 0 core 1) is not allowed to this process")
    assert line.endswith("(allowed CPUs: 0; a cpuset or CPU affinity restricts it); allowed cores of this node: 0")
    # the same line from Python, before anything runs
    host = dataclasses.replace(discover_host(root), allowed_cpus=frozenset({0}))
    with pytest.raises(SpecError) as caught:
        resolve_threads(host, ["0.1.r.0"])
    assert "stride: " + str(caught.value) == line
    # with the real /sys, --resolve checks too; the allowed CPU runs
    assert_one_line_failure(_stride_on_cpu0(stride, "--resolve", "0.1.r.0"), "is not allowed to this process")
    assert _stride_on_cpu0(stride, "--sysfs", root, "--size", SMALL, "--reps", "1", "0.0.r.0").returncode == 0


@needs_cpus(0, 1)
def test_cli_refuses_a_cpu_outside_the_affinity_in_one_line():
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-m", "simnuma", "bench", "run", "0.1.r.0", "--size", SMALL, "--reps", "1"],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=300, preexec_fn=_only_cpu0)
    assert_one_line_failure(done, "'0.1.r.0': CPU 1 (node 0 core 1) is not allowed to this process")


@needs_cpus(0, 1)
def test_native_refuses_timings_taken_after_the_thread_was_moved(stride):
    """A thread whose affinity is changed while it runs (a cpuset update) ran elsewhere: refused, not reported."""
    proc = subprocess.Popen([str(stride), "--size", SMALL, "--reps", "6", "0.0.r.0@0.02GB/s"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.3)                      # prepared and timing: a repetition takes 0.2 s at 0.02 GB/s
    deadline = time.monotonic() + 0.6
    while time.monotonic() < deadline and proc.poll() is None:
        for task in os.listdir(f"/proc/{proc.pid}/task"):
            try:
                os.sched_setaffinity(int(task), {1})
            except OSError:
                pass
        time.sleep(0.05)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and out == "", (out[-500:], err)
    assert len(err.splitlines()) == 1, err
    # normally found at the end of a repetition; on a slow machine the move can land right after the pinning
    assert ("'0.0.r.0@0.02GB/s': ran on CPU 1 in repetition" in err
            and "not on its CPU 0: its CPU affinity was changed while it ran" in err
            or "'0.0.r.0@0.02GB/s': pinned to CPU 0 (node 0 core 0) but running on CPU 1" in err), err
