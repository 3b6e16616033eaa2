# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Details of the reader that users see: standalone files, the ELF cut, decompression bounds, messages."""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuda_fatbin import FatbinOptions, build_fatbin, iter_fatbins, read_fatbin
from cuda_fatbin._container import _decompress, _trim_elf
from cuda_fatbin._elf import iter_sections as iter_sections_of
from cuda_fatbin._reader import FatbinFormatError

from elf_testing import make_elf

FIELDS = ("kind", "arch", "sm", "version", "identifier", "options", "host", "address_bits", "debug", "producer",
          "compression", "concatenated")  # fmt: skip


def standalone(data: bytes) -> dict:
    fb = read_fatbin(data)
    assert (fb.offset, fb.size, fb.version, fb.section, fb.standalone, len(fb.entries)) == (0, len(data), 0, None,
                                                                                           True, 1)  # fmt: skip
    assert not (fb.relocatable or fb.embedded) and fb.loadable
    [e] = fb.entries
    d = e.as_dict()
    assert (d["size"], d["stored_size"], d["offset"]) == (len(data), len(data), 0)
    assert e.data() == data  # the whole file, never cut
    return {k: d[k] for k in FIELDS}


def test_standalone_files(artifacts):
    cubin = artifacts[("cubin", "sm_80")]
    assert standalone(cubin + bytes(8)) == {
        "kind": "elf", "arch": "sm_80", "sm": 80, "version": f"1.{cubin[8]}", "identifier": None, "options": None,
        "host": None, "address_bits": 64, "debug": False, "producer": None, "compression": "none",
        "concatenated": False,
    }  # fmt: skip
    a = standalone(artifacts[("cubin", "sm_90a")])
    assert (a["arch"], a["sm"]) == ("sm_90a", 90)
    assert read_fatbin(artifacts[("cubin", "sm_90a")]).entries[0].arch.suffix == "a"
    ptx = standalone(b".version 8.7\n.target sm_86\n.address_size 64\n")
    assert (ptx["kind"], ptx["arch"], ptx["sm"], ptx["version"], ptx["address_bits"]) == ("ptx", "sm_86", 86, "8.7",
                                                                                          64)  # fmt: skip
    lto = standalone(artifacts[("ltoir", "sm_90a")])
    assert (lto["kind"], lto["arch"], lto["sm"], lto["version"], lto["address_bits"]) == ("ltoir", "sm_90a", 90,
                                                                                          "0.0", 64)  # fmt: skip
    tile = b"\x7fTileIR\x00" + bytes([13, 1])
    t = standalone(tile)
    assert (t["kind"], t["arch"], t["sm"], t["version"], t["address_bits"]) == ("tile_ir", None, 0, "3329.0", 64)
    assert standalone(tile[:9])["version"] == "0.0"  # too short to hold the version
    elf32 = make_elf([(".text.k", 1, b"\0" * 8)], bits=32, machine=190, osabi=0x33, abi_version=7, flags=75)
    assert standalone(elf32)["address_bits"] == 32 and standalone(elf32)["arch"] == "sm_75"


def test_malformed_and_unknown_files():
    with pytest.raises(FatbinFormatError) as info:
        read_fatbin(b"hello world, not a binary")
    assert (info.value.offset, info.value.message) == (0, "not a fatbin (magic 0xBA55ED50) nor a cubin, PTX, LTO-IR or "
                                                          "Tile IR file; for host files (.so, .o, executables) use "
                                                          "iter_fatbins")  # fmt: skip
    bad = make_elf([(".text", 1, b"x")], machine=190, osabi=0x41, abi_version=8, flags=0)  # SM 0
    with pytest.raises(FatbinFormatError) as info:
        read_fatbin(bad)
    assert info.value.offset == 0
    assert info.value.message.startswith("malformed device-code file: cubin e_flags 0x0 give no valid arch")
    with pytest.raises(FatbinFormatError) as info:
        read_fatbin(b".version 9.0\n.target sm_9x\n")
    assert (info.value.offset, info.value.message) == (0, "malformed device-code file: PTX .target 'sm_9x' names "
                                                          "no sm_XX arch")  # fmt: skip


def test_host_elf_is_not_a_standalone_file():
    with pytest.raises(FatbinFormatError, match="for host files"):
        read_fatbin(make_elf([(".text", 1, b"x")], machine=62))


# -- the ELF cut: container padding goes, the image stays ------------------------------------------------


def _header_only() -> bytes:
    image = bytearray(make_elf([]))
    struct.pack_into("<Q", image, 0x28, 0)  # e_shoff: no section table
    struct.pack_into("<HH", image, 0x3C, 0, 0)  # e_shnum, e_shstrndx
    return bytes(image[:64])


def test_elf_images_are_cut_after_their_last_table_or_section():
    image = make_elf([(".text", 1, b"code"), (".bss", 8, b"")])
    assert _trim_elf(image + bytes(24), 0) == image  # the section table is last
    assert _trim_elf(image, 0) == image
    header = _header_only()
    assert _trim_elf(header + bytes(16), 0) == header  # nothing but the 64-byte header
    # a program header table after everything else
    with_ph = bytearray(image + b"\x01" * 56)
    struct.pack_into("<Q", with_ph, 0x20, len(image))  # e_phoff
    struct.pack_into("<HH", with_ph, 0x36, 56, 1)  # e_phentsize, e_phnum
    assert _trim_elf(bytes(with_ph) + bytes(8), 0) == bytes(with_ph)
    # a section whose content lies after the section table
    moved = bytearray(image + b"late")
    h_shoff = struct.unpack_from("<Q", image, 0x28)[0]
    struct.pack_into("<QQ", moved, h_shoff + 64 + 24, len(image), 4)  # section 1's offset and size
    assert _trim_elf(bytes(moved) + bytes(8), 0) == bytes(moved)
    # SHT_NOBITS occupies no file space, whatever its size
    big_bss = bytearray(image)
    struct.pack_into("<Q", big_bss, h_shoff + 2 * 64 + 32, 1 << 20)
    assert _trim_elf(bytes(big_bss) + bytes(8), 0) == bytes(big_bss)


def test_non_zero_bytes_after_an_elf_image_are_an_error():
    image = make_elf([(".text", 1, b"code")])
    with pytest.raises(FatbinFormatError) as info:
        _trim_elf(image + b"\0\0\x01", 0x1234)
    assert (info.value.offset, info.value.message) == (
        0x1234, f"the ELF image ends at +{len(image):#x} of its {len(image) + 3}-byte payload, but non-zero bytes "
        "follow (a corrupt ELF header or a corrupt entry)",
    )  # fmt: skip
    assert _trim_elf(b"not elf\0\0", 0) == b"not elf\0\0"  # not an ELF image: nothing to cut by


# -- decompression: exact sizes, bounded work ----------------------------------------------------------


def test_an_over_long_zstd_stream_is_read_one_byte_past_the_claim():
    import zstandard

    raw = zstandard.ZstdCompressor().compress(bytes(1 << 20))
    with pytest.raises(FatbinFormatError) as info:
        _decompress("zstd", raw, 1000, 0x40)
    assert (info.value.offset, info.value.message) == (
        0x40,
        "zstd payload decompressed to 1001 bytes; header says 1000",
    )
    assert _decompress("zstd", raw, 1 << 20, 0) == bytes(1 << 20)


