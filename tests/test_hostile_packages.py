# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""conda packages and container images as hostile input: docs/security.md's promises, one test each."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuda_fatbin import Part, build_fatbin, scan

from package_testing import compress, conda_tar_bz2, docker_save, dot_conda, oci_files, oci_folder, tar_bytes

GPUS = "75;90"


@pytest.fixture(scope="module")
def fatbin(artifacts) -> bytes:
    return build_fatbin([artifacts[("cubin", "sm_75")], Part(artifacts[("ptx", "sm_80")])])


def cli(*args) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "cuda_fatbin", *map(str, args)], capture_output=True, timeout=300,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8:strict"})  # fmt: skip


def errors(report) -> dict[str, str]:
    return {b.path: b.error for b in report.binaries if b.error}


def test_bad_inputs_of_each_format_are_one_error_row_each_and_the_scan_goes_on(tmp_path, fatbin):
    good = tmp_path / "good.fatbin"
    good.write_bytes(fatbin)
    pkg = tar_bytes({"info/index.json": b"{}", "lib/k.fatbin": fatbin})
    (tmp_path / "cut-1.0-0.tar.bz2").write_bytes(compress(pkg, "bzip2")[:-40])
    (tmp_path / "noise-1.0-0.conda").write_bytes(os.urandom(3000))
    with zipfile.ZipFile(tmp_path / "empty-1.0-0.conda", "w") as zf:
        zf.writestr("metadata.json", "{}")
    layer = tar_bytes({"lib/k.fatbin": fatbin})
    docker_save(tmp_path / "manifest.tar", [layer])
    data = (tmp_path / "manifest.tar").read_bytes().replace(b'"Layers"', b'"Layers" ["x"')
    (tmp_path / "manifest.tar").write_bytes(data)  # a checksum error now, or JSON that is not JSON
    gz = compress(layer, "gzip")
    docker_save(tmp_path / "gzip.tar", [gz[: len(gz) // 2]])  # cut inside the binary
    docker_save(tmp_path / "two.tar", [layer], images=2)
    docker_save(tmp_path / "xz.tar", [b"\xfd7zXZ\x00" + bytes(600)])
    broken = oci_folder(tmp_path / "layout", [compress(layer, "zstd")])
    blob = next((broken / "blobs/sha256").iterdir())
    blob.unlink() if blob.stat().st_size > 300 else None  # the layer (the largest blob) is gone
    report = scan([tmp_path], gpus=GPUS, max_workers=2)
    rows = errors(report)
    assert report.files_read >= 1 and str(good) in {b.path for b in report.binaries if not b.error}
    owners = sorted(Path(b.archive or b.path).name.split(".")[0].split("-")[0] for b in report.binaries if b.error)
    assert owners == sorted(["cut", "noise", "empty", "manifest", "gzip", "two", "xz", "layout"]), rows
    assert len(rows) == 8, rows  # one each
    assert not report.covered
    res = cli("scan", tmp_path, "--gpu", GPUS)
    assert res.returncode == 1 and b"8 input(s) could not be read" in res.stdout and b"Traceback" not in res.stderr


@pytest.mark.parametrize("how", ["zstd", "bzip2", "gzip"])
def test_a_compression_bomb_is_an_error_in_bounded_work(tmp_path, fatbin, how):
    layer = compress(tar_bytes({"lib/k.fatbin": fatbin, "zeros": bytes(64 << 20)}), how)
    image = docker_save(tmp_path / "image.tar", [layer])
    start = time.perf_counter()
    report = scan([image], gpus=GPUS, max_workers=1)
    assert time.perf_counter() - start < 20
    assert {b.member for b in report.binaries if not b.error} == {"lib/k.fatbin"}  # read before the bomb
    bombs = [b for b in report.binaries if b.error]
    if how == "gzip":  # deflate reaches 1032x: under the bound (1024x + 1 MiB of slack), read to the end
        assert bombs == []
        return
    [bomb] = bombs
    assert "1024x" in bomb.error and "bomb" in bomb.error and bomb.layer["index"] == 0
    conda_pkg = tmp_path / "bomb-1.0-0.tar.bz2"
    conda_pkg.write_bytes(compress(tar_bytes({"info/index.json": b"{}", "zeros": bytes(64 << 20)}), "bzip2"))
    [bomb] = scan([conda_pkg], gpus=GPUS, max_workers=1).binaries
    assert bomb.path == str(conda_pkg) and "bomb" in bomb.error


def test_a_pax_size_is_decimal_and_a_bad_one_is_an_error(tmp_path, fatbin):
    import tarfile

    from cuda_fatbin._tarstream import iter_tar, open_stream

    raw = tar_bytes({"k.fatbin": fatbin})
    info = tarfile.TarInfo("big.bin")
    info.size, info.pax_headers = 10, {"size": "10", "comment": "x"}  # pax sizes are decimal
    path = tmp_path / "p.tar"
    path.write_bytes(info.tobuf(tarfile.PAX_FORMAT) + b"0123456789" + bytes(502) + raw)
    fd = os.open(path, os.O_RDONLY)
    try:
        got = [(e.name, e.size, d.all()) for e, d in iter_tar(open_stream(fd, 0, path.stat().st_size, "p"), "p")]
    finally:
        os.close(fd)
    assert got == [("big.bin", 10, b"0123456789"), ("k.fatbin", len(fatbin), fatbin)]
    info.pax_headers = {"size": "-1"}
    path.write_bytes(info.tobuf(tarfile.PAX_FORMAT) + raw)
    [row] = scan([path], gpus=GPUS, max_workers=1).binaries
    assert "negative size" in row.error


def test_archives_inside_a_package_are_never_opened(tmp_path, fatbin):
    inner = compress(tar_bytes({"zeros": bytes(64 << 20)}), "gzip")
    image = docker_save(tmp_path / "image.tar", [tar_bytes({"opt/conda/pkgs/x-1.0-0.tar.bz2": inner,
                                                            "a.whl": inner, "lib/k.fatbin": fatbin})])  # fmt: skip
    report = scan([image], gpus=GPUS, max_workers=1)
    assert [b.member for b in report.binaries] == ["lib/k.fatbin"] and report.files_read == 1
    assert report.skipped == {"archive in a package": 2}  # never opened, but counted: no silent pass


def test_archives_static_libraries_and_mach_o_in_a_package_are_counted_as_skipped(tmp_path, fatbin):
    """No silent pass: what may hold device code but is not read inside a package is counted, by kind."""
    layer = tar_bytes({"opt/pkgs/x.tar.zst": b"\x28\xb5\x2f\xfd" + bytes(60), "opt/w/a.whl": b"PK\x03\x04" + bytes(60),
                       "lib/libk.a": b"!<arch>\n" + bytes(56), "lib/k.dylib": b"\xcf\xfa\xed\xfe" + bytes(60),
                       "share/data.bin": bytes(64), "lib/k.fatbin": fatbin})  # fmt: skip
    image = docker_save(tmp_path / "image.tar", [compress(layer, "gzip")])
    report = scan([image], gpus=GPUS, max_workers=1)
    assert [b.member for b in report.binaries] == ["lib/k.fatbin"]
    assert report.skipped == {"archive in a package": 2, "ar in a package": 1, "Mach-O in a package": 1}


def test_only_candidate_binaries_are_held_in_memory(tmp_path, fatbin, monkeypatch):
    big = os.urandom(1 << 20) * 48  # 48 MiB that are no binary
    layer = compress(tar_bytes({"data.bin": big, "lib/k.fatbin": fatbin}), "zstd")
    image = docker_save(tmp_path / "image.tar", [layer])
    tracemalloc.start()
    try:
        report = scan([image], gpus=GPUS, max_workers=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert report.files_read == 1 and peak < 16 << 20, peak
    from cuda_fatbin import _archive

    monkeypatch.setattr(_archive, "MAX_MEMBER", len(fatbin) - 1)  # a binary over the limit for a member
    [row] = scan([image], gpus=GPUS, max_workers=1).binaries
    assert row.member == "lib/k.fatbin" and "limit for a member" in row.error


def test_hostile_member_paths_and_links_are_never_followed(tmp_path, fatbin):
    outside = tmp_path / "outside.fatbin"
    outside.write_bytes(fatbin)
    layer = tar_bytes({"../../escape.fatbin": fatbin, "/abs/k.fatbin": fatbin, "lib/a/../k.fatbin": fatbin},
                      links={"lib/link.fatbin": str(outside), "lib/up.fatbin": "../../../outside.fatbin"},
                      hard={"lib/hard.fatbin": str(outside)})  # fmt: skip
    image = docker_save(tmp_path / "image.tar", [layer])
    report = scan([image], gpus=GPUS, max_workers=1)
    ok = sorted(b.member for b in report.binaries if not b.error)
    assert ok == ["abs/k.fatbin", "lib/k.fatbin"] and report.files_read == 2  # no link read, outside never
    [bad] = [b for b in report.binaries if b.error]
    assert bad.member == "../../escape.fatbin" and "climbs out" in bad.error
    # an OCI layout whose blob is a symlink to a real layer elsewhere: not followed, an error row
    layout = oci_folder(tmp_path / "layout", [tar_bytes({"lib/k.fatbin": fatbin})])
    blob = max((layout / "blobs/sha256").iterdir(), key=lambda p: p.stat().st_size)
    (tmp_path / "elsewhere").write_bytes(blob.read_bytes())
    blob.unlink()
    blob.symlink_to(tmp_path / "elsewhere")
    [row] = scan([layout], gpus=GPUS, max_workers=1).binaries
    assert row.error and "symlink" in row.error
    # a digest that is a path is never opened
    files = oci_files([tar_bytes({"k": fatbin})])
    files["index.json"] = files["index.json"].replace(b'"sha256:', b'"sha256:../../', 1)
    (tmp_path / "digest.tar").write_bytes(tar_bytes(files))
    [row] = scan([tmp_path / "digest.tar"], gpus=GPUS, max_workers=1).binaries
    assert "not sha256:HEX" in row.error


def test_reading_packages_writes_nothing(tmp_path, fatbin, monkeypatch):
    dot_conda(tmp_path / "k-1.0-0.conda", {"lib/k.fatbin": fatbin})
    conda_tar_bz2(tmp_path / "k-1.0-0.tar.bz2", {"lib/k.fatbin": fatbin})
    docker_save(tmp_path / "image.tar", [compress(tar_bytes({"k.fatbin": fatbin}), "gzip")])
    oci_folder(tmp_path / "layout", [compress(tar_bytes({"k.fatbin": fatbin}), "zstd")])
    real_open, flags_seen = os.open, []

    def watching(path, flags, *args, **kwargs):
        flags_seen.append(flags)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", watching)
    report = scan([tmp_path], gpus=GPUS, max_workers=1)
    monkeypatch.undo()
    assert report.files_read == 4 and report.unreadable == []
    assert flags_seen and not [f for f in flags_seen if f & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC)]


def test_many_entries_and_whiteouts_are_linear(tmp_path, fatbin):
    def image(n: int) -> Path:
        names = {f"d{i % 97}/" + "x/" * 40 + f"f{i}": b"" for i in range(n)}
        lower = tar_bytes({**names, "lib/k.fatbin": fatbin})
        upper = tar_bytes({f"d{i % 97}/" + "x/" * 40 + f".wh.f{i}": b"" for i in range(0, n, 2)})
        return docker_save(tmp_path / f"image{n}.tar", [lower, upper])

    times = []
    for n in (4000, 16000):
        path = image(n)
        start = time.perf_counter()
        report = scan([path], gpus=GPUS, max_workers=1)
        times.append(time.perf_counter() - start)
        assert report.files_read == 1
    assert times[1] < 10 and times[1] < 12 * times[0], times  # 4x the entries: about 4x the time


def test_names_from_packages_reach_the_terminal_escaped(tmp_path, fatbin):
    docker_save(tmp_path / "image.tar", [tar_bytes({"lib/\x1b[31mred\n.fatbin": fatbin})])
    dot_conda(tmp_path / "k-1.0-0.conda", {"lib/\x1b]8;;x\x07k.fatbin": fatbin}, index=b'{"name": "\\u001b[2J", '
                                                                                       b'"version": "1"}')  # fmt: skip
    res = cli("scan", tmp_path, "--gpu", "70", "--wide")  # sm_70: not covered, so every path is printed
    out = res.stdout + res.stderr
    assert res.returncode == 1 and b"\x1b" not in out and b"\x07" not in out and b"Traceback" not in out
    assert b"\\x1b[31mred\\n.fatbin" in out and b"\\x1b]8;;x\\x07k.fatbin" in out and b"\\x1b[2J 1" in out
    res = cli("inspect", tmp_path / "image.tar", tmp_path / "k-1.0-0.conda")
    out = res.stdout + res.stderr
    assert res.returncode == 0 and b"\x1b" not in out and b"\\x1b[31mred" in out


def _mutated(data: bytes, edits: list[tuple[int, int]]) -> bytes:
    out = bytearray(data)
    for pos, value in edits:
        out[pos % len(out)] = value
    return bytes(out)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(which=st.sampled_from(["docker", "oci", "bz2", "conda"]),
       edits=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), min_size=1, max_size=8),
       cut=st.integers(0, 64))  # fmt: skip
def test_fuzzed_headers_never_raise_and_stay_fast(tmp_path_factory, fatbin, which, edits, cut):
    root = tmp_path_factory.mktemp("fuzz")
    layer = tar_bytes({"lib/": None, "lib/k.fatbin": fatbin, "x": b"y" * 100})
    if which == "docker":
        path = docker_save(root / "i.tar", [compress(layer, "gzip"), tar_bytes({"lib/.wh.x": b""})])
    elif which == "oci":
        path = root / "o.tar"
        path.write_bytes(tar_bytes(oci_files([compress(layer, "zstd")])))
    elif which == "bz2":
        path = conda_tar_bz2(root / "k-1-0.tar.bz2", {"lib/k.fatbin": fatbin})
    else:
        path = dot_conda(root / "k-1-0.conda", {"lib/k.fatbin": fatbin})
    data = _mutated(path.read_bytes(), edits)
    path.write_bytes(data[: len(data) - cut])
    start = time.perf_counter()
    report = scan([root], gpus=GPUS, max_workers=1)
    assert time.perf_counter() - start < 5
    for b in report.binaries:
        assert b.error or b.coverage


def test_an_oci_index_naming_one_large_index_many_times_is_read_once(tmp_path):
    """An index blob padded to 2 MiB whose 255 entries all name itself: each blob is read once, not once per
    entry (255 x 2 MiB of JSON); the layout is one error row, in well under the seconds that took."""
    import json

    layout = tmp_path / "layout"
    (layout / "blobs" / "sha256").mkdir(parents=True)
    (layout / "oci-layout").write_bytes(b'{"imageLayoutVersion": "1.0.0"}')
    name = "b" * 64
    entry = {"mediaType": "application/vnd.oci.image.index.v1+json", "digest": f"sha256:{name}"}
    index = json.dumps({"schemaVersion": 2, "manifests": [entry] * 255}).encode()
    (layout / "blobs" / "sha256" / name).write_bytes(index + b" " * (2 << 20))
    (layout / "index.json").write_bytes(index)
    start = time.perf_counter()
    [row] = scan([layout], gpus=GPUS, max_workers=1).binaries
    assert row.error and time.perf_counter() - start < 10  # 0.1 s read once; 40 s here read 255 times
