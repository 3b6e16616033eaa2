# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""GPU architecture values and the spellings users know for them.

This is the one home of arch normalisation: every other module turns user input into an
:class:`Arch` through :meth:`Arch.parse` and hands libraries the spelling they want through
the properties here.
"""

from __future__ import annotations

import functools
import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import TypeAlias

    #: Everything :func:`parse_archs` accepts.
    ArchSpec: TypeAlias = (
        "ArchList | Arch | str | int | list[Arch | str | int] | tuple[Arch | str | int, ...]"
        " | dict[str, str | Iterable[str]]"
    )

__all__ = ["Arch", "ArchList", "parse_archs", "split_arch_list"]

_SUFFIXES = ("", "f", "a")  # sort order: plain < family < arch-specific
# The first SM that has each suffix (nvcc rejects e.g. sm_80a and sm_90f).
_SUFFIX_FIRST_SM = {"a": 90, "f": 100}

_ACCEPTED = "sm_90, compute_90, lto_90, 90, 9.0, 90a, 9.0a, sm_100f or the int 90"
_SM_RE = re.compile(r"(?:sm_|compute_|lto_)?(?P<sm>[1-9][0-9]?[0-9])(?P<suffix>[af]?)", re.ASCII)
_CC_RE = re.compile(r"(?P<major>[1-9][0-9]?)\.(?P<minor>[0-9])(?P<suffix>[af]?)", re.ASCII)


@functools.total_ordering
class Arch:
    """A GPU architecture: compute capability ``major.minor`` plus an optional suffix.

    ``Arch`` is hashable and ordered by ``(major, minor, suffix)`` with the suffix order
    ``"" < "f" < "a"``. Build one with :meth:`parse` from any usual spelling.

    Attributes
    ----------
    major : int
        Compute capability major version (``9`` for sm_90).
    minor : int
        Compute capability minor version, 0-9 (``6`` for sm_86).
    suffix : str
        ``""``, ``"a"`` (arch-specific features: runs only on exactly this capability) or
        ``"f"`` (family-specific features: runs within the family).

    Examples
    --------
    >>> Arch.parse("sm_90a")
    Arch(major=9, minor=0, suffix='a')
    >>> str(Arch.parse("8.6")), Arch.parse(100).bare
    ('sm_86', '100')
    """

    # A plain immutable class, not a dataclass: importing dataclasses costs `cuda-fatbin inspect` ~7 ms.
    __slots__ = ("major", "minor", "suffix")
    major: int
    minor: int
    suffix: str

    def __init__(self, major: int, minor: int, suffix: str = "") -> None:
        if not isinstance(major, int) or isinstance(major, bool) or not 1 <= major <= 99:
            raise ValueError(f"Arch major must be an int from 1 to 99; got {major!r}")
        if not isinstance(minor, int) or isinstance(minor, bool) or not 0 <= minor <= 9:
            raise ValueError(f"Arch minor must be an int from 0 to 9; got {minor!r}")
        if suffix not in _SUFFIXES:
            raise ValueError(f"Arch suffix must be one of '', 'a', 'f'; got {suffix!r}")
        first = _SUFFIX_FIRST_SM.get(suffix)
        if first is not None and major * 10 + minor < first:
            raise ValueError(
                f"the {suffix!r} suffix exists from sm_{first} on; sm_{major * 10 + minor}{suffix} is not an arch"
            )
        object.__setattr__(self, "major", major)
        object.__setattr__(self, "minor", minor)
        object.__setattr__(self, "suffix", suffix)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Arch is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Arch is immutable; cannot delete {name!r}")

    def __repr__(self) -> str:
        return f"Arch(major={self.major!r}, minor={self.minor!r}, suffix={self.suffix!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Arch):
            return NotImplemented
        return (self.major, self.minor, self.suffix) == (other.major, other.minor, other.suffix)

    def __hash__(self) -> int:
        return hash((self.major, self.minor, self.suffix))

    def __reduce__(self) -> tuple[type[Arch], tuple[int, int, str]]:
        return (Arch, (self.major, self.minor, self.suffix))

    @classmethod
    def parse(cls, spec: Arch | str | int) -> Arch:
        """Parse one architecture from any usual spelling.

        Parameters
        ----------
        spec : Arch, str or int
            ``"sm_90"``, ``"compute_90"``, ``"lto_90"``, ``"90"``, ``"9.0"``, ``"90a"``, ``"9.0a"``,
            ``"sm_100f"``, the int ``90``, or an ``Arch`` (returned as is). The ``sm_`` /
            ``compute_`` / ``lto_`` prefix is accepted and dropped: it names a code kind, not an arch.

        Returns
        -------
        Arch

        Raises
        ------
        ValueError
            If ``spec`` is not one of the accepted spellings; the message quotes it.
        TypeError
            If ``spec`` is neither an ``Arch``, a ``str`` nor an ``int``.
        """
        if isinstance(spec, Arch):
            return spec
        if isinstance(spec, bool) or not isinstance(spec, (str, int)):
            raise TypeError(f"an arch must be an Arch, str or int; got {type(spec).__name__} {spec!r}")
        text = str(spec).strip().lower()
        m = _SM_RE.fullmatch(text)
        if m:
            sm = int(m["sm"])
            major, minor, suffix = sm // 10, sm % 10, m["suffix"]
        else:
            m = _CC_RE.fullmatch(text)
            if not m:
                raise ValueError(f"not an arch: {spec!r}; accepted spellings: {_ACCEPTED}")
            major, minor, suffix = int(m["major"]), int(m["minor"]), m["suffix"]
        try:
            return cls(major, minor, suffix)
        except ValueError as e:
            raise ValueError(f"not an arch: {spec!r}: {e}") from None

    @property
    def sm(self) -> int:
        """The SM number without suffix: ``90`` for sm_90a."""
        return self.major * 10 + self.minor

    @property
    def bare(self) -> str:
        """The form libnvfatbin wants: ``"90a"``."""
        return f"{self.sm}{self.suffix}"

    @property
    def compute(self) -> str:
        """The virtual-arch spelling: ``"compute_90a"``."""
        return f"compute_{self.bare}"

    @property
    def capability(self) -> str:
        """The compute capability as PyTorch and CMake write it: ``"9.0a"``."""
        return f"{self.major}.{self.minor}{self.suffix}"

    @property
    def base(self) -> Arch:
        """The same capability without a suffix."""
        return Arch(self.major, self.minor) if self.suffix else self

    def __str__(self) -> str:
        return f"sm_{self.bare}"

    def builds(self, real: Arch) -> bool:
        """Can PTX for this virtual arch become SASS for ``real`` (at build time, or JIT on a GPU)?

        The one home of the rule, as nvcc and ptxas apply it (``tests/test_arch.py`` compiles every pair
        of a set with nvcc): ``real`` is not older; PTX of an ``a`` arch builds only that arch (ptxas:
        "cannot be compiled to future architecture"); PTX of an ``f`` arch, and SASS of an ``f`` arch,
        stay within the family (the same major).

        Examples
        --------
        >>> Arch.parse("compute_80").builds(Arch.parse("sm_86"))
        True
        >>> Arch.parse("compute_100f").builds(Arch.parse("sm_120"))
        False
        """
        if real.sm < self.sm:
            return False
        if self.suffix == "a":
            return real == self
        if self.suffix == "f" or real.suffix == "f":
            return real.major == self.major
        return True

    def _key(self) -> tuple[int, int, int]:
        return (self.major, self.minor, _SUFFIXES.index(self.suffix))

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Arch):
            return NotImplemented
        return self._key() < other._key()


def split_arch_list(spec: str) -> list[str]:
    """Split a list of arch spellings written as one string: ``"75;80, 86 9.0"`` -> ``["75", "80", "86", "9.0"]``.

    Raises
    ------
    ValueError
        If ``spec`` holds no item.
    """
    items = [s for s in re.split(r"[;,\s]+", spec.strip()) if s]
    if not items:
        raise ValueError(f"empty arch list: {spec!r}")
    return items


class ArchList:
    """What an arch spec asks for: SASS, PTX and LTO-IR entries, and gencode groupings.

    Built by :func:`parse_archs`. Two specs with the same meaning give equal ``ArchList`` values;
    an ``ArchList`` of SASS entries only also equals the plain list of those archs.

    Attributes
    ----------
    sass : tuple of Arch
        Real architectures: a SASS (cubin) entry each.
    ptx : tuple of Arch
        Virtual architectures: a PTX entry each.
    ltoir : tuple of Arch
        LTO-IR entries (``lto_90``).
    virtual : tuple of (Arch, Arch)
        ``(real, virtual)`` pairs where the spec says to build SASS for ``real`` from PTX of another
        ``virtual`` arch (nvcc ``arch=compute_80,code=sm_86``).
    explicit_ptx : bool
        Whether the spelling itself says which PTX to embed (``compute_XX``, ``+PTX``, ``-virtual``,
        CMake numbers, gencode). When False, ``Program.compile("fatbin", ptx_for=None)`` adds PTX for
        the newest arch, like ``nvcc -arch=sm_XX``.

    Examples
    --------
    >>> from cuda_fatbin import parse_archs
    >>> al = parse_archs("80;90+PTX")
    >>> [str(a) for a in al.sass], [a.compute for a in al.ptx]
    (['sm_80', 'sm_90'], ['compute_90'])
    >>> str(al)
    'sm_80, sm_90, compute_90'
    >>> parse_archs(str(al)) == al
    True
    """

    __slots__ = ("explicit_ptx", "ltoir", "ptx", "sass", "virtual")
    sass: tuple[Arch, ...]
    ptx: tuple[Arch, ...]
    ltoir: tuple[Arch, ...]
    virtual: tuple[tuple[Arch, Arch], ...]
    explicit_ptx: bool

    def __init__(
        self,
        sass: tuple[Arch, ...] = (),
        ptx: tuple[Arch, ...] = (),
        ltoir: tuple[Arch, ...] = (),
        virtual: tuple[tuple[Arch, Arch], ...] = (),
        explicit_ptx: bool = False,
    ) -> None:
        for name, value in (("sass", sass), ("ptx", ptx), ("ltoir", ltoir), ("virtual", virtual),
                            ("explicit_ptx", explicit_ptx)):  # fmt: skip
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"ArchList is immutable; cannot set {name!r}")

    def __repr__(self) -> str:
        return (f"ArchList(sass={self.sass!r}, ptx={self.ptx!r}, ltoir={self.ltoir!r}, virtual={self.virtual!r}, "
                f"explicit_ptx={self.explicit_ptx!r})")  # fmt: skip

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ArchList):
            return (self.sass, self.ptx, self.ltoir, self.virtual, self.explicit_ptx) == (
                other.sass, other.ptx, other.ltoir, other.virtual, other.explicit_ptx
            )  # fmt: skip
        if isinstance(other, list):
            return not (self.ptx or self.ltoir or self.virtual) and list(self.sass) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.sass, self.ptx, self.ltoir, self.virtual, self.explicit_ptx))

    def __bool__(self) -> bool:
        return bool(self.sass or self.ptx or self.ltoir)

    def __str__(self) -> str:
        """A spelling :func:`parse_archs` reads back into an equal ``ArchList``: ``sm_80, sm_90, compute_90``,
        or nvcc gencode clauses where the spec pairs SASS with another virtual arch or says "no PTX"."""
        lto = [f"lto_{a.bare}" for a in self.ltoir]
        if not self.virtual and (self.ptx or not self.explicit_ptx):
            return ", ".join([str(a) for a in self.sass] + [a.compute for a in self.ptx] + lto)
        pairs = dict(self.virtual)
        virtuals = sorted({pairs.get(a, a) for a in self.sass} | set(self.ptx))
        clauses = []
        for v in virtuals:
            codes = [str(a) for a in self.sass if pairs.get(a, a) == v] + ([v.compute] if v in self.ptx else [])
            clauses.append(f"arch={v.compute},code=[{','.join(codes)}]")
        return ";".join(clauses + lto)

    def all_archs(self) -> tuple[Arch, ...]:
        """Every arch named, sorted."""
        return tuple(sorted({*self.sass, *self.ptx, *self.ltoir, *(v for _, v in self.virtual)}))


# A gencode clause is ``(?:--generate-code|-gencode)?[ =]*arch=(?P<arch>W),code=(?P<code>\[[^\]]*\]|W)`` with
# W = ``[A-Za-z0-9_]+``; :func:`_gencode_clauses` finds them as ``re.finditer`` would with that pattern, in
# time linear in the spec (the regex itself backtracks quadratically on e.g. ``"=" * N + "arch=x"``).
_WORD_RE = re.compile(r"[A-Za-z0-9_]+", re.ASCII)
_GENCODE_PREFIXES = ("--generate-code", "-gencode")
_CMAKE_RE = re.compile(r"(?P<arch>[0-9]+[af]?)-(?P<which>real|virtual)", re.ASCII)
_TORCH_PTX_RE = re.compile(r"(?P<arch>[0-9.]+[af]?)\+ptx", re.ASCII | re.I)
_STYLES = ("auto", "list", "cmake", "torch", "nvcc")


def parse_archs(spec: ArchSpec, *, style: str = "auto", supported: tuple[int, ...] | None = None) -> ArchList:
    """Parse an arch spec in any of the spellings users know into an :class:`ArchList`.

    Parameters
    ----------
    spec : str, int, Arch, list, tuple, mapping or ArchList
        - lists, or ``,``/``;``/space-separated strings, of ``sm_80``, ``80``, ``8.0``, ``90a``, ``100f``
          (SASS); ``compute_90`` (PTX only); ``lto_90`` (LTO-IR);
        - nvcc gencode: ``"arch=compute_80,code=[sm_80,sm_86]"`` (several may be given, with or without
          ``-gencode``), or a mapping ``{"compute_80": ["sm_80", "sm_86"], "compute_90": ["sm_90", "compute_90"]}``;
        - CMake ``CUDA_ARCHITECTURES``: ``"80-real;90-virtual;100"`` (a bare number is SASS and PTX),
          ``"all"``, ``"all-major"``, ``"native"``;
        - PyTorch ``TORCH_CUDA_ARCH_LIST``: ``"8.0;8.6;9.0+PTX"``, ``"9.0a"``.
    style : {"auto", "list", "cmake", "torch", "nvcc"}, optional
        How to read bare numbers, which CMake reads as SASS + PTX and the other styles as SASS.
        ``"auto"`` reads a string as CMake when an item ends in ``-real``/``-virtual`` or the whole spec is
        ``all``, ``all-major`` or ``native``. Default: "auto".
    supported : tuple of int, optional
        SM numbers to resolve ``all``/``all-major`` against. Default: None (ask the installed NVRTC).

    Returns
    -------
    ArchList

    Raises
    ------
    ValueError
        A malformed item (the message quotes it), or an empty spec.
    TypeError
        A spec of another type.
    NoDriverError
        ``native`` on a machine without a usable driver or GPU (a ``RuntimeError``; raised at once).

    Examples
    --------
    >>> from cuda_fatbin import parse_archs
    >>> parse_archs("8.0;8.6;9.0+PTX") == parse_archs("80-real;86-real;90")  # PyTorch and CMake spellings
    True
    >>> al = parse_archs("arch=compute_80,code=[sm_80,sm_86]")  # nvcc: sm_86 SASS built from compute_80
    >>> [str(a) for a in al.sass], [(str(real), virtual.compute) for real, virtual in al.virtual]
    (['sm_80', 'sm_86'], [('sm_86', 'compute_80')])
    >>> parse_archs("arch=compute_100f,code=sm_120")
    Traceback (most recent call last):
        ...
    ValueError: ...
    """
    if style not in _STYLES:
        raise ValueError(f"style must be one of {', '.join(_STYLES)}; got {style!r}")
    if isinstance(spec, ArchList):
        return spec
    acc = _Acc()
    if isinstance(spec, Arch) or (isinstance(spec, int) and not isinstance(spec, bool)):
        acc.sass.add(Arch.parse(spec))
    elif isinstance(spec, str):
        _parse_string(spec, style, supported, acc)
    elif isinstance(spec, dict):
        for virtual, codes in spec.items():
            _add_gencode(str(virtual), [codes] if isinstance(codes, str) else list(codes), acc, spec)
    elif isinstance(spec, (list, tuple)):
        for item in spec:
            if isinstance(item, str):
                _parse_string(item, style, supported, acc)
            elif isinstance(item, (Arch, int)) and not isinstance(item, bool):
                acc.sass.add(Arch.parse(item))
            else:
                raise TypeError(f"arch list item {item!r} is not a str, int or Arch")
    else:
        raise TypeError(f"an arch spec must be a str, int, Arch, list, tuple or dict; got {type(spec).__name__}")
    result = acc.result()
    if not result:
        raise ValueError(f"the arch spec {spec!r} names no arch")
    return result


class _Acc:
    def __init__(self) -> None:
        self.sass: set[Arch] = set()
        self.ptx: set[Arch] = set()
        self.ltoir: set[Arch] = set()
        self.virtual: dict[Arch, Arch] = {}
        self.explicit_ptx = False

    def result(self) -> ArchList:
        return ArchList(
            tuple(sorted(self.sass)),
            tuple(sorted(self.ptx)),
            tuple(sorted(self.ltoir)),
            tuple(sorted(self.virtual.items())),
            self.explicit_ptx,
        )


def _parse_string(spec: str, style: str, supported: tuple[int, ...] | None, acc: _Acc) -> None:
    text = spec.strip()
    low = text.lower()
    if style in ("auto", "nvcc") and "arch=" in low:
        found, left = _gencode_clauses(text)
        items = left.replace(";", " ").replace(",", " ").split()
        lto = [r for r in items if r.lower().startswith("lto_")]  # LTO-IR next to gencode clauses: str(ArchList)
        for item in lto:
            acc.ltoir.add(Arch.parse(item))
        rest = " ".join(r for r in items if not r.lower().startswith("lto_"))  # one test a word: linear
        if rest:  # also when no clause matched: the word holding "arch=" is left over
            raise ValueError(
                f"malformed gencode spec {spec!r}; expected e.g. 'arch=compute_80,code=[sm_80,sm_86]' "
                f"(cannot read {rest!r})"
            )
        for arch, code in found:
            _add_gencode(arch, [c for c in code.strip("[]").split(",") if c], acc, spec)
        return
    if low in ("all", "all-major", "native"):
        if style not in ("auto", "cmake"):
            raise ValueError(f"{text!r} is a CMake keyword; use style='cmake' or 'auto'")
        archs = _native_archs() if low == "native" else _all_archs(low, supported)
        acc.sass.update(archs)
        if low != "native":
            acc.ptx.add(Arch(max(a.major for a in archs), 0))
        acc.explicit_ptx = True
        return
    items = split_arch_list(text)
    cmake = style == "cmake" or (style == "auto" and any(_CMAKE_RE.fullmatch(i.lower()) for i in items))
    for item in items:
        _add_item(item, cmake, acc)


def _gencode_clauses(text: str) -> tuple[list[tuple[str, str]], str]:
    """The gencode clauses of ``text`` as ``(arch, code)`` pairs, and the text with the clauses cut out.

    The same clauses, left to right and without overlap, as ``finditer`` of the pattern described at
    :data:`_WORD_RE` (tested against it), in time linear in ``len(text)``: each ``arch=`` is found once
    with ``str.find``; the ``[ =]`` run and prefix before it are read backwards only down to the end of
    the previous clause; the closing ``]`` of a bracketed code list is found with one forward search
    whose answer serves every later clause until passed.
    """
    found: list[tuple[str, str]] = []
    kept: list[str] = []
    done = 0  # end of the last clause: the next one starts at or after it
    close = -1  # position of the next "]" at or after the last search from ``close_from``; -1: none
    close_from = len(text) + 1
    pos = text.find("arch=")
    while pos >= 0:
        word = _WORD_RE.match(text, pos + 5)
        end = -1
        if word is not None and text.startswith(",code=", word.end()):
            at = word.end() + 6
            if text.startswith("[", at):
                if not (close_from <= at and (close < 0 or close >= at)):  # the cached answer does not serve
                    close, close_from = text.find("]", at), at
                end = close + 1 if close >= 0 else -1
            else:
                code = _WORD_RE.match(text, at)
                end = code.end() if code is not None else -1
        if end < 0:
            pos = text.find("arch=", pos + 1)
            continue
        start = pos
        while start > done and text[start - 1] in " =":
            start -= 1
        for prefix in _GENCODE_PREFIXES:
            if start - len(prefix) >= done and text.startswith(prefix, start - len(prefix)):
                start -= len(prefix)
                break
        assert word is not None  # end >= 0 only after a word matched
        found.append((word.group(), text[word.end() + 6 : end]))
        kept.append(text[done:start])
        done = end
        pos = text.find("arch=", end)
    kept.append(text[done:])
    return found, "".join(kept)


def _add_item(item: str, cmake: bool, acc: _Acc) -> None:
    low = item.lower()
    m = _CMAKE_RE.fullmatch(low)
    if m:
        arch = Arch.parse(m["arch"])
        (acc.sass if m["which"] == "real" else acc.ptx).add(arch)
        acc.explicit_ptx = True
        return
    m = _TORCH_PTX_RE.fullmatch(low)
    if m:
        arch = Arch.parse(m["arch"])
        acc.sass.add(arch)
        acc.ptx.add(arch)
        acc.explicit_ptx = True
        return
    if low.startswith("compute_"):
        acc.ptx.add(Arch.parse(low))
        acc.explicit_ptx = True
        return
    if low.startswith("lto_"):
        acc.ltoir.add(Arch.parse(low))
        return
    arch = Arch.parse(item)
    acc.sass.add(arch)
    if cmake and not low.startswith("sm_") and "." not in low:
        acc.ptx.add(arch)  # CMake: a bare number means real and virtual
        acc.explicit_ptx = True


def _add_gencode(virtual: str, codes: list[str], acc: _Acc, spec: object) -> None:
    if not virtual.lower().startswith("compute_"):
        raise ValueError(f"gencode arch must be a compute_XX virtual arch; got {virtual!r} in {spec!r}")
    v = Arch.parse(virtual)
    if not codes:
        raise ValueError(f"gencode for {virtual} lists no code in {spec!r}")
    acc.explicit_ptx = True
    for code in codes:
        c = code.strip().lower()
        a = Arch.parse(c)
        if c.startswith("compute_"):
            if a != v:
                raise ValueError(f"gencode arch={virtual} cannot embed PTX for {c} (in {spec!r})")
            acc.ptx.add(a)
        elif c.startswith("sm_"):
            if not v.builds(a):
                raise ValueError(f"gencode: SASS {c} cannot be built from {virtual} (in {spec!r})")
            acc.sass.add(a)
            if a.base != v.base:
                prev = acc.virtual.get(a)
                if prev is not None and prev != v:
                    raise ValueError(f"{c} is listed under two virtual archs ({prev.compute}, {virtual}) in {spec!r}")
                acc.virtual[a] = v
        else:
            raise ValueError(f"gencode code {code!r} must be sm_XX or compute_XX (in {spec!r})")


def nvrtc_supported_sms() -> tuple[int, ...]:
    """SM numbers the installed NVRTC can target (``nvrtcGetSupportedArchs``)."""
    from cuda.bindings import nvrtc

    err, archs = nvrtc.nvrtcGetSupportedArchs()
    if int(err) != 0:
        raise RuntimeError(f"nvrtcGetSupportedArchs failed: {err}")
    return tuple(int(a) for a in archs)


def _all_archs(keyword: str, supported: tuple[int, ...] | None) -> list[Arch]:
    sms = supported if supported is not None else nvrtc_supported_sms()
    archs = [Arch(sm // 10, sm % 10) for sm in sms]
    if keyword == "all-major":  # nvcc: the oldest supported arch and every X.0
        archs = [a for a in archs if a.minor == 0 or a == min(archs)]
    if not archs:
        raise ValueError(f"{keyword!r} resolved to no arch (supported SMs: {sms})")
    return archs


def _native_archs() -> list[Arch]:
    """Compute capabilities of the GPUs present, through the driver (raises NoDriverError without one)."""
    from ._driver import devices

    found = devices("'native' in an arch spec", "name the archs instead, e.g. '80;90'")
    return sorted({Arch(*d.capability) for d in found})
