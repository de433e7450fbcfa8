"""The calibration itself (:func:`calibrate`), the cases it chooses, and :func:`predict`."""
from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np

from ..errors import CalibrationError, SpecError
from ..measurements import MeasurementSet, parse_case
from ..topology import Topology, load_topology
from ..workload import parse_spec
from .cases import STRIDE_OPS, chase_pages_problem, check_measurements, peak_of, sim_case
from .parameters import (
    _INTEGER_MAX,
    MAX_FIT_EVALUATIONS,
    NOISE_FLOOR,
    PARAMETERS,
    STRONG_CORRELATION,
    FreeParameter,
    for_link_kinds,
    parse_fit,
)
from .results import _NO_EFFECT, Calibration, FitRow, ParameterFit, _linear_step, overfit_warning
from .search import Evaluator, _Fit, _Search
from .verdicts import _classify, _correlation_matrix, _integer_verdicts, _noise, _Verdict

# ------------------------------------------------------------------ the entry point

def choose_cases(data: MeasurementSet, cases=None, topology: Topology | None = None) -> tuple:
    """``(cases to fit, [(measurement, why it was left out)])``.

    Named ``cases`` (measured ones only), else by default: every
    single-thread stride case (op ``r``, ``w`` or ``t``), every idle latency
    chase measured on huge pages (a chase on base pages is left out, see
    :func:`chase_pages_problem`), and, given the board, every peak (every core
    of one node streaming one node's memory, its own or another's, :func:`peak_of`).  Cases with
    background threads (loaded latency, paced loads) are validation cases.
    """
    if not cases:
        chosen, left_out = [], []
        for c in data.cases:
            if c.single_thread and c.ops <= STRIDE_OPS:
                chosen.append(c)
            elif c.single_thread and c.ops == {"l"}:
                chase = [m for m in data if m.case == c and m.metric == "thread_latency_ns"]
                problems = [(m, chase_pages_problem(m)) for m in chase]
                problems = [(m, why) for m, why in problems if why]
                if problems:
                    left_out += problems
                else:
                    chosen.append(c)
            elif topology is not None and peak_of(c, topology, data.peaks) is not None:
                chosen.append(c)
        if not chosen:
            raise CalibrationError(f"{', '.join(data.files)}: no single-thread stride case (op r, w or t), idle"
                                   " chase on huge pages or peak to calibrate on; name cases with --cases")
        return tuple(chosen), left_out
    measured = {c.name: c for c in data.cases}
    out = []
    for text in cases:
        try:
            name = parse_case(text).name
        except SpecError as exc:
            raise CalibrationError(f"--cases {text!r}: {exc}") from None
        if name not in measured:
            raise CalibrationError(f"--cases {text!r}: not a measured case; measured: "
                                   + ", ".join(measured))
        if measured[name] not in out:
            out.append(measured[name])
    return tuple(out), []


