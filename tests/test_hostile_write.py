# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""What we write is never lost and never leaks: bundles, cache entries, output files (docs/security.md).

Tried as an attacker and a careless user would: symlinks, FIFOs, folders and hard links planted at
every name a build writes, a full disk (a real 256 KiB tmpfs where ``unshare -rm`` may mount one, a
simulated ``ENOSPC`` everywhere), foreign cache entries, caches and deep trees inside the source
folder, and the command line's output paths.
"""

from __future__ import annotations

import contextlib
import doctest
import errno
import hashlib
import io
import json
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

import pytest
from cuda.core.utils import FileStreamProgramCache, InMemoryProgramCache
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_testing import cli_main
from cuda_fatbin import (
    BundleError,
    FatbinCompileError,
    KernelBundle,
    KernelSuite,
    Program,
    ProgramOptions,
    _cache,
    _cli,
    _files,
    _walk,
)
from cuda_fatbin._multiarch import Job, plan_fatbin

from fatbin_testing import plain

SRC = 'extern "C" __global__ void k(int* p) {{ p[threadIdx.x] = {}; }}'
BAD = 'extern "C" __global__ void k(int* p) { p[0] = ; }'


@pytest.fixture(scope="module")
def job_cache():
    """Compiles shared by every build of this module: a rebuild of the same source is a cache hit."""
    return InMemoryProgramCache()


def build(root, job_cache, **sources):
    suites = {name: KernelSuite(src) for name, src in sources.items()}
    return KernelBundle.build(root, suites, archs=["sm_80"], ptx_for=(), cache=job_cache)


def state(folder: Path) -> dict[str, object]:
    """Every entry of a folder tree: a file's bytes, a link's target, a folder's marker."""
    out: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            rel = str(path.relative_to(folder))
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = path.read_bytes()
    return out


def kernels(root) -> dict[str, bytes]:
    """What a bundle loads, suite by suite (checked against its manifest on the way)."""
    bundle = KernelBundle.open(root)
    return {s: bytes(bundle.load(s, gpu="8.0", driver="13.0").code) for s in bundle.suites}


def file_of(root: Path, suite: str = "k") -> str:
    return json.loads((root / "manifest.json").read_text())["suites"][suite]["file"]


# -- 1. bundles: planted names -------------------------------------------------------------------------


def test_planted_symlinks_at_every_name_the_build_writes_are_never_followed(tmp_path, job_cache):
    reference = build(tmp_path / "reference", job_cache, k=SRC.format(1))
    predicted = reference.manifest["suites"]["k"]["file"]  # content-addressed: anyone can compute it
    outside = tmp_path / "outside"
    outside.mkdir()
    victims = {}
    for name in ("manifest.json", predicted, "k.fatbin", ".manifest.json.tmp", "victim-dir-file"):
        victims[name] = outside / f"victim-{len(victims)}"
        victims[name].write_bytes(b"do not touch")
    (outside / "dir").mkdir()
    (outside / "dir" / "manifest.json").write_bytes(b"do not touch")
    (outside / "dir" / predicted).write_bytes(b"do not touch")
    (outside / "dir" / "copy").mkdir()  # what a build leaves in a staging folder, there a clean-up would remove it
    for name in ("manifest.json", predicted):
        (outside / "dir" / "copy" / name).write_bytes((tmp_path / "reference" / name).read_bytes())
    root = tmp_path / "b"
    root.mkdir()
    for name in ("manifest.json", predicted, "k.fatbin", ".manifest.json.tmp"):  # today's names and yesterday's
        (root / name).symlink_to(victims[name])
    (root / ".cuda-fatbin-build-planted").symlink_to(outside / "dir")  # a staging folder's name, leading out
    (root / ".cuda-fatbin-build-planted2").symlink_to(outside / "dir" / "copy")
    os.link(victims["victim-dir-file"], root / "k.0000000000000000.fatbin")  # a hard link to an outside file
    before = state(outside)

    build(root, job_cache, k=SRC.format(1))

    assert state(outside) == before  # nothing written, removed or created outside the bundle
    assert not (root / "manifest.json").is_symlink() and not (root / predicted).is_symlink()
    assert stat.S_ISREG(os.lstat(root / "manifest.json").st_mode) and stat.S_ISREG(os.lstat(root / predicted).st_mode)
    assert kernels(root) == kernels(tmp_path / "reference")
    # foreign entries stay: names the build does not write, a link, a file whose bytes do not match its name
    assert (root / "k.fatbin").is_symlink() and (root / ".manifest.json.tmp").is_symlink()
    assert (root / ".cuda-fatbin-build-planted").is_symlink() and (root / ".cuda-fatbin-build-planted2").is_symlink()
    assert (root / "k.0000000000000000.fatbin").read_bytes() == b"do not touch"


def test_open_and_load_refuse_a_manifest_or_fatbin_that_is_not_a_regular_file(tmp_path, job_cache):
    good = tmp_path / "good"
    build(good, job_cache, k=SRC.format(1))
    name = file_of(good)
    cases = {
        "manifest symlink": ("manifest.json", lambda p: p.symlink_to(good / "manifest.json"), "a symlink"),
        "manifest FIFO": ("manifest.json", os.mkfifo, "a FIFO, not a regular file"),
        "manifest folder": ("manifest.json", os.mkdir, "a directory, not a regular file"),
        "manifest /dev/zero": ("manifest.json", lambda p: p.symlink_to("/dev/zero"), "a symlink"),
        "fatbin symlink": (name, lambda p: p.symlink_to(good / name), "a symlink, not followed"),
        "fatbin FIFO": (name, os.mkfifo, "a FIFO, not a regular file"),
        "fatbin /dev/zero": (name, lambda p: p.symlink_to("/dev/zero"), "a symlink, not followed"),
        "fatbin folder": (name, os.mkdir, "a directory, not a regular file"),
    }
    for case, (target, plant, words) in cases.items():
        root = tmp_path / case.replace(" ", "_").replace("/", "")
        shutil.copytree(good, root)
        (root / target).unlink()
        plant(root / target)
        t0 = time.perf_counter()
        with pytest.raises(BundleError) as info, fifo_watchdog(root / target) as fired:
            KernelBundle.open(root).load("k", gpu="8.0", driver="13.0")
        assert words in str(info.value), case
        assert not fired and time.perf_counter() - t0 < 5, case  # never waited on the FIFO


def test_bundles_read_through_a_zip_traversable_are_hash_checked(tmp_path, job_cache):
    root = tmp_path / "pkg" / "kernels"
    build(root, job_cache, k=SRC.format(1))
    expected = kernels(root)
    archive = tmp_path / "pkg.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in root.iterdir():
            z.write(path, f"pkg/kernels/{path.name}")
    bundle = KernelBundle.open(zipfile.Path(archive, "pkg/kernels/"))
    loaded = plain(bundle.load("k", gpu="8.0", driver="13.0"))
    assert loaded.code == expected["k"]
    name = file_of(root)
    tampered = tmp_path / "tampered.zip"
    with zipfile.ZipFile(archive) as z, zipfile.ZipFile(tampered, "w") as out:
        for info in z.infolist():
            data = z.read(info)
            out.writestr(info, data[:-1] + bytes([data[-1] ^ 1]) if info.filename.endswith(name) else data)
    with pytest.raises(BundleError, match="does not match its manifest hash"):
        KernelBundle.open(zipfile.Path(tampered, "pkg/kernels/")).fatbin("k")
    missing = tmp_path / "missing.zip"  # the manifest without its fatbin: BundleError, as for a folder
    with zipfile.ZipFile(archive) as z, zipfile.ZipFile(missing, "w") as out:
        for info in z.infolist():
            if not info.filename.endswith(name):
                out.writestr(info, z.read(info))
    opened = KernelBundle.open(zipfile.Path(missing, "pkg/kernels/"))
    for call in (lambda: opened.fatbin("k"), lambda: opened.load("k", gpu="8.0", driver="13.0"),
                 lambda: opened.check("k", gpu="8.0", driver="13.0")):  # fmt: skip
        with pytest.raises(BundleError, match=f"{name} is missing from .*; rebuild the bundle"):
            call()


