"""The fit's search: residuals evaluated through :class:`simnuma.runner.Runner` (its process pool and
result cache), the continuous fit, and the search over integers (windows, the DRAM queue)."""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

import numpy as np

from ..errors import CalibrationError, SimnumaError
from ..measurements import MeasurementSet
from ..topology import Topology
from ..runner import Runner, board_hash
from .cases import SimCase, figures, independent_count, predicted_value, sim_cases_for, twin_weights
from .parameters import (
    DIFF_STEP,
    FIT_DECIMALS,
    FIT_FTOL,
    FIT_XTOL,
    JACOBIAN_REFRESH,
    NEGLIGIBLE_CHANGE,
    NOISE_FLOOR,
    SCAN_FRACTIONS,
    SEARCH_ROUNDS,
    WINDOW_CANDIDATES,
    WINDOW_CHORD_STEPS,
    WINDOW_PROMISE,
    WINDOW_VERIFIED,
    WINDOW_VERIFIED_BASE,
    FreeParameter,
)
from .results import _broyden, _linear_step, _short

# ------------------------------------------------------------------ evaluating many parameter sets

class Evaluator:
    """Simulates the measured cases for parameter sets, on the one :class:`~simnuma.runner.Runner`.

    A case's job carries only the parameters it depends on (the continuous
    ones and the windows of the ops it uses, rounded to FIT_DECIMALS decimals), so
    screening windows finds earlier results in the runner's cache.
    """

    def __init__(self, topology: Topology, data: MeasurementSet, params: list, processes: int = 2,
                 seed: int = 1, progress=None, count_cached: bool = False):
        self.topology = topology
        self.board = board_hash(topology)
        self.data = data
        self.params = list(params)
        self.seed = seed
        self.sims = sim_cases_for(topology, data)
        self.measured = np.array([m.value for m in data])
        self.independent = independent_count(data, topology)   # identities and symmetric twins counted out
        # each residual scaled so that its squares weigh as twin_weights says: a group of interchangeable
        # threads as one measurement, as ``independent`` counts it
        self.weights = twin_weights(data, topology)
        self.scale = np.sqrt(np.array(self.weights))
        self.evaluations = 0
        self.progress = progress
        self.count_cached = count_cached   # whether a result found in the cache counts as done too (a known total)
        self.runner = Runner(processes)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        self.runner.close()

    @property
    def simulations(self) -> int:
        return self.runner.simulated

    def changes(self, values: dict, ops=None) -> dict:
        """``with_parameters`` changes for ``{parameter name: value}`` (of the parameters ``ops`` depend on)."""
        out = {}
        for p in self.params:
            if ops is not None and p.op is not None and p.op not in ops:
                continue
            v = round(values[p.name], FIT_DECIMALS)
            if p.name.startswith("core.hold.") and v <= 0:
                continue  # no hold: the board leaves it out
            out[p.path] = int(round(v)) if p.integer else float(v)
        return out

    def _job(self, sim: SimCase, values: dict):
        return sim.job(self.topology, tuple(self.changes(values, sim.ops).items()), self.seed, self.board)

    def results_many(self, value_sets: list) -> list:
        """Simulated figures of every case for each parameter set (``{sim key: figures}`` each)."""
        jobs = [{key: self._job(sim, values) for key, sim in self.sims.items()} for values in value_sets]
        done = self.progress and (lambda job, cached: (cached and not self.count_cached) or self.progress(1))
        try:
            results = self.runner.run((job for per_set in jobs for job in per_set.values()), done)
        except SimnumaError as exc:
            raise CalibrationError(f"a simulation failed during the fit: {exc}") from None
        self.evaluations += len(value_sets)
        return [{key: figures(results[job.key]) for key, job in per_set.items()} for per_set in jobs]

    def predictions(self, values: dict) -> np.ndarray:
        return self.predictions_many([values])[0]

    def predictions_many(self, value_sets: list) -> list:
        out = []
        for results in self.results_many(value_sets):
            out.append(np.array([predicted_value(m, results, self.topology) for m in self.data]))
        return out

    def residuals_many(self, value_sets: list) -> list:
        """Relative residuals ``(predicted - measured) / measured`` for each parameter set, weighted
        (:func:`~simnuma.calibrate.cases.twin_weights`)."""
        res = [(p - self.measured) / self.measured * self.scale for p in self.predictions_many(value_sets)]
        for r in res:
            if not np.all(np.isfinite(r)):
                raise CalibrationError("the model gave no finite prediction for some measurement"
                                       " (a thread that never finished?)")
        return res


