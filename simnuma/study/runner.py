"""Running studies: one job per distinct case (and board baseline), through the one
:class:`~simnuma.runner.Runner`."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..analytic import analyze
from ..case import baseline_case
from ..runner import Job, ResultCache, Runner, default_workers
from ..topology import Topology
from .claims import evaluate_claim, metrics_from_result
from .records import Study, StudyCase

# ---------------------------------------------------------------- running

def _job(board, case, size: int, mode: str, seed: int) -> Job:
    return Job(board.topology, case, size, mode, seed, board=board.hash)


def plan_jobs(studies, mode: str = "steady", seed: int = 1, size_bytes: int | None = None) -> dict:
    """``{job key: Job}`` for every case of ``studies`` and each board's baseline, without duplicates."""
    jobs: dict[tuple, Job] = {}
    for study in studies:
        size = size_bytes or study.size_bytes
        for board in study.boards.values():
            job = _job(board, baseline_case(board.topology), size, mode, seed)
            jobs.setdefault(job.key, job)
        for case in study.cases:
            job = _job(study.boards[case.board], case.simulated, size, mode, seed)
            jobs.setdefault(job.key, job)
    return jobs


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
    analytic: dict = field(default_factory=dict)   # case key -> the analytic model's time in ns (docs/analytic.md)

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
        baselines[label] = results[_job(board, baseline_case(board.topology), size, mode, seed).key]["makespan_ns"]
    case_results, metrics = {}, {}
    for case in study.cases:
        data = results[_job(study.boards[case.board], case.simulated, size, mode, seed).key]
        case_results[case.key] = data
        metrics[case.key] = metrics_from_result(data, baselines[case.board])
    outcomes = [evaluate_claim(c, metrics) for c in study.claims]
    analytic = {case.key: analyze(study.boards[case.board].topology, case.foreground, case.background, size).makespan_ns
                for case in study.cases}
    return StudyResult(study, mode, seed, size, case_results, metrics, baselines, outcomes, analytic)


def run_studies(studies, workers: int | None = None, mode: str = "steady", seed: int = 1,
                size_bytes: int | None = None, on_done=None, cache_dir=None) -> tuple:
    """Simulate the cases of ``studies`` (each distinct case once); ``(StudyResults, run info)``.

    ``cache_dir``, if given, keeps every result on disk: a later run answers
    the same jobs from it (see :class:`~simnuma.runner.ResultCache`).
    """
    jobs = plan_jobs(studies, mode, seed, size_bytes)
    workers = workers or default_workers()
    start = time.perf_counter()
    with Runner(workers, ResultCache(cache_dir)) as runner:
        results = runner.run(jobs.values(), (lambda job, cached: on_done(job)) if on_done else None)
    wall_s = time.perf_counter() - start
    outcomes = [collect(s, results, mode, seed, size_bytes) for s in studies]
    info = run_info(studies, jobs, results, workers, wall_s)
    info["cached"] = runner.cached
    return outcomes, info


def run_info(studies, jobs: dict, results: dict, workers: int, wall_s: float) -> dict:
    """How the run went: counts, wall and CPU seconds, the CPU seconds per study, the costliest simulations."""
    cpu = {key: results[key]["cpu_s"] for key in jobs}
    per_study = {}
    for s in studies:
        wanted = {(s.boards[c.board].hash, c.simulated) for c in s.cases}
        keys = {key for key, job in jobs.items() if (job.board, job.case) in wanted}
        per_study[s.name] = sum(cpu[k] for k in keys)
    costliest = sorted(jobs.values(), key=lambda j: -cpu[j.key])[:8]
    return {
        "simulations": len(jobs),
        "cases": sum(len(s.cases) for s in studies),
        "workers": workers,
        "wall_s": wall_s,
        "cpu_s": sum(cpu.values()),
        "cpu_s_per_study": per_study,
        "costliest": [{"board": j.topology.name, "foreground": j.case.placement,
                       "background": " ".join(j.case.background), "cpu_s": cpu[j.key]} for j in costliest],
    }


def case_label(case: StudyCase, topology: Topology) -> str:
    """``0.0.w.1 1.0.w.0 [1,1 hops]``: the notation with each foreground thread's hop count."""
    hops = case.hops(topology)
    unit = "hop" if hops == (1,) else "hops"
    return f"{case.placement} [{','.join(map(str, hops))} {unit}]"
