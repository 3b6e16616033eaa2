# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""payload_mismatch reads only the first bytes of a payload: the LZ4 prefix decoder against python-lz4, zstd
stopped early, and verdicts that a corrupt tail cannot change."""

from __future__ import annotations

import itertools
import random
import struct

import lz4.block
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from cuda_fatbin import FatbinFormatError, FatbinOptions, build_fatbin, read_fatbin
from cuda_fatbin._payload import lz4_prefix, prefixes, ptx_target_of

# libnvfatbin strips comments: declarations make a payload of several zstd blocks (128 KiB each)
_DECLARATIONS = b"".join(b".global .b32 g%d;\n" % i for i in range(40000))
_PTX = b"\n\n.version 8.0\n.target sm_89\n.address_size 64\n" + _DECLARATIONS


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from([b"a", b"bc", b"\0" * 40, b"xyz" * 9, bytes(range(256))]), max_size=60),
    st.integers(1, 5000),
)
def test_the_lz4_prefix_is_the_start_of_what_lz4_block_decodes(parts, want):
    data = b"".join(parts)
    raw = lz4.block.compress(data, store_size=False)
    assert lz4_prefix(raw, want) == data[:want]


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300), st.integers(1, 4096))
def test_the_lz4_prefix_decoder_on_any_bytes_gives_a_short_prefix_or_a_value_error(raw, want):
    try:
        out = lz4_prefix(raw, want)
    except ValueError:
        return
    assert len(out) <= want
    try:
        whole = lz4.block.decompress(raw, uncompressed_size=1 << 20)
    except lz4.block.LZ4BlockError:
        return
    assert whole[:want] == out


def test_the_lz4_prefix_decoder_bounds_its_work_by_what_it_is_asked_for():
    """A match of 2**31 bytes, a literal run of a megabyte: the output stops at ``want`` bytes."""
    long_match = bytes([0x1F]) + b"A" + b"\x01\x00" + b"\xff" * 100_000 + b"\x00"
    assert lz4_prefix(long_match, 1000) == b"A" * 1000
    run = (1 << 20) // 255
    long_literal = bytes([0xF0]) + b"\xff" * run + bytes([(1 << 20) - 15 - 255 * run]) + b"L" * (1 << 20)
    assert lz4_prefix(long_literal, 64) == b"L" * 64
    with pytest.raises(ValueError, match="offset 2 is outside the 1 bytes"):
        lz4_prefix(bytes([0x10]) + b"A" + b"\x02\x00", 64)
    with pytest.raises(ValueError, match="literals run past"):
        lz4_prefix(bytes([0x50]) + b"AB", 64)


def _fatbin_with(ptx: bytes, mode: str) -> bytes:
    options = FatbinOptions(compress_all=True, compress_mode=mode)
    return build_fatbin([ptx], options=options)


@pytest.mark.parametrize("mode", ["speed", "size"], ids=["lz4", "zstd"])
def test_a_mismatch_is_told_from_the_first_bytes_whatever_follows(mode):
    """A PTX payload whose tail does not decompress still shows its .target: only the start is read (the whole
    payload was decompressed for it before, and a corrupt tail made it None)."""
    data = bytearray(_fatbin_with(_PTX, mode))
    entry = read_fatbin(bytes(data)).entries[0]
    assert entry.compression == {"speed": "lz4", "size": "zstd"}[mode]
    struct.pack_into("<I", data, entry.offset + 0x1C, 90)  # the header now says sm_90
    end = entry._payload + entry._compressed
    data[end - 64 : end] = b"\xee" * 64  # the stream's tail is garbage
    entry = read_fatbin(bytes(data)).entries[0]
    with pytest.raises(Exception, match="decompress"):
        entry.data()
    assert entry.payload_mismatch == "the header says compute_90, the PTX .target is sm_89"
    assert str(ptx_target_of(entry)) == "sm_89"


@pytest.mark.parametrize("mode", ["speed", "size"], ids=["lz4", "zstd"])
def test_prefixes_grow_to_the_whole_payload_and_end_with_it(mode):
    data = _fatbin_with(_PTX, mode)
    entry = read_fatbin(data).entries[0]
    seen = list(itertools.islice(prefixes(entry), 20))  # it ends with the whole payload, well before 20
    assert [len(head) for head, _ in seen[:2]] == [64, 1024]
    assert all(entry.data().startswith(head) for head, _ in seen)
    assert len(seen) < 20 and seen[-1] == (entry.data(), True) and not any(whole for _, whole in seen[:-1])


def test_a_ptx_without_directives_in_its_first_bytes_is_read_further():
    """Directives after 700 KB of declarations are found (a prefix decides only once it holds whole lines with both)."""
    late = _DECLARATIONS + b".version 8.0\n.target sm_100\n"
    entry = read_fatbin(_fatbin_with(late, "size")).entries[0]
    assert entry.payload_mismatch is None and str(ptx_target_of(entry)) == "sm_100"


def test_a_zstd_prefix_stops_before_the_end_of_a_large_payload(monkeypatch):
    """The streaming decoder is asked for the prefix only: at most one more 128 KiB block is decoded."""
    big = b"\n.version 8.0\n.target sm_89\n" + _DECLARATIONS  # 760 KB: six 128 KiB blocks
    entry = read_fatbin(_fatbin_with(big, "size")).entries[0]
    asked = []
    real = zstandard.ZstdDecompressor.stream_reader

    def spy(self, source, *args, **kwargs):
        reader = real(self, source, *args, **kwargs)

        class Counting:
            def read(self, n: int) -> bytes:
                chunk = reader.read(n)
                asked.append(len(chunk))
                return chunk

        return Counting()

    monkeypatch.setattr(zstandard.ZstdDecompressor, "stream_reader", spy)
    assert entry.payload_mismatch is None
    assert 0 < sum(asked) <= 64


def _one_entry_fatbin(kind: int, sm: int, payload: bytes, compression: str, *, size: int | None = None) -> bytes:
    """A fatbin of one entry whose header says ``sm``, its payload stored as given or compressed here."""
    if compression == "lz4":
        raw, flags = lz4.block.compress(payload, store_size=False), 0x2000
    elif compression == "zstd":
        raw, flags = zstandard.ZstdCompressor().compress(payload), 0x8000
    else:
        raw, flags = payload, 0
    stored = raw + bytes(-len(raw) % 8)
    csize = len(raw) if flags else 0
    version = (8, 0) if kind == 1 else (1, 8)
    header = struct.pack("<HHIQIIHHIIIQQQ", kind, 0x0101, 64, len(stored), csize, 0, version[1], version[0], sm, 0, 0,
                         0x15 | flags, 0, len(payload) if size is None else size)  # fmt: skip
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 64 + len(stored)) + header + stored


def _whole_elf_verdict(entry) -> str | None:
    """payload_mismatch of an ELF entry from its whole decompressed payload (cubin_arch)."""
    from cuda_fatbin._detect import cubin_arch

    try:
        image, _ = cubin_arch(entry.data())
    except ValueError:
        return None
    return None if image.sm == entry.arch.sm else f"the header says {entry.arch}, the ELF image is for {image}"


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 0xFFFFFF),
    st.sampled_from([(0, 0), (0x33, 7), (0x41, 8), (0, 8)]),
    st.sampled_from(["none", "lz4", "zstd"]),
    st.sampled_from([75, 80, 90, 100]),
    st.sampled_from([0, 100, 5000]),
)
def test_an_elf_verdict_from_the_header_is_the_one_of_the_whole_image(flags, abi, compression, sm, pad):
    """For a well-formed cubin (any e_flags, either layout), the header's verdict is the one cubin_arch gives on
    the whole decompressed image: e_flags that name no arch (an 'a' below sm_90, SM 0) give none, as before."""
    from elf_testing import make_elf

    image = make_elf([(".text.k", 1, b"code" * 8 + bytes(pad))], machine=190, osabi=abi[0], abi_version=abi[1],
                     flags=flags)  # fmt: skip
    entry = read_fatbin(_one_entry_fatbin(2, sm, image, compression)).entries[0]
    assert entry.payload_mismatch == _whole_elf_verdict(entry)


@pytest.mark.parametrize("compression", ["none", "lz4", "zstd"])
@pytest.mark.parametrize("cut", range(-3, 4))
def test_a_target_line_cut_by_the_prefix_boundary_is_read_whole(compression, cut):
    """A .target line that a 64- or 1024-byte prefix cuts (``sm_100`` as ``sm_10``) is read from a longer prefix."""
    for boundary in (64, 1024):
        head = b".version 8.0\n// " + b"x" * (boundary - 17 - 13 + cut) + b"\n"
        text = head + b".target sm_100\n.address_size 64\n" + b"// tail\n" * 300 + b"\0"
        entry = read_fatbin(_one_entry_fatbin(1, 100, text, compression)).entries[0]
        assert entry.payload_mismatch is None, (boundary, cut)
        assert str(ptx_target_of(entry)) == "sm_100"


@pytest.mark.parametrize("compression", ["none", "lz4", "zstd"])
def test_an_elf_header_around_data_that_is_not_elf_is_told_from_the_whole_payload(compression):
    """Data without PTX directives is 'not ELF' only once all of it is read, whatever its size (no line in it)."""
    for size in (40, 5000, 20_000):  # the last over three prefixes (64, 1024, 16384)
        data = bytes((i * i) % 251 + 1 for i in range(size))  # no PTX directives, not too compressible
        entry = read_fatbin(_one_entry_fatbin(2, 80, data, compression)).entries[0]
        assert entry.payload_mismatch == "an ELF header (sm_80) around data that is not ELF", size


def test_an_lz4_match_offset_of_zero_is_a_value_error():
    with pytest.raises(ValueError, match="offset 0 is outside"):
        lz4_prefix(bytes([0x10]) + b"A" + b"\x00\x00" + bytes([0x10]) + b"B", 64)
    with pytest.raises(ValueError, match="offset 0 is outside"):
        lz4_prefix(bytes([0x1F]) + b"A" + b"\x00\x00" + b"\x05" + bytes([0x10]) + b"B", 64)


def test_a_payload_read_whole_is_held_once_in_memory():
    """A payload whose verdict needs all of it (here 32 MiB with no line) is decompressed once, as data() would: the
    Python memory it takes at its peak is about its size, not the prefixes gathered and copied besides."""
    import tracemalloc

    size = 32 << 20
    frame = zstandard.ZstdCompressor().compress(b"\x01" * size)
    pad = (size // 1024) - len(frame)
    skippable = struct.pack("<II", 0x184D2A50, pad) + bytes(pad)  # the header may claim 1024x what is stored
    data = bytearray(_one_entry_fatbin(2, 80, b"", "zstd"))
    entry_header = bytearray(data[16:80])
    payload = frame + skippable + bytes(-(len(frame) + len(skippable)) % 8)
    struct.pack_into("<QI", entry_header, 8, len(payload), len(frame) + len(skippable))
    struct.pack_into("<Q", entry_header, 56, size)
    data = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 64 + len(payload)) + bytes(entry_header) + payload
    entry = read_fatbin(data).entries[0]
    tracemalloc.start()
    try:
        assert entry.payload_mismatch == "an ELF header (sm_80) around data that is not ELF"
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1.5 * size, peak / size


@pytest.mark.parametrize("compression", ["lz4", "zstd"])
def test_a_stream_that_ends_before_its_header_says_gives_no_verdict_past_its_end(compression):
    """A payload that decodes to 300 bytes where its header says 20,000: data() refuses it, and a .target that
    lies past the first prefix is not taken from a prefix shorter than the one asked for (both codecs alike)."""
    ptx = b"//" + b"x" * 80 + b"\n.version 8.0\n.target sm_90\n" + b"// pad\n" * 30  # the directives after 64 bytes
    entry = read_fatbin(_one_entry_fatbin(1, 80, ptx, compression, size=20_000)).entries[0]
    with pytest.raises(Exception, match="decompress"):
        entry.data()
    assert entry.payload_mismatch is None
    whole = read_fatbin(_one_entry_fatbin(1, 80, ptx, compression)).entries[0]  # the same bytes, the right size
    assert whole.payload_mismatch == "the header says compute_80, the PTX .target is sm_90"


def test_payload_mismatch_is_read_once_and_kept_where_the_judgement_looks_for_it(monkeypatch):
    """Cached on the entry as ``functools.cached_property`` keeps it (``_select`` reads the entry's ``__dict__``):
    the payload is read at the first ask only, and each entry keeps its own answer."""
    import cuda_fatbin._payload as payload

    data = bytearray(_fatbin_with(_PTX, "speed"))
    entry = read_fatbin(bytes(data)).entries[0]
    struct.pack_into("<I", data, entry.offset + 0x1C, 90)
    other = read_fatbin(bytes(data)).entries[0]
    calls = []
    real = payload.mismatch
    monkeypatch.setattr(payload, "mismatch", lambda e: calls.append(e) or real(e))
    assert "payload_mismatch" not in entry.__dict__
    assert [entry.payload_mismatch, entry.payload_mismatch, other.payload_mismatch, other.payload_mismatch] == [
        None, None, "the header says compute_90, the PTX .target is sm_89", "the header says compute_90, the PTX "
        ".target is sm_89"]  # fmt: skip
    assert calls == [entry, other]
    assert entry.__dict__["payload_mismatch"] is None
    assert type(entry).payload_mismatch.__doc__.startswith("What the payload says against the header")


_HEADS = [b"\n" * 8 + b".version 7.0\n.target sm_%d\n.address_size 64\n\n\n\n.visible .global .align 4 .b8 g[%d];\n"
          % (sm, n) for sm in (50, 70, 80) for n in (4, 16, 4096)]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_HEADS), st.sampled_from(_HEADS), st.integers(0, 200), st.integers(0, 255),
       st.sampled_from(["cut", "flip", "longer"]))  # fmt: skip
def test_an_lz4_head_taken_from_what_a_decode_read_before_is_the_decoders_own(first, second, at, byte, change):
    """The first 64 bytes of PTX entries are kept by the input bytes their decode read (libcufft's 8,183 PTX
    entries begin alike): another input is answered from them only when it decodes to the same, and an input cut
    before the end of the literals the kept decode stepped over, or changed where it read, is decoded anew."""
    from cuda_fatbin import _payload

    primed = lz4.block.compress(first + b"// " + b"x" * 300 + b"\n", store_size=False)
    raw = bytearray(lz4.block.compress(second + b"// " + b"y" * 300 + b"\n", store_size=False))
    if change == "cut":
        raw = raw[: at % len(raw)]
    elif change == "flip":
        raw[at % len(raw)] = byte
    else:
        raw += bytes([byte]) * at
    _payload._LZ4_HEADS.clear()
    _payload._LZ4_READ.clear()
    _payload._lz4_first(bytes(primed[:192]))  # kept: what it read, and how far it looked
    assert _payload._LZ4_HEADS
    try:
        want: bytes | None = lz4_prefix(bytes(raw[:192]), 64)
    except ValueError:
        want = None
    try:
        got: bytes | None = _payload._lz4_first(bytes(raw[:192]))
    except ValueError:
        got = None
    assert got == want


def test_an_lz4_head_kept_is_not_taken_for_an_input_that_ends_inside_its_last_literals():
    """The decode that was kept stepped over literals it did not read: an input that shares the bytes it read but
    ends before those literals do is malformed there, and is told so (not given the kept head)."""
    from cuda_fatbin import _payload

    text = _HEADS[0] + b"// " + b"z" * 300 + b"\n"
    raw = lz4.block.compress(text, store_size=False)
    _payload._LZ4_HEADS.clear()
    _payload._LZ4_READ.clear()
    _, read, reach = _payload._lz4_decode(raw, 64)
    assert read < reach < len(raw)  # the 64th byte lies inside a run of literals that goes on
    assert _payload._lz4_first(raw) == text[:64]
    cut = raw[: reach - 1]  # what the kept decode read, and less than the literals it stepped over
    assert cut[:read] == raw[:read]
    with pytest.raises(ValueError, match="literals run past"):
        lz4_prefix(cut, 64)
    with pytest.raises(ValueError, match="literals run past"):
        _payload._lz4_first(cut)
    assert _payload._lz4_first(raw[: reach + 1]) == text[:64]  # longer than its reach: the kept head


def test_the_lz4_heads_kept_stay_bounded():
    from cuda_fatbin import _payload

    _payload._LZ4_HEADS.clear()
    _payload._LZ4_READ.clear()
    for i in range(3 * _payload._LZ4_HEADS_MAX):
        text = b".version 8.0\n.target sm_%d\n// %d\n" % (50 + i % 50, i) + b"p" * (40 + i % 17) + b"\n" * 200
        raw = lz4.block.compress(text, store_size=False)
        assert _payload._lz4_first(raw) == text[:64]
        assert len(_payload._LZ4_HEADS) <= _payload._LZ4_HEADS_MAX
        assert len(_payload._LZ4_READ) <= _payload._LZ4_READ_MAX


#: incompressible: one LZ4 literal run whose length takes more bytes than the input first read for 64 bytes out
_NOISE = random.Random(7).randbytes(60_000).replace(b"\n", b" ") + b"\n"


_LEADS = st.sampled_from([b"", b"\n" * 70, b"// " + b"c" * 1100 + b"\n", _NOISE])
_BODIES = st.sampled_from([b".version 8.0\n.target sm_80\n", b".version 8.0\n.target sm_90\n", b"\x7fELF" + bytes(60),
                           b"no directives\n"])  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([1, 2]), _LEADS, _BODIES, st.integers(0, 3000),
       st.sampled_from(["whole", "cut", "flip", "size"]), st.integers(0, 255))  # fmt: skip
def test_an_lz4_verdict_without_a_generator_is_the_prefixes_verdict(kind, lead, body, pad, change, byte):
    """``mismatch`` reads an LZ4 entry's first 64 bytes without a generator, then goes on as :func:`prefixes` does:
    the same verdict for any payload, a block cut short, a byte changed, a header that claims another size."""
    from cuda_fatbin import _payload

    payload = lead + body + b"// pad\n" * (pad // 7)
    size = len(payload) + (byte if change == "size" else 0)
    data = bytearray(_one_entry_fatbin(kind, 80, payload, "lz4", size=size))
    entry = read_fatbin(bytes(data)).entries[0]
    end = entry._payload + entry._compressed
    if change == "cut":
        data[entry._payload + byte % entry._compressed : end] = bytes(end - entry._payload - byte % entry._compressed)
    elif change == "flip":
        data[entry._payload + (byte * 7) % entry._compressed] = byte
    fast, slow = (read_fatbin(bytes(data)).entries[0] for _ in range(2))
    _payload._LZ4_HEADS.clear()
    _payload._LZ4_READ.clear()
    want = None
    try:
        for head, whole in _payload.prefixes(slow):
            verdict = _payload._verdict(slow, slow.arch, head, whole)
            if verdict is not _payload._UNDECIDED:
                want = verdict
                break
    except FatbinFormatError:  # as mismatch() says it: no verdict
        want = None
    assert _payload.mismatch(fast) == want
