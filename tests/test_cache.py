# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Per-job caching of compile("fatbin") and kernel bundles: hits, misses, invalidation, corruption, processes."""

from __future__ import annotations

import concurrent.futures as cf
import importlib
import io
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

import pytest
from cuda.core.utils import FileStreamProgramCache, InMemoryProgramCache

from cuda_fatbin import (
    BundleCoverageError,
    FatbinOptions,
    KernelBundle,
    KernelSuite,
    Program,
    ProgramOptions,
    read_fatbin,
)

from fatbin_testing import plain

SRC = r"""
#include "consts.cuh"
template <typename T> __global__ void scale(T* x, T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a * FACTOR;
}
"""
NAMES = ["scale<float>", "scale<double>"]


@pytest.fixture
def include_dir(tmp_path) -> Path:
    d = tmp_path / "inc"
    d.mkdir()
    (d / "consts.cuh").write_text("#define FACTOR 2\n")
    return d


def compile_(cache, include_dir, archs, **kw):
    program = Program(SRC, "c++", ProgramOptions(include_path=[str(include_dir)], **kw.pop("opts", {})))
    logs = io.StringIO()
    obj = program.compile("fatbin", NAMES, logs, archs=archs, ptx_for=(), cache=cache, **kw)
    return plain(obj), program.last_cache_report, logs.getvalue()  # plain values for the asserts


def test_hits_misses_and_adding_an_arch(include_dir):
    cache = InMemoryProgramCache()
    cold, report, logs = compile_(cache, include_dir, ["sm_80", "sm_90"])
    assert (len(report.hits), len(report.misses)) == (0, 2)
    assert [line for line in logs.splitlines() if "cache" in line] == [f"[{j}] cache miss" for j in report.misses]
    warm, report, logs = compile_(cache, include_dir, ["sm_80", "sm_90"])
    assert (len(report.hits), len(report.misses)) == (2, 0)
    assert [line for line in logs.splitlines() if "cache" in line] == [f"[{j}] cache hit" for j in report.hits]
    assert warm.code == cold.code
    assert warm.symbol_mapping == cold.symbol_mapping == {  # name expressions survive a hit
        "scale<float>": b"_Z5scaleIfEvPT_S0_i", "scale<double>": b"_Z5scaleIdEvPT_S0_i"}  # fmt: skip
    done: list[str] = []
    more, report, _ = compile_(
        cache, include_dir, ["sm_80", "sm_90", "sm_100"], progress=lambda i, n, job: done.append(str(job))
    )
    assert report.misses == ("NVRTC sm_100 -> cubin",) and len(report.hits) == 2  # exactly one job compiled
    assert done == ["NVRTC sm_100 -> cubin"]  # the compile's own arguments (progress here) reach the misses' run
    # a miss before a hit in the plan's order: the hit is still found
    _, report, _ = compile_(cache, include_dir, ["sm_75", "sm_80"])
    assert report.misses == ("NVRTC sm_75 -> cubin",) and report.hits == ("NVRTC sm_80 -> cubin",)
    uncached = Program(SRC, "c++", ProgramOptions(include_path=[str(include_dir)])).compile(
        "fatbin", NAMES, archs=["sm_80", "sm_90", "sm_100"], ptx_for=()
    )
    uncached_plain = plain(uncached)
    assert more.code == uncached_plain.code


def test_changed_header_or_option_invalidates(include_dir):
    cache = InMemoryProgramCache()
    compile_(cache, include_dir, ["sm_80"])
    (include_dir / "consts.cuh").write_text("#define FACTOR 3\n")
    _, report, _ = compile_(cache, include_dir, ["sm_80"])
    assert len(report.misses) == 1
    _, report, _ = compile_(cache, include_dir, ["sm_80"], opts={"define_macro": "EXTRA"})
    assert len(report.misses) == 1
    _, report, _ = compile_(cache, include_dir, ["sm_80"], extra_options=["-DMORE"])
    assert len(report.misses) == 1
    _, report, _ = compile_(cache, include_dir, ["sm_80"], cache_extra_digest=b"generated v2")
    assert len(report.misses) == 1
    _, report, _ = compile_(cache, include_dir, ["sm_80"], group=True)  # nvJitLink path: another job
    assert len(report.misses) == 1
    _, report, _ = compile_(cache, include_dir, ["sm_80"], group=True)
    assert len(report.hits) == 1


