# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Opening what we read and writing what we write, safely: the one home of both.

Reading: :func:`open_input` opens without blocking on a FIFO and, for paths found by walking a folder,
without following a final symlink; the caller decides on the ``fstat`` of the open descriptor, never on
an earlier ``stat`` of the path (a file swapped after listing is judged as it is when opened).

Reading what we wrote and may find changed (bundle files, cache entries): :func:`read_regular` reads a
regular file of at most a stated size without following a final symlink, and :func:`loads_json` decodes
JSON with a bound on its nesting, so a FIFO, a link to ``/dev/zero`` or a deeply nested document is an
``OSError`` or ``ValueError`` instead of a hang, a ``MemoryError`` or a ``RecursionError``.

Writing: :func:`write_atomic` writes a temporary file beside the target (``O_CREAT | O_EXCL |
O_NOFOLLOW``), flushes it to disk and renames it into place, so a reader sees the old file or the new one,
never a part, a failure leaves the old one intact, and a symlink planted at the target is replaced, not
followed (with ``replace=False`` it is published with a hard link, which never replaces anything).
:func:`create_new` writes a file that must not exist yet (into a fresh directory of our own),
:func:`fsync_dir` makes renames in a folder durable and :func:`locked_dir` serialises writers of a folder.

Reading side and writing side both: imports nothing of the compile side.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any, BinaryIO, TypeAlias

    _AnyPath: TypeAlias = "str | bytes | os.PathLike[str] | os.PathLike[bytes]"

    _Data = bytes | bytearray | memoryview | Callable[[BinaryIO], object]

__all__ = [
    "DIR_FD", "check_regular", "create_new", "fsync_dir", "identity", "is_regular", "loads_json", "locked_dir",
    "open_dir", "open_input", "read_bounded", "read_exact", "read_regular", "stat_path", "temp_name", "write_atomic",
    "written_together",
]  # fmt: skip

O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
O_BINARY = getattr(os, "O_BINARY", 0)
O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CHUNK = 1 << 20
#: Folders can be opened, listed, and have their files opened and removed by name through a descriptor
#: (``dir_fd``): so on Linux and macOS, not on Windows, where callers work with paths instead.
DIR_FD = (
    bool(O_DIRECTORY)
    and os.open in os.supports_dir_fd
    and os.unlink in os.supports_dir_fd
    and os.scandir in os.supports_fd
)


#: A path of at least this many bytes is followed piece by piece (:func:`_reached`): the system refuses a whole
#: path of ``PATH_MAX`` bytes (4096 on Linux, 1024 on macOS) with ``ENAMETOOLONG``, however deep the tree goes.
PATH_PIECE = 1000
#: How the folders on the way along a long path are opened: only to look names up in them (``O_PATH`` where the
#: system has it, so a folder one may search but not list is passed as a whole path lookup passes it).
_ON_THE_WAY = os.O_RDONLY | O_DIRECTORY | O_CLOEXEC | getattr(os, "O_PATH", 0)


@contextlib.contextmanager
def _reached(path: _AnyPath, dir_fd: int | None) -> Iterator[tuple[str | bytes, int | None]]:
    """``(name, folder)`` naming ``path`` (relative to ``dir_fd``) for a call that takes ``dir_fd``, at any length.

    A path shorter than :data:`PATH_PIECE` bytes is given as it is. A longer one is cut at ``/`` into pieces
    shorter than that: each folder piece is opened in the folder opened before it (following symlinks on the
    way, as the lookup of the whole path would) and the last name is given in the last folder. The folders on
    the way are closed when the block ends. So the path is followed as the system would follow it, had it no
    ``PATH_MAX``; what is at its end is judged by the caller, as for a short path. A failure on the way is the
    ``OSError`` of the whole path.
    """
    raw = os.fsencode(path)
    if len(raw) < PATH_PIECE or not DIR_FD or b"/" not in raw.rstrip(b"/"):
        yield os.fspath(path), dir_fd
        return
    head, _, name = raw.rstrip(b"/").rpartition(b"/")
    name += b"/" * (len(raw) - len(raw.rstrip(b"/")))  # a trailing "/" still says: a folder
    pieces: list[bytes] = []
    for part in (head or b"/").split(b"/"):
        if pieces and len(pieces[-1]) + 1 + len(part) < PATH_PIECE:
            pieces[-1] += part if pieces[-1] == b"/" else b"/" + part
        else:
            pieces.append(part or b"/")  # the first part of an absolute path is "": the root
    opened: list[int] = []
    try:
        at = dir_fd
        for piece in pieces:
            at = os.open(piece, _ON_THE_WAY, dir_fd=at)
            opened.append(at)
    except OSError as e:
        for fd in opened:
            os.close(fd)
        raise OSError(e.errno, e.strerror, os.fsdecode(raw)) from None
    try:
        yield name if isinstance(os.fspath(path), bytes) else os.fsdecode(name), at
    finally:
        for fd in opened:
            os.close(fd)


