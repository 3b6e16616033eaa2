# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Containers of binaries (wheels and zips, ar archives): which reader opens a file, and its members.

The one place where a kind of container plugs in. Each kind is a :class:`Container` row: the names
(suffixes) or first bytes (magic) it is known by, and the module whose ``list_members(path, *, follow,
head)`` and ``read_member(path, member, limit=None, *, follow)`` read it in place, giving and taking
:class:`~cuda_fatbin._archive.Member` objects (``Member.container`` names the kind). ``scan`` and
``inspect`` go through :func:`container_of`, :func:`list_members` and :func:`read_member` only, so a new
kind (conda packages, container images) is a new module and a new row here.

Reading side: imports nothing of the compile side.
"""

from __future__ import annotations

import collections
import importlib
import os

from ._archive import SEPARATOR, Member

__all__ = ["CONTAINERS", "SEPARATOR", "Container", "container_of", "list_members", "read_member", "split"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NamedTuple

    class Container(NamedTuple):
        """A kind of container: how it is known, and the module that reads it."""

        kind: str
        suffixes: tuple[str, ...]
        magics: tuple[bytes, ...]
        module: str

else:
    Container = collections.namedtuple("Container", "kind suffixes magics module")
    Container.__doc__ = "A kind of container: its name, the suffixes and magics it is known by, its reader module."

#: Every container read, in the order they are tried: by magic first, then by suffix.
CONTAINERS = (
    Container("zip", (".whl", ".zip"), (), "_archive"),
    Container("ar", (".a", ".lib"), (b"!<arch>\n", b"!<thin>\n"), "_ar"),
)
#: The longest magic: how many first bytes :func:`container_of` needs.
HEAD = 8


def container_of(name: str, head: bytes | None) -> Container | None:
    """The container kind of a file called ``name`` whose first bytes are ``head`` (``None``: not read).

    A magic decides where the kind has one (a ``.lib`` that is no ar archive is not one); else the suffix.

    Examples
    --------
    >>> container_of("libk.a", b"!<arch>\\n").kind, container_of("x.whl", b"PK\\x03\\x04").kind
    ('ar', 'zip')
    >>> print(container_of("import.lib", b"MZ\\x90\\x00"))
    None
    """
    for c in CONTAINERS:
        if head is not None and c.magics and head.startswith(c.magics):
            return c
    lower = name.lower()
    for c in CONTAINERS:
        if lower.endswith(c.suffixes) and (not c.magics or head is None):
            return c
    return None


def _module(kind: str) -> object:
    row = next(c for c in CONTAINERS if c.kind == kind)
    return importlib.import_module(f"cuda_fatbin.{row.module}")


def list_members(path: str, container: Container | None = None, *, follow: bool = True, head: int = 0) -> list[Member]:
    """The members of the container at ``path`` (see the reader modules for what each raises).

    ``container`` is its kind, as :func:`container_of` told; ``None``: told from its name and first bytes.
    """
    if container is None:
        container = container_of(path, head_of(path)) or CONTAINERS[0]
    lister = _module(container.kind).list_members  # type: ignore[attr-defined]
    members: list[Member] = lister(path, follow=follow, head=head)
    return members


def read_member(path: str, member: Member, limit: int | None = None, *, follow: bool = True) -> bytes:
    """The bytes of ``member`` (of any kind) of the container at ``path``."""
    reader = _module(member.container).read_member  # type: ignore[attr-defined]
    data: bytes = reader(path, member, limit, follow=follow)
    return data


def head_of(path: str) -> bytes | None:
    """The first :data:`HEAD` bytes of the regular file at ``path``, or ``None`` if it is none or cannot be read."""
    from ._files import is_regular, open_input

    try:
        fd, st = open_input(path)
    except OSError:
        return None
    try:
        return os.pread(fd, HEAD, 0) if is_regular(st) else None
    except OSError:
        return None
    finally:
        os.close(fd)


def split(path: str, known: Callable[[str], bool] | None = None) -> tuple[str, str | None]:
    """``(archive, member)`` of a path ``scan`` printed (``a.whl::pkg/lib.so``, ``libk.a::ka.o``), or ``(path, None)``.

    The path splits at the first ``::`` whose left side names an existing container (by suffix or magic;
    ``known(left)`` decides instead where given: a conda package or an image), so a ``::`` in a folder's
    name is never taken for a separator; a file named like that is read as it is.

    Examples
    --------
    >>> split("no/such/a.whl::x.so")
    ('no/such/a.whl::x.so', None)
    """
    start = 0
    while (at := path.find(SEPARATOR, start)) >= 0:
        left = path[:at]
        if known(left) if known is not None else _is_container(left):
            return left, path[at + len(SEPARATOR) :]
        start = at + 1
    return path, None


def _is_container(path: str) -> bool:
    head = head_of(path)
    return head is not None and container_of(path, head) is not None
