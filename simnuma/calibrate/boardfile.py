"""The calibrated board as YAML: fitted values in place with their comments, the calibration's
comment block and its machine-readable record."""
from __future__ import annotations

import json
import re
from typing import Any

from .. import __version__
from ..errors import CalibrationError, TopologyError
from ..topology import parse_topology
from ..topology.params import declared
from ..topology.schema import LINK_RATE_KEYS
from .parameters import _BLOCK_END, _BLOCK_START, RECORD_PREFIX
from .results import Calibration, ParameterFit
from .rows import number_text

# ------------------------------------------------------------------ the calibrated board file

def calibrated_yaml(calibration: Calibration, original_text: str | None = None, sources=None, warn=None) -> str:
    """The calibrated board as YAML text, with a comment block saying what was fitted to what.

    With the board's ``original_text`` the fitted values are substituted in
    place (every other line and comment kept; the comment of a fitted value
    says so; a node's or link's own value of a parameter fitted for all of
    them, which the fit dropped, removed); if that is not possible the board
    is written afresh, and ``warn`` (a callable taking a message) is told so.
    ``sources`` names the measurement files as the comments should show
    them (default: as they were read).
    """
    shown = list(sources) if sources else list(calibration.data.files)
    text = _edit_in_place(original_text, calibration, ", ".join(shown)) if original_text is not None else None
    if text is None:
        if original_text is not None and warn is not None:
            warn("the calibrated board could not be written over the original's text, so it is written afresh:"
                 " the original's comments are not kept")
        text = calibration.topology.to_yaml()
    text = _insert_block(_remove_block(text), _comment_block(calibration, shown))
    if parse_topology(text, "<calibrated>") != calibration.topology:
        raise RuntimeError("the calibrated board does not read back as fitted")
    return text


def _comment_block(cal: Calibration, shown: list) -> list:
    lines = [f"{_BLOCK_START} ({cal.date}, simnuma {__version__})",
             f"# fitted to {', '.join(shown)}: {cal.data.machine.description}",
             f"# cases ({len(cal.cases)}): " + "; ".join(c.name for c in cal.cases)]
    for p in cal.parameters:
        if p.identified:
            line = (f"#   {p.param.name} = {p.param.format(p.value)} (95%: {p.interval_text()};"
                    f" prior {p.param.format(p.prior)})")
            if p.at_bound:
                line += "; at a bound"
            if p.partner:
                line += f"; strongest correlation {p.partner_text()}"
            lines.append(line)
        elif p.value is not None and p.value != p.prior:
            lines.append(f"#   {p.param.name} set to {p.param.format(p.value)}: not identified ({p.note})")
        else:
            lines.append(_kept_line(p, cal))
    lines.append("# measured -> fitted (residual):")
    for r in cal.rows:
        lines.append(f"#   {r.measurement.case.name} {r.measurement.label}: {number_text(r.measurement.value)} ->"
                     f" {number_text(r.fitted)} ({r.residual_percent:+.1f}%)")
    lines.append(f"# mean |residual| {cal.mean_abs_residual_percent:.1f}%, worst {cal.worst.residual_percent:+.1f}%")
    lines += [f"# left out: {m.key}: {why}" for m, why in cal.left_out]
    lines += [f"# warning: {w}" for w in cal.warnings]
    record = dict(cal.record(), measurements=shown)
    lines.append(RECORD_PREFIX + json.dumps(record, sort_keys=True, ensure_ascii=False))
    lines.append(_BLOCK_END)
    return lines


def _kept_line(p: ParameterFit, cal: Calibration) -> str:
    """The comment of a parameter not identified and left as it was: at its value, or, where the board does
    not give it and it follows another parameter that the fit moved (``probe.occupancy``), as that one."""
    now = p.param.prior(cal.topology)
    follows = declared(p.param.base)[0].default_from
    if follows and now is not None and p.prior is not None and now != p.prior:
        return (f"#   {p.param.name} not identified ({p.note}); not given, so as {follows}:"
                f" {p.param.format(now)}")
    kept = "-" if p.prior is None else p.param.format(p.prior)
    return f"#   {p.param.name} kept at {kept}: not identified ({p.note})"


def _remove_block(text: str) -> str:
    lines = text.splitlines(keepends=True)
    out, inside = [], False
    for line in lines:
        if line.startswith(_BLOCK_START):
            inside = True
            continue
        if inside:
            if line.startswith(_BLOCK_END):
                inside = False
            continue
        out.append(line)
    return "".join(out)


