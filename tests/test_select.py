# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuda_fatbin import (
    RULES,
    Arch,
    FatbinOptions,
    Part,
    build_fatbin,
    coverage,
    nvfatbin_version,
    read_fatbin,
    select_entry,
)
from cuda_fatbin._nvidia import is_tegra
from cuda_fatbin._select import parse_driver, ptx_isa_needs


@pytest.fixture(scope="session")
def make(artifacts):
    """make("sm_80", "compute_90", ...) -> fatbin bytes; "sm_100f!" passes the f suffix explicitly."""
    cache = {}

    def build(*specs, options=None):
        key = (specs, options)
        if key not in cache:
            parts = []
            for spec in specs:
                kind = "cubin" if spec.startswith("sm_") else "ptx"
                name = "sm_" + spec.split("_", 1)[1].rstrip("!")
                parts.append(Part(artifacts[(kind, name)], arch=name if spec.endswith("!") else None, identifier=spec))
            cache[key] = build_fatbin(parts, options=options)
        return cache[key]

    return build


CASES = [
    # (entries, gpu, expected status, expected identifier or None, words in the reason)
    (("sm_80", "sm_90"), "9.0", "SASS exact", "sm_90", "exact match"),
    (("sm_80",), "8.6", "SASS compatible", "sm_80", "same major, lower minor"),
    (("sm_80", "sm_86"), "8.9", "SASS compatible", "sm_86", "lower minor"),
    (("sm_80", "sm_86"), "8.9", "SASS compatible", "sm_86", "lower minor"),  # X.y runs on X.z, z >= y: desktop
    (("sm_80", "sm_86"), "8.7", "none", None, "8.7 is a Tegra GPU"),  # not on Tegra (sass_tegra)
    (("sm_80",), "9.0", "none", None, "another major"),
    (("sm_90",), "8.9", "none", None, "another major"),
    (("sm_90a",), "9.0", "SASS exact", "sm_90a", "exact"),
    (("sm_90a",), "10.0", "none", None, "runs only on 9.0"),
    (("sm_100f!",), "10.3", "SASS compatible", "sm_100f!", "same family"),
    (("sm_100f!",), "10.0", "SASS exact", "sm_100f!", "exact"),
    (("sm_100f!",), "12.0", "none", None, "runs only on 10.x"),
    # at one SM 'a' before 'f' before plain, whatever the order: the model of docs/selection.md, where the place
    # of 'f' is assumed (suffix_order_f, reported: no 'f' arch exists for the 9.0 GPU the probe ran on)
    (("sm_100", "sm_100f!"), "10.0", "SASS exact", "sm_100f!", "exact"),
    (("sm_100f!", "sm_100"), "10.0", "SASS exact", "sm_100f!", "exact"),
    (("sm_100f!", "sm_100a"), "10.0", "SASS exact", "sm_100a", "exact"),
    (("sm_100a", "sm_100f!"), "10.0", "SASS exact", "sm_100a", "exact"),
    (("compute_100", "compute_100f!"), "10.0", "PTX JIT", "compute_100f!", "JIT"),
    (("sm_103f!",), "10.0", "none", None, "minor >= 3"),
    # the nearest arch before the suffix: on 10.3 the exact sm_103 before the family's sm_100f, in either order, as
    # sm_86 before sm_80 on 8.9 (sass_lower_minor, reported: a 9.0 GPU has no lower minor; docs/selection.md)
    (("sm_100f!", "sm_103"), "10.3", "SASS exact", "sm_103", "exact"),
    (("sm_103", "sm_100f!"), "10.3", "SASS exact", "sm_103", "exact"),
    (("compute_100f!", "compute_103"), "10.3", "PTX JIT", "compute_103", "JIT"),
    (("compute_103", "compute_100f!"), "10.3", "PTX JIT", "compute_103", "JIT"),
    (("compute_80",), "9.0", "PTX JIT", "compute_80", "JIT-compiled for 9.0"),
    (("compute_100",), "9.0", "none", None, "newer than 9.0"),
    (("compute_75", "compute_86"), "9.0", "PTX JIT", "compute_86", "compute_86"),
    (("compute_90", "sm_90"), "9.0", "SASS exact", "sm_90", "exact"),
    (("compute_90", "sm_80"), "8.6", "SASS compatible", "sm_80", "lower minor"),
    (("compute_90a",), "9.0", "PTX JIT", "compute_90a", "JIT"),
    (("compute_90a",), "10.0", "none", None, "runs only on 9.0"),
    (("compute_100f",), "10.3", "PTX JIT", "compute_100f", "JIT"),
    (("compute_100f",), "12.0", "none", None, "runs only on 10.x"),
    (("sm_100", "sm_120", "compute_120"), "9.0", "none", None, "no entry fits 9.0"),
    (("sm_90", "sm_90a"), "9.0", "SASS exact", "sm_90a", "exact"),
]


