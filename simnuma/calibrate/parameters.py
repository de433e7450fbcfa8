"""The free parameters a calibration may fit: their board paths, units, bounds and the memory
models that have them, read from the board parameter table (:mod:`simnuma.topology.params`, each
parameter's ``fit``); the fit's settings; parsing ``--fit``."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..errors import CalibrationError
from ..topology.memparams import MEMORY_MODELS
from ..model.system import DEFAULT_SIZE_BYTES  # noqa: F401 - one array size for every command
from ..topology.params import BOARD_PARAMETERS, REQUIRED, declared
from ..topology.schema import check_value
from ..units import KINDS
from ..topology import Topology
from ..workload import parse_spec
from .cases import is_peak, is_remote_peak

DIFF_STEP = 0.05             # finite-difference step, as a fraction of a parameter's range
NOISE_FLOOR = 0.01           # relative precision of one steady-mode prediction (its 1% confidence target)
NOISE_PRIOR_DOF = 4          # the weight, in degrees of freedom, of that precision in the residual variance
NEGLIGIBLE_CHANGE = 1e-3     # a parameter whose step moves no prediction by more than this is unused
CONFIDENCE = 0.95            # the level of the intervals and of the integers' ranges
UNIDENTIFIED_WIDTH = 0.5     # a 95% interval over more than this share of the range: not identified
STRONG_CORRELATION = 0.95    # |r| above this with another fitted parameter: only their combination is determined
MAX_FIT_EVALUATIONS = 15     # residual evaluations per continuous fit (Jacobians come on top)
MOST_FIT_EVALUATIONS = 1000  # --max-evaluations: a fit converges in tens; thousands would run for hours
FIT_FTOL = 1e-2              # stop when the cost falls by less than 1% (predictions are precise to ~1%)
FIT_XTOL = 1e-2              # ... or the step is under 1% of the scaled parameters
JACOBIAN_REFRESH = 2         # accepted steps between finite-difference Jacobians (Broyden updates between)
WINDOW_VERIFIED = 3          # screened integer combinations followed by chord steps: the best predicted ...
WINDOW_VERIFIED_BASE = 2     # ... and the best by their simulated cost at the fit's continuous values
WINDOW_CHORD_STEPS = 2       # frozen-Jacobian Gauss-Newton steps per followed combination
WINDOW_CANDIDATES = 2        # of those, the best ones refitted ...
WINDOW_PROMISE = 3.0         # ... if their cost is under this multiple of the incumbent's
SEARCH_ROUNDS = 3            # rounds of looking for better starts (windows: the grid, then neighbours)
SCAN_FRACTIONS = (1 / 6, 1 / 2, 5 / 6)   # where in its range each parameter is tried by the scan
WIDE_INTEGER = 64            # integers with more values than this (the DRAM queue, wide windows) are searched on a ladder
DOCUMENT_DIGITS = 4          # significant digits of a fitted value in the calibrated board
RECORD_PREFIX = "# simnuma-calibration: "
RATE_RANGE = 10.0             # a link bandwidth is fitted from a tenth to ten times the board's value
KIND_MARK = "@"              # link.latency@socket: the latency of the links of kind socket (a board's link_kinds)
_BLOCK_START = "# ---- simnuma calibrate"
_BLOCK_END = "# ---- end of simnuma calibrate"


# ------------------------------------------------------------------ free parameters

@dataclass(frozen=True)
class FreeParameter:
    """A parameter a calibration may fit: its document path, unit and physical bounds.

    ``models`` are the memory models (``memory.model``) that have it; a
    parameter of another model is refused (:func:`parse_fit`).
    """

    name: str
    path: str
    unit: str
    low: float
    high: float
    description: str
    integer: bool = False
    models: tuple = MEMORY_MODELS
    kind: str | None = None    # a link parameter of the links of one kind (``link.latency@socket``)

    @property
    def base(self) -> str:
        """The catalogue's name of the parameter (``link.latency`` for ``link.latency@socket``)."""
        return self.name.partition(KIND_MARK)[0]

    def for_kind(self, kind: str) -> "FreeParameter":
        """The link parameter of the links of ``kind``: ``link.latency@socket``, at ``link_kinds.socket.latency``."""
        field = self.path.split(".", 1)[1]
        return replace(self, name=f"{self.base}{KIND_MARK}{kind}", path=f"link_kinds.{kind}.{field}", kind=kind,
                       description=f"{self.description} (links of kind {kind})")

    @property
    def op(self) -> str | None:
        """For a per-op core parameter (``core.window.<op>``, ``core.hold.<op>``), the op it belongs to."""
        return self.name.rsplit(".", 1)[1] if self.name.startswith("core.") else None

    @property
    def wide(self) -> bool:
        """An integer whose range is searched on a ladder and by bisection, not value by value."""
        return self.integer and self.high - self.low + 1 > WIDE_INTEGER

    def prior(self, topology: Topology) -> float | None:
        """The value the board gives (its first node, or its first link of the parameter's kind, of no kind for a
        parameter of none): the field the parameter table declares it becomes; None where the board has no such
        link."""
        param, key = declared(self.base)
        if param.scope == "link":
            links = [link for link in topology.links if link.kind == self.kind]
            if not links:
                return None
            given = _given(topology, self.path) if self.kind is not None else None
            if given is not None:    # the kind's own value, not a link's own over it
                given = given.get("a_to_b") if isinstance(given, dict) else given   # a bandwidth per direction
                return float(check_value("bandwidth" if param.kind == "bandwidth_spec" else param.kind, given))
            # a rate is fitted as one bandwidth for both directions: from a's to b's as the prior
            value = getattr(links[0], param.field[0] if isinstance(param.field, tuple) else param.field)
        else:
            value = getattr(topology.nodes[0], param.field)
        if key is not None:   # one key of a family, its default when the board gives none
            default = param.key_default(key)
            value = (value or {}).get(key, None if default is REQUIRED else default)
        return None if value is None else float(value)

    def for_board(self, topology: Topology) -> "FreeParameter":
        """The parameter as the board means it: its memory model's description and bounds, widened
        when the board's own value sits on or past one (to half or twice that value; an integer's
        upper bound to twice it, as far as 1024 or 4096).

        Raises CalibrationError when a node's memory model does not have it.
        """
        models = board_memory_models(topology)
        for model in models:
            if model not in self.models:
                raise CalibrationError(f"--fit {self.name}: board {topology.name!r} has a {model} memory"
                                       f" (memory.model: {model}), {_NOT_IN_MODEL[model]}; {self.name} belongs"
                                       f" to the {' and '.join(self.models)} memory only")
        variant = _MODEL_VARIANTS.get((self.base, models[0])) if len(models) == 1 else None
        out = replace(self, **variant) if variant else self
        prior = out.prior(topology)
        if out.base == "link.bandwidth" and prior:
            return out._rate_for_board(topology, prior)
        if prior is None or prior <= 0 or out.name == "memory.efficiency" or out.low < prior < out.high:
            return out
        if out.integer:   # a window (or queue) at or past its bound: room up to twice the board's value
            top = _INTEGER_MAX.get(out.name, 1024)
            return out.with_bounds(out.low, max(out.high, min(top, 2 * int(round(prior)))))
        return out.with_bounds(min(out.low, prior / 2), max(out.high, 2 * prior))

    def _rate_for_board(self, topology: Topology, prior: float) -> "FreeParameter":
        """A link bandwidth as the board means it: one value for both directions, from a tenth to ten times the
        board's (a range in the board's own scale, where its links carry 4 GB/s or 400: the bounds and the fit's
        steps are fractions of it).  Raises CalibrationError where the board gives it two different directions (a link's
        own value, which the fit drops, may)."""
        given = _given(topology, self.path)
        if isinstance(given, dict) and given.get("a_to_b") != given.get("b_to_a"):   # links' own values: dropped
            raise CalibrationError(f"--fit {self.name}: {self.path} gives its two directions different bandwidths"
                                   f" ({given.get('a_to_b')} and {given.get('b_to_a')}); the fit gives both one:"
                                   " give one bandwidth, or leave it out of the fit")
        return self.with_bounds(prior / RATE_RANGE, prior * RATE_RANGE)

    def rounded(self, value: float) -> float:
        """``value`` as written to a board file: a whole number, or four significant digits."""
        return float(int(round(value))) if self.integer else float(_round(value, DOCUMENT_DIGITS))

    def document_value(self, value: float):
        """``value`` as the board document writes it (``38.62 ns``, ``0.6214``, ``3``)."""
        value = self.rounded(value)
        if self.integer:
            return int(value)
        if self.unit == "ns":
            return f"{_round(value, DOCUMENT_DIGITS)} ns"
        if self.unit == "GB/s":
            return f"{_round(value, DOCUMENT_DIGITS)} GB/s"
        return _round(value, DOCUMENT_DIGITS)

    def format(self, value: float, uncertainty: float | None = None) -> str:
        """``38.6 ± 2.1 ns``."""
        if self.integer:
            return f"{int(round(value))}"
        unit = f" {self.unit}" if self.unit else ""
        if uncertainty is None or not math.isfinite(uncertainty):
            return f"{_round(value, 3)}{unit}"
        return f"{_round(value, 3)} ± {_round(uncertainty, 2)}{unit}"

    @property
    def bounds_text(self) -> str:
        """``20..120 ns``."""
        unit = f" {self.unit}" if self.unit and not self.integer else ""
        return f"{_round(self.low, 4)}..{_round(self.high, 4)}{unit}"

    def with_bounds(self, low: float, high: float) -> "FreeParameter":
        return replace(self, low=low, high=high)


