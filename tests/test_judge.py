# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""judge(): one status per GPU for a whole binary, from its registered, relocatable and stored fatbins
(docs/scan.md, "How a binary is judged"). Each fatbin's own answer is select_entry's (tests/test_select.py,
checked against an H200 in docs/gpu-validation.md); what is tested here is how judge combines them: exactly,
status and reason."""

from __future__ import annotations

import pytest

from cuda_fatbin import Arch, FatbinOptions, Part, build_fatbin, read_fatbin, select_entry
from cuda_fatbin._reader import Fatbin
from cuda_fatbin._select import fatbin_status, judge

from fatbin_testing import nvrtc_compile

OLD_DRIVER = "12.0"  # older than the PTX ISA NVRTC 13 writes: its PTX needs a newer driver
ARCH90 = Arch.parse("sm_90")


@pytest.fixture(scope="module")
def parts(artifacts) -> dict[str, bytes]:
    """Fatbin bytes by spec: "sm_80" (SASS), "compute_90a" (PTX), "stub" (a cubin without code)."""
    out = {}
    for spec in ("sm_80", "sm_86", "sm_90", "sm_90a", "sm_100a"):
        out[spec] = build_fatbin([Part(artifacts[("cubin", spec)], identifier=spec)])
    # the entry's header says 'f' when the part is given that arch (Part.arch)
    out["sm_100f"] = build_fatbin([Part(artifacts[("cubin", "sm_100f")], arch="sm_100f", identifier="sm_100f")])
    for spec in ("sm_80", "sm_90", "sm_90a"):
        out["compute_" + spec[3:]] = build_fatbin([Part(artifacts[("ptx", spec)], identifier="compute_" + spec[3:])])
    stub = nvrtc_compile("", "80", "cubin")
    out["stub"] = build_fatbin([Part(stub, identifier="stub")])
    out["zstd stub"] = build_fatbin([Part(stub, identifier="stub")], options=FatbinOptions(compress_all=True))
    return out


def fb(parts: dict[str, bytes], spec: str, at: int, *, relocatable: bool = False, embedded: bool = False) -> Fatbin:
    """The fatbin of ``spec`` as found at offset ``at`` of a binary, registered, relocatable or stored as data."""
    f = read_fatbin(parts[spec])
    return Fatbin(f.entries, at, f.size, f.version, None, False, relocatable, embedded)


def why(parts: dict[str, bytes], spec: str, gpu: str, driver: str | None = None) -> str:
    return select_entry(read_fatbin(parts[spec]), gpu, driver=driver).reason


def test_a_binary_whose_fatbins_load_in_part_is_partial(parts):
    got = judge([fb(parts, "sm_80", 0), fb(parts, "sm_90", 1)], ["8.0"])
    assert got == {"8.0": {"status": "partial", "reason": (
        "1 of 2 registered fatbins load, 1 do not (kernels in those fail if called): "
        + why(parts, "sm_90", "8.0"))}}  # fmt: skip
    got = judge([fb(parts, "sm_90", 0), fb(parts, "sm_80", 1), fb(parts, "sm_86", 2)], "8.6")  # a string as well
    assert got == {"8.6": {"status": "partial", "reason": (
        "2 of 3 registered fatbins load, 1 do not (kernels in those fail if called): "
        + why(parts, "sm_90", "8.6"))}}  # fmt: skip


def test_none_loading_is_the_worst_and_a_driver_gap_among_loads_is_the_drivers(parts):
    """Not partial when none loads: a fatbin that needs a newer driver beside one with no entry is no entry
    (covered by nothing); when a newer driver would load every one, it needs a newer driver."""
    old = OLD_DRIVER
    got = judge([fb(parts, "compute_90", 0), fb(parts, "sm_80", 1)], ["9.0"], driver=old)
    weakest = "2 registered fatbins, the weakest: "
    assert got == {"9.0": {"status": "no entry", "reason": weakest + why(parts, "sm_80", "9.0", old)}}
    got = judge([fb(parts, "compute_90", 0), fb(parts, "sm_80", 1), fb(parts, "sm_90", 2)], ["9.0"], driver=old)
    assert got == {"9.0": {"status": "partial", "reason": (
        "1 of 3 registered fatbins load, 2 do not (kernels in those fail if called): "
        + why(parts, "compute_90", "9.0", old))}}  # fmt: skip
    got = judge([fb(parts, "compute_90", 0), fb(parts, "sm_90", 1)], ["9.0"], driver=old)
    assert got == {"9.0": {"status": "needs newer driver",
                           "reason": weakest + fatbin_status(fb(parts, "compute_90", 0), ARCH90, old)[1]}}  # fmt: skip


def test_fatbins_that_all_load_give_the_weakest(parts):
    got = judge([fb(parts, "sm_86", 0), fb(parts, "sm_80", 1)], "8.6;9.0")
    weakest = "2 registered fatbins, the weakest: "
    assert got == {
        "8.6": {"status": "SASS compatible", "reason": weakest + why(parts, "sm_80", "8.6")},
        "9.0": {"status": "no entry", "reason": weakest + why(parts, "sm_86", "9.0")},
    }
    alone = judge([fb(parts, "sm_80", 0)], ["8.0"])
    assert alone == {"8.0": {"status": "SASS exact", "reason": why(parts, "sm_80", "8.0")}}


def test_fatbins_without_code_are_skipped_or_are_all_there_is(parts):
    skipped = "; 1 registered fatbins without code skipped"
    got = judge([fb(parts, "stub", 0), fb(parts, "sm_80", 1)], ["9.0", "8.0"])
    assert got == {
        "9.0": {"status": "no entry", "reason": why(parts, "sm_80", "9.0") + skipped},
        "8.0": {"status": "SASS exact", "reason": "2 registered fatbins, the weakest: " + why(parts, "sm_80", "8.0")},
    }  # on 8.0 the code-less sm_80 cubin loads: only a fatbin without code that would fail is passed over
    # a stub that a newer driver would load (zstd before CUDA 12.4) is passed over all the same
    got = judge([fb(parts, "zstd stub", 0), fb(parts, "sm_80", 1)], ["8.0"], driver=OLD_DRIVER)
    assert got == {"8.0": {"status": "SASS exact", "reason": why(parts, "sm_80", "8.0", OLD_DRIVER) + skipped}}
    assert judge([fb(parts, "stub", 0)], ["9.0"]) == {
        "9.0": {"status": "no kernels", "reason": "its fatbins hold no code" + skipped}}  # fmt: skip


def test_the_load_time_link_stands_in_for_what_does_not_fit(parts):
    rdc = fb(parts, "sm_86", 2, relocatable=True)
    link = "the CUDA runtime links the 1 relocatable (-rdc) fatbins at load time: " + select_entry(rdc, "8.6").reason
    # a registered fatbin without an entry, one that loads, and the objects' sm_86 code: linked at load
    got = judge([fb(parts, "sm_90", 0), fb(parts, "sm_80", 1), fb(parts, "sm_86", 2, relocatable=True)], ["8.6"])
    assert got == {"8.6": {"status": "SASS compatible",
                           "reason": "2 registered fatbins, the weakest: " + why(parts, "sm_80", "8.6")}}  # fmt: skip
    got = judge([fb(parts, "sm_90", 0), rdc], ["8.6"])
    assert got == {"8.6": {"status": "SASS exact", "reason": link}}
    got = judge([rdc], ["8.6"])  # no registered fatbin at all
    assert got == {"8.6": {"status": "SASS exact", "reason": link}}
    ptx = fb(parts, "compute_90", 1, relocatable=True)  # PTX the runtime links for the GPU: it serves too
    got = judge([fb(parts, "sm_90", 0), ptx], ["10.0"])
    linked = "the CUDA runtime links the 1 relocatable (-rdc) fatbins at load time: "
    assert got == {"10.0": {"status": "PTX JIT", "reason": linked + select_entry(ptx, "10.0").reason}}


def test_a_load_time_link_that_cannot_serve_is_said(parts):
    cannot = "the load-time link of the 1 relocatable fatbins cannot serve it either"
    got = judge([fb(parts, "sm_90", 0), fb(parts, "sm_100a", 1, relocatable=True)], ["8.0"])
    assert got == {"8.0": {"status": "no entry", "reason": why(parts, "sm_90", "8.0") + "; " + cannot}}
    got = judge([fb(parts, "compute_80", 1, relocatable=True)], ["9.0"], driver=OLD_DRIVER)  # PTX too new
    assert got == {"9.0": {"status": "no entry", "reason": "no fatbin; " + cannot}}
    # every registered fatbin loads: the link is not asked, and says nothing
    got = judge([fb(parts, "sm_80", 0), fb(parts, "sm_100a", 1, relocatable=True)], ["8.0"])
    assert got == {"8.0": {"status": "SASS exact", "reason": why(parts, "sm_80", "8.0")}}


def test_arch_specific_fatbins_are_told_beside_and_decide_only_alone(parts):
    specials = [fb(parts, "sm_90a", 0), fb(parts, "compute_90a", 1), fb(parts, "sm_100a", 2)]
    got = judge(specials, ["9.0"])
    assert got == {"9.0": {"status": "SASS exact",
                           "reason": why(parts, "sm_90a", "9.0") + "; 2 of 3 arch-specific fatbins load"}}  # fmt: skip
    got = judge([*specials, fb(parts, "sm_80", 3)], ["9.0"])  # an ordinary fatbin decides
    assert got == {"9.0": {"status": "no entry",
                           "reason": why(parts, "sm_80", "9.0") + "; 2 of 3 arch-specific fatbins load"}}  # fmt: skip
    got = judge([fb(parts, "compute_90a", 0)], ["9.0"], driver=OLD_DRIVER)
    assert got == {"9.0": {"status": "needs newer driver", "reason": (
        fatbin_status(fb(parts, "compute_90a", 0), ARCH90, OLD_DRIVER)[1]
        + "; 0 of 1 arch-specific fatbins load")}}  # fmt: skip


def test_family_specific_fatbins_are_told_beside_as_arch_specific_ones_are(parts):
    """A fatbin of only 'f' entries (sm_100f) is, like one of only 'a' entries, code a library calls only on its
    family: beside an ordinary fatbin it does not make a 10.x GPU "partial"; the ordinary one decides."""
    got = judge([fb(parts, "sm_80", 0), fb(parts, "sm_100f", 1)], ["8.0", "10.0"])
    assert got == {
        "8.0": {"status": "SASS exact", "reason": why(parts, "sm_80", "8.0") + "; 0 of 1 arch-specific fatbins load"},
        "10.0": {"status": "no entry", "reason": why(parts, "sm_80", "10.0") + "; 1 of 1 arch-specific fatbins load"},
    }
    got = judge([fb(parts, "sm_100f", 0)], ["10.0"])  # alone, it decides
    assert got["10.0"]["status"] == "SASS exact", got


def test_fatbins_stored_as_data_are_told_beside_and_decide_only_alone(parts):
    stored = [fb(parts, "sm_80", 0, embedded=True), fb(parts, "compute_80", 1, embedded=True)]
    got = judge(stored, ["9.0"])
    assert got == {"9.0": {"status": "PTX JIT", "reason": (
        "a fatbin stored as data: " + why(parts, "compute_80", "9.0")
        + "; 1 of 2 fatbins stored as data load (PTX JIT at best)")}}  # fmt: skip
    got = judge(stored, ["9.0"], driver=OLD_DRIVER)
    assert got["9.0"]["status"] == "needs newer driver"
    assert got["9.0"]["reason"].endswith("; 0 of 2 fatbins stored as data load (needs newer driver at best)")
    got = judge([fb(parts, "sm_90", 2), *stored], ["9.0"])  # a registered fatbin decides
    assert got == {"9.0": {"status": "SASS exact", "reason": (
        why(parts, "sm_90", "9.0") + "; 1 of 2 fatbins stored as data load (PTX JIT at best)")}}  # fmt: skip


def test_fatbin_status_without_a_cache_and_with_one(parts):
    gpu = read_fatbin(parts["sm_90"]).entries[0].arch
    f = fb(parts, "compute_80", 0)
    assert fatbin_status(f, gpu, None) == ("PTX JIT", why(parts, "compute_80", "9.0"))
    assert fatbin_status(f, gpu, OLD_DRIVER) == ("needs newer driver", why(parts, "compute_80", "9.0", OLD_DRIVER))
    assert fatbin_status(fb(parts, "sm_80", 0), gpu, None) == ("no entry", why(parts, "sm_80", "9.0"))
    # no entry on any driver: not a newer driver's to fix
    assert fatbin_status(fb(parts, "sm_80", 0), gpu, OLD_DRIVER) == ("no entry", why(parts, "sm_80", "9.0", OLD_DRIVER))
    cache: dict[object, object] = {}
    assert fatbin_status(f, gpu, None, cache) == fatbin_status(f, gpu, None) and len(cache) == 1
    assert fatbin_status(f, gpu, None, cache) == fatbin_status(f, gpu, None) and len(cache) == 1


def test_a_shared_status_cache_answers_as_no_cache_does(artifacts):
    """Fatbins that differ in one part of the cache's key each (an entry's kind, arch, PTX ISA, compression,
    concatenation), on two GPUs and three drivers: every answer through one shared cache is the answer
    without a cache (bugs dropping the driver, the version, the concatenation or the kind
    from the key passed every other test)."""
    import re
    import struct

    from cuda_fatbin import nvfatbin_version

    def status_fatbins(data: bytes) -> Fatbin:
        f = read_fatbin(data)
        return Fatbin(f.entries, 0, f.size, f.version, None)

    ptx = artifacts[("ptx", "sm_80")]
    plain = FatbinOptions(compress=False)
    datas = [build_fatbin([re.sub(rb"^\.version \d+\.\d+", isa, ptx, count=1, flags=re.M)], options=plain)
             for isa in (b".version 8.0", b".version 9.0")]  # fmt: skip
    cubin = artifacts[("cubin", "sm_80")]
    datas += [build_fatbin([cubin]), build_fatbin([cubin], options=FatbinOptions(compress_all=True))]
    datas.append(build_fatbin([artifacts[("cubin", "sm_90")]]))  # the arch
    if nvfatbin_version() >= (13, 4):  # concatenated entries: libnvfatbin 13.4 or newer
        datas.append(build_fatbin([cubin], options=FatbinOptions(concat=True)))
    # an ELF entry whose header carries the PTX entry's version: the same key but for the kind
    elf = bytearray(build_fatbin([cubin], options=plain))
    version = read_fatbin(datas[1]).entries[0].version
    struct.pack_into("<HH", elf, 16 + 24, version[1], version[0])
    datas.append(bytes(elf))
    assert read_fatbin(datas[-1]).entries[0].version == read_fatbin(datas[1]).entries[0].version
    cases = [(status_fatbins(d), Arch.parse(g), driver) for d in datas for g in ("sm_80", "sm_90")
             for driver in (None, "12.4", "13.0")]  # fmt: skip
    cache: dict[object, object] = {}
    for f, gpu, driver in cases:
        assert fatbin_status(f, gpu, driver, cache) == fatbin_status(f, gpu, driver), (f.entries[0], gpu, driver)
    assert len(cache) == len(cases)  # no two of them share a key
    assert len({fatbin_status(f, gpu, driver) for f, gpu, driver in cases}) >= 4


def test_a_fatbin_whose_cubin_cannot_be_read_counts_as_code(parts):
    """An ELF entry that is not an ELF image (here: empty) cannot be told to hold no code: it is counted, not
    skipped as a stub, so the binary is "no entry" on a GPU it does not fit, not "no kernels"."""
    import struct

    entry = struct.pack("<HHIQIIHHIIIQQQ", 2, 0x0101, 64, 0, 0, 0, 0, 1, 90, 0, 0, 0x11, 0, 0)  # sm_90, no payload
    bad = read_fatbin(struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(entry)) + entry)
    got = judge([Fatbin(bad.entries, 0, bad.size, bad.version)], ["8.0"])
    assert got == {"8.0": {"status": "no entry", "reason": select_entry(bad, "8.0").reason}}


def _raw_fatbin(kind: int, sm: int, payload: bytes, *, relocatable: bool = False) -> Fatbin:
    """A fatbin of one uncompressed entry whose header says ``sm`` whatever its payload holds."""
    import struct

    payload += bytes(-len(payload) % 8)
    version = (8, 0) if kind == 1 else (1, 8)
    entry = struct.pack("<HHIQIIHHIIIQQQ", kind, 0x0101, 64, len(payload), 0, 0, version[1], version[0], sm, 0, 0,
                        0x15, 0, 0) + payload  # fmt: skip
    fb = read_fatbin(struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(entry)) + entry)
    return Fatbin(fb.entries, 0, fb.size, fb.version, relocatable=relocatable)


def test_a_cached_answer_is_shared_only_by_fatbins_whose_payloads_agree_with_their_headers():
    """Two fatbins with the same headers, one of them with a PTX payload whose .target is newer than the GPU: the
    first one's answer does not stand for the second (its payload decides, rule header_mismatch), in either order."""
    good = _raw_fatbin(1, 80, b".version 8.0\n.target sm_80\n.address_size 64\n\0")
    bad = _raw_fatbin(1, 80, b".version 8.0\n.target sm_90\n.address_size 64\n\0")
    gpu = Arch.parse("sm_86")
    alone = {name: fatbin_status(fb, gpu, None) for name, fb in (("good", good), ("bad", bad))}
    assert alone["good"][0] == "PTX JIT" and alone["bad"][0] == "no entry"
    for order in (("good", "bad"), ("bad", "good")):
        cache: dict[object, object] = {}
        fbs = {"good": good, "bad": bad}
        assert {name: fatbin_status(fbs[name], gpu, None, cache) for name in order} == alone
    again = _raw_fatbin(1, 80, b".version 8.0\n.target sm_80\n.address_size 64\n\0")
    cache = {}
    fatbin_status(good, gpu, None, cache)
    fatbin_status(again, gpu, None, cache)
    assert len(cache) == 1  # fatbins whose payloads agree still share one answer


