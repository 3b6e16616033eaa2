# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
from __future__ import annotations

import gc
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import cuda_fatbin
from cuda_fatbin import (
    Arch,
    FatbinBuilder,
    FatbinError,
    FatbinLibraryError,
    FatbinOptions,
    Part,
    build_fatbin,
    from_parts,
    nvfatbin_version,
    read_fatbin,
)
from cuda_fatbin import _fatbin as F
from cuda_fatbin import _libnvfatbin as L

from elf_testing import make_elf
from fatbin_testing import KERNEL_SRC, all_records, listing, plain

TILE_IR = b"\x7fTileIR\x00" + bytes([13, 1, 0, 0]) + bytes(20)  # header-only Tile IR that libnvfatbin accepts


def entry_flags(fatbin: bytes) -> list[tuple[int, int]]:
    """(kind, flags) of each top-level entry, read straight from the container headers."""
    out, pos = [], 16
    while pos < len(fatbin):
        kind, _ver, hsize, psize = struct.unpack_from("<HHIQ", fatbin, pos)
        out.append((kind, struct.unpack_from("<Q", fatbin, pos + 0x28)[0]))
        pos += hsize + psize
    return out


# -- FatbinOptions ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options, strings",
    [
        (FatbinOptions(), []),
        (FatbinOptions(compress=True), ["-compress=true"]),
        (FatbinOptions(compress=False), ["-compress=false"]),
        (FatbinOptions(compress_all=True), ["-compress-all"]),
        (FatbinOptions(compress_all=False), []),
        (FatbinOptions(compress_mode="size"), ["-compress-mode=size"]),
        (FatbinOptions(concat=True), ["-concat"]),
        (FatbinOptions(host="windows"), ["-host=windows"]),
        (FatbinOptions(address_bits=32), ["-32"]),
        (FatbinOptions(debug=True), ["-g"]),
        (FatbinOptions(producer="opencl"), ["-opencl"]),
        (
            FatbinOptions(compress=True, compress_mode="speed", host="linux", address_bits=64, producer="cuda"),
            ["-compress=true", "-compress-mode=speed", "-host=linux", "-64", "-cuda"],
        ),
    ],
)
def test_options_to_strings(options, strings, monkeypatch):
    """The strings whatever libnvfatbin is here (gating: test_a_feature_is_available_from_exactly_its_version)."""
    monkeypatch.setattr(L, "nvfatbin_version", lambda: max(L._FEATURE_SINCE.values()))
    assert options._prepare_nvfatbin_options() == strings


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"compress": "yes"}, "compress"),
        ({"compress_all": 1}, "compress_all"),
        ({"compress_mode": "fast"}, "compress_mode"),
        ({"concat": "true"}, "concat"),
        ({"host": "linux64"}, "host"),
        ({"address_bits": 16}, "address_bits"),
        ({"address_bits": True}, "address_bits"),
        ({"debug": 0}, "debug"),
        ({"producer": "hip"}, "producer"),
    ],
)
def test_options_validation_names_the_field(kwargs, field):
    with pytest.raises(ValueError, match=f"FatbinOptions.{field}"):
        FatbinOptions(**kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"compress": False, "compress_mode": "size"},
        {"compress": False, "compress_all": True},
        {"compress_mode": "none", "compress_all": True},
        {"compress": False, "concat": True},
        {"compress_mode": "none", "concat": True},
    ],
)
def test_contradicting_options(kwargs):
    with pytest.raises(ValueError, match="contradicts|cannot go with"):
        FatbinOptions(**kwargs)


def test_every_option_reaches_the_fatbin(cubin80, ptx80, cuobjdump):
    """Each option's effect, as cuobjdump (or the entry flags) shows it."""

    def build(opts, parts=(cubin80, ptx80)):
        return build_fatbin(parts, options=opts)

    assert {r["host"] for r in all_records(cuobjdump(build(FatbinOptions(host="windows")), "-all"))} == {"windows"}
    assert {r["host"] for r in all_records(cuobjdump(build(FatbinOptions(host="linux")), "-all"))} == {"linux"}
    recs = all_records(cuobjdump(build(FatbinOptions(address_bits=32), [ptx80]), "-all"))
    assert {r["compile_size"] for r in recs} == {"32bit"}
    # compress=False: nothing compressed; compress_all: everything compressed
    assert not any("compressed" in r for r in all_records(cuobjdump(build(FatbinOptions(compress=False)), "-all")))
    assert all("compressed" in r for r in all_records(cuobjdump(build(FatbinOptions(compress_all=True)), "-all")))
    # compress modes: speed writes LZ4 (0x2000), size writes zstd (0x8000), none writes neither
    lz4 = entry_flags(build(FatbinOptions(compress_all=True, compress_mode="speed")))
    zstd = entry_flags(build(FatbinOptions(compress_all=True, compress_mode="size")))
    none = entry_flags(build(FatbinOptions(compress_mode="none")))
    assert all(f & 0x2000 for _, f in lz4) and all(f & 0x8000 for _, f in zstd)
    assert not any(f & 0xA000 for _, f in none)
    assert all(f & 0x2 for _, f in entry_flags(build(FatbinOptions(debug=True))))
    assert all(f & 0x8 and not f & 0x4 for _, f in entry_flags(build(FatbinOptions(producer="opencl"))))
    assert all(f & 0x4 for _, f in entry_flags(build(FatbinOptions(producer="cuda"))))
    if nvfatbin_version() >= (13, 4):
        concat = build(FatbinOptions(concat=True))
        assert {k for k, _ in entry_flags(concat)} == {0x100}  # one concatenated entry per kind
        assert sorted(listing(cuobjdump(concat, "-lelf", "-lptx"))) == [("elf", "sm_80"), ("ptx", "sm_80")]


# -- FatbinBuilder ---------------------------------------------------------------------------------


def test_builder_all_add_methods(artifacts, cuobjdump, tmp_path, needs_nvcc):
    obj = tmp_path / "r.o"
    src = tmp_path / "r.cu"
    src.write_text(KERNEL_SRC)
    subprocess.run(["nvcc", "-c", "-rdc=true", "-arch=sm_80", "-o", str(obj), str(src)], check=True)
    with FatbinBuilder() as b:
        b.add_cubin(artifacts[("cubin", "sm_90a")], identifier="c")
        b.add_ptx(artifacts[("ptx", "sm_80")], "compute_80", "p", "-O3")
        b.add_ltoir(artifacts[("ltoir", "sm_80")], identifier="l", nvvm_options="-ftz=1")
        b.add_reloc(obj.read_bytes())
        if nvfatbin_version() >= (13, 1):
            b.add_tile_ir(TILE_IR, identifier="t", options="")
        data = b.build()
        kinds = [p["kind"] for p in b.parts]
    assert kinds[:4] == ["cubin", "ptx", "ltoir", "reloc"]
    text = cuobjdump(data, "-all")
    recs = all_records(text)
    by_kind = {r["kind"]: r for r in recs}
    assert by_kind["elf"]["arch"] == "sm_90a" and by_kind["elf"]["identifier"] == "c"
    assert by_kind["ptx"]["ptxasOptions"] == "-O3"
    assert by_kind["nvvm"]["nvvmOptions"] == "-ftz=1"
    if nvfatbin_version() >= (13, 1):
        assert by_kind["tile ir"]["identifier"] == "t"
    # AddReloc takes the object's PTX as a "relocatable ptx" entry
    assert by_kind["relocatable ptx"]["arch"] == "sm_80"


