# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""scan and which as a release gate: policies, alternatives, missing kernel names, markdown (docs/ci.md)."""

from __future__ import annotations

import json
import re
import subprocess
import time
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_testing import cli_main as cli
from cuda_fatbin import Program, scan
from cuda_fatbin._term import markdown

SRC = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'


def _fatbin(archs: list[str], ptx: list[str], src: str = SRC) -> bytes:
    return bytes(Program(src, "c++").compile("fatbin", archs=archs, ptx_for=ptx).code)


@pytest.fixture(scope="module")
def ptx_for_90(tmp_path_factory) -> Path:
    """SASS sm_80 and compute_80 PTX: 9.0 runs it only by JIT."""
    path = tmp_path_factory.mktemp("ptx") / "k.fatbin"
    path.write_bytes(_fatbin(["sm_80"], ["sm_80"]))
    return path


def _schema(name: str) -> object:
    import cuda_fatbin

    jsonschema = pytest.importorskip("jsonschema")
    folder = Path(cuda_fatbin.__file__).parent / "schemas"
    schemas = {p.name: json.loads(p.read_text()) for p in folder.glob("*.json")}
    from referencing import Registry, Resource

    registry = Registry().with_resources(
        (f"https://github.com/cuda-fatbin/cuda-fatbin/schemas/{n}", Resource.from_contents(s))
        for n, s in schemas.items()
    )
    return jsonschema.Draft202012Validator(schemas[name], registry=registry)


def _validate(name: str, text: str) -> dict:
    doc = json.loads(text)
    _schema(name).validate(doc)  # type: ignore[attr-defined]
    return doc


# --- policies -----------------------------------------------------------------------------------------------


def test_sass_only_turns_a_ptx_only_gpu_from_covered_to_not(ptx_for_90, tmp_path):
    for command in (["scan", ptx_for_90], ["which", ptx_for_90]):
        cli(*command, "--gpu", "80;90", check=0)
        res = cli(*command, "--gpu", "80;90", "--sass-only", check=1)
        assert "PTX JIT only (--sass-only)" in res.stdout
        policy = tmp_path / "gate.toml"
        policy.write_text("sass_only = true\ngpus = ['80', '90']\n")
        cli(*command, "--policy", policy, check=1)  # the file alone: its GPUs, its rule
        cli(*command, "--policy", policy, "--gpu", "80", check=1)  # --gpu adds to the file's GPUs
    doc = _validate("scan.json", cli("scan", ptx_for_90, "--gpu", "90", "--sass-only", "--json", check=1).stdout)
    assert [(f["gpu"], f["rule"], f["status"]) for f in doc["failures"]] == [("9.0", "sass-only", "PTX JIT")]
    assert doc["policy"] == {"sass_only": True, "require_ptx": False, "allow_partial": None}
    assert doc["binaries"][0]["kernels"]["9.0"]["kernels"] == [{"name": "k", "demangled": "k"}]
    doc = _validate("which.json", cli("which", ptx_for_90, "--gpu", "90", "--sass-only", "--json", check=1).stdout)
    assert [(f["gpu"], f["rule"]) for f in doc["failures"]] == [("9.0", "sass-only")]


def test_the_python_api_takes_the_same_options(ptx_for_90, tmp_path):
    folder = ptx_for_90.parent
    assert scan([folder], gpus="90", max_workers=1).covered
    report = scan([folder], gpus="90", max_workers=1, sass_only=True)
    assert not report.covered and report.uncovered("9.0") == report.binaries
    policy = tmp_path / "p.toml"
    policy.write_text("require_ptx = true\ngpus = ['9.0']\n")
    assert scan([folder], policy=policy, max_workers=1).covered  # compute_80 PTX JITs on every newer GPU
    with pytest.raises(TypeError, match="list of distribution names"):
        scan([folder], gpus="90", allow_partial="nvidia-cublas")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="alternatives glob"):
        scan([folder], gpus="90", alternatives=[""])


