# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Ctrl-C during a many-arch compile (issue #26): the first stops the queued jobs and says what it waits
for, the second exits at once with 130; never a traceback, an abort or a partial output file.

Each try runs the command in a subprocess. ``CUDA_FATBIN_SIGINT_TRIES`` sets how many (the issue's check
is 20; the default keeps the suite short).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_testing import process_running

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to see the pool start")

TRIES = int(os.environ.get("CUDA_FATBIN_SIGINT_TRIES", "2"))
# Slow enough per job (libcu++ and cooperative groups) that jobs are running when the signal comes.
SRC = r"""
#include <cuda/std/complex>
#include <cooperative_groups.h>
extern "C" __global__ void k(float* out) {
    cuda::std::complex<double> c(1.0, 2.0);
    out[0] = (float)cuda::std::abs(cuda::std::exp(c));
}
"""


def _threads(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


@pytest.mark.parametrize("attempt", range(TRIES))
def test_two_ctrl_c_stop_a_many_arch_compile_at_once(tmp_path, attempt):
    src = tmp_path / "k.cu"
    src.write_text(SRC)
    out = tmp_path / "k.fatbin"
    proc = subprocess.Popen([sys.executable, "-m", "cuda_fatbin", "compile", str(src), "--arch", "all", "-o", str(out),
                             "-j", "4"], stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while _threads(proc.pid) < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)  # the pool's threads: the compile has begun
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        assert proc.stderr is not None
        line = proc.stderr.readline()  # said at once, before the running jobs end
        assert "waiting for" in line and "Ctrl-C again to quit now" in line, line
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=10)
        elapsed = time.monotonic() - t0
        rest = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert rc == 130, (rc, rest)
    # generous: os._exit waits for the kernel to stop the running compiler threads (2.95 s was seen at a load
    # of 3 on 2 cores); waiting for the running jobs would take the compile time of the pool's jobs, far longer
    assert elapsed < 10.0, elapsed
    assert "Traceback" not in rest and "Aborted" not in rest, rest
    assert not out.exists() and list(tmp_path.iterdir()) == [src]  # no output, no temporary file left


def test_one_ctrl_c_waits_for_the_running_jobs_and_exits_130(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text(SRC)
    out = tmp_path / "k.fatbin"
    proc = subprocess.Popen([sys.executable, "-m", "cuda_fatbin", "compile", str(src), "--arch", "all", "-o", str(out),
                             "-j", "2"], stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while _threads(proc.pid) < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "waiting for" in err and "Traceback" not in err, err
    assert not out.exists()


POOL_SCRIPT = """
import concurrent.futures as cf, sys
from cuda_fatbin import Program
src = open(sys.argv[1]).read()
def progress(done, total, job):
    print("progress", flush=True)
try:
    with cf.ProcessPoolExecutor(2) as pool:
        Program(src, "c++").compile("fatbin", archs="all", executor=pool, progress=progress)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""


def test_ctrl_c_terminates_the_running_jobs_of_a_process_pool(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text(SRC)
    proc = subprocess.Popen([sys.executable, "-c", POOL_SCRIPT, str(src)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "progress"  # one job done: the others are running
        proc.send_signal(signal.SIGINT)  # to the parent only, as a terminal's Ctrl-C is not (the workers live on)
        t0 = time.monotonic()
        rc = proc.wait(timeout=60)
        elapsed = time.monotonic() - t0
        out = proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert rc == 130 and "interrupted" in out, (rc, out, proc.stderr.read() if proc.stderr else "")
    assert elapsed < 2.0, elapsed  # not the 14 jobs' compile time: the running ones were terminated


def test_sigterm_during_a_compile_exits_143_at_once(tmp_path):
    """SIGTERM means now: the running compiles (threads) are not awaited, no output and no temporary file."""
    src = tmp_path / "k.cu"
    src.write_text(SRC)
    out = tmp_path / "k.fatbin"
    proc = subprocess.Popen([sys.executable, "-m", "cuda_fatbin", "compile", str(src), "--arch", "all", "-o", str(out),
                             "-j", "2"], stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while _threads(proc.pid) < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        t0 = time.monotonic()
        _, err = proc.communicate(timeout=60)
        elapsed = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143 and "Traceback" not in err, err
    # generous: the handler runs when the main thread next runs Python code (10 s was exceeded once at a load
    # of 8 on 2 cores); the 14 jobs' compile time is far longer
    assert elapsed < 30, elapsed
    assert list(tmp_path.iterdir()) == [src]


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found |= {int(x) for x in f.read().split()}
        except OSError:
            pass
    return found



@pytest.fixture(scope="module")
def many_binaries(tmp_path_factory):
    folder = tmp_path_factory.mktemp("many")
    data = (Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin").read_bytes()
    for i in range(4000):
        (folder / f"k{i}.cubin").write_bytes(data)
    return folder


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGKILL, -9)])
def test_a_signal_mid_scan_stops_it_and_no_worker_outlives_it(many_binaries, sig, code):
    """Ctrl-C or SIGTERM: scan's workers are killed and the queued files dropped (exit 130/143 at once, not
    after every file); SIGKILL of the main process: the workers die with it (PR_SET_PDEATHSIG)."""
    proc = subprocess.Popen([sys.executable, "-m", "cuda_fatbin", "scan", str(many_binaries), "--gpu", "80", "-j", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while len(_children(proc.pid)) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        workers = _children(proc.pid)
        assert proc.poll() is None and len(workers) == 2, workers
        proc.send_signal(sig)
        t0 = time.monotonic()
        _, err = proc.communicate(timeout=60)
        elapsed = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code and "Traceback" not in err, (proc.returncode, err)
    assert elapsed < 10, elapsed
    deadline = time.monotonic() + 30
    while any(process_running(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [w for w in workers if process_running(w)]


def test_sigterm_while_extract_writes_leaves_no_temporary_file(tmp_path, monkeypatch):
    """SIGTERM in the middle of a write (here: while the file is flushed to disk): the temporary file is removed,
    the command exits 143 (docs/security.md: writes are atomic)."""
    from cuda_fatbin import _cli

    data = (Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin").read_bytes()
    src = tmp_path / "k.cubin"
    src.write_bytes(data)
    out = tmp_path / "out"
    out.mkdir()
    fsync = os.fsync
    sent: list[int] = []

    def terminate_once(fd: int) -> None:
        if not sent:
            sent.append(fd)
            os.kill(os.getpid(), signal.SIGTERM)  # the handler raises in this (the main) thread, here
        fsync(fd)

    monkeypatch.setattr(os, "fsync", terminate_once)
    assert _cli.main(["extract", str(src), "-o", str(out)]) == 143
    assert sent and list(out.iterdir()) == []
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
