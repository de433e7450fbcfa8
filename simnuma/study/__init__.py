"""Studies: sets of simulated cases on one or more boards, and the claims they test.

A study is a YAML file (bundled ones live in ``experiments/``, see
:mod:`simnuma.bundled`); the language is documented in ``docs/studies.md``.

* :mod:`.notation`: the study language's names (the case notation itself is :mod:`simnuma.case`);
* :mod:`.records`: what a validated study holds (boards, cases placed on them, claims);
* :mod:`.finding`: a study file by path, or a bundled study by name;
* :mod:`.reader`: reading and validating a study file, errors as ``file:line: key.path: message``;
* :mod:`.claims`: the claim kinds, how each is read and checked;
* :mod:`.runner`: the jobs of several studies, simulated once each by :class:`simnuma.runner.Runner`;
* :mod:`.output`, :mod:`.report`, :mod:`.figures`: the tables, ``REPORT.md`` and figures that
  ``simnuma reproduce`` writes.
"""
from ..errors import StudyError
from .claims import CLAIM_KINDS, CaseMetrics, ClaimOutcome, evaluate_claim, metrics_from_result
from .notation import (ALL_GROUP, DEFAULT_SIZE_BYTES, LOADS_GBps, MATRIX_GROUP, METRIC_UNITS, METRICS, NOISE_PERCENT,
                       PLOT_KINDS, STUDY_FORMAT, SUBSCRIPTIONS)
from .finding import bundled_studies
from .reader import load_study, parse_study
from .records import Board, Claim, Operand, Study, StudyCase, board_hash, parameters_from
from .runner import StudyResult, case_label, collect, plan_jobs, run_info, run_studies

__all__ = [
    "ALL_GROUP", "CLAIM_KINDS", "DEFAULT_SIZE_BYTES", "LOADS_GBps", "MATRIX_GROUP", "METRICS", "METRIC_UNITS",
    "NOISE_PERCENT", "PLOT_KINDS", "STUDY_FORMAT", "SUBSCRIPTIONS", "Board", "CaseMetrics", "StudyCase",
    "Claim", "ClaimOutcome", "Operand", "Study", "StudyError", "StudyResult",
    "board_hash", "bundled_studies", "case_label", "collect", "evaluate_claim",
    "load_study", "metrics_from_result", "parameters_from", "parse_study", "plan_jobs", "run_info",
    "run_studies",
]
