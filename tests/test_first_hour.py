# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The first hour of a user (issue #26): CUDA headers without -I, single-arch compiles without a driver,
bytes sources, compiler messages named after the file and shown once, a note on what to install."""

from __future__ import annotations

import pytest
from cuda.core.utils import InMemoryProgramCache

from cli_testing import cli_main
from cuda_fatbin import FatbinCompileError, Program, ProgramOptions, _program, read_fatbin
from cuda_fatbin._headers import CUDA_HEADERS_INSTALL, HeaderDir, cuda_header_dirs, missing_header_hint

from fatbin_testing import KERNEL_SRC, plain

# The three headers of the issue: the runtime's half type, CCCL's libcu++, and cooperative groups.
HEADERS_SRC = r"""
#include <cuda_fp16.h>
#include <cuda/std/complex>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void h(__half* out) {
    cuda::std::complex<float> c(1.0f, 2.0f);
    cg::thread_block block = cg::this_thread_block();
    out[block.thread_rank()] = __float2half(cuda::std::abs(c));
}
"""
FP16_SRC = '#include <cuda_fp16.h>\nextern "C" __global__ void h(__half* p) { p[0] = __float2half(1.f); }\n'


def test_cuda_headers_found_without_include_path():
    dirs = cuda_header_dirs()
    assert [d.library for d in dirs] == ["cudart", "cccl"], f"install the headers: {CUDA_HEADERS_INSTALL}"
    assert all("VERSION=" in d.label and "=?" not in d.label for d in dirs), dirs


def test_cuda_headers_compile_for_all_major_with_no_include_path():
    obj = Program(HEADERS_SRC, "c++").compile("fatbin", archs="all-major")
    kinds = {e.kind for e in read_fatbin(bytes(obj.code)).iter_entries()}
    assert kinds == {"elf", "ptx"}


def test_user_include_paths_come_first_and_are_not_repeated(tmp_path):
    dirs = [d.path for d in cuda_header_dirs()]
    program = Program(KERNEL_SRC, "c++", ProgramOptions(include_path=[str(tmp_path), dirs[0]]))
    assert program._fb_effective.include_path == [str(tmp_path), *dirs]
    assert program.options.include_path == [str(tmp_path), dirs[0]]  # what the user gave, unchanged
    assert Program(KERNEL_SRC, "c++", cuda_headers=False)._fb_effective.include_path is None


def test_opting_out_says_what_to_do():
    with pytest.raises(FatbinCompileError) as info:
        Program(FP16_SRC, "c++", cuda_headers=False).compile("fatbin", archs="80")
    assert "cuda_fp16.h is a CUDA header: drop cuda_headers=False" in str(info.value)
    with pytest.raises(TypeError, match="cuda_headers must be True or False"):
        Program(FP16_SRC, "c++", cuda_headers="no")  # type: ignore[arg-type]


def test_missing_headers_name_the_wheel_to_install(monkeypatch):
    monkeypatch.setattr(_program, "cuda_header_dirs", lambda: ())
    monkeypatch.setattr("cuda_fatbin._headers.cuda_header_dirs", lambda: ())
    with pytest.raises(FatbinCompileError) as info:
        Program(FP16_SRC, "c++").compile("fatbin", archs="80")
    assert info.value.hint == (
        f"cuda_fp16.h is a CUDA header and no CUDA headers are installed: {CUDA_HEADERS_INSTALL}, "
        "or pass their folder in include_path (-I)"
    )
    assert str(info.value).endswith(info.value.hint)


@pytest.mark.parametrize(
    ("log", "hinted"),
    [('k.cu(1): catastrophic error: could not open source file "cuda/std/complex"', True),
     ('k.cu(1): catastrophic error: cannot open source file "cooperative_groups.h"', True),
     ('k.cu(1): catastrophic error: could not open source file "mine.h"', False),
     ("k.cu(1): error: expected a declaration", False)],
)  # fmt: skip
def test_only_cuda_headers_get_the_note(log, hinted):
    assert bool(missing_header_hint(log, True)) is hinted


def test_cache_keys_follow_the_header_folders_label_not_their_files(monkeypatch):
    real = cuda_header_dirs()
    cache = InMemoryProgramCache()

    def compile_with(label: str) -> tuple[str, ...]:
        monkeypatch.setattr(
            _program, "cuda_header_dirs", lambda: tuple(HeaderDir(d.library, d.path, label) for d in real)
        )
        program = Program(KERNEL_SRC, "c++")
        program.compile("fatbin", archs="80", ptx_for="none", cache=cache)
        assert program.last_cache_report is not None
        return program.last_cache_report.misses

    assert compile_with("cudart wheel 13.0") == ("NVRTC sm_80 -> cubin",)
    assert compile_with("cudart wheel 13.0") == ()  # same headers: a hit
    assert compile_with("cudart wheel 13.1") == ("NVRTC sm_80 -> cubin",)  # other headers: a new key


def test_single_arch_compiles_need_no_driver():
    """Issue #26: PTX with an explicit arch raised DynamicLibNotFoundError on a machine without a driver."""
    for target in ("ptx", "cubin", "ltoir"):
        options = ProgramOptions(arch="sm_90", link_time_optimization=target == "ltoir")
        obj = Program(FP16_SRC, "c++", options).compile(target)
        kind, size = obj.code_type, len(bytes(obj.code))  # plain values in asserts: an ObjectCode's repr asks the
        del obj  # driver, and without one a failing assert's message can wait for ever (docs/known-issues.md)
        assert kind == target and size > 0
    ptx = Program(KERNEL_SRC, "c++", ProgramOptions(arch="sm_90")).compile("ptx", ["scale<float>"])
    code, mapping = bytes(ptx.code), dict(ptx.symbol_mapping or {})
    del ptx
    assert b".target sm_90" in code and mapping == {"scale<float>": b"_Z5scaleIfEvPT_S0_i"}


