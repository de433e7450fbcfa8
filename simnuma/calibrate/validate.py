"""Validation: predicting measured cases a calibration did not use.

:func:`validate` predicts every measurement of every case that was not used to
calibrate the board (the calibrated board's ``# simnuma-calibration`` comment
names those; they are listed as excluded and never mixed in) and compares:
per measurement the predicted and measured values and the error
``(predicted - measured) / measured``, the measurement's error bar (the lowest
and highest value of its repetitions, :attr:`Measurement.error_bar`) and
whether the prediction lies inside it, the mean and worst absolute error, and
the qualitative orderings the measurements show (case A slower than case B)
that the predictions keep or reverse.

:func:`write_outputs` writes the report as Markdown, CSV and JSON (each
atomically) and, when matplotlib is installed, a parity plot and a grouped bar
chart.
"""
from __future__ import annotations

import csv
import datetime as _dt
import io
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__
from ..runner import board_hash
from ..errors import CalibrationError
from ..measurements import MeasurementSet
from ..tables import short_case, text_table
from ..topology import load_topology
from .boardfile import read_calibration_record
from .cases import check_measurements
from .fit import predict
from .results import overfit_warning
from .rows import ModelRow, mean_abs_error_percent, number_text, shown, worst_row

__all__ = ["ValidationRow", "Validation", "validate", "write_outputs", "ORDERING_THRESHOLD_PERCENT",
           "PLOT_HINT", "ERROR_BAR_LEGEND", "calibration_overfit"]

ORDERING_THRESHOLD_PERCENT = 5.0   # measured differences smaller than this are not called an ordering
PLOT_HINT = "plots skipped: matplotlib is not installed; pip install 'simnuma[plot]'"
ERROR_BAR_LEGEND = ("error bar: lowest..highest value of the measurement's repetitions (measured = the best one);"
                    " n/a: fewer than two repetitions in its source; within: the prediction lies inside the bar")
COLUMNS = ["case", "metric", "measured", "error bar", "predicted", "error", "within"]


@dataclass(frozen=True)
class ValidationRow(ModelRow):
    """One measurement beside its prediction."""

    @property
    def predicted(self) -> float:
        return self.model_value

    @property
    def within_error_bar(self) -> bool | None:
        """Whether the prediction lies inside the measurement's error bar (None: it has none)."""
        return self.measurement.within_error_bar(self.predicted)

    def cells(self) -> list:
        """case, metric, measured, error bar, predicted, error (``*``: the benchmark's caveat), within."""
        case, metric, measured, predicted, error = super().cells()
        return [case, metric, measured, _bar_text(self.measurement.error_bar), predicted, error,
                _within_text(self.within_error_bar)]

    def to_dict(self) -> dict:
        m = self.measurement
        bar = m.error_bar
        return {"case": m.case.name, "threads": list(m.case.threads), "background": list(m.case.background),
                "metric": m.metric, "label": m.label, "unit": m.unit, "measured": m.value,
                "error_bar": None if bar is None else {"low": bar[0], "high": bar[1],
                                                       "repetitions": len(m.repetitions)},
                "within_error_bar": self.within_error_bar,
                "predicted": self.predicted, "error_percent": self.error_percent, "source": m.source,
                "origin": m.origin, "caveat": m.caveat}


def _bar_text(bar: tuple | None) -> str:
    """``1.90..2.00``, or ``n/a`` for a measurement without repetitions."""
    return "n/a" if bar is None else f"{number_text(bar[0])}..{number_text(bar[1])}"


def _within_text(within: bool | None) -> str:
    return "n/a" if within is None else "yes" if within else "no"


@dataclass(frozen=True)
class Ordering:
    """Two measurements of one metric whose measured values differ clearly."""

    larger: ValidationRow
    smaller: ValidationRow

    @property
    def holds(self) -> bool:
        return self.larger.predicted > self.smaller.predicted

    def describe(self) -> str:
        a, b = self.larger.measurement, self.smaller.measurement
        verb = "keeps" if self.holds else "reverses"
        return (f"{short_case(a.case.name)} {a.label} > {short_case(b.case.name)} {b.label}"
                f" (measured {a.value:.4g} > {b.value:.4g}; predicted {self.larger.predicted:.4g} vs"
                f" {self.smaller.predicted:.4g}: {verb})")


