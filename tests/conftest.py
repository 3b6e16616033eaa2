# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Fixtures: artifacts compiled once per session, and the cuobjdump oracle."""

from __future__ import annotations

import re
import subprocess

import pytest

from fatbin_testing import (
    ARCH_SPECS,
    KERNEL_SRC,
    Artifacts,
    find_cuobjdump,
    nvrtc_compile,
    nvrtc_supported_sms,
)


@pytest.fixture(autouse=True)
def _own_working_folder(tmp_path_factory, monkeypatch):
    """Each test runs in an empty working folder of its own: a file that code under test writes there by mistake
    stays with that test, and no test reads what another left in the folder it was started in (a file named "-"
    written by mistake would be read by later tests of `extract_entries("-")` instead of standard input)."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


@pytest.fixture(scope="session")
def supported_specs() -> list[str]:
    sms = set(nvrtc_supported_sms())
    return [s for s in ARCH_SPECS if int(re.sub(r"\D", "", s)) in sms]


@pytest.fixture(scope="session")
def artifacts(supported_specs) -> dict[tuple[str, str], bytes]:
    """{(kind, spec): bytes} for kind in cubin/ptx/ltoir and every supported spec; compiled once."""
    out = Artifacts()
    for spec in supported_specs:
        bare = spec[3:]
        out[("cubin", spec)] = nvrtc_compile(KERNEL_SRC, bare, "cubin")
        out[("ptx", spec)] = nvrtc_compile(KERNEL_SRC, bare, "ptx")
    for spec in ("sm_80", "sm_90a", "sm_100f", "sm_120"):
        if spec in supported_specs:
            out[("ltoir", spec)] = nvrtc_compile(KERNEL_SRC, spec[3:], "ltoir")
    return out


@pytest.fixture(scope="session")
def cubin80(artifacts) -> bytes:
    return artifacts[("cubin", "sm_80")]


@pytest.fixture(scope="session")
def ptx80(artifacts) -> bytes:
    return artifacts[("ptx", "sm_80")]


@pytest.fixture(scope="session")
def cuobjdump_path() -> str:
    path = find_cuobjdump()
    if path is None:
        pytest.fail("cuobjdump not found: install the test extra (pip install -e '.[test]')")
    return path


@pytest.fixture(scope="session")
def cuobjdump(cuobjdump_path, tmp_path_factory):
    """Run cuobjdump on bytes: returns stdout. ``cuobjdump(data, "-lelf", "-lptx")``."""
    tmp = tmp_path_factory.mktemp("cuobjdump")
    counter = iter(range(10**9))

    def run(data: bytes, *args: str) -> str:
        path = tmp / f"in{next(counter)}.bin"
        path.write_bytes(data)
        res = subprocess.run([cuobjdump_path, *args, str(path)], capture_output=True, text=True, timeout=60)
        path.unlink()
        if res.returncode != 0:
            raise AssertionError(f"cuobjdump {' '.join(args)} failed: {res.stderr}")
        return res.stdout

    return run


@pytest.fixture(scope="session")
def needs_nvcc() -> str:
    """nvcc, an oracle for tests of fatbins it makes: skipped without it, except in CI where it must be there."""
    import os
    import shutil

    path = shutil.which("nvcc")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("nvcc is not on PATH in CI")
        pytest.skip("nvcc not on PATH: the tests of nvcc-made files need it")
    return path


def _signals_as_in_a_terminal() -> None:
    """A suite started in the background of a script (``pytest &``) inherits SIGINT ignored, and the commands
    under test rightly keep an ignored signal ignored: give the suite, and the processes it starts, the
    handling of a terminal's foreground job, so that its Ctrl-C tests test Ctrl-C."""
    import signal

    for signum, handler in ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, signal.SIG_DFL)):
        if signal.getsignal(signum) is signal.SIG_IGN:
            signal.signal(signum, handler)


_signals_as_in_a_terminal()