def test_data_forms_without_copy(cubin80, ptx80, cuobjdump):
    forms = [cubin80, bytearray(cubin80), memoryview(cubin80)]
    for i, form in enumerate(forms):
        with FatbinBuilder() as b:
            b.add_cubin(form, identifier=f"x{i}")
            b.add_ptx(ptx80.decode().rstrip("\0"))
            assert sorted(listing(cuobjdump(b.build(), "-lelf", "-lptx"))) == [("elf", "sm_80"), ("ptx", "sm_80")]
    with FatbinBuilder() as b:
        b.add_ptx(memoryview(bytearray(ptx80)))
        with pytest.raises(TypeError, match="not str"):
            b.add_cubin("/no/such/file.cubin")
        with pytest.raises(TypeError):
            b.add_cubin(12345)


def test_arch_validation(artifacts):
    c80, c90a, p80 = artifacts[("cubin", "sm_80")], artifacts[("cubin", "sm_90a")], artifacts[("ptx", "sm_80")]
    with FatbinBuilder() as b:
        with pytest.raises(ValueError, match="arch sm_90 was given but the data is for sm_80"):
            b.add_cubin(c80, "90")
        with pytest.raises(ValueError, match="arch sm_90 was given but the data is for sm_90a"):
            b.add_cubin(c90a, "sm_90")  # libnvfatbin itself would silently drop the suffix
        with pytest.raises(ValueError, match="arch sm_90a was given but the data is for sm_80"):
            b.add_cubin(c80, "90a")
        with pytest.raises(ValueError, match="arch sm_90 was given but the data is for sm_80"):
            b.add_ptx(p80, "90")
        with pytest.raises(ValueError, match="arch sm_75 was given but the data is for sm_80"):
            b.add_ptx(p80, 75)
        with pytest.raises(ValueError, match="not an arch"):
            b.add_cubin(c80, "sm_8x")
        if ("ptx", "sm_90a") in artifacts:
            with pytest.raises(ValueError, match="arch sm_90 was given but the data is for sm_90a"):
                b.add_ptx(artifacts[("ptx", "sm_90a")], "90")
        with pytest.raises(ValueError, match="arch sm_90 was given but the data is for sm_80"):
            b.add_ltoir(artifacts[("ltoir", "sm_80")], "90")
        assert b.parts == []


def test_f_suffix_comes_from_the_caller(artifacts, cuobjdump):
    if ("cubin", "sm_100f") not in artifacts:
        pytest.skip("NVRTC has no sm_100")
    with FatbinBuilder() as b:
        b.add_cubin(artifacts[("cubin", "sm_100f")], "sm_100f")
        b.add_cubin(artifacts[("cubin", "sm_100")], identifier="plain")
        b.add_ltoir(artifacts[("ltoir", "sm_100f")], "100f")
        b.add_ptx(artifacts[("ptx", "sm_100f")])
        with pytest.raises(ValueError, match="given but the data is for sm_100f"):
            b.add_ptx(artifacts[("ptx", "sm_100f")], "100", identifier="again")
        assert [str(p["arch"]) for p in b.parts] == ["sm_100f", "sm_100", "sm_100f", "sm_100f"]
        data = b.build()
    # cuobjdump prints ELF entries without the f (as for nvcc's own sm_100f fatbins); the entry flags carry it
    assert sorted(listing(cuobjdump(data, "-lelf", "-lptx"))) == [
        ("elf", "sm_100"),
        ("elf", "sm_100"),
        ("ptx", "sm_100f"),
    ]
    assert [bool(f & 0x200000) for _, f in entry_flags(data)] == [True, False, True, True]


def test_duplicates(cubin80):
    with FatbinBuilder() as b:
        b.add_cubin(cubin80)
        with pytest.raises(ValueError, match="already added"):
            b.add_cubin(cubin80)
        b.add_cubin(cubin80, identifier="other")
    with FatbinBuilder(allow_duplicates=True) as b:
        b.add_cubin(cubin80)
        b.add_cubin(cubin80)
        assert len(b.parts) == 2
        b.build()


def test_bad_inputs(cubin80, ptx80):
    with FatbinBuilder() as b:
        with pytest.raises(ValueError, match="empty"):
            b.add_cubin(b"")
        with pytest.raises(ValueError, match=r"part #0 \(cubin\): malformed cubin"):
            b.add_cubin(cubin80[:200])  # libnvfatbin would accept this truncated cubin
        with pytest.raises(ValueError, match="is this PTX"):
            b.add_ptx(b"not ptx at all")
        with pytest.raises(ValueError, match="LTO-IR magic"):
            b.add_ltoir(cubin80, "80")
        with pytest.raises(ValueError, match="host ELF"):
            b.add_reloc(cubin80)
        with pytest.raises(TypeError, match="identifier"):
            b.add_cubin(cubin80, identifier=5)
        with pytest.raises(ValueError, match="NUL"):
            b.add_ptx(ptx80, ptxas_options="-O3\0")
        with pytest.raises(ValueError, match="no parts added"):
            b.build()
        if nvfatbin_version() >= (13, 1):
            with pytest.raises(ValueError, match="Tile IR magic"):
                b.add_tile_ir(b"garbage data")
    with pytest.raises(TypeError, match="FatbinOptions"):
        FatbinBuilder({"compress": True})


def test_library_errors_carry_the_part(cubin80):
    with FatbinBuilder() as b:
        b.add_cubin(cubin80)
        with pytest.raises(FatbinError) as info:
            b.add_index(b"not an index", identifier="idx")
    err = info.value
    assert err.result_name == "ERROR_INVALID_INDEX"
    assert err.function == "nvFatbinAddIndex"
    assert err.part == {"index": 1, "kind": "index", "arch": None, "identifier": "idx"}
    assert "part #1 (index, identifier 'idx')" in str(err) and err.error_string in str(err)


def test_address_bits_mismatch_is_a_fatbin_error(cubin80):
    with (
        FatbinBuilder(FatbinOptions(address_bits=32)) as b,
        pytest.raises(FatbinError, match="ERROR_ELF_SIZE_MISMATCH"),
    ):
        b.add_cubin(cubin80)


def test_close_is_idempotent_and_closed_builder_refuses(cubin80, monkeypatch):
    destroyed = []
    binding = L._nvfatbin()
    real = binding.destroy
    monkeypatch.setattr(binding, "destroy", lambda h: (destroyed.append(h), real(h)))
    b = FatbinBuilder()
    b.add_cubin(cubin80)
    assert not b.is_closed
    b.close()
    b.close()
    assert b.is_closed and len(destroyed) == 1
    for call in (b.build, lambda: b.add_cubin(cubin80), lambda: b.handle, b.__enter__):
        with pytest.raises(RuntimeError, match="^this FatbinBuilder is closed; create a new one$"):
            call()
    # errors inside the with-block still destroy exactly once
    with pytest.raises(ValueError), FatbinBuilder() as b2:
        b2.add_cubin(b"")
    assert b2.is_closed and len(destroyed) == 2
    # garbage collection destroys an unclosed builder once
    b3 = FatbinBuilder()
    del b3
    gc.collect()
    assert len(destroyed) == 3


