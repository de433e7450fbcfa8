"""Whether the measurements identify each parameter: intervals from the Jacobian, correlations,
bounds, and the ranges of integers."""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from .parameters import (
    CONFIDENCE,
    DIFF_STEP,
    NEGLIGIBLE_CHANGE,
    NOISE_FLOOR,
    NOISE_PRIOR_DOF,
    STRONG_CORRELATION,
    UNIDENTIFIED_WIDTH,
    _round,
)
from .results import _NO_EFFECT
from .search import _Fit, _Search


@dataclass(frozen=True)
class _Verdict:
    """Whether the measurements identify one parameter, and how well."""

    identified: bool
    sigma: float | None = None     # one standard deviation, in the parameter's unit
    interval: tuple | None = None  # 95%, in the parameter's unit (integers: the values within the 95% level)
    reason: str = ""               # why not identified
    width: float = math.inf        # the interval's share of the range: which unidentified parameter goes first
    correlations: dict = field(default_factory=dict, compare=False)


def _noise(search: _Search, fit: _Fit) -> tuple:
    """``(s2, q)``: the variance of one relative residual and the two-sided 95% quantile that goes with it.

    The variance pools the fit's residuals (over its degrees of freedom:
    independent measurements less free parameters, at least one) with the
    model's own precision (1% per prediction) weighted as
    :data:`NOISE_PRIOR_DOF` degrees of freedom, and is floored at that
    precision; Student's t quantile on the pooled degrees of freedom when the
    residuals raise it above the floor, the normal one (1.96) when the floor
    sets it.  Pooling keeps a fit with one or two spare measurements from an
    interval as wide as Student's t on one degree of freedom (12.7) would
    make it, when its residuals are about the model's precision.
    """
    from scipy.stats import norm, t

    dof = max(search.ev.independent - len(search.continuous) - len(search.integers), 1)
    pooled_dof = dof + NOISE_PRIOR_DOF
    variance = (fit.cost + NOISE_PRIOR_DOF * NOISE_FLOOR ** 2) / pooled_dof
    if variance > NOISE_FLOOR ** 2:
        return variance, float(t.ppf(0.5 + CONFIDENCE / 2, pooled_dof))
    return NOISE_FLOOR ** 2, float(norm.ppf(0.5 + CONFIDENCE / 2))