@dataclass
class Validation:
    """A finished validation."""

    board: str
    board_source: str
    record: dict | None
    data: MeasurementSet
    rows: list
    excluded_cases: list
    wall_seconds: float
    date: str = field(default_factory=lambda: _dt.date.today().isoformat())
    include_untrusted: bool = False
    board_hash: str = ""     # the parameters the predictions came from (simnuma.runner.board_hash)
    seed: int = 1

    @property
    def warnings(self) -> list:
        """What the reader of the figures should know about the calibration validated (one line each)."""
        overfit = calibration_overfit(self.record)
        return [f"the calibration had {overfit}"] if overfit else []

    @property
    def untrusted(self) -> list:
        """The rows whose measurement the benchmark itself marked untrusted (a caveat: ``*``)."""
        return [r for r in self.rows if r.measurement.caveat]

    @property
    def counted(self) -> list:
        """The rows the headline figures count: the trusted ones, unless ``include_untrusted`` (or none is)."""
        trusted = [r for r in self.rows if not r.measurement.caveat]
        return self.rows if self.include_untrusted or not trusted else trusted

    @property
    def mean_abs_error_percent(self) -> float:
        return mean_abs_error_percent(self.counted)

    @property
    def worst(self) -> ValidationRow:
        return worst_row(self.counted)

    def orderings(self) -> list:
        """Every pair of measurements of the same metric and unit whose measured values differ clearly."""
        out = []
        for i, a in enumerate(self.rows):
            for b in self.rows[i + 1:]:
                ma, mb = a.measurement, b.measurement
                if ma.metric != mb.metric or ma.case == mb.case:
                    continue
                low, high = sorted((ma.value, mb.value))
                if 100.0 * (high - low) / low < ORDERING_THRESHOLD_PERCENT:
                    continue
                out.append(Ordering(a, b) if ma.value > mb.value else Ordering(b, a))
        return out

    def groups(self) -> dict:
        """``{"single-thread": rows, "multi-thread": rows}``, only the groups that have rows."""
        out: dict = {}
        for r in self.counted:
            kind = "single-thread" if r.measurement.case.single_thread else "multi-thread"
            out.setdefault(kind, []).append(r)
        return out

    def error_bar_counts(self) -> tuple:
        """``(within, judged)``: how many counted rows have an error bar (judged), and of those, how many
        predictions lie inside it (within)."""
        judged = [r.within_error_bar for r in self.counted if r.within_error_bar is not None]
        return sum(judged), len(judged)

    def summary(self) -> dict:
        orderings = self.orderings()
        out = _stats(self.counted)
        out["untrusted_left_out"] = len(self.rows) - len(self.counted)
        out["within_error_bar"], out["with_error_bar"] = self.error_bar_counts()
        out["groups"] = {kind: _stats(rows) for kind, rows in self.groups().items()}
        out.update(orderings=len(orderings), orderings_kept=sum(o.holds for o in orderings))
        return out

    def to_dict(self) -> dict:
        return {
            "version": __version__,
            "date": self.date,
            "board": self.board,
            "board_source": self.board_source,
            "board_hash": self.board_hash,
            "seed": self.seed,
            "calibration": self.record,
            "measurements": list(self.data.files),
            "machine": self.data.machine.to_dict(),
            "excluded_cases": self.excluded_cases,
            "notes": list(self.data.notes),
            "warnings": self.warnings,
            "summary": self.summary(),
            "rows": [r.to_dict() for r in self.rows],
            "orderings": [{"larger": o.larger.measurement.key, "smaller": o.smaller.measurement.key,
                           "holds": o.holds} for o in self.orderings()],
            "wall_seconds": self.wall_seconds,
        }

    # -- renderings
    def _header_lines(self) -> list:
        lines = [f"board {self.board!r} ({self.board_source}, hash {self.board_hash}) against"
                 f" {', '.join(self.data.files)}, seed {self.seed}"]
        if self.record is None:
            lines.append("the board carries no calibration record: every measured case is predicted")
        else:
            files = ", ".join(self.record.get("measurements", []))
            lines.append(f"calibrated {self.record.get('date', '?')} on {files}"
                         f" ({_plural(len(self.record['cases']), 'case')})")
            unidentified = self.record.get("not_identified")
            if isinstance(unidentified, dict) and unidentified:
                lines.append("not identified by the calibration, the board's own values: " + ", ".join(unidentified))
        if self.excluded_cases:
            lines.append("not validated (used for calibration): " + "; ".join(self.excluded_cases))
        lines += [f"note: {note}" for note in self.data.notes]   # what a tool's output held and was not imported
        return lines + [f"warning: {w}" for w in self.warnings]

    def _table_rows(self) -> list:
        return [r.cells() for r in self.rows]

    def _caveat_lines(self) -> list:
        """``* case label: caveat`` for every measurement the benchmark itself distrusts."""
        return [f"* {shown(r.measurement)}: {r.measurement.caveat}" for r in self.rows if r.measurement.caveat]

    def _summary_line(self) -> str:
        line = _stats_line("all", self.counted)
        left_out = len(self.rows) - len(self.counted)
        if left_out:
            line += (f"; {_plural(left_out, 'untrusted measurement')} (*) left out of these figures"
                     " (--include-untrusted counts them)")
        elif self.untrusted:
            line += f"; {_plural(len(self.untrusted), 'untrusted measurement')} (*) counted"
        return line

    def _error_bar_line(self) -> str:
        """``predictions within their error bar: 3 of 5 (2 measurements without repetitions)``."""
        within, judged = self.error_bar_counts()
        without = len(self.counted) - judged
        if not judged:
            return "predictions within their error bar: n/a (no counted measurement has repetitions)"
        line = f"predictions within their error bar: {within} of {judged}"
        return line + (f" ({_plural(without, 'measurement')} without repetitions)" if without else "")

    def _group_lines(self) -> list:
        groups = self.groups()
        return [_stats_line(kind, rows) for kind, rows in groups.items()] if len(groups) > 1 else []

    def _ordering_lines(self) -> list:
        orderings = self.orderings()
        if not orderings:
            return []
        kept = sum(o.holds for o in orderings)
        lines = [f"orderings (measured differences over {ORDERING_THRESHOLD_PERCENT:g}%): {kept} of"
                 f" {len(orderings)} kept"]
        lines += [f"  reversed: {o.describe()}" for o in orderings if not o.holds]
        return lines

    def render_text(self) -> str:
        out = self._header_lines() + [""]
        out += text_table(COLUMNS, self._table_rows())
        out.append(ERROR_BAR_LEGEND)
        out.append(self._summary_line())
        out.append(self._error_bar_line())
        out += self._group_lines()
        out += self._caveat_lines()
        out += self._ordering_lines()
        return "\n".join(out)

    def to_markdown(self) -> str:
        out = [f"# Validation of board `{self.board}`", ""]
        out += [f"- {line}" for line in self._header_lines()]
        out += [f"- simnuma {__version__}, {self.date}", ""]
        out.append("| " + " | ".join(COLUMNS) + " |")
        out.append("|---|---|---:|---:|---:|---:|---|")
        for row in self._table_rows():
            out.append("| " + " | ".join(_md(c) for c in row) + " |")
        out += ["", _md(ERROR_BAR_LEGEND), ""]
        out += [f"**{self._summary_line()}**", "", f"- {self._error_bar_line()}", ""]
        groups = self._group_lines()
        if groups:
            out += [f"- {line}" for line in groups] + [""]
        caveats = self._caveat_lines()
        if caveats:
            out += ["Measurements marked * may not be trusted:", ""]
            out += [f"- {_md(line[2:])}" for line in caveats]
            out.append("")
        ordering = self._ordering_lines()
        if ordering:
            out.append(ordering[0])
            out += [f"- {line.strip()}" for line in ordering[1:]]
            out.append("")
        return "\n".join(out)

    def to_csv(self) -> str:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["case", "threads", "background", "metric", "label", "unit", "measured", "error_bar_low",
                         "error_bar_high", "predicted", "error_percent", "within_error_bar", "source", "caveat"])
        for r in self.rows:
            m = r.measurement
            low, high = ("", "") if m.error_bar is None else (repr(m.error_bar[0]), repr(m.error_bar[1]))
            within = "" if r.within_error_bar is None else str(r.within_error_bar).lower()
            writer.writerow([m.case.name, " ".join(m.case.threads), " ".join(m.case.background), m.metric, m.label,
                             m.unit, repr(m.value), low, high, repr(r.predicted), f"{r.error_percent:.3f}", within,
                             m.source, m.caveat])
        return buf.getvalue()