def test_many_build_close_cycles_do_not_grow_memory(cubin80):
    """10,000 create/add/build/close cycles: resident memory stays flat (no leaked handles)."""

    def rss_kib() -> int:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")

    opts = FatbinOptions(compress=False)

    def cycle(n):
        for _ in range(n):
            with FatbinBuilder(opts) as b:
                b.add_cubin(cubin80)
                b.build()

    cycle(1000)  # warm up allocator pools
    gc.collect()
    before = rss_kib()
    cycle(10_000)
    gc.collect()
    growth = rss_kib() - before
    # a leaked handle holds at least the cubin copy (~5 KiB): 10,000 leaks would be ~50 MiB
    assert growth < 8 * 1024, f"RSS grew by {growth} KiB over 10,000 cycles"


# -- version gating --------------------------------------------------------------------------------


@pytest.fixture
def old_library(monkeypatch):
    def set_version(v):
        monkeypatch.setattr(L, "_version_cache", v)

    return set_version


@pytest.mark.parametrize(
    "version, action, message",
    [
        ((12, 9), lambda b: b.add_tile_ir(TILE_IR), "add_tile_ir requires libnvfatbin 13.1 or newer; found 12.9"),
        ((12, 4), lambda b: b.add_reloc(b"\x7fELF"), "add_reloc requires libnvfatbin 12.5 or newer; found 12.4"),
        ((12, 4), lambda b: b.add_index(b"x"), "add_index requires libnvfatbin 12.5 or newer; found 12.4"),
    ],
)
def test_version_gating_of_entry_points(old_library, version, action, message):
    b = FatbinBuilder()
    old_library(version)
    with pytest.raises(FatbinLibraryError, match=message) as info:
        action(b)
    assert info.value.found == version and "pip install 'nvidia-nvfatbin" in str(info.value)
    b.close()


@pytest.mark.parametrize(
    "version, options, message",
    [
        ((13, 0), FatbinOptions(concat=True), "FatbinOptions.concat requires libnvfatbin 13.4 or newer; found 13.0"),
        (
            (12, 5),
            FatbinOptions(compress_mode="size"),
            "FatbinOptions.compress_mode requires libnvfatbin 12.6 or newer; found 12.5",
        ),
        ((12, 3), FatbinOptions(), "FatbinBuilder requires libnvfatbin 12.4 or newer; found 12.3"),
    ],
)
def test_version_gating_of_options(old_library, version, options, message):
    old_library(version)
    with pytest.raises(FatbinLibraryError, match="^" + re.escape(message)) as info:
        FatbinBuilder(options)
    assert "pip install" in str(info.value)  # a fix the user can run
    assert ("nvidia-nvfatbin-cu12>=12" in str(info.value)) == (version[0] == 12)


def test_binding_without_function(monkeypatch, cubin80):
    class OldBinding:
        def __getattr__(self, name):
            if name == "add_index":
                raise AttributeError(name)
            return getattr(real, name)

    real = L._nvfatbin()
    monkeypatch.setattr(L, "_nvfatbin", lambda: OldBinding())
    with (
        FatbinBuilder() as b,
        pytest.raises(FatbinLibraryError, match="cuda.bindings.nvfatbin.add_index.*pip install -U"),
    ):
        b.add_index(b"x")


def test_missing_library(monkeypatch):
    class NoLibrary:
        def version(self):
            raise RuntimeError("libnvfatbin.so.13: cannot open shared object file")

    monkeypatch.setattr(L, "_version_cache", None)
    monkeypatch.setattr(L, "_nvfatbin", lambda: NoLibrary())
    with pytest.raises(FatbinLibraryError, match="libnvfatbin could not be loaded.*pip install nvidia-nvfatbin"):
        nvfatbin_version()
    with pytest.raises(FatbinLibraryError):
        FatbinBuilder()


def test_nvfatbin_version_is_the_loaded_one():
    from cuda.bindings import nvfatbin

    assert nvfatbin_version() == tuple(nvfatbin.version())


# -- from_parts / build_fatbin ---------------------------------------------------------------------


def test_every_part_form(artifacts, tmp_path, cuobjdump):
    from cuda.core import ObjectCode, Program, ProgramOptions

    path = tmp_path / "k75.cubin"
    path.write_bytes(artifacts[("cubin", "sm_75")])
    ptx_path = tmp_path / "k.ptx"
    ptx_path.write_bytes(artifacts[("ptx", "sm_90")])
    oc_cubin = Program(KERNEL_SRC, "c++", ProgramOptions(arch="sm_86")).compile(
        "cubin", name_expressions=["scale<float>"]
    )
    oc_ptx_file = ObjectCode.from_ptx(str(ptx_path), name="from_file")
    parts = [
        artifacts[("cubin", "sm_80")],  # bytes
        bytearray(artifacts[("cubin", "sm_89")]),  # bytearray
        str(path),  # str path
        ptx_path,  # PathLike
        oc_cubin,  # ObjectCode with symbol mapping
        oc_ptx_file,  # ObjectCode whose code is a path
        Part(artifacts[("ptx", "sm_80")].decode(), kind="ptx", arch="compute_80", identifier="text", options="-O2"),
        Part(tmp_path / "k75.cubin", identifier="via_part"),
        artifacts[("ltoir", "sm_90a")],
    ]
    obj_plain = plain(from_parts(parts, name="mine", symbol_mapping={"saxpy": "saxpy"}))
    assert obj_plain[:3] == ("fatbin", "mine", {"scale<float>": b"_Z5scaleIfEvPT_S0_i", "saxpy": "saxpy"})
    got = sorted(listing(cuobjdump(obj_plain.code, "-lelf", "-lptx")))
    assert got == sorted(
        [("elf", "sm_80"), ("elf", "sm_89"), ("elf", "sm_75"), ("ptx", "sm_90"), ("elf", "sm_86"), ("ptx", "sm_90"),
         ("ptx", "sm_80"), ("elf", "sm_75")]
    )  # fmt: skip
    assert build_fatbin(parts) == obj_plain.code


def test_symbol_mapping_conflicts(artifacts):
    from cuda.core import ObjectCode

    a = ObjectCode.from_cubin(artifacts[("cubin", "sm_80")], symbol_mapping={"k": "_Z1kv"})
    b = ObjectCode.from_cubin(artifacts[("cubin", "sm_90")], symbol_mapping={"k": "_Z1kv"})
    c = ObjectCode.from_cubin(artifacts[("cubin", "sm_75")], symbol_mapping={"k": "_Z1kf"})
    ab = plain(from_parts([a, b]))
    assert ab.symbol_mapping == {"k": "_Z1kv"}
    with pytest.raises(ValueError, match=r"conflict for 'k': part #1 maps it to '_Z1kv', part #2 to '_Z1kf'"):
        from_parts([a, b, c])
    with pytest.raises(ValueError, match="symbol_mapping= to 'other'"):
        from_parts([a], symbol_mapping={"k": "other"})


