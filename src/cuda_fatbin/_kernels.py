# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Kernel names: the kernels of a SASS image (ELF cubin) or a PTX text, and their demangled spelling.

The one home of kernel names (``scan`` names the kernels a GPU cannot load; ``diff`` the kernels gained
and lost). Every reader here is linear in its input and bounded: a name is kept up to
:data:`MAX_NAME` bytes (a longer one ends with ``…``), symbol names that overlap beyond what the string
table holds are refused, and demangling runs in a child process with a memory and time limit (a
mangled name of a few hundred bytes can expand to gigabytes, see docs/security.md).

Demangling uses ``cpp-demangle`` (the optional extra ``cuda-fatbin[demangle]``), a binding of the Rust
``cpp_demangle`` crate: memory-safe, fuzzed, with a recursion limit. Without it, or when a name does
not demangle, the mangled name is kept.
"""

from __future__ import annotations

import re
import struct
import sys
from functools import partial

from ._elf import SHT_NOBITS, ElfFormatError, read_header, section_headers, section_link

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable, Iterable, Iterator

    from ._container import FatbinEntry
    from ._elf import Buffer

__all__ = ["MAX_NAME", "MAX_TABLE", "cubin_defines_data", "cubin_kernels", "demangle", "demangle_all", "entry_kernels",
           "ptx_kernels", "start_demangler", "stop_demangler"]  # fmt: skip

#: Bytes of a kernel name kept; a longer name is cut and ends with ``…`` (CUTLASS names reach a few KiB).
MAX_NAME = 16384
#: The largest symbol or string table read, and the largest PTX text searched for ``.entry`` (real ones: a few
#: MiB): a larger one, or one in a hole of a sparse file, is refused rather than read
MAX_TABLE = 64 << 20
_CUT = "…"
_SHT_SYMTAB = 2
_STT_FUNC = 2
#: ``st_other`` bit of a kernel (``cuobjdump -symbols`` prints it as ``ENTRY``; device functions lack it)
_STO_CUDA_ENTRY = 0x10
#: ``st_info`` types of a variable: ``OBJECT``, and NVIDIA's ``CUDA_OBJECT`` (13) in relocatable cubins
_STT_DATA = (1, 13)
#: ``(st_name, st_info, st_other, st_shndx)`` positions in an Elf64_Sym / Elf32_Sym
_SYM = {64: ("IBBHQQ", 24, 0, 1, 2, 3), 32: ("IIIBBH", 16, 0, 3, 4, 5)}
#: nvcc's name of a variable of internal linkage in a namespace: ``_ZN<n>_INTERNAL_<file>`` then its namespace
#: (after a device link: ``__nv_static_<n>__<file>__ZN<n>_INTERNAL_...``)
_INTERNAL = re.compile(r"_ZN(\d{1,9})_INTERNAL_")
#: The C++ library's namespaces (``cuda``, ``thrust``, ``cub``), mangled: its constants of internal linkage are
#: in every translation unit that includes it (nvcc 13.0)
_LIBRARY_NAMESPACES = ("4cuda", "6thrust", "3cub")


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "backslashreplace")


def cubin_kernels(data: Buffer) -> list[str]:
    """The kernels (``__global__`` functions) an ELF cubin defines, in symbol-table order, each once.

    A kernel is a ``FUNC`` symbol marked ``STO_CUDA_ENTRY`` (``cuobjdump -symbols`` prints ``ENTRY``):
    device functions compiled apart (``-rdc``, ``__noinline__``) have a ``.text.NAME`` section too and are
    left out. A cubin without a symbol table names no kernel.

    Raises
    ------
    ElfFormatError
        If ``data`` is not a well-formed ELF image, a symbol or string table is over :data:`MAX_TABLE`
        bytes, or its symbol names overlap beyond what the string table holds (a forged table: real names
        are stored once each).

    Examples
    --------
    >>> from cuda_fatbin import Program, ProgramOptions
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }  __global__ void t(int) {}'
    >>> sorted(cubin_kernels(bytes(Program(src, "c++", ProgramOptions(arch="sm_90")).compile("cubin").code)))
    ['_Z1ti', 'k']
    """
    found: dict[str, None] = {}
    for records, names_of, (at_name, at_info, at_other, _at_shndx) in _symbol_tables(data):
        wanted = {rec[at_name] for rec in records()
                  if rec[at_info] & 0xF == _STT_FUNC and rec[at_other] & _STO_CUDA_ENTRY}  # fmt: skip
        names = names_of(wanted)
        for rec in records():
            if rec[at_name] in names and rec[at_info] & 0xF == _STT_FUNC and rec[at_other] & _STO_CUDA_ENTRY:
                found.setdefault(names[rec[at_name]])
    found.pop("", None)
    return list(found)


def cubin_defines_data(data: Buffer) -> bool:
    """True when an ELF cubin defines a variable that host code can name: an ``OBJECT`` symbol (``CUDA_OBJECT`` in
    a relocatable ``-rdc`` cubin) in a section of its own (``__device__`` and ``__constant__`` variables, in
    ``.nv.global``, ``.nv.global.init``, ``.nv.constant3``), not one of the C++ library's own constants (of
    internal linkage in ``cuda``, ``thrust`` or ``cub``: nvcc names them ``_INTERNAL_<file>4cuda...``), which every
    translation unit that includes it holds. The program's own variables of internal linkage (an anonymous
    namespace, ``static``) count: its host code names them. A module of
    such variables only has no kernel, but a program reads and writes them (``cudaMemcpyToSymbol``): that module
    must load too. nvcc's device-link stubs define none.

    Raises
    ------
    ElfFormatError
        If ``data`` is not a well-formed ELF image or a symbol or string table is over :data:`MAX_TABLE` bytes.

    Examples
    --------
    >>> from cuda_fatbin import Program, ProgramOptions
    >>> cubin = Program("__device__ int table[4];", "c++", ProgramOptions(arch="sm_90")).compile("cubin").code
    >>> cubin_defines_data(bytes(cubin)), cubin_kernels(bytes(cubin))
    (True, [])
    """
    for records, names_of, (at_name, at_info, _at_other, at_shndx) in _symbol_tables(data):
        wanted = {rec[at_name] for rec in records() if rec[at_info] & 0xF in _STT_DATA and rec[at_shndx]}
        if wanted and any(name and not library_constant(name) for name in names_of(wanted).values()):
            return True
    return False


def _symbol_tables(
    data: Buffer,
) -> Iterator[tuple[Callable[[], Iterator[tuple[int, ...]]], Callable[[set[int]], dict[int, str]], tuple[int, ...]]]:
    """Each symbol table of an ELF image: its records (unpacked as they are read, each time asked), a function that
    names the ``st_name`` offsets asked (:func:`_names`), and the positions of ``st_name``, ``st_info``,
    ``st_other`` and ``st_shndx`` in a record. Raises ElfFormatError as :func:`cubin_kernels` says."""
    view = memoryview(data).cast("B")
    header = read_header(view)
    rows = section_headers(view, header)
    fmt, size, *positions = _SYM[header.bits]
    for index, (_n, typ, offset, length) in enumerate(rows):
        if typ != _SHT_SYMTAB:
            continue
        link = section_link(view, header, index)
        if link >= len(rows) or rows[link][1] == SHT_NOBITS:  # no such section, or no bytes in the file
            raise ElfFormatError(f"symbol table {index} names string table {link}, which holds no data", offset)
        if max(length, rows[link][3]) > MAX_TABLE:
            raise ElfFormatError(f"symbol table {index} or its string table is over {MAX_TABLE} bytes", offset)
        records = view[offset : offset + length // size * size]
        strings = rows[link][2], rows[link][3]

        def names_of(wanted: set[int], at: int = offset, table: tuple[int, int] = strings) -> dict[int, str]:
            return _names(bytes(view[table[0] : table[0] + table[1]]), wanted, at)

        yield partial(struct.iter_unpack, header.order + fmt, records), names_of, tuple(positions)


def library_constant(name: str) -> bool:
    """True for a constant of the C++ library (``_ZN<n>_INTERNAL_<file>4cuda3std...``, after a device link
    behind ``__nv_static_<file>_``); a variable of the program's own anonymous namespace, or ``static`` in its
    own namespace, is named ``_INTERNAL_`` too. A length over nine digits is no library's."""
    match = _INTERNAL.search(name)
    if match is None:
        return False
    return name[match.start(1) + len(match[1]) + int(match[1]) :].startswith(_LIBRARY_NAMESPACES)


