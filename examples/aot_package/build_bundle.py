# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Build step of the mykernels package: compile every suite into mykernels/kernels/ (package data).

    python examples/aot_package/build_bundle.py [--cache DIR]

Call it from your build backend (e.g. a setuptools build_py hook) so that wheels carry the bundle.
With --cache, rebuilds compile only the archs and suites that changed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from mykernels.sources import ARCHS, SUITES  # noqa: E402

from cuda_fatbin import FatbinOptions, KernelBundle  # noqa: E402


def build(out: Path, cache_dir: str | None = None) -> KernelBundle:
    cache = None
    if cache_dir:
        from cuda.core.utils import FileStreamProgramCache

        cache = FileStreamProgramCache(cache_dir)
    t0 = time.perf_counter()
    bundle = KernelBundle.build(out, SUITES, archs=ARCHS, fatbin_options=FatbinOptions(compress_mode="size"),
                                cache=cache)  # fmt: skip
    print(f"built {', '.join(bundle.suites)} into {out} in {time.perf_counter() - t0:.2f} s")
    return bundle


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache")
    parser.add_argument("--out", default=str(HERE / "mykernels" / "kernels"))
    args = parser.parse_args()
    build(Path(args.out), args.cache)
