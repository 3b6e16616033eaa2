# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""``cuda-fatbin size``: figures checked against libnvfatbin rebuilds and against cubloaty on a real library."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_testing import cli_main
from cuda_fatbin import iter_fatbins
from cuda_fatbin._fatbin import FatbinBuilder, FatbinOptions
from cuda_fatbin._size import parse_size, size

SPECS = ("sm_75", "sm_80", "sm_90")


def _build(artifacts, specs, ptx=("sm_90",), mode="none", tag="") -> bytes:
    with FatbinBuilder(FatbinOptions(compress_mode=mode)) as b:
        for s in specs:
            b.add_cubin(artifacts[("cubin", s)], identifier=f"k{s}{tag}")
        for s in ptx:
            b.add_ptx(artifacts[("ptx", s)], s.replace("sm_", "compute_"), f"p{s}{tag}")
        return b.build()


def test_figures_add_up_and_match_the_reader(artifacts, tmp_path):
    data = _build(artifacts, SPECS)
    (tmp_path / "k.fatbin").write_bytes(data)
    (tmp_path / "copy.fatbin").write_bytes(data)  # every payload stored twice
    report = size([tmp_path], max_workers=1)
    t = report.totals()
    assert t["binaries"] == 2 and t["file_bytes"] == t["device_bytes"] == 2 * len(data)
    assert t["sections"] == {"registered": 2 * len(data), "relocatable": 0, "data": 0}  # a raw fatbin: as loaded
    entries = [e for fb in iter_fatbins(data) for e in fb.iter_entries()]
    kinds = report.by_kind()
    assert sorted(kinds) == sorted(f"{e.kind} {e.arch}" for e in entries)
    for e in entries:
        assert kinds[f"{e.kind} {e.arch}"] == {"entries": 2, "stored_bytes": 2 * e.stored_size, "bytes": 2 * e.size}
    # the SASS categories add up to the uncompressed cubins, byte for byte
    sass = sum(len(e.data()) for e in entries if e.kind == "elf")
    assert sum(t["sass_categories"].values()) == 2 * sass and t["sass_categories"]["code"] > 0
    assert {k["name"] for k in report.kernels()} >= {"saxpy"}
    # duplicates: one per entry, each wasting one record
    dups = report.duplicates()
    assert len(dups) == len(entries) and all(d["copies"] == 2 and d["binaries"] == 2 for d in dups)
    assert t["overhead_bytes"] + sum(e.stored_size for e in entries) * 2 == t["device_bytes"]
    assert t["duplicate_bytes"] + t["overhead_bytes"] // 2 >= len(data) - 16  # all but a fatbin header


@pytest.mark.parametrize("drop", [["sm_80"], ["sm_75", "sm_90"], ["compute_90"], ["sm_80", "compute_90"]])
@pytest.mark.parametrize("mode", ["none", "size"])
def test_drop_projection_matches_a_libnvfatbin_rebuild(artifacts, tmp_path, drop, mode):
    full = _build(artifacts, SPECS, mode=mode)
    (tmp_path / "k.fatbin").write_bytes(full)
    report = size([tmp_path / "k.fatbin"], drop=drop, max_workers=1)
    kept = [s for s in SPECS if s not in drop]
    rebuilt = _build(artifacts, kept, ptx=() if "compute_90" in drop else ("sm_90",), mode=mode)
    projected = report.totals()["projected_bytes"]
    assert projected < len(full)
    assert abs(projected - len(rebuilt)) <= 0.02 * len(rebuilt), (projected, len(rebuilt), len(full))


@pytest.mark.parametrize(
    ("keep", "drop", "kept_ptx"),
    [
        (["compute_90"], [], ["sm_90"]),
        (["compute_75", "sm_90"], [], ["sm_75", "sm_90"]),  # sm_90 names the PTX for sm_90 here too
        (["compute_80"], [], []),  # no PTX for sm_80: every PTX goes, and the binary is named as left without
        (["compute_90"], ["sm_80", "compute_90"], []),  # --drop wins
        (["compute_75"], ["sm_75"], ["sm_75"]),
    ],
)
@pytest.mark.parametrize("mode", ["none", "size"])
def test_keep_ptx_for_projection_matches_a_libnvfatbin_rebuild(artifacts, tmp_path, keep, drop, kept_ptx, mode):
    ptx = ("sm_75", "sm_90")
    full = _build(artifacts, SPECS, ptx=ptx, mode=mode)
    (tmp_path / "k.fatbin").write_bytes(full)
    report = size([tmp_path / "k.fatbin"], keep_ptx_for=keep, drop=drop, max_workers=1)
    kept_sass = [s for s in SPECS if s not in drop]
    rebuilt = _build(artifacts, kept_sass, ptx=kept_ptx, mode=mode)
    t = report.totals()
    assert t["projected_bytes"] <= len(full) and t["left_without_ptx"] == (0 if kept_ptx else 1)
    assert abs(t["projected_bytes"] - len(rebuilt)) <= 0.02 * len(rebuilt), (t["projected_bytes"], len(rebuilt))
    assert report.keep_ptx_for == sorted(set(keep))


def test_keep_ptx_for_on_the_command_line(artifacts, tmp_path):
    import jsonschema

    data = _build(artifacts, SPECS, ptx=("sm_75", "sm_90"))
    (tmp_path / "k.fatbin").write_bytes(data)
    schema = json.loads(resources.files("cuda_fatbin").joinpath("schemas", "size.json").read_text())
    res = cli_main("size", tmp_path / "k.fatbin", "--json", "--keep-ptx-for", "compute_90")
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, schema)
    assert res.returncode == 0 and doc["keep_ptx_for"] == ["compute_90"] and doc["totals"]["left_without_ptx"] == 0
    assert doc["totals"]["projected_bytes"] < len(data)
    res = cli_main("size", tmp_path / "k.fatbin", "--keep-ptx-for", "compute_80", "--budget", str(len(data)))
    assert res.returncode == 0 and "with PTX only for compute_80" in res.stdout, res.stdout
    assert "1 binaries would keep no PTX" in res.stdout and "projected total" in res.stderr
    for bad in ("90", "compute90", "ptx"):
        assert cli_main("size", tmp_path, "--keep-ptx-for", bad).returncode == 2


