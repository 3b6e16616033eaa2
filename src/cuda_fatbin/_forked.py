# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Jobs run by processes forked from this one, for :func:`cuda_fatbin._jobs.fan_out` on Linux.

A ``ProcessPoolExecutor`` costs a command about 10 ms before its first job on a 2-core machine (importing
``concurrent.futures.process`` and ``multiprocessing`` loads ``logging``, ``tempfile``, ``shutil``, ``socket``,
``subprocess``...) and a few more to shut down, and every job is pickled, with its arguments, to reach a
worker. Here the workers are forked once the jobs are known: each inherits the jobs and their arguments,
reads the index of its next job from a pipe they share (4 bytes, written and read whole: a free worker
takes the next job, as from a pool's queue), and writes the result (pickled) on a pipe of its own. Only
``pickle`` and ``selectors`` are imported.

The workers are those of :func:`cuda_fatbin._jobs.process_pool` (``_jobs._worker_init``): they ignore SIGINT,
take SIGTERM's default, and die with this process. A worker that dies (a file that shrank under its map:
SIGBUS) ends its pipe; the jobs without a result once every worker is gone (the one it was running, and any
left when every worker died) are given back (``fan_out`` runs each again alone). Anything raised here
(Ctrl-C, SIGTERM's ``Terminated``, an error of a job or of ``done``) kills every worker and waits for it
before it propagates.

Used where forking is what ``multiprocessing`` would do anyway (:func:`usable`): Linux, Python before 3.14
(whose default start method is ``forkserver``), no other start method chosen by the program, one thread.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import struct
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T")
    R = TypeVar("R")

#: What a worker writes back: kind (a result, an exception), the job's index, the pickle's length.
_HEAD = struct.Struct("<BIQ")
_RESULT, _RAISED = 1, 2
#: Indices written to the shared pipe at a time: 4,096 bytes, PIPE_BUF on Linux (each write is whole or not made).
_BATCH = 1024
#: Why a pipe or a fork may fail for want of descriptors, processes or memory: fewer workers then.
_NO_MORE = (errno.EMFILE, errno.ENFILE, errno.EAGAIN, errno.ENOMEM)


def usable() -> bool:
    """Is forking workers from this process what ``multiprocessing``'s default would do, and safe here?"""
    import threading

    if not sys.platform.startswith("linux") or sys.version_info >= (3, 14) or threading.active_count() > 1:
        return False
    mp = sys.modules.get("multiprocessing")  # a start method chosen by the program (spawn, forkserver) is kept
    return mp is None or mp.get_start_method(allow_none=True) in (None, "fork")


def run_forked(
    items: list[T], job: Callable[..., R], args: tuple[Any, ...], done: Callable[[T, R], None], workers: int
) -> list[T]:
    """Run ``job(item, *args)`` for each item in ``workers`` forked processes; ``done(item, result)`` here, as each
    ends. Returns the items left without a result by workers that died, in order."""
    import selectors

    from ._jobs import WAIT_STEP, check_interrupt

    tasks_r, tasks_w = os.pipe()
    os.set_blocking(tasks_w, False)
    pool: dict[int, int | None] = {}  # a worker's result pipe -> its process id, until it is waited for
    finished: set[int] = set()
    selector = selectors.DefaultSelector()
    fed = 0
    try:
        for _ in range(min(workers, len(items))):
            try:
                _fork(items, job, args, tasks_r, tasks_w, pool)
            except OSError as exc:  # no pipe or process more (RLIMIT_NOFILE, RLIMIT_NPROC): those started do the jobs
                if not pool or exc.errno not in _NO_MORE:
                    raise
                break
        for fd in pool:
            selector.register(fd, selectors.EVENT_READ)
        selector.register(tasks_w, selectors.EVENT_WRITE)
        while pool:
            ready = selector.select(WAIT_STEP)
            check_interrupt()  # one its finalizer lost (_jobs.check_interrupt)
            for key, _mask in ready:
                if key.fd == tasks_w:
                    fed = _feed(tasks_w, fed, len(items))
                    if fed == len(items):  # every index is in the pipe: the workers end where it ends
                        selector.unregister(tasks_w)
                        os.close(tasks_w)
                        tasks_w = -1
                    continue
                message = _message(key.fd)
                if message is None:  # its pipe ended: the worker is gone
                    selector.unregister(key.fd)
                    _wait(pool.pop(key.fd))
                    os.close(key.fd)
                    continue
                kind, index, value = message
                finished.add(index)
                if kind == _RAISED:
                    raise value
                done(items[index], value)
        return [item for i, item in enumerate(items) if i not in finished]
    except BaseException:
        for pid in pool.values():
            _kill(pid)
        raise
    finally:
        for pid in pool.values():  # (gone already, but not yet waited for)
            _wait(pid)
        for fd in [tasks_r, tasks_w, *pool]:
            if fd >= 0:
                os.close(fd)
        selector.close()


def _fork(
    items: list[Any], job: Callable[..., Any], args: tuple[Any, ...], tasks_r: int, tasks_w: int,
    pool: dict[int, int | None],
) -> None:  # fmt: skip
    """Start a worker: ``pool`` gets this process's end of its result pipe and its process id (before a signal
    held back meanwhile comes: a worker started is always one to kill and wait for)."""
    from ._jobs import _STOPPING

    for stream in (sys.stdout, sys.stderr):  # what they hold is written once, by this process
        with contextlib.suppress(AttributeError, OSError, ValueError):  # closed, or gone (its reader went away)
            stream.flush()
    parent = os.getpid()
    results_r, results_w = os.pipe()
    try:
        # SIGINT and SIGTERM held back: here, a signal's exception raised in os.fork's handlers would be lost; in the
        # worker, the command's handler would raise in the caller's code: they stay held until _worker_init has set
        # its own (not _jobs._deferred_signals, whose fork handler releases them in the child at once)
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)
        try:
            pid = os.fork()
            if pid == 0:  # the worker: never returns, whatever it raises (the caller's code is not run twice)
                try:
                    _work(items, job, args, parent, tasks_r, results_w, [tasks_w, results_r, *pool])
                finally:
                    os._exit(1)
            pool[results_r] = pid
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    except BaseException:
        if results_r not in pool:
            os.close(results_r)
        raise
    finally:
        os.close(results_w)


