"""Calibration and validation: fitting a board's free parameters to measured cases, then predicting the rest.

A calibration fits named free parameters to the measurements of chosen cases by bounded
least squares on relative residuals, predicting every measurement with the model itself in
steady mode, and reports for every parameter its interval, its correlations and whether the
measurements identify it (``docs/calibration.md``).

* :mod:`.parameters`: the free parameters (what, bounds, which memory models have them) and the fit's settings;
* :mod:`.cases`: the simulated cases behind the measurements, and their predicted values;
* :mod:`.search`: evaluating residuals through :class:`simnuma.runner.Runner` (its process pool and result
  cache), and the search over continuous and integer values;
* :mod:`.rows`: a measurement beside the model's value (:class:`FitRow` and the validation's rows share it);
* :mod:`.results`: what a calibration returns (:class:`Calibration`) and its tables;
* :mod:`.verdicts`: intervals, correlations and whether each parameter is identified;
* :mod:`.fit`: :func:`calibrate` and :func:`predict`, the cases they choose;
* :mod:`.boardfile`: the calibrated board written back as YAML, and its calibration record;
* :mod:`.validate`: :func:`validate`, predicting the measured cases a calibration did not use, and its report.
"""
from .boardfile import calibrated_yaml, read_calibration_record
from .cases import chase_pages_problem, check_measurements, is_peak
from .fit import calibrate, choose_cases, predict
from .parameters import (
                         DEFAULT_FIT,
                         DEFAULT_SIZE_BYTES,
                         DIFF_STEP,
                         MAX_FIT_EVALUATIONS,
                         PARAMETERS,
                         RECORD_PREFIX,
                         FreeParameter,
                         board_memory_models,
                         default_fit,
                         parse_fit,
)
from .results import Calibration, FitRow, ParameterFit

__all__ = [
    "DEFAULT_FIT", "DEFAULT_SIZE_BYTES", "DIFF_STEP", "MAX_FIT_EVALUATIONS", "PARAMETERS", "RECORD_PREFIX",
    "Calibration", "FitRow", "FreeParameter", "ParameterFit", "board_memory_models", "calibrate", "calibrated_yaml",
    "chase_pages_problem", "check_measurements", "choose_cases", "default_fit", "is_peak", "parse_fit", "predict",
    "read_calibration_record",
]
