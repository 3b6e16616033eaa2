# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Shared by the examples: find a GPU if there is one, and run a saxpy-style kernel on it."""

from __future__ import annotations

import numpy as np


def current_gpu():
    """The current cuda.core Device, or None (with the reason) on a machine without a GPU or driver."""
    from cuda_fatbin import NoDriverError
    from cuda_fatbin._driver import devices

    try:
        devices("running the kernel")  # asked first without cuda.core, whose second failed call can hang
    except NoDriverError as e:
        return None, str(e)
    try:
        from cuda.core import Device

        dev = Device()
        dev.set_current()
        return dev, ""
    except Exception as e:  # no driver, no device
        return None, f"{type(e).__name__}: {e}".splitlines()[0]


def run_saxpy(dev, kernel, n: int = 1 << 20, a: float = 2.5) -> float:
    """Launch ``kernel(a, x, y, n)`` (y = a*x + y, float32) and return the max error against NumPy."""
    from cuda.bindings import driver
    from cuda.core import LaunchConfig, launch

    rng = np.random.default_rng(0)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    stream = dev.create_stream()
    bufs = [dev.allocate(x.nbytes, stream=stream) for _ in range(2)]
    stream.sync()
    for buf, host in zip(bufs, (x, y), strict=True):
        (err,) = driver.cuMemcpyHtoD(int(buf.handle), host.ctypes.data, host.nbytes)
        assert int(err) == 0, err
    config = LaunchConfig(grid=(n + 255) // 256, block=256)
    launch(stream, config, kernel, np.float32(a), bufs[0], bufs[1], np.int32(n))
    stream.sync()
    out = np.empty_like(y)
    (err,) = driver.cuMemcpyDtoH(out.ctypes.data, int(bufs[1].handle), out.nbytes)
    assert int(err) == 0, err
    for buf in bufs:
        buf.close(stream)
    stream.sync()
    return float(np.max(np.abs(out - (a * x + y))))
