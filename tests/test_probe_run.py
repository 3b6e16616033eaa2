# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The probe's runner on the CPU: what each case's processes are given (files, environment, JIT cache),
where the toolkit's nvcc is found, and what the report says about the machine.

A fake ``run_child`` stands in for the process that loads a fatbin on the GPU (tests/gpu runs the real
one); it records what it was handed.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
from pathlib import Path

import pytest

from cli_testing import process_running
from cuda_fatbin import _probe
from cuda_fatbin._probe import Case, Entry


class FakeChild:
    """Records, for each run, the fatbin's bytes, the environment's loading variables and whether the cache
    folder existed; answers from ``outcomes`` in turn."""

    def __init__(self, *outcomes: tuple[str, str]) -> None:
        self.outcomes = list(outcomes)
        self.runs: list[tuple[str, bytes, dict[str, str], bool]] = []

    def __call__(self, path: Path, env: dict[str, str], timeout: float = 0, children: object = None) -> tuple[str, str]:
        cuda = {k: v for k, v in env.items() if k in _probe._ENV_KEYS}  # the variables that change loading
        self.runs.append((path.name, path.read_bytes(), cuda, os.path.isdir(env["CUDA_CACHE_PATH"])))
        return self.outcomes.pop(0)


@pytest.fixture
def clean(monkeypatch):
    for key in _probe._ENV_KEYS:
        monkeypatch.delenv(key, raising=False)


CASE = (Entry("ptx", "sm_90", 1),)


def test_a_cold_case_runs_once_in_a_fresh_cache_with_its_variables(tmp_path, monkeypatch, clean):
    child = FakeChild(("TAG 1", "ran"))
    monkeypatch.setattr(_probe, "run_child", child)
    case = Case("c", "ptx_jit", CASE, env=(("CUDA_FORCE_PTX_JIT", "1"),))
    assert _probe.observe(case, b"fatbin", b"other", tmp_path, 7) == ("TAG 1", "ran")
    cache = str(tmp_path / "cache7")
    assert child.runs == [("case7.fatbin", b"fatbin", {"CUDA_CACHE_PATH": cache, "CUDA_FORCE_PTX_JIT": "1"}, True)]
    assert not os.path.exists(cache)  # removed after the case
    assert sorted(os.listdir(tmp_path)) == ["case7.fatbin"]


def test_a_warm_case_runs_the_same_fatbin_first_without_the_cases_variables(tmp_path, monkeypatch, clean):
    child = FakeChild(("TAG 1", "first"), ("ERROR CUDA_ERROR_NO_BINARY_FOR_GPU", "cuModuleLoadData"))
    monkeypatch.setattr(_probe, "run_child", child)
    case = Case("w", "ptx_jit", CASE, env=(("CUDA_DISABLE_PTX_JIT", "1"),), cache="warm")
    outcome = _probe.observe(case, b"fatbin", None, tmp_path, 0)
    assert outcome == ("ERROR CUDA_ERROR_NO_BINARY_FOR_GPU", "warm-up run: TAG 1; cuModuleLoadData")
    cache = str(tmp_path / "cache0")
    assert child.runs == [
        ("case0.fatbin", b"fatbin", {"CUDA_CACHE_PATH": cache}, True),
        ("case0.fatbin", b"fatbin", {"CUDA_CACHE_PATH": cache, "CUDA_DISABLE_PTX_JIT": "1"}, True),
    ]


def test_a_warm_other_case_warms_the_cache_with_the_other_ptx(tmp_path, monkeypatch, clean):
    child = FakeChild(("TAG 99", ""), ("TAG 1", "x"))
    monkeypatch.setattr(_probe, "run_child", child)
    case = Case("o", "ptx_jit", CASE, cache="warm-other")
    assert _probe.observe(case, b"fatbin", b"other ptx", tmp_path, 3) == ("TAG 1", "warm-up with other PTX: TAG 99; x")
    cache = str(tmp_path / "cache3")
    assert child.runs == [
        ("other3.fatbin", b"other ptx", {"CUDA_CACHE_PATH": cache}, True),
        ("case3.fatbin", b"fatbin", {"CUDA_CACHE_PATH": cache}, True),
    ]
    child = FakeChild(("TAG 1", ""))  # no other PTX to warm with: the case alone
    monkeypatch.setattr(_probe, "run_child", child)
    assert _probe.observe(case, b"fatbin", None, tmp_path, 4) == ("TAG 1", "")
    assert [r[0] for r in child.runs] == ["case4.fatbin"]


