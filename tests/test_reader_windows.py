# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The search of a large file through ``os.pread`` windows that skip holes (``_reader._Data``), in this process.

Oracle: ``bytes.find`` on the file's content. The window is made small (8 KiB) so that every boundary the
search can meet — window ends, data runs ending in a hole, the end of the range, the end of the file — falls
inside a file of a few MiB; where the file system keeps no holes, the same answers are due.
"""

from __future__ import annotations

import itertools
import os

import pytest

from cuda_fatbin import _reader, _source
from cuda_fatbin._reader import FatbinFormatError

W = 8192
SUB = b"\x50\xed\x55\xba"  # a fatbin's magic: no zero byte, as the search requires
MiB = 1 << 20


def _layout(path, runs: list[tuple[int, bytes]], size: int) -> bytes:
    """A sparse file of ``size`` bytes holding ``runs`` (offset, bytes); its content as bytes."""
    content = bytearray(size)
    with open(path, "wb") as f:
        f.truncate(size)
        for at, data in runs:
            f.seek(at)
            f.write(data)
            content[at : at + len(data)] = data
    return bytes(content)


def _run(n: int, marks: dict[int, bytes]) -> bytes:
    """``n`` non-zero bytes with ``marks`` (offset in the run: bytes) written in."""
    out = bytearray(b"\x01" * n)
    for at, data in marks.items():
        out[at : at + len(data)] = data
    return bytes(out)


@pytest.fixture
def small_windows(monkeypatch):
    monkeypatch.setattr(_source, "_WINDOW", W)


def _points(content: bytes) -> list[int]:
    found = [i for i in range(len(content)) if content.startswith(SUB, i)]
    edges = {0, len(content), len(content) - 1, MiB, MiB + 1, MiB + W, 2 * MiB, 3 * MiB}
    for i in found:
        edges |= {i - 1, i, i + 1, i + len(SUB) - 1, i + len(SUB)}
    return sorted(p for p in edges if 0 <= p <= len(content))


LAYOUTS = {
    # magics at, just before and across window ends, in a data run that a hole ends, then at the file's end
    "runs and holes": lambda: (
        [(0, _run(3 * W, {W - 4: SUB, W - 2: SUB, 2 * W - 1: SUB})),
         (MiB, _run(2 * W + 100, {0: SUB, W - 3: SUB, 2 * W + 96: SUB})),
         (3 * MiB - W, _run(W, {W - 4: SUB}))],
        3 * MiB,
    ),
    # one data run longer than many windows, magics straddling each of the first window ends
    "dense": lambda: ([(0, _run(2 * MiB, {k * W - s: SUB for k, s in zip(range(1, 5), (1, 2, 3, 4))}))], 2 * MiB),
    # the magic cut by a hole: never found
    "cut by a hole": lambda: ([(MiB, _run(W, {W - 2: SUB[:2]})), (MiB + 4 * W, _run(W, {0: SUB[2:]}))], 2 * MiB),
}  # fmt: skip


@pytest.mark.parametrize("name", LAYOUTS)
def test_find_through_windows_is_bytes_find(tmp_path, small_windows, name):
    runs, size = LAYOUTS[name]()
    path = tmp_path / "f.bin"
    content = _layout(path, runs, size)
    data = _reader._open(str(path))
    assert data.fd is not None  # over 1 MiB: mapped, searched through pread
    points = _points(content)
    for sub in (SUB, SUB[:2], b"\x01\x01"):
        for start in points:
            for end in points:
                if end > start:
                    assert data.find(sub, start, end) == content.find(sub, start, end), (sub, start, end)
    assert [fb.offset for fb in _reader.iter_fatbins(str(path), embedded=True)] == [
        fb.offset for fb in _reader.iter_fatbins(content, embedded=True)
    ]


def test_reading_a_range_of_a_file_that_shrank_is_an_error(tmp_path, small_windows):
    path = tmp_path / "f.bin"
    content = _layout(path, [(0, _run(2 * MiB, {MiB + 10: SUB}))], 2 * MiB)
    data = _reader._open(str(path))
    assert data.read(MiB, MiB + 16) == content[MiB : MiB + 16]
    os.truncate(path, MiB)
    with pytest.raises(FatbinFormatError) as e:  # the window at the cut: a short read
        data.find(SUB, MiB - 100, 2 * MiB)
    assert e.value.message == f"{str(path)!r} shrank to {MiB} bytes while it was being read"
    assert e.value.offset == MiB  # where the data now ends
    with pytest.raises(FatbinFormatError) as e:
        data.find(SUB, MiB + 5, 2 * MiB)  # past the new end: no data there (ENXIO), and the map is longer
    assert e.value.message == f"{str(path)!r} shrank to {MiB} bytes while it was being read"
    assert e.value.offset == MiB + 5
    with pytest.raises(FatbinFormatError) as e:
        data.read(MiB - 8, MiB + 8)
    assert (e.value.message, e.value.offset) == (f"{str(path)!r} shrank while it was being read", MiB)


def test_a_window_an_earlier_search_cut_short_is_read_again(tmp_path, small_windows):
    """Found by mutation testing: a window cut to 1 byte by an earlier call's end, then reused, skipped the
    magic at its first byte; a kept window ending just after ``start`` found a magic that began before it."""
    path = tmp_path / "f.bin"
    content = _layout(path, [(0, _run(2 * MiB, {MiB: SUB, MiB + 3 * W - 2: SUB}))], 2 * MiB)
    data = _reader._open(str(path))
    assert data.find(SUB, MiB, MiB + 1) == -1  # the window is [MiB, MiB + 1)
    assert data.find(SUB, MiB, 2 * MiB) == MiB == content.find(SUB, MiB, 2 * MiB)
    data = _reader._open(str(path))
    assert data.find(b"\x01", MiB + 2 * W, 2 * MiB) == MiB + 2 * W  # the window is [MiB + 2W, MiB + 3W)
    start = MiB + 3 * W - 1  # inside the magic that straddles the window's end
    assert data.find(SUB, start, 2 * MiB) == -1 == content.find(SUB, start, 2 * MiB)


@pytest.fixture
def no_seek_data(monkeypatch):
    """A file system (or platform) that cannot find holes: SEEK_DATA and SEEK_HOLE fail with EINVAL."""
    import errno

    real = os.lseek

    def lseek(fd, pos, how):
        if how in (getattr(os, "SEEK_DATA", -1), getattr(os, "SEEK_HOLE", -1)):
            raise OSError(errno.EINVAL, "not supported")
        return real(fd, pos, how)

    monkeypatch.setattr(os, "lseek", lseek)


@pytest.mark.parametrize("name", LAYOUTS)
def test_find_without_holes_support_is_bytes_find(tmp_path, small_windows, no_seek_data, name):
    """A past bug: without SEEK_DATA a window cut short by an earlier call's end was taken
    for data followed by a hole, and a magic straddling its end was missed."""
    runs, size = LAYOUTS[name]()
    path = tmp_path / "f.bin"
    content = _layout(path, runs, size)
    data = _reader._open(str(path))
    points = _points(content)
    for sub in (SUB, SUB[:2]):
        for start in points:
            for end in points:
                if end > start:
                    assert data.find(sub, start, end) == content.find(sub, start, end), (sub, start, end)


def test_a_magic_straddling_the_end_of_a_data_run_on_a_block_boundary(tmp_path, small_windows):
    """A data run that ends at a block boundary (a hole follows), a magic in its last two bytes, searched first
    up to one byte short of the run's end, then further (once untested)."""
    path = tmp_path / "f.bin"
    content = _layout(path, [(0, _run(W, {W - 2: SUB[:2]}))], 2 * MiB)
    data = _reader._open(str(path))
    assert data.find(SUB[:2], W - 92, W - 1) == -1 == content.find(SUB[:2], W - 92, W - 1)
    assert data.find(SUB[:2], W - 92, W + 808) == W - 2 == content.find(SUB[:2], W - 92, W + 808)


