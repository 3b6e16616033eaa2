# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Untrusted files: every item of docs/security.md, tried as an attacker would.

Hostile containers are made with the library's own builder and then edited with ``struct``, or
written from scratch with the helpers below.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_testing import cli_main
from cuda_fatbin import (
    BundleError,
    ExtractError,
    FatbinBuilder,
    FatbinFormatError,
    KernelBundle,
    KernelSuite,
    Part,
    build_fatbin,
    extract_entries,
    iter_fatbins,
    read_fatbin,
)
from cuda_fatbin._bundle import _record_digest

from fatbin_testing import KERNEL_SRC, plain, process_tmp

CLI = [sys.executable, "-m", "cuda_fatbin"]


def cli(*args: str, cwd=None, stdin=None) -> subprocess.CompletedProcess:
    """The command: in this process (mutants reach it), in a subprocess when it reads ``stdin``."""
    if stdin is None:
        r = cli_main(*args, cwd=cwd)
        return subprocess.CompletedProcess(args, r.returncode, r.stdout, r.stderr)
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=cwd, stdin=stdin, timeout=120)


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file() or p.is_symlink()}


# -- crafted containers --------------------------------------------------------------------------------


def with_identifiers(cubin: bytes, names: list[bytes]) -> bytes:
    """A fatbin of one sm_80 cubin per name, each entry's identifier overwritten with ``name`` (any bytes)."""
    builder = FatbinBuilder(allow_duplicates=True)
    for i, name in enumerate(names):
        placeholder = str(i).rjust(len(name), "0")
        assert len(placeholder) == len(name)
        builder.add(Part(cubin, "cubin", "sm_80", identifier=placeholder))
    data = bytearray(builder.build())
    for entry, name in zip(read_fatbin(bytes(data)).entries, names, strict=True):
        id_off, id_len = struct.unpack_from("<II", data, entry.offset + 0x20)
        start = entry.offset + id_off
        data[start : start + id_len] = name
    return bytes(data)


def concat_fatbin(stream: bytes, members: list[tuple[int, int]], compressed: bytes | None = None) -> bytes:
    """One zstd-compressed concatenated entry over ``stream`` whose members are (offset, size) in it."""
    payload = compressed if compressed is not None else zstandard.ZstdCompressor(level=3).compress(stream)
    table = struct.pack("<II", len(members), 8 + 64 * len(members))
    for off, size in members:
        table += struct.pack("<HHIQIIHHIIIQQQ", 0x02, 0x0101, off, size, 0, 0, 7, 1, 80, 0, 0, 0x11, 0, 0)
    hsize = 64 + len(table)
    padded = payload + bytes(-len(payload) % 8)
    head = struct.pack(
        "<HHIQIIHHIIIQQQ", 0x100, 0x0101, hsize, len(padded), len(payload), 64, 0, 0, 0, 0, 0, 0x8011, 0, len(stream)
    )
    body = head + table + padded
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def elf_with_sections(blob: bytes, sections: list[tuple[str, int, int]], machine: int = 62) -> bytes:
    """A little-endian ELF64 relocatable file holding ``blob`` at offset 64, with the given (name, start, size)."""
    names = sorted({n for n, _, _ in sections} | {".shstrtab"})
    strtab = b"\0" + b"".join(n.encode() + b"\0" for n in names)
    name_off = {n: strtab.index(n.encode() + b"\0") for n in names}
    data = blob + bytes(-len(blob) % 8)
    str_at = 64 + len(data)
    shoff = str_at + len(strtab) + (-(str_at + len(strtab)) % 8)
    rows = [bytes(64)]
    for name, start, size in sections:
        rows.append(struct.pack("<IIQQQQIIQQ", name_off[name], 1, 0, 0, 64 + start, size, 0, 0, 8, 0))
    rows.append(struct.pack("<IIQQQQIIQQ", name_off[".shstrtab"], 3, 0, 0, str_at, len(strtab), 0, 0, 1, 0))
    header = (
        b"\x7fELF\x02\x01\x01"
        + bytes(9)
        + struct.pack("<HHIQQQIHHHHHH", 1, machine, 1, 0, 0, shoff, 0, 64, 0, 0, 64, len(rows), len(rows) - 1)
    )
    out = header + data + strtab
    return out + bytes(shoff - len(out)) + b"".join(rows)


