"""Which CPUs a suite's threads take: the home node it measures from, the first core of a node (its first CPU
this process may use) and the core of a second thread beside it."""
from __future__ import annotations

from ..errors import BenchError
from .cpulists import format_cpulist
from .host import Host

__all__ = ["allowed_cores", "first_core", "second_core", "beside_first", "memory_allowed", "home_note"]


def memory_allowed(host: Host, node) -> bool:
    """Whether the node has memory this process may use (its cpuset's ``Mems_allowed``; any where not known)."""
    return node.has_memory and (host.allowed_mems is None or node.id in host.allowed_mems)


def _preferred(host: Host, nodes: list):
    """Of ``nodes``: those whose first CPU this process may use where there are any, else those with any CPU it may
    use, else all; and of those the first with a second CPU it may use where there is one, else the first."""
    nodes = ([n for n in nodes if host.may_use(n.cpus[0])] or [n for n in nodes if allowed_cores(host, n)]
             or nodes)
    return next((n for n in nodes if len(allowed_cores(host, n)) >= 2), nodes[0])


def _home_node(host: Host):
    """The node the suite measures from (from its first core, :func:`first_core`): of the nodes with CPUs and memory
    whose memory this process may use (:func:`memory_allowed`) and with a CPU it may use, the first whose first
    CPU it may use where there are any, else any (a job given the second socket, or every CPU but each socket's
    first, as a container whose host keeps those for itself), and of those a node with a second CPU it may use
    where there is one.  Where no node has both, the node the suite refuses to run from (it says why): the first
    whose memory it may use, else the first with a CPU it may use."""
    usable = [n for n in host.nodes if n.cpus and n.has_memory]
    if not usable:
        raise BenchError("no node of this host has both CPUs and memory")
    allowed = [n for n in usable if memory_allowed(host, n)]
    runnable = [n for n in allowed if allowed_cores(host, n)]
    return _preferred(host, runnable or allowed or usable)


def home_note(host: Host, home) -> str:
    """Why the suite measures from ``home`` rather than the node it would take were every memory node allowed
    ('' where that is ``home``, or where ``home`` cannot run the suite either)."""
    usable = [n for n in host.nodes if n.cpus and n.has_memory]
    unrestricted = _preferred(host, [n for n in usable if allowed_cores(host, n)] or usable)
    if (unrestricted.id == home.id or memory_allowed(host, unrestricted) or not memory_allowed(host, home)
            or not allowed_cores(host, home)):
        return ""
    return (f"the suite measures from node {home.id} (CPUs {format_cpulist(home.cpus)}), not node {unrestricted.id}:"
            f" node {unrestricted.id}'s memory is not among the memory nodes this process may use (Mems_allowed:"
            f" {format_cpulist(host.allowed_mems)}; a cpuset restricts it), so the cases with an array there are"
            " skipped")


def allowed_cores(host: Host, node) -> list:
    """The cores (indices in the node's CPU list) whose CPUs this process may use."""
    return [c for c, cpu in enumerate(node.cpus) if host.may_use(cpu)]


def first_core(host: Host, node) -> int:
    """The core (index in the node's CPU list) a node's first thread runs on: its first CPU this process may use
    (0 where it may use all, or none: a case there is then planned as skipped for that CPU)."""
    return next(iter(allowed_cores(host, node)), 0)


def beside_first(host: Host, node) -> list:
    """The node's other cores than its first (:func:`first_core`) that are not hardware threads of that core (where
    sysfs says; SMT siblings are numbered next to each other on some machines), allowed or not."""
    first = first_core(host, node)
    siblings = set(host.siblings(node.cpus[first]))
    return [c for c in range(len(node.cpus)) if c != first and node.cpus[c] not in siblings]


def second_core(host: Host, node) -> int:
    """The core (index in the node's CPU list) of a second thread beside one on its first core: the first of
    :func:`beside_first` that this process may use, else the first of them."""
    free = beside_first(host, node)
    return next((c for c in free if host.may_use(node.cpus[c])), free[0] if free else 1 if first_core(host, node) == 0
                else 0)
