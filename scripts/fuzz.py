#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""A longer fuzz run of the reading side than the test suite's (not run in CI).

    python scripts/fuzz.py [--seconds 300] [--seed 0]

Mutates fatbins (plain, LZ4, zstd, concatenated), host ELF files, bundle manifests and wheels, and
builds random folders (names with control characters and bytes that are not UTF-8, symlinks in and out,
FIFOs, mutated binaries) for ``scan``; checks for every example: only documented exceptions (``scan``:
none at all, an unreadable input is a row that makes ``covered`` false), at most 2 s, nothing written
outside a temporary directory, nothing read outside a scanned folder.
Prints the statistics that docs/security.md records. Needs the test extra (NVRTC and libnvfatbin build
the seeds).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import random
import shutil
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))

from cuda_fatbin import (
    BundleError,
    FatbinFormatError,
    FatbinOptions,
    KernelBundle,
    KernelSuite,
    Part,
    build_fatbin,
    extract_entries,
    iter_fatbins,
    scan,
)
from cuda_fatbin._archive import list_members, read_member
from test_hostile import concat_fatbin, elf_with_sections

from fatbin_testing import KERNEL_SRC, nvrtc_compile


def seeds() -> dict[str, bytes]:
    cubin, ptx = nvrtc_compile(KERNEL_SRC, "80", "cubin"), nvrtc_compile(KERNEL_SRC, "90", "ptx")
    parts = [cubin, Part(ptx, identifier="p/q", options="-O3")]
    out = {
        "plain": build_fatbin(parts, options=FatbinOptions(compress=False)),
        "zstd": build_fatbin(parts, options=FatbinOptions(compress_all=True)),
        "lz4": build_fatbin(parts, options=FatbinOptions(compress_all=True, compress_mode="speed")),
        "concat": concat_fatbin(bytes(range(256)) * 64, [(0, 4096), (4096, 8192), (12288, 4096)]),
    }
    fat = out["plain"]
    out["elf"] = elf_with_sections(fat + fat, [(".nv_fatbin", 0, 2 * len(fat)), (".data", 0, len(fat))])
    return out