def test_require_ptx_fails_a_binary_without_ptx_for_newer_gpus(tmp_path):
    (tmp_path / "sass.fatbin").write_bytes(_fatbin(["sm_80", "sm_90"], []))
    (tmp_path / "ptx.fatbin").write_bytes(_fatbin(["sm_80", "sm_90"], ["sm_90"]))
    cli("scan", tmp_path / "ptx.fatbin", "--gpu", "80", "--require-ptx", check=0)
    res = cli("scan", tmp_path, "--gpu", "80", "--require-ptx", check=1)
    assert f"{tmp_path / 'sass.fatbin'}: no PTX: GPUs newer than sm_90 (its newest SASS) cannot run it" in res.stdout
    assert "ptx.fatbin:" not in res.stdout.split("--require-ptx")[1]
    doc = _validate("scan.json", cli("scan", tmp_path, "--gpu", "80", "--require-ptx", "--json", check=1).stdout)
    assert [(Path(f["path"]).name, f["gpu"], f["rule"]) for f in doc["failures"]] == [
        ("sass.fatbin", None, "require-ptx")
    ]
    cli("which", tmp_path / "sass.fatbin", "--gpu", "80", check=0)
    assert "no PTX" in cli("which", tmp_path / "sass.fatbin", "--gpu", "80", "--require-ptx", check=1).stdout


# --- a binary of two fatbins: PART, the kernels named, allow-partial ----------------------------------------

A_CU = """
template <typename T> __global__ void only80(T* p) { p[0] = T(1); }
template __global__ void only80<int>(int*);
extern "C" __global__ void only80_c(float* p) { p[0] = 2; }
"""
B_CU = '__global__ void both(float* p) { p[0] = 3; }\nextern "C" __global__ void both_c(int* p) { p[0] = 4; }\n'


