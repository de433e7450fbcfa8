"""Calibration: free parameters, the fit, the calibrated board file and the command line."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from simnuma.calibrate import (
    DEFAULT_FIT,
    PARAMETERS,
    calibrate,
    calibrated_yaml,
    chase_pages_problem,
    check_measurements,
    choose_cases,
    parse_fit,
    predict,
    read_calibration_record,
)
from simnuma.errors import CalibrationError
from simnuma.measurements import MachineInfo, Measurement, MeasurementSet, load_measurements, parse_case
from simnuma.model import simulate
from simnuma.topology import load_topology, parse_topology

REPO = Path(__file__).resolve().parents[1]
SIZE = 1 << 20

ONE_NODE = """\
# a one-node test board
name: onenode
description: one-node test board
defaults:
  cores: 2
  ports: 1
  core:
    window: {r: 2, w: 3, t: 3}   # assumption: outstanding lines; calibrate
  memory:
    bandwidth: 6.4 GB/s
    efficiency: 0.8         # assumption: sustained fraction; calibrate
    latency: 50 ns          # assumption: DRAM latency; calibrate
    queue: 16
  sri: {latency: 2 ns, buffers: {request: 2, posted: 3, response: 3}, probe_queue: 8}
  mct: {buffers: {response: 5, probe: 2}}
  xbar: {latency: 5 ns}
  probe:
    lookup: 20 ns           # a probe lookup (no probe on this board)
link_defaults: {bandwidth: 4 GB/s, latency: 20 ns, buffers: {request: 1, posted: 1, response: 6, probe: 4}}
nodes: [{id: 0}]
links: []
io: [{node: 0}]
coherence: probe_filter
"""
TRUTH = {"defaults.memory.latency": 70.0, "defaults.memory.efficiency": 0.6, "defaults.core.window.r": 4}
MACHINE = MachineInfo("board 'onenode'", board="onenode")


def one_node():
    return parse_topology(ONE_NODE, "onenode.yaml")


def synthetic(board, cases, **extra) -> MeasurementSet:
    """Measurements made by simulating ``board`` (the truth) on ``cases`` (thread GB/s, chase latency).

    ``extra`` goes to every Measurement (``huge_fraction=1.0``: a chase measured on huge pages).
    """
    out = []
    for text in cases:
        case = parse_case(text)
        result = simulate(board, list(case.threads), list(case.background), size_bytes=SIZE, baseline=False)
        for spec in case.threads:
            thread = result.thread(spec)
            if ".l." in spec:
                value, metric = thread["time_ns"] / (SIZE / 64), "thread_latency_ns"
            else:
                value, metric = thread["bandwidth_GBps"], "thread_GBps"
            out.append(Measurement(case=case, metric=metric, value=value, source="synthetic", machine=MACHINE,
                                   origin="synthetic", thread=spec, size_bytes=SIZE, **extra))
    return MeasurementSet(tuple(out), MACHINE, ("synthetic",))


@pytest.fixture(scope="module")
def round_trip():
    board = one_node()
    data = synthetic(board.with_parameters(TRUTH), ["0.0.r.0", "0.0.w.0", "0.0.l.0"], huge_fraction=1.0)
    cal = calibrate(board, data, fit=["memory.latency", "memory.efficiency", "core.window.r", "probe.lookup",
                                      "link.latency"], cases=["0.0.r.0", "0.0.w.0", "0.0.l.0"], processes=1)
    return board, data, cal


# ------------------------------------------------------------------ parameters

def test_default_fit_is_what_the_cases_can_identify():
    quartet = load_topology("quartet")                  # a dram memory, four nodes, broadcast
    single = [parse_case(c) for c in ("0.0.r.0", "0.0.r.1", "0.0.w.0")]
    assert [p.name for p in parse_fit(None, quartet, single)] == [
        "memory.latency", "link.latency", "xbar.latency", "probe.lookup", "core.window.r", "core.window.w"]
    board = one_node()                                  # fifo, one node, two cores, probe filter
    assert [p.name for p in parse_fit(None, board, [parse_case("0.0.r.0"), parse_case("0.0.l.0")])] == [
        "memory.latency", "xbar.latency", "core.window.r"]
    peaks = [parse_case("0.0.t.0"), parse_case("0.0.t.0 0.1.t.0")]
    assert [p.name for p in parse_fit(None, board, peaks)] == [
        "memory.latency", "memory.efficiency", "memory.queue", "xbar.latency", "core.window.t"]
    assert [p.name for p in parse_fit()] == list(DEFAULT_FIT)


def test_a_curve_memory_keeps_the_queue_its_curves_give():
    """bench host sizes a curve memory's queue from the curves (Little's law); a peak, which measures the
    bandwidth the curves already give, does not refit it."""
    from simnuma.calibrate.cases import is_peak
    from tests.model.test_curve import curve_board

    board = curve_board()                               # eight cores
    peaks = [parse_case("0.0.r.0"), parse_case(" ".join(f"0.{k}.r.0" for k in range(8)))]
    assert is_peak(peaks[1], board)
    assert [p.name for p in parse_fit(None, board, peaks)] == ["memory.latency", "xbar.latency", "core.window.r"]


def test_parameters_and_bounds():
    lat = PARAMETERS["memory.latency"]
    assert (lat.low, lat.high, lat.path) == (20.0, 120.0, "defaults.memory.latency")
    dram = lat.for_board(load_topology("quartet"))
    assert (dram.low, dram.high) == (1.0, 120.0) and "controller" in dram.description
    assert (PARAMETERS["memory.efficiency"].low, PARAMETERS["memory.efficiency"].high) == (0.4, 0.95)
    assert PARAMETERS["link.latency"].path == "link_defaults.latency"
    queue = PARAMETERS["memory.queue"]
    assert queue.integer and queue.wide and (queue.low, queue.high) == (1, 512)
    assert not PARAMETERS["core.window.r"].wide
    (custom,) = parse_fit(["memory.latency=30:200"])
    assert (custom.low, custom.high) == (30.0, 200.0)
    (deep,) = parse_fit(["memory.queue=4:2048"])
    assert (deep.low, deep.high) == (4, 2048)


@pytest.mark.parametrize("item, message", [
    ("memory.efficiency", "has a dram memory (memory.model: dram), whose peak and sustained bandwidth follow from"),
    ("memory.bandwidth=1:10", "memory.bandwidth belongs to the fifo memory only"),
    ("memory.dram.timings.CL", "datasheet facts, not fitted"),
])
def test_a_parameter_the_memory_model_does_not_have_is_refused(item, message):
    with pytest.raises(CalibrationError, match=re.escape(message)):
        parse_fit([item], load_topology("quartet"))


@pytest.mark.parametrize("item, message", [
    ("memory.latancy", "unknown parameter"),
    ("memory.latency=50:20", "LOW < HIGH"),
    ("memory.efficiency=0.5:1.5", "at most 1"),
    ("core.window.r=1:2.5", "whole numbers"),
    ("memory.queue=1:70000", "memory.queue bounds are whole numbers from 1 to 65536"),
    ("core.window.r=1:2000", "core.window.r bounds are whole numbers from 1 to 1024"),
])
def test_bad_fit_items(item, message):
    with pytest.raises(CalibrationError, match=message):
        parse_fit([item])


def test_prior_values_come_from_the_board():
    quartet = load_topology("quartet")
    assert PARAMETERS["link.latency"].prior(quartet) == quartet.links[0].latency_ns
    assert PARAMETERS["core.window.w"].prior(quartet) == quartet.nodes[0].window["w"]
    assert PARAMETERS["link.latency"].prior(one_node()) is None


# ------------------------------------------------------------------ the round trip

def test_round_trip_recovers_the_parameters(round_trip):
    _, _, cal = round_trip
    fits = {p.param.name: p for p in cal.parameters}
    assert fits["core.window.r"].value == 4
    assert fits["memory.latency"].identified
    assert fits["memory.latency"].value == pytest.approx(70.0, abs=4.0)
    assert fits["memory.efficiency"].value == pytest.approx(0.6, abs=0.04)
    low, high = fits["memory.latency"].interval                    # 95%, containing the truth
    assert low < 70.0 < high and high - low < 20
    assert fits["memory.latency"].uncertainty == pytest.approx((high - low) / 2 / 1.96, rel=0.05)
    assert fits["core.window.r"].interval == (4, 4)
    assert max(abs(r.residual_percent) for r in cal.rows) < 2.0


def test_round_trip_reports_correlations(round_trip):
    _, _, cal = round_trip
    names, matrix = cal.correlation["parameters"], cal.correlation["matrix"]
    assert names == ["memory.latency", "memory.efficiency", "core.window.r"]
    assert all(matrix[i][i] == 1.0 and matrix[i][j] == matrix[j][i] for i in range(3) for j in range(3))
    fits = {p.param.name: p for p in cal.parameters}
    r = matrix[0][1]
    assert fits["memory.latency"].correlations["memory.efficiency"] == r
    assert fits["memory.efficiency"].partner[0] == "memory.latency"
    assert f"{r:+.2f} with memory.latency" in cal.render_text()
    assert cal.to_dict()["parameters"][0]["strongest_correlation"]["parameter"] in names
    assert min(np.linalg.eigvalsh(np.array(matrix))) > -1e-6   # one linearisation: a correlation matrix


@pytest.mark.parametrize("board", ["quartet", "x6440"])
def test_a_bundled_record_holds_a_correlation_matrix(board):
    """The records' matrices are positive semi-definite: with the intervals, a covariance that can be sampled."""
    import json
    import re
    from simnuma.topology.loading import _bundled_text

    record = json.loads(re.search(r"simnuma-calibration: (\{.*\})", _bundled_text(board)[0]).group(1))
    matrix = np.array(record["correlation"]["matrix"])
    assert matrix.shape == (record["free_parameters"],) * 2 and np.allclose(matrix, matrix.T)
    assert min(np.linalg.eigvalsh(matrix)) > -1e-3   # rounded to three decimals


