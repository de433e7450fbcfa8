"""docs/model.md: the call-chain figures of one read and one write name code and parameters that exist.

Every ``name.attribute()`` the section mentions (a module function such as ``xbar.enter_fabric()``,
or a method such as ``LinkDirection.send()``) must be an attribute of that module of
``simnuma/model/`` or of a class defined there, and every board parameter it charges a step to
(``link.buffers.request``, ``sri.probe_queue``, ...) must be a key of the board language, so that
the figures cannot go stale silently.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import simnuma.model
from simnuma.topology.schema import LINK_SCHEMA, NODE_SCHEMA, schema_kind

MODEL_PAGE = Path(__file__).resolve().parent.parent / "docs" / "model.md"
SECTION = "## One read and one write through the blocks"
FIGURE_MODULES = ("core", "sri", "xbar", "link", "credit", "coherence", "mct", "dram", "packet", "events", "system")

_CALL = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\.([A-Za-z_]\w*)\(\)")
_PARAM = re.compile(r"(?<![\w./])(core|memory|sri|mct|xbar|probe|link)\.([A-Za-z_][\w.]*\w)(?!\w*\()")


def section() -> str:
    text = MODEL_PAGE.read_text(encoding="utf-8")
    assert SECTION in text, f"docs/model.md has no section {SECTION!r}"
    return text.split(SECTION, 1)[1].split("\n## ", 1)[0]


def model_modules() -> dict:
    names = [m.name for m in pkgutil.iter_modules(simnuma.model.__path__)]
    return {name: importlib.import_module(f"simnuma.model.{name}") for name in names}


def model_classes(modules: dict) -> dict:
    classes = {}
    for module in modules.values():
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and obj.__module__ == module.__name__:
                classes[name] = obj
    return classes


def calls(text: str) -> list:
    return sorted(set(_CALL.findall(text)))


def parameters(text: str) -> list:
    return sorted({(block, rest) for block, rest in _PARAM.findall(text) if rest != "py"})


def missing_names(text: str) -> list:
    modules = model_modules()
    classes = model_classes(modules)
    missing = []
    for owner, attribute in calls(text):
        target = modules.get(owner) or classes.get(owner)
        if target is None or not hasattr(target, attribute):
            missing.append(f"{owner}.{attribute}")
    return missing


def missing_parameters(text: str) -> list:
    missing = []
    for block, rest in parameters(text):
        schema, parts = (LINK_SCHEMA, rest.split(".")) if block == "link" else (NODE_SCHEMA, [block, *rest.split(".")])
        if schema_kind(schema, parts) is None:
            missing.append(f"{block}.{rest}")
    return missing


def test_every_function_and_method_the_figures_name_exists():
    text = section()
    assert len(calls(text)) >= 40, calls(text)
    assert not missing_names(text), f"docs/model.md names code that does not exist: {missing_names(text)}"


def test_every_parameter_the_figures_charge_is_a_board_key():
    text = section()
    assert len(parameters(text)) >= 15, parameters(text)
    assert not missing_parameters(text), f"docs/model.md names unknown parameters: {missing_parameters(text)}"


def test_the_figures_go_through_every_block_of_the_path():
    text = section()
    assert text.count("```mermaid") == 2 and "sequenceDiagram" in text
    named = {owner for owner, _ in calls(text)}
    classes = model_classes(model_modules())
    modules = {owner if owner in FIGURE_MODULES else classes[owner].__module__.rsplit(".", 1)[1]
               for owner in named if owner in FIGURE_MODULES or owner in classes}
    assert set(FIGURE_MODULES) <= modules, set(FIGURE_MODULES) - modules


@pytest.mark.parametrize("stale, kind", [("XBar.route_packet()", "name"), ("events.schedule_at()", "name"),
                                         ("NoSuchClass.send()", "name"), ("link.buffers.nop", "parameter"),
                                         ("sri.queue_depth", "parameter")])
def test_a_stale_name_is_caught(stale, kind):
    text = f"LinkDirection.send() then {stale}; core.window.r"
    found = missing_names(text) if kind == "name" else missing_parameters(text)
    assert found == [stale.removesuffix("()")]
