# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Tegra (Jetson) GPUs, Thor's rename, GPU names, driver support windows and driver spellings.

The oracle is NVIDIA's documents, written here independently of ``data/nvidia.json``: the CUDA C++ Programming
Guide ("Binary Compatibility": none for Tegra, none between desktop and Tegra), the CUDA GPUs list (which
capabilities are Jetson parts) and the CUDA 13.0 release notes (Thor's sm_101 renamed sm_110; R580 the last
branch for Maxwell, Pascal and Volta).
"""

from __future__ import annotations

import json
import struct
import time
from pathlib import Path

import pytest

from cli_testing import cli_main
from cuda_fatbin import Arch, coverage, select_entry
from cuda_fatbin._container import FLAG_ARCH_SPECIFIC, FLAG_FAMILY
from cuda_fatbin._nvidia import DATA, gpu_arch, gpu_list, gpu_names, is_tegra, tables
from cuda_fatbin._select import RULES, driver_gaps, judge, parse_driver

#: Jetson parts (CUDA GPUs list): TK1, TX1/Nano, TX2, Xavier, Orin, Thor (10.1 under CUDA 12.8-12.9, 11.0 from 13.0)
TEGRA = ["3.2", "5.3", "6.2", "7.2", "8.7", "10.1", "11.0"]
#: Desktop and data-center capabilities (CUDA GPUs list), GB10 (DGX Spark, 12.1) included: see docs/selection.md
DESKTOP = ["3.0", "3.5", "3.7", "5.0", "5.2", "6.0", "6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "10.3",
           "12.0", "12.1"]  # fmt: skip


@pytest.fixture(scope="module")
def make(cubin80: bytes):
    """make("sm_80", "compute_87", "sm_101a", "sm_100f") -> a fatbin with one entry each, of any arch, also those no
    NVRTC of today builds (sm_32, sm_53, sm_101): NVRTC's sm_80 cubin with the SM of its e_flags changed, PTX text
    with that .target; header and payload agree."""
    header = struct.Struct("<HHIQIIHHIIIQQQ")

    def build(*specs: str) -> bytes:
        body = b""
        for spec in specs:
            arch = Arch.parse(spec)
            if spec.startswith("sm_"):
                kind, payload = 2, bytearray(cubin80)
                flags = int.from_bytes(payload[48:52], "little") & ~0xFF08
                flags |= arch.sm << 8 | (0x8 if arch.suffix == "a" else 0)
                payload[48:52] = flags.to_bytes(4, "little")
            else:
                kind, payload = 1, bytearray(f".version 8.0\n.target sm_{arch.bare}\n.address_size 64\n".encode())
            flags = 0x11 | {"": 0, "a": FLAG_ARCH_SPECIFIC, "f": FLAG_FAMILY}[arch.suffix]
            size = len(payload)
            body += header.pack(kind, 0x0101, 64, size, 0, 0, 0, 8, arch.sm, 0, 0, flags, 0, size) + bytes(payload)
        return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body

    return build


def sass(cap: str) -> str:
    return str(Arch.parse(cap))


def test_the_table_names_the_tegra_capabilities_of_the_documents():
    assert sorted(str(a) for a in map(Arch.parse, TEGRA) if is_tegra(a)) == sorted(map(sass, TEGRA))
    assert not any(is_tegra(Arch.parse(c)) for c in DESKTOP)
    assert {row["capability"] for row in tables()["capabilities"] if row["tegra"]} == set(TEGRA)


@pytest.mark.parametrize("tegra", TEGRA)
def test_desktop_sass_of_the_same_major_never_runs_on_a_tegra_gpu(make, tegra):
    t = Arch.parse(tegra)
    same_major = [c for c in DESKTOP if Arch.parse(c).major == t.major]
    for desk in same_major:
        sel = select_entry(make(sass(desk)), tegra)
        assert sel.status == "none", (desk, sel.reason)
        if Arch.parse(desk).minor < t.minor:  # what the desktop rule (same major, lower minor) would have taken
            assert sel.rules == ("sass_tegra",) and f"{tegra} is a Tegra GPU" in sel.reason, sel.reason
    own = select_entry(make(*map(sass, same_major), sass(tegra)), tegra)
    assert (own.status, str(own.entry.arch), own.rules) == ("SASS exact", sass(tegra), ("sass_exact",))


@pytest.mark.parametrize("tegra", TEGRA)
def test_tegra_sass_runs_on_its_own_gpu_only(make, tegra):
    data = make(sass(tegra))
    for gpu in DESKTOP + TEGRA:
        sel = select_entry(data, gpu)
        renamed = (tegra, gpu) == ("10.1", "11.0")  # Thor, renamed by CUDA 13 (test_thor_across_the_rename)
        assert bool(sel) == (gpu == tegra or renamed), (gpu, sel.reason)
        g, t = Arch.parse(gpu), Arch.parse(tegra)
        if g.major == t.major and g.minor > t.minor:  # the desktop rule would have taken it
            assert sel.rules == ("sass_tegra",) and f"{tegra} is a Tegra GPU: its SASS runs there only" in sel.reason


def test_real_cubins_across_the_line(artifacts, supported_specs):
    """NVRTC's own cubins, not headers only: sm_80/sm_86 do not run on Orin, sm_87 not on 8.9."""
    from cuda_fatbin import build_fatbin

    desk = build_fatbin([artifacts[("cubin", "sm_80")], artifacts[("cubin", "sm_86")]])
    orin = build_fatbin([artifacts[("cubin", "sm_87")]])
    assert [r.status for r in coverage(desk, "8.0;8.6;8.7;8.9")] == ["SASS exact", "SASS exact", "none",
                                                                      "SASS compatible"]  # fmt: skip
    assert [r.status for r in coverage(orin, ["8.7", "8.9", "Jetson Orin Nano", "RTX 4090"])] == [
        "SASS exact", "none", "SASS exact", "none"]  # fmt: skip
    # PTX crosses: compute_80 is JIT-compiled on 8.7, compute_87 on 8.9 (the CUDA runtime's +PTX builds load there)
    with_ptx = build_fatbin([artifacts[("cubin", "sm_80")], artifacts[("ptx", "sm_80")]])
    sel = select_entry(with_ptx, "8.7")
    assert (sel.status, sel.entry.kind, sel.rules) == ("PTX JIT", "ptx", ("ptx_lower", "ptx_tegra"))
    assert select_entry(build_fatbin([artifacts[("ptx", "sm_87")]]), "8.9").status == "PTX JIT"


