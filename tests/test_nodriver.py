# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Without a GPU driver nothing of ours hangs: every call that needs the device fails at once, each time.

Each scenario runs in a fresh interpreter with a timeout, because the failure this guards against is
a hang: after cuda.core fails once to load the driver, its next driver call blocks on a lock
(docs/known-issues.md).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from cuda_fatbin._driver import driver_available


@pytest.fixture(autouse=True)
def _no_driver() -> None:
    """Asked when a test runs, not at collection: a mutation run forks each mutant's tests from the process that
    collected them, and a driver initialised there is unusable in the fork (docs/testing.md)."""
    if driver_available():
        pytest.skip("these scenarios need a machine without a GPU driver")


PRELUDE = """
import time
from cuda_fatbin import Program, NoDriverError
src = 'extern "C" __global__ void k(float* p){ p[0] = 1; }'
def attempt(label, fn):
    t0 = time.perf_counter()
    try:
        fn()
        print(label, "returned")
    except Exception as e:
        print(label, type(e).__name__, round(time.perf_counter() - t0, 3))
"""


def run(body: str, timeout: float = 60) -> list[list[str]]:
    code = PRELUDE + textwrap.dedent(body)
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    assert res.returncode == 0, res.stderr
    assert time.perf_counter() - t0 < timeout
    return [line.split() for line in res.stdout.splitlines()]


def test_issue_reproducer_finishes():
    """cuda.core's get_kernel fails (SystemError upstream); our compile without an arch still fails fast, twice."""
    lines = run(
        """
        obj = Program(src, "c++").compile("fatbin", archs=["sm_80"])
        attempt("get_kernel", lambda: obj.get_kernel("k"))
        attempt("cubin1", lambda: Program(src, "c++").compile("cubin"))
        attempt("cubin2", lambda: Program(src, "c++").compile("cubin"))
        """
    )
    by = {line[0]: line for line in lines}
    assert by["get_kernel"][1] != "returned"
    for label in ("cubin1", "cubin2"):
        assert by[label][1] == "NoDriverError" and float(by[label][2]) < 1.0


def test_every_device_path_fails_fast_in_any_order(tmp_path):
    lines = run(
        f"""
        from cuda_fatbin import KernelBundle, KernelSuite, parse_archs
        b = KernelBundle.build({str(tmp_path)!r}, {{"k": KernelSuite(src)}}, archs=["sm_80"])
        for i in range(2):
            attempt(f"native{{i}}", lambda: parse_archs("native"))
            attempt(f"load{{i}}", lambda: b.load("k"))
            attempt(f"check{{i}}", lambda: b.check("k"))
            attempt(f"cubin{{i}}", lambda: Program(src, "c++").compile("cubin"))
        """
    )
    assert len(lines) == 8
    for label, kind, seconds in lines:
        expected = "BundleCoverageError" if label[:-1] in ("load", "check") else "NoDriverError"
        assert kind == expected, label
        assert float(seconds) < 1.0, label
