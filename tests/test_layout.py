"""The layout shows the architecture: small modules, packages that say what they hold, thin commands."""
import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "simnuma"
MOST_LINES = 500
MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_is_over_500_lines(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MOST_LINES


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("__init__.py")), ids=lambda p: str(p.parent.name))
def test_every_package_says_what_lives_in_it(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    assert doc and len(doc) > 40


@pytest.mark.parametrize("path", sorted((PACKAGE / "commands").glob("*.py")), ids=lambda p: p.name)
def test_command_modules_hold_argparse_and_printing_only(path):
    """No simulation, table or file format is defined in a command module: they import what they run."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
    assert not classes, classes
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 250


def _module_level_names(path: Path) -> set:
    """Names a module defines at its top level (classes, functions, assignments)."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


@pytest.mark.parametrize("name", ["Case", "parse_case", "baseline_case", "LINE_BYTES", "DEFAULT_SIZE_BYTES",
                                  "LOADS_GBps", "SUBSCRIPTIONS", "text_table", "board_hash"])
def test_one_idea_is_defined_in_one_place(name):
    homes = [str(p.relative_to(PACKAGE)) for p in MODULES if name in _module_level_names(p)]
    assert len(homes) == 1, f"{name} is defined in {homes}"


def test_one_process_pool():
    """Every command that runs many simulations goes through simnuma.runner."""
    users = [str(p.relative_to(PACKAGE)) for p in MODULES
             if "ProcessPoolExecutor" in p.read_text(encoding="utf-8") or "import multiprocessing" in p.read_text(
                 encoding="utf-8")]
    assert users == ["runner.py"]


@pytest.mark.parametrize("script", sorted((PACKAGE.parent / "benchmarks").glob("*.py")), ids=lambda p: p.name)
def test_every_benchmark_script_starts(script):
    """The benchmarks are not run by the tests, so their imports are checked here: --help must work."""
    import subprocess
    import sys

    if script.name == "benchutil.py" or script.name.startswith("_"):
        pytest.skip("a helper module")
    done = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
