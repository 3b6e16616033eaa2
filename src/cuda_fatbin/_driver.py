# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Is a CUDA driver usable here, and which GPUs does it see? Asked once per process, without cuda.core.

Build machines and CI runners have no ``libcuda``. There, cuda.core's first driver call fails and
leaves a lock held, so that its next driver call blocks for ever (docs/known-issues.md). Every path of
this package that needs the device (a compile without an arch, ``native`` in an arch spec,
``KernelBundle.load()`` without ``gpu=``, ``--gpu installed``) asks :func:`devices` first: it loads the
driver library with ``ctypes`` on its own, calls ``cuInit`` and the device queries once, caches the
answer, and raises :class:`NoDriverError` at once when there is no usable driver.

Reading side: imports neither cuda.core nor cuda.bindings.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from dataclasses import dataclass

from ._errors import Error

__all__ = ["DeviceInfo", "NoDriverError", "devices", "driver_available"]

_LIBRARY = "nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1"
_ATTR_CC_MAJOR, _ATTR_CC_MINOR = 75, 76  # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR


class NoDriverError(Error, RuntimeError):
    """No usable CUDA driver or GPU in this process; the message says what to pass instead.

    Examples
    --------
    >>> from cuda_fatbin import NoDriverError, parse_archs
    >>> try:  # on a build machine without a GPU  # doctest: +SKIP
    ...     parse_archs("native")
    ... except NoDriverError as e:
    ...     print(e)
    'native' in an arch spec needs the CUDA driver: ...; name the archs instead, e.g. '80;90'
    """


@dataclass(frozen=True)
class DeviceInfo:
    """A GPU as the driver reports it.

    Attributes
    ----------
    index : int
        Device ordinal.
    name : str
    capability : tuple of int
        ``(major, minor)``.
    driver : int
        ``cuDriverGetVersion()``: CUDA version the driver supports, as 1000 x major + 10 x minor.
    """

    index: int
    name: str
    capability: tuple[int, int]
    driver: int


@functools.cache
def _probe() -> tuple[tuple[DeviceInfo, ...], str | None]:
    """The GPUs the driver sees, or why there is no answer; asked once per process."""
    try:
        lib = ctypes.CDLL(_LIBRARY)
    except OSError as e:
        reason = str(e)  # the loader's message usually starts with the library's name: not twice
        return (), f"no CUDA driver library ({reason if reason.startswith(_LIBRARY) else f'{_LIBRARY}: {reason}'})"
    try:
        rc = lib.cuInit(0)
        if rc != 0:
            return (), f"the CUDA driver did not initialise (cuInit returned CUDA error {rc})"
        version, count = ctypes.c_int(), ctypes.c_int()
        if lib.cuDriverGetVersion(ctypes.byref(version)) or lib.cuDeviceGetCount(ctypes.byref(count)):
            return (), "the CUDA driver did not answer cuDriverGetVersion/cuDeviceGetCount"
        found = []
        for i in range(count.value):
            dev, major, minor = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
            name = ctypes.create_string_buffer(256)
            if (
                lib.cuDeviceGet(ctypes.byref(dev), i)
                or lib.cuDeviceGetAttribute(ctypes.byref(major), _ATTR_CC_MAJOR, dev)
                or lib.cuDeviceGetAttribute(ctypes.byref(minor), _ATTR_CC_MINOR, dev)
            ):
                return (), f"the CUDA driver did not describe device {i}"
            lib.cuDeviceGetName(name, 256, dev)
            found.append(DeviceInfo(i, name.value.decode(errors="replace"), (major.value, minor.value), version.value))
    except AttributeError as e:  # a library of that name without the driver API
        return (), f"{_LIBRARY} lacks the driver API ({e})"
    if not found:
        return (), "the CUDA driver sees no GPU"
    return tuple(found), None


def driver_available() -> bool:
    """True when a CUDA driver loads, initialises and sees at least one GPU (asked once per process)."""
    return _probe()[1] is None


def devices(needed_for: str = "this", instead: str = "") -> tuple[DeviceInfo, ...]:
    """The GPUs the driver sees.

    Parameters
    ----------
    needed_for : str, optional
        What needs the GPU, for the error message (``"'native' in an arch spec"``).
    instead : str, optional
        What the caller can pass instead, for the error message (``"pass archs=[...]"``).

    Raises
    ------
    NoDriverError
        No driver library, ``cuInit`` failed, or no GPU; raised at once, every time, without touching
        cuda.core.
    """
    found, error = _probe()
    if error is not None:
        raise NoDriverError(f"{needed_for} needs a GPU and its driver: {error}" + (f"; {instead}" if instead else ""))
    return found
