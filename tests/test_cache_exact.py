# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The job cache, exactly: the stored value's format and every way a value is refused, which entries are read from
disk and which are asked of the cache, and what the include fingerprint sees (docs/caching.md)."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import struct
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from cuda.core.utils import FileStreamProgramCache, InMemoryProgramCache

from cuda_fatbin import Arch, _cache
from cuda_fatbin._multiarch import Job, JobResult

SM86, SM89 = Arch.parse("sm_86"), Arch.parse("sm_89")
#: one compute_80 PTX compile linked for two GPUs: a job with two artifacts
JOB = Job("nvrtc", "ptx", Arch.parse("compute_80"), link=(SM86, SM89), emit=(("cubin", SM86), ("cubin", SM89)))
RESULT = JobResult(JOB, (("cubin", SM86, b"first"), ("cubin", SM89, b"second!")), {"f<int>": b"_Z1fIiEvv", "g": "g"})


def entry(header: Any, payload: bytes = b"", *, raw_header: bytes | None = None) -> bytes:
    """A stored value as ``encode`` lays it out, around any header: magic, length, JSON, payloads, SHA-256."""
    head = raw_header if raw_header is not None else json.dumps(header).encode()
    body = _cache._MAGIC + struct.pack("<I", len(head)) + head + payload
    return body + hashlib.sha256(body).digest()


def refusal(value: bytes, job: Job = JOB) -> str:
    with pytest.raises(_cache.CacheEntryError) as info:
        _cache.decode(value, job)
    return str(info.value)


# -- the stored value ------------------------------------------------------------------------------------------


def test_a_result_comes_back_whole_with_bytes_and_str_symbols():
    back = _cache.decode(_cache.encode(RESULT), JOB)
    assert back == JobResult(JOB, RESULT.artifacts, RESULT.symbol_mapping, "")
    assert type(back.symbol_mapping["g"]) is str and back.log == ""


def test_the_shortest_value_is_read_and_a_shorter_one_or_a_foreign_one_is_not():
    shortest = entry(None, raw_header=b"")  # magic, a zero length, no header, the digest: 44 bytes
    assert len(shortest) == 44
    assert refusal(shortest).startswith("unreadable header: ")  # got past the size and checksum checks
    assert refusal(shortest[:43]) == "not a cuda-fatbin job entry"
    assert refusal(shortest[-20:]) == "not a cuda-fatbin job entry"
    assert refusal(b"X" + _cache.encode(RESULT)[1:]) == "not a cuda-fatbin job entry"  # long enough, no magic


def test_a_changed_byte_is_a_checksum_mismatch():
    value = bytearray(_cache.encode(RESULT))
    value[-40] ^= 1
    assert refusal(bytes(value)) == "checksum mismatch (torn or corrupted entry)"


def test_a_header_length_past_the_value_is_refused():
    head = json.dumps({"job": str(JOB), "artifacts": [], "symbols": {}}).encode()
    body = _cache._MAGIC + struct.pack("<I", 0xFFFFFFFF) + head  # 4 GiB of header: all that follows, and more
    assert refusal(body + hashlib.sha256(body).digest()) == "entry does not match the job"


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ([], "unreadable header: the header is not an object with a symbol mapping"),
        ({"symbols": []}, "unreadable header: the header is not an object with a symbol mapping"),
        ({"symbols": {}, "artifacts": [["cubin", "sm_86", True]]}, "unreadable header: artifact record 'cubin', True"),
        ({"symbols": {}, "artifacts": [["cubin", "sm_86", -1]]}, "unreadable header: artifact record 'cubin', -1"),
        ({"symbols": {}, "artifacts": [["cubin", "sm_86", 1.5]]}, "unreadable header: artifact record 'cubin', 1.5"),
        ({"symbols": {}, "artifacts": [[7, "sm_86", 1]]}, "unreadable header: artifact record 7, 1"),
        ({"symbols": {"f": [None, 1]}, "artifacts": []}, "unreadable header: symbol record of 'f'"),
        ({"symbols": {"f": [1, None]}, "artifacts": []}, "unreadable header: symbol record of 'f'"),
        ({"symbols": {"f": [None, "\ud800"]}, "artifacts": []},
         "unreadable header: 'utf-8' codec can't encode character '\\ud800' in position 0: surrogates not allowed"),
    ],
)  # fmt: skip
def test_each_malformed_header_field_is_named(header, message):
    assert refusal(entry(header)) == message


