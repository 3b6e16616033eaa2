# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""What listing reads and builds, counted rather than timed (docs/performance.md, issue 49)."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cuda_fatbin import _source


@pytest.mark.parametrize("padding", [0, 8, 56, 64, 4096 + 8])
def test_padding_before_a_fatbin_reads_about_what_it_holds(tmp_path, padding):
    """The walk asks where the padding before each fatbin ends; a short run must not read 1 MiB each time
    (libcurand's 13 fatbins read 13 MiB for a few zero words)."""
    path = tmp_path / "padded.bin"
    size = 3 << 20  # mapped, read through pread
    with open(path, "wb") as f:
        f.truncate(size)
        f.seek(padding)
        f.write(b"\x50\xed\x55\xba" + b"\1" * 60)
    src = _source._open(str(path))
    assert src.fd is not None
    got: list[int] = []
    read = src.read

    def counting(start: int, end: int) -> bytes:
        got.append(end - start)
        return read(start, end)

    src.read = counting  # type: ignore[method-assign]
    assert src.padding_end(0, size) == padding
    assert sum(got) <= 64 + 16 * max(padding, 64), got


def test_a_named_command_configures_only_its_own_parser():
    """``cuda-fatbin inspect FILE`` imports no other subcommand's module (each pulls in its helpers)."""
    import subprocess
    import sys
    from pathlib import Path

    cubin = Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin"
    code = ("import sys, runpy; sys.argv = ['cuda-fatbin'] + sys.argv[1:]\n"
            "try:\n    runpy.run_module('cuda_fatbin', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print(' '.join(sorted(sys.modules)), file=sys.stderr)")  # fmt: skip
    for argv in (["inspect", str(cubin)], ["--debug", "inspect", str(cubin)]):
        res = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
        loaded = {m for m in res.stderr.split() if m.startswith("cuda_fatbin._cli.main_")}
        assert loaded == {"cuda_fatbin._cli.main_inspect"}, loaded
        assert "sm_80" in res.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["inspect", "a", "--json", "--embedded"],
        ["--debug", "scan", "d", "--gpu", "8.0", "-j", "2"],
        ["which", "f", "--gpu", "9.0", "--debug"],
        ["compile", "k.cu", "--arch", "sm_80", "-X", "--use_fast_math"],
        ["size", "f", "--json"],
        ["extract", "f", "-o", "out"],
    ],
)
def test_the_parser_of_one_command_parses_as_the_whole_one(argv):
    from cuda_fatbin._cli import _COMMANDS, _join_option_values, build_parser

    command = next(a for a in argv if not a.startswith("-"))
    assert command in _COMMANDS
    whole, alone = build_parser(), build_parser(command)
    argv = _join_option_values(argv)
    assert vars(alone.parse_args(argv)) == vars(whole.parse_args(argv))
    sub = {name: next(a for a in p._actions if a.dest == "command").choices[command] for name, p in
           (("whole", whole), ("alone", alone))}  # fmt: skip
    assert sub["alone"].format_help() == sub["whole"].format_help()


def _stored(kind: int, sm: int, payload: bytes, at: int):
    """A fatbin stored as data at ``at``: one uncompressed entry whose header says ``sm`` whatever its payload."""
    import struct

    from cuda_fatbin import read_fatbin
    from cuda_fatbin._reader import Fatbin

    payload += bytes(-len(payload) % 8)
    entry = struct.pack("<HHIQIIHHIIIQQQ", kind, 0x0101, 64, len(payload), 0, 0, 0, 8, sm, 0, 0, 0x15, 0, 0) + payload
    fb = read_fatbin(struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(entry)) + entry)
    return Fatbin(fb.entries, at, fb.size, fb.version, embedded=True)