def _given(topology: Topology, path: str):
    """The value the board's document gives at the dotted ``path`` (``link_kinds.socket.latency``), as written; None
    where it gives none."""
    value: object = topology.to_dict()
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def board_memory_models(topology: Topology) -> tuple:
    """The memory models of the board's nodes, each once, in node order."""
    return tuple(dict.fromkeys(n.memory_model for n in topology.nodes))


# why a memory model has no such parameter
_NOT_IN_MODEL = {
    "fifo": "a fixed-latency server",
    "dram": "whose peak and sustained bandwidth follow from its organisation and datasheet timings"
            " (memory.dram), which are facts and never fitted; the sustained efficiency is an output",
    "curve": "whose bandwidth and loaded latency are its measured curves (memory.curves)",
}


def _round(value: float, digits: int):
    """``value`` to ``digits`` significant digits, as an int when whole."""
    if value == 0:
        return 0
    if not math.isfinite(value):
        return value
    rounded = float(f"{value:.{digits}g}")
    return int(rounded) if rounded.is_integer() else rounded


def _catalogue() -> tuple:
    """``(name, board parameter, key)`` of everything the parameter table lets a calibration fit, in
    the catalogue's order (``core.window.r``: the ``r`` of the family ``core.window``)."""
    fitted = sorted((p for p in BOARD_PARAMETERS if p.fit is not None), key=lambda p: p.fit.order if p.fit else 0)
    return tuple((p.name + (f".{key}" if key else ""), p, key) for p in fitted for key in (p.keys or (None,)))