def test_an_artifact_of_zero_bytes_is_read():
    job = Job("nvrtc", "cubin", SM86, emit=(("cubin", SM86),))
    header = {"job": str(job), "artifacts": [["cubin", "sm_86", 0]], "symbols": {}}
    assert _cache.decode(entry(header), job).artifacts == (("cubin", SM86, b""),)


def test_another_jobs_entry_or_other_artifacts_are_refused():
    value = _cache.encode(RESULT)
    other = Job("nvrtc", "ptx", Arch.parse("compute_80"), link=(SM86,), emit=(("cubin", SM86),))
    assert refusal(value, other) == "entry does not match the job"
    header = {"job": str(JOB), "artifacts": [["cubin", "sm_86", 5], ["ptx", "sm_89", 7]], "symbols": {}}
    assert refusal(entry(header, b"firstsecond!")) == "entry holds other artifacts than the job makes"
    header["artifacts"] = [["cubin", "sm_86", 5], ["cubin", "sm_89", 6]]  # a byte left over
    assert refusal(entry(header, b"firstsecond!")) == "entry does not match the job"


# -- which entries are read from disk, which are asked -----------------------------------------------------------


class OwnGet(FileStreamProgramCache):
    def get(self, key: Any, default: Any = None) -> Any:
        return b"from get"


class OwnGetItem(FileStreamProgramCache):
    def __getitem__(self, key: Any) -> Any:
        return b"from getitem"


class OddPath(FileStreamProgramCache):
    def _path_for_key(self, key: Any) -> Any:
        return 42


@pytest.mark.parametrize("kind", [OwnGet, OwnGetItem, OddPath])
def test_a_file_cache_that_reads_its_own_way_is_asked_not_bypassed(tmp_path, kind):
    assert _cache._entry_path(kind(tmp_path / "c"), b"key") is None


def test_a_plain_file_cache_is_read_from_its_file(tmp_path):
    cache = FileStreamProgramCache(tmp_path / "c")
    cache[b"key"] = b"value"
    path = _cache._entry_path(cache, b"key")
    assert path is not None and Path(path).read_bytes() == b"value" and _cache.read_entry(cache, b"key") == b"value"


def test_a_cuda_core_without_the_entry_path_is_asked(tmp_path, monkeypatch):
    cache = FileStreamProgramCache(tmp_path / "c")
    monkeypatch.delattr(FileStreamProgramCache, "_path_for_key")
    assert _cache._entry_path(cache, b"key") is None


def test_a_cache_that_does_not_hold_the_key_drops_it_quietly(tmp_path):
    _cache.drop_entry(InMemoryProgramCache(), b"absent")  # KeyError from `del`: nothing to drop
    _cache.drop_entry(FileStreamProgramCache(tmp_path / "c"), b"absent")


class KeepOnDelete(FileStreamProgramCache):
    """A file cache whose delete leaves the file: ``drop_entry`` removes what is left at the entry's name."""

    def __delitem__(self, key: Any) -> None:
        pass


def test_drop_entry_removes_a_file_or_link_at_the_name_and_leaves_a_full_folder(tmp_path):
    cache = KeepOnDelete(tmp_path / "c")
    path = Path(_cache._entry_path(cache, b"key") or "")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"torn")
    _cache.drop_entry(cache, b"key")
    assert not os.path.lexists(path)
    path.symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").write_bytes(b"not ours")
    _cache.drop_entry(cache, b"key")
    assert not os.path.lexists(path) and (tmp_path / "elsewhere").read_bytes() == b"not ours"
    (path / "inner").mkdir(parents=True)
    _cache.drop_entry(cache, b"key")
    assert (path / "inner").is_dir()  # not ours: left
    (path / "inner").rmdir()
    _cache.drop_entry(cache, b"key")
    assert not path.exists()  # an empty folder is removed


# -- the include fingerprint -------------------------------------------------------------------------------------


def digest(*dirs: Path, pre: list[Path] | None = None, **kw: Any) -> bytes:
    options = SimpleNamespace(include_path=[str(d) for d in dirs], pre_include=[str(p) for p in pre or []])
    return _cache.include_digest(options, **kw)


