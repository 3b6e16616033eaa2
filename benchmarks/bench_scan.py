# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Audit a whole environment: `cuda-fatbin scan` against cuobjdump over the same files, in one run.

    python benchmarks/bench_scan.py [PATH ...] [--gpu 75;80;86;89;90;100;120] [--driver 13.0] [--jobs N]

Default PATH: this Python's site-packages. Prints the wall time and the peak memory of the scan (one
process tree: the largest worker), then the wall time of `cuobjdump -lelf -lptx` over every file the
scan read, run on the same number of cores, and their ratio. Both are run twice; the second (warm
page cache) counts.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import resource
import shutil
import subprocess
import sys
import time

from cuda_fatbin._scan import _list_inputs, default_paths


def run_scan(paths, gpus, driver, jobs) -> tuple[float, float, str]:
    cmd = [sys.executable, "-m", "cuda_fatbin", "scan", *paths, "--gpu", gpus, "--jobs", str(jobs), "--json"]
    if driver:
        cmd += ["--driver", driver]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB, the largest child so far
    if res.returncode not in (0, 1):
        raise SystemExit(res.stderr)
    return wall, max(peak, before) / 1024, res.stdout


def run_cuobjdump(files: list[str], cuobjdump: str, jobs: int) -> float:
    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(jobs) as pool:
        list(pool.map(lambda f: subprocess.run([cuobjdump, "-lelf", "-lptx", f], capture_output=True), files))
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--gpu", default="75;80;86;89;90;100;120")
    ap.add_argument("--driver")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--cuobjdump", default=shutil.which("cuobjdump") or "cuobjdump")
    args = ap.parse_args()
    paths = args.paths or default_paths()
    files = sorted({i.path for i in _list_inputs(paths).items if i.member is None and i.error is None})
    size = sum(os.path.getsize(f) for f in files)
    print(f"{len(files)} binaries, {size / 2**30:.2f} GiB, {args.jobs} workers; cuobjdump: {args.cuobjdump}")
    scan_wall = peak = 0.0
    for _ in range(2):
        scan_wall, peak, _out = run_scan(paths, args.gpu, args.driver, args.jobs)
    theirs = 0.0
    for _ in range(2):
        theirs = run_cuobjdump(files, args.cuobjdump, args.jobs)
    print(f"cuda-fatbin scan: {scan_wall:.2f} s wall, peak RSS {peak:.0f} MiB (largest process)")
    print(f"cuobjdump -lelf -lptx, same files, {args.jobs} at a time: {theirs:.2f} s wall")
    print(f"ratio scan / cuobjdump: {scan_wall / theirs:.2f}x")


if __name__ == "__main__":
    main()
