# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Work and output stay linear in the input: each test pins one row of docs/security.md's "Bounds".

Checked by counting the operations that grew (comparisons, bytes written or read) or by an input so large that
the quadratic code could not finish under the test's timeout while the linear one takes well under a second.
"""

from __future__ import annotations

import io
import re
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuda_fatbin import _reader, _source, iter_fatbins, parse_archs
from cuda_fatbin._reader import Fatbin
from cuda_fatbin._select import judge
from cuda_fatbin._term import MAX_PAD, table

from elf_testing import make_elf

_ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")


def tiny_fatbin() -> bytes:
    """An 80-byte fatbin: version 1, a 16-byte header, one empty PTX entry."""
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 64) + _ENTRY.pack(1, 0x101, 64, 0, 0, 0, 0, 8, 80, 0, 0, 0x11, 0, 0)


def _stub_fatbin() -> bytes:
    """A fatbin of one sm_80 cubin without code (no ``.text.*`` section): what nvcc's device-link stubs hold."""
    stub = make_elf([(".nv.info", 0x70000000, bytes(8))], machine=190, flags=80, e_type=2)
    stub += bytes(-len(stub) % 8)
    entry = _ENTRY.pack(2, 0x101, 64, len(stub), 0, 0, 0, 1, 80, 0, 0, 0x11, 0, 0) + stub
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(entry)) + entry


def test_judging_kernel_less_fatbins_compares_each_once(monkeypatch):
    """Issue 51: each registered fatbin was looked up in the list of kernel-less ones (8k/16k/32k: 0.9/3.2/12.7 s
    a GPU). Counted: a lookup compares the fatbins themselves; the work must stay linear in their number."""
    k = 2000
    fatbins = list(iter_fatbins(make_elf([(".nv_fatbin", 1, _stub_fatbin() * k)], e_type=3)))
    compared = 0

    def counting_eq(self: Fatbin, other: object) -> bool:
        nonlocal compared
        compared += 1
        return self is other

    monkeypatch.setattr(Fatbin, "__eq__", counting_eq)
    monkeypatch.setattr(Fatbin, "__hash__", object.__hash__)
    got = judge(fatbins, ["9.0", "8.0"])
    assert got["9.0"] == {"status": "no kernels", "reason": f"its fatbins hold no code; {k} registered fatbins "
                                                            "without code skipped"}  # fmt: skip
    assert got["8.0"]["status"] == "SASS exact"  # a code-less cubin that loads is not skipped
    assert compared <= 4 * k  # the list search made k * k / 2 = 2,000,000 comparisons


@pytest.mark.timeout(60)
def test_parse_archs_is_linear_in_the_words_beside_gencode_clauses():
    """Issue 51: each word next to a gencode clause was looked up in the list of lto_ words (90/180/360 KB:
    0.8/3.2/15.9 s). 1.8 MB here: about 0.8 s; the list search needed hours."""
    spec = "arch=compute_80,code=sm_80 " + "lto_80 x " * 200_000
    with pytest.raises(ValueError, match="malformed gencode spec"):
        parse_archs(spec)
    assert parse_archs("arch=compute_80,code=sm_80 " + "lto_80 LTO_90 " * 100_000).ltoir  # the words are kept


def test_a_long_cell_widens_no_other_row_of_a_table():
    """Issue 51: scan's table padded every row to the longest distribution name (1 MiB x 200 rows: 212 MB).
    A column is padded up to MAX_PAD characters; a longer cell is written once, whole."""
    name = "n" * (1 << 20)
    rows = [(name, 1, "SASS")] + [(f"dist-{i}", 1, "SASS") for i in range(199)]
    out = io.StringIO()
    table(["distribution", "binaries", "9.0"], rows, out)
    text = out.getvalue()
    assert len(text) < len(name) + 202 * (MAX_PAD + 20)  # 1.07 MB; 212 MB before
    assert name in text  # never cut
    short = text.splitlines()[3]
    assert short.startswith("dist-0 ") and len(short) <= MAX_PAD + 2 + len("binaries") + 2 + len("SASS")


# --- a sparse payload: judged by what the file holds on disk, not by its apparent size (in a child process) ---

_CLI_CHILD = r"""
import contextlib, io, json, runpy, sys, time
def peak_mb():  # VmHWM: this process's peak since exec
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) // 1024 for line in f if line.startswith("VmHWM:"))
out, start = io.StringIO(), time.perf_counter()
sys.argv = ["cuda-fatbin", *sys.argv[1:]]
with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
    runpy.run_module("cuda_fatbin", run_name="__main__")
print(json.dumps({"out": out.getvalue(), "seconds": time.perf_counter() - start, "peak_mb": peak_mb()}))
"""


