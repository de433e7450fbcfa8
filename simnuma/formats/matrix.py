"""A board's latency and bandwidth matrices and loaded-latency curves, as Intel MLC measures a machine's.

All from simulations through the one runner and its cache (steady mode, 64 MiB arrays):

* **idle latency** (ns), row: the node a thread runs on (a node with cores: a memory-only node has
  a column and no row), column: the node its memory is on: the latency chase ``i.0.l.j`` alone,
  one line in flight over a scattered order of its lines (MLC's idle latency);
* **bandwidth** (GB/s): one streaming reader ``i.0.r.j``, and every core of node ``i`` reading node
  ``j`` at once (MLC's ``--bandwidth_matrix`` loads all of a node's cores);
* **loaded latency**, per memory node ``j``: the chase ``j.0.l.j`` (from the nearest node with cores
  where ``j`` has none) beside a reader of node ``j`` on
  every other core of the board, each a load generator paced to an equal share of an offered load
  of 0.1 to 1.5 times the node's memory peak (MLC's ``--loaded_latency`` varies an injection delay
  from idle to saturation): the node's memory bandwidth and the chase's latency at each point.  A
  curve ends at its first point past saturation (the chase ten times slower than at the lightest
  load): beyond it the memory gives no more and the latency only grows with the queues.
  Nodes that a symmetry of the board interchanges (a relabelling that keeps every node's and link's
  parameters and every route) have the same curve: it is simulated once, on the lowest of them.
"""
from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field

from ..case import explicit_case
from ..runner import Job, ResultCache, Runner, board_hash

__all__ = ["Matrices", "LOAD_SHARES", "node_orbits", "memory_peak_GBps", "compute_matrices", "mlc_text", "matrices_csv", "write_heatmap"]

LOAD_SHARES = (0.1, 0.25, 0.5, 0.75, 1.0, 1.5)   # offered load, as a share of the node's memory peak
SIZE_BYTES = 64 << 20


@dataclass
class Matrices:
    board: str
    board_hash: str
    nodes: tuple              # the columns: every node, the memory a thread reads
    latency_ns: list          # [i][j], a row per node with cores (``rows``)
    bandwidth_GBps: list      # one reader [i][j]
    node_bandwidth_GBps: list  # every core of node i reading node j
    loaded: dict              # node j -> [(offered load as a share of its peak, memory GB/s, latency ns)]
    seed: int
    version: str
    initiators: tuple = ()    # the rows, where they are not every node: memory-only nodes run no thread
    chasers: dict = field(default_factory=dict)   # node j -> the node whose core 0 chases j's loaded latency

    @property
    def rows(self) -> tuple:
        """The nodes of the rows: those a thread runs on."""
        return self.initiators or self.nodes

    def to_dict(self) -> dict:
        return {"board": self.board, "board_hash": self.board_hash, "nodes": list(self.nodes),
                "initiators": list(self.rows), "seed": self.seed,
                "version": self.version, "units": {"latency": "ns", "bandwidth": "GB/s (10^9 B/s)"},
                "idle_latency_ns": self.latency_ns, "bandwidth_GBps": {"one_reader": self.bandwidth_GBps,
                                                                      "all_cores": self.node_bandwidth_GBps},
                "loaded_latency": {str(j): [{"offered_share_of_peak": r, "memory_GBps": bw, "latency_ns": lat}
                                            for r, bw, lat in pts] for j, pts in self.loaded.items()}}


PARTS = ("latency", "bandwidth", "loaded")
MOST_SYMMETRIES = 5000   # relabellings of the board examined for nodes with the same loaded-latency curve


SATURATED = 10.0   # a chase this many times slower than at the lightest load: the memory is past saturation


def _chase_ns(result: dict) -> float:
    return next(t for t in result["threads"] if t["role"] == "foreground")["latency_ns"]["mean"]


def memory_peak_GBps(node) -> float:
    """A node's memory peak: its DRAM's (channels x width x transfers), a FIFO memory's bandwidth, or the
    most a measured curve reached."""
    if node.memory_model == "dram" and node.dram is not None:
        return node.dram.peak_GBps
    if node.memory_model == "curve" and node.curves:
        return max(c.max_GBps for c in node.curves)
    return node.memory_bandwidth_GBps or 1.0


def node_orbits(topology) -> dict:
    """``{node: the lowest node a symmetry of the board maps it to}``."""
    import networkx as nx
    from networkx.algorithms.isomorphism import GraphMatcher

    from ..model.symmetry import _preserves_board

    g = nx.Graph()
    g.add_nodes_from(topology.node_ids)
    g.add_edges_from((link.a, link.b) for link in topology.links)
    rep = {n: n for n in topology.node_ids}
    for k, sigma in enumerate(GraphMatcher(g, g).isomorphisms_iter()):
        if k >= MOST_SYMMETRIES:
            break
        if _preserves_board(topology, sigma):
            for a, b in sigma.items():
                low = min(rep[a], rep[b])
                rep[a] = rep[b] = low
    changed = True
    while changed:          # every node to the lowest of its orbit
        changed = False
        for n in rep:
            if rep[rep[n]] != rep[n]:
                rep[n] = rep[rep[n]]
                changed = True
    return rep