def test_suites_and_their_sources_are_checked_when_made():
    """A list of suites raised AttributeError inside build; KernelSuite(None) failed only at build time."""
    with pytest.raises(TypeError, match="suites must be a mapping of suite name to KernelSuite; got list"):
        KernelBundle.build("unused", [KernelSuite("x")], archs="80")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="KernelSuite source must be str or bytes; got NoneType"):
        KernelSuite(None)  # type: ignore[arg-type]
    assert not os.path.exists("unused")


@pytest.mark.parametrize(("code_type", "error", "words"), [
    ("cuda", ValueError, "unknown code_type 'cuda' (did you mean 'c++'?): choose 'c++' (CUDA C++), 'ptx' or 'nvvm'"),
    ("cu", ValueError, "(did you mean 'c++'?)"), ("ptxx", ValueError, "(did you mean 'ptx'?)"),
    ("fortran", ValueError, "unknown code_type 'fortran': choose"), (None, TypeError, "code_type must be a str"),
    ("c+", ValueError, "unknown code_type 'c+' (did you mean 'c++'?)"),
    ("nvm", ValueError, "unknown code_type 'nvm' (did you mean 'nvvm'?)"),
    ("cuu", ValueError, "unknown code_type 'cuu' (did you mean 'c++'?)"),
    ("cudaa", ValueError, "unknown code_type 'cudaa' (did you mean 'c++'?)"),
    (3, TypeError, "code_type must be a str ('c++', 'ptx' or 'nvvm'); got int"),
])  # fmt: skip
def test_an_unknown_code_type_is_a_value_error_that_lists_the_choices(code_type, error, words):
    """Program(src, "cuda") raised cuda.core's RuntimeError."""
    with pytest.raises(error, match=re.escape(words)):
        Program('extern "C" __global__ void k() {}', code_type)  # type: ignore[arg-type]
    assert Program('extern "C" __global__ void k() {}', "C++")._fb_code_type == "c++"
    with pytest.raises(TypeError) as info:
        Program('extern "C" __global__ void k() {}', "c++", "sm_80")  # type: ignore[arg-type]
    assert str(info.value) == "options must be a ProgramOptions; got str"


# -- 2. bundles: failed rebuilds, leftovers, readers ---------------------------------------------------


def _enospc_inside(monkeypatch, folder: Path, after: int = 0):
    """``os.write`` fails with ENOSPC for files under ``folder`` once ``after`` bytes went there."""
    real = os.write
    written = [0]

    def write(fd, data):
        if os.readlink(f"/proc/self/fd/{fd}").startswith(str(folder)):
            if written[0] + len(data) > after:
                raise OSError(errno.ENOSPC, "No space left on device")
            written[0] += len(data)
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)


@pytest.mark.parametrize("failure", ["compile error", "disk full", "disk full late", "folder at a new name",
                                     "Ctrl-C before the switch"])  # fmt: skip
def test_a_failed_rebuild_leaves_the_old_bundle_loading_byte_identical_kernels(
    tmp_path, job_cache, monkeypatch, failure
):
    root = tmp_path / "b"
    build(root, job_cache, k=SRC.format(1), m=SRC.format(2))
    (root / "README.md").write_text("the package's own file")
    old, before = kernels(root), state(root)
    good = {"k": SRC.format(3), "m": SRC.format(4)}
    new = dict(good)
    expected: type[BaseException] = OSError
    if failure == "compile error":
        new["m"], expected = BAD, FatbinCompileError
    elif failure == "disk full":
        _enospc_inside(monkeypatch, root)
    elif failure == "disk full late":  # the fatbins fit, the manifest does not
        _enospc_inside(monkeypatch, root, after=2 * len(old["k"]) + 100)
    elif failure == "folder at a new name":
        fresh = build(tmp_path / "scratch", job_cache, **new).manifest["suites"]["m"]["file"]
        (root / fresh).mkdir()
        before = state(root)
    else:
        real = os.replace

        def interrupted(src, dst, **kw):
            if str(dst).endswith("manifest.json"):
                raise KeyboardInterrupt
            return real(src, dst, **kw)

        monkeypatch.setattr(os, "replace", interrupted)
        expected = KeyboardInterrupt
    with pytest.raises(expected):
        build(root, job_cache, **new)
    monkeypatch.undo()
    assert kernels(root) == old  # the old bundle loads exactly as before
    after = state(root)
    assert not [n for n in after if n.startswith(".cuda-fatbin-build-")]  # the staging folder is gone
    assert {n: after[n] for n in before} == before  # every file the old manifest names is untouched
    extra = set(after) - set(before)  # at most the new, unnamed fatbins renamed in before the failure
    assert all(_cache_named(n) for n in extra), extra
    if failure == "folder at a new name":
        (root / fresh).rmdir()  # the user's to remove
    build(root, job_cache, **good)  # the next build succeeds and cleans up what the failed one left
    build(tmp_path / "fresh", job_cache, **good)
    assert kernels(root) == kernels(tmp_path / "fresh")
    assert set(os.listdir(root)) == {"manifest.json", "README.md", *(file_of(root, s) for s in "km")}


def _cache_named(name: str) -> bool:
    from cuda_fatbin._bundle import _FILE_RE

    return _FILE_RE.fullmatch(name) is not None


