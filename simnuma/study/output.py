"""A study's results as files: the rows of its table (CSV), its JSON document, and the output
folder written with the report and figures."""
from __future__ import annotations

import csv
import io
from pathlib import Path

from ..analytic import beside
from ..model.result import by_pair
from .figures import board_figure_png, study_figure_png
from .report import render_report

RESULT_FORMAT = "simnuma-study-result/1"
REPORT_NAME = "REPORT.md"


# ---------------------------------------------------------------- tables

def _board_meta(result) -> dict:
    return {label: {"name": b.topology.name, "hash": b.hash} for label, b in result.study.boards.items()}


def _fg_threads(data: dict) -> list:
    return [t for t in data["threads"] if t["role"] == "foreground"]


def case_rows(result) -> list:
    """One flat dictionary per case, the rows of ``STUDY.csv``."""
    from .. import __version__

    meta = _board_meta(result)
    directions = sorted({(l["src"], l["dst"]) for d in result.results.values() for l in d["links"]})
    nodes = sorted({m["node"] for d in result.results.values() for m in d["memory"]})
    rows = []
    for case in result.study.cases:
        data, m = result.results[case.key], result.metrics[case.key]
        topo = result.study.boards[case.board].topology
        links = by_pair(data["links"], lambda l: l["utilization"])   # links in parallel: the busiest
        memory = {x["node"]: x for x in data["memory"]}
        row = {
            "study": result.study.name, "board": case.board, "board_name": meta[case.board]["name"],
            "board_hash": meta[case.board]["hash"], "case": case.text, "foreground": case.placement,
            "background": " ".join(case.background), "load": case.load, "subscription": case.subscription or "",
            "hops": " ".join(str(h) for h in case.hops(topo)),
            "time_ns": _num(m.time_ns), "percent_of_local_read": _num(m.percent),
            "baseline_ns": _num(m.baseline_ns), "latency_mean_ns": _num(m.latency_ns),
            "bandwidth_GBps": _num(m.bandwidth_GBps),
            "thread_times_ns": " ".join(f"{t['spec']}={_num(t['time_ns'])}" for t in _fg_threads(data)),
            "bottleneck": m.bottleneck, "bottleneck_utilization": _num(m.bottleneck_utilization),
        }
        if case.key in result.analytic:
            diff, note = beside(data, result.analytic[case.key])
            row.update({"analytic_time_ns": _num(result.analytic[case.key]), "analytic_difference": _num(diff),
                        "analytic_lacks": note})
        for d in directions:
            row[f"link_{d[0]}->{d[1]}_utilization"] = _num(links[d]) if d in links else ""
        for n in nodes:
            row[f"memory_N{n}_GBps"] = _num(memory[n]["bandwidth_GBps"]) if n in memory else ""
            row[f"memory_N{n}_utilization"] = _num(memory[n]["utilization"]) if n in memory else ""
        row.update({"version": __version__, "mode": result.mode, "seed": result.seed,
                    "size_bytes": result.size_bytes})
        rows.append(row)
    return rows


def _num(value):
    if value is None:
        return ""
    return round(float(value), 6)


def render_csv(rows: list) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def study_document(result) -> dict:
    """The JSON of one study: its boards, every case with its full numbers, every claim."""
    from .. import __version__

    study = result.study
    boards = [{"label": label, "name": b.topology.name, "base": b.base, "changes": b.changes, "hash": b.hash,
               "coherence": b.topology.coherence, "baseline_ns": result.baselines[label],
               "parameters": b.topology.to_dict()} for label, b in study.boards.items()]
    cases = []
    for case in study.cases:
        data, m = result.results[case.key], result.metrics[case.key]
        cases.append({
            "board": case.board, "case": case.text, "foreground": list(case.foreground),
            "background": list(case.background), "load": case.load, "subscription": case.subscription,
            "groups": list(case.groups), "hops": list(case.hops(study.boards[case.board].topology)),
            "time_ns": m.time_ns, "percent_of_local_read": m.percent, "latency_mean_ns": m.latency_ns,
            "bandwidth_GBps": m.bandwidth_GBps,
            "threads": [{k: t[k] for k in ("spec", "role", "time_ns", "bandwidth_GBps", "latency_ns")}
                        for t in data["threads"]],
            "links": data["links"], "memory": data["memory"], "queues": data["queues"],
            "bottleneck": data["bottleneck"],
        })
    claims = [{"kind": o.claim.kind, "phenomenon": o.claim.phenomenon, "says": o.claim.says,
               "metric": o.claim.metric, "verdict": o.verdict, "numbers": o.numbers, "line": o.claim.line}
              for o in result.outcomes]
    return {"format": RESULT_FORMAT, "study": study.name, "title": study.title, "description": study.description,
            "source": study.source, "version": __version__, "mode": result.mode, "seed": result.seed,
            "size_bytes": result.size_bytes, "boards": boards, "cases": cases, "claims": claims}


# ---------------------------------------------------------------- writing

def write_outputs(out_dir: Path, results, info) -> bool:
    """Write every table, figure and the report; return whether figures were drawn."""
    from ..fileio import write_atomic, write_json

    plotting = _matplotlib_available()
    figures = {}
    for r in results:
        name = r.study.name
        write_atomic(out_dir / f"{name}.csv", render_csv(case_rows(r)))
        write_json(out_dir / f"{name}.json", study_document(r))
        if plotting:
            write_atomic(out_dir / f"{name}.png", study_figure_png(r))
            write_atomic(out_dir / f"{name}-board.png", board_figure_png(r))
            figures[name] = (f"{name}.png", f"{name}-board.png")
    write_atomic(out_dir / REPORT_NAME, render_report(results, info, figures))
    return plotting


def _matplotlib_available() -> bool:
    try:
        import matplotlib  # noqa: F401
        from matplotlib.figure import Figure  # noqa: F401
    except ImportError:
        return False
    return True
