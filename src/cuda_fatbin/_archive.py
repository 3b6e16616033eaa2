# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""ZIP archives (wheels) read in place, in bounded linear work: the one home of archive reading.

:func:`list_members` opens an archive once (:func:`~cuda_fatbin._files.open_input`, judged by the
``fstat`` of what was opened), finds its end record, parses the central directory once and reads each
member's 30-byte local header once. Work and memory are linear in the archive's size: a central
directory record takes at least 46 bytes and a member's data must lie inside the file, so an archive of
``n`` bytes lists at most ``n / 46`` members. Every member that cannot be read is a
:class:`Member` with an ``error`` (never an exception that ends the listing):

- compression other than stored (0) or deflate (8), the only ones wheels use; encrypted members;
- data outside the file, or members whose data overlap (many directory records naming one member);
- a declared size over :data:`MAX_MEMBER`, or over :data:`MAX_RATIO` times the compressed size.

:func:`read_member` reads one member through a bounded stream: at most its compressed size is read,
decompression stops one byte past its declared size, and the CRC-32 is checked; so a member costs at
most ``MAX_RATIO`` times its compressed size in memory, and a zip bomb costs what it stores. Member
names are decoded as the ZIP format says (UTF-8 when flagged, code page 437 otherwise); bytes that are
not UTF-8 are kept as ``surrogateescape`` code points, shown escaped on a terminal.

Reading side: imports nothing of the compile side.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import struct
import zlib
from dataclasses import dataclass

from ._errors import Error
from ._files import describe, is_regular, open_input
from ._reader import MAX_EXPANSION, MAX_STREAM

__all__ = ["MAX_MEMBER", "MAX_RATIO", "SEPARATOR", "ArchiveError", "Member", "list_members", "read_member"]

#: Largest member read (into memory).
MAX_MEMBER = MAX_STREAM
#: A deflated member may declare at most this many times its compressed size (deflate itself reaches 1032).
MAX_RATIO = MAX_EXPANSION
#: Between an archive's path and a member's name in the paths that ``scan`` prints and ``inspect`` reads.
SEPARATOR = "::"
#: Archive suffixes read as archives.
SUFFIXES = (".whl", ".zip")
#: Why a ``.whl``/``.zip`` member of an archive is named, not read (scan and inspect say the same).
NESTED = "an archive inside an archive is not opened; unpack it and scan the folder"

_EOCD = struct.Struct("<4sHHHHIIH")  # end of central directory, 22 bytes
_EOCD64_LOCATOR = struct.Struct("<4sIQI")  # 20 bytes
_EOCD64 = struct.Struct("<4sQHHIIQQQQ")  # 56 bytes
_CDR = struct.Struct("<4sHHHHHHIIIHHHHHII")  # central directory record, 46 bytes
_LOCAL = struct.Struct("<4sHHHHHIIIHH")  # local file header, 30 bytes
_MAX_COMMENT = 0xFFFF
_CHUNK = 1 << 16
_FLAG_ENCRYPTED = 0x1
_FLAG_UTF8 = 0x800
_OVERLAP = "its data overlap another member's (one member named by several directory records?); not read"


class ArchiveError(Error, OSError):
    """An archive that cannot be listed at all (no end record, a directory outside the file...).

    A subclass of ``OSError``: like a file that cannot be read, the archive is one input that failed.
    """


@dataclass(frozen=True)
class Member:
    """One member of an archive, as its central directory record and local header describe it.

    Attributes
    ----------
    name : str
        The member's name (``surrogateescape`` for bytes that are not UTF-8).
    size : int
        Declared uncompressed size.
    compressed : int
        Compressed size.
    method : int
        ZIP compression method (0 stored, 8 deflate).
    crc : int
        Declared CRC-32.
    data_offset : int
        Where the member's data start in the archive (after the local header).
    identity : tuple
        ``(st_dev, st_ino, st_size, st_mtime_ns)`` of the archive when listed: a changed archive is refused.
    error : str or None
        Why the member cannot be read, or ``None``.
    head : bytes
        Its first bytes, when :func:`list_members` was asked for them (``head=``).
    container : str
        The kind of archive that holds it: ``"zip"`` (here) or ``"ar"`` (:mod:`cuda_fatbin._ar`).
    """

    name: str
    size: int
    compressed: int
    method: int
    crc: int
    data_offset: int
    identity: tuple[int, int, int, int]
    error: str | None = None
    head: bytes = b""
    container: str = "zip"

    @property
    def is_dir(self) -> bool:
        """True for a folder entry (a name ending in ``/``)."""
        return self.name.endswith("/")


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _open(path: str, follow: bool) -> tuple[int, os.stat_result]:
    fd, st = open_input(path, follow=follow)
    if not is_regular(st):
        os.close(fd)
        raise ArchiveError(errno.EINVAL, f"{describe(st)}, not a regular file", path)
    return fd, st


