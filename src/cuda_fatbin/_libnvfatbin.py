# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""libnvfatbin itself: loading it through ``cuda.bindings``, its version and what each version can do,
its errors, and :class:`FatbinOptions`, whose ``_prepare_nvfatbin_options()`` is the one place that turns
options into libnvfatbin command-line strings. :mod:`cuda_fatbin._fatbin` builds fat binaries on top.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ._errors import Error

__all__ = ["FatbinError", "FatbinLibraryError", "FatbinOptions", "nvfatbin_version"]

# First libnvfatbin version (major, minor) that has each feature. Sources: NVIDIA's nvFatbin docs
# (Create/AddPTX/AddCubin/AddLTOIR 12.4, AddReloc/AddIndex 12.5, AddTileIR 13.1) and, where the docs
# are silent, probes of every nvidia-nvfatbin wheel on PyPI (docs/libnvfatbin-versions.md):
# -compress-mode rejected by 12.5.82, accepted from 12.6.20; -concat rejected by 13.3.29, accepted by 13.4.92
# (docs/libnvfatbin-versions.md).
_FEATURE_SINCE: dict[str, tuple[int, int]] = {
    "create": (12, 4),
    "add_cubin": (12, 4),
    "add_ptx": (12, 4),
    "add_ltoir": (12, 4),
    "add_reloc": (12, 5),
    "add_index": (12, 5),
    "add_tile_ir": (13, 1),
    "compress_mode": (12, 6),
    "concat": (13, 4),
}


class FatbinError(Error, RuntimeError):
    """A libnvfatbin call failed.

    Attributes
    ----------
    function : str
        The libnvfatbin function that failed (``"nvFatbinAddCubin"``).
    result : int
        The ``nvFatbinResult`` code.
    result_name : str
        Its name (``"ERROR_ELF_ARCH_MISMATCH"``).
    error_string : str
        libnvfatbin's description of the error.
    part : dict or None
        The part that caused it: ``index``, ``kind``, ``arch``, ``identifier`` (``None`` for calls
        that concern no single part).

    Examples
    --------
    >>> from cuda_fatbin import FatbinBuilder, FatbinError
    >>> with FatbinBuilder() as builder:
    ...     try:
    ...         builder.add_index(b"not an index")
    ...     except FatbinError as e:
    ...         print(e.function, e.result_name, e.part["kind"])
    nvFatbinAddIndex ERROR_INVALID_INDEX index
    """

    def __init__(
        self, function: str, result: int, result_name: str, error_string: str, part: dict[str, Any] | None
    ) -> None:
        where = ""
        if part is not None:
            arch = f" {part['arch']}" if part.get("arch") else ""
            ident = f", identifier {part['identifier']!r}" if part.get("identifier") else ""
            where = f" for part #{part['index']} ({part['kind']}{arch}{ident})"
        super().__init__(f"{function} failed{where}: {result_name} ({result}): {error_string}")
        self.function = function
        self.result = result
        self.result_name = result_name
        self.error_string = error_string
        self.part = part


class FatbinLibraryError(Error, RuntimeError):
    """libnvfatbin or its Python binding is missing, or too old for the feature asked for.

    Attributes
    ----------
    feature : str
        What was asked for (``"add_tile_ir"``, ``"compress_mode"``).
    required : tuple of int or None
        The first libnvfatbin version that has it.
    found : tuple of int or None
        The version that is loaded (``None`` when none could be loaded).

    Examples
    --------
    >>> from cuda_fatbin import FatbinLibraryError, FatbinOptions, Part, build_fatbin
    >>> ptx = Part(".version 9.0\\n.target sm_90\\n.address_size 64\\n", kind="ptx")
    >>> try:  # with libnvfatbin older than 13.4, which has no concat: the message says what to install
    ...     data = build_fatbin([ptx], options=FatbinOptions(concat=True))
    ... except FatbinLibraryError as e:
    ...     print(e.feature, e.required, e.found)  # doctest: +SKIP
    concat (13, 4) (13, 0)
    """

    def __init__(self, message: str, feature: str, required: tuple[int, int] | None, found: tuple[int, int] | None):
        super().__init__(message)
        self.feature = feature
        self.required = required
        self.found = found


