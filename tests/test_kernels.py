# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Kernel names of cubins and PTX (checked against cuobjdump and nvcc 13.0), and hostile-safe demangling."""

from __future__ import annotations

import os
import re
import shutil
import string
import struct
import subprocess
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuda_fatbin import _kernels
from cuda_fatbin._elf import ElfFormatError
from cuda_fatbin._kernels import MAX_NAME, cubin_kernels, demangle, demangle_all, entry_kernels, ptx_kernels

SOURCE = r"""
template <typename T> __global__ void scale(T* p, T s) { p[threadIdx.x] *= s; }
template __global__ void scale<float>(float*, float);
template __global__ void scale<double>(double*, double);
extern "C" __global__ void plain(int* p) { p[0] = 1; }
namespace ns { struct S { int a; }; __global__ void withs(S s, int* o) { o[0] = s.a; } }
__device__ __noinline__ int helper(int x) { return x * 3; }
__global__ void useshelper(int* p) { p[0] = helper(p[1]); }
"""
KERNELS = {"_Z5scaleIfEvPT_S0_", "_Z5scaleIdEvPT_S0_", "plain", "_ZN2ns5withsENS_1SEPi", "_Z10useshelperPi"}


@pytest.fixture(scope="module")
def nvcc_outputs(needs_nvcc, tmp_path_factory):
    """The source built by nvcc 13.0 as a cubin, a relocatable (-rdc) cubin and PTX."""
    tmp = tmp_path_factory.mktemp("kernels")
    (tmp / "k.cu").write_text(SOURCE)
    out = {}
    for name, flags in {"cubin": ["-cubin"], "rdc": ["-cubin", "-rdc=true"], "ptx": ["-ptx"]}.items():
        path = tmp / f"k.{name}"
        subprocess.run([needs_nvcc, *flags, "-arch=sm_90", "-o", str(path), str(tmp / "k.cu")], check=True, timeout=300)
        out[name] = path.read_bytes()
    return out


def _entries_of(listing: str) -> set[str]:
    """The kernel symbols of ``cuobjdump -symbols``: ``FUNC ... ENTRY name`` rows."""
    return {line.split()[-1] for line in listing.splitlines() if re.match(r"\s*FUNC\s.*\sENTRY\s", line)}


@pytest.mark.parametrize("kind", ["cubin", "rdc"])
def test_cubin_kernels_are_cuobjdumps_entry_symbols(nvcc_outputs, cuobjdump, kind):
    data = nvcc_outputs[kind]
    listed = _entries_of(cuobjdump(data, "-symbols"))
    assert listed == KERNELS  # the oracle itself: templated, extern "C", namespaced, calling a device function
    found = cubin_kernels(data)
    assert len(found) == len(set(found))
    assert set(found) == listed
    # the device function has a .text section of its own (in -rdc) but is no kernel
    assert not any("helper" in k and "useshelper" not in k for k in found)


def test_ptx_kernels_are_the_entries_nvcc_wrote(nvcc_outputs):
    text = nvcc_outputs["ptx"]
    assert set(ptx_kernels(text)) == KERNELS
    assert ptx_kernels(text.decode()) == ptx_kernels(text)


def test_entry_kernels_of_a_fatbin_nvcc_made(needs_nvcc, tmp_path, cuobjdump):
    from cuda_fatbin import read_fatbin

    (tmp_path / "k.cu").write_text(SOURCE)
    out = tmp_path / "k.fatbin"
    subprocess.run([needs_nvcc, "-fatbin", "-gencode=arch=compute_80,code=[sm_80,compute_80]", "-o", str(out),
                    str(tmp_path / "k.cu")], check=True, timeout=300)  # fmt: skip
    kinds = {e.kind: set(entry_kernels(e)) for e in read_fatbin(out.read_bytes()).iter_entries()}
    assert kinds == {"elf": KERNELS, "ptx": KERNELS}
    assert _entries_of(cuobjdump(out.read_bytes(), "-symbols")) == KERNELS


