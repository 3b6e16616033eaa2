# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""A pure-Python reader of CUDA fat binaries: standalone, in host ELF files, or stored as data anywhere.

Parses lazily from any buffer: files are memory-mapped (small ones read), headers are read on demand,
payloads are decompressed only in :meth:`FatbinEntry.data`, which checks the size it got against the
header. Every offset and size is checked against the data before use; malformed input raises
:class:`FatbinFormatError` with the file offset. The layout and the bounds this reader guarantees on
untrusted input are described in ``docs/formats.md`` and ``docs/security.md``:

* every fatbin lies inside its file (and its ELF section), every entry inside its fatbin, and the
  members of a concatenated entry tile its member table and lie, without overlap, inside its
  decompressed stream;
* a compressed payload may claim at most :data:`MAX_EXPANSION` times its compressed size, and a
  concatenated entry's stream is decompressed at most once per :class:`Fatbin` object, so all the
  bytes ``data()`` can produce from one file total at most ``MAX_EXPANSION`` x the file size;
* fatbins are parsed once each, whatever the section table says, so listing is linear in the file.

This module does not import the compile side (cuda.core, NVRTC, libnvfatbin).
"""

from __future__ import annotations

import bisect
import collections
import contextlib
import errno
import functools
import mmap
import os
import stat
import struct
import sys
import weakref
from collections.abc import Callable, Iterator, Sequence

from ._arch import Arch
from ._detect import (
    FATBIN_MAGIC,
    LTOIR_MAGIC,
    TEXT_PROBE,
    TILE_IR_MAGIC,
    cubin_arch,
    is_text,
    ltoir_arch,
    ptx_target,
    ptx_version,
)
from ._elf import ELF_MAGIC, EM_CUDA, ElfFormatError, read_header, section_headers, section_namer
from ._errors import Error

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time: benchmarks/bench_cli.py)
if TYPE_CHECKING:
    from typing import Any, BinaryIO, TypeAlias

    from ._elf import Buffer

    #: What the reading functions accept: bytes-like data, a path, or ``"-"`` for standard input.
    Source: TypeAlias = "Buffer | str | bytes | os.PathLike[str] | os.PathLike[bytes]"

__all__ = ["MAX_EXPANSION", "MAX_STREAM", "Fatbin", "FatbinEntry", "FatbinFormatError", "iter_fatbins", "read_fatbin"]

_ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")  # the 64 fixed bytes of an entry header
_ENTRY_SIZE = 64
_ENTRY_HEADER_VERSION = 0x0101

KIND_NAMES = {0x01: "ptx", 0x02: "elf", 0x08: "ltoir", 0x20: "index", 0x40: "reloc", 0x80: "tile_ir", 0x100: "concat"}

FLAG_64BIT = 0x1
FLAG_DEBUG = 0x2
FLAG_CUDA = 0x4
FLAG_OPENCL = 0x8
FLAG_LINUX = 0x10
FLAG_MAC = 0x20
FLAG_WINDOWS = 0x40
FLAG_LZ4 = 0x2000
FLAG_ZSTD = 0x8000
FLAG_OBFUSCATED = 0x10000
FLAG_ARCH_SPECIFIC = 0x100000  # "a"
FLAG_FAMILY = 0x200000  # "f"

#: A compressed payload may claim at most this many times its compressed size once decompressed;
#: a header claiming more is malformed. Real cubins and PTX compress 2-20x; zstd of long zero runs
#: reaches a few hundred. Bounds what :meth:`FatbinEntry.data` can allocate.
MAX_EXPANSION = 1024
#: Bytes read at most from a pipe or standard input (which cannot be memory-mapped): 1 GiB.
MAX_STREAM = 1 << 30
#: Seconds a named FIFO given as a path may stay silent (before its first bytes, or between two reads) before
#: reading it fails: a writer may never come, or stop without closing it.
FIFO_WAIT = 30.0
_SMALL_FILE = 1 << 20  # files up to this size are read, not mapped: a file that shrinks cannot fault
_SECTIONS = (".nv_fatbin", "__nv_relfatbin")
_RELOCATABLE_SECTION = "__nv_relfatbin"
# padding between fatbins in a section, as cuobjdump skips it: 8-byte words whose magic field is zero;
# read this many bytes at a time (a regex over the run held 16 bytes of match state per byte: 2.1 GB for 128 MiB)
_PADDING_CHUNK = 1 << 20
_SHT_NOBITS = 8
_WINDOW = 32 << 20  # the embedded-fatbin search lets go of what it has searched every 32 MiB


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


_HOSTS = {bits: next((n for bit, n in ((FLAG_LINUX, "linux"), (FLAG_WINDOWS, "windows"), (FLAG_MAC, "mac"))
                      if bits & bit), None) for bits in range(0, 0x80, 0x10)}  # fmt: skip


def _host(flags: int) -> str | None:
    return _HOSTS[flags & (FLAG_LINUX | FLAG_MAC | FLAG_WINDOWS)]


def _described(kind: int, sm: int, vmajor: int, vminor: int, flags: int) -> dict[str, object]:
    """The FatbinEntry fields read from an entry (or member) header's kind, SM, version and flags."""
    return {
        "kind": KIND_NAMES.get(kind, f"unknown({kind:#x})"),
        "arch": _arch(sm, flags),
        "sm": sm,
        "version": (vmajor, vminor),
        "host": _host(flags),
        "address_bits": 64 if flags & FLAG_64BIT else 32,
        "debug": bool(flags & FLAG_DEBUG),
        "producer": "cuda" if flags & FLAG_CUDA else ("opencl" if flags & FLAG_OPENCL else None),
        "flags": flags,
    }


def _arch(sm: int, flags: int) -> Arch | None:
    return _arch_of(sm, "a" if flags & FLAG_ARCH_SPECIFIC else ("f" if flags & FLAG_FAMILY else ""))


