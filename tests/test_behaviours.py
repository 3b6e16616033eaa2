# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Behaviours that hand-made plausible bugs slipped past (issue #27), one test per promise, through the
public API and the CLI run in process (tests/cli_testing.py), so that they survive refactors and see
mutation testing's mutants.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import pytest

from cli_testing import cli_main
from cuda_fatbin import (
    ExtractError,
    FatbinFormatError,
    build_fatbin,
    extract_entries,
    iter_fatbins,
    read_fatbin,
    scan,
)
from cuda_fatbin._scan import BinaryReport, ScanReport

from elf_testing import make_elf

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


# ------------------------------------------------------------------------------------------------------- scan


@pytest.fixture(scope="module")
def per_gpu(artifacts) -> tuple[bytes, bytes]:
    """Two fatbins: SASS for sm_80 only, and SASS for sm_90 only."""
    return build_fatbin([artifacts[("cubin", "sm_80")]]), build_fatbin([artifacts[("cubin", "sm_90")]])


def _statuses(report) -> dict[str, dict[str, str]]:
    return {Path(b.path).name: {g: v["status"] for g, v in b.coverage.items()} for b in report.binaries}


def test_scan_partial_and_stored_fatbins(per_gpu, tmp_path):
    """docs/scan.md: registered fatbins must all load (``partial`` when some have code for the GPU and others
    none); fatbins stored as data decide, the best of them, only for a binary with no registered fatbin."""
    a, b = per_gpu
    (tmp_path / "registered.so").write_bytes(make_elf([(".nv_fatbin", 1, a + b)], e_type=3))
    (tmp_path / "stored.so").write_bytes(make_elf([(".rodata", 1, b"x" * 40 + a + b"y" * 24 + b + b"z" * 8)], e_type=3))
    (tmp_path / "both.so").write_bytes(
        make_elf([(".nv_fatbin", 1, a), (".rodata", 1, b"x" * 40 + b + b"z" * 8)], e_type=3)
    )
    report = scan([tmp_path], gpus="80;90;100", max_workers=1)
    assert _statuses(report) == {
        "registered.so": {"8.0": "partial", "9.0": "partial", "10.0": "no entry"},
        "stored.so": {"8.0": "SASS exact", "9.0": "SASS exact", "10.0": "no entry"},
        "both.so": {"8.0": "SASS exact", "9.0": "no entry", "10.0": "no entry"},
    }
    counts = {Path(r.path).name: r.fatbins for r in report.binaries}
    assert counts["stored.so"] == {"registered": 0, "relocatable": 0, "embedded": 2}
    assert counts["registered.so"] == {"registered": 2, "relocatable": 0, "embedded": 0}
    assert report.uncovered("9.0") and not report.covered
    # without the search for stored fatbins, stored.so holds no device code; the others read the same
    plain = scan([tmp_path], gpus="80;90;100", embedded=False, max_workers=1)
    assert set(_statuses(plain)) == {"registered.so", "both.so"}
    assert _statuses(plain)["registered.so"] == _statuses(report)["registered.so"]
    # the command: --no-embedded is embedded=False
    for extra, names in (
        ([], {"registered.so", "stored.so", "both.so"}),
        (["--no-embedded"], {"registered.so", "both.so"}),
    ):
        res = cli_main("scan", tmp_path, "--gpu", "80;90", "-j", "1", "--json", *extra)
        assert res.returncode == 1  # partial is not covered
        assert {Path(b["path"]).name for b in json.loads(res.stdout)["binaries"]} == names


def test_distribution_status_is_its_worst_binary():
    """docs/scan.md: ``ScanReport.distributions()`` gives each distribution the worst status of its binaries."""

    def binary(path, dist, status, error=None):
        cov = {} if error else {"9.0": {"status": status, "reason": ""}}
        return BinaryReport(path, dist, entries={} if error else {"elf sm_90": 1}, coverage=cov, error=error)

    report = ScanReport(["9.0"], None, [
        binary("a.so", "pkg 1.0", "SASS exact"), binary("b.so", "pkg 1.0", "no entry"),
        binary("c.so", "pkg 1.0", "PTX JIT"), binary("d.so", "other 2.0", "SASS exact"),
        binary("e.so", "other 2.0", "SASS compatible"), binary("f.so", "bad 1", None, error="boom"),
        binary("g.so", "bad 1", "SASS exact"), binary("h.so", None, "partial"),
    ])  # fmt: skip
    rows = {d["distribution"]: (d["binaries"], d["unreadable"], d["coverage"]["9.0"]) for d in report.distributions()}
    assert rows == {
        "pkg 1.0": (3, 0, "no entry"),
        "other 2.0": (2, 0, "SASS compatible"),
        "bad 1": (2, 1, "unreadable"),
        "(no distribution)": (1, 0, "partial"),
    }
    assert [d["distribution"] for d in report.distributions()] == sorted(rows)