def test_zstd_streams_of_several_frames_are_read_across_frames_and_bounded():
    """The decompressor stops at each frame's end; the reader goes on, to one byte past the claim at most."""
    import zstandard

    frames = [bytes([i]) * 100 for i in (1, 2, 3)]
    raw = b"".join(zstandard.ZstdCompressor().compress(f) for f in frames)
    assert _decompress("zstd", raw, 300, 0) == b"".join(frames)
    with pytest.raises(FatbinFormatError) as info:
        _decompress("zstd", raw, 150, 0x10)
    assert (info.value.offset, info.value.message) == (0x10, "zstd payload decompressed to 151 bytes; header says 150")
    with pytest.raises(FatbinFormatError) as info:
        _decompress("zstd", raw, 301, 0)
    assert info.value.message == "zstd payload decompressed to 300 bytes; header says 301"


def test_a_stream_is_read_to_its_bound_and_no_further(monkeypatch):
    """Standard input and pipes cannot be mapped: at most MAX_STREAM + 1 bytes are asked for."""
    import io

    from cuda_fatbin import _source

    asked = []

    class Pipe(io.BytesIO):
        def read(self, n=-1):
            asked.append(n)
            return super().read(n)

        def read1(self, n=-1):
            asked.append(n)
            return super().read1(n)

    monkeypatch.setattr(_source, "MAX_STREAM", 64)
    with pytest.raises(FatbinFormatError) as info:
        _source._read_stream(Pipe(bytes(1000)), "standard input")
    assert asked == [65] and (info.value.offset, info.value.message) == (
        64, "standard input holds over 64 bytes; save it to a file, which can be mapped, and read that"
    )  # fmt: skip
    assert bytes(_source._read_stream(Pipe(bytes(64)), "a pipe").view) == bytes(64)


@pytest.mark.parametrize("piece", [1, 7, 16, 64, 65, 4096])
def test_a_stream_that_comes_in_pieces_is_refused_over_its_bound_never_cut_short(monkeypatch, piece):
    """A pipe gives what was written so far: over the bound in pieces of any size is refused, not read truncated."""
    import io

    from cuda_fatbin import _source

    class Pipe(io.BytesIO):
        def read1(self, n=-1):
            return super().read1(min(n, piece) if n >= 0 else piece)

    monkeypatch.setattr(_source, "MAX_STREAM", 64)
    for size in (65, 1000):
        with pytest.raises(FatbinFormatError, match="standard input holds over 64 bytes"):
            _source._read_stream(Pipe(bytes(size)), "standard input")
    for size in (0, 1, 63, 64):
        assert bytes(_source._read_stream(Pipe(bytes(size)), "a pipe").view) == bytes(size)


def test_standard_input_is_read_as_it_comes_never_into_a_buffer_of_the_bound():
    """`inspect -` allocated MAX_STREAM (1 GiB) before reading: a MemoryError under a 512 MiB limit for 3.5 KB."""
    import resource
    import subprocess
    import sys

    data = (Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin").read_bytes()

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))

    res = subprocess.run([sys.executable, "-m", "cuda_fatbin", "inspect", "-"], input=data, capture_output=True,
                         preexec_fn=limit, timeout=120)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert b"elf" in res.stdout and b"sm_80" in res.stdout and b"MemoryError" not in res.stderr


def test_entry_errors_and_reprs(artifacts):
    from cuda_fatbin import FatbinEntry

    packed = build_fatbin([artifacts[("ltoir", "sm_80")]])
    ltoir = read_fatbin(packed).entries[0]
    assert ltoir.compression == "obfuscated"
    fields = _fields(packed, ltoir.offset)
    assert ltoir.size == fields["usize"] != fields["psize"]  # an obfuscated entry's size is the clear one
    assert read_fatbin(_edit(packed, ltoir.offset, usize=0)).entries[0].size == fields["psize"]  # unless unknown
    with pytest.raises(FatbinFormatError) as info:
        ltoir.data()
    assert (info.value.offset, info.value.message) == (
        ltoir.offset, "ltoir entry payload is obfuscated (flag 0x10000); it cannot be decoded"
    )  # fmt: skip
    fields = read_fatbin(build_fatbin([artifacts[("cubin", "sm_80")]])).entries[0].as_dict()
    made = FatbinEntry(**{k: v for k, v in fields.items() if k in FatbinEntry.__annotations__ and k != "arch"},
                       arch=None)  # fmt: skip
    with pytest.raises(FatbinFormatError) as info:
        made.data()  # an entry not made by the reader has no bytes behind it
    assert (info.value.offset, info.value.message) == (made.offset, "elf entry has no data to read")
    assert repr(made) == f"<FatbinEntry elf {made.size} bytes, none at {made.offset:#x}>"


def test_a_missing_codec_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(ImportError) as info:
        _decompress("zstd", b"\x28\xb5\x2f\xfd", 4, 0)
    assert str(info.value) == "decompressing zstd entries needs the zstandard package: pip install lz4 zstandard"


def test_search_in_a_borrowed_view_finds_the_same_fatbins(artifacts):
    blob = build_fatbin([artifacts[("cubin", "sm_80")]], options=FatbinOptions())
    image = make_elf([(".rodata", 1, bytes(8) + blob + bytes(8)), (".data", 1, bytes(16) + blob)])
    whole = bytearray(b"\1" * 8 + image)
    view = memoryview(whole)[8:]  # a view into a larger buffer: the reader must copy just its part
    found = [(fb.section, fb.offset) for fb in iter_fatbins(view, embedded=True)]
    assert found == [(fb.section, fb.offset) for fb in iter_fatbins(image, embedded=True)]
    assert [s for s, _ in found] == [".rodata", ".data"]


def test_an_entry_holding_an_elf_header_without_sections_reads(artifacts):
    """Found by mutation testing: the cut raised TypeError (max() of one value) for an ELF without sections."""
    data = bytearray(build_fatbin([artifacts[("cubin", "sm_80")]]))
    entry = read_fatbin(bytes(data)).entries[0]
    payload_at = entry.offset + 64
    header = _header_only()
    data[payload_at : payload_at + entry.stored_size] = header + bytes(entry.stored_size - 64)
    assert read_fatbin(bytes(data)).entries[0].data() == header


