# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""A part of ``scan`` judges fatbins stored as data by their checked entry headers, making objects for a few.

``_reader._rows`` checks a candidate with the functions ``_parse`` uses: the oracle is ``_parse`` itself, on
the same bytes (valid fatbins of every kind and compression, then edited at random): the same verdict, the same
words and offset, the same headers charged, and, made of the headers, the same :class:`Fatbin`. What a part tells
of a fatbin from its headers (its signature, what its payloads say, its class and counts) is what the objects tell.
"""

from __future__ import annotations

import struct

import lz4.block
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuda_fatbin import _container, _parts, _payload, _reader, _select, _source
from cuda_fatbin._arch import Arch
from cuda_fatbin._inputs import _Item
from cuda_fatbin._reader import FatbinFormatError, SearchPart

from elf_testing import make_elf

_ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")
GPUS = [Arch.parse(g) for g in ("7.5", "8.0", "8.6", "9.0", "10.0", "12.0")]
_FLAGS = {"none": 0, "lz4": 0x2000, "zstd": 0x8000}


def _ptx_text(sm: int, lines: int = 0) -> bytes:
    body = "".join(f"// line {i}\n" for i in range(lines))
    return f".version 8.0\n.target sm_{sm}\n.address_size 64\n{body}.visible .entry k()\n{{\nret;\n}}\n".encode()


def _cubin(sm: int) -> bytes:
    return make_elf([(".text.k", 1, bytes(64))], machine=190, flags=sm, e_type=2, abi_version=7, osabi=0x33)


def _entry(kind: int, sm: int, payload: bytes, compression: str, strings: tuple[bytes, bytes] = (b"", b"")) -> bytes:
    """An entry header (its identifier and options after the 64 fixed bytes) and its payload, stored so."""
    raw = {"lz4": lambda p: lz4.block.compress(p, store_size=False), "zstd": zstandard.ZstdCompressor().compress,
           "none": bytes}[compression](payload)  # fmt: skip
    stored = raw + bytes(-len(raw) % 8)
    ident, opts = strings
    extra = b""
    id_off = opt_off = 0
    if ident:
        id_off, extra = 64, ident + b"\0"
    if opts:
        extra += bytes(-len(extra) % 8)
        opt_off = 64 + len(extra)
        extra += struct.pack("<II", opt_off + 8, len(opts)) + opts + b"\0"
    extra += bytes(-len(extra) % 8)
    version = (8, 0) if kind == 1 else (1, 8)
    header = _ENTRY.pack(kind, 0x0101, 64 + len(extra), len(stored), len(raw) if compression != "none" else 0,
                         opt_off, version[1], version[0], sm, id_off, len(ident), 0x11 | _FLAGS[compression], 0,
                         len(payload))  # fmt: skip
    return header + extra + stored


def _concat(members: list[tuple[int, int, bytes]]) -> bytes:
    """A zstd-compressed concatenated entry holding ``(kind, sm, payload)`` members."""
    stream = b"".join(p for _k, _sm, p in members)
    table = struct.pack("<II", len(members), 8 + 64 * len(members))
    at = 0
    for kind, sm, payload in members:
        table += _ENTRY.pack(kind, 0x0101, at, len(payload), 0, 0, 0 if kind == 1 else 8, 8 if kind == 1 else 1, sm,
                             0, 0, 0x11, 0, 0)  # fmt: skip
        at += len(payload)
    packed = zstandard.ZstdCompressor().compress(stream)
    padded = packed + bytes(-len(packed) % 8)
    header = _ENTRY.pack(0x100, 0x0101, 64 + len(table), len(padded), len(packed), 64, 0, 0, 0, 0, 0, 0x8011, 0,
                         len(stream))  # fmt: skip
    return header + table + padded


def _fatbin(*entries: bytes) -> bytes:
    body = b"".join(entries)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


#: Fatbins stored as data of every kind a part meets: PTX and SASS in each compression, a payload whose header
#: names another SM (a verdict), long PTX heads, strings, several entries, a concatenated entry, LTO-IR
SEEDS = {
    "ptx lz4": lambda n: _fatbin(_entry(1, (75, 80, 90)[n % 3], _ptx_text((75, 80, 90)[n % 3], n % 40), "lz4")),
    "ptx lz4 other sm": lambda n: _fatbin(_entry(1, 80, _ptx_text(90 + n % 2 * 10, n % 3), "lz4")),
    "ptx zstd": lambda n: _fatbin(_entry(1, 86, _ptx_text(86), "zstd", (b"a/b.cu", b"-O3"))),
    "ptx none": lambda n: _fatbin(_entry(1, 90, _ptx_text(90 - n % 2 * 10), "none")),
    "sass lz4": lambda n: _fatbin(_entry(2, (80, 86, 90)[n % 3], _cubin((80, 86, 90, 75)[n % 4]), "lz4")),
    "sass none": lambda n: _fatbin(_entry(2, 80, _cubin(80 + n % 2 * 10), "none", (b"k.cu", b""))),
    "sass zstd": lambda n: _fatbin(_entry(2, 100, _cubin(100), "zstd")),
    "sass as ptx": lambda n: _fatbin(_entry(2, 90, _ptx_text(90), "lz4")),
    "ltoir": lambda n: _fatbin(_entry(8, 90, b"\x7fNVVM" + bytes(n % 64 + 3), "none")),
    "two": lambda n: _fatbin(_entry(2, 80, _cubin(80), "lz4"), _entry(1, 90, _ptx_text(90), "lz4", (b"x", b"-g"))),
    "concat": lambda n: _fatbin(_concat([(2, 80, _cubin(80)), (1, 90, _ptx_text(90))])),
    "empty identifier": lambda n: _patched(_fatbin(_entry(1, 80, _ptx_text(80), "lz4", (b"id", b"-O1"))), 16 + 0x24, 0),
    "filler": lambda n: b"\x01" * (n % 97),
}


def _patched(blob: bytes, at: int, value: int) -> bytes:
    out = bytearray(blob)
    struct.pack_into("<I", out, at, value)
    return bytes(out)


def _plain(fb: _reader.Fatbin) -> tuple:
    """Everything a :class:`Fatbin` holds, its entries' fields and members included."""

    def entry(e: _reader.FatbinEntry) -> tuple:
        return (*e.as_dict().items(), e.flags, e._payload, e._compressed, e._member_offset, e._exact,
                tuple(entry(m) for m in e.members))  # fmt: skip

    return (fb.offset, fb.size, fb.version, fb.section, fb.standalone, fb.relocatable, fb.embedded,
            tuple(entry(e) for e in fb.entries))  # fmt: skip


