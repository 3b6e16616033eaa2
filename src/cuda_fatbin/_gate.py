# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""``scan`` as a release gate: policies per binary and GPU, alternatives, the kernels a GPU cannot load.

:func:`missing_kernels` runs in the worker that read a binary (it needs the fatbins); :func:`judge_report`
runs on the whole report (it needs every binary's distribution and path): which binary fails which
rule of the :class:`~cuda_fatbin._policy.Policy` on which GPU, once groups of alternatives
(``--alternatives GLOB``) are taken into account. docs/ci.md and docs/scan.md describe both.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field

from ._policy import Policy, failure, ptx_gap
from ._select import UNCOVERED, _code, _specialised, fatbin_status

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from ._arch import Arch
    from ._reader import Fatbin
    from ._scan import BinaryReport
    from ._select import DriverSpec

__all__ = ["MAX_GLOB", "MAX_KERNELS", "Judgement", "check_globs", "jit_only", "judge_report", "missing_kernels",
           "require_ptx"]

#: Kernel names kept per binary and GPU (the rest are counted): cuBLAS holds tens of thousands
MAX_KERNELS = 1000
#: The longest ``--alternatives`` glob accepted
MAX_GLOB = 4096
_DRIVER_GAPS = {"driver predates GPU", "driver dropped GPU"}  # no kernel of any binary runs: none named


def _lacks(status: str, policy: Policy) -> bool:
    """A fatbin with this status on a GPU leaves its kernels without code the policy accepts."""
    return (status in UNCOVERED and status not in _DRIVER_GAPS) or (policy.sass_only and status == "PTX JIT")


def _named(status: str, policy: Policy) -> bool:
    """A binary with this status on a GPU has its missing kernels named (PART, NONE; PTX when SASS-only)."""
    return status == "partial" or _lacks(status, policy)


def _names(fb: Fatbin) -> list[str] | None:
    """The kernels of one fatbin, from its first entry that reads (SASS first); None if none reads."""
    from ._kernels import entry_kernels

    entries = sorted(fb.iter_entries(), key=lambda e: e.kind != "elf")
    for e in entries[:4]:  # a fatbin's entries hold the same kernels: a few tries, not every entry
        try:
            return entry_kernels(e)
        except (ValueError, MemoryError, RecursionError):
            continue
    return None


def _registered(fatbins: list[Fatbin]) -> list[Fatbin]:
    """The fatbins the CUDA runtime registers that are not arch-specific: every kernel of them may be called."""
    return [fb for fb in fatbins if fb.loadable and not fb.embedded and not _specialised(fb)]


def _pool(fatbins: list[Fatbin]) -> list[Fatbin]:
    """The fatbins whose kernels and PTX count: the registered ones, else those a binary loads otherwise (arch-
    specific, stored as data), else its relocatable (``-rdc``) ones, which reach a GPU through a device link."""
    return _registered(fatbins) or [fb for fb in fatbins if fb.loadable] or [fb for fb in fatbins if fb.relocatable]


def missing_kernels(
    fatbins: list[Fatbin], coverage: dict[str, dict[str, str]], gpus: list[Arch], driver: DriverSpec, policy: Policy
) -> dict[str, dict[str, Any]]:
    """Per GPU whose binary status is PART, NONE (or PTX under ``sass_only``): the kernels it cannot load.

    A kernel is missing when it is defined in a fatbin none of whose entries the GPU loads (or, under
    ``sass_only``, that the GPU loads only as PTX). Registered fatbins with code are looked at; a binary
    without them, its fatbins stored as data and arch-specific ones. Each fatbin's names are read once,
    from one entry (all entries of a fatbin define the same kernels).

    Returns
    -------
    dict
        ``"9.0"`` -> ``{"kernels": sorted mangled names (at most MAX_KERNELS), "more": names left out,
        "unread": fatbins whose names could not be read}``; only GPUs whose status names kernels.
    """
    failing = [g for g in gpus if _named(coverage.get(g.capability, {}).get("status", ""), policy)]
    if not failing:
        return {}
    pool = _pool(fatbins)
    cache: dict[object, Any] = {}
    read: dict[int, list[str] | None] = {}
    out: dict[str, dict[str, Any]] = {}
    for gpu in failing:
        names: dict[str, None] = {}
        unread = 0
        for i, fb in enumerate(pool):
            if not _lacks(fatbin_status(fb, gpu, driver, cache)[0], policy) or not _code(fb, cache):
                continue
            if i not in read:
                read[i] = _names(fb)
            found = read[i]
            if found is None:
                unread += 1
            else:
                names.update(dict.fromkeys(found))
        ordered = sorted(names)
        out[gpu.capability] = {"kernels": ordered[:MAX_KERNELS], "more": max(0, len(ordered) - MAX_KERNELS),
                               "unread": unread}  # fmt: skip
    return out


def jit_only(
    fatbins: list[Fatbin], coverage: dict[str, dict[str, str]], gpus: list[Arch], driver: DriverSpec
) -> list[str]:
    """For ``sass_only``: the GPUs on which a ``partial`` binary loads some of its modules only by PTX JIT.

    A partial binary's status is that of the modules that do not load; those that do may still load
    only by JIT-compiling their PTX at first launch, which a SASS-only policy does not accept.
    """
    partial = [g for g in gpus if coverage.get(g.capability, {}).get("status") == "partial"]
    cache: dict[object, Any] = {}
    pool = _pool(fatbins) if partial else []
    return [g.capability for g in partial if any(fatbin_status(fb, g, driver, cache)[0] == "PTX JIT"
                                                 and _code(fb, cache) for fb in pool)]  # fmt: skip


def require_ptx(fatbins: list[Fatbin]) -> str | None:
    """For ``require_ptx``: the first registered fatbin with code that keeps no PTX for newer GPUs, or None.

    Arch-specific fatbins (all entries ``a``/``f``) are left out: a library calls them on those GPUs only.
    """
    cache: dict[object, Any] = {}
    registered = _registered(fatbins)
    for fb in _pool(fatbins):
        gap = ptx_gap([(e.kind, e.arch) for e in fb.iter_entries()])
        if gap is not None and _code(fb, cache):
            return gap if len(registered) <= 1 else f"a fatbin at offset {fb.offset:#x}: {gap}"
    return None


def check_globs(globs: Sequence[str]) -> list[str]:
    """``--alternatives`` globs, checked: each a non-empty string of at most :data:`MAX_GLOB` characters.

    Raises
    ------
    ValueError
        A glob that is empty, too long or not a string (the message shows it escaped).

    Examples
    --------
    >>> check_globs(["wheel.whl::pkg/sm*/*.so"])
    ['wheel.whl::pkg/sm*/*.so']
    """
    from ._term import shown

    out = []
    for g in globs:
        if not isinstance(g, str) or not g or len(g) > MAX_GLOB:
            what = shown(g[:80]) + "..." if isinstance(g, str) and len(g) > 80 else shown(repr(g))
            raise ValueError(f"an alternatives glob must be a non-empty string of at most {MAX_GLOB} characters: "
                             f"{what}")  # fmt: skip
        out.append(g)
    return out


@dataclass
class Judgement:
    """What :func:`judge_report` found: failures, groups of alternatives, binaries not covered per GPU."""

    failures: list[dict[str, Any]] = field(default_factory=list)
    groups: list[dict[str, Any]] = field(default_factory=list)
    uncovered: dict[str, list[int]] = field(default_factory=dict)  # GPU -> indexes of binaries


def _matcher(globs: list[str]) -> list[re.Pattern[str]]:
    return [re.compile(fnmatch.translate(g), re.S) for g in globs]


def judge_report(binaries: list[BinaryReport], gpus: list[str], policy: Policy, globs: list[str]) -> Judgement:
    """Judge every binary on every GPU under ``policy``, members of a group of alternatives together.

    A binary belongs to the group of the first glob its path (as ``scan`` prints it) matches
    (``fnmatch``: ``*`` matches ``/`` too). A group covers a GPU when one member does; its members that do
    not are then not counted as uncovered, and the group says which member covers which GPU. A binary
    that could not be read is never covered.
    """
    judgement = Judgement(uncovered={g: [] for g in gpus})
    patterns = _matcher(globs)
    group_of: dict[int, int] = {}
    for i, b in enumerate(binaries):
        if b.error is None and b.has_device_code:
            hit = next((k for k, p in enumerate(patterns) if p.fullmatch(b.path)), None)
            if hit is not None:
                group_of[i] = hit
    members: dict[int, list[int]] = {k: [] for k in range(len(globs))}
    for i, k in group_of.items():
        members[k].append(i)
    rescued: dict[tuple[int, str], str] = {}  # (group, gpu) -> the path of the member that covers it
    for k, idx in members.items():
        for g in gpus:
            by = next((binaries[i].path for i in idx if _covers(binaries[i], g, policy)), None)
            if by is not None:
                rescued[k, g] = by
        judgement.groups.append({"glob": globs[k], "members": [binaries[i].path for i in idx],
                                 "covered_by": {g: rescued.get((k, g)) for g in gpus}})  # fmt: skip
    for i, b in enumerate(binaries):
        for g in gpus:
            rule = "unreadable" if b.error is not None else _rule(b, g, policy)
            if rule is None:
                continue
            grp = group_of.get(i)
            if grp is not None and (grp, g) in rescued:
                continue
            judgement.uncovered[g].append(i)
            if b.error is None:
                judgement.failures.append(_failure(b, g, rule))
        if policy.require_ptx and b.error is None and b.ptx_gap is not None:
            grp = group_of.get(i)
            if grp is None or all(binaries[j].ptx_gap is not None for j in members[grp]):
                judgement.failures.append({"path": b.path, "gpu": None, "rule": "require-ptx", "status": None,
                                           "reason": b.ptx_gap})  # fmt: skip
    return judgement


def _rule(b: BinaryReport, gpu: str, policy: Policy) -> str | None:
    row = b.coverage.get(gpu)
    if row is None:
        return None  # no device code judged for it (no entries): nothing to load
    rule = failure(row["status"], policy, b.distribution)
    return "sass-only" if rule is None and policy.sass_only and gpu in b.jit_only else rule


def _covers(b: BinaryReport, gpu: str, policy: Policy) -> bool:
    """A member of a group covers ``gpu`` for the group: it passes the policy there with kernels of its own."""
    row = b.coverage.get(gpu)
    return row is not None and row["status"] != "no kernels" and _rule(b, gpu, policy) is None


def _failure(b: BinaryReport, gpu: str, rule: str) -> dict[str, Any]:
    return {"path": b.path, "gpu": gpu, "rule": rule, "status": b.coverage[gpu]["status"],
            "reason": b.coverage[gpu]["reason"]}  # fmt: skip
