# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Compile saxpy for seven archs of five GPU generations (Turing to Blackwell) at once, show what is inside,
and run it if there is a GPU.

python examples/saxpy_multiarch.py
"""

from __future__ import annotations

import time

from cuda_fatbin import Program, coverage, read_fatbin

from _gpu import current_gpu, run_saxpy

SRC = r"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""

ARCHS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"]

t0 = time.perf_counter()
obj = Program(SRC, "c++").compile("fatbin", archs=ARCHS, ptx_for=["sm_120"])
print(f"compiled {len(ARCHS)} archs + PTX in {time.perf_counter() - t0:.2f} s: {len(obj.code)} bytes")

fatbin = read_fatbin(bytes(obj.code))
print(f"\n{'kind':6} {'arch':8} {'version':8} {'size':>7} {'stored':>7}  compression")
for e in fatbin.iter_entries():
    print(f"{e.kind:6} {e.arch!s:8} {e.version[0]}.{e.version[1]:<6} {e.size:7} {e.stored_size:7}  {e.compression}")

print("\nwhat each GPU would load (driver 13.0):")
for row in coverage(fatbin, "7.5;8.0;8.6;8.9;9.0;10.0;10.3;12.0;12.1", driver="13.0"):
    print(f"  {row.gpu.capability:5} {row.status:16} {row.reason}")

dev, why = current_gpu()
if dev is None:
    print(f"\nno GPU to launch on ({why}); the fatbin above is ready to ship")
else:
    err = run_saxpy(dev, obj.get_kernel("saxpy"))
    print(f"\nran saxpy on {dev.name} (compute capability {dev.compute_capability}): max error {err:.2e}")
    assert err < 1e-5