def _edited(data, blob: bytes) -> bytes:
    out = bytearray(blob)
    for _ in range(data.draw(st.integers(0, 6))):
        at = data.draw(st.integers(0, len(out) - 1))
        if data.draw(st.booleans()):  # a header field: a size, an offset, a kind, a count
            at = data.draw(st.sampled_from([i for i in range(0, min(len(out), 400), 4)]))
            value = data.draw(st.sampled_from([0, 1, 8, 63, 64, 72, 0x100, 1 << 20, 2**32 - 1]))
            struct.pack_into("<I", out, at, value)
        else:
            out[at] = data.draw(st.integers(0, 255))
    return bytes(out[: data.draw(st.integers(16, len(out)))]) if data.draw(st.booleans()) else bytes(out)


def _outcome(blob: bytes, start: int, read) -> tuple:
    src = _source._open(blob)
    try:
        got = read(src)
    except FatbinFormatError as e:
        return ("refused", e.offset, e.message, src.headers), None
    return ("accepted", src.headers), (src, got)


@settings(max_examples=400, deadline=None)
@given(data=st.data(), lead=st.sampled_from([0, 8, 40]))
def test_rows_accept_and_refuse_what_parse_does_and_make_the_same_fatbin(data, lead):
    seed = data.draw(st.sampled_from(sorted(set(SEEDS) - {"filler"})))
    blob = b"\x01" * lead + _edited(data, SEEDS[seed](data.draw(st.integers(0, 50))))
    whole, parsed = _outcome(blob, lead, lambda src: _container._parse(src, lead, len(src), None, strict=True))
    lean, rows = _outcome(blob, lead, lambda src: _reader._rows(src, lead, len(src)))
    assert lean == whole
    # read from the bytes a search read there (as many as it reads, or too few: then from the whole data)
    base = data.draw(st.integers(0, lead))
    chunk = blob[base : base + data.draw(st.sampled_from([_reader._CHUNK, 8, 30, 90, 200, len(blob)]))]
    assert _outcome(blob, lead, lambda src: _reader._rows(src, lead, len(src), chunk, base))[0] == whole
    if parsed is None:
        return
    src, found = rows
    if isinstance(found, _reader.Fatbin):  # a concatenated entry: made by _parse itself
        assert any(e.kind == "concat" for e in found.entries)
        made = found
    else:
        end, headers = found
        assert not any(row[1] == 0x100 for row in headers)
        made = _reader._fatbin_of_rows(src, lead, end, headers, None)
    assert _plain(made) == _plain(parsed[1])


