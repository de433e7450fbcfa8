"""The case notation (simnuma.case): one grammar for the command line, studies, measurements and the bench."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simnuma.case import LOADS_GBps, SUBSCRIPTIONS, Case, baseline_case, explicit_case, parse_case
from simnuma.errors import SpecError
from simnuma.topology import load_topology


def test_canonical_text():
    case = parse_case("  0.0.w.1   1.0.w.0 +  full@very-high ")
    assert case.name == "0.0.w.1 1.0.w.0 + full@very-high"
    assert case.rate_GBps == 4.0 and case.subscription == "full" and case.load == "very-high"
    assert parse_case("0.0.r.0 + high@idle").name == "0.0.r.0"
    assert parse_case("0.0.r.0 + high@2GB/s").load == "2GB/s"
    explicit = parse_case("0.0.r.0 + 2.0.r.2@4GB/s")
    assert explicit.load == "custom" and explicit.name == "0.0.r.0 + 2.0.r.2@4GB/s"
    assert parse_case("0.0.r.0+0.1.r.0").name == "0.0.r.0 + 0.1.r.0"


def test_every_spelling_reads_as_one_case():
    """'+' (studies, CLI), 'bg' (measurement files and reports written before) and a --bg list agree."""
    plus = parse_case("0.0.w.0 0.1.w.0 + 1.0.r.1@0.5GB/s")
    assert parse_case("0.0.w.0 0.1.w.0 bg 1.0.r.1@0.5GB/s") == plus
    assert parse_case(["0.0.w.0", "0.1.w.0"], ["1.0.r.1@500MB/s"]) == plus
    assert parse_case(["0.0.w.0", "0.1.w.0", "+", "1.0.r.1@0.5GB/s"]) == plus
    assert parse_case("0.0.w.0 0.1.w.0", "1.0.r.1@0.5GB/s") == plus
    assert plus.background == ("1.0.r.1@0.5GB/s",) and plus.threads == ("0.0.w.0", "0.1.w.0")
    assert parse_case("0.0.r.0 0.1.t.0").ops == frozenset({"r", "t"})
    assert parse_case("0.0.w.0 + high@low").ops == frozenset({"r", "w"})


@pytest.mark.parametrize("text,message", [
    ("", "expected a case"),
    ("+ high@low", "no foreground thread"),
    ("0.0.r.0 +", "nothing after '+'"),
    ("0.0.r.0 bg", "nothing after 'bg'"),
    ("0.0.r.0 + 0.1.r.0 + 1.0.r.1", "one '+'"),
    ("0.0.r.0 + hihg@low", "did you mean"),
    ("0.0.r.0 + high@loud", "unknown load"),
    ("0.0.r.0 + high@low full@low", "at most one background set"),
    ("0.0.x.0", "unknown op"),
])
def test_errors(text, message):
    with pytest.raises(SpecError) as exc:
        parse_case(text)
    assert message in str(exc.value)


def test_subscriptions_place_threads_as_the_note():
    quartet = load_topology("quartet")
    high = parse_case("0.0.w.1 1.0.w.0 + high@low").background_on(quartet)
    assert [s.label for s in high] == ["0.1.r.0@0.5GB/s", "1.1.r.1@0.5GB/s", "2.0.r.2@0.5GB/s", "3.0.r.3@0.5GB/s"]
    full = parse_case("0.0.w.1 1.0.w.3 + full@very-high").background_on(quartet)
    assert sorted((s.node, s.core) for s in full) == [(0, 1), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1)]
    assert all(s.op == "r" and s.mem_node == s.node and s.rate_GBps == 4.0 for s in full)
    others = parse_case("0.0.w.0 0.1.w.1 + others@medium").background_on(quartet)
    assert [s.label for s in others] == ["1.0.r.1@1.5GB/s", "2.0.r.2@1.5GB/s", "3.0.r.3@1.5GB/s"]


def test_placed_case_makes_every_background_thread_explicit():
    quartet = load_topology("quartet")
    placed = parse_case("0.0.w.1 + others@low 0.1.r.0").placed(quartet)
    assert placed.subscription is None and placed.load == "custom"
    assert placed.background == ("1.0.r.1@0.5GB/s", "2.0.r.2@0.5GB/s", "3.0.r.3@0.5GB/s", "0.1.r.0")
    assert parse_case(placed.name) == placed


def test_one_baseline():
    assert baseline_case(load_topology("quartet")) == parse_case("0.0.r.0")
    assert explicit_case(("0.0.r.0",)) == baseline_case(load_topology("dual"))


_specs = st.builds(lambda n, c, op, m, rate: f"{n}.{c}.{op}.{m}" + (f"@{rate}GB/s" if rate else ""),
                   st.integers(0, 7), st.integers(0, 15), st.sampled_from("rwtl"), st.integers(0, 7),
                   st.sampled_from([None, 0.5, 2, 4.25]))


@given(fg=st.lists(_specs, min_size=1, max_size=4), bg=st.lists(_specs, max_size=4),
       named=st.one_of(st.none(), st.tuples(st.sampled_from(SUBSCRIPTIONS), st.sampled_from(list(LOADS_GBps)))))
def test_the_canonical_name_reads_back_as_the_same_case(fg, bg, named):
    words = fg + (["+"] if bg or named else []) + ([f"{named[0]}@{named[1]}"] if named else []) + bg
    case = parse_case(" ".join(words))
    assert isinstance(case, Case)
    assert parse_case(case.name) == case
    assert parse_case(case.name.replace(" + ", " bg ")) == case
