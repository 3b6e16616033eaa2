# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The command's entry point, in process: ``main()`` as the console script calls it, ``--debug`` wherever it is
written, Ctrl-C in a command, the parser's groups and required command, and the fatbin options a command
leaves to libnvfatbin. Each test here was written from a plausible bug (a mutant) that passed the suite."""

from __future__ import annotations

import errno
import sys

import pytest

from cli_testing import Terminal, cli_main
from cuda_fatbin import FatbinOptions, build_fatbin


@pytest.fixture
def fatbin80(tmp_path, cubin80):
    path = tmp_path / "k.fatbin"
    path.write_bytes(build_fatbin([cubin80]))
    return path


def test_main_without_arguments_reads_the_command_line_as_the_console_script_calls_it(monkeypatch, fatbin80,
                                                                                        capsys):  # fmt: skip
    from cuda_fatbin._cli import main

    monkeypatch.setattr(sys, "argv", ["cuda-fatbin", "inspect", str(fatbin80)])
    assert main() == 0
    assert "sm_80" in capsys.readouterr().out


def test_no_command_is_a_usage_error_naming_the_command_placeholder():
    res = cli_main(check=2)
    assert res.stdout == ""
    assert res.stderr == (
        "usage: cuda-fatbin [-h] [--debug] [--version] COMMAND ...\n"
        "cuda-fatbin: error: the following arguments are required: COMMAND\n"
    )


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_before_or_after_the_command_shows_the_traceback_of_the_error(tmp_path, where):
    """``--debug`` is accepted on either side of the command; each kind of error (a failure, a usage error, a
    malformed input) prints its own traceback, then the usual line."""
    bad = tmp_path / "bad.fatbin"
    bad.write_bytes(b"\x50\xed\x55\xba\x01\x00\x10\x00" + b"\xff" * 8)  # a fatbin header whose size overruns the file
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k() {}\n")
    broken = tmp_path / "broken.cu"
    broken.write_text("__global__ void k() { undefined_name(); }\n")
    cases = [
        (["build", tmp_path / "missing", "-o", tmp_path / "o.fatbin"], 1, "_cli._common.Failure",
         "cuda-fatbin build: "),
        (["compile", src, "--arch", "80", "-o", tmp_path / "k.fatbin", "--dry-run", "--json"], 2,
         "_cli._common.UsageError", "cuda-fatbin compile: error: "),
        (["extract", bad, "-o", tmp_path / "out"], 1, "_reader.FatbinFormatError",  # the cause of its Failure
         f"cuda-fatbin extract: {bad}: fatbin declares "),
        # a library's failure (a RuntimeError): the compile error, then the compiler's log
        (["compile", broken, "--arch", "80", "-o", tmp_path / "b.fatbin", "-q"], 1, "_multiarch.FatbinCompileError",
         "cuda-fatbin compile: FatbinCompileError: "),
    ]  # fmt: skip
    for argv, code, kind, line in cases:
        argv = ["--debug", *argv] if where == "before" else [argv[0], "--debug", *argv[1:]]  # type: ignore[list-item]
        err = cli_main(*argv, check=code).stderr
        plain = cli_main(*[a for a in argv if a != "--debug"], check=code).stderr
        assert plain.startswith(line) and "Traceback" not in plain, plain
        assert err.startswith("Traceback (most recent call last):\n") and err.endswith(plain), err
        assert f"\ncuda_fatbin.{kind}: " in err[: -len(plain)], err


def test_ctrl_c_during_a_compile_exits_130_and_says_what_it_waits_for(tmp_path, monkeypatch):
    """The first Ctrl-C in a compile: the running compiles are awaited, said so, named after the command; exit 130
    (the shell's code for SIGINT) and no output written."""
    from cuda_fatbin import _jobs, _program

    def interrupted(self, *args, **kwargs):
        assert _jobs.awaiting is not None
        _jobs.awaiting(1)
        raise KeyboardInterrupt

    monkeypatch.setattr(_program.Program, "compile", interrupted)
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k() {}\n")
    res = cli_main("compile", src, "--arch", "80", "-o", tmp_path / "k.fatbin", check=130)
    assert res.stdout == ""
    assert res.stderr == "cuda-fatbin compile: interrupted; waiting for 1 running compile; Ctrl-C again to quit now\n"
    assert not (tmp_path / "k.fatbin").exists()


def test_ctrl_c_while_the_command_line_is_read_exits_130_without_a_traceback(tmp_path, monkeypatch, capsys):
    """A Ctrl-C that comes before the command's own handlers are set (while the parser is built, right after a
    script started the command): exit 130 and nothing on stderr, as one that comes later."""
    import os
    import signal

    from cuda_fatbin import _cli

    built = _cli.build_parser

    def interrupted(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # Python's own handler: KeyboardInterrupt here, in the main thread
        return built(*args, **kwargs)

    monkeypatch.setattr(_cli, "build_parser", interrupted)
    assert _cli.main(["size", str(tmp_path)]) == 130
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ([], FatbinOptions()),  # nothing asked: every option is libnvfatbin's own default, none passed
        (["--compress"], FatbinOptions(compress=True)),
        (["--no-compress"], FatbinOptions(compress=False)),
        (["-g"], FatbinOptions(debug=True)),
        (["--debug-info", "--producer", "opencl"], FatbinOptions(debug=True, producer="opencl")),
    ],
)
def test_the_fatbin_options_a_build_passes_are_the_ones_asked_for(tmp_path, monkeypatch, cubin80, flags, expected):
    from cuda_fatbin import _fatbin

    seen = []
    real = _fatbin.build_fatbin

    def spy(parts, *, options=None, **kwargs):
        seen.append(options)
        return real(parts, options=options, **kwargs)

    monkeypatch.setattr(_fatbin, "build_fatbin", spy)
    part = tmp_path / "k.cubin"
    part.write_bytes(cubin80)
    cli_main("build", part, *flags, "-o", tmp_path / "k.fatbin", check=0)
    assert seen == [expected]


