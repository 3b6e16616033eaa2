# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The ELF reader against readelf (binutils), on images built with chosen section tables."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cuda_fatbin._elf import ElfFormatError, find_section_by_type, iter_sections, read_header, section_headers

from elf_testing import make_elf, patched

TYPES = {"NULL": 0, "PROGBITS": 1, "SYMTAB": 2, "STRTAB": 3, "NOTE": 7, "NOBITS": 8}


@pytest.fixture(scope="module")
def readelf(tmp_path_factory):
    path = shutil.which("readelf")
    if path is None:
        pytest.skip("readelf (binutils) is not installed")
    tmp = tmp_path_factory.mktemp("readelf")

    def run(image: bytes, *args: str) -> str:
        f = tmp / "image.o"
        f.write_bytes(image)
        return subprocess.run([path, "-W", *args, str(f)], capture_output=True, check=True).stdout.decode("latin-1")

    return run


def readelf_sections(text: str) -> list[tuple[str, int, int, int]]:
    rows = []
    for m in re.finditer(r"^\s*\[\s*\d+\]\s+(\S*?)\s+([A-Z_]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)\s", text, re.M):
        name, typ, off, size = m.groups()
        rows.append((name, TYPES[typ], int(off, 16), int(size, 16)))
    return rows


def readelf_header(text: str) -> dict[str, str]:
    return {k.strip(): v.strip() for k, v in re.findall(r"^\s+([^:\n]+):\s+(.*)$", text, re.M)}


