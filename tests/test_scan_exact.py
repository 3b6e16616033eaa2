# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""scan, in process and exactly: which distribution owns each binary of an installed environment, what the
report says about the scan itself, and the rows of archive members that are not read (docs/scan.md)."""

from __future__ import annotations

import json
import os
import site
import struct
import sysconfig
import zipfile
from pathlib import Path

import pytest

from cuda_fatbin import Arch, _inputs, _scan, build_fatbin, scan

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def fatbin() -> bytes:
    return build_fatbin([str(DATA / "nvrtc129_sm_80.cubin")])


def installed(site_dir: Path, name: str, version: str, files: dict[str, bytes], record: str | None = None) -> None:
    """A distribution installed into ``site_dir`` as pip leaves it: its files, METADATA and a RECORD."""
    for rel, data in files.items():
        (site_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (site_dir / rel).write_bytes(data)
    info = site_dir / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "RECORD").write_text(record if record is not None else "".join(f"{rel},,\n" for rel in files))


def owners(report: _scan.ScanReport, root: Path) -> dict[str, str | None]:
    return {os.path.relpath(b.path, root): b.distribution for b in report.binaries}


def test_every_binary_of_an_installed_environment_is_named_by_its_distribution(fatbin, tmp_path):
    site_dir = tmp_path / "site"
    installed(site_dir, "My_Pkg", "1.0", {
        "mypkg/libk.so.1": fatbin, "mypkg/kernels.bin": fatbin, "mypkg/tool": fatbin, "mypkg/k.cubin": fatbin,
        "mypkg/k.dll": fatbin, "mypkg/notes.txt": b"text, not a binary"})  # fmt: skip
    installed(site_dir, "other", "2.0", {"other/k.fatbin": fatbin})
    installed(site_dir, "broken", "3.0", {"broken/k.fatbin": fatbin}, record="broken/k\0.fatbin,,\n")
    (site_dir / "stray.fatbin").write_bytes(fatbin)  # no RECORD lists it
    report = scan([site_dir], gpus="80", max_workers=1)
    assert owners(report, site_dir) == {
        "mypkg/libk.so.1": "my-pkg 1.0", "mypkg/kernels.bin": "my-pkg 1.0", "mypkg/tool": "my-pkg 1.0",
        "mypkg/k.cubin": "my-pkg 1.0", "mypkg/k.dll": "my-pkg 1.0", "other/k.fatbin": "other 2.0",
        "broken/k.fatbin": None, "stray.fatbin": None,
    }  # fmt: skip
    link = tmp_path / "env"
    link.symlink_to(site_dir)  # the environment reached through a link: the same owners
    assert owners(scan([link], gpus="80", max_workers=1), link) == owners(report, site_dir)


def test_a_wheel_and_a_folder_scanned_together_name_both(fatbin, tmp_path):
    site_dir = tmp_path / "site"
    installed(site_dir, "inst", "1.0", {"inst/k.fatbin": fatbin})
    whl = tmp_path / "demo_pkg-2.1-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr("demo_pkg/k.fatbin", fatbin)
        z.writestr("demo_pkg/small.bin", fatbin[:15])  # under 16 bytes: no binary
        z.writestr("demo_pkg/exactly16.bin", fatbin[:16])  # a fatbin's header alone: read, and found short
    report = scan([whl, site_dir], gpus="80", max_workers=1)
    got = {(b.archive, b.member, b.distribution) for b in report.binaries}
    assert (str(whl), "demo_pkg/k.fatbin", "demo-pkg 2.1") in got
    assert (None, None, "inst 1.0") in got
    assert report.files_read == 3  # the wheel's two members of 16 bytes or more, and the installed file


def test_unreadable_members_are_rows_naming_the_archive_and_member(fatbin, tmp_path):
    whl = tmp_path / "w-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr("w/inner.zip", b"PK\x05\x06" + bytes(18))
        z.writestr("w/k.fatbin", fatbin)
    report = scan([whl], gpus="80", max_workers=1)
    [row] = report.unreadable
    assert (row.path, row.archive, row.member, row.distribution) == (
        f"{whl}::w/inner.zip", str(whl), "w/inner.zip", "w 1.0")  # fmt: skip
    assert row.error == f"ArchiveError: {_inputs.NESTED}"


def test_the_report_records_the_driver_as_given(fatbin, tmp_path):
    (tmp_path / "k.fatbin").write_bytes(fatbin)
    assert scan([tmp_path], gpus="80", driver="12.4", max_workers=1).driver == "12.4"
    assert scan([tmp_path], gpus="80", max_workers=1).driver is None


def test_progress_is_told_each_binary_with_the_count(fatbin, tmp_path):
    for name in ("a.fatbin", "b.fatbin"):
        (tmp_path / name).write_bytes(fatbin)
    calls: list[tuple[int, int, str]] = []
    scan([tmp_path], gpus="80", max_workers=1, progress=lambda done, total, path: calls.append((done, total, path)))
    assert sorted(calls) == [(1, 2, calls[0][2]), (2, 2, calls[1][2])]
    assert {c[2] for c in calls} == {str(tmp_path / "a.fatbin"), str(tmp_path / "b.fatbin")}


def test_misuse_is_refused_before_anything_is_read(tmp_path):
    with pytest.raises(ValueError) as info:
        scan([tmp_path], gpus=[])
    assert str(info.value) == "scan needs at least one GPU (gpus=)"
    with pytest.raises(ValueError, match="driver"):
        scan([tmp_path], gpus="80", driver="bogus")
    for bad in (0, True, 1.5):
        with pytest.raises(ValueError) as info:
            scan([tmp_path], gpus="80", max_workers=bad)  # type: ignore[arg-type]
        assert str(info.value) == f"max_workers must be a positive int; got {bad!r}"


def test_default_paths_are_this_environments_site_packages_once_each():
    want = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *site.getsitepackages()]
    expected: list[str] = []
    for p in want:
        if os.path.isdir(p) and os.path.realpath(p) not in {os.path.realpath(e) for e in expected}:
            expected.append(p)
    assert _scan.default_paths() == expected and expected


def entry_header(kind: int, major: int, minor: int, sm: int) -> bytes:
    """An entry of an empty payload (docs/formats.md): kind 1 PTX, 2 ELF; the version; the SM."""
    return struct.pack("<HHIQIIHHIIIQQQ", kind, 0x0101, 64, 0, 0, 0, minor, major, sm, 0, 0, 0x11, 0, 0)


def test_a_binarys_entries_isas_and_compression_are_counted_exactly(tmp_path):
    body = entry_header(1, 10, 0, 80) + entry_header(1, 9, 0, 80) + entry_header(2, 1, 8, 1)  # sm_1: no arch
    path = tmp_path / "k.fatbin"
    path.write_bytes(struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body)
    report = _scan.scan_binary(str(path), None, [Arch.parse("sm_80")], None, True)
    assert (report.entries, report.ptx_isa, report.compression, report.fatbins) == (
        {"elf sm_1": 1, "ptx sm_80": 2}, ["9.0", "10.0"], ["none"],  # ISAs in numeric order
        {"registered": 1, "relocatable": 0, "embedded": 0},
    )  # fmt: skip


def test_an_error_names_the_file_the_user_knows(fatbin, tmp_path, monkeypatch):
    """The reader reads the descriptor judged (``/proc/self/fd/N``); an error names the file instead."""
    path = tmp_path / "k.fatbin"
    path.write_bytes(fatbin)

    def failing(source: object, **kwargs: object) -> None:
        raise ValueError("/proc/self/fd/9: not an ELF file (/proc/self/fd/9 at 0x0)")

    monkeypatch.setattr(_scan, "iter_fatbins", failing)
    report = _scan.scan_binary(str(path), None, [Arch.parse("sm_80")], None, True)
    assert report.error == f"ValueError: {path}: not an ELF file ({path} at 0x0)"


def test_the_report_as_json_follows_its_schema(fatbin, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(_scan.__file__).parent / "schemas" / "scan.json").read_text())
    site_dir = tmp_path / "site"
    installed(site_dir, "inst", "1.0", {"inst/k.fatbin": fatbin, "inst/cut.fatbin": fatbin[:40]})
    whl = tmp_path / "w-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr("w/inner.zip", b"PK\x05\x06" + bytes(18))
        z.writestr("w/k.fatbin", fatbin)
    doc = {"schema": 1, **scan([site_dir, whl], gpus=["80", "90"], driver="13.0", max_workers=1).to_dict()}  # as --json
    jsonschema.Draft202012Validator(schema).validate(doc)
    keys = set(schema["properties"]["binaries"]["items"]["required"])
    assert all(set(b) == keys for b in doc["binaries"]) and len(doc["binaries"]) == 4
    assert set(doc) == set(schema["required"])


def test_uncovered_answers_only_for_the_gpus_scanned(fatbin, tmp_path):
    (tmp_path / "k.fatbin").write_bytes(fatbin)  # sm_80 SASS
    report = scan([tmp_path], gpus=["80", "7.5"], max_workers=1)
    assert [b.path for b in report.uncovered("sm_75")] == [str(tmp_path / "k.fatbin")] and not report.uncovered(80)
    with pytest.raises(ValueError) as info:
        report.uncovered("9.0")  # never judged: an empty list would say it is covered
    assert str(info.value) == (
        "compute capability 9.0 was not scanned (this scan judged 7.5, 8.0): scan again with it in gpus=")  # fmt: skip


def dying_scan_item(item: _scan._Item, *args: object) -> _scan.BinaryReport:
    """_scan_item, except that the process reading a member named ``die`` dies (as one dies of SIGBUS)."""
    if "die" in item.shown:
        os._exit(3)
    return _scan.original_scan_item(item, *args)  # type: ignore[attr-defined, no-any-return]


def test_a_binary_whose_reading_process_dies_is_a_row_of_its_own(fatbin, tmp_path, monkeypatch):
    whl = tmp_path / "w-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr("w/die.fatbin", fatbin)
        z.writestr("w/ok.fatbin", fatbin)
    (tmp_path / "ok.fatbin").write_bytes(fatbin)
    monkeypatch.setattr(_scan, "original_scan_item", _scan._scan_item, raising=False)
    monkeypatch.setattr(_scan, "_scan_item", dying_scan_item)  # the pool's workers are forked: they see it
    report = scan([whl, tmp_path / "ok.fatbin"], gpus="80", max_workers=2)
    [row] = report.unreadable
    assert (row.path, row.archive, row.member, row.error) == (
        f"{whl}::w/die.fatbin", str(whl), "w/die.fatbin",
        "the process reading it died (a file that changed while read?)")  # fmt: skip
    read = sorted(b.path for b in report.binaries if not b.error)
    assert read == sorted([f"{whl}::w/ok.fatbin", str(tmp_path / "ok.fatbin")])
    assert all(b.coverage["8.0"]["status"] == "SASS exact" for b in report.binaries if not b.error)


def test_a_single_path_is_misuse_not_its_characters(tmp_path):
    with pytest.raises(TypeError) as info:
        scan(str(tmp_path), gpus="80")  # type: ignore[arg-type]
    assert str(info.value) == f"paths must be a list of paths; got one path: scan([{str(tmp_path)!r}], ...)"
    with pytest.raises(TypeError):
        scan(tmp_path, gpus="80")  # type: ignore[arg-type]


def test_dist_info_files_that_are_not_plain_files_or_lack_a_name_own_nothing(fatbin, tmp_path):
    """A FIFO RECORD or METADATA made scan wait forever (importlib.metadata opens with a plain open());
    a METADATA without Name or Version named the owner "none 1.0" or "foo None"."""
    site_dir = tmp_path / "site"
    installed(site_dir, "fifo_record", "1.0", {"a/k.fatbin": fatbin})
    os.unlink(site_dir / "fifo_record-1.0.dist-info" / "RECORD")
    os.mkfifo(site_dir / "fifo_record-1.0.dist-info" / "RECORD")
    installed(site_dir, "fifo_meta", "1.0", {"b/k.fatbin": fatbin})
    os.unlink(site_dir / "fifo_meta-1.0.dist-info" / "METADATA")
    os.mkfifo(site_dir / "fifo_meta-1.0.dist-info" / "METADATA")
    installed(site_dir, "noname", "1.0", {"c/k.fatbin": fatbin})
    (site_dir / "noname-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nVersion: 1.0\n")
    installed(site_dir, "noversion", "1.0", {"d/k.fatbin": fatbin})
    (site_dir / "noversion-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: noversion\n")
    installed(site_dir, "zero", "1.0", {"e/k.fatbin": fatbin})
    os.unlink(site_dir / "zero-1.0.dist-info" / "RECORD")
    (site_dir / "zero-1.0.dist-info" / "RECORD").symlink_to("/dev/zero")
    installed(site_dir, "good", "2.0", {"f/k.fatbin": fatbin})
    report = scan([site_dir], gpus="80", max_workers=1)
    assert owners(report, site_dir) == {
        "a/k.fatbin": None, "b/k.fatbin": None, "c/k.fatbin": None, "d/k.fatbin": None, "e/k.fatbin": None,
        "f/k.fatbin": "good 2.0"}  # fmt: skip


def test_a_binary_named_through_a_link_is_owned_by_the_file_it_links_to(fatbin, tmp_path):
    site_dir = tmp_path / "site"
    installed(site_dir, "lib", "1.0", {"lib/libk.so.1": fatbin})
    (tmp_path / "libk.so").symlink_to(site_dir / "lib" / "libk.so.1")  # named by the user: followed
    report = scan([tmp_path / "libk.so", site_dir], gpus="80", max_workers=1)
    [b] = report.binaries  # each real file once: the name the user gave
    assert (b.path, b.distribution) == (str(tmp_path / "libk.so"), "lib 1.0")


@pytest.mark.parametrize(
    ("name", "owner"),
    [("demo_pkg-2.1-py3-none-any.whl", "demo-pkg 2.1"), ("Demo.Pkg-2.1-1-cp312-cp312-linux_x86_64.WHL", "demo-pkg 2.1"),
     ("my-tool.whl", None), ("foo-1.0.zip", None), ("foo-1.0-py3-none.whl", None)],
)  # fmt: skip
def test_a_wheel_is_named_by_its_file_name_only_when_it_is_one(fatbin, tmp_path, name, owner):
    with zipfile.ZipFile(tmp_path / name, "w") as z:
        z.writestr("p/k.fatbin", fatbin)
    [b] = scan([tmp_path / name], gpus="80", max_workers=1).binaries
    assert b.distribution == owner


def test_a_distribution_is_as_covered_as_its_worst_binary(fatbin, tmp_path):
    site_dir = tmp_path / "site"
    sm75 = build_fatbin([str(DATA / "nvrtc129_sm_75.cubin")])
    installed(site_dir, "mixed", "1.0", {"m/k80.fatbin": fatbin, "m/k75.fatbin": sm75})
    installed(site_dir, "broken", "1.0", {"b/k.fatbin": fatbin, "b/cut.fatbin": fatbin[:40]})
    report = scan([site_dir], gpus=["80", "86"], max_workers=1)
    by = {d["distribution"]: d for d in report.distributions()}
    assert by["mixed 1.0"] == {"distribution": "mixed 1.0", "binaries": 2, "unreadable": 0,
                               "coverage": {"8.0": "no entry", "8.6": "no entry"}}  # fmt: skip
    assert by["broken 1.0"]["coverage"] == {"8.0": "unreadable", "8.6": "unreadable"}
    assert by["broken 1.0"]["unreadable"] == 1


def _record_line(rel: str, data: bytes, *, digest: bytes | None = None) -> str:
    import base64
    import hashlib

    value = base64.urlsafe_b64encode(hashlib.sha256(data if digest is None else digest).digest()).decode().rstrip("=")
    return f"{rel},sha256={value},{len(data)}\n"


def test_a_binary_belongs_to_the_distribution_whose_record_owns_it_not_the_last_listed(fatbin, tmp_path):
    """A RECORD that lists another distribution's binary won (the last dist-info in name order)."""
    site_dir = tmp_path / "site"
    rel = "owner/lib/libk.so"
    installed(site_dir, "owner", "1.0", {rel: fatbin}, record=_record_line(rel, fatbin))
    # later in name order: a line without a hash, and a line whose hash is of other bytes
    installed(site_dir, "zzz_nohash", "1.0", {}, record=f"{rel},,\n")
    installed(site_dir, "zzz_wrong", "1.0", {}, record=_record_line(rel, fatbin, digest=b"other bytes"))
    installed(site_dir, "aaa_nohash", "1.0", {}, record=f"{rel},,\n")  # earlier in name order
    report = scan([site_dir], gpus="80", max_workers=1)
    assert owners(report, site_dir) == {rel: "owner 1.0"}