# -- 1. extract stays inside its directory -------------------------------------------------------------

HOSTILE_NAMES = [b"../../escaped", b"/tmp/abs_x", b"x", b"./x", b"a\0b", b"c" * 300, b"..", b"\x1b[31mred", b"X"]


def test_extract_never_writes_outside(artifacts, tmp_path):
    data = with_identifiers(artifacts[("cubin", "sm_80")], HOSTILE_NAMES)
    src = tmp_path / "in" / "hostile.fatbin"
    src.parent.mkdir()
    src.write_bytes(data)
    out = tmp_path / "deep" / "out"
    res = cli("extract", str(src), "-o", str(out))
    assert res.returncode == 0, res.stderr
    written = files_under(tmp_path) - {src}
    assert written == files_under(out) and len(written) == len(HOSTILE_NAMES)
    assert sorted(Path(line).name for line in res.stdout.splitlines()) == sorted(p.name for p in written)
    names = {p.name for p in written}
    assert {"escaped.sm_80.cubin", "abs_x.sm_80.cubin", "x.sm_80.cubin", "x-2.sm_80.cubin"} <= names
    assert "X-3.sm_80.cubin" in names  # case-insensitive file systems would merge x and X
    assert all(len(n.encode()) < 255 and "\0" not in n and "\x1b" not in n for n in names)
    assert all(p.read_bytes() == artifacts[("cubin", "sm_80")] for p in written)
    assert not Path("/tmp/abs_x.sm_80.cubin").exists()


def test_extract_refuses_to_overwrite_and_never_follows_links(artifacts, tmp_path):
    src = tmp_path / "k.fatbin"
    src.write_bytes(build_fatbin([artifacts[("cubin", "sm_80")]]))
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (out / "k.1.sm_80.cubin").symlink_to(victim)
    res = cli("extract", str(src), "-o", str(out))
    assert res.returncode == 1 and "exists" in res.stderr and "--force" in res.stderr
    assert victim.read_text() == "keep me"
    res = cli("extract", str(src), "-o", str(out), "--force")
    assert res.returncode == 0, res.stderr
    assert victim.read_text() == "keep me"
    target = out / "k.1.sm_80.cubin"
    assert not target.is_symlink() and target.read_bytes() == artifacts[("cubin", "sm_80")]
    with pytest.raises(ExtractError, match="exists"):
        extract_entries(src, out)


def test_extract_names_match_cuobjdump(artifacts, tmp_path, cuobjdump_path):
    """Names and bytes of every entry cuobjdump can extract, for identifiers, numbers and f entries."""
    builder = FatbinBuilder(allow_duplicates=True)
    builder.add(Part(artifacts[("cubin", "sm_80")], "cubin", "sm_80", identifier="dir/foo.cu"))
    builder.add(Part(artifacts[("ptx", "sm_80")], "ptx", "sm_80", identifier="bar.x.y"))
    builder.add(Part(artifacts[("cubin", "sm_90")], "cubin", "sm_90"))
    if ("cubin", "sm_100f") in artifacts:
        builder.add(Part(artifacts[("cubin", "sm_100f")], "cubin", "sm_100f"))
    src = tmp_path / "multi.fatbin"
    src.write_bytes(builder.build())
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    theirs.mkdir()
    subprocess.run([cuobjdump_path, "-xelf", "all", "-xptx", "all", str(src)], cwd=theirs, check=True,
                   capture_output=True)  # fmt: skip
    extract_entries(src, ours)
    expected = {p.name: p.read_bytes() for p in theirs.iterdir()}
    got = {p.name: p.read_bytes() for p in ours.iterdir()}
    assert got == expected
    cubin = tmp_path / "single.sm_80.cubin"
    cubin.write_bytes(artifacts[("cubin", "sm_80")])
    (tmp_path / "one").mkdir()
    subprocess.run([cuobjdump_path, "-xelf", "all", str(cubin)], cwd=tmp_path / "one", check=True, capture_output=True)
    assert [p.name for p in extract_entries(cubin, tmp_path / "two")] == [p.name for p in (tmp_path / "one").iterdir()]


