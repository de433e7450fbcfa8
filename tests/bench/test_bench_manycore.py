"""``bench host`` on a 128-CPU, two-socket machine: the synthetic fixture of ``fixtures/manycore.py``."""
from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest
from benchutil import FIXTURES, call_cli

from simnuma.bench.curves import curves_from_suite
from simnuma.bench.skeleton import curve_queue, lines_ahead, sri_buffers
from simnuma.model.curve import latency_along
from simnuma.topology import load_topology


def _manycore():
    spec = importlib.util.spec_from_file_location("manycore", FIXTURES / "manycore.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


manycore = _manycore()


@pytest.fixture(scope="module")
def machine(tmp_path_factory) -> dict:
    return manycore.write_all(tmp_path_factory.mktemp("manycore"))


def test_the_fixture_is_little_s_law_throughout():
    """Each mix saturates where its fabric's transfers in flight meet its curve: bandwidth x latency / 64 B."""
    for mix in ("r", "w", "t"):
        bandwidth, latency = manycore.solve(mix, manycore.CAP[mix])
        assert bandwidth * latency / 64 == pytest.approx(manycore.CAP[mix], rel=1e-6)
    assert manycore.loaded("r", 63)[0] == pytest.approx(manycore.solve("r", manycore.CAP["r"] + 1)[1])


def test_bench_host_writes_a_many_core_board(machine, tmp_path, capsys):
    """Two nodes of 64 CPUs; the three curves with their peaks from the all-cores cases; the queue by Little's law
    on the read curve at its peak, less what the model keeps ahead of it; the SRI's buffers two a core."""
    target = tmp_path / "host.yaml"
    code, _, err = call_cli(capsys, "bench", "host", "--sysfs", machine["sys"], "--suite", machine["suite"],
                            "-o", target)
    assert code == 0, err
    board = load_topology(str(target))
    assert [n.cores for n in board.nodes] == [64, 64]
    node = board.node(0)
    assert node.memory_model == "curve"
    assert [c.read_fraction for c in node.curves] == [0.5, 0.75, 1.0]
    reads = node.curves[-1]
    peaks = {mix: manycore.solve(mix, manycore.CAP[mix])[0] for mix in ("r", "w", "t")}
    assert [c.peak_GBps for c in node.curves] == [pytest.approx(peaks[m], rel=0.02) for m in ("w", "t", "r")]
    held = reads.peak_GBps * latency_along(reads.points, reads.peak_GBps, reads.peak_GBps,   # the written points
                                           reads.peak_latency_ns) / 64
    # each curve's latency at its peak bounded by Little's law from the loaded cases: the write curve's trend
    # (36 ns per GB/s over its last two points) would say 635 ns at its peak; 63 writers beside the chase kept
    # lines for 548 ns, and the 64 at the peak keep no more each
    writes = node.curves[0]
    (b0, l0), (b1, l1) = writes.points[-2:]
    trend_at_peak = l1 + (l1 - l0) / (b1 - b0) * (writes.peak_GBps - b1)
    assert l1 <= writes.peak_latency_ns == pytest.approx(l1 * 64 / 63 * b1 / writes.peak_GBps, rel=0.01)
    assert writes.peak_latency_ns < trend_at_peak - 50
    assert all(c.peak_latency_ns >= c.points[-1][1] for c in node.curves)
    measured = max(curves_from_suite(Path(machine["suite"])), key=lambda c: c.read_fraction)
    queue, held_lines, ahead = curve_queue([measured], 64)
    assert held_lines == pytest.approx(held, rel=0.005) and held_lines == pytest.approx(manycore.CAP["r"], rel=0.05)
    # 64 streams alone would keep 64 x 55 lines in flight, far more than the 2146 the memory held: the SRI's 128
    # buffers and a request of each of the 63 other cores wait ahead of the queue, which holds the rest, but not
    # fewer than the memory held at the last point measured (358 GB/s x 349 ns / 64 B)
    last = measured.points[-1]
    assert lines_ahead(64) == 128 + 63 and measured.lone_lines * 64 > held_lines + 191
    assert ahead == min(191, held_lines - math.ceil(last.bandwidth_GBps * last.latency_ns / 64)) > 185
    assert node.memory_queue == queue == held_lines - ahead
    assert node.sri_buffers["request"] == sri_buffers(64) == 128
    # the link's bandwidth placeholder: the data the remote peak (every CPU of node 0 reading node 1) carried
    assert board.link(0, 1).bandwidth_ab_GBps == pytest.approx(manycore.CROSS_GBps, rel=0.02)


@pytest.mark.slow
def test_the_loop_predicts_the_read_chases_and_bounds_the_others(machine, tmp_path):
    """``docs/calibration.md``'s loop on the fixture: ``bench host``, ``calibrate`` with its default fit, then
    ``validate`` on the ten loaded-latency cases.  The read chases, below and past saturation, paced or not,
    and the chases beside paced triads and writers (the triads at 3 GB/s each near their curve's knee) come
    within 5% of the figures; beside unpaced triads and writers, past saturation, the model is slower, never
    faster (an upper bound, as the docs say), and by less than 20%."""
    import json

    from benchutil import run_cli

    host, cal, report = tmp_path / "host.yaml", tmp_path / "cal.yaml", tmp_path / "report"
    for args in (("bench", "host", "--sysfs", machine["sys"], "--suite", machine["suite"], "-o", host),
                 ("calibrate", host, machine["suite"], "-o", cal),
                 ("validate", cal, machine["suite-key"], "-o", report)):
        done = run_cli(*args, timeout=3600)
        assert done.returncode == 0, done.stderr
    rows = json.loads((report / "validation.json").read_text())["rows"]
    errors = {r["case"].split(" + ")[1].split()[0] + f" x{len(r['case'].split(' + ')[1].split())}": r["error_percent"]
              for r in rows}
    assert len(errors) == 10
    for beside, error in errors.items():
        if ".r.0" in beside or "@" in beside:
            assert abs(error) < 5.0, errors
        else:
            assert 0.0 < error < 20.0, errors
