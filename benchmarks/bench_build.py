# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""build_fatbin against raw cuda.bindings.nvfatbin calls and the fatbinary CLI, on the same inputs.

    python benchmarks/bench_build.py

Prints the median time of each and the ratios. Inputs: NVRTC cubins for 7 archs and one PTX of the
realistic kernel source in _common.py.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cuda_fatbin import Arch, FatbinOptions, Part, build_fatbin
from cuda_fatbin._multiarch import JobResult, _nvrtc
from cuda_fatbin._program import _assemble

from _common import KERNELS, best_of, instantiations, interleaved

ARCHS = ["75", "80", "86", "89", "90", "100", "120"]


def raw_calls(cubins, ptx, opts):
    from cuda.bindings import nvfatbin

    h = nvfatbin.create(opts, len(opts))
    try:
        for arch, c in cubins:
            nvfatbin.add_cubin(h, c, len(c), arch, "")
        nvfatbin.add_ptx(h, ptx, len(ptx), "120", "", "")
        out = bytearray(nvfatbin.size(h))
        nvfatbin.get(h, out)
        return bytes(out)
    finally:
        nvfatbin.destroy(h)


def main() -> None:
    for label, inst in (
        ("realistic kernels (16 instantiations)", instantiations()),
        (
            "a larger kernel set (48 instantiations)",
            instantiations((32, 64, 128, 256, 512, 1024), (1, 2, 4, 8, 16, 32)),
        ),
    ):
        print(f"== {label}")
        run(KERNELS + inst)


def run(src: str) -> None:
    cubins = [(a, _nvrtc(src, "k", [f"-arch=sm_{a}".encode()], "cubin", ())[0]) for a in ARCHS]
    ptx = _nvrtc(src, "k", [b"-arch=compute_120"], "ptx", ())[0]
    total = sum(len(c) for _, c in cubins) + len(ptx)
    print(f"inputs: {len(cubins)} cubins + 1 PTX, {total / 1024:.0f} KiB")
    for label, options, strings in (
        ("default compression", FatbinOptions(), []),
        ("no compression", FatbinOptions(compress=False), ["-compress=false"]),
    ):
        parts = [Part(c, kind="cubin", arch=a) for a, c in cubins] + [Part(ptx, kind="ptx", arch="120")]
        results = [JobResult(None, (("cubin", Arch.parse(a), c),)) for a, c in cubins]  # as compile's jobs give them
        results.append(JobResult(None, (("ptx", Arch.parse("120"), ptx),)))
        t = interleaved(
            {
                "ours": lambda parts=parts, options=options: build_fatbin(parts, options=options),
                "assembly": lambda results=results, options=options: _assemble(results, options, None),
                "raw": lambda strings=strings: raw_calls(cubins, ptx, strings),
            },
            repeat=101,
        )
        ours, raw, assembly = t["ours"], t["raw"], t["assembly"]
        print(f"\n[{label}]")
        print(f"  build_fatbin          {ours * 1e3:8.2f} ms   (user parts: every check)")
        print(f"  compile's assembly    {assembly * 1e3:8.2f} ms   (its own artifacts: no re-validation)")
        print(f"  raw nvfatbin calls    {raw * 1e3:8.2f} ms   build_fatbin / raw = {ours / raw:.2f}x, "
              f"assembly / raw = {assembly / raw:.2f}x")  # fmt: skip
        if shutil.which("fatbinary"):
            with tempfile.TemporaryDirectory() as tmp:
                args = ["fatbinary", f"--create={tmp}/out.fatbin", "-64"]
                if options.compress is False:
                    args.append("--compress=false")
                for a, c in cubins:
                    Path(tmp, f"{a}.cubin").write_bytes(c)
                    args.append(f"--image3=kind=elf,sm={a},file={tmp}/{a}.cubin")
                Path(tmp, "k.ptx").write_bytes(ptx)
                args.append(f"--image3=kind=ptx,sm=120,file={tmp}/k.ptx")
                cli = best_of(lambda args=args: subprocess.run(args, check=True), repeat=11)
            print(f"  fatbinary CLI         {cli * 1e3:8.2f} ms   fatbinary / build_fatbin = {cli / ours:.1f}x")
        else:
            print("  fatbinary CLI: not on PATH, skipped")


if __name__ == "__main__":
    main()
