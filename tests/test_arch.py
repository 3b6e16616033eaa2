# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuda_fatbin import Arch, ArchList, parse_archs


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("sm_90", Arch(9, 0)),
        ("compute_90", Arch(9, 0)),
        ("lto_90", Arch(9, 0)),
        ("90", Arch(9, 0)),
        ("9.0", Arch(9, 0)),
        ("90a", Arch(9, 0, "a")),
        ("9.0a", Arch(9, 0, "a")),
        ("sm_100f", Arch(10, 0, "f")),
        ("compute_120a", Arch(12, 0, "a")),
        (" SM_86 ", Arch(8, 6)),
        ("12.1f", Arch(12, 1, "f")),
        (90, Arch(9, 0)),
        (75, Arch(7, 5)),
        (Arch(8, 9), Arch(8, 9)),
    ],
)
def test_parse_spellings(spec, expected):
    assert Arch.parse(spec) == expected


@pytest.mark.parametrize(
    "bad",
    [
        "sm_9x",
        "abc",
        "0",
        "-1",
        "sm_",
        "",
        "9",
        "sm_90b",
        "9.10",
        "compute_",
        "sm90",
        "1000",
        "sm_80a",
        "sm_90f",
        "0.5",
        -1,
        0,
        5,
    ],
)
def test_parse_rejects_bad_spellings(bad):
    with pytest.raises(ValueError) as info:
        Arch.parse(bad)
    assert repr(bad) in str(info.value)


@pytest.mark.parametrize("bad", [None, 9.0, b"90", True, ["90"]])
def test_parse_rejects_bad_types(bad):
    with pytest.raises(TypeError):
        Arch.parse(bad)


def test_properties():
    a = Arch.parse("sm_90a")
    assert str(a) == "sm_90a"
    assert a.bare == "90a"
    assert a.compute == "compute_90a"
    assert a.capability == "9.0a"
    assert a.sm == 90
    assert a.base == Arch(9, 0)
    assert Arch.parse(100).bare == "100"


def test_order_and_hash():
    archs = [Arch.parse(s) for s in ["sm_90a", "sm_80", "sm_100", "sm_90", "sm_100f", "sm_100a", "sm_86"]]
    assert [str(a) for a in sorted(archs)] == ["sm_80", "sm_86", "sm_90", "sm_90a", "sm_100", "sm_100f", "sm_100a"]
    assert len({Arch.parse("90"), Arch.parse("sm_90"), Arch.parse("9.0")}) == 1
    with pytest.raises(TypeError):
        _ = Arch(9, 0) < "sm_90"


def test_direct_construction_is_validated():
    with pytest.raises(ValueError, match="minor"):
        Arch(9, 10)
    with pytest.raises(ValueError, match="suffix"):
        Arch(9, 0, "x")
    with pytest.raises(ValueError, match="from sm_100"):
        Arch(9, 0, "f")


arches = st.builds(
    lambda major, minor, suffix: Arch(
        major, minor, suffix if major * 10 + minor >= {"": 0, "a": 90, "f": 100}[suffix] else ""
    ),
    st.integers(1, 99),
    st.integers(0, 9),
    st.sampled_from(["", "a", "f"]),
)


@given(arches)
def test_every_spelling_round_trips(a):
    for spelling in (str(a), a.bare, a.compute, a.capability, f"lto_{a.bare}"):
        assert Arch.parse(spelling) == a
    if not a.suffix:
        assert Arch.parse(a.sm) == a


@given(arches, arches)
def test_order_is_total_and_consistent(a, b):
    assert (a < b) + (b < a) + (a == b) == 1
    if a == b:
        assert hash(a) == hash(b)


@given(arches)
def test_equal_values_from_any_spelling_hash_equal(a):
    """Equal pairs drawn on purpose (two independent draws are rarely equal): every spelling, one hash."""
    spellings = [Arch.parse(s) for s in (str(a), a.bare, a.compute, a.capability)]
    assert len(set(spellings)) == 1 and {hash(s) for s in spellings} == {hash(a)}


