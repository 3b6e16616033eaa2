# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""ar archives (static libraries) against cuobjdump and GNU ar, hostile ones (docs/security.md), and the rule that
nothing is passed over silently: recognised but unreadable is a row, known but not read is counted."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_testing import cli_main
from container_testing import ar_header, make_ar
from cuda_fatbin import FatbinFormatError, detect, iter_fatbins, read_fatbin, scan
from cuda_fatbin._ar import MAX_NAME, THIN, list_members, read_member
from cuda_fatbin._archive import ArchiveError
from test_hostile_reader import _ENTRY, tiny_fatbin

from fatbin_testing import listing, process_tmp


def kernel_fatbin() -> bytes:
    """A fatbin of one compute_80 PTX module that defines a kernel (what ``tiny_fatbin``'s empty module lacks)."""
    ptx = b".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n"
    ptx += bytes(-len(ptx) % 8)
    entry = _ENTRY.pack(1, 0x101, 64, len(ptx), 0, 0, 0, 8, 80, 0, 0, 0x11, 0, 0) + ptx
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(entry)) + entry


# ka.o: whole-program SASS + PTX; the long names: -rdc objects (__nv_relfatbin), names over 15 bytes (GNU "//")
_SOURCES = {
    "ka": ("-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=compute_90"),
    "a_member_name_longer_than_sixteen": ("-rdc=true", "-gencode=arch=compute_75,code=sm_75"),
    "another_long_member_name_kernels": ("-gencode=arch=compute_86,code=[sm_86,compute_86]", "-arch=sm_120"),
}


@pytest.fixture(scope="module")
def objects(needs_nvcc) -> dict[str, bytes]:
    """Three nvcc objects (``nvcc -c``), by member name."""
    root = process_tmp("ar-objects")
    out = {}
    for stem, flags in _SOURCES.items():
        src = root / f"{stem}.cu"
        src.write_text(f'extern "C" __global__ void {stem}(float* p) {{ p[0] = 1; }}\n')
        subprocess.run([needs_nvcc, "-c", *flags, str(src), "-o", str(root / f"{stem}.o")], check=True, timeout=300)
        out[f"{stem}.o"] = (root / f"{stem}.o").read_bytes()
    return out


@pytest.fixture(scope="module")
def libk(objects, tmp_path_factory) -> Path:
    """``ar rcs libk.a`` of the objects: a GNU symbol table, a long-name table, three members."""
    ar = shutil.which("ar")
    if ar is None:
        pytest.skip("GNU ar not on PATH")
    root = tmp_path_factory.mktemp("ar")
    for name, data in objects.items():
        (root / name).write_bytes(data)
    subprocess.run([ar, "rcs", "libk.a", *objects], cwd=root, check=True)
    return root / "libk.a"


def _cuobjdump_members(cuobjdump_path: str, path: Path) -> dict[str, list[tuple[str, str]]]:
    out = subprocess.run([cuobjdump_path, "-lelf", "-lptx", str(path)], capture_output=True, text=True, check=True)
    members: dict[str, list[tuple[str, str]]] = {}
    for block in re.split(r"^member ", out.stdout, flags=re.M)[1:]:
        head, _, body = block.partition("\n")
        members[head.rstrip(":").rsplit(":", 1)[1]] = listing(body)
    return members


def _ours(path: Path) -> dict[str, list[tuple[str, str]]]:
    out = {}
    for m in list_members(str(path)):
        fatbins = iter_fatbins(read_member(str(path), m))  # relocatable=None: cuobjdump's rule, per member
        out[m.name] = [(e.kind, str(e.arch).rstrip("f")) for fb in fatbins for e in fb.iter_entries()]
    return out


def test_an_archive_of_nvcc_objects_lists_exactly_cuobjdumps_entries(libk, cuobjdump_path):
    """Issue 48: "neither a fatbin nor an ELF file". Each member, named as cuobjdump names it, with its entries."""
    theirs = _cuobjdump_members(cuobjdump_path, libk)
    assert sorted(theirs) == sorted(f"{s}.o" for s in _SOURCES)
    assert _ours(libk) == theirs