@pytest.fixture(scope="module")
def two_fatbins(needs_nvcc, tmp_path_factory) -> Path:
    """libab.so: a.cu built for sm_80 only, b.cu for sm_80 and sm_90, linked by nvcc 13.0 (two fatbins)."""
    tmp = tmp_path_factory.mktemp("two")
    (tmp / "a.cu").write_text(A_CU)
    (tmp / "b.cu").write_text(B_CU)
    gencode = {"a": ["-gencode", "arch=compute_80,code=sm_80"],
               "b": ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90"]}  # fmt: skip
    for name, flags in gencode.items():
        subprocess.run([needs_nvcc, "-c", "-Xcompiler", "-fPIC", *flags, str(tmp / f"{name}.cu"), "-o",
                        str(tmp / f"{name}.o")], check=True, timeout=300)  # fmt: skip
    subprocess.run([needs_nvcc, "-shared", str(tmp / "a.o"), str(tmp / "b.o"), "-o", str(tmp / "libab.so")],
                   check=True, timeout=300)  # fmt: skip
    return tmp / "libab.so"


def _kernels_by_arch(listing: str) -> dict[str, set[str]]:
    """``cuobjdump -symbols``: the ENTRY symbols of the cubins of each arch (every cubin of that arch)."""
    out: dict[str, set[str]] = {}
    arch = None
    for line in listing.splitlines():
        m = re.match(r"arch = (sm_\d+)", line)
        if m:
            arch = m.group(1)
            out.setdefault(arch, set())
        elif arch and re.match(r"\s*FUNC\s.*\sENTRY\s", line):
            out[arch].add(line.split()[-1])
    return out


def test_a_binary_of_two_fatbins_names_exactly_the_kernels_that_lack_the_gpu(two_fatbins, cuobjdump):
    by_arch = _kernels_by_arch(cuobjdump(two_fatbins.read_bytes(), "-symbols"))
    lacking_90 = by_arch["sm_80"] - by_arch["sm_90"]  # defined for sm_80 only: a.cu's
    assert lacking_90 == {"_Z6only80IiEvPT_", "only80_c"}  # the oracle says what a.cu defines
    doc = _validate("scan.json", cli("scan", two_fatbins, "--gpu", "80;90;100", "--json", check=1).stdout)
    (b,) = doc["binaries"]
    assert b["coverage"]["9.0"]["status"] == "partial" and b["coverage"]["10.0"]["status"] == "no entry"
    assert "8.0" not in b["kernels"]
    assert {k["name"] for k in b["kernels"]["9.0"]["kernels"]} == lacking_90
    assert {k["name"] for k in b["kernels"]["10.0"]["kernels"]} == by_arch["sm_80"]  # nothing loads on 10.0
    names = {k["name"]: k["demangled"] for k in b["kernels"]["9.0"]["kernels"]}
    assert names == {"_Z6only80IiEvPT_": "void only80<int>(int*)", "only80_c": "only80_c"}
    text = cli("scan", two_fatbins, "--gpu", "90", check=0).stdout  # partial: covered by default, named
    assert f"{two_fatbins}: 2 kernels without code for 9.0: void only80<int>(int*), only80_c\n" in text
    which = _validate("which.json", cli("which", two_fatbins, "--gpu", "90", "--json", check=0).stdout)
    assert {k["name"] for k in which["kernels"]["9.0"]["kernels"]} == lacking_90
    assert "9.0: 2 kernels without code: void only80<int>(int*), only80_c" in cli("which", two_fatbins, "--gpu", "90",
                                                                                    check=0).stdout  # fmt: skip


def test_allow_partial_names_the_distributions_that_may_be_partial(two_fatbins, tmp_path):
    wheel = tmp_path / "My_Lib-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("my_lib/libab.so", two_fatbins.read_bytes())
    cli("scan", wheel, "--gpu", "90", check=0)  # no policy: partial is covered
    res = cli("scan", wheel, "--gpu", "90", "--allow-partial", "other", check=1)
    assert "[partial, not allowed (--allow-partial)]" in res.stdout and "only80_c" in res.stdout
    cli("scan", wheel, "--gpu", "90", "--allow-partial", "other", "--allow-partial", "my.lib", check=0)
    policy = tmp_path / "p.toml"
    policy.write_text('allow_partial = ["MY-LIB"]\n')
    cli("scan", wheel, "--gpu", "90", "--policy", policy, check=0)
    cli("scan", wheel, "--gpu", "90", "--policy", policy, "--sass-only", check=0)  # SASS on 9.0 where it loads
    doc = _validate("scan.json", cli("scan", wheel, "--gpu", "90", "--allow-partial", "x", "--json", check=1).stdout)
    assert [(f["gpu"], f["rule"], f["status"]) for f in doc["failures"]] == [("9.0", "allow-partial", "partial")]
    assert doc["policy"]["allow_partial"] == ["x"]


# --- alternatives -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def per_arch_wheel(tmp_path_factory) -> Path:
    """A wheel of two per-arch builds a package picks from at import: sm90/ (sm_90 only), sm100/ (sm_100 only)."""
    wheel = tmp_path_factory.mktemp("alt") / "sgl-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("sgl/sm90/k.fatbin", _fatbin(["sm_90"], []))
        z.writestr("sgl/sm100/k.fatbin", _fatbin(["sm_100"], []))
        z.writestr("sgl/common.fatbin", _fatbin(["sm_90", "sm_100"], []))
    return wheel


def test_alternatives_turn_two_per_arch_builds_from_not_covered_to_covered(per_arch_wheel):
    w = per_arch_wheel
    res = cli("scan", w, "--gpu", "90;100", check=1)
    assert f"9.0: 1 binaries cannot run:\n  {w}::sgl/sm100/k.fatbin" in res.stdout
    assert f"10.0: 1 binaries cannot run:\n  {w}::sgl/sm90/k.fatbin" in res.stdout
    res = cli("scan", w, "--gpu", "90;100", "--alternatives", f"{w}::sgl/sm*/*", check=0)
    assert f"alternatives {w}::sgl/sm*/* (2 binaries): 9.0 by {w}::sgl/sm90/k.fatbin; " \
           f"10.0 by {w}::sgl/sm100/k.fatbin" in res.stdout  # fmt: skip
    doc = _validate("scan.json", cli("scan", w, "--gpu", "90;100;120", "--alternatives", "*/sm*/*", "--json",
                                     check=1).stdout)  # fmt: skip
    (group,) = doc["alternatives"]
    assert group["members"] == [f"{w}::sgl/sm100/k.fatbin", f"{w}::sgl/sm90/k.fatbin"]
    assert group["covered_by"] == {"9.0": f"{w}::sgl/sm90/k.fatbin", "10.0": f"{w}::sgl/sm100/k.fatbin", "12.0": None}
    assert {(Path(f["path"]).name, f["gpu"]) for f in doc["failures"]} == {("common.fatbin", "12.0"),
                                                                             ("k.fatbin", "12.0")}  # fmt: skip
    assert sum(f["gpu"] == "12.0" for f in doc["failures"]) == 3  # both members and the common binary fail 12.0
    report = scan([w], gpus="90;100", alternatives=["*/sm*/*"], max_workers=1)
    assert report.covered and report.uncovered("9.0") == []
    # a glob that matches one build alone covers nothing more
    cli("scan", w, "--gpu", "90;100", "--alternatives", "*/sm90/*", check=1)


@pytest.mark.parametrize(
    "glob",
    ["*" * 4000 + "x", "[" * 4000, "a*" * 2000 + "b", "\x1b[2J*", "\udcff*", "*/sm*/*\n"],
)
def test_hostile_globs_are_bounded_and_escaped(per_arch_wheel, glob):
    start = time.monotonic()
    res = cli("scan", per_arch_wheel, "--gpu", "90", "--alternatives", glob)
    assert res.returncode in (0, 1) and time.monotonic() - start < 20
    assert "\x1b" not in res.stdout + res.stderr
    doc = _validate("scan.json", cli("scan", per_arch_wheel, "--gpu", "90", "--alternatives", glob, "--json").stdout)
    assert len(doc["alternatives"]) == 1


def test_bad_globs_are_usage_errors():
    res = cli("scan", ".", "--gpu", "90", "--alternatives", "x" * 5000, check=2)
    assert "--alternatives" in res.stderr and "4096" in res.stderr
    cli("scan", ".", "--gpu", "90", "--alternatives", "", check=2)


# --- markdown and hostile names -----------------------------------------------------------------------------


@pytest.fixture
def hostile_cubin(artifacts, tmp_path) -> Path:
    """The sm_80 cubin with its kernel saxpy renamed ESC | < 0xFF * (markup, a control and a non-UTF-8 byte)."""
    data = artifacts[("cubin", "sm_80")]
    assert data.count(b"saxpy\0") >= 1
    path = tmp_path / "evil|<b>.cubin"
    path.write_bytes(data.replace(b"saxpy", b"\x1b|<\xff*"))
    return path


def test_markdown_is_a_table_per_gpu_with_names_escaped(hostile_cubin):
    res = cli("scan", hostile_cubin, "--gpu", "80;90", "--format", "markdown", check=1)
    out = res.stdout
    assert "\x1b" not in out and out.startswith("## cuda-fatbin scan: some GPU is **NOT** covered\n")
    assert "### GPU 8.0: covered\n" in out and "### GPU 9.0: 1 binaries not covered\n" in out
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    assert len(rows) == 4  # a header and one binary per GPU
    row = rows[-1]
    assert "evil\\|\\<b\\>.cubin" in row  # the | and the tag escaped: one cell each
    assert "\\\\x1b\\|\\<\\\\xff\\*" in row  # the kernel's control and non-UTF-8 bytes shown, markup escaped
    assert row.count(" | ") == 4 and row.endswith(" |")
    which = cli("which", hostile_cubin, "--gpu", "80;90", "--format", "markdown", check=1).stdout
    assert "### GPU 9.0: no entry; not covered: " in which and "\x1b" not in which
    assert "evil\\|\\<b\\>.cubin" in which


def test_hostile_kernel_names_in_text_and_json(hostile_cubin):
    text = cli("scan", hostile_cubin, "--gpu", "90", check=1).stdout
    assert "\x1b" not in text and "\\x1b|<\\xff*" in text
    doc = _validate("scan.json", cli("scan", hostile_cubin, "--gpu", "90", "--json", check=1).stdout)
    names = {k["name"] for k in doc["binaries"][0]["kernels"]["9.0"]["kernels"]}
    assert "\x1b|<\\xff*" in names  # exact, with the non-UTF-8 byte as \xff: valid JSON text


def test_format_and_json_agree_or_refuse(ptx_for_90):
    assert cli("scan", ptx_for_90, "--gpu", "90", "--format", "json", check=0).stdout.startswith("{")
    cli("scan", ptx_for_90, "--gpu", "90", "--json", "--format", "json", check=0)
    assert "disagree" in cli("scan", ptx_for_90, "--gpu", "90", "--json", "--format", "markdown", check=2).stderr
    assert "disagree" in cli("which", ptx_for_90, "--gpu", "90", "--json", "--format", "text", check=2).stderr


def test_bad_policy_files_and_missing_gpus_are_usage_errors(ptx_for_90, tmp_path):
    bad = tmp_path / "p.toml"
    bad.write_text("sas_only = true\n")
    for command in ("scan", "which"):
        err = cli(command, ptx_for_90, "--gpu", "90", "--policy", bad, check=2).stderr
        assert "unknown key sas_only" in err
        err = cli(command, ptx_for_90, check=2).stderr
        assert "no GPU to check" in err
    (tmp_path / "e.toml").write_bytes(b"allow_partial = ['\\u001b[2J']\nx\x1b = 1\n")
    err = cli("scan", ptx_for_90, "--gpu", "90", "--policy", tmp_path / "e.toml", check=2).stderr
    assert "\x1b" not in err


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60) | st.binary(max_size=60).map(lambda b: b.decode("utf-8", "surrogateescape")))
def test_a_markdown_cell_has_no_markup_or_control_left(text):
    cell = markdown(text)
    assert cell.isprintable()
    # every markup character comes after a backslash, but the empty comment after each "@" (no mail links)
    unescaped = re.sub(r"\\.", "", cell.replace("@<!-- -->", "@"))
    assert not set(unescaped) & set("\\`*_[]<>|~$&!#:")
    assert not re.search(r"(?i)www\.", cell)


