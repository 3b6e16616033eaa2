#!/usr/bin/env bash
# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
# Build the sdist and wheel, check them, install the wheel (not the checkout) into a fresh venv and use it
# from outside the source tree: import, --version, compile a kernel for two archs, inspect the result.
#   bash scripts/wheel-smoke.sh        (needs `build` and `twine`: pip install -e ".[dev]")
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf dist
python -m build -q
python -m twine check --strict dist/*
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q dist/*.whl
cd "$work"
"$work/venv/bin/python" - <<'PY'
import cuda_fatbin, importlib.metadata as md, pathlib
assert "site-packages" in cuda_fatbin.__file__, cuda_fatbin.__file__  # the installed wheel, not the checkout
assert md.version("cuda-fatbin") == cuda_fatbin.__version__
assert md.metadata("cuda-fatbin")["License-Expression"] == "Apache-2.0"
assert (pathlib.Path(cuda_fatbin.__file__).parent / "py.typed").exists()
assert (pathlib.Path(cuda_fatbin.__file__).parent / "data" / "nvidia.json").exists()  # the packaged NVIDIA data
print("import ok:", cuda_fatbin.__version__, cuda_fatbin.__file__)
PY
"$work/venv/bin/cuda-fatbin" --version
printf 'extern "C" __global__ void k(float* p) { p[threadIdx.x] *= 2.0f; }\n' > k.cu
"$work/venv/bin/cuda-fatbin" compile k.cu --arch 80 --arch 90 -o k.fatbin
"$work/venv/bin/cuda-fatbin" inspect k.fatbin | tee inspect.txt
grep -q "elf .*sm_80" inspect.txt && grep -q "elf .*sm_90" inspect.txt
# the packaged data (data/nvidia.json) from the wheel: GPU names, and the Tegra rule (sm_80 SASS not on Orin)
"$work/venv/bin/cuda-fatbin" gpus | grep -q "Jetson AGX Orin"
rc=0; "$work/venv/bin/cuda-fatbin" which k.fatbin --gpu A100 --gpu "Jetson AGX Orin" > which.txt || rc=$?
test "$rc" = 1 && grep -q "8.7 is a Tegra GPU" which.txt
# a downstream project's type checker sees our types (py.typed): a wrong use is an error
"$work/venv/bin/python" -m pip install -q mypy
cat > downstream.py <<'PY'
from cuda_fatbin import read_fatbin

fb = read_fatbin(b"")
size: str = fb.size
PY
if "$work/venv/bin/python" -m mypy downstream.py > mypy.txt 2>&1; then
  echo "mypy did not see cuda_fatbin's types"; cat mypy.txt; exit 1
fi
grep -q 'Incompatible types in assignment (expression has type "int", variable has type "str")' mypy.txt
echo "wheel smoke test passed"
