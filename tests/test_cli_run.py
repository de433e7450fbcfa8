"""``simnuma run`` from the command line: output, JSON, and one-line errors."""
from __future__ import annotations

import json
import re

import pytest

from simnuma.cli import main

REQUIRED = {"threads", "makespan_ns", "makespan_percent", "links", "memory", "queues", "bottleneck", "mode",
            "seed", "parameters"}


def test_run_json(capsys, tmp_path):
    out_file = tmp_path / "r.json"
    code = main(["run", "quartet", "0.0.w.1", "1.0.w.0", "--bg", "2.0.r.2@0.5GB/s", "--size", "4MiB",
                 "--json", "-o", str(out_file)])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert REQUIRED <= set(data)
    assert json.loads(out_file.read_text()) == data
    fg = [t for t in data["threads"] if t["role"] == "foreground"]
    assert [t["spec"] for t in fg] == ["0.0.w.1", "1.0.w.0"]
    for t in fg:
        assert {"spec", "time_ns", "percent_of_local_read", "bandwidth_GBps", "latency_ns"} <= set(t)
        assert set(t["latency_ns"]) == {"mean", "p50", "p99", "histogram"}
        assert t["percent_of_local_read"] > 100
    for link in data["links"]:
        assert {"src", "dst", "utilization", "data_utilization", "bytes"} <= set(link)
    assert data["parameters"]["name"] == "quartet"
    assert data["makespan_ns"] == max(t["time_ns"] for t in fg)


def test_run_text(capsys):
    assert main(["run", "quartet", "0.0.r.0", "--size", "1MiB"]) == 0
    text = capsys.readouterr().out
    assert "0.0.r.0" in text and "100.0%" in text and "bottleneck" in text


