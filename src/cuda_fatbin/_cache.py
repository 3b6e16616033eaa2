# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Per-job caching of multi-arch compiles in a cuda.core ``ProgramCacheResource``.

Each job of a plan (one arch, or one gencode group) is stored under its own key, derived with
cuda.core's ``make_program_cache_key`` from the source, the options with the job's arch, the target
and the name expressions; everything else that shapes the job's output (the archs it links, the
nvJitLink options, raw extra options, the content of the include directories) goes into the key's
``extra_digest``. Adding an arch therefore compiles that arch only, and an unchanged build compiles
nothing.

The include directories are fingerprinted by walking them without recursion (:func:`include_digest`):
header-like files only, hidden folders, ``__pycache__``, the cache's own folder and the paths the caller
excludes skipped, at most ``max_files`` files; folders a caller labels (system headers of an installed
package) are keyed by their label instead of their content.

A stored value is self-checking: a magic, a JSON header listing the artifacts and the symbol
mapping, the payloads, and a SHA-256 of all of it. A torn, truncated or foreign value is detected on
read, deleted and recompiled, never used. cuda.core's ``FileStreamProgramCache`` writes each value
atomically (temp file + ``os.replace``), so processes sharing a directory see whole values only. Its
entries are untrusted files: :func:`read_entry` opens them itself (no symlink followed, no wait on a
FIFO, at most :data:`MAX_ENTRY_BYTES`), because cuda.core's own read follows links and blocks.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import stat
import struct
import time
from dataclasses import dataclass
from pathlib import Path

from ._arch import Arch
from ._errors import Error
from ._files import (
    O_CLOEXEC,
    O_NONBLOCK,
    check_regular,
    describe,
    identity,
    loads_json,
    open_input,
    read_exact,
)
from ._multiarch import Job, JobResult
from ._walk import Folder, walk_tree

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

__all__ = ["CacheReport"]

_MAGIC = b"CFBJOB1\n"
_SCHEMA = "cuda-fatbin job cache 1"
#: The largest cache entry read; a larger one is corrupt (one job's cubin, PTX or LTO-IR is far smaller).
MAX_ENTRY_BYTES = 256 << 20
#: The deepest nesting of an entry's JSON header (this package writes 3 levels).
_MAX_HEADER_DEPTH = 4
#: How many header-like files the include directories may hold (``cache_max_files=`` changes it) ...
MAX_INCLUDE_FILES = 20_000
#: ... and how many bytes per allowed file they may hold on average: 512 MiB at the default.
INCLUDE_BYTES_PER_FILE = (512 << 20) // MAX_INCLUDE_FILES
#: Suffixes of the files hashed into the key ("" for extensionless headers such as libcu++'s ``<cuda/std/...>``).
_HEADER_SUFFIXES = frozenset({".h", ".hh", ".hpp", ".hxx", ".h++", ".cuh", ".inl", ".inc", ".ipp", ".tpp", ".tcc",
                              ".txx", ".def", ".cu", ".c", ".cc", ".cpp", ".cxx", ""})  # fmt: skip
_SKIPPED_DIRS = frozenset({"__pycache__"})  # and every hidden folder (.git, .venv, ...)


class CacheEntryError(Error, ValueError):
    """A cached value is not a whole, matching job result."""