def wheel_seed(fat: bytes, elf: bytes) -> bytes:
    """A small wheel: a deflated and a stored binary, METADATA and RECORD."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("w/k.fatbin", fat)
        zf.writestr(zipfile.ZipInfo("w/lib.so"), elf, zipfile.ZIP_STORED)
        zf.writestr("w-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: w\nVersion: 1.0\n")
        zf.writestr("w-1.0.dist-info/RECORD", "w/k.fatbin,,\nw/lib.so,,\n")
    return buf.getvalue()


def check_scan(paths: list[Path], outside: Path | None = None) -> str:
    """scan raises nothing, counts every unreadable input as not covered, reads nothing outside."""
    report = scan(paths, gpus="80;90", max_workers=1)
    if report.unreadable and report.covered:
        raise AssertionError("an unreadable input and covered")
    if outside is not None and any(os.fsdecode(outside) in b.path for b in report.binaries):
        raise AssertionError("read a file outside the scanned folder")
    return f"unreadable {min(len(report.unreadable), 3)}{'+' if len(report.unreadable) > 3 else ''}"


def archive_example(rng: random.Random, root: Path, seed: bytes) -> str:
    path = root / "w-1.0-py3-none-any.whl"
    path.write_bytes(mutate(rng, seed, cut=rng.random() < 0.2))  # a cut wheel has no directory: few of those
    try:
        members = list_members(str(path), head=4)
    except OSError:
        members = []
    for m in members:
        with contextlib.suppress(OSError):
            read_member(str(path), m)
    return "archive: " + check_scan([path])


_NAMES = ["k.fatbin", "lib.so", "a\x1b[31m.so", "[link=x]b.so", "new\nline.so", "x!y", "d::e", "w.whl"]


def tree_example(rng: random.Random, root: Path, blobs: list[bytes], seed_wheel: bytes) -> str:
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.fatbin").write_bytes(blobs[0])
    tree = root / "tree"
    folders = [tree]
    tree.mkdir()
    for i in range(rng.randint(1, 12)):
        parent = rng.choice(folders)
        name = rng.choice(_NAMES) + str(i)
        path = os.path.join(os.fsencode(parent), os.fsencode(name) + (b"\xff" if rng.random() < 0.2 else b""))
        how = rng.random()
        if how < 0.25:
            os.mkdir(path)
            folders.append(Path(os.fsdecode(path)))
        elif how < 0.55:
            with open(path, "wb") as f:
                f.write(mutate(rng, rng.choice(blobs)))
        elif how < 0.65:
            with open(path, "wb") as f:
                f.write(mutate(rng, seed_wheel) if rng.random() < 0.5 else seed_wheel)
        elif how < 0.8:
            os.symlink(rng.choice([outside, outside / "secret.fatbin", tree, "/dev/zero"]), path)
        elif how < 0.9:
            os.mkfifo(path)
        else:
            with open(path, "wb") as f:
                f.write(rng.choice(blobs))
    return "tree: " + check_scan([tree], outside)


def mutate(rng: random.Random, data: bytes, cut: bool = True) -> bytes:
    blob = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        how = rng.random()
        pos = rng.randrange(len(blob))
        if how < 0.6:
            blob[pos] = rng.randrange(256)
        elif how < 0.8:
            blob[pos : pos + 8] = rng.randbytes(8)
        else:  # a plausible large or small integer where a size or offset may be
            blob[pos : pos + 4] = rng.choice([0, 1, 0xFFFFFFFF, 0x7FFFFFFF, len(blob), 64]).to_bytes(4, "little")
    return bytes(blob[: rng.randint(16, len(blob))] if cut else blob)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    base = seeds()
    seed_wheel = wheel_seed(base["plain"], base["elf"])
    outcomes: collections.Counter = collections.Counter()
    slowest, examples, bad = 0.0, 0, []
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Path(tmp) / "bundle"
        KernelBundle.build(bundle, {"k": KernelSuite(KERNEL_SRC, ["scale<float>"])}, archs=["sm_80"])
        manifest = json.loads((bundle / "manifest.json").read_text())
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            examples += 1
            root = Path(tempfile.mkdtemp(dir=tmp))
            t0 = time.perf_counter()
            pick = rng.random()
            try:
                if pick < 0.15:
                    outcomes[archive_example(rng, root, seed_wheel)] += 1
                elif pick < 0.3:
                    outcomes[tree_example(rng, root, list(base.values()), seed_wheel)] += 1
                elif pick < 0.85:
                    blob = mutate(rng, base[rng.choice(list(base))])
                    n = 0
                    for fb in iter_fatbins(blob, embedded=True, relocatable=True):
                        for e in fb.iter_entries():
                            with contextlib.suppress(FatbinFormatError):
                                n += len(e.data())
                    extract_entries(blob, root / "out", embedded=True, on_error=lambda *a: None)
                    outcomes["reader: read"] += 1
                else:
                    text = json.dumps(manifest)
                    pos = rng.randrange(len(text))
                    text = text[:pos] + rng.choice(['"', "{", "}", "[", "1", "null", "..", "/", "\\u0000"]) + text[pos:]
                    (root / "b").mkdir()
                    (root / "b" / "manifest.json").write_text(text)
                    KernelBundle.open(root / "b").fatbin("k")
                    outcomes["manifest: accepted"] += 1
            except FatbinFormatError:
                outcomes["reader: FatbinFormatError"] += 1
            except BundleError:
                outcomes["manifest: BundleError"] += 1
            except KeyError:
                outcomes["manifest: KeyError (no such suite)"] += 1
            except Exception as e:  # anything else breaks a promise
                bad.append(f"{type(e).__name__}: {e}")
            elapsed = time.perf_counter() - t0
            slowest = max(slowest, elapsed)
            outside = [p for p in Path(tmp).iterdir() if p not in (root, bundle)]
            shutil.rmtree(root)
            if elapsed > 2.0 or outside:
                bad.append(f"example {examples}: {elapsed:.2f} s, files outside: {outside[:3]}")
    print(f"{examples} examples in {args.seconds:.0f} s (seed {args.seed}); slowest {slowest * 1e3:.1f} ms")
    for k, v in sorted(outcomes.items()):
        print(f"  {k}: {v}")
    for b in bad[:20]:
        print(f"  BROKEN PROMISE: {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
