# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""``cuda-fatbin inspect``: list the entries of fatbins, objects, shared libraries, executables and of the
binary members of wheels; reads only (the pure-Python reader), never imports the compile side.
"""

from __future__ import annotations

import argparse
import collections
import sys

from ._common import (
    JSON_SCHEMA,
    Failure,
    _add_reading_options,
    _fatbins,
    _inputs,
    _positive_int,
    _print_json,
    _relocatable_flag,
    _shown,
    _table,
    _where,
    add_command,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time: see benchmarks/bench_cli.py)
if TYPE_CHECKING:
    from typing import Any

    from .._reader import Fatbin, FatbinEntry


def configure_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``inspect`` subcommand's options."""
    p = add_command(subparsers, "inspect", help="list the entries of fatbins, objects, shared libraries, executables")
    p.add_argument("files", nargs="+", metavar="FILE", help="files to list ('-' reads standard input)")
    p.add_argument("--json", action="store_true", help="machine-readable output (docs/cli.md)")
    p.add_argument("--wide", action="store_true", help="one line per row, however wide (no wrapping to the terminal)")
    p.add_argument("-j", "--jobs", type=_positive_int,
                   help="worker processes that search a large file in parts with --embedded (default: the CPU count)")
    _add_reading_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._reader import FatbinFormatError

    files: list[tuple[str, list[Any], str | None]] = []  # (path, pieces: what each part of its fatbins gives, error)
    make = _part_dicts if args.json else _part_rows
    failed = 0
    for arg in args.files:
        try:
            sources = _inputs(arg)
        except Failure as e:
            sources = [(arg, e)]
        if not sources:  # an archive without a binary member
            files.append((arg, [make([])], None))
        for path, source in sources:
            try:
                if isinstance(source, BaseException):
                    raise source
                pieces = _in_parts(args, source, make) if isinstance(source, str) else None
                if pieces is None and isinstance(source, str):
                    pieces = [make(_fatbins(source, args.embedded, _relocatable_flag(args)))]
                elif pieces is None:
                    from .._reader import iter_fatbins

                    flag = _relocatable_flag(args)
                    pieces = [make(list(iter_fatbins(source, embedded=args.embedded, relocatable=flag)))]
                files.append((path, pieces, None))
            except (Failure, FatbinFormatError, OSError) as e:
                failed += 1
                text = str(e) if isinstance(e, Failure) else f"{_shown(path)}: {getattr(e, 'strerror', None) or e}"
                files.append((path, [], text))
                if not args.json:
                    print(f"cuda-fatbin inspect: {_shown(text)}", file=sys.stderr)
    if args.json:
        doc: dict[str, Any] = {"schema": JSON_SCHEMA, "files": []}
        for path, pieces, error in files:
            record = {"path": path, "fatbins": [d for piece in pieces for d in piece]}
            if error is not None:
                record["error"] = error
            doc["files"].append(record)
        _print_json(doc)
        return 1 if failed else 0
    for path, pieces, error in files:
        if error is None:
            _print_listing(path, pieces, args.wide)
    return 1 if failed else 0


def _in_parts(args: argparse.Namespace, path: str, make: Any) -> list[Any] | None:
    """The pieces of a large ELF file searched in parts by several workers (``--embedded``), else None."""
    if not args.embedded or path == "-" or "::" in path or args.jobs == 1:
        return None
    import os

    from .._parts import listed_in_parts

    if not os.path.isfile(path):
        return None
    found = listed_in_parts(path, _relocatable_flag(args), make, args.jobs or os.cpu_count() or 1)
    return None if found is None else [make(found[0]), *found[1]]


#: What a part of a file's fatbins gives the text listing: rows, warnings (index in the part, entry, what),
#: count of entries of each kind, entries, bytes of payload, bytes of fatbin, fatbins
_Piece = tuple[list[tuple[str, ...]], list[tuple[int, str, str]], dict[str, int], int, int, int, int]