def _cli_child(*args):
    import json
    import subprocess
    import sys

    if not sys.platform.startswith("linux"):
        pytest.skip("the child reads its peak memory from /proc (Linux)")
    res = subprocess.run([sys.executable, "-c", _CLI_CHILD, *map(str, args)], capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout)


def _sparse_fatbin(path, kind: str, head: bytes, apparent: int) -> None:
    """A fatbin of one entry (``kind`` sm_90 in its header) whose payload is ``head`` and then a hole, to ``apparent``
    bytes in all."""
    body = apparent - 16
    entry = _ENTRY.pack(2 if kind == "elf" else 1, 0x101, 64, body - 64, 0, 0, 0, 8, 90, 0, 0, 0x11, 0, 0)
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHQ", 0xBA55ED50, 1, 16, body) + entry + head)
        f.truncate(apparent)


@pytest.mark.parametrize(
    ("kind", "head", "verdict", "commands"),
    [
        ("elf", b"", "data that is not ELF", ("inspect", "which", "scan")),  # issue 51: 1 GiB of holes: 5.6 s, 1-2 GB
        ("elf", _stub_fatbin()[80:], "the ELF image is for sm_80", ("which",)),  # a cubin without code, then the hole
        ("ptx", b".version 8.8\n.target sm_100\n", "the PTX .target is sm_100", ("which",)),
    ],
)
def test_a_sparse_payload_costs_what_the_file_holds(tmp_path, kind, head, verdict, commands):
    """inspect, which and scan judge an entry by reading its payload in place, holes skipped: never through the map
    nor by a copy of the payload. 1 GiB apparent, a few KB on disk."""
    path = tmp_path / "sparse.fatbin"
    _sparse_fatbin(path, kind, head, 1 << 30)
    for command in commands:
        extra = {"inspect": [], "which": ["--gpu", "90", "--json"], "scan": ["--gpu", "90", "-j", "1"]}[command]
        got = _cli_child(command, path, *extra)
        assert got["peak_mb"] < 256, (command, got)  # 1,064 MB (inspect) and 2,113 MB (which) before
        assert got["seconds"] < 30, (command, got)  # 0.1-0.3 s here, 5.8-7.7 s before
        if command == "which":
            assert verdict in got["out"]


def _fatbin_of(kind: int, payload: bytes) -> bytes:
    payload += bytes(-len(payload) % 8)
    entry = _ENTRY.pack(kind, 0x101, 64, len(payload), 0, 0, 0, 8, 90, 0, 0, 0x11, 0, 0) + payload
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(entry)) + entry


@pytest.mark.parametrize("kind", [1, 2])  # a PTX header, an ELF header
def test_a_payload_read_in_place_is_judged_as_its_bytes(tmp_path, kind):
    """The PTX test of a payload in a mapped file (directives found in windows, within the payload) says what the
    regex says of the payload's bytes: directives at its first and last bytes, none before or after it."""
    body = b"// " + b"x" * (2 << 20) + b"\n"  # over 1 MiB: the file is mapped
    cases = [
        b".version 8.5\n.target sm_100\n" + body,  # at the payload's first byte
        b"  \t.version 9.0\n.target sm_90a\n" + body,
        body + b".target sm_80\n.version 8.5",  # at its last bytes
        body + b"x.version 8.0\n.target sm_80\n",  # not at a line start
        body + b".version 8.0\n.target\nsm_80\n.target sm_86\n",
        body + b".version 8.0\n.target sm_" + b"9" * 5000 + b"\n",
        body,  # no directive: not PTX
    ]
    for i, payload in enumerate(cases):
        data = _fatbin_of(kind, payload)
        path = tmp_path / f"p{i}.fatbin"
        path.write_bytes(data)

        def outcome(source):
            (fb,) = iter_fatbins(source)
            entry = fb.entries[0]
            try:
                target = str(entry._ptx_target())
            except ValueError as e:
                target = type(e).__name__
            return target, entry.payload_mismatch

        assert outcome(path) == outcome(data), f"case {i}"
    around = tmp_path / "around.bin"  # directives outside the payload: in the file, not in the entry
    data = make_elf([(".rodata", 1, b".version 8.0\n.target sm_75\n"), (".nv_fatbin", 1, _fatbin_of(kind, body)),
                     (".data", 1, b"\n.version 8.0\n.target sm_75\n")])  # fmt: skip
    around.write_bytes(data)
    assert [fb.entries[0]._ptx_target() for fb in iter_fatbins(around)] == [None]