def test_round_trip_names_what_the_data_cannot_identify(round_trip):
    _, _, cal = round_trip
    fits = {p.param.name: p for p in cal.parameters}
    assert not fits["probe.lookup"].identified       # no probe on a probe-filter one-node board
    assert fits["probe.lookup"].value == 20.0        # kept at its prior
    assert "depends" in fits["probe.lookup"].note
    assert not fits["link.latency"].identified
    assert "no link" in fits["link.latency"].note
    assert {p.param.name for p in cal.unidentified} == {"probe.lookup", "link.latency"}
    text = cal.render_text()
    assert "not identified, kept" in text and "0.0.l.0" in text
    # four free parameters (probe.lookup among them) for three measurements
    assert cal.warnings == ["4 free parameters for 3 independent measurements: not all of them can be identified"]
    assert "warning: 4 free parameters for 3 independent measurements" in text


def test_calibrated_board_file_round_trip(round_trip):
    board, data, cal = round_trip
    text = calibrated_yaml(cal, ONE_NODE, ["synthetic.json"])
    fitted = parse_topology(text, "calibrated.yaml")
    assert fitted == cal.topology
    assert fitted.nodes[0].window["r"] == 4
    assert fitted.nodes[0].memory_latency_ns == pytest.approx(cal.topology.nodes[0].memory_latency_ns)
    assert "# a one-node test board" in text                      # the file's comments are kept
    assert "fitted by simnuma calibrate on synthetic.json" in text
    assert "assumption: DRAM latency" not in text                   # replaced by the fitted note
    assert "probe lookup (no probe on this board)" in text           # undetermined: untouched
    record = read_calibration_record(text)
    assert record["cases"] == ["0.0.r.0", "0.0.w.0", "0.0.l.0"]
    # what the fit's numbers came from: the board it started from, the board it wrote, the seed
    from simnuma.runner import board_hash

    assert record["board_hash"] == board_hash(board) and record["calibrated_board_hash"] == board_hash(fitted)
    assert record["seed"] == 1 and record["board_hash"] != record["calibrated_board_hash"]
    assert record["measurements"] == ["synthetic.json"]
    assert set(record["fitted"]) == {"memory.latency", "memory.efficiency", "core.window.r"}
    assert set(record["not_identified"]) == {"probe.lookup", "link.latency"}
    assert "no fitted prediction depends on it" in record["not_identified"]["probe.lookup"]
    assert "#   probe.lookup kept at 20 ns: not identified (no fitted prediction depends on it near the fit)" in text
    assert "#   memory.latency = " in text and "(95%: " in text and "strongest correlation" in text
    again = calibrated_yaml(cal, text, ["synthetic.json"])          # re-calibrating replaces the block and notes
    assert again.count("simnuma-calibration:") == 1
    fitted_lines = [line for line in again.splitlines() if "fitted by simnuma calibrate" in line]
    assert len(fitted_lines) == 3 and all(line.count("fitted by") == 1 for line in fitted_lines)
    assert "outstanding lines per core for reads (miss buffers and prefetch), fitted by" in again
    assert "w, t: assumption, not fitted" in again
    assert parse_topology(again) == cal.topology


