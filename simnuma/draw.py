"""Pictures of boards: sockets as boxes, every link direction as its own arrow.

:func:`draw_topology` draws a :class:`~simnuma.topology.Topology` on a
matplotlib Axes: each node is a box labelled ``N<id>`` with its core count and
peak memory bandwidth, each link is two parallel arrows (one per direction)
labelled with that direction's bandwidth, and each I/O port is a small tag
attached to its node.  Given ``link_values`` (a number in [0, 1] per
direction, e.g. utilisation from a simulation) the arrows are coloured by
value and a colour bar is added.  :func:`save_drawing` renders to PNG, SVG or
PDF and writes the file atomically.

matplotlib is the optional ``plot`` extra; it is imported only when drawing,
through its Agg canvas (no pyplot, no global backend switch).
"""
from __future__ import annotations

import io
import math
from pathlib import Path

import networkx as nx

from .errors import SimnumaError
from .fileio import write_atomic
from .tables import count

__all__ = ["draw_topology", "save_drawing", "board_positions", "DEFAULT_LINK_LABEL", "FORMATS"]

DEFAULT_LINK_LABEL = "{bandwidth:g} GB/s"
FORMATS = ("png", "svg", "pdf")
LINK_COLOUR = "#33658a"
NODE_FACE = "#f4f1de"
NODE_EDGE = "#3d405b"
IO_COLOUR = "#81b29a"
VALUE_COLOURS = ("#2c7bb6", "#fdae61", "#d7191c")  # 0 -> blue, 0.5 -> orange, 1 -> red
BOX_WIDTH = 0.46   # node box size, as a fraction of the shortest distance between two nodes
BOX_HEIGHT = 0.30
BOX_PAD = 0.02     # rounded border around the box, same unit
ARROW_OFFSET = 0.05  # distance of each direction's arrow from the link's centre line, same unit
LABEL_OFFSET = 0.12   # distance of each direction's label from the centre line, same unit
MARGIN = 0.5          # space around the outermost boxes, same unit
INCHES_PER_UNIT = 2.4  # picture scale: the shortest link is this long
COLOUR_BAR_INCHES = 1.1  # room for the colour bar of link_values, right of the board


def _matplotlib():
    """Import what drawing needs, or say how to install it."""
    try:
        import matplotlib
        import matplotlib.cm
        import matplotlib.colors
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise SimnumaError("drawing needs matplotlib: pip install 'simnuma[plot]'") from None
    return matplotlib, Figure, FigureCanvasAgg


def board_positions(topo) -> dict:
    """``{node: (x, y)}`` from the board's ``layout``, or a deterministic automatic one."""
    if topo.layout:
        return {n: (float(x), float(y)) for n, (x, y) in topo.layout.items()}
    if len(topo.nodes) == 1:
        return {topo.node_ids[0]: (0.0, 0.0)}
    return _auto_layout(topo.graph)


def _auto_layout(graph) -> dict:
    """Kamada-Kawai from a few deterministic starts; the result with the fewest crossing links."""
    starts = [nx.circular_layout(graph)] + [nx.spring_layout(graph, seed=seed) for seed in range(4)]
    best: dict = {}
    best_crossings = math.inf   # the first start is the best so far
    for start in starts:
        pos = nx.kamada_kawai_layout(graph, pos=start)
        pos = {n: (round(float(p[0]), 6), round(float(p[1]), 6)) for n, p in pos.items()}
        crossings = len(_crossing_pairs(list(graph.edges), pos))
        if crossings < best_crossings:
            best, best_crossings = pos, crossings
    return best


def _unit_length(pos: dict) -> float:
    """The shortest distance between two nodes (1 for a single node)."""
    points = list(pos.values())
    best = min((math.dist(p, q) for i, p in enumerate(points) for q in points[i + 1:]), default=1.0)
    return best if best > 0 else 1.0


def value_colour_bar(fig, cax, label="utilisation") -> None:
    """The colour bar of link values 0..1 in the Axes ``cax`` of ``fig``."""
    matplotlib, _Figure, _Canvas = _matplotlib()
    cmap = matplotlib.colors.LinearSegmentedColormap.from_list("simnuma_value", VALUE_COLOURS)
    fig.colorbar(matplotlib.cm.ScalarMappable(norm=matplotlib.colors.Normalize(0, 1), cmap=cmap), cax=cax,
                 label=label)


