"""Where the benchmark's report goes and what it is made of: written through links, in place into a device,
refused before the run where it cannot go, never a success after a failed write, always valid JSON; a paced
background thread that stops with the foreground however slow its rate; a sysfs root that is not one refused."""
from __future__ import annotations

import json
import os
import time

import pytest
from benchutil import assert_one_line_failure, needs_cpus, run_stride

SMALL = "4MiB"


def test_a_report_written_to_a_link_replaces_the_file_it_names_and_keeps_the_link(stride, tmp_path):
    (tmp_path / "real").mkdir()
    link = tmp_path / "out.json"
    link.symlink_to("real/report.json")             # a file that does not exist yet
    done = run_stride(stride, "--resolve", "--json", link, "0.0.r.0")
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and json.loads((tmp_path / "real" / "report.json").read_text())["threads"]
    done = run_stride(stride, "--resolve", "--json", link, "0.0.w.0")    # and again, over it
    assert link.is_symlink() and json.loads(link.read_text())["threads"][0]["op"] == "w"


def test_a_report_into_a_device_is_written_in_place(stride):
    done = run_stride(stride, "--resolve", "--json", "/dev/null", "0.0.r.0")
    assert done.returncode == 0 and os.path.exists("/dev/null") and not os.path.isfile("/dev/null")


@pytest.mark.parametrize("where, message", [
    ("missing/x.json", "--json {path}: cannot write in {tmp}/missing: No such file or directory"),
    (".", "--json {path}: a folder; give a file"),
])
def test_a_report_path_that_cannot_be_written_is_refused_before_the_run(stride, tmp_path, where, message):
    path = tmp_path / where if where != "." else tmp_path
    started = time.perf_counter()
    done = run_stride(stride, "--size", "64MiB", "--reps", "50", "--json", path, "0.0.r.0")
    assert time.perf_counter() - started < 2.0          # nothing was measured first
    assert_one_line_failure(done, message.format(path=path, tmp=tmp_path))


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_a_failed_write_to_stdout_is_a_failure(stride):
    with open("/dev/full", "w") as full:
        done = __import__("subprocess").run([str(stride), "--resolve", "0.0.r.0"], stdout=full, stderr=-1, text=True)
    assert done.returncode == 1 and "cannot write the report to standard output" in done.stderr


def test_strings_that_are_not_utf8_become_valid_json(stride, tmp_path):
    odd = os.fsdecode(bytes(tmp_path) + b"/x\xff.json")
    done = run_stride(stride, "--resolve", "--json", odd, "0.0.r.0")
    assert done.returncode == 0, done.stderr
    report = json.loads(open(odd, "rb").read().decode("utf-8"))
    assert "\ufffd" in " ".join(report["command"])


@needs_cpus(0, 1)
def test_a_slow_paced_background_thread_stops_soon_after_the_foreground(stride):
    """At 1 MB/s a 64 KiB chunk of the background reader is 65 ms of sleep: it wakes within a millisecond of the
    foreground's end instead (before: 16 s for a 4 kB/s reader beside a 0.4 ms foreground)."""
    started = time.perf_counter()
    done = run_stride(stride, "--size", SMALL, "--reps", "3", "0.0.r.0", "--bg", "0.1.r.0@1MB/s")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    foreground, background = report["threads"]
    assert max(background["seconds"]["all"]) < max(foreground["seconds"]["all"]) + 0.02
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize("rate, message", [
    ("4kB/s", "'0.1.r.0@4kB/s': the slowest rate is 1 MB/s"),
    ("1e400GB/s", "'0.1.r.0@1e400GB/s': malformed rate: expected a finite quantity, got '1e400GB/s'"),
])
def test_rates_the_model_refuses_are_refused_by_the_benchmark_too(stride, rate, message):
    assert_one_line_failure(run_stride(stride, "--resolve", "0.0.r.0", "--bg", f"0.1.r.0@{rate}"), message)


def test_a_sysfs_root_that_is_not_one_is_refused_and_this_machines_is_recognised(stride, tmp_path):
    assert_one_line_failure(run_stride(stride, "--sysfs", tmp_path, "--resolve", "0.0.r.0"),
                            f"--sysfs {tmp_path}: not a sysfs tree (no devices/system)")
    plain = json.loads(run_stride(stride, "--resolve", "0.0.r.0").stdout)
    slashed = json.loads(run_stride(stride, "--sysfs", "/sys/", "--resolve", "0.0.r.0").stdout)
    assert slashed["host"]["sysfs"] == "/sys" and slashed["host"]["cpu_model"] == plain["host"]["cpu_model"]
