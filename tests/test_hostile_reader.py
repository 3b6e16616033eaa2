# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The reader's bounds on hostile input: each test pins one row of docs/security.md's "Bounds" table.

Bounds are checked by the work done (header reads, bytes decoded, resident memory in a child process)
where the library exposes it, and by wall time only with wide margins (each case took 10-100x longer
before the fix it guards, on the 2-core x86-64 host the figures in docs/security.md come from).
"""

from __future__ import annotations

import re
import struct
import sys
import time

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cuda_fatbin import _arch, _container, _reader, _source, iter_fatbins, parse_archs

from elf_testing import make_elf

_ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")


def _fatbin_header(body: int) -> bytes:
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, body)


def tiny_fatbin() -> bytes:
    """An 80-byte fatbin that parses strictly: version 1, a 16-byte header, one empty PTX entry."""
    return _fatbin_header(64) + _ENTRY.pack(1, 0x101, 64, 0, 0, 0, 0, 8, 80, 0, 0, 0x11, 0, 0)


def near_valid(size: int) -> bytes:
    """Near-valid fatbin headers every 80 bytes, each entry's identifier running to the end of the data.

    Each candidate fails only after its identifier is bounds-checked (zstd with a compressed size of 0),
    so a reader that copies identifiers before the header is validated reads O(n) bytes per candidate.
    """
    count = size // 80
    out = bytearray(b"NOTFATBN")  # not a raw fatbin: the whole file is searched
    for i in range(count):
        rest = (count - i) * 80 - 16  # from this entry header to the end
        out += _fatbin_header(rest)
        out += _ENTRY.pack(2, 0x101, rest, 0, 0, 0, 0, 1, 80, 64, rest - 64, 0x8001, 0, 0)
    return bytes(out)


# --- parse_archs: linear in the spec (issue 23: "=" * N + "arch=x" took 4/14/54 s for N = 25k/50k/100k) ---

_OLD_GENCODE_RE = re.compile(  # the pattern parse_archs used until it was found to backtrack quadratically
    r"(?:--generate-code|-gencode)?[ =]*arch=(?P<arch>[A-Za-z0-9_]+),code=(?P<code>\[[^\]]*\]|[A-Za-z0-9_]+)", re.ASCII
)


@pytest.mark.parametrize(
    "spec",
    ["=" * 1_000_000 + "arch=x", "arch=x,code=[" * 200_000, "-gencode " * 200_000, "arch=" * 400_000, "a" * 10**6],
)
def test_parse_archs_is_linear_in_the_spec(spec):
    start = time.perf_counter()
    with pytest.raises(ValueError):
        parse_archs(spec)
    # ~0.01-0.7 s here; the old regex needed 54 s for a tenth of the first spec
    assert time.perf_counter() - start < 10


_PIECES = ["arch=", ",code=", "compute_80", "sm_86", "[", "]", ",", ";", "=", " ", "-gencode", "--generate-code"]
_PIECES += ["a", "x", "_", "1", "\u00e9"]
_GENCODE_TEXT = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(_GENCODE_TEXT)
@example("arch=x arch=compute_80,code=sm_86 arch=compute_90,code=[sm_90] arch=compute_75,code=sm_75")  # a miss first
@example("arch=compute_80,code=sm_86 ")  # a clause at 0: nothing before it is read, the text's end included
@example("arch=compute_80,code=sm_86 -gencode")  # nor a prefix that the text ends with
@example("-gencode x arch=compute_80,code=sm_86")  # a prefix not just before the clause stays
@example("Xarch=compute_80,code=sm_86=arch=compute_90,code=sm_90")  # only " " and "=" are eaten before arch=
@example("-gencode=arch=compute_80,code=[sm_80,sm_86]--generate-code arch=compute_90,code=[sm_90]]")
def test_gencode_clauses_equal_the_old_regex(text):
    found, left = _arch._gencode_clauses(text)
    assert found == [(m["arch"], m["code"]) for m in _OLD_GENCODE_RE.finditer(text)]
    assert left == _OLD_GENCODE_RE.sub("", text)


@settings(max_examples=200, deadline=None)
@given(_GENCODE_TEXT)
def test_parse_archs_accepts_and_refuses_as_before(text):
    """Same result or the same refusal as a parse through the old regex (spellings accepted stay identical)."""

    def outcome(fn):
        try:
            return fn()
        except (ValueError, TypeError) as e:
            return type(e)

    new = outcome(lambda: parse_archs(text, supported=(80, 86, 90)))
    saved = _arch._gencode_clauses
    _arch._gencode_clauses = lambda t: (
        [(m["arch"], m["code"]) for m in _OLD_GENCODE_RE.finditer(t)],
        _OLD_GENCODE_RE.sub("", t),
    )
    try:
        old = outcome(lambda: parse_archs(text, supported=(80, 86, 90)))
    finally:
        _arch._gencode_clauses = saved
    assert new == old


# --- embedded search: a failed candidate costs what it reads ---


def test_near_valid_headers_cost_what_they_read(monkeypatch):
    """Issue 23: 0.5/1/2 MB of near-valid headers took 1.6/6.2/24 s; identifiers were copied per candidate."""
    decoded = []
    text = _container._text
    monkeypatch.setattr(
        _container, "_text", lambda buf, begin, length: decoded.append(length) or text(buf, begin, length)
    )
    data = near_valid(2 << 20)
    start = time.perf_counter()
    assert list(iter_fatbins(data, embedded=True)) == []
    elapsed = time.perf_counter() - start
    assert decoded == []  # no identifier of a candidate that failed was read
    assert elapsed < 5  # 0.07 s here, 24 s before


def test_failed_candidates_are_charged_their_header_reads():
    """The refusal budget counts headers read: 64 bytes each, at most n + 256 KiB in all."""
    data = near_valid(1 << 20)
    src = _reader._open(data)
    assert list(_reader._scan(src, [(0, len(src), None)], _reader._Seen(len(src)))) == []
    assert src.headers * 64 <= len(data) + 4096 * 64


def test_a_found_fatbin_has_its_identifier():
    """Strings are read once the fatbin is valid: a real fatbin still shows them (and its options)."""
    ident, opts = b"kernel.cu", b"-O3"
    hsize = 64 + 16 + 8 + 8
    entry = _ENTRY.pack(1, 0x101, hsize, 0, 0, 80, 0, 8, 80, 64, len(ident), 0x11, 0, 0)
    entry += ident.ljust(16, b"\0") + struct.pack("<II", 88, len(opts)) + opts.ljust(8, b"\0")
    data = b"junk" * 3 + _fatbin_header(len(entry)) + entry
    (fb,) = iter_fatbins(data, embedded=True)
    assert (fb.entries[0].identifier, fb.entries[0].options) == ("kernel.cu", "-O3")


def test_claims_before_registered_fatbins_are_not_quadratic():
    """Issue 23: stored fatbins found before registered ones made list.insert shift every later claim."""
    k = 100_000

    def claim_all(stored_first: bool) -> float:
        seen = _reader._Seen(200 * k)
        low = [(80 * i, 80 * i + 80) for i in range(k)]
        high = [(80 * (k + i), 80 * (k + i) + 80) for i in range(k)]
        registered, stored = (high, low) if stored_first else (low, high)
        start = time.perf_counter()
        for s, e in registered:  # the sections are walked first, in file order
            seen.claim(s, e)
        for s, e in stored:  # then the search, left to right
            seen.claim(s, e, stored=True)
        assert seen.inside(80 * k + 5) == 80 * k and seen.inside(80 * 2 * k) is None
        return time.perf_counter() - start

    control = claim_all(stored_first=False)
    seen_time = claim_all(stored_first=True)
    assert seen_time < 5 * control + 1  # one list: ~10 s for k = 100k (a memmove of the registered run each)


def test_stored_fatbins_before_registered_ones_in_an_elf_file():
    k = 20_000
    data = make_elf([(".rodata", 1, tiny_fatbin() * k), (".nv_fatbin", 1, tiny_fatbin() * k)])
    found = list(iter_fatbins(data, embedded=True))
    assert [fb.embedded for fb in found] == [False] * k + [True] * k
    assert [fb.section for fb in found[-2:]] == [".rodata", ".rodata"]


# --- sparse files, and files that shrink during the long reads (run in a child: SIGBUS would kill it) ---

_CHILD = r"""
import os, sys, time
def peak_mb():  # VmHWM: this process's peak since exec (ru_maxrss keeps the parent's peak across fork + exec)
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) // 1024 for line in f if line.startswith("VmHWM:"))
from cuda_fatbin import FatbinFormatError, iter_fatbins, _reader
path, mode = sys.argv[1], sys.argv[2]
if mode != "sparse":  # cut the file to 1 MiB + 4 KiB as the search reads its second window
    load = _reader._Data._load
    def cut(self, pos, end, *size):
        if pos > 0:
            os.truncate(path, (1 << 20) + 4096)
        return load(self, pos, end, *size)
    _reader._Data._load = cut
