# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The nvFatbin layer: turn per-arch artifacts into one fat binary, in-process, with libnvfatbin.

Follows cuda.core's conventions: :class:`FatbinOptions` (with the library's loading, version gating
and errors in :mod:`cuda_fatbin._libnvfatbin`) is a dataclass whose fields default to ``None``
(libnvfatbin's default); :class:`FatbinBuilder` owns one native handle, destroyed exactly once by
``close()``, the context manager or garbage collection.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import _libnvfatbin as _lib
from ._arch import Arch
from ._detect import LTOIR_MAGIC, TILE_IR_MAGIC, _as_bytes_like, cubin_arch, detect, ltoir_arch, ptx_target
from ._libnvfatbin import FatbinError, FatbinLibraryError, FatbinOptions, nvfatbin_version

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeAlias, TypeGuard

    from cuda.core import ObjectCode

    from ._elf import Buffer

    #: What :func:`from_parts`, :func:`build_fatbin` and :meth:`FatbinBuilder.add` take as one part.
    PartLike: TypeAlias = "Part | ObjectCode | Buffer | str | os.PathLike[str]"

__all__ = [
    "FatbinBuilder",
    "FatbinError",
    "FatbinLibraryError",
    "FatbinOptions",
    "Part",
    "build_fatbin",
    "from_parts",
    "nvfatbin_version",
]

#: Part kinds the builder accepts.
PART_KINDS = ("cubin", "ptx", "ltoir", "reloc", "tile_ir", "index")
_KIND_SYNONYMS = {"elf": "cubin"}


@dataclass(frozen=True)
class Part:
    """One input of a fat binary with explicit values; ``None`` means detect it from the data.

    Attributes
    ----------
    data : bytes, bytearray, memoryview, str or os.PathLike
        The artifact. ``str`` is PTX text when ``kind="ptx"``; otherwise a ``str`` or ``PathLike``
        is a file to read.
    kind : {"cubin", "ptx", "ltoir", "reloc", "tile_ir", "index"}, optional
        (``"elf"`` is taken as ``"cubin"``, the name the reader and cuobjdump use)
        Default: None (detected).
    arch : Arch, str or int, optional
        Any spelling :meth:`Arch.parse` takes. Must agree with what the data records.
        Default: None (detected).
    identifier : str, optional
        Name of the entry, shown by ``cuobjdump``.
        Default: None (none).
    options : str, optional
        ptxas options for PTX, NVVM options for LTO-IR, Tile IR options.
        Default: None (none).

    Examples
    --------
    >>> from cuda_fatbin import Part, build_fatbin, read_fatbin
    >>> ptx = ".version 9.0\\n.target sm_90\\n.address_size 64\\n"
    >>> data = build_fatbin([Part(ptx, kind="ptx", identifier="empty.cu", options="-O3")])
    >>> entry = read_fatbin(data).entries[0]
    >>> entry.kind, str(entry.arch), entry.identifier, entry.options
    ('ptx', 'sm_90', 'empty.cu', '-O3')
    """

    data: Any
    kind: str | None = None
    arch: Arch | str | int | None = None
    identifier: str | None = None
    options: str | None = None

    def __post_init__(self) -> None:
        if self.kind in _KIND_SYNONYMS:  # the reader and cuobjdump call a cubin an ELF entry
            object.__setattr__(self, "kind", _KIND_SYNONYMS[self.kind])
        if self.kind is not None and self.kind not in PART_KINDS:
            raise ValueError(f"Part.kind must be one of {', '.join(PART_KINDS)} (or elf); got {self.kind!r}")


def _destroy(binding: Any, handle: int) -> None:
    binding.destroy(handle)


class FatbinBuilder:
    """Build one fat binary from cubins, PTX, LTO-IR, relocatable objects, Tile IR and indexes.

    Parameters
    ----------
    options : FatbinOptions, optional
        Creation options. Default: None (libnvfatbin's defaults).
    allow_duplicates : bool, optional
        Allow the same (kind, arch, identifier) to be added twice. Default: False.

    Notes
    -----
    Each ``add_*`` checks its input before libnvfatbin sees it: the arch you pass must agree with
    the arch the artifact records (libnvfatbin silently drops an ``a`` suffix and accepts PTX under
    any arch), and a feature the loaded libnvfatbin lacks raises :class:`FatbinLibraryError`.
    ``data`` may be bytes, bytearray, memoryview (passed without copying) or, for PTX, str.
    A builder is not thread-safe; use one per thread.

    Examples
    --------
    >>> with FatbinBuilder(FatbinOptions(compress_mode="size")) as b:  # doctest: +SKIP
    ...     b.add_cubin(cubin_80)
    ...     b.add_ptx(ptx_90)
    ...     fatbin = b.build()
    """

    def __init__(self, options: FatbinOptions | None = None, *, allow_duplicates: bool = False) -> None:
        if options is None:
            options = FatbinOptions()
        elif not isinstance(options, FatbinOptions):
            raise TypeError(f"options must be a FatbinOptions; got {type(options).__name__}")
        self._options = options
        self._allow_duplicates = bool(allow_duplicates)
        self._parts: list[dict[str, Any]] = []
        self._keys: set[tuple[str, Arch | None, str | None]] = set()
        self._finalizer = None
        strings = options._prepare_nvfatbin_options()
        _lib._require("create", "FatbinBuilder")
        binding = _lib._nvfatbin()
        handle = self._call(binding.create, "nvFatbinCreate", None, strings, len(strings))
        self._handle = handle
        self._finalizer = weakref.finalize(self, _destroy, binding, handle)

    # -- lifetime -------------------------------------------------------------------------------
    @property
    def is_closed(self) -> bool:
        """Whether :meth:`close` has run (the native handle is gone)."""
        return self._finalizer is None or not self._finalizer.alive

    def close(self) -> None:
        """Destroy the native handle. Idempotent: a second call does nothing."""
        if self._finalizer is not None:
            self._finalizer()  # runs nvFatbinDestroy at most once, also against GC and exit

    def __enter__(self) -> FatbinBuilder:
        self._check_open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self.is_closed:
            raise RuntimeError("this FatbinBuilder is closed; create a new one")

    @property
    def options(self) -> FatbinOptions:
        """The options this builder was created with."""
        return self._options

    @property
    def handle(self) -> int:
        """The ``nvFatbinHandle`` address (do not destroy it yourself)."""
        self._check_open()
        handle: int = self._handle
        return handle

    @property
    def parts(self) -> list[dict[str, Any]]:
        """What has been added: one dict per part with ``index``, ``kind``, ``arch``, ``identifier``."""
        return [dict(p) for p in self._parts]

    def __repr__(self) -> str:
        state = "closed" if self.is_closed else f"{len(self._parts)} parts"
        return f"<FatbinBuilder {state}>"

    # -- internals ------------------------------------------------------------------------------
    @staticmethod
    def _call(fn: Callable[..., Any], name: str, part: dict[str, Any] | None, *args: Any) -> Any:
        binding = _lib._nvfatbin()
        try:
            return fn(*args)
        except binding.nvFatbinError as e:
            code = int(getattr(e, "status", 1))
            try:
                result_name = binding.Result(code).name
            except ValueError:
                result_name = f"RESULT_{code}"
            try:
                text = binding.get_error_string(code)
            except Exception:
                text = str(e)
            raise FatbinError(name, code, result_name, text, part) from None

    def _begin(
        self, kind: str, arch: Arch | None, identifier: str | None, data: Any
    ) -> tuple[dict[str, Any], memoryview]:
        self._check_open()
        if identifier is not None and not isinstance(identifier, str):
            raise TypeError(f"identifier must be a str or None; got {type(identifier).__name__}")
        if identifier is not None and "\0" in identifier:
            raise ValueError(f"identifier {identifier!r} contains a NUL character")
        part = {"index": len(self._parts), "kind": kind, "arch": arch, "identifier": identifier}
        if data is None:
            raise TypeError(f"part #{part['index']} ({kind}): data is None; pass bytes, or PTX text")
        if isinstance(data, str):
            if kind != "ptx":
                raise TypeError(f"{kind} data must be bytes-like, not str (to read a file, use Part(path) or a Path)")
            data = data.encode("utf-8")
        try:
            view = _as_bytes_like(data)
        except (TypeError, ValueError) as e:
            raise type(e)(f"part #{part['index']} ({kind}): {e}") from None
        if len(view) == 0:
            raise ValueError(f"part #{part['index']} ({kind}): data is empty")
        return part, view

    def _commit(self, part: dict[str, Any]) -> None:
        """Refuse a second (kind, arch, identifier) unless duplicates are allowed (reloc has no key)."""
        key = (part["kind"], part["arch"], part["identifier"])
        if part["kind"] != "reloc" and key in self._keys and not self._allow_duplicates:
            arch = f" {part['arch']}" if part["arch"] else ""
            raise ValueError(
                f"part #{part['index']}: a {part['kind']}{arch} with identifier {part['identifier']!r} was already "
                "added; give it another identifier or pass allow_duplicates=True (cuda-fatbin build --allow-duplicates)"
            )

    def _add(self, part: dict[str, Any], binding: str, c_name: str, view: memoryview, *args: Any) -> None:
        """Check for a duplicate, call libnvfatbin's ``c_name`` with the data, record the part."""
        self._commit(part)
        self._call(getattr(_lib._nvfatbin(), binding), c_name, part, self._handle, view, len(view), *args)
        self._finish(part)

    def _finish(self, part: dict[str, Any]) -> None:
        self._keys.add((part["kind"], part["arch"], part["identifier"]))
        self._parts.append(part)

    # -- adding parts ---------------------------------------------------------------------------
    def add_cubin(self, data: Buffer, arch: Arch | str | int | None = None, identifier: str | None = None) -> None:
        """Add a cubin (``nvFatbinAddCubin``).

        Parameters
        ----------
        data : bytes, bytearray or memoryview
            The cubin (CUDA ELF).
        arch : Arch, str or int, optional
            Default: None (read from the cubin). A given arch must match the cubin's SM and ``a``
            suffix; an ``f`` suffix, which cubins do not record, is taken from here.
        identifier : str, optional
            Entry name shown by cuobjdump. Default: None.

        Raises
        ------
        ValueError
            Malformed cubin, or ``arch`` contradicting it (the message names both).
        FatbinError
            libnvfatbin rejected the cubin.
        """
        part, view = self._begin("cubin", None, identifier, data)
        try:
            recorded, a_known = cubin_arch(view)
        except ValueError as e:
            raise ValueError(f"part #{part['index']} (cubin): {e}") from None
        part["arch"] = _reconcile(part, recorded, arch, a_known=a_known, f_recorded=False)
        self._add(part, "add_cubin", "nvFatbinAddCubin", view, part["arch"].bare, identifier or "")

    def add_ptx(
        self,
        data: Buffer | str,
        arch: Arch | str | int | None = None,
        identifier: str | None = None,
        ptxas_options: str | None = None,
    ) -> None:
        """Add PTX (``nvFatbinAddPTX``); the driver JIT-compiles it on GPUs with no matching SASS.

        Parameters
        ----------
        data : str, bytes, bytearray or memoryview
            PTX text.
        arch : Arch, str or int, optional
            Default: None (the ``.target`` directive). A given arch must equal ``.target``, suffix included.
        identifier : str, optional
            Default: None.
        ptxas_options : str, optional
            Options for the driver's JIT compile (e.g. ``"-O3"``). Default: None.
        """
        part, view = self._begin("ptx", None, identifier, data)
        try:
            recorded = ptx_target(view)
        except ValueError as e:
            raise ValueError(f"part #{part['index']} (ptx): {e}") from None
        if recorded is None:
            raise ValueError(f"part #{part['index']} (ptx): no .version/.target directives; is this PTX?")
        part["arch"] = _reconcile(part, recorded, arch, a_known=True, f_recorded=True)
        _check_options("ptxas_options", ptxas_options)
        self._add(part, "add_ptx", "nvFatbinAddPTX", view, part["arch"].bare, identifier or "", ptxas_options or "")

    def add_ltoir(
        self,
        data: Buffer,
        arch: Arch | str | int | None = None,
        identifier: str | None = None,
        nvvm_options: str | None = None,
    ) -> None:
        """Add LTO-IR (``nvFatbinAddLTOIR``), for later link-time optimisation by nvJitLink.

        Parameters
        ----------
        data : bytes, bytearray or memoryview
            LTO-IR as NVRTC (``link_time_optimization=True``) or ``nvcc -dlto`` writes it.
        arch : Arch, str or int, optional
            Default: None (read from the LTO-IR header). Must match it where the header records it.
        identifier : str, optional
            Default: None.
        nvvm_options : str, optional
            NVVM options recorded with the entry. Default: None.
        """
        part, view = self._begin("ltoir", None, identifier, data)
        if bytes(view[:4]) != LTOIR_MAGIC:
            raise ValueError(f"part #{part['index']} (ltoir): data does not start with the LTO-IR magic ED 43 4E 7F")
        recorded = ltoir_arch(view)
        part["arch"] = _reconcile(part, recorded, arch, a_known=recorded is not None, f_recorded=False)
        _check_options("nvvm_options", nvvm_options)
        self._add(part, "add_ltoir", "nvFatbinAddLTOIR", view, part["arch"].bare, identifier or "", nvvm_options or "")

    def add_reloc(self, data: Buffer) -> None:
        """Add the relocatable device code of a host object (``nvFatbinAddReloc``; libnvfatbin 12.5+).

        Parameters
        ----------
        data : bytes, bytearray or memoryview
            A host ELF object made with relocatable device code (``nvcc -rdc=true -c``).
        """
        _lib._require("add_reloc")
        part, view = self._begin("reloc", None, None, data)
        if _detected_or_none(view) != "host_elf":
            raise ValueError(f"part #{part['index']} (reloc): expected a host ELF object (nvcc -rdc=true -c output)")
        self._add(part, "add_reloc", "nvFatbinAddReloc", view)

    def add_tile_ir(self, data: Buffer, identifier: str | None = None, options: str | None = None) -> None:
        """Add Tile IR bytecode (``nvFatbinAddTileIR``; libnvfatbin 13.1+).

        Parameters
        ----------
        data : bytes, bytearray or memoryview
            Tile IR bytecode (starts with ``\\x7fTileIR\\0``).
        identifier : str, optional
            Default: None.
        options : str, optional
            Options for the JIT compile of the Tile IR. Default: None.
        """
        _lib._require("add_tile_ir")
        part, view = self._begin("tile_ir", None, identifier, data)
        if bytes(view[:8]) != TILE_IR_MAGIC:
            raise ValueError(
                f"part #{part['index']} (tile_ir): data does not start with the Tile IR magic \\x7fTileIR\\0"
            )
        _check_options("options", options)
        self._add(part, "add_tile_ir", "nvFatbinAddTileIR", view, identifier or "", options or "")

    def add_index(self, data: Buffer, identifier: str | None = None) -> None:
        """Add an index (``nvFatbinAddIndex``; libnvfatbin 12.5+ and a cuda-bindings that exposes it).

        Parameters
        ----------
        data : bytes, bytearray or memoryview
            The index, in the format libnvfatbin expects (it validates it: ERROR_INVALID_INDEX).
        identifier : str, optional
            Default: None.
        """
        _lib._require("add_index")
        part, view = self._begin("index", None, identifier, data)
        self._add(part, "add_index", "nvFatbinAddIndex", view, identifier or "")

    def add(self, part: PartLike) -> None:
        """Add any part form :func:`from_parts` takes (``Part``, ObjectCode, bytes-like or path).

        A cuda.core ``ObjectCode``'s symbol mapping is not kept here; use :func:`from_parts` to merge them.
        """
        self._add_resolved(_resolve_part(part, len(self._parts)))

    def _add_artifact(self, kind: str, arch: Arch, data: bytes, identifier: str | None) -> None:
        """Add a cubin, PTX or LTO-IR that this package's own compile just made for ``arch``.

        Its kind and arch are known, so the checks for user-supplied parts (ELF tables, ``.target``,
        arch reconciliation) are skipped; duplicates are still refused and libnvfatbin still checks it.
        """
        self._check_open()
        part = {"index": len(self._parts), "kind": kind, "arch": arch, "identifier": identifier}
        binding, c_name = {
            "cubin": ("add_cubin", "nvFatbinAddCubin"),
            "ptx": ("add_ptx", "nvFatbinAddPTX"),
            "ltoir": ("add_ltoir", "nvFatbinAddLTOIR"),
        }[kind]
        extra = () if kind == "cubin" else ("",)
        self._add(part, binding, c_name, memoryview(data), arch.bare, identifier or "", *extra)

    def _add_resolved(self, r: _Resolved) -> None:
        if r.kind == "cubin":
            self.add_cubin(r.data, r.arch, r.identifier)
        elif r.kind == "ptx":
            self.add_ptx(r.data, r.arch, r.identifier, r.options)
        elif r.kind == "ltoir":
            self.add_ltoir(r.data, r.arch, r.identifier, r.options)
        elif r.kind == "tile_ir":
            self.add_tile_ir(r.data, r.identifier, r.options)
        elif r.kind == "index":
            self.add_index(r.data, r.identifier)
        else:
            if r.arch is not None or r.identifier is not None or r.options is not None:
                raise ValueError(
                    f"part #{len(self._parts)} (reloc): arch, identifier and options do not apply to reloc"
                )
            self.add_reloc(r.data)

    # -- output ---------------------------------------------------------------------------------
    def build(self) -> bytes:
        """Return the fat binary (``nvFatbinSize`` + ``nvFatbinGet``).

        Raises
        ------
        ValueError
            If no part has been added (an empty fatbin loads nothing).
        FatbinError
            libnvfatbin failed (e.g. compression).
        """
        self._check_open()
        if not self._parts:
            raise ValueError("no parts added: add at least one cubin, PTX, LTO-IR, reloc, Tile IR or index")
        binding = _lib._nvfatbin()
        size = self._call(binding.size, "nvFatbinSize", None, self._handle)
        out = bytearray(size)
        self._call(binding.get, "nvFatbinGet", None, self._handle, out)
        return bytes(out)

    def object_code(self, name: str = "", symbol_mapping: Mapping[str, str] | None = None) -> ObjectCode:
        """Build and wrap the result as a ``cuda.core.ObjectCode`` (code_type ``"fatbin"``).

        Parameters
        ----------
        name : str, optional
            Name of the ObjectCode. Default: "".
        symbol_mapping : mapping, optional
            Name expression to mangled name, for ``get_kernel``. Default: None.
        """
        from cuda.core import ObjectCode

        return ObjectCode.from_fatbin(self.build(), name=name, symbol_mapping=dict(symbol_mapping or {}))


def _detected_or_none(view: Buffer) -> str | None:
    try:
        return detect(view).kind
    except ValueError:
        return None


def _check_options(name: str, value: object) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} must be a str or None; got {type(value).__name__}")
    if value and "\0" in value:
        raise ValueError(f"{name} {value!r} contains a NUL character")