def test_calibrated_board_written_afresh_without_source_text(round_trip):
    _, _, cal = round_trip
    text = calibrated_yaml(cal, None, ["synthetic.json"])
    assert parse_topology(text) == cal.topology
    assert read_calibration_record(text)["cases"] == ["0.0.r.0", "0.0.w.0", "0.0.l.0"]


def test_a_parameter_the_file_does_not_set_is_written_in_place():
    board = one_node()
    data = synthetic(board.with_parameters({"defaults.core.hold.w": 15.0}), ["0.0.w.0"])
    cal = calibrate(board, data, fit=["core.hold.w"], processes=1)
    (hold,) = cal.parameters
    assert hold.prior == 0.0 and hold.identified
    assert hold.value == pytest.approx(15.0, abs=2.0)
    text = calibrated_yaml(cal, ONE_NODE, ["synthetic.json"])
    assert "\n    hold: {w: " in text                 # under core:, beside window:
    assert "# a one-node test board" in text and "assumption: DRAM latency; calibrate" in text
    assert parse_topology(text) == cal.topology


def test_a_parameter_that_follows_another_is_said_to_follow_it(tmp_path):
    """probe.occupancy is not given by the Quartet, so it is its lookup: kept unidentified while the lookup moves,
    the calibrated board's comment gives the value it now has, not the old lookup's."""
    from simnuma.cli import main
    out = tmp_path / "q.yaml"
    assert main(["calibrate", "quartet", "quartet-single-thread", "--fit", "probe.lookup=20:60", "probe.occupancy",
                 "--cases", "0.0.r.1", "0.0.r.3", "-o", str(out)]) == 0
    board = load_topology(str(out))
    lookup = board.node(0).probe_lookup_ns
    assert lookup != load_topology("quartet").node(0).probe_lookup_ns
    assert board.node(0).probe_occupancy_ns == lookup
    shown = PARAMETERS["probe.lookup"].format(lookup)   # as the board's comments give every value
    assert (f"probe.occupancy not identified (no fitted prediction depends on it near the fit); not given, so as probe.lookup:"
            f" {shown}") in out.read_text()


def test_predict_uses_the_same_figures(round_trip):
    _, data, cal = round_trip
    predicted = predict(cal.topology, data, processes=1)
    for row, value in zip(cal.rows, predicted):
        assert value == pytest.approx(row.fitted, rel=1e-9)


# ------------------------------------------------------------------ what the measurements identify

def test_a_correlated_pair_keeps_one_at_its_prior():
    """On one node the DRAM and crossbar latencies only ever add up: only their sum is determined."""
    board = one_node()
    data = synthetic(board.with_parameters({"defaults.memory.latency": 70.0}), ["0.0.r.0", "0.0.w.0"])
    cal = calibrate(board, data, fit=["memory.latency", "xbar.latency"], processes=1)
    fits = {p.param.name: p for p in cal.parameters}
    held = [p for p in cal.parameters if not p.identified]
    assert len(held) == 1 and held[0].value == held[0].prior
    assert "only a combination of the two is determined" in held[0].note
    other = "xbar.latency" if held[0].param.name == "memory.latency" else "memory.latency"
    assert f"with {other}" in held[0].note and fits[other].identified
    assert max(abs(r.residual_percent) for r in cal.rows) < 1.0     # the other one takes up the sum
    assert held[0].param.name in cal.record()["not_identified"]


def test_of_a_pair_only_their_sum_determines_the_one_whose_hold_costs_least_is_held():
    """A chase 60 ns slower than the board's memory latency: the memory latency takes it up and the
    crossbar keeps its assumption, never the other way round (the crossbar could not move that far)."""
    board = one_node().with_parameters({"defaults.memory.bandwidth": "300 GB/s", "defaults.memory.queue": 64,
                                        "defaults.sri.buffers": {"request": 64, "posted": 64, "response": 64},
                                        "defaults.mct.buffers": {"response": 64, "probe": 64}})
    truth = board.with_parameters({"defaults.memory.latency": board.node(0).memory_latency_ns + 60.0})
    data = synthetic(truth, ["0.0.l.0"], huge_fraction=1.0)
    cal = calibrate(board, data, fit=["memory.latency", "xbar.latency"], processes=1)
    fits = {p.param.name: p for p in cal.parameters}
    assert not fits["xbar.latency"].identified and fits["xbar.latency"].value == fits["xbar.latency"].prior
    assert fits["memory.latency"].identified
    assert max(abs(r.residual_percent) for r in cal.rows) < 1.0


