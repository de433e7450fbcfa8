"""Running the native benchmark from Python.

:func:`run_bench` checks the request against the host first (so a bad spec or
an array that cannot fit fails with the same one-line message the native
program would give, before anything is compiled), builds the benchmark if
needed, runs it, and returns its JSON report (format ``simnuma-bench/2``) as a
dict.  :func:`summary_lines` renders a report for people.
"""
from __future__ import annotations

import json
import subprocess

from ..errors import BenchError
from ..units import UnitError, parse_size_bytes
from .build import binary_path
from .host import Host, discover_host, resolve_threads

__all__ = ["run_bench", "parse_size", "parse_reps", "parse_count", "parse_pages", "summary_lines", "FORMAT",
           "FORMATS", "PAGES", "stride_command"]

FORMAT = "simnuma-bench/2"
FORMATS = ("simnuma-bench/1", FORMAT)  # every report format a reader of reports accepts
PAGES = ("auto", "huge", "base")  # --pages: auto = huge pages for the l chase, base pages for r, w, t


def parse_size(text) -> int:
    """``64MiB``, ``64 MiB`` or a bare number of bytes -> bytes; BenchError otherwise."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        raw = str(text).strip()
        try:
            value = int(raw) if raw.isdigit() else parse_size_bytes(raw)
        except UnitError as exc:
            raise BenchError(f"--size {raw!r}: {exc}") from None
    if value <= 0:
        raise BenchError(f"--size {text!r}: must be positive")
    return value


def parse_count(text, option: str, most: int) -> int:
    """A whole number from 1 to ``most`` given for ``option``; BenchError (one line) otherwise."""
    raw = str(text).strip()
    if not raw.isdigit() or not 1 <= int(raw) <= most:
        raise BenchError(f"{option} {raw!r}: expected a whole number from 1 to {most}")
    return int(raw)


def parse_reps(text) -> int:
    return parse_count(text, "--reps", 1_000_000)


def parse_pages(text) -> str:
    """``auto``, ``huge`` or ``base``; BenchError (one line) otherwise."""
    raw = str(text).strip()
    if raw not in PAGES:
        raise BenchError(f"--pages {raw!r}: expected auto, huge or base")
    return raw


def stride_command(binary, placed, size_bytes: int | None, reps: int, allow_misplaced: bool,
                   pages: str = "auto") -> list:
    """The native command line for resolved threads."""
    argv = [str(binary)]
    for thread in placed:
        argv += ["--bg", thread.label] if thread.role == "background" else [thread.label]
    if size_bytes is not None:
        argv += ["--size", str(size_bytes)]
    argv += ["--reps", str(reps), "--pages", pages]
    if allow_misplaced:
        argv.append("--allow-misplaced")
    return argv


def _failure(done: subprocess.CompletedProcess) -> BenchError:
    lines = [line for line in done.stderr.splitlines() if line.strip() and "warning:" not in line]
    message = lines[-1] if lines else "no message"
    if message.startswith("stride: "):
        message = message[len("stride: "):]
    if done.returncode == 2:
        return BenchError(message)
    if done.returncode < 0:
        return BenchError(f"the benchmark was killed by signal {-done.returncode}: {message}")
    return BenchError(f"the benchmark failed (exit status {done.returncode}): {message}")


def run_bench(specs, background=(), size_bytes=None, reps: int = 5, allow_misplaced: bool = False,
              host: Host | None = None, pages: str = "auto") -> dict:
    """Run foreground ``specs`` and ``background`` specs together; return the JSON report.

    ``size_bytes`` is the size of each array (default: 4 x the last-level
    cache, at least 64 MiB); ``reps`` the number of timed repetitions;
    ``pages`` the pages of the arrays (``auto``: huge pages for the latency
    chase, base pages for the streaming ops; ``huge`` or ``base`` for all).
    Raises SpecError or BenchError (one line each) when the request cannot be
    honoured.
    """
    if isinstance(specs, str):
        specs = [specs]
    if isinstance(background, str):
        background = [background]
    size = parse_size(size_bytes) if size_bytes is not None else None
    reps = parse_reps(reps)
    pages = parse_pages(pages)
    host = host or discover_host()
    placed = resolve_threads(host, specs, background, size)
    argv = stride_command(binary_path(), placed, size, reps, allow_misplaced, pages)
    try:
        done = subprocess.run(argv, capture_output=True, text=True)
    except OSError as exc:
        raise BenchError(f"cannot run the benchmark {argv[0]}: {exc.strerror}") from None
    if done.returncode != 0:
        raise _failure(done)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError as exc:
        raise BenchError(f"the benchmark printed malformed JSON: {exc}") from None
    if report.get("format") != FORMAT:
        raise BenchError(f"the benchmark reported format {report.get('format')!r}, expected {FORMAT!r}")
    return report


def pages_text(thread: dict) -> str:
    """``huge pages 100%`` / ``base pages``: what backed a thread's arrays ('' for a simnuma-bench/1 report)."""
    pages = thread.get("pages")
    if not isinstance(pages, dict):
        return ""
    fraction = pages.get("huge_fraction")
    if pages.get("requested") == "base" and not fraction:
        return "base pages"
    if fraction is None:
        return f"{pages.get('requested')} pages requested, huge pages not measured"
    return f"huge pages {100 * fraction:.0f}%"


def summary_lines(report: dict) -> list:
    """One line per thread and one for the wall time, for a terminal."""
    lines = []
    width = max(len(t["spec"]) for t in report["threads"])
    for t in report["threads"]:
        p = t["placement"]
        fraction = "unverified" if p["fraction"] is None else f"{100 * p['fraction']:.1f}% on node {p['node']}"
        latency = t["ns_per_access"]["best"]
        latency_text = f"{latency:8.2f} ns/access" if latency is not None else "      no accesses"
        lines.append(f"{t['spec']:<{width}}  {t['role']:<10}  {t['GBps']['best']:7.3f} GB/s best"
                     f"  {t['GBps']['median']:7.3f} GB/s median  {latency_text}"
                     f"  placement {fraction} ({p['bind']}, {p['verify']})  {pages_text(t)}")
    wall = report["wall_seconds"]
    lines.append(f"wall (until the last foreground thread ends): {wall['min']:.6f} s min,"
                 f" {wall['median']:.6f} s median over {report['reps']} reps of {report['size_bytes']} bytes")
    return lines