def test_a_full_tmpfs_during_a_rebuild_leaves_the_old_bundle(tmp_path):
    """A real ENOSPC: a 256 KiB tmpfs mounted in a user namespace, a rebuild whose fatbin cannot fit."""
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=256k t {tmp_path}"],
                           capture_output=True, text=True)  # fmt: skip
    if probe.returncode != 0:
        pytest.skip(f"no tmpfs here (unshare -rm: {probe.stderr.strip()}); test_a_failed_rebuild_... simulates it")
    script = f"""
import errno, sys
from cuda_fatbin import FatbinOptions, KernelBundle, KernelSuite
root = {str(tmp_path / "b")!r}
def make(src):
    return KernelBundle.build(root, {{"k": KernelSuite(src)}}, archs=["sm_80"], ptx_for=(),
                              fatbin_options=FatbinOptions(compress=False))
make('extern "C" __global__ void k(int* p) {{ p[0] = 1; }}')
old = KernelBundle.open(root).fatbin("k")
try:
    make('__device__ unsigned char table[400000] = {{1}};'
         'extern "C" __global__ void k(int* p) {{ p[0] = table[p[1]]; }}')
except OSError as e:
    assert e.errno == errno.ENOSPC, e
else:
    sys.exit("the big rebuild fitted into 256 KiB")
assert KernelBundle.open(root).fatbin("k") == old
print("old bundle intact")
"""
    res = subprocess.run(["unshare", "-rm", "sh", "-c", f'mount -t tmpfs -o size=256k t {tmp_path} && "$0" -c "$1"',
                          sys.executable, script], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert res.returncode == 0 and "old bundle intact" in res.stdout, res.stderr


def test_leftovers_are_cleaned_foreign_files_stay_and_old_readers_are_told(tmp_path, job_cache):
    root = tmp_path / "b"
    build(root, job_cache, k=SRC.format(1), m=SRC.format(2))
    first = file_of(root)
    reader = KernelBundle.open(root)  # opened before the rebuild
    loaded = reader.load("m", gpu="8.0", driver="13.0")  # what it loaded is its own
    foreign = {"__init__.py": b"", "README.md": b"mine", "k.0123456789abcdef.fatbin": b"not what the name says"}
    for name, data in foreign.items():
        (root / name).write_bytes(data)
    (root / "mine").mkdir()
    # a crashed build: its staging folder, and a fatbin renamed in without a manifest naming it
    crashed = build(tmp_path / "scratch", job_cache, k=SRC.format(9)).manifest["suites"]["k"]["file"]
    stage = root / ".cuda-fatbin-build-x1y2z3"
    stage.mkdir()
    shutil.copy(tmp_path / "scratch" / crashed, stage / crashed)
    (stage / "manifest.json").write_bytes((tmp_path / "scratch" / "manifest.json").read_bytes()[:30])  # torn write
    shutil.copy(tmp_path / "scratch" / crashed, root / crashed)
    (root / "linked.0123456789abcdef.fatbin").symlink_to(tmp_path / "scratch" / crashed)  # ours by name, a link

    build(root, job_cache, k=SRC.format(3), m=SRC.format(2))

    assert not stage.exists() and not (root / crashed).exists() and not (root / first).exists()
    assert {n: (root / n).read_bytes() for n in foreign} == foreign and (root / "mine").is_dir()
    assert (root / "linked.0123456789abcdef.fatbin").is_symlink() and (tmp_path / "scratch" / crashed).exists()
    assert sorted(n for n in os.listdir(root) if n.endswith(".fatbin") and n not in foreign) == sorted(
        [file_of(root, "k"), file_of(root, "m"), "linked.0123456789abcdef.fatbin"]
    )
    loaded_plain = plain(loaded)
    assert loaded_plain.code == reader.fatbin("m")  # m did not change: same name, same bytes
    with pytest.raises(BundleError, match="was rebuilt after it was opened: open it again"):
        reader.fatbin("k")
    (root / file_of(root, "m")).unlink()
    with pytest.raises(BundleError, match="is missing from"):
        KernelBundle.open(root).fatbin("m")


def test_concurrent_builds_of_one_folder_take_turns(tmp_path, job_cache):
    root = tmp_path / "b"
    build(root, job_cache, k=SRC.format(0))
    sources = [SRC.format(i) for i in range(1, 7)]
    for src in sources:  # compiled once, so that the threads race on the writes, not on NVRTC
        build(tmp_path / "warm", job_cache, k=src)
    errors: list[BaseException] = []

    def run(src):
        try:
            build(root, job_cache, k=src)
        except BaseException as e:  # pragma: no cover - a failure is the finding
            errors.append(e)

    threads = [threading.Thread(target=run, args=(s,)) for s in sources]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert kernels(root)["k"] in {kernels(_built(tmp_path, job_cache, s))["k"] for s in sources}
    assert not [n for n in os.listdir(root) if n.startswith(".cuda-fatbin-build-")]
    assert [n for n in os.listdir(root) if n.endswith(".fatbin")] == [file_of(root)]  # the others were removed


def _built(tmp_path: Path, job_cache, src: str) -> Path:
    root = tmp_path / f"ref-{hashlib.sha256(src.encode()).hexdigest()[:8]}"
    if not root.exists():
        build(root, job_cache, k=src)
    return root


def test_suite_names_are_the_manifest_pattern(tmp_path, job_cache):
    for bad in ("é", "../x", ".hidden", "-x", "a" * 101, "a/b", ""):
        with pytest.raises(ValueError, match="suite name"):
            build(tmp_path / "x", job_cache, **{bad: SRC.format(1)})
    assert not (tmp_path / "x").exists()  # refused before anything was compiled or created
    long = "a" * 100
    build(tmp_path / "y", job_cache, **{long: SRC.format(1)})
    assert KernelBundle.open(tmp_path / "y").suites == [long]


# -- 3. cache entries are untrusted files --------------------------------------------------------------


@contextlib.contextmanager
def fifo_watchdog(path: Path, after: float = 5.0):
    """If a reader still blocks on the FIFO at ``path`` after ``after`` seconds, unblock it and record that.

    A regression then fails the test (``fired``) instead of hanging the suite.
    """
    stop, fired = threading.Event(), []

    def watch():
        if stop.wait(after):
            return
        while not stop.is_set():
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)  # opens only while a reader waits
            except OSError:
                pass
            else:
                if stat.S_ISFIFO(os.fstat(fd).st_mode):
                    fired.append(time.perf_counter())
                os.close(fd)
            stop.wait(0.1)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield fired
    finally:
        stop.set()
        thread.join()


def _nested_entry() -> bytes:
    head = b"[" * 100_000 + b"]" * 100_000
    body = _cache._MAGIC + struct.pack("<I", len(head)) + head
    return body + hashlib.sha256(body).digest()  # a valid checksum over a hostile header


PLANTS = {
    "FIFO": lambda p: os.mkfifo(p),
    "symlink to /dev/zero": lambda p: p.symlink_to("/dev/zero"),
    "symlink to a good entry": lambda p: p.symlink_to(p.with_name("good-copy")),
    "directory": lambda p: (p.mkdir(), (p / "x").write_text("x")),
    "empty directory": lambda p: p.mkdir(),
    "oversized file": lambda p: (p.write_bytes(b""), os.truncate(p, _cache.MAX_ENTRY_BYTES + 1)),  # sparse
    "nested JSON": lambda p: p.write_bytes(_nested_entry()),
}


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory):
    """A FileStreamProgramCache folder holding the one job of an sm_80 compile, and that compile's fatbin."""
    root = tmp_path_factory.mktemp("cache") / "c"
    with FileStreamProgramCache(root) as cache:
        obj = Program(SRC.format(5), "c++").compile("fatbin", archs=["sm_80"], ptx_for=(), cache=cache)
    return root, bytes(obj.code)


@pytest.mark.parametrize("plant", list(PLANTS))
def test_foreign_cache_entries_count_as_corrupt_and_are_recompiled(tmp_path, warm_cache, plant):
    template, cold = warm_cache
    root = tmp_path / "c"
    shutil.copytree(template, root)
    (entry,) = [p for p in (root / "entries").rglob("*") if p.is_file()]
    shutil.copy(entry, entry.with_name("good-copy"))
    entry.unlink()
    PLANTS[plant](entry)
    with FileStreamProgramCache(root) as cache:
        t0 = time.perf_counter()
        with fifo_watchdog(entry) as fired, pytest.raises(_cache.CacheEntryError):
            key, job = _key_of(cache, entry)  # what a compile does first: look up, decode
            _cache.decode(_cache.read_entry(cache, key) or b"", job)
        assert time.perf_counter() - t0 < 1.0 and not fired  # the look-up is refused at once, never waits
        program = Program(SRC.format(5), "c++")
        with fifo_watchdog(entry) as fired:
            again = program.compile("fatbin", archs=["sm_80"], ptx_for=(), cache=cache)
        assert not fired
    again_plain = plain(again)
    assert again_plain.code == cold
    assert program.last_cache_report.corrupt == ("NVRTC sm_80 -> cubin",) and not program.last_cache_report.hits
    if plant == "directory":  # not ours to empty: it stays, and the job is compiled again each time
        assert (entry / "x").read_text() == "x"
        return
    assert stat.S_ISREG(os.lstat(entry).st_mode)  # removed and stored anew
    with FileStreamProgramCache(root) as cache:
        program = Program(SRC.format(5), "c++")
        program.compile("fatbin", archs=["sm_80"], ptx_for=(), cache=cache)
    assert program.last_cache_report.hits == ("NVRTC sm_80 -> cubin",)


def _key_of(cache, entry: Path) -> tuple[bytes, Job]:
    """The key whose file is ``entry``: the one job of the warm compile."""
    program = Program(SRC.format(5), "c++")
    plan = program.plan(["sm_80"], ptx_for=())
    (job,) = plan.jobs
    labels = {d.path: d.label for d in program._fb_headers}  # the CUDA header folders Program adds
    digest = _cache.include_digest(program._fb_effective, labels=labels) + b""
    key = _cache.job_key(job, program._fb_code, "c++", program._job_options(job), (), program._job_args(())(job),
                         digest)  # fmt: skip
    assert Path(cache._path_for_key(key)) == entry
    return key, job


