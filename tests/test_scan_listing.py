# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""What scan reads and how: the listing of a tree (every field of every item), the rows of what cannot be
read, symlinks the user names, the distributions that own files, where scan's processes are used
(docs/scan.md). In process and exact, so that a mutation of any of these is seen."""

from __future__ import annotations

import concurrent.futures as cf
import errno
import os
import struct
import sysconfig
import zipfile
from pathlib import Path

import pytest

from cuda_fatbin import Arch, _forked, _inputs, _owners, _scan, _walk, build_fatbin, scan
from cuda_fatbin._archive import NESTED

from fatbin_testing import run_tool

DATA = Path(__file__).parent / "data"
ELF16 = b"\x7fELF" + bytes(12)  # the smallest file read: 16 bytes that begin as ELF
REAL_POOL = cf.ProcessPoolExecutor


@pytest.fixture(scope="module")
def fatbin() -> bytes:
    return build_fatbin([str(DATA / "nvrtc129_sm_80.cubin")])


def ident(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return (st.st_dev, st.st_ino)


def items(listing: _inputs._Listing) -> list[tuple[str, str | None, int, tuple[int, int], bool, str | None]]:
    return [(i.path, i.member.name if i.member else None, i.size, i.identity, i.follow, i.error) for i in listing.items]


# --- the listing ---------------------------------------------------------------------------------------------


def test_a_tree_is_listed_file_by_file_with_sizes_identities_and_what_was_passed_over(fatbin, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "k.fatbin").write_bytes(fatbin)
    (tmp_path / "a" / "e16").write_bytes(ELF16)  # 16 bytes: read
    (tmp_path / "a" / "e15").write_bytes(ELF16[:15])  # 15: too short to hold anything, passed over
    (tmp_path / "a" / "text").write_bytes(b"not a binary, long enough to be read")
    (tmp_path / "b").mkdir()
    os.mkfifo(tmp_path / "b" / "f1")
    os.mkfifo(tmp_path / "b" / "f2")
    (tmp_path / "b" / "link").symlink_to(tmp_path / "a" / "k.fatbin")  # found in a folder: not followed
    listing = _scan._list_inputs([str(tmp_path)])
    assert items(listing) == [
        (str(tmp_path / "a" / "e16"), None, 16, ident(tmp_path / "a" / "e16"), False, None),
        (str(tmp_path / "a" / "k.fatbin"), None, len(fatbin), ident(tmp_path / "a" / "k.fatbin"), False, None),
    ]
    assert dict(listing.skipped) == {"not a regular file": 2, "symlink": 1}


def test_paths_the_user_names_are_followed_through_symlinks(fatbin, tmp_path):
    (tmp_path / "k.fatbin").write_bytes(fatbin)
    (tmp_path / "k.link").symlink_to(tmp_path / "k.fatbin")
    whl = tmp_path / "w-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr("w/k.fatbin", fatbin)
    (tmp_path / "w.link.whl").symlink_to(whl)
    listing = _scan._list_inputs([str(tmp_path / "k.link"), str(tmp_path / "w.link.whl")])
    [file, member] = listing.items
    assert (file.path, file.size, file.identity, file.follow, file.error) == (
        str(tmp_path / "k.link"), len(fatbin), ident(tmp_path / "k.fatbin"), True, None)  # fmt: skip
    assert (member.path, member.member.name, member.size, member.error) == (  # type: ignore[union-attr]
        str(tmp_path / "w.link.whl"), "w/k.fatbin", len(fatbin), None)  # fmt: skip
    report = scan([tmp_path / "k.link", tmp_path / "w.link.whl"], gpus="80", max_workers=1)
    assert [(b.path, b.error, b.coverage["8.0"]["status"]) for b in report.binaries] == [
        (str(tmp_path / "k.link"), None, "SASS exact"),
        (f"{tmp_path / 'w.link.whl'}::w/k.fatbin", None, "SASS exact"),
    ]


def test_a_named_path_that_does_not_exist_is_a_file_not_found_error(tmp_path):
    missing = tmp_path / "missing"
    with pytest.raises(FileNotFoundError) as e:
        scan([missing], gpus="80", max_workers=1)
    assert e.value.errno == errno.ENOENT
    assert e.value.strerror == f"cannot read {str(missing)!r}: No such file or directory"


def test_a_named_fifo_is_a_row_and_a_named_folder_symlink_is_walked(fatbin, tmp_path):
    os.mkfifo(tmp_path / "f")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "k.fatbin").write_bytes(fatbin)
    (tmp_path / "dl").symlink_to(tmp_path / "d")
    listing = _scan._list_inputs([str(tmp_path / "f"), str(tmp_path / "dl")])
    assert [(i.path, i.error) for i in listing.items] == [
        (str(tmp_path / "f"), "OSError: a FIFO, not a regular file; not read"),
        (str(tmp_path / "dl" / "k.fatbin"), None),
    ]
    report = scan([tmp_path / "f"], gpus="80", max_workers=1)
    assert [(b.path, b.archive, b.member, b.error) for b in report.binaries] == [
        (str(tmp_path / "f"), None, None, "OSError: a FIFO, not a regular file; not read")]  # fmt: skip


def test_each_file_that_cannot_be_opened_is_a_row_and_the_walk_goes_on(fatbin, tmp_path, monkeypatch):
    for name in ("a", "b", "c"):
        (tmp_path / name).write_bytes(fatbin)
    real = _inputs.open_input

    def refusing(path: str, *, follow: bool = True, dir_fd: int | None = None) -> tuple[int, os.stat_result]:
        assert follow is False  # found in a folder: never followed
        if path.endswith(("a", "b")):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real(path, follow=follow, dir_fd=dir_fd)

    monkeypatch.setattr(_inputs, "open_input", refusing)
    listing = _scan._list_inputs([str(tmp_path)])
    assert [(i.path, i.error) for i in listing.items] == [
        (str(tmp_path / "a"), "PermissionError: Permission denied"),
        (str(tmp_path / "b"), "PermissionError: Permission denied"),
        (str(tmp_path / "c"), None),
    ]


def test_a_file_that_fails_while_its_first_bytes_are_read_is_a_row(fatbin, tmp_path, monkeypatch):
    (tmp_path / "a").write_bytes(fatbin)
    (tmp_path / "b").write_bytes(fatbin)
    real = os.pread
    calls = []

    def failing(fd: int, n: int, offset: int) -> bytes:
        calls.append((n, offset))
        if len(calls) == 1:
            raise OSError(errno.EIO, "Input/output error")
        return real(fd, n, offset)

    monkeypatch.setattr(_scan.os, "pread", failing)
    listing = _scan._list_inputs([str(tmp_path)])
    assert [(i.path, i.error) for i in listing.items] == [
        (str(tmp_path / "a"), "OSError: Input/output error"), (str(tmp_path / "b"), None)]  # fmt: skip
    assert calls == [(64, 0), (64, 0)]  # the first bytes, all that says ELF, fatbin, PE, COFF, ar or Mach-O


def test_a_folder_that_cannot_be_listed_is_a_row_and_the_others_are_walked(fatbin, tmp_path, monkeypatch):
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "k.fatbin").write_bytes(fatbin)
    real = _walk._listdir

    def refusing(folder: str, listed_as: tuple[int, int] | None, *parent: int | None) -> object:
        if folder.endswith(("a", "b")):
            raise PermissionError(errno.EACCES, "Permission denied", folder)
        return real(folder, listed_as, *parent)

    monkeypatch.setattr(_walk, "_listdir", refusing)
    listing = _scan._list_inputs([str(tmp_path)])
    assert [(i.path, i.error) for i in listing.items] == [
        (str(tmp_path / "a"), "PermissionError: Permission denied"),
        (str(tmp_path / "b"), "PermissionError: Permission denied"),
        (str(tmp_path / "c" / "k.fatbin"), None),
    ]


class _Entry:
    """A directory entry whose type cannot be found out (a file removed or a disk failing while listed)."""

    def __init__(self, entry: os.DirEntry[str], fails: bool) -> None:
        self.name, self.path, self._entry, self._fails = entry.name, entry.path, entry, fails

    def is_symlink(self) -> bool:
        if self._fails:
            raise OSError(errno.EIO, "Input/output error", self.path)
        return self._entry.is_symlink()

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        return self._entry.is_dir(follow_symlinks=follow_symlinks)


def test_an_entry_whose_type_cannot_be_read_is_a_row(fatbin, tmp_path, monkeypatch):
    for name in ("a", "b"):
        (tmp_path / name).write_bytes(fatbin)
    real = os.scandir

    class Listing:
        def __init__(self, path: str) -> None:
            self._it = real(path)

        def __enter__(self) -> list[_Entry]:
            return [_Entry(e, e.name == "a") for e in self._it]

        def __exit__(self, *exc: object) -> None:
            self._it.close()

    monkeypatch.setattr(_scan.os, "scandir", Listing)
    listing = _scan._list_inputs([str(tmp_path)])
    assert [(i.path, i.error) for i in listing.items] == [
        (str(tmp_path / "a"), "OSError: Input/output error"), (str(tmp_path / "b"), None)]  # fmt: skip


def test_a_symlink_to_a_folder_inside_the_tree_is_not_walked(fatbin, tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "k.fatbin").write_bytes(fatbin)
    (tmp_path / "e").symlink_to(tmp_path / "d", target_is_directory=True)
    listing = _scan._list_inputs([str(tmp_path)])
    assert [i.path for i in listing.items] == [str(tmp_path / "d" / "k.fatbin")]
    assert dict(listing.skipped) == {"symlink": 1}


# --- archives ------------------------------------------------------------------------------------------------


def damaged_zip(path: Path, fatbin: bytes) -> None:
    """A folder entry, a member stored with a method no one knows (99), a nested archive and a fatbin."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("w/", b"")
        z.writestr("w/odd.bin", fatbin)
        z.writestr("w/inner.whl", b"PK\x05\x06" + bytes(18))
        z.writestr("w/k.fatbin", fatbin)
    data = bytearray(path.read_bytes())
    for sig, name_at, method_at in ((b"PK\x03\x04", 30, 8), (b"PK\x01\x02", 46, 10)):  # local, central headers
        at = data.find(sig)
        while at >= 0:
            if data[at + name_at : at + name_at + 9] == b"w/odd.bin":
                struct.pack_into("<H", data, at + method_at, 99)
            at = data.find(sig, at + 4)
    path.write_bytes(bytes(data))


