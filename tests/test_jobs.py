# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Running jobs and stopping them on a signal (``_jobs``, docs/cli.md "Signals"), in process.

The process-pool hang of a Ctrl-C after the first job of a compile: a worker killed while it sent its
result left part of a message in the pool's result pipe, and the pool's manager thread waited for the
rest for ever (``shutdown`` and the interpreter's exit with it). Here the half-sent message is made on
purpose (deterministic), and the scenario itself is repeated with results big enough that a worker is
often caught sending one.
"""

from __future__ import annotations

import concurrent.futures as cf
import concurrent.futures.process  # noqa: F401  (cf.process below)
import os
import signal
import struct
import sys
import threading
import time
from typing import Any

import pytest

from cuda_fatbin import _jobs
from cuda_fatbin._jobs import Terminated, kill_workers, process_pool, run_jobs, signal_handlers, stop_jobs

from fatbin_testing import TAKE_SIGTERM_IN_A_FINALIZER

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork, /proc and PR_SET_PDEATHSIG")


def _managers() -> set[threading.Thread]:
    """The process pools' manager threads alive now."""
    return {t for t in threading.enumerate() if isinstance(t, cf.process._ExecutorManagerThread) and t.is_alive()}


def _shut_down_within(
    pool: cf.ProcessPoolExecutor, before: set[threading.Thread], results: object, seconds: float
) -> bool:
    """``pool.shutdown(wait=True)`` and its manager thread end within ``seconds``; if not, unblock them as the
    fix does (or the interpreter's exit would wait on that thread for ever) and say so."""
    ender = threading.Thread(target=pool.shutdown, daemon=True)
    ender.start()
    ender.join(seconds)
    managers = _managers() - before
    for manager in managers:
        manager.join(seconds)
    stuck = ender.is_alive() or any(m.is_alive() for m in managers)
    if stuck:
        results._writer.close()  # type: ignore[attr-defined]
        for thread in (ender, *managers):
            thread.join(30)
    return not stuck


def _half_sent(marker: str) -> None:
    """In a pool worker: write the start of a result message (a length of 1000 bytes, then 10 of them), as
    a worker killed while sending its result leaves it, and wait to be killed."""
    results = sys._getframe(1).f_locals["result_queue"]  # concurrent.futures.process._process_worker's
    with results._wlock:
        os.write(results._writer.fileno(), struct.pack("!i", 1000) + b"x" * 10)
        with open(marker, "w"):
            pass
        time.sleep(120)


def _interrupt_when(path: str) -> threading.Thread:
    main = threading.main_thread().ident
    assert main is not None

    def wait() -> None:
        deadline = time.monotonic() + 60
        while not os.path.exists(path) and time.monotonic() < deadline:
            time.sleep(0.01)
        signal.pthread_kill(main, signal.SIGINT)  # a Ctrl-C: KeyboardInterrupt in the main thread

    thread = threading.Thread(target=wait, daemon=True)
    thread.start()
    return thread


@linux
def test_ctrl_c_while_a_worker_sends_its_result_leaves_the_pool_able_to_shut_down(tmp_path):
    marker = str(tmp_path / "sending")
    before = _managers()
    pool = cf.ProcessPoolExecutor(2)
    results = pool._result_queue
    waiter = _interrupt_when(marker)
    with pytest.raises(KeyboardInterrupt):
        run_jobs(pool, _half_sent, [marker], lambda m: (m,))
    waiter.join()
    assert _shut_down_within(pool, before, results, 30), "the pool's manager thread waits for the rest of the message"


def _result_of(size: int, wait: float) -> bytes:
    time.sleep(wait)
    return b"r" * size


TRIES = int(os.environ.get("CUDA_FATBIN_STRESS_TRIES", "30"))


@linux
def test_ctrl_c_after_the_first_job_stops_a_process_pool_every_time():
    """Issue #52's scenario, in process and repeated: a user's process pool of 2, jobs that send big results,
    Ctrl-C right after the first one ended (while its sibling often sends its own). Every try: the jobs
    stop and the pool shuts down at once. Without closing the result pipe's write end (kill_workers), a try
    among the first ten hung on a 2-core machine."""
    hung = 0
    for _ in range(TRIES):
        before = _managers()
        pool = cf.ProcessPoolExecutor(2)
        results = pool._result_queue

        def interrupt(f: cf.Future[bytes], item: float) -> None:
            raise KeyboardInterrupt

        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            # both first jobs end together; 8 MiB takes a while through a pipe
            run_jobs(pool, _result_of, [0.02, 0.02, 5, 5], lambda w: (8 << 20, w), interrupt)
        hung += not _shut_down_within(pool, before, results, 30)
        assert time.monotonic() - t0 < 30
    assert hung == 0, f"{hung} of {TRIES} tries hung"


def test_stop_jobs_cancels_the_queue_and_names_the_running_thread_jobs(monkeypatch):
    """A thread's job cannot be stopped: the count still running goes to ``awaiting``; an error that is not
    an interrupt only cancels the queue."""
    release = threading.Event()
    said: list[int] = []
    monkeypatch.setattr(_jobs, "awaiting", said.append)
    with cf.ThreadPoolExecutor(1) as pool:
        running = pool.submit(release.wait, 30)
        queued = pool.submit(release.wait, 30)
        while not running.running():
            time.sleep(0.01)
        stop_jobs(pool, [running, queued], ValueError("from a callback"))
        assert queued.cancelled() and said == []
        stop_jobs(pool, [running, queued], KeyboardInterrupt())
        assert said == [1]
        release.set()


def test_kill_workers_of_a_pool_without_processes_or_results():
    """A pool of another make (no ``_processes``, no ``_result_queue``): shut down without waiting, nothing more."""
    calls: list[tuple[bool, bool]] = []

    class Other(cf.ProcessPoolExecutor):
        def __init__(self) -> None:
            pass

        def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
            calls.append((wait, cancel_futures))

    kill_workers(Other())
    assert calls == [(False, True)]


def test_run_jobs_on_error_cancels_the_rest():
    """``cancel_on_error``: a failed job cancels those not started, even one that failed before the last submit."""
    with cf.ThreadPoolExecutor(1) as pool:
        futures = run_jobs(pool, lambda x: 1 // x, [0, 1, 2], lambda x: (x,), cancel_on_error=True)
    states = [("cancelled" if f.cancelled() else type(f.exception()).__name__) for f in futures]
    assert states == ["ZeroDivisionError", "cancelled", "cancelled"], states


def _worker_state() -> tuple[object, int]:
    return signal.getsignal(signal.SIGINT), os.getppid()


@linux
def test_our_workers_ignore_ctrl_c_and_die_with_this_process():
    """A terminal's Ctrl-C reaches every process of the group: our workers ignore it (this process stops them).
    PR_SET_PDEATHSIG: the worker's parent-death signal is SIGKILL (read back with PR_GET_PDEATHSIG)."""
    with process_pool(1) as pool:
        handler, parent = pool.submit(_worker_state).result()
        assert handler == signal.SIG_IGN and parent == os.getpid()
        assert pool.submit(_pdeathsig).result() == signal.SIGKILL


def _pdeathsig() -> int:
    import ctypes

    value = ctypes.c_int()
    ctypes.CDLL(None).prctl(2, ctypes.byref(value), 0, 0, 0)  # PR_GET_PDEATHSIG
    return value.value


def test_signal_handlers_first_signal_raises_then_exits_while_awaiting(monkeypatch, capsys):
    """SIGINT: KeyboardInterrupt; SIGTERM: Terminated. Once running thread jobs are awaited, another signal
    exits at once (130, or 143 for SIGTERM); SIGTERM itself does not wait for them. Handlers restored after."""
    exits: list[int] = []

    def fake_exit(code: int) -> None:
        exits.append(code)
        raise SystemExit(code)

    monkeypatch.setattr(os, "_exit", fake_exit)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for first, raised in ((signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Terminated)):
        with signal_handlers("scan"):
            handler = signal.getsignal(first)
            assert callable(handler) and _jobs.awaiting is not None
            with pytest.raises(raised) as info:
                handler(first, None)
            assert type(info.value) is raised
            handler(signal.SIGINT, None)  # unwinding: a second signal waits for the clean-up
            assert exits == []
            if first == signal.SIGTERM:
                with pytest.raises(SystemExit):
                    _jobs.awaiting(2)
                assert exits == [143]
            else:
                _jobs.awaiting(0)
                _jobs.awaiting(2)
                with pytest.raises(SystemExit):
                    handler(signal.SIGINT, None)
                assert exits == [130]
        exits.clear()
    assert {s: signal.getsignal(s) for s in before} == before and _jobs.awaiting is None
    assert capsys.readouterr().err == (
        "cuda-fatbin scan: interrupted; waiting for 2 running jobs; Ctrl-C again to quit now\n"
        "cuda-fatbin scan: interrupted\n"
        "cuda-fatbin scan: interrupted\n"
    )


def _nap(seconds: float) -> None:
    time.sleep(seconds)


@linux
def test_a_broken_process_pool_with_cancel_on_error_prints_no_traceback(monkeypatch):
    """A user's process pool that breaks (Ctrl-C kills its workers) while ``cancel_on_error``
    is on: the pool fails its own queue; cancelling those futures too made its manager thread die with
    ``InvalidStateError`` printed (a traceback on Ctrl-C) before it reaped its workers."""
    errors: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(args.exc_value))
    before = _managers()
    pool = cf.ProcessPoolExecutor(1)
    results = pool._result_queue
    items = [0.0, 30.0, 30.0, 30.0]

    def interrupt(f: cf.Future[None], item: float) -> None:
        raise KeyboardInterrupt

    def job(item: float) -> tuple[Any, ...]:
        return (item,)

    with pytest.raises(KeyboardInterrupt):
        run_jobs(pool, _nap, items, job, interrupt, cancel_on_error=True)
    assert _shut_down_within(pool, before, results, 30)
    assert errors == [], errors


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_ignored_when_the_command_starts_stays_ignored(signum):
    """`nohup cuda-fatbin scan ... &` (or a background job of a script): Ctrl-C in the terminal, or SIGHUP's
    friends, must not stop a command started with the signal ignored."""
    from cuda_fatbin._jobs import signal_handlers

    before = signal.signal(signum, signal.SIG_IGN)
    try:
        with signal_handlers("scan"):
            assert signal.getsignal(signum) is signal.SIG_IGN
            signal.raise_signal(signum)  # nothing happens
        assert signal.getsignal(signum) is signal.SIG_IGN
    finally:
        signal.signal(signum, before)
    with signal_handlers("scan"):  # not ignored: ours
        assert signal.getsignal(signum) not in (signal.SIG_IGN, before)


def _sleep(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


@linux
def test_after_ctrl_c_the_pools_manager_thread_has_ended_before_the_command_exits():
    """Killing the workers ends the pool's manager thread before ``run_jobs`` re-raises: the interpreter's exit,
    which follows at once on the command line, would otherwise wake that thread while it closes its pipe
    (Python 3.11: "Exception ignored ... OSError: [Errno 9] Bad file descriptor" printed after an exit 130,
    in about one Ctrl-C in three of ``size``)."""
    for _ in range(5):
        before = _managers()
        pool = process_pool(2)

        def interrupt(f: cf.Future[float], item: float) -> None:
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            run_jobs(pool, _sleep, [0.0, 0.0, 30, 30, 30], lambda s: (s,), interrupt)
        assert not (_managers() - before), "the pool's manager thread still runs"
        pool.shutdown()


def _sigterm_handler() -> object:
    return signal.getsignal(signal.SIGTERM)


@linux
def test_a_sigterm_ignored_when_the_command_starts_stays_ignored_in_its_workers():
    """`trap '' TERM` before a scan: a SIGTERM to the process group leaves the workers running too. Reset to the
    default, they died and every file not read yet was read again alone, each in a process of its own (a
    4000-file ``size`` took 37 s instead of 2)."""
    before = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with signal_handlers("scan"), process_pool(1) as pool:
            assert pool.submit(_sigterm_handler).result() == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, before)
    with process_pool(1) as pool:  # not ignored: the default, not the command line's handler
        assert pool.submit(_sigterm_handler).result() == signal.SIG_DFL


def _blocked() -> set[int]:
    return {int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])}


