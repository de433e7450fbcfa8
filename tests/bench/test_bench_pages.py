"""The pages of the arrays: the latency chase on transparent huge pages, the streams on base pages, and why not."""
from __future__ import annotations

import copy
import json
import os
import subprocess

import pytest
from benchutil import (
    HELPERS,
    assert_one_line_failure,
    assert_one_line_refusal,
    call_cli,
    fake_one_node_view,
    needs_cpus,
    run_stride,
    stride_json,
    sysfs,
)

from simnuma.bench.host import Host, HostNode, default_size_bytes, discover_host
from simnuma.bench.merge import merge_reports
from simnuma.bench.run import run_bench

MiB = 1 << 20
THP_OFFERED = discover_host().transparent_hugepage in ("always", "madvise") and discover_host().huge_page_bytes


def requested(report: dict) -> list:
    return [t["pages"]["requested"] for t in report["threads"]]


@pytest.mark.parametrize("pages, expected", [
    ([], ["huge", "base", "base", "base"]),
    (["--pages", "auto"], ["huge", "base", "base", "base"]),
    (["--pages", "huge"], ["huge", "huge", "huge", "huge"]),
    (["--pages=base"], ["base", "base", "base", "base"]),
])
def test_auto_asks_huge_pages_for_the_chase_only(stride, pages, expected):
    report = stride_json(stride, "--sysfs", sysfs("two_node"), "--resolve", *pages,
                         "0.0.l.0", "0.1.r.0", "0.2.w.1", "--bg", "1.0.t.1")
    assert requested(report) == expected
    assert report["pages"] == (pages[-1].split("=")[-1] if pages else "auto")
    assert report["host"]["huge_page_bytes"] == 2 * MiB


@pytest.mark.parametrize("value", ["giant", "", "HUGE"])
def test_bad_pages_value_is_one_line(stride, value):
    done = run_stride(stride, "--sysfs", sysfs("two_node"), "--resolve", "--pages", value, "0.0.l.0")
    assert_one_line_failure(done, f"--pages '{value}': expected auto, huge or base")


def test_bad_pages_value_from_the_command_line(tmp_path, capsys):
    code, out, err = call_cli(capsys, "bench", "run", "0.0.l.0", "--pages", "giant", "-o", tmp_path / "x.json")
    assert_one_line_refusal(code, err, "--pages 'giant': expected auto, huge or base")
    code, out, err = call_cli(capsys, "bench", "suite", "--pages", "4k", "-o", tmp_path / "suite")
    assert_one_line_refusal(code, err, "--pages '4k': expected auto, huge or base")
    assert not (tmp_path / "suite").exists()


@pytest.fixture(scope="module")
def chase(stride) -> dict:
    """A chase over 8 MiB (four huge pages) with the default pages."""
    return run_bench(["0.0.l.0"], size_bytes="8MiB", reps=2)


def huge_warnings(report: dict) -> list:
    return [w for w in report["warnings"] if "huge pages requested" in w]


@pytest.mark.skipif(not THP_OFFERED, reason="the kernel offers no transparent huge pages here")
def test_the_chase_runs_on_huge_pages(chase):
    (thread,) = chase["threads"]
    pages = thread["pages"]
    assert pages["requested"] == "huge" and pages["advice"] == "hugepage"
    # the kernel may refuse huge pages (short, fragmented memory), but then the report says so
    if pages["huge_fraction"] >= 0.99:
        assert pages["huge_bytes"] == 8 * MiB and pages["page_bytes"] == chase["host"]["huge_page_bytes"]
        assert not huge_warnings(chase)
    else:
        assert any("the kernel granted them for only" in w for w in huge_warnings(chase))


def test_placement_is_verified_page_by_page_on_huge_pages(chase):
    """move_pages (or numa_maps) still counts base pages inside the huge pages: all on node 0."""
    placement = chase["threads"][0]["placement"]
    assert placement["fraction"] >= 0.99
    assert placement["pages"] * chase["host"]["page_bytes"] == 8 * MiB
    assert placement["pages_by_node"] == {"0": placement["pages_on_node"]}


def test_streams_stay_on_base_pages(stride):
    report = run_bench(["0.0.r.0"], size_bytes="8MiB", reps=1)
    pages = report["threads"][0]["pages"]
    assert pages["requested"] == "base" and pages["advice"] == "nohugepage"
    assert pages["huge_bytes"] in (0, None) and pages["page_bytes"] == report["host"]["page_bytes"]
    assert not huge_warnings(report)


@pytest.mark.skipif(not THP_OFFERED, reason="the kernel offers no transparent huge pages here")
def test_pages_huge_puts_every_array_of_a_triad_on_huge_pages(stride):
    report = run_bench(["0.0.t.0"], size_bytes="4MiB", reps=1, pages="huge")
    pages = report["threads"][0]["pages"]
    assert report["pages"] == "huge" and pages["requested"] == "huge"
    assert pages["huge_fraction"] >= 0.99 or huge_warnings(report)
    assert report["threads"][0]["checksum"] is not None


