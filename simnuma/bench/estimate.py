"""How long a suite will take: a quick probe of the host and a cost per case.

Before a suite starts, :func:`probe_host` runs one idle thread of each op
(``H.0.r.H``, ``H.0.w.H``, ``H.0.t.H``, ``H.0.l.H`` on the home node H, from
its first core this process may use: core 0 here) with
two repetitions at the suite's array size and pages, and times each process
from the outside.  That gives, per op, the time of one pass over the arrays
and the time everything else takes (starting the process, mapping, binding,
filling the arrays or linking the chase, verifying the placement), and the
single-thread bandwidths the suite paces its background streams against.
Where node H has a second CPU it may use it then runs the chase beside one
unthrottled reader (``H.0.l.H + H.1.r.H``): how much a stream slows the chase on this
host, which the loaded-latency cases (most of a suite's time) depend on.

A case then costs (:func:`case_seconds`) the setup of its slowest thread plus
:data:`SETUP_SHARING` times the setups of the others (the threads prepare their
arrays in parallel, but page faults and first touches of one process contend),
plus ``reps`` passes of its slowest foreground thread, with two corrections
for sharing the memory:

- a chase beside streams runs slower than idle: its pass is taken at the
  slowdown the probe measured beside one reader (never below 1), or, where
  it could not be measured, :data:`LOADED_CHASE_SLOWDOWN` times the idle pass;
- foreground streams on one node share its memory: the pass of N unthrottled
  streams is taken at ``1 + (N - 1) x`` :data:`STREAM_SHARING` times a lone
  stream's.

The factors are rough (they were measured on the development machine, a
two-CPU virtual machine); the suite prints the estimate, shows the progress in
estimated seconds (so that tqdm's remaining time corrects itself as cases
finish), and records the estimate beside the time it really took.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..errors import BenchError
from ..workload import parse_spec
from .host import Host, array_count
from .plan import first_core, second_core
from ..units import LINE_BYTES  # noqa: F401 - the one definition

__all__ = ["OpCost", "Probe", "probe_host", "case_seconds", "suite_seconds", "estimate_text",
           "format_duration", "LOADED_CHASE_SLOWDOWN", "STREAM_SHARING", "SETUP_SHARING", "PROBE_OPS", "PROBE_REPS", "LINE_BYTES"]

PROBE_OPS = ("r", "w", "t", "l")
PROBE_REPS = 2
LOADED_CHASE_SLOWDOWN = 1.5   # a chase beside streams: its pass against the idle pass, where not measured
STREAM_SHARING = 0.5          # each further foreground stream on one node adds this many lone passes
SETUP_SHARING = 0.5           # each further thread of a case adds this share of its own setup


@dataclass(frozen=True)
class OpCost:
    """One idle thread of one op at the suite's size: its setup, its pass, its speed."""

    op: str
    setup_seconds: float     # everything but the timed passes, for one process with this thread
    pass_seconds: float      # one pass over its arrays (median of the probe's repetitions)
    GBps: float              # its bandwidth in the op's own byte count (median)
    ns_per_access: float     # time per 64-byte line (per load for the chase)

    def to_dict(self) -> dict:
        return {"setup_seconds": self.setup_seconds, "pass_seconds": self.pass_seconds, "GBps": self.GBps,
                "ns_per_access": self.ns_per_access}


@dataclass(frozen=True)
class Probe:
    """What :func:`probe_host` measured: a cost per op, at one array size."""

    size_bytes: int
    costs: dict            # op -> OpCost
    seconds: float = 0.0   # how long the probe took
    failures: dict = field(default_factory=dict)   # op -> why its probe failed
    chase_slowdown: float | None = None   # the chase's pass beside one reader against its idle pass (None: not measured)

    @property
    def loaded_chase_slowdown(self) -> float:
        """The factor a chase beside streams takes its pass at: measured, else :data:`LOADED_CHASE_SLOWDOWN`."""
        return LOADED_CHASE_SLOWDOWN if self.chase_slowdown is None else self.chase_slowdown

    @property
    def stream_GBps(self) -> dict:
        """Single-thread bandwidth of each streaming op, for pacing background streams."""
        return {op: c.GBps for op, c in self.costs.items() if op != "l"}

    def cost(self, op: str) -> OpCost:
        """The cost of ``op``; for an op whose probe failed, the slowest op's (its cases may fail too)."""
        if op in self.costs:
            return self.costs[op]
        return max(self.costs.values(), key=lambda c: c.setup_seconds + c.pass_seconds)

    def to_dict(self) -> dict:
        return {"size_bytes": self.size_bytes, "seconds": self.seconds, "reps": PROBE_REPS,
                "ops": {op: c.to_dict() for op, c in self.costs.items()}, "failures": dict(self.failures),
                "loaded_chase_slowdown": self.loaded_chase_slowdown,
                "loaded_chase_slowdown_measured": self.chase_slowdown is not None}


def _cost(op: str, report: dict, wall_seconds: float) -> OpCost:
    (thread,) = [t for t in report["threads"] if t["role"] == "foreground"]
    timed = sum(thread["seconds"]["all"])
    return OpCost(op=op, setup_seconds=max(0.0, wall_seconds - timed), pass_seconds=thread["seconds"]["median"],
                  GBps=thread["GBps"]["median"], ns_per_access=thread["ns_per_access"]["median"])