@pytest.mark.parametrize("seed", sorted(set(SEEDS) - {"filler"}))
def test_rows_of_each_kind_of_fatbin_make_the_fatbin_parse_makes(seed):
    blob = SEEDS[seed](3)
    whole, parsed = _outcome(blob, 0, lambda src: _container._parse(src, 0, len(src), None, strict=True))
    lean, rows = _outcome(blob, 0, lambda src: _reader._rows(src, 0, len(src)))
    assert lean == whole and whole[0] == "accepted"
    src, found = rows
    made = found if isinstance(found, _reader.Fatbin) else _reader._fatbin_of_rows(src, 0, *found, None)
    assert _plain(made) == _plain(parsed[1])


def _stored(blob: bytes, tmp_path, mapped: bool) -> list:
    """The fatbins a part's search finds in an ELF file whose .rodata holds ``blob`` (mapped: over 1 MiB)."""
    sections = [(".rodata", 1, blob)]
    if mapped:
        sections.append((".pad", 1, b"\x02" * (1 << 20)))
    path = tmp_path / "lib.so"
    path.write_bytes(make_elf(sections, e_type=3))
    return list(_reader.iter_part_rows(str(path) if mapped else path.read_bytes(), SearchPart(0, 1)))


_BLOCKS = st.lists(st.tuples(st.sampled_from(sorted(SEEDS)), st.integers(0, 400)), min_size=1, max_size=16)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blocks=_BLOCKS, mapped=st.booleans())
def test_what_a_part_reads_of_the_headers_is_what_the_objects_say(tmp_path, blocks, mapped):
    """The signature, and each verdict the headers tell (``row_mismatch``), are those of the fatbin's objects;
    the fatbins found and made are those ``iter_part`` yields."""
    blob = b"".join(SEEDS[kind](n) for kind, n in blocks)
    found = _stored(blob, tmp_path, mapped)
    source = str(tmp_path / "lib.so") if mapped else (tmp_path / "lib.so").read_bytes()
    objects = list(_reader.iter_part(source, SearchPart(0, 1)))
    assert [_plain(_reader.stored_fatbin(f)) for f in found] == [_plain(fb) for fb in objects]
    for f, fb in zip(found, objects, strict=True):
        if isinstance(f[4], _reader.Fatbin):
            continue
        assert _parts._row_signature(f[4]) == _select._signature(fb)
        for row, entry in zip(f[4], fb.entries, strict=True):
            verdict = _payload.row_mismatch(f[0], row)
            assert verdict is _payload.UNDECIDED or verdict == entry.payload_mismatch, entry


def _part_by_objects(path: str, part: int, parts: int, driver) -> tuple:
    """What a part found, judged and counted as before: a :class:`Fatbin` made of each fatbin."""
    fatbins = list(_reader.iter_part(path, SearchPart(part, parts)))
    cuda = _select.parse_driver(driver)
    runs = [gpu for gpu in GPUS if _select.support_gap(gpu, cuda) is None]
    return _select._classes(fatbins, runs, driver), _parts._tally(fatbins)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blocks=_BLOCKS, parts=st.integers(1, 4), driver=st.sampled_from([None, "12.0", "13.0"]))
