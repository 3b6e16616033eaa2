"""Will this environment run on that GPU, with that driver? Audit every binary under some paths.

:func:`scan` walks files, directories and ``.whl``/``.zip`` archives (default: this Python's
site-packages), reads every ELF file, raw fatbin and single cubin it finds (by magic, not by name) with
the pure-Python reader, across processes, and asks :func:`select_entry` what each GPU would load from
each fatbin. Nothing but per-entry metadata leaves a worker; files are memory-mapped, archive members
are read into memory one at a time within :data:`MAX_MEMBER` bytes. See docs/scan.md for the statuses
and for what static inspection cannot know.

Reading side: imports neither the compile side nor cuda.core.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import os
import site
import stat
import sysconfig
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ._arch import Arch, split_arch_list
from ._detect import FATBIN_MAGIC, cubin_has_code
from ._elf import ELF_MAGIC
from ._reader import MAX_STREAM, Fatbin, FatbinFormatError, iter_fatbins
from ._select import parse_driver, select_entry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeAlias

    from ._select import DriverSpec, GpuList

    _Row: TypeAlias = "tuple[tuple[str, str], Fatbin | None]"  # ((status, reason), fatbin)

__all__ = ["STATUSES", "UNCOVERED", "BinaryReport", "ScanReport", "scan"]

#: Per-GPU statuses of a binary, from best to worst (docs/scan.md). ``"no kernels"``: its fatbins hold no
#: code (nvcc's device-link stubs); ``"partial"``: some registered fatbins have code for the GPU and some
#: none (libraries that dispatch per GPU ship such modules). The last two mean the GPU is not covered.
STATUSES = ("no kernels", "SASS exact", "SASS compatible", "PTX JIT", "partial", "needs newer driver", "no entry")
UNCOVERED = ("needs newer driver", "no entry")
#: Largest archive member read (into memory) by :func:`scan`; larger members are reported, not read.
MAX_MEMBER = MAX_STREAM
_RANK = {s: i for i, s in enumerate(STATUSES)}
_ARCHIVES = (".whl", ".zip")


@dataclass
class BinaryReport:
    """What one binary holds and how each GPU would run it.

    Attributes
    ----------
    path : str
        File path, or ``archive.whl!member/path`` inside an archive.
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
        Why the binary could not be read.
    """

    path: str
    distribution: str | None = None
    fatbins: dict[str, int] = field(default_factory=dict)
    entries: dict[str, int] = field(default_factory=dict)
    ptx_isa: list[str] = field(default_factory=list)
    compression: list[str] = field(default_factory=list)
    coverage: dict[str, dict[str, str]] = field(default_factory=dict)
    error: str | None = None

    @property
    def has_device_code(self) -> bool:
        """True when the binary holds any fatbin entry."""
        return bool(self.entries)

    def to_dict(self) -> dict[str, Any]:
        """The JSON record of docs/cli.md (``scan --json``)."""
        return {"path": self.path, "distribution": self.distribution, "fatbins": self.fatbins,
                "entries": self.entries, "ptx_isa": self.ptx_isa, "compression": self.compression,
                "coverage": self.coverage, "error": self.error}  # fmt: skip


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
        Files (and archive members) whose first bytes were looked at.

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

    def uncovered(self, gpu: Arch | str | int) -> list[BinaryReport]:
        """Binaries with device code that ``gpu`` (any spelling) cannot run, in path order."""
        key = Arch.parse(gpu).base.capability
        return [b for b in self.binaries if b.coverage.get(key, {}).get("status") in UNCOVERED]

    @property
    def covered(self) -> bool:
        """True when every binary with device code covers every GPU and every file could be read."""
        return all(not self.uncovered(g) for g in self.gpus) and not any(b.error for b in self.binaries)

    def distributions(self) -> list[dict[str, Any]]:
        """Per distribution: its binaries with device code and, per GPU, the worst status among them."""
        groups: dict[str, list[BinaryReport]] = collections.defaultdict(list)
        for b in self.binaries:
            if b.has_device_code:
                groups[b.distribution or "(no distribution)"].append(b)
        out = []
        for name, items in sorted(groups.items()):
            worst = {}
            for g in self.gpus:
                statuses = [b.coverage[g]["status"] for b in items if g in b.coverage]
                worst[g] = max(statuses, key=_RANK.__getitem__) if statuses else None
            out.append({"distribution": name, "binaries": len(items), "coverage": worst})
        return out

    def to_dict(self) -> dict[str, Any]:
        """The ``scan --json`` document (schema in docs/cli.md)."""
        return {"gpus": self.gpus, "driver": self.driver, "covered": self.covered, "files_read": self.files_read,
                "binaries": [b.to_dict() for b in self.binaries], "distributions": self.distributions()}  # fmt: skip


def default_paths() -> list[str]:
    """This Python environment's site-packages directories (``sysconfig`` and ``site``), existing ones once."""
    found = [sysconfig.get_paths().get(k) for k in ("purelib", "platlib")]
    found += site.getsitepackages() if hasattr(site, "getsitepackages") else []
    out, seen = [], set()
    for p in found:
        if p and os.path.isdir(p) and os.path.realpath(p) not in seen:
            seen.add(os.path.realpath(p))
            out.append(p)
    return out


