"""Fixtures of the benchmark tests: a private build cache and the benchmark compiled once per session."""
from __future__ import annotations

from pathlib import Path

import pytest

from simnuma.bench.build import build_binary, find_compiler
from simnuma.errors import BenchError


@pytest.fixture(scope="session")
def bench_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("xdg-cache")


@pytest.fixture(autouse=True)
def isolated_cache(bench_cache, monkeypatch):
    """Builds go to a cache private to the test session, never the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(bench_cache))


@pytest.fixture(scope="session")
def compiler() -> list:
    try:
        return find_compiler()
    except BenchError as exc:
        pytest.skip(f"the benchmark tests need a C compiler: {exc}")


@pytest.fixture(scope="session")
def stride(bench_cache, compiler) -> Path:
    """The benchmark, compiled once per session into the private cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(bench_cache))
        return build_binary().path
