# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""``FatbinCompileOptions``: every argument of ``Program.compile("fatbin")``, validated in one place.

``compile("fatbin", archs=..., ptx_for=...)`` builds one from its keywords; ``compile("fatbin",
options=FatbinCompileOptions(...))`` takes one built ahead (to reuse, to pass around, to print).
Importing this module needs neither ``cuda.core`` nor a CUDA library.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ._cache import MAX_INCLUDE_FILES as _MAX_INCLUDE_FILES

if TYPE_CHECKING:
    import concurrent.futures as cf

    from ._arch import ArchSpec
    from ._fatbin import FatbinOptions
    from ._multiarch import Job
    from ._select import DriverSpec

__all__ = ["FatbinCompileOptions"]

# the fields that apply to "fatbin" only, named as the refusal of a single-arch target names them
_FATBIN_ONLY = "archs, ptx_for, ltoir_for, fatbin_options, group and min_driver"


@dataclasses.dataclass(frozen=True, kw_only=True)
class FatbinCompileOptions:
    """The options of ``Program.compile("fatbin")``, as cuda.core's ``ProgramOptions`` and ``LinkerOptions``
    are of their compilers.

    ``compile("fatbin", archs=..., ...)`` with keywords builds one of these; pass one as ``options=`` instead
    to build it once and reuse it. Its arguments are checked when it is built (``archs`` is checked by
    ``compile``, against the installed compiler and the source).

    Parameters
    ----------
    archs : arch spec
        Any spelling :func:`parse_archs` takes: ``["sm_80", "sm_90"]``, ``"80;90;100+PTX"`` (torch),
        ``"80-real;90"`` (CMake), ``"arch=compute_80,code=[sm_80,sm_86]"`` (nvcc), ``"all-major"``.
        Required by ``compile("fatbin")``. Default: None (refused there).
    ptx_for : arch spec, optional
        Archs of ``archs`` to embed PTX for. Default: None (what the spec says, else the newest arch);
        ``()`` or ``"none"`` for none, even where the spec names PTX.
    ltoir_for : arch spec, optional
        Archs of ``archs`` to embed LTO-IR for. Default: ().
    fatbin_options : FatbinOptions, optional
        Options for assembling the fatbin (compression...). Default: None.
    max_workers : int, optional
        Threads for the default pool. Default: None (``min(jobs, os.cpu_count())``).
    executor : concurrent.futures.Executor, optional
        Run the jobs here instead (a process pool, ``dask.distributed.Client.get_executor()``...).
        On Ctrl-C the queued jobs are cancelled; a ``ProcessPoolExecutor``'s workers are killed
        (that pool is then broken); threads finish their running job. Default: None.
    group : bool, optional
        One front-end compile per virtual arch, nvJitLink per real arch (see :func:`plan_fatbin`).
        Default: False.
    extra_options : sequence of str, optional
        Raw NVRTC (or libNVVM) options appended to every front-end compile, for options
        ``ProgramOptions`` has no field for. ``-arch`` is refused: use ``archs``. Default: ().
    progress : callable, optional
        Called as ``progress(done, total, job)`` each time a job succeeds. Default: None.
    cache : cuda.core.utils.ProgramCacheResource, optional
        Look each per-arch job up in this cache and store it there
        (``InMemoryProgramCache``, ``FileStreamProgramCache``...). Adding an arch compiles that arch
        only; an unchanged build compiles nothing; name expressions survive hits. What happened is in
        :attr:`Program.last_cache_report` and, per job, in ``logs``. Default: None.
    cache_extra_digest : bytes, optional
        With ``cache``: extra bytes for the cache keys, for inputs the keys cannot see
        (generated headers outside ``include_path``...). The content of ``include_path`` and ``pre_include``
        is hashed for you. Default: None.
    cache_exclude : iterable of paths, optional
        With ``cache``: files and folders under ``include_path`` that are not headers
        (build outputs): left out of the include fingerprint. Hidden folders, ``__pycache__`` and a
        ``FileStreamProgramCache``'s own folder are left out anyway. Default: ().
    cache_max_files : int, optional
        With ``cache``: the most header-like files the include fingerprint reads (and
        26 KiB per file on average); more is a ``ValueError`` that says how to exclude or raise. Default: 20000.
    min_driver : str, int or tuple, optional
        The oldest driver you support (``"13.0"``, ``"550.54.14"``, ``12040``). For every
        GPU of the plan's archs, the entry it would load must load on that driver (PTX ISA, zstd,
        concatenated entries); otherwise :class:`DriverCompatibilityError` names the GPU, the entry, the
        driver it needs and the fixes. Default: None (no check).
    min_driver_action : {"error", "warn"}, optional
        Raise, or warn (``UserWarning``) and return the fatbin. Default: "error".

    Raises
    ------
    ValueError
        ``cache_extra_digest``/``cache_exclude``/``cache_max_files`` without ``cache``; a ``min_driver_action``
        other than "error" or "warn"; a ``min_driver`` that is no driver or CUDA version; an ``-arch`` option
        in ``extra_options``.
    TypeError
        An ``extra_options`` item that is not a ``str``.

    Examples
    --------
    >>> from cuda_fatbin import FatbinCompileOptions, Program
    >>> options = FatbinCompileOptions(archs=["sm_80", "sm_90"], ptx_for=(), min_driver="12.4")
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> Program(src, "c++").compile("fatbin", options=options).code_type
    'fatbin'
    >>> FatbinCompileOptions(archs="80", extra_options=["-arch=sm_90"])
    Traceback (most recent call last):
    ...
    ValueError: extra_options '-arch=sm_90': the archs come from archs=, not from an -arch option
    """

    archs: ArchSpec | None = None
    ptx_for: ArchSpec | None = None
    ltoir_for: ArchSpec | None = ()
    fatbin_options: FatbinOptions | None = None
    max_workers: int | None = None
    executor: cf.Executor | None = None
    group: bool = False
    extra_options: Sequence[str] = ()
    progress: Callable[[int, int, Job], None] | None = None
    cache: Any = None
    cache_extra_digest: bytes | None = None
    cache_exclude: Iterable[str | os.PathLike[str]] = ()
    cache_max_files: int = _MAX_INCLUDE_FILES
    min_driver: DriverSpec = None
    min_driver_action: str = "error"

    def __post_init__(self) -> None:
        knobs = _cache_knobs(self.cache_extra_digest, self.cache_exclude, self.cache_max_files)
        if self.cache is None and knobs:
            raise ValueError(f"{' and '.join(knobs)} need{'s' if len(knobs) == 1 else ''} cache=")
        if self.min_driver_action not in ("error", "warn"):
            raise ValueError(f"min_driver_action must be 'error' or 'warn'; got {self.min_driver_action!r}")
        if self.min_driver is not None:
            from ._select import parse_driver

            parse_driver(self.min_driver)  # a bad spelling fails before any compile
        extra = tuple(self.extra_options)
        for opt in extra:
            if not isinstance(opt, str):
                raise TypeError(f"extra_options must be strings; got {opt!r}")
            if opt.lstrip("-").startswith(("arch", "gpu-architecture")):
                raise ValueError(f"extra_options {opt!r}: the archs come from archs=, not from an -arch option")
        exclude = self.cache_exclude
        excluded = (exclude,) if isinstance(exclude, (str, os.PathLike)) else tuple(exclude)
        object.__setattr__(self, "extra_options", extra)
        object.__setattr__(self, "cache_exclude", excluded)


