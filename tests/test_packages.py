# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""scan and inspect of conda packages (.tar.bz2, .conda) and container images (docker save, OCI layouts)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cuda_fatbin import Part, build_fatbin, scan

from fatbin_testing import process_tmp
from package_testing import (
    compress,
    conda_tar_bz2,
    digest,
    docker_save,
    dot_conda,
    oci_files,
    oci_folder,
    tar_bytes,
)

GPUS = "75;80;90;120"


@pytest.fixture(scope="module")
def libk(needs_nvcc) -> bytes:
    """A shared library made by nvcc: sm_80 and sm_90 SASS, compute_90 PTX."""
    root = process_tmp("libk")
    (root / "k.cu").write_text('extern "C" __global__ void k(float* p) { p[0] = 1; }\n')
    subprocess.run([needs_nvcc, "-shared", "-Xcompiler", "-fPIC", "-o", str(root / "libk.so"), str(root / "k.cu"),
                    "-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=[sm_90,compute_90]"],
                   check=True)  # fmt: skip
    return (root / "libk.so").read_bytes()


@pytest.fixture(scope="module")
def fatbin75(artifacts) -> bytes:
    """A raw fatbin: sm_75 SASS and sm_80 PTX."""
    return build_fatbin([artifacts[("cubin", "sm_75")], Part(artifacts[("ptx", "sm_80")])])


def statuses(b) -> dict[str, str]:
    return {g: row["status"] for g, row in b.coverage.items()}


@pytest.fixture(scope="module")
def alone(libk, fatbin75, tmp_path_factory) -> dict[str, dict[str, str]]:
    """What scan says of each binary as a file of its own: the packages must say the same."""
    root = tmp_path_factory.mktemp("alone")
    (root / "libk.so").write_bytes(libk)
    (root / "k.fatbin").write_bytes(fatbin75)
    return {Path(b.path).name: statuses(b) for b in scan([root], gpus=GPUS, max_workers=1).binaries}


# -- conda packages -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [".tar.bz2", ".conda"])
def test_a_conda_package_is_read_with_its_distribution(tmp_path, libk, fatbin75, alone, kind):
    files = {"lib/": None, "lib/libk.so": libk, "share/k.fatbin": fatbin75, "share/readme.txt": b"x" * 100}
    make = conda_tar_bz2 if kind == ".tar.bz2" else dot_conda
    pkg = make(tmp_path / f"k-cuda-1.0-h0_0{kind}", files)
    report = scan([tmp_path], gpus=GPUS, max_workers=1)
    assert report.unreadable == [] and report.files_read == 2
    by = {b.member: b for b in report.binaries}
    assert set(by) == {"lib/libk.so", "share/k.fatbin"}
    assert by["lib/libk.so"].path == f"{pkg}::lib/libk.so" and by["lib/libk.so"].archive == str(pkg)
    assert {b.distribution for b in report.binaries} == {"k-cuda 1.0"}
    assert statuses(by["lib/libk.so"]) == alone["libk.so"] and statuses(by["share/k.fatbin"]) == alone["k.fatbin"]
    assert [d["distribution"] for d in report.distributions()] == ["k-cuda 1.0"]
    assert by["lib/libk.so"].layer is None


