"""Loading measurements: reference datasets, benchmark reports and suites."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from simnuma.errors import CalibrationError
from simnuma.measurements import METRICS, load_measurements, reference_datasets, resolve_reference


def bench_report(threads, cpu="Test CPU 9000", nodes=((0, [0, 1]),), size=1 << 20, date="2026-01-02T03:04:05Z"):
    """A benchmark report in the simnuma-bench/1 format with the fields the loader reads."""
    rows = []
    for spec, role, gbps, ns in threads:
        rows.append({"spec": spec, "role": role, "bytes": size, "GBps": {"best": gbps, "median": gbps * 0.98},
                     "ns_per_access": {"best": ns, "median": ns * 1.01},
                     "seconds": {"min": size / gbps / 1e9, "median": size / gbps / 1e9}})
    return {"format": "simnuma-bench/1", "mode": "run", "date": date,
            "host": {"cpu_model": cpu, "nodes": [{"id": n, "cpus": list(c), "memory_bytes": 1 << 30}
                                                 for n, c in nodes]},
            "size_bytes": size, "reps": 3, "wall_seconds": {"min": 0.1, "median": 0.11}, "threads": rows}


def write_suite(folder, reports, failed=()):
    """A suite folder as ``simnuma bench suite`` writes it: one JSON per case plus suite.json."""
    folder.mkdir(parents=True, exist_ok=True)
    cases = []
    for i, report in enumerate(reports):
        name = f"case{i}.json"
        (folder / name).write_text(json.dumps(report))
        fg = [t["spec"] for t in report["threads"] if t["role"] == "foreground"]
        cases.append({"name": " ".join(fg), "kind": "single", "file": name})
    for name in failed:
        cases.append({"name": name, "kind": "single", "error": "the benchmark failed"})
    index = {"format": "simnuma-bench-suite/1", "host": reports[0]["host"], "cases": cases}
    (folder / "suite.json").write_text(json.dumps(index))
    return folder


# ------------------------------------------------------------------ reference datasets

def test_bundled_reference_by_name_and_by_path():
    assert "quartet-single-thread" in reference_datasets()
    text, shown = resolve_reference("quartet-single-thread")
    assert shown == "experiments/reference/quartet-single-thread.yaml"
    by_name = load_measurements("quartet-single-thread")
    by_path = load_measurements(["experiments/reference/quartet-single-thread.yaml"])
    assert [m.key for m in by_name] == [m.key for m in by_path]
    assert by_name.machine.board == "quartet"
    assert len(by_name) == 14
    assert len(by_name.single_thread_cases()) == 8


def test_reference_values_metrics_and_sources():
    data = load_measurements("quartet-single-thread")
    values = {m.key: m for m in data}
    assert values["0.0.w.3 | time %"].value == 149
    assert values["0.0.r.0 | memory N0 GB/s"].value == pytest.approx(1.64)
    assert values["0.0.w.0 | memory N0 GB/s"].value == pytest.approx(2.98)
    control = values["0.0.r.1 | link 0->1 control GB/s"]
    assert control.value == pytest.approx(0.752)
    assert control.metric == "link_control_GBps" and control.link == (0, 1)
    assert values["0.0.r.1 | link 1->0 GB/s"].value == pytest.approx(2.2)
    assert all("40555" in m.source for m in data)
    assert all(m.size_bytes == 64 * 2**20 for m in data)
    assert {m.metric for m in data} <= set(METRICS)
    assert values["0.0.r.3 | time %"].baseline == "0.0.r.0"


def _reference(tmp_path, entries, **top):
    doc = {"format": "simnuma-reference/1", "name": "t", "board": "quartet", "measurements": entries, **top}
    path = tmp_path / "ref.yaml"
    import yaml
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_reference_with_background_threads_and_units(tmp_path):
    path = _reference(tmp_path, [
        {"case": "0.0.w.0 0.1.w.0", "background": ["1.0.r.1@0.5GB/s"], "metric": "thread_GBps",
         "thread": "0.1.w.0", "value": "800 MB/s", "source": "a lab notebook"},
        {"case": "0.0.l.0", "metric": "thread_latency_ns", "value": "0.1 us", "source": "same"},
    ])
    data = load_measurements(path)
    first, second = list(data)
    assert first.case.threads == ("0.0.w.0", "0.1.w.0")
    assert first.case.background == ("1.0.r.1@0.5GB/s",)
    assert first.case.name == "0.0.w.0 0.1.w.0 + 1.0.r.1@0.5GB/s"
    assert not first.case.single_thread
    assert first.value == pytest.approx(0.8)
    assert second.value == pytest.approx(100.0)
    assert data.multi_thread_cases() == (first.case,)


@pytest.mark.parametrize("entry, message", [
    ({"case": "0.0.r.0", "metric": "speed", "value": 1, "source": "x"}, "unknown metric 'speed'"),
    ({"case": "0.0.q.0", "metric": "time_percent", "value": 1, "source": "x"}, "unknown op 'q'"),
    ({"case": "0.0.r.0", "metric": "time_percent", "value": -3, "source": "x"}, "expected a positive number"),
    ({"case": "0.0.r.0", "metric": "time_percent", "value": 100}, "needs its source"),
    ({"case": "0.0.r.0", "metric": "memory_GBps", "value": 1, "source": "x"}, "needs 'node'"),
    ({"case": "0.0.r.0", "metric": "link_GBps", "link": "0-1", "value": 1, "source": "x"}, "'src->dst'"),
    ({"case": "0.0.r.0 0.1.r.0", "metric": "thread_GBps", "value": 1, "source": "x"}, "needs 'thread'"),
    ({"case": "0.0.r.0", "metric": "thread_GBps", "thread": "0.1.r.0", "value": 1, "source": "x"},
     "not a thread of the case"),
    ({"case": "0.0.r.0", "metric": "memory_GBps", "node": 0, "value": "3 ns", "source": "x"}, "unit"),
    ({"case": "0.0.r.0", "metrc": "time_percent", "value": 1, "source": "x"}, "unknown key"),
    ({"case": "0.0.r.0", "metric": "thread_latency_ns", "value": 95, "source": "x"},
     "thread_latency_ns is a latency chase's time per access (op 'l'); '0.0.r.0' streams: give its thread_GBps"),
    ({"case": "0.0.r.0", "metric": "thread_GBps", "value": 4.5e9, "source": "x"},
     "4.5e+09 GB/s is beyond any memory system (at most 10000 GB/s); expected GB/s, got 4500000000.0"),
    ({"case": "0.0.l.0", "metric": "thread_latency_ns", "value": "95 ms", "source": "x"}, "beyond any memory"),
    ({"case": "0.0.r.0", "metric": "link_GBps", "link": "0->1", "value": "30 TB/s", "source": "x"},
     "at most 10000 GB/s"),
])
def test_reference_problems_are_one_line_with_file_and_line(tmp_path, entry, message):
    path = _reference(tmp_path, [{"case": "0.0.r.1", "metric": "time_percent", "value": 108, "source": "x"}, entry])
    with pytest.raises(CalibrationError) as info:
        load_measurements(path)
    text = str(info.value)
    assert message in text
    assert "\n" not in text
    assert text.startswith(f"{path}:")
    assert "measurements[1]" in text


@pytest.mark.parametrize("size, message", [
    ("0 KiB", "an array needs at least one 64 B line"),
    ("-1 MiB", "an array needs at least one 64 B line"),
    ("2000 TiB", "an array is at most 1024 TiB"),
])
def test_reference_size_is_an_array_size(tmp_path, size, message):
    path = _reference(tmp_path, [{"case": "0.0.r.1", "metric": "time_percent", "value": 108, "source": "x"}],
                      size=size)
    with pytest.raises(CalibrationError) as info:
        load_measurements(path)
    assert str(info.value).startswith(f"{path}:")
    assert f"size: {message}" in str(info.value)


def test_reference_values_in_exponent_notation(tmp_path):
    path = tmp_path / "ref.yaml"
    path.write_text("format: simnuma-reference/1\nboard: quartet\nmeasurements:\n"
                    "  - {case: 0.0.r.1, metric: time_percent, value: 1.08e2, source: x}\n"
                    "  - {case: 0.0.r.1, metric: thread_GBps, value: 2e0 GB/s, source: x}\n")
    assert [m.value for m in load_measurements(path)] == [108.0, 2.0]


@pytest.mark.parametrize("old, new, where", [
    ("{case: 0.0.r.1, metric: time_percent", "{case: 9.0.r.1, metric: time_percent", "5: measurements[0].case: '9.0.r.1'"),
    ("{case: 0.0.r.1, metric: time_percent", "{case: 0.0.r.1 0.0.w.1, metric: time_percent",
     "5: measurements[0].case: '0.0.w.1': core 0.0"),
    ("baseline: 0.0.r.0", "baseline: 0.7.r.0", "2: baseline: '0.7.r.0'"),
    ("node: 1,", "node: 7,", "6: measurements[1].node: board 'quartet' has no node 7"),
    ("link: 1->0", "link: 0->3", "7: measurements[2].link: board 'quartet' has no link 0->3"),
])
def test_measurements_the_board_cannot_take_say_where(tmp_path, old, new, where):
    from simnuma.calibrate import check_measurements
    from simnuma.topology import load_topology

    text = ("format: simnuma-reference/1\nbaseline: 0.0.r.0\nboard: quartet\nmeasurements:\n"
            "  - {case: 0.0.r.1, metric: time_percent, value: 108, source: x}\n"
            "  - {case: 0.0.r.1, metric: memory_GBps, node: 1, value: 1.6 GB/s, source: x}\n"
            "  - {case: 0.0.r.1, metric: link_GBps, link: 1->0, value: 2.2 GB/s, source: x}\n")
    path = tmp_path / "ref.yaml"
    path.write_text(text.replace(old, new))
    with pytest.raises(CalibrationError) as info:
        check_measurements(load_topology("quartet"), load_measurements(path))
    assert str(info.value).startswith(f"{path}:{where}")
    assert "\n" not in str(info.value)


def test_reference_duplicate_measurement(tmp_path):
    entry = {"case": "0.0.r.1", "metric": "time_percent", "value": 108, "source": "x"}
    with pytest.raises(CalibrationError, match="measured twice"):
        load_measurements(_reference(tmp_path, [entry, dict(entry, value=109)]))


def test_the_same_threads_in_another_order_are_the_same_measurement(tmp_path):
    entry = {"case": "0.0.r.0 0.1.r.0", "metric": "thread_GBps", "thread": "0.0.r.0", "value": "1.2 GB/s",
             "source": "x"}
    with pytest.raises(CalibrationError, match=r"measured twice \(also measurements\[0\], its threads perhaps in"):
        load_measurements(_reference(tmp_path, [entry, dict(entry, case="0.1.r.0  0.0.r.0", value="1.3 GB/s")]))
    # the other thread of the pair is another measurement
    other = dict(entry, case="0.1.r.0 0.0.r.0", thread="0.1.r.0")
    assert len(load_measurements(_reference(tmp_path, [entry, other])).measurements) == 2


def test_reference_wrong_format(tmp_path):
    with pytest.raises(CalibrationError, match="simnuma-reference/1"):
        load_measurements(_reference(tmp_path, [], format="simnuma-reference/9"))


def test_unknown_source_lists_bundled_datasets():
    with pytest.raises(CalibrationError, match="quartet-single-thread"):
        load_measurements("no-such-dataset")


# ------------------------------------------------------------------ benchmark reports

def test_bench_report_threads_become_measurements(tmp_path):
    report = bench_report([("0.0.w.0", "foreground", 5.5, 11.6), ("0.1.r.0@2GB/s", "background", 1.9, 33.0)])
    path = tmp_path / "one.json"
    path.write_text(json.dumps(report))
    data = load_measurements(path)
    assert len(data) == 1  # background threads are load, not measurements
    m = data.measurements[0]
    assert (m.metric, m.thread, m.value) == ("thread_GBps", "0.0.w.0", 5.5)
    assert m.case.name == "0.0.w.0 + 0.1.r.0@2GB/s"
    assert m.size_bytes == 1 << 20
    assert data.machine.cpu_model == "Test CPU 9000"
    assert data.machine.nodes == ((0, 2, True),)
    assert str(path) in m.source and "2026-01-02" in m.source


def test_bench_latency_chase_gives_latency(tmp_path):
    path = tmp_path / "l.json"
    path.write_text(json.dumps(bench_report([("0.0.l.0", "foreground", 0.6, 98.5)])))
    (m,) = load_measurements(path)
    assert (m.metric, m.value, m.unit) == ("thread_latency_ns", 98.5, "ns")


def test_suite_folder_and_index_agree(tmp_path):
    reports = [bench_report([("0.0.r.0", "foreground", 9.5, 6.7)]),
               bench_report([("0.0.r.0", "foreground", 6.1, 10.4), ("0.1.r.0", "foreground", 6.0, 10.6)])]
    folder = write_suite(tmp_path / "suite", reports, failed=["0.0.t.0"])
    by_dir = load_measurements(folder)
    by_index = load_measurements(folder / "suite.json")
    assert [m.key for m in by_dir] == [m.key for m in by_index]
    assert [m.key for m in by_dir] == ["0.0.r.0 | 0.0.r.0 GB/s", "0.0.r.0 0.1.r.0 | 0.0.r.0 GB/s",
                                       "0.0.r.0 0.1.r.0 | 0.1.r.0 GB/s"]
    assert [c.name for c in by_dir.single_thread_cases()] == ["0.0.r.0"]


def test_suite_with_missing_report(tmp_path):
    folder = write_suite(tmp_path / "suite", [bench_report([("0.0.r.0", "foreground", 9.5, 6.7)])])
    (folder / "case0.json").unlink()
    with pytest.raises(CalibrationError, match="is missing"):
        load_measurements(folder)


@pytest.mark.parametrize("index, report, message", [
    ("[1, 2]", None, "suite.json: expected format 'simnuma-bench-suite/1', got None"),
    ('"cases"', None, "suite.json: expected format 'simnuma-bench-suite/1', got None"),
    ('{"format": "x", "cases": []}', None, "suite.json: expected format 'simnuma-bench-suite/1', got 'x'"),
    ('{"format": "simnuma-bench-suite/1", "cases": [5]}', None,
     "suite.json: cases[0]: expected a mapping with the case's 'name' and 'file', got 5"),
    (None, "[1]", "case0.json: expected format 'simnuma-bench/2', got None"),
])
def test_a_damaged_suite_folder_is_one_line(tmp_path, index, report, message):
    folder = write_suite(tmp_path / "suite", [bench_report([("0.0.r.0", "foreground", 9.5, 6.7)])])
    if index is not None:
        (folder / "suite.json").write_text(index)
    if report is not None:
        (folder / "case0.json").write_text(report)
    with pytest.raises(CalibrationError) as info:
        load_measurements(folder)
    assert str(info.value).endswith(message) and "\n" not in str(info.value)


def test_folder_of_reports_without_index(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(bench_report([("0.0.r.0", "foreground", 9.5, 6.7)])))
    (tmp_path / "b.json").write_text(json.dumps(bench_report([("0.0.w.0", "foreground", 5.0, 12.0)])))
    (tmp_path / "notes.json").write_text("{}")
    assert len(load_measurements(tmp_path)) == 2


def test_files_of_two_hosts_are_refused(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(bench_report([("0.0.r.0", "foreground", 9.5, 6.7)])))
    b.write_text(json.dumps(bench_report([("0.0.w.0", "foreground", 5.0, 12.0)], cpu="Other CPU")))
    with pytest.raises(CalibrationError, match="one machine at a time"):
        load_measurements([a, b])
    with pytest.raises(CalibrationError, match="one machine at a time"):
        load_measurements([a, "quartet-single-thread"])


def test_same_measurement_in_two_files_is_refused(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for p in (a, b):
        p.write_text(json.dumps(bench_report([("0.0.r.0", "foreground", 9.5, 6.7)])))
    with pytest.raises(CalibrationError, match="measured twice"):
        load_measurements([a, b])


@pytest.mark.parametrize("content, message", [
    ("{not json", "malformed JSON"),
    ('{"format": "simnuma-bench/7"}', "unknown format"),
    ('{"format": "simnuma-bench/1", "host": {"nodes": []}, "threads": []}', "no threads"),
])
def test_bad_json_files(tmp_path, content, message):
    path = tmp_path / "x.json"
    path.write_text(content)
    with pytest.raises(CalibrationError, match=message):
        load_measurements(path)


@pytest.mark.parametrize("size", [0, -5, "64 MiB", 1.5, 2**60, True])
def test_a_report_with_a_nonsense_array_size_is_refused(tmp_path, size):
    path = tmp_path / "x.json"
    report = bench_report([("0.0.r.0", "foreground", 9.5, 6.7)])
    report["size_bytes"] = size
    path.write_text(json.dumps(report))
    with pytest.raises(CalibrationError, match=r"x\.json: size_bytes: expected the bytes of an array"):
        load_measurements(path)


# ------------------------------------------------------------------ report versions

V1 = Path(__file__).parent / "bench" / "fixtures" / "v1"


def test_version_1_suite_still_loads():
    """A suite written before the chase ran on huge pages (simnuma-bench/1 reports): every case, as before."""
    data = load_measurements(V1 / "suite")
    assert len(data.cases) == 9 and len(data) == 12
    assert data.machine.nodes == ((0, 2, True),)
    chase = next(m for m in data if m.metric == "thread_latency_ns")
    assert chase.case.name == "0.0.l.0" and chase.value > 0
    assert "base pages (a simnuma-bench/1 report)" in chase.caveat
    reader = next(m for m in data if m.key == "0.0.r.0 | 0.0.r.0 GB/s")
    assert "pages" not in reader.caveat


def test_version_1_report_still_loads():
    (m,) = load_measurements(V1 / "chase.json")
    assert (m.metric, m.thread, m.size_bytes) == ("thread_latency_ns", "0.0.l.0", 8 << 20)
    assert json.loads((V1 / "chase.json").read_text())["format"] == "simnuma-bench/1"


@pytest.mark.parametrize("fraction, caveat", [(1.0, ""), (0.5, "50% of its array on huge pages")])
def test_version_2_chase_caveat_follows_its_huge_pages(tmp_path, fraction, caveat):
    report = bench_report([("0.0.l.0", "foreground", 0.6, 98.5)])
    report["format"] = "simnuma-bench/2"
    report["threads"][0]["pages"] = {"requested": "huge", "advice": "hugepage", "huge_bytes": int(fraction * (1 << 20)),
                                     "huge_fraction": fraction, "page_bytes": 2 << 20 if fraction >= 0.5 else 4096}
    path = tmp_path / "l.json"
    path.write_text(json.dumps(report))
    (m,) = load_measurements(path)
    assert (caveat in m.caveat) if caveat else m.caveat == ""


# ------------------------------------------------------------------ repetitions: the error bar

def test_a_report_gives_each_figure_its_repetitions_and_error_bar(tmp_path):
    """Bandwidths are ``GBps.all``; a chase's latency per repetition is the line over its bandwidth."""
    report = bench_report([("0.0.r.0", "foreground", 10.0, 6.4), ("0.1.l.0", "foreground", 0.64, 100.0)])
    report["threads"][0]["GBps"]["all"] = [9.5, 10.0, 9.0]
    report["threads"][1]["GBps"]["all"] = [0.64, 0.5, 0.6]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report))
    reader, chase = load_measurements(path)
    assert reader.repetitions == (9.5, 10.0, 9.0) and reader.error_bar == (9.0, 10.0)
    assert chase.repetitions == pytest.approx((100.0, 128.0, 64 / 0.6))
    assert chase.error_bar == pytest.approx((100.0, 128.0))          # the best (lowest) latency at its bottom
    assert reader.within_error_bar(9.2) is True and reader.within_error_bar(10.5) is False
    assert reader.to_dict()["repetitions"] == [9.5, 10.0, 9.0]