# -- 2. linear work and memory -------------------------------------------------------------------------


def compressible(size: int) -> bytes:
    """``size`` bytes that zstd compresses about 500x: inside the 1024x bound."""
    return __import__("random").Random(0).randbytes(size // 512) + bytes(size - size // 512)


def test_overlapping_concat_members_are_refused():
    stream = compressible(1 << 20)
    blob = concat_fatbin(stream, [(0, len(stream))] * 1000)
    t0 = time.perf_counter()
    with pytest.raises(FatbinFormatError, match="overlaps another"):
        read_fatbin(blob)
    assert time.perf_counter() - t0 < 0.5


def test_many_members_decompress_the_stream_once(monkeypatch):
    """1000 members tiling a 16 MiB stream: the stream is decompressed once, not once per member."""
    from cuda_fatbin import _container

    stream = compressible(16 << 20)
    step = len(stream) // 1000
    blob = concat_fatbin(stream, [(i * step, step) for i in range(1000)])
    assert len(blob) < 128 << 10
    calls = []
    real = _container._decompress
    monkeypatch.setattr(_container, "_decompress", lambda *a: calls.append(a[0]) or real(*a))
    tracemalloc.start()
    total = sum(len(m.data()) for fb in iter_fatbins(blob) for m in fb.iter_entries())
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert total == 1000 * step
    assert calls == ["zstd"] and peak < 3 * len(stream)  # counted, not timed: a loaded machine cannot fail it


def test_expansion_bound_is_exact():
    stream = bytes(1 << 20)
    frame = zstandard.ZstdCompressor().compress(stream)
    assert len(frame) * 1024 < len(stream)
    with pytest.raises(FatbinFormatError, match="over 1024x"):
        read_fatbin(concat_fatbin(stream, [(0, 64)], frame))
    padded = frame + bytes(len(stream) // 1024 - len(frame))  # just at the bound: accepted by the header check
    with pytest.raises(FatbinFormatError, match="does not decompress|decompressed to"):
        read_fatbin(concat_fatbin(stream, [(0, 64)], padded)).entries[0].members[0].data()


def test_a_section_named_thousands_of_times_is_read_once(artifacts):
    fatbin = build_fatbin([artifacts[("cubin", "sm_80")]])
    elf = elf_with_sections(fatbin, [(".nv_fatbin", 0, len(fatbin))] * 2000)
    t0 = time.perf_counter()
    fatbins = list(iter_fatbins(elf))
    assert time.perf_counter() - t0 < 1.0 and len(fatbins) == 1
    nested = elf_with_sections(fatbin + fatbin, [(".nv_fatbin", 0, 2 * len(fatbin))] + [
        (".nv_fatbin", 0, 2 * len(fatbin) - 8 * (k % 16)) for k in range(2000)])  # fmt: skip
    t0 = time.perf_counter()
    with contextlib.suppress(FatbinFormatError):
        list(iter_fatbins(nested))
    assert time.perf_counter() - t0 < 1.0


def test_fatbins_inside_fatbins_are_refused(artifacts):
    inner = build_fatbin([artifacts[("cubin", "sm_80")]])
    outer = build_fatbin([Part(artifacts[("cubin", "sm_90")])])
    blob = outer + inner
    elf = elf_with_sections(blob, [(".nv_fatbin", 0, len(blob)), ("__nv_relfatbin", 16 + 64, len(blob) - 80)])
    with pytest.raises(FatbinFormatError):
        list(iter_fatbins(elf, relocatable=True))


# -- 3. bundles ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bundle_dir() -> Path:
    src = KERNEL_SRC
    root = process_tmp("bundle") / "b"
    KernelBundle.build(root, {"k": KernelSuite(src, ["scale<float>", "scale<double>"])}, archs=["sm_80"])
    return root


def suite_file(root: Path, suite: str = "k") -> str:
    """The file name the bundle's manifest gives a suite (``<suite>.<hash>.fatbin``)."""
    return json.loads((root / "manifest.json").read_text())["suites"][suite]["file"]


def edited(bundle_dir: Path, tmp_path: Path, edit) -> Path:
    root = tmp_path / "copy"
    shutil.copytree(bundle_dir, root)
    manifest = json.loads((root / "manifest.json").read_text())
    result = edit(manifest)
    text = result if isinstance(result, (str, bytes)) else json.dumps(manifest)
    (root / "manifest.json").write_bytes(text if isinstance(text, bytes) else text.encode())
    return root


def _set(path: list, value):
    def edit(m):
        node = m
        for key in path[:-1]:
            node = node[key]
        if value is KeyError:
            del node[path[-1]]
        else:
            node[path[-1]] = value

    return edit


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda m: "[]", "manifest"),
        (lambda m: "null", "manifest"),
        (lambda m: b"\xff\xfe{}", "not valid JSON"),
        (lambda m: "[" * 100_000 + "]" * 100_000, "not valid JSON"),
        (_set(["suites"], KeyError), "suites"),
        (_set(["suites"], []), "suites"),
        (_set(["schema"], 1), "schema"),
        (_set(["suites", "k", "file"], KeyError), "suites.k.file"),
        (_set(["suites", "k", "sha256"], KeyError), "suites.k.sha256"),
        (_set(["suites", "k", "file"], 123), "suites.k.file"),
        (_set(["suites", "k", "size"], True), "suites.k.size"),
        (_set(["suites", "k", "file"], "/etc/passwd"), "suites.k.file"),
        (_set(["suites", "k", "file"], "../k.fatbin"), "suites.k.file"),
        (_set(["suites", "k", "file"], ".."), "suites.k.file"),
        (_set(["suites", "k", "symbol_mapping"], {"a": 1}), "suites.k.symbol_mapping"),
        (_set(["suites", "k", "ptx_isa"], "x"), "suites.k.ptx_isa"),
        (_set(["suites", "k", "sha256"], "zz"), "suites.k.sha256"),
        (lambda m: m["suites"].update({"../evil": m["suites"]["k"]}), "suites.../evil"),
    ],
)
def test_malformed_manifests_name_the_field(bundle_dir, tmp_path, edit, field):
    root = edited(bundle_dir, tmp_path, edit)
    with pytest.raises(BundleError) as info:
        KernelBundle.open(root)
    assert field in str(info.value)


