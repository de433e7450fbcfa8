"""A study's figures (matplotlib, an optional extra): bars in the style of the note, loads,
matrices, and the board with each link direction coloured by its utilisation."""
from __future__ import annotations

import io

from .report import _fullest_queue, _matrix

OP_COLOURS = {"r": "#2c7bb6", "w": "#d7191c", "t": "#1a9641", "mixed": "#7b3294"}
SERIES_COLOURS = ("#2c7bb6", "#d7191c", "#1a9641", "#fdae61", "#7b3294", "#8c510a", "#01665e", "#c51b7d")


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
    from . import case_label

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
    from . import LOADS_GBps

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
    from . import LOADS_GBps

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
    from . import MATRIX_GROUP

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
