# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Ship precompiled kernels: one fatbin per kernel suite and a JSON manifest, checked before load.

``KernelBundle.build(directory, suites, archs=...)`` compiles every suite for every arch at build time
(with an optional cache), then publishes ``<suite>.<hash>.fatbin`` files and ``manifest.json``: written
into a fresh staging folder inside ``directory``, renamed next to it, and made current by renaming the
manifest over the old one (docs/caching.md, "How a build replaces a bundle"). At run time
``KernelBundle.open(path_or_importlib_resource).load("suite")`` checks that the current GPU and driver
can run one of the suite's entries (with :func:`select_entry`) and raises :class:`BundleCoverageError`
saying what the bundle has, what the device is and how to rebuild, before the driver's
"no kernel image is available".
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import struct
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._errors import Error
from ._files import (
    DIR_FD,
    check_regular,
    create_new,
    fsync_dir,
    identity,
    loads_json,
    locked_dir,
    open_dir,
    open_input,
    read_regular,
)
from ._reader import read_fatbin
from ._select import ZSTD_MIN_CUDA, parse_driver, ptx_isa_needs, select_entry
from ._term import PRINTABLE_TEXT, is_printable_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from importlib.abc import Traversable

    from cuda.core import ObjectCode

    from ._arch import Arch, ArchSpec
    from ._fatbin import FatbinOptions
    from ._multiarch import LogSink
    from ._select import DriverSpec, Selection

__all__ = ["BundleCoverageError", "BundleError", "KernelBundle", "KernelSuite"]

MANIFEST = "manifest.json"
#: Manifest schema. 2 added ``record_sha256``, which covers each suite's whole record (symbol mapping
#: and coverage fields included) and so the fatbin's hash too.
SCHEMA = 2
#: The largest manifest :meth:`KernelBundle.open` reads.
MAX_MANIFEST_BYTES = 16 << 20
#: The deepest nesting of arrays and objects a manifest may have (this package writes 5 levels).
MAX_MANIFEST_DEPTH = 16
_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}")
#: Suite names: as file names, less the room the hash and suffix take in ``<suite>.<hash>.fatbin``.
_SUITE_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")
#: The files a build writes: ``<suite>.<first 16 hex digits of the SHA-256 of the content>.fatbin``.
_FILE_RE = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.-]{0,99})\.([0-9a-f]{16})\.fatbin")
#: The staging folders a build makes (``tempfile.mkdtemp(prefix=...)`` inside the bundle).
_STAGE_PREFIX = ".cuda-fatbin-build-"
_HEX64_RE = re.compile(r"[0-9a-f]{64}")
#: How every manifest a build writes begins (keys sorted: "built_with" first; one-space indents).
_MANIFEST_HEAD = b'{\n "built_with": {'

#: A fatbin's header: magic, version, header size, size of what follows (docs/formats.md).
_FATBIN_HEADER = struct.Struct("<IHHQ")
_FATBIN_MAGIC = 0xBA55ED50
_VERSION_RE = re.compile(r"[1-9][0-9]?\.[0-9]{1,2}")  # a CUDA version: "12.4", "13.0"


class BundleCoverageError(Error, RuntimeError):
    """The current GPU or driver cannot run any entry of a bundle's suite.

    Examples
    --------
    >>> import tempfile
    >>> from cuda_fatbin import BundleCoverageError, KernelBundle, KernelSuite
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> bundle = KernelBundle.build(tempfile.mkdtemp(), {"k": KernelSuite(src)}, archs=["sm_80"], ptx_for="none")
    >>> try:
    ...     bundle.check("k", gpu="7.5", driver="13.0")
    ... except BundleCoverageError as e:
    ...     print(str(e).split(":")[0])
    kernel suite 'k' cannot run on compute capability 7.5 with a CUDA 13.0 driver
    """