@pytest.mark.parametrize("entries, gpu, status, chosen, words", CASES)
def test_selection_table(make, supported_specs, entries, gpu, status, chosen, words):
    if any("sm_" + e.split("_", 1)[1].rstrip("!") not in supported_specs for e in entries):
        pytest.skip("NVRTC lacks an arch of this case")
    sel = select_entry(make(*entries), gpu)
    assert sel.status == status, sel.reason
    assert (sel.entry.identifier if sel.entry else None) == chosen
    assert words in sel.reason
    assert bool(sel) == (status != "none")
    assert all(r in RULES for r in sel.rules)
    assert len(sel.rejected) == len(entries) - (1 if sel else 0)


def test_reported_rules_are_flagged(make):
    assert select_entry(make("sm_80"), "8.6").unconfirmed  # same major, lower minor: reported only
    assert not select_entry(make("sm_80"), "8.0").unconfirmed


def test_ptx_isa_against_driver(make, artifacts):
    data = make("compute_80")
    isa = tuple(int(x) for x in artifacts[("ptx", "sm_80")].split(b".version ")[1].split(b"\n")[0].split(b"."))
    known = {(9, 0): (13, 0), (9, 1): (13, 1), (9, 2): (13, 2), (9, 3): (13, 3), (9, 4): (13, 4), (9, 5): (13, 5)}
    need = known.get(isa, (isa[0] + 4, isa[1]))  # a newer NVRTC than this table: ISA 9.x <-> CUDA 13.x
    assert ptx_isa_needs(isa) == need  # the PTX ISA release notes: ISA 9.x arrived with CUDA 13.x
    ok = select_entry(data, "9.0", driver=f"{need[0]}.{need[1]}")
    assert ok.status == "PTX JIT" and "ptx_isa_driver" in ok.rules
    older = (need[0], need[1] - 1) if need[1] else (need[0] - 1, 9)
    bad = select_entry(data, "9.0", driver=older)
    assert not bad and f"needs a CUDA {need[0]}.{need[1]} driver" in bad.reason
    # the H200 of the GPU issue: NVRTC 13.5 writes ISA 9.5, which a 580 (CUDA 13.0) driver cannot JIT
    if isa == (9, 5):
        assert not select_entry(data, "9.0", driver="580.65.06")


def test_force_and_disable_ptx_jit(make):
    assert not select_entry(make("sm_90"), "9.0", force_ptx_jit=True)
    sel = select_entry(make("sm_90", "compute_80"), "9.0", force_ptx_jit=True)
    assert sel.status == "PTX JIT" and sel.entry.identifier == "compute_80"
    sel = select_entry(make("compute_80"), "9.0", disable_ptx_jit=True)
    assert not sel and "CUDA_DISABLE_PTX_JIT" in sel.reason
    assert select_entry(make("sm_90", "compute_80"), "9.0", disable_ptx_jit=True).status == "SASS exact"


def test_zstd_needs_a_recent_driver(make):
    data = make("sm_80", options=FatbinOptions(compress_all=True, compress_mode="size"))
    assert not select_entry(data, "8.0", driver="12.3")
    assert "zstd" in select_entry(data, "8.0", driver="545.23.06").reason
    assert select_entry(data, "8.0", driver="550.54.14")
    lz4 = make("sm_80", options=FatbinOptions(compress_all=True, compress_mode="speed"))
    assert select_entry(lz4, "8.0", driver="12.0")


def test_ltoir_only_fits_nothing(artifacts):
    sel = select_entry(build_fatbin([artifacts[("ltoir", "sm_80")]]), "8.0")
    assert not sel and "nvJitLink" in sel.reason


def test_concat_entries_are_selected_by_member(artifacts):
    if nvfatbin_version() < (13, 4):
        pytest.skip("no -concat")
    data = build_fatbin(
        [artifacts[("cubin", "sm_80")], artifacts[("cubin", "sm_90")]], options=FatbinOptions(concat=True)
    )
    assert str(select_entry(data, "9.0").entry.arch) == "sm_90"


def test_coverage(make):
    rows = coverage(make("sm_80", "sm_90a", "compute_90"), "75;80;86;89;90;100;120")
    assert [str(r.gpu) for r in rows] == ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"]
    assert [r.status for r in rows] == ["none", "SASS exact", "SASS compatible", "SASS compatible", "SASS exact",
                                        "PTX JIT", "PTX JIT"]  # fmt: skip
    assert [r.status for r in coverage(make("sm_80"), ["8.0", 90, Arch(8, 9)])] == [
        "SASS exact",
        "none",
        "SASS compatible",
    ]


@pytest.mark.parametrize(
    "spelling, cuda",
    [("12.4", (12, 4)), ("550.54.14", (12, 4)), ("550.54.15", (12, 4)), ("580.65.06", (13, 0)), ("535.54.03", (12, 2)),
     (12040, (12, 4)), (13000, (13, 0)), ((12, 8), (12, 8)), (None, None), ("570.26", (12, 8))],
)  # fmt: skip
def test_parse_driver(spelling, cuda):
    assert parse_driver(spelling) == cuda


