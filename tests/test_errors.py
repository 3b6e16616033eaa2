# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Every public exception derives from cuda_fatbin.Error and keeps the builtin base its docs name."""

from __future__ import annotations

import cuda_fatbin

BUILTIN_BASE = {
    "BundleCoverageError": RuntimeError,
    "BundleError": ValueError,
    "DriverCompatibilityError": ValueError,
    "ExtractError": OSError,
    "FatbinCompileError": RuntimeError,
    "FatbinError": RuntimeError,
    "FatbinFormatError": ValueError,
    "FatbinLibraryError": RuntimeError,
    "NoDriverError": RuntimeError,
}


def _public_exceptions() -> dict[str, type[BaseException]]:
    found = {}
    for name in cuda_fatbin.__all__:
        obj = getattr(cuda_fatbin, name)
        if isinstance(obj, type) and issubclass(obj, BaseException) and obj is not cuda_fatbin.Error:
            found[name] = obj
    return found


def test_every_public_exception_derives_from_error_and_its_builtin():
    found = _public_exceptions()
    assert set(found) == set(BUILTIN_BASE), "a public exception was added or removed: name its builtin base here"
    for name, cls in found.items():
        assert issubclass(cls, cuda_fatbin.Error), name
        assert issubclass(cls, BUILTIN_BASE[name]), name


def test_error_is_an_exception_and_not_a_builtin_kind():
    assert issubclass(cuda_fatbin.Error, Exception)
    assert not issubclass(cuda_fatbin.Error, (ValueError, RuntimeError, OSError))


def test_a_malformed_fatbin_is_caught_as_error():
    try:
        cuda_fatbin.read_fatbin(b"not a fatbin")
    except cuda_fatbin.Error as e:
        assert isinstance(e, cuda_fatbin.FatbinFormatError)
    else:
        raise AssertionError("read_fatbin accepted garbage")
