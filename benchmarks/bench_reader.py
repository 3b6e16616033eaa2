# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Listing fatbin entries: read_fatbin/iter_fatbins against ``cuobjdump -all -lelf -lptx``, with peak memory.

    python benchmarks/bench_reader.py [FILE ...]

Without arguments it uses (1) a large fatbin built here (every NVRTC arch, realistic kernels, no
compression) and (2) libcurand.so from the nvidia-curand wheel (~100 MB with embedded fatbins),
downloaded once into ~/.cache/cuda-fatbin-bench if it is not installed.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cuda_fatbin import FatbinOptions, Program, iter_fatbins

from _common import INSTANTIATIONS, KERNELS, best_of

LIST = (
    "import sys; from cuda_fatbin import iter_fatbins; "
    "n = sum(1 for fb in iter_fatbins(sys.argv[1]) for e in fb.iter_entries()); print(n)"
)


def cuobjdump() -> str:
    sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
    from conftest import find_cuobjdump

    path = find_cuobjdump()
    if path is None:
        raise SystemExit("cuobjdump not found: pip install nvidia-cuda-cuobjdump")
    return path


def child_peak_mib(cmd: list[str]) -> tuple[float, str]:
    """Run ``cmd`` in a fresh process (via a wrapper) and return its peak RSS in MiB and its stdout."""
    wrapper = (
        "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); print(r.stdout, end='')"
    )
    out = subprocess.run([sys.executable, "-c", wrapper, *cmd], capture_output=True, text=True, check=True).stdout
    peak, _, rest = out.partition("\n")
    return int(peak) / 1024, rest


def large_fatbin(tmp: str) -> Path:
    from cuda_fatbin._arch import nvrtc_supported_sms

    archs = [f"sm_{s}" for s in nvrtc_supported_sms()]
    obj = Program(KERNELS + INSTANTIATIONS, "c++").compile(
        "fatbin", archs=archs, ptx_for=archs, fatbin_options=FatbinOptions(compress=False)
    )
    path = Path(tmp, "large.fatbin")
    path.write_bytes(bytes(obj.code))
    return path


def curand() -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        for cand in Path(root).glob("*/lib/libcurand.so*"):
            return cand
    cache = Path.home() / ".cache" / "cuda-fatbin-bench"
    found = sorted(cache.glob("**/libcurand.so*"))
    if found:
        return found[0]
    cache.mkdir(parents=True, exist_ok=True)
    res = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "nvidia-curand", "-d", str(cache)]
    )
    wheels = sorted(cache.glob("nvidia_curand-*.whl"))
    if res.returncode or not wheels:
        return None
    import zipfile

    with zipfile.ZipFile(wheels[0]) as z:
        name = next(n for n in z.namelist() if "libcurand.so" in n)
        z.extract(name, cache)
    return cache / name


def bench(path: Path, tool: str) -> None:
    size = path.stat().st_size / 2**20
    fatbins = list(iter_fatbins(path))
    entries = sum(1 for fb in fatbins for _ in fb.iter_entries())
    in_proc = best_of(lambda: sum(1 for fb in iter_fatbins(path) for _ in fb.iter_entries()), repeat=5)
    ours = best_of(lambda: subprocess.run([sys.executable, "-c", LIST, str(path)], check=True, capture_output=True))
    theirs = best_of(
        lambda: subprocess.run([tool, "-all", "-lelf", "-lptx", str(path)], check=True, capture_output=True)
    )
    our_mem, n = child_peak_mib([sys.executable, "-c", LIST, str(path)])
    their_mem, listing = child_peak_mib([tool, "-all", "-lelf", "-lptx", str(path)])
    assert int(n) == entries == sum(1 for line in listing.splitlines() if " file " in line), "entry counts differ"
    print(f"{path.name}: {size:.1f} MiB, {len(fatbins)} fatbins, {entries} entries")
    print(f"  in-process listing        {in_proc * 1e3:8.1f} ms")
    print(f"  python -c (incl. startup) {ours * 1e3:8.1f} ms   peak RSS {our_mem:6.1f} MiB")
    print(f"  cuobjdump -all -lelf -lptx{theirs * 1e3:8.1f} ms   peak RSS {their_mem:6.1f} MiB")
    print(
        f"  ratio ours / cuobjdump: time {ours / theirs:.2f}x (in-process {in_proc / theirs:.3f}x), "
        f"memory {our_mem / their_mem:.2f}x"
    )


def main() -> None:
    tool = cuobjdump()
    with tempfile.TemporaryDirectory() as tmp:
        paths = [Path(p) for p in sys.argv[1:]] or [large_fatbin(tmp), curand()]
        for path in paths:
            if path is None:
                print("libcurand not available (no network?): skipped")
                continue
            bench(path, tool)
    print(
        f"(this process: peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB, "
        f"{os.cpu_count()} cores)"
    )


if __name__ == "__main__":
    main()