def test_demangled_names_match_cxxfilt(nvcc_outputs):
    cxxfilt = shutil.which("cu++filt") or shutil.which("c++filt")
    if cxxfilt is None:
        pytest.skip("no c++filt on PATH")
    names = sorted(KERNELS)
    oracle = subprocess.run([cxxfilt], input="\n".join(names), capture_output=True, text=True, check=True)
    assert [demangle_all(names)[n] for n in names] == oracle.stdout.splitlines()
    assert demangle("_Z5scaleIdEvPT_S0_") == "void scale<double>(double*, double)"


def test_names_that_do_not_demangle_stay_mangled():
    names = ["plain", "_Z", "_Zxx", "", "_Z1fIT_EvT_", "_Z\x1b[31m", "_Z\udcff", "a" * 10]
    assert demangle_all(names) == {n: n for n in names}


def _bomb(levels: int) -> str:
    """A mangled name whose demangled form doubles with every level (nested substitutions)."""

    def sub(i: int) -> str:
        digits = string.digits + string.ascii_uppercase
        s = ""
        while True:
            s, i = digits[i % 36] + s, i // 36
            if i == 0:
                return f"S{s}_"

    parts = ["1A", "1BIS_S_E", *(f"S0_I{sub(i)}{sub(i)}E" for i in range(1, levels + 1))]
    return "_Z1fI" + "".join(parts) + "Evv"


def test_a_name_that_expands_exponentially_stays_mangled_and_costs_little():
    import cpp_demangle

    assert len(cpp_demangle.demangle(_bomb(16))) > 40 * len(_bomb(16))  # it does expand: 2x a level
    bomb = _bomb(80)  # 2**80 characters demangled: the child runs out of its address space
    start = time.monotonic()
    got = demangle_all(["_Z10useshelperPi", bomb, "plain"])
    assert time.monotonic() - start < 30
    assert got == {"_Z10useshelperPi": "useshelper(int*)", bomb: bomb, "plain": "plain"}


def test_huge_names_are_bounded():
    name = "_Z" + "1a" * 500_000  # 1 MB: over MAX_NAME, not tried
    assert demangle(name) == name
    deep = "_Z1fI" + "St6vectorI" * 50_000 + "i" + "E" * 50_001 + "vv"  # deep nesting: the crate's recursion limit
    assert demangle(deep) == deep


def test_without_the_demangler_names_stay_mangled(monkeypatch):
    monkeypatch.setattr(_kernels, "_available", lambda: False)
    assert demangle("_Z1ki") == "_Z1ki"


