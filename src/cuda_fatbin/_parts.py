# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""A large file searched in parts by several workers: ``scan``'s fatbins stored as data, found and judged per part.

A library may hold tens of thousands of fatbins stored as data (libcufft.so.11: 24,454 in 280 MB): one worker
searching it alone keeps the others idle when there are few inputs. Such a file's searched bytes are then cut
into slices (:class:`cuda_fatbin._reader.SearchPart`), each searched and judged by a worker of its own: its
fatbins are counted (``_scan._Tally``) and put in classes of one answer per GPU (``_select._classes``), which
add up in file order. The parts are checked to give what one search gives (no part found a fatbin inside one
that a part before it had found, and the failed candidates they charged stay within the whole search's
budget); the rest of the report (the registered fatbins, the judgement, the kernels) is made from the file
once all its parts are in. A part that fails, or a check that does not hold, has the file read whole, as
without parts: the report is the same either way.
"""

from __future__ import annotations

import collections
import errno
from dataclasses import dataclass, field

from ._arch import Arch
from ._container import _entry_base
from ._gate import _named, _registered
from ._inputs import _error, _Item, _opened, _stamp
from ._nvidia import support_gap
from ._payload import UNDECIDED, row_mismatch
from ._policy import Policy
from ._reader import SearchPart, iter_fatbins, iter_part, iter_part_rows, search_sizes, stored_fatbin
from ._select import (
    _classes,
    _mismatches,
    _signature,
    driver_needs,
    judge_classes,
    judge_own,
    parse_driver,
    with_stored,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ._container import _Row
    from ._reader import Fatbin, Stored
    from ._scan import BinaryReport
    from ._select import DriverSpec, _Own

#: Entry kinds a driver loads (LTO-IR, Tile IR and index entries it does not: RULES["ignored_kinds"]).
_LOADED = ("elf", "ptx", "reloc")
#: An ELF file whose searched bytes outside its registered sections are this large (or larger) is searched in parts
#: (two per worker, one per PART_SIZE of those bytes at most) while there are fewer inputs than 4 per worker.
PART_SIZE = 32 << 20
_FEW = 4


@dataclass
class _Tally:
    """What a binary's report counts of its fatbins: of every entry's header fields, how many; what the loaded
    ones need of a driver; the compressions; the fatbins of each kind. Those of a file's parts add up."""

    fields: collections.Counter[tuple[Any, ...]] = field(default_factory=collections.Counter)
    needs: dict[str, tuple[int, int]] = field(default_factory=dict)
    compression: set[str] = field(default_factory=set)
    fatbins: collections.Counter[str] = field(default_factory=collections.Counter)

    def add(self, other: _Tally) -> None:
        self.fields.update(other.fields)
        for rule, cuda in other.needs.items():
            self.needs[rule] = max(self.needs.get(rule, cuda), cuda)
        self.compression |= other.compression
        self.fatbins.update(other.fatbins)


def _tally(
    fatbins: list[Any],
    signatures: list[tuple[object, ...]] | None = None,
    made: Callable[[Any], Fatbin] | None = None,
) -> _Tally:
    """The tally of ``fatbins``, counted by signature first (``_select._signature``, or given in ``signatures``:
    fatbins of one signature have the same entries, compressions and kind) and weighed by one fatbin of each: a
    library holds 24,454 fatbins of a few dozen signatures (``driver_needs`` reads only kind, version, compression
    and concatenation: all in the key). Items that are not :class:`Fatbin` (a part's fatbins as found:
    ``_reader.Stored``) are ``made`` into one, one per signature."""
    if signatures is None:
        signatures = [_signature(fb) for fb in fatbins]
    out = _Tally()
    one_of = dict(zip(signatures, fatbins, strict=True))
    examples: dict[tuple[Any, ...], Any] = {}
    for signature, n in collections.Counter(signatures).items():
        fb = one_of[signature] if made is None else made(one_of[signature])
        for e in fb.iter_entries():
            key = (e.kind, e.arch, e.sm, e.version, e.compression, e.concatenated)
            out.fields[key] += n
            examples.setdefault(key, e)
        out.compression.update(top.compression for top in fb.entries)  # members: their concat entry's
        out.fatbins.update(registered=n * (fb.loadable and not fb.embedded), relocatable=n * fb.relocatable,
                           embedded=n * fb.embedded)  # fmt: skip
    for key, e in examples.items():
        if key[0] in _LOADED:
            for rule, cuda in driver_needs(e).items():
                out.needs[rule] = max(out.needs.get(rule, cuda), cuda)
    return out


