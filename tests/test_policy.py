# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Release-gate policies: the covered decision per status, policy files (hostile ones too), require_ptx."""

from __future__ import annotations

import contextlib
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuda_fatbin import Arch
from cuda_fatbin._errors import Error
from cuda_fatbin._policy import MAX_POLICY_BYTES, Policy, PolicyError, covered, failure, load_policy, ptx_gap
from cuda_fatbin._select import STATUSES, UNCOVERED

OK = [s for s in STATUSES if s not in UNCOVERED]


@pytest.mark.parametrize("status", STATUSES)
def test_no_policy_is_todays_judgement(status):
    assert covered(status, Policy()) == (status not in UNCOVERED)


@pytest.mark.parametrize("status", STATUSES)
def test_sass_only_refuses_only_jit(status):
    expected = status not in UNCOVERED and status != "PTX JIT"
    assert covered(status, Policy(sass_only=True)) == expected
    assert failure("PTX JIT", Policy(sass_only=True)) == "sass-only"


@pytest.mark.parametrize(
    ("allow", "distribution", "ok"),
    [(None, None, True), (None, "x 1", True), (frozenset(), "x 1", False), (frozenset(), None, False),
     (frozenset({"Nvidia_CuBLAS"}), "nvidia-cublas 13.1", True),
     (frozenset({"nvidia-cublas"}), "nvidia_cublas 1", True),
     (frozenset({"nvidia-cublas"}), "nvidia-cudnn-cu13 9", False), (frozenset({"a"}), None, False)],
)  # fmt: skip
def test_allow_partial_names_distributions_pep503(allow, distribution, ok):
    policy = Policy(allow_partial=allow)
    assert covered("partial", policy, distribution) is ok
    assert failure("partial", policy, distribution) == (None if ok else "allow-partial")
    assert covered("SASS exact", policy, distribution)  # only partial is concerned


def test_merged_adds_flags_to_a_file():
    file = Policy(sass_only=True, allow_partial=frozenset({"a"}), gpus=("80",))
    flags = Policy(require_ptx=True, allow_partial=frozenset({"b"}), gpus=("9.0",))
    assert file.merged(flags) == Policy(True, True, frozenset({"a", "b"}), ("8.0", "9.0"))
    assert Policy().merged(Policy()) == Policy()
    assert Policy(allow_partial=frozenset()).merged(Policy()).allow_partial == frozenset()


def test_misuse_is_a_type_error():
    with pytest.raises(TypeError, match="bool"):
        Policy(sass_only="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="frozenset"):
        Policy(allow_partial="nvidia-cublas")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Policy(gpus=("not a gpu",))


@pytest.mark.parametrize(
    ("entries", "gap"),
    [([("elf", Arch(9, 0)), ("ptx", Arch(9, 0))], None), ([("elf", Arch(9, 0)), ("ptx", Arch(7, 5))], None),
     ([("ptx", Arch(8, 0))], None), ([("elf", Arch(9, 0))], "no PTX"),
     ([("elf", Arch(8, 0)), ("ptx", Arch(9, 0))], None),
     ([("elf", Arch(9, 0)), ("ptx", Arch(9, 0, "a"))], "only arch-specific"),
     ([("elf", Arch(10, 0)), ("ptx", Arch(10, 0, "f"))], "only arch-specific"),
     ([("elf", Arch(8, 0)), ("ptx", Arch(12, 0))], "PTX"), ([], "no PTX")],
)  # fmt: skip
def test_ptx_gap(entries, gap):
    got = ptx_gap(entries)
    assert (got is None) if gap is None else (got is not None and gap in got)


def test_ptx_newer_than_every_sass_leaves_the_gap_between():
    # compute_120 PTX JITs on 12.x only; sm_100 (newer than sm_80, older than the PTX) runs nothing
    assert "sm_80" in ptx_gap([("elf", Arch(8, 0)), ("ptx", Arch(12, 0))])


def _write(tmp_path, data: bytes | str):
    path = tmp_path / "policy.toml"
    (path.write_bytes if isinstance(data, bytes) else path.write_text)(data)
    return path


def test_a_policy_file_reads_every_key(tmp_path):
    text = 'sass_only = true\nrequire_ptx = true\nallow_partial = ["Nvidia.CuBLAS"]\ngpus = ["T4", "90"]\n'
    path = _write(tmp_path, text)
    assert load_policy(path) == Policy(True, True, frozenset({"nvidia-cublas"}), ("7.5", "9.0"))
    assert load_policy(_write(tmp_path, "")) == Policy()
    assert load_policy(_write(tmp_path, "allow_partial = []")).allow_partial == frozenset()


@pytest.mark.parametrize(
    ("text", "words"),
    [("sas_only = true", "unknown key sas_only"), ("sass_only = 1", "sass_only must be a boolean"),
     ('sass_only = "true"', "sass_only"), ('allow_partial = "a"', "allow_partial must be a list"),
     ("allow_partial = [1]", "allow_partial"), ('gpus = ["sm_999x"]', "gpus"), ("[sass_only]\nx = 1", "sass_only"),
     ("sass_only = ", "not TOML"), ('"\\u001b[2J" = 1', "\\x1b[2J"), ("require_ptx = [true]", "require_ptx")],
)  # fmt: skip
def test_bad_policy_files_name_the_key(tmp_path, text, words):
    with pytest.raises(PolicyError, match=None) as info:
        load_policy(_write(tmp_path, text))
    assert words in str(info.value)
    assert "\x1b" not in str(info.value)
    assert isinstance(info.value, Error) and isinstance(info.value, ValueError)


def test_hostile_policy_files(tmp_path):
    with pytest.raises(PolicyError, match="not UTF-8"):
        load_policy(_write(tmp_path, b"sass_only = true # \xff\xfe"))
    with pytest.raises(PolicyError, match="cannot read"):
        load_policy(_write(tmp_path, b"#" * (MAX_POLICY_BYTES + 1)))
    with pytest.raises(PolicyError, match="cannot read"):
        load_policy(tmp_path / "missing\x1b.toml")
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(PolicyError, match="cannot read"):
        load_policy(tmp_path / "fifo")  # refused, never waited on
    with pytest.raises(PolicyError, match="not TOML"):
        load_policy(_write(tmp_path, "a = " + "[" * 100_000))  # deep nesting: tomllib's error, not a crash


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_give_a_policy_or_a_policy_error(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("p") / "p.toml"
    path.write_bytes(raw)
    with contextlib.suppress(PolicyError):
        assert isinstance(load_policy(path), Policy)
