"""Ship precompiled kernels: one fatbin per kernel suite and a JSON manifest, checked before load.

``KernelBundle.build(directory, suites, archs=...)`` compiles every suite for every arch at build time
(with an optional cache) and writes ``<suite>.fatbin`` files plus ``manifest.json``. At run time
``KernelBundle.open(path_or_importlib_resource).load("suite")`` checks that the current GPU and driver
can run one of the suite's entries (with :func:`select_entry`) and raises :class:`BundleCoverageError`
saying what the bundle has, what the device is and how to rebuild, before the driver's
"no kernel image is available".
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._reader import read_fatbin
from ._select import ZSTD_MIN_CUDA, parse_driver, ptx_isa_needs, select_entry

__all__ = ["BundleCoverageError", "KernelBundle", "KernelSuite"]

MANIFEST = "manifest.json"
SCHEMA = 1


class BundleCoverageError(RuntimeError):
    """The current GPU or driver cannot run any entry of a bundle's suite."""


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
    """

    source: str | bytes
    name_expressions: Sequence[str] = ()
    code_type: str = "c++"
    options: Any = None
    archs: Any = None
    ptx_for: Any = field(default=None)


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
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


def _describe(data: bytes, mapping: Mapping) -> dict:
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
        "sass_archs": [str(a) for a in sorted({e.arch for e in entries if e.kind == "elf"})],
        "ptx_archs": [a.compute for a in sorted({e.arch for e in ptx})],
        "ptx_isa": "{}.{}".format(*isa) if isa else None,
        "ptx_min_driver_cuda": ptx_driver,
        "compression": compressions,
        "decompress_min_driver_cuda": "{}.{}".format(*ZSTD_MIN_CUDA) if "zstd" in compressions else None,
        "symbol_mapping": {k: v.decode() if isinstance(v, bytes) else v for k, v in mapping.items()},
    }


class KernelBundle:
    """A directory (or package data) of fatbins, one per kernel suite, with a manifest.

    Build one with :meth:`build`, open it at run time with :meth:`open`, get a suite with :meth:`load`.
    """

    def __init__(self, root, manifest: dict) -> None:
        self._root = root
        self.manifest = manifest

    @property
    def suites(self) -> list[str]:
        """The suite names."""
        return sorted(self.manifest["suites"])

    @classmethod
    def build(
        cls,
        directory: str | os.PathLike,
        suites: Mapping[str, KernelSuite],
        *,
        archs,
        ptx_for=None,
        fatbin_options=None,
        cache=None,
        max_workers: int | None = None,
        logs=None,
    ) -> KernelBundle:
        """Compile every suite and write ``<name>.fatbin`` files and ``manifest.json`` into ``directory``.

        Parameters
        ----------
        directory : path
            Where to write (created if missing; other files there are left alone).
        suites : mapping of str to KernelSuite
            Suite name (letters, digits, ``_``, ``-``, ``.``) to what it compiles.
        archs, ptx_for : arch specs
            For every suite unless it overrides them (see ``Program.compile``).
        fatbin_options : FatbinOptions, optional
            Default: None.
        cache : cuda.core.utils.ProgramCacheResource, optional
            Per-arch job cache shared by all suites (rebuilds compile only what changed). Default: None.
        max_workers, logs
            As for ``Program.compile``.

        Returns
        -------
        KernelBundle
        """
        from ._program import Program

        if not suites:
            raise ValueError("a bundle needs at least one suite")
        root = Path(directory)
        root.mkdir(parents=True, exist_ok=True)
        manifest = {"schema": SCHEMA, "built_with": _versions(), "suites": {}}
        for name, suite in suites.items():
            if not isinstance(suite, KernelSuite):
                raise TypeError(f"suite {name!r} must be a KernelSuite; got {type(suite).__name__}")
            if not name or not all(c.isalnum() or c in "_-." for c in name) or name.startswith("."):
                raise ValueError(f"suite name {name!r}: use letters, digits, '_', '-' and '.'")
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
            )
            data = bytes(obj.code)
            (root / f"{name}.fatbin").write_bytes(data)
            manifest["suites"][name] = {"file": f"{name}.fatbin", **_describe(data, obj.symbol_mapping)}
        tmp = root / f".{MANIFEST}.tmp"
        tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True))
        os.replace(tmp, root / MANIFEST)
        return cls(root, manifest)

    @classmethod
    def open(cls, root) -> KernelBundle:
        """Open a bundle from a directory path or an ``importlib.resources`` traversable (package data).

        Raises
        ------
        ValueError
            No manifest, or one of another schema.
        """
        root = Path(root) if isinstance(root, (str, os.PathLike)) else root
        try:
            manifest = json.loads(root.joinpath(MANIFEST).read_text())
        except FileNotFoundError:
            raise ValueError(f"{root} is not a kernel bundle: no {MANIFEST}") from None
        except json.JSONDecodeError as e:
            raise ValueError(f"{root}/{MANIFEST} is not valid JSON ({e}); rebuild the bundle") from None
        if manifest.get("schema") != SCHEMA:
            raise ValueError(f"{root}/{MANIFEST}: schema {manifest.get('schema')!r}, this package reads {SCHEMA}")
        return cls(root, manifest)

    def fatbin(self, suite: str) -> bytes:
        """The suite's fatbin bytes, checked against the manifest's SHA-256."""
        record = self._record(suite)
        data = self._root.joinpath(record["file"]).read_bytes()
        if hashlib.sha256(data).hexdigest() != record["sha256"]:
            raise ValueError(f"bundle suite {suite!r}: {record['file']} does not match its manifest hash; rebuild")
        return data

    def _record(self, suite: str) -> dict:
        try:
            return self.manifest["suites"][suite]
        except KeyError:
            raise KeyError(f"no suite {suite!r} in this bundle; it has {', '.join(self.suites)}") from None

    def check(self, suite: str, *, gpu=None, driver=None):
        """The :class:`Selection` for ``suite`` on a GPU and driver (default: the current ones).

        Raises
        ------
        BundleCoverageError
            No entry can run there; the message lists what the bundle has and how to rebuild.
        """
        return self._check(suite, self.fatbin(suite), gpu, driver)

    def _check(self, suite: str, data: bytes, gpu, driver):
        device = None
        if gpu is None or driver is None:
            dev_gpu, dev_driver, device = _current_device()
            gpu = dev_gpu if gpu is None else gpu
            driver = dev_driver if driver is None else driver
        record = self._record(suite)
        sel = select_entry(data, gpu, driver=driver)
        if sel:
            return sel
        cuda = parse_driver(driver)
        has = ", ".join(record["sass_archs"] + record["ptx_archs"]) or "nothing loadable"
        where = (
            f"{device} (compute capability {sel.gpu.capability})"
            if device
            else f"compute capability {sel.gpu.capability}"
        )
        if cuda is not None:
            where += f" with a CUDA {cuda[0]}.{cuda[1]} driver"
        fixes = [f"rebuild with {sel.gpu} in archs (e.g. archs=[..., '{sel.gpu}'] or cuda-fatbin compile --arch ...)"]
        need = record["ptx_min_driver_cuda"]
        if need and cuda is not None and select_entry(data, gpu):  # only the driver is too old
            fixes.append(
                f"or update the driver to CUDA {need}+ so that its PTX (ISA {record['ptx_isa']}) can be JIT-compiled"
            )
        raise BundleCoverageError(
            f"kernel suite {suite!r} cannot run on {where}: the bundle has {has}. {sel.reason}. "
            f"To fix: {'; '.join(fixes)}."
        )

    def load(self, suite: str, *, gpu=None, driver=None):
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


def _current_device() -> tuple[str, int, str]:
    try:
        from cuda.bindings import driver
        from cuda.core import Device

        dev = Device()
        major, minor = dev.compute_capability
        _, version = driver.cuDriverGetVersion()
        return f"{major}.{minor}", int(version), dev.name
    except Exception as e:
        raise BundleCoverageError(
            f"no GPU to load kernels on ({type(e).__name__}: {str(e).splitlines()[0]}); "
            "pass gpu= and driver= to check a bundle without one"
        ) from None