def classify(J, residuals, u, independent=None):
    """The verdicts of calibrate._classify for a Jacobian in scaled coordinates (closed form, no simulation)."""
    from types import SimpleNamespace

    from simnuma.calibrate.search import _Fit
    from simnuma.calibrate.verdicts import _classify

    J = np.array(J, dtype=float)
    params = [PARAMETERS[n] for n in ("memory.latency", "xbar.latency", "probe.lookup")[:J.shape[1]]]
    search = SimpleNamespace(continuous=params, integers=[], span=np.array([p.high - p.low for p in params]),
                             ev=SimpleNamespace(independent=independent or J.shape[0]))
    fit = _Fit({}, np.array(u, dtype=float), np.array(residuals, dtype=float), J, 1, "", True)
    return _classify(search, fit)


def test_identification_in_closed_form():
    """Six measurements at the model's 1% precision (residuals below it): sigma_u = 0.01 / |column|."""
    quiet = [0.001] * 6
    strong = [1.0, 0.5, -0.8, 0.3, 0.9, -0.4]
    # a strong column is identified: its interval is 2 x 1.96 x 0.01 / |column| wide
    (v,) = classify(np.transpose([strong]), quiet, [0.5]).values()
    width = 2 * 1.96 * 0.01 / np.linalg.norm(strong)
    assert v.identified and v.width == pytest.approx(width, rel=1e-4)
    low, high = v.interval
    lat = PARAMETERS["memory.latency"]
    assert (high - low) == pytest.approx(width * (lat.high - lat.low), rel=1e-4)
    assert v.sigma == pytest.approx(0.01 / np.linalg.norm(strong) * (lat.high - lat.low))
    # a weak one (2.5% of a prediction over the whole range) spans most of its range
    weak = [0.025, 0, 0, 0, 0, 0]
    verdicts = classify(np.transpose([strong, weak]), quiet, [0.5, 0.5])
    assert verdicts["memory.latency"].identified
    assert not verdicts["xbar.latency"].identified
    assert verdicts["xbar.latency"].reason.startswith("its 95% interval") and "of its range" in verdicts[
        "xbar.latency"].reason
    # a column no prediction feels: no effect
    verdicts = classify(np.transpose([strong, [0.0] * 6]), quiet, [0.5, 0.5])
    assert verdicts["xbar.latency"].reason == "no fitted prediction depends on it near the fit"
    # two nearly proportional columns: only their combination is determined, both are flagged
    twin = [x * 1.02 + 0.01 * (-1) ** i for i, x in enumerate(strong)]
    verdicts = classify(np.transpose([strong, twin]), quiet, [0.5, 0.5])
    assert all(not v.identified and "only a combination of the two is determined" in v.reason
               for v in verdicts.values())
    assert abs(verdicts["memory.latency"].correlations["xbar.latency"]) > 0.95
    # at its upper bound with the cost falling outwards: fitted there, with a one-sided interval
    (v,) = classify(np.transpose([strong]), [-0.05 * x for x in strong], [1.0]).values()
    assert v.identified and v.reason == "the measurements want it above its bound"
    assert v.interval[1] == pytest.approx(lat.high)


def test_a_trade_off_the_data_cannot_see_widens_the_interval_to_where_the_bounds_stop_it():
    """One measurement, two parameters: the direction that moves no prediction is left out of the pseudo-
    inverse's covariance, so the interval also spans how far that trade-off carries each parameter within the
    bounds.  A parameter carried over most of its range is not identified; one carried a little has an
    interval that reaches that far (and here, its correlation of 1 with the other says the rest)."""
    quiet = [0.001]
    # the prediction is 8 times as sensitive to the first: moving the second over its range moves the first 1/8
    verdicts = classify([[0.8, 0.1]], quiet, [0.5, 0.5], independent=1)
    first, second = verdicts["memory.latency"], verdicts["xbar.latency"]
    assert not second.identified and "trades off exactly with memory.latency" in second.reason
    assert first.reason.endswith("only a combination of the two is determined")
    lat = PARAMETERS["memory.latency"]
    low, high = first.interval
    # the second can go 0.5 either way (to its bounds), which carries the first 0.5 / 8 of its range each way
    assert (high - low) / (lat.high - lat.low) == pytest.approx(2 * 0.5 / 8, rel=0.05)


def test_an_integer_is_not_identified_with_fewer_measurements_than_free_parameters():
    """One measured reader, its window and the crossbar latency both free: another window fits as well once
    the latency is refitted, so the window is not called fitted."""
    board = one_node()
    cal = calibrate(board, synthetic(board, ["0.0.r.0"]), fit=["xbar.latency", "core.window.r"], processes=1)
    fits = {p.param.name: p for p in cal.parameters}
    window = fits["core.window.r"]
    assert not window.identified and window.note.startswith("2 free parameters for 1 independent measurement")


def test_an_integer_on_its_bound_is_wanted_beyond_only_if_the_value_inside_is_worse_beyond_the_level():
    """A window on its upper bound whose neighbour inside fits a hair worse (a flat stretch: the data have no
    preference) is not 'wanted above its bound'; one whose neighbour is clearly worse is."""
    from types import SimpleNamespace

    from simnuma.calibrate.search import _Fit
    from simnuma.calibrate.verdicts import _integer_verdicts

    window = PARAMETERS["core.window.r"]   # 1..8

    def verdict(costs):
        best_value = min(costs, key=costs.get)
        residual = np.array([costs[best_value] ** 0.5] + [0.0] * 11)   # 12 measurements: this cost at the best
        search = SimpleNamespace(integers=[window], continuous=[], costs={(v,): c for v, c in costs.items()},
                                 ev=SimpleNamespace(independent=12))
        best = _Fit({window.name: best_value}, np.array([]), residual, np.zeros((12, 0)), 1, "", True)
        return _integer_verdicts(search, best)[window.name]

    flat = verdict({v: (0.0004 if v >= 4 else 0.05) * (1 + 1e-4 * (8 - v)) for v in range(1, 9)})
    assert not flat.identified and flat.reason.startswith("values 4..8 fit within the 95% level")
    steep = verdict({v: 0.0004 + 0.01 * (8 - v) for v in range(1, 9)})
    assert steep.identified and steep.reason == "the measurements want it above its bound"


