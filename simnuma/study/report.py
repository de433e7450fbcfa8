"""``REPORT.md``: every study's claims PASS or FAIL with the numbers behind them, its cases, and
what the run used (version, seed, mode, boards)."""
from __future__ import annotations

from ..analytic import AGREES, beside

PLOT_HINT = "figures skipped: matplotlib is not installed; for the figures: pip install 'simnuma[plot]'"


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
    from ..units import format_size
    from . import LOADS_GBps

    first = results[0]
    sizes = sorted({r.size_bytes for r in results})
    out = ["# simnuma studies: reproduction report", "",
           f"simnuma {__version__}, mode {first.mode}, seed {first.seed}, arrays of "
           f"{', '.join(format_size(s) for s in sizes)} per foreground thread. "
           f"{info['simulations']} simulations for {info['cases']} cases (identical cases are simulated once) "
           f"on {info['workers']} worker processes in {info['wall_s']:.0f} s "
           f"({info['cpu_s']:.0f} CPU seconds of simulation{_cached_text(info)}).", "",
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
    from . import MATRIX_GROUP

    cases = [c for c in r.study.cases if MATRIX_GROUP not in c.groups]
    if not cases:
        return []
    several = len(r.study.boards) > 1
    head = ("| " + ("board | " if several else "") +
            "case | hops | time | % of 0.0.r.0 | bottleneck | busiest link | fullest buffer (time full) | analytic |")
    out = [head, "|" + "---|" * (8 + several)]
    notes: list[str] = []
    within = 0     # cases where the analytic model agrees with the simulation
    for c in cases:
        m, data = r.metrics[c.key], r.results[c.key]
        busiest = max(data["links"], key=lambda l: l["utilization"]) if data["links"] else None
        link = f"{busiest['src']}->{busiest['dst']} {100 * busiest['utilization']:.0f}%" if busiest else "-"
        hops = ",".join(map(str, c.hops(r.study.boards[c.board].topology)))
        analytic = ""
        if c.key in r.analytic:
            diff, note = beside(data, r.analytic[c.key])
            within += abs(diff) <= AGREES
            analytic = f"{r.analytic[c.key] / 1e6:.3f} ms ({100 * diff:+.1f}%)" + (f" [{len(notes) + 1}]" if note else "")
            if note:
                notes.append(f"[{len(notes) + 1}] {c.text}: {note}")
        out.append("| " + (f"{c.board} | " if several else "") + f"{c.text} | {hops} | {m.time_ns / 1e6:.3f} ms | "
                   f"{m.percent:.1f}% | {m.bottleneck_text} | {link} | "
                   f"{_fullest_queue(data)} | {analytic} |")
    if r.analytic:
        out += ["", f"The analytic model (docs/analytic.md) is within {100 * AGREES:.0f}% of the simulation on {within}"
                f" of {len(cases)} cases; where it is not:" if notes else
                f"The analytic model (docs/analytic.md) is within {100 * AGREES:.0f}% of the simulation on every case."]
        out += [f"- {note}" for note in notes]
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
    from ..workload import parse_spec
    from . import MATRIX_GROUP

    grid = {}
    for c in r.study.cases:
        if c.board == label and MATRIX_GROUP in c.groups:
            spec = parse_spec(c.foreground[0])
            grid[(spec.node, spec.mem_node)] = r.metrics[c.key]
    return grid


def _cached_text(info) -> str:
    """How many results came from the result cache (their CPU seconds are those of the run that made them)."""
    n = info.get("cached", 0)
    return f"; {n} results from the result cache, with the CPU seconds of the run that made them" if n else ""


def _run_section(info) -> list:
    out = ["## Run", "", f"{info['simulations']} simulations in {info['wall_s']:.1f} s wall on {info['workers']} "
                         f"worker processes; {info['cpu_s']:.1f} CPU seconds of simulation in all "
                         f"(a study's figure counts the simulations it shares with others{_cached_text(info)}).", "",
           "| study | CPU seconds |", "|---|---:|"]
    out += [f"| {name} | {seconds:.1f} |" for name, seconds in info["cpu_s_per_study"].items()]
    out += ["", "The costliest simulations:", "", "| board | foreground | background | CPU seconds |",
            "|---|---|---|---:|"]
    for s in info["costliest"]:
        out.append(f"| {s['board']} | {s['foreground']} | {s['background'] or '-'} | {s['cpu_s']:.1f} |")
    return out + [""]
