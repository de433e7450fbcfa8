"""docs/api.md: its example runs as written, and it documents every public name."""
import doctest
from pathlib import Path

import simnuma
import simnuma.tables
import simnuma.units

API_PAGE = Path(__file__).resolve().parent.parent / "docs" / "api.md"


def test_the_api_page_example_runs_as_written():
    failed, tried = doctest.testfile(str(API_PAGE), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert tried >= 8 and failed == 0


def test_the_api_page_names_every_public_name():
    text = API_PAGE.read_text(encoding="utf-8")
    missing = [name for name in simnuma.__all__ if f"`{name}" not in text]
    assert not missing, missing


def test_the_docstring_examples_run():
    for module in (simnuma.units, simnuma.tables):
        failed, tried = doctest.testmod(module)
        assert tried and failed == 0, module.__name__