def test_a_window_whose_values_all_fit_is_not_identified():
    """A single reader saturating a slow memory: every window from three up moves the same data."""
    board = one_node().with_parameters({"defaults.memory.bandwidth": "2 GB/s", "defaults.core.window.r": 4})
    cal = calibrate(board, synthetic(board, ["0.0.r.0"]), fit=["core.window.r"], processes=1)
    (window,) = cal.parameters
    assert not window.identified and window.value == 4
    assert window.note == "values 3..8 fit within the 95% level: most of its range 1..8"


def test_a_parameter_at_its_bound_is_fitted_there_and_said_so():
    board = one_node()
    data = synthetic(board.with_parameters({"defaults.xbar.latency": 30.0}), ["0.0.r.0", "0.0.w.0", "0.0.l.0"],
                     huge_fraction=1.0)
    cal = calibrate(board, data, fit=["xbar.latency"], processes=1)
    (xbar,) = cal.parameters
    assert xbar.identified and xbar.at_bound and xbar.value == 20.0
    assert xbar.note == "the measurements want it above its bound"
    assert xbar.interval[1] == pytest.approx(20.0)
    assert "fitted, at a bound" in cal.render_text()
    assert cal.record()["fitted"]["xbar.latency"]["at_bound"] is True


# ------------------------------------------------------------------ checks

def test_measurements_of_another_board_are_refused():
    data = load_measurements("quartet-single-thread")
    with pytest.raises(CalibrationError, match="not on board 'dual'"):
        check_measurements(load_topology("dual"), data)


def test_a_case_the_board_cannot_place_is_refused():
    bad = Measurement(case=parse_case("0.3.r.0"), metric="thread_GBps", value=1.0, source="x", machine=MACHINE,
                      origin="x", thread="0.3.r.0")
    with pytest.raises(CalibrationError, match="cannot be placed"):
        check_measurements(one_node(), MeasurementSet((bad,), MACHINE, ("x",)))


def test_default_cases_single_threads_idle_chase_on_huge_pages_and_peaks():
    board = one_node()
    cases = ["0.0.r.0", "0.0.l.0", "0.0.r.0 0.1.r.0", "0.0.r.0 0.1.w.0", "0.0.l.0 bg 0.1.r.0", "0.0.w.0 0.1.w.0"]
    huge = synthetic(board, cases, huge_fraction=1.0)
    chosen, left_out = choose_cases(huge, topology=board)
    # the peaks: every core of the node, one op, local memory; a loaded chase and a mixed pair are validation cases
    assert [c.name for c in chosen] == ["0.0.r.0", "0.0.l.0", "0.0.r.0 0.1.r.0", "0.0.w.0 0.1.w.0"]
    assert left_out == []
    assert [c.name for c in choose_cases(huge)[0]] == ["0.0.r.0", "0.0.l.0"]        # without the board: no peaks
    named, _ = choose_cases(huge, ["0.0.l.0 bg 0.1.r.0", "0.0.r.0 0.1.w.0"], board)
    assert [c.name for c in named] == ["0.0.l.0 + 0.1.r.0", "0.0.r.0 0.1.w.0"]


@pytest.mark.parametrize("fraction, reason", [
    (None, "does not say which pages the chase ran on (taken as base pages)"),
    (0.4, "had 40% of its array on huge pages"),
])
def test_a_chase_on_base_pages_is_left_out_and_said_so(fraction, reason):
    board = one_node()
    data = synthetic(board, ["0.0.r.0", "0.0.l.0"], huge_fraction=fraction)
    chosen, left_out = choose_cases(data, topology=board)
    assert [c.name for c in chosen] == ["0.0.r.0"]
    ((m, why),) = left_out
    assert m.key == "0.0.l.0 | 0.0.l.0 latency ns" and reason in why and "page walks" in why
    cal = calibrate(board, data, fit=["memory.latency"], processes=1)
    assert [c.name for c in cal.cases] == ["0.0.r.0"]
    assert f"left out: 0.0.l.0 | 0.0.l.0 latency ns: {why}" in cal.render_text()
    assert cal.record()["left_out"] == [{"measurement": m.key, "reason": why}]
    assert f"# left out: 0.0.l.0 | 0.0.l.0 latency ns: {why}" in calibrated_yaml(cal, ONE_NODE, ["x.json"])
    named = calibrate(board, data, fit=["memory.latency"], cases=["0.0.l.0"], processes=1)
    assert named.warnings == [f"0.0.l.0 | 0.0.l.0 latency ns: fitted as named, although {why}"]


def test_only_a_chase_on_base_pages_is_nothing_to_calibrate_on():
    only_chase = synthetic(one_node(), ["0.0.l.0"])
    with pytest.raises(CalibrationError, match="no single-thread stride case .*, idle chase on huge pages or peak"):
        choose_cases(only_chase)


def test_cases_must_be_measured():
    data = load_measurements("quartet-single-thread")
    with pytest.raises(CalibrationError, match="not a measured case"):
        calibrate("quartet", data, cases=["0.0.r.2 1.0.r.0"], processes=1)


def test_a_fit_that_does_not_converge_is_reported():
    board = one_node()
    data = synthetic(board.with_parameters(TRUTH), ["0.0.r.0", "0.0.l.0"])
    with pytest.raises(CalibrationError, match="did not converge"):
        calibrate(board, data, fit=["memory.latency", "memory.efficiency"], processes=1, max_evaluations=1)


# ------------------------------------------------------------------ the command line

def run_cli(*args, cwd=REPO):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "simnuma", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


def bench_json(tmp_path, cpu="Test CPU", nodes=1, threads=None, name="bench.json"):
    threads = threads or [{"spec": "0.0.r.0", "role": "foreground", "GBps": {"best": 3.0},
                           "ns_per_access": {"best": 21.0}}]
    report = {"format": "simnuma-bench/1", "date": "2026-01-01T00:00:00Z",
              "host": {"cpu_model": cpu, "nodes": [{"id": n, "cpus": [2 * n, 2 * n + 1], "memory_bytes": 1}
                                                   for n in range(nodes)]},
              "size_bytes": SIZE, "threads": threads}
    path = tmp_path / name
    path.write_text(json.dumps(report))
    return path


