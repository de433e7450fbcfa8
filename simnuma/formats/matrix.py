"""A board's latency and bandwidth matrices and loaded-latency curves, as Intel MLC measures a machine's.

All from simulations through the one runner and its cache (steady mode, 64 MiB arrays):

* **idle latency** (ns), row: the node a thread runs on, column: the node its memory is on: the
  latency chase ``i.0.l.j`` alone, one line in flight over a scattered order of its lines (MLC's
  idle latency);
* **bandwidth** (GB/s): one streaming reader ``i.0.r.j``, and every core of node ``i`` reading node
  ``j`` at once (MLC's ``--bandwidth_matrix`` loads all of a node's cores);
* **loaded latency**, per memory node ``j``: the chase ``j.0.l.j`` beside a reader of node ``j`` on
  every other core of the board, each paced at a rate (MLC's ``--loaded_latency`` injection delays),
  from idle to unthrottled: the node's memory bandwidth and the chase's latency at each point.
"""
from __future__ import annotations

import json
import statistics
from dataclasses import dataclass

from ..case import explicit_case
from ..runner import Job, ResultCache, Runner, board_hash

__all__ = ["Matrices", "LOAD_RATES_GBps", "compute_matrices", "mlc_text", "matrices_csv", "write_heatmap"]

LOAD_RATES_GBps = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)   # demand of each loading core (a load generator)
SIZE_BYTES = 64 << 20


@dataclass
class Matrices:
    board: str
    board_hash: str
    nodes: tuple
    latency_ns: list          # [i][j]
    bandwidth_GBps: list      # one reader [i][j]
    node_bandwidth_GBps: list  # every core of node i reading node j
    loaded: dict              # node j -> [(rate per core GB/s or None, memory GB/s, latency ns)]
    seed: int
    version: str

    def to_dict(self) -> dict:
        return {"board": self.board, "board_hash": self.board_hash, "nodes": list(self.nodes), "seed": self.seed,
                "version": self.version, "units": {"latency": "ns", "bandwidth": "GB/s (10^9 B/s)"},
                "idle_latency_ns": self.latency_ns, "bandwidth_GBps": {"one_reader": self.bandwidth_GBps,
                                                                      "all_cores": self.node_bandwidth_GBps},
                "loaded_latency": {str(j): [{"rate_per_core_GBps": r, "memory_GBps": bw, "latency_ns": lat}
                                            for r, bw, lat in pts] for j, pts in self.loaded.items()}}


PARTS = ("latency", "bandwidth", "loaded")


def _cases(topology, parts=PARTS) -> dict:
    ids = topology.node_ids
    cases: dict = {}
    for i in ids:
        cores = topology.node(i).cores
        for j in ids:
            cases[("latency", i, j)] = explicit_case([f"{i}.0.l.{j}"])
            if "bandwidth" in parts:
                cases[("one", i, j)] = explicit_case([f"{i}.0.r.{j}"])
                cases[("all", i, j)] = explicit_case([f"{i}.{c}.r.{j}" for c in range(cores)])
    for j in ids if "loaded" in parts else ():
        loaders = [(n, c) for n in ids for c in range(topology.node(n).cores) if (n, c) != (j, 0)]
        for rate in LOAD_RATES_GBps:
            suffix = f"@{rate}GB/s" if rate else ""
            cases[("loaded", j, rate)] = explicit_case([f"{j}.0.l.{j}"], [f"{n}.{c}.r.{j}{suffix}" for n, c in loaders])
    return cases


def count_jobs(topology, parts=PARTS) -> int:
    return len(_cases(topology, parts))


def compute_matrices(topology, workers: int = 1, cache_dir=None, seed: int = 1, on_done=None,
                     parts=PARTS) -> Matrices:
    """The matrices of ``topology`` (see the module): the idle latency always, the bandwidth matrices and
    the loaded-latency curves where ``parts`` asks for them (empty otherwise)."""
    from .. import __version__

    cases = _cases(topology, parts)
    digest = board_hash(topology)
    jobs = {key: Job(topology, case, SIZE_BYTES, "steady", seed, board=digest) for key, case in cases.items()}
    with Runner(workers, ResultCache(cache_dir)) as runner:
        results = runner.run(jobs.values(), on_done)
    ids = topology.node_ids

    def fg(key) -> list:
        return [t for t in results[jobs[key].key]["threads"] if t["role"] == "foreground"]

    latency = [[fg(("latency", i, j))[0]["latency_ns"]["mean"] for j in ids] for i in ids]
    one = every = []
    if "bandwidth" in parts:
        one = [[fg(("one", i, j))[0]["bandwidth_GBps"] for j in ids] for i in ids]
        every = [[sum(t["bandwidth_GBps"] for t in fg(("all", i, j))) for j in ids] for i in ids]
    loaded = {}
    for j in ids if "loaded" in parts else ():
        points = []
        for rate in LOAD_RATES_GBps:
            r = results[jobs[("loaded", j, rate)].key]
            memory = next(m for m in r["memory"] if m["node"] == j)
            points.append((rate, memory["bandwidth_GBps"], fg(("loaded", j, rate))[0]["latency_ns"]["mean"]))
        loaded[j] = points
    return Matrices(topology.name, digest, tuple(ids), latency, one, every, loaded, seed, __version__)


