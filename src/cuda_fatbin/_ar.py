# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""ar archives (static libraries: ``.a``, and ``.lib`` on Windows) read in place, in bounded linear work.

The layout (``!<arch>\\n``, then 60-byte member headers, each member's data padded to an even offset)
and its GNU, BSD and Windows variants are in ``docs/formats.md``. :func:`list_members` opens the archive
once (:func:`~cuda_fatbin._files.open_input`, judged by the ``fstat`` of what was opened) and reads each
member header once: a member takes at least 60 bytes, so an archive of ``n`` bytes lists at most
``n / 60`` members. Symbol tables (``/``, ``/SYM64/``, ``__.SYMDEF``...) and the GNU long-name table
(``//``, read once, at most :data:`MAX_NAMES` bytes) are not members. Names are looked up in at most
:data:`MAX_NAME` bytes each, so no name costs more than that whatever the table holds. An archive that
does not parse is an :class:`~cuda_fatbin._archive.ArchiveError` naming the offset: the structure
chains each member to the next, so nothing after a bad header can be found. Thin archives
(``!<thin>\\n``), whose members live in other files, are refused.

Members are read as :mod:`cuda_fatbin._archive` reads a wheel's (``Member``, at most ``MAX_MEMBER``
bytes); they are named as cuobjdump names them (``ka.o`` in ``libk.a``).
"""

from __future__ import annotations

import dataclasses
import errno
import os
import re

from ._archive import MAX_MEMBER, SEPARATOR, ArchiveError, Member, _identity, _open, _pread

__all__ = ["AR_MAGIC", "MAX_NAME", "MAX_NAMES", "THIN_MAGIC", "list_members", "read_member"]

AR_MAGIC = b"!<arch>\n"
THIN_MAGIC = b"!<thin>\n"
#: Bytes of a name read at most (real names are under 1 KiB; a longer one is cut there).
MAX_NAME = 4096
#: The largest GNU long-name table read (``//``).
MAX_NAMES = 64 << 20
#: Why a thin archive is not read (scan and inspect say the same).
THIN = "a thin archive: its members are other files, named by path; scan those files instead"
_HEADER = 60
_SPECIAL = ("/", "/SYM64/", "/<ECSYMBOLS>/", "__.SYMDEF", "__.SYMDEF SORTED", "__.SYMDEF_64", "__.SYMDEF_64 SORTED")


def _decimal(field: bytes, what: str, at: int, path: str) -> int:
    text = field.rstrip(b" ")
    if not text.isdigit():
        raise ArchiveError(errno.EINVAL, f"{what} {field!r} of the member header at {at} is not a decimal number", path)
    return int(text)


def list_members(path: str, *, follow: bool = True, head: int = 0) -> list[Member]:
    """Every member of the ar archive at ``path`` (symbol and name tables left out), in archive order.

    Parameters
    ----------
    path : str
        The archive. With ``follow=False`` a symlink there is refused (``ELOOP``).
    head : int, optional
        Also read the first ``head`` bytes of each member (``Member.head``).

    Returns
    -------
    list of Member
        ``container`` is ``"ar"``; ``method`` is 0 (stored), ``crc`` 0 (ar records none).

    Raises
    ------
    ArchiveError
        Not an ar archive, a thin archive, a header that is not one, a member or name running past the end.
    OSError
        It cannot be opened.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "libk.a"
    >>> header = b"k.o/".ljust(16) + b"0".ljust(12) + b"0".ljust(6) * 2 + b"644".ljust(8) + b"4".ljust(10) + b"`\\n"
    >>> _ = path.write_bytes(b"!<arch>\\n" + header + b"\\x7fELF")
    >>> [(m.name, m.size) for m in list_members(str(path))]
    [('k.o', 4)]
    >>> read_member(str(path), list_members(str(path))[0])
    b'\\x7fELF'
    """
    fd, st = _open(path, follow)
    try:
        magic = os.pread(fd, 8, 0)
        if magic == THIN_MAGIC:
            raise ArchiveError(errno.EINVAL, THIN, path)
        if magic != AR_MAGIC:
            raise ArchiveError(errno.EINVAL, "not an ar archive (no !<arch> magic)", path)
        members = _list(fd, st.st_size, path, _identity(st))
        if head:
            members = [dataclasses.replace(m, head=_pread(fd, min(head, m.size), m.data_offset, path)) for m in members]
        return members
    finally:
        os.close(fd)


def _list(fd: int, size: int, path: str, identity: tuple[int, int, int, int]) -> list[Member]:
    out = []
    names: tuple[int, int] | None = None  # the GNU long-name table: (offset, size)
    names_data = b""
    pos = 8
    while pos < size:
        if pos + _HEADER > size:
            if not _pread(fd, size - pos, pos, path).strip(b"\n"):
                break  # padding at the end (a newline after an odd-sized last member, written twice by some tools)
            raise ArchiveError(errno.EINVAL, f"a member header at {pos} is cut short by the end of the file", path)
        header = _pread(fd, _HEADER, pos, path)
        if header[58:60] != b"`\n":
            raise ArchiveError(errno.EINVAL, f"no member header at {pos} (its end marker is not `\\n)", path)
        length = _decimal(header[48:58], "size", pos, path)
        data = pos + _HEADER
        if data + length > size:
            raise ArchiveError(errno.EINVAL, f"the member at {pos} ({length} bytes) runs past the end of the file",
                               path)  # fmt: skip
        raw = header[:16].rstrip(b" ")
        nxt = data + length + (length & 1)
        if raw == b"//":
            if length > MAX_NAMES:
                raise ArchiveError(errno.EINVAL, f"a long-name table of {length} bytes (over {MAX_NAMES}); not read",
                                   path)  # fmt: skip
            names, names_data = (data, length), _pread(fd, length, data, path)
            pos = nxt
            continue
        name, skip = _member_name(fd, raw, data, length, names, names_data, pos, path)
        if raw in (b"/", b"/SYM64/", b"/<ECSYMBOLS>/") or name in _SPECIAL:  # a symbol table
            pos = nxt
            continue
        if not name.rstrip("/"):  # no tool writes one: a member passed over unread otherwise
            raise ArchiveError(errno.EINVAL, f"the member at {pos} has an empty name", path)
        out.append(Member(name, length - skip, length - skip, 0, 0, data + skip, identity, container="ar"))
        pos = nxt
    return out


def _member_name(
    fd: int, raw: bytes, data: int, length: int, names: tuple[int, int] | None, table: bytes, at: int, path: str
) -> tuple[str, int]:
    """A member's name and how many of its data bytes the name takes (BSD ``#1/N`` names precede the data)."""
    if raw.startswith(b"#1/"):
        n = _decimal(raw[3:], "BSD name length", at, path)
        if n > length or n > MAX_NAME:
            raise ArchiveError(errno.EINVAL, f"a BSD name of {n} bytes in a {length}-byte member at {at}", path)
        return _pread(fd, n, data, path).rstrip(b"\0").decode("utf-8", "surrogateescape"), n
    if raw.startswith(b"/") and raw[1:].isdigit():  # GNU: an offset in the long-name table
        offset = int(raw[1:])
        if names is None or offset >= len(table):
            raise ArchiveError(errno.EINVAL, f"the member at {at} names offset {offset} of a long-name table "
                               f"of {len(table)} bytes", path)  # fmt: skip
        name = re.split(b"/\n|\n|\0", table[offset : offset + MAX_NAME], maxsplit=1)[0]  # GNU "/\n", Windows NUL
        return name.decode("utf-8", "surrogateescape"), 0
    if raw in (b"/", b"/SYM64/", b"/<ECSYMBOLS>/") or raw.startswith(b"__.SYMDEF"):
        return raw.decode("latin-1"), 0
    return raw.removesuffix(b"/").decode("utf-8", "surrogateescape"), 0


def read_member(path: str, member: Member, limit: int | None = None, *, follow: bool = True) -> bytes:
    """The bytes of ``member`` of the ar archive at ``path`` (all, or the first ``limit``), at most ``MAX_MEMBER``.

    Raises
    ------
    ArchiveError
        The archive changed since it was listed, or the member is over :data:`~cuda_fatbin._archive.MAX_MEMBER`.
    """
    where = f"{path}{SEPARATOR}{member.name}"
    if member.error:
        raise ArchiveError(errno.EINVAL, member.error, where)
    want = member.size if limit is None else min(limit, member.size)
    if want > MAX_MEMBER:
        raise ArchiveError(errno.EFBIG, f"{member.size} bytes, over the {MAX_MEMBER}-byte limit for a member", where)
    fd, st = _open(path, follow)
    try:
        if _identity(st) != member.identity:
            raise ArchiveError(errno.EIO, "the archive changed since it was listed", path)
        return _pread(fd, want, member.data_offset, where)
    finally:
        os.close(fd)
