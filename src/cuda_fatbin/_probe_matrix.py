# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The probe's cases: a table of rows, each resolved against one GPU's archs.

A row names its entries' archs by their relation to the GPU (``exact``, ``compatible``, ``lower``,
``lower2``, ``higher``, the ``a``/``f`` archs ``exact_a``, ``exact_f``, ``higher_f``) and their PTX ISA as
``old_isa``/``new_isa``; :func:`matrix` puts in the GPU's own archs and leaves out the rows whose archs do
not exist for it. Rows that stand for a rule this GPU cannot show are listed at the end, with why.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from ._arch import Arch

__all__ = ["Case", "Entry", "matrix"]


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
_EVERYTHING = ("cold", "warm", "warm-other")


@dataclass(frozen=True)
class _Row:
    """Cases of the matrix: one (``orders=False``) or one per order of the entries (2 or 3), and with
    ``spliced`` each order again with one container per entry. An entry's ``arch``/``header_arch`` and
    ``isa`` name slots of :func:`_slots`; the row is left out when a slot it names, or one of ``needs``,
    is None. ``{slot}`` in the name is the slot's value. ``tegra_rule``: the rule on a Tegra GPU."""

    name: str
    rule: str
    entries: tuple[Entry, ...]
    orders: bool = True
    env: tuple[tuple[str, str], ...] = ()
    caches: tuple[str, ...] = ("cold", "warm")
    spliced: bool = False
    needs: tuple[str, ...] = ()
    tegra_rule: str | None = None


def _one(name: str, rule: str, *entries: Entry, **kw: object) -> _Row:
    return _Row(name, rule, entries, orders=False, **kw)  # type: ignore[arg-type]


def _all(name: str, rule: str, *entries: Entry, **kw: object) -> _Row:
    return _Row(name, rule, entries, **kw)  # type: ignore[arg-type]


# (name, rule, why): a rule this GPU cannot show when the slot is None; listed at the end, in this order
_MISSING = {
    "exact_a": ("suffix a vs plain", "suffix_order", "no arch {exact}a"),
    "exact_f": ("suffix f vs a vs plain", "suffix_order_f", "no arch {exact}f"),
    "compatible": ("SASS compatible vs PTX", "sass_lower_minor", "no lower minor of {major}.x"),
    "new_isa": ("PTX ISA newer than the driver", "ptx_isa_driver", "driver version unknown"),
}

# before the ties: kinds the driver does not take, relocatable PTX, concatenated entries; preference between
# ranks (both orders). SASS of a lower minor beside PTX that surely runs: on a desktop GPU the SASS is taken,
# on a Tegra GPU (Orin, Thor) the PTX, as the Programming Guide says (docs/selection.md, "Tegra")
_RANKS = (
    _one("ltoir {exact} alone", "ignored_kinds", _E("ltoir", "exact", 1)),
    _one("tile_ir alone", "ignored_kinds", _E("tile_ir", "exact", 1)),
    _all("ltoir exact + ptx lower", "ignored_kinds", _E("ltoir", "exact", 1), _E("ptx", "lower", 2)),
    _all("tile_ir + ptx lower", "ignored_kinds", _E("tile_ir", "exact", 1), _E("ptx", "lower", 2)),
    _one("reloc {exact} alone", "reloc_ptx", _E("reloc", "exact", 1)),
    _all("reloc exact + cubin exact", "sass_over_ptx", _E("reloc", "exact", 1), _E("cubin", "exact", 2)),
    _all("reloc exact + ptx exact", "ptx_over_reloc", _E("reloc", "exact", 1), _E("ptx", "exact", 2)),
    _all("reloc lower + ptx exact", "ptx_nearest", _E("reloc", "lower", 1), _E("ptx", "exact", 2)),
    _one("concat cubin exact", "concat_driver", _E("cubin", "exact", 1, concat=True, compression="lz4")),
    _one("concat ptx exact", "concat_driver", _E("ptx", "exact", 1, concat=True, compression="lz4")),
    _all("concat cubin exact + plain ptx lower", "concat_driver",
         _E("cubin", "exact", 1, concat=True, compression="lz4"), _E("ptx", "lower", 2)),
    _all("cubin exact + ptx exact", "sass_over_ptx", _E("cubin", "exact", 1), _E("ptx", "exact", 2)),
    _all("cubin exact + ptx exact a", "sass_over_ptx", _E("cubin", "exact", 1), _E("ptx", "exact_a", 2)),
    _all("cubin exact a + cubin exact", "suffix_order", _E("cubin", "exact_a", 1), _E("cubin", "exact", 2)),
    _all("ptx exact a + ptx exact", "suffix_order", _E("ptx", "exact_a", 1), _E("ptx", "exact", 2)),
    _all("cubin exact f + cubin exact", "suffix_order_f", _E("cubin", "exact_f", 1), _E("cubin", "exact", 2)),
    _all("ptx exact f + ptx exact", "suffix_order_f", _E("ptx", "exact_f", 1), _E("ptx", "exact", 2)),
    _all("cubin compatible + ptx exact", "sass_over_ptx", _E("cubin", "compatible", 1), _E("ptx", "exact", 2)),
    _all("cubin compatible + ptx lower", "sass_lower_minor", _E("cubin", "compatible", 1),
         _E("ptx", "lower_or_compatible", 2), tegra_rule="sass_tegra"),
    _all("ptx lower + ptx lower2", "ptx_nearest", _E("ptx", "lower", 1), _E("ptx", "lower2", 2)),
    _all("ptx exact + ptx lower", "ptx_nearest", _E("ptx", "exact", 1), _E("ptx", "lower", 2), needs=("lower2",)),
    _all("cubin lower + ptx lower2", "sass_other_major", _E("cubin", "lower", 1), _E("ptx", "lower2", 2)),
    _all("ptx higher + ptx lower", "ptx_lower", _E("ptx", "higher", 1), _E("ptx", "lower", 2)),
    _all("cubin higher f + ptx lower", "family_other_major", _E("cubin", "higher_f", 1), _E("ptx", "lower", 2)),
)  # fmt: skip

