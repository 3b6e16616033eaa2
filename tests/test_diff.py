# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""diff(): builds made here (our compile, nvcc, zipfile), hostile pairs, and a real release pair against cuobjdump."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuda_fatbin._cli.main_diff import SHOWN, SHOWN_BINARIES, markdown, text
from cuda_fatbin._diff import BinaryDiff, DiffReport, _pairs, _Row, diff
from cuda_fatbin._policy import Policy
from cuda_fatbin._scan import BinaryReport
from test_scan import cli
from test_scan_exact import installed

from fatbin_testing import listing, process_tmp

GPUS = "80;86;90;100;120"
SOURCE = """
extern "C" __global__ void keep(float* p) { p[0] = 1; }
__global__ void scale(float* p, float s) { p[0] *= s; }
"""
ONLY_KEEP = 'extern "C" __global__ void keep(float* p) { p[0] = 1; }\n'


@pytest.fixture(scope="module")
def builds() -> dict[str, bytes]:
    """Fatbins of one library as releases change it: compiled once with our own compile (NVRTC)."""
    from cuda_fatbin import Program

    def fatbin(src: str, archs: list[str], ptx: list[str]) -> bytes:
        return bytes(Program(src, "c++").compile("fatbin", archs=archs, ptx_for=ptx).code)

    return {
        "base": fatbin(SOURCE, ["sm_80", "sm_90"], ["sm_90"]),
        "arch dropped": fatbin(SOURCE, ["sm_90"], ["sm_90"]),
        "ptx dropped": fatbin(SOURCE, ["sm_80", "sm_90"], []),
        "kernel removed": fatbin(ONLY_KEEP, ["sm_80", "sm_90"], ["sm_90"]),
        "sm_80 as PTX": fatbin(SOURCE, ["compute_80", "sm_90"], ["compute_80"]),
        "sm_80 only": fatbin(ONLY_KEEP, ["sm_80"], []),
    }


def two(tmp_path: Path, old: dict[str, bytes], new: dict[str, bytes]) -> tuple[Path, Path]:
    """Folders ``old`` and ``new`` holding the files given (relative path -> bytes)."""
    for side, files in (("old", old), ("new", new)):
        for rel, data in files.items():
            (tmp_path / side / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / side / rel).write_bytes(data)
    return tmp_path / "old", tmp_path / "new"


def test_an_arch_dropped_loses_the_gpus_it_served(builds, tmp_path):
    old, new = two(tmp_path, {"lib/k.fatbin": builds["base"]}, {"lib/k.fatbin": builds["arch dropped"]})
    report = diff(old, new, gpus=GPUS, max_workers=1)
    [b] = report.binaries
    assert report.lost and b.change == "changed" and b.name == "k.fatbin"
    assert b.sass == {"lost": ["sm_80"], "gained": []} and b.ptx == {"lost": [], "gained": []}
    assert {g: v["change"] for g, v in b.gpus.items()} == {"8.0": "lost", "8.6": "lost"}
    assert b.gpus["8.0"] == {"old": "SASS exact", "new": "no entry", "change": "lost"}
    assert b.kernels == {"lost": [], "gained": []}
    assert b.device_bytes == {"old": len(builds["base"]), "new": len(builds["arch dropped"])}
    assert not diff(old, new, gpus="90;100", max_workers=1).lost  # the GPUs it still serves: nothing lost


def test_the_ptx_dropped_loses_the_newer_gpus(builds, tmp_path):
    old, new = two(tmp_path, {"k.fatbin": builds["base"]}, {"k.fatbin": builds["ptx dropped"]})
    [b] = diff(old, new, gpus=GPUS, max_workers=1).binaries
    assert b.ptx == {"lost": ["sm_90"], "gained": []} and b.sass == {"lost": [], "gained": []}
    assert b.gpus == {g: {"old": "PTX JIT", "new": "no entry", "change": "lost"} for g in ("10.0", "12.0")}
    back = diff(new, old, gpus=GPUS, max_workers=1)  # the other way: gained, nothing lost
    assert not back.lost and {v["change"] for v in back.binaries[0].gpus.values()} == {"gained"}


