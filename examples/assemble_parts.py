# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Assemble a fatbin from artifacts you already have: cubins from nvcc or NVRTC, PTX, cuda.core ObjectCodes.

python examples/assemble_parts.py
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from cuda.core import Program as CoreProgram
from cuda.core import ProgramOptions as CoreOptions

from cuda_fatbin import FatbinOptions, Part, from_parts, read_fatbin, select_entry

SRC = 'extern "C" __global__ void k(float* p) { p[threadIdx.x] *= 2.0f; }'

parts = []
# cuda.core ObjectCodes (compile("cubin") needs no GPU when the arch is set)
for arch in ("sm_80", "sm_90a"):
    parts.append(CoreProgram(SRC, "c++", CoreOptions(arch=arch)).compile("cubin"))
# a cubin built by nvcc, read from disk, kind and arch detected from the bytes
with tempfile.TemporaryDirectory() as tmp:
    if shutil.which("nvcc"):
        cu = Path(tmp, "k.cu")
        cu.write_text(SRC)
        subprocess.run(["nvcc", "-cubin", "-arch=sm_120", "-o", f"{tmp}/k.cubin", str(cu)], check=True)
        parts.append(Path(tmp, "k.cubin").read_bytes())
    # LTO-IR for later link-time optimisation, with an explicit identifier
    lto = CoreProgram(SRC, "c++", CoreOptions(arch="sm_86", link_time_optimization=True)).compile("ltoir")
    parts.append(Part(lto.code, identifier="lto86"))
    obj = from_parts(parts, options=FatbinOptions(compress_mode="size"), name="assembled")

fatbin = read_fatbin(bytes(obj.code))
print(f"{obj.name}: {len(obj.code)} bytes")
for e in fatbin.iter_entries():
    print(f"  {e.kind:6} {e.arch!s:8} {e.identifier or '':16} {e.compression}")
for gpu in ("8.6", "9.0", "12.0", "10.0"):
    sel = select_entry(fatbin, gpu)
    print(f"  on {gpu:4}: {sel.reason}")
