# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Release-gate policies: what counts as covered beyond "some entry loads" (docs/ci.md).

A :class:`Policy` is read from the command line (``--sass-only``, ``--require-ptx``, ``--allow-partial``)
or a TOML file (:func:`load_policy`, the same keys). :func:`failure` says which rule a GPU's status
breaks, :func:`covered` whether it passes; :func:`ptx_gap` checks ``require_ptx`` on one fatbin.
``scan``, ``which`` and ``diff`` decide with these, so a status means the same to each.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from ._errors import Error
from ._select import UNCOVERED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from ._arch import Arch

__all__ = ["KEYS", "MAX_POLICY_BYTES", "Policy", "PolicyError", "covered", "failure", "load_policy", "ptx_gap"]

#: The keys of a policy file, each with the type it takes
KEYS = {"sass_only": "a boolean", "require_ptx": "a boolean", "allow_partial": "a list of distribution names",
        "gpus": "a list of GPUs (capabilities or names)"}  # fmt: skip
#: A policy file larger than this is refused (real ones are a few lines)
MAX_POLICY_BYTES = 1 << 20


class PolicyError(Error, ValueError):
    """A policy file could not be read, is not TOML, or has an unknown key or a value of the wrong type."""


@dataclass(frozen=True)
class Policy:
    """What a release gate requires of every binary, per GPU.

    Attributes
    ----------
    sass_only : bool
        A GPU is covered only by SASS: a ``PTX JIT`` status (JIT-compiled at first launch, seconds to
        minutes on a cold start) is not covered.
    require_ptx : bool
        Every fatbin with code keeps PTX that JIT-compiles on GPUs newer than any it has SASS for
        (:func:`ptx_gap`).
    allow_partial : frozenset of str or None
        Distributions (PEP 503 names, ``nvidia-cublas``) whose binaries may be ``partial`` (some modules
        lack the GPU: libraries that pick kernels per GPU). ``None`` (the default, no policy) lets every
        binary be partial; a set, even empty, lets only those.
    gpus : tuple of str or None
        GPUs to check (capabilities, ``"9.0"``), where the policy names them; ``--gpu`` adds to them.

    Examples
    --------
    >>> p = Policy(sass_only=True, allow_partial=frozenset({"nvidia-cublas"}))
    >>> covered("SASS exact", p), covered("PTX JIT", p), covered("PTX JIT", Policy())
    (True, False, True)
    >>> covered("partial", p, "nvidia-cublas 13.1.0.3"), covered("partial", p, "mylib 1.0")
    (True, False)
    """

    sass_only: bool = False
    require_ptx: bool = False
    allow_partial: frozenset[str] | None = None
    gpus: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        for key in ("sass_only", "require_ptx"):
            if not isinstance(getattr(self, key), bool):
                raise TypeError(f"Policy.{key} must be a bool, got {type(getattr(self, key)).__name__}")
        if self.allow_partial is not None:
            if isinstance(self.allow_partial, str) or not all(isinstance(d, str) for d in self.allow_partial):
                raise TypeError("Policy.allow_partial must be a frozenset of distribution names (str) or None")
            object.__setattr__(self, "allow_partial", frozenset(_normalize(d) for d in self.allow_partial))
        if self.gpus is not None:
            from ._nvidia import gpu_list

            object.__setattr__(self, "gpus", tuple(dict.fromkeys(g.capability for g in gpu_list(self.gpus))))

    def merged(self, other: Policy) -> Policy:
        """This policy with ``other``'s rules added (command-line flags add to a policy file).

        Examples
        --------
        >>> Policy(sass_only=True).merged(Policy(allow_partial=frozenset({"a"}))).allow_partial
        frozenset({'a'})
        """
        sets = [p.allow_partial for p in (self, other) if p.allow_partial is not None]
        gpus = [g for p in (self, other) for g in p.gpus or ()]
        return Policy(sass_only=self.sass_only or other.sass_only, require_ptx=self.require_ptx or other.require_ptx,
                      allow_partial=frozenset().union(*sets) if sets else None,
                      gpus=tuple(gpus) if self.gpus is not None or other.gpus is not None else None)  # fmt: skip


def _normalize(name: str) -> str:
    from ._scan import normalize

    return normalize(name.strip())


def failure(status: str, policy: Policy, distribution: str | None = None) -> str | None:
    """Why one GPU's status is not covered under ``policy``, or ``None`` when it is.

    ``"not covered"``: nothing loads (a status of :data:`~cuda_fatbin.UNCOVERED`); ``"sass-only"``: it
    loads only by PTX JIT; ``"allow-partial"``: it is ``partial`` and its distribution (``"name
    version"`` as ``scan`` reports it, or ``None``) is not allowed to be.

    Examples
    --------
    >>> failure("no entry", Policy()), failure("PTX JIT", Policy(sass_only=True)), failure("SASS exact", Policy())
    ('not covered', 'sass-only', None)
    >>> failure("partial", Policy(allow_partial=frozenset())), failure("partial", Policy())
    ('allow-partial', None)
    """
    if status in UNCOVERED:
        return "not covered"
    if status == "PTX JIT" and policy.sass_only:
        return "sass-only"
    if status == "partial" and policy.allow_partial is not None:
        name = _normalize(distribution.split(" ")[0]) if distribution else None
        if name not in policy.allow_partial:
            return "allow-partial"
    return None


