# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import gc
import io
import multiprocessing
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuda_fatbin import (
    Arch,
    FatbinCompileError,
    FatbinOptions,
    Program,
    ProgramOptions,
    parse_archs,
    plan_fatbin,
    read_fatbin,
)
from cuda_fatbin._driver import NoDriverError
from cuda_fatbin._headers import cuda_header_dirs

from fatbin_testing import KERNEL_SRC, listing, nvrtc_supported_sms, plain

NVVM_IR = b"""target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @fill(i32* %data, i32 %value) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %idx = sext i32 %tid to i64
  %p = getelementptr i32, i32* %data, i64 %idx
  store i32 %value, i32* %p
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

!nvvm.annotations = !{!0}
!0 = !{void (i32*, i32)* @fill, !"kernel", i32 1}
!nvvmir.version = !{!1}
!1 = !{i32 2, i32 0, i32 3, i32 1}
"""  # noqa: E501


def supported() -> list[str]:
    """The archs the installed NVRTC targets: asked when a test runs, not while the suite is collected (a
    mutation run forks each mutant's tests from the process that collected them; docs/testing.md)."""
    return [f"sm_{s}" for s in nvrtc_supported_sms()]


_compiled: dict = {}


def fatbin_of(archs, **kw) -> bytes:
    """Compile KERNEL_SRC to a fatbin once per distinct request (shared by the property tests)."""
    key = (repr(archs), repr(sorted(kw.items())))
    if key not in _compiled:
        obj = Program(KERNEL_SRC, "c++").compile("fatbin", ["scale<float>"], archs=archs, **kw)
        _compiled[key] = bytes(obj.code)
    return _compiled[key]


def entry_set(data: bytes) -> set[tuple[str, str]]:
    return {(e.kind, str(e.arch)) for e in read_fatbin(data).iter_entries()}


def test_headline_call_without_gpu(cuobjdump):
    obj = Program(KERNEL_SRC, "c++").compile(
        "fatbin", ["scale<float>"], archs=["sm_80", "sm_90", "sm_100"], ptx_for=["sm_100"]
    )
    obj_plain = plain(obj)
    assert obj_plain.code_type == "fatbin"
    assert obj_plain.symbol_mapping == {"scale<float>": b"_Z5scaleIfEvPT_S0_i"}
    got = sorted(listing(cuobjdump(bytes(obj.code), "-lelf", "-lptx")))
    assert got == [("elf", "sm_100"), ("elf", "sm_80"), ("elf", "sm_90"), ("ptx", "sm_100")]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    archs=st.lists(st.deferred(lambda: st.sampled_from(supported())), min_size=1, max_size=3, unique=True),
    with_ptx=st.sampled_from([None, (), "first"]),
    with_lto=st.booleans(),
)
def test_entries_are_exactly_the_requested_set(cuobjdump, archs, with_ptx, with_lto):
    ptx_for = [archs[0]] if with_ptx == "first" else with_ptx
    ltoir_for = [archs[-1]] if with_lto else ()
    data = fatbin_of(archs, ptx_for=ptx_for, ltoir_for=ltoir_for)
    want = {("elf", a) for a in archs}
    if ptx_for is None:
        want.add(("ptx", str(max(Arch.parse(a) for a in archs))))
    elif ptx_for:
        want.add(("ptx", archs[0]))
    assert set(listing(cuobjdump(data, "-lelf", "-lptx"))) == want
    if with_lto:
        assert ("ltoir", archs[-1]) in entry_set(data)


def test_arch_specific_and_family_targets():
    data = fatbin_of(["sm_90a", "sm_100f", "sm_120"], ptx_for=["sm_100f"])
    assert entry_set(data) == {("elf", "sm_90a"), ("elf", "sm_100f"), ("elf", "sm_120"), ("ptx", "sm_100f")}


def test_bytes_identical_across_runs_and_worker_counts():
    archs = ["sm_75", "sm_80", "sm_90"]
    runs = [
        bytes(Program(KERNEL_SRC, "c++").compile("fatbin", ["scale<float>"], archs=archs, max_workers=w).code)
        for w in (1, 2, 3, 1)
    ]
    assert len(set(runs)) == 1


def test_process_pool_executor():
    archs = ["sm_80", "sm_86", "sm_90"]
    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=2, mp_context=ctx) as pool:
        obj = Program(KERNEL_SRC, "c++").compile("fatbin", ["scale<float>"], archs=archs, executor=pool)
    obj_plain = plain(obj)
    assert obj_plain.code == fatbin_of(archs)
    assert obj_plain.symbol_mapping == {"scale<float>": b"_Z5scaleIfEvPT_S0_i"}


def test_group_mode_shares_the_front_end(cuobjdump):
    plan = Program(KERNEL_SRC, "c++").plan("75;80;86;89;90", group=True)
    assert [str(j.arch) for j in plan.jobs] == ["sm_75", "sm_80", "sm_90"]
    assert [len(j.link) for j in plan.jobs] == [1, 3, 1]
    obj = Program(KERNEL_SRC, "c++").compile("fatbin", archs="75;80;86;89;90", group=True)
    obj_plain = plain(obj)
    assert set(listing(cuobjdump(obj_plain.code, "-lelf", "-lptx"))) == {
        ("elf", "sm_75"), ("elf", "sm_80"), ("elf", "sm_86"), ("elf", "sm_89"), ("elf", "sm_90"), ("ptx", "sm_90")
    }  # fmt: skip


def test_group_mode_leaves_a_and_f_archs_alone():
    """A past bug (caught only by a random draw): in group mode sm_90a SASS was linked from
    compute_90 PTX. Arch-specific (``a``) and family (``f``) SASS needs its own virtual arch (nvcc:
    "compute_90a" for sm_90a; CUDA C++ Programming Guide, "Feature Availability"): each is its own job."""
    plan = plan_fatbin("90;90a;100;100f;103a", ptx_for="none", group=True, supported=range(200))
    alone = {str(j.arch): j for j in plan.jobs if j.arch.suffix}
    assert sorted(alone) == ["sm_100f", "sm_103a", "sm_90a"]
    assert all(j.front == "nvrtc" and j.target == "cubin" and not j.link for j in alone.values())
    assert not [a for j in plan.jobs for a in j.link if a.suffix]


def test_none_names_no_entries_for_ptx_for_and_ltoir_for_alike():
    """``"none"`` (any case, spaces around it, or ``""``) names no archs, for ``ltoir_for`` as for ``ptx_for``
    (``plan_fatbin``'s documented spelling, the one the command line also takes)."""
    plain = [str(j) for j in plan_fatbin("80;90", ptx_for=(), supported=range(200)).jobs]
    assert plain == ["NVRTC sm_80 -> cubin", "NVRTC sm_90 -> cubin"]
    for none in ("none", " NONE ", "None", ""):
        assert [str(j) for j in plan_fatbin("80;90", ptx_for=none, supported=range(200)).jobs] == plain
        assert [str(j) for j in plan_fatbin("80;90", ptx_for=(), ltoir_for=none, supported=range(200)).jobs] == plain
    with_ltoir = [str(j) for j in plan_fatbin("80;90", ptx_for=(), ltoir_for="90", supported=range(200)).jobs]
    assert with_ltoir == [*plain, "NVRTC sm_90 -> ltoir"], with_ltoir


def test_gencode_groups_build_sass_from_the_virtual_arch():
    spec = "-gencode arch=compute_80,code=[sm_80,sm_86] -gencode arch=compute_90,code=[sm_90,compute_90]"
    plan = plan_fatbin(spec)
    assert [str(j) for j in plan.jobs] == [
        "NVRTC sm_80 -> cubin", "NVRTC sm_90 -> cubin", "NVRTC compute_80 -> ptx -> nvJitLink sm_86",
        "NVRTC compute_90 -> ptx",
    ]  # fmt: skip
    data = fatbin_of(spec)
    assert entry_set(data) == {("elf", "sm_80"), ("elf", "sm_86"), ("elf", "sm_90"), ("ptx", "sm_90")}


SPELLINGS = [
    # the same meaning: SASS 80, 86, 90 and PTX 90
    ["sm_80", "sm_86", "sm_90"],
    "sm_80,sm_86,sm_90",
    "80;86;90",
    "8.0 8.6 9.0",
    "8.0;8.6;9.0+PTX",
    "80-real;86-real;90",
    "arch=compute_80,code=sm_80;arch=compute_86,code=sm_86;arch=compute_90,code=[sm_90,compute_90]",
    {"compute_80": ["sm_80"], "compute_86": "sm_86", "compute_90": ["sm_90", "compute_90"]},
    ["sm_80", "sm_86", "sm_90", "compute_90"],
]


@pytest.mark.parametrize("spec", SPELLINGS[1:])
def test_spellings_of_one_set_give_equal_plans(spec):
    assert plan_fatbin(spec) == plan_fatbin(SPELLINGS[0])


