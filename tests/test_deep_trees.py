# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Trees deeper than the system's PATH_MAX (4096 bytes on Linux): walked, and every file in them read.

A folder is opened by its name in its parent, and a long path given to a reader is followed piece by piece
(``_files._reached``), so ``scan``, ``inspect``, ``which``, ``extract`` and the library's readers work at any depth.
The trees are built with ``dir_fd`` too: no tool here could make them by path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile

import pytest

from cuda_fatbin import build_fatbin, iter_fatbins, read_fatbin, scan
from cuda_fatbin._files import DIR_FD, open_input, read_regular, stat_path

from fatbin_testing import DATA

pytestmark = pytest.mark.skipif(not DIR_FD, reason="folders opened by descriptor (Linux, macOS)")
CLI = [sys.executable, "-m", "cuda_fatbin"]
LEVEL = "d" * 200  # 25 levels make 5,000 bytes of path


def _deep(root, levels: int, files: dict[str, bytes], side_every: int = 10) -> str:
    """``levels`` folders named LEVEL under ``root`` (a side folder with ``files`` too at every ``side_every``-th),
    ``files`` at the bottom: the path of the bottom folder."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i in range(levels):
            if i % side_every == side_every // 2:
                os.mkdir("side", dir_fd=fd)
                side = os.open("side", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
                _write(side, files)
                os.close(side)
            os.mkdir(LEVEL, dir_fd=fd)
            below = os.open(LEVEL, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = below
        _write(fd, files)
    finally:
        os.close(fd)
    return os.path.join(root, *[LEVEL] * levels)


def _write(fd: int, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=fd)
        os.write(out, data)
        os.close(out)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, bytes]:
    fatbin = build_fatbin([str(DATA / "nvrtc129_sm_80.cubin")])
    wheel = tmp_path_factory.mktemp("wheel") / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("demo/k.fatbin", fatbin)
    return {"k.fatbin": fatbin, "demo-1.0-py3-none-any.whl": wheel.read_bytes()}


def test_scan_walks_and_reads_a_tree_deeper_than_path_max(tmp_path, files):
    """Issue 51: "File name too long" for each folder past 4096 bytes of path, an error row, the files unread."""
    bottom = _deep(tmp_path, 25, files)
    assert len(os.fsencode(bottom)) > 5000
    for workers in (1, 2):  # read in this process, and in worker processes given the long paths
        report = scan([tmp_path], gpus="80", max_workers=workers)
        assert report.unreadable == [] and report.covered
        rows = {b.path: b.coverage["8.0"]["status"] for b in report.binaries}
        assert len(rows) == 6 and set(rows.values()) == {"SASS exact"}  # two side folders, the bottom: 3 x 2
        assert os.path.join(bottom, "k.fatbin") in rows
        assert os.path.join(bottom, "demo-1.0-py3-none-any.whl") + "::demo/k.fatbin" in rows


def test_a_long_path_is_read_by_every_reader(tmp_path, files):
    """Paths past PATH_MAX given to the readers and the commands: read, not "File name too long"."""
    path = os.path.join(_deep(tmp_path, 25, files), "k.fatbin")
    assert [e.arch.sm for e in read_fatbin(path).entries] == [80]
    assert [len(fb.entries) for fb in iter_fatbins(path, embedded=True)] == [1]
    assert read_regular(path, 1 << 20, follow=True) == files["k.fatbin"]
    assert stat_path(path).st_size == len(files["k.fatbin"])
    fd, st = open_input(path.encode())  # bytes too
    os.close(fd)
    assert st.st_size == len(files["k.fatbin"])
    outputs = {}
    for args in (["inspect", path], ["which", path, "--gpu", "80", "--json"],
                 ["extract", path, "-o", tmp_path / "out"]):  # fmt: skip
        res = subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, (args[0], res.stdout + res.stderr)
        outputs[args[0]] = res.stdout
    assert "sm_80" in outputs["inspect"]
    assert json.loads(outputs["which"])["verdict"]["8.0"]["status"] == "SASS exact"
    assert [p.suffix for p in (tmp_path / "out").iterdir()] == [".cubin"]


def test_a_missing_file_deep_down_is_named_with_its_whole_path(tmp_path, files):
    """An error on the way (a missing folder) names the whole path, with the system's reason."""
    bottom = _deep(tmp_path, 25, {})
    missing = os.path.join(bottom, "gone", "k.fatbin")
    with pytest.raises(FileNotFoundError) as info:
        read_fatbin(missing)
    assert info.value.filename == missing


