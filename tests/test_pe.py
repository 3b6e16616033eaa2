# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Windows binaries (PE images, COFF objects): NVIDIA's own Windows wheel against its Linux twin, images and
objects built here (llvm-readobj reads them as we do), and the bounds of docs/security.md on hostile ones."""

from __future__ import annotations

import collections
import shutil
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_testing import cli_main
from container_testing import IMAGE_BASE, make_pe
from cuda_fatbin import FatbinFormatError, detect, iter_fatbins, read_fatbin, scan
from cuda_fatbin._pe import PeFormatError, read_sections
from test_hostile_reader import tiny_fatbin

from fatbin_testing import process_tmp

GPUS = "75;80;86;89;90;100;120"


def _download(platform: str | None) -> Path:
    dest = process_tmp(f"wheels-{platform or 'here'}")
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", str(dest)]
    if platform:
        cmd += ["--platform", platform, "--python-version", "3.12"]
    res = subprocess.run([*cmd, "nvidia-curand==10.4.5.25"], capture_output=True, text=True, timeout=600)
    wheels = list(dest.glob("*.whl"))
    if res.returncode != 0 or not wheels:
        pytest.skip(f"nvidia-curand ({platform or 'this platform'}) could not be downloaded: {res.stderr[-200:]}")
    return wheels[0]


@pytest.fixture(scope="session")
def curand_pair() -> tuple[Path, Path, Path, Path]:
    """(Windows wheel, Linux wheel, curand64_10.dll, libcurand.so.10) of nvidia-curand 10.4.5.25, from PyPI."""
    wheels = (_download("win_amd64"), _download("manylinux_2_27_x86_64"))
    out = []
    for wheel, stem in zip(wheels, ("curand64_10.dll", "libcurand.so.10")):
        with zipfile.ZipFile(wheel) as zf:
            member = next(n for n in zf.namelist() if n.endswith(stem))
            path = process_tmp("curand") / stem
            with zf.open(member) as src, open(path, "wb") as dst:
                shutil.copyfileobj(src, dst)
            out.append(path)
    return (*wheels, *out)


def _fatbins(path: Path, **kw) -> list[tuple[bool, list[tuple[str, str, str]]]]:
    """Per fatbin: (stored as data, its entries as (kind, arch, version)), in a canonical order."""
    out = []
    for fb in iter_fatbins(path, **kw):
        entries = sorted((e.kind, str(e.arch), f"{e.version[0]}.{e.version[1]}") for e in fb.iter_entries())
        out.append((fb.embedded, entries))
    return sorted(out)


def test_the_curand_dll_holds_the_fatbins_of_the_linux_library(curand_pair):
    """Issue 48: the whole DLL was one PTX entry of 105,042,032 bytes. Its .nv_fatb holds the 13 fatbins and 186
    entries (kind, arch, version, counts per fatbin) of libcurand.so.10 of the same release; stored ones alike."""
    _win, _linux, dll, so = curand_pair
    registered = _fatbins(dll)
    assert registered == _fatbins(so)
    assert len(registered) == 13 and sum(len(e) for _s, e in registered) == 186
    assert {fb.section for fb in iter_fatbins(dll)} == {".nv_fatb"}
    assert {e.host for fb in iter_fatbins(dll) for e in fb.iter_entries()} == {"windows"}
    stored = _fatbins(dll, embedded=True)
    assert stored == _fatbins(so, embedded=True) and sum(s for s, _e in stored) == 1747


def test_the_curand_dll_is_never_read_as_ptx(curand_pair):
    """It holds .version/.target lines (its stored PTX), but it is binary data: read_fatbin and detect refuse it."""
    dll = curand_pair[2]
    head = dll.read_bytes()[: 4 << 20]
    assert b"\n.target sm_" in head or b".target sm_" in dll.read_bytes()
    with pytest.raises(FatbinFormatError, match="not a fatbin"):
        read_fatbin(dll)
    with pytest.raises(ValueError, match="unrecognised"):
        detect(head)
    result = cli_main("inspect", "--json", "--embedded", dll, check=0)
    import json

    kinds = collections.Counter(e["kind"] for fb in json.loads(result.stdout)["files"][0]["fatbins"]
                                for e in fb["entries"])  # fmt: skip
    assert kinds["ptx"] > 0 and all(e["size"] < 50 << 20 for fb in json.loads(result.stdout)["files"][0]["fatbins"]
                                    for e in fb["entries"])  # fmt: skip


def test_scan_judges_the_windows_wheel_as_the_linux_wheel(curand_pair):
    """Issue 48: "no binary with device code found", exit 0. Now one row per wheel, the same in every field."""
    win, linux = curand_pair[:2]
    rows = []
    for wheel in (win, linux):
        report = scan([wheel], gpus=GPUS, driver="12.8", max_workers=1)
        [row] = report.binaries
        assert row.error is None and row.distribution == "nvidia-curand 10.4.5.25"
        rows.append(row)
    assert rows[0].path.endswith("::nvidia/cu13/bin/x86_64/curand64_10.dll")
    assert rows[0].fatbins == rows[1].fatbins == {"registered": 13, "relocatable": 0, "embedded": 1747}
    assert rows[0].entries == rows[1].entries and rows[0].coverage == rows[1].coverage
    assert rows[0].coverage["7.5"]["status"] == "SASS exact"  # and 8.0+ need a newer driver than 12.8: zstd, ISA
    assert cli_main("scan", "--gpu", "75", win, "-j", "1", check=0).returncode == 0


def test_the_curand_dll_is_listed_in_bounded_memory(curand_pair, tmp_path):
    """Listing a 105 MB DLL touches its headers only: resident memory stays far below the file's size."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the child reads its peak memory from /proc (Linux)")
    code = ("import sys\nfrom cuda_fatbin import iter_fatbins\nn = sum(len(list(fb.iter_entries())) for fb in "
            "iter_fatbins(sys.argv[1]))\nwith open('/proc/self/status') as f:\n    print(n, next(int(l.split()[1]) "
            "// 1024 for l in f if l.startswith('VmHWM:')))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code, str(curand_pair[2])], capture_output=True, text=True, timeout=120)
    entries, rss_mb = map(int, out.stdout.split())
    assert entries == 186 and rss_mb < 80, out.stderr  # the .nv_fatb section alone is 24 MB


# --- images and objects built here ---


def _image() -> bytes:
    fb = tiny_fatbin()
    return make_pe([(".text", b"\xcc" * 100), (".nv_fatb", fb + bytes(8) + fb), (".rdata", b"x" * 16 + fb),
                    (".data", b"y" * 8 + fb)],
                   wrappers_to=[(".nv_fatb", 0), (".nv_fatb", 88), (".rdata", 16)])  # fmt: skip


def test_sections_read_as_llvm_readobj_reads_them(tmp_path):
    """Names (long ones from the string table), file offsets and sizes equal llvm-readobj's, image and object."""
    readobj = shutil.which("llvm-readobj")
    if readobj is None:
        pytest.skip("llvm-readobj not on PATH")
    fb = tiny_fatbin()
    obj = make_pe([(".text", b"\xcc" * 10), ("__nv_relfatbin", fb), (".nv_fatb", fb), ("a_long_name_here", b"z")],
                  image=False)  # fmt: skip
    for name, data in (("k.dll", _image()), ("k.obj", obj)):
        path = tmp_path / name
        path.write_bytes(data)
        out = subprocess.run([readobj, "--sections", str(path)], capture_output=True, text=True, check=True).stdout
        import re

        names = re.findall(r"^\s+Name: (\S+)", out, re.M)
        sizes = [int(s) for s in re.findall(r"RawDataSize: (\d+)", out)]
        assert [(s.name, s.size) for s in read_sections(data)] == list(zip(names, sizes))


def test_registered_stored_and_wrapped_fatbins_of_an_image():
    """.nv_fatb is walked (padding skipped) as .nv_fatbin; a fatbin that a .nvFatBi record points to elsewhere is
    registered too; with embedded, a fatbin in .data is found stored as data."""
    found = [(fb.section, fb.embedded, fb.relocatable) for fb in iter_fatbins(_image(), embedded=True)]
    assert found == [(".nv_fatb", False, False)] * 2 + [(".rdata", False, False), (".data", True, False)]
    assert [fb.section for fb in iter_fatbins(_image())] == [".nv_fatb", ".nv_fatb", ".rdata"]


def test_a_virtual_size_below_the_raw_size_cuts_the_section():
    """An image's section holds min(raw size, virtual size) bytes: what lies after is file alignment padding."""
    fb = tiny_fatbin()
    data = make_pe([(".nv_fatb", fb + b"\xff" * 64)], virtual_sizes={".nv_fatb": len(fb)})
    assert [fb.section for fb in iter_fatbins(data)] == [".nv_fatb"]
    with pytest.raises(FatbinFormatError, match="invalid fatbin header"):  # the same bytes inside the section
        list(iter_fatbins(make_pe([(".nv_fatb", fb + b"\xff" * 64)])))


def test_a_coff_object_with_a_long_relocatable_section_name():
    """An -rdc .obj keeps __nv_relfatbin in the string table (/4): read as relocatable, as in an ELF object; beside
    a .nv_fatb only with relocatable=True (cuobjdump's rule)."""
    fb = tiny_fatbin()
    obj = make_pe([(".text", b"\xcc" * 10), ("__nv_relfatbin", fb)], image=False)
    assert [(f.section, f.relocatable) for f in iter_fatbins(obj)] == [("__nv_relfatbin", True)]
    both = make_pe([("__nv_relfatbin", fb), (".nv_fatb", fb)], image=False)
    assert [f.section for f in iter_fatbins(both)] == [".nv_fatb"]
    assert sorted(f.section for f in iter_fatbins(both, relocatable=True)) == [".nv_fatb", "__nv_relfatbin"]


def test_scan_reads_windows_binaries_in_folders_and_wheels(tmp_path):
    """A .dll, a .pyd and an .obj in a folder, and a .dll in a wheel: each a row, the wheel's named by its wheel."""
    obj = make_pe([("__nv_relfatbin", tiny_fatbin())], image=False)
    (tmp_path / "k.dll").write_bytes(_image())
    (tmp_path / "k.pyd").write_bytes(_image())
    (tmp_path / "k.obj").write_bytes(obj)
    (tmp_path / "k.bin").write_bytes(obj)  # a COFF object has no magic: only an .obj is taken for one
    with zipfile.ZipFile(tmp_path / "demo_pkg-1.0-py3-none-win_amd64.whl", "w") as zf:
        zf.writestr("demo_pkg/k.dll", _image())
    report = scan([tmp_path], gpus="80", max_workers=1)
    rows = {str(Path(b.path).relative_to(tmp_path)): b for b in report.binaries}
    assert sorted(rows) == ["demo_pkg-1.0-py3-none-win_amd64.whl::demo_pkg/k.dll", "k.dll", "k.obj", "k.pyd"]
    assert all(b.error is None for b in rows.values()) and report.files_read == 4
    assert rows["demo_pkg-1.0-py3-none-win_amd64.whl::demo_pkg/k.dll"].distribution == "demo-pkg 1.0"
    assert rows["k.dll"].fatbins == {"registered": 3, "relocatable": 0, "embedded": 1}
    assert rows["k.obj"].fatbins == {"registered": 0, "relocatable": 1, "embedded": 0}


def _bad_images() -> dict[str, bytes]:
    good = _image()
    (pe_at,) = struct.unpack_from("<I", good, 0x3C)
    table = pe_at + 4 + 20 + 240
    return {
        "no PE signature": good[:0x3C] + struct.pack("<I", 0x10000) + good[0x40:],
        "cut in the section table": good[: table + 50],
        "a section past the end": good[: table + 60] + struct.pack("<I", 1 << 30) + good[table + 64 :],  # .nv_fatb's
        "a wrapper to nowhere": good[:-24] + struct.pack("<IIQQ", 0x466243B1, 1, IMAGE_BASE + 0x900000, 0),
        "a long name outside the string table": make_pe([("/999", b"x")], image=False),
        "no fatbin where .nv_fatb starts": make_pe([(".nv_fatb", b"\x01" * 32)]),
    }


@pytest.mark.parametrize("what", sorted(_bad_images()))
def test_a_bad_image_is_one_error_row_and_the_scan_goes_on(tmp_path, what):
    """Each malformed image is a FatbinFormatError naming the problem, and in scan one row with it; a good image
    beside it is still read."""
    bad = "bad.dll" if _bad_images()[what][:2] == b"MZ" else "bad.obj"  # an object is known by its name
    (tmp_path / bad).write_bytes(_bad_images()[what])
    (tmp_path / "good.dll").write_bytes(_image())
    with pytest.raises(FatbinFormatError):
        list(iter_fatbins(_bad_images()[what], embedded=True))
    report = scan([tmp_path], gpus="80", max_workers=1)
    assert [(Path(b.path).name, bool(b.error)) for b in report.binaries] == [(bad, True), ("good.dll", False)]
    assert "FatbinFormatError" in report.binaries[0].error


def test_a_dos_program_without_a_pe_header_is_an_error_row_not_a_silent_pass(tmp_path):
    """MZ says a Windows/DOS executable: recognised, so one that cannot be read is an unreadable input (exit 1)."""
    (tmp_path / "old.exe").write_bytes(b"MZ" + b"\x90" * 200)
    report = scan([tmp_path], gpus="80", max_workers=1)
    [row] = report.binaries
    assert "no PE signature" in row.error and not report.covered
    assert cli_main("scan", "--gpu", "80", tmp_path, check=1).returncode == 1


# --- docs/security.md: fuzzed headers, bombs, linear work, names escaped ---


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzzed_pe_headers_raise_only_documented_errors(data):
    """Any bytes of the headers and section table changed: a listing, or FatbinFormatError; never another error,
    and each example within a second (the section count and sizes are checked against the file)."""
    image = bytearray(_image())
    (pe_at,) = struct.unpack_from("<I", image, 0x3C)
    end = pe_at + 4 + 20 + 240 + 40 * 5
    for _ in range(data.draw(st.integers(1, 8))):
        at = data.draw(st.sampled_from([0x3C, 0x3D, *range(pe_at, end)]))
        image[at] = data.draw(st.integers(0, 255))
    start = time.perf_counter()
    try:
        for fb in iter_fatbins(bytes(image), embedded=True):
            for e in fb.iter_entries():
                assert e.size < len(image) * 1024
    except FatbinFormatError:
        pass
    assert time.perf_counter() - start < 1


def test_65535_sections_naming_one_fatbin_list_in_linear_time():
    """A section table of the most sections a COFF header counts, all .nv_fatb over the same bytes (and as many
    .nvFatBi records pointing there): each fatbin is parsed once; well under a second per 100k sections."""
    fb = tiny_fatbin()
    base = make_pe([(".nv_fatb", fb)])
    (pe_at,) = struct.unpack_from("<I", base, 0x3C)
    table = pe_at + 4 + 20 + 240
    row = base[table : table + 40]
    count = 0xFFFF
    data_at = table + 40 * count
    row = row[:20] + struct.pack("<I", data_at) + row[24:]
    data = bytearray(base[:table] + row * count + fb)
    struct.pack_into("<H", data, pe_at + 6, count)
    start = time.perf_counter()
    assert len(list(iter_fatbins(bytes(data), embedded=True))) == 1
    assert time.perf_counter() - start < 5  # 0.3 s here; quadratic work would take hours


def test_long_section_names_are_cut_and_shown_escaped(tmp_path):
    """A string-table name of 100 KB without a NUL is cut at 256 bytes; a name with an escape sequence reaches the
    terminal escaped (inspect --embedded shows the section of a stored fatbin)."""
    fb = tiny_fatbin()
    obj = make_pe([("\x1b[31mred" + "x" * 100_000, b"y" * 8 + fb)], image=False)
    [section] = read_sections(obj)
    assert len(section.name) == 256
    path = tmp_path / "k.obj"
    path.write_bytes(obj)
    result = cli_main("inspect", "--embedded", path, check=0)
    assert "\x1b" not in result.stdout and "\\x1b[31mred" in result.stdout


def test_reading_never_writes(tmp_path):
    """Listing, reading every entry and scanning a folder of Windows binaries leaves the folder as it was."""
    (tmp_path / "k.dll").write_bytes(_image())
    for bad, data in _bad_images().items():
        (tmp_path / f"{bad}.dll").write_bytes(data)
    before = sorted((p.name, p.stat().st_mtime_ns) for p in tmp_path.iterdir())
    scan([tmp_path], gpus="80", max_workers=1)
    cli_main("inspect", "--embedded", *sorted(tmp_path.iterdir()))
    assert sorted((p.name, p.stat().st_mtime_ns) for p in tmp_path.iterdir()) == before
    with pytest.raises(PeFormatError):
        read_sections(b"MZ" + bytes(62))


def _object_with(section_name: str, data: bytes) -> bytearray:
    """An x64 COFF object of one section whose data ends the file (16-byte data: no padding after it)."""
    assert len(data) % 16 == 0
    return bytearray(make_pe([(section_name, data)], image=False))


def test_a_section_ending_one_byte_past_the_file_is_an_error():
    """The bound is exact: a section whose data ends at the end of the file is read; one byte more is a
    PeFormatError naming the section."""
    obj = _object_with(".nv_fatb", tiny_fatbin())
    assert [(s.name, s.size) for s in read_sections(bytes(obj))] == [(".nv_fatb", 80)]
    struct.pack_into("<I", obj, 20 + 16, 81)  # SizeOfRawData of section 0
    with pytest.raises(PeFormatError, match="section 0 .* runs past the end"):
        read_sections(bytes(obj))


def test_a_section_table_cut_by_one_byte_is_an_error():
    """A section table that ends at the end of the file is read; one byte short of it is a PeFormatError (never a
    struct.error from reading the last row)."""
    table = struct.pack("<HHIIIHH", 0x8664, 2, 0, 0, 0, 0, 0) + struct.pack("<8sIIIIIIHHI", b".bss", 8, 0, 0, 0, 0,
                                                                              0, 0, 0, 0x80) * 2  # fmt: skip
    assert [s.name for s in read_sections(table)] == [".bss", ".bss"]
    with pytest.raises(PeFormatError, match="section table of 2 entries"):
        read_sections(table[:-1])


def test_a_long_name_at_the_end_of_the_string_table_is_an_error():
    """/N names offset N of the string table, whose first 4 bytes are its size: N equal to the size points past it
    (an error); N = size - 1 is the table's last byte (its NUL: an empty name)."""
    obj = _object_with("__nv_relfatbin", tiny_fatbin())
    (size,) = struct.unpack_from("<I", obj, len(obj) - 19)  # 4 + len("__nv_relfatbin\0")
    assert size == 19 and read_sections(bytes(obj))[0].name == "__nv_relfatbin"
    obj[20:28] = b"/18".ljust(8, b"\0")
    assert read_sections(bytes(obj))[0].name == ""
    obj[20:28] = b"/19".ljust(8, b"\0")
    with pytest.raises(PeFormatError, match="points outside the string table"):
        read_sections(bytes(obj))


def test_a_registration_record_pointing_at_a_section_end_is_an_error():
    """A .nvFatBi record that points to the first address after .nv_fatb's bytes is outside every section (the
    next section starts a page later), even when the file holds a fatbin right there."""
    fb = tiny_fatbin()
    good = make_pe([(".nv_fatb", fb), (".rdata", fb)], wrappers_to=[(".nv_fatb", 0)])
    assert [f.section for f in iter_fatbins(good)] == [".nv_fatb"]
    bad = make_pe([(".nv_fatb", fb), (".rdata", fb)], wrappers_to=[(".nv_fatb", len(fb))])
    with pytest.raises(FatbinFormatError, match="outside the file's sections"):
        list(iter_fatbins(bad))
