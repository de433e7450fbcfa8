"""The sweep and calibration arguments: any value gives a result, or one line naming the argument and exit status
2; never a traceback, never a hang.

simnuma's sweeps are ``run`` (one case), ``reproduce`` (every case of its studies) and ``sweep``; calibration is
``calibrate`` and ``validate``.  Each test starts from a command line of one of them that succeeds cheaply (a
one-node board, a two-case study and two measurements, all of 64 KiB arrays, in a fresh folder), replaces the
value of one argument by a random or mutated one (empty, huge, negative, NaN and infinite numbers, wrong units,
unknown or repeated names, unicode, NUL bytes, newlines, very long text), runs the real entry point in this
process and checks what came out.  A run still going after :data:`TIME_LIMIT` seconds is a hang.  Each test
states how many command lines it tries (hypothesis's max_examples).  (The benchmark's own arguments, which run
the native benchmark when valid, are refused in tests/bench/test_bench_cli.py.)
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import signal
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simnuma.calibrate import PARAMETERS
from simnuma.cli import main
from simnuma.errors import SpecError
from simnuma.workload import OPS, parse_spec

from test_calibrate import ONE_NODE

TIME_LIMIT = 60   # seconds: a valid run here takes under one
REFERENCE = """\
format: simnuma-reference/1
name: fuzz
board: onenode
size: 64 KiB
measurements:
  - {case: 0.0.r.0, metric: thread_GBps, thread: 0.0.r.0, value: 2.57, source: synthetic}
  - {case: 0.0.l.0, metric: thread_latency_ns, thread: 0.0.l.0, value: 98.5, source: synthetic}
"""
STUDY = """\
format: simnuma-study/1
name: fuzz
board: board.yaml
size: 64 KiB
cases: [0.0.r.0, 0.0.w.0]
claims:
  - slower: 0.0.w.0
    than: 0.0.r.0
    says: A write is slower than a read.
    phenomenon: test
