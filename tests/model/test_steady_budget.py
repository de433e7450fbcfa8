"""Steady mode ends: a paced thread left with nothing to issue finishes, and a phase that cannot converge
within its budget stops and says so in the result."""
from __future__ import annotations

import pytest

from simnuma import load_topology, simulate
from simnuma.model import system as system_module
from simnuma.report import render_result


@pytest.mark.parametrize("board,spec", [("dual", "0.0.r.0@0.5GB/s"), ("quartet", "0.0.r.1@0.1GB/s"),
                                        ("x6440", "0.0.t.0@1GB/s")])
def test_a_paced_thread_finishes_in_steady_mode_as_in_exact(board, spec):
    """Extrapolation can leave a paced thread with no line to issue and none in flight: it is done then."""
    topo = load_topology(board)
    steady = simulate(topo, [spec], size_bytes=256 * 1024, mode="steady", baseline=False)
    exact = simulate(topo, [spec], size_bytes=256 * 1024, mode="exact", baseline=False)
    assert steady.makespan_ns == pytest.approx(exact.makespan_ns, rel=0.01)
    assert steady.warnings == ()


def test_a_phase_that_does_not_converge_stops_and_says_so(monkeypatch):
    monkeypatch.setattr(system_module, "STEADY_HALF_WIDTH", 1e-9)    # a target no batch count reaches
    monkeypatch.setattr(system_module, "STEADY_MAX_BATCHES", 12)
    result = simulate(load_topology("dual"), ["0.0.w.1", "1.0.w.0"], size_bytes=4 << 20, baseline=False)
    assert result.warnings and all("did not converge in 12 batches" in w for w in result.warnings)
    assert result.to_dict()["warnings"] == list(result.warnings)
    assert "warning: steady mode: the phase of 0.0.w.1, 1.0.w.0" in render_result(result.to_dict())
