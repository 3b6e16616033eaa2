# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""What a blob of bytes is, and which arch it targets.

The one home of byte sniffing. Magic numbers and header layouts are documented in
``docs/formats.md`` (the LTO-IR header fields used here were read off NVRTC 12.9/13.x output).
"""

from __future__ import annotations

import collections
import re
import struct

from ._arch import Arch
from ._elf import ELF_MAGIC, EM_CUDA, ElfFormatError, find_section_by_type, iter_sections, read_header

__all__ = ["KINDS", "Detected", "detect"]

#: Every kind :func:`detect` can return.
KINDS = ("fatbin", "cubin", "ptx", "ltoir", "tile_ir", "nvvm", "host_elf")

FATBIN_MAGIC = b"\x50\xed\x55\xba"
LTOIR_MAGIC = b"\xed\x43\x4e\x7f"
TILE_IR_MAGIC = b"\x7fTileIR\x00"
_BITCODE_MAGICS = (b"BC\xc0\xde", b"\xde\xc0\x17\x0b")  # raw LLVM bitcode, bitcode wrapper

_SHT_NV_COMPAT = 0x70000086
_COMPAT_ATTR_ARCH_SPECIFIC = 0x09

_PTX_TARGET_RE = re.compile(rb"^[ \t]*\.target[ \t]+([A-Za-z0-9_]+)", re.M)
_PTX_VERSION_RE = re.compile(rb"^[ \t]*\.version[ \t]+([0-9]+)\.([0-9]+)", re.M)
_PTX_SM_RE = re.compile(r"sm_([0-9]+[af]?)")
# NVRTC 13.x writes LTO-IR for sm_110 with the SM code 101: sm_101 was renamed sm_110 in CUDA 13.
_LTOIR_SM_ALIASES = {101: 110}


TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time: benchmarks/bench_cli.py)
if TYPE_CHECKING:
    from typing import NamedTuple

    from ._container import Fatbin, FatbinEntry
    from ._elf import Buffer, ElfHeader

    class Detected(NamedTuple):
        """The result of :func:`detect` (documented at run time: ``Detected.__doc__``)."""

        kind: str
        arch: Arch | None

else:
    Detected = collections.namedtuple("Detected", "kind arch")
    Detected.__doc__ = """The result of :func:`detect`: a kind from :data:`KINDS` and the arch, if the data records one.

    Attributes
    ----------
    kind : str
        One of :data:`KINDS`: ``"fatbin"``, ``"cubin"``, ``"ptx"``, ``"ltoir"``, ``"tile_ir"``,
        ``"nvvm"`` or ``"host_elf"``.
    arch : Arch or None
        The arch the data records, or ``None`` (fatbins, NVVM IR, host objects).

    Examples
    --------
    >>> from cuda_fatbin import detect
    >>> found = detect(".version 9.0\\n.target sm_90a\\n.address_size 64\\n")
    >>> found.kind, str(found.arch)
    ('ptx', 'sm_90a')
    """


def _as_bytes_like(data: Buffer | str) -> memoryview:
    if isinstance(data, str):
        data = data.encode()
    try:
        view = memoryview(data)
    except TypeError:
        raise TypeError(f"expected bytes, bytearray, memoryview or str; got {type(data).__name__}") from None
    if not view.c_contiguous:
        raise ValueError("data must be a contiguous buffer")
    return view.cast("B")  # any format and shape, as flat unsigned bytes


def detect(data: Buffer | str) -> Detected:
    """Tell what ``data`` is and which arch it targets.

    Parameters
    ----------
    data : bytes, bytearray, memoryview or str
        A fatbin, cubin, PTX (text), LTO-IR, Tile IR bytecode, NVVM IR (LLVM bitcode) or host ELF
        object. ``str`` is taken as PTX text.

    Returns
    -------
    Detected
        ``(kind, arch)``. ``arch`` is ``None`` where the data records none (fatbin, Tile IR, NVVM IR,
        host objects) or where an LTO-IR header has an unknown layout. A cubin's ``f`` suffix is never
        recorded in the cubin and so never detected; an ``a`` suffix is.

    Raises
    ------
    ValueError
        If the data is empty or of no known kind, or a cubin's ELF header is truncated or malformed.

    Examples
    --------
    >>> from cuda_fatbin import detect
    >>> detect(".version 8.8\\n.target sm_120\\n.address_size 64\\n").kind
    'ptx'
    >>> detect(b"\\x50\\xed\\x55\\xba" + bytes(12)).kind  # the fatbin magic
    'fatbin'
    >>> detect(b"hello")
    Traceback (most recent call last):
        ...
    ValueError: ...
    """
    view = _as_bytes_like(data)
    if len(view) == 0:
        raise ValueError("empty data: nothing to detect")
    head = bytes(view[:8])
    if head[:4] == FATBIN_MAGIC:
        return Detected("fatbin", None)
    if head[:4] == ELF_MAGIC:
        try:
            header = read_header(view)
        except ElfFormatError as e:
            raise ValueError(f"malformed ELF data: {e}") from None
        if header.machine != EM_CUDA:
            return Detected("host_elf", None)
        return Detected("cubin", cubin_arch(view)[0])
    if head[:4] == LTOIR_MAGIC:
        return Detected("ltoir", ltoir_arch(view))
    if head == TILE_IR_MAGIC:
        return Detected("tile_ir", None)
    if head[:4] in _BITCODE_MAGICS:
        return Detected("nvvm", None)
    target = ptx_target(view) if is_text(view[:TEXT_PROBE]) else None
    if target is not None:
        return Detected("ptx", target)
    raise ValueError(
        f"unrecognised data ({len(view)} bytes starting {head.hex(' ')}): not a fatbin, cubin, PTX, LTO-IR, "
        "Tile IR, NVVM IR or host ELF object"
    )


#: Bytes at the start of data that must be text before PTX directives are looked for in it.
TEXT_PROBE = 4096
# control characters that never appear in PTX text (NUL, and all but tab, newline, vertical tab, form feed, CR)
_BINARY_BYTES = bytes(b for b in range(32) if b not in b"\t\n\v\f\r") + b"\x7f"


def is_text(head: Buffer) -> bool:
    """True when ``head`` (the first :data:`TEXT_PROBE` bytes of some data, or fewer) can be PTX text.

    PTX is never sniffed out of binary data: a control character other than whitespace in the first
    :data:`TEXT_PROBE` bytes says it is not text (a DLL holds ``.version`` and ``.target`` lines in its
    stored PTX). PTX taken out of a fatbin ends with NUL bytes: a run of them is allowed at the end of
    ``head``.

    Examples
    --------
    >>> is_text(b".version 9.0\\n.target sm_90\\n\\0"), is_text(b"MZ\\x90\\0\\x03")
    (True, False)
    """
    raw = bytes(head).rstrip(b"\0")
    return len(raw.translate(None, _BINARY_BYTES)) == len(raw)


def cubin_arch(data: Buffer) -> tuple[Arch, bool]:
    """Return a cubin's arch and whether its ``a`` marker is known.

    Parameters
    ----------
    data : buffer
        A CUDA ELF image (``e_machine`` 190).

    Returns
    -------
    (Arch, bool)
        The arch (``a`` suffix included where the cubin records it), and ``True`` when the cubin
        says definitely whether it is ``a`` (ELF ABI 7 flags, ptxas 12.9 flags, or the ``.nv.compat``
        attribute of ptxas 13+), ``False`` when it cannot tell (then the caller's suffix stands).

    Raises
    ------
    ValueError
        If the data is not a well-formed CUDA ELF image (truncated, section table out of bounds).
    """
    view = _as_bytes_like(data)
    try:
        header = read_header(view)
        if header.machine != EM_CUDA:
            raise ValueError(f"not a cubin: ELF e_machine is {header.machine}, not {EM_CUDA} (EM_CUDA)")
        compat = find_section_by_type(view, header, _SHT_NV_COMPAT)
    except ElfFormatError as e:
        raise ValueError(f"malformed cubin: {e}") from None
    flags = header.flags
    sm, a_flag, new_abi = flags_sm(header)
    known = a_flag or not new_abi
    if new_abi and compat is not None:
        value = _compat_attribute(view, compat[0], compat[1], _COMPAT_ATTR_ARCH_SPECIFIC)
        if value is not None:
            a_flag, known = a_flag or bool(value), True
    try:
        return Arch(sm // 10, sm % 10, "a" if a_flag else ""), known
    except ValueError as e:
        raise ValueError(f"cubin e_flags {flags:#x} give no valid arch: {e}") from None


def flags_sm(header: ElfHeader) -> tuple[int, bool, bool]:
    """A cubin's SM number and ``a`` flag from its ELF header's ``e_flags`` alone, and whether the layout is
    the one of ELF ABI 8 and later (where ptxas 13+ may record the ``a`` in ``.nv.compat`` instead).

    The one home of the ``e_flags`` layouts (docs/formats.md): :func:`cubin_arch` adds ``.nv.compat``;
    :attr:`FatbinEntry.payload_mismatch`, which compares SM numbers only, reads no further than the header.
    """
    flags = header.flags
    if header.abi_version >= 8 or header.osabi == 0x41:
        return (flags >> 8) & 0xFF, bool(flags & 0x8), True
    return flags & 0xFF, bool(flags & 0x800), False


def cubin_has_code(data: Buffer) -> bool:
    """True when a cubin has a code section (``.text.<function>``) or defines a variable (a module of
    ``__device__``/``__constant__`` variables only: the program uses them); a device-link stub has neither.

    Raises
    ------
    ValueError
        If the data is not a well-formed ELF image.
    """
    from ._kernels import cubin_defines_data

    view = _as_bytes_like(data)
    try:
        return any(s.name.startswith(".text.") for s in iter_sections(view)) or cubin_defines_data(view)
    except ElfFormatError as e:
        raise ValueError(f"malformed cubin: {e}") from None


def _compat_attribute(view: memoryview, offset: int, size: int, wanted: int) -> int | None:
    """Find attribute ``wanted`` in a ``.nv.compat`` section: records ``{u8 format, u8 attr, value}``.

    Formats: 1 no value (u16 pad), 2 u8 value (+pad), 3 u16 value, 4 u16 size + that many bytes.
    """
    pos, end = offset, offset + size
    while pos + 4 <= end:
        fmt, attr = view[pos], view[pos + 1]
        if fmt == 4:
            (length,) = struct.unpack_from("<H", view, pos + 2)
            step = 4 + length
        elif fmt in (1, 2, 3):
            step = 4
        else:
            return None
        if attr == wanted:
            if fmt == 2:
                return view[pos + 2]
            if fmt == 3:
                value: int = struct.unpack_from("<H", view, pos + 2)[0]
                return value
            return None
        pos += step
    return None


def ptx_target(data: Buffer | str) -> Arch | None:
    """The arch of PTX text from its ``.target`` directive (``sm_90a`` keeps its suffix), or ``None``.

    ``None`` means the data has no ``.version`` and ``.target`` directives, i.e. is not PTX.

    Raises
    ------
    ValueError
        If the ``.target`` directive names no valid ``sm_XX`` arch.
    """
    view = _as_bytes_like(data)
    m = _PTX_TARGET_RE.search(view)
    if m is None or _PTX_VERSION_RE.search(view) is None:
        return None
    token = m.group(1).decode("ascii")
    sm = _PTX_SM_RE.fullmatch(token)
    if sm is None:
        raise ValueError(f"PTX .target {token!r} names no sm_XX arch")
    return Arch.parse(sm.group(1))


def ptx_version(data: Buffer | str) -> tuple[int, int] | None:
    """The PTX ISA version from the ``.version`` directive, e.g. ``(9, 0)``, or ``None``."""
    m = _PTX_VERSION_RE.search(_as_bytes_like(data))
    return (int(m.group(1)), int(m.group(2))) if m else None


def ltoir_arch(data: Buffer) -> Arch | None:
    """The arch recorded in an LTO-IR header, or ``None`` if the layout is not the known one.

    The header (NVRTC 12.x/13.x) has, from offset 24, records ``{u16 tag, u16 value}`` ending with tag
    ``0x63``: tag 1 is the SM number times ten, tag ``0x20`` = 1 marks an ``a`` target. The ``f``
    suffix is not recorded, and sm_110 is written as 101 (its name before CUDA 13).
    """
    view = _as_bytes_like(data)
    pos, sm, suffix = 24, None, ""
    for _ in range(16):
        if pos + 4 > len(view):
            return None
        tag, value = struct.unpack_from("<HH", view, pos)
        if tag == 0x63:
            break
        if tag == 1:
            sm = value
        elif tag == 0x20 and value == 1:
            suffix = "a"
        pos += 4
    else:
        return None
    if sm is None or sm % 10:
        return None
    sm = _LTOIR_SM_ALIASES.get(sm // 10, sm // 10)
    try:
        return Arch(sm // 10, sm % 10, suffix)
    except ValueError:
        return None


#: What :func:`file_kind` tells apart. Read: ``elf``, ``fatbin``, ``pe`` (a Windows image), ``coff`` (a
#: Windows ``.obj``); containers whose members are read: ``ar``; refused: ``thin ar``; not read: ``Mach-O``.
FILE_KINDS = ("elf", "fatbin", "pe", "coff", "ar", "thin ar", "Mach-O")
_MACHO = (b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe")
_COFF_MACHINES = (b"\x64\x86", b"\x64\xaa", b"\x4c\x01")  # x64, ARM64, x86 (as _pe.COFF_MACHINES)


def file_kind(head: bytes, name: str = "") -> str | None:
    """The kind of host file ``head`` (its first 20 bytes or more) starts, or ``None`` for none we know.

    One of :data:`FILE_KINDS`. COFF objects have no magic number: a file is taken for one only when its
    ``name`` ends in ``.obj`` and its header has a known machine and no optional header. A universal
    Mach-O file (``CA FE BA BE``) is told from a Java class file (the same magic) by its count of
    architectures, which is below 45 where a class file has its version.

    Examples
    --------
    >>> file_kind(b"\\x7fELF" + bytes(16)), file_kind(b"!<arch>\\n" + bytes(12)), file_kind(b"#!/bin/sh\\n")
    ('elf', 'ar', None)
    """
    if head[:4] == ELF_MAGIC:
        return "elf"
    if head[:4] == FATBIN_MAGIC:
        return "fatbin"
    if head[:2] == b"MZ":
        return "pe"
    if head[:8] == b"!<arch>\n":
        return "ar"
    if head[:8] == b"!<thin>\n":
        return "thin ar"
    universal = head[:4] == b"\xca\xfe\xba\xbe" and len(head) >= 8 and 0 < int.from_bytes(head[4:8], "big") < 45
    if head[:4] in _MACHO or universal:
        return "Mach-O"
    if head[:2] in _COFF_MACHINES and name.lower().endswith(".obj") and len(head) >= 20 and head[16:18] == b"\0\0":
        return "coff"
    return None


#: PTX larger than this is taken to hold code unread: an empty module is a few lines, and a few KiB of the C++
#: library's constants (a line of about 150 bytes each, the file's name twice in it: 5 KiB for ten headers)
_EMPTY_PTX = 64 << 10
#: The lines of a PTX module that declare nothing: its header and comments
_PTX_HEADER = (b".version", b".target", b".address_size", b"//")
#: A line of PTX that declares one of the C++ library's constants (a byte of ``.global``), as nvcc 13.0 writes it
_PTX_CONSTANT = re.compile(rb"\.global\s+\.align\s+\d+\s+\.b8\s+([A-Za-z0-9_$]+)\[\d+\];")


def _ptx_has_code(entry: FatbinEntry) -> bool:
    """False for an empty PTX module (its header only, no function and no variable but the C++ library's
    constants, as in its cubin: :func:`cuda_fatbin._kernels.cubin_defines_data`): nvcc's PTX of a file without
    device code, which a JIT turns into nothing."""
    if entry.size > _EMPTY_PTX:
        return True
    try:
        text = entry.data()
    except ValueError:  # cannot tell, so count it
        return True
    from ._kernels import library_constant

    for raw in text.replace(b"\0", b"").splitlines():
        line = raw.strip()
        if not line or line.startswith(_PTX_HEADER):
            continue
        constant = _PTX_CONSTANT.fullmatch(line)
        if constant is None or not library_constant(constant[1].decode("ascii")):
            return True
    return False


def fatbin_has_code(fb: Fatbin) -> bool:
    """False for a fatbin whose cubins hold no code and whose PTX modules are empty (nvcc's device-link stubs,
    the PTX nvcc writes for a file without device code)."""
    if any(e.kind != "elf" and (e.kind != "ptx" or _ptx_has_code(e)) for e in fb.iter_entries()):
        return True
    for e in fb.iter_entries():
        if e.kind != "elf":
            continue
        try:  # the image's sections, read in place: a sparse payload costs what the file holds, not its size
            if cubin_has_code(e._in_place()):
                return True
        except ValueError:  # FatbinFormatError included: cannot tell, so count it
            return True
    return False