@pytest.mark.parametrize("pages, fraction", [
    ({"requested": "huge", "advice": "hugepage", "huge_bytes": SIZE, "huge_fraction": 1, "page_bytes": 2097152}, 1.0),
    ({"requested": "huge", "huge_fraction": 0.375}, 0.375),
    ({"requested": "huge", "huge_bytes": None, "huge_fraction": None}, None),    # smaps could not be read
    ({"huge_fraction": "all"}, None),
    (None, None),                                                                # a report without pages
])
def test_the_chase_pages_are_read_from_a_report_defensively(tmp_path, pages, fraction):
    thread = {"spec": "0.0.l.0", "role": "foreground", "GBps": {"best": 0.6}, "ns_per_access": {"best": 105.0}}
    if pages is not None:
        thread["pages"] = pages
    (m,) = load_measurements(bench_json(tmp_path, threads=[thread]))
    assert m.metric == "thread_latency_ns" and m.huge_fraction == fraction
    assert bool(chase_pages_problem(m)) == (fraction != 1.0)


@pytest.mark.parametrize("make_args, message", [
    (lambda tmp: ["quartet", bench_json(tmp)], "measurements of another host"),
    (lambda tmp: ["quartet", "no-such-dataset"], "no such measurement file"),
    (lambda tmp: ["quartet", "quartet-single-thread", "--fit", "memory.speed"], "unknown parameter"),
    (lambda tmp: ["dual", "quartet-single-thread"], "not on board 'dual'"),
    (lambda tmp: ["quartet", "quartet-single-thread", "--jobs", "0"], "--jobs 0: expected at least 1"),
    (lambda tmp: ["quartet", "quartet-single-thread", "--fit", "memory.efficiency"],
     "--fit memory.efficiency: board 'quartet' has a dram memory (memory.model: dram), whose peak and sustained"
     " bandwidth follow from its organisation and datasheet timings (memory.dram), which are facts and never"
     " fitted; the sustained efficiency is an output; memory.efficiency belongs to the fifo memory only"),
    (lambda tmp: ["quartet", "quartet-single-thread", "--fit", "memory.dram.timings.tRCD"], "datasheet facts"),
    (lambda tmp: ["quartet", "quartet-single-thread", "--max-evaluations", "0"],
     "--max-evaluations 0: expected at least 2"),
])
def test_cli_errors_exit_2_with_one_line_and_write_nothing(tmp_path, make_args, message):
    out = tmp_path / "calibrated.yaml"
    done = run_cli("calibrate", *make_args(tmp_path), "-o", out)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
    assert not out.exists()


def test_cli_unplaceable_case_exit_2(tmp_path):
    ref = tmp_path / "ref.yaml"
    ref.write_text("format: simnuma-reference/1\nname: t\nboard: quartet\nmeasurements:\n"
                   "  - {case: 0.5.r.0, metric: time_percent, value: 100, source: x}\n")
    out = tmp_path / "calibrated.yaml"
    done = run_cli("calibrate", "quartet", ref, "-o", out)
    assert done.returncode == 2
    assert done.stderr == f"{ref}:5: measurements[0].case: '0.5.r.0': node 0 has 2 cores (0..1), no core 5\n"
    assert not out.exists()


def test_cli_calibrates_and_writes_a_loadable_board(tmp_path):
    board = tmp_path / "onenode.yaml"
    board.write_text(ONE_NODE)
    data = synthetic(one_node().with_parameters(TRUTH), ["0.0.r.0", "0.0.l.0"])
    ref = tmp_path / "ref.yaml"
    lines = ["format: simnuma-reference/1", "name: t", "board: onenode", f"size: {SIZE} B", "measurements:"]
    for m in data:
        lines.append(f"  - {{case: {m.case.name}, metric: {m.metric}, thread: {m.thread}, value: {m.value!r},"
                     " source: synthetic}")
    ref.write_text("\n".join(lines) + "\n")
    out = tmp_path / "calibrated.yaml"
    done = run_cli("calibrate", board, ref, "--fit", "memory.latency", "core.window.r", "-o", out, "--jobs", "1",
                   "--cases", "0.0.r.0", "0.0.l.0", "--json", tmp_path / "fit.json")
    assert done.returncode == 0, done.stderr
    assert "memory.latency" in done.stdout and "residual" in done.stdout
    check = run_cli("topo", "check", out)
    assert check.returncode == 0, check.stderr
    fit = json.loads((tmp_path / "fit.json").read_text())
    assert fit["cases"] == ["0.0.r.0", "0.0.l.0"]
    assert {row["label"] for row in fit["rows"]} == {"0.0.r.0 GB/s", "0.0.l.0 latency ns"}


def test_windows_far_from_the_start_are_recovered():
    """Window-limited single threads on an uncontended memory (a current host): every op has its
    own window, several lines away from the start, and one shared latency."""
    board = one_node().with_parameters({"defaults.memory.bandwidth": "300 GB/s",
                                        "defaults.sri.buffers": {"request": 64, "posted": 64, "response": 64},
                                        "defaults.mct.buffers": {"response": 64, "probe": 64},
                                        "defaults.memory.queue": 64,
                                        "defaults.core.window": {"r": 10, "w": 10, "t": 10}})
    truth = board.with_parameters({"defaults.memory.latency": 45.0,
                                   "defaults.core.window": {"r": 11, "w": 8, "t": 16}})
    data = synthetic(truth, ["0.0.r.0", "0.0.w.0", "0.0.t.0"])
    fit = parse_fit(["memory.latency=20:200", "core.window.r=1:32", "core.window.w=1:32", "core.window.t=1:32"])
    cal = calibrate(board, data, fit=fit, cases=["0.0.r.0", "0.0.w.0", "0.0.t.0"], processes=1)
    values = {p.param.name: p.value for p in cal.parameters}
    assert (values["core.window.r"], values["core.window.w"], values["core.window.t"]) == (11, 8, 16)
    assert values["memory.latency"] == pytest.approx(45.0, rel=0.05)