def test_an_archives_members_are_rows_each_with_its_size_or_its_error(fatbin, tmp_path):
    whl = tmp_path / "w-1.0-py3-none-any.whl"
    damaged_zip(whl, fatbin)
    listing = _scan._list_inputs([str(whl)])
    got = items(listing)
    assert [(p, m, s) for p, m, s, _, _, _ in got] == [
        (str(whl), "w/odd.bin", len(fatbin)), (str(whl), "w/inner.whl", 22),
        (str(whl), "w/k.fatbin", len(fatbin))]  # fmt: skip
    errors = [e for *_, e in got]
    assert errors[0] is not None and errors[0].startswith("ArchiveError: ") and "99" in errors[0]
    assert errors[1:] == [f"ArchiveError: {NESTED}", None]


def test_an_archive_that_cannot_be_read_is_one_row(tmp_path):
    whl = tmp_path / "w-1.0-py3-none-any.whl"
    whl.write_bytes(b"PK\x03\x04" + bytes(100))  # no central directory
    [item] = _scan._list_inputs([str(whl)]).items
    assert (item.path, item.member) == (str(whl), None)
    assert item.error is not None and item.error.startswith("ArchiveError: ")


def test_a_relocatable_program_inside_a_wheel_is_judged_as_the_same_file_outside(tmp_path, needs_nvcc):
    """An -rdc program's __nv_relfatbin code is loaded with it (docs/gpu-validation.md: an H200 ran an
    sm_80-linked program through the sm_90 code of its objects): a member is judged as the file is."""
    (tmp_path / "k.cu").write_text('extern "C" __global__ void k(float* p) { if (p) p[0] = 1; }\n')
    (tmp_path / "main.cu").write_text('extern "C" __global__ void k(float* p);\nint main() { k<<<1, 1>>>(0); }\n')
    gencode = ["-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=sm_90"]
    for name in ("k", "main"):
        run_tool([needs_nvcc, "-rdc=true", "-c", f"{name}.cu", "-o", f"{name}.o", *gencode], cwd=tmp_path,
                 outputs=[tmp_path / f"{name}.o"])  # fmt: skip
    run_tool([needs_nvcc, "-rdc=true", "main.o", "k.o", "-o", "app", "-gencode=arch=compute_80,code=sm_80"],
             cwd=tmp_path, outputs=[tmp_path / "app"])  # fmt: skip
    whl = tmp_path / "app-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.write(tmp_path / "app", "app/app")
    report = scan([tmp_path / "app", whl], gpus="9.0", max_workers=1)
    rows = {b.path: (b.fatbins, b.coverage["9.0"]["status"]) for b in report.binaries}
    assert rows == {
        str(tmp_path / "app"): ({"registered": 1, "relocatable": 2, "embedded": 0}, "SASS exact"),
        f"{whl}::app/app": ({"registered": 1, "relocatable": 2, "embedded": 0}, "SASS exact"),
    }


