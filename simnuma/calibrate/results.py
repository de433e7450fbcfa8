"""What a calibration returns: fitted parameters, rows of predicted against measured, and their
tables."""
from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass, field

import numpy as np

from ..tables import text_table
from .rows import ModelRow, shown, worst_row
from .. import __version__
from ..runner import board_hash
from ..measurements import MeasurementSet
from ..topology import Topology
from .parameters import PARAMETERS, FreeParameter, _round


def _short(p: FreeParameter) -> str:
    """``r`` for core.window.r, ``queue`` for memory.queue."""
    return p.op if p.op else p.name.rsplit(".", 1)[1]


def _broyden(J, du, dr):
    """Broyden's rank-one update of the Jacobian ``J`` after the step ``du`` changed the residuals by ``dr``."""
    norm = float(du @ du)
    if norm <= 1e-12:
        return J
    return J + np.outer(dr - J @ du, du) / norm


def _linear_step(J, r, u):
    """The point in [0, 1] minimising ``|r + J (x - u)|``: a bounded Gauss-Newton step from ``u``."""
    from scipy.optimize import lsq_linear

    if J is None or not J.shape[1]:
        return u
    return np.clip(u + lsq_linear(J, -r, bounds=(-u, 1.0 - u)).x, 0.0, 1.0)


# ------------------------------------------------------------------ results

@dataclass(frozen=True)
class ParameterFit:
    """The outcome for one free parameter.

    An identified parameter has its fitted ``value``, a 95% ``interval`` (for
    an integer: the lowest and highest values that fit within the 95% level)
    and its ``correlations`` with the other fitted parameters.  One the
    measurements do not identify keeps the board's value (``value`` is the
    prior) and ``note`` says why.
    """

    param: FreeParameter
    prior: float | None             # None: the board has no such parameter (a link's on a one-node board)
    value: float | None
    uncertainty: float | None       # one standard deviation, in the parameter's unit (continuous parameters)
    identified: bool
    note: str = ""
    interval: tuple | None = None   # 95% (low, high), in the parameter's unit
    correlations: dict = field(default_factory=dict, compare=False)   # other fitted parameter -> r

    @property
    def at_bound(self) -> bool:
        if not self.identified:
            return False
        if self.param.integer:
            return self.value in (self.param.low, self.param.high)
        assert self.value is not None   # an identified parameter has its value
        span = self.param.high - self.param.low
        return self.value - self.param.low < 0.01 * span or self.param.high - self.value < 0.01 * span

    @property
    def partner(self) -> tuple | None:
        """``(name, r)`` of the fitted parameter it is most strongly correlated with.

        A continuous parameter's partner is continuous: its interval holds
        the integers at their values, which their profiles set; an integer's
        is any (from the model linearised in it).
        """
        pool = {n: r for n, r in self.correlations.items()
                if self.param.integer or not (n in PARAMETERS and PARAMETERS[n].integer)}
        if not pool:
            return None
        name = max(pool, key=lambda n: abs(pool[n]))
        return name, pool[name]

    def interval_text(self) -> str:
        """``35.1..49.3 ns``, ``3..4`` or ``-``."""
        if self.interval is None:
            return "-"
        low, high = self.interval
        if self.param.integer:
            return f"{int(low)}..{int(high)}" if high > low else f"{int(low)}"
        unit = f" {self.param.unit}" if self.param.unit else ""
        return f"{_round(low, 3)}..{_round(high, 3)}{unit}"

    def partner_text(self) -> str:
        """``-0.62 with xbar.latency`` or ``-``."""
        if self.partner is None:
            return "-"
        name, r = self.partner
        return f"{r:+.2f} with {name}"

    def to_dict(self) -> dict:
        return {"name": self.param.name, "path": self.param.path, "unit": self.param.unit,
                "description": self.param.description, "bounds": [self.param.low, self.param.high],
                "prior": self.prior, "value": self.value, "uncertainty": self.uncertainty,
                "interval_95": list(self.interval) if self.interval else None, "identified": self.identified,
                "at_bound": self.at_bound, "integer": self.param.integer,
                "correlations": {k: round(v, 4) for k, v in self.correlations.items()},
                "strongest_correlation": ({"parameter": self.partner[0], "r": round(self.partner[1], 4)}
                                          if self.partner else None),
                "note": self.note}


@dataclass(frozen=True)
class FitRow(ModelRow):
    """One measurement beside its fitted prediction."""

    @property
    def fitted(self) -> float:
        return self.model_value

    @property
    def residual_percent(self) -> float:
        return self.error_percent

    def to_dict(self) -> dict:
        m = self.measurement
        return {"case": m.case.name, "metric": m.metric, "label": m.label, "unit": m.unit, "measured": m.value,
                "fitted": self.fitted, "residual_percent": self.residual_percent, "source": m.source,
                "caveat": m.caveat}


