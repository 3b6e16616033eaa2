# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Container images read in place: ``docker save`` tars, OCI image layouts (a folder or a tar of one), plain tars.

The image's layers are found from ``manifest.json`` (``docker save``) or else ``index.json`` (OCI: an
index, nested indexes followed, attestation manifests left out, then the image manifest); the image must
be one (a file of several images is an error: save one per file). A tar with neither is one layer of
itself. Layers are read **from the top down, each decompressed once** (gzip, zstd, bzip2 or none, told
by their first bytes; :mod:`cuda_fatbin._tarstream`): when a layer is read, every layer above it is
known, so each of its files is judged then — or passed over, never read, when an upper layer hides it
(the same path, a whiteout ``.wh.NAME`` of it or of a folder above it, an opaque folder
``.wh..wh..opq`` above it, a file where it has a folder). So a binary is read from the last layer that
provides it, and only its bytes are held, one member at a time. The outer tar must be uncompressed (as
``docker save`` writes it); its members are found by their headers, with seeks. In a layout folder every
name is opened without following a symlink (``blobs``, ``sha256``, the blob), and a digest must be
``sha256:`` or ``sha512:`` and hex: no name from the image reaches the file system otherwise.

Reading side: imports nothing of the compile side.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

from ._archive import SEPARATOR, ArchiveError
from ._files import O_CLOEXEC, O_DIRECTORY, O_NOFOLLOW, describe, is_regular, loads_json, open_input
from ._tarstream import Found, clean, iter_tar, open_stream

__all__ = ["read_image"]

_MAX_JSON = 16 << 20
_MAX_STEPS = 256  # manifests visited in nested indexes
_DIGEST = re.compile(r"(sha256|sha512):([0-9a-f]{64}|[0-9a-f]{128})\Z")
_WH, _OPQ, _PRESENT, _BELOW = 1, 2, 4, 8
_CLIMBS = "its path climbs out of the archive (../); not read"

Wanted = Callable[[str, bytes], bool]
_Blob = tuple[int, int, int, bool]  # descriptor, offset, size, owned (close it)


def _fail(message: str, where: str, code: int = errno.EINVAL) -> ArchiveError:
    return ArchiveError(code, message, where)


def _outer(fd: int, path: str) -> dict[str, tuple[int, int]]:
    """The regular files of the uncompressed tar open as ``fd``: name -> (data offset, size); seeks only."""
    stream = open_stream(fd, 0, os.fstat(fd).st_size, path)
    if stream.compression != "none":
        raise _fail(f"a {stream.compression}-compressed tar; decompress it, then scan the .tar", path)
    files: dict[str, tuple[int, int]] = {}
    for entry, _data in iter_tar(stream, path):
        name = clean(entry.name)
        if entry.kind == "file" and name:
            files[name] = (stream.raw.pos, entry.size)
    return files


def _open_in_folder(dir_fd: int, name: str, where: str) -> _Blob:
    """``name`` (``index.json``, ``blobs/sha256/HEX``) in the layout folder, no symlink followed on the way."""
    parts = name.split("/")
    fds: list[int] = []
    try:
        at = dir_fd
        for p in parts[:-1]:
            at = os.open(p, os.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, dir_fd=at)
            fds.append(at)
        fd, st = open_input(parts[-1], follow=False, dir_fd=at)
    except OSError as e:
        raise _fail(f"{name}: {e.strerror or e} (a symlink is not followed)", where, e.errno or errno.EIO) from None
    finally:
        for f in fds:
            os.close(f)
    if not is_regular(st):
        os.close(fd)
        raise _fail(f"{name}: {describe(st)}, not a regular file", where)
    return fd, 0, st.st_size, True


def _blob_name(digest: object, where: str) -> str:
    m = _DIGEST.match(digest) if isinstance(digest, str) else None
    if m is None:
        raise _fail(f"a digest that is not sha256:HEX or sha512:HEX ({str(digest)[:80]!r})", where)
    return f"blobs/{m.group(1)}/{m.group(2)}"


def _json(blob: _Blob, name: str, where: str) -> Any:
    fd, offset, size, _owned = blob
    if size > _MAX_JSON:
        raise _fail(f"{name}: {size} bytes of JSON, over {_MAX_JSON}", where, errno.EFBIG)
    raw = os.pread(fd, size, offset)
    try:
        return loads_json(raw, 16)
    except ValueError as e:
        raise _fail(f"{name}: {e}", where) from None


def _image_manifest(read: Callable[[str], Any], where: str) -> Any:
    """The one image manifest an OCI ``index.json`` leads to (nested indexes followed, attestations left out)."""
    todo, images, steps, expanded = [read("index.json")], [], 0, set()  # each index blob read once
    while todo:
        doc = todo.pop()
        manifests = doc.get("manifests") if isinstance(doc, dict) else None
        for d in manifests if isinstance(manifests, list) else []:
            steps += 1
            if steps > _MAX_STEPS:
                raise _fail(f"over {_MAX_STEPS} manifests in its indexes (a loop?)", where)
            if not isinstance(d, dict):
                continue
            notes, platform = d.get("annotations"), d.get("platform")
            if isinstance(notes, dict) and notes.get("vnd.docker.reference.type") == "attestation-manifest":
                continue
            if isinstance(platform, dict) and platform.get("os") == "unknown":
                continue
            kind = str(d.get("mediaType", ""))
            if kind.endswith(("image.index.v1+json", "manifest.list.v2+json")):
                blob = _blob_name(d.get("digest"), where)
                if blob not in expanded:
                    expanded.add(blob)
                    todo.append(read(blob))
            else:
                images.append(d)
    if len(images) != 1:
        raise _fail(f"holds {len(images)} images; scan an image layout or save of one image", where)
    return read(_blob_name(images[0].get("digest"), where))