@functools.lru_cache(maxsize=1024)
def _arch_of(sm: int, suffix: str) -> Arch | None:  # Arch is immutable: one object per value serves every entry
    if sm == 0:
        return None
    try:
        return Arch(sm // 10, sm % 10, suffix)
    except ValueError:
        return None


class FatbinEntry:
    """One entry of a fat binary: what it is, which arch, and where its payload lives.

    Attributes
    ----------
    kind : str
        ``"elf"``, ``"ptx"``, ``"ltoir"``, ``"reloc"``, ``"tile_ir"``, ``"index"``, ``"concat"`` or
        ``"unknown(0x..)"``.
    arch : Arch or None
        Target arch with the ``a``/``f`` suffix from the flags (``None`` for concat entries).
    sm : int
        The raw SM number from the header.
    version : tuple of int
        ``(major, minor)``: PTX ISA for PTX, ``(1, ELF ABI)`` for ELF, ``(1, n)`` for LTO-IR,
        ``(bytecode version, 0)`` for Tile IR.
    identifier : str or None
    options : str or None
        ptxas options (PTX), NVVM options (LTO-IR) or Tile IR options recorded with the entry.
    host : str or None
        ``"linux"``, ``"windows"`` or ``"mac"``.
    address_bits : int
        64 or 32.
    debug : bool
    producer : str or None
        ``"cuda"`` or ``"opencl"``.
    compression : str
        ``"none"``, ``"lz4"``, ``"zstd"`` or ``"obfuscated"``. Members of a concatenated entry say
        ``"none"``: the compression belongs to the concatenated entry that holds them.
    stored_size : int
        Bytes the payload occupies in the container (padding included; 0 for members).
    size : int
        Size of the payload once decompressed (for uncompressed entries, as stored).
    offset : int
        File offset of the entry header (for members, of their concatenated entry).
    flags : int
        The raw flags word.
    members : tuple of FatbinEntry
        For ``"concat"`` entries, the entries stored in its one compressed stream.

    Examples
    --------
    >>> from cuda_fatbin import Program
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> data = bytes(Program(src, "c++").compile("fatbin", archs=["sm_80", "sm_90"], ptx_for=["sm_90"]).code)
    >>> from cuda_fatbin import read_fatbin
    >>> entry = read_fatbin(data).entries[0]
    >>> entry.kind, str(entry.arch), entry.is_sass, entry.data()[:4]
    ('elf', 'sm_80', True, b'\\x7fELF')
    >>> sorted(entry.as_dict())[:4]
    ['address_bits', 'arch', 'compression', 'concatenated']
    """

    kind: str
    arch: Arch | None
    sm: int
    version: tuple[int, int]
    identifier: str | None
    options: str | None
    host: str | None
    address_bits: int
    debug: bool
    producer: str | None
    compression: str
    stored_size: int
    size: int
    offset: int
    flags: int
    members: tuple[FatbinEntry, ...]
    _src: _Data | None  # the bytes it was read from
    _payload: int  # buffer offset of the payload
    _compressed: int  # compressed byte count
    _parent: FatbinEntry | None  # the concat entry holding a member
    _member_offset: int  # a member's offset in its parent's stream
    _exact: bool  # a standalone file: the payload is the whole file
    _stream: list[bytes]  # a concat entry's decompressed stream, once

    # A plain immutable class, not a dataclass: importing dataclasses costs `cuda-fatbin inspect` ~7 ms,
    # and listing a large library makes tens of thousands of entries.
    def __init__(self, **values: object) -> None:
        unknown = values.keys() - _ENTRY_FIELDS
        if unknown:
            raise TypeError(f"FatbinEntry has no field(s) {', '.join(sorted(unknown))}")
        state = self.__dict__
        state.update(_ENTRY_DEFAULTS)
        state.update(values)
        state["_stream"] = []

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"FatbinEntry is immutable; cannot set {name!r}")

    def as_dict(self) -> dict[str, object]:
        """The entry's fields as JSON-ready values (``arch`` as ``"sm_90a"``, ``version`` as ``"9.0"``)."""
        return {
            "kind": self.kind,
            "arch": str(self.arch) if self.arch else None,
            "sm": self.sm,
            "version": f"{self.version[0]}.{self.version[1]}",
            "identifier": self.identifier,
            "options": self.options,
            "host": self.host,
            "address_bits": self.address_bits,
            "debug": self.debug,
            "producer": self.producer,
            "compression": self.compression,
            "size": self.size,
            "stored_size": self.stored_size,
            "offset": self.offset,
            "concatenated": self.concatenated,
        }

    @property
    def concatenated(self) -> bool:
        """True for a member of a ``"concat"`` entry."""
        return self._parent is not None

    @property
    def is_sass(self) -> bool:
        """True for machine code (ELF) entries."""
        return self.kind == "elf"

    @functools.cached_property
    def payload_mismatch(self) -> str | None:
        """What the payload says against the header, or ``None`` when they agree or it cannot be told.

        The driver picks entries by their headers; an ELF entry whose image is for another SM than its
        header says fails to load when picked (``CUDA_ERROR_INVALID_SOURCE``), an ELF header around
        PTX text fails (``CUDA_ERROR_INVALID_IMAGE``) and a PTX header around an ELF image crashed the
        driver (docs/selection.md, rule ``header_mismatch``). Compares the SM of the header with the
        ELF image's ``e_flags`` or the PTX ``.target``, read from the first bytes of the payload: a
        compressed payload is decompressed only as far as they lie (``_payload``).

        Examples
        --------
        >>> from cuda_fatbin import Program, read_fatbin
        >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
        >>> data = bytes(Program(src, "c++").compile("fatbin", archs=["sm_90"]).code)
        >>> print(read_fatbin(data).entries[0].payload_mismatch)
        None
        """
        from ._payload import mismatch

        return mismatch(self)

    def _in_place(self) -> Buffer:
        """The payload to judge it by (its header, ELF tables, PTX directives), never cut at an ELF image's end.

        Stored uncompressed, it is a view of the source (a map's pages are touched only where read); else it
        is decompressed (once for a concatenated entry's stream).
        """
        if self._parent is None and self.compression == "none" and self._src is not None:
            end = self._payload + self.stored_size
            self._src.check(end, self.offset)
            return self._src.view[self._payload : end]
        return self._decompressed() if self._parent is None else self.data()

    def _stored(self) -> Buffer | None:
        """The payload as stored (compressed bytes, padding included), a view of the source; ``None`` for a
        member of a concatenated entry, which has no bytes of its own."""
        if self._parent is not None or self._src is None:
            return None
        end = self._payload + (self._compressed or self.stored_size)
        self._src.check(end, self.offset)
        return self._src.view[self._payload : end]

    def _ptx_target(self) -> Arch | None:
        """:func:`ptx_target` of the payload. Stored uncompressed in a mapped file, the two directive lines are
        found by the windowed search, which skips holes (``_ptx_line``): a sparse payload costs what the file
        holds on disk, not its apparent size (a 1 GiB hole took 5.6 s and 1-2 GB through the map).

        Raises
        ------
        ValueError
            The ``.target`` names no ``sm_XX`` arch.
        """
        src = self._src
        if self._parent is None and self.compression == "none" and src is not None and src.fd is not None:
            start, end = self._payload, self._payload + self.stored_size
            src.check(end, self.offset)
            target = _ptx_line(src, b".target", _IDENT, start, end)
            declared = _ptx_line(src, b".version", b"0123456789.", start, end)
            return None if target is None or declared is None else ptx_target(target + b"\n" + declared)
        return ptx_target(self._in_place())

    def data(self) -> bytes:
        """The payload, decompressed (LZ4 block or zstd) and checked against the header's size.

        ELF payloads are cut at the end of the ELF image, which the container pads with zeros to 8
        bytes, so they equal ``cuobjdump -xelf`` output; anything but zeros after the image is an error.
        PTX is returned as stored: minified and NUL-terminated. A concatenated entry's stream is
        decompressed once; its members' payloads are slices of it.

        Raises
        ------
        FatbinFormatError
            The payload is obfuscated, fails to decompress, its size differs from the header, the
            file shrank since it was opened, or an ELF image is followed by non-zero bytes.
        """
        if self._parent is not None:
            stream = self._parent._decompressed()
            out = stream[self._member_offset : self._member_offset + self.size]
        else:
            out = self._decompressed()
        if self.kind == "elf" and not self._exact:
            return _trim_elf(out, self.offset)
        return out

    def _decompressed(self) -> bytes:
        if self._stream:
            return self._stream[0]
        if self.compression == "obfuscated":
            raise FatbinFormatError(
                f"{self.kind} entry payload is obfuscated (flag 0x10000); it cannot be decoded", self.offset
            )
        src = self._src
        if src is None:  # entries are made by the reader, which always gives them their data
            raise FatbinFormatError(f"{self.kind} entry has no data to read", self.offset)
        end = self._payload + (self._compressed or self.stored_size)
        src.check(end, self.offset)
        raw = src.view[self._payload : end]
        out = bytes(raw) if self.compression == "none" else _decompress(self.compression, raw, self.size, self.offset)
        if self.kind == "concat":
            self._stream.append(out)
        return out

    def __repr__(self) -> str:
        arch = f" {self.arch}" if self.arch else ""
        ident = f" {self.identifier!r}" if self.identifier else ""
        return f"<FatbinEntry {self.kind}{arch}{ident} {self.size} bytes, {self.compression} at {self.offset:#x}>"