@pytest.mark.parametrize("pattern", ["gbgb", "bggg", "ggbb", "gggg", "bbbb", "gxbx"])
def test_fatbins_stored_as_data_are_judged_once_per_signature_and_as_each_alone(monkeypatch, pattern):
    """Thousands of stored fatbins share a few signatures (libcufft: 24,454 fatbins): each signature is read
    once, not once per GPU; and a fatbin whose payload disagrees with its header still gets its own answer."""
    from cuda_fatbin import Arch, _select
    from cuda_fatbin._select import _RANK, fatbin_status, judge

    payloads = {"g": (1, 80, b".version 8.0\n.target sm_80\n"), "b": (1, 80, b".version 8.0\n.target sm_90\n"),
                "x": (1, 75, b".version 8.0\n.target sm_75\n")}  # fmt: skip
    gpus = ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0"]
    fatbins = [_stored(*payloads[c], 4096 * i) for i, c in enumerate(pattern * 50)]
    calls = []
    signature = _select._signature
    monkeypatch.setattr(_select, "_signature", lambda fb: calls.append(fb) or signature(fb))
    got = judge(fatbins, gpus)
    assert len(calls) <= len(fatbins) + 3 * len(gpus), len(calls)
    for gpu in gpus:  # each fatbin's own answer, no memo: the best of them, and how many load
        alone = [fatbin_status(fb, Arch.parse(gpu), None) for fb in fatbins]
        best = min(alone, key=lambda a: _RANK[a[0]])
        loading = sum(_RANK[a[0]] <= _RANK["PTX JIT"] for a in alone)
        note = f"{loading} of {len(fatbins)} fatbins stored as data load ({best[0]} at best)"
        assert got[gpu] == {"status": best[0], "reason": f"a fatbin stored as data: {best[1]}; {note}"}, gpu


def test_the_search_reads_every_window_into_one_buffer(tmp_path, monkeypatch):
    """A fresh 32 MiB bytes object per window cost more in page faults than the search (libcufft: 280 MB, 0.1 s);
    the windows are read into one buffer (made anew only to grow: 64 KiB first, then the largest window), and
    what is found is what a search of the bytes finds."""
    import os

    monkeypatch.setattr(_source, "_WINDOW", 256 << 10)
    path = tmp_path / "f.bin"
    content = bytearray(os.urandom(3 << 20).replace(b"\x50\xed", b"\0\0"))
    for at in (5, (256 << 10) - 2, (1 << 20) + 3, (3 << 20) - 4):
        content[at : at + 4] = b"\x50\xed\x55\xba"
    path.write_bytes(content)
    src = _source._open(str(path))
    buffers = []
    real = os.preadv
    monkeypatch.setattr(os, "preadv", lambda fd, bufs, at: buffers.append(bufs[0].obj) or real(fd, bufs, at))
    found, pos = [], 0
    while (pos := src.find(b"\x50\xed\x55\xba", pos, len(content))) >= 0:
        found.append(pos)
        pos += 1
    assert found == [5, (256 << 10) - 2, (1 << 20) + 3, (3 << 20) - 4]
    distinct = [b for i, b in enumerate(buffers) if all(b is not c for c in buffers[:i])]
    assert len(buffers) >= 12 and [len(b) for b in distinct] == [64 << 10, 256 << 10], len(buffers)