def test_a_kernel_removed_is_named_and_loses_no_gpu(builds, tmp_path):
    old, new = two(tmp_path, {"k.fatbin": builds["base"]}, {"k.fatbin": builds["kernel removed"]})
    report = diff(old, new, gpus=GPUS, max_workers=1)
    [b] = report.binaries
    assert not report.lost and b.change == "changed" and b.gpus == {}
    assert b.kernels == {"lost": ["_Z5scalePff"], "gained": []}
    doc = b.to_dict()["kernels"]["lost"]
    assert doc[0]["name"] == "_Z5scalePff" and doc[0]["demangled"].startswith("scale")


def test_sass_only_counts_a_gpu_that_fell_back_to_jit_as_lost(builds, tmp_path):
    old, new = two(tmp_path, {"k.fatbin": builds["base"]}, {"k.fatbin": builds["sm_80 as PTX"]})
    report = diff(old, new, gpus="80;90", max_workers=1)
    assert report.binaries[0].gpus["8.0"] == {"old": "SASS exact", "new": "PTX JIT", "change": "changed"}
    assert not report.lost and report.binaries[0].sass["lost"] == ["sm_80"]
    strict = diff(old, new, gpus="80;90", policy=Policy(sass_only=True), max_workers=1)
    assert strict.lost and strict.binaries[0].gpus["8.0"]["change"] == "lost"
    cli("diff", old, new, "--gpu", "80;90", check=0)
    cli("diff", old, new, "--gpu", "80;90", "--sass-only", check=1)


def test_require_ptx_counts_the_ptx_dropped_as_lost_though_every_gpu_named_keeps_sass(builds, tmp_path):
    old, new = two(tmp_path, {"k.fatbin": builds["base"]}, {"k.fatbin": builds["ptx dropped"]})
    assert not diff(old, new, gpus="80;90", max_workers=1).lost  # 8.0 and 9.0 run the SASS both times
    [b] = diff(old, new, gpus="80;90", policy=Policy(require_ptx=True), max_workers=1).binaries
    assert b.gpus == {} and len(b.lost) == 1 and b.lost[0].startswith("require-ptx: no PTX")
    cli("diff", old, new, "--gpu", "80;90", "--require-ptx", check=1)
    assert not diff(new, old, gpus="80;90", policy=Policy(require_ptx=True), max_workers=1).lost  # PTX gained


def two_fatbins(folder: Path, first: bytes, second: bytes) -> bytes:
    """A gcc shared library whose .nv_fatbin holds two fatbins (two translation units' modules)."""

    def array(name: str, data: bytes) -> str:
        return (f'__attribute__((section(".nv_fatbin"), aligned(8))) const unsigned char {name}[{len(data)}] = '
                f"{{{','.join(map(str, data))}}};\n")  # fmt: skip

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "two.c").write_text(
        array("a", first) + array("b", second) + "const void* get(int i) { return i ? a : b; }\n"
    )
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(folder / "libtwo.so"), str(folder / "two.c")], check=True)
    return (folder / "libtwo.so").read_bytes()


def test_allow_partial_and_a_policy_file_decide_whether_partial_is_lost(builds, tmp_path):
    before = two_fatbins(tmp_path / "b1", builds["base"], builds["base"])
    after = two_fatbins(tmp_path / "b2", builds["base"], builds["sm_80 only"])
    installed(tmp_path / "old", "mylib", "1.0", {"mylib/libtwo.so": before})
    installed(tmp_path / "new", "mylib", "2.0", {"mylib/libtwo.so": after})
    old, new = tmp_path / "old", tmp_path / "new"
    [b] = diff(old, new, gpus="80;90", max_workers=1).binaries
    assert b.gpus == {"9.0": {"old": "SASS exact", "new": "partial", "change": "changed"}}  # partial may be, by default
    cli("diff", old, new, "--gpu", "90", check=0)
    cli("diff", old, new, "--gpu", "90", "--allow-partial", "MyLib", check=0)
    res = cli("diff", old, new, "--gpu", "90", "--allow-partial", "other", check=1)
    assert "GPU 9.0: SASS exact -> partial" in res.stdout
    (tmp_path / "gate.toml").write_text('gpus = ["H100"]\nallow_partial = []\n')
    doc = json.loads(cli("diff", old, new, "--policy", tmp_path / "gate.toml", "--json", check=1).stdout)
    assert doc["gpus"] == ["9.0"] and doc["policy"]["allow_partial"] == []
    (tmp_path / "bad.toml").write_text("sass_only = 1\n")
    assert "sass_only" in cli("diff", old, new, "--policy", tmp_path / "bad.toml", check=2).stderr