def _classify(search: _Search, fit: _Fit) -> dict:
    """``{name: _Verdict}`` of the continuous parameters being fitted, from the Jacobian at ``fit``.

    Not identified: a parameter no prediction depends on; one whose 95%
    interval spans more than :data:`UNIDENTIFIED_WIDTH` of its range; one
    correlated with another beyond :data:`STRONG_CORRELATION` (only their
    combination is determined).  Correlations are at the fitted integers.
    """
    params = search.continuous
    if not params:
        return {}
    J = fit.jacobian
    m, n = J.shape
    unused = [float(np.max(np.abs(J[:, j]))) * DIFF_STEP < NEGLIGIBLE_CHANGE for j in range(n)]
    s2, q = _noise(search, fit)
    gradient = J.T @ fit.residuals    # half the cost's slope in the scaled coordinates
    active = [j for j in range(n) if not unused[j]]
    sigma_u = np.full(n, np.inf)
    corr = np.zeros((n, n))
    reach = {j: (fit.u[j], fit.u[j], "") for j in range(n)}   # how far trade-offs the data cannot see move it
    if active:
        Ja = J[:, active]
        cov = s2 * np.linalg.pinv(Ja.T @ Ja, rcond=1e-10)
        diag = np.clip(np.diag(cov), 0.0, None)
        sigma_u[active] = np.sqrt(diag)
        with np.errstate(invalid="ignore", divide="ignore"):
            c = np.nan_to_num(cov / np.sqrt(np.outer(diag, diag)), nan=0.0)
        corr[np.ix_(active, active)] = np.clip(c, -1.0, 1.0)
        rank = np.linalg.matrix_rank(Ja, tol=1e-6 * max(1.0, float(np.abs(Ja).max())))
        for null in np.linalg.svd(Ja)[2][rank:]:   # every direction the data cannot see (pinv leaves them out)
            _trade_off(reach, active, null, fit.u, params)
    out = {}
    for j, p in enumerate(params):
        span = float(search.span[j])
        correlations = {params[k].name: float(corr[j, k]) for k in active if k != j}
        if unused[j]:
            out[p.name] = _Verdict(False, reason=_NO_EFFECT)
            continue
        low_reach, high_reach, partner = reach[j]
        if high_reach - low_reach > UNIDENTIFIED_WIDTH:
            out[p.name] = _Verdict(False, reason=f"it trades off exactly with {partner}: only a combination is"
                                                 " determined", correlations=correlations)
            continue
        lo_u = max(0.0, min(fit.u[j] - q * sigma_u[j], low_reach))
        hi_u = min(1.0, max(fit.u[j] + q * sigma_u[j], high_reach))
        interval = (p.low + lo_u * span, p.low + hi_u * span)
        width = hi_u - lo_u
        strongest = max(correlations, key=lambda k: abs(correlations[k]), default=None)
        verdict = _Verdict(True, float(sigma_u[j] * span), interval, "", width, correlations)
        # at a bound the cost rises inwards: the measurements want it beyond, and its interval is one-sided
        pushing = _at_bound(fit.u[j], float(gradient[j]))
        if strongest is not None and abs(correlations[strongest]) > STRONG_CORRELATION:
            verdict = replace(verdict, identified=False,
                              reason=f"r = {correlations[strongest]:+.2f} with {strongest}: only a combination"
                                     " of the two is determined")
        elif pushing:
            verdict = replace(verdict, reason=f"the measurements want it {pushing} its bound")
        elif width > UNIDENTIFIED_WIDTH:
            text = f"{_round(interval[0], 3)}..{_round(interval[1], 3)}{' ' + p.unit if p.unit else ''}"
            verdict = replace(verdict, identified=False,
                              reason=f"its 95% interval {text} spans {100 * width:.0f}% of its range")
        out[p.name] = verdict
    return out


def _trade_off(reach: dict, columns: list, null, u, params) -> None:
    """Widen ``reach`` (scaled ``(low, high, partner)`` per parameter) by how far ``null``, a direction of the
    parameters (``columns``) that moves no prediction, can carry each of them before another leaves its range."""
    steps = []
    for sign in (1.0, -1.0):   # the longest step each way that keeps every parameter within [0, 1]
        t = math.inf
        for k, j in enumerate(columns):
            v = sign * float(null[k])
            if abs(v) > 1e-12:
                t = min(t, (1.0 - u[j]) / v if v > 0 else -u[j] / v)
        steps.append(0.0 if not math.isfinite(t) else max(t, 0.0))
    for k, j in enumerate(columns):
        moved = (u[j] + steps[0] * float(null[k]), u[j] - steps[1] * float(null[k]))
        low, high, partner = reach[j]
        if min(moved) < low or max(moved) > high:
            others = [(abs(float(null[i])), params[c].name) for i, c in enumerate(columns) if c != j]
            partner = max(others)[1] if others else partner
        reach[j] = (min(low, *moved), max(high, *moved), partner)


def _at_bound(u: float, gradient: float) -> str:
    """``below``/``above`` when a scaled value sits on its lower/upper bound with the cost rising inwards."""
    if u <= 0.01 and gradient > 0:
        return "below"
    if u >= 0.99 and gradient < 0:
        return "above"
    return ""