def _resident() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc (Linux)")
def test_searched_pages_of_a_mapped_file_are_let_go(tmp_path):
    from cuda_fatbin._reader import _open

    path = tmp_path / "big.bin"
    size = 32 << 20
    path.write_bytes(b"\1" * size)
    src = _open(path)
    assert src._mapped.find(b"\2", 0, size) == -1  # touches every page of the map (the search itself reads with pread)
    before = _resident()
    src.release(1, size + 4096)  # an unaligned start is rounded down; an end past the data is clipped
    after = _resident()
    assert before - after > size // 2, (before, after)
    src.release(size + 4096, size + 8192)  # past the end: nothing to do, no error
    # only [start, end) goes: a quarter in the middle, then the first half, then the second half
    assert src._mapped.find(b"\2", 0, size) == -1
    full = _resident()
    src.release(size // 4, size // 2)
    middle = _resident()
    src.release(0, size // 2)
    first = _resident()
    src.release(size // 2, size)
    second = _resident()
    assert size // 8 < full - middle < size * 3 // 8, (full, middle)
    assert size // 8 < middle - first < size * 3 // 8, (middle, first)
    assert size // 4 < first - second < size * 3 // 4, (first, second)
    assert src.find(b"\1", 5, 10) == 5  # released pages read again from the page cache
    small = _open(bytes(64))
    small.release(0, 64)  # data that is not mapped: nothing to release


def test_the_search_gives_up_after_a_bounded_number_of_failed_headers():
    """Candidates that fail cost the header bytes read (64 at least); the budget is len + 4096 * 64 bytes."""
    magic = b"\x50\xed\x55\xba"

    def failures(count: int, lead: int = 4) -> list:
        return list(iter_fatbins(b"\0" * lead + magic * count + b"\0" * 16, embedded=True))

    budget_fits = 4369  # 64 * 4369 = 279616 <= 4 + 4 * 4369 + 16 + 262144 = 279640; one more: 279680 > 279644
    assert failures(budget_fits) == []
    with pytest.raises(FatbinFormatError) as info:
        failures(budget_fits + 1)
    assert info.value.message == "too many fatbin-like headers that do not parse; the file is refused"
    # to the byte: 64 * 4370 = 279680 == 40 + 4 * 4370 + 16 + 262144 spends the budget exactly; a byte less fails
    assert failures(4370, lead=40) == []
    with pytest.raises(FatbinFormatError):
        failures(4370, lead=39)


def test_the_search_budget_is_one_for_the_file_not_one_per_run_of_sections():
    """Failed candidates in two sections that do not overlap (two runs of the search) spend one budget, the file's:
    each run alone stays within it, both together spend it and the file is refused."""
    magic = b"\x50\xed\x55\xba"
    run = magic * 2657 + bytes(16)  # 64 * 2657 = 170,048 bytes of headers: over half the ~283,000 of the budget
    alone = make_elf([(".rodata", 1, run), (".data", 1, bytes(len(run)))])
    assert len(alone) + 262144 < 2 * 64 * 2657
    assert list(iter_fatbins(alone, embedded=True)) == []  # one run's failures: within the budget
    with pytest.raises(FatbinFormatError) as info:
        list(iter_fatbins(make_elf([(".rodata", 1, run), (".data", 1, run)]), embedded=True))
    assert info.value.message == "too many fatbin-like headers that do not parse; the file is refused"


def _sharing_one_member_table(candidates: int, members: int) -> bytes:
    """``candidates`` fatbin headers of 80 bytes each, back to back, whose one concatenated entry points at the
    same table of ``members`` member records after them; the members overlap, so every candidate fails after
    reading all of the table's member headers."""
    table_at = 80 * candidates
    record = struct.pack("<HHIQIIHHIIIQQQ", 0x02, 0x0101, 0, 64, 0, 0, 7, 1, 80, 0, 0, 0x11, 0, 0)
    table = struct.pack("<II", members, 8 + 64 * members) + record * members
    out = bytearray()
    for i in range(candidates):
        table_off = table_at - (80 * i + 16)
        hsize = table_off + len(table)
        entry = struct.pack("<HHIQIIHHIIIQQQ", 0x100, 0x0101, hsize, 8, 8, table_off, 0, 0, 0, 0, 0, 0x8011, 0, 64)
        out += struct.pack("<IHHQ", 0xBA55ED50, 1, 16, hsize + 8) + entry
    return bytes(out + table + bytes(8))


def test_member_headers_count_in_the_search_budget():
    """A candidate that fails in its member table costs its entry header and every member header it read: 43
    candidates sharing one table of 100 members read 43 * 101 headers, 277,952 bytes, charged against
    len + 4096 * 64 (a member header not counted, or counted twice, moves the limit)."""
    blob = _sharing_one_member_table(43, 100)
    with pytest.raises(FatbinFormatError, match="overlaps another"):
        read_fatbin(blob)  # each candidate, read alone, fails in its member table
    spent = 64 * 43 * 101
    lead = spent - 262144 - len(blob)  # zero bytes before the candidates: the budget is spent exactly
    assert lead == 5952
    assert list(iter_fatbins(bytes(lead) + blob, embedded=True)) == []
    with pytest.raises(FatbinFormatError, match="too many fatbin-like headers"):
        list(iter_fatbins(bytes(lead - 1) + blob, embedded=True))


def test_overlapping_sections_are_searched_once_to_their_furthest_end(artifacts):
    blob = build_fatbin([artifacts[("cubin", "sm_80")]])
    image = bytearray(make_elf([(".rodata", 1, bytes(8) + blob + bytes(8) + blob), (".data", 1, bytes(16))]))
    rodata = next(s for s in iter_sections_of(bytes(image)) if s.name == ".rodata")
    shoff = struct.unpack_from("<Q", image, 0x28)[0]
    # .data now covers the start of .rodata, up to the middle: the ranges overlap
    struct.pack_into("<QQ", image, shoff + 2 * 64 + 24, rodata.offset, 8 + len(blob) + 4)
    found = [(fb.section, fb.offset - rodata.offset) for fb in iter_fatbins(bytes(image), embedded=True)]
    assert found == [(".data", 8), (".rodata", 8 + len(blob) + 8)]  # each named by a section that holds it


# -- fatbins back to back: the padding rule of cuobjdump --------------------------------------------------
# cuobjdump 13.0 on raw fatbin files and on .nv_fatbin sections, each layout tried (docs/formats.md §3):
# it skips 8-byte words whose first 4 bytes are zero; in a section fewer than 16 bytes left then end the
# walk; in a raw file only fewer than 16 bytes left right after a fatbin do, and padding must lead to a fatbin.
X = b"\x01"
LAYOUTS = {
    "back to back": ["A", b"", "B"],
    "8 zero bytes between": ["A", bytes(8), "B"],
    "4104 zero bytes between": ["A", bytes(4104), "B"],
    "a word with a zero magic field": ["A", bytes(7) + X, "B"],
    "zero then a non-zero word": ["A", bytes(8) + X + bytes(7), "B"],
    "1 zero byte between": ["A", bytes(1), "B"],
    "4 zero bytes between": ["A", bytes(4), "B"],
    "8 zero bytes after": ["A", bytes(8)],
    "15 bytes of junk after": ["A", X * 15],
    "16 bytes of junk after": ["A", X * 16],
    "16 zero bytes after": ["A", bytes(16)],
    "16 zero bytes and 8 of junk after": ["A", bytes(16) + X * 8],
    "8 zero bytes and 15 of junk after": ["A", bytes(8) + X * 15],
    "8 zero bytes and 16 of junk after": ["A", bytes(8) + X * 16],
    "an empty fatbin between": ["A", struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 0), "B"],
}


@pytest.fixture(scope="module")
def two_fatbins(artifacts):
    return {"A": build_fatbin([artifacts[("cubin", "sm_80")]]), "B": build_fatbin([artifacts[("cubin", "sm_90")]])}


def _layout(parts, two):
    return b"".join(two[p] if isinstance(p, str) else p for p in parts)


def _ours(source):
    found, error = [], None
    try:
        for fb in iter_fatbins(source):
            found.append(fb)
    except FatbinFormatError as e:
        error = e
    return found, error


@pytest.mark.parametrize("in_section", [False, True], ids=["raw file", ".nv_fatbin"])
@pytest.mark.parametrize("name", list(LAYOUTS))
def test_padding_between_fatbins_is_read_as_cuobjdump_reads_it(name, in_section, two_fatbins, cuobjdump_path, tmp_path):
    import subprocess

    body = _layout(LAYOUTS[name], two_fatbins)
    data = make_elf([(".nv_fatbin", 1, body)], e_type=2) if in_section else body
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    res = subprocess.run([cuobjdump_path, "-lelf", str(path)], capture_output=True, text=True)
    listed = res.stdout.count("ELF file")
    found, error = _ours(path)
    entries = sum(len(fb.entries) for fb in found)  # cubins listed (an empty fatbin lists none)
    assert (entries, error is not None) == (listed, res.returncode != 0), (res.stdout, res.stderr, error)
    if error is not None:
        assert "invalid fatbin header at" in error.message and "no magic 0xBA55ED50" in error.message


def test_padding_errors_name_the_offset_and_the_rule(two_fatbins):
    a, b = two_fatbins["A"], two_fatbins["B"]
    found, error = _ours(a + bytes(8) + X + bytes(7) + b)
    where = len(a) + 8
    assert len(found) == 1 and (error.offset, error.message) == (
        where, f"invalid fatbin header at {where:#x} in the file: no magic 0xBA55ED50, and only padding (8-byte "
               "words starting with 4 zero bytes) may stand before, between and after fatbins",
    )  # fmt: skip
    image = make_elf([(".nv_fatbin", 1, bytes(16) + a + X * 16)], e_type=2)
    found, error = _ours(image)
    start = next(s.offset for s in iter_sections_of(image) if s.name == ".nv_fatbin")
    assert [fb.offset for fb in found] == [start + 16]  # leading padding in a section is skipped
    assert (error.offset, error.message.split(":")[0]) == (
        start + 16 + len(a), f"invalid fatbin header at {start + 16 + len(a):#x} in .nv_fatbin"
    )  # fmt: skip
    # a zero-length tail, a 15-byte tail: nothing more to read
    assert [len(fb.entries) for fb in iter_fatbins(a + bytes(15))] == [1]
    assert [fb.offset for fb in iter_fatbins(a + bytes(4104) + b)] == [0, len(a) + 4104]  # no limit on padding


# -- sections that name the same bytes: each fatbin once, no overlap, bounded work ----------------------
EMPTY = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 0)  # a fatbin without entries: 16 bytes


def _point(image: bytes, index: int, offset: int, size: int) -> bytes:
    """Make section ``index`` of a 64-bit image cover [offset, offset + size)."""
    out = bytearray(image)
    shoff = struct.unpack_from("<Q", out, 0x28)[0]
    struct.pack_into("<QQ", out, shoff + index * 64 + 24, offset, size)
    return bytes(out)


def test_a_fatbin_named_by_two_sections_is_read_once(two_fatbins):
    a, b = two_fatbins["A"], two_fatbins["B"]
    image = make_elf([(".nv_fatbin", 1, a + b), (".nv_fatbin", 1, b"")], e_type=2)
    start = next(s.offset for s in iter_sections_of(image) if s.size)
    second = _point(image, 2, start + len(a), len(b))  # the second section names B again
    assert [fb.offset for fb in iter_fatbins(second)] == [start, start + len(a)]
    cut = _point(image, 2, start + len(a), len(b) - 8)  # ... but ends inside it
    with pytest.raises(FatbinFormatError) as info:
        list(iter_fatbins(cut))
    where = start + len(a)
    assert (info.value.offset, info.value.message) == (
        where,
        f"the fatbin at {where:#x} runs past the end of .nv_fatbin",
    )
    # a section that starts at a fatbin header inside A's bytes
    inner = start + 64 + 8
    planted = bytearray(_point(image, 2, inner, 64))
    planted[inner : inner + 4] = b"\x50\xed\x55\xba"
    with pytest.raises(FatbinFormatError) as info:
        list(iter_fatbins(bytes(planted)))
    assert (info.value.offset, info.value.message) == (
        inner,
        f"a fatbin at {inner:#x} starts inside the fatbin at {start:#x}",
    )


def test_overlapping_claims_are_refused_and_name_both():
    from cuda_fatbin._reader import _Seen

    def claim_all(*ranges):
        seen = _Seen(1 << 20)
        for r in ranges[:-1]:
            seen.claim(*r)
        try:
            seen.claim(*ranges[-1])
        except FatbinFormatError as e:
            return e.offset, e.message
        return None

    assert claim_all((100, 200), (200, 300)) is None and claim_all((100, 200), (0, 100)) is None  # touching
    assert claim_all((100, 200), (150, 300)) == (150, "the fatbin at 0x96 overlaps the one at 0x64")
    assert claim_all((200, 300), (100, 250)) == (100, "the fatbin at 0x64 overlaps the one at 0xc8")
    assert claim_all((0, 50), (100, 200), (150, 250)) == (150, "the fatbin at 0x96 overlaps the one at 0x64")
    assert claim_all((0, 100), (150, 250), (100, 200)) == (100, "the fatbin at 0x64 overlaps the one at 0x96")
    assert claim_all((0, 100), (150, 250), (300, 400), (120, 140)) is None
    assert claim_all((100, 200), (300, 400), (50, 150)) == (50, "the fatbin at 0x32 overlaps the one at 0x64")


def _crowded(k: int, filler: int) -> bytes:
    """k empty fatbins back to back; section i starts at fatbin i and runs to the end: k(k+1)/2 steps."""
    image = make_elf([(".nv_fatbin", 1, EMPTY * k)] + [(".nv_fatbin", 1, b"")] * (k - 1) + [(".x", 1, bytes(filler))],
                     e_type=2)  # fmt: skip
    start = next(s.offset for s in iter_sections_of(image) if s.name == ".nv_fatbin" and s.size)
    for i in range(1, k):
        image = _point(image, 1 + i, start + 16 * i, 16 * (k - i))
    return image


def test_the_work_on_a_file_is_bounded_by_its_size():
    """At most size // 16 + 1024 steps (a fatbin visited); exactly that many read, one more is refused."""
    k = 60
    steps = k * (k + 1) // 2
    base = len(_crowded(k, 0))
    fits = _crowded(k, 16 * (steps - 1024) - base)  # size // 16 + 1024 == steps
    assert len(fits) // 16 + 1024 == steps
    assert len(list(iter_fatbins(fits))) == k
    over = _crowded(k, 16 * (steps - 1025) - base)
    assert len(over) // 16 + 1024 == steps - 1
    with pytest.raises(FatbinFormatError) as info:
        list(iter_fatbins(over))
    start = next(s.offset for s in iter_sections_of(over) if s.name == ".nv_fatbin" and s.size)
    assert info.value.message == "the sections name the same fatbins over and over (overlapping sections)"
    assert start <= info.value.offset < start + 16 * k


# -- strings in entry headers: inside the header to the last byte, and no further ----------------------
def test_identifier_and_options_must_lie_in_the_entry_header(artifacts):
    from cuda_fatbin import Part

    data = build_fatbin([Part(artifacts[("ptx", "sm_80")], kind="ptx", identifier="abc", options="-O3")])
    e = read_fatbin(data).entries[0]
    pos = e.offset
    hsize, opt_off, id_off, id_len = (struct.unpack_from("<I", data, pos + at)[0] for at in (4, 20, 32, 36))
    s_off, s_len = struct.unpack_from("<II", data, pos + opt_off)
    assert (e.identifier, e.options, bytes(data[pos + s_off : pos + s_off + s_len])) == ("abc", "-O3", b"-O3")

    def edit(*fields):
        out = bytearray(data)
        for at, value in fields:
            struct.pack_into("<I", out, pos + at, value)
        return bytes(out)

    def refused(blob):
        with pytest.raises(FatbinFormatError) as info:
            read_fatbin(blob)
        return info.value.offset, info.value.message

    to_end = hsize - id_off  # the identifier runs to the header's last byte
    assert read_fatbin(edit((36, to_end))).entries[0].identifier == bytes(data[pos + id_off : pos + hsize]).decode()
    assert refused(edit((36, to_end + 1))) == (
        pos,
        f"identifier ({to_end + 1} bytes at +{id_off:#x}) lies outside the entry header",
    )
    assert refused(edit((32, 63))) == (pos, f"identifier ({id_len} bytes at +0x3f) lies outside the entry header")
    bad_utf8 = bytearray(data)
    bad_utf8[pos + id_off] = 0xFF
    assert read_fatbin(bytes(bad_utf8)).entries[0].identifier == "\ufffdbc"  # replaced, never an exception
    # the options record {offset, length}: the text must lie in the header too
    rec = opt_off
    assert read_fatbin(edit((rec + 4, hsize - s_off))).entries[0].options == "-O3" + "\0" * (hsize - s_off - 3)
    for at, value, words in [
        (rec + 4, hsize - s_off + 1, f"{hsize - s_off + 1} bytes at +{s_off:#x}"),
        (rec, 63, f"{s_len} bytes at +0x3f"),
        (rec + 4, 0x80000000, f"2147483648 bytes at +{s_off:#x}"),  # unsigned: not a negative length
    ]:
        assert refused(edit((at, value))) == (pos, f"entry options ({words}) lie outside the header")
    assert read_fatbin(edit((rec, 64))).entries[0].options == "abc"  # the first byte after the fixed header


def test_a_standalone_file_has_the_flags_libnvfatbin_gives_it(artifacts):
    """Read alone, an artifact's entry carries the address-size and arch-suffix flags that libnvfatbin
    writes for it in a fatbin (the outside oracle for those bits)."""
    from cuda_fatbin._container import FLAG_64BIT, FLAG_ARCH_SPECIFIC, FLAG_FAMILY

    mask = FLAG_64BIT | FLAG_ARCH_SPECIFIC | FLAG_FAMILY
    seen = set()
    for (kind, spec), blob in artifacts.items():
        alone = read_fatbin(blob).entries[0]
        packed = read_fatbin(build_fatbin([blob])).entries[0]
        assert (alone.flags & mask, alone.arch) == (packed.flags & mask, packed.arch), (kind, spec)
        seen.add(alone.flags & mask)
    assert {FLAG_64BIT, FLAG_64BIT | FLAG_ARCH_SPECIFIC} <= seen


# -- the search for fatbins stored as data ---------------------------------------------------------------
def test_the_search_reads_section_bytes_only_and_keeps_complete_strict_candidates(two_fatbins):
    a, b = two_fatbins["A"], two_fatbins["B"]
    # bytes of NOBITS sections are no section's content: a fatbin there, before or after .data, is not found
    for sections in ([(".bss", 8, a), (".data", 1, bytes(64))], [(".data", 1, bytes(64)), (".bss", 8, a)]):
        assert list(iter_fatbins(make_elf(sections), embedded=True)) == []
    # candidates must be version-1 fatbins with a 16-byte header and a body
    v2 = bytearray(b)
    struct.pack_into("<H", v2, 4, 2)
    image = make_elf([(".rodata", 1, EMPTY + bytes(8) + bytes(v2) + bytes(8) + b)])
    rodata = next(s for s in iter_sections_of(image) if s.name == ".rodata")
    found = [(fb.section, fb.offset - rodata.offset, fb.embedded) for fb in iter_fatbins(image, embedded=True)]
    assert found == [(".rodata", 16 + 8 + len(b) + 8, True)]


def test_the_search_steps_over_registered_fatbins_and_goes_on(two_fatbins):
    """A section that holds a registered .nv_fatbin and more bytes after it: the rest is still searched."""
    a, b = two_fatbins["A"], two_fatbins["B"]
    image = make_elf([(".nv_fatbin", 1, a), (".rodata", 1, b"")], e_type=2)
    start = next(s.offset for s in iter_sections_of(image) if s.name == ".nv_fatbin")
    image = bytearray(make_elf([(".nv_fatbin", 1, a + bytes(8) + b), (".rodata", 1, b"")], e_type=2))
    image = _point(bytes(image), 1, start, len(a))  # .nv_fatbin: A only
    image = _point(image, 2, start, len(a) + 8 + len(b))  # .rodata: A, then B stored as data
    found = [(fb.section, fb.offset - start, fb.embedded) for fb in iter_fatbins(image, embedded=True)]
    assert found == [(".nv_fatbin", 0, False), (".rodata", len(a) + 8, True)]


def test_the_search_lets_go_of_what_it_searched_every_32_mib(tmp_path, monkeypatch, two_fatbins):
    """Pages searched are released once the search is 32 MiB past the last release, and at the end."""
    from cuda_fatbin import _reader

    a = two_fatbins["A"]
    mib = 1 << 20
    at = [32 * mib, 40 * mib, 50 * mib, 80 * mib]  # exactly 32 MiB: not yet; 40: yes; 50 - 40: no; 80 - 40: yes
    path = tmp_path / "sparse.bin"
    with open(path, "wb") as f:
        f.write(b"data")
        for off in at:
            f.seek(off)
            f.write(a)
        f.truncate(100 * mib)
    calls = []
    real = _reader._Data.release

    def spy(self, start, end):
        calls.append((start, end))
        return real(self, start, end)

    monkeypatch.setattr(_reader._Data, "release", spy)
    assert [fb.offset for fb in iter_fatbins(path, embedded=True)] == at
    assert calls == [(0, 40 * mib), (40 * mib, 80 * mib), (80 * mib, 100 * mib)]


# -- every malformed header field: what is wrong and where, word for word ---------------------------------
@pytest.fixture(scope="module")
def elf_and_ptx(artifacts):
    """A fatbin of an uncompressed sm_80 cubin and a zstd-compressed PTX (libnvfatbin's default)."""
    data = build_fatbin([artifacts[("cubin", "sm_80")], artifacts[("ptx", "sm_80")]])
    elf, ptx = read_fatbin(data).entries
    assert (elf.kind, elf.compression, ptx.kind, ptx.compression) == ("elf", "none", "ptx", "zstd")
    return data, elf.offset, ptx.offset


def _fields(data: bytes, pos: int) -> dict:
    names = [
        "kind",
        "hver",
        "hsize",
        "psize",
        "csize",
        "opt_off",
        "vminor",
        "vmajor",
        "sm",
        "id_off",
        "id_len",
        "flags",
        "key",
        "usize",
    ]
    return dict(zip(names, struct.unpack_from("<HHIQIIHHIIIQQQ", data, pos)))


_AT = {"kind": (0, "<H"), "hver": (2, "<H"), "hsize": (4, "<I"), "psize": (8, "<Q"), "csize": (16, "<I"),
       "opt_off": (20, "<I"), "flags": (40, "<Q"), "usize": (56, "<Q")}  # fmt: skip


def _edit(data: bytes, pos: int, **fields) -> bytes:
    out = bytearray(data)
    for name, value in fields.items():
        at, fmt = _AT[name]
        struct.pack_into(fmt, out, pos + at, value)
    return bytes(out)


def _refusal(data: bytes, *, strict: bool = False) -> tuple:
    from cuda_fatbin._container import _parse
    from cuda_fatbin._source import _open

    with pytest.raises(FatbinFormatError) as info:
        _parse(_open(data), 0, len(data), None, strict=strict) if strict else read_fatbin(data)
    return info.value.offset, info.value.message


def test_malformed_fatbin_and_entry_headers_name_the_field_and_offset(elf_and_ptx):
    data, e0, e1 = elf_and_ptx
    end = len(data)
    f0, f1 = _fields(data, e0), _fields(data, e1)
    # the fatbin header
    assert _refusal(data[:4] + struct.pack("<H", 2) + data[6:], strict=True) == (0, "not a version-1 fatbin header")
    assert _refusal(data[:6] + struct.pack("<H", 15) + data[8:]) == (6, "fatbin header size 15 is below 16")
    assert _refusal(data[:8] + struct.pack("<Q", end) + data[16:]) == (
        8, f"fatbin declares {end} bytes of entries but only {end - 16} follow"
    )  # fmt: skip
    assert _refusal(data[:10]) == (0, "truncated fatbin header: need 16 bytes, 10 left")
    # entry headers: sizes
    short = data[:8] + struct.pack("<Q", e1 - 16 + 32) + data[16 : e1 + 32]  # the second header is cut
    assert _refusal(short) == (e1, "truncated entry header: need 64 bytes, 32 left")
    assert _refusal(_edit(data, e0, hsize=63)) == (e0 + 4, f"entry header size 63 is outside 64..{end - e0}")
    assert _refusal(_edit(data, e1, hsize=end - e1 + 1)) == (
        e1 + 4,
        f"entry header size {end - e1 + 1} is outside 64..{end - e1}",
    )
    over = end - e1 - f1["hsize"] + 1
    assert _refusal(_edit(data, e1, psize=over)) == (
        e1 + 8,
        f"entry payload of {over} bytes runs past the end of the fatbin",
    )
    # the last entry's header and payload may reach the fatbin's last byte exactly
    assert read_fatbin(_edit(data, e1, hsize=end - e1, psize=0, opt_off=0, flags=1)).entries[1].stored_size == 0
    # the last entry's payload may end at the fatbin's last byte; one more is refused (above)
    assert read_fatbin(_edit(data, e1, psize=over - 1)).entries[1].stored_size == over - 1
    # strict reading (the search for fatbins stored as data): known kinds, header version 0x0101
    assert _refusal(_edit(data, e0, kind=7), strict=True) == (e0, "unknown entry kind 0x7 or header version 0x101")
    assert _refusal(_edit(data, e0, hver=0x102), strict=True) == (e0, "unknown entry kind 0x2 or header version 0x102")
    assert read_fatbin(_edit(data, e0, kind=7)).entries[0].kind == "unknown(0x7)"  # listed when asked directly
    # compressed payloads: the compressed size within the payload, the claimed size within 1024x
    psize, csize = f1["psize"], f1["csize"]
    for bad in (0, psize + 1):
        assert _refusal(_edit(data, e1, csize=bad)) == (
            e1 + 0x10,
            f"compressed size {bad} is not within the {psize}-byte payload",
        )
    assert read_fatbin(_edit(data, e1, csize=psize)).entries[1]._compressed == psize
    assert read_fatbin(_edit(data, e1, csize=1)).entries[1]._compressed == 1  # read; data() will then fail
    assert _refusal(_edit(data, e1, usize=1024 * csize + 1)) == (
        e1 + 0x38, f"uncompressed size {1024 * csize + 1} is over 1024x the {csize} compressed bytes"
    )  # fmt: skip
    assert read_fatbin(_edit(data, e1, usize=1024 * csize)).entries[1].size == 1024 * csize
    # an uncompressed entry: its size is its payload's, whatever the other size fields say
    odd = read_fatbin(_edit(data, e0, usize=12345, csize=8)).entries[0]
    assert (odd.size, odd.compression) == (f0["psize"], "none")
    assert odd.data() == read_fatbin(data).entries[0].data()
    # an ELF entry's options field points at .nv.compat attributes, never read as text
    assert read_fatbin(_edit(data, e0, opt_off=64)).entries[0].options is None


# -- sources ---------------------------------------------------------------------------------------------
def test_any_contiguous_buffer_reads_as_its_bytes(elf_and_ptx):
    import array

    data = elf_and_ptx[0]
    padded = data + bytes(-len(data) % 8)
    want = [(e.kind, e.offset, e.size) for e in read_fatbin(padded).entries]
    for code in ("B", "b", "I", "q"):
        got = read_fatbin(array.array(code, padded))
        assert [(e.kind, e.offset, e.size) for e in got.entries] == want, code
        assert got.entries[0].data() == read_fatbin(padded).entries[0].data()
    grid = memoryview(padded).cast("B", (2, len(padded) // 2))
    assert [(e.kind, e.offset, e.size) for e in read_fatbin(grid).entries] == want
    with pytest.raises(TypeError) as info:
        read_fatbin(42)
    assert str(info.value) == "expected bytes-like data or a path; got int"


def test_paths_that_cannot_be_read_say_why(tmp_path):
    import errno

    with pytest.raises(OSError) as info:
        read_fatbin(tmp_path / "missing.fatbin")
    assert (info.value.errno, info.value.strerror, info.value.filename) == (
        errno.ENOENT, "No such file or directory", str(tmp_path / "missing.fatbin"))  # fmt: skip
    assert str(info.value) == f"[Errno 2] No such file or directory: {str(tmp_path / 'missing.fatbin')!r}"
    for special in (tmp_path, "/dev/null"):
        with pytest.raises(FatbinFormatError) as info:
            read_fatbin(special)
        assert (info.value.offset, info.value.message) == (
            0,
            f"{str(special)!r} is not a regular file, a pipe or standard input",
        )


def test_a_file_of_exactly_the_read_limit_is_read_whole(tmp_path, artifacts):
    from cuda_fatbin._source import _SMALL_FILE

    cubin = artifacts[("cubin", "sm_80")]
    for size in (_SMALL_FILE, _SMALL_FILE + 1):  # read, then mapped
        data = cubin + bytes(size - len(cubin))
        path = tmp_path / f"k{size}.cubin"
        path.write_bytes(data)
        [entry] = read_fatbin(path).entries
        assert (entry.size, entry.data() == data) == (size, True)


def _tiny(kind: int = 0x01) -> bytes:
    """The smallest fatbin a strict reading keeps: one entry of an empty payload (80 bytes)."""
    entry = struct.pack("<HHIQIIHHIIIQQQ", kind, 0x0101, 64, 0, 0, 0, 0, 8, 80, 0, 0, 0x11, 0, 0)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(entry)) + entry


def test_the_search_never_leaves_its_section(two_fatbins):
    tiny = _tiny()
    # a tiny fatbin in .data after one in NOBITS bytes placed further than its size: only .data's is found
    image = make_elf([(".bss", 8, bytes(32) + tiny), (".data", 1, tiny)])
    found = [(fb.section, fb.version, fb.embedded) for fb in iter_fatbins(image, embedded=True)]
    assert found == [(".data", 1, True)]
    # bytes past a section's end are not searched at all: 5,000 failing candidates there cost nothing
    magic = b"\x50\xed\x55\xba"
    crowded = make_elf([(".data", 1, tiny), (".bss", 8, magic * 5000 + bytes(16))])
    assert [fb.section for fb in iter_fatbins(crowded, embedded=True)] == [".data"]
    # a fatbin across the boundary of two adjacent sections belongs to neither
    a = two_fatbins["A"]
    half = (len(a) // 2 + 7) // 8 * 8
    straddle = make_elf([(".data", 1, a[:half]), (".rodata", 1, a[half:])])
    assert next(s.offset for s in iter_sections_of(straddle) if s.name == ".rodata") == 64 + half  # adjacent
    assert list(iter_fatbins(straddle, embedded=True)) == []


def test_a_fatbin_over_the_end_of_one_of_two_overlapping_sections_is_named_by_the_other(two_fatbins):
    a = two_fatbins["A"]
    image = make_elf([(".rodata", 1, bytes(8) + a), (".data", 1, b"")])
    start = next(s.offset for s in iter_sections_of(image) if s.name == ".rodata")
    image = _point(image, 2, start, 8 + len(a) // 2)  # .data: the first half of the fatbin only
    assert [(fb.section, fb.offset - start) for fb in iter_fatbins(image, embedded=True)] == [(".rodata", 8)]


def test_sections_naming_one_range_many_times_are_searched_once():
    """2,000 sections over the same bytes full of failing candidates: searched once, within the budget."""
    magic = b"\x50\xed\x55\xba"
    image = make_elf([(".rodata", 1, magic * 1000 + bytes(16))] + [(".x", 1, b"")] * 2000)
    rodata = next(s for s in iter_sections_of(image) if s.name == ".rodata")
    for i in range(2, 2002):
        image = _point(image, i, rodata.offset, rodata.size)
    assert list(iter_fatbins(image, embedded=True)) == []


def test_a_fatbin_stored_as_data_may_not_overlap_a_registered_one(two_fatbins):
    """A data fatbin whose payload holds the bytes a .nv_fatbin section registers: refused, naming both."""
    a = two_fatbins["A"]
    entry = struct.pack("<HHIQIIHHIIIQQQ", 0x01, 0x0101, 64, 8 + len(a), 0, 0, 0, 8, 80, 0, 0, 0x11, 0, 0)
    outer = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 64 + 8 + len(a)) + entry + bytes(8) + a
    image = make_elf([(".rodata", 1, outer), (".nv_fatbin", 1, b"")], e_type=2)
    start = next(s.offset for s in iter_sections_of(image) if s.name == ".rodata")
    inner = start + 16 + 64 + 8
    image = _point(image, 2, inner, len(a))
    with pytest.raises(FatbinFormatError) as info:
        list(iter_fatbins(image, embedded=True))
    assert (info.value.offset, info.value.message) == (
        start,
        f"the fatbin at {start:#x} overlaps the one at {inner:#x}",
    )
    assert [fb.offset for fb in iter_fatbins(image)] == [inner]  # without the search: the registered one


def test_sections_are_read_in_file_order_and_relocatable_code_as_cuobjdump_does(two_fatbins, cuobjdump_path, tmp_path):
    import subprocess

    a, b = two_fatbins["A"], two_fatbins["B"]
    layouts = [  # (sections, e_type, what is listed): cuobjdump lists __nv_relfatbin only without .nv_fatbin
        ([("__nv_relfatbin", 1, a), (".x", 1, bytes(8)), (".y", 1, b)], 1, ["__nv_relfatbin"]),
        ([("__nv_relfatbin", 1, a), (".x", 1, bytes(8))], 2, ["__nv_relfatbin"]),
        ([("__nv_relfatbin", 1, a), (".nv_fatbin", 1, b)], 1, [".nv_fatbin"]),
        ([(".nv_fatbin", 1, b), ("__nv_relfatbin", 1, a)], 2, [".nv_fatbin"]),
    ]
    for i, (sections, e_type, expect) in enumerate(layouts):
        image = make_elf(sections, e_type=e_type)
        path = tmp_path / f"t{i}.o"
        path.write_bytes(image)
        got = list(iter_fatbins(path))
        assert [fb.section for fb in got] == expect
        listed = subprocess.run([cuobjdump_path, "-lelf", str(path)], capture_output=True, text=True).stdout
        assert [ln.split(".")[-2] for ln in listed.splitlines() if "ELF file" in ln] == [
            str(e.arch) for fb in got for e in fb.entries
        ]
        if "__nv_relfatbin" not in expect:  # a relocatable fatbin left out is not searched as data either
            assert [fb.section for fb in iter_fatbins(path, embedded=True)] == expect
    # with relocatable=True both, in file order
    image = make_elf([("__nv_relfatbin", 1, a), (".nv_fatbin", 1, b)], e_type=1)
    assert [fb.section for fb in iter_fatbins(image, relocatable=True)] == ["__nv_relfatbin", ".nv_fatbin"]
    image = make_elf([(".nv_fatbin", 1, b), ("__nv_relfatbin", 1, a)], e_type=1)
    assert [fb.section for fb in iter_fatbins(image, relocatable=True)] == [".nv_fatbin", "__nv_relfatbin"]


def test_iter_fatbins_takes_single_artifacts_and_says_what_it_cannot_read(artifacts):
    ptx = artifacts[("ptx", "sm_80")]
    [fb] = iter_fatbins(ptx)
    assert fb.standalone and [e.kind for e in fb.entries] == ["ptx"]
    with pytest.raises(FatbinFormatError) as info:
        list(iter_fatbins(b"neither of them"))
    assert (info.value.offset, info.value.message) == (0, "neither a fatbin (magic 0xBA55ED50) nor an ELF file")


def test_entry_fields_producer_and_construction(elf_and_ptx):
    from cuda_fatbin import FatbinEntry
    from cuda_fatbin._container import FLAG_CUDA, FLAG_OPENCL

    data, e0, _ = elf_and_ptx
    flags = read_fatbin(data).entries[0].flags
    assert not flags & (FLAG_CUDA | FLAG_OPENCL) and read_fatbin(data).entries[0].producer is None  # libnvfatbin
    for extra, producer in ((FLAG_CUDA, "cuda"), (FLAG_OPENCL, "opencl"), (FLAG_CUDA | FLAG_OPENCL, "cuda")):
        assert read_fatbin(_edit(data, e0, flags=flags | extra)).entries[0].producer == producer
    with pytest.raises(TypeError) as info:
        FatbinEntry(kind="elf", zeta=1, alpha=2)
    assert str(info.value) == "FatbinEntry has no field(s) alpha, zeta"


def test_a_fatbin_is_named_by_the_first_section_holding_it_else_its_start(two_fatbins):
    """Overlapping sections: the first (by offset, then end) holding the whole fatbin names it; if none
    does, the first holding its first byte; a section ending where the fatbin starts holds none of it."""
    a = two_fatbins["A"]
    image = make_elf([(".z", 8, bytes(16) + a + bytes(16)), (".a", 1, b""), (".b", 1, b""), (".c", 1, b"")])
    z = next(s.offset for s in iter_sections_of(image) if s.name == ".z")
    f = z + 16  # the fatbin, in bytes that belong to no searched section (.z is NOBITS)

    def named(a_range, b_range, c_range):
        img = image
        for i, (lo, hi) in ((2, a_range), (3, b_range), (4, c_range)):
            img = _point(img, i, lo, hi - lo)
        return [(fb.section, fb.offset) for fb in iter_fatbins(img, embedded=True)]

    n = len(a)
    assert named((z, f), (z + 8, f + n // 2), (f + 4, f + n + 8)) == [(".b", f)]  # none holds it all: its start's
    assert named((z, f + 8), (z + 8, f + n), (f + 4, f + n + 8)) == [(".b", f)]  # .b ends with it exactly
    assert named((z, f + n), (z + 8, f + n + 8), (f + 4, f + n + 8)) == [(".a", f)]


def test_the_last_file_bytes_and_options_records_at_the_header_end(elf_and_ptx):
    data, _e0, e1 = elf_and_ptx
    hsize = _fields(data, e1)["hsize"]
    assert _refusal(_edit(data, e1, opt_off=hsize)) == (
        e1 + hsize,
        "truncated entry options record: need 8 bytes, 0 left",
    )
    assert read_fatbin(data).version == 1


def test_standard_input_by_any_spelling_of_dash(monkeypatch, artifacts):
    import io

    cubin = artifacts[("cubin", "sm_80")]

    class Dash:
        def __fspath__(self):
            return b"-"

    for source in ("-", Dash()):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(cubin)))
        [entry] = read_fatbin(source).entries
        assert entry.data() == cubin


def test_a_nobits_fatbin_section_holds_nothing(two_fatbins):
    """A .nv_fatbin of type SHT_NOBITS has no bytes in the file, whatever size it claims: nothing to read."""
    image = make_elf([(".nv_fatbin", 8, b""), (".data", 1, two_fatbins["A"])], e_type=2)
    image = _point(image, 1, 64, 1 << 20)
    assert list(iter_fatbins(image)) == []
    assert [fb.section for fb in iter_fatbins(image, embedded=True)] == [".data"]


def test_typed_views_of_an_elf_read_as_unsigned_bytes(artifacts):
    """Single header bytes (the ABI version) are read by index: a signed or wide view must not change them."""
    import array

    cubin = bytearray(artifacts[("cubin", "sm_90a")])
    cubin[8] = 0x88  # ABI version 136: the layout of ABI >= 8
    cubin += bytes(-len(cubin) % 8)
    entry = read_fatbin(bytes(cubin)).entries[0]
    assert (str(entry.arch), entry.version) == ("sm_90a", (1, 0x88))  # the cubin's ABI version, unsigned
    for code in ("b", "I"):
        typed = read_fatbin(array.array(code, bytes(cubin))).entries[0]
        assert (typed.arch, typed.version) == (entry.arch, entry.version), code


def test_fatbin_sizes_are_unsigned_and_the_shortfall_is_counted_from_the_fatbin(two_fatbins):
    a = two_fatbins["A"]
    assert _refusal(a[:8] + struct.pack("<Q", 1 << 63) + a[16:]) == (
        8, f"fatbin declares {1 << 63} bytes of entries but only {len(a) - 16} follow"
    )  # fmt: skip
    empty_claim = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 8)
    assert _refusal(empty_claim) == (8, "fatbin declares 8 bytes of entries but only 0 follow")
    second = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 10**6) + bytes(16)
    with pytest.raises(FatbinFormatError) as info:
        list(iter_fatbins(a + second))
    assert (info.value.offset, info.value.message) == (
        len(a) + 8, "fatbin declares 1000000 bytes of entries but only 16 follow"
    )  # fmt: skip


@pytest.mark.parametrize("embedded", [False, True])
def test_a_file_cut_short_between_two_fatbins_is_refused_where_reading_stopped(two_fatbins, tmp_path, embedded):
    """In process (the subprocess test in test_hostile.py checks there is no SIGBUS): the error names the
    file and the offset where the next step would have read."""
    a = two_fatbins["A"]
    section = ".rodata" if embedded else ".nv_fatbin"
    path = tmp_path / "shrinks.o"
    path.write_bytes(make_elf([(section, 1, a + bytes(2 << 20) + a)], e_type=2))
    it = iter_fatbins(path, embedded=embedded)
    first = next(it)
    cut = first.offset + first.size + 4096
    with open(path, "r+b") as f:
        f.truncate(cut)
    with pytest.raises(FatbinFormatError) as info:
        next(it)
    assert (info.value.offset, info.value.message) == (
        first.offset + first.size, f"{str(path)!r} shrank to {cut} bytes while it was being read"
    )  # fmt: skip


def _first_holding(parts, start, end):
    """The definition: the first part holding all of [start, end), else the first holding ``start``."""
    holding = [p for p in parts if p[0] <= start < p[1]]
    return next((name for _s, e, name in holding if end <= e), holding[0][2])


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_naming_fatbins_left_to_right_matches_the_definition(data):
    """_namer drops parts as the search moves right (linear work); it must answer as the definition does."""
    from cuda_fatbin._reader import _namer

    spans = data.draw(st.lists(st.tuples(st.integers(0, 60), st.integers(1, 40)), min_size=1, max_size=12))
    parts = sorted((lo, lo + n, f"s{i}") for i, (lo, n) in enumerate(spans))
    lo, hi = parts[0][0], max(p[1] for p in parts)
    covered = [x for x in range(lo, hi) if any(p[0] <= x < p[1] for p in parts)]
    name_of = _namer(parts)
    pos = lo
    while True:
        starts = [x for x in covered if x >= pos]
        if not starts:
            break
        start = data.draw(st.sampled_from(starts[:10]))
        end = data.draw(st.integers(start + 1, hi))
        assert name_of(start, end) == _first_holding(parts, start, end), (parts, start, end)
        pos = end


def test_candidates_that_read_many_headers_each_are_charged_for_every_header():
    """Candidates that overlap, each reading every entry header up to one bad entry (quadratic work), are charged
    64 bytes per header read: the search refuses the file once the charges pass len + 4096 * 64, not only after
    4096 failed candidates. Each entry's last 16 bytes (its key and size fields) hold the next candidate's
    header, whose entries are the rest of the chain."""
    import struct

    def fb_header(body: int) -> bytes:
        return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, body)

    def entry(kind: int, tail: bytes) -> bytes:
        return struct.pack("<HHIQIIHHIIIQ", kind, 0x0101, 64, 0, 0, 0, 0, 1, 90, 0, 0, 0x11) + tail

    def chain(n: int) -> bytes:
        out = bytearray(fb_header(64 * n))
        for i in range(n - 1):
            out += entry(2, fb_header(64 * (n - 1 - i)))
        return b"\0" * 8 + bytes(out + entry(0x77, bytes(16))) + b"\0" * 8  # the last entry's kind is unknown

    # headers read: n by the first candidate, n - 1 - i by the one in entry i: n + n(n - 1)/2 in all, charged
    # 64 bytes each, against a budget of 64n + 32 + 262144: n(n - 1) > 8193 is refused
    assert list(iter_fatbins(chain(91), embedded=True)) == []  # 91 * 90 = 8190
    with pytest.raises(FatbinFormatError) as info:
        list(iter_fatbins(chain(92), embedded=True))  # 92 * 91 = 8372
    assert info.value.message == "too many fatbin-like headers that do not parse; the file is refused"


