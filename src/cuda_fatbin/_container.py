# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The fatbin container: headers, entries, members, decompression, and single device-code files.

Parses lazily from a :class:`._source._Data`: headers are read on demand, payloads are decompressed only
in :meth:`FatbinEntry.data`, which checks the size it got against the header. Every offset and size is
checked before use; malformed input raises :class:`FatbinFormatError` with the file offset. The
guarantees are listed in :mod:`._reader` and ``docs/security.md``.
"""

from __future__ import annotations

import functools
import struct

from ._arch import Arch
from ._detect import (
    LTOIR_MAGIC,
    TEXT_PROBE,
    TILE_IR_MAGIC,
    cubin_arch,
    is_text,
    ltoir_arch,
    ptx_target,
    ptx_version,
)
from ._elf import ELF_MAGIC, EM_CUDA, SHT_NOBITS, ElfFormatError, read_header, section_headers
from ._source import _IDENT, FatbinFormatError, _Data, _ptx_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time: benchmarks/bench_cli.py)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, TypeVar

    from ._elf import Buffer

    _Image = TypeVar("_Image", bytes, memoryview)

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


@functools.lru_cache(maxsize=1024)
def _entry_base(kind: int, sm: int, vmajor: int, vminor: int, flags: int) -> dict[str, object]:
    """The fields of an entry that its header's kind, SM, version and flags give, with the defaults: shared, read
    only (copied into each entry). A library's thousands of entries have a few dozen distinct ones."""
    return {**_ENTRY_DEFAULTS, **_described(kind, sm, vmajor, vminor, flags), "identifier": None, "options": None}


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


_payload: Any = None  # the module, once an entry's payload_mismatch is asked for

if TYPE_CHECKING:
    _cached_property = functools.cached_property
else:

    class _cached_property(functools.cached_property):
        """``functools.cached_property`` as Python 3.12 has it: before 3.12 each first read takes a lock (about
        1 µs; listing a library reads ``payload_mismatch`` of tens of thousands of entries). Two threads may
        both compute a value the first time; it is the same value."""

        def __get__(self, instance, owner=None):
            if instance is None:
                return self
            value = instance.__dict__[self.attrname] = self.func(instance)
            return value


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

    @_cached_property
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
        global _payload
        if _payload is None:  # imported once: an import statement per entry cost 0.6 µs (it imports this module)
            from . import _payload as module

            _payload = module
        return _payload.mismatch(self)  # type: ignore[no-any-return]

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


def _trim_elf(data: _Image, offset: int) -> _Image:
    """Cut container padding after an ELF image; refuse anything but zeros there (bytes, or a view cut in place)."""
    try:
        header = read_header(data)
    except ElfFormatError:  # not an ELF image at all: nothing to cut by
        return data
    rows: list[tuple[int, int, int, int]]
    try:
        rows = section_headers(data, header)
    except ElfFormatError as e:
        raise FatbinFormatError(f"the ELF image of this entry is malformed: {e.message}", offset) from None
    # the image ends after its headers and tables and after the last section with file content
    tables = max(header.shoff + header.shnum * header.shentsize, header.phoff + header.phnum * header.phentsize, 64)
    end = max([tables, *(offset + size for _n, typ, offset, size in rows if typ != SHT_NOBITS)])  # rows may be []
    if end >= len(data):
        return data
    if bytes(data[end:]).count(0) != len(data) - end:
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


_struct = functools.lru_cache(maxsize=None)(struct.Struct)


def _u(fmt: str, buf: Buffer, offset: int, limit: int, what: str) -> tuple[Any, ...]:
    st = _struct(fmt)
    if offset < 0 or offset + st.size > limit:
        raise FatbinFormatError(f"truncated {what}: need {st.size} bytes, {max(0, limit - offset)} left", offset)
    return st.unpack_from(buf, offset)


_HEADER = struct.Struct("<IHHQ")  # a fatbin header: magic, version, header size, size of the entries
_RECORD = struct.Struct("<II")  # an options record: the string's offset in the header, its length


def _extent(buf: Buffer, start: int, limit: int, strict: bool = False, base: int = 0) -> tuple[int, int, int]:
    """A fatbin header's version, header size and where the fatbin ends, checked to lie below ``limit`` (every caller
    found the magic at ``start``). ``buf`` holds the bytes from offset ``base`` on (too short: ``struct.error``)."""
    if start + 16 > limit:
        raise FatbinFormatError(f"truncated fatbin header: need 16 bytes, {max(0, limit - start)} left", start)
    _magic, version, header_size, body = _HEADER.unpack_from(buf, start - base)
    if header_size < 16:
        raise FatbinFormatError(f"fatbin header size {header_size} is below 16", start + 6)
    if strict and (version != 1 or header_size != 16 or body == 0):
        raise FatbinFormatError("not a version-1 fatbin header", start)
    end = start + header_size + body
    if end > limit:
        raise FatbinFormatError(
            f"fatbin declares {body} bytes of entries but only {max(0, limit - start - header_size)} follow", start + 8
        )
    return version, header_size, end