def test_a_symlink_out_of_the_scanned_tree_is_not_followed(per_gpu, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "k.fatbin").write_bytes(per_gpu[0])
    (outside / "dir").mkdir()
    (outside / "dir" / "k2.fatbin").write_bytes(per_gpu[0])
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "link.fatbin").symlink_to(outside / "k.fatbin")
    (tree / "linkdir").symlink_to(outside / "dir")
    (tree / "own.fatbin").write_bytes(per_gpu[1])
    report = scan([tree], gpus="80", max_workers=1)
    assert [Path(b.path).name for b in report.binaries] == ["own.fatbin"]
    assert report.skipped == {"symlink": 2} and report.files_read == 1
    # a symlink named on the command line is the user's choice: it is read
    assert [Path(b.path).name for b in scan([tree / "link.fatbin"], gpus="80", max_workers=1).binaries] == [
        "link.fatbin"
    ]


# ---------------------------------------------------------------------------------------------------- bundles


def _with_isa(ptx: bytes, isa: str) -> bytes:
    """The same PTX declaring another ISA (``.version``)."""
    import re

    return re.sub(rb"^\.version \d+\.\d+", b".version " + isa.encode(), ptx, count=1, flags=re.M)


def test_a_bundle_records_the_newest_ptx_isa_of_a_suite(artifacts):
    """ptx_isa / ptx_min_driver_cuda name what *every* PTX entry needs: the newest ISA among them. The ISA ->
    driver table is the PTX ISA release notes' (tests/test_select.py); here two entries of different ISAs."""
    from cuda_fatbin._bundle import _describe
    from cuda_fatbin._select import ptx_isa_needs

    old = _with_isa(artifacts[("ptx", "sm_80")], "8.0")
    new = _with_isa(artifacts[("ptx", "sm_90")], "9.0")
    for order in ([old, new], [new, old]):
        rec = _describe(build_fatbin(order), {})
        assert rec["ptx_isa"] == "9.0" and rec["ptx_archs"] == ["compute_80", "compute_90"]
        assert rec["ptx_min_driver_cuda"] == "{}.{}".format(*ptx_isa_needs((9, 0))) == "13.0"


def test_check_with_a_gpu_but_no_driver_uses_the_current_driver(tmp_path, monkeypatch):
    """check(gpu=...) with driver=None takes the driver of this machine (the docstring's "default: the current
    ones"): with none, the error says to pass driver=; with one, its version decides."""
    from cuda_fatbin import BundleCoverageError, KernelBundle, KernelSuite, _driver

    src = 'extern "C" __global__ void k(int* p) { p[0] = 1; }'
    bundle = KernelBundle.build(tmp_path / "b", {"k": KernelSuite(src)}, archs=["sm_80"], ptx_for=["sm_80"])

    monkeypatch.setattr(_driver, "_probe", lambda: ((), "no GPU"))  # a machine without one, wherever this runs
    with pytest.raises(BundleCoverageError, match="pass gpu= and driver="):
        bundle.check("k", gpu="9.0")
    assert bundle.check("k", gpu="9.0", driver="13.5").status == "PTX JIT"  # both given: no driver asked for
    old = _driver.DeviceInfo(0, "Old GPU", (8, 0), 12000)
    monkeypatch.setattr(_driver, "devices", lambda purpose: [old])
    with pytest.raises(BundleCoverageError, match="CUDA 12.0 driver"):  # the PTX is ISA 9.x: not for 12.0
        bundle.check("k", gpu="9.0")
    assert bundle.check("k", gpu="8.0").status == "SASS exact"  # this machine's driver runs SASS


# ---------------------------------------------------------------------------------------------------- -rdc objects

RDC_SRC = {
    "a": 'extern "C" __device__ int twice(int x) { return 2 * x; }\n',
    "b": 'extern "C" __device__ int twice(int x);\nextern "C" __global__ void k(int* p) { p[0] = twice(p[0]); }\n',
}


