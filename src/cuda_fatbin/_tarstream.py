# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Tar streams read in place, once, in bounded work: the one home of tar reading (conda packages, images).

A tar stream is a byte range of an open file (a whole ``.tar.bz2``, a ``.conda``'s stored ``pkg-*.tar.zst``
member, an image layer), uncompressed or compressed with gzip, zstd or bzip2 (told by its first bytes). It is
decompressed as it is read, never extracted to disk, and never read twice: :func:`iter_tar` yields each
member's header, and its data can be read then or not at all. Bounds, each an :class:`ArchiveError` for
the whole stream:

- the bytes decompressed total at most :data:`MAX_RATIO` times the compressed bytes read so far, plus
  1 MiB (a bomb costs what it stores: work linear in the file);
- a pax or GNU long-name header holds at most :data:`MAX_HEADER` bytes, a name at most :data:`MAX_PATH`;
- every header's checksum is checked; a stream cut short is an error, not the end.

Member names are decoded as UTF-8 (``surrogateescape`` for other bytes, shown escaped on a terminal) and
made relative (:func:`clean`): ``./a``, ``/a`` and ``a//b`` are ``a`` and ``a/b``; a name that climbs
out of the archive (``../x``) is an error for that member. Links (symbolic or hard) are never followed.

Reading side: imports nothing of the compile side.
"""

from __future__ import annotations

import errno
import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

from . import _archive
from ._archive import MAX_RATIO, ArchiveError

__all__ = ["MAX_HEADER", "MAX_PATH", "Data", "Entry", "Found", "clean", "iter_tar", "open_stream"]

#: Largest pax extended header or GNU long name read (into memory).
MAX_HEADER = 1 << 20
#: Longest member name (Linux's PATH_MAX).
MAX_PATH = 4096
_SLACK = 1 << 20  # bytes any stream may decompress to beyond MAX_RATIO x its compressed bytes
_CHUNK = 1 << 16
_BLOCK = 512
_ZERO = bytes(_BLOCK)
_MAGICS = ((b"\x1f\x8b", "gzip"), (b"\x28\xb5\x2f\xfd", "zstd"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"))


@dataclass
class Found:
    """One member a reader yields: its bytes, or why it could not be read.

    Attributes
    ----------
    name : str
        Its path inside the container (``lib/libk.so``, ``usr/lib/x.so``).
    data : bytes or None
        Its bytes, when read.
    error : str or None
        Why it could not be read (or why the container or a layer could not).
    layer : dict or None
        For an image: ``{"index": 0-based from the bottom, "id": digest or path of the layer}``.
    """

    name: str
    data: bytes | None = None
    error: str | None = None
    layer: dict[str, int | str] | None = None


class _Range:
    """``size`` bytes of the open file ``fd`` from ``offset``, read with ``pread`` (a file object)."""

    def __init__(self, fd: int, offset: int, size: int, where: str) -> None:
        self.fd, self.pos, self.left, self.where, self.consumed = fd, offset, size, where, 0

    def read(self, n: int = -1) -> bytes:
        want = self.left if n < 0 else min(n, self.left)
        data = os.pread(self.fd, want, self.pos) if want else b""
        if len(data) != want:
            raise ArchiveError(errno.EIO, "the file ended early (changed while read?)", self.where)
        self.pos += want
        self.left -= want
        self.consumed += want
        return data

    def readable(self) -> bool:
        return True


class _Bounded:
    """Decompressed bytes of a :class:`_Range`, at most ``MAX_RATIO`` x its bytes read so far + 1 MiB."""

    def __init__(self, raw: _Range, inner: object, compression: str) -> None:
        self.raw, self.inner, self.compression, self.out = raw, inner, compression, 0

    def read(self, n: int) -> bytes:
        try:
            data: bytes = self.inner.read(n)  # type: ignore[attr-defined]
        except ArchiveError:
            raise
        except (OSError, EOFError, ValueError, MemoryError, zlib.error) as e:  # BadGzipFile is an OSError
            raise ArchiveError(errno.EIO, f"corrupt {self.compression} stream: {e}", self.raw.where) from None
        except Exception as e:  # zstandard.ZstdError derives from Exception only
            if type(e).__name__ != "ZstdError":
                raise
            raise ArchiveError(errno.EIO, f"corrupt zstd stream: {e}", self.raw.where) from None
        self.out += len(data)
        if self.out > MAX_RATIO * self.raw.consumed + _SLACK:
            raise ArchiveError(errno.EFBIG, f"decompresses to over {MAX_RATIO}x its {self.compression} bytes; "
                               "a bomb? not read further", self.raw.where)  # fmt: skip
        return data

    def skip(self, n: int) -> None:
        """Pass over ``n`` bytes: seeks where the stream is not compressed, else decompresses them."""
        if self.inner is self.raw:
            if n > self.raw.left:
                raise ArchiveError(errno.EIO, "the tar stream ends inside a member (cut short?)", self.raw.where)
            self.raw.pos += n
            self.raw.left -= n
            self.raw.consumed += n
            return
        while n > 0:
            chunk = self.read(min(n, _CHUNK))
            if not chunk:
                raise ArchiveError(errno.EIO, "the tar stream ends inside a member (cut short?)", self.raw.where)
            n -= len(chunk)


def open_stream(fd: int, offset: int, size: int, where: str) -> _Bounded:
    """A reader (``.read(n)``, at most ``n`` bytes, ``b""`` at the end) of the byte range, decompressed.

    The compression is told by the first bytes: gzip, zstd, bzip2, or none (a plain tar). xz is refused.
    """
    head = os.pread(fd, 6, offset)[: max(size, 0)]
    compression = next((c for magic, c in _MAGICS if head.startswith(magic)), "none")
    raw = _Range(fd, offset, size, where)
    inner: object
    if compression == "gzip":
        import gzip

        inner = gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[call-overload]
    elif compression == "bzip2":
        import bz2

        inner = bz2.BZ2File(raw)  # type: ignore[call-overload]
    elif compression == "zstd":
        import zstandard

        # the default window limit (128 MiB) holds: a frame asking for more is an error, not an allocation
        inner = zstandard.ZstdDecompressor().stream_reader(raw, read_size=_CHUNK, read_across_frames=True)  # type: ignore[arg-type]
    elif compression == "xz":
        raise ArchiveError(errno.EINVAL, "an xz-compressed stream; not read", where)
    else:
        inner = raw
    return _Bounded(raw, inner, compression)


def _read_exactly(stream: _Bounded, n: int) -> bytes:
    parts, got = [], 0
    while got < n:
        chunk = stream.read(min(n - got, _CHUNK))
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def clean(name: str) -> str | None:
    """``name`` relative to the archive's root (``./a//b`` -> ``a/b``), or ``None`` when it climbs out of it.

    Examples
    --------
    >>> clean("./usr//lib/x.so"), clean("/opt/a/../b"), clean("../etc/passwd")
    ('usr/lib/x.so', 'opt/b', None)
    """
    parts: list[str] = []
    for p in name.split("/"):
        if p == "..":
            if not parts:
                return None
            parts.pop()
        elif p not in ("", "."):
            parts.append(p)
    return "/".join(parts)


@dataclass
class Entry:
    """One tar member's header: ``kind`` is ``file``, ``dir``, ``symlink``, ``hardlink`` or ``other``."""

    name: str
    kind: str
    size: int