def test_corrupted_entries_are_detected_and_recompiled(include_dir, tmp_path):
    with FileStreamProgramCache(tmp_path / "cache") as cache:
        cold, _, _ = compile_(cache, include_dir, ["sm_80", "sm_90"])
    root = tmp_path / "cache"
    files = sorted(p for p in root.rglob("*") if p.is_file() and "tmp" not in p.relative_to(root).parts)
    assert len(files) == 2
    data = bytearray(files[0].read_bytes())
    data[len(data) // 2] ^= 0xFF
    files[0].write_bytes(bytes(data))
    files[1].write_bytes(files[1].read_bytes()[:100])  # torn
    with FileStreamProgramCache(tmp_path / "cache") as cache:
        again, report, logs = compile_(cache, include_dir, ["sm_80", "sm_90"])
    assert len(report.corrupt) == 2 and len(report.misses) == 2
    assert [line for line in logs.splitlines() if "recompiled" in line] == [
        f"[{j}] corrupt entry, recompiled" for j in report.corrupt
    ]
    assert again.code == cold.code
    with FileStreamProgramCache(tmp_path / "cache") as cache:
        _, report, _ = compile_(cache, include_dir, ["sm_80", "sm_90"])
    assert len(report.hits) == 2


def _worker(cache_dir: str, include_dir: str) -> tuple[bytes, dict]:
    with FileStreamProgramCache(cache_dir) as cache:
        obj = Program(SRC, "c++", ProgramOptions(include_path=[include_dir])).compile(
            "fatbin", NAMES, archs=["sm_75", "sm_80", "sm_86", "sm_90"], cache=cache, max_workers=1
        )
    return bytes(obj.code), dict(obj.symbol_mapping)


def test_concurrent_writers_share_one_directory(include_dir, tmp_path):
    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=3, mp_context=ctx) as pool:
        results = list(pool.map(_worker, [str(tmp_path / "c")] * 3, [str(include_dir)] * 3))
    assert len({r[0] for r in results}) == 1 and all(r[1] == results[0][1] for r in results)
    with FileStreamProgramCache(tmp_path / "c") as cache:
        _, report, _ = compile_(cache, include_dir, ["sm_75", "sm_80", "sm_86", "sm_90"])
        # ptx_for=() here and None in the workers: the 4 SASS jobs hit, and no entry was torn or mixed
        assert len(report.hits) == 4 and not report.corrupt


def test_cache_misuse():
    with pytest.raises(TypeError, match=r"^cache must be a cuda\.core\.utils\.ProgramCacheResource; got list$"):
        Program(SRC, "c++").compile("fatbin", archs=["sm_80"], cache=[])
    with pytest.raises(TypeError, match="^cache_extra_digest must be bytes$"):
        Program(SRC, "c++").compile("fatbin", archs=["sm_80"], cache=InMemoryProgramCache(), cache_extra_digest="x")


# -- bundles -------------------------------------------------------------------------------------------

SUITES = {
    "scale": KernelSuite(SRC.replace('#include "consts.cuh"', "#define FACTOR 2"), NAMES),
    "fill": KernelSuite('extern "C" __global__ void fill(int* p, int v) { p[threadIdx.x] = v; }', archs=["sm_90"]),
}


