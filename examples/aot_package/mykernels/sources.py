# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The kernel sources of mykernels, and the suites they are built into."""

from cuda_fatbin import KernelSuite

BLAS1 = r"""
template <typename T> __global__ void axpy(T a, const T* x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
template <typename T> __global__ void scal(T a, T* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
"""
FILL = 'extern "C" __global__ void fill(int* p, int v, int n) { int i = threadIdx.x; if (i < n) p[i] = v; }'

SUITES = {
    "blas1": KernelSuite(BLAS1, [f"{k}<{t}>" for k in ("axpy", "scal") for t in ("float", "double")]),
    "fill": KernelSuite(FILL),
}
# Every GPU generation: SASS for each, PTX of the newest for GPUs that come later.
ARCHS = "75;80;86;89;90;100;120+PTX"
