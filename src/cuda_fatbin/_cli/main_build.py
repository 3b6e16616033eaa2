# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""``cuda-fatbin build``: assemble existing artifacts into a fatbin (like the fatbinary tool)."""

from __future__ import annotations

import argparse
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
    _print_json,
    _read_input,
    _shown,
    _write_output,
    add_command,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time: see benchmarks/bench_cli.py)
if TYPE_CHECKING:
    from .._fatbin import Part


def configure_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``build`` subcommand's options."""
    p = add_command(subparsers, "build", help="assemble existing artifacts into a fatbin (like the fatbinary tool)")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="the fatbin to write, whole or not at all ('-': standard output, not a terminal)")  # fmt: skip
    p.add_argument("parts", nargs="*", metavar="FILE", help="cubin/PTX/LTO-IR/-rdc object files (detected)")
    p.add_argument("--part", action="append", default=[], metavar="kind=K,arch=A,file=F[,identifier=I][,options=O]",
                   help="a part of the kind and arch given, not detected (repeatable; elf means cubin)")  # fmt: skip
    p.add_argument("--allow-duplicates", action="store_true", help="allow the same kind, arch and identifier twice")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--json", action="store_true",
                   help="print what was written as JSON on standard output (schemas/build.json)")  # fmt: skip
    _add_fatbin_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._fatbin import build_fatbin

    named = [item.partition("=")[2] for p in args.part for item in p.split(",") if item.startswith("file=")]
    _check_output(args.output, "a fatbin", "-o", [("an input", p) for p in [*args.parts, *named]])
    _check_json_output(args)
    files = []
    for path in args.parts:  # a missing or unrecognised input is a failed build (exit 1), not a bad command line
        _read_part(path)
        files.append(path)
    parts = files + [_parse_part(p) for p in args.part]
    if not parts:
        raise UsageError("build needs at least one part (a file, or --part kind=...,file=...)")
    data = build_fatbin(parts, options=_fatbin_options(args), allow_duplicates=args.allow_duplicates)
    _write_output(args.output, data)
    if args.json:  # schemas/build.json
        _print_json({"schema": JSON_SCHEMA, "output": args.output, "bytes": len(data), "parts": len(parts),
                     "entries": _entries_json(data)})  # fmt: skip
    elif not args.quiet:
        info = sys.stderr if args.output == "-" else sys.stdout  # standard output carries the fatbin
        print(f"{_shown(args.output)}: {len(data)} bytes, {len(parts)} part(s)", file=info)
    return 0


def _read_part(path: str, *, check_kind: bool = True) -> bytes:
    """A part of ``build``, read by :func:`_read_input`; bytes of no known kind are a failed input (exit 1)."""
    data = _read_input(path)
    if check_kind:
        from .._detect import detect

        try:
            detect(data)
        except ValueError as e:
            raise Failure(f"{_shown(path)}: {e}") from None
    return data


def _parse_part(spec: str) -> Part:
    from .._fatbin import Part

    fields = {}
    for item in spec.split(","):
        key, sep, value = item.partition("=")
        if not sep or key not in ("kind", "arch", "file", "identifier", "options"):
            raise UsageError(f"--part {spec!r}: expected key=value items among kind, arch, file, identifier, options")
        fields[key] = value
    if "file" not in fields:
        raise UsageError(f"--part {spec!r}: file= is required")
    path = fields.pop("file")
    return Part(_read_part(path, check_kind=fields.get("kind") != "index"), **fields)  # an index is text
