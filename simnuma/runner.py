"""Running many simulations: one process pool and one result cache for every command that runs cases.

A :class:`Job` is one simulation: a board (with parameter changes, for a fit), a
:class:`~simnuma.case.Case` whose background threads are all explicit, an array
size, a mode and a seed.  Its :attr:`Job.key` holds the board's hash, the
changes, the case, size, mode, seed and :func:`result_version` (the simnuma
version and a digest of its sources), so a key names one result and nothing
else.  A :class:`Runner` simulates jobs on a pool of worker processes that it
keeps across calls (a fit asks for a few cases at a time, hundreds of times),
starting the costliest first, and answers a job it has seen from its
:class:`ResultCache`: in memory always, and on disk in a folder when one is
given (``simnuma reproduce --cache DIR``), so a second run of the same studies
simulates nothing.  ``simnuma reproduce`` and calibration both run their cases
here.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import multiprocessing
import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from typing import TYPE_CHECKING

from . import __version__
from .case import Case
from .fileio import write_json

if TYPE_CHECKING:
    from .topology import Topology

__all__ = ["Job", "Runner", "ResultCache", "board_hash", "result_version", "simulate_job", "default_workers",
           "most_workers", "jobs_problem", "MOST_WORKERS_PER_CPU"]

QUEUES_KEPT = 6   # a job's result keeps the busiest queues only: the rest is never reported
MOST_WORKERS_PER_CPU = 4   # --jobs: more simulations at once than this per CPU only cost memory


def board_hash(topology) -> str:
    """A short hash of a board's resolved parameters: equal boards, equal hashes."""
    text = json.dumps(topology.to_dict(), sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@lru_cache(maxsize=1)
def result_version() -> str:
    """``VERSION+DIGEST``: the simnuma version and a digest of every source file a result could depend on."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return f"{__version__}+{digest.hexdigest()[:12]}"


@dataclass(frozen=True)
class Job:
    """One simulation: a board (and parameter changes to it), a case, array size, mode and seed."""

    topology: Topology = field(compare=False, repr=False)
    case: Case
    size_bytes: int
    mode: str = "steady"
    seed: int = 1
    changes: tuple = ()        # ((parameter path, value), ...) applied to the board before it runs
    board: str = ""            # the board's hash (computed when not given)

    def __post_init__(self):
        if not self.board:
            object.__setattr__(self, "board", board_hash(self.topology))

    @property
    def key(self) -> tuple:
        return (self.board, self.changes, self.case.name, self.size_bytes, self.mode, self.seed, result_version())

    @property
    def cost(self) -> float:
        """A rough relative cost, to start the longest simulations first."""
        return (2 * len(self.case.threads) + len(self.case.background)) * len(self.topology.nodes)


def simulate_job(job: Job) -> dict:
    """Run one job: ``Result.to_dict()`` without the board's parameters and with the busiest queues only,
    plus the wall and CPU seconds it took.  A board that deadlocks on the case gives ``{"deadlock": its
    one line, "diagnosis": ...}`` instead (an outcome of the job, kept in the cache like a result)."""
    from .model import simulate
    from .model.deadlock import DeadlockError

    start, start_cpu = time.perf_counter(), time.process_time()
    board = job.topology.with_parameters(dict(job.changes)) if job.changes else job.topology
    try:
        result = simulate(board, list(job.case.threads), list(job.case.background), size_bytes=job.size_bytes,
                          mode=job.mode, seed=job.seed, baseline=False).to_dict()
    except DeadlockError as exc:
        result = {"deadlock": str(exc), "diagnosis": exc.diagnosis}
    result.pop("parameters", None)
    if "queues" in result:
        result["queues"] = result["queues"][:QUEUES_KEPT]
    result["wall_s"] = time.perf_counter() - start
    result["cpu_s"] = time.process_time() - start_cpu
    return result


class ResultCache:
    """Results by job key: in memory, and as one JSON file per job in ``folder`` when one is given."""

    def __init__(self, folder=None):
        self.folder = Path(folder) if folder else None
        self._memory: dict = {}

    def _path(self, key_text: str) -> Path:
        assert self.folder is not None   # only a cache with a folder has files
        name = hashlib.sha256(key_text.encode("utf-8")).hexdigest()[:32]
        return self.folder / f"{name}.json"

    def get(self, key: tuple):
        """The cached result of ``key``, or None."""
        if key in self._memory:
            return self._memory[key]
        if self.folder is None:
            return None
        key_text = json.dumps(key, default=str)
        try:
            data = json.loads(self._path(key_text).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if data.get("key") != json.loads(key_text):
            return None     # a digest collision or a damaged file: simulate again
        self._memory[key] = data["result"]
        return data["result"]

    def put(self, key: tuple, result: dict) -> None:
        self._memory[key] = result
        if self.folder is not None:
            write_json(self._path(json.dumps(key, default=str)), {"key": key, "result": result})


def default_workers() -> int:
    """The CPUs this process may run on."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def most_workers() -> int:
    """The most worker processes a command starts (``--jobs``): :data:`MOST_WORKERS_PER_CPU` per CPU."""
    return MOST_WORKERS_PER_CPU * default_workers()


def jobs_problem(jobs: int) -> str:
    """Why ``jobs`` worker processes cannot be started ('' when they can), for a ``--jobs`` message."""
    if jobs < 1:
        return "expected at least 1"
    if jobs > most_workers():
        return (f"expected at most {most_workers()} ({MOST_WORKERS_PER_CPU} per CPU of the {default_workers()}"
                " this process may run on)")
    return ""


class Runner:
    """Simulates jobs on up to ``workers`` processes, each distinct job once, through a :class:`ResultCache`.

    Use it as a context manager: the pool lives until the ``with`` block ends.
    ``simulated`` and ``cached`` count the jobs run and the jobs answered from
    the cache.
    """

    def __init__(self, workers: int = 1, cache: ResultCache | None = None):
        self.workers = max(1, int(workers))
        self.cache = cache if cache is not None else ResultCache()
        self.simulated = 0
        self.cached = 0
        self._pool: Any = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close(stop=exc_type is not None)

    def close(self, stop: bool = False) -> None:
        """End the pool: let it finish (``stop`` False) or stop its workers at once (an error, an interrupt)."""
        if self._pool is not None:
            if stop:
                self._pool.terminate()
            else:
                self._pool.close()
            self._pool.join()
            self._pool = None

    def run(self, jobs, on_done=None, keep_deadlocks: bool = False) -> dict:
        """``{job key: result}`` for ``jobs``; ``on_done(job, cached)`` after each distinct job.

        A job whose board deadlocks raises its :class:`~simnuma.model.deadlock.DeadlockError`, or with
        ``keep_deadlocks`` gives its ``{"deadlock": ...}`` record (:func:`simulate_job`) and the rest go on.
        """
        results, todo = {}, {}
        for job in jobs:
            if job.key in results or job.key in todo:
                continue
            hit = self.cache.get(job.key)
            if hit is None:
                todo[job.key] = job
                continue
            self._check(hit, keep_deadlocks)
            results[job.key] = hit
            self.cached += 1
            if on_done:
                on_done(job, True)
        for job, result in self._simulate(sorted(todo.values(), key=lambda j: -j.cost)):
            self.cache.put(job.key, result)
            self._check(result, keep_deadlocks)
            results[job.key] = result
            self.simulated += 1
            if on_done:
                on_done(job, False)
        return results

    def _check(self, result: dict, keep_deadlocks: bool) -> None:
        """Raise a deadlock record's error (no worker goes on simulating), unless deadlocks are kept."""
        if "deadlock" in result and not keep_deadlocks:
            from .model.deadlock import DeadlockError

            self.close(stop=True)
            raise DeadlockError(result["deadlock"], result["diagnosis"])

    def _simulate(self, order: list):
        """``(job, result)`` pairs, as the simulations end (the costliest are handed out first)."""
        if self.workers <= 1 or len(order) <= 1:
            for job in order:
                yield job, simulate_job(job)
            return
        pool = self._pool_for()
        try:
            for index, result in pool.imap_unordered(_simulate_indexed, enumerate(order), chunksize=1):
                yield order[index], result
        except BaseException:
            self.close(stop=True)     # a failed job or an interrupt: no worker goes on simulating
            raise

    def _pool_for(self):
        if self._pool is None:
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("fork" if "fork" in methods else None)
            with _interrupts_deferred():
                self._pool = context.Pool(self.workers, initializer=_worker_ignores_interrupts)
        return self._pool


def _simulate_indexed(task: tuple) -> tuple:
    index, job = task
    return index, simulate_job(job)


_STOPPING = (signal.SIGINT, signal.SIGTERM)
_PR_SET_PDEATHSIG = 1   # Linux prctl(2): the signal a process gets when the thread that created it ends


@contextmanager
def _interrupts_deferred():
    """Ctrl-C and SIGTERM take effect when the block ends, not inside it.

    An interrupt while a pool is being made would leave it half made and
    unassigned, so never stopped: its workers, restarted by its own thread
    as the program exits, would outlive it.  Here the handlers only note a
    signal, which the previous handler then gets once the pool exists (and
    can be stopped).  Outside the main thread, where handlers cannot be set,
    the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list = []
    previous = {s: signal.signal(s, lambda signum, frame: noted.append((signum, frame))) for s in _STOPPING}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    for signum, frame in noted[:1]:
        handler = previous[signum]
        if callable(handler):
            handler(signum, frame)
        elif handler == signal.SIG_DFL:
            signal.raise_signal(signum)


def _worker_ignores_interrupts() -> None:
    """A worker leaves Ctrl-C to the main process, which stops the pool (and so the worker) itself, and ends
    quietly on the SIGTERM that stopping sends (not through the command line's handler it was forked with)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _end_with_parent()


def _end_with_parent() -> None:
    """On Linux, a worker is killed when the thread of the main process that started it ends.

    A pool restarts a worker that has ended from one of its own threads; one
    restarted while the program exits would otherwise be left behind, waiting
    for work that never comes (and holding the program's output open).
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:   # the parent is gone already
        os._exit(1)
