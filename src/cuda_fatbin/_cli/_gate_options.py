# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The release-gate options ``scan`` and ``which`` share: the policy, ``--format`` (docs/ci.md)."""

from __future__ import annotations

import argparse

from ._common import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .._policy import Policy

FORMATS = ("text", "json", "markdown")


def add_gate_options(p: argparse.ArgumentParser, *, alternatives: bool) -> None:
    """``--policy``, ``--sass-only``, ``--require-ptx``, ``--allow-partial`` (and ``--alternatives``), ``--format``."""
    g = p.add_argument_group("release gate (docs/ci.md)")
    g.add_argument(
        "--policy",
        metavar="FILE",
        help="TOML policy file: sass_only, require_ptx, allow_partial, gpus (the options below add to it)",
    )
    g.add_argument(
        "--sass-only",
        action="store_true",
        help="a GPU is covered only by SASS: PTX JIT-compiled at first launch is not covered",
    )
    g.add_argument(
        "--require-ptx",
        action="store_true",
        help="every binary keeps PTX that JIT-compiles on GPUs newer than any it has SASS for",
    )
    g.add_argument(
        "--allow-partial",
        action="append",
        metavar="DIST",
        help="this distribution may be partial (repeatable); given, every other partial binary fails",
    )
    if alternatives:
        g.add_argument(
            "--alternatives",
            action="append",
            metavar="GLOB",
            default=[],
            help="the binaries whose paths (as printed) match this glob are alternatives: a GPU is "
            "covered when one of them covers it (repeatable; e.g. 'w.whl::pkg/sm*/*.so')",
        )
    p.add_argument("--format", choices=FORMATS,
                   help="text (default), json (as --json) or markdown (a CI job summary: a table per GPU)")  # fmt: skip


def gate_policy(args: argparse.Namespace) -> Policy:
    """The policy of the command line: ``--policy``'s file with the flags added; a bad file is a usage error."""
    from .._policy import Policy, PolicyError, load_policy

    try:
        base = load_policy(args.policy) if args.policy is not None else Policy()
        flags = Policy(sass_only=args.sass_only, require_ptx=args.require_ptx,
                       allow_partial=None if args.allow_partial is None else frozenset(args.allow_partial))  # fmt: skip
    except PolicyError as e:
        raise UsageError(f"--policy: {e}") from None
    return base.merged(flags)


def output_format(args: argparse.Namespace) -> str:
    """``text``, ``json`` or ``markdown``: ``--json`` is ``--format json``; it sets ``args.json`` to match."""
    if args.json and args.format not in (None, "json"):
        raise UsageError(f"--json and --format {args.format} disagree: give one")
    chosen: str = "json" if args.json else args.format or "text"
    args.json = chosen == "json"
    return chosen


def gpu_specs(args: argparse.Namespace, policy: Policy) -> list[str]:
    """``--gpu`` values and the policy's GPUs; a usage error when neither names one."""
    specs = list(args.gpu or []) + list(policy.gpus or [])
    if not specs:
        raise UsageError("no GPU to check: give --gpu (e.g. --gpu 80;90) or gpus in the --policy file")
    return specs
