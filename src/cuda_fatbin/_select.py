# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Which entry of a fat binary a GPU and driver would load, and why; coverage tables.

The driver's rules live in :data:`RULES`, one row each, marked ``checked`` (seen on a real GPU)
or ``reported`` (NVIDIA docs or public reports, still to be confirmed on a GPU). Version tables are
data with their sources. This module does not import the compile side.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ._arch import Arch
from ._nvidia import (
    DRIVER_CUDA,
    DRIVER_DROPPED_GPU,
    DRIVER_PREDATES_GPU,
    PTX_ISA_CUDA,
    gpu_arch,
    gpu_list,
    is_tegra,
    parse_driver,
    ptx_isa_needs,
    support_gap,
    tables,
)
from ._payload import ptx_target_of
from ._reader import Fatbin, FatbinEntry, read_fatbin

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeAlias

    from ._reader import Source

    #: A driver: a CUDA version (``"12.4"``, ``(12, 4)``), a driver version (``"550.54.14"``) or
    #: ``cuDriverGetVersion()``'s int.
    DriverSpec: TypeAlias = "str | int | tuple[int, int] | None"
    #: GPUs: ``"75;80;9.0"``, ``"T4;A100"`` or an iterable of capabilities or GPU names (``_nvidia.gpu_arch``).
    GpuList: TypeAlias = "str | Iterable[Arch | str | int]"
    _Row: TypeAlias = "tuple[tuple[str, str], Fatbin | None]"  # ((status, reason), fatbin)
    _Own: TypeAlias = "tuple[str | None, str, tuple[str, ...], bool, bool]"  # judge_own's, of one GPU
    _Class: TypeAlias = "list[Any]"  # fatbins that get one answer on each GPU: [answers by GPU, how many]

__all__ = ["DRIVER_CUDA", "PTX_ISA_CUDA", "RULES", "STATUSES", "UNCOVERED", "Selection", "coverage", "driver_gaps",
           "driver_needs", "fatbin_status", "judge", "needed_driver", "parse_driver", "ptx_isa_needs",
           "select_entry"]  # fmt: skip


@dataclass(frozen=True)
class Rule:
    """One driver behaviour the model relies on."""

    text: str
    status: str  # "checked" | "reported"
    source: str


#: The recorded ``cuda-fatbin probe`` run each ``checked`` rule cites; its cases name their rule.
PROBE_H200 = "docs/probe/h200-driver580.json"

#: The selection rules, from ``data/nvidia.json`` (one row each, with its source). Edit there when a GPU shows
#: otherwise (``cuda-fatbin probe``; record the run in docs/probe/).
RULES: dict[str, Rule] = {k: Rule(**v) for k, v in tables()["rules"].items()}

#: Suffix preference among entries for the same SM (RULES["suffix_order"], RULES["suffix_order_f"]).
_SUFFIX_RANK = {"a": 0, "f": 1, "": 2}


ZSTD_MIN_CUDA = (12, 4)
_CONCAT_MIN_CUDA = (13, 4)


@dataclass(frozen=True)
class Selection:
    """What a GPU would load from a fat binary.

    Attributes
    ----------
    gpu : Arch
        The device's compute capability.
    entry : FatbinEntry or None
        The entry the driver loads, or ``None`` when nothing fits (the driver then fails with
        ``CUDA_ERROR_NO_BINARY_FOR_GPU`` or ``CUDA_ERROR_UNSUPPORTED_PTX_VERSION``).
    status : str
        ``"SASS exact"``, ``"SASS compatible"``, ``"PTX JIT"`` or ``"none"``; with ``driver=``, also
        ``"driver predates GPU"`` (sm_120 needs a CUDA 12.8 driver) or ``"driver dropped GPU"`` (R590 and newer
        do not run Volta): that driver runs no code on that GPU.
    reason : str
        Why, in one sentence.
    rejected : tuple of (FatbinEntry, str)
        Every other entry and why it was not taken.
    rules : tuple of str
        Keys of :data:`RULES` the decision rests on (see whether they are ``checked`` or ``reported``);
        when no entry fits, the rules behind the rejections.
    cache_dependent : bool
        True when the outcome depends on the driver's JIT cache and ``jit_cache`` was not given: with
        ``CUDA_DISABLE_PTX_JIT=1`` a PTX entry JIT-compiled earlier on the machine still runs.

    Examples
    --------
    >>> from cuda_fatbin import Program
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> data = bytes(Program(src, "c++").compile("fatbin", archs=["sm_80", "sm_90"], ptx_for=["sm_90"]).code)
    >>> from cuda_fatbin import select_entry
    >>> sel = select_entry(data, "8.6")
    >>> bool(sel), sel.status, str(sel.entry.arch)
    (True, 'SASS compatible', 'sm_80')
    >>> sel.reason
    'SASS sm_80 runs on 8.6: same major, lower minor'
    >>> bool(select_entry(data, "7.5")), select_entry(data, "7.5").status
    (False, 'none')
    """

    gpu: Arch
    entry: FatbinEntry | None
    status: str
    reason: str
    rejected: tuple[tuple[FatbinEntry, str], ...] = field(default=(), repr=False)
    rules: tuple[str, ...] = ()
    cache_dependent: bool = False

    def __bool__(self) -> bool:
        return self.entry is not None

    @property
    def unconfirmed(self) -> bool:
        """True if the decision rests on a rule that is only ``reported``."""
        return any(RULES[r].status != "checked" for r in self.rules)


