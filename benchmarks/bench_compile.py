"""Program.compile("fatbin") against a sequential cuda.core loop and nvcc, on the same source and archs.

    python benchmarks/bench_compile.py

Source: the templated kernels of _common.py (16 instantiations). Archs: 7 real archs, no PTX (the
cuda.core loop cannot make PTX without a driver), then the same with PTX for the newest arch.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cuda.core import Program as CoreProgram
from cuda.core import ProgramOptions as CoreOptions

from cuda_fatbin import Program, from_parts
from cuda_fatbin._multiarch import _nvjitlink, _nvrtc

from _common import INSTANTIATIONS, KERNELS, NAMES, best_of

ARCHS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"]
SRC = KERNELS + INSTANTIATIONS


def sequential_core_loop():
    parts = [CoreProgram(SRC, "c++", CoreOptions(arch=a)).compile("cubin", NAMES) for a in ARCHS]
    return from_parts(parts)


def ours(**kw):
    return Program(SRC, "c++").compile("fatbin", NAMES, archs=ARCHS, **kw)


def nvcc(tmp: str, ptx: bool) -> None:
    gencode = [f"-gencode=arch=compute_{a[3:]},code=sm_{a[3:]}" for a in ARCHS]
    if ptx:
        gencode.append("-gencode=arch=compute_120,code=compute_120")
    subprocess.run(["nvcc", "-fatbin", "--threads", "0", *gencode, "-o", f"{tmp}/k.fatbin", f"{tmp}/k.cu"], check=True)


def main() -> None:
    print(f"{len(ARCHS)} archs, {len(NAMES)} instantiations, {os.cpu_count()} CPU cores")
    seq = best_of(sequential_core_loop, repeat=3)
    par = best_of(lambda: ours(ptx_for=()), repeat=3)
    grp = best_of(lambda: ours(ptx_for=(), group=True), repeat=3)
    print(f"  sequential cuda.core loop + from_parts  {seq:6.2f} s")
    print(f"  Program.compile('fatbin')               {par:6.2f} s   ratio to loop {par / seq:.2f}x")
    print(f"  Program.compile('fatbin', group=True)   {grp:6.2f} s   ratio to loop {grp / seq:.2f}x")
    if shutil.which("nvcc"):
        with tempfile.TemporaryDirectory() as tmp:
            Path(tmp, "k.cu").write_text(SRC)
            nv = best_of(lambda: nvcc(tmp, ptx=False), repeat=3)
            nv_ptx = best_of(lambda: nvcc(tmp, ptx=True), repeat=3)
        par_ptx = best_of(lambda: ours(ptx_for=["sm_120"]), repeat=3)
        print(f"  nvcc -fatbin --threads 0                {nv:6.2f} s   ours / nvcc {par / nv:.2f}x")
        print(f"  with PTX for sm_120: ours {par_ptx:.2f} s, nvcc {nv_ptx:.2f} s   ours / nvcc {par_ptx / nv_ptx:.2f}x")
    # decomposition: what one front end and one ptxas cost, for the grouping model
    front = best_of(lambda: _nvrtc(SRC, "k", [b"-arch=compute_80"], "ptx", ()), repeat=3)
    ptx = _nvrtc(SRC, "k", [b"-arch=compute_80"], "ptx", ())[0]
    back = best_of(lambda: _nvjitlink(ptx, [b"-arch=sm_80"]), repeat=3)
    groups = len(Program(SRC, "c++").plan(ARCHS, ptx_for=(), group=True).jobs)
    model = groups * front + len(ARCHS) * back / (os.cpu_count() or 1)
    print(f"  one NVRTC front end {front:.2f} s, one nvJitLink (ptxas) {back:.2f} s;")
    print(
        f"  grouped model: {groups} front ends + {len(ARCHS)} ptxas over {os.cpu_count()} cores = {model:.2f} s"
        f" (measured {grp:.2f} s)"
    )


if __name__ == "__main__":
    main()