def _pread(fd: int, size: int, offset: int, path: str) -> bytes:
    data = os.pread(fd, size, offset)
    if len(data) != size:
        raise ArchiveError(errno.EIO, f"ended at {offset + len(data)} while reading {size} bytes (changed while read?)",
                           path)  # fmt: skip
    return data


def _name(raw: bytes, flags: int) -> str:
    if flags & _FLAG_UTF8:
        return raw.decode("utf-8", "surrogateescape")
    try:
        return raw.decode("ascii")
    except UnicodeDecodeError:
        return raw.decode("cp437")  # what the ZIP format says an unflagged name is


def _zip64_extra(extra: bytes, usize: int, csize: int, offset: int) -> tuple[int, int, int]:
    """Sizes and offset from the ZIP64 extra field (0x0001), for those the record leaves at 0xFFFFFFFF."""
    pos = 0
    while pos + 4 <= len(extra):
        tag, length = struct.unpack_from("<HH", extra, pos)
        body = extra[pos + 4 : pos + 4 + length]
        if tag == 1:
            vals = [struct.unpack_from("<Q", body, i)[0] for i in range(0, len(body) - 7, 8)]
            it = iter(vals)
            if usize == 0xFFFFFFFF:
                usize = next(it, usize)
            if csize == 0xFFFFFFFF:
                csize = next(it, csize)
            if offset == 0xFFFFFFFF:
                offset = next(it, offset)
            break
        pos += 4 + length
    return usize, csize, offset


def _directory(fd: int, size: int, path: str) -> tuple[int, int, int, int]:
    """``(records, directory offset, directory size, shift)`` from the end record (and its ZIP64 form)."""
    tail_size = min(size, _EOCD.size + _MAX_COMMENT)
    tail = _pread(fd, tail_size, size - tail_size, path)
    at = tail.rfind(b"PK\x05\x06")
    while at >= 0 and at + _EOCD.size > len(tail):
        at = tail.rfind(b"PK\x05\x06", 0, at)
    if at < 0:
        raise ArchiveError(errno.EINVAL, "not a ZIP archive (no end of central directory record; truncated?)", path)
    eocd_pos = size - tail_size + at
    _sig, disk, cd_disk, _n_disk, count, cd_size, cd_offset, _clen = _EOCD.unpack_from(tail, at)
    if disk or cd_disk:
        raise ArchiveError(errno.EINVAL, "a multi-disk (split) archive; not read", path)
    end = eocd_pos
    if eocd_pos >= _EOCD64_LOCATOR.size + _EOCD64.size:
        loc = _pread(fd, _EOCD64_LOCATOR.size, eocd_pos - _EOCD64_LOCATOR.size, path)
        if loc[:4] == b"PK\x06\x07":
            _s, _d, rec_off, _t = _EOCD64_LOCATOR.unpack(loc)
            rec_pos = eocd_pos - _EOCD64_LOCATOR.size - _EOCD64.size  # >= 0: the test above
            rec = _pread(fd, _EOCD64.size, rec_pos, path)
            if rec[:4] != b"PK\x06\x06":
                raise ArchiveError(errno.EINVAL, f"no ZIP64 end record where its locator says ({rec_off})", path)
            _s, _rs, _vm, _vn, _dn, _dcd, _nd, count, cd_size, cd_offset = _EOCD64.unpack(rec)
            end = rec_pos
    shift = end - cd_size - cd_offset  # data prepended to the archive (a self-extractor): offsets move with it
    if shift < 0 or cd_size > end:
        raise ArchiveError(errno.EINVAL, f"central directory ({cd_size} bytes at {cd_offset}) lies outside the file "
                           "(truncated?)", path)  # fmt: skip
    if count > cd_size // _CDR.size:
        raise ArchiveError(errno.EINVAL, f"{count} members cannot fit a central directory of {cd_size} bytes", path)
    return count, cd_offset + shift, cd_size, shift