def _fatbin_of(fatbin: Fatbin | Source) -> Fatbin:
    return fatbin if isinstance(fatbin, Fatbin) else read_fatbin(fatbin)


def _builds_for(a: Arch, gpu: Arch) -> bool:
    """Whether the code of entry arch ``a`` fits a ``gpu``: ``Arch.builds`` with the GPU taken as the target of
    the entry's kind (an ``a`` entry's GPU as ``sm_XXa``...); no such arch (sm_80a) means no."""
    try:
        target = Arch(gpu.major, gpu.minor, a.suffix)
    except ValueError:
        return False
    return a.builds(target)


def _side(arch: Arch) -> str:
    return "Tegra" if is_tegra(arch) else "desktop"


def _fit(a: Arch, gpu: Arch, sass: bool, label: str) -> tuple[str | None, tuple[str, ...]]:
    """``(None, rules)`` when code of arch ``a`` runs on ``gpu``, else ``(why not, rules)``.

    The arch rules, with Tegra's: SASS and 'f' code never cross between desktop and Tegra GPUs, and on a Tegra GPU
    only its own capability's SASS runs (RULES sass_tegra, family_tegra); PTX crosses (ptx_tegra); code for 10.1
    runs on 11.0, Thor renamed by CUDA 13 (thor_rename).
    """
    renamed = sass or a.suffix != ""
    renamed = renamed and a.sm == 101 and gpu.sm == 110
    eff = Arch(11, 0, a.suffix) if renamed else a
    extra = ("thor_rename",) if renamed else ()
    tegra = is_tegra(eff) or is_tegra(gpu)
    crossing = tegra and eff.sm != gpu.sm
    fits = _builds_for(eff, gpu)
    if a.suffix == "a":
        if not fits:
            return f"{label} runs only on {a.capability[:-1]}", ("arch_specific",)
        return None, ("arch_specific", *extra)
    if a.suffix == "f":
        if not fits:
            rule = "family_other_major" if a.major != gpu.major else "family"
            return f"{label} runs only on {a.major}.x with minor >= {a.minor}", (rule,)
        if crossing:
            why = f"{label} is for the {_side(eff)} {a.major}.x family; {gpu.capability} is a {_side(gpu)} GPU"
            return why, ("family_tegra",)
        return None, ("family", *extra)
    if sass:
        if eff.major != gpu.major:
            return f"SASS {label} does not run on {gpu.capability}: another major", ("sass_other_major",)
        if eff.minor > gpu.minor:
            return f"SASS {label} is newer than {gpu.capability}", ("sass_exact",)
        if crossing:
            why = (
                f"{gpu.capability} is a Tegra GPU, which runs SASS for {gpu.capability} only"
                if is_tegra(gpu)
                else f"{a.capability} is a Tegra GPU: its SASS runs there only"
            )
            return f"SASS {label} does not run on {gpu.capability}: {why}", ("sass_tegra",)
        return None, ("sass_exact" if eff.sm == gpu.sm else "sass_lower_minor", *extra)
    if not fits:
        return f"PTX {label} is newer than {gpu.capability}", ("ptx_lower",)
    return None, ("ptx_lower", "ptx_tegra") if tegra else ("ptx_lower",)


def _judge(
    e: FatbinEntry, gpu: Arch, cuda: tuple[int, int] | None, force_ptx_jit: bool, disable_ptx_jit: bool
) -> tuple[str | None, str, tuple[str, ...], str | None]:
    """``(status or None, reason, rules, failure)`` for one entry.

    ``failure`` is set for an entry the driver would take and then fail to load (PTX of an ISA newer
    than the driver): the driver ranks entries by arch, not by ISA, and does not fall back.
    """
    a = e.arch
    if e.kind not in ("elf", "ptx", "reloc"):
        # concat entries never get here: select_entry judges their members
        what = "LTO-IR must be linked by nvJitLink first" if e.kind == "ltoir" else "not loaded by the driver"
        return None, f"{e.kind}: {what}", (), None
    if a is None:
        return None, f"{e.kind} entry with no arch (SM {e.sm})", (), None
    sass = e.kind == "elf"
    label = str(a) if sass else ("relocatable PTX " if e.kind == "reloc" else "") + a.compute
    base = ("reloc_ptx",) if e.kind == "reloc" else ()
    if sass and force_ptx_jit:
        return None, f"SASS {label}: CUDA_FORCE_PTX_JIT=1 ignores SASS", ("force_ptx_jit",), None
    if not sass and disable_ptx_jit:
        return None, f"PTX {label}: CUDA_DISABLE_PTX_JIT=1 ignores PTX", ("disable_ptx_jit", *base), None
    if e.concatenated and cuda is not None and cuda < _CONCAT_MIN_CUDA:
        reason = (f"{label} is inside a concatenated entry, which a CUDA {cuda[0]}.{cuda[1]} driver does not read "
                  f"(needs {_CONCAT_MIN_CUDA[0]}.{_CONCAT_MIN_CUDA[1]}+)")  # fmt: skip
        return None, reason, ("concat_driver",), None
    if cuda is not None and e.compression == "zstd" and cuda < ZSTD_MIN_CUDA:
        reason = f"{label}: zstd-compressed; needs a CUDA 12.4+ driver, driver is CUDA {cuda[0]}.{cuda[1]}"
        return None, reason, ("zstd_driver",), None
    why, rules = _fit(a, gpu, sass, label)
    if why is not None:
        return None, why, rules, None
    if sass:
        if a.sm == gpu.sm:
            return "SASS exact", f"SASS {label} runs on {gpu.capability}: exact match", rules, None
        if "thor_rename" in rules:
            why = "sm_101 is Jetson Thor's name before CUDA 13, which renamed it sm_110"
            return "SASS compatible", f"SASS {label} runs on {gpu.capability}: {why}", rules, None
        how = f"same family ({a.major}.x)" if a.suffix == "f" else "same major"
        return "SASS compatible", f"SASS {label} runs on {gpu.capability}: {how}, lower minor", rules, None
    rules = (*rules, *base)
    isa = f"ISA {e.version[0]}.{e.version[1]}"
    failure = None
    if cuda is not None:
        need = ptx_isa_needs(e.version)
        if need > cuda:
            failure = (f"PTX {label} is {isa}, which needs a CUDA {need[0]}.{need[1]} driver; driver is CUDA "
                       f"{cuda[0]}.{cuda[1]}")  # fmt: skip
        rules = (*rules, "ptx_isa_driver")
    return "PTX JIT", f"PTX {label} ({isa}) JIT-compiled for {gpu.capability}", rules, failure


