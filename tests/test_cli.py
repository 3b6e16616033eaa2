# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The cuda-fatbin command: output and exit codes of every subcommand.

The command runs in this process through ``main([...])`` (tests/cli_testing.py), where a mutation run's
mutants reach it; ``test_python_dash_m_and_entry_point_agree`` and the import tests run it as users do,
in a subprocess.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import cuda_fatbin
from cli_testing import Terminal, cli_main
from cuda_fatbin import build_fatbin, nvfatbin_version, read_fatbin
from cuda_fatbin._term import shown

from fatbin_testing import listing, process_tmp

SRC = r"""
template <typename T> __global__ void scale(T* x, T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
extern "C" __global__ void k(int* p) { p[0] = VALUE; }
"""


cli = cli_main


def cli_subprocess(*args, check=None):
    """``python -m cuda_fatbin ARGS`` as users run it."""
    res = subprocess.run([sys.executable, "-m", "cuda_fatbin", *map(str, args)], capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    if check is not None:
        assert res.returncode == check, f"exit {res.returncode}\n{res.stdout}\n{res.stderr}"
    return res


@pytest.fixture(scope="module")
def source() -> Path:
    path = process_tmp("cli") / "kern.cu"
    path.write_text(SRC)
    return path


@pytest.fixture(scope="module")
def compiled(source) -> Path:
    out = source.parent / "kern.fatbin"
    cli("compile", source, "--arch", "80;90;100+PTX", "-o", out, "-DVALUE=3", "--name-expression", "scale<float>",
        "--symbols", source.parent / "symbols.json", check=0)  # fmt: skip
    return out


def test_compile_writes_the_fatbin_and_symbols(compiled, cuobjdump):
    assert sorted(listing(cuobjdump(compiled.read_bytes(), "-lelf", "-lptx"))) == [
        ("elf", "sm_100"), ("elf", "sm_80"), ("elf", "sm_90"), ("ptx", "sm_100")]  # fmt: skip
    assert json.loads((compiled.parent / "symbols.json").read_text()) == {"scale<float>": "_Z5scaleIfEvPT_S0_i"}


def test_compile_options(source, tmp_path):
    out = tmp_path / "o.fatbin"
    res = cli("compile", source, "--arch", "arch=compute_80,code=[sm_80,sm_86]", "-o", out, "-X=-DVALUE=1",
              "--compress-mode", "speed", "--compress-all", "-j", "1", "--ptx-for", "none", "-q", check=0)  # fmt: skip
    assert res.stdout == ""
    fb = read_fatbin(out)
    assert [(e.kind, str(e.arch), e.compression) for e in fb.entries] == [
        ("elf", "sm_80", "lz4"),
        ("elf", "sm_86", "lz4"),
    ]
    assert {e.identifier for e in fb.entries} == {"kern.cu"}  # the default --name: the source file's name


def test_compile_dry_run_prints_the_plan(source, tmp_path):
    res = cli("compile", source, "--arch", "75;80;86", "--group", "--dry-run", "-o", tmp_path / "x", check=0)
    assert "NVRTC compute_80 -> ptx -> nvJitLink sm_80, sm_86" in res.stdout
    assert not (tmp_path / "x").exists()
    # a dry run writes nothing, so it needs no -o; a compile does, and says so (exit 2: the command line)
    alone = cli("compile", source, "--arch", "75;80;86", "--group", "--dry-run", check=0)
    assert alone.stdout == res.stdout and alone.stderr == ""
    for extra in ([], ["--symbols", tmp_path / "s.json"], ["--json"], ["-q"], ["-v"], ["--cache", tmp_path / "c"]):
        res = cli("compile", source, "--arch", "80", *extra, check=2)
        assert res.stderr == (
            "cuda-fatbin compile: error: -o/--output is required: the fatbin to write (or --dry-run to print the "
            "plan only)\n"
        )
    assert sorted(os.listdir(tmp_path)) == []
    # told before the source is read: a missing source without -o is still the command line's error
    assert cli("compile", tmp_path / "missing.cu", "--arch", "80", check=2).stderr == res.stderr


def test_compile_errors(source, tmp_path):
    res = cli("compile", source, "--arch", "80", "-o", tmp_path / "x.fatbin", check=1)  # VALUE undefined
    assert 'identifier "VALUE" is undefined' in res.stderr and "Traceback" not in res.stderr
    res = cli("compile", source, "--arch", "80;9x", "-o", tmp_path / "x", check=2)
    assert res.stderr.startswith("cuda-fatbin compile: ValueError: not an arch: '9x'")
    res = cli("compile", tmp_path / "missing.cu", "--arch", "80", "-o", tmp_path / "x", check=1)
    assert "no such file" in res.stderr.lower() or "No such file" in res.stderr
    weird = tmp_path / "k.txt"
    weird.write_text(SRC)
    assert "--lang" in cli("compile", weird, "--arch", "80", "-o", tmp_path / "x", check=2).stderr
    res = cli("compile", source, "--arch", "80", "-o", tmp_path / "x", "-X=-arch=sm_90", check=2)
    assert "archs come from archs=" in res.stderr
    res = cli("--debug", "compile", source, "--arch", "80;9x", "-o", tmp_path / "x", check=2)
    assert "Traceback" in res.stderr
    assert cli("compile", source, check=2).stderr.startswith("usage:")


def test_inspect_text_and_json(compiled, tmp_path):
    res = cli("inspect", compiled, check=0)
    assert "4 entries" in res.stdout and "sm_100" in res.stdout and "total: 3 elf, 1 ptx" in res.stdout
    doc = json.loads(cli("inspect", "--json", compiled, check=0).stdout)
    assert doc["schema"] == 1
    [f] = doc["files"]
    entries = f["fatbins"][0]["entries"]
    assert [(e["kind"], e["arch"]) for e in entries] == [("elf", "sm_80"), ("elf", "sm_90"), ("elf", "sm_100"),
                                                         ("ptx", "sm_100")]  # fmt: skip
    assert set(entries[0]) == {
        "kind", "arch", "sm", "version", "identifier", "options", "host", "address_bits", "debug", "producer",
        "compression", "size", "stored_size", "offset", "concatenated", "payload_mismatch",
    }  # fmt: skip
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"not a fatbin at all")
    res = cli("inspect", bad, check=1)
    assert "neither a fatbin" in res.stderr and "Traceback" not in res.stderr
    err = cli("inspect", tmp_path / "nope", check=1).stderr
    assert err == f"cuda-fatbin inspect: {tmp_path / 'nope'}: No such file or directory\n"


def test_inspect_never_imports_the_compile_side(compiled):
    res = subprocess.run([sys.executable, "-X", "importtime", "-m", "cuda_fatbin", "inspect", str(compiled)],
                         capture_output=True, text=True, check=True)  # fmt: skip
    imported = [line.split("|")[-1].strip() for line in res.stderr.splitlines() if "|" in line]
    assert "cuda_fatbin._reader" in imported
    assert not [m for m in imported if m.startswith(("cuda.core", "cuda.bindings", "cuda_fatbin._program"))]


def test_which(compiled):
    res = cli("which", compiled, "--gpu", "80;86;90;100", check=0)
    assert "every GPU is covered" in res.stderr and "SASS compatible" in res.stdout
    res = cli("which", compiled, "--gpu", "75;90", check=1)
    assert "NOT covered" in res.stderr
    # a CUDA 12.8 driver JITs PTX up to ISA 8.7; NVRTC 13.0 and newer write ISA 9.0 and newer (docs/selection.md)
    doc = json.loads(cli("which", compiled, "--gpu", "9.0,12.0", "--driver", "570.26", "--json", check=1).stdout)
    rows = doc["fatbins"][0]["gpus"]
    # the row says what the verdict says: only the driver stands in the way (issue #26: text "none", json not)
    assert [r["status"] for r in rows] == ["SASS exact", "needs newer driver"] and doc["covered"] is False
    assert doc["verdict"]["12.0"]["status"] == "needs newer driver"
    assert re.search(r"is ISA \d+\.\d+, which needs a CUDA \d+\.\d+ driver; driver is CUDA 12\.8", rows[1]["reason"])
    cli("which", compiled, "--gpu", "90", "--force-ptx-jit", check=1)
    assert "not a GPU: '9x'" in cli("which", compiled, "--gpu", "9x", check=2).stderr
    assert "not a driver" in cli("which", compiled, "--gpu", "90", "--driver", "abc", check=2).stderr


def test_extract_and_build_round_trip(compiled, tmp_path):
    out = tmp_path / "parts"
    res = cli("extract", compiled, "-o", out, check=0)
    names = sorted(p.name for p in out.iterdir())
    assert names == ["kern.sm_100.cubin", "kern.sm_100.ptx", "kern.sm_80.cubin", "kern.sm_90.cubin"]
    assert len(res.stdout.splitlines()) == 4
    rebuilt = tmp_path / "rebuilt.fatbin"
    cli("build", "-o", rebuilt, *sorted(out.iterdir()), check=0)
    before = {(e.kind, str(e.arch)) for e in read_fatbin(compiled).iter_entries()}
    after = {(e.kind, str(e.arch)) for e in read_fatbin(rebuilt).iter_entries()}
    assert before == after
    only = tmp_path / "only"
    cli("extract", compiled, "-o", only, "--kind", "elf", "--arch", "sm_90", check=0)
    assert [p.name for p in only.iterdir()] == ["kern.sm_90.cubin"]
    assert "no entry matches" in cli("extract", compiled, "-o", only, "--arch", "sm_75", check=1).stderr


def test_extract_reports_undecodable_entries(artifacts, tmp_path):
    path = tmp_path / "lto.fatbin"
    path.write_bytes(build_fatbin([artifacts[("ltoir", "sm_80")], artifacts[("cubin", "sm_80")]]))
    res = cli("extract", path, "-o", tmp_path / "x", check=1)
    assert "obfuscated" in res.stderr
    assert [p.suffix for p in (tmp_path / "x").iterdir()] == [".cubin"]


def test_build_with_explicit_parts_and_every_option(artifacts, tmp_path, cuobjdump):
    ptx = tmp_path / "k.ptx"
    ptx.write_bytes(artifacts[("ptx", "sm_90")])
    cubin = tmp_path / "k.cubin"
    cubin.write_bytes(artifacts[("cubin", "sm_80")])
    out = tmp_path / "b.fatbin"
    args = ["build", "-o", out, cubin, "--part", f"kind=ptx,arch=90,file={ptx},identifier=mine,options=-O3",
            "--no-compress", "--host", "windows", "--address-bits", "64", "-g", "--producer", "cuda"]  # fmt: skip
    cli(*args, check=0)
    fb = read_fatbin(out)
    assert [(e.kind, str(e.arch), e.identifier, e.options, e.host, e.debug, e.compression) for e in fb.entries] == [
        ("elf", "sm_80", None, None, "windows", True, "none"),
        ("ptx", "sm_90", "mine", "-O3", "windows", True, "none"),
    ]
    if nvfatbin_version() >= (13, 4):
        cli("build", "-o", out, cubin, "--concat", check=0)
        assert read_fatbin(out).entries[0].kind == "concat"
    assert (
        "arch sm_75 was given" in cli("build", "-o", out, "--part", f"kind=cubin,arch=75,file={cubin}", check=2).stderr
    )
    assert "key=value" in cli("build", "-o", out, "--part", "nonsense", check=2).stderr
    assert "contradicts" in cli("build", "-o", out, cubin, "--no-compress", "--compress-all", check=2).stderr
    assert "at least one part" in cli("build", "-o", out, check=2).stderr


def test_python_dash_m_and_entry_point_agree(compiled):
    import shutil

    exe = shutil.which("cuda-fatbin", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the console script is not installed next to this Python")
    a = subprocess.run([exe, "inspect", "--json", str(compiled)], capture_output=True, text=True, check=True).stdout
    b = cli_subprocess("inspect", "--json", compiled, check=0).stdout
    assert a == b == cli("inspect", "--json", compiled, check=0).stdout


def test_repeated_flags_accumulate(compiled, tmp_path):
    res = cli("which", compiled, "--gpu", "70", "--gpu", "80", check=1)  # 7.0 is not covered: it must be checked
    assert "7.0" in res.stdout and "8.0" in res.stdout and "NOT covered" in res.stderr
    cli("which", compiled, "--gpu", "80", "--gpu", "9.0;100", check=0)
    out = tmp_path / "two"
    cli("extract", compiled, "-o", out, "--arch", "80", "--arch", "90", check=0)
    assert sorted(p.name for p in out.iterdir()) == ["kern.sm_80.cubin", "kern.sm_90.cubin"]
    out = tmp_path / "kinds"
    cli("extract", compiled, "-o", out, "--kind", "ptx", "--kind", "cubin", "--arch", "100", check=0)
    assert sorted(p.name for p in out.iterdir()) == ["kern.sm_100.cubin", "kern.sm_100.ptx"]


def test_include_folders_accumulate_in_order(tmp_path):
    """-I A -I B: both searched, A first (a plausible bug kept only one -I)."""
    from cli_testing import cli_main

    for folder, text in (("a", "#define FROM_A 1\n#define WHO 1\n"), ("b", "#define FROM_B 2\n#define WHO 2\n")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "only.h").write_text(text)
    (tmp_path / "b" / "second.h").write_text("#define SECOND 3\n")
    src = tmp_path / "k.cu"
    src.write_text('#include <only.h>\n#include <second.h>\n#if WHO != 1\n#error "-I b came first"\n#endif\n'
                   'extern "C" __global__ void k(int* p) { p[0] = FROM_A + SECOND; }\n')  # fmt: skip
    cli_main("compile", src, "--arch", "80", "-I", tmp_path / "a", "-I", tmp_path / "b", "-o", tmp_path / "k.fatbin",
             check=0)  # fmt: skip
    res = cli_main("compile", src, "--arch", "80", "-I", tmp_path / "b", "-I", tmp_path / "a", "-o",
                   tmp_path / "k2.fatbin", check=1)  # fmt: skip
    assert "-I b came first" in res.stderr


def test_inspect_many_files_names_each_bad_one(compiled, tmp_path):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"not a fatbin at all")
    res = cli("inspect", compiled, bad, tmp_path / "missing", compiled, check=1)
    assert res.stdout.count("4 entries") == 2
    assert "bad.bin" in res.stderr and "missing: No such file or directory\n" in res.stderr
    doc = json.loads(cli("inspect", "--json", bad, compiled, check=1).stdout)
    assert [("error" in f, len(f["fatbins"])) for f in doc["files"]] == [(True, 0), (False, 1)]
    host = Path("/bin/true")
    if host.exists():
        assert "does not contain device code" in cli("inspect", host, check=0).stdout


