"""Confidence intervals from batch means, as steady mode draws them.

A batch is ``(span ns, {group: completions per thread})``: one stretch of a
phase and what each group of interchangeable threads completed in it.
Steady mode (:mod:`simnuma.model.system`) asks whether the groups'
throughputs are known precisely enough; this module holds the statistics:
Student's t, the half-width of a batch-means interval, merging batches, and
the lag-1 autocorrelation test that decides how long the batches an
interval is drawn from must be.
"""
from __future__ import annotations

import math

__all__ = ["t975", "half_width", "merged", "lag1", "independent_batches"]

# two-sided 97.5% quantiles of Student's t for n-1 degrees of freedom
_T975 = {2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179,
         13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042,
         40: 2.021, 60: 2.000, 120: 1.980}


def t975(dof: int) -> float:
    """Student's t at 97.5% for ``dof`` degrees of freedom; between the table's entries, that of the
    entry below (the wider interval)."""
    below = [k for k in _T975 if k <= dof]
    return _T975[max(below)] if below else 12.706


def half_width(values) -> float:
    """The 95% confidence half-width of the mean of ``values`` (at least two)."""
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return t975(n - 1) * math.sqrt(var / n)


def merged(batches: list) -> tuple:
    """Consecutive batches as one: their spans and completions added."""
    span = sum(b[0] for b in batches)
    return span, {g: sum(b[1][g] for b in batches) for g in batches[0][1]}


def lag1(values: list) -> float:
    """The lag-1 autocorrelation of ``values`` (0 for values that do not vary)."""
    n = len(values)
    mean = sum(values) / n
    dev = [v - mean for v in values]
    var = sum(d * d for d in dev)
    if var <= 0.0:
        return 0.0
    return sum(dev[i] * dev[i + 1] for i in range(n - 1)) / var


def independent_batches(batches: list, fewest: int, z: float) -> list | None:
    """Batches whose means an interval may be drawn from: ``batches`` merged in runs of 1, 2, 4, ...

    The run is the shortest whose merged means show no positive lag-1
    autocorrelation for any group (not above ``z`` standard errors,
    1/sqrt(n)): means that follow one another would understate the
    variance, and so the interval.  At least ``fewest`` merged batches are
    needed; None while there are too few for any run length.
    """
    run = 1
    while len(batches) // run >= fewest:
        k = len(batches) // run
        means = batches if run == 1 else [merged(batches[j * run:(j + 1) * run]) for j in range(k)]
        bound = z / math.sqrt(k)
        if all(lag1([done[g] / span for span, done in means]) <= bound for g in batches[0][1]):
            return means
        run *= 2
    return None