def test_cli_text_json_schema_and_budget(artifacts, tmp_path):
    import jsonschema

    data = _build(artifacts, SPECS)
    (tmp_path / "k.fatbin").write_bytes(data)
    (tmp_path / "bad.fatbin").write_bytes(data[:200])  # a cut fatbin: an error row, exit 1
    schema = json.loads(resources.files("cuda_fatbin").joinpath("schemas", "size.json").read_text())
    res = cli_main("size", tmp_path / "k.fatbin", "--json", "--drop", "sm_80", "--budget", str(len(data)))
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, schema)
    assert res.returncode == 0 and doc["totals"]["projected_bytes"] < len(data) and not doc["over_budget"]
    res = cli_main("size", tmp_path / "k.fatbin", "--json", "--recompress", "size", "--budget", "1K")
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, schema)
    assert res.returncode == 1 and doc["over_budget"] and doc["recompress"] == "size"
    assert 0 < doc["totals"]["projected_bytes"] < len(data)
    res = cli_main("size", tmp_path / "k.fatbin", "--budget", str(len(data) - 1))
    assert res.returncode == 1 and "OVER the budget" in res.stderr
    res = cli_main("size", tmp_path / "k.fatbin", "--drop", "sm_80", "--budget", str(len(data) - 1))
    assert res.returncode == 0 and "without sm_80" in res.stdout and "within the budget" in res.stderr
    res = cli_main("size", tmp_path, "--json", "--top", "1")
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, schema)
    assert res.returncode == 1 and doc["unreadable"] == 1 and len(doc["kernels"]) == 1
    for bad in (
        ["--drop", "sm80"],
        ["--drop", "compute_x"],
        ["--budget", "lots"],
        ["--top", "0"],
        ["--recompress", "x"],
    ):
        assert cli_main("size", tmp_path, *bad).returncode == 2


def test_parse_size():
    assert parse_size("100M") == 100 << 20 and parse_size("1.5G") == 3 << 29 and parse_size("300MB") == 300 << 20
    assert parse_size("7") == 7 and parse_size("2k") == 2048 and parse_size("1GiB") == 1 << 30
    for bad in ("", "M", "-1M", "1X", "1" * 50, "1.2.3G"):
        with pytest.raises(ValueError, match="not a size"):
            parse_size(bad)


def test_hostile_sass_image_is_counted_not_fatal(artifacts, tmp_path):
    """A cubin in a fatbin whose section table points outside it: its bytes go to "other", the rest is measured."""
    cubin = artifacts[("cubin", "sm_80")]
    data = bytearray(_build(artifacts, ["sm_80"], ptx=()))
    at = bytes(data).find(cubin[:64])
    data[at + 0x28 : at + 0x30] = (len(cubin) * 4).to_bytes(8, "little")  # e_shoff past the end
    (tmp_path / "bad.fatbin").write_bytes(bytes(data))
    report = size([tmp_path], max_workers=1)
    [b] = report.binaries
    assert b.error is None and b.unparsed == 1 and b.device_bytes == len(data)
    assert set(b.categories) == {"other"} and len(cubin) <= b.categories["other"]


@pytest.fixture(scope="module")
def curand_wheel_path() -> Path:
    from test_scan import curand_wheel

    return curand_wheel.__wrapped__()


@pytest.fixture(scope="module")
def libcurand(tmp_path_factory, curand_wheel_path) -> Path:
    wheel = curand_wheel_path
    dest = tmp_path_factory.mktemp("curand") / "libcurand.so.10"
    with zipfile.ZipFile(wheel) as zf, zf.open("nvidia/cu13/lib/libcurand.so.10") as src, open(dest, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return dest


def test_libcurand_matches_cubloaty(libcurand):
    cubloaty = shutil.which("cubloaty", path=str(Path(sys.executable).parent)) or shutil.which("cubloaty")
    if cubloaty is None:
        pytest.skip("cubloaty is not installed (pip install cubloaty==0.2.0b1)")
    res = subprocess.run([cubloaty, "-f", "json", "-n", "1", str(libcurand)], capture_output=True, text=True)
    theirs = json.loads(res.stdout)
    report = size([libcurand], max_workers=1)
    t = report.totals()
    assert t["file_bytes"] == theirs["file_size"]
    assert abs(t["device_bytes"] - theirs["device_file_size"]) <= 0.02 * theirs["device_file_size"]
    kinds = report.by_kind()
    sass = {k: v for k, v in theirs["architectures"].items() if v["kind"] == "sass"}
    assert len(sass) == 9
    for arch, row in sass.items():
        ours = kinds[f"elf {arch}"]
        assert abs(ours["bytes"] - row["size"]) <= 0.02 * row["size"], arch
        assert abs(ours["stored_bytes"] - row["file_size"]) <= 0.02 * row["file_size"], arch


@pytest.mark.parametrize("mode", ["none", "speed", "balance", "size"])
@pytest.mark.parametrize("source_mode", ["none", "size"])
def test_recompress_projection_matches_a_libnvfatbin_rebuild(artifacts, tmp_path, mode, source_mode):
    """libnvfatbin with -compress-all compresses every entry; the projection must land within 5% of its output."""
    specs = [s for s in ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120") if ("cubin", s) in artifacts]
    with FatbinBuilder(FatbinOptions(compress_mode=source_mode, compress_all=source_mode != "none")) as b:
        for s in specs:
            b.add_cubin(artifacts[("cubin", s)], identifier=f"k{s}")
        b.add_ptx(artifacts[("ptx", "sm_75")], "compute_75", "p")
        full = b.build()
    (tmp_path / "k.fatbin").write_bytes(full)
    projected = size([tmp_path], recompress=mode, max_workers=1).totals()["projected_bytes"]
    with FatbinBuilder(FatbinOptions(compress_mode=mode, compress_all=mode != "none")) as b:
        for s in specs:
            b.add_cubin(artifacts[("cubin", s)], identifier=f"k{s}")
        b.add_ptx(artifacts[("ptx", "sm_75")], "compute_75", "p")
        rebuilt = b.build()
    assert abs(projected - len(rebuilt)) <= 0.05 * len(rebuilt), (projected, len(rebuilt), len(full))


def test_recompress_codecs_are_libnvfatbin_s_byte_for_byte(artifacts):
    """Each mode's codec and level (RECOMPRESS) gives the very payload size libnvfatbin stores."""
    from cuda_fatbin import read_fatbin
    from cuda_fatbin._size import _compressed_size

    cubin = artifacts[("cubin", "sm_90")] * 1  # one image, large enough to be compressed
    ptx = artifacts[("ptx", "sm_90")]
    for mode in ("speed", "balance", "size"):
        with FatbinBuilder(FatbinOptions(compress_mode=mode, compress_all=True)) as b:
            b.add_cubin(cubin, identifier="c")
            b.add_ptx(ptx, "compute_90", "p")
            fb = read_fatbin(b.build())
        for e in fb.entries:
            assert e.compression == ("lz4" if mode == "speed" else "zstd"), (mode, e.kind)
            assert e.stored_size == _compressed_size(e.data(), mode), (mode, e.kind)


def test_docstring_examples_run():
    import doctest

    import cuda_fatbin._size as module

    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    assert doctest.testmod(module, optionflags=flags).failed == 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), min_size=1, max_size=8))