@pytest.fixture
def inc(tmp_path: Path) -> Path:
    d = tmp_path / "inc"
    (d / "sub").mkdir(parents=True)
    (d / "a.h").write_text("#define A 1\n")
    (d / "sub" / "b.cuh").write_text("#define B 2\n")
    (d / "z.h").write_text("#define Z 3\n")
    return d


def test_hidden_folders_and_pycache_are_not_seen(inc):
    before = digest(inc)
    for folder in (".git", "__pycache__", ".a"):
        (inc / folder).mkdir()
        (inc / folder / "x.h").write_text("ignored")
    (inc / ".hidden.h").write_text("ignored")
    assert digest(inc) == before
    (inc / "z.h").write_text("#define Z 4\n")  # a file after the hidden entries in name order is still seen
    assert digest(inc) != before


def test_moving_or_renaming_a_header_changes_the_fingerprint(inc):
    before = digest(inc)
    (inc / "other").mkdir()
    (inc / "sub" / "b.cuh").rename(inc / "other" / "b.cuh")  # same content, another folder
    moved = digest(inc)
    assert moved != before
    (inc / "other" / "b.cuh").rename(inc / "other" / "c.cuh")  # same content, another name
    assert digest(inc) not in (before, moved)


def test_files_that_cannot_be_read_are_hashed_by_name_not_fatal(inc, monkeypatch):
    before = digest(inc)
    (inc / "gone.h").symlink_to(inc / "nowhere.h")  # stat fails
    broken = digest(inc)
    assert broken != before
    real_open = os.open

    def failing_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if os.fspath(path) in ("a.h", str(inc / "sub")):  # a header by name (descriptor walk), a folder by path
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, flags, *args, **kwargs)

    (inc / "tail").mkdir()
    (inc / "tail" / "t.h").write_text("#define T 1\n")
    monkeypatch.setattr(os, "open", failing_open)
    assert digest(inc) not in (before, broken)
    blocked = digest(inc)
    (inc / "tail" / "t.h").write_text("#define T 2\n")  # the folder walked after the unopened one is still seen
    assert digest(inc) != blocked


def test_a_header_that_fails_while_read_is_hashed_as_unreadable(inc, monkeypatch):
    before = digest(inc)
    real_read = os.read

    def failing_read(fd: int, n: int) -> bytes:
        if os.readlink(f"/proc/self/fd/{fd}").endswith("a.h"):
            raise OSError(errno.EIO, "Input/output error")
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", failing_read)
    assert digest(inc) != before


def test_a_folder_whose_stat_fails_after_it_was_opened_is_closed_and_skipped(inc, monkeypatch):
    real_fstat, closed = os.fstat, []
    real_close = os.close

    def failing_fstat(fd: int) -> Any:
        if os.readlink(f"/proc/self/fd/{fd}") == str(inc / "sub"):
            raise OSError(errno.EIO, "Input/output error")
        return real_fstat(fd)

    def close(fd: int) -> None:
        closed.append(fd)
        real_close(fd)

    monkeypatch.setattr(os, "fstat", failing_fstat)
    monkeypatch.setattr(os, "close", close)
    before = digest(inc)
    (inc / "sub" / "b.cuh").write_text("changed, but not seen")
    assert digest(inc) == before


def test_a_header_that_grows_while_read_is_hashed_as_its_stat_said(inc, monkeypatch):
    big = inc / "big.h"
    big.write_bytes(b"x" * (3 << 20))
    real_stat = os.stat

    def smaller(path: Any, *args: Any, **kwargs: Any) -> Any:
        st = real_stat(path, *args, **kwargs)
        if os.fspath(path) == "big.h":  # the stat taken before the file grew by a byte
            return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid, st.st_gid,
                                   st.st_size - 1, st.st_atime, st.st_mtime, st.st_ctime))  # fmt: skip
        return st

    monkeypatch.setattr(os, "stat", smaller)
    grown = digest(inc)
    monkeypatch.undo()
    big.write_bytes(b"x" * ((3 << 20) - 1))
    assert digest(inc) == grown