@pytest.mark.skipif(not THP_OFFERED, reason="the kernel offers no transparent huge pages here")
def test_an_array_smaller_than_a_huge_page_says_so(stride):
    report = run_bench(["0.0.l.0"], size_bytes="1MiB", reps=1)
    pages = report["threads"][0]["pages"]
    assert pages["huge_bytes"] == 0 and pages["page_bytes"] == report["host"]["page_bytes"]
    (warning,) = huge_warnings(report)
    assert "arrays of 1 MiB are smaller than one 2 MiB huge page" in warning
    assert "the chase's latency includes TLB misses" in warning


def test_the_chase_on_base_pages_when_asked(stride):
    report = run_bench(["0.0.l.0"], size_bytes="4MiB", reps=1, pages="base")
    pages = report["threads"][0]["pages"]
    assert pages["requested"] == "base" and pages["advice"] == "nohugepage" and pages["huge_bytes"] in (0, None)
    assert not huge_warnings(report)


@needs_cpus(0, 1)
@pytest.mark.parametrize("thp, message", [
    ("never", "huge pages requested but transparent huge pages are disabled ('never' in"),
    (None, "huge pages requested but this kernel offers no transparent huge pages (nothing in"),
])
def test_fallback_to_base_pages_is_a_warning(stride, tmp_path, thp, message):
    """A kernel whose THP is off (or absent): the chase runs on base pages and the report says why."""
    root = fake_one_node_view(tmp_path / "sys", thp)
    report = stride_json(stride, "--sysfs", root, "--size", "4MiB", "--reps", "1", "0.0.l.0")
    pages = report["threads"][0]["pages"]
    assert pages["requested"] == "huge" and pages["advice"] == "nohugepage"
    assert pages["huge_bytes"] in (0, None) and pages["page_bytes"] == report["host"]["page_bytes"]
    (warning,) = huge_warnings(report)
    assert warning.startswith(f"'0.0.l.0': {message}")
    assert warning.endswith("its arrays are on 4 KiB pages (the chase's latency includes TLB misses)")


def test_merged_rounds_keep_the_round_furthest_from_the_request(chase):
    fewer = copy.deepcopy(chase)
    fewer["threads"][0]["pages"] = dict(chase["threads"][0]["pages"], huge_bytes=2 * MiB, huge_fraction=0.25)
    assert merge_reports([chase, fewer, chase])["threads"][0]["pages"]["huge_fraction"] == 0.25
    base = copy.deepcopy(chase)
    base["threads"][0]["pages"] = {"requested": "base", "advice": "nohugepage", "huge_bytes": 0, "huge_fraction": 0,
                                   "page_bytes": 4096}
    some = copy.deepcopy(base)
    some["threads"][0]["pages"].update(huge_bytes=2 * MiB, huge_fraction=0.25)
    assert merge_reports([base, some])["threads"][0]["pages"]["huge_fraction"] == 0.25


def test_default_size_is_whole_huge_pages(stride, tmp_path):
    """4 x a last-level cache of 35.75 MiB is 143 MiB: the default rounds it up to 144 MiB, in Python and natively."""
    root = fake_one_node_view(tmp_path / "sys", "madvise")
    cache = root / "devices/system/cpu/cpu0/cache/index3"
    cache.mkdir(parents=True)
    (cache / "level").write_text("3\n")
    (cache / "type").write_text("Unified\n")
    (cache / "size").write_text("36608K\n")
    assert default_size_bytes(discover_host(root)) == 144 * MiB
    assert stride_json(stride, "--sysfs", root, "--resolve", "0.0.l.0")["size_bytes"] == 144 * MiB
    small = Host("/x", (HostNode(0, (0,), 1 << 30, 1 << 29),), None, (), 3 * MiB, None, None, "cpu", "Linux", True)
    assert default_size_bytes(small) == 64 * MiB


@pytest.mark.skipif(not THP_OFFERED, reason="the kernel offers no transparent huge pages here")
def test_a_failed_madvise_is_recorded_as_no_advice_with_the_reason(stride, compiler, tmp_path):
    """madvise(MADV_HUGEPAGE) refused (a shim preloaded in front of libc): the report does not claim the
    arrays were advised, and a warning gives the error."""
    shim = tmp_path / "refuse_hugepage.so"
    built = subprocess.run([*compiler, "-shared", "-fPIC", "-o", str(shim), str(HELPERS / "refuse_hugepage.c")],
                           capture_output=True, text=True)
    if built.returncode != 0:
        pytest.skip(f"cannot build a preloadable shim here: {built.stderr.strip()}")
    done = subprocess.run([str(stride), "--pages", "huge", "--size", "4MiB", "--reps", "1", "0.0.r.0"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "LD_PRELOAD": str(shim)})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    (thread,) = report["threads"]
    assert thread["pages"]["requested"] == "huge" and thread["pages"]["advice"] == "none"
    assert any("madvise(MADV_HUGEPAGE) failed (Operation not permitted)" in w for w in huge_warnings(report))
