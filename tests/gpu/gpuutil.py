# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Helpers of the GPU tests: tag kernels that report which entry ran, loaders, the selection report."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

DATA = Path(__file__).parent / "data"
TAG_SRC = """
#ifndef TAG
#define TAG 0
#endif
extern "C" __global__ void tag(int* out) { *out = TAG; }
"""

RUN_TAG = r"""
import re, sys
import numpy as np
from cuda.bindings import driver
from cuda.core import Device, LaunchConfig, ObjectCode, launch
dev = Device(); dev.set_current(); s = dev.create_stream()
try:
    k = ObjectCode.from_fatbin(sys.argv[1]).get_kernel("tag")
    buf = dev.allocate(4, stream=s)
    launch(s, LaunchConfig(grid=1, block=1), k, buf)
    s.sync()
    out = np.zeros(1, dtype=np.int32)
    driver.cuMemcpyDtoH(out.ctypes.data, int(buf.handle), 4)
    print("TAG", int(out[0]))
except Exception as e:
    m = re.search(r"CUDA_ERROR_[A-Z_]+", str(e))
    print("ERROR", m.group(0) if m else type(e).__name__ + ": " + str(e).splitlines()[0])
"""


def run_fatbin(device, data: bytes, kernel: str = "tag") -> str:
    """Load ``data`` and run the tag kernel in this process: ``"TAG n"`` or ``"ERROR CUDA_ERROR_..."``."""
    from cuda.bindings import driver
    from cuda.core import LaunchConfig, ObjectCode, launch

    stream = device.create_stream()
    try:
        k = ObjectCode.from_fatbin(data).get_kernel(kernel)
    except Exception as e:
        m = re.search(r"CUDA_ERROR_[A-Z_]+", str(e))
        return "ERROR " + (m.group(0) if m else f"{type(e).__name__}: {str(e).splitlines()[0]}")
    buf = device.allocate(4, stream=stream)
    launch(stream, LaunchConfig(grid=1, block=1), k, buf)
    stream.sync()
    out = np.zeros(1, dtype=np.int32)
    (err,) = driver.cuMemcpyDtoH(out.ctypes.data, int(buf.handle), 4)
    assert int(err) == 0
    buf.close(stream)
    return f"TAG {int(out[0])}"


def run_fatbin_subprocess(path: Path, env: dict) -> str:
    res = subprocess.run([sys.executable, "-c", RUN_TAG, str(path)], capture_output=True, text=True,
                         env={**os.environ, **env}, timeout=120)  # fmt: skip
    lines = [line for line in res.stdout.splitlines() if line.startswith(("TAG", "ERROR"))]
    assert lines, res.stdout + res.stderr
    return lines[-1]


class Report:
    """Predicted vs observed rows; written as JSON where CUDA_FATBIN_GPU_REPORT points."""

    def __init__(self) -> None:
        self.rows: list[dict] = []

    def add(self, **row) -> None:
        self.rows.append(row)

    def write(self) -> None:
        path = os.environ.get("CUDA_FATBIN_GPU_REPORT")
        if path and self.rows:
            Path(path).write_text(json.dumps(self.rows, indent=1))
