# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""``cuda-fatbin extract``: write entries out as files, named like cuobjdump does, confined to one folder."""

from __future__ import annotations

import argparse
import os
import sys

from ._common import (
    JSON_SCHEMA,
    Failure,
    UsageError,
    _add_reading_options,
    _must_exist,
    _print_json,
    _relocatable_flag,
    _shown,
    add_command,
)


def configure_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``extract`` subcommand's options."""
    p = add_command(subparsers, "extract", help="write entries out as files, named like cuobjdump does")
    p.add_argument("file", metavar="FILE", help="a fatbin, object, shared library or executable to take entries from")
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="the folder to write into (created if missing); nothing is written outside it")  # fmt: skip
    p.add_argument("--kind", action="append", default=[], metavar="KIND",
                   help="kinds to write: elf (or cubin), ptx, ltoir, reloc, tile_ir, index (repeatable)")  # fmt: skip
    p.add_argument("--arch", action="append", default=[], metavar="SPEC", help="only these archs (repeatable)")
    p.add_argument("--force", action="store_true", help="replace existing files (symlinks are never followed)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--json", action="store_true",
                   help="print the files written as JSON on standard output (schemas/extract.json)")  # fmt: skip
    _add_reading_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._arch import Arch, split_arch_list
    from .._extract import ExtractError, extract_entries
    from .._reader import FatbinFormatError

    try:
        archs = [Arch.parse(a) for spec in args.arch for a in split_arch_list(spec)] or None
    except (TypeError, ValueError) as e:
        raise UsageError(str(e)) from None
    kinds = [k for spec in args.kind for k in spec.replace(";", ",").split(",") if k] or None
    failed: list[str] = []
    if args.file != "-":
        _must_exist(args.file)
    try:
        written = extract_entries(
            args.file, args.output, kinds=kinds, archs=archs, force=args.force, embedded=args.embedded,
            relocatable=_relocatable_flag(args), on_error=lambda e, name, exc: failed.append(f"{name}: {exc}"),
        )  # fmt: skip
    except ExtractError as e:
        raise Failure(_shown(e)) from None
    except FatbinFormatError as e:  # malformed input: named, as inspect names it (--debug: the reader's traceback)
        raise Failure(f"{_shown(args.file)}: {_shown(e)}") from e
    except OSError as e:  # the input, or -o naming a file, a FIFO, a folder that cannot be made
        import errno

        where = e.filename if e.filename is not None else args.output
        hint = "; -o names the folder to write into, which is made if missing" if e.errno in (
            errno.EEXIST, errno.ENOTDIR) else ""  # fmt: skip
        raise Failure(f"{_shown(where)}: {e.strerror or e}{hint}") from None
    if args.json:  # schemas/extract.json
        _print_json({"schema": JSON_SCHEMA, "file": args.file, "output": args.output,
                     "written": [os.fspath(p) for p in written], "failed": failed})  # fmt: skip
    elif not args.quiet:
        for path in written:
            print(_shown(path))
    for f in failed:
        print(f"cuda-fatbin extract: cannot extract {_shown(f)}", file=sys.stderr)
    if not written and not failed:
        raise Failure("no entry matches --kind/--arch")
    return 1 if failed else 0
