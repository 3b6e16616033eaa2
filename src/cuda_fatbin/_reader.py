"""A pure-Python reader of CUDA fat binaries, standalone or embedded in host ELF files.

Parses lazily from any buffer: files are memory-mapped, headers are read on demand, payloads are
decompressed only in :meth:`FatbinEntry.data`, which checks the size it got against the header.
Every offset and size is checked against the data before use; malformed input raises
:class:`FatbinFormatError` with the file offset. The layout is described in
``shared/design/fatbin-format.md`` §1-3 and in ``docs/formats.md``.

This module does not import the compile side (cuda.core, NVRTC, libnvfatbin).
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field

from ._arch import Arch
from ._detect import FATBIN_MAGIC
from ._elf import ELF_MAGIC, EM_CUDA, ElfFormatError, iter_sections, read_header

__all__ = ["Fatbin", "FatbinEntry", "FatbinFormatError", "iter_fatbins", "read_fatbin"]

_MAGIC_BYTES = FATBIN_MAGIC  # the bytes 50 ED 55 BA, from _detect (the one home of magic numbers)
_MAGIC_INT = struct.unpack("<I", FATBIN_MAGIC)[0]
_ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")  # the 64 fixed bytes of an entry header
_ENTRY_SIZE = 64

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

#: A compressed entry claiming to expand more than this many times is treated as malformed, so a
#: header field cannot make :meth:`FatbinEntry.data` allocate without bound. Real cubins and PTX
#: compress 2-20x; zstd of long zero runs reaches a few hundred.
MAX_EXPANSION = 1024
_SECTIONS = (".nv_fatbin", "__nv_relfatbin")
_MAX_GAP = 4096  # zero padding tolerated between back-to-back fatbins in a section


class FatbinFormatError(ValueError):
    """Malformed fat binary data: truncated, wrong magic, or a size or offset out of bounds.

    Attributes
    ----------
    offset : int
        File offset of the field or data that is wrong.
    """

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (at offset {offset:#x})")
        self.offset = offset


def _host(flags: int) -> str | None:
    for bit, name in ((FLAG_LINUX, "linux"), (FLAG_WINDOWS, "windows"), (FLAG_MAC, "mac")):
        if flags & bit:
            return name
    return None


def _described(kind: int, sm: int, vmajor: int, vminor: int, flags: int) -> dict:
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
    if sm == 0:
        return None
    suffix = "a" if flags & FLAG_ARCH_SPECIFIC else ("f" if flags & FLAG_FAMILY else "")
    try:
        return Arch(sm // 10, sm % 10, suffix)
    except ValueError:
        return None


@dataclass(frozen=True, eq=False)
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
        ``"none"``, ``"lz4"``, ``"zstd"`` or ``"obfuscated"``.
    stored_size : int
        Bytes the payload occupies in the container (padding included).
    size : int
        Size of the payload once decompressed (for uncompressed entries, as stored).
    offset : int
        File offset of the entry header.
    flags : int
        The raw flags word.
    members : tuple of FatbinEntry
        For ``"concat"`` entries, the entries stored in its one compressed stream (their ``offset``
        is the parent's and their ``stored_size`` is 0).
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
    members: tuple[FatbinEntry, ...] = ()
    _buf: object = field(default=None, repr=False)
    _payload: int = field(default=0, repr=False)  # buffer offset of the payload
    _compressed: int = field(default=0, repr=False)  # compressed byte count
    _parent: FatbinEntry | None = field(default=None, repr=False)
    _member_offset: int = field(default=0, repr=False)

    def as_dict(self) -> dict:
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

    def data(self) -> bytes:
        """The payload, decompressed (LZ4 block or zstd) and checked against the header's size.

        ELF payloads are trimmed to the ELF image (the container pads entries to 8 bytes), so they
        equal ``cuobjdump -xelf`` output. PTX is returned as stored: minified and NUL-terminated.

        Raises
        ------
        FatbinFormatError
            The payload is obfuscated, fails to decompress, or its size differs from the header.
        """
        if self._parent is not None:
            stream = self._parent.data()
            end = self._member_offset + self.size
            if end > len(stream):
                raise FatbinFormatError(
                    f"concatenated member ({self.kind}) runs past its stream ({end} > {len(stream)} bytes)", self.offset
                )
            return (
                _trim_elf(stream[self._member_offset : end])
                if self.kind == "elf"
                else stream[self._member_offset : end]
            )
        raw = self._buf[self._payload : self._payload + (self._compressed or self.stored_size)]
        if self.compression == "obfuscated":
            raise FatbinFormatError(
                f"{self.kind} entry payload is obfuscated (flag 0x10000); it cannot be decoded", self.offset
            )
        out = bytes(raw) if self.compression == "none" else _decompress(self.compression, raw, self.size, self.offset)
        return _trim_elf(out) if self.kind == "elf" else out

    def __repr__(self) -> str:
        arch = f" {self.arch}" if self.arch else ""
        ident = f" {self.identifier!r}" if self.identifier else ""
        return f"<FatbinEntry {self.kind}{arch}{ident} {self.size} bytes, {self.compression} at {self.offset:#x}>"


def _trim_elf(data: bytes) -> bytes:
    try:
        header = read_header(data)
    except ElfFormatError:
        return data
    end = max(header.shoff + header.shnum * header.shentsize, header.phoff + header.phnum * header.phentsize)
    return data[:end] if 0 < end <= len(data) else data


def _decompress(method: str, raw, size: int, offset: int) -> bytes:
    try:
        if method == "lz4":
            import lz4.block

            out = lz4.block.decompress(bytes(raw), uncompressed_size=size)
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


@dataclass(frozen=True, eq=False)
class Fatbin:
    """One fat binary: its header and entries.

    Attributes
    ----------
    entries : tuple of FatbinEntry
        Top-level entries in container order (a ``"concat"`` entry holds its own members).
    offset : int
        File offset of the fatbin header.
    size : int
        Bytes of the whole fatbin (header included).
    version : int
        Container version (1).
    section : str or None
        The ELF section it came from (``".nv_fatbin"``, ``"__nv_relfatbin"``), or ``None`` for a raw fatbin.
    """

    entries: tuple[FatbinEntry, ...]
    offset: int
    size: int
    version: int
    section: str | None = None

    def iter_entries(self, *, flatten: bool = True) -> Iterator[FatbinEntry]:
        """Yield the entries; with ``flatten`` (default) concat entries are replaced by their members."""
        for entry in self.entries:
            if flatten and entry.kind == "concat":
                yield from entry.members
            else:
                yield entry

    def __repr__(self) -> str:
        where = f" in {self.section}" if self.section else ""
        return f"<Fatbin {len(self.entries)} entries, {self.size} bytes at {self.offset:#x}{where}>"


def _open(source):
    """Return a buffer over ``source``; paths are memory-mapped read-only."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size == 0:
                    return memoryview(b"")
                return memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))
        except OSError as e:
            raise OSError(e.errno, f"cannot read {path!r}: {e.strerror}") from None
    try:
        view = memoryview(source)
    except TypeError:
        raise TypeError(f"expected bytes-like data or a path; got {type(source).__name__}") from None
    if view.ndim != 1 or view.format != "B":
        view = view.cast("B")
    return view