# ties: equally ranked entries with differing attributes (kind, arch slot, rule, how the name says the arch)
_TIE_GROUPS = (
    ("cubin", "exact", "tie_sass", "exact"),
    ("cubin", "exact_a", "tie_sass", "exact a"),
    ("ptx", "exact", "tie_ptx_exact", "exact"),
    ("ptx", "exact_a", "tie_ptx_other", "exact a"),
    ("ptx", "lower", "tie_ptx_other", "lower"),
)

# after the ties: CUDA_FORCE_PTX_JIT / CUDA_DISABLE_PTX_JIT, with the JIT cache cold, warm, and warm with other
# PTX; PTX ISA newer than the driver; a header that contradicts its payload; spliced containers (does the
# driver read past the first?)
_ENVIRONMENT = (
    _one("force: cubin exact", "force_ptx_jit", _E("cubin", "exact", 1), env=_FORCE),
    _all("force: cubin exact + ptx lower", "force_ptx_jit", _E("cubin", "exact", 1), _E("ptx", "lower", 2),
         env=_FORCE),
    _all("disable: cubin exact + ptx lower", "disable_ptx_jit", _E("cubin", "exact", 1), _E("ptx", "lower", 2),
         env=_DISABLE),
    _one("disable: ptx lower", "jit_cache", _E("ptx", "lower", 1), env=_DISABLE, caches=_EVERYTHING),
    _all("disable: ptx exact + ptx lower", "jit_cache", _E("ptx", "exact", 1), _E("ptx", "lower", 2),
         env=_DISABLE, caches=_EVERYTHING),
    _one("disable: ptx exact", "jit_cache", _E("ptx", "exact", 1), env=_DISABLE, caches=_EVERYTHING),
    _all("force: tie ptx exact", "tie_ptx_exact", _E("ptx", "exact", 1), _E("ptx", "exact", 2, compression="lz4"),
         env=_FORCE),
    _all("force: tie cubin exact + 2 ptx exact", "force_ptx_jit", _E("cubin", "exact", 1), _E("ptx", "exact", 2),
         _E("ptx", "exact", 3, isa="old_isa"), env=_FORCE),
    _all("disable: tie ptx exact", "jit_cache", _E("ptx", "exact", 1), _E("ptx", "exact", 2, compression="lz4"),
         env=_DISABLE, caches=_EVERYTHING),
    _one("ptx exact ISA {new_isa} alone", "ptx_isa_driver", _E("ptx", "exact", 1, isa="new_isa")),
    _all("ptx exact new ISA + ptx exact", "ptx_isa_driver", _E("ptx", "exact", 1, isa="new_isa"),
         _E("ptx", "exact", 2)),
    _all("ptx exact new ISA + ptx lower", "ptx_isa_driver", _E("ptx", "exact", 1, isa="new_isa"),
         _E("ptx", "lower", 2)),
    _all("ptx exact new ISA + cubin exact", "sass_over_ptx", _E("ptx", "exact", 1, isa="new_isa"),
         _E("cubin", "exact", 2)),
    _one("header exact around cubin lower", "header_mismatch", _E("cubin", "lower", 1, header_arch="exact")),
    _one("header lower around cubin exact", "header_mismatch", _E("cubin", "exact", 1, header_arch="lower")),
    _all("header exact around cubin lower + ptx lower", "header_mismatch",
         _E("cubin", "lower", 1, header_arch="exact"), _E("ptx", "lower", 2)),
    _all("header exact around cubin lower + cubin exact", "header_mismatch",
         _E("cubin", "lower", 1, header_arch="exact"), _E("cubin", "exact", 2)),
    _one("header exact around ptx lower", "header_mismatch", _E("ptx", "lower", 1, header_arch="exact")),
    _one("header exact around ptx higher", "header_mismatch", _E("ptx", "higher", 1, header_arch="exact"),
         needs=("lower",)),
    _all("header exact around ptx lower + ptx exact", "header_mismatch",
         _E("ptx", "lower", 1, header_arch="exact"), _E("ptx", "exact", 2)),
    _one("ptx header around cubin exact", "header_mismatch", _E("cubin", "exact", 1, header_kind="ptx")),
    _one("cubin header around ptx exact", "header_mismatch", _E("ptx", "exact", 1, header_kind="cubin")),
    _all("spliced: cubin lower | cubin exact", "driver_input", _E("cubin", "lower", 1),
         _E("cubin", "exact", 2, container=1)),
    _all("spliced: ptx exact | cubin exact", "driver_input", _E("ptx", "exact", 1),
         _E("cubin", "exact", 2, container=1)),
)  # fmt: skip


