# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""``cuda-fatbin compile``: compile a .cu/.ptx/.ll file for many archs into one fatbin.

The compile side (``_program``, cuda.core) is imported when the command runs, never at start-up.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

from ._common import (
    JSON_SCHEMA,
    Failure,
    UsageError,
    _add_fatbin_options,
    _check_json_output,
    _check_output,
    _entries_json,
    _fatbin_options,
    _installed_driver,
    _positive_int,
    _print_json,
    _Progress,
    _read_input,
    _shown,
    _write_outputs,
    add_command,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time: see benchmarks/bench_cli.py)
if TYPE_CHECKING:
    from typing import Any, TextIO

    from cuda.core import ObjectCode

    from .._arch import Arch, ArchSpec
    from .._cache import CacheReport
    from .._program import Program


_LANGS = {".cu": "c++", ".cuh": "c++", ".cpp": "c++", ".cc": "c++", ".ptx": "ptx", ".ll": "nvvm", ".bc": "nvvm",
          ".nvvm": "nvvm"}  # fmt: skip


def configure_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``compile`` subcommand's options."""
    p = add_command(subparsers, "compile", help="compile a .cu/.ptx/.ll file for many archs into one fatbin")
    p.add_argument("source", help="source file (.cu, .ptx, .ll/.bc for NVVM IR)")
    p.add_argument("--arch", required=True, action="append", metavar="SPEC",
                   help="archs in any spelling: '80;90;100+PTX', 'all-major', '80-real;90', 'arch=compute_80,code=[sm_80,sm_86]'")  # noqa: E501 # fmt: skip
    p.add_argument("-o", "--output", metavar="FILE",
                   help="the fatbin to write, whole or not at all ('-': standard output, not a terminal); "
                        "required unless --dry-run")  # fmt: skip
    p.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                   help="a folder to search for headers (repeatable; before the CUDA header folders)")  # fmt: skip
    p.add_argument(
        "--no-cuda-headers",
        dest="cuda_headers",
        action="store_false",
        help="do not add the CUDA runtime and CCCL header folders (found by cuda.pathfinder) after -I",
    )
    p.add_argument("-D", "--define", action="append", default=[], metavar="NAME[=VALUE]",
                   help="define a macro for the compile (repeatable)")  # fmt: skip
    p.add_argument("--std", help="C++ dialect, e.g. c++17")
    p.add_argument(
        "--name",
        help="program name: the entries' identifier and the file name in compiler messages "
        "(default: the source file's name, so that messages read 'k.cu(3): error ...')",
    )
    p.add_argument("--lang", choices=["c++", "ptx", "nvvm"], help="source language (default: from the extension)")
    p.add_argument("--name-expression", action="append", default=[], metavar="EXPR",
                   help="a kernel name expression to resolve, e.g. 'scale<float>' (repeatable)")  # fmt: skip
    p.add_argument("--symbols", metavar="FILE",
                   help="write the name-expression -> symbol mapping as JSON ('-' for standard output)")  # fmt: skip
    p.add_argument("--ptx-for", action="append", metavar="SPEC",
                   help="archs to embed PTX for (default: the newest; 'none' for none; repeatable)")  # fmt: skip
    p.add_argument("--ltoir-for", action="append", metavar="SPEC", help="archs to embed LTO-IR for (repeatable)")
    p.add_argument("-j", "--jobs", type=_positive_int, help="parallel compile jobs (default: the CPU count)")
    p.add_argument("--group", action="store_true", help="one front end per virtual arch, nvJitLink per real arch")
    p.add_argument("-X", "--nvrtc-option", action="append", default=[], metavar="OPT",
                   help="pass an option to NVRTC as is (repeatable), e.g. -X=--use_fast_math")  # fmt: skip
    p.add_argument("--cache", metavar="DIR", nargs="?", const="",
                   help="per-arch job cache folder (cuda.core FileStreamProgramCache); without DIR, "
                        "$XDG_CACHE_HOME/cuda-fatbin (docs/caching.md)")  # fmt: skip
    p.add_argument("--cache-exclude", action="append", default=[], metavar="PATH",
                   help="a file or folder beside the sources that holds no headers (build output): left out of "
                        "the cache key's include fingerprint (repeatable)")  # fmt: skip
    p.add_argument("--cache-max-files", type=int, metavar="N",
                   help="the most header-like files the include fingerprint reads (default 20000)")  # fmt: skip
    p.add_argument("--min-driver", metavar="VER",
                   help="the oldest driver to support ('13.0', or 'installed'): fail if a GPU could not load its "
                        "entry")  # fmt: skip
    p.add_argument("--min-driver-warn", action="store_true", help="with --min-driver: warn instead of failing")
    p.add_argument("--dry-run", action="store_true", help="print the plan and compile nothing")
    p.add_argument("-v", "--verbose", action="store_true", help="print the whole compiler logs (warnings show anyway)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors (no warnings, no summary)")
    p.add_argument("--json", action="store_true",
                   help="print what was written as JSON on standard output (schemas/compile.json)")  # fmt: skip
    _add_fatbin_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .._program import Program, ProgramOptions

    if args.output is None and not args.dry_run:  # before anything is read: a command-line error is exit 2
        raise UsageError("-o/--output is required: the fatbin to write (or --dry-run to print the plan only)")
    src = Path(args.source)
    code = _read_input(src)
    lang = args.lang or _LANGS.get(src.suffix.lower())
    if lang is None:
        raise UsageError(f"cannot tell the language of {_shown(src.name)}; pass --lang c++|ptx|nvvm")
    cache_dir = _check_outputs(args)
    defines = []
    for d in args.define:
        name, sep, value = d.partition("=")
        defines.append((name, value) if sep else name)
    includes = [*args.include, str(src.resolve().parent)]  # quoted includes next to the source, as nvcc finds them
    # named after the file: NVRTC's diagnostics then read "k.cu(3): error ...", which editors jump to (escaped: NVRTC
    # takes UTF-8 only, and a file name need not be)
    opts = ProgramOptions(name=_shown(args.name or src.name), std=args.std, include_path=includes,
                          define_macro=defines or None)  # fmt: skip
    program = Program(code, lang, opts, cuda_headers=args.cuda_headers)
    ptx_for = _spec_list(args.ptx_for)
    ltoir_for = _spec_list(args.ltoir_for) or ()
    archs = args.arch[0] if len(args.arch) == 1 else list(args.arch)
    if args.dry_run:
        print(program.plan(archs, ptx_for=ptx_for, ltoir_for=ltoir_for, group=args.group))
        return 0
    obj = _compile(args, program, cache_dir, archs=archs, ptx_for=ptx_for, ltoir_for=ltoir_for)
    _report(args, obj, program.last_cache_report if cache_dir is not None else None)
    return 0


