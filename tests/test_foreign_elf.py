# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Host binaries of other platforms: a big-endian ELF file (s390x, ppc64 big-endian, SPARC) is read, not refused.

The big-endian files are real nvcc objects whose ELF header and section table are rewritten in big-endian order
(the section contents are copied as they are, so the fatbin inside stays what NVIDIA wrote); readelf, which reads
ELF files of every platform, is the oracle for their section tables.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import sys

import pytest

from cuda_fatbin import detect, iter_fatbins, scan
from cuda_fatbin._elf import iter_sections, read_header

from elf_testing import make_elf
from fatbin_testing import process_tmp, run_tool

CLI = [sys.executable, "-m", "cuda_fatbin"]
EM_S390, EM_PPC = 22, 20

# (ELF header fields after e_ident, section header, program header) by class, without the byte order
_LAYOUT = {2: ("HHIQQQIHHHHHH", "IIQQQQIIQQ", "IIQQQQQQ"), 1: ("HHIIIIIHHHHHH", "IIIIIIIIII", "IIIIIIII")}


def big_endian(data: bytes, machine: int = EM_S390) -> bytes:
    """``data`` (a little-endian ELF file) with its ELF header, section and program headers in big-endian order."""
    out = bytearray(data)
    ehdr, shdr, phdr = _LAYOUT[data[4]]
    fields = list(struct.unpack_from("<" + ehdr, data, 16))
    fields[1] = machine
    _type, _machine, _version, _entry, phoff, shoff, _flags, _eh, phentsize, phnum, shentsize, shnum, _strndx = fields
    struct.pack_into(">" + ehdr, out, 16, *fields)
    for table, entsize, count, layout in ((shoff, shentsize, shnum, shdr), (phoff, phentsize, phnum, phdr)):
        for i in range(count if table else 0):
            at = table + i * entsize
            struct.pack_into(">" + layout, out, at, *struct.unpack_from("<" + layout, data, at))
    out[5] = 2  # EI_DATA: ELFDATA2MSB
    return bytes(out)


@pytest.fixture(scope="module")
def host_object(needs_nvcc) -> bytes:
    """An nvcc object (x86-64, little-endian) with an sm_80 cubin and compute_90 PTX in .nv_fatbin."""
    root = process_tmp("foreign-elf")
    (root / "k.cu").write_text('extern "C" __global__ void k(float* p) { p[0] = 1; }\n')
    run_tool([needs_nvcc, "-c", "k.cu", "-o", "k.o", "-gencode=arch=compute_80,code=sm_80",
              "-gencode=arch=compute_90,code=compute_90"], cwd=root, outputs=[root / "k.o"])  # fmt: skip
    return (root / "k.o").read_bytes()


def _readelf_sections(path) -> list[tuple[str, ...]]:
    text = subprocess.run(["readelf", "-S", "-W", str(path)], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)", text)


def test_a_big_endian_elf_file_is_read_as_readelf_reads_it(host_object, tmp_path):
    """Issue 51: EI_DATA 2 was "malformed". readelf lists the same sections (name, offset, size) as we do."""
    if shutil.which("readelf") is None:
        pytest.skip("readelf (binutils) is the oracle of this test")
    be = tmp_path / "k-s390x.o"
    be.write_bytes(big_endian(host_object))
    theirs = _readelf_sections(be)[1:]  # after the null section, whose empty name readelf leaves out
    header = read_header(be.read_bytes())
    ours = [(s.name, f"{s.offset:06x}", f"{s.size:06x}") for s in iter_sections(be.read_bytes(), header)][1:]
    assert header.order == ">" and header.machine == EM_S390
    assert len(theirs) > 5 and ours == theirs


@pytest.mark.parametrize("machine", [EM_S390, EM_PPC])
def test_a_big_endian_host_file_yields_its_fatbins(host_object, machine):
    """Its sections are found, and so is the fatbin in .nv_fatbin: the same entries as the little-endian original."""
    be = big_endian(host_object, machine)
    assert detect(be).kind == "host_elf"

    def listed(data):
        return [(fb.section, fb.offset, [(e.kind, str(e.arch)) for e in fb.iter_entries()])
                for fb in iter_fatbins(data, embedded=True)]  # fmt: skip

    assert listed(be) == listed(host_object)
    assert [e for _s, _o, e in listed(be)] == [[("elf", "sm_80"), ("ptx", "sm_90")]]


