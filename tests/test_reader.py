# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
from __future__ import annotations

import contextlib
import os
import re
import struct
import subprocess
import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuda_fatbin import Arch, FatbinOptions, Part, build_fatbin, iter_fatbins, nvfatbin_version, read_fatbin
from cuda_fatbin._detect import ptx_version
from cuda_fatbin._reader import FatbinFormatError

from elf_testing import make_elf
from fatbin_testing import KERNEL_SRC, all_records, listing, process_tmp, run_tool

CUOBJDUMP_KIND = {
    "elf": "elf",
    "ptx": "ptx",
    "ltoir": "nvvm",
    "reloc": "relocatable ptx",
    "tile_ir": "tile ir",
    "concat": "concatenated entry",
}
OPTION_KEY = {"ptx": "ptxasOptions", "reloc": "ptxasOptions", "ltoir": "nvvmOptions", "tile_ir": "tileIROptions"}


def our_records(fatbins) -> list[dict[str, str]]:
    """Our entries written the way ``cuobjdump -all`` prints them."""
    out = []
    for fb in fatbins:
        for top in fb.entries:
            for e in (top, *top.members):
                r = {
                    "kind": CUOBJDUMP_KIND[e.kind],
                    "code version": f"[{e.version[0]},{e.version[1]}]",
                    "host": e.host,
                    "compile_size": f"{e.address_bits}bit",
                }
                if e.arch is not None:
                    r["arch"] = str(e.arch)
                if e.compression != "none" and not e.concatenated:
                    r["compressed"] = "yes"
                if e.identifier:
                    r["identifier"] = e.identifier
                if e.options is not None and e.kind in OPTION_KEY:
                    r[OPTION_KEY[e.kind]] = e.options.strip()
                out.append(r)
    return out


def our_listing(fatbins) -> list[tuple[str, str]]:
    """Our entries as ``cuobjdump -lelf -lptx`` lists them (it prints ELF entries without an f suffix)."""
    out = []
    for fb in fatbins:
        for e in fb.iter_entries():
            if e.kind == "elf":
                out.append(("elf", str(e.arch).rstrip("f")))
            elif e.kind in ("ptx", "reloc"):
                out.append(("ptx", str(e.arch)))
    return out


KEYS = (
    "kind",
    "arch",
    "code version",
    "host",
    "compile_size",
    "compressed",
    "identifier",
    "ptxasOptions",
    "nvvmOptions",
)


def assert_matches_cuobjdump(data_or_path, cuobjdump, cuobjdump_path, tmp_path):
    if isinstance(data_or_path, (bytes, bytearray)):
        path = tmp_path / "x.bin"
        path.write_bytes(data_or_path)
    else:
        path = data_or_path
    fatbins = list(iter_fatbins(path))
    assert fatbins, "no fatbin found"
    dump = subprocess.run([cuobjdump_path, "-all", str(path)], capture_output=True, text=True, check=True).stdout
    theirs = [{k: v for k, v in r.items() if k in KEYS} for r in all_records(dump)]
    ours = [{k: v for k, v in r.items() if k in KEYS} for r in our_records(fatbins)]
    assert ours == theirs
    lst = subprocess.run([cuobjdump_path, "-all", "-lelf", "-lptx", str(path)], capture_output=True, text=True)
    assert our_listing(fatbins) == listing(lst.stdout)
    return fatbins


@pytest.fixture(scope="session")
def cu_file(needs_nvcc):
    d = process_tmp("src")
    src = d / "k.cu"
    src.write_text(
        KERNEL_SRC + "template __global__ void scale<float>(float*, float, int);\n"
        "int main() { saxpy<<<1, 1>>>(1.f, nullptr, nullptr, 0); return 0; }\n"
    )
    return src


def nvcc(cu_file, out, *args):
    run_tool(["nvcc", *args, "-o", out, cu_file], cwd=out.parent, outputs=[out])
    return out