@pytest.mark.parametrize("ptx, gpu, runs", [
    ("compute_80", "8.7", True), ("compute_87", "8.9", True), ("compute_87", "8.7", True), ("compute_53", "6.2", True),
    ("compute_72", "7.5", True), ("compute_100", "10.1", True), ("compute_101", "10.3", True),
    ("compute_101", "11.0", True), ("compute_110", "10.1", False), ("compute_89", "8.7", False),
    ("compute_100f", "10.1", False), ("compute_101f", "10.3", False), ("compute_100a", "10.1", False),
])  # fmt: skip
def test_ptx_is_jit_compiled_on_tegra_as_on_desktop(make, ptx, gpu, runs):
    sel = select_entry(make(ptx), gpu)
    assert bool(sel) == runs, sel.reason
    if runs:
        assert sel.status == "PTX JIT" and "ptx_tegra" in sel.rules


def test_family_code_does_not_cross_between_desktop_and_tegra(make):
    sel = select_entry(make("sm_100f"), "10.1")
    assert (sel.status, sel.rules) == ("none", ("family_tegra",))
    assert "for the desktop 10.x family; 10.1 is a Tegra GPU" in sel.reason
    assert select_entry(make("sm_100f"), "10.3").status == "SASS compatible"
    assert select_entry(make("sm_110f"), "11.0").status == "SASS exact"