@pytest.mark.parametrize("keyword", ["all", "all-major"])
def test_all_keywords_match_nvcc(keyword, needs_nvcc, tmp_path):
    """`all` and `all-major` resolve as nvcc's -arch=... does, for nvcc's own list of supported archs."""
    import re
    import subprocess

    codes = subprocess.run([needs_nvcc, "--list-gpu-code"], capture_output=True, text=True, check=True).stdout
    sms = tuple(int(m) for m in re.findall(r"sm_(\d+)\b", codes))
    src = tmp_path / "k.cu"
    src.write_text('extern "C" __global__ void k(float* p) { p[0] = 1; }\n')
    dry = subprocess.run([needs_nvcc, f"-arch={keyword}", "--dryrun", "-c", str(src), "-o", str(tmp_path / "k.o")],
                         capture_output=True, text=True)  # fmt: skip
    theirs = {int(m) for m in re.findall(r"-arch=sm_(\d+)\b", dry.stdout + dry.stderr)}
    ours = {a.sm for a in parse_archs(keyword, supported=sms).sass}
    assert ours == theirs and theirs


BUILD_PAIRS = [
    ("compute_80", "sm_86"), ("compute_80", "sm_120"), ("compute_86", "sm_80"), ("compute_90", "sm_90a"),
    ("compute_90a", "sm_90"), ("compute_90a", "sm_90a"), ("compute_90a", "sm_100a"), ("compute_100", "sm_100a"),
    ("compute_100", "sm_103f"), ("compute_90", "sm_100f"), ("compute_100f", "sm_103"), ("compute_100f", "sm_120"),
    ("compute_100f", "sm_110"), ("compute_103f", "sm_100f"), ("compute_120f", "sm_121"), ("compute_100a", "sm_103a"),
]  # fmt: skip


@pytest.mark.parametrize("virtual, real", BUILD_PAIRS, ids=[f"{v}->{r}" for v, r in BUILD_PAIRS])
def test_virtual_to_real_rule_matches_nvcc(virtual, real, needs_nvcc, tmp_path):
    """One rule for parse_archs, the planner and the selection model, checked by compiling with nvcc
    (``--dryrun`` accepts pairs ptxas then refuses, e.g. compute_100a -> sm_103a)."""
    import subprocess

    src = tmp_path / "k.cu"
    src.write_text('extern "C" __global__ void k(float* p) { p[0] = 1; }\n')
    res = subprocess.run([needs_nvcc, "-cubin", "-o", str(tmp_path / "k.cubin"), f"-gencode=arch={virtual},code={real}",
                          str(src)], capture_output=True, text=True)  # fmt: skip
    nvcc_builds = res.returncode == 0
    assert Arch.parse(virtual).builds(Arch.parse(real)) == nvcc_builds, res.stderr
    spec = f"arch={virtual},code={real}"
    if nvcc_builds:
        assert Arch.parse(real) in parse_archs(spec).sass
    else:
        with pytest.raises(ValueError, match="cannot be built from"):
            parse_archs(spec)


def test_an_arch_list_equals_a_plain_list_only_when_it_asks_for_sass_alone():
    sass = [Arch(8, 0), Arch(9, 0)]
    assert parse_archs("80;90") == sass
    assert parse_archs("80;90+PTX") != sass  # PTX too
    assert parse_archs("80;90;lto_90") != sass  # LTO-IR too
    assert parse_archs("arch=compute_80,code=[sm_80,sm_90]") != sass  # sm_90 built from compute_80
    assert parse_archs("80-real;90-real") == sass
    assert parse_archs("80-virtual") != []


def test_cmake_virtual_means_ptx_only():
    al = parse_archs("80-virtual;90-real")
    assert al.sass == (Arch(9, 0),) and al.ptx == (Arch(8, 0),)


@pytest.mark.parametrize(
    "spec, words",
    [  # every gencode error quotes the clause and the spec it came from
        ("arch=sm_80,code=sm_80", "gencode arch must be a compute_XX virtual arch; got 'sm_80' in 'arch=sm_80"),
        ({"compute_80": []}, "gencode for compute_80 lists no code in {'compute_80': []}"),
        ("arch=compute_80,code=compute_90", "arch=compute_80 cannot embed PTX for compute_90 (in 'arch=compute_80"),
        ("arch=compute_80,code=lto_80", "gencode code 'lto_80' must be sm_XX or compute_XX (in 'arch=compute_80"),
        ("arch=compute_90,code=sm_80", "SASS sm_80 cannot be built from compute_90 (in 'arch=compute_90"),
        (
            "-gencode arch=compute_80,code=sm_87 -gencode arch=compute_86,code=sm_87",
            "sm_87 is listed under two virtual archs (compute_80, compute_86) in '-gencode",
        ),
    ],
)
def test_gencode_errors_name_the_clause(spec, words):
    with pytest.raises(ValueError) as info:
        parse_archs(spec)
    assert words in str(info.value)


def test_a_gencode_pair_may_repeat():
    spec = "-gencode arch=compute_80,code=sm_87 -gencode arch=compute_80,code=sm_87"
    assert parse_archs(spec) == parse_archs("arch=compute_80,code=sm_87")


