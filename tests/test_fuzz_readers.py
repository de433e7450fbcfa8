"""Every reader gives a result or one clear error for any input: never a traceback, never a hang.

Random and mutated inputs for the case notation, study files and measurement files (the board
language has its own in tests/test_topology_properties.py).  Each test states how many inputs it
tries (hypothesis's max_examples).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simnuma import bundled
from simnuma.case import Case, parse_case
from simnuma.errors import CalibrationError, SimnumaError, SpecError, StudyError
from simnuma.measurements import load_measurements
from simnuma.study import parse_study

from model.helpers import quartet_sockets_text

ROOT = Path(__file__).resolve().parent.parent

NOTATION = st.lists(st.sampled_from(["0.0.r.0", "1.1.w.2", "0.0.t.0@2GB/s", "+", "bg", "high@low", "full@9GB/s",
                                     "others@idle", "0.0.x.0", "@", "1.2.r.", "0.0.r.0@", "0.0.r.0@-1GB/s",
                                     "hihg@low", "idle", "1e9", "\u00b5", "0.0.l.0@1kB/s", ""]), max_size=8)


@settings(max_examples=300, deadline=None)
@given(st.one_of(NOTATION.map(" ".join), st.text(max_size=40)))
def test_the_case_notation_reads_or_says_why(text):
    """300 inputs: word salads of the notation's own pieces, and arbitrary text."""
    try:
        case = parse_case(text)
    except SpecError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    assert isinstance(case, Case) and parse_case(case.name) == case


def _mutations():
    """A bundled study's text, with one line dropped, duplicated, truncated or garbled."""
    text, _ = bundled.read("studies", "quartet-crossfire")
    lines = text.splitlines()
    return st.tuples(st.integers(0, len(lines) - 1), st.sampled_from(["drop", "double", "cut", "garble", "indent"]),
                     st.integers(0, 40)).map(lambda m: _mutate(lines, *m))


def _mutate(lines, at, how, k):
    lines = list(lines)
    if how == "drop":
        del lines[at]
    elif how == "double":
        lines.insert(at, lines[at])
    elif how == "cut":
        lines[at] = lines[at][:k]
    elif how == "garble":
        lines[at] = lines[at][:k] + "}{[:&*!|" + lines[at][k:]
    else:
        lines[at] = " " * (k % 5) + lines[at]
    return "\n".join(lines) + "\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutations())
def test_a_mutated_study_reads_or_gives_file_line_messages(text):
    """150 mutants of the crossfire study: each loads, or fails with messages naming the file."""
    try:
        parse_study(text, "mutant.yaml")
    except StudyError as exc:
        assert str(exc).startswith("mutant.yaml"), str(exc)


def _report_variants():
    good = {"format": "simnuma-bench/2", "size_bytes": 1 << 20, "host": {"cpu_model": "X", "nodes": [
        {"id": 0, "cpus": [0, 1], "memory": True}]}, "threads": [
        {"spec": "0.0.r.0", "role": "foreground", "GBps": {"best": 5.0, "median": 5.0}, "ns_per_access": {
            "best": 12.0, "median": 12.0}}]}
    bad_values = st.sampled_from([None, "NaN", float("nan"), -1.0, 0, "5 GB/s", [], {}, True, 1e308])
    keys = st.sampled_from(["format", "size_bytes", "host", "threads"])
    thread_keys = st.sampled_from(["spec", "role", "GBps", "ns_per_access"])
    inner = st.sampled_from(["best", "median"])

    def thread_with(key, value, part):
        thread = dict(good["threads"][0])
        thread[key] = {**thread[key], part: value} if isinstance(thread[key], dict) else value
        return json.dumps({**good, "threads": [thread]})

    return st.one_of(
        st.just(json.dumps(good)),
        st.tuples(keys, bad_values).map(lambda kv: json.dumps({**good, kv[0]: kv[1]})),
        st.tuples(thread_keys, bad_values, inner).map(lambda a: thread_with(*a)),
        st.integers(0, len(json.dumps(good))).map(lambda n: json.dumps(good)[:n]),
        st.sampled_from(["simnuma-bench/9", "simnuma-reference/1", "", "x"]).map(
            lambda f: json.dumps({**good, "format": f})),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_report_variants())