def test_compile_accumulates_archs_and_shows_warnings(tmp_path):
    src = tmp_path / "w.cu"
    src.write_text('extern "C" __global__ void k(float* p) { int unused = 3; p[0] = 1; }\n')
    out = tmp_path / "w.fatbin"
    res = cli("compile", src, "--arch", "80", "--arch", "90", "--ptx-for", "none", "-o", out, check=0)
    assert {(e.kind, str(e.arch)) for e in read_fatbin(out).iter_entries()} == {("elf", "sm_80"), ("elf", "sm_90")}
    warnings = [line for line in res.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "unused" in warnings[0] and "sm_" in warnings[0]  # once, naming a job's arch
    assert "warning" not in cli("compile", src, "--arch", "80", "-q", "-o", out, check=0).stderr
    cli("compile", src, "--arch", "80", "-X", "--use_fast_math", "-o", out, check=0)  # an option as -X's value
    cli("compile", src, "--arch", "80", "--ptx-for", "80", "--ptx-for", "none", "-o", out, check=2)


def test_exit_codes_per_subcommand(compiled, tmp_path):
    """0 success, 1 the work failed (missing or unreadable input included), 2 the command line is wrong."""
    missing = tmp_path / "missing.bin"
    notes = tmp_path / "notes.txt"
    notes.write_text("not device code")
    for args in (["build", "-o", tmp_path / "t.fatbin", missing], ["build", "-o", tmp_path / "t.fatbin", notes],
                 ["compile", missing.with_suffix(".cu"), "--arch", "80", "-o", tmp_path / "o"], ["inspect", missing],
                 ["which", missing, "--gpu", "80"], ["extract", missing, "-o", tmp_path / "x"],
                 ["scan", missing, "--gpu", "80"]):  # fmt: skip
        res = cli(*args, check=1)
        assert "Traceback" not in res.stderr and str(args[-1] if args[0] == "build" else args[1]) in res.stderr
    for args in (["which", compiled, "--gpu", "9x"], ["extract", compiled, "-o", tmp_path / "x", "--arch", "9x"],
                 ["compile", notes, "--arch", "80", "-o", tmp_path / "o"], ["scan", compiled, "--gpu", "sm_1"],
                 ["inspect"], ["frobnicate"]):  # fmt: skip
        cli(*args, check=2)


def test_version_names_every_library():
    out = cli("--version", check=0).stdout
    for name in ("cuda-fatbin", "cuda-core", "cuda-bindings", "NVRTC", "nvJitLink", "libnvfatbin"):
        assert re.search(rf"^{name} \d", out, re.M), out


def test_build_vocabulary(artifacts, tmp_path):
    cubin = tmp_path / "k.cubin"
    cubin.write_bytes(artifacts[("cubin", "sm_80")])
    out = tmp_path / "o.fatbin"
    cli("build", "-o", out, "--part", f"kind=elf,arch=sm_80,file={cubin}", check=0)  # inspect's name for a cubin
    res = cli("build", "-o", out, cubin, cubin, check=2)  # the same input twice: the command line is wrong
    assert "--allow-duplicates" in res.stderr
    cli("build", "-o", out, cubin, cubin, "--allow-duplicates", check=0)
    assert [str(e.arch) for e in read_fatbin(out).entries] == ["sm_80", "sm_80"]


def test_compile_min_driver(source, tmp_path):
    out = tmp_path / "m.fatbin"
    res = cli("compile", source, "--arch", "80", "--arch", "compute_90", "-DVALUE=1", "--min-driver", "12.0", "-o",
              out, check=1)  # fmt: skip
    assert "would load PTX compute_90" in res.stderr and "add SASS for sm_90" in res.stderr and not out.exists()
    with pytest.warns(UserWarning, match="would load PTX compute_90"):  # shown on stderr by Python's filters
        cli("compile", source, "--arch", "80;compute_90", "-DVALUE=1", "--min-driver", "12.0", "--min-driver-warn",
            "-o", out, check=0)  # fmt: skip
    assert out.exists()


def test_import_is_cheap_in_fact():
    """`import cuda_fatbin` loads no submodule and no CUDA library; `inspect` loads no dataclasses or typing."""
    code = "import sys; print(' '.join(sorted(sys.modules)))"
    # what the interpreter loads before any import of ours (a venv's .pth files may load typing, pathlib...)
    start = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split())
    code = "import sys, cuda_fatbin; print(' '.join(sorted(sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    ours = [m for m in loaded if m.startswith("cuda_fatbin.")]
    assert not ours and not [m for m in loaded if m.startswith(("cuda.core", "cuda.bindings"))], ours
    code = ("import sys, runpy; sys.argv = ['cuda-fatbin', 'inspect', sys.argv[1]]\n"
            "try:\n    runpy.run_module('cuda_fatbin', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print(' '.join(sorted(sys.modules)), file=sys.stderr)")  # fmt: skip
    res = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin")],
                         capture_output=True, text=True, check=True)  # fmt: skip
    loaded = res.stderr.split()
    assert "cuda_fatbin._reader" in loaded
    heavy = {"dataclasses", "typing", "inspect", "json", "pathlib", "cuda_fatbin._program", "cuda_fatbin._fatbin",
             "cuda_fatbin._multiarch", "cuda_fatbin._cache", "cuda_fatbin._bundle", "cuda_fatbin._select",
             "shutil", "bz2", "lzma"}  # fmt: skip  # (argparse's help formatter imports shutil for the width)
    assert not heavy & set(loaded) - start, heavy & set(loaded) - start


@pytest.mark.parametrize("args", [["--help"], ["inspect", "--help"], ["scan", "--help"], ["inspect"]])
def test_help_and_usage_are_wrapped_to_the_terminal_width(args):
    """The parser is built with formatters of a fixed width (no terminal is asked while options are added); help
    and usage messages are still wrapped to the width the terminal (here COLUMNS) gives."""
    texts = {}
    for columns in ("44", "300"):
        env = {**os.environ, "COLUMNS": columns}
        res = subprocess.run([sys.executable, "-m", "cuda_fatbin", *args], capture_output=True, text=True, env=env,
                             timeout=120)  # fmt: skip
        texts[columns] = res.stdout + res.stderr
        widest = max(map(len, texts[columns].splitlines()))
        assert widest <= int(columns) - 2 or (columns == "44" and widest < 80), (columns, texts[columns])
    assert len(texts["44"].splitlines()) > len(texts["300"].splitlines())


def test_a_command_raises_the_garbage_collector_threshold_and_puts_it_back(compiled, monkeypatch):
    """While a command runs, a collection every 200,000 allocations, not 700 (a listing keeps hundreds of thousands
    of objects, which each collection walks); a setting of the caller's is back afterwards, and 0 (off) stays."""
    import gc

    from cuda_fatbin._cli import main_inspect

    seen = []
    real = main_inspect.run
    monkeypatch.setattr(main_inspect, "run", lambda args: seen.append(gc.get_threshold()) or real(args))
    saved = gc.get_threshold()
    try:
        for caller in [(700, 10, 10), (300_000, 7, 3), (0, 10, 10)]:
            gc.set_threshold(*caller)
            cli("inspect", compiled, check=0)
            assert gc.get_threshold() == caller
        assert seen == [(200_000, 10, 10), (300_000, 7, 3), (0, 10, 10)]
    finally:
        gc.set_threshold(*saved)


def test_only_the_command_lines_own_run_freezes_what_is_alive_at_its_end(compiled):
    """The interpreter's exit walks the objects its last collection finds (every module's): the command line's own
    run freezes them first; a program that calls main keeps its collector as it was."""
    import gc

    code = ("import atexit, gc, sys, runpy; sys.argv = ['cuda-fatbin'] + sys.argv[1:]\n"
            "atexit.register(lambda: print('frozen', gc.get_freeze_count(), file=sys.stderr))\n"
            "runpy.run_module('cuda_fatbin', run_name='__main__')")  # fmt: skip
    res = subprocess.run([sys.executable, "-c", code, "inspect", str(compiled)], capture_output=True, text=True)
    assert res.returncode == 0 and int(res.stderr.split("frozen ")[1]) > 10_000, res.stderr
    before = gc.get_freeze_count()
    cli("inspect", compiled, check=0)
    assert gc.get_freeze_count() == before == 0


def test_a_program_that_calls_main_without_arguments_keeps_its_collector(compiled):
    code = ("import gc, sys\nfrom cuda_fatbin._cli import main\n"
            "sys.argv = ['tool', 'inspect', sys.argv[1]]\nmain()\n"
            "print('frozen', gc.get_freeze_count(), file=sys.stderr)")  # fmt: skip
    res = subprocess.run([sys.executable, "-c", code, str(compiled)], capture_output=True, text=True)
    assert res.returncode == 0 and res.stderr.split("frozen ")[1].strip() == "0", res.stderr


SCALED = r"""
template <typename T> __global__ void scale(T* x, T a) { x[0] *= a; }
static_assert(SCALE == 2, "SCALE must be 2");
extern "C" __global__ void k(int* p) { p[0] = SCALE; }
"""


def test_defines_carry_their_values_and_spec_options_accumulate(tmp_path):
    """Past bugs: -D NAME=VALUE lost its value; a repeated --ptx-for kept only the first."""
    src = tmp_path / "s.cu"
    src.write_text(SCALED)
    cli("compile", src, "--arch", "80", "-D", "SCALE=2", "-o", tmp_path / "a.fatbin", "-q", check=0)
    assert "SCALE must be 2" in cli("compile", src, "--arch", "80", "-D", "SCALE=3", "-o", tmp_path / "b.fatbin",
                                    check=1).stderr  # fmt: skip
    plan = cli("compile", src, "--arch", "80", "--arch", "90", "--ptx-for", "80", "--ptx-for", "90", "--dry-run",
               "-o", tmp_path / "c.fatbin", check=0).stdout  # fmt: skip
    assert "=> ptx sm_80" in plan and "=> ptx sm_90" in plan and plan.startswith("4 job(s), 4 entries")
    # group mode (one front end, SASS from its PTX) still returns the lowered names
    res = cli("compile", src, "--group", "--arch", "80;86", "--ptx-for", "none", "--name-expression", "scale<float>",
              "--symbols", "-", "-DSCALE=2", "-o", tmp_path / "g.fatbin", "-q", check=0)  # fmt: skip
    assert json.loads(res.stdout) == {"scale<float>": "_Z5scaleIfEvPT_S0_"}


def test_which_with_ptx_jit_disabled_depends_on_the_jit_cache(tmp_path):
    """CUDA_DISABLE_PTX_JIT=1 still loads PTX whose JIT output is cached (docs/probe: rule jit_cache)."""
    src = tmp_path / "s.cu"
    src.write_text(SCALED)
    ptx_only = tmp_path / "p.fatbin"
    cli("compile", src, "--arch", "compute_80", "-DSCALE=2", "-o", ptx_only, "-q", check=0)
    warm = cli("which", ptx_only, "--gpu", "80", "--disable-ptx-jit", "--jit-cache", "warm", check=0)
    assert "from the JIT cache" in warm.stdout and "every GPU is covered" in warm.stderr
    cold = cli("which", ptx_only, "--gpu", "80", "--disable-ptx-jit", "--jit-cache", "cold", check=1)
    assert "CUDA_DISABLE_PTX_JIT=1 ignores PTX" in cold.stdout


