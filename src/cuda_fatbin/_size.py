# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Where the device bytes go, and what dropping an arch would save: ``cuda-fatbin size``.

:func:`size` reads the inputs :func:`~cuda_fatbin.scan` reads (files, folders, wheels, conda packages,
images), listed by the same walk and read by the same reader, in worker processes, and measures each binary:
its file bytes, the bytes of its fatbins per section (registered, relocatable, stored as data), per
kind+arch (stored and uncompressed), the container's own headers, the contents of its SASS images by ELF
section category, its kernels (``.text.NAME`` sections) and a digest of each payload that may be a duplicate.
Only these figures leave a worker. See docs/scan.md ("Where the bytes go: size"). Reading side: imports neither
the compile side nor cuda.core.
"""

from __future__ import annotations

import collections
import hashlib
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ._archive import SEPARATOR
from ._container import _trim_elf
from ._inputs import _HEAD, _error, _inputs_of, _is_binary, _Item, _opened
from ._jobs import fan_out
from ._owners import _attribute
from ._packages import read_package
from ._reader import iter_fatbins
from ._size_sass import CATEGORIES, _sass, _tables
from ._size_split import helpers_for, measure_parts, measure_split, settle
from ._size_whatif import (
    RECOMPRESS,
    _compressed_size,
    _drop_keys,
    _kept_ptx,
    _key,
    _project_stream,
    _removal,
    parse_size,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._elf import Buffer
    from ._reader import Fatbin, FatbinEntry

    #: (why it cannot be read, SASS bytes by category, kernels and their bytes, 1 if unparsed, recompressed size)
    _Figures = tuple[str | None, tuple[tuple[str, int], ...], tuple[tuple[str, int, int, int], ...], int, int | None]
    #: the ``drop`` and ``keep_ptx_for`` of a projection, as a worker is given them
    _Cut = tuple[tuple[str, ...], tuple[str, ...]]
    #: the payloads of one binary met so far, by shape (stored bytes, compression, "kind arch"): the first of each,
    #: ``[its row, its entry, its figures, where its kernel copies begin and end]`` (:func:`_entry`)
    _Shapes = dict[tuple[int, str, str], list[Any]]

__all__ = ["CATEGORIES", "RECOMPRESS", "BinarySize", "SizeReport", "demangled", "parse_size", "size"]

_SECTIONS = ("registered", "relocatable", "data")


@dataclass
class BinarySize:
    """The device bytes of one binary.

    Attributes
    ----------
    path : str
        File path, or ``archive.whl::member/path`` inside an archive.
    distribution : str or None
    file_bytes : int
        Bytes of the file (of the member, uncompressed, in an archive).
    device_bytes : int
        Bytes of its fatbins (container headers included).
    sections : dict
        ``registered`` (``.nv_fatbin``), ``relocatable`` (``__nv_relfatbin``), ``data`` (fatbins stored as
        data) -> bytes of the fatbins there.
    overhead : int
        Bytes of the fatbin containers themselves: fatbin and entry headers.
    entries : dict
        ``"kind arch"`` -> ``[count, stored bytes, uncompressed bytes]``; the members of a compressed
        concatenated entry share its stored bytes in proportion to their uncompressed sizes.
    categories : dict
        SASS image bytes (uncompressed) by category (:data:`CATEGORIES`), over every SASS entry.
    kernels : dict
        Kernel (mangled name of its ``.text.NAME`` section) -> ``[bytes of code, images]``.
    copies : list
        ``("kind arch", kernel, CRC-32 of its code, digest of its image, bytes of its own sections)`` per kernel
        of each SASS image of a fatbin that is loaded (not relocatable): kernels compiled into several
        translation units (:meth:`SizeReport.kernel_duplicates`).
    payloads : list
        ``[digest, "kind arch", record bytes, recompressed record bytes]`` per entry: the digest (SHA-256, 16
        bytes) of its payload as stored (and its compression; a concatenated entry's member: of its uncompressed bytes),
        the bytes its record (header and stored payload) takes in the container, and what it
        would take recompressed (``recompress=``; the record bytes again without it; a member of a concatenated
        entry whose stream the projection changes: its share of the entry's record as projected). A report of one
        binary hashes only the payloads that may be duplicates: the digest is ``None`` where no other payload has
        the same stored size, compression and kind+arch (its image is named ``@OFFSET``, its place, in ``copies``).
    error : str or None
        Why the binary could not be read (its figures are then 0).
    archive, member : str or None
    """

    path: str
    distribution: str | None = None
    file_bytes: int = 0
    device_bytes: int = 0
    sections: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_SECTIONS, 0))
    overhead: int = 0
    entries: dict[str, list[int]] = field(default_factory=dict)
    categories: dict[str, int] = field(default_factory=dict)
    kernels: dict[str, list[int]] = field(default_factory=dict)
    copies: list[tuple[str, str, int, str, int]] = field(default_factory=list)
    payloads: list[list[Any]] = field(default_factory=list)
    error: str | None = None
    archive: str | None = None
    member: str | None = None
    unparsed: int = 0  # SASS images that could not be read or parsed (their bytes counted in "other")


def _records(fb: Fatbin) -> list[tuple[FatbinEntry, int]]:
    """Each top-level entry with the bytes of its record (header and stored payload, up to the next entry)."""
    tops = fb.entries
    ends = [e.offset for e in tops[1:]] + [fb.offset + fb.size]
    return [(e, max(0, end - e.offset)) for e, end in zip(tops, ends, strict=True)]


def _measure(
    out: BinarySize, fatbins: list[Fatbin], recompress: str | None, cut: _Cut = ((), ()), shapes: _Shapes | None = None
) -> None:
    """Add the figures of ``fatbins`` to ``out``; ``cut``: the ``drop`` and ``keep_ptx_for`` of the projection (a
    concatenated entry's members left are projected as the one stream they would be compressed in); ``shapes``:
    hash only the payloads that may be duplicates (:func:`_entry`)."""
    removed = _removal(*cut)
    for fb in fatbins:
        _measure_one(out, fb, recompress, removed, shapes)


def _measure_one(
    out: BinarySize, fb: Fatbin, recompress: str | None, removed: Callable[[str], bool], shapes: _Shapes | None = None
) -> None:
    """Add the figures of one fatbin to ``out`` (:func:`_measure`)."""
    out.device_bytes += fb.size
    where = "data" if fb.embedded else "relocatable" if fb.relocatable else "registered"
    out.sections[where] += fb.size
    stored_payloads = 0
    for top, record in _records(fb):
        stored_payloads += top.stored_size
        if top.kind == "concat":
            whole = sum(m.size for m in top.members) or 1
            first = len(out.payloads)
            for m in top.members:
                _entry(out, m, top.stored_size * m.size // whole, record * m.size // whole, recompress,
                       not fb.relocatable)  # fmt: skip
            if recompress != "none" and (recompress or any(removed(_key(m)) for m in top.members)):
                _project_stream(top, record, out.payloads[first:], recompress, removed)
        else:
            _entry(out, top, top.stored_size, record, recompress, not fb.relocatable, shapes)
    out.overhead += max(0, fb.size - stored_payloads) if not fb.standalone else 0


#: What a payload gives (why it cannot be read, its SASS categories and kernels, its recompressed size) by
#: (digest, uncompressed size, kind, standalone, recompress mode) in this process: a payload stored many times
#: is decompressed, parsed and recompressed once. Bounded by entries and by the kernel rows it holds.
_SEEN: dict[tuple[str, int, str, bool, str | None], _Figures] = {}
_SEEN_ROWS = [0]
_SEEN_MAX, _SEEN_ROWS_MAX = 1 << 16, 1 << 20  # payloads, and kernel rows they hold


def _digest(payload: Buffer, tag: str) -> str:
    """A payload's name in :attr:`BinarySize.payloads`: SHA-256 of its bytes and ``tag`` (its compression)."""
    digest = hashlib.sha256(payload)
    digest.update(tag.encode())
    return digest.hexdigest()[:32]


def _remember(memo: tuple[str, int, str, bool, str | None], figures: _Figures) -> None:
    if len(_SEEN) >= _SEEN_MAX or _SEEN_ROWS[0] >= _SEEN_ROWS_MAX:
        _SEEN.clear()
        _SEEN_ROWS[0] = 0
    _SEEN[memo] = figures
    _SEEN_ROWS[0] += len(figures[2])


def _entry(
    out: BinarySize,
    e: FatbinEntry,
    stored: int,
    record: int,
    recompress: str | None = None,
    loaded: bool = True,
    shapes: _Shapes | None = None,
) -> None:
    """Add one payload's figures to ``out``. With ``shapes`` (one binary measured: its duplicates are among its own
    payloads), a payload is hashed only once another of its shape (stored bytes, compression, kind+arch) has come;
    until then it is named by its place (``@OFFSET``), and its row carries its shape and place for
    :func:`~cuda_fatbin._size_split.settle`, which hashes those whose shape another process met."""
    key = _key(e)
    row = out.entries.setdefault(key, [0, 0, 0])
    row[0] += 1
    row[1] += stored
    row[2] += e.size
    place: tuple[tuple[int, str, int], ...] = ()
    try:
        raw = e._stored()  # hashed as stored: a PTX payload is never decompressed unless recompressed
        data = e.data() if raw is None else None  # a concatenated entry's member: by its uncompressed bytes
        first = None
        if raw is not None and shapes is not None:
            place = ((len(raw), e.compression, e._payload),)
            first = shapes.get((len(raw), e.compression, key))
            if first is not None and first[0][0][0] == "@":  # the second of its shape: the first is hashed now
                _name_first(out, first, recompress)
        lazy = bool(place) and first is None
        whole, tag = (data or b"", "member") if raw is None else (raw, e.compression)
        name = f"@{e._payload}" if lazy else _digest(whole, tag)
    except (ValueError, MemoryError) as exc:  # a payload that cannot be read or decompressed: counted, not hashed
        _unreadable(out, e, key, record, exc)
        return
    figures = None
    if e.kind == "elf" or recompress is not None:
        memo = (name, e.size, e.kind, e._exact, recompress)
        figures = None if lazy else _SEEN.get(memo)
        if figures is None:
            figures = _figures(e, raw, data, recompress)
            if not lazy:
                _remember(memo, figures)
        if figures[0] is not None:
            _unreadable(out, e, key, record, figures[0])
            return
    again = figures and figures[4]
    out.payloads.append([name, key, record, record if again is None else record - stored + again, *place])
    start = len(out.copies)
    if figures is not None:
        _add_figures(out, key, name, figures, loaded)
    if lazy and shapes is not None:  # the first of its shape: kept to be hashed if a second comes
        shapes[place[0][0], e.compression, key] = [out.payloads[-1], e, figures, start, len(out.copies)]


def _add_figures(out: BinarySize, key: str, name: str, figures: _Figures, loaded: bool) -> None:
    _error, categories, kernels, unparsed, _again = figures
    cats = out.categories
    for category, n in categories:
        cats[category] = cats.get(category, 0) + n
    for kernel, code, own, crc in kernels:
        k = out.kernels.setdefault(kernel, [0, 0])
        k[0] += code
        k[1] += 1
        if loaded:  # a relocatable fatbin's images are input to a device link, not code that is loaded
            out.copies.append((key, kernel, crc, name, own))
    out.unparsed += unparsed


def _name_first(out: BinarySize, first: list[Any], recompress: str | None) -> None:
    """Hash the first payload of a shape once a second has come: its row and its kernels' copies get its digest,
    and its figures are remembered under it (the second's may be the same)."""
    row, e, figures, start, end = first
    placeholder, row[0] = row[0], _digest(e._stored(), e.compression)
    if figures is not None:
        _remember((row[0], e.size, e.kind, e._exact, recompress), figures)
    for i in range(start, end):
        key, kernel, crc, image, own = out.copies[i]
        out.copies[i] = (key, kernel, crc, row[0] if image == placeholder else image, own)


def _unreadable(out: BinarySize, e: FatbinEntry, key: str, record: int, why: BaseException | str) -> None:
    """A payload that cannot be read or decompressed: counted (its SASS bytes in "other"), not hashed."""
    out.payloads.append([why if isinstance(why, str) else f"unreadable: {type(why).__name__}", key, record, record])
    if e.kind == "elf":
        out.unparsed += 1
        out.categories["other"] = out.categories.get("other", 0) + e.size


def _figures(e: FatbinEntry, raw: Buffer | None, data: bytes | None, recompress: str | None) -> _Figures:
    """What a SASS payload (or, with ``recompress``, any payload) gives: see :data:`_SEEN`."""
    try:
        image: Buffer
        if data is not None:
            image = data
        elif raw is not None and e.compression == "none":  # the payload in place, cut as data() cuts it
            if e.kind == "elf" and not e._exact and recompress is None:
                tables = _tables(memoryview(raw))  # read once for the cut and the figures, where all is well
                if tables is not None:
                    return (None, *_sass(*tables), None)
            image = raw if e.kind != "elf" or e._exact else _trim_elf(memoryview(raw), e.offset)
        else:
            image = e.data()
        again = _compressed_size(image, recompress) if recompress is not None else None
    except (ValueError, MemoryError) as exc:
        return f"unreadable: {type(exc).__name__}", (), (), 0, None
    if e.kind != "elf":
        return None, (), (), 0, again
    return (None, *_sass(image), again)


def _size_job(
    item: _Item, embedded: bool, recompress: str | None = None, cut: _Cut = ((), ()), workers: int = 1,
    alone: bool = False,
) -> tuple[list[BinarySize], int]:
    """The figures of one item (a package or an image gives many), and how many binaries were read; a large file
    with ``workers`` > 1 (the only item) is measured by that many processes (:mod:`._size_split`). ``alone``: the
    item is the only one of the report (its payloads are hashed only where another has their shape)."""  # fmt: skip
    from ._containers import read_member

    member = item.member.name if item.member else None
    out = BinarySize(item.shown, archive=item.path if member else None, member=member, error=item.error)
    if item.error is not None:
        return [out], 0
    if item.package:
        return _size_package(item, embedded, recompress, cut)
    try:
        if item.member:
            data = read_member(item.path, item.member, follow=item.follow)
            out.file_bytes = len(data)
            _measure(out, list(iter_fatbins(data, embedded=embedded, relocatable=True)), recompress, cut,
                     {} if alone else None)  # fmt: skip
            settle(out, data)
        else:
            with _opened(item.path, item.identity, item.follow) as source:
                out.file_bytes = item.size
                found = iter_fatbins(source, embedded=embedded, relocatable=True)
                helpers = helpers_for(item.size, workers)
                if helpers and isinstance(source, str):  # a path the helpers open again
                    if not (embedded and measure_parts(out, source, recompress, cut, helpers)):
                        measure_split(out, found, source, recompress, cut, helpers)
                else:
                    _measure(out, list(found), recompress, cut, {} if alone else None)
                    settle(out, source)
    except (OSError, ValueError, MemoryError, RecursionError) as exc:
        failed = BinarySize(out.path, archive=out.archive, member=member)
        failed.error = re.sub(r"/proc/self/fd/\d+", lambda _m: item.path, _error(exc))
        return [failed], 1
    return [out], 1


def _size_package(
    item: _Item, embedded: bool, recompress: str | None, cut: _Cut = ((), ())
) -> tuple[list[BinarySize], int]:
    """A conda package or an image, read in one pass: one row per binary."""
    rows: list[BinarySize] = []
    meta: dict[str, object] = {}
    read = 0

    def wanted(name: str, head: bytes) -> bool:
        return len(head) >= 16 and _is_binary(head, name)

    for found in read_package(item.path, item.package or "", wanted, _HEAD, meta, listed_as=item.identity,
                              follow=item.follow):  # fmt: skip
        inside = f"{item.path}{SEPARATOR}{found.name}" if found.name else item.path
        row = BinarySize(inside, archive=item.path if found.name else None, member=found.name or None,
                         error=found.error and (found.name and "ArchiveError: ") + found.error)  # fmt: skip
        if found.data is not None:
            read += 1
            row.file_bytes = len(found.data)
            try:
                _measure(row, list(iter_fatbins(found.data, embedded=embedded, relocatable=True)), recompress, cut)
            except (ValueError, MemoryError, RecursionError) as exc:
                row = BinarySize(inside, archive=row.archive, member=row.member, error=_error(exc))
        rows.append(row)
    dist = meta.get("distribution")
    for r in rows:
        r.distribution = dist if isinstance(dist, str) else None
    return rows, read


def _died(item: _Item) -> tuple[list[BinarySize], int]:
    """The row of an item whose process died twice (``fan_out``)."""
    return [BinarySize(item.shown, error="the process reading it died (a file that changed while read?)")], 0


@dataclass
class SizeReport:
    """The result of :func:`size`.

    Attributes
    ----------
    binaries : list of BinarySize
        Every binary with device code, and every input that could not be read, in path order.
    files_read : int
    skipped : dict
        What the walk passed over, by kind (as ``ScanReport.skipped``).
    drop : list of str
        The ``--drop`` specs the projection removes (``sm_90``: that SASS; ``compute_90``: that PTX).
    recompress : str or None
        The libnvfatbin ``-compress-mode`` the projection recompresses every payload with.
    keep_ptx_for : list of str
        When not empty, the projection removes every PTX but these (``compute_90``: the PTX for sm_90).

    Examples
    --------
    >>> from cuda_fatbin import Program
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> data = bytes(Program(src, "c++").compile("fatbin", archs=["sm_80", "sm_90"], ptx_for=["sm_90"]).code)
    >>> import pathlib, tempfile
    >>> from cuda_fatbin import size
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "kernels.fatbin").write_bytes(data)
    >>> report = size([folder], drop=["sm_80"], max_workers=1)
    >>> sorted(report.by_kind())
    ['elf sm_80', 'elf sm_90', 'ptx sm_90']
    >>> report.totals()["device_bytes"] == len(data), report.totals()["projected_bytes"] < len(data)
    (True, True)
    """

    binaries: list[BinarySize]
    files_read: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    drop: list[str] = field(default_factory=list)
    recompress: str | None = None
    keep_ptx_for: list[str] = field(default_factory=list)

    def _with_code(self) -> list[BinarySize]:
        return [b for b in self.binaries if not b.error]

    def by_kind(self) -> dict[str, dict[str, int]]:
        """``"kind arch"`` -> ``{"entries", "stored_bytes", "bytes"}`` over every binary, largest stored first."""
        rows: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
        for b in self.binaries:
            for key, (n, stored, raw) in b.entries.items():
                row = rows[key]
                row[0] += n
                row[1] += stored
                row[2] += raw
        order = sorted(rows.items(), key=lambda kv: (-kv[1][1], kv[0]))
        return {k: {"entries": n, "stored_bytes": s, "bytes": r} for k, (n, s, r) in order}

    def kernels(self) -> list[dict[str, Any]]:
        """Kernels (and device functions compiled apart: each ``.text.NAME`` section) by bytes of SASS code over
        every binary and arch, largest first; ``name`` is mangled (:func:`demangled` adds the other spelling)."""
        rows: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
        for b in self.binaries:
            for name, (n, images) in b.kernels.items():
                rows[name][0] += n
                rows[name][1] += images
        order = sorted(rows.items(), key=lambda kv: (-kv[1][0], kv[0]))
        return [{"name": k, "bytes": n, "images": i} for k, (n, i) in order]

    def duplicates(self) -> list[dict[str, Any]]:
        """Payloads stored more than once (same stored bytes and compression, same kind+arch), most bytes wasted
        first (then by entry).

        ``wasted_bytes`` is what the copies after the first take (their records in the containers).
        """
        groups: dict[tuple[str, str], list[tuple[str, int]]] = collections.defaultdict(list)
        for b in self.binaries:
            for digest, key, record, _again in b.payloads:
                if digest is not None and not digest.startswith("unreadable"):
                    groups[digest, key].append((b.path, record))
        out = []
        for (digest, key), copies in groups.items():
            if len(copies) > 1:
                paths = sorted({p for p, _ in copies})
                out.append({"digest": digest, "entry": key, "copies": len(copies), "binaries": len(paths),
                            "wasted_bytes": sum(r for _, r in copies) - copies[0][1], "paths": paths[:5]})  # fmt: skip
        return sorted(out, key=lambda d: (-d["wasted_bytes"], d["entry"], d["digest"]))

    def _removed(self) -> Callable[[str], bool]:
        """Whether the projection removes the entries of a ``"kind arch"`` key (:attr:`drop`, :attr:`keep_ptx_for`)."""
        return _removal(self.drop, self.keep_ptx_for)

    def kernel_duplicates(self) -> list[dict[str, Any]]:
        """Kernels compiled into several SASS images of one arch (translation units: the fatbins of a binary, or
        several binaries) with the same code, most bytes wasted first.

        Copies are told apart by image: an image stored twice is one copy here (:meth:`duplicates` counts it).
        ``bytes`` is the largest copy's own sections (code, ``.nv.info.NAME``, ``.nv.constant0.NAME``, ...),
        ``wasted_bytes`` what the others take. Kernels of one name whose code differs are not copies.
        """
        groups: dict[tuple[str, str, int], dict[str, tuple[int, str]]] = collections.defaultdict(dict)
        for b in self.binaries:
            for key, kernel, crc, image, own in b.copies:
                groups[key, kernel, crc].setdefault(image, (own, b.path))
        out = []
        for (key, kernel, _crc), images in groups.items():
            if len(images) > 1:
                sizes = [own for own, _ in images.values()]
                paths = sorted({p for _, p in images.values()})
                out.append({"name": kernel, "entry": key, "copies": len(images), "binaries": len(paths),
                            "bytes": max(sizes), "wasted_bytes": sum(sizes) - max(sizes),
                            "paths": paths[:5]})  # fmt: skip
        return sorted(out, key=lambda d: (-d["wasted_bytes"], d["entry"], d["name"]))

    def projected(self, b: BinarySize) -> int:
        """The bytes of ``b`` once the entries of :attr:`drop` (and every PTX but :attr:`keep_ptx_for`'s) are
        removed from its fatbins and the others recompressed as :attr:`recompress` says."""
        removed = self._removed()
        saved = (record if removed(key) else record - again for _, key, record, again in b.payloads)
        return b.file_bytes - sum(int(n) for n in saved)

    def left_without_ptx(self) -> list[str]:
        """The binaries that hold PTX and would hold none once the projection's entries are removed: GPUs newer
        than their SASS could no longer JIT-compile their kernels (a size the projection cannot weigh)."""
        removed = self._removed()
        out = []
        for b in self._with_code():
            ptx = [key for key in b.entries if key.startswith("ptx ")]
            if ptx and all(removed(key) for key in ptx):
                out.append(b.path)
        return out

    def distributions(self) -> list[dict[str, Any]]:
        """Per distribution: binaries, file bytes, device bytes (and projected bytes), largest first."""
        rows: dict[str, dict[str, int]] = {}
        for b in self._with_code():
            zero = {"binaries": 0, "file_bytes": 0, "device_bytes": 0, "projected_bytes": 0}
            row = rows.setdefault(b.distribution or "(no distribution)", zero)
            row["binaries"] += 1
            row["file_bytes"] += b.file_bytes
            row["device_bytes"] += b.device_bytes
            row["projected_bytes"] += self.projected(b)
        order = sorted(rows.items(), key=lambda kv: (-kv[1]["file_bytes"], kv[0]))
        return [{"distribution": k, **v} for k, v in order]

    def totals(self) -> dict[str, Any]:
        """Sums over every binary: file, device, host, container overhead, sections, SASS categories, projected."""
        return self._totals(self.duplicates(), self.kernel_duplicates())

    def _totals(self, duplicates: list[dict[str, Any]], kernel_duplicates: list[dict[str, Any]]) -> dict[str, Any]:
        ok = self._with_code()
        cats = dict.fromkeys(CATEGORIES, 0)
        sections = dict.fromkeys(_SECTIONS, 0)
        for b in ok:
            for k, v in b.categories.items():
                cats[k] += v
            for k, v in b.sections.items():
                sections[k] += v
        file_bytes = sum(b.file_bytes for b in ok)
        device = sum(b.device_bytes for b in ok)
        return {"binaries": len(ok), "file_bytes": file_bytes, "device_bytes": device,
                "host_bytes": file_bytes - device, "overhead_bytes": sum(b.overhead for b in ok),
                "sections": sections, "sass_categories": cats,
                "unparsed_images": sum(b.unparsed for b in ok),
                "duplicate_bytes": sum(d["wasted_bytes"] for d in duplicates),
                "kernel_duplicate_bytes": sum(d["wasted_bytes"] for d in kernel_duplicates),
                "projected_bytes": sum(self.projected(b) for b in ok),
                "left_without_ptx": len(self.left_without_ptx())}  # fmt: skip

    def to_dict(self, top: int | None = None) -> dict[str, Any]:
        """The ``size --json`` document (schema ``schemas/size.json``); lists of kernels and duplicates cut to
        ``top`` rows (all with ``None``), their kernel names demangled (:func:`demangled`: a child process)."""
        binaries = [{"path": b.path, "distribution": b.distribution, "archive": b.archive, "member": b.member,
                     "error": b.error, "file_bytes": b.file_bytes, "device_bytes": b.device_bytes,
                     "host_bytes": b.file_bytes - b.device_bytes, "overhead_bytes": b.overhead,
                     "sections": b.sections, "projected_bytes": self.projected(b),
                     "entries": {k: {"entries": n, "stored_bytes": s, "bytes": r}
                                 for k, (n, s, r) in sorted(b.entries.items())}}
                    for b in self.binaries]  # fmt: skip
        dups, all_copies = self.duplicates(), self.kernel_duplicates()  # each once: the totals sum them too
        kernels, copies = self.kernels()[:top], all_copies[:top]
        demangled(kernels, copies)
        return {"files_read": self.files_read, "unreadable": sum(bool(b.error) for b in self.binaries),
                "skipped": self.skipped, "drop": self.drop, "keep_ptx_for": self.keep_ptx_for,
                "recompress": self.recompress, "totals": self._totals(dups, all_copies),
                "by_kind": self.by_kind(), "kernels": kernels, "duplicates": dups[:top],
                "kernel_duplicates": copies, "distributions": self.distributions(), "binaries": binaries}  # fmt: skip


def demangled(*tables: list[dict[str, Any]]) -> None:
    """Give each row of ``tables`` (:meth:`SizeReport.kernels`, :meth:`SizeReport.kernel_duplicates`) its
    ``demangled`` name beside its mangled ``name``: :func:`cuda_fatbin._kernels.demangle_all`, one bounded child
    process for them all; a name that does not demangle (or without ``cuda-fatbin[demangle]``) is kept.
    """
    from ._kernels import demangle_all

    spelled = demangle_all({row["name"] for rows in tables for row in rows})
    for rows in tables:
        for row in rows:
            row["demangled"] = spelled[row["name"]]


def size(
    paths: Iterable[str | os.PathLike[str]] | None = None,
    *,
    drop: Iterable[str] = (),
    recompress: str | None = None,
    keep_ptx_for: Iterable[str] = (),
    embedded: bool = True,
    max_workers: int | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> SizeReport:
    """Measure the device code of the binaries under ``paths``, and project what dropping archs would save.

    Parameters
    ----------
    paths : iterable of paths, optional
        As for :func:`~cuda_fatbin.scan`. Default: this Python environment's site-packages.
    drop : iterable of str
        ``sm_XY`` (that SASS) and ``compute_XY`` (that PTX) entries the projection removes.
    keep_ptx_for : iterable of str
        ``compute_XY`` (or ``sm_XY``): the projection removes every PTX but these (none named: none removed).
    recompress : {"none", "speed", "balance", "default", "size"}, optional
        Project every payload recompressed as libnvfatbin's ``-compress-mode`` (with ``-compress-all``)
        writes it (:data:`RECOMPRESS`). Zstd level 19 (``"size"``) compresses a few MB/s.
    embedded : bool, optional
        Also measure fatbins stored as data. Default: True.
    max_workers : int, optional
        Worker processes. Default: the CPU count; 1 reads in this process.
    progress : callable, optional
        Called as ``progress(done, total, path)`` after each input.

    Returns
    -------
    SizeReport

    Raises
    ------
    ValueError
        A ``drop`` or ``keep_ptx_for`` spelling or ``recompress`` mode is not understood, or ``max_workers`` is
        not a positive int.
    TypeError
        ``paths``, ``drop`` or ``keep_ptx_for`` is one string (or path) instead of a list of them.
    FileNotFoundError
        A path given does not exist.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from cuda_fatbin import Program, size
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> data = bytes(Program(src, "c++").compile("fatbin", archs=["sm_80", "sm_90"]).code)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "k.fatbin"
    >>> _ = path.write_bytes(data)
    >>> report = size([path], drop=["sm_80"], max_workers=1)
    >>> report.totals()["device_bytes"] == len(data), [k["name"] for k in report.kernels()]
    (True, ['k'])
    >>> size(drop=["sm_70"]).totals()["projected_bytes"]  # this Python environment  # doctest: +SKIP
    1234567
    """
    for name, specs in (("drop", drop), ("keep_ptx_for", keep_ptx_for)):
        if isinstance(specs, (str, bytes)):  # not a list of one spec per character
            raise TypeError(f"{name} must be a list of archs; got one: size(..., {name}=[{specs!r}])")
    drop, keep_ptx_for = sorted(set(drop)), sorted(set(keep_ptx_for))
    _drop_keys(drop)
    _kept_ptx(keep_ptx_for)
    if recompress is not None and recompress not in RECOMPRESS:
        raise ValueError(f"recompress must be one of {', '.join(RECOMPRESS)}; got {recompress!r}")
    roots, listing, items, workers = _inputs_of(paths, max_workers, "size")
    rows: list[BinarySize] = []
    finished = [0, 0]

    def done(item: _Item, result: tuple[list[BinarySize], int]) -> None:
        rows.extend(result[0])
        finished[0] += 1
        finished[1] += result[1]
        if progress:
            progress(finished[0], len(items), item.path if item.package else item.shown)

    cut = (tuple(drop), tuple(keep_ptx_for))
    alone = len(items) == 1
    fan_out(items, _size_job, (embedded, recompress, cut, workers if alone else 1, alone), done, workers, _died)
    rows = [r for r in rows if r.entries or r.error]
    _attribute(roots, rows)
    return SizeReport(rows, finished[1], dict(listing.skipped), drop, recompress, keep_ptx_for)