#: (kind in the header, first word of FatbinEntry.payload_mismatch) -> what the driver does (rule header_mismatch)
_MISMATCH_OUTCOME = {
    ("elf", "the"): "fails (CUDA_ERROR_INVALID_SOURCE)",
    ("elf", "an"): "fails (CUDA_ERROR_INVALID_IMAGE)",
    ("ptx", "a"): "crashes the loading process (SIGSEGV with driver 580)",
}


def _tie_rule(entry: FatbinEntry, gpu: Arch) -> str:
    """The RULES key behind the order of equally ranked entries like ``entry`` (tie_unseen where not observed)."""
    a = entry.arch
    if a is None or entry.kind == "reloc":
        return "tie_unseen"
    if entry.kind == "elf":
        return "tie_sass" if a.sm == gpu.sm and a.suffix in ("", "a") else "tie_unseen"
    if a.sm == gpu.sm and a.suffix == "":
        return "tie_ptx_exact"
    if (a.suffix == "" and a.major < gpu.major) or (a.suffix == "a" and a.sm == gpu.sm):
        return "tie_ptx_other"
    return "tie_unseen"


# a runnable entry: its preference key (lower wins), the entry, status, reason, rules, and the failure the
# driver meets when it takes it (a PTX ISA it cannot JIT), if any
_Candidate = tuple[tuple[int, ...], "FatbinEntry", str, str, tuple[str, ...], "str | None"]


def _with_jit_cache(
    fb: Fatbin, gpu: Arch, driver: DriverSpec, force_ptx_jit: bool, jit_cache: bool | None
) -> Selection:
    """``select_entry`` with ``disable_ptx_jit`` and a JIT cache that is warm (True) or unknown (None)."""
    warm = select_entry(fb, gpu, driver=driver, force_ptx_jit=force_ptx_jit, jit_cache=False)
    cold = select_entry(fb, gpu, driver=driver, force_ptx_jit=force_ptx_jit, disable_ptx_jit=True, jit_cache=False)
    if warm.status != "PTX JIT":  # SASS outranks PTX: only a PTX pick can depend on the cache
        return cold
    if jit_cache is None:
        return dataclasses.replace(
            cold, cache_dependent=True,
            reason=f"{cold.reason}; with a warm JIT cache: {warm.reason} (cached JIT output)",
        )  # fmt: skip
    return dataclasses.replace(
        warm, reason=f"{warm.reason}, from the JIT cache (CUDA_DISABLE_PTX_JIT=1 still runs cached JIT output)",
        rules=(*warm.rules, "jit_cache"),
    )  # fmt: skip


def _candidates(
    fb: Fatbin, gpu: Arch, cuda: tuple[int, int] | None, force_ptx_jit: bool, disable_ptx_jit: bool
) -> tuple[list[_Candidate], list[tuple[FatbinEntry, str]], dict[str, None]]:
    """The entries the driver could run, with their preference keys; the others, each with why; the rules of
    the rejections (in order, once each)."""
    chosen: list[_Candidate] = []
    rejected: list[tuple[FatbinEntry, str]] = []
    rejected_rules: dict[str, None] = {}
    for index, e in enumerate(fb.iter_entries()):
        status, reason, rules, failure = _judge(e, gpu, cuda, force_ptx_jit, disable_ptx_jit)
        if status is None:
            rejected.append((e, reason))
            rejected_rules.update(dict.fromkeys(rules))
            continue
        # lower key wins: SASS before PTX; then nearest arch (so exact SASS before compatible); then suffix;
        # then plain PTX before relocatable PTX; then container order: the first, except among plain PTX for
        # exactly the device's SM, where the last wins (RULES tie_*)
        a = e.arch
        if a is None:  # _judge rejects entries without an arch
            continue
        last_wins = e.kind == "ptx" and a.suffix == "" and a.sm == gpu.sm
        key = (int(status == "PTX JIT"), -a.sm, _SUFFIX_RANK[a.suffix], int(e.kind == "reloc"),
               -index if last_wins else index)  # fmt: skip
        chosen.append((key, e, status, reason, rules, failure))
    return chosen, rejected, rejected_rules


