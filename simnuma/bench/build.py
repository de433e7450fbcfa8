"""Compiling the native stride benchmark on first use.

The C source ships inside the package (``simnuma/bench/stride.c``).  It is
compiled with ``$CC`` (else the first of ``cc``, ``gcc``, ``clang`` found on
PATH) into a per-user cache, ``$XDG_CACHE_HOME/simnuma`` or
``~/.cache/simnuma``.  The binary's name carries a hash of the source, the
compiler and the flags: an unchanged setup reuses the binary, a changed one
builds anew.  Builds go to a temporary name and are renamed into place, so
concurrent first uses never see a half-written binary.
"""
from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import BenchError

__all__ = [
    "CFLAGS",
    "COMPILERS",
    "Build",
    "source_bytes",
    "source_path",
    "planned_build",
    "find_compiler",
    "cache_dir",
    "compile_command",
    "build_binary",
    "binary_path",
    "manual_build_command",
]

SOURCE_NAME = "stride.c"
CFLAGS = ("-std=c11", "-O2", "-pthread", "-Wall", "-Wextra")
COMPILERS = ("cc", "gcc", "clang")


@dataclass(frozen=True)
class Build:
    """A compiled benchmark: where it is, the command that made it, and whether it came from the cache."""

    path: Path
    command: tuple
    cached: bool


def source_bytes() -> bytes:
    """The bundled C source."""
    return (resources.files("simnuma.bench") / SOURCE_NAME).read_bytes()


def find_compiler() -> list:
    """The compiler command: ``$CC`` split like a shell would, else cc, gcc or clang."""
    requested = os.environ.get("CC", "").strip()
    if requested:
        words = shlex.split(requested)
        if shutil.which(words[0]) is None:
            raise BenchError(f"$CC is {requested!r} but {words[0]!r} is not an executable on PATH;"
                             " fix $CC or unset it to use cc, gcc or clang")
        return [shutil.which(words[0])] + words[1:]
    for name in COMPILERS:
        found = shutil.which(name)
        if found:
            return [found]
    raise BenchError("no C compiler found (tried $CC, cc, gcc, clang): install one, e.g. gcc,"
                     " to build the native benchmark")


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/simnuma``, else ``~/.cache/simnuma``."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "simnuma"


def source_path() -> Path:
    """The bundled C source as a file path (the package must be installed as files, not zipped)."""
    return Path(str(resources.files("simnuma.bench") / SOURCE_NAME))


def compile_command(compiler: list, source: Path, output: Path, flags=CFLAGS) -> list:
    return [*compiler, *flags, "-o", str(output), str(source)]


def manual_build_command(source: Path | None = None) -> str:
    """The command that builds the benchmark by hand, for a machine without Python."""
    return f"cc -O2 -pthread {shlex.quote(str(source or source_path()))} -o stride"


def _build_key(source: bytes, compiler: list, flags) -> str:
    digest = hashlib.sha256()
    digest.update(source)
    for word in (*compiler, *flags):
        digest.update(b"\0" + word.encode())
    return digest.hexdigest()[:16]


def _first_error(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if "error" in line.lower():
            return line
    return lines[0] if lines else "no message"


def _compile(command: list, output: Path) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except OSError as exc:
        raise BenchError(f"cannot run the compiler {command[0]!r}: {exc.strerror}") from None
    except subprocess.TimeoutExpired:
        raise BenchError(f"compiling the benchmark with {command[0]!r} took more than 300 s") from None
    if done.returncode != 0 or not output.exists():
        raise BenchError(f"compiling the benchmark with {command[0]!r} failed: {_first_error(done.stderr)}")


def _target(compiler: list, flags) -> Path:
    return cache_dir() / f"stride-{_build_key(source_bytes(), compiler, flags)}"


def planned_build(flags=CFLAGS) -> Build:
    """Where the build for the current source, compiler and flags goes, and its command (nothing is run)."""
    compiler = find_compiler()
    binary = _target(compiler, flags)
    return Build(binary, tuple(compile_command(compiler, source_path(), binary, flags)), binary.exists())


def build_binary(force: bool = False, flags=CFLAGS) -> Build:
    """Compile the benchmark into the cache unless an identical build is there already."""
    compiler = find_compiler()
    binary = _target(compiler, flags)
    command = tuple(compile_command(compiler, source_path(), binary, flags))
    if binary.exists() and not force:
        return Build(binary, command, True)
    folder = binary.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{binary.name}.", dir=folder)
        os.close(fd)
    except OSError as exc:
        raise BenchError(f"cannot write to the build cache {folder}: {exc.strerror}") from None
    temporary = Path(name)
    try:
        with resources.as_file(resources.files("simnuma.bench") / SOURCE_NAME) as source:
            _compile(compile_command(compiler, source, temporary, flags), temporary)
        os.chmod(temporary, 0o755)
        os.replace(temporary, binary)
    finally:
        if temporary.exists():
            temporary.unlink()
    return Build(binary, command, False)


def binary_path() -> Path:
    """The compiled benchmark, built on first use."""
    return build_binary().path
