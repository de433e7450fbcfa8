"""``simnuma topo show|check|draw`` run in-process, and the drawing function."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from simnuma.cli import main
from simnuma.topology import load_topology

FILES = Path(__file__).parent / "topology_files"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_show_json(capsys):
    status, out, err = run(capsys, "topo", "show", "quartet", "--json")
    assert status == 0 and err == ""
    data = json.loads(out)
    assert data["name"] == "quartet"
    assert [n["id"] for n in data["nodes"]] == [0, 1, 2, 3]
    from simnuma.topology import load_topology
    latency_ns = load_topology("quartet").link(0, 1).latency_ns
    assert {"a": 0, "b": 1, "bandwidth_GBps": {"0->1": 4.0, "1->0": 4.0}, "latency_ns": latency_ns,
            "count": 1, "kind": None} in data["links"]
    assert data["hops"] == [[0, 1, 1, 2], [1, 0, 2, 1], [1, 2, 0, 1], [2, 1, 1, 0]]
    assert data["routes"]["3->0"] == [3, 1, 0]


def test_show_json_keeps_per_direction_bandwidths(capsys):
    status, out, _ = run(capsys, "topo", "show", str(FILES / "good_line3.yaml"), "--json")
    assert status == 0
    link = json.loads(out)["links"][1]
    assert link["bandwidth_GBps"] == {"1->2": 4.0, "2->1": 2.0}


def test_show_text(capsys):
    status, out, _ = run(capsys, "topo", "show", "x6440")
    assert status == 0
    assert "N0 -> N1: 4 GB/s   N1 -> N0: 4 GB/s" in out
    assert "hops (row: from, column: to; diameter 2)" in out
    assert "N0   0  1  1  2" in out
    assert "0->3: 0 -> 1 -> 3" in out
    assert "N0: 4 cores; 4 ports, 2 coherent + 1 I/O (I/O bridge)" in out


@pytest.mark.parametrize("change, said, times", [
    ({"defaults.memory.release": "done"},
     "queue 16, controller latency 44.01 ns, a read's queue entry held to its end (memory.release: done)", 4),
    ({"link_defaults.release": "end"}, "a buffer held until its packet has been sent (link.release: end)", 4),
])
def test_show_text_says_when_a_board_departs_from_the_default_release(capsys, tmp_path, change, said, times):
    """A read holding its DRAM queue entry to its end, a link holding a buffer until its packet has been sent: each
    node's memory (each link) says so, and the bundled board, which does neither, says nothing of it."""
    status, out, _ = run(capsys, "topo", "show", "quartet")
    assert status == 0 and said.split(" (")[-1] not in out
    board = tmp_path / "changed.yaml"
    board.write_text(load_topology("quartet").with_parameters(change).to_yaml())
    status, out, _ = run(capsys, "topo", "show", str(board))
    assert status == 0
    assert out.count(said) == times


def test_check_good_and_bad_files(capsys):
    status, out, err = run(capsys, "topo", "check", "quartet", str(FILES / "good_line3.yaml"))
    assert status == 0 and "ok (line3: 3 nodes, 2 links)" in out and err == ""
    bad = FILES / "bad_many.yaml"
    status, out, err = run(capsys, "topo", "check", str(bad), "quartet")
    assert status == 2
    assert "quartet: ok" in out
    lines = err.splitlines()
    assert len(lines) == 4
    assert lines[1] == f"{bad}:21: defaults.xbr: unknown key (did you mean 'xbar'?)"
    assert "Traceback" not in err


def test_show_unknown_board_is_one_line_and_status_2(capsys):
    status, out, err = run(capsys, "topo", "show", "no-such-board")
    assert status == 2 and out == ""
    assert len(err.splitlines()) == 1 and "bundled boards:" in err


def test_draw_png(capsys, tmp_path):
    target = tmp_path / "quartet.png"
    status, out, _ = run(capsys, "topo", "draw", "quartet", "-o", str(target))
    assert status == 0 and str(target) in out
    assert target.read_bytes().startswith(PNG_MAGIC)
    assert [p.name for p in tmp_path.iterdir()] == ["quartet.png"]  # no temporary file left