def test_edited_records_and_files_are_refused_before_use(bundle_dir, tmp_path):
    def swap(m):
        mapping = m["suites"]["k"]["symbol_mapping"]
        mapping["scale<float>"], mapping["scale<double>"] = mapping["scale<double>"], mapping["scale<float>"]

    bundle = KernelBundle.open(edited(bundle_dir, tmp_path / "a", swap))
    with pytest.raises(BundleError, match="record was edited"):
        bundle.load("k", gpu="8.0", driver="13.0")

    def outside(m):  # a consistent record whose file is a symlink leading out of the bundle
        rec = m["suites"]["k"]
        rec["file"] = "link.fatbin"
        rec["record_sha256"] = _record_digest(rec)

    root = edited(bundle_dir, tmp_path / "b", outside)
    secret = tmp_path / "secret.fatbin"
    shutil.copy(bundle_dir / suite_file(bundle_dir), secret)
    (root / "link.fatbin").symlink_to(secret)
    with pytest.raises(BundleError, match="link.fatbin is a symlink, not followed: a bundle holds only regular"):
        KernelBundle.open(root).fatbin("k")

    def bigger(m):  # /dev/zero-like: a size that does not match is refused before reading
        rec = m["suites"]["k"]
        rec["size"] = 1 << 40
        rec["record_sha256"] = _record_digest(rec)

    root = edited(bundle_dir, tmp_path / "c", bigger)
    with pytest.raises(BundleError, match="recorded size"):
        KernelBundle.open(root).fatbin("k")
    root = edited(bundle_dir, tmp_path / "d", lambda m: None)
    (root / suite_file(root)).write_bytes(b"\0" * (root / suite_file(root)).stat().st_size)
    with pytest.raises(BundleError, match="manifest hash"):
        KernelBundle.open(root).fatbin("k")
    assert (
        hashlib.sha256((bundle_dir / suite_file(bundle_dir)).read_bytes()).hexdigest()
        == KernelBundle.open(bundle_dir).manifest["suites"]["k"]["sha256"]
    )


