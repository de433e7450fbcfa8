"""Running studies: one job per distinct case (and board baseline), simulated once each, on a
process pool."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass

from ..topology import Topology
from .claims import evaluate_claim, metrics_from_result
from .records import Case, Study

# ---------------------------------------------------------------- running

@dataclass(frozen=True)
class Job:
    """One simulation: a board, threads, array size, mode and seed."""

    topology: Topology
    board_hash: str
    foreground: tuple
    background: tuple
    size_bytes: int
    mode: str
    seed: int

    @property
    def key(self) -> tuple:
        return (self.board_hash, self.foreground, self.background, self.size_bytes, self.mode, self.seed)

    @property
    def cost(self) -> float:
        """A rough relative cost, to start the longest simulations first."""
        return (2 * len(self.foreground) + len(self.background)) * len(self.topology.nodes)


def simulate_job(job: Job) -> dict:
    """Run one job; the compact result (no board parameters) and the seconds it took."""
    from ..model import simulate

    start, start_cpu = time.perf_counter(), time.process_time()
    result = simulate(job.topology, list(job.foreground), list(job.background), size_bytes=job.size_bytes,
                      mode=job.mode, seed=job.seed, baseline=False).to_dict()
    result.pop("parameters", None)
    result["queues"] = result["queues"][:6]
    result["wall_s"] = time.perf_counter() - start
    result["cpu_s"] = time.process_time() - start_cpu
    return result


def baseline_case(topology: Topology) -> tuple:
    """The foreground of the reference run: core 0 of the first node reading its own memory."""
    first = topology.node_ids[0]
    return (f"{first}.0.r.{first}",)


def plan_jobs(studies, mode: str = "steady", seed: int = 1, size_bytes: int | None = None) -> dict:
    """``{job key: Job}`` for every case of ``studies`` and each board's 0.0.r.0, without duplicates."""
    jobs = {}
    for study in studies:
        size = size_bytes or study.size_bytes
        for board in study.boards.values():
            job = Job(board.topology, board.hash, baseline_case(board.topology), (), size, mode, seed)
            jobs.setdefault(job.key, job)
        for case in study.cases:
            board = study.boards[case.board]
            job = Job(board.topology, board.hash, case.foreground, case.background, size, mode, seed)
            jobs.setdefault(job.key, job)
    return jobs


def run_jobs(jobs: dict, workers: int = 1, on_done=None) -> dict:
    """Simulate every job (on ``workers`` processes when more than one); ``{key: result dict}``."""
    order = sorted(jobs.values(), key=lambda j: -j.cost)
    results = {}
    if workers <= 1 or len(order) <= 1:
        for job in order:
            results[job.key] = simulate_job(job)
            if on_done:
                on_done(job)
        return results
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=min(workers, len(order))) as pool:
        futures = {pool.submit(simulate_job, job): job for job in order}
        try:
            for future in as_completed(futures):
                job = futures[future]
                results[job.key] = future.result()
                if on_done:
                    on_done(job)
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return results


@dataclass
class StudyResult:
    """A study's cases with their simulated numbers, and its claims checked."""

    study: Study
    mode: str
    seed: int
    size_bytes: int
    results: dict           # case key -> compact result dict
    metrics: dict           # case key -> CaseMetrics
    baselines: dict         # board label -> 0.0.r.0 time in ns
    outcomes: list          # ClaimOutcome

    @property
    def passed(self) -> int:
        return sum(o.passed for o in self.outcomes)

    @property
    def failed(self) -> int:
        return len(self.outcomes) - self.passed


def collect(study: Study, results: dict, mode: str, seed: int, size_bytes: int | None = None) -> StudyResult:
    """Attach simulated results (``{job key: result}``) to a study and check its claims."""
    size = size_bytes or study.size_bytes
    baselines = {}
    for label, board in study.boards.items():
        key = (board.hash, baseline_case(board.topology), (), size, mode, seed)
        baselines[label] = results[key]["makespan_ns"]
    case_results, metrics = {}, {}
    for case in study.cases:
        board = study.boards[case.board]
        data = results[(board.hash, case.foreground, case.background, size, mode, seed)]
        case_results[case.key] = data
        metrics[case.key] = metrics_from_result(data, baselines[case.board])
    outcomes = [evaluate_claim(c, metrics) for c in study.claims]
    return StudyResult(study, mode, seed, size, case_results, metrics, baselines, outcomes)


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def run_studies(studies, workers: int | None = None, mode: str = "steady", seed: int = 1,
                size_bytes: int | None = None, on_done=None) -> tuple:
    """Simulate the cases of ``studies`` (each distinct case once); ``(StudyResults, run info)``."""
    jobs = plan_jobs(studies, mode, seed, size_bytes)
    start = time.perf_counter()
    results = run_jobs(jobs, workers or default_workers(), on_done)
    wall_s = time.perf_counter() - start
    outcomes = [collect(s, results, mode, seed, size_bytes) for s in studies]
    return outcomes, run_info(studies, jobs, results, workers or default_workers(), wall_s)


def run_info(studies, jobs: dict, results: dict, workers: int, wall_s: float) -> dict:
    """How the run went: counts, wall and CPU seconds, the CPU seconds per study, the costliest simulations."""
    cpu = {key: results[key]["cpu_s"] for key in jobs}
    per_study = {}
    for s in studies:
        keys = {k for k, j in jobs.items()
                if any(j.board_hash == s.boards[c.board].hash and j.foreground == c.foreground
                       and j.background == c.background for c in s.cases)}
        per_study[s.name] = sum(cpu[k] for k in keys)
    costliest = sorted(jobs.values(), key=lambda j: -cpu[j.key])[:8]
    return {
        "simulations": len(jobs),
        "cases": sum(len(s.cases) for s in studies),
        "workers": workers,
        "wall_s": wall_s,
        "cpu_s": sum(cpu.values()),
        "cpu_s_per_study": per_study,
        "costliest": [{"board": j.topology.name, "foreground": " ".join(j.foreground),
                       "background": " ".join(j.background), "cpu_s": cpu[j.key]} for j in costliest],
    }


def case_label(case: Case, topology: Topology) -> str:
    """``0.0.w.1 1.0.w.0 [1,1 hops]``: the notation with each foreground thread's hop count."""
    hops = case.hops(topology)
    unit = "hop" if hops == (1,) else "hops"
    return f"{case.placement} [{','.join(map(str, hops))} {unit}]"