@pytest.mark.parametrize("bad, words", [("600.10", "newer than"), ("440.33", "older than"), ("abc", "not a driver"),
                                        (12.4, "not a driver")])  # fmt: skip
def test_parse_driver_rejects(bad, words):
    with pytest.raises(ValueError, match=words):
        parse_driver(bad)


SPECS = ["sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_120", "compute_75", "compute_80",
         "compute_87", "compute_90", "compute_90a", "compute_100", "compute_120"]  # fmt: skip
GPUS = ["7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "10.3", "12.0", "12.1"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(SPECS), min_size=1, max_size=6, unique=True), st.sampled_from(GPUS), st.booleans())
def test_selection_invariants(make, entries, gpu, force):
    sel = select_entry(make(*entries), gpu, force_ptx_jit=force)
    g = Arch.parse(gpu)
    exact_sass = [e for e in entries if e.startswith("sm_") and Arch.parse(e).sm == g.sm]
    if exact_sass and not force:
        assert sel.status == "SASS exact"
    if sel:
        a = sel.entry.arch
        assert a.sm <= g.sm
        assert a.suffix != "a" or a.sm == g.sm
        assert not (force and sel.entry.kind == "elf")
        if sel.entry.kind == "elf":
            assert _sass_may_run(a, g)
    else:
        assert all(
            Arch.parse(e).sm > g.sm
            or (e.startswith("sm_") and (force or not _sass_may_run(Arch.parse(e), g)))
            or Arch.parse(e).suffix == "a"
            for e in entries
        )


def _sass_may_run(sass, gpu):
    """SASS runs on the same major; where either side is Tegra, only on its own capability (Programming Guide)."""
    if sass.major != gpu.major:
        return False
    if is_tegra(sass) or is_tegra(gpu):
        return sass.sm == gpu.sm and is_tegra(sass) == is_tegra(gpu)
    return True


def _key(sel):
    """What a Selection says, comparable across reads (entries compare by where they are)."""
    where = None if sel.entry is None else sel.entry.offset
    return sel.gpu, sel.status, sel.reason, sel.rules, sel.cache_dependent, where


@pytest.mark.parametrize("driver", [None, "12.0", "13.0"])
def test_coverage_is_select_entry_per_gpu_with_the_same_options(make, driver):
    data = make("sm_80", "compute_80", "compute_90")
    gpus = ["8.0", "8.6", "9.0", "12.0"]
    for force in (False, True):
        for disable in (False, True):
            for cache in (None, False, True):
                options = {"driver": driver, "force_ptx_jit": force, "disable_ptx_jit": disable, "jit_cache": cache}
                rows = coverage(data, ";".join(gpus), **options)
                assert [_key(r) for r in rows] == [_key(select_entry(data, g, **options)) for g in gpus], options


def test_needed_driver_per_entry_kind(make, artifacts):
    from cuda_fatbin import read_fatbin
    from cuda_fatbin._select import ZSTD_MIN_CUDA, needed_driver

    plain = read_fatbin(make("sm_80", "compute_80"))
    cubin, ptx = plain.entries
    assert needed_driver(cubin) == (0, 0)  # SASS, stored plainly: any driver
    assert needed_driver(ptx) == ptx_isa_needs(ptx.version) > (0, 0)
    zstd = read_fatbin(make("sm_80", "compute_80", options=FatbinOptions(compress_all=True, compress_mode="size")))
    assert [e.compression for e in zstd.entries] == ["zstd", "zstd"]
    assert needed_driver(zstd.entries[0]) == ZSTD_MIN_CUDA
    assert needed_driver(zstd.entries[1]) == max(ZSTD_MIN_CUDA, ptx_isa_needs(ptx.version))
    lz4 = read_fatbin(make("sm_80", options=FatbinOptions(compress_all=True, compress_mode="speed")))
    assert needed_driver(lz4.entries[0]) == (0, 0)
    if nvfatbin_version() >= (13, 4):
        for mode, top in (("size", "zstd"), ("speed", "lz4")):
            options = FatbinOptions(concat=True, compress_all=True, compress_mode=mode)
            fb = read_fatbin(make("sm_80", "sm_90", options=options))
            [concat] = fb.entries
            members = list(fb.iter_entries())
            assert concat.compression == top and [m.compression for m in members] == ["none", "none"]
            assert all(needed_driver(m) == (13, 4) for m in members)  # concatenation needs 13.4 (> 12.4 for zstd)


def test_needed_driver_of_relocatable_ptx(needs_nvcc, tmp_path):
    import subprocess

    from cuda_fatbin import read_fatbin
    from cuda_fatbin._select import needed_driver

    (tmp_path / "r.cu").write_text('extern "C" __global__ void k(float* p) { p[0] = 1; }\n')
    subprocess.run([needs_nvcc, "-c", "-rdc=true", "-arch=sm_80", "-o", "r.o", "r.cu"], cwd=tmp_path, check=True)
    [reloc] = read_fatbin(build_fatbin([tmp_path / "r.o"])).entries
    assert reloc.kind == "reloc" and reloc.version >= (8, 0)
    assert needed_driver(reloc) == ptx_isa_needs(reloc.version)  # its PTX is JIT-compiled: the ISA rule


def test_driver_gaps_take_gpus_as_a_string_or_a_list(make):
    from cuda_fatbin._select import driver_gaps

    data = make("sm_80", "compute_90")
    gaps = driver_gaps(data, "80;90;120", "12.0")
    # no CUDA 12.0 driver runs a 12.0 GPU (it needs 12.8): nothing a fatbin could change, so no gap
    assert [str(gpu) for gpu, _sel in gaps] == ["sm_90"]
    listed = driver_gaps(data, ["8.0", "9.0", "12.0"], "12.0")
    assert [(gpu, _key(sel)) for gpu, sel in listed] == [(gpu, _key(sel)) for gpu, sel in gaps]
    assert all(sel.status == "PTX JIT" for _gpu, sel in gaps)
    assert driver_gaps(data, "80;90", None) == []


@pytest.mark.parametrize(
    "isa, cuda",
    [  # the PTX ISA release history (PTX ISA docs, "Release notes"): ISA 8.6 came with CUDA 12.7, not 12.6
        ((7, 0), (11, 0)), ((7, 8), (11, 8)), ((8, 0), (12, 0)), ((8, 5), (12, 5)), ((8, 6), (12, 7)),
        ((8, 7), (12, 8)), ((8, 8), (12, 9)), ((9, 0), (13, 0)), ((9, 5), (13, 5)),
        ((9, 6), (13, 6)), ((10, 1), (14, 1)),  # past the table: ISA major + 4, same minor
    ],
)  # fmt: skip
def test_ptx_isa_needs_follows_the_release_history(isa, cuda):
    assert ptx_isa_needs(isa) == cuda


def _fatbin(parts, **options):
    return build_fatbin(parts, options=FatbinOptions(**options) if options else None)


def test_every_rejection_says_why_and_names_its_rule(artifacts):
    """A GPU with no entry gets the reason for each rejection, and the rules behind them (reported ones flag it)."""
    cubin = lambda s: artifacts[("cubin", s)]  # noqa: E731
    ptx = lambda s: Part(artifacts[("ptx", s)], kind="ptx")  # noqa: E731
    tile = Part(b"\x7fTileIR\x00" + bytes([13, 1, 0, 0]) + bytes(20), kind="tile_ir")
    cases = [
        (_fatbin([artifacts[("ltoir", "sm_80")]]), "8.0", {}, "ltoir: LTO-IR must be linked by nvJitLink first", ()),
        (_fatbin([cubin("sm_80")]), "8.0", {"force_ptx_jit": True},
         "SASS sm_80: CUDA_FORCE_PTX_JIT=1 ignores SASS", ("force_ptx_jit",)),
        (_fatbin([ptx("sm_80")]), "8.0", {"disable_ptx_jit": True, "jit_cache": False},
         "PTX compute_80: CUDA_DISABLE_PTX_JIT=1 ignores PTX", ("disable_ptx_jit",)),
        (_fatbin([cubin("sm_80")], compress_all=True, compress_mode="size"), "8.0", {"driver": "12.3"},
         "sm_80: zstd-compressed; needs a CUDA 12.4+ driver, driver is CUDA 12.3", ("zstd_driver",)),
        (_fatbin([cubin("sm_90a")]), "10.0", {}, "sm_90a runs only on 9.0", ("arch_specific",)),
        (_fatbin([Part(cubin("sm_100f"), arch="sm_100f")]), "12.0", {}, "sm_100f runs only on 10.x with minor >= 0",
         ("family_other_major",)),
        (_fatbin([cubin("sm_80")]), "9.0", {}, "SASS sm_80 does not run on 9.0: another major", ("sass_other_major",)),
        (_fatbin([cubin("sm_86")]), "8.0", {}, "SASS sm_86 is newer than 8.0", ("sass_exact",)),
        (_fatbin([ptx("sm_90")]), "8.9", {}, "PTX compute_90 is newer than 8.9", ("ptx_lower",)),
        (_fatbin([cubin("sm_80"), ptx("sm_90")]), "7.5", {},
         "SASS sm_80 does not run on 7.5: another major; PTX compute_90 is newer than 7.5",
         ("sass_other_major", "ptx_lower")),
    ]  # fmt: skip
    if nvfatbin_version() >= (13, 1):  # Tile IR entries
        cases.append((_fatbin([tile]), "8.0", {}, "tile_ir: not loaded by the driver", ()))
    if nvfatbin_version() >= (13, 4):
        concat = _fatbin([cubin("sm_80")], concat=True)
        cases.append((concat, "8.0", {"driver": "13.3"},
                      "sm_80 is inside a concatenated entry, which a CUDA 13.3 driver does not read (needs 13.4+)",
                      ("concat_driver",)))  # fmt: skip
        assert select_entry(concat, "8.0", driver="13.4").rules == ("sass_exact", "concat_driver")
    for data, gpu, options, why, rules in cases:
        sel = select_entry(data, gpu, **options)
        assert (sel.status, sel.entry, sel.reason, sel.rules) == ("none", None, f"no entry fits {gpu}: {why}", rules)
        assert sel.unconfirmed == any(RULES[r].status != "checked" for r in rules)
    old = _fatbin([ptx("sm_80")], compress=False)
    sel = select_entry(old, "8.6", driver="12.0")
    isa = read_fatbin(old).entries[0].version
    need = ptx_isa_needs(isa)
    assert sel.reason == (
        "no entry fits 8.6: the driver takes the nearest PTX and fails (CUDA_ERROR_UNSUPPORTED_PTX_VERSION), without "
        f"trying the others: PTX compute_80 is ISA {isa[0]}.{isa[1]}, which needs a CUDA {need[0]}.{need[1]} driver; "
        "driver is CUDA 12.0"
    )


RULE_CASES = [
    # (entries, gpu, the rules the decision rests on, why each other entry was not taken) — docs/selection.md
    (("sm_80", "sm_90"), "9.0", ("sass_exact",), ["SASS sm_80 does not run on 9.0: another major"]),
    (("sm_80",), "8.6", ("sass_lower_minor",), []),
    (("sm_80", "sm_86"), "8.9", ("sass_lower_minor",), ["also runnable (SASS compatible), not preferred"]),
    (("sm_90a",), "9.0", ("arch_specific",), []),
    (("sm_100f!",), "10.3", ("family",), []),
    (("sm_103f!",), "10.0", ("family",), ["sm_103f runs only on 10.x with minor >= 3"]),  # the family, too low
    (("sm_100f!",), "12.0", ("family_other_major",), ["sm_100f runs only on 10.x with minor >= 0"]),
    (("compute_80",), "9.0", ("ptx_lower",), []),
    (("compute_75", "compute_86"), "9.0", ("ptx_lower", "ptx_nearest"), ["also runnable (PTX JIT), not preferred"]),
    (("compute_90", "sm_90"), "9.0", ("sass_exact", "sass_over_ptx"), ["also runnable (PTX JIT), not preferred"]),
    (("compute_90", "sm_80"), "8.6", ("sass_lower_minor",), ["PTX compute_90 is newer than 8.6"]),
    (("compute_90a",), "9.0", ("arch_specific",), []),
    (("sm_90", "sm_90a"), "9.0", ("arch_specific", "suffix_order"), ["also runnable (SASS exact), not preferred"]),
    (("sm_90a", "sm_90"), "9.0", ("arch_specific", "suffix_order"), ["also runnable (SASS exact), not preferred"]),
    # the place of 'f' among the suffixes is assumed (docs/selection.md): the decision says it is unconfirmed
    (("sm_100", "sm_100f!"), "10.0", ("family", "suffix_order_f"), ["also runnable (SASS exact), not preferred"]),
    (("sm_100a", "sm_100f!"), "10.0", ("arch_specific", "suffix_order_f"),
     ["also runnable (SASS exact), not preferred"]),
    (("sm_100", "sm_120", "compute_120"), "9.0", ("sass_other_major", "ptx_lower"), [
        "SASS sm_100 does not run on 9.0: another major", "SASS sm_120 does not run on 9.0: another major",
        "PTX compute_120 is newer than 9.0",
    ]),
]  # fmt: skip


@pytest.mark.parametrize("entries, gpu, rules, others", RULE_CASES)
def test_each_decision_names_its_rules_and_what_it_passed_over(make, entries, gpu, rules, others):
    sel = select_entry(make(*entries), gpu)
    assert sel.rules == rules
    assert [why for _entry, why in sel.rejected] == others
    chosen = {id(sel.entry)} if sel.entry is not None else set()
    assert {id(e) for e, _why in sel.rejected}.isdisjoint(chosen)
    assert sel.unconfirmed == any(RULES[r].status != "checked" for r in rules)


def test_equal_ptx_entries_of_a_lower_arch_the_first_one_wins(artifacts):
    """Probe, H200 driver 580: ties of PTX for a lower major run the first (cases "tie ptx lower*"); on 8.6 a
    compute_80 tie is the same major, lower minor: not observed, so the rule is tie_unseen (reported)."""
    ptx = artifacts[("ptx", "sm_80")]
    data = build_fatbin([Part(ptx, kind="ptx", identifier="first"), Part(ptx, kind="ptx", identifier="last")],
                        allow_duplicates=True)  # fmt: skip
    sel = select_entry(data, "9.0")
    assert (sel.entry.identifier, sel.rules) == ("first", ("ptx_lower", "tie_ptx_other"))
    assert [(e.identifier, why) for e, why in sel.rejected] == [("last", "also runnable (PTX JIT), not preferred")]
    sel = select_entry(data, "8.6")
    assert (sel.entry.identifier, sel.rules, sel.unconfirmed) == ("first", ("ptx_lower", "tie_unseen"), True)


def test_equal_ptx_entries_of_the_devices_own_sm_the_last_one_wins(artifacts):
    """Probe, H200 driver 580: plain compute_90 ties on 9.0 run the last (cases "tie ptx exact*", 52 orders)."""
    ptx = artifacts[("ptx", "sm_90")]
    data = build_fatbin([Part(ptx, kind="ptx", identifier="first"), Part(ptx, kind="ptx", identifier="last")],
                        allow_duplicates=True)  # fmt: skip
    sel = select_entry(data, "9.0")
    assert (sel.entry.identifier, sel.rules) == ("last", ("ptx_lower", "tie_ptx_exact"))


def test_a_warm_jit_cache_runs_ptx_despite_disable_ptx_jit(artifacts):
    ptx = artifacts[("ptx", "sm_80")]
    data = build_fatbin([Part(ptx, kind="ptx")])
    isa = "{}.{}".format(*read_fatbin(data).entries[0].version)
    ignored = "PTX compute_80: CUDA_DISABLE_PTX_JIT=1 ignores PTX"
    jit = f"PTX compute_80 (ISA {isa}) JIT-compiled for 8.6"
    cold = select_entry(data, "8.6", disable_ptx_jit=True, jit_cache=False)
    assert (cold.status, cold.reason, cold.rules, cold.cache_dependent) == (
        "none", f"no entry fits 8.6: {ignored}", ("disable_ptx_jit",), False
    )  # fmt: skip
    unknown = select_entry(data, "8.6", disable_ptx_jit=True)
    assert (unknown.status, unknown.reason, unknown.rules, unknown.cache_dependent) == (
        "none", f"no entry fits 8.6: {ignored}; with a warm JIT cache: {jit} (cached JIT output)", ("disable_ptx_jit",),
        True,
    )  # fmt: skip
    assert [why for _e, why in unknown.rejected] == [ignored]
    warm = select_entry(data, "8.6", disable_ptx_jit=True, jit_cache=True)
    assert (warm.status, warm.reason, warm.rules, warm.cache_dependent) == (
        "PTX JIT", f"{jit}, from the JIT cache (CUDA_DISABLE_PTX_JIT=1 still runs cached JIT output)",
        ("ptx_lower", "jit_cache"), False,
    )  # fmt: skip
    assert warm.entry is not None and warm.entry.kind == "ptx"
    # a driver too old for the PTX: the cache cannot hold its JIT output either
    old = select_entry(data, "8.6", disable_ptx_jit=True, jit_cache=True, driver="12.0")
    assert (old.status, old.reason, old.cache_dependent) == ("none", f"no entry fits 8.6: {ignored}", False)
    # SASS that fits makes the cache irrelevant
    both = build_fatbin([Part(ptx, kind="ptx"), artifacts[("cubin", "sm_86")]])
    for cache in (None, True, False):
        sel = select_entry(both, "8.6", disable_ptx_jit=True, jit_cache=cache)
        assert (sel.status, sel.rules, sel.cache_dependent) == ("SASS exact", ("sass_exact",), False)
    forced = select_entry(data, "8.6", force_ptx_jit=True, disable_ptx_jit=True, jit_cache=True)
    assert forced.status == "PTX JIT" and forced.rules == ("ptx_lower", "jit_cache")


def test_driver_spellings_at_their_boundaries():
    # cuDriverGetVersion: 1000 * major + 10 * minor (a stray unit digit is dropped)
    assert parse_driver(11000) == (11, 0) and parse_driver(12045) == (12, 4) and parse_driver(13010) == (13, 1)
    assert parse_driver("99.9") == (99, 9)  # below 100: a CUDA version; from 100: a driver version
    assert parse_driver("450.36.06") == parse_driver("11.0") == parse_driver((11, 0)) == (11, 0)
    for bad, message in [
        (999, "not a driver or CUDA version: 999; use '12.4', '550.54.14' or 12040"),
        ("100.0", "driver 100.0 is older than CUDA 11.0 (450.36.06); not modelled"),
        ("999.1", "driver 999.1 is newer than this package's driver table (up to R595); pass the CUDA version "
                  "nvidia-smi reports instead, e.g. driver='13.1'"),
        ("99.100", "not a driver or CUDA version: '99.100'; use '12.4', '550.54.14' or 12040"),
    ]:  # fmt: skip
        with pytest.raises(ValueError) as info:
            parse_driver(bad)
        assert str(info.value) == message


def test_relocatable_ptx_is_selected_like_ptx_and_says_so(needs_nvcc, tmp_path):
    import subprocess

    (tmp_path / "r.cu").write_text('extern "C" __global__ void k(float* p) { p[0] = 1; }\n')
    subprocess.run([needs_nvcc, "-c", "-rdc=true", "-arch=sm_80", "-o", "r.o", "r.cu"], cwd=tmp_path, check=True)
    data = build_fatbin([tmp_path / "r.o"])
    isa = "{}.{}".format(*read_fatbin(data).entries[0].version)
    sel = select_entry(data, "8.6")
    assert (sel.status, sel.reason, sel.rules) == (
        "PTX JIT", f"PTX relocatable PTX compute_80 (ISA {isa}) JIT-compiled for 8.6", ("ptx_lower", "reloc_ptx")
    )  # fmt: skip
    off = select_entry(data, "8.6", disable_ptx_jit=True, jit_cache=False)
    assert (off.reason, off.rules) == (
        "no entry fits 8.6: PTX relocatable PTX compute_80: CUDA_DISABLE_PTX_JIT=1 ignores PTX",
        ("disable_ptx_jit", "reloc_ptx"),
    )


def test_the_nearest_ptx_too_new_for_the_driver_fails_the_load(make):
    """The driver takes the nearest PTX and fails on its ISA; it never falls back to an older PTX."""
    fb = read_fatbin(make("compute_80", "compute_90"))
    p80, p90 = fb.entries
    need = ptx_isa_needs(p90.version)
    failure = (f"PTX compute_90 is ISA {p90.version[0]}.{p90.version[1]}, which needs a CUDA {need[0]}.{need[1]} "
               "driver; driver is CUDA 12.4")  # fmt: skip
    sel = select_entry(fb, "9.0", driver="12.4")  # reads zstd (libnvfatbin may compress PTX by default)
    assert not sel
    assert (sel.gpu, sel.entry, sel.status, sel.cache_dependent) == (Arch(9, 0), None, "none", False)
    assert sel.reason == (
        "no entry fits 9.0: the driver takes the nearest PTX and fails (CUDA_ERROR_UNSUPPORTED_PTX_VERSION), "
        f"without trying the others: {failure}"
    )
    assert sel.rejected == ((p90, failure), (p80, "also runnable (PTX JIT), not preferred"))
    assert sel.rules == ("ptx_lower", "ptx_isa_driver", "ptx_nearest")


def test_a_fatbin_without_entries_fits_nothing_and_says_so():
    import struct

    empty = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 0)
    sel = select_entry(empty, "8.0")
    assert (sel.status, sel.reason, sel.rejected, sel.rules) == (
        "none", "no entry fits 8.0: the fatbin has no entries", (), ()
    )  # fmt: skip


