# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Per-job cache: cold build, warm rebuild, and adding one arch, on a FileStreamProgramCache.

    python benchmarks/bench_cache.py

Source: the realistic kernels of _common.py (16 instantiations); 6 archs, PTX for the newest fixed.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cuda.core.utils import FileStreamProgramCache

from cuda_fatbin import Program

from _common import INSTANTIATIONS, KERNELS, NAMES

ARCHS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_120"]
SRC = KERNELS + INSTANTIATIONS


def build(cache_dir: str, archs) -> tuple[float, object]:
    program = Program(SRC, "c++")
    with FileStreamProgramCache(cache_dir) as cache:
        t0 = time.perf_counter()
        program.compile("fatbin", NAMES, archs=archs, ptx_for=["sm_120"], cache=cache)
        return time.perf_counter() - t0, program.last_cache_report


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cold, r_cold = build(f"{tmp}/a", ARCHS)
        warm, r_warm = build(f"{tmp}/a", ARCHS)
        warm2, _ = build(f"{tmp}/a", ARCHS)
        print(f"{len(ARCHS)} archs + PTX, {len(NAMES)} instantiations")
        print(f"  cold build    {cold:7.3f} s   {r_cold}")
        print(f"  warm rebuild  {min(warm, warm2):7.3f} s   {r_warm}   cold / warm = {cold / min(warm, warm2):.0f}x")
        build(f"{tmp}/b", [a for a in ARCHS if a != "sm_90"])  # the build before sm_90 was added
        added, r_added = build(f"{tmp}/b", ARCHS)
        single = Program(SRC, "c++")
        t0 = time.perf_counter()
        single.compile("fatbin", NAMES, archs=["sm_90"], ptx_for=())
        one_arch = time.perf_counter() - t0
        print(f"  adding sm_90 to a cached build of {len(ARCHS) - 1} archs: {added:.3f} s   {r_added}")
        print(f"  one arch compiled alone: {one_arch:.3f} s   ratio added / one arch = {added / one_arch:.2f}x")


if __name__ == "__main__":
    main()