def _check_outputs(args: argparse.Namespace) -> str | None:
    """The --cache* flags and the outputs checked before any work (a usage error: exit 2); the cache folder."""
    cache_dir = _cache_options(args)
    if args.dry_run and getattr(args, "json", False):
        raise UsageError("--dry-run prints the plan as text and --json describes what a compile wrote: use one")
    if not args.dry_run:
        if args.output == "-" and args.symbols == "-":
            raise UsageError("-o - and --symbols - both write to standard output; send one of them to a file")
        inputs = [("the source", args.source)] + ([("the --cache folder", cache_dir)] if cache_dir else [])
        _check_output(args.output, "a fatbin", "-o", inputs)
        _check_json_output(args)
        if args.symbols:
            _check_output(args.symbols, "JSON", "--symbols", [*inputs, ("the -o output", args.output)])
    return cache_dir


def _compile(args: argparse.Namespace, program: Program, cache_dir: str | None, **plan: Any) -> ObjectCode:
    """The fatbin of ``plan`` (archs, ptx_for, ltoir_for), with progress, warnings, cache and Ctrl-C handling."""
    progress = _Progress(not args.quiet)
    logs = sys.stderr if args.verbose else (None if args.quiet else _Warnings(sys.stderr))
    cache = cache_options = None
    if cache_dir is not None:
        from cuda.core.utils import FileStreamProgramCache

        cache = FileStreamProgramCache(cache_dir)
        outputs = [p for p in (args.output, args.symbols) if p and p != "-"]  # no header, whatever their suffix
        cache_options = {"cache_exclude": [*args.cache_exclude, *outputs], "cache_max_files": args.cache_max_files}
    from .._program import DriverCompatibilityError

    try:
        obj = program.compile(
            "fatbin", args.name_expression, logs, **plan,
            fatbin_options=_fatbin_options(args), max_workers=args.jobs, group=args.group,
            extra_options=args.nvrtc_option, progress=progress, cache=cache,
            min_driver=_installed_driver(args.min_driver, "--min-driver"),
            min_driver_action="warn" if args.min_driver_warn else "error", **(cache_options or {}),
        )  # fmt: skip
    except DriverCompatibilityError as e:  # the build worked but does not meet --min-driver: the work failed
        raise Failure(str(e)) from None
    finally:
        progress.close()
        if cache is not None:
            cache.close()
    if cache is not None and not args.quiet and not args.json:
        print(program.last_cache_report, file=sys.stderr)
    return obj


