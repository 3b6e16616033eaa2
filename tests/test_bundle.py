# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""KernelBundle, exactly: the manifest's schema field by field, every error's text and field, what ``build`` passes
on, what ``check`` asks the device, and what a rebuild removes and leaves (docs/caching.md, "Kernel bundles").

Messages and fields are compared whole: ``BundleError.field`` and the text are what a user acts on.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import shutil
import zipfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from cuda_fatbin import (
    BundleCoverageError,
    BundleError,
    FatbinOptions,
    KernelBundle,
    KernelSuite,
    _bundle,
    select_entry,
)

from fatbin_testing import plain

SRC = "template <typename T> __global__ void scale(T* p, T a) { p[0] *= a; }"
NAMES = ["scale<float>"]
#: sm_80 SASS and compute_90 PTX only (CMake's "-real" and "-virtual"), zstd-compressed: the PTX arch is not a SASS arch
ARCHS = "80-real;90-virtual"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bundle") / "b"
    KernelBundle.build(
        root, {"k": KernelSuite(SRC, NAMES)}, archs=ARCHS, fatbin_options=FatbinOptions(compress_mode="size")
    )
    return root


@pytest.fixture
def root(built: Path, tmp_path: Path) -> Path:
    """A copy of the built bundle that a test may change."""
    copy = tmp_path / "b"
    shutil.copytree(built, copy)
    return copy


def manifest_of(root: Path) -> dict[str, Any]:
    return json.loads((root / "manifest.json").read_text())


