"""Finding a study: a file by path, or a bundled study by name (with a suggestion when the name is near one)."""
from __future__ import annotations

from pathlib import Path

from .. import bundled
from ..errors import StudyError, closest, shown
from ..fileio import UnreadableInput, path_kind, read_input

__all__ = ["bundled_studies", "study_text"]


def bundled_studies() -> list:
    """Names of the bundled studies, in the order ``simnuma reproduce`` runs them."""
    return bundled.names("studies")


def study_text(name_or_path: str) -> tuple:
    """``(text, shown name, folder for relative board paths)`` of a study by path or bundled name."""
    text = str(name_or_path)
    path = Path(text)
    if path.suffix in (".yaml", ".yml") or "/" in text or path_kind(text) == "file":
        try:
            return read_input(path), shown(text), path.resolve().parent
        except UnreadableInput as exc:
            reason = str(exc)
            raise StudyError(f"{shown(text)}: {reason}" if reason.startswith("not ") else
                             f"{shown(text)}: cannot read study file: {reason}") from None
    names = bundled_studies()
    if text in names:
        found = bundled.read("studies", text)
        return found[0], found[1], None
    near = closest(text, names)
    hint = f" (did you mean {near!r}?)" if near else ""
    raise StudyError(f"unknown study {text!r}{hint}; bundled studies: {', '.join(names) or 'none'}")