def test_fatbin_sections_listed_out_of_file_order_are_all_found_once(artifacts):
    """A section table need not list sections in file order: three .nv_fatbin sections listed last, first,
    middle (their offsets permuted in the table) are each found at its offset, and a copy stored as data in
    .rodata is found too."""
    from cuda_fatbin import Part

    blobs = [build_fatbin([Part(artifacts[("cubin", arch)], identifier=arch)]) for arch in ("sm_80", "sm_86", "sm_90")]
    image = bytearray(make_elf([(".nv_fatbin", 1, b) for b in blobs] + [(".rodata", 1, bytes(8) + blobs[0])]))
    shoff = struct.unpack_from("<Q", image, 0x28)[0]
    rows = [shoff + 64 * i for i in (1, 2, 3)]
    places = [struct.unpack_from("<QQ", image, row + 24) for row in rows]  # (offset, size) in file order
    for row, (offset, size) in zip(rows, [places[2], places[0], places[1]], strict=True):
        struct.pack_into("<QQ", image, row + 24, offset, size)
    found = [(fb.offset, fb.entries[0].identifier, fb.embedded) for fb in iter_fatbins(bytes(image), embedded=True)]
    listed = [(places[2][0], "sm_90", False), (places[0][0], "sm_80", False), (places[1][0], "sm_86", False)]
    stored = (image.rindex(blobs[0]), "sm_80", True)
    assert found == [*sorted(listed), stored]  # in file order, as iter_fatbins yields them


def test_a_closed_standard_input_is_an_error_of_that_input_never_a_crash():
    """`inspect -` started with standard input closed (`<&-`): AttributeError ('NoneType' has no 'buffer')."""
    import json
    import os
    import subprocess
    import sys

    def closed():
        os.close(0)

    for extra in ([], ["--json"]):
        res = subprocess.run([sys.executable, "-m", "cuda_fatbin", "inspect", *extra, "-"], capture_output=True,
                             stdin=subprocess.DEVNULL, preexec_fn=closed, timeout=120, text=True)  # fmt: skip
        assert res.returncode == 1 and "Error" not in res.stderr, res.stderr
        if extra:
            assert json.loads(res.stdout)["files"][0]["error"] == "-: standard input is closed"
        else:
            assert res.stderr == "cuda-fatbin inspect: -: standard input is closed\n"
