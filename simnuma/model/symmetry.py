"""Threads that a board's symmetry makes interchangeable.

A relabelling of the nodes that maps the board onto itself (links, their
directions' parameters, every node's parameters, and the route between every
pair of nodes) and the running threads onto themselves (foreground and
background alike, each thread to one of the same op and rate; the cores of a
node are alike) is a
symmetry of the whole run: a thread and its image have the same throughput in
expectation.  Crossfire on the Quartet (``0.0.w.1 1.0.w.0``, with or without
its background) is such a case: swapping nodes 0 and 1, and 2 and 3, swaps the
two writers.

Steady mode uses the groups to pool the throughput of interchangeable threads
(:mod:`simnuma.model.system`).  Two such threads compete for the same links
and memories, so their shares wander while their sum stays put: pooled, the
estimate converges as fast as the sum does, and it is the same estimate in
expectation.  Exact mode does not use them.
"""
from __future__ import annotations

from dataclasses import replace

import networkx as nx

from ..topology.board import ROUTE_CLASSES

__all__ = ["exchangeable_groups", "MAX_AUTOMORPHISMS"]

MAX_AUTOMORPHISMS = 5000   # look at no more relabellings than this (large symmetric boards)


def _spec_key(spec, sigma=None) -> tuple:
    """What makes a thread what it is, in the model: where it runs, what it does, where its memory is.

    The core is not part of it: the cores of a node are alike and share the node's SRI.
    """
    node, mem = (spec.node, spec.mem_node) if sigma is None else (sigma[spec.node], sigma[spec.mem_node])
    return node, spec.op, mem, spec.rate_GBps


def _node_key(node) -> object:
    return replace(node, id=0)


def _link_key(topology, a: int, b: int) -> tuple:
    link = topology.link(a, b)
    # its kind too: links of two kinds are apart whatever their values (a calibration moves them apart)
    return (link.bandwidth_GBps(a, b), link.latency_ns, tuple(sorted(link.buffers.items())),
            tuple(sorted(link.data_buffers.items())), link.count, link.release, link.kind)


def _preserves_board(topology, sigma: dict) -> bool:
    for node in topology.nodes:
        if _node_key(topology.node(sigma[node.id])) != _node_key(node):
            return False
    for link in topology.links:
        for a, b in link.directions:
            if _link_key(topology, sigma[a], sigma[b]) != _link_key(topology, a, b):
                return False
    for cls in ROUTE_CLASSES:
        for (a, b), route in topology.class_routes(cls).items():
            if topology.route(sigma[a], sigma[b], cls) != tuple(sigma[x] for x in route):
                return False
    return True


def exchangeable_groups(topology, foreground, background) -> list:
    """Groups of indices into ``foreground`` whose threads some symmetry of the run interchanges.

    Every index is in exactly one group; a thread nothing interchanges is a
    group of one.
    """
    n = len(foreground)
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    keys = [_spec_key(s) for s in foreground]
    index: dict[tuple, int] = {}
    for i, key in enumerate(keys):   # threads alike but for their core are interchangeable as they are
        if key in index:
            parent[root(i)] = root(index[key])
        index[key] = i
    bg = sorted(_spec_key(s) for s in background)
    if n > 1:
        matcher = nx.algorithms.isomorphism.GraphMatcher(topology.graph, topology.graph)
        for count, sigma in enumerate(matcher.isomorphisms_iter()):
            if count >= MAX_AUTOMORPHISMS:
                break
            if all(sigma[v] == v for v in sigma):
                continue
            mapped = [_spec_key(s, sigma) for s in foreground]
            if sorted(mapped) != sorted(keys) or sorted(_spec_key(s, sigma) for s in background) != bg:
                continue
            if not _preserves_board(topology, sigma):
                continue
            for i, key in enumerate(mapped):
                parent[root(i)] = root(index[key])
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(root(i), []).append(i)
    return sorted(groups.values())