def test_draw_svg_replaces_an_existing_file(capsys, tmp_path):
    target = tmp_path / "board.svg"
    target.write_text("old")
    status, _, _ = run(capsys, "topo", "draw", str(FILES / "good_line3.yaml"), "-o", str(target))
    assert status == 0
    text = target.read_text()
    assert "<svg" in text and "southbridge" in text


def test_draw_needs_a_known_picture_format(capsys, tmp_path):
    status, _, err = run(capsys, "topo", "draw", "quartet", "-o", str(tmp_path / "q.txt"))
    assert status == 2 and ".png" in err
    assert not (tmp_path / "q.txt").exists()


def test_draw_without_matplotlib_says_how_to_get_it(capsys, tmp_path, monkeypatch):
    for name in list(sys.modules):
        if name == "matplotlib" or name.startswith("matplotlib."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes "import matplotlib" fail
    status, out, err = run(capsys, "topo", "draw", "quartet", "-o", str(tmp_path / "q.png"))
    assert status == 2 and out == ""
    assert err.splitlines() == ["drawing needs matplotlib: pip install 'simnuma[plot]'"]
    assert not (tmp_path / "q.png").exists()


# ---------------------------------------------------------------- draw_topology

def arrow_colours(ax):
    from matplotlib.patches import FancyArrowPatch

    return [p.get_edgecolor() for p in ax.patches if isinstance(p, FancyArrowPatch)]


def test_one_arrow_per_link_direction_and_one_box_per_node():
    from matplotlib.patches import FancyBboxPatch

    from simnuma.draw import draw_topology

    topo = load_topology("x6440")
    ax = draw_topology(topo)
    assert len(arrow_colours(ax)) == 2 * len(topo.links)
    boxes = [p for p in ax.patches if isinstance(p, FancyBboxPatch)]
    assert len(boxes) == len(topo.nodes)
    texts = [t.get_text() for t in ax.texts]
    assert {"N0", "N1", "N2", "N3"} <= set(texts)
    assert texts.count("4 GB/s") == 2 * len(topo.links)
    assert texts.count("I/O bridge") == 2


def test_link_values_colour_each_direction_on_a_given_axes():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from simnuma.draw import draw_topology

    topo = load_topology("dual")
    fig = Figure()
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    returned = draw_topology(topo, ax=ax, link_values={(0, 1): 0.0, (1, 0): 1.0},
                             link_label_fmt="{value:.0%} of {bandwidth:g} GB/s")
    assert returned is ax
    low, high = arrow_colours(ax)
    assert low != high
    assert low[2] > low[0] and high[0] > high[2]  # 0 is blue, 1 is red
    labels = {t.get_text() for t in ax.texts}
    assert {"0% of 4 GB/s", "100% of 4 GB/s"} <= labels
    assert len(fig.axes) == 2  # the colour bar


def test_callable_labels_and_unknown_directions():
    from simnuma.draw import draw_topology

    topo = load_topology("dual")
    ax = draw_topology(topo, link_label_fmt=lambda src, dst, bw, value: f"{src}>{dst}")
    assert {"0>1", "1>0"} <= {t.get_text() for t in ax.texts}
    with pytest.raises(ValueError, match="not a link direction"):
        draw_topology(topo, link_values={(0, 2): 0.5})


def test_a_board_without_layout_is_placed_automatically():
    from simnuma.draw import board_positions, draw_topology
    from simnuma.topology import parse_topology

    doc = load_topology("quartet").to_dict()
    del doc["layout"]
    topo = parse_topology(json.dumps(doc))
    positions = board_positions(topo)
    assert set(positions) == {0, 1, 2, 3}
    assert len(set(positions.values())) == 4
    assert board_positions(topo) == positions  # deterministic
    draw_topology(topo)
