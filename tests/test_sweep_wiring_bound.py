"""The wiring search is bounded by its steps, not by the graphs it completes: a search too large for a sweep
is refused in one line, in well under a minute, the same on every machine, and every documented one fits."""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simnuma.cli import main
from simnuma.sweeps import wirings

search = importlib.import_module("simnuma.sweeps.wirings")    # the module (the package's `wirings` is the function)
ROOT = Path(__file__).resolve().parent.parent


def test_the_bound_counts_the_backtracking_not_only_the_graphs_found():
    """Sixteen sockets of fifteen ports make one labelled graph, the complete one, after tens of thousands of
    steps of backtracking: a bound on graphs examined never bites there, a bound on steps does."""
    assert len(wirings(16, 15)) == 1
    with pytest.raises(search.TooManyWirings, match="passed its bound of 10,000 steps"):
        wirings(16, 15, most_steps=10_000)


def test_a_search_past_its_bound_says_what_to_shrink():
    start = time.perf_counter()
    with pytest.raises(search.TooManyWirings) as caught:
        wirings(10, 3, most_steps=200_000)
    assert time.perf_counter() - start < 10
    assert str(caught.value) == ("the search for every wiring of 10 sockets of 3 ports passed its bound of 200,000"
                                 " steps unfinished; give fewer sockets or fewer ports")
    with pytest.raises(search.TooManyWirings) as caught:
        wirings(6, 4, 0, True, parallel=2, most_steps=1_000)
    assert str(caught.value).endswith("with spare ports and up to 2 links in parallel passed its bound of 1,000 steps"
                                      " unfinished; give fewer sockets, fewer ports, spare_ports: false or fewer links"
                                      " in parallel")


def test_degree_sequences_count_as_steps(monkeypatch):
    """Many ports with spare ports: billions of degree sequences, each a step even where it has no graph."""
    monkeypatch.setattr(search, "_labelled", lambda degrees, budget, parallel=1: iter(()))
    start = time.perf_counter()
    with pytest.raises(search.TooManyWirings):
        wirings(16, 40, 0, True, most_steps=50_000)
    assert time.perf_counter() - start < 5


def test_the_bound_is_steps_the_same_on_a_slow_machine(monkeypatch):
    """The answer does not depend on the clock: with every step slowed, the same search finds the same wirings."""
    fast = wirings(6, 3, 0, True, most_steps=100_000)
    original = search._CountingMatcher.syntactic_feasibility

    def slow(self, a, b):
        time.sleep(0.0002)
        return original(self, a, b)

    monkeypatch.setattr(search._CountingMatcher, "syntactic_feasibility", slow)
    assert wirings(6, 3, 0, True, most_steps=100_000) == fast


@pytest.mark.parametrize("args,count", [
    ((4, 3, 1, True), 5),                      # the worked example
    ((4, 3, 0, True, 2), 12),                  # four sockets of three ports, up to two links per pair
    ((2, 4, 0, True, 4), 4),                   # two sockets of four ports, up to four links
    ((6, 3, 0, False), 2),
    ((8, 3, 4, False), 25),                    # experiments/sweeps/eight-socket-wirings.yaml
])
def test_every_documented_count_comes_out_within_the_bound(args, count):
    assert len(wirings(*args)) == count


@pytest.mark.slow
@pytest.mark.parametrize("args,count", [
    ((8, 3, 2, False), 19),                    # the module's example (4 s)
    ((8, 3, 0, False), 5),                     # the five cubic graphs on eight vertices (7 s)
    ((8, 3, 0, True), 194),                    # the largest search the documentation names (20 s)
])
def test_the_large_documented_searches_fit_the_bound(args, count):
    assert len(wirings(*args)) == count


def test_the_sweep_command_refuses_a_search_past_the_bound_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(search, "MOST_STEPS", 20_000)
    sweep_file = tmp_path / "big.yaml"
    sweep_file.write_text("name: big\nboards:\n  - wirings: {sockets: 8, ports: 3, spare_ports: true}\n"
                          "cases:\n  - 0.0.r.1\n")
    out = tmp_path / "out"
    assert main(["sweep", str(sweep_file), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (f"{sweep_file}:3: boards[0].wirings: the search for every wiring of 8 sockets of 3 ports with spare"
                   " ports passed its bound of 20,000 steps unfinished; give fewer sockets, fewer ports or"
                   " spare_ports: false\n")
    assert not out.exists()


@pytest.mark.slow
def test_nine_sockets_of_four_ports_are_refused_in_well_under_a_minute(tmp_path):
    """The review's case: about 250 labelled graphs a second, hours to the old bound of two million graphs."""
    sweep_file = tmp_path / "big.yaml"
    sweep_file.write_text("name: big\nboards:\n  - wirings: {sockets: 9, ports: 4, spare_ports: true}\n"
                          "cases:\n  - 0.0.r.1\n")
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "simnuma", "sweep", str(sweep_file), "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=90, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert time.perf_counter() - start < 60
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [f"{sweep_file}:3: boards[0].wirings: the search for every wiring of 9 sockets"
                                        " of 4 ports with spare ports passed its bound of 25,000,000 steps unfinished;"
                                        " give fewer sockets, fewer ports or spare_ports: false"]