def _reconcile(
    part: dict[str, Any], recorded: Arch | None, given: Arch | str | int | None, *, a_known: bool, f_recorded: bool
) -> Arch:
    """The arch to use: the recorded one, checked against the one the caller gave."""
    where = f"part #{part['index']} ({part['kind']})"
    if given is None:
        if recorded is None:
            raise ValueError(f"{where}: the data records no arch; pass arch=")
        return recorded
    try:
        parsed = Arch.parse(given)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{where}: {e}") from None
    if recorded is None:
        return parsed
    given = parsed
    mismatch = given.sm != recorded.sm
    if recorded.suffix == "a" and given.suffix != "a":
        mismatch = True
    if given.suffix == "a" and recorded.suffix != "a" and a_known:
        mismatch = True
    if f_recorded and given.suffix != recorded.suffix:
        mismatch = True
    if mismatch:
        raise ValueError(f"{where}: arch {given} was given but the data is for {recorded}")
    return given


# -- one-shot forms ------------------------------------------------------------------------------

_CODE_TYPE_KINDS = {"cubin": "cubin", "ptx": "ptx", "ltoir": "ltoir", "object": "reloc"}
_DETECTED_KINDS = {"cubin": "cubin", "ptx": "ptx", "ltoir": "ltoir", "tile_ir": "tile_ir", "host_elf": "reloc"}


