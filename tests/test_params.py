"""The board parameter table (simnuma.topology.params): every parameter declared once, and what comes from it."""
from __future__ import annotations

import dataclasses
import math
from collections import Counter
from pathlib import Path

import pytest

from simnuma.topology import paramdocs, schema
from simnuma.calibrate.parameters import _INTEGER_MAX, _MODEL_VARIANTS, PARAMETERS
from simnuma.topology.memparams import MEMORY_MODELS, DramParams
from simnuma.topology.params import (
    BOARD_PARAMETERS as DECLARED,
    KINDS,
    LINK_PARAMETERS,
    NODE_PARAMETERS,
    declared,
    model_keys,
    needed_memory_keys,
)
from simnuma.topology import LinkParams, NodeParams, VCS, load_topology, parse_topology

DOC = Path(__file__).resolve().parent.parent / "docs" / "topology.md"
IDENTITY = {NodeParams: {"id"}, LinkParams: {"a", "b", "kind"}}   # from the node or link entry, not a parameter


def _fields(params) -> Counter:
    """How many declarations give each field (``dram.<field>``: a field of the node's DramParams)."""
    return Counter(f for p in params for f in (p.field if isinstance(p.field, tuple) else (p.field,))
                   if f is not None)


def _leaves(tree: dict, prefix: str = "") -> list:
    return [leaf for key, kind in tree.items()
            for leaf in (_leaves(kind, f"{prefix}{key}.") if isinstance(kind, dict) else [f"{prefix}{key}"])]


# ------------------------------------------------------------------ the declarations

def test_every_parameter_is_declared_once():
    names = [p.name for p in DECLARED]
    assert len(names) == len(set(names))
    assert all(p.kind in KINDS for p in DECLARED)
    assert all(p.doc and "\n" not in p.doc for p in DECLARED)


@pytest.mark.parametrize("cls, params", [(NodeParams, NODE_PARAMETERS), (LinkParams, LINK_PARAMETERS)])
def test_every_field_comes_from_exactly_one_declaration(cls, params):
    own = {f: n for f, n in _fields(params).items() if not f.startswith("dram.")}
    assert all(n == 1 for n in own.values()), own
    made = {"dram"} if cls is NodeParams else set()   # the DramParams the memory.dram parameters make
    assert set(own) | made == {f.name for f in dataclasses.fields(cls)} - IDENTITY[cls]
    assert not set(own) & made


def test_every_dram_field_comes_from_exactly_one_declaration():
    counts = _fields(NODE_PARAMETERS)
    dram = {f[len("dram."):]: n for f, n in counts.items() if f.startswith("dram.")}
    assert all(n == 1 for n in dram.values()), dram
    assert set(dram) == {f.name for f in dataclasses.fields(DramParams)}
    assert all(p.name.startswith("memory.dram.") == (p.field or "").startswith("dram.")
               for p in NODE_PARAMETERS)


def test_a_parameter_that_feeds_another_names_it():
    for p in DECLARED:
        if p.field is None:
            assert p.either and declared(p.either)[0].field is not None
        if p.default_from:
            assert set(p.keys) <= set(declared(p.default_from)[0].keys)
    assert declared("link.buffers")[0].keys == VCS


def test_declared_finds_families_by_key():
    window, key = declared("core.window.w")
    assert (window.name, key) == ("core.window", "w")
    assert declared("memory.latency")[0].field == "memory_latency_ns"
    assert declared("core.window.x") == (None, None) and declared("cores.x") == (None, None)


# ------------------------------------------------------------------ the schema the validator checks against

def test_the_schema_holds_every_declared_key_and_nothing_else():
    for scope, tree in (("node", schema.NODE_SCHEMA), ("link", schema.LINK_SCHEMA)):
        keys = [f"{p.path}.{k}" if p.keys else p.path for p in DECLARED if p.scope == scope
                for k in (p.keys or (None,))]
        assert _leaves(tree) == keys
    assert schema.LINK_RATE_KEYS == ("bandwidth", "width_bits", "clock", "ddr")
    assert schema.NODE_OPTIONAL == {"core.hold", "core.requests", "memory.model", "memory.bandwidth",
                                    "memory.efficiency", "memory.curves", "memory.dram", "memory.release",
                                    "probe.occupancy"}
    assert schema.LINK_OPTIONAL == {"bandwidth", "data_buffers", "width_bits", "clock", "ddr", "count", "release"}


def test_each_memory_model_needs_its_own_keys():
    assert model_keys("fifo") == ("bandwidth", "efficiency")
    assert model_keys("curve") == ("curves",)
    dram = model_keys("dram")
    assert "dram.timings.tRCD" in dram and "dram.timings.tFAW" not in dram
    assert "dram.bypass_limit" not in dram and "dram.idle_close" not in dram
    memory = {"dram": {"scheduler": "fr-fcfs"}}
    assert needed_memory_keys("dram", memory)[-1] == "dram.bypass_limit"
    assert "dram.bypass_limit" not in needed_memory_keys("dram", {"dram": {"scheduler": "fcfs"}})


# ------------------------------------------------------------------ NodeParams and LinkParams

