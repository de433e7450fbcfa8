"""``simnuma explain``: where one transaction of each thread spends its time, stage by stage.

A case is run with a :class:`~simnuma.trace.recorder.Recorder` in steady mode; for each foreground
thread the stages of its recorded transactions are averaged (the mean over every transaction the
window saw complete, the warm-up left out), and each thread is run again alone with its memory on
its own node, so that the text can say which stage makes this placement slower than the local one.

Stages of a miss (a write's read-for-ownership is the same), in ns:

1. the request waits for an SRI buffer (``issued`` to ``req_sent``);
2. it crosses to the home memory: crossbars, links and their credits (to ``at_home``);
3. it waits for an entry of the home's DRAM queue (to ``admitted``);
4. the DRAM serves it: banks, bus, refresh, other requests, the controller's latency (to ``data_ready``);
5. the data wait for an MCT buffer (to ``data_left``);
6. the data cross back to the requester (to ``data_in``);
7. the requester waits for the last probe response (to ``done``).
"""
from __future__ import annotations

import statistics

from ..case import parse_case
from ..model import simulate
from .recorder import Recorder

__all__ = ["STAGES", "stage_times", "explain_text", "explain"]

STAGES = (
    ("SRI buffer", "issued", "req_sent", "the request waits for an SRI buffer"),
    ("to the memory", "req_sent", "at_home", "the request crosses crossbars and links to the home memory"),
    ("DRAM queue", "at_home", "admitted", "it waits for an entry of the DRAM queue"),
    ("DRAM", "admitted", "data_ready", "the DRAM serves it (banks, bus, other requests, controller latency)"),
    ("MCT buffer", "data_ready", "data_left", "the data wait for an MCT buffer"),
    ("data back", "data_left", "data_in", "the data cross back to the requester"),
    ("probes", "data_in", "done", "the requester waits for the last probe response"),
)
SKIP = 0.2   # the first fifth of the recorded transactions is warm-up


def stage_times(records: list) -> dict:
    """``{stage: mean ns}`` over ``records`` (TxnRecords of one thread), plus ``total``."""
    usable = [r for r in records if all(getattr(r, a) is not None for _, a, b, _ in STAGES for a in (a, b))]
    usable = usable[int(len(usable) * SKIP):]
    if not usable:
        return {}
    out = {name: statistics.fmean(getattr(r, b) - getattr(r, a) for r in usable) for name, a, b, _ in STAGES}
    out["total"] = statistics.fmean(r.done - r.issued for r in usable)
    out["transactions"] = len(usable)
    return out


def _run(topology, threads, background, size_bytes: int, seed: int, transactions: int) -> tuple:
    recorder = Recorder(transactions=transactions)
    result = simulate(topology, threads, background, size_bytes=size_bytes, seed=seed, observer=recorder,
                      baseline=False)
    by_thread: dict = {}
    for rec in recorder.finished:
        by_thread.setdefault(rec.thread, []).append(rec)
    return result, {label: stage_times(recs) for label, recs in by_thread.items()}


def explain(topology, case_text, size_bytes: int = 16 << 20, seed: int = 1, transactions: int = 4000) -> dict:
    """Stage times of each foreground thread of the case and of the same thread alone on local memory."""
    case = parse_case(case_text).placed(topology)
    result, stages = _run(topology, case.threads, case.background, size_bytes, seed, transactions)
    from ..runner import board_hash

    out = {"case": case.name, "topology": topology.name, "board_hash": board_hash(topology), "seed": seed,
           "threads": {}}
    for spec in case.specs:
        local = f"{spec.node}.{spec.core}.{spec.op}.{spec.node}"
        if local != spec.label or case.background or len(case.threads) > 1:
            _, alone = _run(topology, [local], [], size_bytes, seed, transactions // 2)
            reference = alone.get(local, {})
        else:
            reference = stages.get(spec.label, {})
        out["threads"][spec.label] = {"stages": stages.get(spec.label, {}), "local": local,
                                      "local_stages": reference,
                                      "time_ns": result.thread(spec.label).time_ns}
    return out


def explain_text(data: dict) -> str:
    """The text ``simnuma explain`` prints."""
    board = data["topology"] + (f" ({data['board_hash']})" if data.get("board_hash") else "")
    changed = "".join(f"; {path} = {value}" for path, value in (data.get("changes") or {}).items())
    lines = [f"{data['case']} on {board} (seed {data['seed']}{changed}): one miss of each thread, stage by stage"
             " (mean ns over the transactions recorded, warm-up left out)", ""]
    for label, t in data["threads"].items():
        s, ref = t["stages"], t["local_stages"]
        if not s:
            lines.append(f"{label}: no transaction recorded")
            continue
        same = t["local"] == label and data["case"] == label   # the local thread alone: nothing to compare
        lines.append(f"{label} ({s['transactions']} transactions; compared with {t['local']} alone)")
        width = max(len(name) for name, *_ in STAGES)
        for name, _, _, what in STAGES:
            mine, theirs = s[name], ref.get(name)
            delta = "" if theirs is None or same else f"  {mine - theirs:+7.1f}"
            lines.append(f"  {name:<{width}}  {mine:7.1f}{delta}   {what}")
        total_delta = "" if same or "total" not in ref else f"  {s['total'] - ref['total']:+7.1f}"
        lines.append(f"  {'total':<{width}}  {s['total']:7.1f}{total_delta}")
        if not same and ref:
            worst = max(STAGES, key=lambda st: s[st[0]] - ref.get(st[0], 0.0))
            gain = s[worst[0]] - ref.get(worst[0], 0.0)
            if s["total"] - ref["total"] > 1.0 and gain > 0:
                lines.append(f"  -> slower than {t['local']} alone by {s['total'] - ref['total']:.1f} ns a miss, most of"
                             f" it in '{worst[0]}' (+{gain:.1f} ns): {worst[3]}")
            else:
                lines.append(f"  -> no slower than {t['local']} alone ({s['total'] - ref['total']:+.1f} ns a miss)")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