def _names(table: bytes, offsets: set[int], where: int) -> dict[int, str]:
    """The NUL-terminated names at ``offsets`` of a string table, each byte of it searched once."""
    out: dict[int, str] = {}
    nul = -1  # the first NUL at or after the last offset searched
    budget = 2 * len(table) + 65536  # the bytes of names kept: overlapping names cannot multiply the table
    for off in sorted(offsets):
        if off >= len(table):
            out[off] = ""
            continue
        if off > nul:
            nul = table.find(b"\0", off)
            nul = len(table) if nul < 0 else nul
        end = min(nul, off + MAX_NAME)
        budget -= end - off
        if budget < 0:
            raise ElfFormatError(f"symbol names overlap beyond the {len(table)} bytes of their string table", where)
        out[off] = _text(table[off:end]) + (_CUT if end < nul else "")
    return out


#: ``//`` and ``/* */`` comments (an unclosed one runs to the end), and ``.entry NAME``: one linear pass
_PTX = re.compile(rb"//[^\n]*|/\*(?:.*?\*/|.*)|\.entry\s+([A-Za-z_$%%][A-Za-z0-9_$]{0,%d})" % (MAX_NAME - 1), re.S)
_IDENT_BYTE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$")


def ptx_kernels(text: bytes | str) -> list[str]:
    """The kernels (``.entry`` directives) of a PTX text, in order, each once; comments are skipped.

    Linear in the text whatever it holds (non-UTF-8 bytes, unclosed comments, huge identifiers: a name is
    kept up to :data:`MAX_NAME` bytes and then ends with ``…``).

    Examples
    --------
    >>> ptx_kernels(".visible .entry _Z1ki(\\n.param .u32 p)\\n{ ret; }\\n// .entry old(\\n.entry k2()")
    ['_Z1ki', 'k2']
    """
    raw = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else bytes(text)
    found: dict[str, None] = {}
    for m in _PTX.finditer(raw):
        name = m.group(1)
        if name:
            cut = m.end() < len(raw) and raw[m.end()] in _IDENT_BYTE
            found.setdefault(name.decode("ascii") + (_CUT if cut else ""))
    return list(found)