@pytest.mark.parametrize("style", ["gnu", "bsd"])
def test_gnu_and_bsd_archives_of_the_same_objects_list_the_same(objects, tmp_path, style, cuobjdump_path):
    """Long names as GNU ar writes them ("//" table, "/0") and as BSD ar does ("#1/N" before the data), each behind a
    symbol table that is not a member. GNU ar names the members as we do; cuobjdump reads the GNU archive (and
    says a BSD one "does not contain device code"), whose entries the BSD archive's equal."""
    ar = shutil.which("ar")
    if ar is None:
        pytest.skip("GNU ar not on PATH")
    path = tmp_path / f"lib{style}.a"
    path.write_bytes(make_ar(list(objects.items()), style=style))
    names = subprocess.run([ar, "t", str(path)], capture_output=True, text=True, check=True).stdout.split()
    assert [m.name for m in list_members(str(path))] == names == list(objects)
    gnu = tmp_path / "libgnu.a"
    gnu.write_bytes(make_ar(list(objects.items()), style="gnu"))
    assert _ours(path) == _cuobjdump_members(cuobjdump_path, gnu)
    assert [read_member(str(path), m) for m in list_members(str(path))] == list(objects.values())


def test_scan_and_inspect_name_the_members(libk, cuobjdump_path):
    """scan: one row per member with device code, ``libk.a::ka.o``; inspect reads the archive and such a path."""
    report = scan([libk], gpus="80", max_workers=1)
    assert [b.path for b in report.binaries] == [f"{libk}::{s}.o" for s in sorted(_SOURCES)]
    assert all(b.archive == str(libk) and b.member == Path(b.path).name.split("::")[1] for b in report.binaries)
    assert report.files_read == 3
    result = cli_main("inspect", "--json", libk, check=0)
    files = json.loads(result.stdout)["files"]
    assert [f["path"] for f in files] == [f"{libk}::{s}.o" for s in _SOURCES]
    one = json.loads(cli_main("inspect", "--json", f"{libk}::ka.o", check=0).stdout)["files"]
    assert [(e["kind"], e["arch"]) for fb in one[0]["fatbins"] for e in fb["entries"]] == [
        ("elf", "sm_80"),
        ("ptx", "sm_90"),
    ]


def test_a_thin_archive_is_refused_with_its_reason(objects, tmp_path):
    """A thin archive names its members' files: refused (an error row, exit 1), never passed over."""
    ar = shutil.which("ar")
    if ar is None:
        pytest.skip("GNU ar not on PATH")
    for name, data in objects.items():
        (tmp_path / name).write_bytes(data)
    subprocess.run([ar, "rcsT", "libthin.a", *objects], cwd=tmp_path, check=True)
    with pytest.raises(ArchiveError, match="thin archive"):
        list_members(str(tmp_path / "libthin.a"))
    report = scan([tmp_path / "libthin.a"], gpus="80", max_workers=1)
    [row] = report.binaries
    assert THIN in row.error and not report.covered
    result = cli_main("inspect", tmp_path / "libthin.a", check=1)
    assert "thin archive" in result.stderr


def _bad_archives() -> dict[str, bytes]:
    fb = tiny_fatbin()
    good = make_ar([("k.o", fb), ("a_long_member_name.o", fb)])
    return {
        "cut in a header": good[: -len(fb) - 30],
        "a member past the end": good[: -len(fb)] + fb[:-8],
        "a member one byte past the end": b"!<arch>\n" + ar_header(b"k.o/", len(fb) + 1) + fb,
        "no end marker": good.replace(b"`\n", b"xx", 2),
        "a size that is no number": b"!<arch>\n" + ar_header(b"k.o/", 4)[:48] + b"0x10".ljust(10) + b"`\n" + fb,
        "a long name outside the table": b"!<arch>\n" + ar_header(b"/999", len(fb)) + fb,
        "a BSD name longer than its member": b"!<arch>\n" + ar_header(b"#1/100", 8) + b"k.o".ljust(8, b"\0"),
        "a BSD name longer than its member, before another": b"!<arch>\n"
        + ar_header(b"#1/20", 8)
        + b"k.o".ljust(8, b"\0")
        + good[8:],
        "a long name that is empty": b"!<arch>\n" + ar_header(b"//", 4) + b"/\n/\n" + ar_header(b"/2", len(fb)) + fb,
        "a header name of spaces": b"!<arch>\n" + ar_header(b"", len(fb)) + fb,
    }