class BundleError(Error, ValueError):
    """A bundle is not what its manifest promises: malformed manifest, file outside the bundle, wrong hash.

    Attributes
    ----------
    field : str or None
        The manifest field that is wrong, as a path (``"suites.scale.file"``), where one is to blame.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> from cuda_fatbin import BundleError, KernelBundle
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "manifest.json").write_text(json.dumps({"schema": 3, "suites": {}}))
    >>> try:
    ...     KernelBundle.open(root)
    ... except BundleError as e:
    ...     print(e.field)
    schema
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field


@dataclass(frozen=True)
class KernelSuite:
    """One set of kernels compiled into one fatbin of a bundle.

    Attributes
    ----------
    source : str or bytes
        C++, PTX or NVVM IR source.
    name_expressions : sequence of str, optional
        Kernels to resolve by their C++ names (``"scale<float>"``). Default: ().
    code_type : str, optional
        ``"c++"``, ``"ptx"`` or ``"nvvm"``. Default: "c++".
    options : ProgramOptions, optional
        Compile options (no ``arch``). Default: None.
    archs, ptx_for : arch specs, optional
        Override the bundle's. Default: None (the bundle's).

    Examples
    --------
    >>> from cuda_fatbin import KernelSuite
    >>> suite = KernelSuite("template <typename T> __global__ void f(T* p) {}", ["f<float>"], archs="90a")
    >>> suite.code_type, suite.archs
    ('c++', '90a')
    """

    source: str | bytes
    name_expressions: Sequence[str] = ()
    code_type: str = "c++"
    options: Any = None
    archs: Any = None
    ptx_for: Any = field(default=None)

    def __post_init__(self) -> None:
        if not isinstance(self.source, (str, bytes, bytearray)):
            raise TypeError(f"KernelSuite source must be str or bytes; got {type(self.source).__name__}")


def _versions() -> dict[str, str | None]:
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str | None] = {}
    for dist in ("cuda-fatbin", "cuda-core", "cuda-bindings"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    try:
        from cuda.bindings import nvfatbin, nvrtc

        out["nvrtc"] = "{}.{}".format(*nvrtc.nvrtcVersion()[1:])
        out["libnvfatbin"] = "{}.{}".format(*nvfatbin.version())
    except Exception:
        pass
    return out


def _describe(data: bytes, mapping: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest record of one suite's fatbin."""
    fb = read_fatbin(data)
    entries = list(fb.iter_entries())
    ptx = [e for e in entries if e.kind == "ptx"]
    isa = max((e.version for e in ptx), default=None)
    compressions = sorted({e.compression for e in entries})
    ptx_driver = "{}.{}".format(*ptx_isa_needs(isa)) if isa else None
    return {
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
        "entries": [
            {
                "kind": e.kind,
                "arch": str(e.arch) if e.arch else None,
                "version": "{}.{}".format(*e.version),
                "compression": e.compression,
            }
            for e in entries
        ],
        "sass_archs": [str(a) for a in sorted({e.arch for e in entries if e.kind == "elf" and e.arch is not None})],
        "ptx_archs": [a.compute for a in sorted({e.arch for e in ptx if e.arch is not None})],
        "ptx_isa": "{}.{}".format(*isa) if isa else None,
        "ptx_min_driver_cuda": ptx_driver,
        "compression": compressions,
        "decompress_min_driver_cuda": "{}.{}".format(*ZSTD_MIN_CUDA) if "zstd" in compressions else None,
        "symbol_mapping": {k: v.decode() if isinstance(v, bytes) else v for k, v in mapping.items()},
    }