def test_inputs_that_block_or_hold_no_code_are_failed_inputs(tmp_path):
    """Past bugs: a FIFO as a source or part blocked compile and build for ever; a cut cubin given
    with --part was a usage error (2); extract -o on a file printed a raw FileExistsError; scan's rows name
    each input it could not read."""
    import os

    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    cubin = Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin"
    out = tmp_path / "a.fatbin"
    for args in (["build", fifo, "-o", out], ["build", "--part", f"kind=cubin,file={fifo}", "-o", out],
                 ["compile", fifo, "--lang", "c++", "--arch", "80", "-o", out]):  # fmt: skip
        assert "a FIFO, not a regular file" in cli(*args, check=1).stderr
    cut = tmp_path / "cut.cubin"
    cut.write_bytes(cubin.read_bytes()[:100])
    assert "malformed cubin" in cli("build", "--part", f"kind=cubin,file={cut}", "-o", out, check=1).stderr
    assert "malformed cubin" in cli("build", cut, "-o", out, check=1).stderr
    assert not out.exists()
    afile = tmp_path / "afile"
    afile.write_bytes(b"keep")
    err = cli("extract", cubin, "-o", afile, check=1).stderr
    assert "-o names the folder to write into" in err and "Error" not in err and afile.read_bytes() == b"keep"
    res = cli("scan", fifo, cubin, "--gpu", "80", check=1)
    assert "1 input(s) could not be read" in res.stdout and f"{fifo}: OSError: a FIFO" in res.stdout


def test_names_and_compiler_logs_reach_stderr_escaped(tmp_path):
    """A past bug: a file name or a compiler log line holding ESC reached the terminal raw."""
    evil = "e\x1b[31mx"
    assert "\x1b" not in cli("compile", tmp_path / f"{evil}.cu", "--arch", "80", "-o", tmp_path / "a.fatbin",
                             check=1).stderr  # fmt: skip
    bad = tmp_path / f"bad{evil}.cu"
    bad.write_text("int x = ;\n")
    err = cli("compile", bad, "--arch", "80", "-o", tmp_path / "b.fatbin", check=1).stderr
    assert "bade\\x1b[31mx.cu(1): error" in err and "\x1b" not in err
    assert "\n" in err.strip()  # the log keeps its lines
    warn = tmp_path / f"w{evil}.cu"
    warn.write_text('extern "C" __global__ void k(int* p) { int unused; p[0] = 1; }\n')
    err = cli("compile", warn, "--arch", "80", "-o", tmp_path / "w.fatbin", check=0).stderr
    assert "warning" in err and "\x1b" not in err and "we\\x1b[31mx.cu" in err
    assert "\x1b" not in cli("build", tmp_path / f"{evil}.cubin", "-o", tmp_path / "c.fatbin", check=1).stderr
    assert "\x1b" not in cli("extract", tmp_path / f"{evil}.fatbin", "-o", tmp_path / "d", check=1).stderr


def test_jobs_must_be_a_positive_whole_number(tmp_path):
    """A past bug: -j 0 was refused in the library's words ("max_workers must be ...")."""
    for command in (["scan", tmp_path, "--gpu", "80"], ["compile", tmp_path / "k.cu", "--arch", "80", "-o",
                                                        tmp_path / "k.fatbin"], ["probe"]):  # fmt: skip
        for bad in ("0", "-1", "abc"):
            err = cli(*command, "-j", bad, check=2).stderr
            assert "-j/--jobs: expected a whole number of at least 1" in err and "max_workers" not in err


def test_docs_list_every_option_as_the_parser_defines_it() -> None:
    """docs/cli.md's option tables are the parser's: every command, spelling, value, default and help.

    The tables are what ``--help`` shows users, so a changed help text, metavar, choice list or default
    shows here; ``python scripts/cli-reference.py`` writes them again. Every option has a help text.
    """
    import argparse
    import runpy

    from cuda_fatbin._cli import build_parser

    root = Path(__file__).resolve().parent.parent
    script = runpy.run_path(str(root / "scripts" / "cli-reference.py"), run_name="cli_reference")
    parser = build_parser()
    doc = (root / "docs" / "cli.md").read_text(encoding="utf-8")
    section = doc[doc.index(script["BEGIN"]) : doc.index(script["END"]) + len(script["END"])]
    assert section == script["reference"](parser), "docs/cli.md is stale: run python scripts/cli-reference.py"
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in [("", parser), *subs.choices.items()]:
        for action in sub._actions:
            what = action.option_strings or action.dest
            assert action.help or action is subs, f"cuda-fatbin {name} {what} has no help"
    assert "| `--arch` | `SPEC` (required, repeatable) | archs in any spelling" in section  # the layout


@pytest.fixture
def which_inputs(artifacts, tmp_path):
    """one.fatbin: SASS sm_80 + PTX compute_90; h.o: a host object whose .nv_fatbin holds that fatbin and one of
    SASS sm_90; nine.o: nine fatbins of SASS sm_80."""
    from elf_testing import make_elf

    one = build_fatbin([artifacts[("cubin", "sm_80")], artifacts[("ptx", "sm_90")]])
    two = build_fatbin([artifacts[("cubin", "sm_90")]])
    (tmp_path / "one.fatbin").write_bytes(one)
    (tmp_path / "h.o").write_bytes(make_elf([(".nv_fatbin", 1, one + two)]))
    nine = build_fatbin([artifacts[("cubin", "sm_80")]])
    (tmp_path / "nine.o").write_bytes(make_elf([(".nv_fatbin", 1, nine * 9)]))
    return tmp_path


def _isa(ptx: bytes) -> str:
    """The PTX ISA the text declares (its ``.version``): it follows the NVRTC that wrote it."""
    found = re.search(rb"^\.version (\d+\.\d+)", ptx, re.M)
    assert found, "no .version line"
    return found.group(1).decode()


def _rows(text: str) -> list[list[str]]:
    """A table's rows, cells split on runs of two or more spaces (the header and rule lines dropped)."""
    return [re.split(r"\s{2,}", line.strip()) for line in text.splitlines()[2:] if line.strip()]


def test_which_prints_a_table_per_fatbin_then_the_verdict(which_inputs, artifacts):
    """The rows follow the loading rules (docs/selection.md): 7.5 takes no sm_80 SASS (another major) and no
    compute_90 PTX (newer); 9.0 JIT-compiles the PTX; a host object's fatbins each get a table, then the verdict
    over all of them (docs/scan.md)."""
    res = cli("which", which_inputs / "one.fatbin", "--gpu", "75;80;90", check=1)
    assert _rows(res.stdout) == [
        ["7.5", "none", "no entry fits 7.5: SASS sm_80 does not run on 7.5: another major; PTX compute_90 is newer "
                        "than 7.5"],
        ["8.0", "SASS exact", "SASS sm_80 runs on 8.0: exact match"],
        ["9.0", "PTX JIT", f"PTX compute_90 (ISA {_isa(artifacts[('ptx', 'sm_90')])}) JIT-compiled for 9.0"],
    ]  # fmt: skip
    assert res.stdout.endswith("\n\n") and res.stderr == "\nsome GPU is NOT covered\n"
    assert "per GPU" not in res.stdout  # one fatbin, not relocatable, not stored as data: its table is the verdict
    res = cli("which", which_inputs / "h.o", "--gpu", "80;90", check=0)
    blocks = res.stdout.split("\n\n")
    assert blocks[0].splitlines()[0] == ".nv_fatbin@0x40:" and blocks[1].splitlines()[0] == ".nv_fatbin@0xf90:"
    assert _rows("\n".join(blocks[1].splitlines()[1:])) == [
        ["8.0", "none", "no entry fits 8.0: SASS sm_90 does not run on 8.0: another major"],
        ["9.0", "SASS exact", "SASS sm_90 runs on 9.0: exact match"]]  # fmt: skip
    verdict = blocks[2].splitlines()
    assert verdict[0] == f"{which_inputs / 'h.o'}: 2 fatbins (0 relocatable, 0 stored as data); per GPU (docs/scan.md):"
    assert [row[:2] for row in _rows("\n".join(verdict[1:]))] == [["8.0", "partial"], ["9.0", "PTX JIT"]]
    assert res.stderr == "\nevery GPU is covered\n"  # partial loads: the kernels of the other fatbin fail if called
    # more than eight fatbins: only the verdict
    res = cli("which", which_inputs / "nine.o", "--gpu", "80", check=0)
    assert res.stdout.splitlines()[0].endswith("nine.o: 9 fatbins (0 relocatable, 0 stored as data); per GPU "
                                               "(docs/scan.md):")  # fmt: skip
    assert not re.search(r"^\.nv_fatbin@", res.stdout, re.M)  # no table of its own for each fatbin
    assert _rows("\n".join(res.stdout.splitlines()[1:]))[0][:2] == ["8.0", "SASS exact"]


def test_which_json_is_indented_and_holds_rows_and_verdict(which_inputs):
    res = cli("which", which_inputs / "h.o", "--gpu", "80;90", "--json", check=0)
    doc = json.loads(res.stdout)
    assert res.stdout == json.dumps(doc, indent=1) + "\n"
    assert doc["covered"] is True and doc["verdict"]["8.0"]["status"] == "partial"
    assert [[g["status"] for g in fb["gpus"]] for fb in doc["fatbins"]] == [["SASS exact", "PTX JIT"],
                                                                           ["none", "SASS exact"]]  # fmt: skip
    res = cli("which", which_inputs / "one.fatbin", "--gpu", "75", "--json", check=1)
    assert res.stdout == json.dumps(json.loads(res.stdout), indent=1) + "\n"
    bad = which_inputs / "bad.fatbin"
    bad.write_bytes(b"\x50\xed\x55\xba" + bytes(12))
    res = cli("which", bad, "--gpu", "80", "--json", check=1)
    doc = json.loads(res.stdout)
    assert res.stdout == json.dumps(doc, indent=1) + "\n" and doc["covered"] is False and doc["error"]


def test_which_notes_the_jit_cache_and_reported_rules(which_inputs, artifacts, monkeypatch):
    path = which_inputs / "one.fatbin"
    isa = _isa(artifacts[("ptx", "sm_90")])
    res = cli("which", path, "--gpu", "90", "--disable-ptx-jit", check=1)
    assert _rows(res.stdout)[0][2].endswith(f"with a warm JIT cache: PTX compute_90 (ISA {isa}) JIT-compiled for 9.0 "
                                            "(cached JIT output)")  # fmt: skip
    note = (
        "\n\nWith CUDA_DISABLE_PTX_JIT=1 the result depends on the driver's JIT cache: PTX compiled earlier on "
        "the machine still runs (--jit-cache warm|cold to choose)\n"
    )
    assert res.stdout.endswith(note)
    cold = cli("which", path, "--gpu", "90", "--disable-ptx-jit", "--jit-cache", "cold", check=1)
    assert "JIT cache" not in cold.stdout and _rows(cold.stdout)[0][:2] == ["9.0", "none"]
    warm = cli("which", path, "--gpu", "90", "--disable-ptx-jit", "--jit-cache", "warm", check=0)
    assert "JIT cache" not in warm.stdout.split("\n\n")[-1] and _rows(warm.stdout)[0][1] == "PTX JIT"
    assert "[reported rule]" not in cli("which", path, "--gpu", "90", check=0).stdout
    from dataclasses import replace

    from cuda_fatbin import _select

    for name, rule in list(_select.RULES.items()):
        monkeypatch.setitem(_select.RULES, name, replace(rule, status="reported"))
    res = cli("which", path, "--gpu", "90", check=0)
    assert _rows(res.stdout)[0][2] == f"PTX compute_90 (ISA {isa}) JIT-compiled for 9.0 [reported rule]"
    assert res.stdout.endswith("\n\n[reported rule]: the decision rests on a rule from NVIDIA's documentation that no "
                               "GPU run of ours has confirmed yet (cuda_fatbin.RULES)\n")  # fmt: skip


def test_inspect_lists_each_entry_and_the_totals(artifacts, tmp_path):
    """One row per entry as the reader sees it (tests/test_reader.py checks those values against cuobjdump)."""
    from cuda_fatbin import FatbinOptions, Part

    path = tmp_path / "k.fatbin"
    path.write_bytes(build_fatbin([Part(artifacts[("cubin", "sm_80")], identifier="c80"), artifacts[("ptx", "sm_90")]],
                                  options=FatbinOptions(compress_all=True, compress_mode="speed")))  # fmt: skip
    plain = tmp_path / "p.fatbin"
    plain.write_bytes(build_fatbin([artifacts[("cubin", "sm_90")]], options=FatbinOptions(compress=False)))
    res = cli("inspect", path, plain, check=0)
    blocks = res.stdout.split("\n\n")
    assert blocks[0] == f"{path}: 1 fatbin(s), 2 entries"
    lines = blocks[1].splitlines()
    assert re.split(r"\s{2,}", lines[0]) == ["fatbin", "kind", "arch", "version", "size", "stored", "compression",
                                             "identifier"]  # fmt: skip
    entries = read_fatbin(path.read_bytes()).entries
    want = [["@0x0", e.kind, str(e.arch), f"{e.version[0]}.{e.version[1]}", str(e.size), str(e.stored_size), "lz4"]
            for e in entries]  # fmt: skip
    want[0].append("c80")
    assert _rows(blocks[1]) == want
    kinds = sorted(e.kind for e in entries)
    assert blocks[2] == (f"  total: 1 {kinds[0]}, 1 {kinds[1]}; {sum(e.size for e in entries)} bytes of payload in "
                         f"{len(path.read_bytes())} bytes of fatbin")  # fmt: skip
    (e,) = read_fatbin(plain.read_bytes()).entries
    assert _rows(res.stdout.split("\n\n")[4]) == [["@0x0", "elf", "sm_90", f"{e.version[0]}.{e.version[1]}",
                                                   str(e.size), str(e.size), "none"]]  # fmt: skip
    if nvfatbin_version() >= (13, 4):  # members of a concatenated entry: no stored size of their own
        concat = tmp_path / "c.fatbin"
        concat.write_bytes(build_fatbin([artifacts[("cubin", "sm_80")]], options=FatbinOptions(concat=True)))
        rows = _rows(cli("inspect", concat, check=0).stdout.split("\n\n")[1])
        assert [r[0:3] + r[5:] for r in rows] == [["@0x0", "elf", "sm_80", "-", "in concat"]]
    empty = tmp_path / "e.o"
    from elf_testing import make_elf

    empty.write_bytes(make_elf([(".text", 1, bytes(8))]))
    assert cli("inspect", empty, check=0).stdout == f"{empty}: does not contain device code\n\n"


