# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""run_plan, the scheduler, with the compile itself replaced: workers, order, progress, failures, cleanup."""

from __future__ import annotations

import concurrent.futures as cf
import os
import threading
import time

import pytest

from cuda_fatbin import FatbinCompileError, _jobs, _multiarch, plan_fatbin
from cuda_fatbin._multiarch import JobResult, _JobFailed, run_plan

# four jobs: compute_80 -> sm_80, sm_86 (two links), then one each for sm_90, sm_100, sm_120
PLAN = plan_fatbin(["sm_80", "sm_86", "sm_90", "sm_100", "sm_120"], ptx_for="none", group=True, supported=range(200))
J = [str(job) for job in PLAN.jobs]


class FakeCompiler:
    """Stands in for run_job: records which thread ran which job, in which order, and may fail some."""

    def __init__(self, fail=(), delay=0.05, exc=None):
        self.fail, self.delay, self.exc = set(fail), delay, exc
        self.calls: list[str] = []
        self.threads: set[str] = set()
        self.lock = threading.Lock()

    def __call__(self, job, *args):
        with self.lock:
            self.calls.append(str(job))
            self.threads.add(threading.current_thread().name)
        time.sleep(self.delay)
        if str(job) in self.fail:
            if self.exc is not None:
                raise self.exc
            raise _JobFailed(f"{job} failed", "the log\n")
        return JobResult(job, (), {}, f"log of {job}")


@pytest.fixture
def fake(monkeypatch):
    def install(**kwargs):
        compiler = FakeCompiler(**kwargs)
        monkeypatch.setattr(_multiarch, "run_job", compiler)
        return compiler

    return install


def ours() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("cuda-fatbin")]


def test_results_come_back_in_plan_order_and_the_pool_is_gone(fake):
    compiler = fake()
    results = run_plan(PLAN, lambda job: ())
    assert [r.job for r in results] == list(PLAN.jobs)
    assert [r.log for r in results] == [f"log of {j}" for j in PLAN.jobs]
    assert not ours()  # the pool it made is shut down and joined
    assert compiler.threads and all(name.startswith("cuda-fatbin_") for name in compiler.threads)


def test_longest_jobs_are_submitted_first(fake):
    compiler = fake(delay=0)
    run_plan(PLAN, lambda job: (), max_workers=1)
    # the grouped job links two archs; then newer archs first
    assert compiler.calls == [J[0], J[3], J[2], J[1]]


@pytest.mark.parametrize(
    "cpus, max_workers, threads_per_job, expected",
    [(3, None, 1, 3), (None, None, 1, 1), (8, 5, 2, 2), (8, 5, 1, 4), (2, 1, 1, 1), (8, 3, 4, 1)],
)
def test_worker_threads(fake, monkeypatch, cpus, max_workers, threads_per_job, expected):
    """min(jobs, max_workers or the CPU count // threads per job), at least one."""
    monkeypatch.setattr(os, "cpu_count", lambda: cpus)
    compiler = fake(delay=0.2)
    run_plan(PLAN, lambda job: (), max_workers=max_workers, threads_per_job=threads_per_job)
    assert len(compiler.threads) == expected


def test_progress_counts_each_succeeded_job_once(fake):
    fake(fail={J[2]}, delay=0)
    calls = []
    with pytest.raises(FatbinCompileError):
        run_plan(PLAN, lambda job: (), max_workers=1, progress=lambda *a: calls.append(a))
    assert calls == [(1, 4, PLAN.jobs[0]), (2, 4, PLAN.jobs[3])]  # the failure is not counted; then all stop
    fake(delay=0)
    calls.clear()
    run_plan(PLAN, lambda job: (), max_workers=2, progress=lambda *a: calls.append(a))
    assert [c[:2] for c in calls] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert sorted(str(c[2]) for c in calls) == sorted(str(j) for j in PLAN.jobs)


def test_failures_carry_message_and_log(fake):
    fake(fail={J[1], J[3]}, delay=0.1)
    with pytest.raises(FatbinCompileError) as info:
        run_plan(PLAN, lambda job: (), max_workers=4)
    assert info.value.failures == [(J[3], f"{J[3]} failed\nthe log\n"), (J[1], f"{J[1]} failed\nthe log\n")]


