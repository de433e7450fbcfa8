"""Sweeps (``simnuma.sweeps``): many boards, parameter grids and workloads in one run, ranked (``simnuma sweep``, ``docs/sweeps.md``).

* :mod:`.spec`: what a sweep file says (boards, grid, workload entries, metrics, ranking);
* :mod:`.reader`: reading and checking a sweep file, every problem at once;
* :mod:`.wirings`: every wiring of N sockets up to isomorphism, as boards;
* :mod:`.workloads`: the named workload sets, and the numbers taken from each case;
* :mod:`.execute`: running the points through the runner's cache, locally or on Dask;
* :mod:`.output`: the tidy table, the ranked summary and the figures.
"""
from __future__ import annotations

from .execute import SweepRun, run_sweep
from .reader import SweepError, load_sweep, parse_sweep
from .spec import AGGREGATES, CASE_METRICS, SET_NAMES, Sweep
from .wirings import Wiring, wiring_board, wirings

__all__ = ["sweep", "load_sweep", "parse_sweep", "run_sweep", "Sweep", "SweepRun", "SweepError", "wirings",
           "wiring_board", "Wiring", "AGGREGATES", "CASE_METRICS", "SET_NAMES"]


def sweep(source, jobs: int | None = None, cache=None, dask=None, configurations: bool = False,
          prefilter_top: int | None = None):
    """Run a sweep file (a path, or the YAML text of one) and return its table as a pandas DataFrame.

    One row per case of every configuration (``points.csv``); with
    ``configurations=True``, one row per configuration with its aggregates,
    best first.  ``jobs`` worker processes (default: the CPUs), ``cache`` a
    folder of finished points, ``dask`` a ``distributed.Client`` or a
    scheduler address; ``prefilter_top`` simulates only the configurations
    the analytic model ranks best (``docs/sweeps.md``).  Needs pandas
    (``pip install 'simnuma[frames]'``).
    """
    from pathlib import Path

    from ..errors import SimnumaError
    from ..runner import default_workers
    from .output import ranked

    try:
        import pandas as pd
    except ImportError:
        raise SimnumaError("simnuma.sweep returns a pandas DataFrame: install pandas"
                           " (pip install 'simnuma[frames]')") from None
    text = str(source)
    spec = load_sweep(text) if "\n" not in text and Path(text).suffix in (".yaml", ".yml") else parse_sweep(text)
    run = run_sweep(spec, jobs or default_workers(), cache, dask, prefilter_top=prefilter_top)
    if configurations:
        return pd.DataFrame(ranked(run.configurations, spec.rank))
    return pd.DataFrame(run.points)
