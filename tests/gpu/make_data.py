# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Build the files the GPU tests carry (run where NVRTC and libnvfatbin 13.5 are installed; not run by the tests).

The GPU host they were validated on (H200, driver 580) has libnvfatbin 13.0 (no ``-concat``) and NVRTC 13.0
(PTX ISA 9.0), so two cases need artifacts made with 13.5: concatenated fatbins (libnvfatbin >= 13.4) and
PTX of ISA 9.5 (NVRTC 13.5).
Cubins and ISA-9.0 PTX come from nvcc 13.0 so that the 13.0 driver can load them.

    python tests/gpu/make_data.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))

import json  # noqa: E402
import struct  # noqa: E402

from cuda_fatbin import FatbinOptions, Part, build_fatbin, read_fatbin  # noqa: E402

from fatbin_testing import nvrtc_compile  # noqa: E402

TAG_SRC = 'extern "C" __global__ void tag(int* out) { *out = TAG; }\n'


def nvcc(kind: str, arch: str, tag: int, tmp: str) -> bytes:
    src = Path(tmp, "tag.cu")
    src.write_text(TAG_SRC)
    out = Path(tmp, f"out.{kind}")
    flag = "-cubin" if kind == "cubin" else "-ptx"
    subprocess.run(["nvcc", flag, f"-arch={arch}", f"-DTAG={tag}", "-o", str(out), str(src)], check=True)
    return out.read_bytes()


def main() -> None:
    data = HERE / "data"
    data.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        sm80, sm90 = nvcc("cubin", "sm_80", 10, tmp), nvcc("cubin", "sm_90", 11, tmp)
        ptx80 = nvcc("ptx", "compute_80", 12, tmp)
    concat = FatbinOptions(concat=True)
    (data / "concat_sass_ptx.fatbin").write_bytes(build_fatbin([sm80, sm90, Part(ptx80, kind="ptx")], options=concat))
    (data / "concat_ptx_only.fatbin").write_bytes(build_fatbin([Part(ptx80, kind="ptx")], options=concat))
    isa95 = nvrtc_compile(TAG_SRC.replace("TAG", "13"), "80", "ptx")
    assert b".version 9.5" in isa95, "needs NVRTC 13.5"
    (data / "tag13_isa95_compute80.ptx").write_bytes(isa95.rstrip(b"\0"))
    fallback_cases(data / "fallback")
    for p in sorted(data.rglob("*")):
        print(p.relative_to(data), p.stat().st_size)


def splice(*pieces: tuple[bytes, int]) -> bytes:
    """One fatbin of the given entries (fatbin bytes, entry index), in this order: a container libnvfatbin
    cannot write, e.g. a concatenated entry next to a plain one."""
    body = b""
    for data, index in pieces:
        e = read_fatbin(data).entries[index]
        hsize, psize = struct.unpack_from("<IQ", data, e.offset + 4)
        body += data[e.offset : e.offset + hsize + psize]
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def _file_name(case: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in case).strip("_").lower()


