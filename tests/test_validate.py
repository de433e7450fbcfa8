"""Validation: refusing calibration cases, the report's numbers and its files."""
from __future__ import annotations

import builtins
import csv
import dataclasses
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from simnuma.calibrate import RECORD_PREFIX
from simnuma.errors import CalibrationError
from simnuma.measurements import MachineInfo, Measurement, MeasurementSet, load_measurements, parse_case
from simnuma.topology import parse_topology
from simnuma.calibrate.validate import (
    ERROR_BAR_LEGEND,
    PLOT_HINT,
    Validation,
    ValidationRow,
    calibration_overfit,
    validate,
    write_outputs,
)

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


def measurement(case, thread, value, metric="thread_GBps", repetitions=()):
    return Measurement(case=parse_case(case), metric=metric, value=value, source="test", machine=MACHINE,
                       origin="test.json", thread=thread, size_bytes=SIZE, repetitions=repetitions)


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
    assert "| case | metric | measured | error bar | predicted | error | within |" in text
    assert "| 0.0.w.0 0.1.w.0 | 0.0.w.0 GB/s | 1.00 | n/a | 0.800 | -20.0% | n/a |" in text
    assert "mean |error| 11.7%, worst -20.0% (0.0.w.0 0.1.w.0 | 0.0.w.0 GB/s)" in text
    assert "not validated (used for calibration): 0.0.r.0" in text


def test_a_many_thread_case_is_squeezed_in_the_tables_and_whole_in_the_files():
    """The chase beside 63 streams: the text and Markdown tables show its first two streams, the last and the count
    (a row of one screen's width), the CSV and the JSON the whole case."""
    case = "0.0.l.0 + " + " ".join(f"0.{k}.w.0" for k in range(1, 64))
    rows = [ValidationRow(measurement(case, "0.0.l.0", 545.0, "thread_latency_ns"), 650.0),
            ValidationRow(measurement("0.0.l.0", "0.0.l.0", 118.0, "thread_latency_ns"), 117.0)]
    report = Validation("onenode", "b.yaml", None, data_set(*(r.measurement for r in rows)), rows, [], 0.1)
    short = "0.0.l.0 + 0.1.w.0 0.2.w.0 ... 0.63.w.0 (63 threads)"
    text = report.render_text()
    assert short in text and case not in text and max(len(line) for line in text.splitlines()[3:6]) < 160
    assert f"worst +19.3% ({short} | 0.0.l.0 latency ns)" in text
    assert f"| {short} | 0.0.l.0 latency ns |" in report.to_markdown()
    assert [r["case"] for r in csv.DictReader(io.StringIO(report.to_csv()))][0] == case
    assert json.loads(json.dumps(report.to_dict()))["rows"][0]["case"] == case


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
    report = json.loads((out / "validation.json").read_text())
    assert report["excluded_cases"] == ["0.0.r.0"]
    # what the predictions came from: the board's parameters and the seed, in every output
    from simnuma.runner import board_hash
    from simnuma.topology import load_topology

    digest = board_hash(load_topology(str(board)))
    assert report["board_hash"] == digest and report["seed"] == 1
    assert f"hash {digest}) against" in done.stdout and ", seed 1" in done.stdout
    assert f"hash {digest}" in (out / "validation.md").read_text()