def stat_path(path: _AnyPath, *, follow: bool = True, dir_fd: int | None = None) -> os.stat_result:
    """``os.stat`` (``follow=False``: ``os.lstat``) of a path of any length (:func:`_reached`).

    Raises
    ------
    OSError
        As ``os.stat`` does (missing, permission denied, a loop), never ``ENAMETOOLONG`` for the path's length.

    Examples
    --------
    >>> import sys
    >>> stat_path(sys.executable).st_size > 0
    True
    """
    with _reached(path, dir_fd) as (name, at):
        try:
            return os.stat(name, dir_fd=at, follow_symlinks=follow)
        except OSError as e:
            raise OSError(e.errno, e.strerror, os.fspath(path)) from None


MAX_INPUT_BYTES = 4 << 30
"""The largest artifact read whole by path: a source of ``cuda-fatbin compile``, a part of ``build`` or of
:func:`~cuda_fatbin.build_fatbin` given as a path."""


def identity(st: os.stat_result) -> tuple[int, int]:
    """What tells two names of one file from two files: ``(st_dev, st_ino)`` of a ``stat`` result.

    Examples
    --------
    >>> import os, sys
    >>> identity(os.stat(sys.executable)) == identity(os.stat(os.path.realpath(sys.executable)))
    True
    """
    return (st.st_dev, st.st_ino)


