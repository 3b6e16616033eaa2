# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""conda packages read in place: ``.tar.bz2`` (one bzip2 tar) and ``.conda`` (a zip of zstd tars).

A ``.conda`` file is a ZIP archive (read by :mod:`cuda_fatbin._archive`, bounded) whose stored members
``info-NAME.tar.zst`` (the package's ``info/`` folder) and ``pkg-NAME.tar.zst`` (its files) are zstd tars;
a ``.tar.bz2`` is one bzip2 tar holding both. Each tar is decompressed once, as it is read
(:mod:`cuda_fatbin._tarstream`), and only members whose first bytes the caller wants are held, one at a
time. The distribution is ``"name version"`` from ``info/index.json`` (at most 1 MiB of JSON, 8 levels).

Reading side: imports nothing of the compile side.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator

from ._archive import SEPARATOR, ArchiveError, list_members
from ._files import loads_json
from ._tarstream import Found, clean, iter_tar, open_stream

__all__ = ["SUFFIXES", "read_package"]

#: conda package suffixes.
SUFFIXES = (".conda", ".tar.bz2")
_MAX_INDEX = 1 << 20
_CLIMBS = "its path climbs out of the archive (../); not read"

#: ``wanted(name, first bytes)``: read this member?
Wanted = Callable[[str, bytes], bool]


def _distribution(raw: bytes) -> str | None:
    try:
        index = loads_json(raw, 8)
    except ValueError:
        return None
    if isinstance(index, dict):
        name, version = index.get("name"), index.get("version")
        if isinstance(name, str) and isinstance(version, str) and name.strip() and version.strip():
            return f"{name.strip()} {version.strip()}"
    return None


def _tar(fd: int, offset: int, size: int, where: str, wanted: Wanted, head: int, meta: dict[str, object]
         ) -> Iterator[Found]:  # fmt: skip
    """The wanted members of one tar stream, and ``meta["distribution"]`` from its ``info/index.json``."""
    for entry, data in iter_tar(open_stream(fd, offset, size, where), where):
        name = clean(entry.name)
        if name is None:
            yield Found(entry.name, error=_CLIMBS)
        elif entry.kind == "long":
            yield Found(entry.name, error="a name over 4096 bytes; not read")
        elif entry.kind != "file":
            continue
        elif name == "info/index.json":
            if entry.size <= _MAX_INDEX:
                meta["distribution"] = _distribution(data.all(_MAX_INDEX))
        elif wanted(name, data.head(head)):
            try:
                yield Found(name, data.all())
            except ArchiveError as e:
                if e.errno != errno.EFBIG:  # the stream itself failed: the package's error
                    raise
                yield Found(name, error=e.strerror)


def read_package(fd: int, path: str, wanted: Wanted, head: int, meta: dict[str, object], *, follow: bool = True
                 ) -> Iterator[Found]:  # fmt: skip
    """Every member of the conda package open as ``fd`` that ``wanted`` accepts, with its bytes or error.

    ``meta["distribution"]`` is set once ``info/index.json`` was read. The package as a whole failing (not
    a zip or bzip2 tar, a corrupt stream, a bomb) raises :class:`~cuda_fatbin._archive.ArchiveError` after
    the members read before it were yielded.
    """
    size = os.fstat(fd).st_size
    if not path.lower().endswith(".conda"):
        yield from _tar(fd, 0, size, path, wanted, head, meta)
        return
    members = list_members(path, follow=follow)
    st = os.fstat(fd)
    if members and members[0].identity != (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns):
        raise ArchiveError(errno.EIO, "another file now (changed while read)", path)
    parts = sorted((m for m in members if m.name.endswith(".tar.zst") and m.name.startswith(("info-", "pkg-"))),
                   key=lambda m: not m.name.startswith("info-"))  # fmt: skip
    if not any(m.name.startswith("pkg-") for m in parts):
        raise ArchiveError(errno.EINVAL, "a .conda with no pkg-*.tar.zst member (not a conda package?)", path)
    for m in parts:
        where = f"{path}{SEPARATOR}{m.name}"
        if m.error or m.method != 0:
            raise ArchiveError(errno.EINVAL, m.error or "a compressed member (conda stores its tars); not read", where)
        yield from _tar(fd, m.data_offset, m.compressed, where, wanted, head, meta)
