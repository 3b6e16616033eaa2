# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The reader on hostile input: how work grows with the input (issue #23's cases), as ratios in one run.

    python benchmarks/bench_hostile_reader.py

Linear work shows as a time ratio close to the size ratio: near-valid fatbin headers every 80 bytes
(identifiers to the end of the data) at 0.5 MB and 4 MB (8x the bytes: ~8x the time; it was ~64x when
each candidate read its identifier), stored fatbins claimed before registered ones against the same
count claimed after them (~1x; it grew with the count), and ``parse_archs`` on ``"=" * N + "arch=x"``
for N = 10^5 and 10^6 (~10x). The 4 GiB sparse file is timed alone (it is a fixed case, not a ratio).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
from cuda_fatbin import iter_fatbins, parse_archs
from cuda_fatbin._reader import _Seen
from test_hostile_reader import near_valid, tiny_fatbin

from _common import best_of


def seconds(fn) -> float:
    return best_of(fn, 3)


def claims(stored_first: bool, k: int) -> None:
    seen = _Seen(200 * k)
    low = [(80 * i, 80 * i + 80) for i in range(k)]
    high = [(80 * (k + i), 80 * (k + i) + 80) for i in range(k)]
    registered, stored = (high, low) if stored_first else (low, high)
    for s, e in registered:
        seen.claim(s, e)
    for s, e in stored:
        seen.claim(s, e, stored=True)


def spec_error(n: int) -> None:
    with contextlib.suppress(ValueError):
        parse_archs("=" * n + "arch=x")


def main() -> None:
    small, large = near_valid(512 << 10), near_valid(4 << 20)
    a = seconds(lambda: list(iter_fatbins(small, embedded=True)))
    b = seconds(lambda: list(iter_fatbins(large, embedded=True)))
    print(f"near-valid headers: 0.5 MB {a:.3f} s, 4 MB {b:.3f} s, ratio {b / a:.1f}x for 8x the bytes")
    c = seconds(lambda: claims(False, 100_000))
    d = seconds(lambda: claims(True, 100_000))
    print(f"claims, 100k stored after / before 100k registered: {c:.3f} s / {d:.3f} s, ratio {d / c:.2f}x")
    e, f = seconds(lambda: spec_error(10**5)), seconds(lambda: spec_error(10**6))
    print(f"parse_archs('=' * N + 'arch=x'): N=1e5 {e:.4f} s, N=1e6 {f:.4f} s, ratio {f / e:.1f}x for 10x")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "sparse.bin")
        with open(path, "wb") as out:
            out.write(b"NOTFATBN")
            out.truncate(4 << 30)
            out.seek((4 << 30) - 4096)
            out.write(tiny_fatbin())
        start = time.perf_counter()
        found = list(iter_fatbins(path, embedded=True))
        print(f"sparse 4 GiB file, fatbin at its end: {len(found)} found in {time.perf_counter() - start:.3f} s")


if __name__ == "__main__":
    main()