def test_the_limit_names_the_pre_include_that_passed_it(tmp_path):
    first, second = tmp_path / "first.h", tmp_path / "second.h"
    first.write_text("a")
    second.write_text("b")
    with pytest.raises(ValueError) as info:
        digest(pre=[first, second], max_files=1)
    assert str(info.value).startswith(f"the include path {second} holds over 1 header-like files or 0 MiB, ")


def test_a_single_include_folder_or_pre_include_may_be_given_as_a_string(inc, tmp_path):
    pre = tmp_path / "pre.h"
    pre.write_text("#define P 1\n")
    as_lists = _cache.include_digest(SimpleNamespace(include_path=[str(inc)], pre_include=[str(pre)]))
    assert _cache.include_digest(SimpleNamespace(include_path=str(inc), pre_include=str(pre))) == as_lists


@pytest.mark.parametrize("bad", [True, 0, -1, 1.5, "10"])
def test_max_files_is_a_positive_int(inc, bad):
    with pytest.raises(ValueError) as info:
        digest(inc, max_files=bad)
    assert str(info.value) == f"cache_max_files must be a positive int; got {bad!r}"


def test_the_default_folder_on_windows(monkeypatch, tmp_path):
    class Windows:  # ``os`` as _cache sees it on Windows (os.name itself cannot change: pathlib reads it)
        name = "nt"

        def __getattr__(self, attr: str) -> Any:
            return getattr(os, attr)

    monkeypatch.setattr(_cache, "os", Windows())
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "local"))
    assert _cache.default_cache_dir() == tmp_path / "local" / "cuda-fatbin"
    monkeypatch.delenv("LOCALAPPDATA")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert _cache.default_cache_dir() == tmp_path / "home" / "AppData" / "Local" / "cuda-fatbin"