# --- what a GPU loads only by JIT, kernel-less alternatives, -rdc objects, links in markdown ----------------

JIT_CU = 'extern "C" __global__ void jit_only(float* p) { p[0] = 1; }\n'
SASS80_CU = 'extern "C" __global__ void sass80(float* p) { p[0] = 2; }\n'


def _nvcc_object(nvcc: str, folder: Path, name: str, src: str, *flags: str) -> Path:
    (folder / f"{name}.cu").write_text(src)
    out = folder / f"{name}.o"
    subprocess.run([nvcc, "-c", "-Xcompiler", "-fPIC", *flags, str(folder / f"{name}.cu"), "-o", str(out)],
                   check=True, timeout=300)  # fmt: skip
    return out


@pytest.fixture(scope="module")
def jit_and_sass80(needs_nvcc, tmp_path_factory) -> Path:
    """libjit.so: jit.cu as compute_80 PTX only, sass80.cu as sm_80 SASS only (9.0: PART, one module by JIT)."""
    tmp = tmp_path_factory.mktemp("jit")
    a = _nvcc_object(needs_nvcc, tmp, "jit", JIT_CU, "-gencode", "arch=compute_80,code=compute_80")
    b = _nvcc_object(needs_nvcc, tmp, "sass80", SASS80_CU, "-gencode", "arch=compute_80,code=sm_80")
    subprocess.run([needs_nvcc, "-shared", str(a), str(b), "-o", str(tmp / "libjit.so")], check=True, timeout=300)
    return tmp / "libjit.so"