start = time.perf_counter()
try:
    found = [hex(fb.offset) for fb in iter_fatbins(path, embedded=True)]
except FatbinFormatError as e:
    found = "FatbinFormatError: " + e.message
print(found, time.perf_counter() - start, peak_mb())
"""


def _child(path, mode):
    import subprocess

    if not sys.platform.startswith("linux"):
        pytest.skip("the child reads its peak memory from /proc (Linux)")

    out = subprocess.run([sys.executable, "-c", _CHILD, str(path), mode], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])  # -7: SIGBUS
    found, seconds, rss_mb = out.stdout.rsplit(maxsplit=2)
    return found, float(seconds), int(rss_mb)


def test_a_sparse_file_is_searched_without_reading_its_holes(tmp_path):
    """Issue 23: 12 KB on disk, 4 GiB apparent, a fatbin at its end: 29 s and 4.1 GB resident before."""
    path = tmp_path / "sparse.bin"
    with open(path, "wb") as f:
        f.write(b"NOTFATBN")
        f.truncate(4 << 30)
        f.seek((4 << 30) - 4096)
        f.write(tiny_fatbin())
    found, seconds, rss_mb = _child(path, "sparse")
    assert found == "['0xfffff000']"
    assert seconds < 2 and rss_mb < 256  # 0.02 s and 12 MB here (holes are skipped with SEEK_DATA)


def test_a_dense_file_is_searched_in_bounded_memory(tmp_path):
    """The search holds one 32 MiB window, whatever the file's size (the map is not read)."""
    path = tmp_path / "dense.bin"
    with open(path, "wb") as f:
        for _ in range(12):
            f.write(b"\x01" * (16 << 20))
        f.write(tiny_fatbin())
    found, _seconds, rss_mb = _child(path, "sparse")
    assert found == "['0xc000000']"
    assert rss_mb < 128  # the file is 192 MiB