def _cache_knobs(extra_digest: bytes | None, exclude: Iterable[object], max_files: int) -> list[str]:
    """The settings of the fatbin's per-job cache that were given (each needs ``cache=``)."""
    given = (
        ("cache_extra_digest", extra_digest is not None),
        ("cache_exclude", bool(exclude)),
        ("cache_max_files", max_files != _MAX_INCLUDE_FILES),
    )
    return [name for name, value in given if value]


def check_single_target(target: str, fields: dict[str, Any]) -> None:
    """Refuse the fatbin-only arguments (given as keywords) for a single-arch ``target``."""
    fatbin_only = ("archs", "ptx_for", "fatbin_options", "min_driver")
    if any(fields[n] is not None for n in fatbin_only) or fields["ltoir_for"] or fields["group"]:
        raise ValueError(f"{_FATBIN_ONLY} apply to 'fatbin', not {target!r}")
    knobs = _cache_knobs(fields["cache_extra_digest"], fields["cache_exclude"], fields["cache_max_files"])
    if knobs:  # upstream's cache= keys a single target itself: these would be ignored
        raise ValueError(
            f"{' and '.join(knobs)} appl{'ies' if len(knobs) == 1 else 'y'} to 'fatbin' (its per-job cache), "
            f"not {target!r}: a single target's cache= is cuda.core's, which keys the compile itself"
        )
