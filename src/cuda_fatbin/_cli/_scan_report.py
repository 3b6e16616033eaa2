# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""``scan``'s release-gate report: per GPU the binaries that fail and why, their missing kernels, the
groups of alternatives; as text or as markdown for a CI job summary (docs/ci.md)."""

from __future__ import annotations

from ._common import _shown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .._gate import Judgement
    from .._scan import BinaryReport, ScanReport

#: Binaries listed per GPU and kind in text, kernels named per binary and GPU (the rest are counted)
SHOWN_BINARIES = 5
SHOWN_KERNELS = 5
#: Rows of a markdown table per GPU (the rest are counted)
MARKDOWN_ROWS = 100

_RULE_WORDS = {"not covered": "no entry loads", "sass-only": "PTX JIT only (--sass-only)",
               "allow-partial": "partial, not allowed (--allow-partial)",
               "require-ptx": "no PTX for newer GPUs"}  # fmt: skip


def _shown_kernels(report: ScanReport, per_binary: int) -> dict[str, str]:
    """The demangled names of the kernels the report will show: one demangling batch for all of them."""
    names = [n for b in report.binaries for row in b.kernels.values() for n in row["kernels"][:per_binary]]
    if not names:  # _kernels (its ELF reader, its regular expressions) is not imported for nothing (start-up time)
        return {}
    from .._kernels import demangle_all

    return demangle_all(names)


def kernel_line(b: BinaryReport, gpu: str, names: dict[str, str], shown: int = SHOWN_KERNELS) -> str | None:
    """``3 kernels without code for 9.0: a, b, c`` (demangled, bounded, with a count of the rest)."""
    row = b.kernels.get(gpu)
    if not row or not (row["kernels"] or row["unread"]):
        return None
    total = len(row["kernels"]) + row["more"]
    listed = ", ".join(names.get(n, n) for n in row["kernels"][:shown])
    more = total - min(shown, len(row["kernels"]))
    text = f"{total} kernel{'s' if total != 1 else ''} without code for {gpu}" + (f": {listed}" if listed else "")
    text += f" and {more} more" if more else ""
    return text + (f" ({row['unread']} fatbins' names could not be read)" if row["unread"] else "")


def print_gate_text(report: ScanReport, found: Judgement) -> None:
    """Per GPU: the binaries not covered (with the rule and kernels), the partial ones' missing kernels;
    the require-ptx failures; the groups of alternatives."""
    from .._gate import _rule

    names = _shown_kernels(report, SHOWN_KERNELS)
    for g in report.gpus:
        bad = [report.binaries[i] for i in found.uncovered[g] if not report.binaries[i].error]
        if bad:
            print(f"\n{g}: {len(bad)} binaries cannot run" + ("; the first 5:" if len(bad) > SHOWN_BINARIES else ":"))
            for b in bad[:SHOWN_BINARIES]:
                rule = _rule(b, g, report.policy) or "not covered"  # by binary: two may share a path
                tag = "" if rule == "not covered" else f"[{_RULE_WORDS[rule]}] "
                print(f"  {_shown(b.path)}: {tag}{_shown(b.coverage[g]['reason'])}")
                line = kernel_line(b, g, names)
                if line:
                    print(f"    {_shown(line)}")
        listed = {id(b) for b in bad}
        part = [b for b in report.binaries if id(b) not in listed and b.coverage.get(g, {}).get("status") == "partial"
                and kernel_line(b, g, names)]  # fmt: skip
        if part:
            print(f"\n{g}: {len(part)} binaries load some modules only (PART)"
                  + ("; the first 5:" if len(part) > SHOWN_BINARIES else ":"))  # fmt: skip
            for b in part[:SHOWN_BINARIES]:
                print(f"  {_shown(b.path)}: {_shown(kernel_line(b, g, names))}")
    ptx = [f for f in found.failures if f["rule"] == "require-ptx"]
    if ptx:
        print(f"\n--require-ptx: {len(ptx)} binaries keep no PTX for newer GPUs"
              + ("; the first 5:" if len(ptx) > SHOWN_BINARIES else ":"))  # fmt: skip
        for f in ptx[:SHOWN_BINARIES]:
            print(f"  {_shown(f['path'])}: {_shown(f['reason'])}")
    for group in found.groups:
        by = "; ".join(f"{g} " + (f"by {_shown(p)}" if p else "by none") for g, p in group["covered_by"].items())
        print(f"\nalternatives {_shown(group['glob'])} ({len(group['members'])} binaries): {by}")


def _policy_words(report: ScanReport) -> str:
    p = report.policy
    words = ["SASS only"] * p.sass_only + ["PTX required"] * p.require_ptx
    if p.allow_partial is not None:
        words.append("partial allowed for " + (", ".join(sorted(p.allow_partial)) or "none"))
    return ", ".join(words) or "default (an entry loads)"


def print_markdown(report: ScanReport, found: Judgement, marks: dict[Any, str]) -> None:
    """A CI job summary: the verdict, then a table per GPU (names escaped for markdown and control characters)."""
    from .._gate import _rule
    from .._term import markdown as md

    names = _shown_kernels(report, SHOWN_KERNELS)
    verdict = "every GPU is covered" if report.covered else "some GPU is **NOT** covered"
    with_code = [b for b in report.binaries if b.has_device_code or b.error]
    print(f"## cuda-fatbin scan: {verdict}\n")
    driver = f"; driver {md(report.driver)}" if report.driver else ""
    print(f"{report.files_read} binaries read, {len(with_code)} with device code or unreadable; policy: "
          f"{md(_policy_words(report))}{driver}\n")  # fmt: skip
    for g in report.gpus:
        failing = set(found.uncovered[g])
        order = sorted(range(len(report.binaries)), key=lambda i: (i not in failing, report.binaries[i].path))
        print(f"### GPU {g}: " + (f"{len(failing)} binaries not covered\n" if failing else "covered\n"))
        print("| binary | distribution | status | gate | kernels without code |\n|---|---|---|---|---|")
        for i in order[:MARKDOWN_ROWS]:
            b = report.binaries[i]
            status = "ERROR" if b.error else marks.get(b.coverage.get(g, {}).get("status"), "-")
            rule = (_rule(b, g, report.policy) or "not covered") if i in failing and not b.error else None
            gate = "unreadable" if b.error else _RULE_WORDS[rule] if rule else "ok"  # by binary: two may share a path
            line = kernel_line(b, g, names) or ""
            print(f"| {md(b.path)} | {md(b.distribution or '')} | {status} | {md(gate)} | {md(line)} |")
        if len(order) > MARKDOWN_ROWS:
            print(f"\n{len(order) - MARKDOWN_ROWS} more binaries not listed (--format json has every one)")
        print()
    ptx = [f for f in found.failures if f["rule"] == "require-ptx"]
    if ptx:
        print("### PTX for newer GPUs (--require-ptx)\n\n| binary | why |\n|---|---|")
        for f in ptx[:MARKDOWN_ROWS]:
            print(f"| {md(f['path'])} | {md(f['reason'])} |")
        print()
    for group in found.groups:
        print(f"### Alternatives {md(group['glob'])}\n\n| GPU | covered by |\n|---|---|")
        for g, p in group["covered_by"].items():
            print(f"| {g} | {md(p) if p else '**none**'} |")
        print()
