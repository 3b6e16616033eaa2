# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the tests: the kernel source, NVRTC compiles, and the cuobjdump oracle's parsers.

Never ``repr``, hash or compare a cuda.core ``ObjectCode`` in CPU tests: on a machine without the driver
those try to load it and fail.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import importlib.util
import inspect
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

DATA = Path(__file__).parent / "data"

KERNEL_SRC = r"""
#ifndef TAG
#define TAG 0
#endif
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i] + TAG * 0.0f;
}
template <typename T> __global__ void scale(T* x, T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
"""

# Every arch spelling the detection tests cover (a/f variants included); those NVRTC lacks are dropped.
ARCH_SPECS = [
    "sm_75", "sm_80", "sm_86", "sm_87", "sm_88", "sm_89", "sm_90", "sm_90a",
    "sm_100", "sm_100a", "sm_100f", "sm_103", "sm_103a", "sm_103f", "sm_107", "sm_107a", "sm_107f",
    "sm_110", "sm_110a", "sm_110f", "sm_120", "sm_120a", "sm_120f", "sm_121", "sm_121a", "sm_121f",
]  # fmt: skip


_ONCE: dict[str, object] = {}
_TMP: list[Path] = []
# Mutation testing (scripts/mutation.py) sets this to a folder kept across runs: a resumed `mutmut run`
# forks every mutant's pytest session from a process that ran no test, so per-process caches start empty;
# this one keeps compiled inputs on disk instead (never set in CI: there each run compiles afresh).
_DISK = os.environ.get("CUDA_FATBIN_TEST_CACHE")


@functools.cache
def _toolchain() -> str:
    """What compiled outputs depend on besides their inputs: Python, the compilers and the libraries."""
    from importlib import metadata

    parts = [sys.version]
    for dist in ("cuda-bindings", "cuda-core", "nvidia-cuda-nvrtc", "nvidia-nvfatbin", "nvidia-nvjitlink"):
        try:
            parts.append(f"{dist}={metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{dist}=none")
    for tool in ("nvcc", "cuobjdump"):
        found = shutil.which(tool)
        parts.append(f"{found}:{os.stat(found).st_mtime_ns}" if found else f"{tool}=none")
    return "\n".join(parts)


class Plain(NamedTuple):
    """An ``ObjectCode``'s fields as plain values (``plain(obj)``), for asserts.

    A failing assert shows every value it names; a cuda.core ``ObjectCode``'s repr loads its module through the
    CUDA driver, which on a machine without one can block for ever (docs/known-issues.md). Tests therefore bind
    ``plain(obj)`` to a name and assert on that, never naming the ``ObjectCode`` (not even as an argument).
    """

    code_type: str
    name: str
    symbol_mapping: dict[str, Any]
    code: bytes


def plain(obj: Any) -> Plain:
    """``obj``'s code type, name, symbol mapping and bytes (see :class:`Plain`)."""
    return Plain(obj.code_type, obj.name, dict(obj.symbol_mapping), bytes(obj.code))


def under_mutant() -> bool:
    """Whether mutmut runs this process for one mutant (it names it in ``MUTANT_UNDER_TEST``).

    Its passes over the unmutated code name no mutant: ``"stats"``, ``""`` (clean tests), ``"fail"``.
    """
    return "__mutmut_" in os.environ.get("MUTANT_UNDER_TEST", "")


def process_tmp(name: str) -> Path:
    """A new folder that lives as long as this process (not one pytest session).

    Mutation testing (``scripts/mutation.py``) runs a pytest session per mutant in processes forked from
    one that ran the suite: what :func:`once_per_process` keeps must not sit in a session's tmp folder,
    which pytest deletes a few sessions later. With ``CUDA_FATBIN_TEST_CACHE`` set the folder is made
    there and kept.
    """
    if _DISK:
        Path(_DISK).mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=_DISK))
    if not _TMP:
        _TMP.append(Path(tempfile.mkdtemp(prefix="cuda-fatbin-tests-")))
        owner = os.getpid()
        atexit.register(lambda: os.getpid() == owner and shutil.rmtree(_TMP[0], ignore_errors=True))
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=_TMP[0]))


def _store(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)  # concurrent runs of the same miss: the last complete write wins