def _insert_block(text: str, block: list) -> str:
    """Put the block after the file's leading comment lines (its header), before the first key."""
    lines = text.splitlines(keepends=True)
    at = 0
    while at < len(lines) and lines[at].lstrip().startswith("#"):
        at += 1
    return "".join(lines[:at]) + "".join(line + "\n" for line in block) + "".join(lines[at:])


def read_calibration_record(text: str) -> dict | None:
    """The ``# simnuma-calibration: {...}`` record of a calibrated board's text, or None."""
    for line in text.splitlines():
        if line.startswith(RECORD_PREFIX):
            try:
                record = json.loads(line[len(RECORD_PREFIX):])
            except json.JSONDecodeError:
                raise CalibrationError("the board's simnuma-calibration comment is malformed JSON") from None
            if not isinstance(record, dict) or not isinstance(record.get("cases"), list):
                raise CalibrationError("the board's simnuma-calibration comment lists no cases")
            return record
    return None


def _edit_in_place(text: str, cal: Calibration, shown: str) -> str | None:
    """``text`` with the fitted defaults substituted and their comments updated; None if not possible."""
    import yaml

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        text = _without_overrides(text, root, cal.written)
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        inserted = _insert_missing(text, root,
                                   [p for p in cal.written if _scalar_at(root, p.param.path.split(".")) is None])
        if inserted is None:
            return None
        text = inserted
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:   # an edit this layout does not take: written afresh
        return None
    edits = {}     # start index -> (end index, new text)
    notes: dict[int, list[ParameterFit]] = {}   # line number -> [fitted parameters on it]
    others: dict[int, list[str]] = {}           # line number -> keys beside them on that line that were not fitted
    for p in cal.written:
        parts = p.param.path.split(".")
        node = _scalar_at(root, parts)
        if node is None:
            return None
        edits[node.start_mark.index] = (node.end_mark.index, str(p.param.document_value(p.value)))
        line = node.start_mark.line
        notes.setdefault(line, []).append(p)
        for key in _keys_on_line(_node_at(root, parts[:-1]), line):
            if key not in others.setdefault(line, []):
                others[line].append(key)
    for line, fitted in notes.items():
        done = {p.param.path.rsplit(".", 1)[1] for p in fitted}
        others[line] = [key for key in others[line] if key not in done]
    out = text
    for start in sorted(edits, reverse=True):
        end, new = edits[start]
        out = out[:start] + new + out[end:]
    lines = out.splitlines(keepends=True)
    original = text.splitlines()
    for line_no, fitted in notes.items():
        column = len(split_comment(original[line_no])[0])
        lines[line_no] = _with_comment(lines[line_no], fitted, shown, column, others[line_no])
    out = "".join(lines)
    try:
        if parse_topology(out, "<calibrated>") != cal.topology:
            return None
    except TopologyError:
        return None
    return out


def _insert_missing(text: str, root, params: list) -> str | None:
    """``text`` with a line for each fitted parameter the file does not set yet; None if that is not possible.

    The value goes under the deepest mapping of its path that exists: in a
    block mapping as ``key: {sub: value}`` on a new line after its last line,
    in a one-line ``{...}`` mapping as one more entry, and for a key given
    no value (``near:``) as its value.
    """
    import yaml

    inline: dict[tuple, str] = {}   # (start, end) of text -> what replaces it (one-line mappings, empty values)
    collided = False
    groups: dict[tuple[int, int], dict[str, Any]] = {}   # (line to insert after, indent) -> {first missing key: {rest: value}}
    for p in params:
        parts = p.param.path.split(".")
        depth = len(parts) - 1
        while depth > 0 and _node_at(root, parts[:depth]) is None:
            depth -= 1
        mapping = _node_at(root, parts[:depth])
        nested: dict[str, Any] = {}
        inner = nested
        for key in parts[depth:-1]:
            inner = inner.setdefault(key, {})
        inner[parts[-1]] = p.param.document_value(p.value)
        if isinstance(mapping, yaml.ScalarNode) and mapping.tag.endswith(":null") and depth > 0:
            span = (mapping.start_mark.index, mapping.end_mark.index)   # nothing, or an explicit ~ or null
            collided = collided or span in inline
            inline[span] = (" " if span[0] == span[1] else "") + _flow(nested)
            continue
        if isinstance(mapping, yaml.MappingNode) and mapping.flow_style:
            at = mapping.value[-1][1].end_mark.index if mapping.value else mapping.end_mark.index - 1
            collided = collided or (at, at) in inline
            inline[(at, at)] = (", " if mapping.value else "") + _flow(nested)[1:-1]
            continue
        if not isinstance(mapping, yaml.MappingNode) or not mapping.value:
            return None
        where = (_last_line(mapping), mapping.value[0][0].start_mark.column)
        group = groups.setdefault(where, {})
        for key in parts[depth:-1]:
            group = group.setdefault(key, {})
        group[parts[-1]] = p.param.document_value(p.value)
    if collided:
        return None   # two values into one place: not written in place
    for start, end in sorted(inline, reverse=True):
        text = text[:start] + inline[(start, end)] + text[end:]
    lines = text.splitlines(keepends=True)
    for (after, indent), entries in sorted(groups.items(), reverse=True):
        new = [" " * indent + f"{key}: {_flow(value)}\n" for key, value in entries.items()]
        lines[after + 1:after + 1] = new
    return "".join(lines)