def test_wide_keeps_plain_rows_on_a_terminal(artifacts, tmp_path, monkeypatch):
    """On a terminal the tables are rich's (wrapped to its width) unless --wide asks for one line per row."""
    from cuda_fatbin._cli import main

    path = tmp_path / "k.fatbin"
    path.write_bytes(build_fatbin([artifacts[("cubin", "sm_80")]]))
    for command in (["inspect", str(path)], ["which", str(path), "--gpu", "80"]):
        term = Terminal()
        monkeypatch.setattr(sys, "stdout", term)
        main(command)
        assert "━" in term.getvalue() or "─" in term.getvalue()  # rich's box
        term = Terminal()
        monkeypatch.setattr(sys, "stdout", term)
        main([*command, "--wide"])
        assert "─" not in term.getvalue() and "━" not in term.getvalue() and "  ----" in term.getvalue()


def test_which_and_inspect_read_an_archive_member_by_the_name_scan_prints(artifacts, tmp_path):
    """`a.whl::member` (scan's spelling) reads that member; `a.zip` lists its ELF and fatbin members in order,
    past members of other kinds, and names a nested archive without reading it."""
    import zipfile

    fatbin = build_fatbin([artifacts[("cubin", "sm_80")]])
    wheel = tmp_path / "w.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("notes.txt", "no device code")
        z.writestr("pkg/k.fatbin", fatbin)
        z.writestr("inner.ZIP", b"PK\x05\x06" + bytes(18))
        z.writestr("pkg/twice.fatbin", fatbin)
        with pytest.warns(UserWarning, match="Duplicate name"):  # two members of one name, as a hostile zip has
            z.writestr("pkg/twice.fatbin", fatbin)
        z.writestr("pkg/lib.so", b"\x7fELF" + bytes(60))
    res = cli("which", f"{wheel}::pkg/k.fatbin", "--gpu", "80", check=0)
    assert _rows(res.stdout) == [["8.0", "SASS exact", "SASS sm_80 runs on 8.0: exact match"]]
    err = cli("which", f"{wheel}::pkg/none.fatbin", "--gpu", "80", check=1).stderr
    assert err == f"cuda-fatbin which: {wheel}: no member named pkg/none.fatbin\n"
    err = cli("which", f"{wheel}::pkg/twice.fatbin", "--gpu", "80", check=1).stderr
    assert (
        err == f"cuda-fatbin which: {wheel}::pkg/twice.fatbin: 2 members of that name; read the archive with inspect\n"
    )
    err = cli("which", tmp_path / "no.whl::k.fatbin", "--gpu", "80", check=1).stderr
    assert err == f"cuda-fatbin which: {tmp_path / 'no.whl'}::k.fatbin: No such file or directory\n"
    (tmp_path / "bad.whl").write_bytes(b"not a zip archive")
    err = cli("which", tmp_path / "bad.whl::k.fatbin", "--gpu", "80", check=1).stderr
    assert err == (
        f"cuda-fatbin which: {tmp_path / 'bad.whl'}: not a ZIP archive (no end of central directory "
        "record; truncated?)\n"
    )
    res = cli("inspect", wheel, check=1)  # lib.so is an ELF file that cannot be read: an error row, exit 1
    firsts = [line for line in res.stdout.splitlines() if line.startswith(str(wheel))]
    assert firsts == [f"{wheel}::pkg/k.fatbin: 1 fatbin(s), 1 entries", f"{wheel}::pkg/twice.fatbin: 1 fatbin(s), "
                      "1 entries", f"{wheel}::pkg/twice.fatbin: 1 fatbin(s), 1 entries"]  # fmt: skip
    assert f"{wheel}::inner.ZIP: " in res.stderr and "notes.txt" not in res.stdout + res.stderr
    doc = json.loads(cli("inspect", wheel, "--json", check=1).stdout)
    assert [f["path"].removeprefix(f"{wheel}::") for f in doc["files"]] == ["pkg/k.fatbin", "inner.ZIP",
                                                                             "pkg/twice.fatbin", "pkg/twice.fatbin",
                                                                             "pkg/lib.so"]  # fmt: skip
    assert "error" in doc["files"][1] and "error" in doc["files"][4]


def test_output_into_a_closed_pipe_ends_quietly(artifacts, tmp_path, monkeypatch):
    """`cuda-fatbin inspect ... | head -1`: once the reader is gone the command stops with exit 0 and nothing more
    reaches the pipe (standard output now points at /dev/null)."""
    import os

    from cuda_fatbin._cli import main

    path = tmp_path / "k.fatbin"
    path.write_bytes(build_fatbin([artifacts[("cubin", "sm_80")]]))
    read_end, write_end = os.pipe()

    class Gone:
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            pass

        def fileno(self):
            return write_end

        def isatty(self):
            return False

    monkeypatch.setattr(sys, "stdout", Gone())
    try:
        assert main(["inspect", str(path)]) == 0
        os.write(write_end, b"after")  # to /dev/null now
        os.close(write_end)
        assert os.read(read_end, 100) == b""
    finally:
        os.close(read_end)


def test_json_documents_are_indented_by_one(artifacts, tmp_path):
    cubin = tmp_path / "k.cubin"
    cubin.write_bytes(artifacts[("cubin", "sm_80")])
    for args in (["build", cubin, "-o", tmp_path / "b.fatbin", "--json"],
                 ["extract", tmp_path / "b.fatbin", "-o", tmp_path / "x", "--json"]):  # fmt: skip
        out = cli(*args, check=0).stdout
        assert out == json.dumps(json.loads(out), indent=1) + "\n"


def test_extract_selections_and_the_errors_it_names(artifacts, tmp_path):
    from elf_testing import make_elf

    path = tmp_path / "k.fatbin"
    path.write_bytes(build_fatbin([artifacts[("cubin", "sm_80")], artifacts[("ptx", "sm_90")]]))
    out = tmp_path / "out"
    res = cli("extract", path, "-o", out, "--kind", "elf;ptx", check=0)  # a ;-list, as --arch takes
    assert sorted(p.name for p in out.iterdir()) == ["k.1.sm_80.cubin", "k.1.sm_90.ptx"]
    assert sorted(res.stdout.splitlines()) == sorted(str(p) for p in out.iterdir())
    assert cli("extract", path, "-o", tmp_path / "o2", "--kind", "elf,", check=0).stdout.count("\n") == 1
    assert cli("extract", path, "-o", tmp_path / "o3", "--arch", "sm_75", check=1).stderr == (
        "cuda-fatbin extract: no entry matches --kind/--arch\n")  # fmt: skip
    err = cli("extract", path, "-o", tmp_path / "o4", "--arch", "sm_9x", check=2).stderr
    assert err.endswith("\n") and "sm_9x" in err and "None" not in err
    afile = tmp_path / "afile"
    afile.write_bytes(b"keep")
    err = cli("extract", path, "-o", afile, check=1).stderr
    assert err.startswith(f"cuda-fatbin extract: {afile}: ") and err.endswith(
        "; -o names the folder to write into, which is made if missing\n")  # fmt: skip
    assert cli("extract", tmp_path / "none.fatbin", "-o", out, check=1).stderr == (
        f"cuda-fatbin extract: {tmp_path / 'none.fatbin'}: No such file or directory\n")  # fmt: skip
    cut = tmp_path / "cut\n.fatbin"  # malformed: named (escaped: one line), and said as inspect says it
    cut.write_bytes(path.read_bytes()[:100])
    want = cli("inspect", cut, check=1).stderr.replace("cuda-fatbin inspect: ", "cuda-fatbin extract: ")
    assert want.startswith(f"cuda-fatbin extract: {shown(str(cut))}: fatbin declares ") and want.count("\n") == 1
    assert cli("extract", cut, "-o", tmp_path / "o7", check=1).stderr == want
    assert not (tmp_path / "o7").exists()
    # a fatbin stored as data in a host file: found with --embedded only
    host = tmp_path / "h.so"
    host.write_bytes(make_elf([(".rodata", 1, bytes(8) + path.read_bytes())]))
    assert "no entry matches" in cli("extract", host, "-o", tmp_path / "o5", check=1).stderr
    assert len(cli("extract", host, "-o", tmp_path / "o6", "--embedded", check=0).stdout.splitlines()) == 2


def test_inspect_marks_where_each_fatbin_is(artifacts, tmp_path):
    from elf_testing import make_elf

    blob = build_fatbin([artifacts[("cubin", "sm_80")]])
    host = tmp_path / "h.so"
    host.write_bytes(make_elf([(".nv_fatbin", 1, blob), (".rodata", 1, bytes(8) + blob)]))
    rows = _rows(cli("inspect", host, "--embedded", check=0).stdout.split("\n\n")[1])
    assert [r[0] for r in rows] == [".nv_fatbin@0x40", f".rodata@{0x40 + len(blob) + 8:#x} (embedded)"]
    cubin = tmp_path / "k.cubin"
    cubin.write_bytes(artifacts[("cubin", "sm_80")])
    assert _rows(cli("inspect", cubin, check=0).stdout.split("\n\n")[1])[0][0] == "standalone"


def test_version_says_what_is_missing(monkeypatch):
    """A bug report needs to know what is not there: a distribution not installed, a library that fails to load."""
    import importlib
    import importlib.metadata

    from cuda_fatbin._cli import versions_text

    real_version, real_import = importlib.metadata.version, importlib.import_module

    def version(dist):
        if dist in ("cuda-core", "cuda-fatbin"):  # cuda-fatbin: run from a source tree, not installed
            raise importlib.metadata.PackageNotFoundError(dist)
        return real_version(dist)

    def import_module(name, *args):
        if name == "cuda.bindings.nvjitlink":
            raise OSError("libnvJitLink.so.13: cannot open shared object file")
        return real_import(name, *args)

    monkeypatch.setattr(importlib.metadata, "version", version)
    monkeypatch.setattr(importlib, "import_module", import_module)
    lines = versions_text().splitlines()
    assert lines[1] == "cuda-core not installed" and lines[4] == "nvJitLink not available (OSError)"
    assert lines[0] == f"cuda-fatbin {cuda_fatbin.__version__}"  # the code running says its own version
    from cuda.bindings import nvfatbin, nvrtc

    assert lines[3] == "NVRTC {}.{}".format(*nvrtc.nvrtcVersion()[1:])
    assert lines[5] == "libnvfatbin {}.{}".format(*nvfatbin.version())


def test_build_part_specs(artifacts, tmp_path):
    """--part kind=...,arch=...,file=...,identifier=...,options=...: a value may hold "="; every item needs one."""
    ptx = tmp_path / "k=1.ptx"  # a file name with "=" in it
    ptx.write_bytes(artifacts[("ptx", "sm_80")])
    out = tmp_path / "o.fatbin"
    cli("build", "-o", out, "--part", f"kind=ptx,identifier=p,options=-DX=1,file={ptx}", "-q", check=0)
    (entry,) = read_fatbin(out).entries
    assert (entry.identifier, entry.options) == ("p", "-DX=1")
    same = tmp_path / "p=1.fatbin"
    same.write_bytes(b"x")
    err = cli("build", "-o", same, "--part", f"kind=ptx,file={same}", check=2).stderr
    assert f"-o {same} is an input ({same}): writing it would replace what this reads" in err
    err = cli("build", "-o", out, "--part", f"kind,file={ptx}", check=2).stderr
    assert f"--part 'kind,file={ptx}': expected key=value items among kind, arch, file, identifier, options" in err
    err = cli("build", "-o", out, "--part", "kind=ptx", check=2).stderr
    assert err.endswith("--part 'kind=ptx': file= is required\n")
    err = cli("build", "-o", out, check=2).stderr
    assert err.endswith("build needs at least one part (a file, or --part kind=...,file=...)\n")
    res = cli("build", "-o", "-", "--part", f"kind=ptx,file={ptx}", check=0)  # the fatbin on stdout, the line not
    assert res.stdout_bytes.startswith(b"\x50\xed\x55\xba") and res.stderr.startswith("-: ")


