# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The probe on the CPU: the matrix, the fatbins it builds, the prediction, the child runner, the report.

The GPU runs the same matrix (tests/gpu/test_probe_gpu.py); docs/probe/ holds the recorded runs, which
``test_recorded_runs_replay`` checks the current model against.
"""

from __future__ import annotations

import io
import json
import re
import signal
import struct
import sys
import types
from pathlib import Path

import pytest

from cli_testing import Terminal
from cuda_fatbin import RULES, Arch, _probe, _probe_matrix, read_fatbin
from cuda_fatbin._probe import Builder, Case, Entry, NotObservable, build_case, matrix, predict
from cuda_fatbin._reader import iter_fatbins

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "src" / "cuda_fatbin" / "schemas" / "probe.json"
RECORDED = sorted((ROOT / "docs" / "probe").glob("*.json"))
SMS = (75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121)


@pytest.fixture(scope="module")
def builder() -> Builder:
    pytest.importorskip("cuda.bindings.nvrtc")
    return Builder(ptx_isa="9.0")


_KIND = r"(cubin|ptx|reloc|ltoir|tile_ir)"
_REL = r"(exact|compatible|lower2|lower|higher)"
_SEG = rf"{_KIND} {_REL}(?: ([af]))?"
_PAIR = re.compile(rf"^(?:force: |disable: )?{_SEG}(?: \+ {_SEG})?(?: \+ {_SEG})? <([\d,]+)>( spliced)? \[([a-z-]+)\]$")
_SINGLE = re.compile(rf"^single {_SEG}: (sm_\w+) \[([a-z-]+)\]$")


def _relation_holds(rel: str, arch: str, gpu: str) -> bool:
    """What the case names say of an entry's arch, from the GPU's capability alone (not from _targets)."""
    a, g = Arch.parse(arch), Arch.parse(gpu)
    below = sorted({s for s in SMS if s // 10 < g.major})
    return {
        "exact": a.sm == g.sm,
        "compatible": a.major == g.major and a.minor < g.minor,
        "lower": a.major < g.major and a.sm == below[-1],
        "lower2": a.major < g.major and len(below) > 1 and a.sm == below[-2],
        "higher": a.sm > g.sm,
    }[rel]


def _check_name_describes_entries(case: Case, gpu: str) -> bool:
    """A case named "<kind> <relation> [suffix] + ... <tags>[ spliced] [cache]" holds those entries; False if
    the name is not of that form."""
    m = _PAIR.match(case.name)
    if m:
        *segs, order, spliced, cache = m.groups()
        parts = [tuple(segs[i : i + 3]) for i in range(0, 9, 3) if segs[i] is not None]
        assert [e.tag for e in case.entries] == [int(t) for t in order.split(",")], case.name
        assert sorted(e.tag for e in case.entries) == list(range(1, len(parts) + 1)), case.name
        assert [e.container for e in case.entries] == (list(range(len(parts))) if spliced else [0] * len(parts))
    else:
        m = _SINGLE.match(case.name)
        if not m:
            return False
        kind, rel, suffix, arch, cache = m.groups()
        parts = [(kind, rel, suffix)]
        assert [e.arch for e in case.entries] == [arch], case.name
    assert case.cache == cache, case.name
    for e in case.entries:
        kind, rel, suffix = parts[e.tag - 1]
        assert e.kind == kind and Arch.parse(e.arch).suffix == (suffix or ""), case.name
        assert _relation_holds(rel, e.arch, gpu), (case.name, e.arch)
    return True


def test_matrix_names_are_unique_and_rules_known():
    for gpu in ("7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1"):
        every = matrix(gpu, SMS, driver_cuda=(13, 0))
        assert len({c.name for c in every}) == len(every), gpu
        assert {c.rule for c in every} <= set(RULES), gpu
        # the name says what the case holds: every kind, arch relation, suffix, order and container
        named = [c for c in every if _check_name_describes_entries(c, gpu)]
        assert len(named) >= 20, (gpu, len(named))
        if Arch.parse(gpu).sm >= 100:  # family archs exist from 10.0 (nvcc, CUDA 12.9): their cases are built
            assert [c.name for c in named if c.name.startswith("cubin exact f + cubin exact <2,1>")], gpu
            assert [c.name for c in named if c.name.startswith("ptx exact f + ptx exact <1,2>")], gpu
        if [s for s in SMS if s // 10 == Arch.parse(gpu).major and s < Arch.parse(gpu).sm]:  # a lower minor
            assert [c.name for c in named if c.name.startswith("cubin compatible + ptx exact <2,1>")], gpu
    # without a driver version, the ISA cases are named as what the GPU run cannot show
    unknown = [c.name for c in matrix("9.0", SMS) if not c.entries]
    assert [n for n in unknown if n.startswith("PTX ISA newer than the driver") and "driver version unknown" in n]
    assert not [c for c in matrix("9.0", SMS) if "new ISA" in c.name or "ISA alone" in c.name]
    cases = matrix("9.0", SMS, driver_cuda=(13, 0))
    # every tie group in every order: 2 entries in both orders, 3 entries in all 6
    ties = [
        c for c in cases if c.name.startswith("tie cubin exact x3") and c.cache == "cold" and "spliced" not in c.name
    ]
    assert sorted(tuple(e.tag for e in c.entries) for c in ties) == [
        (1, 2, 3), (1, 3, 2), (2, 1, 3), (2, 3, 1), (3, 1, 2), (3, 2, 1)
    ]  # fmt: skip


def test_matrix_reports_what_a_gpu_cannot_show():
    names = [c.name for c in matrix("9.0", SMS, driver_cuda=(13, 0)) if not c.entries]
    assert any("no arch sm_90f" in n for n in names)
    assert any("no lower minor of 9.x" in n for n in names)
    # an 8.9 GPU has a lower minor (8.6): that case is built there
    eight_nine = matrix("8.9", SMS, driver_cuda=(13, 0))
    assert any(c.name.startswith("single cubin compatible: sm_88") for c in eight_nine)


def test_built_case_has_the_entries_in_order(builder):
    case = Case("t", "tie_sass", (Entry("ptx", "sm_89", 2, compression="lz4"), Entry("cubin", "sm_90", 1, debug=True)))
    fb = read_fatbin(build_case(case, builder))
    got = [(e.kind, str(e.arch), e.identifier, e.compression, e.debug) for e in fb.entries]
    assert got == [("ptx", "sm_89", "t2", "lz4", False), ("elf", "sm_90", "t1", "none", True)]
    assert b"*out = " not in fb.entries[0].data()  # PTX, not the source
    assert b".version 9.0" in fb.entries[0].data()


def test_spliced_containers_and_patched_headers(builder):
    case = Case(
        "t", "driver_input", (Entry("cubin", "sm_89", 1, header_arch="sm_90"), Entry("ptx", "sm_90", 2, container=1))
    )
    data = build_case(case, builder)
    fatbins = list(iter_fatbins(data))
    assert len(fatbins) == 2
    entry = fatbins[0].entries[0]
    assert str(entry.arch) == "sm_90"  # the header was rewritten...
    assert struct.unpack_from("<I", entry.data(), 0) == (0x464C457F,)  # ...around the sm_89 ELF image
    kind = Case("t", "header_mismatch", (Entry("cubin", "sm_90", 1, header_kind="ptx"),))
    assert read_fatbin(build_case(kind, builder)).entries[0].kind == "ptx"


def test_isa_rewrite(builder):
    case = Case("t", "ptx_isa_driver", (Entry("ptx", "sm_90", 1, isa="9.1"),))
    assert read_fatbin(build_case(case, builder)).entries[0].version == (9, 1)


def test_unbuildable_cases_are_not_observable(builder):
    with pytest.raises(NotObservable, match="no arch"):
        build_case(Case("x (not observable: no arch sm_90f)", "family", ()), builder)
    nvcc_less = Builder(nvcc="")
    with pytest.raises(NotObservable, match="nvcc"):
        build_case(Case("t", "reloc_ptx", (Entry("reloc", "sm_90", 1),)), nvcc_less)


def test_prediction_names_the_tag(builder):
    case = Case("t", "sass_over_ptx", (Entry("ptx", "sm_90", 1), Entry("cubin", "sm_90", 2)))
    predicted, sel, _ = predict(case, build_case(case, builder), "9.0", 13000)
    assert predicted == "TAG 2" and sel is not None and sel.status == "SASS exact"
    none = Case("t", "sass_other_major", (Entry("cubin", "sm_80", 1),))
    assert predict(none, build_case(none, builder), "9.0", 13000)[0] == "ERROR"


@pytest.mark.parametrize(
    ("predicted", "observed", "agree"),
    [("TAG 1", "TAG 1", True), ("TAG 1", "TAG 2", False), ("TAG 1", "ERROR CUDA_ERROR_INVALID_SOURCE", False),
     ("ERROR", "ERROR CUDA_ERROR_NO_BINARY_FOR_GPU", True), ("ERROR", "CRASH SIGSEGV", True), ("ERROR", "TAG 1", False),
     ("ERROR", "TIMEOUT", False)],
)  # fmt: skip
def test_agreement(predicted, observed, agree):
    assert _probe._agree(predicted, observed) is agree


def test_child_crash_and_silence_are_outcomes(tmp_path, monkeypatch):
    path = tmp_path / "x.fatbin"
    path.write_bytes(b"")
    monkeypatch.setattr(_probe, "_CHILD", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    assert _probe.run_child(path, {})[0] == f"CRASH {signal.Signals.SIGSEGV.name}"
    monkeypatch.setattr(_probe, "_CHILD", "import sys; sys.exit(3)")
    assert _probe.run_child(path, {})[0] == "CRASH exit"
    monkeypatch.setattr(_probe, "_CHILD", "print('ERROR CUDA_ERROR_INVALID_IMAGE cuModuleLoadData')")
    assert _probe.run_child(path, {}) == ("ERROR CUDA_ERROR_INVALID_IMAGE", "cuModuleLoadData")
    monkeypatch.setattr(_probe, "_CHILD", "import time; time.sleep(30)")
    assert _probe.run_child(path, {}, timeout=0.5)[0] == "TIMEOUT"


def test_probe_report_and_cli(monkeypatch, capsys, builder):
    import jsonschema

    from cuda_fatbin import _driver
    from cuda_fatbin._cli import main

    info = _driver.DeviceInfo(0, "Fake GPU", (9, 0), 13000)
    monkeypatch.setattr(_driver, "devices", lambda *a, **k: (info,))
    # the fake driver runs whatever the model predicts, except that it crashes on one case
    runs: list[str] = []

    def fake_observe(case, data, other, workdir, index, children=None):
        runs.append(case.name)
        predicted = predict(case, data, "9.0", 13000)[0]
        if case.name.startswith("single cubin lower: sm_89 [warm]"):  # predicted ERROR: a crash agrees
            return "CRASH SIGSEGV", ""
        return (predicted if predicted != "ERROR" else "ERROR CUDA_ERROR_NO_BINARY_FOR_GPU"), ""

    monkeypatch.setattr(_probe, "observe", fake_observe)
    report = _probe.probe(select=["single cubin", "tie ptx lower x3"], jobs=2)
    assert report.ok and len(report.run) == len(runs) > 10
    doc = report.to_dict()
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    assert doc["gpu"] == {"name": "Fake GPU", "capability": "9.0"} and doc["not_observable"] > 0
    assert main(["probe", "--case", "single cubin exact", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cases_run"] == 4
    monkeypatch.setattr(_probe, "observe", lambda *a: ("TAG 7", ""))
    assert main(["probe", "--case", "single ptx lower"]) == 1
    out = capsys.readouterr().out
    assert "NO" in out and "disagreement" in out
    with pytest.raises(SystemExit) as stop:  # argparse refuses it: a usage error
        main(["probe", "--jobs", "0"])
    assert stop.value.code == 2


@pytest.mark.parametrize("path", RECORDED, ids=[p.name for p in RECORDED])
def test_the_matrix_is_the_one_the_recorded_gpu_runs_ran(path):
    """Case by case, in order: the name, rule, entries (kind, arch, tag, ISA, compression, header, container...),
    environment and cache of each case the H200 ran (docs/gpu-validation.md). A change to the matrix is a new
    experiment: it is run on a GPU and recorded again before its cases stand as evidence."""
    doc = json.loads(path.read_text())
    cuda = (doc["driver"] // 1000, doc["driver"] % 1000 // 10)
    cases = matrix(doc["gpu"]["capability"], doc["nvrtc_archs"], driver_cuda=cuda)
    got = [{"name": c.name, "rule": c.rule, "entries": [e.describe() for e in c.entries], "env": dict(c.env),
            "cache": c.cache} for c in cases]  # fmt: skip
    assert got == [{k: row[k] for k in ("name", "rule", "entries", "env", "cache")} for row in doc["cases"]]


@pytest.mark.parametrize("path", RECORDED, ids=[p.name for p in RECORDED])
def test_recorded_runs_replay(path, builder):
    """Every case of a recorded GPU run, rebuilt here, is predicted as the driver behaved then.

    The run's PTX came from its NVRTC (ISA ``versions.nvrtc`` - 4); the builder writes that ISA."""
    doc = json.loads(path.read_text())
    import jsonschema

    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    major, minor = (int(x) for x in doc["versions"]["nvrtc"].split("."))
    replay = Builder(ptx_isa=f"{major - 4}.{minor}")
    cuda = (doc["driver"] // 1000, doc["driver"] % 1000 // 10)
    cases = {c.name: c for c in matrix(doc["gpu"]["capability"], doc["nvrtc_archs"], driver_cuda=cuda)}
    wrong, checked = [], 0
    for row in doc["cases"]:
        if row["not_observable"] is not None or row["name"] not in cases:
            continue
        case = cases[row["name"]]
        try:
            data = build_case(case, replay)
        except NotObservable:
            continue
        predicted = predict(case, data, doc["gpu"]["capability"], doc["driver"])[0]
        checked += 1
        if not _probe._agree(predicted, row["observed"]):
            wrong.append(f"{row['name']}: observed {row['observed']}, predicted {predicted}")
    assert checked > 0.9 * doc["cases_run"]
    assert not wrong, "\n".join(wrong[:20])


def test_every_checked_rule_that_cites_the_probe_has_agreeing_cases():
    """A rule is *checked* by the probe only where the recorded run holds cases for it, all agreeing."""
    from cuda_fatbin._select import PROBE_H200

    doc = json.loads((ROOT / PROBE_H200).read_text())
    ran: dict[str, list[bool]] = {}  # the rule each case is for, and the rules the model's answer rested on
    intended: set[str] = set()
    for row in doc["cases"]:
        if row["not_observable"] is None:
            intended.add(row["rule"])
            for key in {row["rule"], *row["rules"]}:
                ran.setdefault(key, []).append(row["agree"])
    for key, rule in RULES.items():
        if PROBE_H200 in rule.source and rule.status == "checked":
            assert ran.get(key), f"{key} cites the probe run but has no case there"
    assert all(all(v) for v in ran.values())
    for key in ("tie_unseen", "suffix_order_f", "family", "sass_lower_minor"):  # not observable on a 9.0 GPU
        assert RULES[key].status == "reported" and key not in intended


# Header/payload mismatches as the H200 (driver 580) treated them: docs/probe/h200-driver580.json, cases "header *"
# and "* header around *" (INVALID_SOURCE without fallback, SIGSEGV, INVALID_IMAGE, a lower .target runs,
# a newer .target fails with INVALID_PTX).
@pytest.mark.parametrize(
    ("entry", "mismatch", "outcome"),
    [
        (Entry("cubin", "sm_89", 1, header_arch="sm_90"), "the header says sm_90, the ELF image is for sm_89",
         "CUDA_ERROR_INVALID_SOURCE"),
        (Entry("cubin", "sm_90", 1, header_kind="ptx"), "a PTX header (compute_90) around an ELF image", "SIGSEGV"),
        (Entry("ptx", "sm_90", 1, header_kind="cubin"), "an ELF header (sm_90) around PTX text",
         "CUDA_ERROR_INVALID_IMAGE"),
        (Entry("ptx", "sm_100", 1, header_arch="sm_90"), "the header says compute_90, the PTX .target is sm_100",
         "CUDA_ERROR_INVALID_PTX"),
        (Entry("ptx", "sm_89", 1, header_arch="sm_90"), "the header says compute_90, the PTX .target is sm_89", None),
        (Entry("cubin", "sm_90", 1), None, None),
    ],
)  # fmt: skip
def test_header_payload_mismatch_is_flagged_and_predicted(builder, tmp_path, capsys, entry, mismatch, outcome):
    from cuda_fatbin import select_entry
    from cuda_fatbin._cli import main

    # a valid entry that would run too, after it: the driver does not fall back to it
    other = Entry("ptx", "sm_89", 2)
    data = build_case(Case("t", "header_mismatch", (entry, other)), builder)
    got = read_fatbin(data).entries[0]
    assert got.payload_mismatch == mismatch
    sel = select_entry(data, "9.0")
    if outcome is None:
        assert sel.entry is not None and sel.entry.identifier == "t1"
    else:
        assert sel.entry is None and outcome in sel.reason and "header_mismatch" in sel.rules
    path = tmp_path / "m.fatbin"
    path.write_bytes(data)
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert ("warning: entry 1" in out) == (mismatch is not None)
    assert main(["inspect", str(path), "--json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)["files"]
    assert [e["payload_mismatch"] for e in record["fatbins"][0]["entries"]] == [mismatch, None]


@pytest.mark.parametrize(
    ("gpu", "sms", "expected"),
    [  # (compatible, lower, lower2, higher), worked out from _Targets' definitions by hand
        ("9.0", SMS, (None, "sm_89", "sm_88", "sm_100")),
        ("8.9", SMS, ("sm_88", "sm_75", None, "sm_90")),  # one SM of a lower major
        ("9.0", (80, 89, 90), (None, "sm_89", "sm_80", None)),  # two SMs of lower majors, nothing higher
        ("8.6", (75, 80, 86, 87, 89), ("sm_80", "sm_75", None, "sm_87")),  # higher only in its own major
        ("10.0", (90, 100, 103, 110), (None, "sm_90", None, "sm_110")),  # 10.3 is its own major: not "higher"
        ("12.1", SMS, ("sm_120", "sm_110", "sm_103", None)),
        ("7.5", (75, 80), (None, None, None, "sm_80")),  # no lower major
    ],
)  # fmt: skip
def test_the_archs_of_each_relation_to_the_gpu(gpu, sms, expected):
    """compatible: the highest SM of the GPU's major below it; lower, lower2: the two highest of lower majors;
    higher: the lowest above it in another major, else the lowest above it."""
    from cuda_fatbin._arch import Arch

    t = _probe_matrix._targets(Arch.parse(gpu), sms)
    assert t.exact == f"sm_{Arch.parse(gpu).sm}"
    assert (t.compatible, t.lower, t.lower2, t.higher) == expected


def test_prediction_of_an_unreadable_or_entryless_fatbin(builder):
    case = Case("t", "r", (Entry("cubin", "sm_90", 1),))
    cut = b"\x50\xed\x55\xba\x01\x00\x10\x00" + (100).to_bytes(8, "little")  # 100 bytes declared, none there
    predicted, sel, note = predict(case, cut, "9.0", 13000)
    assert (predicted, sel) == ("ERROR", None)
    assert note == "unreadable: fatbin declares 100 bytes of entries but only 0 follow (at offset 0x8)"
    none = Case("t", "sass_other_major", (Entry("cubin", "sm_80", 1),))
    predicted, sel, note = predict(none, build_case(none, builder), "9.0", 13000)
    assert (predicted, note) == ("ERROR", "") and sel is not None and sel.entry is None
    one = Case("t", "sass_exact", (Entry("cubin", "sm_90", 7),))
    predicted, sel, note = predict(one, build_case(one, builder), "9.0", 13000)
    assert (predicted, note) == ("TAG 7", "")


def test_a_relocatable_entry_is_named_by_its_position_in_the_first_container(builder):
    """libnvfatbin's add_reloc takes no identifier: the probe names the chosen relocatable entry by its place
    among the first container's entries (the driver reads the first container only), in the case's order."""
    if not builder.nvcc:
        pytest.skip("relocatable PTX needs nvcc -rdc")
    two = Case("t", "reloc_ptx", (Entry("cubin", "sm_80", 1), Entry("reloc", "sm_90", 2)))
    predicted, sel, note = predict(two, build_case(two, builder), "9.0", 13000)
    assert (predicted, note) == ("TAG 2", "") and sel is not None and sel.entry.kind == "reloc"
    apart = Case("t", "reloc_ptx", (Entry("reloc", "sm_90", 1, container=1), Entry("cubin", "sm_80", 2),
                                     Entry("reloc", "sm_90", 3)))  # fmt: skip
    predicted, sel, note = predict(apart, build_case(apart, builder), "9.0", 13000)
    assert (predicted, note) == ("TAG 3", "")


def _result(name, observed, predicted, agree, not_observable=None):
    entry = types.SimpleNamespace(describe=lambda: "cubin sm_90")
    case = types.SimpleNamespace(name=name, rule="exact", entries=[entry, entry], env=(("CUDA_DISABLE_PTX_JIT", "1"),),
                                 env_text="CUDA_DISABLE_PTX_JIT=1", cache="cold")  # fmt: skip
    return _probe.CaseResult(case, observed, predicted, agree, "r", (), not_observable)


def test_the_probe_command_prints_each_case_the_summary_and_fails_on_a_disagreement(monkeypatch):
    """What `cuda-fatbin probe` prints, from a report the fake probe gives (the GPU runs: tests/gpu)."""
    from cuda_fatbin import _driver
    from cuda_fatbin._cli import main

    results = [_result("a", "TAG 1", "TAG 1", True), _result("b\x1b[31m", "TAG 2", "TAG 1", False),
               _result("c", "", "ERROR", False, not_observable="needs two GPUs")]  # fmt: skip
    report = _probe.ProbeReport("Fake GPU", "9.0", 13000, {}, "2026-12-03T00:00:00Z", 12.4, 2, results, (80, 90))
    calls = []

    def fake_probe(*, jobs=None, select=(), progress=None, limit=None):
        calls.append((jobs, list(select), progress is not None))
        if progress is not None:
            progress(1, 3, "x\x1b" + "y" * 70)
        return report

    monkeypatch.setattr(_probe, "probe", fake_probe)
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    assert main(["probe", "--case", "a", "--case", "b", "--jobs", "1"]) == 1
    assert calls == [(1, ["a", "b"], False)] and err.getvalue() == ""
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["case", "entries", "env", "observed", "predicted", "agree"]
    rows = {line.split()[0]: line.split() for line in lines[2:5]}
    assert "not observable" not in lines[2] + lines[3]  # only where a case could not be observed
    assert rows["a"][-3:] == ["TAG", "1", "yes"] and rows["b\\x1b[31m"][-3:] == ["TAG", "1", "NO"]
    assert "not observable: needs two GPUs" in lines[4] and lines[4].split()[-2:] == ["ERROR", "-"]
    assert lines[2].split()[1:6] == ["cubin", "sm_90;", "cubin", "sm_90", "CUDA_DISABLE_PTX_JIT=1"]
    assert lines[-1] == ("Fake GPU (compute capability 9.0), driver 13000: 2 cases run in 12 s, 1 disagreement(s), "
                         "1 not observable here")  # fmt: skip
    # JSON: the report's document, exit 1 while a case disagrees, 0 once none does
    out.seek(0), out.truncate()
    assert main(["probe", "--json"]) == 1
    assert out.getvalue() == json.dumps(report.to_dict(), indent=1) + "\n"
    results[1].agree = True
    out.seek(0), out.truncate()
    assert main(["probe", "--json"]) == 0 and main(["probe"]) == 0
    assert calls[-1] == (None, [], False)
    # on a terminal: progress on one line, then that line cleared
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    assert main(["probe"]) == 0
    assert term.getvalue() == f"\r[1/3] x\\x1b{'y' * 55}".ljust(78) + "\r".ljust(80) + "\r"

    def no_driver(**kwargs):
        raise _driver.NoDriverError("the probe needs a GPU and its driver: no CUDA driver library")

    monkeypatch.setattr(_probe, "probe", no_driver)
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    assert main(["probe"]) == 1
    assert err.getvalue() == "cuda-fatbin probe: the probe needs a GPU and its driver: no CUDA driver library\n"


@pytest.mark.parametrize("gpu, rule, loads", [
    ("8.6", "sass_lower_minor", "cubin"), ("8.9", "sass_lower_minor", "cubin"), ("8.7", "sass_tegra", "ptx"),
])  # fmt: skip
def test_the_matrix_asks_a_jetson_whether_lower_minor_sass_runs(builder, gpu, rule, loads):
    """On a Jetson the probe, run unchanged, predicts the PTX beside SASS of a lower minor (docs/selection.md,
    "Tegra"): a driver that took the SASS would show as a disagreement on a sass_tegra case."""
    cases = [c for c in matrix(gpu, [75, 80, 86, 87, 89, 90]) if c.name.startswith("cubin compatible + ptx lower")]
    assert cases and {c.rule for c in cases} == {rule}
    for case in cases:
        predicted, sel, _note = predict(case, build_case(case, builder), gpu, None)
        assert sel is not None and sel.entry is not None and sel.entry.kind == {"cubin": "elf", "ptx": "ptx"}[loads]
        assert predicted.startswith("TAG ")