@given(st.lists(st.sampled_from(["75", "80", "86", "89", "90", "100", "120"]), min_size=1, max_size=5, unique=True))
def test_spelling_equivalence_property(sms):
    archs = sorted(Arch.parse(s) for s in sms)
    newest = archs[-1]
    torch = ";".join(a.capability + ("+PTX" if a == newest else "") for a in archs)
    cmake = ";".join(f"{a.sm}-real" for a in archs[:-1]) + f";{newest.sm}"
    gencode = " ".join(f"-gencode arch={a.compute},code=[{a}{',' + a.compute if a == newest else ''}]" for a in archs)
    plain = [str(a) for a in archs]
    plans = {str(plan_fatbin(s, supported=range(0, 200))) for s in (torch, cmake, gencode, plain)}
    assert len(plans) == 1


@given(st.builds(Arch, st.integers(1, 20), st.integers(0, 9)))
def test_parse_archs_round_trip(a):
    assert parse_archs(str(a)) == [a]
    assert parse_archs(a.bare) == [a]


def test_logs_are_prefixed_with_the_job():
    logs = io.StringIO()
    src = KERNEL_SRC + "\n__global__ void warn() { int unused = 1; }\n"
    Program(src, "c++").compile("fatbin", logs=logs, archs=["sm_80", "sm_90"], ptx_for=())
    text = logs.getvalue()
    assert "[NVRTC sm_80 -> cubin]" in text and "[NVRTC sm_90 -> cubin]" in text
    assert "unused" in text


def test_failing_source_names_every_failing_arch():
    bad = KERNEL_SRC + "\n__global__ void broken() { undefined_thing(); }\n"
    with pytest.raises(FatbinCompileError) as info:
        Program(bad, "c++").compile("fatbin", archs=["sm_80", "sm_90"], ptx_for=(), max_workers=2)
    msg = str(info.value)
    assert "sm_80" in msg and "sm_90" in msg and "undefined_thing" in msg
    assert len(info.value.failures) == 2


def test_one_failure_cancels_the_rest():
    bad = "__global__ void broken() { undefined_thing(); }"
    with pytest.raises(FatbinCompileError) as info:
        Program(bad, "c++").compile("fatbin", archs=supported()[:6], max_workers=1)
    assert len(info.value.failures) == 1  # the others were cancelled before they started


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (
            {},
            ValueError,
            "compile('fatbin') needs archs=, e.g. archs=['sm_80', 'sm_90'] or archs='all-major'; it never "
            "picks a single arch silently",
        ),
        ({"archs": ["sm_9x"]}, ValueError, "not an arch: 'sm_9x'"),
        ({"archs": ["sm_50"]}, ValueError, "sm_50 is not supported by the installed compiler; supported: sm_75"),
        ({"archs": ["sm_80"], "ptx_for": ["sm_90"]}, ValueError, "ptx_for names sm_90, which is not in archs"),
        ({"archs": ["sm_80"], "ltoir_for": "sm_86"}, ValueError, "ltoir_for names sm_86"),
        ({"archs": ["sm_80"], "executor": object()}, TypeError, "executor must be"),
        ({"archs": ["sm_80"], "max_workers": 0}, ValueError, "max_workers"),
        ({"archs": []}, ValueError, "names no arch"),
        ({"archs": ["sm_80"], "colour": "blue"}, TypeError, "unexpected arguments: colour"),
        ({"archs": ["sm_80"], "cache": object()}, TypeError, "cache must be a cuda.core.utils.ProgramCacheResource"),
        ({"archs": ["sm_80"], "cache_extra_digest": b"x"}, ValueError, "cache_extra_digest needs cache="),
    ],
)
def test_misuse_errors(kwargs, error, words):
    with pytest.raises(error, match=re.escape(words)):
        Program(KERNEL_SRC, "c++").compile("fatbin", **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"colour": "blue", "size": 1}, TypeError, "compile('fatbin') got unexpected arguments: colour, size"),
        ({"cache_extra_digest": b"x", "cache_exclude": ["build"]}, ValueError,
         "cache_extra_digest and cache_exclude need cache="),
        ({"cache_max_files": 5}, ValueError, "cache_max_files needs cache="),
        ({"min_driver_action": "raise"}, ValueError, "min_driver_action must be 'error' or 'warn'; got 'raise'"),
        ({"extra_options": ["-DX", 3]}, TypeError, "extra_options must be strings; got 3"),
        # a bad min_driver is refused before anything else is looked at (here: a bad arch, which plan() refuses)
        ({"archs": ["sm_9x"], "min_driver": "twelve"}, ValueError, "not a driver or CUDA version: 'twelve'"),
    ],
)  # fmt: skip
def test_fatbin_misuse_messages_word_for_word(kwargs, error, message):
    """Each refusal of compile('fatbin') before any compile, its whole message (startswith: the rest may list
    choices); every argument named, joined as written."""
    kwargs = {"archs": ["sm_80"], **kwargs}
    with pytest.raises(error) as info:
        Program(KERNEL_SRC, "c++").compile("fatbin", **kwargs)
    assert str(info.value).startswith(message), str(info.value)


def test_only_the_arch_options_of_extra_options_are_refused():
    """-arch/--gpu-architecture (any number of dashes) are refused; an option that only has "arch" after other
    characters reaches NVRTC, which judges it (here: unknown, so the job fails naming it)."""
    for opt in ("-arch=sm_80", "--gpu-architecture=sm_80", "arch"):
        with pytest.raises(ValueError, match="the archs come from archs="):
            Program(KERNEL_SRC, "c++").compile("fatbin", archs=["sm_80"], extra_options=[opt])
    with pytest.raises(FatbinCompileError, match="-Xarch=sm_80"):
        Program(KERNEL_SRC, "c++").compile("fatbin", archs=["sm_80"], extra_options=["-Xarch=sm_80"])


def test_split_compile_0_counts_every_core_of_the_machine(monkeypatch):
    """split_compile=0 is NVRTC's "as many threads as the machine has" (NVRTC documentation, --split-compile):
    each job then counts os.cpu_count() threads (1 when Python cannot tell), and the default pool shrinks to
    max_workers // that."""
    import os

    import cuda_fatbin._multiarch as multiarch

    sizes = []

    class Recording:
        def __init__(self, max_workers=None, **kw):
            sizes.append(max_workers)
            raise KeyboardInterrupt  # the size is all this test needs: no compile

    monkeypatch.setattr(multiarch.cf, "ThreadPoolExecutor", Recording)
    archs = ["sm_80", "sm_86", "sm_90", "sm_100"]
    for cores in (4, 2, None):
        monkeypatch.setattr(os, "cpu_count", lambda cores=cores: cores)
        for split in (0, 1, 2):
            with pytest.raises(KeyboardInterrupt):
                Program(KERNEL_SRC, "c++", ProgramOptions(split_compile=split)).compile(
                    "fatbin", archs=archs, ptx_for=(), max_workers=4
                )
    # cores 4: 4 threads a job -> 1 worker; 1 -> 4; 2 -> 2.  cores 2: 2 -> 2; 1 -> 4; 2 -> 2.  unknown: 1 -> 4 ...
    assert sizes == [1, 4, 2, 2, 4, 2, 4, 4, 2]


@pytest.mark.parametrize("target", ["ptx", "cubin", "ltoir"])
@pytest.mark.parametrize("options", [None, ProgramOptions(arch="sm_80")])
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # cuda.core's __dealloc__ (below)
def test_a_single_target_compile_refuses_unknown_arguments_before_asking_for_a_gpu(target, options):
    """compile("ptx", arch="sm_80") asked the driver for the GPU's arch (NoDriverError on a build machine)
    before upstream refused arch=; now a TypeError that says where the arch goes, on any machine."""
    program = Program(KERNEL_SRC, "c++", options)
    with pytest.raises(TypeError) as info:
        program.compile(target, arch="sm_80")
    assert str(info.value) == (
        f"compile({target!r}) got unexpected arguments: arch; the arch of a single-target compile is "
        "ProgramOptions(arch='sm_XX'), and many archs are compile('fatbin', archs=[...])"
    )
    with pytest.raises(TypeError, match=r"unexpected arguments: colour, size$"):
        program.compile(target, size=1, colour="blue")
    del info, program  # upstream's program goes here, under the mark above
    gc.collect()


