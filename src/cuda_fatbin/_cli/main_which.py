# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""``cuda-fatbin which``: which entry each GPU would load; exit 1 if some GPU is not covered."""

from __future__ import annotations

import argparse
import sys

from ._common import (
    DRIVER_HELP,
    GPU_HELP,
    JSON_SCHEMA,
    Failure,
    _fatbins,
    _gpus,
    _installed_driver,
    _print_json,
    _shown,
    _table,
    _where,
    add_command,
)
from ._gate_options import add_gate_options, gate_policy, gpu_specs, output_format

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time: see benchmarks/bench_cli.py)
if TYPE_CHECKING:
    from typing import Any

    from .._arch import Arch
    from .._policy import Policy
    from .._reader import Fatbin


def configure_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``which`` subcommand's options."""
    p = add_command(subparsers, "which", help="which entry each GPU would load; exit 1 if some GPU is not covered")
    p.add_argument("file", metavar="FILE", help="a fatbin, cubin, PTX, object, shared library or executable")
    p.add_argument("--gpu", action="append", metavar="SPEC", help=GPU_HELP + "; or gpus in the --policy file")
    p.add_argument("--embedded", action="store_true", help="also check fatbins stored as data")
    p.add_argument("--driver", help=DRIVER_HELP)
    p.add_argument("--force-ptx-jit", action="store_true", help="as with CUDA_FORCE_PTX_JIT=1")
    p.add_argument("--disable-ptx-jit", action="store_true", help="as with CUDA_DISABLE_PTX_JIT=1")
    p.add_argument("--jit-cache", choices=["warm", "cold"],
                   help="the driver's JIT cache holds this file's JIT output (warm) or not (cold)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="machine-readable output (docs/cli.md)")
    p.add_argument("--wide", action="store_true", help="one line per row, however wide (no wrapping to the terminal)")
    add_gate_options(p, alternatives=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._reader import FatbinFormatError
    from .._select import coverage, judge

    form = output_format(args)
    policy = gate_policy(args)
    args.driver = _installed_driver(args.driver, "--driver")
    gpus = _gpus(gpu_specs(args, policy), args.driver)
    try:
        every = _fatbins(args.file, True, True)  # the verdict sees what scan sees: stored and relocatable fatbins too
    except Failure as e:
        return _failed(args, str(e))
    except FatbinFormatError as e:
        return _failed(args, f"{_shown(args.file)}: {e}")  # as inspect and extract word it
    fatbins = [fb for fb in every if fb.loadable and (args.embedded or not fb.embedded)]
    # The judgement scan gives the same binary (docs/scan.md); it models no JIT variable: then the rows decide.
    verdict = None if args.force_ptx_jit or args.disable_ptx_jit or args.jit_cache else judge(every, gpus, args.driver)
    if not fatbins and not verdict:
        return _failed(args, f"{_shown(args.file)}: no device code in it")
    jit_cache = {"warm": True, "cold": False}.get(args.jit_cache)
    kw = {"driver": args.driver, "force_ptx_jit": args.force_ptx_jit, "disable_ptx_jit": args.disable_ptx_jit,
          "jit_cache": jit_cache}  # fmt: skip
    results = [(fb, coverage(fb, gpus, **kw)) for fb in fatbins]
    gate = _gate(every, results, verdict, gpus, args.driver, policy)
    covered = not gate["failures"]
    if args.json:
        doc = {
            "schema": JSON_SCHEMA, "file": args.file, "driver": args.driver, "covered": covered,
            "verdict": verdict,
            "fatbins": [{"offset": fb.offset, "section": fb.section, "embedded": fb.embedded, "gpus": [
                {"gpu": str(r.gpu), "capability": r.gpu.capability, "status": _status(args, fb, r),
                 "reason": r.reason, "unconfirmed": r.unconfirmed, "rules": list(r.rules),
                 "cache_dependent": r.cache_dependent,
                 "entry": r.entry.as_dict() if r.entry else None} for r in rows
            ]} for fb, rows in results],
            **gate, "kernels": _kernels_json(gate["kernels"]),
        }  # fmt: skip
        _print_json(doc)
        return 0 if covered else 1
    if form == "markdown":
        _print_markdown(args, gpus, results, verdict, gate)
        return 0 if covered else 1
    _print_text(args, every, results, verdict)
    _print_gate(gate, verdict)
    if any(g.sm == 101 for g in gpus):  # sm_101 still parses: say what it names today
        print("\nnote: 10.1 is Jetson Thor as CUDA 12.8-12.9 name it; a CUDA 13 driver reports it as 11.0 (sm_110)",
              file=sys.stderr)  # fmt: skip
    print("\nevery GPU is covered" if covered else "\nsome GPU is NOT covered", file=sys.stderr)
    return 0 if covered else 1


def _failed(args: argparse.Namespace, message: str) -> int:
    """The file could not be judged: exit 1, with a document saying why under --json."""
    if not args.json:
        raise Failure(message)
    _print_json({"schema": JSON_SCHEMA, "file": args.file, "driver": args.driver, "covered": False, "verdict": None,
                 "fatbins": [], "error": message, "policy": None, "failures": [], "kernels": {}})  # fmt: skip
    return 1


def _status(args: argparse.Namespace, fb: Fatbin, r: Any) -> str:
    """The row's status; "needs newer driver" where only the driver stands in the way (as in the verdict)."""
    from .._nvidia import DRIVER_DROPPED_GPU, DRIVER_PREDATES_GPU

    if r or args.driver is None or r.status in (DRIVER_PREDATES_GPU, DRIVER_DROPPED_GPU):
        return str(r.status)
    from .._select import select_entry

    free = select_entry(fb, r.gpu, force_ptx_jit=args.force_ptx_jit, disable_ptx_jit=args.disable_ptx_jit,
                        jit_cache={"warm": True, "cold": False}.get(args.jit_cache))  # fmt: skip
    return "needs newer driver" if free else str(r.status)


def _print_text(args: argparse.Namespace, every: list[Fatbin], results: list[tuple[Fatbin, Any]],
                verdict: dict[str, Any] | None) -> None:  # fmt: skip
    """The tables of ``which`` without --json: per fatbin (up to 8), then the verdict of several fatbins."""
    shown = results if len(results) <= 8 else []
    for fb, rows in shown:
        if len(results) > 1:
            print(f"{_shown(_where(fb))}:")
        table = [(r.gpu.capability, _status(args, fb, r), r.reason + (" [reported rule]" if r.unconfirmed else ""))
                 for r in rows]  # fmt: skip
        _table(["gpu", "loads", "why"], table, wide=args.wide)
        print()
    if verdict is not None and (len(every) != 1 or every[0].relocatable or every[0].embedded):
        print(
            f"{_shown(args.file)}: {len(every)} fatbins ({sum(fb.relocatable for fb in every)} relocatable, "
            f"{sum(fb.embedded for fb in every)} stored as data); per GPU (docs/scan.md):"
        )
        _table(["gpu", "status", "why"], [(g, v["status"], v["reason"]) for g, v in verdict.items()], wide=args.wide)
    if any(r.cache_dependent for _, rows in results for r in rows):
        print("\nWith CUDA_DISABLE_PTX_JIT=1 the result depends on the driver's JIT cache: PTX compiled earlier on "
              "the machine still runs (--jit-cache warm|cold to choose)")  # fmt: skip
    if any(r.unconfirmed for _, rows in shown for r in rows):
        print("\n[reported rule]: the decision rests on a rule from NVIDIA's documentation that no GPU run of ours "
              "has confirmed yet (cuda_fatbin.RULES)")  # fmt: skip


def _gate(every: list[Fatbin], results: list[tuple[Fatbin, Any]], verdict: dict[str, Any] | None, gpus: list[Arch],
          driver: str | None, policy: Policy) -> dict[str, Any]:  # fmt: skip
    """The policy's failures per GPU (from the verdict, or each fatbin's row where there is none), the
    require-ptx failure, the kernels each failing GPU cannot load (docs/ci.md)."""
    from .._gate import jit_only, missing_kernels, require_ptx
    from .._policy import failure

    failures: list[dict[str, Any]] = []
    jit = jit_only(every, verdict, gpus, driver) if verdict and policy.sass_only else []
    for g in gpus:
        if verdict is not None and g.capability in verdict:
            row = verdict[g.capability]
            rule = failure(row["status"], policy)
            rule = "sass-only" if rule is None and g.capability in jit else rule
            if rule is not None:
                failures.append({"gpu": g.capability, "rule": rule, "status": row["status"], "reason": row["reason"]})
            continue
        for _fb, rows in results:
            r = next(r for r in rows if r.gpu == g)
            rule = "not covered" if not r else failure(str(r.status), policy)
            if rule is not None:
                failures.append({"gpu": g.capability, "rule": rule, "status": str(r.status), "reason": r.reason})
                break
    gap = require_ptx(every) if policy.require_ptx else None
    if gap is not None:
        failures.append({"gpu": None, "rule": "require-ptx", "status": None, "reason": gap})
    kernels = missing_kernels(every, verdict, gpus, driver, policy) if verdict else {}
    p = {"sass_only": policy.sass_only, "require_ptx": policy.require_ptx,
         "allow_partial": None if policy.allow_partial is None else sorted(policy.allow_partial)}  # fmt: skip
    return {"policy": p, "failures": failures, "kernels": kernels}


def _kernels_json(kernels: dict[str, Any]) -> dict[str, Any]:
    from .._kernels import demangle_all

    names = demangle_all(n for row in kernels.values() for n in row["kernels"])
    return {g: {**row, "kernels": [{"name": n, "demangled": names[n]} for n in row["kernels"]]}
            for g, row in kernels.items()}  # fmt: skip


_WORDS = {"sass-only": "PTX JIT only (--sass-only)", "allow-partial": "partial, not allowed (--allow-partial)",
          "require-ptx": "no PTX for newer GPUs (--require-ptx)"}  # fmt: skip


def _print_gate(gate: dict[str, Any], verdict: dict[str, Any] | None) -> None:
    """The policy's failures beyond 'no entry'; for a partial file, the kernels each GPU cannot load (where
    nothing loads, every kernel is missing: --json names them)."""
    from .._kernels import demangle_all
    from ._scan_report import SHOWN_KERNELS

    for f in gate["failures"]:
        if f["rule"] in _WORDS:
            print(f"\n{f['gpu'] or 'newer GPUs'}: {_WORDS[f['rule']]}: {_shown(f['reason'])}")
    partial = {g: row for g, row in gate["kernels"].items() if verdict and verdict[g]["status"] == "partial"}
    names = demangle_all(n for row in partial.values() for n in row["kernels"][:SHOWN_KERNELS])
    for g, row in partial.items():
        total = len(row["kernels"]) + row["more"]
        if total:
            listed = ", ".join(names[n] for n in row["kernels"][:SHOWN_KERNELS])
            more = total - min(SHOWN_KERNELS, len(row["kernels"]))
            print(f"\n{g}: {total} kernels without code: {_shown(listed)}" + (f" and {more} more" if more else ""))


def _print_markdown(args: argparse.Namespace, gpus: list[Arch], results: list[tuple[Fatbin, Any]],
                    verdict: dict[str, Any] | None, gate: dict[str, Any]) -> None:  # fmt: skip
    """A CI job summary: the verdict, then a table per GPU of what each fatbin loads (names escaped)."""
    from .._term import markdown as md

    failing = {f["gpu"]: f for f in gate["failures"]}
    print(f"## cuda-fatbin which {md(args.file)}: "
          + ("every GPU is covered" if not gate["failures"] else "some GPU is **NOT** covered") + "\n")  # fmt: skip
    if None in failing:
        print(f"PTX for newer GPUs (--require-ptx): {md(failing[None]['reason'])}\n")
    for g in gpus:  # every GPU, also where no fatbin is loaded as it is (relocatable or stored ones only)
        f = failing.get(g.capability)
        head = f"{md(f['rule'])}: {md(f['reason'])}" if f else "covered"
        if verdict and g.capability in verdict:
            head = f"{md(verdict[g.capability]['status'])}; " + head
        print(f"### GPU {g.capability}: {head}\n")
        if results:
            print("| fatbin | loads | why |\n|---|---|---|")
        for fb, rows in results[:100]:
            r = next(r for r in rows if r.gpu == g)
            print(f"| {md(_where(fb))} | {md(_status(args, fb, r))} | {md(r.reason)} |")
        if len(results) > 100:
            print(f"\n{len(results) - 100} more fatbins not listed (--format json has every one)")
        print()
