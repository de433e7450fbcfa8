"""Running a sweep: every configuration's cases as runner jobs, locally or on a Dask cluster, through one cache.

Each configuration (a board at one grid point) is a board of its own (its
parameters changed, its hash taken), so a job's key — the board's hash, the
case, size, mode, seed and simnuma's version and sources — names a point and
nothing else: the cache answers a point once computed, whichever sweep, board
label or grid produced it (an interrupted sweep resumes where it stopped, a
repeated one simulates nothing).

Locally the jobs go to the :class:`~simnuma.runner.Runner`'s process pool.
With a Dask client (``--dask ADDRESS``) they go to the cluster's workers
instead, as :func:`~simnuma.runner.simulate_job` calls: the same function on
the same jobs, so the same results point for point; finished points are
cached as they come back.  Before anything is submitted every worker is asked
for its simnuma's ``result_version()``: a worker without simnuma, or with
other sources, would cache its results under this one's key (or never
answer), so the sweep is refused in one line naming them; a worker that
joins later and differs stops the sweep when its first result comes back,
before that result is cached.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

from .. import __version__
from ..errors import SimnumaError
from ..runner import Job, ResultCache, Runner, board_hash, result_version, simulate_job
from .workloads import aggregates, baseline, case_metrics, plan_cases

__all__ = ["SweepRun", "plan", "run_sweep"]


@dataclass
class SweepRun:
    """A finished sweep: one row per shown case (``points``) and one per configuration (``configurations``)."""

    sweep: object
    points: list
    configurations: list
    info: dict


def plan(sweep, notes: list | None = None) -> list:
    """``[(config, topology, hash, [Planned...]), ...]``: every configuration with its cases and baseline.  A named
    set that plans no case on a configuration's board (crossfire where no link joins two nodes with cores) is
    added to ``notes``, once per board and set."""
    out = []
    for config in sweep.configs():
        topology = config.board.topology.with_parameters(dict(config.values)) if config.values \
            else config.board.topology
        planned = [baseline(topology)]
        for entry in sweep.cases:
            cases = plan_cases(entry, topology)
            if not cases and notes is not None:
                note = (f"{config.board.label}: the set {entry.label or entry.kind} plans no case on it (no pair"
                        " of nodes with cores it applies to); its aggregates are empty there")
                if note not in notes:
                    notes.append(note)
            planned += cases
        out.append((config, topology, board_hash(topology), planned))
    return out


def _jobs(sweep, plans) -> dict:
    jobs: dict = {}
    for _, topology, digest, planned in plans:
        for p in planned:
            job = Job(topology, p.case, sweep.size_bytes, sweep.mode, sweep.seed, board=digest)
            jobs.setdefault(job.key, job)
    return jobs


def prefilter(sweep, plans, top: int) -> tuple:
    """``(plans to simulate, analytic configuration rows, analytic point rows)``: every configuration solved by
    the analytic model (``docs/analytic.md``) and ranked; the ``top`` best are simulated, with any whose first
    ranking aggregate is within the analytic model's known error (10% of the times, :func:`within_error`) of the
    worst of them."""
    from ..analytic import AGREES, analyze
    from .output import ranked

    solved = []   # (configuration row, its plan, its point rows)
    for config, topology, digest, planned in plans:
        results = [analyze(topology, p.case.threads, p.case.background, sweep.size_bytes).to_dict() for p in planned]
        p_rows, c_row = _rows(sweep, config, topology, digest, planned, results, "analytic")
        solved.append((c_row, (config, topology, digest, planned), p_rows))
    order = ranked([r for r, _, _ in solved], sweep.rank)
    metric = sweep.rank[0]
    keep = order[:top]
    kept = {id(r) for r in keep}
    if keep and keep[-1].get(metric) is not None:
        edge = keep[-1][metric]
        kept |= {id(r) for r in order if r.get(metric) is not None and within_error(metric, r[metric], edge, AGREES)}
    chosen = [plan_ for r, plan_, _ in solved if id(r) in kept]
    dropped = [r for r, _, _ in solved if id(r) not in kept]
    dropped_points = [row for r, _, p_rows in solved if id(r) not in kept for row in p_rows]
    return chosen, dropped, dropped_points


# aggregates that are a ratio of two times less one (0: no difference): the analytic model's error is a share of
# the times, so it is a share of the ratio, not of the aggregate, which may be near zero
RATIO_AGGREGATES = ("local_latency_spread", "crossfire_penalty")


def within_error(metric: str, value: float, edge: float, error: float) -> bool:
    """Whether ``value`` of aggregate ``metric`` is within the analytic model's ``error`` (a share of the times it
    comes from) of ``edge``: for a ratio less one, of the ratio (``1 + edge``); else of the value itself."""
    scale = abs(1.0 + edge) if metric in RATIO_AGGREGATES else abs(edge)
    return abs(value - edge) <= error * scale


def run_sweep(sweep, workers: int = 1, cache_dir=None, dask=None, on_done=None, prefilter_top: int | None = None,
              on_start=None) -> SweepRun:
    """Simulate every point of ``sweep``; ``dask`` is a ``distributed.Client`` or a scheduler address; with
    ``prefilter_top``, only the configurations the analytic model ranks best are simulated (:func:`prefilter`),
    the others keep their analytic numbers (``source: analytic`` in the tables).  ``on_start(n)`` is told the
    number of distinct simulations once they are planned, ``on_done(cached)`` after each."""
    notes: list = []
    plans = plan(sweep, notes)
    analytic_configs: list = []
    analytic_points: list = []
    if prefilter_top is not None:
        plans, analytic_configs, analytic_points = prefilter(sweep, plans, prefilter_top)
    jobs = _jobs(sweep, plans)
    if on_start is not None:
        on_start(len(jobs))
    cache = ResultCache(cache_dir)
    start = time.perf_counter()
    if dask is None:
        with Runner(workers, cache) as runner:
            results = runner.run(jobs.values(), (lambda job, cached: on_done(cached)) if on_done else None,
                                 keep_deadlocks=True)
        simulated, cached = runner.simulated, runner.cached
    else:
        results, simulated, cached = _run_on_dask(dask, jobs, cache, on_done)
    wall_s = time.perf_counter() - start
    points, configurations = _tables(sweep, plans, results)
    points += analytic_points
    configurations += analytic_configs
    info_extra = {"analytic_only": len(analytic_configs), "prefilter_top": prefilter_top, "notes": notes}
    info = {"simnuma": __version__, "result_version": result_version(), "points": len(points),
            "configurations": len(configurations), "simulations": len(jobs), "simulated": simulated,
            "cached": cached, "wall_s": wall_s, "cpu_s": sum(results[k].get("cpu_s", 0.0) for k in jobs),
            "workers": "dask" if dask is not None else workers, "seed": sweep.seed, "mode": sweep.mode,
            "size_bytes": sweep.size_bytes, **info_extra}
    return SweepRun(sweep, points, configurations, info)


def _run_on_dask(dask, jobs: dict, cache: ResultCache, on_done) -> tuple:
    """Results of ``jobs`` from the cache or from a Dask cluster (``distributed``)."""
    from distributed import Client, as_completed

    client = dask if isinstance(dask, Client) else Client(dask)
    results, todo = {}, []
    for key, job in jobs.items():
        hit = cache.get(key)
        if hit is None:
            todo.append(job)
        else:
            results[key] = hit
            if on_done:
                on_done(True)
    futures: dict = {}
    try:
        if todo:
            _check_workers(client)
        order = sorted(todo, key=lambda j: -j.cost)     # the costliest first (and first in priority)
        futures = {client.submit(_simulate_on_worker, job, pure=False, priority=int(job.cost)): job for job in order}
        for future in as_completed(futures):
            job = futures[future]
            worker, version, result = future.result()
            if version != result_version():     # a worker that joined after the check
                raise SimnumaError(f"--dask: worker {worker} {_runs(version)}, not this simnuma ({result_version()});"
                                   f" {_INSTALL}")
            cache.put(job.key, result)
            results[job.key] = result
            if on_done:
                on_done(False)
    except BaseException:
        with contextlib.suppress(Exception):
            client.cancel(list(futures))     # what is still queued is of no use now
        raise
    finally:
        if client is not dask:
            client.close()
    return results, len(todo), len(jobs) - len(todo)


_INSTALL = "install this simnuma on every worker (results are cached under its version), or run without --dask"


def _worker_version() -> str:
    """The ``result_version()`` of the simnuma a worker runs (called there by ``client.run``)."""
    return result_version()


def _simulate_on_worker(job: Job) -> tuple:
    """``(worker address, its result_version(), the result)`` of ``job``, run on a Dask worker."""
    from distributed import get_worker

    return get_worker().address, result_version(), simulate_job(job)


def _runs(version) -> str:
    """What a worker answered, as words: ``runs simnuma VERSION`` or ``cannot run simnuma (ERROR)``."""
    if isinstance(version, BaseException):
        text = (str(version).splitlines() or [""])[0]
        if type(version) is not Exception:     # distributed wraps what it could not unpickle in a bare Exception
            text = f"{type(version).__name__}: {text}" if text else type(version).__name__
        return f"cannot run simnuma ({text})"
    return f"runs simnuma {version}"


def _check_workers(client) -> None:
    """Refuse (SimnumaError, one line) unless every worker of ``client``'s cluster imports simnuma with this
    one's ``result_version()``: naming each that differs and what it runs."""
    mine = result_version()
    answers = client.run(_worker_version, on_error="return")
    differ = {worker: answer for worker, answer in sorted(answers.items()) if answer != mine}
    if differ:
        raise SimnumaError(f"--dask: {len(differ)} of {len(answers)} workers differ from this simnuma ({mine}): "
                           + "; ".join(f"{worker} {_runs(answer)}" for worker, answer in differ.items())
                           + f"; {_INSTALL}")