def test_a_binary_moved_pairs_by_name_and_is_unchanged(builds, tmp_path):
    old, new = two(tmp_path, {"pkg/lib/k.fatbin": builds["base"]}, {"pkg/lib64/k.fatbin": builds["base"]})
    report = diff(old, new, gpus=GPUS, max_workers=1)
    [b] = report.binaries
    assert not report.lost and b.change == "unchanged"
    assert b.path == {"old": str(old / "pkg/lib/k.fatbin"), "new": str(new / "pkg/lib64/k.fatbin")}
    assert cli("diff", old, new, "--gpu", GPUS, check=0).stderr.strip() == "no coverage lost"


def test_a_binary_removed_with_device_code_loses_coverage(builds, tmp_path):
    old, new = two(tmp_path, {"k.fatbin": builds["base"], "j.fatbin": builds["base"]}, {"j.fatbin": builds["base"]})
    report = diff(old, new, gpus=GPUS, max_workers=1)
    by = {b.name: b for b in report.binaries}
    assert by["k.fatbin"].change == "removed" and by["k.fatbin"].lost[0] == "removed: it had device code"
    assert by["j.fatbin"].change == "unchanged" and report.lost
    added = diff(new, old, gpus=GPUS, max_workers=1)  # the other way: added, nothing lost
    assert {b.name: b.change for b in added.binaries} == {"k.fatbin": "added", "j.fatbin": "unchanged"}
    assert not added.lost
    res = cli("diff", old, new, "--gpu", GPUS, check=1)
    assert "k.fatbin: LOST" in res.stdout and "removed: it had device code" in res.stdout


def test_a_library_built_by_nvcc_loses_an_arch(tmp_path, needs_nvcc):
    cu = tmp_path / "k.cu"
    cu.write_text(SOURCE)
    for side, codes in (("old", ["sm_80", "sm_90"]), ("new", ["sm_90"])):
        (tmp_path / side).mkdir()
        gencode = [f"-gencode=arch=compute_{c[3:]},code={c}" for c in codes]
        subprocess.run([needs_nvcc, "-shared", "-Xcompiler", "-fPIC", "-o", str(tmp_path / side / "libk.so"), str(cu),
                        *gencode], check=True, timeout=300)  # fmt: skip
    res = cli("diff", tmp_path / "old", tmp_path / "new", "--gpu", "80;90", "--json", check=1)
    [b] = json.loads(res.stdout)["binaries"]
    assert b["name"] == "libk.so" and b["sass"]["lost"] == ["sm_80"] and b["gpus"]["8.0"]["change"] == "lost"


def test_distributions_pair_across_a_cuda_major_rename(builds, tmp_path):
    """An installed environment: the CUDA 12 distribution's library, moved by its CUDA 13 successor."""
    installed(tmp_path / "old", "nvidia-foo-cu12", "1.0", {"nvidia/foo/lib/libfoo.so.1": builds["base"]})
    installed(tmp_path / "old", "nvidia-baz-cu12", "1.0", {"nvidia/baz/lib/libbaz.so.1": builds["base"]})
    installed(tmp_path / "new", "nvidia-foo", "2.0", {"nvidia/cu13/lib/libfoo.so.1": builds["arch dropped"],
                                                        "nvidia/cu13/lib/libbar.so.1": builds["base"]})  # fmt: skip
    installed(tmp_path / "new", "nvidia-baz", "2.0", {"nvidia/cu13/lib/libbaz.so.1": builds["base"]})
    report = diff(tmp_path / "old", tmp_path / "new", gpus=GPUS, max_workers=2)
    by = {b.name: b for b in report.binaries}
    assert by["libfoo.so.1"].distribution == {"old": "nvidia-foo-cu12 1.0", "new": "nvidia-foo 2.0"}
    assert by["libfoo.so.1"].sass["lost"] == ["sm_80"] and by["libbar.so.1"].change == "added"
    assert by["libbaz.so.1"].change == "unchanged" and len(report.binaries) == 3