def test_other_caches_are_held_to_the_same_size_and_parser(monkeypatch):
    class DictCache(dict):  # a cache of the user's own: get, __setitem__, __delitem__
        pass

    cache = DictCache()
    program = Program(SRC.format(6), "c++")
    cold = program.compile("fatbin", archs=["sm_80"], ptx_for=(), cache=cache)
    (key,) = list(cache)
    for value in (_nested_entry(), b"\0" * 2048, "not bytes"):
        cache[key] = value
        monkeypatch.setattr(_cache, "MAX_ENTRY_BYTES", 1024)
        program = Program(SRC.format(6), "c++")
        again = program.compile("fatbin", archs=["sm_80"], ptx_for=(), cache=cache)
        monkeypatch.undo()
        again_plain = plain(again)
        cold_plain = plain(cold)
        assert again_plain.code == cold_plain.code and len(program.last_cache_report.corrupt) == 1


def _job() -> Job:
    return plan_fatbin(["sm_80"], ptx_for=()).jobs[0]


json_docs = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=20,
)


near_valid = st.fixed_dictionaries(  # the shape decode expects, with anything in its fields
    {"job": st.sampled_from(["NVRTC sm_80 -> cubin", "x"]), "artifacts": json_docs | st.just([["cubin", "sm_80", 0]]),
     "symbols": json_docs | st.dictionaries(st.text(max_size=3), json_docs, max_size=2)}
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(header=json_docs | near_valid, payload=st.binary(max_size=64))
def test_any_header_with_a_valid_checksum_decodes_or_is_a_cache_entry_error(header, payload):
    head = json.dumps(header).encode()
    body = _cache._MAGIC + struct.pack("<I", len(head)) + head + payload
    with contextlib.suppress(_cache.CacheEntryError):
        result = _cache.decode(body + hashlib.sha256(body).digest(), _job())
        assert [(k, a) for k, a, _ in result.artifacts] == list(_job().emit)


def _depth(doc) -> int:
    if isinstance(doc, list):
        return 1 + max(map(_depth, doc), default=0)
    if isinstance(doc, dict):
        return 1 + max(map(_depth, doc.values()), default=0)
    return 0


@settings(max_examples=300, deadline=None)
@given(doc=json_docs, limit=st.integers(1, 6))
def test_loads_json_takes_exactly_the_documents_within_its_depth(doc, limit):
    raw = json.dumps(doc).encode()
    if _depth(doc) <= limit:
        assert _files.loads_json(raw, limit) == doc
    else:
        with pytest.raises(ValueError, match=f"nested deeper than {limit} levels"):
            _files.loads_json(raw, limit)


def test_files_examples_run_as_written():
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    runner = doctest.DocTestRunner(optionflags=flags)
    out = io.StringIO()
    for test in doctest.DocTestFinder().find(_files, module=_files):
        runner.run(test, out=out.write)
    assert runner.failures == 0 and runner.tries >= 15, out.getvalue()


# -- 4. the include fingerprint ------------------------------------------------------------------------

KERNEL = 'extern "C" __global__ void k(int* p) { p[0] = 1; }\n'


def cli(*args, cwd, env=None, check=None):
    """The command with bytes output: in this process (mutants reach it), in a subprocess when ``env`` is set."""
    if env is None:
        r = cli_main(*args, cwd=cwd)
        res = subprocess.CompletedProcess(args, r.returncode, r.stdout_bytes, r.stderr.encode())
    else:
        res = subprocess.run([sys.executable, "-m", "cuda_fatbin", *map(str, args)], capture_output=True, cwd=cwd,
                             env={**os.environ, **env}, timeout=300)  # fmt: skip
    if check is not None:
        assert res.returncode == check, f"exit {res.returncode}\n{res.stderr.decode(errors='replace')}"
    return res


def entries(cache: Path) -> int:
    return sum(1 for p in (cache / "entries").rglob("*") if p.is_file())


def test_a_cache_folder_inside_the_source_folder_hits_every_entry_on_the_second_run(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text(KERNEL)
    (tmp_path / ".git").mkdir()
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "build").mkdir()
    args = ["compile", "k.cu", "--arch", "80;90", "-o", "k", "--cache", "kcache", "--cache-exclude", "build"]
    for run in range(3):
        (tmp_path / ".git" / "index").write_bytes(os.urandom(64))  # churn the source folder does not include
        (tmp_path / "__pycache__" / "k.h").write_bytes(os.urandom(64))
        (tmp_path / "build" / "k.h").write_bytes(os.urandom(64))
        res = cli(*args, cwd=tmp_path, check=0)
        assert (b"0 hit(s), 3 miss(es)" if run == 0 else b"3 hit(s), 0 miss(es)") in res.stderr, res.stderr
        assert entries(tmp_path / "kcache") == 3
    res = cli(*args[:-2], cwd=tmp_path, check=0)  # without --cache-exclude the build folder's header counts
    assert b"0 hit(s), 3 miss(es)" in res.stderr
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}  # the default folder, here inside the source folder too
    for run in range(2):
        res = cli("compile", "k.cu", "--arch", "80;90", "-o", "k.fatbin", "--cache", cwd=tmp_path, env=env, check=0)
        assert (b"3 hit(s)" if run else b"3 miss(es)") in res.stderr
    assert entries(tmp_path / "xdg" / "cuda-fatbin") == 3


def _deep_tree(root: Path, depth: int, headers: dict[int, bytes]) -> None:
    """A chain of ``depth`` folders ``d/d/...`` under ``root``, built bottom up with short paths only."""
    scratch = root.parent / f"{root.name}-scratch"
    scratch.mkdir()
    leaf = scratch / "0"
    leaf.mkdir()
    for level in range(depth, 0, -1):
        if level in headers:
            (leaf / "h.h").write_bytes(headers[level])
        parent = scratch / str(depth - level + 1)
        parent.mkdir()
        os.rename(leaf, parent / "d")
        leaf = parent
    os.rename(leaf, root)
    scratch.rmdir()


def _remove_deep_tree(root: Path) -> None:
    """Remove a folder tree of any depth: each subfolder is lifted to a short path before it is emptied."""
    scratch = root.parent / f"{root.name}-rm"
    scratch.mkdir()
    todo, n = [root], 0
    while todo:
        current = todo.pop()
        for name in os.listdir(current):
            path = current / name
            if path.is_dir() and not path.is_symlink():
                n += 1
                todo.append(scratch / str(n))
                os.rename(path, todo[-1])
            else:
                path.unlink()
        current.rmdir()
    scratch.rmdir()


def test_a_3000_deep_tree_is_fingerprinted_without_recursion(tmp_path):
    shm = Path("/dev/shm")  # removing 3,000 folders takes seconds on some disks, milliseconds in memory
    base = Path(tempfile.mkdtemp(dir=shm)) if shm.is_dir() and os.access(shm, os.W_OK) else tmp_path
    root = base / "src"
    _deep_tree(root, 3000, {100: b"#define A 1\n", 1500: b"#define B 1\n", 2999: b"#define C 1\n"})
    try:
        (root / "k.cu").write_text(KERNEL)
        options = ProgramOptions(include_path=[str(root)])
        first = _cache.include_digest(options)
        assert _cache.include_digest(options) == first
        hundred = root.joinpath(*["d"] * 100, "h.h")
        hundred.write_bytes(b"#define A 2\n")
        assert _cache.include_digest(options) != first  # a header 100 folders down is hashed
        for run in range(2):
            res = cli("compile", "k.cu", "--arch", "80", "-o", "k.fatbin", "--cache", "c", cwd=root, check=0)
            assert (b"2 hit(s)" if run else b"2 miss(es)") in res.stderr, res.stderr
    finally:
        _remove_deep_tree(root)
        if base != tmp_path:
            base.rmdir()


