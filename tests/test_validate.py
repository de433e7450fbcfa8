"""Validation: refusing calibration cases, the report's numbers and its files."""
from __future__ import annotations

import builtins
import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from simnuma.calibrate import RECORD_PREFIX
from simnuma.errors import CalibrationError
from simnuma.measurements import MachineInfo, Measurement, MeasurementSet, parse_case
from simnuma.topology import parse_topology
from simnuma.calibrate.validate import PLOT_HINT, Validation, ValidationRow, validate, write_outputs

REPO = Path(__file__).resolve().parents[1]
SIZE = 1 << 20
MACHINE = MachineInfo("board 'onenode'", board="onenode")

BOARD = """\
name: onenode
description: one-node test board
defaults:
  cores: 2
  ports: 1
  core: {window: {r: 3, w: 3, t: 3}}
  memory: {bandwidth: 6.4 GB/s, efficiency: 0.6, latency: 70 ns, queue: 16}
  sri: {latency: 2 ns, buffers: {request: 2, posted: 3, response: 3}, probe_queue: 8}
  mct: {buffers: {response: 5, probe: 2}}
  xbar: {latency: 5 ns}
  probe: {lookup: 20 ns}
link_defaults: {bandwidth: 4 GB/s, latency: 20 ns, buffers: {request: 1, posted: 1, response: 6, probe: 4}}
nodes: [{id: 0}]
links: []
io: [{node: 0}]
coherence: probe_filter
"""


def measurement(case, thread, value, metric="thread_GBps"):
    return Measurement(case=parse_case(case), metric=metric, value=value, source="test", machine=MACHINE,
                       origin="test.json", thread=thread, size_bytes=SIZE)


def data_set(*items):
    return MeasurementSet(tuple(items), MACHINE, ("test.json",))


def with_record(cases):
    record = {"version": "0.1.0", "date": "2026-01-01", "cases": cases, "measurements": ["cal.json"]}
    return f"{RECORD_PREFIX}{json.dumps(record)}\n" + BOARD


def fixed_report():
    """A report with known numbers: errors +10%, -20%, +5%."""
    rows = [ValidationRow(measurement("0.0.r.0 0.1.r.0", "0.0.r.0", 2.0), 2.2),
            ValidationRow(measurement("0.0.w.0 0.1.w.0", "0.0.w.0", 1.0), 0.8),
            ValidationRow(measurement("0.0.r.0 bg 0.1.r.0@1GB/s", "0.0.r.0", 4.0), 4.2)]
    data = data_set(*(r.measurement for r in rows))
    return Validation(board="onenode", board_source="onenode.yaml", record={"cases": ["0.0.r.0"], "date": "d",
                                                                             "measurements": ["cal.json"]},
                      data=data, rows=rows, excluded_cases=["0.0.r.0"], wall_seconds=1.0, date="2026-01-02")


# ------------------------------------------------------------------ numbers

def test_mean_worst_and_orderings():
    report = fixed_report()
    assert report.mean_abs_error_percent == pytest.approx((10 + 20 + 5) / 3)
    assert report.worst.error_percent == pytest.approx(-20.0)
    orderings = report.orderings()
    assert len(orderings) == 3
    assert all(o.holds for o in orderings)
    summary = report.summary()
    assert summary["cases"] == 3 and summary["orderings_kept"] == 3


def test_single_and_multi_thread_cases_are_summarised_apart():
    rows = [ValidationRow(measurement("0.0.l.0", "0.0.l.0", 200.0, "thread_latency_ns"), 100.0),
            ValidationRow(measurement("0.0.r.0 0.1.r.0", "0.0.r.0", 10.0), 9.0),
            ValidationRow(measurement("0.0.w.0 0.1.w.0", "0.1.w.0", 8.0), 8.4)]
    report = Validation("onenode", "b.yaml", None, data_set(*(r.measurement for r in rows)), rows, [], 0.1)
    groups = report.summary()["groups"]
    assert groups["single-thread"]["mean_abs_error_percent"] == pytest.approx(50.0)
    assert groups["multi-thread"]["mean_abs_error_percent"] == pytest.approx(7.5)
    assert groups["multi-thread"]["worst"]["error_percent"] == pytest.approx(-10.0)
    text = report.render_text()
    assert "multi-thread: 2 measurements of 2 cases: mean |error| 7.5%, worst -10.0%" in text
    assert "single-thread: 1 measurement of 1 case: mean |error| 50.0%" in text
    assert "- multi-thread: 2 measurements" in report.to_markdown()