def digest(record: dict[str, Any]) -> str:
    """docs/caching.md: SHA-256 of the canonical JSON of the rest of the record."""
    body = {k: v for k, v in record.items() if k != "record_sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def edit_record(root: Path, **fields: Any) -> KernelBundle:
    """Change fields of suite k's record and sign it again, as a hostile or careless editor would."""
    manifest = manifest_of(root)
    record = manifest["suites"]["k"]
    record.update(fields)
    record["record_sha256"] = digest(record)
    (root / "manifest.json").write_text(json.dumps(manifest))
    return KernelBundle.open(root)


# -- the manifest's schema, without compiling --------------------------------------------------------------------

RECORD: dict[str, Any] = {
    "file": "k.0123456789abcdef.fatbin", "sha256": "0" * 64, "record_sha256": "1" * 64, "size": 10,
    "entries": [], "sass_archs": ["sm_80"], "ptx_archs": [], "compression": [], "symbol_mapping": {"f": "_Z1fv"},
    "ptx_isa": None, "ptx_min_driver_cuda": None, "decompress_min_driver_cuda": None, "min_driver": None,
}  # fmt: skip
FIELDS = [
    ("file", "a file name"), ("sha256", "a hex SHA-256"), ("record_sha256", "a hex SHA-256"), ("size", "an int"),
    ("entries", "a list"), ("sass_archs", "a list"), ("ptx_archs", "a list"), ("compression", "a list"),
    ("symbol_mapping", "an object"), ("ptx_isa", "a version or null"), ("ptx_min_driver_cuda", "a version or null"),
    ("decompress_min_driver_cuda", "a version or null"), ("min_driver", "a version or null"),
]  # fmt: skip
VERSIONS = ["ptx_isa", "ptx_min_driver_cuda", "decompress_min_driver_cuda", "min_driver"]


def manifest_with(**record: Any) -> dict[str, Any]:
    return {"schema": 2, "built_with": {}, "suites": {"k": {**RECORD, **record}}}


def opened(tmp_path: Path, manifest: Any) -> KernelBundle:
    folder = tmp_path / "m"
    folder.mkdir(exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return KernelBundle.open(folder)


def refusal(tmp_path: Path, manifest: Any) -> tuple[str, str | None]:
    with pytest.raises(BundleError) as info:
        opened(tmp_path, manifest)
    return str(info.value), info.value.field


def test_a_manifest_of_the_right_types_opens(tmp_path):
    assert opened(tmp_path, manifest_with()).suites == ["k"]
    versions = {key: "99.99" for key in VERSIONS}  # a CUDA version: up to two digits on each side
    assert opened(tmp_path, manifest_with(size=0, **versions)).manifest["suites"]["k"]["size"] == 0
    without = manifest_with()
    del without["built_with"]  # informational: a manifest without it is read
    assert opened(tmp_path, without).suites == ["k"]


@pytest.mark.parametrize(("key", "what"), FIELDS)
def test_every_record_field_is_required_and_typed(tmp_path, key, what):
    missing = manifest_with()
    del missing["suites"]["k"][key]
    assert refusal(tmp_path, missing) == (f"suites.k.{key}: missing", f"suites.k.{key}")
    assert refusal(tmp_path, manifest_with(**{key: 1.5})) == (
        f"suites.k.{key}: must be {what}; got float", f"suites.k.{key}")  # fmt: skip


def test_json_true_is_not_an_int(tmp_path):
    assert refusal(tmp_path, manifest_with(size=True)) == ("suites.k.size: must be an int; got bool", "suites.k.size")


@pytest.mark.parametrize(
    ("manifest", "text", "field"),
    [
        ([], "manifest: must be a JSON object; got list", "manifest"),
        ({"schema": 3}, "schema: 3; this package reads schema 2: rebuild the bundle", "schema"),
        ({"suites": {}}, "schema: None; this package reads schema 2: rebuild the bundle", "schema"),
        ({"schema": 2, "built_with": [], "suites": {}}, "built_with: must be an object; got list", "built_with"),
        ({"schema": 2}, "suites: must be an object of suite records; got NoneType", "suites"),
        ({"schema": 2, "suites": {}}, "suites: the bundle has no suite", "suites"),
        ({"schema": 2, "suites": {"../k": RECORD}},
         "suites.../k: suite names are letters, digits, '_', '-' and '.'", "suites.../k"),
        ({"schema": 2, "suites": {"k": []}}, "suites.k: must be an object; got list", "suites.k"),
    ],
)  # fmt: skip
def test_the_manifest_and_its_suites_are_checked(tmp_path, manifest, text, field):
    assert refusal(tmp_path, manifest) == (text, field)


@pytest.mark.parametrize("name", [".", "..", "a/b", "../k.fatbin", "", "-k", "x" * 201])
def test_a_file_name_must_be_plain_and_inside_the_bundle(tmp_path, name):
    assert refusal(tmp_path, manifest_with(file=name)) == (
        f"suites.k.file: {name!r} is not a plain file name inside the bundle", "suites.k.file")  # fmt: skip


@pytest.mark.parametrize("key", ["sha256", "record_sha256"])
@pytest.mark.parametrize("value", ["A" * 64, "0" * 63, "0" * 65, "g" * 64])
def test_hashes_are_64_lowercase_hex_digits(tmp_path, key, value):
    assert refusal(tmp_path, manifest_with(**{key: value})) == (
        f"suites.k.{key}: not 64 lowercase hex digits", f"suites.k.{key}")  # fmt: skip


def test_a_negative_size_is_refused(tmp_path):
    assert refusal(tmp_path, manifest_with(size=-1)) == ("suites.k.size: negative", "suites.k.size")


@pytest.mark.parametrize("key", VERSIONS)
@pytest.mark.parametrize("value", ["12.4.1", "12", "100.0", "999.999", "1.100", "01.0", "v12.4", ""])
def test_versions_look_like_12_4(tmp_path, key, value):
    assert refusal(tmp_path, manifest_with(**{key: value})) == (
        f"suites.k.{key}: {value!r} is not a version like '12.4'", f"suites.k.{key}")  # fmt: skip


@pytest.mark.parametrize("key", ["sass_archs", "ptx_archs", "compression"])
def test_list_items_are_strings_named_by_index(tmp_path, key):
    first = {"sass_archs": "sm_80", "ptx_archs": "compute_80", "compression": "zstd"}[key]
    assert refusal(tmp_path, manifest_with(**{key: [first, 80]})) == (
        f"suites.k.{key}[1]: must be a string; got int", f"suites.k.{key}[1]")  # fmt: skip


@pytest.mark.parametrize(
    ("key", "value", "like"),
    [("sass_archs", "compute_80", "sm_90"), ("sass_archs", "sm_80\x1b[31m", "sm_90"),
     ("ptx_archs", "sm_80", "compute_90"), ("ptx_archs", "compute_", "compute_90")],
)  # fmt: skip
def test_archs_are_spelled_as_archs(tmp_path, key, value, like):
    """The archs end up in BundleCoverageError's text: an escape sequence there would reach the terminal."""
    assert refusal(tmp_path, manifest_with(**{key: [value]})) == (
        f"suites.k.{key}[0]: {value!r} is not an arch like {like}", f"suites.k.{key}[0]")  # fmt: skip


def test_entries_are_objects(tmp_path):
    assert refusal(tmp_path, manifest_with(entries=[{}, None])) == (
        "suites.k.entries[1]: must be an object; got NoneType", "suites.k.entries[1]")  # fmt: skip


@pytest.mark.parametrize(("key", "value"), [("f", "_Z\ud800"), ("\ud800", "_Z1fv"), ("f", "_Z1f\x1bv"), ("\n", "x")])
def test_symbol_names_are_printable_utf8(tmp_path, key, value):
    """A lone surrogate passed the schema and the record hash, then load() raised UnicodeEncodeError."""
    assert refusal(tmp_path, manifest_with(symbol_mapping={key: value})) == (
        f"suites.k.symbol_mapping[{key!r}]: not a symbol name: printable UTF-8 text (no tab, newline or other "
        "control character, no lone surrogate)",
        f"suites.k.symbol_mapping[{key!r}]")  # fmt: skip


def test_symbol_mapping_values_are_names(tmp_path):
    assert refusal(tmp_path, manifest_with(symbol_mapping={"f": "_Z1fv", "g": 1})) == (
        "suites.k.symbol_mapping['g']: must be a symbol name; got int", "suites.k.symbol_mapping['g']")  # fmt: skip


def test_bundle_error_text_and_field():
    assert (str(BundleError("no manifest")), BundleError("no manifest").field) == ("no manifest", None)
    assert str(BundleError("negative", "suites.k.size")) == "suites.k.size: negative"
    assert BundleError("negative", "suites.k.size").field == "suites.k.size"


# -- reading the manifest ------------------------------------------------------------------------------------------


class Resource:
    """An ``importlib.resources`` traversable over a dict of bytes (package data in a zip, say), that records how
    much each read asks for: the reads a bundle makes through ``open()`` must be bounded."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files, self.reads = files, []

    def __str__(self) -> str:
        return "pkg/kernels"

    def joinpath(self, name: str) -> Any:
        return SimpleNamespace(open=lambda mode="rb": self._open(name))

    def _open(self, name: str) -> Any:
        if name not in self.files:
            raise FileNotFoundError(name)
        stream, reads = io.BytesIO(self.files[name]), self.reads

        class Reader:
            def __enter__(self) -> Reader:
                return self

            def __exit__(self, *exc: object) -> None:
                pass

            def read(self, n: int = -1) -> bytes:
                reads.append(n)
                return stream.read(n)

        return Reader()


def test_open_takes_a_string_path(built):
    assert KernelBundle.open(str(built)).suites == ["k"]
    for wrong in (str(built).encode(), None, 5):
        with pytest.raises(TypeError) as info:
            KernelBundle.open(wrong)  # type: ignore[arg-type]
        assert str(info.value) == (
            f"a bundle is a folder path or an importlib.resources traversable; got {type(wrong).__name__}")  # fmt: skip


def test_a_manifest_read_through_a_resource_is_bounded(built, monkeypatch):
    raw = (built / "manifest.json").read_bytes()
    resource = Resource({"manifest.json": raw})
    assert KernelBundle.open(resource).suites == ["k"]
    assert resource.reads == [_bundle.MAX_MANIFEST_BYTES + 1]
    monkeypatch.setattr(_bundle, "MAX_MANIFEST_BYTES", len(raw))  # exactly at the limit: read
    assert KernelBundle.open(Resource({"manifest.json": raw})).suites == ["k"]
    monkeypatch.setattr(_bundle, "MAX_MANIFEST_BYTES", len(raw) - 1)
    with pytest.raises(BundleError) as info:
        KernelBundle.open(Resource({"manifest.json": raw}))
    assert str(info.value) == (f"pkg/kernels/manifest.json cannot be read: over the limit of {len(raw) - 1} bytes; "
                               "not a manifest this package wrote")  # fmt: skip


def test_a_manifest_that_is_not_a_file_or_not_json(tmp_path):
    (tmp_path / "manifest.json").mkdir()
    with pytest.raises(BundleError) as info:
        KernelBundle.open(tmp_path)
    assert str(info.value) == (f"{tmp_path}/manifest.json cannot be read: a directory, not a regular file; "
                               "not a manifest this package wrote")  # fmt: skip
    (tmp_path / "manifest.json").rmdir()
    (tmp_path / "manifest.json").write_text('{"schema": 2, "suites": {"k": {"file": "k.0')  # cut short
    with pytest.raises(BundleError) as info:
        KernelBundle.open(tmp_path)
    assert str(info.value) == (
        f"{tmp_path}/manifest.json is not valid JSON (ValueError: not JSON: a bracket is never closed, or closed but "
        "never opened (a cut or edited file?)); rebuild the bundle")  # fmt: skip
    (tmp_path / "manifest.json").write_text('{"schema": 2,}')
    with pytest.raises(BundleError) as info:
        KernelBundle.open(tmp_path)
    assert str(info.value) == (
        f"{tmp_path}/manifest.json is not valid JSON (JSONDecodeError: Expecting property name enclosed in double "
        "quotes: line 1 column 14 (char 13)); rebuild the bundle")  # fmt: skip


# -- a suite's file ------------------------------------------------------------------------------------------------


def refused_read(bundle: KernelBundle) -> tuple[str, str | None]:
    with pytest.raises(BundleError) as info:
        bundle.fatbin("k")
    return str(info.value), info.value.field


def test_an_edited_record_is_refused_before_reading(root):
    manifest = manifest_of(root)
    manifest["suites"]["k"]["symbol_mapping"]["scale<float>"] = "_Z4evilv"
    (root / "manifest.json").write_text(json.dumps(manifest))
    assert refused_read(KernelBundle.open(root)) == (
        "suites.k: the record was edited after the bundle was built (record_sha256); rebuild", "suites.k")  # fmt: skip


def test_each_way_a_suite_file_can_be_wrong_has_its_message(root, monkeypatch):
    bundle = KernelBundle.open(root)
    record = bundle.manifest["suites"]["k"]
    name, size = record["file"], record["size"]
    path, data = root / name, (root / name).read_bytes()
    assert bundle.fatbin("k") == data

    path.write_bytes(data + b"\0")
    assert refused_read(bundle) == (f"suites.k.file: {name} is not of the recorded size {size}; rebuild the bundle",
                                    "suites.k.file")  # fmt: skip
    path.write_bytes(data[:-1])
    assert refused_read(bundle) == (f"suites.k.file: {name} is not of the recorded size {size}; rebuild the bundle",
                                    "suites.k.file")  # fmt: skip
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    assert refused_read(bundle) == (f"suites.k.sha256: {name} does not match its manifest hash; rebuild the bundle",
                                    "suites.k.sha256")  # fmt: skip
    path.unlink()
    assert refused_read(bundle) == (f"suites.k.file: {name} is missing from {root}; rebuild the bundle",
                                    "suites.k.file")  # fmt: skip
    (root / "elsewhere").write_bytes(data)
    path.symlink_to(root / "elsewhere")
    assert refused_read(bundle) == (
        f"suites.k.file: {name} is a symlink, not followed: a bundle holds only regular files directly inside it; "
        "rebuild the bundle", "suites.k.file")  # fmt: skip
    path.unlink()
    path.mkdir()
    assert refused_read(bundle) == (
        f"suites.k.file: {name} is a directory, not a regular file: a bundle holds only regular files directly inside "
        "it; rebuild the bundle", "suites.k.file")  # fmt: skip
    path.rmdir()
    path.write_bytes(data)

    def failing(*args: Any, **kwargs: Any) -> bytes:
        raise OSError(errno.EIO, "Input/output error", str(path))

    monkeypatch.setattr(_bundle, "read_regular", failing)
    assert refused_read(bundle) == (f"suites.k.file: {name} cannot be read: Input/output error", "suites.k.file")


def test_a_bundle_rebuilt_after_it_was_opened_says_open_it_again(root):
    before = KernelBundle.open(root)
    KernelBundle.build(root, {"k": KernelSuite(SRC.replace("*=", "+="), NAMES)}, archs="80-real")
    assert refused_read(before) == (
        f"suites.k.file: the bundle in {root} was rebuilt after it was opened: open it again (KernelBundle.open)",
        "suites.k.file")  # fmt: skip
    assert KernelBundle.open(root).fatbin("k")


def test_a_suite_read_through_a_resource_is_bounded_and_checked(built):
    manifest = (built / "manifest.json").read_bytes()
    record = json.loads(manifest)["suites"]["k"]
    name, size = record["file"], record["size"]
    data = (built / name).read_bytes()
    resource = Resource({"manifest.json": manifest, name: data})
    bundle = KernelBundle.open(resource)
    assert bundle.fatbin("k") == data
    assert resource.reads[1:] == [size + 1]  # one more byte than recorded: a longer file is seen, not read whole
    bundle = KernelBundle.open(Resource({"manifest.json": manifest, name: data + b"\0" * (1 << 20)}))
    assert refused_read(bundle) == (f"suites.k.sha256: {name} does not match its manifest hash; rebuild the bundle",
                                    "suites.k.sha256")  # fmt: skip
    bundle = KernelBundle.open(Resource({"manifest.json": manifest}))
    assert refused_read(bundle) == (f"suites.k.file: {name} is missing from pkg/kernels; rebuild the bundle",
                                    "suites.k.file")  # fmt: skip


def test_a_damaged_zip_member_is_a_bundle_error(built, tmp_path):
    manifest = (built / "manifest.json").read_bytes()
    name = json.loads(manifest)["suites"]["k"]["file"]
    data = (built / name).read_bytes()
    archive = tmp_path / "pkg.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as z:
        z.writestr("kernels/manifest.json", manifest)
        z.writestr(f"kernels/{name}", data)
    raw = bytearray(archive.read_bytes())
    at = raw.index(data[64:96])  # a byte of the stored member: its CRC no longer matches
    raw[at] ^= 0xFF
    archive.write_bytes(raw)
    bundle = KernelBundle.open(zipfile.Path(archive, "kernels/"))
    assert refused_read(bundle) == (f"suites.k.file: {name} cannot be read: BadZipFile: Bad CRC-32 for file "
                                    f"'kernels/{name}'",
                                    "suites.k.file")  # fmt: skip


def test_load_names_the_object_code_after_the_suite(built):
    obj = KernelBundle.open(built).load("k", gpu="8.0", driver="13.0")
    obj_plain = plain(obj)
    assert (obj_plain.name, obj_plain.symbol_mapping) == ("k", {"scale<float>": b"_Z5scaleIfEvPT_S0_"})


# -- the record build writes ---------------------------------------------------------------------------------------


def test_the_record_describes_the_fatbin_as_cuobjdump_lists_it(tmp_path, cuobjdump):
    # built here, not taken from the module's bundle: mutation testing maps build's code to this test
    bundle = KernelBundle.build(tmp_path / "b", {"k": KernelSuite(SRC, NAMES)}, archs=ARCHS,
                                fatbin_options=FatbinOptions(compress_mode="size"))  # fmt: skip
    record = bundle.manifest["suites"]["k"]
    data = (tmp_path / "b" / record["file"]).read_bytes()
    listing = cuobjdump(data, "-lelf", "-lptx")
    assert "sm_80" in listing and "sm_90" in listing
    assert record["sass_archs"] == ["sm_80"] and record["ptx_archs"] == ["compute_90"]  # PTX-only arch: not SASS
    isa = record["ptx_isa"]
    assert [{k: e[k] for k in ("kind", "arch", "compression")} for e in record["entries"]] == [
        {"kind": "elf", "arch": "sm_80", "compression": "zstd"},
        {"kind": "ptx", "arch": "sm_90", "compression": "zstd"},
    ]
    assert [set(e) for e in record["entries"]] == [{"kind", "arch", "version", "compression"}] * 2
    assert record["entries"][1]["version"] == isa and f".version {isa}" in cuobjdump(data, "-ptx")
    # zstd entries need a CUDA 12.4+ driver (docs/caching.md's table)
    assert (record["compression"], record["decompress_min_driver_cuda"]) == (["zstd"], "12.4")
    assert record["size"] == len(data) and record["sha256"] == hashlib.sha256(data).hexdigest()
    assert record["record_sha256"] == digest(record)


def test_an_uncompressed_suite_needs_no_decompressing_driver(tmp_path):
    bundle = KernelBundle.build(tmp_path / "b", {"k": KernelSuite(SRC, NAMES)}, archs="80-real", ptx_for="none")
    record = bundle.manifest["suites"]["k"]
    assert (record["compression"], record["decompress_min_driver_cuda"], record["ptx_isa"]) == (["none"], None, None)


def test_built_with_names_the_installed_versions(built, monkeypatch):
    from importlib.metadata import PackageNotFoundError, version

    from cuda.bindings import nvfatbin, nvrtc

    def installed(dist: str) -> str | None:
        try:
            return version(dist)
        except PackageNotFoundError:  # run from a source tree
            return None

    assert manifest_of(built)["built_with"] == {
        "cuda-fatbin": installed("cuda-fatbin"), "cuda-core": installed("cuda-core"),
        "cuda-bindings": installed("cuda-bindings"), "nvrtc": "{}.{}".format(*nvrtc.nvrtcVersion()[1:]),
        "libnvfatbin": "{}.{}".format(*nvfatbin.version()),
    }  # fmt: skip

    def only_cuda_core(dist: str) -> str:
        if dist != "cuda-core":
            raise PackageNotFoundError(dist)
        return "9.9"

    monkeypatch.setattr("importlib.metadata.version", only_cuda_core)
    assert {k: v for k, v in _bundle._versions().items() if k.startswith("cuda")} == {
        "cuda-fatbin": None, "cuda-core": "9.9", "cuda-bindings": None}  # fmt: skip


def test_a_manifest_build_writes_is_one_a_later_clean_up_recognises(tmp_path):
    """_is_manifest knows a crashed build's manifest by how build() writes it (whole, or cut short)."""
    bundle = tmp_path / "b"
    KernelBundle.build(bundle, {"k": KernelSuite(SRC, NAMES)}, archs="80-real", ptx_for="none")
    raw = (bundle / "manifest.json").read_bytes()
    for cut in (len(raw), 30, 3, 0):
        (tmp_path / "m.json").write_bytes(raw[:cut])
        assert _bundle._is_manifest(str(tmp_path / "m.json")), cut
    (tmp_path / "m.json").write_bytes(json.dumps(json.loads(raw)).encode())  # the same manifest, written another way
    assert not _bundle._is_manifest(str(tmp_path / "m.json"))


def test_the_manifest_does_not_depend_on_the_order_of_the_suites(tmp_path):
    one = {"k": KernelSuite(SRC, NAMES), "j": KernelSuite(SRC.replace("*=", "+="), NAMES)}
    KernelBundle.build(tmp_path / "a", one, archs="80-real", ptx_for="none")
    KernelBundle.build(tmp_path / "b", dict(reversed(one.items())), archs="80-real", ptx_for="none")
    assert (tmp_path / "a" / "manifest.json").read_bytes() == (tmp_path / "b" / "manifest.json").read_bytes()


def test_build_passes_every_argument_on_to_the_compile(tmp_path, monkeypatch):
    from cuda.core.utils import InMemoryProgramCache

    from cuda_fatbin import Program, ProgramOptions

    seen: list[tuple[Any, ...]] = []
    compile_, init = Program.compile, Program.__init__

    def spy_init(self: Program, *args: Any) -> None:
        seen.append(("init", *args))
        init(self, *args)

    def spy_compile(self: Program, *args: Any, **kwargs: Any) -> Any:
        seen.append(("compile", args, kwargs))
        return compile_(self, *args, **kwargs)

    monkeypatch.setattr(Program, "__init__", spy_init)
    monkeypatch.setattr(Program, "compile", spy_compile)
    options, logs, cache = ProgramOptions(define_macro="N=2"), io.StringIO(), InMemoryProgramCache()
    fatbin_options = FatbinOptions(compress=False)
    suite = KernelSuite(SRC, NAMES, options=options)
    KernelBundle.build(tmp_path / "b", {"k": suite}, archs="80", ptx_for="none", fatbin_options=fatbin_options,
                       cache=cache, max_workers=1, logs=logs, min_driver="13.0")  # fmt: skip
    assert seen == [
        ("init", SRC, "c++", options),
        ("compile", ("fatbin", NAMES, logs), {"archs": "80", "ptx_for": "none", "fatbin_options": fatbin_options,
                                              "cache": cache, "max_workers": 1, "min_driver": "13.0"}),
    ]  # fmt: skip


def test_misuse_of_build_and_kernel_suite(tmp_path):
    with pytest.raises(TypeError) as info:
        KernelSuite(1)  # type: ignore[arg-type]
    assert str(info.value) == "KernelSuite source must be str or bytes; got int"
    with pytest.raises(TypeError) as info:
        KernelBundle.build(tmp_path, {"s": "source"}, archs="80")  # type: ignore[dict-item]
    assert str(info.value) == "suite 's' must be a KernelSuite; got str"
    with pytest.raises(ValueError) as info:
        KernelBundle.build(tmp_path, {}, archs="80")
    assert str(info.value) == "a bundle needs at least one suite"


# -- check: the device and driver ----------------------------------------------------------------------------------


def fake_device(monkeypatch: pytest.MonkeyPatch, driver: int) -> None:
    """The current device: a compute capability 9.0 GPU named "Fake GPU" on the driver given."""
    from cuda_fatbin import _driver

    device = _driver.DeviceInfo(index=0, name="Fake GPU", capability=(9, 0), driver=driver)
    monkeypatch.setattr(_driver, "devices", lambda needed_for="this", instead="": (device,))


def test_the_current_device_is_read_from_the_driver(monkeypatch):
    fake_device(monkeypatch, 13000)
    assert _bundle._current_device() == ("9.0", 13000, "Fake GPU")


def same(got: Any, want: Any, kind: str) -> bool:
    """Two selections of one entry (of ``kind``) for one GPU and driver."""
    return (got.status, got.gpu, got.reason, got.entry.kind, got.entry.offset) == (
        want.status, want.gpu, want.reason, kind, want.entry.offset)  # fmt: skip


def test_check_asks_the_device_only_for_what_it_was_not_given(built, monkeypatch):
    bundle = KernelBundle.open(built)
    data, record = bundle.fatbin("k"), bundle.manifest["suites"]["k"]
    need = record["ptx_min_driver_cuda"]  # of the compute_90 PTX's ISA, which depends on the NVRTC that built it
    major, minor = map(int, need.split("."))
    older = f"{major}.{minor - 1}" if minor else f"{major - 1}.9"  # one release too old for the PTX
    fake_device(monkeypatch, 1000 * int(older.split(".")[0]) + 10 * int(older.split(".")[1]))
    # the device's 9.0 with the given driver that JITs the PTX
    assert same(bundle.check("k", driver=need), select_entry(data, "9.0", driver=need), "ptx")
    # the given 8.0 with the device's driver: the sm_80 SASS
    assert same(bundle.check("k", gpu="8.0"), select_entry(data, "8.0", driver=older), "elf")
    with pytest.raises(BundleCoverageError) as info:
        bundle.check("k")  # the device's 9.0 on its driver: no SASS for it and the PTX is too new
    reason = select_entry(data, "9.0", driver=older).reason
    assert str(info.value) == (
        f"kernel suite 'k' cannot run on Fake GPU (compute capability 9.0) with a CUDA {older} driver: the bundle has "
        f"sm_80, compute_90. {reason}. To fix: {_bundle._rebuild_advice(select_entry(data, '9.0').gpu)}; or update "
        f"the driver to CUDA {need}+ so that its PTX (ISA {record['ptx_isa']}) can be JIT-compiled."
    )


def test_a_record_with_nothing_loadable_says_so(root):
    bundle = edit_record(root, sass_archs=[], ptx_archs=[])
    with pytest.raises(BundleCoverageError) as info:
        bundle.check("k", gpu="7.5", driver="13.0")
    assert "cannot run on compute capability 7.5 with a CUDA 13.0 driver: the bundle has nothing loadable. " in str(
        info.value
    )


def test_min_driver_refuses_an_older_driver_and_names_both(root):
    bundle = edit_record(root, min_driver="13.0")
    with pytest.raises(BundleCoverageError) as info:
        bundle.check("k", gpu="8.0", driver="12.4")
    assert str(info.value) == (
        "kernel suite 'k' was built for CUDA 13.0+ drivers; this driver is CUDA 12.4. To fix: update the driver, or "
        "rebuild the bundle with min_driver='12.4'."
    )
    assert bundle.check("k", gpu="8.0", driver="13.0")


def test_rebuild_advice_without_nvrtc_is_the_plain_one(monkeypatch):
    from cuda_fatbin import Arch, _arch

    def no_nvrtc() -> Any:
        raise RuntimeError("no NVRTC here")

    monkeypatch.setattr(_arch, "nvrtc_supported_sms", no_nvrtc)
    assert _bundle._rebuild_advice(Arch.parse("sm_75")) == (
        "rebuild with sm_75 in archs (e.g. archs=[..., 'sm_75'] or cuda-fatbin compile --arch ...)")  # fmt: skip


# -- what a rebuild removes, and what it leaves ----------------------------------------------------------------------


def changed_copy(data: bytes, i: int) -> tuple[str, bytes]:
    """A fatbin of other content (one byte of its body changed; the header still gives its size), named as a build
    names it: what an older build of suite ``old<i>`` left."""
    copy = bytearray(data)
    copy[len(copy) // 2] ^= i + 1
    return f"old{i}.{hashlib.sha256(copy).hexdigest()[:16]}.fatbin", bytes(copy)


def rebuild(root: Path) -> None:
    KernelBundle.build(
        root, {"k": KernelSuite(SRC, NAMES)}, archs=ARCHS, fatbin_options=FatbinOptions(compress_mode="size")
    )


def test_a_rebuild_removes_every_leftover_of_earlier_builds(root):
    data = (root / manifest_of(root)["suites"]["k"]["file"]).read_bytes()
    old = dict(changed_copy(data, i) for i in range(6))
    for name, content in old.items():
        (root / name).write_bytes(content)
    for i in range(6):  # crashed builds' staging folders, emptied and removed
        (root / f"{_bundle._STAGE_PREFIX}{i}").mkdir()
    rebuild(root)
    assert sorted(os.listdir(root)) == sorted(["manifest.json", manifest_of(root)["suites"]["k"]["file"]])


def test_a_crashed_builds_staging_folder_is_named_for_the_next_build_to_remove(root, monkeypatch):
    monkeypatch.setattr(_bundle, "_remove_stage", lambda stage, **kw: None)  # the build dies before removing it
    rebuild(root)
    stages = [p.name for p in root.iterdir() if p.is_dir()]
    assert len(stages) == 1 and stages[0].startswith(".cuda-fatbin-build-")
    monkeypatch.undo()
    rebuild(root)
    assert not [p for p in root.iterdir() if p.is_dir()]


def test_a_staging_folder_keeps_what_no_build_puts_there(root, tmp_path):
    """Another build's staging folder (or a folder of the user's named like one): only a fatbin whose bytes have
    its name's hash and a valid manifest go; a file of a build's name but other content stayed only at the
    top level, and was removed inside such a folder."""
    data = (root / manifest_of(root)["suites"]["k"]["file"]).read_bytes()
    name, content = changed_copy(data, 0)
    stage = root / f"{_bundle._STAGE_PREFIX}x"
    stage.mkdir()
    (stage / name).write_bytes(content)  # what a crashed build leaves: removed
    (stage / "notes.txt").write_text("mine")
    (stage / "copy.json").write_bytes((root / "manifest.json").read_bytes())  # a manifest's bytes, another name
    for i in (1, 2, 3):  # more of what a build leaves, among what it does not: each judged on its own
        (stage / f"a{i}.txt").write_text("mine")
        (stage / changed_copy(data, i)[0]).write_bytes(changed_copy(data, i)[1])
    (stage / "k.0123456789abcdef.fatbin").write_bytes(b"not what the name says")
    (tmp_path / "outside.json").write_text("{}")
    (stage / "manifest.json").symlink_to(tmp_path / "outside.json")
    (stage / "sub").mkdir()
    crashed = root / f"{_bundle._STAGE_PREFIX}y"
    crashed.mkdir()
    (crashed / "manifest.json").write_bytes((root / "manifest.json").read_bytes())  # a valid manifest: removed
    users = root / f"{_bundle._STAGE_PREFIX}z"
    users.mkdir()
    (users / "manifest.json").write_text('{"mine": true}')
    large = root / f"{_bundle._STAGE_PREFIX}w"
    large.mkdir()
    with open(large / "manifest.json", "wb") as f:  # begins as a build's, but larger than any manifest read
        f.write(_bundle._MANIFEST_HEAD)
        f.truncate(_bundle.MAX_MANIFEST_BYTES + 1)
    rebuild(root)
    assert sorted(os.listdir(stage)) == [
        "a1.txt", "a2.txt", "a3.txt", "copy.json", "k.0123456789abcdef.fatbin", "manifest.json", "notes.txt",
        "sub"]  # fmt: skip
    assert os.path.getsize(large / "manifest.json") == _bundle.MAX_MANIFEST_BYTES + 1
    assert (stage / "manifest.json").is_symlink() and (tmp_path / "outside.json").read_text() == "{}"
    assert not crashed.exists() and (users / "manifest.json").read_text() == '{"mine": true}'


class FailingOS:
    """``os`` as ``_bundle`` sees it, with the calls named failing on paths under ``under``."""

    def __init__(self, under: Path, *calls: str) -> None:
        self._under, self._calls = str(under), calls

    def __getattr__(self, name: str) -> Any:
        real = getattr(os, name)
        if name not in self._calls:
            return real

        def failing(path: Any, *args: Any, **kwargs: Any) -> Any:
            where = os.readlink(f"/proc/self/fd/{path}") if isinstance(path, int) else os.fspath(path)  # a folder fd
            if kwargs.get("dir_fd") is not None:  # a name in an open folder
                where = os.path.join(os.readlink(f"/proc/self/fd/{kwargs['dir_fd']}"), where)
            if where.startswith(self._under):
                raise PermissionError(errno.EACCES, "Permission denied", where)
            return real(path, *args, **kwargs)

        return failing


@pytest.mark.parametrize("call", ["scandir", "unlink", "rmdir"])
def test_a_leftover_that_cannot_be_removed_stays_and_the_build_succeeds(root, monkeypatch, call):
    data = (root / manifest_of(root)["suites"]["k"]["file"]).read_bytes()
    name, content = changed_copy(data, 0)
    (root / name).write_bytes(content)
    stage = root / f"{_bundle._STAGE_PREFIX}x"
    stage.mkdir()
    (stage / "manifest.json").write_text("{}")
    (stage / name).write_bytes(content)  # a file the clean-up removes: its unlink fails
    monkeypatch.setattr(_bundle, "os", FailingOS(root, call))  # the clean-up's calls fail; the build's own do not
    rebuild(root)
    monkeypatch.undo()
    assert KernelBundle.open(root).fatbin("k")  # published all the same
    left = {"scandir": {name, stage.name}, "unlink": {name, stage.name}, "rmdir": {stage.name}}[call]
    assert left <= set(os.listdir(root))


@pytest.mark.parametrize("how", ["symlink", "folder"])
@pytest.mark.parametrize("which", ["own", "crashed"])
def test_a_staging_folder_swapped_for_a_symlink_never_leads_the_removal_elsewhere(
    root, tmp_path, monkeypatch, which, how
):
    """The build's own staging folder, or a crashed build's that the clean-up found, is replaced by a symlink
    to a folder outside the bundle just before it is emptied: nothing there is removed (docs/security.md)."""
    victim = tmp_path / "victim"
    victim.mkdir()
    name = "k.0123456789abcdef.fatbin"  # names a build writes; a removal by name alone would take them
    (victim / name).write_bytes(b"not what the name says")
    if which == "own":  # the build's own folder is emptied by name: a manifest of any content would go
        (victim / "manifest.json").write_text('{"mine": true}')
    else:  # another build's is judged by content: this one would go
        (victim / "manifest.json").write_bytes((root / "manifest.json").read_bytes())
    if which == "crashed":
        (root / f"{_bundle._STAGE_PREFIX}x").mkdir()
    real = _bundle._remove_stage

    def swapped(stage: Path, **kw: Any) -> None:
        if (which == "own") == kw.get("ours", True):
            os.rename(stage, tmp_path / f"moved-{stage.name}")
            if how == "symlink":
                stage.symlink_to(victim)
            else:  # the victim folder itself moved in under the stage's name
                os.rename(victim, stage)
        real(stage, **kw)

    monkeypatch.setattr(_bundle, "_remove_stage", swapped)
    rebuild(root)
    left = victim if how == "symlink" else next(root.glob(f"{_bundle._STAGE_PREFIX}*"))
    assert sorted(os.listdir(left)) == sorted([name, "manifest.json"])


def test_a_staging_folder_swapped_after_it_was_opened_is_emptied_as_opened(root, tmp_path, monkeypatch):
    """The build's own staging folder is opened, then swapped for a symlink to a folder outside the bundle:
    what is listed and removed is the folder opened (its files, by name in it), never the symlink's target."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "k.0123456789abcdef.fatbin").write_text("mine")  # a name the build's own folder is emptied of
    moved = tmp_path / "moved"
    real = _bundle.open_dir

    opened: list[str] = []

    def open_then_swap(path, **kw):
        fd = real(path, **kw)
        opened.append(str(path))
        if Path(path).name.startswith(_bundle._STAGE_PREFIX) and opened.count(str(path)) == 2:  # by _remove_stage
            (Path(path) / "manifest.json").write_text("{}")  # left in the folder opened: removed by name
            os.rename(path, moved)
            Path(path).symlink_to(victim)
        return fd

    monkeypatch.setattr(_bundle, "open_dir", open_then_swap)
    rebuild(root)
    assert os.listdir(victim) == ["k.0123456789abcdef.fatbin"]
    assert os.listdir(moved) == []  # the build's files went from the folder it had opened


@pytest.mark.parametrize("when", ["made", "opened"])
def test_a_staging_folder_swapped_while_the_build_writes_in_it_leads_no_write_elsewhere(
    root, tmp_path, monkeypatch, when
):
    """A past bug: the build's staging folder, swapped for a symlink to a folder outside the
    bundle after it was made, received the build's files through the link (left there when the rename into
    the bundle failed). The folder made is opened without following a link and must be the one made; files
    are created and renamed by name in it: swapped before it was opened, the build stops; after, it goes on
    in the folder it opened."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "manifest.json").write_text('{"mine": true}')  # a write through the link would meet it
    swapped: list[Path] = []

    def swap() -> None:
        (stage,) = root.glob(f"{_bundle._STAGE_PREFIX}*")
        os.rename(stage, tmp_path / "moved")
        stage.symlink_to(victim)
        swapped.append(stage)

    if when == "made":  # right after its identity was taken
        real_identity = _bundle.identity

        def identity(st):
            got = real_identity(st)
            if not swapped and list(root.glob(f"{_bundle._STAGE_PREFIX}*")):
                swap()
            return got

        monkeypatch.setattr(_bundle, "identity", identity)
        with pytest.raises(OSError, match="changed while listed"):
            rebuild(root)
    else:
        real = _bundle.open_dir

        def open_then_swap(path, **kw):
            fd = real(path, **kw)
            if Path(path).name.startswith(_bundle._STAGE_PREFIX) and not swapped:  # the first open: _publish's
                swap()
            return fd

        monkeypatch.setattr(_bundle, "open_dir", open_then_swap)
        rebuild(root)
        assert os.listdir(tmp_path / "moved") == []  # what the build wrote there was renamed into the bundle
    assert swapped and os.listdir(victim) == ["manifest.json"]
    assert (victim / "manifest.json").read_text() == '{"mine": true}'
    assert KernelBundle.open(root).fatbin("k")


def test_without_folder_descriptors_a_staging_folder_is_emptied_by_path(root, monkeypatch):
    """Where folders cannot be opened (Windows: no dir_fd), a crashed build's staging folder is judged and
    emptied by path, with the same rules."""
    monkeypatch.setattr(_bundle, "DIR_FD", False)
    data = (root / manifest_of(root)["suites"]["k"]["file"]).read_bytes()
    name, content = changed_copy(data, 0)
    stage = root / f"{_bundle._STAGE_PREFIX}x"
    stage.mkdir()
    (stage / name).write_bytes(content)  # a build's leftover: removed
    (stage / "notes.txt").write_text("mine")  # stays, and so does the folder
    crashed = root / f"{_bundle._STAGE_PREFIX}y"
    crashed.mkdir()
    (crashed / "manifest.json").write_bytes((root / "manifest.json").read_bytes())
    rebuild(root)
    assert os.listdir(stage) == ["notes.txt"] and not crashed.exists()
    assert not [p for p in root.iterdir() if p.name.startswith(_bundle._STAGE_PREFIX) and p != stage]


def test_a_build_leaves_no_descriptor_open(root):
    (root / f"{_bundle._STAGE_PREFIX}x").mkdir()  # a crashed build's folder: opened and emptied
    rebuild(root)  # the first build of this process opens what it keeps open anyway (libraries, caches)
    (root / f"{_bundle._STAGE_PREFIX}y").mkdir()
    before = len(os.listdir("/proc/self/fd"))
    rebuild(root)
    assert len(os.listdir("/proc/self/fd")) == before


@pytest.mark.parametrize("expr", ["f<float>\t", "f<float>\n", "f<\tfloat>", "f<float>\x1b", "f<float>\ud800"])
def test_build_refuses_a_name_expression_that_open_would_refuse(tmp_path, expr):
    """A tab or a trailing newline compiled, was written, and KernelBundle.open() refused the bundle at run time."""
    src = "template <typename T> __global__ void f(T* p) { p[0] = 1; }"
    with pytest.raises(ValueError, match=r"suite 'k': name expression .* is not printable UTF-8 text \(no tab"):
        KernelBundle.build(tmp_path / "b", {"k": KernelSuite(src, ["f<int>", expr])}, archs=["sm_80"])
    with pytest.raises(ValueError, match=r"suite 'k': name expression .* is not printable UTF-8 text \(no tab"):
        KernelBundle.build(tmp_path / "b", {"k": KernelSuite(src, expr)}, archs=["sm_80"])  # one, as a str
    assert not (tmp_path / "b").exists()  # refused before anything was compiled or written
    built = KernelBundle.build(tmp_path / "b", {"k": KernelSuite(src, ["f<int>", "f< float >"])}, archs=["sm_80"])
    reopened = KernelBundle.open(tmp_path / "b")  # what build accepts, open reads
    assert reopened.fatbin("k") == built.fatbin("k")
    assert reopened._record("k")["symbol_mapping"] == {"f<int>": "_Z1fIiEvPT_", "f< float >": "_Z1fIfEvPT_"}