def test_a_scan_of_a_folder_without_installed_distributions_does_not_load_the_metadata_parser(tmp_path):
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    shutil.copy(Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin", tmp_path / "k.cubin")
    code = ("import sys, runpy; sys.argv = ['cuda-fatbin'] + sys.argv[1:]\n"
            "try:\n    runpy.run_module('cuda_fatbin', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print(' '.join(sorted(sys.modules)), file=sys.stderr)")  # fmt: skip
    argv = ["scan", str(tmp_path), "--gpu", "8.0", "-j", "1"]
    res = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    assert "1 with device code" in res.stdout
    assert "email.parser" not in res.stderr.split()
    (tmp_path / "k-1.0.dist-info").mkdir()  # a folder that has some: read (nothing owns k.cubin here)
    res = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    assert "email.parser" in res.stderr.split()


@pytest.mark.parametrize("output", [[], ["--json"]])
def test_a_scan_that_finds_every_gpu_covered_loads_nothing_for_the_rare_paths(tmp_path, output):
    # the driver library (--gpu installed), the kernels' reader and demangler (a GPU that lacks kernels), the
    # RECORD reader (a folder with installed distributions), the packages' tar reader and the default paths
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    shutil.copy(Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin", tmp_path / "k.cubin")
    code = ("import sys, runpy; sys.argv = ['cuda-fatbin'] + sys.argv[1:]\n"
            "try:\n    runpy.run_module('cuda_fatbin', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print(' '.join(sorted(sys.modules)), file=sys.stderr)")  # fmt: skip
    argv = ["scan", str(tmp_path), "--gpu", "8.0", "-j", "1", *output]
    res = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    assert "SASS" in res.stdout and res.returncode == 0  # covered
    rare = {"ctypes", "cuda_fatbin._driver", "cuda_fatbin._kernels", "csv", "cuda_fatbin._tarstream", "sysconfig"}
    assert not rare & set(res.stderr.split()), rare & set(res.stderr.split())


def _zstd_fatbin(payload: bytes, sm: int) -> bytes:
    """A fatbin of one zstd-compressed PTX entry whose header says ``sm``."""
    import struct

    import zstandard

    raw = zstandard.ZstdCompressor().compress(payload)
    stored = raw + bytes(-len(raw) % 8)
    entry = struct.pack("<HHIQIIHHIIIQQQ", 1, 0x0101, 64, len(stored), len(raw), 0, 0, 8, sm, 0, 0, 0x8011, 0,
                        len(payload)) + stored  # fmt: skip
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(entry)) + entry


def test_zstd_prefixes_use_their_decoders_again(monkeypatch):
    """Making a zstd decoder per entry cost a third of reading its first block (libcurand: 186 entries)."""
    import zstandard

    from cuda_fatbin import read_fatbin

    made = []

    class Counted(zstandard.ZstdDecompressor):
        def __init__(self, *args: object, **kwargs: object) -> None:
            made.append(self)
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(zstandard, "ZstdDecompressor", Counted)
    filler = b"".join(b".global .b32 g%d;\n" % i for i in range(300))
    verdicts = []
    for i in range(20):
        target = 80 if i % 3 else 90
        entry = read_fatbin(_zstd_fatbin(b".version 8.0\n.target sm_%d\n" % target + filler, 80)).entries[0]
        verdicts.append(entry.payload_mismatch)
    assert verdicts == [None if i % 3 else "the header says compute_80, the PTX .target is sm_90" for i in range(20)]
    assert len(made) <= 1, len(made)


def test_ptx_answers_kept_by_their_lines_are_the_answers_and_stay_bounded():
    """PTX entries start with the same few lines: their ``.target`` is read once per distinct text, and what is
    kept has a bound (texts up to 4 KiB, at most 1024 of them)."""
    from cuda_fatbin import _payload
    from cuda_fatbin._detect import ptx_target

    texts = [b".version 8.%d\n.target sm_%d\n" % (i % 10, 50 + i % 71) for i in range(3000)]
    texts += [b".version 8.0\n.target sm_90a\n", b".version 8.0\n.target sm_9x\n", b"no directives\n", b".target"]
    for _ in range(2):  # the second time from what was kept
        for text in texts:
            for whole in (True, False):
                try:
                    want: object = ptx_target(text if whole else text[: text.rfind(b"\n") + 1])
                except ValueError as e:
                    assert isinstance(_payload._ptx(text, whole), ValueError), text
                    assert str(_payload._ptx(text, whole)) == str(e)
                    continue
                if want is None and not whole:
                    want = _payload._UNDECIDED
                assert _payload._ptx(text, whole) == want, (text, whole)
                assert len(_payload._PTX_SEEN) <= _payload._PTX_SEEN_MAX
    big = b".version 8.0\n.target sm_80\n" + b"// x\n" * 2000
    assert str(_payload._ptx(big, True)) == "sm_80" and (big, True) not in _payload._PTX_SEEN


def _stored_many(entries: list[tuple[int, int, bytes]], at: int):
    """A fatbin stored as data at ``at`` with one uncompressed entry per ``(kind, sm, payload)``."""
    import struct

    from cuda_fatbin import read_fatbin
    from cuda_fatbin._reader import Fatbin

    body = b""
    for kind, sm, payload in entries:
        payload += bytes(-len(payload) % 8)
        body += struct.pack("<HHIQIIHHIIIQQQ", kind, 0x0101, 64, len(payload), 0, 0, 0, 8, sm, 0, 0, 0x15, 0, 0)
        body += payload
    fb = read_fatbin(struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body)
    return Fatbin(fb.entries, at, fb.size, fb.version, embedded=True)


def _stored_concat(ptx: bytes, sm: int, at: int):
    """A fatbin stored as data at ``at`` whose one concatenated entry holds ``ptx`` under a member header that
    says ``sm`` (libnvfatbin 13.4+)."""
    import struct

    from cuda_fatbin import FatbinOptions, build_fatbin, read_fatbin
    from cuda_fatbin._reader import Fatbin

    try:
        data = bytearray(build_fatbin([ptx], options=FatbinOptions(concat=True)))
    except Exception as e:  # libnvfatbin before 13.4 has no -concat
        pytest.skip(f"no concatenated entries here: {e}")
    (table,) = struct.unpack_from("<I", data, 16 + 20)  # the entry's member table, then the first member header
    struct.pack_into("<I", data, 16 + table + 8 + 28, sm)
    fb = read_fatbin(bytes(data))
    assert [(e.kind, e.sm, e.concatenated) for e in fb.iter_entries()] == [("ptx", sm, True)]
    return Fatbin(fb.entries, at, fb.size, fb.version, embedded=True)


@pytest.mark.parametrize("layout", ["two entries", "concatenated"])
def test_stored_fatbins_share_an_answer_only_when_every_payload_read_agrees(layout):
    """A class of stored fatbins is joined only by a fatbin whose payloads read for the answers say what the
    first one's said: every entry read (on another GPU another entry is selected), and a concatenated entry's
    members (not the entry that holds them)."""
    from cuda_fatbin import Arch
    from cuda_fatbin._select import _RANK, fatbin_status, judge

    good80, good90 = b".version 8.0\n.target sm_80\n", b".version 8.0\n.target sm_90\n"
    bad90 = b".version 8.0\n.target sm_100\n"  # newer than its header: the driver fails on 9.0
    if layout == "two entries":  # 8.x selects the first entry, 9.0 the second
        make = {"g": lambda at: _stored_many([(1, 80, good80), (1, 90, good90)], at),
                "b": lambda at: _stored_many([(1, 80, good80), (1, 90, bad90)], at)}  # fmt: skip
    else:
        make = {"g": lambda at: _stored_concat(good80, 80, at), "b": lambda at: _stored_concat(good90, 80, at)}
    gpus = ["8.0", "8.6", "9.0", "12.0"]
    fatbins = [make[c](4096 * i) for i, c in enumerate("gbbg" * 3)]
    got = judge(fatbins, gpus)
    for gpu in gpus:
        alone = [fatbin_status(fb, Arch.parse(gpu), None) for fb in fatbins]
        best = min(alone, key=lambda a: _RANK[a[0]])
        loading = sum(_RANK[a[0]] <= _RANK["PTX JIT"] for a in alone)
        note = f"{loading} of {len(fatbins)} fatbins stored as data load ({best[0]} at best)"
        assert got[gpu] == {"status": best[0], "reason": f"a fatbin stored as data: {best[1]}; {note}"}, gpu
    assert any(len({fatbin_status(fb, Arch.parse(gpu), None) for fb in fatbins}) > 1 for gpu in gpus)


@pytest.mark.parametrize("order", ["plain first", "plain last"])
def test_a_binarys_driver_needs_and_entries_are_counted_from_every_entry(order):
    """``scan`` tallies entries by their header fields and weighs one entry per distinct value: the same
    PTX stored plain, zstd-compressed and inside a concatenated entry weighs as each alone (zstd: 12.4,
    concatenation: 13.4), whichever comes first."""
    from cuda_fatbin import FatbinOptions, build_fatbin, read_fatbin
    from cuda_fatbin._scan import BinaryReport, _judged
    from cuda_fatbin._select import driver_needs

    ptx = b".version 8.0\n.target sm_80\n.address_size 64\n"
    options = [FatbinOptions(compress=False), FatbinOptions(compress_all=True, compress_mode="size")]
    try:
        options.append(FatbinOptions(concat=True))
        fatbins = [read_fatbin(build_fatbin([ptx], options=o)) for o in options]
    except Exception:  # libnvfatbin before 13.4 has no -concat
        fatbins = [read_fatbin(build_fatbin([ptx], options=o)) for o in options[:2]]
    if order == "plain last":
        fatbins.reverse()
    needs: dict[str, tuple[int, int]] = {}
    for e in (e for fb in fatbins for e in fb.iter_entries()):
        for rule, cuda in driver_needs(e).items():
            needs[rule] = max(needs.get(rule, cuda), cuda)
    assert "zstd_driver" in needs
    report = _judged(BinaryReport("lib.so"), fatbins, [], None)
    assert report.needs == {rule: f"{v[0]}.{v[1]}" for rule, v in sorted(needs.items())}
    assert report.entries == {"ptx sm_80": len(fatbins)}


def test_a_long_search_reads_windows_that_grow_sixteen_times_up_to_the_largest(tmp_path, monkeypatch):
    """A magic found near costs a little read (64 KiB); a search that goes on reads 16 times more each window,
    up to ``_WINDOW``: a few reads for a long run of data without a magic, not one per 64 KiB."""
    import itertools
    import os

    monkeypatch.setattr(_source, "_WINDOW", 4 << 20)
    path = tmp_path / "f.bin"
    path.write_bytes(b"\x01" * (10 << 20))
    src = _source._open(str(path))
    sizes = []
    real = os.preadv
    monkeypatch.setattr(os, "preadv", lambda fd, bufs, at: sizes.append((at, len(bufs[0]))) or real(fd, bufs, at))
    assert src.find(b"\x50\xed\x55\xba", 0, 10 << 20) == -1
    assert [n for _at, n in sizes[:4]] == [64 << 10, 1 << 20, 4 << 20, 4 << 20] and len(sizes) == 5
    assert all(at == prev + n - 3 for (prev, n), (at, _n) in itertools.pairwise(sizes))  # a magic may straddle an end
    assert sizes[-1][0] + sizes[-1][1] == 10 << 20


def _entry(kind: int, sm: int, suffix: str, minor: int, compression: str) -> bytes:
    """An entry header and payload: PTX text for ``sm`` (any kind: a tally reads headers), stored so."""
    import struct

    import lz4.block
    import zstandard

    payload = b".version 8.%d\n.target sm_%d\n" % (minor, sm) + b"// pad\n" * 20
    flags = 0x15 | {"": 0, "a": 0x100000, "f": 0x200000}[suffix]
    if compression == "lz4":
        raw, flags = lz4.block.compress(payload, store_size=False), flags | 0x2000
    elif compression == "zstd":
        raw, flags = zstandard.ZstdCompressor().compress(payload), flags | 0x8000
    else:
        raw = payload
    stored = raw + bytes(-len(raw) % 8)
    csize = len(raw) if compression != "none" else 0
    return struct.pack("<HHIQIIHHIIIQQQ", kind, 0x0101, 64, len(stored), csize, 0, minor, 8, sm, 0, 0, flags, 0,
                       len(payload)) + stored  # fmt: skip


_ENTRIES = st.tuples(st.sampled_from([1, 2, 8, 0x40]), st.sampled_from([75, 90, 100]), st.sampled_from(["", "a", "f"]),
                     st.integers(0, 2), st.sampled_from(["none", "lz4", "zstd"]))  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(_ENTRIES, min_size=1, max_size=3), st.booleans(), st.booleans()), min_size=1,
                max_size=12))  # fmt: skip