def test_foreign_exceptions_are_reported_by_their_text(fake):
    fake(fail={J[1]}, delay=0, exc=RuntimeError("out of memory"))
    with pytest.raises(FatbinCompileError) as info:
        run_plan(PLAN, lambda job: (), max_workers=1)
    assert info.value.failures == [(J[1], "out of memory\n")]


def test_an_interrupt_in_a_job_propagates_and_nothing_else_runs(fake):
    compiler = fake(fail={J[0]}, delay=0, exc=KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        run_plan(PLAN, lambda job: (), max_workers=1)
    assert len(compiler.calls) == 1 and not ours()


def test_a_callers_executor_is_used_and_left_open(fake):
    compiler = fake(delay=0)
    with cf.ThreadPoolExecutor(max_workers=2, thread_name_prefix="mine") as pool:
        run_plan(PLAN, lambda job: (), executor=pool)
        assert pool.submit(lambda: 1).result() == 1  # still open
    assert all(name.startswith("mine") for name in compiler.threads)


@pytest.mark.parametrize("bad", [0, -1, True, 2.0, "2"])
def test_max_workers_must_be_a_positive_int(bad):
    with pytest.raises(ValueError) as info:
        run_plan(PLAN, lambda job: (), max_workers=bad)
    assert str(info.value) == f"max_workers must be a positive int; got {bad!r}"


def test_executor_must_submit():
    with pytest.raises(TypeError) as info:
        run_plan(PLAN, lambda job: (), executor=object())
    assert str(info.value) == "executor must be a concurrent.futures.Executor; got object"


class _ThreadBackedProcessPool(cf.ProcessPoolExecutor):
    """A process pool to run_plan's eyes whose jobs run in threads (the fake compiler cannot be pickled)."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self._threads = cf.ThreadPoolExecutor(max_workers=2)

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        return self._threads.submit(fn, *args, **kwargs)


def test_ctrl_c_while_waiting_cancels_the_queue_and_stops_or_names_the_running_jobs(monkeypatch):
    """Ctrl-C in the waiting thread (docs/cli.md, "Ctrl-C"): queued jobs never start; a process pool's running
    compiles are killed (its workers terminated), a thread pool's cannot be, so the count of jobs still
    running goes to the command's message; then the KeyboardInterrupt goes on to the caller."""
    release = threading.Event()
    started: list[str] = []
    lock = threading.Lock()

    def compile_(job, *args):
        with lock:
            started.append(str(job))
            first = len(started) == 1
        if not first:  # the first job ends at once; the others wait, running or queued
            release.wait(30)
        return JobResult(job, (), {}, "")

    monkeypatch.setattr(_multiarch, "run_job", compile_)

    def interrupt(done, total, job):
        deadline = time.monotonic() + 30
        while len(started) < 3 and time.monotonic() < deadline:  # the freed worker takes the third job
            time.sleep(0.01)
        time.sleep(0.05)  # its future was set running before compile_ appended it: two run, two are queued
        raise KeyboardInterrupt

    said: list[int] = []
    monkeypatch.setattr(_jobs, "awaiting", said.append)
    terminated: list[object] = []
    monkeypatch.setattr(_jobs, "kill_workers", terminated.append)
    plan = plan_fatbin(["sm_80", "sm_86", "sm_90", "sm_100", "sm_120"], ptx_for="none", supported=range(200))
    assert len(plan.jobs) == 5
    with cf.ThreadPoolExecutor(max_workers=2) as threads:
        submitted: list[cf.Future[JobResult]] = []
        original = threads.submit

        def submit(fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
            submitted.append(original(fn, *args, **kwargs))
            return submitted[-1]

        monkeypatch.setattr(threads, "submit", submit)
        try:
            with pytest.raises(KeyboardInterrupt):
                run_plan(plan, lambda job: (), executor=threads, progress=interrupt)
            assert said == [2] and terminated == []  # two jobs running; a thread cannot be stopped
            assert [f.cancelled() for f in submitted].count(True) == 2 and len(started) == 3  # the queue never starts
        finally:
            release.set()
    release.clear()
    said.clear()
    started.clear()
    pool = _ThreadBackedProcessPool()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_plan(plan, lambda job: (), executor=pool, progress=interrupt)
        assert terminated == [pool] and said == []  # its workers are killed: nothing to wait for
    finally:
        release.set()
        pool._threads.shutdown(wait=True)
        pool.shutdown(wait=True)
