# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
from __future__ import annotations

import struct
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuda_fatbin import Arch, detect
from cuda_fatbin._detect import cubin_arch, ltoir_arch, ptx_version

from elf_testing import make_elf
from fatbin_testing import DATA, KERNEL_SRC, listing, nvrtc_compile


def test_cubins_for_every_supported_arch(artifacts, supported_specs, cuobjdump):
    """Our arch equals cuobjdump's for every NVRTC cubin (ELF ABI 8), except the f suffix cubins never record."""
    for spec in supported_specs:
        data = artifacts[("cubin", spec)]
        kind, arch = detect(data)
        assert kind == "cubin"
        [(_, oracle)] = listing(cuobjdump(data, "-lelf"))
        assert str(arch) == oracle, spec
        assert arch == Arch.parse(spec.rstrip("f")) if spec.endswith("f") else arch == Arch.parse(spec)


@pytest.mark.parametrize("name", ["nvrtc129_sm_75", "nvrtc129_sm_80", "nvrtc129_sm_90a", "nvrtc129_sm_100a"])
def test_cubin_fixtures_of_nvrtc_12_9(name, cuobjdump):
    """ELF ABI 7 (SM < 100) and the 12.9 ABI 8 e_flags a-marker (sm_100a)."""
    data = (DATA / f"{name}.cubin").read_bytes()
    abi = data[8]
    assert abi == (8 if "100" in name else 7)
    kind, arch = detect(data)
    [(_, oracle)] = listing(cuobjdump(data, "-lelf"))
    assert (kind, str(arch)) == ("cubin", oracle) == ("cubin", name.split("_", 1)[1])
    assert cubin_arch(data)[1] is True


def test_nvcc_cubins(tmp_path, cuobjdump, needs_nvcc):
    src = tmp_path / "k.cu"
    src.write_text(KERNEL_SRC)
    for arch in ("sm_75", "sm_90a", "sm_100a", "sm_120"):
        out = tmp_path / f"{arch}.cubin"
        subprocess.run(["nvcc", "-cubin", f"-arch={arch}", "-o", str(out), str(src)], check=True)
        data = out.read_bytes()
        [(_, oracle)] = listing(cuobjdump(data, "-lelf"))
        assert str(detect(data).arch) == oracle == arch


def test_ptx_targets(artifacts, supported_specs):
    for spec in supported_specs:
        kind, arch = detect(artifacts[("ptx", spec)])
        assert kind == "ptx"
        assert arch == Arch.parse(spec), spec
        assert ptx_version(artifacts[("ptx", spec)]) >= (8, 0)


def test_ptx_as_str_and_memoryview(ptx80):
    assert detect(ptx80.decode().rstrip("\0")) == ("ptx", Arch(8, 0))
    assert detect(memoryview(ptx80)) == ("ptx", Arch(8, 0))
    assert detect(bytearray(ptx80)) == ("ptx", Arch(8, 0))


def test_ptx_with_target_options():
    ptx = b"//\n// comment\n.version 9.0\n.target sm_90a, debug\n.address_size 64\n"
    assert detect(ptx) == ("ptx", Arch(9, 0, "a"))


def test_ptx_with_bad_target():
    with pytest.raises(ValueError, match="names no sm_XX"):
        detect(b".version 9.0\n.target compute_xx\n")


def test_ltoir(artifacts):
    for spec in ("sm_80", "sm_90a", "sm_120"):
        assert detect(artifacts[("ltoir", spec)]) == ("ltoir", Arch.parse(spec))
    # f is not recorded in LTO-IR: sm_100f reads as sm_100
    assert detect(artifacts[("ltoir", "sm_100f")]) == ("ltoir", Arch(10, 0))


@pytest.mark.parametrize("spec", ["sm_75", "sm_89", "sm_103a", "sm_107", "sm_110", "sm_110a", "sm_121"])
def test_ltoir_every_arch(spec, supported_specs):
    if spec not in supported_specs:
        pytest.skip("NVRTC lacks it")
    # NVRTC writes sm_110 LTO-IR with its pre-CUDA-13 code 101; we report sm_110
    assert detect(nvrtc_compile(KERNEL_SRC, spec[3:], "ltoir")) == ("ltoir", Arch.parse(spec))


def test_ltoir_unknown_layout_has_no_arch():
    assert ltoir_arch(b"\xed\x43\x4e\x7f" + b"\x00" * 8) is None
    assert detect(b"\xed\x43\x4e\x7f" + b"\xff" * 200) == ("ltoir", None)


