"""``simnuma reproduce``: run the studies and write their tables, figures and one report.

For each study the command writes, into the output folder, ``STUDY.csv`` and
``STUDY.json`` (every case: time in ns and % of 0.0.r.0, per-link utilisation,
per-node memory load, bottleneck; each row and file records the simnuma
version, the board's name and parameter hash, the seed and the mode),
``STUDY.png`` (bars in the style of the note) and ``STUDY-board.png`` (the
board with every link direction coloured by its utilisation in the study's
most telling case), then ``REPORT.md`` with every claim PASS or FAIL and the
numbers behind it.  A failed claim is a finding, not an error: the exit status
is 0 unless the input is bad (2).
"""
from __future__ import annotations

import argparse
import csv
import io
from pathlib import Path

__all__ = ["register", "cmd_reproduce", "write_outputs", "render_report", "case_rows", "study_document"]

PLOT_HINT = "figures skipped: matplotlib is not installed; for the figures: pip install 'simnuma[plot]'"
RESULT_FORMAT = "simnuma-study-result/1"
REPORT_NAME = "REPORT.md"
OP_COLOURS = {"r": "#2c7bb6", "w": "#d7191c", "t": "#1a9641", "mixed": "#7b3294"}
SERIES_COLOURS = ("#2c7bb6", "#d7191c", "#1a9641", "#fdae61", "#7b3294", "#8c510a", "#01665e", "#c51b7d")


def register(sub) -> None:
    p = sub.add_parser(
        "reproduce", help="run the studies (the Opteron note, the X6440, what-if boards) and check their claims",
        description="Simulate every case of the given studies (default: all bundled studies; identical cases"
                    " once, in parallel), then write per study a CSV, a JSON, a figure and a board figure, and"
                    " REPORT.md with every claim PASS or FAIL. Exit status 0 even when a claim fails.")
    p.add_argument("studies", nargs="*", metavar="STUDY",
                   help="bundled study names or study YAML files (default: every bundled study)")
    p.add_argument("-o", "--output", default="reproduce", metavar="DIR",
                   help="folder for the tables, figures and REPORT.md (default: ./reproduce)")
    p.add_argument("--jobs", type=_positive_int, default=None, metavar="N",
                   help="simulations run in parallel (default: the number of CPUs)")
    p.add_argument("--exact", action="store_true",
                   help="simulate every line instead of extrapolating converged steady states")
    p.add_argument("--seed", type=int, default=1, help="random seed of every simulation (default 1)")
    p.add_argument("--size", default=None, metavar="SIZE",
                   help="array size per foreground thread for every study (default: each study's, 64 MiB)")
    p.add_argument("--list", action="store_true", help="list the bundled studies and exit")
    p.set_defaults(func=cmd_reproduce)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def cmd_reproduce(args) -> int:
    from ..errors import StudyError
    from ..fileio import progress
    from ..study import bundled_studies, default_workers, load_study, plan_jobs, run_studies
    from .run import parse_size

    if args.list:
        for name in bundled_studies():
            print(f"{name:<24} {load_study(name).title}")
        return 0
    names = args.studies or bundled_studies()
    if not names:
        raise StudyError("no study given and no bundled studies found")
    studies = [load_study(n) for n in names]
    _check_unique(studies)
    size = parse_size(args.size) if args.size else None
    mode = "exact" if args.exact else "steady"
    workers = args.jobs or default_workers()
    total = len(plan_jobs(studies, mode, args.seed, size))
    bar = progress(total=total, desc="simulating")
    try:
        results, info = run_studies(studies, workers, mode, args.seed, size, on_done=lambda job: bar.update(1))
    finally:
        bar.close()
    plotted = write_outputs(Path(args.output), results, info)
    _print_summary(results, info, Path(args.output), plotted)
    return 0


