# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""GPU fixtures: a device (or a clean skip), the driver version, and the selection report."""

from __future__ import annotations

import pytest

from gpuutil import Report


@pytest.fixture(scope="session")
def device():
    from cuda_fatbin._driver import NoDriverError, devices

    try:
        devices("running the GPU tests")  # asked without cuda.core, whose second failed driver call can hang
    except NoDriverError as e:
        pytest.skip(str(e))
    try:
        from cuda.core import Device

        dev = Device()
        dev.set_current()
    except Exception as e:  # no driver or no GPU: every GPU test skips cleanly
        pytest.skip(f"no CUDA device: {type(e).__name__}: {str(e).splitlines()[0]}")
    return dev


@pytest.fixture(scope="session")
def driver_version(device) -> int:
    from cuda.bindings import driver

    err, version = driver.cuDriverGetVersion()
    assert int(err) == 0
    return version


@pytest.fixture(scope="session")
def report():
    r = Report()
    yield r
    r.write()
