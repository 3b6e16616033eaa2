# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The CUDA runtime and CCCL header folders that C++ compiles get without ``-I``.

NVRTC knows no include folder of its own: ``#include <cuda_fp16.h>``, ``<cuda/std/complex>`` or
``<cooperative_groups.h>`` fail with ``cannot open source file`` unless the folder is passed. nvcc adds
its toolkit's ``include/`` (and ``include/cccl``) itself; :class:`~cuda_fatbin.Program` does the same
with the folders ``cuda.pathfinder`` finds (NVIDIA's wheels first, then conda, ``CUDA_PATH``/``CUDA_HOME``
and the system toolkit), after the user's own ``include_path``. The cache keys hash these folders by a
label (where they were found and the version their headers declare), not by reading thousands of files.

Compile side only (imports ``cuda.pathfinder`` when asked).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass

__all__ = ["CUDA_HEADERS_INSTALL", "HeaderDir", "cuda_header_dirs", "missing_header_hint"]

# The wheels that ship the headers, in the form pip takes (the CUDA major of the NVRTC we depend on).
CUDA_HEADERS_INSTALL = 'pip install "cuda-toolkit[cudart,cccl]==13.*"'

# name for cuda.pathfinder, header that declares the version, and the macro that holds it
_LIBS = (("cudart", "cuda_runtime_api.h", "CUDART_VERSION"), ("cccl", "cuda/std/__cccl/version.h", "CCCL_VERSION"))
_VERSION_BYTES = 1 << 16  # the define sits near the top; never read a whole (possibly huge or hostile) file


@dataclass(frozen=True)
class HeaderDir:
    """A header folder found by ``cuda.pathfinder``.

    Attributes
    ----------
    library : str
        ``"cudart"`` or ``"cccl"``.
    path : str
        The absolute folder.
    label : str
        What the cache keys hash instead of the folder's content: library, where it was found, and the
        version its headers declare (``"cudart system-ctk-root CUDART_VERSION=13000"``).
    """

    library: str
    path: str
    label: str


def _declared_version(folder: str, header: str, macro: str) -> str:
    """``MACRO=value`` from the first 64 KiB of ``folder/header``, or ``MACRO=?`` when it is not there."""
    try:
        with open(os.path.join(folder, header), "rb") as f:
            head = f.read(_VERSION_BYTES)
    except OSError:
        return f"{macro}=?"
    m = re.search(rb"#\s*define\s+" + macro.encode() + rb"\s+(\w{1,32})", head)
    return f"{macro}={m.group(1).decode()}" if m else f"{macro}=?"


@functools.cache
def cuda_header_dirs() -> tuple[HeaderDir, ...]:
    """The CUDA runtime and CCCL header folders of this environment (asked once per process).

    Returns
    -------
    tuple of HeaderDir
        Those that exist, cudart's first; empty when ``cuda.pathfinder`` finds none (install them with
        :data:`CUDA_HEADERS_INSTALL`).

    Examples
    --------
    >>> from cuda_fatbin._headers import cuda_header_dirs
    >>> [d.library for d in cuda_header_dirs()]  # doctest: +SKIP
    ['cudart', 'cccl']
    """
    try:
        from cuda.pathfinder import locate_nvidia_header_directory
    except ImportError:  # an older cuda-pathfinder
        return ()
    found = []
    for lib, header, macro in _LIBS:
        try:
            located = locate_nvidia_header_directory(lib)
        except Exception:  # pathfinder's own failures (unsupported name, a canary that crashed) mean "not found"
            continue
        path = getattr(located, "abs_path", None) if located is not None else None
        if path and os.path.isdir(path):
            label = f"{lib} {getattr(located, 'found_via', '?')} {_declared_version(path, header, macro)}"
            found.append(HeaderDir(lib, os.path.abspath(path), label))
    return tuple(found)


# "k.cu(1): catastrophic error: could not open source file "cuda_fp16.h" (no directories in search list)"
_CANNOT_OPEN = re.compile(r'(?:cannot|could not) open source file "([^"\n]{1,200})"')
_CUDA_HEADER = re.compile(r"^(cuda[_/]|cuda\.h$|cooperative_groups|thrust/|cub/|nv/|sm_\d+_|mma\.h$|"
                          r"vector_(types|functions)|device_(types|functions|launch_parameters)|math_constants|"
                          r"texture_|surface_|crt/|builtin_types|driver_types|host_defines|nvfunctional$)")  # fmt: skip


def missing_header_hint(log: str, cuda_headers: bool) -> str:
    """What to do when ``log`` says a CUDA header could not be opened; ``""`` when it does not.

    Parameters
    ----------
    log : str
        A compiler log.
    cuda_headers : bool
        Whether the program asked for the CUDA header folders (``Program(..., cuda_headers=True)``).

    Examples
    --------
    >>> from cuda_fatbin._headers import missing_header_hint
    >>> print(missing_header_hint('k.cu(1): catastrophic error: cannot open source file "cuda_fp16.h"', False))
    cuda_fp16.h is a CUDA header: drop cuda_headers=False (--no-cuda-headers), or pass its folder in include_path (-I)
    """
    names = sorted({m for m in _CANNOT_OPEN.findall(log) if _CUDA_HEADER.match(m)})
    if not names:
        return ""
    what = f"{', '.join(names)} {'is a CUDA header' if len(names) == 1 else 'are CUDA headers'}"
    if not cuda_headers:
        return f"{what}: drop cuda_headers=False (--no-cuda-headers), or pass its folder in include_path (-I)"
    where = ", ".join(d.path for d in cuda_header_dirs())
    if where:
        return (f"{what}, not found in the CUDA header folders ({where}): install newer headers "
                f"({CUDA_HEADERS_INSTALL}) or pass their folder in include_path (-I)")  # fmt: skip
    return (
        f"{what} and no CUDA headers are installed: {CUDA_HEADERS_INSTALL}, or pass their folder in include_path (-I)"
    )