def _slots(g: Arch, supported: Sequence[int], driver_cuda: tuple[int, int] | None) -> dict[str, str | None]:
    """The value of each slot a row may name, for GPU ``g`` (None: no such arch or ISA)."""
    t = _targets(g, supported)
    return {
        "exact": t.exact,
        "compatible": t.compatible,
        "lower": t.lower,
        "lower2": t.lower2,
        "higher": t.higher,
        "exact_a": _with_suffix(t.exact, "a"),
        "exact_f": _with_suffix(t.exact, "f"),
        "higher_f": _with_suffix(t.higher, "f"),
        "lower_or_compatible": t.lower or t.compatible,
        "old_isa": _older_isa(driver_cuda),
        "new_isa": _newer_isa(driver_cuda),
        "major": str(g.major),
    }


def _resolve(entry: Entry, slots: dict[str, str | None]) -> Entry | None:
    """``entry`` with its slots filled in; None when one of them is None."""
    arch = slots[entry.arch]
    header_arch = slots[entry.header_arch] if entry.header_arch else None
    isa = slots[entry.isa] if entry.isa else None
    if arch is None or (entry.header_arch and header_arch is None) or (entry.isa and isa is None):
        return None
    return dataclasses.replace(entry, arch=arch, header_arch=header_arch, isa=isa)


def _row_cases(row: _Row, slots: dict[str, str | None], tegra: bool) -> list[Case]:
    """The cases of one row for this GPU (none when it names an arch the GPU lacks)."""
    resolved = [_resolve(e, slots) for e in row.entries]
    entries = [e for e in resolved if e is not None]
    if len(entries) < len(resolved) or any(slots[n] is None for n in row.needs):
        return []
    name = row.name.format(**slots)
    rule = row.tegra_rule if tegra and row.tegra_rule else row.rule
    if not row.orders:
        return _cases(name, rule, entries, row.env, row.caches)
    return _orders(name, rule, entries, row.env, row.caches, row.spliced)