@dataclass(frozen=True)
class _Resolved:
    kind: str
    data: Any
    arch: Any
    identifier: str | None
    options: str | None
    symbol_mapping: dict[str, Any]


def _is_object_code(obj: object) -> TypeGuard[ObjectCode]:
    t = type(obj)
    return t.__name__ == "ObjectCode" and t.__module__.startswith("cuda.core")


def _read_path(path: str | os.PathLike[str], where: str) -> bytes:
    """A part given as a path: a regular file (a symlink to one followed) of at most ``MAX_INPUT_BYTES``; a
    FIFO or device is refused, not waited on."""
    from ._files import MAX_INPUT_BYTES, read_regular

    try:
        return read_regular(path, MAX_INPUT_BYTES, follow=True)
    except OSError as e:
        raise ValueError(f"{where}: cannot read {os.fspath(path)!r}: {e.strerror or e}") from None


def _resolve_part(part: PartLike, index: int) -> _Resolved:
    """Turn any accepted part form into kind, data, arch, identifier, options and symbol mapping."""
    where = f"part #{index}"
    if isinstance(part, Part):
        data = part.data
        if isinstance(data, os.PathLike) or (isinstance(data, str) and part.kind != "ptx"):
            data = _read_path(data, where)
        kind = part.kind or _detected_kind(data, where)
        return _Resolved(kind, data, part.arch, part.identifier, part.options, {})
    if _is_object_code(part):
        code_type = part.code_type
        found_kind = _CODE_TYPE_KINDS.get(code_type)
        if found_kind is None:
            raise ValueError(
                f"{where}: an ObjectCode of code_type {code_type!r} cannot be a fatbin part "
                f"(accepted: {', '.join(_CODE_TYPE_KINDS)})"
            )
        data = part.code
        if isinstance(data, (str, os.PathLike)):
            data = _read_path(data, where)
        identifier = (part.name or None) if found_kind != "reloc" else None
        return _Resolved(found_kind, data, None, identifier, None, dict(part.symbol_mapping or {}))
    if isinstance(part, (str, os.PathLike)):
        if isinstance(part, str) and not os.path.exists(part) and ("\n" in part or ".target" in part):
            raise ValueError(
                f"{where}: a str part is a file path, and {part[:40]!r}... is not a file; "
                "pass PTX text as Part(text, kind='ptx') or as bytes"
            )
        data = _read_path(part, where)
        return _Resolved(_detected_kind(data, f"{where} ({os.fspath(part)})"), data, None, None, None, {})
    if isinstance(part, (bytes, bytearray, memoryview)):
        return _Resolved(_detected_kind(part, where), part, None, None, None, {})
    raise TypeError(
        f"{where}: expected a Part, a cuda.core ObjectCode, bytes-like data or a path; got {type(part).__name__}"
    )


