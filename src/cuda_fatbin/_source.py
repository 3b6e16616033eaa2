# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The bytes of a source and how to read them safely: the reading layer under :mod:`._container` and :mod:`._reader`.

A source is bytes-like data, a path, a named FIFO or standard input. Files up to 1 MiB are read; larger
ones are memory-mapped, and the long reads over them (the search for fatbins stored as data, the PTX
test, padding runs) go through ``os.pread`` in windows of at most 32 MiB that skip holes, so memory
stays bounded and a file that shrinks meanwhile is an error, never SIGBUS. Pipes and standard input are
read to at most :data:`MAX_STREAM` bytes; a FIFO that stays silent is given up after :data:`FIFO_WAIT` s.
``docs/security.md`` lists these bounds with their tests.
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import re
import stat
import sys
import weakref

from ._errors import Error

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time: benchmarks/bench_cli.py)
if TYPE_CHECKING:
    from typing import BinaryIO, TypeAlias

    from ._elf import Buffer

    #: What the reading functions accept: bytes-like data, a path, or ``"-"`` for standard input.
    Source: TypeAlias = "Buffer | str | bytes | os.PathLike[str] | os.PathLike[bytes]"

#: Bytes read at most from a pipe or standard input (which cannot be memory-mapped): 1 GiB.
MAX_STREAM = 1 << 30
#: Seconds a named FIFO given as a path may stay silent (before its first bytes, or between two reads) before
#: reading it fails: a writer may never come, or stop without closing it.
FIFO_WAIT = 30.0
_SMALL_FILE = 1 << 20  # files up to this size are read, not mapped: a file that shrinks cannot fault
# padding between fatbins in a section, as cuobjdump skips it: 8-byte words whose magic field is zero;
# read this many bytes at a time (a regex over the run held 16 bytes of match state per byte: 2.1 GB for 128 MiB)
_PADDING_CHUNK = 1 << 20
_RELEASE = 32 << 20  # the embedded-fatbin search lets go of what it has searched every 32 MiB
# a search reads 64 KiB first, then 16 times more per window up to _WINDOW: a magic found near costs a little read;
# each window is read into the same buffer, which stays small enough to stay in the CPU's cache (windows of 32 MiB
# cost libcurand's search 15 ms more CPU of page faults and cache misses than windows of 1 MiB)
_WINDOW = 1 << 20
_FIRST_WINDOW = 64 << 10
#: the compiled pattern of each string searched (a few: the fatbin magic, PTX directives); re's literal search
#: reads 1.5-3x faster than bytearray.find for a 4-byte string (and never slower on the data tried: zeros, runs of
#: its first bytes, random bytes, libraries)
_PATTERNS: dict[bytes, re.Pattern[bytes]] = {}


def _pattern(sub: bytes) -> re.Pattern[bytes]:
    pattern = _PATTERNS.get(sub)
    if pattern is None:
        if len(_PATTERNS) >= 64:
            _PATTERNS.clear()
        pattern = _PATTERNS[sub] = re.compile(re.escape(sub))
    return pattern


