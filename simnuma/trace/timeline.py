"""The board over simulated time: a tidy table, figures, latency histograms and an animation.

``simnuma run ... --timeline FILE.csv`` writes one row per sample interval and thing sampled
(``time_ns`` at the interval's end, ``since_ns`` at its start, ``kind`` = link, buffer or thread,
``name``, ``value``: a link's utilisation, a buffer's mean slots held, a thread's GB/s), and with
matplotlib ``FILE.png`` (link utilisation, the fullest buffers and each thread's bandwidth against
time) and ``FILE-latency.png`` (each foreground thread's miss latency histogram, from the result).
``--animate FILE.gif`` draws the board at every sample (at most 120, evenly spread), each link
direction coloured by its utilisation over the interval, the busiest buffers listed beside it.
"""
from __future__ import annotations

import csv
import io

from ..fileio import write_atomic

__all__ = ["timeline_rows", "timeline_csv", "write_timeline_figure", "write_latency_figure", "write_animation"]

BUFFERS_SHOWN = 6
MOST_FRAMES = 120   # an animation shows at most this many samples, evenly spread over the run


def timeline_rows(recorder) -> list:
    rows = []
    for s in recorder.samples:
        for kind, values in (("link", s.links), ("buffer", s.buffers), ("thread", s.threads)):
            for name, value in values.items():
                rows.append({"time_ns": s.at_ns, "since_ns": s.since_ns, "kind": kind, "name": name,
                             "value": value})
    return rows


def timeline_csv(recorder) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=["time_ns", "since_ns", "kind", "name", "value"], lineterminator="\n")
    writer.writeheader()
    for row in timeline_rows(recorder):
        writer.writerow({**row, "value": f"{row['value']:.6g}", "time_ns": f"{row['time_ns']:.3f}",
                         "since_ns": f"{row['since_ns']:.3f}"})
    return out.getvalue()


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def _png(plt, fig) -> bytes:
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def write_timeline_figure(path, recorder, title: str) -> bool:
    """Link utilisation, the fullest buffers and thread bandwidth against time; False without matplotlib."""
    plt = _pyplot()
    if plt is None or not recorder.samples:
        return False
    samples = recorder.samples
    t_us = [s.at_ns / 1000 for s in samples]
    fig, axes = plt.subplots(3, 1, figsize=(9, 9), sharex=True)
    links = sorted(samples[0].links, key=lambda k: -max(s.links[k] for s in samples))
    for name in links[:8]:
        axes[0].plot(t_us, [s.links[name] for s in samples], label=name)
    axes[0].set_ylabel("link utilisation")
    axes[0].set_ylim(0, 1.05)
    buffers = sorted(samples[0].buffers, key=lambda k: -sum(s.buffers[k] for s in samples))[:BUFFERS_SHOWN]
    for name in buffers:
        axes[1].plot(t_us, [s.buffers[name] for s in samples], label=name)
    axes[1].set_ylabel("slots held (mean)")
    for name in samples[0].threads:
        axes[2].plot(t_us, [s.threads[name] for s in samples], label=name)
    axes[2].set_ylabel("GB/s")
    axes[2].set_xlabel("simulated time (us)")
    for ax in axes:
        ax.legend(fontsize=7, loc="upper right")
    axes[0].set_title(title)
    write_atomic(path, _png(plt, fig))
    return True


def write_latency_figure(path, result: dict, title: str) -> bool:
    """Each foreground thread's latency histogram (``latency_ns.histogram`` of the result)."""
    plt = _pyplot()
    threads = [t for t in result["threads"] if t["role"] == "foreground" and t["latency_ns"].get("histogram")]
    if plt is None or not threads:
        return False
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for t in threads:
        h = t["latency_ns"]["histogram"]
        edges = [h["start_ns"] + k * h["bin_ns"] for k in range(len(h["counts"]))]
        total = sum(h["counts"]) or 1
        ax.step(edges, [c / total for c in h["counts"]], where="post", label=t["spec"])
    ax.set_xlabel("miss latency (ns)")
    ax.set_ylabel("share of misses")
    ax.set_title(title)
    ax.legend(fontsize=8)
    write_atomic(path, _png(plt, fig))
    return True


def write_animation(path, recorder, topology, title: str, fps: int = 8) -> bool:
    """The board at every sample as a GIF (Pillow, which matplotlib brings); False without matplotlib."""
    plt = _pyplot()
    if plt is None or not recorder.samples:
        return False
    import tempfile
    from pathlib import Path

    from matplotlib.animation import FuncAnimation, PillowWriter

    from ..draw import draw_topology, value_colour_bar
    from ..fileio import progress

    step = -(-len(recorder.samples) // MOST_FRAMES)
    samples = recorder.samples[step - 1::step]
    fig = plt.figure(figsize=(9, 5.5))
    board_ax = fig.add_axes((0.02, 0.05, 0.52, 0.85))
    value_colour_bar(fig, fig.add_axes((0.56, 0.2, 0.015, 0.55)))    # one for every frame, drawn once
    text_ax = fig.add_axes((0.66, 0.05, 0.32, 0.85))

    def frame(k: int):
        s = samples[k]
        board_ax.clear()
        text_ax.clear()
        text_ax.axis("off")
        values: dict = {}
        for link in recorder.system.link_list:       # links in parallel: the busiest of the pair
            pair = (link.src_id, link.dst_id)
            values[pair] = max(values.get(pair, 0.0), s.links[link.name])
        draw_topology(topology, ax=board_ax, link_values=values,
                      link_label_fmt=lambda src, dst, bw, v: f"{100 * (v or 0):.0f}%",
                      title=f"{title}\n{s.since_ns / 1000:.2f}-{s.at_ns / 1000:.2f} us", colour_bar=False)
        fullest = sorted(s.buffers.items(), key=lambda kv: -kv[1])[:BUFFERS_SHOWN]
        lines = ["busiest buffers (slots held)"] + [f"{name}: {v:.2f}" for name, v in fullest]
        lines += ["", "threads (GB/s)"] + [f"{name}: {v:.2f}" for name, v in s.threads.items()][:8]
        text_ax.text(0, 1, "\n".join(lines), va="top", family="monospace", fontsize=8)
        return []

    animation = FuncAnimation(fig, frame, frames=len(samples), blit=False)
    with tempfile.TemporaryDirectory() as folder, progress(total=len(samples), desc=f"drawing {path}") as bar:
        tmp = Path(folder) / "board.gif"
        animation.save(str(tmp), writer=PillowWriter(fps=fps), progress_callback=lambda i, n: bar.update(1))
        plt.close(fig)
        write_atomic(path, tmp.read_bytes())
    return True