@pytest.mark.parametrize("content", ["data", "ptx"])
def test_a_file_that_shrinks_during_the_search_is_an_error_not_sigbus(tmp_path, content):
    """Issue 23: the size was checked only before the long mmap.find / PTX regex; a cut file killed the process."""
    path = tmp_path / "shrinks.bin"
    head = b".version 8.0\n" if content == "ptx" else b"NOTFATBN"  # PTX: the .target search reads on
    with open(path, "wb") as f:
        f.write(head + b"\x01" * (64 << 20))
    found, _seconds, _rss = _child(path, "cut")
    assert found.startswith("FatbinFormatError:") and "shrank" in found


def test_ptx_in_a_mapped_file_reads_as_in_memory(tmp_path):
    """Files over 1 MiB are tested for PTX through pread windows: same arch and version as the regex on bytes."""
    body = b"// " + b"x" * (2 << 20) + b"\n"
    cases = [
        b".version 8.5\n.target sm_90a\n",
        b"  \t.version 9.0\n\t.target   sm_100f, debug\n",
        b"x.version 8.0\n.target sm_80\n",  # not at a line start: no .version
        b".version 8.0\nx .target sm_80\n.target sm_86\n",
        b".version8.0\n.target sm_80\n",  # no blank after the directive
        b".version8.0\n.version 7.0\n.target sm_70\n",  # ... so the next occurrence is the one
        b".version X8.0\n.version 7.5\n.target sm_75\n",  # a value that is no version: the next one
        b".version 8.0\n.target\nsm_80\n.target sm_86\n",  # the value on the next line: not this one
        b".version 7.5\n.target \n.target sm_75\n",  # a directive with no value
        b" " * 5000 + b".version 8.0\n" + b"\t" * 5000 + b".target sm_80\n",  # blanks over a 4 KiB chunk
        b".version" + b" " * 5000 + b"8.0\n.target" + b"\t" * 5000 + b"sm_80\n",  # ... after the directive
        b".version 8." + b"0" * 5000 + b"\n.target sm_" + b"9" * 5000 + b"\n",  # values over a chunk
    ]
    at_the_edges = [  # the directives at the file's first and last bytes
        b".version 8.5\n.target sm_90\n" + body,
        b"  \t.version 9.0\n.target sm_100\n" + body,
        b"\n" + b" " * 5000 + b".version 9.0\n.target sm_100\n" + body,
        body + b".target sm_90a\n.version 8.5",
        body + b".version 8.5\n.target sm_90a",
        body + b".version 8.5\n.target sm_90a" + b" " * 5000,
        body + b".version 8.5\n.target" + b" " * 7 + b"sm_90a\n",  # as many blanks as bytes after them
    ]
    for i, data in enumerate([body + ptx + body for ptx in cases] + at_the_edges):
        path = tmp_path / f"big{i}.ptx"
        path.write_bytes(data)

        def outcome(source):
            try:
                (fb,) = iter_fatbins(source)
            except Exception as e:
                return type(e).__name__
            return str(fb.entries[0].arch), fb.entries[0].version

        assert outcome(path) == outcome(data), f"case {i}: {outcome(data)}"