def test_bundle_round_trip(tmp_path):
    built = KernelBundle.build(tmp_path / "b", SUITES, archs=["sm_80", "sm_100"], ptx_for=["sm_80"],
                               fatbin_options=FatbinOptions(compress_mode="size"))  # fmt: skip
    opened = KernelBundle.open(tmp_path / "b")
    assert opened.manifest == built.manifest == json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert opened.suites == ["fill", "scale"]
    rec = opened.manifest["suites"]["scale"]
    assert rec["sass_archs"] == ["sm_80", "sm_100"] and rec["ptx_archs"] == ["compute_80"]
    assert rec["ptx_min_driver_cuda"] is not None and rec["ptx_isa"] is not None
    assert rec["symbol_mapping"]["scale<float>"] == "_Z5scaleIfEvPT_S0_i"
    assert {e["arch"] for e in rec["entries"]} == {"sm_80", "sm_100"}
    assert opened.manifest["suites"]["fill"]["sass_archs"] == ["sm_90"]  # a suite overrides the archs
    assert set(opened.manifest["built_with"]) >= {"cuda-fatbin", "cuda-core", "cuda-bindings", "nvrtc", "libnvfatbin"}
    obj = opened.load("scale", gpu="8.6", driver="13.5")
    obj_plain = plain(obj)
    assert obj_plain.code_type == "fatbin" and obj_plain.symbol_mapping["scale<double>"] == b"_Z5scaleIdEvPT_S0_i"
    assert {(e.kind, str(e.arch)) for e in read_fatbin(obj_plain.code).iter_entries()} == {
        ("elf", "sm_80"), ("elf", "sm_100"), ("ptx", "sm_80")}  # fmt: skip
    with pytest.raises(KeyError, match="no suite 'nope'.*fill, scale"):
        opened.load("nope", gpu="8.0", driver="13.0")


def test_bundle_coverage_error_text(tmp_path, monkeypatch):
    bundle = KernelBundle.build(tmp_path / "b", {"scale": SUITES["scale"]}, archs=["sm_80", "sm_100"],
                                ptx_for=["sm_100"])  # fmt: skip
    with pytest.raises(BundleCoverageError) as info:
        bundle.load("scale", gpu="9.0", driver="13.0")
    msg = str(info.value)
    assert "compute capability 9.0 with a CUDA 13.0 driver" in msg
    assert "the bundle has sm_80, sm_100, compute_100" in msg
    assert "rebuild with sm_90 in archs" in msg and "update the driver" not in msg
    isa_bound = KernelBundle.build(tmp_path / "c", {"scale": SUITES["scale"]}, archs=["sm_80"], ptx_for=["sm_80"])
    isa = isa_bound.manifest["suites"]["scale"]["ptx_isa"]
    need = isa_bound.manifest["suites"]["scale"]["ptx_min_driver_cuda"]
    with pytest.raises(BundleCoverageError, match=f"update the driver to CUDA {need}\\+ .*ISA {isa}"):
        isa_bound.load("scale", gpu="9.0", driver="12.0")
    from cuda_fatbin import _driver

    monkeypatch.setattr(_driver, "_probe", lambda: ((), "no GPU"))  # a machine without one, wherever this runs
    with pytest.raises(BundleCoverageError, match="loading kernels needs a GPU.*pass gpu= and driver="):
        isa_bound.load("scale")  # no GPU: a clear error, not the driver's


def test_bundle_integrity_and_errors(tmp_path):
    KernelBundle.build(tmp_path / "b", {"fill": SUITES["fill"]}, archs=["sm_90"])
    fat = tmp_path / "b" / json.loads((tmp_path / "b" / "manifest.json").read_text())["suites"]["fill"]["file"]
    fat.write_bytes(fat.read_bytes()[:-8] + b"\0" * 8)
    with pytest.raises(ValueError, match="does not match its manifest hash"):
        KernelBundle.open(tmp_path / "b").load("fill", gpu="9.0", driver="13.0")
    with pytest.raises(ValueError, match="not a kernel bundle"):
        KernelBundle.open(tmp_path)
    (tmp_path / "b" / "manifest.json").write_text("{ torn")
    with pytest.raises(ValueError, match="manifest.json is not valid JSON"):
        KernelBundle.open(tmp_path / "b")
    with pytest.raises(ValueError, match="suite name"):
        KernelBundle.build(tmp_path / "x", {"../evil": SUITES["fill"]}, archs=["sm_90"])
    with pytest.raises(TypeError, match="KernelSuite"):
        KernelBundle.build(tmp_path / "x", {"s": "source"}, archs=["sm_90"])
    with pytest.raises(ValueError, match="at least one suite"):
        KernelBundle.build(tmp_path / "x", {}, archs=["sm_90"])


