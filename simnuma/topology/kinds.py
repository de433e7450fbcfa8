"""Link kinds: the ``link_kinds`` section of a board (named sets of link parameters) and a link's ``kind``, as the
validator reads them (a link takes its own values, then its kind's, then ``link_defaults``')."""
from __future__ import annotations

from .checker import _Checker
from .helpers import _gives
from .schema import LINK_KIND_NAME, LINK_RATE_KEYS, LINK_SCHEMA, closest


class _LinkKinds(_Checker):
    """The checker's reading of link kinds, which the validator adds to its own."""

    def link_kinds(self, data) -> dict:
        """``{name: its parameters}`` of the ``link_kinds`` section (links of one kind share them)."""
        raw = data.get("link_kinds")
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            self.err(("link_kinds",), "expected a mapping of kind names to link parameters, such as"
                                      " {socket: {latency: 40 ns}}")
            return {}
        kinds = {}
        for name, params in raw.items():
            path = ("link_kinds", name)
            if not isinstance(name, str) or not LINK_KIND_NAME.match(name):
                quote = " (quote it: YAML reads on, off, yes, no as true or false)" if isinstance(name, bool) else ""
                self.err(path, f"expected a kind name (a letter, then letters, digits, '-' or '_'), got {name!r}{quote}")
                continue
            if params is None:
                params = {}
            if not isinstance(params, dict):
                self.err(path, f"expected a mapping of link parameters such as {{latency: 40 ns}}, got {params!r}")
                continue
            self.check_schema(params, LINK_SCHEMA, path)
            kinds[name] = params
        return kinds

    def link_kind(self, entry, path, kinds):
        """``(name, parameters)`` of the kind ``entry`` names; ``(None, {})`` when it names none, or one that is
        not in ``link_kinds`` (reported)."""
        name = entry.get("kind")
        if name is None:
            return None, {}
        if isinstance(name, str) and name in kinds:
            return name, kinds[name]
        if not isinstance(name, str):
            self.err(path + ("kind",), f"expected the name of a link kind, got {name!r}")
            return None, {}
        if not self.has_problem_under(("link_kinds",)):
            near = closest(name, kinds)
            known = ", ".join(map(str, kinds)) if kinds else "none (the board has no link_kinds)"
            self.err(path + ("kind",), f"unknown link kind {name!r}" + (f" (did you mean {near!r}?)" if near else "")
                     + f"; kinds are {known}")
        return None, {}


def _over_kind(kind: dict, own: dict) -> dict:
    """A link's own parameters over those of its kind, mapping by mapping; a link that gives its own rate
    (``bandwidth`` or a signalling key) takes none of its kind's."""
    if not kind:
        return own
    out = {k: v for k, v in kind.items() if not (_gives(own, *LINK_RATE_KEYS) and k in LINK_RATE_KEYS)}
    for key, value in own.items():
        if value is None:
            continue
        below = out.get(key)
        out[key] = _over_kind(below, value) if isinstance(below, dict) and isinstance(value, dict) else value
    return out
