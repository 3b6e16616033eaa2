# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The one base of every exception cuda-fatbin raises on purpose.

Each public exception derives from :class:`Error` *and* from the builtin that describes its kind
(``ValueError`` for bad input, ``RuntimeError`` for a failed operation, ``OSError`` for a file), so
``except cuda_fatbin.Error`` catches everything the library raises on purpose, while code written
against the builtin bases keeps working.
"""

from __future__ import annotations

__all__ = ["Error"]


class Error(Exception):
    """Base of every exception cuda-fatbin raises on purpose.

    Examples
    --------
    >>> from cuda_fatbin import Error, FatbinFormatError, read_fatbin
    >>> issubclass(FatbinFormatError, Error) and issubclass(FatbinFormatError, ValueError)
    True
    >>> try:
    ...     read_fatbin(b"not a fatbin")
    ... except Error as e:
    ...     print(type(e).__name__)
    FatbinFormatError
    """
