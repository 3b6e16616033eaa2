# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Run jobs on an executor and stop them on a signal: the one home of both, for every command that fans out.

:func:`run_jobs` submits the jobs and hands each finished future to a callback. When the waiting thread is
interrupted (Ctrl-C's ``KeyboardInterrupt``, or :class:`Terminated` that :func:`signal_handlers` raises on
SIGTERM), :func:`stop_jobs` drops every queued job at once and

- a ``ProcessPoolExecutor``'s workers (the caller's or :func:`process_pool`'s) are killed, and the pool
  is left able to shut down (:func:`kill_workers`: a worker killed while sending its result would
  otherwise leave the pool's manager thread waiting for the rest of that message for ever);
- a dask executor's tasks are cancelled on the scheduler (its futures are never "running" here);
- a thread's job cannot be stopped: :data:`awaiting` is told how many still run (the command line says
  it waits for them; a second signal then exits at once).

Workers of :func:`process_pool` never outlive this process: they ignore SIGINT (the terminal sends Ctrl-C
to every process of the group; this process decides) and, on Linux, die with it (``PR_SET_PDEATHSIG``);
elsewhere a watchdog thread in each worker exits when the worker's parent changes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    import concurrent.futures as cf
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any, TypeVar

    T = TypeVar("T")
    R = TypeVar("R")

