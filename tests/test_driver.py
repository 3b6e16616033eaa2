# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The driver probe (cuda_fatbin._driver) against a fake ``libcuda`` built here from tests/data/fake_libcuda.c.

The probe is the one place that talks to the driver before cuda.core does; on a machine without a GPU
the real library is absent, so these tests give it a stand-in whose answers the environment chooses:
no library, a library without the driver API, ``cuInit`` failing, zero devices, one device query
failing, several devices. Driver API return codes: 0 is ``CUDA_SUCCESS`` (CUDA Driver API reference,
"Error Handling"); attributes 75 and 76 are ``CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR``/``_MINOR``
(``cuda.h``).
"""

from __future__ import annotations

import ctypes.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cuda_fatbin import _driver
from cuda_fatbin._driver import DeviceInfo, NoDriverError

from fatbin_testing import DATA

ENV = ("FAKE_CUDA_INIT", "FAKE_CUDA_COUNT", "FAKE_CUDA_FAIL", "FAKE_CUDA_FAIL_AT", "FAKE_CUDA_NAME")


@pytest.fixture(scope="module")
def fake_libcuda(tmp_path_factory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the fake libcuda")
    out = tmp_path_factory.mktemp("fake_libcuda") / "libcuda.so.1"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(out), str(DATA / "fake_libcuda.c")], check=True,
                   capture_output=True, timeout=120)  # fmt: skip
    return out


@pytest.fixture
def probe(fake_libcuda, monkeypatch):
    """Point the probe at the fake library; returns a function that sets its answers and probes afresh."""
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(_driver, "_LIBRARY", str(fake_libcuda))

    def run(**env: str):
        for key, value in env.items():
            monkeypatch.setenv(f"FAKE_CUDA_{key.upper()}", value)
        _driver._probe.cache_clear()
        return _driver._probe()

    yield run
    _driver._probe.cache_clear()


def test_one_device(probe):
    assert probe() == ((DeviceInfo(0, "Fake GPU 0", (8, 0), 12080),), None)
    assert _driver.driver_available()
    assert _driver.devices() == (DeviceInfo(0, "Fake GPU 0", (8, 0), 12080),)


def test_several_devices_in_ordinal_order(probe):
    found, error = probe(count="3")
    assert error is None
    assert found == tuple(DeviceInfo(i, f"Fake GPU {i}", (8 + i, i), 12080) for i in range(3))


def test_a_name_that_is_not_utf8_is_shown_with_replacement_characters(probe):
    os.environb[b"FAKE_CUDA_NAME"] = b"GPU \xff"
    try:
        found, error = probe()
    finally:
        del os.environb[b"FAKE_CUDA_NAME"]
    assert error is None and found[0].name == "GPU \ufffd"


def test_a_name_filling_the_buffer_is_cut_at_255_bytes(probe):
    found, _ = probe(name="n" * 400)
    assert found[0].name == "n" * 255


def test_zero_devices(probe):
    assert probe(count="0") == ((), "the CUDA driver sees no GPU")
    assert not _driver.driver_available()
    with pytest.raises(NoDriverError, match=r"^compiling for 'native' needs a GPU and its driver: the CUDA driver "
                       r"sees no GPU; pass archs=\[\.\.\.\]$"):  # fmt: skip
        _driver.devices("compiling for 'native'", "pass archs=[...]")


def test_cuinit_failing(probe):
    assert probe(init="100") == ((), "the CUDA driver did not initialise (cuInit returned CUDA error 100)")
    with pytest.raises(NoDriverError, match=r"^this needs a GPU and its driver: the CUDA driver did not initialise "
                       r"\(cuInit returned CUDA error 100\)$"):  # fmt: skip
        _driver.devices()


@pytest.mark.parametrize("call", ["version", "count"])
def test_driver_queries_failing(probe, call):
    assert probe(fail=call) == ((), "the CUDA driver did not answer cuDriverGetVersion/cuDeviceGetCount")


@pytest.mark.parametrize("call", ["get", "major", "minor"])
@pytest.mark.parametrize("at", [0, 1])
def test_a_device_query_failing_is_no_driver_not_a_partial_list(probe, call, at):
    """One device the driver cannot describe: no answer (not the others, not a made-up capability)."""
    assert probe(count="2", fail=call, fail_at=str(at)) == ((), f"the CUDA driver did not describe device {at}")
    assert not _driver.driver_available()


def test_no_library(probe, monkeypatch, tmp_path):
    missing = tmp_path / "libcuda.so.1"
    monkeypatch.setattr(_driver, "_LIBRARY", str(missing))
    found, error = probe()
    assert found == () and error.startswith(f"no CUDA driver library ({missing}: ")
    assert error.count(str(missing)) == 1, error  # the loader's message names the library: not twice
    with pytest.raises(NoDriverError, match=r"^this needs a GPU and its driver: no CUDA driver library"):
        _driver.devices()


def test_a_loader_message_without_the_library_name_gets_it(probe, monkeypatch):
    def refuse(name: str) -> None:
        raise OSError("cannot open shared object file: No such file or directory")

    monkeypatch.setattr(ctypes, "CDLL", refuse)
    assert probe() == (
        (),
        f"no CUDA driver library ({_driver._LIBRARY}: cannot open shared object file: No such file or directory)",
    )


def test_a_library_without_the_driver_api(probe, monkeypatch):
    libc = ctypes.util.find_library("c")
    if libc is None:
        pytest.skip("no libc to stand in for a library without the driver API")
    monkeypatch.setattr(_driver, "_LIBRARY", libc)
    found, error = probe()
    assert found == () and error.startswith(f"{libc} lacks the driver API (") and "cuInit" in error


def test_the_answer_is_asked_once_per_process(probe, monkeypatch):
    assert probe(count="2")[0][1].index == 1
    monkeypatch.setenv("FAKE_CUDA_COUNT", "0")  # the driver's answer changes: the cached one stands
    assert len(_driver.devices()) == 2 and _driver.driver_available()


@pytest.mark.parametrize("command", ["which", "scan"])
@pytest.mark.parametrize(
    ("flag", "instead"),
    [("--gpu", "name the GPUs, e.g. --gpu 90"), ("--driver", "name the driver instead, e.g. --driver 13.0")],
)
@pytest.mark.parametrize(
    ("answers", "why"),
    [
        ({"count": "0"}, "the CUDA driver sees no GPU"),
        ({"init": "100"}, "the CUDA driver did not initialise (cuInit returned CUDA error 100)"),
        ({"fail": "version"}, "the CUDA driver did not answer cuDriverGetVersion/cuDeviceGetCount"),
    ],
)
def test_installed_without_a_usable_driver_is_a_usage_error(probe, tmp_path, command, flag, instead, answers, why):
    """``--gpu installed`` and ``--driver installed`` ask this machine for what it cannot give: exit 2 with a line
    that says what to name instead, the same for both options in every command that takes them (docs/cli.md)."""
    from cli_testing import cli_main

    probe(**answers)
    (tmp_path / "k.fatbin").write_bytes(b"\0" * 16)
    args = ["--gpu", "installed"] if flag == "--gpu" else ["--gpu", "80", "--driver", "installed"]
    res = cli_main(command, tmp_path / "k.fatbin", *args, check=2)
    assert res.stdout == ""
    needs = f"{flag} installed needs a GPU and its driver"
    assert res.stderr == f"cuda-fatbin {command}: error: {needs}: {why}; {instead}\n"
