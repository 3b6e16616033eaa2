# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Program.compile("fatbin") against a sequential cuda.core loop and nvcc, on the same source and archs.

    python benchmarks/bench_compile.py [--archs 75,80,...] [--scaling]

Source: the templated kernels of _common.py (16 instantiations), with a constant that changes before every
timed compile, so that no compiler cache answers it (NVRTC on some machines returns a repeated compile of
unchanged code in ~20 ms). Archs: 7 real archs by default, no PTX (the cuda.core loop cannot make PTX
without a driver), then the same with PTX for the newest arch. Prints the NVRTC, nvJitLink and nvcc
versions: compare at equal versions (see docs/performance.md). ``--scaling`` adds the table of workers
1, 2, 4, ... x default / group / split-compile.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cuda.core import Program as CoreProgram
from cuda.core import ProgramOptions as CoreOptions

from cuda_fatbin import Program, ProgramOptions, from_parts
from cuda_fatbin._multiarch import _nvjitlink, _nvrtc

from _common import INSTANTIATIONS, KERNELS, NAMES

_stamp = itertools.count()


def fresh_source() -> str:
    """The benchmark source with a new constant: a compile no cache has seen."""
    return KERNELS + INSTANTIATIONS + f"\n__device__ int cuda_fatbin_bench_stamp_{next(_stamp)};\n"


def timed(fn, repeat: int = 3) -> float:
    """Best wall time of ``fn(fresh_source())`` over ``repeat`` runs (after one warm-up)."""
    fn(fresh_source())
    best = float("inf")
    for _ in range(repeat):
        src = fresh_source()
        t0 = time.perf_counter()
        fn(src)
        best = min(best, time.perf_counter() - t0)
    return best


def versions() -> str:
    from cuda.bindings import nvjitlink, nvrtc

    nv = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    return (f"NVRTC {'.'.join(map(str, nvrtc.nvrtcVersion()[1:]))}, nvJitLink {'.'.join(map(str, nvjitlink.version()))}"
            f", nvcc {nv[-1] if nv else 'not found'}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--archs", default="75,80,86,89,90,100,120")
    ap.add_argument("--scaling", action="store_true")
    args = ap.parse_args()
    archs = [f"sm_{a}" for a in args.archs.split(",")]
    cores = os.cpu_count() or 1

    def loop(src):
        return from_parts([CoreProgram(src, "c++", CoreOptions(arch=a)).compile("cubin", NAMES) for a in archs])

    def ours(src, **kw):
        options = kw.pop("options", None)
        return Program(src, "c++", options).compile("fatbin", NAMES, archs=archs, **kw)

    print(f"{len(archs)} archs, {len(NAMES)} instantiations, {cores} CPU cores; {versions()}")
    seq = timed(loop)
    one = min(timed(lambda s, a=a: Program(s, "c++").compile("fatbin", NAMES, archs=[a], ptx_for=())) for a in archs)
    par = timed(lambda s: ours(s, ptx_for=()))
    grp = timed(lambda s: ours(s, ptx_for=(), group=True))
    print(f"  sequential cuda.core loop + from_parts  {seq:6.2f} s")
    print(f"  one arch alone (the fastest)            {one:6.2f} s")
    print(f"  Program.compile('fatbin')               {par:6.2f} s   ratio to loop {par / seq:.2f}x, "
          f"to one arch {par / one:.2f}x")  # fmt: skip
    print(f"  Program.compile('fatbin', group=True)   {grp:6.2f} s   ratio to loop {grp / seq:.2f}x")
    if shutil.which("nvcc"):
        gencode = [f"-gencode=arch=compute_{a[3:]},code={a}" for a in archs]
        with tempfile.TemporaryDirectory() as tmp:

            def nvcc(src, ptx=False):
                Path(tmp, "k.cu").write_text(src)
                extra = [f"-gencode=arch=compute_{archs[-1][3:]},code=compute_{archs[-1][3:]}"] if ptx else []
                subprocess.run(["nvcc", "-fatbin", "--threads", "0", *gencode, *extra, "-o", f"{tmp}/k.fatbin",
                                f"{tmp}/k.cu"], check=True)  # fmt: skip

            nv = timed(nvcc)
            nv_ptx = timed(lambda s: nvcc(s, ptx=True))
        par_ptx = timed(lambda s: ours(s, ptx_for=[archs[-1]]))
        print(f"  nvcc -fatbin --threads 0                {nv:6.2f} s   ours / nvcc {par / nv:.2f}x")
        print(f"  with PTX for {archs[-1]}: ours {par_ptx:.2f} s, nvcc {nv_ptx:.2f} s   ours / nvcc "
              f"{par_ptx / nv_ptx:.2f}x")  # fmt: skip
    front = timed(lambda s: _nvrtc(s, "k", [b"-arch=compute_80"], "ptx", ()))
    ptxs = {}  # PTX of each fresh source, made outside the timed part

    def link(s):
        return _nvjitlink(ptxs[s], [b"-arch=sm_80"])

    for _ in range(4):
        s = fresh_source()
        ptxs[s] = _nvrtc(s, "k", [b"-arch=compute_80"], "ptx", ())[0]
    it = iter(ptxs)
    back = timed(lambda _s: link(next(it)))
    print(f"  one NVRTC front end {front:.2f} s, one nvJitLink (ptxas) {back:.2f} s")
    if args.scaling:
        counts = [w for w in (1, 2, 4, 8, 16, 32) if w <= cores] or [1]
        print("\n  workers | default | group=True | split_compile=2 (jobs x 2 threads <= workers)")
        for w in counts:
            d = timed(lambda s, w=w: ours(s, ptx_for=(), max_workers=w), repeat=2)
            g = timed(lambda s, w=w: ours(s, ptx_for=(), max_workers=w, group=True), repeat=2)
            sp = timed(lambda s, w=w: ours(s, ptx_for=(), max_workers=w, options=ProgramOptions(split_compile=2)),
                       repeat=2)  # fmt: skip
            print(
                f"  {w:7d} | {d:6.2f} s ({d / seq:.2f}x) | {g:6.2f} s ({g / seq:.2f}x) | {sp:6.2f} s ({sp / seq:.2f}x)"
            )


if __name__ == "__main__":
    main()
