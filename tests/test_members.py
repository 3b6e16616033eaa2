# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Members of concatenated entries (libnvfatbin ``concat``): every field read, every malformed table refused.

The member table layout is in docs/formats.md; each corruption below must give a FatbinFormatError that
names what is wrong and where, never a crash or a silent misread.
"""

from __future__ import annotations

import struct

import pytest

from cuda_fatbin import FatbinFormatError, FatbinOptions, Part, build_fatbin, nvfatbin_version, read_fatbin

from elf_testing import patched

pytestmark = pytest.mark.skipif(nvfatbin_version() < (13, 4), reason="libnvfatbin < 13.4 has no concat")
CONCAT = FatbinOptions(concat=True)


class Table:
    """Where the member table of the first entry of ``data`` lies, and edits of its fields."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = read_fatbin(data).entries[0].offset
        (self.hsize,) = struct.unpack_from("<I", data, self.pos + 4)
        (table_off,) = struct.unpack_from("<I", data, self.pos + 0x14)
        self.at = self.pos + table_off
        self.count, self.size = struct.unpack_from("<II", data, self.at)
        self.record = self.at + 8  # the first member record

    def put(self, offset: int, fmt: str, value: int) -> bytes:
        return patched(self.data, offset, fmt, value)

    def refused(self, data: bytes) -> tuple[int, str]:
        with pytest.raises(FatbinFormatError) as info:
            read_fatbin(data)
        return info.value.offset, info.value.message


@pytest.fixture(scope="module")
def two(artifacts) -> Table:
    parts = [Part(artifacts[("cubin", "sm_80")], identifier="a"), Part(artifacts[("cubin", "sm_90")], identifier="bc")]
    return Table(build_fatbin(parts, options=CONCAT))


@pytest.mark.parametrize("n", range(1, 18))
def test_identifier_and_options_of_every_length(artifacts, n):
    """Records are padded to 8 bytes after their strings: every string length must land on the next record."""
    cubins = [artifacts[("cubin", "sm_80")], artifacts[("cubin", "sm_90")]]
    ptx = [artifacts[("ptx", "sm_80")], artifacts[("ptx", "sm_90")]]
    data = build_fatbin(
        [
            Part(cubins[0], identifier="i" * n),
            Part(cubins[1], identifier="j" * (19 - n)),
            Part(ptx[0], kind="ptx", identifier="p" * n, options="-O3" + " -v" * n),
            Part(ptx[1], kind="ptx"),
        ],
        options=CONCAT,
    )
    fb = read_fatbin(data)
    by_kind = {e.members[0].kind: e for e in fb.entries}
    elf, ptx_members = by_kind["elf"].members, by_kind["ptx"].members
    assert [(m.identifier, m.options) for m in elf] == [("i" * n, None), ("j" * (19 - n), None)]
    assert [(m.identifier, m.options) for m in ptx_members] == [("p" * n, "-O3" + " -v" * n), (None, "")]
    assert [m.data() for m in elf] == cubins
    for parent in fb.entries:
        for m in parent.members:
            assert (m.compression, m.stored_size, m.offset, m._parent) == ("none", 0, parent.offset, parent)
            assert m.concatenated and not parent.concatenated


def test_a_table_without_members_is_empty(two):
    empty = patched(two.put(two.at, "<I", 0), two.at + 4, "<I", 8)
    assert read_fatbin(empty).entries[0].members == ()


def test_malformed_member_tables_say_what_and_where(two):
    t = two
    size = t.size  # two records of 64 + 8 bytes (identifiers "a", "bc"), after the 8-byte table header
    assert (t.count, size, t.at + size) == (2, 8 + 72 + 72, t.pos + t.hsize)
    assert t.refused(t.put(t.pos + 0x14, "<I", 0x20)) == (t.pos + 0x14, "concatenated entry has no member table")
    # too many members for the table, a table too small for its header or past the entry header
    for count, claimed in ((1000, size), (2, 4), (0, 4), (0, 7), (2, size + 8), (3, size), (2, 120)):
        edited = patched(t.put(t.at, "<I", count), t.at + 4, "<I", claimed)
        message = f"member table ({count} members, {claimed} bytes) does not fit the header"
        assert t.refused(edited) == (t.pos, message)
    assert t.refused(t.put(t.at, "<I", 1)) == (t.at, f"the 1 member records take 72 bytes; the table holds {size - 8}")
    shorter = t.put(t.at + 4, "<I", size - 8)  # the table ends before the second record's identifier
    assert t.refused(shorter) == (t.record + 72, "member identifier (2 bytes at +0x40) lies outside the entry header")
    no_room = t.put(t.at + 4, "<I", size - 16)  # ... and inside its header
    assert t.refused(no_room) == (t.record + 72, "truncated member header: need 64 bytes, 56 left")


