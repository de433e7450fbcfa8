"""What a recorded run writes, whatever its window and length: samples over the whole run on a fixed grid, the last
one at its end; one recorder a run; outputs that cannot collide (trace/recorder.py, commands/run.py)."""
from __future__ import annotations

import csv
import gzip
import json

import pytest

from simnuma import load_topology, simulate
from simnuma.cli import main
from simnuma.errors import SimnumaError
from simnuma.trace import Recorder

QUARTET = load_topology("quartet")


def _rows(path) -> list:
    with open(path) as f:
        return list(csv.DictReader(f))


def test_a_trace_window_leaves_the_timeline_whole(tmp_path):
    """`--trace-window 100us:200us` keeps the trace's slices there; the timeline still starts at 0 and ends with the
    run (it started at 99 us, and a window after the run's end left it empty)."""
    for window in ("100us:200us", "5ms:6ms"):
        timeline = tmp_path / f"t{window[:2]}.csv"
        assert main(["run", "quartet", "0.0.w.1", "1.0.w.0", "--size", "1MiB", "--exact", "--trace",
                     str(tmp_path / "t.json"), "--trace-window", window, "--timeline", str(timeline)]) == 0
        rows = _rows(timeline)
        assert float(rows[0]["since_ns"]) == 0.0 and float(rows[-1]["time_ns"]) > 200_000


def test_the_last_sample_reaches_the_end_of_a_run_too_short_for_a_whole_interval(tmp_path):
    recorder = Recorder(follow=False, sample_ns=1000.0)
    result = simulate(QUARTET, ["0.0.r.1"], size_bytes=640, mode="exact", observer=recorder, baseline=False)
    assert recorder.samples and recorder.samples[-1].at_ns == pytest.approx(result.makespan_ns)
    moved = sum(s.threads["0.0.r.1"] * (s.at_ns - s.since_ns) for s in recorder.samples)
    assert moved == pytest.approx(640)


def test_samples_stay_on_the_interval_grid():
    """A sample is taken at the first completion after each multiple of the interval: no row starts later and later
    (spans of 1000-1245 ns at 1 us drifted)."""
    recorder = Recorder(follow=False, sample_ns=1000.0)
    simulate(QUARTET, ["0.0.w.1", "1.0.w.0"], size_bytes=1 << 19, mode="exact", observer=recorder, baseline=False)
    inner = recorder.samples[:-1]
    assert all(int(a.at_ns // 1000) == int(b.at_ns // 1000) - 1 or b.at_ns - a.at_ns < 1000
               for a, b in zip(inner, inner[1:]))
    assert all(s.at_ns - k * 1000.0 < 1000.0 for k, s in enumerate(inner, 1))


def test_one_recorder_records_one_run():
    recorder = Recorder(transactions=50)
    simulate(QUARTET, ["0.0.r.1"], size_bytes=1 << 16, mode="exact", observer=recorder, baseline=False)
    with pytest.raises(SimnumaError, match="this Recorder has recorded a run already"):
        simulate(QUARTET, ["0.0.w.1"], size_bytes=1 << 16, mode="exact", observer=recorder, baseline=False)


@pytest.mark.parametrize("args, message", [
    (["--timeline", "{d}/a.csv", "--trace", "{d}/a.png"],
     "--timeline {d}/a.png: the same file as --trace {d}/a.png (a timeline draws FILE.png and FILE-latency.png"),
    (["--trace", "{d}/same.json", "-o", "{d}/same.json"], "--trace {d}/same.json: the same file as -o {d}/same.json"),
    (["--timeline", "{d}/r.csv", "-o", "{d}/result.json"], "{d}/r.png: is a folder"),
])
def test_outputs_that_would_replace_each_other_are_refused_before_the_run(tmp_path, capsys, args, message):
    (tmp_path / "r.png").mkdir()
    code = main(["run", "quartet", "0.0.r.0", *[a.format(d=tmp_path) for a in args]])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith(message.format(d=tmp_path)) and "\n" not in err
    assert not (tmp_path / "result.json").exists() and not (tmp_path / "r.csv").exists()


def test_a_trace_named_gz_in_capitals_is_compressed(tmp_path):
    target = tmp_path / "t.json.GZ"
    assert main(["run", "quartet", "0.0.r.0", "--size", "64KiB", "--exact", "--trace", str(target)]) == 0
    assert json.loads(gzip.decompress(target.read_bytes()))["traceEvents"]