def test_wheels_pair_by_member_and_report_renamed_distributions(builds, tmp_path):
    def whl(path: Path, members: dict[str, bytes]) -> Path:
        with zipfile.ZipFile(path, "w") as zf:
            for name, data in members.items():
                zf.writestr(name, data)
        return path

    old = whl(tmp_path / "demo_cu12-1.0-py3-none-manylinux_2_28_x86_64.whl", {"demo/lib/k.so": builds["base"]})
    new = whl(tmp_path / "demo-2.0-py3-none-manylinux_2_28_x86_64.whl", {"demo/cu13/lib/k.so": builds["base"]})
    [b] = diff(old, new, gpus=GPUS, max_workers=1).binaries
    assert b.change == "unchanged" and b.distribution == {"old": "demo-cu12 1.0", "new": "demo 2.0"}


def test_conda_packages_and_images_pair_like_wheels(builds, tmp_path):
    from package_testing import conda_tar_bz2, docker_save, dot_conda, index_json, tar_bytes

    old = conda_tar_bz2(tmp_path / "k-cuda-1.0-0.tar.bz2", {"lib/libk.so": builds["base"]}, index_json("k-cuda", "1.0"))
    new = dot_conda(tmp_path / "k-cuda-2.0-0.conda", {"lib/cuda/libk.so": builds["ptx dropped"]},
                    index_json("k-cuda", "2.0"))  # fmt: skip
    [b] = diff(old, new, gpus=GPUS, max_workers=1).binaries
    assert b.distribution == {"old": "k-cuda 1.0", "new": "k-cuda 2.0"} and b.ptx["lost"] == ["sm_90"]
    assert b.path["new"] == f"{new}::lib/cuda/libk.so" and b.lost
    images = [docker_save(tmp_path / f"{n}.tar", [tar_bytes({"usr/lib/libk.so": builds[build]})])
              for n, build in (("one", "base"), ("two", "arch dropped"))]  # fmt: skip
    [b] = diff(*images, gpus=GPUS, max_workers=1).binaries
    assert b.name == "libk.so" and b.sass["lost"] == ["sm_80"] and b.path["old"] == f"{images[0]}::usr/lib/libk.so"


def test_folders_of_wheels_pair_each_platform_with_its_own(builds, tmp_path):
    for side, version, python, glibc in (("old", "1.0", "cp312", "2_27"), ("new", "2.0", "cp313", "2_28")):
        (tmp_path / side).mkdir()
        for machine in ("x86_64", "aarch64"):
            gone = side == "new" and machine == "x86_64"
            name = f"demo-{version}-{python}-{python}-manylinux_{glibc}_{machine}.whl"
            with zipfile.ZipFile(tmp_path / side / name, "w") as zf:
                zf.writestr("demo/libk.so", builds["arch dropped" if gone else "base"])
    report = diff(tmp_path / "old", tmp_path / "new", gpus=GPUS, max_workers=2)
    by = {("x86_64" in b.path["old"], "x86_64" in b.path["new"]): b.change for b in report.binaries}
    assert by == {(True, True): "changed", (False, False): "unchanged"} and report.lost


# -- hostile inputs -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("side", ["old", "new"])
def test_an_unreadable_binary_on_either_side_is_an_error_row(builds, tmp_path, side):
    files = {"old": {"k.fatbin": builds["base"]}, "new": {"k.fatbin": builds["base"]}}
    files[side]["k.fatbin"] = builds["base"][:40]  # a fatbin cut short
    old, new = two(tmp_path, files["old"], files["new"])
    report = diff(old, new, gpus=GPUS, max_workers=1)
    [b] = report.binaries
    assert report.lost and b.change == "unreadable" and b.error[side] and not b.error[{"old": "new"}.get(side, "old")]
    assert b.lost == [f"{side.upper()} could not be read: {b.error[side]}"]
    res = cli("diff", old, new, "--gpu", GPUS, check=1)
    assert f"{side.upper()} could not be read" in res.stdout


