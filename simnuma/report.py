"""Text rendering of results for the terminal."""
from __future__ import annotations

import math

from .tables import text_table
from .model.bottleneck import bottleneck_text, waits_of

__all__ = ["render_result", "heading", "role_tag", "fmt_ns", "fmt_pct"]


def fmt_ns(ns) -> str:
    if ns is None or (isinstance(ns, float) and math.isnan(ns)):
        return "-"
    if ns >= 1e6:
        return f"{ns / 1e6:.3f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} us"
    return f"{ns:.1f} ns"


def fmt_pct(value) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.1f}%"


def _waiting_on(q: dict) -> str:
    """The buffer a pool's slots waited on most, with the share of their held time, and the share they waited on
    any where that is more: ``link 1->3 posted cmd (27%)``, ``link 2->1 probe cmd (33%), on all 82%``."""
    target, share, every = waits_of(q)
    if target is None or share < 0.005:
        return ""
    return f"{target} ({100 * share:.0f}%)" + (f", on all {100 * every:.0f}%" if every - share >= 0.005 else "")


def _memory_limit(m: dict) -> str:
    """The most the memory can serve: its peak, and for a FIFO or curve memory what it sustains."""
    sustained = m.get("sustained_GBps")
    peak = f"{m['peak_GBps']:.2f}"
    return peak if sustained is None or abs(sustained - m["peak_GBps"]) < 1e-9 else f"{peak} ({sustained:.2f})"


def _dram_detail(m: dict) -> str:
    if m.get("model") != "dram":
        return ""
    return (f"{100 * m['row_hits']:.0f}% / {100 * m['row_conflicts']:.0f}%, "
            f"{m['turnarounds_per_line']:.2f}")


def role_tag(role: str) -> str:
    """``fg`` for a foreground thread, ``bg`` for a background one (the role column)."""
    return {"foreground": "fg", "background": "bg"}.get(role, role)


def heading(data: dict, how: str) -> list[str]:
    """The lines that say what a run's numbers came from: version, board and its hash, ``how`` it was
    computed, the array size, and the board parameters ``--set`` changed."""
    board = data["topology"] + (f" ({data['board_hash']})" if data.get("board_hash") else "")
    out = [f"simnuma {data['version']}  board {board}  {how}  array {data['size_bytes'] / 2**20:g} MiB per thread"]
    if data.get("changes"):
        out.append("changed: " + ", ".join(f"{path} = {value}" for path, value in data["changes"].items()))
    return out


def render_result(data: dict, queues: int = 6) -> str:
    """The human-readable report of one ``simnuma run``."""
    out = heading(data, f"mode {data['mode']}  seed {data['seed']}")
    out.append("")
    rows = []
    for t in data["threads"]:
        lat = t["latency_ns"]
        rows.append([t["spec"], role_tag(t["role"]), fmt_ns(t["time_ns"]), fmt_pct(t["percent_of_local_read"]),
                     f"{t['bandwidth_GBps']:.3f}", f"{lat['mean']:.1f}", f"{lat['p50']:.1f}", f"{lat['p99']:.1f}"])
    out += text_table(["thread", "role", "time", "% of 0.0.r.0", "GB/s", "lat mean ns", "p50", "p99"], rows)
    out.append(f"makespan {fmt_ns(data['makespan_ns'])} = {fmt_pct(data['makespan_percent'])} of one idle "
               f"local reader ({fmt_ns(data['baseline_ns'])})")
    out.append("")
    rows = [[l.get("name") or f"{l['src']}->{l['dst']}", f"{l['bandwidth_GBps']:.3f}", f"{100 * l['utilization']:.1f}%",
             f"{100 * l['data_utilization']:.1f}%", f"{100 * l['control_utilization']:.1f}%"]
            for l in data["links"]]
    out += text_table(["link", "GB/s", "busy", "data", "control"], rows)
    out.append("")
    rows = [[f"N{m['node']}", m.get("model", "fifo"), f"{m['bandwidth_GBps']:.3f}", _memory_limit(m),
             f"{100 * m['utilization']:.1f}%", _dram_detail(m)]
            for m in data["memory"]]
    out += text_table(["memory", "model", "GB/s", "peak", "busy", "rows hit / conflict, turnarounds per line"], rows)
    out.append("")
    rows = [[q["name"], q["capacity"], f"{q['mean_occupancy']:.2f}", f"{100 * q['full_fraction']:.1f}%", _waiting_on(q)]
            for q in data["queues"][:queues]]
    out += text_table(["fullest buffers", "slots", "mean occupancy", "time full", "its slots waiting on"], rows)
    b = data["bottleneck"]
    out.append("")
    out.append(f"bottleneck: {bottleneck_text(b)}")
    if len(b.get("chain") or ()) > 1:
        out.append(f"backed up (each waiting on the next): {' -> '.join(b['chain'])}")
    if data["mode"] == "steady":
        out.append(f"simulated {fmt_ns(data['simulated_ns'])} ({data['transactions_simulated']} transactions), "
                   f"extrapolated {fmt_ns(data['extrapolated_ns'])} more")
    out += [f"warning: {w}" for w in data.get("warnings") or ()]
    return "\n".join(out)