# -- 4. sources that are not regular files -------------------------------------------------------------


def test_special_files(artifacts, tmp_path):
    data = build_fatbin([artifacts[("cubin", "sm_80")]])
    path = tmp_path / "k.fatbin"
    path.write_bytes(data)
    with open(path, "rb") as f:
        res = cli("inspect", "-", stdin=f)
    assert res.returncode == 0 and "1 fatbin(s), 1 entries" in res.stdout, res.stderr
    res = subprocess.run(["bash", "-c", f"{' '.join(CLI)} inspect <(cat {path})"], capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert res.returncode == 0 and "1 entries" in res.stdout, res.stderr
    for special in (tmp_path, "/dev/zero", "/dev/null"):
        with pytest.raises(FatbinFormatError, match="not a regular file"):
            read_fatbin(special)
    res = cli("inspect", "/dev/zero", str(path))
    assert res.returncode == 1 and "not a regular file" in res.stderr and "1 entries" in res.stdout


def test_a_fifo_that_stays_silent_is_an_error_not_a_hang(artifacts, tmp_path, monkeypatch):
    """Opening a FIFO for reading waits for a writer (fifo(7)), which may never come: the reading commands open it
    without waiting, give a writer FIFO_WAIT seconds to send its first bytes, then read to its end like cat."""
    import threading

    from cuda_fatbin import _source

    monkeypatch.setattr(_source, "FIFO_WAIT", 0.2)
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    done = []

    def commands() -> None:
        for args in (["inspect", fifo], ["which", fifo, "--gpu", "80"], ["extract", fifo, "-o", tmp_path / "out"]):
            done.append((args, cli_main(*args)))

    waiting = threading.Thread(target=commands, daemon=True)  # a hang fails the test, not the run
    waiting.start()
    waiting.join(30)
    assert not waiting.is_alive(), f"still waiting on the FIFO after 30 s (done: {done})"
    for args, res in done:
        assert res.returncode == 1 and "is a FIFO that nothing was written to within 0.2 s" in res.stderr, (args, res)
    assert len(done) == 3
    assert not (tmp_path / "out").exists()
    data = build_fatbin([artifacts[("cubin", "sm_80")]])

    def write() -> None:  # a producer: its open waits for the reader, then it writes and closes
        with open(fifo, "wb") as f:
            f.write(data)

    monkeypatch.setattr(_source, "FIFO_WAIT", 60.0)
    writer = threading.Thread(target=write)
    writer.start()
    assert [str(e.arch) for e in read_fatbin(fifo).entries] == ["sm_80"]
    writer.join()

    def write_slowly() -> None:  # a writer that pauses: the read waits for its end (EOF), not what came first
        with open(fifo, "wb", buffering=0) as f:
            time.sleep(0.5)  # FIFO_WAIT is seconds: half of one is waited for, first bytes and later ones
            f.write(data[:100])
            time.sleep(0.5)
            f.write(data[100:])

    monkeypatch.setattr(_source, "FIFO_WAIT", 5.0)
    writer = threading.Thread(target=write_slowly)
    writer.start()
    assert [e.data() for e in read_fatbin(fifo).entries] == [artifacts[("cubin", "sm_80")]]  # the chunks joined
    writer.join()
    monkeypatch.setattr(_source, "FIFO_WAIT", 0.2)
    with pytest.raises(FatbinFormatError) as info:
        read_fatbin(fifo)
    assert info.value.offset == 0

    def write_and_stop() -> None:  # a writer that sends some bytes, then holds the FIFO open and says no more
        with open(fifo, "wb", buffering=0) as f:
            f.write(data[:60])
            time.sleep(0.1)
            f.write(data[60:100])
            time.sleep(3)

    monkeypatch.setattr(_source, "FIFO_WAIT", 0.3)
    writer = threading.Thread(target=write_and_stop)
    writer.start()
    start = time.monotonic()
    with pytest.raises(FatbinFormatError, match="is a FIFO that sent 100 bytes, then nothing more, within 0.3 s"):
        read_fatbin(fifo)
    assert time.monotonic() - start < 2.5  # not waiting for the writer's close
    writer.join()

    def write_once() -> None:
        with open(fifo, "wb") as f:
            f.write(data)

    real_read, calls = os.read, []

    def read_blocked_once(fd, n):  # woken, but another reader took the bytes first: poll again, read on
        calls.append(n)
        if len(calls) == 1:
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return real_read(fd, n)

    monkeypatch.setattr(_source, "FIFO_WAIT", 5.0)
    monkeypatch.setattr(os, "read", read_blocked_once)
    writer = threading.Thread(target=write_once)
    writer.start()
    try:
        assert [e.data() for e in read_fatbin(fifo).entries] == [artifacts[("cubin", "sm_80")]]
    finally:
        monkeypatch.setattr(os, "read", real_read)
        writer.join()
    assert len(calls) >= 3  # the refused read, the data, the end


def test_a_terminal_given_as_a_path_is_refused_at_once(monkeypatch):
    """Only a named FIFO gets the wait: a terminal with nothing typed (a character device, never readable here)
    is refused as not a regular file, without waiting."""
    from cuda_fatbin import _source

    monkeypatch.setattr(_source, "FIFO_WAIT", 3.0)  # were it waited on, the FIFO's message would come after it
    leader, follower = os.openpty()
    try:
        with pytest.raises(FatbinFormatError, match="is not a regular file, a pipe or standard input"):
            read_fatbin(os.ttyname(follower))
    finally:
        os.close(leader)
        os.close(follower)


def test_a_file_of_exactly_the_read_size_is_read_not_mapped(artifacts, tmp_path):
    """Files up to _source._SMALL_FILE bytes are read into memory, so one cut short after it was opened still reads
    (a mapped file would raise "shrank", test_a_file_that_shrinks_gives_an_error_not_sigbus)."""
    from cuda_fatbin import _source

    data = build_fatbin([artifacts[("cubin", "sm_80")]])
    path = tmp_path / "exact.fatbin"
    path.write_bytes(data + bytes(_source._SMALL_FILE - len(data)))
    assert path.stat().st_size == _source._SMALL_FILE
    fb = read_fatbin(path)
    with open(path, "r+b") as f:
        f.truncate(16)  # the fatbin header only
    assert fb.entries[0].data() == artifacts[("cubin", "sm_80")]


def test_a_small_file_that_grows_while_read_is_an_error_not_cut(artifacts, tmp_path, monkeypatch):
    """A file of up to _SMALL_FILE bytes when opened is read whole; one that grows past that before the read
    ends is refused, not cut at what was read (a fatbin appended then would be lost without a word)."""
    from cuda_fatbin import _files, _source

    data = build_fatbin([artifacts[("cubin", "sm_80")]])
    path = tmp_path / "grows.bin"
    path.write_bytes(b"\0" * 4096)
    real = _files.open_input

    def open_then_grow(p):
        opened = real(p)
        with open(path, "ab") as f:
            f.write(bytes(2 << 20) + data)
        return opened

    monkeypatch.setattr(_files, "open_input", open_then_grow)
    with pytest.raises(FatbinFormatError, match="grew while it was read") as info:
        list(iter_fatbins(path, embedded=True))
    assert info.value.offset == _source._SMALL_FILE + 1
    monkeypatch.setattr(_files, "open_input", real)
    assert len(list(iter_fatbins(path, embedded=True))) == 1  # read again once written: the fatbin is there


def test_a_file_that_shrinks_gives_an_error_not_sigbus(artifacts, tmp_path):
    payload = __import__("random").Random(1).randbytes(2 << 20)  # uncompressed, larger than what is read, not mapped
    entry = struct.pack("<HHIQIIHHIIIQQQ", 0x02, 0x0101, 64, len(payload), 0, 0, 7, 1, 80, 0, 0, 0x11, 0, 0)
    big = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 64 + len(payload)) + entry + payload
    path = tmp_path / "big.fatbin"
    path.write_bytes(big)
    fb = read_fatbin(path)
    with open(path, "r+b") as f:
        f.truncate(4096)
    with pytest.raises(FatbinFormatError) as info:
        fb.entries[0].data()
    assert info.value.message == f"{str(path)!r} shrank to 4096 bytes while it was being read"