def test_bad_parts(artifacts, tmp_path):
    from cuda.core import ObjectCode

    with pytest.raises(ValueError, match="empty"):
        build_fatbin([])
    with pytest.raises(TypeError, match="iterable of parts"):
        build_fatbin(artifacts[("cubin", "sm_80")])
    with pytest.raises(TypeError, match="part #1: expected a Part"):
        build_fatbin([artifacts[("cubin", "sm_80")], 42])
    with pytest.raises(ValueError, match=r"part #0: cannot read '.*nope.cubin'"):
        build_fatbin([str(tmp_path / "nope.cubin")])
    with pytest.raises(ValueError, match="Part\\(text, kind='ptx'\\)"):
        build_fatbin([artifacts[("ptx", "sm_80")].decode()])
    with pytest.raises(ValueError, match="part #0: unrecognised data"):
        build_fatbin([b"garbage bytes"])
    with pytest.raises(ValueError, match="a fatbin cannot be nested"):
        build_fatbin([build_fatbin([artifacts[("cubin", "sm_80")]])])
    with pytest.raises(ValueError, match="NVVM IR must be compiled"):
        build_fatbin([b"BC\xc0\xde" + bytes(32)])
    with pytest.raises(ValueError, match="code_type 'fatbin' cannot be a fatbin part"):
        from_parts([ObjectCode.from_fatbin(build_fatbin([artifacts[("cubin", "sm_80")]]))])
    with pytest.raises(ValueError, match="Part.kind must be one of"):
        Part(b"x", kind="sass")
    with pytest.raises(ValueError, match=r"part #1 \(cubin\): arch sm_75 was given"):
        build_fatbin([artifacts[("cubin", "sm_80")], Part(artifacts[("cubin", "sm_80")], arch="75")])


# -- properties ------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_subset_and_order_builds_and_cuobjdump_lists_exactly_it(artifacts, cuobjdump, data):
    pool = sorted(k for k in artifacts if k[0] in ("cubin", "ptx"))
    chosen = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=8, unique=True))
    compress = data.draw(st.sampled_from([None, False, True]))
    parts = [Part(artifacts[k], arch=k[1] if data.draw(st.booleans()) else None) for k in chosen]
    # an sm_100f cubin given without its arch reads as sm_100: two such parts would be duplicates
    effective = [(k, a if p.arch or k == "ptx" else a.rstrip("f")) for (k, a), p in zip(chosen, parts)]
    assume(len(set(effective)) == len(effective))
    fatbin = build_fatbin(parts, options=FatbinOptions(compress=compress))
    got = sorted(listing(cuobjdump(fatbin, "-lelf", "-lptx")))
    # an f suffix is not in a cubin: it reaches the entry only when given; cuobjdump prints ELF entries without it
    want = sorted(("elf", a.rstrip("f")) if k == "cubin" else ("ptx", a) for k, a in chosen)
    assert got == want
    has_f = [a.endswith("f") and (k == "ptx" or p.arch is not None) for (k, a), p in zip(chosen, parts)]
    assert [bool(f & 0x200000) for _, f in entry_flags(fatbin)] == has_f


def test_import_is_cheap_and_lazy():
    code = (
        "import sys, cuda_fatbin; "
        "print(sorted(m for m in sys.modules if m.startswith('cuda.core') or m == 'cuda.bindings.nvfatbin'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_public_names():
    for name in ("Arch", "Part", "FatbinOptions", "FatbinBuilder", "FatbinError", "from_parts", "build_fatbin",
                 "nvfatbin_version", "detect", "FatbinLibraryError"):  # fmt: skip
        assert name in cuda_fatbin.__all__ and getattr(cuda_fatbin, name) is not None
    with pytest.raises(AttributeError):
        _ = cuda_fatbin.no_such_name
    assert isinstance(Arch.parse("90"), Arch)


def test_tile_ir_parts_are_recorded_with_their_identifier_and_options(cuobjdump):
    """cuobjdump -all prints each Tile IR entry's identifier (none when not given) and its tileIROptions."""
    if nvfatbin_version() < (13, 1):
        pytest.skip("Tile IR needs libnvfatbin 13.1 (FatbinLibraryError there: test_feature_gates)")
    with FatbinBuilder() as b:
        b.add_tile_ir(TILE_IR, identifier="t", options="-O3")
        b.add_tile_ir(TILE_IR)
        with pytest.raises(ValueError, match=r"^options 'a\\x00b' contains a NUL character$"):
            b.add_tile_ir(TILE_IR, options="a\0b")
        with pytest.raises(TypeError, match="^options must be a str or None; got int$"):
            b.add_tile_ir(TILE_IR, options=5)  # type: ignore[arg-type]
        assert b.parts == [{"index": 0, "kind": "tile_ir", "arch": None, "identifier": "t"},
                           {"index": 1, "kind": "tile_ir", "arch": None, "identifier": None}]  # fmt: skip
        data = b.build()
    recs = [(r.get("identifier"), r["tileIROptions"]) for r in all_records(cuobjdump(data, "-all"))]
    assert recs == [("t", "-O3"), (None, "")]


def test_a_failing_call_names_the_part_its_arch_and_identifier():
    part = {"index": 2, "kind": "cubin", "arch": "sm_80", "identifier": "k"}
    e = F.FatbinError("nvFatbinAddCubin", 6, "ERROR_ELF_ARCH_MISMATCH", "arch mismatch", part)
    assert str(e) == (
        "nvFatbinAddCubin failed for part #2 (cubin sm_80, identifier 'k'): ERROR_ELF_ARCH_MISMATCH (6): arch mismatch"
    )
    assert (e.function, e.result, e.result_name, e.error_string, e.part) == (
        "nvFatbinAddCubin", 6, "ERROR_ELF_ARCH_MISMATCH", "arch mismatch", part)  # fmt: skip
    bare = F.FatbinError("nvFatbinAddIndex", 15, "ERROR_INVALID_INDEX", "invalid index input",
                         {"index": 0, "kind": "index", "arch": None, "identifier": None})  # fmt: skip
    assert str(bare) == "nvFatbinAddIndex failed for part #0 (index): ERROR_INVALID_INDEX (15): invalid index input"
    assert str(F.FatbinError("nvFatbinCreate", 1, "ERROR_INTERNAL", "x", None)) == (
        "nvFatbinCreate failed: ERROR_INTERNAL (1): x")  # fmt: skip


def test_a_binding_without_the_function_names_its_version_or_says_it_is_unknown(monkeypatch):
    import importlib.metadata

    class Bare:  # a cuda.bindings.nvfatbin without add_tile_ir
        pass

    monkeypatch.setattr(L, "nvfatbin_version", lambda: (13, 5))
    monkeypatch.setattr(L, "_nvfatbin", lambda: Bare())
    with pytest.raises(F.FatbinLibraryError) as info:
        L._require("add_tile_ir")
    version = importlib.metadata.version("cuda-bindings")
    assert str(info.value) == (
        f"add_tile_ir needs cuda.bindings.nvfatbin.add_tile_ir, which the installed cuda-bindings {version} lacks — "
        "upgrade it: pip install -U cuda-bindings"
    )
    assert (info.value.feature, info.value.required, info.value.found) == ("add_tile_ir", (13, 1), (13, 5))

    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    with pytest.raises(F.FatbinLibraryError, match="the installed cuda-bindings \\(unknown version\\) lacks"):
        L._require("add_tile_ir")


def test_a_part_path_that_is_a_fifo_is_refused_not_waited_on(tmp_path):
    """A past bug of the command (a FIFO source blocked for ever) holds for the API's paths too."""
    import os

    fifo = tmp_path / "part.cubin"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"part #0: cannot read .*part\.cubin.*: a FIFO, not a regular file"):
        build_fatbin([fifo])
    with pytest.raises(ValueError, match="a folder, not a regular file|directory"):
        build_fatbin([str(tmp_path)])