@dataclass(frozen=True)
class CacheReport:
    """What the last cached ``compile("fatbin")`` did: jobs served from the cache, compiled, or found corrupt.

    Attributes
    ----------
    hits, misses, corrupt : tuple of str
        Job descriptions (``"NVRTC sm_80 -> cubin"``). Corrupt entries were deleted and recompiled.
    not_stored : tuple of str
        Misses compiled but not stored: a header under the include path changed while they compiled,
        so their code may not be what the key (taken before) describes. The next build compiles them again.

    Examples
    --------
    >>> import tempfile
    >>> from cuda.core.utils import FileStreamProgramCache
    >>> from cuda_fatbin import Program
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> cache = FileStreamProgramCache(tempfile.mkdtemp())
    >>> _ = Program(src, "c++").compile("fatbin", archs=["sm_80"], ptx_for="none", cache=cache)
    >>> program = Program(src, "c++")
    >>> _ = program.compile("fatbin", archs=["sm_80", "sm_90"], ptx_for="none", cache=cache)
    >>> report = program.last_cache_report
    >>> report.hits, report.misses
    (('NVRTC sm_80 -> cubin',), ('NVRTC sm_90 -> cubin',))
    """

    hits: tuple[str, ...] = ()
    misses: tuple[str, ...] = ()
    corrupt: tuple[str, ...] = ()
    not_stored: tuple[str, ...] = ()

    def __str__(self) -> str:
        text = f"cache: {len(self.hits)} hit(s), {len(self.misses)} miss(es), {len(self.corrupt)} corrupt"
        if self.not_stored:
            text += f", {len(self.not_stored)} not stored (a header changed during the compile)"
        return text


def default_cache_dir() -> Path:
    """Where ``cuda-fatbin compile --cache`` keeps its entries when given no folder.

    ``$XDG_CACHE_HOME/cuda-fatbin`` (an absolute ``XDG_CACHE_HOME`` only, as the XDG specification says),
    else ``~/.cache/cuda-fatbin``; on Windows ``%LOCALAPPDATA%\\cuda-fatbin``. cuda.core's own caches
    live beside it, under ``cuda-python``.

    Examples
    --------
    >>> import os
    >>> os.environ["XDG_CACHE_HOME"] = "/var/cache/me"
    >>> str(default_cache_dir()) if os.name != "nt" else "/var/cache/me/cuda-fatbin"
    '/var/cache/me/cuda-fatbin'
    >>> del os.environ["XDG_CACHE_HOME"]
    """
    if os.name == "nt":
        local = os.environ.get("LOCALAPPDATA")
        base = Path(local) if local else Path.home() / "AppData" / "Local"
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "cuda-fatbin"