def calibrate(topology, data: MeasurementSet, fit=None, cases=None, processes: int = 2, seed: int = 1,
              max_evaluations: int = MAX_FIT_EVALUATIONS, progress=None, log=None) -> Calibration:
    """Fit ``fit`` (names, ``NAME=LOW:HIGH`` or FreeParameters; default :func:`default_fit`) to ``data``.

    ``cases`` names the cases to fit (default: :func:`choose_cases`).
    ``progress(n)`` is called as simulations finish; ``log(text)`` with the
    steps of the search.  Raises CalibrationError when the measurements do not
    belong to the board, a case cannot be placed, a parameter is not one of
    the board's memory model, or the fit does not converge.
    """
    started = time.perf_counter()
    topology = load_topology(topology)
    chosen, left_out = choose_cases(data, cases, topology)
    subset = data.select(c.name for c in chosen)
    warnings = [f"{m.key}: fitted as named, although {why}" for m in subset
                if m.metric == "thread_latency_ns" and parse_spec(m.thread).op == "l"
                for why in [chase_pages_problem(m)] if why]
    check_measurements(topology, subset)
    ops = frozenset(op for c in chosen for op in sim_case(c, None).ops)
    if fit and all(isinstance(p, FreeParameter) for p in fit):
        params = for_link_kinds(fit, topology)
    else:
        params = parse_fit(fit, topology, chosen, data.peaks)
    params, unusable = _usable(params, topology, ops)
    params = _room_for_littles_law(params, subset, topology)
    priors = {p.name: p.prior(topology) for p in params}
    log = log or (lambda text: None)
    with Evaluator(topology, subset, params, processes, seed, progress) as ev:
        overfit = overfit_warning(len(params), ev.independent)
        if overfit:
            warnings.append(overfit)
        search = _Search(ev, params, priors, max_evaluations, log)
        start = {p.name: int(min(max(round(priors[p.name]), p.low), p.high)) for p in search.integers}
        start_values = _start(search, subset, priors, start)
        best = search.run({n: start_values[n] for n in start}, search.u_of(start_values))
        best, verdicts, search = _settle(search, best, priors)
        int_verdicts = _integer_verdicts(search, best)
        moved = {}
        for p in search.integers:
            if not int_verdicts[p.name].identified:
                value, int_verdicts[p.name] = _held_at(p, float(round(priors[p.name])), int_verdicts[p.name])
                if best.ints[p.name] != value:
                    moved[p.name] = int(value)
        if moved:
            log("not identified, back to the board's values: " + ", ".join(f"{n}={v}" for n, v in moved.items()))
            best = search.finish(search.fit({**best.ints, **moved}, best.u))
            best, again, search = _settle(search, best, priors)
            verdicts = {**verdicts, **again}
            int_verdicts = {**_integer_verdicts(search, best), **{n: int_verdicts[n] for n in moved}}
        verdicts.update(int_verdicts)
        names, matrix = _correlation_matrix(search, best, int_verdicts)
        raw = search.values(best.u, best.ints)
        final_values = {p.name: p.rounded(raw[p.name]) for p in params}
        fitted = ev.predictions(final_values)  # of the values as the calibrated board writes them
        parameters = _parameter_fits(params, priors, final_values, verdicts, names, matrix) + unusable
        calibrated = topology.with_parameters(
            {p.param.path: p.param.document_value(p.value) for p in parameters
             if p.identified or p.value is not None and p.value != p.prior})
        return Calibration(prior_topology=topology, topology=calibrated, data=subset, cases=chosen,
                           parameters=parameters, rows=[FitRow(m, float(v)) for m, v in zip(subset, fitted)],
                           simulations=ev.simulations, evaluations=ev.evaluations, screened=search.screened,
                           fitted_windows=len(search.fits), wall_seconds=time.perf_counter() - started,
                           left_out=left_out, warnings=warnings, independent=ev.independent,
                           free_parameters=len(params), seed=seed, weights=list(ev.weights),
                           correlation={"parameters": names, "matrix": matrix.tolist()})


def _start(search: _Search, data: MeasurementSet, priors: dict, ints: dict) -> dict:
    """Where the fit starts: the board's values, or values read off an idle chase when they fit better.

    With an idle latency chase among the measurements and the memory latency
    free, the chase sets it (the chase's latency moves one for one with
    ``memory.latency`` in every memory model), and each free window of an op
    measured by a single local stream starts where Little's law puts it: the
    stream's bandwidth times the chase's latency, in lines.  A core that
    keeps many lines in flight at a long latency (a current one, with its
    prefetchers) is far from the board's guesses, and a local fit from those
    trades the latency down instead of the windows up.  The start with the
    lower cost is taken.
    """
    values = {**priors, **ints}
    params = {p.name: p for p in search.continuous + search.integers}
    chase = [m for m in data if m.metric == "thread_latency_ns" and m.case.single_thread and m.case.ops == {"l"}]
    if not chase or "memory.latency" not in params:
        return values
    m = chase[0]
    index = list(data).index(m)
    predicted = search.ev.predictions(values)[index]
    lat = params["memory.latency"]
    latency = min(max(values["memory.latency"] + m.value - predicted, lat.low), lat.high)
    guess = {**values, "memory.latency": latency}
    for name, lines in _littles_law_windows(data).items():
        if name in params:
            p = params[name]
            guess[name] = int(min(max(round(lines), p.low), p.high))
    guess_ints = {n: guess[n] for n in ints}
    costs = [float(np.sum(r ** 2)) for r in search.ev.residuals_many([search.values(search.u_of(values), ints),
                                                                      search.values(search.u_of(guess), guess_ints)])]
    if costs[1] < costs[0]:
        search.log(f"starting from the idle chase: memory.latency {latency:.3g} ns, {search.itext(guess_ints)}"
                   f" (cost {costs[1]:.3g} against {costs[0]:.3g} at the board's values)")
        return guess
    return values


def _littles_law_windows(data: MeasurementSet) -> dict:
    """``{core.window.<op>: lines}``: each single local stream's bandwidth times the idle chase's latency."""
    chase = [m for m in data if m.metric == "thread_latency_ns" and m.case.single_thread and m.case.ops == {"l"}]
    if not chase:
        return {}
    out = {}
    for stream in data:
        if stream.metric == "thread_GBps" and stream.case.single_thread:
            spec = parse_spec(stream.thread)
            if spec.node == spec.mem_node and spec.op != "l":
                out[f"core.window.{spec.op}"] = stream.value * chase[0].value / 64.0
    return out