"""
SWEEP = """\
name: fuzz
boards: [board.yaml]
grid: {defaults.memory.latency: [50 ns, 60 ns]}
cases: [{set: single, ops: [r, w]}]
size: 64 KiB
"""
STREAM_OUTPUT = """\
Number of Threads counted = 1
Function    Best Rate MB/s  Avg time     Min time     Max time
Triad:           4693.9     0.043397     0.042888     0.044256
"""
FILES = {"board.yaml": ONE_NODE, "ref.yaml": REFERENCE, "study.yaml": STUDY, "sweep.yaml": SWEEP,
         "stream.txt": STREAM_OUTPUT}

# the command lines that succeed: (command, {option: values}, {positional argument: value})
BASELINES = {
    "run": ("run", {"--size": ["64KiB"]}, {"TOPO": "board.yaml", "CASE": "0.0.r.0"}),
    "reproduce": ("reproduce", {"--jobs": ["1"], "-o": ["out"]}, {"STUDY": "study.yaml"}),
    "calibrate": ("calibrate", {"--jobs": ["1"], "--fit": ["memory.latency"], "-o": ["calibrated.yaml"]},
                  {"TOPO": "board.yaml", "MEASUREMENTS": "ref.yaml"}),
    "validate": ("validate", {"--jobs": ["1"]}, {"TOPO": "board.yaml", "MEASUREMENTS": "ref.yaml"}),
    "sweep": ("sweep", {"--jobs": ["1"], "-o": ["out"]}, {"SWEEP": "sweep.yaml"}),
    "explain": ("explain", {"--seed": ["1"]}, {"TOPO": "board.yaml", "CASE": "0.0.r.0"}),
    "export": ("export", {"--jobs": ["1"], "--memory": ["1GiB"], "-o": ["out.txt"]},
               {"FORMAT": "numactl", "TOPO": "board.yaml"}),
    "import": ("import", {"--board": ["board.yaml"], "--case": ["0.0.t.0"], "-o": ["ref-out.yaml"]},
               {"FORMAT": "stream", "FILE": "stream.txt"}),
}
# arguments whose messages may name the value given (a path, a case; what argparse could not take: 'unrecognized
# arguments: -inf' after a list) rather than the option
NAMED_BY_VALUE = {"TOPO", "STUDY", "MEASUREMENTS", "SWEEP", "CASE", "-o", "--json", "--cache", "--bg", "--cases",
                  "--fit", "--set", "FILE", "--board", "FORMAT", "--case"}
# cases: a message names the thread spec (a word of the value, between spaces or '+') it could not read or place
CASE_ARGUMENTS = {"CASE", "--bg", "--cases", "--case"}
# input files: a readable file that is not what the argument wants has every problem listed, one line each
FILE_ARGUMENTS = {"TOPO", "STUDY", "MEASUREMENTS", "SWEEP", "FILE", "--board"}


# ---------------------------------------------------------------- values

NASTY = ["", " ", "0", "-1", "-0", "+1", "1.5", "1e30", "1e308", "1e400", "-1e30", "nan", "NaN", "inf", "-inf",
         "1e-300", "0x10", "1_000", "\u0661\u0662", "\uff16\uff14", "\u00b5", "\x00", "a\x00b", "\u202e", "\n",
         "a\nb", "x" * 5000, "9" * 5000, "--", "-", "=", ":", "@", "%s", "{}"]


def _numbers():
    """Numbers as a command line gives them: whole, decimal, huge, tiny, negative, NaN and infinite."""
    return st.one_of(st.integers(-10**30, 10**30).map(str), st.floats().map(repr),
                     st.sampled_from(["1", "2", "8", "15", "1000", "1001", "99999999999999", "2e1", " 3 "]))


def _sizes():
    """Array sizes: every unit (of sizes and of other quantities), none, and numbers of any size."""
    units = st.sampled_from(["B", "KiB", "MiB", "GiB", "TiB", "kB", "KB", "PiB", "kb", "KIB", "GB/s", "ns", "MHz",
                             " B", ""])
    return st.one_of(st.tuples(_numbers(), units).map("".join),
                     st.sampled_from(["64KiB", "64 KiB", "63B", "64B", "1024TiB", "1025TiB", "1e308B", "nanB"]))


def _mutated(text: str):
    """``text`` with a character dropped, doubled or replaced, or repeated."""
    return st.tuples(st.integers(0, len(text)), st.sampled_from(["drop", "double", "replace", "repeat"]),
                     st.characters()).map(lambda m: _mutate(text, *m))


def _mutate(text: str, at: int, how: str, char: str) -> str:
    if how == "drop":
        return text[:at] + text[at + 1:]
    if how == "double":
        return text[:at] + text[at:at + 1] * 2 + text[at + 1:]
    if how == "replace":
        return text[:at] + char + text[at + 1:]
    return text * (at + 2)


def _any(*good: str):
    """The nasty values, arbitrary text, and mutations of ``good`` values."""
    return st.one_of(st.sampled_from(NASTY), st.text(max_size=30), *(_mutated(g) for g in good))


def _confined(text: str) -> bool:
    """A path inside the run's folder: relative and never climbing out."""
    return not os.path.isabs(text) and ".." not in text


def _paths(*good: str):
    """Paths to read or write: the inputs themselves, folders, devices, NUL bytes, names too long."""
    special = st.sampled_from(["out", ".", "board.yaml", "ref.yaml", "study.yaml", "sweep.yaml", "board.yaml/x",
                               "sub/deeper/x",
                               "/dev/null", "x" * 300, "x/" * 3000, "a\x00b", "", "\u00b5-out", "a\nb"])
    return st.one_of(special, _any(*good).filter(_confined))


def _fit_items():
    """``--fit`` items: parameter names (known, misspelt, of another memory model), with bounds of any kind."""
    names = st.one_of(st.sampled_from(list(PARAMETERS)), st.sampled_from(
        ["memory.latancy", "MEMORY.LATENCY", "memory.dram.timings.CL", "core.window", "core.window.x", ""]))
    bound = st.one_of(_numbers(), st.sampled_from(["", ".", "e", "1e", "-", "1:2"]))
    bounds = st.tuples(bound, bound).map(":".join)
    return st.one_of(names, st.tuples(names, bounds).map("=".join), _any("memory.latency=20:120"))