def _number(field: bytes, what: str, where: str) -> int:
    if field[:1] in (b"\x80", b"\xff"):  # GNU base-256
        value = int.from_bytes(field[1:], "big")
        return -value if field[:1] == b"\xff" else value
    text = field.split(b"\0", 1)[0].strip(b" ")
    try:
        return int(text, 8) if text else 0
    except ValueError:
        raise ArchiveError(errno.EINVAL, f"a tar header whose {what} is not a number", where) from None


def _pax(body: bytes, where: str) -> dict[str, str]:
    """Records ``"LEN key=value\\n"`` of a pax extended header."""
    out, pos = {}, 0
    while pos < len(body) and body[pos:pos + 1] != b"\0":  # fmt: skip
        space = body.find(b" ", pos, pos + 24)
        try:
            length = int(body[pos:space]) if space > pos else 0
        except ValueError:
            length = 0
        record = body[space + 1 : pos + length]
        if length <= 0 or pos + length > len(body) or not record.endswith(b"\n") or b"=" not in record:
            raise ArchiveError(errno.EINVAL, "a malformed pax header record", where)
        key, value = record[:-1].split(b"=", 1)
        out[key.decode("utf-8", "surrogateescape")] = value.decode("utf-8", "surrogateescape")
        pos += length
    return out


_KINDS = {b"0": "file", b"\0": "file", b"7": "file", b"5": "dir", b"2": "symlink", b"1": "hardlink"}


