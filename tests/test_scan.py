# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""scan(): binaries made here (gcc, nvcc, zipfile), and a real wheel against cuobjdump."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from cuda_fatbin import Part, ScanReport, build_fatbin, iter_fatbins, scan
from cuda_fatbin._scan import STATUSES, default_paths

from fatbin_testing import listing, process_tmp, run_tool

CLI = [sys.executable, "-m", "cuda_fatbin"]
GPUS = "75;80;86;89;90;100;120"


def cli(*args, check=None) -> subprocess.CompletedProcess:
    res = subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=300)
    if check is not None:
        assert res.returncode == check, res.stdout + res.stderr
    return res


@pytest.fixture(scope="module")
def tree(artifacts, needs_nvcc) -> Path:
    """A folder of binaries: a gcc .so with a fatbin stored as data, nvcc host files, an -rdc .o, a wheel."""
    root = process_tmp("tree")
    lib = root / "pkg"
    lib.mkdir()
    stored = build_fatbin([artifacts[("cubin", "sm_90")], Part(artifacts[("ptx", "sm_80")])])
    array = ",".join(str(b) for b in stored)
    (root / "data.c").write_text(
        f"__attribute__((aligned(8))) const unsigned char kernels[{len(stored)}] = {{{array}}};\n"
        "const unsigned char* get(void) { return kernels; }\n"
    )
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(lib / "libdata.so"), str(root / "data.c")], check=True)
    cu = root / "k.cu"
    cu.write_text('extern "C" __global__ void k(float* p) { p[0] = 1; }\n')
    subprocess.run([needs_nvcc, "-shared", "-Xcompiler", "-fPIC", "-o", str(lib / "libk.so.1"), str(cu),
                    "-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=[sm_90,compute_90]"],
                   check=True)  # fmt: skip
    subprocess.run([needs_nvcc, "-c", "-rdc=true", "-o", str(lib / "rdc.o"), str(cu), "-arch=sm_80"], check=True)
    (lib / "notes.txt").write_text("not a binary")
    (lib / "link.so").symlink_to(lib / "libk.so.1")  # not followed: the library is read once
    with zipfile.ZipFile(root / "demo-1.0-py3-none-any.whl", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(lib / "libk.so.1", "demo/libk.so.1")
        zf.writestr("demo/__init__.py", "")
    return root


def test_scan_a_tree(tree):
    report = scan([tree], gpus=GPUS, max_workers=2)
    by = {Path(b.path.split("::")[-1]).name + ("@whl" if "::" in b.path else ""): b for b in report.binaries}
    assert set(by) == {"libdata.so", "libk.so.1", "rdc.o", "libk.so.1@whl"}
    data = by["libdata.so"]
    assert data.fatbins == {"registered": 0, "relocatable": 0, "embedded": 1}
    assert data.coverage["9.0"]["status"] == "SASS exact" and data.coverage["8.6"]["status"] == "PTX JIT"
    assert data.coverage["7.5"]["status"] == "no entry"
    k = by["libk.so.1"]
    assert k.coverage["8.0"]["status"] == "SASS exact" and k.coverage["8.6"]["status"] == "SASS compatible"
    assert k.coverage["12.0"]["status"] == "PTX JIT" and k.coverage["7.5"]["status"] == "no entry"
    assert by["libk.so.1@whl"].distribution == "demo 1.0" and by["libk.so.1@whl"].coverage == k.coverage
    rdc = by["rdc.o"]  # an -rdc object: its code runs once linked
    assert rdc.fatbins == {"registered": 0, "relocatable": 1, "embedded": 0}
    assert rdc.coverage["8.0"]["status"] == "SASS exact" and "load time" in rdc.coverage["8.0"]["reason"]
    assert rdc.coverage["9.0"]["status"] == "PTX JIT" and rdc.coverage["7.5"]["status"] == "no entry"
    assert not report.covered and {b.path for b in report.uncovered("sm_75")} >= {data.path, k.path}
    assert report.files_read == 4  # the symlink and the text file are not read
    assert all(b.coverage[g]["status"] in STATUSES for b in report.binaries for g in report.gpus)


RDC_MAIN = """
extern "C" __global__ void k(float* p);
int main() { k<<<1, 1>>>(0); return 0; }
"""


@pytest.mark.parametrize(
    "objects, link, expected",
    [  # observed on an H200 (9.0), driver 580: docs/gpu-validation.md, docs/formats.md
        (["sm_80", "sm_90"], "sm_80", "SASS exact"),  # ran: the runtime links the objects' sm_90 code at load time
        (["sm_80"], "sm_80", "no entry"),  # did not run
        (["sm_80", "compute_80"], "sm_80", "PTX JIT"),  # ran
        (["sm_80", "sm_90"], "sm_90", "SASS exact"),  # ran: the linked image itself
    ],
)
def test_rdc_programs_follow_the_runtime(tmp_path, needs_nvcc, objects, link, expected):
    (tmp_path / "k.cu").write_text('extern "C" __global__ void k(float* p) { if (p) p[0] = 1; }\n')
    (tmp_path / "main.cu").write_text(RDC_MAIN)
    gencode = [f"-gencode=arch=compute_{a.split('_')[1]},code={a}" for a in objects]
    for name in ("k", "main"):
        run_tool([needs_nvcc, "-rdc=true", "-c", f"{name}.cu", "-o", f"{name}.o", *gencode], cwd=tmp_path,
                 outputs=[tmp_path / f"{name}.o"])  # fmt: skip
    linked = f"-gencode=arch=compute_{link.split('_')[1]},code={link}"
    run_tool([needs_nvcc, "-rdc=true", "main.o", "k.o", "-o", "app", linked], cwd=tmp_path, outputs=[tmp_path / "app"])
    [b] = scan([tmp_path / "app"], gpus="9.0", max_workers=1).binaries
    assert b.coverage["9.0"]["status"] == expected, b.coverage["9.0"]["reason"]


def test_scan_with_a_driver(tree):
    report = scan([tree / "pkg" / "libk.so.1"], gpus="12.0", driver="12.8", max_workers=1)
    [b] = report.binaries
    assert b.coverage["12.0"]["status"] == "needs newer driver" and "ISA 9.0" in b.coverage["12.0"]["reason"]
    assert "without code skipped" in b.coverage["12.0"]["reason"]  # nvcc's device-link stub holds no kernel


def test_scan_cli_json_and_exit_codes(tree):
    res = cli("scan", tree, "--gpu", "75", "--gpu", "90", "--json", check=1)
    doc = json.loads(res.stdout)
    assert doc["schema"] == 1 and doc["gpus"] == ["7.5", "9.0"] and doc["covered"] is False
    assert set(doc) >= {"gpus", "driver", "binaries", "distributions", "covered"}
    assert set(doc["binaries"][0]) >= {"path", "distribution", "fatbins", "entries", "coverage"}
    res = cli("scan", tree / "pkg" / "libk.so.1", "--gpu", "8.0;9.0", check=0)
    assert "every GPU is covered" in res.stderr and "SASS" in res.stdout
    res = cli("scan", tree / "pkg" / "libk.so.1", "--gpu", "80", "--no-embedded", "--gpu", "75", check=1)
    assert "7.5: 1 binaries cannot run" in res.stdout
    cli("scan", tree, "--gpu", "sm_77x", check=2)
    res = cli("scan", tree / "missing", "--gpu", "80", check=1)
    assert res.stderr == f"cuda-fatbin scan: {tree / 'missing'}: No such file or directory\n"
    cli("scan", tree, check=2)  # --gpu is required


def test_scan_defaults_to_this_environment():
    paths = default_paths()
    assert paths and all(Path(p).is_dir() for p in paths)
    report = scan(gpus="80", max_workers=2)
    assert isinstance(report, ScanReport) and report.files_read > 0


def test_bad_arguments():
    with pytest.raises(ValueError):
        scan([], gpus="")
    with pytest.raises(ValueError, match="max_workers"):
        scan([], gpus="80", max_workers=0)
    with pytest.raises(FileNotFoundError):
        scan(["/nonexistent/path"], gpus="80")


@pytest.fixture(scope="session")
def curand_wheel() -> Path:
    """The nvidia-curand wheel from PyPI; the test skips only when it cannot be downloaded."""
    dest = process_tmp("wheels")
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", str(dest)]
    res = subprocess.run([*cmd, "nvidia-curand==10.4.5.25"], capture_output=True, text=True, timeout=600)
    wheels = list(dest.glob("*.whl"))
    if res.returncode != 0 or not wheels:
        pytest.skip(f"nvidia-curand could not be downloaded: {res.stderr.strip()[-200:]}")
    return wheels[0]


def test_real_wheel_matches_cuobjdump(curand_wheel, tmp_path, cuobjdump_path):
    report = scan([curand_wheel], gpus=GPUS, max_workers=1)
    [lib] = [b for b in report.binaries if "libcurand.so" in b.path]
    assert lib.distribution == "nvidia-curand 10.4.5.25" and lib.fatbins["registered"] == 13  # PEP 503 spelling
    assert lib.fatbins["embedded"] > 1000  # curand keeps most of its kernels as data, which cuobjdump does not list
    with zipfile.ZipFile(curand_wheel) as zf:
        member = next(n for n in zf.namelist() if Path(n).name.startswith("libcurand.so"))
        extracted = tmp_path / Path(member).name
        with zf.open(member) as src, open(extracted, "wb") as dst:
            shutil.copyfileobj(src, dst)
    out = subprocess.run([cuobjdump_path, "-lelf", "-lptx", str(extracted)], capture_output=True, text=True).stdout
    theirs = sorted(listing(out))
    ours = sorted((e.kind, str(e.arch).rstrip("f")) for fb in iter_fatbins(extracted) for e in fb.iter_entries())
    assert ours == theirs and len(ours) == 186
    assert all(lib.coverage[g]["status"] != "no entry" for g in report.gpus)