def _is_binary(head: bytes) -> bool:
    return head[:4] in (ELF_MAGIC, FATBIN_MAGIC)


def _candidates(paths: Iterable[str]) -> Iterator[tuple[str, str | None, int]]:
    """``(path, archive member or None, size)`` of every file whose first bytes say ELF or fatbin.

    Directories are walked without following symlinks, and each real file is read once.
    """
    seen: set[tuple[int, int]] = set()

    def visit(path: str, st: os.stat_result) -> Iterator[tuple[str, str | None, int]]:
        key = (st.st_dev, st.st_ino)
        if key in seen or not stat.S_ISREG(st.st_mode) or st.st_size < 16:
            return
        seen.add(key)
        if path.lower().endswith(_ARCHIVES):
            yield from _archive_members(path)
            return
        try:
            with open(path, "rb") as f:
                head = f.read(4)
        except OSError:
            return
        if _is_binary(head):
            yield path, None, st.st_size

    for root in paths:
        try:
            st = os.stat(root)
        except OSError as e:
            raise FileNotFoundError(e.errno, f"cannot read {root!r}: {e.strerror}") from None
        if not stat.S_ISDIR(st.st_mode):
            yield from visit(root, st)
            continue
        for dirpath, dirs, files in os.walk(root):
            dirs.sort()
            for name in sorted(files):
                p = os.path.join(dirpath, name)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                if not stat.S_ISLNK(st.st_mode):
                    yield from visit(p, st)


def _archive_members(path: str) -> Iterator[tuple[str, str | None, int]]:
    try:
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if info.is_dir() or info.file_size < 16:
                    continue
                try:
                    with zf.open(info) as f:
                        head = f.read(4)
                except (zipfile.BadZipFile, OSError, NotImplementedError, RuntimeError):
                    continue
                if _is_binary(head):
                    yield path, info.filename, info.file_size
    except (zipfile.BadZipFile, OSError):
        return


def _read_member(path: str, member: str) -> bytes:
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(member)
        if info.file_size > MAX_MEMBER:
            raise FatbinFormatError(f"archive member of {info.file_size} bytes is over {MAX_MEMBER}; not read", 0)
        with zf.open(info) as f:
            data = f.read(MAX_MEMBER + 1)
    if len(data) != info.file_size:  # a member that lies about its size
        raise FatbinFormatError(f"archive member holds {len(data)} bytes, its header says {info.file_size}", 0)
    return data


def _signature(fb: Fatbin) -> tuple[tuple[object, ...], ...]:
    return tuple((e.kind, e.arch, e.version, e.compression, e.concatenated) for e in fb.iter_entries())


def _status(fb: Fatbin, gpu: Arch, driver: DriverSpec, cache: dict[object, Any]) -> tuple[str, str]:
    """(status, reason) of one fatbin on one GPU; fatbins with the same entries share one answer."""
    key = (_signature(fb), gpu)
    if key not in cache:
        sel = select_entry(fb, gpu, driver=driver)
        if sel:
            cache[key] = (sel.status, sel.reason)
        elif driver is not None and select_entry(fb, gpu):
            cache[key] = ("needs newer driver", sel.reason)
        else:
            cache[key] = ("no entry", sel.reason)
    found: tuple[str, str] = cache[key]
    return found


def scan_binary(path: str, member: str | None, gpus: list[Arch], driver: DriverSpec, embedded: bool) -> BinaryReport:
    """Read one binary (``member`` of the archive ``path``, if given) and judge it for every GPU."""
    shown = f"{path}!{member}" if member else path
    report = BinaryReport(shown)
    try:
        source = _read_member(path, member) if member else path
        fatbins = list(iter_fatbins(source, embedded=embedded, relocatable=True))
    except (FatbinFormatError, OSError) as exc:
        report.error = f"{type(exc).__name__}: {exc}"
        return report
    kinds: collections.Counter[str] = collections.Counter()
    isa: set[str] = set()
    compression: set[str] = set()
    for fb in fatbins:
        for e in fb.iter_entries():
            kinds[f"{e.kind} {e.arch or 'sm_' + str(e.sm)}"] += 1
            if e.kind == "ptx":
                isa.add(f"{e.version[0]}.{e.version[1]}")
        compression.update(top.compression for top in fb.entries)  # members are stored in their concat entry's
    report.entries = dict(sorted(kinds.items()))
    report.ptx_isa = sorted(isa, key=lambda v: tuple(map(int, v.split("."))))
    report.compression = sorted(compression)
    registered = [fb for fb in fatbins if fb.loadable and not fb.embedded]
    relocatable = [fb for fb in fatbins if fb.relocatable]
    stored = [fb for fb in fatbins if fb.embedded]
    report.fatbins = {"registered": len(registered), "relocatable": sum(fb.relocatable for fb in fatbins),
                      "embedded": len(stored)}  # fmt: skip
    if not kinds:
        return report
    cache: dict[object, Any] = {}
    for gpu in gpus:
        report.coverage[gpu.capability] = _judge_binary(registered, relocatable, stored, gpu, driver, cache)
    return report