def test_a_50000_file_source_folder_works_with_the_flag_the_message_names(tmp_path, capsys):
    for i in range(50_000):
        (tmp_path / f"{i}.h").write_bytes(b"")
    (tmp_path / "k.cu").write_text(KERNEL)  # 50,001 header-like files with the source itself
    base = ["compile", str(tmp_path / "k.cu"), "--arch", "80", "-o", str(tmp_path / "k.fatbin"), "--cache",
            str(tmp_path / "c"), "-q"]  # fmt: skip
    assert _cli.main(base) == 2
    message = capsys.readouterr().err
    assert "--cache-max-files N" in message and "--cache-exclude DIR" in message and str(tmp_path) in message
    assert _cli.main([*base, "--cache-max-files", "50000"]) == 2  # one file too many
    assert _cli.main([*base, "--cache-max-files", "50001"]) == 0
    assert not capsys.readouterr().out
    with pytest.raises(ValueError, match="cache_max_files=N"):
        _cache.include_digest(ProgramOptions(include_path=[str(tmp_path)]))
    many = tmp_path / "many"
    many.mkdir()
    for i in range(30_000):  # the other way out the message names: a folder of them left out
        os.rename(tmp_path / f"{i}.h", many / f"{i}.h")
    assert _cli.main([*base, "--cache-max-files", "30000"]) == 2
    assert _cli.main([*base, "--cache-max-files", "30000", "--cache-exclude", str(many)]) == 0


def test_labelled_folders_are_keyed_by_their_label_not_their_content(tmp_path):
    system = tmp_path / "cuda-include"
    system.mkdir()
    (system / "cuda_runtime.h").write_text("v1")
    options = ProgramOptions(include_path=[str(system)])
    v1 = _cache.include_digest(options, labels={str(system): "nvidia-cuda-runtime 13.0.48"})
    (system / "cuda_runtime.h").write_text("v2")  # same package version: same key, nothing read
    assert _cache.include_digest(options, labels={str(system): "nvidia-cuda-runtime 13.0.48"}) == v1
    assert _cache.include_digest(options, labels={str(system): "nvidia-cuda-runtime 13.0.88"}) != v1
    assert _cache.include_digest(options) != _cache.include_digest(options, labels={str(system): "x"})


def test_links_fifos_and_hostile_names_in_the_include_tree(tmp_path, monkeypatch):
    tree = tmp_path / "inc"
    (tree / "a").mkdir(parents=True)
    (tree / "a" / "h.h").write_text("1")
    (tree / "a" / "loop").symlink_to(tree)  # a cycle: walked once
    (tree / "fifo.h").parent.mkdir(exist_ok=True)
    os.mkfifo(tree / "fifo.h")  # hashed by name, never opened
    (tree / "zero.h").symlink_to("/dev/zero")
    options = ProgramOptions(include_path=[str(tree)])
    with fifo_watchdog(tree / "fifo.h") as fired:
        first = _cache.include_digest(options)
    assert not fired and _cache.include_digest(options) == first
    (tree / "a" / "h.h").write_text("2")
    second = _cache.include_digest(options)
    assert second != first
    monkeypatch.setattr(_walk, "DIR_FD", False)  # the walk by paths, as on Windows: the same digest
    assert _cache.include_digest(options) == second


# -- 5. output files -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("out") / "k.cu"
    path.write_text("template <typename T> __global__ void s(T* p) { p[0] = 1; }\n")
    return path


def test_dash_o_dash_writes_the_fatbin_to_standard_output(source, tmp_path):
    cli("compile", source, "--arch", "80", "-o", tmp_path / "k.fatbin", "--name-expression", "s<int>", cwd=tmp_path,
        check=0)  # fmt: skip
    res = cli("compile", source, "--arch", "80", "-o", "-", "--symbols", "-", cwd=tmp_path, check=2)
    assert b"both write to standard output" in res.stderr
    res = cli("compile", source, "--arch", "80", "-o", "-", "--name-expression", "s<int>", "--symbols",
              tmp_path / "s.json", cwd=tmp_path, check=0)  # fmt: skip
    assert res.stdout == (tmp_path / "k.fatbin").read_bytes()  # the same bytes, nothing else on stdout
    assert b"-: " in res.stderr and b"s<int> -> _Z1sIiEvPT_" in res.stderr  # the summary went to stderr
    assert not (tmp_path / "-").exists()
    res = cli("compile", source, "--arch", "80", "-o", tmp_path / "k2.fatbin", "--name-expression", "s<int>",
              "--symbols", "-", "-q", cwd=tmp_path, check=0)  # fmt: skip
    assert json.loads(res.stdout) == {"s<int>": "_Z1sIiEvPT_"}
    (cubin,) = cli("extract", "k.fatbin", "-o", "x", "--kind", "elf", cwd=tmp_path, check=0).stdout.split()
    cli("build", "-o", "b.fatbin", cubin.decode(), cwd=tmp_path, check=0)
    built = cli("build", "-o", "-", cubin.decode(), cwd=tmp_path, check=0)
    assert built.stdout == (tmp_path / "b.fatbin").read_bytes() and b"-: " in built.stderr


def test_dash_o_dash_refuses_a_terminal(source, tmp_path):
    import pty

    leader, follower = pty.openpty()
    try:
        res = subprocess.run([sys.executable, "-m", "cuda_fatbin", "compile", str(source), "--arch", "80", "-o", "-"],
                             stdout=follower, stderr=subprocess.PIPE, cwd=tmp_path, timeout=300)  # fmt: skip
    finally:
        os.close(follower)
        os.close(leader)
    assert res.returncode == 2 and b"is a terminal: redirect it" in res.stderr


@pytest.mark.parametrize("args, words", [
    (["compile", "{src}", "--arch", "80", "-o", "k.cubin"], "a .cubin file holds a cubin, but this writes a fatbin"),
    (["compile", "{src}", "--arch", "80", "-o", "k.PTX"], "name it k.fatbin"),
    (["compile", "{src}", "--arch", "80", "-o", "k.fatbin", "--symbols", "s.fatbin"], "name it s.json"),
    (["compile", "{src}", "--arch", "80", "-o", "missing/k.fatbin"], "there is no folder missing; create it first"),
    (["compile", "{src}", "--arch", "80", "-o", "."], "is a directory"),
    (["build", "-o", "k.ltoir", "{src}"], "a .ltoir file holds LTO-IR"),
    (["build", "-o", "missing/k.fatbin", "{src}"], "there is no folder missing"),
    (["compile", "{src}", "--arch", "80", "-o", "k.fatbin", "--cache-max-files", "5"], "apply to --cache"),
    (["compile", "{src}", "--arch", "80", "-o", "k.fatbin", "--cache", "c", "--cache-max-files", "0"], "positive"),
    (["compile", "--cache", "{src}", "--arch", "80", "-o", "k.fatbin", "{src}"], "that is a file"),
    (["compile", "{src}", "--arch", "80", "-o", "k.fatbin", "--dry-run", "--json"], "--dry-run prints the plan"),
])  # fmt: skip
def test_output_paths_that_cannot_be_right_are_usage_errors_before_any_work(source, tmp_path, args, words):
    res = cli(*[a.format(src=source) for a in args], cwd=tmp_path, check=2)
    assert words in res.stderr.decode() and b"Traceback" not in res.stderr
    assert sorted(os.listdir(tmp_path)) == []  # nothing compiled, nothing written