@pytest.fixture(scope="session")
def nvcc_fatbins(cu_file):
    d = process_tmp("nvcc")
    archs = [
        "-gencode=arch=compute_75,code=sm_75",
        "-gencode=arch=compute_90a,code=sm_90a",
        "-gencode=arch=compute_100f,code=[sm_100f,compute_100f]",
        "-gencode=arch=compute_120,code=compute_120",
    ]
    out = {"multi": nvcc(cu_file, d / "multi.fatbin", "-fatbin", *archs)}
    for mode in ("default", "size", "speed", "balance", "none"):
        out[mode] = nvcc(cu_file, d / f"{mode}.fatbin", "-fatbin", f"--compress-mode={mode}", "-arch=sm_80")
    out["G"] = nvcc(cu_file, d / "g.fatbin", "-fatbin", "-G", "-arch=sm_86")
    out["lineinfo"] = nvcc(cu_file, d / "li.fatbin", "-fatbin", "-lineinfo", "-arch=sm_89")
    out["dlto"] = nvcc(cu_file, d / "dlto.fatbin", "-fatbin", "-dlto", "-arch=sm_90")
    return out


@pytest.mark.parametrize("name", ["multi", "default", "size", "speed", "balance", "none", "G", "lineinfo", "dlto"])
def test_nvcc_fatbins_match_cuobjdump(name, nvcc_fatbins, cuobjdump, cuobjdump_path, tmp_path):
    fatbins = assert_matches_cuobjdump(nvcc_fatbins[name], cuobjdump, cuobjdump_path, tmp_path)
    compressions = {e.compression for fb in fatbins for e in fb.iter_entries()}
    if name == "speed":
        assert "lz4" in compressions
    if name in ("size", "balance"):
        assert "zstd" in compressions
    if name == "none":
        assert compressions == {"none"}
    if name == "G":
        assert all(e.debug for e in fatbins[0].iter_entries() if e.kind == "elf")
    # extracted ELF payloads equal cuobjdump -xelf byte for byte; PTX equals after normalising
    out = tmp_path / "x"
    out.mkdir()
    subprocess.run([cuobjdump_path, "-xelf", "all", "-xptx", "all", str(nvcc_fatbins[name])], cwd=out, check=True,
                   capture_output=True)  # fmt: skip
    cubins = sorted(p.read_bytes() for p in out.glob("*.cubin"))
    ptxs = sorted(_norm(p.read_bytes()) for p in out.glob("*.ptx"))
    assert sorted(e.data() for fb in fatbins for e in fb.iter_entries() if e.kind == "elf") == cubins
    assert sorted(_norm(e.data()) for fb in fatbins for e in fb.iter_entries() if e.kind == "ptx") == ptxs


def _norm(ptx: bytes) -> bytes:
    """PTX without comments, blank lines, indentation and the trailing NUL (fatbins store it minified)."""
    lines = (line.split(b"//")[0].strip() for line in ptx.rstrip(b"\0").splitlines())
    return b"\n".join(b" ".join(line.split()) for line in lines if line)


def test_nvcc_arch_suffixes(nvcc_fatbins):
    fb = read_fatbin(nvcc_fatbins["multi"])
    got = [(e.kind, str(e.arch)) for e in fb.iter_entries()]
    assert ("elf", "sm_90a") in got and ("elf", "sm_100f") in got and ("ptx", "sm_100f") in got
    assert ("ptx", "sm_120") in got and ("elf", "sm_75") in got


def test_libnvfatbin_options_and_kinds(artifacts, cuobjdump, cuobjdump_path, tmp_path):
    parts = [artifacts[("cubin", "sm_80")], Part(artifacts[("ptx", "sm_90")], options="-O2", identifier="p"),
             Part(artifacts[("ltoir", "sm_90a")], identifier="l", options="-ftz=1")]  # fmt: skip
    cases = [
        FatbinOptions(),
        FatbinOptions(compress=False),
        FatbinOptions(compress_all=True, compress_mode="speed"),
        FatbinOptions(compress_mode="size"),
        FatbinOptions(host="windows", debug=True),
        FatbinOptions(producer="opencl"),
    ]
    if nvfatbin_version() >= (13, 4):
        cases.append(FatbinOptions(concat=True))
    for opts in cases:
        data = build_fatbin(parts, options=opts)
        fatbins = assert_matches_cuobjdump(data, cuobjdump, cuobjdump_path, tmp_path)
        elf = next(e for e in fatbins[0].iter_entries() if e.kind == "elf")
        assert elf.data() == artifacts[("cubin", "sm_80")]
        ptx = next(e for e in fatbins[0].iter_entries() if e.kind == "ptx").data()
        assert _norm(ptx) == _norm(artifacts[("ptx", "sm_90")])


