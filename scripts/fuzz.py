#!/usr/bin/env python3
"""A longer fuzz run of the reading side than the test suite's (not run in CI).

    python scripts/fuzz.py [--seconds 300] [--seed 0]

Mutates fatbins (plain, LZ4, zstd, concatenated), host ELF files and bundle manifests, and checks for
every example: only documented exceptions, at most 2 s, nothing written outside a temporary directory.
Prints the statistics that docs/security.md records. Needs the test extra (NVRTC and libnvfatbin build
the seeds).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import random
import shutil
import sys
import tempfile
import time
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
)
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


def mutate(rng: random.Random, data: bytes) -> bytes:
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
    return bytes(blob[: rng.randint(16, len(blob))])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    base = seeds()
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
            try:
                if rng.random() < 0.8:
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
