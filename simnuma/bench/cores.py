"""Which CPUs a suite's threads take: the home node it measures from, the first core of a node (its first CPU
this process may use) and the core of a second thread beside it."""
from __future__ import annotations

from ..errors import BenchError
from .host import Host

__all__ = ["first_core", "second_core"]


def _home_node(host: Host):
    """The node the suite measures from (from its first core, :func:`first_core`): the first with CPUs and memory,
    of those whose first CPU this process may use where there are any, else of those with any CPU it may use (a
    job given the second socket, or every CPU but each socket's first, as a container whose host keeps those for
    itself), and of those a node with a second CPU it may use where there is one."""
    usable = [n for n in host.nodes if n.cpus and n.has_memory]
    if not usable:
        raise BenchError("no node of this host has both CPUs and memory")
    usable = ([n for n in usable if host.may_use(n.cpus[0])] or [n for n in usable if any(map(host.may_use, n.cpus))]
              or usable)
    return next((n for n in usable if sum(map(host.may_use, n.cpus)) >= 2), usable[0])


def first_core(host: Host, node) -> int:
    """The core (index in the node's CPU list) a node's first thread runs on: its first CPU this process may use
    (0 where it may use all, or none: a case there is then planned as skipped for that CPU)."""
    return next((c for c, cpu in enumerate(node.cpus) if host.may_use(cpu)), 0)


def second_core(host: Host, node) -> int:
    """The core (index in the node's CPU list) of a second thread beside one on its first core
    (:func:`first_core`): the first other that is not a hardware thread of that core (where sysfs says; SMT
    siblings are numbered next to each other on some machines) and that this process may use, else the first
    other core."""
    first = first_core(host, node)
    siblings = set(host.siblings(node.cpus[first]))
    free = [c for c in range(len(node.cpus)) if c != first and node.cpus[c] not in siblings]
    return next((c for c in free if host.may_use(node.cpus[c])), free[0] if free else 1 if first == 0 else 0)
