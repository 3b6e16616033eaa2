# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Will this environment run on that GPU, with that driver? Audit every binary under some paths.

:func:`scan` walks files, directories, ``.whl``/``.zip`` archives and ar archives (default: this Python's
site-packages), reads every ELF file, raw fatbin, single cubin and PE image it finds (by magic, not by name) with
the pure-Python reader, across processes, and asks :func:`select_entry` what each GPU would load from
each fatbin. Nothing but per-entry metadata leaves a worker; files are memory-mapped, archive members
are read into memory one at a time within :data:`MAX_MEMBER` bytes. See docs/scan.md for the statuses
and for what static inspection cannot know.

Reading side: imports neither the compile side nor cuda.core.
"""

from __future__ import annotations

import collections
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ._arch import Arch
from ._archive import MAX_MEMBER, SEPARATOR, Member
from ._containers import read_member
from ._detect import file_kind
from ._gate import Judgement, check_globs, jit_only, judge_report, missing_kernels, require_ptx
from ._inputs import _HEAD, _error, _inputs_of, _is_binary, _Item, _opened
from ._inputs import _list_inputs as _list_inputs  # (their home is _inputs; still importable from here)
from ._inputs import default_paths as default_paths
from ._jobs import fan_out
from ._nvidia import gpu_arch, gpu_list
from ._owners import MAX_RECORD_BYTES as MAX_RECORD_BYTES  # (their home is _owners; still importable from here)
from ._owners import _attribute
from ._owners import normalize as normalize
from ._packages import read_package
from ._parts import _tallied, _tally
from ._policy import Policy
from ._reader import iter_fatbins
from ._select import _RANK, STATUSES, UNCOVERED, judge, parse_driver

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._reader import Fatbin
    from ._select import DriverSpec, GpuList

__all__ = ["MAX_MEMBER", "STATUSES", "UNCOVERED", "BinaryReport", "ScanReport", "scan"]


@dataclass
class BinaryReport:
    """What one binary holds and how each GPU would run it.

    Attributes
    ----------
    path : str
        File path, or ``archive.whl::member/path`` inside an archive (``cuda-fatbin inspect`` reads both).
    distribution : str or None
        ``"name version"`` of the installed distribution (or wheel) that ships it, where known.
    fatbins : dict
        Counts: ``registered`` (loaded by the CUDA runtime), ``relocatable`` (device-link input, never
        loaded), ``embedded`` (stored as data; the library may load them itself).
    entries : dict
        ``"kind arch"`` -> count, over every fatbin.
    ptx_isa : list of str
        PTX ISA versions present.
    compression : list of str
    coverage : dict
        GPU (``"9.0"``) -> ``{"status", "reason"}``; empty when the binary has no device code.
    error : str or None
        Why the binary (or the archive, file or folder at ``path``) could not be read: such a binary
        counts as not covered for every GPU.
    archive, member : str or None
        For an archive member: the archive's path and the member's name.
    layer : dict or None
        For a file of a container image: the layer it was read from, ``{"index": 0-based from the bottom,
        "id": its digest (or its path in a legacy ``docker save``)}``.
    needs : dict
        What in its SASS, PTX and relocatable PTX entries needs a newer driver: rule name
        (:func:`~cuda_fatbin._select.driver_needs`) -> the oldest CUDA version that loads every such entry
        (``"13.0"``). Not part of ``scan --json``; ``cuda-fatbin metadata`` reports it.
    kernels : dict
        Per GPU whose status is ``partial`` or not covered (or ``PTX JIT`` under a SASS-only policy): the
        kernels it cannot load, ``{"kernels": mangled names, "more": count left out, "unread": fatbins
        whose names could not be read}`` (:func:`cuda_fatbin._gate.missing_kernels`).
    ptx_gap : str or None
        With a ``require_ptx`` policy: why GPUs newer than its SASS would run none of its code.
    jit_only : list of str
        With a ``sass_only`` policy: the GPUs on which it is ``partial`` and loads some module only by PTX
        JIT (:func:`cuda_fatbin._gate.jit_only`). Not part of ``scan --json``: its failures say it.
    """

    path: str
    distribution: str | None = None
    fatbins: dict[str, int] = field(default_factory=dict)
    entries: dict[str, int] = field(default_factory=dict)
    ptx_isa: list[str] = field(default_factory=list)
    compression: list[str] = field(default_factory=list)
    coverage: dict[str, dict[str, str]] = field(default_factory=dict)
    error: str | None = None
    archive: str | None = None
    member: str | None = None
    layer: dict[str, int | str] | None = None
    needs: dict[str, str] = field(default_factory=dict)
    kernels: dict[str, dict[str, Any]] = field(default_factory=dict)
    ptx_gap: str | None = None
    jit_only: list[str] = field(default_factory=list)

    @property
    def has_device_code(self) -> bool:
        """True when the binary holds any fatbin entry."""
        return bool(self.entries)

    def to_dict(self, demangled: dict[str, str] | None = None) -> dict[str, Any]:
        """The JSON record of docs/cli.md (``scan --json``); ``demangled`` maps kernel names (default: demangled
        here)."""
        if demangled is None:
            demangled = _demangled(n for row in self.kernels.values() for n in row["kernels"])
        kernels = {g: {**row, "kernels": [{"name": n, "demangled": demangled.get(n, n)} for n in row["kernels"]]}
                   for g, row in self.kernels.items()}  # fmt: skip
        return {"path": self.path, "distribution": self.distribution, "fatbins": self.fatbins,
                "entries": self.entries, "ptx_isa": self.ptx_isa, "compression": self.compression,
                "coverage": self.coverage, "error": self.error, "archive": self.archive,
                "member": self.member, "layer": self.layer, "kernels": kernels, "ptx_gap": self.ptx_gap}  # fmt: skip


@dataclass
class ScanReport:
    """The result of :func:`scan`.

    Attributes
    ----------
    gpus : list of str
        Compute capabilities checked (``"9.0"``).
    driver : str or None
        The driver checked against (as given), or ``None`` for no driver limit.
    binaries : list of BinaryReport
        Every binary with device code, and every one that could not be read.
    files_read : int
        Binaries (files and archive members whose first bytes say ELF, fatbin or PE, and ``.obj`` COFF
        objects) that were read.
    skipped : dict
        What the walk passed over, by kind: ``"symlink"`` (found in a folder: never followed),
        ``"not a regular file"`` (FIFOs, sockets, devices), ``"Mach-O"`` (not read), ``"ar in an archive"``
        (a static library inside a wheel or zip: not opened).
    policy : Policy
        What counts as covered (``cuda_fatbin._policy``; the default: some entry loads).
    alternatives : list of str
        Globs over paths: the binaries one matches are alternatives, and a GPU is covered when one covers it.

    Examples
    --------
    >>> from cuda_fatbin import Program
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> data = bytes(Program(src, "c++").compile("fatbin", archs=["sm_80", "sm_90"], ptx_for=["sm_90"]).code)
    >>> import pathlib, tempfile
    >>> from cuda_fatbin import scan
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "kernels.fatbin").write_bytes(data)
    >>> report = scan([folder], gpus="75;90")
    >>> report.covered, [b.coverage["9.0"]["status"] for b in report.binaries]
    (False, ['SASS exact'])
    >>> [pathlib.Path(b.path).name for b in report.uncovered("7.5")]
    ['kernels.fatbin']
    """

    gpus: list[str]
    driver: str | None
    binaries: list[BinaryReport]
    files_read: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    policy: Policy = field(default_factory=Policy)
    alternatives: list[str] = field(default_factory=list)

    @property
    def unreadable(self) -> list[BinaryReport]:
        """The inputs (binaries, archive members, archives, files, folders) that could not be read."""
        return [b for b in self.binaries if b.error]

    def uncovered(self, gpu: Arch | str | int) -> list[BinaryReport]:
        """Binaries with device code that ``gpu`` (any spelling) cannot run, and inputs that could not be read,
        in path order.

        Raises
        ------
        ValueError
            ``gpu`` was not one of the scan's GPUs: nothing is known about it (an empty list would claim
            it is covered).
        """
        key = gpu_arch(gpu).capability
        if key not in self.gpus:
            raise ValueError(f"compute capability {key} was not scanned (this scan judged {', '.join(self.gpus)}): "
                             f"scan again with it in gpus=")  # fmt: skip
        return [self.binaries[i] for i in self.judgement().uncovered[key]]

    def judgement(self) -> Judgement:
        """Which binary fails which rule of :attr:`policy` on which GPU, alternatives taken together
        (:func:`cuda_fatbin._gate.judge_report`)."""
        return judge_report(self.binaries, self.gpus, self.policy, self.alternatives)

    @property
    def covered(self) -> bool:
        """True when every binary with device code covers every GPU under :attr:`policy` and every input could
        be read.

        An input that could not be read counts as not covered for every GPU.
        """
        found = self.judgement()
        return not any(found.uncovered.values()) and not found.failures and not self.unreadable

    def distributions(self) -> list[dict[str, Any]]:
        """Per distribution: its binaries with device code and, per GPU, the worst status among them.

        ``"unreadable"`` (worse than every status) when one of its inputs could not be read.
        """
        groups: dict[str, list[BinaryReport]] = collections.defaultdict(list)
        for b in self.binaries:
            if b.has_device_code or b.error:
                groups[b.distribution or "(no distribution)"].append(b)
        rank = {**_RANK, "unreadable": len(_RANK)}
        out = []
        for name, items in sorted(groups.items()):
            worst = {}
            for g in self.gpus:
                statuses = [b.coverage[g]["status"] for b in items if g in b.coverage]
                statuses += ["unreadable"] * any(b.error for b in items)
                worst[g] = max(statuses, key=rank.__getitem__) if statuses else None
            out.append({"distribution": name, "binaries": len(items), "unreadable": sum(bool(b.error) for b in items),
                        "coverage": worst})  # fmt: skip
        return out

    def to_dict(self) -> dict[str, Any]:
        """The ``scan --json`` document (schema in docs/cli.md)."""
        found = self.judgement()
        names = _demangled(n for b in self.binaries for row in b.kernels.values() for n in row["kernels"])
        p = self.policy
        policy = {"sass_only": p.sass_only, "require_ptx": p.require_ptx,
                  "allow_partial": None if p.allow_partial is None else sorted(p.allow_partial)}  # fmt: skip
        return {"gpus": self.gpus, "driver": self.driver, "covered": self.covered, "files_read": self.files_read,
                "unreadable": len(self.unreadable), "skipped": self.skipped,
                "binaries": [b.to_dict(names) for b in self.binaries], "distributions": self.distributions(),
                "policy": policy, "failures": found.failures, "alternatives": found.groups}  # fmt: skip


def _demangled(names: Iterable[str]) -> dict[str, str]:
    """``_kernels.demangle_all`` of ``names``, imported only where there is a name (start-up time)."""
    listed = list(names)
    if not listed:
        return {}
    from ._kernels import demangle_all

    return demangle_all(listed)


def scan_binary(
    path: str, member: Member | None, gpus: list[Arch], driver: DriverSpec, embedded: bool, *,
    listed_as: tuple[int, int] = (0, 0), follow: bool = True, policy: Policy | None = None,
    extra: _Extra | None = None,
) -> BinaryReport:  # fmt: skip
    """Read one binary (``member`` of the archive ``path``, if given) and judge it for every GPU.

    Never raises for what it reads: a binary that cannot be read or parsed is a report with ``error``.
    """
    archive = path if member else None
    report = BinaryReport(f"{path}{SEPARATOR}{member.name}" if member else path, archive=archive,
                          member=member.name if member else None)  # fmt: skip
    try:
        if member:
            fatbins = list(iter_fatbins(read_member(path, member, follow=follow), embedded=embedded, relocatable=True))
        else:
            with _opened(path, listed_as, follow) as source:
                fatbins = list(iter_fatbins(source, embedded=embedded, relocatable=True))
    except (OSError, ValueError, MemoryError, RecursionError) as exc:  # FatbinFormatError is a ValueError
        report.error = re.sub(r"/proc/self/fd/\d+", lambda _m: path, _error(exc))  # the name the user knows
        return report
    return _judged(report, fatbins, gpus, driver, policy, extra)


#: Called in the worker with each binary's report and fatbins, before they are dropped (``diff`` reads
#: kernel names and device bytes there: one read of each binary).
_Extra = Callable[[BinaryReport, list["Fatbin"]], None]


def _judged(
    report: BinaryReport, fatbins: list[Fatbin], gpus: list[Arch], driver: DriverSpec, policy: Policy | None = None,
    extra: _Extra | None = None,
) -> BinaryReport:  # fmt: skip
    """``report`` with the entries, fatbin counts and coverage of ``fatbins`` (and ``extra`` called on them)."""
    if extra is not None:
        extra(report, fatbins)
    _tallied(report, _tally(fatbins))
    try:
        report.coverage = judge(fatbins, gpus, driver)
        _gated(report, fatbins, gpus, driver, policy or Policy())
    except (ValueError, MemoryError, RecursionError) as exc:
        report.error = _error(exc)
    return report


def _gated(report: BinaryReport, fatbins: list[Fatbin], gpus: list[Arch], driver: DriverSpec, policy: Policy) -> None:
    """The kernels, PTX gap and JIT-only GPUs that ``policy`` asks about, of ``fatbins`` judged in ``report``."""
    report.kernels = missing_kernels(fatbins, report.coverage, gpus, driver, policy)
    report.ptx_gap = require_ptx(fatbins) if policy.require_ptx else None
    report.jit_only = jit_only(fatbins, report.coverage, gpus, driver) if policy.sass_only else []


def _scan_item(
    item: _Item, gpus: list[Arch], driver: DriverSpec, embedded: bool, policy: Policy | None = None,
    extra: _Extra | None = None,
) -> BinaryReport:  # fmt: skip
    if item.error is not None:
        return BinaryReport(item.shown, archive=item.path if item.member else None,
                            member=item.member.name if item.member else None, error=item.error)  # fmt: skip
    return scan_binary(item.path, item.member, gpus, driver, embedded, listed_as=item.identity, follow=item.follow,
                       policy=policy, extra=extra)  # fmt: skip


_Job = tuple[list[BinaryReport], int, dict[str, int]]


def _scan_job(
    item: _Item, gpus: list[Arch], driver: DriverSpec, embedded: bool, policy: Policy | None = None,
    extra: _Extra | None = None,
) -> _Job:  # fmt: skip
    """The reports of one item (a package or image gives many), how many binaries were read for them, and
    the files of a package passed over unread, counted by kind."""
    if item.package and item.error is None:
        return _scan_package(item, gpus, driver, embedded, policy, extra)
    return [_scan_item(item, gpus, driver, embedded, policy, extra)], int(item.error is None), {}


#: Magic numbers of archives and compressed streams that a package's member may be: never opened there.
_ARCHIVE_MAGIC = (b"PK\x03\x04", b"\x1f\x8b", b"BZh", b"\x28\xb5\x2f\xfd", b"\xfd7zXZ\x00")
_ARCHIVE_SUFFIXES = (".whl", ".zip", ".conda", ".tar", ".tar.bz2", ".tar.gz", ".tgz", ".tar.zst", ".tar.xz")


def _unread_in_package(name: str, head: bytes) -> str | None:
    """The kind, as the summary counts it, of a package's member that may hold device code but is not read
    there: an archive or compressed stream (by magic or name), a static library, a Mach-O file; else None."""
    kind = file_kind(head, name)
    if kind is not None:
        return f"{kind} in a package"
    if head.startswith(_ARCHIVE_MAGIC) or name.lower().endswith(_ARCHIVE_SUFFIXES):
        return "archive in a package"
    return None


def _scan_package(
    item: _Item, gpus: list[Arch], driver: DriverSpec, embedded: bool, policy: Policy | None = None,
    extra: _Extra | None = None,
) -> _Job:  # fmt: skip
    """A conda package or an image, read in one pass (``_packages``): one report per binary, the last of a name."""
    reports: dict[str, BinaryReport] = {}
    meta: dict[str, object] = {}
    read = 0
    skipped: collections.Counter[str] = collections.Counter()

    def wanted(name: str, head: bytes) -> bool:
        if len(head) >= 16 and _is_binary(head, name):
            return True
        kind = _unread_in_package(name, head)
        if kind is not None:  # counted, never opened: no silent pass (docs/scan.md)
            skipped[kind] += 1
        return False

    for found in read_package(item.path, item.package or "", wanted, _HEAD, meta, listed_as=item.identity,
                              follow=item.follow):  # fmt: skip
        inside = f"{item.path}{SEPARATOR}{found.name}" if found.name else item.path
        error = found.error and (found.name and "ArchiveError: ") + found.error
        report = BinaryReport(inside, archive=item.path if found.name else None, member=found.name or None,
                              layer=found.layer, error=error)  # fmt: skip
        if found.data is not None:
            read += 1
            try:
                fatbins = list(iter_fatbins(found.data, embedded=embedded, relocatable=True))
                report = _judged(report, fatbins, gpus, driver, policy, extra)
            except (ValueError, MemoryError, RecursionError) as exc:
                report.error = _error(exc)
        reports[inside if found.data is not None else f"{inside}\0{len(reports)}"] = report
    dist = meta.get("distribution")
    for r in reports.values():
        r.distribution = dist if isinstance(dist, str) else None
    return list(reports.values()), read, dict(skipped)


def scan(
    paths: Iterable[str | os.PathLike[str]] | None = None,
    *,
    gpus: GpuList | None = None,
    driver: DriverSpec = None,
    embedded: bool = True,
    max_workers: int | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    policy: Policy | str | os.PathLike[str] | None = None,
    sass_only: bool = False,
    require_ptx: bool = False,
    allow_partial: Iterable[str] | None = None,
    alternatives: Iterable[str] = (),
) -> ScanReport:
    """Audit binaries for the GPUs ``gpus`` and (optionally) a driver.

    Parameters
    ----------
    paths : iterable of paths, optional
        Files, directories (walked, symlinks not followed) and ``.whl``/``.zip`` archives (read in
        place). Default: this Python environment's site-packages.
    gpus : str or iterable, optional
        Compute capabilities in any spelling: ``"75;80;86;89;90;100;120"`` or ``["8.0", "sm_90"]``; added to
        the policy's. One GPU at least, from either.
    driver : str, int or tuple, optional
        As for :func:`select_entry`: limits PTX JIT and decompression to what that driver can do.
    embedded : bool, optional
        Also find fatbins stored as data (``iter_fatbins(..., embedded=True)``). Default: True.
    max_workers : int, optional
        Worker processes. Default: the CPU count; 1 reads in this process.
    progress : callable, optional
        Called as ``progress(done, total, path)`` after each binary.
    policy : Policy or path, optional
        What counts as covered: a ``Policy`` or a TOML policy file (docs/ci.md). The three options below
        add to it.
    sass_only : bool, optional
        A GPU is covered only by SASS (``PTX JIT`` is not covered).
    require_ptx : bool, optional
        Every binary keeps PTX that JIT-compiles on GPUs newer than any it has SASS for.
    allow_partial : iterable of str, optional
        Distributions whose binaries may be ``partial``; given, every other binary that is partial on a
        GPU fails. Default: every binary may be.
    alternatives : iterable of str, optional
        Globs (``fnmatch``) over the paths as reported: the binaries one glob matches are alternatives
        (per-arch builds a package picks from at run time); a GPU is covered when one of them covers it.

    Returns
    -------
    ScanReport

    Raises
    ------
    ValueError
        A GPU or driver spelling is not understood, no GPU is given, ``max_workers`` is not a positive
        int, or a glob is empty or too long; ``PolicyError`` (a ``ValueError``) for a bad policy file.
    FileNotFoundError
        A path given does not exist.

    Examples
    --------
    >>> from cuda_fatbin import Program
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> data = bytes(Program(src, "c++").compile("fatbin", archs=["sm_80", "sm_90"], ptx_for=["sm_90"]).code)
    >>> import pathlib, tempfile
    >>> from cuda_fatbin import scan
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "kernels.fatbin").write_bytes(data)
    >>> for b in scan([folder], gpus="8.6;12.0").binaries:
    ...     print(pathlib.Path(b.path).name, {gpu: row["status"] for gpu, row in b.coverage.items()})
    kernels.fatbin {'8.6': 'SASS compatible', '12.0': 'PTX JIT'}
    >>> scan([folder], gpus="12.0").covered, scan([folder], gpus="12.0", sass_only=True).covered
    (True, False)
    >>> scan(gpus="9.0", driver="13.0").covered  # this Python environment  # doctest: +SKIP
    True
    """
    rules = _policy_of(policy, sass_only, require_ptx, allow_partial)
    globs = check_globs(list(alternatives) if not isinstance(alternatives, str) else [alternatives])
    archs = sorted(set(gpu_list(gpus or [])) | set(gpu_list(rules.gpus or [])))
    if not archs:
        raise ValueError("scan needs at least one GPU (gpus=)")
    parse_driver(driver)
    roots, listing, items, workers = _inputs_of(paths, max_workers, "scan")
    reports: list[BinaryReport] = []
    args = (archs, driver, embedded, rules)

    finished = [0, 0]  # items, binaries read
    skipped = collections.Counter(listing.skipped)
    from ._parts import PartItem, RestItem, RestResult, finish, plan

    parts: dict[int, list[Any]] = {}  # a file searched in parts (_parts): the results of its parts so far
    whole: list[_Item] = []  # files whose parts did not agree: read whole

    def done(job: _Item | PartItem | RestItem, result: Any) -> None:
        if isinstance(job, (PartItem, RestItem)):
            got = parts.setdefault(id(job.item), [])
            got.append(result)
            if len(got) <= job.parts:  # its parts and its rest
                return
            rest = next(r for r in got if isinstance(r, RestResult))
            ordered = sorted((r for r in got if r is not rest), key=lambda r: r.part)
            report = finish(job.item, ordered, rest, archs, driver, rules)
            if report is None:
                whole.append(job.item)
                return
            item, result = job.item, ([report], 1, {})
        else:
            item = job
        reports.extend(result[0])
        finished[0] += 1
        finished[1] += result[1]
        skipped.update(result[2])
        if progress:
            progress(finished[0], len(items), item.path if item.package else item.shown)

    # Ctrl-C or SIGTERM: the workers are killed and the queued files dropped; a worker that died (a file
    # that shrank under a map: SIGBUS) has its files read again each alone, to find the one (_jobs.fan_out)
    fan_out(plan(items, workers, embedded), _job, args, done, workers, _died)
    fan_out(whole, _scan_job, args, done, workers, _died)
    reports = [r for r in reports if r.has_device_code or r.error]
    _attribute(roots, reports)
    gpu_keys = [a.capability for a in archs]
    return ScanReport(gpu_keys, None if driver is None else str(driver), reports, finished[1], dict(skipped),
                      rules, globs)  # fmt: skip


def _policy_of(
    policy: Policy | str | os.PathLike[str] | None, sass_only: bool, require_ptx: bool,
    allow_partial: Iterable[str] | None,
) -> Policy:  # fmt: skip
    """The policy of a ``scan`` call: a file's or the one given, with the keyword options added."""
    from ._policy import load_policy

    if isinstance(allow_partial, str):
        raise TypeError(f"allow_partial must be a list of distribution names; got one name: [{allow_partial!r}]")
    base = policy if isinstance(policy, Policy) else Policy() if policy is None else load_policy(policy)
    extra = Policy(sass_only=sass_only, require_ptx=require_ptx,
                   allow_partial=None if allow_partial is None else frozenset(allow_partial))  # fmt: skip
    return base.merged(extra)


def _job(job: Any, gpus: list[Arch], driver: DriverSpec, embedded: bool, policy: Policy | None = None) -> Any:
    """``scan``'s job: an item's reports (:func:`_scan_job`), or a part of a file or its rest (``_parts``)."""
    from ._parts import PartItem, RestItem, run_part, run_rest

    if isinstance(job, PartItem):
        return run_part(job, gpus, driver)
    if isinstance(job, RestItem):
        return run_rest(job, gpus, driver, policy or Policy())
    return _scan_job(job, gpus, driver, embedded, policy)


def _died(item: Any) -> Any:
    """The error row of an item whose process died twice (``fan_out``); a part's failed search."""
    from ._parts import PartItem, PartResult, RestItem, RestResult

    if isinstance(item, PartItem):
        return PartResult(item.part, error="the process reading it died")
    if isinstance(item, RestItem):
        return RestResult(error="the process reading it died")
    member = item.member.name if item.member else None
    error = "the process reading it died (a file that changed while read?)"
    return [BinaryReport(item.shown, archive=item.path if item.member else None, member=member, error=error)], 0, {}