def test_corrupt_cubin_header_in_an_entry_is_an_error(artifacts):
    data = bytearray(build_fatbin([artifacts[("cubin", "sm_80")]]))
    entry = read_fatbin(bytes(data)).entries[0]
    elf = entry.offset + 64
    struct.pack_into("<Q", data, elf + 0x28, 64)  # e_shoff: the image would "end" near its start
    struct.pack_into("<H", data, elf + 0x3C, 0)  # e_shnum
    struct.pack_into("<Q", data, elf + 0x20, 0)  # e_phoff
    with pytest.raises(FatbinFormatError, match="non-zero bytes follow|ELF image of this entry is malformed"):
        read_fatbin(bytes(data)).entries[0].data()


def test_errors_name_the_offset_once(artifacts):
    with pytest.raises(FatbinFormatError) as info:
        list(iter_fatbins(b"\x7fELF\x02\x01\x01" + bytes(9) + b"\x01\x00" + bytes(4)))
    assert str(info.value).count("at offset") == 1


# -- 5. faults in compile ------------------------------------------------------------------------------


class InterruptingExecutor:
    """An executor whose jobs are interrupted as by Ctrl-C."""

    def __init__(self, exc: BaseException) -> None:
        import concurrent.futures as cf

        self._pool = cf.ThreadPoolExecutor(2)
        self._exc = exc

    def submit(self, fn, *args, **kwargs):
        def run():
            raise self._exc

        return self._pool.submit(run)


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), SystemExit(3)])
def test_interrupts_in_jobs_propagate_unchanged(exc):
    from cuda_fatbin import Program

    with pytest.raises(type(exc)):
        Program(KERNEL_SRC, "c++").compile("fatbin", archs=["sm_80", "sm_90"], executor=InterruptingExecutor(exc))