def test_the_demangling_child_starts_isolated_without_the_site(tmp_path, monkeypatch):
    """The child runs ``python -I -S`` given ``cpp_demangle``'s folder (docs/security.md): no environment variable
    nor the site's start-up shapes what it runs (a ``sitecustomize`` on ``PYTHONPATH`` is not imported), and it
    still demangles."""
    marker = tmp_path / "ran"
    (tmp_path / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    _kernels.stop_demangler()  # (one started ahead would predate the environment)
    assert demangle_all(["_Z1ki", "plain"]) == {"_Z1ki": "k(int)", "plain": "plain"}
    assert not marker.exists()


def test_a_demangler_started_ahead_is_used_once_or_ended(tmp_path, monkeypatch):
    """``start_demangler`` starts the next batch's child early: the batch takes it (the names demangled as without
    it); one no batch takes is ended by ``stop_demangler``, and ``cuda-fatbin size`` leaves none behind."""
    from cli_testing import cli_main

    _kernels.start_demangler()
    [child] = _kernels._AHEAD
    assert demangle_all(["_Z1ki", "plain"]) == {"_Z1ki": "k(int)", "plain": "plain"}
    assert not _kernels._AHEAD and child.returncode == 0  # taken and done
    _kernels.start_demangler()
    _kernels.start_demangler()  # one at a time
    [child] = _kernels._AHEAD
    _kernels.stop_demangler()
    assert not _kernels._AHEAD and child.returncode is not None
    started = []
    child_of = _kernels._child
    monkeypatch.setattr(_kernels, "_child", lambda: started.append(child_of()) or started[-1])
    (tmp_path / "empty.bin").write_bytes(bytes(64))  # no kernel to name: no batch
    cli_main("size", tmp_path, "--json", check=0)
    assert not _kernels._AHEAD and len(started) == 1
    with pytest.raises(ChildProcessError):  # ended and waited for
        os.waitpid(started[0].pid, os.WNOHANG)


def test_a_demangler_started_ahead_that_crashed_leaves_the_names_mangled(monkeypatch):
    monkeypatch.setattr(_kernels, "_CHILD", "import os; os.abort()")
    _kernels.start_demangler()
    assert demangle_all(["_Z1ki", "_Z1ji"]) == {"_Z1ki": "_Z1ki", "_Z1ji": "_Z1ji"}
    assert not _kernels._AHEAD


def test_a_crashing_child_leaves_the_names_mangled(monkeypatch):
    monkeypatch.setattr(_kernels, "_CHILD", "import os; os.abort()")
    assert demangle_all(["_Z1ki", "_Z1ji"]) == {"_Z1ki": "_Z1ki", "_Z1ji": "_Z1ji"}


# --- hostile cubins -----------------------------------------------------------------------------------------


def _cubin(names: list[bytes], *, strtab: bytes | None = None, offsets: list[int] | None = None,
           other: int = 0x10, link: int = 2) -> bytes:  # fmt: skip
    """A 64-bit ELF with a symbol table (section 1) of FUNC symbols and its string table (section 2)."""
    if strtab is None:
        strtab = b"\0" + b"".join(n + b"\0" for n in names)
        offsets = [1 + sum(len(n) + 1 for n in names[:i]) for i in range(len(names))]
    assert offsets is not None
    syms = bytes(24) + b"".join(struct.pack("<IBBHQQ", o, 0x12, other, 3, 0, 0) for o in offsets)
    shstr = b"\0.symtab\0.strtab\0.shstrtab\0"
    body = syms + strtab + shstr
    shoff = 64 + len(body)
    base = 64
    sections = [bytes(64),
                struct.pack("<IIQQQQIIQQ", 1, 2, 0, 0, base, len(syms), link, 1, 8, 24),
                struct.pack("<IIQQQQIIQQ", 9, 3, 0, 0, base + len(syms), len(strtab), 0, 0, 1, 0),
                struct.pack("<IIQQQQIIQQ", 17, 3, 0, 0, shoff - len(shstr), len(shstr), 0, 0, 1, 0)]  # fmt: skip
    header = (b"\x7fELF" + bytes([2, 1, 1, 0x41, 8]) + bytes(7)
              + struct.pack("<HHIQQQIHHHHHH", 2, 190, 1, 0, 0, shoff, 0x5A, 64, 0, 0, 64, 4, 3))  # fmt: skip
    return header + body + b"".join(sections)


def test_forged_cubins_read_as_built():
    assert cubin_kernels(_cubin([b"k1", b"_Z1ki"])) == ["k1", "_Z1ki"]
    assert cubin_kernels(_cubin([b"k1"], other=0)) == []  # not marked as a kernel: a device function
    assert cubin_kernels(_cubin([b"k\x1b[2J\xff"])) == ["k\x1b[2J\\xff"]  # bytes kept, non-UTF-8 escaped


def test_a_long_name_is_cut_and_marked():
    (name,) = cubin_kernels(_cubin([b"_Z" + b"a" * (MAX_NAME + 100)]))
    assert len(name) == MAX_NAME + 1 and name.endswith("…")
    assert demangle(name) == name


def test_overlapping_names_are_refused_in_linear_time():
    table = b"\0" + b"a" * 200_000 + b"\0"
    data = _cubin([], strtab=table, offsets=list(range(1, 200_000, 4)))
    start = time.monotonic()
    with pytest.raises(ElfFormatError, match="overlap"):
        cubin_kernels(data)
    assert time.monotonic() - start < 5


def test_a_symbol_table_linked_to_no_section_is_refused():
    with pytest.raises(ElfFormatError, match="string table"):
        cubin_kernels(_cubin([b"k"], link=99))


def test_names_past_the_string_table_are_empty_and_left_out():
    assert cubin_kernels(_cubin([], strtab=b"\0k\0", offsets=[1, 10_000])) == ["k"]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=600), st.integers(0, 500))
def test_mutated_cubins_give_names_or_elf_errors(noise, at):
    data = bytearray(_cubin([b"k1", b"_Z1ki"]))
    data[at : at + len(noise)] = noise[: len(data) - at]
    try:
        names = cubin_kernels(bytes(data))
    except ElfFormatError:
        return
    assert all(isinstance(n, str) and len(n) <= MAX_NAME + 1 for n in names)