def _free_parameter(name: str, param, key) -> FreeParameter:
    """The catalogue entry of a board parameter (of one key of a family)."""
    fit = param.fit
    return FreeParameter(name, f"{param.section}.{param.path}" + (f".{key}" if key else ""), param.unit_text,
                         fit.low, fit.high, fit.description[key] if key else fit.description,
                         integer=param.kind == "int", models=param.models)


PARAMETERS = {name: _free_parameter(name, param, key) for name, param, key in _catalogue()}
# what a parameter means, and its physical bounds, in one memory model (memory.latency)
_MODEL_VARIANTS = {(name, model): variant for name, param, _ in _catalogue() for model, variant in param.fit.variants}

# every parameter a default fit may hold; default_fit() takes those the chosen cases can identify
DEFAULT_FIT = ("memory.latency", "memory.efficiency", "memory.queue", "link.latency", "link.bandwidth", "xbar.latency",
               "probe.lookup", "core.window.r", "core.window.w", "core.window.t")
_INTEGER_MAX = {name: param.fit.integer_max for name, param, _ in _catalogue() if param.kind == "int"}
FIT_DECIMALS = 9             # a fitted value goes to the board rounded to this many decimals (Evaluator.changes)


def default_fit(topology: Topology, cases, peaks=frozenset()) -> list:
    """The names of the parameters the chosen ``cases`` can identify on ``topology``.

    Always the memory latency and the crossbar; the window of every stride op
    measured; the link latency when a thread crosses a link, and the link
    bandwidth with a remote peak (every core of a node streaming another's
    memory), each one per kind of link crossed on a board with link kinds; the
    probe lookup when a multi-node board broadcasts probes; the DRAM queue (and, for a
    FIFO memory, its efficiency) only with a peak, the only case that fills
    the queue and loads the memory, and not for a curve memory, whose queue
    ``bench host`` derives from the curves (Little's law at the read curve's
    most loaded point): a peak measures the bandwidth the curves already
    give, and would set the queue by a percent of it, where the chase beside
    saturating streams depends on it most.
    """
    specs = [parse_spec(s) for c in cases for s in c.threads + c.background]
    ops = {s.op for s in specs}
    named, peaks = peaks, any(is_peak(c, topology, peaks) for c in cases)
    models = board_memory_models(topology)
    fifo = models == ("fifo",)
    remote_peaks = [parse_spec(c.threads[0]) for c in cases if is_remote_peak(c, topology, named)]
    wanted = {
        "memory.latency": True,
        "memory.efficiency": peaks and fifo,
        "memory.queue": peaks and "curve" not in models,
        "link.latency": bool(topology.links) and any(s.node != s.mem_node for s in specs),
        "link.bandwidth": bool(remote_peaks),
        "xbar.latency": True,
        "probe.lookup": topology.coherence == "broadcast" and len(topology.nodes) > 1,
    }
    names = [n for n in DEFAULT_FIT if wanted.get(n, n.startswith("core.window.") and n[-1] in ops)]
    for name, crossing in (("link.latency", specs), ("link.bandwidth", remote_peaks)):
        if name in names and topology.link_kinds:   # one per kind of link the threads' ways cross
            at = names.index(name)
            names[at:at + 1] = [_kind_name(name, kind) for kind in _crossed_kinds(topology, crossing)]
    return names