class KernelBundle:
    """A directory (or package data) of fatbins, one per kernel suite, with a manifest.

    Build one with :meth:`build`, open it at run time with :meth:`open`, get a suite with :meth:`load`.

    Attributes
    ----------
    manifest : dict
        The parsed, validated ``manifest.json`` (schema :data:`SCHEMA`): per suite its file, size,
        SHA-256, entries, archs, PTX ISA and the driver it needs.
    suites : list of str
        The suite names.

    Examples
    --------
    >>> import tempfile
    >>> from cuda_fatbin import KernelBundle, KernelSuite
    >>> src = "template <typename T> __global__ void scale(T* p, T a) { p[0] *= a; }"
    >>> suites = {"scale": KernelSuite(src, ["scale<float>", "scale<double>"])}
    >>> root = tempfile.mkdtemp()
    >>> _ = KernelBundle.build(root, suites, archs="80;90+PTX")
    >>> bundle = KernelBundle.open(root)  # at run time, e.g. from package data
    >>> bundle.suites
    ['scale']
    >>> bundle.check("scale", gpu="8.6", driver="13.0").status
    'SASS compatible'
    >>> kernel = bundle.load("scale").get_kernel("scale<float>")  # on a GPU  # doctest: +SKIP
    """

    def __init__(self, root: Path | Traversable, manifest: dict[str, Any]) -> None:
        self._root = root
        self.manifest = manifest

    @property
    def suites(self) -> list[str]:
        """The suite names."""
        return sorted(self.manifest["suites"])

    @classmethod
    def build(
        cls,
        directory: str | os.PathLike[str],
        suites: Mapping[str, KernelSuite],
        *,
        archs: ArchSpec,
        ptx_for: ArchSpec | None = None,
        fatbin_options: FatbinOptions | None = None,
        cache: Any = None,
        max_workers: int | None = None,
        logs: LogSink | None = None,
        min_driver: DriverSpec = None,
    ) -> KernelBundle:
        """Compile every suite, then replace the bundle in ``directory`` (``<name>.<hash>.fatbin`` files, a manifest).

        Every suite is compiled before anything is written, so a compile error leaves ``directory`` as it
        was. The files are then written into a fresh staging folder inside ``directory``, renamed in, and
        the new ``manifest.json`` renamed over the old one as the last step: until then readers see the
        old bundle, after it the new one, and a failure (a full disk, Ctrl-C) leaves the old one loading
        exactly as before. Nothing is written outside ``directory`` and no symlink there is followed. Then
        the replaced bundle's files and the leftovers of crashed builds are removed, and nothing else
        (docs/caching.md); a :class:`KernelBundle` opened before the rebuild then says to open it again.

        Parameters
        ----------
        directory : path
            Where to write (created if missing; other files there are left alone).
        suites : mapping of str to KernelSuite
            Suite name (up to 100 ASCII letters, digits, ``_``, ``-``, ``.``; not starting with ``.`` or
            ``-``) to what it compiles.
        archs, ptx_for : arch specs
            For every suite unless it overrides them (see ``Program.compile``).
        fatbin_options : FatbinOptions, optional
            Default: None.
        cache : cuda.core.utils.ProgramCacheResource, optional
            Per-arch job cache shared by all suites (rebuilds compile only what changed). Default: None.
        max_workers, logs
            As for ``Program.compile``.
        min_driver : str, int or tuple, optional
            The oldest driver the bundle supports: every suite must load on it for every GPU of its archs
            (``Program.compile(min_driver=)``, raises ``DriverCompatibilityError`` otherwise). Recorded in
            each suite's record; :meth:`load` refuses an older driver with a clear error. Default: None.

        Returns
        -------
        KernelBundle

        Raises
        ------
        ValueError, TypeError
            No suite, a bad suite name, a suite that is not a :class:`KernelSuite`, a name expression
            that is not printable text (a tab, a trailing newline: ``_term.is_printable_text``).
        FatbinCompileError
            A suite does not compile (nothing has been written).
        OSError
            ``directory`` cannot be written (a full disk, a folder planted at a file's name); the previous
            bundle is left as it was.
        """
        from ._program import Program

        if not isinstance(suites, Mapping):
            raise TypeError(f"suites must be a mapping of suite name to KernelSuite; got {type(suites).__name__}")
        if not suites:
            raise ValueError("a bundle needs at least one suite")
        for name, suite in suites.items():  # every name and type before anything is compiled
            if not isinstance(suite, KernelSuite):
                raise TypeError(f"suite {name!r} must be a KernelSuite; got {type(suite).__name__}")
            if not isinstance(name, str) or not _SUITE_RE.fullmatch(name):
                raise ValueError(
                    f"suite name {name!r}: use up to 100 ASCII letters, digits, '_', '-' and '.', not first '.' or '-'"
                )
            exprs = suite.name_expressions
            for expr in (exprs,) if isinstance(exprs, str) else exprs:  # open() refuses what this would write
                if not is_printable_text(expr):
                    raise ValueError(f"suite {name!r}: name expression {expr!r} is not {PRINTABLE_TEXT}")
        floor = parse_driver(min_driver)
        records: dict[str, dict[str, Any]] = {}
        files: dict[str, bytes] = {}
        manifest: dict[str, Any] = {"schema": SCHEMA, "built_with": _versions(), "suites": records}
        for name, suite in suites.items():  # compile everything before writing anything: a failure writes nothing
            program = Program(suite.source, suite.code_type, suite.options)
            own = suite.archs is not None  # a suite with its own archs takes its own PTX default too
            obj = program.compile(
                "fatbin",
                suite.name_expressions,
                logs,
                archs=suite.archs if own else archs,
                ptx_for=suite.ptx_for if suite.ptx_for is not None or own else ptx_for,
                fatbin_options=fatbin_options,
                cache=cache,
                max_workers=max_workers,
                min_driver=min_driver,
            )
            data = bytes(obj.code)
            file = f"{name}.{hashlib.sha256(data).hexdigest()[:16]}.fatbin"
            files[file] = data
            record: dict[str, Any] = {"file": file, **_describe(data, obj.symbol_mapping),
                                      "min_driver": None if floor is None else f"{floor[0]}.{floor[1]}"}  # fmt: skip
            record["record_sha256"] = _record_digest(record)
            records[name] = record
        root = Path(directory)
        root.mkdir(parents=True, exist_ok=True)
        _publish(root, files, json.dumps(manifest, indent=1, sort_keys=True).encode())
        return cls(root, manifest)

    @classmethod
    def open(cls, root: str | os.PathLike[str] | Traversable) -> KernelBundle:
        """Open a bundle from a directory path or an ``importlib.resources`` traversable (package data).

        The manifest is read (at most :data:`MAX_MANIFEST_BYTES`) and checked against its schema: every
        field's type, the schema version, plain file names inside the bundle. Files are checked when a
        suite is read (:meth:`fatbin`).

        Raises
        ------
        BundleError
            No manifest, one of another schema, or any field malformed; the message names the field.
        """
        if not isinstance(root, (str, os.PathLike)) and not callable(getattr(root, "joinpath", None)):
            raise TypeError(
                f"a bundle is a folder path or an importlib.resources traversable; got {type(root).__name__}"
            )
        root = Path(root) if isinstance(root, (str, os.PathLike)) else root
        where = f"{root}/{MANIFEST}"
        try:
            target = _on_disk(root, MANIFEST)
            if target is not None:  # a symlink, a FIFO, a device or a folder there is refused, never read
                raw = read_regular(target, MAX_MANIFEST_BYTES)
            else:  # package data inside a zip: no links nor devices there; the read is bounded all the same
                raw = _read_resource(root.joinpath(MANIFEST), MAX_MANIFEST_BYTES)
                if len(raw) > MAX_MANIFEST_BYTES:
                    raise OSError(errno.EFBIG, f"over the limit of {MAX_MANIFEST_BYTES} bytes")
        except FileNotFoundError:
            raise BundleError(f"{root} is not a kernel bundle: no {MANIFEST}") from None
        except OSError as e:
            raise BundleError(f"{where} cannot be read: {e.strerror or e}; not a manifest this package wrote") from None
        try:
            manifest = loads_json(raw, MAX_MANIFEST_DEPTH)
        except ValueError as e:
            raise BundleError(f"{where} is not valid JSON ({type(e).__name__}: {e}); rebuild the bundle") from None
        _validate(manifest)
        return cls(root, manifest)

    def __repr__(self) -> str:
        return f"<KernelBundle {self._root} suites={self.suites}>"

    def fatbin(self, suite: str) -> bytes:
        """The suite's fatbin bytes, checked against the manifest before and after reading.

        The suite's record must match its ``record_sha256`` (so an edited symbol mapping or coverage
        field is refused before anything is read), its file must be a regular file directly inside the
        bundle (not a symlink leading out) of the recorded size, and the bytes must match ``sha256``.

        Raises
        ------
        BundleError
            Any of the checks fails.
        KeyError
            No such suite.
        """
        record = self._record(suite)
        field = f"suites.{suite}"
        if _record_digest(record) != record["record_sha256"]:
            raise BundleError("the record was edited after the bundle was built (record_sha256); rebuild", field)
        name, size = record["file"], record["size"]
        root = self._root
        path = _on_disk(root, name)
        if path is not None:  # a plain name (checked by open): directly inside the bundle
            try:
                data = read_regular(path, size)
            except FileNotFoundError:
                if _manifest_names(path.parent, suite) not in (name, None):
                    raise BundleError(f"the bundle in {root} was rebuilt after it was opened: open it again "
                                      "(KernelBundle.open)", f"{field}.file") from None  # fmt: skip
                raise BundleError(f"{name} is missing from {root}; rebuild the bundle", f"{field}.file") from None
            except OSError as e:
                if e.errno == errno.EFBIG:
                    raise BundleError(f"{name} is not of the recorded size {size}; rebuild the bundle",
                                      f"{field}.file") from None  # fmt: skip
                if e.errno in (errno.ELOOP, errno.EINVAL):
                    raise BundleError(f"{name} is {e.strerror}: a bundle holds only regular files directly inside "
                                      f"it; rebuild the bundle", f"{field}.file") from None  # fmt: skip
                raise BundleError(f"{name} cannot be read: {e.strerror}", f"{field}.file") from None
            if len(data) != size:
                raise BundleError(f"{name} is not of the recorded size {size}; rebuild the bundle", f"{field}.file")
        else:  # a zip or other importlib.resources Traversable
            try:
                data = _read_resource(root.joinpath(name), size)
            except FileNotFoundError:
                raise BundleError(f"{name} is missing from {root}; rebuild the bundle", f"{field}.file") from None
            except OSError as e:
                raise BundleError(f"{name} cannot be read: {e.strerror or e}", f"{field}.file") from None
        if len(data) != size or hashlib.sha256(data).hexdigest() != record["sha256"]:
            raise BundleError(f"{name} does not match its manifest hash; rebuild the bundle", f"{field}.sha256")
        return data

    def _record(self, suite: str) -> dict[str, Any]:
        try:
            record: dict[str, Any] = self.manifest["suites"][suite]
            return record
        except (KeyError, TypeError):
            raise KeyError(f"no suite {suite!r} in this bundle; it has {', '.join(self.suites)}") from None

    def check(self, suite: str, *, gpu: Arch | str | int | None = None, driver: DriverSpec = None) -> Selection:
        """The :class:`Selection` for ``suite`` on a GPU and driver (default: the current ones).

        Raises
        ------
        BundleCoverageError
            No entry can run there; the message lists what the bundle has and how to rebuild.
        """
        return self._check(suite, self.fatbin(suite), gpu, driver)

    def _check(self, suite: str, data: bytes, gpu: Arch | str | int | None, driver: DriverSpec) -> Selection:
        device = None
        if gpu is None or driver is None:
            dev_gpu, dev_driver, device = _current_device()
            gpu = dev_gpu if gpu is None else gpu
            driver = dev_driver if driver is None else driver
        record = self._record(suite)
        cuda = parse_driver(driver)
        floor = parse_driver(record.get("min_driver"))
        if floor is not None and cuda is not None and cuda < floor:
            raise BundleCoverageError(
                f"kernel suite {suite!r} was built for CUDA {floor[0]}.{floor[1]}+ drivers; this driver is CUDA "
                f"{cuda[0]}.{cuda[1]}. "
                f"To fix: update the driver, or rebuild the bundle with min_driver='{cuda[0]}.{cuda[1]}'."
            )
        sel = select_entry(data, gpu, driver=driver)
        if sel:
            return sel
        has = ", ".join(record["sass_archs"] + record["ptx_archs"]) or "nothing loadable"
        where = (
            f"{device} (compute capability {sel.gpu.capability})"
            if device
            else f"compute capability {sel.gpu.capability}"
        )
        if cuda is not None:
            where += f" with a CUDA {cuda[0]}.{cuda[1]} driver"
        fixes = [_rebuild_advice(sel.gpu)]
        need = record["ptx_min_driver_cuda"]
        if need and cuda is not None and select_entry(data, gpu):  # only the driver is too old
            fixes.append(
                f"or update the driver to CUDA {need}+ so that its PTX (ISA {record['ptx_isa']}) can be JIT-compiled"
            )
        raise BundleCoverageError(
            f"kernel suite {suite!r} cannot run on {where}: the bundle has {has}. {sel.reason}. "
            f"To fix: {'; '.join(fixes)}."
        )

    def load(self, suite: str, *, gpu: Arch | str | int | None = None, driver: DriverSpec = None) -> ObjectCode:
        """Check coverage, then return the suite as a ``cuda.core.ObjectCode`` with its symbol mapping.

        Parameters
        ----------
        suite : str
        gpu, driver : optional
            Check against these instead of the current device and driver (for build-time checks).
        """
        from cuda.core import ObjectCode

        data = self.fatbin(suite)
        self._check(suite, data, gpu, driver)
        mapping = {k: v.encode() for k, v in self._record(suite)["symbol_mapping"].items()}  # bytes, as cuda.core gives
        return ObjectCode.from_fatbin(data, name=suite, symbol_mapping=mapping)