# where the search's windows end (the file has no hole): 64 KiB first, then 16 times more, each read from 3 bytes
# before the last one's end (a magic may straddle it), up to _WINDOW
_FIRST = _source._FIRST_WINDOW
_WINDOW_ENDS = [_FIRST, _FIRST + 16 * _FIRST - 3, _FIRST + 16 * _FIRST + 256 * _FIRST - 6]


@pytest.mark.parametrize("window_end", _WINDOW_ENDS)
@pytest.mark.parametrize("shift", [-3, -2, -1, 0])
def test_a_magic_across_two_windows_is_found(tmp_path, shift, window_end):
    path = tmp_path / "across.bin"
    at = window_end + shift
    with open(path, "wb") as f:
        f.write(b"\x01" * at + tiny_fatbin() + b"\x01" * 64)
    assert [fb.offset for fb in iter_fatbins(path, embedded=True)] == [at]


_NAMES_CHILD = r"""
import struct, sys
def peak_mb():  # VmHWM: this process's peak since exec (ru_maxrss keeps the parent's peak across fork + exec)
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) // 1024 for line in f if line.startswith("VmHWM:"))
from cuda_fatbin import iter_fatbins
k = (16 << 20) // 40  # a 16 MB 32-bit ELF file: one 40-byte section header after another
strtab = b"\0" + b"n" * 4095 + b"\0"  # every section named by the same 4 KiB name
shoff = 52 + len(strtab)
rows = bytearray(40) + struct.pack("<10I", 0, 3, 0, 0, 52, len(strtab), 0, 0, 1, 0)
rows += struct.pack("<10I", 1, 1, 0, 0, 52, 8, 0, 0, 1, 0) * k
fields = (1, 62, 1, 0, 0, shoff, 0, 52, 0, 0, 40, 0, 1)
head = b"\x7fELF" + bytes([1, 1, 1]) + bytes(9) + struct.pack("<HHIIIIIHHHHHH", *fields)
data = bytearray(head + strtab + rows)
struct.pack_into("<I", data, shoff + 20, k + 2)  # extended numbering: the count in section 0's size
print(len(list(iter_fatbins(bytes(data), embedded=True))), peak_mb())
"""


def test_section_names_are_read_when_used_not_kept():
    """Issue 23: every section name was copied (4 KiB at most) and kept: 1.8 GB for a 16 MB 32-bit ELF file."""
    import subprocess

    if not sys.platform.startswith("linux"):
        pytest.skip("the child reads its peak memory from /proc (Linux)")
    out = subprocess.run([sys.executable, "-c", _NAMES_CHILD], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    found, rss_mb = map(int, out.stdout.split())
    assert found == 0
    assert rss_mb < 256  # 166 MB here: the section table as integers, no names


_HEADER_ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        # LZ4 with no compressed size, and an identifier 500 bytes out: the identifier is named
        ((1, 0x101, 64, 16, 0, 0, 0, 8, 80, 500, 4, 0x2011, 0, 16), (16, "identifier (4 bytes at +0x1f4) lies")),
        # Zstandard claiming 2**40 bytes from 8, and an options record out of the header: the record is named
        ((1, 0x101, 64, 16, 8, 900, 0, 8, 80, 0, 0, 0x8011, 0, 1 << 40), (916, "truncated entry options record")),
    ],
)
def test_an_entry_header_with_several_faults_names_its_strings_first(fields, named):
    # the strings lie in the header and are checked before the payload's sizes, by every reader of the header
    body = _HEADER_ENTRY.pack(*fields) + bytes(16)
    data = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body
    with pytest.raises(_source.FatbinFormatError) as info:
        _reader.read_fatbin(data)
    assert (info.value.offset, info.value.message[: len(named[1])]) == named