_OVERFIT = re.compile(r"^(\d+) free parameters? for (\d+) independent measurements?\b")


def calibration_overfit(record: dict | None) -> str | None:
    """``4 free parameters for 3 independent measurements: ...`` when the calibration recorded in
    ``record`` had more free parameters than independent measurements, else None.

    The record counts both (``free_parameters``, ``independent_measurements``);
    a record written before it did carries the calibration's warning among
    its ``warnings``.  A record that says neither warns of nothing.
    """
    if not record:
        return None
    free, independent = record.get("free_parameters"), record.get("independent_measurements")
    if isinstance(free, int) and isinstance(independent, int):
        return overfit_warning(free, independent)
    warnings = record.get("warnings")
    for text in warnings if isinstance(warnings, list) else []:
        found = _OVERFIT.match(text) if isinstance(text, str) else None
        if found:
            return overfit_warning(int(found.group(1)), int(found.group(2)))
    return None


def _stats(rows: list) -> dict:
    """Count, mean absolute error and worst error of ``rows``."""
    worst = max(rows, key=lambda r: abs(r.error_percent))
    return {"measurements": len(rows), "cases": len({r.measurement.case.name for r in rows}),
            "mean_abs_error_percent": sum(abs(r.error_percent) for r in rows) / len(rows),
            "worst": {"case": worst.measurement.case.name, "label": worst.measurement.label,
                      "error_percent": worst.error_percent}}