# --- scan_binary, called alone ---------------------------------------------------------------------------------


def test_scan_binary_follows_the_symlink_it_is_given_and_reports_what_it_cannot_parse(fatbin, tmp_path):
    (tmp_path / "k.fatbin").write_bytes(fatbin)
    (tmp_path / "k.link").symlink_to(tmp_path / "k.fatbin")
    gpus = [Arch.parse("sm_80")]
    report = _scan.scan_binary(str(tmp_path / "k.link"), None, gpus, None, True)
    assert (report.error, report.coverage["8.0"]["status"]) == (None, "SASS exact")
    whl = tmp_path / "w-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr("w/k.fatbin", fatbin)
        z.writestr("w/cut.fatbin", fatbin[:40])
    (tmp_path / "w.link").symlink_to(whl)
    good, cut = (_inputs.list_members(str(whl))[i] for i in (0, 1))
    report = _scan.scan_binary(str(tmp_path / "w.link"), good, gpus, None, True)
    assert (report.path, report.error, report.coverage["8.0"]["status"]) == (
        f"{tmp_path / 'w.link'}::w/k.fatbin", None, "SASS exact")  # fmt: skip
    report = _scan.scan_binary(str(whl), cut, gpus, None, True)
    assert report.error is not None and report.error.startswith("FatbinFormatError: ")
    (tmp_path / "cut.fatbin").write_bytes(fatbin[:40])
    report = _scan.scan_binary(str(tmp_path / "cut.fatbin"), None, gpus, None, True)
    assert report.error is not None and report.error.startswith("FatbinFormatError: ")
    assert report.coverage == {} and report.entries == {}


