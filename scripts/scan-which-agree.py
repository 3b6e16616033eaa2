#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Check that ``scan`` and ``which`` give every binary the same status, for drivers CUDA 12.0 to 13.0.

Usage: scripts/scan-which-agree.py [--gpu SPEC] [--driver VER ...] [--jobs N] PATH...

PATH: folders (a venv's site-packages, ``/opt/torch/.venv``), files and ``.whl``/``.zip`` archives. For
each driver, runs ``cuda-fatbin scan PATH... --json`` once, then ``cuda-fatbin which BINARY --json`` for
every binary with device code that scan found (``archive.whl::member`` paths included), both through
the command line's own entry point, and compares scan's per-GPU status with which's ``verdict`` and its
``covered`` with the exit code. Prints one line per disagreement and a summary per driver; exits 1 if
any binary disagrees (issue #23: ``which libcurand.so.10 --gpu 90 --driver 12.8`` said "needs newer
driver" where ``scan`` of its wheel said "SASS exact").
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import io
import json
import sys
import time

from cuda_fatbin._cli import main as cli
from cuda_fatbin._term import shown

DRIVERS = [f"12.{m}" for m in range(10)] + ["13.0"]
GPUS = "75;80;86;89;90;100;120"


def run(argv: list[str]) -> tuple[int, dict]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli(argv)
    return code, json.loads(out.getvalue()) if out.getvalue().strip() else {}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--gpu", default=GPUS)
    parser.add_argument("--driver", action="append", help=f"drivers to check (default {DRIVERS[0]}..{DRIVERS[-1]})")
    parser.add_argument("--jobs", "-j", type=int, default=None, help="scan's worker processes, and which's at once")
    args = parser.parse_args()
    bad = 0
    for driver in args.driver or DRIVERS:
        start = time.perf_counter()
        jobs = ["-j", str(args.jobs)] if args.jobs else []
        code, doc = run(["scan", *args.paths, "--gpu", args.gpu, "--driver", driver, "--json", *jobs])
        binaries = [b for b in doc.get("binaries", []) if b["coverage"]]
        for b in doc.get("binaries", []):
            if b["error"]:
                print(f"driver {driver}: unreadable in scan: {shown(b['path'])}: {shown(b['error'])}")
        disagree = 0
        with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
            answers = pool.map(run, [["which", b["path"], "--gpu", args.gpu, "--driver", driver, "--json"]
                                     for b in binaries])  # fmt: skip
            answers = list(answers)
        for b, (wcode, wdoc) in zip(binaries, answers, strict=True):
            verdict = wdoc.get("verdict") or {}
            scan_status = {g: v["status"] for g, v in b["coverage"].items()}
            which_status = {g: v["status"] for g, v in verdict.items()}
            scan_ok = all(v not in ("needs newer driver", "no entry") for v in scan_status.values())
            if scan_status != which_status or (wcode == 0) != scan_ok:
                disagree += 1
                diff = {g: (scan_status.get(g), which_status.get(g)) for g in scan_status
                        if scan_status.get(g) != which_status.get(g)}  # fmt: skip
                print(f"driver {driver}: {shown(b['path'])}: scan vs which {diff} (which exit {wcode})")
        bad += disagree
        took = time.perf_counter() - start
        print(f"driver {driver}: {len(binaries)} binaries with device code, {disagree} disagree, "
              f"{doc.get('unreadable', '?')} unreadable, scan exit {code} ({took:.1f} s)")  # fmt: skip
    print("scan and which agree" if not bad else f"{bad} disagreements")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