def _check_unique(studies) -> None:
    from ..errors import StudyError

    seen = {}
    for s in studies:
        if s.name in seen:
            raise StudyError(f"{s.source}: study name {s.name!r} is also the name of {seen[s.name]}; "
                             "output files would collide")
        seen[s.name] = s.source


def _print_summary(results, info, out_dir: Path, plotted: bool) -> None:
    width = max(len(r.study.name) for r in results)
    for r in results:
        print(f"{r.study.name:<{width}}  {len(r.study.cases):>4} cases  {r.passed}/{len(r.outcomes)} claims pass"
              + (f"  ({r.failed} FAIL)" if r.failed else ""))
    print(f"{info['simulations']} simulations on {info['workers']} workers in {info['wall_s']:.0f} s; "
          f"wrote {out_dir / REPORT_NAME} and, per study, CSV, JSON" + (" and figures" if plotted else ""))
    if not plotted:
        print(PLOT_HINT)


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
        links = {(l["src"], l["dst"]): l["utilization"] for l in data["links"]}
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


# ---------------------------------------------------------------- the report

def _md_escape(text: str) -> str:
    return str(text).replace("|", "\\|")


def _phenomenon(text: str) -> str:
    return f"phenomenon {text}" if text.isdigit() else text


def _verdict(outcome) -> str:
    return f"**{outcome.verdict}**"


def render_report(results, info, figures: dict) -> str:
    """``REPORT.md``: run facts, a summary table, every claim with its numbers, then each study."""
    from .. import __version__
    from ..study import LOADS_GBps
    from ..units import format_size

    first = results[0]
    sizes = sorted({r.size_bytes for r in results})
    out = ["# simnuma studies: reproduction report", "",
           f"simnuma {__version__}, mode {first.mode}, seed {first.seed}, arrays of "
           f"{', '.join(format_size(s) for s in sizes)} per foreground thread. "
           f"{info['simulations']} simulations for {info['cases']} cases (identical cases are simulated once) "
           f"on {info['workers']} worker processes in {info['wall_s']:.0f} s "
           f"({info['cpu_s']:.0f} CPU seconds of simulation).", "",
           "Background loads per thread: " + ", ".join(
               f"{name} {rate:g} GB/s" + (" (assumption)" if name in ("medium", "high") else "")
               for name, rate in LOADS_GBps.items() if rate) + "; idle = no background threads. "
           "Times are percentages of one thread reading local memory alone on the same board (0.0.r.0). "
           "Multi-thread results are predictions of the model, not fits.", ""]
    if not figures:
        out += [PLOT_HINT, ""]
    out += _summary_table(results)
    out += _claims_table(results)
    for r in results:
        out += _study_section(r, figures.get(r.study.name))
    out += _run_section(info)
    return "\n".join(out) + "\n"


def _summary_table(results) -> list:
    out = ["## Summary", "", "| study | boards | cases | claims | PASS | FAIL |", "|---|---|---:|---:|---:|---:|"]
    for r in results:
        boards = ", ".join(f"{label} ({b.hash})" for label, b in r.study.boards.items())
        out.append(f"| [{r.study.name}](#{r.study.name}) | {boards} | {len(r.study.cases)} | {len(r.outcomes)} "
                   f"| {r.passed} | {r.failed} |")
    passed = sum(r.passed for r in results)
    total = sum(len(r.outcomes) for r in results)
    out += [f"| **all** | | {sum(len(r.study.cases) for r in results)} | {total} | {passed} | {total - passed} |",
            ""]
    return out


def _claims_table(results) -> list:
    out = ["## Claims", "", "| study | phenomenon | claim | verdict | numbers |", "|---|---|---|---|---|"]
    for r in results:
        for o in r.outcomes:
            out.append(f"| {r.study.name} | {_md_escape(_phenomenon(o.claim.phenomenon))} | "
                       f"{_md_escape(o.claim.says)} | {_verdict(o)} | {_md_escape(o.numbers)} |")
    return out + [""]


