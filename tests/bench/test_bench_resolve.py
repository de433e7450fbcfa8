"""Placing thread specs on fixture machines: the Python side and the native --resolve agree, and refuse alike."""
from __future__ import annotations

import pytest
from benchutil import assert_one_line_failure, run_stride, stride_json, sysfs

from simnuma.bench.host import discover_host, resolve_threads
from simnuma.bench.run import parse_size
from simnuma.errors import BenchError, SpecError

PLACEMENTS = [
    ("two_node", ["1.0.r.0"], [], [8]),
    ("two_node", ["1.8.w.1", "0.15.t.1"], [], [24, 23]),
    ("two_node", ["0.0.w.1", "1.0.w.0"], ["0.1.r.0@0.5GB/s", "1.1.r.1@2GB/s"], [0, 8, 1, 9]),
    ("four_node", ["3.1.w.0", "2.0.t.1"], [], [7, 4]),
    ("four_node", ["0.0.w.1", "1.0.w.3"], ["2.0.r.2@4GB/s"], [0, 2, 4]),
    ("sparse", ["2.2.l.0", "3.2.r.2", "0.3.r.2"], [], [8, 9, 3]),
    ("sparse", ["3.0.w.0"], ["2.1.r.2@500MB/s"], [6, 5]),
]


@pytest.mark.parametrize("name, threads, background, cpus", PLACEMENTS)
def test_python_places_on_the_cth_cpu_of_the_node(name, threads, background, cpus):
    placed = resolve_threads(discover_host(sysfs(name)), threads, background)
    assert [p.cpu for p in placed] == cpus
    assert [p.role for p in placed] == ["foreground"] * len(threads) + ["background"] * len(background)


@pytest.mark.parametrize("name, threads, background, cpus", PLACEMENTS)
def test_native_resolve_agrees(stride, name, threads, background, cpus):
    args = [*threads]
    for spec in background:
        args += ["--bg", spec]
    report = stride_json(stride, "--sysfs", sysfs(name), "--resolve", *args)
    assert report["format"] == "simnuma-bench/2" and report["mode"] == "resolve"
    assert [t["cpu"] for t in report["threads"]] == cpus
    assert [t["role"] for t in report["threads"]] == ["foreground"] * len(threads) + ["background"] * len(background)
    assert [t["spec"] for t in report["threads"]] == threads + background


def test_rates_are_reported_in_GBps(stride):
    report = stride_json(stride, "--sysfs", sysfs("two_node"), "--resolve", "0.0.r.0@500MB/s", "0.1.r.0@2 GiB/s")
    assert [t["rate_GBps"] for t in report["threads"]] == [0.5, pytest.approx(2 * 2**30 / 1e9)]


REFUSED = [
    ("sparse", ["3.0.r.3"], None, SpecError, "'3.0.r.3': node 3 has no memory; nodes with memory: 0, 2"),
    ("sparse", ["1.0.r.0"], None, SpecError, "'1.0.r.0': no node 1 on this host (nodes 0, 2, 3)"),
    ("sparse", ["0.0.r.1"], None, SpecError, "'0.0.r.1': no memory node 1 on this host (nodes 0, 2, 3)"),
    ("sparse", ["2.3.r.0"], None, SpecError, "'2.3.r.0': node 2 has 3 CPUs (cores 0..2), no core 3"),
    ("sparse", ["0.0.r.0", "0.0.w.2"], None, SpecError,
     "'0.0.w.2': CPU 0 (node 0 core 0) already runs '0.0.r.0'; one thread per core"),
    ("four_node", [f"{n}.{c}.r.{n}" for n in range(4) for c in range(2)] + ["0.0.w.0"], None, SpecError,
     "9 threads but this host has only 8 CPUs"),
    ("sparse", ["0.0.t.0"], "3GiB", BenchError,
     "arrays on node 0 need 9 GiB but node 0 has 7 GiB free (MemFree in "),
    ("four_node", ["0.0.r.1", "2.0.w.1"], "1GiB", BenchError,
     "arrays on node 1 need 2 GiB but node 1 has 1.5 GiB free"),
    ("two_node", ["0.0.r"], None, SpecError, "'0.0.r': expected a thread spec N.C.op.M[@RATE]"),
    ("two_node", ["0.0.x.0"], None, SpecError, "'0.0.x.0': unknown op 'x'; expected one of r, w, t, l"),
    ("two_node", ["0.0.r.0@fast"], None, SpecError,
     "'0.0.r.0@fast': malformed rate: expected a bandwidth such as '4 GB/s', got 'fast'"),
    ("two_node", ["0.0.r.0@5GBps"], None, SpecError,
     "'0.0.r.0@5GBps': malformed rate: unknown unit 'GBps' in '5GBps'; expected one of: B/s, kB/s"),
    ("two_node", ["0.0.r.0@0GB/s"], None, SpecError, "'0.0.r.0@0GB/s': the rate must be positive"),
]


@pytest.mark.parametrize("name, threads, size, error, message", REFUSED)
def test_python_refuses(name, threads, size, error, message):
    with pytest.raises(error) as caught:
        resolve_threads(discover_host(sysfs(name)), threads, size_bytes=parse_size(size) if size else None)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("name, threads, size, error, message", REFUSED)
def test_native_refuses_with_the_same_line(stride, name, threads, size, error, message):
    args = ["--sysfs", sysfs(name), "--resolve", *threads] + (["--size", size] if size else [])
    line = assert_one_line_failure(run_stride(stride, *args))
    assert line.startswith("stride: " + message)


def test_memory_check_counts_every_array_of_a_node():
    host = discover_host(sysfs("four_node"))
    resolve_threads(host, ["0.0.r.1"], size_bytes=parse_size("1GiB"))  # 1 GiB of 1.5 GiB free: fits
    with pytest.raises(BenchError, match="need 3 GiB"):
        resolve_threads(host, ["0.0.t.1"], size_bytes=parse_size("1GiB"))


@pytest.mark.parametrize("args, message", [
    (["--reps", "0", "0.0.r.0"], "--reps '0': expected a whole number from 1 to 1000000"),
    (["--reps", "many", "0.0.r.0"], "--reps 'many'"),
    (["--size", "12XB", "0.0.r.0"], "--size '12XB': unknown unit 'XB'"),
    (["--size", "-5MiB", "0.0.r.0"], "--size '-5MiB': must be positive"),
    (["--size", "lots", "0.0.r.0"], "--size 'lots': expected a size such as '64MiB'"),
    (["--frobnicate", "0.0.r.0"], "unknown option '--frobnicate'"),
    (["--bg", "0.0.r.0"], "no foreground thread given"),
    (["0.0.r.0", "--size"], "--size needs a value"),
    ([], "no foreground thread given"),
])
def test_native_option_errors(stride, args, message):
    line = assert_one_line_failure(run_stride(stride, "--sysfs", sysfs("two_node"), "--resolve", *args))
    assert message in line


def test_default_size_is_four_llc_or_64MiB(stride):
    two = stride_json(stride, "--sysfs", sysfs("two_node"), "--resolve", "0.0.r.0")
    four = stride_json(stride, "--sysfs", sysfs("four_node"), "--resolve", "0.0.r.0")
    assert two["size_bytes"] == 4 * 22 * 2**20
    assert four["size_bytes"] == 64 * 2**20
    sized = stride_json(stride, "--sysfs", sysfs("four_node"), "--resolve", "--size", "1000000", "0.0.r.0")
    assert sized["size_bytes"] % 4096 == 0 and 1000000 <= sized["size_bytes"] < 1000000 + 4096
