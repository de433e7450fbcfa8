"""Traces, timelines and explain: the trace-event format, a recorder that changes nothing, the stage walk."""
from __future__ import annotations

import csv
import json

import pytest

from simnuma import load_topology, simulate
from simnuma.cli import main
from simnuma.trace import Recorder, parse_window
from simnuma.trace.explain import STAGES, explain, explain_text
from simnuma.trace.perfetto import trace_events

QUARTET = load_topology("quartet")
CROSSFIRE = ["0.0.w.1", "1.0.w.0"]

# ---------------------------------------------------------------- the trace-event format

PHASES = {"X", "C", "M", "s", "t", "f"}
METADATA = {"process_name", "thread_name", "process_sort_index", "thread_sort_index", "process_labels"}


def check_trace_event_format(events: list) -> None:
    """What Google's Trace Event Format document asks of the events this file uses, and what Perfetto's importer
    needs to draw them: named tracks, complete events that do not overlap on a track, flows bound to slices."""
    named_processes = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    named_tracks = {(e["pid"], e["tid"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    slices: dict = {}
    flows: dict = {}
    for e in events:
        assert e["ph"] in PHASES, e
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int) and isinstance(e["name"], str), e
        assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0, e
        if e["ph"] == "M":
            assert e["name"] in METADATA and isinstance(e["args"], dict), e
            continue
        assert e["pid"] in named_processes, e
        if e["ph"] == "C":
            assert e["args"] and all(isinstance(v, (int, float)) for v in e["args"].values()), e
            continue
        assert (e["pid"], e["tid"]) in named_tracks, e
        if e["ph"] == "X":
            assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
            slices.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
        else:
            flows.setdefault(e["id"], []).append(e)
    for track, spans in slices.items():
        spans.sort()
        for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
            assert b0 >= a1 - 1e-9, f"overlapping slices on track {track}: {(a0, a1)} and {(b0, b1)}"
    for flow_id, steps in flows.items():
        phases = [s["ph"] for s in steps]
        assert phases.count("s") == 1 and phases.count("f") == 1, (flow_id, phases)
        start = next(s for s in steps if s["ph"] == "s")
        finish = next(s for s in steps if s["ph"] == "f")
        assert finish.get("bp") == "e"
        for s in steps:
            assert start["ts"] <= s["ts"] <= finish["ts"], (flow_id, s)
            spans = slices[(s["pid"], s["tid"])]
            assert any(a <= s["ts"] <= b for a, b in spans), f"flow {flow_id} step not inside a slice: {s}"


@pytest.fixture(scope="module")
def crossfire_trace():
    recorder = Recorder(transactions=300, sample_ns=500.0)
    result = simulate(QUARTET, CROSSFIRE, size_bytes=1 << 18, mode="exact", observer=recorder, baseline=False)
    return recorder, result


def test_the_trace_follows_the_trace_event_format(crossfire_trace):
    recorder, _ = crossfire_trace
    events = trace_events(recorder, {"case": "0.0.w.1 1.0.w.0"})
    check_trace_event_format(events)
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"0.0.w.1", "1.0.w.0", "0->1 data", "0->1 commands", "0->1 credits", "SRI", "XBar", "MCT",
            "DRAM"} <= names
    kinds = {e["name"] for e in events if e["ph"] == "X" and e["cat"] == "packet"}
    assert kinds == {"read_req", "probe", "probe_resp", "read_resp", "victim", "source_done", "nop"}
    counters = {e["name"] for e in events if e["ph"] == "C"}
    assert "0->1 utilisation" in counters and "link 0->1 posted cmd" in counters
    # crossfire: the link saturates, and every remote miss has a flow from its request to its source-done
    busy = [e["args"]["busy"] for e in events if e["ph"] == "C" and e["name"] == "0->1 utilisation"]
    assert max(busy) > 0.85
    assert len({e["id"] for e in events if e["ph"] == "s"}) == len(recorder.finished) == 300


def test_recording_changes_nothing():
    for mode, size in (("exact", 1 << 17), ("steady", 1 << 20)):
        plain = simulate(QUARTET, CROSSFIRE, ["2.0.r.2@1GB/s"], size_bytes=size, mode=mode, baseline=False).to_dict()
        seen = simulate(QUARTET, CROSSFIRE, ["2.0.r.2@1GB/s"], size_bytes=size, mode=mode, baseline=False,
                        observer=Recorder(transactions=200, sample_ns=300.0)).to_dict()
        for r in (plain, seen):
            r.pop("wall_s", None)   # (the result has no wall time today; should it get one, it may differ)
        assert plain == seen


@pytest.mark.parametrize("text,expected", [
    ("500", (0.0, float("inf"), 500)),
    ("20us", (0.0, 20_000.0, None)),
    ("10us:30us", (10_000.0, 30_000.0, None)),
])
def test_trace_windows(text, expected):
    assert parse_window(text) == expected


@pytest.mark.parametrize("text", ["0", "fast", "30us:10us", "-1us", "1e400us", ""])
def test_bad_trace_windows_say_what_is_expected(text):
    with pytest.raises(ValueError, match="expected"):
        parse_window(text)


def test_a_time_window_keeps_only_what_started_in_it():
    recorder = Recorder(5_000.0, 10_000.0)
    simulate(QUARTET, ["0.0.r.1"], size_bytes=1 << 17, mode="exact", observer=recorder, baseline=False)
    assert recorder.finished and all(5_000.0 <= rec.issued < 10_000.0 for rec in recorder.finished)


def test_latency_histograms_hold_every_miss(crossfire_trace):
    _, result = crossfire_trace
    for t in result.to_dict()["threads"]:
        h = t["latency_ns"]["histogram"]
        assert sum(h["counts"]) == t["transactions_simulated"] and len(h["counts"]) <= 100
        assert h["start_ns"] <= t["latency_ns"]["p50"] <= h["start_ns"] + h["bin_ns"] * len(h["counts"])


# ---------------------------------------------------------------- explain

def test_explain_walks_a_remote_read_and_names_the_way_back():
    data = explain(QUARTET, "0.0.r.1", size_bytes=4 << 20, transactions=1500)
    t = data["threads"]["0.0.r.1"]
    s, ref = t["stages"], t["local_stages"]
    assert t["local"] == "0.0.r.0"
    assert sum(s[name] for name, *_ in STAGES) == pytest.approx(s["total"], rel=1e-9)
    assert s["probes"] < 1.0 < ref["probes"]            # locally the read waits for the probes; remotely not
    assert s["data back"] > ref["data back"] + 20       # the data cross a link and two crossbars
    text = explain_text(data)
    assert "most of it in 'data back'" in text


def test_explain_a_local_reader_compares_with_nothing():
    text = explain_text(explain(QUARTET, "0.0.r.0", size_bytes=4 << 20, transactions=1000))
    assert "0.0.r.0 alone" in text and "->" not in text


# ---------------------------------------------------------------- the command line

def test_run_writes_a_trace_a_timeline_and_an_animation(tmp_path, capsys):
    trace, timeline, gif = tmp_path / "t.json", tmp_path / "t.csv", tmp_path / "t.gif"
    assert main(["run", "quartet", *CROSSFIRE, "--size", "256KiB", "--exact", "--trace", str(trace),
                 "--trace-window", "200", "--timeline", str(timeline), "--interval", "20us",
                 "--animate", str(gif)]) == 0
    err = capsys.readouterr().err
    assert "ui.perfetto.dev" in err
    data = json.loads(trace.read_text())
    check_trace_event_format(data["traceEvents"])
    assert data["otherData"]["case"] == "0.0.w.1 1.0.w.0" and data["otherData"]["board_hash"]
    rows = list(csv.DictReader(timeline.open()))
    assert {r["kind"] for r in rows} == {"link", "buffer", "thread"}
    assert all(0.0 <= float(r["value"]) <= 1.0 for r in rows if r["kind"] == "link")
    pytest.importorskip("matplotlib")
    assert (tmp_path / "t.png").stat().st_size > 0 and (tmp_path / "t-latency.png").stat().st_size > 0
    assert gif.read_bytes()[:6] in (b"GIF87a", b"GIF89a")


def test_a_compressed_trace_and_what_steady_mode_could_not_record(tmp_path, capsys):
    """FILE.json.gz is the same trace, gzipped; a window steady mode did not simulate is said, with --exact."""
    import gzip

    trace, timeline = tmp_path / "t.json.gz", tmp_path / "t.csv"
    assert main(["run", "quartet", "0.0.r.1", "--size", "4MiB", "--trace", str(trace), "--trace-window", "50000",
                 "--timeline", str(timeline)]) == 0
    err = capsys.readouterr().err
    data = json.loads(gzip.decompress(trace.read_bytes()))
    check_trace_event_format(data["traceEvents"])
    assert "note: --trace-window 50000: steady mode simulated" in err and "--exact simulates every one" in err
    assert "note: the timeline covers the" in err and "extrapolated; --exact simulates and draws the whole run" in err
    assert main(["run", "quartet", "0.0.r.1", "--size", "256KiB", "--exact", "--trace", str(tmp_path / "e.json"),
                 "--trace-window", "100"]) == 0
    assert "note:" not in capsys.readouterr().err


def test_an_animation_draws_one_colour_bar_whatever_its_frames(tmp_path, monkeypatch):
    """Each frame redraws the board on the same Axes: before, each added a colour bar beside it."""
    plt = pytest.importorskip("matplotlib.pyplot")
    from simnuma.trace.timeline import write_animation

    recorder = Recorder(transactions=0, sample_ns=5_000.0)
    simulate(QUARTET, CROSSFIRE, size_bytes=1 << 18, mode="exact", observer=recorder, baseline=False)
    assert len(recorder.samples) > 3
    closed = []
    monkeypatch.setattr(plt, "close", lambda fig: closed.append(len(fig.axes)))
    assert write_animation(tmp_path / "a.gif", recorder, QUARTET, "crossfire")
    assert closed == [3]          # the board, its colour bar, the text beside them


@pytest.mark.parametrize("extra,message", [
    (["--trace", "t.json", "--trace-window", "fast"], "--trace-window: expected a time span"),
    (["--timeline", "t.csv", "--interval", "0us"], "--interval: expected a positive time"),
    (["--timeline", "t.csv", "--interval", "soon"], "--interval: expected a time"),
])
def test_bad_recording_options_are_one_line(tmp_path, capsys, monkeypatch, extra, message):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "quartet", "0.0.r.0", "--size", "64KiB", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert not list(tmp_path.iterdir())


def test_explain_command(capsys):
    assert main(["explain", "quartet", "0.0.w.1", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "compared with 0.0.w.0 alone" in out and "DRAM queue" in out
    assert main(["explain", "quartet", "0.0.w.9"]) == 2


def test_explain_with_a_changed_board_says_so(capsys):
    assert main(["explain", "x6440", "0.0.t.0", "--set", "coherence=probe_filter", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["changes"] == {"coherence": "probe_filter"} and data["board_hash"]
    assert data["threads"]["0.0.t.0"]["stages"]["probes"] == 0.0   # a probe filter sends no probes here
    assert main(["explain", "quartet", "0.0.r.1", "--set", "link_defaults.latency=20ns"]) == 0
    assert "; link_defaults.latency = 20ns)" in capsys.readouterr().out
    assert main(["explain", "quartet", "0.0.r.1", "--set", "coherence=nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--set coherence=nope" in err[0]