def test_hostile_bytes_give_figures_or_an_error_row_never_an_exception(artifacts, tmp_path, edits):
    """Any byte of a compressed fatbin changed: figures or an error row; the figures still add up."""
    data = bytearray(_build(artifacts, SPECS, mode="size"))
    for at, value in edits:
        data[at % len(data)] = value
    path = tmp_path / "x.fatbin"
    path.write_bytes(bytes(data))
    report = size([path], drop=["sm_80"], recompress="speed", max_workers=1)
    for b in report.binaries:
        assert b.error or (b.device_bytes <= b.file_bytes == len(data) and report.projected(b) >= 0)
    report.to_dict()


def test_a_wheel_names_its_distribution_and_meets_a_budget(curand_wheel_path):
    res = cli_main("size", curand_wheel_path, "--json", "--drop", "sm_87", "--budget", "100M")
    doc = json.loads(res.stdout)
    [dist] = doc["distributions"]
    assert dist["distribution"] == "nvidia-curand 10.4.5.25" and dist["file_bytes"] == 104860296
    assert res.returncode == 0 and doc["totals"]["projected_bytes"] < 100 << 20 < doc["totals"]["file_bytes"]
    assert cli_main("size", curand_wheel_path, "--budget", "99M").returncode == 1


def _figures_one_by_one(path):
    """The SASS figures of each entry read alone, as a plain reading gives them: ``data()`` (a copy), then every
    section named by ``iter_sections``; ``None`` when the file cannot be read."""
    import collections

    from cuda_fatbin._elf import iter_sections
    from cuda_fatbin._size_sass import _category

    cats, kernels, unparsed, copies = collections.Counter(), {}, 0, []
    try:
        fatbins = list(iter_fatbins(str(path), embedded=True, relocatable=True))
    except ValueError:
        return None
    for e in (e for fb in fatbins for e in fb.iter_entries() if e.kind == "elf"):
        try:
            data = e.data()
        except ValueError:
            unparsed += 1
            cats["other"] += e.size
            continue
        try:
            sections = list(iter_sections(data))
        except ValueError:
            unparsed += 1
            cats["other"] += len(data)
            continue
        ranges = {}  # a section of the bytes of one before it is another name for them: counted once
        for s in sections:
            if s.type != 8 and s.size:
                ranges.setdefault((s.offset, s.size), s)
        if sum(size for _offset, size in ranges) > len(data):  # sections that overlap otherwise: not a real image
            unparsed += 1
            cats["other"] += len(data)
            continue
        counted = {id(s) for s in ranges.values()}
        held = 0
        names = set()
        for s in sections:
            if id(s) in counted:
                held += s.size
                cats[_category(s.name)] += s.size
        sections = [s._replace(name=name) for s, name in zip(sections, _whole_names(data), strict=True)
                    if id(s) in counted]  # fmt: skip
        for s in sections:  # a kernel keeps its whole name
            if s.type != 8 and s.size and _category(s.name[:256]) == "code" and s.name.startswith(".text."):
                row = kernels.setdefault(s.name[6:], [0, 0])
                row[0] += s.size
                names.add(s.name[6:])
        for name in names:  # images: a kernel's code split over two sections of one name is one image of it
            kernels[name][1] += 1
        cats["headers"] += max(0, len(data) - held)
        copies.extend(_own_sections(sections, data, names))
    return dict(+cats), kernels, unparsed, sorted(copies)


def _whole_names(data):
    """Each section's name read to its NUL whatever its length, cut at _kernels.MAX_NAME with "…" as kernel names
    are (iter_sections cuts every name at 256 bytes)."""
    from cuda_fatbin._elf import name_table, read_header, section_headers
    from cuda_fatbin._kernels import MAX_NAME

    header = read_header(data)
    table = name_table(data, header)
    out = []
    for name_off, _t, _o, _s in section_headers(data, header):
        end = table.find(b"\0", name_off)
        name = table[name_off : end if end >= 0 else len(table)].decode("latin-1")
        out.append(name if len(name) <= 6 + MAX_NAME or not name.startswith(".text.") else name[: 6 + MAX_NAME] + "…")
    return out


def _own_sections(sections, data, kernels):
    """``(kernel, bytes of its sections, CRC-32 of its code)`` per kernel: its ``.text.K`` sections and every
    other section ``.A.B.K`` whose longest dot-suffix that names a kernel is K."""
    import zlib

    own = {k: [0, 0] for k in kernels}
    for s in sections:
        if s.type == 8 or not s.size:
            continue
        if s.name.startswith(".text."):
            own[s.name[6:]][0] += s.size
            own[s.name[6:]][1] = zlib.crc32(data[s.offset : s.offset + s.size], own[s.name[6:]][1])
        elif s.name.count(".") > 1:
            parts = s.name.split(".")
            for i in range(2 if s.name.startswith(".") else 1, len(parts)):  # after each dot but a leading one
                if ".".join(parts[i:]) in own:
                    own[".".join(parts[i:])][0] += s.size
                    break
    return [(k, n, crc) for k, (n, crc) in own.items()]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), max_size=6), st.sampled_from(["none", "size"]))