def test_a_damaged_measurement_file_loads_or_says_why(tmp_path_factory, content):
    """150 reports: truncated, a wrong format version, NaN, negative or mistyped values."""
    path = tmp_path_factory.mktemp("m") / "report.json"
    path.write_text(content)
    try:
        data = load_measurements([path])
    except CalibrationError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc), str(exc)
    except SimnumaError as exc:   # pragma: no cover - a reader's error of another kind is still one message
        raise AssertionError(f"unexpected error type {type(exc).__name__}: {exc}") from None
    else:
        assert all(math.isfinite(m.value) and m.value > 0 for m in data)    # NaN, zero, negative: refused


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 8).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.integers(0, 1000), min_size=n - 1, max_size=n - 1),
    st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=n),
    st.integers(1, 6), st.integers(1, 6), st.sampled_from(["broadcast", "probe_filter"]),
    st.sampled_from(["shortest", "updown"]))))
def test_random_small_boards_run_to_a_result_or_a_named_deadlock(board):
    """25 boards of 2-8 Quartet sockets, random wirings, buffer counts, coherence and routing, one reader
    per socket: every run ends (the model stops a deadlock itself), and a deadlock names its cycle."""
    from simnuma import parse_topology, simulate
    from simnuma.model.deadlock import DeadlockError

    n, parents, extra, probe_buffers, response_buffers, coherence, routing = board
    links = {(i, parents[i - 1] % i) for i in range(1, n)} | {e for e in extra if e[0] != e[1]}
    text = quartet_sockets_text("random", n, links, routing, coherence,
                                f"buffers: {{probe: {probe_buffers}, response: {response_buffers}}}")
    topology = parse_topology(text, "random.yaml")
    try:
        result = simulate(topology, [f"{s}.0.r.{s}" for s in range(n)], size_bytes=16 * 1024, mode="exact",
                          baseline=False)
    except DeadlockError as exc:
        assert exc.diagnosis["outstanding"] > 0 and (exc.diagnosis["cycle"] or exc.diagnosis["waiting"])
        return
    assert result.makespan_ns > 0 and all(t.time_ns > 0 for t in result.threads)


@pytest.mark.parametrize("command, given, message", [
    (["run", "FILE", "0.0.r.0"], "study", "format: this is a study, not a board description"),
    (["run", "FILE", "0.0.r.0"], "reference", "format: this is a reference dataset, not a board description"),
    (["reproduce", "FILE", "-o", "OUT"], "board", "this is a board, not a study"),
    (["reproduce", "FILE", "-o", "OUT"], "sweep", "format: this is a sweep file, not a study"),
    (["sweep", "FILE", "-o", "OUT"], "study", "format: this is a study, not a sweep file"),
    (["validate", "quartet", "FILE"], "board", "this is a board, not a reference dataset of measurements"),
    (["validate", "quartet", "FILE"], "study", "format: this is a study, not a reference dataset of measurements"),
])
def test_another_kind_of_file_is_named_in_one_line(tmp_path, capsys, command, given, message):
    """A study where a board goes (or any of simnuma's files where another goes) is one line, not one per key."""
    from simnuma.cli import main

    texts = {"board": (ROOT / "topologies" / "quartet.yaml").read_text(),
             "study": (ROOT / "experiments" / "quartet-hops.yaml").read_text(),
             "sweep": (ROOT / "experiments" / "sweeps" / "quick-link-speed.yaml").read_text(),
             "reference": (ROOT / "experiments" / "reference" / "quartet-single-thread.yaml").read_text()}
    path = tmp_path / "given.yaml"
    path.write_text(texts[given])
    argv = [str(path) if a == "FILE" else str(tmp_path / "out") if a == "OUT" else a for a in command]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{path}:") and err[0].endswith(message), err