def test_sass_only_fails_a_partial_binary_whose_loaded_modules_are_ptx_jit(jit_and_sass80, tmp_path):
    lib = jit_and_sass80
    doc = _validate("scan.json", cli("scan", lib, "--gpu", "90", "--json", check=0).stdout)
    assert doc["binaries"][0]["coverage"]["9.0"]["status"] == "partial"
    # 9.0 runs jit_only only by JIT-compiling its PTX at first launch: SASS-only does not cover it
    res = cli("scan", lib, "--gpu", "90", "--sass-only", check=1)
    assert "PTX JIT only (--sass-only)" in res.stdout
    doc = _validate("scan.json", cli("scan", lib, "--gpu", "90", "--sass-only", "--json", check=1).stdout)
    assert [(f["gpu"], f["rule"]) for f in doc["failures"]] == [("9.0", "sass-only")]
    wheel = tmp_path / "jit-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("jit/libjit.so", lib.read_bytes())
    cli("scan", wheel, "--gpu", "90", "--allow-partial", "jit", check=0)  # partial allowed, JIT allowed
    cli("scan", wheel, "--gpu", "90", "--allow-partial", "jit", "--sass-only", check=1)  # partial allowed, JIT not
    doc = _validate("which.json", cli("which", lib, "--gpu", "90", "--sass-only", "--json", check=1).stdout)
    assert "sass-only" in {f["rule"] for f in doc["failures"]}