def test_a_part_judges_and_counts_as_the_objects_of_its_fatbins_do(tmp_path, blocks, parts, driver):
    blob = b"".join(SEEDS[kind](n) for kind, n in blocks)
    path = tmp_path / "lib.so"
    path.write_bytes(make_elf([(".rodata", 1, blob * 3), (".pad", 1, b"\x02" * (1 << 20))], e_type=3))
    item = _Item(str(path), size=path.stat().st_size, follow=True)
    for k in range(parts):
        got = _parts.run_part(_parts.PartItem(item, k, parts), GPUS, driver)
        assert got.error is None
        classes, tally = _part_by_objects(str(path), k, parts, driver)
        assert (got.classes, got.tally) == (classes, tally)


def test_a_part_makes_objects_for_the_fatbins_it_judges_only(tmp_path, monkeypatch):
    """A part of libcufft holds ~6,000 fatbins of a few dozen signatures: an object per fatbin cost half its time.
    Here 300 fatbins of 3 signatures, their payloads read from their headers: the objects of a few are made."""
    blob = b"".join(SEEDS[kind](0) for kind in ("ptx lz4", "sass lz4", "sass none") * 100)
    path = tmp_path / "lib.so"
    path.write_bytes(make_elf([(".rodata", 1, blob), (".pad", 1, b"\x02" * (1 << 20))], e_type=3))
    made = []
    real = _container._entry_of
    for module in (_container, _reader):  # _parse's, and those made of the headers
        monkeypatch.setattr(module, "_entry_of", lambda *a: made.append(a) or real(*a))
    item = _Item(str(path), size=path.stat().st_size, follow=True)
    got = _parts.run_part(_parts.PartItem(item, 0, 1), GPUS, None)
    assert got.error is None and sum(n for _answers, n in got.classes) == 300
    assert len(made) <= 6, len(made)  # one judged per class, one counted per signature