def test_arch_option_conflicts_with_archs():
    with pytest.raises(ValueError) as info:
        Program(KERNEL_SRC, "c++", ProgramOptions(arch="sm_80")).compile("fatbin", archs=["sm_90"])
    assert str(info.value) == (
        "ProgramOptions.arch='sm_80' conflicts with archs=; leave arch unset (use cuda_fatbin.ProgramOptions, which "
        "needs no GPU) and list every arch in archs"
    )
    with pytest.raises(ValueError, match="apply to 'fatbin'"):
        Program(KERNEL_SRC, "c++", ProgramOptions(arch="sm_80")).compile("cubin", archs=["sm_90"])
    fatbin_only = {"ptx_for": ["sm_80"], "ltoir_for": ["sm_80"], "fatbin_options": FatbinOptions(), "group": True,
                   "min_driver": "12.0"}  # fmt: skip
    for name, value in fatbin_only.items():  # each of them alone
        with pytest.raises(ValueError) as info:
            Program(KERNEL_SRC, "c++", ProgramOptions(arch="sm_80")).compile("cubin", **{name: value})
        assert (
            str(info.value)
            == "archs, ptx_for, ltoir_for, fatbin_options, group and min_driver apply to 'fatbin', not 'cubin'"
        )
    # the fatbin cache's own settings would be ignored by upstream's single-target cache=: refused, each alone
    # and together, with or without cache= (they used to be dropped without a word)
    from cuda.core.utils import InMemoryProgramCache

    knobs = {"cache_extra_digest": b"x", "cache_exclude": ["build"], "cache_max_files": 5}
    for name, value in knobs.items():
        for cache in (None, InMemoryProgramCache()):
            with pytest.raises(ValueError) as info:
                Program(KERNEL_SRC, "c++", ProgramOptions(arch="sm_80")).compile("cubin", cache=cache, **{name: value})
            assert str(info.value) == (
                f"{name} applies to 'fatbin' (its per-job cache), not 'cubin': a single target's cache= is "
                "cuda.core's, which keys the compile itself"
            )
    with pytest.raises(ValueError) as info:
        Program(KERNEL_SRC, "c++", ProgramOptions(arch="sm_80")).compile("ptx", **knobs)
    assert str(info.value).startswith("cache_extra_digest and cache_exclude and cache_max_files apply to 'fatbin' ")
    with pytest.raises(ValueError) as info:
        Program(KERNEL_SRC, "c++", ProgramOptions(link_time_optimization=True)).compile("fatbin", archs=["sm_90"])
    assert str(info.value) == "ProgramOptions.link_time_optimization applies to 'ltoir'; for fatbins use ltoir_for="


def test_options_reach_every_job():
    opts = ProgramOptions(name="mykernels", define_macro=("TAG", "7"), max_register_count=32, std="c++17")
    obj = Program(KERNEL_SRC, "c++", opts).compile("fatbin", archs="arch=compute_80,code=[sm_80,sm_86]")
    obj_plain = plain(obj)
    assert obj_plain.name == "mykernels"
    fb = read_fatbin(bytes(obj.code))
    assert {e.identifier for e in fb.entries} == {"mykernels"}
    assert [(e.kind, str(e.arch)) for e in fb.entries] == [("elf", "sm_80"), ("elf", "sm_86")]  # gencode: no PTX


def test_fatbin_options_are_applied():
    obj = Program(KERNEL_SRC, "c++").compile(
        "fatbin", archs=["sm_80"], fatbin_options=FatbinOptions(compress_all=True, compress_mode="speed")
    )
    obj_plain = plain(obj)
    assert {e.compression for e in read_fatbin(obj_plain.code).entries} == {"lz4"}
    assert obj_plain.name == "default_program"  # ProgramOptions.name's default, as cuda.core names its programs
    unnamed = Program(KERNEL_SRC, "c++", ProgramOptions(name="")).compile("fatbin", archs=["sm_80"], ptx_for=())
    unnamed_plain = plain(unnamed)
    assert unnamed_plain.name == ""  # as ObjectCode.from_fatbin(data).name


def test_a_single_target_compile_passes_names_and_logs_on():
    """Name expressions and the log sink reach cuda.core's compile, on both of its paths: the program's own
    (arch given), and a fresh upstream program (with cuda.core's cache=, which refuses include folders)."""
    from cuda_fatbin._program import _upstream_compile_keywords

    src = KERNEL_SRC + '\nextern "C" __global__ void warns() { int never_used_here; }\n'
    logs = io.StringIO()
    obj = Program(src, "c++", ProgramOptions(arch="sm_90")).compile("cubin", ["scale<float>"], logs)
    got = (obj.code_type, dict(obj.symbol_mapping))  # plain values (an ObjectCode's repr needs a driver)
    del obj
    assert got == ("cubin", {"scale<float>": b"_Z5scaleIfEvPT_S0_i"})
    assert "never_used_here" in logs.getvalue()  # NVRTC's warning: declared but never referenced
    if "cache" not in (_upstream_compile_keywords() or ()):
        pytest.skip("this cuda.core's Program.compile has no cache= (the names and logs above were checked)")
    from cuda.core.utils import InMemoryProgramCache

    logs = io.StringIO()
    obj = Program(src, "c++", ProgramOptions(arch="sm_90")).compile("cubin", (), logs, cache=InMemoryProgramCache())
    got = obj.code_type
    del obj
    assert got == "cubin" and "never_used_here" in logs.getvalue()
    # cuda.core refuses name expressions with its cache (they would not survive a hit): they reached it
    with pytest.raises(ValueError, match="does not support name_expressions"):
        program = Program(src, "c++", ProgramOptions(arch="sm_90"))
        program.compile("cubin", ["scale<float>"], cache=InMemoryProgramCache())


@pytest.mark.parametrize("cuda_headers", [True, False])
@pytest.mark.parametrize("as_path", [True, False])
def test_a_lone_folder_or_header_reaches_the_compiler_as_str_or_path(tmp_path, cuda_headers, as_path):
    """include_path and pre_include as one str or one pathlib.Path, with or without the CUDA header folders.
    cuda.core's as_bytes writes nothing for a lone Path (cuda-core 1.2.2: ProgramOptions(include_path=Path("d"))
    .as_bytes("nvrtc") has no --include-path): the header was not found, or the pre-include silently left out."""
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "val.h").write_text("#define VAL 7\n")
    (tmp_path / "pre.h").write_text("#define PRE 30\n")
    src = '#include "val.h"\nextern "C" __global__ void k(int* p) { p[0] = VAL + PRE; }\n'
    wrap = Path if as_path else str
    fields = {"include_path": wrap(tmp_path / "inc"), "pre_include": wrap(tmp_path / "pre.h")}
    ptx = Program(src, "c++", ProgramOptions(arch="sm_80", **fields), cuda_headers=cuda_headers).compile("ptx")
    text = bytes(ptx.code)
    del ptx
    assert b", 37;" in text  # 7 from the folder, 30 from the pre-include
    obj = Program(src, "c++", ProgramOptions(**fields), cuda_headers=cuda_headers).compile("fatbin", archs=["sm_80"])
    ptx_entry = [e for e in read_fatbin(bytes(obj.code)).entries if e.kind == "ptx"]
    del obj
    assert b", 37;" in ptx_entry[0].data()


class _PathLike:
    """An os.PathLike that is not a pathlib.Path: cuda.core writes its repr (cuda-core 1.2.2)."""

    def __init__(self, path):
        self.path = str(path)

    def __fspath__(self):
        return self.path


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # cuda.core's __dealloc__
def test_any_path_like_reaches_the_compiler_and_a_cached_single_target_refuses_a_lone_one(tmp_path):
    """Every os.PathLike, alone or in a list, is given to the compiler as its str; cuda.core's single-target
    cache= (which reads the options as given) refuses a pre-include given as a lone Path as it refuses one given
    as a str: it compiled without it, and cached that."""
    from cuda.core.utils import InMemoryProgramCache

    from cuda_fatbin._program import _upstream_compile_keywords

    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "val.h").write_text("#define VAL 7\n")
    (tmp_path / "pre.h").write_text("#define PRE 30\n")
    src = '#include "val.h"\nextern "C" __global__ void k(int* p) { p[0] = VAL + PRE; }\n'
    for inc, pre in ((_PathLike(tmp_path / "inc"), _PathLike(tmp_path / "pre.h")),
                     ([_PathLike(tmp_path / "inc")], (_PathLike(tmp_path / "pre.h"),))):  # fmt: skip
        options = ProgramOptions(arch="sm_80", include_path=inc, pre_include=pre)
        ptx = Program(src, "c++", options, cuda_headers=False).compile("ptx")
        text = bytes(ptx.code)
        del ptx
        assert b", 37;" in text
    if "cache" not in (_upstream_compile_keywords() or ()):
        pytest.skip("this cuda.core's Program.compile has no cache= (the path-likes above were checked)")
    messages = []
    for pre in (str(tmp_path / "pre.h"), tmp_path / "pre.h", _PathLike(tmp_path / "pre.h")):
        program = Program(src, "c++", ProgramOptions(arch="sm_80", include_path=str(tmp_path / "inc"), pre_include=pre))
        with pytest.raises(ValueError) as info:
            program.compile("cubin", cache=InMemoryProgramCache())
        messages.append(str(info.value))
    del info, program  # upstream's program goes here, under the mark above
    gc.collect()
    assert len(set(messages)) == 1 and "pre_include" in messages[0], messages


def test_path_likes_are_made_str_before_the_folders_are_appended(tmp_path):
    """_with_include_dirs on options as given (Program calls it on options it made str already): a lone path-like
    is a one-item list of its str, other items stay as given, and the folders go after the user's."""
    from cuda_fatbin._program import _with_include_dirs

    given = ProgramOptions(include_path=tmp_path, pre_include=[None, _PathLike(tmp_path / "p.h")])
    got = _with_include_dirs(given, ["/cuda/include"])
    assert (got.include_path, got.pre_include) == ([str(tmp_path), "/cuda/include"], [None, str(tmp_path / "p.h")])
    assert (given.include_path, given.pre_include[0]) == (tmp_path, None)  # a new object: the given one unchanged