def test_an_entry_whose_kernels_cannot_be_read_is_counted_not_taken_as_lost(builds, tmp_path):
    broken = bytearray(builds["base"])
    at = broken.find(b"\x7fELF")
    broken[at + 0x28 : at + 0x30] = (1 << 62).to_bytes(8, "little")  # e_shoff: the section table lies past the end
    old, new = two(tmp_path, {"k.fatbin": builds["base"]}, {"k.fatbin": bytes(broken)})
    [b] = diff(old, new, gpus=GPUS, max_workers=1).binaries
    assert b.kernels_unread == {"old": 0, "new": 1} and b.kernels == {"lost": [], "gained": []}  # the others name them
    assert b.change == "changed" and b.to_dict()["kernels"]["unread"] == {"old": 0, "new": 1}
    assert "kernel names of some entries could not be read (1 in NEW)" in text(diff(old, new, gpus=GPUS, max_workers=1))


def test_a_wheel_that_is_no_zip_is_an_error_row(builds, tmp_path):
    old = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(old, "w") as zf:
        zf.writestr("demo/k.so", builds["base"])
    new = tmp_path / "demo-2.0-py3-none-any.whl"
    new.write_bytes(b"PK\x03\x04 not a zip at all")
    report = diff(old, new, gpus=GPUS, max_workers=1)
    assert report.lost and {b.change for b in report.binaries} == {"removed", "unreadable"}
    assert [b.path["new"] for b in report.binaries if b.change == "unreadable"] == [str(new)]


def test_two_binaries_of_one_name_in_a_distribution_are_not_guessed(builds, tmp_path):
    old, new = two(tmp_path, {"a/k.fatbin": builds["base"], "b/k.fatbin": builds["base"]},
                   {"c/k.fatbin": builds["base"], "d/k.fatbin": builds["base"]})  # fmt: skip
    report = diff(old, new, gpus=GPUS, max_workers=1)
    assert sorted(b.change for b in report.binaries) == ["added", "added", "removed", "removed"] and report.lost
    assert all(b.note == "2 binaries named k.fatbin in its input: paired by path only" for b in report.binaries)
    assert "not paired: 2 binaries named k.fatbin" in text(report)
    same = diff(old, old, gpus=GPUS, max_workers=1)  # the same paths: paired by path
    assert [b.change for b in same.binaries] == ["unchanged", "unchanged"] and not same.lost


def test_names_with_control_characters_are_escaped(builds, tmp_path):
    name = "k\x1b[31m.fatbin"
    old, new = two(tmp_path, {name: builds["base"]}, {name: builds["arch dropped"]})
    res = cli("diff", old, new, "--gpu", GPUS, check=1)
    assert "\x1b" not in res.stdout + res.stderr and "\\x1b[31m.fatbin: LOST" in res.stdout
    md = cli("diff", old, new, "--gpu", GPUS, "--format", "markdown", check=1).stdout
    assert "\x1b" not in md and "\\x1b\\[31m.fatbin" in md


def test_huge_listings_stay_bounded():
    """A release that drops 100 000 kernels from each of 2 000 binaries: the text and markdown stay short."""
    names = [f"_Z6kernelILi{i}EEvPf" for i in range(100_000)]
    rows = [BinaryDiff(f"lib{i}.so", kernels={"lost": names, "gained": []}, sass={"lost": [f"sm_{i}" for i in
            range(500)], "gained": []}, device_bytes={"old": 10, "new": 5}, lost=["GPU 8.0"] * 1000)
            for i in range(2000)]  # fmt: skip
    report = DiffReport("old", "new", ["8.0"], None, Policy(), rows)
    out = text(report)
    assert len(out) < 200 * SHOWN_BINARIES * (SHOWN + 10) and out.count("\n\n") == SHOWN_BINARIES + 1
    assert f"and {100_000 - SHOWN} more" in out and f"and {2000 - SHOWN_BINARIES} more binaries" in out
    assert len(markdown(report)) < 400 * SHOWN_BINARIES * (SHOWN + 10)


def test_cli_usage_errors(tmp_path):
    (tmp_path / "k.fatbin").write_bytes(b"")
    cli("diff", tmp_path, check=2)  # one path
    cli("diff", tmp_path, tmp_path, "--gpu", "sm_77x", check=2)
    cli("diff", tmp_path, tmp_path, "--json", "--format", "markdown", check=2)
    res = cli("diff", tmp_path / "missing", tmp_path, check=1)
    assert res.stderr == f"cuda-fatbin diff: {tmp_path / 'missing'}: No such file or directory\n"


