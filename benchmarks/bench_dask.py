# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""compile("fatbin") on a dask.distributed LocalCluster against the default thread pool, in one run.

    python benchmarks/bench_dask.py [--workers N]

Source: the templated kernels of _common.py; 7 archs. Each timed compile changes a constant in the source
so that no compiler cache can answer it. Prints both times and the ratio cluster / threads, and the
bytes each job and result sends over the wire (pickled).
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import distributed

from cuda_fatbin import Program
from cuda_fatbin._multiarch import plan_fatbin

from _common import INSTANTIATIONS, KERNELS, NAMES

ARCHS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"]
_counter = iter(range(10**9))


def compile_once(**kw) -> float:
    src = KERNELS + INSTANTIATIONS + f"\n__device__ int cuda_fatbin_bench_{next(_counter)};\n"
    t0 = time.perf_counter()
    Program(src, "c++").compile("fatbin", NAMES, archs=ARCHS, ptx_for=(), **kw)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    args = ap.parse_args()
    threads = min(compile_once(max_workers=args.workers) for _ in range(3))
    cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None)  # fmt: skip
    with cluster, distributed.Client(cluster) as client:
        executor = client.get_executor()
        compile_once(executor=executor)  # warm the workers (imports, NVRTC load)
        cluster_time = min(compile_once(executor=executor) for _ in range(3))
    job = plan_fatbin(ARCHS, ptx_for=()).jobs[0]
    print(f"{len(ARCHS)} archs, {len(NAMES)} instantiations, {args.workers} workers, {os.cpu_count()} cores")
    print(f"  thread pool: {threads:.2f} s;  LocalCluster ({args.workers} processes): {cluster_time:.2f} s "
          f"-> {cluster_time / threads:.2f}x")  # fmt: skip
    print(f"  pickled job: {len(pickle.dumps(job))} bytes; source sent with each job: {len(KERNELS + INSTANTIATIONS)}"
          " bytes")  # fmt: skip


if __name__ == "__main__":
    main()