def _feed(fd: int, fed: int, total: int) -> int:
    """Write the indices from ``fed`` on to the shared pipe while it takes them; returns how many are in."""
    while fed < total:
        n = min(_BATCH, total - fed)
        try:
            os.write(fd, struct.pack(f"<{n}I", *range(fed, fed + n)))
        except BlockingIOError:  # full: the workers have this much to do
            break
        fed += n
    return fed


def _message(fd: int) -> tuple[int, int, Any] | None:
    """The next message on a worker's pipe, read whole; None at its end (the worker is gone, perhaps mid-write)."""
    import pickle

    head = _read(fd, _HEAD.size)
    if len(head) < _HEAD.size:
        return None
    kind, index, size = _HEAD.unpack(head)
    body = _read(fd, size)
    if len(body) < size:
        return None
    try:
        return kind, index, pickle.loads(body)
    except Exception as exc:  # pickled, but not to be unpickled (an exception whose __init__ takes other arguments)
        what = "result" if kind == _RESULT else "error"
        return _RAISED, index, RuntimeError(f"a worker's {what} could not be received: {type(exc).__name__}: {exc}")


def _wait(pid: int | None) -> None:
    if pid is not None:
        with contextlib.suppress(ChildProcessError):  # waited for already
            os.waitpid(pid, 0)


def _kill(pid: int | None) -> None:
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _work(
    items: list[Any], job: Callable[..., Any], args: tuple[Any, ...], parent: int, tasks: int, results: int,
    others: list[int],
) -> None:  # fmt: skip
    """A worker's life: the jobs whose indices it reads from ``tasks``, their results written to ``results``."""
    code = 1
    try:
        for fd in others:  # this process's copies of the other ends: the pipes must end when their owner does
            if fd >= 0:  # (closed first: descriptors to spare for the imports below)
                os.close(fd)
        import pickle

        from ._jobs import _worker_init

        _worker_init(parent, True)
        while len(raw := _read(tasks, 4)) == 4:
            (index,) = struct.unpack("<I", raw)
            try:
                kind, value = _RESULT, job(items[index], *args)
            except BaseException as exc:  # the caller's to raise
                kind, value = _RAISED, exc
            try:
                body = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
            except Exception as exc:  # a result or an error that cannot be pickled
                what = "result" if kind == _RESULT else "error"
                kind = _RAISED
                body = pickle.dumps(RuntimeError(f"a worker's {what} could not be sent: {type(exc).__name__}: {exc}"))
            _write(results, _HEAD.pack(kind, index, len(body)) + body)
        code = 0
    finally:
        os._exit(code)


def _read(fd: int, size: int) -> bytes:
    """``size`` bytes from ``fd``, fewer at its end."""
    parts = []
    while size:
        chunk = os.read(fd, min(size, 1 << 24))
        if not chunk:
            break
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