def test_a_chase_is_simulated_as_a_chase_beside_streams_of_its_node():
    """The chase keeps one line in flight beside read streams of its own node (once refused)."""
    board = one_node()
    idle = Measurement(case=parse_case("0.0.l.0"), metric="thread_latency_ns", value=100.0, source="x",
                       machine=MACHINE, origin="x", thread="0.0.l.0", size_bytes=SIZE)
    loaded = Measurement(case=parse_case("0.0.l.0 bg 0.1.r.0"), metric="thread_latency_ns", value=100.0,
                         source="x", machine=MACHINE, origin="x", thread="0.0.l.0", size_bytes=SIZE)
    data = MeasurementSet((idle, loaded), MACHINE, ("x",))
    check_measurements(board, data)
    alone, beside = predict(board, data, processes=1)
    assert alone == pytest.approx(simulate(board, ["0.0.l.0"], size_bytes=SIZE, baseline=False)
                                  .thread("0.0.l.0")["time_ns"] / (SIZE / 64))
    assert beside > alone


def test_the_dram_queue_is_found_by_the_peak():
    """Two cores streaming with four lines each, behind a DRAM queue of five: only the peak sees the queue."""
    board = one_node().with_parameters({"defaults.core.window.r": 4})
    truth = board.with_parameters({"defaults.memory.queue": 5, "defaults.memory.latency": 60.0})
    data = synthetic(truth, ["0.0.r.0", "0.0.r.0 0.1.r.0"])
    cal = calibrate(board, data, fit=["memory.latency", "memory.queue", "core.window.r"], processes=1)
    values = {p.param.name: p.value for p in cal.parameters}
    assert values["memory.queue"] == 5 and values["core.window.r"] == 4
    assert values["memory.latency"] == pytest.approx(60.0, abs=2.0)
    # the peak's two threads, which the board's symmetry interchanges, weigh as one measurement, in the fit
    # and in its headline mean |residual|
    pair = [r.measurement.case.name == "0.0.r.0 0.1.r.0" for r in cal.rows]
    assert cal.weights == pytest.approx([0.5 if p else 1.0 for p in pair]) and sum(pair) == 2
    residuals = [abs(r.residual_percent) for r in cal.rows]
    assert cal.mean_abs_residual_percent == pytest.approx(
        sum(w * r for w, r in zip(cal.weights, residuals)) / sum(cal.weights))


def test_an_idle_chase_on_huge_pages_sets_the_start():
    """A core with many lines in flight at a long latency: the chase gives the latency, Little's law the window."""
    board = one_node().with_parameters({"defaults.memory.bandwidth": "300 GB/s", "defaults.memory.queue": 64,
                                        "defaults.sri.buffers": {"request": 64, "posted": 64, "response": 64},
                                        "defaults.mct.buffers": {"response": 64, "probe": 64}})
    truth = board.with_parameters({"defaults.memory.latency": 110.0, "defaults.core.window.r": 7})
    data = synthetic(truth, ["0.0.r.0", "0.0.l.0"], huge_fraction=1.0)
    lines = []
    cal = calibrate(board, data, processes=1, log=lines.append)
    assert any(line.startswith("starting from the idle chase: memory.latency") for line in lines)
    values = {p.param.name: p.value for p in cal.parameters}
    assert values["core.window.r"] == 7
    assert values["memory.latency"] == pytest.approx(110.0, rel=0.03)
    assert [c.name for c in cal.cases] == ["0.0.r.0", "0.0.l.0"]


def test_bounds_make_room_for_the_boards_own_value():
    board = one_node().with_parameters({"defaults.core.window.r": 10, "defaults.xbar.latency": 0.5})
    window, xbar, latency = (PARAMETERS[n].for_board(board) for n in ("core.window.r", "xbar.latency",
                                                                       "memory.latency"))
    assert (window.low, window.high) == (1, 20)          # past the grid of 1..8: up to twice the board's value
    assert (xbar.low, xbar.high) == (0.25, 20.0)          # on its bound: down to half of it
    assert (latency.low, latency.high) == (20.0, 120.0)   # inside: as it is


def test_a_board_value_the_measurements_exclude_moves_to_the_nearest_they_allow():
    from simnuma.calibrate.fit import _held_at
    from simnuma.calibrate.verdicts import _Verdict

    probe, window = PARAMETERS["probe.lookup"], PARAMETERS["core.window.w"]
    wide = _Verdict(False, interval=(22.3, 57.7), reason="its 95% interval 22.3..57.7 ns spans 60% of its range")
    assert _held_at(probe, 30.0, wide) == (30.0, wide)                  # allowed: kept
    value, verdict = _held_at(probe, 20.0, wide)
    assert value == 22.3
    assert verdict.reason.endswith("; held at 22.3 ns, the end of its 95% interval nearest the board's 20 ns")
    assert _held_at(probe, 20.0, _Verdict(False, reason="no fitted prediction depends on it"))[0] == 20.0
    value, verdict = _held_at(window, 2.0, _Verdict(False, interval=(4, 8), reason="values 4..8 fit"))
    assert value == 4 and "95% range nearest the board's 2" in verdict.reason


def test_a_moved_value_is_written_to_the_board_and_said_so(round_trip):
    from dataclasses import replace

    board, _, cal = round_trip
    fits = [replace(p, value=0.7, note="its 95% interval 0.65..0.95 spans 55% of its range; held at 0.7")
            if p.param.name == "memory.efficiency" else p for p in cal.parameters]
    fits = [replace(p, identified=False) if p.param.name == "memory.efficiency" else p for p in fits]
    moved = replace(cal, parameters=fits)
    moved.topology = board.with_parameters(moved.changes())
    text = calibrated_yaml(moved, ONE_NODE, ["synthetic.json"])
    assert parse_topology(text) == moved.topology and moved.topology.nodes[0].memory_efficiency == 0.7
    assert "#   memory.efficiency set to 0.7: not identified (its 95% interval" in text
    line = next(x for x in text.splitlines() if x.strip().startswith("efficiency:"))
    assert "set by simnuma calibrate on synthetic.json (memory.efficiency not identified: its 95%" in line
    again = calibrated_yaml(moved, text, ["synthetic.json"])          # the note is replaced, not repeated
    assert next(x for x in again.splitlines() if x.strip().startswith("efficiency:")).count("simnuma calibrate") == 1
    # the terminal does not call it kept
    row = next(x for x in moved.render_text().splitlines() if x.startswith("memory.efficiency"))
    assert "not identified, moved" in row and "kept" not in row


