# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The cuda-fatbin command run in this process, through ``main([...])``.

Subprocess runs (tests/test_cli.py, tests/test_cli_entry.py) check the command as users run it. Other tests of
CLI behaviour call :func:`cli_main`, which runs ``main`` here with its own stdout and stderr (bytes, not a
terminal) and returns what a subprocess run would: no interpreter start per call, and the code it runs is the
code coverage and mutation tools see.
"""

from __future__ import annotations

import contextlib
import io
import os
from dataclasses import dataclass
from pathlib import Path

from cuda_fatbin._cli import main


@dataclass(frozen=True)
class CliResult:
    returncode: int
    stdout: str
    stderr: str
    stdout_bytes: bytes


def cli_main(*args: object, cwd: Path | None = None, check: int | None = None) -> CliResult:
    """Run ``cuda-fatbin ARGS`` in process; ``check`` asserts the exit code (and shows the output if not)."""
    out, err = io.BytesIO(), io.BytesIO()
    out_text = io.TextIOWrapper(out, encoding="utf-8", errors="backslashreplace", write_through=True)
    err_text = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True)
    before = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out_text), contextlib.redirect_stderr(err_text):
            try:
                code = main([str(a) for a in args])
            except SystemExit as e:  # argparse: --help, usage errors
                code = e.code if isinstance(e.code, int) else 1
            out_text.flush()
            err_text.flush()
    finally:
        os.chdir(before)
    res = CliResult(code, out.getvalue().decode("utf-8", "replace"), err.getvalue().decode("utf-8", "replace"),
                    out.getvalue())  # fmt: skip
    if check is not None:
        assert res.returncode == check, f"exit {res.returncode}\n{res.stdout}\n{res.stderr}"
    return res


class Terminal(io.StringIO):
    """A text stream that says it is a terminal (``isatty()``): where the command shows progress or rich tables."""

    def isatty(self) -> bool:
        return True


def process_running(pid: int) -> bool:
    """The process exists and is not a zombie (an orphan's zombie waits for a reaper that may never come)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