def _cases():
    """Cases in the case notation: measured ones, others, and mutations."""
    return st.one_of(st.sampled_from(["0.0.r.0", "0.0.l.0", "0.0.w.0", "0.1.r.0", "0.0.r.0 + high@low", "+",
                                      "0.0.r.0@1GB/s", "0.0.r.0@nanGB/s", "9.9.r.9"]), _any("0.0.r.0"))


SEED = _numbers()
JOBS = st.one_of(_numbers(), st.sampled_from(["1", "2", "8", "9"]))
VALUES = {
    "--size": _sizes(), "--seed": SEED, "--jobs": JOBS, "--max-evaluations": st.one_of(_numbers(), st.just("2")),
    "-o": _paths("out"), "--json": _paths("fit.json"), "--cache": _paths("cache"),
    "--bg": _cases(), "--fit": st.lists(_fit_items(), min_size=1, max_size=3),
    "--cases": st.lists(_cases(), min_size=1, max_size=3),
    "TOPO": _paths("board.yaml", "quartet"), "STUDY": _paths("study.yaml", "quartet-hops"),
    "MEASUREMENTS": _paths("ref.yaml", "quartet-single-thread"), "CASE": _cases(),
    "SWEEP": _paths("sweep.yaml", "board.yaml", "study.yaml"),
    "FILE": _paths("stream.txt", "ref.yaml"), "--board": _paths("board.yaml", "quartet"),
    "FORMAT": st.one_of(st.sampled_from(["slit", "acpi", "numactl", "qemu", "hwloc", "mlc", "stream", "likwid"]),
                        _any("stream")),
    "--memory": _sizes(), "--case": _cases(),
    "--set": _any("defaults.memory.latency=50ns", "link_defaults.bandwidth=8 GB/s", "nodes.0.memory.queue=4"),
}


def _argument(command: str, *names: str):
    """``(argument, values, '=' form)`` for one of ``names`` of ``command``."""
    return st.sampled_from(names).flatmap(lambda name: st.tuples(
        st.just(name), VALUES[name].map(lambda v: v if isinstance(v, list) else [v]), st.booleans()))


# ---------------------------------------------------------------- running a command line

class Hung(BaseException):
    """A command line still running after TIME_LIMIT seconds."""