sections_strategy = st.lists(
    st.tuples(
        st.sampled_from([".text", ".nv_fatbin", "__nv_relfatbin", ".data", ".bss", ".note.x", ".nv.info"]),
        st.sampled_from([1, 3, 7, 8]),
        st.binary(max_size=40),
    ),
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(sections_strategy, st.sampled_from([32, 64]), st.booleans())
def test_sections_and_header_agree_with_readelf(readelf, sections, bits, extended):
    sections = [(n, t, b"" if t == 8 else d) for n, t, d in sections]
    image = make_elf(sections, bits=bits, extended=extended, e_type=2, machine=190, osabi=0x33, flags=0x5A)
    ours = [(s.name, s.type, s.offset, s.size) for s in iter_sections(image)]
    assert ours == readelf_sections(readelf(image, "-S"))
    h = read_header(image)
    theirs = readelf_header(readelf(image, "-h"))
    assert (h.bits, h.type, h.flags, h.shoff, h.shentsize) == (
        int(theirs["Class"][3:]), 2, int(theirs["Flags"], 16), int(theirs["Start of section headers"].split()[0]),
        int(theirs["Size of section headers"].split()[0]),
    )  # fmt: skip
    assert (h.osabi, h.machine, h.abi_version) == (0x33, 190, 0)
    count = len(sections) + 2
    assert (h.shnum, h.shstrndx) == ((0, 0xFFFF) if extended else (count, count - 1))
    for t in (1, 3, 7, 8, 99):
        first = next(((s.offset, s.size) for s in iter_sections(image) if s.type == t), None)
        assert find_section_by_type(image, h, t) == first


@given(sections_strategy, st.sampled_from([32, 64]), st.integers(1, 24), st.booleans())
@example([(".text", 1, b"abcd"), (".bss", 8, b"")], 32, 3, False)  # 32-bit entries of 64 bytes, as 64-bit ones are
def test_padded_section_headers_read_the_same(sections, bits, pad, extended):
    sections = [(n, t, b"" if t == 8 else d) for n, t, d in sections]
    plain = make_elf(sections, bits=bits, extended=extended)
    padded = make_elf(sections, bits=bits, extended=extended, shentsize=(64 if bits == 64 else 40) + pad * 8)
    assert list(iter_sections(padded)) == list(iter_sections(plain))
    header = read_header(padded)
    assert section_headers(padded, header) == section_headers(plain, read_header(plain))
    assert find_section_by_type(padded, header, 3) == find_section_by_type(plain, read_header(plain), 3)


def raises_at(image: bytes, offset: int, words: str) -> ElfFormatError:
    with pytest.raises(ElfFormatError) as info:
        list(iter_sections(image))
    e = info.value
    assert e.offset == offset and words in e.message and str(e) == f"{e.message} (at offset {offset:#x})"
    return e


@pytest.mark.parametrize("bits", [32, 64])
def test_malformed_images_name_the_field_and_its_offset(bits):
    image = make_elf([(".text", 1, b"abcd"), (".nv_fatbin", 1, bytes(16))], bits=bits)
    h = read_header(image)
    raises_at(image[: h.shoff + 10], h.shoff, "section table of 4 entries")
    raises_at(b"\x7fELX" + image[4:], 0, "not an ELF image")
    raises_at(image[:4] + bytes([3]) + image[5:], 4, "invalid ELF class 3")
    raises_at(image[:5] + bytes([3]) + image[6:], 5, "invalid ELF data encoding 3")  # 1 and 2 (big-endian) are valid
    entsize_at = 0x3A if bits == 64 else 0x2E
    small = image[:entsize_at] + struct.pack("<H", 16) + image[entsize_at + 2 :]
    raises_at(small, entsize_at, f"section header entry size 16 is below {64 if bits == 64 else 40}")
    # section 2 claims more bytes than the file has
    row = h.shoff + 2 * h.shentsize
    size_at = row + (32 if bits == 64 else 20)
    fmt = "<Q" if bits == 64 else "<I"
    long = image[:size_at] + struct.pack(fmt, len(image)) + image[size_at + struct.calcsize(fmt) :]
    raises_at(long, row, f"section 2 ({len(image)} bytes at 0x")
    # SHT_NOBITS sections occupy no file space, whatever their size
    type_at = row + 4
    nobits = long[:type_at] + struct.pack("<I", 8) + long[type_at + 4 :]
    assert [s.size for s in iter_sections(nobits)][2] == len(image)
    # the section-name table index must name a section
    strndx_at = 0x3E if bits == 64 else 0x32
    bad_index = image[:strndx_at] + struct.pack("<H", 9) + image[strndx_at + 2 :]
    raises_at(bad_index, 0, "section-name table index 9 is not below the section count 4")


def test_truncated_header_fields():
    image = make_elf([], bits=64)
    with pytest.raises(ElfFormatError) as info:
        read_header(image[:30])
    assert info.value.offset == 18 and "need 46 bytes, 12 left" in info.value.message
    with pytest.raises(ElfFormatError, match="not an ELF image"):
        read_header(image[:15])


def test_names_are_cut_at_the_nul_or_the_table_end():
    image = make_elf([("a" * 5000, 1, b"x"), (".b", 1, b"y")])
    names = [s.name for s in iter_sections(image)]
    assert names[1] == "a" * 256 and names[2] == ".b"  # a name is read up to MAX_NAME = 256 bytes (docs/security.md)
    # a name that runs to the table's declared end stops there, even where the bytes after it go on: here the
    # table is declared 8 bytes long ("\0.a\0.shs"), and "trtab\0" follows it in the image
    image = make_elf([(".a", 1, b"x")])
    header = read_header(image)
    row = header.shoff + 2 * 64  # the third row: .shstrtab (null, .a, .shstrtab)
    assert [s.name for s in iter_sections(image)] == ["", ".a", ".shstrtab"]
    assert [s.name for s in iter_sections(patched(image, row + 32, "<Q", 8))] == ["", ".a", ".shs"]


def test_find_section_by_type_fast_and_slow_paths_agree():
    sections = [(".text", 1, b"abcd"), (".nv_fatbin", 1, bytes(16)), (".user", 0x80000005, b"x" * 8)]
    for bits, shentsize in ((64, 64), (64, 72), (32, 40), (32, 64)):  # 32-bit entries padded to 64 bytes too
        image = make_elf(sections, bits=bits, shentsize=shentsize)
        h = read_header(image)
        by_type = {}
        for s in iter_sections(image):
            by_type.setdefault(s.type, (s.offset, s.size))
        for t in (1, 3, 0x80000005, 0x70000086):  # a type above 2**31 is found too
            assert find_section_by_type(image, h, t) == by_type.get(t), (bits, shentsize, t)


@pytest.mark.parametrize("bits, shentsize", [(64, 64), (64, 72), (32, 40), (32, 48)])
def test_offsets_and_sizes_are_unsigned(bits, shentsize):
    image = make_elf([(".text", 1, b"abcd"), (".data", 1, bytes(16))], bits=bits, shentsize=shentsize)
    h = read_header(image)
    row = h.shoff + 2 * h.shentsize
    top = 1 << bits
    fmt, off_at = ("<Q", 24) if bits == 64 else ("<I", 16)
    huge = bytearray(image)
    struct.pack_into(fmt, huge, row + off_at, top - 16)  # offset 2**bits - 16: far past the end, not -16
    with pytest.raises(ElfFormatError) as info:
        find_section_by_type(bytes(huge), h, 1)
    assert info.value.offset == row and "section 2 (16 bytes at 0x" in info.value.message
    named = bytearray(image)
    struct.pack_into("<I", named, row, 0x80000000)  # a name offset past the name table: no name, not a wrap
    assert [s.name for s in iter_sections(bytes(named))][2] == ""


def test_nobits_sections_and_errors_on_the_fast_path():
    image = make_elf([(".bss", 8, b""), (".text", 1, b"abcd")])
    h = read_header(image)
    row = h.shoff + h.shentsize
    big = bytearray(image)
    struct.pack_into("<Q", big, row + 32, 1 << 20)  # .bss: a megabyte that occupies no file space
    assert find_section_by_type(bytes(big), h, 1) == (next(s.offset for s in iter_sections(image) if s.type == 1), 4)
    bad = bytearray(big)
    struct.pack_into("<I", bad, row + 4, 1)  # the same as PROGBITS: past the end
    with pytest.raises(ElfFormatError) as info:
        find_section_by_type(bytes(bad), h, 1)
    assert info.value.offset == row
    bss_at = next(sec.offset for sec in iter_sections(image) if sec.type == 8)
    assert info.value.message == (
        f"section 1 (1048576 bytes at {bss_at:#x}) runs past the end of the data ({len(image)} bytes)"
    )
    cut = image[: h.shoff + 64]
    with pytest.raises(ElfFormatError) as info:
        find_section_by_type(cut, h, 1)
    assert (info.value.offset, info.value.message) == (
        h.shoff, f"section table of {h.shnum} entries x 64 bytes runs past the end ({len(cut)} bytes)"
    )  # fmt: skip


def test_header_fields_are_unsigned(readelf):
    image = make_elf([(".text", 1, b"abcd")], e_type=0xFF00, osabi=0xC0, abi_version=0x90)
    h = read_header(image)
    assert (h.type, h.osabi, h.abi_version) == (0xFF00, 0xC0, 0x90)
    theirs = readelf_header(readelf(image, "-h"))
    assert "ff00" in theirs["Type"] and theirs["ABI Version"] == str(0x90)
    with pytest.raises(ElfFormatError) as info:
        read_header(b"\x7fELX" + image[4:])
    assert (info.value.offset, info.value.message) == (0, "not an ELF image (no \\x7fELF magic)")


@pytest.mark.parametrize("bits", [32, 64])
def test_no_section_table_offset_means_no_sections(readelf, bits):
    image = make_elf([(".text", 1, b"abcd")], bits=bits)
    h = read_header(image)
    at = 0x28 if bits == 64 else 0x20  # e_shoff
    none = patched(image, at, "<Q" if bits == 64 else "<I", 0)
    assert read_header(none).shnum == h.shnum > 0
    assert list(iter_sections(none)) == [] and section_headers(none, read_header(none)) == []
    assert readelf_sections(readelf(none, "-S")) == []  # the ELF spec: e_shoff 0 means no section table


@pytest.mark.parametrize("bits", [32, 64])
def test_a_section_may_end_at_the_last_byte(bits):
    image = make_elf([(".text", 1, b"abcd"), (".data", 1, b"ef")], bits=bits)
    h = read_header(image)
    row = h.shoff + 2 * h.shentsize
    size_at, fmt = (row + 32, "<Q") if bits == 64 else (row + 20, "<I")
    offset = next(s.offset for s in iter_sections(image) if s.name == ".data")
    to_end = patched(image, size_at, fmt, len(image) - offset)  # .data now runs over the table to the end
    assert [s.size for s in iter_sections(to_end) if s.name == ".data"] == [len(image) - offset]
    past = patched(image, size_at, fmt, len(image) - offset + 1)
    with pytest.raises(ElfFormatError) as info:
        list(iter_sections(past))
    size = len(image) - offset + 1
    assert (info.value.offset, info.value.message) == (
        row, f"section 2 ({size} bytes at {offset:#x}) runs past the end of the data ({len(image)} bytes)"
    )  # fmt: skip


@pytest.mark.parametrize("bits", [32, 64])
def test_the_section_name_table_must_be_a_section_inside_the_data(bits):
    image = make_elf([(".text", 1, b"abcd")], bits=bits)
    h = read_header(image)  # sections: null, .text, .shstrtab
    strndx_at = 0x3E if bits == 64 else 0x32
    with pytest.raises(ElfFormatError) as info:
        list(iter_sections(patched(image, strndx_at, "<H", 3)))  # one past the last section
    assert (info.value.offset, info.value.message) == (0, "section-name table index 3 is not below the section count 3")
    # extended numbering: the index is section 0's sh_link, a 32-bit unsigned word
    ext = make_elf([(".text", 1, b"abcd")], bits=bits, extended=True)
    link_at = read_header(ext).shoff + (40 if bits == 64 else 24)
    with pytest.raises(ElfFormatError) as info:
        list(iter_sections(patched(ext, link_at, "<I", 0xFFFFFFF0)))
    assert info.value.message == "section-name table index 4294967280 is not below the section count 3"
    # a name table of type SHT_NOBITS passes the section check but has no bytes in the file
    row = h.shoff + 2 * h.shentsize
    str_off = next(s.offset for s in iter_sections(image) if s.name == ".shstrtab")
    size_at, fmt = (row + 32, "<Q") if bits == 64 else (row + 20, "<I")
    nobits = patched(image, row + 4, "<I", 8)
    exact = patched(nobits, size_at, fmt, len(image) - str_off)
    assert [s.name for s in iter_sections(exact)] == ["", ".text", ".shstrtab"]
    with pytest.raises(ElfFormatError) as info:
        list(iter_sections(patched(nobits, size_at, fmt, len(image) - str_off + 1)))
    assert (info.value.offset, info.value.message) == (str_off, "section-name table runs past the end of the data")


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.text(st.sampled_from(".abt\x00é"), max_size=300), min_size=0, max_size=5),
    st.sampled_from([(64, None), (32, None), (64, 72)]),
    st.lists(st.tuples(st.integers(0, 1 << 12), st.integers(0, 255)), max_size=6),
)
@example(["a" * 300, ".text.k"], (64, None), [])
def test_section_names_in_one_pass_are_the_names_iter_sections_reads(names, layout, edits):
    """name_at over name_table (the table copied once) gives iter_sections' names, or its error, on any bytes."""
    from cuda_fatbin._elf import name_at, name_table

    bits, shentsize = layout
    image = bytearray(make_elf([(n, 1, b"xy") for n in names], bits=bits, shentsize=shentsize))
    for at, value in edits:
        image[at % len(image)] = value
    data = bytes(image)

    def outcome(read):
        try:
            return read()
        except ElfFormatError as e:
            return ("error", e.message, e.offset)

    def bulk():
        header = read_header(data)
        rows = section_headers(data, header)
        table = name_table(data, header) if rows else b""
        return [name_at(table, row[0]) for row in rows]

    assert outcome(bulk) == outcome(lambda: [s.name for s in iter_sections(data)])


