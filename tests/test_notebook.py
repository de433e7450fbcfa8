"""The teaching notebook (docs/teaching.ipynb) runs top to bottom, and its tables render."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parent.parent / "docs" / "teaching.ipynb"


def _render(value):
    """What Jupyter would show for a cell's last expression: HTML where the object has it."""
    if hasattr(value, "_repr_html_"):
        html = value._repr_html_()
        assert "<table" in html
        return html
    return repr(value)


def test_the_teaching_notebook_runs_top_to_bottom(monkeypatch, tmp_path):
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert nb["nbformat"] == 4
    namespace: dict = {"__name__": "__notebook__"}
    shown = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        body, _, last = source.rstrip().rpartition("\n")
        try:   # as Jupyter does: the last line, if it is an expression, is what the cell shows
            compile(last, "<cell>", "eval")
        except SyntaxError:
            body, last = source, ""
        exec(compile(body, "<cell>", "exec"), namespace)
        if last:
            shown.append(_render(eval(compile(last, "<cell>", "eval"), namespace)))
    hops = namespace["hops"]
    times = [hops[c].thread(c).percent_of_local_read for c in ("0.0.r.0", "0.0.r.1", "0.0.r.3")]
    assert times[0] < times[1] < times[2]
    assert Path(namespace["trace_file"]).stat().st_size > 0
    assert sum("<table" in s for s in shown) >= 4
    answers = next("".join(c["source"]) for c in nb["cells"] if "".join(c["source"]).startswith("## Answers"))
    crossfire, pairs, x6440 = namespace["crossfire"], namespace["local_pairs"], namespace["rows"]
    quoted = [f"{t:.1f}%" for t in times[1:]]
    quoted += [f"{crossfire['0.0.w.1 1.0.w.0'].thread('0.0.w.1').percent_of_local_read:.1f}%",
               f"{crossfire['0.0.w.1 1.0.w.3'].thread('0.0.w.1').percent_of_local_read:.1f}%",
               f"{pairs['0.0.w.0 0.1.w.0'].thread('0.0.w.0').percent_of_local_read:.1f}%",
               f"{pairs['0.0.r.0 0.1.r.0'].thread('0.0.r.0').percent_of_local_read:.1f}%"]
    quoted += [f"{row['GB/s']:.2f} GB/s" if row["board"] == "probe filter" else f"{row['GB/s']:.2f}" for row in x6440]
    missing = [q for q in quoted if q not in answers]
    assert not missing, f"the answers no longer quote what the cells give: {missing}"