# -- what each mutant of the builder's plumbing would change (docs/testing.md, mutation testing) -----


def test_repr_and_object_code_of_a_builder(cubin80):
    from cuda.core import ObjectCode

    b = FatbinBuilder()
    assert repr(b) == "<FatbinBuilder 0 parts>"
    b.add_cubin(cubin80)
    assert repr(b) == "<FatbinBuilder 1 parts>"
    obj = b.object_code(name="k", symbol_mapping={"scale": "_Z5scalev"})
    obj_type = type(obj)
    assert obj_type is ObjectCode
    obj_plain = plain(obj)
    assert obj_plain == ("fatbin", "k", {"scale": "_Z5scalev"}, b.build())
    unnamed = plain(b.object_code())
    assert unnamed[1:3] == ("", {})
    b.close()
    assert repr(b) == "<FatbinBuilder closed>"


def test_from_parts_defaults_and_options_reach_the_build(cubin80):
    defaults = plain(from_parts([cubin80]))
    assert defaults == ("fatbin", "", {}, build_fatbin([cubin80]))
    compressed = from_parts([cubin80], options=FatbinOptions(compress_all=True, compress_mode="speed"))
    code = bytes(compressed.code)
    assert code != build_fatbin([cubin80])
    assert [f & 0xA000 for _, f in entry_flags(code)] == [0x2000]  # LZ4, as the options ask


def test_a_part_path_that_is_a_symlink_to_a_file_is_read(cubin80, tmp_path):
    """A path part follows a symlink to a regular file, as opening it would (only FIFOs and devices are refused)."""
    target = tmp_path / "k.cubin"
    target.write_bytes(cubin80)
    link = tmp_path / "link.cubin"
    link.symlink_to(target)
    assert build_fatbin([link]) == build_fatbin([str(link)]) == build_fatbin([cubin80])
    assert build_fatbin([Part(link)]) == build_fatbin([cubin80])


def test_a_part_added_to_a_builder_is_named_by_its_index(cubin80):
    with FatbinBuilder() as b:
        b.add(cubin80)
        with pytest.raises(ValueError, match=r"^part #1: data is fatbin: a fatbin cannot be nested; add its entries "
                                             r"instead$"):  # fmt: skip
            b.add(build_fatbin([cubin80]))
        with pytest.raises(ValueError, match=r"^part #1: data is nvvm: NVVM IR must be compiled to LTO-IR first "
                                             r"\(cuda.core Program\(..., 'nvvm'\)\)$"):  # fmt: skip
            b.add(b"BC\xc0\xde" + bytes(32))


def test_ltoir_identifier_options_and_arch_are_checked_and_recorded(artifacts, cuobjdump):
    """cuobjdump -all prints an LTO-IR entry's identifier (none when not given) and its nvvmOptions; a given arch
    must match the LTO-IR's, whose header records an a suffix (so sm_120a is refused for sm_120 LTO-IR)."""
    lt = artifacts[("ltoir", "sm_120")]
    with FatbinBuilder() as b:
        with pytest.raises(TypeError, match="^identifier must be a str or None; got int$"):
            b.add_ltoir(lt, identifier=5)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"^identifier 'a\\x00b' contains a NUL character$"):
            b.add_ltoir(lt, identifier="a\0b")
        with pytest.raises(TypeError, match="^nvvm_options must be a str or None; got int$"):
            b.add_ltoir(lt, nvvm_options=5)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"^nvvm_options 'a\\x00b' contains a NUL character$"):
            b.add_ltoir(lt, nvvm_options="a\0b")
        with pytest.raises(ValueError, match=r"^part #0 \(ltoir\): arch sm_120a was given but the data is for sm_120$"):
            b.add_ltoir(lt, arch="sm_120a")
        b.add_ltoir(lt)
        b.add_ltoir(lt, arch="sm_120f", identifier="k", nvvm_options="-O3")
        assert b.parts == [{"index": 0, "kind": "ltoir", "arch": Arch.parse("sm_120"), "identifier": None},
                           {"index": 1, "kind": "ltoir", "arch": Arch.parse("sm_120f"), "identifier": "k"}]  # fmt: skip
        data = b.build()
    recs = [(r["arch"], r.get("identifier"), r["nvvmOptions"]) for r in all_records(cuobjdump(data, "-all"))]
    assert recs == [("sm_120", None, ""), ("sm_120f", "k", "-O3")]


class _Refusing:
    """cuda.bindings.nvfatbin, but the add functions named in ``refuse`` fail with ERROR_INTERNAL."""

    def __init__(self, real, refuse):
        self._real, self._refuse = real, refuse

    def __getattr__(self, name):
        if name in self._refuse:

            def fail(*args):
                raise self._real.nvFatbinError(1)

            return fail
        return getattr(self._real, name)


ADDS = [  # (method, data or artifact key, the C function a failure names, the part as the message shows it)
    ("add_cubin", ("cubin", "sm_80"), "nvFatbinAddCubin", "cubin sm_80"),
    ("add_ptx", ("ptx", "sm_80"), "nvFatbinAddPTX", "ptx sm_80"),
    ("add_ltoir", ("ltoir", "sm_120"), "nvFatbinAddLTOIR", "ltoir sm_120"),
    ("add_tile_ir", TILE_IR, "nvFatbinAddTileIR", "tile_ir"),
    ("add_index", b"\1" * 16, "nvFatbinAddIndex", "index"),
    ("add_reloc", make_elf([(".text", 1, bytes(8))]), "nvFatbinAddReloc", "reloc"),  # a host ELF object
]


@pytest.mark.parametrize("method, data, c_name, shown", ADDS, ids=[a[0] for a in ADDS])
def test_a_refused_part_names_the_c_function_that_refused_it(artifacts, monkeypatch, method, data, c_name, shown):
    real = L._nvfatbin()
    if not hasattr(real, method):
        pytest.skip(f"this cuda-bindings has no nvfatbin.{method} (FatbinLibraryError: test_binding_without_function)")
    if method == "add_tile_ir" and nvfatbin_version() < (13, 1):
        pytest.skip("Tile IR needs libnvfatbin 13.1")
    monkeypatch.setattr(L, "_nvfatbin", lambda: _Refusing(real, {method}))
    with FatbinBuilder() as b, pytest.raises(FatbinError) as info:
        getattr(b, method)(artifacts[data] if isinstance(data, tuple) else data)
    assert str(info.value).startswith(f"{c_name} failed for part #0 ({shown}): ERROR_INTERNAL (1): ")
    assert b.parts == []  # nothing recorded for a refused part


@pytest.mark.parametrize("kind, c_name", [("cubin", "nvFatbinAddCubin"), ("ptx", "nvFatbinAddPTX"),
                                          ("ltoir", "nvFatbinAddLTOIR")])  # fmt: skip
