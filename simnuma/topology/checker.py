"""The generic part of board checking: problems with their lines, keys against a schema, values
of each kind, and fields resolved from defaults and overrides."""
from __future__ import annotations

from .schema import (
    LINK_RATE_KEYS,
    LINK_SCHEMA,
    check_value,
    closest,
    suggest,
)
from ..yamlsrc import Source, path_text
from .helpers import (
    _bandwidth_pair,
    _gives,
    _optional_below,
    _value_or_none,
)

# ---------------------------------------------------------------- validation


class _Checker:
    """Collects problems of one board source; checks keys, values and inherited fields."""

    def __init__(self, src: Source):
        self.src = src
        self.problems: list = list(src.problems)
        self.missing: dict = {}  # (scope, field path) -> [(owner path, owner name, another place to give it)]
        self.misspelt: set = set()  # key paths a "did you mean" pointed at
        self.bad_link_ends = False
        self.bad_node_ids = False   # a node without a usable id was reported: a reference to a missing id follows from it

    def err(self, path, message):
        problem = self.src.problem(tuple(path), message)
        if problem.path not in self.src.unreadable:    # a value YAML could not read is reported once, as that
            self.problems.append(problem)

    def has_problem_under(self, path) -> bool:
        """Whether a problem was already reported at ``path`` or inside it."""
        prefix = path_text(tuple(path))
        return any(p.path == prefix or p.path.startswith((prefix + ".", prefix + "["))
                   for p in self.problems)

    # -- generic helpers
    def check_keys(self, mapping, valid, path) -> bool:
        if not isinstance(mapping, dict):
            self.err(path, f"expected a mapping, got {mapping!r}")
            return False
        for key in mapping:
            if key not in valid:
                self.err(tuple(path) + (key,), suggest(key, valid))
                near = closest(key, valid)
                if near is not None:
                    self.misspelt.add(tuple(path) + (near,))
        return True

    def check_schema(self, mapping, schema, path, extra=()):
        """Check keys and values of a (possibly partial) parameter mapping.

        ``extra`` keys are allowed too and left to the caller to check.
        """
        if not self.check_keys(mapping, tuple(extra) + tuple(schema), path):
            return
        if schema is LINK_SCHEMA and _gives(mapping, "bandwidth") and _gives(mapping, *LINK_RATE_KEYS[1:]):
            self.err(tuple(path) + ("bandwidth",),
                     "give either 'bandwidth' or 'width_bits'/'clock'/'ddr' here, not both")
        for key, value in mapping.items():
            if key not in schema or value is None:
                continue  # unknown keys are reported above; null means "not given"
            kind = schema[key]
            sub = tuple(path) + (key,)
            if isinstance(kind, dict):
                self.check_schema(value, kind, sub)
            elif kind == "bandwidth_spec":
                self.check_bandwidth_spec(value, sub)
            else:
                self.check_leaf(kind, value, sub)

    def check_leaf(self, kind, value, path):
        try:
            check_value(kind, value)
        except ValueError as exc:
            self.err(path, str(exc))

    def check_bandwidth_spec(self, value, path):
        if not isinstance(value, dict):
            self.check_leaf("bandwidth", value, path)
            return
        if not self.check_keys(value, ("a_to_b", "b_to_a"), path):
            return
        for key in ("a_to_b", "b_to_a"):
            if key not in value:
                self.err(path, f"missing {key!r} (a per-direction bandwidth needs both directions)")
            else:
                self.check_leaf("bandwidth", value[key], tuple(path) + (key,))

    def resolve(self, base, override, schema, path, owner, scope, optional=frozenset(), also=""):
        """Merge ``override`` over ``base`` into internal values (None where invalid).

        Values are checked by ``check_schema``; here a leaf that neither gives
        is recorded as missing, unless it or an enclosing mapping is in
        ``optional`` (dotted paths from the schema's root) or its enclosing
        mapping is itself broken.  ``also`` names another place the owner may
        take it from (a link's kind: ``link_kinds.socket``).
        """
        out = {}
        broken = (base is not None and not isinstance(base, dict)) or \
                 (override is not None and not isinstance(override, dict))
        base = base if isinstance(base, dict) else {}
        override = override if isinstance(override, dict) else {}
        for key, kind in schema.items():
            b, o = base.get(key), override.get(key)
            if isinstance(kind, dict):
                sub_optional = _optional_below(optional, key)
                out[key] = self.resolve(b, o, kind, tuple(path) + (key,), owner,
                                        tuple(scope) + (key,), sub_optional, also)
                continue
            value = o if o is not None else b
            if value is None:
                if key not in optional and "" not in optional and not broken:
                    self.missing.setdefault((scope[0], tuple(scope[1:]) + (key,)), []).append(
                        (tuple(path) + (key,), owner, also))
                out[key] = None
            elif kind == "bandwidth_spec":
                out[key] = _bandwidth_pair(value)
            else:
                out[key] = _value_or_none(kind, value)
        return out

    def under_misspelt(self, path: tuple) -> bool:
        """Whether ``path`` is, or is inside, a key that a "did you mean" already pointed at."""
        return any(path[:k] in self.misspelt for k in range(1, len(path) + 1))

    def report_missing(self, scope: str, count: int, what: str):
        """One problem per field missing everywhere, else one per owner lacking it."""
        for (sc, field), owners in sorted(self.missing.items(), key=lambda kv: str(kv[0])):
            if sc != scope or self.under_misspelt((scope,) + field):
                continue
            owners = [entry for entry in owners if not self.under_misspelt(entry[0])]
            if len(owners) == count and count > 1:
                self.err((scope,) + field, f"missing: every {what} needs it (set it here or on each {what})")
            else:
                for path, owner, also in owners:
                    self.err(path, f"missing for {owner} (set it in {scope}{f', in {also}' if also else ''} or on the"
                                   f" {what})")

    # -- the document