def _why_preferred(chosen: list[_Candidate], gpu: Arch) -> tuple[list[str], str]:
    """The rules that made ``chosen[0]`` (sorted) win over the others, and what the reason adds for ties."""
    top, entry, status, _, _, _ = chosen[0]
    extra = ["sass_over_ptx"] if status != "PTX JIT" and any(c[2] == "PTX JIT" for c in chosen) else []
    if status == "PTX JIT" and len({c[0][1] for c in chosen if c[2] == "PTX JIT"}) > 1:
        extra.append("ptx_nearest")
    if entry.concatenated:
        extra.append("concat_driver")
    same_sm = [c for c in chosen[1:] if c[0][:2] == top[:2]]
    if any(c[0][2] != top[2] for c in same_sm):
        suffixes = {c[1].arch.suffix for c in same_sm if c[1].arch is not None} | {entry.arch.suffix}  # type: ignore[union-attr]
        extra.append("suffix_order_f" if "f" in suffixes else "suffix_order")
    if any(c[0][2] == top[2] and c[0][3] != top[3] for c in same_sm):
        extra.append("ptx_over_reloc")
    tied = [c[1] for c in same_sm if c[0][:4] == top[:4]]
    more = ""
    if tied:
        extra.append(_tie_rule(entry, gpu))
        attrs = {(x.compression, x.debug, x.producer, x.version) for x in (entry, *tied)}
        if len(attrs) > 1:
            extra.append("entry_attributes")
        more = f"; the {'last' if top[4] < 0 else 'first'} of {len(tied) + 1} equal entries in container order"
    return extra, more


def select_entry(
    fatbin: Fatbin | Source,
    gpu: Arch | str | int,
    *,
    driver: DriverSpec = None,
    force_ptx_jit: bool = False,
    disable_ptx_jit: bool = False,
    jit_cache: bool | None = None,
) -> Selection:
    """The entry the CUDA driver would load on a GPU of compute capability ``gpu``, and why.

    Parameters
    ----------
    fatbin : Fatbin, bytes-like or path
        A fat binary (anything :func:`read_fatbin` takes).
    gpu : Arch, str or int
        The device's compute capability in any spelling (``"8.9"``, ``"sm_90"``, ``120``; a suffix is ignored) or
        a GPU name (``"T4"``, ``"RTX 5090"``, ``"Jetson AGX Orin"``; ``cuda-fatbin gpus`` lists them).
    driver : str, int or tuple, optional
        The driver: a CUDA version (``"12.4"``), a driver version (``"550.54.14"``) or
        ``cuDriverGetVersion()``'s int. Limits PTX JIT to the ISA versions it supports and zstd entries
        to drivers that decompress them. Default: None (no limit).
    force_ptx_jit : bool, optional
        Model ``CUDA_FORCE_PTX_JIT=1``. Default: False.
    disable_ptx_jit : bool, optional
        Model ``CUDA_DISABLE_PTX_JIT=1``. Default: False.
    jit_cache : bool or None, optional
        The driver's JIT cache (``~/.nv/ComputeCache`` or ``CUDA_CACHE_PATH``): ``True`` when it holds
        this fatbin's JIT output for the GPU (the fatbin ran there before), ``False`` when it is cold or
        disabled (``CUDA_CACHE_DISABLE=1``), ``None`` (default) when unknown. It matters only with
        ``disable_ptx_jit``: cached JIT output still runs then (rule ``jit_cache``), so with ``None`` the
        result is the cold one and ``Selection.cache_dependent`` says whether a warm cache would change it.

    Returns
    -------
    Selection
        Falsy when no entry fits; ``reason`` then says why each entry was rejected.

    Raises
    ------
    ValueError
        A GPU or driver in a spelling that is not understood (the message quotes it).
    FatbinFormatError
        ``fatbin`` is not a readable fat binary.

    Examples
    --------
    >>> from cuda_fatbin import Program
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> data = bytes(Program(src, "c++").compile("fatbin", archs=["sm_80", "sm_90"], ptx_for=["sm_90"]).code)
    >>> from cuda_fatbin import select_entry
    >>> select_entry(data, "9.0").status
    'SASS exact'
    >>> sel = select_entry(data, "12.0")
    >>> sel.status, sel.entry.kind, str(sel.entry.arch)
    ('PTX JIT', 'ptx', 'sm_90')
    >>> select_entry(data, "12.0", driver="12.8").status  # its PTX ISA is too new for a CUDA 12.8 driver
    'none'
    >>> select_entry(data, "12.0", driver="12.4").status  # no CUDA 12.4 driver runs a 12.0 GPU
    'driver predates GPU'
    >>> select_entry(data, "Jetson AGX Orin").reason  # Tegra: SASS for its own capability only
    'no entry fits 8.7: SASS sm_80 does not run on 8.7: 8.7 is a Tegra GPU, which runs SASS for 8.7 only; ...'
    """
    gpu = gpu_arch(gpu)
    cuda = parse_driver(driver)
    fb = _fatbin_of(fatbin)
    gap = support_gap(gpu, cuda)
    if gap is not None:  # the driver does not run this GPU at all, whatever the fatbin holds
        return Selection(gpu, None, gap[0], gap[1], tuple((e, gap[1]) for e in fb.iter_entries()), (gap[2],))
    if disable_ptx_jit and jit_cache is not False:
        return _with_jit_cache(fb, gpu, driver, force_ptx_jit, jit_cache)
    chosen, rejected, rejected_rules = _candidates(fb, gpu, cuda, force_ptx_jit, disable_ptx_jit)
    if not chosen:
        why = "; ".join(r for _, r in rejected) or "the fatbin has no entries"
        return Selection(
            gpu, None, "none", f"no entry fits {gpu.capability}: {why}", tuple(rejected), tuple(rejected_rules)
        )
    chosen.sort(key=lambda c: c[0])
    _, entry, status, reason, rules, failure = chosen[0]
    extra, more = _why_preferred(chosen, gpu)
    reason += more
    others = tuple(rejected) + tuple((c[1], f"also runnable ({c[2]}), not preferred") for c in chosen[1:])
    if failure is not None:  # the driver takes this entry and fails: it does not try the next one
        return Selection(
            gpu, None, "none",
            f"no entry fits {gpu.capability}: the driver takes the nearest PTX and fails "
            f"(CUDA_ERROR_UNSUPPORTED_PTX_VERSION), without trying the others: {failure}",
            ((entry, failure), *others), (*rules, *extra),
        )  # fmt: skip
    mismatch = entry.payload_mismatch
    if mismatch is not None:
        extra.append("header_mismatch")
        outcome = _MISMATCH_OUTCOME.get((entry.kind, mismatch.split(" ")[0]))
        if outcome is None and entry.kind == "ptx":  # PTX whose .target differs from its header
            target = ptx_target_of(entry)  # the bytes payload_mismatch read (no whole decompression)
            if target is not None and target.sm > gpu.sm:
                outcome = "fails (CUDA_ERROR_INVALID_PTX: its .target is newer than the GPU)"
        if outcome is None:  # a .target at most the GPU's: JIT-compiled all the same
            reason += f" (its payload disagrees with its header: {mismatch})"
        else:
            why = f"{mismatch}: the driver picks it by its header and {outcome}, without trying the others"
            return Selection(
                gpu, None, "none", f"no entry fits {gpu.capability}: {why}", ((entry, why), *others), (*rules, *extra)
            )
    if fb.relocatable:
        extra.append("relocatable_link")
        reason += "; linked at load time by the CUDA runtime (this fatbin is -rdc device-link input)"
    return Selection(gpu, entry, status, reason, others, (*rules, *extra))