def _stats_line(what: str, rows: list) -> str:
    """``all: 9 measurements of 6 cases: mean |error| 26.0%, worst -75.6% (case | label)``."""
    st = _stats(rows)
    w = st["worst"]
    return (f"{what}: {_plural(st['measurements'], 'measurement')} of {_plural(st['cases'], 'case')}: mean |error|"
            f" {st['mean_abs_error_percent']:.1f}%, worst {w['error_percent']:+.1f}%"
            f" ({short_case(w['case'])} | {w['label']})")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _md(text: str) -> str:
    return str(text).replace("|", "\\|")


# ------------------------------------------------------------------ running

def validate(topology, data: MeasurementSet, board_text: str | None = None, processes: int = 2, seed: int = 1,
             progress=None, include_untrusted: bool = False, total=None) -> Validation:
    """Predict the measurements of ``data`` that the board's calibration did not use.

    ``board_text`` is the board file's text, whose calibration record names
    the cases used for calibration.  The headline figures (mean and worst
    error, per group) leave out the measurements the benchmark itself marked
    untrusted (a caveat), unless ``include_untrusted``; every row is listed
    either way.  Raises CalibrationError when every
    measured case was used for calibration, or the measurements belong to
    another machine.
    """
    started = time.perf_counter()
    topology = load_topology(topology)
    check_measurements(topology, data)   # another machine's measurements are refused as such, first
    record = read_calibration_record(board_text) if board_text else None
    used = set(record["cases"]) if record else set()
    excluded = [c.name for c in data.cases if c.name in used]
    remaining = data.exclude(used)
    if not len(remaining):
        raise CalibrationError(f"every measured case of {', '.join(data.files)} was used to calibrate board"
                               f" {topology.name!r}; nothing is left to validate")
    predicted = predict(topology, remaining, processes=processes, seed=seed, progress=progress, total=total)
    rows = [ValidationRow(m, p) for m, p in zip(remaining, predicted)]
    return Validation(board=topology.name, board_source=topology.source, record=record, data=remaining, rows=rows,
                      excluded_cases=excluded, wall_seconds=time.perf_counter() - started,
                      include_untrusted=include_untrusted, board_hash=board_hash(topology), seed=seed)


# ------------------------------------------------------------------ files