def test_cache_entry_replaced_by_a_directory_counts_as_corrupt(tmp_path):
    from cuda.core.utils import FileStreamProgramCache

    from cuda_fatbin import Program

    root = tmp_path / "cache"
    with FileStreamProgramCache(root) as cache:
        cold = Program(KERNEL_SRC, "c++").compile("fatbin", archs=["sm_80"], cache=cache)
    entry = next(p for p in root.rglob("*") if p.is_file() and "tmp" not in p.relative_to(root).parts)
    entry.unlink()
    entry.mkdir()
    (entry / "x").write_text("x")
    with FileStreamProgramCache(root) as cache:
        program = Program(KERNEL_SRC, "c++")
        again = program.compile("fatbin", archs=["sm_80"], cache=cache)
    again_plain = plain(again)
    cold_plain = plain(cold)
    assert again_plain.code == cold_plain.code and len(program.last_cache_report.corrupt) == 1


# -- 6. fuzz: only documented exceptions, bounded time, nothing written outside -----------------------

_FUZZ_SEEDS: dict = {}


def _seed(artifacts, name: str) -> bytes:
    if name not in _FUZZ_SEEDS:
        fat = build_fatbin([artifacts[("cubin", "sm_80")], Part(artifacts[("ptx", "sm_90")], identifier="p/q")])
        _FUZZ_SEEDS["fatbin"] = fat
        _FUZZ_SEEDS["elf"] = elf_with_sections(fat + fat, [(".nv_fatbin", 0, 2 * len(fat)), (".data", 0, len(fat))])
        _FUZZ_SEEDS["concat"] = concat_fatbin(bytes(range(256)) * 64, [(0, 4096), (4096, 8192), (12288, 4096)])
    return _FUZZ_SEEDS[name]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzz_reader_extract_and_elf(artifacts, tmp_path_factory, data):
    blob = bytearray(_seed(artifacts, data.draw(st.sampled_from(["fatbin", "elf", "concat"]))))
    for _ in range(data.draw(st.integers(0, 8))):
        blob[data.draw(st.integers(0, len(blob) - 1))] = data.draw(st.integers(0, 255))
    blob = bytes(blob[: data.draw(st.integers(16, len(blob)))])
    root = tmp_path_factory.mktemp("fuzz")
    out = root / "out"
    t0 = time.perf_counter()
    with contextlib.suppress(FatbinFormatError):
        for fb in iter_fatbins(blob, embedded=True, relocatable=True):
            for e in fb.iter_entries():
                with contextlib.suppress(FatbinFormatError):
                    e.data()
    with contextlib.suppress(FatbinFormatError):
        extract_entries(blob, out, embedded=True, source_name="../fuzz.bin", on_error=lambda *a: None)
    assert time.perf_counter() - t0 < 2.0
    assert all(out in p.parents for p in files_under(root))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=30,
), where=st.sampled_from(["root", "suites", "record"]))  # fmt: skip
def test_fuzz_manifest_parser(bundle_dir, tmp_path_factory, doc, where):
    manifest = json.loads((bundle_dir / "manifest.json").read_text())
    if where == "suites":
        manifest["suites"] = doc
    elif where == "record":
        manifest["suites"]["k"] = doc
    else:
        manifest = doc
    root = tmp_path_factory.mktemp("m")
    (root / "manifest.json").write_text(json.dumps(manifest))
    with contextlib.suppress(BundleError):
        bundle = KernelBundle.open(root)
        with contextlib.suppress(KeyError):
            bundle.fatbin("k")