def coverage(
    fatbin: Fatbin | Source,
    gpus: GpuList,
    *,
    driver: DriverSpec = None,
    force_ptx_jit: bool = False,
    disable_ptx_jit: bool = False,
    jit_cache: bool | None = None,
) -> list[Selection]:
    """One :class:`Selection` per GPU: how each would run this fat binary.

    Parameters
    ----------
    fatbin : Fatbin, bytes-like or path
    gpus : str or iterable
        Compute capabilities or GPU names: ``"75;80;86;89;90;100;120"``, ``"8.0,9.0"``, ``"T4;A100"`` or a list
        of any spellings.
    driver, force_ptx_jit, disable_ptx_jit, jit_cache
        As for :func:`select_entry`.

    Returns
    -------
    list of Selection
        In the order of ``gpus``; ``row.status`` is ``"SASS exact"``, ``"SASS compatible"``,
        ``"PTX JIT"`` or ``"none"``.

    Raises
    ------
    ValueError
        A GPU or driver in a spelling that is not understood (the message quotes it).
    FatbinFormatError
        ``fatbin`` is not a readable fat binary.

    Examples
    --------
    >>> from cuda_fatbin import Program
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> data = bytes(Program(src, "c++").compile("fatbin", archs=["sm_80", "sm_90"], ptx_for=["sm_90"]).code)
    >>> from cuda_fatbin import coverage
    >>> [(row.gpu.capability, row.status) for row in coverage(data, "75;80;86;90;120")]
    [('7.5', 'none'), ('8.0', 'SASS exact'), ('8.6', 'SASS compatible'), ('9.0', 'SASS exact'), ('12.0', 'PTX JIT')]
    """
    fb = _fatbin_of(fatbin)
    specs = gpu_list(gpus)
    return [
        select_entry(
            fb, g, driver=driver, force_ptx_jit=force_ptx_jit, disable_ptx_jit=disable_ptx_jit, jit_cache=jit_cache
        )
        for g in specs
    ]


def needed_driver(entry: FatbinEntry) -> tuple[int, int]:
    """The oldest CUDA version whose driver can load ``entry``: its PTX ISA, zstd (12.4), concatenation (13.4)."""
    return max(driver_needs(entry).values(), default=(0, 0))