def test_a_relocatable_fatbin_is_selected_and_linked_at_load(needs_nvcc, tmp_path):
    import subprocess

    from cuda_fatbin import iter_fatbins

    (tmp_path / "r.cu").write_text('extern "C" __global__ void k(float* p) { p[0] = 1; }\n')
    cmd = [needs_nvcc, "-c", "-rdc=true", "-gencode", "arch=compute_80,code=[sm_80,compute_80]", "-o", "r.o", "r.cu"]
    subprocess.run(cmd, cwd=tmp_path, check=True)
    [fb] = iter_fatbins(tmp_path / "r.o")
    assert fb.relocatable
    linked = "; linked at load time by the CUDA runtime (this fatbin is -rdc device-link input)"
    sass = select_entry(fb, "8.6")
    assert (sass.status, sass.reason, sass.rules) == (
        "SASS compatible", f"SASS sm_80 runs on 8.6: same major, lower minor{linked}",
        ("sass_lower_minor", "sass_over_ptx", "relocatable_link"),
    )  # fmt: skip
    jit = select_entry(fb, "9.0")
    assert (jit.status, jit.rules) == ("PTX JIT", ("ptx_lower", "relocatable_link")) and jit.reason.endswith(linked)
    # the same entries outside a relocatable object: no link step
    plain = select_entry(build_fatbin([e.data() for e in fb.entries]), "8.6")
    assert (plain.reason, plain.rules) == (
        "SASS sm_80 runs on 8.6: same major, lower minor", ("sass_lower_minor", "sass_over_ptx")
    )  # fmt: skip