__all__ = ["Terminated", "fan_out", "kill_workers", "process_pool", "run_jobs", "signal_handlers", "stop_jobs"]


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread by :func:`signal_handlers`: stops work as Ctrl-C does (exit 143).

    Examples
    --------
    >>> from cuda_fatbin._jobs import Terminated
    >>> isinstance(Terminated(), KeyboardInterrupt)  # every Ctrl-C path stops on it too
    True
    """


# Called (in the waiting thread) with the number of thread jobs still running after an interrupt; the
# command line sets it (signal_handlers) to say what it waits for. None: nothing said.
awaiting: Callable[[int], None] | None = None


# The signal the command's handler (signal_handlers) took, while it is set; 0: none. See check_interrupt.
_taken = 0
#: Seconds a loop that waits for workers waits at most before it looks for an interrupt lost (:func:`check_interrupt`)
WAIT_STEP = 0.2


def check_interrupt() -> None:
    """Raise again the exception of a signal the command's handler took (:func:`signal_handlers`), where it was lost.

    Python runs a signal's handler between two steps of whatever code runs then; when that is a finalizer
    (``weakref.finalize``'s callback, a ``__del__``, a generator closed by the collector), the exception it raises is
    printed as "Exception ignored" and dropped, and the command went on to wait for its workers for as long as they
    worked. The loops that wait for workers (:func:`run_jobs`, :mod:`cuda_fatbin._forked`, ``_size_split``) call this
    at least every :data:`WAIT_STEP` seconds, in their normal course only: an exception that went up as it should
    ended them. Nothing outside a command's run (a program calling ``scan``).

    Examples
    --------
    >>> from cuda_fatbin._jobs import check_interrupt
    >>> check_interrupt()  # no signal taken: nothing
    """
    if _taken:
        raise Terminated if _taken == signal.SIGTERM else KeyboardInterrupt


def wait_readable(fd: int) -> None:
    """Wait until ``fd`` has bytes to read or its end (a worker's pipe), looking for a lost interrupt meanwhile
    (:func:`check_interrupt`). Any descriptor: ``poll``, not ``select``, which refuses those past 1,023 (a program
    that holds many files)."""
    import select

    poller = select.poll()
    poller.register(fd, select.POLLIN)  # (its end, an error: reported whatever the events asked for)
    while not poller.poll(WAIT_STEP * 1000):
        check_interrupt()


# How long kill_workers waits for a pool's manager thread to end (it takes milliseconds).
_MANAGER_WAIT = 1.0


def kill_workers(pool: cf.ProcessPoolExecutor) -> None:
    """Kill a process pool's workers (their running jobs) and let the pool shut down without waiting.

    The pool's manager thread reads results from a pipe whose write end this process also holds (it never
    writes to it). A worker killed while it writes its result leaves part of a message there, and the
    reader would wait for the rest for ever: ``shutdown(wait=True)`` and the interpreter's exit then hang
    (one Ctrl-C in about seven did, after the first job of a compile had finished). Closing this process's
    unused write end turns the killed writers into an end of file: the pool sees it broken and shuts down.
    Processes forked later from this one (another pool's workers) hold that end too: the pool then shuts
    down once they exit.
    """
    processes = list((getattr(pool, "_processes", None) or {}).values())
    results = getattr(pool, "_result_queue", None)  # shutdown() drops the reference: take it first
    manager = getattr(pool, "_executor_manager_thread", None)  # and this one
    for process in processes:
        with contextlib.suppress(OSError, AttributeError, ValueError):  # already gone, or closed
            process.kill()
    pool.shutdown(wait=False, cancel_futures=True)
    writer = getattr(results, "_writer", None)
    if writer is not None:
        with contextlib.suppress(OSError):
            writer.close()
    if isinstance(manager, threading.Thread) and manager.is_alive():
        # it sees the pool broken and closes its pipes: at once, so that the interpreter's exit that follows does
        # not wake it meanwhile (Python 3.11 then printed "OSError: [Errno 9] Bad file descriptor" after an
        # exit 130); bounded: a process forked from this one since holds the result pipe open
        manager.join(_MANAGER_WAIT)


def stop_jobs(pool: cf.Executor, futures: Iterable[cf.Future[Any]], why: BaseException | None = None) -> None:
    """Cancel the queued jobs; on an interrupt (``why`` a ``KeyboardInterrupt``) also end the running ones.

    A process pool's workers are killed (:func:`kill_workers`; the pool is then broken); a thread's job
    cannot be stopped, so :data:`awaiting` is told how many still run.
    """
    import concurrent.futures as cf

    futures = list(futures)
    if isinstance(pool, cf.ProcessPoolExecutor) and isinstance(why, KeyboardInterrupt):
        # the pool cancels its queue itself (shutdown's cancel_futures): a future cancelled here could
        # still be in its books, and Python 3.11 then fails on it once the killed workers break the pool
        # (InvalidStateError in the pool's thread, printed)
        kill_workers(pool)
        return
    for f in futures:
        f.cancel()
    if not isinstance(why, KeyboardInterrupt):
        return
    if awaiting is not None:
        awaiting(sum(1 for f in futures if f.running()))


def run_jobs(
    pool: cf.Executor,
    fn: Callable[..., Any],
    items: Iterable[T],
    args: Callable[[T], tuple[Any, ...]],
    done: Callable[[cf.Future[Any], T], None] | None = None,
    *,
    cancel_on_error: bool = False,
    stop: Callable[[], None] | None = None,
) -> dict[cf.Future[Any], T]:
    """Submit ``fn(*args(item))`` for each item; call ``done(future, item)`` in this thread as each ends.

    Returns the futures (in submission order) with their items. Anything raised while submitting or
    waiting (Ctrl-C, SIGTERM's :class:`Terminated`, an error from ``done``) first stops the jobs
    (:func:`stop_jobs`), then propagates. ``cancel_on_error``: the first job that fails cancels those not
    started (before its worker takes another). ``stop``: ends the running jobs (threads that wait on
    processes of their own, as ``probe``'s cases); given, it is called instead of awaiting them.

    Examples
    --------
    >>> import concurrent.futures as cf
    >>> from cuda_fatbin._jobs import run_jobs
    >>> with cf.ThreadPoolExecutor(2) as pool:
    ...     futures = run_jobs(pool, pow, [2, 3], lambda x: (x, 2))
    >>> [f.result() for f in futures]
    [4, 9]
    """
    import concurrent.futures as cf
    import queue

    futures: dict[cf.Future[Any], T] = {}

    def cancel_rest(f: cf.Future[Any]) -> None:
        # a broken pool (its workers killed on Ctrl-C, or one died) fails its queue itself: a future cancelled
        # here meanwhile made its thread die on InvalidStateError (printed) before it reaped its workers
        if not f.cancelled() and f.exception() is not None and not isinstance(f.exception(), cf.BrokenExecutor):
            for other in list(futures):
                other.cancel()

    try:
        with _deferred_signals():
            for item in items:
                f = pool.submit(fn, *args(item))
                futures[f] = item
        if cancel_on_error:  # after every submit: a job that failed already cancels the others at once
            for f in list(futures):
                f.add_done_callback(cancel_rest)
        # as cf.as_completed, looking for a lost interrupt between waits (check_interrupt): each future tells the
        # queue once it ends (a wait over every pending future each time one ends would be quadratic)
        order = {f: i for i, f in enumerate(futures)}
        ended: queue.SimpleQueue[cf.Future[Any]] = queue.SimpleQueue()
        for f in futures:
            f.add_done_callback(ended.put)
        left = len(futures)
        while left:
            finished = []
            with contextlib.suppress(queue.Empty):
                finished.append(ended.get(timeout=WAIT_STEP))
                while True:  # those ended meanwhile: one batch
                    finished.append(ended.get_nowait())
            check_interrupt()
            left -= len(finished)
            for f in sorted(finished, key=order.__getitem__):
                if done is not None:
                    done(f, futures[f])
    except BaseException as e:
        if stop is None:
            stop_jobs(pool, futures, e)
        else:  # the running jobs end at once: nothing to await
            stop()
            for f in futures:
                f.cancel()
        raise
    return futures


_STOPPING = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def _deferred_signals() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back in this (the main) thread while jobs are submitted; they come right after.

    A process pool forks its workers in ``submit``, and an exception raised by a signal handler while the
    fork handlers run (``logging``'s, ...) is printed and dropped: that Ctrl-C was lost and the command
    went on to the end. Threads the pool starts meanwhile inherit the mask, so the signal waits for this one;
    a process forked meanwhile (a worker of any pool) unblocks them at once (``_release_in_child``).
    """
    global _holding
    block = getattr(signal, "pthread_sigmask", None)
    if block is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = block(signal.SIG_BLOCK, _STOPPING)
    _holding = True
    try:
        yield
    finally:
        _holding = False
        block(signal.SIG_SETMASK, previous)


# True while _deferred_signals holds the signals back: a process forked meanwhile (a pool's worker, the caller's
# pool's too) inherits the mask, and would keep SIGINT and SIGTERM blocked for life without _release_in_child.
_holding = False


def _release_in_child() -> None:
    if _holding:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING)


if hasattr(os, "register_at_fork") and hasattr(signal, "pthread_sigmask"):
    os.register_at_fork(after_in_child=_release_in_child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # alive, someone else's (or Windows, where this would end it: never called there)
        return True
    return True


def _worker_init(parent: int, direct: bool) -> None:
    """Initializer of :func:`process_pool`'s workers: ignore Ctrl-C, die with ``parent`` (this process).

    ``direct``: ``parent`` started this worker (fork, spawn); otherwise a fork server did, which exits with it.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops us; no traceback of our own
    if os.name != "posix":
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:  # ignored when the command started: stays so
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the command line's handler, inherited by a fork
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING)  # held back while the parent forked us
    ppid = parent if direct else os.getppid()
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    else:
        threading.Thread(target=_watch_parent, args=(ppid, parent), daemon=True, name="cuda-fatbin-watchdog").start()
    if os.getppid() != ppid or not _alive(parent):  # it died before the lines above (an orphan has another parent)
        os._exit(1)


def _watch_parent(ppid: int, parent: int) -> None:
    import time

    while os.getppid() == ppid and _alive(parent):  # an orphan is given another parent
        time.sleep(0.5)
    os._exit(1)


def process_pool(max_workers: int) -> cf.ProcessPoolExecutor:
    """A process pool whose workers ignore SIGINT and never outlive this process (see the module).

    Examples
    --------
    >>> from cuda_fatbin._jobs import process_pool
    >>> with process_pool(1) as pool:
    ...     pool.submit(abs, -3).result()
    3
    """
    import concurrent.futures as cf
    import multiprocessing

    context = multiprocessing.get_context()
    direct = context.get_start_method() in ("fork", "spawn")
    return cf.ProcessPoolExecutor(max_workers, context, _worker_init, (os.getpid(), direct))


@contextlib.contextmanager
def signal_handlers(command: str) -> Iterator[None]:
    """Ctrl-C and SIGTERM for a command-line run of ``command``; the previous handlers are back afterwards.

    The first SIGINT raises ``KeyboardInterrupt``, SIGTERM :class:`Terminated`, in the main thread: jobs
    stop (:func:`stop_jobs`), ``finally`` blocks remove temporary files, and the command exits 130 or
    143. While jobs that cannot be stopped (threads) are awaited, a second signal exits at once with
    ``os._exit`` (no interpreter teardown while compiler threads still run: that was seen to abort with
    ``free(): invalid pointer``), and so does SIGTERM. Other repeated signals during the unwinding are
    ignored, so that it ends its clean-up. A signal ignored on entry (``nohup``, a background job of a
    non-interactive shell) stays ignored. Outside the main thread this does nothing.
    """
    global awaiting, _taken
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    state = {"signal": 0, "waiting": False}

    def quit_now(signum: int) -> None:
        try:
            sys.stderr.write(f"cuda-fatbin {command}: interrupted\n")
            sys.stderr.flush()
        finally:
            os._exit(143 if signum == signal.SIGTERM else 130)

    def handler(signum: int, frame: object) -> None:
        global _taken
        if state["waiting"]:
            quit_now(signum)
        if state["signal"]:
            return  # already stopping: let the clean-up end
        state["signal"] = _taken = signum  # (for check_interrupt, should this exception be lost)
        raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt

    def waiting(running: int) -> None:
        if not running:
            return
        if state["signal"] == signal.SIGTERM:  # terminate means now: nothing of ours is being written
            quit_now(signal.SIGTERM)
        state["waiting"] = True
        one, many = {"compile": ("compile", "compiles"), "probe": ("case", "cases")}.get(command, ("job", "jobs"))
        noun = one if running == 1 else many
        print(f"cuda-fatbin {command}: interrupted; waiting for {running} running {noun}; Ctrl-C again to quit now",
              file=sys.stderr, flush=True)  # fmt: skip

    # a signal ignored when we started (`nohup`, a background job of a shell without job control) stays ignored
    kept = [s for s in (signal.SIGINT, signal.SIGTERM) if signal.getsignal(s) is not signal.SIG_IGN]
    previous = {s: signal.signal(s, handler) for s in kept}
    previous_hook, awaiting = awaiting, waiting
    previous_taken = _taken
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        awaiting, _taken = previous_hook, previous_taken


def fan_out(
    items: list[T],
    job: Callable[..., R],
    args: tuple[Any, ...],
    done: Callable[[T, R], None],
    workers: int,
    died: Callable[[T], R],
) -> None:
    """Run ``job(item, *args)`` for each item and call ``done(item, result)`` in this thread as each ends.

    One worker (or one item): in this process. Else by processes forked from this one where ``multiprocessing``
    would fork them (:mod:`cuda_fatbin._forked`), or over :func:`process_pool` with :func:`run_jobs`; Ctrl-C
    or SIGTERM kill the workers and drop the queue. An item whose worker died (a file that shrank under a
    map: SIGBUS) is run again alone in a process of its own, to find it; when that process dies too, its
    result is ``died(item)``. ``scan`` and ``size`` fan out through this.

    Examples
    --------
    >>> from cuda_fatbin._jobs import fan_out
    >>> got = {}
    >>> fan_out([1, 2, 3], pow, (2,), got.__setitem__, 1, lambda item: -1)
    >>> got
    {1: 1, 2: 4, 3: 9}
    """
    if workers == 1 or len(items) <= 1:
        for item in items:
            done(item, job(item, *args))
        return
    from ._forked import run_forked, usable

    if usable():  # workers forked from this process, without concurrent.futures (start-up time: _forked)
        got: list[R] = []

        def keep(_item: T, result: R) -> None:
            got.append(result)

        for item in run_forked(items, job, args, done, workers):  # those whose worker died: each again alone
            got.clear()
            lost = run_forked([item], job, args, keep, 1)
            done(item, died(item) if lost else got[0])
        return
    import concurrent.futures as cf  # not before: one worker runs without it (start-up time)

    broken: list[T] = []

    def finished(f: cf.Future[R], item: T) -> None:
        try:
            result = f.result()
        except cf.process.BrokenProcessPool:
            broken.append(item)
            return
        done(item, result)

    with process_pool(min(workers, len(items))) as pool:
        run_jobs(pool, job, items, lambda item: (item, *args), finished)
    for item in broken:
        with process_pool(1) as pool:
            try:
                result: R = run_jobs(pool, job, [item], lambda i: (i, *args)).popitem()[0].result()
            except cf.process.BrokenProcessPool:
                result = died(item)
        done(item, result)