def test_a_record_line_whose_hash_matches_but_whose_size_does_not_is_no_match(fatbin, tmp_path):
    """Hash and size both: a line with the right hash and another size is not that file's (a claim as weak as
    a wrong hash), so the owner's line wins even where the other distribution is first in name order."""
    site_dir = tmp_path / "site"
    rel = "owner/k.fatbin"
    installed(site_dir, "owner", "1.0", {rel: fatbin}, record=_record_line(rel, fatbin))
    wrong_size = _record_line(rel, fatbin).replace(f",{len(fatbin)}\n", f",{len(fatbin) + 1}\n")
    installed(site_dir, "aaa", "1.0", {}, record=wrong_size)
    assert owners(scan([site_dir], gpus="80", max_workers=1), site_dir) == {rel: "owner 1.0"}


def test_a_line_naming_the_file_itself_outweighs_being_inside_the_site_folder(fatbin, tmp_path):
    """Rule 2's order: the file itself (even reached with ``..``) over a symlink to it (even inside)."""
    site_dir = tmp_path / "site"
    rel = "pkg/k.fatbin"
    (site_dir / "pkg").mkdir(parents=True)
    (site_dir / rel).write_bytes(fatbin)
    (site_dir / "alt").mkdir()
    (site_dir / "alt" / "k.fatbin").symlink_to("../pkg/k.fatbin")
    for info, name, line in (
        ("a-1.0.dist-info", "alpha", "alt/k.fatbin,,\n"),  # a link, inside
        ("z-1.0.dist-info", "zeta", f"../site/{rel},,\n"),  # the file, reaching out
    ):
        (site_dir / info).mkdir()
        (site_dir / info / "METADATA").write_text(f"Name: {name}\nVersion: 1.0\n")
        (site_dir / info / "RECORD").write_text(line)
    assert owners(scan([site_dir], gpus="80", max_workers=1), site_dir) == {rel: "zeta 1.0"}