BOARD = """
name: small
defaults:
  cores: 1
  ports: 1
  core: {window: {r: 4, w: 4, t: 4}}
  memory: {bandwidth: 6.4 GB/s, efficiency: 0.7, latency: 60 ns, queue: 16}
  sri: {latency: 1 ns, buffers: {request: 2, posted: 3, response: 3}, probe_queue: 8}
  mct: {buffers: {response: 5, probe: 2}}
  xbar: {latency: 1 ns}
  probe: {lookup: 5 ns}
link_defaults: {bandwidth: 4 GB/s, latency: 10 ns, buffers: {request: 1, posted: 2, response: 3, probe: 4}}
nodes: [{id: 0}, {id: 1}]
links: [{a: 0, b: 1, data_buffers: {posted: 7}}]
"""


def test_what_a_board_leaves_out_takes_its_declared_default():
    topo = parse_topology(BOARD, "small.yaml")
    node, link = topo.node(0), topo.link(0, 1)
    assert node.hold_ns == {"r": 0.0, "w": 0.0, "t": 0.0}
    assert node.requests is None and node.memory_model == "fifo" and node.dram is None and node.curves is None
    assert node.probe_occupancy_ns == node.probe_lookup_ns   # not given: as its lookup
    assert link.data_buffers == {"posted": 7, "response": 3}   # as the command buffers where not given
    assert (link.bandwidth_ab_GBps, link.bandwidth_ba_GBps) == (4.0, 4.0)


def test_a_dram_node_gets_its_dram_from_the_table():
    dram = load_topology("quartet").node(0).dram
    assert dram.clock_GHz == 0.2 and dram.row_bytes == 32 * 1024 and dram.idle_close_ns == 80.0
    assert dram.timings_ns["tFAW"] == 0.0 and list(dram.timings_ns) == list(declared("memory.dram.timings")[0].keys)


# ------------------------------------------------------------------ the calibration catalogue

def test_every_catalogue_entry_is_a_declared_parameter_within_its_bounds():
    assert list(PARAMETERS) == [
        "memory.latency", "memory.efficiency", "memory.bandwidth", "memory.queue", "link.latency", "xbar.latency",
        "sri.latency", "probe.lookup", "core.window.r", "core.window.w", "core.window.t", "core.hold.r",
        "core.hold.w", "core.hold.t", "probe.occupancy", "link.bandwidth"]
    for name, free in PARAMETERS.items():
        param, key = declared(name)
        assert param is not None and param.fit is not None, name
        assert free.path == f"{param.section}.{param.path}" + (f".{key}" if key else "")
        assert (free.low, free.high) == (param.fit.low, param.fit.high)
        assert free.models == param.models and free.integer == (param.kind == "int")
        for low, high in [(free.low, free.high)] + [(v.get("low", free.low), v.get("high", free.high))
                                                    for (n, _), v in _MODEL_VARIANTS.items() if n == name]:
            assert 0 < low < high and math.isfinite(high), name
            if param.kind == "fraction":
                assert high <= 1
            if free.integer:
                assert low == int(low) and high == int(high) and high <= _INTEGER_MAX[name]
    fitted = {p.name for p in DECLARED if p.fit is not None}
    assert fitted == {declared(n)[0].name for n in PARAMETERS}


def test_a_catalogue_entry_has_only_its_memory_models_variants():
    for (name, model), variant in _MODEL_VARIANTS.items():
        assert model in PARAMETERS[name].models and model in MEMORY_MODELS
        assert set(variant) <= {"description", "low", "high"}


def test_the_prior_is_the_declared_field_of_the_board():
    quartet = load_topology("quartet")
    for name, free in PARAMETERS.items():
        if quartet.node(0).memory_model in free.models:
            assert free.prior(quartet) is not None, name
    assert PARAMETERS["core.hold.r"].prior(quartet) == 0.0   # not given: the declared default
    assert PARAMETERS["memory.queue"].prior(quartet) == 16.0
    assert PARAMETERS["probe.occupancy"].prior(quartet) == quartet.node(0).probe_lookup_ns   # not given: the lookup


# ------------------------------------------------------------------ docs/topology.md

@pytest.mark.parametrize("title", [t for t, _ in paramdocs.TABLES])
def test_docs_hold_the_generated_table(title):
    assert paramdocs.markdown_table(title) in DOC.read_text(encoding="utf-8"), (
        "docs/topology.md is out of date: python -m simnuma.topology.paramdocs --write docs/topology.md")


def test_regenerating_the_docs_changes_nothing():
    text = DOC.read_text(encoding="utf-8")
    assert paramdocs.rewrite_tables(text) == text


def test_every_declared_key_is_in_a_docs_table():
    tables = "\n".join(paramdocs.markdown_tables().values())
    for p in DECLARED:
        first = f"`{p.path}.{p.keys[0]}`" if p.keys else f"`{p.path}`"
        assert f"| {first}" in tables, p.name
    assert all("required" in paramdocs._default_text(p) for p in DECLARED if p.required)


def test_the_tables_print(capsys):
    assert paramdocs.main([]) == 0
    assert "| `memory.latency` | time | required |" in capsys.readouterr().out
