"""A sweep's output: the tidy table, the ranked summary, the figures.

Into the output folder (written all or nothing, :class:`~simnuma.fileio.OutputFolder`):

* ``points.csv`` (and ``points.parquet`` where pyarrow is installed): one row per case of every
  configuration: the board's label and hash, the grid's values, the workload entry and the case,
  every metric asked for, the seed, mode, array size and simnuma version;
* ``configurations.csv``: one row per configuration (a board at a grid point) with its aggregates
  (``docs/sweeps.md``), in rank order;
* ``summary.md``: the configurations ranked, with what each aggregate means;
* ``sweep.json``: all of it, with how the run went;
* with matplotlib: ``pareto.png`` (links against the first ranking aggregate, the Pareto front
  marked) and, per numeric grid parameter, ``PARAMETER.png`` (the first aggregate against it).
"""
from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path

from ..fileio import write_atomic, write_json
from ..tables import count
from .spec import AGGREGATES

__all__ = ["ranked", "write_sweep_outputs", "summary_text", "pareto_front"]


def _sort_key(row: dict, rank: tuple):
    key: list = [(1 if row.get("deadlocks") else 0, 0.0),   # a board that deadlocks on a case ranks last
                 # after every simulated configuration, those the analytic prefilter left out (it ranked them below)
                 (1 if row.get("source") == "analytic" else 0, 0.0)]
    for name in rank:
        value = row.get(name)
        if value is None:
            key.append((1, 0.0))
        else:
            key.append((0, value if AGGREGATES[name][1] == "min" else -value))
    return key


def ranked(configurations: list, rank: tuple) -> list:
    """The configurations best first by ``rank`` (the first aggregate decides, the next breaks ties); those the
    analytic prefilter did not simulate (``source: analytic``) after all the simulated ones, as it ranked them."""
    return sorted(configurations, key=lambda row: _sort_key(row, rank))


def pareto_front(rows: list, cost: str, metric: str) -> list:
    """The rows that no other row beats on both ``cost`` (fewer is better) and ``metric`` (its direction); a
    configuration that deadlocked on a case is on no front."""
    sign = 1.0 if AGGREGATES[metric][1] == "min" else -1.0
    points = [(r[cost], sign * r[metric], r) for r in rows
              if r.get(cost) is not None and r.get(metric) is not None and not r.get("deadlocks")]
    front = []
    for c, m, r in points:
        if not any((c2 <= c and m2 <= m) and (c2 < c or m2 < m) for c2, m2, _ in points):
            front.append(r)
    return front


def _csv(rows: list) -> str:
    columns: list = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _cell(v) for k, v in row.items()})
    return out.getvalue()


def _cell(value):
    if isinstance(value, float):
        return f"{value:.6g}"
    return value