# --- hostile PTX --------------------------------------------------------------------------------------------


def test_ptx_comments_hide_entries():
    text = "/* .entry a( */ .entry b(\n// .entry c(\n.visible .entry d (\n/* .entry e("
    assert ptx_kernels(text) == ["b", "d"]


def test_ptx_identifiers_are_bounded_and_marked():
    (name,) = ptx_kernels(b".entry " + b"k" * (MAX_NAME * 3) + b"(")
    assert name == "k" * MAX_NAME + "…"


@pytest.mark.parametrize(
    "text",
    [b"/*" * 400_000, b".entry" * 300_000, b".entry " + b" " * 2_000_000, b"//" * 500_000, b"\xff\x00" * 1_000_000,
     b".entry \t\n" * 200_000 + b"x"],
)  # fmt: skip
def test_ptx_reading_is_linear_on_hostile_text(text):
    start = time.monotonic()
    ptx_kernels(text)
    assert time.monotonic() - start < 5


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400))
def test_ptx_of_any_bytes_gives_printable_ascii_names(raw):
    for name in ptx_kernels(b".entry a(" + raw + b".entry b("):
        assert re.fullmatch(r"[A-Za-z_$%][A-Za-z0-9_$]*…?", name)


def test_tables_and_ptx_over_the_limit_are_refused_not_read(monkeypatch):
    from cuda_fatbin import Program, read_fatbin

    data = _cubin([b"k1", b"_Z1ki"])
    fb = read_fatbin(bytes(Program('extern "C" __global__ void k() {}', "c++").compile(
        "fatbin", archs=["sm_90"], ptx_for=["sm_90"]).code))  # fmt: skip
    assert {e.kind: entry_kernels(e) for e in fb.iter_entries()} == {"elf": ["k"], "ptx": ["k"]}
    monkeypatch.setattr(_kernels, "MAX_TABLE", 8)
    with pytest.raises(ElfFormatError, match="over 8 bytes"):
        cubin_kernels(data)
    ptx = next(e for e in fb.iter_entries() if e.kind == "ptx")
    with pytest.raises(ValueError, match="not read"):
        entry_kernels(ptx)


VARIABLES = {  # (source, -rdc): modules without kernels, and whether a program uses them
    "device": ("__device__ int counter;\n__device__ float table[4] = {1, 2, 3, 4};\n", False),
    "constant": ("__constant__ float coeffs[8];\n", False),
    "static": ("static __device__ int hidden[2];\nint h(int* x) { return cudaMemcpyToSymbol(hidden, x, 4); }\n", False),
    "relocatable": ("namespace ns { __device__ float visible; }\n__constant__ int c1;\n", True),  # CUDA_OBJECT
    # the C++ library's own constants (an anonymous namespace: _INTERNAL_) in a file of host code
    "libcu++": ("#include <cuda/std/tuple>\nint f() { return cuda::std::get<0>(cuda::std::make_tuple(1)); }\n", False),
    "none": ("int host_only() { return 1; }\n", False),  # no device code: its -rdc device link is nvcc's stub
}
USED = {"device", "constant", "static", "relocatable"}


def _defined_objects(listing: str) -> set[str]:
    """``cuobjdump -symbols``: the OBJECT and CUDA_OBJECT symbols a cubin defines (undefined ones are marked ``U``)."""
    rows = [line.split() for line in listing.splitlines() if line.startswith(("OBJECT", "CUDA_OBJECT"))]
    return {row[-1] for row in rows if "U" not in row[3:-1]}


