# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""What an entry's payload says about itself, read from the first decompressed bytes only.

:attr:`FatbinEntry.payload_mismatch <cuda_fatbin.FatbinEntry.payload_mismatch>` compares an entry's
header with its payload: an ELF image's ``e_flags``, which lie in its first 64 bytes, or a PTX text's
``.version`` and ``.target`` directives, which a fatbin's minified PTX has in its first lines. Listing a
library checks every entry, so the payload is read as a growing prefix (64 bytes, then 16 times more
each step) until the answer is known: zstd through its streaming decoder, which stops once it has given
the bytes asked for (it decodes at most one more 128 KiB block); an LZ4 block by a small decoder of its
first sequences here (the ``lz4`` package decodes whole blocks only), and whole by ``lz4.block`` past
4 KiB. A payload whose answer needs all of it (no directive in it, say) is decompressed once, no more
than :meth:`FatbinEntry.data` would, and within the same bounds (the header's size, checked against
:data:`~cuda_fatbin._reader.MAX_EXPANSION` when the entry was parsed).

A member of a concatenated entry is a slice of its parent's stream, which is decompressed once per
fatbin (:meth:`FatbinEntry.data`); its prefix is read from there.
"""

from __future__ import annotations

import re

from ._arch import Arch
from ._container import FatbinEntry, _arch_of, _entry_base
from ._detect import flags_sm, ptx_target
from ._elf import ELF_MAGIC, EM_CUDA, ElfFormatError, read_header
from ._source import FatbinFormatError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from ._container import _Row
    from ._source import _Data

__all__ = ["lz4_prefix", "mismatch", "prefixes", "ptx_target_of"]

_FIRST = 64  # an ELF header, and the directives of minified PTX (seen within the first 40 bytes)
_GROWTH = 16
_LZ4_PARTIAL = 4096  # an LZ4 prefix longer than this is cheaper whole, decoded by lz4.block in C
_RUN_FF = re.compile(rb"\xff*")


def lz4_prefix(raw: bytes, want: int) -> bytes:
    """The first ``want`` bytes an LZ4 block decodes to (fewer if it ends first).

    Decodes sequences (token, literal length, literals, offset, match length) until ``want`` bytes are
    out: the work is linear in ``want`` plus the input read, whatever the input claims (a length's run of
    0xff bytes is measured by a regular expression, a match is copied only up to ``want``).

    Raises
    ------
    ValueError
        The block is malformed before ``want`` bytes are out: literals or an offset past the end of the
        input, an offset of 0 or before the start of the output.
    """
    return bytes(_lz4_decode(raw, want)[0])


def _lz4_decode(raw: bytes, want: int) -> tuple[bytearray, int, int]:
    """:func:`lz4_prefix`'s bytes (never more than ``want``); where the bytes it read end; the furthest position
    it compared with the end of the input.

    Every byte read lies before the first, every position compared with ``len(raw)`` at or before the second:
    when that one is below ``len(raw)``, any input longer than it that starts with the same bytes read decodes
    to the same bytes (:func:`_lz4_first`).
    """
    out = bytearray()
    got, i, n = 0, 0, len(raw)  # got: len(out), kept in a local (a library has thousands of payloads)
    while i < n and got < want:
        token = raw[i]
        i += 1
        length = token >> 4
        if length == 15:
            if i < n and raw[i] != 255:  # the usual short run: one byte, no search
                length += raw[i]
                i += 1
            else:
                run = _RUN_FF.match(raw, i).end()  # type: ignore[union-attr]  # always matches (maybe empty)
                if run >= n:
                    raise ValueError("LZ4 literal length runs past the end of the block")
                length += 255 * (run - i) + raw[run]
                i = run + 1
        if length:  # (a cubin's header is mostly matches without literals)
            if i + length > n:
                raise ValueError("LZ4 literals run past the end of the block")
            room = want - got
            if length >= room:  # the rest of the literals is not read
                out += raw[i : i + room]
                return out, i + room, i + length
            out += raw[i : i + length]
            got += length
            i += length
            if i >= n:  # the last sequence holds literals only
                break
        elif i >= n:
            break
        if i + 2 > n:
            raise ValueError("LZ4 match offset runs past the end of the block")
        offset = raw[i] | raw[i + 1] << 8
        i += 2
        if offset == 0 or offset > got:
            raise ValueError(f"LZ4 match offset {offset} is outside the {got} bytes decoded")
        length = token & 15
        room = want - got
        if length == 15:  # a long match: only its first ``room`` bytes are needed
            while i < n and length < room + 19:
                length += raw[i]
                if raw[i] != 255:
                    break
                i += 1
            i += 1
        length += 4
        if length > room:
            length = room
        start = got - offset
        if offset >= length:
            out += out[start : start + length]
        else:  # the match overlaps what it writes: its first ``offset`` bytes repeat
            out += (out[start:] * (length // offset + 1))[:length]
        got += length
    return out, i, i


#: :func:`_lz4_first`'s answers: the input bytes an LZ4 decode of :data:`_FIRST` bytes read -> those bytes, and the
#: furthest position it compared with the input's end. A library's thousands of PTX entries begin with the same
#: few lines, compressed alike (libcufft: 8,183 PTX payloads, 9 distinct first 48 bytes). Bounded: emptied, with
#: the lengths, at 256 inputs; at most 8 lengths are tried.
_LZ4_HEADS: dict[bytes, tuple[bytes, int]] = {}
_LZ4_READ: list[int] = []
_LZ4_HEADS_MAX = 256
_LZ4_READ_MAX = 8


def _lz4_first(raw: bytes) -> bytes:
    """``lz4_prefix(raw, _FIRST)``, from :data:`_LZ4_HEADS` when ``raw`` starts with bytes a decode read before
    and is longer than the furthest position that decode compared with its input's end (:func:`_lz4_decode`).
    """
    n = len(raw)
    for used in _LZ4_READ:
        known = _LZ4_HEADS.get(raw[:used])
        if known is not None and known[1] < n:
            return known[0]
    out, used, reach = _lz4_decode(raw, _FIRST)
    head = bytes(out)
    if reach < n and len(head) == _FIRST:
        if len(_LZ4_HEADS) >= _LZ4_HEADS_MAX:
            _LZ4_HEADS.clear()
            _LZ4_READ.clear()
        _LZ4_HEADS[raw[:used]] = (head, reach)
        if used not in _LZ4_READ and len(_LZ4_READ) < _LZ4_READ_MAX:
            _LZ4_READ.append(used)
    return head


class _Span:
    """A file-like reader of ``src``'s bytes [start, end) for zstd's stream reader (``os.pread`` in a file)."""

    def __init__(self, src: _Data, start: int, end: int) -> None:
        self.src, self.pos, self.end = src, start, end

    def read(self, size: int = -1) -> bytes:
        stop = self.end if size < 0 else min(self.end, self.pos + size)
        out = self.src.read(self.pos, stop)
        self.pos = stop
        return out


def prefixes(entry: FatbinEntry) -> Iterator[tuple[bytes, bool]]:
    """Growing prefixes of ``entry``'s decompressed payload: ``(bytes, whole)``, the last one whole.

    Raises
    ------
    FatbinFormatError
        The payload is obfuscated, the file shrank, or the bytes do not decode (``ValueError`` from the
        LZ4 decoder, the codec's own error otherwise, both re-raised as this).
    ImportError
        The codec's package is not installed.
    """
    size = entry.size
    if entry._parent is not None or entry.compression not in ("none", "zstd", "lz4"):
        yield entry.data(), True  # a member's stream is decompressed once per fatbin; obfuscated raises
        return
    src = entry._src
    if src is None:
        raise FatbinFormatError(f"{entry.kind} entry has no data to read", entry.offset)
    start = entry._payload
    if entry.compression == "none":
        want = _FIRST
        while True:
            end = start + min(want, entry.stored_size)
            src.check(end, entry.offset)
            yield src.read(start, end), end == start + entry.stored_size
            if end == start + entry.stored_size:
                return
            want *= _GROWTH
    raw_end = start + entry._compressed
    if entry.compression == "lz4":
        want = _FIRST
        while want <= _LZ4_PARTIAL and want < size:
            head = _lz4_head(entry, src, want)
            if head is None:
                break
            yield head, False
            want *= _GROWTH
        yield entry._decompressed(), True
        return
    yield from _zstd_prefixes(entry, src, start, raw_end, size)


def _lz4_head(entry: FatbinEntry, src: _Data, want: int) -> bytes | None:
    """The first ``want`` bytes of an LZ4 payload (stored, not a member), from the input that holds them; ``None``
    where that input does not give them (it may be too short for these sequences: decode it all).

    Raises
    ------
    FatbinFormatError
        The whole payload was read and does not decode.
    """
    return _lz4_head_at(src, entry._payload, entry._compressed, entry.kind, entry.offset, want)


def _lz4_head_at(src: _Data, start: int, compressed: int, kind: str, offset: int, want: int) -> bytes | None:
    """:func:`_lz4_head` of the ``compressed`` bytes at ``start`` of an entry of ``kind`` whose header is at
    ``offset``."""
    raw_end = start + compressed
    stop = min(raw_end, start + 2 * want + 64)  # ample input for ``want`` bytes out
    try:
        raw = src.read(start, stop)
        head = _lz4_first(raw) if want == _FIRST and kind == "ptx" else lz4_prefix(raw, want)
    except ValueError as e:
        if stop == raw_end:
            raise FatbinFormatError(f"lz4 payload does not decompress: {e}", offset) from None
        return None
    return head if len(head) == want else None


#: zstd decoders to use again (each ``stream_reader`` starts a new session in its decoder): making one per entry
#: cost a third of reading its first block. One reader at a time holds each; the list's pop and append are atomic.
_ZSTD: list[Any] = []


def _zstd_prefixes(entry: FatbinEntry, src: _Data, start: int, end: int, size: int) -> Iterator[tuple[bytes, bool]]:
    import zstandard

    decoder = _ZSTD.pop() if _ZSTD else zstandard.ZstdDecompressor()
    try:
        yield from _zstd_stream(entry, decoder, src, start, end, size)
    finally:  # run once the caller has what it needed, or drops this generator
        if len(_ZSTD) < 4:
            _ZSTD.append(decoder)
    # the whole payload as data() reads it (held once, checked to end at the header's size): gathering it here
    # beside the prefix and copying it took three times its size
    yield entry._decompressed(), True


def _zstd_stream(
    entry: FatbinEntry, decoder: Any, src: _Data, start: int, end: int, size: int
) -> Iterator[tuple[bytes, bool]]:
    import zstandard

    try:
        span = _Span(src, start, end)  # any object with read(): zstandard asks for 16 KiB at a time
        reader = decoder.stream_reader(span, read_size=1 << 14)
        got = bytearray()
        want = _FIRST
        while want < size:
            while len(got) < want:
                chunk = reader.read(want - len(got))
                if not chunk:
                    break
                got += chunk
            if len(got) < want:
                raise FatbinFormatError(f"zstd payload decompressed to {len(got)} bytes; header says {size}", 0)
            yield bytes(got), False
            want *= _GROWTH
    except FatbinFormatError as e:
        raise FatbinFormatError(e.message, entry.offset) from None
    except zstandard.ZstdError as e:
        raise FatbinFormatError(f"zstd payload does not decompress: {e}", entry.offset) from None


_UNDECIDED = object()
#: :func:`_ptx`'s answers by the lines read: a library's thousands of PTX entries start with the same few lines.
#: Bounded: texts up to 4 KiB, emptied at 1024 of them.
_PTX_SEEN: dict[tuple[bytes, bool], object] = {}
_PTX_SEEN_TEXT = 4096
_PTX_SEEN_MAX = 1024


def _ptx(head: bytes, whole: bool) -> object:
    """``ptx_target`` of the whole text, from a prefix: ``_UNDECIDED`` while the prefix cannot tell.

    Only whole lines are searched: a directive found in them is the whole text's first (both patterns
    match within one line, from its start), and a line cut at the end of the prefix is never taken for
    a shorter one.
    """
    text = head if whole else head[: head.rfind(b"\n") + 1]
    key = (text, whole)
    known = _PTX_SEEN.get(key, _PTX_SEEN)
    if known is not _PTX_SEEN:
        return known
    try:
        target = ptx_target(text)
    except ValueError as e:
        return e  # not kept: the caller may raise it, and an exception raised again keeps growing its traceback
    answer = target if target is not None or whole else _UNDECIDED
    if len(text) <= _PTX_SEEN_TEXT:
        if len(_PTX_SEEN) >= _PTX_SEEN_MAX:
            _PTX_SEEN.clear()
        _PTX_SEEN[key] = answer
    return answer


def _verdict(entry: FatbinEntry, arch: Arch, head: bytes, whole: bool) -> object:
    """The mismatch that ``head`` shows (a string or ``None``), or ``_UNDECIDED``."""
    return _verdict_of(entry.kind, arch, head, whole)


#: :func:`_verdict_of`'s answers for the first :data:`_FIRST` bytes of PTX payloads, by the header's arch and those
#: bytes: a library's thousands of PTX payloads begin alike (libcufft: 8,183, 9 distinct first 48 bytes). Bounded:
#: emptied at 1024.
_PTX_VERDICTS: dict[tuple[object, ...], object] = {}


def _verdict_of(kind: str, arch: Arch, head: bytes, whole: bool) -> object:
    """:func:`_verdict` of an entry of ``kind``."""
    if kind == "ptx" and not whole and len(head) <= _FIRST:
        key = (arch.sm, arch.suffix, head)
        verdict = _PTX_VERDICTS.get(key, _PTX_VERDICTS)
        if verdict is _PTX_VERDICTS:
            if len(_PTX_VERDICTS) >= 1024:
                _PTX_VERDICTS.clear()
            verdict = _PTX_VERDICTS[key] = _ptx_verdict(arch, head, whole)
        return verdict
    if kind == "ptx":
        return _ptx_verdict(arch, head, whole)
    if head[:4] != ELF_MAGIC:
        target = _ptx(head, whole)
        if target is _UNDECIDED or isinstance(target, ValueError):
            return target if target is _UNDECIDED else None
        what = "PTX text" if target is not None else "data that is not ELF"
        return f"an ELF header ({arch}) around {what}"
    if len(head) < 64 and not whole:
        return _UNDECIDED
    try:
        header = read_header(head)
    except ElfFormatError:
        return None
    if header.machine != EM_CUDA:
        return None
    sm, a_flag, _ = flags_sm(header)
    if sm == arch.sm:  # the header's SM (an arch for that SM has that number): no verdict either way
        return None
    image = _arch_of(sm, "a" if a_flag else "")  # one Arch per value, None for e_flags that name no arch
    if image is None:  # (an "a" below sm_90): no verdict, as cubin_arch gives none
        return None
    if image.sm != arch.sm:
        return f"the header says {arch}, the ELF image is for {image}"
    return None


def _ptx_verdict(arch: Arch, head: bytes, whole: bool) -> object:
    """:func:`_verdict_of` of a PTX entry (a string, ``None`` or ``_UNDECIDED``: kept, never an exception)."""
    if head[:4] == ELF_MAGIC:
        return f"a PTX header ({arch.compute}) around an ELF image"
    target = _ptx(head, whole)
    if target is _UNDECIDED or isinstance(target, ValueError):
        return target if target is _UNDECIDED else None
    if target is not None and target.sm != arch.sm:  # type: ignore[attr-defined]
        return f"the header says {arch.compute}, the PTX .target is {target}"
    return None


def ptx_target_of(entry: FatbinEntry) -> Arch | None:
    """The ``.target`` of a PTX entry's payload, from as few bytes as tell it; ``None`` where it has none.

    Raises
    ------
    FatbinFormatError
        The payload cannot be read (:func:`prefixes`).
    ValueError
        The ``.target`` names no valid arch.
    """
    if _in_file(entry):
        return entry._ptx_target()
    for head, whole in prefixes(entry):
        target = _ptx(head, whole)
        if isinstance(target, ValueError):
            raise target
        if target is not _UNDECIDED:
            return target  # type: ignore[return-value]
    return None


def mismatch(entry: FatbinEntry) -> str | None:
    """:attr:`FatbinEntry.payload_mismatch`, from as few payload bytes as tell it."""
    arch = entry.arch
    if entry.kind not in ("elf", "ptx") or arch is None:
        return None
    try:
        src = entry._src
        if entry.compression == "lz4" and entry._parent is None and entry.size > _FIRST and src is not None:
            head = _lz4_head(entry, src, _FIRST)  # (what prefixes gives first; tried without it: 12,803 in a library)
            verdict = _UNDECIDED if head is None else _verdict(entry, arch, head, False)
            if verdict is not _UNDECIDED:
                return verdict  # type: ignore[return-value]
        if _in_file(entry):
            return _mismatch_in_place(entry, arch)
        for head, whole in prefixes(entry):
            verdict = _verdict(entry, arch, head, whole)
            if verdict is not _UNDECIDED:
                return verdict  # type: ignore[return-value]
    except (FatbinFormatError, ImportError):  # unreadable, or lz4/zstandard not installed
        return None
    return None


def row_mismatch(src: _Data, row: _Row) -> object:
    """:func:`mismatch` of the entry ``_container._entry_of`` makes of ``row`` (a header that ``_reader._rows``
    checked, not a concatenated one), from its first bytes, without making it, where
    they tell it as they tell :func:`mismatch`: an LZ4 payload's first 64 bytes, the ELF header of one stored
    uncompressed in a mapped file. Else :data:`UNDECIDED`: make the entry and ask it (a part's thousands of fatbins
    stored as data are judged by their headers, their objects made for a few)."""
    pos, kind, sm, vmajor, vminor, flags, hsize, psize, csize, size, compression = row[:11]
    base = _entry_base(kind, sm, vmajor, vminor, flags)
    name, arch = base["kind"], base["arch"]
    if (name != "elf" and name != "ptx") or arch is None:
        return None
    try:
        if compression == "lz4" and size > _FIRST:
            head = _lz4_head_at(src, pos + hsize, csize, name, pos, _FIRST)
            return _UNDECIDED if head is None else _verdict_of(name, arch, head, False)  # type: ignore[arg-type]
        if compression == "none" and src.fd is not None and name == "elf":
            head = src.read(pos + hsize, pos + hsize + min(psize, 64))
            if head[:4] == ELF_MAGIC:  # as _mismatch_in_place reads it
                return _verdict_of(name, arch, head, psize <= 64)  # type: ignore[arg-type]
    except FatbinFormatError:  # as mismatch() says it: unreadable, no verdict
        return None
    return _UNDECIDED


#: What :func:`row_mismatch` gives where an entry's first bytes do not tell.
UNDECIDED = _UNDECIDED


def _in_file(entry: FatbinEntry) -> bool:
    """Stored uncompressed in a file: read in place, its holes skipped, never copied whole."""
    src = entry._src
    return entry._parent is None and entry.compression == "none" and src is not None and src.fd is not None


def _mismatch_in_place(entry: FatbinEntry, arch: Arch) -> str | None:
    """:func:`mismatch` of an entry stored uncompressed in a file: the ELF header from the first bytes, a PTX
    ``.target`` by the windowed search that skips holes (a sparse payload costs what the file holds)."""
    raw = entry._in_place()
    head = bytes(raw[:64])
    if entry.kind == "elf" and head[:4] == ELF_MAGIC:
        return _verdict(entry, arch, head, len(raw) <= 64)  # type: ignore[return-value]
    if entry.kind == "ptx" and head[:4] == ELF_MAGIC:
        return f"a PTX header ({arch.compute}) around an ELF image"
    try:
        target = entry._ptx_target()
    except ValueError:
        return None
    if entry.kind == "ptx":
        return (
            f"the header says {arch.compute}, the PTX .target is {target}" if target and target.sm != arch.sm else None
        )
    return f"an ELF header ({arch}) around {'PTX text' if target is not None else 'data that is not ELF'}"