def _header(block: bytes, where: str) -> tuple[bytes, int, bytes]:
    """``(name, size, typeflag)`` of a checked 512-byte header."""
    stored = _number(block[148:156], "checksum", where)
    unsigned = sum(block[:148]) + 256 + sum(block[156:])
    signed = unsigned - 256 * sum(b > 127 for b in block[:148] + block[156:])  # old tars summed signed bytes
    if stored not in (unsigned, signed):
        raise ArchiveError(errno.EINVAL, "a tar header with a wrong checksum (not a tar, or corrupt)", where)
    name = block[:100].split(b"\0", 1)[0]
    if block[257:262] == b"ustar" and block[345:346] != b"\0":
        name = block[345:500].split(b"\0", 1)[0] + b"/" + name
    return name, _number(block[124:136], "size", where), block[156:157]


def iter_tar(stream: _Bounded, where: str) -> Iterator[tuple[Entry, Data]]:
    """Each member of the tar ``stream``: its :class:`Entry` and its :class:`Data`.

    The data must be read before the next member is asked for, or not at all (they are then skipped, never
    held). Only a regular file has data; a link's target is never looked at. ``Entry.name`` is as stored
    (see :func:`clean`).

    Raises
    ------
    ArchiveError
        The stream as a whole cannot be read further: a bad header, a bound, a corrupt or cut stream.
    """
    pending = 0
    long_name: bytes | None = None
    pax: dict[str, str] = {}
    while True:
        stream.skip(pending)
        pending = 0
        block = _read_exactly(stream, _BLOCK)
        if not block or block == _ZERO:  # the end (two zero blocks; one, or none, is accepted)
            while stream.inner is not stream.raw and stream.read(_CHUNK):  # the rest checked (gzip's CRC), bounded
                pass
            return
        if len(block) < _BLOCK:
            raise ArchiveError(errno.EIO, "the tar stream ends inside a header (cut short?)", where)
        raw_name, size, flag = _header(block, where)
        if flag in (b"x", b"g", b"L", b"K"):
            if not 0 <= size <= MAX_HEADER:
                raise ArchiveError(errno.EFBIG, f"a tar extended header of {size} bytes (over {MAX_HEADER})", where)
            body = _read_exactly(stream, size)
            stream.skip(-size % _BLOCK)
            if len(body) < size:
                raise ArchiveError(errno.EIO, "the tar stream ends inside a header (cut short?)", where)
            if flag == b"x":
                pax = _pax(body, where)
            elif flag == b"L":
                long_name = body.split(b"\0", 1)[0]
            continue
        name = long_name if long_name is not None else raw_name
        text = pax.get("path", name.decode("utf-8", "surrogateescape"))
        if "size" in pax:
            size = int(pax["size"]) if re.fullmatch(r"[0-9]{1,20}", pax["size"]) else -1  # decimal, unlike the header
        long_name, pax = None, {}
        if size < 0:
            raise ArchiveError(errno.EINVAL, "a tar header with a negative size", where)
        kind = _KINDS.get(flag, "other")
        pending = size + (-size % _BLOCK) if kind in ("file", "other") else 0
        if len(text.encode("utf-8", "surrogateescape")) > MAX_PATH:
            text, kind = text[:MAX_PATH], "long"
        data = Data(stream, size if kind == "file" else 0, where)
        yield Entry(text, kind, size), data
        pending -= data.taken


class Data:
    """The data of the current member of :func:`iter_tar`: its first bytes, then (if wanted) all of them."""

    def __init__(self, stream: _Bounded, size: int, where: str) -> None:
        self._stream, self.size, self._where, self._head, self.taken = stream, size, where, b"", 0

    def _take(self, n: int) -> bytes:
        data = _read_exactly(self._stream, n)
        self.taken += len(data)
        if len(data) < n:
            raise ArchiveError(errno.EIO, "the tar stream ends inside a member (cut short?)", self._where)
        return data

    def head(self, n: int) -> bytes:
        """Its first ``n`` bytes (or all, when fewer)."""
        if len(self._head) < min(n, self.size):
            self._head += self._take(min(n, self.size) - len(self._head))
        return self._head[:n]

    def all(self, limit: int | None = None) -> bytes:
        """All its bytes; over ``limit`` (default :data:`MAX_MEMBER`) an :class:`ArchiveError`, nothing more read."""
        limit = _archive.MAX_MEMBER if limit is None else limit
        if self.size > limit:
            raise ArchiveError(errno.EFBIG, f"{self.size} bytes, over the {limit}-byte limit for a member; not read",
                               self._where)  # fmt: skip
        return self.head(self.size) if self.taken < self.size else self._head