def _specialised(fb: Fatbin) -> bool:
    """Every entry is arch- or family-specific (``a``/``f``): code a library calls only on those GPUs."""
    return all(e.arch is not None and e.arch.suffix for e in fb.iter_entries())


def _has_code(fb: Fatbin) -> bool:
    """False for a fatbin whose cubins hold no code and which has no PTX (nvcc's device-link stubs)."""
    if any(e.kind != "elf" for e in fb.iter_entries()):
        return True
    for e in fb.iter_entries():
        try:
            if cubin_has_code(e.data()):
                return True
        except (FatbinFormatError, ValueError):
            return True  # cannot tell: count it
    return False


def _code(fb: Fatbin, cache: dict[object, Any]) -> bool:
    key = ("code", fb.offset)
    if key not in cache:
        cache[key] = _has_code(fb)
    found: bool = cache[key]
    return found


def _judge_binary(
    registered: list[Fatbin],
    relocatable: list[Fatbin],
    stored: list[Fatbin],
    gpu: Arch,
    driver: DriverSpec,
    cache: dict[object, Any],
) -> dict[str, str]:
    """One status per binary and GPU (docs/scan.md).

    Registered fatbins with code must all load (any kernel may be called): the worst counts, and when
    some load and others have no entry at all the binary is ``"partial"``. Specialised fatbins (only
    ``a``/``f`` entries) are used by a library on their GPUs only and are reported beside. Registered
    fatbins that do not fit are served by the runtime's load-time device link when every relocatable
    (``-rdc``) fatbin has an entry for the GPU. Fatbins stored as data are chosen by the library at run
    time: the best of them counts.
    """
    none, driver_bad, ok = _RANK["no entry"], _RANK["needs newer driver"], _RANK["PTX JIT"]

    def rank(row: _Row) -> int:
        return _RANK[row[0][0]]

    notes = []
    own = [(_status(fb, gpu, driver, cache), fb) for fb in registered if not _specialised(fb)]
    stubs = [r for r in own if rank(r) >= driver_bad and not _code(r[1], cache)]
    rows: list[_Row] = [r for r in own if r not in stubs]
    if stubs:
        notes.append(f"{len(stubs)} registered fatbins without code skipped")
    linked = [(_status(fb, gpu, driver, cache), fb) for fb in relocatable if _code(fb, cache)]
    if linked and (not rows or any(rank(r) == none for r in rows)):
        worst: _Row = max(linked, key=rank)
        if rank(worst) <= ok:  # the runtime's load-time device link stands in for what does not fit
            via = (worst[0][0], f"the CUDA runtime links the {len(linked)} relocatable (-rdc) fatbins at load time: "
                                f"{worst[0][1]}")  # fmt: skip
            rows = [(via, fb) if rank(r) == none else r for r, fb in ((r, r[1]) for r in rows)] or [(via, None)]
        else:
            notes.append(f"the load-time link of the {len(linked)} relocatable fatbins cannot serve it either")
    status: str | None = None
    reason = ""
    if rows:
        bad = [r for r in rows if rank(r) == none]
        worst = max(rows, key=rank)
        if rank(worst) == driver_bad or not bad or len(bad) == len(rows):
            status, reason = worst[0]
        else:
            status = "partial"
            reason = (f"{len(rows) - len(bad)} of {len(rows)} registered fatbins load, {len(bad)} have no entry "
                      f"(kernels in those fail if called): {bad[0][0][1]}")  # fmt: skip
        if len(rows) > 1 and status != "partial":
            reason = f"{len(rows)} registered fatbins, the weakest: {reason}"
    special = [(_status(fb, gpu, driver, cache), fb) for fb in registered if _specialised(fb)]
    if special:
        notes.append(f"{sum(rank(r) <= ok for r in special)} of {len(special)} arch-specific fatbins load")
        if status is None:
            (status, reason), _fb = min(special, key=rank)
    if stored:
        srows = [(_status(fb, gpu, driver, cache), fb) for fb in stored]
        (best, why), _fb = min(srows, key=rank)
        notes.append(
            f"{sum(rank(r) <= ok for r in srows)} of {len(srows)} fatbins stored as data load ({best} at best)"
        )
        if status is None or _RANK[best] < _RANK[status]:
            status, reason = best, f"a fatbin stored as data: {why}"
    if status is None:
        status, reason = ("no kernels", "its fatbins hold no code") if stubs else ("no entry", "no fatbin")
    return {"status": status, "reason": "; ".join([reason, *notes])}