def test_inspect_reads_a_member_of_a_conda_package_by_the_path_scan_prints(tmp_path, libk):
    pkg = dot_conda(tmp_path / "k-1.0-0.conda", {"lib/libk.so": libk, "lib/other.so": libk})
    res = subprocess.run([sys.executable, "-m", "cuda_fatbin", "inspect", f"{pkg}::lib/libk.so"], capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "sm_90" in res.stdout and "other.so" not in res.stdout
    res = subprocess.run([sys.executable, "-m", "cuda_fatbin", "inspect", f"{pkg}::lib/none.so"], capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert res.returncode == 1 and "no member named lib/none.so" in res.stderr


# -- container images -----------------------------------------------------------------------------------------


def test_an_opaque_root_hides_every_lower_file(tmp_path, fatbin75):
    """.wh..wh..opq at the top of a layer makes its root opaque: every file of the layers below is hidden,
    never read; the layer's own files and the layers above it are read."""
    lower = tar_bytes({"lib/": None, "lib/k.fatbin": fatbin75, "old.fatbin": fatbin75})
    middle = tar_bytes({".wh..wh..opq": b"", "new.fatbin": fatbin75})
    upper = tar_bytes({"top.fatbin": fatbin75})
    report = scan([docker_save(tmp_path / "image.tar", [lower, middle, upper])], gpus=GPUS, max_workers=1)
    assert {b.member: b.layer["index"] for b in report.binaries} == {"new.fatbin": 1, "top.fatbin": 2}
    assert report.files_read == 2


def test_an_upper_layer_whiteout_leaves_only_the_survivor(tmp_path, libk, fatbin75):
    lower = tar_bytes({"usr/": None, "usr/lib/": None, "usr/lib/libk.so": libk, "usr/lib/libgone.so": libk,
                       "opt/": None, "opt/k.fatbin": fatbin75})  # fmt: skip
    upper = tar_bytes({"usr/lib/.wh.libgone.so": b"", "opt/.wh..wh..opq": b"", "opt/new.fatbin": fatbin75})
    image = docker_save(tmp_path / "image.tar", [lower, upper])
    report = scan([image], gpus=GPUS, max_workers=1)
    assert report.unreadable == []
    assert {b.member: b.layer["index"] for b in report.binaries} == {"usr/lib/libk.so": 0, "opt/new.fatbin": 1}
    assert {b.path for b in report.binaries} == {f"{image}::usr/lib/libk.so", f"{image}::opt/new.fatbin"}
    assert report.files_read == 2  # the hidden binaries are never read
    res = subprocess.run([sys.executable, "-m", "cuda_fatbin", "inspect", image], capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert res.returncode == 0 and "usr/lib/libk.so" in res.stdout and "libgone" not in res.stdout, res.stderr
    for hidden in ("usr/lib/libgone.so", "opt/k.fatbin"):
        res = subprocess.run([sys.executable, "-m", "cuda_fatbin", "which", f"{image}::{hidden}", "--gpu", "80"],
                             capture_output=True, text=True, timeout=120)  # fmt: skip
        assert res.returncode == 1 and "no member named" in res.stderr
    res = subprocess.run([sys.executable, "-m", "cuda_fatbin", "which", f"{image}::opt/new.fatbin", "--gpu", "75"],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert res.returncode == 0, res.stderr


def test_a_binary_is_judged_from_the_last_layer_that_provides_it(tmp_path, libk, fatbin75, alone):
    image = docker_save(tmp_path / "image.tar", [tar_bytes({"lib/k": fatbin75}), tar_bytes({"lib/k": libk}),
                                                 tar_bytes({"etc/x": b"y"})])  # fmt: skip
    [b] = scan([image], gpus=GPUS, max_workers=1).binaries
    assert b.layer["index"] == 1 and statuses(b) == alone["libk.so"]
    image = docker_save(tmp_path / "back.tar", [tar_bytes({"lib/k": libk}), tar_bytes({"lib/k": fatbin75})])
    [b] = scan([image], gpus=GPUS, max_workers=1).binaries
    assert b.layer["index"] == 1 and statuses(b) == alone["k.fatbin"]
    image = docker_save(tmp_path / "dir.tar", [tar_bytes({"lib/k/x.so": libk}), tar_bytes({"lib/k": b"a file now"})])
    assert scan([image], gpus=GPUS, max_workers=1).binaries == []  # a file replaced the folder


def test_an_oci_layout_folder_and_tar_with_gzip_and_zstd_layers(tmp_path, libk, fatbin75, alone):
    layers = [compress(tar_bytes({"usr/lib/libk.so": libk}), "gzip"),
              compress(tar_bytes({"opt/k.fatbin": fatbin75}), "zstd")]  # fmt: skip
    folder = oci_folder(tmp_path / "layout", layers)
    (tmp_path / "layout.tar").write_bytes(tar_bytes(oci_files(layers)))
    for image in (folder, tmp_path / "layout.tar"):
        report = scan([image], gpus=GPUS, max_workers=1)
        assert report.unreadable == []
        by = {b.member: b for b in report.binaries}
        assert set(by) == {"usr/lib/libk.so", "opt/k.fatbin"}
        assert by["usr/lib/libk.so"].layer == {"index": 0, "id": digest(layers[0])}
        assert by["opt/k.fatbin"].layer == {"index": 1, "id": digest(layers[1])}
        assert statuses(by["usr/lib/libk.so"]) == alone["libk.so"]
    # found in a folder walk too, the layout read as one image (its blobs are not walked)
    report = scan([tmp_path], gpus=GPUS, max_workers=2)
    assert sorted(b.path for b in report.binaries) == sorted(
        f"{p}::{m}" for p in (folder, tmp_path / "layout.tar") for m in ("opt/k.fatbin", "usr/lib/libk.so")
    )


def test_scan_json_carries_the_layer_and_validates(tmp_path, libk):
    import jsonschema

    image = docker_save(tmp_path / "image.tar", [compress(tar_bytes({"lib/libk.so": libk}), "gzip")])
    res = subprocess.run([sys.executable, "-m", "cuda_fatbin", "scan", str(image), "--gpu", "90", "--json"],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    doc = json.loads(res.stdout)
    schema = json.loads((Path(__file__).parents[1] / "src/cuda_fatbin/schemas/scan.json").read_text())
    jsonschema.validate(doc, schema)
    [b] = doc["binaries"]
    assert b["layer"]["index"] == 0 and b["path"] == f"{image}::lib/libk.so" and res.returncode == 0
