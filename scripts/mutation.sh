#!/usr/bin/env bash
# Mutation testing of the modules users trust most: _select, _reader, _detect, _arch, _multiarch, _elf.
# mutmut (configured in pyproject.toml, [tool.mutmut]) runs the CPU suite against each mutant; then the
# score per module is printed, less the equivalent mutants of tests/mutation/equivalent.toml.
# Slow (about an hour and a half on 2 cores): not part of CI. docs/testing.md records the last run.
#
#   bash scripts/mutation.sh            # resume (mutmut keeps results for unchanged functions)
#   FRESH=1 bash scripts/mutation.sh    # start over
#   bash scripts/mutation.sh 'cuda_fatbin._arch*'   # only some mutants
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q "mutmut==3.8.1"
# compiled test inputs (NVRTC artifacts, nvcc programs) kept across the forked runs: tests/fatbin_testing.py
export CUDA_FATBIN_TEST_CACHE="${CUDA_FATBIN_TEST_CACHE:-$PWD/.mutation-cache}"
if [ "${FRESH:-0}" = 1 ]; then rm -rf mutants "$CUDA_FATBIN_TEST_CACHE"; fi
mutmut run --max-children "${JOBS:-$(nproc)}" "$@" || true
python scripts/mutation_score.py --min 90
