# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""What :func:`~cuda_fatbin._scan.scan` reads: the inputs under some paths, listed, and each opened as listed.

Folders are walked without recursion, each opened by its name in its open parent (any depth, past
``PATH_MAX``), symlinks found in them counted and never followed; each real file is listed once, by its
first bytes (ELF, fatbin, PE/COFF; archives and packages by name and magic), and later opened only if it
is still the file listed. The guarantees are in docs/security.md ("Walks").

Reading side: imports neither the compile side nor cuda.core.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import mmap
import os
import site
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from ._archive import NESTED, SEPARATOR, SUFFIXES, Member
from ._containers import CONTAINERS, Container, container_of, list_members
from ._detect import file_kind
from ._files import (
    describe,
    identity,
    is_regular,
    open_input,
    read_exact,
    stat_path,
)
from ._packages import package_kind
from ._walk import Folder, walk_tree

_SMALL = 1 << 20  # files up to this size are read, larger ones mapped

#: The kinds of file (``_detect.file_kind``) read as binaries; the others it knows are containers or skipped.
_READ = ("elf", "fatbin", "pe", "coff")
#: Bytes of each file and member read to tell its kind.
_HEAD = 64


def _is_binary(head: bytes, name: str = "") -> bool:
    return file_kind(head, name) in _READ


@dataclass(frozen=True)
class _Item:
    """One input to read: a file (``member`` None) or an archive member, or one that failed already."""

    path: str
    member: Member | None = None
    size: int = 0
    identity: tuple[int, int] = (0, 0)  # (st_dev, st_ino) of the file when listed
    follow: bool = False  # a path the user named: a symlink there is followed
    error: str | None = None
    package: str | None = None  # "conda", "image" (a tar) or "oci" (a layout folder): read whole, in one pass

    @property
    def shown(self) -> str:
        return f"{self.path}{SEPARATOR}{self.member.name}" if self.member else self.path


@dataclass
class _Listing:
    items: list[_Item] = field(default_factory=list)
    skipped: collections.Counter[str] = field(default_factory=collections.Counter)


def _error(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{type(exc).__name__}: {exc.strerror}"
    return f"{type(exc).__name__}: {exc}"


_UNRECOGNISED = (
    "ValueError: not a file this command reads: it is none of an ELF file (cubins included), a Windows PE/COFF "
    "file, a fatbin, a static library, a wheel or zip archive, a conda package or a container image"
)


def _list_inputs(roots: Iterable[str]) -> _Listing:
    """Every file whose first bytes say ELF or fatbin, every archive member likewise, and every input that
    could not be read (as an item with its error).

    Directories are walked without recursion and without following symlinks (a symlink found in a folder
    is counted as skipped, never read, so nothing outside the tree is read through one; a folder swapped
    for a symlink or another folder after it was listed is an error row, see :func:`_listdir`); each real
    file is read once, opened by its name in the folder listed. Paths the user names are followed, and one
    that is none of what is read is an error row (a file in a folder is passed over: folders hold data too).
    """
    out = _Listing()
    seen: set[tuple[int, int]] = set()

    def special(path: str, follow: bool, st: os.stat_result) -> None:
        if follow:  # a path the user named: it was asked for and cannot be read
            out.items.append(_Item(path, error=f"OSError: {describe(st)}, not a regular file; not read"))
        else:
            out.skipped["not a regular file"] += 1

    def visit(path: str, follow: bool, dir_fd: int | None = None) -> None:
        name = os.path.basename(path) if dir_fd is not None else path
        try:  # with dir_fd: the name in the folder listed, not the path looked up again
            fd, st = open_input(name, follow=follow, dir_fd=dir_fd)
        except OSError as e:
            if e.errno == errno.ENXIO:  # a socket cannot be opened: passed over as a FIFO or device is
                with contextlib.suppress(OSError):
                    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=follow)
                    if stat.S_ISSOCK(st.st_mode):
                        special(path, follow, st)
                        return
            out.items.append(_Item(path, error=_error(e)))
            return
        try:
            key = identity(st)
            if not is_regular(st):
                special(path, follow, st)
                return
            if key in seen:
                return
            seen.add(key)
            if path.lower().endswith(SUFFIXES):
                _visit_archive(path, follow, out, key, CONTAINERS[0])
                return
            if package_kind(path):
                out.items.append(_Item(path, None, st.st_size, key, follow, package=package_kind(path)))
                return
            if st.st_size < 16:
                if follow:
                    out.items.append(_Item(path, error=_UNRECOGNISED))
                return
            head = os.pread(fd, _HEAD, 0)
        except OSError as e:
            out.items.append(_Item(path, error=_error(e)))
            return
        finally:
            os.close(fd)
        kind = file_kind(head, path)
        container = container_of(path, head) if kind in ("ar", "thin ar") else None
        if container is not None:
            _visit_archive(path, follow, out, key, container)
        elif kind in _READ:
            out.items.append(_Item(path, None, st.st_size, key, follow))
        elif kind is not None:  # a format we know and do not read: counted, never passed over silently
            out.skipped[kind] += 1
        elif follow:  # a file the user named that is none of what we read: said, not passed over
            out.items.append(_Item(path, error=_UNRECOGNISED))

    for root in roots:
        try:
            st = stat_path(root)
        except OSError as e:
            raise FileNotFoundError(e.errno, f"cannot read {root!r}: {e.strerror}") from None
        if not stat.S_ISDIR(st.st_mode):
            visit(root, True)
            continue
        _walk(root, out, visit)
    return out