def test_the_json_follows_its_schema(builds, tmp_path):
    from test_hostile_scan import validator

    old, new = two(tmp_path, {"k.fatbin": builds["base"], "gone.fatbin": builds["base"], "cut.fatbin": b"x" * 64},
                   {"k.fatbin": builds["kernel removed"], "cut.fatbin": builds["base"][:40],
                    "k\udcff.fatbin": builds["base"]})  # fmt: skip
    doc = json.loads(cli("diff", old, new, "--gpu", GPUS, "--json", check=1).stdout)
    validator("diff").validate(doc)
    assert doc["schema"] == 1 and doc["lost"] is True and doc["counts"]["added"] == 1
    assert {b["change"] for b in doc["binaries"]} == {"changed", "removed", "added", "unreadable"}


# -- pairing, as a property -----------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.sampled_from([None, "a 1", "a-cu12 1", "b 2"]),
                          st.sampled_from(["x/k.so", "y/k.so", "k.so", "x/j.so", ""])), max_size=12))  # fmt: skip
def test_pairing_uses_each_binary_once(rows):
    made: list[list[_Row]] = [[], []]
    for side, dist, rel in rows:
        r = BinaryReport(f"/{side}/{rel}", distribution=dist)
        from cuda_fatbin._diff import _group

        made[side].append(_Row(r, rel=rel, group=_group(r)))
    pairs, _notes = _pairs(made)
    seen = [id(r) for pair in pairs for r in pair if r is not None]
    assert sorted(seen) == sorted(id(r) for side in made for r in side)
    for o, n in pairs:  # a pair is one binary of each side, of one name
        assert o is None or n is None or o.name == n.name or (o.rel == n.rel == "")


# -- a real release pair --------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def curand_pair() -> tuple[Path, Path]:
    """nvidia-curand-cu12 10.3.10.19 and nvidia-curand 10.4.5.25 (manylinux wheels) from PyPI; the tests
    skip only when they cannot be downloaded."""
    dest = process_tmp("curand-pair")
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", str(dest)]
    out = []
    for req in ("nvidia-curand-cu12==10.3.10.19", "nvidia-curand==10.4.5.25"):
        res = subprocess.run([*cmd, req], capture_output=True, text=True, timeout=600)
        stem = req.split("==")[0].replace("-", "_")
        found = [w for w in dest.glob("*.whl") if w.name.split("-")[0] == stem]
        if res.returncode != 0 or not found:
            pytest.skip(f"{req} could not be downloaded: {res.stderr.strip()[-200:]}")
        out.append(found[0])
    return out[0], out[1]


def cuobjdump_archs(cuobjdump_path: str, wheel: Path, tmp: Path) -> dict[str, set[str]]:
    """SASS (``elf``) and PTX archs of the wheel's libcurand.so.10, as cuobjdump lists them."""
    with zipfile.ZipFile(wheel) as zf:
        member = next(n for n in zf.namelist() if n.endswith("/libcurand.so.10"))
        lib = tmp / Path(wheel.name).stem / "libcurand.so.10"
        lib.parent.mkdir()
        with zf.open(member) as src, open(lib, "wb") as dst:
            shutil.copyfileobj(src, dst)
    out = subprocess.run([cuobjdump_path, "-lelf", "-lptx", str(lib)], capture_output=True, text=True, timeout=120)
    found: dict[str, set[str]] = {"elf": set(), "ptx": set()}
    for kind, arch in listing(out.stdout):
        found[kind].add(arch)
    return found


def test_the_curand_release_pair_loses_the_archs_cuobjdump_lists(curand_pair, cuobjdump_path, tmp_path):
    old, new = curand_pair
    res = cli("diff", old, new, "--json", check=1)
    [b] = json.loads(res.stdout)["binaries"]
    assert b["name"] == "libcurand.so.10" and b["change"] == "changed"
    assert b["path"]["old"].endswith("::nvidia/curand/lib/libcurand.so.10")
    assert b["path"]["new"].endswith("::nvidia/cu13/lib/libcurand.so.10")
    theirs = [cuobjdump_archs(cuobjdump_path, w, tmp_path) for w in (old, new)]
    key = lambda a: int(a[3:].rstrip("af"))  # noqa: E731
    for ours, kind in ((b["sass"], "elf"), (b["ptx"], "ptx")):
        assert ours["lost"] == sorted(theirs[0][kind] - theirs[1][kind], key=key)
        assert ours["gained"] == sorted(theirs[1][kind] - theirs[0][kind], key=key)
    assert {"sm_50", "sm_60", "sm_70"} <= set(b["sass"]["lost"])
    assert {g for g, v in b["gpus"].items() if v["change"] == "lost"} >= {"5.0", "6.0", "7.0"}
    shown = cli("diff", old, new, check=1).stdout
    assert "libcurand.so.10: LOST" in shown and "SASS lost: sm_50, sm_60, sm_70" in shown
    same = cli("diff", new, new, check=0)
    assert "1 unchanged" in same.stdout and same.stderr.strip() == "no coverage lost"