def test_include_folders_are_told_apart_by_where_they_are_not_how_they_are_spelled():
    """A CUDA header folder the user already names, with a trailing slash or relative to the working folder, is
    not added again; values that are no path at all are left for cuda.core to judge, as before."""
    import os

    dirs = [d.path for d in cuda_header_dirs()]
    if not dirs:
        pytest.skip("no CUDA headers installed (pip install cuda-toolkit[cudart,cccl])")
    for spelled in (dirs[0] + "/", os.path.relpath(dirs[0])):
        effective = Program(KERNEL_SRC, "c++", ProgramOptions(include_path=[spelled]))._fb_effective.include_path
        assert effective == [spelled, *dirs[1:]]
    for odd in ([None], b"/nowhere"):  # no error of ours: the value goes on as given
        Program(KERNEL_SRC, "c++", ProgramOptions(include_path=odd), cuda_headers=False)
        assert Program(KERNEL_SRC, "c++", ProgramOptions(include_path=odd))._fb_effective.include_path == [
            *([odd] if isinstance(odd, bytes) else odd),
            *dirs,
        ]


def test_a_ptx_source_is_told_by_its_directives_and_c_plus_plus_never_is():
    """Program(ptx) links at construction (cuda.core): PTX without .target gets ptxas's own complaint, not one
    about an arch it never named; C++ whose text holds PTX-like lines (here skipped by the preprocessor) is not
    read as PTX."""
    with pytest.raises(Exception, match="Missing .target directive"):
        Program(".version 8.0\n.address_size 64\n", "ptx")
    src = '#if 0\n.version 8.0\n.target banana\n#endif\nextern "C" __global__ void k(int* p) { p[0] = 1; }\n'
    obj = Program(src, "c++").compile("fatbin", archs=["sm_80"], ptx_for=())
    kinds = [(e.kind, str(e.arch)) for e in read_fatbin(bytes(obj.code)).entries]
    del obj
    assert kinds == [("elf", "sm_80")]


def test_single_arch_targets_behave_like_cuda_core():
    from cuda.core import Program as CoreProgram
    from cuda.core import ProgramOptions as CoreOptions

    ours = Program(KERNEL_SRC, "c++", ProgramOptions(arch="sm_90")).compile("cubin", ["scale<float>"])
    theirs = CoreProgram(KERNEL_SRC, "c++", CoreOptions(arch="sm_90")).compile("cubin", ["scale<float>"])
    # plain values only in the asserts: a failing assert shows its operands, and an ObjectCode's repr needs the
    # driver (without one it can wait for ever: docs/known-issues.md)
    got = (bytes(ours.code), ours.code_type, dict(ours.symbol_mapping))
    want = (bytes(theirs.code), "cubin", dict(theirs.symbol_mapping))
    del ours, theirs
    assert got == want
    lto = Program(KERNEL_SRC, "c++", ProgramOptions(arch="sm_90", link_time_optimization=True)).compile("ltoir")
    magic = bytes(lto.code)[:4]
    del lto
    assert magic == b"\xed\x43\x4e\x7f"


def skip_if_gpu() -> None:
    """These tests show the errors of a machine without a GPU (asked without touching cuda.core)."""
    from cuda_fatbin._driver import driver_available

    if driver_available():
        pytest.skip("a GPU is present")


def test_no_arch_single_target_needs_a_gpu_and_says_so():
    program = Program(KERNEL_SRC, "c++")  # constructing needs no driver
    assert program.options.arch is None
    skip_if_gpu()
    for _ in range(2):  # the second attempt must fail as fast as the first (cuda.core's would hang)
        with pytest.raises(NoDriverError, match="without ProgramOptions.arch needs a GPU.*ProgramOptions.arch='sm_XX'"):
            program.compile("cubin")


def test_ptx_source(artifacts):
    ptx = artifacts[("ptx", "sm_80")].rstrip(b"\0").decode()
    program = Program(ptx, "ptx")
    assert [str(j) for j in program.plan(["sm_80", "sm_90"]).jobs] == [
        "PTX source compute_80 -> nvJitLink sm_80, sm_90", "PTX source compute_80 -> ptx"
    ]  # fmt: skip
    obj = program.compile("fatbin", archs=["sm_80", "sm_90"])
    obj_plain = plain(obj)
    assert entry_set(obj_plain.code) == {("elf", "sm_80"), ("elf", "sm_90"), ("ptx", "sm_80")}
    with pytest.raises(ValueError, match="cannot be assembled for sm_75"):
        program.plan(["sm_75"])
    with pytest.raises(ValueError, match="cannot be embedded as PTX for sm_90"):
        program.plan(["sm_80", "sm_90"], ptx_for=["sm_90"])
    with pytest.raises(ValueError, match="name_expressions need C"):
        program.compile("fatbin", ["x"], archs=["sm_80"])


def test_nvvm_source():
    obj = Program(NVVM_IR, "nvvm").compile("fatbin", archs=["sm_80", "sm_90"], ltoir_for=["sm_90"])
    obj_plain = plain(obj)
    assert entry_set(obj_plain.code) == {("elf", "sm_80"), ("elf", "sm_90"), ("ptx", "sm_90"), ("ltoir", "sm_90")}