def test_a_cached_answer_is_not_shared_by_a_relocatable_fatbin_and_a_registered_one():
    """The reason of a relocatable fatbin says it is linked at load time; a registered one with the same entries
    does not get that reason, nor the other way round."""
    ptx = b".version 8.0\n.target sm_80\n.address_size 64\n\0"
    registered, relocatable = _raw_fatbin(1, 80, ptx), _raw_fatbin(1, 80, ptx, relocatable=True)
    gpu = Arch.parse("sm_86")
    alone = [fatbin_status(fb, gpu, None) for fb in (registered, relocatable)]
    assert alone[0] != alone[1]
    cache: dict[object, object] = {}
    assert [fatbin_status(fb, gpu, None, cache) for fb in (registered, relocatable)] == alone


def test_fatbins_at_the_same_offset_are_judged_each_by_its_own_code(parts):
    """Whether a fatbin has code is remembered per fatbin, not per offset: fatbins read from two files both
    start at 0, and a stub's answer must not pass for a fatbin with kernels, nor the other way round."""
    alone = judge([fb(parts, "stub", 0), fb(parts, "sm_80", 1)], ["9.0"])
    assert judge([fb(parts, "stub", 0), fb(parts, "sm_80", 0)], ["9.0"]) == alone
    assert judge([fb(parts, "sm_80", 0), fb(parts, "stub", 0)], ["9.0"]) == alone
    assert alone["9.0"]["status"] == "no entry"