@pytest.mark.parametrize("name", sorted(VARIABLES))
def test_a_module_of_variables_has_code_and_a_device_link_stub_none(needs_nvcc, cuobjdump, cuobjdump_path, tmp_path,
                                                                   name):  # fmt: skip
    from cuda_fatbin._detect import cubin_has_code

    source, rdc = VARIABLES[name]
    (tmp_path / "v.cu").write_text(source)
    if name == "none":  # compiled relocatable, then device-linked: the stub a library of host code carries
        subprocess.run([needs_nvcc, "-rdc=true", "-c", "-arch=sm_90", "v.cu", "-o", "v.o"], cwd=tmp_path, check=True)
        subprocess.run([needs_nvcc, "-dlink", "-arch=sm_90", "v.o", "-o", "dl.o"], cwd=tmp_path, check=True)
        subprocess.run([cuobjdump_path, "-xelf", "all", "dl.o"], cwd=tmp_path, check=True, capture_output=True)
        [cubin] = tmp_path.glob("dl*.cubin")
    else:
        cubin = tmp_path / "v.cubin"
        flags = ["-rdc=true"] if rdc else []
        argv = [needs_nvcc, "-cubin", *flags, "-arch=sm_90", "v.cu", "-o", str(cubin)]
        subprocess.run(argv, cwd=tmp_path, check=True)
    data = cubin.read_bytes()
    # the oracle: the variables cuobjdump lists, those of an anonymous namespace left out
    defined = {n for n in _defined_objects(cuobjdump(data, "-symbols")) if "_INTERNAL_" not in n}
    assert (defined != set()) == (name in USED), defined
    assert name != "libcu++" or any("_INTERNAL_" in n for n in _defined_objects(cuobjdump(data, "-symbols")))
    assert cubin_kernels(data) == []
    assert _kernels.cubin_defines_data(data) == (name in USED)
    assert cubin_has_code(data) == (name in USED)


# variables of internal linkage in a namespace of the program: nvcc names them ``_INTERNAL_<file>...``, as it
# names the C++ library's constants, yet the program's host code reads and writes them (cudaMemcpyToSymbol)
OWN_INTERNAL = {
    "anonymous": "namespace { __constant__ float tbl[4]; }\n"
    "int h(float* x) { return cudaMemcpyToSymbol(tbl, x, 16); }\n",
    "nested": "namespace a { namespace { __device__ int c; } }\n"
    "int h(int* x) { return cudaMemcpyToSymbol(a::c, x, 4); }\n",
    "static": "namespace a { static __device__ int s; }\nint h(int* x) { return cudaMemcpyToSymbol(a::s, x, 4); }\n",
    "with libcu++": "#include <cuda/std/tuple>\nnamespace { __device__ int c; }\n"
    "int h(int* x) { return cudaMemcpyToSymbol(c, x, 4) + cuda::std::get<0>(cuda::std::make_tuple(1)); }\n",
}


@pytest.mark.parametrize("name", sorted(OWN_INTERNAL))
def test_a_module_of_variables_of_the_programs_own_namespace_has_code(needs_nvcc, cuobjdump, tmp_path, name):
    from cuda_fatbin._detect import cubin_has_code

    (tmp_path / "v.cu").write_text(OWN_INTERNAL[name])
    cubin = tmp_path / "v.cubin"
    subprocess.run([needs_nvcc, "-cubin", "-arch=sm_90", "v.cu", "-o", str(cubin)], cwd=tmp_path, check=True)
    data = cubin.read_bytes()
    # the oracle: cuobjdump lists the variable under nvcc's _INTERNAL_ prefix, outside the C++ library
    own = {n for n in _defined_objects(cuobjdump(data, "-symbols")) if "_INTERNAL_" in n
           and not re.search(r"_INTERNAL_\w*?(4cuda3std|6thrust|3cub)", n)}  # fmt: skip
    assert own, cuobjdump(data, "-symbols")
    assert cubin_kernels(data) == []
    assert _kernels.cubin_defines_data(data)
    assert cubin_has_code(data)


LIBRARY_HEADERS = "".join(f"#include <cuda/std/{h}>\n" for h in ("tuple", "utility", "ranges", "optional", "expected",
    "iterator", "functional", "mdspan", "span", "chrono")) + "int f() { return 1; }\n"  # fmt: skip


@pytest.mark.parametrize("name", ["libcu++", "libcu++ headers", "anonymous"])
def test_ptx_of_the_c_library_constants_only_is_no_module_as_its_cubin(needs_nvcc, tmp_path, name):
    """nvcc's default ``-arch=sm_90`` ships PTX beside the cubin: the C++ library's constants are left out of
    both, and the program's own variables of internal linkage counted in both."""
    from cuda_fatbin._detect import cubin_has_code, fatbin_has_code
    from cuda_fatbin._reader import iter_fatbins

    sources = {"libcu++": VARIABLES["libcu++"][0], "libcu++ headers": LIBRARY_HEADERS}
    file = "host_side_configuration_utilities_of_the_library.cu"  # named twice in each constant's PTX line
    (tmp_path / file).write_text(sources.get(name) or OWN_INTERNAL[name])
    subprocess.run([needs_nvcc, "-c", "-arch=sm_90", file, "-o", "v.o"], cwd=tmp_path, check=True)
    [fb] = iter_fatbins((tmp_path / "v.o").read_bytes())
    assert {e.kind for e in fb.iter_entries()} == {"elf", "ptx"}
    [cubin] = [e for e in fb.iter_entries() if e.kind == "elf"]
    assert fatbin_has_code(fb) == cubin_has_code(cubin.data()) == (name == "anonymous")


