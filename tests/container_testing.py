# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Build small PE images, COFF objects and ar archives with chosen layouts (llvm-readobj and cuobjdump check them)."""

from __future__ import annotations

import struct

IMAGE_BASE = 0x180000000
WRAPPER_MAGIC = 0x466243B1


def make_pe(
    sections: list[tuple[str, bytes]],
    *,
    image: bool = True,
    virtual_sizes: dict[str, int] | None = None,
    wrappers_to: list[tuple[str, int]] | None = None,
) -> bytes:
    """A PE32+ image (``image``) or an x64 COFF object whose sections are ``(name, data)``, in file order.

    Names over 8 bytes go to the COFF string table (``/4``...). ``wrappers_to`` adds a ``.nvFatBi``
    section of registration records pointing at ``(section name, offset in it)``. Section ``i`` is at
    address ``0x1000 * (i + 1)``.
    """
    sections = list(sections)
    if wrappers_to is not None:
        sections.append((".nvFatBi", b""))  # filled below, once the addresses are known
    address = {name: 0x1000 * (i + 1) for i, (name, _d) in enumerate(sections)}
    if wrappers_to is not None:
        records = b"".join(struct.pack("<IIQQ", WRAPPER_MAGIC, 1, IMAGE_BASE + address[n] + off, 0)
                           for n, off in wrappers_to)  # fmt: skip
        sections[-1] = (".nvFatBi", records)
    optional = struct.pack("<HBBIIIIIQ", 0x20B, 14, 0, 0, 0, 0, 0, 0x1000, IMAGE_BASE) + bytes(240 - 32)
    optional = optional if image else b""
    header_at = 0x80 if image else 0
    table_at = header_at + (4 if image else 0) + 20 + len(optional)
    data_at = table_at + 40 * len(sections)
    data_at += -data_at % 16
    strings = b""
    rows, body = [], b""
    for name, data in sections:
        raw = name.encode("latin-1")
        if len(raw) > 8:
            raw = f"/{4 + len(strings)}".encode()
            strings += name.encode("latin-1") + b"\0"
        where = data_at + len(body)
        vsize = (virtual_sizes or {}).get(name, len(data)) if image else 0
        rows.append(struct.pack("<8sIIIIIIHHI", raw, vsize, address[name] if image else 0, len(data), where if data
                                else 0, 0, 0, 0, 0, 0x40000040))  # fmt: skip
        body += data + bytes(-len(data) % 16)
    symbols_at = data_at + len(body) if strings else 0
    file_header = struct.pack(
        "<HHIIIHH", 0x8664, len(sections), 0, symbols_at, 0, len(optional), 0x2022 if image else 0
    )
    out = bytearray()
    if image:
        out += b"MZ" + bytes(0x3A) + struct.pack("<I", header_at) + bytes(header_at - 0x40) + b"PE\0\0"
    out += file_header + optional + b"".join(rows)
    out += bytes(data_at - len(out)) + body
    if strings:
        out += struct.pack("<I", 4 + len(strings)) + strings
    return bytes(out)


def ar_header(name: bytes, size: int) -> bytes:
    """A 60-byte ar member header (``name`` as it stands in the header: ``ka.o/``, ``/0``, ``#1/12``)."""
    return (name.ljust(16) + b"0".ljust(12) + b"0".ljust(6) + b"0".ljust(6) + b"644".ljust(8)
            + str(size).encode().ljust(10) + b"`\n")  # fmt: skip


def make_ar(members: list[tuple[str, bytes]], *, style: str = "gnu") -> bytes:
    """An ar archive of ``members`` with GNU (a ``//`` long-name table for names over 15 bytes) or BSD
    (``#1/N`` names before the data) names, and a symbol table first, as ``ar rcs`` writes one."""
    out = bytearray(b"!<arch>\n")
    symtab = struct.pack(">I", 0) if style == "gnu" else struct.pack("<I", 0) * 2
    if style == "gnu":
        out += ar_header(b"/", len(symtab)) + symtab
        long_names = b"".join(n.encode() + b"/\n" for n, _d in members if len(n) > 15)
        if long_names:
            out += ar_header(b"//", len(long_names)) + long_names + b"\n" * (len(long_names) & 1)
    else:
        name = b"__.SYMDEF SORTED".ljust(20, b"\0")
        out += ar_header(b"#1/20", len(name) + len(symtab)) + name + symtab
    offset = 0
    for name, data in members:
        raw = name.encode()
        if style == "bsd":
            padded = raw.ljust((len(raw) + 3) // 4 * 4, b"\0")
            out += ar_header(b"#1/%d" % len(padded), len(padded) + len(data)) + padded + data
            size = len(padded) + len(data)
        elif len(raw) > 15:
            out += ar_header(b"/%d" % offset, len(data)) + data
            offset += len(raw) + 2
            size = len(data)
        else:
            out += ar_header(raw + b"/", len(data)) + data
            size = len(data)
        out += b"\n" * (size & 1)
    return bytes(out)
