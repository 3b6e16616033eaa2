# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""``cuda-fatbin probe``: check the selection model against the local GPU and driver.

The probe builds a matrix of small fat binaries in-process (NVRTC + libnvfatbin), each entry a kernel
``tag`` that writes its own number, loads every case in a fresh process (a fresh, cold JIT cache in
``CUDA_CACHE_PATH``; the warm-cache cases run a warm-up first) and compares the entry that ran, or the
error that came back, with :func:`~cuda_fatbin.select_entry` for the same GPU and driver. The matrix
is systematic: for each rule of :data:`~cuda_fatbin.RULES`, the cases that can confirm or refute it on
this GPU (docs/selection.md lists them). Cases this machine cannot build (a compiler without that
arch, a libnvfatbin without ``concat``, no ``nvcc`` for an ``-rdc`` object) are reported as not
observable, with the reason.

The compile side (cuda.bindings, NVRTC, libnvfatbin) is imported when a probe runs, never at
``import cuda_fatbin``. The child processes use the driver through ``ctypes`` alone.
"""

from __future__ import annotations

import dataclasses
import datetime
import itertools
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ._arch import Arch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._select import Selection

__all__ = [
    "Builder",
    "Case",
    "CaseResult",
    "Entry",
    "NotObservable",
    "ProbeReport",
    "build_case",
    "matrix",
    "predict",
    "probe",
]

PROBE_SCHEMA = 1
TAG_SOURCE = 'extern "C" __global__ void tag(int* out) { *out = TAG; }\n'
_ENV_KEYS = ("CUDA_FORCE_PTX_JIT", "CUDA_DISABLE_PTX_JIT", "CUDA_CACHE_DISABLE", "CUDA_CACHE_PATH",
             "CUDA_CACHE_MAXSIZE", "CUDA_MODULE_LOADING")  # fmt: skip
_KIND_CODES = {"ptx": 0x01, "cubin": 0x02, "elf": 0x02}
_FLAG_A, _FLAG_F = 0x100000, 0x200000
_CASE_TIMEOUT = 120.0


class NotObservable(Exception):
    """A case that cannot be built or run on this machine; the message says why."""


@dataclass(frozen=True)
class Entry:
    """One entry of a probe case.

    Attributes
    ----------
    kind : {"cubin", "ptx", "ltoir", "reloc", "tile_ir"}
    arch : str
        ``sm_90``, ``sm_90a``, ``sm_100f`` (for PTX too: the entry's SM and suffix).
    tag : int
        The value its kernel writes.
    compression : {"none", "lz4", "zstd"}
    debug : bool
        The header's debug flag.
    producer : {"cuda", "opencl"}
    isa : str or None
        PTX: the ``.version`` written into the text (None: as NVRTC wrote it).
    header_arch, header_kind : str or None
        The header says this arch / kind around the payload built for ``arch`` / ``kind`` (a mismatch).
    concat : bool
        A member of the case's concatenated entry (libnvfatbin ``-concat``).
    container : int
        Which of the spliced containers (fatbins back to back) holds it.
    """

    kind: str
    arch: str
    tag: int
    compression: str = "none"
    debug: bool = False
    producer: str = "cuda"
    isa: str | None = None
    header_arch: str | None = None
    header_kind: str | None = None
    concat: bool = False
    container: int = 0

    def describe(self) -> str:
        """``ptx compute_90 ISA 8.8 lz4 (tag 3)``: what the entry is, in the table's words."""
        a = Arch.parse(self.arch)
        name = a.compute if self.kind in ("ptx", "reloc") else str(a)
        words = [self.kind, name]
        if self.isa:
            words.append(f"ISA {self.isa}")
        if self.compression != "none":
            words.append(self.compression)
        if self.debug:
            words.append("debug")
        if self.producer != "cuda":
            words.append(self.producer)
        if self.header_arch or self.header_kind:
            words.append(f"in a header saying {self.header_kind or self.kind} {self.header_arch or self.arch}")
        if self.concat:
            words.insert(0, "concat:")
        if self.container:
            words.append(f"[container {self.container + 1}]")
        return " ".join(words) + f" (tag {self.tag})"


@dataclass(frozen=True)
class Case:
    """One probe case: entries in container order, the environment and the JIT cache state.

    ``cache``: ``"cold"`` (a fresh cache folder), ``"warm"`` (one run of the same fatbin without the
    case's variables first) or ``"warm-other"`` (one run of a fatbin with other PTX of the same arch first).
    """

    name: str
    rule: str
    entries: tuple[Entry, ...]
    env: tuple[tuple[str, str], ...] = ()
    cache: str = "cold"

    @property
    def env_text(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.env) or "-"


@dataclass
class CaseResult:
    """A case and what happened: ``observed`` (``TAG n``, ``ERROR CUDA_ERROR_...``, ``CRASH SIGSEGV``,
    ``TIMEOUT``), ``predicted`` (``TAG n`` or ``ERROR``), ``agree``, the model's reason and rules."""

    case: Case
    observed: str = ""
    predicted: str = ""
    agree: bool = False
    reason: str = ""
    rules: tuple[str, ...] = ()
    not_observable: str | None = None
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        c = self.case
        return {"name": c.name, "rule": c.rule, "entries": [e.describe() for e in c.entries],
                "env": dict(c.env), "cache": c.cache, "observed": self.observed, "predicted": self.predicted,
                "agree": self.agree, "reason": self.reason, "rules": list(self.rules),
                "not_observable": self.not_observable, "detail": self.detail}  # fmt: skip


@dataclass
class ProbeReport:
    """The result of :func:`probe`: the machine, the library versions and every case.

    Attributes
    ----------
    gpu_name, capability : str
        The GPU (``"NVIDIA H200"``, ``"9.0"``).
    driver : int
        ``cuDriverGetVersion()`` (13000 for CUDA 13.0).
    versions : dict of str
        Python, cuda-fatbin, cuda-core, cuda-bindings, NVRTC and libnvfatbin versions.
    started : str
        UTC start time, ISO 8601.
    seconds : float
        Wall time of the whole run.
    jobs : int
        Cases run at once.
    results : list of CaseResult
        Every case in matrix order; ``run`` those that ran, ``disagreements`` those that did not agree.
    archs : tuple of int
        The SMs NVRTC could target (the matrix's archs follow from them).

    Examples
    --------
    >>> from cuda_fatbin import probe
    >>> report = probe(select=["tie ptx exact x3"])  # doctest: +SKIP
    >>> report.ok, len(report.run), report.to_dict()["gpu"]  # doctest: +SKIP
    (True, 24, {'name': 'NVIDIA H200', 'capability': '9.0'})
    """

    gpu_name: str
    capability: str
    driver: int
    versions: dict[str, str]
    started: str
    seconds: float
    jobs: int
    results: list[CaseResult] = field(default_factory=list)
    archs: tuple[int, ...] = ()  # the SMs NVRTC could target: the matrix's archs follow from them

    @property
    def run(self) -> list[CaseResult]:
        return [r for r in self.results if r.not_observable is None]

    @property
    def disagreements(self) -> list[CaseResult]:
        return [r for r in self.run if not r.agree]

    @property
    def ok(self) -> bool:
        """True when every case that ran agreed with the model."""
        return not self.disagreements

    def to_dict(self) -> dict[str, Any]:
        return {"schema": PROBE_SCHEMA, "gpu": {"name": self.gpu_name, "capability": self.capability},
                "driver": self.driver, "versions": self.versions, "started": self.started,
                "seconds": round(self.seconds, 1), "jobs": self.jobs, "nvrtc_archs": list(self.archs),
                "cases_run": len(self.run),
                "disagreements": len(self.disagreements),
                "not_observable": len(self.results) - len(self.run),
                "cases": [r.to_dict() for r in self.results]}  # fmt: skip


# ---------------------------------------------------------------------------------------------------
# the matrix


def _arch_or_none(text: str) -> str | None:
    try:
        return str(Arch.parse(text))
    except ValueError:
        return None


@dataclass(frozen=True)
class _Targets:
    """Archs of each relation to the GPU, as far as they exist (None: no such arch)."""

    exact: str
    compatible: str | None
    lower: str | None
    lower2: str | None
    higher: str | None


def _targets(gpu: Arch, supported: Sequence[int]) -> _Targets:
    from ._nvidia import is_tegra

    sms = sorted(set(supported))
    # a lower minor of the GPU's major, not a Tegra one (sm_87 on 8.9): the desktop rule's case; on a Tegra GPU
    # that desktop SASS asks whether it runs there (docs/selection.md, "Tegra")
    same_major_lower = [s for s in sms if s // 10 == gpu.major and s < gpu.sm and not is_tegra(Arch(s // 10, s % 10))]
    lower_major = [s for s in sms if s // 10 < gpu.major]
    higher = [s for s in sms if s > gpu.sm and s // 10 != gpu.major] or [s for s in sms if s > gpu.sm]
    return _Targets(
        exact=f"sm_{gpu.sm}",
        compatible=f"sm_{same_major_lower[-1]}" if same_major_lower else None,
        lower=f"sm_{lower_major[-1]}" if lower_major else None,
        lower2=f"sm_{lower_major[-2]}" if len(lower_major) > 1 else None,
        higher=f"sm_{higher[0]}" if higher else None,
    )


def _with_suffix(arch: str | None, suffix: str) -> str | None:
    return None if arch is None else _arch_or_none(arch + suffix)


_E = Entry
_FORCE = (("CUDA_FORCE_PTX_JIT", "1"),)
_DISABLE = (("CUDA_DISABLE_PTX_JIT", "1"),)


def matrix(gpu: Arch | str, supported: Sequence[int], *, driver_cuda: tuple[int, int] | None = None) -> list[Case]:
    """The probe's cases for a GPU of capability ``gpu`` and NVRTC archs ``supported`` (SM numbers).

    Cases whose archs do not exist for this GPU (no lower minor on 9.0, no ``f`` arch for 9.0) are
    still listed, with an entry arch ``"none"`` and rule ``"unobservable:<why>"``, so that the report
    says what this GPU cannot show.

    Examples
    --------
    >>> cases = matrix("9.0", [75, 80, 86, 89, 90, 100, 120])
    >>> len(cases) > 300
    True
    >>> [e.describe() for e in cases[0].entries]
    ['cubin sm_90 (tag 1)']
    >>> sum(c.rule == "tie_ptx_exact" for c in cases) > 50
    True
    """
    from ._nvidia import is_tegra

    g = Arch.parse(gpu).base
    t = _targets(g, supported)
    cases: list[Case] = []
    unobservable: list[tuple[str, str, str]] = []

    def add(name: str, rule: str, entries: Sequence[Entry], env: tuple[tuple[str, str], ...] = (),
            caches: Sequence[str] = ("cold", "warm")) -> None:  # fmt: skip
        for cache in caches:
            label = name + (f" [{cache}]" if len(caches) > 1 or cache != "cold" else "")
            cases.append(Case(label, rule, tuple(entries), env, cache))

    def orders(name: str, rule: str, entries: Sequence[Entry], env: tuple[tuple[str, str], ...] = (),
               caches: Sequence[str] = ("cold", "warm"), spliced: bool = False) -> None:  # fmt: skip
        """Every order of ``entries`` (2 or 3), in one container and, with ``spliced``, one per container."""
        for perm in itertools.permutations(entries):
            order = ",".join(str(e.tag) for e in perm)
            add(f"{name} <{order}>", rule, perm, env, caches)
            if spliced:
                split = [dataclasses.replace(e, container=i) for i, e in enumerate(perm)]
                add(f"{name} <{order}> spliced", rule, split, env, caches)

    rel = {"exact": t.exact, "compatible": t.compatible, "lower": t.lower, "higher": t.higher}
    # 1. one entry of each kind x arch relation x suffix
    for kind in ("cubin", "ptx"):
        for how, arch in rel.items():
            for suffix in ("", "a", "f"):
                full = _with_suffix(arch, suffix)
                name = f"single {kind} {how}{' ' + suffix if suffix else ''}"
                if full is None:
                    why = f"no {how} arch for {g.capability}" if arch is None else f"no arch {arch}{suffix}"
                    unobservable.append((name, _single_rule(kind, how, suffix), why))
                    continue
                add(f"{name}: {full}", _single_rule(kind, how, suffix), [_E(kind, full, 1)])
    # 2. kinds the driver does not take, relocatable PTX, concatenated entries
    add(f"ltoir {t.exact} alone", "ignored_kinds", [_E("ltoir", t.exact, 1)])
    add("tile_ir alone", "ignored_kinds", [_E("tile_ir", t.exact, 1)])
    if t.lower:
        orders("ltoir exact + ptx lower", "ignored_kinds", [_E("ltoir", t.exact, 1), _E("ptx", t.lower, 2)])
        orders("tile_ir + ptx lower", "ignored_kinds", [_E("tile_ir", t.exact, 1), _E("ptx", t.lower, 2)])
    add(f"reloc {t.exact} alone", "reloc_ptx", [_E("reloc", t.exact, 1)])
    orders("reloc exact + cubin exact", "sass_over_ptx", [_E("reloc", t.exact, 1), _E("cubin", t.exact, 2)])
    orders("reloc exact + ptx exact", "ptx_over_reloc", [_E("reloc", t.exact, 1), _E("ptx", t.exact, 2)])
    if t.lower:
        orders("reloc lower + ptx exact", "ptx_nearest", [_E("reloc", t.lower, 1), _E("ptx", t.exact, 2)])
    add("concat cubin exact", "concat_driver", [_E("cubin", t.exact, 1, concat=True, compression="lz4")])
    add("concat ptx exact", "concat_driver", [_E("ptx", t.exact, 1, concat=True, compression="lz4")])
    if t.lower:
        orders("concat cubin exact + plain ptx lower", "concat_driver",
               [_E("cubin", t.exact, 1, concat=True, compression="lz4"), _E("ptx", t.lower, 2)])  # fmt: skip
    # 3. preference between ranks (both orders)
    orders("cubin exact + ptx exact", "sass_over_ptx", [_E("cubin", t.exact, 1), _E("ptx", t.exact, 2)])
    exact_a = _with_suffix(t.exact, "a")
    if exact_a:
        orders("cubin exact + ptx exact a", "sass_over_ptx", [_E("cubin", t.exact, 1), _E("ptx", exact_a, 2)])
        orders("cubin exact a + cubin exact", "suffix_order", [_E("cubin", exact_a, 1), _E("cubin", t.exact, 2)])
        orders("ptx exact a + ptx exact", "suffix_order", [_E("ptx", exact_a, 1), _E("ptx", t.exact, 2)])
    else:
        unobservable.append(("suffix a vs plain", "suffix_order", f"no arch {t.exact}a"))
    exact_f = _with_suffix(t.exact, "f")
    if exact_f is None:
        unobservable.append(("suffix f vs a vs plain", "suffix_order_f", f"no arch {t.exact}f"))
    else:
        orders("cubin exact f + cubin exact", "suffix_order_f", [_E("cubin", exact_f, 1), _E("cubin", t.exact, 2)])
        orders("ptx exact f + ptx exact", "suffix_order_f", [_E("ptx", exact_f, 1), _E("ptx", t.exact, 2)])
    if t.compatible:
        orders("cubin compatible + ptx exact", "sass_over_ptx",
               [_E("cubin", t.compatible, 1), _E("ptx", t.exact, 2)])  # fmt: skip
        # SASS of a lower minor beside PTX that surely runs: on a desktop GPU the SASS is taken, on a Tegra GPU
        # (Orin, Thor) the PTX, as the Programming Guide says (docs/selection.md, "Tegra")
        orders("cubin compatible + ptx lower", "sass_tegra" if is_tegra(g) else "sass_lower_minor",
               [_E("cubin", t.compatible, 1), _E("ptx", t.lower or t.compatible, 2)])  # fmt: skip
    else:
        unobservable.append(("SASS compatible vs PTX", "sass_lower_minor", f"no lower minor of {g.major}.x"))
    if t.lower and t.lower2:
        orders("ptx lower + ptx lower2", "ptx_nearest", [_E("ptx", t.lower, 1), _E("ptx", t.lower2, 2)])
        orders("ptx exact + ptx lower", "ptx_nearest", [_E("ptx", t.exact, 1), _E("ptx", t.lower, 2)])
        orders("cubin lower + ptx lower2", "sass_other_major", [_E("cubin", t.lower, 1), _E("ptx", t.lower2, 2)])
    if t.higher and t.lower:
        orders("ptx higher + ptx lower", "ptx_lower", [_E("ptx", t.higher, 1), _E("ptx", t.lower, 2)])
        higher_f = _with_suffix(t.higher, "f")
        if higher_f:
            orders("cubin higher f + ptx lower", "family_other_major",
                   [_E("cubin", higher_f, 1), _E("ptx", t.lower, 2)])  # fmt: skip
    # 4. ties: equally ranked entries with differing attributes, 2 and 3 in every order, one container
    #    and spliced containers
    old_isa = _older_isa(driver_cuda)
    tie_groups: list[tuple[str, str, str, str]] = [("cubin", t.exact, "tie_sass", "exact")]
    if exact_a:
        tie_groups.append(("cubin", exact_a, "tie_sass", "exact a"))
    tie_groups.append(("ptx", t.exact, "tie_ptx_exact", "exact"))
    if exact_a:
        tie_groups.append(("ptx", exact_a, "tie_ptx_other", "exact a"))
    if t.lower:
        tie_groups.append(("ptx", t.lower, "tie_ptx_other", "lower"))
    for kind, arch, rule, how in tie_groups:
        variants = [_E(kind, arch, 1), _E(kind, arch, 2, compression="lz4"), _E(kind, arch, 3, debug=True)]
        if kind == "ptx":
            variants[2] = _E(kind, arch, 3, isa=old_isa)
        extra = [_E(kind, arch, 4, compression="zstd"), _E(kind, arch, 5, producer="opencl")]
        for a, b in itertools.combinations(variants + extra, 2):
            orders(f"tie {kind} {how} {_attrs(a)}/{_attrs(b)}", rule, [a, b], spliced=(a.tag, b.tag) == (1, 2))
        orders(f"tie {kind} {how} x3", rule, variants, spliced=True)
    # 5. CUDA_FORCE_PTX_JIT / CUDA_DISABLE_PTX_JIT, with the JIT cache cold, warm, and warm with other PTX
    everything = ("cold", "warm", "warm-other")
    add("force: cubin exact", "force_ptx_jit", [_E("cubin", t.exact, 1)], _FORCE)
    if t.lower:
        orders("force: cubin exact + ptx lower", "force_ptx_jit", [_E("cubin", t.exact, 1), _E("ptx", t.lower, 2)],
               _FORCE)  # fmt: skip
        orders("disable: cubin exact + ptx lower", "disable_ptx_jit",
               [_E("cubin", t.exact, 1), _E("ptx", t.lower, 2)], _DISABLE)  # fmt: skip
        add("disable: ptx lower", "jit_cache", [_E("ptx", t.lower, 1)], _DISABLE, everything)
        orders("disable: ptx exact + ptx lower", "jit_cache", [_E("ptx", t.exact, 1), _E("ptx", t.lower, 2)],
               _DISABLE, everything)  # fmt: skip
    add("disable: ptx exact", "jit_cache", [_E("ptx", t.exact, 1)], _DISABLE, everything)
    orders("force: tie ptx exact", "tie_ptx_exact", [_E("ptx", t.exact, 1), _E("ptx", t.exact, 2, compression="lz4")],
           _FORCE)  # fmt: skip
    orders("force: tie cubin exact + 2 ptx exact", "force_ptx_jit",
           [_E("cubin", t.exact, 1), _E("ptx", t.exact, 2), _E("ptx", t.exact, 3, isa=old_isa)], _FORCE)  # fmt: skip
    orders("disable: tie ptx exact", "jit_cache",
           [_E("ptx", t.exact, 1), _E("ptx", t.exact, 2, compression="lz4")], _DISABLE, everything)  # fmt: skip
    # 6. PTX ISA newer than the driver
    new_isa = _newer_isa(driver_cuda)
    if new_isa:
        add(f"ptx exact ISA {new_isa} alone", "ptx_isa_driver", [_E("ptx", t.exact, 1, isa=new_isa)])
        orders("ptx exact new ISA + ptx exact", "ptx_isa_driver",
               [_E("ptx", t.exact, 1, isa=new_isa), _E("ptx", t.exact, 2)])  # fmt: skip
        if t.lower:
            orders("ptx exact new ISA + ptx lower", "ptx_isa_driver",
                   [_E("ptx", t.exact, 1, isa=new_isa), _E("ptx", t.lower, 2)])  # fmt: skip
        orders("ptx exact new ISA + cubin exact", "sass_over_ptx",
               [_E("ptx", t.exact, 1, isa=new_isa), _E("cubin", t.exact, 2)])  # fmt: skip
    else:
        unobservable.append(("PTX ISA newer than the driver", "ptx_isa_driver", "driver version unknown"))
    # 7. a header that contradicts its payload
    if t.lower:
        add("header exact around cubin lower", "header_mismatch", [_E("cubin", t.lower, 1, header_arch=t.exact)])
        add("header lower around cubin exact", "header_mismatch", [_E("cubin", t.exact, 1, header_arch=t.lower)])
        orders("header exact around cubin lower + ptx lower", "header_mismatch",
               [_E("cubin", t.lower, 1, header_arch=t.exact), _E("ptx", t.lower, 2)])  # fmt: skip
        orders("header exact around cubin lower + cubin exact", "header_mismatch",
               [_E("cubin", t.lower, 1, header_arch=t.exact), _E("cubin", t.exact, 2)])  # fmt: skip
        add("header exact around ptx lower", "header_mismatch", [_E("ptx", t.lower, 1, header_arch=t.exact)])
        if t.higher:
            add("header exact around ptx higher", "header_mismatch", [_E("ptx", t.higher, 1, header_arch=t.exact)])
        orders("header exact around ptx lower + ptx exact", "header_mismatch",
               [_E("ptx", t.lower, 1, header_arch=t.exact), _E("ptx", t.exact, 2)])  # fmt: skip
    add("ptx header around cubin exact", "header_mismatch", [_E("cubin", t.exact, 1, header_kind="ptx")])
    add("cubin header around ptx exact", "header_mismatch", [_E("ptx", t.exact, 1, header_kind="cubin")])
    # 8. spliced containers: does the driver read past the first?
    if t.lower:
        orders("spliced: cubin lower | cubin exact", "driver_input",
               [_E("cubin", t.lower, 1), _E("cubin", t.exact, 2, container=1)], spliced=False)  # fmt: skip
    orders("spliced: ptx exact | cubin exact", "driver_input",
           [_E("ptx", t.exact, 1), _E("cubin", t.exact, 2, container=1)])  # fmt: skip
    for name, rule, why in unobservable:
        cases.append(Case(f"{name} (not observable: {why})", rule, (), (), "cold"))
    return cases


def _attrs(e: Entry) -> str:
    bits = [e.compression if e.compression != "none" else "",
            "debug" if e.debug else "", f"ISA{e.isa}" if e.isa else "",
            e.producer if e.producer != "cuda" else ""]  # fmt: skip
    return "+".join(b for b in bits if b) or "plain"


def _single_rule(kind: str, how: str, suffix: str) -> str:
    if suffix == "a":
        return "arch_specific"
    if suffix == "f":
        return "family" if how in ("exact", "compatible") else "family_other_major"
    if kind == "cubin":
        return {"exact": "sass_exact", "compatible": "sass_lower_minor"}.get(how, "sass_other_major")
    return "ptx_lower"


def _older_isa(cuda: tuple[int, int] | None) -> str:
    """A PTX ISA older than NVRTC writes that still takes sm_90-era targets: 8.0 (CUDA 12.0)."""
    return "8.0"


def _newer_isa(cuda: tuple[int, int] | None) -> str | None:
    """The oldest PTX ISA the driver of CUDA ``cuda`` does not support."""
    if cuda is None:
        return None
    from ._select import PTX_ISA_CUDA, ptx_isa_needs

    for isa in sorted(PTX_ISA_CUDA):
        if ptx_isa_needs(isa) > cuda:
            return f"{isa[0]}.{isa[1]}"
    return f"{cuda[0] - 4}.{cuda[1] + 1}"


# ---------------------------------------------------------------------------------------------------
# building


class Builder:
    """Builds the fatbin of a case; compiles each (kind, arch, tag) once."""

    def __init__(self, *, ptx_isa: str | None = None, nvcc: str | None = None) -> None:
        self.ptx_isa = ptx_isa  # rewrite every PTX's .version to this (replaying a run made with another NVRTC)
        self.nvcc = nvcc if nvcc is not None else (shutil.which("nvcc") or _toolkit_nvcc())
        self._artifacts: dict[tuple[str, str, int], bytes] = {}
        self._entries: dict[tuple[Entry, ...], bytes] = {}

    def artifact(self, kind: str, arch: str, tag: int) -> bytes:
        key = (kind, arch, tag)
        if key not in self._artifacts:
            self._artifacts[key] = self._compile(kind, arch, tag)
        return self._artifacts[key]

    def _compile(self, kind: str, arch: str, tag: int) -> bytes:
        src = TAG_SOURCE.replace("TAG", str(tag))
        a = Arch.parse(arch)
        if kind == "tile_ir":  # no Tile IR compiler here: a header-only Tile IR payload, which the driver ignores
            return b"\x7fTileIR\x00" + bytes([13, 1, 0, 0]) + bytes(20)
        if kind == "reloc":
            if not self.nvcc:
                raise NotObservable("relocatable PTX needs an -rdc host object, and nvcc is not on PATH")
            with tempfile.TemporaryDirectory() as tmp:
                Path(tmp, "t.cu").write_text(src)
                cmd = [self.nvcc, "-c", "-rdc=true", f"-arch={a}", "-o", str(Path(tmp, "t.o")), str(Path(tmp, "t.cu"))]
                res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
                if res.returncode:
                    raise NotObservable(f"nvcc -rdc for {a} failed: {res.stderr.strip()[:200]}")
                return Path(tmp, "t.o").read_bytes()
        from ._multiarch import _JobFailed, _nvrtc

        opt = f"-arch={a.compute if kind == 'ptx' else a}".encode()
        opts = [opt, b"-dlto"] if kind == "ltoir" else [opt]
        try:
            out = _nvrtc(src, "tag.cu", opts, "ltoir" if kind == "ltoir" else kind, ())[0]
        except _JobFailed as e:
            raise NotObservable(f"NVRTC cannot build {kind} for {a}: {e}") from None
        return out.rstrip(b"\0") if kind == "ptx" else out

    def _ptx_text(self, arch: str, tag: int, isa: str | None) -> bytes:
        text = self.artifact("ptx", arch, tag)
        want = isa or self.ptx_isa
        if want:
            text = re.sub(rb"(?m)^\.version \d+\.\d+", b".version " + want.encode(), text, count=1)
        return text

    def entry_bytes(self, entries: tuple[Entry, ...]) -> bytes:
        """Header and payload of one entry (a concatenated entry when ``entries`` has concat members)."""
        if entries in self._entries:
            return self._entries[entries]
        from ._fatbin import FatbinError, FatbinLibraryError, FatbinOptions, Part, build_fatbin, nvfatbin_version
        from ._reader import read_fatbin

        first = entries[0]
        concat = first.concat
        if concat and nvfatbin_version() < (13, 4):
            v = nvfatbin_version()
            raise NotObservable(f"libnvfatbin {v[0]}.{v[1]} cannot write concatenated entries (13.4+)")
        parts = []
        for e in entries:
            data = self._ptx_text(e.arch, e.tag, e.isa) if e.kind in ("ptx",) else self.artifact(e.kind, e.arch, e.tag)
            kind = "cubin" if e.kind == "cubin" else e.kind
            arch = None if e.kind in ("reloc", "tile_ir") else e.arch
            ident = None if e.kind == "reloc" else f"t{e.tag}"  # add_reloc takes no identifier: found by position
            parts.append(Part(data, kind=kind, arch=arch, identifier=ident))
        if first.compression == "none" and not concat:
            options = FatbinOptions(compress=False, debug=first.debug or None,
                                    producer="opencl" if first.producer == "opencl" else None)  # fmt: skip
        else:
            options = FatbinOptions(compress=True, compress_all=True, concat=concat or None,
                                    compress_mode="size" if first.compression == "zstd" else "speed",
                                    debug=first.debug or None,
                                    producer="opencl" if first.producer == "opencl" else None)  # fmt: skip
        try:
            whole = build_fatbin(parts, options=options)
        except (FatbinError, FatbinLibraryError, ValueError, AttributeError) as e:  # AttributeError: old bindings
            raise NotObservable(f"libnvfatbin cannot build {entries[0].describe()}: {e}") from None
        fb = read_fatbin(whole)
        if len(fb.entries) != 1:
            raise NotObservable(f"libnvfatbin wrote {len(fb.entries)} entries for {first.describe()}")
        got = fb.entries[0]
        if first.compression != "none" and not concat and got.compression != first.compression:
            raise NotObservable(f"libnvfatbin wrote {got.compression}, not {first.compression}")
        raw = bytearray(whole[got.offset : got.offset + struct.unpack_from("<I", whole, got.offset + 4)[0]
                              + struct.unpack_from("<Q", whole, got.offset + 8)[0]])  # fmt: skip
        if first.header_kind:
            struct.pack_into("<H", raw, 0, _KIND_CODES[first.header_kind])
        if first.header_arch:
            h = Arch.parse(first.header_arch)
            struct.pack_into("<I", raw, 28, h.sm)
            flags = struct.unpack_from("<Q", raw, 40)[0] & ~(_FLAG_A | _FLAG_F)
            flags |= {"a": _FLAG_A, "f": _FLAG_F}.get(h.suffix, 0)
            struct.pack_into("<Q", raw, 40, flags)
        self._entries[entries] = bytes(raw)
        return bytes(raw)


def _toolkit_nvcc() -> str | None:
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and Path(root, "bin", "nvcc").is_file():
            return str(Path(root, "bin", "nvcc"))
    return None


def build_case(case: Case, builder: Builder) -> bytes:
    """The fatbin of ``case``: its entries in order, concat members as one entry where the first stands,
    one fatbin container per ``container`` number, back to back.

    Raises
    ------
    NotObservable
        A tool this machine lacks or that cannot build an entry (the message says which).
    """
    if not case.entries:
        raise NotObservable(case.name.partition("(not observable: ")[2].rstrip(")") or "no entries")
    containers: dict[int, list[bytes]] = {}
    members = tuple(e for e in case.entries if e.concat)
    for e in case.entries:
        if e.concat:
            if e is members[0]:
                containers.setdefault(e.container, []).append(builder.entry_bytes(members))
            continue
        containers.setdefault(e.container, []).append(builder.entry_bytes((e,)))
    out = b""
    for index in sorted(containers):
        body = b"".join(containers[index])
        out += struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body
    return out


# ---------------------------------------------------------------------------------------------------
# prediction and observation


def predict(case: Case, data: bytes, gpu: Arch | str, driver: int | None) -> tuple[str, Selection | None, str]:
    """``(predicted, selection, note)``: ``"TAG n"`` or ``"ERROR"`` from :func:`select_entry` for the case."""
    from ._reader import FatbinFormatError, read_fatbin
    from ._select import select_entry

    env = dict(case.env)
    try:
        fb = read_fatbin(data)
        sel = select_entry(
            fb, gpu, driver=driver, force_ptx_jit=env.get("CUDA_FORCE_PTX_JIT") == "1",
            disable_ptx_jit=env.get("CUDA_DISABLE_PTX_JIT") == "1", jit_cache=case.cache == "warm",
        )  # fmt: skip
    except FatbinFormatError as e:
        return "ERROR", None, f"unreadable: {e}"
    if sel.entry is None:
        return "ERROR", sel, ""
    m = re.fullmatch(r"t(\d+)", sel.entry.identifier or "")
    if m is not None:
        return f"TAG {int(m.group(1))}", sel, ""
    # no tag identifier (relocatable PTX): the entry's position among the first container's plain entries
    plain = [x for x in case.entries if x.container == 0 and not x.concat]
    for index, got in enumerate(fb.entries):
        if got is sel.entry and index < len(plain) and not any(x.concat for x in case.entries):
            return f"TAG {plain[index].tag}", sel, ""
    return "ERROR", sel, "the chosen entry has no tag identifier"


_CHILD = r"""
import ctypes, sys
lib = ctypes.CDLL("libcuda.so.1")
V, P, U, S = ctypes.c_void_p, ctypes.POINTER, ctypes.c_uint, ctypes.c_size_t
lib.cuModuleLoadData.argtypes = [P(V), ctypes.c_char_p]
lib.cuModuleGetFunction.argtypes = [P(V), V, ctypes.c_char_p]
lib.cuMemAlloc_v2.argtypes = [P(ctypes.c_uint64), S]
lib.cuMemsetD32_v2.argtypes = [ctypes.c_uint64, U, S]
lib.cuLaunchKernel.argtypes = [V, U, U, U, U, U, U, U, V, P(V), P(V)]
lib.cuMemcpyDtoH_v2.argtypes = [V, ctypes.c_uint64, S]
def check(rc, what):
    if rc:
        s = ctypes.c_char_p()
        lib.cuGetErrorName(rc, ctypes.byref(s))
        print("ERROR", (s.value or b"CUDA_ERROR_%d" % rc).decode(), what, flush=True)
        sys.exit(0)
data = open(sys.argv[1], "rb").read()
check(lib.cuInit(0), "cuInit")
dev, ctx = ctypes.c_int(), V()
check(lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
check(lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
mod, fn, buf = V(), V(), ctypes.c_uint64()
check(lib.cuModuleLoadData(ctypes.byref(mod), data), "cuModuleLoadData")
check(lib.cuModuleGetFunction(ctypes.byref(fn), mod, b"tag"), "cuModuleGetFunction")
check(lib.cuMemAlloc_v2(ctypes.byref(buf), 4), "cuMemAlloc")
check(lib.cuMemsetD32_v2(buf, 0x7FFFFFFF, 1), "cuMemsetD32")
params = (V * 1)(ctypes.cast(ctypes.byref(buf), V))
check(lib.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, params, None), "cuLaunchKernel")
check(lib.cuCtxSynchronize(), "cuCtxSynchronize")
out = ctypes.c_int()
check(lib.cuMemcpyDtoH_v2(ctypes.cast(ctypes.byref(out), V), buf, 4), "cuMemcpyDtoH")
print("TAG", out.value, flush=True)
"""


# First lines of every child: it dies with the probe (Linux: PR_SET_PDEATHSIG; the probe's pid is argv[2]).
_DIE_WITH_PARENT = r"""
import sys
if sys.platform.startswith("linux"):
    import ctypes, os, signal
    ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != int(sys.argv[2]):
        sys.exit(0)
"""


def run_child(path: Path, env: dict[str, str], timeout: float = _CASE_TIMEOUT) -> tuple[str, str]:
    """Load and launch the fatbin at ``path`` in a fresh process: ``(outcome, detail)``."""
    try:
        res = subprocess.run([sys.executable, "-I", "-c", _DIE_WITH_PARENT + _CHILD, str(path), str(os.getpid())],
                             capture_output=True, text=True, env=env, timeout=timeout)  # fmt: skip
    except subprocess.TimeoutExpired:
        return "TIMEOUT", f"no answer in {timeout:.0f} s"
    if res.returncode < 0:
        try:
            name = signal.Signals(-res.returncode).name
        except ValueError:
            name = f"signal {-res.returncode}"
        return f"CRASH {name}", "the process loading the fatbin died"
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith(("TAG ", "ERROR "))]
    if not lines:
        return "CRASH exit", f"exit {res.returncode}: {(res.stderr.strip().splitlines() or [''])[-1][:200]}"
    words = lines[-1].split()
    return " ".join(words[:2]), " ".join(words[2:])


def _agree(predicted: str, observed: str) -> bool:
    if predicted.startswith("TAG"):
        return predicted == observed
    return observed.startswith(("ERROR", "CRASH"))


def _clean_env(cache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _ENV_KEYS}
    env["CUDA_CACHE_PATH"] = cache
    return env


def observe(case: Case, data: bytes, other: bytes | None, workdir: Path, index: int) -> tuple[str, str]:
    """Run one case in fresh processes (a warm-up first for the warm-cache cases)."""
    path = workdir / f"case{index}.fatbin"
    path.write_bytes(data)
    cache = workdir / f"cache{index}"
    cache.mkdir()
    base = _clean_env(str(cache))
    detail = ""
    if case.cache == "warm":
        warm, _ = run_child(path, base)
        detail = f"warm-up run: {warm}; "
    elif case.cache == "warm-other" and other is not None:
        other_path = workdir / f"other{index}.fatbin"
        other_path.write_bytes(other)
        warm, _ = run_child(other_path, base)
        detail = f"warm-up with other PTX: {warm}; "
    outcome, more = run_child(path, {**base, **dict(case.env)})
    shutil.rmtree(cache, ignore_errors=True)
    return outcome, detail + more


# ---------------------------------------------------------------------------------------------------
# the probe


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str] = {"python": sys.version.split()[0]}
    from . import __version__

    out["cuda-fatbin"] = __version__
    for dist in ("cuda-core", "cuda-bindings"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "not installed"
    try:
        from cuda.bindings import nvrtc

        out["nvrtc"] = "{}.{}".format(*nvrtc.nvrtcVersion()[1:])
    except Exception as e:  # the report says what could not be asked
        out["nvrtc"] = f"not available ({type(e).__name__})"
    try:
        from ._fatbin import nvfatbin_version

        out["libnvfatbin"] = "{}.{}".format(*nvfatbin_version())
    except Exception as e:
        out["libnvfatbin"] = f"not available ({type(e).__name__})"
    return out


def probe(
    *,
    jobs: int | None = None,
    select: Iterable[str] = (),
    progress: Callable[[int, int, str], None] | None = None,
    limit: int | None = None,
) -> ProbeReport:
    """Run the probe matrix on GPU 0 and compare each case with :func:`~cuda_fatbin.select_entry`.

    Parameters
    ----------
    jobs : int, optional
        Cases run at once (each in its own process). Default: the CPU count.
    select : iterable of str, optional
        Run only the cases whose name contains one of these strings (all when empty).
    progress : callable, optional
        Called as ``progress(done, total, case_name)`` after each case.
    limit : int, optional
        Run at most this many of the selected cases.

    Returns
    -------
    ProbeReport
        ``report.ok`` is False when a case disagreed with the model.

    Raises
    ------
    NoDriverError
        No CUDA driver or GPU.

    Examples
    --------
    >>> from cuda_fatbin import probe
    >>> report = probe(select=["single cubin exact"])  # doctest: +SKIP
    >>> report.ok, len(report.run)  # doctest: +SKIP
    (True, 2)
    """
    from concurrent.futures import Future, ThreadPoolExecutor

    from ._arch import nvrtc_supported_sms
    from ._driver import devices
    from ._jobs import run_jobs
    from ._select import parse_driver

    info = devices("cuda-fatbin probe", "run it on a machine with a GPU")[0]
    gpu = Arch(*info.capability)
    cuda = parse_driver(info.driver)
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    t0 = time.monotonic()
    names = tuple(select)
    sms = nvrtc_supported_sms()
    cases = [c for c in matrix(gpu, sms, driver_cuda=cuda) if not names or any(n in c.name for n in names)]
    if limit is not None:
        cases = cases[:limit]
    builder = Builder()
    results: list[CaseResult] = []
    built: list[tuple[CaseResult, bytes, bytes | None]] = []
    for case in cases:
        r = CaseResult(case)
        results.append(r)
        try:
            data = build_case(case, builder)
            other = None
            if case.cache == "warm-other":
                ptx = [e for e in case.entries if e.kind == "ptx"]
                other = build_case(Case("other", "", (Entry("ptx", ptx[0].arch, 99),)), builder) if ptx else None
        except NotObservable as e:
            r.not_observable = str(e)
            continue
        r.predicted, sel, note = predict(case, data, gpu, info.driver)
        if sel is not None:
            r.reason, r.rules = sel.reason, sel.rules
        r.detail = note
        built.append((r, data, other))
    workers = max(1, jobs or os.cpu_count() or 1)
    done = 0
    with tempfile.TemporaryDirectory(prefix="cuda-fatbin-probe-") as tmp:

        def one(item: tuple[int, tuple[CaseResult, bytes, bytes | None]]) -> CaseResult:
            i, (r, data, other) = item
            r.observed, more = observe(r.case, data, other, Path(tmp), i)
            r.agree = _agree(r.predicted, r.observed)
            r.detail = "; ".join(x for x in (r.detail, more) if x)
            return r

        def finished(f: Future[CaseResult], item: object) -> None:
            nonlocal done
            r = f.result()
            done += 1
            if progress is not None:
                progress(done, len(built), r.case.name)

        # Ctrl-C or SIGTERM: the queued cases are dropped, the running ones awaited (_jobs.stop_jobs)
        with ThreadPoolExecutor(workers) as pool:
            run_jobs(pool, one, enumerate(built), lambda item: (item,), finished)
    return ProbeReport(info.name, f"{gpu.major}.{gpu.minor}", info.driver, _versions(), started,
                       time.monotonic() - t0, workers, results, tuple(sms))  # fmt: skip