def write_outputs(report: Validation, folder) -> tuple:
    """Write validation.md, .csv, .json and the plots into ``folder``.

    Returns ``(paths written, note)``; the note says why plots were skipped.
    """
    from ..fileio import write_atomic, write_json

    folder = Path(folder)
    written = [write_atomic(folder / "validation.md", report.to_markdown()),
               write_atomic(folder / "validation.csv", report.to_csv()),
               write_json(folder / "validation.json", report.to_dict())]
    try:
        plots = _plots(report)
    except ImportError:
        return written, PLOT_HINT
    for name, content in plots.items():
        written.append(write_atomic(folder / name, content))
    return written, ""


def _plots(report: Validation) -> dict:
    """``{file name: PNG bytes}`` of the parity plot and the grouped bar chart (needs matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    units = sorted({r.measurement.unit for r in report.rows})
    return {"parity.png": _parity(report, units, Figure), "bars.png": _bars(report, units, Figure)}


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120, bbox_inches="tight")
    return buf.getvalue()


def _parity(report: Validation, units: list, Figure) -> bytes:
    fig = Figure(figsize=(4.6 * len(units), 4.4))
    for k, unit in enumerate(units):
        ax = fig.add_subplot(1, len(units), k + 1)
        rows = [r for r in report.rows if r.measurement.unit == unit]
        xs = [r.measurement.value for r in rows]
        ys = [r.predicted for r in rows]
        bars = [r for r in rows if r.measurement.error_bar is not None]
        ends = [x for r in bars for x in r.measurement.error_bar]
        low, high = min(xs + ys + ends) * 0.9, max(xs + ys + ends) * 1.1
        ax.plot([low, high], [low, high], color="0.3", linewidth=1, label="predicted = measured")
        ax.fill_between([low, high], [low * 0.9, high * 0.9], [low * 1.1, high * 1.1], color="0.85",
                        label="within 10%")
        if bars:
            ax.errorbar([r.measurement.value for r in bars], [r.predicted for r in bars],
                        xerr=[[r.measurement.value - r.measurement.error_bar[0] for r in bars],
                              [r.measurement.error_bar[1] - r.measurement.value for r in bars]],
                        fmt="none", ecolor="tab:blue", elinewidth=1, capsize=2, zorder=2,
                        label="repetitions (min..max)")
        ax.scatter(xs, ys, zorder=3, color="tab:blue")
        for r in rows:
            ax.annotate(short_case(r.measurement.case.name) if len(rows) <= 12 else "",
                        (r.measurement.value, r.predicted), fontsize=6, xytext=(3, 3), textcoords="offset points")
        ax.set_xlim(low, high)
        ax.set_ylim(low, high)
        ax.set_xlabel(f"measured ({unit})")
        ax.set_ylabel(f"predicted ({unit})")
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(f"{report.board}: predicted vs measured (mean |error| {report.mean_abs_error_percent:.1f}%)")
    return _png(fig)


def _bars(report: Validation, units: list, Figure) -> bytes:
    fig = Figure(figsize=(max(6.0, 0.8 * len(report.rows) + 2), 3.6 * len(units)))
    for k, unit in enumerate(units):
        ax = fig.add_subplot(len(units), 1, k + 1)
        rows = [r for r in report.rows if r.measurement.unit == unit]
        positions = range(len(rows))
        ax.bar([p - 0.2 for p in positions], [r.measurement.value for r in rows], width=0.4, label="measured",
               color="tab:gray")
        bars = [(p, r.measurement) for p, r in zip(positions, rows) if r.measurement.error_bar is not None]
        if bars:
            ax.errorbar([p - 0.2 for p, _ in bars], [m.value for _, m in bars],
                        yerr=[[m.value - m.error_bar[0] for _, m in bars], [m.error_bar[1] - m.value for _, m in bars]],
                        fmt="none", ecolor="black", elinewidth=1, capsize=2, label="repetitions (min..max)")
        ax.bar([p + 0.2 for p in positions], [r.predicted for r in rows], width=0.4, label="predicted",
               color="tab:blue")
        ax.set_xticks(list(positions))
        ax.set_xticklabels([f"{short_case(r.measurement.case.name)}\n{r.measurement.label}" for r in rows], fontsize=6,
                           rotation=30, ha="right")
        ax.set_xlim(-0.8, len(rows) - 0.2)
        ax.set_ylabel(unit)
        ax.legend(fontsize=7)
    fig.suptitle(f"{report.board}: measured and predicted")
    return _png(fig)

