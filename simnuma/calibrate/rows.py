"""A measurement beside the model's value for it: what a fit and a validation report, row by row."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

from ..measurements import Measurement
from ..tables import short_case

__all__ = ["ModelRow", "number_text", "mean_abs_error_percent", "worst_row", "shown"]


def shown(m: Measurement) -> str:
    """``case | label`` as a report's lines show a measurement: a long case squeezed (:func:`short_case`)."""
    return f"{short_case(m.case.name)} | {m.label}"


@dataclass(frozen=True)
class ModelRow:
    """One measurement and the model's value for it (fitted in a calibration, predicted in a validation)."""

    measurement: Measurement
    model_value: float

    @property
    def error_percent(self) -> float:
        """``(model - measured) / measured`` in %."""
        return self.measurement.error_percent(self.model_value)

    def cells(self) -> list:
        """The row of a text table: case, metric, measured, model, error (``*``: the benchmark's caveat)."""
        m = self.measurement
        return [short_case(m.case.name), m.label, number_text(m.value), number_text(self.model_value),
                f"{self.error_percent:+.1f}%" + (" *" if m.caveat else "")]


def number_text(x: float) -> str:
    """Three significant digits, one decimal from 100 up."""
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:.1f}"
    return f"{x:#.3g}"


def mean_abs_error_percent(rows) -> float:
    """The mean of ``|error|`` over ``rows``."""
    return sum(abs(r.error_percent) for r in rows) / len(rows)


_Row = TypeVar("_Row", bound=ModelRow)


def worst_row(rows: Iterable[_Row]) -> _Row:
    """The row with the largest ``|error|``."""
    return max(rows, key=lambda r: abs(r.error_percent))
