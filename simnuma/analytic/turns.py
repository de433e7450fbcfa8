"""How an overloaded memory or probe lookup shares what it serves: in turns among the ports that feed it.

In the simulation a node's DRAM queue and its probe slots take what waits for them from the crossbar's inputs,
first come first served among the packets presented, and each input presents at most as many as it has buffers
of the packet's channel: the SRI its request buffers (``sri.buffers``), each link its receive buffers of the
channel (requests at a memory, probes at a probe lookup).  What an input cannot present waits behind it, in the
link's sender or in the cores.  So a full resource serves its inputs in proportion to their buffers, whatever
each keeps in flight behind them, and the SRI serves its cores in turns (``model/sri.py``): a thread with one
line in flight waits a turn of each other core, not behind every line they keep.

:func:`port_shares` gives each thread its throughput there: the resource's time is shared out among the inputs
by weighted max-min fairness (an input that asks for less than its share gets what it asks; the others split the
rest in proportion to their buffers), then among the cores of an SRI again by max-min fairness, and among the
threads behind a link as one queue served in order (the solver's common wait).  Elsewhere (links, their buffer
pools) the solver keeps the common wait.

A memory that serves its lines in order (a DRAM, a FIFO memory) keeps a full queue's lines ahead of every line
it admits, so each of them also waits for those (``memory.queue`` less one, at the mean time a line takes there);
a curve memory's latency at its load already holds that wait (its lines wait out the curve's latency, not each
other).

Abstracts away: the order of arrivals within a round (a turn is taken as a share of the resource's time, not a
transaction), and the time a thread that asks for less than its share still waits for the round it arrives in.
"""
from __future__ import annotations

from typing import Final

__all__ = ["Port", "common_wait", "ports", "port_shares", "rate_at", "water_fill"]

_INF: Final = float("inf")

# per class label: (what feeds it into the resource, its buffers there, whether that input serves its threads in turns)
Port = tuple[tuple, int, bool]


def ports(board, classes: list) -> dict[int, dict[str, Port]]:
    """``{resource: {class label: port}}`` for each node's memory, DRAM queue and probe lookup on ``board``
    (:class:`~simnuma.analytic.flows.Board`): what feeds each class's requests to its home memory, and its home's
    probes to every other node it probes."""
    out: dict[int, dict[str, Port]] = {}
    requests = board.routes["request"]
    probes = board.routes["probe"]
    in_flight: dict[int, float] = {}   # per home, the lines its threads can keep in flight: a fill and a write-back
    for c in classes:                  # for each write
        in_flight[c.home] = in_flight.get(c.home, 0.0) + c.customers * (1.0 + c.writes)
    for c in classes:
        home = c.home
        # where every line its threads keep in flight fits in its DRAM queue, the memory serves them all in order
        # (the solver's common wait); only a full queue takes them in turns
        if in_flight[home] > board.nodes[home].memory_queue:
            if c.node == home:
                port: Port = (("sri", home), board.topology.node(home).sri_buffers.get("request", 1), True)
            else:
                before = requests[(c.node, home)][-2]
                port = (("link", before, home), board.direction(before, home).buffers["request"][1], False)
            for kind in ("memory", "queue"):
                out.setdefault(board.index[(kind, home)], {})[c.label] = port
        if not board.broadcast:
            continue
        for target in board.node_ids:
            if target != home and board.nodes[target].cached:
                before = probes[(home, target)][-2]
                out.setdefault(board.index[("probe", target)], {})[c.label] = (
                    ("link", before, target), board.direction(before, target).buffers["probe"][1], False)
    return out


