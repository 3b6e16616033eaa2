# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The ``cuda-fatbin`` command: compile, build, inspect, which, scan, size, extract, probe.

One module per subcommand (``main_inspect.py``, ...), each with ``configure_parser(subparsers)`` and
``run(args) -> int``; what several share is in ``_common.py``. ``inspect``, ``which``, ``scan`` and
``extract`` use only the pure-Python reader and selection model: they need no CUDA toolkit and never import
cuda.core. ``compile`` and ``build`` import the compile side when they run. Exit codes: 0 success,
1 failure (compile error, uncovered GPU, unreadable data), 2 usage. The ``--json`` outputs are documented in
docs/cli.md and versioned by their ``"schema"`` field.
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib import import_module

from ._common import Failure, UsageError, _shown

__all__ = ["build_parser", "console", "main"]

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time: see benchmarks/bench_cli.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, NoReturn

#: The subcommands, in this order in --help and in "unknown command"; ``NAME`` is run by module ``main_NAME``.
_COMMANDS = ("compile", "build", "inspect", "which", "scan", "diff", "size", "metadata", "extract", "gpus", "probe")


def versions_text() -> str:
    """The versions a bug report needs: this package, cuda-core, cuda-bindings and the CUDA libraries."""
    from importlib import import_module
    from importlib.metadata import PackageNotFoundError, version

    from .. import __version__

    lines = [f"cuda-fatbin {__version__}"]  # the code running, installed or not (a source tree on sys.path)
    for dist in ("cuda-core", "cuda-bindings"):
        try:
            lines.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            lines.append(f"{dist} not installed")
    probes: dict[str, Callable[[], str]] = {
        "NVRTC": lambda: "{}.{}".format(*import_module("cuda.bindings.nvrtc").nvrtcVersion()[1:]),
        "nvJitLink": lambda: "{}.{}".format(*import_module("cuda.bindings.nvjitlink").version()),
        "libnvfatbin": lambda: "{}.{}".format(*import_module("cuda.bindings.nvfatbin").version()),
    }
    for name, probe in probes.items():
        try:
            lines.append(f"{name} {probe()}")
        except Exception as e:  # a library that cannot be loaded is what the report needs to say
            lines.append(f"{name} not available ({type(e).__name__})")
    return "\n".join(lines)