def read_fatbin(source) -> Fatbin:
    """Read a raw fatbin from bytes-like data or a path.

    Parameters
    ----------
    source : bytes, bytearray, memoryview, str or os.PathLike

    Returns
    -------
    Fatbin

    Raises
    ------
    FatbinFormatError
        Not a fatbin, or malformed (truncated, sizes past the end, bad entry headers).
    """
    buf = _open(source)
    return _parse(buf, 0, len(buf), None)


def iter_fatbins(source) -> Iterator[Fatbin]:
    """Yield every fatbin in a raw fatbin or a host ELF file (``.so``, ``.o``, executable).

    In ELF files the sections ``.nv_fatbin`` and ``__nv_relfatbin`` are read; several fatbins may sit
    back to back in one section. Each :class:`Fatbin` records its ``section`` and file ``offset``.
    Files are memory-mapped: only the headers are touched while listing.

    Raises
    ------
    FatbinFormatError
        The data is neither a fatbin nor an ELF file, or a fatbin in it is malformed.
    """
    buf = _open(source)
    head = bytes(buf[:4])
    if head == _MAGIC_BYTES:
        yield from _walk(buf, 0, len(buf), None)
        return
    if head != ELF_MAGIC:
        raise FatbinFormatError("neither a fatbin (magic 0xBA55ED50) nor an ELF file", 0)
    try:
        header = read_header(buf)
        if header.machine == EM_CUDA:
            raise FatbinFormatError("this is a cubin, not a fatbin or a host file with fatbins", 0)
        sections = [s for s in iter_sections(buf, header) if s.name in _SECTIONS and s.type != 8]
    except ElfFormatError as e:
        raise FatbinFormatError(f"malformed ELF file: {e}", e.offset) from None
    for section in sections:
        yield from _walk(buf, section.offset, section.offset + section.size, section.name)