def test_run_text_names_what_the_fullest_buffers_waited_on(capsys):
    """Crossfire writers: each SRI's posted buffers wait on their link's single posted buffer (64 MiB: over
    1 MiB the start-up's burst leaves a link 95% busy, named as such)."""
    assert main(["run", "quartet", "0.0.w.1", "1.0.w.0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("fullest buffers") and line.endswith("its slots waiting on") for line in lines)
    row = next(line for line in lines if line.startswith("N0 sri->xbar posted"))
    share = re.search(r"link 0->1 posted cmd \((\d+)%\)$", row)
    assert share and int(share.group(1)) > 50, row
    # each SRI's buffers wait on their link's, full all the time: the chain behind the bottleneck is printed
    assert any(re.fullmatch(r"backed up \(each waiting on the next\): N\d sri->xbar posted -> link \d->\d posted cmd",
                            line) for line in lines), lines[-4:]
    # the role column, and what steady mode simulated beside what it added to it
    assert lines[2].split()[:2] == ["thread", "role"] and lines[4].split()[:2] == ["0.0.w.1", "fg"]
    steady = re.fullmatch(r"simulated ([\d.]+) us \(\d+ transactions\), extrapolated ([\d.]+) ms more", lines[-1])
    makespan = re.match(r"makespan ([\d.]+) ms", next(line for line in lines if line.startswith("makespan")))
    assert steady and makespan, lines[-1]
    assert float(steady.group(1)) / 1e3 + float(steady.group(2)) == pytest.approx(float(makespan.group(1)), abs=2e-3)


def test_set_changes_the_board_for_one_run_and_says_so(capsys):
    """``--set PATH=VALUE``: the crossfire writers saturate a 4 GB/s link; at 8 GB/s they are faster, and the
    JSON names the changes, the changed board's hash and its parameters."""
    argv = ["run", "quartet", "0.0.w.1", "1.0.w.0", "--size", "1MiB", "--json"]
    assert main(argv) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(argv + ["--set", "link_defaults.bandwidth=8 GB/s", "--set", "nodes.3.memory.queue=32"]) == 0
    fast = json.loads(capsys.readouterr().out)
    assert fast["changes"] == {"link_defaults.bandwidth": "8 GB/s", "nodes.3.memory.queue": "32"}
    assert "changes" not in plain and fast["board_hash"] != plain["board_hash"]
    assert {link["capacity_GBps"] for link in fast["links"]} == {8.0}
    assert fast["makespan_ns"] < 0.95 * plain["makespan_ns"]
    assert main(["run", "quartet", "0.0.r.0", "--size", "1MiB", "--set", "link_defaults.latency=20ns"]) == 0
    assert "changed: link_defaults.latency = 20ns" in capsys.readouterr().out


@pytest.mark.parametrize("change,message", [
    ("defaults.nope=3", "--set defaults.nope=3: no such parameter"),
    ("nodes.9.memory.latency=3ns", "--set nodes.9.memory.latency=3ns: no node 9"),
    ("defaults.memory.latency=abc", "--set defaults.memory.latency=abc: expected a time"),
    ("defaults.core.window.w=0", "--set defaults.core.window.w=0: must be positive"),
    ("link_defaults.latency", "--set link_defaults.latency: expected PATH=VALUE"),
    ("link_defaults.latency=[1, 2]", "expected one value after '='"),
])
def test_bad_set_is_one_line_naming_the_option(capsys, change, message):
    assert main(["run", "quartet", "0.0.r.0", "--size", "1MiB", "--set", change]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_changes_that_need_each_other_are_made_together(capsys):
    """A dynamic idle limit needs an idle limit to start from: on a board without one, the two ``--set`` options
    work together in either order, and the first alone is one line naming it."""
    size = ["--size", "1MiB"]
    dynamic, idle = "defaults.memory.dram.idle_dynamic=true", "defaults.memory.dram.idle_close=16clk"
    assert main(["run", "x6440", "0.0.r.0", *size, "--set", dynamic, "--set", idle]) == 0
    assert main(["run", "x6440", "0.0.r.0", *size, "--set", idle, "--set", dynamic]) == 0
    capsys.readouterr()
    assert main(["run", "x6440", "0.0.r.0", *size, "--set", dynamic]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("--set defaults.memory.dram.idle_dynamic=True: ")


@pytest.mark.parametrize("argv,message", [
    (["run", "quartet", "0.0.x.1"], "unknown op"),
    (["run", "quartet", "9.0.r.0"], "no node 9"),
    (["run", "quartet", "0.5.r.0"], "no core 5"),
    (["run", "quartet", "0.0.r.0", "0.0.w.1"], "already runs"),
    (["run", "quartet", "0.0.r.0", "--bg", "1.0.r.1@fast"], "malformed rate"),
    (["run", "quartet", "0.0.r.0", "--size", "lots"], "--size"),
    (["run", "nosuchboard", "0.0.r.0"], "nosuchboard"),
    (["run", "quartet", "0.0.r.0", "--trace-window", "5us:1us"], "--trace-window: expected a window"),
    (["run", "quartet", "0.0.r.0", "--interval", "0us"], "--interval: expected a positive time"),
    (["run", "quartet", "0.0.r.0", "--analytic", "--interval", "fast"], "--interval: expected a time"),
    (["validate", "quartet", "quartet-single-thread", "--case", "0.0.q.0"], "--case: '0.0.q.0': unknown op 'q'"),
    (["validate", "quartet", "quartet-single-thread", "--case", "0.0.t.0 + high@low"], "--case '0.0.t.0 + high@low'"),
    (["topo", "draw", "quartet", "-o", ""], "-o '': an empty path names no file"),
    (["run", "quartet", "0.0.r.0", "--animate", "board.png"], "--animate 'board.png': an animation is written as a GIF"),
    (["matrix", "dual", "--figure", "matrices.svg"], "--figure 'matrices.svg': the figure is written as a PNG"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert message in err[0]
    assert "Traceback" not in err[0]


@pytest.mark.parametrize("argv,message", [
    (["run", "quartet", "0.0.r.0@0.000001GB/s"], "the slowest rate is 1 MB/s"),
    (["run", "quartet", "0.0.r.0", "--size", "1e30B"], "--size: expected an array of 64 B to 1024 TiB per thread"),
    (["run", "quartet", "0.0.r.0", "--size", "1TiB", "--exact"], "exact mode simulates every line"),
    (["run", "quartet", "0.0.r.0", "--size", "5GiB", "--exact"], "more than the 4 GiB"),
])
def test_runs_that_could_not_end_are_refused_at_once(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def test_steady_mode_extrapolates_any_size():
    result = main(["run", "quartet", "0.0.r.0", "--size", "1TiB"])
    assert result == 0
