"""The memory block of the board language: models, the DRAM, the curves, and their errors."""
from __future__ import annotations

import pytest

from simnuma.errors import TopologyError
from simnuma.topology import load_topology, parse_topology

BOARD = """
name: m
defaults:
  cores: 1
  ports: 1
  core: {{window: {{r: 4, w: 4, t: 4}}}}
  memory:
{memory}
  sri: {{latency: 1 ns, buffers: {{request: 2, posted: 3, response: 3}}, probe_queue: 8}}
  mct: {{buffers: {{response: 5, probe: 2}}}}
  xbar: {{latency: 1 ns}}
  probe: {{lookup: 5 ns}}
link_defaults: {{bandwidth: 4 GB/s, latency: 10 ns, buffers: {{request: 1, posted: 1, response: 1, probe: 1}}}}
nodes: [{{id: 0}}, {{id: 1}}]
links: [{{a: 0, b: 1}}]
"""

DRAM = """    model: dram
    latency: 40 ns
    queue: 16
    dram:
      channels: 1
      width_bits: 128
      clock: 200 MHz
      ranks: 2
      banks: 4
      row: 32 KiB
      address_map: row.rank.bank.column.channel
      scheduler: fr-fcfs
      bypass_limit: 4
      page_policy: open
      os_page: 4 KiB
      timings: {CL: 4 clk, CWL: 2 clk, tRCD: 15 ns, tRP: 15 ns, tRAS: 40 ns, tRTP: 2 clk, tWR: 15 ns,
                tWTR: 2 clk, tRTW: 3 clk, tRRD: 10 ns, tRTRS: 1 clk, tRFC: 70 ns, tREFI: 7.8 us}"""


def board(memory: str):
    return parse_topology(BOARD.format(memory=memory), "m.yaml")


def problems(memory: str) -> list:
    with pytest.raises(TopologyError) as info:
        board(memory)
    return [(p.path, p.message) for p in info.value.problems]


def test_a_dram_board_resolves_its_timings_in_ns():
    node = board(DRAM).node(0)
    assert node.memory_model == "dram"
    d = node.dram
    assert d.timings_ns["CL"] == 20.0 and d.timings_ns["tRTW"] == 15.0 and d.timings_ns["tFAW"] == 0.0
    assert d.burst_ns == pytest.approx(10.0)
    assert node.memory_bandwidth_GBps == pytest.approx(6.4)
    assert node.memory_efficiency is None and node.memory_sustained_GBps is None


def test_a_board_without_a_model_is_a_fifo_board():
    node = board("    bandwidth: 6.4 GB/s\n    efficiency: 0.7\n    latency: 60 ns\n    queue: 16").node(0)
    assert node.memory_model == "fifo" and node.memory_sustained_GBps == pytest.approx(4.48)


def test_unknown_model_is_refused_with_the_choices():
    (path, message), = problems(DRAM.replace("model: dram", "model: rambus"))
    assert path == "defaults.memory.model"
    assert "'fifo', 'dram', 'curve'" in message


def test_every_missing_dram_key_is_one_line_at_defaults():
    memory = DRAM.replace("      banks: 4\n", "").replace("tRCD: 15 ns, ", "")
    found = problems(memory)
    assert ("defaults.memory.dram.banks", "missing: every node needs it (set it here or on each node)") in found
    assert ("defaults.memory.dram.timings.tRCD",
            "missing: every node needs it (set it here or on each node)") in found
    assert len(found) == 2


def test_a_fifo_memory_needs_its_bandwidth():
    found = problems("    model: fifo\n    efficiency: 0.7\n    latency: 60 ns\n    queue: 16")
    assert found == [("defaults.memory.bandwidth", "missing: every node needs it (set it here or on each node)")]


@pytest.mark.parametrize("change, path, words", [
    (("banks: 4", "banks: 6"), "defaults.memory.dram.banks", "power of two"),
    (("row: 32 KiB", "row: 100 B"), "defaults.memory.dram.row", "power-of-two number of 64-byte lines"),
    (("width_bits: 128", "width_bits: 96"), "defaults.memory.dram.width_bits", "whole number of transfers"),
    (("tREFI: 7.8 us", "tREFI: 50 ns"), "defaults.memory.dram.timings.tREFI", "longer than a refresh"),
    (("tRCD: 15 ns", "tRCD: 15"), "defaults.memory.dram.timings.tRCD", "'3 clk'"),
    (("row.rank.bank.column.channel", "row.bank.column"), "defaults.memory.dram.address_map", "missing rank"),
    (("scheduler: fr-fcfs", "scheduler: lifo"), "defaults.memory.dram.scheduler", "'fr-fcfs', 'fcfs'"),
])
def test_dram_mistakes_are_one_line_each(change, path, words):
    found = problems(DRAM.replace(*change))
    assert len(found) == 1
    assert found[0][0] == path and words in found[0][1]


def test_fr_fcfs_needs_a_bypass_limit_and_fcfs_does_not():
    found = problems(DRAM.replace("      bypass_limit: 4\n", ""))
    assert found == [("defaults.memory.dram.bypass_limit",
                      "missing: every node needs it (set it here or on each node)")]
    board(DRAM.replace("      bypass_limit: 4\n", "").replace("fr-fcfs", "fcfs"))


def test_curves_are_read_and_checked():
    curves = ("    model: curve\n    latency: 90 ns\n    queue: 64\n    curves:\n"
              "      - {read_fraction: 0.5, points: [[1 GB/s, 90 ns], [8 GB/s, 120 ns]]}\n"
              "      - {read_fraction: 1.0, points: [[1 GB/s, 90 ns], [12 GB/s, 110 ns]]}")
    node = board(curves).node(0)
    assert [c.read_fraction for c in node.curves] == [0.5, 1.0]
    assert node.memory_bandwidth_GBps == 12.0 and node.memory_sustained_GBps == 12.0
    (path, message), = problems(curves.replace("[12 GB/s, 110 ns]", "[0.5 GB/s, 110 ns]"))
    assert path == "defaults.memory.curves" and "curves[1].points[1]: points must rise in bandwidth" in message
    (path, message), = problems(curves.replace("[8 GB/s, 120 ns]", "[8 GB/s]"))
    assert "curves[0].points[1]: expected [bandwidth, latency]" in message
    for slip, words in (("[800 TB/s, 120 ns]", "curves[0].points[1]: ['800 TB/s', '120 ns'] is implausible"),
                        ("[8 GB/s, 120 s]", "is implausible: a board's latencies"),
                        ("[8 GB/s, 20 ns]", "a latency under load below half the idle one (20 ns against 90 ns")):
        (path, message), = problems(curves.replace("[8 GB/s, 120 ns]", slip))
        assert words in message, message


def test_a_timing_is_a_parameter_like_any_other():
    quartet = load_topology("quartet")
    slower = quartet.with_parameters({"defaults.memory.dram.timings.tRCD": "5 clk"})
    assert slower.node(3).dram.timings_ns["tRCD"] == 25.0
    assert quartet.node(3).dram.timings_ns["tRCD"] == 15.0


def test_a_node_may_have_its_own_memory_model():
    text = BOARD.format(memory=DRAM).replace(
        "nodes: [{id: 0}, {id: 1}]",
        "nodes: [{id: 0}, {id: 1, memory: {model: fifo, bandwidth: 10 GB/s, efficiency: 0.8}}]")
    topo = parse_topology(text, "m.yaml")
    assert topo.node(0).memory_model == "dram" and topo.node(1).memory_model == "fifo"
    assert topo.node(1).memory_sustained_GBps == pytest.approx(8.0)