def _grid(title: str, ids, values, fmt: str) -> list:
    lines = [title, "\t\tNuma node", "Numa node\t" + "\t".join(f"{j:>7}" for j in ids)]
    for i, row in zip(ids, values):
        lines.append(f"{i:>7}\t\t" + "\t".join(format(v, fmt).rjust(7) for v in row))
    return lines


def mlc_text(m: Matrices) -> str:
    """The matrices laid out as Intel MLC prints them (tab-separated grids, a header per measurement)."""
    lines = [f"simnuma {m.version}: board {m.board} ({m.board_hash}), seed {m.seed}; simulated, as Intel MLC"
             " measures a machine", ""]
    lines += _grid("Measuring idle latencies (in ns)...", m.nodes, m.latency_ns, ".1f") + [""]
    if m.bandwidth_GBps:
        lines += _grid("Measuring memory bandwidths between nodes, one reader (GB/s)...", m.nodes, m.bandwidth_GBps,
                       ".2f") + [""]
        lines += _grid("Measuring memory bandwidths between nodes, every core of a node reading (GB/s)...", m.nodes,
                       m.node_bandwidth_GBps, ".2f") + [""]
    if not m.loaded:
        return "\n".join(lines) + "\n"
    lines.append("Measuring loaded latencies for the system (chase on core 0 of the node, a reader of the node's"
                 " memory on every other core)")
    lines.append("Memory node\tRate per core\tLatency (ns)\tBandwidth (GB/s)")
    for j, points in m.loaded.items():
        for rate, bw, lat in points:
            lines.append(f"{j:>11}\t{('unthrottled' if rate is None else f'{rate:g} GB/s'):>13}\t{lat:12.1f}\t{bw:16.2f}")
    return "\n".join(lines) + "\n"


def matrices_csv(m: Matrices) -> str:
    """Long form: ``measurement,from_node,to_node,rate_per_core_GBps,value,unit``."""
    rows = ["measurement,from_node,to_node,rate_per_core_GBps,value,unit"]
    for name, values, unit in (("idle_latency", m.latency_ns, "ns"), ("bandwidth_one_reader", m.bandwidth_GBps, "GB/s"),
                               ("bandwidth_all_cores", m.node_bandwidth_GBps, "GB/s")):
        for i, row in zip(m.nodes, values):
            for j, v in zip(m.nodes, row):
                rows.append(f"{name},{i},{j},,{v:.6g},{unit}")
    for j, points in m.loaded.items():
        for rate, bw, lat in points:
            r = "" if rate is None else f"{rate:g}"
            rows.append(f"loaded_latency,,{j},{r},{lat:.6g},ns")
            rows.append(f"loaded_bandwidth,,{j},{r},{bw:.6g},GB/s")
    return "\n".join(rows) + "\n"


def write_heatmap(path, m: Matrices) -> bool:
    """Heat maps of the latency and bandwidth matrices and the loaded-latency curves; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    import io

    from ..fileio import write_atomic

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for ax, values, title, fmt in ((axes[0], m.latency_ns, "idle latency (ns)", ".0f"),
                                   (axes[1], m.node_bandwidth_GBps, "every core reading (GB/s)", ".1f")):
        image = ax.imshow(values, cmap="viridis")
        ax.set_xticks(range(len(m.nodes)), [f"N{j}" for j in m.nodes])
        ax.set_yticks(range(len(m.nodes)), [f"N{i}" for i in m.nodes])
        ax.set_xlabel("memory on")
        ax.set_ylabel("thread on")
        ax.set_title(title)
        mean = statistics.fmean(v for row in values for v in row)
        for i, row in enumerate(values):
            for j, v in enumerate(row):
                ax.text(j, i, format(v, fmt), ha="center", va="center", color="white" if v < mean else "black")
        fig.colorbar(image, ax=ax, shrink=0.8)
    for j, points in m.loaded.items():
        axes[2].plot([bw for _, bw, _ in points], [lat for _, _, lat in points], "o-", label=f"N{j}")
    axes[2].set_xlabel("memory bandwidth (GB/s)")
    axes[2].set_ylabel("chase latency (ns)")
    axes[2].set_title("loaded latency")
    axes[2].legend()
    fig.suptitle(f"{m.board} ({m.board_hash}), simnuma {m.version}")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    write_atomic(path, buf.getvalue())
    return True


def matrices_json(m: Matrices) -> str:
    return json.dumps(m.to_dict(), indent=2) + "\n"
