# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""A package that ships precompiled kernels: one fatbin per suite, built at build time (build_bundle.py)."""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from cuda_fatbin import KernelBundle


@cache
def bundle() -> KernelBundle:
    """The bundle shipped as package data (mykernels/kernels/), opened through importlib.resources."""
    return KernelBundle.open(files(__name__) / "kernels")


def kernel(suite: str, name: str, *, gpu=None, driver=None):
    """A kernel of a suite. Checks first that this GPU and driver can run the suite; else raises
    BundleCoverageError saying what the bundle has and how to rebuild, instead of the driver's
    "no kernel image is available for execution on the device"."""
    return bundle().load(suite, gpu=gpu, driver=driver).get_kernel(name)
