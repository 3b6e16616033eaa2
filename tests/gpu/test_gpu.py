# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""On a real GPU: fatbins load and the right code runs; select_entry agrees with the driver.

Run where there is a GPU: ``PYTHONPATH=src python3 -m pytest -m gpu`` (skips cleanly without a device).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda_fatbin import Arch, FatbinOptions, Part, Program, build_fatbin, from_parts, read_fatbin, select_entry
from cuda_fatbin._multiarch import _nvrtc

from gpuutil import DATA, TAG_SRC, run_fatbin, run_fatbin_subprocess

pytestmark = pytest.mark.gpu

SAXPY = r"""
template <typename T> __global__ void saxpy(T a, const T* x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def launch_saxpy(device, obj, name: str, dtype) -> float:
    from cuda.bindings import driver
    from cuda.core import LaunchConfig, launch

    n = 100_000
    rng = np.random.default_rng(1)
    x, y = rng.random(n).astype(dtype), rng.random(n).astype(dtype)
    stream = device.create_stream()
    bx, by = device.allocate(x.nbytes, stream=stream), device.allocate(y.nbytes, stream=stream)
    stream.sync()
    driver.cuMemcpyHtoD(int(bx.handle), x.ctypes.data, x.nbytes)
    driver.cuMemcpyHtoD(int(by.handle), y.ctypes.data, y.nbytes)
    launch(
        stream, LaunchConfig(grid=(n + 255) // 256, block=256), obj.get_kernel(name), dtype(3.0), bx, by, np.int32(n)
    )
    stream.sync()
    out = np.empty_like(y)
    driver.cuMemcpyDtoH(out.ctypes.data, int(by.handle), out.nbytes)
    return float(np.max(np.abs(out - (dtype(3.0) * x + y))))


def device_arch(device) -> Arch:
    major, minor = device.compute_capability
    return Arch(major, minor)


def test_end_to_end_program_compile(device):
    gpu = device_arch(device)
    archs = sorted({"sm_80", str(gpu), "sm_100"})
    obj = Program(SAXPY, "c++").compile("fatbin", ["saxpy<float>", "saxpy<double>"], archs=archs)
    assert launch_saxpy(device, obj, "saxpy<float>", np.float32) < 1e-5
    assert launch_saxpy(device, obj, "saxpy<double>", np.float64) < 1e-12


def test_end_to_end_from_parts_and_path(device, tmp_path):
    from cuda.core import ObjectCode

    gpu = device_arch(device)
    opts = FatbinOptions(compress=False)  # data() of uncompressed entries needs no lz4/zstandard
    core = [
        Program(SAXPY, "c++").compile("fatbin", ["saxpy<float>"], archs=[str(gpu)], ptx_for=(), fatbin_options=opts)
    ]
    data = bytes(core[0].code)
    obj = from_parts([Part(p.data(), kind="cubin", arch=p.arch) for p in read_fatbin(data).entries],
                     symbol_mapping=core[0].symbol_mapping)  # fmt: skip
    assert launch_saxpy(device, obj, "saxpy<float>", np.float32) < 1e-5
    path = tmp_path / "k.fatbin"
    path.write_bytes(bytes(obj.code))
    by_path = ObjectCode.from_fatbin(str(path), symbol_mapping=obj.symbol_mapping)
    assert launch_saxpy(device, by_path, "saxpy<float>", np.float32) < 1e-5


def tagged(kind: str, arch: str, tag: int) -> Part:
    """A tag-kernel artifact: ``kind`` "cubin" or "ptx" for ``arch``, writing ``tag`` when it runs."""
    a = Arch.parse(arch)
    target = "cubin" if kind == "cubin" else "ptx"
    arch_opt = str(a) if kind == "cubin" else a.compute
    data = _nvrtc(TAG_SRC, "tag", [f"-arch={arch_opt}".encode(), f"-DTAG={tag}".encode()], target, ())[0]
    return Part(data, kind=target, arch=a, identifier=f"t{tag}")


# (case, parts as (kind, arch, tag), fatbin options). Tags are unique so that the tag names the entry.
CASES = [
    ("exact SASS", [("cubin", "sm_80", 1), ("cubin", "sm_90", 2)], None),
    ("SASS of another major only", [("cubin", "sm_80", 3)], None),
    ("PTX only, lower arch", [("ptx", "sm_80", 4)], None),
    ("nearest lower PTX wins", [("ptx", "sm_75", 5), ("ptx", "sm_86", 6)], None),
    ("nearest lower PTX wins (reversed order)", [("ptx", "sm_86", 7), ("ptx", "sm_75", 8)], None),
    ("sm_90a SASS", [("cubin", "sm_90a", 9)], None),
    ("compute_90a PTX", [("ptx", "sm_90a", 14)], None),
    ("sm_90a and sm_90 SASS", [("cubin", "sm_90", 15), ("cubin", "sm_90a", 16)], None),
    ("sm_90a and sm_90 SASS (reversed)", [("cubin", "sm_90a", 17), ("cubin", "sm_90", 18)], None),
    ("PTX + SASS of the same arch", [("ptx", "sm_90", 19), ("cubin", "sm_90", 20)], None),
    ("SASS of another major + lower PTX", [("cubin", "sm_80", 21), ("ptx", "sm_80", 22)], None),
    ("entries newer than the device only", [("cubin", "sm_100", 23), ("ptx", "sm_100", 24)], None),
    ("PTX compute_90 + PTX compute_90a", [("ptx", "sm_90", 25), ("ptx", "sm_90a", 26)], None),
    ("PTX newer than the device + lower PTX", [("ptx", "sm_100", 33), ("ptx", "sm_80", 34)], None),
    ("SASS sm_90 + PTX compute_90a", [("cubin", "sm_90", 35), ("ptx", "sm_90a", 36)], None),
    ("SASS sm_90a + lower SASS-less PTX", [("ptx", "sm_86", 37), ("cubin", "sm_90a", 38)], None),
    ("LZ4 entries", [("cubin", "sm_90", 27), ("ptx", "sm_80", 28)],
     FatbinOptions(compress_all=True, compress_mode="speed")),
    ("zstd entries", [("cubin", "sm_90", 29), ("ptx", "sm_80", 30)],
     FatbinOptions(compress_all=True, compress_mode="size")),
    ("uncompressed entries", [("cubin", "sm_90", 31), ("ptx", "sm_80", 32)], FatbinOptions(compress=False)),
]  # fmt: skip


def expected(fatbin: bytes, gpu: Arch, driver: int, **kw) -> str:
    sel = select_entry(fatbin, gpu, driver=driver, **kw)
    return f"TAG {sel.entry.identifier[1:]}" if sel else "ERROR", sel


@pytest.mark.parametrize("case, spec, options", CASES, ids=[c[0] for c in CASES])
def test_selection_matches_the_driver(device, driver_version, report, case, spec, options):
    gpu = device_arch(device)
    data = build_fatbin([tagged(*s) for s in spec], options=options)
    observed = run_fatbin(device, data)
    predicted, sel = expected(data, gpu, driver_version)
    report.add(case=case, entries=", ".join(f"{k} {a} (tag {t})" for k, a, t in spec), env="",
               predicted=predicted, reason=sel.reason, observed=observed)  # fmt: skip
    assert observed.split()[0] == predicted.split()[0] and (predicted == "ERROR" or observed == predicted), (
        f"{case}: model says {predicted} ({sel.reason}), driver did {observed}"
    )


ENV_CASES = [
    ("CUDA_FORCE_PTX_JIT=1, SASS + PTX", [("cubin", "sm_90", 40), ("ptx", "sm_80", 41)], {"CUDA_FORCE_PTX_JIT": "1"},
     {"force_ptx_jit": True}),
    ("CUDA_FORCE_PTX_JIT=1, SASS only", [("cubin", "sm_90", 42)], {"CUDA_FORCE_PTX_JIT": "1"}, {"force_ptx_jit": True}),
    ("CUDA_DISABLE_PTX_JIT=1, PTX only", [("ptx", "sm_80", 43)], {"CUDA_DISABLE_PTX_JIT": "1"},
     {"disable_ptx_jit": True}),
    ("CUDA_DISABLE_PTX_JIT=1, SASS + PTX", [("cubin", "sm_90", 44), ("ptx", "sm_80", 45)],
     {"CUDA_DISABLE_PTX_JIT": "1"}, {"disable_ptx_jit": True}),
]  # fmt: skip


@pytest.mark.parametrize("case, spec, env, kw", ENV_CASES, ids=[c[0] for c in ENV_CASES])
def test_env_variables(device, driver_version, report, tmp_path, case, spec, env, kw):
    gpu = device_arch(device)
    data = build_fatbin([tagged(*s) for s in spec])
    path = tmp_path / "case.fatbin"
    path.write_bytes(data)
    observed = run_fatbin_subprocess(path, env)
    predicted, sel = expected(data, gpu, driver_version, **kw)
    report.add(case=case, entries=", ".join(f"{k} {a} (tag {t})" for k, a, t in spec),
               env=" ".join(f"{k}={v}" for k, v in env.items()), predicted=predicted, reason=sel.reason,
               observed=observed)  # fmt: skip
    assert observed.split()[0] == predicted.split()[0] and (predicted == "ERROR" or observed == predicted), (
        f"{case}: model says {predicted} ({sel.reason}), driver did {observed}"
    )


@pytest.mark.parametrize("name", ["concat_sass_ptx", "concat_ptx_only"])
def test_concatenated_entries(device, driver_version, report, name):
    """Built ahead of time (libnvfatbin 13.5 -concat): sm_80 tag 10, sm_90 tag 11, compute_80 tag 12."""
    data = (DATA / f"{name}.fatbin").read_bytes()
    observed = run_fatbin(device, data)
    sel = select_entry(data, device_arch(device), driver=driver_version)
    tags = {("elf", "sm_80"): 10, ("elf", "sm_90"): 11, ("ptx", "sm_80"): 12}
    predicted = f"TAG {tags[(sel.entry.kind, str(sel.entry.arch))]}" if sel else "ERROR"
    entries = "concat: cubin sm_80 (tag 10), cubin sm_90 (tag 11), ptx sm_80 (tag 12)" if "sass" in name else (
        "concat: ptx sm_80 (tag 12)")  # fmt: skip
    report.add(case=f"concatenated ({name})", entries=entries, env="", predicted=predicted, reason=sel.reason,
               observed=observed)  # fmt: skip
    assert observed.split()[0] == predicted.split()[0] and (predicted == "ERROR" or observed == predicted), (
        f"model says {predicted} ({sel.reason}), driver did {observed}"
    )


def test_ptx_newer_than_the_driver(device, driver_version, report):
    """PTX ISA 9.5 (NVRTC 13.5, built ahead of time) on this driver, against select_entry."""
    ptx = (DATA / "tag13_isa95_compute80.ptx").read_bytes()
    data = build_fatbin([Part(ptx, kind="ptx", identifier="t13")])
    observed = run_fatbin(device, data)
    predicted, sel = expected(data, device_arch(device), driver_version)
    report.add(case="PTX ISA 9.5 (NVRTC 13.5) only", entries="ptx sm_80 ISA 9.5 (tag 13)", env="",
               predicted=predicted, reason=sel.reason, observed=observed)  # fmt: skip
    if driver_version < 13050:
        assert predicted == "ERROR" and observed == "ERROR CUDA_ERROR_UNSUPPORTED_PTX_VERSION"
    else:
        assert observed == predicted == "TAG 13"


def test_model_predicts_cubin_from_newer_nvrtc_runs(device, driver_version, report):
    """A cubin made by a newer NVRTC than the driver still loads (ELF ABI is what matters)."""
    data = build_fatbin([tagged("cubin", str(device_arch(device)), 50)])
    assert run_fatbin(device, data) == "TAG 50"


def test_kernel_bundle_on_the_device(device, tmp_path):
    """A bundle built for this GPU loads and runs; one without its arch raises before the driver does."""
    from cuda_fatbin import BundleCoverageError, KernelBundle, KernelSuite

    gpu = device_arch(device)
    suite = KernelSuite(SAXPY, ["saxpy<float>"])
    bundle = KernelBundle.build(tmp_path / "ok", {"saxpy": suite}, archs=["sm_80", str(gpu)])
    obj = KernelBundle.open(tmp_path / "ok").load("saxpy")
    assert launch_saxpy(device, obj, "saxpy<float>", np.float32) < 1e-5
    other = "sm_100" if gpu.major != 10 else "sm_80"
    KernelBundle.build(tmp_path / "no", {"saxpy": suite}, archs=[other], ptx_for=())
    with pytest.raises(BundleCoverageError, match=f"compute capability {gpu.capability}"):
        KernelBundle.open(tmp_path / "no").load("saxpy")
    assert bundle.suites == ["saxpy"]


RDC_KERNEL = r"""
extern "C" __global__ void k(int* out) { *out = 60; }
"""
RDC_MAIN = r"""
#include <cstdio>
extern "C" __global__ void k(int* out);
int main() {
    int* d; int h = 0;
    cudaMalloc(&d, sizeof(int));
    k<<<1, 1>>>(d);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) { printf("ERROR %s\n", cudaGetErrorName(e)); return 0; }
    printf("TAG %d\n", h);
    return 0;
}
"""

RDC_CASES = [  # (objects' codes, device-link code): scan() predicts, the runtime decides
    (["sm_80", "sm_90"], "sm_80"),
    (["sm_80"], "sm_80"),
    (["sm_80", "compute_80"], "sm_80"),
    (["sm_80", "sm_90"], "sm_90"),
    (["sm_80", "compute_80"], "compute_80"),
    (["sm_80", "sm_90"], "sm_75"),
]


@pytest.mark.parametrize("objects, link", RDC_CASES, ids=[f"{'+'.join(o)} link {k}" for o, k in RDC_CASES])
def test_rdc_programs_and_the_load_time_link(device, report, tmp_path, objects, link):
    """-rdc programs whose device-linked image may lack this GPU while their __nv_relfatbin objects have it.

    The JIT cache is disabled, so that each run shows what the driver does now (docs/gpu-validation.md).
    """
    import os
    import shutil
    import subprocess

    from cuda_fatbin import scan

    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(nvcc).exists():
        pytest.skip("no nvcc on this machine")
    (tmp_path / "k.cu").write_text(RDC_KERNEL)
    (tmp_path / "main.cu").write_text(RDC_MAIN)

    def gencode(code: str) -> str:
        return f"-gencode=arch=compute_{code.split('_')[1]},code={code}"

    for name in ("k", "main"):
        subprocess.run([nvcc, "-rdc=true", "-c", f"{name}.cu", "-o", f"{name}.o", *map(gencode, objects)],
                       cwd=tmp_path, check=True, capture_output=True)  # fmt: skip
    subprocess.run([nvcc, "-rdc=true", "main.o", "k.o", "-o", "app", gencode(link)], cwd=tmp_path, check=True,
                   capture_output=True)  # fmt: skip
    gpu = device_arch(device)
    [row] = scan([tmp_path / "app"], gpus=[gpu], max_workers=1).binaries
    status = row.coverage[gpu.capability]
    predicted = "ERROR" if status["status"] in ("no entry", "needs newer driver") else "TAG 60"
    env = {**os.environ, "CUDA_CACHE_DISABLE": "1"}
    observed = subprocess.run([str(tmp_path / "app")], capture_output=True, text=True, timeout=60, env=env)
    observed = observed.stdout.strip()
    report.add(case=f"-rdc program: objects {'+'.join(objects)}, device link {link}", entries=", ".join(row.entries),
               env="CUDA_CACHE_DISABLE=1", predicted=predicted, reason=status["reason"], observed=observed)  # fmt: skip
    assert observed.split()[0] == predicted.split()[0] and (predicted == "ERROR" or observed == predicted), (
        f"model says {predicted} ({status['reason']}), the program printed {observed}"
    )


VARS_TU = r"""
#include <cstdio>
__device__ int table[4] = {1, 2, 3, 4};
const char* read_table(int* out) {
    cudaError_t e = cudaMemcpyFromSymbol(out, table, 4 * sizeof(int));
    return e == cudaSuccess ? nullptr : cudaGetErrorName(e);
}
"""
VARS_MAIN = r"""
#include <cstdio>
const char* read_table(int* out);
extern "C" __global__ void k(int* out) { *out = 60; }
int main() {
    int* d; int h = 0; int t[4] = {0, 0, 0, 0};
    cudaMalloc(&d, sizeof(int));
    k<<<1, 1>>>(d);
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) { printf("ERROR kernel %s\n", cudaGetErrorName(e)); return 0; }
    const char* failed = read_table(t);
    if (failed) { printf("ERROR variable %s\n", failed); return 0; }
    printf("TAG %d %d\n", h, t[3]);
    return 0;
}
"""


@pytest.mark.parametrize("var_archs", [["sm_80"], ["sm_80", "sm_90"], ["sm_80", "compute_80"]])
def test_a_module_of_variables_only_must_load_too(device, report, tmp_path, var_archs):
    """A translation unit of ``__device__`` variables and host code (no kernel) is a module the program uses:
    where it has no entry for the GPU, reading its variable fails while the kernels' module runs, and ``scan``
    says ``partial`` (it was once skipped as a kernel-less device-link stub)."""
    import os
    import shutil
    import subprocess

    from cuda_fatbin import scan

    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(nvcc).exists():
        pytest.skip("no nvcc on this machine")
    gpu = device_arch(device)
    (tmp_path / "v.cu").write_text(VARS_TU)
    (tmp_path / "main.cu").write_text(VARS_MAIN)

    def gencode(code: str) -> str:
        return f"-gencode=arch=compute_{code.split('_')[1]},code={code}"

    own = [f"sm_{gpu.major}{gpu.minor}", "sm_80"]
    for name, codes in (("v", var_archs), ("main", own)):
        subprocess.run([nvcc, "-c", f"{name}.cu", "-o", f"{name}.o", *map(gencode, codes)], cwd=tmp_path, check=True,
                       capture_output=True)  # fmt: skip
    subprocess.run([nvcc, "main.o", "v.o", "-o", "app"], cwd=tmp_path, check=True, capture_output=True)
    [row] = scan([tmp_path / "app"], gpus=[gpu], max_workers=1).binaries
    status = row.coverage[gpu.capability]
    predicted = "ERROR variable" if status["status"] == "partial" else "TAG 60 4"
    env = {**os.environ, "CUDA_CACHE_DISABLE": "1"}
    observed = subprocess.run([str(tmp_path / "app")], capture_output=True, text=True, timeout=60, env=env)
    observed = observed.stdout.strip()
    report.add(case=f"a module of variables only, built for {'+'.join(var_archs)}", entries=", ".join(row.entries),
               env="CUDA_CACHE_DISABLE=1", predicted=predicted, reason=status["reason"], observed=observed)  # fmt: skip
    assert observed.startswith(predicted), f"model says {predicted} ({status['reason']}), the program said {observed}"
