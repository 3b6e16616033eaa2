# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Jobs run by workers forked from this process (``_forked``, through ``_jobs.fan_out``): every result once, in
this process; errors, deaths and interrupts end with every worker waited for and every pipe closed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from cuda_fatbin import _forked
from cuda_fatbin._jobs import fan_out

from fatbin_testing import TAKE_SIGTERM_IN_A_FINALIZER

pytestmark = pytest.mark.skipif(not _forked.usable(), reason="workers are forked on Linux, Python < 3.14 only")


def _children() -> set[int]:
    """This process's children (those other tests left behind excepted: see the fixture)."""
    found: set[int] = set()
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as f:
            found |= {int(x) for x in f.read().split()}
    return found


def _fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@pytest.fixture(autouse=True)
def _forking(request, monkeypatch):
    """fan_out forks its workers (another test's thread left running would have it use a process pool), and the
    children this process had before the test (another test's) are not the test's."""
    if request.function is not test_a_process_with_threads_or_another_start_method_is_not_forked_from:
        monkeypatch.setattr(_forked, "usable", lambda: True)
    older = _children()
    real = _children
    monkeypatch.setitem(globals(), "_children", lambda: real() - older)


def _square(item: int, offset: int) -> tuple[int, int]:
    return item * item + offset, os.getpid()


def test_every_job_runs_once_in_a_worker_and_its_result_comes_here(tmp_path):
    # more jobs than the shared pipe holds indices (16,384 in 64 KiB): it is fed as the workers empty it
    got: dict[int, tuple[int, int]] = {}
    before = _fds()
    fan_out(list(range(20_000)), _square, (7,), got.__setitem__, 2, lambda item: (-1, 0))
    assert sorted(got) == list(range(20_000)) and all(v == k * k + 7 for k, (v, _) in got.items())
    assert len({pid for _, pid in got.values()}) == 2 and os.getpid() not in {pid for _, pid in got.values()}
    assert _children() == set() and _fds() == before


def _big(item: int) -> bytes:
    return bytes([item]) * (3 << 20)  # larger than a pipe: written while read


def test_a_result_larger_than_a_pipe_comes_back_whole():
    got: dict[int, bytes] = {}
    fan_out([1, 2, 3], _big, (), got.__setitem__, 2, lambda item: b"")
    assert got == {k: bytes([k]) * (3 << 20) for k in (1, 2, 3)}


def _fails_on_3(item: int) -> int:
    if item == 3:
        raise KeyError("three")
    return item


def test_an_error_of_a_job_is_raised_here_and_no_worker_is_left():
    before = _fds()
    with pytest.raises(KeyError, match="three"):
        fan_out(list(range(10)), _fails_on_3, (), lambda item, result: None, 2, lambda item: -1)
    assert _children() == set() and _fds() == before


def _unpicklable(item: int) -> object:
    return lambda: item


def test_a_result_that_cannot_be_sent_is_an_error_that_says_so():
    with pytest.raises(RuntimeError, match="result could not be sent"):
        fan_out([1, 2], _unpicklable, (), lambda item, result: None, 2, lambda item: None)
    assert _children() == set()


class _TwoArguments(Exception):
    def __init__(self, what: str, where: str) -> None:  # pickled with one argument: not to be unpickled
        super().__init__(what)
        self.where = where


def _raises_what_cannot_be_unpickled(item: int) -> int:
    raise _TwoArguments("two", "here")


def test_an_error_that_cannot_be_unpickled_here_is_an_error_that_says_so():
    before = _fds()
    with pytest.raises(RuntimeError, match="error could not be received: TypeError"):
        fan_out([1, 2], _raises_what_cannot_be_unpickled, (), lambda item, result: None, 2, lambda item: None)
    assert _children() == set() and _fds() == before


def _dies_on(item: int, marker: str) -> int:
    if item in (2, 5) and (item == 5 or not os.path.exists(marker)):  # 2 dies once, 5 every time
        Path(marker).touch()
        os.kill(os.getpid(), signal.SIGKILL)  # as a worker killed by SIGBUS (a file that shrank under its map)
    return item * 10


def test_a_job_whose_worker_died_runs_again_alone_and_one_that_dies_again_is_given_up(tmp_path):
    got: dict[int, int] = {}
    fan_out(list(range(8)), _dies_on, (str(tmp_path / "died"),), got.__setitem__, 2, lambda item: -1)
    assert got == {**{k: k * 10 for k in range(8)}, 5: -1}
    assert _children() == set()


