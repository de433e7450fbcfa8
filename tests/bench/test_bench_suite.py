"""The standard case set for a host, and running it."""
from __future__ import annotations

import json
import time
from dataclasses import replace

import pytest
from benchutil import FIXTURE_NAMES, run_cli, sysfs
from test_bench_suite_size import suite_events

from simnuma.bench.host import Host, HostNode, discover_host
from simnuma.bench.plan import suite_array_size
from simnuma.bench.suite import observe_scaling, run_suite, suite_cases, suite_plan
from simnuma.errors import BenchError
from simnuma.workload import parse_spec


def one_node_host(cpus: int) -> Host:
    return Host("/sys", (HostNode(0, tuple(range(cpus)), 24 << 30, 22 << 30),), ((10,),), (), 0, None, None,
                "test CPU", "Linux 6", True)


def names(cases) -> set:
    return {c.name for c in cases}


SINGLE_GBps = {"r": 13.0, "w": 10.0, "t": 17.0}  # one unthrottled thread of each streaming op, as a probe finds


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_cases_fit_the_host(name):
    host = discover_host(sysfs(name))
    cases, _ = suite_cases(host, SINGLE_GBps)
    for case in cases:
        specs = [parse_spec(s) for s in case.threads + case.background]
        assert len(specs) <= host.cpu_count
        cpus = [host.node(s.node).cpus[s.core] for s in specs]
        assert len(set(cpus)) == len(cpus), case.name
        assert all(host.node(s.mem_node).has_memory for s in specs), case.name


def test_two_node_cases():
    cases, skipped = suite_cases(discover_host(sysfs("two_node")), SINGLE_GBps)
    singles = [c for c in cases if c.kind == "single"]
    assert len(singles) == 2 * 2 * 4
    assert {"0.0.w.1 1.0.w.0", "0.0.r.1 1.0.r.0", "0.0.w.1 1.0.w.1"} <= names(cases)
    assert {"0.0.r.0 0.1.r.0", "0.0.w.0 0.1.w.0", "0.0.r.0 0.1.w.0", "0.0.w.0 0.1.w.1"} <= names(cases)
    loaded = [c for c in cases if c.kind == "loaded"]
    assert len(loaded) == 6 and not skipped
    assert "0.0.w.0 0.1.w.0 + 1.0.r.1@0.5GB/s 1.1.r.1@0.5GB/s" in names(loaded)


def test_quartet_no_crossfire_is_the_app_note_pair():
    cases, _ = suite_cases(discover_host(sysfs("four_node")))
    assert {"0.0.w.1 1.0.w.0", "0.0.w.1 1.0.w.3"} <= names(cases)
    assert "0.0.w.0 0.1.w.0 + 1.0.r.1@2GB/s 2.0.r.2@2GB/s 3.0.r.3@2GB/s" in names(cases)


def test_sparse_host_puts_no_array_on_the_memoryless_node():
    cases, _ = suite_cases(discover_host(sysfs("sparse")))
    singles = [c.threads[0] for c in cases if c.kind == "single"]
    assert len(singles) == 3 * 2 * 4  # from nodes 0, 2, 3 to memory on 0 and 2
    assert "3.0.l.2" in singles and not any(s.endswith(".3") for s in singles)


def test_one_node_two_cpu_host():
    cases, skipped = suite_cases(one_node_host(2), SINGLE_GBps)
    assert names(cases) == {
        "0.0.r.0", "0.0.w.0", "0.0.t.0", "0.0.l.0",
        "0.0.r.0 0.1.r.0", "0.0.w.0 0.1.w.0", "0.0.r.0 0.1.w.0",
        "0.0.w.0 + 0.1.r.0@0.5GB/s", "0.0.w.0 + 0.1.r.0@2GB/s",
        # the chase beside the one other CPU streaming, unthrottled and paced (6 rates, 10% to 120% of one stream)
        "0.0.l.0 + 0.1.r.0", "0.0.l.0 + 0.1.t.0", "0.0.l.0 + 0.1.w.0",
        *(f"0.0.l.0 + 0.1.r.0@{r}GB/s" for r in ("1.3", "4.2", "7", "9.9", "13", "16")),
        *(f"0.0.l.0 + 0.1.t.0@{r}GB/s" for r in ("1.7", "5.4", "9.2", "13", "17", "20")),
        *(f"0.0.l.0 + 0.1.w.0@{r}GB/s" for r in ("1", "3.2", "5.4", "7.6", "9.8", "12")),
        # the peak: both CPUs streaming (r and w are the same-node pairs, run once)
        "0.0.t.0 0.1.t.0",
    }
    assert len(skipped) == 4 and all("the host has 2" in s["reason"] for s in skipped)