_ENTRY_DEFAULTS = {"members": (), "_src": None, "_payload": 0, "_compressed": 0, "_parent": None,
                   "_member_offset": 0, "_exact": False}  # fmt: skip
_ENTRY_FIELDS = frozenset(FatbinEntry.__annotations__)


def _trim_elf(data: bytes, offset: int) -> bytes:
    """Cut container padding after an ELF image; refuse anything but zeros there."""
    try:
        header = read_header(data)
    except ElfFormatError:  # not an ELF image at all: nothing to cut by
        return data
    try:
        rows = section_headers(data, header)
    except ElfFormatError as e:
        raise FatbinFormatError(f"the ELF image of this entry is malformed: {e.message}", offset) from None
    # the image ends after its headers and tables and after the last section with file content
    tables = max(header.shoff + header.shnum * header.shentsize, header.phoff + header.phnum * header.phentsize, 64)
    end = max([tables, *(offset + size for _n, typ, offset, size in rows if typ != _SHT_NOBITS)])  # rows may be []
    if end >= len(data):
        return data
    if data.count(0, end) != len(data) - end:
        raise FatbinFormatError(
            f"the ELF image ends at +{end:#x} of its {len(data)}-byte payload, but non-zero bytes follow "
            "(a corrupt ELF header or a corrupt entry)",
            offset,
        )
    return data[:end]


def _decompress(method: str, raw: Buffer, size: int, offset: int) -> bytes:
    try:
        if method == "lz4":
            import lz4.block

            out: bytes = lz4.block.decompress(bytes(raw), uncompressed_size=size)
        else:
            import zstandard

            reader = zstandard.ZstdDecompressor().stream_reader(bytes(raw))
            chunks, got = [], 0
            while got <= size:  # read one byte more than promised at most: a longer stream is an error
                chunk = reader.read(size + 1 - got)
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
            out = b"".join(chunks)
    except ImportError as e:
        raise ImportError(
            f"decompressing {method} entries needs the {e.name} package: pip install lz4 zstandard"
        ) from e
    except Exception as e:  # the codecs raise their own error types on corrupt input
        raise FatbinFormatError(f"{method} payload does not decompress: {e}", offset) from None
    if len(out) != size:
        raise FatbinFormatError(f"{method} payload decompressed to {len(out)} bytes; header says {size}", offset)
    return out