def _fatbin_wheel(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def test_an_alternative_without_kernels_covers_no_gpu(tmp_path):
    wheel = _fatbin_wheel(tmp_path / "alt-1.0-py3-none-any.whl", {
        "alt/sm90/k.fatbin": _fatbin(["sm_90"], []),
        "alt/sm90/stub.fatbin": _fatbin(["sm_90"], [], src="// no device code"),  # as nvcc's device-link stubs
        "alt/sm90/data.fatbin": _fatbin(["sm_90"], [], src="__device__ int table[4] = {1, 2, 3, 4};"),
    })  # fmt: skip
    report = scan([wheel], gpus="90;100", alternatives=["*/sm*/*"], max_workers=1)
    statuses = {Path(b.path).name: b.coverage["10.0"]["status"] for b in report.binaries}
    # a module of variables only must load too (docs/formats.md): without an entry for 10.0 it does not
    assert statuses == {"data.fatbin": "no entry", "k.fatbin": "no entry", "stub.fatbin": "no kernels"}
    (group,) = report.judgement().groups
    assert group["covered_by"]["10.0"] is None  # the kernel-less member loads nothing there: it covers nothing
    uncovered = [Path(b.path).name for b in report.uncovered("10.0")]
    assert not report.covered and uncovered == ["data.fatbin", "k.fatbin"]
    cli("scan", wheel, "--gpu", "90;100", "--alternatives", "*/sm*/*", check=1)


@pytest.fixture(scope="module")
def rdc_sass80(needs_nvcc, tmp_path_factory) -> Path:
    """sass80.o built with -rdc for sm_80 SASS only (no PTX): device-link input, as static libraries hold."""
    return _nvcc_object(needs_nvcc, tmp_path_factory.mktemp("rdc"), "sass80", SASS80_CU, "-rdc=true",
                        "-gencode", "arch=compute_80,code=sm_80")  # fmt: skip


def test_a_relocatable_object_names_its_kernels_and_keeps_no_ptx(rdc_sass80):
    doc = _validate("scan.json", cli("scan", rdc_sass80, "--gpu", "90", "--json", check=1).stdout)
    (b,) = doc["binaries"]
    assert b["coverage"]["9.0"]["status"] == "no entry"
    assert [k["name"] for k in b["kernels"]["9.0"]["kernels"]] == ["sass80"]  # NONE: its kernels named
    doc = _validate("scan.json", cli("scan", rdc_sass80, "--gpu", "80", "--require-ptx", "--json", check=1).stdout)
    assert [(f["rule"], f["reason"]) for f in doc["failures"]] == [
        ("require-ptx", "no PTX: GPUs newer than sm_80 (its newest SASS) cannot run it")
    ]
    assert "no PTX" in cli("which", rdc_sass80, "--gpu", "80", "--require-ptx", check=1).stdout


def test_require_ptx_says_why_ptx_too_new_leaves_gpus_without_code():
    from cuda_fatbin import Arch
    from cuda_fatbin._policy import ptx_gap

    assert ptx_gap([("elf", Arch(8, 0)), ("ptx", Arch(10, 0))]) == (
        "only PTX past the next major (compute_100): GPUs newer than sm_80 (its newest SASS) and older than 10.0 "
        "cannot run it"
    )
    assert "arch-specific" in (ptx_gap([("elf", Arch(8, 0)), ("ptx", Arch(9, 0, "a"))]) or "")


def test_markdown_adds_no_links_for_urls_in_names(tmp_path):
    src = 'extern "C" __global__ void kaaaaaaaaaaaaaaaaaaaaaaaaa(float* p) { p[0] = 1; }'
    data = _fatbin(["sm_80"], [], src=src).replace(b"kaaaaaaaaaaaaaaaaaaaaaaaaa", b"https://evil.example/login")
    wheel = _fatbin_wheel(tmp_path / "evil-1.0-py3-none-any.whl", {"evil/http://evil.example/x.fatbin": data,
                                                                    "evil/www.evil.example.fatbin": data})  # fmt: skip
    out = cli("scan", wheel, "--gpu", "80;90", "--format", "markdown", check=1).stdout
    assert "evil.example/login" in out.replace("\\", "")  # the kernel's name is there, as text
    rows = "\n".join(line for line in out.splitlines() if line.startswith("| "))
    assert not re.search(r"[^\\]://|www\.", rows)  # no autolink (GitHub: a URL's scheme, or www.)
    cmarkgfm = pytest.importorskip("cmarkgfm")
    assert "<a " not in cmarkgfm.github_flavored_markdown_to_html(out)


def test_markdown_adds_no_mail_links_for_names():
    cmarkgfm = pytest.importorskip("cmarkgfm")
    cell = markdown("pkg/user@evil.example/k.so")
    table = f"| a |\n|---|\n| {cell} |\n"
    html = cmarkgfm.github_flavored_markdown_to_html(table, options=cmarkgfm.Options.CMARK_OPT_UNSAFE)
    assert "<a " not in html and "pkg/user@<!-- -->evil.example/k.so" in html  # the comment renders as nothing


@pytest.fixture(scope="module")
def empty_ptx_module(needs_nvcc, tmp_path_factory) -> Path:
    """libempty.so: a kernel as sm_90 SASS, and a host-only file built as compute_75 PTX (an empty module,
    as nvidia-curand 10.4.5.25 ships three of)."""
    tmp = tmp_path_factory.mktemp("empty")
    a = _nvcc_object(needs_nvcc, tmp, "k", SASS80_CU, "-gencode", "arch=compute_90,code=sm_90")
    host = "static int twice(int x) { return 2 * x; }\nint api(int x) { return twice(x); }\n"
    b = _nvcc_object(needs_nvcc, tmp, "host", host, "-gencode", "arch=compute_75,code=compute_75")
    subprocess.run([needs_nvcc, "-shared", str(a), str(b), "-o", str(tmp / "libempty.so")], check=True, timeout=300)
    return tmp / "libempty.so"


def test_sass_only_is_not_failed_by_an_empty_ptx_module(empty_ptx_module):
    lib = empty_ptx_module
    doc = _validate("scan.json", cli("scan", lib, "--gpu", "90", "--sass-only", "--json", check=0).stdout)
    assert doc["binaries"][0]["coverage"]["9.0"]["status"] == "SASS exact"  # every kernel has SASS for 9.0
    cli("which", lib, "--gpu", "90", "--sass-only", check=0)


def test_which_markdown_names_every_gpu_of_a_file_of_relocatable_fatbins_only(rdc_sass80):
    out = cli("which", rdc_sass80, "--gpu", "80;90", "--format", "markdown", check=1).stdout
    assert "### GPU 8.0: SASS exact; covered\n" in out
    assert "### GPU 9.0: no entry; not covered: no fatbin" in out


def test_a_driver_that_does_not_run_the_gpu_names_no_kernels(jit_and_sass80):
    doc = _validate("scan.json", cli("scan", jit_and_sass80, "--gpu", "80;90", "--driver", "11.0", "--json",
                                     check=1).stdout)  # fmt: skip
    (b,) = doc["binaries"]
    assert b["coverage"]["9.0"]["status"] == "driver predates GPU" and "9.0" not in b["kernels"]
    assert b["coverage"]["8.0"]["status"] == "needs newer driver"  # compute_80 compressed: a CUDA 12.4+ driver
    assert [k["name"] for k in b["kernels"]["8.0"]["kernels"]] == ["jit_only"]


def test_require_ptx_is_met_by_one_alternative_of_a_group(tmp_path):
    wheel = _fatbin_wheel(tmp_path / "sgl-1.0-py3-none-any.whl", {
        "sgl/sm90/k.fatbin": _fatbin(["sm_90"], ["sm_90"]), "sgl/sm100/k.fatbin": _fatbin(["sm_100"], []),
    })  # fmt: skip
    report = scan([wheel], gpus="90;100", require_ptx=True, alternatives=["*/sm*/*"], max_workers=1)
    assert report.covered and report.judgement().failures == []
    alone = scan([wheel], gpus="90;100", require_ptx=True, max_workers=1).judgement().failures
    assert [(Path(f["path"]).parent.name, f["rule"]) for f in alone if f["gpu"] is None] == [("sm100", "require-ptx")]
    both = _fatbin_wheel(tmp_path / "b-1.0-py3-none-any.whl", {
        "b/sm90/k.fatbin": _fatbin(["sm_90"], []), "b/sm100/k.fatbin": _fatbin(["sm_100"], []),
    })  # fmt: skip
    found = scan([both], gpus="90;100", require_ptx=True, alternatives=["*/sm*/*"], max_workers=1).judgement()
    failed = sorted(Path(f["path"]).parent.name for f in found.failures if f["rule"] == "require-ptx")
    assert failed == ["sm100", "sm90"]


def test_require_ptx_passes_over_a_fatbin_without_code(tmp_path):
    k = _fatbin(["sm_90"], ["sm_90"])
    stub = _fatbin(["sm_90"], [], src="// no device code")  # as nvcc's device-link stubs: nothing to load
    (tmp_path / "two.fatbin").write_bytes(k + b"\0" * (-len(k) % 8) + stub)
    report = scan([tmp_path / "two.fatbin"], gpus="90", require_ptx=True, max_workers=1)
    assert report.binaries[0].fatbins["registered"] == 2 and report.binaries[0].ptx_gap is None and report.covered
    # a module of variables only is used, and newer GPUs load it only from PTX (docs/formats.md)
    data = _fatbin(["sm_90"], [], src="__device__ int table[4] = {1, 2, 3, 4};")
    (tmp_path / "two.fatbin").write_bytes(k + b"\0" * (-len(k) % 8) + data)
    report = scan([tmp_path / "two.fatbin"], gpus="90", require_ptx=True, max_workers=1)
    assert report.binaries[0].ptx_gap == (
        f"a fatbin at offset {len(k) + (-len(k) % 8):#x}: no PTX: GPUs newer than sm_90 (its newest SASS) cannot run it"
    )


def test_markdown_lists_the_binaries_not_covered_first(per_arch_wheel):
    out = cli("scan", per_arch_wheel, "--gpu", "90", "--format", "markdown", check=1).stdout
    rows = [line for line in out.split("### GPU 9.0")[1].splitlines() if line.startswith("| ")][1:]
    assert [r.split(" | ")[0].rsplit("\\:\\:", 1)[1] for r in rows] == [
        "sgl/sm100/k.fatbin", "sgl/common.fatbin", "sgl/sm90/k.fatbin"]  # fmt: skip


def test_an_alternatives_glob_star_matches_a_newline_in_a_path(tmp_path):
    wheel = _fatbin_wheel(tmp_path / "nl-1.0-py3-none-any.whl", {
        "nl/sm90/a\nb.fatbin": _fatbin(["sm_90"], []), "nl/sm100/k.fatbin": _fatbin(["sm_100"], []),
    })  # fmt: skip
    report = scan([wheel], gpus="90;100", alternatives=["*/sm*/*"], max_workers=1)
    assert len(report.judgement().groups[0]["members"]) == 2 and report.covered


def test_an_unreadable_binary_is_uncovered_on_every_gpu(tmp_path):
    (tmp_path / "bad.fatbin").write_bytes(_fatbin(["sm_90"], [])[:100])
    report = scan([tmp_path], gpus="80;90", max_workers=1)
    assert report.binaries[0].error and not report.covered
    assert report.uncovered("8.0") == report.uncovered("9.0") == report.binaries
    out = cli("scan", tmp_path, "--gpu", "90", "--format", "markdown", check=1).stdout
    assert "### GPU 9.0: 1 binaries not covered\n" in out and "| ERROR | unreadable |" in out


def test_the_longest_glob_accepted_is_max_glob():
    from cuda_fatbin._gate import MAX_GLOB, check_globs

    assert check_globs(["*" * MAX_GLOB]) == ["*" * MAX_GLOB]
    with pytest.raises(ValueError, match="at most 4096"):
        check_globs(["*" * (MAX_GLOB + 1)])


def test_which_names_each_failing_gpu_once_when_the_rows_decide(jit_and_sass80):
    doc = _validate("which.json", cli("which", jit_and_sass80, "--gpu", "90", "--disable-ptx-jit", "--json",
                                      check=1).stdout)  # fmt: skip
    assert doc["verdict"] is None and [(f["gpu"], f["rule"]) for f in doc["failures"]] == [("9.0", "not covered")]


def test_two_binaries_of_one_path_each_get_their_own_rule(tmp_path):
    import warnings

    wheel = tmp_path / "dup-1.0-py3-none-any.whl"
    with warnings.catch_warnings(), zipfile.ZipFile(wheel, "w") as z:
        warnings.simplefilter("ignore")  # zipfile warns of a duplicate name
        z.writestr("dup/k.fatbin", _fatbin(["sm_80"], []))
        z.writestr("dup/k.fatbin", _fatbin(["sm_90"], []))
    out = cli("scan", wheel, "--gpu", "90", "--format", "markdown", check=1).stdout
    rows = sorted(line.split(" | ")[2:4] for line in out.splitlines() if line.startswith("| ") and "k.fatbin" in line)
    assert rows == [["NONE", "no entry loads"], ["SASS", "ok"]]
    text = cli("scan", wheel, "--gpu", "90", "--sass-only", check=1).stdout
    assert "9.0: 1 binaries cannot run" in text and "[" not in text.split("cannot run:")[1].splitlines()[1]