def test_one_node_eight_cpu_host_gets_two_writers_and_three_readers():
    cases, skipped = suite_cases(one_node_host(8), SINGLE_GBps)
    assert "0.0.w.0 0.1.w.0 + 0.2.r.0@2GB/s 0.3.r.0@2GB/s 0.4.r.0@2GB/s" in names(cases)
    assert not skipped


def test_one_cpu_host_runs_single_threads_only():
    cases, skipped = suite_cases(one_node_host(1))
    assert {c.kind for c in cases} == {"single"}
    assert skipped


def test_scaling_observation_explains_a_miss():
    host = one_node_host(2)
    entries = {
        "0.0.w.0": {"threads": {"0.0.w.0": {"GBps_best": 6.0}}, "warnings": []},
        "0.0.w.0 0.1.w.0": {"foreground_total_GBps": 5.9, "warnings": [
            "'0.0.w.0': repetitions spread 9.0% (more than 5%): the machine may not be quiet",
            "'0.1.w.0': the thread ran only 40% of the time on its CPU (median): other work competed for it"]},
    }
    observation = observe_scaling(entries, host, "w")
    assert observation["holds"] is False and observation["ratio"] == pytest.approx(5.9 / 6.0)
    assert any("saturates" in r for r in observation["why_not"])
    assert any("spread more than 5%" in r for r in observation["why_not"])
    assert any("did not have their CPUs to themselves" in r for r in observation["why_not"])
    entries["0.0.w.0 0.1.w.0"]["foreground_total_GBps"] = 9.0
    held = observe_scaling(entries, host, "w")
    assert held["holds"] is True and "why_not" not in held
    assert held["conclusive"] is False and any("CPUs to themselves" in c for c in held["caveats"])
    entries["0.0.w.0 0.1.w.0"]["warnings"] = []
    quiet = observe_scaling(entries, one_node_host(2), "w")
    assert quiet["conclusive"] is True and "caveats" not in quiet


def test_small_suite_writes_every_case_and_the_index(stride, tmp_path):
    host = discover_host()
    started = time.monotonic()
    lines = []
    index = run_suite(tmp_path, size_bytes="4MiB", reps=2, rounds=2, host=host, announce=lines.append)
    took_seconds = time.monotonic() - started
    assert json.loads((tmp_path / "suite.json").read_text()) == index
    assert 0 < index["estimate"]["measured_seconds"] <= took_seconds   # the index says how long measuring took
    assert index["format"] == "simnuma-bench-suite/1"
    assert set(index["load_average"]) == {"before", "after"}
    probe = index["estimate"]["probe"]
    cases, skipped = suite_cases(host, {op: probe["ops"][op]["GBps"] for op in "rwt"}, probe["size_bytes"])
    assert [c["name"] for c in index["cases"]] == [c.name for c in cases]
    assert len(index["skipped"]) == len(skipped)
    assert len(lines) == 1 and lines[0].startswith(f"bench suite: {len(cases)} cases x 2 rounds")
    for entry in index["cases"]:
        report = json.loads((tmp_path / entry["file"]).read_text())
        assert report["format"] == "simnuma-bench/2" and report["size_bytes"] == 4 << 20
        assert entry["foreground_total_GBps"] > 0
    if host.cpu_count >= 2:
        claims = [o["claim"] for o in index["observations"]]
        assert any("writers" in c for c in claims) and any("readers" in c for c in claims)