def _report(args: argparse.Namespace, obj: ObjectCode, cache_report: CacheReport | None) -> None:
    """Write the fatbin and --symbols, then say what was written (``--json``: schemas/compile.json)."""
    import json

    data = bytes(obj.code)
    mapping = {k: v.decode() if isinstance(v, bytes) else v for k, v in obj.symbol_mapping.items()}
    symbols = [(args.symbols, (json.dumps(mapping, indent=1) + "\n").encode())] if args.symbols else []
    _write_outputs([(args.output, data), *symbols])  # all or nothing: docs/cli.md
    if args.json:  # schemas/compile.json
        report = cache_report
        cached = None if report is None else {"hits": list(report.hits), "misses": list(report.misses),
                                              "corrupt": list(report.corrupt),
                                              "not_stored": list(report.not_stored)}  # fmt: skip
        _print_json({"schema": JSON_SCHEMA, "source": args.source, "output": args.output, "bytes": len(data),
                     "entries": _entries_json(data), "symbols": mapping, "cache": cached})  # fmt: skip
    elif not args.quiet:
        from .._reader import read_fatbin

        info = sys.stderr if "-" in (args.output, args.symbols) else sys.stdout  # standard output carries data
        entries = ", ".join(f"{e.kind} {e.arch}" for e in read_fatbin(data).iter_entries())
        print(f"{_shown(args.output)}: {len(data)} bytes: {entries}", file=info)
        for k, v in mapping.items():
            print(f"  {k} -> {v}", file=info)


def _cache_options(args: argparse.Namespace) -> str | None:
    """The cache folder of ``compile`` (``--cache`` alone: the default one), after checking the --cache* flags."""
    if args.cache is None:
        if args.cache_exclude or args.cache_max_files is not None:
            raise UsageError("--cache-exclude and --cache-max-files apply to --cache; add --cache [DIR]")
        return None
    if args.cache_max_files is not None and args.cache_max_files < 1:
        raise UsageError(f"--cache-max-files {args.cache_max_files}: give a positive number of files")
    if args.cache_max_files is None:
        from .._cache import MAX_INCLUDE_FILES

        args.cache_max_files = MAX_INCLUDE_FILES
    if not args.cache:
        from .._cache import default_cache_dir

        return os.fspath(default_cache_dir())
    if os.path.lexists(args.cache) and not os.path.isdir(args.cache):  # a file, device, FIFO or broken link
        raise UsageError(f"--cache {_shown(args.cache)}: that is a file, not a cache folder; write --cache=DIR, or "
                         "put a bare --cache after the source file")  # fmt: skip
    from .._cache import foreign_cache_files

    foreign = foreign_cache_files(args.cache)  # the cache deletes old files in its tmp/ as it opens
    if foreign:
        raise UsageError(f"--cache {_shown(args.cache)}: its {foreign[0].partition('/')[0]}/ holds files that are not "
                         f"the cache's ({', '.join(map(_shown, foreign))}), which the cache would delete or prune; "
                         "name a folder of its own, e.g. --cache .cuda-fatbin-cache")  # fmt: skip
    cache_dir: str = args.cache
    return cache_dir


def _spec_list(values: list[str] | None) -> ArchSpec | None:
    """Repeated --ptx-for/--ltoir-for values: one spec, a list of them, or () for 'none'."""
    if not values:
        return None
    if any(v.strip().lower() in ("", "none") for v in values):
        if len(values) > 1:
            raise UsageError("'none' cannot be combined with archs")
        return ()
    if len(values) == 1:
        return values[0]
    specs: list[Arch | str | int] = list(values)
    return specs


class _Warnings:
    """Compiler logs reduced to their warnings: each distinct line once, with the first job that gave it."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.seen: set[str] = set()
        self.warning = re.compile(r"\bwarning\s*[#:]", re.IGNORECASE)  # "k.cu(3): warning #177-D: ..."

    def write(self, text: str) -> None:
        head, _, body = text.partition("\n")
        for line in body.splitlines():
            if self.warning.search(line) and line not in self.seen:
                self.seen.add(line)
                print(f"cuda-fatbin compile: {_shown(head.strip())} {_shown(line.strip())}", file=self.out)
