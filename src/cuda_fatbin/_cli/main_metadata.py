# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""``cuda-fatbin metadata``: the wheel-variant properties and conda bound the bytes justify; ``--check``."""

from __future__ import annotations

import argparse
import os
import sys

from ._common import JSON_SCHEMA, _must_exist, _positive_int, _print_json, _shown, add_command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .._metadata import MetadataReport, PackageMetadata


def configure_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``metadata`` subcommand's options."""
    p = add_command(subparsers, "metadata",
                    help="the wheel-variant properties (sm_arch :: 90_real...) the bytes justify")  # fmt: skip
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="wheels, files, directories, conda packages, container images "
                        "(default: this Python's site-packages)")  # fmt: skip
    p.add_argument("--check", action="store_true",
                   help="compare with the variant properties each wheel declares (*.dist-info/variant.json): "
                        "exit 1 when one claims more than the bytes give")  # fmt: skip
    p.add_argument("--no-embedded", action="store_true", help="skip the search for fatbins stored as data")
    p.add_argument("-j", "--jobs", type=_positive_int, help="worker processes (default: the CPU count)")
    p.add_argument("--json", action="store_true", help="machine-readable output (schemas/metadata.json)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._metadata import metadata

    for p in args.paths:
        _must_exist(p)
    show = sys.stderr.isatty() and not args.json

    def progress(done: int, total: int, path: str) -> None:
        print(f"\r[{done}/{total}] {_shown(os.path.basename(path))[:50]}".ljust(70), end="", file=sys.stderr)

    report = metadata(args.paths or None, check=args.check, embedded=not args.no_embedded, max_workers=args.jobs,
                      progress=progress if show else None)  # fmt: skip
    if show:
        print("\r".ljust(72) + "\r", end="", file=sys.stderr)
    failed = not report.consistent if args.check else bool(report.unreadable)
    if args.json:
        _print_json({"schema": JSON_SCHEMA, **report.to_dict()})
        return 1 if failed else 0
    _text(report, args.check)
    return 1 if failed else 0


def _text(report: MetadataReport, check: bool) -> None:
    if not report.packages:
        print(f"{report.files_read} binaries read; none holds device code: no property is justified")
    for pkg in report.packages:
        _package(pkg, check)
    bad = report.unreadable
    if bad:
        print(f"\n{len(bad)} input(s) could not be read:")
        for b in bad:
            print(f"  {_shown(b.path)}: {_shown(b.error)}")
    if check:
        verdict = "consistent" if report.consistent else "NOT consistent: a declared property claims more"
        print(f"\ncheck: {verdict}", file=sys.stderr)


def _package(pkg: PackageMetadata, check: bool) -> None:
    code = [b for b in pkg.binaries if b.has_kernels]
    print(f"{_shown(pkg.package)}: {len(code)} binary(ies) with device code")
    for prop in pkg.properties:
        print(f"  {prop}")
    for need in pkg.needs:
        print(f"    needs CUDA {need['cuda']}: {need['rule']}")
    if code and not pkg.virtual:
        print("  no _virtual: a binary lacks PTX that runs on every GPU from some capability on")
    bound = f"cuda-arch >={pkg.cuda_arch}" if pkg.cuda_arch else "none (a binary has no PTX for newer GPUs)"
    print(f"  conda: {bound}" if code else "  no device code: no property is justified")
    if len(code) > 1:
        for b in code:
            values = [p.rsplit(" :: ", 1)[1] for p in b.to_dict()["properties"] if ":: sm_arch ::" in p]
            bound = b.to_dict()["cuda_version_lower_bound"]
            values += [f"cuda>={bound}"] if bound else []
            print(f"    {_shown(b.path)}: {' '.join(values) or '-'}")
    if check and pkg.declared is not None:
        _declared(pkg)
    print()


def _declared(pkg: PackageMetadata) -> None:
    d = pkg.declared
    assert d is not None
    if d.error is not None:
        print(f"  declared: cannot be read: {_shown(d.error)}")
        return
    if d.source is None:
        print("  declared: none (no *.dist-info/variant.json: not a variant wheel)")
        return
    print(f"  declared (variant {_shown(d.label)}): {len(d.properties)} properties")
    for c in pkg.check:
        mark = {"justified": "ok", "unjustified": "CLAIMS MORE", "not checked": "-"}[c["verdict"]]
        print(f"    {mark:>11}  {_shown(c['property'])}: {_shown(c['reason'])}")
