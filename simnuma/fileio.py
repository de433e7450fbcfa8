"""Writing results safely and showing progress.

A result file is written to a temporary file beside the target and renamed over
it (:func:`write_atomic`), so an interrupted run never leaves a half-written
file and never corrupts one that was already there.  A folder of results is
written all or nothing (:class:`OutputFolder`): every file goes to a hidden
staging folder first and moves in only when the whole run has succeeded, while
a lock keeps a second run from writing into the same folder; the files of the
command's previous run there that this run did not write again are removed,
found by the record each run leaves (:data:`MANIFEST_NAME`).  Output paths are
checked before any work starts (:func:`check_output_file`,
:func:`check_output_folder`): a symbolic link, a device or a FIFO is never
replaced, and an unwritable place is reported at once.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

from .errors import SimnumaError, shown

__all__ = ["write_atomic", "write_json", "progress", "check_output_file", "check_output_folder", "OutputFolder",
           "STAGING_PREFIX", "MANIFEST_NAME", "read_input", "UnreadableInput", "MAX_INPUT_BYTES", "path_kind"]

MAX_INPUT_BYTES = 16 * 2**20   # a board or a study is a few kB, a benchmark report tens of kB


class UnreadableInput(Exception):
    """An input file that cannot be read as text; ``str()`` says why in a few words."""


def _too_large(size_text: str) -> UnreadableInput:
    return UnreadableInput(f"is {size_text}; an input file is at most {MAX_INPUT_BYTES // 2**20} MiB"
                           " (a board or a study is a few kB)")


def path_kind(text) -> str:
    """What ``text`` names on disk: ``file``, ``folder``, ``other`` (a device, FIFO or socket), or ``''``:
    nothing, or text that cannot name a path (a NUL byte, a name too long for the system)."""
    try:
        mode = os.stat(text).st_mode
    except (OSError, ValueError):
        return ""
    return "file" if stat.S_ISREG(mode) else "folder" if stat.S_ISDIR(mode) else "other"


def read_input(path) -> str:
    """The text of an input file (a board, study, measurement file or benchmark report).

    Refused before anything is read: what is not a regular file (a FIFO would
    block, a device would never end) and a file over :data:`MAX_INPUT_BYTES`.
    Then the bytes must be UTF-8 text without NUL bytes.  Raises
    :class:`UnreadableInput` with the reason.
    """
    path = Path(path)
    try:
        info = path.stat()
    except OSError as exc:
        raise UnreadableInput(exc.strerror or str(exc)) from None
    except ValueError:     # a NUL byte: no file has such a name
        raise UnreadableInput("not a path (a NUL byte in the name)") from None
    if not stat.S_ISREG(info.st_mode):
        what = "a folder" if stat.S_ISDIR(info.st_mode) else "a device, FIFO or socket"
        raise UnreadableInput(f"is {what}, not a file")
    if info.st_size > MAX_INPUT_BYTES:
        raise _too_large(f"{info.st_size / 2**20:.0f} MiB")
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_INPUT_BYTES + 1)     # bounded even if the file grew since stat()
    except OSError as exc:
        raise UnreadableInput(exc.strerror or str(exc)) from None
    if len(data) > MAX_INPUT_BYTES:
        raise _too_large(f"over {MAX_INPUT_BYTES // 2**20} MiB")
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise UnreadableInput(f"not a text file (a NUL byte on line {line}, byte {nul})")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UnreadableInput(f"not UTF-8 text (line {line}, byte {exc.start})") from None

STAGING_PREFIX = ".simnuma-staging-"   # a run's files before they move into its output folder
MANIFEST_NAME = ".simnuma-outputs.json"   # in an output folder: the files each command's last run wrote there
MANIFEST_FORMAT = "simnuma-outputs/1"


def _writable_place(path: Path) -> None:
    """Raise SimnumaError unless ``path`` could be created: its nearest existing ancestor is a writable folder."""
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise SimnumaError(f"{_named(path)}: cannot write here: {_named(parent)} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise SimnumaError(f"{_named(path)}: cannot write here: no permission to write in {_named(parent)}")
    _try_creating_in(parent, path)


def _try_creating_in(folder: Path, path: Path) -> None:
    """Create and remove a file in ``folder``: permissions do not tell a read-only mount or a pseudo file system
    (``/proc``), nor anything for root; SimnumaError naming ``path`` when the system refuses."""
    try:
        fd, name = tempfile.mkstemp(dir=folder, prefix=".simnuma-check-")
    except OSError as exc:
        raise SimnumaError(f"{_named(path)}: cannot write here: {exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(name)


def _named(path) -> str:
    """A path as a message names it (:func:`~simnuma.errors.shown`)."""
    return shown(str(path))


def _output_path(path, what: str, option: str) -> Path:
    """``path`` as a Path; SimnumaError naming ``option`` when its text cannot name a ``what``: empty, or with a
    NUL byte."""
    text = str(path)
    if not text:
        raise SimnumaError(f"{option} '': an empty path names no {what}; give one")
    if "\0" in text:
        raise SimnumaError(f"{option} {text!r}: a path cannot contain a NUL byte")
    return Path(text)


def _status(path: Path):
    """``lstat`` of ``path``, None when nothing is there; SimnumaError when the system cannot take the path."""
    try:
        return path.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise SimnumaError(f"{_named(path)}: cannot write here: {exc.strerror}") from None


def check_output_file(path, option: str = "output file", inputs=()) -> Path:
    """``path`` as a result file, checked before any work: never a link, a folder, a device or a FIFO, nor one of
    the files the command reads, ``inputs`` (``(what, path)`` pairs: ``("the board", "my.yaml")``).
    ``option`` (``-o``) names the argument in a message about the path's text."""
    path = _output_path(path, "file", option)
    for what, given in inputs:
        if _same_file(path, given):
            raise SimnumaError(f"{option} {_named(path)}: is {what} this command reads; give another path")
    info = _status(path)
    if info is None:
        _writable_place(path)
        return path
    if stat.S_ISLNK(info.st_mode):
        raise SimnumaError(f"{_named(path)}: is a symbolic link; simnuma does not replace links (give the path it points to)")
    if not stat.S_ISREG(info.st_mode):
        what = "a folder" if stat.S_ISDIR(info.st_mode) else "a device, FIFO or socket"
        raise SimnumaError(f"{_named(path)}: is {what}, not a file simnuma may replace; choose another output path")
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise SimnumaError(f"{_named(path)}: cannot write here: no permission to write in {_named(path.parent)}")
    _try_creating_in(path.parent, path)      # the new copy is written beside it, then renamed over it
    return path


