# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""A templated kernel with name expressions: one fatbin, every instantiation reachable by its C++ name.

python examples/templated_kernel.py
"""

from __future__ import annotations

from cuda_fatbin import Program, ProgramOptions, read_fatbin

from _gpu import current_gpu

SRC = r"""
template <typename T, int UNROLL>
__global__ void scale(T* x, T a, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;
    #pragma unroll
    for (int k = 0; k < UNROLL; ++k)
        if (i + k < n) x[i + k] *= a;
}
"""
NAMES = [f"scale<{t}, {u}>" for t in ("float", "double", "int") for u in (1, 4)]

opts = ProgramOptions(name="scale_kernels", std="c++17")  # no arch, no GPU needed
obj = Program(SRC, "c++", opts).compile("fatbin", NAMES, archs="80;90;100", ptx_for=["sm_100"])
print(
    f"{obj.name}: {len(obj.code)} bytes, entries:",
    ", ".join(f"{e.kind} {e.arch}" for e in read_fatbin(bytes(obj.code)).iter_entries()),
)
for name, mangled in obj.symbol_mapping.items():
    print(f"  {name:22} -> {mangled.decode() if isinstance(mangled, bytes) else mangled}")

dev, why = current_gpu()
if dev is None:
    print(f"no GPU ({why}): get_kernel would resolve these names at load time")
else:
    for name in NAMES:
        obj.get_kernel(name)
    print(f"all {len(NAMES)} kernels resolved on {dev.name}")