def _room_for_littles_law(params: list, data: MeasurementSet, topology: Topology) -> list:
    """Windows whose default range cannot hold what Little's law reads off the measurements get room
    up to twice that (as far as the window's largest value); ranges given with ``--fit`` stay."""
    lines = _littles_law_windows(data)
    out = []
    for p in params:
        want = lines.get(p.name)
        default = PARAMETERS.get(p.name)
        if want and default is not None and p == default.for_board(topology) and want > p.high / 2:
            top = _INTEGER_MAX.get(p.name, 1024)
            p = p.with_bounds(p.low, max(p.high, min(top, 2 * int(round(want)))))
        out.append(p)
    return out


def _usable(params: list, topology: Topology, ops: frozenset):
    """``(parameters to fit, [ParameterFit of those that cannot be])``.

    A link parameter on a board without links, and the window of an op no
    chosen case uses, are not identified by construction.
    """
    out, unusable = [], []
    for p in params:
        prior = p.prior(topology)
        if prior is None:
            unusable.append(ParameterFit(p, None, None, None, False, "the board has no link"))
        elif p.op is not None and p.op not in ops:
            unusable.append(ParameterFit(p, prior, prior, None, False, f"no fitted case uses op {p.op!r}"))
        else:
            out.append(p)
    if not out:
        raise CalibrationError(f"--fit {' '.join(p.name for p in params)}: none of these parameters matters for the"
                               f" cases fitted on board {topology.name!r}; fit others")
    return out, unusable


def _held_at(p: FreeParameter, prior: float, verdict: _Verdict) -> tuple:
    """``(value, verdict)``: where an unidentified parameter is held, and why.

    At the board's value, unless the measurements exclude it: a value outside
    the parameter's 95% interval (or an integer's range) moves to the nearest
    end of it, the least change to the board the measurements allow.
    """
    if verdict.interval is None or prior is None:
        return prior, verdict
    low, high = verdict.interval
    if low <= prior <= high:
        return prior, verdict
    value = p.rounded(low if prior < low else high)
    note = (f"; held at {p.format(value)}, the end of its 95% {'range' if p.integer else 'interval'} nearest the"
            f" board's {p.format(prior)}")
    return value, replace(verdict, reason=verdict.reason + note)


def _hold_one(search: _Search, best: _Fit, priors: dict, by_name: dict, held: dict, where: dict, worst: str,
              verdict: "_Verdict") -> tuple:
    """``(name, value, verdict, fit, search)``: ``worst`` held where :func:`_held_at` puts it, the rest refitted."""
    value, verdict = _held_at(by_name[worst], priors[worst], verdict)
    fixed = {**search.fixed, **{n: where[n] for n in held}, worst: value}
    keep = [j for j, p in enumerate(search.continuous) if p.name not in fixed]
    start_values = {**search.values(best.u, best.ints), **fixed}
    inner = _Search(search.ev, search.continuous + search.integers, priors, search.max_evaluations, search.log,
                    fixed=fixed).share(search)
    u = inner.u_of(start_values)
    text = f"{worst} at {by_name[worst].format(value)} ({verdict.reason})"
    # moving the held ones to their values; the Jacobian says how far that moves the predictions
    shift = best.jacobian @ (search.u_of(start_values) - best.u) / search.ev.scale   # (residuals are weighted)
    if float(np.max(np.abs(shift), initial=0.0)) < NOISE_FLOOR:
        # a small move: one linear step of the rest with the Jacobian they have, kept if it helps
        search.log(f"holding {text}; that moves no prediction by 1%: one linear step of the rest")
        J = best.jacobian[:, keep]
        r = search.ev.residuals_many([inner.values(u, best.ints)])[0]
        stepped = _linear_step(J, r, u)
        r2 = search.ev.residuals_many([inner.values(stepped, best.ints)])[0]
        u, r = (stepped, r2) if float(r2 @ r2) < float(r @ r) else (u, r)
        held_fit = replace(best, u=u, residuals=r, jacobian=J)
    else:
        search.log(f"holding {text} and refitting the rest")
        held_fit = inner.finish(inner.fit(best.ints, u, jacobian=best.jacobian[:, keep]))
    return worst, value, verdict, held_fit, inner


