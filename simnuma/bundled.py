"""The bundled boards, studies and reference measurements, found by name.

They live at the top of the repository, ``topologies/``, ``experiments/`` and
``experiments/reference/``, and are installed as the data packages
``simnuma.topologies``, ``simnuma.studies`` and ``simnuma.studies.reference``
(``package-dir`` in ``pyproject.toml``), from a wheel and from an editable
install alike.  This module is the one way to reach them: through
:mod:`importlib.resources`.  When the data package is missing (simnuma run
from a source folder that was never installed) that is an error saying so,
never a silent search of other folders.
"""
from __future__ import annotations

import re
from importlib import resources

__all__ = ["KINDS", "BundledDataMissing", "folder", "names", "read"]

# kind -> (data package, its folder in the repository)
KINDS = {
    "boards": ("simnuma.topologies", "topologies"),
    "studies": ("simnuma.studies", "experiments"),
    "reference": ("simnuma.studies.reference", "experiments/reference"),
}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class BundledDataMissing(RuntimeError):
    """A data package of bundled files is not installed."""


def folder(kind: str):
    """The installed folder (a :class:`importlib.resources.abc.Traversable`) of one kind of bundled file."""
    package, where = KINDS[kind]
    try:
        root = resources.files(package)
    except ModuleNotFoundError:
        root = None
    if root is None or not root.is_dir():
        raise BundledDataMissing(f"the bundled {kind} ({where}/) are not installed as {package}: "
                                 f"install simnuma (pip install -e . in its repository, or `make test`)")
    return root


def names(kind: str) -> list:
    """Names (file stems) of the bundled files of ``kind``, sorted."""
    return sorted(p.name[:-5] for p in folder(kind).iterdir() if p.name.endswith(".yaml") and p.is_file())


def read(kind: str, name: str):
    """``(text, shown path in the repository)`` of the bundled file ``name`` of ``kind``, or None."""
    stem = name[:-5] if name.endswith(".yaml") else name
    if not _NAME.match(stem):
        return None
    entry = folder(kind) / f"{stem}.yaml"
    try:
        if not entry.is_file():
            return None
    except OSError:     # a name the system cannot take (too long): no bundled file has it
        return None
    return entry.read_text(encoding="utf-8"), f"{KINDS[kind][1]}/{stem}.yaml"