def test_thor_across_the_rename(make):
    """CUDA 12.8-12.9 build Thor's code as sm_101; CUDA 13 renamed it sm_110 and its driver reports 11.0."""
    old = select_entry(make("sm_101"), "11.0")
    assert (old.status, old.rules) == ("SASS compatible", ("sass_exact", "thor_rename"))
    assert "sm_101 is Jetson Thor's name before CUDA 13, which renamed it sm_110" in old.reason
    both = select_entry(make("sm_101", "sm_110"), "11.0")
    assert (both.status, str(both.entry.arch)) == ("SASS exact", "sm_110")  # its own name first, whatever the order
    assert str(select_entry(make("sm_110", "sm_101"), "11.0").entry.arch) == "sm_110"
    assert select_entry(make("sm_101a"), "11.0").rules == ("arch_specific", "thor_rename")
    assert select_entry(make("sm_101"), "10.1").status == "SASS exact"
    for gpu in ("10.0", "10.3", "12.0"):
        assert not select_entry(make("sm_101"), gpu)
    new = select_entry(make("sm_110"), "10.1")  # a CUDA 12.x driver knows no sm_110
    assert (new.status, new.rules) == ("none", ("sass_other_major",))
    # the driver decides the name: a CUDA 13 driver has no 10.1 GPU, a CUDA 12.9 driver no 11.0 one
    gone = select_entry(make("sm_101"), "10.1", driver="13.0")
    assert (gone.status, gone.rules) == ("driver dropped GPU", ("thor_rename",))
    early = select_entry(make("sm_101"), "11.0", driver="12.9")
    assert (early.status, early.rules) == ("driver predates GPU", ("driver_gpu_first",))
    assert select_entry(make("sm_101"), "11.0", driver="13.0").status == "SASS compatible"
    assert Arch.parse("sm_101") == Arch(10, 1)


def test_which_says_what_10_1_names_today(make, tmp_path):
    (tmp_path / "t.fatbin").write_bytes(make("sm_101"))
    res = cli_main("which", tmp_path / "t.fatbin", "--gpu", "10.1;11.0")
    assert res.returncode == 0 and "SASS compatible" in res.stdout
    assert "10.1 is Jetson Thor as CUDA 12.8-12.9 name it; a CUDA 13 driver reports it as 11.0 (sm_110)" in res.stderr
    assert "Jetson Thor" not in cli_main("which", tmp_path / "t.fatbin", "--gpu", "11.0").stderr


def test_driver_support_windows_are_statuses_of_their_own(make, tmp_path):
    data = make("sm_70", "sm_120", "compute_70")
    dropped = select_entry(data, "7.0", driver="590.44.01")
    assert (dropped.status, dropped.entry, dropped.rules) == ("driver dropped GPU", None, ("driver_gpu_last",))
    assert dropped.reason == "driver R590 (CUDA 13.1) no longer supports 7.0 (Volta): R580 is the last branch for it"
    assert select_entry(data, "7.0", driver="580.65.06").status == "SASS exact"  # R580 still does
    assert select_entry(data, "V100", driver="13.0").status == "SASS exact"
    early = select_entry(data, "RTX 5090", driver="12.4")
    assert (early.status, early.reason) == (
        "driver predates GPU",
        "a CUDA 12.4 driver predates 12.0 (Blackwell): it needs a CUDA 12.8 driver",
    )
    assert select_entry(data, "12.0", driver="12.8").status == "SASS exact"
    assert judge([__import__("cuda_fatbin").read_fatbin(data)], "7.0;12.0", "12.4") == {
        "7.0": {"status": "SASS exact", "reason": "SASS sm_70 runs on 7.0: exact match"},
        "12.0": {"status": "driver predates GPU", "reason": early.reason},
    }  # fmt: skip
    # nothing a fatbin could change: not a gap of --min-driver / min_driver=
    assert driver_gaps(data, "70;120", "12.4") == []
    (tmp_path / "v.fatbin").write_bytes(data)
    res = cli_main("which", tmp_path / "v.fatbin", "--gpu", "V100,RTX 5090", "--driver", "590.44.01", "--json")
    doc = json.loads(res.stdout)
    assert res.returncode == 1 and doc["verdict"]["7.0"]["status"] == "driver dropped GPU"
    assert [g["status"] for g in doc["fatbins"][0]["gpus"]] == ["driver dropped GPU", "SASS exact"]
    assert doc["fatbins"][0]["gpus"][0]["rules"] == ["driver_gpu_last"]  # its source: RULES["driver_gpu_last"]
    assert "580" in RULES["driver_gpu_last"].source
    _valid(doc, "which")
    text = cli_main("which", tmp_path / "v.fatbin", "--gpu", "70", "--driver", "13.1").stdout
    assert "driver dropped GPU  driver R590 (CUDA 13.1) no longer supports 7.0 (Volta)" in text
    scanned = cli_main("scan", tmp_path, "--gpu", "70;120", "--driver", "12.4", "--json")
    assert json.loads(scanned.stdout)["binaries"][0]["coverage"]["12.0"]["status"] == "driver predates GPU"
    _valid(json.loads(scanned.stdout), "scan")


