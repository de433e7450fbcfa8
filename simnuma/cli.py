"""The ``simnuma`` command line.

Each command group lives in its own module with a ``register(subparsers)``
function; this module only assembles them and turns user mistakes into one line on
stderr and exit status 2: a :class:`~simnuma.errors.SimnumaError` raised by a
command, and a command line argparse cannot take (:class:`OneLineParser`).
"""
from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading

from . import __version__
from .model.native import status as model_status
from .errors import SimnumaError

COMMAND_MODULES = (
    "simnuma.commands.topo",
    "simnuma.commands.run",
    "simnuma.commands.explain",
    "simnuma.bench.cli",
    "simnuma.commands.calibrate",
    "simnuma.commands.reproduce",
    "simnuma.commands.sweep",
    "simnuma.commands.formats",
)


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, with where to read more.

    argparse prints the whole usage block before its message; here the message
    says which command and which argument, and ``--help`` has the rest.  Every
    subcommand's parser is of this class too (argparse copies the class).
    """

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message} (see '{self.prog} --help')\n")

    def _get_values(self, action, arg_strings):
        """``--size=--``, and ``--`` after the ``--`` that ends the options, are the value ``--``: argparse
        before Python 3.12 drops them too, and hands the argument an empty list (a traceback further on, or
        nothing where one value is required).  Those are the only ways ``arg_strings`` is ``['--']``."""
        if action.nargs in (None, "+") and arg_strings == ["--"]:
            value = self._get_value(action, "--")
            self._check_value(action, value)
            return value if action.nargs is None else [value]
        return super()._get_values(action, arg_strings)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="simnuma",
        description="Discrete-event simulation of ccNUMA interconnects, and a native benchmark to check it.",
    )
    parser.add_argument("--version", action="version", version=f"simnuma {__version__}, model {model_status()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is so that it stops as it stops on Ctrl-C: workers stopped, no
    temporary files, earlier results untouched."""


def _terminate(signum, frame):
    raise Terminated()


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    on_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if on_main_thread else None
    try:
        return int(args.func(args) or 0)
    except SimnumaError as exc:
        for line in str(exc).splitlines() or [type(exc).__name__]:
            print(line, file=sys.stderr)
        return 2
    except Terminated:
        print("simnuma: terminated; earlier results are untouched", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("simnuma: interrupted; earlier results are untouched", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    finally:
        if on_main_thread:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