def test_bundle_as_package_data(tmp_path, monkeypatch):
    pkg = tmp_path / "site" / "mykernels"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    KernelBundle.build(pkg / "kernels", {"fill": SUITES["fill"]}, archs=["sm_90"], cache=InMemoryProgramCache())
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    resources = importlib.import_module("importlib.resources")
    bundle = KernelBundle.open(resources.files("mykernels") / "kernels")
    loaded = plain(bundle.load("fill", gpu="9.0", driver="13.0"))
    assert loaded.code_type == "fatbin"
    sys.modules.pop("mykernels", None)


def test_cli_cache(tmp_path, include_dir):
    import subprocess

    src = include_dir / "k.cu"
    src.write_text(SRC)
    out = tmp_path / "k.fatbin"
    cmd = [sys.executable, "-m", "cuda_fatbin", "compile", str(src), "--arch", "80;90", "-o", str(out),
           "--cache", str(tmp_path / "cache")]  # fmt: skip
    first = subprocess.run(cmd, capture_output=True, text=True, check=True)
    second = subprocess.run(cmd, capture_output=True, text=True, check=True)
    assert "0 hit(s), 3 miss(es)" in first.stderr and "3 hit(s), 0 miss(es)" in second.stderr


def test_bundle_repr_and_advice_the_installed_compiler_can_follow(tmp_path):
    bundle = KernelBundle.build(tmp_path / "b", {"fill": SUITES["fill"]}, archs=["sm_90"])
    assert repr(bundle) == f"<KernelBundle {tmp_path / 'b'} suites=['fill']>"
    from cuda_fatbin._arch import nvrtc_supported_sms

    lowest = min(nvrtc_supported_sms())
    old = "7.0" if lowest > 70 else "5.0"
    with pytest.raises(
        BundleCoverageError, match=rf"installed NVRTC targets sm_{lowest} .*not sm_{old.replace('.', '')}"
    ):
        bundle.load("fill", gpu=old, driver="13.0")
    with pytest.raises(BundleCoverageError, match="rebuild with sm_80 in archs"):
        bundle.load("fill", gpu="8.0", driver="13.0")


def test_the_include_fingerprint_leaves_out_the_cache_and_what_the_caller_excludes(include_dir):
    build = include_dir / "build"
    build.mkdir()
    with FileStreamProgramCache(include_dir / "cache") as cache:  # the cache inside an include directory
        compile_(cache, include_dir, ["sm_80"])
        _, report, _ = compile_(cache, include_dir, ["sm_80"])
        assert len(report.hits) == 1  # its own new entry did not change the key
        (build / "out.h").write_text("1")
        _, report, _ = compile_(cache, include_dir, ["sm_80"])
        assert len(report.misses) == 1  # a header-like file in a folder nobody excluded counts
        _, report, _ = compile_(cache, include_dir, ["sm_80"], cache_exclude=[build])
        (build / "out.h").write_text("2")
        _, report2, _ = compile_(cache, include_dir, ["sm_80"], cache_exclude=str(build))  # one path, as a str
        assert len(report2.hits) == 1  # excluded by identity, whatever the spelling
        with pytest.raises(ValueError, match=r"over 1 header-like files.*--cache-max-files N"):
            compile_(cache, include_dir, ["sm_80"], cache_max_files=1)
        _, report, _ = compile_(cache, include_dir, ["sm_80"], cache_exclude=[build], cache_max_files=1)
        assert len(report.hits) == 1  # consts.cuh alone: within the limit
        with pytest.raises(ValueError, match="cache_max_files must be a positive int"):
            compile_(cache, include_dir, ["sm_80"], cache_max_files=0)
    with pytest.raises(ValueError, match="cache_exclude needs cache="):
        compile_(None, include_dir, ["sm_80"], cache_exclude=[build])