def draw_topology(topo, ax=None, link_values=None, link_label_fmt=DEFAULT_LINK_LABEL,
                  title=None, value_label="utilisation", show_io=True, colour_bar=True):
    """Draw ``topo`` on ``ax`` (a new Agg figure when None) and return the Axes.

    ``link_values`` maps directions ``(src, dst)`` to numbers in [0, 1] that
    colour the arrows (values outside are clipped); directions left out are
    drawn grey.  Links in parallel between two nodes are one arrow each way,
    their count written before the label (``2 x 4.0 GB/s``).  ``link_label_fmt`` is a format string with the fields
    ``bandwidth`` (GB/s), ``value`` (from ``link_values``, or None), ``src``
    and ``dst``, or a callable ``(src, dst, bandwidth_GBps, value) -> str``;
    None or '' draws no labels.  With ``link_values``, a colour bar is drawn
    beside the board unless ``colour_bar`` is False (a caller drawing the
    same Axes again, as an animation does for every frame, draws one itself:
    :func:`value_colour_bar`).
    """
    matplotlib, Figure, FigureCanvasAgg = _matplotlib()
    pos = board_positions(topo)
    unit = _unit_length(pos)
    _check_values(topo, link_values)
    own_figure = ax is None
    if own_figure:
        fig = Figure(dpi=100)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
    cmap = matplotlib.colors.LinearSegmentedColormap.from_list("simnuma_value", VALUE_COLOURS)
    box = (BOX_WIDTH * unit, BOX_HEIGHT * unit)
    crossing = _crossing_links(topo, pos)
    for link in topo.links:
        for src, dst in link.directions:
            value = None if link_values is None else link_values.get((src, dst))
            colour = _direction_colour(value, link_values, cmap)
            label = _label(link_label_fmt, src, dst, link.bandwidth_GBps(src, dst), value)
            if label and link.count > 1:
                label = f"{link.count} x {label}"   # links in parallel: one arrow, their count in the label
            dashed = link_values is not None and value is None
            _draw_direction(ax, pos[src], pos[dst], box, unit, colour, label,
                            near_source=(link.a, link.b) in crossing, dashed=dashed)
    for node in topo.nodes:
        _draw_node(ax, node, pos[node.id], box, unit)
    tags = _draw_io(ax, topo, pos, box, unit) if show_io else []
    _finish_axes(ax, list(pos.values()), tags, unit, title if title is not None else _default_title(topo))
    colour_bar = colour_bar and link_values is not None
    if own_figure:
        _fit_figure(ax, unit, COLOUR_BAR_INCHES if colour_bar else 0.0)
    if colour_bar:
        if own_figure:  # in the space _fit_figure left on the right
            fig = ax.figure
            left = 1.0 - (COLOUR_BAR_INCHES - 0.15) / fig.get_figwidth()
            value_colour_bar(fig, fig.add_axes((left, 0.15, 0.2 / fig.get_figwidth(), 0.65)), value_label)
        else:
            mappable = matplotlib.cm.ScalarMappable(norm=matplotlib.colors.Normalize(0, 1), cmap=cmap)
            ax.figure.colorbar(mappable, ax=ax, shrink=0.6, pad=0.02, label=value_label)
    return ax


def save_drawing(topo, path, **options) -> Path:
    """Draw ``topo`` and write it to ``path`` (.png, .svg or .pdf) atomically."""
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise SimnumaError(f"{path}: cannot tell the picture format; use a name ending in "
                           + ", ".join(f".{f}" for f in FORMATS))
    ax = draw_topology(topo, **options)
    buffer = io.BytesIO()
    ax.figure.savefig(buffer, format=fmt, bbox_inches="tight", dpi=150)
    return write_atomic(path, buffer.getvalue())


# ---------------------------------------------------------------- pieces

def _check_values(topo, link_values) -> None:
    if link_values is None:
        return
    directions = set(topo.directions)
    unknown = [d for d in link_values if tuple(d) not in directions]
    if unknown:
        raise ValueError(f"link_values: {unknown[0]!r} is not a link direction of board {topo.name!r}")


def _direction_colour(value, link_values, cmap):
    if link_values is None:
        return LINK_COLOUR
    if value is None:
        return "#bbbbbb"
    return cmap(min(1.0, max(0.0, float(value))))


def _label(fmt, src, dst, bandwidth, value) -> str:
    if not fmt:
        return ""
    if callable(fmt):
        return str(fmt(src, dst, bandwidth, value))
    return fmt.format(bandwidth=bandwidth, value=value, src=src, dst=dst)


