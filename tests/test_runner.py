"""The one runner (simnuma.runner): jobs keyed by everything a result depends on, each simulated once,
answered from memory or from a cache folder, the same on one process as on a pool."""
from __future__ import annotations

import json

import pytest

from simnuma import runner as runner_module
from simnuma.case import parse_case
from simnuma.runner import Job, ResultCache, Runner, board_hash, result_version
from simnuma.topology import load_topology

SIZE = 64 * 1024


@pytest.fixture(scope="module")
def dual():
    return load_topology("dual")


def jobs(board, seed=1):
    cases = ["0.0.r.0", "0.0.w.1 1.0.w.0", "0.0.r.1 + 1.0.r.1@0.5GB/s"]
    return [Job(board, parse_case(c), SIZE, "steady", seed) for c in cases]


def strip_times(result: dict) -> dict:
    return {k: v for k, v in result.items() if k not in ("wall_s", "cpu_s")}


def test_the_key_names_everything_a_result_depends_on(dual):
    base = Job(dual, parse_case("0.0.r.0"), SIZE)
    assert base.board == board_hash(dual)
    assert base.key == (board_hash(dual), (), "0.0.r.0", SIZE, "steady", 1, result_version())
    others = [Job(dual, parse_case("0.0.r.1"), SIZE), Job(dual, parse_case("0.0.r.0"), 2 * SIZE),
              Job(dual, parse_case("0.0.r.0"), SIZE, "exact"), Job(dual, parse_case("0.0.r.0"), SIZE, seed=2),
              Job(dual, parse_case("0.0.r.0"), SIZE, changes=(("defaults.memory.latency", 50.0),)),
              Job(dual.with_parameters({"defaults.memory.latency": "50 ns"}), parse_case("0.0.r.0"), SIZE)]
    assert len({base.key} | {j.key for j in others}) == 1 + len(others)
    assert Job(load_topology("dual"), parse_case("0.0.r.0 + idle"), SIZE).key == base.key


def test_each_distinct_job_runs_once_and_repeats_come_from_memory(dual):
    done = []
    with Runner(1) as runner:
        first = runner.run(jobs(dual) + jobs(dual), on_done=lambda job, cached: done.append(cached))
        again = runner.run(jobs(dual), on_done=lambda job, cached: done.append(cached))
    assert len(first) == 3 and runner.simulated == 3 and runner.cached == 3
    assert done == [False] * 3 + [True] * 3
    assert again == first


def test_a_cache_folder_answers_a_later_run_with_the_same_numbers(dual, tmp_path):
    with Runner(1, ResultCache(tmp_path)) as runner:
        made = runner.run(jobs(dual))
    assert len(list(tmp_path.glob("*.json"))) == 3
    with Runner(1, ResultCache(tmp_path)) as later:
        read = later.run(jobs(dual))
    assert later.simulated == 0 and later.cached == 3
    assert read == made


def test_a_damaged_or_foreign_cache_file_is_simulated_again(dual, tmp_path):
    job = jobs(dual)[0]
    with Runner(1, ResultCache(tmp_path)) as runner:
        runner.run([job])
    (path,) = tmp_path.glob("*.json")
    path.write_text("{not json")
    with Runner(1, ResultCache(tmp_path)) as runner:
        runner.run([job])
    assert runner.simulated == 1
    data = json.loads(path.read_text())
    data["key"][2] = "0.0.r.1"          # a file that answers another job
    path.write_text(json.dumps(data))
    with Runner(1, ResultCache(tmp_path)) as runner:
        runner.run([job])
    assert runner.simulated == 1


def test_a_new_version_of_simnuma_does_not_read_old_results(dual, tmp_path, monkeypatch):
    with Runner(1, ResultCache(tmp_path)) as runner:
        runner.run(jobs(dual)[:1])
    monkeypatch.setattr(runner_module, "result_version", lambda: "9.9.9+changed")
    with Runner(1, ResultCache(tmp_path)) as runner:
        runner.run(jobs(dual)[:1])
    assert runner.simulated == 1


def test_a_pool_gives_the_results_of_one_process(dual):
    with Runner(1) as one:
        serial = one.run(jobs(dual, seed=3))
    with Runner(2) as two:
        pooled = two.run(jobs(dual, seed=3))
    assert {k: strip_times(v) for k, v in serial.items()} == {k: strip_times(v) for k, v in pooled.items()}


def test_parameter_changes_are_applied_in_the_worker(dual):
    slow = Job(dual, parse_case("0.0.r.0"), SIZE, changes=(("defaults.memory.latency", 200.0),))
    with Runner(1) as runner:
        results = runner.run([Job(dual, parse_case("0.0.r.0"), SIZE), slow])
    assert results[slow.key]["makespan_ns"] > 1.5 * results[Job(dual, parse_case("0.0.r.0"), SIZE).key]["makespan_ns"]


def test_an_interrupt_while_the_pool_is_made_takes_effect_once_it_exists():
    """SIGTERM inside the block only is noted; the handler that was in place gets it when the block ends."""
    import os
    import signal

    from simnuma.runner import _interrupts_deferred

    seen = []

    def handler(signum, frame):
        seen.append(signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        with _interrupts_deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):      # let the interpreter run the (noting) handler
                pass
            assert seen == []
        assert seen == [signal.SIGTERM]
        assert signal.getsignal(signal.SIGTERM) is handler
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_worker_ends_with_the_process_that_started_it():
    import subprocess
    import sys
    import time

    if not sys.platform.startswith("linux"):
        pytest.skip("parent-death signals are Linux's")
    script = ("import multiprocessing, os, sys, time\n"
              "from simnuma.runner import _worker_ignores_interrupts\n"
              "def child():\n    _worker_ignores_interrupts(); time.sleep(60)\n"
              "p = multiprocessing.get_context('fork').Process(target=child); p.start()\n"
              "print(p.pid, flush=True); time.sleep(0.5); os._exit(0)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30).stdout
    pid = int(out.split()[0])
    for _ in range(100):
        try:
            os_status = open(f"/proc/{pid}/status").read()
        except FileNotFoundError:
            break
        if "State:\tZ" in os_status:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the worker outlived the process that started it")
