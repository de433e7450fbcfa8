"""The links of the board ``simnuma bench host`` writes: inferred from the node distance matrix, a kind of link per
SLIT distance where they join pairs at more than one, and their placeholders (a latency from the distance, a
bandwidth from what a suite's remote peak carried).

Link inference: the pairs at the smallest off-diagonal distance are taken as
direct links.  That is unambiguous when those links connect every node and
the hop counts they give rank the pairs as the distances do; otherwise links
are added between components at the next distances (lowest ids first) and
the file says which choices the distances did not determine.
"""
from __future__ import annotations

from itertools import combinations

import networkx as nx

from .host import Host

__all__ = ["LinkInference", "infer_links", "distance_kinds", "carried_over", "measured_bandwidth_line", "link_lines"]


class LinkInference:
    """Links inferred from a distance matrix, and notes on what the matrix left open."""

    def __init__(self, links: list, notes: list):
        self.links = links
        self.notes = notes

    @property
    def ambiguous(self) -> bool:
        return bool(self.notes)


def _symmetric_distances(ids: list, rows) -> tuple:
    notes, pairs = [], {}
    for i, j in combinations(range(len(ids)), 2):
        forward, back = rows[i][j], rows[j][i]
        if forward != back:
            notes.append(f"distance {ids[i]}->{ids[j]} is {forward} but {ids[j]}->{ids[i]} is {back};"
                         f" used {min(forward, back)}")
        pairs[(ids[i], ids[j])] = min(forward, back)
    return pairs, notes


def _hop_counts(graph: nx.Graph, devices: list) -> dict:
    """``{a: {b: hops}}`` as the board's routes count them: between nodes with CPUs over those nodes only, and to
    a node without CPUs over them and the last link (such a node passes nothing on)."""
    hops = dict(nx.all_pairs_shortest_path_length(graph.subgraph([n for n in graph if n not in devices])))
    for device in devices:
        hops[device] = {device: 0}
        for n in list(hops):
            if n in devices:
                continue
            hops[n][device] = hops[device][n] = 1 + min(hops[n][m] for m in graph.neighbors(device))
    return hops


def _ranking_conflicts(hops: dict, pairs: dict) -> list:
    """Pairs whose hop count (``hops``, :func:`_hop_counts`) contradicts the order of their distances."""
    conflicts = []
    for (p, dp), (q, dq) in combinations(pairs.items(), 2):
        hp, hq = hops[p[0]][p[1]], hops[q[0]][q[1]]
        if (dp < dq and hp > hq) or (dp > dq and hp < hq) or (dp == dq and hp != hq):
            conflicts.append(f"{p[0]}-{p[1]} (distance {dp}, {hp} hops) vs {q[0]}-{q[1]} (distance {dq}, {hq} hops)")
    return conflicts


def _connect_components(graph: nx.Graph, pairs: dict, notes: list) -> None:
    """Join the groups the nearest pairs leave apart, a distance level at a time: every pair at the level between
    two groups it found apart is linked (pairs at one distance are taken to be wired alike), so that hop counts
    keep the distances' order; one bridge per level would send all of two sockets' traffic over one link."""
    for distance in sorted(set(pairs.values())):
        if nx.is_connected(graph):
            return
        group = {n: k for k, members in enumerate(nx.connected_components(graph)) for n in members}
        bridging = [p for p, d in sorted(pairs.items()) if d == distance and group[p[0]] != group[p[1]]]
        graph.add_edges_from(bridging)
        if bridging:
            notes.append(f"the nearest pairs do not connect every node; linked every pair at distance {distance}"
                         f" between the groups they leave apart ({len(bridging)} links: "
                         + ", ".join(f"{a}-{b}" for a, b in bridging[:8])
                         + (", ..." if len(bridging) > 8 else "")
                         + "); the distances do not say how many links the machine has between them")


def _attach_cpuless(graph: nx.Graph, pairs: dict, cpuless: list, notes: list) -> None:
    """Link each node without CPUs to the nodes with CPUs nearest it (all of them at that distance: a memory pool
    shared by two sockets joins both).  Such a node is a memory device (CXL memory, HBM in flat mode): it routes
    nothing between sockets (``docs/topology.md``, memory-only nodes), and the distance between two of them says
    nothing about the wiring, since no traffic flows between them."""
    hosts = set(graph) - set(cpuless)
    for node in cpuless:
        nearby = {(b if a == node else a): d for (a, b), d in pairs.items()
                  if node in (a, b) and (b if a == node else a) in hosts}
        if not nearby:
            continue
        least = min(nearby.values())
        joined = sorted(n for n, d in nearby.items() if d == least)
        graph.add_edges_from((node, n) for n in joined)
        notes.append(f"node {node} has no CPUs (a memory device: CXL memory, HBM in flat mode): linked to the nearest"
                     f" node{'s' if len(joined) > 1 else ''} with CPUs, {', '.join(map(str, joined))} (distance"
                     f" {least}); it passes no other node's traffic on")


