"""What limits a run: the busiest link or memory, or the end of a chain of full buffers.

A packet keeps its buffer until the next stage takes it (app note 40555, A.1:
full crossbar buffers back up into the SRI), so a full buffer is either slow
to drain or waiting on the next one.  The credit pools measure which
(:class:`~simnuma.model.credit.CreditPool`: the slot-time each pool's holders
spent waiting, by the pool awaited); :func:`bottleneck` follows those waits
from a full buffer to where the chain ends, and names the block there.
"""
from __future__ import annotations

import re

__all__ = ["bottleneck", "bottleneck_text", "chain", "waited_on", "waits_of"]

SATURATED = 0.95   # a link or memory this busy limits the run
FULL = 0.5         # a buffer full this share of the time limits the run when nothing is saturated
EQUALLY_FULL = 1e-6   # buffers whose time full differs by less than this share are equally full
BLOCKED = 0.5      # a buffer whose slots wait this share of their held time for other pools is backed up from them
_POOL_OWNER = (
    (re.compile(r"^N(\d+) mct"), "memory N{}", "memory"),
    (re.compile(r"^link (\d+->\d+(?:#\d+)?) "), "link {}", "link"),
    (re.compile(r"^N(\d+) sri->xbar"), "sri N{}", "sri"),
    (re.compile(r"^N(\d+) xbar->sri probe"), "probes N{}", "probes"),
)


def _owner(pool_name: str) -> tuple:
    """``(resource, kind)`` a buffer pool belongs to: the block it feeds."""
    for pattern, resource, kind in _POOL_OWNER:
        m = pattern.match(pool_name)
        if m:
            return resource.format(m.group(1)), kind
    return pool_name, "buffer"


def _probe_servers(queues: list) -> list:
    """Each node's probe lookups as a server: a slot of its XBar-to-SRI probe queue is held for a lookup and
    nothing else, so the share of its slots in use is how busy they are."""
    out = []
    for q in queues:
        resource, kind = _owner(q["name"])
        if kind == "probes" and q["capacity"]:
            out.append((resource, kind, q["mean_occupancy"] / q["capacity"]))
    return out


def waits_of(q: dict) -> tuple[str | None, float, float]:
    """What a buffer's slots waited on (measured: ``q["waits_on"]``): the pool they waited for most, the share of
    their held time that took, and the share they spent waiting on any; ``(None, 0, 0)`` if they never waited."""
    occupancy = q["mean_occupancy"]
    waits = q.get("waits_on") or {}
    if occupancy <= 0.0 or not waits:
        return None, 0.0, 0.0
    target, slots = max(waits.items(), key=lambda kv: (kv[1], kv[0]))
    return target, slots / occupancy, sum(waits.values()) / occupancy


def waited_on(q: dict) -> str | None:
    """The pool a buffer is backed up from: the one its slots waited for most, if they spent at least ``BLOCKED``
    of their held time waiting for any, or None."""
    # a broadcast's buffer waits on several links at once: its slots are backed up when their waits, summed over
    # the pools awaited, pass BLOCKED; the chain goes on through the pool waited on most
    target, _share, every = waits_of(q)
    return target if every >= BLOCKED else None


def chain(name: str, rows: dict) -> list[str]:
    """The buffers from ``name`` on, each backed up from the next (:func:`waited_on`, followed; a cycle stops it)."""
    out = [name]
    while True:
        after = waited_on(rows[name]) if name in rows else None
        if after is None or after in out:
            return out
        out.append(after)
        name = after


def _posted(pool_name: str) -> bool:
    """Whether a pool holds posted writes (victims): no miss waits for one to arrive."""
    return " posted" in pool_name


def _held_back_by(queues: list) -> set:
    """The buffers that hold the threads back when full: those the cores put their requests in (a node's SRI
    queues), and those that packets a miss waits for (requests, probes, responses: not posted victims) queue
    for, on average at least ``BLOCKED`` of one.  A buffer full while only its credit travels (an idle remote
    reader's one request buffer) adds little latency; victims queued for theirs delay no miss unless they back
    up to the cores."""
    waiting: dict[str, float] = {}
    for w in queues:
        if not _posted(w["name"]):
            for target, slots in (w.get("waits_on") or {}).items():
                waiting[target] = waiting.get(target, 0.0) + slots
    return ({q["name"] for q in queues if _owner(q["name"])[1] == "sri"}
            | {name for name, slots in waiting.items() if slots >= BLOCKED})