@pytest.mark.parametrize("name", ["libcu++", "anonymous"])
def test_a_device_link_keeps_the_rule_of_its_objects(needs_nvcc, cuobjdump, tmp_path, name):
    """``-rdc`` then ``-dlink`` (``-G`` too): the linked cubin names each variable of internal linkage
    ``__nv_static_<file>_ZN<n>_INTERNAL_...``; the C++ library's constants still make no module."""
    from cuda_fatbin._detect import fatbin_has_code
    from cuda_fatbin._reader import iter_fatbins

    (tmp_path / "v.cu").write_text(VARIABLES["libcu++"][0] if name == "libcu++" else OWN_INTERNAL[name])
    subprocess.run([needs_nvcc, "-rdc=true", "-G", "-c", "-arch=sm_90", "v.cu", "-o", "v.o"], cwd=tmp_path, check=True)
    subprocess.run([needs_nvcc, "-dlink", "-G", "-arch=sm_90", "v.o", "-o", "dl.o"], cwd=tmp_path, check=True)
    data = (tmp_path / "dl.o").read_bytes()
    assert "__nv_static_" in cuobjdump(data, "-symbols")
    assert [fatbin_has_code(fb) for fb in iter_fatbins(data)] == [name == "anonymous"]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="_ZN0123456789INTERNALcudathrub4", max_size=60), st.integers(0, 20000))
def test_any_name_is_told_a_library_constant_or_not_in_linear_time(name, digits):
    # a length of more digits than Python converts (4300) is no library constant, not an error
    for text in (name, f"_ZN{'9' * digits}_INTERNAL_{name}", f"_ZN4_INTERNAL_{name}" * 50):
        assert _kernels.library_constant(text) in (True, False)
    assert _kernels.library_constant("__nv_static_9__f__ZN5_INTERNAL_ab4cuda3std") is False  # its component is cut
    assert _kernels.library_constant("__nv_static_9__f__ZN12_INTERNAL_ab4cuda3std")


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="cuRAND's tables (static __device__ in its headers, not _INTERNAL_) are taken for the program's "
    "variables: a file of host code that includes curand_kernel.h is a module to load. Leaving them out by name is "
    "wrong for libcurand.so.10 itself, whose module of those tables its host code reads (its driver lower bound, "
    "test_metadata.py, then drops from 13.4): the fatbin alone cannot tell the two apart",
)
def test_a_file_of_host_code_that_includes_curand_kernel_is_no_module(needs_nvcc, tmp_path):
    """The precalculated tables of ``curand_kernel.h`` (``precalc_xorwow_matrix``, ``mrg32k3aM1``...) are in every
    translation unit that includes it, as the C++ library's constants are: without a kernel they are no module."""
    import zipfile

    from cuda_fatbin._detect import fatbin_has_code
    from cuda_fatbin._reader import iter_fatbins
    from test_scan import curand_wheel

    with zipfile.ZipFile(curand_wheel.__wrapped__()) as zf:
        for name in zf.namelist():
            if "/include/" in name:
                zf.extract(name, tmp_path)
    [include] = {p.parent for p in tmp_path.rglob("curand_kernel.h")}
    (tmp_path / "v.cu").write_text("#include <curand_kernel.h>\nint host_only() { return 1; }\n")
    argv = [needs_nvcc, "-c", "-arch=sm_90", f"-I{include}", "v.cu", "-o", "v.o"]
    subprocess.run(argv, cwd=tmp_path, check=True, capture_output=True)
    [fb] = iter_fatbins((tmp_path / "v.o").read_bytes())
    assert not fatbin_has_code(fb)
