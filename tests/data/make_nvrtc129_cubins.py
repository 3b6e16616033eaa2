# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Regenerate the ELF-ABI-7 / ptxas-12.9 cubin fixtures in this folder (not run by the tests).

The tests' own NVRTC (13.x) writes only ELF ABI 8 cubins. These fixtures pin the older layouts:
ABI 7 (SM in e_flags bits 0-7, ``a`` in bit 0x800) and the 12.9 ABI 8 flags (``a`` in bit 0x8).

    pip download --no-deps nvidia-cuda-nvrtc-cu12==12.9.86 -d /tmp/w && unzip /tmp/w/*.whl -d /tmp/w/x
    python make_nvrtc129_cubins.py /tmp/w/x/nvidia/cuda_nvrtc/lib/libnvrtc.so.12 75 80 90a 100a
"""

import ctypes
import sys

SRC = b"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n)
{int i=blockIdx.x*blockDim.x+threadIdx.x; if(i<n) y[i]=a*x[i]+y[i];}
template<typename T> __global__ void scale(T* x, T a, int n)
{int i=blockIdx.x*blockDim.x+threadIdx.x; if(i<n) x[i]*=a;}
template __global__ void scale<float>(float*, float, int);
"""


def main(lib_path: str, *archs: str) -> None:
    lib = ctypes.CDLL(lib_path)
    for arch in archs:
        prog = ctypes.c_void_p()
        assert lib.nvrtcCreateProgram(ctypes.byref(prog), SRC, b"k.cu", 0, None, None) == 0
        opts = (ctypes.c_char_p * 1)(f"-arch=sm_{arch}".encode())
        assert lib.nvrtcCompileProgram(prog, 1, opts) == 0
        size = ctypes.c_size_t()
        lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetCUBIN(prog, buf)
        with open(f"nvrtc129_sm_{arch}.cubin", "wb") as f:
            f.write(buf.raw[: size.value])


if __name__ == "__main__":
    main(*sys.argv[1:])