def test_a_window_read_short_says_how_small_the_file_is_now(tmp_path, small_windows, monkeypatch):
    path = tmp_path / "f.bin"
    _layout(path, [(0, _run(2 * MiB, {}))], 2 * MiB)
    data = _reader._open(str(path))
    real = os.preadv
    monkeypatch.setattr(os, "preadv", lambda fd, bufs, at: (os.truncate(path, MiB + 10), real(fd, bufs, at))[1])
    with pytest.raises(FatbinFormatError) as e:  # SEEK_HOLE said data to 2 MiB; the read finds 10 bytes
        data.find(SUB, MiB, 2 * MiB)
    assert (e.value.message, e.value.offset) == (
        f"{str(path)!r} shrank to {MiB + 10} bytes while it was being read",
        MiB,
    )


def test_a_search_reads_each_byte_once_but_the_overlap_a_straddling_match_needs(tmp_path, small_windows, monkeypatch):
    """The search holds one window and reads a file about once (the reader's linear-work promise): a window
    overlaps the one before by ``len(sub) - 1`` bytes, where a match across their boundary may start, and a
    search that starts inside the window read last reads nothing again."""
    path = tmp_path / "f.bin"
    content = _layout(path, [(0, _run(2 * MiB, {}))], 2 * MiB)
    data = _reader._open(str(path))
    reads: list[tuple[int, int]] = []
    real = os.preadv  # the windows are read into one buffer
    monkeypatch.setattr(os, "preadv", lambda fd, bufs, at: (reads.append((at, len(bufs[0]))), real(fd, bufs, at))[1])
    start, end = 100, MiB + 100
    assert data.find(SUB, start, end) == -1 == content.find(SUB, start, end)
    windows = -(-(end - start - len(SUB) + 1) // (W - len(SUB) + 1))  # steps of W - overlap
    assert len(reads) == windows
    assert sum(n for _, n in reads) == (end - start) + (windows - 1) * (len(SUB) - 1)
    assert all(b_at == a_at + a_n - len(SUB) + 1 for (a_at, a_n), (b_at, _) in itertools.pairwise(reads))
    reads.clear()
    last_at, last_n = data._win_at, data._win_len
    assert data.find(b"\x01", last_at, last_at + last_n) == last_at  # inside the window read last
    assert data.find(SUB, last_at, last_at + last_n) == -1
    assert reads == []


def test_a_range_reads_the_same_from_memory_and_from_a_mapped_file(tmp_path):
    path = tmp_path / "f.bin"
    content = _layout(path, [(10, _run(100, {})), (MiB + 7, _run(MiB, {5: SUB}))], 2 * MiB + 3)
    mapped, in_memory = _reader._open(str(path)), _reader._open(content)
    assert (mapped.fd is not None, in_memory.fd) == (True, None)
    for start, end in [(0, 0), (0, 16), (5, 120), (MiB, MiB + 20), (2 * MiB - 5, 2 * MiB + 3)]:
        assert mapped.read(start, end) == in_memory.read(start, end) == content[start:end]


def test_a_mapped_files_descriptor_is_closed_with_its_reader(tmp_path):
    """A file over 1 MiB keeps a descriptor for its pread windows; it is closed when the reader goes, and a
    reader of data in memory closes none (a scan of thousands of files must not run out of descriptors)."""
    import gc

    path = tmp_path / "f.bin"
    _layout(path, [(0, _run(2 * MiB, {MiB: SUB}))], 2 * MiB)

    def open_fds() -> set[str]:
        return set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else set()

    if not open_fds():
        pytest.skip("no /proc/self/fd to count descriptors with")
    gc.collect()
    before = open_fds()
    for _ in range(20):
        data = _reader._open(str(path))
        assert data.fd is not None and str(data.fd) in open_fds()
        assert data.find(SUB, 0, 2 * MiB) == MiB
        del data
        gc.collect()
    assert open_fds() == before
    data = _reader._open(b"\x01" * 100)  # data in memory: no descriptor taken, none closed
    assert data.fd is None and open_fds() == before
    del data
    gc.collect()
    assert open_fds() == before


def test_a_fresh_readers_first_search_sees_the_files_first_bytes(tmp_path, small_windows):
    """The first search of a mapped file starts with no window: a magic in its first bytes is found (each search
    here on a reader of its own; the other tests reuse one reader, whose first search finds nothing)."""
    path = tmp_path / "f.bin"
    content = _layout(path, [(0, _run(2 * MiB, {0: SUB, 2 * len(SUB): SUB}))], 2 * MiB)
    for start, end in [(0, 2 * MiB), (0, len(SUB)), (1, 2 * MiB), (2 * len(SUB), 4 * len(SUB))]:
        assert _reader._open(str(path)).find(SUB, start, end) == content.find(SUB, start, end), (start, end)


def test_a_short_read_of_a_file_that_did_not_shrink_is_an_error_at_its_end(tmp_path, small_windows, monkeypatch):
    """pread may return less than asked without the file being shorter (a file system's error, a file cut and
    grown again): the search stops with an error where the read ended, never searches a window it did not get."""
    path = tmp_path / "f.bin"
    _layout(path, [(0, _run(2 * MiB, {MiB + 100: SUB}))], 2 * MiB)
    data = _reader._open(str(path))
    real = os.preadv
    monkeypatch.setattr(os, "preadv", lambda fd, bufs, at: real(fd, [bufs[0][: len(bufs[0]) - 7]], at))
    with pytest.raises(FatbinFormatError) as e:
        data.find(SUB, MiB, 2 * MiB)
    assert (e.value.message, e.value.offset) == (f"{str(path)!r} shrank while it was being read", MiB + W - 7)