def _fit_figure(ax, unit: float, right_inches: float) -> None:
    """Size the figure so that the axes fill it at INCHES_PER_UNIT (within 3..18 in),
    leaving ``right_inches`` free on the right."""
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    title_in = 0.4
    width = max(3.0, min(18.0, (x1 - x0) / unit * INCHES_PER_UNIT))
    height = max(2.5, min(18.0, (y1 - y0) / unit * INCHES_PER_UNIT + title_in))
    ax.figure.set_size_inches(width + right_inches, height)
    ax.set_position((0.0, 0.0, width / (width + right_inches), 1.0 - title_in / height))


def _default_title(topo) -> str:
    return (f"{topo.name}: {count(len(topo.nodes), 'node')}, {count(topo.link_count(), 'link')}, "
            f"diameter {count(topo.diameter(), 'hop')}, "
            f"coherence {topo.coherence}")


def _box_edge(box: tuple, ux: float, uy: float) -> float:
    """Distance from a box's centre to its edge along the unit vector (ux, uy)."""
    half_w, half_h = box[0] / 2, box[1] / 2
    reach_x = half_w / abs(ux) if ux else math.inf
    reach_y = half_h / abs(uy) if uy else math.inf
    return min(reach_x, reach_y)


def _box_exit(box: tuple, ox: float, oy: float, ux: float, uy: float) -> float:
    """How far a ray from (ox, oy) (relative to a box's centre) along (ux, uy) runs inside the box."""
    half_w, half_h = box[0] / 2 + BOX_PAD * _unit_of(box), box[1] / 2 + BOX_PAD * _unit_of(box)
    reach_x = ((half_w if ux > 0 else -half_w) - ox) / ux if ux else math.inf
    reach_y = ((half_h if uy > 0 else -half_h) - oy) / uy if uy else math.inf
    return max(0.0, min(reach_x, reach_y))


def _unit_of(box: tuple) -> float:
    return box[0] / BOX_WIDTH


def _draw_direction(ax, p_src, p_dst, box, unit, colour, label, near_source, dashed=False):
    """One arrow from the box at ``p_src`` to the box at ``p_dst``, offset to its right."""
    from matplotlib.patches import FancyArrowPatch

    dx, dy = p_dst[0] - p_src[0], p_dst[1] - p_src[1]
    length = math.hypot(dx, dy)
    ux, uy = dx / length, dy / length
    nx_, ny_ = uy, -ux  # the right-hand normal: the two directions sit on opposite sides
    off = ARROW_OFFSET * unit
    gap = 0.03 * unit
    start_gap = _box_exit(box, nx_ * off, ny_ * off, ux, uy) + gap
    end_gap = _box_exit(box, nx_ * off, ny_ * off, -ux, -uy) + gap
    start = (p_src[0] + ux * start_gap + nx_ * off, p_src[1] + uy * start_gap + ny_ * off)
    end = (p_dst[0] - ux * end_gap + nx_ * off, p_dst[1] - uy * end_gap + ny_ * off)
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12, linewidth=2.2,
                                 color=colour, shrinkA=0, shrinkB=0, zorder=2,
                                 linestyle=(0, (3, 2)) if dashed else "-"))
    if not label:
        return
    t = 0.24 if near_source else 0.5
    lx = start[0] + (end[0] - start[0]) * t + nx_ * (LABEL_OFFSET - ARROW_OFFSET) * unit
    ly = start[1] + (end[1] - start[1]) * t + ny_ * (LABEL_OFFSET - ARROW_OFFSET) * unit
    angle = math.degrees(math.atan2(dy, dx))
    if angle > 90 or angle <= -90:
        angle -= 180 if angle > 0 else -180
    ax.text(lx, ly, label, rotation=angle, rotation_mode="anchor", ha="center", va="center",
            fontsize=7.5, color="#222222", zorder=4,
            bbox={"boxstyle": "round,pad=0.12", "facecolor": "white", "edgecolor": "none", "alpha": 0.8})


def _draw_node(ax, node, p, box, unit):
    from matplotlib.patches import FancyBboxPatch

    w, h = box
    ax.add_patch(FancyBboxPatch((p[0] - w / 2, p[1] - h / 2), w, h, boxstyle=f"round,pad={BOX_PAD * unit}",
                                facecolor=NODE_FACE, edgecolor=NODE_EDGE, linewidth=1.5, zorder=3))
    cores = count(node.cores, "core")
    ax.text(p[0], p[1] + h * 0.2, f"N{node.id}", ha="center", va="center", fontsize=11,
            fontweight="bold", color=NODE_EDGE, zorder=4)
    ax.text(p[0], p[1] - h * 0.22, f"{cores}\nmem {node.memory_bandwidth_GBps:g} GB/s", ha="center",
            va="center", fontsize=7.5, color=NODE_EDGE, zorder=4, linespacing=1.2)