@example([([(1, 90, "", 0, "none")], False, True), ([(1, 90, "a", 0, "none")], False, True)])  # only the suffix
@example([([(2, 100, "f", 1, "lz4")], False, True), ([(2, 100, "f", 1, "zstd")], True, True)])
@example([([(1, 75, "", 0, "none")], False, False), ([(1, 75, "", 0, "none")], False, True)])
def test_a_tally_by_signature_is_the_tally_of_every_entry(fatbins):
    """``scan`` counts a library's fatbins by signature and weighs one of each: what it counts is what counting
    every entry of every fatbin gives (fields, what the loaded ones need of a driver, compressions, fatbin kinds),
    and fatbins of one signature judge alike."""
    import collections
    import struct

    from cuda_fatbin import Arch, read_fatbin
    from cuda_fatbin._parts import _LOADED, _tally
    from cuda_fatbin._reader import Fatbin
    from cuda_fatbin._select import _signature, driver_needs, fatbin_status

    made = []
    for i, (entries, relocatable, embedded) in enumerate(fatbins):
        body = b"".join(_entry(*e) for e in entries if not (e[2] and e[1] < 90) and not (e[2] == "f" and e[1] < 100))
        if not body:
            continue
        fb = read_fatbin(struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body)
        made.append(Fatbin(fb.entries, 4096 * i, fb.size, fb.version, relocatable=relocatable, embedded=embedded))
    fields: collections.Counter[tuple[object, ...]] = collections.Counter()
    needs: dict[str, tuple[int, int]] = {}
    for e in (e for fb in made for e in fb.iter_entries()):
        fields[(e.kind, e.arch, e.sm, e.version, e.compression, e.concatenated)] += 1
        for rule, cuda in (driver_needs(e) if e.kind in _LOADED else {}).items():
            needs[rule] = max(needs.get(rule, cuda), cuda)
    tally = _tally(made)
    assert tally.fields == fields and tally.needs == needs
    assert tally.compression == {top.compression for fb in made for top in fb.entries}
    assert {k: tally.fatbins[k] for k in ("registered", "relocatable", "embedded")} == {
        "registered": sum(fb.loadable and not fb.embedded for fb in made),
        "relocatable": sum(fb.relocatable for fb in made), "embedded": sum(fb.embedded for fb in made)}  # fmt: skip
    by_signature: dict[tuple[object, ...], set[object]] = collections.defaultdict(set)
    for fb in made:
        by_signature[_signature(fb)].add(tuple(fatbin_status(fb, Arch.parse(g), None) for g in ("7.5", "9.0", "10.0")))
    assert all(len(answers) == 1 for answers in by_signature.values())