def test_every_worker_dead_leaves_the_jobs_for_one_process_each(tmp_path):
    got: dict[int, int] = {}
    fan_out([5, 5, 5], _dies_on, (str(tmp_path / "died"),), lambda item, result: got.update({len(got): result}), 2,
            lambda item: -1)  # fmt: skip
    assert got == {0: -1, 1: -1, 2: -1} and _children() == set()


def _slow(item: int) -> int:
    if item:
        import time

        time.sleep(60)
    return item


def test_an_interrupt_kills_the_workers_and_waits_for_them():
    def interrupted(item: int, result: int) -> None:
        assert len(_children()) == 2  # the other worker holds its job
        raise KeyboardInterrupt

    before = _fds()
    with pytest.raises(KeyboardInterrupt):
        fan_out([0, 1, 1, 1], _slow, (), interrupted, 2, lambda item: -1)
    assert _children() == set() and _fds() == before


def test_a_process_with_threads_or_another_start_method_is_not_forked_from(monkeypatch):
    if threading.active_count() > 1:
        pytest.skip("another test left a thread running")
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not _forked.usable()
    finally:
        stop.set()
        thread.join()
    assert _forked.usable()
    import multiprocessing

    monkeypatch.setattr(multiprocessing, "get_start_method", lambda allow_none=False: "spawn")
    assert not _forked.usable()