def _path_identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """``(st_dev, st_ino)`` of what ``path`` names (links followed), or None if there is nothing."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return identity(st)


def cache_dirs(cache: Any) -> tuple[str, ...]:
    """The folders a ``FileStreamProgramCache`` writes its files into (which the include fingerprint must not see).

    Its ``entries/`` and ``tmp/`` subfolders, not the cache folder itself: that folder may be an include
    folder too (``-I build --cache build``, ``--cache .`` beside the source), and every header in it must
    stay in the key. A subfolder that holds anything but the cache's own files (``build/tmp/gen.cuh``:
    :func:`foreign_cache_files`) is not left out either, nor is any folder of a cache whose layout is not
    known (not a ``FileStreamProgramCache``, or a cuda.core without these attributes): their files then
    change the key, which costs hits, never serves a stale entry.
    """
    dirs = [getattr(cache, a, None) for a in ("_entries", "_tmp")]  # cuda.core >= 1.2.0; private, feature-detected
    found = [os.fspath(d) for d in dirs if isinstance(d, (str, os.PathLike))]
    return tuple(d for d in found if not _foreign(d, os.path.basename(d)))


def _is_own(kind: str, name: str) -> bool:
    """A name a ``FileStreamProgramCache`` gives what it writes: ``entries/<2 hex>/<62 hex>``, ``tmp/entry-*``."""
    if kind == "entries":
        return len(name) == 2 and all(c in "0123456789abcdef" for c in name)
    return kind == "tmp" and name.startswith("entry-")


def _foreign(folder: str, kind: str) -> list[str]:
    """The names in ``folder`` (a cache's ``entries/`` or ``tmp/``) that the cache did not write ([] if no folder)."""
    try:
        with os.scandir(folder) as listing:
            return sorted(e.name for e in listing if not _is_own(kind, e.name))
    except FileNotFoundError:
        return []
    except OSError:  # not a folder, unreadable: not known to be the cache's
        return [""]


def foreign_cache_files(root: str | os.PathLike[str]) -> list[str]:
    """What a ``FileStreamProgramCache`` folder ``root`` holds in its ``entries/`` and ``tmp/`` that it did not write.

    The cache deletes files over an hour old in ``tmp/`` when it opens (and prunes ``entries/``), so a
    folder whose ``tmp/`` or ``entries/`` holds files of its own (``--cache .`` in a project with a
    ``tmp/`` folder) must not be opened as a cache: ``cuda-fatbin compile --cache`` refuses it. Paths
    relative to ``root``, at most the first 5.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "tmp").mkdir()
    >>> _ = (root / "tmp" / "notes.txt").write_text("mine")
    >>> foreign_cache_files(root)
    ['tmp/notes.txt']
    """
    found = [(kind, _foreign(os.path.join(root, kind), kind)) for kind in ("entries", "tmp")]
    return [f"{kind}/{name}".rstrip("/") for kind, names in found for name in names][:5]


class _Budget:
    """The files and bytes the include fingerprint may still read; the error says how to raise them."""

    def __init__(self, max_files: int) -> None:
        self.files, self.bytes = max_files, max_files * INCLUDE_BYTES_PER_FILE
        self.max_files = max_files
        self.newest = 0  # the latest st_mtime_ns / st_ctime_ns of the files hashed

    def take(self, size: int, where: str) -> None:
        self.files -= 1
        self.bytes -= size
        if self.files < 0 or self.bytes < 0:
            raise ValueError(
                f"the include path {where} holds over {self.max_files} header-like files or "
                f"{self.max_files * INCLUDE_BYTES_PER_FILE >> 20} MiB, too many to fingerprint for the cache key: "
                "exclude the folders that hold no headers (cache_exclude=[...]; on the command line "
                "--cache-exclude DIR) or raise the limit (cache_max_files=N; on the command line "
                "--cache-max-files N)"
            )


def include_digest(
    options: Any,
    *,
    exclude: Iterable[str | os.PathLike[str]] = (),
    max_files: int = MAX_INCLUDE_FILES,
    labels: Mapping[str | os.PathLike[str], str] | None = None,
) -> bytes:
    """SHA-256 over the header files the options can pull in: include directories and pre-includes.

    Each include directory is walked without recursion (a tree of any depth), links to folders followed
    once each; hashed are the relative path and content of every regular file with a header-like suffix
    (or none), and the names of special files. Not walked: hidden folders (``.git``), ``__pycache__``,
    and the files and folders in ``exclude`` (the cache's own folder, build outputs), matched by
    identity, not spelling. A folder in ``labels`` is hashed as its label (``"nvidia-cuda-cccl 13.0.85"``)
    instead of its content: system headers keyed by the version of the package that ships them.

    Raises
    ------
    ValueError
        The directories hold more than ``max_files`` header-like files, or more than ``max_files`` times
        :data:`INCLUDE_BYTES_PER_FILE` bytes of them; the message names what to exclude or raise.
    """
    return include_state(options, exclude=exclude, max_files=max_files, labels=labels)[0]


def include_state(
    options: Any,
    *,
    exclude: Iterable[str | os.PathLike[str]] = (),
    max_files: int = MAX_INCLUDE_FILES,
    labels: Mapping[str | os.PathLike[str], str] | None = None,
) -> tuple[bytes, int]:
    """:func:`include_digest`, and the latest modification or status-change time (ns) of the files it hashed.

    A compile whose headers change while it runs must not be stored under the key taken before it: the
    caller fingerprints again after the compile and stores only if the digest is the same and no file
    hashed changed after the first fingerprint began (ccache refuses to store an include newer than the
    compile's start, for the same reason).
    """
    if isinstance(max_files, bool) or not isinstance(max_files, int) or max_files < 1:
        raise ValueError(f"cache_max_files must be a positive int; got {max_files!r}")
    h = hashlib.sha256()
    dirs = options.include_path or []
    dirs = [dirs] if isinstance(dirs, (str, os.PathLike)) else list(dirs)
    pre = options.pre_include or []
    pre = [pre] if isinstance(pre, (str, os.PathLike)) else list(pre)
    skip = {i for i in map(_path_identity, exclude) if i is not None}
    named = {_path_identity(k): v for k, v in (labels or {}).items()}
    budget = _Budget(max_files)
    seen: set[tuple[int, int]] = set()  # a folder reached from two include directories is hashed once
    for d in dirs:
        h.update(f"dir {os.fspath(d)}\0".encode(errors="surrogateescape"))
        label = named.get(_path_identity(d))
        if label is not None:
            h.update(f"label {label}\0".encode(errors="surrogateescape"))
        else:
            _hash_tree(h, os.fspath(d), skip, budget, seen)
    for p in pre:
        h.update(f"pre {os.fspath(p)}\0".encode(errors="surrogateescape"))
        _hash_file(h, os.fspath(p), None, skip, budget, os.fspath(p))
    return h.digest(), budget.newest


def _hash_tree(h: Any, root: str, skip: set[tuple[int, int]], budget: _Budget, seen: set[tuple[int, int]]) -> None:
    """Hash the header-like files under ``root``, depth first in name order (:func:`~cuda_fatbin._walk.walk_tree`):
    links to folders followed (a linked header is what the compiler reads), each folder once (``seen``), the
    folders in ``skip`` passed over; a folder that cannot be opened or listed is hashed as such (gone,
    unreadable: no compiler reads it either)."""

    def listed(folder: Folder) -> list[tuple[str, tuple[int, int] | None]]:
        folders: list[tuple[str, tuple[int, int] | None]] = []
        for entry in folder.entries:
            name = entry.name
            if name.startswith(".") or name in _SKIPPED_DIRS:
                continue
            try:
                is_dir = entry.is_dir()  # a link to a folder is followed; `seen` stops a loop
            except OSError:
                is_dir = False
            if is_dir:
                folders.append((name, None))
            elif os.path.splitext(name)[1].lower() in _HEADER_SUFFIXES:
                inner = f"{folder.rel}/{name}" if folder.rel else name
                where = name if folder.fd is not None else os.path.join(folder.path, name)
                _hash_file(h, where, folder.fd, skip, budget, inner, root)
        return folders

    def unopened(path: str, rel: str, e: OSError) -> None:
        h.update(f"unopened {rel} {e.errno}\0".encode(errors="surrogateescape"))

    walk_tree(root, listed, unopened, once=seen, skip=skip)


def _hash_file(
    h: Any, path: str, dir_fd: int | None, skip: set[tuple[int, int]], budget: _Budget, rel: str, root: str = ""
) -> None:
    """Hash one file's name and content; a special file (FIFO, device) by its name only, never opened."""
    try:
        st = os.stat(path, dir_fd=dir_fd)  # links followed: a linked header is what the compiler reads
    except OSError as e:
        h.update(f"unreadable {rel} {e.errno}\0".encode(errors="surrogateescape"))
        return
    if identity(st) in skip:
        return
    if not stat.S_ISREG(st.st_mode):
        h.update(f"special {rel} {describe(st)}\0".encode(errors="surrogateescape"))
        return
    budget.take(st.st_size, root or rel)
    budget.newest = max(budget.newest, st.st_mtime_ns or 0, st.st_ctime_ns or 0)  # (a synthetic stat: None)
    try:
        fd = os.open(path, os.O_RDONLY | O_NONBLOCK | O_CLOEXEC | getattr(os, "O_NOCTTY", 0), dir_fd=dir_fd)
    except OSError as e:
        h.update(f"unreadable {rel} {e.errno}\0".encode(errors="surrogateescape"))
        return
    content = hashlib.sha256()
    try:
        left = st.st_size  # what stat said: a file growing while read is hashed as it was
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            content.update(chunk)
            left -= len(chunk)
    except OSError as e:  # swapped for a folder or a FIFO after the stat
        content.update(f"unreadable {e.errno}".encode())
    finally:
        os.close(fd)
    h.update(f"{rel}\0".encode(errors="surrogateescape"))
    h.update(content.digest())


def _entry_path(cache: Any, key: bytes) -> str | None:
    """The file of ``key`` in a plain ``FileStreamProgramCache`` (whose reads we do ourselves), else None."""
    try:
        from cuda.core.utils import FileStreamProgramCache
    except ImportError:
        return None
    kind = type(cache)
    if not isinstance(cache, FileStreamProgramCache) or any(
        getattr(kind, m, None) is not getattr(FileStreamProgramCache, m, None) for m in ("get", "__getitem__")
    ):  # a subclass that reads its own way is asked, not bypassed
        return None
    path_for = getattr(cache, "_path_for_key", None)  # cuda.core >= 1.2.0; feature-detected, a private method
    if not callable(path_for):
        return None
    try:
        path = path_for(key)
    except Exception:  # another layout in a later cuda.core: ask the cache itself
        return None
    return os.fspath(path) if isinstance(path, (str, os.PathLike)) else None


def read_entry(cache: Any, key: bytes) -> bytes | None:
    """The stored value of ``key``, None for a miss; ``CacheEntryError`` for anything that is not a plain value.

    In a ``FileStreamProgramCache`` the entry's file is opened here, not by cuda.core (whose read
    follows a symlink to ``/dev/zero`` and blocks on a FIFO): ``O_NOFOLLOW | O_NONBLOCK``, then the
    ``fstat`` of what was opened must say a regular file of at most :data:`MAX_ENTRY_BYTES`, read
    exactly. Its access time is set, as cuda.core's read does, for its least-recently-read eviction.
    Other caches are asked with ``get`` and held to the same size.
    """
    path = _entry_path(cache, key)
    if path is None:
        value = cache.get(key)
        if value is None:
            return None
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise CacheEntryError(f"the cache returned {type(value).__name__}, not bytes")
        if len(value) > MAX_ENTRY_BYTES:
            raise CacheEntryError(f"{len(value)} bytes, over the limit of {MAX_ENTRY_BYTES}")
        return bytes(value)
    try:
        fd, st = open_input(path, follow=False)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise CacheEntryError(f"{path}: {'a symlink' if os.path.islink(path) else e.strerror}") from None
    try:
        check_regular(st, MAX_ENTRY_BYTES, path)
        data = read_exact(fd, st.st_size, path)
        if os.utime in os.supports_fd:
            with contextlib.suppress(OSError):
                os.utime(fd, ns=(time.time_ns(), st.st_mtime_ns))
    except OSError as e:
        raise CacheEntryError(f"{path}: {e.strerror}") from None
    finally:
        os.close(fd)
    return data


def drop_entry(cache: Any, key: bytes) -> None:
    """Remove a corrupt entry: through the cache, then, in a file cache, whatever non-folder is left at its name.

    A symlink is removed, not what it points to; a folder planted there is removed only if empty (its
    content is not ours), and then the next store fails quietly and the job is compiled again next time.
    """
    with contextlib.suppress(KeyError, OSError):
        del cache[key]
    path = _entry_path(cache, key)
    if path is None:
        return
    with contextlib.suppress(OSError):
        if stat.S_ISDIR(os.lstat(path).st_mode):
            os.rmdir(path)
        else:
            os.unlink(path)


def job_key(
    job: Job,
    code: str | bytes,
    code_type: str,
    options: Any,
    names: Iterable[str],
    args: tuple[Any, ...],
    extra_digest: bytes,
) -> bytes:
    """The cache key of one job: ``options`` are its single-arch options, ``args`` its ``run_job`` arguments."""
    try:
        from cuda.core.utils import make_program_cache_key
    except ImportError as e:
        raise ImportError(f"cache= needs cuda.core.utils.make_program_cache_key (cuda-core >= 1.2.0): {e}") from None
    _source, _name, front, link, _names = args
    # include_path / pre_include content is hashed into extra_digest, which make_program_cache_key asks for
    key_options = dataclasses.replace(options, include_path=None, pre_include=None)
    described = {
        "schema": _SCHEMA,
        "job": str(job),
        "emit": [[k, str(a)] for k, a in job.emit],
        "front": [o.hex() for o in front],
        "link": {str(a): [o.hex() for o in opts] for a, opts in sorted(link.items())},
        "extra": extra_digest.hex(),
    }
    if job.link:
        from cuda.bindings import nvjitlink

        described["nvjitlink"] = list(nvjitlink.version())
    digest = hashlib.sha256(json.dumps(described, sort_keys=True).encode()).digest()
    key: bytes = make_program_cache_key(
        code=code, code_type=code_type, options=key_options, target_type=job.target,
        name_expressions=tuple(names), extra_digest=digest,
    )  # fmt: skip
    return key


def encode(result: JobResult) -> bytes:
    """Serialise a job result: magic, header length, JSON header, payloads, SHA-256 of all of it."""
    header = {
        "job": str(result.job),
        "artifacts": [[kind, str(arch), len(data)] for kind, arch, data in result.artifacts],
        "symbols": {k: (v.hex() if isinstance(v, bytes) else None, v if isinstance(v, str) else None)
                    for k, v in result.symbol_mapping.items()},
    }  # fmt: skip
    head = json.dumps(header, sort_keys=True).encode()
    body = _MAGIC + struct.pack("<I", len(head)) + head + b"".join(d for _, _, d in result.artifacts)
    return body + hashlib.sha256(body).digest()


def decode(value: bytes, job: Job) -> JobResult:
    """Parse a stored value back into the job's result; ``CacheEntryError`` if it is not whole or not this job's.

    The checksum is checked first, then the header is decoded with a bound on its nesting
    (:func:`~cuda_fatbin._files.loads_json`) and every field's type, so a foreign value with a valid
    checksum is still only a ``CacheEntryError``.
    """
    if len(value) < len(_MAGIC) + 4 + 32 or not value.startswith(_MAGIC):
        raise CacheEntryError("not a cuda-fatbin job entry")
    body, digest = value[:-32], value[-32:]
    if hashlib.sha256(body).digest() != digest:
        raise CacheEntryError("checksum mismatch (torn or corrupted entry)")
    (n,) = struct.unpack_from("<I", body, len(_MAGIC))
    start = len(_MAGIC) + 4
    try:
        header = loads_json(body[start : start + n], _MAX_HEADER_DEPTH)
        if not isinstance(header, dict) or not isinstance(header.get("symbols"), dict):
            raise TypeError("the header is not an object with a symbol mapping")
        pos = start + n
        artifacts = []
        for kind, arch, size in header["artifacts"]:
            if not isinstance(size, int) or isinstance(size, bool) or size < 0 or not isinstance(kind, str):
                raise TypeError(f"artifact record {kind!r}, {size!r}")
            artifacts.append((kind, Arch.parse(arch), body[pos : pos + size]))
            pos += size
        mapping: dict[str, Any] = {}  # bytes from NVRTC; str where a name expression was given as str
        for name, (hx, text) in header["symbols"].items():
            if not isinstance(text if hx is None else hx, str):
                raise TypeError(f"symbol record of {name!r}")
            if hx is None:
                text.encode()  # not UTF-8 (a lone surrogate): UnicodeEncodeError, a ValueError, refused below
            mapping[name] = bytes.fromhex(hx) if hx is not None else text
    except (ValueError, KeyError, TypeError) as e:
        raise CacheEntryError(f"unreadable header: {e}") from None
    if pos != len(body) or header.get("job") != str(job):
        raise CacheEntryError("entry does not match the job")
    if [(k, a) for k, a, _ in artifacts] != list(job.emit):
        raise CacheEntryError("entry holds other artifacts than the job makes")
    return JobResult(job, tuple(artifacts), mapping, "")