def test_outputs_are_replaced_whole_never_written_through_a_link(source, tmp_path):
    victim = tmp_path / "victim"
    victim.write_bytes(b"do not touch")
    (tmp_path / "k.fatbin").symlink_to(victim)
    (tmp_path / "s.json").symlink_to(victim)
    cli("compile", source, "--arch", "80", "-o", "k.fatbin", "--symbols", "s.json", cwd=tmp_path, check=0)
    assert victim.read_bytes() == b"do not touch"
    assert not (tmp_path / "k.fatbin").is_symlink() and (tmp_path / "k.fatbin").read_bytes()[:4] == b"\x50\xed\x55\xba"
    assert sorted(os.listdir(tmp_path)) == ["k.fatbin", "s.json", "victim"]  # no temporary file left
    res = cli("compile", source, "--arch", "80", "-o", "/proc/k.fatbin", cwd=tmp_path, check=1)
    assert b"cannot write /proc/k.fatbin" in res.stderr and b"Traceback" not in res.stderr


def test_extract_leaves_no_part_of_a_file_when_the_disk_fills(tmp_path, monkeypatch):
    from cuda_fatbin import extract_entries

    data = bytes(Program(SRC.format(7), "c++").compile("fatbin", archs=["sm_80"], ptx_for=()).code)
    out = tmp_path / "out"
    out.mkdir()

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        extract_entries(data, out, source_name="k.fatbin")
    monkeypatch.undo()
    assert os.listdir(out) == []
    (written,) = extract_entries(data, out, source_name="k.fatbin")
    assert os.listdir(out) == [written.name]


# -- 6. second review: what the first pass missed ------------------------------------------------------


@pytest.mark.parametrize("shape", [
    b'"' + b'\\"' * 2_000_000,  # an unterminated string of escaped quotes: each quote started a new scan
    b'["' + b'\\"' * 2_000_000,
    b'"a' * 2_000_000,  # strings that close only at the very end
    b"[" * 1_000_000 + b'"' + b"]" * 1_000_000,
    b'{"' + b"a" * 4_000_000,
])  # fmt: skip
def test_loads_json_is_linear_on_hostile_strings(shape):
    """A 4 MiB manifest or cache header of escaped quotes took hours (quadratic string scan); now milliseconds.

    Linear work is about 0.1 s here; the old scan needed 4 s for 32 KiB and quadruples with each doubling,
    so the generous 20 s bound cannot be met by a quadratic scan of 4 MiB (about 10^5 s).
    """
    t0 = time.perf_counter()
    with contextlib.suppress(ValueError):
        _files.loads_json(shape, 16)
    assert time.perf_counter() - t0 < 20


@pytest.mark.parametrize("args, words", [
    (["compile", "kk", "--lang", "c++", "--arch", "80", "-o", "kk"], "-o kk is the source"),
    (["compile", "kk", "--lang", "c++", "--arch", "80", "-o", "./sub/../kk"], "is the source"),
    (["compile", "kk", "--lang", "c++", "--arch", "80", "-o", "hard"], "is the source"),  # a hard link to it
    (["compile", "kk", "--lang", "c++", "--arch", "80", "-o", "out", "--symbols", "out"], "--symbols out is the -o"),
    (["compile", "kk", "--lang", "c++", "--arch", "80", "-o", "out", "--symbols", "./out"], "is the -o output"),
    (["compile", "kk", "--lang", "c++", "--arch", "80", "-o", "c", "--cache", "c"], "-o c is the --cache folder"),
    (["build", "-o", "part", "part"], "-o part is an input"),  # a cubin without a suffix
    (["build", "-o", "part", "--part", "kind=elf,arch=sm_80,file=./part"], "is an input"),
])  # fmt: skip
def test_an_output_that_is_an_input_or_the_other_output_is_a_usage_error(source, tmp_path, args, words):
    """``compile kk -o kk`` replaced the source with its fatbin; ``-o out --symbols out`` the fatbin with JSON."""
    shutil.copy(source, tmp_path / "kk")
    (tmp_path / "sub").mkdir()
    os.link(tmp_path / "kk", tmp_path / "hard")
    (tmp_path / "out").write_bytes(b"the user's file")
    fatbin = bytes(Program(SRC.format(7), "c++").compile("fatbin", archs=["sm_80"], ptx_for=()).code)
    (tmp_path / "part").write_bytes(_files_of(fatbin)[0])
    before = state(tmp_path)
    res = cli(*args, cwd=tmp_path, check=2)
    assert words in res.stderr.decode() and b"Traceback" not in res.stderr
    assert state(tmp_path) == before  # nothing compiled over anything


def _files_of(fatbin: bytes) -> list[bytes]:
    from cuda_fatbin import read_fatbin

    return [e.data() for e in read_fatbin(fatbin).iter_entries()]


def test_extract_never_replaces_the_file_it_reads(tmp_path):
    """An entry named ``k.x`` extracts to ``k.sm_80.cubin``: the name of the file read, in its own folder."""
    from cuda_fatbin import ExtractError, extract_entries

    program = Program(SRC.format(7), "c++", ProgramOptions(name="k.x"))
    data = bytes(program.compile("fatbin", archs=["sm_80"], ptx_for=()).code)
    read = tmp_path / "k.sm_80.cubin"
    read.write_bytes(data)
    os.link(read, tmp_path / "hard.fatbin")
    for source in (read, tmp_path / "hard.fatbin"):
        with pytest.raises(ExtractError, match="is the file being read"):
            extract_entries(source, tmp_path, force=True)
        assert read.read_bytes() == data and sorted(os.listdir(tmp_path)) == ["hard.fatbin", "k.sm_80.cubin"]
    res = cli("extract", "k.sm_80.cubin", "-o", ".", "--force", cwd=tmp_path, check=1)
    assert b"is the file being read" in res.stderr and read.read_bytes() == data
    (written,) = extract_entries(read, tmp_path / "elsewhere", force=True)  # elsewhere: the same name is fine
    assert written.name == "k.sm_80.cubin"


def test_output_names_are_shown_escaped(source, tmp_path):
    """A control character or a byte that is not UTF-8 in an output name reached the terminal raw."""
    name = b"\xff\x1b[31m.fatbin"
    for args, code in (
        ([b"compile", bytes(source), b"--arch", b"80", b"-o", name], 0),
        ([b"compile", bytes(source), b"--arch", b"80", b"-o", b"no\x1b[2J/k.fatbin"], 2),
        ([b"compile", bytes(source), b"--arch", b"80", b"-o", b"/proc/\x1b[2J.fatbin"], 1),
        ([b"extract", name, b"-o", b"out\x1b[2J"], 0),
        ([b"extract", name, b"-o", b"out\x1b[2J"], 1),  # the files exist now
    ):
        res = subprocess.run([sys.executable.encode(), b"-m", b"cuda_fatbin", *args], capture_output=True,
                             cwd=tmp_path, timeout=300)  # fmt: skip
        assert res.returncode == code, res.stderr
        assert b"\x1b" not in res.stdout + res.stderr and b"\xff" not in res.stdout + res.stderr, res
        assert b"\\x1b" in res.stdout + res.stderr
    assert (tmp_path / os.fsdecode(name)).exists()


def test_a_bundle_in_a_namespace_package_is_read_as_files_on_disk(tmp_path, job_cache, monkeypatch):
    """``importlib.resources.files`` of a folder without ``__init__.py`` is a ``MultiplexedPath``, not a Path:
    its manifest and fatbins were read through ``open()``, which waited forever on a FIFO and followed links."""
    import importlib
    import importlib.resources

    root = tmp_path / "site" / "nspkg" / "kernels"  # no __init__.py anywhere: namespace packages
    build(root, job_cache, k=SRC.format(1))
    expected = kernels(root)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    files = importlib.resources.files("nspkg.kernels")
    assert not isinstance(files, Path)
    loaded = plain(KernelBundle.open(files).load("k", gpu="8.0", driver="13.0"))
    assert loaded.code == expected["k"]
    name = file_of(root)
    outside = tmp_path / "outside.fatbin"
    os.replace(root / name, outside)
    (root / name).symlink_to(outside)
    with pytest.raises(BundleError, match="a symlink, not followed"):
        KernelBundle.open(files).fatbin("k")
    os.replace(outside, root / name)
    os.replace(root / "manifest.json", tmp_path / "manifest.json")
    os.mkfifo(root / "manifest.json")
    t0 = time.perf_counter()
    with fifo_watchdog(root / "manifest.json") as fired, pytest.raises(BundleError, match="a FIFO"):
        KernelBundle.open(files)
    assert not fired and time.perf_counter() - t0 < 5


