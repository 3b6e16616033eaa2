# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""On a GPU: module load time of one large multi-arch fatbin stored uncompressed, LZ4 and zstd, and
first-launch time of a SASS entry against a PTX entry the driver must JIT-compile.

    python benchmarks/bench_gpu_load.py

Sets CUDA_CACHE_DISABLE=1 so that the PTX JIT is measured, not the driver's JIT cache. Prints a
table; with CUDA_FATBIN_GPU_BENCH=path also writes it as JSON.
"""

from __future__ import annotations

import os

os.environ.setdefault("CUDA_CACHE_DISABLE", "1")  # before any CUDA library is loaded

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from cuda_fatbin import FatbinOptions, Program, read_fatbin
from cuda_fatbin._arch import nvrtc_supported_sms

from _common import INSTANTIATIONS, KERNELS, NAMES, best_of


def median_time(fn, repeat: int) -> float:
    return best_of(fn, repeat=repeat, warmup=0)  # the first load is the one to measure too


def main() -> None:
    try:
        from cuda.core import Device, LaunchConfig, ObjectCode, launch

        dev = Device()
        dev.set_current()
    except Exception as e:
        print(f"no GPU ({type(e).__name__}); nothing to measure")
        return
    from cuda.bindings import driver

    _, version = driver.cuDriverGetVersion()
    major, minor = dev.compute_capability
    gpu = f"sm_{major}{minor}"
    src = KERNELS + INSTANTIATIONS
    archs = [f"sm_{s}" for s in nvrtc_supported_sms()]
    rows = []
    loading = os.environ.get("CUDA_MODULE_LOADING", "LAZY (default)")
    print(
        f"{dev.name}, compute capability {major}.{minor}, driver CUDA {version // 1000}.{version % 1000 // 10}, "
        f"CUDA_MODULE_LOADING={loading}"
    )
    print(f"fatbin: {len(archs)} archs ({archs[0]}..{archs[-1]}) + PTX for each, {len(NAMES)} kernels\n")
    print(f"{'storage':14} {'bytes':>10} {'load + get_kernel (median of 20)':>34}")
    for label, opts in (
        ("uncompressed", FatbinOptions(compress=False)),
        ("LZ4 (speed)", FatbinOptions(compress_all=True, compress_mode="speed")),
        ("zstd (size)", FatbinOptions(compress_all=True, compress_mode="size")),
    ):
        obj = Program(src, "c++").compile("fatbin", NAMES, archs=archs, ptx_for=archs, fatbin_options=opts)
        data = bytes(obj.code)
        want = "none" if opts.compress is False else ("lz4" if opts.compress_mode == "speed" else "zstd")
        assert {e.compression for e in read_fatbin(data).entries} == {want}
        t = median_time(
            lambda data=data, m=obj.symbol_mapping: ObjectCode.from_fatbin(data, symbol_mapping=m).get_kernel(
                NAMES[-1]
            ),
            repeat=20,
        )
        print(f"{label:14} {len(data):10} {t * 1e3:31.2f} ms")
        rows.append({"what": f"load {label}", "bytes": len(data), "ms": round(t * 1e3, 3)})

    n = 1 << 16
    stream = dev.create_stream()
    x, y = dev.allocate(4 * n, stream=stream), dev.allocate(4 * n, stream=stream)
    stream.sync()

    def first_launch(data: bytes, mapping: dict) -> None:
        k = ObjectCode.from_fatbin(data, symbol_mapping=mapping).get_kernel("transform<float, 1>")
        launch(stream, LaunchConfig(grid=n // 256, block=256), k, x, y, np.int32(n), np.float32(1.5))
        stream.sync()

    print(f"\n{'entry':26} {'load + first launch (median of 5)':>36}")
    for label, kw in (
        (f"SASS {gpu}", {"archs": [gpu], "ptx_for": ()}),
        (f"PTX compute_{major}{minor} (JIT)", {"archs": [f"compute_{major}{minor}"]}),
    ):
        obj = Program(src, "c++").compile("fatbin", NAMES, **kw)
        data = bytes(obj.code)
        t = median_time(lambda data=data, m=obj.symbol_mapping: first_launch(data, m), repeat=5)
        print(f"{label:26} {t * 1e3:33.2f} ms")
        rows.append({"what": f"first launch {label}", "bytes": len(data), "ms": round(t * 1e3, 3)})
    out = os.environ.get("CUDA_FATBIN_GPU_BENCH")
    if out:
        Path(out).write_text(json.dumps({"gpu": dev.name, "driver": version, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
