# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""``cuda-fatbin scan``: will the binaries of an environment, wheel or folder run on these GPUs?"""

from __future__ import annotations

import argparse
import os
import sys

from ._common import (
    DRIVER_HELP,
    GPU_HELP,
    JSON_SCHEMA,
    UsageError,
    _gpus,
    _installed_driver,
    _must_exist,
    _positive_int,
    _print_json,
    _shown,
    _table,
    add_command,
)
from ._gate_options import add_gate_options, gate_policy, gpu_specs, output_format
from ._scan_report import print_gate_text, print_markdown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .._scan import ScanReport


def configure_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``scan`` subcommand's options."""
    p = add_command(subparsers, "scan", help="will the binaries of an environment, wheel or folder run on these GPUs?")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="files, directories, .whl/.zip archives, conda packages, container images "
                        "(default: this Python's site-packages)")  # fmt: skip
    p.add_argument("--gpu", action="append", metavar="SPEC", help=GPU_HELP + "; or gpus in the --policy file")
    p.add_argument("--driver", help=DRIVER_HELP)
    p.add_argument("--no-embedded", action="store_true", help="skip the search for fatbins stored as data")
    p.add_argument("--fail-if-empty", action="store_true",
                   help="exit 1 when no binary with device code is found (for CI)")  # fmt: skip
    p.add_argument("-j", "--jobs", type=_positive_int, help="worker processes (default: the CPU count)")
    p.add_argument("--json", action="store_true", help="machine-readable output (docs/cli.md)")
    p.add_argument("--wide", action="store_true", help="one line per row, however wide (no wrapping to the terminal)")
    add_gate_options(p, alternatives=True)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._scan import scan

    form = output_format(args)
    policy = gate_policy(args)
    args.driver = _installed_driver(args.driver, "--driver")
    gpus = _gpus(gpu_specs(args, policy), args.driver)
    for p in args.paths:
        _must_exist(p)
    show = sys.stderr.isatty() and not args.json

    def progress(done: int, total: int, path: str) -> None:
        print(f"\r[{done}/{total}] {_shown(os.path.basename(path))[:50]}".ljust(70), end="", file=sys.stderr)

    try:
        report = scan(args.paths or None, gpus=gpus, driver=args.driver, embedded=not args.no_embedded,
                      max_workers=args.jobs, progress=progress if show else None, policy=policy,
                      alternatives=args.alternatives)  # fmt: skip
    except ValueError as e:  # a glob: checked before anything is read
        raise UsageError(f"--alternatives: {e}") from None
    if show:
        print("\r".ljust(72) + "\r", end="", file=sys.stderr)
    if args.json:
        _print_json({"schema": JSON_SCHEMA, **report.to_dict()})
        return 0 if report.covered and not _empty(args, report) else 1
    found = report.judgement()
    if form == "markdown":
        print_markdown(report, found, _MARKS)
        return 0 if report.covered and not _empty(args, report) else 1
    dists = report.distributions()
    with_code = [b for b in report.binaries if b.has_device_code]
    bad_inputs = report.unreadable
    print(f"{report.files_read} binaries read, {len(with_code)} with device code, in {len(dists)} distribution(s)"
          + (f"; driver {report.driver}" if report.driver else "; no driver limit")
          + (f"; {len(bad_inputs)} input(s) could not be read" if bad_inputs else "") + "\n")  # fmt: skip
    rows = [(d["distribution"], d["binaries"], *(_MARKS[d["coverage"][g]] for g in report.gpus)) for d in dists]
    _table(["distribution", "binaries", *report.gpus], rows, wide=args.wide)
    print("\nSASS = SASS for that arch, SASS~ = compatible SASS, PTX = JIT-compiled, PART = some modules only "
          "(per-GPU kernels), DRIVER = needs a newer driver, NONE = no entry, ERROR = could not be read, "
          "OLDDRV = the driver predates the GPU, DROPPED = the driver's branch dropped the GPU "
          "(docs/scan.md)")  # fmt: skip
    print_gate_text(report, found)
    if bad_inputs:
        print(f"\n{len(bad_inputs)} input(s) could not be read (not covered for any GPU):")
        for b in bad_inputs:
            print(f"  {_shown(b.path)}: {_shown(b.error)}")
    if report.skipped:
        print("\nnot read: " + ", ".join(_counted(n, k) for k, n in sorted(report.skipped.items()))
              + " (symlinks inside a folder are never followed)")  # fmt: skip
    if not with_code and not bad_inputs:
        print("\nno binary with device code found" + (" (--fail-if-empty)" if args.fail_if_empty else ""),
              file=sys.stderr)  # fmt: skip
    else:
        print("\nevery GPU is covered" if report.covered else "\nsome GPU is NOT covered", file=sys.stderr)
    return 0 if report.covered and not _empty(args, report) else 1


def _empty(args: argparse.Namespace, report: ScanReport) -> bool:
    """``--fail-if-empty`` and no binary with device code found: a CI run that read nothing fails."""
    return bool(args.fail_if_empty) and not any(b.has_device_code for b in report.binaries)


_MARKS = {"SASS exact": "SASS", "SASS compatible": "SASS~", "PTX JIT": "PTX", "partial": "PART",
          "needs newer driver": "DRIVER", "no entry": "NONE", "no kernels": "-", "unreadable": "ERROR",
          "driver predates GPU": "OLDDRV", "driver dropped GPU": "DROPPED", None: "-"}  # fmt: skip


_SKIPPED_WORDS = {"symlink": ("symlink", "symlinks"),
                  "not a regular file": ("FIFO, socket or device", "FIFOs, sockets or devices"),
                  "Mach-O": ("Mach-O file", "Mach-O files"),
                  "ar in an archive": ("ar archive inside an archive", "ar archives inside an archive"),
                  "thin ar in an archive": ("thin ar archive inside an archive",
                                            "thin ar archives inside an archive")}  # fmt: skip


def _counted(n: int, kind: str) -> str:
    """``2 symlinks``, ``1 FIFO, socket or device``: a count of what ``scan`` passed over (``ScanReport.skipped``)."""
    one, many = _SKIPPED_WORDS.get(kind, (kind, kind))
    return f"{n} {one if n == 1 else many}"
