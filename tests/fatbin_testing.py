# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the tests: the kernel source, NVRTC compiles, and the cuobjdump oracle's parsers.

Never ``repr``, hash or compare a cuda.core ``ObjectCode`` in CPU tests: on a machine without the driver
those try to load it and fail.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

DATA = Path(__file__).parent / "data"

#: Python source of ``take_the_signal_in_a_finalizer(signum=SIGTERM)``, for scripts run in a child process: the
#: signal comes while a finalizer runs, so the command's handler raises there and Python prints the exception and
#: drops it
TAKE_SIGTERM_IN_A_FINALIZER = """
import os, signal, weakref

class Resource:
    pass

def take_the_signal_in_a_finalizer(signum=signal.SIGTERM):
    thing = Resource()

    def closed():
        os.kill(os.getpid(), signum)  # the handler runs here: its exception is printed and dropped
        sum(range(100))

    weakref.finalize(thing, closed)
    del thing
"""

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


_TMP: list[Path] = []


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


def process_tmp(name: str) -> Path:
    """A new folder that lives as long as this process, for what module and session fixtures build."""
    if not _TMP:
        _TMP.append(Path(tempfile.mkdtemp(prefix="cuda-fatbin-tests-")))
        owner = os.getpid()
        atexit.register(lambda: os.getpid() == owner and shutil.rmtree(_TMP[0], ignore_errors=True))
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=_TMP[0]))


def run_tool(argv: list[str | Path], *, cwd: Path, outputs: list[Path]) -> None:
    """Run a toolchain command (nvcc) that writes ``outputs``; it must succeed and write each of them."""
    res = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True)
    missing = [str(o) for o in outputs if not Path(cwd, o).is_file()]
    if res.returncode != 0 or missing:
        raise AssertionError(f"{' '.join(map(str, argv))}: exit {res.returncode}, missing {missing}: {res.stderr}")


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