def test_single_arch_ptx_errors_carry_the_log_and_the_note():
    with pytest.raises(FatbinCompileError, match=r"(?s)k\.cu\(2\): error.*") as info:
        Program('extern "C" __global__ void k() {}\nnot C++', "c++", ProgramOptions(arch="sm_90", name="k.cu")
                ).compile("ptx")  # fmt: skip
    assert "k.cu" in str(info.value)


def test_bytes_sources_are_accepted_as_documented():
    """Issue #26: Program(bytes, "ptx") and Program(bytes, "c++") failed in cuda.core's constructor."""
    ptx = bytes(Program(KERNEL_SRC, "c++", ProgramOptions(arch="sm_80")).compile("ptx").code)
    for code, kind in ((KERNEL_SRC.encode(), "c++"), (ptx, "ptx"), (bytearray(ptx), "ptx")):
        obj = Program(code, kind).compile("fatbin", archs="80")
        obj_plain = plain(obj)
        assert [e.kind for e in read_fatbin(obj_plain.code).iter_entries()] == ["elf", "ptx"]
    with pytest.raises(ValueError, match="must be UTF-8"):
        Program(b"\xff\xfe not text", "c++")


def test_compiler_messages_are_named_after_the_file_and_shown_once():
    bad = 'extern "C" __global__ void k(int* p) {\n  p[0] = 1\n}\n'
    with pytest.raises(FatbinCompileError) as info:
        Program(bad, "c++", ProgramOptions(name="bad.cu")).compile("fatbin", archs="75;80;90", ptx_for="none")
    text, failed = str(info.value), [job for job, _ in info.value.failures]
    assert len(failed) >= 2  # the first failure cancels jobs not started yet
    assert text.count('bad.cu(3): error: expected a ";"') == 1, text
    assert text.splitlines()[1] == f"--- {', '.join(failed)} ---"  # one header names every job that said it