@pytest.fixture(scope="module")
def rdc_objects(tmp_path_factory, needs_nvcc) -> dict[str, Path]:
    """Two different host objects with relocatable device code (nvcc -rdc=true -c), sm_80 and sm_90."""
    import subprocess

    d = tmp_path_factory.mktemp("rdc")
    out = {}
    for (name, src), arch in zip(RDC_SRC.items(), ("sm_80", "sm_90"), strict=True):
        (d / f"{name}.cu").write_text(src)
        out[name] = d / f"{name}.o"
        subprocess.run(["nvcc", "-c", "-rdc=true", f"-arch={arch}", "-o", str(out[name]), str(d / f"{name}.cu")],
                       check=True, timeout=300)  # fmt: skip
    return out


def _relocatable_ptx(cuobjdump, data: bytes) -> list[str]:
    import re

    return re.findall(r"Fatbin relocatable ptx code:\n=+\narch = (\w+)", cuobjdump(data, "-all"))


def test_two_different_rdc_objects_go_into_one_fatbin(rdc_objects, cuobjdump):
    """Each object's device code becomes a relocatable-PTX entry (cuobjdump says so); two are not duplicates."""
    data = build_fatbin([rdc_objects["a"], rdc_objects["b"]])
    assert sorted(_relocatable_ptx(cuobjdump, data)) == ["sm_80", "sm_90"]
    ours = sorted(str(e.arch) for e in read_fatbin(data).iter_entries() if e.kind == "reloc")
    assert ours == ["sm_80", "sm_90"]


def test_a_named_object_code_is_a_reloc_part_and_an_identifier_is_refused(rdc_objects, cuobjdump):
    """nvFatbinAddReloc takes no identifier: an ObjectCode's name is dropped, an explicit one is refused."""
    from cuda.core import ObjectCode

    from cuda_fatbin import Part

    obj = ObjectCode.from_object(rdc_objects["a"].read_bytes(), name="libtwice")
    built = build_fatbin([obj])
    assert _relocatable_ptx(cuobjdump, built) == ["sm_80"]
    with pytest.raises(ValueError, match="do not apply to reloc"):
        build_fatbin([Part(rdc_objects["a"].read_bytes(), kind="reloc", identifier="libtwice")])


def test_inspect_reads_an_rdc_object_as_relocatable_by_default(rdc_objects, cuobjdump):
    """A host object with only __nv_relfatbin is read as cuobjdump reads it (docs/formats.md §3)."""
    import re

    res = cli_main("inspect", rdc_objects["b"], "--json", check=0)
    (only,) = json.loads(res.stdout)["files"]
    fatbins = only["fatbins"]
    assert fatbins and all(fb["relocatable"] for fb in fatbins)
    ours = sorted((e["kind"], e["arch"]) for fb in fatbins for e in fb["entries"])
    listed = cuobjdump(rdc_objects["b"].read_bytes(), "-lelf", "-lptx")
    theirs = sorted(("elf" if k == "ELF" else "ptx", re.search(r"sm_\d+\w?", n).group())
                    for k, n in re.findall(r"^(ELF|PTX) file\s+\d+: (\S+)", listed, re.M))  # fmt: skip
    assert ours == theirs and ours, (ours, listed)


# ---------------------------------------------------------------------------------------------------- options


@pytest.mark.parametrize("opt", ["-arch=sm_80", "--gpu-architecture=sm_80", "-gpu-architecture=compute_80",
                                 "--gpu-architecture", "-arch"])  # fmt: skip
def test_an_arch_option_in_extra_options_is_refused(opt):
    """The archs come from archs=; an -arch among NVRTC's options would compile every job for one arch."""
    from cuda_fatbin import Program

    with pytest.raises(ValueError, match="the archs come from archs="):
        Program('extern "C" __global__ void k() {}', "c++").compile("fatbin", archs=["sm_80"], extra_options=[opt])


def test_scan_counts_an_rdc_objects_device_code_as_relocatable(rdc_objects, tmp_path):
    """scan reads the -rdc objects a build leaves (docs/scan.md), as inspect does: relocatable fatbins, not none."""
    from cuda_fatbin import scan

    (tmp_path / "b.o").write_bytes(rdc_objects["b"].read_bytes())
    [report] = scan([tmp_path], gpus="90", max_workers=1).binaries
    assert report.fatbins["relocatable"] >= 1 and report.entries
