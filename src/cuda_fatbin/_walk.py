# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The one folder walk: :func:`walk_tree`, used by ``scan`` (inputs) and the cache (the include fingerprint).

Each caller states its policy (which entries it reads, which subfolders it walks into, whether a symlink to a
folder is followed, which folders are passed over); the walk keeps the guarantees of docs/security.md
("Walks"): no recursion, each folder opened by its name in its open parent (a tree deeper than ``PATH_MAX``
is walked), at most ``_MAX_PARENTS`` folders held open, each folder listed through the descriptor it was
opened as, and checked to be the folder its parent listed unless the caller follows links.
"""

from __future__ import annotations

import os
import stat

from ._files import DIR_FD, identity, open_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Container, Iterable

__all__ = ["Folder", "walk_tree"]


#: Folders a walk keeps open at most while their subfolders wait (a tree that branches at every level holds one
#: per level): past that, a subfolder is opened by its path (piece by piece when long), and checked all the same.
_MAX_PARENTS = 256


class Folder:
    """A folder :func:`walk_tree` listed: its path, its path from the walk's root (``""`` for the root), the open
    folder (``fd``; ``None`` where :data:`DIR_FD` is false) to open its files by name in, its entries by name."""

    __slots__ = ("entries", "fd", "path", "rel")

    def __init__(self, path: str, rel: str, fd: int | None, entries: list[os.DirEntry[str]]) -> None:
        self.path, self.rel, self.fd, self.entries = path, rel, fd, entries


class _Parent:
    """An open folder whose subfolders wait on the walk's stack: each is opened by its name in it."""

    def __init__(self, fd: int, waiting: int) -> None:
        self.fd, self.waiting = fd, waiting

    def done_with_one(self) -> None:
        self.waiting -= 1
        if self.waiting == 0:
            os.close(self.fd)


def walk_tree(
    root: str,
    visit: Callable[[Folder], Iterable[tuple[str, tuple[int, int] | None]]],
    failed: Callable[[str, str, OSError], None],
    *,
    once: set[tuple[int, int]] | None = None,
    skip: Container[tuple[int, int]] = (),
) -> None:
    """Walk the folder ``root`` depth first, in name order, without recursion: the one folder walk.

    ``visit(folder)`` is called with each folder listed (:class:`Folder`) and returns the subfolders to walk
    into, as ``(name, listed_as)``: ``listed_as`` is the subfolder's :func:`identity` as its entry gave it, not
    followed (a symlink there, or another folder, when it is opened is an error, :func:`open_dir`), or ``None``
    to follow a symlink to a folder. ``failed(path, rel, error)`` is called for a folder that cannot be opened
    or listed, and the walk goes on. A folder whose identity is in ``skip``, or in ``once`` (which gets each
    folder listed: one reached twice through links, or from two walks sharing ``once``, is listed once), is
    passed over unlisted.

    Each folder is opened by its name in its parent, which stays open while its subfolders wait, so a tree
    of any depth is walked (``PATH_MAX`` is never reached); at most ``_MAX_PARENTS`` folders are held (past
    that, a subfolder is opened by its path, piece by piece); each is listed through the descriptor it was
    opened as. Every folder opened is closed, whether ``visit`` returns or raises.
    """
    admit = _admit(once, skip)
    stack: list[tuple[str, str, tuple[int, int] | None, _Parent | None]] = [(root, "", None, None)]
    held: list[_Parent] = []
    try:
        while stack:
            path, rel, listed_as, parent = stack.pop()
            try:
                at = parent.fd if parent else None
                entries, fd = _listdir(path, listed_as, at) if admit is None else _listdir(path, listed_as, at, admit)
            except OSError as e:
                failed(path, rel, e)
                continue
            finally:
                if parent is not None:
                    parent.done_with_one()
            try:
                subdirs = [
                    (os.path.join(path, name), f"{rel}/{name}" if rel else name, found_as)
                    for name, found_as in visit(Folder(path, rel, fd, entries))
                ]
                held = [h for h in held if h.waiting] if len(held) >= _MAX_PARENTS else held
                keep = None
                if subdirs and fd is not None and len(held) < _MAX_PARENTS:
                    keep = _Parent(fd, len(subdirs))
                    held.append(keep)
                    fd = None  # closed once its last subfolder is opened
                stack.extend((p, r, found_as, keep) for p, r, found_as in reversed(subdirs))
            finally:
                if fd is not None:
                    os.close(fd)
    finally:  # an exception (Ctrl-C) leaves folders open: close them
        for h in held:
            if h.waiting:
                os.close(h.fd)


def _admit(
    once: set[tuple[int, int]] | None, skip: Container[tuple[int, int]]
) -> Callable[[os.stat_result], bool] | None:
    """Whether a folder opened is listed: not in ``skip`` nor ``once`` (which then records it); ``None``: all."""
    if once is None and not skip:
        return None

    def admit(st: os.stat_result) -> bool:
        key = identity(st)
        if key in skip or (once is not None and key in once) or not stat.S_ISDIR(st.st_mode):
            return False
        if once is not None:
            once.add(key)
        return True

    return admit


def _listdir(
    folder: str,
    listed_as: tuple[int, int] | None,
    parent: int | None = None,
    admit: Callable[[os.stat_result], bool] | None = None,
) -> tuple[list[os.DirEntry[str]], int | None]:
    """The entries of ``folder`` in name order, and the open folder (``None`` where folders cannot be opened).

    A folder found in a walk (``listed_as``: its device and inode when its parent was listed) is opened
    without following a symlink, by its name in ``parent`` (its open parent) when given, and must still be
    that folder (:func:`open_dir`): one swapped since for a symlink, or for a folder elsewhere through a
    swapped parent, is an error, never listed. A folder ``admit`` refuses (by its ``stat``) is not listed: no
    entries, no folder. The caller closes the folder.
    """
    if not DIR_FD:
        if admit is not None and not admit(os.stat(folder)):
            return [], None
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name), None
    if parent is not None:
        fd = open_dir(os.path.basename(folder), listed_as=listed_as, dir_fd=parent)
    else:
        fd = open_dir(folder, listed_as=listed_as)
    try:
        admitted = admit is None or admit(os.fstat(fd))
        if admitted:
            with os.scandir(fd) as it:
                return sorted(it, key=lambda e: e.name), fd
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return [], None