def list_members(path: str, *, follow: bool = True, head: int = 0) -> list[Member]:
    """Every member of the ZIP archive at ``path``, in directory order, each with its error if unreadable.

    Parameters
    ----------
    path : str
        The archive. With ``follow=False`` a symlink there is refused (``ELOOP``).
    head : int, optional
        Also read the first ``head`` bytes of each readable member (``Member.head``); a member whose
        first bytes cannot be read gets an ``error``.

    Returns
    -------
    list of Member

    Raises
    ------
    ArchiveError
        The archive as a whole cannot be listed: not a regular file, no end record, a directory outside
        the file, a record that is not a record.
    OSError
        It cannot be opened (missing, permission denied).

    Examples
    --------
    >>> import io, pathlib, tempfile, zipfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "a.whl"
    >>> with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
    ...     zf.writestr("pkg/data.bin", b"x" * 1000)
    >>> [(m.name, m.size, m.error) for m in list_members(str(path))]
    [('pkg/data.bin', 1000, None)]
    >>> read_member(str(path), list_members(str(path))[0])[:3]
    b'xxx'
    """
    fd, st = _open(path, follow)
    try:
        members = _list(fd, st, path)
        if head:
            for i, m in enumerate(members):
                if m.error is None and not m.is_dir:
                    try:
                        members[i] = dataclasses.replace(m, head=_read(fd, m, head, f"{path}{SEPARATOR}{m.name}"))
                    except ArchiveError as e:
                        members[i] = dataclasses.replace(m, error=e.strerror)
        return members
    finally:
        os.close(fd)


def _list(fd: int, st: os.stat_result, path: str) -> list[Member]:
    size = st.st_size
    count, cd_offset, cd_size, shift = _directory(fd, size, path)
    directory = _pread(fd, cd_size, cd_offset, path)
    identity = _identity(st)
    records: list[tuple[str, int, int, int, int, int, int]] = []  # name, flags, method, crc, csize, usize, offset
    pos = 0
    for i in range(count):
        if pos + _CDR.size > len(directory) or directory[pos : pos + 4] != b"PK\x01\x02":
            where = cd_offset + pos
            raise ArchiveError(errno.EINVAL, f"central directory record {i} of {count} is not one (at {where})", path)
        (_s, _vm, _vn, flags, method, _t, _d, crc, csize, usize, nlen, elen, clen, _disk, _ia, _ea,
         offset) = _CDR.unpack_from(directory, pos)  # fmt: skip
        name_raw = directory[pos + _CDR.size : pos + _CDR.size + nlen]
        extra = directory[pos + _CDR.size + nlen : pos + _CDR.size + nlen + elen]
        pos += _CDR.size + nlen + elen + clen
        if pos > len(directory):
            raise ArchiveError(errno.EINVAL, f"central directory record {i} runs past the directory", path)
        usize, csize, offset = _zip64_extra(extra, usize, csize, offset)
        records.append((_name(name_raw, flags), flags, method, crc, csize, usize, offset + shift))
    # Each member's data: after its local header. Sorted by offset, two members overlap when one starts
    # before the previous one ends: every record naming those bytes is refused (no amplification).
    spans: list[tuple[int, int, int]] = []  # start, end, record index
    members: list[Member | None] = [None] * len(records)
    for i, (name, flags, method, crc, csize, usize, offset) in enumerate(records):
        error = None
        data_offset = 0
        if offset + _LOCAL.size + csize > cd_offset:
            error = f"its data ({csize} bytes at {offset}) run into the central directory or past the file"
        else:
            local = _pread(fd, _LOCAL.size, offset, path)
            if local[:4] != b"PK\x03\x04":
                error = f"no local header at {offset}"
            else:
                nlen, elen = _LOCAL.unpack(local)[-2:]
                data_offset = offset + _LOCAL.size + nlen + elen
                if data_offset + csize > cd_offset:
                    error = f"its data ({csize} bytes at {data_offset}) run into the central directory"
                else:
                    spans.append((offset, data_offset + csize, i))
        if error is None:
            error = _member_problem(flags, method, csize, usize)
        members[i] = Member(name, usize, csize, method, crc, data_offset, identity, error)
    spans.sort()
    reach, owner = -1, -1
    for start, end, i in spans:
        if start < reach:
            for j in (i, owner):
                m = members[j]
                assert m is not None
                if m.error is None:
                    members[j] = dataclasses.replace(m, error=_OVERLAP)
        if end > reach:
            reach, owner = end, i
    return [m for m in members if m is not None]