def _cases(topology, parts=PARTS, orbit: dict | None = None) -> dict:
    """Every simulation of ``parts``, by key; the loaded-latency curves on the lowest node of each orbit
    (``orbit``: :func:`node_orbits`, worked out here when not given)."""
    ids = topology.node_ids
    cases: dict = {}
    for i in topology.core_node_ids:
        cores = topology.node(i).cores
        for j in ids:
            cases[("latency", i, j)] = explicit_case([f"{i}.0.l.{j}"])
            if "bandwidth" in parts:
                cases[("one", i, j)] = explicit_case([f"{i}.0.r.{j}"])
                cases[("all", i, j)] = explicit_case([f"{i}.{c}.r.{j}" for c in range(cores)])
    if orbit is None:
        orbit = node_orbits(topology) if "loaded" in parts else {}
    for j in ids if "loaded" in parts else ():
        if orbit[j] != j:
            continue      # simulated on the lowest node of its orbit
        chaser = _chaser(topology, j)
        loaders = [(n, c) for n in ids for c in range(topology.node(n).cores) if (n, c) != (chaser, 0)]
        for share in LOAD_SHARES if loaders else ():
            rate = round(share * memory_peak_GBps(topology.node(j)) / len(loaders), 4)
            cases[("loaded", j, share)] = explicit_case([f"{chaser}.0.l.{j}"],
                                                        [f"{n}.{c}.r.{j}@{rate}GB/s" for n, c in loaders])
    return cases


def _chaser(topology, j: int) -> int:
    """The node whose core 0 chases node ``j``'s memory in its loaded-latency curve: ``j`` itself, or for a
    memory-only node the nearest node with cores (the lowest of those as near)."""
    if topology.node(j).cores:
        return j
    return min(topology.core_node_ids, key=lambda i: (topology.hops(i, j), i))


def count_jobs(topology, parts=PARTS) -> int:
    """The simulations :func:`compute_matrices` runs at most (a curve that saturates early runs fewer)."""
    return len(_cases(topology, parts))


def compute_matrices(topology, workers: int = 1, cache_dir=None, seed: int = 1, on_done=None,
                     parts=PARTS) -> Matrices:
    """The matrices of ``topology`` (see the module): the idle latency always, the bandwidth matrices and
    the loaded-latency curves where ``parts`` asks for them (empty otherwise)."""
    from .. import __version__

    orbit = node_orbits(topology) if "loaded" in parts else {}
    cases = _cases(topology, parts, orbit)
    digest = board_hash(topology)
    jobs = {key: Job(topology, case, SIZE_BYTES, "steady", seed, board=digest) for key, case in cases.items()}
    results: dict = {}
    with Runner(workers, ResultCache(cache_dir)) as runner:
        # the loaded points share by share, each node's curve ending at its first saturated point
        # (a chase behind a memory past saturation is slow to simulate and says nothing new)
        first = [job for key, job in jobs.items() if key[0] != "loaded" or key[2] == LOAD_SHARES[0]]
        results.update(runner.run(first, on_done))
        idle = {key[1]: _chase_ns(results[job.key]) for key, job in jobs.items()
                if key[0] == "loaded" and key[2] == LOAD_SHARES[0]}
        running = set(idle)
        for before, share in zip(LOAD_SHARES, LOAD_SHARES[1:]):
            running = {j for j in running if _chase_ns(results[jobs[("loaded", j, before)].key]) < SATURATED * idle[j]}
            results.update(runner.run([jobs[("loaded", j, share)] for j in sorted(running)], on_done))
    ids, rows = topology.node_ids, topology.core_node_ids

    def fg(key) -> list:
        return [t for t in results[jobs[key].key]["threads"] if t["role"] == "foreground"]

    latency = [[fg(("latency", i, j))[0]["latency_ns"]["mean"] for j in ids] for i in rows]
    one = every = []
    if "bandwidth" in parts:
        one = [[fg(("one", i, j))[0]["bandwidth_GBps"] for j in ids] for i in rows]
        every = [[sum(t["bandwidth_GBps"] for t in fg(("all", i, j))) for j in ids] for i in rows]
    loaded = {}
    for j in ids if "loaded" in parts else ():
        points = []
        for share in LOAD_SHARES:
            key = ("loaded", orbit[j], share)
            if key not in jobs or jobs[key].key not in results:
                continue     # a node alone on its board, or past its saturated point
            r = results[jobs[key].key]
            memory = next(m for m in r["memory"] if m["node"] == orbit[j])
            points.append((share, memory["bandwidth_GBps"], fg(key)[0]["latency_ns"]["mean"]))
        loaded[j] = points
    return Matrices(topology.name, digest, tuple(ids), latency, one, every, loaded, seed, __version__,
                    () if rows == ids else tuple(rows), {j: _chaser(topology, j) for j in loaded})


