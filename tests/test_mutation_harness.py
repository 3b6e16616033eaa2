# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""What a mutation run's verdicts rest on: the test cache of tests/fatbin_testing.py, and a suite that collects
without starting NVRTC or the CUDA driver."""

from __future__ import annotations

import pickle

import pytest

import fatbin_testing


@pytest.mark.parametrize(
    ("running", "kept"),
    [
        ("cuda_fatbin._multiarch.x__nvrtc__mutmut_7", False),  # a mutant's run
        ("stats", True),  # mutmut's passes over the unmutated code
        ("", True),
        ("fail", True),
        (None, True),  # not under mutmut
    ],
)
def test_a_fixture_value_a_mutant_computed_never_reaches_the_disk_cache(tmp_path, monkeypatch, running, kept):
    """A value a mutant made, kept for later mutants, would fail their tests whatever they changed: every mutant
    those tests reach, equivalent ones included, would count as killed."""
    monkeypatch.setattr(fatbin_testing, "_DISK", str(tmp_path))
    monkeypatch.setattr(fatbin_testing, "_ONCE", {})
    if running is None:
        monkeypatch.delenv("MUTANT_UNDER_TEST", raising=False)
    else:
        monkeypatch.setenv("MUTANT_UNDER_TEST", running)
    calls = []

    @fatbin_testing.once_per_process
    def value() -> list[int]:
        calls.append(1)
        return [len(calls)]

    assert value() == [1] and value() == [1] and calls == [1]  # once per process, either way
    stored = list(tmp_path.glob("*.pickle"))
    assert len(stored) == (1 if kept else 0)
    if kept:
        assert pickle.loads(stored[0].read_bytes()) == [1]
        # the next process (a mutant's, say) reads the unmutated value instead of computing its own
        monkeypatch.setattr(fatbin_testing, "_ONCE", {})
        monkeypatch.setenv("MUTANT_UNDER_TEST", "cuda_fatbin._reader.x__open_path__mutmut_49")
        assert value() == [1] and calls == [1]


def test_collecting_the_suite_calls_neither_nvrtc_nor_the_driver():
    """mutmut collects the tests in its main process and forks each mutant's test process from it; NVRTC or a
    driver started before a fork crash (SIGSEGV) or fail in the child, and every mutant reaching them would count
    as killed. Collection must not call them; tests ask when they run."""
    import subprocess
    import sys
    from pathlib import Path

    code = """
import sys
import pytest
from cuda.bindings import nvrtc
from cuda_fatbin import _driver
called = []
real = nvrtc.nvrtcGetSupportedArchs
nvrtc.nvrtcGetSupportedArchs = lambda *a: called.append("nvrtc") or real(*a)
code = pytest.main(["--collect-only", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "tests"])
print("RESULT", code, called, _driver._probe.cache_info().currsize)
"""
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300).stdout
    assert out.splitlines()[-1] == "RESULT 0 [] 0", out[-2000:]
