# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""``cuda-fatbin metadata``: the variant properties the bytes justify, and ``--check`` against a wheel's own."""

from __future__ import annotations

import json
import re
import subprocess
import zipfile
from importlib import resources
from pathlib import Path

import pytest

from cli_testing import cli_main
from cuda_fatbin import Part, build_fatbin, metadata
from cuda_fatbin._metadata import MAX_VARIANT_JSON, read_declared
from test_scan import curand_wheel  # noqa: F401  (the session fixture: the wheel from PyPI)

from fatbin_testing import listing


def validate(doc: dict) -> None:
    import jsonschema

    schema = json.loads((resources.files("cuda_fatbin") / "schemas" / "metadata.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(doc)


def variant_json(label: str, nvidia: dict[str, list[str]]) -> str:
    """A ``variant.json`` as PEP 825 and variantlib 0.2.2 write it."""
    return json.dumps({
        "$schema": "https://variants-schema.wheelnext.dev/v0.2.0.json",
        "default-priorities": {"namespace": ["nvidia"]},
        "providers": {"nvidia": {"requires": ["nvidia-variant-provider>=0.0.1,<1.0.0"],
                                 "plugin-api": "nvidia_variant_provider.plugin:NvidiaVariantPlugin"}},
        "variants": {label: {"nvidia": nvidia}},
    })  # fmt: skip


def variant_wheel(path: Path, members: dict[str, bytes], declared: str | bytes | None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        zf.writestr("demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
        if declared is not None:
            zf.writestr("demo-1.0.dist-info/variant.json", declared)
    return path


@pytest.fixture(scope="module")
def sass80_90_ptx80(artifacts) -> bytes:
    parts = [artifacts[("cubin", "sm_80")], artifacts[("cubin", "sm_90")],
             Part(artifacts[("ptx", "sm_80")], kind="ptx", arch="sm_80")]  # fmt: skip
    return build_fatbin(parts)


@pytest.fixture(scope="module")
def sass80(artifacts) -> bytes:
    return build_fatbin([artifacts[("cubin", "sm_80")]])


def test_curand_wheel_gives_its_sass_as_real_and_its_ptx_floor_as_virtual(curand_wheel, tmp_path, cuobjdump_path):  # noqa: F811
    report = metadata([curand_wheel], max_workers=1)
    [pkg] = report.packages
    [lib] = [b for b in pkg.binaries if "libcurand.so" in b.path]
    with zipfile.ZipFile(curand_wheel) as zf:
        member = next(n for n in zf.namelist() if Path(n).name.startswith("libcurand.so"))
        extracted = tmp_path / "libcurand.so"
        extracted.write_bytes(zf.read(member))
    out = subprocess.run([cuobjdump_path, "-lelf", str(extracted)], capture_output=True, text=True, check=True).stdout
    theirs = sorted({arch[3:].rstrip("af") for kind, arch in listing(out) if kind == "elf"}, key=int)
    assert theirs == ["75", "80", "86", "87", "89", "90", "100", "110", "120"]
    assert [c.replace(".", "") for c in lib.sass] == theirs  # the SASS cuobjdump lists (stored fatbins add none)
    real = [p.split(" :: ")[2] for p in pkg.properties if ":: sm_arch ::" in p]
    assert real == [f"{cc}_real" for cc in theirs] + ["75_virtual"]
    assert "nvidia :: sm_arch :: 70_real" not in pkg.properties and pkg.cuda_arch == "7.5"
    # its PTX is of ISA 9.4 (cuobjdump -lptx names no ISA; the reader's own test checks the headers)
    assert pkg.cuda_version_lower_bound == "13.4"
    assert [n["rule"] for n in pkg.needs] == ["ptx_isa_driver", "zstd_driver"]
    validate({"schema": 1, **report.to_dict()})


def test_properties_meet_variantlib_syntax(curand_wheel):  # noqa: F811
    from variantlib.models.variant import VariantProperty

    [pkg] = metadata([curand_wheel], max_workers=1).packages
    for prop in pkg.properties:
        parsed = VariantProperty.from_str(prop)
        assert parsed.to_str() == prop and parsed.namespace == "nvidia"


def test_a_package_claims_what_every_binary_justifies(sass80_90_ptx80, sass80, tmp_path):
    whl = variant_wheel(tmp_path / "demo-1.0-py3-none-any.whl", {"demo/a.fatbin": sass80_90_ptx80,
                                                                  "demo/b.fatbin": sass80}, None)  # fmt: skip
    [pkg] = metadata([whl], max_workers=1).packages
    a, b = sorted(pkg.binaries, key=lambda r: r.path)
    assert (a.real, a.virtual, a.cuda_arch) == (["8.0", "9.0"], "8.0", "8.0")
    assert (b.real, b.virtual, b.cuda_arch) == (["8.0"], None, None)  # no PTX: nothing runs on newer GPUs
    assert (pkg.real, pkg.virtual, pkg.cuda_arch) == (["8.0"], None, None)
    assert pkg.properties[0] == "nvidia :: sm_arch :: 80_real" and not any("virtual" in p for p in pkg.properties)


def test_check_fails_a_declared_real_without_its_sass_and_passes_a_consistent_wheel(sass80_90_ptx80, tmp_path):
    bound = metadata([_folder(tmp_path / "f", sass80_90_ptx80)], max_workers=1).packages[0].cuda_version_lower_bound
    assert bound is not None and tuple(map(int, bound.split("."))) >= (12, 0)
    good = {"sm_arch": ["80_real", "90_real", "80_virtual", "86_virtual"], "cuda_version_lower_bound": [bound]}
    ok = variant_wheel(tmp_path / "demo-1.0-py3-none-any-cu13.whl", {"demo/k.fatbin": sass80_90_ptx80},
                       variant_json("cu13", good))  # fmt: skip
    res = cli_main("metadata", ok, "--check", check=0)
    assert "ok  nvidia :: sm_arch :: 90_real" in res.stdout and "CLAIMS MORE" not in res.stdout
    doc = json.loads(cli_main("metadata", ok, "--check", "--json", check=0).stdout)
    validate(doc)
    assert doc["consistent"] is True and {c["verdict"] for c in doc["packages"][0]["check"]} == {"justified"}
    for declared, word in ((["100_real"], "sm_100"), (["75_virtual"], "from 7.5"), (["70_real"], "sm_70")):
        bad = variant_wheel(tmp_path / "demo-1.0-py3-none-any-x.whl", {"demo/k.fatbin": sass80_90_ptx80},
                            variant_json("x", {"sm_arch": declared}))  # fmt: skip
        res = cli_main("metadata", bad, "--check", check=1)
        assert f"CLAIMS MORE  nvidia :: sm_arch :: {declared[0]}" in res.stdout and word in res.stdout
        bad.unlink()
    low = variant_wheel(tmp_path / "demo-1.0-py3-none-any-y.whl", {"demo/k.fatbin": sass80_90_ptx80},
                        variant_json("y", {"cuda_version_lower_bound": ["12.0"]}))  # fmt: skip
    doc = json.loads(cli_main("metadata", low, "--check", "--json", check=1).stdout)
    validate(doc)
    [verdict] = doc["packages"][0]["check"]
    assert verdict["verdict"] == "unjustified" and "ptx_isa_driver" in verdict["reason"]
    # without --check the same wheel is only described: exit 0
    cli_main("metadata", low, check=0)


def test_a_wheel_claiming_sm_90_with_only_sm_80_sass_fails_check(sass80, tmp_path):
    whl = variant_wheel(tmp_path / "demo-1.0-py3-none-any-cu13.whl", {"demo/k.fatbin": sass80},
                        variant_json("cu13", {"sm_arch": ["80_real", "90_real"]}))  # fmt: skip
    [pkg] = metadata([whl], check=True, max_workers=1).packages
    verdicts = {c["property"]: c["verdict"] for c in pkg.check}
    assert verdicts == {"nvidia :: sm_arch :: 80_real": "justified", "nvidia :: sm_arch :: 90_real": "unjustified"}
    assert not pkg.consistent


def _folder(path: Path, data: bytes) -> Path:
    path.mkdir()
    (path / "k.fatbin").write_bytes(data)
    return path


def test_declared_metadata_read_as_variantlib_reads_it(tmp_path):
    from variantlib.variant_dist_info import VariantDistInfo

    text = variant_json("cu13", {"sm_arch": ["90_real", "120_virtual"], "cuda_version_lower_bound": ["12.8"]})
    whl = variant_wheel(tmp_path / "demo-1.0-py3-none-any-cu13.whl", {}, text)
    ours = read_declared(whl)
    theirs = VariantDistInfo(text, expected_label="cu13")
    assert ours.error is None and ours.label == theirs.variant_label == "cu13"
    assert sorted(ours.properties) == sorted(p.to_str() for p in theirs.variant_desc.properties)


HOSTILE = {
    "huge": (b" " * (MAX_VARIANT_JSON + 1), "over the"),
    "not JSON": (b"{'variants': ", "Expecting property name"),
    "not UTF-8": (b'{"variants": {"\xff": {}}}', "not UTF-8"),
    "control characters": (variant_json("cu13", {"sm_arch": ["90_real\x1b[31m"]}).encode(), "is not [a-z0-9_.]+"),
    "nested": (b"[" * 200_000 + b"]" * 200_000, "nested too deep"),
    "two variants": (b'{"variants": {"a": {}, "b": {}}}', "exactly one variant"),
    "values not a list": (b'{"variants": {"cu13": {"nvidia": {"sm_arch": "90_real"}}}}', "list of values"),
    "label of another wheel": (variant_json("cu12", {"sm_arch": ["90_real"]}).encode(), "the file name says 'cu13'"),
    "many values": (variant_json("cu13", {"sm_arch": ["90_real"] * 5000}).encode(), "more than 4096"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_declared_metadata_is_an_error_row(case, sass80, tmp_path):
    data, words = HOSTILE[case]
    whl = variant_wheel(tmp_path / "demo-1.0-py3-none-any-cu13.whl", {"demo/k.fatbin": sass80}, data)
    declared = read_declared(whl)
    assert declared.error is not None and words in declared.error and declared.properties == []
    res = cli_main("metadata", whl, "--check", check=1)
    assert "declared: cannot be read" in res.stdout and "Traceback" not in res.stderr + res.stdout
    assert "\x1b" not in res.stdout and "\x1b" not in res.stderr
    doc = json.loads(cli_main("metadata", whl, "--check", "--json", check=1).stdout)
    validate(doc)
    assert doc["consistent"] is False and doc["packages"][0]["declared"]["error"]


def test_two_variant_json_files_and_a_broken_wheel_are_errors(sass80, tmp_path):
    whl = variant_wheel(tmp_path / "demo-1.0-py3-none-any.whl", {"other-1.0.dist-info/variant.json": b"{}"},
                        variant_json("x", {}))  # fmt: skip
    assert "2 variant.json files" in (read_declared(whl).error or "")
    broken = tmp_path / "broken-1.0-py3-none-any.whl"
    broken.write_bytes(b"PK\x03\x04 not a zip")
    assert read_declared(broken).error is not None
    res = cli_main("metadata", broken, "--check", check=1)
    assert "could not be read" in res.stdout


def test_no_device_code_justifies_nothing_and_usage_errors_exit_2(tmp_path):
    (tmp_path / "plain.txt").write_text("nothing\n")
    res = cli_main("metadata", tmp_path, check=0)
    assert "none holds device code" in res.stdout
    cli_main("metadata", tmp_path, "--jobs", "0", check=2)
    cli_main("metadata", tmp_path / "missing", check=1)


def test_sass_in_one_fatbin_of_several_justifies_no_real_where_another_has_nothing(artifacts, tmp_path):
    """h.o's .nv_fatbin holds sm_80 SASS + compute_90 PTX and sm_90 SASS: on 8.0 the second fatbin has nothing
    (scan: partial), so its sm_80 SASS justifies no 80_real; on 9.0 both run."""
    from elf_testing import make_elf

    one = build_fatbin([artifacts[("cubin", "sm_80")], artifacts[("ptx", "sm_90")]])
    two = build_fatbin([artifacts[("cubin", "sm_90")]])
    (tmp_path / "h.o").write_bytes(make_elf([(".nv_fatbin", 1, one + two)]))
    [pkg] = metadata([tmp_path], max_workers=1).packages
    [b] = pkg.binaries
    assert b.sass == ["8.0", "9.0"] and b.real == ["9.0"] and pkg.real == ["9.0"]
    assert b.virtual is None and b.cuda_arch is None  # the second fatbin has no PTX


def _isa(ptx: bytes) -> tuple[int, int]:
    found = re.search(rb"^\.version (\d+)\.(\d+)", ptx, re.M)
    assert found, "no .version line"
    return int(found.group(1)), int(found.group(2))


def test_the_lower_bound_names_each_need_with_its_rule(artifacts, tmp_path):
    from cuda_fatbin import FatbinOptions
    from cuda_fatbin._nvidia import tables

    cubin, ptx = artifacts[("cubin", "sm_80")], artifacts[("ptx", "sm_80")]
    isa = "{}.{}".format(*_isa(ptx))  # the PTX text's own .version line
    ptx_cuda = next(r["cuda"] for r in tables()["ptx_isa_cuda"] if r["isa"] == isa)
    cases = {
        "plain": (build_fatbin([cubin], options=FatbinOptions(compress=False)), {}),
        "zstd": (build_fatbin([cubin], options=FatbinOptions(compress_all=True, compress_mode="size")),
                 {"zstd_driver": "12.4"}),
        "concat": (build_fatbin([cubin], options=FatbinOptions(concat=True)), {"concat_driver": "13.4"}),
        "ptx": (build_fatbin([Part(ptx, kind="ptx", arch="sm_80")], options=FatbinOptions(compress=False)),
                {"ptx_isa_driver": ptx_cuda}),
    }  # fmt: skip
    for name, (data, needs) in cases.items():
        folder = tmp_path / name
        folder.mkdir()
        (folder / "k.fatbin").write_bytes(data)
        [pkg] = metadata([folder], max_workers=1).packages
        got = {n["rule"]: n["cuda"] for n in pkg.needs}
        if name == "concat":  # libnvfatbin may also compress the concatenated entry
            got.pop("zstd_driver", None)
        assert got == needs, name
        bound = max(needs.values(), key=lambda v: tuple(map(int, v.split("."))), default=None)
        assert pkg.cuda_version_lower_bound == bound
        assert any(LOWER in p for p in pkg.properties) == (bound is not None)
        assert all(n["source"] and n["text"] for n in pkg.needs)
    if ptx_cuda:
        assert isa in next(n["text"] for n in metadata([tmp_path / "ptx"], max_workers=1).packages[0].needs)


LOWER = "cuda_version_lower_bound"


def _site(folder: Path, data: bytes, declared: str | None, link: bool = False) -> Path:
    """A site-packages folder: demo 1.0 installed (METADATA, RECORD owning demo/k.fatbin), with its variant.json."""
    (folder / "demo").mkdir(parents=True)
    (folder / "demo" / "k.fatbin").write_bytes(data)
    info = folder / "demo-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: Demo\nVersion: 1.0\n")
    (info / "RECORD").write_text("demo/k.fatbin,,\ndemo-1.0.dist-info/RECORD,,\n")
    if link:
        (folder / "elsewhere.json").write_text(declared or "")
        (info / "variant.json").symlink_to(folder / "elsewhere.json")
    elif declared is not None:
        (info / "variant.json").write_text(declared)
    return folder


def test_check_reads_what_an_installed_distribution_declares(sass80, tmp_path):
    bad = _site(tmp_path / "bad", sass80, variant_json("cu13", {"sm_arch": ["80_real", "90_real"]}))
    res = cli_main("metadata", bad, "--check", check=1)
    assert "CLAIMS MORE  nvidia :: sm_arch :: 90_real" in res.stdout and "demo 1.0" in res.stdout
    good = _site(tmp_path / "good", sass80, variant_json("cu13", {"sm_arch": ["80_real"]}))
    doc = json.loads(cli_main("metadata", good, "--check", "--json", check=0).stdout)
    validate(doc)
    [pkg] = doc["packages"]
    assert pkg["package"] == "demo 1.0" and pkg["declared"]["source"].endswith("variant.json")
    plain = _site(tmp_path / "plain", sass80, None)  # not from a variant wheel: nothing declared, nothing to fail
    doc = json.loads(cli_main("metadata", plain, "--check", "--json", check=0).stdout)
    assert doc["packages"][0]["declared"] is None
    linked = _site(tmp_path / "linked", sass80, variant_json("cu13", {"sm_arch": ["80_real"]}), link=True)
    res = cli_main("metadata", linked, "--check", check=1)  # a symlink is not followed: an error, not a read
    assert "declared: cannot be read" in res.stdout


def test_check_reads_what_a_wheel_found_in_a_folder_declares(sass80, tmp_path):
    """``metadata dist/ --check`` judges each wheel in ``dist/`` as ``metadata dist/*.whl --check`` does."""
    dist = tmp_path / "dist"
    dist.mkdir()
    variant_wheel(dist / "demo-1.0-py3-none-any-cu13.whl", {"demo/k.fatbin": sass80},
                  variant_json("cu13", {"sm_arch": ["80_real", "90_real"]}))  # fmt: skip
    res = cli_main("metadata", dist, "--check", check=1)
    assert "CLAIMS MORE  nvidia :: sm_arch :: 90_real" in res.stdout
    doc = json.loads(cli_main("metadata", dist, "--check", "--json", check=1).stdout)
    validate(doc)
    [pkg] = doc["packages"]
    assert pkg["declared"]["label"] == "cu13" and doc["consistent"] is False


def _offered_by_the_plugin(gpu: str, declared: list[str]) -> bool:
    """Whether NVIDIA's provider plugin (``get_supported_configs``) offers a wheel declaring the ``sm_arch`` values
    ``declared`` to a GPU of capability ``gpu``: ``Mm_real`` down to ``M0_real``, and ``M0_virtual``; a wheel
    declaring none is offered to every GPU. Metadata's own ``<cc>_virtual`` also claims every GPU from ``cc`` on."""
    major, minor = map(int, gpu.split("."))
    accepted = {f"{major}{m}_real" for m in range(minor, -1, -1)} | {f"{major}0_virtual"}
    virtual = [int(v[:-8]) for v in declared if v.endswith("_virtual")]
    return not declared or bool(accepted & set(declared)) or any(major * 10 + minor >= v for v in virtual)


@pytest.mark.parametrize("sm_arch", [[], ["80_real"], ["80_real", "90_real"], ["90_real"], ["80_real", "90_virtual"],
                                     ["100_real"], ["120_real"]])  # fmt: skip
def test_a_declared_lower_bound_is_judged_on_the_gpus_its_sm_arch_values_install_it_on(artifacts, sm_arch, tmp_path):
    """sm_80 + sm_90 SASS and compute_90 PTX: a GPU that loads SASS JIT-compiles no PTX, so the PTX ISA bounds the
    driver only where a GPU the declared sm_arch values get the wheel installed on JIT-compiles it; the verdict
    agrees with scan under that driver on each such GPU."""
    from cuda_fatbin import FatbinOptions, scan
    from cuda_fatbin._metadata import _gpus
    from cuda_fatbin._nvidia import tables
    from cuda_fatbin._select import DRIVER_DROPPED_GPU, DRIVER_PREDATES_GPU, UNCOVERED

    ptx = artifacts[("ptx", "sm_90")]
    data = build_fatbin([artifacts[("cubin", "sm_80")], artifacts[("cubin", "sm_90")],
                         Part(ptx, kind="ptx", arch="sm_90")], options=FatbinOptions(compress=False))  # fmt: skip
    isa = "{}.{}".format(*_isa(ptx))

    def key(v: str) -> tuple[int, ...]:
        return tuple(map(int, v.split(".")))

    older = max((r["cuda"] for r in tables()["ptx_isa_cuda"] if key(r["isa"]) < key(isa) and key(r["cuda"]) > (11, 0)),
                default=None, key=key)  # fmt: skip
    if older is None:
        pytest.skip(f"no CUDA release before the one that JIT-compiles PTX ISA {isa}")
    whl = variant_wheel(tmp_path / "demo-1.0-py3-none-any-x.whl", {"demo/k.fatbin": data},
                        variant_json("x", {"sm_arch": sm_arch, "cuda_version_lower_bound": [older]}))  # fmt: skip
    [pkg] = metadata([whl], check=True, max_workers=1).packages
    [verdict] = [c["verdict"] for c in pkg.check if LOWER in c["property"]]
    gpus = [g.capability for g in _gpus()]
    free = scan([whl], gpus=gpus, max_workers=1).binaries[0].coverage
    limited = scan([whl], gpus=gpus, driver=older, max_workers=1).binaries[0].coverage
    fails = [g for g in gpus if _offered_by_the_plugin(g, sm_arch) and free[g]["status"] not in UNCOVERED
             and limited[g]["status"] in UNCOVERED
             and limited[g]["status"] not in (DRIVER_PREDATES_GPU, DRIVER_DROPPED_GPU)]  # fmt: skip
    assert verdict == ("unjustified" if fails else "justified"), (fails, pkg.check)
    # the PTX runs on 10.0 and newer GPUs only: offered there by no sm_arch, 100_real, 120_real, 90_virtual
    assert bool(fails) == (sm_arch in ([], ["80_real", "90_virtual"], ["100_real"], ["120_real"]))


def test_the_lower_bound_leaves_out_ptx_no_gpu_its_properties_install_it_on_jit_compiles(artifacts, tmp_path):
    """a.fatbin: sm_80 + sm_90 SASS and compute_90 PTX; b.fatbin: the same SASS, no PTX. The package justifies
    80_real and 90_real and no _virtual: the GPUs those are offered to (8.x, 9.0) load SASS from both, so the
    PTX ISA bounds no driver of the package; a.fatbin alone justifies 90_virtual, where it does."""
    from cuda_fatbin import FatbinOptions

    sass = [artifacts[("cubin", "sm_80")], artifacts[("cubin", "sm_90")]]
    plain = FatbinOptions(compress=False)
    a = build_fatbin([*sass, Part(artifacts[("ptx", "sm_90")], kind="ptx", arch="sm_90")], options=plain)
    whl = variant_wheel(tmp_path / "demo-1.0-py3-none-any.whl", {"demo/a.fatbin": a,
                        "demo/b.fatbin": build_fatbin(sass, options=plain)}, None)  # fmt: skip
    [pkg] = metadata([whl], max_workers=1).packages
    assert (pkg.real, pkg.virtual, pkg.needs, pkg.cuda_version_lower_bound) == (["8.0", "9.0"], None, [], None)
    assert not any(LOWER in p for p in pkg.properties)
    by_name = {b.path.rsplit("/", 1)[1]: b for b in pkg.binaries}
    assert by_name["a.fatbin"].virtual == "9.0" and by_name["a.fatbin"].lower_bound is not None
    assert by_name["b.fatbin"].lower_bound is None


def test_curand_lower_bound_agrees_with_scan_under_each_driver(curand_wheel):  # noqa: F811
    """Three of libcurand's fatbins hold only sm_75 SASS and compute_75 PTX of ISA 9.4: every GPU it claims
    but 7.5 JIT-compiles that PTX, so a CUDA 13.3 driver fails there and 13.4 runs it on all of them."""
    from cuda_fatbin import scan
    from cuda_fatbin._select import UNCOVERED

    [pkg] = metadata([curand_wheel], max_workers=1).packages
    assert pkg.cuda_version_lower_bound == "13.4"
    gpus = ";".join(pkg.real)
    at = {d: scan([curand_wheel], gpus=gpus, driver=d, max_workers=1).binaries[0].coverage for d in ("13.3", "13.4")}
    assert all(at["13.4"][g]["status"] not in UNCOVERED for g in pkg.real)
    assert [g for g in pkg.real if at["13.3"][g]["status"] not in UNCOVERED] == ["7.5"]


def _plain(parts: list) -> bytes:
    from cuda_fatbin import FatbinOptions

    return build_fatbin(parts, options=FatbinOptions(compress=False))


def test_a_package_virtual_and_conda_bound_are_the_highest_of_its_binaries(artifacts, tmp_path):
    """a: sm_80 SASS + compute_80 PTX runs from 8.0 on; b: sm_90 SASS + compute_90 PTX from 9.0 on: the package
    runs everywhere only from 9.0 on."""
    a = _plain([artifacts[("cubin", "sm_80")], Part(artifacts[("ptx", "sm_80")], kind="ptx", arch="sm_80")])
    b = _plain([artifacts[("cubin", "sm_90")], Part(artifacts[("ptx", "sm_90")], kind="ptx", arch="sm_90")])
    whl = variant_wheel(tmp_path / "demo-1.0-py3-none-any.whl", {"demo/a.fatbin": a, "demo/b.fatbin": b}, None)
    [pkg] = metadata([whl], max_workers=1).packages
    assert sorted((r.virtual, r.cuda_arch) for r in pkg.binaries) == [("8.0", "8.0"), ("9.0", "9.0")]
    assert (pkg.real, pkg.virtual, pkg.cuda_arch) == ([], "9.0", "9.0")


def test_virtual_is_the_lowest_ptx_from_which_every_gpu_runs_the_binary(artifacts, tmp_path):
    """h.o: one fatbin holds compute_80 PTX, the other sm_90 SASS + compute_90 PTX: 8.x GPUs find nothing in the
    second, so the binary runs everywhere from 9.0 on, and its compute_80 PTX justifies no 80_virtual."""
    from elf_testing import make_elf

    one = _plain([Part(artifacts[("ptx", "sm_80")], kind="ptx", arch="sm_80")])
    two = _plain([artifacts[("cubin", "sm_90")], Part(artifacts[("ptx", "sm_90")], kind="ptx", arch="sm_90")])
    (tmp_path / "h.o").write_bytes(make_elf([(".nv_fatbin", 1, one + two)]))
    [b] = metadata([tmp_path], max_workers=1).packages[0].binaries
    assert b.ptx == ["8.0", "9.0"] and (b.virtual, b.cuda_arch) == ("9.0", "9.0")


def test_a_declared_real_bounds_the_driver_on_its_own_capability(artifacts, tmp_path):
    """sm_80 SASS + compute_90 PTX: a wheel declaring 90_real (itself unjustified: no sm_90 SASS) is installed
    on 9.0 GPUs, which JIT-compile the PTX: a lower bound below its ISA's driver is unjustified there."""
    ptx = artifacts[("ptx", "sm_90")]
    data = _plain([artifacts[("cubin", "sm_80")], Part(ptx, kind="ptx", arch="sm_90")])
    whl = variant_wheel(tmp_path / "demo-1.0-py3-none-any-x.whl", {"demo/k.fatbin": data},
                        variant_json("x", {"sm_arch": ["90_real"], LOWER: ["11.0"]}))  # fmt: skip
    [pkg] = metadata([whl], check=True, max_workers=1).packages
    assert {c["property"].split(" :: ")[1]: c["verdict"] for c in pkg.check} == {
        "sm_arch": "unjustified", LOWER: "unjustified"}  # fmt: skip


def test_a_gpu_where_a_binary_runs_under_no_driver_bounds_no_driver(artifacts, tmp_path):
    """a: sm_80 SASS + compute_80 PTX; b: sm_80 SASS only. 80_real is offered to Tegra 8.7 too, where a would
    JIT-compile its PTX, but b runs there under no driver: the bound is not raised for a GPU it cannot help."""
    cubin = artifacts[("cubin", "sm_80")]
    a = _plain([cubin, Part(artifacts[("ptx", "sm_80")], kind="ptx", arch="sm_80")])
    members = {"demo/a.fatbin": a, "demo/b.fatbin": _plain([cubin])}
    whl = variant_wheel(tmp_path / "demo-1.0-py3-none-any-x.whl", members,
                        variant_json("x", {"sm_arch": ["80_real"], LOWER: ["11.0"]}))  # fmt: skip
    [pkg] = metadata([whl], check=True, max_workers=1).packages
    assert pkg.consistent and pkg.cuda_version_lower_bound is None, pkg.check


def test_ptx_in_a_fatbin_stored_as_data_counts_on_every_gpu(artifacts, tmp_path):
    """A library whose registered fatbin holds sm_80 SASS and which keeps compute_80 PTX in a fatbin stored as
    data (loaded when and where the library chooses): the PTX ISA bounds the driver though 8.0 loads SASS."""
    from elf_testing import make_elf

    cubin, ptx = artifacts[("cubin", "sm_80")], artifacts[("ptx", "sm_80")]
    data = _plain([cubin, Part(ptx, kind="ptx", arch="sm_80")])
    (tmp_path / "libk.so").write_bytes(make_elf([(".nv_fatbin", 1, _plain([cubin])), (".rodata", 1, data)], e_type=3))
    [b] = metadata([tmp_path], max_workers=1).packages[0].binaries
    assert b.real == ["8.0"] and b.virtual is None
    assert b.needs.keys() == {"ptx_isa_driver"} and b.lower_bound == b.needs["ptx_isa_driver"]


def test_variant_json_at_its_limits_is_read(sass80, tmp_path):
    """Exactly MAX_VARIANT_JSON bytes, and exactly 4,096 properties, are within what is read."""
    from cuda_fatbin._metadata import MAX_PROPERTIES

    text = variant_json("cu13", {"sm_arch": ["80_real"]})
    whl = variant_wheel(tmp_path / "demo-1.0-py3-none-any-cu13.whl", {"demo/k.fatbin": sass80},
                        text + " " * (MAX_VARIANT_JSON - len(text)))  # fmt: skip
    assert read_declared(whl).error is None
    many = variant_wheel(tmp_path / "demo-1.0-py3-none-any-cu13.whl", {"demo/k.fatbin": sass80},
                         variant_json("cu13", {"sm_arch": ["80_real"] * MAX_PROPERTIES}))  # fmt: skip
    assert read_declared(many).error is None and len(read_declared(many).properties) == MAX_PROPERTIES


def test_a_build_tag_is_not_a_variant_label(sass80, tmp_path):
    """demo-1.0-1-py3-none-any.whl: six fields, the third a build tag: no label in the name to compare with."""
    whl = variant_wheel(tmp_path / "demo-1.0-1-py3-none-any.whl", {"demo/k.fatbin": sass80},
                        variant_json("cu13", {"sm_arch": ["80_real"]}))  # fmt: skip
    declared = read_declared(whl)
    assert declared.error is None and declared.label == "cu13"


def test_check_fails_a_variant_wheel_that_declares_no_lower_bound_its_bytes_need(sass80_90_ptx80, tmp_path):
    """80_real, 90_real, 80_virtual and no lower bound: offered to every driver, while 10.0 and newer GPUs
    JIT-compile the compute_80 PTX, which an older driver than its ISA's fails."""
    bound = metadata([_folder(tmp_path / "f", sass80_90_ptx80)], max_workers=1).packages[0].cuda_version_lower_bound
    assert bound is not None
    whl = variant_wheel(tmp_path / "demo-1.0-py3-none-any-x.whl", {"demo/k.fatbin": sass80_90_ptx80},
                        variant_json("x", {"sm_arch": ["80_real", "90_real", "80_virtual"]}))  # fmt: skip
    [pkg] = metadata([whl], check=True, max_workers=1).packages
    assert not pkg.consistent
    [row] = [c for c in pkg.check if c["verdict"] == "missing"]
    assert row["property"] == f"nvidia :: cuda_version_lower_bound :: {bound}"
    declared = variant_json("y", {"sm_arch": ["80_real", "90_real", "80_virtual"], "cuda_version_lower_bound": [bound]})
    whl = variant_wheel(tmp_path / "demo-1.0-py3-none-any-y.whl", {"demo/k.fatbin": sass80_90_ptx80}, declared)
    [pkg] = metadata([whl], check=True, max_workers=1).packages
    assert pkg.consistent and not [c for c in pkg.check if c["verdict"] == "missing"]


def test_a_wheel_given_under_two_names_is_one_package(sass80, tmp_path, monkeypatch):
    """The same consistent wheel through its folder and by name, or by name and through a symlink: scan reads it
    once, and its declared properties are judged against those bytes, not against an empty second package."""
    dist = tmp_path / "dist"
    dist.mkdir()
    whl = variant_wheel(dist / "demo-1.0-py3-none-any-cu13.whl", {"demo/k.fatbin": sass80},
                        variant_json("cu13", {"sm_arch": ["80_real"]}))  # fmt: skip
    link = tmp_path / "link-1.0-py3-none-any-cu13.whl"
    link.symlink_to(whl)
    monkeypatch.chdir(tmp_path)
    for args in (["./dist", "dist/demo-1.0-py3-none-any-cu13.whl"], [whl, link]):
        doc = json.loads(cli_main("metadata", *args, "--check", "--json", check=0).stdout)
        validate(doc)
        [pkg] = doc["packages"]
        assert pkg["binaries"] == 1 and [c["verdict"] for c in pkg["check"]] == ["justified"], args


@pytest.mark.parametrize("members", [
    {"a": ("sm_80", "sm_90", "compute_90")}, {"a": ("sm_80", "compute_80")}, {"a": ("sm_80", "sm_90")},
    {"a": ("sm_80", "sm_90", "compute_90"), "b": ("sm_80", "sm_90")},
    {"a": ("sm_80", "compute_80"), "b": ("sm_90", "compute_90")}, {"a": ("compute_80",), "b": ("sm_80",)},
])  # fmt: skip
def test_the_printed_lower_bound_agrees_with_scan_on_the_gpus_its_properties_install_it_on(artifacts, members,
                                                                                          tmp_path):  # fmt: skip
    """The bound metadata prints is the PTX ISA's driver exactly when a GPU that its own sm_arch values get the
    package installed on fails under an older driver (scan --driver), for fatbins whose only need is the PTX."""
    from cuda_fatbin import FatbinOptions, scan
    from cuda_fatbin._metadata import _gpus
    from cuda_fatbin._select import DRIVER_DROPPED_GPU, DRIVER_PREDATES_GPU, UNCOVERED

    def part(arch: str) -> Part | bytes:
        sm = "sm_" + arch.split("_")[1]
        return (
            Part(artifacts[("ptx", sm)], kind="ptx", arch=sm)
            if arch.startswith("compute")
            else artifacts[("cubin", sm)]
        )

    files = {f"demo/{name}.fatbin": build_fatbin([part(a) for a in archs], options=FatbinOptions(compress=False))
             for name, archs in members.items()}  # fmt: skip
    whl = variant_wheel(tmp_path / "demo-1.0-py3-none-any.whl", files, None)
    [pkg] = metadata([whl], max_workers=1).packages
    declared = [p.rsplit(" :: ", 1)[1] for p in pkg.properties if ":: sm_arch ::" in p]
    ptx_need = {b.needs.get("ptx_isa_driver") for b in pkg.binaries} - {None}
    need = max(ptx_need, default=None)
    if need is None:  # SASS alone, uncompressed: no driver need at all
        assert pkg.cuda_version_lower_bound is None
        return
    older = "11.8" if need.startswith("12") else "12.9"
    gpus = [g.capability for g in _gpus()]
    free = {b.path: b.coverage for b in scan([whl], gpus=gpus, max_workers=1).binaries}
    limited = {b.path: b.coverage for b in scan([whl], gpus=gpus, driver=older, max_workers=1).binaries}
    fails = [g for g in gpus if _offered_by_the_plugin(g, declared)
             and all(c[g]["status"] not in UNCOVERED for c in free.values())
             and any(c[g]["status"] in UNCOVERED and c[g]["status"] not in (DRIVER_PREDATES_GPU, DRIVER_DROPPED_GPU)
                     for c in limited.values())]  # fmt: skip
    assert pkg.cuda_version_lower_bound == (need if fails else None), (declared, fails)