@pytest.mark.slow
def test_default_suite_runs_within_its_estimate(stride, tmp_path):
    """The full suite at the default size on this host takes within 30% of the estimate it printed first (a
    ratio in one run: how long it takes depends on the host, whose last-level cache sets the arrays' size), and
    explains the write-scaling verdict."""
    done = run_cli("bench", "suite", "-o", tmp_path, timeout=3600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("bench suite: ") and "estimated" in done.stdout.splitlines()[0]
    index = json.loads((tmp_path / "suite.json").read_text())
    estimate = index["estimate"]
    assert abs(estimate["measured_seconds"] - estimate["seconds"]) <= 0.3 * estimate["seconds"], estimate
    for observation in index["observations"]:
        assert observation["holds"] or observation["why_not"]


def test_pairs_avoid_the_first_cores_other_hardware_thread():
    """Where SMT siblings are numbered next to each other (CPUs 0 and 1 one core, 2 and 3 the next), the second
    thread of a pair, the second loaded writer and the scaling observation take core 2: two threads on one core
    would measure the sharing of the core, not of the memory."""
    host = replace(one_node_host(8), thread_siblings=((0, 1), (2, 3), (4, 5), (6, 7)))
    plan = suite_plan(host, SINGLE_GBps)
    assert plan.groups["same-node"][:3] == ["0.0.r.0 0.2.r.0", "0.0.w.0 0.2.w.0", "0.0.r.0 0.2.w.0"]
    loaded = [c for c in plan.cases if c.kind == "loaded"]
    assert loaded and all(c.threads == ("0.0.w.0", "0.2.w.0") for c in loaded)
    assert all(parse_spec(s).core not in (0, 2) for c in loaded for s in c.background)
    assert not [n for n in plan.notes if "hardware thread of one core" in n]
    entries = {"0.0.w.0": {"threads": {"0.0.w.0": {"GBps_best": 6.0}}, "warnings": []},
               "0.0.w.0 0.2.w.0": {"foreground_total_GBps": 9.0, "warnings": []}}
    assert observe_scaling(entries, host, "w")["holds"] is True
    # a node of one core with two hardware threads: the pairs share it, and the plan says so
    shared = suite_plan(replace(one_node_host(2), thread_siblings=((0, 1),)), SINGLE_GBps)
    assert shared.groups["same-node"][0] == "0.0.r.0 0.1.r.0"
    assert any("every CPU of node 0 is a hardware thread of one core" in n for n in shared.notes)


def test_a_suite_without_an_allowed_cpu_on_a_node_with_memory_is_refused_at_once(tmp_path):
    """The suite measures from a node with memory: confined to the CPU of a memoryless node, it says so before it
    measures."""
    host = replace(_host([(0, (0, 1), True), (1, (2,), False)], ((10, 21), (21, 10))), allowed_cpus=frozenset({2}))
    with pytest.raises(BenchError, match=r"bench suite: it runs from node 0 \(CPUs 0-1\), none of whose CPUs this"
                                         r" process may use \(allowed CPUs: 2;"):
        run_suite(tmp_path / "out", host=host, size_bytes=1 << 20)
    assert not (tmp_path / "out").exists()


def test_a_suite_whose_first_cpus_are_withheld_measures_from_the_next():
    """A container whose host keeps the first CPU of each socket for itself (CPUs 0 and 4 withheld): the suite
    measures from each node's first allowed core, and its pairs and chase beside it, instead of refusing."""
    host = replace(_host([(0, range(0, 4), True), (1, range(4, 8), True)], ((10, 21), (21, 10))),
                   allowed_cpus=frozenset({1, 2, 3, 5, 6, 7}))
    plan = suite_plan(host, SINGLE_GBps)
    cases = names(plan.cases)
    assert {"0.1.r.0", "0.1.w.1", "1.1.r.0", "1.1.l.1", "0.1.l.0"} <= cases
    assert {"0.1.w.1 1.1.w.0", "0.1.w.1 1.1.w.1", "0.1.w.0 0.2.w.0", "0.1.l.0 + 0.2.r.0"} <= cases
    assert all(parse_spec(spec).core != 0 for case in plan.cases for spec in case.threads + case.background)
    assert not [s for s in plan.skipped if "not allowed" in s.get("reason", "")]


def _host(nodes, rows, **kw) -> Host:
    """A host of ``nodes`` ((id, cpus, memory)) with distance ``rows``."""
    return Host("/fixture", tuple(HostNode(i, tuple(cpus), mem and 64 << 30, mem and 60 << 30) for i, cpus, mem in nodes),
                rows, (), 0, None, None, "test CPU", "Linux 6", True, **kw)


def test_no_crossfire_keeps_the_distance_or_stays_home():
    """Two sockets with a CXL memory behind socket 0 (distances 21 across, 14 and 24 to the memory): no node is
    as far from socket 1 as socket 0 is, so the no-crossfire pair's second thread uses its own memory (as on two
    nodes), not the CXL memory, whose way from socket 1 crosses the same link as the crossfire pair's."""
    host = _host([(0, range(0, 4), True), (1, range(4, 8), True), (2, (), True)],
                 ((10, 21, 14), (21, 10, 24), (14, 24, 10)))
    cases = names(suite_cases(host, SINGLE_GBps)[0])
    assert {"0.0.w.1 1.0.w.0", "0.0.w.1 1.0.w.1"} <= cases
    assert "0.0.w.1 1.0.w.2" not in cases


def test_the_suite_plans_only_on_cpus_this_process_may_use():
    """One CPU of the home node withheld (CPU 3) and node 1's CPUs not allowed: the background readers, the
    streams beside the chase and the peak use only the allowed CPUs, none of them is skipped for want of a CPU
    (node 1's own cases are), and the notes say what was left out."""
    host = _host([(0, range(0, 8), True), (1, range(8, 16), True)], ((10, 21), (21, 10)),
                 allowed_cpus=frozenset({0, 1, 2, 4, 5, 6, 7}))
    plan = suite_plan(host, SINGLE_GBps, size_bytes=1 << 20)
    used = {host.node(s.node).cpus[s.core] for c in plan.cases for s in map(parse_spec, c.threads + c.background)}
    assert used <= host.allowed_cpus
    assert not [s for s in plan.skipped if "not allowed" in s["reason"] and s["kind"] in ("loaded", "peak",
                                                                                       "loaded-latency")]
    assert [c for c in plan.cases if c.kind == "loaded"] and [c for c in plan.cases if c.kind == "peak"]
    peak = next(c for c in plan.cases if c.kind == "peak")
    assert len(peak.threads) == 7
    assert any("CPU(s) 3 of node 0" in note for note in plan.notes)


def test_arrays_outside_the_allowed_memory_nodes_are_skipped_with_the_reason():
    host = _host([(0, range(0, 4), True), (1, range(4, 8), True)], ((10, 21), (21, 10)),
                 allowed_mems=frozenset({0}))
    plan = suite_plan(host, SINGLE_GBps, size_bytes=1 << 20)
    assert plan.cases and all(parse_spec(s).mem_node == 0 for c in plan.cases for s in c.threads + c.background)
    skipped = [s for s in plan.skipped if "Mems_allowed: 0" in s["reason"]]
    assert skipped and all("outside the memory nodes this process may use" in s["reason"] for s in skipped)


def test_a_job_given_the_second_socket_measures_from_it():
    """Only node 1's CPUs allowed (a batch job given the second socket): the suite's home is node 1, its chase
    and peak run there, and node 0's own single threads are skipped for their CPU, not the whole suite."""
    host = _host([(0, range(0, 4), True), (1, range(4, 8), True)], ((10, 21), (21, 10)),
                 allowed_cpus=frozenset(range(4, 8)))
    plan = suite_plan(host, SINGLE_GBps, size_bytes=1 << 20)
    cases = names(plan.cases)
    assert "1.0.l.1" in cases and "1.0.r.1 1.1.r.1 1.2.r.1 1.3.r.1" in cases
    assert all(host.may_use(host.node(s.node).cpus[s.core]) for c in plan.cases
               for s in map(parse_spec, c.threads + c.background))
    assert any(s["case"] == "0.0.r.0" and "not allowed" in s["reason"] for s in plan.skipped)


def test_loaded_writers_need_their_readers_on_allowed_cpus():
    """Four CPUs on one node, three of them allowed: two writers leave one allowed CPU for readers (one writer,
    beside three readers, two), so the cases with two or three background readers are skipped with the reason,
    not planned with fewer readers than their name says."""
    host = _host([(0, range(0, 4), True)], ((10,),), allowed_cpus=frozenset({0, 1, 2}))
    plan = suite_plan(host, SINGLE_GBps, size_bytes=1 << 20)
    loaded = [c for c in plan.cases if c.kind == "loaded"]
    assert loaded and all(len(c.background) == 1 for c in loaded)
    skipped = {s["case"]: s["reason"] for s in plan.skipped if s["kind"] == "loaded"}
    assert len(skipped) == 4
    assert all(("this process may use 1" if "2 background" in case else "this process may use 2") in reason
               for case, reason in skipped.items())


def test_remote_peaks_take_the_first_node_at_each_distance():
    """Two sockets of two clusters (12 within a socket, 21 across): every allowed CPU of the home node reads the
    other cluster's memory and the other socket's first node's, so that calibrate sees each kind of link at its
    peak; a one-node host has none."""
    host = _host([(0, range(0, 4), True), (1, range(4, 8), True), (2, range(8, 12), True), (3, range(12, 16), True)],
                 ((10, 12, 21, 21), (12, 10, 21, 21), (21, 21, 10, 12), (21, 21, 12, 10)))
    plan = suite_plan(host, SINGLE_GBps)
    assert plan.groups["remote-peak"] == [" ".join(f"0.{c}.r.{m}" for c in range(4)) for m in (1, 2)]
    assert all(c.kind == "remote-peak" for c in plan.cases if c.name in plan.groups["remote-peak"])
    withheld = suite_plan(replace(host, allowed_cpus=frozenset(range(16)) - {0, 4, 8, 12}), SINGLE_GBps)
    assert withheld.groups["remote-peak"][0] == "0.1.r.1 0.2.r.1 0.3.r.1"
    assert "remote-peak" not in suite_plan(one_node_host(4), SINGLE_GBps).groups


def test_the_home_node_is_one_with_two_cpus_this_process_may_use():
    """No node's first CPU allowed (CPUs 3 and 5-7 of two nodes of four): node 1, whose three allowed CPUs make
    pairs, a chase beside streams and a peak, and not node 0, whose one would leave every pair skipped."""
    host = replace(_host([(0, range(0, 4), True), (1, range(4, 8), True)], ((10, 21), (21, 10))),
                   allowed_cpus=frozenset({3, 5, 6, 7}))
    plan = suite_plan(host, SINGLE_GBps)
    assert "1.1.r.1 1.2.r.1" in plan.groups["same-node"] and plan.groups["peak"][0] == "1.1.r.1 1.2.r.1 1.3.r.1"


def test_a_home_node_with_one_allowed_cpu_keeps_one_writer_beside_the_readers():
    """Node 0 (memory) lets this process use CPU 3 only, node 1 (no memory) all of its CPUs: the loaded-writer cases
    take one writer, on CPU 3, and their readers on node 1, instead of being skipped for a second writer's CPU."""
    host = replace(_host([(0, range(0, 4), True), (1, range(4, 8), False)], ((10, 21), (21, 10))),
                   allowed_cpus=frozenset({3, 4, 5, 6, 7}))
    plan = suite_plan(host, SINGLE_GBps)
    loaded = [c for c in plan.cases if c.kind == "loaded"]
    assert loaded and all(c.threads == ("0.3.w.0",) for c in loaded)
    assert not [s for s in plan.skipped if s["kind"] == "loaded"]


def _checked_suite(tmp_path, monkeypatch, host) -> tuple:
    """Run a suite on ``host``, the benchmark and the probe faked, every case placed as the benchmark would place it
    (a SpecError there fails the case); ``(announced lines, probed node, index)``."""
    probed: list = []
    lines, _sizes, index = suite_events(tmp_path, monkeypatch, host, place=True, homes=probed)
    return lines, probed, index


def test_a_cpuset_of_the_second_nodes_memory_measures_from_it(tmp_path, monkeypatch):
    """cpuset.mems=1 on two nodes: the suite measures from node 1 (its probe, chase, pairs and peaks), says so in
    one line before anything else, and skips only the cases with an array on node 0.  Before: the home node stayed 0
    and the suite stopped at its probe ('0.0.r.0': node 0 is not among the memory nodes this process may use)."""
    host = replace(discover_host(sysfs("two_node")), allowed_mems=frozenset({1}))
    lines, probed, index = _checked_suite(tmp_path, monkeypatch, host)
    assert probed == [1]
    note = ("bench suite: the suite measures from node 1 (CPUs 8-15,24-31), not node 0: node 0's memory is not among"
            " the memory nodes this process may use (Mems_allowed: 1; a cpuset restricts it), so the cases with an"
            " array there are skipped")
    assert lines[0] == note and len(lines) == 2 and note.removeprefix("bench suite: ") in index["notes"]
    assert index["groups"]["loaded-latency"][0] == "1.0.l.1" and index["groups"]["peak"][0].startswith("1.0.r.1 1.1.r.1")
    assert "1.0.r.1 1.1.r.1" in index["groups"]["same-node"]
    assert "1.0.w.1 1.1.w.1 + 0.0.r.1@2GB/s 0.1.r.1@2GB/s" in index["groups"]["loaded"]
    assert all("error" not in case for case in index["cases"])
    assert index["skipped"] and all("Mems_allowed: 1" in s["reason"] for s in index["skipped"])
    assert {s["kind"] for s in index["skipped"]} == {"single", "same-node", "crossfire", "no-crossfire",
                                                     "remote-peak"}


def test_the_nearest_node_and_the_remote_peaks_take_nodes_whose_memory_is_allowed():
    """Four sockets at distance 21 with node 1's memory withheld: the nearest node is 2 and the third of the
    no-crossfire pair 3, the readers beside the writers on node 1 read the home node's memory, and the remote peak
    reads node 2: none of those cases is skipped (before: every one was, for node 1's memory)."""
    host = _host([(n, range(4 * n, 4 * n + 4), True) for n in range(4)],
                 tuple(tuple(10 if a == b else 21 for b in range(4)) for a in range(4)), allowed_mems=frozenset({0, 2, 3}))
    plan = suite_plan(host, SINGLE_GBps, size_bytes=1 << 20)
    cases = names(plan.cases)
    assert {"0.0.w.0 0.1.w.2", "0.0.w.2 2.0.w.0", "0.0.r.2 2.0.r.3", "0.0.r.2 0.1.r.2 0.2.r.2 0.3.r.2"} <= cases
    assert "0.0.w.0 0.1.w.0 + 1.0.r.0@2GB/s 2.0.r.2@2GB/s 3.0.r.3@2GB/s" in cases
    assert not [s for s in plan.skipped if s["kind"] != "single"]
    assert all(parse_spec(s["case"]).mem_node == 1 for s in plan.skipped)


def test_the_nearest_node_is_one_whose_cpus_this_process_may_use():
    """Four sockets at distance 21 with node 1's CPUs withheld: the crossfire pairs run between nodes 0 and 2
    (before: between 0 and 1, both skipped for node 1's CPUs)."""
    host = _host([(n, range(4 * n, 4 * n + 4), True) for n in range(4)],
                 tuple(tuple(10 if a == b else 21 for b in range(4)) for a in range(4)),
                 allowed_cpus=frozenset(range(16)) - frozenset(range(4, 8)))
    plan = suite_plan(host, SINGLE_GBps, size_bytes=1 << 20)
    assert {"0.0.w.2 2.0.w.0", "0.0.r.2 2.0.r.0"} <= names(plan.cases)
    assert not [s for s in plan.skipped if s["kind"] in ("crossfire", "no-crossfire")]


def test_each_remote_peak_reads_the_first_allowed_node_at_its_distance():
    """Two sockets of four clusters (NPS4: 12 within a socket, 32 across) with node 4's memory withheld: the
    cross-socket peak reads node 5 (before: node 4, skipped); a distance with no allowed node is still listed as
    skipped, with the reason."""
    rows = tuple(tuple(10 if a == b else 12 if a // 4 == b // 4 else 32 for b in range(8)) for a in range(8))
    host = _host([(n, range(2 * n, 2 * n + 2), True) for n in range(8)], rows, allowed_mems=frozenset(range(8)) - {4})
    assert suite_plan(host, SINGLE_GBps).groups["remote-peak"] == ["0.0.r.1 0.1.r.1", "0.0.r.5 0.1.r.5"]
    one_socket = suite_plan(replace(host, allowed_mems=frozenset(range(4))), SINGLE_GBps)
    assert one_socket.groups["remote-peak"] == ["0.0.r.1 0.1.r.1"]
    (skipped,) = [s for s in one_socket.skipped if s["kind"] == "remote-peak"]
    assert skipped["case"] == "0.0.r.4 0.1.r.4" and "Mems_allowed: 0-3" in skipped["reason"]


def test_a_cpuset_whose_cpus_and_memory_share_no_node_is_refused_at_once(tmp_path):
    """CPUs of node 0 only and memory of node 1 only, or memory of a CPU-less node only: no node can be the home
    node; the suite says so in one line, naming the allowed CPUs and memory nodes, before it measures."""
    host = replace(discover_host(sysfs("two_node")), allowed_cpus=frozenset(range(8)), allowed_mems=frozenset({1}))
    with pytest.raises(BenchError) as caught:
        run_suite(tmp_path / "out", host=host)
    assert str(caught.value) == ("bench suite: it runs from node 1 (CPUs 8-15,24-31), none of whose CPUs this process"
                                 " may use (allowed CPUs: 0-7; a cpuset or CPU affinity restricts it); run it where a"
                                 " CPU of a node whose memory it may use (Mems_allowed: 1) is allowed (e.g. taskset"
                                 " -c 8,...)")
    far = _host([(0, range(0, 4), True), (1, range(4, 8), True), (2, (), True)],
                ((10, 21, 14), (21, 10, 24), (14, 24, 10)), allowed_mems=frozenset({2}))
    with pytest.raises(BenchError) as caught:
        run_suite(tmp_path / "out", host=far)
    assert str(caught.value) == ("bench suite: none of the nodes with CPUs and memory (0-1) is among the memory nodes"
                                 " this process may use (Mems_allowed: 2; a cpuset restricts it); run it where the"
                                 " memory of one of them is allowed (a cpuset whose cpuset.mems holds 0)")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("size", [None, "64MiB"])
def test_the_no_usable_cpu_line_comes_before_the_arrays_are_sized(tmp_path, size):
    """Only the CPUs of the memoryless node 3 allowed: with or without --size, the one line that says so, not the
    SpecError of a peak planned without a thread (before, without --size: "expected a case such as ..., got [])."""
    host = replace(discover_host(sysfs("sparse")), allowed_cpus=frozenset({6, 7, 9}))
    with pytest.raises(BenchError, match=r"^bench suite: it runs from node 0 \(CPUs 0-3\), none of whose CPUs this"
                                         r" process may use \(allowed CPUs: 6-7,9;"):
        run_suite(tmp_path / "out", host=host, size_bytes=size)
    assert suite_array_size(host).size_bytes
    plan = suite_plan(host, SINGLE_GBps)
    assert "peak" not in plan.groups
    assert any(s["kind"] == "peak" and "may use none of node 0's CPUs (0-3" in s["reason"] for s in plan.skipped)
