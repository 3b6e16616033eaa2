# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""_files, the one home of safe reads and writes, by exact values: what each refusal says (errno, words, the
path), which flags every descriptor is opened with, and what is flushed. Written for the survivors of a
mutation run (docs/testing.md)."""

from __future__ import annotations

import errno
import os
import re
import stat

import pytest

from cuda_fatbin import _files


def synthetic(mode: int) -> os.stat_result:
    return os.stat_result((mode | 0o600, 1, 1, 1, 0, 0, 0, 0, 0, 0))


KINDS = [(stat.S_IFREG, "a regular file"), (stat.S_IFDIR, "a directory"), (stat.S_IFLNK, "a symlink"),
         (stat.S_IFIFO, "a FIFO"), (stat.S_IFSOCK, "a socket"), (stat.S_IFCHR, "a character device"),
         (stat.S_IFBLK, "a block device"), (0, "not a regular file")]  # fmt: skip


@pytest.mark.parametrize(("mode", "words"), KINDS)
def test_describe_names_every_kind_of_file(mode, words):
    assert _files.describe(synthetic(mode)) == words


@pytest.mark.parametrize(("mode", "words"), KINDS)
def test_only_devices_fifos_and_sockets_are_kept_from_a_rename(tmp_path, monkeypatch, mode, words):
    target = tmp_path / "t"
    monkeypatch.setattr(_files.os, "lstat", lambda p: synthetic(mode))
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        with pytest.raises(OSError) as info:
            _files._refuse_special(target)
        assert (info.value.errno, info.value.strerror, info.value.filename) == (
            errno.EEXIST,
            f"{words} is there; it is not replaced by a file",
            str(target),
        )
    else:
        _files._refuse_special(target)  # a file, folder or link: the rename decides (a link is replaced)


def test_read_regular_says_what_it_refused_and_where(tmp_path, monkeypatch):
    good = tmp_path / "good"
    good.write_bytes(b"abc")
    link = tmp_path / "link"
    link.symlink_to(good)
    loop = tmp_path / "loop"
    loop.symlink_to(loop)

    def refusal(path, limit=10, **kw):
        with pytest.raises(OSError) as info:
            _files.read_regular(path, limit, **kw)
        return info.value.errno, info.value.strerror, info.value.filename

    assert refusal(link) == (errno.ELOOP, "a symlink, not followed", str(link))
    assert _files.read_regular(link, 10, follow=True) == b"abc"
    code, words, _ = refusal(loop, follow=True)  # followed and looping: the system's own error, not ours
    assert code == errno.ELOOP and words != "a symlink, not followed"
    assert refusal(good, 2) == (errno.EFBIG, "3 bytes, over the limit of 2", str(good))
    assert _files.read_regular(good, 3) == b"abc"
    monkeypatch.setattr(_files.os, "read", lambda fd, n: b"")  # the file shrank while read
    assert refusal(good) == (errno.EIO, "ended after 0 of 3 bytes (changed while read)", str(good))


def test_temporary_names_are_hidden_random_and_fit_255_bytes(tmp_path):
    name = _files.temp_name(tmp_path / "k.fatbin")
    assert re.fullmatch(re.escape(str(tmp_path)) + r"/\.k\.fatbin\.[0-9a-f]{12}\.tmp", name), name
    assert _files.temp_name("k", "stage").startswith(".k.") and _files.temp_name("k", "stage").endswith(".stage")
    assert _files.temp_name("k") != _files.temp_name("k")
    for n in (236, 237, 238, 250, 255):  # cut one character at a time to exactly 255 bytes
        base = os.path.basename(_files.temp_name(str(tmp_path / ("a" * n))))
        assert len(base) == min(255, n + 18), (n, len(base))
    base = os.path.basename(_files.temp_name(str(tmp_path / ("é" * 127))))  # 254 bytes of 2-byte characters
    assert len(base.encode()) <= 255 and base.encode().decode() == base and base.startswith(".éé")


def test_a_failed_write_whose_temporary_file_is_already_gone_raises_its_own_error(tmp_path, monkeypatch):
    planted = tmp_path / ".t.tmp"
    monkeypatch.setattr(_files, "temp_name", lambda target, kind="tmp": str(planted))

    def fail(f):
        os.unlink(planted)  # someone removed it: the clean-up finds nothing, and says nothing
        raise ValueError("the writer's own error")

    with pytest.raises(ValueError, match="the writer's own error"):
        _files.write_atomic(tmp_path / "t", fail)

    def fail_new(f):
        os.unlink(tmp_path / "n")
        raise ValueError("the writer's own error")

    with pytest.raises(ValueError, match="the writer's own error"):
        _files.create_new(tmp_path / "n", fail_new)


def test_the_folder_of_the_target_is_synced(tmp_path, monkeypatch):
    synced = []
    monkeypatch.setattr(_files, "fsync_dir", lambda path: synced.append(os.fspath(path)))
    _files.write_atomic(tmp_path / "k", b"x")
    monkeypatch.chdir(tmp_path)
    _files.write_atomic("here", b"x")
    assert synced == [str(tmp_path), "."]


def test_fsync_dir_flushes_folders_only_and_never_fails(tmp_path, monkeypatch):
    calls = []
    real = os.fsync
    monkeypatch.setattr(_files.os, "fsync", lambda fd: calls.append(stat.S_ISDIR(os.fstat(fd).st_mode)) or real(fd))
    _files.fsync_dir(tmp_path)
    (tmp_path / "file").write_bytes(b"x")
    _files.fsync_dir(tmp_path / "file")  # not a folder: nothing to do
    _files.fsync_dir(tmp_path / "missing")
    assert calls == [True]

    def refuse(fd):
        raise OSError(errno.EINVAL, "Invalid argument")

    monkeypatch.setattr(_files.os, "fsync", refuse)
    _files.fsync_dir(tmp_path)  # some file systems refuse fsync on a folder


def test_read_exact_reads_every_chunk_and_notices_a_file_that_grew(tmp_path):
    size = _files._CHUNK + 10  # two reads
    path = tmp_path / "f"
    data = os.urandom(size + 90)
    path.write_bytes(data[:size])
    fd = os.open(path, os.O_RDONLY)
    try:
        assert _files.read_exact(fd, size, path) == data[:size]
    finally:
        os.close(fd)
    path.write_bytes(data)  # 90 bytes more than the size it was judged by
    fd = os.open(path, os.O_RDONLY)
    try:
        with pytest.raises(OSError) as info:
            _files.read_exact(fd, size, path)
        assert (info.value.errno, info.value.strerror, info.value.filename) == (
            errno.EIO,
            f"holds more than {size} bytes (changed while read)",
            str(path),
        )
        os.lseek(fd, 0, os.SEEK_SET)
        with pytest.raises(OSError) as info:
            _files.read_exact(fd, size + 100)  # shorter than said; no path given: none named
        assert (info.value.strerror, info.value.filename) == (f"ended after {size + 90} of {size + 100} bytes "
                                                               "(changed while read)", "")  # fmt: skip
    finally:
        os.close(fd)


def test_check_regular_says_what_it_found(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError) as info:
        _files.read_regular(fifo, 10)
    assert (info.value.errno, info.value.strerror, info.value.filename) == (
        errno.EINVAL,
        "a FIFO, not a regular file",
        str(fifo),
    )
    with pytest.raises(OSError) as info:
        _files.check_regular(synthetic(stat.S_IFDIR), 10)
    assert (info.value.errno, info.value.strerror, info.value.filename) == (
        errno.EINVAL,
        "a directory, not a regular file",
        "",
    )


def test_open_input_closes_what_it_opened_when_fstat_fails(tmp_path, monkeypatch):
    path = tmp_path / "f"
    path.write_bytes(b"x")
    closed = []
    real_close = os.close
    monkeypatch.setattr(_files.os, "close", lambda fd: closed.append(fd) or real_close(fd))

    real_fstat = os.fstat

    def broken(fd):
        if os.readlink(f"/proc/self/fd/{fd}") == str(path):
            raise OSError(errno.EIO, "Input/output error")
        return real_fstat(fd)

    monkeypatch.setattr(_files.os, "fstat", broken)
    with pytest.raises(OSError) as info:
        _files.open_input(path)
    monkeypatch.undo()
    assert info.value.errno == errno.EIO and len(closed) == 1


@pytest.mark.parametrize(
    ("raw", "limit", "message"),
    [
        (b'{"a": [1, 2', 4, "not JSON: a bracket is never closed, or closed but never opened (a cut or edited file?)"),
        (b"[1]]", 4, "not JSON: a bracket is never closed, or closed but never opened (a cut or edited file?)"),
        (b"[" * 100_000, 4, "not JSON: a bracket is never closed, or closed but never opened (a cut or edited file?)"),
        (b"[[1]]", 1, "nested deeper than 1 levels"),
        (b"[[1], [[2]]", 1, "nested deeper than 1 levels"),  # deeper, and torn: the first thing found is said
    ],
)
def test_loads_json_tells_a_torn_text_from_a_deep_one(raw, limit, message):
    with pytest.raises(ValueError) as info:
        _files.loads_json(raw, limit)
    assert str(info.value) == message
    assert _files.loads_json(b'["[", {"}": "]"}]', 2) == ["[", {"}": "]"}]  # brackets in strings are text


@pytest.mark.parametrize(
    ("raw", "name"), [(b"NaN", "NaN"), (b"[1, Infinity]", "Infinity"), (b'{"a": -Infinity}', "-Infinity")]
)
def test_loads_json_refuses_what_json_does_not_have(raw, name):
    with pytest.raises(ValueError) as info:
        _files.loads_json(raw, 4)
    assert str(info.value) == f"not JSON: {name}"


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not _files.DIR_FD, reason="folders are opened by descriptor only where dir_fd exists (not Windows)")
def test_open_dir_follows_a_named_link_and_refuses_a_listed_folder_that_changed(tmp_path):
    """A folder named by the user may be a symlink (followed); one found in a listing must still be the folder
    listed: a symlink, a file or another folder in its place is an OSError saying so, and nothing stays open."""
    real = tmp_path / "real"
    (real / "inner").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real)
    listed = _files.identity(os.lstat(real))
    before = _open_fds()
    fd = _files.open_dir(link)  # named: followed
    try:
        assert os.listdir(fd) == ["inner"] and _files.identity(os.fstat(fd)) == listed
    finally:
        os.close(fd)
    fd = _files.open_dir(real, listed_as=listed)
    os.close(fd)
    with pytest.raises(OSError, match=r"a symlink or a file now \(changed while listed\); not followed") as e:
        _files.open_dir(link, listed_as=listed)  # a symlink where the folder was: not followed
    assert e.value.errno in (errno.ELOOP, errno.ENOTDIR) and e.value.filename == link  # Linux: ENOTDIR
    (tmp_path / "file").write_text("x")
    with pytest.raises(OSError, match=r"a symlink or a file now") as e:
        _files.open_dir(tmp_path / "file", listed_as=listed)
    assert e.value.errno == errno.ENOTDIR
    with pytest.raises(OSError, match=r"^\[Errno 5\] another folder now \(changed while listed\): ") as e:
        _files.open_dir(real / "inner", listed_as=listed)
    assert e.value.errno == errno.EIO
    with pytest.raises(FileNotFoundError) as e:  # any other failure is the system's own error
        _files.open_dir(tmp_path / "gone", listed_as=listed)
    assert e.value.strerror == os.strerror(errno.ENOENT)
    with pytest.raises(NotADirectoryError) as e:  # a file named by the user: not a folder, not "changed"
        _files.open_dir(tmp_path / "file")
    assert e.value.strerror == os.strerror(errno.ENOTDIR)
    assert _open_fds() == before


def test_identity_is_device_and_inode(tmp_path):
    (tmp_path / "a").write_text("x")
    os.link(tmp_path / "a", tmp_path / "b")
    st = os.stat(tmp_path / "a")
    assert _files.identity(st) == (st.st_dev, st.st_ino) == _files.identity(os.stat(tmp_path / "b"))


def test_a_symlink_is_named_so_only_where_the_name_itself_is_one(tmp_path, monkeypatch):
    """ELOOP from the open says "a symlink, not followed" only when the name itself is a symlink, looked up
    where it was opened (in dir_fd); a loop on the way to it keeps the system's own message."""
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "link").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.chdir(other)  # "link" is nowhere here: only the folder's descriptor finds it
    fd = os.open(tmp_path / "d", os.O_RDONLY)
    try:
        with pytest.raises(OSError) as e:
            _files.read_regular("link", 10, dir_fd=fd)
        assert (e.value.errno, e.value.strerror) == (errno.ELOOP, "a symlink, not followed")
    finally:
        os.close(fd)
    with pytest.raises(OSError) as e:
        _files.read_regular(tmp_path / "loop" / "x", 10)
    assert e.value.errno == errno.ELOOP and e.value.strerror == os.strerror(errno.ELOOP)


def test_create_new_in_a_folder_leaves_nothing_when_the_write_fails(tmp_path, monkeypatch):
    """With dir_fd the name is in that folder, for the clean-up after a failure too (not in the working folder)."""
    (tmp_path / "stage").mkdir()
    other = tmp_path / "other"
    other.mkdir()
    (other / "f").write_bytes(b"not ours")  # what an unlink by name in the working folder would take
    monkeypatch.chdir(other)
    fd = os.open(tmp_path / "stage", os.O_RDONLY)

    def failing(f):
        f.write(b"part")
        raise KeyboardInterrupt

    try:
        with pytest.raises(KeyboardInterrupt):
            _files.create_new("f", failing, dir_fd=fd)
        _files.create_new("g", b"abc", dir_fd=fd)
    finally:
        os.close(fd)
    assert os.listdir(tmp_path / "stage") == ["g"] and (tmp_path / "stage" / "g").read_bytes() == b"abc"
    assert (other / "f").read_bytes() == b"not ours"