@pytest.mark.parametrize("board_text, entries, message", [
    (with_record(["0.0.r.0"]), ["{case: 0.0.r.0, metric: thread_GBps, value: 2.0, source: x}"],
     "nothing is left to validate"),
    (BOARD.replace("name: onenode", "name: other"), ["{case: 0.0.r.0, metric: thread_GBps, value: 2.0, source: x}"],
     "not on board 'other'"),
    # another board's measurements are refused as such even when its record names every case measured
    (with_record(["0.0.r.0"]).replace("name: onenode", "name: other"),
     ["{case: 0.0.r.0, metric: thread_GBps, value: 2.0, source: x}"], "not on board 'other'"),
    (BOARD, ["{case: 0.2.r.0, metric: thread_GBps, value: 2.0, source: x}"],
     "measurements[0].case: '0.2.r.0': node 0 has 2 cores (0..1), no core 2"),
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


def test_validation_tells_its_progress_bar_the_total_and_counts_every_case_done():
    idle = measurement("0.0.l.0", "0.0.l.0", 120.0, metric="thread_latency_ns")
    loaded = measurement("0.0.l.0 bg 0.1.r.0", "0.0.l.0", 150.0, metric="thread_latency_ns")
    data = data_set(measurement("0.0.r.0", "0.0.r.0", 2.0), idle, loaded)
    totals, steps = [], []
    validate(parse_topology(BOARD), data, board_text=with_record(["0.0.r.0"]), processes=1,
             progress=steps.append, total=totals.append)
    assert len(totals) == 1 and totals[0] >= 2 and sum(steps) == totals[0]


def test_the_header_names_what_the_calibration_did_not_identify():
    record = {"version": "0.1.0", "date": "2026-01-01", "cases": ["0.0.r.0"], "measurements": ["cal.json"],
              "not_identified": {"probe.lookup": "no fitted prediction depends on it"}}
    text = f"{RECORD_PREFIX}{json.dumps(record)}\n" + BOARD
    data = data_set(measurement("0.0.r.0", "0.0.r.0", 2.0), measurement("0.0.r.0 0.1.r.0", "0.1.r.0", 1.8))
    report = validate(parse_topology(BOARD), data, board_text=text, processes=1)
    assert "not identified by the calibration, the board's own values: probe.lookup" in report.render_text()


def test_untrusted_measurements_are_listed_but_left_out_of_the_headline():
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


# ------------------------------------------------------------------ error bars from the repetitions

def error_bar_report(include_untrusted=False):
    """Four rows: inside its bar, outside it, no repetitions (n/a), and an untrusted one inside its bar."""
    rows = [ValidationRow(measurement("0.0.r.0 0.1.r.0", "0.0.r.0", 2.0, repetitions=(1.8, 2.0, 1.9)), 1.85),
            ValidationRow(measurement("0.0.w.0 0.1.w.0", "0.0.w.0", 1.0, repetitions=(0.95, 1.0)), 1.2),
            ValidationRow(measurement("0.0.r.0 bg 0.1.r.0@1GB/s", "0.0.r.0", 4.0), 4.2),
            ValidationRow(dataclasses.replace(measurement("0.0.l.0 bg 0.1.r.0", "0.0.l.0", 150.0, "thread_latency_ns",
                                                          repetitions=(150.0, 190.0)), caveat="repetitions spread 27%"),
                          170.0)]
    return Validation("onenode", "b.yaml", None, data_set(*(r.measurement for r in rows)), rows, [], 0.1,
                      include_untrusted=include_untrusted)


def test_each_measured_value_shows_the_range_of_its_repetitions_and_whether_the_prediction_is_inside():
    report = error_bar_report()
    cells = [r.cells() for r in report.rows]
    assert cells[0][2:] == ["2.00", "1.80..2.00", "1.85", "-7.5%", "yes"]
    assert cells[1][2:] == ["1.00", "0.950..1.00", "1.20", "+20.0%", "no"]
    assert cells[2][2:] == ["4.00", "n/a", "4.20", "+5.0%", "n/a"]           # a measurement without repetitions
    assert cells[3][3:] == ["150.0..190.0", "170.0", "+13.3% *", "yes"]
    text = report.render_text()
    header = next(line for line in text.splitlines() if line.startswith("case "))
    assert header.split() == ["case", "metric", "measured", "error", "bar", "predicted", "error", "within"]
    assert ERROR_BAR_LEGEND in text and "lowest..highest value of the measurement's repetitions" in ERROR_BAR_LEGEND
    # the untrusted chase is left out of the headline figures, its error bar among them
    assert "predictions within their error bar: 1 of 2 (1 measurement without repetitions)" in text
    assert report.summary()["within_error_bar"] == 1 and report.summary()["with_error_bar"] == 2
    assert error_bar_report(include_untrusted=True).error_bar_counts() == (2, 3)
    markdown = report.to_markdown()
    assert "| 0.0.r.0 0.1.r.0 | 0.0.r.0 GB/s | 2.00 | 1.80..2.00 | 1.85 | -7.5% | yes |" in markdown
    assert "predictions within their error bar: 1 of 2" in markdown


def test_the_files_carry_the_error_bars_and_none_where_there_is_none():
    report = error_bar_report()
    rows = report.to_dict()["rows"]
    assert rows[0]["error_bar"] == {"low": 1.8, "high": 2.0, "repetitions": 3} and rows[0]["within_error_bar"] is True
    assert rows[1]["within_error_bar"] is False
    assert rows[2]["error_bar"] is None and rows[2]["within_error_bar"] is None
    json.dumps(report.to_dict())
    table = list(csv.DictReader(io.StringIO(report.to_csv())))
    assert (table[0]["error_bar_low"], table[0]["error_bar_high"], table[0]["within_error_bar"]) == ("1.8", "2.0", "true")
    assert (table[2]["error_bar_low"], table[2]["error_bar_high"], table[2]["within_error_bar"]) == ("", "", "")


def test_the_plots_draw_the_error_bars(tmp_path):
    pytest.importorskip("matplotlib")
    written, note = write_outputs(error_bar_report(), tmp_path)
    assert note == "" and all((tmp_path / name).read_bytes()[:4] == b"\x89PNG" for name in ("parity.png", "bars.png"))


def test_without_any_repetitions_the_error_bars_are_not_applicable():
    report = fixed_report()        # reference-style measurements: no repetitions at all
    assert "predictions within their error bar: n/a (no counted measurement has repetitions)" in report.render_text()
    assert report.summary()["with_error_bar"] == 0
    one = measurement("0.0.r.0", "0.0.r.0", 2.0, repetitions=(2.0,))
    assert one.error_bar is None          # a single repetition says nothing of the spread


def test_validation_of_a_bench_report_shows_its_repetitions(tmp_path):
    """End to end: a report's GBps.all becomes the error bar of validate's row."""
    report = {"format": "simnuma-bench/2", "date": "2026-01-01T00:00:00Z", "size_bytes": SIZE,
              "host": {"cpu_model": "Test CPU", "nodes": [{"id": 0, "cpus": [0, 1], "memory_bytes": 1}]},
              "threads": [{"spec": s, "role": "foreground", "GBps": {"best": 2.0, "all": [1.0, 2.0, 1.5]},
                           "ns_per_access": {"best": 32.0}} for s in ("0.0.r.0", "0.1.r.0")]}
    path = tmp_path / "pair.json"
    path.write_text(json.dumps(report))
    done = validate(parse_topology(BOARD), load_measurements(path), processes=1)
    assert [r.cells()[3] for r in done.rows] == ["1.00..2.00", "1.00..2.00"]
    assert done.summary()["with_error_bar"] == 2


# ------------------------------------------------------------------ a calibration with more parameters than measurements

def record_text(**fields):
    record = {"version": "0.1.0", "date": "2026-01-01", "cases": ["0.0.r.0"], "measurements": ["cal.json"], **fields}
    return f"{RECORD_PREFIX}{json.dumps(record)}\n" + BOARD


OVERFIT = "the calibration had 4 free parameters for 3 independent measurements: not all of them can be identified"


@pytest.mark.parametrize("fields, warning", [
    ({"free_parameters": 4, "independent_measurements": 3}, OVERFIT),
    ({"free_parameters": 3, "independent_measurements": 3}, None),
    # a board calibrated before the record counted them: the calibration's own warning
    ({"warnings": ["4 free parameters for 3 independent measurements: not all of them can be identified"]}, OVERFIT),
    ({"warnings": ["2 free parameters for 1 independent measurements: not all of them can be identified"]},
     "the calibration had 2 free parameters for 1 independent measurement: not all of them can be identified"),
    ({"warnings": ["0.0.l.0 | 0.0.l.0 latency ns: fitted as named, although ..."]}, None),
    ({"warnings": "4 free parameters for 3 independent measurements"}, None),   # malformed: ignored
    ({}, None),                                                                 # an old record says nothing
])
def test_validate_warns_when_the_calibration_had_more_parameters_than_measurements(fields, warning):
    data = data_set(measurement("0.0.r.0", "0.0.r.0", 2.0), measurement("0.0.r.0 0.1.r.0", "0.1.r.0", 1.8))
    report = validate(parse_topology(BOARD), data, board_text=record_text(**fields), processes=1)
    assert report.warnings == ([warning] if warning else [])
    assert report.to_dict()["warnings"] == report.warnings
    text = report.render_text()
    assert (f"warning: {warning}" in text and f"- warning: {warning}" in report.to_markdown()) if warning \
        else "warning" not in text
    assert calibration_overfit(None) is None      # a board without a record