def test_a_scan_on_two_workers_imports_neither_concurrent_futures_nor_multiprocessing(tmp_path):
    data = (Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin").read_bytes()
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.cubin").write_bytes(data)
    code = ("import sys, runpy; sys.argv = ['cuda-fatbin'] + sys.argv[1:]\n"
            "try:\n    runpy.run_module('cuda_fatbin', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print(' '.join(sorted(sys.modules)), file=sys.stderr)")  # fmt: skip
    res = subprocess.run([sys.executable, "-c", code, "scan", str(tmp_path), "--gpu", "8.0", "-j", "2"],
                         capture_output=True, text=True, check=True)  # fmt: skip
    assert "3 binaries read, 3 with device code" in res.stdout
    loaded = set(res.stderr.split())
    assert not {"concurrent.futures", "multiprocessing", "logging", "tempfile"} & loaded


def _slow_square(item: int, offset: int) -> tuple[int, int]:
    import time

    time.sleep(0.01)  # every worker started takes some
    return _square(item, offset)


def test_as_many_workers_as_this_process_may_start_run_every_job():
    """-j beyond what the process may open (RLIMIT_NOFILE: a pipe per worker): the workers it could start run every
    job, as one process would, and nothing is left open."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    got: dict[int, tuple[int, int]] = {}
    before = _fds()
    resource.setrlimit(resource.RLIMIT_NOFILE, (len(before) + 12, hard))  # room for a few workers' pipes, not 40
    try:
        fan_out(list(range(60)), _slow_square, (7,), got.__setitem__, 40, lambda item: (-1, 0))
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert {k: v for k, (v, _) in got.items()} == {k: k * k + 7 for k in range(60)}
    assert 1 < len({pid for _, pid in got.values()}) < 40
    assert _children() == set() and _fds() == before


def _worker_state(item: int) -> tuple[object, object, int]:
    import ctypes

    value = ctypes.c_int()
    ctypes.CDLL(None).prctl(2, ctypes.byref(value), 0, 0, 0)  # PR_GET_PDEATHSIG
    return signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM), value.value


def test_a_forked_worker_ignores_ctrl_c_takes_sigterms_default_and_dies_with_this_process():
    from cuda_fatbin._jobs import signal_handlers

    got: dict[int, tuple[object, object, int]] = {}
    with signal_handlers("scan"):  # the command's handlers, which a fork inherits
        fan_out([1, 2], _worker_state, (), got.__setitem__, 2, lambda item: (None, None, 0))
    assert got == {k: (signal.SIG_IGN, signal.SIG_DFL, signal.SIGKILL) for k in (1, 2)}


def _terminated_once(item: int, marker: str) -> int:
    if item == 1 and not os.path.exists(marker):
        Path(marker).touch()
        os.kill(os.getpid(), signal.SIGTERM)  # to this worker only (as `kill PID` of it)
        import time

        time.sleep(5)
    return item * 10


def test_a_worker_terminated_alone_has_its_job_run_again_not_the_command_stopped(tmp_path):
    from cuda_fatbin._jobs import signal_handlers

    got: dict[int, int] = {}
    with signal_handlers("scan"):
        fan_out([0, 1, 2], _terminated_once, (str(tmp_path / "once"),), got.__setitem__, 2, lambda item: -1)
    assert got == {0: 0, 1: 10, 2: 20} and _children() == set()


def test_what_this_process_buffered_before_the_workers_were_forked_is_written_once():
    code = ("import sys\nfrom cuda_fatbin import _forked\nfrom cuda_fatbin._jobs import fan_out\n"
            "_forked.usable = lambda: True\n"
            "def job(item):\n    print(f'[{item}]', end='', flush=True)\n    return item\n"
            "sys.stdout.write('before')\n"  # buffered: stdout is a pipe
            "fan_out([1, 2, 3], job, (), lambda item, result: None, 2, lambda item: None)\n")  # fmt: skip
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.count("before") == 1, res.stdout


def test_a_worker_that_fails_before_its_first_job_never_runs_the_callers_code():
    """Whatever a worker raises before it runs a job (here: a module it imports cannot be), it exits there and its jobs
    run again: the program that called fan_out goes on in this process only (once, not once per worker)."""
    code = ("import os, sys\nfrom cuda_fatbin import _forked\nfrom cuda_fatbin._jobs import fan_out\n"
            "_forked.usable = lambda: True\nparent = os.getpid()\n"
            "class NoPickleInAWorker:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'pickle' and os.getpid() != parent:\n"
            "            raise ImportError('not in a worker')\n"
            "sys.meta_path.insert(0, NoPickleInAWorker())\nsys.modules.pop('pickle', None)\n"
            "got = {}\n"
            "try:\n    fan_out([1, 2, 3], divmod, (7,), got.__setitem__, 2, lambda item: 'died')\n"
            "except BaseException as exc:\n    print('raised', type(exc).__name__, flush=True)\n"
            "print('went on', os.getpid(), sorted(got.items()), flush=True)\n")  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=120)
    # (this process imports pickle once a worker's pipe ends: the jobs run again alone in workers that have it)
    assert out == f"went on {proc.pid} [(1, (0, 1)), (2, (0, 2)), (3, (0, 3))]\n", (out, err)
    assert proc.returncode == 0


def test_a_worker_takes_no_signal_before_its_handlers_are_its_own(monkeypatch, tmp_path):
    """Ctrl-C reaches every process of the group, a worker just forked too: until the worker ignores SIGINT and
    takes SIGTERM's default, both stay held back in it (the command's handler would raise there, in the caller's
    code, before the worker's own)."""
    real = _forked._work
    seen = tmp_path / "mask"

    def work(*args, **kwargs):
        held = signal.pthread_sigmask(signal.SIG_BLOCK, [])
        seen.write_text(" ".join(str(int(s)) for s in sorted(held)))
        real(*args, **kwargs)

    monkeypatch.setattr(_forked, "_work", work)
    got: dict[int, tuple[object, object, int]] = {}
    fan_out([1, 2], _worker_state, (), got.__setitem__, 2, lambda item: (None, None, 0))
    held = {int(s) for s in seen.read_text().split()}
    assert {int(signal.SIGINT), int(signal.SIGTERM)} <= held
    assert got == {k: (signal.SIG_IGN, signal.SIG_DFL, signal.SIGKILL) for k in (1, 2)}  # unblocked once its own


_LOST = (
    TAKE_SIGTERM_IN_A_FINALIZER
    + """
import sys, time
from cuda_fatbin import _forked, _jobs

def held(item):
    time.sleep(120)  # both workers hold their job
    return item

feed = _forked._feed

def feeding(*args):  # in the loop that waits for the workers, once they run
    fed = feed(*args)
    take_the_signal_in_a_finalizer()
    return fed

_forked._feed = feeding
try:
    with _jobs.signal_handlers("scan"):
        _jobs.fan_out([0, 1], held, (), lambda item, result: None, 2, lambda item: None)
except _jobs.Terminated:
    sys.exit(143)
"""
)


def test_a_signal_whose_exception_a_finalizer_dropped_still_stops_the_command_and_its_workers():
    """SIGTERM taken while a finalizer runs: Python prints its exception and drops it. The loop waiting for the
    workers raises it again (``_jobs.check_interrupt``) rather than waiting for their work to end."""
    proc = subprocess.run([sys.executable, "-c", _LOST], capture_output=True, text=True, timeout=60)
    assert "Exception ignored" in proc.stderr  # the exception was lost where the test says
    assert proc.returncode == 143, proc.stderr