def test_concat_members(artifacts):
    if nvfatbin_version() < (13, 4):
        pytest.skip("libnvfatbin < 13.4 has no -concat")
    cubins = [artifacts[("cubin", s)] for s in ("sm_75", "sm_80", "sm_86")]
    data = build_fatbin(cubins, options=FatbinOptions(concat=True))
    fb = read_fatbin(data)
    assert [e.kind for e in fb.entries] == ["concat"]
    members = fb.entries[0].members
    assert [str(m.arch) for m in members] == ["sm_75", "sm_80", "sm_86"]
    assert [m.data() for m in members] == cubins
    assert [m.kind for m in fb.iter_entries()] == ["elf"] * 3
    assert list(fb.iter_entries(flatten=False)) == list(fb.entries)


def test_tile_ir_reloc_entries(tmp_path, cuobjdump, cuobjdump_path, cu_file):
    obj = nvcc(cu_file, tmp_path / "r.o", "-c", "-rdc=true", "-arch=sm_80")
    parts = [obj]
    tile = b"\x7fTileIR\x00" + bytes([13, 1, 0, 0]) + bytes(20)
    if nvfatbin_version() >= (13, 1):
        parts.append(Part(tile, kind="tile_ir", identifier="t"))
    data = build_fatbin(parts)
    fatbins = assert_matches_cuobjdump(data, cuobjdump, cuobjdump_path, tmp_path)
    by_kind = {e.kind: e for e in fatbins[0].iter_entries()}
    assert str(by_kind["reloc"].arch) == "sm_80" and by_kind["reloc"].options.strip() == "--compile-only"
    if nvfatbin_version() >= (13, 1):
        t = by_kind["tile_ir"]
        assert t.data() == tile and t.version == (13 * 256 + 1, 0) and t.identifier == "t"


@pytest.mark.parametrize("how", ["object", "rdc", "executable", "shared"])
def test_host_files_match_cuobjdump(how, cu_file, tmp_path, cuobjdump, cuobjdump_path):
    archs = ["-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=[sm_90,compute_90]"]
    out = tmp_path / f"{how}.bin"
    extra = {"object": ["-c"], "rdc": ["-c", "-rdc=true"], "executable": [],
             "shared": ["-shared", "-Xcompiler", "-fPIC"]}[how]  # fmt: skip
    nvcc(cu_file, out, *extra, *archs)
    fatbins = assert_matches_cuobjdump(out, cuobjdump, cuobjdump_path, tmp_path)
    sections = {fb.section for fb in fatbins}
    assert sections == ({"__nv_relfatbin"} if how == "rdc" else {".nv_fatbin"})
    data = out.read_bytes()
    for fb in fatbins:
        assert data[fb.offset : fb.offset + 4] == b"\x50\xed\x55\xba"


def test_read_fatbin_inputs(artifacts, tmp_path):
    data = build_fatbin([artifacts[("cubin", "sm_80")]])
    path = tmp_path / "a.fatbin"
    path.write_bytes(data)
    for src in (data, bytearray(data), memoryview(data), path, str(path)):
        fb = read_fatbin(src)
        assert [str(e.arch) for e in fb.entries] == ["sm_80"] and fb.section is None and fb.size == len(data)
    with pytest.raises(TypeError):
        read_fatbin(42)
    with pytest.raises(FileNotFoundError, match="missing.fatbin"):
        read_fatbin(tmp_path / "missing.fatbin")


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda b: b[:10], "truncated fatbin header"),
        (lambda b: b"\x00" * 4 + b[4:], "not a fatbin"),
        (lambda b: b[:8] + struct.pack("<Q", 10**12) + b[16:], "declares"),
        (lambda b: b[:6] + struct.pack("<H", 4) + b[8:], "header size 4"),
        (lambda b: b[: 16 + 4] + struct.pack("<I", 8) + b[24:], "entry header size 8"),
        (lambda b: b[: 16 + 8] + struct.pack("<Q", 10**9) + b[32:], "runs past the end"),
        (lambda b: b[: 16 + 0x20] + struct.pack("<II", 0x40, 10**6) + b[16 + 0x28 :], "identifier"),
    ],
)
def test_malformed_raises_with_offset(artifacts, mutate, message):
    data = build_fatbin([Part(artifacts[("cubin", "sm_80")], identifier="x")], options=FatbinOptions(compress=False))
    with pytest.raises(FatbinFormatError, match=message) as info:
        read_fatbin(mutate(data))
    assert re.search(r"at offset 0x[0-9a-f]+", str(info.value)) and info.value.offset >= 0