def test_an_artifact_of_our_compile_refused_names_the_c_function(artifacts, monkeypatch, kind, c_name):
    real = L._nvfatbin()
    monkeypatch.setattr(L, "_nvfatbin", lambda: _Refusing(real, {f"add_{kind}"}))
    spec = "sm_120" if kind == "ltoir" else "sm_80"
    with FatbinBuilder() as b, pytest.raises(FatbinError) as info:
        b._add_artifact(kind, Arch.parse(spec), artifacts[(kind, spec)], "k")
    assert str(info.value).startswith(f"{c_name} failed for part #0 ({kind} {spec}, identifier 'k'): ERROR_INTERNAL")


class _Recording:
    """cuda.bindings.nvfatbin, but the add functions record their arguments after the handle and data, and add
    nothing."""

    def __init__(self, real):
        self._real, self.calls = real, []

    def __getattr__(self, name):
        if name.startswith("add_"):
            return lambda handle, view, size, *rest: self.calls.append((name, size, *rest))
        return getattr(self._real, name)


def test_what_each_add_passes_to_libnvfatbin(artifacts, monkeypatch):
    """libnvfatbin takes C strings: an identifier or options not given go as "", never None (cuobjdump then prints
    no identifier, test_tile_ir_parts_are_recorded_with_their_identifier_and_options)."""
    fake = _Recording(L._nvfatbin())
    monkeypatch.setattr(L, "_nvfatbin", lambda: fake)
    cubin, ptx, lt = artifacts[("cubin", "sm_80")], artifacts[("ptx", "sm_80")], artifacts[("ltoir", "sm_120")]
    with FatbinBuilder() as b:
        b.add_cubin(cubin)
        b.add_cubin(cubin, identifier="c")
        b.add_ptx(ptx)
        b.add_ptx(ptx, identifier="p", ptxas_options="-O3")
        b.add_ltoir(lt)
        b.add_ltoir(lt, identifier="l", nvvm_options="-ftz=1")
        b.add_index(b"\1" * 16)
        b.add_index(b"\1" * 16, identifier="i")
        if hasattr(fake._real, "add_tile_ir") and nvfatbin_version() >= (13, 1):
            b.add_tile_ir(TILE_IR)
            b.add_tile_ir(TILE_IR, identifier="t", options="-O1")
    n, m = len(cubin), len(ptx)
    assert fake.calls[:8] == [
        ("add_cubin", n, "80", ""), ("add_cubin", n, "80", "c"),
        ("add_ptx", m, "80", "", ""), ("add_ptx", m, "80", "p", "-O3"),
        ("add_ltoir", len(lt), "120", "", ""), ("add_ltoir", len(lt), "120", "l", "-ftz=1"),
        ("add_index", 16, ""), ("add_index", 16, "i"),
    ]  # fmt: skip
    assert fake.calls[8:] in ([], [("add_tile_ir", len(TILE_IR), "", ""), ("add_tile_ir", len(TILE_IR), "t", "-O1")])


def test_parts_as_build_fatbin_and_from_parts_take_them(artifacts, cubin80):
    from cuda.core import ObjectCode

    with pytest.raises(ValueError, match=r"^part #1: a cubin sm_80 with identifier None was already added; give it "
                                         r"another identifier or pass allow_duplicates=True"):  # fmt: skip
        build_fatbin([cubin80, cubin80])
    with pytest.raises(ValueError, match="was already added"):
        from_parts([cubin80, cubin80])
    assert len(read_fatbin(build_fatbin([cubin80, cubin80], allow_duplicates=True)).entries) == 2
    with pytest.raises(ValueError, match="^parts is empty: a fatbin needs at least one part$"):
        from_parts([])
    single = ObjectCode.from_cubin(cubin80)
    for parts in (single, cubin80, Part(cubin80), "k.cubin"):
        with pytest.raises(TypeError, match=r"^parts must be an iterable of parts, e\.g\. \[cubin_bytes, "
                                            r"Part\(ptx, kind='ptx'\)\]$"):  # fmt: skip
            build_fatbin(parts)  # type: ignore[arg-type]
    # a Part's arch, identifier and options reach the entry: the LTO-IR's arch checked against its header
    lt = artifacts[("ltoir", "sm_120")]
    with pytest.raises(ValueError, match=r"^part #0 \(ltoir\): arch sm_121 was given but the data is for sm_120$"):
        build_fatbin([Part(lt, arch="sm_121")])
    with pytest.raises(ValueError, match=r"^part #0 \(ptx\): arch sm_90 was given but the data is for sm_80$"):
        build_fatbin([Part(artifacts[("ptx", "sm_80")], arch="compute_90")])
    built = build_fatbin([Part(lt, arch="sm_120f", identifier="x", options="-O3")])
    (entry,) = read_fatbin(built).entries
    assert (str(entry.arch), entry.identifier, entry.options) == ("sm_120f", "x", "-O3")


def test_a_given_arch_must_agree_with_what_the_data_records(artifacts):
    """An a suffix the data does not record is refused where the data would record one (cubin ELF flags, PTX
    .target); PTX also records the f suffix, a cubin does not (docs/formats.md)."""
    with FatbinBuilder() as b:
        with pytest.raises(ValueError, match=r"^part #0 \(cubin\): arch sm_90a was given but the data is for sm_90$"):
            b.add_cubin(artifacts[("cubin", "sm_90")], arch="sm_90a")
        with pytest.raises(ValueError, match=r"^part #0 \(ptx\): arch sm_90a was given but the data is for sm_90$"):
            b.add_ptx(artifacts[("ptx", "sm_90")], arch="sm_90a")
        if ("ptx", "sm_100f") in artifacts:
            with pytest.raises(ValueError, match=r"^part #0 \(ptx\): arch sm_100 was given but the data is for "
                                                 r"sm_100f$"):  # fmt: skip
                b.add_ptx(artifacts[("ptx", "sm_100f")], arch="sm_100")
        with pytest.raises(ValueError, match=r"^part #0 \(ptx\): PTX \.target 'sm_xyz' names no sm_XX arch$"):
            b.add_ptx(".version 9.0\n.target sm_xyz\n.address_size 64\n")
        with pytest.raises(TypeError, match="^ptxas_options must be a str or None; got int$"):
            b.add_ptx(artifacts[("ptx", "sm_90")], ptxas_options=5)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"^part #0 \(ltoir\): the data records no arch; pass arch=$"):
            b.add_ltoir(F.LTOIR_MAGIC + bytes(60))
        assert b.parts == []