def test_sass_figures_read_in_place_and_once_per_payload_are_those_of_each_payload_alone(artifacts, tmp_path, edits,
                                                                                         mode):  # fmt: skip
    """Uncompressed images are measured in place and a payload stored again is not parsed again: the figures are
    still, byte for byte, those of each entry decompressed and parsed on its own (hostile bytes included)."""
    cubins = [artifacts[("cubin", s)] for s in ("sm_80", "sm_90")]
    with FatbinBuilder(FatbinOptions(compress_mode=mode)) as b:
        for i, cubin in enumerate(cubins * 2):  # each image stored twice
            b.add_cubin(cubin, identifier=f"k{i}")
        data = bytearray(b.build())
    for at, value in edits:
        data[at % len(data)] = value
    path = tmp_path / "x.fatbin"
    path.write_bytes(bytes(data))
    expected = _figures_one_by_one(path)
    rows = size([path], max_workers=1).binaries
    if not rows:  # no fatbin is found any more
        assert expected in (None, ({}, {}, 0, []))
        return
    [b] = rows
    if expected is None:
        assert b.error
        return
    cats, kernels, unparsed, copies = expected
    assert ({k: v for k, v in b.categories.items() if v}, b.kernels, b.unparsed) == (cats, kernels, unparsed)
    assert sorted((kernel, own, crc) for _key, kernel, crc, _image, own in b.copies) == copies


