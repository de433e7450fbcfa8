"""A recorded run as a trace in the Chrome trace-event format, which ui.perfetto.dev and chrome://tracing open.

The format (Google's "Trace Event Format" document): a JSON object whose ``traceEvents`` list holds
events with a phase ``ph``, a process ``pid``, a thread ``tid`` (a track), a timestamp ``ts`` in
microseconds and a ``name``.  This file uses four phases:

* ``M`` metadata: ``process_name`` and ``thread_name`` name every process and track,
  ``process_sort_index`` and ``thread_sort_index`` order them, ``process_labels`` says what ran;
* ``X`` complete events: a slice with a duration ``dur``;
* ``C`` counters: a value per series (``args``) from ``ts`` on;
* ``s``, ``t``, ``f`` flow events of one ``id``: an arrow from slice to slice, each bound to the
  slice that encloses it on its track (``bp: "e"`` on the last).

Processes (track groups): *threads*, a track per thread with a slice per transaction (its miss,
from issue to the last response); *links*, per link direction a ``data`` track (read data and
victim writes), a ``commands`` track (requests, probes, probe responses, source-done) and a
``credits`` track (NOPs), each packet a slice named and coloured by its kind, and a counter of the
direction's utilisation; one per node with tracks ``SRI`` (a packet waiting for an SRI buffer, a
probe waiting for and in its lookup), ``XBar`` (packets crossing in from a link), ``MCT``
(requests waiting for the DRAM queue, data for a buffer) and ``DRAM`` (each access from admission
to its data); *buffers*, a counter per buffer pool (mean slots held over each sample interval).
Slices on one track never overlap: where several are under way at once (five misses of a thread,
sixteen DRAM accesses, a command inserted into a data transfer), the track gets numbered siblings
(``DRAM``, ``DRAM 2``, ...), each slice on the first that is free.  Each transaction's flow starts
at its miss on its thread's track and follows its packets, in the order they went onto a link,
to its last one (the source-done, for a remote miss).
"""
from __future__ import annotations

import json

__all__ = ["trace_events", "trace_json", "KIND_COLOURS"]

# chrome://tracing's reserved colour names, one per packet kind (Perfetto colours by name)
KIND_COLOURS = {
    "read_req": "thread_state_running", "probe": "yellow", "probe_resp": "olive", "read_resp": "good",
    "victim": "terrible", "source_done": "grey", "nop": "white",
}
DATA_KINDS = ("read_resp", "victim")
_US = 1e-3   # ns -> us
_THREADS, _LINKS, _BUFFERS, _NODES = 1, 2, 3, 10


class _Tracks:
    """Tracks by (group, name), each with a pid and a tid, in the order they are first asked for."""

    def __init__(self):
        self.ids: dict = {}       # (pid, name) -> tid
        self.names: dict = {}     # pid -> process name

    def tid(self, pid: int, name: str) -> int:
        key = (pid, name)
        if key not in self.ids:
            self.ids[key] = 1 + sum(1 for p, _ in self.ids if p == pid)
        return self.ids[key]

    def metadata(self, about) -> list:
        out = []
        for pid, name in sorted(self.names.items()):
            if any(p == pid for p, _ in self.ids):
                out.append({"ph": "M", "pid": pid, "tid": 0, "ts": 0, "name": "process_name", "args": {"name": name}})
                out.append({"ph": "M", "pid": pid, "tid": 0, "ts": 0, "name": "process_sort_index",
                            "args": {"sort_index": pid}})
        for (pid, name), tid in self.ids.items():
            out.append({"ph": "M", "pid": pid, "tid": tid, "ts": 0, "name": "thread_name", "args": {"name": name}})
            out.append({"ph": "M", "pid": pid, "tid": tid, "ts": 0, "name": "thread_sort_index",
                        "args": {"sort_index": tid}})
        if about:
            out.append({"ph": "M", "pid": _THREADS, "tid": 0, "ts": 0, "name": "process_labels",
                        "args": {"labels": json.dumps(about, sort_keys=True)}})
        return out


def _lanes(slices: list) -> list:
    """``[(lane, slice)]``: each slice on the first lane free at its start (interval partitioning)."""
    ends: list = []
    out = []
    for s in sorted(slices, key=lambda s: (s[1], s[2])):
        start, end = s[1], s[2]
        for lane, free_at in enumerate(ends):
            if free_at <= start:
                ends[lane] = end
                break
        else:
            lane = len(ends)
            ends.append(end)
        out.append((lane, s))
    return out