def test_the_builds_messages_name_the_part_and_the_call(artifacts, tmp_path, monkeypatch):
    cubin = artifacts[("cubin", "sm_80")]
    with FatbinBuilder() as b, pytest.raises(ValueError) as info:
        b.build()
    assert str(info.value) == "no parts added: add at least one cubin, PTX, LTO-IR, reloc, Tile IR or index"
    if nvfatbin_version() >= (13, 1):
        with FatbinBuilder() as b:
            b.add_tile_ir(TILE_IR)
            with pytest.raises(ValueError) as info:
                b.add_tile_ir(TILE_IR)
        assert str(info.value) == (
            "part #1: a tile_ir with identifier None was already added; give it another identifier or pass "
            "allow_duplicates=True (cuda-fatbin build --allow-duplicates)"
        )
    text = ".version 9.0 .target sm_80 .address_size 64"
    with pytest.raises(ValueError) as info:
        build_fatbin([text])
    assert str(info.value) == (f"part #0: a str part is a file path, and {text[:40]!r}... is not a file; pass PTX text "
                               "as Part(text, kind='ptx') or as bytes")  # fmt: skip
    odd = tmp_path / "notes.txt"
    odd.write_bytes(b"just some text, no device code")
    with pytest.raises(ValueError, match=rf"^part #0 \({re.escape(str(odd))}\): "):
        build_fatbin([odd])
    with pytest.raises(ValueError, match=r"^part #0: cannot read '.*missing\.cubin': "):
        build_fatbin([Part(tmp_path / "missing.cubin")])
    real = L._nvfatbin()
    for refused, c_name in (("size", "nvFatbinSize"), ("get", "nvFatbinGet")):
        monkeypatch.setattr(L, "_nvfatbin", lambda refused=refused: _Refusing(real, {refused}))
        with FatbinBuilder() as b, pytest.raises(FatbinError) as failure:
            b.add_cubin(cubin)
            b.build()
        assert str(failure.value).startswith(f"{c_name} failed: ERROR_INTERNAL (1): ")


def test_an_index_part_reaches_add_index(monkeypatch):
    fake = _Recording(L._nvfatbin())
    monkeypatch.setattr(L, "_nvfatbin", lambda: fake)
    with FatbinBuilder() as b:
        b.add(Part(b"\1" * 16, kind="index", identifier="i"))
    assert fake.calls == [("add_index", 16, "i")]


@pytest.mark.parametrize("feature", sorted(L._FEATURE_SINCE))
def test_a_feature_is_available_from_exactly_its_version(old_library, feature):
    """libnvfatbin 12.6 has -compress-mode, 13.4 -concat (docs/libnvfatbin-versions.md): the version itself passes,
    the minor before it is refused."""
    major, minor = L._FEATURE_SINCE[feature]
    old_library((major, minor))
    L._require(feature)
    old_library((major, minor - 1) if minor else (major - 1, 9))
    with pytest.raises(FatbinLibraryError):
        L._require(feature)


def test_parts_are_copies_and_an_unknown_result_code_is_named(cubin80, monkeypatch):
    with FatbinBuilder() as b:
        b.add_cubin(cubin80)
        b.parts[0]["kind"] = "changed"
        assert b.parts[0]["kind"] == "cubin"
    real = L._nvfatbin()

    class Unknown(_Refusing):
        def __getattr__(self, name):
            if name == "add_cubin":

                def fail(*args):  # a result code newer than the binding: built without its checking __init__
                    error = self._real.nvFatbinError.__new__(self._real.nvFatbinError)
                    error.status = 99
                    raise error

                return fail
            return getattr(self._real, name)

    monkeypatch.setattr(L, "_nvfatbin", lambda: Unknown(real, set()))
    with FatbinBuilder() as b, pytest.raises(FatbinError) as info:
        b.add_cubin(cubin80)
    assert (info.value.result, info.value.result_name) == (99, "RESULT_99")


def test_a_part_given_a_str_path_reads_the_file(cubin80, tmp_path):
    path = tmp_path / "k.cubin"
    path.write_bytes(cubin80)
    assert build_fatbin([Part(str(path))]) == build_fatbin([path]) == build_fatbin([cubin80])


