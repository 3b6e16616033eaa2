# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""``Program``: cuda.core's Program plus the ``"fatbin"`` target.

``Program(src, "c++").compile("fatbin", archs=[...], ptx_for=[...])`` plans per-arch jobs, runs them
on a thread pool (or any executor), feeds the artifacts to libnvfatbin in a canonical order and
returns one ``cuda.core.ObjectCode``. Nothing here needs the CUDA driver, unlike upstream's
``Program(src, "c++")`` without options, which asks it for the current device at construction.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import time
from collections.abc import Sequence

from cuda.core import LinkerOptions, ObjectCode
from cuda.core import Program as _CoreProgram
from cuda.core import ProgramOptions as _CoreProgramOptions

from ._arch import Arch
from ._cache import (
    MAX_INCLUDE_FILES,
    CacheEntryError,
    CacheReport,
    cache_dirs,
    decode,
    drop_entry,
    encode,
    include_state,
    job_key,
    read_entry,
)
from ._compile_options import FatbinCompileOptions, check_single_target
from ._detect import ptx_target
from ._errors import Error
from ._fatbin import FatbinBuilder, FatbinOptions, merge_symbol_mappings
from ._headers import cuda_header_dirs, missing_header_hint
from ._multiarch import FatbinCompileError, JobResult, Plan, plan_fatbin, run_plan

TYPE_CHECKING = False
if TYPE_CHECKING:
    import concurrent.futures as cf
    from collections.abc import Callable, Iterable
    from typing import Any, TypeVar

    from ._arch import ArchSpec
    from ._multiarch import Job, LogSink
    from ._select import DriverSpec, Selection

    _T = TypeVar("_T")
    _OptionsT = TypeVar("_OptionsT", bound=_CoreProgramOptions)

__all__ = ["DriverCompatibilityError", "Program", "ProgramOptions"]

# Lowest arch every supported NVRTC targets; only a placeholder so that upstream's constructor does not
# ask the driver. It never reaches a compiler: single-arch compiles resolve the real arch first.
_PLACEHOLDER_ARCH = "sm_75"


@dataclasses.dataclass
class ProgramOptions(_CoreProgramOptions):
    """cuda.core's ``ProgramOptions`` that can be built without a GPU.

    Upstream fills a missing ``arch`` from the current device at construction, which fails on build
    machines without the CUDA driver. Here ``arch=None`` stays ``None``: ``Program.compile("fatbin")``
    takes its archs from ``archs=``, and a single-arch compile resolves the device's arch only then.
    Every field and its default is upstream's.

    Parameters
    ----------
    arch : str, optional
        One arch (``"sm_90"``), for single-arch compiles only; ``compile("fatbin")`` refuses it and
        takes ``archs=`` instead. Default: None (stays None; no device query).
    **fields
        Every other field of ``cuda.core.ProgramOptions`` (``std``, ``define_macro``, ``include_path``,
        ``debug``, ``lineinfo``, ...), with upstream's defaults.

    Examples
    --------
    >>> from cuda_fatbin import Program, ProgramOptions
    >>> options = ProgramOptions(std="c++17", define_macro="SCALE=2")  # no arch, no driver call
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = SCALE; }'
    >>> obj = Program(src, "c++", options).compile("fatbin", archs="80;90")
    >>> obj.code_type
    'fatbin'
    """

    def __post_init__(self) -> None:
        if getattr(self, "arch", None) is not None:
            super().__post_init__()
            return
        self.arch = _PLACEHOLDER_ARCH
        try:
            super().__post_init__()
        finally:
            object.__setattr__(self, "arch", None)  # upstream types arch as str; this subclass keeps None


def _device_arch() -> str:
    from ._driver import devices

    major, minor = devices(
        "a compile without ProgramOptions.arch",
        "pass ProgramOptions(arch='sm_XX'), or compile to 'fatbin' with archs=[...]",
    )[0].capability
    return f"sm_{major}{minor}"


# ProgramOptions fields that nvJitLink understands, for SASS made from PTX (gencode groups, PTX source).
_LINKER_FIELDS = ("max_register_count", "debug", "lineinfo", "ftz", "prec_div", "prec_sqrt", "fma", "ptxas_options",
                  "split_compile", "no_cache", "time")  # fmt: skip


