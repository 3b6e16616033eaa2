# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""What the bytes justify, as wheel-variant properties and a conda ``cuda-arch`` bound: ``cuda-fatbin metadata``.

:func:`metadata` reads the inputs :func:`~cuda_fatbin.scan` reads (files, folders, wheels, environments, conda
packages, images) with the same listing, reader and worker processes, judges every binary on every GPU of the
table (``data/nvidia.json``) and on a GPU newer than all of them, and says per package (a wheel, or an installed
distribution) which properties of NVIDIA's variant provider its bytes make true:

- ``nvidia :: sm_arch :: <cc>_real``: every binary with device code holds SASS for ``cc`` and runs on a ``cc``
  GPU (the intersection over binaries: what the whole package can claim);
- ``nvidia :: sm_arch :: <cc>_virtual``: every binary runs on every GPU from ``cc`` on, newer ones included,
  with PTX for ``cc`` as the lowest that does it (forward compatibility through the driver's JIT);
- ``nvidia :: cuda_version_lower_bound :: X.Y``: the oldest driver that loads every entry loaded on the GPUs
  the ``sm_arch`` values get the package installed on: the PTX ISA (where a GPU JIT-compiles PTX), zstd
  compression and concatenated entries (:func:`~cuda_fatbin._select.driver_needs`, a rule and its source per
  need);
- the conda ``cuda-arch`` lower bound: the lowest capability from which every GPU runs every binary, newer
  ones included: only PTX makes a lower bound true.

``check=True`` compares them with the properties a wheel declares in its ``*.dist-info/variant.json``
(PEP 825) and reports each declared property that claims more than the bytes give. docs/metadata.md has
the sources. Reading side: imports neither the compile side nor cuda.core.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ._arch import Arch
from ._archive import SEPARATOR
from ._nvidia import capabilities, tables
from ._select import RULES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._scan import BinaryReport

__all__ = ["MAX_VARIANT_JSON", "NAMESPACE", "Declared", "MetadataReport", "PackageMetadata", "installed_declared",
           "metadata", "read_declared"]  # fmt: skip

#: The variant provider namespace of NVIDIA's provider plugin (wheelnext/nvidia-variant-provider).
NAMESPACE = "nvidia"
SM_ARCH = "sm_arch"
LOWER_BOUND = "cuda_version_lower_bound"
#: The largest ``variant.json`` read: a wheel's own holds a few hundred bytes.
MAX_VARIANT_JSON = 1 << 20
#: The most declared properties read from one ``variant.json``.
MAX_PROPERTIES = 4096
#: PEP 825 (and variantlib 0.2.2's ``constants.py``): namespace and feature ``[a-z0-9_]+``, value ``[a-z0-9_.]+``.
_NAME = re.compile(r"[a-z0-9_]+", re.ASCII)
_VALUE = re.compile(r"[a-z0-9_.]+", re.ASCII)
_SM_VALUE = re.compile(r"([1-9][0-9]{1,2})_(real|virtual)", re.ASCII)
_VERSION = re.compile(r"([0-9]{1,3})(?:\.([0-9]{1,3}))?", re.ASCII)
#: Statuses under which a GPU runs a binary (docs/scan.md); "partial" and the driver statuses do not.
_RUNS = ("no kernels", "SASS exact", "SASS compatible", "PTX JIT")
#: Statuses under which every registered fatbin loads SASS (or holds no kernels) on a GPU: no PTX is JIT-compiled.
_SASS = ("no kernels", "SASS exact", "SASS compatible")
#: The rules of needs that only a PTX entry a GPU JIT-compiles has (RULES; driver_needs).
_PTX_RULES = ("ptx_isa_driver",)
_VARIANT_JSON = re.compile(r"[^/]+\.dist-info/variant\.json")


def _gpus() -> list[Arch]:
    """Every compute capability of the table, and one newer than all of them (only PTX runs there)."""
    known = sorted(capabilities())
    return [*known, Arch(known[-1].major + 1, 0)]


def _key(cc: str) -> tuple[int, int]:
    major, minor = cc.split(".")
    return int(major), int(minor)


def _value(cc: str) -> str:
    """``"9.0"`` -> ``"90"``, ``"12.0"`` -> ``"120"``: NVIDIA's provider spells a capability as CMake does."""
    major, minor = _key(cc)
    return f"{major}{minor}"


def _cc(kind_arch: str) -> str | None:
    """The capability (no suffix) of an ``entries`` key's arch (``"elf sm_90a"`` -> ``"9.0"``), None if none."""
    try:
        return Arch.parse(kind_arch.split(" ", 1)[1]).base.capability
    except (ValueError, IndexError):
        return None


@dataclass
class BinaryMetadata:
    """What one binary justifies.

    Attributes
    ----------
    path : str
    distribution : str or None
    package : str
        The package it belongs to: its wheel's path, else its distribution, else ``"(no distribution)"``.
    sass, ptx : list of str
        Capabilities of its SASS and PTX entries (``"9.0"``, suffixes dropped), as ``cuobjdump -lelf``/``-lptx``
        list them (fatbins stored as data included).
    real : list of str
        Capabilities ``cc`` it holds SASS for and that a ``cc`` GPU runs it on (:func:`~cuda_fatbin.scan`'s status).
    virtual : str or None
        The lowest capability it holds PTX for from which every GPU, newer ones included, runs it.
    cuda_arch : str or None
        The lowest capability from which every GPU, newer ones included, runs it (the conda bound).
    needs : dict
        Rule -> the oldest CUDA version that loads its entries (``BinaryReport.needs``).
    gpu_needs : dict
        Capability -> the needs (rule -> CUDA version) of the entries a GPU of that capability loads, for each
        GPU that runs the binary: a GPU that loads SASS from every registered fatbin JIT-compiles no PTX, so the
        PTX ISA is no need there (unless fatbins stored as data or relocatable ones, which the bytes do not say
        when and where they load, are present).
    error : str or None
    """

    path: str
    distribution: str | None
    package: str
    sass: list[str] = field(default_factory=list)
    ptx: list[str] = field(default_factory=list)
    real: list[str] = field(default_factory=list)
    virtual: str | None = None
    cuda_arch: str | None = None
    needs: dict[str, str] = field(default_factory=dict)
    gpu_needs: dict[str, dict[str, str]] = field(default_factory=dict)
    error: str | None = None
    stubs_only: bool = False  # its fatbins hold no kernels (nvcc's device-link stubs): it constrains nothing

    @property
    def has_kernels(self) -> bool:
        """Readable and holding code a GPU runs (not only nvcc's kernel-less device-link stubs)."""
        return self.error is None and bool(self.sass or self.ptx) and not self.stubs_only

    @property
    def lower_bound(self) -> str | None:
        """The oldest CUDA version that runs it on every GPU its ``real`` and ``virtual`` get it installed on."""
        return _bound(_needs_on([self], _offered(self.gpu_needs, self.real, self.virtual)))

    def to_dict(self) -> dict[str, Any]:
        """The record of ``metadata --json``'s ``binaries``."""
        return {"path": self.path, "distribution": self.distribution, "package": self.package, "sass": self.sass,
                "ptx": self.ptx, "properties": _properties(self.real, self.virtual, self.lower_bound),
                "cuda_version_lower_bound": self.lower_bound, "cuda_arch_lower_bound": self.cuda_arch,
                "error": self.error}  # fmt: skip


def _binary(b: BinaryReport, package: str, judged: list[str]) -> BinaryMetadata:
    """The metadata of one binary from its scan report (judged on every GPU of ``judged``, ascending)."""
    out = BinaryMetadata(b.path, b.distribution, package, error=b.error)
    if b.error is not None:
        return out
    by_kind: dict[str, set[str]] = {"elf": set(), "ptx": set()}
    for key in b.entries:
        kind = key.split(" ", 1)[0]
        cc = _cc(key)
        if kind in by_kind and cc is not None:
            by_kind[kind].add(cc)
    out.sass, out.ptx = (sorted(by_kind[k], key=_key) for k in ("elf", "ptx"))
    runs = {g: b.coverage.get(g, {}).get("status") in _RUNS for g in judged}
    if all(b.coverage.get(g, {}).get("status") == "no kernels" for g in judged):
        out.stubs_only = True
        return out
    out.real = [cc for cc in out.sass if runs.get(cc)]
    onward = [g for i, g in enumerate(judged) if all(runs[h] for h in judged[i:])]  # GPUs from which all run
    out.cuda_arch = onward[0] if onward and runs[judged[-1]] else None
    out.virtual = next((cc for cc in out.ptx if cc in onward), None)
    out.needs = dict(b.needs)
    every = bool(b.fatbins.get("embedded") or b.fatbins.get("relocatable"))  # loaded when and where: not said
    sass_needs = {rule: cuda for rule, cuda in out.needs.items() if rule not in _PTX_RULES}
    out.gpu_needs = {g: dict(sass_needs if not every and b.coverage[g]["status"] in _SASS else out.needs)
                     for g in judged if runs[g]}  # fmt: skip
    return out


def _offered(gpus: Iterable[str], real: Iterable[str], virtual: str | None) -> list[str]:
    """The capabilities of ``gpus`` a wheel declaring ``real`` and ``virtual`` is installed on: what NVIDIA's
    provider plugin offers each value to (``Mm_real`` on ``M.m'`` for ``m' >= m``; ``M0_virtual`` on ``M.x``),
    and every GPU from ``virtual`` on (what ``_virtual`` says here); every GPU when no ``sm_arch`` is declared."""
    real_keys = [_key(cc) for cc in real]
    if not real_keys and virtual is None:
        return list(gpus)
    floor = _key(virtual) if virtual is not None else None
    return [g for g in gpus if any(r[0] == _key(g)[0] and r[1] <= _key(g)[1] for r in real_keys)
            or (floor is not None and _key(g) >= floor)]  # fmt: skip


def _needs_on(binaries: Iterable[BinaryMetadata], gpus: list[str]) -> dict[str, str]:
    """Rule -> the oldest CUDA version its entries need, over the entries the GPUs of ``gpus`` load; a GPU where
    a binary does not run at any driver is left out (no lower bound makes it run)."""
    code = [b for b in binaries if b.has_kernels]
    out: dict[str, str] = {}
    for g in gpus:
        if not all(g in b.gpu_needs for b in code):
            continue
        for b in code:
            for rule, cuda in b.gpu_needs[g].items():
                out[rule] = max(out.get(rule, cuda), cuda, key=_key)
    return out


def _bound(needs: dict[str, str]) -> str | None:
    """The oldest CUDA version that meets every need, ``"13.0"``; None when nothing needs more than CUDA 11.0."""
    return max(needs.values(), key=_key) if needs else None


def _properties(real: Iterable[str], virtual: str | None, lower: str | None) -> list[str]:
    """Variant properties as PEP 825 writes them: ``namespace :: feature :: value``."""
    out = [f"{NAMESPACE} :: {SM_ARCH} :: {_value(cc)}_real" for cc in sorted(real, key=_key)]
    out += [f"{NAMESPACE} :: {SM_ARCH} :: {_value(virtual)}_virtual"] if virtual else []
    return out + ([f"{NAMESPACE} :: {LOWER_BOUND} :: {lower}"] if lower else [])


@dataclass
class Declared:
    """The variant properties a wheel declares (PEP 825: ``{name}-{version}.dist-info/variant.json``).

    Attributes
    ----------
    path : str
        The wheel, or the installed ``.dist-info`` folder.
    source : str or None
        ``wheel::member`` (or the path) of the ``variant.json`` read; None when there is none (not a variant wheel).
    label : str or None
        The variant label ``variant.json`` names.
    properties : list of str
        ``namespace :: feature :: value``, in the file's order.
    error : str or None
        Why the declared metadata could not be read or is not valid (hostile input is an error, never a crash).
    """

    path: str
    source: str | None = None
    label: str | None = None
    properties: list[str] = field(default_factory=list)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``declared`` record of ``metadata --json``."""
        return {"path": self.path, "source": self.source, "label": self.label, "properties": self.properties,
                "error": self.error}  # fmt: skip


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _filename_label(wheel: str) -> str | None:
    """The variant label of a wheel's file name (PEP 825: a sixth dash-separated field, after the platform tag)."""
    parts = os.path.basename(wheel)[:-4].split("-")
    if len(parts) == 7:
        return parts[6]
    if len(parts) == 6 and not parts[2][:1].isdigit():  # a build tag starts with a digit
        return parts[5]
    return None


def read_declared(wheel: str | os.PathLike[str]) -> Declared:
    """The variant properties a wheel declares in its ``*.dist-info/variant.json`` (PEP 825).

    Never raises for what it reads: a wheel that cannot be listed, a ``variant.json`` over
    :data:`MAX_VARIANT_JSON` bytes, not UTF-8, not JSON, nested too deep, of another shape than PEP 825's
    (exactly one variant: label -> namespace -> feature -> list of values), with a name or value outside
    PEP 825's characters, or with a label other than the file name's, gives a :class:`Declared` with ``error``.

    Examples
    --------
    >>> import json, pathlib, tempfile, zipfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "k-1.0-py3-none-any-cu13.whl"
    >>> doc = {"variants": {"cu13": {"nvidia": {"sm_arch": ["90_real"]}}}}
    >>> with zipfile.ZipFile(path, "w") as zf:
    ...     zf.writestr("k-1.0.dist-info/variant.json", json.dumps(doc))
    >>> read_declared(path).properties
    ['nvidia :: sm_arch :: 90_real']
    """
    from ._archive import list_members, read_member

    path = os.fspath(wheel)
    out = Declared(path)

    def read() -> bytes | None:
        found = [m for m in list_members(path) if _VARIANT_JSON.fullmatch(m.name)]
        if not found:
            return None
        if len(found) > 1:
            raise ValueError(f"{len(found)} variant.json files in .dist-info folders; a wheel has one")
        [member] = found
        out.source = f"{path}{SEPARATOR}{member.name}"
        if member.size > MAX_VARIANT_JSON:
            raise ValueError(f"variant.json is {member.size} bytes, over the {MAX_VARIANT_JSON} read")
        return read_member(path, member, MAX_VARIANT_JSON)

    _fill(out, read)
    expected = _filename_label(path)
    if out.error is None and out.label is not None and expected is not None and expected != out.label:
        out.error = f"variant.json names the variant {out.label!r}; the file name says {expected!r}"
        out.properties = []  # of another wheel: not this one's claims
    return out


def _fill(out: Declared, read: Callable[[], bytes | None]) -> None:
    """``out``'s label and properties from the ``variant.json`` bytes ``read()`` gives (None: there is none), or
    its ``error``: what was wrong, never an exception."""
    try:
        data = read()
        if data is not None:
            out.label, out.properties = _parse_variant_json(json.loads(data.decode("utf-8")))
    except UnicodeDecodeError as e:
        out.error = f"variant.json is not UTF-8 (byte {e.start})"
    except RecursionError:
        out.error = "variant.json is nested too deep"
    except (OSError, ValueError) as e:  # ArchiveError is an OSError; json's errors are ValueErrors
        out.error = f"{type(e).__name__}: {e}" if isinstance(e, OSError) else str(e)


def installed_declared(folder: str | os.PathLike[str]) -> dict[str, Declared]:
    """The variant properties each distribution installed in ``folder`` declares: ``"name version"`` (PEP 503
    name, as ``scan`` names distributions) -> :class:`Declared`, for each ``*.dist-info`` folder directly in
    ``folder`` that holds a ``variant.json`` (an installed variant wheel keeps its ``.dist-info`` as it was).

    Read as every input is: regular files only, never through a symlink, ``METADATA`` within
    ``scan.MAX_RECORD_BYTES``, ``variant.json`` within :data:`MAX_VARIANT_JSON`; a dist-info without a
    readable ``METADATA`` naming a Name and a Version is passed over (it names no distribution), a
    ``variant.json`` that cannot be read or is not valid is a :class:`Declared` with ``error``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> site = pathlib.Path(tempfile.mkdtemp())
    >>> info = site / "k-1.0.dist-info"
    >>> info.mkdir()
    >>> _ = (info / "METADATA").write_text("Metadata-Version: 2.1\\nName: K\\nVersion: 1.0\\n")
    >>> _ = (info / "variant.json").write_text('{"variants": {"cu13": {"nvidia": {"sm_arch": ["90_real"]}}}}')
    >>> {name: d.properties for name, d in installed_declared(site).items()}
    {'k 1.0': ['nvidia :: sm_arch :: 90_real']}
    """
    from email.parser import HeaderParser

    from ._files import read_regular
    from ._scan import MAX_RECORD_BYTES, normalize

    out: dict[str, Declared] = {}
    try:
        with os.scandir(folder) as listing:
            infos = sorted(e.path for e in listing if e.name.endswith(".dist-info") and e.is_dir(follow_symlinks=False))
    except OSError:
        return out
    for info in infos:
        source = os.path.join(info, "variant.json")
        if not os.path.lexists(source):
            continue
        try:
            meta = HeaderParser().parsestr(
                read_regular(os.path.join(info, "METADATA"), MAX_RECORD_BYTES).decode("utf-8", "replace")
            )
        except (OSError, ValueError):
            continue
        name, version = meta.get("Name"), meta.get("Version")
        if not (isinstance(name, str) and isinstance(version, str) and name.strip() and version.strip()):
            continue
        declared = Declared(info, source=source)
        _fill(declared, lambda: read_regular(source, MAX_VARIANT_JSON))  # noqa: B023  (called at once)
        out[f"{normalize(name.strip())} {version.strip()}"] = declared
    return out


def _parse_variant_json(doc: object) -> tuple[str, list[str]]:
    """``(label, properties)`` of a parsed ``variant.json``; ValueError naming what is not PEP 825's shape."""
    variants = doc.get("variants") if isinstance(doc, dict) else None
    if not isinstance(variants, dict) or len(variants) != 1:
        raise ValueError("variant.json must be an object whose 'variants' names exactly one variant (PEP 825)")
    [(label, namespaces)] = variants.items()
    if not _VALUE.fullmatch(label):
        raise ValueError(f"variant label {_short(label)} is not [0-9a-z._]+")
    if not isinstance(namespaces, dict):
        raise ValueError(f"variant {label!r} must map namespaces to features")
    out = []
    for ns, features in namespaces.items():
        if not _NAME.fullmatch(ns) or not isinstance(features, dict):
            raise ValueError(f"namespace {_short(ns)} is not [a-z0-9_]+ with an object of features")
        for feature, values in features.items():
            if not _NAME.fullmatch(feature) or not isinstance(values, list):
                raise ValueError(f"feature {_short(feature)} of {ns} is not [a-z0-9_]+ with a list of values")
            for v in values:
                if not isinstance(v, str) or not _VALUE.fullmatch(v):
                    raise ValueError(f"value {_short(v)} of {ns} :: {feature} is not [a-z0-9_.]+")
                out.append(f"{ns} :: {feature} :: {v}")
                if len(out) > MAX_PROPERTIES:
                    raise ValueError(f"variant.json declares more than {MAX_PROPERTIES} properties")
    return label, out


@dataclass
class PackageMetadata:
    """What the bytes of one package justify, and how its declared properties compare.

    Attributes
    ----------
    package : str
        A wheel's path, or an installed distribution (``"name version"``), or ``"(no distribution)"``.
    distribution : str or None
    binaries : list of BinaryMetadata
        Its binaries with device code, and those that could not be read.
    real : list of str
        Capabilities every binary with kernels justifies ``_real`` for (the intersection).
    virtual : str or None
        The capability from which every binary runs on every GPU through PTX (the highest of theirs).
    cuda_arch : str or None
        The conda ``cuda-arch`` lower bound: from it on, every GPU runs every binary; None when one lacks PTX.
    needs : list of dict
        ``{"rule", "cuda", "text", "source"}``: what needs which driver, from the rule table with its source.
    declared : Declared or None
        What the wheel or installed distribution declares (``check=True``), None when nothing was read.
    check : list of dict
        ``{"property", "verdict", "reason"}`` per declared property: ``justified``, ``unjustified`` (it claims
        more than the bytes give) or ``not checked`` (nothing in the bytes says: another namespace or feature);
        and ``missing`` for the lower bound the bytes need when NVIDIA properties are declared without one.
    """

    package: str
    distribution: str | None
    binaries: list[BinaryMetadata]
    real: list[str] = field(default_factory=list)
    virtual: str | None = None
    cuda_arch: str | None = None
    needs: list[dict[str, str]] = field(default_factory=list)
    declared: Declared | None = None
    check: list[dict[str, str]] = field(default_factory=list)

    @property
    def cuda_version_lower_bound(self) -> str | None:
        """The oldest CUDA version whose driver loads every entry, ``"13.0"``; None when no entry needs one."""
        return max((n["cuda"] for n in self.needs), key=_key, default=None)

    @property
    def properties(self) -> list[str]:
        """The variant properties the bytes justify, ``nvidia :: sm_arch :: 90_real`` first."""
        return _properties(self.real, self.virtual, self.cuda_version_lower_bound)

    @property
    def consistent(self) -> bool:
        """No declared property claims more than the bytes give, and the declared metadata could be read."""
        bad = self.declared is not None and self.declared.error is not None
        return not bad and all(c["verdict"] not in ("unjustified", "missing") for c in self.check)

    def to_dict(self) -> dict[str, Any]:
        """The record of ``metadata --json``'s ``packages``."""
        with_kernels = [b for b in self.binaries if b.has_kernels]
        return {"package": self.package, "distribution": self.distribution, "binaries": len(with_kernels),
                "unreadable": sum(b.error is not None for b in self.binaries), "properties": self.properties,
                "sm_arch": {"real": [_value(c) + "_real" for c in self.real],
                            "virtual": _value(self.virtual) + "_virtual" if self.virtual else None},
                "cuda_version_lower_bound": self.cuda_version_lower_bound, "needs": self.needs,
                "cuda_arch_lower_bound": self.cuda_arch,
                "declared": self.declared.to_dict() if self.declared else None, "check": self.check,
                "consistent": self.consistent}  # fmt: skip


def _package(name: str, rows: list[BinaryMetadata]) -> PackageMetadata:
    """Combine the binaries of one package: what all of them justify."""
    out = PackageMetadata(name, next((b.distribution for b in rows if b.distribution), None), rows)
    code = [b for b in rows if b.has_kernels]
    if not code:
        return out
    real = set(code[0].real)
    for b in code[1:]:
        real &= set(b.real)
    out.real = sorted(real, key=_key)
    virtual = [b.virtual for b in code]
    out.virtual = max(virtual, key=_key) if all(v is not None for v in virtual) else None  # type: ignore[arg-type]
    bounds = [b.cuda_arch for b in code]
    out.cuda_arch = max(bounds, key=_key) if all(v is not None for v in bounds) else None  # type: ignore[arg-type]
    out.needs = _need_rows(_needs_on(code, _offered(_gpus_of(code), out.real, out.virtual)))
    return out


def _gpus_of(code: list[BinaryMetadata]) -> list[str]:
    """Every capability judged (the binaries' ``gpu_needs`` keys), ascending."""
    return sorted({g for b in code for g in b.gpu_needs}, key=_key)


def _need_rows(needs: dict[str, str]) -> list[dict[str, str]]:
    """The needs as data, the highest first."""
    return [_need(rule, cuda) for rule, cuda in sorted(needs.items(), key=lambda kv: (_key(kv[1]), kv[0]),
                                                       reverse=True)]  # fmt: skip


def _need(rule: str, cuda: str) -> dict[str, str]:
    """One need as data: the rule's text and source; for the PTX ISA, the ISA table's row too."""
    text, source = RULES[rule].text, RULES[rule].source
    if rule == "ptx_isa_driver":
        rows = [r for r in tables()["ptx_isa_cuda"] if r["cuda"] == cuda]
        if rows:
            text = f"PTX ISA {rows[-1]['isa']} is JIT-compiled by a CUDA {cuda} driver or newer; {text}"
            source = f"{rows[-1]['source']}; {source}"
        else:  # an ISA past the table: its major + 4 (ptx_isa_needs)
            text = f"PTX of an ISA past the table (assumed: ISA major + 4 = CUDA {cuda}); {text}"
    return {"rule": rule, "cuda": cuda, "text": text, "source": source}


def _declared_sm(properties: Iterable[str]) -> tuple[list[str], str | None]:
    """The capabilities of the ``nvidia :: sm_arch`` values of ``properties``: ``_real`` ones, and the lowest
    ``_virtual`` one."""
    real: list[str] = []
    virtual: list[str] = []
    for prop in properties:
        ns, feature, value = prop.split(" :: ")
        sm = _SM_VALUE.fullmatch(value) if (ns, feature) == (NAMESPACE, SM_ARCH) else None
        if sm is not None:
            (real if sm[2] == "real" else virtual).append(f"{int(sm[1]) // 10}.{int(sm[1]) % 10}")
    return real, min(virtual, key=_key, default=None)


def _declared_needs(pkg: PackageMetadata) -> list[dict[str, str]]:
    """The needs of the entries loaded on the GPUs the package's declared ``sm_arch`` values are offered to."""
    code = [b for b in pkg.binaries if b.has_kernels]
    real, virtual = _declared_sm(pkg.declared.properties if pkg.declared else [])
    return _need_rows(_needs_on(code, _offered(_gpus_of(code), real, virtual)))


def _verdict(prop: str, pkg: PackageMetadata, needs: list[dict[str, str]], where: str) -> tuple[str, str]:
    """``(verdict, reason)`` of one declared property against what the package's bytes justify (``needs``: those
    on the GPUs its declared ``sm_arch`` values are offered to, ``where`` says which)."""
    ns, feature, value = prop.split(" :: ")
    if ns != NAMESPACE or feature not in (SM_ARCH, LOWER_BOUND):
        return "not checked", "the bytes say nothing about it"
    if not any(b.has_kernels for b in pkg.binaries):
        return "unjustified", "no binary of the package holds device code"
    if feature == LOWER_BOUND:
        version = _VERSION.fullmatch(value)
        if version is None:
            return "unjustified", f"{value!r} is not a CUDA version"
        declared = (int(version[1]), int(version[2] or 0))
        need = max((n["cuda"] for n in needs), key=_key, default=None)
        if need is not None and declared < _key(need):
            why = "; ".join(f"{n['rule']} {n['cuda']}" for n in needs if _key(n["cuda"]) > declared)
            return "unjustified", f"the bytes need a CUDA {need} driver {where} ({why})"
        return "justified", f"the bytes need CUDA {need or '11.0'} at most {where}"
    sm = _SM_VALUE.fullmatch(value)
    if sm is None:
        return "unjustified", f"{value!r} is not <cc>_real or <cc>_virtual"
    cc = f"{int(sm[1]) // 10}.{int(sm[1]) % 10}"
    if sm[2] == "real":
        if cc in pkg.real:
            return "justified", f"every binary holds sm_{sm[1]} SASS that a {cc} GPU runs"
        lacking = [b.path for b in pkg.binaries if b.has_kernels and cc not in b.real]
        return "unjustified", f"{len(lacking)} binary(ies) hold no sm_{sm[1]} SASS a {cc} GPU runs: {lacking[0]}"
    if pkg.virtual is not None and _key(cc) >= _key(pkg.virtual):
        return "justified", f"every binary runs from {pkg.virtual} on through PTX"
    lacking = [b.path for b in pkg.binaries if b.has_kernels and (b.virtual is None or _key(b.virtual) > _key(cc))]
    return "unjustified", f"{len(lacking)} binary(ies) do not run on every GPU from {cc} on: {lacking[0]}"


def _missing_bound(pkg: PackageMetadata, needs: list[dict[str, str]], where: str) -> list[dict[str, str]]:
    """A ``missing`` row when the package declares NVIDIA properties but no lower bound while its bytes need a
    driver newer than every one this library knows of (11.0): a feature not declared does not constrain (PEP
    825), so installers would offer the wheel to any driver."""
    declared = [p.split(" :: ") for p in pkg.declared.properties] if pkg.declared else []
    if not any(ns == NAMESPACE for ns, *_ in declared) or any(
        (ns, feature) == (NAMESPACE, LOWER_BOUND) for ns, feature, *_ in declared
    ):
        return []
    if not any(b.has_kernels for b in pkg.binaries):
        return []
    need = max((n["cuda"] for n in needs), key=_key, default=None)
    if need is None or _key(need) <= (11, 0):
        return []
    why = "; ".join(f"{n['rule']} {n['cuda']}" for n in needs if _key(n["cuda"]) > (11, 0))
    reason = f"not declared, so offered to every driver; the bytes need a CUDA {need} driver {where} ({why})"
    return [{"property": f"{NAMESPACE} :: {LOWER_BOUND} :: {need}", "verdict": "missing", "reason": reason}]


@dataclass
class MetadataReport:
    """The result of :func:`metadata`.

    Attributes
    ----------
    packages : list of PackageMetadata
        One per wheel given, per installed distribution and one for files of no distribution, by name.
    files_read : int
    checked : bool
        Whether declared properties were compared (``check=True``).

    Examples
    --------
    >>> from cuda_fatbin import Program
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> data = bytes(Program(src, "c++").compile("fatbin", archs=["sm_80", "sm_90"], ptx_for=["sm_80"]).code)
    >>> import pathlib, tempfile
    >>> from cuda_fatbin import metadata
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "kernels.fatbin").write_bytes(data)
    >>> [pkg] = metadata([folder], max_workers=1).packages
    >>> pkg.properties[:3], pkg.cuda_arch
    (['nvidia :: sm_arch :: 80_real', 'nvidia :: sm_arch :: 90_real', 'nvidia :: sm_arch :: 80_virtual'], '8.0')
    """

    packages: list[PackageMetadata]
    files_read: int = 0
    checked: bool = False

    @property
    def binaries(self) -> list[BinaryMetadata]:
        """Every binary with device code, and every input that could not be read, package by package."""
        return [b for p in self.packages for b in p.binaries]

    @property
    def unreadable(self) -> list[BinaryMetadata]:
        """The inputs that could not be read."""
        return [b for b in self.binaries if b.error is not None]

    @property
    def consistent(self) -> bool:
        """No package declares more than its bytes give, and every input and declared metadata could be read."""
        return not self.unreadable and all(p.consistent for p in self.packages)

    def to_dict(self) -> dict[str, Any]:
        """The ``metadata --json`` document (schema ``schemas/metadata.json``)."""
        return {"files_read": self.files_read, "unreadable": len(self.unreadable), "checked": self.checked,
                "consistent": self.consistent if self.checked else None,
                "packages": [p.to_dict() for p in self.packages],
                "binaries": [b.to_dict() for b in self.binaries]}  # fmt: skip


def _file_identity(path: str) -> tuple[int, int] | None:
    """``(st_dev, st_ino)`` of the regular file ``path`` (through symlinks), None when it is none."""
    import stat

    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def _package_of(b: BinaryReport) -> str:
    if b.archive and b.archive.lower().endswith(".whl"):
        return b.archive
    return b.distribution or "(no distribution)"


def metadata(
    paths: Iterable[str | os.PathLike[str]] | None = None,
    *,
    check: bool = False,
    embedded: bool = True,
    max_workers: int | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> MetadataReport:
    """The wheel-variant properties and conda ``cuda-arch`` bound that the bytes under ``paths`` justify.

    Parameters
    ----------
    paths : iterable of paths, optional
        What :func:`~cuda_fatbin.scan` reads: files, folders, wheels, conda packages, images. Default: this
        Python environment's site-packages.
    check : bool, optional
        Also read the variant properties each ``.whl`` of ``paths`` (or one found in a folder of ``paths``)
        declares (:func:`read_declared`), and those of each distribution installed directly in a folder of
        ``paths`` (:func:`installed_declared`), and judge each against the bytes (``PackageMetadata.check``).
    embedded, max_workers, progress
        As for :func:`~cuda_fatbin.scan`.

    Returns
    -------
    MetadataReport

    Raises
    ------
    ValueError
        ``max_workers`` is not a positive int.
    FileNotFoundError
        A path given does not exist.

    Examples
    --------
    >>> from cuda_fatbin import Program
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> data = bytes(Program(src, "c++").compile("fatbin", archs=["sm_80", "sm_90"], ptx_for=["sm_80"]).code)
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "kernels.fatbin").write_bytes(data)
    >>> [pkg] = metadata([folder], max_workers=1).packages
    >>> pkg.real, pkg.virtual, pkg.cuda_arch
    (['8.0', '9.0'], '8.0', '8.0')
    """
    from ._scan import default_paths, scan

    if paths is not None and not isinstance(paths, (str, bytes, os.PathLike)):
        paths = list(paths)  # read twice: by scan, and for the wheels to check
    judged = [g.capability for g in _gpus()]
    report = scan(paths, gpus=judged, embedded=embedded, max_workers=max_workers, progress=progress)
    groups: dict[str, list[BinaryMetadata]] = {}
    for b in report.binaries:
        name = _package_of(b)
        groups.setdefault(name, []).append(_binary(b, name, judged))
    roots = [os.fspath(p) for p in paths] if paths is not None else default_paths()
    declared: dict[str, Declared] = {}
    if check:
        # a wheel read under one name (given twice, through a folder and by name, or through a symlink) is one
        # package: its declared properties go to the name scan read it under
        wheels: dict[tuple[int, int], str] = {}
        for name in groups:
            if name.lower().endswith(".whl") and (found := _file_identity(name)) is not None:
                wheels.setdefault(found, name)
        for root in roots:
            if root.lower().endswith(".whl") and not os.path.isdir(root):
                found = _file_identity(root)
                name = wheels.setdefault(found, root) if found is not None else root
                if name not in declared:
                    declared[name] = read_declared(name)
            elif os.path.isdir(root):
                declared.update((k, v) for k, v in installed_declared(root).items() if k not in declared)
        for name in wheels.values():  # a wheel found in a folder given declares as much as one given itself
            if name not in declared:
                declared[name] = read_declared(name)
    for name in declared:
        groups.setdefault(name, [])
    packages = [_package(name, rows) for name, rows in sorted(groups.items())]
    for pkg in packages:
        pkg.declared = declared.get(pkg.package)
        if pkg.declared is not None:
            needs = _declared_needs(pkg)
            offered = _declared_sm(pkg.declared.properties) != ([], None)
            where = "on the GPUs its sm_arch values are offered to" if offered else "on every GPU"
            pkg.check = [dict(zip(("property", "verdict", "reason"), (p, *_verdict(p, pkg, needs, where)),
                                  strict=True)) for p in pkg.declared.properties]  # fmt: skip
            pkg.check.extend(_missing_bound(pkg, needs, where))
    return MetadataReport(packages, report.files_read, check)