@pytest.mark.parametrize("bits", [32, 64])
def test_a_big_endian_file_without_device_code_is_not_an_error(tmp_path, bits):
    """A ppc or s390x library among a distribution's files: no device code, no error row, the scan is covered."""
    plain = make_elf([(".text", 1, b"\x07\x07" * 8), (".rodata", 1, b"hello\0")], bits=bits, e_type=3)
    (tmp_path / "libhost.so").write_bytes(big_endian(plain, EM_PPC if bits == 32 else EM_S390))
    report = scan([tmp_path], gpus="90", max_workers=1)
    assert (report.files_read, report.binaries, report.covered) == (1, [], True)
    res = subprocess.run([*CLI, "inspect", str(tmp_path / "libhost.so")], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "malformed" not in res.stdout + res.stderr


def test_a_big_endian_file_is_scanned_and_judged(host_object, tmp_path):
    """scan judges the fatbin of a big-endian host file as it judges the original's; exit 0, not 1 (malformed)."""
    (tmp_path / "k-s390x.o").write_bytes(big_endian(host_object))
    res = subprocess.run([*CLI, "scan", str(tmp_path), "--gpu", "80", "--json", "-j", "1"], capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    doc = json.loads(res.stdout)
    (binary,) = doc["binaries"]
    assert binary["error"] is None and binary["coverage"]["8.0"]["status"] == "SASS exact"
    assert binary["entries"] == {"elf sm_80": 1, "ptx sm_90": 1}


def _big_endian_extended(data: bytes) -> bytes:
    """``big_endian`` for an image of extended numbering (``e_shnum`` 0): the count is read from section 0."""
    _ehdr, shdr, _phdr = _LAYOUT[data[4]]
    shoff, shentsize = (struct.unpack_from("<Q", data, 0x28)[0], 64) if data[4] == 2 else (
        struct.unpack_from("<I", data, 0x20)[0], 40)  # fmt: skip
    count = struct.unpack_from("<" + shdr, data, shoff)[5]
    out = bytearray(big_endian(data))
    for i in range(count):
        at = shoff + i * shentsize
        struct.pack_into(">" + shdr, out, at, *struct.unpack_from("<" + shdr, data, at))
    return bytes(out)


@pytest.mark.parametrize("bits", [32, 64])
def test_a_big_endian_file_of_extended_section_numbering_is_read_as_readelf_reads_it(tmp_path, bits):
    """Over 65,535 sections, the count and the name table's index live in section 0 (``sh_size``, ``sh_link``): in
    a big-endian file they are read big-endian too. readelf lists the same sections; the fatbin is found by name."""
    if shutil.which("readelf") is None:
        pytest.skip("readelf (binutils) is the oracle of this test")
    fatbin = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 0)
    plain = make_elf([(".text", 1, b"\x07" * 16), (".nv_fatbin", 1, fatbin)], bits=bits, e_type=1, extended=True)
    be = tmp_path / "k.o"
    be.write_bytes(_big_endian_extended(plain))
    theirs = _readelf_sections(be)[1:]
    ours = [(s.name, f"{s.offset:06x}", f"{s.size:06x}") for s in iter_sections(be.read_bytes())][1:]
    assert [t[0] for t in theirs] == [".text", ".nv_fatbin", ".shstrtab"] and ours == theirs
    assert [fb.section for fb in iter_fatbins(be)] == [".nv_fatbin"]


@pytest.mark.parametrize("bits", [32, 64])
@pytest.mark.parametrize(("e_type", "readelf_type"), [(1, "REL"), (2, "EXEC"), (3, "DYN")])
def test_a_big_endian_header_is_read_as_readelf_reads_it(tmp_path, bits, e_type, readelf_type):
    """e_type, e_machine and the table fields of a big-endian header, as readelf -h reads them."""
    if shutil.which("readelf") is None:
        pytest.skip("readelf (binutils) is the oracle of this test")
    be = tmp_path / "h.o"
    be.write_bytes(big_endian(make_elf([(".text", 1, b"\x07" * 16)], bits=bits, e_type=e_type)))
    text = subprocess.run(["readelf", "-h", "-W", str(be)], capture_output=True, text=True, check=True).stdout
    field = dict(re.findall(r"^\s*([^:\n]+):\s*(.*)$", text, re.M))
    header = read_header(be.read_bytes())
    assert field["Data"].startswith("2's complement, big endian") and field["Type"].startswith(readelf_type)
    assert header.type == e_type and header.machine == EM_S390 and "S/390" in field["Machine"]
    assert (header.shoff, header.shnum) == (int(field["Start of section headers"].split()[0]),
                                            int(field["Number of section headers"]))  # fmt: skip