def test_which_names_a_malformed_file_as_inspect_and_extract_do(tmp_path):
    """A file the reader refuses: ``cuda-fatbin which: PATH: message``, the line inspect and extract print (no
    exception class), on stderr and as the JSON document's error."""
    cut = tmp_path / "cut\n.fatbin"  # named escaped: one line
    cut.write_bytes(bytes.fromhex("50ed55ba01001000") + (2**63 - 1).to_bytes(8, "little"))
    message = "fatbin declares 9223372036854775807 bytes of entries but only 0 follow (at offset 0x8)"
    want = cli("inspect", cut, check=1).stderr.replace("cuda-fatbin inspect: ", "cuda-fatbin which: ")
    assert want == f"cuda-fatbin which: {shown(str(cut))}: {message}\n"
    res = cli("which", cut, "--gpu", "80", check=1)
    assert (res.stdout, res.stderr) == ("", want)
    doc = json.loads(cli("which", cut, "--gpu", "80", "--json", check=1).stdout)
    assert doc["error"] == f"{shown(str(cut))}: {message}"


def test_which_and_inspect_at_their_boundaries(artifacts, tmp_path):
    """At their boundaries: eight fatbins still get their tables; the driver reaches the JSON; with a JIT
    variable the rows decide, and one GPU not covered is enough to fail; totals are sorted by kind; an archive of
    no binary says so (exit 0); an archive's suffix is matched in any case."""
    import zipfile

    from elf_testing import make_elf

    one = build_fatbin([artifacts[("cubin", "sm_80")]])
    eight = tmp_path / "eight.o"
    eight.write_bytes(make_elf([(".nv_fatbin", 1, one * 8)]))
    assert cli("which", eight, "--gpu", "80", check=0).stdout.count(".nv_fatbin@") == 8
    ptx_first = tmp_path / "p.fatbin"
    ptx_first.write_bytes(build_fatbin([artifacts[("ptx", "sm_90")], artifacts[("cubin", "sm_80")]]))
    doc = json.loads(cli("which", ptx_first, "--gpu", "80", "--driver", "13.0", "--json", check=0).stdout)
    assert doc["driver"] == "13.0"
    assert cli("which", ptx_first, "--gpu", "80;90", "--disable-ptx-jit", "--jit-cache", "cold", check=1)
    assert "  total: 1 elf, 1 ptx;" in cli("inspect", ptx_first, check=0).stdout
    empty = tmp_path / "notes.whl"
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("notes.txt", "no device code")
    assert cli("inspect", empty, check=0).stdout == f"{empty}: does not contain device code\n\n"
    assert json.loads(cli("inspect", empty, "--json", check=0).stdout)["files"] == [{"path": str(empty),
                                                                                     "fatbins": []}]  # fmt: skip
    upper = tmp_path / "W.WHL"
    with zipfile.ZipFile(upper, "w") as z:
        z.writestr("k.fatbin", one)
    assert cli("inspect", upper, check=0).stdout.startswith(f"{upper}::k.fatbin: 1 fatbin(s), 1 entries")
    # the member by the name scan and inspect print for it: the archive's suffix in any case
    member = cli("inspect", f"{upper}::k.fatbin", check=0).stdout
    assert member.startswith(f"{upper}::k.fatbin: 1 fatbin(s), 1 entries"), member


def test_which_tables_name_their_columns(which_inputs):
    """A fatbin's table says which entry loads; the verdict over several says each GPU's status."""
    one = cli("which", which_inputs / "one.fatbin", "--gpu", "80", check=0).stdout
    assert re.split(r"\s{2,}", one.splitlines()[0].strip()) == ["gpu", "loads", "why"]
    blocks = cli("which", which_inputs / "h.o", "--gpu", "80;90", check=0).stdout.split("\n\n")
    assert re.split(r"\s{2,}", blocks[0].splitlines()[1].strip()) == ["gpu", "loads", "why"]
    assert re.split(r"\s{2,}", blocks[2].splitlines()[1].strip()) == ["gpu", "status", "why"]


def test_relocatable_adds_the_device_link_input_of_a_linked_file(artifacts, tmp_path):
    """A file with a .nv_fatbin section is linked: its __nv_relfatbin fatbins are device-link input, listed only
    with --relocatable (as cuobjdump does; iter_fatbins' relocatable=None)."""
    from elf_testing import make_elf

    one = build_fatbin([artifacts[("cubin", "sm_80")]])
    two = build_fatbin([artifacts[("cubin", "sm_90")]])
    path = tmp_path / "linked.so"
    path.write_bytes(make_elf([(".nv_fatbin", 1, one), ("__nv_relfatbin", 1, two)]))
    plain = cli("inspect", path, check=0).stdout
    assert plain.splitlines()[0].endswith("1 fatbin(s), 1 entries")
    both = cli("inspect", path, "--relocatable", check=0).stdout
    assert both.splitlines()[0].endswith("2 fatbin(s), 2 entries")


OPTIONS_SRC = r"""
#if __cplusplus < 202002L
#error needs C++20
#endif
#if FLAG != 1
#error FLAG must be 1
#endif
static_assert(EXPR, "EXPR");
template <typename T> __global__ void scale(T* x, T a, int n) { int i = threadIdx.x; if (i < n) x[i] *= a; }
"""


def test_compile_options_reach_the_compiler_and_the_summary_says_what_was_written(tmp_path, monkeypatch):
    """--std, -D NAME (defined as 1, as nvcc does), -D NAME=VALUE whose value holds '=', --ltoir-for, --group and
    -j reach the build; the summary goes to standard output, the symbols file is indented JSON."""
    from cuda_fatbin import _program

    src = tmp_path / "k.cu"
    src.write_text(OPTIONS_SRC)
    seen = []
    real = _program.Program.compile

    def spy(self, *args, **kwargs):
        seen.append(kwargs)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(_program.Program, "compile", spy)
    base = ["compile", src, "--arch", "80", "-DFLAG", "-D", "EXPR=1==1", "--std", "c++20"]
    res = cli(*base, "-o", tmp_path / "a.fatbin", "--name-expression", "scale<float>", "--symbols",
              tmp_path / "s.json", "--ltoir-for", "80", "-j", "3", check=0)  # fmt: skip
    assert res.stderr == ""
    assert res.stdout == (f"{tmp_path / 'a.fatbin'}: {(tmp_path / 'a.fatbin').stat().st_size} bytes: "
                          "elf sm_80, ptx sm_80, ltoir sm_80\n  scale<float> -> _Z5scaleIfEvPT_S0_i\n")  # fmt: skip
    assert (tmp_path / "s.json").read_text() == '{\n "scale<float>": "_Z5scaleIfEvPT_S0_i"\n}\n'
    (kw,) = seen
    assert kw["max_workers"] == 3 and kw["group"] is False and kw["ltoir_for"] == "80"
    assert isinstance(kw["progress"], cuda_fatbin._cli._common._Progress) and kw["cache"] is None
    cli(*base[:-1], "c++17", "-o", tmp_path / "b.fatbin", "-q", check=1)  # --std is not dropped
    res = cli(*base, "-o", tmp_path / "g.fatbin", "--group", "--json", check=0)
    assert seen[-1]["group"] is True and seen[-1]["ltoir_for"] == ()
    assert json.loads(res.stdout)["cache"] is None and res.stderr == ""
    plan = cli(*base, "-o", tmp_path / "p.fatbin", "--ltoir-for", "80", "--dry-run", check=0).stdout
    assert "-> ltoir" in plan, plan