def test_a_module_of_variables_that_does_not_load_leaves_the_binary_partial(needs_nvcc, tmp_path):
    """A translation unit of ``__device__`` variables only (no kernel) is a module the program uses
    (``cudaGetSymbolAddress``); built for sm_80 alone, it does not load on 9.0 while the kernels' module does.
    It was taken for a kernel-less device-link stub and skipped: 9.0 was reported covered."""
    import subprocess

    from cuda_fatbin import scan

    (tmp_path / "k.cu").write_text('extern "C" __global__ void k(int* p) { *p = 1; }\n')
    (tmp_path / "v.cu").write_text(
        "__device__ int table[4] = {1, 2, 3, 4};\n"
        "int* address() { void* p = 0; cudaGetSymbolAddress(&p, table); return (int*)p; }\n"
    )
    codes = {"k": ["sm_80", "sm_90"], "v": ["sm_80"]}
    for name, archs in codes.items():
        gencode = [f"-gencode=arch=compute_{a[3:]},code={a}" for a in archs]
        subprocess.run([needs_nvcc, "-c", "-Xcompiler", "-fPIC", *gencode, f"{name}.cu", "-o", f"{name}.o"],
                       cwd=tmp_path, check=True, timeout=300)  # fmt: skip
    subprocess.run([needs_nvcc, "-shared", "k.o", "v.o", "-o", "libkv.so"], cwd=tmp_path, check=True, timeout=300)
    [row] = scan([tmp_path / "libkv.so"], gpus="8.0;9.0", max_workers=1).binaries
    assert row.coverage["8.0"]["status"] == "SASS exact"
    assert row.coverage["9.0"]["status"] == "partial", row.coverage["9.0"]
    assert "1 of 2 registered fatbins load" in row.coverage["9.0"]["reason"]
