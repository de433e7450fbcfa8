"""Every board parameter, declared once: its key in a board file, kind and unit, default or whether it
is required, the field of :class:`~simnuma.topology.NodeParams` or
:class:`~simnuma.topology.LinkParams` it becomes, a one-line doc, and whether and within which
bounds ``simnuma calibrate`` may fit it.

Everything else that describes a board parameter is derived from :data:`BOARD_PARAMETERS`:

* the schema the board validator checks against (:mod:`simnuma.topology.schema`: ``NODE_SCHEMA``,
  ``LINK_SCHEMA``, the keys that may be left out, the keys each memory model needs);
* the construction of NodeParams, DramParams and LinkParams from resolved values
  (:mod:`simnuma.topology.helpers`);
* the calibration catalogue of free parameters (:mod:`simnuma.calibrate.parameters`);
* the parameter tables of ``docs/topology.md`` (:mod:`simnuma.topology.paramdocs`:
  ``python -m simnuma.topology.paramdocs`` prints them, ``python -m simnuma.topology.paramdocs --write docs/topology.md``
  rewrites them in place; a test checks the file holds exactly what the table gives).

A node parameter is named by its path below ``defaults`` (``memory.latency``), a link parameter by
``link.`` and its path below ``link_defaults`` (``link.latency``); those are also the names
``--fit`` takes.  Structured values (DRAM times, the address map, memory curves) are declared
with their kind and parsed by their parsers in :mod:`simnuma.topology.memparams`.
"""
from __future__ import annotations

from dataclasses import dataclass

from .memparams import BUFFER_RELEASES, MEMORY_MODELS, OPTIONAL_TIMINGS, PAGE_POLICIES, RELEASES, SCHEDULERS, TIMINGS

__all__ = ["REQUIRED", "Kind", "KINDS", "Fit", "Param", "BOARD_PARAMETERS", "NODE_PARAMETERS",
           "LINK_PARAMETERS", "declared", "options", "schema", "optional_paths", "rate_keys", "model_keys",
           "needed_memory_keys"]


class _Required:
    def __repr__(self):
        return "REQUIRED"


REQUIRED = _Required()   # the default of a parameter every node (or link) must be given


@dataclass(frozen=True)
class Kind:
    """What a kind of value is called in the docs, and its internal unit (what values of the kind the
    validator accepts is :func:`simnuma.topology.schema.check_value`'s)."""

    label: str
    unit: str = ""


