#!/usr/bin/env bash
# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
# Where there is a GPU: check the reader and scan against a real environment and its driver.
#   bash scripts/env-check.sh [SITE_PACKAGES]     (logs under $OUT, created if missing, or a temporary folder)
# 1. scripts/agree-with-cuobjdump.py over every binary (names, counts and payload bytes vs cuobjdump)
# 2. cuda-fatbin scan (JSON and table) for 75;80;86;89;90;100;120 and the installed GPU and driver
# 3. torch.cuda.get_arch_list() beside scan's row for libtorch_cuda.so
# 4. benchmarks/bench_scan.py: scan vs cuobjdump over the same files on the same cores
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
SITE=${1:-/opt/torch/.venv/lib/python3.12/site-packages}
PY=${PYTHON:-python3}
export PYTHONPATH="src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
CUOBJDUMP=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
echo "== $(nproc) cores; driver ${DRIVER:-none}; $($CUOBJDUMP --version | tail -1)"

echo "== agreement with cuobjdump (names and counts; payload bytes too with PAYLOADS=1)"
$PY scripts/agree-with-cuobjdump.py ${PAYLOADS:+--payloads} --cuobjdump "$CUOBJDUMP" "$SITE" > "$OUT/agree.txt" 2>&1
tail -25 "$OUT/agree.txt"

echo "== scan for the usual GPUs, with the installed driver"
$PY -m cuda_fatbin scan "$SITE" --gpu "75;80;86;89;90;100;120" ${DRIVER:+--driver "$DRIVER"} --json > "$OUT/scan.json"
echo "exit code $?"
$PY -m cuda_fatbin scan "$SITE" --gpu "75;80;86;89;90;100;120" ${DRIVER:+--driver "$DRIVER"} > "$OUT/scan.txt" 2>&1
head -60 "$OUT/scan.txt"
echo "== scan --gpu installed"
$PY -m cuda_fatbin scan "$SITE" --gpu installed ${DRIVER:+--driver "$DRIVER"} 2>&1 | tail -8

echo "== torch's own arch list against scan's row for libtorch_cuda.so"
$PY - "$OUT/scan.json" <<'PY'
import json, sys
import torch
doc = json.load(open(sys.argv[1]))
row = next(b for b in doc["binaries"] if b["path"].endswith("torch/lib/libtorch_cuda.so"))
print("torch.cuda.get_arch_list():", torch.cuda.get_arch_list())
print("scan entries of libtorch_cuda.so:", sorted(row["entries"]))
print("scan coverage:", {g: c["status"] for g, c in row["coverage"].items()})
PY

echo "== scan vs cuobjdump, same files, same cores"
$PY benchmarks/bench_scan.py "$SITE" ${DRIVER:+--driver "$DRIVER"} --cuobjdump "$CUOBJDUMP" 2>&1 | tee "$OUT/bench_scan.txt"