def test_a_target_name_of_255_bytes_can_be_written(tmp_path):
    """The temporary name ``.<name>.<random>.tmp`` of a long name was over NAME_MAX: ``ENAMETOOLONG``."""
    for name in ("a" * 255, "é" * 127 + "x"):  # 255 bytes of UTF-8 each
        target = tmp_path / name
        _files.write_atomic(target, b"x")
        _files.write_atomic(target, b"y", replace=True)
        assert target.read_bytes() == b"y" and os.listdir(tmp_path) == [name]
        target.unlink()
        tmp = _files.temp_name(target)
        assert len(os.fsencode(os.path.basename(tmp))) <= 255 and os.path.dirname(tmp) == str(tmp_path)


def test_a_rebuild_failing_while_renaming_its_fatbins_in_leaves_the_old_bundle(tmp_path, job_cache, monkeypatch):
    """The manifest is the last rename: a failure renaming a fatbin in (EXDEV, EACCES...) switches nothing."""
    root = tmp_path / "b"
    build(root, job_cache, k=SRC.format(1), m=SRC.format(2))
    old = kernels(root)
    real, renamed = os.replace, []

    def failing(src, dst, **kw):
        if str(dst).endswith(".fatbin") and renamed:
            raise OSError(errno.EACCES, "Permission denied")
        renamed.append(dst)
        return real(src, dst, **kw)

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OSError, match="Permission denied"):
        build(root, job_cache, k=SRC.format(3), m=SRC.format(4))
    monkeypatch.undo()
    assert kernels(root) == old


def test_extract_without_force_never_replaces_a_file_that_appeared_after_its_check(tmp_path, monkeypatch):
    """The up-front ``exists`` check races with other writers; the hard-link publish is what never clobbers."""
    from cuda_fatbin import ExtractError, _extract, extract_entries

    data = bytes(Program(SRC.format(7), "c++").compile("fatbin", archs=["sm_80"], ptx_for=()).code)
    real = _extract._checked_target

    def racing(directory, name):
        target = real(directory, name)
        target.write_bytes(b"theirs")  # another process wins the race for the name
        return target

    monkeypatch.setattr(_extract, "_checked_target", racing)
    with pytest.raises(ExtractError, match="exists"):
        extract_entries(data, tmp_path, source_name="k.fatbin")
    assert [p.read_bytes() for p in tmp_path.iterdir()] == [b"theirs"]


def test_cleaning_does_not_read_a_huge_file_named_like_an_output(tmp_path, job_cache, monkeypatch):
    """A sparse 64 GiB ``x.<16 hex>.fatbin`` in the bundle was hashed whole by the next build's clean-up."""
    root = tmp_path / "b"
    build(root, job_cache, k=SRC.format(1))
    planted = root / "x.0123456789abcdef.fatbin"
    with open(planted, "wb") as f:
        f.truncate(64 << 30)
    real, read = os.read, [0]

    def counting(fd, n):
        data = real(fd, n)
        if os.readlink(f"/proc/self/fd/{fd}") == str(planted):
            read[0] += len(data)
        return data

    monkeypatch.setattr(os, "read", counting)
    build(root, job_cache, k=SRC.format(2))
    monkeypatch.undo()
    assert read[0] <= 1 << 16 and planted.stat().st_size == 64 << 30  # looked at, not read through; kept


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_written_files_take_the_umask_and_ctrl_c_leaves_nothing(tmp_path, job_cache, umask):
    """Outputs, bundle files and extracted files are ``0o666`` less the umask: never world-writable by us."""
    from cuda_fatbin import extract_entries

    old = os.umask(umask)
    try:
        build(tmp_path / "b", job_cache, k=SRC.format(1))
        _files.write_atomic(tmp_path / "out.fatbin", b"x")
        written = extract_entries(kernels(tmp_path / "b")["k"], tmp_path / "x", source_name="k.fatbin")
        (tmp_path / "c").mkdir()
        _files.create_new(tmp_path / "c" / "new", b"x")
    finally:
        os.umask(old)
    files = [tmp_path / "out.fatbin", tmp_path / "c" / "new", *written, *(tmp_path / "b").iterdir()]
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {oct(0o666 & ~umask)}

    def interrupted(f):
        f.write(b"part")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _files.write_atomic(tmp_path / "out.fatbin", interrupted)
    assert (tmp_path / "out.fatbin").read_bytes() == b"x" and not [n for n in os.listdir(tmp_path) if ".tmp" in n]


def test_without_hard_links_a_failed_publish_leaves_no_part_at_the_target(tmp_path, monkeypatch):
    """Where ``link`` fails (FAT, some network file systems) the no-clobber publish copies into a new file:
    a full disk during that copy left a part of the file at the target (``extract`` promises nothing written)."""

    def no_links(*args, **kwargs):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    _files.write_atomic(tmp_path / "a", b"abc", replace=False)
    assert (tmp_path / "a").read_bytes() == b"abc" and os.listdir(tmp_path) == ["a"]
    real = os.fsync

    def full(fd):  # the copy's data reached the file; the disk fills when it is flushed
        if os.readlink(f"/proc/self/fd/{fd}").endswith("/b"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        _files.write_atomic(tmp_path / "b", b"abcdef" * 1000, replace=False)
    assert os.listdir(tmp_path) == ["a"]


def test_the_temporary_file_is_created_exclusively_and_never_through_a_link(tmp_path, monkeypatch):
    """write_atomic's temporary name is random; planted there anyway (guessed, or a race), a symlink or a
    file makes the write fail: the planted link's target and the file are left as they were."""
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    planted = tmp_path / ".k.fatbin.planted.tmp"
    monkeypatch.setattr(_files, "temp_name", lambda target, kind="tmp": str(planted))
    planted.symlink_to(victim)
    with pytest.raises(FileExistsError):
        _files.write_atomic(tmp_path / "k.fatbin", b"new", replace=True)
    assert victim.read_bytes() == b"precious" and planted.is_symlink() and not (tmp_path / "k.fatbin").exists()
    planted.unlink()
    planted.write_bytes(b"someone else's")
    with pytest.raises(FileExistsError):
        _files.write_atomic(tmp_path / "k.fatbin", b"new")
    assert planted.read_bytes() == b"someone else's"


def test_only_a_whole_fatbin_file_gets_a_content_name(tmp_path):
    """_content_prefix: a file is a build's output only if its fatbin header gives exactly its size; anything
    else is judged by its first 16 bytes (a planted file of any size costs a 16-byte read)."""
    from cuda_fatbin import build_fatbin
    from cuda_fatbin._bundle import _content_prefix

    data = build_fatbin([str(Path(__file__).parent / "data" / "nvrtc129_sm_80.cubin")])
    whole = tmp_path / "whole.fatbin"
    whole.write_bytes(data)
    assert _content_prefix(whole) == hashlib.sha256(data).hexdigest()[:16]
    for name, body in (("longer", data + b"\0"), ("shorter", data[:-1]), ("header", data[:16]), ("tiny", data[:15]),
                       ("other", b"\0" * len(data))):  # fmt: skip
        (tmp_path / name).write_bytes(body)
        assert _content_prefix(tmp_path / name) is None, name
    sparse = tmp_path / "sparse"
    with open(sparse, "wb") as f:
        f.write(data[:16])
        f.truncate(1 << 40)  # 1 TiB apparent: hashing it would take hours
    t0 = time.perf_counter()
    assert _content_prefix(sparse) is None and time.perf_counter() - t0 < 1
    (tmp_path / "link").symlink_to(whole)
    assert _content_prefix(tmp_path / "link") is None  # never followed


@pytest.mark.parametrize(("flag", "kind"), [(flag, kind) for flag in ("-o", "--symbols", "--cache")
                                            for kind in ("fifo", "socket")] + [("--cache", "dangling")])  # fmt: skip
def test_a_device_fifo_or_socket_given_as_an_output_is_refused_not_replaced(source, tmp_path, flag, kind):
    """`-o /dev/null` as root turned the machine's /dev/null into a regular file (rename over it); a FIFO or a
    socket at -o or --symbols was replaced too, and --cache on one gave a raw FileExistsError (exit 1)."""
    import socket

    node = tmp_path / f"node.{'json' if flag == '--symbols' else 'fatbin'}"
    if kind == "fifo":
        os.mkfifo(node)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(node))
    else:
        node.symlink_to(tmp_path / "nowhere")
    before = os.lstat(node)
    args = ["compile", str(source), "--arch", "80", "-o", str(tmp_path / "k.fatbin")]
    if flag == "-o":
        args[-1] = str(node)
    elif flag == "--symbols":
        args += ["--symbols", str(node)]
    else:
        args += ["--cache", str(node)]
    res = cli_main(*args, check=2)
    assert "not replaced" in res.stderr or "not a cache folder" in res.stderr, res.stderr
    after = os.lstat(node)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    assert not (tmp_path / "k.fatbin").exists()