def _study_section(r, figure) -> list:
    study = r.study
    out = [f"<a id=\"{study.name}\"></a>", f"## {study.name}: {study.title}", "", study.description, ""]
    for label, b in study.boards.items():
        change = f", changes {b.changes}" if b.changes else ""
        out.append(f"- board **{label}**: {b.topology.name} ({b.base}{change}), parameters hash {b.hash}, "
                   f"coherence {b.topology.coherence}; 0.0.r.0 alone = {r.baselines[label] / 1e6:.3f} ms")
    out += ["", f"Data: [{study.name}.csv]({study.name}.csv), [{study.name}.json]({study.name}.json). "
                f"Study file: `{study.source}`.", ""]
    if figure:
        out += [f"![{study.name}]({figure[0]})", "", f"![{study.name} board]({figure[1]})", ""]
    out += ["Claims:", ""]
    out += [f"- {_verdict(o)} ({_phenomenon(o.claim.phenomenon)}) {o.claim.says} — {o.numbers}" for o in r.outcomes]
    out.append("")
    out += _matrix_tables(r) + _case_table(r)
    return out


def _case_table(r) -> list:
    from ..study import MATRIX_GROUP

    cases = [c for c in r.study.cases if MATRIX_GROUP not in c.groups]
    if not cases:
        return []
    several = len(r.study.boards) > 1
    head = ("| " + ("board | " if several else "") +
            "case | hops | time | % of 0.0.r.0 | bottleneck | busiest link | fullest buffer (time full) |")
    out = [head, "|" + "---|" * (7 + several)]
    for c in cases:
        m, data = r.metrics[c.key], r.results[c.key]
        busiest = max(data["links"], key=lambda l: l["utilization"]) if data["links"] else None
        link = f"{busiest['src']}->{busiest['dst']} {100 * busiest['utilization']:.0f}%" if busiest else "-"
        hops = ",".join(map(str, c.hops(r.study.boards[c.board].topology)))
        out.append("| " + (f"{c.board} | " if several else "") + f"{c.text} | {hops} | {m.time_ns / 1e6:.3f} ms | "
                   f"{m.percent:.1f}% | {m.bottleneck_text} | {link} | "
                   f"{_fullest_queue(data)} |")
    return out + [""]


def _fullest_queue(data: dict) -> str:
    """The buffer queue full for the longest time, e.g. ``link 0->1 posted cmd 100%``."""
    queues = data.get("queues") or []
    if not queues or queues[0]["full_fraction"] <= 0:
        return "-"
    return f"{queues[0]['name']} {100 * queues[0]['full_fraction']:.0f}%"


def _matrix_tables(r) -> list:
    """Latency (ns) and bandwidth (GB/s) of single-thread reads, rows = thread node, columns = memory node."""
    out = []
    for label, board in r.study.boards.items():
        grid = _matrix(r, label)
        if not grid:
            continue
        ids = board.topology.node_ids
        for title, field, fmt in (("mean read latency, ns", "latency_ns", "{:.0f}"),
                                  ("read bandwidth, GB/s", "bandwidth_GBps", "{:.2f}")):
            out += [f"{label}: {title} (row: thread on node, column: memory on node)", "",
                    "| | " + " | ".join(f"N{n}" for n in ids) + " |", "|---|" + "---:|" * len(ids)]
            for a in ids:
                out.append(f"| N{a} | " + " | ".join(fmt.format(getattr(grid[(a, b)], field)) for b in ids) + " |")
            out.append("")
    return out


def _matrix(r, label) -> dict:
    """``{(thread node, memory node): CaseMetrics}`` of the board's matrix cases."""
    from ..study import MATRIX_GROUP
    from ..workload import parse_spec

    grid = {}
    for c in r.study.cases:
        if c.board == label and MATRIX_GROUP in c.groups:
            spec = parse_spec(c.foreground[0])
            grid[(spec.node, spec.mem_node)] = r.metrics[c.key]
    return grid