RDC_SOURCE = """
__device__ float g[4096];
__global__ void k(float* x) {
    __shared__ float s[4096];
    s[threadIdx.x] = g[threadIdx.x] + x[threadIdx.x];
    __syncthreads();
    x[threadIdx.x] = s[(threadIdx.x + 1) % 4096];
}
"""


def test_relocatable_cubins_reserve_shared_memory_and_globals_without_file_bytes(tmp_path, cuobjdump_path):
    """nvcc -rdc=true types `.nv.shared.KERNEL` 0x7000000a and `.nv.global` 0x70000007 (SHT_NOBITS in a
    whole-program cubin), each declaring 16 KiB the file does not hold: every image reads, its bytes are
    cuobjdump's, and its sections are readelf's (NVIDIA's libnccl.so.2 2.32.3 ships such images)."""
    import os

    from cuda_fatbin import extract_entries
    from cuda_fatbin._reader import iter_fatbins

    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH")
    (tmp_path / "k.cu").write_text(RDC_SOURCE)
    archs = ("80", "90", "100", "120")
    gencode = [f"-gencode=arch=compute_{a},code=sm_{a}" for a in archs]
    subprocess.run([nvcc, "-rdc=true", "-c", *gencode, "k.cu", "-o", "k.o"], cwd=tmp_path, check=True)
    subprocess.run([cuobjdump_path, "-xelf", "all", "k.o"], cwd=tmp_path, check=True, capture_output=True)
    theirs = sorted(n for n in os.listdir(tmp_path) if n.endswith(".cubin"))
    assert len(theirs) == len(archs)
    [fatbin] = iter_fatbins(tmp_path / "k.o")
    images = {e.arch: e.data() for e in fatbin.iter_entries() if e.kind == "elf"}
    assert sorted(images.values()) == sorted((tmp_path / n).read_bytes() for n in theirs)
    readelf = shutil.which("readelf")
    for data in images.values():
        header = read_header(data)
        rows = section_headers(data, header)
        assert sum(1 for _n, typ, off, size in rows if typ == 8 and off + size > len(data)) >= 2
        if readelf is not None:
            (tmp_path / "image.cubin").write_bytes(data)
            text = subprocess.run([readelf, "-S", "-W", "image.cubin"], cwd=tmp_path, capture_output=True,
                                  text=True, check=True).stdout  # fmt: skip
            row = r"^\s*\[\s*\d+\]\s+(\S+)\s+(\S+(?:\+0x[0-9a-f]+)?)\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)"
            shown = re.findall(row, text, re.M)
            ours = {s.name: s.size for s in iter_sections(data)}
            for name, typ, size in shown:
                if typ in ("LOPROC+0xa", "LOPROC+0x7"):
                    assert ours[name] == int(size, 16) == 16384
    out = tmp_path / "out"
    extract_entries(tmp_path / "k.o", out, kinds=("elf",))
    assert len(os.listdir(out)) == len(archs)


@pytest.mark.parametrize("sh_type", [0x70000007, 0x7000000A])
def test_nvidias_no_file_types_are_read_so_in_cuda_images_only(sh_type):
    """The same processor-specific type means something else to another machine (x86-64, AArch64): there a
    section of it that runs past the end is refused, as any other."""
    for machine, reads in ((190, True), (62, False), (183, False)):
        image = make_elf([(".nv.shared.k", sh_type, b"")], machine=machine)
        row = read_header(image).shoff + 64  # the section after the null one
        big = patched(image, row + 32, "<Q", 1 << 20)
        if reads:
            [_null, (_name, typ, _off, size), _names] = section_headers(big, read_header(big))
            assert (typ, size) == (8, 1 << 20)
        else:
            with pytest.raises(ElfFormatError, match="runs past the end"):
                section_headers(big, read_header(big))