def test_disable_ptx_jit_models_the_warm_and_cold_driver_with_the_same_driver_and_force(make):
    """With CUDA_DISABLE_PTX_JIT=1 both models (cache warm, cache cold) see the same driver and force flag."""
    zstd = make("sm_86", options=FatbinOptions(compress_all=True, compress_mode="size"))
    for cache in (None, False, True):  # the driver cannot read zstd SASS, cached or not
        sel = select_entry(zstd, "8.6", driver="12.0", disable_ptx_jit=True, jit_cache=cache)
        assert (sel.status, sel.rules, sel.cache_dependent) == ("none", ("zstd_driver",), False), cache
    both = make("sm_86", "compute_80")
    forced = {"force_ptx_jit": True, "disable_ptx_jit": True}
    warm = select_entry(both, "8.6", **forced, jit_cache=True)  # forced to JIT; the JIT output was cached
    assert (warm.status, warm.entry.identifier, warm.rules) == ("PTX JIT", "compute_80", ("ptx_lower", "jit_cache"))
    unknown = select_entry(both, "8.6", **forced)
    assert (unknown.status, unknown.cache_dependent) == ("none", True)
    assert unknown.rules == ("force_ptx_jit", "disable_ptx_jit")
    assert unknown.reason == (
        "no entry fits 8.6: SASS sm_86: CUDA_FORCE_PTX_JIT=1 ignores SASS; PTX compute_80: CUDA_DISABLE_PTX_JIT=1 "
        f"ignores PTX; with a warm JIT cache: {select_entry(both, '8.6', force_ptx_jit=True).reason} "
        "(cached JIT output)"
    )


