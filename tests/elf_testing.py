# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Build small ELF images with chosen section tables, for tests of the ELF reader (readelf is the oracle)."""

from __future__ import annotations

import struct


def make_elf(
    sections: list[tuple[str, int, bytes]],
    *,
    bits: int = 64,
    shentsize: int | None = None,
    extended: bool = False,
    e_type: int = 1,
    machine: int = 62,
    osabi: int = 0,
    abi_version: int = 0,
    flags: int = 0,
) -> bytes:
    """An ELF image whose sections are ``(name, sh_type, data)`` after the null section, then ``.shstrtab``.

    ``shentsize`` pads each section header (readers must step by it); ``extended`` uses extended
    numbering: ``e_shnum = 0`` and ``e_shstrndx = SHN_XINDEX``, the real values in section 0.
    """
    ehsize, std = (64, 64) if bits == 64 else (52, 40)
    shentsize = shentsize or std
    names = b"\0"
    name_offsets = []
    for name, _t, _d in [*sections, (".shstrtab", 3, b"")]:
        name_offsets.append(len(names))
        names += name.encode() + b"\0"
    body = bytearray()
    placed = []  # (offset, size)
    for _name, _t, data in sections:
        while (ehsize + len(body)) % 8:
            body.append(0)
        placed.append((ehsize + len(body), len(data)))
        body += data
    placed.append((ehsize + len(body), len(names)))
    body += names
    while (ehsize + len(body)) % 8:
        body.append(0)
    shoff = ehsize + len(body)
    count = len(sections) + 2  # null, sections, .shstrtab
    strndx = count - 1
    table = bytearray()
    rows = [(0, 0, 0, count if extended else 0, strndx if extended else 0)]
    rows += [(name_offsets[i], t, placed[i][0], placed[i][1], 0) for i, (_n, t, _d) in enumerate(sections)]
    rows.append((name_offsets[-1], 3, placed[-1][0], placed[-1][1], 0))
    for name_off, sh_type, offset, size, link in rows:
        if bits == 64:
            row = struct.pack("<IIQQQQIIQQ", name_off, sh_type, 0, 0, offset, size, link, 0, 1, 0)
        else:
            row = struct.pack("<IIIIIIIIII", name_off, sh_type, 0, 0, offset, size, link, 0, 1, 0)
        table += row + bytes(shentsize - len(row))
    ident = b"\x7fELF" + bytes([2 if bits == 64 else 1, 1, 1, osabi, abi_version]) + bytes(7)
    e_shnum = 0 if extended else count
    e_shstrndx = 0xFFFF if extended else strndx
    if bits == 64:
        header = ident + struct.pack("<HHIQQQIHHHHHH", e_type, machine, 1, 0, 0, shoff, flags, ehsize, 0, 0,
                                     shentsize, e_shnum, e_shstrndx)  # fmt: skip
    else:
        header = ident + struct.pack("<HHIIIIIHHHHHH", e_type, machine, 1, 0, 0, shoff, flags, ehsize, 0, 0,
                                     shentsize, e_shnum, e_shstrndx)  # fmt: skip
    return bytes(header + body + table)


def patched(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    """A copy of ``data`` with ``value`` packed (``struct`` format ``fmt``) at ``offset``: one field edited."""
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)