@dataclass
class Calibration:
    """A finished calibration: the fitted board, the fit per measurement and per parameter."""

    prior_topology: Topology
    topology: Topology
    data: MeasurementSet
    cases: tuple
    parameters: list
    rows: list
    simulations: int
    evaluations: int
    screened: int
    fitted_windows: int
    wall_seconds: float
    date: str = field(default_factory=lambda: _dt.date.today().isoformat())
    left_out: list = field(default_factory=list)   # [(measurement, why)]: default cases not fitted
    warnings: list = field(default_factory=list)   # one line each
    correlation: dict = field(default_factory=dict)   # {"parameters": [names], "matrix": [[r]]} of the fitted ones
    independent: int = 0                           # measurements that are not identities
    free_parameters: int = 0                       # parameters the search moved (those that could matter)
    seed: int = 1                                  # of every simulation of the fit
    weights: list = field(default_factory=list)    # each row's weight in the fit (cases.twin_weights; [] all 1)

    @property
    def fitted(self) -> list:
        return [p for p in self.parameters if p.identified]

    @property
    def unidentified(self) -> list:
        return [p for p in self.parameters if not p.identified]

    @property
    def written(self) -> list:
        """The parameters the calibrated board changes: the fitted ones, and unidentified ones whose board
        value the measurements exclude (held at the nearest value they allow)."""
        return [p for p in self.parameters if p.identified or p.value is not None and p.value != p.prior]

    @property
    def worst(self) -> FitRow:
        return worst_row(self.rows)

    @property
    def mean_abs_residual_percent(self) -> float:
        """The mean |residual| over the measurements, a group of interchangeable threads counted once, as
        the fit weighs it."""
        residuals = np.array([abs(r.residual_percent) for r in self.rows])
        weights = np.array(self.weights) if len(self.weights) == len(self.rows) else np.ones(len(self.rows))
        return float(np.sum(weights * residuals) / np.sum(weights))

    def changes(self) -> dict:
        """``with_parameters`` changes of the parameters the calibrated board changes."""
        return {p.param.path: p.param.document_value(p.value) for p in self.written}

    def record(self) -> dict:
        """The machine-readable summary written into the calibrated board's comments."""
        return {
            "version": __version__,
            "date": self.date,
            "board": self.prior_topology.name,
            "board_hash": board_hash(self.prior_topology),
            "calibrated_board_hash": board_hash(self.topology),
            "seed": self.seed,
            "measurements": list(self.data.files),
            "machine": self.data.machine.to_dict(),
            "cases": [c.name for c in self.cases],
            "fitted": {p.param.name: {"value": _round(p.value, 4), "uncertainty": _maybe(p.uncertainty),
                                      "interval_95": [_round(x, 4) for x in p.interval] if p.interval else None,
                                      "at_bound": p.at_bound}
                       for p in self.fitted},
            "not_identified": {p.param.name: p.note for p in self.unidentified},
            "correlation": {"parameters": self.correlation.get("parameters", []),
                            "matrix": [[round(x, 3) for x in row] for row in self.correlation.get("matrix", [])]},
            "left_out": [{"measurement": m.key, "reason": why} for m, why in self.left_out],
            "warnings": list(self.warnings),
            "free_parameters": self.free_parameters,
            "independent_measurements": self.independent,
            "mean_abs_residual_percent": round(self.mean_abs_residual_percent, 3),
            "worst_residual_percent": round(self.worst.residual_percent, 3),
        }

    def to_dict(self) -> dict:
        return {**self.record(), "parameters": [p.to_dict() for p in self.parameters],
                "rows": [r.to_dict() for r in self.rows],
                "simulations": self.simulations, "evaluations": self.evaluations,
                "window_combinations_screened": self.screened, "window_combinations_fitted": self.fitted_windows,
                "wall_seconds": self.wall_seconds}

    def render_text(self) -> str:
        """The terminal report: the fit per measurement, then per parameter."""
        out = [f"calibrated board {self.prior_topology.name!r} (hash {board_hash(self.prior_topology)}) on"
               f" {', '.join(self.data.files)} ({len(self.cases)} cases, {len(self.rows)} measurements, seed"
               f" {self.seed}); the calibrated board's hash {board_hash(self.topology)}", ""]
        out += text_table(["case", "metric", "measured", "fitted", "residual"], [r.cells() for r in self.rows])
        out.append(f"mean |residual| {self.mean_abs_residual_percent:.1f}%, worst {self.worst.residual_percent:+.1f}%"
                   f" ({shown(self.worst.measurement)})")
        out += [f"* {shown(r.measurement)}: {r.measurement.caveat}" for r in self.rows if r.measurement.caveat]
        out += [f"left out: {shown(m)}: {why}" for m, why in self.left_out]
        out += [f"warning: {w}" for w in self.warnings]
        out.append("")
        rows = []
        for p in self.parameters:
            value = "-" if p.value is None else p.param.format(p.value)
            moved = p.value is not None and p.prior is not None and p.value != p.prior
            state = (("fitted, at a bound" if p.at_bound else "fitted") if p.identified
                     else "not identified, moved" if moved else "not identified, kept")
            rows.append([p.param.name, value, p.interval_text(), "-" if p.prior is None else p.param.format(p.prior),
                         p.param.bounds_text, state, p.partner_text() if p.identified else "-", p.note])
        out += text_table(["parameter", "value", "95% interval", "prior", "bounds", "", "strongest correlation",
                       "note"], rows)
        out.append("")
        out.append(f"{self.simulations} simulations, {self.evaluations} parameter sets,"
                   f" {self.screened} integer combinations screened, {self.fitted_windows} fitted;"
                   f" {self.wall_seconds:.1f} s")
        return "\n".join(out)


def _maybe(x):
    return None if x is None or not math.isfinite(x) else _round(x, 3)


# ------------------------------------------------------------------ what the measurements identify

def overfit_warning(free_parameters: int, independent_measurements: int) -> str | None:
    """The warning of a fit with more free parameters than independent measurements (None otherwise)."""
    if free_parameters <= independent_measurements:
        return None
    parameters = "parameter" if free_parameters == 1 else "parameters"
    measurements = "measurement" if independent_measurements == 1 else "measurements"
    return (f"{free_parameters} free {parameters} for {independent_measurements} independent {measurements}:"
            " not all of them can be identified")


_NO_EFFECT = "no fitted prediction depends on it near the fit"
