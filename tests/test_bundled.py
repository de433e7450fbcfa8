"""The one lookup of bundled boards, studies and reference data (simnuma.bundled)."""
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
try:
    import tomllib
except ModuleNotFoundError:   # Python 3.10
    import tomli as tomllib

from simnuma import bundled

ROOT = Path(__file__).resolve().parent.parent


def test_every_kind_is_found_in_its_repository_folder_through_its_package():
    for kind, (package, where) in bundled.KINDS.items():
        on_disk = sorted(p.stem for p in (ROOT / where).glob("*.yaml"))
        assert on_disk and bundled.names(kind) == on_disk, kind


def test_pyproject_installs_each_folder_as_its_data_package():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    for package, where in bundled.KINDS.values():
        assert config["package-dir"][package] == where
        assert package in config["packages"]
        assert "*.yaml" in config["package-data"][package]


def test_a_file_is_read_with_the_path_the_repository_shows():
    text, shown = bundled.read("studies", "quartet-hops")
    assert shown == "experiments/quartet-hops.yaml"
    assert text == (ROOT / shown).read_text(encoding="utf-8")
    assert bundled.read("boards", "no-such-board") is None
    assert bundled.read("boards", "../pyproject") is None


def test_a_missing_data_package_is_an_error_not_a_search(monkeypatch):
    monkeypatch.setitem(bundled.KINDS, "boards", ("simnuma.no_such_package", "topologies"))
    with pytest.raises(bundled.BundledDataMissing, match="not installed as simnuma.no_such_package"):
        bundled.names("boards")


@pytest.mark.slow
def test_a_wheel_carries_every_bundled_file(tmp_path):
    source = tmp_path / "source"   # a clean copy: a build/ folder left in the checkout could add stale modules
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__",
                                                                 ".hypothesis", ".pytest_cache", "results", ".simnuma-cache"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(tmp_path)],
                   check=True, capture_output=True)
    (wheel,) = tmp_path.glob("simnuma-*.whl")
    inside = set(zipfile.ZipFile(wheel).namelist())
    for package, where in bundled.KINDS.values():
        for path in (ROOT / where).glob("*.yaml"):
            assert f"{package.replace('.', '/')}/{path.name}" in inside
    for module in (ROOT / "simnuma").rglob("*.py"):
        assert module.relative_to(ROOT).as_posix() in inside


def test_pyproject_lists_every_code_package():
    """setuptools installs the packages it is told of: a package missing from the list is missing from a wheel."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "simnuma").rglob("__init__.py")}
    assert on_disk <= listed, sorted(on_disk - listed)