# --- padding between fatbins: a bounded windowed scan, not a regex holding state for each byte of the run ---

_OLD_PADDING = re.compile(rb"(?:\0\0\0\0.{4})*", re.DOTALL)  # the pattern _walk used until issue 51
_WORDS = st.lists(st.sampled_from([bytes(8), bytes(4) + b"\1\2\3\4", b"\0\0\0\1" + bytes(4), b"\1" + bytes(7)]))


@settings(max_examples=300, deadline=None)
@given(_WORDS, st.binary(max_size=9), st.integers(0, 40), st.integers(0, 40))
def test_padding_ends_where_the_old_pattern_ended(words, tail, pos, cut):
    data = b"".join(words) + tail
    pos, end = min(pos, len(data)), max(0, len(data) - cut)
    src = _reader._Data(memoryview(data), data)
    assert src.padding_end(pos, max(pos, end)) == _OLD_PADDING.match(data, pos, max(pos, end)).end()


@pytest.mark.parametrize("chunk", [8, 16, 1 << 20])
def test_padding_across_chunks_and_holes_ends_where_the_old_pattern_ended(tmp_path, monkeypatch, chunk):
    """A mapped file (over 1 MiB) read through pread: holes (zeros) at offsets that are not multiples of 8,
    words that straddle a hole's end, a run across chunks."""
    monkeypatch.setattr(_source, "_PADDING_CHUNK", chunk)
    size = (1 << 20) + (64 << 10)
    for island in (5, 4096 + 3, (1 << 20) - 2, (1 << 20) + 7, size - 9, None):
        path = tmp_path / f"holes{island}.bin"
        with open(path, "wb") as f:
            f.truncate(size)
            if island is not None:
                f.seek(island)
                f.write(b"\1")
        data = path.read_bytes()
        src = _reader._open(str(path))
        assert src.fd is not None  # mapped, read through pread
        for pos in (0, 3, 8, island or 0, max(0, (island or 0) - 8)):
            for end in (size, size - 3, min(size, (island or size) + 2)):
                if pos <= end:
                    assert src.padding_end(pos, end) == _OLD_PADDING.match(data, pos, end).end(), (island, pos, end)


@pytest.mark.parametrize("layout", ["sparse", "dense"])
def test_padding_after_a_fatbin_costs_what_the_file_holds(tmp_path, layout):
    """Issue 51 follow-up: zeros after a fatbin were matched by a regex holding 16 bytes of state a byte (128 MiB:
    2.1 GB, 4.8 s sparse, 2.8 s dense). Now 1 MiB at a time, holes skipped: the same error, 17 MB."""
    path = tmp_path / "padded.fatbin"
    size = (128 << 20) if layout == "sparse" else (64 << 20)  # small enough that a regression fails, not swaps
    with open(path, "wb") as f:
        f.write(tiny_fatbin())
        if layout == "dense":
            f.write(bytes(size - 80))
        f.truncate(size)
    got = _cli_child("inspect", path)
    assert got["peak_mb"] < 256, got  # 1,064 MB (64 MiB dense) and 2,113 MB (128 MiB sparse) before; 17 MB now
    assert got["seconds"] < 30, got


# --- a section table in a hole: read as the file holds it (issue 51) ---


def _sparse_table_elf(path, rows_before: int, sections=()) -> bytes:
    """An ELF image whose section table (extended numbering) starts with ``rows_before`` null rows in a hole, then the
    rows of ``make_elf(sections)`` (minus its null row) and the table's data; written sparse to ``path``. Returns the
    same file's bytes, dense."""
    image = bytearray(make_elf(list(sections), e_type=3))
    shoff, count = struct.unpack_from("<Q", image, 0x28)[0], struct.unpack_from("<H", image, 0x3C)[0]
    head, real = bytes(image[:shoff]), bytes(image[shoff + 64 : shoff + count * 64])
    new_shoff = -(-len(head) // 4096) * 4096
    total = rows_before + count
    row0 = struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, total, total - 1, 0, 0, 0)  # count, then .shstrtab's index
    out = bytearray(head + bytes(new_shoff - len(head)))
    struct.pack_into("<Q", out, 0x28, new_shoff)
    struct.pack_into("<HH", out, 0x3C, 0, 0xFFFF)
    hole_end = new_shoff + 64 + rows_before * 64  # row 0 is data; the rows after it a hole up to the real rows
    with open(path, "wb") as f:
        f.write(out + row0)
        f.seek(hole_end)
        f.write(real)
    return bytes(out + row0 + bytes(rows_before * 64) + real)


