# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Plan per-arch compile jobs, fan them out on an executor, collect the artifacts.

A :class:`Plan` is a list of :class:`Job` values. A job runs one front end (NVRTC for C++, libNVVM for
NVVM IR, nothing for PTX source) for one arch, and optionally nvJitLink to turn the PTX it made into
SASS for several real archs (nvcc's "one front end, many ptxas"). Jobs and their results are plain
picklable values and :func:`run_job` is a module-level function, so any
``concurrent.futures.Executor`` can run them, a process pool or a distributed one included. No step
needs the CUDA driver.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ._arch import Arch, ArchList, nvrtc_supported_sms, parse_archs
from ._errors import Error
from ._jobs import run_jobs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Protocol

    from ._arch import ArchSpec

    class LogSink(Protocol):
        """Where compiler logs go: anything with ``write(str)`` (a file, ``sys.stderr``, ``io.StringIO``)."""

        def write(self, text: str, /) -> object: ...


__all__ = ["FatbinCompileError", "Job", "JobResult", "Plan", "plan_fatbin", "run_job"]

_KIND_ORDER = {"cubin": 0, "ptx": 1, "ltoir": 2}


@dataclass(frozen=True)
class Job:
    """One unit of compile work.

    Attributes
    ----------
    front : {"nvrtc", "nvvm", "none"}
        The front end: NVRTC (C++), libNVVM (NVVM IR), or none (the source is PTX).
    target : {"cubin", "ptx", "ltoir"}
        What the front end produces.
    arch : Arch
        The arch the front end compiles for.
    link : tuple of Arch
        Real archs nvJitLink makes SASS for from the front end's PTX.
    emit : tuple of (str, Arch)
        The fatbin entries this job yields: ``("cubin", sm_86)``, ``("ptx", sm_80)``, ``("ltoir", sm_90)``.

    Examples
    --------
    >>> from cuda_fatbin import plan_fatbin
    >>> job = plan_fatbin("arch=compute_80,code=sm_86").jobs[0]  # nvcc: sm_86 SASS from compute_80 PTX
    >>> print(job)
    NVRTC compute_80 -> ptx -> nvJitLink sm_86
    >>> job.front, job.target, [str(a) for a in job.link], [(k, str(a)) for k, a in job.emit]
    ('nvrtc', 'ptx', ['sm_86'], [('cubin', 'sm_86')])
    """

    front: str
    target: str
    arch: Arch
    link: tuple[Arch, ...] = ()
    emit: tuple[tuple[str, Arch], ...] = ()

    def __str__(self) -> str:
        src = {"nvrtc": "NVRTC", "nvvm": "NVVM", "none": "PTX source"}[self.front]
        what = f"{src} {self.arch.compute if self.target == 'ptx' else self.arch}"
        if self.front != "none" or not self.link:
            what += f" -> {self.target}"
        if self.link:
            what += " -> nvJitLink " + ", ".join(str(a) for a in self.link)
        return what


@dataclass(frozen=True)
class Plan:
    """The jobs of a multi-arch compile and the entries they yield, in canonical order.

    Attributes
    ----------
    jobs : tuple of Job
        The compile jobs, each run on its own worker.
    entries : tuple of (str, Arch)
        Every entry the fatbin will hold: cubins, then PTX, then LTO-IR, each by arch.

    Examples
    --------
    >>> from cuda_fatbin import plan_fatbin
    >>> plan = plan_fatbin("80;90+PTX")
    >>> print(plan)
    3 job(s), 3 entries:
      [0] NVRTC sm_80 -> cubin   => cubin sm_80
      [1] NVRTC sm_90 -> cubin   => cubin sm_90
      [2] NVRTC compute_90 -> ptx   => ptx sm_90
    >>> [(kind, str(arch)) for kind, arch in plan.entries]
    [('cubin', 'sm_80'), ('cubin', 'sm_90'), ('ptx', 'sm_90')]
    """

    jobs: tuple[Job, ...]

    @property
    def entries(self) -> tuple[tuple[str, Arch], ...]:
        """Every (kind, arch) entry the fatbin will hold, sorted: cubins, then PTX, then LTO-IR, by arch."""
        return tuple(sorted((e for j in self.jobs for e in j.emit), key=lambda e: (_KIND_ORDER[e[0]], e[1])))

    def __str__(self) -> str:
        lines = [f"{len(self.jobs)} job(s), {len(self.entries)} entries:"]
        lines += [f"  [{i}] {job}   => {', '.join(f'{k} {a}' for k, a in job.emit)}" for i, job in enumerate(self.jobs)]
        return "\n".join(lines)


def _is_none(spec: object) -> bool:
    """``"none"`` (or ``""``): the spelling of "no PTX" that the command line also takes."""
    return isinstance(spec, str) and spec.strip().lower() in ("", "none")


def _names_none(spec: object) -> bool:
    """``()``, ``[]``, ``"none"`` or ``""``: explicitly no entries."""
    return (isinstance(spec, (list, tuple)) and not spec) or _is_none(spec)


def _subset(name: str, spec: ArchSpec | None, al: ArchList) -> tuple[Arch, ...]:
    """Archs named by ``ptx_for`` / ``ltoir_for``; each must be one of ``archs``. ``"none"`` names none."""
    if spec is None or (isinstance(spec, (list, tuple)) and not spec) or _is_none(spec):
        return ()
    wanted = parse_archs(spec).all_archs()
    known = al.all_archs()
    for a in wanted:
        if a not in known:
            raise ValueError(f"{name} names {a}, which is not in archs ({al}); add it to archs")
    return wanted


def plan_fatbin(
    archs: ArchSpec,
    *,
    ptx_for: ArchSpec | None = None,
    ltoir_for: ArchSpec | None = (),
    code_type: str = "c++",
    group: bool = False,
    ptx_source_target: Arch | None = None,
    supported: Iterable[int] | None = None,
) -> Plan:
    """Plan the jobs of ``Program.compile("fatbin", ...)`` without compiling anything.

    Parameters
    ----------
    archs : any spec :func:`parse_archs` takes
        Which SASS / PTX / LTO-IR entries to make.
    ptx_for : spec, optional
        Archs (from ``archs``) to embed PTX for. Default: None — the PTX the spec names, or, when it names
        none, PTX for the newest arch (the forward-compatibility entry ``nvcc -arch=sm_XX`` embeds).
        ``()`` or ``"none"``: no PTX at all, not even PTX the spec names (``all-major`` names some).
    ltoir_for : spec, optional
        Archs (from ``archs``) to embed LTO-IR for. Default: ().
    code_type : {"c++", "ptx", "nvvm"}, optional
        The source language. Default: "c++".
    group : bool, optional
        Share the front end: one NVRTC compile to PTX per virtual arch, nvJitLink for each real arch of
        the group (archs of one major share the lowest of them; ``a``/``f`` archs stay alone). gencode
        specs that build SASS from another virtual arch are always grouped that way. Default: False.
    ptx_source_target : Arch, optional
        For PTX source: its ``.target``.
    supported : iterable of int, optional
        SM numbers the compilers can target. Default: None (ask the installed NVRTC).

    Returns
    -------
    Plan

    Raises
    ------
    ValueError
        Unsupported arch (the message lists the supported ones), ``ptx_for``/``ltoir_for`` outside
        ``archs``, or entries the source language cannot make.

    Examples
    --------
    >>> from cuda_fatbin import plan_fatbin
    >>> len(plan_fatbin(["sm_80", "sm_86", "sm_90"], ptx_for="sm_90").jobs)
    4
    >>> len(plan_fatbin(["sm_80", "sm_86", "sm_90"], ptx_for="sm_90", group=True).jobs)  # a PTX per major
    2
    >>> plan_fatbin(["sm_80"], ptx_for=["sm_90"])
    Traceback (most recent call last):
        ...
    ValueError: ptx_for names sm_90, which is not in archs (sm_80); add it to archs
    """
    code_type = code_type.lower()
    if code_type not in ("c++", "ptx", "nvvm"):
        raise ValueError(f"code_type must be 'c++', 'ptx' or 'nvvm' for a fatbin; got {code_type!r}")
    al = parse_archs(archs)
    sass = set(al.sass)
    # an explicit "none" wins over PTX the spec names (all-major names PTX of its newest arch)
    ptx = set() if _names_none(ptx_for) else set(al.ptx) | set(_subset("ptx_for", ptx_for, al))
    ltoir = set(al.ltoir) | set(_subset("ltoir_for", ltoir_for, al))
    if ptx_for is None and not al.explicit_ptx and sass:
        # the forward-compatibility entry: PTX of the newest arch (for PTX source: the source itself)
        ptx.add(ptx_source_target if code_type == "ptx" and ptx_source_target is not None else max(sass))
    sms = tuple(supported) if supported is not None else nvrtc_supported_sms()
    for a in sorted(sass | ptx | ltoir | {v for _, v in al.virtual}):
        if a.sm not in sms:
            listed = ", ".join(f"sm_{s}" for s in sms)
            raise ValueError(f"{a} is not supported by the installed compiler; supported: {listed}")
    if code_type == "ptx":
        return _plan_ptx_source(sass, ptx, ltoir, ptx_source_target)
    front = "nvrtc" if code_type == "c++" else "nvvm"
    virtual_of = dict(al.virtual)
    if group:
        for s in sass:
            if s not in virtual_of and not s.suffix:
                same_major = [a for a in sass if a.major == s.major and not a.suffix]
                virtual_of[s] = min(same_major)
    if front == "nvvm":  # libNVVM makes PTX only: every SASS entry goes through nvJitLink
        for s in sass:
            virtual_of.setdefault(s, s)
    groups: dict[Arch, list[Arch]] = {}
    jobs: list[Job] = []
    for s in sorted(sass):
        v = virtual_of.get(s)
        if v is None:
            jobs.append(Job(front, "cubin", s, (), (("cubin", s),)))
        else:
            groups.setdefault(v, []).append(s)
    for v, reals in sorted(groups.items()):
        emit = tuple(("cubin", s) for s in reals) + ((("ptx", v),) if v in ptx else ())
        jobs.append(Job(front, "ptx", v, tuple(reals), emit))
    for p in sorted(ptx - set(groups)):
        jobs.append(Job(front, "ptx", p, (), (("ptx", p),)))
    for lto in sorted(ltoir):
        jobs.append(Job(front, "ltoir", lto, (), (("ltoir", lto),)))
    return Plan(tuple(jobs))


def _plan_ptx_source(sass: set[Arch], ptx: set[Arch], ltoir: set[Arch], target: Arch | None) -> Plan:
    if target is None:
        raise ValueError("PTX source without a .target directive; cannot plan")
    if ltoir:
        raise ValueError("PTX source cannot give LTO-IR entries; drop ltoir_for / lto_ archs")
    for p in ptx:
        if p != target:
            raise ValueError(f"PTX source targets {target}; it cannot be embedded as PTX for {p}")
    for s in sass:
        if not target.builds(s):
            raise ValueError(f"PTX source for {target.compute} cannot be assembled for {s}")
    jobs = [Job("none", "ptx", target, tuple(sorted(sass)), tuple(("cubin", s) for s in sorted(sass)))] if sass else []
    if ptx:
        jobs.append(Job("none", "ptx", target, (), (("ptx", target),)))
    return Plan(tuple(jobs))


# -- running jobs --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobResult:
    """What a job produced: ``artifacts`` as (kind, Arch, bytes), the symbol mapping and the compiler log."""

    job: Job
    artifacts: tuple[tuple[str, Arch, bytes], ...]
    symbol_mapping: dict[str, bytes] = field(default_factory=dict)
    log: str = ""


class FatbinCompileError(Error, RuntimeError):
    """One or more per-arch compile jobs failed.

    The message shows each distinct error and compiler log once, headed by every job that gave it: a
    syntax error in a 14-arch compile reads once, not 14 times.

    Attributes
    ----------
    failures : list of (str, str)
        ``(job description, error and compiler log)`` for every job that failed.
    hint : str
        What to do, when the logs show it (a CUDA header that could not be opened); ``""`` otherwise.

    Examples
    --------
    >>> from cuda_fatbin import FatbinCompileError, Program, ProgramOptions
    >>> try:
    ...     Program("not C++", "c++", ProgramOptions(name="k.cu")).compile(
    ...         "fatbin", archs=["sm_80", "sm_90"], ptx_for="none")
    ... except FatbinCompileError as e:
    ...     print(len(e.failures), "jobs failed;", str(e).count("k.cu(1): error: expected a declaration"))
    2 jobs failed; 1
    """

    def __init__(self, failures: list[tuple[str, str]], hint: str = "") -> None:
        groups: dict[str, list[str]] = {}
        for job, log in failures:
            groups.setdefault(log.strip(), []).append(job)
        text = "\n".join(f"--- {', '.join(jobs)} ---\n{log}" for log, jobs in groups.items())
        super().__init__(f"{len(failures)} compile job(s) failed:\n{text}" + (f"\n{hint}" if hint else ""))
        self.failures = failures
        self.hint = hint

    def __reduce__(self) -> tuple[Any, ...]:  # pickles with its arguments (process pools, dask)
        return (type(self), (self.failures, self.hint))


class _JobFailed(Exception):
    """Raised inside a worker; carries the log. Pickles (for process pools)."""

    def __init__(self, message: str, log: str) -> None:
        super().__init__(message, log)
        self.message = message
        self.log = log


def run_job(
    job: Job,
    source: str | bytes,
    name: str,
    front_options: tuple[bytes, ...],
    link_options: dict[Arch, tuple[bytes, ...]],
    name_expressions: tuple[str, ...],
) -> JobResult:
    """Run one job (in any thread or process). ``link_options`` maps each linked arch to its nvJitLink options."""
    log = ""
    mapping: dict[str, bytes] = {}
    if job.front == "none":
        front_out = source.encode() if isinstance(source, str) else bytes(source)
    elif job.front == "nvrtc":
        front_out, mapping, log = _nvrtc(source, name, front_options, job.target, name_expressions)
    else:
        front_out, log = _nvvm(source, name, front_options, job.target)
    artifacts = []
    for kind, arch in job.emit:
        if kind == "cubin" and arch in job.link:
            cubin, link_log = _nvjitlink(front_out, link_options[arch])
            log += link_log
            artifacts.append(("cubin", arch, cubin))
        else:
            artifacts.append((kind, arch, front_out))
    return JobResult(job, tuple(artifacts), mapping, log)


def _nvrtc(
    source: str | bytes, name: str, options: Sequence[bytes], target: str, name_expressions: Iterable[str]
) -> tuple[bytes, dict[str, bytes], str]:
    from cuda.bindings import nvrtc

    def check(result: Any, what: str) -> Any:
        err = result[0] if isinstance(result, tuple) else result
        if int(err) != 0:
            raise _JobFailed(f"{what} failed: {nvrtc.nvrtcGetErrorString(err)[1].decode()}", "")
        return result[1:] if isinstance(result, tuple) else None

    code = source.encode() if isinstance(source, str) else bytes(source)
    (prog,) = check(nvrtc.nvrtcCreateProgram(code, name.encode(), 0, [], []), "nvrtcCreateProgram")
    try:
        for expr in name_expressions:
            check(nvrtc.nvrtcAddNameExpression(prog, expr.encode()), f"nvrtcAddNameExpression({expr!r})")
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(options), list(options))
        (size,) = check(nvrtc.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
        # Never b" " * size: for size 1 that is CPython's shared one-byte object, and NVRTC writes into it.
        buf = bytearray(size)
        check(nvrtc.nvrtcGetProgramLog(prog, buf), "nvrtcGetProgramLog")
        log = bytes(buf).rstrip(b"\0").decode(errors="replace")
        if int(err) != 0:
            raise _JobFailed(f"nvrtcCompileProgram failed: {nvrtc.nvrtcGetErrorString(err)[1].decode()}", log)
        get_size, get = {
            "cubin": (nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN),
            "ptx": (nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX),
            "ltoir": (nvrtc.nvrtcGetLTOIRSize, nvrtc.nvrtcGetLTOIR),
        }[target]
        (size,) = check(get_size(prog), f"get {target} size")
        out = bytearray(size)
        check(get(prog, out), f"get {target}")
        mapping = {}
        for expr in name_expressions:
            (lowered,) = check(nvrtc.nvrtcGetLoweredName(prog, expr.encode()), f"nvrtcGetLoweredName({expr!r})")
            mapping[expr] = lowered
        return bytes(out), mapping, log
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def _nvvm(source: str | bytes, name: str, options: Iterable[bytes], target: str) -> tuple[bytes, str]:
    from cuda.bindings import nvvm

    code = source.encode() if isinstance(source, str) else bytes(source)
    prog = nvvm.create_program()
    try:
        nvvm.add_module_to_program(prog, code, len(code), name)
        opts = [o.decode() if isinstance(o, bytes) else o for o in options]
        if target == "ltoir":
            opts.append("-gen-lto")
        try:
            nvvm.compile_program(prog, len(opts), opts)
        except nvvm.nvvmError as e:
            size = nvvm.get_program_log_size(prog)
            buf = bytearray(size)
            nvvm.get_program_log(prog, buf)
            log = bytes(buf).rstrip(b"\0").decode(errors="replace")
            raise _JobFailed(f"nvvmCompileProgram failed: {e}", log) from None
        size = nvvm.get_compiled_result_size(prog)
        out = bytearray(size)
        nvvm.get_compiled_result(prog, out)
        return bytes(out), ""
    finally:
        nvvm.destroy_program(prog)


def _nvjitlink(ptx: bytes, options: Iterable[bytes | str]) -> tuple[bytes, str]:
    from cuda.bindings import nvjitlink

    opts = [o.decode() if isinstance(o, bytes) else o for o in options]
    handle = nvjitlink.create(len(opts), opts)
    try:
        try:
            nvjitlink.add_data(handle, nvjitlink.InputType.PTX, ptx, len(ptx), "ptx")
            nvjitlink.complete(handle)
        except nvjitlink.nvJitLinkError as e:
            size = nvjitlink.get_error_log_size(handle)
            buf = bytearray(size)
            nvjitlink.get_error_log(handle, buf)
            raise _JobFailed(f"nvJitLink failed: {e}", bytes(buf).rstrip(b"\0").decode(errors="replace")) from None
        size = nvjitlink.get_linked_cubin_size(handle)
        out = bytearray(size)
        nvjitlink.get_linked_cubin(handle, out)
        size = nvjitlink.get_info_log_size(handle)
        info = bytearray(size)
        nvjitlink.get_info_log(handle, info)
        return bytes(out), bytes(info).rstrip(b"\0").decode(errors="replace")
    finally:
        nvjitlink.destroy(handle)


def run_plan(
    plan: Plan,
    submit_args: Callable[[Job], tuple[Any, ...]],
    *,
    max_workers: int | None = None,
    executor: cf.Executor | None = None,
    logs: LogSink | None = None,
    progress: Callable[[int, int, Job], None] | None = None,
    threads_per_job: int = 1,
) -> list[JobResult]:
    """Run every job of ``plan``; ``submit_args(job)`` gives ``run_job``'s arguments after ``job``.

    One failing job cancels those not started; the error lists every job that failed. ``progress``, if
    given, is called in this thread as ``progress(done, total, job)`` each time a job succeeds.
    ``threads_per_job`` (the compiler's own threads, from ``split_compile``) shrinks the default pool so
    that threads per job x concurrent jobs stays within ``max_workers`` (default: the CPU count).
    """
    jobs = plan.jobs
    if (
        executor is not None
        and not isinstance(executor, cf.Executor)
        and not callable(getattr(executor, "submit", None))
    ):
        raise TypeError(f"executor must be a concurrent.futures.Executor; got {type(executor).__name__}")
    if max_workers is not None and (
        not isinstance(max_workers, int) or isinstance(max_workers, bool) or max_workers < 1
    ):
        raise ValueError(f"max_workers must be a positive int; got {max_workers!r}")
    own = executor is None
    if executor is None:
        cores = max_workers or os.cpu_count() or 1
        workers = min(len(jobs), max(1, cores // max(1, threads_per_job)))
        executor = cf.ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="cuda-fatbin")
    pool: cf.Executor = executor
    try:
        # longest first (jobs that link several archs, then newer archs, whose ptxas runs longer): the last
        # wave of a small pool then holds short jobs. Results are assembled in canonical order regardless.
        # Ctrl-C (or SIGTERM) while submitting or waiting: the queued jobs are dropped, a process pool's
        # running ones killed, a thread pool's awaited (_jobs.stop_jobs).
        order = sorted(jobs, key=lambda j: (-len(j.link), -j.arch.sm))
        finished = 0

        def done(f: cf.Future[JobResult], job: Job) -> None:
            nonlocal finished
            if progress is not None and not f.cancelled() and f.exception() is None:
                finished += 1
                progress(finished, len(jobs), job)

        futures = run_jobs(pool, run_job, order, lambda job: (job, *submit_args(job)), done, cancel_on_error=True)
        ended = {f for f in futures if not f.cancelled()}
        failures = []
        for f in futures:
            e = f.exception() if f in ended else None
            if e is not None:
                if not isinstance(e, Exception):  # Ctrl-C, SystemExit, GeneratorExit in a job: unchanged
                    raise e
                log = getattr(e, "log", "")
                failures.append((str(futures[f]), f"{getattr(e, 'message', None) or e}\n{log}"))
        if failures:
            raise FatbinCompileError(failures)
        results = [f.result() for f in futures]
        results.sort(key=lambda r: jobs.index(r.job))
    finally:
        if own:
            pool.shutdown(wait=True, cancel_futures=True)
    if logs is not None:
        for r in results:
            if r.log.strip():
                logs.write(f"[{r.job}]\n{r.log.rstrip()}\n")
    return results
