# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""What a build lost against the last one: ``cuda-fatbin diff OLD NEW``.

:func:`diff` reads both sides as :func:`~cuda_fatbin.scan` reads its inputs (files, folders, wheels, conda
packages, images, environments: ``_inputs._inputs_of``, the reader and ``_jobs.fan_out``, both sides in one
fan-out), pairs the binaries of OLD with those of NEW by their name within their distribution, and says per
pair what changed: SASS and PTX archs, per-GPU statuses, kernels, device bytes. Coverage is lost when a GPU
covered before (under the policy: ``_policy``) is not covered after, when a binary that had device code is
gone, or when a binary of either side cannot be read. See docs/cli.md ("diff").

Reading side: imports neither the compile side nor cuda.core.
"""

from __future__ import annotations

import collections
import os
import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field

from ._arch import Arch
from ._inputs import _inputs_of
from ._kernels import demangle_all, entry_kernels
from ._nvidia import gpu_list, gpu_names
from ._owners import _attribute, normalize
from ._policy import Policy
from ._scan import BinaryReport, _died, _scan_job
from ._select import parse_driver

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from ._inputs import _Item
    from ._reader import Fatbin
    from ._select import DriverSpec, GpuList

    T = TypeVar("T")

__all__ = ["BinaryDiff", "DiffReport", "diff"]

#: What became of a binary: both sides read and something changed, nothing changed, only in NEW, only in OLD,
#: or a side could not be read.
CHANGES = ("changed", "unchanged", "added", "removed", "unreadable")


@dataclass
class BinaryDiff:
    """One binary of OLD and its counterpart in NEW (either may be missing), and what changed between them.

    Attributes
    ----------
    name : str
        The binary's file name (``libcurand.so.10``).
    change : str
        One of :data:`CHANGES`.
    path, distribution, error : dict
        ``{"old": ..., "new": ...}``: its path as ``scan`` prints it, its distribution (``"name version"``), why
        it could not be read; ``None`` on a side where it is missing, not attributed or readable.
    sass, ptx : dict
        ``{"lost": [...], "gained": [...]}``: archs (``"sm_90"``) of SASS and of PTX entries, in arch order.
    gpus : dict
        GPU (``"9.0"``) -> ``{"old": status, "new": status, "change": "lost" | "gained" | "changed"}`` for
        each GPU whose status differs, or whose status passes the policy on one side only (a status is ``None``
        on a side without device code). ``lost``: covered
        before and not after under the policy; ``gained``: the reverse; ``changed``: another status alike.
    kernels : dict
        ``{"lost": [...], "gained": [...]}``: mangled kernel names, sorted.
    kernels_unread : dict
        ``{"old": n, "new": n}``: entries whose kernel names could not be read (their kernels may show as
        lost or gained).
    device_bytes : dict
        ``{"old": int or None, "new": int or None}``: bytes of its fatbins.
    lost : list of str
        Why this binary loses coverage (empty when it does not).
    note : str or None
        Why a binary was not paired although it may have a counterpart (its name is not unique).
    """

    name: str
    change: str = "changed"
    path: dict[str, str | None] = field(default_factory=lambda: {"old": None, "new": None})
    distribution: dict[str, str | None] = field(default_factory=lambda: {"old": None, "new": None})
    error: dict[str, str | None] = field(default_factory=lambda: {"old": None, "new": None})
    sass: dict[str, list[str]] = field(default_factory=lambda: {"lost": [], "gained": []})
    ptx: dict[str, list[str]] = field(default_factory=lambda: {"lost": [], "gained": []})
    gpus: dict[str, dict[str, str | None]] = field(default_factory=dict)
    kernels: dict[str, list[str]] = field(default_factory=lambda: {"lost": [], "gained": []})
    kernels_unread: dict[str, int] = field(default_factory=lambda: {"old": 0, "new": 0})
    device_bytes: dict[str, int | None] = field(default_factory=lambda: {"old": None, "new": None})
    lost: list[str] = field(default_factory=list)
    note: str | None = None

    def to_dict(self, demangled: dict[str, str] | None = None) -> dict[str, Any]:
        """The JSON record of one binary (``diff --json``, docs/cli.md); kernels in both spellings (``demangled``
        maps names; default: demangled here, ``_kernels.demangle_all``)."""
        if demangled is None:
            demangled = demangle_all(n for v in self.kernels.values() for n in v)
        kernels: dict[str, Any] = {k: [{"name": n, "demangled": demangled.get(n, n)} for n in v]
                                   for k, v in self.kernels.items()}  # fmt: skip
        kernels["unread"] = self.kernels_unread
        return {"name": self.name, "change": self.change, "path": self.path, "distribution": self.distribution,
                "error": self.error, "sass": self.sass, "ptx": self.ptx, "gpus": self.gpus, "kernels": kernels,
                "device_bytes": self.device_bytes, "lost": self.lost, "note": self.note}  # fmt: skip


@dataclass
class DiffReport:
    """The result of :func:`diff`.

    Attributes
    ----------
    old, new : str
        The two inputs, as given.
    gpus : list of str
        Compute capabilities compared (``"9.0"``).
    driver : str or None
        The driver compared against, or ``None`` for no driver limit.
    policy : Policy
        What counts as covered (``_policy``).
    binaries : list of BinaryDiff
        Every binary with device code (or that could not be read) on either side, in name order; unchanged
        ones included.
    files_read : dict
        ``{"old": n, "new": n}``: binaries read on each side.

    Examples
    --------
    >>> from cuda_fatbin import Program
    >>> from cuda_fatbin import diff
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> import pathlib, tempfile
    >>> old, new = pathlib.Path(tempfile.mkdtemp()), pathlib.Path(tempfile.mkdtemp())
    >>> for folder, archs in ((old, ["sm_80", "sm_90"]), (new, ["sm_90"])):
    ...     code = Program(src, "c++").compile("fatbin", archs=archs, ptx_for=[]).code
    ...     _ = (folder / "k.fatbin").write_bytes(bytes(code))
    >>> report = diff(old, new, gpus="80;90", max_workers=1)
    >>> report.lost, report.binaries[0].sass, report.binaries[0].gpus["8.0"]["change"]
    (True, {'lost': ['sm_80'], 'gained': []}, 'lost')
    """

    old: str
    new: str
    gpus: list[str]
    driver: str | None
    policy: Policy
    binaries: list[BinaryDiff]
    files_read: dict[str, int] = field(default_factory=lambda: {"old": 0, "new": 0})

    @property
    def lost(self) -> bool:
        """True when coverage is lost: a GPU covered before is not, a binary with device code is gone, or a
        binary of either side could not be read."""
        return any(b.lost for b in self.binaries)

    def counts(self) -> dict[str, int]:
        """Binaries per :data:`CHANGES`, and how many lose coverage (``"lost"``)."""
        found = collections.Counter(b.change for b in self.binaries)
        return {**{c: found[c] for c in CHANGES}, "lost": sum(bool(b.lost) for b in self.binaries)}

    def to_dict(self) -> dict[str, Any]:
        """The ``diff --json`` document (schema ``schemas/diff.json``); every kernel name demangled in one batch."""
        demangled = demangle_all(n for b in self.binaries for v in b.kernels.values() for n in v)
        return {"old": self.old, "new": self.new, "gpus": self.gpus, "driver": self.driver,
                "policy": _policy_dict(self.policy), "lost": self.lost, "files_read": self.files_read,
                "counts": self.counts(), "binaries": [b.to_dict(demangled) for b in self.binaries]}  # fmt: skip


def _policy_dict(policy: Policy) -> dict[str, Any]:
    allow = None if policy.allow_partial is None else sorted(policy.allow_partial)
    return {"sass_only": policy.sass_only, "require_ptx": policy.require_ptx, "allow_partial": allow}


# -- reading both sides ---------------------------------------------------------------------------------------


@dataclass
class _Row:
    """One binary of one side, as read: its scan report, kernels and device bytes, and where it sits."""

    report: BinaryReport
    kernels: list[str] = field(default_factory=list)
    device_bytes: int = 0
    unread: int = 0  # entries whose kernel names could not be read
    rel: str = ""  # its path within its input (an archive member's name; "" for the file the input names)
    group: tuple[str | None, str | None] = (None, None)  # (distribution stem, wheel tags)

    @property
    def name(self) -> str:
        """The file name the binary is paired by."""
        return (self.rel or self.report.member or os.path.basename(self.report.path)).rsplit("/", 1)[-1]

    @property
    def with_code(self) -> bool:
        return self.report.has_device_code or self.report.error is not None


_Tagged = tuple[int, "_Item"]  # (0 for OLD, 1 for NEW; the item)
#: kernel names, entries whose names could not be read, device bytes
_Details = tuple[list[str], int, int]
_Result = tuple[int, list[BinaryReport], int, dict[str, _Details]]


def _diff_job(tagged: _Tagged, gpus: list[Arch], driver: DriverSpec, embedded: bool, policy: Policy) -> _Result:
    """Scan one item (``_scan._scan_job``, under ``policy``: its ``ptx_gap``) and keep, per binary, its kernel
    names and device bytes."""
    side, item = tagged
    found: dict[str, _Details] = {}

    def extra(report: BinaryReport, fatbins: list[Fatbin]) -> None:
        names: set[str] = set()
        unread = 0
        for fb in fatbins:
            for e in fb.iter_entries():
                try:
                    names.update(entry_kernels(e))
                except (ValueError, MemoryError, RecursionError):  # a payload that cannot be read: counted
                    unread += 1
        found[report.path] = (sorted(names), unread, sum(fb.size for fb in fatbins))

    reports, read, _skipped = _scan_job(item, gpus, driver, embedded, policy, extra)
    return side, reports, read, found


def _died_tagged(tagged: _Tagged) -> _Result:
    return tagged[0], _died(tagged[1])[0], 0, {}


def _read_sides(
    roots: tuple[str, str], archs: list[Arch], driver: DriverSpec, embedded: bool, policy: Policy,
    max_workers: int | None, progress: Callable[[int, int, str], None] | None,
) -> tuple[list[list[_Row]], dict[str, int]]:  # fmt: skip
    """Every binary of OLD and of NEW (with or without device code), read in one fan-out."""
    tagged: list[_Tagged] = []
    workers = 1
    for side, root in enumerate(roots):
        _, _listing, items, workers = _inputs_of([root], max_workers, "diff")
        tagged += [(side, item) for item in items]
    tagged.sort(key=lambda t: -t[1].size)  # largest first: a pool's tail holds small files
    reports: list[list[BinaryReport]] = [[], []]
    extras: list[dict[str, _Details]] = [{}, {}]
    read = [0, 0, 0]  # binaries read in OLD, in NEW; items done

    def done(item: _Tagged, result: _Result) -> None:
        side, found, n, extra = result
        reports[side].extend(found)
        extras[side].update(extra)
        read[side] += n
        read[2] += 1
        if progress:
            progress(read[2], len(tagged), item[1].path if item[1].package else item[1].shown)

    from ._jobs import fan_out

    fan_out(tagged, _diff_job, (archs, driver, embedded, policy), done, workers, _died_tagged)
    rows: list[list[_Row]] = [[], []]
    for side, root in enumerate(roots):
        _attribute([root], reports[side])
        for r in reports[side]:
            names, unread, size = extras[side].get(r.path, ([], 0, 0))
            rows[side].append(_Row(r, names, size, unread, _relative(r, root), _group(r)))
    return rows, {"old": read[0], "new": read[1]}


def _relative(r: BinaryReport, root: str) -> str:
    """The binary's path within its input: an archive member's name, a file's path below the folder given,
    and ``""`` for the file the input names itself."""
    if r.member is not None:
        return r.member
    if os.path.isdir(root) and r.path != root:
        return os.path.relpath(r.path, root).replace(os.sep, "/")
    return ""


#: A CUDA major at the end of a distribution's name is not part of the name: NVIDIA's CUDA 13 wheels dropped
#: the ``-cu12`` of their CUDA 12 names (nvidia-curand-cu12 10.3.10.19 -> nvidia-curand 10.4.5.25), CuPy
#: names one distribution per major (cupy-cuda12x, cupy-cuda13x): docs/cli.md ("diff").
_CUDA_MAJOR = re.compile(r"-cu(?:da)?\d+x?$")


def _stem(distribution: str | None) -> str | None:
    """``"nvidia-curand-cu12 10.3.10.19"`` -> ``"nvidia-curand"``: the name without version and CUDA major."""
    if not distribution:
        return None
    return _CUDA_MAJOR.sub("", normalize(distribution.split(" ", 1)[0]))


def _group(r: BinaryReport) -> tuple[str | None, str | None]:
    """(distribution stem, the wheel's python-abi-platform tags): binaries are paired within a group."""
    tags = None
    wheel = os.path.basename(r.archive or "")
    if wheel.lower().endswith(".whl") and wheel.count("-") >= 4:
        tags = "-".join(wheel[:-4].split("-")[-3:])
    return _stem(r.distribution), tags


#: The machine at the end of a wheel's platform tag (manylinux_2_28_x86_64, win_amd64, macosx_11_0_arm64)
_MACHINE = re.compile(r"(x86_64|aarch64|ppc64le|s390x|armv7l|i686|amd64|arm64|win32|universal2|any)$")


def _machine(tags: str | None) -> str | None:
    """The machine a wheel's tags build for: ``x86_64`` for both manylinux_2_27_x86_64 and _2_28_x86_64."""
    found = _MACHINE.search(tags.rsplit("-", 1)[-1].rsplit(".", 1)[-1]) if tags else None
    return found.group(1) if found else tags


# -- pairing --------------------------------------------------------------------------------------------------


def _pair(
    old: list[T], new: list[T], keys: Sequence[Callable[[T], Hashable]]
) -> tuple[list[tuple[T, T]], list[T], list[T]]:
    """Pair items of ``old`` and ``new`` key by key, most specific first: at each key, the items whose key is
    unique on both sides pair; the rest go on to the next key. Linear in the items per key."""
    pairs: list[tuple[T, T]] = []
    for key in keys:
        by_old: dict[Hashable, list[T]] = collections.defaultdict(list)
        by_new: dict[Hashable, list[T]] = collections.defaultdict(list)
        for item in old:
            by_old[key(item)].append(item)
        for item in new:
            by_new[key(item)].append(item)
        taken: set[int] = set()
        for k, items in by_old.items():
            if len(items) == 1 and len(by_new.get(k, ())) == 1:
                pairs.append((items[0], by_new[k][0]))
                taken |= {id(items[0]), id(by_new[k][0])}
        old = [i for i in old if id(i) not in taken]
        new = [i for i in new if id(i) not in taken]
    return pairs, old, new


def _pairs(rows: list[list[_Row]]) -> tuple[list[tuple[_Row | None, _Row | None]], dict[int, str]]:
    """Binaries of OLD and NEW paired: distributions first (by stem and wheel tags, then by stem and the wheel's
    machine, then by stem, then the one left on each side), then binaries within a pair of distributions (by
    path, then by file name when unique).
    Returns the pairs (``None`` for a missing side) and, for a binary left alone, why its name did not pair."""
    groups: list[dict[tuple[str | None, str | None], list[_Row]]] = [{}, {}]
    for side in (0, 1):
        for r in rows[side]:
            groups[side].setdefault(r.group, []).append(r)
    keys: list[Callable[[tuple[str | None, str | None]], Hashable]] = [
        lambda g: g, lambda g: (g[0], _machine(g[1])), lambda g: g[0], lambda g: None]  # fmt: skip
    gpairs, gold, gnew = _pair(list(groups[0]), list(groups[1]), keys)
    out: list[tuple[_Row | None, _Row | None]] = []
    notes: dict[int, str] = {}
    # a binary's rank among those of its path in its group (an archive may hold a name twice), by what it holds:
    # the order workers return them in varies, and the same bytes on both sides rank alike
    nth: dict[int, int] = {}
    for side in (0, 1):
        same: dict[tuple[object, str], list[_Row]] = collections.defaultdict(list)
        for r in rows[side]:
            same[r.group, r.rel].append(r)
        for found in same.values():
            found.sort(key=lambda r: (r.device_bytes, sorted(r.report.entries.items()), r.kernels, r.report.path))
            nth.update((id(r), i) for i, r in enumerate(found))
    for go, gn in gpairs:
        by: list[Callable[[_Row], Hashable]] = [lambda r: r.rel, lambda r: r.name, lambda r: (r.rel, nth[id(r)])]
        pairs, left_old, left_new = _pair(groups[0][go], groups[1][gn], by)
        out += pairs
        for side, left in ((0, left_old), (1, left_new)):
            named = collections.Counter(r.name for r in groups[side][(go, gn)[side]])
            for r in left:
                if named[r.name] > 1:
                    where = r.report.distribution or "its input"
                    notes[id(r)] = f"{named[r.name]} binaries named {r.name} in {where}: paired by path only"
                out.append((r, None) if side == 0 else (None, r))
    out += [(r, None) for g in gold for r in groups[0][g]]
    out += [(None, r) for g in gnew for r in groups[1][g]]
    return out, notes


# -- comparing ------------------------------------------------------------------------------------------------


def _arch_key(text: str) -> tuple[int, int, str]:
    try:
        a = Arch.parse(text)
        return a.major, a.minor, text
    except (ValueError, TypeError):
        return 1 << 30, 0, text


def _archs(report: BinaryReport, kind: str) -> set[str]:
    return {k.split(" ", 1)[1] for k in report.entries if k.split(" ", 1)[0] == kind and " " in k}


def _gained_lost(old: Iterable[str], new: Iterable[str], key: Callable[[str], Any] = str) -> dict[str, list[str]]:
    a, b = set(old), set(new)
    return {"lost": sorted(a - b, key=key), "gained": sorted(b - a, key=key)}


def _status(row: _Row | None, gpu: str) -> str | None:
    return None if row is None else row.report.coverage.get(gpu, {}).get("status")


def _covered(policy: Policy, row: _Row | None, gpu: str) -> bool:
    """Covered as the gate judges it (``_gate``: the policy's rules, a partial binary's modules JIT-compiled)."""
    from ._gate import _rule

    return row is not None and _status(row, gpu) is not None and _rule(row.report, gpu, policy) is None


def _compare(old: _Row | None, new: _Row | None, gpus: list[str], policy: Policy, note: str | None) -> BinaryDiff:
    """What changed between two binaries paired (either may be ``None``: added or removed)."""
    some = old or new
    assert some is not None
    out = BinaryDiff(some.name, note=note)
    for side, row in (("old", old), ("new", new)):
        if row is not None:
            out.path[side] = row.report.path
            out.distribution[side] = row.report.distribution
            out.error[side] = row.report.error
            out.device_bytes[side] = None if row.report.error else row.device_bytes
            out.kernels_unread[side] = row.unread
    if out.error["old"] or out.error["new"]:
        out.change = "unreadable"
        out.lost = [f"{side.upper()} could not be read: {err}" for side, err in out.error.items() if err]
        return out
    for kind in ("elf", "ptx"):
        archs = [_archs(r.report, kind) if r else set() for r in (old, new)]
        setattr(out, "sass" if kind == "elf" else "ptx", _gained_lost(archs[0], archs[1], _arch_key))
    out.kernels = _gained_lost(old.kernels if old else (), new.kernels if new else ())
    for g in gpus:
        before, after = _status(old, g), _status(new, g)
        was, now = _covered(policy, old, g), _covered(policy, new, g)
        if before == after and was == now:  # the same status may pass the policy on one side only
            continue
        change = "lost" if was and not now else "gained" if now and not was else "changed"
        out.gpus[g] = {"old": before, "new": after, "change": change}
        if change == "lost":
            out.lost.append(f"GPU {g}: {before} -> {after or 'no device code'}")
    if policy.require_ptx and old is not None and new is not None and new.report.ptx_gap and not old.report.ptx_gap:
        out.lost.append(f"require-ptx: {new.report.ptx_gap}")
    if new is None:
        out.change = "removed"
        if old is not None and old.report.has_device_code:
            out.lost.insert(0, "removed: it had device code")
    elif old is None:
        out.change = "added"
    elif not (out.gpus or any(v for d in (out.sass, out.ptx, out.kernels) for v in d.values())
              or len(set(out.device_bytes.values())) > 1 or len(set(out.kernels_unread.values())) > 1):  # fmt: skip
        out.change = "unchanged"
    return out


def _default_gpus() -> list[Arch]:
    """Every GPU of the table in ``_nvidia`` (data/nvidia.json), each capability once."""
    return sorted({arch for _name, _aliases, arch, _tegra in gpu_names()})


def diff(
    old: str | os.PathLike[str],
    new: str | os.PathLike[str],
    *,
    gpus: GpuList | None = None,
    driver: DriverSpec = None,
    policy: Policy | None = None,
    embedded: bool = True,
    max_workers: int | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> DiffReport:
    """Compare two builds: what NEW lost (and gained) against OLD, binary by binary.

    Parameters
    ----------
    old, new : path
        A file, folder (an environment's site-packages included), ``.whl``/``.zip`` archive, conda package or
        container image each, read as :func:`~cuda_fatbin.scan` reads it.
    gpus : str or iterable, optional
        Compute capabilities in any spelling, or GPU names; added to the policy's. Default (neither names
        one): every GPU of the table (``cuda-fatbin gpus``).
    driver : str, int or tuple, optional
        As for :func:`~cuda_fatbin.scan`.
    policy : Policy, optional
        What counts as covered (``_policy.Policy``: ``sass_only``, ``require_ptx``, ``allow_partial``, ``gpus``).
        Default: as ``scan`` judges without a policy.
    embedded : bool, optional
        Also read fatbins stored as data. Default: True.
    max_workers : int, optional
        Worker processes (both sides in one pool). Default: the CPU count.
    progress : callable, optional
        Called as ``progress(done, total, path)`` after each input.

    Returns
    -------
    DiffReport

    Raises
    ------
    ValueError
        A GPU or driver spelling is not understood, or ``max_workers`` is not a positive int.
    FileNotFoundError
        ``old`` or ``new`` does not exist.

    Examples
    --------
    >>> from cuda_fatbin import diff
    >>> report = diff("old.whl", "new.whl", gpus="75;80;90")  # doctest: +SKIP
    >>> [(b.name, b.sass["lost"]) for b in report.binaries if b.lost]  # doctest: +SKIP
    [('libk.so', ['sm_75'])]
    """
    for what, value in (("old", old), ("new", new)):
        if not isinstance(value, (str, os.PathLike)):
            raise TypeError(f"{what} must be one path (a file, folder, wheel, conda package or image); got {value!r}")
    policy = policy or Policy()
    if gpus is None and policy.gpus is None:
        archs = _default_gpus()
    else:
        archs = sorted(set(gpu_list(gpus or [])) | set(gpu_list(policy.gpus or [])))
    if not archs:
        raise ValueError("diff needs at least one GPU (gpus=), or None for every GPU of the table")
    parse_driver(driver)
    roots = (os.fspath(old), os.fspath(new))
    rows, read = _read_sides(roots, archs, driver, embedded, policy, max_workers, progress)
    keys = [a.capability for a in archs]
    pairs, notes = _pairs(rows)
    out = [_compare(o, n, keys, policy, notes.get(id(o or n))) for o, n in pairs
           if (o is not None and o.with_code) or (n is not None and n.with_code)]  # fmt: skip
    out.sort(key=lambda b: (not b.lost, b.name, b.path["old"] or "", b.path["new"] or ""))
    return DiffReport(roots[0], roots[1], keys, None if driver is None else str(driver), policy, out, read)