def driver_needs(entry: FatbinEntry) -> dict[str, tuple[int, int]]:
    """What in ``entry`` needs a newer driver, by the rule that says so (:data:`RULES`): ``"ptx_isa_driver"``
    (its PTX ISA), ``"zstd_driver"`` (zstd, 12.4), ``"concat_driver"`` (a member of a concatenated entry, 13.4)."""
    need = {}
    if entry.kind in ("ptx", "reloc"):
        need["ptx_isa_driver"] = ptx_isa_needs(entry.version)
    if entry.compression == "zstd":
        need["zstd_driver"] = ZSTD_MIN_CUDA
    if entry.concatenated:  # whatever its container's compression: zstd (12.4) is older than concatenation
        need["concat_driver"] = _CONCAT_MIN_CUDA
    return need


def driver_gaps(fatbin: Fatbin | Source, gpus: GpuList, driver: DriverSpec) -> list[tuple[Arch, Selection]]:
    """GPUs that can run ``fatbin`` with a new enough driver but not with ``driver``.

    Parameters
    ----------
    fatbin : Fatbin, bytes-like or path
    gpus : str or iterable
        Compute capabilities, as for :func:`coverage`.
    driver : str, int or tuple
        The oldest driver to support (as for :func:`select_entry`).

    Returns
    -------
    list of (Arch, Selection)
        Each such GPU with the selection it gets from a driver without limits (what it would need).
    """
    fb = _fatbin_of(fatbin)
    specs = gpu_list(gpus)
    gaps = []
    for g in specs:
        free = select_entry(fb, g)
        limited = select_entry(fb, g, driver=driver)
        if free and not limited and limited.status not in _DRIVER_SUPPORT:  # nothing a fatbin could do for those
            gaps.append((free.gpu, free))
    return gaps


#: Per-GPU statuses of a binary, from best to worst (docs/scan.md). ``"no kernels"``: its fatbins hold no code
#: (nvcc's device-link stubs); ``"partial"``: some registered fatbins have code for the GPU and some none
#: (libraries that dispatch per GPU ship such modules). The last two mean the GPU is not covered.
#: The last two: the driver does not run the GPU at all (too old for it, or of a branch that dropped it).
STATUSES = ("no kernels", "SASS exact", "SASS compatible", "PTX JIT", "partial", "needs newer driver", "no entry",
            DRIVER_PREDATES_GPU, DRIVER_DROPPED_GPU)  # fmt: skip
UNCOVERED = ("needs newer driver", "no entry", DRIVER_PREDATES_GPU, DRIVER_DROPPED_GPU)
_DRIVER_SUPPORT = (DRIVER_PREDATES_GPU, DRIVER_DROPPED_GPU)
_RANK = {s: i for i, s in enumerate(STATUSES)}


def _signature(fb: Fatbin) -> tuple[object, ...]:
    """A key fatbins share when :func:`select_entry` reads the same of their headers (the payloads it reads are
    checked apart) and ``scan`` counts them alike: relocatable, stored as data, each entry's kind, SM, version,
    compression, arch and concatenation, the compressions of the entries holding members. Ints and strings (an
    arch as ``(major, minor, suffix)``), hashed in C: a library's 24,454 stored fatbins hashed 110,000 ``Arch``.
    """
    entries = fb.entries
    if len(entries) == 1:
        e = entries[0]
        if e.kind != "concat":
            a = e.arch
            return (fb.relocatable, fb.embedded, e.kind, e.sm, e.version, e.compression,
                    a and (a.major, a.minor, a.suffix))  # fmt: skip
    return (fb.relocatable, fb.embedded, tuple(e.compression for e in entries),
            *((e.kind, e.sm, e.version, e.compression, e.arch and (e.arch.major, e.arch.minor, e.arch.suffix),
               e.concatenated) for e in fb.iter_entries()))  # fmt: skip


def _payloads_read(fb: Fatbin) -> tuple[tuple[int, ...], tuple[object, ...]]:
    """The indices (in ``iter_entries()``) of the entries whose payload was read (the one selected, mostly) and
    what each said (:attr:`~cuda_fatbin.FatbinEntry.payload_mismatch`)."""
    read = [(i, vars(e)["payload_mismatch"]) for i, e in enumerate(fb.iter_entries()) if "payload_mismatch" in vars(e)]
    return tuple(i for i, _ in read), tuple(seen for _, seen in read)


def _mismatches(fb: Fatbin, read: tuple[int, ...]) -> tuple[object, ...]:
    """What the payloads of ``fb``'s entries at the indices ``read`` say (as :func:`_payloads_read` tells)."""
    if read == (0,) and fb.entries[0].kind != "concat":  # a stored fatbin of one entry
        return (fb.entries[0].payload_mismatch,)
    entries = tuple(fb.iter_entries()) if read else ()
    return tuple(entries[i].payload_mismatch for i in read)


def fatbin_status(fb: Fatbin, gpu: Arch, driver: DriverSpec, cache: dict[object, Any] | None = None) -> tuple[str, str]:
    """``(status, reason)`` of one fatbin on one GPU in the words of :data:`STATUSES`.

    A selection that fails only because of ``driver`` is ``"needs newer driver"``, one that fails on
    any driver ``"no entry"``. Fatbins with the same entries share one answer in ``cache``, when the
    payloads the answer read (:attr:`~cuda_fatbin.FatbinEntry.payload_mismatch`) agree too.
    """
    key = (_signature(fb), gpu, driver) if cache is not None else None
    if cache is not None and key in cache:
        answer: tuple[str, str]
        answer, (read, seen) = cache[key]
        if _mismatches(fb, read) == seen:  # else another payload: its own answer
            return answer
    sel = select_entry(fb, gpu, driver=driver)
    if sel or sel.status in _DRIVER_SUPPORT:
        found = (sel.status, sel.reason)
    elif driver is not None and select_entry(fb, gpu):
        found = ("needs newer driver", sel.reason)
    else:
        found = ("no entry", sel.reason)
    if cache is not None and key not in cache:
        cache[key] = (found, _payloads_read(fb))
    return found