def test_default_cache_folder_follows_xdg(monkeypatch, tmp_path):
    from cuda_fatbin._cache import default_cache_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "cuda-fatbin"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # the XDG specification: ignore a relative one
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "cuda-fatbin"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "cuda-fatbin"


def test_keys_cover_pre_include_content_subfolder_headers_and_name_expressions(tmp_path):
    """A hit must give what a fresh compile gives: every input that changes the output is in the key."""
    inc = tmp_path / "inc"
    (inc / "sub").mkdir(parents=True)
    (inc / "sub" / "deep.cuh").write_text("#define DEEP 1\n")
    (inc / "sub" / "nox").write_text("#define NOX 1\n")  # no extension, as libcu++'s <cuda/std/...> headers
    pre = tmp_path / "pre.cuh"
    pre.write_text("#define PRE 1\n")
    src = '#include "sub/deep.cuh"\n#include "sub/nox"\n' + SRC.replace('#include "consts.cuh"\n', "").replace(
        "FACTOR", "(DEEP * PRE * NOX)"
    )
    cache = InMemoryProgramCache()

    def go(*names):
        program = Program(src, "c++", ProgramOptions(include_path=[str(inc)], pre_include=[str(pre)]))
        obj = program.compile("fatbin", list(names), archs=["sm_80"], ptx_for=(), cache=cache)
        fresh = Program(src, "c++", ProgramOptions(include_path=[str(inc)], pre_include=[str(pre)])).compile(
            "fatbin", list(names), archs=["sm_80"], ptx_for=()
        )
        got, want = (bytes(obj.code), dict(obj.symbol_mapping)), (bytes(fresh.code), dict(fresh.symbol_mapping))
        del obj, fresh  # never shown by a failing assert: an ObjectCode's repr needs the driver
        assert got == want
        report = program.last_cache_report
        return len(report.hits), len(report.misses)

    assert go("scale<float>") == (0, 1)
    assert go("scale<float>") == (1, 0)
    (inc / "sub" / "deep.cuh").write_text("#define DEEP 5\n")  # a header in a subfolder of an include path
    assert go("scale<float>") == (0, 1)
    pre.write_text("#define PRE 7\n")  # the content of a pre-included file, same name
    assert go("scale<float>") == (0, 1)
    (inc / "sub" / "nox").write_text("#define NOX 3\n")  # a header without an extension
    assert go("scale<float>") == (0, 1)
    assert go("scale<double>") == (0, 1)  # other name expressions: another mapping, other code
    assert go("scale<float>") == (1, 0)


def test_a_ptx_source_build_is_cached_per_job():
    kernel = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    ptx = Program(kernel, "c++", ProgramOptions(arch="compute_80")).compile("ptx")
    source = bytes(ptx.code).decode()
    cache = InMemoryProgramCache()
    program = Program(source, "ptx")
    cold = program.compile("fatbin", archs=["sm_80", "sm_86"], ptx_for=(), cache=cache)
    assert (len(program.last_cache_report.hits), len(program.last_cache_report.misses)) == (0, 1)
    program = Program(source, "ptx")
    warm = program.compile("fatbin", archs=["sm_80", "sm_86"], ptx_for=(), cache=cache)
    assert program.last_cache_report.misses == () and len(program.last_cache_report.hits) == 1
    cold_plain = plain(cold)
    warm_plain = plain(warm)
    assert warm_plain.code == cold_plain.code
    entries = read_fatbin(bytes(warm.code)).entries
    assert [(e.kind, str(e.arch)) for e in entries] == [("elf", "sm_80"), ("elf", "sm_86")]
    # the same PTX as bytes (UTF-8, as documented) is the same program: cuda.core's key takes its text
    program = Program(source.encode(), "ptx")
    again = program.compile("fatbin", archs=["sm_80", "sm_86"], ptx_for=(), cache=cache)
    again_plain = plain(again)
    cold_plain = plain(cold)
    assert program.last_cache_report.misses == () and again_plain.code == cold_plain.code