def _detected_kind(data: Buffer | str, where: str) -> str:
    try:
        found = detect(data)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{where}: {e}") from None
    kind = _DETECTED_KINDS.get(found.kind)
    if kind is None:
        hint = {
            "fatbin": "a fatbin cannot be nested; add its entries instead",
            "nvvm": "NVVM IR must be compiled to LTO-IR first (cuda.core Program(..., 'nvvm'))",
        }[found.kind]
        raise ValueError(f"{where}: data is {found.kind}: {hint}")
    return kind


def merge_symbol_mappings(sources: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """Merge ``(label, mapping)`` pairs; a name mapped two ways raises ``ValueError`` naming both sources."""
    merged: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for src, mapping in sources:
        for key, value in mapping.items():
            if key in merged and merged[key] != value:
                raise ValueError(
                    f"symbol mapping conflict for {key!r}: {origin[key]} maps it to {merged[key]!r}, {src} to {value!r}"
                )
            merged[key], origin[key] = value, src
    return merged


def _build(
    parts: Iterable[PartLike], options: FatbinOptions | None, allow_duplicates: bool = False
) -> tuple[bytes, list[_Resolved]]:
    if isinstance(parts, (bytes, bytearray, memoryview, str, os.PathLike, Part)) or _is_object_code(parts):
        raise TypeError("parts must be an iterable of parts, e.g. [cubin_bytes, Part(ptx, kind='ptx')]")
    resolved = [_resolve_part(p, i) for i, p in enumerate(parts)]
    if not resolved:
        raise ValueError("parts is empty: a fatbin needs at least one part")
    with FatbinBuilder(options, allow_duplicates=allow_duplicates) as builder:
        for r in resolved:
            builder._add_resolved(r)
        return builder.build(), resolved


def build_fatbin(
    parts: Iterable[PartLike], *, options: FatbinOptions | None = None, allow_duplicates: bool = False
) -> bytes:
    """Build a fat binary from ``parts`` and return its bytes.

    Parameters
    ----------
    parts : iterable
        Each a :class:`Part`, a cuda.core ``ObjectCode`` (cubin, ptx, ltoir or object), bytes-like
        data (kind and arch detected) or a path (``str`` / ``os.PathLike``) to such a file.
    allow_duplicates : bool, optional
        Allow the same (kind, arch, identifier) twice, as ``FatbinBuilder(allow_duplicates=True)``.
        Default: False.
    options : FatbinOptions, optional
        Default: None (libnvfatbin's defaults).

    Returns
    -------
    bytes

    Raises
    ------
    TypeError, ValueError
        A part of a wrong type, of no detectable kind, with an arch that contradicts its data, a nested
        fatbin, or an empty ``parts``; the message names the part by its index.
    FatbinError
        libnvfatbin refused a part or the build.

    Examples
    --------
    >>> from cuda_fatbin import Part, build_fatbin, read_fatbin
    >>> ptx90 = ".version 9.0\\n.target sm_90\\n.address_size 64\\n"
    >>> ptx80 = ".version 9.0\\n.target sm_80\\n.address_size 64\\n"
    >>> data = build_fatbin([Part(ptx80, kind="ptx"), Part(ptx90, kind="ptx")])
    >>> [(e.kind, str(e.arch)) for e in read_fatbin(data).entries]
    [('ptx', 'sm_80'), ('ptx', 'sm_90')]
    """
    return _build(parts, options, allow_duplicates)[0]


def from_parts(
    parts: Iterable[PartLike],
    *,
    options: FatbinOptions | None = None,
    name: str = "",
    symbol_mapping: Mapping[str, str] | None = None,
) -> ObjectCode:
    """Build a fat binary from ``parts`` and return it as a ``cuda.core.ObjectCode`` (code_type "fatbin").

    Parameters
    ----------
    parts : iterable
        As for :func:`build_fatbin`. The symbol mappings of ``ObjectCode`` parts are merged.
    options : FatbinOptions, optional
        Default: None.
    name : str, optional
        Name of the ObjectCode. Default: "".
    symbol_mapping : mapping, optional
        Extra name-expression mappings, merged with the parts'. Default: None.

    Returns
    -------
    cuda.core.ObjectCode
        ``code_type`` "fatbin", with the merged symbol mapping.

    Raises
    ------
    ValueError
        Two parts (or ``symbol_mapping``) map one name expression to different symbols; or a part is bad.

    Examples
    --------
    >>> from cuda_fatbin import Part, from_parts
    >>> ptx = ".version 9.0\\n.target sm_90\\n.address_size 64\\n"
    >>> obj = from_parts([Part(ptx, kind="ptx")], name="empty")
    >>> obj.code_type
    'fatbin'
    """
    data, resolved = _build(parts, options)
    sources = [(f"part #{i}", r.symbol_mapping) for i, r in enumerate(resolved)]
    merged = merge_symbol_mappings([*sources, ("symbol_mapping=", dict(symbol_mapping or {}))])
    from cuda.core import ObjectCode

    return ObjectCode.from_fatbin(data, name=name, symbol_mapping=merged)
