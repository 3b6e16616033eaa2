"""Build the files the GPU tests carry (run on the CPU machine; not run by the tests).

The GPU machine has libnvfatbin 13.0 (no ``-concat``) and NVRTC 13.0 (PTX ISA 9.0), so two cases need
artifacts made here: concatenated fatbins (libnvfatbin >= 13.4) and PTX of ISA 9.5 (NVRTC 13.5).
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

from cuda_fatbin import FatbinOptions, Part, build_fatbin  # noqa: E402

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
    for p in sorted(data.iterdir()):
        print(p.name, p.stat().st_size)


if __name__ == "__main__":
    main()
