"""_archive's refusals by exact values, on zips written byte by byte (zipfile will not write them): the
promises of docs/security.md about members that lie about their size or share their data."""

from __future__ import annotations

import struct
import zlib

from cuda_fatbin._archive import _OVERLAP, list_members, read_member


def local(name: bytes, data: bytes, *, usize: int | None = None, method: int = 0) -> bytes:
    return struct.pack("<4s5H3I2H", b"PK\x03\x04", 20, 0, method, 0, 0, zlib.crc32(data), len(data),
                       len(data) if usize is None else usize, len(name), 0) + name + data  # fmt: skip


def central(name: bytes, data: bytes, offset: int, *, usize: int | None = None, method: int = 0) -> bytes:
    return struct.pack("<4s6H3I5H2I", b"PK\x01\x02", 20, 20, 0, method, 0, 0, zlib.crc32(data), len(data),
                       len(data) if usize is None else usize, len(name), 0, 0, 0, 0, 0, offset) + name  # fmt: skip


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