def test_other_magics(tmp_path, needs_nvcc):
    assert detect(b"\x50\xed\x55\xba\x01\x00\x10\x00" + bytes(8)) == ("fatbin", None)
    assert detect(b"\x7fTileIR\x00\x0d\x01\x00") == ("tile_ir", None)
    assert detect(b"BC\xc0\xde" + bytes(20)) == ("nvvm", None)
    src = tmp_path / "h.cu"
    src.write_text(KERNEL_SRC)
    obj = tmp_path / "h.o"
    subprocess.run(["nvcc", "-c", "-rdc=true", "-arch=sm_80", "-o", str(obj), str(src)], check=True)
    assert detect(obj.read_bytes()) == ("host_elf", None)


@pytest.mark.parametrize("bad", [b"", b"hello world", b"\x00" * 64, b"\x7fELF", b"\x7fELF\x02\x01\x01" + bytes(9)])
def test_unrecognised_or_malformed(bad):
    with pytest.raises(ValueError):
        detect(bad)


def test_bad_types():
    with pytest.raises(TypeError):
        detect(12)
    with pytest.raises(ValueError, match="contiguous"):
        detect(memoryview(b"abcdef")[::2])


def test_cubin_with_bad_sm_in_flags(cubin80):
    data = bytearray(cubin80)
    flags = struct.unpack_from("<I", data, 48)[0]
    struct.pack_into("<I", data, 48, flags & ~0xFF00)  # SM 0
    with pytest.raises(ValueError, match="e_flags"):
        detect(bytes(data))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_truncated_or_mutated_cubins_raise_only_value_error(artifacts, data):
    """Any truncation or byte change of a cubin gives a result or a ValueError, never another exception."""
    keys = sorted(k for k in artifacts if k[0] == "cubin")
    blob = bytearray(artifacts[data.draw(st.sampled_from(keys))])
    cut = data.draw(st.integers(0, len(blob)))
    blob = blob[:cut]
    for _ in range(data.draw(st.integers(0, 4))):
        if blob:
            blob[data.draw(st.integers(0, len(blob) - 1))] = data.draw(st.integers(0, 255))
    try:
        _kind, arch = detect(bytes(blob))
    except ValueError:
        return
    assert arch is None or isinstance(arch, Arch)


def _ltoir_header(*records: tuple[int, int], end: bool = True) -> bytes:
    """The LTO-IR header layout ltoir_arch documents: magic, then ``{u16 tag, u16 value}`` records from 24."""
    body = b"".join(struct.pack("<HH", tag, value) for tag, value in records)
    return b"\xed\x43\x4e\x7f" + bytes(20) + body + (struct.pack("<HH", 0x63, 0) if end else b"")


def test_ltoir_header_records():
    assert ltoir_arch(_ltoir_header((1, 900))) == Arch(9, 0)
    assert ltoir_arch(_ltoir_header((1, 900), (0x20, 1))) == Arch(9, 0, "a")
    assert ltoir_arch(_ltoir_header((1, 900), (0x20, 0))) == Arch(9, 0)
    assert ltoir_arch(_ltoir_header((5, 1), (1, 1000), (7, 1))) == Arch(10, 0)  # other tags are not the a flag
    assert ltoir_arch(_ltoir_header((1, 1010))) == Arch(11, 0)  # sm_110's pre-CUDA-13 code
    assert ltoir_arch(_ltoir_header((1, 905))) is None  # not ten times an SM number
    assert ltoir_arch(_ltoir_header((5, 1))) is None  # no SM record
    assert ltoir_arch(_ltoir_header((1, 12000))) is None  # major 120 is no arch


def test_ltoir_header_bounds():
    exact = _ltoir_header((1, 900))
    assert ltoir_arch(exact) == Arch(9, 0)  # the end record may end the data
    assert ltoir_arch(exact[:-1]) is None  # a cut end record
    assert ltoir_arch(_ltoir_header((1, 900), end=False)) is None  # no end record
    fifteen = _ltoir_header((1, 900), *[(5, 0)] * 14)  # 15 records + the end: the 16th read ends it
    assert ltoir_arch(fifteen) == Arch(9, 0)
    sixteen = _ltoir_header((1, 900), *[(5, 0)] * 15)  # the end record would be the 17th: not read
    assert ltoir_arch(sixteen) is None


