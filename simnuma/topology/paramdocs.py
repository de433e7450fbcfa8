"""The parameter tables of ``docs/topology.md``, generated from the declarations of :mod:`simnuma.topology.params`.

``python -m simnuma.topology.paramdocs`` prints them; ``python -m simnuma.topology.paramdocs --write docs/topology.md``
replaces each table between its markers.  ``tests/test_params.py`` checks the file holds exactly
what the declarations give.
"""
from __future__ import annotations

from typing import Callable

from .memparams import MEMORY_MODELS, format_dram_time
from .params import BOARD_PARAMETERS, KINDS, LINK_PARAMETERS, REQUIRED, Param, declared, options
from ..units import format_bandwidth, format_frequency, format_size, format_time

__all__ = ["TABLES", "markdown_table", "markdown_tables", "rewrite_tables", "main"]


_FORMATS: dict[str, Callable[..., str]] = {
    "time": format_time, "bandwidth": format_bandwidth, "frequency": format_frequency, "size": format_size,
    "dram_time": format_dram_time}
# the tables docs/topology.md holds: title -> which parameters
TABLES = (
    ("node", lambda p: p.scope == "node" and not p.name.startswith("memory.dram.")),
    ("dram", lambda p: p.name.startswith("memory.dram.")),
    ("link", lambda p: p.scope == "link"),
)
_BEGIN = ("<!-- parameter table '{}': generated from simnuma/topology/params.py by python -m simnuma.topology.paramdocs"
          " --write docs/topology.md; do not edit -->")
_END = "<!-- end of parameter table '{}' -->"


def _value_text(kind: str, value) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"`{value}`"
    return _FORMATS[kind](value) if kind in _FORMATS else str(value)


def _key_text(p: Param) -> str:
    if not p.keys:
        return f"`{p.path}`"
    return f"`{p.path}.{p.keys[0]}`, " + ", ".join(f"`.{k}`" for k in p.keys[1:])


def _default_text(p: Param) -> str:
    if p.default_doc:
        return p.default_doc
    models = f" for {options(p.models)}" if p.models != MEMORY_MODELS and p.scope == "node" else ""
    if p.either:
        main = declared(p.either)[0].path
        rest = [q.path for q in LINK_PARAMETERS if q.either == p.either and q.path != main]
        return f"a rate is required: `{main}`, or {options(rest, 'and')}"
    if p.needed_if:
        return f"required{models} when `{p.needed_if[0]}` is `{p.needed_if[1]}`"
    if p.default_from:
        return f"as `{declared(p.default_from)[0].path}`"
    if p.default is REQUIRED:
        return "required" + models
    return _value_text(p.kind, p.default)


def _fit_text(p: Param) -> str:
    fit = p.fit
    if fit is None:
        return ""
    unit = f" {p.unit_text}" if p.unit_text else ""

    def bounds(low, high):
        return f"{low:g}..{high:g}{unit}"
    text = bounds(fit.low, fit.high)
    for model, variant in fit.variants:
        low, high = variant.get("low", fit.low), variant.get("high", fit.high)
        if (low, high) != (fit.low, fit.high):
            text += f"; `{model}` {bounds(low, high)}"
    name = f"{p.name}.<key>" if p.keys else p.name
    return f"{text} (`--fit {name}`)"


def _kind_text(p: Param) -> str:
    kind = KINDS[p.kind].label
    return f"{kind} ({p.unit})" if p.unit and not KINDS[p.kind].unit else kind


def markdown_table(title: str) -> str:
    """One of the parameter tables of docs/topology.md, with the markers around it."""
    wanted = dict(TABLES)[title]
    rows = ["| key | kind | when not given | meaning | calibration range |", "|---|---|---|---|---|"]
    for p in BOARD_PARAMETERS:
        if wanted(p):
            rows.append(f"| {_key_text(p)} | {_kind_text(p)} | {_default_text(p)} | {p.doc} | {_fit_text(p)} |")
    return "\n".join([_BEGIN.format(title), *rows, _END.format(title)])


def markdown_tables() -> dict:
    """Every parameter table of docs/topology.md, by title."""
    return {title: markdown_table(title) for title, _ in TABLES}


def rewrite_tables(text: str) -> str:
    """``text`` (docs/topology.md) with every generated table replaced by what the declarations give."""
    for title, table in markdown_tables().items():
        begin, end = _BEGIN.format(title), _END.format(title)
        start, stop = text.find(begin), text.find(end)
        if start < 0 or stop < start:
            raise ValueError(f"no parameter table {title!r} (its markers) in the text")
        text = text[:start] + table + text[stop + len(end):]
    return text


def main(argv=None) -> int:
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="python -m simnuma.topology.paramdocs", description="the board parameter tables")
    parser.add_argument("--write", metavar="FILE", help="rewrite the tables in FILE (docs/topology.md) in place")
    args = parser.parse_args(argv)
    if args.write:
        path = Path(args.write)
        path.write_text(rewrite_tables(path.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print("\n\n".join(markdown_tables().values()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