def _parse(
    src: _Data, start: int, limit: int, section: str | None, *, strict: bool = False, relocatable: bool = False
) -> Fatbin:
    buf = src.view  # the callers checked that a mapped file still holds [start, limit)
    version, header_size, end = _extent(buf, start, limit, strict)
    entries = []
    texts: list[tuple[FatbinEntry, str, int, int]] = []  # (entry, field, offset, length): read once all is valid
    pos = start + header_size
    while pos < end:
        entry, stride = _parse_entry(src, pos, end, strict, texts)
        entries.append(entry)
        pos += stride
    return _assembled(src, entries, texts, start, end, version, section, relocatable)


def _assembled(src: _Data, entries: list[FatbinEntry], texts: list[tuple[FatbinEntry, str, int, int]], start: int,
               end: int, version: int, section: str | None, relocatable: bool = False) -> Fatbin:  # fmt: skip
    """The :class:`Fatbin` of checked ``entries``, their strings (``texts``) read now that all is valid."""
    buf = src.view
    for entry, field, begin, length in texts:  # strings lie in their headers, headers tile the fatbin: linear
        entry.__dict__[field] = bytes(buf[begin : begin + length]).decode("utf-8", "replace")  # as _text
    fatbin = Fatbin.__new__(Fatbin)  # as Fatbin(...) makes it, without the keyword call
    fatbin.__dict__.update(entries=tuple(entries), offset=start, size=end - start, version=version, section=section,
                           standalone=False, relocatable=relocatable, embedded=False)  # fmt: skip
    return fatbin


#: An entry header as :func:`_entry_header` checked it: its offset, kind, SM, version (major, minor), flags, header
#: and payload sizes, compressed and decompressed sizes, compression, identifier (file offset or 0, length), options
#: (offset and length in the header, or None) and the raw options field (a concatenated entry's member table).
if TYPE_CHECKING:
    _Row = tuple[int, int, int, int, int, int, int, int, int, int, str, int, int, tuple[int, int] | None, int]


def _string(entry_start: int, off: int, length: int, limit: int, what: str) -> int:
    """The offset of a header string, checked to lie inside the header (read later, by :func:`_parse`)."""
    begin = entry_start + off
    if off < _ENTRY_SIZE or begin + length > limit:
        raise FatbinFormatError(f"{what} ({length} bytes at +{off:#x}) lies outside the entry header", entry_start)
    return begin


def _text(buf: Buffer, begin: int, length: int) -> str:
    """Header text as written (UTF-8); bytes that are not UTF-8 become U+FFFD, never an exception."""
    return bytes(buf[begin : begin + length]).decode("utf-8", "replace")


def _options_record(buf: Buffer, pos: int, opt_off: int, limit: int, what: str, base: int = 0) -> tuple[int, int]:
    """``(string offset, length)`` of the options record at ``pos + opt_off``, both checked to lie below ``limit``."""
    at = pos + opt_off
    if at < 0 or at + 8 > limit:  # as _u says it (unpacked here: a library has tens of thousands of entries)
        raise FatbinFormatError(f"truncated {what} options record: need 8 bytes, {max(0, limit - at)} left", at)
    s_off, s_len = _RECORD.unpack_from(buf, at - base)
    if s_len and (s_off < _ENTRY_SIZE or pos + s_off + s_len > limit):  # {0, 0}: no options (seen in cuFFT)
        raise FatbinFormatError(f"{what} options ({s_len} bytes at +{s_off:#x}) lie outside the header", pos)
    return s_off, s_len


_COMPRESSION_BITS = FLAG_OBFUSCATED | FLAG_ZSTD | FLAG_LZ4
_set_state = object.__setattr__  # an entry's fields in one dict, past FatbinEntry's refusal to set attributes


def _compression(flags: int) -> str:
    if flags & FLAG_OBFUSCATED:
        return "obfuscated"
    if flags & FLAG_ZSTD:
        return "zstd"
    if flags & FLAG_LZ4:
        return "lz4"
    return "none"