def test_bad_compressed_payloads(artifacts):
    data = bytearray(build_fatbin([artifacts[("ptx", "sm_80")]], options=FatbinOptions(compress_all=True)))
    fb = read_fatbin(bytes(data))
    entry = fb.entries[0]
    assert entry.compression == "zstd"
    struct.pack_into("<Q", data, entry.offset + 0x38, entry.size + 5)  # header promises more than the stream holds
    with pytest.raises(FatbinFormatError, match="decompressed to"):
        read_fatbin(bytes(data)).entries[0].data()
    struct.pack_into("<Q", data, entry.offset + 0x38, 10**12)  # absurd size: refused before any allocation
    with pytest.raises(FatbinFormatError, match="over 1024x"):
        read_fatbin(bytes(data))
    data = bytearray(build_fatbin([artifacts[("ptx", "sm_80")]], options=FatbinOptions(compress_all=True)))
    data[entry.offset + 64 + 8 : entry.offset + 64 + 24] = b"\xff" * 16  # corrupt the stream itself
    with pytest.raises(FatbinFormatError, match="does not decompress|decompressed to"):
        read_fatbin(bytes(data)).entries[0].data()


def test_obfuscated_ltoir_is_reported(artifacts):
    fb = read_fatbin(build_fatbin([artifacts[("ltoir", "sm_80")]]))
    entry = fb.entries[0]
    assert entry.kind == "ltoir" and entry.compression == "obfuscated"
    with pytest.raises(FatbinFormatError, match="obfuscated"):
        entry.data()


def test_iter_fatbins_rejects_non_fatbins(artifacts, tmp_path):
    with pytest.raises(FatbinFormatError, match="neither a fatbin"):
        list(iter_fatbins(b"hello world, not a binary"))
    with pytest.raises(FatbinFormatError, match="not a fatbin"):
        read_fatbin(b"\x7fELF\x02\x01\x01" + bytes(57))  # a host ELF header: read_fatbin is not for host files
    with pytest.raises(FatbinFormatError, match="malformed ELF"):
        list(iter_fatbins(b"\x7fELF\x02\x01\x01" + bytes(57)[:9]))


def test_back_to_back_fatbins_in_raw_data(artifacts):
    one = build_fatbin([artifacts[("cubin", "sm_80")]])
    two = build_fatbin([artifacts[("cubin", "sm_90")]])
    fbs = list(iter_fatbins(one + two))
    assert [str(fb.entries[0].arch) for fb in fbs] == ["sm_80", "sm_90"]
    assert fbs[1].offset == len(one)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzz_only_format_errors(artifacts, data):
    """Mutated and truncated fatbins: only FatbinFormatError, in bounded time and memory."""
    opts = data.draw(st.sampled_from([FatbinOptions(compress=False), FatbinOptions(compress_all=True),
                                      FatbinOptions(compress_all=True, compress_mode="speed")]))  # fmt: skip
    base = _fuzz_seed(artifacts, opts)
    blob = bytearray(base)
    for _ in range(data.draw(st.integers(0, 6))):
        pos = data.draw(st.integers(0, len(blob) - 1))
        blob[pos] = data.draw(st.integers(0, 255))
    blob = blob[: data.draw(st.integers(0, len(blob)))]
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        for fb in iter_fatbins(bytes(blob)):
            for e in fb.iter_entries():
                with contextlib.suppress(FatbinFormatError):
                    e.data()
    except FatbinFormatError:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert time.perf_counter() - t0 < 2.0
    assert peak < 16 * 1024 * 1024


