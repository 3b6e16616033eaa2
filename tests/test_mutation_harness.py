# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The mutation harness's own promises (tests/fatbin_testing.py), which every mutant's verdict rests on."""

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
    """A value a mutant made, kept for later mutants, would fail their tests whatever they changed.

    Seen: with the cache empty at the start of a run, every mutant of `_reader._open_path` was counted as
    killed on the GPU machine, known equivalents included (docs/testing.md, sixth session).
    """
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
    """mutmut collects the tests in its main process and forks each mutant's test process from it. On the GPU
    machine a driver or NVRTC started there left the forks crashing (SIGSEGV) or failing, equivalents included
    (docs/testing.md, eighth session): collection must not call them; tests ask when they run."""
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


def test_recorded_kills_come_back_only_for_functions_whose_source_is_unchanged(tmp_path):
    """A session's kills, recorded in the repository (``mutation_merge.py --save``), are merged by a later
    session's clone for the functions whose source hash is the same, and for no other."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "scripts" / "mutation_merge.py"
    (tmp_path / "tests" / "mutation").mkdir(parents=True)
    (tmp_path / "tests" / "mutation" / "equivalent.toml").write_text("equivalent = []\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], cwd=tmp_path, check=True)
    meta = tmp_path / "mutants" / "src" / "cuda_fatbin" / "_m.py.meta"
    meta.parent.mkdir(parents=True)
    key = "cuda_fatbin._m.{}__mutmut_{}".format
    codes = {key("x_f", n): c for n, c in [(1, 1), (2, 1), (3, 0), (4, -11), (5, 1), (7, 1)]}
    codes |= {key("x_g", 1): 1, key("x_g", 2): None, key("xǁCǁm", 1): 3}
    hashes = {"x_f": "aa", "x_g": "bb", "xǁCǁm": "cc"}
    meta.write_text(json.dumps({"exit_code_by_key": codes, "hash_by_function_name": hashes}))
    run = [sys.executable, str(script)]
    subprocess.run([*run, "--save", "kills"], cwd=tmp_path, check=True, capture_output=True)
    record = json.loads((tmp_path / "kills" / "_m.json").read_text())
    assert {fn: e["killed"] for fn, e in record["functions"].items()} == {"x_f": "1-2,4-5,7", "x_g": "1", "xǁCǁm": "1"}
    # a new clone: every verdict unchecked, and x_g's source changed since the record
    fresh = {k: None for k in codes}
    meta.write_text(json.dumps({"exit_code_by_key": fresh, "hash_by_function_name": hashes | {"x_g": "b2"}}))
    subprocess.run([*run, "kills"], cwd=tmp_path, check=True, capture_output=True)
    merged = json.loads(meta.read_text())["exit_code_by_key"]
    assert sorted(k for k, c in merged.items() if c) == sorted(
        [key("x_f", n) for n in (1, 2, 4, 5, 7)] + [key("xǁCǁm", 1)]
    )
    left = (tmp_path / "mutants" / "left.txt").read_text().split()
    assert sorted(left) == sorted([key("x_f", 3), key("x_g", 1), key("x_g", 2)])
