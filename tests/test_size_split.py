# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""One large file measured by several processes (``_size_split``): the report is the one process's, byte for byte,
whatever the helpers do (die, take nothing, fall behind), and no helper outlives the call."""

from __future__ import annotations

import collections
import json
import os
import sys
from typing import TYPE_CHECKING

import pytest

from cuda_fatbin import _size, _size_split
from cuda_fatbin._size import size
from test_size import _build

from elf_testing import make_elf
from fatbin_testing import TAKE_SIGTERM_IN_A_FINALIZER

if TYPE_CHECKING:
    from cuda_fatbin._reader import Fatbin
    from cuda_fatbin._size import BinarySize

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="helpers are forked on Linux only")


def _fatbin(artifacts, specs, ptx=(), mode="none", tag="") -> bytes:
    return _build(artifacts, specs, ptx, mode, tag)  # (no PTX unless asked)


@pytest.fixture(scope="module")
def host_file(artifacts, tmp_path_factory):
    """A host ELF file: two registered fatbins, a relocatable one, and 300 stored as data (each of 5 stored 60
    times: duplicates), between bytes that hold no fatbin."""
    registered = _fatbin(artifacts, ["sm_75", "sm_80"], ["sm_90"]) + _fatbin(artifacts, ["sm_90"], mode="balance")
    stored = [_fatbin(artifacts, specs, ptx, mode, tag) for specs, ptx, mode, tag in [
        (["sm_80"], (), "none", "a"), (["sm_90"], ["sm_90"], "speed", "b"), (["sm_75", "sm_90"], (), "balance", "c"),
        ([], ["sm_80"], "none", "d"), (["sm_80"], (), "none", "e")]]  # fmt: skip
    data = b"".join(b"host code %03d".ljust(24) % i + stored[i % len(stored)] for i in range(300))
    elf = make_elf([(".nv_fatbin", 1, registered), ("__nv_relfatbin", 1, _fatbin(artifacts, ["sm_80"])),
                    (".rodata", 1, data)])  # fmt: skip
    path = tmp_path_factory.mktemp("split") / "libhost.so"
    path.write_bytes(elf)
    return path


def _report(path, workers: int, **kw) -> str:
    """The JSON document, and every row of each binary in order (payload rows: which copy comes first)."""
    return _report_of(size([path], max_workers=workers, **kw))


def _report_of(report) -> str:
    rows = [(b.payloads, b.copies, sorted(b.entries.items()), sorted(b.kernels.items())) for b in report.binaries]
    return json.dumps([report.to_dict(), rows], sort_keys=True)


_FORKED: list[int] = []  # the helpers' process ids


@pytest.fixture
def forks(monkeypatch):
    """The ids of the processes forked (the helpers) are kept for ``_no_child_left``; helpers are forked although
    this process may hold other tests' threads (``helpers_for`` forks none then: the helpers run this module's code
    only, which takes no lock such a thread may hold)."""
    fork = os.fork
    _FORKED.clear()
    monkeypatch.setattr(os, "fork", lambda: _FORKED.append(fork()) or _FORKED[-1])
    monkeypatch.setattr(
        _size, "helpers_for", lambda size, workers: max(0, min(workers - 1, size // _size_split._PER_HELPER))
    )


def test_no_helper_is_forked_beside_other_threads():
    """A fork copies the locks other threads hold (an import, a log): with a thread alive, one process measures."""
    import threading

    assert _size_split.helpers_for(100 << 20, 2) in (0, 1)  # 0 where another test left a thread
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert _size_split.helpers_for(100 << 20, 2) == 0
    finally:
        stop.set()
        thread.join()


@pytest.fixture(params=["parts", "records"])
def mode(request, monkeypatch):
    """``parts``: the search cut in parts, each searched and measured by one process (an ELF file); ``records``:
    the search in this process, the fatbins it finds measured by all (any file, and the fallback of ``parts``)."""
    if request.param == "records":
        monkeypatch.setattr(_size, "measure_parts", lambda *args: False)
    return request.param


@pytest.fixture
def split(monkeypatch, forks):
    """Every file is split (not only those of 16 MiB a helper); per merge, the marks each process sent."""
    monkeypatch.setattr(_size_split, "_PER_HELPER", 1)
    merges: list[list[list[tuple[int, int, int]]]] = []
    merge = _size_split._merge

    def recorded(out, got):
        merges.append([marks for marks, _part in got])
        merge(out, got)

    monkeypatch.setattr(_size_split, "_merge", recorded)
    return merges


def _no_child_left() -> None:
    """Every helper forked has ended and was waited for (no zombie, nothing running)."""
    assert _FORKED
    for pid in _FORKED:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


@pytest.mark.parametrize("kw", [{}, {"drop": ["sm_80"], "recompress": "speed"}, {"keep_ptx_for": ["compute_90"]}])
def test_helpers_give_the_report_of_one_process(host_file, split, mode, kw):
    one = _report(host_file, 1, **kw)
    assert split == []  # one worker: no helper
    for workers in (2, 4):
        split.clear()
        assert _report(host_file, workers, **kw) == one
        [sent] = split  # one merge: the parts agreed (else the file is read again whole)
        assert len(sent) == workers + (mode == "parts")  # each process's part (and the sum the parts go into)
        indexes = [i for marks in sent for i, _p, _c in marks]
        assert len(indexes) == len(set(indexes)) == 303  # each fatbin measured once
    _no_child_left()
    doc = json.loads(one)[0]
    assert doc["totals"]["sections"]["data"] and doc["totals"]["sections"]["relocatable"] and doc["duplicates"]


def test_libcurand_split_gives_the_same_report(libcurand_split, forks):
    """The real library (1,760 fatbins, 13 registered, the rest stored as data) as users run it: one worker per CPU,
    which share its fatbins once it is 16 MiB a helper or more."""
    path, one = libcurand_split
    assert _size.helpers_for(path.stat().st_size, 2) == 1
    assert _report(path, 2) == one
    _no_child_left()


@pytest.fixture(scope="module")
def libcurand_split(tmp_path_factory):
    import shutil
    import zipfile

    from test_scan import curand_wheel

    dest = tmp_path_factory.mktemp("curand") / "libcurand.so.10"
    with (
        zipfile.ZipFile(curand_wheel.__wrapped__()) as zf,
        zf.open("nvidia/cu13/lib/libcurand.so.10") as src,
        open(dest, "wb") as dst,
    ):
        shutil.copyfileobj(src, dst)
    return dest, _report(dest, 1)


def test_a_helper_that_dies_costs_only_time(host_file, split, mode, monkeypatch):
    """A helper that takes work and dies (a file cut short under it: SIGBUS) without sending it: the parts are
    given up for the whole search, whose fatbins the helper took are measured here."""
    parent = os.getpid()
    units, taken = _size_split._units, _size_split._taken

    def dies(work):
        def helper(queue_r, *args):
            if os.getpid() == parent:
                return work(queue_r, *args)
            os.read(queue_r, 4 * _size_split._RECORD.size)  # some units or fatbins
            os._exit(3)

        return helper

    one = _report(host_file, 1)
    monkeypatch.setattr(_size_split, "_units", dies(units))
    monkeypatch.setattr(_size_split, "_taken", dies(taken))
    assert _report(host_file, 3) == one
    assert [len(marks) > 0 for marks in split[-1]] == [True]  # the last merge: this process's part alone
    _no_child_left()


def test_parts_that_do_not_agree_are_read_whole(host_file, split, monkeypatch):
    """Parts whose searches do not give what one search gives (``_parts.agree``): the file is read whole."""
    from cuda_fatbin import _parts

    asked = []
    monkeypatch.setattr(_parts, "agree", lambda results: asked.append(len(results)) and False)
    assert _report(host_file, 2) == _report(host_file, 1)
    assert asked == [2 * _size_split._PARTS] and len(split) == 1  # asked, then the whole search's merge
    _no_child_left()


def test_a_full_pipe_measures_here(host_file, split, monkeypatch):
    """Helpers that take nothing: once the pipe is full (one page here) this process measures what it finds."""

    def small(fd):
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, 4096)  # 170 records

    def idle(jobs_r, *args):
        os._exit(0)

    one = _report(host_file, 1)
    monkeypatch.setattr(_size, "measure_parts", lambda *args: False)
    monkeypatch.setattr(_size_split, "_grow", small)
    monkeypatch.setattr(_size_split, "_taken", idle)
    assert _report(host_file, 2) == one
    _no_child_left()


def test_a_search_that_fails_ends_the_helpers(host_file, split):
    """The search refuses the file half-way (fatbins that overlap, say): its error, and no helper left."""
    from cuda_fatbin._reader import FatbinFormatError, iter_fatbins
    from cuda_fatbin._size import BinarySize

    def refused():
        for i, fb in enumerate(iter_fatbins(str(host_file), embedded=True, relocatable=True)):
            if i == 150:
                raise FatbinFormatError("the fatbin at 0x40 overlaps the one at 0x0", 0x40)
            yield fb

    with pytest.raises(FatbinFormatError, match="overlaps"):
        _size_split.measure_split(BinarySize(str(host_file)), refused(), str(host_file), None, ((), ()), 3)
    _no_child_left()


def test_a_file_rewritten_in_place_between_its_parts_gives_no_mixed_report(tmp_path, monkeypatch):
    """The file is rewritten in place (another library's bytes) once the fatbins of its sections are measured and
    before its parts are searched: the parts are given up (the file is read whole), never added to the figures of
    the bytes it held before."""
    from cuda_fatbin import _reader
    from cuda_fatbin._size import BinarySize, _measure
    from test_parts import BLOCKS, _fatbin, _sass

    def library(registered: list[int], blocks: int) -> bytes:
        data = b"".join(BLOCKS[k](n) for k, n in [("ptx", 0), ("sass", 1), ("both", 0), ("filler", 7)] * blocks)
        return make_elf([(".nv_fatbin", 1, b"".join(_fatbin(_sass(sm)) for sm in registered)), (".rodata", 1, data)])

    old, new = library([75, 80, 86], 40), library([90], 10)
    path = tmp_path / "lib.so"
    path.write_bytes(old)
    parts_read = []
    iter_part = _reader.iter_part

    def rewritten(source, part, **kw):
        if not parts_read:
            with open(path, "r+b") as f:
                f.truncate(0)
                f.write(new)
        parts_read.append(part)
        return iter_part(source, part, **kw)

    monkeypatch.setattr(_reader, "iter_part", rewritten)
    out = BinarySize(str(path))
    split = _size_split.measure_parts(out, str(path), None, ((), ()), 0)
    assert parts_read  # the parts were searched after the rewrite
    figures = {}
    for name, data in (("old", old), ("new", new)):
        whole = BinarySize(str(path))
        _measure(whole, list(_reader.iter_fatbins(data, embedded=True, relocatable=True)), None, ((), ()))
        figures[name] = whole.device_bytes
    assert not split or out.device_bytes in figures.values(), (out.device_bytes, figures)


_INTERRUPTED = """
import os, sys, time
from cuda_fatbin import _cli, _size_split

_size_split._PER_HELPER = 1  # every file is measured by helpers
parent, units, taken = os.getpid(), _size_split._units, _size_split._taken

def held(work):
    def run(*args):
        if os.getpid() != parent:  # a helper: says it runs, and holds its work
            os.write(1, b"%d\\n" % os.getpid())  # one write: whole beside the other helper's
            time.sleep(120)
        return work(*args)
    return run

_size_split._units, _size_split._taken = held(units), held(taken)
sys.exit(_cli.main(["size", sys.argv[1], "-j", "3", *sys.argv[2:]]))
"""


@pytest.mark.parametrize(
    ("signal_name", "code", "options"),
    [("SIGINT", 130, []), ("SIGTERM", 143, []), ("SIGTERM", 143, ["--no-embedded", "--json"])],
)
def test_an_interrupt_stops_size_of_one_file_on_several_cores_and_its_helpers(host_file, signal_name, code, options):
    """Ctrl-C (SIGINT to the process group; the helpers ignore it) or SIGTERM while the helpers measure: the shell's
    exit code at once, and no helper left running."""
    import signal
    import subprocess

    proc = subprocess.Popen([sys.executable, "-c", _INTERRUPTED, str(host_file), *options], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    try:
        helpers = [int(proc.stdout.readline()) for _ in range(2)]  # both helpers hold their work
        if signal_name == "SIGINT":  # Ctrl-C: to every process of the terminal's group
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == code, proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()
    left = []  # killed and waited for by the process that forked them: gone, not even a zombie
    for pid in helpers:
        try:
            os.kill(pid, signal.SIGKILL)
            left.append(pid)
        except ProcessLookupError:
            pass
    assert left == []


_WAITING = _INTERRUPTED.replace(
    "_size_split._units, _size_split._taken = held(units), held(taken)",
    """_size_split._units, _size_split._taken = held(units), held(taken)
from cuda_fatbin import _jobs
wait = _jobs.wait_readable

def waiting(fd):  # this process has done its own share and waits for a helper's figures: says so
    os.write(1, b"collect\\n")
    _jobs.wait_readable = wait
    return wait(fd)

_jobs.wait_readable = waiting""",
)


@pytest.mark.parametrize("options", [[], ["--no-embedded"]])
def test_an_interrupt_while_size_waits_for_its_helpers_ends_them(host_file, options):
    """SIGTERM while this process waits for a helper's figures (its own share done): that helper is ended too, not
    waited for until it finishes its work (two minutes here)."""
    import signal
    import subprocess

    proc = subprocess.Popen([sys.executable, "-c", _WAITING, str(host_file), *options], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    try:
        lines = [proc.stdout.readline().strip() for _ in range(3)]  # both helpers hold their work; this one waits
        assert sorted(lines)[-1] == "collect", lines
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 143, proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()


_LOST = _INTERRUPTED.replace(
    "_size_split._units, _size_split._taken = held(units), held(taken)",
    TAKE_SIGTERM_IN_A_FINALIZER
    + """_size_split._units, _size_split._taken = held(units), held(taken)
collect = _size_split._collect

def collecting(*args):  # this process has done its own share: a finalizer takes SIGTERM, then it waits
    take_the_signal_in_a_finalizer()
    return collect(*args)

_size_split._collect = collecting""",
)


@pytest.mark.parametrize("options", [[], ["--no-embedded"]])
def test_a_sigterm_whose_exception_a_finalizer_dropped_still_ends_size_and_its_helpers(host_file, options):
    """SIGTERM taken while a finalizer runs (Python prints its exception and drops it), then this process waits for
    a helper's figures: the wait raises it again (``_jobs.check_interrupt``), the helpers are ended, exit 143."""
    import subprocess

    proc = subprocess.run([sys.executable, "-c", _LOST, str(host_file), *options], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert "Exception ignored" in proc.stderr  # the exception was lost where the test says
    assert proc.returncode == 143, proc.stderr


def _hostile_library(registered: bytes, stored: bytes) -> bytes:
    from test_parts import BLOCKS

    data = b"".join(BLOCKS[k](n) for k, n in [("ptx", 0), ("sass", 1), ("both", 0), ("filler", 7)] * 40)
    return make_elf([(".nv_fatbin", 1, registered), (".rodata", 1, data + stored)], e_type=3)


@pytest.mark.parametrize("case", ["broken registered fatbin", "unparsed SASS images"])
def test_helpers_give_the_report_of_one_process_on_hostile_fatbins(tmp_path, split, mode, case):
    """A registered fatbin that cannot be read (the error row of one process, not the figures of the parts alone);
    SASS images that cannot be parsed (counted by whichever process measures them)."""
    from test_parts import BLOCKS, _fatbin, _sass

    bad = _fatbin((2, 80, b"\x7fELF" + b"\xff" * 60))
    registered, stored = (BLOCKS["broken"](3), b"") if case.startswith("broken") else (_fatbin(_sass(80)), bad * 50)
    path = tmp_path / "lib.so"
    path.write_bytes(_hostile_library(registered, stored))
    one = _report(path, 1)
    doc = json.loads(one)[0]
    assert doc["binaries"][0].get("error") if case.startswith("broken") else doc["totals"]["unparsed_images"] == 50
    assert _report(path, 3) == one
    _no_child_left()


def _every_payload_hashed(path) -> tuple[BinarySize, list[Fatbin]]:
    from cuda_fatbin import _reader
    from cuda_fatbin._size import BinarySize, _measure

    fatbins = list(_reader.iter_fatbins(str(path), embedded=True, relocatable=True))
    every = BinarySize(str(path))
    _measure(every, fatbins, None)  # no shapes: every payload hashed, as for a report of several binaries
    return every, fatbins


def _same_duplicates(one: BinarySize, every: BinarySize) -> None:
    """``one`` (payloads hashed where another has their shape) reports the duplicates of ``every`` (all hashed)."""
    from cuda_fatbin._size import SizeReport

    assert [row[1:] for row in one.payloads] == [row[1:] for row in every.payloads]
    digests = collections.Counter((row[0], row[1]) for row in every.payloads)
    for mine, theirs in zip(one.payloads, every.payloads, strict=True):
        assert mine[0] == theirs[0] or (mine[0] is None and digests[theirs[0], theirs[1]] == 1), (mine, theirs)
    assert sum(row[0] is None for row in one.payloads) > 0  # some were not hashed
    assert [(k, n, crc, own) for k, n, crc, _image, own in one.copies] == [c[:3] + c[4:] for c in every.copies]
    mine, theirs = SizeReport([one]), SizeReport([every])
    assert mine.duplicates() == theirs.duplicates() and mine.duplicates()
    assert mine.kernel_duplicates() == theirs.kernel_duplicates()


def test_one_file_hashes_only_the_payloads_that_may_be_duplicates(host_file, split, mode):
    """Measuring one file, a payload is hashed only where another of the file has its shape (stored bytes,
    compression, kind+arch); the duplicates and the kernels compiled twice are those of hashing every payload, in one
    process and shared by helpers."""
    every, _fatbins = _every_payload_hashed(host_file)
    for workers in (1, 2, 4):
        [one] = size([host_file], max_workers=workers).binaries
        _same_duplicates(one, every)
    copy = host_file.parent / "copy.so"
    copy.write_bytes(host_file.read_bytes())
    for workers in (1, 2):
        reports = size([host_file, copy], max_workers=workers).binaries
        assert [b.payloads for b in reports] == [every.payloads] * 2  # several binaries: every payload hashed


def _one_process_per_fatbin(path, fatbins: list[Fatbin]) -> BinarySize:
    """The figures of ``fatbins`` measured by as many processes (each meets one fatbin), merged."""
    from cuda_fatbin._size import BinarySize, _measure_one
    from cuda_fatbin._size_whatif import _removal

    got = []
    for index, fb in enumerate(fatbins):
        part = BinarySize(str(path))
        _measure_one(part, fb, None, _removal((), ()), {})
        got.append(([(index, 0, 0)], part))
    out = BinarySize(str(path))
    _size_split._merge(out, [([], out), *got])
    return out


def test_payloads_of_one_shape_met_by_several_processes_are_hashed_once_merged(host_file):
    """Each fatbin measured by a process of its own (none meets two payloads of one shape): once their figures are
    merged, ``settle`` hashes, from the file, the payloads whose shape another process met."""
    every, fatbins = _every_payload_hashed(host_file)
    out = _one_process_per_fatbin(host_file, fatbins)
    assert all(row[0].startswith("@") for row in out.payloads if len(row) > 4)  # none hashed by the processes
    _size_split.settle(out, str(host_file))
    _same_duplicates(out, every)
    out = _one_process_per_fatbin(host_file, fatbins)
    data = host_file.read_bytes()
    with pytest.raises(ValueError, match="changed since"):  # the file cut short since: no digest of other bytes
        _size_split.settle(out, data[: len(data) // 2])


@pytest.fixture
def twins_far_apart(artifacts, tmp_path):
    """A host ELF file whose one SASS payload is stored twice, in its first fatbin and its last, 40 others between."""
    registered = _fatbin(artifacts, ["sm_80"])
    data = b"".join(b"host %03d".ljust(16) % i + _fatbin(artifacts, [], ["sm_90"], tag=str(i)) for i in range(40))
    elf = make_elf([(".nv_fatbin", 1, registered), (".rodata", 1, data + _fatbin(artifacts, ["sm_80"], tag="z"))])
    path = tmp_path / "libtwins.so"
    path.write_bytes(elf)
    return path


def test_a_file_rewritten_between_the_helpers_and_the_hashing_gives_no_mixed_report(
    twins_far_apart, split, mode, monkeypatch
):
    """The file rewritten in place (same size, other bytes) once the helpers have measured it, before ``settle``
    hashes from it the payloads whose shape another process met: an error row or the report of one reading of the
    file (read again whole), never digests of other bytes beside figures of the first ones."""
    path = twins_far_apart
    data = path.read_bytes()
    one = _report(path, 1)
    settle, hashed = _size_split.settle, []

    def rewritten(out, source):
        if isinstance(source, str):
            lazy = collections.Counter((row[4][0], row[4][1], row[1]) for row in out.payloads if len(row) > 4)
            hashed.append(sum(row[0][0] == "@" and lazy[row[4][0], row[4][1], row[1]] > 1
                              for row in out.payloads if len(row) > 4))  # fmt: skip
            with open(path, "r+b") as f:  # the same file (inode), other bytes
                f.write(os.urandom(len(data)))  # (the twins then differ)
        return settle(out, source)

    monkeypatch.setattr(_size_split, "settle", rewritten)
    for _round in range(10):  # records: which process takes which fatbin is the machine's timing; until one round
        for workers in (2, 3, 4):  # had the twins in two processes (on a busy machine this one may take them all)
            path.write_bytes(data)
            report = size([path], max_workers=workers)
            errors = [b.error for b in report.binaries]
            assert errors == [] or errors[0] or _report_of(report) == one, (workers, errors)
        if mode == "parts" or any(hashed):
            break
    assert mode == "parts" or any(hashed)  # (a payload whose twin another process met was hashed from the file)
    _no_child_left()


def test_settle_refuses_a_payload_cut_short_by_one_byte(host_file):
    """The bytes given to ``settle`` end one byte before the end of the last payload it must hash: an error, not the
    digest of the bytes left."""
    _every, fatbins = _every_payload_hashed(host_file)
    out = _one_process_per_fatbin(host_file, fatbins)
    shapes = collections.Counter((row[4][0], row[4][1], row[1]) for row in out.payloads if len(row) > 4)
    ends = [row[4][2] + row[4][0] for row in out.payloads if len(row) > 4 and shapes[row[4][0], row[4][1], row[1]] > 1]
    data = host_file.read_bytes()
    with pytest.raises(ValueError, match="changed since"):
        _size_split.settle(out, data[: max(ends) - 1])


@pytest.mark.parametrize("modes", [("none", "size"), ("balance", "size")])
def test_one_image_stored_in_two_ways_is_no_payload_duplicate(artifacts, tmp_path, modes):
    """One SASS image stored compressed in two ways (other stored bytes, the same once decompressed), and once more
    as PTX: no payload duplicate, as when every payload is hashed; its kernel is in two images."""
    fatbins = [_fatbin(artifacts, ["sm_80"], ["sm_80"], mode, tag) for mode, tag in zip(modes, "ab", strict=True)]
    path = tmp_path / "libtwo.so"
    path.write_bytes(make_elf([(".nv_fatbin", 1, b"".join(fatbins))]))
    (tmp_path / "empty.bin").write_bytes(b"")
    alone = size([path], max_workers=1)
    every = size([path, tmp_path / "empty.bin"], max_workers=1)  # several inputs: every payload hashed
    [b] = alone.binaries
    [theirs] = [b for b in every.binaries if b.path == str(path)]
    assert len({d for d, key, *_ in theirs.payloads if key == "elf sm_80"}) == 2  # stored in two ways
    assert [d for d, key, *_ in b.payloads if key == "elf sm_80"] == [None, None]
    assert alone.duplicates() == every.duplicates() == []
    assert alone.kernel_duplicates() == every.kernel_duplicates() and alone.kernel_duplicates()[0]["copies"] == 2
    assert alone.to_dict()["totals"] == every.to_dict()["totals"]


_MANY_HELPERS = """
import json
import sys
from cuda_fatbin import _reader, _size_split
from cuda_fatbin._size import BinarySize

started, units = [], []
_size_split._start = lambda children, helpers, inherited, work: started.append(helpers)  # none forked
_reader.search_sizes = lambda path: (1 << 40, 0)  # a file whose search is all its work: cut in parts


def mine(units_r, path, recompress, removed, parts):
    import os
    while data := os.read(units_r, _size_split._UNIT.size):
        units.append(data)
    return [], BinarySize(path), {}


_size_split._units = mine
done = _size_split.measure_parts(BinarySize(sys.argv[1]), sys.argv[1], None, ((), ()), int(sys.argv[2]))
print(json.dumps([done, started, len(units)]))
"""


@pytest.mark.parametrize("helpers", [1, 2100, 20000])
def test_parts_of_one_file_fit_in_their_pipe_however_many_helpers(host_file, helpers):
    """``-j`` in the thousands on a large file (a sparse one is as large as asked): every unit of the search is
    written before a process reads one, so they must fit in the pipe (a write of more waits for ever)."""
    import subprocess

    run = subprocess.run([sys.executable, "-c", _MANY_HELPERS, str(host_file), str(helpers)], capture_output=True,
                         text=True, timeout=60)  # fmt: skip
    assert run.returncode == 0, run.stderr
    _done, started, units = json.loads(run.stdout)
    assert started == [helpers] and 1 < units <= _size_split._MAX_UNITS


def test_parts_are_used_only_while_the_registered_fatbins_hold_up_no_process(host_file, monkeypatch):
    """The registered fatbins are measured by one process (unit 0): a file is cut in parts only while their bytes
    times the helpers are at most the bytes searched outside them; else its fatbins are handed to the helpers one by
    one (``measure_split``), with the same report."""
    from cuda_fatbin import _reader
    from cuda_fatbin._size import BinarySize

    searched, registered = _reader.search_sizes(str(host_file))
    assert 0 < registered < searched
    fits = searched // registered  # helpers the parts pay for
    for helpers, cut in ((fits, True), (fits + 1, False)):
        out = BinarySize(str(host_file))
        assert _size_split.measure_parts(out, str(host_file), None, ((), ()), helpers) is cut
        if not cut:
            assert out.payloads == [] and out.device_bytes == 0  # untouched: the caller measures it otherwise
    monkeypatch.setattr(_size_split, "_PER_HELPER", 1)  # every file is measured by helpers
    assert size([host_file], max_workers=fits + 2).to_dict(top=10**6) == size([host_file], max_workers=1).to_dict(
        top=10**6
    )


@pytest.mark.parametrize("fails", ["fork", "pipe"])
def test_helpers_that_cannot_be_started_leave_the_work_to_those_that_were(host_file, split, mode, monkeypatch, fails):
    """``-j`` beyond what the system gives (processes: EAGAIN; descriptors: EMFILE): the helpers started share the
    work (this process alone, if none), and the report is the one process's, not an error row."""
    import errno

    one = _report(host_file, 1)
    calls = [0]
    real = getattr(os, fails)

    def limited():
        calls[0] += 1
        if calls[0] > (1 if fails == "fork" else 2):  # (a pipe: the work's, then one helper's)
            raise OSError(errno.EAGAIN if fails == "fork" else errno.EMFILE, "no more")
        return real()

    for workers in (2, 4):
        calls[0] = 0
        monkeypatch.setattr(os, fails, limited)
        got = _report(host_file, workers)
        monkeypatch.setattr(os, fails, real)
        assert got == one
    _no_child_left()


def test_parts_are_weighed_by_the_bytes_the_file_holds_not_by_its_bss():
    """The bytes searched outside the registered sections are those the file holds: a ``.bss`` (``SHT_NOBITS``: a
    size, no bytes) of any size neither is searched nor makes the parts look worth their registered fatbins."""
    from cuda_fatbin._reader import search_sizes

    def sizes(bss_type: int) -> tuple[int, int]:
        return search_sizes(make_elf([(".nv_fatbin", 1, b"\0" * 100), (".rodata", 1, b"\1" * 300),
                                      (".bss", bss_type, b"\0" * 5000)]))  # fmt: skip

    held, empty = sizes(1), sizes(8)
    assert held[1] == empty[1] == 100
    assert empty[0] == held[0] - 5000


@pytest.fixture
def descriptors_held():
    """Over 1,024 descriptors open (a program's files, sockets): those opened next are numbered past ``select``'s
    limit (``FD_SETSIZE``)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 1200
    if soft < wanted:
        if hard != resource.RLIM_INFINITY and hard < wanted:
            pytest.skip("too few descriptors allowed")
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        yield held
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_helpers_give_the_report_of_one_process_whatever_their_descriptors_number(
    host_file, split, mode, descriptors_held
):
    """The helpers' pipes numbered past 1,023 (a program that holds many files calls ``size``): the wait for their
    figures takes any descriptor (``select`` refuses those: every file's row was a ValueError)."""
    one = _report(host_file, 1)
    assert _report(host_file, 3) == one
    _no_child_left()