def test_keywords_that_resolve_to_nothing_say_so():
    for keyword in ("all", "all-major"):
        with pytest.raises(ValueError, match=f"'{keyword}' resolved to no arch"):
            parse_archs(keyword, supported=())


def test_native_needs_a_driver_and_says_what_to_pass_instead():
    from cuda_fatbin import NoDriverError
    from cuda_fatbin._driver import devices

    try:
        found = devices("test", "test")
    except NoDriverError:
        with pytest.raises(NoDriverError, match="name the archs instead, e.g. '80;90'"):
            parse_archs("native")
    else:  # with a GPU: the devices' archs
        assert parse_archs("native") == sorted({Arch(*d.capability) for d in found})


def test_an_nvrtc_failure_is_reported_with_the_call(monkeypatch):
    from cuda.bindings import nvrtc

    from cuda_fatbin._arch import nvrtc_supported_sms

    monkeypatch.setattr(nvrtc, "nvrtcGetSupportedArchs", lambda: (nvrtc.nvrtcResult.NVRTC_ERROR_INTERNAL_ERROR, []))
    with pytest.raises(RuntimeError, match="nvrtcGetSupportedArchs failed: .*INTERNAL_ERROR"):
        nvrtc_supported_sms()


def test_in_cmake_style_only_bare_numbers_add_ptx():
    al = parse_archs("sm_80;8.6;90;100-real")  # CMake: 90 is real and virtual; sm_80 and 8.6 are not CMake's
    assert al.sass == (Arch(8, 0), Arch(8, 6), Arch(9, 0), Arch(10, 0)) and al.ptx == (Arch(9, 0),)
    assert parse_archs("lto_90;90-real").ltoir == (Arch(9, 0),)


@pytest.mark.parametrize(
    "spec, style, error, message",
    [
        ("80", "x", ValueError, "style must be one of auto, list, cmake, torch, nvcc; got 'x'"),
        (True, "auto", TypeError, "an arch spec must be a str, int, Arch, list, tuple or dict; got bool"),
        ("arch=compute_80,code=[sm_80] garbage", "auto", ValueError,
         "malformed gencode spec 'arch=compute_80,code=[sm_80] garbage'; expected e.g. "
         "'arch=compute_80,code=[sm_80,sm_86]' (cannot read 'garbage')"),
        ("arch=", "auto", ValueError,
         "malformed gencode spec 'arch='; expected e.g. 'arch=compute_80,code=[sm_80,sm_86]' (cannot read 'arch=')"),
        ("arch=compute_90,code=SM_90X", "auto", ValueError, "not an arch: 'sm_90x'; accepted spellings:"),
        ("arch=compute_80,code=sm_80", "torch", ValueError, "not an arch: 'arch=compute_80'"),
        ("arch=compute_80,code=sm_80 foo bar", "auto", ValueError,
         "malformed gencode spec 'arch=compute_80,code=sm_80 foo bar'; expected e.g. "
         "'arch=compute_80,code=[sm_80,sm_86]' (cannot read 'foo bar')"),
        ("all", "nvcc", ValueError, "'all' is a CMake keyword; use style='cmake' or 'auto'"),
        ("Native", "list", ValueError, "'Native' is a CMake keyword; use style='cmake' or 'auto'"),
        (["80", True], "auto", TypeError, "arch list item True is not a str, int or Arch"),
        (["80", 9.0], "auto", TypeError, "arch list item 9.0 is not a str, int or Arch"),
        (" ; ", "auto", ValueError, "empty arch list: ';'"),
    ],
)  # fmt: skip
def test_spec_errors_say_what_was_wrong(spec, style, error, message):
    with pytest.raises(error) as info:
        parse_archs(spec, style=style)
    assert str(info.value).startswith(message)


def test_styles_decide_how_bare_numbers_and_gencode_read():
    assert parse_archs("arch=compute_80,code=sm_80", style="nvcc") == [Arch(8, 0)]
    assert parse_archs("80;90", style="cmake").ptx == (Arch(8, 0), Arch(9, 0))  # CMake: real and virtual
    assert parse_archs("80;90", style="torch").ptx == ()
    assert parse_archs(80) == [Arch(8, 0)] and parse_archs(Arch(9, 0, "a")) == [Arch(9, 0, "a")]
    al = parse_archs("arch=compute_80,code=[sm_80];LTO_90")  # LTO-IR beside gencode clauses (str(ArchList))
    assert (al.sass, al.ltoir) == ((Arch(8, 0),), (Arch(9, 0),))
    assert parse_archs(str(al)) == al
    assert ArchList((Arch(8, 0),)).explicit_ptx is False