@pytest.mark.parametrize(
    "kind, spec, gpu, rule",
    [  # RULES: tie_sass, tie_ptx_exact, tie_ptx_other observed on an H200 (docs/gpu-validation.md, the probe's
        # "tie" cases); every other tie is tie_unseen (the model's assumption, reported as unconfirmed)
        ("cubin", "sm_90", "9.0", "tie_sass"),
        ("cubin", "sm_90a", "9.0", "tie_sass"),
        ("cubin", "sm_80", "8.6", "tie_unseen"),  # same major, lower minor
        ("cubin", "sm_100f", "10.3", "tie_unseen"),  # family
        ("ptx", "sm_90", "9.0", "tie_ptx_exact"),
        ("ptx", "sm_80", "9.0", "tie_ptx_other"),  # a lower major
        ("ptx", "sm_90a", "9.0", "tie_ptx_other"),  # 'a' PTX for the device
        ("ptx", "sm_80", "8.6", "tie_unseen"),  # same major, lower minor
        ("ptx", "sm_100f", "10.0", "tie_unseen"),  # 'f' PTX for the device's own SM
    ],
)
def test_each_kind_of_tie_names_the_rule_that_orders_it(artifacts, supported_specs, kind, spec, gpu, rule):
    if spec not in supported_specs:
        pytest.skip(f"this NVRTC has no {spec}")
    data = artifacts[(kind, spec)]
    arch = spec if kind == "cubin" else "compute_" + spec[3:]
    fb = build_fatbin([Part(data, kind=kind, arch=arch, identifier="first"),
                       Part(data, kind=kind, arch=arch, identifier="last")], allow_duplicates=True)  # fmt: skip
    sel = select_entry(fb, gpu)
    assert sel.rules[-1] == rule and sel.entry is not None
    assert sel.unconfirmed == (rule == "tie_unseen")