class Fatbin:
    """One fat binary: its header and entries.

    Attributes
    ----------
    entries : tuple of FatbinEntry
        Top-level entries in container order (a ``"concat"`` entry holds its own members).
    offset : int
        File offset of the fatbin header (0 for a standalone artifact).
    size : int
        Bytes of the whole fatbin (header included).
    version : int
        Container version (1; 0 for a standalone artifact).
    section : str or None
        The ELF section it came from (``".nv_fatbin"``, ``"__nv_relfatbin"``, or for an embedded fatbin
        the section holding it), or ``None`` for a raw fatbin.
    standalone : bool
        True when the source is a single cubin, PTX, LTO-IR or Tile IR file, read as a one-entry fatbin.
    relocatable : bool
        True for a fatbin of the ``__nv_relfatbin`` section: input to a device link (``-rdc``). In a
        linked program the CUDA runtime links these at load time when the device-linked ``.nv_fatbin``
        has no image for the GPU (observed on an H200; docs/formats.md).
    embedded : bool
        True for a fatbin found stored as data (``iter_fatbins(..., embedded=True)``) rather than in a
        section the CUDA runtime registers.

    Examples
    --------
    >>> from cuda_fatbin import Program
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> data = bytes(Program(src, "c++").compile("fatbin", archs=["sm_80", "sm_90"], ptx_for=["sm_90"]).code)
    >>> from cuda_fatbin import read_fatbin
    >>> fb = read_fatbin(data)
    >>> [(e.kind, str(e.arch)) for e in fb.iter_entries()]
    [('elf', 'sm_80'), ('elf', 'sm_90'), ('ptx', 'sm_90')]
    >>> fb.size == len(data), fb.standalone, fb.section is None
    (True, False, True)
    """

    entries: tuple[FatbinEntry, ...]
    offset: int
    size: int
    version: int
    section: str | None
    standalone: bool
    relocatable: bool
    embedded: bool

    def __init__(
        self,
        entries: tuple[FatbinEntry, ...],
        offset: int,
        size: int,
        version: int,
        section: str | None = None,
        standalone: bool = False,
        relocatable: bool = False,
        embedded: bool = False,
    ) -> None:
        self.__dict__.update(entries=entries, offset=offset, size=size, version=version, section=section,
                             standalone=standalone, relocatable=relocatable, embedded=embedded)  # fmt: skip

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Fatbin is immutable; cannot set {name!r}")

    @property
    def loadable(self) -> bool:
        """True unless the fatbin is relocatable (device-link input, which needs a link before it can load)."""
        return not self.relocatable

    def iter_entries(self, *, flatten: bool = True) -> Iterator[FatbinEntry]:
        """Yield the entries; with ``flatten`` (default) concat entries are replaced by their members."""
        for entry in self.entries:
            if flatten and entry.kind == "concat":
                yield from entry.members
            else:
                yield entry

    def __repr__(self) -> str:
        where = f" in {self.section}" if self.section else ""
        marks = "".join(f" {m}" for m in ("standalone", "relocatable", "embedded") if getattr(self, m))
        return f"<Fatbin {len(self.entries)} entries, {self.size} bytes at {self.offset:#x}{where}{marks}>"


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
        self._win = b""  # the window read last, and its file offset
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
        if isinstance(self._raw, memoryview):  # a caller's view of unknown origin: copy once
            self._raw = bytes(self._raw)
        return self._raw.find(sub, start, end)

    def _find_read(self, sub: bytes, start: int, end: int) -> int:
        pos = start
        while pos < end:
            if not self._win_at <= pos < self._win_at + len(self._win):
                pos = self._load(pos, end)
                if pos < 0:
                    return -1
            win_end = self._win_at + len(self._win)
            i = self._win.find(sub, pos - self._win_at, min(end, win_end) - self._win_at)
            if i >= 0:
                return self._win_at + i
            if win_end >= end:
                return -1
            # the data run goes on: search again from where ``sub`` may straddle the window's end (never before
            # pos: a window kept from an earlier call may begin before it); a hole follows: it reads as zeros,
            # which ``sub`` holds none of. The window is read again even where pos is in this one: an earlier
            # call's end may have cut it short
            pos = self._load(max(pos, win_end - len(sub) + 1) if win_end < self._win_data_end else win_end, end)
            if pos < 0:
                return -1
        return -1

    def _load(self, pos: int, end: int) -> int:
        """Read the window at the first data at or after ``pos`` (below ``end``); its offset, or -1."""
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
        want = min(_WINDOW, max(data_end, pos + 1) - pos, end - pos)
        self._win = b""
        self._win = os.pread(self.fd, want, pos)
        self._win_at, self._win_data_end = pos, data_end
        if len(self._win) < want:
            self.check(pos + want, pos)
            raise FatbinFormatError(f"{self.name} shrank while it was being read", pos + len(self._win))
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

        Read :data:`_PADDING_CHUNK` bytes at a time (through ``pread`` for a mapped file, whose holes, zeros,
        are padding and skipped with ``SEEK_DATA``): work linear in the run, memory bounded, a sparse run
        costing what the file holds.
        """
        while end - pos >= 8:
            if self.fd is not None:
                data = self._data_at(pos, end)
                pos += (min(data, end) - pos) // 8 * 8  # whole words of a hole: zeros
                if end - pos < 8:
                    break
            size = min(_PADDING_CHUNK, (end - pos) // 8 * 8)
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


def read_fatbin(source: Source) -> Fatbin:
    """Read a raw fatbin, or a single cubin, PTX, LTO-IR or Tile IR file as a one-entry fatbin.

    Parameters
    ----------
    source : bytes, bytearray, memoryview, str or os.PathLike
        Data, a path, ``"-"`` for standard input, or a pipe (read up to :data:`MAX_STREAM` bytes).

    Returns
    -------
    Fatbin
        ``standalone`` is True for a single artifact.

    Raises
    ------
    FatbinFormatError
        Not a fatbin or a device-code artifact, malformed (truncated, sizes past the end, bad entry
        headers), or not a regular file, pipe or standard input.

    Examples
    --------
    >>> from cuda_fatbin import Program
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> data = bytes(Program(src, "c++").compile("fatbin", archs=["sm_80", "sm_90"], ptx_for=["sm_90"]).code)
    >>> from cuda_fatbin import read_fatbin
    >>> [(e.kind, str(e.arch)) for e in read_fatbin(data).entries]
    [('elf', 'sm_80'), ('elf', 'sm_90'), ('ptx', 'sm_90')]
    >>> ptx = read_fatbin(data).entries[2].data()
    >>> read_fatbin(ptx).standalone  # a single PTX file reads as a one-entry fatbin
    True
    """
    src = _open(source)
    if bytes(src.view[:4]) == FATBIN_MAGIC:
        src.check(len(src), 0)
        return _parse(src, 0, len(src), None)
    standalone = _standalone(src)
    if standalone is None:
        raise FatbinFormatError(
            "not a fatbin (magic 0xBA55ED50) nor a cubin, PTX, LTO-IR or Tile IR file; for host files "
            "(.so, .o, executables) use iter_fatbins",
            0,
        )
    return standalone


def iter_fatbins(source: Source, *, embedded: bool = False, relocatable: bool | None = None) -> Iterator[Fatbin]:
    """Yield every fatbin in a raw fatbin, a single artifact, a host ELF file, or (``embedded``) any file.

    In ELF files the sections ``.nv_fatbin`` and ``__nv_relfatbin`` are read, in Windows PE images and
    COFF objects ``.nv_fatb``, what ``.nvFatBi`` registers and ``__nv_relfatbin`` (docs/formats.md §3);
    several fatbins may sit back to back in one section. Each :class:`Fatbin` records its ``section`` and
    file ``offset``. Files are memory-mapped: only the headers are touched while listing. A cubin, PTX,
    LTO-IR or Tile IR file yields one standalone fatbin.

    Parameters
    ----------
    source : bytes-like, str or os.PathLike
        As for :func:`read_fatbin`.
    embedded : bool, optional
        Also find fatbins stored as data (a ``const unsigned char[]`` handed to ``cuModuleLoadData``, or
        cuFFT's ``.ldata``): every section of an ELF file that holds bytes, or the whole of any other
        file, is searched for fatbin headers, and each candidate is kept only if it parses completely,
        with container version 1, a 16-byte header and known entry kinds. Default: False.
    relocatable : bool or None, optional
        Yield ``__nv_relfatbin`` fatbins (device-link input)? ``None`` (default) does as ``cuobjdump``:
        yes when the file has no ``.nv_fatbin`` section (an ``-rdc`` object, where they are all the device
        code there is), no when it has one (a device-linked executable or library, where the runtime
        links them only when the device-linked image has no code for the GPU).

    Returns
    -------
    Iterator of Fatbin
        In file order: registered sections first, then fatbins stored as data.

    Raises
    ------
    FatbinFormatError
        The data is neither a fatbin, a device-code artifact nor an ELF file (without ``embedded``), a
        fatbin in it is malformed, or fatbins overlap.

    Examples
    --------
    >>> import cuda.bindings, glob, os
    >>> from cuda_fatbin import iter_fatbins
    >>> libs = glob.glob(os.path.join(os.path.dirname(cuda.bindings.__file__), "*.so"))
    >>> sum(1 for lib in libs for fb in iter_fatbins(lib))  # host code only: no fatbins
    0
    >>> for fb in iter_fatbins("libcurand.so.10"):  # doctest: +SKIP
    ...     print(fb.section, len(fb.entries))
    .nv_fatbin 42
    """
    src = _open(source)
    head = bytes(src.view[:4])
    if head == FATBIN_MAGIC:
        yield from _walk(src, 0, len(src), None, _Seen(len(src)))
        return
    if head[:2] == b"MZ" or (head != ELF_MAGIC and _coff_object(src)):  # Windows: docs/formats.md §3
        from ._pe import iter_pe_fatbins

        yield from iter_pe_fatbins(src, embedded, relocatable)
        return
    if head != ELF_MAGIC:
        standalone = _standalone(src)
        if standalone is not None:
            yield standalone
        elif embedded and head not in (b"!<ar", b"!<th"):
            yield from _scan(src, [(0, len(src), None)], _Seen(len(src)))
        elif head in (b"!<ar", b"!<th"):  # _ar's magics: an ar archive's members are read one by one
            raise FatbinFormatError("an ar archive (static library): read its members (inspect and scan do)", 0)
        else:
            raise FatbinFormatError("neither a fatbin (magic 0xBA55ED50) nor an ELF file", 0)
        return
    try:
        header = read_header(src.view)
        if header.machine == EM_CUDA:
            standalone = _standalone(src)
            if standalone is not None:
                yield standalone
            return
        rows = section_headers(src.view, header, src.fd)  # rows in holes left out: a sparse table costs nothing
        names = section_namer(src.view, header, rows) if rows else str
        # names are read when used, not kept: a section table may hold one for every 40 bytes of the file
        sections = [(offset, size, typ, name_off) for name_off, typ, offset, size in rows]
    except ElfFormatError as e:
        raise FatbinFormatError(f"malformed ELF file: {e.message}", e.offset) from None
    if relocatable is None:
        relocatable = not any(names(s[3]) == ".nv_fatbin" for s in sections)  # cuobjdump's rule (docs/formats.md §3)
    seen = _Seen(len(src))
    done: set[tuple[int, int]] = set()
    for offset, size, typ, name_off in sorted(sections):  # file order: each claim appends
        name = names(name_off)
        if name not in _SECTIONS or typ == _SHT_NOBITS or (offset, size) in done:
            continue
        done.add((offset, size))
        if name == _RELOCATABLE_SECTION and not relocatable:
            seen.claim(offset, offset + size)  # never searched as data either
            continue
        yield from _walk(src, offset, offset + size, name, seen)
    if embedded:
        ranges = [(offset, offset + size, name_off) for offset, size, typ, name_off in sections
                  if typ != _SHT_NOBITS and size]  # fmt: skip
        yield from _scan(src, ranges, seen, names)


def _coff_object(src: _Data) -> bool:
    if bytes(src.view[:2]) not in (b"\x64\x86", b"\x64\xaa", b"\x4c\x01"):  # _pe.COFF_MACHINES: no import
        return False
    from ._pe import is_coff_object

    return is_coff_object(src.view)


class _Seen:
    """The fatbins parsed so far: each is parsed once, and two may not overlap. Bounds the work on a file.

    Claims are kept in two sorted runs, one for the fatbins of registered sections and one for fatbins
    found stored as data: each run is claimed left to right (sections in file order, then the search
    left to right), so a claim appends to its run and costs O(log n), wherever the other run's fatbins
    lie. (One list would shift every later fatbin on each insert: quadratic when stored fatbins lie
    before many registered ones.) A claim out of order in its run is still correct, by a sorted insert.
    """

    def __init__(self, size: int) -> None:
        self.runs: tuple[tuple[list[int], list[int]], ...] = (([], []), ([], []))  # (starts, ends): registered, stored
        self.by_start: dict[int, int] = {}
        self.steps = 0
        self.max_steps = size // 16 + 1024  # a fatbin takes 16 bytes at least; sections may name it again

    def step(self, pos: int) -> None:
        self.steps += 1
        if self.steps > self.max_steps:
            raise FatbinFormatError("the sections name the same fatbins over and over (overlapping sections)", pos)

    def inside(self, pos: int) -> int | None:
        """Start of the fatbin whose bytes hold ``pos``, if any."""
        for starts, ends in self.runs:
            i = bisect.bisect_right(starts, pos) - 1
            if i >= 0 and pos < ends[i]:
                return starts[i]
        return None

    def claim(self, start: int, end: int, *, stored: bool = False) -> None:
        for starts, ends in self.runs:
            i = bisect.bisect_left(starts, start)
            if (i > 0 and ends[i - 1] > start) or (i < len(starts) and starts[i] < end):
                other = starts[i - 1] if i > 0 and ends[i - 1] > start else starts[i]
                raise FatbinFormatError(f"the fatbin at {start:#x} overlaps the one at {other:#x}", start)
        starts, ends = self.runs[stored]
        if not starts or starts[-1] < start:
            starts.append(start)
            ends.append(end)
        else:
            i = bisect.bisect_left(starts, start)
            starts.insert(i, start)
            ends.insert(i, end)
        self.by_start[start] = end


def _walk(src: _Data, start: int, end: int, section: str | None, seen: _Seen) -> Iterator[Fatbin]:
    """Fatbins back to back in [start, end) (a section, or a raw fatbin file when ``section`` is None).

    As cuobjdump reads them (docs/formats.md §3): 8-byte words whose first 4 bytes are zero are padding
    and skipped; then a fatbin header must follow. In a section, fewer than 16 bytes (a header) left
    after the padding end the walk; in a raw file, fewer than 16 bytes left right after a fatbin end it,
    and padding must lead to another fatbin.
    """
    pos = start
    buf = src.view
    where = section or "the file"
    while pos < end:
        seen.step(pos)
        src.check(end, pos)  # a mapped file cut short since the last step would fault (SIGBUS), not raise
        if section is None and end - pos < 16:
            return
        after = src.padding_end(pos, end)
        if section is not None and end - after < 16:
            return
        known = seen.by_start.get(after)
        if known is not None:  # named by an earlier section too: parsed and yielded once
            if known > end:
                raise FatbinFormatError(f"the fatbin at {after:#x} runs past the end of {section}", after)
            pos = known
            continue
        if bytes(buf[after : after + 4]) != FATBIN_MAGIC:
            raise FatbinFormatError(
                f"invalid fatbin header at {after:#x} in {where}: no magic 0xBA55ED50, and only padding (8-byte "
                "words starting with 4 zero bytes) may stand before, between and after fatbins",
                after,
            )
        owner = seen.inside(after)
        if owner is not None:
            raise FatbinFormatError(f"a fatbin at {after:#x} starts inside the fatbin at {owner:#x}", after)
        fatbin = _parse(src, after, end, section, relocatable=section == _RELOCATABLE_SECTION)
        seen.claim(after, after + fatbin.size)
        yield fatbin
        pos = after + fatbin.size


def _scan(
    src: _Data,
    ranges: Sequence[tuple[int, int, int | None]],
    seen: _Seen,
    names: Callable[[int], str] | None = None,
) -> Iterator[Fatbin]:
    """Fatbins stored as data in ``ranges`` (start, end, section name offset for ``names``): each searched once.

    A candidate counts only if it parses completely and strictly (see :func:`iter_fatbins`). The entry
    headers read for candidates that fail are bounded by the data size; past that the file is refused.
    """
    budget = len(src) + 4096 * _ENTRY_SIZE  # bytes of headers read for candidates that fail (64 at least each)
    merged: list[list[Any]] = []  # [start, end, the sections in it]: overlapping sections are searched once
    for part in sorted(ranges):
        if merged and part[0] < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], part[1])
            merged[-1][2].append(part)
        else:
            merged.append([part[0], part[1], [part]])
    named: dict[int, str] = {}
    for start, end, parts in merged:
        name_of = _namer(parts)
        pos = start
        window = start
        while True:
            src.check(end, pos)  # as in _walk: between two yields the file may have been cut short
            pos = src.find(FATBIN_MAGIC, pos, end)
            if pos - window > _WINDOW or pos < 0:  # searched bytes are not kept: memory stays bounded
                src.release(window, pos if pos >= 0 else end)
                window = pos
            if pos < 0:
                break
            owner = seen.inside(pos)
            if owner is not None:
                pos = seen.by_start[owner]
                continue
            read = src.headers
            try:
                fatbin = _parse(src, pos, end, None, strict=True)
            except FatbinFormatError:
                # what the candidate read: its headers (strings are read only once a fatbin is all valid)
                budget -= _ENTRY_SIZE * max(1, src.headers - read)
                if budget < 0:
                    raise FatbinFormatError(
                        "too many fatbin-like headers that do not parse; the file is refused", pos
                    ) from None
                pos += 4
                continue
            seen.claim(pos, pos + fatbin.size, stored=True)
            label = name_of(pos, pos + fatbin.size)
            name = None
            if names is not None and label is not None:
                name = named.get(label)
                if name is None:  # a section holds thousands of fatbins: its name is read once
                    name = named[label] = names(label)
            fatbin.__dict__.update(section=name, embedded=True)  # made just now, seen by no one else yet
            yield fatbin
            pos += fatbin.size


def _namer(parts: list[tuple[int, int, int | None]]) -> Callable[[int, int], int | None]:
    """Name the fatbins found left to right in one run of overlapping sections (``parts``, sorted).

    A fatbin [start, end) takes the name of the first part that holds all of it, else of the first that
    holds ``start``. Fatbins come in increasing order without overlapping, so a part that ends before a
    fatbin's end holds none of the later ones and is dropped: the work is linear in parts + fatbins, not
    their product (a file may name the same bytes with thousands of sections).
    """
    waiting = iter(parts)
    upcoming = next(waiting, None)
    live: collections.deque[tuple[int, int, int | None]] = collections.deque()

    def name_of(start: int, end: int) -> int | None:
        nonlocal upcoming
        while upcoming is not None and upcoming[0] <= start:
            live.append(upcoming)
            upcoming = next(waiting, None)
        first = None
        while live and live[0][1] < end:  # cannot hold this fatbin's end, nor any later fatbin
            part = live.popleft()
            if first is None and part[1] > start:
                first = part[2]
        # the front now holds all of it (and is first to); else the first part seen that held its start
        return live[0][2] if live else first

    return name_of


_struct = functools.lru_cache(maxsize=None)(struct.Struct)


def _u(fmt: str, buf: Buffer, offset: int, limit: int, what: str) -> tuple[Any, ...]:
    st = _struct(fmt)
    if offset < 0 or offset + st.size > limit:
        raise FatbinFormatError(f"truncated {what}: need {st.size} bytes, {max(0, limit - offset)} left", offset)
    return st.unpack_from(buf, offset)


def _parse(
    src: _Data, start: int, limit: int, section: str | None, *, strict: bool = False, relocatable: bool = False
) -> Fatbin:
    buf = src.view  # the callers checked that a mapped file still holds [start, limit)
    # every caller found the magic at ``start`` (read_fatbin, the section walk, the search)
    _magic, version, header_size, body = _u("<IHHQ", buf, start, limit, "fatbin header")
    if header_size < 16:
        raise FatbinFormatError(f"fatbin header size {header_size} is below 16", start + 6)
    if strict and (version != 1 or header_size != 16 or body == 0):
        raise FatbinFormatError("not a version-1 fatbin header", start)
    end = start + header_size + body
    if end > limit:
        raise FatbinFormatError(
            f"fatbin declares {body} bytes of entries but only {max(0, limit - start - header_size)} follow", start + 8
        )
    entries = []
    texts: list[tuple[FatbinEntry, str, int, int]] = []  # (entry, field, offset, length): read once all is valid
    pos = start + header_size
    while pos < end:
        entry, stride = _parse_entry(src, pos, end, strict, texts)
        entries.append(entry)
        pos += stride
    for entry, field, begin, length in texts:  # strings lie in their headers, headers tile the fatbin: linear
        entry.__dict__[field] = _text(buf, begin, length)
    return Fatbin(tuple(entries), start, end - start, version, section, relocatable=relocatable)


def _string(entry_start: int, off: int, length: int, limit: int, what: str) -> int:
    """The offset of a header string, checked to lie inside the header (read later, by :func:`_parse`)."""
    begin = entry_start + off
    if off < _ENTRY_SIZE or begin + length > limit:
        raise FatbinFormatError(f"{what} ({length} bytes at +{off:#x}) lies outside the entry header", entry_start)
    return begin


def _text(buf: Buffer, begin: int, length: int) -> str:
    """Header text as written (UTF-8); bytes that are not UTF-8 become U+FFFD, never an exception."""
    return bytes(buf[begin : begin + length]).decode("utf-8", "replace")


def _options_record(buf: Buffer, pos: int, opt_off: int, limit: int, what: str) -> tuple[int, int]:
    """``(string offset, length)`` of the options record at ``pos + opt_off``, both checked to lie below ``limit``."""
    s_off, s_len = _u("<II", buf, pos + opt_off, limit, f"{what} options record")
    if s_len and (s_off < _ENTRY_SIZE or pos + s_off + s_len > limit):  # {0, 0}: no options (seen in cuFFT)
        raise FatbinFormatError(f"{what} options ({s_len} bytes at +{s_off:#x}) lie outside the header", pos)
    return s_off, s_len


def _compression(flags: int) -> str:
    if flags & FLAG_OBFUSCATED:
        return "obfuscated"
    if flags & FLAG_ZSTD:
        return "zstd"
    if flags & FLAG_LZ4:
        return "lz4"
    return "none"


def _parse_entry(
    src: _Data, pos: int, end: int, strict: bool, texts: list[tuple[FatbinEntry, str, int, int]]
) -> tuple[FatbinEntry, int]:
    """One entry header at ``pos``; its strings are checked and appended to ``texts``, not read."""
    buf = src.view
    src.headers += 1
    (kind, hver, hsize, psize, csize, opt_off, vminor, vmajor, sm, id_off, id_len, flags, _key, usize) = _u(
        _ENTRY.format, buf, pos, end, "entry header"
    )
    if hsize < _ENTRY_SIZE or pos + hsize > end:
        raise FatbinFormatError(f"entry header size {hsize} is outside 64..{end - pos}", pos + 4)
    if psize > end - pos - hsize:
        raise FatbinFormatError(f"entry payload of {psize} bytes runs past the end of the fatbin", pos + 8)
    if strict and (kind not in KIND_NAMES or hver != _ENTRY_HEADER_VERSION):
        raise FatbinFormatError(f"unknown entry kind {kind:#x} or header version {hver:#x}", pos)
    header_end = pos + hsize
    strings = []
    if id_off:
        strings.append(("identifier", _string(pos, id_off, id_len, header_end, "identifier"), id_len))
    if kind not in (0x02, 0x100) and opt_off:  # ELF entries point there to .nv.compat attributes, not text
        s_off, s_len = _options_record(buf, pos, opt_off, header_end, "entry")  # checked to lie in the header
        strings.append(("options", pos + s_off, s_len))
    compression = _compression(flags)
    if compression in ("zstd", "lz4"):
        if csize == 0 or csize > psize:
            raise FatbinFormatError(f"compressed size {csize} is not within the {psize}-byte payload", pos + 0x10)
        if usize > MAX_EXPANSION * csize:
            raise FatbinFormatError(
                f"uncompressed size {usize} is over {MAX_EXPANSION}x the {csize} compressed bytes", pos + 0x38
            )
        size = usize
    else:
        size = usize if compression == "obfuscated" and usize else psize
    values = _described(kind, sm, vmajor, vminor, flags)
    values.update(identifier=None, options=None, compression=compression, stored_size=psize, size=size,
                  offset=pos, _src=src, _payload=header_end,
                  _compressed=csize if compression in ("zstd", "lz4") else 0)  # fmt: skip
    entry = FatbinEntry.__new__(FatbinEntry)  # the fields are known to be right: no check of their names
    entry.__dict__.update(_ENTRY_DEFAULTS, **values, _stream=[])
    texts.extend((entry, field, begin, length) for field, begin, length in strings)
    if kind == 0x100:
        entry.__dict__["members"] = _parse_members(src, pos, opt_off, header_end, entry, texts)
    return entry, hsize + psize


def _parse_members(
    src: _Data,
    pos: int,
    table_off: int,
    header_end: int,
    parent: FatbinEntry,
    texts: list[tuple[FatbinEntry, str, int, int]],
) -> tuple[FatbinEntry, ...]:
    """Members of a concatenated entry.

    The table at ``pos + table_off`` is ``u32 count, u32 table size`` and then one member record per
    member, back to back: a 64-byte header (its 0x04 field is the member's offset in the decompressed
    stream, 0x08 its size) followed by its identifier and options record (ELF members of SM >= 100
    carry their ``.nv.compat`` attributes there), each string NUL-terminated, the record padded to 8.
    The records must fill the table exactly, and the members must lie inside the stream without
    overlapping.
    """
    buf = src.view
    if table_off < _ENTRY_SIZE:
        raise FatbinFormatError("concatenated entry has no member table", pos + 0x14)
    count, table_size = _u("<II", buf, pos + table_off, header_end, "member table header")
    table_end = pos + table_off + table_size
    # a table of under 8 bytes makes the quotient -1: any count is refused
    if table_end > header_end or count > (table_size - 8) // _ENTRY_SIZE:
        raise FatbinFormatError(f"member table ({count} members, {table_size} bytes) does not fit the header", pos)
    members = []
    m = pos + table_off + 8
    for _ in range(count):
        src.headers += 1
        (kind, _hv, stream_off, msize, _cs, opt_off, vminor, vmajor, sm, id_off, id_len, flags, _k, _us) = _u(
            _ENTRY.format, buf, m, table_end, "member header"
        )
        extent = _ENTRY_SIZE
        strings = []
        if id_off:
            strings.append(("identifier", _string(m, id_off, id_len, table_end, "member identifier"), id_len))
            extent = max(extent, id_off + id_len + 1)
        if opt_off:
            s_off, s_len = _options_record(buf, m, opt_off, table_end, "member")
            if kind != 0x02:
                strings.append(("options", m + s_off, s_len))  # checked to lie in the table
            extent = max(extent, opt_off + 8, s_off + s_len + 1)
        members.append(
            FatbinEntry(
                **_described(kind, sm, vmajor, vminor, flags),
                identifier=None,
                options=None,
                compression="none",
                stored_size=0,
                size=msize,
                offset=pos,
                _parent=parent,  # a member's bytes are a slice of its parent's stream
                _member_offset=stream_off,
            )
        )
        texts.extend((members[-1], field, begin, length) for field, begin, length in strings)
        m += (extent + 7) // 8 * 8
    if m != table_end:  # records are padded to 8 bytes and fill the table exactly
        raise FatbinFormatError(
            f"the {count} member records take {m - pos - table_off - 8} bytes; the table holds {table_size - 8}",
            pos + table_off,
        )
    prev_end = 0
    for member in sorted(members, key=lambda e: e._member_offset):
        if member._member_offset < prev_end or member._member_offset + member.size > parent.size:
            raise FatbinFormatError(
                f"member {member.kind} at stream offset {member._member_offset} ({member.size} bytes) overlaps "
                f"another or runs past the {parent.size}-byte stream",
                pos,
            )
        prev_end = member._member_offset + member.size
    return tuple(members)


def _standalone(src: _Data) -> Fatbin | None:
    """A single cubin, PTX, LTO-IR or Tile IR file as a one-entry fatbin, or ``None`` if it is none of them."""
    view = src.view
    head = bytes(view[:8])
    size = len(view)
    arch: Arch | None
    try:
        if head[:4] == ELF_MAGIC:
            header = read_header(view)
            if header.machine != EM_CUDA:
                return None
            arch, _ = cubin_arch(view)
            kind, version, bits = 0x02, (1, header.abi_version), header.bits
        elif head[:4] == LTOIR_MAGIC:
            arch, kind, version, bits = ltoir_arch(view), 0x08, (0, 0), 64
        elif head == TILE_IR_MAGIC:
            arch, kind, bits = None, 0x80, 64
            version = ((view[8] << 8) | view[9], 0) if size >= 10 else (0, 0)
        else:
            if not is_text(src.read(0, min(size, TEXT_PROBE))):  # PTX is never sniffed out of binary data
                return None
            text: Buffer = view
            if src.fd is not None:  # a mapped file: read only the two directive lines, through pread
                target, declared = _ptx_line(src, b".target", _IDENT), _ptx_line(src, b".version", b"0123456789.")
                if target is None or declared is None:
                    return None
                text = target + b"\n" + declared
            arch = ptx_target(text)
            if arch is None:
                return None
            kind, version, bits = 0x01, ptx_version(text) or (0, 0), 64
    except (ValueError, ElfFormatError) as e:
        raise FatbinFormatError(f"malformed device-code file: {e}", 0) from None
    suffix = {"a": FLAG_ARCH_SPECIFIC, "f": FLAG_FAMILY}.get(arch.suffix, 0) if arch is not None else 0
    flags = (FLAG_64BIT if bits == 64 else 0) | suffix  # as libnvfatbin sets them for the same artifact
    fields = _described(kind, arch.sm if arch else 0, version[0], version[1], flags)
    fields["arch"] = arch
    entry = FatbinEntry(
        **fields,
        identifier=None,
        options=None,
        compression="none",
        stored_size=size,
        size=size,
        offset=0,
        _src=src,
        _exact=True,
    )
    return Fatbin((entry,), 0, size, 0, None, standalone=True)


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