def test_a_reversed_ordering_is_named():
    rows = [ValidationRow(measurement("0.0.r.0 0.1.r.0", "0.0.r.0", 2.0), 1.5),
            ValidationRow(measurement("0.0.w.0 0.1.w.0", "0.0.w.0", 1.0), 1.6)]
    report = Validation("onenode", "b.yaml", None, data_set(*(r.measurement for r in rows)), rows, [], 0.1)
    (ordering,) = report.orderings()
    assert not ordering.holds
    assert "reversed: 0.0.r.0 0.1.r.0 0.0.r.0 GB/s > 0.0.w.0 0.1.w.0 0.0.w.0 GB/s" in report.render_text()
    assert "no calibration record" in report.render_text()


def test_markdown_content():
    text = fixed_report().to_markdown()
    assert text.startswith("# Validation of board `onenode`")
    assert "| case | metric | measured | predicted | error |" in text
    assert "| 0.0.w.0 0.1.w.0 | 0.0.w.0 GB/s | 1.00 | 0.800 | -20.0% |" in text
    assert "mean |error| 11.7%, worst -20.0% (0.0.w.0 0.1.w.0 | 0.0.w.0 GB/s)" in text
    assert "not validated (used for calibration): 0.0.r.0" in text


def test_csv_content():
    rows = list(csv.DictReader(io.StringIO(fixed_report().to_csv())))
    assert [r["case"] for r in rows] == ["0.0.r.0 0.1.r.0", "0.0.w.0 0.1.w.0", "0.0.r.0 + 0.1.r.0@1GB/s"]
    assert rows[2]["background"] == "0.1.r.0@1GB/s"
    assert float(rows[0]["measured"]) == 2.0 and float(rows[0]["predicted"]) == 2.2
    assert float(rows[1]["error_percent"]) == pytest.approx(-20.0)
    assert rows[0]["unit"] == "GB/s" and rows[0]["metric"] == "thread_GBps"


def test_json_content():
    data = fixed_report().to_dict()
    assert data["board"] == "onenode"
    assert data["excluded_cases"] == ["0.0.r.0"]
    assert data["summary"]["mean_abs_error_percent"] == pytest.approx(35 / 3)
    assert data["summary"]["worst"] == {"case": "0.0.w.0 0.1.w.0", "label": "0.0.w.0 GB/s",
                                        "error_percent": pytest.approx(-20.0)}
    assert [r["error_percent"] for r in data["rows"]] == [pytest.approx(10.0), pytest.approx(-20.0),
                                                          pytest.approx(5.0)]
    json.dumps(data)


def test_outputs_written_with_plots(tmp_path):
    pytest.importorskip("matplotlib")
    written, note = write_outputs(fixed_report(), tmp_path / "out")
    names = sorted(p.name for p in written)
    assert names == ["bars.png", "parity.png", "validation.csv", "validation.json", "validation.md"]
    assert note == ""
    assert (tmp_path / "out" / "parity.png").read_bytes()[:4] == b"\x89PNG"
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.endswith(".tmp")]


def test_outputs_without_matplotlib_still_write_the_tables(tmp_path, monkeypatch):
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    written, note = write_outputs(fixed_report(), tmp_path)
    assert sorted(p.name for p in written) == ["validation.csv", "validation.json", "validation.md"]
    assert note == PLOT_HINT
    assert "pip install 'simnuma[plot]'" in note and "\n" not in note


# ------------------------------------------------------------------ calibration cases are never mixed in

def test_calibration_cases_are_excluded():
    data = data_set(measurement("0.0.r.0", "0.0.r.0", 2.0), measurement("0.0.r.0 0.1.r.0", "0.1.r.0", 1.8))
    report = validate(parse_topology(BOARD), data, board_text=with_record(["0.0.r.0"]), processes=1)
    assert report.excluded_cases == ["0.0.r.0"]
    assert [r.measurement.case.name for r in report.rows] == ["0.0.r.0 0.1.r.0"]
    assert report.rows[0].predicted > 0


def test_only_calibration_cases_is_refused():
    data = data_set(measurement("0.0.r.0", "0.0.r.0", 2.0))
    with pytest.raises(CalibrationError, match="nothing is left to validate"):
        validate(parse_topology(BOARD), data, board_text=with_record(["0.0.r.0"]), processes=1)


def test_malformed_record_is_reported():
    with pytest.raises(CalibrationError, match="malformed"):
        validate(parse_topology(BOARD), data_set(measurement("0.0.r.0", "0.0.r.0", 2.0)),
                 board_text=RECORD_PREFIX + "{oops\n" + BOARD, processes=1)


# ------------------------------------------------------------------ the command line

def run_cli(*args):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "simnuma", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=300)