def _settle(search: _Search, best: _Fit, priors: dict):
    """Hold unidentified continuous parameters at the board's values, refitting the rest.

    Parameters nothing depends on are held at once (that changes no
    prediction).  Of the others that are not identified (an interval over
    most of the range, a correlation beyond 0.95), the one with the widest
    interval is held and the rest refitted, until every free one is
    identified; when that one is correlated beyond 0.95 with another free
    one, both are tried and the one whose holding raises the cost least is
    held (a chase fixes the sum of the memory and crossbar latencies: the
    crossbar's assumption is held, not the latency the chase measures).  A board value the measurements exclude is replaced by the
    nearest they allow (:func:`_held_at`).  The profile has the last word:
    when holding a parameter raises the cost beyond the 95% level (q² times
    the residual variance, as for the integers), the measurements reject the held value, and the
    parameter stays free and fitted, with its interval and a note.  Returns
    ``(fit, verdicts, search)``; the search is the last one (its ``fixed``
    holds the held parameters at their values).
    """
    held, where, rejected = {}, {}, {}
    verdicts = {}
    by_name = {p.name: p for p in search.continuous}
    for _ in range(len(search.continuous) + 1):
        verdicts = _classify(search, best)
        unused = [n for n, v in verdicts.items() if not v.identified and v.reason == _NO_EFFECT]
        weak = [n for n, v in verdicts.items() if not v.identified and v.reason != _NO_EFFECT and n not in rejected]
        for name in unused:
            held[name], where[name] = verdicts[name], priors[name]
        if not weak:
            break
        # the widest first; of two that only a combination determines, the one whose holding costs least
        ranked = sorted(weak, key=lambda n: -verdicts[n].width)
        first = verdicts[ranked[0]]
        pairs = {n: r for n, r in first.correlations.items()
                 if abs(r) > STRONG_CORRELATION or not math.isfinite(first.width)}
        partner = max(pairs, key=lambda n: abs(pairs[n])) if pairs else None
        candidates = [ranked[0]] + ([partner] if partner in weak and partner != ranked[0] else [])
        tries = [_hold_one(search, best, priors, by_name, held, where, name, verdicts[name]) for name in candidates]
        worst, value, verdict, held_fit, inner = min(tries, key=lambda t: t[3].cost)
        # the profile's word: a held value that raises the cost beyond the 95% level is one the measurements
        # reject, whatever the linearised interval said
        s2, q = _noise(search, best)
        if held_fit.cost > best.cost + q * q * s2:
            search.log(f"{worst} stays free: held at {by_name[worst].format(value)} the cost rises from"
                       f" {best.cost:.3g} to {held_fit.cost:.3g}, beyond the 95% level ({best.cost + q * q * s2:.3g})")
            rejected[worst] = (value, held_fit.cost)
            continue
        held[worst], where[worst] = verdict, value
        best, search = held_fit, inner
    if held and any(n not in search.fixed for n in held):
        values = {**search.values(best.u, best.ints), **{n: where[n] for n in held}}
        last = search
        search = _Search(search.ev, search.continuous + search.integers, priors, search.max_evaluations, search.log,
                         fixed={**search.fixed, **{n: where[n] for n in held}}).share(last)
        keep = [j for j, p in enumerate(last.continuous) if p.name not in held]
        best = replace(best, u=search.u_of(values), jacobian=best.jacobian[:, keep])
    out = {n: v for n, v in verdicts.items() if n not in held}
    for name, (value, cost) in rejected.items():
        v = out[name]
        if not v.identified:
            reason = (f"its linearised 95% interval is wide, but held at {by_name[name].format(value)} the cost"
                      f" rises beyond the 95% level ({best.cost:.3g} to {cost:.3g}): the measurements reject that")
            out[name] = replace(v, identified=True, reason=reason)
    out.update(held)
    return best, out, search


def _parameter_fits(params: list, priors: dict, values: dict, verdicts: dict, names: list, matrix) -> list:
    out = []
    for p in params:
        v = verdicts[p.name]
        if not v.identified:
            held = values.get(p.name, priors[p.name])    # the board's value, or the nearest the measurements allow
            out.append(ParameterFit(p, priors[p.name], float(held), None, False, v.reason))
            continue
        k = names.index(p.name)
        correlations = {n: float(matrix[k][i]) for i, n in enumerate(names) if i != k}
        interval = v.interval
        if p.integer:
            interval = (float(interval[0]), float(interval[1]))
        out.append(ParameterFit(p, priors[p.name], float(values[p.name]), v.sigma, True, v.reason, interval,
                                correlations))
    return out


# ------------------------------------------------------------------ prediction (validation)

def predict(topology, data: MeasurementSet, processes: int = 2, seed: int = 1, progress=None, total=None) -> list:
    """The model's value of every measurement of ``data`` on ``topology`` (same order); ``total(n)`` is told
    the number of simulations first, and ``progress(1)`` after each."""
    topology = load_topology(topology)
    check_measurements(topology, data)
    with Evaluator(topology, data, [], processes, seed, progress, count_cached=True) as ev:
        if total is not None:
            total(len(ev.sims))
        return [float(v) for v in ev.predictions({})]
