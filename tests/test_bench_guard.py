# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""benchmarks/bench_guard.py times only runs that did the work: a command that failed fast is no speed-up."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_GUARD = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_guard.py"


@pytest.fixture(scope="module")
def guard():
    spec = importlib.util.spec_from_file_location("bench_guard", _GUARD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_guard_times_only_runs_that_did_their_work(guard, tmp_path):
    """``inspect`` of a file it cannot read ends at once with status 1: timed as a hot path, a revision that
    fails to read libcurand would look faster than one that lists it, and no path would be named."""
    failing = [sys.executable, "-m", "cuda_fatbin", "inspect", str(tmp_path / "libcurand.so.10")]
    with pytest.raises(SystemExit, match="failed"):
        guard.run_once(failing)
    hot = guard.paths(tmp_path, 2)
    assert all(guard.exit_codes(name) == (0,) for name in hot if not name.startswith(("scan", "which"))), hot


def test_the_guard_runs_a_hot_path_that_may_report_with_status_1(guard, tmp_path):
    """``scan`` and ``which`` end with 1 when a GPU is not covered: that is their work, and it is timed."""
    cubin = Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin"
    which = [sys.executable, "-m", "cuda_fatbin", "which", str(cubin), "--gpu", "9.0"]
    took, cpu, code = guard.run_once(which, codes=(0, 1))
    assert code == 1 and took > 0 and cpu > 0
    assert guard.exit_codes(next(n for n in guard.paths(tmp_path, 2) if n.startswith("scan"))) == (0, 1)