def _tables(sweep, plans, results) -> tuple:
    points, configurations = [], []
    for config, topology, digest, planned in plans:
        outcome = [results[Job(topology, p.case, sweep.size_bytes, sweep.mode, sweep.seed, board=digest).key]
                   for p in planned]
        p_rows, c_row = _rows(sweep, config, topology, digest, planned, outcome, "simulation")
        points += p_rows
        configurations.append(c_row)
    return points, configurations


def _rows(sweep, config, topology, digest, planned, outcome: list, source: str) -> tuple:
    """The point rows and the configuration row of one configuration, from a result per planned case."""
    common = {"board": config.board.label, "board_hash": digest, "matches": " ".join(config.board.matches),
              "wiring": " ".join(f"{link.a}-{link.b}" + (f"x{link.count}" if link.count > 1 else "")
                                 + (f":{link.kind}" if link.kind else "") for link in topology.links)}
    common.update({path: str(value) for path, value in config.values})
    baseline_ns = outcome[0]["threads"][0]["time_ns"] if "threads" in outcome[0] else None
    metrics, points, stuck = [], [], []
    for p, result in zip(planned, outcome):
        m = case_metrics(result, baseline_ns)
        metrics.append(m)
        if "deadlock" in result:
            stuck.append(f"{p.case.name}: {result['deadlock']}")
        if p.shown:
            row = dict(common)
            row.update({"workload": p.entry, "case": p.case.name})
            row.update({name: m[name] for name in sweep.metrics})
            if "deadlock" in result:
                row["deadlock"] = result["deadlock"]
            row.update({"source": source, "seed": sweep.seed, "mode": sweep.mode if source == "simulation" else "analytic",
                        "size_bytes": sweep.size_bytes, "version": __version__})
            points.append(row)
    row = dict(common)
    row.update(aggregates(topology, planned, metrics))
    row.update({"source": source, "baseline_ns": baseline_ns, "seed": sweep.seed, "version": __version__})
    if stuck:
        row["deadlock"] = stuck[0]   # the first; how many is the aggregate "deadlocks"
    return points, row