def test_a_cache_report_is_shown_unless_quiet(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text(OPTIONS_SRC)
    base = ["compile", src, "--arch", "80", "-DFLAG", "-DEXPR=1", "--std", "c++20", "--cache", tmp_path / "c"]
    assert cli(*base, "-o", tmp_path / "a.fatbin", check=0).stderr == "cache: 0 hit(s), 2 miss(es), 0 corrupt\n"
    assert cli(*base, "-o", tmp_path / "b.fatbin", check=0).stderr == "cache: 2 hit(s), 0 miss(es), 0 corrupt\n"
    assert cli(*base, "-o", tmp_path / "c.fatbin", "-q", check=0).stderr == ""
    assert json.loads(cli(*base, "-o", tmp_path / "d.fatbin", "--json", check=0).stdout)["cache"]["hits"]


def test_ctrl_c_handler_while_compiling_and_restored_after(monkeypatch, capsys):
    """First Ctrl-C: KeyboardInterrupt (the running compiles are awaited, said so); second: exit 130 at once.
    The previous handler is back afterwards, and no handler is set from a thread (Python refuses there)."""
    import signal
    import threading

    from cuda_fatbin import _jobs
    from cuda_fatbin._cli._interrupt import interruptible

    before = signal.getsignal(signal.SIGINT)
    exits = []
    monkeypatch.setattr(os, "_exit", exits.append)
    with interruptible("compile"):
        handler = signal.getsignal(signal.SIGINT)
        assert handler is not before and _jobs.awaiting is not None
        with pytest.raises(KeyboardInterrupt):
            handler(signal.SIGINT, None)
        assert exits == []
        for running in (1, 2, 0):
            _jobs.awaiting(running)
        handler(signal.SIGINT, None)  # os._exit, replaced here, returned
        assert exits == [130]
    assert signal.getsignal(signal.SIGINT) is before and _jobs.awaiting is None
    assert capsys.readouterr().err == (
        "cuda-fatbin compile: interrupted; waiting for 1 running compile; Ctrl-C again to quit now\n"
        "cuda-fatbin compile: interrupted; waiting for 2 running compiles; Ctrl-C again to quit now\n"
        "cuda-fatbin compile: interrupted\n"
    )
    errors = []

    def in_thread():
        try:
            with interruptible("compile"):
                pass
        except BaseException as e:  # the test reports it
            errors.append(e)

    t = threading.Thread(target=in_thread)
    t.start()
    t.join()
    assert errors == [] and signal.getsignal(signal.SIGINT) is before


def test_progress_shows_on_a_terminal_only(monkeypatch):
    """rich's transient bar, one task named after the job running; a plain counter line without rich."""
    from cuda_fatbin._cli import _common

    calls = []

    class Bar:
        def __init__(self, **kw):
            calls.append(("new", kw))

        def start(self):
            calls.append(("start",))

        def add_task(self, description, total):
            calls.append(("task", description, total))
            return 7

        def update(self, task, **kw):
            calls.append(("update", task, kw))

        def stop(self):
            calls.append(("stop",))

    monkeypatch.setattr("rich.progress.Progress", Bar)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    quiet = _common._Progress(True)  # not a terminal
    quiet(1, 2, "a")
    quiet.close()
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    off = _common._Progress(False)
    off(1, 2, "a")
    off.close()
    assert calls == []
    bar = _common._Progress(True)
    bar(1, 2, "NVRTC sm_80 -> cubin")
    bar(2, 2, "NVRTC sm_90 -> cubin")
    bar.close()
    assert calls[0][1].pop("console").file is terminal  # stderr, never stdout (which carries -o - output)
    assert calls == [("new", {"transient": True}), ("start",), ("task", "compiling", 2),
                     ("update", 7, {"completed": 1, "description": "NVRTC sm_80 -> cubin"}),
                     ("update", 7, {"completed": 2, "description": "NVRTC sm_90 -> cubin"}), ("stop",)]  # fmt: skip
    monkeypatch.setitem(sys.modules, "rich.progress", None)  # rich not installed
    plain = _common._Progress(True)
    plain(1, 2, "a")
    plain(2, 2, "b")
    plain.close()
    assert terminal.getvalue() == "\r[1/2] a".ljust(70) + "\r[2/2] b".ljust(70) + "\n"


@pytest.fixture
def scan_tree(tmp_path) -> Path:
    """many/: six sm_80 fatbins and a symlink; five/: five of them, a cut one, two symlinks."""
    one = build_fatbin([str(Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin")])
    for name, count in (("many", 6), ("five", 5)):
        (tmp_path / name).mkdir()
        for i in range(count):
            (tmp_path / name / f"k{i}.fatbin").write_bytes(one)
    (tmp_path / "five" / "bad.fatbin").write_bytes(one[:40])
    (tmp_path / "five" / "link1").symlink_to(tmp_path / "five" / "k0.fatbin")
    (tmp_path / "five" / "link2").symlink_to(tmp_path / "five" / "k1.fatbin")
    (tmp_path / "many" / "link").symlink_to(tmp_path / "many" / "k0.fatbin")
    (tmp_path / "none").mkdir()
    (tmp_path / "none" / "x.txt").write_text("no device code")
    return tmp_path


LEGEND = ("SASS = SASS for that arch, SASS~ = compatible SASS, PTX = JIT-compiled, PART = some modules only "
          "(per-GPU kernels), DRIVER = needs a newer driver, NONE = no entry, ERROR = could not be read, "
          "OLDDRV = the driver predates the GPU, DROPPED = the driver's branch dropped the GPU "
          "(docs/scan.md)")  # fmt: skip


def test_scan_text_report_in_full(scan_tree):
    """scan's whole text: the summary line, the table, the legend, at most five binaries per uncovered GPU
    ("the first 5" only when there are more), the unreadable inputs, what was not read, the verdict on stderr."""
    t = scan_tree
    no_sm90 = "no entry fits 9.0: SASS sm_80 does not run on 9.0: another major"
    cut = "FatbinFormatError: fatbin declares 4392 bytes of entries but only 24 follow (at offset 0x8)"
    kernels = "    2 kernels without code for 9.0: void scale<float>(float*, float, int), saxpy\n"  # sorted mangled
    res = cli("scan", t / "five", "--gpu", "80", "--gpu", "90", "--driver", "13.0", check=1)
    assert res.stdout == (
        "6 binaries read, 5 with device code, in 1 distribution(s); driver 13.0; 1 input(s) could not be read\n\n"
        "distribution       binaries  8.0    9.0\n"
        "-----------------  --------  -----  -----\n"
        "(no distribution)  6         ERROR  ERROR\n\n"
        f"{LEGEND}\n\n9.0: 5 binaries cannot run:\n"
        + "".join(f"  {t / 'five' / f'k{i}.fatbin'}: {no_sm90}\n{kernels}" for i in range(5))
        + f"\n1 input(s) could not be read (not covered for any GPU):\n  {t / 'five' / 'bad.fatbin'}: {cut}\n"
        "\nnot read: 2 symlinks (symlinks inside a folder are never followed)\n"
    )
    assert res.stderr == "\nsome GPU is NOT covered\n"
    res = cli("scan", t / "many", "--gpu", "90", check=1)
    assert res.stdout == (
        "6 binaries read, 6 with device code, in 1 distribution(s); no driver limit\n\n"
        "distribution       binaries  9.0\n"
        "-----------------  --------  ----\n"
        "(no distribution)  6         NONE\n\n"
        f"{LEGEND}\n\n9.0: 6 binaries cannot run; the first 5:\n"
        + "".join(f"  {t / 'many' / f'k{i}.fatbin'}: {no_sm90}\n{kernels}" for i in range(5))
        + "\nnot read: 1 symlink (symlinks inside a folder are never followed)\n"
    )
    assert res.stderr == "\nsome GPU is NOT covered\n"
    res = cli("scan", t / "many", "--gpu", "80", check=0)
    assert res.stderr == "\nevery GPU is covered\n" and "cannot run" not in res.stdout
    res = cli("scan", t / "none", "--gpu", "80", check=0)
    assert res.stdout.startswith("0 binaries read, 0 with device code, in 0 distribution(s); no driver limit\n\n")
    assert res.stderr == "\nno binary with device code found\n"
    data = cli("scan", t / "many", "--gpu", "80", "--json", check=0).stdout
    assert data.startswith('{\n "schema": ') and data.endswith("\n}\n")  # indented by one, as every --json


def test_scan_progress_on_a_terminal_only(scan_tree, monkeypatch):
    """A counter line per binary on a terminal, wiped at the end; none with --json or off a terminal; -j is
    passed on."""
    from cuda_fatbin import _cli, _scan

    seen = []
    real = _scan.scan

    def spy(*args, **kwargs):
        seen.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(_scan, "scan", spy)
    term, out = Terminal(), Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    monkeypatch.setattr(sys, "stdout", out)
    assert _cli.main(["scan", str(scan_tree / "many"), "--gpu", "80", "-j", "1"]) == 0
    assert seen[-1]["max_workers"] == 1 and callable(seen[-1]["progress"])
    names = sorted(f"k{i}.fatbin" for i in range(6))
    lines = term.getvalue().split("\r")
    assert lines[0] == "" and lines[-2:] == ["".ljust(71), "\nevery GPU is covered\n"], lines
    assert sorted(line.split("] ", 1)[1].rstrip(" ") for line in lines[1:-2]) == names
    assert [line.split("]")[0] for line in lines[1:-2]] == [f"[{i}/6" for i in range(1, 7)]
    assert all(len(line) == 69 for line in lines[1:-2])  # "\r" + 69: one 70-column line overwritten each time
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    assert _cli.main(["scan", str(scan_tree / "many"), "--gpu", "80", "--json"]) == 0
    assert seen[-1]["progress"] is None and term.getvalue() == ""


def test_ptx_for_none_in_any_spelling_and_never_with_archs(source, tmp_path):
    base = ["compile", source, "--arch", "80", "--dry-run", "-o", tmp_path / "x.fatbin"]
    only_sass = "1 job(s), 1 entries:\n  [0] NVRTC sm_80 -> cubin   => cubin sm_80\n"
    for spelling in ("none", "NONE", " None ", ""):
        assert cli(*base, "--ptx-for", spelling, check=0).stdout == only_sass, spelling
    assert "=> ptx sm_80" in cli(*base, check=0).stdout  # the default: PTX of the newest arch
    res = cli(*base, "--ptx-for", "none", "--ptx-for", "80", check=2)
    assert res.stderr == "cuda-fatbin compile: error: 'none' cannot be combined with archs\n"


def test_command_line_errors_and_names_without_device_code_are_escaped(tmp_path):
    """What argparse quotes back (a file name starting with '-', from `scan *`) and the name of a file without
    device code reach the terminal escaped, never as raw control characters."""
    res = cli("inspect", tmp_path, "--\x1b[31mX", check=2)
    assert "\x1b" not in res.stderr and "unrecognized arguments: --\\x1b[31mX" in res.stderr
    plain = tmp_path / "no\x1b[2Jcode.bin"
    from elf_testing import make_elf

    plain.write_bytes(make_elf([(".text", 1, b"code")]))
    res = cli("inspect", plain, check=0)
    assert res.stdout == f"{tmp_path}/no\\x1b[2Jcode.bin: does not contain device code\n\n", res


def test_gpu_installed_asks_the_driver_and_driver_is_checked_first(tmp_path, monkeypatch):
    """`--gpu installed` (any case, beside named GPUs) adds the GPUs the driver lists; without a driver the work
    fails (exit 1) saying what to pass instead; a driver listing none, or a --driver not understood, is a usage
    error (exit 2), worded as one."""
    from types import SimpleNamespace

    from cuda_fatbin import _driver

    path = tmp_path / "k.fatbin"
    path.write_bytes(build_fatbin([str(Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin")]))
    asked = []

    def two_gpus(needed_for, instead):
        asked.append((needed_for, instead))
        return (SimpleNamespace(capability=(9, 0)), SimpleNamespace(capability=(8, 6)))

    monkeypatch.setattr(_driver, "devices", two_gpus)
    doc = json.loads(cli("which", path, "--gpu", "80;INSTALLED", "--json", check=1).stdout)
    assert list(doc["verdict"]) == ["8.0", "9.0", "8.6"], doc
    assert asked == [("--gpu installed", "name the GPUs, e.g. --gpu 90")]

    def no_driver(needed_for, instead):
        raise _driver.NoDriverError(f"{needed_for} needs a GPU and its driver: none here; {instead}")

    monkeypatch.setattr(_driver, "devices", no_driver)
    res = cli("which", path, "--gpu", "installed", check=2)
    assert res.stderr == ("cuda-fatbin which: error: --gpu installed needs a GPU and its driver: none here; "
                          "name the GPUs, e.g. --gpu 90\n")  # fmt: skip
    monkeypatch.setattr(_driver, "devices", lambda needed_for, instead: ())
    assert cli("which", path, "--gpu", "installed", check=2).stderr == "cuda-fatbin which: error: --gpu names no GPU\n"
    res = cli("which", path, "--gpu", "80", "--driver", "bogus", check=2)
    assert res.stderr == ("cuda-fatbin which: error: not a driver or CUDA version: 'bogus'; use '12.4', "
                          "'550.54.14' or 12040\n")  # fmt: skip


def test_extract_output_errors_name_the_folder_and_what_to_do(tmp_path):
    """-o naming a file (or a path through one) says -o is a folder; another error just says what it was."""
    path = tmp_path / "k.fatbin"
    path.write_bytes(build_fatbin([str(Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin")]))
    (tmp_path / "afile").write_bytes(b"")
    hint = "; -o names the folder to write into, which is made if missing"
    for out, why in (("afile", "File exists"), ("afile/sub", "Not a directory")):
        res = cli("extract", path, "-o", out, cwd=tmp_path, check=1)
        assert res.stderr == f"cuda-fatbin extract: {out}: {why}{hint}\n"
    res = cli("extract", path, "-o", "/proc/nope", cwd=tmp_path, check=1)
    assert res.stderr == "cuda-fatbin extract: /proc/nope: No such file or directory\n"


def test_extract_relocatable_writes_a_linked_files_device_link_input(artifacts, tmp_path):
    """As inspect: the __nv_relfatbin fatbins of a linked file are written only with --relocatable."""
    from elf_testing import make_elf

    one = build_fatbin([artifacts[("cubin", "sm_80")]])
    two = build_fatbin([artifacts[("cubin", "sm_90")]])
    path = tmp_path / "linked.so"
    path.write_bytes(make_elf([(".nv_fatbin", 1, one), ("__nv_relfatbin", 1, two)]))
    plain = cli("extract", path, "-o", tmp_path / "a", "-q", check=0)
    both = cli("extract", path, "-o", tmp_path / "b", "-q", "--relocatable", check=0)
    assert plain.stdout == both.stdout == ""
    assert len(os.listdir(tmp_path / "a")) == 1 and len(os.listdir(tmp_path / "b")) == 2


def test_archive_members_by_name_corrupt_repeated_or_a_plain_file_named_with_the_separator(tmp_path):
    """`a.whl::m` reads that member: a corrupt one is named with what is wrong, one of two members of that name is
    refused (inspect lists both); a file whose own name holds "::" is that file, not an archive member."""
    import zipfile

    one = build_fatbin([str(Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin")])
    with zipfile.ZipFile(tmp_path / "c.whl", "w") as z:
        z.writestr("k.fatbin", one)
    data = bytearray((tmp_path / "c.whl").read_bytes())
    data[data.find(one[:16]) + 100] ^= 0xFF
    (tmp_path / "c.whl").write_bytes(bytes(data))
    for args in (["which", "c.whl::k.fatbin", "--gpu", "80"], ["inspect", "c.whl::k.fatbin"]):
        res = cli(*args, cwd=tmp_path, check=1)
        assert res.stderr == f"cuda-fatbin {args[0]}: c.whl::k.fatbin: CRC-32 does not match (corrupt member)\n"
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(tmp_path / "d.whl", "w") as z:
        z.writestr("k.fatbin", one)
        z.writestr("k.fatbin", one)
    res = cli("which", "d.whl::k.fatbin", "--gpu", "80", cwd=tmp_path, check=1)
    assert res.stderr == "cuda-fatbin which: d.whl::k.fatbin: 2 members of that name; read the archive with inspect\n"
    (tmp_path / "x::y.fatbin").write_bytes(one)
    res = cli("which", "x::y.fatbin", "--gpu", "80", cwd=tmp_path, check=0)
    assert "SASS sm_80 runs on 8.0: exact match" in res.stdout


def test_what_scan_passed_over_is_counted_in_words(tmp_path):
    """Once printed "not read: 2 not a regular files": each kind has its own singular and plural."""
    import socket

    one = build_fatbin([str(Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin")])
    (tmp_path / "k.fatbin").write_bytes(one)
    os.mkfifo(tmp_path / "a.fifo")
    res = cli("scan", tmp_path, "--gpu", "80", check=0)
    assert "\nnot read: 1 FIFO, socket or device (symlinks inside" in res.stdout, res.stdout
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(tmp_path / "s.sock"))
        (tmp_path / "l1").symlink_to(tmp_path / "k.fatbin")
        res = cli("scan", tmp_path, "--gpu", "80", check=0)
        named = cli("scan", tmp_path / "s.sock", "--gpu", "80", check=1)  # named: asked for, so an error row
    assert "\nnot read: 2 FIFOs, sockets or devices, 1 symlink (symlinks inside" in res.stdout, res.stdout
    assert f"  {tmp_path / 's.sock'}: OSError: a socket, not a regular file; not read\n" in named.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["compile", "k.txt", "--arch", "80", "-o", "q.fatbin"],
     "compile: error: cannot tell the language of k.txt; pass --lang c++|ptx|nvvm"),
    (["compile", "k.cu", "--arch", "80", "-o", "q.fatbin", "--dry-run", "--json"],
     "compile: error: --dry-run prints the plan as text and --json describes what a compile wrote: use one"),
    (["compile", "k.cu", "--arch", "80", "-o", "-", "--symbols", "-"],
     "compile: error: -o - and --symbols - both write to standard output; send one of them to a file"),
    (["compile", "k.cu", "--arch", "80", "-o", "-", "--json"],
     "compile: error: --json writes to standard output; send -o (and --symbols) to a file"),
    (["compile", "k.cu", "--arch", "80", "-o", "q.fatbin", "--symbols", "-", "--json"],
     "compile: error: --json writes to standard output; send -o (and --symbols) to a file"),
    (["build", "-o", "-", "--json", "k.cu"],
     "build: error: --json writes to standard output; send -o (and --symbols) to a file"),
    (["scan", ".", "--gpu", "80", "--driver", "bogus"],
     "scan: error: not a driver or CUDA version: 'bogus'; use '12.4', '550.54.14' or 12040"),
])  # fmt: skip
def test_usage_errors_say_exactly_what_to_do(tmp_path, args, message):
    """Each refused combination, word for word (exit 2, before any work: nothing written)."""
    (tmp_path / "k.cu").write_text(SRC)
    (tmp_path / "k.txt").write_text(SRC)
    res = cli(*args, cwd=tmp_path, check=2)
    assert res.stderr == f"cuda-fatbin {message}\n" and res.stdout == ""
    assert sorted(os.listdir(tmp_path)) == ["k.cu", "k.txt"]


def test_scan_progress_cuts_long_names_to_fifty_characters(tmp_path, monkeypatch):
    from cuda_fatbin import _cli

    long = "n" * 60 + ".fatbin"
    (tmp_path / long).write_bytes(build_fatbin([str(Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin")]))
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert _cli.main(["scan", str(tmp_path), "--gpu", "80"]) == 0
    assert term.getvalue().startswith(f"\r[1/1] {'n' * 50}".ljust(70) + "\r")


# ------------------------------------------------------------- behaviours that mutation survivors showed untested


def test_which_says_needs_newer_driver_only_where_the_driver_alone_stands_in_the_way(artifacts, tmp_path):
    """With --driver, a GPU that loads nothing reads "needs newer driver" only if, without the driver's limit,
    the same JIT variables would load an entry; ignored SASS (--force-ptx-jit) or refused PTX
    (--disable-ptx-jit, --jit-cache cold) load nothing whatever the driver (rules force_ptx_jit and
    disable_ptx_jit, docs/selection.md)."""
    sass = tmp_path / "sass.fatbin"
    sass.write_bytes(build_fatbin([artifacts[("cubin", "sm_80")]]))
    ptx = tmp_path / "ptx.fatbin"
    ptx.write_bytes(build_fatbin([artifacts[("ptx", "sm_80")]]))
    res = cli("which", sass, "--gpu", "80", "--driver", "12.0", "--force-ptx-jit", check=1)
    assert _rows(res.stdout) == [["8.0", "none", "no entry fits 8.0: SASS sm_80: CUDA_FORCE_PTX_JIT=1 ignores SASS"]]
    res = cli("which", ptx, "--gpu", "80", "--driver", "12.0", "--disable-ptx-jit", "--jit-cache", "cold", check=1)
    assert [row[:2] for row in _rows(res.stdout)] == [["8.0", "none"]]
    doc = json.loads(cli("which", ptx, "--gpu", "80", "--driver", "12.0", "--json", check=1).stdout)
    assert doc["fatbins"][0]["gpus"][0]["status"] == "needs newer driver"  # its PTX ISA is newer than CUDA 12.0's
    res = cli("which", ptx, "--gpu", "80", "--driver", "12.0", "--disable-ptx-jit", "--jit-cache", "warm", check=1)
    assert [row[:2] for row in _rows(res.stdout)] == [["8.0", "needs newer driver"]]  # a warm cache holds its JIT


def test_which_json_names_each_gpu_and_the_entry_it_loads(artifacts, tmp_path):
    path = tmp_path / "k.fatbin"
    path.write_bytes(build_fatbin([artifacts[("cubin", "sm_80")]]))
    doc = json.loads(cli("which", path, "--gpu", "80;90", "--json", check=1).stdout)
    loads, none = doc["fatbins"][0]["gpus"]
    assert (loads["gpu"], loads["capability"], none["gpu"], none["entry"]) == ("sm_80", "8.0", "sm_90", None)
    assert (loads["entry"]["kind"], loads["entry"]["arch"], loads["entry"]["offset"]) == ("elf", "sm_80", 16)


def test_which_reads_relocatable_and_stored_fatbins_into_its_verdict_only(artifacts, tmp_path, monkeypatch):
    """The verdict counts what scan counts (a linked file's __nv_relfatbin too, though cuobjdump skips it beside
    a .nv_fatbin; a fatbin stored as data); the per-fatbin tables show only what the driver loads. One fatbin
    stored as data still gets the verdict, which says so. On a terminal --wide keeps every table plain."""
    from elf_testing import make_elf

    fatbin = build_fatbin([artifacts[("cubin", "sm_80")]])
    both = tmp_path / "both.o"
    both.write_bytes(make_elf([(".nv_fatbin", 1, fatbin), ("__nv_relfatbin", 1, fatbin)]))
    res = cli("which", both, "--gpu", "80", check=0)
    assert res.stdout == (
        "gpu  loads       why\n---  ----------  -----------------------------------\n"
        "8.0  SASS exact  SASS sm_80 runs on 8.0: exact match\n\n"
        f"{both}: 2 fatbins (1 relocatable, 0 stored as data); per GPU (docs/scan.md):\n"
        "gpu  status      why\n---  ----------  -----------------------------------\n"
        "8.0  SASS exact  SASS sm_80 runs on 8.0: exact match\n"
    )  # fmt: skip
    stored = tmp_path / "data.o"
    stored.write_bytes(make_elf([(".rodata", 1, bytes(16) + fatbin)]))
    res = cli("which", stored, "--gpu", "80", check=0)
    head = f"{stored}: 1 fatbins (0 relocatable, 1 stored as data); per GPU (docs/scan.md):"
    assert res.stdout.splitlines()[0] == head
    assert _rows("\n".join(res.stdout.splitlines()[1:]))[0][:2] == ["8.0", "SASS exact"]
    wheel = tmp_path / "w.whl"  # a wheel named alone is read as the bytes it is: its stored members are data
    import zipfile

    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("a.fatbin", fatbin)
        z.writestr("b.fatbin", fatbin)
    res = cli("which", wheel, "--gpu", "80", check=0)
    head = f"{wheel}: 2 fatbins (0 relocatable, 2 stored as data); per GPU (docs/scan.md):"
    assert res.stdout.splitlines()[0] == head
    from cuda_fatbin._cli import main

    term = Terminal()
    monkeypatch.setattr(sys, "stdout", term)
    main(["which", str(both), "--gpu", "80", "--wide"])
    assert "─" not in term.getvalue() and "━" not in term.getvalue() and term.getvalue().count("\n---  ") == 2


def test_inspect_reads_archive_members_with_the_embedded_and_relocatable_options(artifacts, tmp_path):
    """A member is read as a file of that name is: --embedded adds fatbins stored as data, --relocatable the
    __nv_relfatbin beside a .nv_fatbin. A top-level .zip is listed as a .whl is; a file whose name holds '::' but
    names no archive is read as it is (docs/scan.md)."""
    import zipfile

    from elf_testing import make_elf

    fatbin = build_fatbin([artifacts[("cubin", "sm_80")]])
    archive = tmp_path / "m.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("lib/h.so", make_elf([(".nv_fatbin", 1, fatbin), ("__nv_relfatbin", 1, fatbin),
                                         (".rodata", 1, bytes(16) + fatbin)]))  # fmt: skip

    def seen(*options):
        doc = json.loads(cli("inspect", archive, "--json", *options, check=0).stdout)
        return [(f["path"], [(fb["relocatable"], fb["embedded"]) for fb in f["fatbins"]]) for f in doc["files"]]

    member = f"{archive}::lib/h.so"
    assert seen() == [(member, [(False, False)])]
    assert seen("--embedded") == [(member, [(False, False), (False, True)])]
    assert seen("--relocatable") == [(member, [(False, False), (True, False)])]
    odd = tmp_path / "we::ird.fatbin"
    odd.write_bytes(fatbin)
    assert cli("inspect", odd, check=0).stdout.startswith(f"{odd}: 1 fatbin(s), 1 entries\n")
    res = cli("inspect", f"{archive}::nope", check=1)
    assert res.stderr == f"cuda-fatbin inspect: {archive}: no member named nope\n"


def test_inspect_goes_on_past_a_file_without_device_code_and_warns_of_a_header_mismatch(artifacts, tmp_path):
    import struct

    from elf_testing import make_elf

    fatbin = build_fatbin([artifacts[("cubin", "sm_80")]])
    host = tmp_path / "host.o"
    host.write_bytes(make_elf([(".text", 1, b"code")]))
    patched = bytearray(fatbin)
    struct.pack_into("<I", patched, 16 + 28, 90)  # the entry header's arch (docs/formats.md)
    odd = tmp_path / "odd.fatbin"
    odd.write_bytes(patched)
    res = cli("inspect", host, odd, check=0)
    assert res.stdout.startswith(f"{host}: does not contain device code\n\n{odd}: 1 fatbin(s), 1 entries\n")
    assert ("\n  warning: entry 1 (elf sm_90): the header says sm_90, the ELF image is for sm_80; the driver goes by "
            "the header (docs/selection.md, rule header_mismatch)\n") in res.stdout  # fmt: skip


def test_command_line_errors_keep_their_line_breaks_and_escape_the_rest(tmp_path):
    res = cli("inspect", tmp_path, "--bogus\nline\x1b", check=2)
    assert res.stderr.endswith("cuda-fatbin: error: unrecognized arguments: --bogus\nline\\x1b\n")


def test_skipped_kinds_are_counted_in_words():
    from cuda_fatbin._cli.main_scan import _counted

    assert [_counted(1, "symlink"), _counted(2, "symlink"), _counted(3, "not a regular file")] == [
        "1 symlink", "2 symlinks", "3 FIFOs, sockets or devices"]  # fmt: skip
    assert _counted(2, "door") == "2 door"  # a kind of a newer scan: its own word


def test_build_passes_an_index_part_to_libnvfatbin_unchecked_and_says_what_it_wrote(tmp_path):
    """An index is text, not a binary of a known kind: libnvfatbin judges it (ERROR_INVALID_INDEX here)."""
    cubin = str(Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin")
    index = tmp_path / "idx.txt"
    index.write_text("not an index")
    res = cli("build", "--part", f"kind=index,file={index},identifier=i", "--part", f"file={cubin}", "-o",
              tmp_path / "o.fatbin", check=1)  # fmt: skip
    assert res.stderr == ("cuda-fatbin build: FatbinError: nvFatbinAddIndex failed for part #0 (index, identifier "
                          "'i'): ERROR_INVALID_INDEX (15): invalid index input\n")  # fmt: skip
    res = cli("build", "--part", f"file={cubin}", "-o", tmp_path / "k.fatbin", check=0)
    assert (res.stdout, res.stderr) == (f"{tmp_path / 'k.fatbin'}: 4408 bytes, 1 part(s)\n", "")


def test_extract_reads_standard_input(artifacts, tmp_path, monkeypatch):
    fatbin = build_fatbin([artifacts[("cubin", "sm_80")]])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(fatbin)))
    res = cli("extract", "-", "-o", tmp_path / "out", check=0)
    assert res.stdout == f"{tmp_path / 'out' / 'stdin.1.sm_80.cubin'}\n"


def test_a_dangling_link_or_a_loop_of_links_is_named_with_the_system_reason(tmp_path):
    """scan said "no such file or directory" for a loop of links; each command now gives the system's reason."""
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "loop_a").symlink_to(tmp_path / "loop_b")
    (tmp_path / "loop_b").symlink_to(tmp_path / "loop_a")
    for command in ("scan", "inspect", "which"):
        gpu = ["--gpu", "80"] if command != "inspect" else []
        res = cli(command, tmp_path / "dangling", *gpu, check=1)
        assert res.stderr == f"cuda-fatbin {command}: {tmp_path / 'dangling'}: No such file or directory\n"
        res = cli(command, tmp_path / "loop_a", *gpu, check=1)
        assert res.stderr == f"cuda-fatbin {command}: {tmp_path / 'loop_a'}: Too many levels of symbolic links\n"
        (tmp_path / "file").write_bytes(b"")
        res = cli(command, tmp_path / "file" / "sub", *gpu, check=1)
        assert res.stderr == f"cuda-fatbin {command}: {tmp_path / 'file' / 'sub'}: Not a directory\n"
        odd = tmp_path / "two\nlines\x1b[31m"  # missing, and its name is one escaped line on the terminal
        res = cli(command, odd, *gpu, check=1)
        assert res.stderr == f"cuda-fatbin {command}: {shown(str(odd))}: No such file or directory\n"
        assert "\x1b" not in res.stderr and res.stderr.count("\n") == 1


def test_which_reads_an_archive_member_standard_input_and_names_what_it_cannot_read(artifacts, tmp_path,
                                                                                    monkeypatch):  # fmt: skip
    """`which a.zip::member` judges every fatbin of the member as scan does (relocatable and stored ones in the
    verdict); `-` reads standard input; a path that cannot be opened is named with the reason."""
    import zipfile

    from elf_testing import make_elf

    fatbin = build_fatbin([artifacts[("cubin", "sm_80")]])
    archive = tmp_path / "m.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("lib/h.so", make_elf([(".nv_fatbin", 1, fatbin), ("__nv_relfatbin", 1, fatbin),
                                         (".rodata", 1, bytes(16) + fatbin)]))  # fmt: skip
    res = cli("which", f"{archive}::lib/h.so", "--gpu", "80", check=0)
    verdict = res.stdout.split("\n\n")[1].splitlines()[0]
    assert verdict == f"{archive}::lib/h.so: 3 fatbins (1 relocatable, 1 stored as data); per GPU (docs/scan.md):"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(fatbin)))
    assert _rows(cli("which", "-", "--gpu", "80", check=0).stdout) == [
        ["8.0", "SASS exact", "SASS sm_80 runs on 8.0: exact match"]]  # fmt: skip
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    res = cli("which", tmp_path / "dangling", "--gpu", "80", check=1)
    assert res.stderr == f"cuda-fatbin which: {tmp_path / 'dangling'}: No such file or directory\n"
    for command in ("inspect", "extract"):  # extract names the input, not its output folder
        res = cli(command, tmp_path / "dangling", *(["-o", tmp_path / "out"] if command == "extract" else []), check=1)
        assert res.stderr == f"cuda-fatbin {command}: {tmp_path / 'dangling'}: No such file or directory\n"


def test_compile_cache_flags_are_checked_and_a_bare_cache_uses_the_default_folder(tmp_path, monkeypatch):
    from cuda_fatbin import _cache

    src = tmp_path / "k.cu"
    src.write_text('extern "C" __global__ void k(int* p) { p[0] = 41; }\n')
    out = tmp_path / "k.fatbin"
    res = cli("compile", src, "--arch", "80", "--cache-max-files", "3", "-o", out, check=2)
    assert res.stderr == "cuda-fatbin compile: error: --cache-exclude and --cache-max-files apply to --cache; add " \
                         "--cache [DIR]\n"  # fmt: skip
    res = cli("compile", src, "--arch", "80", "--cache", src, "-o", out, check=2)
    assert res.stderr == (f"cuda-fatbin compile: error: --cache {src}: that is a file, not a cache folder; write "
                          "--cache=DIR, or put a bare --cache after the source file\n")  # fmt: skip
    res = cli("compile", src, "--arch", "80", "--cache", tmp_path / "c", "--cache-max-files", "0", "-o", out, check=2)
    assert res.stderr == "cuda-fatbin compile: error: --cache-max-files 0: give a positive number of files\n"
    cli("compile", src, "--arch", "80", "--cache", tmp_path / "c", "--cache-max-files", "1", "-o", out, check=0)
    assert (tmp_path / "c").is_dir()
    monkeypatch.setattr(_cache, "default_cache_dir", lambda: tmp_path / "default")
    cli("compile", src, "--arch", "80", "--ptx-for", "", "-o", out, "--cache", check=0)
    assert (tmp_path / "default").is_dir()
    assert [(e.kind, str(e.arch)) for e in read_fatbin(out).iter_entries()] == [("elf", "sm_80")]  # "" is none


def test_build_passes_producer_and_address_bits_to_libnvfatbin(tmp_path):
    cubin = str(Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin")
    out = tmp_path / "p.fatbin"
    cli("build", "--part", f"file={cubin}", "--producer", "opencl", "--address-bits", "64", "-o", out, check=0)
    assert [(e.producer, e.address_bits) for e in read_fatbin(out).iter_entries()] == [("opencl", 64)]
    res = cli("build", "--part", f"file={cubin}", "--address-bits", "32", "-o", tmp_path / "q.fatbin", check=1)
    assert res.stderr.startswith("cuda-fatbin build: FatbinError: nvFatbinAddCubin failed for part #0 (cubin sm_80)")


def test_scan_wide_keeps_its_table_plain_on_a_terminal(artifacts, tmp_path, monkeypatch):
    from cuda_fatbin._cli import main

    (tmp_path / "k.fatbin").write_bytes(build_fatbin([artifacts[("cubin", "sm_80")]]))
    for wide, boxed in (([], True), (["--wide"], False)):
        term = Terminal()
        monkeypatch.setattr(sys, "stdout", term)
        main(["scan", str(tmp_path), "--gpu", "80", *wide])
        assert ("─" in term.getvalue() or "━" in term.getvalue()) is boxed, term.getvalue()


_KERNEL = 'extern "C" __global__ void k(int* p) { p[0] = 43; }\n'


@pytest.mark.parametrize(("output", "message"), [
    ("k.cubin", "-o k.cubin: a .cubin file holds a cubin, but this writes a fatbin; name it k.fatbin; to get single "
                "entries, run cuda-fatbin extract on the fatbin (--kind elf|ptx|ltoir)"),
    ("k.PTX", "-o k.PTX: a .PTX file holds PTX, but this writes a fatbin; name it k.fatbin; to get single entries, run "
              "cuda-fatbin extract on the fatbin (--kind elf|ptx|ltoir)"),
    ("k.ltoir", "-o k.ltoir: a .ltoir file holds LTO-IR, but this writes a fatbin; name it k.fatbin; to get single "
                "entries, run cuda-fatbin extract on the fatbin (--kind elf|ptx|ltoir)"),
    ("k.json", "-o k.json: a .json file holds JSON, but this writes a fatbin; name it k.fatbin"),
    ("none/k.fatbin", "-o none/k.fatbin: there is no folder none; create it first (mkdir -p none)"),
    ("sub", "-o sub is a directory; name a file in it"),
    ("/dev/null", "-o /dev/null is not a regular file (a device, FIFO or socket); it is not replaced: name a file, "
                  "or - for standard output"),
])  # fmt: skip
def test_compile_refuses_an_output_it_should_not_write_before_compiling(tmp_path, output, message):
    (tmp_path / "k.cu").write_text(_KERNEL)
    (tmp_path / "sub").mkdir()
    res = cli("compile", "k.cu", "--arch", "80", "-o", output, cwd=tmp_path, check=2)
    assert res.stderr == f"cuda-fatbin compile: error: {message}\n"


def test_outputs_are_the_same_file_by_their_folders_real_paths(tmp_path, monkeypatch):
    """-o and --symbols name one file when their folders resolve to one and their names match (the last
    component is not resolved); `-` is standard output, never a file; a binary on a terminal is refused."""
    from cuda_fatbin._cli import main

    (tmp_path / "k.cu").write_text(_KERNEL)
    (tmp_path / "sub").mkdir()
    res = cli("compile", "k.cu", "--arch", "80", "-o", "out", "--symbols", "./out", cwd=tmp_path, check=2)
    assert res.stderr == ("cuda-fatbin compile: error: --symbols ./out is the -o output (out): writing it would "
                          "replace what this reads; name another file\n")  # fmt: skip
    cli("compile", "k.cu", "--arch", "80", "-o", "sub/out", "--symbols", "out", cwd=tmp_path, check=0)
    assert (tmp_path / "sub" / "out").is_file() and json.loads((tmp_path / "out").read_text()) == {}
    cubin = str(Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin")
    monkeypatch.setattr(sys, "stdout", Terminal())
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    assert main(["build", "--part", f"file={cubin}", "-o", "-"]) == 2  # a binary to a terminal
    assert err.getvalue() == ("cuda-fatbin build: error: -o - writes a fatbin to standard output, which is a "
                              "terminal: redirect it (> k.fatbin) or pipe it (| cuda-fatbin inspect -)\n")  # fmt: skip
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))
    monkeypatch.chdir(tmp_path)
    assert main(["compile", "k.cu", "--arch", "80", "-o", "-", "--symbols", "./-"]) == 0
    assert (tmp_path / "-").is_file()  # a file named "-" in a folder is a file; "-" alone is standard output

    class BinaryTerminal(io.TextIOWrapper):
        def isatty(self):
            return True

    term = BinaryTerminal(io.BytesIO(), encoding="utf-8", write_through=True)
    monkeypatch.setattr(sys, "stdout", term)
    monkeypatch.chdir(tmp_path)
    assert main(["compile", "k.cu", "--arch", "80", "-o", "k.fatbin", "--symbols", "-"]) == 0  # JSON: readable there
    term.flush()
    assert json.loads(term.buffer.getvalue()) == {}


def test_progress_never_reaches_standard_output_which_carries_the_fatbin(tmp_path, monkeypatch):
    """`cuda-fatbin compile k.cu --arch 80;90 -o - > k.fatbin` from a terminal: the bar is drawn on stderr; the
    fatbin on stdout is the bytes -o FILE writes (rich's bar, on its default console, put a newline and escape
    codes into it)."""
    from cuda_fatbin._cli import main

    class Binary(io.TextIOWrapper):
        def __init__(self, tty):
            super().__init__(io.BytesIO(), encoding="utf-8", write_through=True)
            self.tty = tty

        def isatty(self):
            return self.tty

    (tmp_path / "k.cu").write_text(_KERNEL)
    monkeypatch.chdir(tmp_path)
    cli("compile", "k.cu", "--arch", "80;90", "-o", "k.fatbin", check=0)
    for tty in (False, True):
        out, err = Binary(tty), Terminal()
        monkeypatch.setattr(sys, "stdout", out)
        monkeypatch.setattr(sys, "stderr", err)
        if tty:
            assert main(["compile", "k.cu", "--arch", "80;90", "-o", "k2.fatbin"]) == 0
            size = (tmp_path / "k2.fatbin").stat().st_size
            assert out.buffer.getvalue() == f"k2.fatbin: {size} bytes: elf sm_80, elf sm_90, ptx sm_90\n".encode()
        else:
            assert main(["compile", "k.cu", "--arch", "80;90", "-o", "-"]) == 0
            assert out.buffer.getvalue() == (tmp_path / "k.fatbin").read_bytes()


def test_unknown_commands_get_the_closest_name_at_half_similarity(tmp_path):
    """difflib's ratio 0.5 is the cutoff: 'xxxscanxxx' (0.57 to scan) gets a suggestion, 'zzqqxx' none."""
    commands = "(commands: compile, build, inspect, which, scan, diff, size, metadata, extract, gpus, probe)"
    res = cli("xxxscanxxx", check=2)
    assert res.stderr.endswith(f"error: unknown command 'xxxscanxxx'; did you mean 'scan'? {commands}\n")
    res = cli("zzqqxx", check=2)
    assert res.stderr.endswith(f"error: unknown command 'zzqqxx' {commands}\n")


def test_nvrtc_option_values_may_start_with_dashes_and_one_is_required(tmp_path):
    (tmp_path / "k.cu").write_text(_KERNEL)
    for flag in ("-X", "--nvrtc-option"):
        cli("compile", "k.cu", "--arch", "80", "-o", "k.fatbin", flag, "--use_fast_math", cwd=tmp_path, check=0)
        res = cli("compile", "k.cu", "--arch", "80", "-o", "k.fatbin", flag, cwd=tmp_path, check=2)
        assert res.stderr.endswith("cuda-fatbin compile: error: argument -X/--nvrtc-option: expected one argument\n")


def test_compile_reads_its_source_through_a_symlink_and_names_a_missing_one(tmp_path):
    (tmp_path / "k.cu").write_text(_KERNEL)
    (tmp_path / "link.cu").symlink_to(tmp_path / "k.cu")
    cli("compile", "link.cu", "--arch", "80", "-o", "k.fatbin", cwd=tmp_path, check=0)
    res = cli("compile", "missing.cu", "--arch", "80", "-o", "k.fatbin", cwd=tmp_path, check=1)
    assert res.stderr == "cuda-fatbin compile: missing.cu: No such file or directory\n"


def test_compile_errors_keep_the_compiler_log_lines_and_verbose_prints_the_logs_whole(tmp_path, monkeypatch):
    (tmp_path / "bad.cu").write_text('extern "C" __global__ void k(float* p) { p[0] = undefined_thing; }\n')
    res = cli("compile", "bad.cu", "--arch", "80", "-o", "b.fatbin", cwd=tmp_path, check=1)
    lines = res.stderr.splitlines()
    assert lines[:4] == ["cuda-fatbin compile: FatbinCompileError: 2 compile job(s) failed:",
                         "--- NVRTC sm_80 -> cubin, NVRTC compute_80 -> ptx ---",
                         "nvrtcCompileProgram failed: NVRTC_ERROR_COMPILATION",
                         'bad.cu(1): error: identifier "undefined_thing" is undefined']  # fmt: skip
    (tmp_path / "w.cu").write_text('extern "C" __global__ void k(float* p) { int unused = 3; p[0] = 1; }\n')
    res = cli("compile", "w.cu", "--arch", "80", "--ptx-for", "none", "-o", "w.fatbin", "--verbose", cwd=tmp_path,
              check=0)  # fmt: skip
    assert res.stderr.startswith('[NVRTC sm_80 -> cubin]\nw.cu(1): warning #177-D: variable "unused" was declared '
                                 "but never referenced\n")  # fmt: skip
    res = cli("compile", "w.cu", "--arch", "80", "--ptx-for", "none", "-o", "w.fatbin", "--quiet", cwd=tmp_path,
              check=0)  # fmt: skip
    assert res.stderr == ""


def test_quiet_turns_the_progress_bar_off(tmp_path, monkeypatch):
    from cuda_fatbin._cli import _common, main_compile

    made = []

    class Progress(_common._Progress):
        def __init__(self, enabled):
            made.append(enabled)
            super().__init__(enabled)

    monkeypatch.setattr(main_compile, "_Progress", Progress)
    (tmp_path / "k.cu").write_text(_KERNEL)
    for quiet in ([], ["--quiet"]):
        cli("compile", "k.cu", "--arch", "80;90", "-o", "k.fatbin", *quiet, cwd=tmp_path, check=0)
    assert made == [True, False]