def _without_overrides(text: str, root, written: list) -> str:
    """``text`` without the own values that the fitted parameters replaced: a fitted ``link_defaults.<field>`` drops
    every link's own, a fitted ``link_kinds.<kind>.<field>`` those of the links of that kind, a fitted
    ``defaults.<field>`` every node's (as :meth:`~simnuma.topology.Topology.with_parameters` does)."""
    import yaml

    spans = []
    for p in written:
        head, *rest = p.param.path.split(".")
        if head == "defaults":
            section, field, keep = "nodes", rest, None
        elif head == "link_defaults":
            section, field, keep = "links", rest, None
        elif head == "link_kinds":
            section, field, keep = "links", rest[1:], rest[0]
        else:
            continue
        # a link's rate is one of two spellings: a fitted bandwidth replaces either, and the fitted mapping's own other
        # spelling (signalling keys beside it, a bandwidth per direction) goes as well
        rate = section == "links" and field == ["bandwidth"]
        keys = LINK_RATE_KEYS if rate else (field[-1],)
        if rate:
            own = _node_at(root, p.param.path.split(".")[:-1])
            if isinstance(own, yaml.MappingNode):
                other = [k for k in LINK_RATE_KEYS if k != "bandwidth" or not isinstance(_node_at(own, [k]), yaml.ScalarNode)]
                spans += [span for k in other for span in _pair_spans(text, own, k)]
        entries = _node_at(root, [section])
        for entry in entries.value if isinstance(entries, yaml.SequenceNode) else ():
            if keep is not None and (_scalar_at(entry, ["kind"]) is None or _scalar_at(entry, ["kind"]).value != keep):
                continue
            parent = _node_at(entry, field[:-1])
            if isinstance(parent, yaml.MappingNode):
                spans += [span for k in keys for span in _pair_spans(text, parent, k)]
    for start, end in sorted(set(spans), reverse=True):
        text = text[:start] + text[end:]
    return text


def _pair_spans(text: str, mapping, key: str) -> list:
    """The ``[start, end)`` of the text that gives ``key`` in ``mapping`` (a one-line mapping's entry with its comma, a
    block mapping's whole lines)."""
    import yaml

    pairs = mapping.value
    for i, (k, v) in enumerate(pairs):
        if not (hasattr(k, "value") and k.value == key):
            continue
        if mapping.flow_style:
            if i > 0:
                return [(pairs[i - 1][1].end_mark.index, v.end_mark.index)]
            if len(pairs) > 1:
                return [(k.start_mark.index, pairs[1][0].start_mark.index)]
            return [(k.start_mark.index, v.end_mark.index)]
        start = text.rfind("\n", 0, k.start_mark.index) + 1
        if text[start:k.start_mark.index].strip():
            return []   # the key shares its line with what comes before it: left alone (the read-back check decides)
        last = _last_line(v) if isinstance(v, (yaml.MappingNode, yaml.SequenceNode)) else v.end_mark.line
        end = start
        for _ in range(last - k.start_mark.line + 1):   # through the end of the value's last line
            end = text.find("\n", end)
            end = len(text) if end < 0 else end + 1
        return [(start, end)]
    return []