def test_identifier_file_names_hold_for_any_text():
    from cuda_fatbin._extract import safe_name

    @given(st.text())
    @settings(max_examples=300)
    def check(text):
        name = safe_name(text)
        assert name and "/" not in name and "\\" not in name and name not in (".", "..")
        assert not any(ord(c) < 32 or c == "\x7f" for c in name) and len(name.encode()) <= 200
        assert os.path.basename(name) == name

    check()


@pytest.mark.parametrize("embedded", [False, True])
def test_a_file_cut_short_between_two_fatbins_gives_an_error_not_sigbus(artifacts, tmp_path, embedded):
    """iter_fatbins yields lazily: a mapped file truncated between two yields must raise, not fault."""
    import subprocess
    import sys
    import textwrap

    from elf_testing import make_elf

    blob = build_fatbin([artifacts[("cubin", "sm_80")]])
    section = ".rodata" if embedded else ".nv_fatbin"
    path = tmp_path / "shrinks.o"
    path.write_bytes(make_elf([(section, 1, blob + bytes(2 << 20) + blob)], e_type=2))  # mapped: over 1 MiB
    code = textwrap.dedent(f"""
        from cuda_fatbin import FatbinFormatError, iter_fatbins
        it = iter_fatbins({str(path)!r}, embedded={embedded})
        first = next(it)
        with open({str(path)!r}, "r+b") as f:
            f.truncate(first.offset + first.size + 4096)
        try:
            next(it)
        except FatbinFormatError as e:
            print("refused:", e.message)
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, (res.returncode, res.stderr[-2000:])  # -7 would be SIGBUS
    assert res.stdout.startswith(f"refused: {str(path)!r} shrank to ") and "while it was being read" in res.stdout
