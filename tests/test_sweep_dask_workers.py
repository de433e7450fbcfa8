"""A sweep on Dask checks its workers' simnuma first: a worker without simnuma, or with other sources, is named in
one line before anything is submitted, and a worker that joins later and differs never gets a result cached."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from simnuma.cli import main
from simnuma.errors import SimnumaError
from simnuma.runner import result_version
from simnuma.sweeps import execute, parse_sweep, run_sweep

distributed = pytest.importorskip("distributed")

TINY = """\
name: tiny
boards: [dual]
cases:
  - 0.0.r.1
size: 256KiB
"""

OTHER = "0.0.9+0123456789ab"
STRANGER = "tcp://10.9.9.9:4001"
BARE = "tcp://10.9.9.9:4002"


@pytest.fixture
def cluster():
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as c:
        yield c


def _with_strangers(real_run):
    """``client.run`` answering as the cluster does, with two more workers: one running other simnuma sources and
    one without simnuma (its answer is the error it could not import with, as ``on_error="return"`` gives)."""

    def run(*args, **kwargs):            # a bound method's arguments, or the class's with the client first
        answers = dict(real_run(*args, **kwargs))
        answers[STRANGER] = OTHER
        answers[BARE] = ModuleNotFoundError("No module named 'simnuma'")
        return answers

    return run


def _cached(folder) -> list:
    return sorted(folder.glob("*.json")) if folder.exists() else []


def test_every_worker_of_a_matching_cluster_answers_with_this_version(cluster):
    with distributed.Client(cluster) as client:
        answers = client.run(execute._worker_version)
        assert list(answers.values()) == [result_version()]
        execute._check_workers(client)          # nothing to refuse


def test_workers_that_differ_are_named_before_anything_is_submitted(cluster, tmp_path, monkeypatch):
    with distributed.Client(cluster) as client:
        real = list(client.scheduler_info()["workers"])
        monkeypatch.setattr(client, "run", _with_strangers(client.run))
        submitted = []
        monkeypatch.setattr(client, "submit", lambda *a, **k: submitted.append(a))
        with pytest.raises(SimnumaError) as caught:
            run_sweep(parse_sweep(TINY), dask=client, cache_dir=tmp_path / "cache")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"--dask: 2 of 3 workers differ from this simnuma ({result_version()}): ")
    assert f"{STRANGER} runs simnuma {OTHER}" in message
    assert f"{BARE} cannot run simnuma (ModuleNotFoundError: No module named 'simnuma')" in message
    assert real[0] not in message                 # the worker that matches is not named
    assert submitted == [] and _cached(tmp_path / "cache") == []


def test_the_command_refuses_in_one_line_and_writes_nothing(cluster, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(distributed.Client, "run", _with_strangers(distributed.Client.run))
    sweep_file = tmp_path / "tiny.yaml"
    sweep_file.write_text(TINY)
    out = tmp_path / "out"
    assert main(["sweep", str(sweep_file), "-o", str(out), "--dask", cluster.scheduler_address]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("--dask: 2 of 3 workers differ") and OTHER in err[0], err
    assert not out.exists()


def test_a_worker_that_joins_later_with_other_sources_gets_nothing_cached(cluster, tmp_path, monkeypatch):
    """Past the check (a worker joining afterwards), each result says which simnuma made it; another one stops
    the sweep before its result reaches the cache."""

    def elsewhere(job):
        return STRANGER, OTHER, {"threads": []}

    elsewhere.__qualname__ = elsewhere.__name__ = "_simulate_on_worker"
    elsewhere.__module__ = execute.__name__
    monkeypatch.setattr(execute, "_check_workers", lambda client: None)
    monkeypatch.setattr(execute, "_simulate_on_worker", elsewhere)
    with distributed.Client(cluster) as client:
        with pytest.raises(SimnumaError, match=re.escape(f"worker {STRANGER} runs simnuma {OTHER}, not this simnuma")):
            run_sweep(parse_sweep(TINY), dask=client, cache_dir=tmp_path / "cache")
    assert _cached(tmp_path / "cache") == []


def test_a_cluster_of_this_simnuma_runs_the_sweep(cluster, tmp_path):
    with distributed.Client(cluster) as client:
        run = run_sweep(parse_sweep(TINY), dask=client, cache_dir=tmp_path / "cache")
    assert run.info["simulated"] == run.info["simulations"] == len(_cached(tmp_path / "cache"))


BLOCK = """\
import sys


class NoSimnuma:
    def find_spec(self, name, path=None, target=None):
        if name == "simnuma" or name.startswith("simnuma."):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None


sys.meta_path.insert(0, NoSimnuma())
"""


def test_real_workers_with_other_sources_or_without_simnuma_are_named(tmp_path, capsys):
    """Worker processes as the review started them (2 s): one on a copy of simnuma with runner.py changed, one
    that cannot import simnuma at all (a worker of either used to poison the cache or hang the sweep)."""
    root = Path(__file__).resolve().parent.parent
    copy = tmp_path / "other"
    shutil.copytree(root / "simnuma", copy / "simnuma", ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / "simnuma" / "runner.py").open("a") as fh:
        fh.write("# another simnuma\n")
    (tmp_path / "block.py").write_text(BLOCK)
    sweep_file = tmp_path / "tiny.yaml"
    sweep_file.write_text(TINY)
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp", host="127.0.0.1",
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        address = cluster.scheduler_address
        worker = [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--no-nanny",
                  "--dashboard-address", ":0"]
        quiet = {"cwd": tmp_path, "stderr": subprocess.DEVNULL}     # not the checkout: python -m puts the cwd first
        procs = [subprocess.Popen(worker, env={**os.environ, "PYTHONPATH": str(copy)}, **quiet),
                 subprocess.Popen(worker + ["--preload", str(tmp_path / "block.py")],
                                  env={**os.environ, "PYTHONPATH": str(root)}, **quiet)]
        try:
            client.wait_for_workers(2, timeout=60)
            out = tmp_path / "out"
            assert main(["sweep", str(sweep_file), "-o", str(out), "--dask", address]) == 2
            err = capsys.readouterr().err.splitlines()
            assert len(err) == 1 and err[0].startswith("--dask: 2 of 2 workers differ"), err
            assert "runs simnuma 0.1" in err[0] and "cannot run simnuma (ModuleNotFoundError" in err[0]
            assert not out.exists()
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                proc.wait(timeout=30)
