#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Compare our reader with cuobjdump on every device-code file under the given paths.

Usage: scripts/agree-with-cuobjdump.py [--payloads] [--jobs N] [--cuobjdump PATH] PATH...

For each ELF file, fatbin and cubin found (by magic, symlinks not followed), lists the ELF and PTX
entries with ``cuobjdump -lelf -lptx`` and with ``iter_fatbins`` (the same defaults: ``__nv_relfatbin``
only in relocatable objects, nothing stored as data) and compares the names, which encode kind, arch,
number and identifier. With ``--payloads`` it also extracts both ways and compares the bytes (SHA-256).
Prints one line per disagreement and a summary; exits 1 if any file disagrees.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures as cf
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cuda_fatbin._detect import FATBIN_MAGIC
from cuda_fatbin._elf import ELF_MAGIC
from cuda_fatbin._extract import entry_file_names, extract_entries
from cuda_fatbin._reader import FatbinFormatError, iter_fatbins

_LINE = re.compile(r"^(ELF|PTX) file\s+\d+: (.*)$")
_MAGICS = (ELF_MAGIC, FATBIN_MAGIC)


def candidates(paths: list[str]):
    for root in paths:
        if os.path.isfile(root):
            yield root
            continue
        for dirpath, _dirs, files in os.walk(root):
            for f in files:
                p = os.path.join(dirpath, f)
                if os.path.islink(p) or not os.path.isfile(p):
                    continue
                try:
                    with open(p, "rb") as fh:
                        if fh.read(4) in _MAGICS:
                            yield p
                except OSError:
                    continue


def compare(path: str, cuobjdump: str, payloads: bool) -> dict:
    t0 = time.perf_counter()
    res = subprocess.run([cuobjdump, "-lelf", "-lptx", path], capture_output=True, text=True)
    t_theirs = time.perf_counter() - t0
    theirs = collections.Counter(
        m.group(2).strip() for line in res.stdout.splitlines() if (m := _LINE.match(line.strip()))
    )
    out = {"path": path, "diffs": [], "entries": 0, "t_theirs": t_theirs}
    t0 = time.perf_counter()
    try:
        fatbins = list(iter_fatbins(path))
        listed = entry_file_names(fatbins, Path(path).name, unique=False)
        names = [n for e, n in listed if e.kind in ("elf", "ptx")]
    except FatbinFormatError as e:
        if theirs:
            out["diffs"].append(f"ours failed: {e}")
        return out
    out["t_ours"] = time.perf_counter() - t0
    ours = collections.Counter(names)
    out["entries"] = sum(ours.values())
    if res.returncode != 0 and not theirs and ours:
        out["diffs"].append(f"cuobjdump failed: {res.stderr.strip()[:200]}")
    for name in sorted(set(ours) | set(theirs)):
        if ours[name] != theirs[name]:
            out["diffs"].append(f"{name}: ours {ours[name]}, cuobjdump {theirs[name]}")
    if payloads and ours and not out["diffs"] and max(ours.values()) == 1:
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            subprocess.run([cuobjdump, "-xelf", "all", "-xptx", "all", os.path.abspath(path)], cwd=a,
                           capture_output=True)  # fmt: skip
            extract_entries(path, b, kinds=["elf", "ptx"], on_error=lambda e, n, x: None)
            digest = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in Path(a).iterdir()}
            for p in Path(b).iterdir():
                if digest.get(p.name) != hashlib.sha256(p.read_bytes()).hexdigest():
                    out["diffs"].append(f"{p.name}: payload differs")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--payloads", action="store_true", help="also compare extracted bytes")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--cuobjdump", default="cuobjdump")
    args = ap.parse_args()
    files = list(candidates(args.paths))
    t0 = time.perf_counter()
    with cf.ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(compare, files, [args.cuobjdump] * len(files), [args.payloads] * len(files)))
    wall = time.perf_counter() - t0
    bad = [r for r in results if r["diffs"]]
    with_code = [r for r in results if r["entries"]]
    for r in bad:
        for d in r["diffs"]:
            print(f"{r['path']}: {d}")
    t_theirs, t_ours = sum(r["t_theirs"] for r in results), sum(r.get("t_ours", 0) for r in results)
    print(f"files: {len(files)} read, {len(with_code)} with device code, {len(bad)} disagree; "
          f"entries: {sum(r['entries'] for r in results)}; cuobjdump {t_theirs:.1f} s, ours {t_ours:.1f} s "
          f"(summed over files); wall {wall:.1f} s on {args.jobs} workers")  # fmt: skip
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