# ------------------------------------------------------------------ the fit

@dataclass
class _Fit:
    """One continuous fit at fixed integer parameters (windows, queue)."""

    ints: dict
    u: np.ndarray
    residuals: np.ndarray
    jacobian: np.ndarray          # of the residuals in the scaled coordinates u (one column per continuous parameter)
    status: int
    message: str
    fresh: bool = False           # the Jacobian is a finite-difference one at ``u``

    @property
    def cost(self) -> float:
        return float(np.sum(self.residuals ** 2))


def _ladder(p: FreeParameter) -> list:
    """A wide integer's first values: its bounds and the powers of two between them."""
    low, high = int(p.low), int(p.high)
    values = {low, high}
    v = 1
    while v < high:
        if v > low:
            values.add(v)
        v *= 2
    return sorted(values)


class _Search:
    """The continuous fits and the integer (window, queue) search of one calibration.

    ``fixed`` holds continuous parameters kept at given values (the
    unidentified ones, once they are reset to their priors).
    """

    def __init__(self, ev: Evaluator, params: list, priors: dict, max_evaluations: int, log, fixed=None):
        self.ev = ev
        self.fixed = dict(fixed or {})
        self.continuous = [p for p in params if not p.integer and p.name not in self.fixed]
        self.integers = [p for p in params if p.integer]
        self.priors = priors
        self.low = np.array([p.low for p in self.continuous])
        self.span = np.array([p.high - p.low for p in self.continuous])
        self.max_evaluations = max_evaluations
        self.log = log
        self.fits: dict = {}          # integer tuple -> _Fit
        self.tried: set = set()       # integer tuples followed by chord steps or fitted
        self.screened = 0
        self.costs: dict = {}         # integer tuple -> lowest cost seen (screened, after chord steps, or fitted)

    def share(self, other: "_Search") -> "_Search":
        """Take over what ``other`` has learnt (fits, costs, counters); returns self."""
        self.fits, self.tried, self.costs, self.screened = dict(other.fits), other.tried, other.costs, other.screened
        return self

    # -- coordinates
    def values(self, u, ints: dict) -> dict:
        """Every parameter's value: fixed ones, continuous ones from ``u``, the integers.

        Continuous values are rounded as the calibrated board writes them
        (four significant digits, far below any step of the search), so that
        the board's own predictions come from the simulations of the fit.
        """
        out = dict(self.fixed)
        out.update({p.name: p.rounded(lo + x * s) for p, lo, x, s in zip(self.continuous, self.low, u, self.span)})
        out.update(ints)
        return out

    def u_of(self, values: dict) -> np.ndarray:
        x = np.array([values[p.name] for p in self.continuous], dtype=float)
        return np.clip((x - self.low) / self.span, 0.0, 1.0) if len(x) else x

    def ikey(self, ints: dict) -> tuple:
        return tuple(int(ints[p.name]) for p in self.integers)

    def note_cost(self, key: tuple, cost: float) -> None:
        """Remember the lowest cost known for a combination of the integers."""
        if cost < self.costs.get(key, math.inf):
            self.costs[key] = cost

    def itext(self, ints: dict) -> str:
        return ", ".join(f"{_short(p)}={int(ints[p.name])}" for p in self.integers) or "-"

    # -- Jacobian: forward differences, all perturbed points simulated together
    def jacobian(self, u, ints: dict) -> np.ndarray:
        n = len(u)
        steps = np.where(u + DIFF_STEP <= 1.0, DIFF_STEP, -DIFF_STEP)
        points = []
        for j in range(n):
            point = np.array(u, dtype=float)
            point[j] += steps[j]
            points.append(point)
        res = self.ev.residuals_many([self.values(u, ints)] + [self.values(p, ints) for p in points])
        if not n:
            return np.zeros((len(res[0]), 0))
        return np.column_stack([(res[j + 1] - res[0]) / steps[j] for j in range(n)])

    def fit(self, ints: dict, u0, jacobian=None) -> _Fit:
        """Fit the continuous parameters at fixed integers ``ints`` starting from ``u0``.

        The Jacobian is a finite-difference one at the start (or ``jacobian``,
        that of a neighbouring fit, when given) and after every
        :data:`JACOBIAN_REFRESH` accepted steps; in between it is updated from
        the steps taken (Broyden's rank-one update), which costs no simulation.
        The returned fit's Jacobian is whatever the last step used; call
        :meth:`refresh` for a finite-difference one at the solution.
        """
        from scipy.optimize import least_squares

        key = self.ikey(ints)
        self.tried.add(key)
        if not self.continuous:
            r = self.ev.residuals_many([self.values(np.zeros(0), ints)])[0]
            result = _Fit(dict(ints), np.zeros(0), r, np.zeros((len(r), 0)), 1, "no continuous parameter", True)
            self.fits[key] = result
            self.note_cost(key, result.cost)
            return result

        def fun(u):
            return self.ev.residuals_many([self.values(u, ints)])[0]

        state = {"J": jacobian, "u": None, "r": None, "calls": 0, "fresh": False}

        def jac(u):
            u = np.array(u, dtype=float)
            r = fun(u)  # cached: least_squares evaluated it just before
            if state["J"] is None or (state["calls"] and state["calls"] % JACOBIAN_REFRESH == 0):
                J, fresh = self.jacobian(u, ints), True
            elif state["u"] is None:
                J, fresh = state["J"], False
            else:
                J, fresh = _broyden(state["J"], u - state["u"], r - state["r"]), False
            state.update(J=J, u=u, r=r, calls=state["calls"] + 1, fresh=fresh)
            return J

        sol = least_squares(fun, np.clip(u0, 0.0, 1.0), jac=jac, bounds=(0.0, 1.0), method="trf",
                            ftol=FIT_FTOL, xtol=FIT_XTOL, gtol=1e-8, x_scale=1.0, max_nfev=self.max_evaluations)
        fresh = state["fresh"] and state["u"] is not None and np.array_equal(state["u"], sol.x)
        result = _Fit(dict(ints), sol.x, sol.fun, sol.jac, sol.status, sol.message, fresh)
        if key not in self.fits or result.cost < self.fits[key].cost:
            self.fits[key] = result
        self.note_cost(key, result.cost)
        self.log(f"fit at {self.itext(ints)}: cost {result.cost:.4g} after {sol.nfev} evaluations"
                 f" ({'converged' if sol.status > 0 else 'evaluation limit'})")
        return result

    def refresh(self, fit: _Fit) -> _Fit:
        """``fit`` with a finite-difference Jacobian at its solution."""
        if fit.fresh:
            return fit
        fresh = replace(fit, jacobian=self.jacobian(fit.u, fit.ints), fresh=True)
        self.fits[self.ikey(fit.ints)] = fresh
        return fresh

    def precision(self, fit: _Fit) -> float:
        """The cost of residuals as large as a steady-mode prediction's precision (1% each, a group of
        interchangeable threads as one)."""
        return NOISE_FLOOR ** 2 * float(sum(self.ev.weights))

    # -- integers
    def grid(self, ints: dict) -> list:
        """Every combination of the windows' values (wide integers as in ``ints``)."""
        axes = [[int(ints[p.name])] if p.wide else range(int(p.low), int(p.high) + 1) for p in self.integers]
        return [dict(zip((p.name for p in self.integers), combo)) for combo in itertools.product(*axes)]

    def neighbours(self, ints: dict) -> list:
        """The combinations whose windows differ from ``ints`` by at most one each (wide integers as in ``ints``)."""
        axes = []
        for p in self.integers:
            v = int(ints[p.name])
            axes.append([v] if p.wide else [x for x in (v - 1, v, v + 1) if p.low <= x <= p.high])
        combos = [dict(zip((p.name for p in self.integers), combo)) for combo in itertools.product(*axes)]
        return [c for c in combos if self.ikey(c) != self.ikey(ints)]

    def _screen_all(self, fit: _Fit, combos: list) -> tuple:
        """``(predicted costs, start points, costs at the fit's u)`` of ``combos`` (see :meth:`screen`)."""
        R = np.array(self.ev.residuals_many([self.values(fit.u, c) for c in combos]))
        self.screened += len(combos)
        J = fit.jacobian
        if J is None or not J.shape[1]:
            costs, starts = np.sum(R ** 2, axis=1), np.tile(fit.u, (len(combos), 1))
        else:
            starts = np.clip(fit.u - R @ np.linalg.pinv(J).T, 0.0, 1.0)
            costs = np.sum((R + (starts - fit.u) @ J.T) ** 2, axis=1)
        base = np.sum(R ** 2, axis=1)
        for cost, ints in zip(base, combos):
            self.note_cost(self.ikey(ints), float(cost))
        return costs, starts, base

    def screen(self, fit: _Fit, combos: list) -> list:
        """``[(predicted cost, ints, start u, cost at the fit's u, fit's u)]`` for the ``combos`` not tried yet.

        The predicted cost is that of the residuals at the fitted continuous
        values after the linear (Gauss-Newton) step the Jacobian allows,
        clipped to the bounds; all combinations are predicted at once.  The
        list holds the best predicted first, then (as the linear step can
        mislead where a bandwidth goes as one over a latency) the best by the
        simulated cost at the fit's own values.
        """
        combos = [c for c in combos if self.ikey(c) not in self.tried]
        if not combos:
            return []
        costs, starts, base = self._screen_all(fit, combos)
        order = list(np.argsort(costs, kind="stable")[:WINDOW_VERIFIED])
        order += [i for i in np.argsort(base, kind="stable") if i not in order][:WINDOW_VERIFIED_BASE]
        return [(float(costs[i]), combos[i], starts[i], float(base[i]), fit.u) for i in order]

    def explore(self, fit: _Fit, p: FreeParameter) -> list:
        """A wide integer (the queue) searched at the fit: ranked like :meth:`screen`.

        Its ladder of powers of two is screened first; then the gaps between
        two screened values across which the cost changes (by more than 1%)
        are halved, the two with the lowest costs at their ends at a time,
        until none is left.  A plateau (a queue deep enough that no case
        fills it) is left alone.  Scores are the lower of the simulated cost
        and the cost after the linear step.
        """
        seen = {}     # value -> (score, predicted cost, start u, base cost)
        values = _ladder(p)
        for _ in range(int(p.high - p.low).bit_length() + 2):
            combos = [{**fit.ints, p.name: v} for v in values if v not in seen]
            if not combos:
                break
            costs, starts, base = self._screen_all(fit, combos)
            for c, cost, start, b in zip(combos, costs, starts, base):
                seen[c[p.name]] = (min(float(cost), float(b)), float(cost), start, float(b))
            ordered = sorted(seen)
            gaps = [(min(seen[a][0], seen[b][0]), (a + b) // 2) for a, b in zip(ordered, ordered[1:])
                    if b - a > 1 and abs(seen[a][0] - seen[b][0]) > 0.01 * max(seen[a][0], seen[b][0])]
            values = [mid for _, mid in sorted(gaps)[:2]]
        ranked = sorted((item for item in seen.items() if self.ikey({**fit.ints, p.name: item[0]}) not in self.tried),
                        key=lambda item: item[1][0])[:WINDOW_VERIFIED]
        self.log(f"searched {p.name} over {len(seen)} values at {self.itext(fit.ints)}; best: "
                 + ", ".join(f"{v} ({score:.3g})" for v, (score, _, _, _) in ranked))
        return [(cost, {**fit.ints, p.name: v}, start, b, fit.u) for v, (_, cost, start, b) in ranked]

    def verify(self, ranked: list, jacobian, best_cost: float) -> list:
        """Follow the promising ranked combinations with a few frozen-Jacobian (chord) steps.

        A combination is followed when its predicted cost or its cost at the
        fit's values is under :data:`WINDOW_PROMISE` times ``best_cost``
        (only those can become refit candidates).  Each step goes from the
        best point so far along the linear (Gauss-Newton) step; a step that
        made things worse is halved instead.  Returns ``[(cost, ints, u)]`` of
        the best point each reached, best first; the steps of all
        combinations are simulated together.
        """
        for _, ints, _, _, _ in ranked:
            self.tried.add(self.ikey(ints))
        if not self.continuous:
            return sorted(((base, c, u0) for _, c, _, base, u0 in ranked), key=lambda item: item[0])
        # [ints, next point, best cost, best point]
        top = [[c, u, base, u0] for pred, c, u, base, u0 in ranked if min(pred, base) < WINDOW_PROMISE * best_cost]
        out = [(base, c, u0) for pred, c, _, base, u0 in ranked if min(pred, base) >= WINDOW_PROMISE * best_cost]
        for _ in range(WINDOW_CHORD_STEPS if top else 0):
            residuals = self.ev.residuals_many([self.values(u, c) for c, u, _, _ in top])
            for item, r in zip(top, residuals):
                cost = float(np.sum(r ** 2))
                if cost < item[2]:
                    item[2], item[3] = cost, item[1]
                    item[1] = _linear_step(jacobian, r, item[1])
                else:
                    item[1] = (item[1] + item[3]) / 2
        for c, _, cost, _ in top:
            self.note_cost(self.ikey(c), cost)
        return sorted([(cost, c, u) for c, _, cost, u in top] + out, key=lambda item: item[0])

    def scan(self, fit: _Fit) -> list:
        """Parameters on a plateau or at a bound tried across their ranges (others at the fit).

        Returns ``[(cost, ints, u)]``, best first.  A local fit cannot leave a
        region where some parameter has no effect (a FIFO memory's efficiency
        while memory is far from saturated, say), and may stop at a bound
        where the predictions bend; the scan looks past both.  Parameters that
        move a prediction inside their range are left to the fit.
        """
        points = []
        for j in range(len(self.continuous)):
            inside = 0.01 < fit.u[j] < 0.99
            if inside and np.max(np.abs(fit.jacobian[:, j])) * DIFF_STEP >= NEGLIGIBLE_CHANGE:
                continue
            for fraction in SCAN_FRACTIONS:
                if abs(fraction - fit.u[j]) >= 0.1:
                    u = np.array(fit.u, dtype=float)
                    u[j] = fraction
                    points.append(u)
        if not points:
            return []
        residuals = self.ev.residuals_many([self.values(u, fit.ints) for u in points])
        return sorted(((float(np.sum(r ** 2)), dict(fit.ints), u) for r, u in zip(residuals, points)),
                      key=lambda item: item[0])

    def run(self, start: dict, u0) -> _Fit:
        """Fit at the integers ``start``, then look for better starts and refit from the most promising.

        Each round screens combinations of the windows (the whole grid first,
        then the neighbours of a new best) and searches each wide integer (the
        queue, :meth:`explore`); the first round also scans parameters on a
        plateau or at a bound.  The best candidates, by simulated cost after
        a few chord steps, are refitted.  Rounds stop when no refit improves
        the best fit, or when the fit is as good as a prediction is precise
        (then the screen only tells which integers fit as well).
        """
        best = self.refresh(self.fit(start, u0))
        combos = self.grid(best.ints)
        for round_no in range(SEARCH_ROUNDS):
            candidates = []
            screened_before = self.screened
            ranked = self.screen(best, combos)
            for p in self.integers:
                if p.wide:
                    ranked += self.explore(best, p)
            if best.cost <= self.precision(best):
                break         # as good as a prediction is precise: the screen only tells which integers fit as well
            if ranked:
                checked = self.verify(ranked, best.jacobian, best.cost)
                self.log(f"screened {self.screened - screened_before} combinations around {self.itext(best.ints)};"
                         f" the best after up to {WINDOW_CHORD_STEPS} chord steps: "
                         + "; ".join(f"{self.itext(c)} cost {cost:.3g}" for cost, c, _ in checked))
                candidates += checked
            if self.continuous and round_no == 0:
                scanned = self.scan(best)
                if scanned:
                    self.log(f"scanned {len(scanned)} points of parameters on a plateau or at a bound;"
                             f" best cost {scanned[0][0]:.3g}")
                    candidates += scanned[:1]
            candidates.sort(key=lambda item: item[0])
            chosen = [c for c in candidates if c[0] < WINDOW_PROMISE * best.cost][:WINDOW_CANDIDATES]
            incumbent, improved = best, False
            for _, ints, u_start in chosen:
                candidate = self.fit(ints, u_start, jacobian=incumbent.jacobian)
                if candidate.cost < best.cost:
                    best, improved = candidate, True
            if not improved:
                break
            best = self.refresh(best)
            combos = self.neighbours(best.ints)
        return self.finish(best)

    def finish(self, best: _Fit) -> _Fit:
        """Continue a best fit that stopped at the evaluation limit; raise if it still has not converged.

        The result has a finite-difference Jacobian at its solution.
        """
        if best.status == 0:
            self.log(f"continuing the fit at {self.itext(best.ints)}")
            best = self.fit(best.ints, best.u, jacobian=best.jacobian)
        if best.status == 0:
            raise CalibrationError(f"the fit did not converge within {2 * self.max_evaluations} evaluations"
                                   f" ({self.itext(best.ints)}, cost {best.cost:.3g}); fit fewer"
                                   " parameters or allow more with --max-evaluations")
        return self.refresh(best)
