# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Builders of conda packages, docker save tars and OCI image layouts from bytes, with tarfile and zipfile."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import json
import tarfile
import zipfile
from pathlib import Path

import zstandard


def tar_bytes(files: dict[str, bytes | None], links: dict[str, str] | None = None, hard: dict[str, str] | None = None,
              fmt: int = tarfile.PAX_FORMAT) -> bytes:  # fmt: skip
    """A tar of ``files`` (``None``: a folder), symlinks ``links`` and hard links ``hard`` (name -> target)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                tf.addfile(info)
            else:
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
        for kind, table in ((tarfile.SYMTYPE, links or {}), (tarfile.LNKTYPE, hard or {})):
            for name, target in table.items():
                info = tarfile.TarInfo(name)
                info.type, info.linkname = kind, target
                tf.addfile(info)
    return buf.getvalue()


def compress(data: bytes, how: str | None) -> bytes:
    if how == "gzip":
        return gzip.compress(data)
    if how == "zstd":
        return zstandard.ZstdCompressor().compress(data)
    if how == "bzip2":
        return bz2.compress(data)
    return data


def index_json(name: str = "k-cuda", version: str = "1.0") -> bytes:
    return json.dumps({"name": name, "version": version, "build": "0", "subdir": "linux-64"}).encode()


def conda_tar_bz2(path: Path, files: dict[str, bytes | None], index: bytes | None = None) -> Path:
    """A ``.tar.bz2`` conda package: ``info/index.json`` and ``files``."""
    path.write_bytes(bz2.compress(tar_bytes({"info/index.json": index or index_json(), **files})))
    return path


def dot_conda(path: Path, files: dict[str, bytes | None], index: bytes | None = None) -> Path:
    """A ``.conda`` package: a stored zip of ``metadata.json``, ``info-*.tar.zst`` and ``pkg-*.tar.zst``."""
    stem = path.name[: -len(".conda")]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("metadata.json", json.dumps({"conda_pkg_format_version": 2}))
        zf.writestr(f"pkg-{stem}.tar.zst", compress(tar_bytes(files), "zstd"))
        zf.writestr(f"info-{stem}.tar.zst", compress(tar_bytes({"info/index.json": index or index_json()}), "zstd"))
    return path


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def docker_save(path: Path, layers: list[bytes], *, tags: tuple[str, ...] = ("demo:1",), images: int = 1) -> Path:
    """A legacy ``docker save`` tar: ``ID/layer.tar`` per layer (bottom first) and ``manifest.json``."""
    files: dict[str, bytes | None] = {}
    names = []
    for i, layer in enumerate(layers):
        lid = hashlib.sha256(layer + bytes([i])).hexdigest()
        files[f"{lid}/"] = None
        files[f"{lid}/layer.tar"] = layer
        names.append(f"{lid}/layer.tar")
    files["config.json"] = b"{}"
    files["manifest.json"] = json.dumps([{"Config": "config.json", "RepoTags": list(tags), "Layers": names}] * images
                                        ).encode()  # fmt: skip
    path.write_bytes(tar_bytes(files))
    return path


def oci_files(layers: list[bytes], media: str = "application/vnd.oci.image.layer.v1.tar") -> dict[str, bytes | None]:
    """The files of an OCI image layout: ``oci-layout``, ``index.json``, ``blobs/sha256/...``."""
    blobs = {digest(b): b for b in layers}
    config = b'{"architecture": "amd64", "os": "linux"}'
    manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                           "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": digest(config),
                                      "size": len(config)},
                           "layers": [{"mediaType": media, "digest": digest(b), "size": len(b)} for b in layers]}
                          ).encode()  # fmt: skip
    blobs[digest(config)] = config
    blobs[digest(manifest)] = manifest
    index = {"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                                                "digest": digest(manifest), "size": len(manifest)}]}  # fmt: skip
    files: dict[str, bytes | None] = {"oci-layout": b'{"imageLayoutVersion": "1.0.0"}',
                                      "index.json": json.dumps(index).encode()}  # fmt: skip
    for d, b in blobs.items():
        files[f"blobs/sha256/{d.split(':')[1]}"] = b
    return files


def oci_folder(folder: Path, layers: list[bytes]) -> Path:
    for name, data in oci_files(layers).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        if data is not None:
            (folder / name).write_bytes(data)
    return folder
