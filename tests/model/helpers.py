"""Shared helpers for the model tests: small boards and run-to-quiescence."""
from __future__ import annotations

from simnuma.model.system import System, run_exact
from simnuma.topology import parse_topology
from simnuma.workload import Workload

SMALL = 64 * 1024  # 1024 lines per thread


def two_node_board(window: int = 1, link_GBps: float = 4.0, buffers: int = 15, coherence: str = "probe_filter",
                   memory_GBps: float = 100.0) -> object:
    """A 2-node board whose only possible bottleneck is the one link."""
    return chain_board(2, window, link_GBps, buffers, coherence, memory_GBps)


def run_to_quiescence(topology, threads, background=(), size_bytes=SMALL, seed=1) -> System:
    """Run exact mode, then let every packet in flight land."""
    system = System(topology, Workload.build(threads, background), size_bytes, seed)
    system.extrapolated = None
    run_exact(system)
    system.env.run(until=system.env.now + 100_000.0)
    return system


def chain_board(nodes: int = 3, window: int = 1, link_GBps: float = 4.0, buffers: int = 15,
                coherence: str = "probe_filter", memory_GBps: float = 100.0) -> object:
    """Nodes 0-1-...-(n-1) in a line, uncontended: every hop costs the same."""
    links = ", ".join(f"{{a: {i}, b: {i + 1}}}" for i in range(nodes - 1))
    ids = ", ".join(f"{{id: {i}}}" for i in range(nodes))
    name = "pair" if nodes == 2 else "chain"
    return parse_topology(f"""
name: {name}
defaults:
  cores: 1
  ports: {min(nodes - 1, 2)}
  core: {{window: {{r: {window}, w: {window}, t: {window}}}}}
  memory: {{bandwidth: {memory_GBps} GB/s, efficiency: 1.0, latency: 50 ns, queue: 64}}
  sri: {{latency: 1 ns, buffers: {{request: 15, posted: 15, response: 15}}, probe_queue: 15}}
  mct: {{buffers: {{response: 15, probe: 15}}}}
  xbar: {{latency: 2 ns}}
  probe: {{lookup: 5 ns}}
link_defaults:
  bandwidth: {link_GBps} GB/s
  latency: 10 ns
  buffers: {{request: {buffers}, posted: {buffers}, response: {buffers}, probe: {buffers}}}
nodes: [{ids}]
links: [{links}]
coherence: {coherence}
""", f"{name}.yaml")


def one_node_board(name: str, memory: str, cores: int = 1, window: int = 8, sri: int = 64) -> object:
    """One node whose queues and buffers have room for every line in flight, so that only its memory can
    limit a thread; ``memory`` is the body of the ``memory:`` block, its lines indented four spaces;
    ``sri`` the SRI's buffers of each class."""
    return parse_topology(f"""
name: {name}
defaults:
  cores: {cores}
  ports: 1
  core: {{window: {{r: {window}, w: {window}, t: {window}}}}}
  memory:
{memory.rstrip()}
  sri: {{latency: 1 ns, buffers: {{request: {sri}, posted: {sri}, response: {sri}}}, probe_queue: 15}}
  mct: {{buffers: {{response: 64, probe: 15}}}}
  xbar: {{latency: 1 ns}}
  probe: {{lookup: 5 ns}}
link_defaults: {{bandwidth: 4 GB/s, latency: 10 ns, buffers: {{request: 1, posted: 1, response: 1, probe: 1}}}}
nodes: [{{id: 0}}]
links: []
coherence: probe_filter
""", f"{name}.yaml")


def quartet_sockets_text(name: str, n: int, links, routing: str = "shortest", coherence: str = "broadcast",
                         link_fields: str = "") -> str:
    """A board of ``n`` sockets with the Quartet's parameters, wired by ``links`` (``(a, b)`` pairs), as YAML.

    ``link_fields`` is added to every link entry (``"buffers: {probe: 2}"``); every node gets the ports
    its links need, plus the I/O port of node 0.
    """
    from simnuma.topology.loading import _bundled_text

    links = sorted({tuple(sorted(link)) for link in links})
    degree = max(sum(1 for link in links if s in link) for s in range(n))
    quartet = _bundled_text("quartet")[0]
    head = quartet[:quartet.index("\nnodes:")].replace("name: quartet", f"name: {name}")
    head = head.replace("  ports: 3", f"  ports: {max(3, degree + 1)}")
    extra = f", {link_fields}" if link_fields else ""
    lines = [head, "nodes:"] + [f"  - {{id: {i}}}" for i in range(n)]
    lines += ["links:"] + [f"  - {{a: {a}, b: {b}{extra}}}" for a, b in links]
    lines += ["io:", "  - {node: 0}", f"routing: {routing}", f"coherence: {coherence}"]
    return "\n".join(lines) + "\n"


def uneven_chain(slow_GBps: float):
    """Three nodes in a line whose first link is slow: data forwarded onto the fast one waits for its tail."""
    return parse_topology(f"""
name: uneven
defaults:
  cores: 2
  ports: 2
  core: {{window: {{r: 4, w: 4, t: 4}}}}
  memory: {{bandwidth: 100 GB/s, efficiency: 1.0, latency: 50 ns, queue: 64}}
  sri: {{latency: 1 ns, buffers: {{request: 15, posted: 15, response: 15}}, probe_queue: 15}}
  mct: {{buffers: {{response: 15, probe: 15}}}}
  xbar: {{latency: 2 ns}}
  probe: {{lookup: 5 ns}}
link_defaults:
  bandwidth: 8 GB/s
  latency: 10 ns
  buffers: {{request: 8, posted: 8, response: 8, probe: 8}}
nodes: [{{id: 0}}, {{id: 1}}, {{id: 2}}]
links: [{{a: 0, b: 1, bandwidth: {slow_GBps} GB/s}}, {{a: 1, b: 2}}]
coherence: broadcast
""", "uneven.yaml")