@contextlib.contextmanager
def _time_limit(seconds: float):
    def stop(signum, frame):
        raise Hung(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _fresh_folder(root: Path):
    """A new folder holding the inputs, the working directory while the block runs."""
    folder = Path(tempfile.mkdtemp(dir=root))
    for name, text in FILES.items():
        (folder / name).write_text(text)
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield folder
    finally:
        os.chdir(before)
        shutil.rmtree(folder, ignore_errors=True)


def _argv(command: str, replaced: tuple = ("", [], False)) -> list:
    """The baseline command line of ``command`` with ``replaced`` = (argument, values, '=' form): positional
    arguments after '--', so that a value starting with '-' reaches its reader."""
    name, options, positional = BASELINES[command]
    options, positional = dict(options), dict(positional)
    argument, values, equals = replaced
    if argument in positional:
        positional[argument] = values[0]
    elif argument:
        options[argument] = values
    argv = [name]
    for option, items in options.items():
        argv += [f"{option}={items[0]}"] if equals and option == argument and len(items) == 1 else [option, *items]
    return argv + ["--", *positional.values()]


def _run(root: Path, argv: list) -> tuple:
    """``(exit status, stdout, stderr)`` of ``simnuma ARGV`` run in a fresh folder."""
    out, err = io.StringIO(), io.StringIO()
    with _fresh_folder(root), _time_limit(TIME_LIMIT), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:      # argparse: usage mistakes, --help
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def _names(line: str, argument: str, values: list) -> bool:
    """Whether ``line`` names ``argument`` (an option) or, for a path or a case, one of ``values``."""
    if argument.startswith("-") and re.search(rf"(?<![\w-]){re.escape(argument)}(?![\w-])", line):
        return True
    if argument not in NAMED_BY_VALUE:
        return False
    shown = {form for v in values for form in (v, repr(v), repr(v)[1:-1], str(Path(v)) if "\x00" not in v else v)}
    if argument in CASE_ARGUMENTS:
        shown |= {form for v in values for word in v.replace("+", " + ").split() for form in _spec_forms(word)}
    return any(form.strip() and form in line for form in shown)


def _spec_forms(word: str) -> set:
    """A word of a case as a message may show it: as given, escaped, or as the thread spec it reads as."""
    forms = {repr(word)[1:-1]}
    with contextlib.suppress(SpecError):
        forms.add(parse_spec(word, OPS).label)
    return forms


def _check(outcome: tuple, argument: str, values: list) -> None:
    code, out, err = outcome
    assert "Traceback" not in err, err
    if code == 0:
        assert out.strip(), "exit status 0 without a result"
        return
    assert code == 2, (code, err)
    lines = err.splitlines()
    assert len(lines) == 1 or lines and argument in FILE_ARGUMENTS, f"{len(lines)} lines: {err!r}"
    for line in lines:
        assert _names(line, argument, values), f"the message does not name {argument} {values!r}: {line!r}"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz-arguments")


# ---------------------------------------------------------------- the tests

@pytest.mark.parametrize("command", list(BASELINES))
def test_every_baseline_command_line_succeeds(root, command):
    """The command lines the fuzzing starts from succeed: a refusal below is the changed argument's doing."""
    code, out, err = _run(root, _argv(command))
    assert code == 0 and out.strip(), err


@settings(max_examples=150, deadline=None)
@given(_argument("run", "--size", "--seed", "--bg", "--set", "-o", "TOPO", "CASE"))
def test_run_arguments_give_a_result_or_one_line(root, replaced):
    """150 command lines of simnuma run: array sizes, seeds, background threads, parameter changes, output
    files, boards, cases."""
    _check(_run(root, _argv("run", replaced)), replaced[0], replaced[1])


@settings(max_examples=40, deadline=None)
@given(_argument("reproduce", "--size", "--seed", "--jobs", "-o", "--cache", "STUDY"))
def test_reproduce_arguments_give_a_result_or_one_line(root, replaced):
    """40 command lines of simnuma reproduce: array sizes, seeds, worker counts, output and cache folders,
    studies."""
    _check(_run(root, _argv("reproduce", replaced)), replaced[0], replaced[1])


@settings(max_examples=40, deadline=None)
@given(_argument("sweep", "--jobs", "-o", "--cache", "SWEEP"))
def test_sweep_arguments_give_a_result_or_one_line(root, replaced):
    """40 command lines of simnuma sweep: worker counts, output and cache folders, sweep files."""
    _check(_run(root, _argv("sweep", replaced)), replaced[0], replaced[1])


@settings(max_examples=30, deadline=None)
@given(_argument("explain", "--seed", "TOPO", "CASE"))
def test_explain_arguments_give_a_result_or_one_line(root, replaced):
    """30 command lines of simnuma explain: seeds, boards, cases."""
    _check(_run(root, _argv("explain", replaced)), replaced[0], replaced[1])


@settings(max_examples=40, deadline=None)
@given(_argument("export", "--jobs", "--memory", "-o", "FORMAT", "TOPO"))
def test_export_arguments_give_a_result_or_one_line(root, replaced):
    """40 command lines of simnuma export: worker counts, memory sizes, output files, formats, boards."""
    _check(_run(root, _argv("export", replaced)), replaced[0], replaced[1])


@settings(max_examples=40, deadline=None)
@given(_argument("import", "--board", "--case", "-o", "FORMAT", "FILE"))
def test_import_arguments_give_a_result_or_one_line(root, replaced):
    """40 command lines of simnuma import: boards, placements, output files, formats, tool outputs."""
    _check(_run(root, _argv("import", replaced)), replaced[0], replaced[1])


@settings(max_examples=100, deadline=None)
@given(_argument("calibrate", "--fit", "--cases", "--jobs", "--max-evaluations", "--seed", "-o", "--json", "TOPO",
                 "MEASUREMENTS"))
def test_calibrate_arguments_give_a_result_or_one_line(root, replaced):
    """100 command lines of simnuma calibrate: parameter lists and bounds, cases, worker counts, evaluation
    budgets, seeds, output files, boards and measurement files."""
    _check(_run(root, _argv("calibrate", replaced)), replaced[0], replaced[1])


@settings(max_examples=40, deadline=None)
@given(_argument("validate", "--jobs", "--seed", "-o", "TOPO", "MEASUREMENTS"))
def test_validate_arguments_give_a_result_or_one_line(root, replaced):
    """40 command lines of simnuma validate: worker counts, seeds, output folders, boards, measurement files."""
    _check(_run(root, _argv("validate", replaced)), replaced[0], replaced[1])


@pytest.mark.parametrize("command, argument, value, equals, message", [
    ("run", "--size", "0B", False, "--size: expected an array of 64 B to 1024 TiB per thread, got '0B'"),
    ("run", "--size", "1e308B", False, "--size: expected an array of 64 B to 1024 TiB per thread"),
    ("reproduce", "--size", "0B", False, "--size: expected an array of 64 B to 1024 TiB per thread"),
    ("run", "--size", "--", True, "--size: expected a size such as '64 MiB', got '--'"),
    ("run", "--seed", "--", True, "argument --seed: invalid int value: '--'"),
    ("calibrate", "--fit", "--", True, "--fit '--': unknown parameter"),
    ("run", "CASE", "--", False, "'--': expected a thread spec"),
    ("calibrate", "MEASUREMENTS", "--", False, "--: no such measurement file"),
    ("reproduce", "--jobs", "99999999999999", False, "argument --jobs: expected at most"),
    ("calibrate", "--jobs", "99999999999999", False, "--jobs 99999999999999: expected at most"),
    ("calibrate", "--max-evaluations", "9" * 20, False, "expected at most 1000"),
    ("calibrate", "--fit", "memory.latency=e:e", False, "expected NAME=LOW:HIGH with two numbers, got 'e:e'"),
    ("calibrate", "--fit", "memory.latency=nan:inf", False, "bounds must be positive with LOW < HIGH"),
    ("calibrate", "--fit", "memory.latency=1:1e30", False, "'1e+30 ns' is implausible"),
    ("calibrate", "--fit", "memory.latency=1e-300:1e-299", False, "LOW is below 1e-9"),
    ("calibrate", "--fit", "link.latency", False, "--fit link.latency: none of these parameters matters"),
    ("calibrate", "--json", "calibrated.yaml", False, "--json calibrated.yaml: the same file as -o"),
    ("calibrate", "--json", "", False, "--json '': an empty path names no file"),
    ("calibrate", "-o", "a\x00b", False, "-o 'a\\x00b': a path cannot contain a NUL byte"),
    ("run", "-o", "", False, "-o '': an empty path names no file"),
    ("reproduce", "-o", "", False, "-o '': an empty path names no folder"),
    ("validate", "-o", "", False, "-o '': an empty path names no folder"),
    ("reproduce", "--cache", "a\x00b", False, "--cache 'a\\x00b': a path cannot contain a NUL byte"),
    ("reproduce", "--cache", "", False, "--cache '': an empty path names no folder"),
    ("reproduce", "STUDY", "x" * 5000, False, "unknown study 'xxx"),
    ("run", "TOPO", "x" * 5000, False, "no such board file or bundled board"),
    ("calibrate", "MEASUREMENTS", "x" * 5000, False, "no such measurement file"),
    ("validate", "MEASUREMENTS", "x" * 300, False, "no such measurement file"),
    ("run", "TOPO", "a\nb", False, "'a\\nb': no such board file"),
    ("run", "TOPO", " ", False, "' ': no such board file"),
    ("run", "TOPO", "a\x00.yaml", False, "not a path (a NUL byte in the name)"),
])
def test_what_the_fuzzing_found_is_one_line(root, command, argument, value, equals, message):
    """Each was a traceback, a message of several lines or none, a fork of 10^14 workers, a result of
    infinities, or a value taken silently; now one line naming the argument, exit status 2."""
    outcome = _run(root, _argv(command, (argument, [value], equals)))
    _check(outcome, argument, [value])
    assert outcome[0] == 2 and message in outcome[2], outcome[2]
