"""Studies: study validation, claim checks, and ``simnuma reproduce``."""
from __future__ import annotations

import csv
import json
import textwrap

import pytest

from simnuma.cli import main
from simnuma.study import output as study_output
from simnuma.study import (
    CLAIM_KINDS,
    CaseMetrics,
    StudyError,
    bundled_studies,
    evaluate_claim,
    load_study,
    parse_study,
    plan_jobs,
)
from simnuma.topology import load_topology

# A small study on the two-socket board: runs in about a second.
TINY = """\
name: tiny
title: Tiny study on the dual board
description: Two writers in crossfire and not, idle and under a low load.
board: dual
size: 64 KiB
plot: loads
board_figure: 0.0.w.1 1.0.w.0
cases:
  - 0.0.r.0
  - 0.0.w.1
  - placements: [0.0.w.1 1.0.w.0, 0.0.w.1 1.0.w.1]
    subscriptions: [full]
    loads: [idle, low]
claims:
  - slower: 0.0.w.1
    than: 0.0.r.0
    says: A remote write is slower than a local read.
    phenomenon: 1
  - faster: 0.0.w.1
    than: 0.0.r.0
    says: A remote write is faster than a local read (false on purpose, to reach FAIL).
    phenomenon: 1
  - link_utilization_below: {case: 0.0.r.0, link: ["0->1", "1->0"], value: 0.99}
    says: A local read leaves the link mostly idle.
    phenomenon: 1
"""