class Plain:
    """A cache of another kind: only ``get`` (a mapping, a database...)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def get(self, key: Any, default: Any = None) -> Any:
        return self.value


def test_a_cache_of_another_kind_is_held_to_bytes_and_the_size_limit(monkeypatch):
    with pytest.raises(_cache.CacheEntryError) as info:
        _cache.read_entry(Plain("text"), b"key")
    assert str(info.value) == "the cache returned str, not bytes"
    monkeypatch.setattr(_cache, "MAX_ENTRY_BYTES", 4)
    assert _cache.read_entry(Plain(b"four"), b"key") == b"four" and _cache.read_entry(Plain(None), b"key") is None
    with pytest.raises(_cache.CacheEntryError) as info:
        _cache.read_entry(Plain(b"five!"), b"key")
    assert str(info.value) == "5 bytes, over the limit of 4"


def test_a_file_entry_that_is_not_a_plain_file_is_named(tmp_path, monkeypatch):
    cache = FileStreamProgramCache(tmp_path / "c")
    path = Path(_cache._entry_path(cache, b"key") or "")
    path.parent.mkdir(parents=True, exist_ok=True)

    def refused() -> str:
        with pytest.raises(_cache.CacheEntryError) as info:
            _cache.read_entry(cache, b"key")
        return str(info.value)

    path.symlink_to(tmp_path / "elsewhere")
    assert refused() == f"{path}: a symlink"
    path.unlink()
    path.mkdir()
    assert refused() == f"{path}: a directory, not a regular file"
    path.rmdir()
    path.write_bytes(b"12345")
    monkeypatch.setattr(_cache, "MAX_ENTRY_BYTES", 4)
    assert refused().startswith(f"{path}: ")
    monkeypatch.undo()
    path.unlink()
    path.parent.rmdir()
    path.parent.write_bytes(b"a file where the entry's folder goes")
    assert refused() == f"{path}: Not a directory"


def test_reading_an_entry_marks_it_used_and_keeps_its_mtime(tmp_path, monkeypatch):
    cache = FileStreamProgramCache(tmp_path / "c")
    cache[b"key"] = b"value"
    path = Path(_cache._entry_path(cache, b"key") or "")
    os.utime(path, ns=(1_000_000_000, 2_000_000_000))
    calls = []
    real = os.utime

    def recording(target: Any, *, ns: tuple[int, int]) -> None:
        calls.append((type(target), ns[1]))
        real(target, ns=ns)

    monkeypatch.setattr(os, "utime", recording)
    monkeypatch.setattr(os, "supports_fd", os.supports_fd | {recording})
    assert _cache.read_entry(cache, b"key") == b"value"
    st = os.stat(path)
    assert st.st_atime_ns > 2_000_000_000 and st.st_mtime_ns == 2_000_000_000  # cuda.core evicts by access time
    assert calls == [(int, 2_000_000_000)]  # through the open descriptor: the file that was read

    def failing(*args: Any, **kwargs: Any) -> None:
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "utime", failing)
    monkeypatch.setattr(os, "supports_fd", os.supports_fd | {failing})
    assert _cache.read_entry(cache, b"key") == b"value"  # a read-only cache is still read


def test_the_include_budget_counts_bytes_as_well_as_files(tmp_path):
    per_file = _cache.INCLUDE_BYTES_PER_FILE
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "a.h").write_bytes(b"x" * per_file)  # exactly one file's share: read
    digest(inc, max_files=1)
    (inc / "a.h").write_bytes(b"x" * (per_file + 1))
    with pytest.raises(ValueError, match="holds over 1 header-like files"):
        digest(inc, max_files=1)
    (inc / "a.h").write_bytes(b"x" * per_file)
    (inc / "b.h").write_bytes(b"x" * per_file)
    (inc / "c.h").write_bytes(b"x")  # three files for two: the count
    with pytest.raises(ValueError, match="holds over 2 header-like files"):
        digest(inc, max_files=2)
    (inc / "c.h").unlink()
    (inc / "a.h").write_bytes(b"x" * (per_file + 1))  # two files, one byte over their share: the bytes
    with pytest.raises(ValueError) as info:
        digest(inc, max_files=2)
    assert str(info.value) == (
        f"the include path {inc} holds over 2 header-like files or {2 * per_file >> 20} MiB, too many to "
        "fingerprint for the cache key: exclude the folders that hold no headers (cache_exclude=[...]; on the "
        "command line --cache-exclude DIR) or raise the limit (cache_max_files=N; on the command line "
        "--cache-max-files N)"
    )
    many = tmp_path / "many"
    many.mkdir()
    for i in range(41):
        (many / f"{i}.h").write_text("x")
    with pytest.raises(ValueError) as info:
        digest(many, max_files=40)
    assert f"holds over 40 header-like files or {40 * per_file >> 20} MiB, " in str(info.value)
    assert 40 * per_file >> 20 == 1


def test_the_key_of_a_linking_job_changes_with_nvjitlink(monkeypatch):
    from cuda.bindings import nvjitlink
    from cuda.core import ProgramOptions

    options = ProgramOptions(arch="compute_80")
    args = ("src", "k", (b"-arch=compute_80",), {SM86: (b"-arch=sm_86",), SM89: (b"-arch=sm_89",)}, ())
    key = _cache.job_key(JOB, "src", "c++", options, (), args, b"")
    assert _cache.job_key(JOB, "src", "c++", options, (), args, b"") == key
    monkeypatch.setattr(nvjitlink, "version", lambda: (99, 9))
    assert _cache.job_key(JOB, "src", "c++", options, (), args, b"") != key


def test_a_cuda_core_without_cache_keys_is_told_what_to_install(monkeypatch):
    import cuda.core.utils
    from cuda.core import ProgramOptions

    monkeypatch.delattr(cuda.core.utils, "make_program_cache_key")
    with pytest.raises(ImportError) as info:
        _cache.job_key(JOB, "src", "c++", ProgramOptions(arch="compute_80"), (), ("", "", (), {}, ()), b"")
    assert str(info.value).startswith("cache= needs cuda.core.utils.make_program_cache_key (cuda-core >= 1.2.0): ")


def test_a_header_whose_name_is_not_utf8_is_fingerprinted_by_its_bytes(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    with open(os.path.join(os.fsencode(inc), b"caf\xe9.h"), "wb") as f:  # Latin-1, as an old tarball leaves it
        f.write(b"#define A 1\n")
    first = digest(inc)
    os.rename(os.path.join(os.fsencode(inc), b"caf\xe9.h"), os.path.join(os.fsencode(inc), b"caf\xe8.h"))
    assert digest(inc) != first  # another name, another key
    os.rename(os.path.join(os.fsencode(inc), b"caf\xe8.h"), os.path.join(os.fsencode(inc), b"caf\xe9.h"))
    assert digest(inc) == first


def test_names_that_are_not_utf8_are_hashed_in_every_kind_of_row(tmp_path):
    """A FIFO, a dangling link and a folder too deep to open, each named with bytes that are not UTF-8: the
    fingerprint is computed (surrogate escapes, as for regular files), the same each time, and depends on
    each name."""
    inc = tmp_path / "inc"
    inc.mkdir()
    base = os.fsencode(inc)
    os.mkfifo(os.path.join(base, b"\xff.h"))  # special: hashed by its name
    os.symlink(b"/nonexistent/x.h", os.path.join(base, b"\xfe.h"))  # unreadable: its name and errno
    fd = os.open(base, os.O_RDONLY)
    try:  # past the system's path length: the deepest folder cannot be opened by path ("unopened")
        for _ in range(24):
            name = b"\xfd" + b"d" * 200
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)
    first = digest(inc)
    assert digest(inc) == first
    os.rename(os.path.join(base, b"\xff.h"), os.path.join(base, b"\xfc.h"))
    second = digest(inc)
    assert second != first
    os.rename(os.path.join(base, b"\xfe.h"), os.path.join(base, b"\xfb.h"))
    assert digest(inc) not in (first, second)


def test_paths_and_labels_that_are_not_utf8_are_hashed(tmp_path, monkeypatch):
    """An include folder, a pre-include, a header and a label whose names are not UTF-8, and that header
    unopenable after its stat: each is a row of the fingerprint, never an error."""
    base = os.fsencode(tmp_path)
    inc, pre = os.path.join(base, b"\xfa-inc"), os.path.join(base, b"\xf9.h")
    os.mkdir(inc)
    with open(os.path.join(inc, b"\xf8.h"), "wb") as f:
        f.write(b"#define A 1\n")
    with open(pre, "wb") as f:
        f.write(b"#define P 1\n")
    options = SimpleNamespace(include_path=[os.fsdecode(inc)], pre_include=[os.fsdecode(pre)])
    first = _cache.include_digest(options)
    assert _cache.include_digest(options) == first
    labelled = _cache.include_digest(options, labels={os.fsdecode(inc): "pkg \udcff 1.0"})
    assert labelled not in (first, _cache.include_digest(options, labels={os.fsdecode(inc): "pkg 1.0"}))
    real = os.open

    def refusing(path, flags, *a, **k):  # the header, once stat'ed: EACCES
        if os.fsdecode(path).endswith("\udcf8.h"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(path, flags, *a, **k)

    monkeypatch.setattr(os, "open", refusing)
    assert _cache.include_digest(options) not in (first, labelled)


def test_a_symlink_loop_in_an_include_folder_is_walked_once(tmp_path):
    """A link back to its own folder: the folder is hashed once (a walk without the check would go round
    until the header budget ran out)."""
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "a.h").write_text("#define A 1\n")
    (inc / "loop").symlink_to(inc)
    (inc / "sub").mkdir()
    (inc / "sub" / "up").symlink_to(inc)
    with_loops = digest(inc, max_files=2)
    (inc / "loop").unlink()
    (inc / "sub" / "up").unlink()
    assert with_loops == digest(inc, max_files=2)  # the links add nothing: each folder is seen once


def test_an_include_folder_that_opens_but_cannot_be_listed_is_a_row_of_the_fingerprint(tmp_path, monkeypatch):
    """A subfolder opened whose listing fails (EACCES, EIO) is hashed as unopened, as one that cannot be opened
    is: the fingerprint is taken, never an OSError out of the compile."""
    (tmp_path / "inc" / "sub").mkdir(parents=True)
    (tmp_path / "inc" / "a.h").write_text("#define A 1\n")
    (tmp_path / "inc" / "sub" / "b.h").write_text("#define B 1\n")
    options = SimpleNamespace(include_path=[str(tmp_path / "inc")], pre_include=None)
    listable = _cache.include_digest(options)
    real = os.scandir

    def refusing(path=".", *a, **k):
        where = os.readlink(f"/proc/self/fd/{path}") if isinstance(path, int) else os.fspath(path)
        if where.endswith("sub"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(path, *a, **k)

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("the folder listed is told by its descriptor in /proc/self/fd (Linux)")
    monkeypatch.setattr(os, "scandir", refusing)
    refused = _cache.include_digest(options)
    assert refused != listable and _cache.include_digest(options) == refused
