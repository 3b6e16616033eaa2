# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Promises stated as properties: output bytes, selection and arch specs under every ordering and spelling."""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import random
import threading

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from cuda_fatbin import Arch, FatbinBuilder, Part, Program, parse_archs, plan_fatbin, read_fatbin, select_entry

from fatbin_testing import KERNEL_SRC

ARCHS = ["sm_75", "sm_80", "sm_90", "sm_100"]
NAME = "scale<float>"


class DrawnOrderExecutor(cf.Executor):
    """Runs the jobs of one plan only once all are submitted, completing them in a drawn order."""

    def __init__(self, n_jobs: int, order_seed: int) -> None:
        self._pending: list = []
        self._n = n_jobs
        self._rng = random.Random(order_seed)

    def submit(self, fn, /, *args, **kwargs):
        future: cf.Future = cf.Future()
        self._pending.append((future, fn, args, kwargs))
        if len(self._pending) == self._n:
            batch = self._pending[:]
            self._rng.shuffle(batch)
            threading.Thread(target=self._run, args=(batch,), daemon=True).start()
        return future

    @staticmethod
    def _run(batch) -> None:
        for future, fn, args, kwargs in batch:
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args, **kwargs))
                except BaseException as e:
                    future.set_exception(e)


def digest(obj) -> str:
    """SHA-256 of an ObjectCode's bytes: comparing digests keeps pytest from diffing 10 KB reprs."""
    return hashlib.sha256(bytes(obj.code)).hexdigest()


@pytest.fixture(scope="module")
def reference() -> str:
    return digest(Program(KERNEL_SRC, "c++").compile("fatbin", [NAME], archs=ARCHS))


# each example compiles 4 archs: few examples, and no shrinking (a failure is reported as drawn)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])  # fmt: skip
@given(order=st.permutations(ARCHS), completion=st.integers(0, 2**32))
def test_bytes_do_not_depend_on_arch_order_or_completion_order(reference, order, completion):
    n_jobs = len(plan_fatbin(ARCHS).jobs)
    got = digest(Program(KERNEL_SRC, "c++").compile("fatbin", [NAME], archs=list(order),
                                                    executor=DrawnOrderExecutor(n_jobs, completion)))  # fmt: skip
    assert got == reference  # never an ObjectCode inside an assert: pytest's report would repr it (known-issues)


@pytest.mark.parametrize("spelling", [
    "75;80;90;100", "7.5;8.0;9.0;10.0", "sm_75,sm_80,sm_90,sm_100", ["75", "8.0", "sm_90", 100],
    "75-real;80-real;90-real;100", "arch=compute_75,code=sm_75;arch=compute_80,code=sm_80;"
    "arch=compute_90,code=sm_90;arch=compute_100,code=[sm_100,compute_100]",
])  # fmt: skip
def test_bytes_do_not_depend_on_the_spelling(reference, spelling):
    got = digest(Program(KERNEL_SRC, "c++").compile("fatbin", [NAME], archs=spelling))
    assert got == reference


# -- selection -----------------------------------------------------------------------------------------

POOL = [("cubin", "sm_75"), ("cubin", "sm_80"), ("cubin", "sm_86"), ("cubin", "sm_90"), ("cubin", "sm_90a"),
        ("cubin", "sm_100"), ("ptx", "sm_75"), ("ptx", "sm_80"), ("ptx", "sm_86"), ("ptx", "sm_90"),
        ("ptx", "sm_90a"), ("ptx", "sm_100")]  # fmt: skip


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_selection_depends_on_container_order_only_through_ties(artifacts, data):
    """Entries of distinct (kind, arch): the same entry wins in every container order; and it is the best
    one by the documented rank (SASS exact > SASS compatible > nearest PTX, a before plain)."""
    chosen = data.draw(st.lists(st.sampled_from(POOL), min_size=1, max_size=6, unique=True))
    order = data.draw(st.permutations(chosen))
    gpu = data.draw(st.sampled_from(["7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"]))
    picks = []
    for entries in (chosen, order):
        builder = FatbinBuilder()
        for kind, arch in entries:
            builder.add(Part(artifacts[(kind, arch)], kind, arch))
        sel = select_entry(read_fatbin(builder.build()), gpu)
        picks.append((sel.entry.kind, str(sel.entry.arch)) if sel else None)
    assert picks[0] == picks[1]
    g = Arch.parse(gpu)

    def fits(kind: str, arch: str) -> bool:  # the pool has no f entries: a runs on its SM, plain as documented
        x = Arch.parse(arch)
        same = kind == "ptx" or x.major == g.major
        return same and x.sm <= g.sm and (not x.suffix or x.sm == g.sm)

    fitting = [(k, a) for k, a in chosen if fits(k, a)]
    if not fitting:
        assert picks[0] is None
        return

    def rank(ka):
        k, a = ka
        x = Arch.parse(a)
        return (0 if k == "cubin" and x.sm == g.sm else 1 if k == "cubin" else 2, -x.sm, 0 if x.suffix else 1)

    best = min(fitting, key=rank)
    assert picks[0] == ("elf" if best[0] == "cubin" else "ptx", best[1])