def _layers(read: Callable[[str], Any], has: Callable[[str], bool], where: str) -> list[tuple[str, str]] | None:
    """``(name in the image, layer id)`` from the bottom up; ``None`` for a tar that is no image."""
    if has("manifest.json"):
        doc = read("manifest.json")
        if not isinstance(doc, list) or len(doc) != 1 or not isinstance(doc[0], dict):
            count = len(doc) if isinstance(doc, list) else "no list of"
            raise _fail(f"manifest.json: {count} images; scan a save of one image", where)
        names = doc[0].get("Layers")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise _fail("manifest.json: Layers is not a list of names", where)
        out = []
        for n in names:
            name = clean(n)
            if not name:
                raise _fail(f"manifest.json: a layer name that climbs out of the image ({n[:80]!r})", where)
            found = re.fullmatch(r"blobs/(sha256|sha512)/([0-9a-f]+)", name)
            out.append((name, f"{found.group(1)}:{found.group(2)}" if found else name))
        return out
    if has("index.json") and has("oci-layout"):
        manifest = _image_manifest(read, where)
        layers = manifest.get("layers") if isinstance(manifest, dict) else None
        if not isinstance(layers, list) or not all(isinstance(d, dict) for d in layers):
            raise _fail("the image manifest has no list of layers", where)
        return [(_blob_name(d.get("digest"), where), str(d.get("digest"))) for d in layers]
    return None


def _hidden(trie: dict[str, Any], parts: list[str]) -> bool:
    """Is ``parts`` (a path) hidden by the upper layers recorded in ``trie``?"""
    node = trie
    if parts and node.get("", 0) & _OPQ:
        return True
    for i, p in enumerate(parts):
        node = node.get(p)  # type: ignore[assignment]
        if node is None:
            return False
        flags = node.get("", 0)
        if i == len(parts) - 1:
            return bool(flags & (_WH | _PRESENT | _BELOW))
        if flags & (_WH | _OPQ | _BELOW):
            return True
    return False


def _mark(trie: dict[str, Any], parts: list[str], flag: int) -> None:
    node = trie
    for p in parts:
        node = node.setdefault(p, {})
    node[""] = node.get("", 0) | flag


def _layer(blob: _Blob, where: str, layer: dict[str, int | str] | None, trie: dict[str, Any], wanted: Wanted, head: int
           ) -> Iterator[Found]:  # fmt: skip
    """The wanted files of one layer that no upper layer hides; then its own files and whiteouts go in ``trie``."""
    marks: list[tuple[list[str], int]] = []
    try:
        for entry, data in iter_tar(open_stream(blob[0], blob[1], blob[2], where), where):
            name = clean(entry.name)
            if name is None:
                yield Found(entry.name, error=_CLIMBS, layer=layer)
                continue
            parts = name.split("/") if name else []
            if not parts or _hidden(trie, parts):
                continue
            base = parts[-1]
            if base == ".wh..wh..opq":
                marks.append((parts[:-1], _OPQ))
            elif base.startswith(".wh."):
                marks.append(([*parts[:-1], base[4:]], _WH))
            elif entry.kind == "long":
                yield Found(entry.name, error="a name over 4096 bytes; not read", layer=layer)
            else:
                marks.append((parts, _PRESENT if entry.kind == "dir" else _PRESENT | _BELOW))
                if entry.kind == "file" and wanted(name, data.head(head)):
                    try:
                        yield Found(name, data.all(), layer=layer)
                    except ArchiveError as e:
                        if e.errno != errno.EFBIG:
                            raise
                        yield Found(name, error=e.strerror, layer=layer)
    finally:
        for parts, flag in marks:
            _mark(trie, parts, flag)


def read_image(fd: int, path: str, folder: bool, wanted: Wanted, head: int) -> Iterator[Found]:
    """Every file of the image (or tar) open as ``fd`` that ``wanted`` accepts, from the layer that provides it.

    ``fd`` is the tar file, or the layout folder when ``folder``. A layer that cannot be read is a
    :class:`Found` with its error (named by its path in the image) and the lower layers are still read;
    an image that cannot be read at all raises :class:`~cuda_fatbin._archive.ArchiveError`.
    """
    files = {} if folder else _outer(fd, path)

    def blob(name: str) -> _Blob:
        if folder:
            return _open_in_folder(fd, name, path)
        if name not in files:
            raise _fail(f"no member {name[:200]!r} in the image", path)
        return (fd, *files[name], False)

    def read(name: str) -> Any:
        b = blob(name)
        try:
            return _json(b, name, path)
        finally:
            if b[3]:
                os.close(b[0])

    def has(name: str) -> bool:
        if not folder:
            return name in files
        try:
            return is_regular(os.stat(name, dir_fd=fd, follow_symlinks=False))
        except OSError:
            return False

    layers = _layers(read, has, path)
    if layers is None:
        if folder:
            raise _fail("a folder with oci-layout but no index.json", path)
        layers = [("", "")]
    trie: dict[str, Any] = {}
    for index in range(len(layers) - 1, -1, -1):
        name, ident = layers[index]
        where = f"{path}{SEPARATOR}{name}" if name else path
        layer: dict[str, int | str] | None = {"index": index, "id": ident} if name else None
        try:
            b = blob(name) if name else (fd, 0, os.fstat(fd).st_size, False)
        except ArchiveError as e:
            yield Found(name, error=e.strerror, layer=layer)
            continue
        try:
            yield from _layer(b, where, layer, trie, wanted, head)
        except ArchiveError as e:
            yield Found(name, error=e.strerror, layer=layer)
        finally:
            if b[3]:
                os.close(b[0])
