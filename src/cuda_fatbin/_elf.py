# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""A minimal, bounds-checked ELF header and section-table reader.

Shared by :mod:`cuda_fatbin._detect` (cubin arch, ``.nv.compat``) and the fatbin reader (fatbins
embedded in host objects). It reads only what it is asked for from any buffer (bytes, memoryview,
mmap) and checks every offset against the buffer size, so a truncated or hostile file raises
:class:`ElfFormatError` instead of reading out of bounds or allocating from a header field.
"""

from __future__ import annotations

import collections
import operator
import struct
import sys
from array import array
from collections.abc import Callable, Iterator

from ._errors import Error

__all__ = [
    "ET_REL",
    "SHT_NOBITS",
    "ElfFormatError",
    "ElfHeader",
    "ElfSection",
    "find_section_by_type",
    "iter_sections",
    "name_at",
    "name_table",
    "read_header",
    "section_headers",
    "section_link",
]

ELF_MAGIC = b"\x7fELF"
EM_CUDA = 190
#: ``sh_type`` of a section that occupies no file space (``.bss``; in cubins ``.nv.shared.*``, ``.nv.global``)
SHT_NOBITS = 8
#: NVIDIA's section types that occupy no file space, in relocatable cubins (``nvcc -rdc=true``, sm_80 to
#: sm_120, nvcc 13.0): ``.nv.global`` (``0x70000007``) and ``.nv.shared.KERNEL`` (``0x7000000a``), where a
#: whole-program cubin has ``SHT_NOBITS`` for the same sections; their declared size is memory the driver
#: reserves, not bytes of the file (tests/test_elf.py builds them with nvcc).
_CUDA_NOBITS = frozenset({0x70000007, 0x7000000A})
#: Section names are read up to this many bytes (a longer name is cut): real names are under 100 bytes,
#: and a section table can hold a name for every 40 bytes of the file.
MAX_NAME = 256


class ElfFormatError(Error, ValueError):
    """An ELF image is malformed: truncated, or a header field points outside the data.

    Attributes
    ----------
    offset : int
        Offset in the image where the bad field or the missing data is.
    """

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (at offset {offset:#x})")
        self.message = message
        self.offset = offset


ET_REL = 1  # e_type of a relocatable object (.o)


TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time: benchmarks/bench_cli.py)
if TYPE_CHECKING:
    import mmap
    from typing import Any, NamedTuple, TypeAlias

    #: What the readers accept: any bytes-like object that supports ``len``, indexing and slicing.
    Buffer: TypeAlias = "bytes | bytearray | memoryview | mmap.mmap"

    class ElfHeader(NamedTuple):
        """The ELF file header fields this package uses."""

        bits: int  # 32 or 64
        osabi: int
        abi_version: int
        machine: int
        flags: int
        phoff: int
        phentsize: int
        phnum: int
        shoff: int
        shentsize: int
        shnum: int
        shstrndx: int
        type: int = 0  # e_type: 1 relocatable, 2 executable, 3 shared object
        order: str = "<"  # byte order of the header fields: "<" little-endian, ">" big-endian (EI_DATA 2)

    class ElfSection(NamedTuple):
        """One section header: its name, type and where its bytes are in the file."""

        name: str
        type: int
        offset: int
        size: int

else:  # the same types at run time, without the typing module
    ElfHeader = collections.namedtuple(
        "ElfHeader",
        "bits osabi abi_version machine flags phoff phentsize phnum shoff shentsize shnum shstrndx type order",
        defaults=(0, "<"),
    )  # fmt: skip
    ElfHeader.__doc__ = ("The ELF file header fields this package uses (``type``: e_type, 1 relocatable; ``order``: "
                         "``'<'`` little-endian, ``'>'`` big-endian).")  # fmt: skip
    ElfSection = collections.namedtuple("ElfSection", "name type offset size")
    ElfSection.__doc__ = "One section header: its name, type and where its bytes are in the file."


def _unpack(fmt: str, buf: Buffer, offset: int) -> tuple[Any, ...]:
    size = struct.calcsize(fmt)  # offsets are sums of unsigned header fields: never negative
    if offset + size > len(buf):
        raise ElfFormatError(f"ELF data truncated: need {size} bytes, {max(0, len(buf) - offset)} left", offset)
    return struct.unpack_from(fmt, buf, offset)


def read_header(buf: Buffer) -> ElfHeader:
    """Read the ELF file header of ``buf`` (any buffer): 32- or 64-bit, little- or big-endian.

    A big-endian file (``EI_DATA`` 2: s390x, ppc64, SPARC, MIPS hosts) is read with its own byte order
    (``header.order`` is ``">"``); CUDA device code is little-endian, so such a file is a host binary.

    Raises
    ------
    ElfFormatError
        If ``buf`` is not an ELF image, names no valid class or byte order, or its header is truncated.

    Examples
    --------
    >>> ident = b"\\x7fELF" + bytes([2, 2, 1]) + bytes(9)  # 64-bit, big-endian
    >>> header = read_header(ident + bytes([0, 2, 0, 22]) + bytes(44))  # ET_EXEC, EM_S390
    >>> header.bits, header.order, header.machine, header.type
    (64, '>', 22, 2)
    """
    if len(buf) < 16 or bytes(buf[:4]) != ELF_MAGIC:
        raise ElfFormatError("not an ELF image (no \\x7fELF magic)", 0)
    ei_class, ei_data = buf[4], buf[5]
    if ei_data not in (1, 2):
        raise ElfFormatError(f"invalid ELF data encoding {ei_data} (1 little-endian, 2 big-endian)", 5)
    order = "<" if ei_data == 1 else ">"
    if ei_class == 2:
        (machine, _ver, _entry, phoff, shoff, flags, _ehsize, phentsize, phnum, shentsize, shnum, shstrndx) = _unpack(
            order + "HIQQQIHHHHHH", buf, 18
        )
        bits, min_entsize = 64, 64
    elif ei_class == 1:
        (machine, _ver, _entry, phoff, shoff, flags, _ehsize, phentsize, phnum, shentsize, shnum, shstrndx) = _unpack(
            order + "HIIIIIHHHHHH", buf, 18
        )
        bits, min_entsize = 32, 40
    else:
        raise ElfFormatError(f"invalid ELF class {ei_class}", 4)
    (e_type,) = _unpack(order + "H", buf, 16)
    if shoff and shentsize < min_entsize:
        raise ElfFormatError(
            f"section header entry size {shentsize} is below {min_entsize}", 0x3A if bits == 64 else 0x2E
        )
    return ElfHeader(
        bits, buf[7], buf[8], machine, flags, phoff, phentsize, phnum, shoff, shentsize, shnum, shstrndx, e_type, order
    )


def _section_header(buf: Buffer, header: ElfHeader, index: int) -> tuple[int, int, int, int]:
    off = header.shoff + index * header.shentsize
    if header.bits == 64:
        name, typ, _flags, _addr, offset, size = _unpack(header.order + "IIQQQQ", buf, off)
    else:
        name, typ, _flags, _addr, offset, size = _unpack(header.order + "IIIIII", buf, off)
    return name, typ, offset, size


_SHDR64 = struct.Struct("<II16xQQ24x")  # name, type, offset, size of a 64-byte Elf64_Shdr
_SHDR32 = struct.Struct("<II8xII16x")  # the same of a 40-byte Elf32_Shdr
#: the section-header layouts by (bits, byte order)
_SHDR = {(64, "<"): _SHDR64, (32, "<"): _SHDR32, (64, ">"): struct.Struct(">II16xQQ24x"),
         (32, ">"): struct.Struct(">II8xII16x")}  # fmt: skip


_TYPE, _OFFSET, _SIZE = operator.itemgetter(1), operator.itemgetter(2), operator.itemgetter(3)  # of a row


def section_headers(buf: Buffer, header: ElfHeader, fd: int | None = None) -> list[tuple[int, int, int, int]]:
    """``(name offset, type, offset, size)`` of every section, bounds-checked, without reading names.

    The type of every section that occupies no file space is :data:`SHT_NOBITS`: in CUDA images
    (``EM_CUDA``) that includes NVIDIA's own types for them in relocatable cubins (:data:`_CUDA_NOBITS`),
    so that every reader tests one type.

    One ``struct.iter_unpack`` over the table: cheap enough to run on every cubin a builder is given.
    With ``fd``, the descriptor of the file ``buf`` maps, only the rows the file holds are read: a row
    wholly in a hole (``SEEK_DATA``/``SEEK_HOLE``) is all zeros, a null section that names nothing, and is
    left out, so a table of holes costs what the file holds, not its apparent size.

    Raises
    ------
    ElfFormatError
        If the table or a section lies outside ``buf``.
    """
    if header.shoff == 0:
        return []
    shnum = section_count(buf, header)
    table = _SHDR[header.bits, header.order]
    end = header.shoff + shnum * header.shentsize
    if end > len(buf):
        raise ElfFormatError(
            f"section table of {shnum} entries x {header.shentsize} bytes runs past the end ({len(buf)} bytes)",
            header.shoff,
        )
    runs = [(0, shnum)] if fd is None else _rows_held(fd, header, shnum, table.size)
    rows: list[tuple[int, int, int, int]] = []
    indexes: list[int] = []  # each row's section index, for the error below
    for first, stop in runs:
        if header.shentsize == table.size:
            rows += table.iter_unpack(buf[header.shoff + first * table.size : header.shoff + stop * table.size])
        else:
            rows += (_section_header(buf, header, i) for i in range(first, stop))
        indexes += range(first, stop)
    if header.machine == EM_CUDA and not _CUDA_NOBITS.isdisjoint(map(_TYPE, rows)):
        rows = [(name, SHT_NOBITS if typ in _CUDA_NOBITS else typ, o, sz) for name, typ, o, sz in rows]
    n = len(buf)
    # SHT_NOBITS (shared memory, .bss) occupies no file space whatever its size
    bad = []
    if max(map(operator.add, map(_OFFSET, rows), map(_SIZE, rows)), default=0) > n:  # asked at C speed first
        bad = [i for i, (_name, typ, offset, size) in enumerate(rows) if offset + size > n and typ != SHT_NOBITS]
    if bad:
        i = bad[0]
        raise ElfFormatError(
            f"section {indexes[i]} ({rows[i][3]} bytes at {rows[i][2]:#x}) runs past the end of the data ({n} bytes)",
            header.shoff + indexes[i] * header.shentsize,
        )
    return rows


def section_count(buf: Buffer, header: ElfHeader) -> int:
    """The number of sections: ``e_shnum``, or section 0's size under extended numbering (``e_shnum`` 0).

    Raises
    ------
    ElfFormatError
        If section 0 lies outside ``buf``.
    """
    if header.shoff == 0:
        return 0
    if header.shnum == 0:  # extended numbering: the count lives in section 0's size
        return int(_section_header(buf, header, 0)[3])
    return int(header.shnum)


def section_link(buf: Buffer, header: ElfHeader, index: int) -> int:
    """``sh_link`` of section ``index``: the section it refers to (a symbol table's string table).

    Raises
    ------
    ElfFormatError
        If the section's header lies outside ``buf``.
    """
    off = header.shoff + index * header.shentsize + (40 if header.bits == 64 else 24)
    return int(_unpack(header.order + "I", buf, off)[0])


def _rows_held(fd: int, header: ElfHeader, shnum: int, row: int) -> list[tuple[int, int]]:
    """``[first, stop)`` runs of the section rows whose first ``row`` bytes touch data the file holds."""
    import errno
    import os

    start, end, step = header.shoff, header.shoff + shnum * header.shentsize, header.shentsize
    runs: list[tuple[int, int]] = []
    pos = start
    while pos < end:
        try:
            data = os.lseek(fd, pos, os.SEEK_DATA)
            hole = os.lseek(fd, data, os.SEEK_HOLE)
        except AttributeError:  # no SEEK_DATA on this platform: all is data
            data, hole = pos, end
        except OSError as e:  # ENXIO: only holes after pos; another error: read it all
            if e.errno == errno.ENXIO:
                break
            data, hole = pos, end
        if data >= end:
            break
        first = max(0, (data - start - row) // step + 1)  # the first row whose bytes end past ``data``
        stop = min(shnum, -(-(min(hole, end) - start) // step))  # past the last row that starts before the hole
        if runs and first <= runs[-1][1]:
            runs[-1] = (runs[-1][0], max(runs[-1][1], stop))
        elif first < stop:
            runs.append((first, stop))
        pos = max(hole, pos + 1)
    return runs


def find_section_by_type(buf: Buffer, header: ElfHeader, sh_type: int) -> tuple[int, int] | None:
    """``(offset, size)`` of the first section of type ``sh_type``, after checking the whole table.

    The fast path of :func:`section_headers` for 64-bit images with standard headers: the table is read
    as arrays of integers, so a cubin of a hundred sections costs a few microseconds.

    Raises
    ------
    ElfFormatError
        If the table or a section lies outside ``buf``.
    """
    native = sys.byteorder == "little" and header.order == "<"  # the arrays below read the host's byte order
    if header.bits != 64 or header.shentsize != 64 or header.shnum == 0 or not native:
        rows = section_headers(buf, header)
        return next(((offset, size) for _n, typ, offset, size in rows if typ == sh_type), None)
    end = header.shoff + header.shnum * 64
    if end > len(buf):
        raise ElfFormatError(
            f"section table of {header.shnum} entries x 64 bytes runs past the end ({len(buf)} bytes)", header.shoff
        )
    raw = bytes(buf[header.shoff : end])
    words = array("Q", raw)  # 8 words an entry: name|type, flags, addr, offset, size, link|info, align, entsize
    offsets, sizes = words[3::8], words[4::8]
    if max(map(operator.add, offsets, sizes)) > len(buf):
        section_headers(buf, header)  # the slow path says which section, or accepts SHT_NOBITS ones
    types = array("I", raw)[1::16]
    try:
        i = types.index(sh_type)
    except ValueError:
        return None
    return offsets[i], sizes[i]


def iter_sections(buf: Buffer, header: ElfHeader | None = None) -> Iterator[ElfSection]:
    """Yield the sections of the ELF image in ``buf`` with their names.

    Every section header and every section's data range is checked to lie within ``buf``
    (``SHT_NOBITS`` sections, which occupy no file space, are yielded with their declared size).

    Raises
    ------
    ElfFormatError
        If the section table or a section lies outside ``buf``.
    """
    header = header or read_header(buf)
    rows = section_headers(buf, header)
    if not rows:
        return
    name_of = section_namer(buf, header, rows)
    for name_off, typ, offset, size in rows:
        yield ElfSection(name_of(name_off), typ, offset, size)


def section_namer(buf: Buffer, header: ElfHeader, rows: list[tuple[int, int, int, int]]) -> Callable[[int], str]:
    """A function from a section's name offset to its name (at most :data:`MAX_NAME` bytes, Latin-1).

    ``rows`` are :func:`section_headers`' (not empty; the name table's row is read from ``buf`` by its index,
    as ``rows`` may leave out rows in holes). Names are read when asked for, so a caller that needs few of
    them keeps none of the others.

    Raises
    ------
    ElfFormatError
        If the section-name table index or the table is out of bounds.
    """
    str_off, str_size = _name_table(buf, header)
    return lambda name_off: _read_name(buf, str_off, str_size, name_off)


def name_table(buf: Buffer, header: ElfHeader) -> bytes:
    """A copy of the section-name table (``.shstrtab``) of the image in ``buf``, for :func:`name_at`: for a
    reader that names every section (copied once, linear), where :func:`section_namer` reads each name when asked.

    Raises
    ------
    ElfFormatError
        If the section-name table index or the table is out of bounds.

    Examples
    --------
    >>> import struct
    >>> names = b" .text.k .shstrtab ".replace(b" ", bytes(1))  # each name ends with a NUL
    >>> shdr = struct.Struct("<II16xQQ24x")
    >>> table = shdr.pack(0, 0, 0, 0) + shdr.pack(1, 1, 64, 0) + shdr.pack(9, 3, 64, len(names))
    >>> image = (bytes([127, 69, 76, 70, 2, 1, 1]) + bytes(9) + struct.pack("<HHIQQQIHHHHHH", 1, 190, 1, 0, 0,
    ...          64 + len(names), 0, 64, 0, 0, 64, 3, 2) + names + table)
    >>> header = read_header(image)
    >>> table = name_table(image, header)
    >>> [name_at(table, row[0]) for row in section_headers(image, header)]
    ['', '.text.k', '.shstrtab']
    """
    str_off, str_size = _name_table(buf, header)
    return bytes(buf[str_off : str_off + str_size])


def name_at(table: bytes, name_off: int, limit: int = MAX_NAME) -> str:
    """The name at ``name_off`` of a :func:`name_table`: up to its NUL, the table's end or ``limit`` bytes
    (:data:`MAX_NAME`: as :func:`section_namer` reads it), Latin-1 (``""`` past the table)."""
    if name_off >= len(table):
        return ""
    end = min(len(table), name_off + limit)
    nul = table.find(b"\0", name_off, end)
    return table[name_off : end if nul < 0 else nul].decode("latin-1")


def _name_table(buf: Buffer, header: ElfHeader) -> tuple[int, int]:
    """``(offset, size)`` of the section-name table, checked to lie within ``buf``."""
    shstrndx = header.shstrndx
    if shstrndx == 0xFFFF:  # extended numbering: the real index lives in section 0's sh_link
        shstrndx = _unpack(header.order + "I", buf, header.shoff + (40 if header.bits == 64 else 24))[0]
    count = section_count(buf, header)
    if shstrndx >= count:
        raise ElfFormatError(f"section-name table index {shstrndx} is not below the section count {count}", 0)
    _n, _t, str_off, str_size = _section_header(buf, header, shstrndx)  # rows may leave out rows in holes
    if str_off + str_size > len(buf):
        raise ElfFormatError("section-name table runs past the end of the data", str_off)
    return int(str_off), int(str_size)


def _read_name(buf: Buffer, table_off: int, table_size: int, name_off: int) -> str:
    if name_off >= table_size:
        return ""
    start = table_off + name_off
    end = min(table_off + table_size, start + MAX_NAME)
    raw = bytes(buf[start:end])
    nul = raw.find(b"\0")
    return (raw if nul < 0 else raw[:nul]).decode("latin-1")