@pytest.mark.parametrize("rates", [
    "missing", None, [], [10.0], "fast", [10.0, "9.5"], [10.0, 0.0], [10.0, -1.0], [10.0, True], [10.0, None],
    {"a": 1},
])
def test_a_report_without_usable_repetitions_has_no_error_bar(tmp_path, rates):
    report = bench_report([("0.0.r.0", "foreground", 10.0, 6.4)])
    if rates != "missing":
        report["threads"][0]["GBps"]["all"] = rates
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report))
    (m,) = load_measurements(path)
    assert m.value == 10.0 and m.error_bar is None and m.within_error_bar(10.0) is None
    assert len(m.repetitions) <= 1     # a single repetition is kept, but says nothing of the spread


def test_version_1_files_keep_their_repetitions_and_reference_datasets_have_none():
    (chase,) = load_measurements(V1 / "chase.json")
    low, high = chase.error_bar
    assert low == pytest.approx(chase.value) and high == pytest.approx(64 / 0.413357476)
    assert all(m.error_bar is None for m in load_measurements("quartet-single-thread"))


def test_a_suite_says_which_cases_are_its_peaks(tmp_path):
    """A suite whose process could not use CPU 0 measured its peak on the node's other cores: its index's groups
    name that case a peak, which calibration takes as one (a case with every core of the node is one anyway)."""
    from simnuma.calibrate import choose_cases, parse_fit
    from simnuma.topology import parse_topology

    nodes = ((0, (0, 1, 2)), (1, (3, 4, 5)))
    single = bench_report([("0.1.r.0", "foreground", 9.5, 6.7)], nodes=nodes)
    peak = bench_report([("0.1.r.0", "foreground", 6.1, 10.4), ("0.2.r.0", "foreground", 6.0, 10.6)], nodes=nodes)
    remote = bench_report([("0.1.r.1", "foreground", 3.1, 20.4), ("0.2.r.1", "foreground", 3.0, 20.6)], nodes=nodes)
    folder = write_suite(tmp_path / "suite", [single, peak, remote])
    index = json.loads((folder / "suite.json").read_text())
    index["groups"] = {"peak": ["0.1.r.0 0.2.r.0"], "remote-peak": ["0.1.r.1  0.2.r.1"]}
    (folder / "suite.json").write_text(json.dumps(index))
    data = load_measurements(folder)
    assert data.peaks == {"0.1.r.0 0.2.r.0", "0.1.r.1 0.2.r.1"}
    board = parse_topology(TWO_NODES, "b.yaml")
    chosen, _ = choose_cases(data, topology=board)
    assert [c.name for c in chosen] == ["0.1.r.0", "0.1.r.0 0.2.r.0", "0.1.r.1 0.2.r.1"]
    names = [p.name for p in parse_fit(None, board, chosen, data.peaks)]
    assert "memory.queue" in names and "link.bandwidth" in names
    assert "memory.queue" not in [p.name for p in parse_fit(None, board, chosen)]   # unnamed, not every core


TWO_NODES = """\
name: two
defaults:
  cores: 3
  ports: 2
  core: {window: {r: 4, w: 4, t: 4}}
  memory: {bandwidth: 20 GB/s, efficiency: 0.7, latency: 80 ns, queue: 32}
  sri: {latency: 2 ns, buffers: {request: 4, posted: 4, response: 4}, probe_queue: 8}
  mct: {buffers: {response: 4, probe: 2}}
  xbar: {latency: 2 ns}
  probe: {lookup: 20 ns}
link_defaults: {bandwidth: 20 GB/s, latency: 30 ns, buffers: {request: 8, posted: 8, response: 8, probe: 8}}
nodes: [{id: 0}, {id: 1}]
links: [{a: 0, b: 1}]
coherence: probe_filter
"""