# Ties among equally ranked entries, as observed on the H200 (9.0), driver 580.159.04: every tie group of
# the probe matrix, 2 and 3 entries in every order, with differing compression/debug/producer/ISA
# (docs/probe/h200-driver580.json, cases "tie cubin exact*", "tie ptx exact*", "tie ptx lower*").
#   SASS sm_90 / sm_90a, PTX compute_90a, PTX compute_89: the FIRST in container order runs (tie_sass, tie_ptx_other)
#   plain PTX compute_90 (the device's own SM): the LAST runs (tie_ptx_exact)
_TIE_GROUPS = [("cubin", "sm_90", "first"), ("cubin", "sm_90a", "first"), ("ptx", "sm_90a", "first"),
               ("ptx", "sm_89", "first"), ("ptx", "sm_80", "first"), ("ptx", "sm_90", "last")]  # fmt: skip
_TIE_OPTIONS = [{}, {"compress": True, "compress_all": True}, {"compress": True, "compress_all": True,
                "compress_mode": "size"}, {"debug": True}, {"producer": "opencl"}]  # fmt: skip


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(group=st.sampled_from(_TIE_GROUPS), options=st.lists(st.sampled_from(_TIE_OPTIONS), min_size=2, max_size=3))
def test_ties_follow_the_observed_container_order(artifacts, group, options):
    """Which of equal entries runs: the first, except plain PTX for the device's own SM (the last)."""
    from cuda_fatbin import FatbinOptions, build_fatbin
    from cuda_fatbin._reader import iter_fatbins

    kind, arch, winner = group
    if (kind, arch) not in artifacts:
        pytest.skip(f"NVRTC here cannot build {kind} {arch}")
    body = b""
    for i, opts in enumerate(options):  # each entry with its own attributes, spliced into one container
        one = build_fatbin([Part(artifacts[(kind, arch)], kind, arch, identifier=f"p{i}")],
                           options=FatbinOptions(**opts) if opts else FatbinOptions(compress=False))  # fmt: skip
        fb = next(iter_fatbins(one))
        e = fb.entries[0]
        body += one[e.offset : fb.offset + fb.size]
    container = b"\x50\xed\x55\xba\x01\x00\x10\x00" + len(body).to_bytes(8, "little") + body
    sel = select_entry(container, "9.0")
    expected = "p0" if winner == "first" else f"p{len(options) - 1}"
    assert sel.entry is not None and sel.entry.identifier == expected
    rule = {"cubin": "tie_sass"}.get(kind, "tie_ptx_exact" if winner == "last" else "tie_ptx_other")
    assert rule in sel.rules


# -- arch specs ------------------------------------------------------------------------------------------

REAL = ["75", "80", "86", "89", "90", "90a", "100", "100a", "100f", "103", "120", "120f"]


@st.composite
def specs(draw):
    """An arch spec in one of the spellings users have: lists, CMake, torch, nvcc gencode, LTO."""
    archs = draw(st.lists(st.sampled_from(REAL), min_size=1, max_size=5, unique=True))
    style = draw(st.sampled_from(["list", "cmake", "torch", "gencode", "lto"]))
    if style == "list":
        return [f"sm_{a}" for a in archs] + [f"compute_{a}" for a in draw(st.lists(st.sampled_from(archs)))]
    if style == "cmake":
        return ";".join(f"{a}{draw(st.sampled_from(['', '-real', '-virtual']))}" for a in archs)
    if style == "torch":
        return ";".join(Arch.parse(a).capability for a in archs) + draw(st.sampled_from(["", "+PTX"]))
    if style == "lto":
        return ";".join([f"sm_{a}" for a in archs] + [f"lto_{archs[0]}"])
    clauses, used = [], set()
    for a in archs:
        v = Arch.parse(a)
        reals = [r for r in REAL if v.builds(Arch.parse(r)) and r not in used][: draw(st.integers(1, 3))]
        used.update(reals)
        if not reals:
            continue
        codes = [f"sm_{r}" for r in reals] + ([v.compute] if draw(st.booleans()) else [])
        clauses.append(f"arch={v.compute},code=[{','.join(codes)}]")
    return ";".join(clauses) or "sm_80"


@settings(max_examples=200, deadline=None)
@given(spec=specs())
def test_arch_lists_round_trip_and_plans_cover_every_requested_arch(spec):
    al = parse_archs(spec)
    assert parse_archs(str(al)) == al
    for group in (False, True):
        plan = plan_fatbin(spec, group=group, supported=tuple(sorted({Arch.parse(a).sm for a in REAL})))
        made = set(plan.entries)
        assert {("cubin", a) for a in al.sass} <= made
        assert {("ptx", a) for a in al.ptx} <= made
        assert {("ltoir", a) for a in al.ltoir} <= made