def test_a_binding_without_nvfatbin_says_what_to_install(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_nvfatbin(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "cuda.bindings" and fromlist and "nvfatbin" in fromlist:
            raise ImportError("cannot import name 'nvfatbin' from 'cuda.bindings'")
        return real_import(name, globals, locals, fromlist, level)

    monkeypatch.setattr(builtins, "__import__", no_nvfatbin)
    with pytest.raises(FatbinLibraryError) as info:
        L._nvfatbin()
    assert str(info.value) == (
        "cuda.bindings.nvfatbin cannot be imported (cannot import name 'nvfatbin' from 'cuda.bindings') — install "
        "cuda-bindings with libnvfatbin: pip install 'cuda-core[cu13]' (or 'cuda-bindings[all]')"
    )
    assert (info.value.feature, info.value.required, info.value.found) == ("nvfatbin", None, None)


def test_what_a_part_is_taken_for_and_the_messages_naming_it(artifacts, tmp_path):
    from cuda.core import ObjectCode as RealObjectCode

    class ObjectCode:  # named like cuda.core's, from elsewhere: not one
        code_type = "cubin"
        code = artifacts[("cubin", "sm_80")]

    with pytest.raises(TypeError) as info:
        build_fatbin([ObjectCode()])
    assert str(info.value) == (
        "part #0: expected a Part, a cuda.core ObjectCode, bytes-like data or a path; got ObjectCode"
    )
    with pytest.raises(ValueError) as info:
        build_fatbin([Part(b"garbage bytes")])
    assert str(info.value).startswith("part #0: unrecognised data")
    fatbin = RealObjectCode.from_fatbin(build_fatbin([artifacts[("cubin", "sm_80")]]))
    with pytest.raises(ValueError) as info:
        from_parts([fatbin])
    assert str(info.value) == ("part #0: an ObjectCode of code_type 'fatbin' cannot be a fatbin part (accepted: cubin, "
                               "ptx, ltoir, object)")  # fmt: skip
    gone = tmp_path / "gone.ptx"
    gone.write_bytes(artifacts[("ptx", "sm_80")])
    by_path = RealObjectCode.from_ptx(str(gone))
    gone.unlink()
    with pytest.raises(ValueError, match=r"^part #0: cannot read '.*gone\.ptx': "):
        from_parts([by_path])
    with pytest.raises(ValueError, match=r"^part #0: a str part is a file path, and 'two\\nlines'\.\.\. is not a file"):
        build_fatbin(["two\nlines"])


def test_a_part_named_elf_is_a_cubin_and_a_bad_kind_lists_the_kinds(monkeypatch):
    """ "elf" is the reader's and cuobjdump's name for a cubin entry: such a part goes to nvFatbinAddCubin even when
    its bytes could not tell (here: no ELF header at all, so detection would refuse them)."""
    assert Part(b"\1" * 16, kind="elf").kind == "cubin"
    fake = _Recording(L._nvfatbin())
    monkeypatch.setattr(L, "_nvfatbin", lambda: fake)
    with FatbinBuilder() as b, pytest.raises(ValueError, match=r"^part #0 \(cubin\): "):
        b.add(Part(b"\1" * 16, kind="elf", arch="sm_80"))  # a cubin part: the cubin checks refuse the bytes
    with pytest.raises(ValueError) as info:
        Part(b"x", kind="sass")
    assert str(info.value) == f"Part.kind must be one of {', '.join(F.PART_KINDS)} (or elf); got 'sass'"


def test_a_libnvfatbin_error_without_a_status_or_an_error_string():
    """The binding's exception normally carries ``status``; one without it is reported as result 1
    (NVFATBIN_ERROR_INTERNAL), and when no error string can be had for the code the exception's own text is kept."""
    real = L._nvfatbin()

    class Failed(Exception):
        pass

    def fail(status=None):
        def call():
            e = Failed("the library's own words")
            if status is not None:
                e.status = status
            raise e

        return call

    def binding(get_error_string):
        return type("B", (), {"nvFatbinError": Failed, "Result": real.Result,
                              "get_error_string": staticmethod(get_error_string)})  # fmt: skip

    with pytest.MonkeyPatch.context() as m:
        m.setattr(L, "_nvfatbin", lambda: binding(lambda code: {1: "internal", 5: "bad"}[code]))
        with pytest.raises(F.FatbinError) as info:
            FatbinBuilder._call(fail(), "nvFatbinAddCubin", None)
        assert (info.value.result, info.value.result_name, info.value.error_string) == (
            1, real.Result(1).name, "internal")  # fmt: skip
        with pytest.raises(F.FatbinError) as info:
            FatbinBuilder._call(fail(5), "nvFatbinAddCubin", None)
        assert (info.value.result, info.value.error_string) == (5, "bad")

        def no_string(code):
            raise RuntimeError("no string for that code")

        m.setattr(L, "_nvfatbin", lambda: binding(no_string))
        with pytest.raises(F.FatbinError) as info:
            FatbinBuilder._call(fail(5), "nvFatbinAddCubin", None)
        assert (info.value.result, info.value.error_string) == (5, "the library's own words")


def test_data_that_is_none_or_not_a_flat_buffer_names_the_part(cubin80):
    with FatbinBuilder() as b:
        b.add_cubin(cubin80)
        with pytest.raises(TypeError) as info:
            b.add_cubin(None)  # type: ignore[arg-type]
        assert str(info.value) == "part #1 (cubin): data is None; pass bytes, or PTX text"
        with pytest.raises(ValueError) as bad:
            b.add_cubin(memoryview(cubin80)[::2])
        assert str(bad.value) == "part #1 (cubin): data must be a contiguous buffer"
        with pytest.raises(TypeError) as wrong:
            b.add_ptx(12345)  # type: ignore[arg-type]
        assert str(wrong.value) == "part #1 (ptx): expected bytes, bytearray, memoryview or str; got int"


def test_our_own_artifacts_and_a_parts_options_reach_libnvfatbin_as_c_strings(artifacts, monkeypatch):
    """What Program's compile adds (no identifier: "") and a Tile IR Part's options, as libnvfatbin gets them."""
    fake = _Recording(L._nvfatbin())
    monkeypatch.setattr(L, "_nvfatbin", lambda: fake)
    monkeypatch.setattr(L, "nvfatbin_version", lambda: (13, 5))
    cubin, ptx = artifacts[("cubin", "sm_80")], artifacts[("ptx", "sm_80")]
    sm80 = cuda_fatbin.Arch.parse("sm_80")
    with FatbinBuilder() as b:
        b._add_artifact("cubin", sm80, cubin, None)
        b._add_artifact("ptx", sm80, ptx, None)
        b._add_artifact("ptx", cuda_fatbin.Arch.parse("sm_90"), ptx, "k")
        b.add(Part(TILE_IR, kind="tile_ir", identifier="t", options="-O1"))
    assert fake.calls == [("add_cubin", len(cubin), "80", ""), ("add_ptx", len(ptx), "80", "", ""),
                          ("add_ptx", len(ptx), "90", "k", ""), ("add_tile_ir", len(TILE_IR), "t", "-O1")]  # fmt: skip


def test_a_builder_says_what_it_was_given_and_names_nvfatbincreate_when_it_fails(monkeypatch):
    opts = FatbinOptions(compress=False)
    with FatbinBuilder(opts) as b:
        assert b.options is opts
    with pytest.raises(TypeError) as info:
        FatbinBuilder("-compress=false")  # type: ignore[arg-type]
    assert str(info.value) == "options must be a FatbinOptions; got str"
    real = L._nvfatbin()
    monkeypatch.setattr(L, "_nvfatbin", lambda: _Refusing(real, {"create"}))
    with pytest.raises(F.FatbinError) as failed:
        FatbinBuilder()
    assert (failed.value.function, failed.value.result) == ("nvFatbinCreate", 1)


def test_a_libnvfatbin_that_cannot_be_loaded_says_what_to_install(monkeypatch):
    class Unloadable:
        @staticmethod
        def version():
            raise OSError("libnvfatbin.so.13: cannot open shared object file")

    monkeypatch.setattr(L, "_version_cache", None)
    monkeypatch.setattr(L, "_nvfatbin", lambda: Unloadable)
    with pytest.raises(FatbinLibraryError) as info:
        nvfatbin_version()
    assert str(info.value) == (
        "libnvfatbin could not be loaded (OSError: libnvfatbin.so.13: cannot open shared object file) — install it: "
        "pip install nvidia-nvfatbin (CUDA 13) or nvidia-nvfatbin-cu12 (CUDA 12), or put a CUDA toolkit's lib64 on "
        "LD_LIBRARY_PATH"
    )
    assert (info.value.feature, info.value.required, info.value.found) == ("libnvfatbin", None, None)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"compress": False, "compress_all": True}, "FatbinOptions: compress=False contradicts compress_all=True"),
        ({"compress_mode": "none", "compress_all": True},
         "FatbinOptions: compress_mode='none' contradicts compress_all=True"),
        ({"compress": False, "concat": True},
         "FatbinOptions: concat=True stores one compressed stream; it cannot go with compress=False"),
        ({"compress": True, "compress_mode": "none", "concat": True},
         "FatbinOptions: concat=True stores one compressed stream; it cannot go with compress_mode='none'"),
        ({"address_bits": 16}, "FatbinOptions.address_bits must be one of 32, 64 (or None); got 16"),
        ({"host": "macos"}, "FatbinOptions.host must be one of "
         + ", ".join(repr(h) for h in L._HOSTS) + " (or None); got 'macos'"),
    ],
)  # fmt: skip
def test_options_that_contradict_or_are_out_of_range_say_which(kwargs, message):
    """The message names the option that turned compression off, and lists the allowed values."""
    with pytest.raises(ValueError) as info:
        FatbinOptions(**kwargs)
    assert str(info.value) == message


@pytest.mark.parametrize("version, package", [((12, 3), "nvidia-nvfatbin-cu12"), ((13, 0), "nvidia-nvfatbin")])
def test_a_refused_feature_carries_its_name_and_versions_and_the_package_of_its_major(old_library, version, package):
    """A CUDA 12 feature is fixed by the -cu12 wheel, a CUDA 13 one by nvidia-nvfatbin."""
    feature = next(f for f, since in sorted(L._FEATURE_SINCE.items(), key=lambda kv: kv[1]) if since > version
                   and since[0] == version[0])  # fmt: skip
    required = L._FEATURE_SINCE[feature]
    old_library(version)
    with pytest.raises(FatbinLibraryError) as info:
        L._require(feature)
    assert (info.value.feature, info.value.required, info.value.found) == (feature, required, version)
    assert str(info.value).endswith(f"pip install '{package}>={required[0]}.{required[1]}'")


def test_compression_turned_off_twice_agrees():
    """compress=False and compress_mode='none' say the same thing: together they are no contradiction."""
    opts = FatbinOptions(compress=False, compress_mode="none")
    assert (opts.compress, opts.compress_mode) == (False, "none")