def _nvfatbin() -> Any:
    """The binding module, or FatbinLibraryError if cuda-bindings lacks it."""
    try:
        from cuda.bindings import nvfatbin
    except ImportError as e:
        raise FatbinLibraryError(
            f"cuda.bindings.nvfatbin cannot be imported ({e}) — install cuda-bindings with libnvfatbin: "
            "pip install 'cuda-core[cu13]' (or 'cuda-bindings[all]')",
            "nvfatbin",
            None,
            None,
        ) from e
    return nvfatbin


_version_cache: tuple[int, int] | None = None


def nvfatbin_version() -> tuple[int, int]:
    """The version of the loaded libnvfatbin, e.g. ``(13, 0)``. Read once per process.

    Returns
    -------
    tuple of int
        ``(major, minor)``.

    Raises
    ------
    FatbinLibraryError
        If libnvfatbin cannot be found or loaded; the message says which package to install.

    Examples
    --------
    >>> from cuda_fatbin import nvfatbin_version
    >>> nvfatbin_version() >= (12, 4)
    True
    """
    global _version_cache
    if _version_cache is None:
        binding = _nvfatbin()
        try:
            major, minor = binding.version()
        except Exception as e:  # the binding raises loader-specific errors when the library is absent
            raise FatbinLibraryError(
                f"libnvfatbin could not be loaded ({type(e).__name__}: {e}) — install it: pip install nvidia-nvfatbin "
                "(CUDA 13) or nvidia-nvfatbin-cu12 (CUDA 12), or put a CUDA toolkit's lib64 on LD_LIBRARY_PATH",
                "libnvfatbin",
                None,
                None,
            ) from e
        _version_cache = (int(major), int(minor))
    return _version_cache


def _require(feature: str, what: str | None = None) -> None:
    """Raise FatbinLibraryError before calling libnvfatbin if it, or the binding, lacks ``feature``."""
    required = _FEATURE_SINCE[feature]
    found = nvfatbin_version()
    what = what or feature
    if found < required:
        package = "nvidia-nvfatbin-cu12" if required[0] == 12 else "nvidia-nvfatbin"
        raise FatbinLibraryError(
            f"{what} requires libnvfatbin {required[0]}.{required[1]} or newer; found {found[0]}.{found[1]} — "
            f"pip install '{package}>={required[0]}.{required[1]}'",
            feature,
            required,
            found,
        )
    if feature.startswith("add_") and not hasattr(_nvfatbin(), feature):
        raise FatbinLibraryError(
            f"{what} needs cuda.bindings.nvfatbin.{feature}, which the installed cuda-bindings "
            f"{_bindings_version()} lacks — upgrade it: pip install -U cuda-bindings",
            feature,
            required,
            found,
        )


def _bindings_version() -> str:
    try:
        from importlib.metadata import version

        return version("cuda-bindings")
    except Exception:
        return "(unknown version)"


_COMPRESS_MODES = ("default", "size", "speed", "balance", "none")
_HOSTS = ("linux", "windows", "mac")
_PRODUCERS = ("cuda", "opencl")


def _check_bool(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, bool):
        raise ValueError(f"FatbinOptions.{name} must be True, False or None; got {value!r}")


def _check_choice(name: str, value: Any, allowed: tuple[object, ...]) -> None:
    if value is not None and (isinstance(value, bool) or value not in allowed):
        shown = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"FatbinOptions.{name} must be one of {shown} (or None); got {value!r}")