def _fresh(include_dir, archs):
    obj = Program(SRC, "c++", ProgramOptions(include_path=[str(include_dir)])).compile(
        "fatbin", NAMES, archs=archs, ptx_for=()
    )
    return bytes(obj.code)


def test_a_cache_folder_that_is_also_an_include_folder_keeps_its_headers_in_the_key(include_dir):
    """FileStreamProgramCache(d) with include_path=[d] (`-I build --cache build`): a header edited in d is seen."""
    with FileStreamProgramCache(include_dir) as cache:
        compile_(cache, include_dir, ["sm_80"])
        _, report, _ = compile_(cache, include_dir, ["sm_80"])
        assert len(report.hits) == 1  # the cache's own entries/ and tmp/ are not headers of the key
        (include_dir / "consts.cuh").write_text("#define FACTOR 3\n")
        obj, report, _ = compile_(cache, include_dir, ["sm_80"])
        assert len(report.misses) == 1
        assert obj.code == _fresh(include_dir, ["sm_80"])


def test_cache_dot_beside_the_source_keeps_the_source_folder_in_the_key(tmp_path, include_dir):
    """`cuda-fatbin compile k.cu --cache .` in the source's folder: an edited header there recompiles."""
    from cli_testing import cli_main

    (include_dir / "k.cu").write_text(SRC)
    names = [a for n in NAMES for a in ("--name-expression", n)]
    base = ["compile", "k.cu", "--arch", "80", "--ptx-for", "none", *names]
    args = [*base, "-o", str(tmp_path / "k.fatbin"), "--cache", "."]
    cli_main(*args, cwd=include_dir, check=0)
    assert "1 hit(s), 0 miss(es)" in cli_main(*args, cwd=include_dir, check=0).stderr
    (include_dir / "consts.cuh").write_text("#define FACTOR 3\n")
    assert "0 hit(s), 1 miss(es)" in cli_main(*args, cwd=include_dir, check=0).stderr
    cli_main(*base, "-o", tmp_path / "fresh.fatbin", cwd=include_dir, check=0)
    assert (tmp_path / "k.fatbin").read_bytes() == (tmp_path / "fresh.fatbin").read_bytes()


class _EditingExecutor(cf.ThreadPoolExecutor):
    """Runs the jobs, but saves ``path`` with ``text`` as the first job is handed over: an edit during a compile."""

    def __init__(self, path, text):
        super().__init__(max_workers=2)
        self.path, self.text = path, text

    def submit(self, fn, /, *args, **kwargs):
        if self.text is not None:
            self.path.write_text(self.text)
            self.text = None
        return super().submit(fn, *args, **kwargs)


@pytest.mark.parametrize("kind", ["memory", "file"])
def test_a_header_saved_during_a_compile_is_never_served_under_the_old_key(include_dir, tmp_path, kind):
    """Edit a header while the jobs run, undo the edit: the next build must get the original header's code."""
    cache = InMemoryProgramCache() if kind == "memory" else FileStreamProgramCache(tmp_path / "cache")
    header = include_dir / "consts.cuh"
    original = _fresh(include_dir, ["sm_80", "sm_90"])
    with _EditingExecutor(header, "#define FACTOR 5\n") as pool:
        edited, report, logs = compile_(cache, include_dir, ["sm_80", "sm_90"], executor=pool)
    assert edited.code != original  # the jobs did compile the new header
    assert len(report.misses) == 2 and report.not_stored == report.misses
    assert "2 not stored (a header changed during the compile)" in str(report)
    assert "cache miss, not stored: a header changed while it compiled" in logs
    header.write_text("#define FACTOR 2\n")  # the edit undone
    again, report, _ = compile_(cache, include_dir, ["sm_80", "sm_90"])
    assert len(report.misses) == 2 and not report.not_stored  # nothing was stored under the old key
    assert again.code == original
    _, report, _ = compile_(cache, include_dir, ["sm_80", "sm_90"])
    assert len(report.hits) == 2  # a quiet build is stored as before