@linux
@pytest.mark.parametrize("own", [True, False], ids=["process_pool", "a callers fork pool"])
def test_workers_started_while_jobs_are_submitted_do_not_block_ctrl_c_or_sigterm(own):
    """``run_jobs`` holds SIGINT and SIGTERM back while it submits, and a process pool forks its workers then. The
    workers must not keep them blocked for life: a caller's pool (``compile(executor=...)``) then had workers that
    no SIGTERM could end, so its shutdown after another worker crashed (``terminate()``, then ``join()``) hung."""
    import multiprocessing

    pool = process_pool(1) if own else cf.ProcessPoolExecutor(1, multiprocessing.get_context("fork"))
    with pool:
        [blocked] = [f.result() for f in run_jobs(pool, _blocked, [0], lambda _: ())]
    assert not blocked & {int(signal.SIGINT), int(signal.SIGTERM)}


class _CountedWaiters(list[Any]):
    """A future's waiters, counting each one added (``cf.wait``, ``cf.as_completed`` add one per future they watch)."""

    added = 0

    def append(self, waiter: Any) -> None:
        type(self).added += 1
        super().append(waiter)


class _CountingPool(cf.ThreadPoolExecutor):
    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> cf.Future[Any]:
        f = super().submit(fn, *args, **kwargs)
        with f._condition:
            f._waiters = _CountedWaiters(f._waiters)
        return f