MLC_MB_PER_SEC = "Bandwidths are in MB/sec (1 MB/sec = 1,000,000 Bytes/sec)"
# simnuma's loaded latencies per memory node: a section MLC does not print (its own is one curve of the system)
LOADED_TITLE = "Loaded latencies per memory node"


def _grid(header: list, m: Matrices, values, fmt: str) -> list:
    """A grid as MLC prints one: its header lines, then a tab before each column and after each row's node (a row
    per node with cores, a column per node)."""
    lines = [*header, "\t\tNuma node", "Numa node\t" + "\t".join(f"{j:>7}" for j in m.nodes)]
    for i, row in zip(m.rows, values):
        lines.append(f"{i:>7}\t" + "\t".join(format(v, fmt).rjust(7) for v in row))
    return lines


def _MBps(rows) -> list:
    return [[1000.0 * v for v in row] for row in rows]


def mlc_text(m: Matrices) -> str:
    """The matrices laid out as Intel MLC prints them (tab-separated grids, a header per measurement, bandwidths
    in MB/sec of 10^6 bytes), so that ``simnuma import mlc`` and ``simnuma validate`` read them back."""
    lines = [f"simnuma {m.version}: board {m.board} ({m.board_hash}), seed {m.seed}; simulated, as Intel MLC"
             " measures a machine", ""]
    lines += _grid(["Measuring idle latencies (in ns)..."], m, m.latency_ns, ".1f") + [""]
    if m.bandwidth_GBps:
        lines += _grid(["Measuring Memory Bandwidths between nodes, one reader (simnuma: core 0 of the row's node)",
                        MLC_MB_PER_SEC, "Using Read-only traffic type"], m, _MBps(m.bandwidth_GBps), ".1f")
        lines += [""]
        lines += _grid(["Measuring Memory Bandwidths between nodes within system", MLC_MB_PER_SEC,
                        "Using every core of the row's node", "Using Read-only traffic type"],
                       m, _MBps(m.node_bandwidth_GBps), ".1f") + [""]
    if not m.loaded:
        return "\n".join(lines) + "\n"
    lines.append(f"{LOADED_TITLE} (simnuma: the chase on core 0 of the node, or of the nearest with cores, a reader of"
                 " the node's memory on every other core)")
    lines.append(MLC_MB_PER_SEC)
    lines.append("Memory node\tOffered (x peak)\tLatency (ns)\tBandwidth (MB/sec)")
    for j, points in m.loaded.items():
        for share, bw, lat in points:
            lines.append(f"{j:>11}\t{share:>16g}\t{lat:12.1f}\t{1000.0 * bw:18.1f}")
    return "\n".join(lines) + "\n"


CSV_COLUMNS = "measurement,from_node,to_node,offered_share_of_peak,value,unit,board,board_hash,seed,version"


def matrices_csv(m: Matrices) -> str:
    """Long form, a row per number (:data:`CSV_COLUMNS`): each names the board, its hash, the seed and the version
    it came from, as the studies' CSV do; a loaded-latency row's ``from_node`` is the node that chased."""
    trace = f"{m.board},{m.board_hash},{m.seed},{m.version}"
    rows = [CSV_COLUMNS]
    for name, values, unit in (("idle_latency", m.latency_ns, "ns"), ("bandwidth_one_reader", m.bandwidth_GBps, "GB/s"),
                               ("bandwidth_all_cores", m.node_bandwidth_GBps, "GB/s")):
        for i, row in zip(m.rows, values):
            for j, v in zip(m.nodes, row):
                rows.append(f"{name},{i},{j},,{v:.6g},{unit},{trace}")
    for j, points in m.loaded.items():
        chaser = m.chasers.get(j, "")
        for share, bw, lat in points:
            rows.append(f"loaded_latency,{chaser},{j},{share:g},{lat:.6g},ns,{trace}")
            rows.append(f"loaded_bandwidth,{chaser},{j},{share:g},{bw:.6g},GB/s,{trace}")
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
        ax.set_yticks(range(len(m.rows)), [f"N{i}" for i in m.rows])
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
    fig.suptitle(f"{m.board} ({m.board_hash}), seed {m.seed}, simnuma {m.version}")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    write_atomic(path, buf.getvalue())
    return True


def matrices_json(m: Matrices) -> str:
    return json.dumps(m.to_dict(), indent=2) + "\n"
