# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Which installed distribution owns a binary that ``scan``, ``size`` or ``diff`` read: a conda package's own, a
wheel's name, or the distribution whose RECORD lists the file (docs/scan.md). Reading side: imports neither the
compile side nor cuda.core.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ._files import identity, is_regular, open_input, read_regular, stat_path
from ._walk import _listdir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAX_RECORD_BYTES", "normalize"]


def normalize(name: str) -> str:
    """A distribution name as PEP 503 spells it: lower case, runs of ``-``, ``_``, ``.`` as one ``-``.

    Examples
    --------
    >>> normalize("nvidia_curand"), normalize("Nvidia-CuFile")
    ('nvidia-curand', 'nvidia-cufile')
    """
    return re.sub(r"[-_.]+", "-", name).lower()


#: The largest RECORD and METADATA read: torch's RECORD is about 2 MiB; a larger one owns nothing.
MAX_RECORD_BYTES = 64 << 20


def _installed(folder: str) -> Iterator[tuple[str, str, str]]:
    """``(name, version, RECORD text)`` of each ``*.dist-info`` folder directly in ``folder``.

    The files are read as every input is: regular files only (a FIFO, a device or a symlink there is not
    opened: importlib.metadata's plain ``open()`` would wait on a FIFO forever), at most
    :data:`MAX_RECORD_BYTES` each. A dist-info without a readable METADATA naming a Name and a Version, or
    without a readable RECORD, owns nothing.
    """
    try:
        listing, fd = _listdir(folder, None)  # a folder of any depth
    except OSError:
        return
    if fd is not None:
        os.close(fd)
    infos = [os.path.join(folder, e.name) for e in listing
             if e.name.endswith(".dist-info") and e.is_dir(follow_symlinks=False)]  # fmt: skip
    if infos:  # email's parser costs 10 ms to import: a folder of libraries without any dist-info goes without
        from email.parser import HeaderParser
    for info in infos:
        try:
            meta = HeaderParser().parsestr(
                read_regular(os.path.join(info, "METADATA"), MAX_RECORD_BYTES).decode("utf-8", "replace")
            )
            record = read_regular(os.path.join(info, "RECORD"), MAX_RECORD_BYTES).decode("utf-8", "replace")
        except (OSError, ValueError):
            continue
        name, version = meta.get("Name"), meta.get("Version")
        if isinstance(name, str) and isinstance(version, str) and name.strip() and version.strip():
            yield name.strip(), version.strip(), record


def _distribution_index(paths: list[str], binaries: Iterable[str]) -> dict[str, str]:
    """Each of ``binaries`` that an installed distribution owns -> ``"name version"``.

    The owners are read from the RECORD files of the ``*.dist-info`` folders directly in the folders of
    ``paths`` (:func:`_installed`; a wheel is named by its file name). Only a RECORD line of the same
    name as a binary (or as what it links to) is resolved, with one ``os.stat`` (the kernel follows at
    most 40 symlinks): the work is one name test per installed file plus one ``stat`` per candidate, and a
    binary of any name (``kernels.bin``, ``libk.so.1``, ``tool``) is attributed. A line names a file as
    written or, when that names none, with its backslashes read as folders (a Windows installer's
    RECORD). A line that names no file owns nothing; a RECORD that is not CSV owns nothing, whole.
    A binary that several RECORDs list belongs to the strongest claim (:func:`_strongest`), whatever the
    order in which the dist-info folders are listed.
    """
    wanted: dict[tuple[int, int], list[str]] = {}
    names: set[str] = set()
    for b in binaries:
        try:
            st = stat_path(b)
            real = os.path.realpath(b)
        except (OSError, ValueError, RecursionError):  # gone since it was read, or a link chain too long
            continue
        wanted.setdefault(identity(st), []).append(b)
        names |= {os.path.basename(b), os.path.basename(real)}
    claims: dict[tuple[int, int], dict[str, _Claim]] = {}
    for folder in [p for p in paths if os.path.isdir(p)] if wanted else []:
        for name, version, record in _installed(folder):
            label = f"{normalize(name)} {version}"
            owned: dict[tuple[int, int], _Claim] = {}
            import csv  # where a distribution is installed (a folder of libraries has none: start-up time)

            try:
                for row in csv.reader(record.splitlines()):
                    for rel in (row[0], row[0].replace("\\", "/")) if row else ():
                        if rel.rsplit("/", 1)[-1] not in names:
                            continue
                        try:
                            st = stat_path(os.path.join(folder, rel))
                        except (OSError, ValueError):  # no such file, a loop, a NUL in the line
                            continue
                        if identity(st) in wanted:
                            claim = _Claim(label, folder, rel, *[*row[1:3], "", ""][:2])
                            owned[identity(st)] = max(owned.get(identity(st), claim), claim, key=_Claim.by_path)
                        break  # the spelling that names a file is the one meant
            except csv.Error:  # not CSV (a field over the csv module's limit...): no owner for its files
                continue
            for key, claim in owned.items():
                best = claims.setdefault(key, {})
                best[label] = max(best.get(label, claim), claim, key=_Claim.by_path)
    index: dict[str, str] = {}
    for key, by_label in claims.items():
        index.update(dict.fromkeys(wanted[key], _strongest(list(by_label.values()), wanted[key][0])))
    return index