def test_a_hold_the_measurements_reject_leaves_the_parameter_fitted(monkeypatch):
    """Whatever the linearised interval says, a held value that raises the cost beyond the 95% level stays free."""
    from simnuma.calibrate import fit, verdicts

    monkeypatch.setattr(verdicts, "UNIDENTIFIED_WIDTH", 1e-6)                 # every interval counts as wide
    monkeypatch.setattr(fit, "_held_at", lambda p, prior, verdict: (prior, verdict))   # held at 50 ns
    board = one_node()
    data = synthetic(board.with_parameters({"defaults.memory.latency": 70.0}), ["0.0.r.0", "0.0.w.0"])
    lines = []
    cal = calibrate(board, data, fit=["memory.latency"], processes=1, log=lines.append)
    (latency,) = cal.parameters
    assert latency.identified and latency.value == pytest.approx(70.0, abs=2.0)
    assert "held at 50 ns the cost rises beyond the 95% level" in latency.note
    assert any(line.startswith("memory.latency stays free: held at 50 ns") for line in lines)


# ------------------------------------------------------------------ more free parameters than measurements

def test_a_fit_with_more_parameters_than_measurements_says_so_in_its_record(round_trip):
    """Four free parameters for three measurements: counted in the record, which validate then reads."""
    from simnuma.calibrate.validate import validate

    board, _, cal = round_trip
    record = read_calibration_record(calibrated_yaml(cal, ONE_NODE, ["synthetic.json"]))
    assert (record["free_parameters"], record["independent_measurements"]) == (4, 3)
    assert cal.to_dict()["independent_measurements"] == 3
    pair = synthetic(board.with_parameters(TRUTH), ["0.0.r.0 0.1.r.0"])
    report = validate(board, pair, board_text=calibrated_yaml(cal, ONE_NODE, ["synthetic.json"]), processes=1)
    assert report.warnings == ["the calibration had 4 free parameters for 3 independent measurements: not all of"
                               " them can be identified"]


def test_cli_calibrate_and_validate_both_warn_of_more_parameters_than_measurements(tmp_path):
    board = tmp_path / "onenode.yaml"
    board.write_text(ONE_NODE)
    data = synthetic(one_node().with_parameters(TRUTH), ["0.0.r.0", "0.0.r.0 0.1.r.0"])
    ref = tmp_path / "ref.yaml"
    lines = ["format: simnuma-reference/1", "name: t", "board: onenode", f"size: {SIZE} B", "measurements:"]
    lines += [f"  - {{case: {m.case.name}, metric: {m.metric}, thread: {m.thread}, value: {m.value!r},"
              " source: synthetic}" for m in data]
    ref.write_text("\n".join(lines) + "\n")
    out = tmp_path / "calibrated.yaml"
    warning = "2 free parameters for 1 independent measurement: not all of them can be identified"
    done = run_cli("calibrate", board, ref, "--fit", "memory.latency", "core.window.r", "--cases", "0.0.r.0",
                   "-o", out, "--jobs", "1", "--json", tmp_path / "fit.json")
    assert done.returncode == 0, done.stderr
    assert f"warning: {warning}" in done.stdout
    fit = json.loads((tmp_path / "fit.json").read_text())
    assert warning in fit["warnings"] and (fit["free_parameters"], fit["independent_measurements"]) == (2, 1)
    checked = run_cli("validate", out, ref, "--jobs", "1")
    assert checked.returncode == 0, checked.stderr
    assert f"warning: the calibration had {warning}" in checked.stdout


def test_threads_a_symmetry_interchanges_count_as_one_independent_measurement():
    """Every core of a node reading its memory: the model gives each the same figure, so the case says one thing."""
    from simnuma.calibrate.cases import independent_count
    from simnuma.measurements import MachineInfo, Measurement, MeasurementSet, parse_case

    quartet = load_topology("quartet")
    machine = MachineInfo(description="test", board="quartet")

    def m(case, thread=None, metric="thread_GBps", value=1.0):
        return Measurement(case=parse_case(case), metric=metric, value=value, source="x", machine=machine,
                           origin="x", thread=thread)

    data = MeasurementSet((m("0.0.r.0", metric="time_percent", value=100.0),     # an identity
                           m("0.0.r.1", metric="time_percent", value=108.0),
                           m("0.0.r.0 0.1.r.0", "0.0.r.0"), m("0.0.r.0 0.1.r.0", "0.1.r.0"),   # twins: one
                           m("0.0.r.0 0.1.w.0", "0.0.r.0"), m("0.0.r.0 0.1.w.0", "0.1.w.0")),  # two
                          machine, ("x",))
    assert independent_count(data, quartet) == 4
    # and a fit weighs each group as one: the twins half each, the identity (residual 0 always) as it is
    from simnuma.calibrate.cases import twin_weights
    weights = twin_weights(data, quartet)
    assert weights == [1.0, 1.0, 0.5, 0.5, 1.0, 1.0]
    assert sum(weights[1:]) == independent_count(data, quartet)


def test_a_parameter_the_model_does_not_move_has_no_correlation():
    """A queue deeper than anything fills (its neighbours change nothing) gives a zero column: correlation 0,
    not -1 from an overflow."""
    import warnings

    from simnuma.calibrate.verdicts import _corr
    J = np.array([[1.0, 0.0, 2.0], [0.5, 1e-170, 1.0], [0.2, 0.0, -1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        corr = _corr(J)
    assert corr[1].tolist() == [0.0, 1.0, 0.0] and abs(corr[0, 2]) < 1