def test_the_childs_environment_drops_every_variable_that_changes_loading(monkeypatch):
    for key in _probe._ENV_KEYS:
        monkeypatch.setenv(key, "1")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")  # which GPU: kept
    env = _probe._clean_env("/c")
    cuda = {k: v for k, v in env.items() if k in (*_probe._ENV_KEYS, "CUDA_VISIBLE_DEVICES")}
    assert cuda == {"CUDA_CACHE_PATH": "/c", "CUDA_VISIBLE_DEVICES": "0"}
    assert env["PATH"] == os.environ["PATH"]


def _nvcc(root: Path) -> str:
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "nvcc").write_text("")
    return str(root / "bin" / "nvcc")


def test_the_toolkits_nvcc_is_found_in_cuda_home_then_cuda_path_then_usr_local(tmp_path, monkeypatch):
    home, path = _nvcc(tmp_path / "home"), _nvcc(tmp_path / "path")
    (tmp_path / "empty").mkdir()
    (tmp_path / "folder" / "bin" / "nvcc").mkdir(parents=True)  # a folder named nvcc: not a program
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CUDA_PATH", str(tmp_path / "path"))
    assert _probe._toolkit_nvcc() == home
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "empty"))
    assert _probe._toolkit_nvcc() == path
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "folder"))
    monkeypatch.delenv("CUDA_PATH")
    usual = "/usr/local/cuda/bin/nvcc"
    assert _probe._toolkit_nvcc() == (usual if os.path.isfile(usual) else None)
    monkeypatch.delenv("CUDA_HOME")
    assert _probe._toolkit_nvcc() == (usual if os.path.isfile(usual) else None)


def test_the_builder_takes_nvcc_from_path_then_the_toolkit(tmp_path, monkeypatch):
    monkeypatch.setattr(_probe.shutil, "which", lambda name: f"/on/path/{name}")
    assert _probe.Builder().nvcc == "/on/path/nvcc"
    assert _probe.Builder(nvcc="/mine").nvcc == "/mine" and _probe.Builder(ptx_isa="8.8").ptx_isa == "8.8"
    monkeypatch.setattr(_probe.shutil, "which", lambda name: None)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    nvcc = _nvcc(tmp_path)
    assert _probe.Builder().nvcc == nvcc
    assert _probe.Builder().ptx_isa is None


def test_the_report_names_every_version_and_what_could_not_be_asked(monkeypatch):
    from cuda_fatbin import __version__

    got = _probe._versions()
    assert list(got) == ["python", "cuda-fatbin", "cuda-core", "cuda-bindings", "nvrtc", "libnvfatbin"]
    assert got["python"] == sys.version.split()[0] and got["cuda-fatbin"] == __version__
    assert got["cuda-core"] == importlib.metadata.version("cuda-core")
    assert got["cuda-bindings"] == importlib.metadata.version("cuda-bindings")
    from cuda.bindings import nvrtc

    from cuda_fatbin._fatbin import nvfatbin_version

    assert got["nvrtc"] == "{}.{}".format(*nvrtc.nvrtcVersion()[1:])
    assert got["libnvfatbin"] == "{}.{}".format(*nvfatbin_version())

    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    def broken() -> None:
        raise RuntimeError("no library")

    monkeypatch.setattr(importlib.metadata, "version", missing)
    monkeypatch.setattr(nvrtc, "nvrtcVersion", broken)
    monkeypatch.setattr("cuda_fatbin._fatbin.nvfatbin_version", lambda: 1 / 0)
    got = _probe._versions()
    assert got["cuda-core"] == got["cuda-bindings"] == "not installed"
    assert got["nvrtc"] == "not available (RuntimeError)"
    assert got["libnvfatbin"] == "not available (ZeroDivisionError)"