def _draw_io(ax, topo, pos, box, unit) -> list:
    """A tag per I/O port, on the side of its node that is farthest from its links.

    Returns points that the axes must include so that the tags are not cut off.
    """
    extents = []
    taken = {n: [_angle(pos[n], pos[m]) for m in topo.graph.neighbors(n)] for n in topo.node_ids}
    centre = (sum(p[0] for p in pos.values()) / len(pos), sum(p[1] for p in pos.values()) / len(pos))
    for node, name in topo.io_ports:
        angle = _free_angle(taken[node], _angle(centre, pos[node]) if pos[node] != centre else 90.0)
        taken[node].append(angle)
        rad = math.radians(angle)
        ux, uy = math.cos(rad), math.sin(rad)
        edge = _box_edge(box, ux, uy) + 0.02 * unit
        stub = 0.16 * unit
        x0, y0 = pos[node][0] + ux * edge, pos[node][1] + uy * edge
        x1, y1 = x0 + ux * stub, y0 + uy * stub
        ax.plot([x0, x1], [y0, y1], color=IO_COLOUR, linewidth=2.2, linestyle=(0, (2, 1)), zorder=2)
        tag = name or "I/O"
        tx, ty = x1 + ux * 0.02 * unit, y1 + uy * 0.02 * unit
        ax.text(tx, ty, tag, ha=_side(ux, "left", "right"), va=_side(uy, "bottom", "top"), fontsize=7,
                color="#1d3557", zorder=4,
                bbox={"boxstyle": "round,pad=0.2", "facecolor": "#e9f5ee", "edgecolor": IO_COLOUR})
        # the tag's far corner, from a rough text size (7 pt characters at INCHES_PER_UNIT)
        width, height = (len(tag) * 0.026 + 0.06) * unit, 0.1 * unit
        extents.append((tx + width * _reach(ux), ty + height * _reach(uy)))
    return extents


def _reach(component: float) -> float:
    """How much of a tag's size lies beyond its anchor along one axis (see _side)."""
    if abs(component) < 0.35:
        return 0.5 if component >= 0 else -0.5
    return 1.0 if component > 0 else -1.0


def _side(component: float, positive: str, negative: str) -> str:
    if abs(component) < 0.35:
        return "center"
    return positive if component > 0 else negative


def _angle(p_from, p_to) -> float:
    return math.degrees(math.atan2(p_to[1] - p_from[1], p_to[0] - p_from[0]))


def _angular_gap(a: float, b: float) -> float:
    d = abs(a - b) % 360
    return min(d, 360 - d)


def _free_angle(taken: list, preferred: float) -> float:
    """The direction (degrees, multiple of 15) farthest from ``taken``, nearest ``preferred`` on ties."""
    candidates = range(0, 360, 15)
    def score(c):
        clearance = min((_angular_gap(c, t) for t in taken), default=180.0)
        return (round(min(clearance, 90.0)), -_angular_gap(c, preferred))
    return float(max(candidates, key=score))


def _crossing_links(topo, pos) -> set:
    """Links whose straight lines cross another link's (their labels move off the middle)."""
    pairs = _crossing_pairs([(link.a, link.b) for link in topo.links], pos)
    return {link for pair in pairs for link in pair}


def _crossing_pairs(links: list, pos: dict) -> list:
    """Pairs of links, without a common node, whose straight lines cross."""
    out = []
    for i, (a, b) in enumerate(links):
        for c, d in links[i + 1:]:
            if not {a, b} & {c, d} and _segments_cross(pos[a], pos[b], pos[c], pos[d]):
                out.append(((a, b), (c, d)))
    return out


def _segments_cross(p1, p2, p3, p4) -> bool:
    def orient(p, q, r):
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    d1, d2 = orient(p3, p4, p1), orient(p3, p4, p2)
    d3, d4 = orient(p1, p2, p3), orient(p1, p2, p4)
    return d1 * d2 < 0 and d3 * d4 < 0


def _finish_axes(ax, centres, points, unit, title):
    """Limits that hold every box (MARGIN around its centre) and every extra point; no frame."""
    margin, pad = MARGIN * unit, 0.05 * unit
    xs = [x + d for x, _ in centres for d in (-margin, margin)] + [x + d for x, _ in points for d in (-pad, pad)]
    ys = [y + d for _, y in centres for d in (-margin, margin)] + [y + d for _, y in points for d in (-pad, pad)]
    ax.set_xlim(min(xs), max(xs))
    ax.set_ylim(min(ys), max(ys))
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