def open_dir(
    path: str | os.PathLike[str], *, listed_as: tuple[int, int] | None = None, dir_fd: int | None = None
) -> int:
    """Open the folder ``path`` to list it, or to open and remove files in it by name: a descriptor.

    With ``dir_fd`` (an open folder), ``path`` is a name in that folder, looked up there: nothing on the way to
    it is looked up again, and the tree may be deeper than the system's ``PATH_MAX``. A path of any length is
    opened (:func:`_reached`).

    Without ``listed_as`` a symlink to a folder is followed (a folder the user named). With it (the
    folder's :func:`identity` when its parent was listed), a symlink is not followed and the folder
    opened must be that one: a folder swapped meanwhile for a symlink, a file, or another folder (through
    a swapped parent) is an :class:`OSError` saying so, never opened. The caller closes the descriptor.
    Only where :data:`DIR_FD` is true.

    Raises
    ------
    OSError
        The folder cannot be opened, or is not the one listed.

    Examples
    --------
    >>> import os, tempfile
    >>> where = tempfile.mkdtemp()
    >>> fd = open_dir(where, listed_as=identity(os.stat(where)))
    >>> os.listdir(fd)
    []
    >>> os.close(fd)
    """
    flags = os.O_RDONLY | O_DIRECTORY | O_CLOEXEC | (O_NOFOLLOW if listed_as is not None else 0)
    try:
        with _reached(path, dir_fd) as (name, at):
            fd = os.open(name, flags, dir_fd=at)
    except OSError as e:
        if listed_as is not None and e.errno in (errno.ELOOP, errno.ENOTDIR):
            raise OSError(e.errno, "a symlink or a file now (changed while listed); not followed", path) from None
        raise
    try:
        if listed_as is not None and identity(os.fstat(fd)) != listed_as:
            raise OSError(errno.EIO, "another folder now (changed while listed)", path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_input(
    path: str | bytes | os.PathLike[str], *, follow: bool = True, dir_fd: int | None = None
) -> tuple[int, os.stat_result]:
    """Open ``path`` for reading: ``(descriptor, fstat of it)``; the caller closes the descriptor.

    The open never blocks (``O_NONBLOCK``: a FIFO with no writer opens at once) and, with ``follow=False``,
    a symlink at ``path`` itself is refused (``ELOOP``) instead of followed. Judge the result by the
    returned ``stat`` (``stat.S_ISREG``), which describes what was opened. On a regular file
    ``O_NONBLOCK`` changes nothing. With ``dir_fd`` (an open folder), ``path`` is a name in that folder:
    nothing on the way to it is looked up again. A path of any length is opened, ``PATH_MAX`` or not
    (:func:`_reached`).

    Raises
    ------
    OSError
        The path cannot be opened (missing, permission denied, a symlink with ``follow=False``).

    Examples
    --------
    >>> import stat, sys
    >>> fd, st = open_input(sys.executable)
    >>> stat.S_ISREG(st.st_mode)
    True
    >>> os.close(fd)
    """
    flags = os.O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_BINARY | (0 if follow else O_NOFOLLOW)
    with _reached(path, dir_fd) as (name, at):
        try:
            fd = os.open(name, flags, dir_fd=at)
        except OSError as e:
            if name is path:
                raise
            raise OSError(e.errno, e.strerror, os.fspath(path)) from None
    try:
        return fd, os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise


def is_regular(st: os.stat_result) -> bool:
    """True for a regular file (not a directory, FIFO, socket, device or symlink)."""
    return stat.S_ISREG(st.st_mode)


def describe(st: os.stat_result) -> str:
    """What kind of file ``st`` describes, in words: ``"a directory"``, ``"a FIFO"``, ``"a symlink"``..."""
    for test, words in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symlink"),
                        (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                        (stat.S_ISBLK, "a block device")):  # fmt: skip
        if test(st.st_mode):
            return words
    return "not a regular file"


def check_regular(st: os.stat_result, limit: int, path: str | os.PathLike[str] = "") -> None:
    """Raise ``OSError`` unless ``st`` is a regular file of at most ``limit`` bytes.

    Raises
    ------
    OSError
        ``EINVAL`` for anything but a regular file (the message says what it is), ``EFBIG`` for a larger one.

    Examples
    --------
    >>> import sys
    >>> try:
    ...     check_regular(os.stat(os.path.dirname(sys.executable)), 100, "bin")
    ... except OSError as e:
    ...     print(e.strerror)
    a directory, not a regular file
    """
    if not stat.S_ISREG(st.st_mode):
        raise OSError(errno.EINVAL, f"{describe(st)}, not a regular file", os.fspath(path))
    if st.st_size > limit:
        raise OSError(errno.EFBIG, f"{st.st_size} bytes, over the limit of {limit}", os.fspath(path))


def read_exact(fd: int, size: int, path: str | os.PathLike[str] = "") -> bytes:
    """Read exactly ``size`` bytes from ``fd`` and check that nothing follows (the file did not change size).

    Raises
    ------
    OSError
        The file ended early or holds more than ``size`` bytes now (it changed while read).
    """
    out = bytearray()
    while len(out) < size:
        chunk = os.read(fd, min(_CHUNK, size - len(out)))
        if not chunk:
            raise OSError(errno.EIO, f"ended after {len(out)} of {size} bytes (changed while read)", os.fspath(path))
        out += chunk
    if os.read(fd, 1):
        raise OSError(errno.EIO, f"holds more than {size} bytes (changed while read)", os.fspath(path))
    return bytes(out)


def read_bounded(read: Callable[[int], bytes], limit: int) -> bytearray:
    """What ``read(n)`` gives until it gives nothing or more than ``limit`` bytes came: 1 MiB asked at a time.

    For streams and archive members, whose size is not known before they are read: ``f.read(limit + 1)``
    allocates ``limit + 1`` bytes first, whatever comes (a 1 GiB buffer for 3 KB on standard input, a
    ``MemoryError`` under a memory limit). Memory grows with what was read. The caller compares the
    length with ``limit``: at most ``limit + 1`` bytes are read.

    Examples
    --------
    >>> import io
    >>> len(read_bounded(io.BytesIO(bytes(3 << 20)).read, 1 << 20))
    1048577
    """
    data = bytearray()
    while len(data) <= limit and (chunk := read(min(_CHUNK, limit + 1 - len(data)))):
        data += chunk
    return data


def read_regular(path: str | os.PathLike[str], limit: int, *, follow: bool = False, dir_fd: int | None = None) -> bytes:
    """The bytes of the regular file at ``path``, of at most ``limit`` bytes; a symlink there is not followed.

    With ``dir_fd`` (an open folder), ``path`` is a name in that folder (:func:`open_input`).

    Opened with :func:`open_input` (never blocks: a FIFO is refused, not waited on), judged by the ``fstat``
    of what was opened (:func:`check_regular`) before anything is read, read with :func:`read_exact`.

    Raises
    ------
    OSError
        Missing (``FileNotFoundError``), a symlink (``ELOOP``, with ``follow=False``), not a regular file
        (``EINVAL``), larger than ``limit`` (``EFBIG``), changed while read (``EIO``), unreadable.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a").write_bytes(b"abc")
    >>> read_regular(folder / "a", 10)
    b'abc'
    >>> (folder / "link").symlink_to("/dev/zero")
    >>> try:
    ...     read_regular(folder / "link", 10)
    ... except OSError as e:
    ...     print(e.strerror)
    a symlink, not followed
    """
    try:
        fd, st = open_input(path, follow=follow, dir_fd=dir_fd)
    except OSError as e:
        if not follow and e.errno in (errno.ELOOP, errno.EMLINK) and _is_link(path, dir_fd):
            raise OSError(errno.ELOOP, "a symlink, not followed", os.fspath(path)) from None
        raise
    try:
        check_regular(st, limit, path)
        return read_exact(fd, st.st_size, path)
    finally:
        os.close(fd)


def _is_link(path: str | os.PathLike[str], dir_fd: int | None) -> bool:
    try:
        return stat.S_ISLNK(stat_path(path, follow=False, dir_fd=dir_fd).st_mode)
    except (OSError, ValueError):
        return False


#: A JSON string, or an unterminated one up to the end of the text: once begun the match never fails, so
#: the search never restarts inside a string (a failed match restarted at the next quote: quadratic work).
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_JSON_INNERMOST = re.compile(rb"\[[^\[\]{}]*\]|\{[^\[\]{}]*\}")
_JSON_BRACKET = re.compile(rb"[\[\]{}]")


def loads_json(raw: bytes, max_depth: int) -> Any:
    """Decode UTF-8 JSON nested at most ``max_depth`` arrays or objects deep, in linear time and memory.

    The depth is checked before decoding, on the text without its strings: each of ``max_depth`` passes
    removes the innermost arrays and objects; a pair of brackets left after them is a deeper document, a lone
    bracket a text that is not JSON (cut short, say). So a document of a million ``[`` is a ``ValueError``,
    never a ``RecursionError``. Each pass is one
    left-to-right scan (an unterminated string runs to the end of the text, and ``json.loads`` refuses
    it), so the work is at most ``max_depth + 3`` scans of the text.

    Raises
    ------
    ValueError
        Not UTF-8 (``UnicodeDecodeError``), not JSON, or nested deeper than ``max_depth``.

    Examples
    --------
    >>> loads_json(b'{"a": [1, "]]"]}', 2)
    {'a': [1, ']]']}
    >>> try:
    ...     loads_json(b"[" * 100_000 + b"]" * 100_000, 8)
    ... except ValueError as e:
    ...     print(e)
    nested deeper than 8 levels
    >>> try:
    ...     loads_json(b'{"suites": {"k": [1, 2', 8)
    ... except ValueError as e:
    ...     print(e)
    not JSON: a bracket is never closed, or closed but never opened (a cut or edited file?)
    """
    skeleton = _JSON_STRING.sub(b'""', raw)
    for _ in range(max_depth):
        skeleton, removed = _JSON_INNERMOST.subn(b"", skeleton)
        if not removed:
            break
    if _JSON_BRACKET.search(skeleton):  # a pair left is a deeper level; a lone bracket, a torn or broken text
        if _JSON_INNERMOST.search(skeleton):
            raise ValueError(f"nested deeper than {max_depth} levels")
        raise ValueError("not JSON: a bracket is never closed, or closed but never opened (a cut or edited file?)")
    import json  # here, not at the top: the reader opens files through this module and loads no json

    return json.loads(raw.decode("utf-8"), parse_constant=_not_json)


def _not_json(name: str) -> None:
    """``json.loads`` takes ``NaN`` and ``Infinity``, which JSON (RFC 8259) does not have."""
    raise ValueError(f"not JSON: {name}")


def temp_name(target: str | os.PathLike[str], kind: str = "tmp") -> str:
    """A fresh hidden name beside ``target``: ``<dir>/.<name>.<random>.<kind>``, at most 255 bytes.

    ``<name>`` is cut short (by whole characters) where the target's own name leaves no room for the
    rest, so every name a file system takes has a temporary name it takes too.

    Examples
    --------
    >>> len(os.path.basename(temp_name("/tmp/" + "a" * 255)))
    255
    """
    head, tail = os.path.split(os.fspath(target))
    import secrets

    rest = f".{secrets.token_hex(6)}.{kind}"
    while len(os.fsencode(f".{tail}{rest}")) > 255 and tail:
        tail = tail[:-1]
    return os.path.join(head, f".{tail}{rest}")


def write_atomic(
    target: str | os.PathLike[str],
    data: bytes | bytearray | memoryview | Callable[[BinaryIO], object],
    *,
    replace: bool = True,
) -> None:
    """Write ``data`` to ``target`` all at once: a temporary file beside it, fsync, rename into place.

    ``data`` is bytes or a function that writes to the open temporary file. The temporary file is created
    with ``O_CREAT | O_EXCL | O_NOFOLLOW`` (a name planted by someone else is never opened) and the usual
    permissions (``0o666`` less the umask); the rename replaces whatever is at ``target`` — a symlink
    there is replaced, never followed — and the folder is synced so that the rename survives a crash. Any
    failure (a full disk, an exception from ``data``, Ctrl-C) removes the temporary file and leaves
    ``target`` as it was. A device, FIFO or socket at ``target`` is not replaced (``OSError``).
    Several files that must change together: :func:`written_together`.

    With ``replace=False`` nothing at ``target`` is ever replaced: the file is published with a hard link,
    which fails if anything (a file, a symlink, a directory) is there. Where the file system has no hard
    links, the target is created with ``O_CREAT | O_EXCL | O_NOFOLLOW`` and the data copied into it (no
    clobbering either, but a reader could then see a part).

    Raises
    ------
    FileExistsError
        ``replace=False`` and something is at ``target``.
    OSError
        The folder does not exist or is not writable, the disk is full, ``target`` is a directory.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "k.fatbin"
    >>> write_atomic(path, b"abc")
    >>> path.read_bytes()
    b'abc'
    """
    with written_together(replace=replace) as stage:
        stage(target, data)


@contextlib.contextmanager
def written_together(*, replace: bool = True) -> Iterator[Callable[[str | os.PathLike[str], _Data], None]]:
    """Write several files all or nothing: every one staged first, then all renamed into place.

    Yields ``stage(target, data)``, which writes ``data`` (bytes, or a function that writes to the open
    file) at once into a temporary file beside ``target``, as :func:`write_atomic` does, and fsyncs it.
    When the block ends without an exception every temporary file is renamed over its target (with
    ``replace=False`` published with a hard link, which never replaces anything). On any failure —
    while staging (a full disk), in the block, or at a rename — every temporary file is removed and
    every target is left as it was: a target already renamed over is put back from a hard link of the
    old file taken just before (where the file system has no hard links, a failure between two renames
    can leave the earlier ones new), a target that did not exist is removed again. A device, FIFO or
    socket at any target is refused before the first rename.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> with written_together() as stage:
    ...     stage(folder / "k.fatbin", b"fatbin")
    ...     stage(folder / "k.json", b"{}")
    >>> sorted(p.name for p in folder.iterdir())
    ['k.fatbin', 'k.json']
    """
    staged: list[tuple[str, str]] = []

    def stage(target: str | os.PathLike[str], data: _Data) -> None:
        tmp = temp_name(target)
        _write_new_file(tmp, data)
        staged.append((tmp, os.fspath(target)))

    try:
        yield stage
        _publish_all(staged, replace)
    except BaseException:
        for tmp, _ in staged:  # those renamed are gone already (or put back by _publish_all)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    for folder in dict.fromkeys(os.path.dirname(t) or "." for _, t in staged):
        fsync_dir(folder)


def _write_new_file(path: str, data: _Data) -> None:
    """Create ``path`` (``O_CREAT | O_EXCL | O_NOFOLLOW``), write ``data``, fsync; no part is left on a failure."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_BINARY, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            if callable(data):
                data(f)
            else:
                f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise


def _publish_all(staged: list[tuple[str, str]], replace: bool) -> None:
    """Rename (or link) every staged file into place; on a failure, undo those done and raise."""
    if replace:
        for _, target in staged:
            _refuse_special(target)
    done: list[tuple[str, str | None]] = []  # target, and the old file's hard link ("" nothing was there)
    try:
        for tmp, target in staged:
            if not replace:
                _publish_new(tmp, target)
                done.append((target, ""))
                continue
            old = _keep_old(target) if len(staged) > 1 else None
            try:
                os.replace(tmp, target)
            except BaseException:
                if old:
                    os.unlink(old)
                raise
            done.append((target, old))
    except BaseException:
        for target, old in reversed(done):
            with contextlib.suppress(OSError):
                if old:
                    os.replace(old, target)
                elif old == "":
                    os.unlink(target)
        raise
    for _, old in done:
        if old:
            with contextlib.suppress(OSError):
                os.unlink(old)


def _keep_old(target: str) -> str | None:
    """A hard link of what is at ``target`` (the link itself for a symlink), to put back; "" when nothing is there,
    None when it cannot be kept (no hard links on this file system)."""
    try:
        os.lstat(target)
    except FileNotFoundError:
        return ""
    except OSError:
        return None
    old = temp_name(target, "old")
    try:
        os.link(target, old, follow_symlinks=False)
    except OSError:
        return None
    return old


def _refuse_special(target: str | os.PathLike[str]) -> None:
    """A device, FIFO or socket at ``target`` is not replaced by a file (``-o /dev/null`` as root)."""
    try:
        st = os.lstat(target)
    except OSError:
        return
    if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) or stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode):
        raise OSError(errno.EEXIST, f"{describe(st)} is there; it is not replaced by a file", os.fspath(target))


def _publish_new(tmp: str, target: str | os.PathLike[str]) -> None:
    """Give the finished file ``tmp`` the name ``target`` only if nothing has it; remove ``tmp``."""
    try:
        os.link(tmp, target, follow_symlinks=False)
    except FileExistsError:
        raise
    except OSError as e:  # no hard links here (FAT, some network file systems): an exclusive create, then a copy
        if e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS):
            raise

        def copy(f: BinaryIO) -> None:
            with open(tmp, "rb") as src:
                while chunk := src.read(_CHUNK):
                    f.write(chunk)

        create_new(target, copy)
    os.unlink(tmp)


def create_new(
    target: str | os.PathLike[str],
    data: bytes | bytearray | memoryview | Callable[[BinaryIO], object],
    *,
    dir_fd: int | None = None,
) -> None:
    """Create ``target``, which must not exist (``O_CREAT | O_EXCL | O_NOFOLLOW``), write ``data`` and fsync it.

    Meant for a fresh directory of our own (a build's staging folder): there the name cannot have been
    planted. Anywhere else use :func:`write_atomic`. The bytes go through ``os.write``, so a full disk
    fails here, not later; a failure after the file was created (a full disk, Ctrl-C) removes it. With
    ``dir_fd`` (the folder, opened), ``target`` is a name in it: a folder swapped meanwhile for a symlink
    never leads the write elsewhere.

    Raises
    ------
    FileExistsError
        Something (a file, a symlink, anything) is at ``target``.
    OSError
        The disk is full, the folder is not writable.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "new"
    >>> create_new(path, b"abc")
    >>> try:
    ...     create_new(path, b"def")
    ... except FileExistsError:
    ...     print(path.read_bytes())
    b'abc'
    """
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_BINARY, 0o666, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as f:
            if callable(data):
                data(f)
                f.flush()
            else:
                view = memoryview(data).cast("B")
                while view:
                    view = view[os.write(fd, view) :]
            os.fsync(fd)
    except BaseException:  # the file is ours (O_EXCL made it): no part of it is left
        with contextlib.suppress(OSError):
            os.unlink(target, dir_fd=dir_fd)
        raise


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Flush a folder's entries (the renames made in it) to disk; a no-op where folders cannot be opened."""
    if not O_DIRECTORY:
        return
    try:
        fd = open_dir(path)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):  # some file systems refuse fsync on a directory: nothing to flush there
            os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def locked_dir(path: str | os.PathLike[str]) -> Iterator[bool]:
    """Hold an exclusive ``flock`` on the folder ``path`` itself (no lock file): yields True when locked.

    Serialises the writers of one folder (two processes building the same bundle) without leaving a file
    behind. Where ``fcntl`` is missing (Windows) it yields False and locks nothing.

    Examples
    --------
    >>> import tempfile
    >>> with locked_dir(tempfile.mkdtemp()) as held:
    ...     held
    True
    """
    try:
        import fcntl
    except ImportError:  # Windows
        yield False
        return
    fd = open_dir(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield True
    finally:
        os.close(fd)  # closing releases the lock