@functools.cache
def _upstream_compile_keywords() -> frozenset[str] | None:
    """The keyword-only arguments of the installed ``cuda.core.Program.compile`` (``cache`` in 1.2), or
    ``None`` when its signature cannot be read (then upstream judges its own arguments)."""
    import inspect

    try:
        params = inspect.signature(_CoreProgram.compile).parameters.values()
    except (TypeError, ValueError):
        return None
    return frozenset(p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY)


def _linker_options(options: _CoreProgramOptions, arch: Arch) -> tuple[bytes, ...]:
    linker_fields = {f.name for f in dataclasses.fields(LinkerOptions)}
    kwargs = {
        name: getattr(options, name)
        for name in _LINKER_FIELDS
        if name in linker_fields and getattr(options, name, None) is not None
    }
    return tuple(LinkerOptions(arch=str(arch), **kwargs).as_bytes("nvjitlink"))


class Program(_CoreProgram):
    """A cuda.core ``Program`` that can also compile to ``"fatbin"`` for many GPU architectures at once.

    Parameters
    ----------
    code : str or bytes
        C++ (``"c++"``), PTX (``"ptx"``) or NVVM IR (``"nvvm"``) source.
    code_type : str
        ``"c++"``, ``"ptx"`` or ``"nvvm"``.
    options : ProgramOptions, optional
        cuda.core's or this package's :class:`ProgramOptions`. Default: None (this package's, without
        an arch: no driver needed).
    cuda_headers : bool, optional
        For C++: add the CUDA runtime and CCCL header folders that ``cuda.pathfinder`` finds
        (``cuda_fp16.h``, ``cuda/std/...``, ``cooperative_groups.h``), after ``options.include_path``, as
        nvcc adds its toolkit's. Install them with ``pip install "cuda-toolkit[cudart,cccl]==13.*"``.
        ``False`` adds none. The cache keys of ``compile("fatbin", cache=...)`` hash these folders by
        their location and declared version. A single-arch compile with cuda.core's ``cache=`` gets
        none (cuda.core's cache refuses ``include_path``). Default: True.

    Examples
    --------
    >>> obj = Program(src, "c++").compile("fatbin", archs=["sm_80", "sm_90", "sm_100"])  # doctest: +SKIP
    >>> kernel = obj.get_kernel("saxpy")  # doctest: +SKIP

    CUDA headers need no include path, and a single-arch compile needs no driver:

    >>> from cuda_fatbin import Program, ProgramOptions
    >>> half = '#include <cuda_fp16.h>\\nextern "C" __global__ void h(__half* p) { p[0] = __float2half(1.f); }'
    >>> Program(half, "c++", ProgramOptions(arch="sm_90")).compile("ptx").code_type
    'ptx'
    """

    def __init__(
        self,
        code: str | bytes,
        code_type: str,
        options: _CoreProgramOptions | None = None,
        *,
        cuda_headers: bool = True,
    ) -> None:
        if options is None:
            options = ProgramOptions()
        elif not isinstance(options, _CoreProgramOptions):
            raise TypeError(f"options must be a ProgramOptions; got {type(options).__name__}")
        if not isinstance(cuda_headers, bool):
            raise TypeError(f"cuda_headers must be True or False; got {cuda_headers!r}")
        options = _with_include_dirs(options, ())  # path-likes as str: cuda.core's cache= path reads these too
        if not isinstance(code_type, str):
            raise TypeError(f"code_type must be a str ('c++', 'ptx' or 'nvvm'); got {type(code_type).__name__}")
        kind = code_type.lower()
        if kind not in ("c++", "ptx", "nvvm"):
            from ._suggest import closest

            close = closest(kind, ["c++", "ptx", "nvvm", "cu", "cuda"])
            guess = {"cu": "c++", "cuda": "c++"}.get(close, close) if close else None
            raise ValueError(
                f"unknown code_type {code_type!r}"
                + (f" (did you mean {guess!r}?)" if guess else "")
                + ": choose 'c++' (CUDA C++), 'ptx' or 'nvvm'"
            )
        text: object = code
        if kind in ("c++", "ptx") and isinstance(code, (bytes, bytearray)):  # upstream takes str only for these
            try:
                text = bytes(code).decode()
            except UnicodeDecodeError as e:
                raise ValueError(
                    f"{kind} source given as bytes must be UTF-8 ({e}); decode it and pass a str"
                ) from None
        placeholder = _PLACEHOLDER_ARCH
        if kind == "ptx" and isinstance(code, (str, bytes, bytearray)):
            target = ptx_target(code)  # upstream links PTX at construction: the placeholder must not be below it
            placeholder = str(target) if target is not None else placeholder
        self._fb_headers = cuda_header_dirs() if cuda_headers and kind == "c++" else ()
        effective = _with_include_dirs(options, [d.path for d in self._fb_headers])
        upstream = effective if options.arch is not None else dataclasses.replace(effective, arch=placeholder)
        super().__init__(text, code_type, _CoreProgramOptions(**_fields(upstream)))
        self._fb_code = code
        self._fb_code_type = kind
        self._fb_options = options
        self._fb_effective = effective  # with the CUDA header folders: what the compilers get
        self._fb_cuda_headers = cuda_headers

    @property
    def options(self) -> _CoreProgramOptions:
        """The options this program was created with (``arch`` may be ``None``; a path-like in ``include_path`` or
        ``pre_include`` as its ``str``, a lone one as a one-item list)."""
        return self._fb_options

    def compile(
        self,
        target_type: str,
        name_expressions: str | Sequence[str | bytes] = (),
        logs: LogSink | None = None,
        *,
        archs: ArchSpec | None = None,
        ptx_for: ArchSpec | None = None,
        ltoir_for: ArchSpec | None = (),
        fatbin_options: FatbinOptions | None = None,
        max_workers: int | None = None,
        executor: cf.Executor | None = None,
        group: bool = False,
        extra_options: Sequence[str] = (),
        progress: Callable[[int, int, Job], None] | None = None,
        cache: Any = None,
        cache_extra_digest: bytes | None = None,
        cache_exclude: Iterable[str | os.PathLike[str]] = (),
        cache_max_files: int = MAX_INCLUDE_FILES,
        min_driver: DriverSpec = None,
        min_driver_action: str = "error",
        options: FatbinCompileOptions | None = None,
        **kwargs: Any,
    ) -> ObjectCode:
        """Compile to ``"ptx"``, ``"cubin"``, ``"ltoir"`` (as cuda.core does) or ``"fatbin"`` (many archs).

        Parameters
        ----------
        target_type : {"ptx", "cubin", "ltoir", "fatbin"}
        name_expressions : sequence of str, optional
            Name expressions (template instantiations) to make available to ``get_kernel``. Default: ().
        logs : object with ``write``, optional
            Receives the compiler logs; for ``"fatbin"`` each job's log is prefixed with its archs.
        archs, ptx_for, ltoir_for, fatbin_options, max_workers, executor, group, extra_options, progress
            For ``"fatbin"``: the fields of :class:`FatbinCompileOptions` (documented there), as keywords;
            ``archs`` is required.
        cache, cache_extra_digest, cache_exclude, cache_max_files, min_driver, min_driver_action
            For ``"fatbin"``: as above. ``cache`` alone also goes to a single target (cuda.core's own cache).
        options : FatbinCompileOptions, optional
            For ``"fatbin"``: every argument above from ``archs`` on, built ahead, instead of keywords (not
            both). Default: None (built from the keywords).
        **kwargs
            Passed to cuda.core's ``compile`` for single-arch targets (e.g. ``cache=``).

        Returns
        -------
        cuda.core.ObjectCode
            For ``"fatbin"``: ``code_type`` "fatbin", ``name`` from ``options.name``, and the merged
            symbol mapping of every job.

        Raises
        ------
        ValueError
            ``"fatbin"`` without ``archs``; ``archs`` together with ``options.arch``; bad arch specs;
            ``archs`` (or another fatbin-only argument, ``cache_extra_digest``/``cache_exclude``/
            ``cache_max_files`` among them) with a single-arch target; name expressions that disagree
            between archs.
        FatbinCompileError
            A job failed; the message names every failing job with its compiler log.
        """
        target = target_type.lower() if isinstance(target_type, str) else target_type
        if target not in ("ptx", "cubin", "ltoir", "fatbin"):
            from ._suggest import closest

            close = closest(str(target), ["ptx", "cubin", "ltoir", "fatbin"])
            raise ValueError(
                f"unknown target_type {target_type!r}"
                + (f"; did you mean {close!r}?" if close else "")
                + "; choose 'ptx', 'cubin', 'ltoir' or 'fatbin'"
            )
        fields = dict(
            archs=archs,
            ptx_for=ptx_for,
            ltoir_for=ltoir_for,
            fatbin_options=fatbin_options,
            max_workers=max_workers,
            executor=executor,
            group=group,
            extra_options=extra_options,
            progress=progress,
            cache=cache,
            cache_extra_digest=cache_extra_digest,
            cache_exclude=cache_exclude,
            cache_max_files=cache_max_files,
            min_driver=min_driver,
            min_driver_action=min_driver_action,
        )
        if options is not None and not isinstance(options, FatbinCompileOptions):
            raise TypeError(f"options must be a FatbinCompileOptions; got {type(options).__name__}")
        if target != "fatbin":
            if options is not None:
                raise ValueError(f"options= (FatbinCompileOptions) applies to 'fatbin', not {target!r}")
            check_single_target(target, fields)
            return self._compile_single(target_type, target, name_expressions, logs, cache, kwargs)
        if kwargs:
            raise TypeError(f"compile('fatbin') got unexpected arguments: {', '.join(kwargs)}")
        return self._compile_fatbin(_fatbin_compile_options(options, fields), name_expressions, logs)

    def _compile_single(
        self,
        target_type: str,
        target: str,
        name_expressions: str | Sequence[str | bytes],
        logs: LogSink | None,
        cache: Any,
        kwargs: dict[str, Any],
    ) -> ObjectCode:
        """``"ptx"``, ``"cubin"`` or ``"ltoir"`` for one arch, as cuda.core compiles them."""
        if cache is not None:  # a parameter here (the fatbin's cache): upstream's own for one target
            kwargs["cache"] = cache
        accepted = _upstream_compile_keywords()
        unknown = [] if accepted is None else sorted(set(kwargs) - accepted)
        if unknown:  # before the device is asked for an arch: misuse is a TypeError, not a missing driver
            hint = ""
            if {"arch", "archs"} & set(unknown):
                hint = (
                    "; the arch of a single-target compile is ProgramOptions(arch='sm_XX'), and many archs are "
                    "compile('fatbin', archs=[...])"
                )
            raise TypeError(f"compile({target!r}) got unexpected arguments: {', '.join(unknown)}{hint}")
        names = _name_tuple(name_expressions)
        base = self._fb_options if "cache" in kwargs else self._fb_effective  # upstream's cache refuses -I
        if self._fb_options.arch is not None and base is self._fb_effective:
            if target == "ptx" and self._fb_code_type in ("c++", "nvvm") and not kwargs and not _driver_loads():
                return self._compile_ptx_here(names, logs)  # upstream asks the driver's version after NVRTC
            return self._with_hint(lambda: super(Program, self).compile(target_type, names, logs, **kwargs))
        arch = self._fb_options.arch if self._fb_options.arch is not None else _device_arch()
        resolved = dataclasses.replace(base, arch=arch)
        program = _CoreProgram(self._upstream_code(), self._fb_code_type, _CoreProgramOptions(**_fields(resolved)))
        try:
            return self._with_hint(lambda: program.compile(target_type, names, logs, **kwargs))
        finally:
            program.close()

    def _compile_fatbin(
        self, options: FatbinCompileOptions, name_expressions: str | Sequence[str | bytes], logs: LogSink | None
    ) -> ObjectCode:
        """Plan, run (through ``options.cache`` when given), assemble and check against ``min_driver``."""
        plan = self.plan(options.archs, ptx_for=options.ptx_for, ltoir_for=options.ltoir_for, group=options.group)
        names = _name_tuple(name_expressions)
        if names and self._fb_code_type != "c++":
            raise ValueError(f"name_expressions need C++ source; this program is {self._fb_code_type!r}")
        extra = tuple(options.extra_options)
        job_args = self._job_args(names, extra)
        split = self._fb_options.split_compile  # opt-in: it changes the SASS (docs/performance.md)
        threads = (os.cpu_count() or 1) if split == 0 else (split or 1)
        run: dict[str, Any] = dict(
            max_workers=options.max_workers,
            executor=options.executor,
            logs=logs,
            progress=options.progress,
            threads_per_job=threads,
        )
        cache = options.cache
        if cache is None:
            results = self._with_hint(lambda: run_plan(plan, job_args, **run))
        else:
            digest = (options.cache_extra_digest, tuple(options.cache_exclude), options.cache_max_files)
            results = self._with_hint(lambda: self._run_cached(plan, job_args, names, extra, cache, digest, run))
        data, mapping = _assemble(results, options.fatbin_options, self._fb_options.name)
        if options.min_driver is not None:
            check_min_driver(data, plan, options.min_driver, options.min_driver_action)
        return ObjectCode.from_fatbin(data, name=self._fb_options.name or "", symbol_mapping=mapping)

    def _upstream_code(self) -> str | bytes:
        """The source as upstream's constructor takes it (``str`` for C++ and PTX)."""
        code = self._fb_code
        if self._fb_code_type in ("c++", "ptx") and isinstance(code, (bytes, bytearray)):
            return bytes(code).decode()
        return code

    def _with_hint(self, compile_: Callable[[], _T]) -> _T:
        """Run ``compile_``; a failure that could not open a CUDA header gets a note on what to install."""
        try:
            return compile_()
        except Exception as e:
            hint = missing_header_hint(str(e), self._fb_cuda_headers) if self._fb_code_type == "c++" else ""
            if hint:
                if isinstance(e, FatbinCompileError):
                    raise FatbinCompileError(e.failures, hint=hint) from None
                if hasattr(e, "add_note"):  # Python >= 3.11; the compiler log above still names the header
                    e.add_note(hint)
            raise

    def _compile_ptx_here(self, names: tuple[str, ...], logs: LogSink | None) -> ObjectCode:
        """PTX from C++ or NVVM IR with our own NVRTC/libNVVM call: no driver asked (upstream asks its version)."""
        from ._multiarch import _JobFailed, _nvrtc, _nvvm

        options = _CoreProgramOptions(**_fields(self._fb_effective))
        backend = "nvvm" if self._fb_code_type == "nvvm" else "nvrtc"
        name = options.name or "default_program"
        front = tuple(options.as_bytes(backend))
        mapping: dict[str, bytes] = {}
        try:
            if backend == "nvrtc":
                data, mapping, log = _nvrtc(self._fb_code, name, front, "ptx", names)
            else:
                data, log = _nvvm(self._fb_code, name, front, "ptx")
        except _JobFailed as e:
            hint = missing_header_hint(e.log, self._fb_cuda_headers) if backend == "nvrtc" else ""
            raise FatbinCompileError(
                [(f"{backend.upper()} {options.arch} -> ptx", f"{e.message}\n{e.log}")], hint=hint
            ) from None
        if logs is not None and log.strip():
            logs.write(log)
        return ObjectCode.from_ptx(data, name=options.name or "", symbol_mapping=mapping or None)

    @property
    def last_cache_report(self) -> CacheReport | None:
        """What the last ``compile("fatbin", cache=...)`` took from the cache and what it compiled."""
        return getattr(self, "_fb_cache_report", None)

    def _run_cached(
        self,
        plan: Plan,
        job_args: Callable[[Job], tuple[Any, ...]],
        names: tuple[str, ...],
        extra: tuple[str, ...],
        cache: Any,
        key_inputs: tuple[bytes | None, tuple[str | os.PathLike[str], ...], int],
        run: dict[str, Any],
    ) -> list[JobResult]:
        if not all(callable(getattr(cache, m, None)) for m in ("get", "__setitem__", "__delitem__")):
            raise TypeError(f"cache must be a cuda.core.utils.ProgramCacheResource; got {type(cache).__name__}")
        extra_digest, exclude, max_files = key_inputs
        if extra_digest is not None and not isinstance(extra_digest, (bytes, bytearray)):
            raise TypeError("cache_extra_digest must be bytes")
        exclude = (*exclude, *cache_dirs(cache))  # the cache's entries are no headers, and change with every store
        # the CUDA header folders are hashed by their label (version), not by their ~5000 files
        labels: dict[str | os.PathLike[str], str] = {d.path: d.label for d in self._fb_headers}

        def headers() -> tuple[bytes, int]:
            return include_state(self._fb_effective, exclude=exclude, max_files=max_files, labels=labels)

        started = time.time_ns()  # before the fingerprint: a header changed after this is not in the key
        headers_digest, _ = headers()
        digest = headers_digest + bytes(extra_digest or b"") + "\0".join(extra).encode()
        code = self._upstream_code()  # cuda.core's key takes C++ and PTX as str only
        keys = {
            job: job_key(job, code, self._fb_code_type, self._job_options(job), names, job_args(job), digest)
            for job in plan.jobs
        }
        found: dict[Job, JobResult] = {}
        corrupt: list[str] = []
        compiled_unstored: list[str] = []
        for job in plan.jobs:
            try:  # a file cache's entry is read here: no link followed, no wait on a FIFO, bounded (_cache)
                value = read_entry(cache, keys[job])
                if value is None:
                    continue
                found[job] = decode(value, job)
            except (CacheEntryError, OSError):  # torn, foreign, or not a file at all (a directory planted there)
                corrupt.append(str(job))
                drop_entry(cache, keys[job])
        misses = [job for job in plan.jobs if job not in found]
        compiled = run_plan(Plan(tuple(misses)), job_args, **run) if misses else []
        to_store = compiled
        if compiled:  # a header saved while the jobs ran: their code may be the new header's, the key the old one's
            again, newest = headers()
            if again != headers_digest or newest > started:
                compiled_unstored, to_store = [str(r.job) for r in compiled], []
        for result in to_store:
            with contextlib.suppress(OSError):  # an unwritable entry costs a recompile next time, not this build
                cache[keys[result.job]] = encode(result)
        report = CacheReport(
            tuple(str(j) for j in found), tuple(str(j) for j in misses), tuple(corrupt), tuple(compiled_unstored)
        )
        self._fb_cache_report = report
        logs = run.get("logs")
        if logs is not None:
            broken, unstored = set(corrupt), set(compiled_unstored)
            for job in plan.jobs:
                state = (
                    "cache hit"
                    if job in found
                    else ("corrupt entry, recompiled" if str(job) in broken else "cache miss")
                )
                if str(job) in unstored:
                    state += ", not stored: a header changed while it compiled"
                logs.write(f"[{job}] {state}\n")
        by_job = {r.job: r for r in [*found.values(), *compiled]}
        return [by_job[job] for job in plan.jobs]

    def plan(
        self,
        archs: ArchSpec | None,
        *,
        ptx_for: ArchSpec | None = None,
        ltoir_for: ArchSpec | None = (),
        group: bool = False,
    ) -> Plan:
        """The jobs ``compile("fatbin", ...)`` would run, without compiling (a dry run; ``print`` it)."""
        if archs is None:
            raise ValueError(
                "compile('fatbin') needs archs=, e.g. archs=['sm_80', 'sm_90'] or archs='all-major'; "
                "it never picks a single arch silently"
            )
        if self._fb_options.arch is not None:
            raise ValueError(
                f"ProgramOptions.arch={self._fb_options.arch!r} conflicts with archs=; leave arch unset "
                "(use cuda_fatbin.ProgramOptions, which needs no GPU) and list every arch in archs"
            )
        if self._fb_options.link_time_optimization:
            raise ValueError("ProgramOptions.link_time_optimization applies to 'ltoir'; for fatbins use ltoir_for=")
        target = None
        if self._fb_code_type == "ptx":
            target = ptx_target(self._fb_code)
        return plan_fatbin(
            archs,
            ptx_for=ptx_for,
            ltoir_for=ltoir_for,
            code_type=self._fb_code_type,
            group=group,
            ptx_source_target=target,
        )

    def _job_options(self, job: Job) -> _CoreProgramOptions:
        """The single-arch options of a job's front end (for PTX source: of the first arch it links)."""
        fields = _fields(self._fb_effective)
        if job.front == "none":
            fields["arch"] = str(job.link[0]) if job.link else str(job.arch)
        else:
            fields["arch"] = job.arch.compute if job.target == "ptx" else str(job.arch)
            if self._fb_code_type == "c++":
                fields["link_time_optimization"] = job.target == "ltoir"
        return _CoreProgramOptions(**fields)

    def _job_args(self, names: tuple[str, ...], extra: tuple[str, ...] = ()) -> Callable[[Job], tuple[Any, ...]]:
        options = self._fb_options
        backend = "nvvm" if self._fb_code_type == "nvvm" else "nvrtc"
        name = options.name or "default_program"
        source = self._fb_code

        def args(job: Job) -> tuple[Any, ...]:
            front: tuple[bytes, ...] = ()
            if job.front != "none":
                front = tuple(self._job_options(job).as_bytes(backend)) + tuple(o.encode() for o in extra)
            link = {a: _linker_options(options, a) for a in job.link}
            return (source, name, front, link, names if job.front == "nvrtc" else ())

        return args