def test_two_versions_left_installed_attribute_the_file_to_the_one_whose_bytes_it_holds(fatbin, tmp_path):
    """foo-10.0 and foo-9.0 both listing foo/k.fatbin (a stale dist-info): the one whose RECORD hash matches."""
    site_dir = tmp_path / "site"
    rel = "foo/k.fatbin"
    installed(site_dir, "foo", "9.0", {rel: fatbin}, record=_record_line(rel, fatbin))
    installed(site_dir, "foo", "10.0", {}, record=_record_line(rel, fatbin + b"\0"))
    assert owners(scan([site_dir], gpus="80", max_workers=1), site_dir) == {rel: "foo 9.0"}
    (site_dir / rel).write_bytes(fatbin + b"\0")  # 10.0 installed over it
    assert owners(scan([site_dir], gpus="80", max_workers=1), site_dir) == {rel: "foo 10.0"}


def test_equal_claims_are_decided_by_path_then_by_name_whatever_the_folder_order(fatbin, tmp_path):
    site_dir = tmp_path / "site"
    rel = "pkg/k.fatbin"
    (site_dir / "pkg").mkdir(parents=True)
    (site_dir / rel).write_bytes(fatbin)
    (site_dir / "alt").mkdir()
    (site_dir / "alt" / "k.fatbin").symlink_to("../pkg/k.fatbin")
    for info, name in (("a-1.0.dist-info", "alpha"), ("z-1.0.dist-info", "zeta")):
        (site_dir / info).mkdir()
        (site_dir / info / "METADATA").write_text(f"Name: {name}\nVersion: 1.0\n")
        (site_dir / info / "RECORD").write_text(f"{rel},,\n")
    # both name the file itself, without hashes: the first name wins, not the last dist-info folder
    assert owners(scan([site_dir], gpus="80", max_workers=1), site_dir) == {rel: "alpha 1.0"}
    (site_dir / "a-1.0.dist-info" / "RECORD").write_text("alt/k.fatbin,,\n")  # a link to it: a weaker claim
    assert owners(scan([site_dir], gpus="80", max_workers=1), site_dir) == {rel: "zeta 1.0"}
    (site_dir / "a-1.0.dist-info" / "RECORD").write_text(_record_line("alt/k.fatbin", fatbin))  # but its bytes
    assert owners(scan([site_dir], gpus="80", max_workers=1), site_dir) == {rel: "alpha 1.0"}
