"""Writing results safely and showing progress.

Results are written to a temporary file beside the target and renamed over it,
so an interrupted run never leaves a half-written file and never corrupts one
that was already there.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from .errors import SimnumaError

__all__ = ["write_atomic", "write_json", "progress"]


def write_atomic(path, content) -> Path:
    """Write ``content`` (str or bytes) to ``path`` atomically; return the path."""
    path = Path(path)
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise SimnumaError(f"{path}: cannot write: {exc.strerror}") from None
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
        raise SimnumaError(f"{path}: cannot write: {exc.strerror}") from None
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


def progress(iterable=None, total=None, desc=None, stream=None, bar_format=None):
    """A tqdm progress bar on a terminal, silent otherwise (``bar_format``: tqdm's, default its own)."""
    from tqdm import tqdm

    stream = stream or sys.stderr
    disable = not (hasattr(stream, "isatty") and stream.isatty())
    return tqdm(iterable, total=total, desc=desc, file=stream, disable=disable, leave=False,
                dynamic_ncols=True, bar_format=bar_format)