def _fatbin_compile_options(options: FatbinCompileOptions | None, fields: dict[str, Any]) -> FatbinCompileOptions:
    """``options``, or one built from the keywords ``fields`` of ``compile("fatbin")``; not both."""
    if options is None:
        return FatbinCompileOptions(**fields)
    given = [f.name for f in dataclasses.fields(options) if fields[f.name] is not f.default]
    if given:
        raise TypeError(f"compile('fatbin') got options= and {', '.join(given)}: give each setting in options only")
    return options


def _with_include_dirs(options: _OptionsT, dirs: Sequence[str]) -> _OptionsT:
    """``options`` as the compilers get them: every path-like in ``include_path`` and ``pre_include`` as its
    ``str``, a lone one as a one-item list, and ``dirs`` appended to ``include_path`` (those it does not name
    already, however spelled).

    cuda.core's ``ProgramOptions.as_bytes`` writes a ``str``, or a list of ``str`` or ``pathlib.Path``, but
    nothing for a lone ``Path`` (no ``--include-path``, no ``--pre-include``: cuda-core 1.2.2) and the repr of
    any other ``os.PathLike``: the header was not found, or the pre-include silently left out. Values that are
    no path at all are left as given, for cuda.core to judge.
    """
    changes: dict[str, Any] = {}
    for field in ("include_path", "pre_include"):
        value = getattr(options, field)
        if isinstance(value, os.PathLike):
            changes[field] = [os.fspath(value)]
        elif isinstance(value, (list, tuple)) and any(isinstance(v, os.PathLike) for v in value):
            changes[field] = [os.fspath(v) if isinstance(v, os.PathLike) else v for v in value]
    if dirs:
        given = changes.get("include_path", options.include_path)
        mine = [] if given is None else [given] if isinstance(given, (str, bytes)) else list(given)
        have = {os.path.abspath(d) for d in mine if isinstance(d, str)}
        added = [d for d in dirs if os.path.abspath(d) not in have]
        if added:
            changes["include_path"] = [*mine, *added]
    return dataclasses.replace(options, **changes) if changes else options