class _EditUndoExecutor(cf.ThreadPoolExecutor):
    """One job at a time; the first compiles ``path`` saved with ``text``, which is put back as it was after it."""

    def __init__(self, path, text):
        super().__init__(max_workers=1)
        self.path, self.text = path, text

    def submit(self, fn, /, *args, **kwargs):
        if self.text is None:
            return super().submit(fn, *args, **kwargs)
        before, st = self.path.read_text(), self.path.stat()
        self.path.write_text(self.text)
        self.text = None

        def edited_then_undone(*a, **k):
            try:
                return fn(*a, **k)
            finally:  # the same bytes and modification time as before: only the status change time tells
                self.path.write_text(before)
                os.utime(self.path, ns=(st.st_atime_ns, st.st_mtime_ns))

        return super().submit(edited_then_undone, *args, **kwargs)


def test_a_header_edited_and_undone_during_a_compile_is_not_stored(include_dir):
    """The second fingerprint hashes the same bytes as the first, but a job compiled the edit: not stored."""
    cache = InMemoryProgramCache()
    header = include_dir / "consts.cuh"
    original = _fresh(include_dir, ["sm_80", "sm_90"])
    with _EditUndoExecutor(header, "#define FACTOR 5\n") as pool:
        mixed, report, _ = compile_(cache, include_dir, ["sm_80", "sm_90"], executor=pool)
    assert bytes(mixed.code) != original  # one job did compile the edited header
    assert len(report.misses) == 2 and report.not_stored == report.misses
    again, report, _ = compile_(cache, include_dir, ["sm_80", "sm_90"])
    assert len(report.misses) == 2 and bytes(again.code) == original


@pytest.mark.parametrize("sub", ["tmp", "entries"])
def test_headers_of_an_include_folder_in_the_cache_s_own_subfolder_names_stay_in_the_key(include_dir, sub):
    """`-I build --cache build` where build/tmp/ (or build/entries/) holds headers: an edit there gave a stale hit."""
    SRC_SUB = SRC.replace('"consts.cuh"', f'"{sub}/consts.cuh"')
    (include_dir / sub).mkdir()
    header = include_dir / sub / "consts.cuh"
    header.write_text("#define FACTOR 2\n")

    def build(cache):
        program = Program(SRC_SUB, "c++", ProgramOptions(include_path=[str(include_dir)]))
        obj = program.compile("fatbin", NAMES, archs=["sm_80"], ptx_for=(), cache=cache)
        return bytes(obj.code), program.last_cache_report

    with FileStreamProgramCache(include_dir) as cache:
        build(cache)
        # tmp/ is empty between stores: a hit; entries/ is then hashed with the cache's own entries: never a hit
        assert len(build(cache)[1].hits) == (1 if sub == "tmp" else 0)
        header.write_text("#define FACTOR 3\n")
        code, report = build(cache)
        assert len(report.misses) == 1
        assert code == build(None)[0]


def test_compile_refuses_a_cache_folder_whose_tmp_or_entries_hold_files_not_its_own(tmp_path, include_dir):
    """`--cache .` where ./tmp/ holds a file of the user's: the cache deleted it (files there over an hour old)."""
    from cli_testing import cli_main

    (include_dir / "k.cu").write_text(SRC)
    (include_dir / "tmp").mkdir()
    notes = include_dir / "tmp" / "notes.txt"
    notes.write_text("mine")
    os.utime(notes, (time.time() - 7200, time.time() - 7200))
    args = ["compile", "k.cu", "--arch", "80", "-o", str(tmp_path / "k.fatbin"), "--cache", "."]
    res = cli_main(*args, cwd=include_dir, check=2)
    assert "--cache .: its tmp/ holds files that are not the cache's (tmp/notes.txt)" in res.stderr
    assert notes.read_text() == "mine" and not (tmp_path / "k.fatbin").exists()
    notes.unlink()
    cli_main(*args, cwd=include_dir, check=0)  # the cache's own tmp/ and entries/ are no obstacle
    assert "2 hit(s)" in cli_main(*args, cwd=include_dir, check=0).stderr
