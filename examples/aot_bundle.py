# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Build a kernel bundle into a package at "build time", then load it from the package at "run time".

    python examples/aot_bundle.py

Uses examples/aot_package/ (see its README) in a temporary copy, with a job cache so that the second
build compiles nothing.
"""

from __future__ import annotations

import importlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

from cuda_fatbin import BundleCoverageError

from _gpu import current_gpu

HERE = Path(__file__).parent / "aot_package"

with tempfile.TemporaryDirectory() as tmp:
    shutil.copytree(HERE, Path(tmp) / "aot_package", ignore=shutil.ignore_patterns("kernels", "__pycache__"))
    sys.path.insert(0, str(Path(tmp) / "aot_package"))
    build_bundle = importlib.import_module("build_bundle")
    out = Path(tmp) / "aot_package" / "mykernels" / "kernels"

    # build time: cold, then a rebuild that finds every job in the cache
    for label in ("cold build", "rebuild"):
        t0 = time.perf_counter()
        bundle = build_bundle.build(out, cache_dir=str(Path(tmp) / "cache"))
        print(f"  {label}: {time.perf_counter() - t0:.2f} s")
    for name, rec in bundle.manifest["suites"].items():
        print(
            f"  {name}: SASS {', '.join(rec['sass_archs'])}; PTX {', '.join(rec['ptx_archs'])} "
            f"(ISA {rec['ptx_isa']}, JIT needs a CUDA {rec['ptx_min_driver_cuda']}+ driver); {rec['size']} bytes"
        )

    # run time: the package loads its kernels through importlib.resources
    mykernels = importlib.import_module("mykernels")
    dev, why = current_gpu()
    if dev is None:
        print(f"no GPU ({why}); checking against a few GPUs instead:")
        for gpu, driver in (("8.6", "12.4"), ("9.0", "13.0"), ("12.1", "12.8"), ("7.0", "13.0")):
            try:  # check() is load() without loading: no driver needed
                sel = mykernels.bundle().check("blas1", gpu=gpu, driver=driver)
                print(f"  {gpu} with CUDA {driver}: {sel.reason}")
            except BundleCoverageError as e:
                print(f"  {gpu} with CUDA {driver}: {e}")
    else:
        k = mykernels.kernel("blas1", "axpy<float>")
        print(f"loaded axpy<float> from the package bundle on {dev.name}: {k}")