def _kind_name(name: str, kind: str | None) -> str:
    """``link.latency@socket``; ``link.latency`` for the links of no kind."""
    return name if kind is None else f"{name}{KIND_MARK}{kind}"


def link_groups(topology: Topology) -> tuple:
    """The kinds a link parameter is fitted for on ``topology``, each once in link order: a board's link kinds,
    and None for its links of no kind; ``(None,)`` on a board without kinds (or links)."""
    return tuple(dict.fromkeys(link.kind for link in topology.links)) or (None,)


def _crossed_kinds(topology: Topology, specs) -> list:
    """The link groups (:func:`link_groups`) that a thread's requests or their data cross, in the board's order."""
    crossed: set = set()
    for s in specs:
        if s.node != s.mem_node:
            for cls in ("request", "response"):
                route = topology.route(*((s.node, s.mem_node) if cls == "request" else (s.mem_node, s.node)), cls)
                crossed.update(topology.link(u, v).kind for u, v in zip(route, route[1:]))
    return [kind for kind in link_groups(topology) if kind in crossed]


def _catalogued(name: str, topology: Topology | None, text: str) -> list:
    """The free parameters ``name`` (``--fit`` item ``text``) stands for: one, or for a link parameter on a board
    with link kinds, one per group of links (``link.latency`` expands to every kind; ``link.latency@socket`` is
    one kind's)."""
    base, mark, kind = name.partition(KIND_MARK)
    if base not in PARAMETERS:
        if base.startswith("memory.dram"):
            raise CalibrationError(f"--fit {text!r}: the DRAM's organisation and timings (memory.dram) are"
                                   " datasheet facts, not fitted; fit memory.latency (the controller) or"
                                   " memory.queue")
        raise CalibrationError(f"--fit {text!r}: unknown parameter; expected one of: {', '.join(PARAMETERS)}"
                               f" (optionally NAME=LOW:HIGH; a link parameter of one link kind as NAME{KIND_MARK}KIND)")
    param = PARAMETERS[base]
    scoped = declared(base)[0].scope == "link"
    if mark and not scoped:
        raise CalibrationError(f"--fit {text!r}: only a link parameter has a kind ({base} is a node's)")
    if topology is None:
        return [param.for_kind(kind) if mark else param]
    if mark:
        if kind not in topology.link_kinds:
            known = ", ".join(topology.link_kinds) or "none (the board has no link kinds)"
            raise CalibrationError(f"--fit {text!r}: board {topology.name!r} has no links of kind {kind!r};"
                                   f" kinds with links are {known}")
        return [param.for_kind(kind).for_board(topology)]
    if scoped and topology.link_kinds:
        return [(param.for_kind(k) if k else param).for_board(topology) for k in link_groups(topology)]
    return [param.for_board(topology)]