def write(tmp_path, text, name="study.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


# ---------------------------------------------------------------- validation

BAD_STUDIES = [
    ("name: a\nboard: dual\ncases: [0.0.r.0]\nclaim: []\n", 4, "claim: unknown key (did you mean 'claims'?)"),
    ("name: a\nboard: dual\ncases:\n  - 0.0.x.1\n", 4, "cases[0]: '0.0.x.1': unknown op 'x'"),
    ("name: a\nboard: dual\ncases:\n  - 0.0.r.0\n  - 0.5.r.0\n", 5, "cases[1]: '0.5.r.0': node 0 has 2 cores"),
    ("name: a\nboard: dual\ncases:\n  - 0.0.r.0\n  - 3.0.r.0\n", 5, "no node 3"),
    ("name: a\nboard: nosuchboard\ncases: [0.0.r.0]\n", 2, "board: "),
    ("name: a\nboard: dual\ncases:\n  - {placements: [0.0.r.0], loads: [idle, heavy]}\n", 4,
     "cases[0].loads[1]: unknown load 'heavy'"),
    ("name: a\nboard: dual\ncases: [0.0.r.0]\nclaims:\n  - slower: 0.0.r.1\n    than: 0.0.r.0\n"
     "    says: x\n    phenomenon: 1\n", 5, "claims[0].slower: no case '0.0.r.1' on board 'dual'"),
    ("name: a\nboard: dual\ncases: [0.0.r.0, 0.0.r.1]\nclaims:\n  - quicker: 0.0.r.1\n    says: x\n"
     "    phenomenon: 1\n", 5, "claims[0]: a claim takes exactly one of"),
    ("name: a\nboard: dual\ncases: [0.0.r.0, 0.0.r.1]\nclaims:\n  - slower: 0.0.r.1\n    than: 0.0.r.0\n"
     "    phenomenon: 1\n", 5, "claims[0]: a claim needs 'says'"),
    ("name: a\nboard: dual\ncases: [0.0.r.0]\nclaims:\n  - link_utilization_above: "
     "{case: 0.0.r.0, link: '0->2', value: 0.5}\n    says: x\n    phenomenon: 1\n", 5,
     "claims[0].link_utilization_above.link: '0->2' is not a link direction of board 'dual'"),
    ("name: a\nboards: {one: dual, two: dual}\ncases: [0.0.r.0, 0.0.r.1]\nclaims:\n  - slower: 0.0.r.1\n"
     "    than: 0.0.r.0\n    says: x\n    phenomenon: 1\n", 5, "name one, e.g. 'one: 0.0.r.1'"),
    ("name: a\nboards: {pf: {board: dual, changes: {coherense: probe_filter}}}\ncases: [0.0.r.0]\n", 2,
     "boards.pf.changes: "),
    ("name: a\nboard: dual\nplot: pie\ncases: [0.0.r.0]\n", 3, "plot: unknown plot kind 'pie'"),
    ("name: a\nboard: dual\nsize: 1e308 B\ncases: [0.0.r.0]\n", 3, "size: an array is at most 1024 TiB per thread"),
    ("name: a\nboard: dual\ncases: [0.0.r.0\n", 4, "YAML syntax error"),
    ("name: a\nboard: dual\nplot: matrix\ncases: [0.0.r.0]\n", 3, "plot: a matrix plot draws the cases of a matrix"),
    ("name: a\nboard: dual\nplot: matrix\ncases:\n  - {case: 0.0.r.1, group: matrix}\n", 5,
     "cases[0].group: the group 'matrix' is the matrix entries'"),
    ("name: a\nboard: dual\ncases: [0.0.r.0]\nclaims:\n  - bottleneck: {case: 0.0.r.0, resource: link 0->2}\n"
     "    says: x\n    phenomenon: 1\n", 5, "claims[0].bottleneck.resource: 'link 0->2': no link direction 0->2"),
    ("name: a\nboard: dual\ncases: [0.0.r.0]\nclaims:\n  - bottleneck: {case: 0.0.r.0, resource: memory N2}\n"
     "    says: x\n    phenomenon: 1\n", 5, "claims[0].bottleneck.resource: 'memory N2': no node 2 on board 'dual'"),
    ("name: a\nboard: dual\ncases: [0.0.r.0, 0.0.r.1]\nclaims:\n  - slower: 0.0.r.1\n    than: 0.0.r.0\n"
     "    says: x\n    phenomenon: [1]\n", 8, "claims[0].phenomenon: expected the note's phenomenon number (1 to 6)"),
    ("name: a\nboard: dual\ncases: [0.0.r.0, 0.0.x.1]\nboard_figure: 0.0.r.1\nclaims:\n  - slower: 0.0.r.1\n"
     "    than: 0.0.r.0\n    says: x\n    phenomenon: 1\n", 3, "cases[1]: '0.0.x.1': unknown op 'x'"),
]


@pytest.mark.parametrize("text,line,message", BAD_STUDIES)
def test_bad_study_one_line_exit_2(tmp_path, capsys, text, line, message):
    path = write(tmp_path, text)
    assert main(["reproduce", str(path), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"{path}:{line}: "), err
    assert message in err, err
    assert not (tmp_path / "out").exists()


def test_unknown_study_name(capsys):
    assert main(["reproduce", "quartet-crosfire"]) == 2
    err = capsys.readouterr().err.strip()
    assert "unknown study 'quartet-crosfire'" in err and "did you mean 'quartet-crossfire'" in err


def test_bad_jobs_option(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["reproduce", "--jobs", "0"])
    assert exc.value.code == 2


# ---------------------------------------------------------------- claims on synthetic numbers

CLAIMS_STUDY = """\
name: synthetic
board: quartet
cases: [0.0.r.0, 0.0.r.1, 0.0.r.3, 0.0.w.0, 0.0.w.1, 0.0.w.3]
claims:
  - {slower: 0.0.w.1, than: 0.0.r.1, says: s, phenomenon: 1}
  - {faster: 0.0.r.1, than: 0.0.w.1, by_percent: 10, says: s, phenomenon: 1}
  - {about_equal: [0.0.r.1, 0.0.r.3], within_percent: 3, says: s, phenomenon: 2}
  - {differ: [0.0.r.1, 0.0.r.3], by_more_than_percent: 3, says: s, phenomenon: 2}
  - {ordering: [0.0.r.0, 0.0.r.1, 0.0.r.3], says: s, phenomenon: 1}
  - {slows_more: [0.0.w.0, 0.0.w.3], than: [0.0.r.0, 0.0.r.3], says: s, phenomenon: 1}
  - {difference_shrinks: [[0.0.w.0, 0.0.r.0], [0.0.w.3, 0.0.r.3]], says: s, phenomenon: 6}
  - {link_utilization_above: {case: 0.0.w.1, link: ["0->1", "1->0"], value: 0.9}, says: s, phenomenon: 3}
  - {link_utilization_below: {case: 0.0.w.1, link: "0->1", value: 0.9}, says: s, phenomenon: 3}
  - {memory_utilization_above: {case: 0.0.w.0, node: 0, value: 0.9}, says: s, phenomenon: 5}
  - {memory_utilization_below: {case: 0.0.w.0, node: 0, value: 0.9}, says: s, phenomenon: 5}
  - {bottleneck: {case: 0.0.w.0, resource: memory N0}, says: s, phenomenon: 5}
  - {bottleneck: {case: 0.0.w.0, resource: link}, says: s, phenomenon: 5}
  - {slower: {min: [0.0.w.1, 0.0.w.3]}, than: {max: [0.0.r.0, 0.0.r.1]}, says: s, phenomenon: 1}
  - {faster: {mean: [0.0.r.0, 0.0.r.1]}, than: {mean: [0.0.w.0, 0.0.w.1]}, metric: latency, says: s,
     phenomenon: 1}
  - {faster: 0.0.r.0, than: 0.0.r.3, metric: bandwidth, says: s, phenomenon: 1}
  - {reverses: [[0.0.w.1, 0.0.r.3], [0.0.w.3, 0.0.r.3]], says: s, phenomenon: 6}
  - {slower: 0.0.r.1, than: 0.0.r.0, by_percent: 10, says: s, phenomenon: 1}
"""


def metrics(time_ns, latency=100.0, bandwidth=1.0, links=None, memory=None, bottleneck="memory N0"):
    return CaseMetrics(time_ns=time_ns, latency_ns=latency, bandwidth_GBps=bandwidth, baseline_ns=100.0,
                       links=links or {}, memory=memory or {}, bottleneck=bottleneck, bottleneck_utilization=0.5)


def synthetic_values(scale_writes: float):
    """Reads 100/108/130; writes grow with ``scale_writes``; link 0-1 and memory N0 loads follow it."""
    busy = min(1.0, 0.5 * scale_writes)
    values = {
        "0.0.r.0": metrics(100.0, 90.0, 1.6), "0.0.r.1": metrics(108.0, 110.0, 1.5),
        "0.0.r.3": metrics(130.0, 140.0, 1.2),
        "0.0.w.0": metrics(113.0 * scale_writes, 120.0, 3.0, memory={0: busy}),
        "0.0.w.1": metrics(127.0 * scale_writes, 130.0, 2.5, links={(0, 1): busy, (1, 0): busy}),
        "0.0.w.3": metrics(149.0 * scale_writes, 160.0, 2.0),
    }
    return {("quartet", k): v for k, v in values.items()}


EXPECTED_WITH_SLOW_WRITES = [True, True, False, True, True, True, False, True, False, True, False, True, False,
                             True, True, True, False, False]


def test_every_claim_kind_has_a_case_here():
    study = parse_study(CLAIMS_STUDY, "synthetic.yaml")
    assert {c.kind for c in study.claims} == set(CLAIM_KINDS)


def test_claims_pass_and_fail_on_synthetic_numbers():
    study = parse_study(CLAIMS_STUDY, "synthetic.yaml")
    slow = [evaluate_claim(c, synthetic_values(2.0)) for c in study.claims]
    assert [o.passed for o in slow] == EXPECTED_WITH_SLOW_WRITES
    # writes as fast as reads: the comparisons involving writes flip
    fast = [evaluate_claim(c, synthetic_values(0.5)) for c in study.claims]
    flipped = {0, 1, 5, 6, 7, 8, 9, 10, 13}
    for i, (a, b) in enumerate(zip(slow, fast)):
        assert (a.passed != b.passed) == (i in flipped), (i, a.numbers, b.numbers)
    assert "0.0.w.1" in slow[0].numbers and "%" in slow[0].numbers


def test_reversal_and_noise_margin():
    study = parse_study(CLAIMS_STUDY, "synthetic.yaml")
    reverses, margin = study.claims[-2], study.claims[-1]
    values = synthetic_values(1.0)
    values[("quartet", "0.0.w.1")] = metrics(120.0)   # faster than 0.0.r.3 (130) ...
    values[("quartet", "0.0.w.3")] = metrics(140.0)   # ... then slower: a reversal
    assert evaluate_claim(reverses, values).passed
    values[("quartet", "0.0.w.3")] = metrics(130.5)   # slower by 0.4%: inside the noise
    outcome = evaluate_claim(reverses, values)
    assert not outcome.passed and "needs > 1%" in outcome.numbers
    assert not evaluate_claim(margin, values).passed   # 0.0.r.1 is 8% slower than 0.0.r.0, not 10%
    values[("quartet", "0.0.r.1")] = metrics(111.0)
    assert evaluate_claim(margin, values).passed
    default = parse_study(CLAIMS_STUDY, "synthetic.yaml").claims[0]   # slower, default margin 1%
    values[("quartet", "0.0.w.1")] = metrics(111.5)
    assert not evaluate_claim(default, values).passed
    values[("quartet", "0.0.w.1")] = metrics(112.5)
    assert evaluate_claim(default, values).passed


def test_slows_more_and_shrinks_use_points_of_baseline():
    study = parse_study(CLAIMS_STUDY, "synthetic.yaml")
    values = synthetic_values(1.0)
    by_kind = {c.kind: c for c in study.claims}
    grows = evaluate_claim(by_kind["slows_more"], values)
    assert grows.passed and "+36.0 pts" in grows.numbers and "+30.0 pts" in grows.numbers
    shrink = evaluate_claim(by_kind["difference_shrinks"], values)
    assert not shrink.passed and "+13.0 pts" in shrink.numbers and "+19.0 pts" in shrink.numbers


# ---------------------------------------------------------------- the command

def read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_reproduce_with_a_cache_answers_the_second_run_with_the_same_tables(tmp_path, capsys):
    study = write(tmp_path, TINY, "tiny.yaml")
    cache = tmp_path / "cache"
    assert main(["reproduce", str(study), "-o", str(tmp_path / "a"), "--jobs", "1", "--cache", str(cache)]) == 0
    assert "from the cache" not in capsys.readouterr().out
    assert main(["reproduce", str(study), "-o", str(tmp_path / "b"), "--jobs", "1", "--cache", str(cache)]) == 0
    assert "(6 from the cache)" in capsys.readouterr().out
    assert (tmp_path / "a" / "tiny.csv").read_text() == (tmp_path / "b" / "tiny.csv").read_text()
    assert "6 results from the result cache" in (tmp_path / "b" / "REPORT.md").read_text()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_reproduce_writes_tables_report_and_figures(tmp_path, capsys, jobs):
    study = write(tmp_path, TINY, "tiny.yaml")
    out = tmp_path / "out"
    assert main(["reproduce", str(study), "-o", str(out), "--jobs", jobs, "--seed", "3"]) == 0
    stdout = capsys.readouterr().out
    assert "tiny" in stdout and "2/3 claims pass" in stdout and "(1 FAIL)" in stdout
    rows = read_csv(out / "tiny.csv")
    assert [r["case"] for r in rows] == ["0.0.r.0", "0.0.w.1", "0.0.w.1 1.0.w.0", "0.0.w.1 1.0.w.1",
                                         "0.0.w.1 1.0.w.0 + full@low", "0.0.w.1 1.0.w.1 + full@low"]
    first = rows[0]
    assert float(first["percent_of_local_read"]) == pytest.approx(100.0)
    assert first["board_name"] == "dual" and len(first["board_hash"]) == 12
    assert first["seed"] == "3" and first["mode"] == "steady" and first["version"]
    assert {"link_0->1_utilization", "link_1->0_utilization", "memory_N0_utilization", "memory_N1_GBps",
            "bottleneck", "time_ns", "thread_times_ns"} <= set(first)
    assert rows[4]["background"] == "0.1.r.0@0.5GB/s 1.1.r.1@0.5GB/s"
    doc = json.loads((out / "tiny.json").read_text())
    assert doc["format"] == "simnuma-study-result/1" and doc["seed"] == 3 and doc["mode"] == "steady"
    assert doc["boards"][0]["hash"] == first["board_hash"] and doc["boards"][0]["parameters"]["name"] == "dual"
    assert [c["verdict"] for c in doc["claims"]] == ["PASS", "FAIL", "PASS"]
    assert all(c["time_ns"] > 0 and c["links"] and c["memory"] for c in doc["cases"])
    report = (out / "REPORT.md").read_text()
    assert "| tiny |" in report and "**PASS**" in report and "**FAIL**" in report
    assert "A remote write is slower than a local read." in report
    for png in ("tiny.png", "tiny-board.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(out.glob(".*.tmp"))


def test_results_do_not_depend_on_the_number_of_workers(tmp_path, monkeypatch):
    monkeypatch.setattr(study_output, "_matplotlib_available", lambda: False)
    study = write(tmp_path, TINY, "tiny.yaml")
    for jobs in ("1", "2"):
        assert main(["reproduce", str(study), "-o", str(tmp_path / jobs), "--jobs", jobs]) == 0
    assert (tmp_path / "1" / "tiny.csv").read_text() == (tmp_path / "2" / "tiny.csv").read_text()
    assert (tmp_path / "1" / "tiny.json").read_text() == (tmp_path / "2" / "tiny.json").read_text()


def test_reproduce_without_matplotlib_writes_tables_and_says_how(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(study_output, "_matplotlib_available", lambda: False)
    study = write(tmp_path, TINY, "tiny.yaml")
    out = tmp_path / "out"
    assert main(["reproduce", str(study), "-o", str(out), "--jobs", "1"]) == 0
    stdout = capsys.readouterr().out
    assert "pip install 'simnuma[plot]'" in stdout
    assert (out / "tiny.csv").exists() and (out / "tiny.json").exists() and (out / "REPORT.md").exists()
    assert not list(out.glob("*.png"))
    assert "pip install 'simnuma[plot]'" in (out / "REPORT.md").read_text()


def test_identical_cases_are_simulated_once(tmp_path):
    a = load_study(write(tmp_path, TINY, "a.yaml"))
    b = load_study(write(tmp_path, TINY.replace("name: tiny", "name: other"), "b.yaml"))
    jobs = plan_jobs([a, b])
    assert len(jobs) == len(a.cases)  # 0.0.r.0 is also the baseline
    hashes = {job.board for job in jobs.values()}
    assert len(hashes) == 1


def test_duplicate_study_names_are_refused(tmp_path, capsys):
    study = write(tmp_path, TINY, "tiny.yaml")
    assert main(["reproduce", str(study), str(study), "-o", str(tmp_path / "o")]) == 2
    assert "output files would collide" in capsys.readouterr().err


# ---------------------------------------------------------------- the bundled studies

@pytest.mark.parametrize("name", bundled_studies())
def test_bundled_study_loads_and_its_claims_resolve(name):
    study = load_study(name)
    assert study.cases and study.claims and study.description
    values = {c.key: metrics(100.0 + i, links={d: 0.5 for d in study.boards[c.board].topology.directions},
                             memory={n: 0.5 for n in study.boards[c.board].topology.node_ids})
              for i, c in enumerate(study.cases)}
    for claim in study.claims:
        assert claim.says.endswith(".") and claim.phenomenon
        evaluate_claim(claim, values)  # every case a claim names exists in the study
    for key in study.board_figure:
        assert key in values


def test_bundled_studies_cover_the_note():
    names = bundled_studies()
    assert {"quartet-hops", "quartet-equal-hops", "quartet-crossfire", "quartet-local-writers",
            "quartet-local-readers", "x6440-stream", "whatif-quartet-full", "whatif-ladder8"} <= set(names)
    phenomena = {c.phenomenon for n in names for c in load_study(n).claims}
    assert {"1", "2", "3", "4", "5", "6"} <= phenomena


def test_x6440_probe_filter_board_differs_only_in_coherence():
    study = load_study("x6440-stream")
    broadcast, pf = study.boards["broadcast"], study.boards["probe-filter"]
    assert broadcast.topology.coherence == "broadcast" and pf.topology.coherence == "probe_filter"
    assert broadcast.hash != pf.hash
    assert pf.topology.with_parameters({"coherence": "broadcast"}) == broadcast.topology


def test_parameters_from_keeps_the_wiring_and_takes_the_timing(tmp_path):
    text = ("name: p\nboards:\n  square: quartet\n  full: {board: quartet-full, parameters_from: quartet,"
            " changes: {defaults.memory.latency: 50 ns}}\ncases: [0.0.r.3]\n")
    study = load_study(write(tmp_path, text))
    square, full = study.boards["square"].topology, study.boards["full"].topology
    assert full.name == "quartet-full" and len(full.links) == 6 and full.hops(0, 3) == 1
    assert full.node(0).ports == load_topology("quartet-full").node(0).ports
    assert full.links[0].latency_ns == square.links[0].latency_ns
    assert full.node(2).probe_lookup_ns == square.node(2).probe_lookup_ns
    assert full.node(1).memory_latency_ns == 50.0
    assert "parameters of quartet" in study.boards["full"].base


def test_study_by_path_resolves_boards_beside_it(tmp_path):
    board = load_topology("dual").to_yaml()
    (tmp_path / "myboard.yaml").write_text(board.replace("name: dual", "name: myboard"))
    study = load_study(write(tmp_path, "name: mine\nboard: myboard.yaml\ncases: [0.0.r.1]\n"))
    assert study.boards["myboard"].topology.name == "myboard"


def test_study_error_is_a_simnuma_error():
    from simnuma.errors import SimnumaError

    with pytest.raises(StudyError):
        load_study("no-such-study")
    assert issubclass(StudyError, SimnumaError)


def test_a_broken_case_hides_only_the_references_to_itself(tmp_path, capsys):
    """A claim naming the case a broken entry of 'cases' meant is not reported twice; one naming a case the
    study never lists is reported beside it."""
    head = "name: a\nboard: dual\ncases: [0.0.r.0, 0.0.r.5]\nclaims:\n  - slower: {}\n    than: 0.0.r.0\n" \
           "    says: x\n    phenomenon: 1\n"
    path = write(tmp_path, head.format("0.0.r.5"))
    assert main(["reproduce", str(path), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cases[1]: '0.0.r.5'" in err[0], err
    path = write(tmp_path, head.format("0.0.r.1"))
    assert main(["reproduce", str(path), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2, err
    assert err[0].startswith(f"{path}:3: cases[1]: '0.0.r.5'") and "no case '0.0.r.1' on board 'dual'" in err[1], err


def test_a_broken_case_on_one_board_does_not_hide_the_same_case_missing_on_another(tmp_path, capsys):
    text = ("name: a\nboards: {one: dual, two: dual}\ncases: ['one: 0.0.r.5', 0.0.r.0]\nclaims:\n"
            "  - slower: 'two: 0.0.r.5'\n    than: 'one: 0.0.r.0'\n    says: x\n    phenomenon: 1\n")
    path = write(tmp_path, text)
    assert main(["reproduce", str(path), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "cases[0]" in err[0] and "no case '0.0.r.5' on board 'two'" in err[1], err
    path = write(tmp_path, text.replace("'two: 0.0.r.5'", "'one: 0.0.r.5'"))
    assert main(["reproduce", str(path), "-o", str(tmp_path / "out")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
