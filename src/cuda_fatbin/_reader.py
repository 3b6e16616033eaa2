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

Three layers, each importing only the ones below it: :mod:`._source` (the bytes of a source, read through
bounded, hole-skipping windows, with the checks that a file did not shrink), :mod:`._container` (the fatbin
container: headers, entries, members, decompression, :class:`Fatbin` and :class:`FatbinEntry`) and this
module (where the fatbins of a file are: sections walked, fatbins stored as data searched, each parsed
once; :func:`read_fatbin` and :func:`iter_fatbins`). The public names are imported from here.

This module does not import the compile side (cuda.core, NVRTC, libnvfatbin).
"""

from __future__ import annotations

import bisect
import collections
import struct
from collections.abc import Callable, Generator, Iterator, Sequence

from ._container import (
    _ENTRY_SIZE,
    MAX_EXPANSION,
    Fatbin,
    FatbinEntry,
    _assembled,
    _entry_header,
    _entry_of,
    _extent,
    _parse,
    _standalone,
)
from ._detect import FATBIN_MAGIC
from ._elf import ELF_MAGIC, EM_CUDA, SHT_NOBITS, ElfFormatError, read_header, section_headers, section_namer
from ._source import _RELEASE, MAX_STREAM, FatbinFormatError, _Data, _open

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time: benchmarks/bench_cli.py)
if TYPE_CHECKING:
    from typing import Any, TypeAlias

    from ._container import _Row
    from ._source import Source as Source

    #: A fatbin stored as data as :func:`iter_part_rows` finds it: the data, its start, end, section, and its entry
    #: headers (:func:`_rows`; a :class:`Fatbin` for one with a concatenated entry, made whole).
    Stored: TypeAlias = "tuple[_Data, int, int, str | None, list[_Row] | Fatbin]"

__all__ = ["MAX_EXPANSION", "MAX_STREAM", "Fatbin", "FatbinEntry", "FatbinFormatError", "iter_fatbins", "read_fatbin"]
for _public in (Fatbin, FatbinEntry, FatbinFormatError):  # defined in the layers below; tracebacks and pickles name
    _public.__module__ = __name__  # this module, where they are imported from
_SECTIONS = (".nv_fatbin", "__nv_relfatbin")
_RELOCATABLE_SECTION = "__nv_relfatbin"
_NEAR = 64  # bytes after a fatbin stored as data in which the next one is looked for before searching on
#: bytes a part's search reads (``pread``) where a fatbin may start: the _NEAR bytes where its magic is looked for, and
#: its headers (one entry's, strings included: libcufft's take 80-144 bytes)
_CHUNK = 256


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
    yield from _elf_fatbins(src, embedded, relocatable)


def _elf_fatbins(
    src: _Data, embedded: bool, relocatable: bool | None, part: SearchPart | None = None, lean: bool = False
) -> Iterator[Any]:
    """:func:`iter_fatbins` of an ELF file; with ``part``, only the fatbins stored as data that part's search yields
    (with ``lean``, as :func:`iter_part_rows` gives them)."""
    try:
        header = read_header(src.view)
        if header.machine == EM_CUDA:
            standalone = _standalone(src)
            if standalone is not None and part is None:
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
        if name not in _SECTIONS or typ == SHT_NOBITS or (offset, size) in done:
            continue
        done.add((offset, size))
        if name == _RELOCATABLE_SECTION and not relocatable:
            seen.claim(offset, offset + size)  # never searched as data either
            continue
        walked = _walk(src, offset, offset + size, name, seen, extents=part is not None)
        if part is None:
            yield from walked
        else:  # claimed by their headers, as the whole search has them (their entries: the final read's)
            collections.deque(walked, maxlen=0)
    if embedded or part is not None:
        ranges = [(offset, offset + size, name_off) for offset, size, typ, name_off in sections
                  if typ != SHT_NOBITS and size]  # fmt: skip
        yield from _scan(src, ranges, seen, names, part, lean)


def _rows(
    src: _Data, start: int, limit: int, chunk: bytes | None = None, base: int = 0
) -> tuple[int, list[_Row]] | Fatbin:
    """A fatbin stored as data at ``start``, checked as ``_parse(..., strict=True)`` checks it (the same functions,
    which raise the same errors and count the same headers) without making its objects: where it ends and its entry
    headers (:func:`_fatbin_of_rows` makes the :class:`Fatbin` ``_parse`` gives). One with a concatenated entry is
    made by ``_parse`` itself (its members are checked as they are made). Read from ``chunk``, the file's bytes from
    ``base`` on, where they hold the headers; else from the map, checked to hold them still."""
    headers = src.headers
    if chunk is not None:
        try:
            return _rows_in(src, start, limit, chunk, base)
        except struct.error:  # the headers run past the bytes read: read them from the map
            src.headers = headers
    src.check(limit, start)
    return _rows_in(src, start, limit, src.view, 0)


def _rows_in(src: _Data, start: int, limit: int, buf: Any, base: int) -> tuple[int, list[_Row]] | Fatbin:
    headers = src.headers
    _version, header_size, end = _extent(buf, start, limit, True, base)
    rows = []
    pos = start + header_size
    while pos < end:
        row = _entry_header(src, pos, end, True, buf, base)
        if row[1] == 0x100:
            src.headers = headers  # counted once, by _parse
            src.check(limit, start)
            return _parse(src, start, limit, None, strict=True)
        rows.append(row)
        pos += row[6] + row[7]
    return end, rows


def _fatbin_of_rows(src: _Data, start: int, end: int, rows: list[_Row], section: str | None) -> Fatbin:
    """The :class:`Fatbin` that ``_parse(src, start, ..., section, strict=True)`` makes of the fatbin :func:`_rows`
    gave ``rows`` of (with no concatenated entry).

    Raises
    ------
    FatbinFormatError
        The file shrank since (its strings are read now).
    """
    src.check(end, start)
    texts: list[tuple[FatbinEntry, str, int, int]] = []
    entries = [_entry_of(src, row, texts) for row in rows]
    return _assembled(src, entries, texts, start, end, 1, section)


class SearchPart:
    """One of ``parts`` slices of the search for fatbins stored as data in an ELF file, and where it ended.

    The searched bytes (the sections that hold bytes, overlapping ones once) are cut into ``parts`` slices
    of equal size. Part ``k`` searches its slice as the whole search would from the slice's start: it
    yields the fatbins that start in its slice (the last may run on past its end) and sets ``first``, the
    start of the first, and ``resume``, where the whole search would go on (the end of that last fatbin,
    or of the slice). The parts give what the whole search gives when no part's ``first`` lies before the
    ``resume`` of the parts before it (else its slice began inside a fatbin of theirs, and what it found
    there the whole search skips) and their ``spent`` adds up to at most ``budget`` (the header bytes the
    whole search charges to candidates that fail: over it, the file is refused). :mod:`cuda_fatbin._parts`
    checks both, and searches the file whole when either fails.
    """

    def __init__(self, part: int, parts: int) -> None:
        if not 0 <= part < parts:
            raise ValueError(f"part {part} of {parts}: parts are numbered from 0")
        self.part = part
        self.parts = parts
        self.first: int | None = None
        self.resume = 0
        self.spent = 0
        self.budget = 0


def search_sizes(source: Source) -> tuple[int, int]:
    """The bytes of an ELF host file that the search for fatbins stored as data reads outside its registered
    sections (``.nv_fatbin``, ``__nv_relfatbin``), where the search's work is, and the bytes of those sections: (0,
    0) for any other file (``_parts`` reads a file in parts where the first is large).

    Raises
    ------
    FatbinFormatError
        As :func:`iter_fatbins` for a malformed ELF file.
    """
    src = _open(source)
    if bytes(src.view[:4]) != ELF_MAGIC:
        return 0, 0
    try:
        header = read_header(src.view)
        if header.machine == EM_CUDA:
            return 0, 0
        rows = section_headers(src.view, header, src.fd)
        names = section_namer(src.view, header, rows) if rows else str
    except ElfFormatError as e:
        raise FatbinFormatError(f"malformed ELF file: {e.message}", e.offset) from None
    sizes = [0, 0]
    for name_off, typ, _offset, size in rows:
        if typ != SHT_NOBITS:
            sizes[names(name_off) in _SECTIONS] += size
    return sizes[0], sizes[1]


def iter_part(source: Source, part: SearchPart, *, relocatable: bool | None = True) -> Iterator[Fatbin]:
    """The fatbins stored as data that ``part`` of the search of an ELF file finds (:class:`SearchPart`), its
    registered fatbins claimed as :func:`iter_fatbins` with ``relocatable`` claims them.

    Raises
    ------
    FatbinFormatError
        As :func:`iter_fatbins`, and for a file that is not an ELF host file (searched whole, not in parts).
    """
    src = _open(source)
    if bytes(src.view[:4]) != ELF_MAGIC:
        raise FatbinFormatError("only an ELF file is searched in parts", 0)
    yield from _elf_fatbins(src, True, relocatable, part)


def iter_part_rows(source: Source, part: SearchPart, *, relocatable: bool | None = True) -> Iterator[Stored]:
    """:func:`iter_part`'s fatbins, as found (:data:`Stored`): checked as strictly, no objects made. A part judges
    thousands of fatbins by their headers and makes the :class:`Fatbin` of a few (:func:`stored_fatbin`).

    Raises
    ------
    FatbinFormatError
        As :func:`iter_part`.
    """
    src = _open(source)
    if bytes(src.view[:4]) != ELF_MAGIC:
        raise FatbinFormatError("only an ELF file is searched in parts", 0)
    yield from _elf_fatbins(src, True, relocatable, part, lean=True)


def stored_fatbin(found: Stored) -> Fatbin:
    """The :class:`Fatbin` of a fatbin :func:`iter_part_rows` found: the one :func:`iter_part` yields for it.

    Raises
    ------
    FatbinFormatError
        The file shrank since it was searched.
    """
    src, start, end, section, rows = found
    if isinstance(rows, Fatbin):
        return rows
    fatbin = _fatbin_of_rows(src, start, end, rows, section)
    fatbin.__dict__["embedded"] = True
    return fatbin


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


def _walk(
    src: _Data, start: int, end: int, section: str | None, seen: _Seen, *, extents: bool = False
) -> Iterator[Fatbin]:
    """Fatbins back to back in [start, end) (a section, or a raw fatbin file when ``section`` is None).

    As cuobjdump reads them (docs/formats.md §3): 8-byte words whose first 4 bytes are zero are padding
    and skipped; then a fatbin header must follow. In a section, fewer than 16 bytes (a header) left
    after the padding end the walk; in a raw file, fewer than 16 bytes left right after a fatbin end it,
    and padding must lead to another fatbin. With ``extents``, only the fatbins' headers are read, to claim
    their bytes, and nothing is yielded (a part of the search: its entries are read by the final read).
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
        if extents:
            pos = _extent(buf, after, end)[2]
            seen.claim(after, pos)
            continue
        fatbin = _parse(src, after, end, section, relocatable=section == _RELOCATABLE_SECTION)
        seen.claim(after, after + fatbin.size)
        yield fatbin
        pos = after + fatbin.size