@pytest.fixture
def fake_gpu(monkeypatch):
    """GPU 0 a 9.0 with a CUDA 12.8 driver (GPU 1 another, never probed), NVRTC targeting three SMs."""
    from cuda_fatbin import _arch, _driver, _multiarch  # noqa: F401  (_multiarch binds the real function first)

    gpus = (_driver.DeviceInfo(0, "Fake GPU", (9, 0), 12080), _driver.DeviceInfo(1, "Other", (8, 0), 12080))
    monkeypatch.setattr(_driver, "devices", lambda *a, **k: gpus)
    monkeypatch.setattr(_arch, "nvrtc_supported_sms", lambda: (80, 89, 90))


def test_each_case_is_built_predicted_observed_and_reported(fake_gpu, monkeypatch, tmp_path):
    import datetime
    import re

    from cuda_fatbin._arch import Arch

    select = ["disable: ptx lower", "single cubin exact"]
    seen: list[tuple[str, bytes, bytes | None, Path, int]] = []
    progress: list[tuple[int, int, str]] = []

    def fake_observe(case, data, other, workdir, index, children=None):
        seen.append((case.name, data, other, workdir, index))
        assert workdir.is_dir() and workdir.name.startswith("cuda-fatbin-probe-")
        if "[warm-other]" in case.name:
            return "TAG 5", "obs"  # the model says TAG 1: a disagreement
        return ("TAG 1" if "exact" in case.name else "ERROR CUDA_ERROR_NO_BINARY_FOR_GPU"), ""

    monkeypatch.setattr(_probe, "observe", fake_observe)
    before = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    report = _probe.probe(select=select, jobs=3, progress=lambda *a: progress.append(a))
    cases = [
        c for c in _probe.matrix(Arch(9, 0), (80, 89, 90), driver_cuda=(12, 8)) if any(n in c.name for n in select)
    ]
    assert [r.case for r in report.results] == cases and len(cases) == 8
    assert (report.gpu_name, report.capability, report.driver, report.jobs, report.archs) == (
        "Fake GPU", "9.0", 12080, 3, (80, 89, 90)
    )  # fmt: skip
    assert report.versions == _probe._versions()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", report.started)
    started = datetime.datetime.strptime(report.started, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    assert before <= started <= datetime.datetime.now(datetime.timezone.utc)
    assert 0 <= report.seconds < 600
    builder = _probe.Builder()
    ran = [r for r in report.results if r.not_observable is None]
    assert [s[0] for s in seen] == [r.case.name for r in ran]  # in order (one worker per case, three at once)
    assert sorted(s[4] for s in seen) == list(range(len(ran))) and len({s[3] for s in seen}) == 1
    assert not seen[0][3].exists()  # the work folder is gone after the run
    for r, (name, data, other, _, _) in zip(ran, seen):
        assert r.observed == (
            "TAG 5" if "[warm-other]" in name else "TAG 1" if "exact" in name else "ERROR CUDA_ERROR_NO_BINARY_FOR_GPU"
        )
        assert data == _probe.build_case(r.case, builder)
        if r.case.cache == "warm-other":  # other PTX for the same arch, tag 99
            ptx = next(e for e in r.case.entries if e.kind == "ptx")
            assert other == _probe.build_case(Case("other", "", (Entry("ptx", ptx.arch, 99),)), builder)
        else:
            assert other is None
        predicted, sel, note = _probe.predict(r.case, data, "9.0", 12080)
        assert (r.predicted, r.reason, r.rules) == (predicted, sel.reason, sel.rules)
        assert r.agree is ("[warm-other]" not in r.case.name)  # the fake disagrees there only
        assert r.detail == "; ".join(x for x in (note, "obs" if "[warm-other]" in r.case.name else "") if x)
    by_name = {r.case.name: r for r in report.results}
    assert by_name["single cubin exact f (not observable: no arch sm_90f)"].not_observable == "no arch sm_90f"
    assert [r.case.name for r in report.disagreements] == [c.name for c in cases if "[warm-other]" in c.name]
    assert not report.ok
    assert [p[:2] for p in progress] == [(i, len(ran)) for i in range(1, len(ran) + 1)]
    assert sorted(p[2] for p in progress) == sorted(r.case.name for r in ran)


def test_limit_and_the_number_of_workers(fake_gpu, monkeypatch):
    monkeypatch.setattr(_probe, "observe", lambda *a: ("TAG 1", ""))
    report = _probe.probe(select=["single cubin exact"], limit=2)
    assert [r.case.name for r in report.results] == [
        "single cubin exact: sm_90 [cold]",
        "single cubin exact: sm_90 [warm]",
    ]
    assert report.ok and report.jobs == os.cpu_count()
    monkeypatch.setattr(_probe.os, "cpu_count", lambda: None)
    assert _probe.probe(select=["single cubin exact"], limit=1, jobs=0).jobs == 1
    monkeypatch.setattr(_probe.os, "cpu_count", lambda: 5)
    assert _probe.probe(select=["single cubin exact"], limit=0).jobs == 5
    assert _probe.probe(select=["single cubin exact"], limit=0).results == []


def test_without_a_gpu_the_probe_says_what_to_do(monkeypatch):
    from cuda_fatbin import NoDriverError, _driver

    monkeypatch.setattr(_driver, "_probe", lambda: ((), "no CUDA driver library (libcuda.so.1: not found)"))
    with pytest.raises(NoDriverError) as e:
        _probe.probe()
    assert str(e.value) == (
        "cuda-fatbin probe needs a GPU and its driver: no CUDA driver library (libcuda.so.1: not found); "
        "run it on a machine with a GPU"
    )


def test_the_cases_follow_the_drivers_cuda_version_and_the_start_is_utc(fake_gpu, monkeypatch):
    import time

    monkeypatch.setenv("TZ", "Asia/Kolkata")  # UTC+5:30: a local time would be hours off
    time.tzset()
    try:
        monkeypatch.setattr(_probe, "observe", lambda *a: ("TAG 1", ""))
        report = _probe.probe(select=["ISA"])
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    names = [r.case.name for r in report.results]
    assert names == [c.name for c in _probe.matrix("9.0", (80, 89, 90), driver_cuda=(12, 8)) if "ISA" in c.name]
    assert "ptx exact ISA 8.8 alone [cold]" in names  # the ISA of CUDA 12.8: the driver's, not one unknown
    import datetime

    started = datetime.datetime.strptime(report.started, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    assert abs((datetime.datetime.now(datetime.timezone.utc) - started).total_seconds()) < 600


def test_a_case_that_cannot_be_built_is_reported_and_the_rest_run(fake_gpu, monkeypatch):
    real = _probe.build_case
    first = _probe.matrix("9.0", (80, 89, 90), driver_cuda=(12, 8))[0]

    def build(case, builder):
        if case == first:
            raise _probe.NotObservable("no tool for it here")
        return real(case, builder)

    monkeypatch.setattr(_probe, "build_case", build)
    monkeypatch.setattr(_probe, "observe", lambda *a: ("TAG 1", ""))
    report = _probe.probe(select=[first.name, "single cubin exact a"])
    assert (report.results[0].case.name, report.results[0].not_observable) == (first.name, "no tool for it here")
    assert len(report.run) == 2 and [r.observed for r in report.run] == ["TAG 1", "TAG 1"]


def test_the_models_note_and_the_observation_are_both_kept(fake_gpu, monkeypatch):
    real = _probe.predict
    monkeypatch.setattr(_probe, "predict", lambda *a: (*real(*a)[:2], "a note"))
    monkeypatch.setattr(_probe, "observe", lambda *a: ("TAG 1", "warm-up run: TAG 1"))
    report = _probe.probe(select=["single cubin exact: sm_90 [cold]"])
    assert [r.detail for r in report.results] == ["a note; warm-up run: TAG 1"]


@pytest.mark.parametrize("jobs", [1, 2])
def test_at_most_jobs_cases_run_at_once(fake_gpu, monkeypatch, jobs):
    import threading
    import time

    active, peak, lock = [0], [0], threading.Lock()

    def slow(*a):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.2)
        with lock:
            active[0] -= 1
        return "TAG 1", ""

    monkeypatch.setattr(_probe, "observe", slow)
    _probe.probe(select=["single cubin exact"], limit=4, jobs=jobs)
    assert peak[0] == jobs


def test_the_report_as_a_document(fake_gpu, monkeypatch):
    monkeypatch.setattr(_probe, "observe", lambda *a: ("TAG 1", ""))
    report = _probe.probe(select=["single cubin exact"], jobs=2)
    report.seconds = 12.345
    doc = report.to_dict()
    assert {k: v for k, v in doc.items() if k not in ("versions", "started", "cases")} == {
        "schema": 1, "gpu": {"name": "Fake GPU", "capability": "9.0"}, "driver": 12080, "seconds": 12.3,
        "jobs": 2, "nvrtc_archs": [80, 89, 90], "cases_run": 4, "disagreements": 0, "not_observable": 1,
    }  # fmt: skip
    assert doc["cases"] == [r.to_dict() for r in report.results]


def _child(monkeypatch, code: str) -> None:
    monkeypatch.setattr(_probe, "_CHILD", code)


def test_the_child_runs_isolated_with_the_given_environment_and_file(tmp_path, monkeypatch):
    path = tmp_path / "x.fatbin"
    path.write_bytes(b"12345")
    _child(
        monkeypatch,
        "import os, sys; print('TAG', sys.flags.isolated, os.environ.get('X'), len(open(sys.argv[1], 'rb').read()))",
    )
    monkeypatch.setenv("X", "from the parent")
    assert _probe.run_child(path, {"X": "given", "PATH": os.environ["PATH"]}) == ("TAG 1", "given 5")


def test_what_the_child_said_or_how_it_died(tmp_path, monkeypatch):
    path = tmp_path / "x.fatbin"
    path.write_bytes(b"")
    _child(monkeypatch, "print('noise'); print('TAG 3'); print('ERROR CUDA_ERROR_LAUNCH_FAILED cuLaunchKernel  now')")
    assert _probe.run_child(path, {}) == ("ERROR CUDA_ERROR_LAUNCH_FAILED", "cuLaunchKernel now")
    _child(monkeypatch, "print('noise'); print('TAG 3')")
    assert _probe.run_child(path, {}) == ("TAG 3", "")
    _child(monkeypatch, "import os; os.kill(os.getpid(), 40)")  # a real-time signal: no name in signal.Signals
    assert _probe.run_child(path, {}) == ("CRASH signal 40", "the process loading the fatbin died")
    _child(monkeypatch, "import sys; sys.stderr.write('first\\n' + 'e' * 300 + '\\n'); sys.exit(3)")
    assert _probe.run_child(path, {}) == ("CRASH exit", "exit 3: " + "e" * 200)
    _child(monkeypatch, "import sys; sys.exit(4)")
    assert _probe.run_child(path, {}) == ("CRASH exit", "exit 4: ")


def test_a_cache_folder_already_gone_is_no_error(tmp_path, monkeypatch, clean):
    import shutil

    def child(path, env, timeout=0, children=None):
        shutil.rmtree(env["CUDA_CACHE_PATH"])  # the driver (or anyone) removed it
        return "TAG 1", ""

    monkeypatch.setattr(_probe, "run_child", child)
    assert _probe.observe(Case("c", "r", CASE), b"x", None, tmp_path, 0) == ("TAG 1", "")


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_a_stopped_probe_kills_its_running_cases_instead_of_awaiting_them(fake_gpu, monkeypatch, tmp_path, capsys,
                                                                          signum):  # fmt: skip
    """Ctrl-C or SIGTERM while cases run (a driver JIT may take minutes), under the command line's handlers:
    the probe ends at once, its case processes killed and reaped, its folder of fatbins removed, no queued
    case started, and no "waiting for running cases" said."""
    import signal
    import tempfile
    import threading
    import time

    from cuda_fatbin._jobs import signal_handlers

    started, scratch = tmp_path / "started", tmp_path / "tmp"
    started.mkdir()
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setattr(_probe, "build_case", lambda case, builder: b"fatbin")
    monkeypatch.setattr(_probe, "predict", lambda *a: ("TAG 1", None, ""))
    # each case process says it started, then hangs as a long JIT would
    hang = f"import os, time\nopen(os.path.join({str(started)!r}, str(os.getpid())), 'w').close()\ntime.sleep(600)\n"
    monkeypatch.setattr(_probe, "_CHILD", hang)
    main = threading.get_ident()

    def interrupt_once_two_run() -> None:
        deadline = time.monotonic() + 60
        while len(os.listdir(started)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        signal.pthread_kill(main, getattr(signal, signum))

    threading.Thread(target=interrupt_once_two_run, daemon=True).start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt), signal_handlers("probe"):  # SIGTERM: Terminated, a KeyboardInterrupt
        _probe.probe(select=["single cubin exact"], jobs=2)
    assert "waiting" not in capsys.readouterr().err
    assert time.monotonic() - t0 < 30  # a case process sleeps 600 s: awaiting even one would fail this
    pids = [int(name) for name in os.listdir(started)]
    assert len(pids) == 2  # the two running cases; the queued ones never started
    for pid in pids:
        with pytest.raises(ProcessLookupError):  # killed and reaped (no zombie left either)
            os.kill(pid, 0)
    assert os.listdir(scratch) == []  # the case files and JIT caches are gone


def test_a_stopped_set_of_children_starts_no_new_one(tmp_path):
    children = _probe._Children()
    children.stop()
    with pytest.raises(_probe._Stopped):
        _probe.run_child(tmp_path / "x.fatbin", dict(os.environ), children=children)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups, /proc")
@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_a_stopped_probe_leaves_no_process_of_the_nvcc_building_a_case(tmp_path, signum):
    """Ctrl-C or SIGTERM sent to the probe alone while nvcc builds a relocatable case: nvcc and the tools it
    started (cicc, ptxas, the host compiler) end with it, not only nvcc's own process."""
    import signal
    import threading
    import time

    from cuda_fatbin._jobs import signal_handlers

    pidfile = tmp_path / "tool.pid"
    nvcc = tmp_path / "nvcc"
    nvcc.write_text(f"#!/bin/sh\nsleep 600 &\necho $! > {pidfile}\nwait\n")  # a tool that runs long, as cicc may
    nvcc.chmod(0o755)
    main = threading.get_ident()

    def interrupt_once_the_tool_runs() -> None:
        deadline = time.monotonic() + 60
        while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.01)
        signal.pthread_kill(main, getattr(signal, signum))

    threading.Thread(target=interrupt_once_the_tool_runs, daemon=True).start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt), signal_handlers("probe"):
        _probe.Builder(nvcc=str(nvcc)).artifact("reloc", "sm_90", 1)
    assert time.monotonic() - t0 < 30
    tool = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while process_running(tool) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not process_running(tool), "nvcc's tool outlives the stopped probe"



@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG")
def test_a_case_process_dies_with_the_probe(tmp_path, monkeypatch):
    """Each case process asks the kernel to kill it when the probe dies (SIGKILL included): its parent-death signal,
    read back in the process itself, is SIGKILL."""
    import signal

    read_back = (
        "import ctypes\nv = ctypes.c_int()\n"
        "ctypes.CDLL(None).prctl(2, ctypes.byref(v), 0, 0, 0)\nprint('TAG', v.value)\n"
    )
    monkeypatch.setattr(_probe, "_CHILD", read_back)  # PR_GET_PDEATHSIG
    path = tmp_path / "case.fatbin"
    path.write_bytes(b"")
    assert _probe.run_child(path, dict(os.environ)) == (f"TAG {int(signal.SIGKILL)}", "")