def _run_section(info) -> list:
    out = ["## Run", "", f"{info['simulations']} simulations in {info['wall_s']:.1f} s wall on {info['workers']} "
                         f"worker processes; {info['cpu_s']:.1f} CPU seconds of simulation in all "
                         "(a study's figure counts the simulations it shares with others).", "",
           "| study | CPU seconds |", "|---|---:|"]
    out += [f"| {name} | {seconds:.1f} |" for name, seconds in info["cpu_s_per_study"].items()]
    out += ["", "The costliest simulations:", "", "| board | foreground | background | CPU seconds |",
            "|---|---|---|---:|"]
    for s in info["costliest"]:
        out.append(f"| {s['board']} | {s['foreground']} | {s['background'] or '-'} | {s['cpu_s']:.1f} |")
    return out + [""]


# ---------------------------------------------------------------- figures

def _figure(width_in: float, height_in: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=120, bbox_inches="tight")
    return buffer.getvalue()


def _op_colour(case) -> str:
    ops = {spec.split(".")[2] for spec in case.foreground}
    return OP_COLOURS[ops.pop()] if len(ops) == 1 else OP_COLOURS["mixed"]


def study_figure_png(r) -> bytes:
    """The study's figure, by its plot kind."""
    kind = r.study.plot
    draw = {"bars": _draw_bars, "loads": _draw_loads, "boards": _draw_boards, "matrix": _draw_matrix}[kind]
    return _png(draw(r))


def _bar_label(r, case) -> str:
    from ..study import case_label

    topo = r.study.boards[case.board].topology
    label = case_label(case, topo)
    if case.text != case.placement:
        label += " + " + case.text.split(" + ", 1)[1]
    return label


