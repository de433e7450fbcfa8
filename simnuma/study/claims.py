"""The claim kinds of a study: how each is read from YAML and checked against the metrics of its
cases."""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

from ..model.result import bottleneck_text, by_pair
from .notation import METRIC_UNITS, METRICS, NOISE_PERCENT
from .records import Claim, Operand, _key_text

if TYPE_CHECKING:
    from .reader import _StudyReader

# ---------------------------------------------------------------- claim kinds

class _ClaimContext:
    """What a claim reader needs: the reader, the claim's path and entry, and the study's cases."""

    def __init__(self, reader: _StudyReader, path, entry, by_key, boards, cases):
        self.reader, self.path, self.entry = reader, path, entry
        self.by_key, self.boards, self.cases = by_key, boards, cases

    @property
    def kind(self) -> str:
        """The kind key of the claim being read."""
        return next(k for k in self.entry if k in CLAIM_KINDS)

    def operand(self, key, value) -> Operand:
        return self.reader.operand(self.path + key, value, self.by_key, self.boards, self.cases)

    def ref(self, key, value) -> tuple:
        return self.reader.ref(self.path + key, value, self.by_key, self.boards)

    def fail(self, key, message) -> NoReturn:
        self.reader.fail(self.path + key, message)

    def number(self, name, default=None, low=0.0, high=math.inf) -> float:
        value = self.entry.get(name, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (low <= value <= high):
            self.fail((name,), f"expected a number in [{low:g}, {high:g}], got {value!r}")
        return float(value)

    def operand_list(self, kind, value, minimum) -> tuple:
        """Cases compared one by one: a list, a group name, or ``{group: NAME, board: LABEL}``."""
        if isinstance(value, (str, dict)):
            name, board = (value, None) if isinstance(value, str) else (value.get("group"), value.get("board"))
            if not isinstance(name, str) or (isinstance(value, dict) and set(value) - {"group", "board"}):
                self.fail((kind,), "expected a list of cases, a group name, or {group: NAME, board: LABEL}")
            if board is not None and board not in self.boards:
                self.fail((kind, "board"), f"unknown board {board!r}; this study's boards: {', '.join(self.boards)}")
            keys = self.reader.group_keys(self.path + (kind,), name, board, self.boards, self.cases)
            operands = tuple(Operand((k,)) for k in keys)
        elif isinstance(value, list):
            operands = tuple(self.operand((kind, j), v) for j, v in enumerate(value))
        else:
            operands = ()
        if len(operands) < minimum:
            self.fail((kind,), f"expected at least {minimum} cases (a list, or a group of this study)")
        return operands

    def pair(self, key, value) -> tuple:
        if not isinstance(value, list) or len(value) != 2:
            self.fail(key, "expected a pair [A, B] of cases")
        return (self.operand(key + (0,), value[0]), self.operand(key + (1,), value[1]))

    def resource_target(self, value, need) -> dict:
        """The mapping under the kind key, with exactly the keys ``need``."""
        if not isinstance(value, dict):
            self.fail((self.kind,), f"expected a mapping with {', '.join(need)}")
        for key in value:
            if key not in need:
                self.fail((self.kind, key), f"unknown key; expected: {', '.join(need)}")
        for key in need:
            if key not in value:
                self.fail((self.kind,), f"missing {key!r}")
        return value


@dataclass(frozen=True)
class _ClaimKind:
    """How to read one kind of claim and how to check it."""

    read: Callable[[_ClaimContext, Any], dict]               # (context, value) -> args
    check: Callable[[dict, Claim, dict], tuple[bool, str]]   # (args, claim, values) -> (passed, numbers)
    options: tuple = ()
    help: str = ""


def _read_compare(ctx: _ClaimContext, value) -> dict:
    return {"a": ctx.operand((ctx.kind,), value), "b": ctx.operand(("than",), ctx.entry.get("than")),
            "by_percent": ctx.number("by_percent", NOISE_PERCENT, 0.0, 1000.0)}


def _read_spread(ctx: _ClaimContext, value) -> dict:
    name = "within_percent" if ctx.kind == "about_equal" else "by_more_than_percent"
    return {"operands": ctx.operand_list(ctx.kind, value, 2), "percent": ctx.number(name, None, 0.0, 1000.0)}


def _read_ordering(ctx: _ClaimContext, value) -> dict:
    return {"operands": ctx.operand_list("ordering", value, 2),
            "by_percent": ctx.number("by_percent", NOISE_PERCENT, 0.0, 1000.0)}


def _read_slows_more(ctx: _ClaimContext, value) -> dict:
    return {"a": ctx.pair(("slows_more",), value), "b": ctx.pair(("than",), ctx.entry.get("than")),
            "by_points": ctx.number("by_points", NOISE_PERCENT, 0.0, 1e9)}


def _read_shrinks(ctx: _ClaimContext, value) -> dict:
    if not isinstance(value, list) or len(value) < 2:
        ctx.fail(("difference_shrinks",), "expected a list of at least two pairs [A, B], in rising order of load")
    return {"pairs": tuple(ctx.pair(("difference_shrinks", j), p) for j, p in enumerate(value)),
            "by_points": ctx.number("by_points", NOISE_PERCENT, 0.0, 1e9)}


def _read_reverses(ctx: _ClaimContext, value) -> dict:
    if not isinstance(value, list) or len(value) < 2:
        ctx.fail(("reverses",), "expected a list of at least two pairs [A, B], in rising order of load")
    return {"pairs": tuple(ctx.pair(("reverses", j), p) for j, p in enumerate(value)),
            "by_percent": ctx.number("by_percent", NOISE_PERCENT, 0.0, 1000.0)}


def _read_link(ctx: _ClaimContext, value) -> dict:
    target = ctx.resource_target(value, ("case", "link", "value"))
    key = ctx.ref((ctx.kind, "case"), target["case"])
    links = target["link"] if isinstance(target["link"], list) else [target["link"]]
    topo = ctx.boards[key[0]].topology
    directions = []
    for j, text in enumerate(links):
        m = re.fullmatch(r"\s*(\d+)\s*->\s*(\d+)\s*", str(text))
        if not m or (int(m.group(1)), int(m.group(2))) not in topo.directions:
            known = ", ".join(f"{a}->{b}" for a, b in topo.directions)
            ctx.fail((ctx.kind, "link"), f"{text!r} is not a link direction of board {key[0]!r}; directions: {known}")
        directions.append((int(m.group(1)), int(m.group(2))))
    return {"case": key, "links": tuple(directions), "value": _fraction(ctx, target["value"])}


def _read_memory(ctx: _ClaimContext, value) -> dict:
    target = ctx.resource_target(value, ("case", "node", "value"))
    key = ctx.ref((ctx.kind, "case"), target["case"])
    node = target["node"]
    if node not in ctx.boards[key[0]].topology.node_ids:
        ctx.fail((ctx.kind, "node"), f"no node {node!r} on board {key[0]!r}")
    return {"case": key, "node": node, "value": _fraction(ctx, target["value"])}


def _read_bottleneck(ctx: _ClaimContext, value) -> dict:
    target = ctx.resource_target(value, ("case", "resource"))
    resource = target["resource"]
    if not isinstance(resource, str) or not re.fullmatch(r"(link( \d+->\d+)?|memory( N\d+)?)", resource):
        ctx.fail((ctx.kind, "resource"), f"expected 'link', 'memory', 'link A->B' or 'memory NX', got {resource!r}")
    key = ctx.ref((ctx.kind, "case"), target["case"])
    topo = ctx.boards[key[0]].topology
    numbers = [int(n) for n in re.findall(r"\d+", resource)]
    if len(numbers) == 2:
        if tuple(numbers) not in topo.directions:
            known = ", ".join(f"{a}->{b}" for a, b in topo.directions)
            ctx.fail((ctx.kind, "resource"), f"{resource!r}: no link direction {numbers[0]}->{numbers[1]} on board"
                                             f" {key[0]!r}; directions: {known}")
        resource = f"link {numbers[0]}->{numbers[1]}"     # as a result names it
    elif numbers:
        if numbers[0] not in topo.node_ids:
            ctx.fail((ctx.kind, "resource"), f"{resource!r}: no node {numbers[0]} on board {key[0]!r}")
        resource = f"memory N{numbers[0]}"
    return {"case": key, "resource": resource}


def _fraction(ctx, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        ctx.fail((ctx.kind, "value"), f"expected a utilisation in [0, 1], got {value!r}")
    return float(value)


# -- checks: (args, claim, values) -> (passed, numbers)

def _check_slower(args, claim, values):
    return _check_order(args, claim, values, "slower")


def _check_faster(args, claim, values):
    return _check_order(args, claim, values, "faster")


def _check_order(args, claim, values, word: str):
    """A is ``word`` ("slower" or "faster") than B by more than ``by_percent``."""
    a, b = _value(args["a"], claim.metric, values), _value(args["b"], claim.metric, values)
    diff = _percent_slower(a, b, claim.metric) if word == "slower" else _percent_slower(b, a, claim.metric)
    passed = diff > args["by_percent"]
    return passed, (f"{_show(args['a'], claim.metric, values)} vs {_show(args['b'], claim.metric, values)}: "
                    f"{_signed(diff)} {word} (needs > {args['by_percent']:g}%)")


def _spread_percent(operands, metric, values) -> float:
    numbers = [_value(o, metric, values) for o in operands]
    return 100.0 * (max(numbers) - min(numbers)) / min(numbers) if min(numbers) > 0 else math.inf


def _check_about_equal(args, claim, values):
    spread = _spread_percent(args["operands"], claim.metric, values)
    shown = "; ".join(_show(o, claim.metric, values) for o in args["operands"])
    return spread <= args["percent"], f"{shown}: spread {spread:.1f}% (allowed {args['percent']:g}%)"


def _check_differ(args, claim, values):
    spread = _spread_percent(args["operands"], claim.metric, values)
    shown = "; ".join(_show(o, claim.metric, values) for o in args["operands"])
    return spread > args["percent"], f"{shown}: spread {spread:.1f}% (needs > {args['percent']:g}%)"


def _check_ordering(args, claim, values):
    ops = args["operands"]
    steps = [_percent_slower(_value(b, claim.metric, values), _value(a, claim.metric, values), claim.metric)
             for a, b in zip(ops, ops[1:])]
    shown = " < ".join(_show(o, claim.metric, values) for o in ops)
    return all(s > args["by_percent"] for s in steps), (f"{shown} (steps {', '.join(_signed(s) for s in steps)};"
                                                        f" each needs > {args['by_percent']:g}%)")


def _check_slows_more(args, claim, values):
    growth = []
    for near, far in (args["a"], args["b"]):
        growth.append(_percent_points(far, claim.metric, values) - _percent_points(near, claim.metric, values))
    (a0, a1), (b0, b1) = args["a"], args["b"]
    unit = "pts" if claim.metric == "time" else METRIC_UNITS[claim.metric]
    return growth[0] - growth[1] > args["by_points"], (
        f"{_show(a0, claim.metric, values)} -> {_show(a1, claim.metric, values)}: {_signed(growth[0], unit)}; "
        f"{_show(b0, claim.metric, values)} -> {_show(b1, claim.metric, values)}: {_signed(growth[1], unit)} "
        f"(needs more by > {args['by_points']:g} {unit})")


def _check_shrinks(args, claim, values):
    diffs = [_percent_points(a, claim.metric, values) - _percent_points(b, claim.metric, values)
             for a, b in args["pairs"]]
    unit = "pts" if claim.metric == "time" else METRIC_UNITS[claim.metric]
    shown = "; ".join(f"{_short(a, values)} minus {_short(b, values)}: {_signed(d, unit)}"
                      for (a, b), d in zip(args["pairs"], diffs))
    return diffs[0] - diffs[-1] > args["by_points"], f"{shown} (needs last < first by > {args['by_points']:g} {unit})"


def _check_reverses(args, claim, values):
    (a0, b0), (a1, b1) = args["pairs"][0], args["pairs"][-1]
    before = _percent_slower(_value(a0, claim.metric, values), _value(b0, claim.metric, values), claim.metric)
    after = _percent_slower(_value(a1, claim.metric, values), _value(b1, claim.metric, values), claim.metric)
    margin = args["by_percent"]
    passed = before < -margin and after > margin
    return passed, (f"first: {_show(a0, claim.metric, values)} vs {_show(b0, claim.metric, values)}: "
                    f"{_signed(before)} slower (needs < -{margin:g}%); last: {_show(a1, claim.metric, values)} vs "
                    f"{_show(b1, claim.metric, values)}: {_signed(after)} slower (needs > {margin:g}%)")


def _check_link(args, claim, values, above: bool):
    m = values[args["case"]]
    utils = [m.links.get(d, 0.0) for d in args["links"]]
    passed = all((u > args["value"]) if above else (u < args["value"]) for u in utils)
    shown = ", ".join(f"{a}->{b} {100 * u:.1f}%" for (a, b), u in zip(args["links"], utils))
    return passed, f"{_name(args['case'], values)}: {shown} busy ({'>' if above else '<'} {100 * args['value']:g}%)"


def _check_memory(args, claim, values, above: bool):
    u = values[args["case"]].memory.get(args["node"], 0.0)
    passed = u > args["value"] if above else u < args["value"]
    return passed, (f"{_name(args['case'], values)}: memory N{args['node']} {100 * u:.1f}% busy "
                    f"({'>' if above else '<'} {100 * args['value']:g}%)")


def _check_bottleneck(args, claim, values):
    m = values[args["case"]]
    want = args["resource"]
    passed = m.bottleneck == want or m.bottleneck.split(" ")[0] == want
    return passed, f"{_name(args['case'], values)}: bottleneck {m.bottleneck_text}, expected {want}"


CLAIM_KINDS = {
    "slower": _ClaimKind(_read_compare, _check_slower, ("than", "by_percent"),
                         "A is slower than B (longer time, higher latency or lower bandwidth) by more than "
                         "by_percent (default 1, the steady-state noise)"),
    "faster": _ClaimKind(_read_compare, _check_faster, ("than", "by_percent"), "A is faster than B"),
    "about_equal": _ClaimKind(_read_spread, _check_about_equal, ("within_percent",),
                              "the slowest of the cases is at most within_percent slower than the fastest"),
    "differ": _ClaimKind(_read_spread, _check_differ, ("by_more_than_percent",),
                         "the slowest of the cases is more than by_more_than_percent slower than the fastest"),
    "ordering": _ClaimKind(_read_ordering, _check_ordering, ("by_percent",),
                           "the cases from fastest to slowest, each step by more than by_percent (default 1)"),
    "slows_more": _ClaimKind(_read_slows_more, _check_slows_more, ("than", "by_points"),
                             "[near, far]: the time grows more from near to far than in the 'than' pair, by "
                             "more than by_points points of 0.0.r.0 (default 1)"),
    "difference_shrinks": _ClaimKind(_read_shrinks, _check_shrinks, ("by_points",),
                                     "pairs [A, B] in rising load: A's excess over B is smaller in the last "
                                     "pair than in the first"),
    "reverses": _ClaimKind(_read_reverses, _check_reverses, ("by_percent",),
                           "pairs [A, B] in rising load: A is faster than B in the first pair and slower in the "
                           "last, each by more than by_percent (default 1)"),
    "link_utilization_above": _ClaimKind(_read_link, lambda a, c, v: _check_link(a, c, v, True)),
    "link_utilization_below": _ClaimKind(_read_link, lambda a, c, v: _check_link(a, c, v, False)),
    "memory_utilization_above": _ClaimKind(_read_memory, lambda a, c, v: _check_memory(a, c, v, True)),
    "memory_utilization_below": _ClaimKind(_read_memory, lambda a, c, v: _check_memory(a, c, v, False)),
    "bottleneck": _ClaimKind(_read_bottleneck, _check_bottleneck),
}


# ---------------------------------------------------------------- values and evaluation

@dataclass(frozen=True)
class CaseMetrics:
    """The numbers of one simulated case that claims and tables use."""

    time_ns: float                  # until every foreground thread has finished
    latency_ns: float               # mean over foreground threads of their mean latency
    bandwidth_GBps: float           # sum over foreground threads
    baseline_ns: float | None       # 0.0.r.0 alone on the same board
    links: dict = field(default_factory=dict)     # (src, dst) -> utilisation
    memory: dict = field(default_factory=dict)    # node -> utilisation
    bottleneck: str = "none"
    bottleneck_utilization: float = 0.0
    bottleneck_text: str = "none"

    @property
    def percent(self) -> float | None:
        """Time as a percentage of 0.0.r.0 on the same board."""
        return 100.0 * self.time_ns / self.baseline_ns if self.baseline_ns else None

    def value(self, metric: str) -> float:
        return getattr(self, METRICS[metric])


def metrics_from_result(data: dict, baseline_ns) -> CaseMetrics:
    """CaseMetrics from a result dictionary (``Result.to_dict()`` or its compact form)."""
    fg = [t for t in data["threads"] if t["role"] == "foreground"]
    return CaseMetrics(
        time_ns=data["makespan_ns"],
        latency_ns=sum(t["latency_ns"]["mean"] for t in fg) / len(fg),
        bandwidth_GBps=sum(t["bandwidth_GBps"] for t in fg),
        baseline_ns=baseline_ns,
        links=by_pair(data["links"], lambda l: l["utilization"]),   # links in parallel: the busiest
        memory={m["node"]: m["utilization"] for m in data["memory"]},
        bottleneck=data["bottleneck"]["resource"],
        bottleneck_utilization=data["bottleneck"]["utilization"] or 0.0,
        bottleneck_text=bottleneck_text(data["bottleneck"]) if "limit" in data["bottleneck"] else
        data["bottleneck"]["resource"],
    )


def _value(op: Operand, metric: str, values) -> float:
    numbers = [values[k].value(metric) for k in op.keys]
    if op.reduce == "max":
        return max(numbers)
    if op.reduce == "min":
        return min(numbers)
    return sum(numbers) / len(numbers)


def _percent_slower(a: float, b: float, metric: str) -> float:
    """How much slower a is than b, in percent (negative: faster)."""
    if metric == "bandwidth":
        return 100.0 * (b - a) / a if a > 0 else math.inf
    return 100.0 * (a - b) / b if b > 0 else math.inf


def _percent_points(op: Operand, metric: str, values) -> float:
    """The operand's value in points of the first case's 0.0.r.0 time (time), else as is."""
    v = _value(op, metric, values)
    base = values[op.keys[0]].baseline_ns
    return 100.0 * v / base if metric == "time" and base else v


def _name(key: tuple, values) -> str:
    """A case key as text: the board label only when the values span several boards."""
    return key[1] if len({k[0] for k in values}) == 1 else _key_text(key)


def _short(op: Operand, values, metric: str = "time") -> str:
    """The operand as text; a max or min names the case that attains it."""
    if op.reduce == "one":
        return _name(op.keys[0], values)
    boards = ", ".join(dict.fromkeys(k[0] for k in op.keys))
    if op.reduce == "mean":
        return f"mean of {len(op.keys)} cases on {boards}" if len(op.keys) > 4 else \
            f"mean of ({', '.join(_name(k, values) for k in op.keys)})"
    pick = max if op.reduce == "max" else min
    attained = pick(op.keys, key=lambda k: values[k].value(metric))
    scope = f"{len(op.keys)} cases on {boards}" if len(op.keys) > 4 else ", ".join(_name(k, values) for k in op.keys)
    return f"{op.reduce} of ({scope}) = {_name(attained, values)}"


def _show(op: Operand, metric: str, values) -> str:
    """The operand and its value: ``0.0.w.1 1.0.w.0 144.9% = 74.47 ms``."""
    v = _value(op, metric, values)
    if metric == "time":
        bases = {values[k].baseline_ns for k in op.keys}
        base = bases.pop() if len(bases) == 1 else None
        number = (f"{100 * v / base:.1f}% = " if base else "") + f"{v / 1e6:.2f} ms"
    elif metric == "latency":
        number = f"{v:.1f} ns"
    else:
        number = f"{v:.3f} GB/s"
    return f"{_short(op, values, metric)} {number}"


def _signed(value: float, unit: str = "%") -> str:
    sep = "" if unit == "%" else " "
    return f"{value:+.1f}{sep}{unit}"


@dataclass(frozen=True)
class ClaimOutcome:
    """A claim checked against simulated numbers."""

    claim: Claim
    passed: bool
    numbers: str

    @property
    def verdict(self) -> str:
        return "PASS" if self.passed else "FAIL"


def evaluate_claim(claim: Claim, values) -> ClaimOutcome:
    """Check ``claim`` against ``values``: ``{case key: CaseMetrics}``."""
    passed, numbers = CLAIM_KINDS[claim.kind].check(claim.args, claim, values)
    return ClaimOutcome(claim, bool(passed), numbers)