def test_ptx_version_of_data_without_a_version_is_none():
    assert ptx_version(b".target sm_90\n") is None
    assert ptx_version(".version 8.7\n.target sm_90\n") == (8, 7)


# -- the cubin arch from synthetic images: e_flags layouts and .nv.compat records (docs/formats.md) ----------

NV_COMPAT = 0x70000086
ARCH_SPECIFIC = 0x09  # the .nv.compat attribute that says "a"


def _cubin(flags: int, *, abi: int = 8, osabi: int = 0x41, compat: bytes | None = None) -> bytes:
    sections = [(".text.k", 1, b"\0" * 16)]
    if compat is not None:
        sections.append((".nv.compat", NV_COMPAT, compat))
    return make_elf(sections, machine=190, osabi=osabi, abi_version=abi, flags=flags)


def _rec(fmt: int, attr: int, value: bytes = b"\0\0") -> bytes:
    return bytes([fmt, attr]) + value


@pytest.mark.parametrize(
    "abi, osabi, flags, expected",
    [  # ABI >= 8 or OS/ABI 0x41: SM in bits 8..15, "a" in bit 3; else SM in bits 0..7, "a" in bit 11
        (8, 0, 100 << 8 | 0x8, ("sm_100a", True)),
        (0x88, 0, 100 << 8 | 0x8, ("sm_100a", True)),  # header bytes are unsigned: ABI 136, not -120
        (9, 0x33, 120 << 8, ("sm_120", False)),
        (7, 0x41, 90 << 8 | 0x8, ("sm_90a", True)),
        (7, 0x41, 90 << 8 | 0x1, ("sm_90", False)),  # only bit 3 is the marker
        (7, 0x33, 90 | 0x800, ("sm_90a", True)),
        (7, 0x33, 86, ("sm_86", True)),  # the old layout always says
        (7, 0x40, 86, ("sm_86", True)),
    ],
)
def test_cubin_e_flags_layouts(abi, osabi, flags, expected):
    arch, known = cubin_arch(_cubin(flags, abi=abi, osabi=osabi))
    assert (str(arch), known) == expected


@pytest.mark.parametrize(
    "records, expected",
    [
        ([_rec(2, ARCH_SPECIFIC, b"\x01\0")], ("sm_100a", True)),
        ([_rec(2, ARCH_SPECIFIC, b"\0\0")], ("sm_100", True)),  # says "not a": known
        ([_rec(3, ARCH_SPECIFIC, b"\x00\x01")], ("sm_100a", True)),  # u16 value 256
        ([_rec(3, ARCH_SPECIFIC, b"\0\0")], ("sm_100", True)),
        (
            [_rec(1, 3), _rec(2, 4, b"\x07\0"), _rec(3, 5, b"\x01\x01"), _rec(2, ARCH_SPECIFIC, b"\x01\0")],
            ("sm_100a", True),
        ),
        ([_rec(4, 7, b"\x00\x00"), _rec(2, ARCH_SPECIFIC, b"\x01\0")], ("sm_100a", True)),  # 0-byte blob
        ([_rec(4, 7, b"\x03\x00") + b"abc", _rec(2, ARCH_SPECIFIC, b"\x01\0")], ("sm_100a", True)),
        ([_rec(4, 7, b"\x05\x00") + b"\x09\x09\x02\x09\x01", _rec(3, ARCH_SPECIFIC, b"\x01\0")], ("sm_100a", True)),
        ([_rec(4, ARCH_SPECIFIC, b"\x01\x00") + b"\x01"], ("sm_100", False)),  # a blob is no answer
        ([_rec(1, ARCH_SPECIFIC)], ("sm_100", False)),
        ([_rec(5, 1), _rec(2, ARCH_SPECIFIC, b"\x01\0")], ("sm_100", False)),  # unknown format: stop reading
        ([_rec(2, 8, b"\x01\0")], ("sm_100", False)),  # another attribute
        ([], ("sm_100", False)),
    ],
)
def test_nv_compat_records(records, expected):
    arch, known = cubin_arch(_cubin(100 << 8, compat=b"".join(records)))
    assert (str(arch), known) == expected


def test_nv_compat_records_must_lie_in_the_section():
    whole = _rec(2, 8, b"\0\0") + _rec(2, ARCH_SPECIFIC, b"\x01\0")
    assert cubin_arch(_cubin(100 << 8, compat=whole))[1] is True  # the last record ends the section: read
    assert cubin_arch(_cubin(100 << 8, compat=whole[:-1]))[1] is False  # cut: not read
    blob = _rec(4, 7, b"\x08\x00") + b"\x02\x09\x01\x00" + b"\0\0\0\0"
    assert cubin_arch(_cubin(100 << 8, compat=blob))[1] is False  # inside a blob is no record


