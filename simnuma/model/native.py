"""Which model runs: the hot modules compiled with mypyc, or the same modules as Python source.

The modules every packet goes through, and the analytic model's solver
(``COMPILED``), are compiled with mypyc when simnuma is installed on a machine
with a C compiler (``setup.py``); the compiled model gives the same results to
the last digit (it is the same code, checked by ``tests/model/test_native.py``),
several times faster (README, "Speed").  The build
records a digest of the sources it compiled (``_build.py``, written by
``setup.py``).  A compiled module is used only while every compiled module's
source still has that digest: after an edit, or with ``SIMNUMA_PURE=1`` in the
environment, all of them are loaded from their source (a compiled module calls
the others directly, so it is all or none) until the next install.

This module uses the standard library only: ``setup.py`` reads ``COMPILED``
and :func:`source_digest` from it before anything is installed.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path

__all__ = ["COMPILED", "source_digest", "source_path", "status", "install_source_finder"]

# the modules a packet or a DRAM request passes through, then the analytic model's (its inner loop, and what it
# reads of the model), named from the package's top, in the order they are digested
COMPILED = ("model.events", "model.credit", "model.packet", "model.link", "model.xbar", "model.sri", "model.mct",
            "model.dram", "model.banks", "model.coherence", "model.core", "model.pages", "model.stats", "model.ledger",
            "model.curve", "analytic.flows", "analytic.memory", "analytic.turns", "analytic.solver")
HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent   # simnuma/
PURE_VARIABLE = "SIMNUMA_PURE"


def source_path(name: str, root: Path = PACKAGE, suffix: str = ".py") -> Path:
    """Where compiled module ``name`` (``model.dram``) has its source (or, with ``suffix``, its extension)."""
    return root.joinpath(*name.split(".")).with_suffix(suffix)


def source_digest(root: Path = PACKAGE) -> str:
    """A digest of the source of every compiled module under ``root`` (a copy of the package's tree)."""
    digest = hashlib.sha256()
    for name in COMPILED:
        digest.update(name.encode())
        digest.update(source_path(name, root).read_bytes())
    return digest.hexdigest()


def _built() -> bool:
    """Whether a compiled extension sits beside each compiled module's source."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    return all(any(source_path(name, suffix=suffix).exists() for suffix in suffixes) for name in COMPILED)


def _build_digest() -> str | None:
    try:   # written by setup.py next to the extensions it built (absent from a source tree never built)
        build = importlib.import_module(f"{__package__}._build")
    except ImportError:
        return None
    return str(getattr(build, "SOURCE_DIGEST", ""))


def status() -> str:
    """``compiled``, or ``source`` and why: what ``simnuma --version`` prints after the version."""
    if not _built():
        return "source (not compiled: installed without a C compiler or mypyc)"
    if os.environ.get(PURE_VARIABLE):
        return f"source ({PURE_VARIABLE} is set)"
    if _build_digest() != source_digest():
        return "source (edited since it was compiled: reinstall to compile it again)"
    return "compiled (mypyc)"


class _SourceFinder:
    """Finds the compiled modules' Python source ahead of their extensions (a meta path finder)."""

    names = {f"{PACKAGE.name}.{name}": source_path(name) for name in COMPILED}

    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        source = cls.names.get(fullname)
        return importlib.util.spec_from_file_location(fullname, source) if source is not None else None


def install_source_finder() -> None:
    """Load the compiled modules from their source unless the build may run (see :func:`status`).

    Called by the package before it imports any of them.
    """
    if _built() and not status().startswith("compiled") and _SourceFinder not in sys.meta_path:
        sys.meta_path.insert(0, _SourceFinder)   # a finder class, as importlib allows