def _valid(doc: object, name: str) -> None:
    from test_hostile_scan import validator

    validator(name).validate(doc)


def test_every_name_of_the_table_parses_to_its_capability():
    seen = {}
    for name, aliases, cap, _tegra in gpu_names():
        for spelling in (name, *aliases):
            for variant in (spelling, spelling.upper(), spelling.lower(), spelling.replace(" ", ""),
                            f"  {spelling.replace(' ', '-')} ", f"NVIDIA {spelling}"):  # fmt: skip
                assert gpu_arch(variant) == cap, variant
            assert seen.setdefault(spelling.lower().replace(" ", ""), cap) == cap  # no name means two GPUs
    assert len(seen) > 60


@pytest.mark.parametrize("smi, cap", [
    ("NVIDIA A100-SXM4-80GB", "8.0"), ("NVIDIA H100 80GB HBM3", "9.0"), ("Tesla T4", "7.5"), ("NVIDIA A10G", "8.6"),
    ("NVIDIA GeForce RTX 4090", "8.9"), ("NVIDIA L40S", "8.9"), ("NVIDIA H200", "9.0"), ("NVIDIA B200", "10.0"),
    ("Orin (nvgpu)", "8.7"), ("NVIDIA GB10", "12.1"), ("dgx spark", "12.1"), ("jetson agx thor", "11.0"),
    ("sm_90a", "9.0"), ("90a", "9.0"), ("100f", "10.0"), ("compute_120", "12.0"), (87, "8.7"),
])  # fmt: skip
def test_names_as_nvidia_smi_and_users_write_them(smi, cap):
    assert gpu_arch(smi) == Arch.parse(cap)


#: NVIDIA's "CUDA GPU Compute Capability" page (https://developer.nvidia.com/cuda-gpus), rows 8.6 to 12.1, each name
#: as the page spells it: every one is a GPU users name with --gpu.
NVIDIA_LIST = {
    "12.1": ["NVIDIA GB10"],
    "12.0": ["NVIDIA RTX PRO 6000 Blackwell Server Edition", "NVIDIA RTX PRO 4500 Blackwell Server Edition",
             "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
             "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "NVIDIA RTX PRO 5000 Blackwell",
             "NVIDIA RTX PRO 4500 Blackwell", "NVIDIA RTX PRO 4000 Blackwell",
             "NVIDIA RTX PRO 4000 Blackwell SFF Edition",
             "NVIDIA RTX PRO 2000 Blackwell", "GeForce RTX 5090", "GeForce RTX 5080", "GeForce RTX 5070 Ti",
             "GeForce RTX 5070", "GeForce RTX 5060 Ti", "GeForce RTX 5060", "GeForce RTX 5050"],
    "11.0": ["Jetson T5000", "Jetson T4000"],
    "10.3": ["NVIDIA GB300", "NVIDIA B300"],
    "10.0": ["NVIDIA GB200", "NVIDIA B200"],
    "9.0": ["NVIDIA GH200", "NVIDIA H200", "NVIDIA H100"],
    "8.9": ["NVIDIA L4", "NVIDIA L40", "NVIDIA L40S", "NVIDIA RTX 6000 Ada", "NVIDIA RTX 5000 Ada",
            "NVIDIA RTX 4500 Ada", "NVIDIA RTX 4000 Ada", "NVIDIA RTX 4000 SFF Ada", "NVIDIA RTX 2000 Ada",
            "GeForce RTX 4090",
            "GeForce RTX 4080", "GeForce RTX 4070 Ti", "GeForce RTX 4070", "GeForce RTX 4060 Ti", "GeForce RTX 4060",
            "GeForce RTX 4050"],
    "8.7": ["Jetson AGX Orin", "Jetson Orin NX", "Jetson Orin Nano"],
    "8.6": ["NVIDIA A40", "NVIDIA A10", "NVIDIA A16", "NVIDIA A2", "NVIDIA RTX A6000", "NVIDIA RTX A5000",
            "NVIDIA RTX A4000", "NVIDIA RTX A3000", "NVIDIA RTX A2000", "GeForce RTX 3090"],
}  # fmt: skip


