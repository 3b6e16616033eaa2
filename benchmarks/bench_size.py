# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""`cuda-fatbin size` against cubloaty on the same file, in one run.

    python benchmarks/bench_size.py [FILE] [--repeat 5]

Default FILE: ``libcurand.so.10`` of the nvidia-curand 10.4.5.25 wheel (downloaded with pip into a temporary
folder). Runs ``cuda-fatbin size FILE --json --jobs 1`` and ``cubloaty FILE -f json`` alternately, each as a
fresh process (what a user runs), after one warm-up of each, and prints the best wall time of each, their
ratio, and the device bytes each reports. Needs ``pip install cubloaty``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path


def curand() -> Path:
    dest = Path(tempfile.mkdtemp())
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d",
                    str(dest), "nvidia-curand==10.4.5.25"], check=True)  # fmt: skip
    [wheel] = dest.glob("*.whl")
    out = dest / "libcurand.so.10"
    with zipfile.ZipFile(wheel) as zf, zf.open("nvidia/cu13/lib/libcurand.so.10") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def timed(cmd: list[str]) -> tuple[float, dict]:
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if res.returncode not in (0, 1):
        raise SystemExit(f"{cmd[0]} failed: {res.stderr[-500:]}")
    return wall, json.loads(res.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    path = Path(args.file) if args.file else curand()
    cubloaty = shutil.which("cubloaty", path=str(Path(sys.executable).parent)) or shutil.which("cubloaty")
    if cubloaty is None:
        raise SystemExit("cubloaty is not installed: pip install cubloaty")
    ours_cmd = [sys.executable, "-m", "cuda_fatbin", "size", str(path), "--json", "--jobs", "1"]
    theirs_cmd = [cubloaty, str(path), "-f", "json"]
    timed(ours_cmd), timed(theirs_cmd)  # warm-up: page cache, bytecode
    ours, theirs = [], []
    for _ in range(args.repeat):  # alternated, so a busy moment on a shared machine hits both
        wall, ours_doc = timed(ours_cmd)
        ours.append(wall)
        wall, theirs_doc = timed(theirs_cmd)
        theirs.append(wall)
    print(f"{path.name}: {path.stat().st_size / 2**20:.1f} MiB, best of {args.repeat}")
    print(f"cuda-fatbin size: {min(ours):.3f} s, device bytes {ours_doc['totals']['device_bytes']}")
    print(f"cubloaty:         {min(theirs):.3f} s, device bytes {theirs_doc['device_file_size']}")
    print(f"ratio: {min(theirs) / min(ours):.1f}x")


if __name__ == "__main__":
    main()