def _rebuild_advice(gpu: Arch) -> str:
    """How to cover ``gpu``: with the installed NVRTC if it can target it, else which NVRTC can."""
    try:
        from ._arch import nvrtc_supported_sms

        sms = nvrtc_supported_sms()
    except Exception:  # no NVRTC here (a run-time-only install): the plain advice
        sms = None
    if sms is None or gpu.sm in sms:
        return f"rebuild with {gpu} in archs (e.g. archs=[..., '{gpu}'] or cuda-fatbin compile --arch ...)"
    lowest, highest = min(sms), max(sms)
    if gpu.sm < lowest:
        return (f"the installed NVRTC targets sm_{lowest} to sm_{highest}, not {gpu}: build this bundle with an "
                f"NVRTC that still targets {gpu} (CUDA 12.x: pip install 'nvidia-cuda-nvrtc-cu12'), or drop "
                f"compute capability {gpu.capability} from what you support")  # fmt: skip
    return (f"the installed NVRTC targets up to sm_{highest}, not {gpu}: add PTX for sm_{highest} (ptx_for=), which "
            f"a newer driver JIT-compiles for {gpu}, or upgrade NVRTC")  # fmt: skip


def _current_device() -> tuple[str, int, str]:
    from ._driver import NoDriverError, devices

    try:
        dev = devices("loading kernels")[0]
    except NoDriverError as e:
        raise BundleCoverageError(f"{e}; pass gpu= and driver= to check a bundle without one") from None
    return "{}.{}".format(*dev.capability), dev.driver, dev.name


