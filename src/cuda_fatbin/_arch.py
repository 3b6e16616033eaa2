"""GPU architecture values and the spellings users know for them.

This is the one home of arch normalisation: every other module turns user input into an
:class:`Arch` through :meth:`Arch.parse` and hands libraries the spelling they want through
the properties here.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = ["Arch", "split_arch_list"]

_SUFFIXES = ("", "f", "a")  # sort order: plain < family < arch-specific
# The first SM that has each suffix (nvcc rejects e.g. sm_80a and sm_90f).
_SUFFIX_FIRST_SM = {"a": 90, "f": 100}

_ACCEPTED = "sm_90, compute_90, lto_90, 90, 9.0, 90a, 9.0a, sm_100f or the int 90"
_SM_RE = re.compile(r"(?:sm_|compute_|lto_)?(?P<sm>[1-9][0-9]?[0-9])(?P<suffix>[af]?)", re.ASCII)
_CC_RE = re.compile(r"(?P<major>[1-9][0-9]?)\.(?P<minor>[0-9])(?P<suffix>[af]?)", re.ASCII)


@functools.total_ordering
@dataclass(frozen=True)
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

    major: int
    minor: int
    suffix: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.major, int) or isinstance(self.major, bool) or not 1 <= self.major <= 99:
            raise ValueError(f"Arch major must be an int from 1 to 99; got {self.major!r}")
        if not isinstance(self.minor, int) or isinstance(self.minor, bool) or not 0 <= self.minor <= 9:
            raise ValueError(f"Arch minor must be an int from 0 to 9; got {self.minor!r}")
        if self.suffix not in _SUFFIXES:
            raise ValueError(f"Arch suffix must be one of '', 'a', 'f'; got {self.suffix!r}")
        first = _SUFFIX_FIRST_SM.get(self.suffix)
        if first is not None and self.sm < first:
            raise ValueError(
                f"the {self.suffix!r} suffix exists from sm_{first} on; sm_{self.sm}{self.suffix} is not an arch"
            )

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
