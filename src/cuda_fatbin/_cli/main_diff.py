# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""``cuda-fatbin diff OLD NEW``: what a build lost against the last one (docs/cli.md, "diff")."""

from __future__ import annotations

import argparse
import os
import sys

from ._common import (
    DRIVER_HELP,
    JSON_SCHEMA,
    _gpus,
    _installed_driver,
    _must_exist,
    _positive_int,
    _print_json,
    _shown,
    add_command,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from .._diff import BinaryDiff, DiffReport

#: Items of one list shown in text and markdown (the rest counted; --json lists them all).
SHOWN = 10
#: Binaries shown in text and markdown, those that lose coverage first.
SHOWN_BINARIES = 50


def configure_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``diff`` subcommand's options."""
    from ._gate_options import add_gate_options

    p = add_command(subparsers, "diff", help="what a build lost against the last one (archs, GPUs, kernels, bytes)")
    p.add_argument("old", metavar="OLD", help="the last build: a file, folder, .whl/.zip, conda package or image")
    p.add_argument("new", metavar="NEW", help="the new build, of the same kinds")
    p.add_argument(
        "--gpu",
        action="append",
        metavar="SPEC",
        help="GPUs to compare, as scan takes them (repeatable; default: every GPU of cuda-fatbin gpus)",
    )
    p.add_argument("--driver", help=DRIVER_HELP)
    p.add_argument("--no-embedded", action="store_true", help="skip the search for fatbins stored as data")
    p.add_argument("-j", "--jobs", type=_positive_int, help="worker processes (default: the CPU count)")
    p.add_argument("--json", action="store_true", help="machine-readable output (schemas/diff.json)")
    add_gate_options(p, alternatives=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._diff import diff
    from ._gate_options import gate_policy, output_format

    fmt = output_format(args)
    policy = gate_policy(args)
    args.driver = _installed_driver(args.driver, "--driver")
    gpus = _gpus(args.gpu, args.driver) if args.gpu else None
    for p in (args.old, args.new):
        _must_exist(p)
    show = sys.stderr.isatty() and fmt == "text"

    def progress(done: int, total: int, path: str) -> None:
        print(f"\r[{done}/{total}] {_shown(os.path.basename(path))[:50]}".ljust(70), end="", file=sys.stderr)

    report = diff(args.old, args.new, gpus=gpus, driver=args.driver, policy=policy, embedded=not args.no_embedded,
                  max_workers=args.jobs, progress=progress if show else None)  # fmt: skip
    if show:
        print("\r".ljust(72) + "\r", end="", file=sys.stderr)
    if fmt == "json":
        _print_json({"schema": JSON_SCHEMA, **report.to_dict()})
    elif fmt == "markdown":
        print(markdown(report))
    else:
        print(text(report))
        print("\ncoverage LOST" if report.lost else "\nno coverage lost", file=sys.stderr)
    return 1 if report.lost else 0


def _some(items: Sequence[str], shown: Callable[[str], str] = _shown, limit: int = SHOWN) -> str:
    """``a, b, c`` or ``a, b, ... and 7 more``: at most ``limit`` items."""
    head = ", ".join(shown(i) for i in items[:limit])
    return head + (f", ... and {len(items) - limit} more" if len(items) > limit else "")


def _bytes(b: BinaryDiff) -> str:
    old, new = b.device_bytes["old"], b.device_bytes["new"]
    if old is None or new is None:
        return f"{old if old is not None else new:,}"
    return f"{old:,} -> {new:,} ({new - old:+,})"


def _lines(b: BinaryDiff, shown: Callable[[str], str], demangled: dict[str, str]) -> list[str]:
    """What changed in one binary, one fact a line, each list bounded; kernels as ``demangled`` spells them."""
    out = []
    for side in ("old", "new"):
        if b.path[side] is not None:
            dist = b.distribution[side]
            out.append(f"{side}: {shown(b.path[side] or '')}" + (f" ({shown(dist)})" if dist else ""))
    for side in ("old", "new"):
        if b.error[side]:
            out.append(f"{side.upper()} could not be read: {shown(b.error[side] or '')}")
    if b.note:
        out.append(f"not paired: {shown(b.note)}")
    for label, found in (("SASS", b.sass), ("PTX", b.ptx)):
        for what in ("lost", "gained"):
            if found[what]:
                out.append(f"{label} {what}: {_some(found[what], shown)}")
    for what in ("lost", "gained", "changed"):
        gpus = [f"{g} ({v['old'] or 'no device code'} -> {v['new'] or 'no device code'})"
                for g, v in b.gpus.items() if v["change"] == what]  # fmt: skip
        if gpus:
            out.append(f"GPUs {what}: {_some(gpus, str)}")
    for what in ("lost", "gained"):
        names = b.kernels[what]
        if names:
            out.append(f"kernels {what} ({len(names)}): {_some([demangled.get(n, n) for n in names[:SHOWN]], shown)}"
                       + (f", ... and {len(names) - SHOWN} more" if len(names) > SHOWN else ""))  # fmt: skip
    unread = [f"{n} in {side.upper()}" for side, n in b.kernels_unread.items() if n]
    if unread:
        out.append(f"kernel names of some entries could not be read ({', '.join(unread)})")
    if b.change != "unreadable":
        out.append(f"device bytes: {_bytes(b)}")
    return out


def _summary(report: DiffReport) -> str:
    c = report.counts()
    parts = [f"{c[k]} {k}" for k in ("changed", "unchanged", "added", "removed", "unreadable") if c[k]]
    policy = [n for n, on in (("--sass-only", report.policy.sass_only), ("--require-ptx", report.policy.require_ptx))
              if on]  # fmt: skip
    return (f"{len(report.binaries)} binaries with device code ({', '.join(parts) or 'none'}); "
            f"{report.files_read['old']} read in OLD, {report.files_read['new']} in NEW; {len(report.gpus)} GPUs"
            + (f"; driver {report.driver}" if report.driver else "; no driver limit")
            + (f"; policy {' '.join(policy)}" if policy else ""))  # fmt: skip


def _listed(report: DiffReport) -> tuple[list[BinaryDiff], int, dict[str, str]]:
    """The binaries shown (not the unchanged ones; at most :data:`SHOWN_BINARIES`), how many more there are, and
    the kernel names shown, demangled in one batch."""
    from .._kernels import demangle_all

    changed = [b for b in report.binaries if b.change != "unchanged"]
    shown = changed[:SHOWN_BINARIES]
    demangled = demangle_all(n for b in shown for names in b.kernels.values() for n in names[:SHOWN])
    return shown, max(0, len(changed) - SHOWN_BINARIES), demangled


def text(report: DiffReport) -> str:
    """The text report: a summary line, then per binary that changed what it lost and gained."""
    out = [_summary(report)]
    shown, more, demangled = _listed(report)
    for b in shown:
        mark = "LOST" if b.lost else b.change.upper()
        out += ["", f"{_shown(b.name)}: {mark}"]
        out += [f"  {line}" for line in _lines(b, _shown, demangled)]
        if b.lost:
            out.append(f"  coverage lost: {_some(b.lost, _shown)}")
    if more:
        out += ["", f"... and {more} more binaries that changed (--json lists every one)"]
    return "\n".join(out)


def _md(value: str) -> str:
    from .._term import markdown as escaped

    return escaped(value)


def markdown(report: DiffReport) -> str:
    """The markdown report (a CI job summary): a verdict, a table of the binaries that changed, bounded lists."""
    shown, more, demangled = _listed(report)
    verdict = "**Coverage lost**" if report.lost else "No coverage lost"
    out = ["### cuda-fatbin diff", "", f"{verdict}: {_md(_summary(report))}", ""]
    if shown:
        out += ["| binary | change | SASS lost | SASS gained | PTX lost | GPUs lost | kernels lost | device bytes |",
                "|---|---|---|---|---|---|---|---|"]  # fmt: skip
        for b in shown:
            lost_gpus = [g for g, v in b.gpus.items() if v["change"] == "lost"]
            cells = [_md(b.name), "LOST" if b.lost else b.change, _some(b.sass["lost"], _md),
                     _some(b.sass["gained"], _md), _some(b.ptx["lost"], _md), _some(lost_gpus, _md),
                     str(len(b.kernels["lost"])), _md(_bytes(b)) if b.change != "unreadable" else "-"]  # fmt: skip
            out.append("| " + " | ".join(cells) + " |")
        if more:
            out += ["", f"... and {more} more binaries that changed (--json lists every one)"]
    for b in shown:
        if b.lost or b.note:
            out += ["", f"<details><summary>{_md(b.name)}</summary>", ""]
            out += [f"- {_md(line)}" for line in _lines(b, str, demangled)]
            out += ["", "</details>"]
    return "\n".join(out)