def _walk(buf, start: int, end: int, section: str | None) -> Iterator[Fatbin]:
    """Fatbins back to back in [start, end). Between them only zero padding (to 8 bytes) may stand."""
    pos = start
    while pos < end:
        if bytes(buf[pos : pos + 4]) == _MAGIC_BYTES:
            fatbin = _parse(buf, pos, end, section)
            yield fatbin
            pos += fatbin.size
            continue
        if pos == start:
            raise FatbinFormatError(f"no fatbin magic at the start of {section or 'the data'}", pos)
        gap = bytes(buf[pos : min(end, pos + _MAX_GAP)])
        nxt = gap.find(_MAGIC_BYTES)
        if gap[: nxt if nxt >= 0 else len(gap)].strip(b"\0"):
            raise FatbinFormatError(f"unexpected non-zero bytes between fatbins in {section or 'the data'}", pos)
        if nxt < 0:
            if pos + len(gap) < end:
                raise FatbinFormatError(f"over {_MAX_GAP} bytes of padding after a fatbin", pos)
            return
        pos += nxt


def _u(fmt: str, buf, offset: int, limit: int, what: str) -> tuple:
    size = struct.calcsize(fmt)
    if offset < 0 or offset + size > limit:
        raise FatbinFormatError(f"truncated {what}: need {size} bytes, {max(0, limit - offset)} left", offset)
    return struct.unpack_from(fmt, buf, offset)


def _parse(buf, start: int, limit: int, section: str | None) -> Fatbin:
    magic, version, header_size, body = _u("<IHHQ", buf, start, limit, "fatbin header")
    if magic != _MAGIC_INT:
        raise FatbinFormatError(f"wrong magic {magic:#010x}; a fatbin starts with 0xba55ed50", start)
    if header_size < 16:
        raise FatbinFormatError(f"fatbin header size {header_size} is below 16", start + 6)
    end = start + header_size + body
    if end > limit:
        raise FatbinFormatError(
            f"fatbin declares {body} bytes of entries but only {max(0, limit - start - header_size)} follow", start + 8
        )
    entries = []
    pos = start + header_size
    while pos < end:
        entry, stride = _parse_entry(buf, pos, end)
        entries.append(entry)
        pos += stride
    return Fatbin(tuple(entries), start, end - start, version, section)


def _string(buf, entry_start: int, off: int, length: int, limit: int, what: str) -> str:
    begin = entry_start + off
    if off < _ENTRY_SIZE or begin + length > limit:
        raise FatbinFormatError(f"{what} ({length} bytes at +{off:#x}) lies outside the entry header", entry_start)
    return bytes(buf[begin : begin + length]).decode("utf-8", "replace")


def _header_fields(buf, pos: int, limit: int) -> tuple:
    return _u(_ENTRY.format, buf, pos, limit, "entry header")


