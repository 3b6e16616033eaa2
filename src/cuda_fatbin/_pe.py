# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""A minimal, bounds-checked PE/COFF reader: Windows images (``.dll``, ``.pyd``, ``.exe``) and COFF objects.

The Windows counterpart of :mod:`cuda_fatbin._elf`, for the fatbin reader. It reads the section table of
any buffer and checks every offset against the buffer size, so a truncated or hostile file raises
:class:`PeFormatError` instead of reading out of bounds or allocating from a header field. The layout
(Microsoft's "PE Format" specification) and where nvcc puts device code are in ``docs/formats.md``.

Work is linear in the section count (at most 65,535 sections of 40 bytes, which must lie in the
file), and section names are read at most :data:`MAX_NAME` bytes each.
"""

from __future__ import annotations

import bisect
import collections
import struct

from ._errors import Error

__all__ = [
    "MZ_MAGIC",
    "PeFormatError",
    "PeSection",
    "is_coff_object",
    "iter_pe_fatbins",
    "read_sections",
    "wrapper_targets",
]

MZ_MAGIC = b"MZ"
PE_SIGNATURE = b"PE\0\0"
#: Section names read from the string table are cut at this many bytes (as ``_elf.MAX_NAME``).
MAX_NAME = 256
#: The machines whose COFF objects are read (``IMAGE_FILE_MACHINE_*``): x64, ARM64, x86.
COFF_MACHINES = (0x8664, 0xAA64, 0x14C)
_SCN_UNINITIALIZED = 0x80  # IMAGE_SCN_CNT_UNINITIALIZED_DATA: no bytes in the file
_FILE_HEADER = struct.Struct("<HHIIIHH")  # machine, sections, time, symbol table, symbols, optional size, flags
_SECTION = struct.Struct("<8sIIIIIIHHI")  # 40 bytes
_SYMBOL_SIZE = 18
#: The record the CUDA runtime registers each fatbin with (``.nvFatBi``; ``.nvFatBinSegment`` in ELF files).
WRAPPER = struct.Struct("<IIQQ")
WRAPPER_MAGIC = 0x466243B1


class PeFormatError(Error, ValueError):
    """A PE image or COFF object is malformed: truncated, or a header field points outside the data.

    Attributes
    ----------
    message : str
        What is wrong, without the offset.
    offset : int
        Offset in the file where the bad field or the missing data is.

    Examples
    --------
    >>> from cuda_fatbin._pe import PeFormatError, read_sections
    >>> try:
    ...     read_sections(b"MZ" + bytes(62))
    ... except PeFormatError as e:
    ...     print(e.message)
    no PE signature at the offset the DOS header gives (0x0)
    """

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (at offset {offset:#x})")
        self.message = message
        self.offset = offset


TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, NamedTuple

    from ._container import Fatbin
    from ._elf import Buffer
    from ._source import _Data

    class PeSection(NamedTuple):
        """One section: its name, where its bytes are in the file, and its address in the image."""

        name: str
        offset: int
        size: int
        address: int

else:
    PeSection = collections.namedtuple("PeSection", "name offset size address")
    PeSection.__doc__ = "One section: its name, its bytes in the file (offset, size) and its address in the image."


def _unpack(st: struct.Struct, buf: Buffer, offset: int, what: str) -> tuple[Any, ...]:
    if offset + st.size > len(buf):
        raise PeFormatError(f"{what} truncated: need {st.size} bytes, {max(0, len(buf) - offset)} left", offset)
    return st.unpack_from(buf, offset)


def is_coff_object(buf: Buffer) -> bool:
    """True when ``buf`` starts like a COFF object (a ``.obj``, a member of a ``.lib``) of a known machine.

    A COFF object has no magic number: its first field is the machine, and an object has no optional
    header. Both are checked, and that the section table fits the data.

    Examples
    --------
    >>> from cuda_fatbin._pe import is_coff_object
    >>> is_coff_object(b"\\x64\\x86\\x01\\x00" + bytes(36)), is_coff_object(b"hello world, not an object")
    (False, False)
    """
    if len(buf) < _FILE_HEADER.size:
        return False
    machine, count, _t, _sym, _n, optional, _f = _FILE_HEADER.unpack_from(buf, 0)
    return machine in COFF_MACHINES and optional == 0 and count > 0 and _FILE_HEADER.size + 40 * count <= len(buf)


def read_sections(buf: Buffer) -> list[PeSection]:
    """The sections of a PE image (``MZ`` ... ``PE\\0\\0``) or COFF object, bounds-checked, in table order.

    A section's file bytes are ``[offset, offset + size)``: the raw data the file holds, no more than
    the section's virtual size in an image (the loader zero-fills the rest); uninitialised sections have
    size 0. Long names (``/123``, an offset in the COFF string table) are resolved.

    Raises
    ------
    PeFormatError
        If a header, the section table, a section's data or a name lies outside ``buf``.

    Examples
    --------
    >>> from cuda_fatbin._pe import read_sections
    >>> obj = b"\\x64\\x86\\x01\\x00" + bytes(16) + b".nv_fatb" + bytes(8) + (4).to_bytes(4, "little")
    >>> obj += (60).to_bytes(4, "little") + bytes(16) + b"data"
    >>> read_sections(obj)
    [PeSection(name='.nv_fatb', offset=60, size=4, address=0)]
    """
    if bytes(buf[:2]) == MZ_MAGIC:
        (pe_at,) = _unpack(struct.Struct("<I"), buf, 0x3C, "DOS header")
        if bytes(buf[pe_at : pe_at + 4]) != PE_SIGNATURE:
            raise PeFormatError(f"no PE signature at the offset the DOS header gives ({pe_at:#x})", 0x3C)
        header_at, image = pe_at + 4, True
    else:
        header_at, image = 0, False
    _machine, count, _t, symbols_at, symbols, optional, _flags = _unpack(_FILE_HEADER, buf, header_at, "COFF header")
    table = header_at + _FILE_HEADER.size + optional
    if table + count * _SECTION.size > len(buf):
        raise PeFormatError(f"section table of {count} entries x 40 bytes runs past the end ({len(buf)} bytes)", table)
    strings = _string_table(buf, symbols_at, symbols)
    out = []
    for i in range(count):
        at = table + i * _SECTION.size
        raw_name, vsize, address, raw_size, raw_at, _r, _l, _nr, _nl, flags = _SECTION.unpack_from(buf, at)
        size = 0 if flags & _SCN_UNINITIALIZED or raw_at == 0 else raw_size
        if image and vsize:
            size = min(size, vsize)
        if raw_at + size > len(buf):
            raise PeFormatError(
                f"section {i} ({size} bytes at {raw_at:#x}) runs past the end of the data ({len(buf)} bytes)", at
            )
        out.append(PeSection(_name(buf, raw_name, strings, at), raw_at if size else 0, size, address))
    return out


def _string_table(buf: Buffer, symbols_at: int, symbols: int) -> tuple[int, int] | None:
    """``(offset, size)`` of the COFF string table, which follows the symbol table, or ``None`` if there is none."""
    if not symbols_at:
        return None
    at = symbols_at + symbols * _SYMBOL_SIZE
    if at + 4 > len(buf):
        return None  # an image's stripped symbol table: names are then all short
    (size,) = struct.unpack_from("<I", buf, at)
    return at, min(size, len(buf) - at)


def _name(buf: Buffer, raw: bytes, strings: tuple[int, int] | None, at: int) -> str:
    short = raw.rstrip(b"\0")
    if not short.startswith(b"/") or not short[1:].isdigit():
        return short.decode("latin-1")
    offset = int(short[1:])
    if strings is None or not 4 <= offset < strings[1]:
        raise PeFormatError(f"section name {short.decode('latin-1')!r} points outside the string table", at)
    start = strings[0] + offset
    text = bytes(buf[start : min(strings[0] + strings[1], start + MAX_NAME)])
    nul = text.find(b"\0")
    return (text if nul < 0 else text[:nul]).decode("latin-1")


def image_base(buf: Buffer) -> int:
    """The preferred load address of a PE image (its optional header's ``ImageBase``); 0 for an object.

    Raises
    ------
    PeFormatError
        If the optional header is truncated or of an unknown kind.
    """
    if bytes(buf[:2]) != MZ_MAGIC:
        return 0
    (pe_at,) = _unpack(struct.Struct("<I"), buf, 0x3C, "DOS header")
    optional_at = pe_at + 4 + _FILE_HEADER.size
    (magic,) = _unpack(struct.Struct("<H"), buf, optional_at, "optional header")
    if magic == 0x20B:  # PE32+
        return int(_unpack(struct.Struct("<Q"), buf, optional_at + 24, "optional header")[0])
    if magic == 0x10B:  # PE32
        return int(_unpack(struct.Struct("<I"), buf, optional_at + 28, "optional header")[0])
    raise PeFormatError(f"unknown optional header magic {magic:#x}", optional_at)


def wrapper_targets(buf: Buffer, sections: list[PeSection], wrappers: PeSection) -> list[int]:
    """The file offsets of the fatbins that the registration records of ``wrappers`` (``.nvFatBi``) point to.

    Each record is ``{u32 magic 0x466243B1, u32 version, u64 fatbin address, u64 extra}``; the address is
    a virtual address in the image, mapped to the file through the section that holds it. Records are
    read while they start with the magic; a record pointing outside every section's file bytes is an error.

    Raises
    ------
    PeFormatError
        If the optional header is malformed or a record points outside the file's sections.
    """
    base = image_base(buf)
    spans = sorted((s.address, s.address + s.size, s.offset) for s in sections if s.size)
    starts = [lo for lo, _hi, _off in spans]
    out = []
    for at in range(wrappers.offset, wrappers.offset + wrappers.size - WRAPPER.size + 1, WRAPPER.size):
        magic, _version, address, _extra = WRAPPER.unpack_from(buf, at)
        if magic != WRAPPER_MAGIC:
            break
        rva = address - base
        i = bisect.bisect_right(starts, rva) - 1  # sections may overlap: the last one starting at or below it
        found = spans[i][2] + rva - spans[i][0] if i >= 0 and rva < spans[i][1] else None
        if found is None:
            raise PeFormatError(f"a fatbin registration record points to {address:#x}, outside the file's sections",
                                at)  # fmt: skip
        out.append(found)
    return out


#: The sections nvcc puts device code in, in PE images and COFF objects: registered (the names are cut to
#: the 8 characters an image's section table holds) and, in ``-rdc`` objects, relocatable.
REGISTERED = ".nv_fatb"
RELOCATABLE = "__nv_relfatbin"
WRAPPERS = ".nvFatBi"


def iter_pe_fatbins(src: _Data, embedded: bool, relocatable: bool | None) -> Iterator[Fatbin]:
    """The fatbins of a PE image or COFF object, as :func:`cuda_fatbin.iter_fatbins` yields an ELF file's.

    ``.nv_fatb`` sections are walked as ``.nv_fatbin`` is; a fatbin that a ``.nvFatBi`` registration
    record points to outside them is read too (registered); ``__nv_relfatbin`` as in ELF objects; with
    ``embedded``, every section with file bytes is searched for fatbins stored as data.
    """
    from ._container import _parse
    from ._reader import FatbinFormatError, _scan, _Seen, _walk

    try:
        sections = read_sections(src.view)
        targets = [t for s in sections if s.name == WRAPPERS and s.size for t in wrapper_targets(src.view, sections, s)]
    except PeFormatError as e:
        raise FatbinFormatError(f"malformed PE/COFF file: {e.message}", e.offset) from None
    if relocatable is None:
        relocatable = not any(s.name == REGISTERED for s in sections)  # cuobjdump's rule for ELF files
    seen = _Seen(len(src))
    done: set[tuple[int, int]] = set()
    for s in sorted(sections, key=lambda s: (s.offset, s.size)):
        if s.name not in (REGISTERED, RELOCATABLE) or not s.size or (s.offset, s.size) in done:
            continue
        done.add((s.offset, s.size))
        if s.name == RELOCATABLE and not relocatable:
            seen.claim(s.offset, s.offset + s.size)
            continue
        yield from _walk(src, s.offset, s.offset + s.size, s.name, seen)
    holders = sorted((s.offset, s.offset + s.size, s.name) for s in sections if s.size)
    for target in sorted(set(targets)):
        if target in seen.by_start:
            continue
        owner = seen.inside(target)
        if owner is not None:
            raise FatbinFormatError(
                f"a registered fatbin at {target:#x} starts inside the fatbin at {owner:#x}", target
            )
        _start, end, name = holders[bisect.bisect_right(holders, (target, 1 << 64, "")) - 1]  # wrapper_targets found it
        if bytes(src.view[target : target + 4]) != b"\x50\xed\x55\xba":
            raise FatbinFormatError(
                f"no fatbin at {target:#x}, where a registration record in {WRAPPERS} points", target
            )
        fatbin = _parse(src, target, end, name)
        seen.claim(target, target + fatbin.size)
        yield fatbin
    if embedded:
        ranges = [(s.offset, s.offset + s.size, i) for i, s in enumerate(sections) if s.size]
        yield from _scan(src, ranges, seen, lambda i: sections[i].name)
