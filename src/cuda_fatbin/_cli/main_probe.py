# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""``cuda-fatbin probe``: check the selection model on this GPU: run tagged fatbins, compare."""

from __future__ import annotations

import argparse
import sys

from ._common import Failure, _positive_int, _print_json, _table, add_command


def configure_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``probe`` subcommand's options."""
    p = add_command(
        subparsers, "probe", help="check the selection model on this GPU: run tagged fatbins, compare (minutes)"
    )
    p.add_argument("--case", action="append", default=[], metavar="TEXT",
                   help="run only the cases whose name contains TEXT (repeatable)")  # fmt: skip
    p.add_argument(
        "-j", "--jobs", type=_positive_int, help="cases run at once, each in its own process (default: CPU count)"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output (schemas/probe.json)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._driver import NoDriverError
    from .._probe import probe
    from .._term import shown

    show = sys.stderr.isatty()  # --jobs is at least 1: argparse checked it (_positive_int)

    def progress(done: int, total: int, name: str) -> None:
        print(f"\r[{done}/{total}] {shown(name)[:60]}".ljust(78), end="", file=sys.stderr)

    try:
        report = probe(jobs=args.jobs, select=args.case, progress=progress if show else None)
    except NoDriverError as e:
        raise Failure(str(e)) from None
    if show:
        print("\r".ljust(80) + "\r", end="", file=sys.stderr)
    if args.json:
        _print_json(report.to_dict())
        return 0 if report.ok else 1
    rows = []
    for r in report.results:
        agree = "-" if r.not_observable is not None else ("yes" if r.agree else "NO")
        observed = f"not observable: {r.not_observable}" if r.not_observable is not None else r.observed
        rows.append((shown(r.case.name), shown("; ".join(e.describe() for e in r.case.entries)), r.case.env_text,
                     shown(observed), r.predicted, agree))  # fmt: skip
    _table(["case", "entries", "env", "observed", "predicted", "agree"], rows)
    print(f"\n{report.gpu_name} (compute capability {report.capability}), driver {report.driver}: "
          f"{len(report.run)} cases run in {report.seconds:.0f} s, {len(report.disagreements)} disagreement(s), "
          f"{len(report.results) - len(report.run)} not observable here")  # fmt: skip
    return 0 if report.ok else 1