def _walk(root: str, out: _Listing, visit: Callable[[str, bool, int | None], None]) -> None:
    """Walk the folder ``root`` (:func:`~cuda_fatbin._walk.walk_tree`) as scan does: no symlink followed (one
    found is counted as skipped), each subfolder checked to be the one listed, each file visited by its name in
    its open folder, an input package's folder (an OCI layout) listed as one input; a folder or entry that
    cannot be read is an error row."""

    def listed(folder: Folder) -> list[tuple[str, tuple[int, int] | None]]:
        if any(e.name == "oci-layout" and _is_file(e) for e in folder.entries):
            key = identity(os.fstat(folder.fd) if folder.fd is not None else os.stat(folder.path))
            out.items.append(_Item(folder.path, None, 0, key, folder.rel == "", package="oci"))  # an image
            return []
        subdirs: list[tuple[str, tuple[int, int] | None]] = []
        for entry in folder.entries:
            path = os.path.join(folder.path, entry.name)
            try:
                if entry.is_symlink():
                    out.skipped["symlink"] += 1
                elif entry.is_dir(follow_symlinks=False):
                    subdirs.append((entry.name, identity(entry.stat(follow_symlinks=False))))
                else:
                    visit(path, False, folder.fd)
            except OSError as e:
                out.items.append(_Item(path, error=_error(e)))
        return subdirs

    walk_tree(root, listed, lambda path, rel, e: out.items.append(_Item(path, error=_error(e))))


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _visit_archive(path: str, follow: bool, out: _Listing, listed_as: tuple[int, int], container: Container) -> None:
    """List the archive at ``path``, which was opened as ``listed_as`` (its device and inode) when its folder
    was listed: an archive that is another file now (a folder on the way swapped meanwhile) is an error row,
    none of its members listed."""
    try:
        members = list_members(path, container=container, follow=follow, head=_HEAD)
        if members and members[0].identity[:2] != listed_as:
            raise OSError(errno.EIO, "another file now (changed since listed)", path)
    except OSError as e:  # ArchiveError included
        out.items.append(_Item(path, error=_error(e)))
        return
    for m in members:
        if m.is_dir:
            continue
        if m.error:
            out.items.append(_Item(path, m, m.size, error=f"ArchiveError: {m.error}"))
        elif m.name.lower().endswith(SUFFIXES):  # not opened: it could hold binaries, so it is not passed over
            out.items.append(_Item(path, m, m.size, error=f"ArchiveError: {NESTED}"))
        elif m.size >= 16 and _is_binary(m.head, m.name):  # read as the archive was listed: a named symlink followed
            out.items.append(_Item(path, m, m.size, follow=follow))
        elif m.size >= 16 and file_kind(m.head, m.name) is not None:  # Mach-O, an ar archive in an archive
            kind = file_kind(m.head, m.name)
            out.skipped[f"{kind} in an archive" if kind in ("ar", "thin ar") else str(kind)] += 1  # not opened