_ANSWERS_PER_SIGNATURE = 8  # classes kept per signature (payloads that disagree differently): the work stays linear


def _classes(fatbins: list[Any], gpus: list[Arch], driver: DriverSpec, signatures: list[tuple[Any, ...]] | None = None,
             said: Callable[[Any, tuple[int, ...]], tuple[object, ...]] = _mismatches,
             made: Callable[[Any], Fatbin] | None = None) -> list[_Class]:  # fmt: skip
    """``fatbins`` (stored as data: thousands in a library, sharing a few signatures) in classes of one answer.

    A fatbin joins the class of an earlier one with its signature (:func:`_signature`, or given in ``signatures``)
    whose payloads read for its answers (:attr:`~cuda_fatbin.FatbinEntry.payload_mismatch`) say what its own
    say, as :func:`fatbin_status` shares an answer; otherwise it is judged on every GPU and starts a class. The
    judgement then costs one answer per class and GPU, and each fatbin's payloads are read once (a look-up).
    Items that are not :class:`Fatbin` (a part's, as found: ``_parts``) say ``said`` and are ``made`` to be judged.
    """
    classes: list[_Class] = []
    # signature -> [(indices of the entries read, what they said -> class)], at most _ANSWERS_PER_SIGNATURE classes
    known: dict[tuple[object, ...], list[tuple[tuple[int, ...], dict[tuple[object, ...], _Class]]]] = {}
    for item, signature in zip(fatbins, signatures or [_signature(fb) for fb in fatbins], strict=True):
        same = known.setdefault(signature, [])
        found = None
        for read, by_payloads in same:
            found = by_payloads.get(said(item, read) if read else ())  # (nothing read: nothing to say)
            if found is not None:
                break
        if found is None:
            fb = item if made is None else made(item)
            found = [{gpu: fatbin_status(fb, gpu, driver) for gpu in gpus}, 0]
            classes.append(found)
            if sum(len(by_payloads) for _, by_payloads in same) < _ANSWERS_PER_SIGNATURE:
                read, seen = _payloads_read(fb)
                group = next((by_payloads for r, by_payloads in same if r == read), None)
                if group is None:
                    group = {}
                    same.append((read, group))
                group[seen] = found
        found[1] += 1
    return classes


def _specialised(fb: Fatbin) -> bool:
    """Every entry is arch- or family-specific (``a``/``f``): code a library calls only on those GPUs."""
    return all(e.arch is not None and e.arch.suffix for e in fb.iter_entries())


def _code(fb: Fatbin, cache: dict[object, Any]) -> bool:
    key = ("code", id(fb))  # the fatbin itself (alive while judge runs): two fatbins may share an offset
    if key not in cache:
        from ._detect import fatbin_has_code

        cache[key] = fatbin_has_code(fb)
    found: bool = cache[key]
    return found


def judge(fatbins: Iterable[Fatbin], gpus: GpuList, driver: DriverSpec = None) -> dict[str, dict[str, str]]:
    """One status per GPU for a whole binary: the judgement ``scan`` and ``which`` both give (docs/scan.md).

    Registered fatbins with code decide: they must all load (any kernel may be called), the worst counts.
    When some load and others do not, some of those on no driver at all, the binary is ``"partial"``; when
    a newer driver would load every one, it ``"needs newer driver"``. nvcc's kernel-less
    device-link stubs are skipped. Registered fatbins that do not fit are served by the runtime's
    load-time device link when every relocatable (``-rdc``) fatbin has an entry for the GPU. Fatbins
    whose entries are all ``a``/``f`` are used by a library on those GPUs only, and fatbins stored as
    data are chosen by the library at run time: both are reported beside and decide only for a binary
    that has no registered fatbin with code (the best of them counts then).

    Parameters
    ----------
    fatbins : iterable of Fatbin
        Every fatbin of the binary (``iter_fatbins(path, embedded=True, relocatable=True)``).
    gpus : str or iterable
        Compute capabilities, as for :func:`coverage`.
    driver : str, int or tuple, optional
        As for :func:`select_entry`.

    Returns
    -------
    dict
        ``"9.0"`` -> ``{"status": one of STATUSES, "reason": ...}``; empty when no fatbin has an entry.

    Examples
    --------
    >>> from cuda_fatbin import Program, iter_fatbins
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> data = bytes(Program(src, "c++").compile("fatbin", archs=["sm_80"], ptx_for=[]).code)
    >>> {g: v["status"] for g, v in judge(iter_fatbins(data), "80;90").items()}
    {'8.0': 'SASS exact', '9.0': 'no entry'}
    """
    every = list(fatbins)
    if not any(True for fb in every for _ in fb.iter_entries()):
        return {}
    specs = gpu_list(gpus)
    cuda = parse_driver(driver)
    runs = [gpu for gpu in specs if support_gap(gpu, cuda) is None]  # the GPUs the driver runs
    stored = _classes([fb for fb in every if fb.embedded], runs, driver)
    return judge_classes([fb for fb in every if not fb.embedded], stored, specs, driver)


