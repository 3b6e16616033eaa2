# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""nvcc-style gencode groups: one front-end compile per virtual arch, nvJitLink for each real arch.

python examples/gencode_grouping.py
"""

from __future__ import annotations

import time

from cuda_fatbin import Program, read_fatbin

SRC = r"""
template <typename T> __global__ void axpy(T a, const T* x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""
NAMES = [f"axpy<{t}>" for t in ("float", "double", "int", "long long", "short", "unsigned", "char", "signed char")]

GENCODE = "-gencode arch=compute_80,code=[sm_80,sm_86,sm_89] -gencode arch=compute_90,code=[sm_90,compute_90]"
program = Program(SRC, "c++")
print("gencode plan:")
print(program.plan(GENCODE))
print("\nthe same archs, one NVRTC compile each (default):")
print(program.plan("80;86;89;90+PTX", group=False))
print("\nand grouped by major (group=True):")
print(program.plan("80;86;89;90+PTX", group=True))

for label, spec, group in (("per-arch", "80;86;89;90+PTX", False), ("grouped", "80;86;89;90+PTX", True)):
    t0 = time.perf_counter()
    obj = Program(SRC, "c++").compile("fatbin", NAMES, archs=spec, group=group)
    entries = ", ".join(f"{e.kind} {e.arch}" for e in read_fatbin(bytes(obj.code)).iter_entries())
    print(f"{label:9} {time.perf_counter() - t0:5.2f} s  {entries}")