def test_members_must_lie_in_the_stream_without_overlap(two):
    t = two
    stream = read_fatbin(t.data).entries[0].size
    first, second = read_fatbin(t.data).entries[0].members
    overlap = t.put(t.record + 4, "<I", 8)  # the first member now runs into the second
    assert t.refused(overlap) == (
        t.pos, f"member elf at stream offset {second._member_offset} ({second.size} bytes) overlaps another or runs "
        f"past the {stream}-byte stream",
    )  # fmt: skip
    past = t.put(t.record + 8, "<Q", stream + 1)
    assert t.refused(past) == (
        t.pos, f"member elf at stream offset 0 ({stream + 1} bytes) overlaps another or runs past the {stream}-byte "
        "stream",
    )  # fmt: skip
    exact = t.put(t.record + 8, "<Q", second._member_offset)  # ends where the second begins: allowed
    assert read_fatbin(exact).entries[0].members[0].size == first.size


def test_member_strings_outside_the_table(two):
    t = two
    assert t.refused(t.put(t.record + 32, "<I", 5000)) == (
        t.record, "member identifier (1 bytes at +0x1388) lies outside the entry header"
    )  # fmt: skip
    assert t.refused(t.put(t.record + 36, "<I", 5000)) == (
        t.record, "member identifier (5000 bytes at +0x40) lies outside the entry header"
    )  # fmt: skip
    offset, message = t.refused(t.put(t.record + 20, "<I", 5000))
    assert message.startswith("truncated member options record") and offset == t.record + 5000


def test_member_table_header_and_count_fields(two):
    t = two
    cut = t.put(t.pos + 0x14, "<I", t.hsize - 4)  # the table header would straddle the entry header's end
    assert t.refused(cut) == (t.pos + t.hsize - 4, "truncated member table header: need 8 bytes, 4 left")
    huge = t.put(t.at, "<I", 0x80000000)  # unsigned: not a negative count
    assert t.refused(huge) == (t.pos, f"member table (2147483648 members, {t.size} bytes) does not fit the header")
    assert t.refused(t.put(t.at + 4, "<I", t.size - 4)) == (
        t.at, f"the 2 member records take {t.size - 8} bytes; the table holds {t.size - 12}"
    )  # fmt: skip


def test_an_elf_members_options_record_holds_attributes_not_text(artifacts):
    """libnvfatbin points an SM >= 100 cubin member's options record at its .nv.compat attributes."""
    if ("cubin", "sm_100") not in artifacts:
        pytest.skip("NVRTC without sm_100")
    data = build_fatbin([artifacts[("cubin", "sm_100")]], options=CONCAT)
    t = Table(data)
    (opt_off,) = struct.unpack_from("<I", data, t.record + 20)
    _s_off, s_len = struct.unpack_from("<II", data, t.record + opt_off)
    assert opt_off and s_len  # the record is there and not empty ...
    [member] = read_fatbin(data).entries[0].members
    assert (member.kind, member.options) == ("elf", None)  # ... and is not read as options text


def test_a_record_is_as_long_as_its_furthest_field(two):
    """Hand-made layouts libnvfatbin does not write: an empty options record {0, 0}, and an identifier
    placed after it. A record is as long as its furthest field, padded to 8 bytes."""
    t = two
    data = bytearray(t.data)
    r1, r2 = t.record, t.record + 72
    header2 = bytes(data[r2 : r2 + 64])
    # record 1: header, options record {0, 0} at +64, identifier "a" at +72, padded to 80
    struct.pack_into("<I", data, r1 + 20, 64)  # opt_off
    struct.pack_into("<II", data, r1 + 32, 72, 1)  # identifier at +72, 1 byte
    data[r1 + 64 : r1 + 80] = bytes(8) + b"a\0" + bytes(6)
    # record 2 at +80, without its identifier: 64 bytes, so the records still fill the table
    data[r1 + 80 : r1 + 144] = header2
    struct.pack_into("<II", data, r1 + 80 + 32, 0, 0)
    members = read_fatbin(bytes(data)).entries[0].members
    assert [(m.kind, m.identifier, m.options) for m in members] == [("elf", "a", None), ("elf", None, None)]
    # without the identifier, record 1 ends with its options record: 72 bytes, so the next record is read
    # from +72, where "a" and the padding now make a header whose fields point nowhere
    struct.pack_into("<II", data, r1 + 32, 0, 0)
    offset, message = t.refused(bytes(data))
    assert offset == r1 + 72 and message.startswith("member identifier (90 bytes at +0x10008) lies outside")