_COMPRESSION = {a | b | c: _compression(a | b | c) for a in (0, FLAG_OBFUSCATED) for b in (0, FLAG_ZSTD)
                for c in (0, FLAG_LZ4)}  # fmt: skip


def _parse_entry(
    src: _Data, pos: int, end: int, strict: bool, texts: list[tuple[FatbinEntry, str, int, int]]
) -> tuple[FatbinEntry, int]:
    """One entry header at ``pos``; its strings are checked and appended to ``texts``, not read."""
    row = _entry_header(src, pos, end, strict)
    entry = _entry_of(src, row, texts)
    if row[1] == 0x100:
        header_end = pos + row[6]
        entry.__dict__["members"] = _parse_members(src, pos, row[14], header_end, entry, texts)
    return entry, row[6] + row[7]


def _entry_header(src: _Data, pos: int, end: int, strict: bool, buf: Buffer | None = None, base: int = 0) -> _Row:
    """The entry header at ``pos``, unpacked and checked (its strings lie in it, its payload in the fatbin, its sizes
    agree with its compression): the one home of these checks, for :func:`_parse` and ``_reader._rows``. Read from
    ``src``, or from ``buf`` holding its bytes from offset ``base`` on (too short: ``struct.error``)."""
    buf = src.view if buf is None else buf
    src.headers += 1
    if pos + _ENTRY_SIZE > end:  # as _u says it; unpacked here directly: a library has tens of thousands of entries
        raise FatbinFormatError(f"truncated entry header: need {_ENTRY_SIZE} bytes, {max(0, end - pos)} left", pos)
    (kind, hver, hsize, psize, csize, opt_off, vminor, vmajor, sm, id_off, id_len, flags, _key, usize) = (
        _ENTRY.unpack_from(buf, pos - base)
    )
    if hsize < _ENTRY_SIZE or pos + hsize > end:
        raise FatbinFormatError(f"entry header size {hsize} is outside 64..{end - pos}", pos + 4)
    if psize > end - pos - hsize:
        raise FatbinFormatError(f"entry payload of {psize} bytes runs past the end of the fatbin", pos + 8)
    if strict and (kind not in KIND_NAMES or hver != _ENTRY_HEADER_VERSION):
        raise FatbinFormatError(f"unknown entry kind {kind:#x} or header version {hver:#x}", pos)
    header_end = pos + hsize
    # the strings lie in the header: checked before the payload's sizes, so a header with several faults names
    # the same one whatever reads it
    identifier = _string(pos, id_off, id_len, header_end, "identifier") if id_off else 0
    options = None
    if opt_off and kind != 0x02 and kind != 0x100:  # ELF entries point there to .nv.compat attributes, not text
        options = _options_record(buf, pos, opt_off, header_end, "entry", base)  # checked to lie in the header
    compression = _COMPRESSION[flags & _COMPRESSION_BITS]
    if compression == "zstd" or compression == "lz4":
        if csize == 0 or csize > psize:
            raise FatbinFormatError(f"compressed size {csize} is not within the {psize}-byte payload", pos + 0x10)
        if usize > MAX_EXPANSION * csize:
            raise FatbinFormatError(
                f"uncompressed size {usize} is over {MAX_EXPANSION}x the {csize} compressed bytes", pos + 0x38
            )
        size = usize
    else:
        size = usize if compression == "obfuscated" and usize else psize
        csize = 0
    return (pos, kind, sm, vmajor, vminor, flags, hsize, psize, csize, size, compression, identifier, id_len,
            options, opt_off)  # fmt: skip


def _entry_of(src: _Data, row: _Row, texts: list[tuple[FatbinEntry, str, int, int]]) -> FatbinEntry:
    """The :class:`FatbinEntry` of a checked header (:func:`_entry_header`; a concatenated entry's members are
    added by :func:`_parse_entry`); its strings are appended to ``texts``, not read."""
    pos, kind, sm, vmajor, vminor, flags, hsize, psize, csize, size, compression, identifier, id_len, options, _ = row
    entry = FatbinEntry.__new__(FatbinEntry)  # the fields are known to be right: no check of their names
    state = _entry_base(kind, sm, vmajor, vminor, flags).copy()
    state.update(compression=compression, stored_size=psize, size=size, offset=pos, _src=src, _payload=pos + hsize,
                 _compressed=csize, _stream=[])  # fmt: skip
    _set_state(entry, "__dict__", state)
    if identifier:  # its offset in the file (0: none)
        texts.append((entry, "identifier", identifier, id_len))
    if options is not None:
        texts.append((entry, "options", pos + options[0], options[1]))
    return entry


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