def probe_host(host: Host, home: int, size_bytes=None, pages: str = "auto", run=None) -> Probe:
    """Time one idle thread of each op on node ``home`` (``run``: :func:`~simnuma.bench.run.run_bench`)."""
    if run is None:
        from .build import binary_path
        from .run import run_bench as run
        binary_path()  # a first use compiles the benchmark: not a cost of the cases
    costs, failures = {}, {}
    size = 0   # the array size of the probes (each report says it; no probe ran: an error below)
    started = time.monotonic()
    node = host.node(home)
    core = first_core(host, node) if node is not None else 0
    for op in PROBE_OPS:
        spec = f"{home}.{core}.{op}.{home}"
        before = time.monotonic()
        try:
            report = run([spec], (), size_bytes=size_bytes, reps=PROBE_REPS, host=host, pages=pages)
        except BenchError as exc:
            failures[op] = f"{spec}: {exc}"
            continue
        costs[op] = _cost(op, report, time.monotonic() - before)
        size = report["size_bytes"]
    if not costs:
        raise BenchError(f"the probe that plans the suite failed: {failures[PROBE_OPS[0]]}")
    slowdown = _chase_slowdown(host, home, costs, size_bytes, pages, run)
    return Probe(size_bytes=size, costs=costs, seconds=time.monotonic() - started, failures=failures,
                 chase_slowdown=slowdown)


def _chase_slowdown(host: Host, home: int, costs: dict, size_bytes, pages: str, run) -> float | None:
    """The chase's pass beside one unthrottled reader on its node against its idle pass (at least 1), or None
    where the node has one CPU (or one this process may use), the idle chase or reader was not measured, or the
    loaded run fails."""
    node = host.node(home)
    if node is None or len(node.cpus) < 2 or "l" not in costs or "r" not in costs:
        return None
    second = second_core(host, node)
    if not host.may_use(node.cpus[second]):   # no CPU of the node for the reader beside the chase
        return None
    try:
        reader = f"{home}.{second}.r.{home}"
        spec = f"{home}.{first_core(host, node)}.l.{home}"
        report = run([spec], (reader,), size_bytes=size_bytes, reps=PROBE_REPS, host=host, pages=pages)
    except BenchError:
        return None
    chase = [t for t in report.get("threads", ()) if t.get("role") == "foreground"]
    idle = costs["l"].pass_seconds
    if len(chase) != 1 or idle <= 0:   # not the one chase asked for: a refinement, not worth failing the suite
        return None
    return max(1.0, chase[0]["seconds"]["median"] / idle)


def _pass_seconds(spec, probe: Probe) -> float:
    """One pass of one foreground thread alone (a paced one takes at least its bytes over its rate)."""
    alone = probe.cost(spec.op).pass_seconds
    if spec.rate_GBps is not None:
        return max(alone, probe.size_bytes * array_count(spec.op) / spec.rate_GBps / 1e9)
    return alone


def case_seconds(case, probe: Probe, reps: int) -> float:
    """Estimated seconds of one run of ``case`` (a :class:`~simnuma.bench.plan.PlannedCase`) with ``reps`` repetitions."""
    foreground = [parse_spec(s) for s in case.threads]
    background = [parse_spec(s) for s in case.background]
    setups = sorted((probe.cost(s.op).setup_seconds for s in foreground + background), reverse=True)
    setup = setups[0] + SETUP_SHARING * sum(setups[1:])
    passes = []
    for spec in foreground:
        one = _pass_seconds(spec, probe)
        if spec.op == "l":
            if background or len(foreground) > 1:
                one *= probe.loaded_chase_slowdown
        else:
            streams = [s for s in foreground + background
                       if s.op != "l" and s.rate_GBps is None and s.mem_node == spec.mem_node]
            one *= 1 + (max(len(streams), 1) - 1) * STREAM_SHARING
        passes.append(one)
    return setup + reps * max(passes)


def suite_seconds(cases, probe: Probe, reps: int) -> dict:
    """Estimated seconds of one run of each case (by name) with ``reps`` repetitions."""
    return {case.name: case_seconds(case, probe, reps) for case in cases}


def estimate_text(per_case: dict, rounds: int, reps: int, probe: Probe) -> str:
    """One line for the terminal: the estimate and how it was derived."""
    total = rounds * sum(per_case.values())
    chase = "measured beside one reader" if probe.chase_slowdown is not None else "assumed"
    beside = " and of the chase beside one reader" if probe.chase_slowdown is not None else ""
    failed = "".join(f"; the probe of {op} failed ({why}): its cases are estimated as the slowest op's"
                     for op, why in probe.failures.items())
    return (f"bench suite: {len(per_case)} cases x {rounds} rounds of {reps} repetitions, estimated {format_duration(total)}"
            f" (from a {probe.seconds:.1f} s probe of one idle thread per op{beside}: each case = the setup of its slowest"
            f" thread, +{SETUP_SHARING:g} x each other's, + {reps} passes of its slowest foreground thread,"
            f" x{probe.loaded_chase_slowdown:.2f} for a chase beside streams ({chase}),"
            f" +{STREAM_SHARING:g} pass per further stream on its node)" + failed)


def format_duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