@dataclass(frozen=True)
class FatbinOptions:
    """Options for creating a fat binary (``nvFatbinCreate``). ``None`` leaves libnvfatbin's default.

    Attributes
    ----------
    compress : bool, optional
        Compress the entries that libnvfatbin deems worth it (PTX and large images).
        Default: None (libnvfatbin: True).
    compress_all : bool, optional
        Compress every entry, even small ones.
        Default: None (False).
    compress_mode : {"default", "size", "speed", "balance", "none"}, optional
        Compression algorithm and trade-off: ``"speed"`` writes LZ4, the others zstd (which needs a
        CUDA 12.4+ driver to load). Requires libnvfatbin 12.6+.
        Default: None ("default").
    concat : bool, optional
        Store all entries as one compressed stream (entry kind 0x100); needs compression on.
        Requires libnvfatbin 13.4+.
        Default: None (False).
    host : {"linux", "windows", "mac"}, optional
        Host operating system recorded in the entries.
        Default: None (the build host's).
    address_bits : {32, 64}, optional
        Host address size recorded in the entries; cubins must match it.
        Default: None (64).
    debug : bool, optional
        Mark entries as carrying debug information (``-g``).
        Default: None (False).
    producer : {"cuda", "opencl"}, optional
        The producer recorded in the entries.
        Default: None ("cuda").

    Raises
    ------
    ValueError
        At construction, for a value outside the allowed set (the message names the field) or for
        options that contradict each other (e.g. ``compress=False`` with ``compress_mode="size"``,
        which libnvfatbin would silently ignore).

    Examples
    --------
    >>> from cuda_fatbin import FatbinOptions
    >>> FatbinOptions(compress_mode="size", host="linux")
    FatbinOptions(compress=None, compress_all=None, compress_mode='size', concat=None, host='linux',
                  address_bits=None, debug=None, producer=None)
    >>> FatbinOptions(compress_mode="smallest")
    Traceback (most recent call last):
        ...
    ValueError: ...
    """

    compress: bool | None = None
    compress_all: bool | None = None
    compress_mode: Literal["default", "size", "speed", "balance", "none"] | None = None
    concat: bool | None = None
    host: Literal["linux", "windows", "mac"] | None = None
    address_bits: Literal[32, 64] | None = None
    debug: bool | None = None
    producer: Literal["cuda", "opencl"] | None = None

    def __post_init__(self) -> None:
        for name in ("compress", "compress_all", "concat", "debug"):
            _check_bool(name, getattr(self, name))
        _check_choice("compress_mode", self.compress_mode, _COMPRESS_MODES)
        _check_choice("host", self.host, _HOSTS)
        _check_choice("address_bits", self.address_bits, (32, 64))
        _check_choice("producer", self.producer, _PRODUCERS)
        compression_off = self.compress is False or self.compress_mode == "none"
        why_off = "compress=False" if self.compress is False else "compress_mode='none'"
        if self.compress is False and self.compress_mode not in (None, "none"):
            raise ValueError(f"FatbinOptions: compress=False contradicts compress_mode={self.compress_mode!r}")
        if compression_off and self.compress_all:
            raise ValueError(f"FatbinOptions: {why_off} contradicts compress_all=True")
        if compression_off and self.concat:
            raise ValueError(f"FatbinOptions: concat=True stores one compressed stream; it cannot go with {why_off}")

    def _prepare_nvfatbin_options(self) -> list[str]:
        """The ``nvFatbinCreate`` option strings, after checking the loaded libnvfatbin has them."""
        opts: list[str] = []
        if self.compress is not None:
            opts.append(f"-compress={'true' if self.compress else 'false'}")
        if self.compress_all:
            opts.append("-compress-all")
        if self.compress_mode is not None:
            _require("compress_mode", "FatbinOptions.compress_mode")
            opts.append(f"-compress-mode={self.compress_mode}")
        if self.concat:
            _require("concat", "FatbinOptions.concat")
            opts.append("-concat")
        if self.host is not None:
            opts.append(f"-host={self.host}")
        if self.address_bits is not None:
            opts.append(f"-{self.address_bits}")
        if self.debug:
            opts.append("-g")
        if self.producer is not None:
            opts.append(f"-{self.producer}")
        return opts
