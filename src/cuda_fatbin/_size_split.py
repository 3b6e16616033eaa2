# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""One large file measured on several cores, by forked helper processes beside this one: two ways.

``cuda-fatbin size`` of one file would run on one core: the search for its fatbins, then the measuring of
each (hashing, decompressing, reading SASS section tables).

- :func:`measure_parts` (an ELF file, with fatbins stored as data searched): the search is cut in parts
  (``_reader.SearchPart``, as ``scan`` cuts it: ``_parts``), and the units of work (the fatbins of the file's
  sections, then each part) are taken from a pipe by whichever process is free, which searches and measures
  them. The parts are checked to give what one search gives (``_parts.agree``); when they do not, or a unit
  or a helper failed, the figures are dropped and the file is read whole, the other way.
- :func:`measure_split` (any file): the search goes on in this process while the helpers measure the fatbins
  found so far: this process writes each fatbin's place (index, offset, size, flags; fixed-size records,
  written whole or not at all) to a pipe the helpers read, each helper parses the fatbin again from its own
  view of the file and measures it. When the pipe is full, and once the search ends, this process measures
  what it finds and what is left; a helper that fails or dies costs only time (its fatbins are measured here).

Either way the figures come back marked by fatbin (``marshal``: plain values) and are merged in file order:
the report is the one a single process makes, byte for byte. Only where ``os.fork`` is safe (Linux, one
thread); elsewhere, and for small files, one process measures all.
"""

from __future__ import annotations

import contextlib
import os
import signal
import struct
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

    from ._elf import Buffer
    from ._reader import Fatbin
    from ._size import BinarySize, _Cut, _Shapes

    #: per fatbin measured: (its index, where its payload rows begin, where its kernel copies begin)
    _Marks = list[tuple[int, int, int]]
    #: what a process measured: its marks, figures and, per part of the search, where that part began and ended
    _Work = tuple[_Marks, BinarySize, dict[int, Any]]

__all__ = ["helpers_for", "measure_parts", "measure_split", "settle"]

#: A fatbin's place: index, offset, size, flags (1: stored as data, 2: relocatable); under ``PIPE_BUF`` bytes,
#: so a write is whole or not at all, and every read of whole records gets whole records
_RECORD = struct.Struct("<IQQI")
_BATCH = 4  # records a helper takes at a time: small, so that all end together
#: Records written at once at most (under ``PIPE_BUF``: one write is whole or not at all), and the bytes of
#: fatbin that a pending record stands for before they are written anyway (so that large ones go at once)
_RECORDS_AT_ONCE, _FLUSH = 16, 256 << 10
#: Parts of the search per process (more than one: the parts that hold many fatbins take longer)
_PARTS = 8
_UNIT = struct.Struct("<I")  # a unit of work of measure_parts (read one at a time: whole, under PIPE_BUF)
#: The most units of measure_parts: all are written before any is read, so they must fit in a pipe however small
#: (one page, 4 KiB: what Linux gives a user over its pipe quota); with more helpers each part is larger
_MAX_UNITS = 4096 // _UNIT.size
#: What a helper sends of its ``BinarySize`` (with ``marshal``: plain values, no code)
_SUMS = ("device_bytes", "sections", "overhead", "entries", "categories", "kernels", "copies", "payloads", "unparsed")
#: Bytes of file per helper (a smaller file is measured in one process: a fork costs a few milliseconds)
_PER_HELPER = 16 << 20


def helpers_for(file_bytes: int, workers: int) -> int:
    """How many helper processes measure one file of ``file_bytes`` beside this one, with ``workers`` allowed."""
    if sys.platform != "linux" or not hasattr(os, "fork"):
        return 0
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:  # a fork would copy locks other threads hold
        return 0
    return max(0, min(workers - 1, file_bytes // _PER_HELPER))


def measure_split(
    out: BinarySize, fatbins: Iterable[Fatbin], path: str, recompress: str | None, cut: _Cut, helpers: int
) -> None:
    """Add the figures of ``fatbins`` (an iterator: the search) to ``out`` as ``_size._measure`` does, with
    ``helpers`` forked processes measuring beside this one. ``path`` names the file the fatbins are read from,
    opened again by each helper.

    Raises
    ------
    OSError, ValueError
        The file cannot be opened again, or changed while it was read (its size and times: ``_inputs._stamp``), by
        the helpers or by :func:`settle`: figures of other bytes are not reported beside those of the first.
    """
    from ._inputs import _stamp
    from ._size import _measure_one
    from ._size_whatif import _removal

    removed = _removal(*cut)
    shapes: _Shapes = {}
    stamp = _stamp(path)
    jobs_r, jobs_w = os.pipe()
    children: list[tuple[int, int]] = []  # (pid, read end of its figures)
    try:
        _grow(jobs_w)
        _start(children, helpers, (jobs_w,), lambda: _taken(jobs_r, path, recompress, removed))
        os.set_blocking(jobs_w, False)
        found: list[Fatbin] = []
        marks: _Marks = []

        def measure(index: int) -> None:
            marks.append((index, len(out.payloads), len(out.copies)))
            _measure_one(out, found[index], recompress, removed, shapes)

        _feed(fatbins, jobs_w, found, measure)
        os.close(jobs_w)
        jobs_w = -1
        # what the helpers have not taken (the read never waits for ever: no end of the pipe writes any more)
        while data := os.read(jobs_r, _BATCH * _RECORD.size):
            for index, *_place in _RECORD.iter_unpack(data):
                measure(index)
        parts = [(marks, out)]
        while children:
            got = _collect(children)
            if got is not None:
                parts.append(got[:2])
        done = {index for part_marks, _ in parts for index, _p, _c in part_marks}
        for index in range(len(found)):  # a helper that failed: its fatbins measured here
            if index not in done:
                measure(index)
        _merge(out, parts)
        settle(out, path)
        if _stamp(path) != stamp:
            raise ValueError("the file changed while it was read")
    finally:
        for fd in (jobs_r, jobs_w):
            if fd >= 0:
                os.close(fd)
        for pid, figures_r in children:  # the search failed, or an interrupt: the helpers are not waited for
            _stop(pid, figures_r)


def measure_parts(out: BinarySize, path: str, recompress: str | None, cut: _Cut, helpers: int) -> bool:
    """Add the figures of the ELF file ``path`` to ``out`` as ``_size._measure`` does, its search for fatbins stored
    as data cut in parts (``_reader.SearchPart``: the file's sections, then ``_PARTS`` parts per process), each
    searched and measured by whichever process takes it first, this one or ``helpers`` forked ones (``_MAX_UNITS``
    units at most, however many helpers). False, with ``out`` untouched, when the parts do not give what one search
    gives (``_parts.agree``), or one failed, or the file changed while they were read (its size and times:
    ``_inputs._stamp``): the caller then reads the file whole, which gives the same report (and its error). False at
    once where the parts do not pay: the registered fatbins are measured by one process (unit 0), so their bytes
    times ``helpers`` may not exceed the bytes searched outside them (``_reader.search_sizes``; libcublasLt.so.13,
    133 MiB registered and 383 searched, took 3.7 s in parts on 16 cores and 0.77 s with its fatbins handed to the
    helpers one by one, :func:`measure_split`)."""
    from ._inputs import _stamp
    from ._size import BinarySize
    from ._size_whatif import _removal

    try:
        stamp = _stamp(path)  # each unit opens the file again: one rewritten in place between them is read whole
        with open(path, "rb") as f:
            if f.read(4) != b"\x7fELF":  # only an ELF file's search is cut in parts
                return False
        from ._reader import search_sizes

        searched, registered = search_sizes(path)
    except (OSError, ValueError):  # (a malformed file: read whole, which reports it)
        return False
    if registered * helpers > searched:  # unit 0, every registered fatbin in one process, would hold the others up
        return False
    removed = _removal(*cut)
    parts = min(_PARTS * (helpers + 1), _MAX_UNITS - 1)  # (and unit 0: the sections)
    units_r, units_w = os.pipe()
    children: list[tuple[int, int]] = []
    try:
        os.write(units_w, b"".join(_UNIT.pack(unit) for unit in range(parts + 1)))  # 0: the sections
        os.close(units_w)
        units_w = -1
        _start(children, helpers, (), lambda: _units(units_r, path, recompress, removed, parts))
        from ._parts import PartResult, agree  # (with scan's judging: imported while the helpers work)

        marks, mine, infos = _units(units_r, path, recompress, removed, parts)
        got = [(marks, mine)]
        while children:
            theirs = _collect(children)
            if theirs is None:
                return False
            got.append(theirs[:2])
            infos.update(theirs[2])
    finally:
        os.close(units_r)
        if units_w >= 0:
            os.close(units_w)
        for pid, figures_r in children:
            _stop(pid, figures_r)
    try:
        if _stamp(path) != stamp:  # rewritten while its units were read: they may hold bytes of both
            return False
    except OSError:
        return False
    if sorted(infos) != list(range(parts + 1)) or infos[0] is not None:
        return False
    results = [PartResult(k - 1, *infos[k]) for k in range(1, parts + 1)]
    if not agree(results):
        return False
    whole = BinarySize(out.path)
    _merge(whole, [([], whole), *got])
    try:
        settle(whole, path)  # before the file's stamp is checked: it reads the file again
        if _stamp(path) != stamp:
            return False
    except (OSError, ValueError):
        return False
    for name in _SUMS:
        setattr(out, name, getattr(whole, name))
    return True


def _units(units_r: int, path: str, recompress: str | None, removed: Callable[[str], bool], parts: int) -> _Work:
    """Measure the units whose numbers this process reads from ``units_r``: 0 the fatbins of the file's sections,
    ``k`` those that part ``k - 1`` of the search finds; per unit, where its part began and ended and what failed
    (``_parts.PartResult``'s fields; for unit 0 only what failed)."""
    from ._reader import SearchPart, iter_fatbins, iter_part
    from ._size import BinarySize, _measure_one

    out = BinarySize(path)
    shapes: _Shapes = {}
    marks: _Marks = []
    infos: dict[int, Any] = {}
    while data := os.read(units_r, _UNIT.size):
        (unit,) = _UNIT.unpack(data)
        part = SearchPart(unit - 1, parts) if unit else None
        error = None
        try:
            found = iter_part(path, part) if part is not None else iter_fatbins(path, relocatable=True)
            for seq, fb in enumerate(found):
                marks.append(((unit << 32) + seq, len(out.payloads), len(out.copies)))
                _measure_one(out, fb, recompress, removed, shapes)
        except (OSError, ValueError, MemoryError, RecursionError) as exc:
            error = f"{type(exc).__name__}: {exc}"
        infos[unit] = error if part is None else (part.first, part.resume, part.spent, part.budget, error)
    return marks, out, infos


def _feed(fatbins: Iterable[Fatbin], jobs_w: int, found: list[Fatbin], measure: Callable[[int], None]) -> None:
    """Run the search: each fatbin kept in ``found`` and its record written to ``jobs_w`` (several at once while
    they are small: the search finds thousands in a burst), or measured here when the pipe is full."""
    pending = bytearray()
    weight = 0  # bytes of the fatbins whose records are pending

    def flush() -> None:
        nonlocal weight
        try:
            os.write(jobs_w, pending)
        except BlockingIOError:  # the pipe is full: the helpers are behind (or gone); measured here
            for index, *_place in _RECORD.iter_unpack(pending):
                measure(index)
        pending.clear()
        weight = 0

    for fb in fatbins:
        found.append(fb)
        if fb.standalone:  # read whole, not from a fatbin header: measured here
            measure(len(found) - 1)
            continue
        pending += _RECORD.pack(
            len(found) - 1, fb.offset, fb.size, (1 if fb.embedded else 0) | (2 if fb.relocatable else 0)
        )
        weight += fb.size
        if weight >= _FLUSH or len(pending) >= _RECORDS_AT_ONCE * _RECORD.size:  # the search may not yield for a while
            flush()
    if pending:
        flush()


def _grow(fd: int) -> None:
    """A larger pipe (Linux: 1 MiB, 43,690 records) lets the search run on while the helpers are behind."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, 1 << 20)
    except (ImportError, AttributeError, OSError):  # not Linux, or over the limit set for this user
        pass


def _start(
    children: list[tuple[int, int]], helpers: int, inherited: tuple[int, ...], work: Callable[[], _Work]
) -> None:
    """Fork ``helpers`` processes that each run ``work`` and send what it gives, each added to ``children`` (its id
    and figure pipe) as it is forked: an interrupt at any moment leaves every helper in ``children``, which the
    caller ends. Fewer where the system gives no more processes or descriptors (the work is shared by those
    started, or left to the caller)."""
    for _ in range(helpers):
        try:
            figures_r, figures_w = os.pipe()
        except OSError:
            return
        with _signals_held() as mask:  # forked and listed, or neither
            try:
                pid = os.fork()
            except OSError:
                os.close(figures_r)
                os.close(figures_w)
                return
            if pid == 0:  # pragma: no cover (a child: coverage of forks is not collected)
                try:
                    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
                    _helper((*inherited, figures_r, *(r for _p, r in children)), figures_w, work)
                finally:
                    os._exit(1)  # never back into the parent's code
            children.append((pid, figures_r))
            os.close(figures_w)


@contextlib.contextmanager
def _signals_held() -> Iterator[set[int | signal.Signals]]:
    """A context in which Ctrl-C and SIGTERM wait (they come once it ends): around steps that must not be cut apart.
    Gives the signal mask to restore (in a child forked inside it)."""
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield mask
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _helper(inherited: tuple[int, ...], figures_w: int, work: Callable[[], _Work]) -> None:  # pragma: no cover
    """A helper's life (a forked child): run ``work``, send its figures, and exit (never return)."""
    code = 1
    try:
        import marshal
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupt is for the parent, which ends its helpers
        for fd in inherited:  # the ends this helper does not use: the pipes end when their users are done
            os.close(fd)
        marks, out, infos = work()
        view = memoryview(marshal.dumps((marks, infos, *(getattr(out, name) for name in _SUMS))))
        while view:
            view = view[os.write(figures_w, view) :]
        code = 0
    finally:
        os._exit(code)


def _taken(jobs_r: int, path: str, recompress: str | None, removed: Callable[[str], bool]) -> _Work:
    """A helper's work beside the search: measure the fatbins whose records it reads from ``jobs_r``."""
    from ._container import _parse
    from ._size import BinarySize, _measure_one
    from ._source import _open

    src = _open(path)
    out = BinarySize(path)
    shapes: _Shapes = {}
    marks: _Marks = []
    while data := os.read(jobs_r, _BATCH * _RECORD.size):
        for index, offset, size, flags in _RECORD.iter_unpack(data):
            fb = _parse(src, offset, offset + size, None, strict=bool(flags & 1), relocatable=bool(flags & 2))
            if fb.size != size:  # the file changed since the search read it
                raise ValueError(f"the fatbin at {offset:#x} reads as {fb.size} bytes, not {size}")
            if flags & 1:
                fb.__dict__.update(embedded=True)
            marks.append((index, len(out.payloads), len(out.copies)))
            _measure_one(out, fb, recompress, removed, shapes)
    return marks, out, {}


def _collect(children: list[tuple[int, int]]) -> tuple[_Marks, BinarySize, dict[int, Any]] | None:
    """The figures of the first of ``children`` once it has exited (None if it failed), which then leaves the list;
    an interrupt while it works leaves it there (the caller ends it)."""
    import marshal

    from ._jobs import wait_readable
    from ._size import BinarySize

    pid, figures_r = children[0]
    chunks = []
    while True:
        wait_readable(figures_r)  # an interrupt lost meanwhile is raised again (_jobs.check_interrupt)
        chunk = os.read(figures_r, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    with _signals_held():  # its end of the pipe closed, waited for and out of the list, or none of these
        os.close(figures_r)
        _pid, status = os.waitpid(pid, 0)  # (at once: it closed its end of the pipe by exiting)
        children.pop(0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return None
    try:
        marks, infos, *values = marshal.loads(b"".join(chunks))
    except (ValueError, EOFError, TypeError):  # a helper's own output, but never trusted to be whole
        return None
    part = BinarySize("")
    for name, value in zip(_SUMS, values, strict=True):
        setattr(part, name, value)
    return marks, part, infos


def _stop(pid: int, figures_r: int) -> None:
    os.close(figures_r)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def _merge(out: BinarySize, parts: list[tuple[_Marks, BinarySize]]) -> None:
    """Sum the helpers' figures into ``out`` (``parts[0]`` is ``out``'s own), its rows put back in file order."""
    segments = []  # (fatbin index, payload rows, kernel copies) of every fatbin measured, by whichever process
    for marks, part in parts:
        if not marks:
            continue
        bounds = [*marks[1:], (0, len(part.payloads), len(part.copies))]
        segments += [(index, part.payloads[p:p_end], part.copies[c:c_end])
                     for (index, p, c), (_i, p_end, c_end) in zip(marks, bounds, strict=True)]  # fmt: skip
    segments.sort(key=lambda segment: segment[0])
    for _marks, part in parts[1:]:
        out.device_bytes += part.device_bytes
        out.overhead += part.overhead
        out.unparsed += part.unparsed
        for name, n in part.sections.items():
            out.sections[name] += n
        for key, (count, stored, raw) in part.entries.items():
            row = out.entries.setdefault(key, [0, 0, 0])
            row[0] += count
            row[1] += stored
            row[2] += raw
        for category, n in part.categories.items():
            out.categories[category] = out.categories.get(category, 0) + n
        for kernel, (code, images) in part.kernels.items():
            k = out.kernels.setdefault(kernel, [0, 0])
            k[0] += code
            k[1] += images
    out.payloads = [row for _i, rows, _c in segments for row in rows]
    out.copies = [copy for _i, _r, copies in segments for copy in copies]


def settle(out: BinarySize, source: str | Buffer) -> None:
    """Name the payloads of ``out`` (one binary) that ``_size._entry`` left named by their place: each whose shape
    (stored bytes, compression, kind+arch) another payload has, met by another process, is hashed from ``source``
    (the file's path, or its bytes); the others can be no duplicate, and their digest is ``None`` (their kernels'
    copies keep the place as the name of their image). The rows lose their shape and place.

    Raises
    ------
    OSError, ValueError
        The file cannot be opened, or no longer holds a payload (it changed since it was measured).
    """
    from collections import Counter

    from ._size import _digest
    from ._source import _open

    placed = [row for row in out.payloads if len(row) > 4]
    shapes = Counter((row[4][0], row[4][1], row[1]) for row in placed)
    named: dict[str, str] = {}
    src = None
    for row in placed:
        length, compression, offset = row.pop()
        if row[0][0] != "@":
            continue
        if shapes[length, compression, row[1]] < 2:
            row[0] = None
            continue
        src = src or _open(source)
        if offset + length > len(src):
            raise ValueError(f"the payload at {offset:#x} ends past the file's {len(src)} bytes (changed since read)")
        src.check(offset + length, offset)
        named[row[0]] = _digest(src.view[offset : offset + length], compression)
        row[0] = named[row[0]]
    if named:
        out.copies = [(key, kernel, crc, named.get(image, image), own) for key, kernel, crc, image, own in out.copies]