_SEEDS: dict = {}


def _fuzz_seed(artifacts, opts) -> bytes:
    if opts not in _SEEDS:
        _SEEDS[opts] = build_fatbin([artifacts[("cubin", "sm_80")], Part(artifacts[("ptx", "sm_90")], identifier="p",
                                     options="-O3")], options=opts)  # fmt: skip
    return _SEEDS[opts]


CONCAT_SPECS = ["sm_75", "sm_80", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_100f", "sm_120"]


@pytest.mark.parametrize("mode", [None, "speed", "size", "balance"])
def test_concat_every_mode_matches_cuobjdump(mode, artifacts, supported_specs, cuobjdump, cuobjdump_path, tmp_path):
    """ELF members of SM >= 100 carry an options record (.nv.compat): the member table must skip it."""
    if nvfatbin_version() < (13, 4):
        pytest.skip("libnvfatbin < 13.4 has no -concat")
    specs = [s for s in CONCAT_SPECS if s in supported_specs]
    parts = [Part(artifacts[("cubin", s)], "cubin", s) for s in specs]
    parts += [Part(artifacts[("ptx", "sm_120")], "ptx", "sm_120", options="-O3"),
              Part(artifacts[("ptx", "sm_80")], "ptx", "sm_80")]  # fmt: skip
    data = build_fatbin(parts, options=FatbinOptions(concat=True, compress_mode=mode))
    fatbins = assert_matches_cuobjdump(data, cuobjdump, cuobjdump_path, tmp_path)
    members = [e for fb in fatbins for e in fb.iter_entries()]
    assert all(e.concatenated and e.compression == "none" for e in members)
    assert {e.compression for fb in fatbins for e in fb.entries} == {"lz4" if mode == "speed" else "zstd"}
    assert sorted(str(e.arch) for e in members if e.kind == "elf") == sorted(specs)
    assert [e.options for e in members if e.kind == "ptx"] == ["-O3", ""]
    by_arch = {str(e.arch): e.data() for e in members if e.kind == "elf"}
    assert all(by_arch[s] == artifacts[("cubin", s)] for s in specs)
    out = tmp_path / "x"
    out.mkdir()
    path = tmp_path / "c.fatbin"
    path.write_bytes(data)
    subprocess.run([cuobjdump_path, "-xelf", "all", "-xptx", "all", str(path)], cwd=out, check=True,
                   capture_output=True)  # fmt: skip
    from cuda_fatbin import extract_entries

    ours = {p.name: p.read_bytes() for p in extract_entries(path, tmp_path / "y", kinds=["elf", "ptx"])}
    assert ours == {p.name: p.read_bytes() for p in out.iterdir()}


@pytest.mark.parametrize("name", ["nvrtc129_sm_75", "nvrtc129_sm_80", "nvrtc129_sm_90a", "nvrtc129_sm_100a"])
def test_single_cubins_read_as_cuobjdump_lists_them(name, cuobjdump_path, tmp_path):
    """ptxas 12.9 cubins (ELF ABI 7 below sm_100, 8 from it; a marker in e_flags) as one-entry fatbins."""
    path = Path(__file__).parent / "data" / f"{name}.cubin"
    fb = read_fatbin(path)
    [entry] = fb.entries
    assert fb.standalone and entry.kind == "elf" and str(entry.arch) == name.split("_", 1)[1]
    assert entry.version == (1, 8 if "100" in name else 7) and entry.data() == path.read_bytes()
    assert [fb.standalone for fb in iter_fatbins(path)] == [True]
    out = subprocess.run([cuobjdump_path, "-lelf", str(path)], capture_output=True, text=True).stdout
    assert our_listing([fb]) == listing(out)


def test_single_artifacts_of_every_kind(artifacts, tmp_path):
    ptx = read_fatbin(artifacts[("ptx", "sm_90a")])
    assert [(e.kind, str(e.arch), e.version[0]) for e in ptx.entries] == [("ptx", "sm_90a", 9)]
    lto = read_fatbin(artifacts[("ltoir", "sm_80")])
    assert [(e.kind, str(e.arch)) for e in lto.entries] == [("ltoir", "sm_80")]
    tile = b"\x7fTileIR\x00" + bytes([13, 1, 0, 0]) + bytes(20)
    assert [(e.kind, e.version) for e in read_fatbin(tile).entries] == [("tile_ir", (13 * 256 + 1, 0))]
    assert read_fatbin(artifacts[("ptx", "sm_80")]).entries[0].data() == artifacts[("ptx", "sm_80")]
    from cuda_fatbin import select_entry

    assert select_entry(read_fatbin(artifacts[("cubin", "sm_90")]), "9.0").status == "SASS exact"


def test_embedded_fatbins_in_data_and_in_elf_sections(artifacts):
    from test_hostile import elf_with_sections

    fat = build_fatbin([artifacts[("cubin", "sm_90")], artifacts[("ptx", "sm_80")]])
    blob = b"\x7fXYZ" + b"junk" * 100 + b"\x50\xed\x55\xba garbage that only looks like a header" + bytes(4) + fat
    with pytest.raises(FatbinFormatError, match="neither a fatbin"):
        list(iter_fatbins(blob))
    [found] = list(iter_fatbins(blob, embedded=True))
    assert found.embedded and found.offset == len(blob) - len(fat) and found.section is None
    assert [e.kind for e in found.iter_entries()] == ["elf", "ptx"]
    elf = elf_with_sections(fat + b"\0" * 64 + fat, [(".nv_fatbin", 0, len(fat)), (".rodata", len(fat), len(fat) + 64)])
    plain = list(iter_fatbins(elf))
    assert [(fb.section, fb.embedded) for fb in plain] == [(".nv_fatbin", False)]
    both = list(iter_fatbins(elf, embedded=True))
    assert [(fb.section, fb.embedded) for fb in both] == [(".nv_fatbin", False), (".rodata", True)]
    assert both[1].offset == 64 + len(fat) + 64


def test_relocatable_listing_follows_cuobjdump(cu_file, tmp_path, cuobjdump_path):
    """__nv_relfatbin: listed in .o files, left out of linked programs unless asked for (as cuobjdump)."""
    obj = nvcc(cu_file, tmp_path / "r.o", "-c", "-rdc=true", "-arch=sm_80")
    app = nvcc(cu_file, tmp_path / "app", "-rdc=true", "-arch=sm_80")
    assert [fb.relocatable for fb in iter_fatbins(obj)] == [True]
    linked = list(iter_fatbins(app))
    assert [fb.relocatable for fb in linked] == [False]
    assert any(fb.relocatable for fb in iter_fatbins(app, relocatable=True))
    out = subprocess.run([cuobjdump_path, "-lelf", "-lptx", str(app)], capture_output=True, text=True).stdout
    assert our_listing(linked) == listing(out)


@pytest.mark.parametrize("mode", ["speed", "size"], ids=["lz4", "zstd"])
@pytest.mark.parametrize("delta", [+5, -5], ids=["header claims more", "header claims less"])
def test_decompressed_size_is_checked_both_ways(artifacts, mode, delta):
    """The header's uncompressed size must equal what the stream gives, longer or shorter (python-lz4 returns
    a short block without raising when told a larger size, so this check is the only guard there)."""
    options = FatbinOptions(compress_all=True, compress_mode=mode)
    data = bytearray(build_fatbin([artifacts[("ptx", "sm_80")]], options=options))
    entry = read_fatbin(bytes(data)).entries[0]
    assert entry.compression == {"speed": "lz4", "size": "zstd"}[mode]
    struct.pack_into("<Q", data, entry.offset + 0x38, entry.size + delta)
    with pytest.raises(FatbinFormatError, match="decompressed to|does not decompress"):
        read_fatbin(bytes(data)).entries[0].data()


def test_entries_as_json_and_repr(artifacts):
    cubin, ptx = artifacts[("cubin", "sm_80")], artifacts[("ptx", "sm_90")]
    data = build_fatbin([Part(cubin, identifier="k.cu"), Part(ptx, kind="ptx", options="-O3")])
    fb = read_fatbin(data)
    elf, text = fb.entries
    assert elf.as_dict() == {
        "kind": "elf", "arch": "sm_80", "sm": 80, "version": f"{elf.version[0]}.{elf.version[1]}",
        "identifier": "k.cu", "options": None, "host": "linux", "address_bits": 64, "debug": False, "producer": None,
        "compression": "none", "size": len(cubin), "stored_size": len(cubin), "offset": 16, "concatenated": False,
    }  # fmt: skip
    assert elf.version[0] == 1 and elf.as_dict()["version"] != "1.1"
    d = text.as_dict()
    assert (d["kind"], d["arch"], d["sm"], d["identifier"], d["options"], d["compression"]) == (
        "ptx", "sm_90", 90, None, "-O3", "zstd"
    )  # fmt: skip
    assert d["version"] == "{}.{}".format(*ptx_version(ptx)) and d["offset"] == text.offset > 16
    assert d["size"] == len(text.data()) > d["stored_size"] > 0
    assert repr(elf) == f"<FatbinEntry elf sm_80 'k.cu' {len(cubin)} bytes, none at 0x10>"
    assert repr(text) == f"<FatbinEntry ptx sm_90 {text.size} bytes, zstd at {text.offset:#x}>"
    assert repr(fb) == f"<Fatbin 2 entries, {len(data)} bytes at 0x0>"
    assert repr(read_fatbin(cubin)) == f"<Fatbin 1 entries, {len(cubin)} bytes at 0x0 standalone>"


def test_fatbin_repr_names_its_section_and_marks(artifacts):
    blob = build_fatbin([artifacts[("cubin", "sm_80")]])
    image = make_elf([(".nv_fatbin", 1, blob), ("__nv_relfatbin", 1, blob), (".rodata", 1, bytes(8) + blob)])
    fbs = list(iter_fatbins(image, embedded=True, relocatable=True))
    assert [repr(fb) for fb in fbs] == [
        f"<Fatbin 1 entries, {len(blob)} bytes at {fbs[0].offset:#x} in .nv_fatbin>",
        f"<Fatbin 1 entries, {len(blob)} bytes at {fbs[1].offset:#x} in __nv_relfatbin relocatable>",
        f"<Fatbin 1 entries, {len(blob)} bytes at {fbs[2].offset:#x} in .rodata embedded>",
    ]
    if nvfatbin_version() >= (13, 4):
        concat = build_fatbin([artifacts[("cubin", "sm_80")]], options=FatbinOptions(concat=True))
        top = read_fatbin(concat).entries[0]
        assert repr(top).startswith("<FatbinEntry concat ") and top.as_dict()["arch"] is None


def _pipe(data: bytes) -> str:
    """A path to the read end of a pipe that a thread fills with ``data``."""
    import threading

    r, w = os.pipe()

    def fill():
        with os.fdopen(w, "wb") as f:
            f.write(data)

    threading.Thread(target=fill, daemon=True).start()
    return f"/dev/fd/{r}"


def test_pipes_and_standard_input_are_read_up_to_the_limit(artifacts, monkeypatch):
    import io
    import sys

    from cuda_fatbin import _source

    data = build_fatbin([artifacts[("cubin", "sm_80")]])
    assert [e.arch for e in read_fatbin(_pipe(data)).entries] == [Arch(8, 0)]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert [e.arch for e in read_fatbin("-").entries] == [Arch(8, 0)]
    monkeypatch.setattr(_source, "MAX_STREAM", len(data))
    assert read_fatbin(_pipe(data)).size == len(data)  # exactly the limit: read
    monkeypatch.setattr(_source, "MAX_STREAM", len(data) - 1)
    with pytest.raises(FatbinFormatError) as info:
        read_fatbin(_pipe(data))
    assert info.value.offset == len(data) - 1
    assert info.value.message.startswith("'/dev/fd/") and f"holds over {len(data) - 1} bytes; save it to a file" in (
        info.value.message
    )
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    with pytest.raises(FatbinFormatError, match="standard input holds over"):
        read_fatbin("-")