def test_plain_ptx_wins_over_relocatable_ptx_of_the_same_sm_in_either_order(needs_nvcc, artifacts, tmp_path):
    """RULES ptx_over_reloc, from docs/gpu-validation.md: relocatable compute_90 + PTX compute_90, both orders in
    one fatbin, on a 9.0 GPU (H200): the plain PTX runs. build_fatbin puts PTX first; the reloc-first fatbin is
    joined here from two, entry by entry."""
    import struct
    import subprocess

    (tmp_path / "r.cu").write_text('extern "C" __global__ void k(float* p) { p[0] = 1; }\n')
    subprocess.run([needs_nvcc, "-c", "-rdc=true", "-arch=compute_90", "-o", "r.o", "r.cu"], cwd=tmp_path, check=True)
    reloc, ptx = build_fatbin([tmp_path / "r.o"]), build_fatbin([artifacts[("ptx", "sm_90")]])

    def joined(*fatbins: bytes) -> bytes:
        body = b"".join(f[16 : 16 + struct.unpack_from("<Q", f, 8)[0]] for f in fatbins)
        return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body

    for first, second in ((reloc, ptx), (ptx, reloc)):
        data = joined(first, second)
        assert [e.kind for e in read_fatbin(data).entries] == (["reloc", "ptx"] if first is reloc else ["ptx", "reloc"])
        sel = select_entry(data, "9.0")
        assert sel.entry is not None and (sel.entry.kind, str(sel.entry.arch)) == ("ptx", "sm_90")
        assert "ptx_over_reloc" in sel.rules and not sel.unconfirmed


def test_a_tie_of_relocatable_ptx_is_unseen(needs_nvcc, tmp_path):
    """Relocatable PTX among itself is not observed (RULES tie_unseen): reported, unconfirmed."""
    import subprocess

    for name in ("r1", "r2"):
        (tmp_path / f"{name}.cu").write_text('extern "C" __global__ void k(float* p) { p[0] = 1; }\n')
        subprocess.run([needs_nvcc, "-c", "-rdc=true", "-arch=sm_80", "-o", f"{name}.o", f"{name}.cu"], cwd=tmp_path,
                       check=True)  # fmt: skip
    data = build_fatbin([tmp_path / "r1.o", tmp_path / "r2.o"], allow_duplicates=True)
    sel = select_entry(data, "8.0")
    assert (sel.rules, sel.unconfirmed) == (("ptx_lower", "reloc_ptx", "tie_unseen"), True)