def _integer_verdicts(search: _Search, best: _Fit) -> dict:
    """``{name: _Verdict}`` of the integers: the values whose best known cost is within the 95% level.

    The level is the profile's: a cost within q² times the residual variance
    of the best, q the quantile of the intervals (1.96, so 3.84, when the
    model's precision sets the variance; Student's t otherwise).  The costs known are those of the
    combinations screened, followed by chord steps or refitted (an upper
    bound of each one's best fit).  An integer whose values within the level
    span more than half its range is not identified, unless it sits on a
    bound with its cost rising inwards (the measurements want it beyond).
    """
    s2, q = _noise(search, best)
    threshold = best.cost + q * q * s2
    free = len(search.continuous) + len(search.integers)
    out = {}
    for k, p in enumerate(search.integers):
        costs: dict[int, float] = {}   # the integer's value -> the least cost seen at it
        for key, cost in search.costs.items():
            costs[key[k]] = min(cost, costs.get(key[k], math.inf))
        value = int(best.ints[p.name])
        good = [v for v, c in costs.items() if c <= threshold] + [value]
        low, high = min(good), max(good)
        known = sorted(costs.values())
        inward = costs.get(value - 1 if value == p.high else value + 1, math.inf)
        # at a bound, the measurements want it beyond only if the value inside it is worse beyond the 95% level
        pushing = ("above" if value == p.high else "below") if value in (p.low, p.high) and inward > threshold else ""
        if len(known) > 1 and known[-1] - known[0] <= 1e-9 * max(known[-1], 1e-12):
            out[p.name] = _Verdict(False, reason=_NO_EFFECT)
        elif pushing:
            out[p.name] = _Verdict(True, interval=(low, high), reason=f"the measurements want it {pushing} its bound",
                                   width=(high - low + 1) / (p.high - p.low + 1))
        elif free > search.ev.independent:   # its other values were costed with the rest as screened, not refitted
            out[p.name] = _Verdict(False, interval=(low, high),
                                   reason=f"{free} free parameters for {search.ev.independent} independent"
                                          " measurement(s): with the others refitted, other values may fit as well")
        elif high - low + 1 > max(2, (p.high - p.low + 1) // 2):
            out[p.name] = _Verdict(False, interval=(low, high),
                                   reason=f"values {low}..{high} fit within the 95% level: most of its range"
                                          f" {int(p.low)}..{int(p.high)}")
        else:
            out[p.name] = _Verdict(True, interval=(low, high), width=(high - low + 1) / (p.high - p.low + 1))
    return out


def _correlation_matrix(search: _Search, best: _Fit, int_verdicts: dict) -> tuple:
    """``(names, matrix)`` of the correlations between the fitted parameters.

    From the model linearised in every fitted parameter at the fit: the
    Jacobian in the continuous ones, and in each identified integer a
    central difference over its two neighbours (simulated at the fit).  One
    linearisation for the whole matrix, so that it is a correlation matrix
    (positive semi-definite: a covariance built from it and the intervals
    can be sampled).  The continuous parameters' intervals are taken at the
    fitted integers; an integer's correlations are descriptive, as an
    integer is set by its profile, not by a slope.
    """
    names = [p.name for p in search.continuous]
    J = best.jacobian if best.jacobian is not None else np.zeros((len(best.residuals), 0))
    ints = [p for p in search.integers if int_verdicts[p.name].identified]
    points, spans = [], []
    for p in ints:
        v = int(best.ints[p.name])
        low, high = max(v - 1, int(p.low)), min(v + 1, int(p.high))
        spans.append(high - low)
        points += [search.values(best.u, {**best.ints, p.name: x}) for x in (low, high)]
    residuals = search.ev.residuals_many(points) if points else []
    columns = [(residuals[2 * k + 1] - residuals[2 * k]) / spans[k] for k in range(len(ints))]
    full = np.column_stack([J] + columns) if columns else J
    return names + [p.name for p in ints], np.round(_corr(full), 6)


def _corr(J) -> np.ndarray:
    n = J.shape[1]
    if not n:
        return np.zeros((0, 0))
    cov = np.linalg.pinv(J.T @ J, rcond=1e-10)
    scale = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        corr = cov / np.outer(scale, scale)
    corr[~np.isfinite(corr)] = 0.0   # a parameter the model does not move (a zero column): no correlation
    corr = np.clip((corr + corr.T) / 2, -1.0, 1.0)
    np.fill_diagonal(corr, 1.0)
    return corr