def _driver_loads() -> bool:
    from ._driver import driver_available

    return driver_available()


def _fields(options: _CoreProgramOptions) -> dict[str, Any]:
    """Init fields of a ProgramOptions, to rebuild it as upstream's class."""
    return {f.name: getattr(options, f.name) for f in dataclasses.fields(options) if f.init}


def _assemble(
    results: list[JobResult], fatbin_options: FatbinOptions | None, name: str | None
) -> tuple[bytes, dict[str, bytes]]:
    """Feed the artifacts to libnvfatbin in canonical order; merge the symbol mappings."""
    mapping = merge_symbol_mappings((str(r.job), r.symbol_mapping) for r in results)
    artifacts = [a for r in results for a in r.artifacts]
    order = {"cubin": 0, "ptx": 1, "ltoir": 2}
    artifacts.sort(key=lambda a: (order[a[0]], a[1]))
    identifier = name or None
    with FatbinBuilder(fatbin_options) as builder:
        for kind, arch, data in artifacts:  # made by our own jobs: kind and arch known, no re-validation
            builder._add_artifact(kind, arch, data, identifier)
        return builder.build(), mapping


def _name_tuple(name_expressions: str | bytes | Iterable[str | bytes] | None) -> tuple[str, ...]:
    """Name expressions as a tuple; one ``str`` is one name (not its characters)."""
    if name_expressions is None:
        return ()
    if isinstance(name_expressions, (str, bytes)):
        name_expressions = (name_expressions,)
    names = tuple(name_expressions)
    for n in names:
        if not isinstance(n, (str, bytes)):
            raise TypeError(f"name_expressions must be strings; got {type(n).__name__} ({n!r})")
    return tuple(n.decode() if isinstance(n, bytes) else n for n in names)