@contextlib.contextmanager
def _opened(path: str, listed_as: tuple[int, int], follow: bool) -> Iterator[str | bytes | mmap.mmap]:
    """The file as listed: opened without following a symlink (unless the user named it), never blocking,
    refused unless it is the regular file that was listed (same device and inode).

    Yields what the reader should read: where ``/proc/self/fd`` exists, the open descriptor's name there,
    so the reader opens exactly the file judged here and reads it its own way (windows that skip holes,
    no SIGBUS on a file cut short); elsewhere its bytes (files up to 1 MiB are read, larger ones mapped).
    """
    fd, st = open_input(path, follow=follow)
    try:
        if not is_regular(st):
            raise OSError(errno.EINVAL, f"{describe(st)} now, not a regular file (changed since listed)", path)
        if listed_as != (0, 0) and identity(st) != listed_as:
            raise OSError(errno.EIO, "another file now (changed since listed)", path)
        if os.path.isdir("/proc/self/fd"):
            yield f"/proc/self/fd/{fd}"
        elif st.st_size <= _SMALL:
            yield read_exact(fd, st.st_size, path)
        else:
            yield mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)


def _stamp(source: str | bytes | mmap.mmap) -> tuple[int, ...]:
    """What tells the bytes of an open file (``_opened``'s source) from those it held before: its size and its
    modification and change times (a file rewritten in place keeps its inode, not its times)."""
    if isinstance(source, str):
        st = os.stat(source)
        return st.st_size, st.st_mtime_ns, st.st_ctime_ns
    return (len(source),)


def default_paths() -> list[str]:
    """This Python environment's site-packages directories (``sysconfig`` and ``site``), existing ones once."""
    import sysconfig  # (site is imported by the interpreter's start; this is not): only where no path is given

    found = [sysconfig.get_paths().get(k) for k in ("purelib", "platlib")]
    found += site.getsitepackages() if hasattr(site, "getsitepackages") else []
    out, seen = [], set()
    for p in found:
        if p and os.path.isdir(p) and os.path.realpath(p) not in seen:
            seen.add(os.path.realpath(p))
            out.append(p)
    return out


def _inputs_of(
    paths: Iterable[str | os.PathLike[str]] | None, max_workers: int | None, caller: str
) -> tuple[list[str], _Listing, list[_Item], int]:
    """The roots, listing, items (largest first: a pool's tail holds small files) and worker count of a
    ``scan`` or ``size`` call, its misuse refused alike."""
    if max_workers is not None and (not isinstance(max_workers, int) or isinstance(max_workers, bool)
                                    or max_workers < 1):  # fmt: skip
        raise ValueError(f"max_workers must be a positive int; got {max_workers!r}")
    if isinstance(paths, (str, bytes, os.PathLike)):  # iterated, a path would be its characters: "/" first
        raise TypeError(f"paths must be a list of paths; got one path: {caller}([{os.fspath(paths)!r}], ...)")
    roots = [os.fspath(p) for p in paths] if paths is not None else default_paths()
    listing = _list_inputs(roots)
    items = sorted(listing.items, key=lambda c: -c.size)
    return roots, listing, items, max_workers or os.cpu_count() or 1
