"""Helpers of the benchmark tests: fixture sysfs trees, runners and failure checks."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
HELPERS = Path(__file__).parent / "helpers"
REPO = Path(__file__).resolve().parents[2]
FIXTURE_NAMES = ("two_node", "four_node", "sparse")
# The report prints every value with 9 significant digits ("%.9g"), so each
# repetition's seconds carry a relative rounding error up to 5e-9.  The spread,
# (max - min) / min, is a difference of nearly equal times: recomputed from the
# printed times it can differ from the native one by up to about 2 x 5e-9 in
# absolute terms, however small the spread itself is.
SPREAD_ABS_TOLERANCE = 2e-8  # for a spread recomputed from printed seconds


def sysfs(name: str) -> Path:
    """The sysfs root of a committed fixture machine."""
    return FIXTURES / name / "sys"


def run_stride(binary, *args, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def stride_json(binary, *args) -> dict:
    done = run_stride(binary, *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def run_cli(*args, env=None, cwd=REPO, timeout=300) -> subprocess.CompletedProcess:
    """``python -m simnuma ARGS`` in a fresh interpreter."""
    full_env = dict(os.environ if env is None else env)
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "simnuma", *map(str, args)], capture_output=True, text=True,
                          env=full_env, cwd=cwd, timeout=timeout)


def assert_one_line_failure(done: subprocess.CompletedProcess, expected: str = "") -> str:
    """Exit status 2, exactly one line on stderr (containing ``expected``), no traceback."""
    lines = done.stderr.splitlines()
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert expected in lines[0], lines[0]
    return lines[0]


def fake_two_node_view(root: Path) -> Path:
    """A sysfs tree claiming this host's CPU 0 is node 0 and CPU 1 is node 1, each with memory."""
    for node in (0, 1):
        folder = root / f"devices/system/node/node{node}"
        folder.mkdir(parents=True)
        (folder / "cpulist").write_text(f"{node}\n")
        (folder / "meminfo").write_text(f"Node {node} MemTotal: 4000000 kB\nNode {node} MemFree: 3000000 kB\n")
        (folder / "distance").write_text("10 20\n" if node == 0 else "20 10\n")
    return root


def fake_one_node_view(root: Path, thp: str | None) -> Path:
    """This host's CPUs 0 and 1 as one node, with transparent huge pages in mode ``thp`` (None: no THP at all)."""
    folder = root / "devices/system/node/node0"
    folder.mkdir(parents=True)
    (folder / "cpulist").write_text("0-1\n")
    (folder / "meminfo").write_text("Node 0 MemTotal: 4000000 kB\nNode 0 MemFree: 3000000 kB\n")
    (folder / "distance").write_text("10\n")
    if thp is not None:
        mm = root / "kernel/mm/transparent_hugepage"
        mm.mkdir(parents=True)
        modes = " ".join(f"[{m}]" if m == thp else m for m in ("always", "madvise", "never"))
        (mm / "enabled").write_text(modes + "\n")
        (mm / "hpage_pmd_size").write_text("2097152\n")
    return root


def needs_cpus(*cpus):
    allowed = os.sched_getaffinity(0)
    return pytest.mark.skipif(not set(cpus) <= allowed, reason=f"needs CPUs {cpus} in this process's affinity")


def call_cli(capsys, *args) -> tuple:
    """``simnuma ARGS`` in this process: (exit status, stdout, stderr)."""
    from simnuma.cli import main

    capsys.readouterr()
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_refusal(code: int, err: str, expected: str = "") -> str:
    """The in-process form of :func:`assert_one_line_failure`."""
    lines = err.splitlines()
    assert code == 2, (code, err)
    assert len(lines) == 1, err
    assert expected in lines[0], lines[0]
    return lines[0]