def test_a_wide_and_deep_tree_keeps_few_folders_open(tmp_path, files, monkeypatch):
    """Each folder is kept open only while its subfolders wait: a tree that branches at every level past the cap
    opens its subfolders by their (long) paths instead, and every file is still read."""
    import cuda_fatbin._walk as scan_module

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("open descriptors are counted in /proc/self/fd (Linux)")
    bottom = _deep(tmp_path, 25, {"k.fatbin": files["k.fatbin"]}, side_every=1)  # every level branches
    listdir, most = scan_module._listdir, []

    def counting(*args):
        most.append(len(os.listdir("/proc/self/fd")))
        return listdir(*args)

    monkeypatch.setattr(scan_module, "_listdir", counting)
    for cap in (3, 256):
        monkeypatch.setattr(scan_module, "_MAX_PARENTS", cap)
        before, most[:] = len(os.listdir("/proc/self/fd")), []
        report = scan([tmp_path], gpus="80", max_workers=1)
        assert report.unreadable == [] and len(report.binaries) == 26
        assert os.path.join(bottom, "k.fatbin") in {b.path for b in report.binaries}
        assert max(most) - before <= min(cap, 25) + 2  # the parents held, the folder listed, the listing's own
        assert len(os.listdir("/proc/self/fd")) == before  # every folder closed


def test_a_header_past_path_max_is_in_the_include_fingerprint(tmp_path):
    """The cache key's walk of the include folders opens a folder past PATH_MAX too: an edit there changes the key
    (it was "unopened", recorded by name only)."""
    from types import SimpleNamespace

    from cuda_fatbin import _cache

    _deep(tmp_path, 25, {"deep.h": b"#define D 1\n"})
    options = SimpleNamespace(include_path=[str(tmp_path)], pre_include=[])
    first = _cache.include_digest(options)
    assert _cache.include_digest(options) == first
    folder = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)  # down by descriptors, not by the code under test
    for _ in range(25):
        below = os.open(LEVEL, os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
        os.close(folder)
        folder = below
    try:
        fd = os.open("deep.h", os.O_WRONLY | os.O_TRUNC, dir_fd=folder)
        os.write(fd, b"#define D 2\n")
        os.close(fd)
    finally:
        os.close(folder)
    assert _cache.include_digest(options) != first


@pytest.mark.parametrize("before", [0, 300])  # 300 folders with subfolders walked first: past _MAX_PARENTS held
def test_every_folder_is_opened_by_name_in_its_parent_even_once_the_parent_moved(tmp_path, files, monkeypatch, before):
    """A folder is opened by its name in its open parent, never by its path: the parent renamed and a decoy put at
    its old path while the walk waits, the folder listed is the one the parent holds (no error row, no decoy read),
    however many folders were walked before."""
    from cuda_fatbin import _walk

    for i in range(before):
        os.makedirs(tmp_path / "a-first" / f"p{i:03}" / "q")
    os.makedirs(tmp_path / "b" / "c")
    (tmp_path / "b" / "c" / "k.fatbin").write_bytes(files["k.fatbin"])
    listdir, moved = _walk._listdir, []

    def listing(folder, listed_as, parent=None):
        if folder == str(tmp_path / "b" / "c") and not moved:  # "b" was listed: move it, put a decoy at its path
            os.rename(tmp_path / "b", tmp_path / "b-moved")
            os.makedirs(tmp_path / "b" / "c")
            moved.append(folder)
            try:
                return listdir(folder, listed_as, parent)
            finally:
                os.rmdir(tmp_path / "b" / "c")
                os.rmdir(tmp_path / "b")
                os.rename(tmp_path / "b-moved", tmp_path / "b")  # back, for the file read by its path
        return listdir(folder, listed_as, parent)

    monkeypatch.setattr(_walk, "_listdir", listing)
    report = scan([tmp_path], gpus="80", max_workers=1)
    assert moved and not [b for b in report.binaries if b.error], [b.error for b in report.binaries if b.error]
    assert [os.path.basename(b.path) for b in report.binaries] == ["k.fatbin"]


def test_a_long_path_through_a_symlinked_folder_is_followed_as_the_system_would(tmp_path, files):
    """A path past PATH_PIECE followed piece by piece follows the symlinks on the way, as the lookup of a whole path
    does (what is at its end is judged by the caller): here every folder after the first is a symlink to ".", so
    one ends a piece wherever the path is cut."""
    bottom = _deep(tmp_path, 1, files)
    link = "l" * 200
    os.symlink(".", os.path.join(bottom, link))
    path = os.path.join(bottom, *[link] * 6, "k.fatbin")
    assert len(path.encode()) > 1000
    assert read_regular(path, 1 << 20, follow=False) == files["k.fatbin"]
    assert stat_path(path).st_size == len(files["k.fatbin"])
    fd, _st = open_input(path, follow=False)
    os.close(fd)


def test_a_long_path_is_looked_up_in_the_folder_given(tmp_path, files, monkeypatch):
    """With ``dir_fd``, a relative path past PATH_PIECE is followed from that folder, never from the working one."""
    _deep(tmp_path, 8, files)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    rel = os.path.join(*[LEVEL] * 8, "k.fatbin")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert read_regular(rel, 1 << 20, dir_fd=fd) == files["k.fatbin"]
        assert stat_path(rel, dir_fd=fd).st_size == len(files["k.fatbin"])
    finally:
        os.close(fd)
