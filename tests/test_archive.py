# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""_archive's refusals by exact values, on zips written byte by byte (zipfile will not write them): the
promises of docs/security.md about members that lie about their size or share their data."""

from __future__ import annotations

import errno
import os
import struct
import zlib

import pytest

from cuda_fatbin._archive import _CHUNK, _OVERLAP, ArchiveError, _pread, list_members, read_member
from cuda_fatbin._containers import split


def local(name: bytes, data: bytes, *, usize: int | None = None, method: int = 0) -> bytes:
    return struct.pack("<4s5H3I2H", b"PK\x03\x04", 20, 0, method, 0, 0, zlib.crc32(data), len(data),
                       len(data) if usize is None else usize, len(name), 0) + name + data  # fmt: skip


def central(
    name: bytes,
    data: bytes,
    offset: int,
    *,
    usize: int | None = None,
    method: int = 0,
    flags: int = 0,
    crc: int | None = None,
    csize: int | None = None,
    extra: bytes = b"",
) -> bytes:
    return struct.pack("<4s6H3I5H2I", b"PK\x01\x02", 20, 20, flags, method, 0, 0,
                       zlib.crc32(data) if crc is None else crc, len(data) if csize is None else csize,
                       len(data) if usize is None else usize, len(name), len(extra), 0, 0, 0, 0,
                       offset) + name + extra  # fmt: skip


def archive(body: bytes, records: list[bytes]) -> bytes:
    cd = b"".join(records)
    return body + cd + struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, len(records), len(records), len(cd), len(body), 0)


def test_a_stored_member_whose_sizes_disagree_is_not_read(tmp_path):
    """Stored data are their own size: one that declares more would be read past its end (into the next
    member or the directory)."""
    data = b"x" * 100
    for usize in (101, 99, 1000):
        path = tmp_path / f"s{usize}.zip"
        path.write_bytes(archive(local(b"a", data, usize=usize), [central(b"a", data, 0, usize=usize)]))
        [m] = list_members(str(path))
        assert m.error == f"stored member declares {usize} bytes but stores 100"
    path = tmp_path / "ok.zip"
    path.write_bytes(archive(local(b"a", data), [central(b"a", data, 0)]))
    [m] = list_members(str(path))
    assert m.error is None and read_member(str(path), m) == data


def test_members_inside_a_longer_member_are_all_refused(tmp_path):
    """One long member whose data hold two complete members that the directory also names: every record
    that shares bytes with another is refused, also the second one after a short one ended."""
    inner_b = local(b"b", b"B" * 40)
    inner_c = local(b"c", b"C" * 40)
    blob = inner_b + b"-" * 50 + inner_c + b"-" * 50
    big = local(b"big", blob)
    start = 30 + 3  # big's data begin after its local header and name
    records = [central(b"big", blob, 0), central(b"b", b"B" * 40, start),
               central(b"c", b"C" * 40, start + len(inner_b) + 50)]  # fmt: skip
    path = tmp_path / "overlap.zip"
    path.write_bytes(archive(big, records))
    assert {m.name: m.error for m in list_members(str(path))} == {"big": _OVERLAP, "b": _OVERLAP, "c": _OVERLAP}
    apart = tmp_path / "apart.zip"  # the same members one after the other: all read
    body = local(b"b", b"B" * 40) + local(b"c", b"C" * 40)
    apart.write_bytes(archive(body, [central(b"b", b"B" * 40, 0), central(b"c", b"C" * 40, 30 + 1 + 40)]))
    assert [(m.name, m.error) for m in list_members(str(apart))] == [("b", None), ("c", None)]


def test_a_deflate_member_may_declare_up_to_1024_times_its_size_plus_64(tmp_path):
    """docs/security.md: deflate reaches 1032x; a member claiming more than 1024x its compressed size + 64 bytes
    is not read (a zip bomb's claim), one at the bound is."""
    from cuda_fatbin._archive import MAX_RATIO

    raw = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = raw.compress(b"\0" * 4096) + raw.flush()
    assert MAX_RATIO == 1024
    for usize, refused in ((MAX_RATIO * len(data) + 64, False), (MAX_RATIO * len(data) + 65, True)):
        path = tmp_path / f"d{usize}.zip"
        records = [central(b"a", data, 0, usize=usize, method=8)]
        path.write_bytes(archive(local(b"a", data, usize=usize, method=8), records))
        [m] = list_members(str(path))
        if refused:
            assert m.error == (f"declares {usize} bytes from {len(data)} compressed, over 1024x (deflate reaches "
                               "1032x); a zip bomb? not read")  # fmt: skip
        else:
            assert m.error is None


def one(tmp_path, name: str, data: bytes, *, method: int = 0, stored: bytes | None = None, **kw) -> tuple[str, object]:
    """An archive of one member ``data`` (deflated when method=8; ``stored`` overrides the bytes written)."""
    if stored is None:
        if method == 8:
            c = zlib.compressobj(9, zlib.DEFLATED, -15)
            stored = c.compress(data) + c.flush()
        else:
            stored = data
    kw.setdefault("crc", zlib.crc32(data))
    usize = kw.pop("usize", len(data))
    path = tmp_path / name
    head = struct.pack("<4s5H3I2H", b"PK\x03\x04", 20, 0, method, 0, 0, kw["crc"], len(stored), usize, 1, 0) + b"m"
    path.write_bytes(archive(head + stored, [central(b"m", stored, 0, usize=usize, method=method, **kw)]))
    [m] = list_members(str(path))
    return str(path), m


def refused(fn, *args) -> tuple[int, str, str]:
    with pytest.raises(ArchiveError) as info:
        fn(*args)
    return info.value.errno, info.value.strerror, info.value.filename


def test_reading_a_member_says_what_is_wrong_and_where(tmp_path):
    data = bytes(range(256)) * 4
    for method in (0, 8):
        path, m = one(tmp_path, f"ok{method}.zip", data, method=method)
        assert read_member(path, m) == data and read_member(path, m, 5) == data[:5]
        assert read_member(path, m, 10**6) == data
        path, m = one(tmp_path, f"crc{method}.zip", data, method=method, crc=zlib.crc32(data) ^ 1)
        assert refused(read_member, path, m) == (errno.EIO, "CRC-32 does not match (corrupt member)",
                                                         f"{path}::m")  # fmt: skip
        assert read_member(path, m, 7) == data[:7]  # a head is read without the whole member's CRC
    path, m = one(tmp_path, "listed-bad.zip", data, usize=len(data) + 1)  # a stored member that lies
    assert refused(read_member, path, m) == (errno.EINVAL, m.error, f"{path}::m")
    path, m = one(tmp_path, "more.zip", data, method=8, usize=len(data) - 1)
    assert refused(read_member, path, m) == (
        errno.EIO,
        f"inflates to more than {len(data) - 1} bytes, its directory says {len(data) - 1}",
        f"{path}::m",
    )
    path, m = one(tmp_path, "fewer.zip", data, method=8, usize=len(data) + 9)
    assert refused(read_member, path, m) == (
        errno.EIO,
        f"inflates to {len(data)} bytes, its directory says {len(data) + 9}",
        f"{path}::m",
    )
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    unfinished = c.compress(data) + c.flush(zlib.Z_SYNC_FLUSH)  # every byte, but no final block
    path, m = one(tmp_path, "unfinished.zip", data, method=8, stored=unfinished)
    assert refused(read_member, path, m) == (
        errno.EIO,
        f"inflates to {len(data)} bytes, its directory says {len(data)}",
        f"{path}::m",
    )
    path, m = one(tmp_path, "garbage.zip", data, method=8, stored=b"\xff" * 64)
    code, text, where = refused(read_member, path, m)
    assert (code, where) == (errno.EIO, f"{path}::m") and text.startswith("corrupt deflate stream: ")
    path, m = one(tmp_path, "changed.zip", data)
    with open(path, "ab") as f:
        f.write(b"\0")
    assert refused(read_member, path, m) == (errno.EIO, "the archive changed since it was listed", path)


def test_a_member_that_inflates_past_its_size_is_not_inflated_whole(tmp_path):
    """Declared 100 bytes, 8 MiB inside: the read stops one byte past 100, in a few KiB of memory."""
    import tracemalloc

    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    stored = c.compress(b"\0" * (8 << 20)) + c.flush()
    path, m = one(tmp_path, "bomb.zip", b"\0" * 100, method=8, stored=stored)
    assert m.error is None  # 100 bytes from ~8 KiB: no claim to refuse
    tracemalloc.start()
    try:
        assert refused(read_member, path, m)[1] == "inflates to more than 100 bytes, its directory says 100"
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak


def test_a_deflate_stream_read_in_chunks_to_its_last_byte(tmp_path):
    """Compressed data longer than one read (_CHUNK), ending one byte into the last chunk."""
    data = os.urandom(3 * _CHUNK)
    for n in range(len(data), len(data) - 4096, -1):
        c = zlib.compressobj(0, zlib.DEFLATED, -15)  # stored deflate blocks: one byte of input, one byte more
        stored = c.compress(data[:n]) + c.flush()
        if len(stored) % _CHUNK == 1:
            break
    else:
        raise AssertionError("no length found")
    path, m = one(tmp_path, "chunks.zip", data[:n], method=8, stored=stored)
    assert read_member(path, m) == data[:n]


def test_names_flagged_utf8_and_the_others(tmp_path):
    """Bit 11 set: UTF-8 (bytes that are not: surrogateescape); unset: ASCII, else code page 437 as the ZIP
    format says."""
    for raw, flags, name in ((b"caf\xc3\xa9", 0x800, "café"), (b"k\xff", 0x800, "k\udcff"),
                             (b"\x80x", 0, "\u00c7x"), (b"plain", 0, "plain")):  # fmt: skip
        path = tmp_path / "n.zip"
        path.write_bytes(archive(local(raw, b"d"), [central(raw, b"d", 0, flags=flags)]))
        assert [m.name for m in list_members(str(path))] == [name]


def test_zip64_sizes_come_from_the_extra_field(tmp_path):
    data = b"z" * 300
    extra = struct.pack("<HHQQ", 1, 16, len(data), len(data))
    tag_first = struct.pack("<HH", 0x5455, 5) + b"\0" * 5 + extra  # another field before it
    for i, ex in enumerate((extra, tag_first)):
        path = tmp_path / f"z{i}.zip"
        path.write_bytes(archive(local(b"a", data), [central(b"a", data, 0, usize=0xFFFFFFFF, csize=0xFFFFFFFF,
                                                             extra=ex)]))  # fmt: skip
        [m] = list_members(str(path))
        assert (m.size, m.compressed, m.error) == (300, 300, None) and read_member(str(path), m) == data


def test_only_a_regular_archive_is_opened(tmp_path):
    fifo = tmp_path / "a.zip"
    os.mkfifo(fifo)
    assert refused(list_members, str(fifo)) == (errno.EINVAL, "a FIFO, not a regular file", str(fifo))
    good = tmp_path / "good.zip"
    good.write_bytes(archive(local(b"a", b"x"), [central(b"a", b"x", 0)]))
    link = tmp_path / "link.zip"
    link.symlink_to(good)
    assert [m.name for m in list_members(str(link))] == ["a"]
    with pytest.raises(OSError) as info:
        list_members(str(link), follow=False)
    assert info.value.errno == errno.ELOOP
    with open(good, "rb") as f:
        assert refused(lambda: _pread(f.fileno(), 10, good.stat().st_size - 4, "where")) == (
            errno.EIO,
            f"ended at {good.stat().st_size} while reading 10 bytes (changed while read?)",
            "where",
        )


def test_split_takes_the_first_separator_after_an_existing_archive(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.whl").write_bytes(b"")
    (tmp_path / "dir::x").mkdir()
    (tmp_path / "dir::x" / "b.zip").write_bytes(b"")
    (tmp_path / "::c.whl").write_bytes(b"")
    (tmp_path / "file").write_bytes(b"")
    assert split("a.whl::pkg/lib.so") == ("a.whl", "pkg/lib.so")
    assert split("a.whl::odd::name") == ("a.whl", "odd::name")
    assert split("dir::x/b.zip::m") == ("dir::x/b.zip", "m")
    assert split("::c.whl::m") == ("::c.whl", "m")
    assert split("missing.whl::m") == ("missing.whl::m", None)
    assert split("file::m") == ("file::m", None)
    assert split("a.whl") == ("a.whl", None)


def test_members_are_read_through_a_named_link_and_a_short_read_is_named(tmp_path, monkeypatch):
    data = bytes(range(200))
    for method in (0, 8):
        path, m = one(tmp_path, f"real{method}.zip", data, method=method)
        link = tmp_path / f"link{method}.zip"
        link.symlink_to(path)
        [listed] = list_members(str(link))
        assert read_member(str(link), listed) == data  # followed by default, as list_members does
        with pytest.raises(OSError) as info:
            read_member(str(link), listed, follow=False)
        assert info.value.errno == errno.ELOOP
        monkeypatch.setattr("cuda_fatbin._archive.os.pread", lambda fd, n, at, real=os.pread: real(fd, n, at)[:-1])
        code, text, where = refused(read_member, path, m)
        monkeypatch.undo()
        assert (code, where) == (errno.EIO, f"{path}::m") and text.startswith("ended at ")


def eocd(
    count: int, cd_size: int, cd_offset: int, *, disk: int = 0, cd_disk: int | None = None, comment: bytes = b""
) -> bytes:
    cd_disk = disk if cd_disk is None else cd_disk
    return struct.pack("<4s4H2IH", b"PK\x05\x06", disk, cd_disk, count, count, cd_size, cd_offset,
                       len(comment)) + comment  # fmt: skip


def test_the_end_records_are_found_and_checked(tmp_path):
    body = local(b"a", b"x" * 10)
    cd = central(b"a", b"x" * 10, 0)

    def listing(data: bytes, name: str):
        path = tmp_path / name
        path.write_bytes(data)
        try:
            return [(m.name, m.size, m.error) for m in list_members(str(path))]
        except ArchiveError as e:
            return (e.errno, e.strerror, e.filename == str(path))

    ok = [("a", 10, None)]
    assert listing(body + cd + eocd(1, len(cd), len(body)), "plain.zip") == ok
    decoy = b"PK\x05\x06" + b"\0" * 6  # an end record's signature in the comment, too short to be one
    assert listing(body + cd + eocd(1, len(cd), len(body), comment=decoy), "comment.zip") == ok
    assert listing(b"#!/bin/sh\n" * 10 + body + cd + eocd(1, len(cd), len(body)), "sfx.zip") == ok  # shifted
    assert listing(b"not a zip at all" * 4, "none.zip") == (
        errno.EINVAL,
        "not a ZIP archive (no end of central directory record; truncated?)",
        True,
    )
    assert listing(body + cd + eocd(1, len(cd), len(body), disk=1), "split.zip") == (
        errno.EINVAL,
        "a multi-disk (split) archive; not read",
        True,
    )
    assert listing(body + cd + eocd(1, len(cd), 10**6), "outside.zip") == (
        errno.EINVAL,
        f"central directory ({len(cd)} bytes at {10**6}) lies outside the file (truncated?)",
        True,
    )
    assert listing(body + cd + eocd(2, len(cd), len(body)), "count.zip") == (
        errno.EINVAL,
        f"2 members cannot fit a central directory of {len(cd)} bytes",
        True,
    )
    zip64 = struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, 1, 1, len(cd), len(body))
    locator = struct.pack("<4sIQI", b"PK\x06\x07", 0, len(body) + len(cd), 1)
    end = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    assert listing(body + cd + zip64 + locator + end, "zip64.zip") == ok
    no_record = body + cd + b"\0" * len(zip64) + locator + end
    assert listing(no_record, "lost64.zip") == (
        errno.EINVAL,
        f"no ZIP64 end record where its locator says ({len(body) + len(cd)})",
        True,
    )


@pytest.mark.parametrize(("fields", "given", "expected"), [
    ([(1, [7, 8])], (0xFFFFFFFF, 0xFFFFFFFF, 5), (7, 8, 5)),
    ([(1, [8])], (3, 0xFFFFFFFF, 5), (3, 8, 5)),
    ([(1, [9])], (3, 4, 0xFFFFFFFF), (3, 4, 9)),
    ([(1, [7, 8, 9])], (0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), (7, 8, 9)),
    ([(1, [7])], (0xFFFFFFFF, 0xFFFFFFFF, 5), (7, 0xFFFFFFFF, 5)),  # fewer values than placeholders
    ([(0x5455, b"\0" * 5), (1, [7])], (0xFFFFFFFF, 4, 5), (7, 4, 5)),  # another field first
    ([(1, [7]), (1, [99])], (0xFFFFFFFF, 4, 5), (7, 4, 5)),  # the first ZIP64 field counts
    ([(1, b"\1\2\3")], (0xFFFFFFFF, 4, 5), (0xFFFFFFFF, 4, 5)),  # a body too short for a value
    ([(0x5455, b"")], (0xFFFFFFFF, 4, 5), (0xFFFFFFFF, 4, 5)),
    ([(1, [7, 8])], (0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), (7, 8, 0xFFFFFFFF)),  # no value left for the offset
    ([(1, [2**63 + 5])], (0xFFFFFFFF, 4, 5), (2**63 + 5, 4, 5)),  # unsigned
    ([(0x5455, b"\0" * 5), (0x7075, b"\0" * 3), (1, [7])], (0xFFFFFFFF, 4, 5), (7, 4, 5)),  # two fields first
    ([(1, struct.pack("<Q", 7) + b"\x01" * 7), (0x5455, b"\x02")], (0xFFFFFFFF, 0xFFFFFFFF, 5),
     (7, 0xFFFFFFFF, 5)),  # 15 bytes: one value; the next field's bytes are not part of it
    ([(0x5455, b"\0" * 0x9000)], (0xFFFFFFFF, 4, 5), (0xFFFFFFFF, 4, 5)),  # a length over 0x7FFF
])  # fmt: skip
def test_zip64_extra_takes_the_values_the_record_left_open(fields, given, expected):
    from cuda_fatbin._archive import _zip64_extra

    extra = b""
    for tag, body in fields:
        raw = body if isinstance(body, bytes) else b"".join(struct.pack("<Q", v) for v in body)
        extra += struct.pack("<HH", tag, len(raw)) + raw
    assert _zip64_extra(extra, *given) == expected
    assert _zip64_extra(extra + b"\1\0\x08", *given) == expected  # a stub of a header at the end is no field


def test_directory_records_and_local_headers_are_checked_one_by_one(tmp_path, monkeypatch):
    def listing(data: bytes, name: str, **kw):
        path = tmp_path / name
        path.write_bytes(data)
        try:
            return [(m.name, m.data_offset, m.error) for m in list_members(str(path), **kw)]
        except ArchiveError as e:
            return (e.errno, e.strerror, e.filename == str(path))

    body = local(b"a", b"x" * 10)
    good = central(b"a", b"x" * 10, 0)
    garbage = b"\0" * 46
    assert listing(body + garbage + eocd(1, 46, len(body)), "g0.zip") == (
        errno.EINVAL,
        f"central directory record 0 of 1 is not one (at {len(body)})",
        True,
    )
    cd = good + garbage
    assert listing(body + cd + eocd(2, len(cd), len(body)), "g1.zip") == (
        errno.EINVAL,
        f"central directory record 1 of 2 is not one (at {len(body) + len(good)})",
        True,
    )
    long_name = good[:28] + struct.pack("<H", 200) + good[30:]  # the name runs past the directory
    assert listing(body + long_name + eocd(1, len(long_name), len(body)), "long.zip") == (
        errno.EINVAL,
        "central directory record 0 runs past the directory",
        True,
    )
    # a record with an extra field and a comment, then another: both found
    second = local(b"b", b"y" * 5)
    rich = good[:30] + struct.pack("<HH", 4, 3) + good[34:] + b"EXTRcom"  # name, 4 bytes of extra, 3 of comment
    cd = rich + central(b"b", b"y" * 5, len(body))
    assert listing(body + second + cd + eocd(2, len(cd), len(body) + len(second)), "rich.zip") == [
        ("a", 31, None),
        ("b", len(body) + 31, None),
    ]
    # data that run into the directory, a missing local header, data ending exactly at the directory
    cd = central(b"a", b"x" * 10, 0, csize=12)
    assert listing(body + cd + eocd(1, len(cd), len(body)), "into.zip") == [
        ("a", 0, "its data (12 bytes at 0) run into the central directory or past the file")
    ]
    shifted = b"\0" * 4 + body
    cd = central(b"a", b"x" * 10, 2)
    assert listing(shifted + cd + eocd(1, len(cd), len(shifted)), "nolocal.zip") == [("a", 0, "no local header at 2")]
    bare = struct.pack("<4s5H3I2H", b"PK\x03\x04", 20, 0, 0, 0, 0, zlib.crc32(b"x" * 10), 10, 10, 0, 0) + b"x" * 10
    cd = central(b"a", b"x" * 10, 0)  # local header without a name: the data end exactly where the directory starts
    assert listing(bare + cd + eocd(1, len(cd), len(bare)), "edge.zip") == [("a", 30, None)]
    cd = central(b"a", b"x" * 10, 0, csize=10)
    named = local(b"abc", b"x" * 10)[:-1]  # one byte short: the name pushes the data into the directory
    assert listing(named + cd + eocd(1, len(cd), len(named)), "named.zip")[0][2] == (
        "its data (10 bytes at 33) run into the central directory"
    )
    path = tmp_path / "heads.zip"
    path.write_bytes(archive(local(b"a", b"0123456789"), [central(b"a", b"0123456789", 0)]))
    assert [m.head for m in list_members(str(path), head=4)] == [b"0123"]
    real = os.pread
    monkeypatch.setattr(
        "cuda_fatbin._archive.os.pread",
        lambda fd, n, at: real(fd, n, at)[:-1] if n == len(central(b"a", b"", 0)) else real(fd, n, at),
    )
    assert refused(list_members, str(path))[2] == str(path)  # the directory read short: the archive is named


def test_end_record_edges(tmp_path, monkeypatch):
    def listing(data: bytes, name: str):
        path = tmp_path / name
        path.write_bytes(data)
        try:
            return [m.name for m in list_members(str(path))]
        except ArchiveError as e:
            return (e.errno, e.strerror)

    assert listing(eocd(0, 0, 0), "empty.zip") == []  # the end record at offset 0, a directory of 0 bytes
    assert listing(eocd(0, 0, 0, comment=b"PK\x05\x06xx"), "empty-decoy.zip") == []
    assert listing(b"PK\x05\x06" + b"\0" * 10, "stub.zip") == (
        errno.EINVAL,
        "not a ZIP archive (no end of central directory record; truncated?)",
    )
    body = local(b"a", b"PK\x05\x06" + b"\0" * 18)  # a member that holds an end record: the last one counts
    cd = central(b"a", b"PK\x05\x06" + b"\0" * 18, 0)
    assert listing(body + cd + eocd(1, len(cd), len(body)), "inner-end.zip") == ["a"]
    decoy = eocd(1, len(cd), len(body), comment=b"PK\x05\x06xx")  # and a decoy after the real one
    assert listing(body + cd + decoy, "inner-end-decoy.zip") == ["a"]
    assert listing(body + cd + eocd(1, len(cd), len(body), cd_disk=1), "cd-disk.zip") == (
        errno.EINVAL,
        "a multi-disk (split) archive; not read",
    )
    zip64 = struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, 0, 0, 0, 0)
    locator = struct.pack("<4sIQI", b"PK\x06\x07", 0, 0, 1)
    end = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    assert listing(zip64 + locator + end, "empty64.zip") == []  # the ZIP64 record at offset 0
    nameless = local(b"", b"x")
    cd = central(b"", b"x", 0)  # a record of exactly 46 bytes, the whole directory
    assert listing(nameless + cd + eocd(1, len(cd), len(nameless)), "nameless.zip") == [""]
    first = central(b"n" * 40, b"x", 0)
    cd = first + b"PK\x01\x02" + b"\0" * 10  # room for two records by size, the second cut short
    assert listing(local(b"n" * 40, b"x") + cd + eocd(2, len(cd), 71), "cut.zip") == (
        errno.EINVAL,
        f"central directory record 1 of 2 is not one (at {71 + len(first)})",
    )
    path = tmp_path / "empty64.zip"
    for size in (path.stat().st_size, 20, 56):  # the end record, the ZIP64 locator, the ZIP64 record read short
        monkeypatch.setattr(
            "cuda_fatbin._archive.os.pread",
            lambda fd, n, at, size=size, real=os.pread: real(fd, n, at)[: -1 if n == size else None],
        )
        assert refused(list_members, str(path))[2] == str(path)
        monkeypatch.undo()
    path = tmp_path / "plain.zip"
    path.write_bytes(archive(local(b"a", b"x"), [central(b"a", b"x", 0)]))
    monkeypatch.setattr(
        "cuda_fatbin._archive.os.pread",
        lambda fd, n, at, real=os.pread: real(fd, n, at)[: -1 if (n, at) == (30, 0) else None],
    )
    assert refused(list_members, str(path))[2] == str(path)  # a local header read short


def test_an_encrypted_member_is_named_not_read(tmp_path):
    path = tmp_path / "enc.zip"
    path.write_bytes(archive(local(b"a", b"x"), [central(b"a", b"x", 0, flags=1)]))
    assert [m.error for m in list_members(str(path))] == ["encrypted; not read"]