class _VersionAction(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str, **kw: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the package and CUDA library versions")

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        print(versions_text())
        parser.exit(0)


class _Parser(argparse.ArgumentParser):
    """argparse, whose errors quote the command line escaped (``cuda-fatbin scan *`` passes file names, which may
    hold control characters, and one starting with ``-`` comes back in "unrecognized arguments")."""

    #: True while ``build_parser`` adds the options: argparse makes a help formatter for each option it adds (to
    #: check its metavar), and a formatter reads the terminal's width, which imports shutil (with bz2 and lzma:
    #: 1.6 ms of every command's start-up). Those formatters write nothing, so they get a fixed width.
    building = False

    def error(self, message: str) -> NoReturn:
        super().error("\n".join(_shown(line) for line in message.split("\n")))

    def _get_formatter(self) -> argparse.HelpFormatter:
        if _Parser.building:
            return self.formatter_class(prog=self.prog, width=80)  # type: ignore[call-arg]  # (HelpFormatter takes it)
        return super()._get_formatter()


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``cuda-fatbin``: each subcommand's options come from its module's ``configure_parser``.

    ``only`` (a name in ``_COMMANDS``) configures that subcommand alone: a command line that names one parses
    the same way, without importing the others' modules or building their parsers (start-up time).
    """
    _Parser.building = True
    try:
        parser = _Parser(
            prog="cuda-fatbin", description="Make, inspect and check CUDA fat binaries (toolkit-free inspection)."
        )
        parser.add_argument("--debug", dest="traceback", action="store_true", help="show the traceback of an error")
        parser.add_argument("--version", action=_VersionAction)
        subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

        for name in _COMMANDS if only is None else (only,):  # in this order in --help and in "unknown command"
            import_module(f"{__name__}.main_{name}").configure_parser(subparsers)
    finally:
        _Parser.building = False
    return parser


def _join_option_values(argv: list[str]) -> list[str]:
    """``-X --use_fast_math`` as ``-X=--use_fast_math``: the value of -X is an NVRTC option, dashes and all."""
    out, it = [], iter(argv)
    for a in it:
        if a in ("-X", "--nvrtc-option"):
            nxt = next(it, None)
            out.append(a if nxt is None else f"{a}={nxt}")
        else:
            out.append(a)
    return out


def _suggest_command(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """An unknown command is a usage error that names the closest one (``compil`` -> ``compile``)."""
    first = next((a for a in argv if not a.startswith("-")), None)
    commands: list[str] = []
    for action in parser._actions:  # the subcommands the parser knows, however many there are
        if isinstance(action, argparse._SubParsersAction):
            commands.extend(action.choices)
    if first is None or first in commands:
        return
    from .._suggest import closest

    close = closest(first, commands, cutoff=0.5)
    hint = f"; did you mean {close!r}?" if close else ""
    parser.error(f"unknown command {first!r}{hint} (commands: {', '.join(commands)})")


#: The cyclic garbage collector's first threshold while a command runs (Python's default: 700 objects more alive
#: than at the last collection). A listing builds objects by the hundred thousand and keeps them, and each
#: collection walks those it has not walked: at 700, ``inspect --embedded`` of 24,454 fatbins (180,000 objects)
#: spent 12% of its time there, at 50,000 5%. Cycles are still collected, at most this many objects late.
_GC_FIRST_THRESHOLD = 200_000


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit code (0 success, 1 failure, 2 usage error)."""
    import gc

    from .._term import escaping_streams

    saved = gc.get_threshold()
    if saved[0]:  # 0: collection is off, and stays so
        gc.set_threshold(max(saved[0], _GC_FIRST_THRESHOLD), *saved[1:])
    try:
        with escaping_streams():  # a name the output's encoding cannot hold is escaped, never UnicodeEncodeError
            return _main(argv)
    except KeyboardInterrupt:  # Ctrl-C before the command's own handlers are set (reading the command line)
        return 130
    finally:
        gc.set_threshold(*saved)  # main called from a program: its setting back


def console() -> int:
    """The command line's own run (the ``cuda-fatbin`` script, ``python -m cuda_fatbin``): :func:`main`, then the
    objects alive are frozen, since the interpreter exits next and its last collection then walks none of them
    (modules: 4-5 ms of every run). A program that calls :func:`main` keeps its collector as it was."""
    import gc

    try:
        return main()
    finally:
        gc.freeze()


def _main(argv: Sequence[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    first = next((a for a in argv if not a.startswith("-")), None)  # the command: no option before it takes a value
    parser = build_parser(first if first in _COMMANDS else None)
    _suggest_command(parser, argv)
    try:  # --version and --help print while parsing: into `head`, too
        args = parser.parse_args(_join_option_values(argv))
    except BrokenPipeError:
        return _quiet_pipe()
    try:
        from ._interrupt import interruptible

        with interruptible(args.command):
            code: int = args.func(args)
        return code
    except UsageError as e:
        _error(args, e, f"error: {e}")
        return 2
    except Failure as e:
        _error(args, e, str(e))
        return 1
    except (TypeError, ValueError) as e:
        from .._reader import FatbinFormatError

        _error(args, e, f"{type(e).__name__}: {e}")
        return 1 if isinstance(e, FatbinFormatError) else 2
    except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM (_jobs.Terminated): the shells' codes for them
        from .._jobs import Terminated

        return 143 if isinstance(e, Terminated) else 130
    except BrokenPipeError:  # output piped into head & co.: stop quietly
        return _quiet_pipe()
    except Exception as e:  # a library failure: one readable line
        _error(args, e, f"{type(e).__name__}: {e}")
        return 1


def _quiet_pipe() -> int:
    """Standard output's reader went away (``| head``): point it at /dev/null so the exit flush is silent."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, sys.stdout.fileno())
    os.close(null)
    return 0


def _error(args: argparse.Namespace, exc: BaseException, line: str) -> None:
    """One readable line (a compile error adds the compiler logs after it); --debug adds the traceback."""
    if getattr(args, "traceback", False):
        import traceback

        traceback.print_exception(exc)
    shown = "\n".join(_shown(part) for part in line.split("\n"))  # names and compiler logs come from inputs
    print(f"cuda-fatbin {args.command}: {shown}", file=sys.stderr)