def _tallied(report: BinaryReport, tally: _Tally) -> None:
    """Fill ``report``'s counts from ``tally``, named once per distinct header value."""
    kinds: collections.Counter[str] = collections.Counter()
    isa: set[str] = set()
    for (kind, arch, sm, version, *_), n in tally.fields.items():
        kinds[f"{kind} {arch or 'sm_' + str(sm)}"] += n
        if kind == "ptx":
            isa.add(f"{version[0]}.{version[1]}")
    report.entries = dict(sorted(kinds.items()))
    report.ptx_isa = sorted(isa, key=lambda v: tuple(map(int, v.split("."))))
    report.compression = sorted(tally.compression)
    report.needs = {rule: f"{v[0]}.{v[1]}" for rule, v in sorted(tally.needs.items())}
    report.fatbins = {k: tally.fatbins[k] for k in ("registered", "relocatable", "embedded")}


@dataclass
class PartItem:
    """Part ``part`` of ``parts`` of the search of ``item``'s file: a job of its own."""

    item: _Item
    part: int
    parts: int


@dataclass
class PartResult:
    """What a part's worker found: where its search began and ended (:class:`SearchPart`), its tally and classes."""

    part: int
    first: int | None = None
    resume: int = 0
    spent: int = 0
    budget: int = 0
    stamp: tuple[int, ...] = ()
    error: str | None = None
    tally: _Tally = field(default_factory=_Tally)
    classes: list[Any] = field(default_factory=list)
    value: Any = None


@dataclass
class RestItem:
    """The fatbins of ``item``'s file other than those stored as data (registered, relocatable): read and judged
    by a worker of their own beside the file's ``parts`` parts, so that :func:`finish` only adds up."""

    item: _Item
    parts: int


@dataclass
class RestResult:
    """What :func:`run_rest` gives: the file's stamp, its tally, whether it has registered fatbins that count
    (``_gate._registered``), what they say of each GPU (``_select.judge_own``; None: that failed, and
    :func:`finish` judges the file itself), and the kernels, PTX gap and JIT-only GPUs of ``_scan._gated`` if
    the GPUs' statuses are ``decided`` (``gated``: None where some GPU's is not). ``error``: it could not be
    read (the file is then read whole)."""

    stamp: tuple[int, ...] = ()
    error: str | None = None
    tally: _Tally = field(default_factory=_Tally)
    registered: bool = False
    own: dict[str, _Own] | None = None
    decided: dict[str, str] = field(default_factory=dict)
    gated: tuple[dict[str, dict[str, Any]], str | None, list[str]] | None = None