class DriverCompatibilityError(Error, ValueError):
    """A fatbin built for ``min_driver`` holds, for some GPU, only entries that need a newer driver.

    Attributes
    ----------
    gaps : list of (Arch, Selection)
        Each such GPU, with the entry it would load from a new enough driver.

    Examples
    --------
    >>> from cuda_fatbin import DriverCompatibilityError, Program
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> try:  # PTX only: its ISA needs a driver as new as this NVRTC
    ...     Program(src, "c++").compile("fatbin", archs=["compute_90"], min_driver="12.0")
    ... except DriverCompatibilityError as e:
    ...     print([str(gpu) for gpu, _selection in e.gaps])
    ['sm_90']
    """

    def __init__(self, message: str, gaps: list[tuple[Arch, Selection]]) -> None:
        super().__init__(message)
        self.gaps = gaps


def check_min_driver(data: bytes, plan: Plan, min_driver: DriverSpec, action: str = "error") -> None:
    """Raise (or warn) when a GPU of the plan's archs can load ``data`` only from a driver newer than ``min_driver``."""
    from ._select import ZSTD_MIN_CUDA, driver_gaps, needed_driver, parse_driver, ptx_isa_needs

    cuda = parse_driver(min_driver)
    if cuda is None:
        return
    gpus = sorted({a.base for kind, a in plan.entries if kind in ("cubin", "ptx")})
    gaps = driver_gaps(data, gpus, min_driver)
    lines = []
    for gpu, sel in gaps:
        e = sel.entry
        if e is None or e.arch is None:  # driver_gaps returns selections that found an entry
            continue
        need = needed_driver(e)
        fixes = []
        if e.kind == "elf":
            what = f"SASS {e.arch}"
        else:
            what = f"PTX {e.arch.compute} (ISA {e.version[0]}.{e.version[1]})"
            fixes.append(f"add SASS for {gpu} (archs=[..., '{gpu}'])")
            if ptx_isa_needs(e.version) > cuda:
                fixes.append(
                    f"compile with an NVRTC no newer than the driver (pip install "
                    f"'nvidia-cuda-nvrtc=={cuda[0]}.{cuda[1]}.*')"
                )
        compression = e._parent.compression if e._parent is not None else e.compression
        if compression == "zstd" and cuda < ZSTD_MIN_CUDA:
            fixes.append("compress with LZ4 (FatbinOptions(compress_mode='speed')) or not at all (compress=False)")
        if e.concatenated:
            fixes.append("drop FatbinOptions(concat=True)")
        lines.append(
            f"compute capability {gpu.capability} would load {what}, {compression}"
            f"{', concatenated' if e.concatenated else ''}, which needs a CUDA {need[0]}.{need[1]} driver; "
            f"fix: {'; or '.join(fixes)}"
        )
    if not lines:
        return
    message = f"min_driver is CUDA {cuda[0]}.{cuda[1]}, but " + " | ".join(lines) + " (or raise min_driver)"
    if action == "warn":
        import warnings

        warnings.warn(message, UserWarning, stacklevel=4)  # compile -> _compile_fatbin -> here
        return
    raise DriverCompatibilityError(message, gaps)