def _fmt(name: str, value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if name.endswith("_spread") or name.endswith("_penalty"):
            return f"{100 * value:+.1f}%"
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def summary_text(run) -> str:
    """The ranked summary (Markdown)."""
    sweep = run.sweep
    rows = ranked(run.configurations, sweep.rank)
    params = [path for path, _ in sweep.grid]
    shown_aggs = [a for a in AGGREGATES if a != "links" and any(r.get(a) is not None for r in rows)]
    lines = [f"# {sweep.title}", "",
             f"simnuma {run.info['simnuma']} (sources {run.info['result_version']}), {sweep.mode} mode, seed"
             f" {sweep.seed}, arrays of {sweep.size_bytes / 2**20:g} MiB; sweep file {sweep.source}.", "",
             f"{run.info['configurations']} configurations, {run.info['points']} cases in the table,"
             f" {run.info['simulations']} simulations ({run.info['cached']} from the cache).", "",
             *(f"Note: {note}." for note in run.info.get("notes") or ()),
             *([""] if run.info.get("notes") else []),
             "Ranked by " + ", then ".join(f"`{r}` ({'lower' if AGGREGATES[r][1] == 'min' else 'higher'} is better)"
                                           for r in sweep.rank) + ".", ""]
    mixed = any(r.get("source") == "analytic" for r in rows)
    header = ["rank", "board", *params, "is", "links", *shown_aggs, *(["from"] if mixed else []), "board hash"]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for k, row in enumerate(rows, 1):
        cells = [str(k), row["board"], *(str(row.get(p, "")) for p in params), row.get("matches") or "",
                 row.get("wiring", ""), *(_fmt(a, row.get(a)) for a in shown_aggs),
                 *([row.get("source", "")] if mixed else []), row["board_hash"]]
        lines.append("| " + " | ".join(cells) + " |")
    stuck = [row for row in rows if row.get("deadlock")]
    if stuck:
        lines += ["", "Deadlocked (docs/model.md, \"Deadlock\"; the cases of the table are in `points.csv` with"
                  " their cycle, the others are cases the aggregates need):", ""]
        lines += [f"- {row['board']}" + "".join(f" {p}={row[p]}" for p in params if p in row)
                  + f": {count(row['deadlocks'], 'simulation')}, the first {row['deadlock']}" for row in stuck]
    lines += ["", "What the columns mean:", ""]
    lines += ["- `links`: the board's coherent links (their count is the `links` aggregate, a cost)"]
    lines += [f"- `{a}`: {AGGREGATES[a][0]}" for a in shown_aggs]
    if mixed:
        lines += ["- `from`: `simulation`, or `analytic` for a configuration the analytic model ranked out of the"
                  f" {run.info.get('prefilter_top')} best (`--prefilter analytic`; docs/analytic.md says how far to"
                  " trust it)"]
    lines += ["", "Every case of every configuration is in `points.csv`; the aggregates are in"
              " `configurations.csv`.", ""]
    return "\n".join(lines)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "parameter"


def _number(text):
    from ..units import UnitError, parse_quantity

    try:
        return float(text)
    except (TypeError, ValueError):
        pass
    for kind in ("bandwidth", "time", "frequency"):
        try:
            return parse_quantity(str(text), kind)
        except (UnitError, ValueError):
            continue
    return None


def _save(plt, fig, folder: Path, name: str) -> str:
    """Write ``fig`` as ``folder/name`` (PNG, atomically), close it, and return the name."""
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    write_atomic(folder / name, buf.getvalue())
    return name


def write_figures(folder: Path, run) -> list:
    """The figures (none without matplotlib): the Pareto front, and each numeric grid parameter's effect."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    sweep = run.sweep
    metric = sweep.rank[0]
    rows = [r for r in run.configurations if r.get(metric) is not None]
    written = []
    if rows:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        front = pareto_front(rows, "links", metric)
        ax.scatter([r["links"] for r in rows], [r[metric] for r in rows], color="0.6", label="configurations")
        front = sorted(front, key=lambda r: r["links"])
        ax.plot([r["links"] for r in front], [r[metric] for r in front], "o-", color="tab:red", label="Pareto front")
        for r in front:
            ax.annotate(r["board"] + (f" ({r['matches']})" if r.get("matches") else ""), (r["links"], r[metric]),
                        textcoords="offset points", xytext=(4, 4), fontsize=8)
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("coherent links")
        ax.set_ylabel(metric)
        ax.set_title(f"{sweep.name}: {metric} against links")
        ax.legend(fontsize=8)
        written.append(_save(plt, fig, folder, "pareto.png"))
    for path, values in sweep.grid:
        xs = [_number(v) for v in values]
        if any(x is None for x in xs) or len(xs) < 2:
            continue
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for board in dict.fromkeys(r["board"] for r in rows):
            mine = [r for r in rows if r["board"] == board]
            pts = sorted((_number(r[path]), r[metric]) for r in mine if _number(r.get(path)) is not None)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=board)
        ax.set_xlabel(path)
        ax.set_ylabel(metric)
        ax.set_title(f"{sweep.name}: {metric} against {path}")
        ax.legend(fontsize=8)
        written.append(_save(plt, fig, folder, f"{_slug(path)}.png"))
    return written


def write_sweep_outputs(folder, run) -> list:
    """Write every output file into ``folder``; the names written."""
    folder = Path(folder)
    configurations = ranked(run.configurations, run.sweep.rank)
    write_atomic(folder / "points.csv", _csv(run.points))
    write_atomic(folder / "configurations.csv", _csv(configurations))
    write_atomic(folder / "summary.md", summary_text(run))
    info = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in run.info.items()}
    write_json(folder / "sweep.json", json.loads(json.dumps(
        {"sweep": run.sweep.name, "source": run.sweep.source, "rank": list(run.sweep.rank), "run": info,
         "configurations": configurations, "points": run.points}, default=str)))
    written = ["points.csv", "configurations.csv", "summary.md", "sweep.json"]
    try:
        import pandas as pd
        import pyarrow  # noqa: F401  (pandas writes Parquet with it)
    except ImportError:
        pass
    else:
        buf = io.BytesIO()
        pd.DataFrame(run.points).to_parquet(buf, index=False)
        write_atomic(folder / "points.parquet", buf.getvalue())
        written.append("points.parquet")
    return written + write_figures(folder, run)