def entry_kernels(entry: FatbinEntry) -> list[str]:
    """The kernels of one fatbin entry: its cubin's (SASS) or its PTX text's; ``[]`` for other kinds.

    A cubin stored uncompressed is read in place (its tables only: a sparse payload costs what the file
    holds); PTX over :data:`MAX_TABLE` bytes is not searched.

    Raises
    ------
    ValueError
        If the entry's payload cannot be read or decompressed (:class:`~cuda_fatbin.FatbinFormatError`),
        is not a well-formed cubin (:class:`~cuda_fatbin._elf.ElfFormatError`) or is PTX over
        :data:`MAX_TABLE` bytes.

    Examples
    --------
    >>> from cuda_fatbin import Program, read_fatbin
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> fb = read_fatbin(bytes(Program(src, "c++").compile("fatbin", archs=["sm_90"], ptx_for=["sm_90"]).code))
    >>> [(e.kind, entry_kernels(e)) for e in fb.iter_entries()]
    [('elf', ['k']), ('ptx', ['k'])]
    """
    if entry.kind == "elf":
        return cubin_kernels(entry._in_place())
    if entry.kind == "ptx":
        if entry.size > MAX_TABLE:
            raise ValueError(f"PTX of {entry.size} bytes: over {MAX_TABLE}, its kernel names are not read")
        return ptx_kernels(entry.data())
    return []


#: The child process that demangles: its address space and time are capped (see :func:`demangle_all`)
_CHILD = """
import os, sys
try:
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))
except (ImportError, ValueError, OSError):
    pass
sys.path[:0] = sys.argv[3:]
import cpp_demangle
out = []
for name in sys.stdin.buffer.read().split(b"\\0"):
    try:
        text = cpp_demangle.demangle(name.decode())
    except Exception:
        text = ""
    out.append(text.encode("utf-8", "backslashreplace") if len(text) <= int(sys.argv[2]) else b"")
sys.stdout.buffer.write(b"\\0".join(out))
sys.stdout.buffer.flush()
os._exit(0)
"""
#: Limits of one demangling child: address space, seconds; and of one :func:`demangle_all` call
CHILD_MEMORY = 128 << 20
CHILD_SECONDS = 20.0
TOTAL_SECONDS = 60.0
#: A demangled name longer than this is not kept (the mangled one is)
MAX_DEMANGLED = 65536


def _available() -> bool:
    return _where() is not None


def _where() -> list[str] | None:
    """Where ``cpp_demangle`` is imported from (the folder to put on the child's path), ``[]`` where that cannot
    be told (the child then starts with the site's paths), None where it is not installed."""
    import importlib.util
    import os

    spec = importlib.util.find_spec("cpp_demangle")
    if spec is None:
        return None
    if spec.submodule_search_locations or not spec.origin or not os.path.isabs(spec.origin):
        return []  # a package or an unusual loader: found as this process finds it
    return [os.path.dirname(spec.origin)]