def test_cli_names_the_file_and_finds_the_headers(tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text('extern "C" __global__ void k(int* p) {\n  p[0] = 1\n}\n')
    run = ["compile"]  # in this process (tests/cli_testing.py): mutants reach it
    res = cli_main(*run, bad, "--arch", "75;80", "-o", tmp_path / "b.fatbin")
    assert res.returncode == 1 and res.stderr.count('bad.cu(3): error: expected a ";"') == 1, res.stderr
    good = tmp_path / "h.cu"
    good.write_text(FP16_SRC)
    out = tmp_path / "h.fatbin"
    res = cli_main(*run, good, "--arch", "80", "-o", out, "-q")
    assert res.returncode == 0 and out.exists(), res.stderr
    res = cli_main(*run, good, "--arch", "80", "-o", tmp_path / "n.fatbin", "--no-cuda-headers")  # fmt: skip
    assert res.returncode == 1 and "--no-cuda-headers" in res.stderr and not (tmp_path / "n.fatbin").exists()


@pytest.mark.parametrize("none", ["none", (), []])
def test_ptx_for_none_wins_over_ptx_the_spec_names(none):
    """Issue #26: all-major with --ptx-for none still gave PTX for sm_120."""
    from cuda_fatbin import plan_fatbin

    assert any(kind == "ptx" for kind, _ in plan_fatbin("all-major").entries)  # nvcc's all-major names PTX
    assert {kind for kind, _ in plan_fatbin("all-major", ptx_for=none).entries} == {"cubin"}
    assert not [k for k, _ in plan_fatbin("80;90+PTX", ptx_for=none).entries if k == "ptx"]


def test_an_unknown_target_is_named():
    with pytest.raises(ValueError, match=r"unknown target_type 'fatbinn'; did you mean 'fatbin'\?"):
        Program(KERNEL_SRC, "c++").compile("fatbinn", archs="80")
    for typo, meant in (("ptxx", "ptx"), ("cubn", "cubin"), ("ltoi", "ltoir")):
        with pytest.raises(ValueError) as info:
            Program(KERNEL_SRC, "c++").compile(typo)
        assert str(info.value) == (
            f"unknown target_type {typo!r}; did you mean {meant!r}?; choose 'ptx', 'cubin', 'ltoir' or 'fatbin'"
        )
    with pytest.raises(ValueError) as info:
        Program(KERNEL_SRC, "c++").compile(3)  # type: ignore[arg-type]
    assert str(info.value) == "unknown target_type 3; choose 'ptx', 'cubin', 'ltoir' or 'fatbin'"
    # the target is read without regard to case, as upstream's compile reads it
    code = bytes(Program(KERNEL_SRC, "c++").compile("FatBin", archs="80", ptx_for=()).code)
    assert read_fatbin(code).entries


def test_command_typos_get_a_suggestion_and_help_texts_exist():
    run: list[str] = []  # in this process (tests/cli_testing.py)
    res = cli_main(*run, "compil", "k.cu")
    assert res.returncode == 2 and "unknown command 'compil'; did you mean 'compile'?" in res.stderr, res.stderr
    res = cli_main(*run, "--debug", "inspekt", "x")
    assert res.returncode == 2 and "did you mean 'inspect'?" in res.stderr
    which = cli_main(*run, "which", "--help").stdout
    assert "a fatbin, cubin, PTX, object" in which and "machine-readable output" in which
    extract = cli_main(*run, "extract", "--help").stdout
    assert "the folder to write into" in extract


def test_parse_archs_documents_the_error_of_native_without_a_driver():
    from cuda_fatbin import parse_archs

    assert "NoDriverError\n        ``native``" in (parse_archs.__doc__ or "")


def test_compile_build_and_extract_print_json_that_meets_their_schemas(tmp_path):
    """Issue #26: compile, build and extract had no --json."""
    import json
    from importlib import resources

    import jsonschema

    def schema(name: str) -> dict:
        return json.loads(resources.files("cuda_fatbin").joinpath("schemas", f"{name}.json").read_text())

    run: list[str] = []  # in this process (tests/cli_testing.py)
    src = tmp_path / "k.cu"
    src.write_text(KERNEL_SRC)
    fatbin = tmp_path / "k.fatbin"
    res = cli_main(*run, "compile", src, "--arch", "80;90", "-o", fatbin, "--json", "--name-expression",
                          "scale<float>", "--cache", tmp_path / "cache")  # fmt: skip
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, schema("compile"))
    assert [(e["kind"], e["arch"]) for e in doc["entries"]] == [("elf", "sm_80"), ("elf", "sm_90"), ("ptx", "sm_90")]
    assert doc["symbols"] == {"scale<float>": "_Z5scaleIfEvPT_S0_i"} and len(doc["cache"]["misses"]) == 3
    out = tmp_path / "x"
    res = cli_main(*run, "extract", fatbin, "-o", out, "--json")
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, schema("extract"))
    assert res.returncode == 0 and len(doc["written"]) == 3 and doc["failed"] == []
    cubin = next(p for p in doc["written"] if p.endswith(".cubin"))
    res = cli_main(*run, "build", "-o", tmp_path / "b.fatbin", cubin, "--json")
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, schema("build"))
    assert res.returncode == 0 and doc["parts"] == 1 and doc["entries"][0]["kind"] == "elf"
    res = cli_main(*run, "build", "-o", "-", cubin, "--json")
    assert res.returncode == 2 and "--json writes to standard output" in res.stderr


