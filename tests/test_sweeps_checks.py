"""A sweep file's mistakes found before anything runs, wirings that cannot carry a board's own nodes, and the
analytic first pass's rows ranked after the simulated ones (sweeps/reader.py, wirings.py, execute.py)."""
from __future__ import annotations

import pytest

from simnuma.sweeps import SweepError, parse_sweep, run_sweep
from simnuma.sweeps.execute import within_error
from simnuma.sweeps.output import ranked


@pytest.mark.parametrize("text, message", [
    ("name: x\nboards: [quartet]\ngrid: {nodes.3.cores: [2, 0]}\ncases: [3.0.r.0]\n",
     "s.yaml:4: cases[0]: on quartet at nodes.3.cores=0: '3.0.r.0': node 3 has no cores"),
    ("name: x\nboards: [quartet]\ngrid: {defaults.cores: [2, 1]}\ncases: [0.1.r.0]\n",
     "s.yaml:4: cases[0]: on quartet at defaults.cores=1: '0.1.r.0': node 0 has 1 cores (0..0), no core 1"),
    ("name: x\nboards: [dual]\ngrid: {defaults.ports: [2, 3], links.0-1.count: [1, 2]}\ncases: [0.0.r.1]\n",
     "s.yaml:3: grid: on dual at defaults.ports=2, links.0-1.count=2: "),
    ("name: x\nboards: [quartet]\ncases: [0.0.r.0]\nseed: 99999999999999999999999\n",
     "s.yaml:4: seed: expected a whole number from 0 to 2^63 - 1"),
])
def test_every_grid_point_and_case_is_checked_before_anything_runs(text, message):
    """Each value alone is fine on the board; together, or with a case, one is not (before: found by the
    simulation of that point, after the others had run, without the sweep file's line)."""
    with pytest.raises(SweepError) as info:
        parse_sweep(text, "s.yaml")
    assert str(info.value).startswith(message) and "\n" not in str(info.value), str(info.value)


def test_every_board_entry_says_its_own_mistakes():
    text = "name: x\nboards:\n  - {board: quartet, changes: 3}\n  - {board: dual, label: ''}\ncases: [0.0.r.0]\n"
    with pytest.raises(SweepError) as info:
        parse_sweep(text, "s.yaml")
    assert str(info.value).splitlines() == [
        "s.yaml:3: boards[0].changes: expected a mapping such as {coherence: probe_filter}",
        "s.yaml:4: boards[1].label: expected a label (text on one line), got ''"]


def test_a_wiring_refuses_a_board_whose_nodes_do_not_all_take_its_defaults():
    memory_only = "name: x\nboards:\n  - wirings: {sockets: 4, ports: 3}\n    from: B\ncases: [{set: single}]\n"
    for board, said in (("quartet.yaml", "node 0: it has no cores (a memory-only node)"),
                        ("quartet-latency.yaml", "node 0: it has its own memory")):
        with pytest.raises(SweepError, match=f"boards\\[0\\].from: quartet: {said.replace('(', '.').replace(')', '.')}"):
            parse_sweep(memory_only.replace("from: B", f"from: {board}"), "s.yaml", folder=_boards())


def _boards():
    import tempfile
    from pathlib import Path

    from simnuma import load_topology

    folder = Path(tempfile.mkdtemp())
    quartet = load_topology("quartet")
    (folder / "quartet.yaml").write_text(quartet.with_parameters({"nodes.0.cores": 0}).to_yaml())
    (folder / "quartet-latency.yaml").write_text(quartet.with_parameters({"nodes.0.memory.latency": "30 ns"}).to_yaml())
    return folder


def test_two_wiring_entries_take_a_label_each():
    text = ("name: x\nboards:\n  - wirings: {sockets: 4, ports: 3, io: 1, spare_ports: true}\n"
            "  - wirings: {sockets: 4, ports: 3, io: 1, spare_ports: true}\n    routing: updown\n    label: up\n"
            "cases: [{set: single}]\n")
    labels = [b.label for b in parse_sweep(text, "s.yaml").boards]
    assert labels[:5] == [f"w4-{k}" for k in range(1, 6)] and labels[5:] == [f"up-w4-{k}" for k in range(1, 6)]


def test_a_penalty_near_zero_keeps_what_the_analytic_error_cannot_tell_apart():
    """Ratios less one: 10% of the ratio, not of the aggregate (a penalty of -0.7% and one of +1% are one within
    the analytic model's error; 10% of 0.01 would have dropped the first)."""
    assert within_error("crossfire_penalty", -0.007, 0.01, 0.10)
    assert not within_error("crossfire_penalty", 0.25, 0.01, 0.10)
    assert within_error("local_latency_ns_worst", 118.0, 111.0, 0.10)
    assert not within_error("local_latency_ns_worst", 125.0, 111.0, 0.10)


def test_configurations_the_first_pass_left_out_rank_after_the_simulated_ones(tmp_path):
    rows = [{"board": "a", "crossfire_penalty": 0.12, "source": "simulation"},
            {"board": "b", "crossfire_penalty": 0.09, "source": "analytic"},
            {"board": "c", "crossfire_penalty": 0.15, "source": "simulation"}]
    assert [r["board"] for r in ranked(rows, ("crossfire_penalty",))] == ["a", "c", "b"]
    sweep = parse_sweep("name: x\nboards:\n  - wirings: {sockets: 4, ports: 3, io: 1, spare_ports: true}\n"
                        "cases: [{set: single, ops: [r]}]\nsize: 256KiB\nrank: [local_latency_ns_worst]\n", "s.yaml")
    run = run_sweep(sweep, 1, tmp_path / "cache", prefilter_top=1)
    order = ranked(run.configurations, sweep.rank)
    sources = [r["source"] for r in order]
    assert "analytic" in sources and sources == sorted(sources, key=lambda s: s == "analytic")


def test_the_wiring_column_names_each_links_kind(tmp_path):
    from simnuma import load_topology

    board = tmp_path / "kinded.yaml"
    doc = load_topology("dual").with_parameters({"links.0-1.count": 2}).to_dict()
    doc["link_kinds"] = {"socket": {"latency": "30 ns"}}
    doc["links"][0]["kind"] = "socket"
    import yaml

    board.write_text(yaml.safe_dump(doc))
    sweep = parse_sweep(f"name: x\nboards: [{board}]\ncases: [0.0.r.1]\nsize: 256KiB\n", "s.yaml")
    run = run_sweep(sweep, 1, tmp_path / "cache")
    assert {row["wiring"] for row in run.points} == {"0-1x2:socket"}