def once_per_process(fn):
    """Decorate an expensive session or module fixture whose result depends on nothing but the toolchain.

    Its value is computed once per process and reused by later pytest sessions in the same process
    (mutation testing's forked runs), so a mutant's run does not recompile the oracles' inputs. It must
    put files in :func:`process_tmp` folders, not ``tmp_path_factory`` ones. With
    ``CUDA_FATBIN_TEST_CACHE`` set, the value is also kept on disk, keyed by the fixture's source and the
    toolchain (not the package's code: the folder serves one commit), and only when no mutant computed it.
    Most of these fixtures run the package's own code (``artifacts`` compiles through
    ``_multiarch._nvrtc``): a value a mutant made, kept for every later mutant, would fail their tests
    whatever they changed: every mutant those tests reach would count as killed.
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        key = f"{fn.__module__}.{fn.__qualname__}"
        if key not in _ONCE:
            if _DISK:
                digest = hashlib.sha256(f"{key}\n{inspect.getsource(fn)}\n{_toolchain()}".encode()).hexdigest()
                path = Path(_DISK) / f"{key}-{digest[:16]}.pickle"
                try:
                    _ONCE[key] = pickle.loads(path.read_bytes())
                except FileNotFoundError:
                    _ONCE[key] = fn(*args, **kwargs)
                    if not under_mutant():
                        _store(path, pickle.dumps(_ONCE[key]))
            else:
                _ONCE[key] = fn(*args, **kwargs)
        return _ONCE[key]

    return wrapper


def run_tool(argv: list[str | Path], *, cwd: Path, outputs: list[Path]) -> None:
    """Run a toolchain command (nvcc) that writes ``outputs``; it must succeed.

    With ``CUDA_FATBIN_TEST_CACHE`` set, an identical command on identical input files runs once: its
    outputs are copied from the cache. Inputs are the arguments that name existing files (hashed by
    name and content), outputs are hashed by name only, so commands in different tmp folders match.
    """
    if not _DISK:
        subprocess.run([str(a) for a in argv], cwd=cwd, check=True, capture_output=True)
        return
    outs = {Path(cwd, o).resolve() for o in outputs}
    h = hashlib.sha256(_toolchain().encode())
    for a in argv[1:]:
        p = Path(cwd, a).resolve()
        if p in outs:
            h.update(b"\0out:" + p.name.encode())
        elif p.is_file():
            h.update(b"\0in:" + p.name.encode() + b"\0" + hashlib.sha256(p.read_bytes()).digest())
        else:
            h.update(b"\0arg:" + str(a).encode())
    entry = Path(_DISK) / "run" / h.hexdigest()[:32]
    if not entry.is_dir():
        subprocess.run([str(a) for a in argv], cwd=cwd, check=True, capture_output=True)
        entry.parent.mkdir(parents=True, exist_ok=True)
        fresh = Path(tempfile.mkdtemp(dir=entry.parent))
        for o in outputs:
            shutil.copy2(Path(cwd, o), fresh / Path(o).name)
        try:
            os.rename(fresh, entry)
        except OSError:  # another process stored it first
            shutil.rmtree(fresh, ignore_errors=True)
        return
    for o in outputs:
        shutil.copy2(entry / Path(o).name, Path(cwd, o))


def nvrtc_supported_sms() -> list[int]:
    """SM numbers the installed NVRTC targets."""
    from cuda_fatbin._arch import nvrtc_supported_sms as supported

    return list(supported())


def nvrtc_compile(src: str, arch: str, target: str, options: tuple[str, ...] = ()) -> bytes:
    """Compile with NVRTC directly (no driver needed). ``target``: "cubin", "ptx" or "ltoir"."""
    from cuda_fatbin._multiarch import _nvrtc

    prefix = "compute" if target == "ptx" else "sm"
    opts = [f"-arch={prefix}_{arch}".encode(), *(o.encode() for o in options)]
    if target == "ltoir":
        opts.append(b"-dlto")
    return _nvrtc(src, "k.cu", opts, target, ())[0]


class Artifacts(dict):
    """A dict of compiled artifacts whose repr stays short in test reports."""

    def __repr__(self) -> str:
        return f"<{len(self)} artifacts>"


def find_cuobjdump() -> str | None:
    found = shutil.which("cuobjdump")
    if found:
        return found
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        for sub in ("cu13", "cu12", "cuda_cuobjdump"):
            cand = Path(root) / sub / "bin" / "cuobjdump"
            if cand.is_file() and os.access(cand, os.X_OK):
                return str(cand)
    return None


_LIST_RE = re.compile(r"^(ELF|PTX|LTOIR|NVVM|TILEIR|Tile IR) file\s+\d+: (.*)$")


def listing(text: str) -> list[tuple[str, str]]:
    """Parse ``cuobjdump -lelf -lptx`` output into (kind, arch) pairs: ("elf", "sm_80a")."""
    out = []
    for line in text.splitlines():
        m = _LIST_RE.match(line.strip())
        if m:
            arch = re.search(r"\.(sm_\d+[af]?)\.", m.group(2))
            out.append((m.group(1).lower(), arch.group(1) if arch else ""))
    return out


def all_records(text: str) -> list[dict[str, str]]:
    """Parse ``cuobjdump -all`` output into one dict per entry (``kind`` plus its ``key = value`` lines)."""
    records: list[dict[str, str]] = []
    for line in text.splitlines():
        m = re.match(r"^Fatbin (.+) code:$", line.strip())
        if m:
            records.append({"kind": m.group(1)})
        elif records and " = " in line:
            key, _, value = line.partition(" = ")
            records[-1][key.strip()] = value.strip()
        elif records and line.strip() in ("compressed",):
            records[-1]["compressed"] = "yes"
    return records