def water_fill(demands: list[float], weights: list[float], capacity: float) -> list[float]:
    """Weighted max-min fair shares of ``capacity``: each gets ``min(demand, weight x level)``, the level such that
    they add up to the capacity (or every demand, where they ask for less)."""
    if sum(demands) <= capacity:
        return list(demands)
    order = sorted(range(len(demands)), key=lambda i: demands[i] / weights[i])
    left, weight_left = capacity, sum(weights)
    out = [0.0] * len(demands)
    for n, i in enumerate(order):
        level = left / weight_left
        if demands[i] <= weights[i] * level:
            out[i] = demands[i]
            left -= demands[i]
            weight_left -= weights[i]
        else:
            for j in order[n:]:
                out[j] = weights[j] * level
            break
    return out


def port_shares(users: list[tuple[str, float]], rows: dict, port_of: dict[str, Port],
                floor_ns: float = 0.0) -> dict[str, float]:
    """Each user's throughput (transactions per ns) at a full resource shared in turns among its ports.

    ``users``: ``[(label, share of the resource a transaction)]``; ``rows[label]``: ``(customers, cycle ns, pace
    ns)``, what the class asks at no extra wait; ``floor_ns``: what every transaction waits there at least, turn or no turn
    (behind the lines a full queue holds ahead of it, where the memory serves them in order).
    """
    asked = {label: d * rate_at(rows[label], floor_ns) for label, d in users}
    share = dict(users)
    groups: dict[tuple, list[str]] = {}
    for label, _d in users:
        groups.setdefault(port_of[label][0], []).append(label)
    keys = list(groups)
    wanted = [sum(asked[label] for label in groups[key]) for key in keys]
    given = water_fill(wanted, [float(port_of[groups[key][0]][1]) for key in keys], 1.0)
    out: dict[str, float] = {}
    for key, want, allotted in zip(keys, wanted, given):
        labels = groups[key]
        if want <= allotted * (1.0 + 1e-12):
            out.update({label: asked[label] / share[label] for label in labels})
        elif port_of[labels[0]][2]:   # an SRI: its cores in turns
            fair = water_fill([asked[label] for label in labels], [1.0] * len(labels), allotted)
            out.update({label: f / share[label] for label, f in zip(labels, fair)})
        else:                          # a link's buffer: its threads' packets in the order they came
            wait = common_wait([(share[label] / allotted, *rows[label]) for label in labels])
            out.update({label: rate_at(rows[label], max(wait, floor_ns)) for label in labels})
    return out


def common_wait(users: list[tuple[float, float, float, float]]) -> float:
    """The extra wait a transaction (ns) at which ``users`` (``[(share of the resource a transaction, customers,
    cycle ns, pace ns)]``) take exactly all of a resource: each at ``customers / max(cycle + wait, pace)``.  What
    they take falls as the wait grows: not at all for a class at its pace until the wait has eaten its slack, then
    convex.  Newton's steps from no wait, each stopped where the next paced class starts to give up (from there its
    share falls too, faster than the step assumed), approach the root from below; where every class is at its
    pace, the wait goes straight to the first slack."""
    wait = 0.0
    for _ in range(100):
        taken = slope = 0.0
        slack = _INF   # the wait at which the next class still at its pace starts to give up
        for d, customers, cycle, period in users:
            spent = cycle + wait
            if spent >= period * (1.0 - 1e-12):
                taken += d * customers / spent
                slope += d * customers / (spent * spent)
            else:
                taken += d * customers / period   # at its pace: the wait takes nothing from it yet
                if period - cycle < slack:
                    slack = period - cycle
        if taken <= 1.0 + 1e-9:
            break
        if slope > 0.0:
            step = wait + (taken - 1.0) / slope
            wait = step if step < slack else slack
        elif slack < _INF:
            wait = slack
        else:
            break   # nothing through it can give up anything
    return wait


def rate_at(row: tuple[float, float, float], wait: float) -> float:
    """A class's throughput (transactions per ns) at an extra ``wait`` a transaction: its customers over its cycle
    and that wait, no faster than its pace (``row``: customers, cycle ns, pace ns)."""
    customers, cycle, period = row
    spent = cycle + wait
    return customers / (period if period > spent else spent)