def test_run_jobs_waits_for_its_jobs_in_linear_work() -> None:
    """Each future is watched once, however many jobs end one after another (a wait over every pending future per
    job ended is quadratic: 20,000 short jobs took 30 s instead of 3)."""
    n = 1000
    _CountedWaiters.added = 0
    got: list[int] = []
    with _CountingPool(1) as pool:
        run_jobs(pool, time.sleep, range(n), lambda i: (0.0005,), lambda f, i: got.append(i))
    assert got == list(range(n))
    assert _CountedWaiters.added <= 2 * n


_LOST_IN_A_POOL = (
    TAKE_SIGTERM_IN_A_FINALIZER
    + """
import sys, threading
import concurrent.futures as cf
from cuda_fatbin import _jobs

release = threading.Event()


def started(f, item):  # the first job's end, in the loop that waits for the others
    take_the_signal_in_a_finalizer(signal.SIGINT)


try:
    with _jobs.signal_handlers("compile"), cf.ThreadPoolExecutor(2) as pool:
        _jobs.run_jobs(pool, lambda t: release.wait(t), [0, 60], lambda t: (t,), started, stop=release.set)
except KeyboardInterrupt:
    sys.exit(130)
"""
)


def test_a_ctrl_c_whose_exception_a_finalizer_dropped_still_stops_run_jobs():
    """Ctrl-C taken while a finalizer runs, in the loop that waits for a pool's jobs: raised again within a step
    (``_jobs.check_interrupt``), not once the jobs end."""
    import subprocess

    t = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", _LOST_IN_A_POOL], capture_output=True, text=True, timeout=120)
    assert "Exception ignored" in proc.stderr  # the exception was lost where the test says
    assert proc.returncode == 130, proc.stderr
    assert time.monotonic() - t < 30


