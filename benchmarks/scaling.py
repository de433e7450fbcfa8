"""Cost per transaction against socket count (not part of the test run).

Boards of 2 to 32 sockets with the Quartet's socket (its node and link
parameters, its DRAM), wired as rings, ladders (two rails with rungs) and
hypercubes, with broadcast coherence and with a probe filter; on each, one
reader per socket, reading its own memory (``local``) or that of a socket as
many hops away as any (``far``: every read crosses the board's diameter).  Every case runs in its own process with a time limit
(some rings of K8 sockets deadlock with broadcast probes: every probe buffer
full, each waiting on the next; the model stops such a case itself and it is
reported as a deadlock).  Printed per case: SimPy events per transaction (the model's
work, independent of the machine) and CPU microseconds per transaction next to
SimPy's bare event rate; then, per wiring and coherence, the exponent b of a
least-squares fit events/txn ~ a * N**b.

Run: ``.venv/bin/python benchmarks/scaling.py [--sizes 2 4 8 16 32] [--lines 2048] [--limit 60]``.
"""
from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from run import bare_event_rate  # noqa: E402

WIRINGS = ("ring", "ladder", "hypercube")
COHERENCE = ("broadcast", "probe_filter")


def links_of(wiring: str, n: int) -> list:
    """``(a, b)`` pairs of sockets wired together, or [] when ``wiring`` has no board of ``n`` sockets."""
    if n == 2:
        return [(0, 1)]
    if wiring == "ring":
        return [(i, (i + 1) % n) for i in range(n)]
    if wiring == "ladder":
        if n % 2:
            return []
        half = n // 2       # sockets 0..half-1 on one rail, half..n-1 on the other
        rails = [(i, i + 1) for i in range(half - 1)] + [(half + i, half + i + 1) for i in range(half - 1)]
        return rails + [(i, half + i) for i in range(half)]
    if wiring == "hypercube":
        if n & (n - 1):
            return []
        return [(a, a | 1 << k) for a in range(n) for k in range(n.bit_length() - 1) if not a & 1 << k]
    raise ValueError(wiring)


def board_text(wiring: str, n: int, coherence: str) -> str:
    """A board of ``n`` Quartet sockets wired as ``wiring`` (YAML text)."""
    from simnuma.topology.loading import _bundled_text

    quartet = _bundled_text("quartet")[0]
    head = quartet[:quartet.index("\nnodes:")]
    head = head.replace("name: quartet", f"name: {wiring}{n}-{coherence}")
    degree = max(sum(1 for a, b in links_of(wiring, n) if s in (a, b)) for s in range(n))
    head = head.replace("  ports: 3", f"  ports: {degree + 1}")
    lines = [head, "nodes:"] + [f"  - {{id: {i}}}" for i in range(n)]
    lines += ["links:"] + [f"  - {{a: {a}, b: {b}}}" for a, b in links_of(wiring, n)]
    lines += ["io:", "  - {node: 0}", "routing: shortest", f"coherence: {coherence}"]
    return "\n".join(lines) + "\n"


WORKLOADS = ("local", "far")


def readers(workload: str, wiring: str, n: int) -> list:
    """One reader per socket: of its own memory, or of the memory of the farthest socket (the lowest such id)."""
    if workload == "local":
        return [f"{s}.0.r.{s}" for s in range(n)]
    near = {s: set() for s in range(n)}
    for a, b in links_of(wiring, n):
        near[a].add(b)
        near[b].add(a)
    specs = []
    for s in range(n):
        hops, frontier = {s: 0}, [s]
        while frontier:
            reached = []
            for a in frontier:
                for b in sorted(near[a] - hops.keys()):
                    hops[b] = hops[a] + 1
                    reached.append(b)
            frontier = reached
        far = max(hops.values())
        specs.append(f"{s}.0.r.{min(t for t, h in hops.items() if h == far)}")
    return specs