def _same_file(path: Path, given) -> bool:
    """Whether ``path`` and ``given`` (a path, or a name that is none) are one existing file."""
    try:
        return os.path.samefile(path, str(given))
    except (OSError, ValueError):
        return False


def check_output_folder(path, option: str = "output folder") -> Path:
    """``path`` as a folder of results, checked before any work: a folder (or nothing yet), never a link.
    ``option`` (``-o``) names the argument in a message about the path's text."""
    path = _output_path(path, "folder", option)
    info = _status(path)
    if info is None:
        _writable_place(path)
        return path
    if stat.S_ISLNK(info.st_mode):
        raise SimnumaError(f"{_named(path)}: is a symbolic link; simnuma does not write through links (give the folder itself)")
    if not stat.S_ISDIR(info.st_mode):
        raise SimnumaError(f"{_named(path)}: exists and is not a folder; choose another output folder")
    if not os.access(path, os.W_OK | os.X_OK):
        raise SimnumaError(f"{_named(path)}: cannot write here: no permission to write in it")
    _try_creating_in(path, path)
    return path


class OutputFolder:
    """A folder of results written all or nothing, by one run at a time.

    ``with OutputFolder(path) as staging:`` checks ``path`` (at once, before the
    work), creates it if needed and locks it (a second run into the same folder
    stops with an error instead of mixing its files with this one's), and gives
    a hidden staging folder inside it to write into.  When the block ends
    without an error every staged file moves into ``path`` (each by a rename);
    otherwise, an interrupt included, the staging folder is removed and
    ``path`` keeps exactly what it held before (a folder the run created is
    removed again).  A run killed outright leaves
    its staging folder behind: the next run into the folder removes it.  The
    lock is released by the system when a process ends, however it ends.

    A successful run also leaves the folder as that ``command`` alone would
    have: the files its previous run there wrote and this one did not (a
    figure of a parameter no longer swept, a Parquet table where pyarrow has
    gone) are removed.  Each run records the files it moved in, with a digest
    of each, in the folder's :data:`MANIFEST_NAME`, per command; only a file
    so recorded and still byte for byte as that run wrote it is ever removed,
    so the user's own files, a recorded file since changed, what another
    command wrote and anything not staged (a sweep's ``cache`` folder) stay.
    """

    def __init__(self, path, option: str = "output folder", command: str = ""):
        self.path = check_output_folder(path, option)
        self.command = command
        self.staging: Path | None = None
        self._lock: int | None = None
        self._created = False
        self.removed: list = []   # the names of the previous run's files this run removed (_forget_previous_run)

    def __enter__(self) -> Path:
        try:
            self._created = not self.path.exists()
            self.path.mkdir(parents=True, exist_ok=True)
            self._lock = os.open(self.path, os.O_RDONLY)
        except OSError as exc:
            raise SimnumaError(f"{_named(self.path)}: cannot create the output folder: {exc.strerror}") from None
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._unlock()
            raise SimnumaError(f"{_named(self.path)}: another simnuma run is writing into this folder; wait for it or"
                               " choose another output folder") from None
        for stale in self.path.glob(STAGING_PREFIX + "*"):
            shutil.rmtree(stale, ignore_errors=True)    # left by a run that was killed
        self.staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=self.path))
        return self.staging

    def __exit__(self, exc_type, exc, tb) -> None:
        staging = self.staging
        try:
            if exc_type is None and staging is not None:
                items = sorted(staging.iterdir())
                written = {item.name: _digest(item) for item in items}
                for item in items:
                    os.replace(item, self.path / item.name)
                self._forget_previous_run(written)
        finally:
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)
            if exc_type is not None and self._created:
                try:
                    self.path.rmdir()     # a failed run leaves no new, empty folder behind
                except OSError:
                    pass
            self._unlock()

    def _forget_previous_run(self, written: dict) -> None:
        """Remove what this command's previous run wrote here and this run did not (each file only while it is as
        that run wrote it), then record ``written`` (``{name: digest}``) as this command's run."""
        manifest = self.path / MANIFEST_NAME
        runs = _read_manifest(manifest)
        for name, digest in runs.pop(self.command, {}).items():
            if name not in written and digest is not None and _digest(self.path / name) == digest:
                with contextlib.suppress(OSError):
                    os.unlink(self.path / name)
                    self.removed.append(name)
        for files in runs.values():     # a file this run wrote is this command's now
            for name in written:
                files.pop(name, None)
        runs[self.command] = {name: digest for name, digest in written.items() if digest is not None}
        doc = {"format": MANIFEST_FORMAT, "about": "the files each simnuma command's last run into this folder"
               " wrote (sha256); the next run of a command removes those of its files it does not write again",
               "runs": {command: files for command, files in sorted(runs.items()) if files}}
        with contextlib.suppress(SimnumaError):     # without a record the next run only removes nothing
            write_json(manifest, doc)

    def removed_note(self) -> str:
        """What a command prints of the files it removed ('' where it removed none)."""
        if not self.removed:
            return ""
        names = sorted(self.removed)
        return (f"note: removed {len(names)} file(s) the previous {self.command} run wrote in {self.path} and this one"
                f" did not: {', '.join(names[:6])}" + (", ..." if len(names) > 6 else ""))

    def _unlock(self) -> None:
        if self._lock is not None:
            os.close(self._lock)     # closing the descriptor releases the lock
            self._lock = None


