"""The links of a board as link directions, and the routes through them, links in parallel included.

Models: each link of the board (``count`` of them between a pair, each with its own buffers, credits
and NOPs) as two :class:`~simnuma.model.link.LinkDirection` objects, named ``0->1`` (and ``0->1#1``,
``0->1#2``, ... for links in parallel), and every node's route to every other node as the tuple of
directions its packets take.  Line ``i`` of a thread's array takes lane ``i mod lanes`` (``lanes``
the least common multiple of the pairs' link counts), and on a pair of ``k`` links, link
``lane mod k``: every hop of every route spreads a thread's lines evenly.  A node's routes are one
list, lane after lane: ``routes[dst + nodes x lane]``.  A board with single links has one lane.

Abstracts away: how hardware really splits traffic over links in parallel (the rule above is the
model's, ``docs/model.md``, "Links in parallel").
"""
from __future__ import annotations

import math

from .link import LinkDirection

__all__ = ["wire_links", "route_lanes"]


def wire_links(env, topology, index: dict, xbars: list) -> dict:
    """``{(src index, dst index): [directions]}``: every link direction, connected to the crossbar it enters."""
    links: dict[tuple[int, int], list[LinkDirection]] = {}
    for lp in topology.links:
        a, b = index[lp.a], index[lp.b]
        for k in range(lp.count):
            tag = f"#{k + 1}" if lp.count > 1 else ""
            ab = LinkDirection(env, a, b, lp.a, lp.b, lp.bandwidth_ab_GBps, lp.latency_ns, lp.buffers,
                               lp.data_buffers, tag, lp.release)
            ba = LinkDirection(env, b, a, lp.b, lp.a, lp.bandwidth_ba_GBps, lp.latency_ns, lp.buffers,
                               lp.data_buffers, tag, lp.release)
            ab.reverse, ba.reverse = ba, ab
            for d in (ab, ba):
                d.connect(xbars[d.dst])
                links.setdefault((d.src, d.dst), []).append(d)
    return links


def route_lanes(topology, index: dict, links: dict, cls: str = "request") -> tuple:
    """``(lanes, routes)``: ``routes[s][t + n x lane]`` is the tuple of directions a packet of class ``cls``
    takes from node index s to t."""
    ids = topology.node_ids
    n = len(ids)
    lanes = math.lcm(*(lp.count for lp in topology.links)) if topology.links else 1
    routes: list[list[tuple[LinkDirection, ...]]] = [[() for _ in range(n * lanes)] for _ in range(n)]
    for s in range(n):
        for t in range(n):
            if s == t:
                continue
            hops = topology.route(ids[s], ids[t], cls)
            for lane in range(lanes):
                routes[s][t + n * lane] = tuple(_lane(links[(index[x], index[y])], lane)
                                                for x, y in zip(hops, hops[1:]))
    return lanes, routes


def _lane(directions: list, lane: int):
    """The direction a line of ``lane`` takes among links in parallel."""
    return directions[lane % len(directions)]