@pytest.mark.parametrize("sub", [b"\x50\xed\x55\xba", b".target", b"a.b"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_find_in_memory_is_bytes_find(sub, data):
    """The search of data in memory (``re``'s literal search) finds what ``bytes.find`` finds, in any bounds."""
    chunks = data.draw(st.lists(st.sampled_from([sub, sub[:-1], b"\x00", b"x" * 13, b".", b"\x50"]), max_size=40))
    blob = b"".join(chunks)
    start = data.draw(st.integers(0, len(blob)))
    end = data.draw(st.integers(start, len(blob)))
    for source in (blob, bytearray(blob), memoryview(blob)):
        assert _source._open(source).find(sub, start, end) == blob.find(sub, start, end)


def test_a_long_search_reads_windows_of_one_mib_at_most(tmp_path, monkeypatch):
    """Windows grow from 64 KiB to 1 MiB, not to 32 MiB: a fresh 32 MiB buffer cost libcurand's search more
    in page faults and cache misses (15 ms of ~50) than the reads it saved."""
    import os

    path = tmp_path / "f.bin"
    path.write_bytes(b"\x01" * (5 << 20))
    src = _source._open(str(path))
    sizes = []
    real = os.preadv
    monkeypatch.setattr(os, "preadv", lambda fd, bufs, at: sizes.append(len(bufs[0])) or real(fd, bufs, at))
    assert src.find(b"\x50\xed\x55\xba", 0, 5 << 20) == -1
    assert sizes[:3] == [64 << 10, 1 << 20, 1 << 20] and max(sizes) == 1 << 20


_LINES = st.sampled_from([b".version 8.0\n", b".target sm_90\n", b".target sm_80a\n", b".target sm_999\n", b"//\n",
                          b"\x7fELF", b".address_size 64\n", b".target compute_90\n", b"x"])  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(_LINES, max_size=8), cut=st.integers(0, 64))
def test_a_ptx_verdict_kept_for_its_first_bytes_is_the_one_they_give(lines, cut):
    """The verdicts on the first 64 bytes of PTX payloads are kept by arch and bytes (libcufft's 8,183 begin alike):
    asked again, by any arch, the same as read from the bytes; the kept ones stay bounded."""
    head = b"".join(lines)[:cut]
    _payload._PTX_VERDICTS.clear()
    for _ in range(2):  # then kept
        for arch in ("80", "90", "90a", "100f", "100"):
            header = Arch.parse(arch)
            assert _payload._verdict_of("ptx", header, head, False) == _payload._ptx_verdict(header, head, False)
            assert _payload._verdict_of("ptx", header, head, True) == _payload._ptx_verdict(header, head, True)
    assert 0 < len(_payload._PTX_VERDICTS) <= 1024


def test_a_part_of_a_mapped_file_finds_each_fatbin_once_on_any_cut(tmp_path, monkeypatch):
    """A part of a mapped file reads where a fatbin may start (``pread``): a fatbin that starts on the cut between
    two parts, or just before or after it, back to back with the one before, is found by one part only."""
    blocks = [SEEDS["ptx lz4"](n) + b"\x00" * (8 * (n % 4)) for n in range(12)]  # gaps of 0, 8, 16 and 24 bytes
    path = tmp_path / "lib.so"
    path.write_bytes(make_elf([(".rodata", 1, b"".join(blocks)), (".pad", 1, b"\x02" * (1 << 20))], e_type=3))
    whole = [fb.offset for fb in _reader.iter_fatbins(str(path), embedded=True)]
    assert len(whole) == 12
    for at in sorted({s + d for s in whole for d in (-5, -4, -3, -1, 0, 1, 4)}):
        cut = lambda merged, part, at=at: (0, at) if part.part == 0 else (at, None)  # noqa: E731
        monkeypatch.setattr(_reader, "_slice", cut)
        found = [f[1] for k in range(2) for f in _reader.iter_part_rows(str(path), SearchPart(k, 2))]
        assert found == whole, at


_CUT_CHILD = r"""
import os, sys
from cuda_fatbin._reader import FatbinFormatError, SearchPart, iter_part_rows, stored_fatbin
path = sys.argv[1]
found = iter_part_rows(path, SearchPart(0, 1))
first, second = next(found), next(found)
os.truncate(path, (second[1] + 128 + 4095) // 4096 * 4096)  # at a page's end inside the second: the search reads
# on past it (a map's page wholly past the end faults), both are made
outcome = []
for step in (lambda: list(found), lambda: stored_fatbin(first), lambda: stored_fatbin(second)):
    try:
        step()
        outcome.append("read")
    except FatbinFormatError as e:
        outcome.append("shrank" if "shrank" in e.message else e.message)
print(*outcome)
"""


def test_a_file_cut_short_during_a_parts_search_is_an_error_not_sigbus(tmp_path):
    """A part of a mapped file reads where fatbins may start with ``pread`` and makes a fatbin's objects from the
    map only once it is checked to hold them: a file cut short meanwhile is an error, never SIGBUS."""
    import subprocess
    import sys

    blob = _fatbin(_entry(2, 80, _cubin(80) + bytes(3 << 12), "none", (b"k.cu", b""))) * 200  # 2.5 MB, back to back
    path = tmp_path / "lib.so"
    path.write_bytes(make_elf([(".rodata", 1, blob)], e_type=3))
    out = subprocess.run([sys.executable, "-c", _CUT_CHILD, str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])  # -7: SIGBUS
    assert out.stdout.split() == ["shrank", "read", "shrank"]


def _judged_as_objects(tmp_path, blob: bytes, parts: int = 1, driver=None) -> None:
    """Each part of an ELF file whose .rodata holds ``blob`` (mapped) judges and counts as its fatbins' objects."""
    path = tmp_path / "lib.so"
    path.write_bytes(make_elf([(".rodata", 1, blob), (".pad", 1, b"\x02" * (1 << 20))], e_type=3))
    item = _Item(str(path), size=path.stat().st_size, follow=True)
    for k in range(parts):
        got = _parts.run_part(_parts.PartItem(item, k, parts), GPUS, driver)
        assert got.error is None
        assert (got.classes, got.tally) == _part_by_objects(str(path), k, parts, driver)


def test_an_lz4_payload_whose_first_bytes_lie_past_the_first_read_is_judged_as_its_objects_are(tmp_path):
    """An LZ4 payload whose first 64 bytes the first compressed bytes read do not give (a literal run longer than
    them) is told by its headers as undecided, never as agreeing: its fatbin's objects say what its payload says,
    and fatbins of one signature whose payloads say so share the class of the objects."""
    import random

    image = _cubin(90)
    payload = image[:64] + random.Random(1).randbytes(400) + image[64:]  # incompressible after the ELF header
    blob = _fatbin(_entry(2, 80, payload, "lz4"))
    src = _source._open(blob)
    end, rows = _reader._rows(src, 0, len(blob))
    said = _reader.stored_fatbin((src, 0, end, None, rows)).entries[0].payload_mismatch
    assert said == "the header says sm_80, the ELF image is for sm_90"
    assert _payload.row_mismatch(src, rows[0]) is _payload.UNDECIDED
    _judged_as_objects(tmp_path, blob * 3 + SEEDS["sass lz4"](0) * 2)


#: Fatbins of several entries whose payloads the headers do not tell (zstd), three and four entries among them
_SEVERAL = [
    _fatbin(_entry(2, 80, _cubin(80), "zstd"), _entry(1, 90, _ptx_text(90), "zstd")),
    _fatbin(
        _entry(2, 80, _cubin(80), "lz4"), _entry(2, 90, _cubin(90), "zstd"), _entry(1, 100, _ptx_text(100), "zstd")
    ),
    _fatbin(
        _entry(2, 75, _cubin(75), "none"),
        _entry(2, 86, _cubin(86), "lz4"),
        _entry(1, 90, _ptx_text(90), "lz4"),
        _entry(1, 120, _ptx_text(120), "zstd"),
    ),
]


@pytest.mark.parametrize("driver", [None, "12.0"])
def test_fatbins_of_several_entries_are_signed_and_judged_from_their_headers_as_their_objects(tmp_path, driver):
    """A fatbin of two, three or four entries has the signature of its objects, and a part judges fatbins whose
    several payloads were read for their answers, some told by their headers and some not, as the objects do."""
    blob = b"".join(fb * 3 for fb in _SEVERAL)
    for f, fb in zip(_stored(blob, tmp_path, True), _reader.iter_part(str(tmp_path / "lib.so"), SearchPart(0, 1)),
                     strict=True):  # fmt: skip
        assert _parts._row_signature(f[4]) == _select._signature(fb)
    _judged_as_objects(tmp_path, blob, driver=driver)


def test_what_the_part_keeps_of_headers_and_ptx_heads_stays_bounded():
    """The signatures kept by entry header (``_parts._ROW_KEYS``) and the verdicts kept by PTX head
    (``_payload._PTX_VERDICTS``) stay bounded however many distinct headers and heads a file holds."""
    for sm in range(10, 10 + 5000):
        row = (0, 1, sm, 8, 0, 0x11, 64, 64, 0, 64, "none", 0, 0, None, 0)
        _parts._row_signature([row])  # type: ignore[list-item]
    assert 0 < len(_parts._ROW_KEYS) <= 4096
    arch = Arch.parse("9.0")
    for n in range(1500):
        _payload._verdict_of("ptx", arch, f"// {n}\n.version 8.0\n".encode(), False)
    assert 0 < len(_payload._PTX_VERDICTS) <= 1024


def test_an_empty_identifier_and_an_options_record_at_the_headers_end_are_read_by_both():
    """Edge strings both readers accept alike: an identifier whose offset is set and length zero is ``""`` (not
    ``None``), and an options record whose 8 bytes end where the header ends (its text before it) is read."""
    blob = SEEDS["empty identifier"](0)
    for read in (_container._parse, _reader._rows):
        src = _source._open(blob)
        found = read(src, 0, len(src), None, strict=True) if read is _container._parse else read(src, 0, len(src))
        fb = found if isinstance(found, _reader.Fatbin) else _reader._fatbin_of_rows(src, 0, *found, None)
        assert (fb.entries[0].identifier, fb.entries[0].options) == ("", "-O1")
    payload = lz4.block.compress(_ptx_text(80), store_size=False)
    stored = payload + bytes(-len(payload) % 8)
    header = _ENTRY.pack(1, 0x0101, 64 + 16, len(stored), len(payload), 64 + 8, 0, 8, 80, 0, 0, 0x2011, 0,
                         len(_ptx_text(80)))  # fmt: skip
    blob = _fatbin(header + b"-O3\0\0\0\0\0" + struct.pack("<II", 64, 3) + stored)
    for read in (_container._parse, _reader._rows):
        src = _source._open(blob)
        found = read(src, 0, len(src), None, strict=True) if read is _container._parse else read(src, 0, len(src))
        fb = found if isinstance(found, _reader.Fatbin) else _reader._fatbin_of_rows(src, 0, *found, None)
        assert fb.entries[0].options == "-O3"