def options(names, last: str = "or") -> str:
    """The names in backticks, joined as a sentence joins them: `fifo`, `dram` or `curve`."""
    quoted = [f"`{n}`" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + f" {last} " + quoted[-1]


# the kinds of simnuma.topology.schema.check_value, by the name the schema gives them
KINDS = {
    "int": Kind("count"),
    "count0": Kind("count or 0"),
    "fraction": Kind("fraction"),
    "bool": Kind("flag"),
    "time": Kind("time", "ns"),
    "bandwidth": Kind("bandwidth", "GB/s"),
    "bandwidth_spec": Kind("bandwidth, or `{a_to_b: ..., b_to_a: ...}`", "GB/s"),
    "frequency": Kind("frequency", "GHz"),
    "size": Kind("size", "B"),
    "dram_time": Kind("time or DRAM clocks (`3 clk`)", "ns"),
    "memory_model": Kind(options(MEMORY_MODELS)),
    "scheduler": Kind(options(SCHEDULERS)),
    "page_policy": Kind(options(PAGE_POLICIES)),
    "release": Kind(options(RELEASES)),
    "buffer_release": Kind(options(BUFFER_RELEASES)),
    "address_map": Kind("address fields"),
    "curves": Kind("list of curves"),
}


@dataclass(frozen=True)
class Fit:
    """How ``simnuma calibrate`` may fit a parameter.

    ``order`` is its place in the catalogue (the order ``--fit`` lists names in); ``low``..``high``
    its physical bounds in internal units; ``description`` what a calibration says it fitted (for a
    family of keys, one per key); ``integer_max`` the most ``--fit NAME=LOW:HIGH`` may ask of a
    count; ``variants`` the description and bounds in one memory model, ``((model, {...}), ...)``.
    """

    order: int
    low: float
    high: float
    description: object
    integer_max: int = 1024
    variants: tuple = ()


@dataclass(frozen=True)
class Param:
    """One board parameter.

    ``name`` is its path below ``defaults`` (``link.`` and its path below ``link_defaults`` for a
    link parameter); ``kind`` a kind of :data:`KINDS`; ``field`` the NodeParams or LinkParams field
    it becomes (``dram.<field>``: a field of the node's DramParams; a pair: the two directions of a
    link; None: it only feeds the parameter named by ``either``).  ``keys`` make it a family, a
    mapping of those keys each of ``kind`` that becomes a dict.  ``default`` is REQUIRED, the
    value in internal units that a node or link not giving it gets, or for a family, a mapping
    of the keys that may be left out to theirs; ``default_from`` names the parameter whose value
    (key by key) it takes instead.  ``models`` are the memory models that have it (a node of
    another model ignores it); ``needed_if`` is ``(parameter, value)`` when it is required only
    with that value of another parameter; ``either`` names the group of parameters of which one
    form must be given.  ``unit`` says what a count counts; ``default_doc`` what the docs say a
    node or link gets when it does not give the parameter, where the default alone does not say it.
    """

    name: str
    kind: str
    doc: str
    field: str | tuple[str, ...] | None   # the NodeParams/LinkParams field (a tuple: both directions; None: none)
    default: object = REQUIRED
    keys: tuple = ()
    unit: str = ""
    models: tuple = MEMORY_MODELS
    needed_if: tuple = ()
    default_from: str = ""
    either: str = ""
    default_doc: str = ""
    fit: Fit | None = None

    @property
    def scope(self) -> str:
        """``node`` or ``link``."""
        return "link" if self.name.startswith("link.") else "node"

    @property
    def section(self) -> str:
        """The board's section of defaults: ``defaults`` or ``link_defaults``."""
        return "link_defaults" if self.scope == "link" else "defaults"

    @property
    def path(self) -> str:
        """The key path below the section (and below a node or link entry)."""
        return self.name[len("link."):] if self.scope == "link" else self.name

    @property
    def parts(self) -> tuple:
        return tuple(self.path.split("."))

    @property
    def unit_text(self) -> str:
        """The internal unit of a quantity, or what a count counts."""
        return KINDS[self.kind].unit or self.unit

    @property
    def needed(self) -> bool:
        """Whether a node (link) that has it must give it (a family: its keys without a default)."""
        return (self.default is REQUIRED or isinstance(self.default, dict)) and not self.needed_if

    @property
    def required(self) -> bool:
        """Whether every node (link) must give it, whatever its memory model."""
        return self.needed and self.models == MEMORY_MODELS and not self.either and not self.default_from

    def key_default(self, key: str | None) -> object:
        """The default of one key of a family (of the parameter itself when ``key`` is None)."""
        if isinstance(self.default, dict):
            return self.default.get(key, REQUIRED)
        return self.default

    def optional_keys(self) -> tuple:
        """The keys of a family that may be left out when the family is needed."""
        return tuple(k for k in self.keys if self.key_default(k) is not REQUIRED)


def _window(what: str) -> str:
    return f"outstanding lines per core for {what} (miss buffers and prefetch)"


def _hold(op: str, what: str) -> str:
    return (f"time a miss buffer stays busy after its fill for {what} (installing the line"
            + (", merging the store and moving the victim out)" if op != "r" else ")"))


_OPS = (("r", "reads"), ("w", "writes"), ("t", "triads"))
_NS0 = (0.0, "ns")   # a DRAM time of 0 ns: not given

# The order is the schema's: it orders the keys an "unknown key" message lists.
BOARD_PARAMETERS = (
    Param("cores", "count0", "cores of the socket; threads are placed on cores `0 .. cores-1`; 0 for a memory-only"
          " node (CXL memory, HBM in flat mode): it holds arrays, runs no thread and has no cache to probe",
          "cores", unit="cores"),
    Param("ports", "int", "HyperTransport ports; coherent links plus I/O entries of the node may not exceed it",
          "ports", unit="ports"),
    Param("core.window", "int", "lines a core keeps outstanding per op (read-only, write-only, triad): miss buffers"
          " and prefetching together", "window", keys=("r", "w", "t"), unit="lines",
          fit=Fit(8, 1, 8, {op: _window(what) for op, what in _OPS})),
    Param("core.hold", "time", "how long a miss buffer stays busy after its fill", "hold_ns", default=0.0,
          keys=("r", "w", "t"), fit=Fit(9, 0.1, 60.0, {op: _hold(op, what) for op, what in _OPS})),
    Param("core.requests", "int", "memory requests a core can keep in flight; a throttled thread (`@RATE`, a load"
          " generator) keeps up to that many", "requests", default=None, unit="requests",
          default_doc="its op's window"),
    Param("memory.model", "memory_model", "which model the node's memory has (below)", "memory_model",
          default="fifo"),
    Param("memory.latency", "time", "`fifo`: fixed DRAM access latency, which does not occupy the DRAM; `dram`: the"
          " controller's latency on top of the DRAM's timings; `curve`: the idle latency", "memory_latency_ns",
          fit=Fit(0, 20.0, 120.0, "DRAM access latency", variants=(
              ("fifo", {"description": "DRAM access latency (fixed, beside the bandwidth server)"}),
              ("dram", {"description": "memory controller latency on top of the DRAM's own timings",
                        "low": 1.0, "high": 120.0}),
              ("curve", {"description": "idle memory latency (the curves add the loaded part)",
                         "low": 20.0, "high": 200.0})))),
    Param("memory.queue", "int", "MCT DRAM queue depth", "memory_queue", unit="entries",
          fit=Fit(3, 1, 512, "requests the memory controller's DRAM queue holds", integer_max=65_536)),
    Param("memory.release", "release", "when a read's DRAM queue entry is free: `data`, once its data leave the"
          " memory controller; `done`, once the read is complete, its source-done back at the home (a local read:"
          " once its data and every probe response are in), as a home that tracks each request to its end",
          "memory_release", default="data"),
    Param("memory.bandwidth", "bandwidth", "peak DRAM bandwidth of the node", "memory_bandwidth_GBps",
          models=("fifo",), fit=Fit(2, 1.0, 400.0, "peak DRAM bandwidth per node")),
    Param("memory.efficiency", "fraction", "sustained share of the peak", "memory_efficiency", models=("fifo",),
          fit=Fit(1, 0.4, 0.95, "sustained fraction of the DRAM peak bandwidth")),
    Param("memory.curves", "curves", "measured loaded-latency curves, one per read share (below)", "curves",
          models=("curve",)),
    Param("memory.dram.channels", "int", "independent channels (a power of two)", "dram.channels",
          unit="channels", models=("dram",)),
    Param("memory.dram.width_bits", "int", "data bits per channel: a 64-byte line takes 64 x 8 / width / 2 clocks",
          "dram.width_bits", unit="bits", models=("dram",)),
    Param("memory.dram.clock", "frequency", "DRAM clock; data move on both edges", "dram.clock_GHz",
          models=("dram",)),
    Param("memory.dram.ranks", "int", "ranks per channel (a power of two)", "dram.ranks", unit="ranks",
          models=("dram",)),
    Param("memory.dram.banks", "int", "banks per rank (a power of two)", "dram.banks", unit="banks",
          models=("dram",)),
    Param("memory.dram.row", "size", "one row across the channel's width (a power-of-two number of 64-byte lines)",
          "dram.row_bytes", models=("dram",)),
    Param("memory.dram.address_map", "address_map", "the fields of a physical address, most significant first:"
          " `row.rank.bank.column.channel` in some order", "dram.address_map", models=("dram",)),
    Param("memory.dram.scheduler", "scheduler", "`fr-fcfs`: row hits may pass older requests; `fcfs`: in order",
          "dram.scheduler", models=("dram",)),
    Param("memory.dram.bypass_limit", "count0", "`fr-fcfs`: the oldest request is passed at most this many times"
          " (0: never, in order as `fcfs`)",
          "dram.bypass_limit", default=0, unit="requests", models=("dram",),
          needed_if=("memory.dram.scheduler", "fr-fcfs")),
    Param("memory.dram.write_burst", "count0", "writes wait until this many are queued, then all go back to back"
          " (Family 10h MctWrLimit); at most `memory.queue`; 0: no bursts", "dram.write_burst", default=0, unit="writes",
          models=("dram",), default_doc="no bursts"),
    Param("memory.dram.page_policy", "page_policy", "`open`: a row stays open; `closed`: a row is closed after"
          " every access", "dram.page_policy", models=("dram",)),
    Param("memory.dram.idle_close", "dram_time", "open pages: a row idle this long is closed", "dram.idle_close_ns",
          default=_NS0, models=("dram",), default_doc="never"),
    Param("memory.dram.idle_dynamic", "bool", "open pages: each bank's idle limit moves from `idle_close` (4, 8,"
          " 16, 32, 64, 128 or 256 clocks) along 0, 4, 8, ..., 256 clocks (0: closed once idle), one step up when the"
          " idle timer closed the row a request wants, one down on a row conflict (K8 DCC_EN, the dynamic idle cycle"
          " counter; the step is an assumption)", "dram.idle_dynamic", default=False, models=("dram",),
          default_doc="no: `idle_close` fixed"),
    Param("memory.dram.os_page", "size", "the operating system's page (arrays are contiguous within one)",
          "dram.os_page_bytes", models=("dram",)),
    Param("memory.dram.timings", "dram_time", "the parts' datasheet timings; `tRTW` is the idle data-bus time"
          " between a read burst and a write burst, `tRTRS` between bursts of two ranks", "dram.timings_ns",
          keys=TIMINGS, default={t: _NS0 for t in OPTIONAL_TIMINGS}, models=("dram",),
          default_doc="required (`tFAW`: none, as DDR and four-bank DDR2 parts)"),
    Param("sri.latency", "time", "System Request Interface pass-through latency", "sri_latency_ns",
          fit=Fit(6, 0.5, 20.0, "SRI pass-through latency")),
    Param("sri.buffers", "int", "SRI→XBar command buffers per virtual channel", "sri_buffers",
          keys=("request", "posted", "response"), unit="buffers"),
    Param("sri.probe_queue", "int", "XBar→SRI probe buffers", "sri_probe_queue", unit="buffers"),
    Param("mct.buffers", "int", "MCT→XBar command buffers", "mct_buffers", keys=("response", "probe"),
          unit="buffers"),
    Param("xbar.latency", "time", "crossbar traversal, paid on entry to a node", "xbar_latency_ns",
          fit=Fit(5, 0.5, 20.0, "crossbar traversal")),
    Param("probe.lookup", "time", "cache lookup of a probe before its response", "probe_lookup_ns",
          fit=Fit(7, 1.0, 60.0, "cache probe lookup before the response")),
    Param("probe.occupancy", "time", "how long a probe holds its XBar→SRI slot, from the start of its lookup: the"
          " node looks up at most `sri.probe_queue` probes per occupancy (shorter than `probe.lookup`: lookups"
          " pipelined, the response still after `probe.lookup`)", "probe_occupancy_ns", default_from="probe.lookup",
          fit=Fit(10, 0.5, 120.0, "time a probe holds its XBar->SRI slot")),
    Param("link.width_bits", "int", "signalling width: bandwidth per direction = width / 8 × clock × (2 if ddr)",
          None, default=None, unit="bits", either="link.bandwidth"),
    Param("link.clock", "frequency", "signalling clock", None, default=None, either="link.bandwidth"),
    Param("link.ddr", "bool", "double data rate: two transfers per clock", None, default=None,
          either="link.bandwidth"),
    Param("link.bandwidth", "bandwidth_spec", "bandwidth per direction, instead of the three keys above",
          ("bandwidth_ab_GBps", "bandwidth_ba_GBps"), default=None, either="link.bandwidth",
          fit=Fit(11, 0.5, 400.0, "bandwidth per direction")),
    Param("link.latency", "time", "flight latency of one hop", "latency_ns",
          fit=Fit(4, 1.0, 60.0, "link and PHY latency per hop")),
    Param("link.buffers", "int", "receiver command buffers per virtual channel (credits)", "buffers",
          keys=("request", "posted", "response", "probe"), unit="buffers"),
    Param("link.data_buffers", "int", "receiver data buffers", "data_buffers", keys=("posted", "response"),
          unit="buffers", default_from="link.buffers"),
    Param("link.release", "buffer_release", "when the buffer a packet leaves from (the receive buffer of the"
          " link before, or the SRI's or MCT's) is free as the packet is sent on this link: `start`, once its"
          " transmission starts (the transmitter holds the packet it sends); `end`, once its last byte has been sent"
          " (the transmitter sends it out of that buffer, no earlier than its tail has come in)", "release",
          default="start"),
    Param("link.count", "int", "links in parallel between the two nodes, each with these parameters and a port at"
          " each end (current two-socket boards have two to four); a transaction's packets take link"
          " (line mod count) of the pair (docs/model.md)", "count", default=1, unit="links"),
)
NODE_PARAMETERS = tuple(p for p in BOARD_PARAMETERS if p.scope == "node")
LINK_PARAMETERS = tuple(p for p in BOARD_PARAMETERS if p.scope == "link")
_BY_NAME = {p.name: p for p in BOARD_PARAMETERS}


def declared(name: str) -> tuple:
    """``(Param, key)`` of a parameter name (``memory.latency``, ``core.window.r``: key ``r``), or
    ``(None, None)`` when no parameter has it."""
    if name in _BY_NAME:
        return _BY_NAME[name], None
    head, _, key = name.rpartition(".")
    p = _BY_NAME.get(head)
    if p is not None and key in p.keys:
        return p, key
    return None, None


# ------------------------------------------------------------------ what the validator checks against

def schema(scope: str) -> dict:
    """The nested mapping from key to sub-schema or kind of ``node`` or ``link`` parameters."""
    out: dict = {}
    for p in BOARD_PARAMETERS:
        if p.scope != scope:
            continue
        level = out
        for part in p.parts[:-1]:
            level = level.setdefault(part, {})
        level[p.parts[-1]] = {k: p.kind for k in p.keys} if p.keys else p.kind
    return out


def optional_paths(scope: str) -> frozenset:
    """The dotted paths that a node (link) may leave out whatever its memory model; which memory keys
    a node needs besides depends on its model (:func:`needed_memory_keys`)."""
    paths = [p.path for p in BOARD_PARAMETERS if p.scope == scope]
    optional = {p.path for p in BOARD_PARAMETERS if p.scope == scope and not p.required}

    def widest(path: str) -> str:   # the largest mapping around ``path`` that holds nothing required
        parts = path.split(".")
        for n in range(1, len(parts)):
            prefix = ".".join(parts[:n]) + "."
            if all(q in optional for q in paths if q.startswith(prefix)):
                return prefix[:-1]
        return path
    return frozenset(widest(path) for path in optional)


def rate_keys() -> tuple:
    """The keys of a link's rate: the one that gives it, then the ones it may be computed from."""
    group = [p for p in LINK_PARAMETERS if p.either]
    return tuple(p.path for p in sorted(group, key=lambda p: p.field is None))


def _below_memory(p: Param) -> list:
    """The dotted paths below ``memory`` that ``p`` needs given (a family: each key not optional)."""
    rest = p.path[len("memory."):]
    return [f"{rest}.{k}" for k in p.keys if k not in p.optional_keys()] if p.keys else [rest]


def model_keys(model: str) -> tuple:
    """The keys below ``memory`` a node of memory ``model`` needs beyond those every node needs."""
    return tuple(k for p in NODE_PARAMETERS
                 if model in p.models and p.models != MEMORY_MODELS and p.needed
                 for k in _below_memory(p))


def needed_memory_keys(model: str, memory: dict) -> list:
    """:func:`model_keys`, and those the resolved ``memory`` mapping's own values call for
    (``dram.bypass_limit`` with the ``fr-fcfs`` scheduler)."""
    out = list(model_keys(model))
    for p in NODE_PARAMETERS:
        if p.needed_if and model in p.models and _at(memory, p.needed_if[0].split(".")[1:]) == p.needed_if[1]:
            out += _below_memory(p)
    return out


def _at(mapping, parts):
    for part in parts:
        mapping = mapping.get(part) if isinstance(mapping, dict) else None
    return mapping
