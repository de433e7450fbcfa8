"""The files a recorded run writes (``simnuma run --trace/--timeline/--animate``), and what to tell of them."""
from __future__ import annotations

from ..fileio import write_atomic
from ..report import fmt_ns
from .recorder import parse_window

__all__ = ["write_recordings", "timeline_figures", "TRACE_WARN_BYTES"]

TRACE_WARN_BYTES = 100_000_000   # a trace past this size strains a browser's viewer


def write_recordings(recorder, topo, case_name: str, data: dict, trace=None, window: str = "1000", timeline=None,
                     animate=None) -> tuple:
    """Write the trace (gzipped when its name ends in .gz), the timeline and its figures, and the animation asked
    for; ``(what was written, notes)``: the notes say what a file could not hold (a steady run's extrapolated
    part) and when a trace is too large for a browser's viewer."""
    from .perfetto import trace_json
    from .timeline import timeline_csv, write_animation, write_latency_figure, write_timeline_figure

    title = f"{case_name} on {topo.name}"
    written: list = []
    notes: list = []
    if trace is not None:
        about = {"simnuma": data["version"], "board": topo.name, "board_hash": data["board_hash"],
                 "case": case_name, "mode": data["mode"], "seed": data["seed"], "size_bytes": data["size_bytes"],
                 "changes": data.get("changes", {}), "trace_window": window}
        notes += _write_trace(trace, trace_json(recorder, about))
        written.append(f"{trace} ({len(recorder.finished)} transactions; open it in ui.perfetto.dev)")
        notes += _window_notes(window, recorder, data)
    if timeline is not None:
        write_atomic(timeline, timeline_csv(recorder))
        written.append(timeline)
        figure, latency = timeline_figures(timeline)
        if write_timeline_figure(figure, recorder, title):
            written.append(figure)
        if write_latency_figure(latency, data, title):
            written.append(latency)
    if animate is not None and write_animation(animate, recorder, topo, title):
        written.append(animate)
    if (timeline is not None or animate is not None) and data["mode"] == "steady" and data["extrapolated_ns"]:
        notes.append(f"the timeline covers the {fmt_ns(data['simulated_ns'])} simulated (steady mode: each phase's"
                     f" window, end to end), not the {fmt_ns(data['extrapolated_ns'])} extrapolated; --exact"
                     " simulates and draws the whole run")
    return written, notes


def timeline_figures(timeline: str) -> tuple:
    """``(FILE.png, FILE-latency.png)``: the figures a timeline ``FILE.csv`` is drawn in beside it."""
    stem = timeline[:-4] if timeline.endswith(".csv") else timeline
    return f"{stem}.png", f"{stem}-latency.png"


def _write_trace(path, text: str) -> list:
    """Write a trace's JSON ``text`` to ``path``, gzipped where its name ends in .gz; the note a large one gets."""
    if str(path).lower().endswith(".gz"):
        import gzip

        write_atomic(path, gzip.compress(text.encode(), mtime=0))
        return []
    write_atomic(path, text)
    if len(text) <= TRACE_WARN_BYTES:
        return []
    return [f"the trace is {len(text) / 1e6:.0f} MB, more than a browser's trace viewer takes well: name it"
            f" {path}.gz to write it compressed, or give a shorter --trace-window"]


def _window_notes(window: str, recorder, data: dict) -> list:
    """What a steady-mode trace could not hold of its ``window`` (``--trace-window``): the run simulated fewer
    transactions, or less time, than the window asks for."""
    if data["mode"] != "steady" or not data["extrapolated_ns"]:
        return []
    _start, end_ns, count = parse_window(window)
    short = (count is not None and len(recorder.finished) < count) or (end_ns != float("inf")
                                                                        and end_ns > data["simulated_ns"])
    if not short:
        return []
    return [f"--trace-window {window}: steady mode simulated {data['transactions_simulated']} transactions"
            f" ({fmt_ns(data['simulated_ns'])}) and extrapolated the rest; --exact simulates every one"]
