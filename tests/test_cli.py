"""The command line as a whole: usage mistakes are one line and exit status 2."""
from __future__ import annotations

import pytest

from simnuma.cli import main


@pytest.mark.parametrize("argv, prog, message", [
    ([], "simnuma", "required: COMMAND"),
    (["frob"], "simnuma", "invalid choice: 'frob'"),
    (["run"], "simnuma run", "required: TOPO, CASE"),
    (["run", "quartet", "0.0.r.0", "--bogus"], "simnuma", "unrecognized arguments: --bogus"),
    (["reproduce", "--jobs", "0"], "simnuma reproduce", "argument --jobs: expected a whole number >= 1, got '0'"),
    (["calibrate", "quartet", "m.yaml", "-o", "c.yaml", "--jobs", "x"], "simnuma calibrate",
     "argument --jobs: invalid int value: 'x'"),
    (["bench", "run", "--reps"], "simnuma bench run", "argument --reps: expected one argument"),
])
def test_usage_mistakes_are_one_line_and_exit_2(capsys, argv, prog, message):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"{prog}: ") and message in lines[0], lines[0]
    assert lines[0].endswith(f"(see '{prog} --help')")
    assert captured.out == ""


def test_help_still_prints_the_usage(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["reproduce", "--help"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("usage: simnuma reproduce")