def bottleneck(links: list, memory: list, queues: list) -> dict:
    """What limits the run.

    A link or memory at least ``SATURATED`` busy; otherwise, a buffer full at
    least ``FULL`` of the time, named by the block it feeds (a memory whose
    DRAM queue is full limits its threads even while the DRAM itself is not
    busy), where the back-up it is part of holds the threads back (a buffer
    of its chain, below, is one of ``_held_back_by``: the cores feed it, or
    what a miss waits for queues for it).  A buffer whose slots spend at least ``BLOCKED`` of their held
    time waiting for other pools (measured per pool awaited: the queue
    rows' ``waits_on``; a broadcast's buffer waits on several links at once)
    is backed up from the one they waited for most, so the bottleneck is
    where such a chain from a full buffer ends (``chain``: the longest such
    chain, from its first buffer to the end).  Among several ends, the one
    behind the fullest buffer, then the fuller itself, then the one in front
    of the busiest block (a node's probe lookups as busy as the share of
    their slots in use), then the one most waited for, then the fuller on
    average, then by name (past saturation many are full all the time).  Otherwise nothing saturates, and the
    busiest link or memory is named with ``limit: "none"`` (the threads are
    limited by latency).
    """
    servers = [(f"link {r.get('name') or str(r['src']) + '->' + str(r['dst'])}", "link", r["utilization"])
               for r in links]
    servers += [(f"memory N{r['node']}", "memory", r["utilization"]) for r in memory]
    name, kind, util = max(servers, key=lambda s: s[2]) if servers else ("none", "none", 0.0)
    out = {"resource": name, "kind": kind, "utilization": util, "limit": "busy", "buffer": None,
           "full_fraction": None, "chain": None}
    if util >= SATURATED:
        return out
    # how busy each block in front of a buffer is: a node's probe lookups too (they may be busy with probes for
    # other threads' lines: only a chain of waiting buffers ties them to these threads)
    busy_of = {s[0]: s[2] for s in servers + _probe_servers(queues)}
    waited_for: dict[str, float] = {}   # slots waiting, summed, on the buffers in front of each block
    for q in queues:
        for target, slots in (q.get("waits_on") or {}).items():
            owner = _owner(target)[0]
            waited_for[owner] = waited_for.get(owner, 0.0) + slots
    rows = {q["name"]: q for q in queues}
    holding = _held_back_by(queues)
    behind: dict[str, float] = {}   # each end: the fullest buffer whose chain ends there
    longest: dict[str, list] = {}   # ... and the longest of those chains (the fuller start among equals)
    for q in sorted((q for q in queues if q["full_fraction"] >= FULL), key=lambda q: -q["full_fraction"]):
        path = chain(q["name"], rows)
        if holding.isdisjoint(path):
            continue      # a back-up that reaches neither the cores nor anything a miss waits for
        end = path[-1]
        behind[end] = max(behind.get(end, 0.0), q["full_fraction"])
        if len(path) > len(longest.get(end, ())):
            longest[end] = path
    if behind:
        most = max(behind.values())
        ends = [rows[e] for e in behind if behind[e] >= most - EQUALLY_FULL]
        fullest = max(q["full_fraction"] for q in ends)
        full = min((q for q in ends if q["full_fraction"] >= fullest - EQUALLY_FULL),
                   key=lambda q: (-(busy_of.get(_owner(q["name"])[0]) or 0.0),
                                  -waited_for.get(_owner(q["name"])[0], 0.0), -q["mean_occupancy"] / q["capacity"],
                                  q["name"]))
        resource, kind = _owner(full["name"])
        busy = busy_of.get(resource)
        return {"resource": resource, "kind": kind, "utilization": busy, "limit": "full buffer",
                "buffer": full["name"], "full_fraction": full["full_fraction"], "chain": longest[full["name"]]}
    out["limit"] = "none"
    return out


def bottleneck_text(b: dict) -> str:
    """``link 0->1 (100.0% busy)``; ``link 1->0: its posted cmd buffer full 98% of the time (the link 92.7%
    busy)``; ``memory N0: N0 mct dram queue full 98% of the time (41.0% busy)``."""
    if b["limit"] == "full buffer":
        resource, buffer = b["resource"], b["buffer"]
        busy = ""
        if b["utilization"] is not None:
            busy = f" ({'the link ' if b['kind'] == 'link' else ''}{100 * b['utilization']:.1f}% busy)"
        if buffer.startswith(resource + " "):   # a link's own buffers: named once, and not the wire's use
            buffer = f"its {buffer[len(resource) + 1:]} buffer"
        return f"{resource}: {buffer} full {100 * b['full_fraction']:.0f}% of the time{busy}"
    if b["limit"] == "none":
        return (f"nothing saturates; the busiest is {b['resource']} at {100 * b['utilization']:.1f}%:"
                " the threads are limited by latency")
    return f"{b['resource']} ({100 * b['utilization']:.1f}% busy)"