def test_help_shows_the_fatbin_options_under_their_class_name():
    for command in ("build", "compile"):
        out = cli_main(command, "--help", check=0).stdout
        assert "\nfatbin options (FatbinOptions):\n  --compress " in out, out


def test_a_failed_write_says_why_in_words_and_keeps_the_file_there(tmp_path, monkeypatch, cubin80):
    from cuda_fatbin import _files

    def full(path, data, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(_files, "_write_new_file", full)  # every output is staged through it (written_together)
    part = tmp_path / "k.cubin"
    part.write_bytes(cubin80)
    out = tmp_path / "k.fatbin"
    res = cli_main("build", part, "-o", out, check=1)
    assert res.stderr == (
        f"cuda-fatbin build: cannot write {out}: No space left on device; a file there before is left as it was\n"
    )


def test_extract_names_its_output_folder_for_an_error_without_a_file_name(tmp_path, monkeypatch, fatbin80):
    """A disk filling up (ENOSPC from fsync, which carries no file name) is reported against the output folder."""
    import os

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    out = tmp_path / "out"
    res = cli_main("extract", fatbin80, "-o", out, check=1)
    assert res.stderr == f"cuda-fatbin extract: {out}: No space left on device\n"


def test_the_probe_table_is_drawn_by_rich_on_a_terminal(monkeypatch):
    """probe's table, like inspect's, is rich's on a terminal (cells wrapped, not cut) and plain text otherwise."""
    pytest.importorskip("rich")
    import types

    from cuda_fatbin import _probe
    from cuda_fatbin._cli import main

    entry = types.SimpleNamespace(describe=lambda: "cubin sm_90")
    case = types.SimpleNamespace(name="a", rule="exact", entries=[entry], env=(), env_text="", cache="cold")
    result = _probe.CaseResult(case, "TAG 1", "TAG 1", True, "r", (), None)
    report = _probe.ProbeReport("Fake GPU", "9.0", 13000, {}, "2026-12-03T00:00:00Z", 1.0, 1, [result], (90,))
    monkeypatch.setattr(_probe, "probe", lambda **kwargs: report)
    for stream, drawn in ((Terminal(), True), (Terminal(), False)):
        if not drawn:
            stream.isatty = lambda: False  # type: ignore[method-assign]
        monkeypatch.setattr(sys, "stdout", stream)
        assert main(["probe"]) == 0
        text = stream.getvalue()
        assert ("│" in text) is drawn and ("-----" in text) is not drawn, text


def test_an_empty_ptx_for_means_none_and_cannot_be_combined_with_archs(tmp_path):
    """``--ptx-for ""`` (an empty CMake-style list) is ``none``: alone it asks for no PTX, with an arch it is refused
    as ``none`` is."""
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k() {}\n")
    out = tmp_path / "k.fatbin"
    for empty in ("", " "):
        res = cli_main("compile", src, "--arch", "80", "--ptx-for", empty, "--ptx-for", "80", "-o", out, check=2)
        assert res.stderr == "cuda-fatbin compile: error: 'none' cannot be combined with archs\n"
        plan = cli_main("compile", src, "--arch", "80", "--ptx-for", empty, "-o", out, "--dry-run", check=0).stdout
        assert "ptx" not in plan, plan
