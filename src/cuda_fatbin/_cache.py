"""Per-job caching of multi-arch compiles in a cuda.core ``ProgramCacheResource``.

Each job of a plan (one arch, or one gencode group) is stored under its own key, derived with
cuda.core's ``make_program_cache_key`` from the source, the options with the job's arch, the target
and the name expressions; everything else that shapes the job's output (the archs it links, the
nvJitLink options, raw extra options, the content of the include directories) goes into the key's
``extra_digest``. Adding an arch therefore compiles that arch only, and an unchanged build compiles
nothing.

A stored value is self-checking: a magic, a JSON header listing the artifacts and the symbol
mapping, the payloads, and a SHA-256 of all of it. A torn, truncated or foreign value is detected on
read, deleted and recompiled, never used. cuda.core's ``FileStreamProgramCache`` writes each value
atomically (temp file + ``os.replace``), so processes sharing a directory see whole values only.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from ._arch import Arch
from ._multiarch import Job, JobResult

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

__all__ = ["CacheReport"]

_MAGIC = b"CFBJOB1\n"
_SCHEMA = "cuda-fatbin job cache 1"
_MAX_INCLUDE_FILES = 20_000
_MAX_INCLUDE_BYTES = 512 * 2**20
_HEADER_SUFFIXES = {".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc", ".tcc", ".cu", ".def", ""}


class CacheEntryError(ValueError):
    """A cached value is not a whole, matching job result."""


@dataclass(frozen=True)
class CacheReport:
    """What the last cached ``compile("fatbin")`` did: jobs served from the cache, compiled, or found corrupt.

    Attributes
    ----------
    hits, misses, corrupt : tuple of str
        Job descriptions (``"NVRTC sm_80 -> cubin"``). Corrupt entries were deleted and recompiled.

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

    def __str__(self) -> str:
        return f"cache: {len(self.hits)} hit(s), {len(self.misses)} miss(es), {len(self.corrupt)} corrupt"


def include_digest(options: Any) -> bytes:
    """SHA-256 over the header files the options pull in: include directories (recursively) and pre-includes.

    Raises
    ------
    ValueError
        If the directories hold more than 20,000 files or 512 MiB: pass ``cache_extra_digest=`` instead.
    """
    h = hashlib.sha256()
    dirs = options.include_path or []
    dirs = [dirs] if isinstance(dirs, (str, os.PathLike)) else list(dirs)
    pre = options.pre_include or []
    pre = [pre] if isinstance(pre, (str, os.PathLike)) else list(pre)
    count = size = 0
    for d in dirs:
        root = Path(d)
        h.update(f"dir {root}\0".encode())
        if not root.is_dir():
            continue
        files = (p for p in root.rglob("*") if p.suffix.lower() in _HEADER_SUFFIXES and p.is_file())
        for path in sorted(p for p in files if not any(part.startswith(".") for part in p.relative_to(root).parts)):
            count += 1
            size += path.stat().st_size
            if count > _MAX_INCLUDE_FILES or size > _MAX_INCLUDE_BYTES:
                raise ValueError(
                    f"include path {root} is too large to fingerprint for the cache (over {_MAX_INCLUDE_FILES} "
                    f"files or {_MAX_INCLUDE_BYTES >> 20} MiB); pass cache_extra_digest= with your own digest"
                )
            h.update(f"{path.relative_to(root)}\0".encode())
            h.update(hashlib.sha256(path.read_bytes()).digest())
    for p in pre:
        h.update(f"pre {p}\0".encode())
        path = Path(p)
        if path.is_file():
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.digest()


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
        raise ImportError(f"cache= needs cuda.core.utils.make_program_cache_key (cuda-core >= 1.2.2): {e}") from None
    _source, _name, front, link, _names = args
    target = ("cubin" if job.link else "ptx") if job.front == "none" else job.target
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
        code=code, code_type=code_type, options=key_options, target_type=target,
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
    """Parse a stored value back into the job's result; ``CacheEntryError`` if it is not whole or not this job's."""
    if len(value) < len(_MAGIC) + 4 + 32 or not value.startswith(_MAGIC):
        raise CacheEntryError("not a cuda-fatbin job entry")
    body, digest = value[:-32], value[-32:]
    if hashlib.sha256(body).digest() != digest:
        raise CacheEntryError("checksum mismatch (torn or corrupted entry)")
    (n,) = struct.unpack_from("<I", body, len(_MAGIC))
    start = len(_MAGIC) + 4
    try:
        header = json.loads(body[start : start + n])
        pos = start + n
        artifacts = []
        for kind, arch, size in header["artifacts"]:
            artifacts.append((kind, Arch.parse(arch), body[pos : pos + size]))
            pos += size
        mapping = {k: bytes.fromhex(hx) if hx is not None else s for k, (hx, s) in header["symbols"].items()}
    except (ValueError, KeyError, TypeError) as e:
        raise CacheEntryError(f"unreadable header: {e}") from None
    if pos != len(body) or header.get("job") != str(job):
        raise CacheEntryError("entry does not match the job")
    if [(k, a) for k, a, _ in artifacts] != list(job.emit):
        raise CacheEntryError("entry holds other artifacts than the job makes")
    return JobResult(job, tuple(artifacts), mapping, "")