@pytest.mark.parametrize("name, cap", [(n, c) for c, names in NVIDIA_LIST.items() for n in names])
def test_every_name_on_nvidias_list_is_a_gpu_of_its_capability(name, cap):
    assert gpu_arch(name) == Arch.parse(cap)
    assert is_tegra(gpu_arch(name)) == name.startswith("Jetson")


@pytest.mark.parametrize("typo, suggested", [
    ("Jetson Orn", "Jetson AGX Orin"), ("RTX 509", "GeForce RTX 5090"), ("H1000", "H100"), ("A100G", "A10G"),
    ("L40X", "L40S"), ("Jetsn Nano", "Jetson Nano"), ("RTX 4900", "GeForce RTX 4090"),
    ("orin nanoo", "Jetson Orin Nano"),
])  # fmt: skip
def test_near_misses_are_suggested(typo, suggested):
    with pytest.raises(ValueError) as info:
        gpu_arch(typo)
    assert f"'{suggested}'" in str(info.value) and "cuda-fatbin gpus" in str(info.value)


def test_every_name_one_letter_off_suggests_itself():
    for name, aliases, _cap, _tegra in gpu_names():
        for spelling in (name, *aliases):
            typo = spelling + "q"
            with pytest.raises(ValueError, match="did you mean") as info:
                gpu_arch(typo)
            assert repr(spelling) in str(info.value) or repr(name) in str(info.value), (typo, str(info.value))


def test_gpu_lists_mix_names_and_capabilities():
    assert gpu_list("T4, A100; RTX 5090;75 80") == [Arch(7, 5), Arch(8, 0), Arch(12, 0), Arch(7, 5), Arch(8, 0)]
    with pytest.raises(ValueError, match="'Jetson Orn'"):  # a name with a space is not cut into words
        gpu_list("80;Jetson Orn")


@pytest.mark.parametrize("bad", ["sm_99999999999999999999", "9" * 100_000, "x" * 1_000_000, "RTX " * 200_000])
def test_absurd_gpus_are_one_usage_error_in_bounded_time(make, bad, tmp_path):
    start = time.perf_counter()
    with pytest.raises(ValueError) as info:
        gpu_arch(bad)
    assert len(str(info.value)) < 400
    (tmp_path / "f.fatbin").write_bytes(make("sm_80"))
    res = cli_main("which", tmp_path / "f.fatbin", "--gpu", bad)
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
    assert len(res.stderr) < 500
    assert time.perf_counter() - start < 10  # generous: the machine is shared; quadratic work would take minutes


def test_an_arch_specific_spelling_names_its_gpu_in_which_and_scan(make, tmp_path):
    """`which --gpu sm_90a` raised KeyError('9.0a'): the suffix names code; the GPU is 9.0."""
    (tmp_path / "f.fatbin").write_bytes(make("sm_90a", "sm_100f"))
    for spec, cap in (("sm_90a", "9.0"), ("90a", "9.0"), ("100f", "10.0"), ("9.0a", "9.0")):
        res = cli_main("which", tmp_path / "f.fatbin", "--gpu", spec, "--json")
        doc = json.loads(res.stdout)
        assert (res.returncode, list(doc["verdict"])) == (0, [cap]), res.stderr
        _valid(doc, "which")
    res = cli_main("which", tmp_path / "f.fatbin", "--gpu", "90a;9.0;sm_90", "--json")
    assert [g["capability"] for g in json.loads(res.stdout)["fatbins"][0]["gpus"]] == ["9.0"]  # once
    assert cli_main("scan", tmp_path, "--gpu", "sm_90a", "--json").returncode == 0