def test_the_declared_version_is_read_from_the_top_of_the_header(tmp_path):
    """The label the cache keys hash: MACRO=value from the first 64 KiB, "?" for anything else."""
    from cuda_fatbin._headers import _declared_version

    def version(text: bytes | None, name: str = "cuda_runtime_api.h") -> str:
        folder = tmp_path / str(len(list(tmp_path.iterdir())))
        folder.mkdir()
        if text is not None:
            (folder / name).write_bytes(text)
        return _declared_version(str(folder), name, "CUDART_VERSION")

    assert version(b"/* x */\n#  define   CUDART_VERSION 13050\n") == "CUDART_VERSION=13050"
    assert version(b"#define CUDART_VERSION_MINOR 5\n#define CUDART_VERSION 12080\n") == "CUDART_VERSION=12080"
    assert version(b"#define CUDART_VERSION " + b"9" * 40 + b"\n") == "CUDART_VERSION=" + "9" * 32
    assert version(b" " * (1 << 16) + b"#define CUDART_VERSION 13000\n") == "CUDART_VERSION=?"  # past 64 KiB
    assert version(b"#define CUDART_VERSION_MINOR 5\n") == "CUDART_VERSION=?"
    assert version(None) == "CUDART_VERSION=?"  # no such file
    (tmp_path / "d" / "cuda" / "std").mkdir(parents=True)  # a folder where the header should be
    assert _declared_version(str(tmp_path / "d"), "cuda/std", "CCCL_VERSION") == "CCCL_VERSION=?"
    nested = tmp_path / "n" / "cuda" / "std" / "__cccl"
    nested.mkdir(parents=True)
    (nested / "version.h").write_text("#define CCCL_VERSION 3005000\n")
    assert _declared_version(str(tmp_path / "n"), "cuda/std/__cccl/version.h", "CCCL_VERSION") == "CCCL_VERSION=3005000"


def test_the_missing_header_note_names_every_header_and_the_folders_searched(monkeypatch):
    log = ('k.cu(1): catastrophic error: cannot open source file "cuda_fp16.h"\n'
           'k.cu(2): catastrophic error: could not open source file "cuda/std/complex"\n'
           'k.cu(3): catastrophic error: cannot open source file "cuda_fp16.h"\n')  # fmt: skip
    assert missing_header_hint(log, False) == (
        "cuda/std/complex, cuda_fp16.h are CUDA headers: drop cuda_headers=False (--no-cuda-headers), "
        "or pass its folder in include_path (-I)"
    )
    dirs = (HeaderDir("cudart", "/h/inc", "l1"), HeaderDir("cccl", "/h/inc/cccl", "l2"))
    monkeypatch.setattr("cuda_fatbin._headers.cuda_header_dirs", lambda: dirs)
    assert missing_header_hint(log, True) == (
        "cuda/std/complex, cuda_fp16.h are CUDA headers, not found in the CUDA header folders (/h/inc, "
        f"/h/inc/cccl): install newer headers ({CUDA_HEADERS_INSTALL}) or pass their folder in include_path (-I)"
    )


def test_one_did_you_mean_for_the_command_and_the_library():
    """``_suggest.closest``: the nearest known word or None; the command asks for a looser match (0.5) than
    difflib's default (0.6), which the library keeps; it is what the three messages above name."""
    from cuda_fatbin._suggest import closest

    assert closest("compil", ["compile", "build", "inspect"]) == "compile"
    assert closest("fatbinn", ("ptx", "cubin", "ltoir", "fatbin")) == "fatbin"  # any iterable of words
    assert closest("xxxscanxxx", ["scan", "which"]) is None  # ratio 0.57: below the default cutoff
    assert closest("xxxscanxxx", ["scan", "which"], cutoff=0.5) == "scan"
    assert closest("zzz", []) is None
    res = cli_main("xxxscanxxx")
    assert res.returncode == 2 and "did you mean 'scan'?" in res.stderr
