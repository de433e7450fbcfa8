"""The compiled model and analytic solver (mypyc) against their source: the same results, and never a stale build."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from simnuma.model import native

# one process per model: (board, foreground, background, mode, size); each exercises other blocks
CASES = [
    ("quartet", ["0.0.w.1", "1.0.w.0"], [], "exact", 2**19),                      # links saturated, credits
    ("quartet", ["0.0.t.0"], [], "exact", 2**18),                                 # DRAM, three streams' pages
    ("quartet", ["0.0.r.1", "1.0.r.3"], ["0.1.r.0@4GB/s", "1.1.r.1@4GB/s"], "steady", 2**22),
    ("x6440", ["0.0.w.3", "3.0.r.0"], [], "exact", 2**18),                        # DDR2 re-timed, write bursts
    ("dual", ["0.0.r.1"], [], "exact", 2**18),                                    # the FIFO memory
]

# and the analytic solver's, compiled with it: (board, foreground, background); "curve" is the test board with a
# measured curve memory (model/test_curve.py)
ANALYTIC = [
    ("quartet", ["0.0.r.1", "1.0.r.0", "2.0.w.3", "3.0.w.2"], ["0.1.r.0@3GB/s", "1.1.r.1@3GB/s"]),   # bounds, caps
    ("x6440", ["0.0.t.0", "1.0.w.0"], []),                                      # DRAM write episodes, conflicts
    ("ladder8", ["0.0.l.5"], []),                                               # a chase, probes to eight nodes
    ("curve", ["0.0.r.0", "0.1.w.0"], ["0.2.r.0@2GB/s"]),                       # a curve memory at its load
]

SCRIPT = """
import json, sys
from simnuma.model import native, simulate
from simnuma.analytic import analyze
sys.path.insert(0, sys.argv[3])
from model.test_curve import curve_board
out = {"status": native.status(), "results": [], "analytic": []}
for board, fg, bg, mode, size in json.loads(sys.argv[1]):
    r = simulate(board, fg, bg, size_bytes=size, mode=mode, baseline=False).to_dict()
    for key in ("wall_s", "cpu_s"):
        r.pop(key, None)
    out["results"].append(r)
for board, fg, bg in json.loads(sys.argv[2]):
    a = analyze(curve_board() if board == "curve" else board, fg, bg).to_dict()
    a.pop("solve_s")
    out["analytic"].append(a)
print(json.dumps(out, sort_keys=True))
"""


def _run(pure: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != native.PURE_VARIABLE}
    if pure:
        env[native.PURE_VARIABLE] = "1"
    tests = str(Path(__file__).resolve().parent.parent)
    done = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(CASES), json.dumps(ANALYTIC), tests], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_the_compiled_model_gives_the_results_of_its_source_to_the_last_digit():
    if not native.status().startswith("compiled"):
        pytest.skip(f"the model runs from its source here: {native.status()}")
    compiled, pure = _run(pure=False), _run(pure=True)
    assert compiled["status"].startswith("compiled") and pure["status"].startswith("source")
    assert compiled["results"] == pure["results"]
    assert compiled["analytic"] == pure["analytic"]


def test_the_model_is_compiled_where_mypyc_and_a_compiler_are_at_hand():
    status = native.status()
    if status.startswith("source (edited") or os.environ.get(native.PURE_VARIABLE):
        pytest.skip(status)
    if importlib.util.find_spec("mypyc") is None or not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no mypyc or no C compiler here: the model is Python")
    assert status == "compiled (mypyc)"


def test_the_source_digest_follows_every_compiled_module(tmp_path: Path):
    for name in native.COMPILED:
        copy = native.source_path(name, tmp_path)
        copy.parent.mkdir(exist_ok=True)
        shutil.copy(native.source_path(name), copy)
    before = native.source_digest(tmp_path)
    assert before == native.source_digest()
    for name in native.COMPILED:
        path = native.source_path(name, tmp_path)
        text = path.read_text()
        path.write_text(text + "\n")
        assert native.source_digest(tmp_path) != before, name
        path.write_text(text)
    assert native.source_digest(tmp_path) == before


def test_an_edited_or_refused_build_is_never_loaded():
    """With SIMNUMA_PURE set, every compiled module comes from its source (all or none: they call each other)."""
    script = ("import simnuma, importlib, json; from simnuma.model import native; "
              "print(json.dumps([importlib.import_module('simnuma.' + n).__file__ for n in native.COMPILED]))")
    env = dict(os.environ, **{native.PURE_VARIABLE: "1"})
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    files = json.loads(done.stdout)
    assert all(f.endswith(".py") for f in files), files
