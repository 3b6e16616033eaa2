#!/usr/bin/env bash
# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
# Where there is a GPU: run the GPU test suite and the GPU benchmark in one go, then print a summary
# table of the selection cases (predicted by select_entry vs observed on the device).
#   bash scripts/gpu-check.sh            (writes its logs and JSON under $OUT, or a temporary folder)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
export PYTHONPATH="src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export CUDA_FATBIN_GPU_REPORT="$OUT/selection.json" CUDA_FATBIN_GPU_BENCH="$OUT/bench.json"
PY=${PYTHON:-python3}

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>/dev/null || echo "nvidia-smi: none"
$PY - <<'PY'
import importlib.metadata as md
for p in ("cuda-core", "cuda-bindings", "numpy", "pytest", "hypothesis"):
    try:
        print(f"{p} {md.version(p)}")
    except md.PackageNotFoundError:
        print(f"{p} missing")
from cuda.bindings import nvfatbin, nvrtc
print("libnvfatbin", nvfatbin.version(), "NVRTC", nvrtc.nvrtcVersion()[1:])
PY

echo "== GPU tests"
$PY -m pytest -m gpu -p no:cacheprovider -q -rs tests 2>&1 | tee "$OUT/pytest.log"
rc=${PIPESTATUS[0]}

echo "== CUDA headers without -I: compile for all-major, launch on this GPU"
$PY - <<'PY' || rc=1
# cuda_fp16.h (runtime), cuda/std/complex (CCCL) and cooperative_groups.h, with no include path
import numpy as np
from cuda.bindings import driver
from cuda.core import Device, LaunchConfig, launch
from cuda_fatbin import Program
from cuda_fatbin._headers import cuda_header_dirs

SRC = r"""
#include <cuda_fp16.h>
#include <cuda/std/complex>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void h(float* out) {
    cuda::std::complex<float> c(3.0f, 4.0f);
    cg::thread_block block = cg::this_thread_block();
    __half v = __float2half(cuda::std::abs(c));  // 5
    out[block.thread_rank()] = __half2float(v) + (float)block.thread_rank();
}
"""
print("header folders:", [d.label for d in cuda_header_dirs()])
obj = Program(SRC, "c++").compile("fatbin", archs="all-major")
dev = Device()
dev.set_current()
stream = dev.create_stream()
buf = dev.allocate(32 * 4, stream=stream)
launch(stream, LaunchConfig(grid=1, block=32), obj.get_kernel("h"), buf)
stream.sync()
out = np.empty(32, dtype=np.float32)
(err,) = driver.cuMemcpyDtoH(out.ctypes.data, int(buf.handle), out.nbytes)
assert int(err) == 0, err
buf.close(stream)
stream.sync()
expected = 5.0 + np.arange(32, dtype=np.float32)
print(f"{dev.name} (cc {dev.compute_capability}): {'ok' if np.array_equal(out, expected) else f'WRONG {out}'}")
assert np.array_equal(out, expected)
PY

echo "== examples on the GPU"
for ex in examples/saxpy_multiarch.py examples/templated_kernel.py; do
  $PY "$ex" 2>&1 | tail -3 | sed "s|^|  $ex: |" || rc=1
done

echo "== GPU benchmark (default lazy module loading)"
$PY benchmarks/bench_gpu_load.py 2>&1 | tee "$OUT/bench.log"
echo "== GPU benchmark (CUDA_MODULE_LOADING=EAGER)"
CUDA_MODULE_LOADING=EAGER CUDA_FATBIN_GPU_BENCH="$OUT/bench_eager.json" $PY benchmarks/bench_gpu_load.py 2>&1 \
  | tee "$OUT/bench_eager.log"

echo "== selection cases: select_entry vs the driver"
$PY - "$CUDA_FATBIN_GPU_REPORT" <<'PY'
import json, sys
from pathlib import Path
path = Path(sys.argv[1])
rows = json.loads(path.read_text()) if path.exists() else []
print(f"| case | entries | env | predicted | observed | agree |")
print(f"|---|---|---|---|---|---|")
bad = 0
for r in rows:
    agree = r["observed"] == r["predicted"] or (r["predicted"] == "ERROR" and r["observed"].startswith("ERROR"))
    bad += not agree
    print(f"| {r['case']} | {r['entries']} | {r['env'] or '-'} | {r['predicted']} | {r['observed']} | {'yes' if agree else 'NO'} |")
print(f"\n{len(rows)} cases, {bad} disagreements")
PY
echo "pytest exit code: $rc"
exit $rc
