# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""``cuda-fatbin size``: where the device bytes go, and what dropping an arch would save."""

from __future__ import annotations

import argparse
import os
import sys

from ._common import JSON_SCHEMA, UsageError, _must_exist, _positive_int, _print_json, _shown, _table, add_command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .._size import SizeReport


def configure_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``size`` subcommand's options."""
    p = add_command(subparsers, "size", help="where the device bytes go: per arch, kernel, binary; what a drop saves")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="files, directories, .whl/.zip archives, conda packages, container images "
                        "(default: this Python's site-packages)")  # fmt: skip
    p.add_argument("--drop", action="append", default=[], metavar="ARCH",
                   help="project the bytes without this entry: sm_XY drops that SASS, compute_XY that PTX "
                        "(repeatable)")  # fmt: skip
    p.add_argument("--keep-ptx-for", action="append", default=[], metavar="ARCH",
                   help="project the bytes with every PTX removed but this one's (compute_XY; repeatable)")  # fmt: skip
    p.add_argument("--recompress", choices=["none", "speed", "balance", "size"],
                   help="project every payload recompressed as libnvfatbin's -compress-mode writes it "
                        "(speed: LZ4, balance/size: zstd; size is slow, about 1 MB/s a core)")  # fmt: skip
    p.add_argument("--budget", metavar="SIZE",
                   help="exit 1 when the binaries' total (projected, with a what-if) is over SIZE (100M, 1.5G; "
                        "K/M/G are powers of 1024)")  # fmt: skip
    p.add_argument("--top", type=_positive_int, default=10, metavar="N", help="rows of each ranking (default 10)")
    p.add_argument("--no-embedded", action="store_true", help="skip the search for fatbins stored as data")
    p.add_argument("-j", "--jobs", type=_positive_int,
                   help="worker processes (default: the CPU count); one large file is shared among them")  # fmt: skip
    p.add_argument("--json", action="store_true", help="machine-readable output (docs/cli.md)")
    p.add_argument("--wide", action="store_true", help="one line per row, however wide (no wrapping to the terminal)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._size_whatif import _drop_keys, _kept_ptx, parse_size

    try:
        budget = parse_size(args.budget) if args.budget is not None else None
        _drop_keys(args.drop)
        _kept_ptx(args.keep_ptx_for)
    except ValueError as e:
        raise UsageError(str(e)) from None
    for p in args.paths:
        _must_exist(p)
    show = sys.stderr.isatty() and not args.json

    def progress(done: int, total: int, path: str) -> None:
        print(f"\r[{done}/{total}] {_shown(os.path.basename(path))[:50]}".ljust(70), end="", file=sys.stderr)

    from .._kernels import start_demangler, stop_demangler

    start_demangler()  # the kernel names shown are demangled at the end: its start-up runs while the files are read
    try:
        return _report(args, budget, show, progress)
    finally:
        stop_demangler()


def _report(args: argparse.Namespace, budget: int | None, show: bool, progress: Callable[[int, int, str], None]) -> int:
    from .._size import size

    report = size(args.paths or None, drop=args.drop, recompress=args.recompress, keep_ptx_for=args.keep_ptx_for,
                  embedded=not args.no_embedded, max_workers=args.jobs,
                  progress=progress if show else None)  # fmt: skip
    if show:
        print("\r".ljust(72) + "\r", end="", file=sys.stderr)
    doc = report.to_dict(top=args.top) if args.json else None
    totals = doc["totals"] if doc is not None else report.totals()
    over = budget is not None and totals["projected_bytes"] > budget
    failed = over or any(b.error for b in report.binaries)
    if doc is not None:
        doc["budget"] = budget
        doc["over_budget"] = over
        _print_json({"schema": JSON_SCHEMA, **doc})
        return 1 if failed else 0
    _text(report, totals, args)
    if budget is not None:
        word = "projected total" if _what_if(report) else "total"
        print(f"\n{word} {_mb(totals['projected_bytes'])} is {'OVER' if over else 'within'} the budget "
              f"{_mb(budget)}", file=sys.stderr)  # fmt: skip
    return 1 if failed else 0


def _what_if(report: SizeReport) -> bool:
    return bool(report.drop or report.recompress or report.keep_ptx_for)


def _mb(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB" if n >= 1 << 20 else f"{n / 1024:.1f} KiB" if n >= 1024 else f"{n} B"


def _pct(n: int, whole: int) -> str:
    return f"{100 * n / whole:.1f}%" if whole else "-"


def _text(report: SizeReport, totals: dict[str, Any], args: argparse.Namespace) -> None:
    """The text report: totals, then each ranking cut to ``--top`` rows."""
    from .._size import demangled
    from .._size_whatif import _drop_keys
    from .main_scan import _counted

    top, wide = args.top, args.wide
    file_b, dev = int(totals["file_bytes"]), int(totals["device_bytes"])
    print(f"{report.files_read} binaries read, {totals['binaries']} with device code: {_mb(file_b)}, of which "
          f"device code {_mb(dev)} ({_pct(dev, file_b)}), host {_mb(file_b - dev)}; fatbin headers "
          f"{_mb(int(totals['overhead_bytes']))}")  # fmt: skip
    sections = totals["sections"]
    print("fatbins: " + ", ".join(f"{k} {_mb(v)}" for k, v in sections.items()) + "\n")
    kinds = report.by_kind()
    rows = [(k, v["entries"], _mb(v["stored_bytes"]), _mb(v["bytes"]), _pct(v["stored_bytes"], dev))
            for k, v in list(kinds.items())[:top]]  # fmt: skip
    _table(["entry", "count", "stored", "uncompressed", "of device"], rows, wide=wide)
    _more(len(kinds), top)
    cats = totals["sass_categories"]
    whole = sum(cats.values())
    print("\nSASS images (uncompressed), by ELF section:")
    _table(["category", "bytes", "share"], [(k, _mb(v), _pct(v, whole)) for k, v in cats.items() if v], wide=wide)
    kernels, copies = report.kernels(), report.kernel_duplicates()
    demangled(kernels[:top], copies[:top])  # one demangling child for both tables
    print(f"\nlargest kernels (SASS code over every arch), {len(kernels)} in all:")
    _table(["kernel", "code", "images"], [(k["demangled"], _mb(k["bytes"]), k["images"]) for k in kernels[:top]],
           wide=wide)  # fmt: skip
    binaries = sorted((b for b in report.binaries if not b.error), key=lambda b: -b.file_bytes)
    print("\nlargest binaries:")
    what_if = _what_if(report)
    _table(["binary", "file", "device", "projected" if what_if else "host"],
           [(b.path, _mb(b.file_bytes), _mb(b.device_bytes),
             _mb(report.projected(b) if what_if else b.file_bytes - b.device_bytes)) for b in binaries[:top]],
           wide=wide)  # fmt: skip
    _more(len(binaries), top)
    dists = report.distributions()
    if len(dists) > 1 or what_if:
        print()
        _table(["distribution", "binaries", "file", "device", "projected"],
               [(d["distribution"], d["binaries"], _mb(d["file_bytes"]), _mb(d["device_bytes"]),
                 _mb(d["projected_bytes"])) for d in dists[:top]], wide=wide)  # fmt: skip
        _more(len(dists), top)
    _duplicates(report, int(totals["duplicate_bytes"]), top, wide)
    _kernel_duplicates(copies, int(totals["kernel_duplicate_bytes"]), top, wide)
    if what_if:
        saved = file_b - int(totals["projected_bytes"])
        change = [f"without {', '.join(report.drop)}"] if report.drop else []
        change += [f"with PTX only for {', '.join(report.keep_ptx_for)}"] if report.keep_ptx_for else []
        change += [f"recompressed --recompress {report.recompress}"] if report.recompress else []
        grown = saved < 0  # --recompress none, or speed after zstd
        delta = f"{_mb(abs(saved))} {'more' if grown else 'less'} ({'+' if grown else ''}{_pct(abs(saved), file_b)})"
        print(f"\n{' and '.join(change)}: {_mb(int(totals['projected_bytes']))}, {delta}")
        _no_ptx(report.left_without_ptx(), top)
        present = {key for b in report.binaries for key in b.entries}
        absent = [spec for spec in report.drop if not _drop_keys([spec]) & present]
        if absent:  # a typo, or sm_100 for sm_100f: its saving would otherwise be a silent 0 in the total
            print(f"no binary holds {', '.join(_shown(spec) for spec in absent)}: nothing of it to drop")
    bad = [b for b in report.binaries if b.error]
    if bad:
        print(f"\n{len(bad)} input(s) could not be read:")
        for b in bad:
            print(f"  {_shown(b.path)}: {_shown(b.error)}")
    if report.skipped:
        print("\nnot read: " + ", ".join(_counted(n, k) for k, n in sorted(report.skipped.items()))
              + " (symlinks inside a folder are never followed)")  # fmt: skip


def _duplicates(report: SizeReport, wasted: int, top: int, wide: bool) -> None:
    dups = report.duplicates()
    if not dups:
        print("\nno payload is stored twice")
        return
    print(f"\npayloads stored more than once: {len(dups)}, wasting {_mb(wasted)}:")
    _table(["entry", "copies", "binaries", "wasted", "first binary"],
           [(d["entry"], d["copies"], d["binaries"], _mb(d["wasted_bytes"]), d["paths"][0]) for d in dups[:top]],
           wide=wide)  # fmt: skip
    _more(len(dups), top)


def _kernel_duplicates(dups: list[dict[str, Any]], wasted: int, top: int, wide: bool) -> None:
    if not dups:
        print("\nno kernel is compiled into two SASS images of one arch with the same code")
        return
    print(f"\nkernels compiled into several SASS images of one arch (translation units), same code: {len(dups)}, "
          f"wasting {_mb(wasted)}:")  # fmt: skip
    _table(["kernel", "entry", "copies", "binaries", "wasted", "first binary"],
           [(d["demangled"], d["entry"], d["copies"], d["binaries"], _mb(d["wasted_bytes"]), d["paths"][0])
            for d in dups[:top]], wide=wide)  # fmt: skip
    _more(len(dups), top)


def _no_ptx(paths: list[str], top: int) -> None:
    """The binaries the projection leaves without PTX: what the bytes saved would cost."""
    if paths:
        print(f"{len(paths)} binaries would keep no PTX: a GPU newer than every SASS they hold could not run them "
              "(no JIT):")  # fmt: skip
        for path in paths[:top]:
            print(f"  {_shown(path)}")
        _more(len(paths), top)


def _more(n: int, top: int) -> None:
    if n > top:
        print(f"  ... {n - top} more (--top)")
