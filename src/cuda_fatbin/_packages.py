# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Packages read whole, in one pass: conda packages (:mod:`._conda`) and container images (:mod:`._image`).

Unlike a wheel, whose members are read one at a time from their offsets, these are compressed streams:
reading one member means decompressing what comes before it. So a package is one input, read once from
start to end (an image: each layer once, from the top down), and its binaries are handed out as they
come (:class:`~cuda_fatbin._tarstream.Found`), one held at a time.

Reading side: imports nothing of the compile side.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator

from ._archive import ArchiveError
from ._files import describe, identity, is_regular, open_dir, open_input

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._tarstream import Found

__all__ = ["SUFFIXES", "is_layout", "package_kind", "read_package"]

#: Suffixes of the files read as packages: conda packages, then tars (images, or plain).
SUFFIXES = {".conda": "conda", ".tar.bz2": "conda", ".tar": "image"}


def package_kind(path: str) -> str | None:
    """``"conda"`` or ``"image"`` for a file named like one (``.conda``, ``.tar.bz2``; ``.tar``), else ``None``.

    Examples
    --------
    >>> package_kind("cupy-13.6.0-py312h_0.conda"), package_kind("ubuntu.tar"), package_kind("a.tar.gz")
    ('conda', 'image', None)
    """
    lower = path.lower()
    return next((kind for suffix, kind in SUFFIXES.items() if lower.endswith(suffix)), None)


def is_layout(path: str) -> bool:
    """True for a folder holding an ``oci-layout`` file (an OCI image layout), not through a symlink."""
    try:
        return is_regular(os.stat(os.path.join(path, "oci-layout"), follow_symlinks=False))
    except (OSError, ValueError):
        return False


def read_package(
    path: str, kind: str, wanted: Callable[[str, bytes], bool], head: int, meta: dict[str, object], *,
    listed_as: tuple[int, int] = (0, 0), follow: bool = True,
) -> Iterator[Found]:  # fmt: skip
    """The members of the package at ``path`` (``kind`` ``conda``, ``image`` or ``oci``: a layout folder) that
    ``wanted(name, first head bytes)`` accepts, with their bytes or errors.

    Never raises for what it reads: a package that cannot be read (or read further) ends with a
    :class:`Found` named ``""`` carrying the error. It must be the file (or folder) listed as
    ``listed_as`` (device, inode); ``follow=False`` refuses a symlink at ``path``.
    """
    from ._tarstream import Found  # a package's reader: not imported to list plain files (start-up time)

    try:
        if kind == "oci":
            fd = open_dir(path, listed_as=None if follow else listed_as)
            st = os.fstat(fd)
        else:
            fd, st = open_input(path, follow=follow)
    except OSError as e:
        yield Found("", error=f"{type(e).__name__}: {e.strerror or e}")
        return
    try:
        if kind != "oci" and not is_regular(st):
            raise ArchiveError(errno.EINVAL, f"{describe(st)} now, not a regular file (changed since listed)", path)
        if listed_as != (0, 0) and identity(st) != listed_as:
            raise ArchiveError(errno.EIO, "another file now (changed since listed)", path)
        if kind == "conda":
            from ._conda import read_package as read_conda

            yield from read_conda(fd, path, wanted, head, meta, follow=follow)
        else:
            from ._image import read_image

            yield from read_image(fd, path, kind == "oci", wanted, head)
    except (OSError, ValueError, MemoryError, RecursionError) as e:
        yield Found("", error=f"{type(e).__name__}: {getattr(e, 'strerror', None) or e}")
    finally:
        os.close(fd)