def test_a_signal_taken_by_one_command_is_not_raised_by_the_next(monkeypatch):
    """The signal a command's handler took is forgotten once its ``signal_handlers`` ends: a program that runs a
    command again (or waits for jobs of its own) is not interrupted by it."""
    monkeypatch.setattr(_jobs, "awaiting", None)
    with pytest.raises(KeyboardInterrupt), signal_handlers("scan"):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    try:
        with cf.ThreadPoolExecutor(1) as pool:
            assert [f.result() for f in run_jobs(pool, abs, [-1, -2], lambda x: (x,))] == [1, 2]
        with signal_handlers("scan"), cf.ThreadPoolExecutor(1) as pool:
            assert [f.result() for f in run_jobs(pool, abs, [-3], lambda x: (x,))] == [3]
    except KeyboardInterrupt:  # (not up into the test run)
        pytest.fail("the signal of the first command was raised again")


class _EndedByTheCaller(cf.Executor):
    """Runs the first job at once; the others when the caller says, in the order it says."""

    def __init__(self) -> None:
        self.jobs: list[tuple[cf.Future[Any], Any, tuple[Any, ...]]] = []

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> cf.Future[Any]:
        f: cf.Future[Any] = cf.Future()
        self.jobs.append((f, fn, args))
        if len(self.jobs) == 1:
            f.set_result(fn(*args))
        return f


def test_run_jobs_calls_done_in_submission_order_for_jobs_that_ended_together() -> None:
    """Jobs that ended while ``done`` ran (one batch for the wait) are handed to ``done`` in the order they were
    submitted, whatever the order they ended in; each once."""
    pool = _EndedByTheCaller()
    seen: list[int] = []

    def done(f: cf.Future[Any], item: int) -> None:
        seen.append(item)
        if item == 0:  # the others end meanwhile, last first
            for g, fn, args in reversed(pool.jobs[1:]):
                g.set_result(fn(*args))

    futures = run_jobs(pool, abs, [0, -1, -2, -3], lambda x: (x,), done)
    assert seen == [0, -1, -2, -3]
    assert [f.result() for f in futures] == [0, 1, 2, 3]