def fallback_cases(out: Path) -> None:
    """Fatbins where an entry the driver cannot use ties with or outranks a usable one, in both orders.

    Each entry carries its own tag (the value the kernel writes). ``cases.json`` lists, per case, the
    file, the entries and the environment; the GPU test predicts each with select_entry.
    """
    out.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:

        def cubin(arch, tag):
            return Part(nvcc("cubin", arch, tag, tmp), kind="cubin", identifier=f"t{tag}")

        def ptx(arch, tag):
            return Part(nvcc("ptx", arch, tag, tmp), kind="ptx", identifier=f"t{tag}")

        def ptx95(arch, tag):
            text = nvrtc_compile(TAG_SRC.replace("TAG", str(tag)), arch.split("_")[1], "ptx").rstrip(b"\0")
            assert b".version 9.5" in text, "needs NVRTC 13.5"
            return Part(text, kind="ptx", identifier=f"t{tag}")

        def ltoir(arch, tag):
            return Part(nvrtc_compile(TAG_SRC.replace("TAG", str(tag)), arch.split("_")[1], "ltoir"), kind="ltoir",
                        identifier=f"t{tag}")  # fmt: skip

        def reloc(arch, tag):
            src = Path(tmp, "r.cu")
            src.write_text(TAG_SRC.replace("TAG", str(tag)))
            obj = Path(tmp, "r.o")
            subprocess.run(["nvcc", "-c", "-rdc=true", f"-arch={arch}", "-o", str(obj), str(src)], check=True)
            return Part(obj.read_bytes(), kind="reloc")

        tile = Part(b"\x7fTileIR\x00" + bytes([13, 1, 0, 0]) + bytes(20), kind="tile_ir", identifier="tile")
        plain = FatbinOptions(compress=False)
        cases = []

        def add(name, parts, entries, env=None, options=plain, both_orders=True):
            orders = [(parts, entries)] + ([(parts[::-1], entries[::-1])] if both_orders else [])
            for i, (ps, es) in enumerate(orders):
                file = f"{_file_name(name)}{'_rev' if i else ''}.fatbin"
                (out / file).write_bytes(build_fatbin(ps, options=options))
                cases.append({"case": name + (" (reversed)" if i else ""), "file": file, "entries": es,
                              "env": env or {}})  # fmt: skip

        add(
            "ISA 9.5 compute_86 + ISA 9.0 compute_80",
            [ptx95("compute_86", 60), ptx("compute_80", 70)],
            ["ptx compute_86 ISA 9.5 (tag 60)", "ptx compute_80 ISA 9.0 (tag 70)"],
        )
        add(
            "ISA 9.5 compute_90 + ISA 9.0 compute_90",
            [ptx95("compute_90", 61), ptx("compute_90", 71)],
            ["ptx compute_90 ISA 9.5 (tag 61)", "ptx compute_90 ISA 9.0 (tag 71)"],
        )
        add(
            "ISA 9.5 compute_90 + SASS sm_80",
            [ptx95("compute_90", 75), cubin("sm_80", 76)],
            ["ptx compute_90 ISA 9.5 (tag 75)", "cubin sm_80 (tag 76)"],
            both_orders=False,
        )
        add(
            "CUDA_DISABLE_PTX_JIT, PTX compute_90 + SASS sm_90",
            [ptx("compute_90", 72), cubin("sm_90", 73)],
            ["ptx compute_90 (tag 72)", "cubin sm_90 (tag 73)"],
            {"CUDA_DISABLE_PTX_JIT": "1"},
        )
        add(
            "CUDA_DISABLE_PTX_JIT, PTX only",
            [ptx("compute_80", 74)],
            ["ptx compute_80 (tag 74)"],
            {"CUDA_DISABLE_PTX_JIT": "1"},
            both_orders=False,
        )
        add(
            "CUDA_FORCE_PTX_JIT, SASS sm_90 + PTX compute_80",
            [cubin("sm_90", 77), ptx("compute_80", 78)],
            ["cubin sm_90 (tag 77)", "ptx compute_80 (tag 78)"],
            {"CUDA_FORCE_PTX_JIT": "1"},
        )
        add(
            "LTO-IR sm_90 + PTX compute_80",
            [ltoir("sm_90", 68), ptx("compute_80", 69)],
            ["ltoir sm_90 (tag 68)", "ptx compute_80 (tag 69)"],
        )
        add("LTO-IR only", [ltoir("sm_90", 79)], ["ltoir sm_90 (tag 79)"], both_orders=False)
        add(
            "compressed LTO-IR + SASS sm_90",
            [ltoir("sm_90", 80), cubin("sm_90", 81)],
            ["ltoir sm_90, compressed (tag 80)", "cubin sm_90 (tag 81)"],
            options=FatbinOptions(compress_all=True),
        )
        add("Tile IR + SASS sm_90", [tile, cubin("sm_90", 82)], ["tile_ir", "cubin sm_90 (tag 82)"])
        add(
            "relocatable PTX (add_reloc) + SASS sm_90",
            [reloc("sm_90", 83), cubin("sm_90", 84)],
            ["reloc sm_90 (tag 83)", "cubin sm_90 (tag 84)"],
        )
        add("relocatable PTX (add_reloc) only", [reloc("sm_90", 85)], ["reloc sm_90 (tag 85)"], both_orders=False)
        # a concatenated entry next to plain ones (libnvfatbin writes all of a kind concatenated or none)
        concat = FatbinOptions(concat=True)
        c90 = build_fatbin([cubin("sm_90", 62)], options=concat)
        p80 = build_fatbin([ptx("compute_80", 63)], options=plain)
        s90 = build_fatbin([cubin("sm_90", 65)], options=plain)
        for name, pieces, entries in (
            ("concat SASS sm_90 + plain PTX compute_80", [(c90, 0), (p80, 0)],
             ["concat: cubin sm_90 (tag 62)", "ptx compute_80 (tag 63)"]),
            ("concat SASS sm_90 + plain SASS sm_90", [(c90, 0), (s90, 0)],
             ["concat: cubin sm_90 (tag 62)", "cubin sm_90 (tag 65)"]),
        ):  # fmt: skip
            for i, (ps, es) in enumerate(((pieces, entries), (pieces[::-1], entries[::-1]))):
                file = f"{_file_name(name)}{'_rev' if i else ''}.fatbin"
                (out / file).write_bytes(splice(*ps))
                cases.append({"case": name + (" (reversed)" if i else ""), "file": file, "entries": es, "env": {}})
    (out / "cases.json").write_text(json.dumps(cases, indent=1))


if __name__ == "__main__":
    main()
