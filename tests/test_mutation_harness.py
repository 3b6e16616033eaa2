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
