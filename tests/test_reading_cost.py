# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""What listing reads and builds, counted rather than timed (docs/performance.md, issue 49)."""

from __future__ import annotations

import pytest

from cuda_fatbin import _source


@pytest.mark.parametrize("padding", [0, 8, 56, 64, 4096 + 8])
def test_padding_before_a_fatbin_reads_about_what_it_holds(tmp_path, padding):
    """The walk asks where the padding before each fatbin ends; a short run must not read 1 MiB each time
    (libcurand's 13 fatbins read 13 MiB for a few zero words)."""
    path = tmp_path / "padded.bin"
    size = 3 << 20  # mapped, read through pread
    with open(path, "wb") as f:
        f.truncate(size)
        f.seek(padding)
        f.write(b"\x50\xed\x55\xba" + b"\1" * 60)
    src = _source._open(str(path))
    assert src.fd is not None
    got: list[int] = []
    read = src.read

    def counting(start: int, end: int) -> bytes:
        got.append(end - start)
        return read(start, end)

    src.read = counting  # type: ignore[method-assign]
    assert src.padding_end(0, size) == padding
    assert sum(got) <= 64 + 16 * max(padding, 64), got


def test_a_named_command_configures_only_its_own_parser():
    """``cuda-fatbin inspect FILE`` imports no other subcommand's module (each pulls in its helpers)."""
    import subprocess
    import sys
    from pathlib import Path

    cubin = Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin"
    code = ("import sys, runpy; sys.argv = ['cuda-fatbin'] + sys.argv[1:]\n"
            "try:\n    runpy.run_module('cuda_fatbin', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print(' '.join(sorted(sys.modules)), file=sys.stderr)")  # fmt: skip
    for argv in (["inspect", str(cubin)], ["--debug", "inspect", str(cubin)]):
        res = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
        loaded = {m for m in res.stderr.split() if m.startswith("cuda_fatbin._cli.main_")}
        assert loaded == {"cuda_fatbin._cli.main_inspect"}, loaded
        assert "sm_80" in res.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["inspect", "a", "--json", "--embedded"],
        ["--debug", "scan", "d", "--gpu", "8.0", "-j", "2"],
        ["which", "f", "--gpu", "9.0", "--debug"],
        ["compile", "k.cu", "--arch", "sm_80", "-X", "--use_fast_math"],
        ["size", "f", "--json"],
        ["extract", "f", "-o", "out"],
    ],
)
def test_the_parser_of_one_command_parses_as_the_whole_one(argv):
    from cuda_fatbin._cli import _COMMANDS, _join_option_values, build_parser

    command = next(a for a in argv if not a.startswith("-"))
    assert command in _COMMANDS
    whole, alone = build_parser(), build_parser(command)
    argv = _join_option_values(argv)
    assert vars(alone.parse_args(argv)) == vars(whole.parse_args(argv))
    sub = {name: next(a for a in p._actions if a.dest == "command").choices[command] for name, p in
           (("whole", whole), ("alone", alone))}  # fmt: skip
    assert sub["alone"].format_help() == sub["whole"].format_help()