def _wheel(path: Path, members: list[tuple[str, bytes]]) -> Path:
    import warnings

    with warnings.catch_warnings(), zipfile.ZipFile(path, "w") as z:
        warnings.simplefilter("ignore")  # zipfile warns of a duplicate name
        for name, data in members:
            z.writestr(name, data)
    return path


def test_diff_new_new_exits_0_for_a_wheel_with_two_members_of_one_name(builds, tmp_path):
    wheel = _wheel(tmp_path / "dup-1.0-py3-none-any.whl",
                   [("dup/k.fatbin", builds["sm_80 only"]), ("dup/k.fatbin", builds["arch dropped"])])  # fmt: skip
    report = diff(wheel, wheel, gpus=GPUS, max_workers=1)
    assert [b.change for b in report.binaries] == ["unchanged", "unchanged"] and not report.lost
    for _ in range(3):  # workers return the two members in either order
        cli("diff", wheel, wheel, "--gpu", GPUS, "-j", "2", check=0)


def test_a_partial_binary_no_longer_allowed_to_be_partial_is_lost(builds, tmp_path):
    lib = two_fatbins(tmp_path / "b", builds["base"], builds["sm_80 only"])  # 9.0: partial
    old = _wheel(tmp_path / "mylib_cu12-1.0-py3-none-any.whl", [("mylib/libtwo.so", lib)])
    new = _wheel(tmp_path / "mylib-2.0-py3-none-any.whl", [("mylib/libtwo.so", lib)])
    cli("scan", old, "--gpu", "90", "--allow-partial", "mylib-cu12", check=0)
    cli("scan", new, "--gpu", "90", "--allow-partial", "mylib-cu12", check=1)  # mylib may not be partial
    res = cli("diff", old, new, "--gpu", "90", "--allow-partial", "mylib-cu12", check=1)
    assert "GPU 9.0: partial -> partial" in res.stdout


def test_sass_only_counts_a_partial_binary_that_now_loads_a_module_by_jit_as_lost(builds, tmp_path):
    from cuda_fatbin import Program

    ptx80 = bytes(Program(SOURCE, "c++").compile("fatbin", archs=["compute_80"], ptx_for=["compute_80"]).code)
    old, new = two(tmp_path, {"libtwo.so": two_fatbins(tmp_path / "b1", builds["base"], builds["sm_80 only"])},
                   {"libtwo.so": two_fatbins(tmp_path / "b2", ptx80, builds["sm_80 only"])})  # fmt: skip
    cli("scan", old, "--gpu", "90", "--sass-only", check=0)  # 9.0 loads base's SASS, sm_80 only not at all
    cli("scan", new, "--gpu", "90", "--sass-only", check=1)  # 9.0 loads the other module by JIT only
    [b] = diff(old, new, gpus="90", policy=Policy(sass_only=True), max_workers=1).binaries
    assert b.gpus["9.0"] == {"old": "partial", "new": "partial", "change": "lost"} and b.lost


def test_diff_new_new_under_require_ptx_exits_0_though_new_keeps_no_ptx(builds, tmp_path):
    old, new = two(tmp_path, {"k.fatbin": builds["ptx dropped"]}, {"k.fatbin": builds["ptx dropped"]})
    report = diff(old, new, gpus=GPUS, policy=Policy(require_ptx=True), max_workers=1)
    assert not report.lost and [b.change for b in report.binaries] == ["unchanged"]  # no gap gained: nothing lost
    cli("diff", new, new, "--gpu", GPUS, "--require-ptx", check=0)