def _scan(
    src: _Data,
    ranges: Sequence[tuple[int, int, int | None]],
    seen: _Seen,
    names: Callable[[int], str] | None = None,
    part: SearchPart | None = None,
    lean: bool = False,
) -> Iterator[Any]:
    """Fatbins stored as data in ``ranges`` (start, end, section name offset for ``names``): each searched once
    (with ``part``, that part of the search: :class:`SearchPart`; with ``lean``, each as :data:`Stored`, its
    headers checked by :func:`_rows`, no objects made).

    A candidate counts only if it parses completely and strictly (see :func:`iter_fatbins`). The entry
    headers read for candidates that fail are bounded by the data size; past that the file is refused.
    """
    budget = len(src) + 4096 * _ENTRY_SIZE  # bytes of headers read for candidates that fail (64 at least each)
    merged = _merged(ranges)
    begin, stop = _slice(merged, part) if part is not None else (0, None)
    if part is not None:
        part.budget = budget
    named: dict[int, str] = {}
    state = (budget, 0, begin)  # the budget left, the next registered fatbin, where the last fatbin found ends
    for start, end, sections in merged:
        if end <= begin:
            continue
        if stop is not None and start >= stop:
            break
        name_of = _unnamed if names is None else _names_of(sections, names, named)
        state = yield from _search_run(src, max(start, begin), end, stop, seen, part, lean, name_of, state)
    if part is not None and stop is not None:
        part.resume = max(stop, state[2])


