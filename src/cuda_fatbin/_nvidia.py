# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""NVIDIA's facts as data: GPUs and their names, Tegra parts, driver support windows, the selection rules, the
PTX ISA and driver tables. One home: ``data/nvidia.json`` (schema ``data/nvidia.schema.json``), every row with
its source, read once, on first use.

Reading side: imports neither cuda.core nor the compile side.
"""

from __future__ import annotations

import functools
import json
import os
import re

from ._arch import Arch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from ._select import DriverSpec

__all__ = ["DRIVER_CUDA", "PTX_ISA_CUDA", "gpu_arch", "gpu_list", "gpu_names", "is_tegra", "parse_driver",
           "ptx_isa_needs", "support_gap", "tables"]  # fmt: skip

DATA = os.path.join(os.path.dirname(__file__), "data", "nvidia.json")

#: Selection statuses of a GPU the driver does not run at all, whatever the fatbin holds.
DRIVER_PREDATES_GPU = "driver predates GPU"
DRIVER_DROPPED_GPU = "driver dropped GPU"

# What nvidia-smi and vendors add to a product name: dropped from both sides before names are compared
# ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition" is the RTX PRO 6000 Blackwell).
_NOISE = re.compile(
    r"nvidia|geforce|tesla|quadro|pcie|nvl\d*|nvgpu|sxm\d*|hbm\d*e?|\d+gb|server|workstation|edition|max|q", re.ASCII
)
_BRAND = re.compile(r"^(?:nvidia|geforce|tesla|quadro)+", re.ASCII)
_TOKEN = re.compile(r"[a-z0-9]+", re.ASCII)
_CAPABILITY = re.compile(r"(?:sm_|compute_|lto_)?[0-9.]+[af]?", re.ASCII)  # what is meant as a capability
_MAX_NAME = 80  # longer input is no GPU name: no near-miss search, and the message shows its start only


@functools.cache
def tables() -> dict[str, Any]:
    with open(DATA, "rb") as f:
        doc: dict[str, Any] = json.load(f)
    return doc


def _version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")
    return int(major), int(minor)


@functools.cache
def capabilities() -> dict[Arch, dict[str, Any]]:
    return {Arch.parse(row["capability"]): row for row in tables()["capabilities"]}


def _normal(name: str) -> str:
    """``"NVIDIA GeForce RTX 4090"``, ``"rtx4090"`` and ``"RTX-4090"`` alike: ``"rtx4090"``."""
    joined = "".join(t for t in _TOKEN.findall(name.lower()) if not _NOISE.fullmatch(t))
    return _BRAND.sub("", joined)  # "TeslaK80" as "Tesla K80"


@functools.cache
def names() -> dict[str, tuple[str, Arch]]:
    """Normalised name or alias -> (the table's name, capability)."""
    out: dict[str, tuple[str, Arch]] = {}
    for row in tables()["gpus"]:
        for name in (row["name"], *row["aliases"]):
            out[_normal(name)] = (row["name"], Arch.parse(row["capability"]))
    return out


def is_tegra(arch: Arch) -> bool:
    """True for a Tegra (Jetson) compute capability: 3.2, 5.3, 6.2, 7.2, 8.7, 10.1, 11.0 (data: capabilities).

    Examples
    --------
    >>> is_tegra(Arch.parse("8.7")), is_tegra(Arch.parse("sm_86"))
    (True, False)
    """
    row = capabilities().get(arch.base)
    return bool(row and row["tegra"])


def gpu_names() -> list[tuple[str, list[str], Arch, bool]]:
    """Every GPU of the table: ``(name, aliases, capability, tegra)``, in the table's order."""
    return [(r["name"], list(r["aliases"]), Arch.parse(r["capability"]), is_tegra(Arch.parse(r["capability"])))
            for r in tables()["gpus"]]  # fmt: skip


def _shown(spec: str) -> str:
    return repr(spec if len(spec) <= _MAX_NAME else spec[:_MAX_NAME] + "...")


def gpu_arch(spec: Arch | str | int) -> Arch:
    """A GPU's compute capability from a capability in any spelling or a product name.

    Names are compared case-, space- and dash-insensitively, without the words nvidia-smi adds ("NVIDIA",
    "GeForce", "Tesla", "SXM5", "80GB", ...): ``"T4"``, ``"a100"``, ``"RTX 5090"``, ``"Jetson AGX Orin"``,
    ``"NVIDIA H100 80GB HBM3"``. A suffix names code, not a GPU: ``"sm_90a"`` and ``"100f"`` are the GPUs
    9.0 and 10.0.

    Raises
    ------
    ValueError
        Neither a capability nor a known name; the message suggests near names and ``cuda-fatbin gpus``.
    TypeError
        ``spec`` is neither an ``Arch``, a ``str`` nor an ``int``.

    Examples
    --------
    >>> str(gpu_arch("Jetson AGX Orin")), str(gpu_arch("rtx 5090")), str(gpu_arch("sm_90a"))
    ('sm_87', 'sm_120', 'sm_90')
    """
    try:
        return Arch.parse(spec).base
    except ValueError as e:
        parse_error = e
    assert isinstance(spec, str)  # Arch.parse takes every int and Arch, or raises TypeError
    text = spec.strip()
    key = _normal(text) if len(text) <= _MAX_NAME else ""
    found = names().get(key) if key else None
    if found is not None:
        return found[1]
    if len(text) <= _MAX_NAME and _CAPABILITY.fullmatch(text.lower()):
        raise parse_error from None  # a capability that is none: Arch.parse says why
    hint = ""
    if key:
        from ._suggest import nearest

        table = names()
        near = [table[k][0] for k in nearest(key, table)]
        near += [table[k][0] for k in table if key in k and table[k][0] not in near]
        if near:
            hint = f"; did you mean {', '.join(repr(n) for n in dict.fromkeys(near[:5]))}?"
    raise ValueError(
        f"not a GPU: {_shown(spec)}: neither a compute capability (9.0, sm_90, 90) nor a known product name{hint} "
        "(cuda-fatbin gpus lists the names)"
    )


def gpu_list(gpus: str | Iterable[Arch | str | int]) -> list[Arch]:
    """GPUs from ``"75;80;9.0"``, ``"T4, A100; RTX 5090"`` or an iterable of single GPUs (:func:`gpu_arch`).

    A string is cut at ``;`` and ``,``; a piece that is no name is cut at spaces too (``"75 80 86"``).

    Raises
    ------
    ValueError
        An item that is no GPU, or a string that names none.
    """
    if not isinstance(gpus, str):
        return [gpu_arch(g) for g in gpus]
    out: list[Arch] = []
    for piece in re.split(r"[;,]", gpus):
        piece = piece.strip()
        if not piece:
            continue
        try:
            out.append(gpu_arch(piece))
        except ValueError:
            words = piece.split()
            if len(words) == 1 or not all(_CAPABILITY.fullmatch(w.lower()) for w in words):
                raise  # a name, near or not: its own message
            out.extend(gpu_arch(w) for w in words)
    if not out:
        raise ValueError(f"empty GPU list: {_shown(gpus)}")
    return out


def support_gap(gpu: Arch, cuda: tuple[int, int] | None) -> tuple[str, str, str] | None:
    """``(status, reason, rule)`` when a driver of CUDA version ``cuda`` does not run ``gpu`` at all, else None.

    Examples
    --------
    >>> support_gap(Arch.parse("12.0"), (12, 4))[1]
    'a CUDA 12.4 driver predates 12.0 (Blackwell): it needs a CUDA 12.8 driver'
    """
    row = capabilities().get(gpu.base)
    if cuda is None or row is None:
        return None
    name = f"{gpu.capability} ({row['architecture']})"
    first, last = row["first_cuda"], row["last_cuda"]
    if first is not None and cuda < _version(first):
        why = f"a CUDA {cuda[0]}.{cuda[1]} driver predates {name}: it needs a CUDA {first} driver"
        return DRIVER_PREDATES_GPU, why, "driver_gpu_first"
    if last is not None and cuda > _version(last):
        if row.get("last_branch") is None:  # no branch ends it: it was renamed (Thor's 10.1)
            why = f"a CUDA {cuda[0]}.{cuda[1]} driver has no {name} GPU: {row['note']}"
            return DRIVER_DROPPED_GPU, why, "thor_rename"
        branch = _branch_for(cuda)
        return (
            DRIVER_DROPPED_GPU,
            (
                f"driver {branch} (CUDA {cuda[0]}.{cuda[1]}) no longer supports {name}: R{row['last_branch']} is the "
                f"last branch for it"
            ),
            "driver_gpu_last",
        )
    return None


def _branch_for(cuda: tuple[int, int]) -> str:
    """The driver branch a CUDA version needs at least: ``"R590"``; ``"R595 or newer"`` past the table."""
    rows = [(_version(r["cuda"]), int(r["driver"].split(".")[0])) for r in tables()["driver_cuda"]]
    for version, branch in rows:
        if version >= cuda:
            return f"R{branch}" if version == cuda else f"R{branch} or newer"
    return f"newer than R{rows[-1][1]}"


# -- the driver and PTX ISA tables ------------------------------------------------------------------------

#: PTX ISA version -> first CUDA release (driver) that loads it; ``data/nvidia.json`` cites a source per row.
PTX_ISA_CUDA: dict[tuple[int, int], tuple[int, int]] = {
    _version(r["isa"]): _version(r["cuda"]) for r in tables()["ptx_isa_cuda"]
}

#: Linux x86-64 driver version -> CUDA version it supports (the GA minimum driver of each toolkit), ascending;
#: ``data/nvidia.json`` cites the release notes per row.
DRIVER_CUDA: list[tuple[tuple[int, ...], tuple[int, int]]] = [
    (tuple(int(p) for p in r["driver"].split(".")), _version(r["cuda"])) for r in tables()["driver_cuda"]
]
_NEWEST_DRIVER_BRANCH = DRIVER_CUDA[-1][0][0]
#: The oldest driver modelled: CUDA 11.0 (R450); every spelling of an older one is refused alike.
_OLDEST_CUDA = DRIVER_CUDA[0][1]


def parse_driver(driver: DriverSpec) -> tuple[int, int] | None:
    """Turn a driver spelling into the CUDA version it supports.

    Accepts ``"12.4"`` (CUDA), ``"550.54.14"`` (driver), ``12040`` (``cuDriverGetVersion``) or ``(12, 4)``.
    Every spelling has the same floor: CUDA 11.0 (driver 450.36.06), the oldest the tables model.

    Raises
    ------
    ValueError
        For an unknown spelling, a driver older than CUDA 11.0 in any spelling, or a driver version newer
        than the table (pass the CUDA version ``nvidia-smi`` shows instead).

    Examples
    --------
    >>> parse_driver("550.54.14"), parse_driver("12.4"), parse_driver(12040), parse_driver((12, 4))
    ((12, 4), (12, 4), (12, 4), (12, 4))
    """
    if driver is None:
        return None
    cuda = _cuda_of(driver)
    if cuda < _OLDEST_CUDA:
        shown = f"{driver[0]}.{driver[1]}" if isinstance(driver, tuple) else str(driver).strip()
        first = ".".join(f"{p:02d}" if i else str(p) for i, p in enumerate(DRIVER_CUDA[0][0]))
        raise ValueError(
            f"driver {shown} is older than CUDA {_OLDEST_CUDA[0]}.{_OLDEST_CUDA[1]} ({first}); not modelled"
        )
    return cuda


def _cuda_of(driver: DriverSpec) -> tuple[int, int]:
    """The CUDA version of a driver spelling (:func:`parse_driver` checks the floor)."""
    if isinstance(driver, tuple) and len(driver) == 2 and all(type(x) is int and 0 <= x <= 99 for x in driver):
        return (driver[0], driver[1])
    if type(driver) is int and 1000 <= driver < 100_000:
        return (driver // 1000, driver % 1000 // 10)
    if isinstance(driver, str) and re.fullmatch(r"[0-9]{1,3}(\.[0-9]{1,3}){1,2}", driver.strip(), re.ASCII):
        parts = tuple(int(p) for p in driver.strip().split("."))
        if parts[0] < 100:
            if parts[1] < 100:
                return (parts[0], parts[1])
        elif parts[0] > _NEWEST_DRIVER_BRANCH:
            raise ValueError(
                f"driver {driver} is newer than this package's driver table (up to R{_NEWEST_DRIVER_BRANCH}); "
                "pass the CUDA version nvidia-smi reports instead, e.g. driver='13.1'"
            )
        else:
            found = (0, 0)
            for first, cuda in DRIVER_CUDA:
                if parts >= first:
                    found = cuda
            return found
    shown = repr(driver) if not isinstance(driver, str) or len(driver) <= 80 else repr(driver[:80] + "...")
    raise ValueError(f"not a driver or CUDA version: {shown}; use '12.4', '550.54.14' or 12040")


def ptx_isa_needs(version: tuple[int, int]) -> tuple[int, int]:
    """The first CUDA version whose driver JIT-compiles PTX ISA ``version`` (newer ones: ISA major + 4)."""
    if version in PTX_ISA_CUDA:
        return PTX_ISA_CUDA[version]
    return (version[0] + 4, version[1])