def _record_digest(record: Mapping[str, Any]) -> str:
    """SHA-256 of a suite record's canonical JSON, without its own ``record_sha256`` field."""
    body = {k: v for k, v in record.items() if k != "record_sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _publish(root: Path, files: Mapping[str, bytes], manifest: bytes) -> None:
    """Make ``files`` and ``manifest`` the bundle in ``root``: staged aside, renamed in, the manifest last.

    Under an exclusive lock on ``root`` (two builds of one folder take turns): every file is created in a
    fresh ``mkdtemp`` folder inside ``root`` (``O_CREAT | O_EXCL | O_NOFOLLOW``, fsynced), renamed into
    ``root`` under its content-addressed name (a rename replaces a planted symlink, never follows it; a
    file the current manifest names has another name, or the same bytes), then the manifest is renamed
    over ``manifest.json``: the one atomic step that switches readers to the new bundle. Any failure
    before it leaves the old manifest naming the old, untouched files. After it, what earlier builds
    left is removed (:func:`_clean`).
    """
    with locked_dir(root) as locked:
        stage = Path(tempfile.mkdtemp(prefix=_STAGE_PREFIX, dir=root))
        made = identity(os.lstat(stage))
        fd = None
        try:  # the files are written and renamed by name in the folder made: one swapped meanwhile is not used
            fd = open_dir(stage, listed_as=made) if DIR_FD else None
            at = (lambda name: name) if fd is not None else (lambda name: str(stage / name))
            for name, data in files.items():
                create_new(at(name), data, dir_fd=fd)
            create_new(at(MANIFEST), manifest, dir_fd=fd)
            for name in files:
                os.replace(at(name), root / name, src_dir_fd=fd)
            fsync_dir(root)
            os.replace(at(MANIFEST), root / MANIFEST, src_dir_fd=fd)
            fsync_dir(root)
        finally:
            if fd is not None:
                os.close(fd)
            _remove_stage(stage, listed_as=made)
        if locked:  # without a lock another build may be between its renames: leave its files alone
            _clean(root, set(files))


def _read_resource(resource: Traversable, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of a bundle file read through ``importlib.resources`` (a zip member, say).

    A member that cannot be read (a damaged zip: ``zipfile.BadZipFile``, a failed decompression) is an
    ``OSError`` (``EIO``) naming what went wrong, as an unreadable file on disk is.
    """
    try:
        with resource.open("rb") as f:
            return f.read(limit + 1)
    except OSError:
        raise
    except Exception as e:  # zipfile.BadZipFile (CRC), zlib.error, EOFError: the archive is damaged
        raise OSError(errno.EIO, f"{type(e).__name__}: {e}") from None


def _on_disk(root: Path | Traversable, name: str) -> Path | None:
    """The file system path of ``name`` in the bundle, or None where it lives in no folder (a zip).

    A plain folder, and also package data that ``importlib.resources`` gives as another traversable whose
    children are paths (a namespace package: ``MultiplexedPath``): those are read as files on disk are,
    never through ``open()``, which follows links and waits on a FIFO.
    """
    if isinstance(root, Path):
        return root / name
    try:
        child = root.joinpath(name)
    except Exception:  # a traversable of another kind that cannot name the child: read through it
        return None
    return child if isinstance(child, Path) else None


def _manifest_names(root: Path, suite: str) -> str | None:
    """The file the bundle's manifest on disk names for ``suite`` now (None if it cannot tell)."""
    try:
        manifest = loads_json(read_regular(root / MANIFEST, MAX_MANIFEST_BYTES), MAX_MANIFEST_DEPTH)
        _validate(manifest)
        name: str = manifest["suites"][suite]["file"]
    except (OSError, ValueError, KeyError):
        return None
    return name


def _remove_stage(stage: Path, *, listed_as: tuple[int, int], ours: bool = True) -> None:
    """Remove a staging folder: the files a build puts there (by name, regular files only), then the folder.

    In a staging folder of another build (``ours=False``: a crashed build's, or a folder someone named
    like one) a file goes only if its content is what a build writes there: a fatbin whose bytes have the
    hash its name gives, a ``manifest.json`` that begins as a build's manifest does (:func:`_is_manifest`).
    Anything else stays, and so does the folder then. The folder is opened without following a symlink
    and must be the one made or listed (``listed_as``: its device and inode); its files are judged and
    removed by name in it, so a folder swapped for a symlink meanwhile never leads the removal elsewhere.
    """
    try:  # a folder swapped since it was made or listed is not the one to empty
        fd: int | None = open_dir(stage, listed_as=listed_as) if DIR_FD else None
    except OSError:
        return
    try:
        with contextlib.suppress(OSError), os.scandir(stage if fd is None else fd) as entries:
            for entry in list(entries):
                match = _FILE_RE.fullmatch(entry.name)
                if not (entry.name == MANIFEST or match) or not entry.is_file(follow_symlinks=False):
                    continue
                where = entry.name if fd is not None else os.path.join(stage, entry.name)
                if not ours and (
                    _content_prefix(where, fd) != match[2] if match else not _is_manifest(where, fd)
                ):  # fmt: skip
                    continue
                with contextlib.suppress(OSError):
                    os.unlink(where, dir_fd=fd)
    finally:
        if fd is not None:
            os.close(fd)
    with contextlib.suppress(OSError):
        os.rmdir(stage)


def _is_manifest(path: str, dir_fd: int | None = None) -> bool:
    """Whether the regular file at ``path`` (a name in ``dir_fd``, if given) is a manifest a build wrote,
    whole or cut short by a crash.

    Builds write ``json.dumps(manifest, indent=1, sort_keys=True)``: every manifest starts with
    :data:`_MANIFEST_HEAD`, and a torn one is a prefix of such bytes.
    """
    try:
        raw = read_regular(path, MAX_MANIFEST_BYTES, dir_fd=dir_fd)
    except OSError:
        return False
    return raw.startswith(_MANIFEST_HEAD) or _MANIFEST_HEAD.startswith(raw)


def _clean(root: Path, keep: set[str]) -> None:
    """Remove what earlier builds left in ``root`` and nothing else.

    Staging folders of crashed builds (:data:`_STAGE_PREFIX`, emptied by :func:`_remove_stage`), and
    regular files named like a build's output (``<suite>.<16 hex>.fatbin``) whose content has that hash
    and which the new manifest does not name: the replaced bundle's files and those a crashed build
    renamed in. A file of another name, a symlink, a folder, or a file whose bytes do not match its name
    is foreign and stays.
    """
    entries: list[os.DirEntry[str]] = []
    with contextlib.suppress(OSError), os.scandir(root) as scan:
        entries = list(scan)
    for entry in entries:
        if entry.name.startswith(_STAGE_PREFIX) and entry.is_dir(follow_symlinks=False):
            with contextlib.suppress(OSError):
                _remove_stage(Path(entry.path), ours=False, listed_as=identity(entry.stat(follow_symlinks=False)))
            continue
        match = _FILE_RE.fullmatch(entry.name)
        if match is None or entry.name in keep or not entry.is_file(follow_symlinks=False):
            continue
        if _content_prefix(Path(entry.path)) == match[2]:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


def _content_prefix(path: str | Path, dir_fd: int | None = None) -> str | None:
    """The first 16 hex digits of the SHA-256 of a file a build could have written (at ``path``, a name in
    ``dir_fd`` if given), else None.

    That is a regular file holding one fatbin: its header (read first, 16 bytes) has the fatbin magic
    and gives the file's size. Anything else is not read further, so a huge or sparse file planted under
    an output's name costs 16 bytes of reading, not its size.
    """
    try:
        fd, st = open_input(path, follow=False, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        check_regular(st, st.st_size)
        head = os.read(fd, _FATBIN_HEADER.size)
        if len(head) < _FATBIN_HEADER.size:
            return None
        magic, _version, header_size, body_size = _FATBIN_HEADER.unpack(head)
        if magic != _FATBIN_MAGIC or header_size + body_size != st.st_size:
            return None
        h = hashlib.sha256(head)
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
        return h.hexdigest()[:16]
    except OSError:
        return None
    finally:
        os.close(fd)


def _spelled_as_arch(item: str, *, ptx: bool) -> bool:
    """Whether ``item`` is an arch as build() records it: ``sm_90a`` for SASS, ``compute_90`` for PTX."""
    from ._arch import Arch

    try:
        arch = Arch.parse(item)
    except ValueError:
        return False
    return (arch.compute if ptx else str(arch)) == item


def _check_type(value: Any, types: type | tuple[type, ...], field: str, what: str) -> Any:
    if not isinstance(value, types) or isinstance(value, bool):  # JSON true/false is no int here
        raise BundleError(f"must be {what}; got {type(value).__name__}", field)
    return value


def _validate(manifest: Any) -> None:
    """Check a manifest's schema: the types of every field :class:`KernelBundle` uses, and safe file names."""
    _check_type(manifest, dict, "manifest", "a JSON object")
    if manifest.get("schema") != SCHEMA:
        raise BundleError(f"{manifest.get('schema')!r}; this package reads schema {SCHEMA}: rebuild the bundle",
                          "schema")  # fmt: skip
    _check_type(manifest.get("built_with", {}), dict, "built_with", "an object")
    suites = _check_type(manifest.get("suites"), dict, "suites", "an object of suite records")
    if not suites:
        raise BundleError("the bundle has no suite", "suites")
    for name, record in suites.items():
        field = f"suites.{name}"
        if not _NAME_RE.fullmatch(name):
            raise BundleError("suite names are letters, digits, '_', '-' and '.'", field)
        _check_type(record, dict, field, "an object")
        for key, types, what in (
            ("file", str, "a file name"), ("sha256", str, "a hex SHA-256"), ("record_sha256", str, "a hex SHA-256"),
            ("size", int, "an int"), ("entries", list, "a list"), ("sass_archs", list, "a list"),
            ("ptx_archs", list, "a list"), ("compression", list, "a list"), ("symbol_mapping", dict, "an object"),
            ("ptx_isa", (str, type(None)), "a version or null"),
            ("ptx_min_driver_cuda", (str, type(None)), "a version or null"),
            ("decompress_min_driver_cuda", (str, type(None)), "a version or null"),
            ("min_driver", (str, type(None)), "a version or null"),
        ):  # fmt: skip
            if key not in record:
                raise BundleError("missing", f"{field}.{key}")
            _check_type(record[key], types, f"{field}.{key}", what)
        file = record["file"]
        if not _NAME_RE.fullmatch(file):  # which refuses "." and ".." too: a name starts with a letter, digit or _
            raise BundleError(f"{file!r} is not a plain file name inside the bundle", f"{field}.file")
        for key in ("sha256", "record_sha256"):
            if not _HEX64_RE.fullmatch(record[key]):
                raise BundleError("not 64 lowercase hex digits", f"{field}.{key}")
        if record["size"] < 0:
            raise BundleError("negative", f"{field}.size")
        for key in ("ptx_isa", "ptx_min_driver_cuda", "decompress_min_driver_cuda", "min_driver"):
            if record[key] is not None and not _VERSION_RE.fullmatch(record[key]):
                raise BundleError(f"{record[key]!r} is not a version like '12.4'", f"{field}.{key}")
        for key in ("sass_archs", "ptx_archs", "compression"):
            for i, item in enumerate(record[key]):
                _check_type(item, str, f"{field}.{key}[{i}]", "a string")
                if key != "compression" and not _spelled_as_arch(item, ptx=key == "ptx_archs"):
                    like = "compute_90" if key == "ptx_archs" else "sm_90"
                    raise BundleError(f"{item!r} is not an arch like {like}", f"{field}.{key}[{i}]")
        for i, item in enumerate(record["entries"]):
            _check_type(item, dict, f"{field}.entries[{i}]", "an object")
        for k, v in record["symbol_mapping"].items():
            _check_type(v, str, f"{field}.symbol_mapping[{k!r}]", "a symbol name")
            if not (is_printable_text(k) and is_printable_text(v)):
                raise BundleError(f"not a symbol name: {PRINTABLE_TEXT}", f"{field}.symbol_mapping[{k!r}]")
