"""simnuma's build: pyproject.toml says everything but the compiled model, which this file adds.

The model's hot modules and the analytic model's (``simnuma.model.native.COMPILED``)
are compiled with mypyc where it and a C compiler are at hand; without them, or with
``SIMNUMA_PURE=1``, simnuma installs as pure Python and gives the same results,
slower.  The digest of the sources compiled goes to ``simnuma/model/_build.py``,
so that a compiled module is never used after its source has changed
(``simnuma.model.native``).
"""
import os
import runpy
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
MODEL = ROOT / "simnuma" / "model"
native = runpy.run_path(str(MODEL / "native.py"))


class lenient_build_ext(build_ext):
    """Builds the compiled model if it can; if a compiler fails, the pure-Python model is installed."""

    def run(self):
        try:
            super().run()
        except Exception as exc:   # noqa: BLE001 - any failure of the compiler means: no compiled model
            print(f"simnuma: model not compiled ({exc}); installing the pure-Python model", file=sys.stderr)
            self.extensions = []
            (MODEL / "_build.py").unlink(missing_ok=True)


def compiled_model():
    if os.environ.get(native["PURE_VARIABLE"]):
        print(f"simnuma: {native['PURE_VARIABLE']} is set: installing the pure-Python model", file=sys.stderr)
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("simnuma: mypyc is missing: installing the pure-Python model", file=sys.stderr)
        return []
    (MODEL / "_build.py").write_text(
        '"""Written by setup.py: the digest of the model sources compiled (simnuma.model.native)."""\n'
        f'SOURCE_DIGEST = "{native["source_digest"](MODEL.parent)}"\n')
    os.chdir(ROOT)   # mypycify takes paths relative to the project
    try:
        sources = [str(native["source_path"](name, Path("simnuma"))) for name in native["COMPILED"]]
        return mypycify(sources, opt_level="3")
    except (Exception, SystemExit) as exc:   # noqa: BLE001 - mypyc could not compile: the model stays Python
        print(f"simnuma: mypyc failed ({exc}): installing the pure-Python model", file=sys.stderr)
        (MODEL / "_build.py").unlink(missing_ok=True)
        return []


setup(ext_modules=compiled_model(), cmdclass={"build_ext": lenient_build_ext})