def reference_file(tmp_path, entries):
    lines = ["format: simnuma-reference/1", "name: t", "board: onenode", f"size: {SIZE} B", "measurements:"]
    lines += [f"  - {e}" for e in entries]
    path = tmp_path / "ref.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_cli_validate_writes_the_report(tmp_path):
    board = tmp_path / "cal.yaml"
    board.write_text(with_record(["0.0.r.0"]))
    ref = reference_file(tmp_path, [
        "{case: 0.0.r.0, metric: thread_GBps, value: 2.0, source: x}",
        "{case: 0.0.r.0 0.1.r.0, metric: thread_GBps, thread: 0.0.r.0, value: 1.9, source: x}",
        "{case: 0.0.w.0 bg 0.1.r.0@0.5GB/s, metric: thread_GBps, value: 1.5, source: x}",
    ])
    out = tmp_path / "report"
    done = run_cli("validate", board, ref, "-o", out, "--jobs", "1")
    assert done.returncode == 0, done.stderr
    assert "not validated (used for calibration): 0.0.r.0" in done.stdout
    assert "mean |error|" in done.stdout
    table = list(csv.DictReader((out / "validation.csv").open()))
    assert [r["case"] for r in table] == ["0.0.r.0 0.1.r.0", "0.0.w.0 + 0.1.r.0@0.5GB/s"]
    assert json.loads((out / "validation.json").read_text())["excluded_cases"] == ["0.0.r.0"]


@pytest.mark.parametrize("board_text, entries, message", [
    (with_record(["0.0.r.0"]), ["{case: 0.0.r.0, metric: thread_GBps, value: 2.0, source: x}"],
     "nothing is left to validate"),
    (BOARD.replace("name: onenode", "name: other"), ["{case: 0.0.r.0, metric: thread_GBps, value: 2.0, source: x}"],
     "not on board 'other'"),
    (BOARD, ["{case: 0.2.r.0, metric: thread_GBps, value: 2.0, source: x}"], "cannot be placed"),
])
def test_cli_validate_errors(tmp_path, board_text, entries, message):
    board = tmp_path / "b.yaml"
    board.write_text(board_text)
    out = tmp_path / "report"
    done = run_cli("validate", board, reference_file(tmp_path, entries), "-o", out)
    assert done.returncode == 2
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_latency_chases_are_validated_idle_and_loaded():
    """A chase is simulated as a chase, also beside read streams of its own node."""
    idle = measurement("0.0.l.0", "0.0.l.0", 120.0, metric="thread_latency_ns")
    loaded = measurement("0.0.l.0 bg 0.1.r.0", "0.0.l.0", 150.0, metric="thread_latency_ns")
    data = data_set(measurement("0.0.r.0", "0.0.r.0", 2.0), idle, loaded)
    report = validate(parse_topology(BOARD), data, board_text=with_record(["0.0.r.0"]), processes=1)
    rows = {r.measurement.case.name: r for r in report.rows}
    assert set(rows) == {"0.0.l.0", "0.0.l.0 + 0.1.r.0"}
    assert 0 < rows["0.0.l.0"].predicted < rows["0.0.l.0 + 0.1.r.0"].predicted


def test_the_header_names_what_the_calibration_did_not_identify():
    record = {"version": "0.1.0", "date": "2026-01-01", "cases": ["0.0.r.0"], "measurements": ["cal.json"],
              "not_identified": {"probe.lookup": "no fitted prediction depends on it"}}
    text = f"{RECORD_PREFIX}{json.dumps(record)}\n" + BOARD
    data = data_set(measurement("0.0.r.0", "0.0.r.0", 2.0), measurement("0.0.r.0 0.1.r.0", "0.1.r.0", 1.8))
    report = validate(parse_topology(BOARD), data, board_text=text, processes=1)
    assert "not identified by the calibration, the board's own values: probe.lookup" in report.render_text()


def test_untrusted_measurements_are_listed_but_left_out_of_the_headline():
    import dataclasses

    report = fixed_report()
    shaky = dataclasses.replace(report.rows[1].measurement, caveat="the thread shared its CPU (60%)")
    rows = [report.rows[0], ValidationRow(shaky, 0.8), report.rows[2]]
    trusted = dataclasses.replace(report, rows=rows)
    assert trusted.mean_abs_error_percent == pytest.approx((10 + 5) / 2)
    assert trusted.worst.error_percent == pytest.approx(10.0)
    text = trusted.render_text()
    assert "0.0.w.0 0.1.w.0" in text and "-20.0% *" in text          # still listed, marked
    assert "1 untrusted measurement (*) left out of these figures (--include-untrusted counts them)" in text
    assert trusted.summary()["untrusted_left_out"] == 1 and trusted.summary()["measurements"] == 2
    everything = dataclasses.replace(trusted, include_untrusted=True)
    assert everything.mean_abs_error_percent == pytest.approx((10 + 20 + 5) / 3)
    assert "1 untrusted measurement (*) counted" in everything.render_text()
    only_shaky = dataclasses.replace(report, rows=[ValidationRow(shaky, 0.8)])
    assert only_shaky.mean_abs_error_percent == pytest.approx(20.0)   # nothing trusted: all are counted
