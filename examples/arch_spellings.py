# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The arch lists users already have — CMake, PyTorch, nvcc — give the same fatbin.

python examples/arch_spellings.py
"""

from __future__ import annotations

from cuda_fatbin import Program, parse_archs

SRC = 'extern "C" __global__ void k(int* p) { p[threadIdx.x] = threadIdx.x; }'

SPELLINGS = {
    "plain list": ["sm_80", "sm_86", "sm_90"],
    "CMake CUDA_ARCHITECTURES": "80-real;86-real;90",
    "PyTorch TORCH_CUDA_ARCH_LIST": "8.0;8.6;9.0+PTX",
    "nvcc -gencode": "arch=compute_80,code=sm_80 arch=compute_86,code=sm_86 arch=compute_90,code=[sm_90,compute_90]",
    "gencode mapping": {"compute_80": ["sm_80"], "compute_86": ["sm_86"], "compute_90": ["sm_90", "compute_90"]},
}

results = {}
for label, spec in SPELLINGS.items():
    print(f"{label:30} {parse_archs(spec)}")
    results[label] = bytes(Program(SRC, "c++").compile("fatbin", archs=spec).code)
assert len(set(results.values())) == 1
print(f"\nall {len(results)} spellings gave byte-identical fatbins ({len(next(iter(results.values())))} bytes)")
print("CMake 'all-major' resolves against the installed NVRTC:", parse_archs("all-major"))
