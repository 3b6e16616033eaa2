"""Behaviours that hand-made plausible bugs slipped past (issue #27), one test per promise, through the
public API and the CLI run in process (tests/cli_testing.py), so that they survive refactors and see
mutation testing's mutants.
"""

from __future__ import annotations

import os
import struct

import pytest

from cli_testing import cli_main
from cuda_fatbin import ExtractError, FatbinFormatError, build_fatbin, extract_entries, iter_fatbins, read_fatbin

# ---------------------------------------------------------------------------------------------------- extract


@pytest.fixture(scope="module")
def suffixed(artifacts) -> bytes:
    """SASS for sm_90, sm_90a, sm_100a, sm_100 and PTX for sm_100f, sm_100 (NVRTC-made; a cubin built for
    sm_100f is recorded as sm_100 by libnvfatbin, PTX keeps the family flag)."""
    keys = [("cubin", "sm_90"), ("cubin", "sm_90a"), ("cubin", "sm_100a"), ("cubin", "sm_100"),
            ("ptx", "sm_100f"), ("ptx", "sm_100")]  # fmt: skip
    if any(k not in artifacts for k in keys):
        pytest.skip("NVRTC lacks some of the archs")
    data = build_fatbin([artifacts[k] for k in keys])
    assert [f"{e.kind} {e.arch}" for e in read_fatbin(data).entries] == [
        "elf sm_90", "elf sm_90a", "elf sm_100a", "elf sm_100", "ptx sm_100f", "ptx sm_100"]  # fmt: skip
    return data


def _archs_of(paths) -> list[str]:
    return sorted(f"{e.kind} {e.arch}" for p in paths for e in read_fatbin(p.read_bytes()).entries)


@pytest.mark.parametrize(
    ("wanted", "written"),
    [
        (["sm_90"], ["elf sm_90"]),
        (["sm_90a"], ["elf sm_90a"]),
        (["sm_100f"], ["ptx sm_100f"]),
        (["compute_100f"], ["ptx sm_100f"]),
        (["sm_100a", "sm_90"], ["elf sm_100a", "elf sm_90"]),
        ([100], ["elf sm_100", "ptx sm_100"]),
    ],
)
def test_extract_by_arch_keeps_the_suffix(suffixed, tmp_path, wanted, written):
    """``archs`` names an arch with its suffix: sm_90a is not sm_90, sm_100f is neither sm_100 nor sm_100a."""
    paths = extract_entries(suffixed, tmp_path, archs=wanted, source_name="s.fatbin")
    assert _archs_of(paths) == written
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)


def test_extract_by_arch_in_the_cli(suffixed, tmp_path):
    src = tmp_path / "s.fatbin"
    src.write_bytes(suffixed)
    cli_main("extract", src, "-o", tmp_path / "a", "--arch", "sm_90a", "--arch", "100f", "-q", check=0)
    assert _archs_of((tmp_path / "a").iterdir()) == ["elf sm_90a", "ptx sm_100f"]
    # an f entry is named by its base arch, as cuobjdump names it: the sm_100f PTX is *.sm_100.ptx
    assert sorted(p.name.split(".", 2)[2] for p in (tmp_path / "a").iterdir()) == ["sm_100.ptx", "sm_90a.cubin"]


@pytest.mark.parametrize("clash", ["file", "dangling", "dir_link"])
@pytest.mark.parametrize("position", [0, -1])
def test_nothing_is_written_when_one_name_clashes(suffixed, tmp_path, clash, position):
    """A clash at any name, a dangling symlink included, refuses the whole extraction before any write."""
    names = [p.name for p in extract_entries(suffixed, tmp_path / "probe", source_name="s.fatbin")]
    out = tmp_path / "out"
    out.mkdir()
    target = out / names[position]
    if clash == "file":
        target.write_bytes(b"mine")
    elif clash == "dangling":
        target.symlink_to(tmp_path / "nowhere")
    else:
        (tmp_path / "elsewhere").mkdir()
        target.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ExtractError, match=r"exists \(1 file\(s\) in all\); pass --force"):
        extract_entries(suffixed, out, source_name="s.fatbin")
    assert os.listdir(out) == [names[position]]
    if clash == "file":
        assert target.read_bytes() == b"mine"
    elif clash == "dangling":
        assert not (tmp_path / "nowhere").exists()
    else:
        assert os.listdir(tmp_path / "elsewhere") == []
    # the command says the same and writes nothing either
    src = tmp_path / "s.fatbin"
    src.write_bytes(suffixed)
    res = cli_main("extract", src, "-o", out)
    assert res.returncode == 1 and "exists" in res.stderr
    assert os.listdir(out) == [names[position]]


# ----------------------------------------------------------------------------------------------------- reader


@pytest.mark.parametrize("psize", [1 << 63, (1 << 64) - 1, (1 << 63) + 64])
def test_an_entry_payload_size_of_2_63_or_more_is_refused_at_its_field(cubin80, psize):
    """The payload size is an unsigned 64-bit field (docs/formats.md): read signed, it would go backwards."""
    data = bytearray(build_fatbin([cubin80]))
    entry = 16  # the first entry header follows the 16-byte fatbin header
    struct.pack_into("<Q", data, entry + 8, psize)
    with pytest.raises(FatbinFormatError) as info:
        read_fatbin(bytes(data))
    assert (info.value.offset, info.value.message) == (
        entry + 8,
        f"entry payload of {psize} bytes runs past the end of the fatbin",
    )
    # stored as data in a larger file, the same header is skipped, never followed
    assert list(iter_fatbins(b"\0" * 64 + bytes(data) + b"\0" * 64, embedded=True)) == []


# -------------------------------------------------------------------------------------------------------- CLI


@pytest.mark.parametrize("command", [["inspect"], ["inspect", "--json"], ["which", "--gpu", "80"],
                                     ["extract", "-o", "OUT"]])  # fmt: skip
def test_malformed_data_is_exit_1_with_the_reason(cubin80, tmp_path, command):
    """docs/cli.md: exit 1 when the input is unreadable, 2 only for a bad command line."""
    data = bytearray(build_fatbin([cubin80]))
    struct.pack_into("<Q", data, 16 + 8, 1 << 63)
    bad = tmp_path / "bad.fatbin"
    bad.write_bytes(data)
    args = [str(tmp_path / "out") if a == "OUT" else a for a in command]
    res = cli_main(command[0], bad, *args[1:])
    assert res.returncode == 1, res
    assert "runs past the end of the fatbin (at offset 0x18)" in (res.stdout if "--json" in command else res.stderr)
    assert not (tmp_path / "out").exists() or not os.listdir(tmp_path / "out")
