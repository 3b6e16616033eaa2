# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""`cuda-fatbin size` against cubloaty on the same file, in one run.

    python benchmarks/bench_size.py [FILE] [--repeat 5] [--rev REV]

Default FILE: ``libcurand.so.10`` of the nvidia-curand 10.4.5.25 wheel (downloaded with pip into a temporary
folder). Runs ``cuda-fatbin size FILE --json`` (what a user runs: one worker per CPU, which share a large file's
fatbins), the same with ``--jobs 1`` (one process) and ``cubloaty FILE -f json`` alternately, each as a fresh
process, after one warm-up of each, and prints the best wall time of each, their
ratio, and the device bytes each reports. Needs ``pip install cubloaty``. With ``--rev``, REV's
``cuda-fatbin size`` (``git archive``, as ``bench_guard.py`` does) runs in the same rounds: before/after in
one run. Both tools run with bytecode written and reused, as installed code runs (``PYTHONDONTWRITEBYTECODE``
is dropped from their environment: with it every run compiles every module again).
"""

from __future__ import annotations

import argparse
import json
import os
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


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, dict]:
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    wall = time.perf_counter() - t0
    if res.returncode not in (0, 1):
        raise SystemExit(f"{cmd[0]} failed: {res.stderr[-500:]}")
    return wall, json.loads(res.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rev", help="also time this revision's size, in the same rounds")
    args = ap.parse_args()
    path = Path(args.file) if args.file else curand()
    cubloaty = shutil.which("cubloaty", path=str(Path(sys.executable).parent)) or shutil.which("cubloaty")
    if cubloaty is None:
        raise SystemExit("cubloaty is not installed: pip install cubloaty")
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_guard import ROOT, baseline_tree, check_import, env_for, run_once

    size = [sys.executable, "-m", "cuda_fatbin", "size", str(path), "--json"]
    with tempfile.TemporaryDirectory() as tmp:
        runs = {"cuda-fatbin size": (size, env_for(ROOT / "src")),
                "size --jobs 1": ([*size, "--jobs", "1"], env_for(ROOT / "src"))}  # fmt: skip
        check_import(ROOT / "src")
        if args.rev:
            old = baseline_tree(args.rev, Path(tmp))
            check_import(old)
            runs[f"size at {args.rev}"] = (size, env_for(old))
        plain = dict(os.environ)
        plain.pop("PYTHONDONTWRITEBYTECODE", None)
        runs["cubloaty"] = ([cubloaty, str(path), "-f", "json"], plain)
        docs = {name: timed(*run)[1] for name, run in runs.items()}  # warm-up: page cache, bytecode
        wall, cpu = dict.fromkeys(runs, float("inf")), dict.fromkeys(runs, float("inf"))
        for _ in range(args.repeat):  # alternated, so a busy moment on a shared machine hits all alike
            for name, (cmd, env) in runs.items():
                took, used, _code = run_once(cmd, env, (0, 1))
                wall[name], cpu[name] = min(wall[name], took), min(cpu[name], used)
    print(f"{path.name}: {path.stat().st_size / 2**20:.1f} MiB, best of {args.repeat} (wall; CPU: user + system of "
          "the process tree, less moved by a busy machine)")  # fmt: skip
    for name in runs:
        device = docs[name]["device_file_size"] if name == "cubloaty" else docs[name]["totals"]["device_bytes"]
        ratio = "" if name == "cubloaty" else (f"; {wall['cubloaty'] / wall[name]:.1f}x faster than cubloaty "
                                               f"(CPU {cpu['cubloaty'] / cpu[name]:.1f}x)")  # fmt: skip
        print(f"{name + ':':22} {wall[name]:.3f} s, CPU {cpu[name]:.3f} s{ratio}; device bytes {device}")


if __name__ == "__main__":
    main()
