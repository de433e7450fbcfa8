"""Where the firmware's NUMA numbers and the measured ones disagree (``simnuma bench host --suite``).

The firmware describes distance twice: the SLIT (``nodeN/distance``), relative and, by the kernel's own
documentation, "abstract", and, where the platform has one, the HMAT (``nodeN/access0/initiators``), in
ns and MB/s.  A suite measures the latency chase ``i.0.l.j`` alone for every pair of nodes it ran;
this compares each pair's measured latency relative to its row's local one with the SLIT's
``d[i][j] / d[i][i]``, and each HMAT read latency with the chase from the node's nearest initiator.
"""
from __future__ import annotations

from statistics import median

from ..workload import parse_spec

__all__ = ["measured_chase_latencies", "firmware_disagreements", "SLIT_TOLERANCE", "HMAT_TOLERANCE"]

SLIT_TOLERANCE = 0.15   # a relative distance within 15% of the measured ratio agrees
HMAT_TOLERANCE = 0.25   # an HMAT latency within 25% of the measured chase agrees (a chase adds page walks)


def measured_chase_latencies(reports) -> dict:
    """``{(thread node, memory node): ns}``: the idle chase of each pair the suite ran (median per access)."""
    out: dict = {}
    for _, report in reports:
        threads = report.get("threads") or []
        if len(threads) != 1 or threads[0].get("role") != "foreground":
            continue
        spec = parse_spec(threads[0]["spec"])
        per_access = (threads[0].get("ns_per_access") or {}).get("median")
        if spec.op == "l" and spec.rate_GBps is None and per_access:
            out.setdefault((spec.node, spec.mem_node), []).append(float(per_access))
    return {pair: median(values) for pair, values in out.items()}


def firmware_disagreements(host, latencies: dict) -> list:
    """One line per disagreement between ``host``'s SLIT or HMAT and ``latencies`` (measured_chase_latencies)."""
    lines = []
    ids = host.node_ids
    if host.distances is not None:
        for a, row in zip(ids, host.distances):
            local = latencies.get((a, a))
            own = row[ids.index(a)]   # the distance of the node's own memory
            for b, d in zip(ids, row):
                measured = latencies.get((a, b))
                if a == b or local is None or measured is None or not own:
                    continue
                firmware = d / own
                ratio = measured / local
                if abs(ratio / firmware - 1.0) > SLIT_TOLERANCE:
                    lines.append(f"SLIT says node {a} reaches node {b}'s memory at {firmware:.2f} x its own"
                                 f" (distance {d} against {own}); measured {ratio:.2f} x"
                                 f" ({measured:.0f} ns against {local:.0f} ns)")
    for h in host.hmat:
        for initiator in h.initiators:
            measured = latencies.get((initiator, h.target))
            if measured is None or not h.read_latency_ns:
                continue
            if abs(measured / h.read_latency_ns - 1.0) > HMAT_TOLERANCE:
                lines.append(f"HMAT says node {initiator} reads node {h.target}'s memory in {h.read_latency_ns} ns;"
                             f" the chase measured {measured:.0f} ns")
    return lines