def demangle_all(names: Iterable[str]) -> dict[str, str]:
    """Each name's demangled spelling, or the name itself where it does not demangle.

    Only Itanium-mangled names (``_Z...``) of at most :data:`MAX_NAME` characters are tried. They are
    demangled in one child process whose address space (:data:`CHILD_MEMORY`) and time
    (:data:`CHILD_SECONDS`) are capped: a hostile name that expands exponentially (nested substitutions)
    or crashes the demangler takes only that child down; the batch is then split in halves until the
    name is found, and every call stops trying after :data:`TOTAL_SECONDS` (the rest stay mangled).
    Without ``cpp-demangle`` installed (``pip install cuda-fatbin[demangle]``) every name stays mangled.

    Examples
    --------
    >>> d = demangle_all(["_Z5scaleIfEvPT_S0_", "plain", "_Zbogus"])
    >>> d["plain"], d["_Zbogus"]
    ('plain', '_Zbogus')
    >>> d["_Z5scaleIfEvPT_S0_"]
    'void scale<float>(float*, float)'
    """
    import time

    out = {n: n for n in names}
    todo = [n for n in out if n.startswith("_Z") and len(n) <= MAX_NAME and "\0" not in n and _CUT not in n]
    if not todo or not _available():
        return out
    deadline = time.monotonic() + TOTAL_SECONDS
    for name, text in zip(todo, _demangled(todo, deadline), strict=True):
        if text:
            out[name] = text
    return out


#: A demangling child started ahead by :func:`start_demangler`, for the next batch
_AHEAD: list[subprocess.Popen[bytes]] = []


def start_demangler() -> None:
    """Start the demangling child of the next :func:`demangle_all` now, so that its start-up (an interpreter and
    ``cpp_demangle``: ~15 ms) runs while the caller works; :func:`stop_demangler` ends it if it is not used.
    Nothing without ``cpp-demangle``.

    Examples
    --------
    >>> start_demangler()
    >>> demangle_all(["_Z1ki"])["_Z1ki"] in ("k(int)", "_Z1ki")
    True
    >>> stop_demangler()  # nothing left to end: the batch took the child
    """
    if _AHEAD or not _available():
        return
    try:
        _AHEAD.append(_child())
    except OSError:  # no process could be started: the batch tries again, and keeps the names if it cannot
        return


def stop_demangler() -> None:
    """End the child :func:`start_demangler` started, where no batch took it."""
    while _AHEAD:
        child = _AHEAD.pop()
        child.kill()
        child.communicate()


def _child() -> subprocess.Popen[bytes]:
    """The demangling child: where ``cpp_demangle``'s folder is known, an isolated interpreter (``-I``: no
    environment variable or user folder shapes what it imports) without the site's start-up (``-S``) given that
    folder; it exits as soon as it has written its answer (``os._exit``: nothing left to tear down)."""
    import subprocess

    where = _where() or []
    flags = ["-I", "-S"] if where else []
    cmd = [sys.executable, *flags, "-c", _CHILD, str(CHILD_MEMORY), str(MAX_DEMANGLED), *where]
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def _demangled(names: list[str], deadline: float) -> list[str]:
    """The demangled names (``""`` where not), splitting the batch when its child fails."""
    import subprocess
    import time

    left = deadline - time.monotonic()
    if left <= 0:
        return [""] * len(names)
    data = "\0".join(names).encode("utf-8", "surrogateescape")
    try:
        child = _AHEAD.pop() if _AHEAD else _child()
        try:
            out, _ = child.communicate(data, timeout=min(CHILD_SECONDS, left))
        except BaseException:  # over its time (or an interrupt): ended, never left behind
            child.kill()
            child.communicate()
            raise
        texts = out.split(b"\0") if child.returncode == 0 else []
    except (subprocess.TimeoutExpired, OSError):
        texts = []
    if len(texts) == len(names):
        return [_text(t) for t in texts]
    if len(names) == 1:
        return [""]
    half = len(names) // 2
    return _demangled(names[:half], deadline) + _demangled(names[half:], deadline)


def demangle(name: str) -> str:
    """The demangled spelling of one kernel name, or the name itself (see :func:`demangle_all`).

    Examples
    --------
    >>> demangle("plain")
    'plain'
    >>> demangle("_Z1ki")
    'k(int)'
    """
    return demangle_all([name])[name]