def _draw_bars(r):
    """One horizontal bar per case: % of 0.0.r.0, labelled with the notation and hop counts."""
    cases = r.study.cases
    fig = _figure(9.0, 1.2 + 0.42 * len(cases))
    ax = fig.add_subplot(1, 1, 1)
    labels = [_bar_label(r, c) if len(r.study.boards) == 1 else f"{c.board}: {_bar_label(r, c)}" for c in cases]
    values = [r.metrics[c.key].percent for c in cases]
    ys = list(range(len(cases)))[::-1]
    ax.barh(ys, values, color=[_op_colour(c) for c in cases], height=0.65)
    for y, v in zip(ys, values):
        ax.text(v + 1, y, f"{v:.0f}%", va="center", fontsize=8)
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=8, family="monospace")
    ax.axvline(100, color="#555555", linewidth=0.8, linestyle="--")
    ax.set_xlim(0, max(values) * 1.15)
    ax.set_xlabel(_percent_axis(r))
    ax.set_title(r.study.title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return fig


def _percent_axis(r, label=None) -> str:
    label = label or next(iter(r.study.boards))
    return f"time, % of 0.0.r.0 alone on {label} (= {r.baselines[label] / 1e6:.2f} ms)"


def _draw_loads(r):
    """Bars grouped by background load, one colour per placement, one panel per subscription."""
    from ..study import LOADS_GBps

    study = r.study
    subs = list(dict.fromkeys(c.subscription for c in study.cases if c.subscription)) or [None]
    placements = list(dict.fromkeys(c.placement for c in study.cases))
    loads = list(dict.fromkeys(c.load for c in study.cases))
    loads.sort(key=lambda l: list(LOADS_GBps).index(l) if l in LOADS_GBps else len(LOADS_GBps))
    fig = _figure(max(8.0, 1.6 * len(loads) * max(1, len(placements)) / 3), 3.6 * len(subs) + 0.8)
    width = 0.8 / len(placements)
    top = max(m.percent for m in r.metrics.values()) * 1.3  # room for the legend above the bars
    for i, sub in enumerate(subs):
        ax = fig.add_subplot(len(subs), 1, i + 1)
        for j, placement in enumerate(placements):
            xs, ys = [], []
            for k, load in enumerate(loads):
                case = _find_case(study, placement, load, sub)
                if case is not None:
                    xs.append(k - 0.4 + width * (j + 0.5))
                    ys.append(r.metrics[case.key].percent)
            label = _bar_label(r, _find_case(study, placement, "idle", None) or _any_case(study, placement))
            bars = ax.bar(xs, ys, width * 0.92, color=SERIES_COLOURS[j % len(SERIES_COLOURS)],
                          label=label.split(" + ")[0])
            ax.bar_label(bars, fmt="%.0f", fontsize=6.5, padding=1)
        ax.set_xticks(range(len(loads)))
        ax.set_xticklabels([_load_label(l) for l in loads], fontsize=8)
        ax.axhline(100, color="#555555", linewidth=0.8, linestyle="--")
        ax.set_ylim(0, top)
        ax.set_ylabel("% of 0.0.r.0", fontsize=8)
        ax.set_title(f"{study.title}" + (f" — {sub} subscription" if sub else ""), fontsize=9)
        ax.grid(axis="y", alpha=0.3)
        if i == 0:
            ax.legend(loc="upper left", ncol=min(4, len(placements)), prop={"family": "monospace", "size": 7})
        if i == len(subs) - 1:
            ax.set_xlabel("background load; bars: " + _percent_axis(r), fontsize=8)
    return fig


def _load_label(load: str) -> str:
    from ..study import LOADS_GBps

    rate = LOADS_GBps.get(load)
    return f"{load}\n{rate:g} GB/s per thread" if rate else load


def _find_case(study, placement, load, sub):
    for c in study.cases:
        if c.placement == placement and c.load == load and (c.subscription == sub or load == "idle"):
            return c
    return None


def _any_case(study, placement):
    return next(c for c in study.cases if c.placement == placement)


def _draw_boards(r, ax=None, cases=None):
    """Bars grouped by case, one colour per board, in % of the first board's 0.0.r.0."""
    study = r.study
    cases = cases if cases is not None else study.cases
    texts = list(dict.fromkeys(c.text for c in cases))
    labels = list(study.boards)
    reference = labels[0]
    fig = None
    if ax is None:
        fig = _figure(max(7.0, 1.3 * len(texts) * len(labels) / 2 + 2), 4.8)
        ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / len(labels)
    base = r.baselines[reference]
    for j, label in enumerate(labels):
        xs, ys = [], []
        for k, text in enumerate(texts):
            if (label, text) in r.metrics:
                xs.append(k - 0.4 + width * (j + 0.5))
                ys.append(100.0 * r.metrics[(label, text)].time_ns / base)
        bars = ax.bar(xs, ys, width * 0.92, color=SERIES_COLOURS[j % len(SERIES_COLOURS)], label=label)
        ax.bar_label(bars, fmt="%.0f", fontsize=7, padding=1)
    ax.set_xticks(range(len(texts)))
    ax.set_xticklabels([_hops_label(r, text, labels) for text in texts], fontsize=7, family="monospace")
    ax.axhline(100, color="#555555", linewidth=0.8, linestyle="--")
    ax.set_ylabel(_percent_axis(r, reference), fontsize=8)
    ax.set_title(study.title, fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return fig if fig is not None else ax.figure


def _hops_label(r, text, labels) -> str:
    per_board = []
    for label in labels:
        key = (label, text)
        if key in r.metrics:
            hops = r.study.case(key).hops(r.study.boards[label].topology)
            per_board.append(",".join(map(str, hops)))
    return f"{text.replace(' + ', chr(10) + '+ ')}\nhops {' / '.join(per_board)}"


def _draw_matrix(r):
    """Latency and bandwidth heatmaps of the matrix per board, and bars for the other cases."""
    from ..study import MATRIX_GROUP

    labels = [label for label in r.study.boards if _matrix(r, label)]
    others = [c for c in r.study.cases if MATRIX_GROUP not in c.groups]
    n = max(len(r.study.boards[label].topology.node_ids) for label in labels)
    cell_in = 0.42 if n > 4 else 0.7
    rows = len(labels) + (1 if others else 0)
    fig = _figure(2 * (n * cell_in + 1.8), len(labels) * (n * cell_in + 1.2) + (4.2 if others else 0))
    grid = fig.add_gridspec(rows, 2, height_ratios=[n * cell_in + 1.2] * len(labels) + ([4.2] if others else []))
    latency_max = max(m.latency_ns for label in labels for m in _matrix(r, label).values())
    bandwidth_max = max(m.bandwidth_GBps for label in labels for m in _matrix(r, label).values())
    for i, label in enumerate(labels):
        _heatmap(fig.add_subplot(grid[i, 0]), r, label, "latency_ns", "mean read latency, ns", "{:.0f}",
                 latency_max, "Reds")
        _heatmap(fig.add_subplot(grid[i, 1]), r, label, "bandwidth_GBps", "read bandwidth, GB/s", "{:.2f}",
                 bandwidth_max, "Blues")
    if others:
        _draw_boards(r, ax=fig.add_subplot(grid[rows - 1, :]), cases=others)
    fig.suptitle(r.study.title, fontsize=10)
    return fig


def _heatmap(ax, r, label, field, title, fmt, vmax, cmap):
    topo = r.study.boards[label].topology
    ids = topo.node_ids
    grid = _matrix(r, label)
    values = [[getattr(grid[(a, b)], field) for b in ids] for a in ids]
    image = ax.imshow(values, cmap=cmap, vmin=0, vmax=vmax)
    for i, a in enumerate(ids):
        for j, b in enumerate(ids):
            v = values[i][j]
            ax.text(j, i, f"{fmt.format(v)}\n{topo.hops(a, b)}h", ha="center", va="center", fontsize=6.5,
                    color="white" if v > 0.6 * vmax else "black")
    ax.set_xticks(range(len(ids)))
    ax.set_xticklabels([f"M{b}" for b in ids], fontsize=7)
    ax.set_yticks(range(len(ids)))
    ax.set_yticklabels([f"N{a}" for a in ids], fontsize=7)
    ax.set_xlabel("memory on node", fontsize=7)
    ax.set_ylabel("thread on node (core 0)", fontsize=7)
    ax.set_title(f"{label}: {title}", fontsize=8)
    ax.figure.colorbar(image, ax=ax, shrink=0.8)


def _figure_keys(r) -> list:
    """The cases the board figure shows: the study's choice, else each board's busiest-link case."""
    if r.study.board_figure:
        return list(r.study.board_figure)
    keys = []
    for label in r.study.boards:
        cases = [c for c in r.study.cases if c.board == label]
        keys.append(max(cases, key=lambda c: max(r.metrics[c.key].links.values(), default=0.0)).key)
    return keys


def board_figure_png(r) -> bytes:
    """The board(s) with each link direction coloured by its utilisation in the chosen case."""
    from ..draw import draw_topology

    keys = _figure_keys(r)
    fig = _figure(6.0 * len(keys), 5.2)
    for i, key in enumerate(keys):
        ax = fig.add_subplot(1, len(keys), i + 1)
        topo = r.study.boards[key[0]].topology
        m = r.metrics[key]
        draw_topology(topo, ax=ax, link_values=dict(m.links),
                      link_label_fmt=lambda src, dst, bw, value: "" if value is None else f"{100 * value:.0f}%",
                      title=f"{key[0]}: {key[1]}\n{m.time_ns / 1e6:.2f} ms = {m.percent:.0f}% of 0.0.r.0 on "
                            f"{key[0]}; bottleneck {m.bottleneck}\nfullest buffer: "
                            f"{_fullest_queue(r.results[key])} of the time full")
    return _png(fig)