def plan(items: list[_Item], workers: int, embedded: bool) -> list[_Item | PartItem | RestItem]:
    """The jobs of ``items``: each, or the parts of each large ELF file while the inputs are few, and then a
    :class:`RestItem` per file searched in parts. Largest first (an item's size, a part's share of its file's
    searched bytes: a part costs about as much per byte as a whole file), so that the last jobs are short."""
    if not embedded or workers < 2 or len(items) >= _FEW * workers:
        return list(items)
    jobs: list[tuple[int, _Item | PartItem]] = []
    rest: list[_Item | PartItem | RestItem] = []
    for item in items:
        parts, sizes = 0, (0, 0)
        if item.size >= 2 * PART_SIZE and item.member is None and not item.package and item.error is None:
            sizes = _searched(item)
            parts = _part_count(sizes, workers)
        if parts < 2:
            jobs.append((item.size, item))
        else:
            jobs.extend((sizes[0] // parts, PartItem(item, k, parts)) for k in range(parts))
            rest.append(RestItem(item, parts))
    jobs.sort(key=lambda job: -job[0])  # stable: a file's parts stay in order
    return [job for _, job in jobs] + rest


def _searched(item: _Item) -> tuple[int, int]:
    """:func:`~cuda_fatbin._reader.search_sizes` of ``item`` ((0, 0) where it cannot be read: read whole, its error
    is reported there)."""
    try:
        with _opened(item.path, item.identity, item.follow) as source:
            return search_sizes(source)
    except (OSError, ValueError):
        return 0, 0


def _part_count(sizes: tuple[int, int], workers: int) -> int:
    """How many parts a file whose search reads ``sizes[0]`` bytes outside its registered sections of ``sizes[1]``
    bytes is searched in: two per worker, one per :data:`PART_SIZE` of those bytes at most, and few enough that the
    registered fatbins, which every part reads again (and the final read once more), cost at most what the search
    costs: (parts - 1) x registered <= searched. Fewer than 2: read whole."""
    searched, registered = sizes
    parts = min(2 * workers, searched // PART_SIZE) if workers > 1 else 0
    return min(parts, 1 + searched // registered) if registered else parts


def _search(path: str, identity: tuple[int, int], follow: bool, out: PartResult, parts: int,
            relocatable: bool | None = True, lean: bool = False) -> list[Any]:  # fmt: skip
    """The fatbins part ``out.part`` of ``parts`` of the search of a file finds (with ``lean``, as found:
    ``_reader.iter_part_rows``); ``out`` gets where it began and ended and the file's stamp. Raises as the reader
    does, and OSError for a file that changed meanwhile."""
    part = SearchPart(out.part, parts)
    try:
        with _opened(path, identity, follow) as source:
            out.stamp = _stamp(source)
            search = iter_part_rows if lean else iter_part
            fatbins = list(search(source, part, relocatable=relocatable))
            if _stamp(source) != out.stamp:
                raise OSError(errno.EIO, "the file changed while it was read", path)
    finally:
        out.first, out.resume, out.spent, out.budget = part.first, part.resume, part.spent, part.budget
    return fatbins


def _others(
    path: str, identity: tuple[int, int], follow: bool, results: list[PartResult], relocatable: bool | None = True
) -> list[Fatbin] | None:
    """The fatbins of a file searched in parts other than those stored as data (registered, relocatable), or None
    where the parts did not agree (:func:`agree`) or the file is not what they read (rewritten since, or between
    them: its stamp), or it cannot be read again."""
    if not agree(results):
        return None
    try:
        with _opened(path, identity, follow) as source:
            if any(r.stamp != _stamp(source) for r in results):  # rewritten since (or between) the parts
                return None
            others = list(iter_fatbins(source, relocatable=relocatable))  # the registered (and -rdc) fatbins
            if any(r.stamp != _stamp(source) for r in results):
                return None
    except (OSError, ValueError, MemoryError, RecursionError):
        return None
    return others


#: :func:`_row_signature`'s part of each distinct entry header (kind, SM, version, flags), and the signature of a
#: fatbin of that one entry: bounded, emptied at 4096
_ROW_KEYS: dict[tuple[int, ...], tuple[tuple[object, ...], tuple[object, ...]]] = {}


def _row_signature(rows: list[_Row]) -> tuple[object, ...]:
    """``_select._signature`` of the fatbin stored as data whose entry headers (none concatenated) are ``rows``
    (``_reader._rows``), read from them: the fields its entries would get come from the same function
    (``_container._entry_base``)."""
    keys = []
    for row in rows:
        raw = row[1:6]  # kind, SM, version (major, minor), flags: what the entry's fields are made of
        known = _ROW_KEYS.get(raw)
        if known is None:
            if len(_ROW_KEYS) >= 4096:
                _ROW_KEYS.clear()
            base = _entry_base(*raw)
            a: Arch | None = base["arch"]  # type: ignore[assignment]
            key = (base["kind"], row[2], base["version"], row[10], a and (a.major, a.minor, a.suffix))
            known = _ROW_KEYS[raw] = (key, (False, True, *key))
        if len(rows) == 1:
            return known[1]
        keys.append(known[0])
    return (False, True, tuple(row[10] for row in rows), *((*key, False) for key in keys))


def _stored_mismatches(found: Stored, read: tuple[int, ...]) -> tuple[object, ...]:
    """``_select._mismatches`` of a fatbin as a part's search found it (``_reader.Stored``), read from its entry
    headers (``_payload.row_mismatch``) where their first bytes tell, else from the :class:`Fatbin` made of it."""
    if not read:
        return ()
    src, rows = found[0], found[4]
    if not isinstance(rows, list):
        return _mismatches(rows, read)
    said = []
    for i in read:
        verdict = row_mismatch(src, rows[i])
        if verdict is UNDECIDED:
            return _mismatches(stored_fatbin(found), read)
        said.append(verdict)
    return tuple(said)


def run_part(job: PartItem, gpus: list[Arch], driver: DriverSpec) -> PartResult:
    """Search and judge one part (in a worker); never raises for what it reads (``error`` says what failed)."""
    out = PartResult(job.part)
    try:
        found = _search(job.item.path, job.item.identity, job.item.follow, out, job.parts, lean=True)
        cuda = parse_driver(driver)
        # once for both; a fatbin's objects are made only where it is judged or counted for its signature
        signatures = [_row_signature(f[4]) if type(f[4]) is list else _signature(f[4]) for f in found]
        runs = [gpu for gpu in gpus if support_gap(gpu, cuda) is None]
        out.classes = _classes(found, runs, driver, signatures, _stored_mismatches, stored_fatbin)
        out.tally = _tally(found, signatures, stored_fatbin)
    except (OSError, ValueError, MemoryError, RecursionError) as exc:
        out.error = _error(exc)
    return out


def agree(results: list[PartResult]) -> bool:
    """Do the parts (all of them, in order) give what one search of the file gives (:class:`SearchPart`)?"""
    if any(r.error is not None for r in results) or sum(r.spent for r in results) > results[0].budget:
        return False
    resume = results[0].resume
    for r in results[1:]:
        if r.first is not None and r.first < resume:  # found inside a fatbin of the parts before
            return False
        resume = max(resume, r.resume)
    return True


def run_rest(job: RestItem, gpus: list[Arch], driver: DriverSpec, policy: Policy) -> RestResult:
    """Read and judge the fatbins of a file searched in parts other than those stored as data (in a worker);
    never raises for what it reads."""
    from ._scan import BinaryReport, _gated  # it imports this module

    out = RestResult()
    item = job.item
    try:
        with _opened(item.path, item.identity, item.follow) as source:
            out.stamp = _stamp(source)
            others = list(iter_fatbins(source, relocatable=True))  # the registered (and -rdc) fatbins
            if _stamp(source) != out.stamp:
                raise OSError(errno.EIO, "the file changed while it was read", item.path)
        out.tally = _tally(others)
    except (OSError, ValueError, MemoryError, RecursionError) as exc:
        out.error = _error(exc)
        return out
    out.registered = bool(_registered(others))
    try:
        own = judge_own(others, gpus, driver)
        out.decided = {gpu: mine[0] for gpu, mine in own.items() if mine[0] is not None}
        if len(out.decided) == len(own):  # what the fatbins stored as data add cannot change a status
            report = BinaryReport(item.shown, coverage={gpu: {"status": s} for gpu, s in out.decided.items()})
            _gated(report, others, gpus, driver, policy)
            out.gated = report.kernels, report.ptx_gap, report.jit_only
        out.own = own
    except (ValueError, MemoryError, RecursionError):
        out.own = None  # judged again by finish, which reports the error
    return out


def finish(
    item: _Item, results: list[PartResult], rest: RestResult, gpus: list[Arch], driver: DriverSpec, policy: Policy
) -> BinaryReport | None:
    """The report of a file searched in parts, from its parts and its :class:`RestResult`, or None when it must be
    read whole (``agree`` fails, the parts and the rest did not read the same file, it cannot be read again, or
    the kernels or PTX the policy asks about lie in fatbins stored as data). What the rest could not decide alone
    is judged here, from the file read again."""
    if rest.error is not None or not agree(results) or any(r.stamp != rest.stamp for r in results):
        return None
    tally = rest.tally
    classes: list[Any] = []
    for r in results:
        tally.add(r.tally)
        classes += r.classes
    from ._scan import BinaryReport, _gated  # it imports this module

    report = BinaryReport(item.shown)
    _tallied(report, tally)
    others: list[Fatbin] | None = None
    try:
        if rest.own is None:  # judging failed in the worker: again here, for its error
            others = _others(item.path, item.identity, item.follow, results)
            if others is None:
                return None
            report.coverage = judge_classes(others, classes, gpus, driver) if tally.fields else {}
        else:
            report.coverage = with_stored(rest.own, classes, gpus) if tally.fields else {}
        asked = _asked(report, policy)
        if not rest.registered and asked:
            return None  # the kernels and PTX that count are those of the fatbins stored as data
        if not asked:  # no kernels to name, no PTX gap, no JIT-only GPU: _gated reads no fatbin
            return report
        if others is None and rest.gated is not None and rest.decided == _statuses(report):
            report.kernels, report.ptx_gap, report.jit_only = rest.gated
            return report
        others = others if others is not None else _others(item.path, item.identity, item.follow, results)
        if others is None:
            return None
        _gated(report, others, gpus, driver, policy)
    except (ValueError, MemoryError, RecursionError) as exc:
        report.error = _error(exc)
    return report


def _asked(report: BinaryReport, policy: Policy) -> bool:
    """Does ``policy`` ask ``_scan._gated`` about the fatbins of a binary judged in ``report`` (the kernels a GPU
    cannot load, the PTX for newer GPUs, the modules loaded by JIT only)?"""
    named = any(_named(row["status"], policy) for row in report.coverage.values())
    return policy.require_ptx or policy.sass_only or named


def _statuses(report: BinaryReport) -> dict[str, str]:
    return {gpu: row["status"] for gpu, row in report.coverage.items()}


@dataclass
class ListItem:
    """Part ``part`` of ``parts`` of the search of the file ``path`` for a listing (``inspect``): what ``make``
    gives of its fatbins comes back (``make`` runs in a worker: a module-level function)."""

    path: str
    identity: tuple[int, int]
    part: int
    parts: int
    relocatable: bool | None
    make: Callable[[list[Fatbin]], Any]


def list_part(job: ListItem) -> PartResult:
    """Search one part of a file and give ``job.make`` of its fatbins (``value``); never raises for what it reads."""
    out = PartResult(job.part)
    try:
        out.value = job.make(_search(job.path, job.identity, True, out, job.parts, job.relocatable))
    except (OSError, ValueError, MemoryError, RecursionError) as exc:
        out.error = _error(exc)
    return out


def listed_in_parts(
    path: str, relocatable: bool | None, make: Callable[[list[Fatbin]], Any], workers: int
) -> tuple[list[Fatbin], list[Any]] | None:
    """The fatbins of the ELF file ``path`` other than those stored as data, read here, and ``make`` of those stored
    as data, per part, read in parts by ``workers`` processes; None where that does not pay (one worker, little to
    search, not an ELF file) or the parts do not agree (:func:`agree`): then the file is read whole."""
    from ._files import identity, stat_path
    from ._jobs import fan_out

    try:
        listed = identity(stat_path(path))
        with _opened(path, listed, True) as source:
            parts = _part_count(search_sizes(source), workers)
    except (OSError, ValueError):
        return None
    if parts < 2:
        return None
    jobs = [ListItem(path, listed, k, parts, relocatable, make) for k in range(parts)]
    got: dict[int, PartResult] = {}
    fan_out(jobs, list_part, (), lambda job, r: got.__setitem__(job.part, r), workers,
            lambda job: PartResult(job.part, error="the process reading it died"))  # fmt: skip
    results = [got[k] for k in range(parts)]
    others = _others(path, listed, True, results, relocatable)
    return None if others is None else (others, [r.value for r in results])