def _measure(text: str, specs: list, lines: int, out) -> None:
    import simpy

    from simnuma.model.system import System, run_exact
    from simnuma.topology import parse_topology
    from simnuma.workload import Workload

    envs = []
    init = simpy.Environment.__init__

    def record(self, *a, **k):
        init(self, *a, **k)
        envs.append(self)

    simpy.Environment.__init__ = record
    board = parse_topology(text, "scaling.yaml")
    system = System(board, Workload.build(specs, []), lines * 64, 1)
    system.extrapolated = None
    from simnuma.model.deadlock import DeadlockError

    cpu0 = time.process_time()
    try:
        run_exact(system)
    except DeadlockError as exc:
        out.put({"deadlock": str(exc)})
        return
    cpu = time.process_time() - cpu0
    txns = system.coherence.completed
    out.put({"events": next(envs[-1]._eid), "txns": txns, "cpu_s": cpu})


def measure(text: str, specs: list, lines: int, limit_s: float):
    """``{events, txns, cpu_s}`` of one case, or None when it made no progress within ``limit_s``."""
    out = mp.Queue()
    proc = mp.Process(target=_measure, args=(text, specs, lines, out))
    proc.start()
    proc.join(limit_s)
    if proc.is_alive():
        proc.terminate()
        proc.join()
        return None
    return out.get() if not out.empty() else None


def exponent(points) -> float:
    """b of the least-squares fit y ~ a * x**b on ``(x, y)`` points."""
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(y) for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[2, 4, 6, 8, 16, 32], help="socket counts")
    ap.add_argument("--lines", type=int, default=2048, help="lines each socket's reader reads (default 2048)")
    ap.add_argument("--limit", type=float, default=60.0, help="seconds a case may take (default 60)")
    ap.add_argument("--wirings", nargs="+", default=list(WIRINGS), choices=WIRINGS)
    ap.add_argument("--reads", nargs="+", default=list(WORKLOADS), choices=WORKLOADS)
    ap.add_argument("--json", help="also write the rows to this JSON file")
    args = ap.parse_args(argv)
    bare = bare_event_rate()
    print(f"SimPy bare event rate {bare:,.0f} events/s; one reader per socket, {args.lines} lines each")
    print(f"{'wiring':10} {'coherence':13} {'reads':6} {'N':>3} {'events/txn':>10} {'us/txn':>8} {'txn/s / bare':>12}")
    rows = []
    for wiring in args.wirings:
        for coherence in COHERENCE:
            for workload in args.reads:
                for n in args.sizes:
                    if not links_of(wiring, n):
                        continue
                    r = measure(board_text(wiring, n, coherence), readers(workload, wiring, n), args.lines, args.limit)
                    row = {"wiring": wiring, "coherence": coherence, "reads": workload, "sockets": n}
                    label = f"{wiring:10} {coherence:13} {workload:6} {n:>3}"
                    if r is not None and "deadlock" in r:
                        print(f"{label} deadlock (simnuma.model.deadlock names the cycle)")
                        row.update(progress=False, deadlock=r["deadlock"])
                    elif r is None or not r["txns"]:
                        print(f"{label} no progress within {args.limit:g} s")
                        row["progress"] = False
                    else:
                        per = r["events"] / r["txns"]
                        us = 1e6 * r["cpu_s"] / r["txns"]
                        print(f"{label} {per:>10.2f} {us:>8.1f} {r['txns'] / r['cpu_s'] / bare:>12.4f}")
                        row.update(progress=True, events_per_txn=per, us_per_txn=us)
                    rows.append(row)
                    sys.stdout.flush()
    print()
    for wiring in args.wirings:
        for coherence in COHERENCE:
            for workload in args.reads:
                pts = [(r["sockets"], r["events_per_txn"], r["us_per_txn"]) for r in rows if r.get("progress")
                       and (r["wiring"], r["coherence"], r["reads"]) == (wiring, coherence, workload)]
                if len(pts) >= 2:
                    print(f"{wiring:10} {coherence:13} {workload:6} events/txn ~ N^{exponent([p[:2] for p in pts]):.2f},"
                          f" CPU/txn ~ N^{exponent([(p[0], p[2]) for p in pts]):.2f} over N = "
                          f"{', '.join(str(p[0]) for p in pts)}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
