"""The native stride benchmark: the C source (``stride.c``) and its Python side.

- :mod:`.build` compiles ``stride.c`` on first use into a per-user cache;
- :mod:`.host` reads the machine's nodes, CPUs, memory and caches from sysfs
  and places thread specs on it (:mod:`.cpulists`: CPU lists, and the CPUs and
  memory nodes this process may use);
- :mod:`.run` runs the benchmark (:func:`run_bench`);
- :mod:`.plan` plans the standard cases for a host (:func:`suite_plan`), :mod:`.suite`
  runs them in rounds (:func:`run_suite`), :mod:`.merge` merges each case's rounds into one
  report, :mod:`.estimate` says beforehand how long that takes;
- :mod:`.curves` turns a suite's loaded-latency cases into bandwidth-latency
  curves (:func:`curves_from_suite`);
- :mod:`.skeleton` writes a board description of the host;
- :mod:`.cli` registers ``simnuma bench``.

Importing this package compiles nothing.
"""
from __future__ import annotations

from .curves import Curve, curves_from_suite
from .host import Host, discover_host, resolve_threads
from .run import run_bench
from .skeleton import host_topology_yaml
from .suite import run_suite, suite_cases, suite_plan

__all__ = ["run_bench", "run_suite", "suite_cases", "suite_plan", "discover_host", "resolve_threads",
           "host_topology_yaml", "curves_from_suite", "Curve", "Host"]
