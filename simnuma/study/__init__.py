"""Studies: sets of simulated cases on one or more boards, and the claims they test.

A study is a YAML file (bundled ones live in ``experiments/``, see
:mod:`simnuma.bundled`); the language is documented in ``docs/studies.md``.

* :mod:`.notation`: the case notation ``FOREGROUND [+ BACKGROUND]``, loads and subscriptions;
* :mod:`.records`: what a validated study holds (boards, cases, claims);
* :mod:`.reader`: reading and validating a study file, errors as ``file:line: key.path: message``;
* :mod:`.claims`: the claim kinds, how each is read and checked;
* :mod:`.runner`: the jobs of several studies, simulated once each on a process pool;
* :mod:`.output`, :mod:`.report`, :mod:`.figures`: the tables, ``REPORT.md`` and figures that
  ``simnuma reproduce`` writes.
"""
from ..errors import StudyError
from .claims import CLAIM_KINDS, CaseMetrics, ClaimOutcome, evaluate_claim, metrics_from_result
from .notation import (ALL_GROUP, DEFAULT_SIZE_BYTES, LOADS_GBps, MATRIX_GROUP, METRIC_UNITS, METRICS, NOISE_PERCENT,
                       PLOT_KINDS, STUDY_FORMAT, SUBSCRIPTIONS, CaseText, background_threads, parse_case)
from .reader import bundled_studies, load_study, parse_study
from .records import Board, Case, Claim, Operand, Study, board_hash, parameters_from
from .runner import (Job, StudyResult, baseline_case, case_label, collect, default_workers, plan_jobs, run_info,
                     run_jobs, run_studies, simulate_job)

__all__ = [
    "ALL_GROUP", "CLAIM_KINDS", "DEFAULT_SIZE_BYTES", "LOADS_GBps", "MATRIX_GROUP", "METRICS", "METRIC_UNITS",
    "NOISE_PERCENT", "PLOT_KINDS", "STUDY_FORMAT", "SUBSCRIPTIONS", "Board", "Case", "CaseMetrics", "CaseText",
    "Claim", "ClaimOutcome", "Job", "Operand", "Study", "StudyError", "StudyResult", "background_threads",
    "baseline_case", "board_hash", "bundled_studies", "case_label", "collect", "default_workers", "evaluate_claim",
    "load_study", "metrics_from_result", "parameters_from", "parse_case", "parse_study", "plan_jobs", "run_info",
    "run_jobs", "run_studies", "simulate_job",
]