def test_construction_errors_quote_the_bad_field():
    for args, message in [
        ((True, 0), "Arch major must be an int from 1 to 99; got True"),
        (("8", 0), "Arch major must be an int from 1 to 99; got '8'"),
        ((0, 0), "Arch major must be an int from 1 to 99; got 0"),
        ((100, 0), "Arch major must be an int from 1 to 99; got 100"),
        ((8, True), "Arch minor must be an int from 0 to 9; got True"),
        ((8, "0"), "Arch minor must be an int from 0 to 9; got '0'"),
        ((8, 9, "a"), "the 'a' suffix exists from sm_90 on; sm_89a is not an arch"),
        ((9, 9, "f"), "the 'f' suffix exists from sm_100 on; sm_99f is not an arch"),
    ]:
        with pytest.raises(ValueError) as info:
            Arch(*args)
        assert str(info.value) == message, args
    assert (Arch(99, 9, "f").sm, Arch(9, 0, "a").sm, Arch(10, 0, "f").sm) == (999, 90, 100)  # the boundaries
    with pytest.raises(TypeError) as info:
        Arch.parse(9.0)
    assert str(info.value) == "an arch must be an Arch, str or int; got float 9.0"
    a = Arch(9, 0)
    with pytest.raises(AttributeError) as info:
        del a.major
    assert str(info.value) == "Arch is immutable; cannot delete 'major'"
    with pytest.raises(AttributeError) as info:
        a.minor = 1
    assert str(info.value) == "Arch is immutable; cannot set 'minor'"


def test_distinct_values_hash_apart():
    """Archs and arch lists are dict keys (caches, plans): every distinct Arch has its own hash."""
    archs = [
        Arch(M, m, s)
        for M in range(1, 100)
        for m in range(10)
        for s in ("", "a", "f")
        if M * 10 + m >= {"": 0, "a": 90, "f": 100}[s]
    ]
    assert len({hash(a) for a in archs}) == len(archs)
    lists = [parse_archs(spec) for spec in ("80", "90", "80;90", "compute_80", "80;compute_90", "lto_90", "80-virtual")]
    assert len(set(lists)) == len(lists) - 1  # "compute_80" and "80-virtual" are one value
    assert len({hash(al) for al in lists}) == len(set(lists))
    assert hash(parse_archs("sm_80;sm_90")) == hash(parse_archs("90,80"))


def test_keywords_in_lists_and_cmake_style(monkeypatch):
    expected = ArchList((Arch(8, 0), Arch(9, 0)), (Arch(9, 0),), (), (), True)  # CMake: PTX of the newest major
    assert parse_archs("all", supported=(80, 90)) == expected
    assert parse_archs("ALL", style="cmake", supported=(80, 90)) == expected
    assert parse_archs(["all"], supported=(80, 90)) == expected  # list items keep the style and the supported set
    assert parse_archs(["arch=compute_80,code=sm_80"]) == [Arch(8, 0)]
    assert parse_archs("80").explicit_ptx is False and parse_archs("80") == ArchList((Arch(8, 0),))


def test_native_is_the_gpus_present_without_ptx(monkeypatch):
    """'native' resolves through the driver's device list (faked here; the GPU tests use the real one)."""
    from cuda_fatbin import NoDriverError, _driver
    from cuda_fatbin._driver import DeviceInfo

    gpus = (DeviceInfo(0, "A", (9, 0), 13000), DeviceInfo(1, "B", (8, 0), 13000), DeviceInfo(2, "C", (9, 0), 13000))
    monkeypatch.setattr(_driver, "_probe", lambda: (gpus, None))
    assert parse_archs("native") == ArchList((Arch(8, 0), Arch(9, 0)), (), (), (), True)  # sorted, once each
    monkeypatch.setattr(_driver, "_probe", lambda: ((), "no GPU"))
    with pytest.raises(NoDriverError) as info:
        parse_archs("native")
    assert str(info.value) == (
        "'native' in an arch spec needs a GPU and its driver: no GPU; name the archs instead, e.g. '80;90'"
    )


def test_gencode_clauses_and_lto_items_separated_by_commas():
    expected = ArchList((Arch(8, 0),), (), (Arch(9, 0),), (), True)
    for spec in (
        "arch=compute_80,code=sm_80,lto_90",
        "arch=compute_80,code=sm_80;lto_90",
        "arch=compute_80,code=sm_80 lto_90",
    ):
        assert parse_archs(spec) == expected, spec