def infer_links(ids, rows, problem: str = "", cpuless=()) -> LinkInference:
    """Direct links between nodes ``ids`` given their distance matrix ``rows`` (None where sysfs has none, or
    ``problem`` says what is wrong with it).  The nodes with CPUs are linked among themselves from their distances;
    each of ``cpuless`` (nodes without CPUs: memory devices) then hangs off the nodes with CPUs nearest it."""
    ids = list(ids)
    if len(ids) < 2:
        return LinkInference([], [])
    if rows is None:
        graph = nx.path_graph(ids)
        why = f"the distance matrix could not be read ({problem})" if problem else "no distance matrix in sysfs"
        return LinkInference(sorted(tuple(sorted(e)) for e in graph.edges),
                             [f"{why}; the nodes are assumed wired in a chain, in the order of their ids"])
    pairs, notes = _symmetric_distances(ids, rows)
    devices = [n for n in ids if n in set(cpuless)]
    if len(devices) == len(ids):
        devices = []   # no node with CPUs (all offline?): every node is wired from the distances
    hosts = [n for n in ids if n not in devices]
    among = {p: d for p, d in pairs.items() if p[0] in hosts and p[1] in hosts}
    graph = nx.Graph()
    graph.add_nodes_from(hosts)
    if among:
        nearest = min(among.values())
        graph.add_edges_from(p for p, d in among.items() if d == nearest)
        _connect_components(graph, among, notes)
    _attach_cpuless(graph, pairs, devices, notes)
    conflicts = _ranking_conflicts(_hop_counts(graph, devices),
                                   {p: d for p, d in pairs.items() if p[0] not in devices or p[1] not in devices})
    if conflicts:
        more = f" (and {len(conflicts) - 3} more)" if len(conflicts) > 3 else ""
        notes.append("the inferred links rank some pairs differently from the distances: "
                     + "; ".join(conflicts[:3]) + more)
    return LinkInference(sorted(tuple(sorted(e)) for e in graph.edges), notes)


def distance_kinds(inference: LinkInference, host: Host) -> dict:
    """``{SLIT distance: kind name}`` of the inferred links where they join pairs at more than one distance, else
    ``{}``."""
    classes = sorted({d for d in (host.distance(a, b) for a, b in inference.links) if d is not None})
    return {d: f"distance-{d}" for d in classes} if len(classes) > 1 else {}


def carried_over(inference: LinkInference, host: Host, remote_peaks: dict) -> dict:
    """``{SLIT distance: (data GB/s, (node, memory node))}``: the most data a remote peak read over one inferred link
    (its two nodes joined directly), for each distance such links join."""
    direct = {frozenset(pair) for pair in inference.links}
    out: dict = {}
    for (node, memory), GBps in sorted(remote_peaks.items()):
        if frozenset((node, memory)) in direct:
            distance = host.distance(node, memory)
            if GBps > out.get(distance, (0.0, None))[0]:
                out[distance] = (GBps, (node, memory))
    return out


def measured_bandwidth_line(prefix: str, GBps: float, way: tuple) -> str:
    """A placeholder bandwidth line from the data a remote peak carried over a link: the least that link carries."""
    text = f"{GBps:.3g} GB/s"
    return (f"{prefix}{text:<11}# at least the {GBps:.3g} GB/s of data every CPU of node {way[0]} read from node"
            f" {way[1]}'s memory over it (the suite's remote peak); calibrate (link.bandwidth)")


def link_lines(inference: LinkInference, host: Host, local_latency_ns: float, kinds: dict,
               carried: dict | None = None) -> list:
    """The ``links:`` lines, each with the firmware's distance between its nodes where sysfs gives one.

    Where the links join pairs at different distances (sub-NUMA clusters of one socket and the sockets apart, a
    CXL memory), the links of each distance are a kind of their own (``kinds``, :func:`distance_kinds`), so that
    ``simnuma calibrate`` fits a latency for each; each kind's latency starts from its distance: ACPI's SLIT
    gives a remote access's latency as ``distance / 10`` times a local one's, and a request and its data each
    cross the link once, so a hop is given ``(distance - 10) / 20`` times ``local_latency_ns``.  A kind whose link a
    remote peak read across (``carried``, :func:`carried_over`) starts its bandwidth from what that peak carried.
    """
    lines = []
    if not inference.links:
        lines.append("links: []                 # one node: no links")
        return lines
    for note in inference.notes:
        lines.append(f"# links: {note}")
    distances = {(a, b): host.distance(a, b) for a, b in inference.links}
    if kinds:
        classes = list(kinds)
        lines.append(f"link_kinds:                 # the links join nodes at {len(classes)} distances, a sign of links of"
                     " different kinds (within a socket and between sockets, or to a CXL memory): calibrate fits a"
                     " latency for each kind, and a bandwidth for each a remote peak crossed (docs/topology.md, link"
                     " kinds); a kind without a bandwidth takes link_defaults'")
        for distance, name in kinds.items():
            latency = max(1, round((distance - 10) / 20 * local_latency_ns))
            lines += [f"  {name}:",
                      f"    latency: {latency} ns{'':<{max(1, 11 - len(str(latency)))}}# assumption: (distance {distance} - 10) / 20 x the"
                      f" local latency assumption ({local_latency_ns:g} ns): ACPI SLIT distances are relative latencies,"
                      " and a request and its data each cross a hop; calibrate"]
            if carried and distance in carried:
                lines.append(measured_bandwidth_line("    bandwidth: ", *carried[distance]))
    lines.append("links:                      # " + ("inferred from the distance matrix" if host.distances is not None
                                                  else "assumed: a chain (see above)"))
    for a, b in inference.links:
        d = distances[(a, b)]
        kind = f", kind: {kinds[d]}" if d is not None and d in kinds else ""
        lines.append(f"  - {{a: {a}, b: {b}{kind}}}" + (f"   # distance {d}" if d is not None else ""))
    return lines
