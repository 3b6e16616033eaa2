# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""What one SASS image (an ELF cubin) holds for ``cuda-fatbin size``: its bytes by section category, its kernels
(``.text.NAME`` sections) with the bytes of the sections each owns and a CRC-32 of its code. Used by
:mod:`._size`, which measures binaries; every read is bounded (see :func:`_sass`)."""

from __future__ import annotations

import re
import zlib

from ._elf import MAX_NAME, SHT_NOBITS, name_at, name_table, read_header, section_headers
from ._kernels import MAX_NAME as KERNEL_NAME

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._elf import Buffer, ElfHeader

    #: a section name's category, kernel, dot-suffixes and the work it cost to read (_NAMES)
    _Name = tuple[str, str | None, tuple[str, ...], int]

__all__ = ["CATEGORIES"]

#: Categories of the bytes of a SASS image (an ELF cubin), by section name (first match wins); ``headers`` is
#: what no section holds (ELF header, program and section header tables, alignment).
CATEGORIES = ("code", "mercury", "constant", "info", "relocations", "debug", "symbols", "data", "other", "headers")
_CATEGORY_RULES = (
    ("code", re.compile(r"\.text(\.|$)")),
    ("mercury", re.compile(r"\.nv\.(cap)?merc")),  # Mercury code of sm_100 and later
    ("constant", re.compile(r"\.nv\.constant")),
    ("info", re.compile(r"\.nv\.info|\.nv\.callgraph|\.nv\.prototype|\.nv\.compat|\.note")),
    ("relocations", re.compile(r"\.rela?(\.|$)")),
    ("debug", re.compile(r"\.debug|\.nv_debug|\.nv\.debug")),
    ("symbols", re.compile(r"\.symtab|\.strtab|\.shstrtab")),
    ("data", re.compile(r"\.nv\.global|\.nv\.rel|\.data|\.rodata|\.nv\.unified")),
)

_CATEGORY_OF: dict[str, str] = {}  # section names seen in this process (bounded below)


def _category(name: str) -> str:
    known = _CATEGORY_OF.get(name)
    if known is not None:
        return known
    found = next((category for category, rule in _CATEGORY_RULES if rule.match(name)), "other")
    if len(_CATEGORY_OF) >= 1 << 14:
        _CATEGORY_OF.clear()
    _CATEGORY_OF[name] = found
    return found


def _tables(raw: memoryview) -> tuple[memoryview, ElfHeader, list[tuple[int, int, int, int]]] | None:
    """The image ``_trim_elf`` cuts from ``raw`` with its header and section rows, read once; ``None`` where the
    image or its cut is not all well (``_trim_elf`` and :func:`_sass` then say what is wrong, as they read it)."""
    try:
        header = read_header(raw)
        rows = section_headers(raw, header)
    except ValueError:
        return None
    if header.shnum == 0:  # extended numbering: the table's end is not in the header
        return None
    # as _trim_elf cuts: after the headers and tables and the last section with file content, only zeros
    tables = max(header.shoff + header.shnum * header.shentsize, header.phoff + header.phnum * header.phentsize, 64)
    end = max([tables, *[offset + size for _n, typ, offset, size in rows if typ != SHT_NOBITS]])
    if end < len(raw):
        if bytes(raw[end:]).count(0) != len(raw) - end:
            return None
        raw = raw[:end]
    return raw, header, rows


def _sass(
    data: Buffer, header: ElfHeader | None = None, rows: list[tuple[int, int, int, int]] | None = None
) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int, int, int], ...], int]:
    """A SASS image's bytes by category, its kernels, and 1 when it cannot be parsed (its bytes then all "other").

    A kernel (or device function) is a ``.text.NAME`` section: ``(NAME, bytes of code, bytes of its own sections,
    CRC-32 of its code)``, its own sections being the code and every section whose name ends with ``.NAME``
    (``.nv.info.NAME``, ``.nv.constant0.NAME``, ``.rel.text.NAME``: the longest such suffix wins).
    """
    try:
        if header is None or rows is None:  # (given: read from these bytes by _tables)
            header = read_header(data)
            rows = section_headers(data, header)
        table, known = _names_of(name_table(data, header)) if rows else (b"", {})
    except ValueError:
        return (("other", len(data)),), (), 1
    cats: dict[str, int] = {}
    kernels: dict[str, list[int]] = {}
    owned = []  # (the name's suffixes, bytes) of the sections a kernel may own
    held, whole = 0, len(data)
    ranges = set()  # the (offset, size) of the sections counted
    budget = 8 * len(table) + (1 << 20)  # the work long names cost: linear in the image, however they overlap
    named = known.get
    for name_off, typ, offset, size in rows:
        if typ == SHT_NOBITS or not size:
            continue
        place = (offset, size)
        if place in ranges:  # a second name for bytes counted (.nv.merc.nv.global.init is .nv.global.init): once
            continue
        ranges.add(place)
        held += size
        if held > whole:  # sections that overlap otherwise (real ones do not): each would be counted and read
            return (("other", len(data)),), (), 1
        category, kernel, suffixes, cost = named(name_off) or _name_info(table, name_off, known)
        if cost:
            budget -= cost
            if budget < 0:  # names that overlap far beyond their table (real ones are stored once each): forged
                return (("other", len(data)),), (), 1
        if category in cats:
            cats[category] += size
        else:
            cats[category] = size
        if kernel is not None:
            row = kernels.get(kernel)
            if row is None:
                kernels[kernel] = [size, size, zlib.crc32(data[offset : offset + size])]
            else:
                row[0] += size
                row[1] += size
                row[2] = zlib.crc32(data[offset : offset + size], row[2])
        elif suffixes:
            owned.append((suffixes, size))
    cats["headers"] = cats.get("headers", 0) + max(0, len(data) - held)
    for suffixes, size in owned if kernels else ():
        for suffix in suffixes:  # the longest suffix that names a kernel
            owner = kernels.get(suffix)
            if owner is not None:
                owner[1] += size
                break
    return tuple(cats.items()), tuple((k, code, own, crc) for k, (code, own, crc) in kernels.items()), 0


#: What the section names of the images read in this process are, by name table (images of one library share
#: a few: libcurand.so.10's 1,624 hold 26): name offset -> (category, kernel of a ``.text.NAME`` section, the
#: name's ``.``-separated suffixes, longest first, by which a kernel owns a section). Bounded.
_NAMES: dict[bytes, dict[int, _Name]] = {}
_NAMES_HELD = [0]  # table bytes and names held
_NAMES_MAX, _NAMES_HELD_MAX = 1 << 12, 1 << 24  # tables, and their bytes and names


def _names_of(table: bytes) -> tuple[bytes, dict[int, _Name]]:
    known = _NAMES.get(table)
    if known is None:
        if len(_NAMES) >= _NAMES_MAX or _NAMES_HELD[0] >= _NAMES_HELD_MAX:
            _NAMES.clear()
            _NAMES_HELD[0] = 0
        known = _NAMES[table] = {}
        _NAMES_HELD[0] += len(table)
    return table, known


def _name_info(table: bytes, name_off: int, known: dict[int, _Name]) -> _Name:
    """``(category, kernel, suffixes, cost)`` of the section name at ``name_off`` (see :data:`_NAMES`).

    The category is the name's as every reader here cuts it (:data:`~cuda_fatbin._elf.MAX_NAME` bytes); a name cut
    there is read again as long as ``_kernels`` keeps a kernel's (CUTLASS names run to KiBs), for its kernel and
    its suffixes (the first :data:`_SUFFIXES`), and ``cost`` is that work, which :func:`_sass` bounds per image.
    """
    name = name_at(table, name_off)
    category = _category(name)
    cost = 0
    if len(name) == MAX_NAME:
        name = name_at(table, name_off, 64 + KERNEL_NAME)
        cost = len(name)
    kernel = None
    if category == "code" and name.startswith(".text."):
        kernel = name[6:] if len(name) <= 6 + KERNEL_NAME else name[6 : 6 + KERNEL_NAME] + "…"
    # a kernel's section is ".PREFIX.NAME": two dots at least (".nv.info", ".symtab" are looked up for none)
    suffixes: tuple[str, ...] = ()
    if kernel is None and name.count(".") > 1:
        dots = [i for i in range(1, len(name)) if name[i] == "."][:_SUFFIXES]
        suffixes = tuple(name[i + 1 :] for i in dots)
        cost *= 1 + len(suffixes)
    info = known[name_off] = (category, kernel, suffixes, cost)
    _NAMES_HELD[0] += len(name) * (1 + len(suffixes))
    return info


#: Dot-suffixes of a section name tried as the kernel that owns it (``.nv.constant0.NAME``: "constant0.NAME",
#: "NAME"); a kernel name of more dots than this leaves its sections unowned
_SUFFIXES = 8
