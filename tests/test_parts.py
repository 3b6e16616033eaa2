# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""A large file searched in parts by several workers gives the report of one search (``_parts``, ``SearchPart``).

The oracle is the whole search: every layout is read both ways, and where the parts cannot tell (a slice that
begins inside a fatbin holding another one), the file is read whole.
"""

from __future__ import annotations

import dataclasses
import os
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuda_fatbin import _parts, _reader, _scan
from cuda_fatbin._arch import Arch
from cuda_fatbin._inputs import _Item
from cuda_fatbin._policy import Policy

from elf_testing import make_elf, patched

_ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")
GPUS = [Arch.parse(g) for g in ("7.5", "8.0", "8.6", "9.0", "10.0", "12.0")]


def _fatbin(*entries: tuple[int, int, bytes]) -> bytes:
    """A version-1 fatbin of ``(kind, sm, payload)`` entries (PTX ISA 8.0, 64-bit, Linux)."""
    body = b"".join(_ENTRY.pack(k, 0x101, 64, len(p), 0, 0, 0, 8, sm, 0, 0, 0x11, 0, 0) + p for k, sm, p in entries)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def _ptx(sm: int) -> tuple[int, int, bytes]:
    text = f".version 8.0\n.target sm_{sm}\n.address_size 64\n.visible .entry k{sm}()\n{{\nret;\n}}\n".encode()
    return 1, sm, text + bytes(8 - len(text) % 8)


def _sass(sm: int) -> tuple[int, int, bytes]:
    image = make_elf([(f".text.k{sm}", 1, bytes(16))], machine=190, flags=sm, e_type=2)
    return 2, sm, image + bytes(-len(image) % 8)


#: What a searched section may hold, one block after another: filler, fatbins, a candidate that fails, and a
#: fatbin whose payload holds another one (found only by a part whose slice begins inside it)
BLOCKS = {
    "filler": lambda n: b"\x01" * n,
    "ptx": lambda n: _fatbin(_ptx((75, 80, 90)[n % 3])),
    "sass": lambda n: _fatbin(_sass((80, 86, 90, 100)[n % 4])),
    "both": lambda n: _fatbin(_sass(80), _ptx(90)),
    "broken": lambda n: struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 1 << 40) + b"\x02" * (n % 64),
    "nested": lambda n: _fatbin((2, 90, b"\x01" * (8 * (n % 50)) + _fatbin(_ptx(120)) + b"\x01" * 64)),
}


def _layout(path, blocks: list[tuple[str, int]], registered: bool, second: bool) -> _Item:
    data = b"".join(BLOCKS[kind](n) for kind, n in blocks)
    sections = [(".rodata", 1, data)]
    if second:  # a second searched section, and bytes that only parts of a larger slice cross
        sections.append((".ldata", 1, data[::-1][: len(data) // 2] + data))
    if registered:
        sections.insert(0, (".nv_fatbin", 1, _fatbin(_sass(80))))
    path.write_bytes(make_elf(sections, e_type=3))
    return _Item(str(path), size=path.stat().st_size, follow=True)


def _both(item: _Item, parts: int, driver=None, policy=None):
    """The report of one search, and that of ``parts`` parts (None where the file must be read whole)."""
    policy = policy or Policy()
    whole = _scan._scan_item(item, GPUS, driver, True, policy)
    results = [_parts.run_part(_parts.PartItem(item, k, parts), GPUS, driver) for k in range(parts)]
    return whole, _parts.finish(item, results, _rest(item, parts, driver, policy), GPUS, driver, policy), results


def _rest(item: _Item, parts: int, driver=None, policy=None) -> _parts.RestResult:
    """What the worker reading the fatbins of ``item`` not stored as data gives (:func:`_parts.run_rest`)."""
    return _parts.run_rest(_parts.RestItem(item, parts), GPUS, driver, policy or Policy())


def _same(a: _scan.BinaryReport, b: _scan.BinaryReport) -> None:
    assert dataclasses.asdict(a) == dataclasses.asdict(b)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    blocks=st.lists(st.tuples(st.sampled_from(sorted(BLOCKS)), st.integers(0, 400)), max_size=24),
    parts=st.integers(2, 7),
    registered=st.booleans(),
    second=st.booleans(),
    driver=st.sampled_from([None, "12.0", "11.4"]),
)
def test_parts_give_the_report_of_one_search(tmp_path, blocks, parts, registered, second, driver):
    item = _layout(tmp_path / "lib.so", blocks, registered, second)
    whole, split, results = _both(item, parts, driver)
    if split is None:  # allowed only where the parts could not tell: a part found a fatbin inside another
        assert not _parts.agree(results) or not registered, blocks
        assert any(kind == "nested" for kind, _ in blocks) or not registered, blocks
        return
    _same(split, whole)


def test_a_slice_beginning_inside_a_fatbin_that_holds_another_is_read_whole(tmp_path):
    # the inner fatbin (PTX sm_120) lies in the payload of the outer: one search skips it, a part whose slice
    # begins before it finds it; then the file is read whole, and 12.0 is not covered by the inner one
    blocks = [("ptx", 0), ("nested", 40)] + [("ptx", 1)] * 20
    item = _layout(tmp_path / "lib.so", blocks, registered=False, second=False)
    outcomes = {}
    for parts in range(2, 17):
        whole, split, results = _both(item, parts)
        outcomes[parts] = _parts.agree(results)
        if split is not None:
            _same(split, whole)
    assert whole.coverage["12.0"]["status"] == "PTX JIT"  # by the sm_90 PTX of the first, not the inner sm_120
    assert not all(outcomes.values()), outcomes  # some cut falls inside the outer fatbin
    assert any(outcomes.values()), outcomes


def test_parts_add_up_to_the_counts_of_one_search(tmp_path):
    blocks = [(kind, n) for n in range(30) for kind in ("ptx", "filler", "sass", "both")]
    item = _layout(tmp_path / "lib.so", blocks, registered=True, second=True)
    whole, split, results = _both(item, 5)
    assert split is not None and _parts.agree(results)
    assert split.fatbins == whole.fatbins == {"registered": 1, "relocatable": 0, "embedded": 180}
    assert sum(r.tally.fatbins["embedded"] for r in results) == 180 and sum(bool(r.tally.fields) for r in results) >= 3
    _same(split, whole)


def test_a_part_that_fails_has_the_file_read_whole(tmp_path):
    item = _layout(tmp_path / "lib.so", [("ptx", 0)] * 50, registered=True, second=False)
    results = [_parts.run_part(_parts.PartItem(item, k, 3), GPUS, None) for k in range(3)]
    rest = _rest(item, 3)
    assert _parts.finish(item, results, rest, GPUS, None, Policy()) is not None
    results[1].error = "OSError: the process reading it died"
    assert _parts.finish(item, results, rest, GPUS, None, Policy()) is None
    results[1].error = None
    results[2].spent = results[0].budget + 1  # more failed candidates than one search may charge
    assert _parts.finish(item, results, rest, GPUS, None, Policy()) is None
    results[2].spent = 0
    assert _parts.finish(item, results, _scan._died(_parts.RestItem(item, 3)), GPUS, None, Policy()) is None


def test_the_kernels_of_fatbins_stored_as_data_have_the_file_read_whole(tmp_path):
    # no registered fatbin: the kernels missing on a GPU, and the PTX a policy requires, are those of the
    # fatbins stored as data, which the parts do not keep
    item = _layout(tmp_path / "lib.so", [("sass", 0)] * 20, registered=False, second=False)
    whole, split, _results = _both(item, 3)
    assert whole.kernels and split is None
    item = _layout(tmp_path / "lib2.so", [("both", 0)] * 20, registered=True, second=False)
    whole, split, _results = _both(item, 3, policy=Policy(require_ptx=True))
    assert split is not None
    _same(split, whole)


def test_only_large_elf_files_among_few_inputs_are_searched_in_parts(tmp_path, monkeypatch):
    monkeypatch.setattr(_parts, "PART_SIZE", 1000)
    big = _layout(tmp_path / "big.so", [("ptx", 0)] * 100, registered=False, second=False)
    small = _layout(tmp_path / "small.so", [("ptx", 0)], registered=False, second=False)
    raw = tmp_path / "raw.fatbin"
    raw.write_bytes(_fatbin(_ptx(80)) * 100)
    other = _Item(str(raw), size=raw.stat().st_size, follow=True)
    registered = tmp_path / "registered.so"  # its fatbins registered: every part would read them all
    registered.write_bytes(make_elf([(".nv_fatbin", 1, _fatbin(_ptx(80)) * 100), (".rodata", 1, b"\x01" * 500)]))
    heavy = _Item(str(registered), size=registered.stat().st_size, follow=True)
    assert heavy.size > 10 * _parts.PART_SIZE and _parts.plan([heavy], 3, True) == [heavy]
    jobs = _parts.plan([big, small, other], 3, True)
    assert [(j.item.path, j.part, j.parts) for j in jobs if isinstance(j, _parts.PartItem)] == [
        (big.path, k, 6) for k in range(6)  # two per worker: a pool balances them
    ]
    assert [j for j in jobs if not isinstance(j, _parts.PartItem)][:2] == [other, small]  # not ELF; too small
    assert jobs[-1] == _parts.RestItem(big, 6)  # the rest of the file searched in parts: a short job, last
    assert _parts.plan([big], 1, True) == [big]  # one worker
    assert _parts.plan([big], 3, False) == [big]  # no search
    assert _parts.plan([big] * 12, 3, True) == [big] * 12  # many inputs: a worker each


@pytest.mark.parametrize(
    ("blocks", "whole"),
    [([("ptx", 0), ("nested", 49)] * 12, True), ([("sass", 3), ("filler", 9)] * 90, False)],
)
def test_scan_with_workers_reports_what_one_process_reports(tmp_path, monkeypatch, blocks, whole):
    monkeypatch.setattr(_parts, "PART_SIZE", 2048)
    _layout(tmp_path / "lib.so", blocks, registered=True, second=True)
    (tmp_path / "small.so").write_bytes(make_elf([(".nv_fatbin", 1, _fatbin(_sass(90)))], e_type=3))
    one = _scan.scan([tmp_path], gpus=GPUS, max_workers=1)
    finished = []
    real = _parts.finish
    monkeypatch.setattr(_parts, "finish", lambda *args: finished.append(real(*args)) or finished[-1])
    many = _scan.scan([tmp_path], gpus=GPUS, max_workers=3)
    assert [dataclasses.asdict(b) for b in many.binaries] == [dataclasses.asdict(b) for b in one.binaries]
    assert many.files_read == one.files_read == 2
    assert len(finished) == 1 and (finished[0] is None) == whole  # searched in parts; read whole where they disagree


def test_a_search_part_is_numbered_within_its_parts():
    with pytest.raises(ValueError, match="numbered from 0"):
        _reader.SearchPart(3, 3)


def test_a_file_rewritten_in_place_after_its_parts_were_searched_gives_the_report_of_what_is_there(tmp_path):
    # same inode, other bytes: the parts found 40 fatbins stored as data in what the file held; the final read
    # finds a file holding one registered fatbin and nothing stored. The report is that file's, never a mix
    item = _layout(tmp_path / "lib.so", [("ptx", 0)] * 40, registered=True, second=False)
    results = [_parts.run_part(_parts.PartItem(item, k, 3), GPUS, None) for k in range(3)]
    assert sum(r.tally.fatbins["embedded"] for r in results) == 40
    with open(item.path, "r+b") as f:  # rewritten in place: the inode the file was listed with
        f.truncate(0)
        f.write(make_elf([(".nv_fatbin", 1, _fatbin(_sass(90)))], e_type=3))
    split = _parts.finish(item, results, _rest(item, 3), GPUS, None, Policy())
    whole = _scan._scan_item(item, GPUS, None, True, Policy())
    assert whole.fatbins == {"registered": 1, "relocatable": 0, "embedded": 0}
    assert split is None or dataclasses.asdict(split) == dataclasses.asdict(whole)


def test_a_file_rewritten_in_place_between_its_parts_is_read_whole(tmp_path):
    # the parts saw two different files (one part before the rewrite, the others after): they do not add up
    item = _layout(tmp_path / "lib.so", [("ptx", 0)] * 40, registered=True, second=False)
    results = [_parts.run_part(_parts.PartItem(item, 0, 3), GPUS, None)]
    data = (tmp_path / "lib.so").read_bytes()
    assert len(_fatbin(_ptx(75))) == len(_fatbin(_ptx(120)))
    listed = os.stat(item.path)
    with open(item.path, "r+b") as f:  # the same size, other fatbins: PTX for sm_120 instead of sm_75
        f.write(data.replace(_fatbin(_ptx(75)), _fatbin(_ptx(120))))
    os.utime(item.path, ns=(listed.st_atime_ns, listed.st_mtime_ns + 10**9))  # a second later
    results += [_parts.run_part(_parts.PartItem(item, k, 3), GPUS, None) for k in (1, 2)]
    split = _parts.finish(item, results, _rest(item, 3), GPUS, None, Policy())
    whole = _scan._scan_item(item, GPUS, None, True, Policy())
    assert whole.entries == {"elf sm_80": 1, "ptx sm_120": 40}
    assert split is None or dataclasses.asdict(split) == dataclasses.asdict(whole)


def test_a_rest_read_after_the_file_was_rewritten_is_not_added_to_its_parts(tmp_path):
    # the parts read the file, then it is rewritten in place (the same size, a second later), then its rest is
    # read: they read two files, and the file is read whole
    item = _layout(tmp_path / "lib.so", [("ptx", 0)] * 40, registered=True, second=False)
    results = [_parts.run_part(_parts.PartItem(item, k, 3), GPUS, None) for k in range(3)]
    data = (tmp_path / "lib.so").read_bytes()
    listed = os.stat(item.path)
    with open(item.path, "r+b") as f:
        f.write(data.replace(_fatbin(_sass(80)), _fatbin(_sass(90))))
    os.utime(item.path, ns=(listed.st_atime_ns, listed.st_mtime_ns + 10**9))
    rest = _rest(item, 3)
    assert rest.error is None and rest.stamp != results[0].stamp
    assert _parts.finish(item, results, rest, GPUS, None, Policy()) is None


@pytest.mark.parametrize(
    ("blocks", "policy"),
    [
        ([("ptx", 0), ("sass", 1)] * 30, Policy()),  # covered where the registered fatbin is not: 7.5 has no kernel
        ([("both", 0)] * 30, Policy(require_ptx=True)),
        ([("ptx", 2)] * 30, Policy(sass_only=True)),
    ],
)
def test_the_rest_of_a_file_is_judged_beside_its_parts_and_finish_reads_no_file(tmp_path, monkeypatch, blocks, policy):
    # the registered fatbins decide every GPU: what the policy asks of them comes from the rest's worker, and the
    # process that adds up the parts opens no file
    item = _layout(tmp_path / "lib.so", blocks, registered=True, second=False)
    whole = _scan._scan_item(item, GPUS, None, True, policy)
    results = [_parts.run_part(_parts.PartItem(item, k, 3), GPUS, None) for k in range(3)]
    rest = _rest(item, 3, None, policy)
    assert rest.gated is not None and len(rest.decided) == len(GPUS)

    def refused(*args, **kwargs):
        raise AssertionError("finish read the file again")

    monkeypatch.setattr(_parts, "_opened", refused)
    split = _parts.finish(item, results, rest, GPUS, None, policy)
    assert split is not None
    _same(split, whole)
    assert whole.kernels or whole.ptx_gap or whole.coverage["7.5"]["status"] == "no entry"


def test_a_file_of_fatbins_stored_as_data_only_that_covers_every_gpu_is_added_up_unread(tmp_path, monkeypatch):
    # no registered fatbin decides a GPU (libcufft): the statuses come from the parts, and nothing is asked of the
    # registered fatbins (no GPU lacks a kernel, no policy rule): the process that adds up opens no file
    item = _layout(tmp_path / "lib.so", [("ptx", 0)] * 30, registered=False, second=False)
    whole = _scan._scan_item(item, GPUS, None, True, Policy())
    results = [_parts.run_part(_parts.PartItem(item, k, 3), GPUS, None) for k in range(3)]
    rest = _rest(item, 3)
    assert rest.decided == {} and not rest.registered
    monkeypatch.setattr(_parts, "_opened", None)  # called: TypeError
    split = _parts.finish(item, results, rest, GPUS, None, Policy())
    assert split is not None and {row["status"] for row in whole.coverage.values()} == {"PTX JIT"}
    _same(split, whole)


def test_a_rest_whose_judgement_failed_in_its_worker_is_judged_again_where_the_parts_add_up(tmp_path, monkeypatch):
    item = _layout(tmp_path / "lib.so", [("sass", 0), ("ptx", 1)] * 20, registered=True, second=False)
    whole = _scan._scan_item(item, GPUS, None, True, Policy())
    results = [_parts.run_part(_parts.PartItem(item, k, 3), GPUS, None) for k in range(3)]
    real = _parts.judge_own

    def failing(*args, **kwargs):
        raise ValueError("no judgement")

    monkeypatch.setattr(_parts, "judge_own", failing)
    rest = _rest(item, 3)
    monkeypatch.setattr(_parts, "judge_own", real)
    assert rest.error is None and rest.own is None and rest.gated is None
    split = _parts.finish(item, results, rest, GPUS, None, Policy())
    assert split is not None
    _same(split, whole)


def test_the_failed_candidates_of_all_parts_count_against_the_budget_of_one_search(tmp_path):
    # 9,000 headers that do not parse: one search charges more than the file's size and refuses it; each of 4
    # parts charges less than that bound, their sum more: the file is read whole, and refused
    item = _layout(tmp_path / "lib.so", [("broken", 0)] * 9000, registered=True, second=False)
    whole, split, results = _both(item, 4)
    assert whole.error is not None and "too many fatbin-like headers" in whole.error
    assert all(0 < r.spent <= r.budget for r in results) and sum(r.spent for r in results) > results[0].budget
    assert split is None


def test_a_fatbin_on_any_cut_is_found_by_one_part_and_the_parts_agree(tmp_path):
    # the fatbins move a byte at a time past the cut between 2 parts (the searched bytes stay as many): the
    # magic before, on and across the cut; the part that finds a fatbin is the one its magic starts in
    size = len(_fatbin(_ptx(80)))
    for shift in range(size):
        blocks = [("filler", 1 + shift), *[("ptx", 1)] * 6, ("filler", size - shift)]
        item = _layout(tmp_path / "lib.so", blocks, registered=True, second=False)
        whole, split, results = _both(item, 2)
        assert sum(r.tally.fatbins["embedded"] for r in results) == 6, shift
        assert _parts.agree(results) and split is not None, shift
        _same(split, whole)


@pytest.mark.parametrize("registered", [500, 100, 20, 0])
def test_the_parts_of_a_file_cost_at_most_twice_one_search(tmp_path, monkeypatch, registered):
    # every part reads the registered fatbins again (to skip them), and the final read once more: a file is cut in
    # no more parts than its bytes to search pay for (PART_SIZE scaled down; fatbins of one size: count = bytes)
    monkeypatch.setattr(_parts, "PART_SIZE", 1024)
    path = tmp_path / "lib.so"
    sections = [(".nv_fatbin", 1, _fatbin(_ptx(80)) * registered), (".rodata", 1, _fatbin(_ptx(90)) * 100)]
    path.write_bytes(make_elf(sections[0 if registered else 1 :], e_type=3))
    item = _Item(str(path), size=path.stat().st_size, follow=True)
    jobs = _parts.plan([item], 4, True)
    parsed = [0]
    real = _reader._parse

    def counting(*args, **kwargs):
        parsed[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(_reader, "_parse", counting)
    assert len(list(_reader.iter_fatbins(str(path), embedded=True, relocatable=True))) == registered + 100
    one, parsed[0] = parsed[0], 0
    if jobs == [item]:
        assert registered >= 100  # the search would not pay for even two parts
        return
    parts = [_reader.SearchPart(k, jobs[0].parts) for k in range(jobs[0].parts)]
    assert sum(len(list(_reader.iter_part(str(path), part))) for part in parts) == 100
    assert len(list(_reader.iter_fatbins(str(path), relocatable=True))) == registered  # the final read
    assert parsed[0] <= 2 * one, (jobs[0].parts, one, parsed[0])
    assert jobs[0].parts == {0: 8, 20: 6, 100: 2}[registered]  # 2 per worker; (parts - 1) x registered <= searched


def test_a_fatbin_stored_right_after_a_registered_one_in_a_section_that_holds_both_is_found(tmp_path):
    # .rodata names the bytes of .nv_fatbin and the fatbins stored as data right after them: the search passes
    # the registered fatbin and finds the next one at its end, with any number of parts
    registered, stored = _fatbin(_sass(80)), _fatbin(_ptx(90)) * 12
    data = make_elf([(".nv_fatbin", 1, registered), (".rodata", 1, stored)], e_type=3)
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    at = struct.unpack_from("<Q", data, shoff + 64 + 24)[0]  # .nv_fatbin's offset; .rodata starts at its end
    assert struct.unpack_from("<Q", data, shoff + 128 + 24)[0] == at + len(registered)
    data = patched(data, shoff + 128 + 24, "<Q", at)
    data = patched(data, shoff + 128 + 32, "<Q", len(registered) + len(stored))
    path = tmp_path / "lib.so"
    path.write_bytes(data)
    offsets = [fb.offset for fb in _reader.iter_fatbins(str(path), embedded=True) if fb.embedded]
    assert offsets == [at + len(registered) + k * len(stored) // 12 for k in range(12)]
    item = _Item(str(path), size=len(data), follow=True)
    for parts in range(2, 7):
        whole, split, results = _both(item, parts)
        assert whole.fatbins == {"registered": 1, "relocatable": 0, "embedded": 12}
        assert split is not None and _parts.agree(results), parts
        _same(split, whole)


def test_relocatable_fatbins_beside_registered_ones_are_counted_and_judged_as_one_search_does(tmp_path):
    # a device-linked library that keeps its -rdc fatbins (libnccl.so.2: 76 registered, 129 relocatable)
    sections = [(".nv_fatbin", 1, _fatbin(_sass(80))), ("__nv_relfatbin", 1, _fatbin(_sass(90)) * 3),
                (".rodata", 1, _fatbin(_ptx(120)) * 30)]  # fmt: skip
    path = tmp_path / "lib.so"
    path.write_bytes(make_elf(sections, e_type=3))
    item = _Item(str(path), size=path.stat().st_size, follow=True)
    for parts in (2, 3, 5):
        whole, split, _results = _both(item, parts)
        assert whole.fatbins == {"registered": 1, "relocatable": 3, "embedded": 30}
        assert split is not None, parts
        _same(split, whole)


def _ptx_isa(sm: int, major: int, minor: int) -> bytes:
    """A fatbin of one PTX entry of ISA ``major.minor`` for ``sm``."""
    text = f".version {major}.{minor}\n.target sm_{sm}\n.address_size 64\n.visible .entry k()\n{{\nret;\n}}\n".encode()
    text += bytes(8 - len(text) % 8)
    body = _ENTRY.pack(1, 0x101, 64, len(text), 0, 0, minor, major, sm, 0, 0, 0x11, 0, 0) + text
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def test_what_the_parts_need_of_a_driver_is_the_most_any_part_needs(tmp_path):
    # the newest PTX ISA in the first part, an older one after it: the driver the file needs is the newest's
    stored = _ptx_isa(90, 8, 8) * 10 + _ptx_isa(75, 7, 0) * 30
    path = tmp_path / "lib.so"
    path.write_bytes(make_elf([(".nv_fatbin", 1, _fatbin(_sass(80))), (".rodata", 1, stored)], e_type=3))
    item = _Item(str(path), size=path.stat().st_size, follow=True)
    for parts in (2, 3, 4):
        whole, split, _results = _both(item, parts)
        assert whole.ptx_isa == ["7.0", "8.8"]
        assert split is not None, parts
        _same(split, whole)


def _zstd_ptx(sm: int) -> bytes:
    """A fatbin of one Zstandard-compressed PTX entry for ``sm``."""
    import zstandard

    text = f".version 8.0\n.target sm_{sm}\n.address_size 64\n.visible .entry k()\n{{\nret;\n}}\n".encode()
    packed = zstandard.ZstdCompressor().compress(text)
    payload = packed + bytes(-len(packed) % 8)
    body = _ENTRY.pack(1, 0x101, 64, len(payload), len(packed), 0, 0, 8, sm, 0, 0, 0x8011, 0, len(text)) + payload
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def test_the_compressions_of_a_file_are_those_of_all_its_parts(tmp_path):
    stored = _fatbin(_ptx(90)) * 10 + _zstd_ptx(75) * 30  # uncompressed in the first part only
    path = tmp_path / "lib.so"
    path.write_bytes(make_elf([(".nv_fatbin", 1, _fatbin(_sass(80))), (".rodata", 1, stored)], e_type=3))
    item = _Item(str(path), size=path.stat().st_size, follow=True)
    for parts in (2, 3, 4):
        whole, split, _results = _both(item, parts)
        assert whole.compression == ["none", "zstd"] and whole.error is None
        assert split is not None, parts
        _same(split, whole)


@pytest.mark.parametrize("options", [[], ["--json"], ["--relocatable"]])
def test_inspect_with_workers_lists_what_one_process_lists(tmp_path, monkeypatch, options):
    from cli_testing import cli_main

    monkeypatch.setattr(_parts, "PART_SIZE", 1024)
    # a warning (an ELF entry whose image says another SM than its header) in a part after the first
    odd = _fatbin((2, 86, _sass(80)[2]))
    blocks = [("ptx", 0), ("sass", 1), ("both", 0), ("filler", 7)] * 40
    _layout(tmp_path / "lib.so", blocks, registered=True, second=True)
    path = tmp_path / "lib.so"
    path.write_bytes(path.read_bytes().replace(_fatbin(_sass(86)), odd, 3))
    one = cli_main("inspect", "--embedded", *options, path, "-j", "1", check=0)
    agreed = []
    real = _parts.agree
    monkeypatch.setattr(_parts, "agree", lambda results: agreed.append(len(results)) or real(results))
    many = cli_main("inspect", "--embedded", *options, path, "-j", "3", check=0)
    assert (many.stdout, many.stderr) == (one.stdout, one.stderr)
    assert agreed == [6]  # listed in parts, two per worker
    assert options or one.stdout.count("warning: entry") == 3


@pytest.mark.parametrize("policy", [Policy(), Policy(sass_only=True), Policy(require_ptx=True)])
def test_relocatable_fatbins_without_a_registered_one_give_what_one_search_gives(tmp_path, policy):
    # no registered fatbin: the kernels and PTX that count are those of the fatbins stored as data (loadable),
    # not those of the -rdc ones the rest's worker read
    sections = [("__nv_relfatbin", 1, _fatbin(_sass(90)) * 3), (".rodata", 1, _fatbin(_sass(80)) * 30)]
    path = tmp_path / "lib.so"
    path.write_bytes(make_elf(sections, e_type=3))
    item = _Item(str(path), size=path.stat().st_size, follow=True)
    for parts in (2, 3):
        whole, split, _results = _both(item, parts, policy=policy)
        assert whole.fatbins == {"registered": 0, "relocatable": 3, "embedded": 30}
        if split is not None:
            _same(split, whole)


def test_a_file_rewritten_while_its_rest_is_read_is_read_whole(tmp_path, monkeypatch):
    # the parts read the file; its rest's worker opens it, then it is rewritten in place (the same size, a second
    # later) while that worker reads it: what it read is of neither file, and the file is read whole
    item = _layout(tmp_path / "lib.so", [("ptx", 0)] * 40, registered=True, second=False)
    results = [_parts.run_part(_parts.PartItem(item, k, 3), GPUS, None) for k in range(3)]
    data = (tmp_path / "lib.so").read_bytes()
    listed = os.stat(item.path)
    real = _parts.iter_fatbins

    def rewritten_meanwhile(source, **kwargs):
        with open(item.path, "r+b") as f:
            f.write(data.replace(_fatbin(_sass(80)), _fatbin(_sass(90))))
        os.utime(item.path, ns=(listed.st_atime_ns, listed.st_mtime_ns + 10**9))
        return real(source, **kwargs)

    monkeypatch.setattr(_parts, "iter_fatbins", rewritten_meanwhile)
    rest = _rest(item, 3)
    assert rest.error is not None and "changed while it was read" in rest.error
    assert _parts.finish(item, results, rest, GPUS, None, Policy()) is None
