"""The thread notation: parsing and placement errors."""
from __future__ import annotations

import pytest

from simnuma.errors import SpecError
from simnuma.topology import load_topology
from simnuma.workload import ThreadSpec, Workload, parse_spec

QUARTET = load_topology("quartet")


def test_parse_plain_and_throttled():
    assert parse_spec("0.1.w.3") == ThreadSpec(0, 1, "w", 3, None)
    spec = parse_spec("2.0.r.2@0.5GB/s")
    assert spec.rate_GBps == 0.5
    assert spec.label == "2.0.r.2@0.5GB/s"
    assert parse_spec("1.0.r.1@500MB/s").rate_GBps == pytest.approx(0.5)


@pytest.mark.parametrize("text,message", [
    ("0.0.x.1", "unknown op 'x'"),
    ("0.0.r", "expected a thread spec"),
    ("a.0.r.1", "expected a thread spec"),
    ("0.0.r.1@fast", "malformed rate"),
    ("0.0.r.1@4", "malformed rate"),
    ("0.0.r.1@0GB/s", "must be positive"),
])
def test_malformed_specs(text, message):
    with pytest.raises(SpecError, match=message):
        parse_spec(text)


@pytest.mark.parametrize("threads,bg,message", [
    (["7.0.r.0"], [], "no node 7"),
    (["0.0.r.9"], [], "no memory node 9"),
    (["0.2.r.0"], [], "no core 2"),
    (["0.0.r.0", "0.0.w.1"], [], "already runs"),
    (["0.0.r.0"], ["0.0.r.0@1GB/s"], "already runs"),
])
def test_placement_errors(threads, bg, message):
    with pytest.raises(SpecError, match=message):
        Workload.build(threads, bg).check(QUARTET)


def test_latency_chase_is_simulated_with_one_line_in_flight():
    from simnuma.model import simulate
    chase = simulate("quartet", ["0.0.l.0"], ["0.1.r.0"], size_bytes=2**20, baseline=False)
    thread = chase.thread("0.0.l.0")
    # one line in flight: the time per line is the latency of a line
    per_line_ns = thread["time_ns"] / (2**20 // 64)
    assert per_line_ns == pytest.approx(thread["latency_ns"]["mean"], rel=0.02)