def _flow(value) -> str:
    """A value (a nested dict of scalars) in YAML flow style."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    return str(value)


def _last_line(node) -> int:
    """The last line (0-based) a YAML node's text occupies."""
    import yaml

    if isinstance(node, yaml.MappingNode) and node.value and not node.flow_style:
        return max(_last_line(v) for _, v in node.value)
    if isinstance(node, yaml.SequenceNode) and node.value and not node.flow_style:
        return max(_last_line(v) for v in node.value)
    end = node.end_mark
    return end.line - 1 if end.column == 0 and end.line > node.start_mark.line else end.line


def _node_at(root, parts):
    """The YAML node at the key path ``parts`` (None when there is none)."""
    import yaml

    node = root
    for part in parts:
        if not isinstance(node, yaml.MappingNode):
            return None
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == part:
                node = value
                break
        else:
            return None
    return node


def _scalar_at(root, parts):
    import yaml

    node = _node_at(root, parts)
    return node if isinstance(node, yaml.ScalarNode) else None


def _keys_on_line(mapping, line: int) -> list:
    """Keys of ``mapping`` whose values are scalars written on ``line``."""
    import yaml

    if not isinstance(mapping, yaml.MappingNode):
        return []
    return [key.value for key, value in mapping.value
            if isinstance(key, yaml.ScalarNode) and isinstance(value, yaml.ScalarNode)
            and value.start_mark.line == line]


def _with_comment(line: str, fitted: list, shown: str, column: int, unfitted=()) -> str:
    """``line`` whose comment says the values on it were fitted (replacing an 'assumption' comment).

    ``unfitted`` names other values on the line that were not fitted (they
    stay assumptions).  The comment stays at ``column`` (where it was) when
    the code still fits before it.
    """
    body, newline = (line[:-1], "\n") if line.endswith("\n") else (line, "")
    code, comment = split_comment(body)
    if comment is not None:
        comment = _FITTED_NOTE.sub("", comment).strip() or None  # a previous calibration's note goes
    replace_comment = comment is None or _is_assumption(comment)
    if not any(p.identified for p in fitted):    # held where the measurements allow, not fitted
        what = f"{fitted[0].param.description}, set" if replace_comment and len(fitted) == 1 else "set"
        values = "; ".join(f"{p.param.name} not identified: {p.note}" for p in fitted)
        note = f"{what} by simnuma calibrate on {shown} ({values})"
        new_comment = note if replace_comment else f"{comment.rstrip()}; {note}"
        code = code.rstrip()
        pad = " " * max(2, column - len(code)) if comment is not None else "  "
        return f"{code}{pad}# {new_comment}{newline}"
    moved = [p for p in fitted if not p.identified]
    fitted = [p for p in fitted if p.identified]
    windows = all(p.param.name.startswith("core.window.") for p in fitted)
    if len(fitted) == 1:
        p = fitted[0]
        what = f"{p.param.description}, fitted" if replace_comment else "fitted"
    else:
        what = ("outstanding lines per core (miss buffers and prefetch), fitted" if windows and replace_comment
                else "fitted")
    if windows:
        values = ", ".join(f"{p.param.op}: {int(p.value)}" + (f" (95%: {p.interval_text()})" if p.interval
                                                                and p.interval[1] > p.interval[0] else "")
                           for p in fitted) + "; best of a grid search"
    elif len(fitted) == 1:
        values = f"{fitted[0].param.format(fitted[0].value)}, 95%: {fitted[0].interval_text()}"
    else:
        values = ", ".join(f"{p.param.name}: {p.param.format(p.value)} (95%: {p.interval_text()})" for p in fitted)
    note = f"{what} by simnuma calibrate on {shown} ({values})"
    note += "".join(f"; {p.param.name} set, not identified: {p.note}" for p in moved)
    if unfitted and replace_comment:
        note += f"; {', '.join(unfitted)}: assumption, not fitted"
    new_comment = note if replace_comment else f"{comment.rstrip()}; {note}"
    code = code.rstrip()
    pad = " " * max(2, column - len(code)) if comment is not None else "  "
    return f"{code}{pad}# {new_comment}{newline}"


_FITTED_NOTE = re.compile(r"(?:^|;)[^;]*(?:fitted|set) by simnuma calibrate on .*$")


def split_comment(line: str):
    """``(code including the spaces before '#', comment text)``; comment None when there is none."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i], line[i + 1:].strip()
    return line, None


def _is_assumption(comment: str) -> bool:
    return comment.lower().startswith("assumption")
