#!/usr/bin/env bash
# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
# Mutation testing of every module of src/cuda_fatbin (__init__ and __main__ aside), or of the ones named.
# mutmut (configured in pyproject.toml, [tool.mutmut]) runs the CPU tests that reach each mutated function
# against it; then the score per module is printed, less the equivalent mutants of
# tests/mutation/equivalent.toml. Slow (hours for the whole package on 2 cores): not part of CI.
# docs/testing.md records the runs.
#
#   bash scripts/mutation.sh                          # every module; resumes (mutmut keeps verdicts)
#   MODULES="_driver _term" bash scripts/mutation.sh  # only these modules; their mutants are run again
#   FRESH=1 bash scripts/mutation.sh                  # start over (drops every kept verdict)
#   JOBS=1 bash scripts/mutation.sh                   # mutants run at once (default: every core)
#   bash scripts/mutation.sh 'cuda_fatbin._arch.x_parse*'   # only the mutants named (mutmut's globs)
#   SKIP_CLEAN=1 bash scripts/mutation.sh ...         # without mutmut's serial clean pass (scripts/mutmut_run.py)
set -euo pipefail
cd "$(dirname "$0")/.."
# installed unless 3.8.1 is there already (a machine without network: carry the wheel)
python -c "import importlib.metadata as m, sys; sys.exit(m.version('mutmut') != '3.8.1')" 2>/dev/null \
    || python -m pip install -q "mutmut==3.8.1"
# compiled test inputs (NVRTC artifacts, nvcc programs) kept across the forked runs: tests/fatbin_testing.py
export CUDA_FATBIN_TEST_CACHE="${CUDA_FATBIN_TEST_CACHE:-$PWD/.mutation-cache}"
if [ "${FRESH:-0}" = 1 ]; then rm -rf mutants "$CUDA_FATBIN_TEST_CACHE"; fi
names=("$@")
score=()
for module in ${MODULES:-}; do
    names+=("cuda_fatbin.${module}.*")
    score+=(--module "$module")
done
jobs="${JOBS:-$(python -c 'import os; print(len(os.sched_getaffinity(0)))')}"
start=$(date +%s)
python scripts/mutmut_run.py run --max-children "$jobs" "${names[@]}" || true
echo "mutmut run took $(( $(date +%s) - start )) s with --max-children $jobs"
python scripts/mutation_score.py --min 90 "${score[@]}"
