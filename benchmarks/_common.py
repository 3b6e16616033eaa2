# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Shared by the benchmarks: timing and the realistic kernel source."""

from __future__ import annotations

import statistics
import time

# A realistic templated source: a block reduction and an elementwise transform with math functions,
# instantiated 16 times (4 element types x 4 block sizes).
KERNELS = r"""
template <typename T, int BLOCK>
__global__ void block_sum(const T* __restrict__ x, T* __restrict__ out, int n) {
    __shared__ T smem[BLOCK];
    int i = blockIdx.x * BLOCK * 2 + threadIdx.x;
    T v = 0;
    if (i < n) v += x[i];
    if (i + BLOCK < n) v += x[i + BLOCK];
    smem[threadIdx.x] = v;
    __syncthreads();
    #pragma unroll
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) smem[threadIdx.x] += smem[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, smem[0]);
}

template <typename T, int UNROLL>
__global__ void transform(const T* __restrict__ x, T* __restrict__ y, int n, float a) {
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;
    #pragma unroll
    for (int k = 0; k < UNROLL; ++k) {
        int i = base + k;
        if (i < n) {
            float v = static_cast<float>(x[i]);
            y[i] = static_cast<T>(a * sinf(v) * expf(-v * v) + sqrtf(fabsf(v)) / (1.0f + v * v));
        }
    }
}
"""
TYPES = ("float", "double", "int", "unsigned int")
NAMES = [f"block_sum<{t}, {b}>" for t in TYPES for b in (128, 256)] + [
    f"transform<{t}, {u}>" for t in TYPES for u in (1, 4)
]
INSTANTIATIONS = "".join(
    f"template __global__ void block_sum<{t}, {b}>(const {t}*, {t}*, int);\n" for t in TYPES for b in (128, 256)
) + "".join(
    f"template __global__ void transform<{t}, {u}>(const {t}*, {t}*, int, float);\n" for t in TYPES for u in (1, 4)
)


def best_of(fn, repeat: int = 5, warmup: int = 1) -> float:
    """Median wall time of ``fn()`` over ``repeat`` runs, after ``warmup`` runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def interleaved(fns: dict, repeat: int = 51, warmup: int = 3) -> dict:
    """Median wall time of each function, measured in alternation so that machine noise hits all alike."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    times: dict = {k: [] for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def instantiations(block_sizes=(128, 256), unrolls=(1, 4)) -> str:
    """Explicit instantiations of the kernels for every type and the given parameters."""
    out = [f"template __global__ void block_sum<{t}, {b}>(const {t}*, {t}*, int);" for t in TYPES for b in block_sizes]
    out += [
        f"template __global__ void transform<{t}, {u}>(const {t}*, {t}*, int, float);" for t in TYPES for u in unrolls
    ]
    return "\n".join(out) + "\n"