@dataclass(frozen=True)
class _Claim:
    """A RECORD line that names a binary: its distribution, the site folder, the line's path, hash and size."""

    label: str
    folder: str
    rel: str
    hash: str
    size: str

    def by_path(self) -> tuple[bool, bool]:
        """Names the file itself (not a link to it), and from inside its own site folder (no ``..``)."""
        path = os.path.join(self.folder, self.rel)
        inside = not os.path.isabs(self.rel) and ".." not in os.path.normpath(self.rel).split(os.sep)
        return not os.path.islink(path), inside


def _strongest(claims: list[_Claim], path: str) -> str:
    """The distribution a binary belongs to when RECORDs of several list it: decided from the lines and paths.

    First the line whose hash and size match the file's bytes (a RECORD from a wheel that installed the
    file), then a line without a hash, then one whose hash or size does not match (a file another
    installation overwrote, or a line copied into a foreign RECORD); then a line naming the file itself over
    one naming a link to it, and a line inside its site folder over one reaching out with ``..``; a tie
    goes to the first label in name order (PEP 503 name, then version). Only contested binaries are hashed.
    """
    if len(claims) == 1:
        return claims[0].label
    digests: dict[str, str | None] = {}

    def evidence(claim: _Claim) -> int:
        algo, _, value = claim.hash.partition("=")
        if not value or algo not in ("sha256", "sha384", "sha512"):
            return 1
        if algo not in digests:
            digests[algo] = _file_digest(path, algo)
        size_ok = not claim.size or claim.size == str(_size(path))
        return 2 if size_ok and digests[algo] == value.rstrip("=") else 0

    ranked = sorted(claims, key=lambda c: c.label)
    return max(ranked, key=lambda c: (evidence(c), *c.by_path())).label


def _size(path: str) -> int:
    try:
        return stat_path(path).st_size  # a path of any length
    except OSError:
        return -1


def _file_digest(path: str, algo: str) -> str | None:
    """The file's digest as RECORD writes it (urlsafe base64, no padding), None if it cannot be read."""
    import base64
    import hashlib

    try:
        fd, st = open_input(path)
    except OSError:
        return None
    try:
        if not is_regular(st):
            return None
        h = hashlib.new(algo)
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return base64.urlsafe_b64encode(h.digest()).decode().rstrip("=")


def _wheel_distribution(path: str) -> str | None:
    parts = os.path.basename(path).split("-")
    return f"{normalize(parts[0])} {parts[1]}" if path.lower().endswith(".whl") and len(parts) >= 5 else None


def _attribute(roots: list[str], rows: list[Any]) -> None:
    """Give each row (``BinaryReport`` or ``size``'s ``BinarySize``) its distribution, then sort by path: a
    conda package's own (from its info/index.json) first, then a wheel's name, then the installed
    distribution whose RECORD owns the file (or the ar archive holding it)."""
    index = _distribution_index(roots, sorted({r.archive or r.path for r in rows}))
    for r in rows:
        owner = (r.archive and _wheel_distribution(r.archive)) or index.get(r.archive or r.path)
        r.distribution = r.distribution or owner
    rows.sort(key=lambda r: r.path)