def _digest(path: Path) -> str | None:
    """The sha256 of the regular file at ``path`` (never followed through a link); None for anything else."""
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return None
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    except OSError:
        return None


def _read_manifest(path: Path) -> dict:
    """``{command: {name: digest}}`` from an output folder's record; empty when there is none or it is not one
    simnuma wrote (a name that is not a plain file name of the folder is ignored)."""
    try:
        doc = json.loads(read_input(path)) if path_kind(path) == "file" and not path.is_symlink() else None
    except (UnreadableInput, ValueError):
        return {}
    if not isinstance(doc, dict) or doc.get("format") != MANIFEST_FORMAT or not isinstance(doc.get("runs"), dict):
        return {}
    runs: dict = {}
    for command, files in doc["runs"].items():
        if isinstance(command, str) and isinstance(files, dict):
            runs[command] = {name: digest for name, digest in files.items()
                             if isinstance(name, str) and isinstance(digest, str) and name not in ("", ".", "..")
                             and "/" not in name and "\0" not in name and name != MANIFEST_NAME
                             and not name.startswith(STAGING_PREFIX)}
    return runs


def write_atomic(path, content) -> Path:
    """Write ``content`` (str or bytes) to ``path`` atomically; return the path.

    A path that is a symbolic link, a folder, a device or a FIFO is refused
    (:func:`check_output_file`), never replaced.
    """
    path = check_output_file(path)
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise SimnumaError(f"{_named(path)}: cannot write: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual mode
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise SimnumaError(f"{_named(path)}: cannot write: {exc.strerror}") from None
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_json(path, obj) -> Path:
    return write_atomic(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")


LOG_INTERVAL_S = 60.0   # away from a terminal, a long run says how far it is at most this often


def progress(iterable=None, total=None, desc=None, stream=None, bar_format=None):
    """A tqdm progress bar on a terminal (``bar_format``: tqdm's, default its own).  Elsewhere (a log file, a
    batch job) a line every ``LOG_INTERVAL_S`` seconds once the run has lasted that long, and its last line at
    the end; nothing for a shorter run."""
    from tqdm import tqdm

    stream = stream or sys.stderr
    if hasattr(stream, "isatty") and stream.isatty():
        return tqdm(iterable, total=total, desc=desc, file=stream, leave=False, dynamic_ncols=True,
                    bar_format=bar_format)
    return _log_lines(tqdm)(iterable, total=total, desc=desc, file=stream, leave=True, ascii=True,
                            mininterval=LOG_INTERVAL_S, bar_format=bar_format)


def _log_lines(tqdm: Any) -> Any:
    """tqdm writing whole lines now and then rather than redrawing one in place (which a log file keeps as one
    line of carriage returns)."""

    class LogLines(tqdm):   # tqdm is imported when a bar is made
        printed = False

        def display(self, msg=None, pos=None):
            if msg is None and self.n and (self.printed or self._time() - self.start_t >= LOG_INTERVAL_S):
                self.fp.write(self.__str__() + "\n")
                self.fp.flush()
                self.printed = True
            return True

        def close(self):
            if getattr(self, "disable", True):
                return
            self.display()                 # the last line, where the run lasted long enough to have any
            self.disable = True            # what tqdm's own close does, without redrawing the line in place
            self._decr_instances(self)

    return LogLines