def trace_events(recorder, about: dict | None = None) -> list:
    """The trace events of ``recorder`` (a :class:`~simnuma.trace.recorder.Recorder` after its run)."""
    system = recorder.system
    tracks = _Tracks()
    tracks.names = {_THREADS: "threads", _LINKS: "links", _BUFFERS: "buffers"}
    node_pid = {nid: _NODES + k for k, nid in enumerate(system.ids)}
    for nid, pid in node_pid.items():
        tracks.names[pid] = f"node N{nid}"
    done = {rec.id: rec for rec in recorder.finished}
    groups: dict = {}    # (pid, base track name) -> [(name, start, end, txn, cat, colour)]
    for t in system.foreground + system.background:
        groups[(_THREADS, t.label)] = []
    for d in system.link_list:
        for part in ("data", "commands", "credits"):
            groups[(_LINKS, f"{d.name} {part}")] = []
    for nid in system.ids:
        for unit in ("SRI", "XBar", "MCT", "DRAM"):
            groups[(node_pid[nid], unit)] = []
    for rec in recorder.finished:
        op = "write" if rec.is_write else "read"
        groups[(_THREADS, rec.thread)].append((f"{op} N{rec.home}", rec.issued, rec.done, rec.id, "transaction",
                                                "generic_work"))
    for s in recorder.slices:
        if s.txn is not None and s.txn not in done:
            continue     # a transaction the window did not see complete
        if s.track[0] == "link":
            part = "credits" if s.name == "nop" else "data" if s.name in DATA_KINDS else "commands"
            key = (_LINKS, f"{s.track[1]} {part}")
            groups[key].append((s.name, s.start, s.end, s.txn, "packet", KIND_COLOURS.get(s.name, "generic_work")))
        else:
            groups[(node_pid[s.track[1]], s.track[2])].append((s.name, s.start, s.end, s.txn, "node", None))
    events: list = []
    flows: dict = {}     # transaction -> [(ph, pid, tid, ts ns)]
    for (pid, base), slices in groups.items():
        if not slices:
            tracks.tid(pid, base)     # an idle track is still shown, empty
            continue
        for lane, (name, start, end, txn, cat, colour) in _lanes(slices):
            tid = tracks.tid(pid, base if lane == 0 else f"{base} {lane + 1}")
            event = {"ph": "X", "pid": pid, "tid": tid, "ts": start * _US, "dur": max(0.0, end - start) * _US,
                     "name": name, "cat": cat, "args": {"transaction": txn} if txn is not None else {}}
            if colour:
                event["cname"] = colour
            events.append(event)
            if txn is None:
                continue
            if pid == _THREADS:
                flows.setdefault(txn, []).append(("s", pid, tid, start))
            elif pid == _LINKS and end > start:
                flows.setdefault(txn, []).append(("t", pid, tid, start))
    for txn, steps in flows.items():
        # from the miss on its thread's track through every packet on the links; the last packet (the
        # source-done, sent once the miss is complete) ends the flow
        origin = [st for st in steps if st[0] == "s"]
        hops = sorted((st for st in steps if st[0] == "t"), key=lambda st: st[3])
        if not hops or len(origin) != 1:
            continue    # a local miss whose probes crossed no link
        hops[-1] = ("f",) + hops[-1][1:]
        for ph, pid, tid, ts in origin + hops:
            flow = {"ph": ph, "pid": pid, "tid": tid, "ts": ts * _US, "id": txn, "name": "transaction", "cat": "flow"}
            if ph == "f":
                flow["bp"] = "e"
            events.append(flow)
    first_ns = min((rec.issued for rec in recorder.finished), default=0.0)
    last_ns = max((rec.done for rec in recorder.finished), default=0.0)
    for sample in recorder.samples:
        if sample.at_ns < first_ns or sample.since_ns > last_ns:
            continue     # outside the window the trace follows
        for name, value in sample.links.items():
            tid = tracks.tid(_LINKS, f"{name} data")
            events.append({"ph": "C", "pid": _LINKS, "tid": tid, "ts": sample.since_ns * _US,
                           "name": f"{name} utilisation", "args": {"busy": round(value, 6)}})
        for name, value in sample.buffers.items():
            events.append({"ph": "C", "pid": _BUFFERS, "tid": tracks.tid(_BUFFERS, name), "ts": sample.since_ns * _US,
                           "name": name, "args": {"slots held": round(value, 6)}})
    return tracks.metadata(about) + sorted(events, key=lambda e: (e["ts"], e["ph"] != "X"))


def trace_json(recorder, about: dict | None = None) -> str:
    """The trace as JSON text: ``{"traceEvents": [...], "displayTimeUnit": "ns", "otherData": about}``."""
    return json.dumps({"traceEvents": trace_events(recorder, about), "displayTimeUnit": "ns",
                       "otherData": about or {}}, separators=(",", ":"))