def test_size_is_a_public_name_loaded_on_first_use(artifacts, tmp_path):
    """``cuda_fatbin.size`` and ``SizeReport`` are the size module's, and ``import cuda_fatbin`` does not load it."""
    code = (
        "import sys, cuda_fatbin\n"
        "assert 'cuda_fatbin._size' not in sys.modules\n"
        "from cuda_fatbin import SizeReport, size\n"
        "import cuda_fatbin._size as m\n"
        "assert size is m.size and SizeReport is m.SizeReport\n"
        "report = size([sys.argv[1]], max_workers=1)\n"
        "assert isinstance(report, SizeReport)\n"
        "print(report.totals()['device_bytes'])\n"
    )
    data = _build(artifacts, SPECS)
    (tmp_path / "k.fatbin").write_bytes(data)
    res = subprocess.run([sys.executable, "-c", code, str(tmp_path / "k.fatbin")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert int(res.stdout) == len(data)


_TEMPLATE = """
template <typename T> __global__ void scale(T* p, T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = p[i] * a + T(1);
}
static __global__ void helper(float* p) { p[threadIdx.x] += 2.0f; }
"""
_TUS = {
    "a.cu": '#include "k.cuh"\n__global__ void only_a(int* p) { p[threadIdx.x] = 7; }\n'
    "void launch_a(float* p, int n) { scale<float><<<1, 32>>>(p, 2.0f, n); only_a<<<1, 1>>>((int*)p); "
    "helper<<<1, 1>>>(p); }\n",
    "b.cu": '#include "k.cuh"\nvoid launch_b(float* p, double* q, int n) { scale<float><<<1, 32>>>(p, 3.0f, n); '
    "scale<double><<<1, 32>>>(q, 3.0, n); helper<<<1, 1>>>(p); }\n",
}


@pytest.fixture(scope="module")
def two_tus(needs_nvcc, tmp_path_factory) -> Path:
    """``libab.so`` (a.cu and b.cu, which both launch ``scale<float>`` and a static ``helper``), and ``liba.so``
    and ``libb.so`` (one of them each), built by nvcc 13 for sm_80 and sm_90 (+ compute_90 PTX)."""
    from fatbin_testing import run_tool

    root = tmp_path_factory.mktemp("tus")
    (root / "k.cuh").write_text(_TEMPLATE)
    gencode = ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=[sm_90,compute_90]"]
    for name, text in _TUS.items():
        (root / name).write_text(text)
        obj = name.replace(".cu", ".o")
        run_tool([needs_nvcc, "-c", "-Xcompiler", "-fPIC", *gencode, name, "-o", obj], cwd=root, outputs=[root / obj])
    for lib, objs in (("libab.so", ["a.o", "b.o"]), ("liba.so", ["a.o"]), ("libb.so", ["b.o"])):
        run_tool([needs_nvcc, "-shared", *objs, "-o", lib], cwd=root, outputs=[root / lib])
    return root


def test_kernels_of_several_translation_units_as_cubloaty_reports_them(two_tus):
    """cubloaty 0.2.0b1 as the oracle: the same kernels, archs and copies; the bytes are the kernel's own sections
    (cubloaty also gives each function its symbol-table entries and names: a few hundred bytes more)."""
    cubloaty = shutil.which("cubloaty", path=str(Path(sys.executable).parent)) or shutil.which("cubloaty")
    if cubloaty is None:
        pytest.skip("cubloaty is not installed (pip install cubloaty==0.2.0b1)")
    lib = two_tus / "libab.so"
    res = subprocess.run([cubloaty, "-f", "json", str(lib)], capture_output=True, text=True, check=True)
    theirs = {(d["locations"][0]["mangled"], d["arch"]): d for d in json.loads(res.stdout)["duplicates"]
              if d["arch"].startswith("sm_")}  # fmt: skip
    report = size([lib], max_workers=1)
    ours = {(d["name"], d["entry"].split()[1]): d for d in report.kernel_duplicates()}
    assert set(ours) == set(theirs) == {(k, a) for k in ("_Z5scaleIfEvPT_S0_i", "_Z6helperPf") for a in
                                        ("sm_80", "sm_90")}  # fmt: skip
    for key, d in ours.items():
        assert d["copies"] == theirs[key]["copies"] == 2 and d["binaries"] == 1, key
        assert 0.7 * theirs[key]["size"] <= d["bytes"] <= theirs[key]["size"], (key, d, theirs[key])
        assert d["wasted_bytes"] == d["bytes"]  # two copies of the same code and sections
    assert report.totals()["kernel_duplicate_bytes"] == sum(d["wasted_bytes"] for d in ours.values())
    assert report.duplicates() == []  # no image is stored twice: the copies are kernels, not payloads


def test_kernels_of_several_binaries_and_images_stored_twice(two_tus, tmp_path):
    """Across binaries (liba.so, libb.so) the same kernels are copies; a binary copied whole adds payload
    duplicates, not kernel copies (an image stored twice is one copy)."""
    import jsonschema

    folder = tmp_path / "env"
    folder.mkdir()
    for name in ("liba.so", "libb.so"):
        shutil.copy(two_tus / name, folder / name)
    shutil.copy(two_tus / "liba.so", folder / "liba-copy.so")
    report = size([folder], max_workers=1)
    dups = {(d["name"], d["entry"]): d for d in report.kernel_duplicates()}
    assert set(dups) == {(k, f"elf {a}") for k in ("_Z5scaleIfEvPT_S0_i", "_Z6helperPf") for a in ("sm_80", "sm_90")}
    for d in dups.values():  # liba.so's image is counted once, under the first of its two files
        names = sorted(Path(p).name for p in d["paths"])
        assert (
            d["copies"] == 2 and d["binaries"] == 2 and names in (["liba-copy.so", "libb.so"], ["liba.so", "libb.so"])
        )
    assert {d["entry"] for d in report.duplicates()} >= {"elf sm_80", "elf sm_90"}  # liba.so's images, twice
    res = cli_main("size", folder, "--json", "--top", "2")
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, json.loads(resources.files("cuda_fatbin").joinpath("schemas", "size.json").read_text()))
    assert len(doc["kernel_duplicates"]) == 2 and doc["totals"]["kernel_duplicate_bytes"] == sum(
        d["wasted_bytes"] for d in dups.values()
    )
    text = cli_main("size", folder).stdout
    assert "kernels compiled into several SASS images of one arch (translation units), same code: 4" in text


def test_what_a_worker_remembers_is_bounded_and_changes_no_figure(artifacts, tmp_path, monkeypatch):
    """The payloads and name tables a process remembers (to parse each once) are capped; with tiny caps the
    figures are the same, only computed again."""
    from cuda_fatbin import _size, _size_sass

    for i, (specs, mode) in enumerate([(SPECS, "none"), (SPECS[:2], "size"), (SPECS[1:], "none")]):
        data = _build(artifacts, specs, mode=mode)
        (tmp_path / f"k{i}.fatbin").write_bytes(data)
        (tmp_path / f"copy{i}.fatbin").write_bytes(data)

    def measured() -> dict:
        for memo in (_size._SEEN, _size_sass._NAMES):
            memo.clear()
        return size([tmp_path], max_workers=1, recompress="speed").to_dict()

    roomy = measured()
    assert len(_size._SEEN) > 2 and len(_size_sass._NAMES) > 1  # the caps below are hit
    for module, name, cap in ((_size, "_SEEN_MAX", 2), (_size, "_SEEN_ROWS_MAX", 3), (_size_sass, "_NAMES_MAX", 1),
                              (_size_sass, "_NAMES_HELD_MAX", 10)):  # fmt: skip
        monkeypatch.setattr(module, name, cap)
    assert measured() == roomy
    assert len(_size._SEEN) <= 2 and len(_size_sass._NAMES) <= 1


def test_kernel_names_are_whole_and_demangled(tmp_path):
    """A kernel's name longer than a section name is read (256 bytes) is kept whole, as _kernels reads it from the
    symbol table (checked there against cuobjdump -symbols); text shows it demangled, JSON both spellings."""
    from cuda_fatbin import Program, ProgramOptions
    from cuda_fatbin._kernels import cubin_kernels, demangle

    ns = "n" + "x" * 299
    src = (f"namespace {ns} {{ struct T {{ float v; }}; }}\n"
           "template <typename X> __global__ void k(X* p) { p[0] = X(); }\n"
           f"template __global__ void k<{ns}::T>({ns}::T*);\n"
           'extern "C" __global__ void plain(int* p) { p[0] = 1; }\n')  # fmt: skip
    cubin = bytes(Program(src, "c++", ProgramOptions(arch="sm_90")).compile("cubin").code)
    (tmp_path / "k.cubin").write_bytes(cubin)
    names = sorted(cubin_kernels(cubin), key=len)
    assert [len(n) for n in names] == [5, 317]
    report = size([tmp_path / "k.cubin"], max_workers=1)
    assert sorted((k["name"] for k in report.kernels()), key=len) == names
    doc = json.loads(cli_main("size", tmp_path / "k.cubin", "--json").stdout)
    spelled = {k["name"]: k["demangled"] for k in doc["kernels"]}
    long_name = names[1]
    assert spelled == {"plain": "plain", long_name: demangle(long_name)}
    if spelled[long_name] != long_name:  # cpp-demangle installed (the test extra)
        assert spelled[long_name] == f"void k<{ns}::T>({ns}::T*)"
    text = cli_main("size", tmp_path / "k.cubin", "--wide").stdout
    assert spelled[long_name] in text and long_name not in text.replace(spelled[long_name], "")


def test_section_names_that_overlap_cost_what_the_image_holds(tmp_path, monkeypatch):
    """Thousands of sections whose names all start inside one long run of dots, none ending before 16 KiB: each
    would be read whole with every dot-suffix (gigabytes of work); the names read stay linear in the image and
    the image counts as one that cannot be parsed."""
    import struct

    from cuda_fatbin import _size_sass

    from elf_testing import make_elf

    n = 4000
    long_name = "." + "a." * 20000
    sections = [(long_name, 1, b"x"), *((".s", 1, b"y") for _ in range(n))]
    image = bytearray(make_elf(sections, machine=190, e_type=2, osabi=0x41, abi_version=8, flags=90 << 8))
    shoff, shentsize = struct.unpack_from("<QxxxxxxxxxxxxxxH", image, 0x28)[0], 64
    for i in range(n):  # every section named from inside the long name
        struct.pack_into("<I", image, shoff + (2 + i) * shentsize, 1 + 2 * i)
    (tmp_path / "k.cubin").write_bytes(bytes(image))
    read = [0]
    name_at = _size_sass.name_at
    monkeypatch.setattr(_size_sass, "name_at", lambda *a: read.__setitem__(0, read[0] + len(r := name_at(*a))) or r)
    _size_sass._NAMES.clear()
    [b] = size([tmp_path / "k.cubin"], max_workers=1).binaries
    assert b.error is None and b.unparsed == 1 and b.categories == {"other": len(image)}
    assert read[0] <= 4 * len(image), (read[0], len(image))


@pytest.mark.parametrize("shift", [0, 1])
def test_sections_that_overlap_cost_what_the_image_holds(tmp_path, shift):
    """Thousands of ``.text.k`` sections that all name one run of code (``shift`` 0: the same bytes; 1: each a byte
    further on): their bytes would be counted, and their CRC-32 taken, once per section (gigabytes from a file of a
    few MB). The same bytes named again are counted once; sections that overlap otherwise make the image one that
    cannot be parsed. The work stays linear in the image."""
    import struct
    import time

    from elf_testing import make_elf

    n, code = 4000, 1 << 20
    sections = [(".text.k", 1, b"\x01" * code), *((".text.k", 1, b"") for _ in range(n))]
    image = bytearray(make_elf(sections, machine=190, e_type=2, osabi=0x41, abi_version=8, flags=90 << 8))
    shoff = struct.unpack_from("<Q", image, 0x28)[0]
    offset, length = struct.unpack_from("<QQ", image, shoff + 64 + 0x18)
    for i in range(n):  # every section names the first one's bytes
        struct.pack_into("<QQ", image, shoff + (2 + i) * 64 + 0x18, offset + shift * (i + 1), length - shift * (i + 1))
    (tmp_path / "k.cubin").write_bytes(bytes(image))
    start = time.process_time()
    [b] = size([tmp_path / "k.cubin"], max_workers=1).binaries
    assert time.process_time() - start < 1.0
    assert b.error is None and sum(b.categories.values()) == len(image)
    if shift:
        assert b.unparsed == 1 and b.categories == {"other": len(image)} and b.kernels == {}
    else:
        assert b.unparsed == 0 and b.categories["code"] == code and b.kernels == {"k": [code, 1]}


def test_a_section_named_twice_is_counted_once(tmp_path):
    """Mercury cubins of -rdc objects (libnccl.so.2's sm_100 and sm_120 images) name the bytes of
    ``.nv.global.init`` a second time as ``.nv.merc.nv.global.init``: the image is read, its bytes counted once
    (by the first name), and the categories still add up to the image."""
    import struct

    from elf_testing import make_elf

    sections = [(".text.k", 1, b"\x01" * 256), (".nv.global.init", 1, b"\x02" * 512),
                (".nv.merc.nv.global.init", 1, b"")]  # fmt: skip
    image = bytearray(make_elf(sections, machine=190, e_type=1, osabi=0x41, abi_version=8, flags=100 << 8))
    shoff = struct.unpack_from("<Q", image, 0x28)[0]
    struct.pack_into("<QQ", image, shoff + 3 * 64 + 0x18, *struct.unpack_from("<QQ", image, shoff + 2 * 64 + 0x18))
    (tmp_path / "k.cubin").write_bytes(bytes(image))
    [b] = size([tmp_path / "k.cubin"], max_workers=1).binaries
    assert b.unparsed == 0 and b.categories["data"] == 512 and "mercury" not in b.categories
    assert b.categories["code"] == 256 and sum(b.categories.values()) == len(image)


def test_text_says_what_was_not_read(artifacts, tmp_path):
    """What the walk passes over (a symlink inside a folder, a FIFO) is said in text, as ``scan`` says it: bytes that
    a budget leaves out are never left out silently."""
    import os

    (tmp_path / "k.fatbin").write_bytes(_build(artifacts, SPECS))
    (tmp_path / "link.fatbin").symlink_to(tmp_path / "k.fatbin")
    os.mkfifo(tmp_path / "fifo")
    res = cli_main("size", tmp_path)
    assert res.returncode == 0
    said = "\nnot read: 1 FIFO, socket or device, 1 symlink (symlinks inside a folder are never followed)\n"
    assert said in res.stdout, res.stdout


def test_text_rankings_say_how_many_rows_top_cut(artifacts, tmp_path):
    """Each ranking cut by ``--top`` says how many rows it left out: payloads stored twice and distributions too."""
    data = _build(artifacts, SPECS)
    for name in ("a", "b"):
        with zipfile.ZipFile(tmp_path / f"{name}-1.0-py3-none-any.whl", "w") as zf:
            zf.writestr(f"{name}/k.fatbin", data)
            zf.writestr(f"{name}-1.0.dist-info/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    text = cli_main("size", tmp_path, "--top", "1", "--drop", "sm_80").stdout
    dups, dists = text.split("payloads stored more than once")[1], text.split("distribution  ")[1]
    assert "  ... 3 more (--top)" in dups.split("\n\n")[0], text
    assert "  ... 1 more (--top)" in dists.split("\n\n")[0], text


def test_one_arch_given_as_a_string_is_refused_by_name(artifacts, tmp_path):
    """``drop="sm_80"`` is a list of one spec per character: refused as ``paths="k.fatbin"`` is, naming the fix,
    not with an error about the spec ``"0"``; a path that does not exist is the FileNotFoundError the docstring
    names."""
    (tmp_path / "k.fatbin").write_bytes(_build(artifacts, SPECS))
    for kw in ({"drop": "sm_80"}, {"keep_ptx_for": "compute_90"}):
        [(name, spec)] = kw.items()
        with pytest.raises(TypeError, match=rf"{name}=\['{spec}'\]"):
            size([tmp_path / "k.fatbin"], max_workers=1, **kw)  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError):
        size([tmp_path / "missing.fatbin"], max_workers=1)


_CONCAT = ("sm_75", "sm_80", "sm_86", "sm_90")


@pytest.mark.parametrize(
    ("drop", "mode"),
    [(["sm_80"], None), (["sm_75", "sm_90"], None), ([], "size"), ([], "balance"), ([], "speed"), (["sm_86"], "speed")],
)
@pytest.mark.parametrize("built", ["speed", "size"])
def test_projection_of_a_concatenated_fatbin_matches_a_libnvfatbin_rebuild(artifacts, tmp_path, drop, mode, built):
    """libnvfatbin >= 13.4 -concat stores similar cubins as one compressed stream: dropping some, or recompressing
    them (the stream recompressed whole), is projected within 2% (drop) and 5% (recompress) of the rebuild."""
    from cuda_fatbin import build_fatbin, nvfatbin_version

    if nvfatbin_version() < (13, 4):
        pytest.skip("libnvfatbin < 13.4 has no -concat")
    specs = [s for s in _CONCAT if ("cubin", s) in artifacts]
    options = FatbinOptions(concat=True, compress_mode=built, compress_all=True)
    full = build_fatbin([artifacts[("cubin", s)] for s in specs], options=options)
    (tmp_path / "k.fatbin").write_bytes(full)
    projected = size([tmp_path / "k.fatbin"], drop=drop, recompress=mode, max_workers=1).totals()["projected_bytes"]
    if mode:
        options = FatbinOptions(concat=True, compress_mode=mode, compress_all=True)
    rebuilt = build_fatbin([artifacts[("cubin", s)] for s in specs if s not in drop], options=options)
    within = 0.05 if mode else 0.02
    assert abs(projected - len(rebuilt)) <= within * len(rebuilt), (projected, len(rebuilt), len(full))


def test_kernel_copies_leave_out_relocatable_images(tmp_path):
    """Two images of one arch with the same ``saxpy`` code are kernel copies when the runtime loads them
    (``.nv_fatbin``), not when they are device-link input (``__nv_relfatbin``)."""
    from elf_testing import make_elf
    from fatbin_testing import KERNEL_SRC, nvrtc_compile

    other = '\nextern "C" __global__ void other(int* p) { p[1] = 3; }\n'
    cubins = [nvrtc_compile(src, "80", "cubin") for src in (KERNEL_SRC, KERNEL_SRC + other)]
    for section in (".nv_fatbin", "__nv_relfatbin"):
        folder = tmp_path / section
        folder.mkdir()
        for i, cubin in enumerate(cubins):
            with FatbinBuilder(FatbinOptions()) as b:
                b.add_cubin(cubin)
                (folder / f"{i}.o").write_bytes(make_elf([(section, 1, b.build())]))
        report = size([folder], max_workers=1)
        copies = [(d["name"], d["entry"], d["copies"]) for d in report.kernel_duplicates()]
        assert copies == ([] if section == "__nv_relfatbin" else [("saxpy", "elf sm_80", 2)]), (section, copies)


def test_budget_is_over_only_above_it(artifacts, tmp_path):
    """``--budget`` exits 1 when the total is over it: a total equal to the budget is within it."""
    data = _build(artifacts, SPECS)
    (tmp_path / "k.fatbin").write_bytes(data)
    res = cli_main("size", tmp_path / "k.fatbin", "--budget", str(len(data)))
    assert res.returncode == 0 and "is within the budget" in res.stderr, res.stderr
    doc = json.loads(cli_main("size", tmp_path / "k.fatbin", "--budget", str(len(data)), "--json").stdout)
    assert doc["over_budget"] is False and doc["budget"] == len(data)


def test_binaries_without_ptx_are_not_said_to_lose_it(artifacts, tmp_path):
    """``--keep-ptx-for`` names the binaries that hold PTX and would hold none; one that never held any is not one."""
    (tmp_path / "sass.fatbin").write_bytes(_build(artifacts, SPECS, ptx=()))
    (tmp_path / "ptx.fatbin").write_bytes(_build(artifacts, SPECS, ptx=("sm_75",)))
    report = size([tmp_path], keep_ptx_for=["compute_90"], max_workers=1)
    assert [Path(p).name for p in report.left_without_ptx()] == ["ptx.fatbin"]


def test_sass_section_categories_are_the_documented_ones(tmp_path):
    """Each category of docs/scan.md by section name, and ``headers`` for what no section holds."""
    from elf_testing import make_elf

    named = {".text.k": "code", ".nv.merc.text.k": "mercury", ".nv.capmerc.text.k": "mercury",
             ".nv.constant0.k": "constant", ".nv.info.k": "info", ".nv.callgraph": "info", ".rel.text.k": "relocations",
             ".rela.debug_frame": "relocations", ".debug_line": "debug", ".nv_debug_line_sass": "debug",
             ".symtab": "symbols", ".nv.global.init": "data", ".nv.rel.action": "data",
             ".nv.unknown": "other"}  # fmt: skip
    sections = [(name, 1, bytes([i + 1]) * (8 * (i + 1))) for i, name in enumerate(named)]
    image = make_elf(sections, machine=190, e_type=2, osabi=0x41, abi_version=8, flags=90 << 8)
    (tmp_path / "k.cubin").write_bytes(image)
    [b] = size([tmp_path / "k.cubin"], max_workers=1).binaries
    expected: dict[str, int] = {}
    for i, category in enumerate(named.values()):
        expected[category] = expected.get(category, 0) + 8 * (i + 1)
    expected["symbols"] += len(b"\0".join(n.encode() for n in [*named, ".shstrtab"])) + 2  # make_elf's .shstrtab
    got = dict(b.categories)
    assert got.pop("headers") >= 64 and got == expected and sum(b.categories.values()) == len(image)


def test_a_kernel_of_two_code_sections_owns_both(tmp_path):
    """Two ``.text.k`` sections (a forged image: real ones name each section once): the kernel's code and own
    sections are both, with its ``.nv.info.k``."""
    from elf_testing import make_elf

    sections = [(".text.k", 1, b"\x01" * 16), (".nv.info.k", 1, b"\x02" * 8), (".text.k", 1, b"\x03" * 32)]
    image = make_elf(sections, machine=190, e_type=2, osabi=0x41, abi_version=8, flags=90 << 8)
    (tmp_path / "k.cubin").write_bytes(image)
    [b] = size([tmp_path / "k.cubin"], max_workers=1).binaries
    assert b.kernels == {"k": [48, 1]}
    assert [(kernel, own) for _key, kernel, _crc, _image, own in b.copies] == [("k", 56)]


def test_json_top_cuts_payload_duplicates_too(artifacts, tmp_path):
    """``--json --top N`` cuts ``kernels``, ``duplicates`` and ``kernel_duplicates`` alike (docs/scan.md)."""
    data = _build(artifacts, SPECS)
    for name in ("a", "b"):
        (tmp_path / f"{name}.fatbin").write_bytes(data)
    doc = json.loads(cli_main("size", tmp_path, "--json", "--top", "1").stdout)
    assert len(doc["duplicates"]) == 1 and doc["totals"]["duplicate_bytes"] > doc["duplicates"][0]["wasted_bytes"]


def test_recompress_keeps_a_payload_that_does_not_shrink_uncompressed():
    """As libnvfatbin: a payload that compression would not make smaller is projected as stored (padded to 8)."""
    import os

    from cuda_fatbin._size import _compressed_size

    noise = os.urandom(4001)
    assert {mode: _compressed_size(noise, mode) for mode in ("speed", "balance", "size")} == dict.fromkeys(
        ("speed", "balance", "size"), 4008
    )


def test_distributions_and_by_kind_order(artifacts, tmp_path):
    """Distributions count the binaries read (not the inputs that could not be), and ``by_kind`` lists the
    largest stored bytes first."""
    data = _build(artifacts, SPECS)
    (tmp_path / "k.fatbin").write_bytes(data)
    (tmp_path / "cut.fatbin").write_bytes(data[:200])
    report = size([tmp_path], max_workers=1)
    assert [(d["distribution"], d["binaries"]) for d in report.distributions()] == [("(no distribution)", 1)]
    stored = [row["stored_bytes"] for row in report.by_kind().values()]
    assert stored == sorted(stored, reverse=True) and len(set(stored)) > 1


def test_a_what_if_that_grows_the_binaries_says_more(artifacts, tmp_path):
    """``--recompress none`` of a compressed fatbin projects more bytes: said as "N KiB more", in the unit of the
    rest of the report, never as a negative count of bytes "less"."""
    data = _build(artifacts, SPECS, mode="size")
    (tmp_path / "k.fatbin").write_bytes(data)
    report = size([tmp_path / "k.fatbin"], recompress="none", max_workers=1)
    grown = report.totals()["projected_bytes"] - len(data)
    assert grown > 1024
    line = cli_main("size", tmp_path / "k.fatbin", "--recompress", "none").stdout.splitlines()[-1]
    assert line.endswith(f"{grown / 1024:.1f} KiB more (+{100 * grown / len(data):.1f}%)"), line
    assert "-" not in line.split(":")[-1], line


def test_members_of_a_concatenated_entry_share_its_stored_bytes(artifacts, tmp_path):
    """The members of a compressed concatenated entry share its stored bytes in proportion to their uncompressed
    sizes (docs/scan.md): their stored bytes add up to the entry's, not each to the whole of it."""
    from cuda_fatbin import build_fatbin, nvfatbin_version, read_fatbin

    if nvfatbin_version() < (13, 4):
        pytest.skip("libnvfatbin < 13.4 has no -concat")
    specs = [s for s in _CONCAT if ("cubin", s) in artifacts]
    options = FatbinOptions(concat=True, compress_mode="size")
    data = build_fatbin([artifacts[("cubin", s)] for s in specs], options=options)
    (tmp_path / "k.fatbin").write_bytes(data)
    tops = read_fatbin(data).entries
    kinds = size([tmp_path / "k.fatbin"], max_workers=1).by_kind()
    assert sorted(kinds) == sorted(f"elf {s}" for s in specs)
    stored = sum(row["stored_bytes"] for row in kinds.values())
    assert sum(t.stored_size for t in tops) - len(specs) <= stored <= sum(t.stored_size for t in tops)
    for top in tops:
        whole = sum(m.size for m in top.members)
        for m in top.members:
            assert kinds[f"elf {m.arch}"]["stored_bytes"] == top.stored_size * m.size // whole


def test_libcurand_sass_categories_add_up_to_its_images(libcurand):
    """libcurand.so.10's sm_100, sm_110 and sm_120 images name ``.nv.global.init`` (3.4 MB each) and
    ``.nv.constant3`` again as ``.nv.merc.nv.*``: counted once, the categories add up to the SASS images' bytes
    (they came to 74.1 MB of 64.1 MB, with 14.1 MB of Mercury code where there are 4.0 MB)."""
    report = size([libcurand], max_workers=1)
    cats = report.totals()["sass_categories"]
    sass = sum(row["bytes"] for key, row in report.by_kind().items() if key.startswith("elf "))
    assert sum(cats.values()) == sass == 64114352
    assert cats["mercury"] == 3972220 and report.totals()["unparsed_images"] == 0


def test_two_sections_that_overlap_make_an_image_that_cannot_be_parsed(tmp_path):
    """One section inside another (not the same bytes named twice): the bytes they would count exceed the image,
    which counts as one that cannot be parsed."""
    import struct

    from elf_testing import make_elf

    image = bytearray(make_elf([(".text.k", 1, b"\x01" * 4096), (".nv.info.k", 1, b"")], machine=190, e_type=2,
                               osabi=0x41, abi_version=8, flags=90 << 8))  # fmt: skip
    shoff = struct.unpack_from("<Q", image, 0x28)[0]
    offset, length = struct.unpack_from("<QQ", image, shoff + 64 + 0x18)
    struct.pack_into("<QQ", image, shoff + 2 * 64 + 0x18, offset + 8, length // 2)
    (tmp_path / "k.cubin").write_bytes(bytes(image))
    [b] = size([tmp_path / "k.cubin"], max_workers=1).binaries
    assert b.unparsed == 1 and b.categories == {"other": len(image)} and b.kernels == {}


def test_a_drop_that_matches_no_entry_is_said(artifacts, tmp_path):
    """``--drop sm_86`` where no binary holds sm_86 SASS (a typo, or ``sm_100`` for ``sm_100f``) saves nothing: the
    text says so instead of folding a silent 0 into the total of the other drops."""
    (tmp_path / "k.fatbin").write_bytes(_build(artifacts, SPECS))
    text = cli_main("size", tmp_path, "--drop", "sm_80", "--drop", "sm_86", "--drop", "compute_75").stdout
    assert "\nno binary holds compute_75, sm_86: nothing of it to drop\n" in text, text
    assert "nothing of it to drop" not in cli_main("size", tmp_path, "--drop", "sm_80").stdout