def test_cupy_distributions_pair_across_their_cuda_major(builds, tmp_path):
    old = _wheel(tmp_path / "cupy_cuda12x-13.0-cp312-cp312-manylinux_2_28_x86_64.whl", [("cupy/k.so", builds["base"])])
    new = _wheel(tmp_path / "cupy_cuda13x-14.0-cp312-cp312-manylinux_2_28_x86_64.whl", [("cupy/k.so", builds["base"])])
    gone = _wheel(tmp_path / "gone-1.0-py3-none-any.whl", [("gone/g.so", builds["base"])])
    fresh = _wheel(tmp_path / "fresh-1.0-py3-none-any.whl", [("fresh/f.so", builds["base"])])
    (tmp_path / "o").mkdir(), (tmp_path / "n").mkdir()
    for src, folder in ((old, "o"), (gone, "o"), (new, "n"), (fresh, "n")):  # no one distribution left alone
        (tmp_path / folder / src.name).write_bytes(src.read_bytes())
    report = diff(tmp_path / "o", tmp_path / "n", gpus=GPUS, max_workers=1)
    assert {b.name: b.change for b in report.binaries} == {"k.so": "unchanged", "g.so": "removed", "f.so": "added"}


def test_a_folder_of_wheels_for_three_machines_pairs_each_with_its_own(builds, tmp_path):
    for side, version, python, glibc in (("old", "1.0", "cp312", "2_27"), ("new", "2.0", "cp313", "2_28")):
        (tmp_path / side).mkdir()
        for platform in (f"manylinux_{glibc}_x86_64", f"manylinux_{glibc}_aarch64", "win_amd64"):
            with zipfile.ZipFile(tmp_path / side / f"demo-{version}-{python}-{python}-{platform}.whl", "w") as zf:
                zf.writestr("demo/libk.so", builds["base"])
    report = diff(tmp_path / "old", tmp_path / "new", gpus=GPUS, max_workers=1)
    assert [b.change for b in report.binaries] == ["unchanged"] * 3 and not report.lost


def test_the_one_distribution_left_on_each_side_pairs(builds, tmp_path):
    installed(tmp_path / "old", "oldname", "1.0", {"pkg/libk.so": builds["base"]})
    installed(tmp_path / "new", "newname", "2.0", {"pkg/libk.so": builds["base"]})
    [b] = diff(tmp_path / "old", tmp_path / "new", gpus=GPUS, max_workers=1).binaries
    assert b.change == "unchanged" and b.distribution == {"old": "oldname 1.0", "new": "newname 2.0"}


def test_a_binary_whose_device_bytes_alone_changed_is_changed(tmp_path):
    from cuda_fatbin import Program

    def fatbin(body: str) -> bytes:
        src = f'extern "C" __global__ void keep(float* p) {{ {body} }}'
        return bytes(Program(src, "c++").compile("fatbin", archs=["sm_90"], ptx_for=[]).code)

    small, large = fatbin("p[0] = 1;"), fatbin(" ".join(f"p[{i}] = p[{i + 1}] * {i}.5f;" for i in range(64)))
    assert len(small) != len(large)
    old, new = two(tmp_path, {"k.fatbin": small}, {"k.fatbin": large})
    [b] = diff(old, new, gpus=GPUS, max_workers=1).binaries
    assert b.change == "changed" and b.device_bytes["old"] != b.device_bytes["new"] and not b.lost


def test_binaries_losing_coverage_come_first(builds, tmp_path):
    old, new = two(tmp_path, {"a.fatbin": builds["base"], "z.fatbin": builds["base"]},
                   {"a.fatbin": builds["kernel removed"], "z.fatbin": builds["arch dropped"]})  # fmt: skip
    report = diff(old, new, gpus=GPUS, max_workers=1)
    assert [(b.name, bool(b.lost)) for b in report.binaries] == [("z.fatbin", True), ("a.fatbin", False)]
    assert text(report).index("z.fatbin: LOST") < text(report).index("a.fatbin: CHANGED")


def test_long_arch_lists_are_bounded_with_a_count():
    rows = [BinaryDiff("lib.so", sass={"lost": [f"sm_{i}" for i in range(40)], "gained": []},
                       device_bytes={"old": 10, "new": 5})]  # fmt: skip
    out = text(DiffReport("old", "new", ["8.0"], None, Policy(), rows))
    assert f"sm_{SHOWN - 1}, ... and {40 - SHOWN} more" in out and f"sm_{SHOWN}," not in out