def _cases(
    name: str,
    rule: str,
    entries: Sequence[Entry],
    env: tuple[tuple[str, str], ...] = (),
    caches: Sequence[str] = ("cold", "warm"),
) -> list[Case]:
    """One case per JIT cache state; the name says the state unless it is the only one and cold."""
    return [
        Case(name + (f" [{cache}]" if len(caches) > 1 or cache != "cold" else ""), rule, tuple(entries), env, cache)
        for cache in caches
    ]


def _orders(
    name: str,
    rule: str,
    entries: Sequence[Entry],
    env: tuple[tuple[str, str], ...] = (),
    caches: Sequence[str] = ("cold", "warm"),
    spliced: bool = False,
) -> list[Case]:
    """Every order of ``entries`` (2 or 3), in one container and, with ``spliced``, one per container."""
    cases: list[Case] = []
    for perm in itertools.permutations(entries):
        order = ",".join(str(e.tag) for e in perm)
        cases += _cases(f"{name} <{order}>", rule, perm, env, caches)
        if spliced:
            split = [dataclasses.replace(e, container=i) for i, e in enumerate(perm)]
            cases += _cases(f"{name} <{order}> spliced", rule, split, env, caches)
    return cases


def _singles(g: Arch, slots: dict[str, str | None]) -> tuple[list[Case], list[tuple[str, str, str]]]:
    """One entry of each kind x arch relation x suffix; the (name, rule, why) of those this GPU lacks."""
    cases: list[Case] = []
    missing: list[tuple[str, str, str]] = []
    for kind in ("cubin", "ptx"):
        for how in ("exact", "compatible", "lower", "higher"):
            arch = slots[how]
            for suffix in ("", "a", "f"):
                full = _with_suffix(arch, suffix)
                name = f"single {kind} {how}{' ' + suffix if suffix else ''}"
                if full is None:
                    why = f"no {how} arch for {g.capability}" if arch is None else f"no arch {arch}{suffix}"
                    missing.append((name, _single_rule(kind, how, suffix), why))
                    continue
                cases += _cases(f"{name}: {full}", _single_rule(kind, how, suffix), [_E(kind, full, 1)])
    return cases, missing


def _ties(slots: dict[str, str | None]) -> list[Case]:
    """Equally ranked entries with differing attributes, 2 and 3 in every order, in one container and spliced."""
    cases: list[Case] = []
    for kind, slot, rule, how in _TIE_GROUPS:
        arch = slots[slot]
        if arch is None:
            continue
        variants = [_E(kind, arch, 1), _E(kind, arch, 2, compression="lz4"), _E(kind, arch, 3, debug=True)]
        if kind == "ptx":
            variants[2] = _E(kind, arch, 3, isa=slots["old_isa"])
        extra = [_E(kind, arch, 4, compression="zstd"), _E(kind, arch, 5, producer="opencl")]
        for a, b in itertools.combinations(variants + extra, 2):
            cases += _orders(
                f"tie {kind} {how} {_attrs(a)}/{_attrs(b)}", rule, [a, b], spliced=(a.tag, b.tag) == (1, 2)
            )
        cases += _orders(f"tie {kind} {how} x3", rule, variants, spliced=True)
    return cases


def matrix(gpu: Arch | str, supported: Sequence[int], *, driver_cuda: tuple[int, int] | None = None) -> list[Case]:
    """The probe's cases for a GPU of capability ``gpu`` and NVRTC archs ``supported`` (SM numbers).

    Cases whose archs do not exist for this GPU (no lower minor on 9.0, no ``f`` arch for 9.0) are
    still listed, at the end, without entries and named ``"<case> (not observable: <why>)"``, so that the
    report says what this GPU cannot show.

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
    slots = _slots(g, supported, driver_cuda)
    tegra = is_tegra(g)
    cases, missing = _singles(g, slots)
    for row in _RANKS:
        cases += _row_cases(row, slots, tegra)
    cases += _ties(slots)
    for row in _ENVIRONMENT:
        cases += _row_cases(row, slots, tegra)
    missing += [
        (name, rule, why.format(**slots)) for slot, (name, rule, why) in _MISSING.items() if slots[slot] is None
    ]
    return cases + [Case(f"{name} (not observable: {why})", rule, (), (), "cold") for name, rule, why in missing]


def _attrs(e: Entry) -> str:
    bits = [
        e.compression if e.compression != "none" else "",
        "debug" if e.debug else "",
        f"ISA{e.isa}" if e.isa else "",
        e.producer if e.producer != "cuda" else "",
    ]
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