def _part_rows(fatbins: list[Fatbin]) -> _Piece:
    """The text listing's piece of ``fatbins`` (made where they are read: a worker, for a part of a file)."""
    rows, entries, kinds = _listing(fatbins)
    warnings = [(i, f"{e.kind} {e.arch}", e.payload_mismatch) for i, e in enumerate(entries)
                if e.payload_mismatch is not None]  # fmt: skip
    size = sum(e.size for e in entries)
    return rows, warnings, dict(kinds), len(entries), size, sum(fb.size for fb in fatbins), len(fatbins)


def _part_dicts(fatbins: list[Fatbin]) -> list[dict[str, Any]]:
    """The JSON listing's piece of ``fatbins``."""
    return [_fatbin_dict(fb) for fb in fatbins]


def _print_listing(path: str, pieces: list[_Piece], wide: bool) -> None:
    entries = sum(p[3] for p in pieces)
    if not entries:
        print(f"{_shown(path)}: does not contain device code\n")
        return
    print(f"{_shown(path)}: {sum(p[6] for p in pieces)} fatbin(s), {entries} entries\n")
    rows = pieces[0][0] if len(pieces) == 1 else [row for p in pieces for row in p[0]]
    _table(["fatbin", "kind", "arch", "version", "size", "stored", "compression", "identifier"], rows, wide=wide)
    before = 0
    for piece in pieces:
        for index, what, odd in piece[1]:
            print(f"  warning: entry {before + index + 1} ({what}): {_shown(odd)}; the driver goes by the header "
                  "(docs/selection.md, rule header_mismatch)")  # fmt: skip
        before += piece[3]
    kinds: dict[str, int] = collections.Counter()
    for piece in pieces:
        kinds.update(piece[2])
    print(f"\n  total: {', '.join(f'{v} {k}' for k, v in sorted(kinds.items()))}; {sum(p[4] for p in pieces)} bytes "
          f"of payload in {sum(p[5] for p in pieces)} bytes of fatbin\n")  # fmt: skip


def _listing(fatbins: list[Fatbin]) -> tuple[list[tuple[str, ...]], list[FatbinEntry], dict[str, int]]:
    """The table's rows, every entry in their order, and the count of entries of each kind, in one pass.

    The rows' cells are all ``str`` (``_term.table`` tests them at once); the cells that entries of one header share
    (kind, arch, version, compression, identifier) are made once per distinct header, not per row (libcufft's 24,454
    stored fatbins have 23).
    """
    shapes: dict[tuple[object, ...], list[Any]] = {}  # -> [kind, arch, version, compression, identifier, count]
    rows: list[tuple[str, ...]] = []
    entries: list[FatbinEntry] = []
    add_row = rows.append
    for fb in fatbins:
        where = _where(fb)
        for e in fb.iter_entries():
            arch = e.arch
            key = (e.kind, arch, e.version, e.compression, e.concatenated, e.identifier)
            shape = shapes.get(key)
            if shape is None:
                version = f"{e.version[0]}.{e.version[1]}"
                compression = "in concat" if e.concatenated else e.compression
                arch_text = "" if arch is None else str(arch)
                shape = shapes[key] = [e.kind, arch_text, version, compression, e.identifier or "", 0]
            kind, arch_text, version, compression, identifier, count = shape
            shape[5] = count + 1
            stored = e.stored_size
            add_row((where, kind, arch_text, version, str(e.size), str(stored) if stored else "-", compression,
                     identifier))  # fmt: skip
            entries.append(e)
    kinds: dict[str, int] = collections.Counter()
    for kind, *_, count in shapes.values():
        kinds[kind] += count
    return rows, entries, kinds


def _fatbin_dict(fb: Fatbin) -> dict[str, Any]:
    entries = [{**e.as_dict(), "payload_mismatch": e.payload_mismatch} for e in fb.iter_entries()]
    return {"offset": fb.offset, "size": fb.size, "section": fb.section, "standalone": fb.standalone,
            "relocatable": fb.relocatable, "embedded": fb.embedded, "entries": entries}  # fmt: skip