@pytest.mark.parametrize("what", sorted(_bad_archives()))
def test_a_bad_archive_is_one_error_row_and_the_scan_goes_on(tmp_path, what):
    """Each malformed archive is an ArchiveError naming the problem, and in scan one row; the next file is read."""
    (tmp_path / "bad.a").write_bytes(_bad_archives()[what])
    (tmp_path / "good.a").write_bytes(make_ar([("k.o", tiny_fatbin())]))
    with pytest.raises(ArchiveError):
        list_members(str(tmp_path / "bad.a"))
    report = scan([tmp_path], gpus="80", max_workers=1)
    assert [(b.path.split("/")[-1], bool(b.error)) for b in report.binaries] == [
        ("bad.a", True),
        ("good.a::k.o", False),
    ]
    assert report.binaries[0].error.startswith("ArchiveError: ")


def test_padding_after_the_last_member_is_no_error(tmp_path):
    """ar pads an odd-sized member with a newline; tools that write it twice leave a lone newline: not a member."""
    path = tmp_path / "libk.a"
    path.write_bytes(make_ar([("k.o", tiny_fatbin() + b"x")]) + b"\n")
    assert [(m.name, m.size) for m in list_members(str(path))] == [("k.o", 81)]


# --- docs/security.md ---


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(st.data())
def test_fuzzed_archives_raise_only_archive_errors(tmp_path, data):
    """Any header bytes changed: members whose data lie in the file, or ArchiveError; each read gives the bytes."""
    fb = tiny_fatbin()
    raw = bytearray(
        make_ar([("k.o", fb), ("a_long_member_name.o", fb)], style=data.draw(st.sampled_from(["gnu", "bsd"])))
    )
    headers = [m.start() for m in re.finditer(rb"`\n", bytes(raw))]
    for _ in range(data.draw(st.integers(1, 6))):
        end = data.draw(st.sampled_from(headers))
        raw[data.draw(st.integers(max(8, end - 58), end + 1))] = data.draw(st.integers(0, 255))
    path = tmp_path / "fuzz.a"
    path.write_bytes(bytes(raw))
    try:
        members = list_members(str(path), head=8)
    except ArchiveError:
        return
    for m in members:
        assert m.data_offset + m.size <= len(raw) and len(m.name.encode("utf-8", "surrogateescape")) <= MAX_NAME
        assert read_member(str(path), m) == bytes(raw[m.data_offset : m.data_offset + m.size])


def test_many_members_and_names_into_one_unterminated_table_are_linear(tmp_path):
    """20,000 members whose GNU names all point into one 1 MiB long-name table without a terminator: each name
    is cut at MAX_NAME bytes, the listing takes seconds, not the hours of reading the table once per member."""
    table = b"x" * (1 << 20)
    member = ar_header(b"/0", 2) + b"ok"
    path = tmp_path / "bomb.a"
    path.write_bytes(b"!<arch>\n" + ar_header(b"//", len(table)) + table + member * 20_000)
    start = time.perf_counter()
    members = list_members(str(path))
    assert len(members) == 20_000 and {len(m.name) for m in members} == {MAX_NAME}
    assert time.perf_counter() - start < 10  # 1.2 s here (a loaded 2-core host); 20,000 x 1 MiB read otherwise


def test_a_member_declaring_more_than_the_file_is_refused_before_any_read(tmp_path):
    """A size field of 9,999,999,999 bytes: refused by the file's size, nothing allocated for it."""
    path = tmp_path / "big.a"
    path.write_bytes(b"!<arch>\n" + ar_header(b"k.o/", 9_999_999_999) + b"\x7fELF" + bytes(60))
    with pytest.raises(ArchiveError, match="runs past the end"):
        list_members(str(path))


def test_member_names_reach_the_terminal_escaped(tmp_path):
    """A member name with an escape sequence and a byte that is not UTF-8: escaped in scan's and inspect's text."""
    path = tmp_path / "libk.a"
    member = b"\x1b[31mred\xff.o" + kernel_fatbin()
    path.write_bytes(b"!<arch>\n" + ar_header(b"#1/11", len(member)) + member)  # a BSD name
    [m] = list_members(str(path))
    assert m.name == "\x1b[31mred\udcff.o"
    for args in (("scan", "--gpu", "75", "-j", "1", path), ("inspect", path)):  # 7.5: listed as not covered
        result = cli_main(*args)
        assert "\x1b" not in result.stdout + result.stderr and "\\x1b[31mred\\xff.o" in result.stdout