@pytest.mark.parametrize("spelling", ["10.2", "0.0", "440.33.01", "449.99", "10.0.130"])
def test_every_driver_older_than_the_tables_is_one_usage_error(make, spelling, tmp_path):
    """`--driver 440.33.01` was refused but `--driver 10.2` (or 0.0) accepted and "covered"."""
    (tmp_path / "f.fatbin").write_bytes(make("sm_80"))
    res = cli_main("which", tmp_path / "f.fatbin", "--gpu", "80", "--driver", spelling)
    assert res.returncode == 2
    assert res.stderr.strip().endswith(f"driver {spelling} is older than CUDA 11.0 (450.36.06); not modelled")
    with pytest.raises(ValueError, match="older than CUDA 11.0"):
        parse_driver(spelling)
    for same in ((10, 2), 10020, 9000):
        with pytest.raises(ValueError, match="older than CUDA 11.0"):
            parse_driver(same)


#: NVIDIA's table "CUDA Toolkit and Corresponding Driver Versions" (CUDA 11.x release notes), Linux x86_64 rows
DOCUMENTED_DRIVERS = [("450.36.06", (11, 0)), ("450.51.05", (11, 0)), ("455.23", (11, 1)), ("455.32", (11, 1)),
                      ("460.27.03", (11, 2)), ("465.19.01", (11, 3)), ("470.42.01", (11, 4)), ("470.57.02", (11, 4)),
                      ("495.29.05", (11, 5)), ("510.39.01", (11, 6))]  # fmt: skip


def test_every_driver_of_the_table_at_and_around_its_row():
    """A driver at a row's version supports that CUDA, one patch below the previous; the newest row too (a table
    change must not make its own last driver 'newer than the table')."""
    for driver, cuda in DOCUMENTED_DRIVERS:
        assert parse_driver(driver) == cuda, driver
    rows = [(tuple(int(p) for p in r["driver"].split(".")), r["cuda"]) for r in tables()["driver_cuda"]]
    for i, (parts, cuda) in enumerate(rows):
        spelled = ".".join(f"{p:02d}" if k else str(p) for k, p in enumerate(parts))
        assert parse_driver(spelled) == tuple(map(int, cuda.split("."))), spelled
        assert parse_driver(f"{parts[0]}.999.99") >= tuple(map(int, cuda.split("."))), spelled
        below = (*parts[:-1], parts[-1] - 1) if parts[-1] else (parts[0], parts[1] - 1, 99)
        if i:
            assert parse_driver(".".join(map(str, below))) == tuple(map(int, rows[i - 1][1].split("."))), below
        else:
            with pytest.raises(ValueError, match="older than CUDA 11.0"):
                parse_driver(".".join(map(str, below)))
    with pytest.raises(ValueError, match="newer than this package's driver table"):
        parse_driver(f"{rows[-1][0][0] + 1}.10.01")


def test_driver_installed_without_a_driver_is_a_usage_error(make, monkeypatch, tmp_path):
    from cuda_fatbin import _driver

    monkeypatch.setattr(_driver, "_probe", lambda: ((), "no CUDA driver library (libcuda.so.1: not found)"))
    (tmp_path / "f.fatbin").write_bytes(make("sm_80"))
    for argv in (("which", tmp_path / "f.fatbin", "--gpu", "80"), ("scan", tmp_path, "--gpu", "80")):
        res = cli_main(*argv, "--driver", "installed")
        assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
        assert "--driver installed needs a GPU and its driver: no CUDA driver library" in res.stderr
        assert "name the driver instead, e.g. --driver 13.0" in res.stderr
    res = cli_main("compile", tmp_path / "k.cu", "--arch", "80", "-o", tmp_path / "o.fatbin", "--min-driver",
                   "installed")  # fmt: skip
    assert res.returncode in (1, 2) and "Traceback" not in res.stderr


def test_driver_installed_is_the_drivers_cuda_version(make, monkeypatch, tmp_path):
    from cuda_fatbin import _driver

    device = _driver.DeviceInfo(index=0, name="Fake", capability=(8, 7), driver=12060)
    monkeypatch.setattr(_driver, "_probe", lambda: ((device,), None))
    (tmp_path / "f.fatbin").write_bytes(make("sm_80", "sm_87"))
    res = cli_main("which", tmp_path / "f.fatbin", "--gpu", "installed", "--driver", "installed", "--json")
    doc = json.loads(res.stdout)
    assert (res.returncode, doc["driver"], doc["verdict"]["8.7"]["status"]) == (0, "12.6", "SASS exact")