def for_link_kinds(params: list, topology: Topology) -> list:
    """``params`` (free parameters) as ``topology`` means them: each catalogue entry with the board's bounds, a
    link parameter one per group of the board's links (:func:`link_groups`) where it has link kinds; a parameter
    given its own bounds as it is."""
    return [q for p in params for q in (_catalogued(p.name, topology, p.name) if p == PARAMETERS.get(p.name) else [p])]


def parse_fit(items=None, topology: Topology | None = None, cases=(), peaks=frozenset()) -> list:
    """Free parameters from ``NAME`` or ``NAME=LOW:HIGH`` items.

    Without items, the default fit (:func:`default_fit` for ``cases`` on
    ``topology``; every name of :data:`DEFAULT_FIT` without a board).  With
    a board, each parameter takes the meaning and bounds of its memory model,
    and one the board's memory model does not have is refused.
    """
    if not items:
        names = default_fit(topology, cases, peaks) if topology is not None else list(DEFAULT_FIT)
        return [p for n in names for p in _catalogued(n, topology, n)]
    out: list = []
    seen: dict = {}   # parameter name -> the item's name that asked for it
    for item in items:
        text = str(item).strip()
        name, bounded, bounds = text.partition("=")
        name = name.strip()
        for param in _catalogued(name, topology, text):
            if param.name in seen:
                earlier = seen[param.name]
                why = (f" (--fit {earlier!r} stands for every kind of link)" if earlier != param.name else
                       f" ({name!r} stands for every kind of link)" if name != param.name else "")
                raise CalibrationError(f"--fit {param.name!r} is given twice{why}")
            seen[param.name] = name
            if bounded:
                param = _bounded(param, *_bounds(bounds, text), text)
            out.append(param)
    return out


def _bounds(bounds: str, text: str) -> tuple[float, float]:
    """``(LOW, HIGH)`` of the ``LOW:HIGH`` of the ``--fit`` item ``text``."""
    try:
        low, high = (float(part) for part in bounds.split(":"))
    except ValueError:    # not numbers, or not two of them
        raise CalibrationError(f"--fit {text!r}: expected NAME=LOW:HIGH with two numbers, got {bounds.strip()!r}"
                               " after '='") from None
    return low, high


def _bounded(param: FreeParameter, low: float, high: float, text: str) -> FreeParameter:
    if not (math.isfinite(low) and math.isfinite(high) and 0 < low < high):
        raise CalibrationError(f"--fit {text!r}: bounds must be positive with LOW < HIGH")
    if round(low, FIT_DECIMALS) <= 0:
        raise CalibrationError(f"--fit {text!r}: LOW is below 1e-{FIT_DECIMALS}, finer than the values the fit gives"
                               " the board")
    for bound in (low, high):
        _check_plausible(param, bound, text)
    if param.name == "memory.efficiency" and high > 1:
        raise CalibrationError(f"--fit {text!r}: an efficiency is at most 1")
    top = _INTEGER_MAX.get(param.name, 1024)
    if param.integer and (low != int(low) or high != int(high) or high > top):
        raise CalibrationError(f"--fit {text!r}: {param.name} bounds are whole numbers from 1 to {top}")
    return param.with_bounds(low, high)


def _check_plausible(param: FreeParameter, bound: float, text: str) -> None:
    """CalibrationError when a board could not take ``bound`` for ``param`` (a time or bandwidth far beyond what
    one can be: the board's own plausibility check, before any simulation)."""
    kind = declared(param.base)[0].kind
    kind = "bandwidth" if kind == "bandwidth_spec" else kind
    if kind not in KINDS:    # counts and fractions: bounded above
        return
    try:
        check_value(kind, f"{bound!r} {param.unit}")
    except ValueError as exc:
        raise CalibrationError(f"--fit {text!r}: {exc}") from None