def test_only_cuda_elf_is_a_cubin():
    with pytest.raises(ValueError) as info:
        cubin_arch(make_elf([], machine=62))
    assert str(info.value) == "not a cubin: ELF e_machine is 62, not 190 (EM_CUDA)"


def test_ptx_needs_both_a_version_and_a_target():
    from cuda_fatbin._detect import ptx_target

    assert ptx_target(".target sm_90\n") is None
    assert ptx_target(".version 9.0\n") is None
    assert ptx_target(".version 9.0\n.target sm_90a\n") == Arch(9, 0, "a")


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "empty data: nothing to detect"),
        (b"x", "unrecognised data (1 bytes starting 78): not a fatbin, cubin, PTX, LTO-IR, Tile IR, NVVM IR or host "
               "ELF object"),
        (b"\x7fELF\x02\x01\x01" + bytes(9), "malformed ELF data: ELF data truncated: need 46 bytes, 0 left (at offset "
                                           "0x12)"),
    ],
)  # fmt: skip
def test_detect_says_what_it_could_not_read(data, message):
    with pytest.raises(ValueError) as info:
        detect(data)
    assert str(info.value) == message


def test_code_sections_of_a_malformed_cubin():
    from cuda_fatbin._detect import cubin_has_code

    with pytest.raises(ValueError) as info:
        cubin_has_code(b"\x7fELF\x02\x01\x01" + bytes(9))
    assert str(info.value) == "malformed cubin: ELF data truncated: need 46 bytes, 0 left (at offset 0x12)"
    assert cubin_has_code(make_elf([(".text.k", 1, b"x")])) and not cubin_has_code(make_elf([(".text", 1, b"x")]))


def test_detect_takes_any_contiguous_buffer(cubin80):
    import array

    from cuda_fatbin import build_fatbin

    # binary magics with bytes above 0x7f (\x7fELF, 0xBA55ED50) read the same through items of any size and sign
    for blob in (cubin80, build_fatbin([cubin80])):
        padded = blob + bytes(-len(blob) % 8)
        expected = detect(padded)
        assert expected.kind in ("cubin", "fatbin")
        for code in ("I", "i", "q", "b", "h"):
            assert detect(array.array(code, padded)) == expected, code
    ptx = b".version 9.0\n.target sm_90\n.address_size 64\n"
    words = array.array("I", ptx + bytes(-len(ptx) % 4))  # a buffer of 4-byte items
    assert detect(words) == ("ptx", Arch(9, 0))
    grid = memoryview(ptx + bytes(-len(ptx) % 2)).cast("B", (2, (len(ptx) + 1) // 2))  # two dimensions
    assert detect(grid) == ("ptx", Arch(9, 0))
    with pytest.raises(ValueError) as info:
        detect(memoryview(ptx)[::2])
    assert str(info.value) == "data must be a contiguous buffer"
    with pytest.raises(TypeError) as info:
        detect(90)
    assert str(info.value) == "expected bytes, bytearray, memoryview or str; got int"


def test_an_nv_compat_blob_longer_than_the_section_ends_the_search():
    blob = _rec(4, 7, b"\xfc\xff")  # a 65532-byte value: the next record would lie far past the section
    arch, known = cubin_arch(_cubin(100 << 8, compat=blob + _rec(2, ARCH_SPECIFIC, b"\x01\0")))
    assert (str(arch), known) == ("sm_100", False)


def test_a_fatbin_whose_ptx_cannot_be_decompressed_is_counted_as_code():
    """A compressed PTX entry that does not decompress cannot be told empty: its fatbin is a module to load, not a
    device-link stub."""
    from cuda_fatbin._detect import fatbin_has_code
    from cuda_fatbin._reader import read_fatbin
    from test_parts import _zstd_ptx

    good = _zstd_ptx(90)
    broken = good[:80] + bytes(len(good) - 80)  # the header and entry header kept, the frame zeroed
    assert fatbin_has_code(read_fatbin(good))
    entry = next(read_fatbin(broken).iter_entries())
    with pytest.raises(ValueError):
        entry.data()
    assert fatbin_has_code(read_fatbin(broken))