def judge_classes(
    fatbins: list[Fatbin], stored: list[_Class], specs: list[Arch], driver: DriverSpec
) -> dict[str, dict[str, str]]:
    """:func:`judge` of the fatbins not stored as data and the classes of those stored (:func:`_classes`, on
    the GPUs the driver runs; a file's parts searched apart give theirs in file order: ``cuda_fatbin._parts``)."""
    return with_stored(judge_own(fatbins, specs, driver), stored, specs)


def judge_own(fatbins: list[Fatbin], specs: list[Arch], driver: DriverSpec) -> dict[str, _Own]:
    """Per GPU: what ``fatbins`` (not stored as data) say before :func:`with_stored` adds those stored as data (a
    worker's, for a file searched in parts): status (None: undecided), reason, notes, stubs skipped, final."""
    cache: dict[object, Any] = {}
    cuda = parse_driver(driver)  # a GPU the driver does not run at all is final: no fatbin decides
    return {gpu.capability: (gap[0], gap[1], (), False, True) if (gap := support_gap(gpu, cuda)) is not None
            else _judge_own(fatbins, gpu, driver, cache) for gpu in specs}  # fmt: skip


def with_stored(own: dict[str, _Own], stored: list[_Class], specs: list[Arch]) -> dict[str, dict[str, str]]:
    """The judgement of each GPU of ``specs``: :func:`judge_own`'s, with the classes of the fatbins stored as data."""
    out = {}
    for gpu in specs:
        status, reason, notes, stubs, final = own[gpu.capability]
        if stored and not final:
            best, why = min((c[0][gpu] for c in stored), key=lambda answer: _RANK[answer[0]])  # the first of the best
            loading = sum(c[1] for c in stored if _RANK[c[0][gpu][0]] <= _RANK["PTX JIT"])
            notes = (*notes, f"{loading} of {sum(c[1] for c in stored)} fatbins stored as data load ({best} at best)")
            if status is None:
                status, reason = best, f"a fatbin stored as data: {why}"
        if status is None:
            status, reason = ("no kernels", "its fatbins hold no code") if stubs else ("no entry", "no fatbin")
        out[gpu.capability] = {"status": status, "reason": "; ".join([reason, *notes])}
    return out


def _judge_own(fatbins: list[Fatbin], gpu: Arch, driver: DriverSpec, cache: dict[object, Any]) -> _Own:
    registered = [fb for fb in fatbins if fb.loadable and not fb.embedded]
    relocatable = [fb for fb in fatbins if fb.relocatable]
    none, driver_bad, ok = _RANK["no entry"], _RANK["needs newer driver"], _RANK["PTX JIT"]

    def rank(row: _Row) -> int:
        return _RANK[row[0][0]]

    notes = []
    own: list[_Row] = [(fatbin_status(fb, gpu, driver, cache), fb) for fb in registered if not _specialised(fb)]
    stubs: list[_Row] = []
    rows: list[_Row] = []
    for r in own:  # one pass: a list search per row was quadratic in kernel-less fatbins
        # a fatbin without code that loads nothing, or only an empty PTX module, decides nothing
        skip = rank(r) >= driver_bad or r[0][0] == "PTX JIT"
        (stubs if skip and r[1] is not None and not _code(r[1], cache) else rows).append(r)
    if stubs:
        notes.append(f"{len(stubs)} registered fatbins without code skipped")
    linked: list[_Row] = [(fatbin_status(fb, gpu, driver, cache), fb) for fb in relocatable if _code(fb, cache)]
    if linked and (not rows or any(rank(r) == none for r in rows)):
        worst = max(linked, key=rank)
        if rank(worst) <= ok:  # the runtime's load-time device link stands in for what does not fit
            via = (worst[0][0], f"the CUDA runtime links the {len(linked)} relocatable (-rdc) fatbins at load time: "
                                f"{worst[0][1]}")  # fmt: skip
            rows = [(via, r[1]) if rank(r) == none else r for r in rows] or [(via, None)]
        else:
            notes.append(f"the load-time link of the {len(linked)} relocatable fatbins cannot serve it either")
    status: str | None = None
    reason = ""
    if rows:
        failing = [r for r in rows if rank(r) > ok]  # no entry, or one a newer driver would load
        worst = max(rows, key=rank)
        if not failing or len(failing) == len(rows) or rank(worst) == driver_bad:  # all, none, or a driver's to fix
            status, reason = worst[0]
        else:
            status = "partial"
            reason = (f"{len(rows) - len(failing)} of {len(rows)} registered fatbins load, {len(failing)} do not "
                      f"(kernels in those fail if called): {failing[0][0][1]}")  # fmt: skip
        if len(rows) > 1 and status != "partial":
            reason = f"{len(rows)} registered fatbins, the weakest: {reason}"
    special: list[_Row] = [(fatbin_status(fb, gpu, driver, cache), fb) for fb in registered if _specialised(fb)]
    if special:
        notes.append(f"{sum(rank(r) <= ok for r in special)} of {len(special)} arch-specific fatbins load")
        if status is None:
            (status, reason), _fb = min(special, key=rank)
    return status, reason, tuple(notes), bool(stubs), False
