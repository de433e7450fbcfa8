"""Which CPUs a suite's threads take: the home node it measures from, the first core of a node (its first CPU
this process may use) and the core of a second thread beside it."""
from __future__ import annotations

from ..errors import BenchError
from .host import Host

__all__ = ["allowed_cores", "first_core", "second_core", "beside_first"]


def _home_node(host: Host):
    """The node the suite measures from (from its first core, :func:`first_core`): the first with CPUs and memory,
    of those whose first CPU this process may use where there are any, else of those with any CPU it may use (a
    job given the second socket, or every CPU but each socket's first, as a container whose host keeps those for
    itself), and of those a node with a second CPU it may use where there is one."""
    usable = [n for n in host.nodes if n.cpus and n.has_memory]
    if not usable:
        raise BenchError("no node of this host has both CPUs and memory")
    usable = ([n for n in usable if host.may_use(n.cpus[0])] or [n for n in usable if allowed_cores(host, n)]
              or usable)
    return next((n for n in usable if len(allowed_cores(host, n)) >= 2), usable[0])


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