# --- distributions ---------------------------------------------------------------------------------------------


def install(site_dir: Path, info_name: str, metadata: bytes, record: bytes, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (site_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (site_dir / rel).write_bytes(data)
    info = site_dir / info_name
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_bytes(metadata)
    (info / "RECORD").write_bytes(record)


def owners(report: _scan.ScanReport, root: Path) -> dict[str, str | None]:
    return {os.path.relpath(b.path, root): b.distribution for b in report.binaries}


def test_owners_are_found_through_blank_lines_bad_bytes_deep_folders_and_a_broken_neighbour(fatbin, tmp_path):
    site_dir = tmp_path / "site"
    # sorted first: a RECORD whose line of the binary's name cannot be resolved (a NUL in its folder)
    install(site_dir, "aaa-1.0.dist-info", b"Name: aaa\nVersion: 1.0\n", b"x\0y/k.fatbin,,\n", {})
    install(site_dir, "deep-2.0.dist-info",
            b"Name: deep\nVersion: 2.0\nSummary: caf\xe9 (Latin-1, not UTF-8)\n",
            b"\n\xff\xfe,,\ndeep/a/b/k.fatbin,,\n\n", {"deep/a/b/k.fatbin": fatbin})  # fmt: skip
    report = scan([site_dir], gpus="80", max_workers=1)
    assert owners(report, site_dir) == {"deep/a/b/k.fatbin": "deep 2.0"}


def test_backslashes_in_a_record_are_folders_from_windows_or_a_posix_file_name(fatbin, tmp_path):
    site_dir = tmp_path / "site"
    install(site_dir, "bs-1.0.dist-info", b"Name: bs\nVersion: 1.0\n", b"bs/k\\x.fatbin,,\n",
            {"bs/k\\x.fatbin": fatbin})  # fmt: skip
    install(site_dir, "win-1.0.dist-info", b"Name: win\nVersion: 1.0\n", b"win\\sub\\k.fatbin,,\n",
            {"win/sub/k.fatbin": fatbin})  # fmt: skip
    assert owners(scan([site_dir], gpus="80", max_workers=1), site_dir) == {
        "bs/k\\x.fatbin": "bs 1.0", "win/sub/k.fatbin": "win 1.0"}  # fmt: skip


def test_only_dist_info_folders_of_the_tree_own_files(fatbin, tmp_path):
    site_dir = tmp_path / "site"
    install(site_dir, "pkg", b"Name: impostor\nVersion: 1.0\n", b"pkg/k.fatbin,,\n", {"pkg/k.fatbin": fatbin})
    elsewhere = tmp_path / "elsewhere"
    install(elsewhere, "real-1.0.dist-info", b"Name: linked\nVersion: 1.0\n", b"../site/pkg/k.fatbin,,\n", {})
    (site_dir / "linked-1.0.dist-info").symlink_to(elsewhere / "real-1.0.dist-info")  # not followed
    assert owners(scan([site_dir], gpus="80", max_workers=1), site_dir) == {"pkg/k.fatbin": None}


def test_no_record_is_read_when_there_is_no_binary_to_own(tmp_path, monkeypatch):
    install(tmp_path, "a-1.0.dist-info", b"Name: a\nVersion: 1.0\n", b"a/x,,\n", {"a/x": b"text"})
    read: list[str] = []
    monkeypatch.setattr(_owners, "_installed", lambda folder: read.append(folder) or iter(()))
    assert scan([tmp_path], gpus="80", max_workers=1).binaries == [] and read == []


def test_default_paths_are_purelib_platlib_then_sites_existing_ones_once(tmp_path, monkeypatch):
    a, b, c = (tmp_path / n for n in "abc")
    for p in (a, b, c):
        p.mkdir()
    monkeypatch.setattr(sysconfig, "get_paths", lambda: {"purelib": str(a), "platlib": str(b), "data": str(c)})
    monkeypatch.setattr(_inputs.site, "getsitepackages", lambda: [str(c), str(a), str(tmp_path / "gone")])
    assert _inputs.default_paths() == [str(a), str(b), str(c)]
    monkeypatch.delattr(_inputs.site, "getsitepackages")  # old virtualenv's site.py has none
    assert _inputs.default_paths() == [str(a), str(b)]


# --- the processes -----------------------------------------------------------------------------------------------


class Pools:
    """Records the pools scan makes (their max_workers); they work as the real ones do."""

    def __init__(self) -> None:
        self.made: list[int | None] = []

    def __call__(self, max_workers: int | None = None, *args: object, **kwargs: object) -> cf.ProcessPoolExecutor:
        self.made.append(max_workers)
        return REAL_POOL(max_workers, *args, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "max_workers, cpus, files, pools",
    [  # scan's max_workers: "Worker processes. Default: the CPU count; 1 reads in this process."
        (None, 3, 4, [3]),
        (None, 3, 2, [2]),  # no more processes than binaries
        (2, 3, 4, [2]),
        (1, 3, 4, []),
        (None, None, 4, []),  # the CPU count unknown: in this process
        (4, 3, 1, []),  # one binary: read here
    ],
)
def test_binaries_are_read_by_as_many_processes_as_asked(
    fatbin, tmp_path, monkeypatch, max_workers, cpus, files, pools
):
    for i in range(files):
        (tmp_path / f"k{i}.fatbin").write_bytes(fatbin)
    made = Pools()
    monkeypatch.setattr(cf, "ProcessPoolExecutor", made)  # the pools of _jobs.process_pool
    forked = []  # or the workers forked by _forked (on Linux)
    real = _forked.run_forked
    monkeypatch.setattr(_forked, "run_forked", lambda items, job, args, done, workers: forked.append(
        min(workers, len(items))) or real(items, job, args, done, workers))  # fmt: skip
    monkeypatch.setattr(_scan.os, "cpu_count", lambda: cpus)
    report = scan([tmp_path], gpus="80", max_workers=max_workers)
    assert made.made + forked == pools and not (made.made and forked)
    assert bool(forked) == (bool(pools) and _forked.usable())  # forked where multiprocessing would fork
    assert [b.coverage["8.0"]["status"] for b in report.binaries] == ["SASS exact"] * files


def dying_file_item(item: _scan._Item, gpus: list, driver: object, embedded: bool, *rest: object) -> _scan.BinaryReport:
    """_scan_item, except that the process reading a file named ``die.fatbin`` dies (as one of SIGBUS)."""
    assert [str(g) for g in gpus] == ["sm_80"] and driver is None and embedded is True
    if item.path.endswith("die.fatbin"):
        os._exit(3)
    return _scan.original_scan_item(item, gpus, driver, embedded, *rest)  # type: ignore[attr-defined, no-any-return]


def test_a_file_whose_reading_process_dies_is_a_row_without_an_archive(fatbin, tmp_path, monkeypatch):
    (tmp_path / "die.fatbin").write_bytes(fatbin)
    (tmp_path / "ok.fatbin").write_bytes(fatbin)
    monkeypatch.setattr(_scan, "original_scan_item", _scan._scan_item, raising=False)
    monkeypatch.setattr(_scan, "_scan_item", dying_file_item)
    report = scan([tmp_path], gpus="80", max_workers=2)
    assert [(b.path, b.archive, b.member, b.error) for b in report.binaries] == [
        (str(tmp_path / "die.fatbin"), None, None, "the process reading it died (a file that changed while read?)"),
        (str(tmp_path / "ok.fatbin"), None, None, None),
    ]


def test_a_line_as_written_wins_over_its_backslashes_read_as_folders(fatbin, tmp_path):
    site_dir = tmp_path / "site"
    install(site_dir, "aaa-1.0.dist-info", b"Name: aaa\nVersion: 1.0\n", b"a/b.fatbin,,\n", {"a/b.fatbin": fatbin})
    install(site_dir, "zzz-1.0.dist-info", b"Name: zzz\nVersion: 1.0\n", b"a\\b.fatbin,,\n", {"a\\b.fatbin": fatbin})
    assert owners(scan([site_dir], gpus="80", max_workers=1), site_dir) == {
        "a/b.fatbin": "aaa 1.0", "a\\b.fatbin": "zzz 1.0"}  # fmt: skip


def test_a_line_that_names_no_file_owns_nothing_and_the_others_stand(fatbin, tmp_path):
    site_dir = tmp_path / "site"
    (site_dir / "p").mkdir(parents=True)
    chain = site_dir / "c0"
    chain.symlink_to(site_dir / "p")
    for i in range(1, 1200):  # a chain of links longer than any path lookup follows (ELOOP), and than recursion
        (site_dir / f"c{i}").symlink_to(site_dir / f"c{i - 1}")
    record = b"p/first.fatbin,,\nx\0y/first.fatbin,,\nc1199/second.fatbin,,\np/second.fatbin,,\nc30/third.fatbin,,\n"
    install(site_dir, "brk-1.0.dist-info", b"Name: brk\nVersion: 1.0\n", record,
            {"p/first.fatbin": fatbin, "p/second.fatbin": fatbin, "p/third.fatbin": fatbin})  # fmt: skip
    got = owners(scan([site_dir], gpus="80", max_workers=1), site_dir)
    assert got == {"p/first.fatbin": "brk 1.0", "p/second.fatbin": "brk 1.0", "p/third.fatbin": "brk 1.0"}


def test_a_record_that_is_not_csv_owns_nothing(fatbin, tmp_path):
    site_dir = tmp_path / "site"
    record = b'p/k.fatbin,,\n"' + b"x" * (200 << 10) + b'",,\n'  # a field over the csv module's limit
    install(site_dir, "big-1.0.dist-info", b"Name: big\nVersion: 1.0\n", record, {"p/k.fatbin": fatbin})
    assert owners(scan([site_dir], gpus="80", max_workers=1), site_dir) == {"p/k.fatbin": None}


@pytest.mark.parametrize("swap", ["symlink", "folder"])
def test_a_folder_swapped_while_the_tree_is_walked_is_a_row_and_nothing_outside_is_read(
    fatbin, tmp_path, monkeypatch, swap
):
    """The folder ``sub`` is listed in its parent, then replaced before it is read itself: by a symlink to a
    folder outside the tree, or by that folder moved in. Neither is listed (docs/security.md)."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "mine.fatbin").write_bytes(fatbin)
    outside.mkdir()
    (outside / "secret.fatbin").write_bytes(fatbin)
    real = _walk._listdir

    def swapping(folder: str, listed_as: tuple[int, int] | None, *parent: int | None) -> object:
        if folder.endswith("sub"):
            os.rename(folder, str(tmp_path / "old"))
            if swap == "symlink":
                os.symlink(outside, folder)
            else:
                os.rename(outside, folder)
        return real(folder, listed_as, *parent)

    monkeypatch.setattr(_walk, "_listdir", swapping)
    listing = _scan._list_inputs([str(root)])
    [item] = listing.items
    assert item.path == str(root / "sub") and item.member is None
    symlink = "NotADirectoryError: a symlink or a file now (changed while listed); not followed"
    assert item.error == ("OSError: another folder now (changed while listed)" if swap == "folder" else symlink)


@pytest.mark.parametrize("what", ["archive", "file"])
def test_a_folder_swapped_after_it_was_listed_leads_no_read_outside(fatbin, tmp_path, monkeypatch, what):
    """A past bug: ``sub`` is listed and opened, then swapped for a symlink to a folder
    outside the tree before its entries are read. A file is opened by name in the folder opened (its content
    is the tree's); an archive, which is listed again by path, must be the file opened, else it is a row."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    name = "a.whl" if what == "archive" else "k.fatbin"
    for where, member in ((root / "sub", "mine.fatbin"), (outside, "secret.fatbin")):
        if what == "archive":
            with zipfile.ZipFile(where / name, "w") as z:
                z.writestr(member, fatbin)
        else:
            (where / name).write_bytes(fatbin if where != outside else fatbin + b"secret")
    real = _walk._listdir

    def swapping(folder: str, listed_as: tuple[int, int] | None, *parent: int | None) -> object:
        found = real(folder, listed_as, *parent)
        if folder.endswith("sub"):
            os.rename(folder, str(tmp_path / "old"))
            os.symlink(outside, folder)
        return found

    monkeypatch.setattr(_walk, "_listdir", swapping)
    listing = _scan._list_inputs([str(root)])
    [item] = listing.items
    assert item.path == str(root / "sub" / name)
    if what == "archive":
        assert (item.member, item.error) == (None, "OSError: another file now (changed since listed)")
    else:
        assert item.error is None and item.size == len(fatbin)  # the tree's file, opened in its folder


@pytest.mark.parametrize("metadata", [b"Name:  \nVersion: 1.0\n", b"Name: x\nVersion: \t\n", b"Version: 1.0\n"])
def test_a_dist_info_without_a_name_or_a_version_owns_nothing(fatbin, tmp_path, metadata):
    site_dir = tmp_path / "site"
    install(site_dir, "x-1.0.dist-info", metadata, b"p/k.fatbin,,\n", {"p/k.fatbin": fatbin})
    assert owners(scan([site_dir], gpus="80", max_workers=1), site_dir) == {"p/k.fatbin": None}


def test_without_folder_descriptors_the_walk_lists_the_same(fatbin, tmp_path, monkeypatch):
    """Where folders cannot be opened (Windows: no dir_fd), the walk lists by path, with the same result."""
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "k.fatbin").write_bytes(fatbin)
    (tmp_path / "a.fatbin").write_bytes(fatbin)
    (tmp_path / "c").symlink_to(tmp_path / "b")
    with_fds = items(_scan._list_inputs([str(tmp_path)]))
    monkeypatch.setattr(_walk, "DIR_FD", False)
    assert items(_scan._list_inputs([str(tmp_path)])) == with_fds
    assert [p for p, *_ in with_fds] == [str(tmp_path / "a.fatbin"), str(tmp_path / "b" / "k.fatbin")]


def test_a_folder_that_opens_but_cannot_be_listed_is_a_row_and_its_descriptor_is_closed(fatbin, tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "k.fatbin").write_bytes(fatbin)
    real, closed = os.scandir, []

    def scandir(where=None):
        if isinstance(where, int) and os.path.basename(os.readlink(f"/proc/self/fd/{where}")) == "a":
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(where)

    real_close = os.close
    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "close", lambda fd: (closed.append(fd), real_close(fd))[1])
    listing = _scan._list_inputs([str(tmp_path)])
    assert [(i.path, i.error) for i in listing.items] == [(str(tmp_path / "a"), "PermissionError: Permission denied")]
    assert len(closed) == 2 and all(isinstance(fd, int) for fd in closed)  # the root and "a", each closed


def _swap_for_link(path: Path, target: Path) -> None:
    os.rename(path, path.with_name("moved-" + path.name))
    path.symlink_to(target)


@pytest.mark.parametrize("what", ["file", "archive member"])
def test_a_file_swapped_for_a_symlink_between_listing_and_reading_is_not_followed(fatbin, tmp_path, monkeypatch, what):
    """What the walk found is read without following a symlink (a symlink to another binary put in its place
    after the listing is refused as a symlink, not read and then found to be another file)."""
    (tmp_path / "t").mkdir()
    other = tmp_path / "other.fatbin"
    other.write_bytes(fatbin)
    name = "k.fatbin" if what == "file" else "a.whl"
    if what == "file":
        (tmp_path / "t" / name).write_bytes(fatbin)
    else:
        with zipfile.ZipFile(tmp_path / "t" / name, "w") as z:
            z.writestr("k.fatbin", fatbin)
        with zipfile.ZipFile(other, "w") as z:
            z.writestr("k.fatbin", fatbin)
    listing = _scan._list_inputs([str(tmp_path / "t")])
    [item] = listing.items
    _swap_for_link(tmp_path / "t" / name, other)
    report = _scan._scan_item(item, [Arch(9, 0)], None, True)
    assert report.error == f"OSError: {os.strerror(errno.ELOOP)}"  # refused as a link, not read as another file


def test_an_archive_swapped_for_a_symlink_after_it_was_opened_is_not_followed(fatbin, tmp_path, monkeypatch):
    (tmp_path / "t").mkdir()
    with zipfile.ZipFile(tmp_path / "t" / "a.whl", "w") as z:
        z.writestr("k.fatbin", fatbin)
    with zipfile.ZipFile(tmp_path / "other.whl", "w") as z:
        z.writestr("k.fatbin", fatbin)
    real = _inputs.list_members

    def swapped(path, **kw):
        _swap_for_link(Path(path), tmp_path / "other.whl")
        return real(path, **kw)

    monkeypatch.setattr(_inputs, "list_members", swapped)
    [item] = _scan._list_inputs([str(tmp_path / "t")]).items
    assert item.member is None and item.error is not None and "changed since listed" not in item.error
    assert "symbolic link" in item.error or "symlink" in item.error


def test_a_binary_that_cannot_be_parsed_is_a_row_saying_why(tmp_path):
    bad = tmp_path / "bad.fatbin"
    bad.write_bytes(b"\x50\xed\x55\xba\x01\x00\x10\x00" + (100).to_bytes(8, "little") + b"\x01" * 16)
    report = scan([str(bad)], gpus=["9.0"], max_workers=1)
    [binary] = report.binaries
    assert binary.error == "FatbinFormatError: fatbin declares 100 bytes of entries but only 16 follow (at offset 0x8)"


def test_a_binary_the_coverage_cannot_be_judged_for_is_a_row_saying_why(fatbin, tmp_path, monkeypatch):
    (tmp_path / "k.fatbin").write_bytes(fatbin)

    def judge(*a, **k):
        raise ValueError("an entry no rule decides")

    monkeypatch.setattr(_scan, "judge", judge)
    [binary] = scan([str(tmp_path / "k.fatbin")], gpus=["9.0"], max_workers=1).binaries
    assert binary.error == "ValueError: an entry no rule decides" and binary.coverage == {}


def test_a_socket_that_goes_before_it_is_looked_at_is_an_error_row(tmp_path, monkeypatch):
    """A socket cannot be opened (ENXIO); the walk then looks at what it is, to pass it over as a FIFO or device
    is. Gone by then: the open's error is the row, nothing escapes."""
    import socket

    from cuda_fatbin import _scan

    real_stat = os.stat

    def gone(path, *args, dir_fd=None, **kwargs):
        if dir_fd is not None and str(path).endswith(".sock"):
            raise FileNotFoundError(2, "No such file or directory")
        return real_stat(path, *args, dir_fd=dir_fd, **kwargs)

    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(tmp_path / "s.sock"))
        monkeypatch.setattr(_scan.os, "stat", gone)
        report = _scan.scan([str(tmp_path)], gpus=["80"], max_workers=1)
    assert [(b.path, b.error) for b in report.binaries] == [
        (str(tmp_path / "s.sock"), "OSError: No such device or address")]  # fmt: skip
    assert not report.skipped


@pytest.mark.parametrize("content", [b"", b"short", b"#!/bin/sh\necho not a binary at all\n", bytes(range(256)) * 40])
def test_a_file_named_that_is_none_of_what_is_read_is_an_error_row(tmp_path, content):
    """`scan notes.txt` (or `size`, `metadata`, `diff`): a file the user named is said to be unreadable as asked,
    exit 1, where the same file found in a folder is passed over (folders hold data too)."""
    from cuda_fatbin import scan

    named = tmp_path / "notes.txt"
    named.write_bytes(content)
    report = scan([named], gpus=["9.0"], max_workers=1)
    [row] = report.binaries
    assert row.error is not None and "not a file this command reads" in row.error and not report.covered
    folder = scan([tmp_path], gpus=["9.0"], max_workers=1)
    assert folder.binaries == [] and folder.covered