class FatbinFormatError(Error, ValueError):
    """Malformed fat binary data: truncated, wrong magic, or a size or offset out of bounds.

    Also raised for sources that are not data at all (a directory, a device file) and for a file
    that shrinks while it is read.

    Attributes
    ----------
    message : str
        What is wrong, without the offset.
    offset : int
        File offset of the field or data that is wrong.

    Examples
    --------
    >>> from cuda_fatbin import FatbinFormatError, read_fatbin
    >>> try:
    ...     read_fatbin(b"\\x50\\xed\\x55\\xba\\x01\\x00\\x10\\x00" + (1000).to_bytes(8, "little"))
    ... except FatbinFormatError as e:
    ...     print(e.offset, "|", e.message)
    8 | fatbin declares 1000 bytes of entries but only 0 follow
    """

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (at offset {offset:#x})")
        self.message = message
        self.offset = offset


class _Data:
    """The bytes of a source and how to read them safely: a view, a fast find, a guard against shrinking.

    A mapped file also keeps a descriptor (``fd``): the long reads (the embedded search, the PTX test)
    go through ``os.pread`` in windows of at most 32 MiB that skip holes (``SEEK_DATA``), never through
    the map, so they hold one window in memory and a file that shrinks meanwhile gives a short read
    (an error), not SIGBUS.
    """

    def __init__(
        self,
        view: memoryview,
        raw: Buffer | None = None,
        mapped: mmap.mmap | None = None,
        name: str = "the data",
        fd: int | None = None,
    ) -> None:
        self.view = view
        self._raw = raw if raw is not None else view
        self._mapped = mapped
        self.name = name
        self.headers = 0  # entry and member headers parsed: the work the embedded search charges
        self.fd = fd
        self._win = bytearray()  # the window read last (its first _win_len bytes), and its file offset
        self._win_len = 0
        self._win_at = 0
        self._win_data_end = 0  # where the data run holding the window ends (a hole or the end of the file)
        if fd is not None:
            weakref.finalize(self, os.close, fd)

    def __len__(self) -> int:
        return len(self.view)

    def find(self, sub: bytes, start: int, end: int) -> int:
        """The first offset of ``sub`` (no zero byte in it) in [start, end), or -1."""
        if self.fd is not None:
            return self._find_read(sub, start, end)
        found = _pattern(sub).search(self._raw, start, end)
        return -1 if found is None else found.start()

    def _find_read(self, sub: bytes, start: int, end: int) -> int:
        search = _pattern(sub).search
        pos = start
        size = _FIRST_WINDOW  # what a search reads grows with how far it went: x16 per window, up to _WINDOW
        while pos < end:
            if not self._win_at <= pos < self._win_at + self._win_len:
                pos = self._load(pos, end, size)
                size = min(size * 16, _WINDOW)
                if pos < 0:
                    return -1
            win_end = self._win_at + self._win_len
            found = search(self._win, pos - self._win_at, min(end, win_end) - self._win_at)
            if found is not None:
                return self._win_at + found.start()
            if win_end >= end:
                return -1
            # the data run goes on: search again from where ``sub`` may straddle the window's end (never before
            # pos: a window kept from an earlier call may begin before it); a hole follows: it reads as zeros,
            # which ``sub`` holds none of. The window is read again even where pos is in this one: an earlier
            # call's end may have cut it short
            pos = self._load(max(pos, win_end - len(sub) + 1) if win_end < self._win_data_end else win_end, end, size)
            size = min(size * 16, _WINDOW)
            if pos < 0:
                return -1
        return -1

    def _load(self, pos: int, end: int, size: int) -> int:
        """Read the window (``size`` bytes at most) at the first data at or after ``pos`` (below ``end``); its
        offset, or -1."""
        assert self.fd is not None
        data_end = len(self)  # where holes cannot be found, all is data to the end of the file
        try:
            pos = os.lseek(self.fd, pos, os.SEEK_DATA)
            data_end = os.lseek(self.fd, pos, os.SEEK_HOLE)
        except AttributeError:  # no SEEK_DATA on this platform: all is data
            pass
        except OSError as e:  # ENXIO: no data at or after pos (or the file is now shorter); EINVAL: unsupported
            if e.errno == errno.ENXIO:
                self.check(end, pos)
                return -1
        if pos >= end:
            return -1
        want = min(size, _WINDOW, max(data_end, pos + 1) - pos, end - pos)
        if len(self._win) < want:  # one buffer, read into again and again: a fresh 32 MiB each time cost more
            self._win = bytearray()  # page faults (0.1 s for 280 MB) than the search; never two at once
            self._win = bytearray(want)
        self._win_len = 0
        got = _pread_into(self.fd, self._win, want, pos)
        self._win_at, self._win_len, self._win_data_end = pos, got, data_end
        if got < want:
            self.check(pos + want, pos)
            raise FatbinFormatError(f"{self.name} shrank while it was being read", pos + got)
        return pos

    def read(self, start: int, end: int) -> bytes:
        """The bytes [start, end), read with ``os.pread`` from a mapped file (no SIGBUS), else sliced."""
        if self.fd is None:
            return bytes(self.view[start:end])
        out = os.pread(self.fd, end - start, start)
        if len(out) < end - start:
            raise FatbinFormatError(f"{self.name} shrank while it was being read", start + len(out))
        return out

    def padding_end(self, pos: int, end: int) -> int:
        """Where the padding that starts at ``pos`` ends: the first 8-byte word at ``pos + 8k`` that lies below
        ``end`` and whose first 4 bytes are not all zero, or where no whole word is left.

        Read 64 bytes first, then 16 times more each time, up to :data:`_PADDING_CHUNK` bytes at a time
        (through ``pread`` for a mapped file, whose holes, zeros, are padding and skipped with ``SEEK_DATA``):
        the usual run of a few words costs a few words, a long one linear work, memory bounded, a sparse run
        costing what the file holds.
        """
        chunk_size = 64
        while end - pos >= 8:
            if self.fd is not None:
                data = self._data_at(pos, end)
                pos += (min(data, end) - pos) // 8 * 8  # whole words of a hole: zeros
                if end - pos < 8:
                    break
            size = min(chunk_size, _PADDING_CHUNK, (end - pos) // 8 * 8)
            chunk_size *= 16
            chunk = self.read(pos, pos + size)
            heads = memoryview(chunk).cast("I")[::2].tobytes()  # the first 4 bytes of each word
            rest = heads.lstrip(b"\0")
            if rest:
                return pos + (len(heads) - len(rest)) // 4 * 8
            pos += size
        return pos

    def _data_at(self, pos: int, end: int) -> int:
        """The first offset at or after ``pos`` that is not in a hole of a mapped file (``end`` when none is)."""
        assert self.fd is not None
        try:
            return os.lseek(self.fd, pos, os.SEEK_DATA)
        except AttributeError:  # no SEEK_DATA on this platform: all is data
            return pos
        except OSError as e:  # ENXIO: only a hole after pos (or the file is now shorter); EINVAL: unsupported
            if e.errno == errno.ENXIO:
                self.check(end, pos)
                return end
            return pos

    def release(self, start: int, end: int) -> None:
        """Drop the pages of [start, end) of a mapped file from this process (they stay in the page cache)."""
        advice = getattr(mmap, "MADV_DONTNEED", None)
        if self._mapped is not None and advice is not None:
            start -= start % mmap.PAGESIZE
            with contextlib.suppress(OSError, ValueError):
                self._mapped.madvise(advice, start, max(0, min(end, len(self)) - start))

    def check(self, end: int, offset: int) -> None:
        """Raise if a mapped file is now shorter than ``end`` (reading the map would raise SIGBUS)."""
        if self._mapped is not None and self._mapped.size() < end:
            raise FatbinFormatError(
                f"{self.name} shrank to {self._mapped.size()} bytes while it was being read", offset
            )


def _pread_into(fd: int, buf: bytearray, size: int, offset: int) -> int:
    """``os.pread(fd, size, offset)`` into the start of ``buf``: the count of bytes read."""
    if hasattr(os, "preadv"):
        return os.preadv(fd, [memoryview(buf)[:size]], offset)
    data = os.pread(fd, size, offset)
    buf[: len(data)] = data
    return len(data)


def _open(source: Source) -> _Data:
    """A :class:`_Data` over ``source``: bytes-like data, a path, ``"-"`` (standard input) or a pipe."""
    if isinstance(source, (str, os.PathLike)):
        return _open_path(os.fspath(source))
    try:
        view = memoryview(source)
    except TypeError:
        raise TypeError(f"expected bytes-like data or a path; got {type(source).__name__}") from None
    view = view.cast("B")  # any format and shape, as flat unsigned bytes
    raw = view.obj if isinstance(view.obj, (bytes, bytearray, mmap.mmap)) and len(view.obj) == len(view) else None
    return _Data(view, raw)


def _open_path(path: str | bytes) -> _Data:
    if path == "-" or path == b"-":
        stream = getattr(sys.stdin, "buffer", None)  # None: started with standard input closed (`<&-`)
        if stream is None:
            raise OSError(errno.EBADF, "standard input is closed", "-")
        return _read_stream(stream, "standard input")
    from ._files import open_input

    shown = os.fsdecode(path)
    try:
        fd, st = open_input(path)  # never blocks: a FIFO opens at once instead of waiting for a writer
    except OSError as e:
        raise OSError(e.errno, e.strerror, shown) from None  # as open() says it: the path is the filename
    if stat.S_ISDIR(st.st_mode):
        os.close(fd)
        raise FatbinFormatError(f"{shown!r} is not a regular file, a pipe or standard input", 0)
    f = os.fdopen(fd, "rb")  # closed below; the map keeps its own descriptor
    with f:
        if stat.S_ISFIFO(st.st_mode):  # (a socket cannot be opened: open_input raises ENXIO)
            return _read_fifo(fd, shown)
        if not stat.S_ISREG(st.st_mode):
            raise FatbinFormatError(f"{shown!r} is not a regular file, a pipe or standard input", 0)
        if st.st_size <= _SMALL_FILE:
            data = f.read(_SMALL_FILE + 1)
            if len(data) > _SMALL_FILE:  # it grew after it was opened: what was read is not all of it
                raise FatbinFormatError(
                    f"{shown!r} grew while it was read; read it again once it is written", len(data)
                )
            return _Data(memoryview(data), data, name=repr(shown))
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        dup = os.dup(f.fileno()) if hasattr(os, "pread") else None  # Windows has no pread: the map is searched
        return _Data(memoryview(mapped), mapped, mapped, repr(shown), dup)


def _read_fifo(fd: int, shown: str) -> _Data:
    """A named FIFO, opened without waiting, read like cat, to its end (every writer closed); but no wait for
    the next bytes lasts over ``FIFO_WAIT`` s (a writer may never come, or stop without closing), and no more
    than ``MAX_STREAM`` bytes are read."""
    import select

    poller = select.poll()
    poller.register(fd, select.POLLIN)
    chunks: list[bytes] = []
    total = 0
    while True:
        if not poller.poll(int(FIFO_WAIT * 1000)):
            what = "nothing was written to" if not total else f"sent {total} bytes, then nothing more,"
            raise FatbinFormatError(f"{shown!r} is a FIFO that {what} within {FIFO_WAIT:g} s", total)
        try:
            chunk = os.read(fd, min(1 << 20, MAX_STREAM + 1 - total))
        except BlockingIOError:  # woken, but another reader took the bytes
            continue
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > MAX_STREAM:
            raise FatbinFormatError(
                f"{shown!r} holds over {MAX_STREAM} bytes; save it to a file, which can be mapped, and read that",
                MAX_STREAM,
            )
    data = b"".join(chunks)
    return _Data(memoryview(data), data, name=repr(shown))


def _read_stream(stream: BinaryIO, name: str) -> _Data:
    """Standard input to its end, as it comes (``read_bounded``): ``read(MAX_STREAM + 1)`` allocated 1 GiB first."""
    from ._files import read_bounded

    data = read_bounded(getattr(stream, "read1", stream.read), MAX_STREAM)  # read1: no wait for a full chunk
    if len(data) > MAX_STREAM:
        raise FatbinFormatError(
            f"{name} holds over {MAX_STREAM} bytes; save it to a file, which can be mapped, and read that", MAX_STREAM
        )
    return _Data(memoryview(data), data, name=name)


_IDENT = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"
_BLANK = b" \t"
_CHUNK = 4096


def _run(src: _Data, pos: int, chars: bytes, backwards: bool = False, lo: int = 0, hi: int | None = None) -> int:
    """Where the run of bytes from ``chars`` that starts (or, ``backwards``, ends) at ``pos`` stops, in [lo, hi)."""
    limit = lo if backwards else len(src) if hi is None else hi
    while pos != limit:
        lo, hi = (max(limit, pos - _CHUNK), pos) if backwards else (pos, min(limit, pos + _CHUNK))
        chunk = src.read(lo, hi)
        rest = chunk.rstrip(chars) if backwards else chunk.lstrip(chars)
        if rest:
            return lo + len(rest) if backwards else hi - len(rest)
        pos = lo if backwards else hi
    return pos


def _ptx_line(src: _Data, directive: bytes, tail: bytes, lo: int = 0, hi: int | None = None) -> bytes | None:
    """The first line of a mapped file (of its bytes [lo, hi)) that is blanks, ``directive``, blanks and a run
    of ``tail`` bytes.

    Returned without its leading blanks (a line as ``_detect``'s PTX patterns read it), or ``None``.
    Each occurrence of ``directive`` is found by the windowed search; the blanks before it and the
    blanks and ``tail`` run after it are read in 4 KiB chunks. Those runs of different occurrences do
    not overlap (by more than a byte), so the work is linear in the file and no run is held whole
    unless it is the answer.
    """
    hi = len(src) if hi is None else hi
    pos = lo
    while True:
        at = src.find(directive, pos, hi)
        if at < 0:
            return None
        pos = at + 1
        line_start = _run(src, at, _BLANK, True, lo, hi)
        if line_start > lo and src.read(line_start - 1, line_start) != b"\n":
            continue
        blanks_end = _run(src, at + len(directive), _BLANK, False, lo, hi)
        if blanks_end == at + len(directive):
            continue
        end = _run(src, blanks_end, tail, False, lo, hi)
        if end > blanks_end:
            return src.read(at, end)