def test_all_major_resolves_against_nvrtc():
    plan = plan_fatbin("all-major")
    sms = nvrtc_supported_sms()
    assert {a.sm for k, a in plan.entries if k == "cubin"} == {s for s in sms if s % 10 == 0} | {min(sms)}
    assert [a for k, a in plan.entries if k == "ptx"] == [Arch(max(sms) // 10, 0)]


def test_native_without_a_gpu_is_a_clear_error():
    skip_if_gpu()
    for _ in range(2):
        with pytest.raises(NoDriverError, match="'native' in an arch spec needs a GPU"):
            parse_archs("native")


def test_compiling_leaves_the_interned_one_byte_objects_alone():
    """NVRTC writes a 1-byte empty log; into CPython's shared b" " if the buffer is made as b" " * size."""
    code = (
        "from cuda_fatbin import Program\n"
        "Program('extern \"C\" __global__ void k(float* p){ p[0] = 1; }', 'c++').compile('fatbin', archs=['sm_80'])\n"
        "print('a', 'b'); assert b' ' == bytes([32]), b' '\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout == b"a b\n"


def test_api_speaks_the_cli_vocabulary(artifacts):
    program = Program(KERNEL_SRC, "c++")
    obj = program.compile("fatbin", "scale<float>", archs=["sm_80"], ptx_for="none")  # one name, not characters
    obj_plain = plain(obj)
    assert list(obj_plain.symbol_mapping) == ["scale<float>"]
    assert [(e.kind, str(e.arch)) for e in read_fatbin(obj_plain.code).entries] == [("elf", "sm_80")]
    plan = program.plan(["sm_80", "sm_90"], ptx_for="None")
    assert sorted((k, str(a)) for k, a in plan.entries) == [("cubin", "sm_80"), ("cubin", "sm_90")]
    with pytest.raises(TypeError, match="must be strings"):
        program.compile("fatbin", [1], archs=["sm_80"])
    from cuda_fatbin import Part, build_fatbin

    fb = read_fatbin(build_fatbin([Part(artifacts[("cubin", "sm_80")], kind="elf")]))
    assert fb.entries[0].kind == "elf"


def test_min_driver_stops_a_build_an_old_driver_could_not_load():
    """PTX from the installed NVRTC (ISA 9.5 for 13.5) with no SASS for some arch, against an older min_driver."""
    from cuda_fatbin import DriverCompatibilityError
    from cuda_fatbin._select import ptx_isa_needs

    ptx = Program(KERNEL_SRC, "c++").compile("fatbin", archs=["compute_90"])
    isa = read_fatbin(bytes(ptx.code)).entries[0].version
    need = ptx_isa_needs(isa)
    older = f"{need[0]}.{need[1] - 1}" if need[1] else f"{need[0] - 1}.9"
    with pytest.raises(DriverCompatibilityError, match=r"compute capability 9\.0 would load PTX compute_90") as info:
        Program(KERNEL_SRC, "c++").compile("fatbin", archs=["sm_80", "compute_90"], min_driver=older)
    assert "add SASS for sm_90" in str(info.value) and [str(g) for g, _ in info.value.gaps] == ["sm_90"]
    with pytest.warns(UserWarning, match="9.0 would load PTX"):
        Program(KERNEL_SRC, "c++").compile("fatbin", archs=["sm_80", "compute_90"], min_driver=older,
                                           min_driver_action="warn")  # fmt: skip
    Program(KERNEL_SRC, "c++").compile("fatbin", archs=["sm_80", "sm_90"], ptx_for=(), min_driver=older)
    with pytest.raises(DriverCompatibilityError, match="zstd.*LZ4"):
        Program(KERNEL_SRC, "c++").compile("fatbin", archs=["sm_80"], ptx_for=(), min_driver="12.0",
                                           fatbin_options=FatbinOptions(compress_all=True))  # fmt: skip
    with pytest.raises(ValueError, match="not a driver"):
        Program(KERNEL_SRC, "c++").compile("fatbin", archs=["sm_80"], min_driver="soon")


def test_bundle_records_min_driver_and_refuses_older_drivers(tmp_path):
    from cuda_fatbin import BundleCoverageError, KernelBundle, KernelSuite

    bundle = KernelBundle.build(tmp_path / "b", {"k": KernelSuite(KERNEL_SRC)}, archs=["sm_80", "sm_90"], ptx_for=(),
                                min_driver="12.8")  # fmt: skip
    assert bundle.manifest["suites"]["k"]["min_driver"] == "12.8"
    assert KernelBundle.open(tmp_path / "b").check("k", gpu="9.0", driver="12.8")
    with pytest.raises(BundleCoverageError, match="built for CUDA 12.8\\+ drivers; this driver is CUDA 12.4"):
        KernelBundle.open(tmp_path / "b").check("k", gpu="9.0", driver="12.4")


def test_split_compile_is_opt_in_bytes_stable_and_never_oversubscribes(monkeypatch):
    """split_compile changes the SASS, so it is the user's choice; the bytes then do not depend on the workers,
    and the pool shrinks so that threads per job x concurrent jobs stays within max_workers."""
    import cuda_fatbin._multiarch as multiarch

    sizes = []
    real = multiarch.cf.ThreadPoolExecutor

    class Recording(real):
        def __init__(self, max_workers=None, **kw):
            sizes.append(max_workers)
            super().__init__(max_workers=max_workers, **kw)

    monkeypatch.setattr(multiarch.cf, "ThreadPoolExecutor", Recording)
    archs = ["sm_80", "sm_86", "sm_90", "sm_100"]
    split = ProgramOptions(split_compile=2)
    a = Program(KERNEL_SRC, "c++", split).compile("fatbin", archs=archs, ptx_for=(), max_workers=4)
    b = Program(KERNEL_SRC, "c++", split).compile("fatbin", archs=archs, ptx_for=(), max_workers=1)
    unsplit = Program(KERNEL_SRC, "c++").compile("fatbin", archs=archs, ptx_for=(), max_workers=4)
    a_plain = plain(a)
    b_plain = plain(b)
    assert a_plain.code == b_plain.code
    assert sizes == [2, 1, 4]  # 4 cores / 2 threads a job; at least one; no split: one a core
    unsplit_plain = plain(unsplit)
    assert read_fatbin(a_plain.code).entries[0].data() != read_fatbin(unsplit_plain.code).entries[0].data()


def test_nvvm_text_source_and_its_errors():
    logs = io.StringIO()
    obj = Program(NVVM_IR.decode(), "nvvm").compile("fatbin", archs=["sm_80"], ptx_for="none", logs=logs)
    obj_plain = plain(obj)
    assert entry_set(obj_plain.code) == {("elf", "sm_80")}
    assert logs.getvalue() == ""  # libNVVM and nvJitLink said nothing
    with pytest.raises(FatbinCompileError) as info:
        Program(b"this is not IR", "nvvm").compile("fatbin", archs=["sm_80"], ptx_for="none")
    assert str(info.value) == (
        "1 compile job(s) failed:\n--- NVVM compute_80 -> ptx -> nvJitLink sm_80 ---\n"
        "nvvmCompileProgram failed: ERROR_COMPILATION (9)\ndefault_program (1, 0): parse expected top-level entity"
    )


def test_front_end_and_linker_errors_carry_the_whole_log():
    from cuda_fatbin._multiarch import _JobFailed, _nvjitlink, _nvvm

    with pytest.raises(_JobFailed) as info:
        _nvvm("this is not IR", "m.ll", [b"-arch=compute_80"], "ptx")
    assert (info.value.message, info.value.log) == (
        "nvvmCompileProgram failed: ERROR_COMPILATION (9)", "m.ll (1, 0): parse expected top-level entity"
    )  # fmt: skip
    bad = b".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { bogus_instruction; }\n"
    for options in ([b"-arch=sm_80"], ["-arch=sm_80"]):
        with pytest.raises(_JobFailed) as info:
            _nvjitlink(bad, options)
        assert info.value.message == "nvJitLink failed: ERROR_PTX_COMPILE (4)"
        assert info.value.log == (
            "ptxas application ptx input, line 4; error   : Not a name of any known instruction: 'bogus_instruction'\n"
            "ptxas fatal   : Ptx assembly aborted due to errors\nERROR NVJITLINK_ERROR_PTX_COMPILE: JIT the PTX (ptx)\n"
        )
    good = bad.replace(b"bogus_instruction", b"ret")
    for options in ([b"-arch=sm_80", b"-verbose"], ["-arch=sm_80", "-verbose"]):
        cubin, info_log = _nvjitlink(good, options)
        # nvJitLink 13.0 says "info    : 0 bytes gmem", 13.5 "ptxas info    : 0 bytes gmem"
        assert cubin[:4] == b"\x7fELF" and "info    : 0 bytes gmem\n" in info_log
        assert not info_log.endswith("\0") and not info_log.startswith("\0")


def test_job_failures_survive_pickling():
    """Process pools send a job's exception back pickled: the message and the log must arrive."""
    import pickle

    from cuda_fatbin._multiarch import _JobFailed

    e = pickle.loads(pickle.dumps(_JobFailed("nvrtcCompileProgram failed", "k.cu(1): error")))
    assert (e.message, e.log, e.args) == ("nvrtcCompileProgram failed", "k.cu(1): error", (
        "nvrtcCompileProgram failed", "k.cu(1): error"))  # fmt: skip


def test_compile_errors_survive_pickling_with_their_hint():
    """dask and process pools send FatbinCompileError back pickled: failures, hint and text must arrive."""
    import pickle

    e = FatbinCompileError([("NVRTC sm_80 -> cubin", "k.cu(1): error")], hint="pip install x")
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is FatbinCompileError
    assert (back.failures, back.hint, str(back)) == (e.failures, "pip install x", str(e))
    assert str(back).endswith("\npip install x")


def _sleep_then(seconds: float) -> float:
    import time

    time.sleep(seconds)
    return seconds


def test_kill_workers_kills_running_compiles_and_returns_at_once():
    """Ctrl-C stops a process pool's running compiles (docs/cli.md): its workers are killed, not waited for."""
    import concurrent.futures as cf
    import multiprocessing
    import time

    from cuda_fatbin._jobs import kill_workers

    pool = cf.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"))
    running = [pool.submit(_sleep_then, 60) for _ in range(2)]
    queued = pool.submit(_sleep_then, 60)
    while len(pool._processes or {}) < 2:
        time.sleep(0.05)
    t0 = time.monotonic()
    kill_workers(pool)
    # a killed worker breaks the pool: its jobs end now, with an error, not after their 60 s
    # (is_alive() is no witness: the pool's own thread reaps the workers, racing a join here). The queued
    # job is either cancelled by the pool's shutdown (CANCELLED: done(), though cf.wait never counts it,
    # since nothing notifies its waiters) or broken with the others, as the pool's thread finds it.
    jobs = [*running, queued]
    while not all(f.done() for f in jobs) and time.monotonic() - t0 < 30:
        time.sleep(0.05)
    assert all(f.done() for f in jobs), [f._state for f in jobs]
    assert all(f.cancelled() or isinstance(f.exception(), Exception) for f in jobs)
    pool.shutdown(wait=True)


def test_compile_error_text_lists_each_job_and_its_log():
    e = FatbinCompileError([("NVRTC sm_80 -> cubin", "error one\n"), ("NVRTC sm_90 -> cubin", "  error two  ")])
    assert str(e) == (
        "2 compile job(s) failed:\n--- NVRTC sm_80 -> cubin ---\nerror one\n--- NVRTC sm_90 -> cubin ---\nerror two"
    )
    assert e.failures[1] == ("NVRTC sm_90 -> cubin", "  error two  ")


def test_plans_print_one_line_per_job():
    spec = "-gencode arch=compute_80,code=[sm_80,sm_86] -gencode arch=compute_90,code=[sm_90,compute_90]"
    assert str(plan_fatbin(spec)) == (
        "4 job(s), 4 entries:\n"
        "  [0] NVRTC sm_80 -> cubin   => cubin sm_80\n"
        "  [1] NVRTC sm_90 -> cubin   => cubin sm_90\n"
        "  [2] NVRTC compute_80 -> ptx -> nvJitLink sm_86   => cubin sm_86\n"
        "  [3] NVRTC compute_90 -> ptx   => ptx sm_90"
    )
    grouped = plan_fatbin(["sm_80", "sm_86"], ptx_for="none", group=True)
    assert (
        str(grouped)
        == "1 job(s), 2 entries:\n  [0] NVRTC compute_80 -> ptx -> nvJitLink sm_80, sm_86   => cubin sm_80, cubin sm_86"
    )


def test_ptx_source_plans():
    nine = Arch(9, 0)
    only_ptx = plan_fatbin("compute_90", code_type="ptx", ptx_source_target=nine)
    assert [str(j) for j in only_ptx.jobs] == ["PTX source compute_90 -> ptx"]  # no link job without SASS
    linked = plan_fatbin("sm_90;sm_100", code_type="ptx", ptx_source_target=nine)
    assert str(linked) == (
        "2 job(s), 3 entries:\n"
        "  [0] PTX source compute_90 -> nvJitLink sm_90, sm_100   => cubin sm_90, cubin sm_100\n"
        "  [1] PTX source compute_90 -> ptx   => ptx sm_90"
    )
    with pytest.raises(ValueError) as info:
        plan_fatbin("sm_90", code_type="ptx", ptx_source_target=None)
    assert str(info.value) == "PTX source without a .target directive; cannot plan"
    with pytest.raises(ValueError) as info:
        plan_fatbin("sm_90;lto_90", code_type="ptx", ptx_source_target=nine)
    assert str(info.value) == "PTX source cannot give LTO-IR entries; drop ltoir_for / lto_ archs"


@pytest.mark.parametrize(
    "call, what",
    [
        ("nvrtcCreateProgram", "nvrtcCreateProgram"),
        ("nvrtcAddNameExpression", "nvrtcAddNameExpression('scale<float>')"),
        ("nvrtcGetProgramLogSize", "nvrtcGetProgramLogSize"),
        ("nvrtcGetProgramLog", "nvrtcGetProgramLog"),
        ("nvrtcGetCUBINSize", "get cubin size"),
        ("nvrtcGetCUBIN", "get cubin"),
        ("nvrtcGetLoweredName", "nvrtcGetLoweredName('scale<float>')"),
    ],
)
def test_each_nvrtc_call_that_fails_is_named(monkeypatch, call, what):
    from cuda.bindings import nvrtc

    from cuda_fatbin._multiarch import _JobFailed, _nvrtc

    error = nvrtc.nvrtcResult.NVRTC_ERROR_INTERNAL_ERROR
    monkeypatch.setattr(nvrtc, call, lambda *args: (error, None))
    destroyed = []
    real_destroy = nvrtc.nvrtcDestroyProgram
    monkeypatch.setattr(nvrtc, "nvrtcDestroyProgram", lambda prog: destroyed.append(int(prog)) or real_destroy(prog))
    with pytest.raises(_JobFailed) as info:
        _nvrtc(KERNEL_SRC, "k.cu", [b"-arch=sm_80"], "cubin", ["scale<float>"])
    assert (info.value.message, info.value.log) == (f"{what} failed: NVRTC_ERROR_INTERNAL_ERROR", "")
    assert len(destroyed) == (0 if call == "nvrtcCreateProgram" else 1)  # the program is destroyed whatever fails
    if destroyed:
        assert destroyed[0] != 0  # the program made, not None


def test_nvrtc_logs_keep_their_text_and_lose_the_terminator():
    from cuda_fatbin._multiarch import _JobFailed, _nvrtc

    out, mapping, log = _nvrtc(KERNEL_SRC + "\n__global__ void w() { int unused = 1; }\n", "k.cu", [b"-arch=sm_80"],
                               "ptx", ["scale<float>"])  # fmt: skip
    assert out.startswith(b"//") and mapping == {"scale<float>": b"_Z5scaleIfEvPT_S0_i"}
    assert "unused" in log and not log.endswith("\0")
    with pytest.raises(_JobFailed) as info:
        _nvrtc(b"this is \xff\xfe not C++\n", "k.cu", [b"-arch=sm_80"], "cubin", [])  # bytes that are not UTF-8
    assert info.value.message == "nvrtcCompileProgram failed: NVRTC_ERROR_COMPILATION"
    # NVRTC echoes the line without its non-ASCII bytes: compiler logs are ASCII
    assert info.value.log.startswith("k.cu(1): error: expected a declaration\n  this is \n")


@pytest.mark.parametrize(
    "archs, supported, missing",
    [(["sm_80"], (75,), "sm_80"), ("compute_90", (80,), "sm_90"), ("sm_80;lto_90", (80,), "sm_90"),
     ("arch=compute_75,code=sm_80", (80,), "sm_75"), (["sm_80", "sm_90"], (75, 80), "sm_90")],
)  # fmt: skip
def test_every_arch_a_plan_compiles_for_must_be_supported(archs, supported, missing):
    with pytest.raises(ValueError) as info:
        plan_fatbin(archs, supported=supported)
    listed = ", ".join(f"sm_{s}" for s in supported)
    assert str(info.value) == f"{missing} is not supported by the installed compiler; supported: {listed}"


def test_plan_options_by_name():
    for none in ("", "none", " None "):
        assert [k for k, _a in plan_fatbin(["sm_80"], ptx_for=none).entries] == ["cubin"]
    with pytest.raises(ValueError) as info:
        plan_fatbin(["sm_80"], code_type="cuda")
    assert str(info.value) == "code_type must be 'c++', 'ptx' or 'nvvm' for a fatbin; got 'cuda'"
    assert plan_fatbin(["sm_80"]) == plan_fatbin(["sm_80"], code_type="c++")


def test_ptx_sources_as_text_or_bytes_and_their_logs():
    from cuda_fatbin._multiarch import run_job

    ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { ret; }\n"
    logs = io.StringIO()
    obj = Program(ptx, "ptx").compile("fatbin", archs=["sm_80", "sm_86"], logs=logs)
    obj_plain = plain(obj)
    assert entry_set(obj_plain.code) == {("elf", "sm_80"), ("elf", "sm_86"), ("ptx", "sm_80")}
    assert logs.getvalue() == ""  # nvJitLink said nothing
    plan = plan_fatbin(["sm_80", "sm_86"], code_type="ptx", ptx_source_target=Arch(8, 0))
    link = {a: (f"-arch={a}".encode(),) for a in (Arch(8, 0), Arch(8, 6))}
    for source in (ptx, ptx.encode()):  # a job takes either
        results = [run_job(job, source, "k", (), link, ()) for job in plan.jobs]
        assert [r.log for r in results] == ["", ""]
        assert [(k, str(a)) for r in results for k, a, _ in r.artifacts] == [
            ("cubin", "sm_80"), ("cubin", "sm_86"), ("ptx", "sm_80")
        ]  # fmt: skip
        assert results[1].artifacts[0][2] == ptx.encode()  # PTX entries are the source itself


def test_grouped_jobs_keep_the_front_end_log_and_blocks_end_cleanly():
    logs = io.StringIO()
    src = KERNEL_SRC + "\n__global__ void warn() { int unused = 1; }\n"
    Program(src, "c++").compile("fatbin", logs=logs, archs=["sm_80", "sm_86"], ptx_for="none", group=True)
    text = logs.getvalue()
    assert text.startswith("[NVRTC compute_80 -> ptx -> nvJitLink sm_80, sm_86]\n") and "unused" in text
    assert text.endswith("\n") and not text.endswith("\n\n")  # each log block ends with one newline


def test_nvvm_options_as_text_or_bytes():
    from cuda_fatbin._multiarch import _nvvm

    for source, options in ((NVVM_IR, [b"-arch=compute_80"]), (NVVM_IR.decode(), ["-arch=compute_80"])):
        out, log = _nvvm(source, "m.ll", options, "ptx")
        assert b".target sm_80" in out and log == ""


def test_min_driver_messages_name_each_gap_and_every_fix(recwarn):
    """The whole message, for PTX newer than the driver, zstd before CUDA 12.4 and concatenation before 13.4
    (needed_driver; the zstd and concat limits are libnvfatbin's, docs/formats.md)."""
    from cuda_fatbin import DriverCompatibilityError
    from cuda_fatbin._fatbin import nvfatbin_version
    from cuda_fatbin._select import ptx_isa_needs

    def refusal(min_driver: str, **kw: object) -> str:
        with pytest.raises(DriverCompatibilityError) as info:
            Program(KERNEL_SRC, "c++").compile("fatbin", min_driver=min_driver, **kw)
        return str(info.value)

    built = read_fatbin(bytes(Program(KERNEL_SRC, "c++").compile("fatbin", archs=["sm_80", "compute_90"]).code))
    ptx = next(e for e in built.entries if e.kind == "ptx")
    need = ptx_isa_needs(ptx.version)
    older = f"{need[0]}.{need[1] - 1}" if need[1] else f"{need[0] - 1}.9"
    assert refusal(older, archs=["sm_80", "compute_90"]) == (
        f"min_driver is CUDA {older}, but compute capability 9.0 would load PTX compute_90 (ISA "
        f"{ptx.version[0]}.{ptx.version[1]}), {ptx.compression}, which needs a CUDA {need[0]}.{need[1]} driver; fix: "
        f"add SASS for sm_90 (archs=[..., 'sm_90']); or compile with an NVRTC no newer than the driver (pip install "
        f"'nvidia-cuda-nvrtc=={older}.*') (or raise min_driver)"
    )
    zstd = FatbinOptions(compress_all=True)
    assert refusal("12.0", archs=["sm_80"], ptx_for=(), fatbin_options=zstd) == (
        "min_driver is CUDA 12.0, but compute capability 8.0 would load SASS sm_80, zstd, which needs a CUDA 12.4 "
        "driver; fix: compress with LZ4 (FatbinOptions(compress_mode='speed')) or not at all (compress=False) "
        "(or raise min_driver)"
    )
    Program(KERNEL_SRC, "c++").compile("fatbin", archs=["sm_80"], ptx_for=(), fatbin_options=zstd, min_driver="12.4")
    # each GPU that cannot load its entry has its line, joined by " | "
    both = refusal("12.0", archs=["sm_80", "sm_90"], ptx_for=(), fatbin_options=zstd)
    assert both.count(" | ") == 1 and " driver; fix: compress with LZ4 " in both.split(" | ")[0]
    second = both.split(" | ")[1]
    assert second.startswith("compute capability 9.0 would load SASS sm_90, zstd, which needs a CUDA 12.4")
    # at CUDA 12.4 itself zstd is no gap: a PTX entry too new for it is refused without the zstd fix
    at = refusal("12.4", archs=["sm_80", "compute_90"], fatbin_options=zstd)
    assert "compute capability 9.0 would load PTX compute_90" in at and "compress with LZ4" not in at
    with pytest.warns(UserWarning) as caught:
        Program(KERNEL_SRC, "c++").compile("fatbin", archs=["sm_80"], ptx_for=(), fatbin_options=zstd,
                                           min_driver="12.0", min_driver_action="warn")  # fmt: skip
    [w] = caught
    assert w.filename == __file__  # the caller's line
    assert str(w.message).startswith("min_driver is CUDA 12.0, but ")
    if nvfatbin_version() < (13, 4):
        return  # no -concat before libnvfatbin 13.4: the rest needs it
    concat = FatbinOptions(concat=True)
    made = Program(KERNEL_SRC, "c++").compile("fatbin", archs=["sm_80"], ptx_for=(), fatbin_options=concat)
    compression = read_fatbin(bytes(made.code)).entries[0].compression  # the concatenated entry's
    assert refusal("13.0", archs=["sm_80"], ptx_for=(), fatbin_options=concat) == (
        f"min_driver is CUDA 13.0, but compute capability 8.0 would load SASS sm_80, {compression}, concatenated, "
        "which needs a CUDA 13.4 driver; fix: drop FatbinOptions(concat=True) (or raise min_driver)"
    )


def test_nvvm_ir_to_ptx_alone_and_its_errors():
    """compile("ptx") of NVVM IR runs libNVVM here, as "fatbin" does: no driver asked, the same error words."""
    obj = Program(NVVM_IR, "nvvm", ProgramOptions(arch="compute_90")).compile("ptx")
    text = bytes(obj.code).decode()
    obj_plain = plain(obj)
    assert obj_plain.code_type == "ptx" and ".target sm_90" in text and ".entry" in text
    logs = io.StringIO()
    Program(NVVM_IR.decode(), "nvvm", ProgramOptions(arch="compute_80")).compile("ptx", logs=logs)
    assert logs.getvalue() == ""  # libNVVM said nothing: nothing written
    with pytest.raises(FatbinCompileError) as info:
        Program(b"this is not IR", "nvvm", ProgramOptions(arch="compute_80", name="mine")).compile("ptx")
    assert str(info.value) == (
        "1 compile job(s) failed:\n--- NVVM compute_80 -> ptx ---\n"
        "nvvmCompileProgram failed: ERROR_COMPILATION (9)\nmine (1, 0): parse expected top-level entity"
    )


def test_cpp_to_ptx_alone_writes_nvrtcs_warnings_and_hints_a_missing_header():
    logs = io.StringIO()
    src = "__global__ void k(int* p) { int unused; p[0] = 1; }"
    Program(src, "c++", ProgramOptions(arch="compute_80")).compile("ptx", logs=logs)
    assert "unused" in logs.getvalue()  # NVRTC's warning reaches the log
    with pytest.raises(FatbinCompileError) as info:
        Program('#include "not_here.h"\n', "c++", ProgramOptions(arch="compute_80")).compile("ptx")
    assert str(info.value).startswith("1 compile job(s) failed:\n--- NVRTC compute_80 -> ptx ---\n")
    assert "not_here.h" in str(info.value) and info.value.hint == ""  # not a CUDA header: no hint
    with pytest.raises(FatbinCompileError) as info:
        Program("#include <cuda_fp16.h>\n", "c++", ProgramOptions(arch="compute_80"), cuda_headers=False).compile("ptx")
    assert info.value.hint == (
        "cuda_fp16.h is a CUDA header: drop cuda_headers=False (--no-cuda-headers), or pass its folder in "
        "include_path (-I)"
    )
    # with the CUDA header folders searched (the default), a CUDA header they lack: newer headers are the fix
    with pytest.raises(FatbinCompileError) as info:
        Program("#include <cuda_fp99.h>\n", "c++", ProgramOptions(arch="compute_80")).compile("ptx")
    assert info.value.hint.startswith("cuda_fp99.h is a CUDA header, not found in the CUDA header folders (")


def test_ptx_alone_names_nvrtcs_program_and_needs_no_log_sink():
    src = "__global__ void k(int* p) { int unused; p[0] = 1; }"
    obj = Program(src, "c++", ProgramOptions(arch="compute_80")).compile("ptx")  # a warning, and nowhere to write it
    obj_plain = plain(obj)
    assert ".entry" in obj_plain.code.decode()
    with pytest.raises(FatbinCompileError) as info:
        Program("int x = ;", "c++", ProgramOptions(arch="compute_80")).compile("ptx")
    assert "\ndefault_program(1): error: " in str(info.value)  # NVRTC's name for an unnamed program
    # the ObjectCode carries the options' name, as upstream's compile gives it; an empty name is no name to
    # NVRTC either (cuda.core's ProgramOptions: an unset name is "default_program")
    for name in ("mine", ""):
        obj = Program(src, "c++", ProgramOptions(arch="compute_80", name=name)).compile("ptx")
        obj_plain = plain(obj)
        assert obj_plain.name == name
    unnamed = plain(Program(src, "c++", ProgramOptions(arch="compute_80")).compile("ptx"))
    assert unnamed.name == "default_program"
    with pytest.raises(FatbinCompileError) as info:
        Program("int x = ;", "c++", ProgramOptions(arch="compute_80", name="")).compile("ptx")
    assert "\ndefault_program(1): error: " in str(info.value)


def test_the_linker_is_given_the_program_options_it_understands(monkeypatch):
    """SASS that nvJitLink makes from PTX is made with the ProgramOptions nvJitLink has (cuda.core's
    LinkerOptions says which, and how it spells them)."""
    from cuda.core import LinkerOptions

    from cuda_fatbin import Arch, _program

    options = ProgramOptions(arch="compute_80", ftz=True, max_register_count=32, lineinfo=True, std="c++17")
    got = _program._linker_options(options, Arch.parse("sm_86"))
    assert got == tuple(
        LinkerOptions(arch="sm_86", ftz=True, max_register_count=32, lineinfo=True).as_bytes("nvjitlink")
    )
    monkeypatch.setattr(_program, "_LINKER_FIELDS", (*_program._LINKER_FIELDS, "std"))  # a field LinkerOptions lacks
    assert _program._linker_options(options, Arch.parse("sm_86")) == got


def test_a_compile_without_an_arch_asks_the_first_gpu(monkeypatch):
    from cuda_fatbin import _driver
    from cuda_fatbin._driver import DeviceInfo

    asked = []

    def fake(needed_for: str = "this", instead: str = "") -> tuple[DeviceInfo, ...]:
        asked.append((needed_for, instead))
        return (DeviceInfo(0, "A", (8, 6), 13000), DeviceInfo(1, "B", (9, 0), 13000))

    monkeypatch.setattr(_driver, "devices", fake)
    obj = Program("__global__ void k(int* p) { p[0] = 1; }", "c++").compile("cubin")
    obj_plain = plain(obj)
    assert [str(e.arch) for e in read_fatbin(obj_plain.code).entries] == ["sm_86"]
    assert asked == [("a compile without ProgramOptions.arch",
                      "pass ProgramOptions(arch='sm_XX'), or compile to 'fatbin' with archs=[...]")]  # fmt: skip


def test_jobs_whose_name_expressions_resolve_differently_are_both_named():
    """A name expression can mangle differently per arch (a typedef under ``#if __CUDA_ARCH__``): the one
    ObjectCode cannot map it both ways, and the error names the two jobs that disagree."""
    from cuda_fatbin._multiarch import JobResult
    from cuda_fatbin._program import _assemble

    a, b = plan_fatbin(["sm_80", "sm_90"], ptx_for=(), supported=range(200)).jobs
    results = [JobResult(a, (), {"k<T>": b"_Z1kIfEvv"}, ""), JobResult(b, (), {"k<T>": b"_Z1kIdEvv"}, "")]
    with pytest.raises(ValueError) as info:
        _assemble(results, None, None)
    assert str(info.value) == (f"symbol mapping conflict for 'k<T>': {a} maps it to b'_Z1kIfEvv', {b} to b'_Z1kIdEvv'")


def test_an_unnamed_programs_fatbin_errors_use_nvrtcs_default_name():
    """An empty name is no name (cuda.core's ProgramOptions: unset is "default_program"): every job's NVRTC
    program is called that, as a single-arch compile's is."""
    with pytest.raises(FatbinCompileError) as info:
        Program("int x = ;", "c++", ProgramOptions(name="")).compile("fatbin", archs=["sm_80"], ptx_for=())
    assert "\ndefault_program(1): error: " in str(info.value)
    with pytest.raises(FatbinCompileError) as info:
        Program("int x = ;", "c++", ProgramOptions(name="k.cu")).compile("fatbin", archs=["sm_80"], ptx_for=())
    assert "\nk.cu(1): error: " in str(info.value)


def test_a_group_builds_link_jobs_get_the_program_options_the_linker_has():
    """group=True: one PTX per virtual arch, linked to each SASS by nvJitLink, which gets the ProgramOptions
    it understands (max_register_count, lineinfo, ...) for every arch it links."""
    from cuda.core import LinkerOptions

    program = Program(KERNEL_SRC, "c++", ProgramOptions(max_register_count=32, lineinfo=True, std="c++17"))
    [job] = program.plan(["sm_80", "sm_86"], ptx_for=(), group=True).jobs
    assert [str(a) for a in job.link] == ["sm_80", "sm_86"]
    link = program._job_args(())(job)[3]
    assert link == {
        a: tuple(LinkerOptions(arch=str(a), max_register_count=32, lineinfo=True).as_bytes("nvjitlink"))
        for a in job.link
    }


def test_name_expressions_may_be_bytes_and_must_be_strings():
    """Name expressions as cuda.core takes them: str or bytes (UTF-8), mapped under their text."""
    src = 'extern "C" __global__ void plain() {}\ntemplate <typename T> __global__ void k(T* p) { p[0] = 1; }'
    obj = Program(src, "c++").compile("fatbin", [b"k<float>", "k<int>"], archs=["sm_80"], ptx_for=())
    obj_plain = plain(obj)
    assert obj_plain.symbol_mapping == {"k<float>": b"_Z1kIfEvPT_", "k<int>": b"_Z1kIiEvPT_"}
    for one in (b"k<float>", "k<float>"):  # one name alone, bytes as str: one name, not its bytes or characters
        single = Program(src, "c++").compile("fatbin", one, archs=["sm_80"], ptx_for=())
        mapping = dict(single.symbol_mapping)
        del single
        assert mapping == {"k<float>": b"_Z1kIfEvPT_"}
    with pytest.raises(TypeError) as info:
        Program(src, "c++").compile("fatbin", ["k<int>", 3], archs=["sm_80"], ptx_for=())
    assert str(info.value) == "name_expressions must be strings; got int (3)"


# cuda.core 1.2.2's Program.__dealloc__, run when the traceback holding the failed upstream program goes,
# raises an AttributeError that Python reports as unraisable (not seen outside pytest)
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_single_arch_compile_that_misses_a_cuda_header_gets_the_hint_as_a_note():
    """Upstream's compile (one cubin) raises its own NVRTCError: the hint goes on it as a note (Python >= 3.11,
    PEP 678); the error itself is left as upstream made it."""
    from cuda.core._utils.cuda_utils import NVRTCError

    program = Program("#include <cuda_fp16.h>\n", "c++", ProgramOptions(arch="sm_80"), cuda_headers=False)
    with pytest.raises(NVRTCError) as info:
        program.compile("cubin")
    assert 'could not open source file "cuda_fp16.h"' in str(info.value)
    if sys.version_info >= (3, 11):
        assert info.value.__notes__ == [
            "cuda_fp16.h is a CUDA header: drop cuda_headers=False (--no-cuda-headers), or pass its folder in "
            "include_path (-I)"
        ]
    del info, program  # the traceback holds upstream's failed program: let it go here, under the mark above
    gc.collect()


def test_min_driver_asks_for_an_older_nvrtc_only_when_the_ptx_isa_is_too_new():
    """A PTX entry whose ISA the oldest driver reads (8.0: CUDA 12.0, ptx_isa_needs) but stored with zstd (CUDA
    12.4, docs/formats.md): the fixes are SASS or another compression, not an older NVRTC."""
    from cuda_fatbin import DriverCompatibilityError, Part, build_fatbin
    from cuda_fatbin._program import check_min_driver
    from cuda_fatbin._select import ptx_isa_needs

    ptx = b".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { ret; }\n"
    data = build_fatbin([Part(ptx, kind="ptx")], options=FatbinOptions(compress_all=True))
    assert ptx_isa_needs((8, 0)) == (12, 0)
    plan = plan_fatbin(["sm_80"], ptx_for=["sm_80"], supported=range(200))
    with pytest.raises(DriverCompatibilityError) as info:
        check_min_driver(data, plan, "12.0", "error")
    assert str(info.value) == (
        "min_driver is CUDA 12.0, but compute capability 8.0 would load PTX compute_80 (ISA 8.0), zstd, which "
        "needs a CUDA 12.4 driver; fix: add SASS for sm_80 (archs=[..., 'sm_80']); or compress with LZ4 "
        "(FatbinOptions(compress_mode='speed')) or not at all (compress=False) (or raise min_driver)"
    )


def test_a_single_target_compile_takes_upstreams_cache_though_the_cuda_headers_are_searched(tmp_path):
    """A single-target compile passes cache= on to cuda.core (whose make_program_cache_key refuses options
    naming include folders without an extra_digest), although this Program searches the CUDA header
    folders: the second compile of the same source is served from the cache. (cache= was dropped for one
    target: the second compile compiled again.)"""
    from cuda.core.utils import InMemoryProgramCache

    class Counting(InMemoryProgramCache):
        hits = 0

        def get(self, key, default=None):  # type: ignore[no-untyped-def]
            found = super().get(key, default)
            self.hits += found is not None
            return found

    cache = Counting()
    first = Program(KERNEL_SRC, "c++", ProgramOptions(arch="sm_80")).compile("cubin", cache=cache)
    assert cache.hits == 0
    again = Program(KERNEL_SRC, "c++", ProgramOptions(arch="sm_80")).compile("cubin", cache=cache)
    again_plain = plain(again)
    first_plain = plain(first)
    assert cache.hits == 1 and again_plain.code == first_plain.code and first_plain.code[:4] == b"\x7fELF"
    # the caller's own include folders: cuda.core refuses to key them (it was silently not cached before)
    with pytest.raises(ValueError, match=r"make_program_cache_key\(\) refuses .* \(include_path\)"):
        Program(KERNEL_SRC, "c++", ProgramOptions(arch="sm_80", include_path=[str(tmp_path)])).compile(
            "cubin", cache=cache
        )


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # cuda.core's __dealloc__ (above)
def test_a_cuda_core_whose_compile_keywords_are_unknown_gets_every_keyword(monkeypatch):
    """Where the installed cuda.core's compile() cannot be inspected, nothing is refused here: upstream
    decides (a plain compile works; an unknown keyword is upstream's TypeError)."""
    from cuda_fatbin import _program

    monkeypatch.setattr(_program, "_upstream_compile_keywords", lambda: None)
    program = Program(KERNEL_SRC, "c++", ProgramOptions(arch="sm_80"))
    cubin = plain(program.compile("cubin"))
    assert cubin.code[:4] == b"\x7fELF"
    with pytest.raises(TypeError) as info:
        program.compile("cubin", colour="blue")
    assert "colour" in str(info.value) and "got unexpected arguments" not in str(info.value)
    del info, program
    gc.collect()


def test_fatbin_compile_options_build_the_same_fatbin_as_the_keywords():
    from cuda_fatbin import FatbinCompileOptions

    keywords = {"archs": ["sm_80", "sm_90"], "ptx_for": ["sm_90"], "extra_options": ["-DX=1"]}
    by_keywords = Program(KERNEL_SRC, "c++").compile("fatbin", **keywords)
    options = FatbinCompileOptions(**keywords)
    assert options.extra_options == ("-DX=1",)  # kept as a tuple: the frozen options cannot change later
    by_options = Program(KERNEL_SRC, "c++").compile("fatbin", options=options)
    assert bytes(by_options.code) == bytes(by_keywords.code)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"cache_max_files": 5}, ValueError, "cache_max_files needs cache="),
        ({"min_driver_action": "raise"}, ValueError, "min_driver_action must be 'error' or 'warn'; got 'raise'"),
        ({"extra_options": ["-DX", 3]}, TypeError, "extra_options must be strings; got 3"),
        ({"min_driver": "twelve"}, ValueError, "not a driver or CUDA version: 'twelve'"),
        ({"extra_options": ["--arch=sm_80"]}, ValueError, "extra_options '--arch=sm_80': the archs come from archs="),
    ],
)
def test_fatbin_compile_options_refuse_what_the_keywords_refuse_when_built(kwargs, error, message):
    from cuda_fatbin import FatbinCompileOptions

    with pytest.raises(error) as info:
        FatbinCompileOptions(archs=["sm_80"], **kwargs)
    assert str(info.value).startswith(message), str(info.value)


def test_fatbin_compile_options_and_keywords_are_not_mixed():
    from cuda_fatbin import FatbinCompileOptions

    program = Program(KERNEL_SRC, "c++")
    options = FatbinCompileOptions(archs=["sm_80"])
    with pytest.raises(TypeError, match=re.escape("got options= and archs, group: give each setting in options")):
        program.compile("fatbin", archs=["sm_90"], group=True, options=options)
    with pytest.raises(TypeError, match="options must be a FatbinCompileOptions; got dict"):
        program.compile("fatbin", options={"archs": ["sm_80"]})
    with pytest.raises(ValueError, match=re.escape("options= (FatbinCompileOptions) applies to 'fatbin', not 'ptx'")):
        program.compile("ptx", options=options)
    with pytest.raises(ValueError, match="compile\\('fatbin'\\) needs archs="):
        program.compile("fatbin", options=FatbinCompileOptions())
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.archs = ["sm_90"]  # type: ignore[misc]