@pytest.mark.parametrize("version, installed", [(10020, None), (11000, "11.0"), (13020, "13.2"), (99990, "99.99")])
def test_driver_installed_has_the_one_floor_of_every_driver_spelling(make, monkeypatch, tmp_path, version, installed):
    """A machine's driver older than CUDA 11.0 is refused as `--driver 10.2` is: a usage error, no traceback;
    'installed' is a word in any case, for --gpu as for --driver."""
    from cuda_fatbin import _driver

    device = _driver.DeviceInfo(index=0, name="Fake", capability=(8, 0), driver=version)
    monkeypatch.setattr(_driver, "_probe", lambda: ((device,), None))
    (tmp_path / "f.fatbin").write_bytes(make("sm_80"))
    for argv in (("which", tmp_path / "f.fatbin", "--gpu", "INSTALLED"), ("scan", tmp_path, "--gpu", "80; installed ")):
        res = cli_main(*argv, "--driver", " Installed ", "--json")
        assert "Traceback" not in res.stderr, res.stderr
        if installed is None:
            assert res.returncode == 2 and "is older than CUDA 11.0 (450.36.06); not modelled" in res.stderr
        else:
            assert res.returncode == 0 and json.loads(res.stdout)["driver"] == installed, res.stderr


def test_cuda_fatbin_gpus_lists_every_name():
    res = cli_main("gpus")
    assert res.returncode == 0
    for name, _aliases, cap, tegra in gpu_names():
        line = next(ln for ln in res.stdout.splitlines() if ln.startswith(name + " "))
        assert cap.capability in line and ("Tegra" if tegra else "desktop") in line


def test_the_data_follows_its_schema_and_every_row_has_a_source():
    import jsonschema

    doc = json.loads(Path(DATA).read_text())
    schema = json.loads((Path(DATA).parent / "nvidia.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(doc, schema)
    rows = [*doc["rules"].values(), *doc["capabilities"], *doc["gpus"], *doc["ptx_isa_cuda"], *doc["driver_cuda"]]
    assert all(len(r["source"]) >= 10 for r in rows)
    assert set(doc["rules"]) == set(RULES)
    drivers = [tuple(int(p) for p in r["driver"].split(".")) for r in doc["driver_cuda"]]
    assert drivers == sorted(drivers) and len({r["cuda"] for r in doc["driver_cuda"]}) == len(drivers)
    for key in ("sass_tegra", "family_tegra", "ptx_tegra", "thor_rename", "driver_gpu_first", "driver_gpu_last"):
        assert RULES[key].status == "reported"  # no GPU run of ours has seen a Tegra GPU yet


def test_the_package_data_is_listed_for_the_wheel():
    root = Path(__file__).resolve().parent.parent
    line = next(ln for ln in (root / "pyproject.toml").read_text().splitlines() if ln.startswith("cuda_fatbin = ["))
    assert '"data/*.json"' in line  # scripts/wheel-smoke.sh checks the built wheel


def test_a_kernel_bundle_and_scan_follow_the_tegra_rules(tmp_path):
    from cuda_fatbin import BundleCoverageError, KernelBundle, KernelSuite, scan

    src = "template <typename T> __global__ void scale(T* p, T a) { p[0] *= a; }"
    KernelBundle.build(tmp_path / "b", {"k": KernelSuite(src, ["scale<float>"])}, archs="80-real;86-real")
    bundle = KernelBundle.open(tmp_path / "b")
    assert bundle.check("k", gpu="8.9", driver="13.0").status == "SASS compatible"
    with pytest.raises(BundleCoverageError, match="8.7 is a Tegra GPU, which runs SASS for 8.7 only"):
        bundle.check("k", gpu="Jetson AGX Orin", driver="13.0")
    report = scan([tmp_path / "b"], gpus="8.6;Jetson Orin NX", max_workers=1)
    assert {g: {b.coverage[g]["status"] for b in report.binaries if b.has_device_code} for g in report.gpus} == {
        "8.6": {"SASS exact"}, "8.7": {"no entry"}}  # fmt: skip