def _member_problem(flags: int, method: int, csize: int, usize: int) -> str | None:
    if flags & _FLAG_ENCRYPTED:
        return "encrypted; not read"
    if method not in (0, 8):
        return f"compression method {method} (wheels use stored (0) or deflate (8)); not read"
    if method == 0 and csize != usize:
        return f"stored member declares {usize} bytes but stores {csize}"
    if usize > MAX_MEMBER:
        return f"declares {usize} bytes, over the {MAX_MEMBER}-byte limit for a member; not read"
    if method == 8 and usize > MAX_RATIO * csize + 64:
        return (f"declares {usize} bytes from {csize} compressed, over {MAX_RATIO}x (deflate reaches 1032x); "
                "a zip bomb? not read")  # fmt: skip
    return None


def read_member(path: str, member: Member, limit: int | None = None, *, follow: bool = True) -> bytes:
    """The bytes of ``member`` of the archive at ``path`` (all of them, or its first ``limit`` bytes).

    Reads at most the member's compressed size from the archive; decompression stops one byte past the
    declared size (a member that holds more, or less, is an error), and the CRC-32 is checked when the
    whole member is read. The archive must be the one listed (same device, inode, size and mtime).

    Raises
    ------
    ArchiveError
        The member has an ``error``, the archive changed since it was listed, its data are not what the
        directory says (bad deflate stream, wrong size, wrong CRC).
    OSError
        The archive cannot be opened.
    """
    if member.error:
        raise ArchiveError(errno.EINVAL, member.error, f"{path}{SEPARATOR}{member.name}")
    fd, st = _open(path, follow)
    try:
        if _identity(st) != member.identity:
            raise ArchiveError(errno.EIO, "the archive changed since it was listed", path)
        return _read(fd, member, limit, f"{path}{SEPARATOR}{member.name}")
    finally:
        os.close(fd)


def _read(fd: int, m: Member, limit: int | None, where: str) -> bytes:
    want = m.size if limit is None else min(limit, m.size)
    if m.method == 0:
        data = _pread(fd, want, m.data_offset, where)
        if limit is None and zlib.crc32(data) != m.crc:
            raise ArchiveError(errno.EIO, "CRC-32 does not match (corrupt member)", where)
        return data
    inflate = zlib.decompressobj(-15)
    out = bytearray()
    pos, left = m.data_offset, m.compressed
    try:
        while len(out) < want + (limit is None):
            if inflate.unconsumed_tail:
                chunk = inflate.unconsumed_tail
            elif left > 0:
                chunk = _pread(fd, min(_CHUNK, left), pos, where)
                pos += len(chunk)
                left -= len(chunk)
            else:
                break
            out += inflate.decompress(chunk, want + 1 - len(out))
            if inflate.eof:
                break
    except zlib.error as e:
        raise ArchiveError(errno.EIO, f"corrupt deflate stream: {e}", where) from None
    if limit is not None:
        return bytes(out[:want])
    if len(out) != m.size or not inflate.eof:
        got = f"more than {m.size}" if len(out) > m.size else f"{len(out)}"
        raise ArchiveError(errno.EIO, f"inflates to {got} bytes, its directory says {m.size}", where)
    if zlib.crc32(out) != m.crc:
        raise ArchiveError(errno.EIO, "CRC-32 does not match (corrupt member)", where)
    return bytes(out)