def _unnamed(start: int, end: int) -> None:
    return None


def _names_of(
    sections: list[tuple[int, int, int | None]], names: Callable[[int], str], named: dict[int, str]
) -> Callable[[int, int], str | None]:
    """The name of the section of each fatbin found in a run of ``sections`` (:func:`_namer`; one section names
    them all), read once per section (``named``): a section holds thousands of fatbins."""
    label_of = _namer(sections) if len(sections) > 1 else None
    only = sections[0][2]

    def name_of(start: int, end: int) -> str | None:
        label = only if label_of is None else label_of(start, end)
        if label is None:
            return None
        name = named.get(label)
        if name is None:
            name = named[label] = names(label)
        return name

    return name_of


def _search_run(
    src: _Data,
    pos: int,
    end: int,
    stop: int | None,
    seen: _Seen,
    part: SearchPart | None,
    lean: bool,
    name_of: Callable[[int, int], Any],
    state: tuple[int, int, int],
) -> Generator[Any, None, tuple[int, int, int]]:
    """:func:`_scan`'s search of one run of sections [pos, end), each fatbin found named by ``name_of``: what it
    finds, and the ``state`` it leaves (the budget left, the next registered fatbin, the end of the last found)."""
    budget, r, last_end = state
    raw = src._raw  # the map, or the bytes: a find there makes no slice (a memoryview has no find)
    find_near = raw.find if not isinstance(raw, memoryview) else lambda sub, a, b: _find_in(src.view, sub, a, b)
    # a part's search of a mapped file reads each place where a fatbin may start (pread: a file cut short is an
    # error), not the map: each step would check the file's size and fault its pages in
    reading = lean and src.fd is not None
    if reading:  # a run past the file's end is refused at once, as the map's check does; then short reads are
        src.check(end, pos)  # errors, and the part's stamp tells a file changed meanwhile (_parts)
    chunk, base = None, 0
    window = pos
    # the search moves forward only: the registered fatbins (all claimed before it) are passed in order, and a
    # fatbin found starts after those found before it (seen.claim's checks, in constant time)
    reg_starts, reg_ends = seen.runs[0]
    registered = len(reg_starts)
    add_start, add_end = seen.runs[1][0].append, seen.runs[1][1].append
    by_start = seen.by_start
    mapped = src._mapped
    size_of = mapped.size if mapped is not None else None
    # where a magic may be found: in a part, candidates start before the next part's slice
    limit = end if stop is None else min(end, stop + len(FATBIN_MAGIC) - 1)
    while True:
        # fatbins stored back to back: the next one starts where the last ended, or after a few bytes of
        # alignment. Look there first, in the bytes its header will be parsed from, before the search
        # reads on (its windows would also read every payload skipped here)
        if reading:
            chunk, base = src.read(pos, min(pos + _CHUNK, end)), pos
            near = chunk.find(FATBIN_MAGIC, 0, max(0, min(_NEAR, limit - pos)))
            near = pos + near if near >= 0 else -1
        else:
            if size_of is not None and size_of() < end:  # as in _walk: between two yields the file may have been
                src.check(end, pos)  # cut short (it raises)
            near = find_near(FATBIN_MAGIC, pos, min(pos + _NEAR, limit))
        if near != pos:
            pos = near if near >= 0 else src.find(FATBIN_MAGIC, pos, limit)
            if pos - window > _RELEASE or pos < 0:  # searched bytes are not kept: memory stays bounded
                src.release(window, pos if pos >= 0 else limit)
                window = pos
            if pos < 0:
                return budget, r, last_end
            if reading and near < 0:  # found further on: its bytes
                chunk, base = src.read(pos, min(pos + _CHUNK, end)), pos
        if r < registered:
            while r < registered and reg_ends[r] <= pos:
                r += 1
            if r < registered and reg_starts[r] <= pos:  # inside a registered fatbin: on after it
                pos = reg_ends[r]
                continue
        read = src.headers
        try:
            found = _rows(src, pos, end, chunk, base) if lean else _parse(src, pos, end, None, strict=True)
        except FatbinFormatError:
            # what the candidate read: its headers (strings are read only once a fatbin is all valid)
            budget -= _ENTRY_SIZE * max(1, src.headers - read)
            if part is not None:
                part.spent = part.budget - budget
            if budget < 0:
                raise FatbinFormatError(
                    "too many fatbin-like headers that do not parse; the file is refused", pos
                ) from None
            pos += 4
            continue
        if part is not None and part.first is None:
            part.first = pos
        headers_only = type(found) is tuple  # (_rows: where it ends, its entry headers)
        fatbin_end = found[0] if headers_only else pos + found.size  # type: ignore[index, union-attr]
        if r < registered and reg_starts[r] < fatbin_end:
            raise FatbinFormatError(f"the fatbin at {pos:#x} overlaps the one at {reg_starts[r]:#x}", pos)
        add_start(pos)
        add_end(fatbin_end)
        by_start[pos] = fatbin_end
        name = name_of(pos, fatbin_end)
        if headers_only:
            yield src, pos, fatbin_end, name, found[1]  # type: ignore[index]
        else:
            found.__dict__.update(section=name, embedded=True)  # made just now, seen by no one else yet
            yield (src, pos, fatbin_end, name, found) if lean else found
        pos = last_end = fatbin_end


def _find_in(view: memoryview, sub: bytes, start: int, end: int) -> int:
    """``bytes.find`` in ``view[start:end]``, as an offset of ``view``."""
    at = bytes(view[start:end]).find(sub)
    return at if at < 0 else start + at


def _merged(ranges: Sequence[tuple[int, int, int | None]]) -> list[list[Any]]:
    """``ranges`` in runs [start, end, the sections in it]: overlapping sections are searched once."""
    merged: list[list[Any]] = []
    for sec in sorted(ranges):
        if merged and sec[0] < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], sec[1])
            merged[-1][2].append(sec)
        else:
            merged.append([sec[0], sec[1], [sec]])
    return merged


def _slice(merged: list[list[Any]], part: SearchPart) -> tuple[int, int | None]:
    """The file offsets where ``part``'s slice of the searched bytes (``merged`` runs) begins and where the next
    part's begins (None for the last part)."""
    total = sum(end - start for start, end, _ in merged)

    def offset(k: int) -> int | None:
        if k >= part.parts:
            return None
        left: int = total * k // part.parts  # searched bytes before slice k
        for start, end, _ in merged:
            if left < end - start:
                return int(start) + left
            left -= end - start
        return None

    return offset(part.part) or 0, offset(part.part + 1)


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
