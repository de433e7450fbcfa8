"""Which buffers a buffer's packets may wait for next: the graph along which full buffers can back up.

A packet holds its buffer until the next stage accepts it (app note 40555,
A.1: full crossbar buffers back up into the SRI), so a buffer is full either
because what drains it is slow or because the buffer its packets go to next
is full too.  :func:`buffer_feeds` lists, per buffer pool (by name), the pools
its packets may need next, from the board's routes and the packet flows of
:mod:`simnuma.model.coherence`:

* an SRI's request and posted buffers feed the first link towards the home
  node, or the local MCT's DRAM queue; its response buffers (probe responses,
  source-done, no data) the first link's response command buffers;
* an MCT's DRAM queue feeds its response buffers (a read keeps its entry until
  its data have one), and with ``memory.release: done`` also what a source-done
  crosses on its way to it (every other node's SRI response buffers and the
  response command buffers of the links on the way); its response buffers
  feed the first link towards the requester, its probe buffers the first link
  towards every probed node;
* a link's receive buffers feed the next link of every route through it, or,
  where routes end: the DRAM queue (requests, victims), the SRI's probe queue
  (probes); responses are consumed on arrival;
* the SRI's probe queue feeds no buffer: a probe holds its slot for the
  lookup only.

These are the pairs whose waits a run accounts for (each pool's holders'
slot-time waiting, by the pool awaited: :class:`~simnuma.model.credit.CreditPool`),
in the order of its counter snapshots.  Which of them a run actually waited
on is measured, not read from here: the bottleneck
(:func:`simnuma.model.bottleneck.bottleneck`) follows the measured waits.
"""
from __future__ import annotations

from .packet import POSTED, PROBE, REQUEST, RESPONSE

__all__ = ["buffer_feeds"]


def _link_pools(d, vc: int) -> list:
    """The receive pools a packet of channel ``vc`` needs on link direction ``d`` (command, and data)."""
    pools = [d.cmd_pools[vc]]
    if d.data_pools[vc] is not None:
        pools.append(d.data_pools[vc])
    return pools


def buffer_feeds(system) -> dict:
    """``{pool name: (names of the pools its packets may wait for next)}`` for every pool of ``system``."""
    feeds: dict[str, set] = {p.name: set() for p in system.pools}

    def add(pool, targets) -> None:
        if pool is not None:
            feeds[pool.name].update(t.name for t in targets if t is not None)

    n = len(system.sris)
    for i in range(n):
        sri, mct = system.sris[i], system.mcts[i]
        # every destination, in every lane of links in parallel; each packet class on its own routes
        for route, resp_route, probe_route in zip(sri.routes, sri.resp_routes, mct.probe_routes):
            if route:
                add(sri.pools[REQUEST], _link_pools(route[0], REQUEST))
                add(sri.pools[POSTED], _link_pools(route[0], POSTED))
                add(sri.pools[RESPONSE], [resp_route[0].cmd_pools[RESPONSE]])   # probe responses, source-done
                add(mct.pools[RESPONSE], _link_pools(resp_route[0], RESPONSE))
                add(mct.pools[PROBE], _link_pools(probe_route[0], PROBE))
            else:
                add(sri.pools[REQUEST], [mct.queue])
                add(sri.pools[POSTED], [mct.queue])
        add(mct.queue, [mct.pools[RESPONSE]])
        if not mct.release_at_data:   # a read keeps its entry until its source-done is in
            for j in range(n):
                for resp_route in system.sris[j].resp_routes:
                    if resp_route and resp_route[-1].dst == i:
                        add(mct.queue, [system.sris[j].pools[RESPONSE]] + [d.cmd_pools[RESPONSE] for d in resp_route])
    for i in range(n):
        for routes, channels in ((system.sris[i].routes, (REQUEST, POSTED)), (system.sris[i].resp_routes, (RESPONSE,)),
                                 (system.mcts[i].probe_routes, (PROBE,))):
            for route in routes:
                for d, after in zip(route, route[1:]):
                    for vc in channels:
                        for pool in _link_pools(d, vc):
                            add(pool, _link_pools(after, vc))
                if route:
                    last = route[-1]
                    end = last.dst   # the node index the route ends at
                    for vc, target in ((REQUEST, system.mcts[end].queue), (POSTED, system.mcts[end].queue),
                                       (PROBE, system.sris[end].probe_queue)):
                        if vc in channels:
                            for pool in _link_pools(last, vc):
                                add(pool, [target])
    return {name: tuple(sorted(targets)) for name, targets in feeds.items()}