def _distribution_index(paths: list[str]) -> dict[str, str]:
    """Real path of each installed file -> ``"name version"``, from the distributions' RECORD files."""
    from importlib import metadata

    index: dict[str, str] = {}
    for dist in metadata.distributions(path=paths):
        try:
            files = dist.files or ()
            label = f"{dist.metadata['Name']} {dist.version}"
        except Exception:  # a broken RECORD or METADATA: no owner known for its files
            continue
        for f in files:
            name = f.name
            if ".so" in name or name.endswith((".o", ".fatbin", ".cubin", ".dll", ".dylib")) or "." not in name:
                index[os.path.realpath(f.locate())] = label
    return index


def _wheel_distribution(path: str) -> str | None:
    parts = Path(path).name.split("-")
    return f"{parts[0]} {parts[1]}" if path.lower().endswith(".whl") and len(parts) >= 5 else None


def scan(
    paths: Iterable[str | os.PathLike[str]] | None = None,
    *,
    gpus: GpuList,
    driver: DriverSpec = None,
    embedded: bool = True,
    max_workers: int | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> ScanReport:
    """Audit binaries for the GPUs ``gpus`` and (optionally) a driver.

    Parameters
    ----------
    paths : iterable of paths, optional
        Files, directories (walked, symlinks not followed) and ``.whl``/``.zip`` archives (read in
        place). Default: this Python environment's site-packages.
    gpus : str or iterable
        Compute capabilities in any spelling: ``"75;80;86;89;90;100;120"`` or ``["8.0", "sm_90"]``.
    driver : str, int or tuple, optional
        As for :func:`select_entry`: limits PTX JIT and decompression to what that driver can do.
    embedded : bool, optional
        Also find fatbins stored as data (``iter_fatbins(..., embedded=True)``). Default: True.
    max_workers : int, optional
        Worker processes. Default: the CPU count; 1 reads in this process.
    progress : callable, optional
        Called as ``progress(done, total, path)`` after each binary.

    Returns
    -------
    ScanReport

    Raises
    ------
    ValueError
        A GPU or driver spelling is not understood, or ``max_workers`` is not a positive int.
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
    >>> scan(gpus="9.0", driver="13.0").covered  # this Python environment  # doctest: +SKIP
    True
    """
    specs = split_arch_list(gpus) if isinstance(gpus, str) else list(gpus)
    archs = sorted({Arch.parse(g).base for g in specs})
    if not archs:
        raise ValueError("scan needs at least one GPU (gpus=)")
    parse_driver(driver)
    if max_workers is not None and (not isinstance(max_workers, int) or isinstance(max_workers, bool)
                                    or max_workers < 1):  # fmt: skip
        raise ValueError(f"max_workers must be a positive int; got {max_workers!r}")
    roots = [os.fspath(p) for p in paths] if paths is not None else default_paths()
    items = sorted(_candidates(roots), key=lambda c: -c[2])  # largest first: the pool's tail holds small files
    workers = max_workers or os.cpu_count() or 1
    reports: list[BinaryReport] = []
    args = (archs, driver, embedded)
    if workers == 1 or len(items) <= 1:
        for i, (p, m, _size) in enumerate(items):
            reports.append(scan_binary(p, m, *args))
            if progress:
                progress(i + 1, len(items), reports[-1].path)
    else:
        with cf.ProcessPoolExecutor(max_workers=min(workers, len(items))) as pool:
            futures = [pool.submit(scan_binary, p, m, *args) for p, m, _size in items]
            for i, f in enumerate(cf.as_completed(futures)):
                reports.append(f.result())
                if progress:
                    progress(i + 1, len(items), reports[-1].path)
    reports = [r for r in reports if r.has_device_code or r.error]
    index = _distribution_index(roots) if any("!" not in r.path for r in reports) else {}
    for r in reports:
        archive, sep, _member = r.path.partition("!")
        r.distribution = _wheel_distribution(archive) if sep else index.get(os.path.realpath(r.path))
    reports.sort(key=lambda r: r.path)
    gpu_keys = [a.capability for a in archs]
    return ScanReport(gpu_keys, None if driver is None else str(driver), reports, len(items))
