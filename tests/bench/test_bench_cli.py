"""``simnuma bench run`` from the command line: output, atomic files, and one-line refusals."""
from __future__ import annotations

import json

import pytest
from benchutil import assert_one_line_failure, assert_one_line_refusal, call_cli, run_cli

import simnuma.bench


def test_run_writes_the_report_and_a_summary(stride, tmp_path):
    target = tmp_path / "out" / "r.json"
    done = run_cli("bench", "run", "0.0.r.0", "--size", "4MiB", "--reps", "2", "-o", target)
    assert done.returncode == 0, done.stderr
    report = json.loads(target.read_text())
    assert report["format"] == "simnuma-bench/2" and report["threads"][0]["spec"] == "0.0.r.0"
    assert "GB/s best" in done.stdout and f"wrote {target}" in done.stdout
    assert not list(target.parent.glob(".*tmp"))


def test_run_prints_json_without_output_file(stride, capsys):
    code, out, err = call_cli(capsys, "bench", "run", "0.0.l.0", "--size", "1MiB", "--reps", "1")
    assert code == 0, err
    assert json.loads(out)["threads"][0]["op"] == "l"


@pytest.mark.parametrize("args, message", [
    (["0.0.q.0"], "'0.0.q.0': unknown op 'q'"),
    (["0.0.r.0@quick"], "'0.0.r.0@quick': malformed rate"),
    (["9.0.r.0"], "'9.0.r.0': no node 9 on this host"),
    (["0.0.r.9"], "'0.0.r.9': no memory node 9 on this host"),
    (["0.4096.r.0"], "no core 4096"),
    (["0.0.r.0", "--size", "64PiB"], "unknown unit 'PiB'"),
    (["0.0.r.0", "--size", "1TiB"], "arrays on node 0 need 1 TiB but node 0 has"),
    (["0.0.r.0", "--reps", "0"], "--reps '0'"),
    (["0.0.r.0", "0.0.w.0"], "already runs '0.0.r.0'; one thread per core"),
])
def test_bad_requests_exit_2_with_one_line(args, message, tmp_path, capsys):
    code, out, err = call_cli(capsys, "bench", "run", *args, "-o", tmp_path / "never.json")
    assert_one_line_refusal(code, err, message)
    assert not (tmp_path / "never.json").exists()


def test_an_empty_output_path_is_refused_before_measuring(capsys):
    code, out, err = call_cli(capsys, "bench", "run", "0.0.r.0", "-o", "")
    assert_one_line_refusal(code, err, "-o '': an empty path names no file")


@pytest.mark.parametrize("rounds", ["0", "many"])
def test_bad_rounds_exit_2_before_measuring(rounds, tmp_path, capsys):
    code, out, err = call_cli(capsys, "bench", "suite", "--rounds", rounds, "-o", tmp_path / "suite")
    assert_one_line_refusal(code, err, f"--rounds '{rounds}'")
    assert not (tmp_path / "suite").exists()


def test_more_threads_than_cpus(capsys):
    from simnuma.bench.host import discover_host

    count = discover_host().cpu_count + 1
    specs = [f"0.{i}.r.0" for i in range(count)]
    code, out, err = call_cli(capsys, "bench", "run", *specs)
    assert_one_line_refusal(code, err, f"{count} threads but this host has only {count - 1} CPUs")


def test_refusal_in_a_fresh_process_leaves_an_existing_file_alone(tmp_path):
    target = tmp_path / "keep.json"
    target.write_text('{"old": true}\n')
    done = run_cli("bench", "run", "0.0.x.0", "-o", target)
    assert_one_line_failure(done, "'0.0.x.0': unknown op 'x'")
    assert target.read_text() == '{"old": true}\n'


def test_python_api_is_exported():
    assert callable(simnuma.bench.run_bench) and callable(simnuma.bench.run_suite)
    assert "run_bench" in simnuma.bench.__all__
