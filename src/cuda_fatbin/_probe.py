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

import contextlib
import datetime
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ._arch import Arch
from ._probe_matrix import Case, Entry, matrix

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
_ENV_KEYS = (
    "CUDA_FORCE_PTX_JIT",
    "CUDA_DISABLE_PTX_JIT",
    "CUDA_CACHE_DISABLE",
    "CUDA_CACHE_PATH",
    "CUDA_CACHE_MAXSIZE",
    "CUDA_MODULE_LOADING",
)
_KIND_CODES = {"ptx": 0x01, "cubin": 0x02, "elf": 0x02}
_FLAG_A, _FLAG_F = 0x100000, 0x200000
_CASE_TIMEOUT = 120.0


class NotObservable(Exception):
    """A case that cannot be built or run on this machine; the message says why."""


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
        return {
            "name": c.name,
            "rule": c.rule,
            "entries": [e.describe() for e in c.entries],
            "env": dict(c.env),
            "cache": c.cache,
            "observed": self.observed,
            "predicted": self.predicted,
            "agree": self.agree,
            "reason": self.reason,
            "rules": list(self.rules),
            "not_observable": self.not_observable,
            "detail": self.detail,
        }


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
        return {
            "schema": PROBE_SCHEMA,
            "gpu": {"name": self.gpu_name, "capability": self.capability},
            "driver": self.driver,
            "versions": self.versions,
            "started": self.started,
            "seconds": round(self.seconds, 1),
            "jobs": self.jobs,
            "nvrtc_archs": list(self.archs),
            "cases_run": len(self.run),
            "disagreements": len(self.disagreements),
            "not_observable": len(self.results) - len(self.run),
            "cases": [r.to_dict() for r in self.results],
        }


# ---------------------------------------------------------------------------------------------------
# building


def _run_tool(cmd: list[str], timeout: float) -> tuple[int, str]:
    """Run ``cmd`` (nvcc) to its end: ``(returncode, stderr)``.

    It runs in a process group of its own, killed whole when this is interrupted (Ctrl-C, SIGTERM) or times
    out: nvcc's own tools (cicc, ptxas, the host compiler) would otherwise outlive a stopped probe.
    """
    with subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=os.name == "posix"
    ) as child:
        try:
            _, stderr = child.communicate(timeout=timeout)
        except BaseException:
            if os.name == "posix":
                with contextlib.suppress(OSError):
                    os.killpg(child.pid, signal.SIGKILL)
            child.kill()
            child.communicate()
            raise
    return child.returncode, stderr


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
                returncode, stderr = _run_tool(cmd, 300)
                if returncode:
                    raise NotObservable(f"nvcc -rdc for {a} failed: {stderr.strip()[:200]}")
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
            options = FatbinOptions(
                compress=False, debug=first.debug or None, producer="opencl" if first.producer == "opencl" else None
            )
        else:
            options = FatbinOptions(
                compress=True,
                compress_all=True,
                concat=concat or None,
                compress_mode="size" if first.compression == "zstd" else "speed",
                debug=first.debug or None,
                producer="opencl" if first.producer == "opencl" else None,
            )
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
        header_size = struct.unpack_from("<I", whole, got.offset + 4)[0]
        payload_size = struct.unpack_from("<Q", whole, got.offset + 8)[0]
        raw = bytearray(whole[got.offset : got.offset + header_size + payload_size])
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
            fb,
            gpu,
            driver=driver,
            force_ptx_jit=env.get("CUDA_FORCE_PTX_JIT") == "1",
            disable_ptx_jit=env.get("CUDA_DISABLE_PTX_JIT") == "1",
            jit_cache=case.cache == "warm",
        )
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


class _Children:
    """The case processes running now, so that a stopped probe ends them instead of awaiting them.

    :meth:`stop` kills every running child and refuses new ones (:class:`_Stopped`): Ctrl-C or SIGTERM then
    ends a probe within a second, whatever its cases were doing (a driver JIT may take minutes).
    """

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self._live: set[subprocess.Popen[str]] = set()
        self._stopped = False

    @contextlib.contextmanager
    def start(self, cmd: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
        """Start ``cmd``; it is killed and reaped when the block ends, and by :meth:`stop` meanwhile."""
        with self._lock:
            if self._stopped:
                raise _Stopped
            child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            self._live.add(child)
        try:
            yield child
        finally:
            with self._lock:
                self._live.discard(child)
            if child.poll() is None:
                child.kill()
            child.communicate()

    def stop(self) -> None:
        """Kill every running child; no new one starts."""
        with self._lock:
            self._stopped = True
            for child in self._live:
                if child.poll() is None:
                    child.kill()


class _Stopped(Exception):
    """The probe is stopping: no case process starts."""


def run_child(
    path: Path, env: dict[str, str], timeout: float = _CASE_TIMEOUT, children: _Children | None = None
) -> tuple[str, str]:
    """Load and launch the fatbin at ``path`` in a fresh process: ``(outcome, detail)``."""
    cmd = [sys.executable, "-I", "-c", _DIE_WITH_PARENT + _CHILD, str(path), str(os.getpid())]
    with (children or _Children()).start(cmd, env) as child:
        try:
            stdout, stderr = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            return "TIMEOUT", f"no answer in {timeout:.0f} s"
        returncode = child.returncode
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"CRASH {name}", "the process loading the fatbin died"
    lines = [ln for ln in stdout.splitlines() if ln.startswith(("TAG ", "ERROR "))]
    if not lines:
        return "CRASH exit", f"exit {returncode}: {(stderr.strip().splitlines() or [''])[-1][:200]}"
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


def observe(
    case: Case, data: bytes, other: bytes | None, workdir: Path, index: int, children: _Children | None = None
) -> tuple[str, str]:
    """Run one case in fresh processes (a warm-up first for the warm-cache cases)."""
    path = workdir / f"case{index}.fatbin"
    path.write_bytes(data)
    cache = workdir / f"cache{index}"
    cache.mkdir()
    base = _clean_env(str(cache))
    detail = ""
    if case.cache == "warm":
        warm, _ = run_child(path, base, children=children)
        detail = f"warm-up run: {warm}; "
    elif case.cache == "warm-other" and other is not None:
        other_path = workdir / f"other{index}.fatbin"
        other_path.write_bytes(other)
        warm, _ = run_child(other_path, base, children=children)
        detail = f"warm-up with other PTX: {warm}; "
    outcome, more = run_child(path, {**base, **dict(case.env)}, children=children)
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
    children = _Children()
    with tempfile.TemporaryDirectory(prefix="cuda-fatbin-probe-") as tmp:

        def one(item: tuple[int, tuple[CaseResult, bytes, bytes | None]]) -> CaseResult:
            i, (r, data, other) = item
            r.observed, more = observe(r.case, data, other, Path(tmp), i, children)
            r.agree = _agree(r.predicted, r.observed)
            r.detail = "; ".join(x for x in (r.detail, more) if x)
            return r

        def finished(f: Future[CaseResult], item: object) -> None:
            nonlocal done
            r = f.result()
            done += 1
            if progress is not None:
                progress(done, len(built), r.case.name)

        # Ctrl-C or SIGTERM: the queued cases are dropped (_jobs.stop_jobs) and the running ones killed
        with ThreadPoolExecutor(workers) as pool:
            run_jobs(pool, one, enumerate(built), lambda item: (item,), finished, stop=children.stop)
    return ProbeReport(
        info.name,
        f"{gpu.major}.{gpu.minor}",
        info.driver,
        _versions(),
        started,
        time.monotonic() - t0,
        workers,
        results,
        tuple(sms),
    )