def covered(status: str, policy: Policy, distribution: str | None = None) -> bool:
    """True when one GPU's status (:data:`~cuda_fatbin.STATUSES`) is covered under ``policy``.

    Examples
    --------
    >>> covered("SASS compatible", Policy(sass_only=True)), covered("needs newer driver", Policy())
    (True, False)
    """
    return failure(status, policy, distribution) is None


def ptx_gap(entries: Iterable[tuple[str, Arch | None]]) -> str | None:
    """For ``require_ptx``: why one fatbin's entries (``(kind, arch)``) leave newer GPUs without code.

    ``None`` when it has PTX that JIT-compiles on every GPU newer than its newest SASS: a PTX entry that
    is neither arch- nor family-specific (``compute_90a`` PTX runs on sm_90 only) and targets no arch
    past the first major after that SASS (newer GPUs of the SASS's own major run the SASS: sm_80 SASS with
    compute_90 PTX leaves no gap, with compute_120 PTX leaves 9.0 and 10.0 without code).

    Examples
    --------
    >>> from cuda_fatbin import Arch
    >>> ptx_gap([("elf", Arch(9, 0)), ("ptx", Arch(8, 0))]) is None
    True
    >>> ptx_gap([("elf", Arch(8, 0)), ("elf", Arch(9, 0))])
    'no PTX: GPUs newer than sm_90 (its newest SASS) cannot run it'
    >>> ptx_gap([("elf", Arch(9, 0)), ("ptx", Arch(9, 0, "a"))])
    'only arch-specific PTX (compute_90a): GPUs newer than sm_90 (its newest SASS) cannot run it'
    """
    sass = [a for kind, a in entries if kind == "elf" and a is not None]
    ptx = [a for kind, a in entries if kind == "ptx" and a is not None]
    newest = max(sass, default=None)
    beyond = f"GPUs newer than {newest} (its newest SASS)" if newest is not None else "GPUs"
    from ._arch import Arch

    # GPUs of newest's major run its SASS; the first GPU past them (the next major) must JIT the PTX
    first_past = Arch(newest.major + 1, 0) if newest is not None else None
    if any(not a.suffix and (first_past is None or a.base <= first_past) for a in ptx):
        return None
    plain = [a for a in ptx if not a.suffix]
    if plain:  # first_past is set: PTX for an arch past the next major leaves the GPUs before it without code
        lowest = min(plain, key=lambda a: a.base)
        return (f"only PTX past the next major ({', '.join(sorted({a.compute for a in plain}))}): {beyond} and "
                f"older than {lowest.base.capability} cannot run it")
    if ptx:
        return f"only arch-specific PTX ({', '.join(sorted({a.compute for a in ptx}))}): {beyond} cannot run it"
    return f"no PTX: {beyond} cannot run it"


def load_policy(path: str | os.PathLike[str]) -> Policy:
    """Read a policy file: TOML with the keys of :data:`KEYS`, every one optional.

    Raises
    ------
    PolicyError
        If the file cannot be read or is larger than :data:`MAX_POLICY_BYTES`, is not UTF-8 TOML, or has
        a key not in :data:`KEYS` or a value of the wrong type (the message names the key).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "gate.toml"
    >>> _ = path.write_text('sass_only = true\\nallow_partial = ["nvidia_cublas"]\\ngpus = ["8.0", "H100"]\\n')
    >>> load_policy(path)
    Policy(sass_only=True, require_ptx=False, allow_partial=frozenset({'nvidia-cublas'}), gpus=('8.0', '9.0'))
    """
    from ._files import read_regular
    from ._term import shown

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        raw = read_regular(path, MAX_POLICY_BYTES, follow=True)
    except OSError as e:
        raise PolicyError(f"cannot read the policy file {shown(os.fspath(path))}: {e.strerror or e}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise PolicyError(f"policy file is not UTF-8 (byte {e.start})") from None
    except tomllib.TOMLDecodeError as e:
        raise PolicyError(f"policy file is not TOML: {e}") from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise PolicyError("policy file is not TOML: nested too deeply") from None
    return _policy_of(data)


def _policy_of(data: dict[str, object]) -> Policy:
    from ._term import shown

    for key, value in data.items():
        if key not in KEYS:
            raise PolicyError(f"unknown key {shown(key)} in the policy file (keys: {', '.join(KEYS)})")
        wanted_list = key in ("allow_partial", "gpus")
        ok = (isinstance(value, list) and all(isinstance(v, str) for v in value)) if wanted_list else (
            isinstance(value, bool))  # fmt: skip
        if not ok:
            raise PolicyError(f"policy key {key} must be {KEYS[key]}, got {shown(repr(value)[:80])}")
    allow = data.get("allow_partial")
    gpus = data.get("gpus")
    try:
        return Policy(sass_only=bool(data.get("sass_only", False)), require_ptx=bool(data.get("require_ptx", False)),
                      allow_partial=frozenset(allow) if isinstance(allow, list) else None,
                      gpus=tuple(gpus) if isinstance(gpus, list) else None)  # fmt: skip
    except ValueError as e:
        raise PolicyError(f"policy key gpus: {e}") from None