def test_write_atomic_never_replaces_a_device_fifo_or_socket(tmp_path):
    """Every writer (bundles, the cache, extract, the CLI) goes through write_atomic: a special file there stays."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="a FIFO is there; it is not replaced by a file"):
        _files.write_atomic(fifo, b"data")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and sorted(os.listdir(tmp_path)) == ["fifo"]
    (tmp_path / "link").symlink_to(fifo)  # a symlink to one is replaced (never followed), as any symlink
    _files.write_atomic(tmp_path / "link", b"data")
    assert (tmp_path / "link").read_bytes() == b"data" and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_cache_entry_header_is_read_at_most_four_levels_deep():
    """A header nests three levels (object, artifact list, record); docs/caching.md bounds it at four: a fifth
    level is refused before anything else is looked at, a fourth is read and judged on its fields."""

    def entry(header: bytes) -> bytes:
        body = _cache._MAGIC + struct.pack("<I", len(header)) + header
        return body + hashlib.sha256(body).digest()

    four = b'{"symbols": {}, "artifacts": [], "job": [[[1]]]}'  # depth 4: read, then refused as another job's
    five = b'{"symbols": {}, "artifacts": [], "job": [[[[1]]]]}'
    with pytest.raises(_cache.CacheEntryError, match="^entry does not match the job$"):
        _cache.decode(entry(four), _job())
    with pytest.raises(_cache.CacheEntryError, match="unreadable header: .*nested deeper than 4 levels"):
        _cache.decode(entry(five), _job())


# -- 7. every output of one command: all or nothing ------------------------------------------------------


def _fail_fsync_of(monkeypatch, name: str) -> None:
    """``os.fsync`` fails with ENOSPC for the temporary file of ``name`` (``.<name>.<random>.tmp``)."""
    real = os.fsync

    def fsync(fd):
        if os.path.basename(os.readlink(f"/proc/self/fd/{fd}")).startswith(f".{name}."):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def test_compile_outputs_are_all_or_nothing_when_the_symbols_file_cannot_be_written(source, tmp_path, monkeypatch):
    """`compile -o X --symbols M` with M unwritable (full disk): X was replaced and M kept the old mapping."""
    (tmp_path / "k.fatbin").write_bytes(b"old fatbin")
    (tmp_path / "s.json").write_bytes(b"old mapping")
    _fail_fsync_of(monkeypatch, "s.json")
    res = cli_main("compile", source, "--arch", "80", "-o", "k.fatbin", "--symbols", "s.json",
                   "--name-expression", "s<int>", cwd=tmp_path, check=1)  # fmt: skip
    assert "cannot write s.json: No space left on device; nothing was written: k.fatbin, s.json are left as they " \
           "were" in res.stderr  # fmt: skip
    assert (tmp_path / "k.fatbin").read_bytes() == b"old fatbin"
    assert (tmp_path / "s.json").read_bytes() == b"old mapping"
    assert sorted(os.listdir(tmp_path)) == ["k.fatbin", "s.json"]  # no temporary file left
    monkeypatch.undo()
    cli_main("compile", source, "--arch", "80", "-o", "k.fatbin", "--symbols", "s.json", "--name-expression",
             "s<int>", cwd=tmp_path, check=0)  # fmt: skip
    assert json.loads((tmp_path / "s.json").read_text()) == {"s<int>": "_Z1sIiEvPT_"}


def test_compile_outputs_are_all_or_nothing_when_the_second_rename_fails(source, tmp_path, monkeypatch):
    """Two outputs (`-o X --symbols M`, the usual pair): M's rename fails after X's, and X gets its old bytes back."""
    (tmp_path / "k.fatbin").write_bytes(b"old fatbin")
    (tmp_path / "s.json").write_bytes(b"old mapping")
    real = os.replace

    def replace(src, dst):
        if os.path.basename(os.fspath(dst)) == "s.json":
            raise OSError(errno.EIO, "Input/output error")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    res = cli_main("compile", source, "--arch", "80", "-o", "k.fatbin", "--symbols", "s.json",
                   "--name-expression", "s<int>", cwd=tmp_path, check=1)  # fmt: skip
    assert "nothing was written: k.fatbin, s.json are left as they were" in res.stderr
    assert (tmp_path / "k.fatbin").read_bytes() == b"old fatbin"
    assert (tmp_path / "s.json").read_bytes() == b"old mapping"
    assert sorted(os.listdir(tmp_path)) == ["k.fatbin", "s.json"]  # no temporary or kept file left


@pytest.mark.parametrize("failure", ["second rename", "Ctrl-C in the block", "staging"])
def test_written_together_leaves_every_old_file_when_any_step_fails(tmp_path, monkeypatch, failure):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"  # c does not exist before
    a.write_bytes(b"old a")
    b.symlink_to(a)  # an old symlink comes back as the link, not as a file
    real = os.replace

    def replace(src, dst):
        if os.fspath(dst) == str(b):
            raise OSError(errno.EIO, "Input/output error")
        return real(src, dst)

    if failure == "second rename":
        monkeypatch.setattr(os, "replace", replace)
    if failure == "staging":
        _fail_fsync_of(monkeypatch, "b")
    with pytest.raises((OSError, KeyboardInterrupt)), _files.written_together() as stage:
        stage(c, b"new c")
        stage(a, b"new a")
        stage(b, b"new b")
        if failure == "Ctrl-C in the block":
            raise KeyboardInterrupt
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == ["a", "b"]  # c removed again, no temporary or kept file left
    assert a.read_bytes() == b"old a" and os.readlink(b) == str(a)
    with _files.written_together() as stage:
        stage(a, b"new a")
        stage(b, b"new b")
    assert a.read_bytes() == b"new a" and not b.is_symlink() and b.read_bytes() == b"new b"
    assert sorted(os.listdir(tmp_path)) == ["a", "b"]


def test_written_together_without_replace_takes_back_what_it_published(tmp_path):
    (tmp_path / "y").write_bytes(b"someone's")
    with pytest.raises(FileExistsError), _files.written_together(replace=False) as stage:
        stage(tmp_path / "x", b"new x")
        stage(tmp_path / "y", b"new y")
    assert sorted(os.listdir(tmp_path)) == ["y"] and (tmp_path / "y").read_bytes() == b"someone's"