def _parse_entry(buf, pos: int, end: int) -> tuple[FatbinEntry, int]:
    (kind, _hver, hsize, psize, csize, opt_off, vminor, vmajor, sm, id_off, id_len, flags, _key, usize) = (
        _header_fields(buf, pos, end)
    )
    if hsize < _ENTRY_SIZE or pos + hsize > end:
        raise FatbinFormatError(f"entry header size {hsize} is outside 64..{end - pos}", pos + 4)
    if psize > end - pos - hsize:
        raise FatbinFormatError(f"entry payload of {psize} bytes runs past the end of the fatbin", pos + 8)
    header_end = pos + hsize
    identifier = _string(buf, pos, id_off, id_len, header_end, "identifier") if id_off else None
    members: tuple[FatbinEntry, ...] = ()
    options = None
    if kind not in (0x02, 0x100) and opt_off:  # ELF entries point there to .nv.compat attributes, not text
        s_off, s_len = _u("<II", buf, pos + opt_off, header_end, "options record")
        options = _string(buf, pos, s_off, s_len, header_end, "options string") if s_len else ""
    compression = "none"
    if flags & FLAG_OBFUSCATED:
        compression = "obfuscated"
    elif flags & FLAG_ZSTD:
        compression = "zstd"
    elif flags & FLAG_LZ4:
        compression = "lz4"
    if compression in ("zstd", "lz4"):
        if csize == 0 or csize > psize:
            raise FatbinFormatError(f"compressed size {csize} is not within the {psize}-byte payload", pos + 0x10)
        if usize > MAX_EXPANSION * csize + 4096:
            raise FatbinFormatError(
                f"uncompressed size {usize} is over {MAX_EXPANSION}x the {csize} compressed bytes", pos + 0x38
            )
        size = usize
    else:
        size = usize if compression == "obfuscated" and usize else psize
    entry = FatbinEntry(
        **_described(kind, sm, vmajor, vminor, flags),
        identifier=identifier,
        options=options,
        compression=compression,
        stored_size=psize,
        size=size,
        offset=pos,
        _buf=buf,
        _payload=header_end,
        _compressed=csize if compression in ("zstd", "lz4") else 0,
    )
    if kind == 0x100:
        members = _parse_members(buf, pos, opt_off, header_end, entry)
        object.__setattr__(entry, "members", members)
    return entry, hsize + psize


def _parse_members(buf, pos: int, table_off: int, header_end: int, parent: FatbinEntry) -> tuple[FatbinEntry, ...]:
    """Members of a concatenated entry: ``u32 count, u32 table size`` then member headers back to back."""
    if table_off < _ENTRY_SIZE:
        raise FatbinFormatError("concatenated entry has no member table", pos + 0x14)
    count, table_size = _u("<II", buf, pos + table_off, header_end, "member table header")
    table_end = pos + table_off + table_size
    if table_size < 8 or table_end > header_end or count > (table_size - 8) // _ENTRY_SIZE:
        raise FatbinFormatError(f"member table ({count} members, {table_size} bytes) does not fit the header", pos)
    members = []
    m = pos + table_off + 8
    for _ in range(count):
        (kind, _hv, stream_off, msize, _cs, opt_off, vminor, vmajor, sm, id_off, id_len, flags, _k, _us) = (
            _header_fields(buf, m, table_end)
        )
        extent = _ENTRY_SIZE
        identifier = options = None
        if id_off:
            identifier = _string(buf, m, id_off, id_len, table_end, "member identifier")
            extent = max(extent, id_off + id_len + 1)
        if opt_off and kind != 0x02:
            s_off, s_len = _u("<II", buf, m + opt_off, table_end, "member options record")
            options = _string(buf, m, s_off, s_len, table_end, "member options") if s_len else ""
            extent = max(extent, opt_off + 8, s_off + s_len + 1)
        if stream_off + msize > parent.size:
            raise FatbinFormatError(
                f"member at stream offset {stream_off} ({msize} bytes) runs past the {parent.size}-byte stream", m
            )
        members.append(
            FatbinEntry(
                **_described(kind, sm, vmajor, vminor, flags),
                identifier=identifier,
                options=options,
                compression=parent.compression,
                stored_size=0,
                size=msize,
                offset=pos,
                _buf=buf,
                _parent=parent,
                _member_offset=stream_off,
            )
        )
        m += (extent + 7) // 8 * 8
    return tuple(members)