def test_a_sparse_section_table_costs_what_the_file_holds(tmp_path):
    """Issue 51: an 8 KB ELF file whose section table is 61/122/244 MiB of holes (extended numbering) cost its
    apparent size: 5.9/11.4/18.8 s and 263/512/1,009 MB (inspect). Rows in holes are skipped: 0.2 s, 15 MB each."""
    path = tmp_path / "holes.so"
    _sparse_table_elf(path, 2 << 20, [(".text", 1, b"\x90" * 64)])  # 128 MiB of table, 12 KB on disk
    assert path.stat().st_blocks * 512 < (1 << 20)
    for command in ("inspect", "which", "scan"):
        extra = {"inspect": [], "which": ["--gpu", "90", "--json"], "scan": ["--gpu", "90", "-j", "1"]}[command]
        got = _cli_child(command, path, *extra)
        assert got["peak_mb"] < 128, (command, got)  # 512 MB before
        assert got["seconds"] < 30, (command, got)  # 6-11 s before
        if command == "which":
            assert "no device code in it" in got["out"]


def test_sections_after_a_hole_in_the_table_are_read_as_in_a_dense_file(tmp_path):
    """The rows the file holds keep their indexes: the name table is found by its index past the hole, and the
    fatbin its row names is read, as from the same bytes written densely."""
    fatbin = tiny_fatbin() + bytes(1 << 20)  # over 1 MiB in all: the file is mapped
    sparse, dense = tmp_path / "sparse.so", tmp_path / "dense.so"
    dense.write_bytes(_sparse_table_elf(sparse, 100_000, [(".nv_fatbin", 1, fatbin)]))
    assert sparse.read_bytes() == dense.read_bytes()
    got = [(f.offset, f.size, f.section) for f in iter_fatbins(sparse)]
    assert got == [(f.offset, f.size, f.section) for f in iter_fatbins(dense)]
    assert len(got) == 1 and got[0][2] == ".nv_fatbin"


@settings(max_examples=60, deadline=None)
@given(
    step=st.sampled_from([64, 72, 200, 4096, 5000]),
    rows=st.lists(st.integers(0, 3), min_size=1, max_size=300),
    holes=st.sets(st.integers(1, 40), max_size=20),
)
def test_rows_read_around_holes_are_the_rows_of_the_dense_table(tmp_path_factory, step, rows, holes):
    """A table cut by holes at any 4 KiB blocks: the rows read are the dense table's rows that are not all zeros
    (a row in a hole is), in order, whatever the row size and wherever a hole cuts a row."""
    import os

    from cuda_fatbin._elf import read_header, section_headers

    shoff = 4096
    header = bytearray(make_elf([]))
    struct.pack_into("<QIHHHHHH", header, 0x28, shoff, 0, 64, 0, 0, step, len(rows), 0)
    table = bytearray(len(rows) * step)
    for i, kind in enumerate(rows):  # 0: a null row; else a row of that type and name offset i
        if kind:
            struct.pack_into("<II16xQQ", table, i * step, i, kind, 0, 0)
    dense = bytes(header) + bytes(shoff - len(header)) + bytes(table)
    blocks = [b for b in sorted(holes) if 1 <= b < -(-len(dense) // 4096)]
    data = bytearray(dense)
    path = tmp_path_factory.mktemp("holes") / "t.so"
    with open(path, "wb") as f:
        f.write(dense)
        for b in blocks:  # punch: write the file again with that block left out
            data[b * 4096 : (b + 1) * 4096] = bytes(len(data[b * 4096 : (b + 1) * 4096]))
        f.seek(0)
        f.truncate(0)
        for b in range(-(-len(dense) // 4096)):
            if b not in blocks:
                f.seek(b * 4096)
                f.write(data[b * 4096 : (b + 1) * 4096])
        f.truncate(len(dense))
    buf = bytes(data)
    with open(path, "rb") as f:
        got = section_headers(buf, read_header(buf), f.fileno())
    want = section_headers(buf, read_header(buf))
    assert [r for r in got if any(r)] == [r for r in want if any(r)]
    assert len(got) <= len(want)
    assert os.path.getsize(path) == len(dense)