def test_reading_an_archive_never_writes(libk):
    """Listing, scanning and inspecting an archive leaves its folder as it was."""
    before = sorted((p.name, p.stat().st_mtime_ns) for p in libk.parent.iterdir())
    scan([libk], gpus="80", max_workers=1)
    cli_main("inspect", libk)
    assert sorted((p.name, p.stat().st_mtime_ns) for p in libk.parent.iterdir()) == before


# --- no silent pass ---

_MACHO = bytes.fromhex("cffaedfe0c000001") + bytes(56)


def test_formats_we_do_not_read_are_counted_by_kind(tmp_path):
    """A Mach-O file and one in a wheel, and an ar archive in a wheel (not opened), are counted by kind and shown."""
    import zipfile

    (tmp_path / "libk.dylib").write_bytes(_MACHO)
    (tmp_path / "Kernels.class").write_bytes(bytes.fromhex("cafebabe00000041") + bytes(56))  # Java: not Mach-O
    with zipfile.ZipFile(tmp_path / "w-1.0-py3-none-any.whl", "w") as zf:
        zf.writestr("w/libk.dylib", _MACHO)
        zf.writestr("w/libstatic.a", make_ar([("k.o", tiny_fatbin())]))
    report = scan([tmp_path], gpus="80", max_workers=1)
    assert report.skipped == {"Mach-O": 2, "ar in an archive": 1} and report.binaries == []
    result = cli_main("scan", "--gpu", "80", tmp_path, check=0)
    assert "not read: 2 Mach-O files, 1 ar archive inside an archive" in result.stdout


def test_fail_if_empty(tmp_path):
    """For CI: a scan that finds no device code fails with --fail-if-empty (text and JSON), passes without it."""
    (tmp_path / "notes.txt").write_text("nothing here\n")
    assert cli_main("scan", "--gpu", "80", tmp_path, check=0).returncode == 0
    result = cli_main("scan", "--gpu", "80", "--fail-if-empty", tmp_path, check=1)
    assert "--fail-if-empty" in result.stderr
    assert cli_main("scan", "--gpu", "80", "--fail-if-empty", "--json", tmp_path, check=1).returncode == 1
    (tmp_path / "k.fatbin").write_bytes(tiny_fatbin())  # compute_80 PTX: covered
    assert cli_main("scan", "--gpu", "80", "--fail-if-empty", tmp_path, check=0).returncode == 0


@pytest.mark.parametrize("lead", [b"MZ\x90\x00", b"\x00\x01\x02\x03", b"\xcf\xfa\xed\xfe", b"!<arch>\n"])
def test_ptx_is_never_sniffed_out_of_binary_data(lead):
    """PTX directives after binary bytes (a DLL's stored PTX): not PTX for detect, read_fatbin or iter_fatbins."""
    data = lead + bytes(60) + b"\n.version 9.0\n.target sm_90\n.address_size 64\n"
    with pytest.raises(ValueError):
        detect(data)
    with pytest.raises(FatbinFormatError):
        read_fatbin(data)
    with pytest.raises(FatbinFormatError):
        list(iter_fatbins(data))
    text = b".version 9.0\n.target sm_90\n.address_size 64\n\0\0\0"  # as a PTX entry's data() ends
    assert detect(text).kind == "ptx" and read_fatbin(text).standalone


def test_windows_long_names_end_with_nul(tmp_path):
    """A .lib's long-name table ends names with NUL, not "/\\n": each name stops there."""
    table = b"first_long_member_name.obj\0second_long_member_name.obj\0"
    fb = tiny_fatbin()
    data = b"!<arch>\n" + ar_header(b"/", 4) + bytes(4) + ar_header(b"/", 4) + bytes(4) + ar_header(b"//", len(table))
    data += table + b"\n" + ar_header(b"/0", len(fb)) + fb + ar_header(b"/27", len(fb)) + fb  # 55 bytes: padded
    path = tmp_path / "k.lib"
    path.write_bytes(data)
    assert [m.name for m in list_members(str(path))] == ["first_long_member_name.obj", "second_long_member_name.obj"]
    assert [b.member for b in scan([path], gpus="80", max_workers=1).binaries] == [
        m.name for m in list_members(str(path))
    ]
