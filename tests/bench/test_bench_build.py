"""Compiling the benchmark: clean under -Wall -Wextra, buildable by hand, cached by a key, clear errors."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from benchutil import assert_one_line_failure, call_cli, run_cli

from simnuma.bench import build
from simnuma.errors import BenchError


def test_compiles_without_warnings(compiler, tmp_path):
    output = tmp_path / "stride"
    done = subprocess.run([*compiler, "-std=c11", "-O2", "-pthread", "-Wall", "-Wextra", "-Werror",
                           "-o", str(output), str(build.source_path())], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_builds_by_hand_with_the_documented_command(compiler, tmp_path):
    source = tmp_path / "stride.c"
    source.write_bytes(build.source_bytes())
    done = subprocess.run([*compiler, "-O2", "-pthread", "stride.c", "-o", "stride"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    usage = subprocess.run([str(tmp_path / "stride"), "--help"], capture_output=True, text=True)
    assert usage.returncode == 0
    assert usage.stdout.startswith("usage: stride")
    assert "N.C.op.M[@RATE]" in usage.stdout


def test_second_build_comes_from_the_cache(compiler, bench_cache):
    first = build.build_binary()
    mtime = first.path.stat().st_mtime_ns
    second = build.build_binary()
    assert second.cached and second.path == first.path
    assert second.path.stat().st_mtime_ns == mtime
    assert second.path.parent == bench_cache / "simnuma"


def test_cache_key_follows_compiler_and_flags(compiler, monkeypatch):
    plain = build.planned_build()
    other_flags = build.planned_build(flags=(*build.CFLAGS, "-g"))
    monkeypatch.setenv("CC", f"{compiler[0]} -DSIMNUMA_TEST_VARIANT=1")
    other_compiler = build.planned_build()
    assert len({plain.path, other_flags.path, other_compiler.path}) == 3
    assert other_compiler.command[:2] == (compiler[0], "-DSIMNUMA_TEST_VARIANT=1")


def test_forced_rebuild_compiles_again(stride):
    again = build.build_binary(force=True)
    assert not again.cached and again.path == stride
    assert os.access(again.path, os.X_OK)
    assert not [p for p in stride.parent.iterdir() if p.name.startswith(".")]  # no temporary left behind


def test_cache_location_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert build.cache_dir() == tmp_path / "simnuma"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert build.cache_dir() == tmp_path / "home" / ".cache" / "simnuma"


def test_no_compiler_is_one_clear_error(monkeypatch, tmp_path):
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BenchError, match="no C compiler found"):
        build.find_compiler()


def test_cli_without_compiler_exits_2_with_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "CC"}
    env["PATH"] = str(tmp_path)
    done = run_cli("bench", "build", env=env)
    assert_one_line_failure(done, "no C compiler found")


def test_cc_naming_a_missing_program(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/cc -O1")
    with pytest.raises(BenchError, match=r"\$CC is '/nonexistent/cc -O1'"):
        build.find_compiler()


def test_failing_compiler_reports_its_error(monkeypatch, tmp_path):
    fake = tmp_path / "badcc"
    fake.write_text("#!/bin/sh\necho 'stride.c:1:1: error: this compiler refuses' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CC", str(fake))
    with pytest.raises(BenchError, match="failed: stride.c:1:1: error: this compiler refuses"):
        build.build_binary()


def test_print_cmd_shows_both_commands(compiler, capsys):
    code, out, err = call_cli(capsys, "bench", "build", "--print-cmd")
    assert code == 0, err
    first, second = out.splitlines()
    assert "-pthread" in first and first.endswith("stride.c")
    assert "cc -O2 -pthread" in second and "stride.c -o stride" in second


def test_build_command_prints_the_cached_binary(stride, capsys):
    code, out, err = call_cli(capsys, "bench", "build")
    assert code == 0, err
    assert out == f"{stride}\n" and err.startswith("cached: ")     # the path alone: stride=$(simnuma bench build)


def test_source_is_packaged_with_the_module():
    assert build.source_path().name == "stride.c"
    assert b'"simnuma-bench/2"' in build.source_bytes()
    assert sys.modules["simnuma.bench.build"].SOURCE_NAME == "stride.c"
