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
    _add_reading_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._reader import FatbinFormatError

    files: list[tuple[str, list[Fatbin], str | None]] = []
    failed = 0
    for arg in args.files:
        try:
            sources = _inputs(arg)
        except Failure as e:
            sources = [(arg, e)]
        if not sources:  # an archive without a binary member
            files.append((arg, [], None))
        for path, source in sources:
            try:
                if isinstance(source, BaseException):
                    raise source
                if isinstance(source, str):
                    fatbins = _fatbins(source, args.embedded, _relocatable_flag(args))
                else:
                    from .._reader import iter_fatbins

                    fatbins = list(iter_fatbins(source, embedded=args.embedded, relocatable=_relocatable_flag(args)))
                files.append((path, fatbins, None))
            except (Failure, FatbinFormatError, OSError) as e:
                failed += 1
                text = str(e) if isinstance(e, Failure) else f"{_shown(path)}: {getattr(e, 'strerror', None) or e}"
                files.append((path, [], text))
                if not args.json:
                    print(f"cuda-fatbin inspect: {_shown(text)}", file=sys.stderr)
    if args.json:
        doc: dict[str, Any] = {"schema": JSON_SCHEMA, "files": []}
        for path, fatbins, error in files:
            record = {"path": path, "fatbins": [_fatbin_dict(fb) for fb in fatbins]}
            if error is not None:
                record["error"] = error
            doc["files"].append(record)
        _print_json(doc)
        return 1 if failed else 0
    for path, fatbins, error in files:
        if error is not None:
            continue
        rows, entries, kinds = _listing(fatbins)
        if not entries:
            print(f"{_shown(path)}: does not contain device code\n")
            continue
        print(f"{_shown(path)}: {len(fatbins)} fatbin(s), {len(entries)} entries\n")
        _table(["fatbin", "kind", "arch", "version", "size", "stored", "compression", "identifier"], rows,
               wide=args.wide)  # fmt: skip
        for index, entry in enumerate(entries, 1):
            odd = entry.payload_mismatch
            if odd is not None:
                print(f"  warning: entry {index} ({entry.kind} {entry.arch}): {_shown(odd)}; the driver goes by the "
                      "header (docs/selection.md, rule header_mismatch)")  # fmt: skip
        size = sum(e.size for e in entries)
        stored = sum(fb.size for fb in fatbins)
        print(f"\n  total: {', '.join(f'{v} {k}' for k, v in sorted(kinds.items()))}; {size} bytes of payload "
              f"in {stored} bytes of fatbin\n")  # fmt: skip
    return 1 if failed else 0


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
