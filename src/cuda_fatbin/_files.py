"""Opening what we read and writing what we write, safely: the one home of both.

Reading: :func:`open_input` opens without blocking on a FIFO and, for paths found by walking a folder,
without following a final symlink; the caller decides on the ``fstat`` of the open descriptor, never on
an earlier ``stat`` of the path (a file swapped after listing is judged as it is when opened).

Writing: :func:`write_atomic` writes a temporary file beside the target (``O_CREAT | O_EXCL |
O_NOFOLLOW``), flushes it to disk and renames it into place, so a reader sees the old file or the new one,
never a part, a failure leaves the old one intact, and a symlink planted at the target is replaced, not
followed.

Reading side and writing side both: imports nothing of the compile side.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO

__all__ = ["blocking", "is_regular", "open_input", "temp_name", "write_atomic"]

O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
O_BINARY = getattr(os, "O_BINARY", 0)


def open_input(path: str | bytes | os.PathLike[str], *, follow: bool = True) -> tuple[int, os.stat_result]:
    """Open ``path`` for reading: ``(descriptor, fstat of it)``; the caller closes the descriptor.

    The open never blocks (``O_NONBLOCK``: a FIFO with no writer opens at once) and, with ``follow=False``,
    a symlink at ``path`` itself is refused (``ELOOP``) instead of followed. Judge the result by the
    returned ``stat`` (``stat.S_ISREG``), which describes what was opened. On a regular file
    ``O_NONBLOCK`` changes nothing; a caller that reads a pipe as a stream clears it first
    (:func:`blocking`).

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
    fd = os.open(path, flags)
    try:
        return fd, os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise


def blocking(fd: int) -> None:
    """Clear ``O_NONBLOCK`` on ``fd`` (a pipe the user named is read to its end, waiting for the writer)."""
    if O_NONBLOCK:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~O_NONBLOCK)


def is_regular(st: os.stat_result) -> bool:
    """True for a regular file (not a directory, FIFO, socket, device or symlink)."""
    return stat.S_ISREG(st.st_mode)


def temp_name(target: str | os.PathLike[str], kind: str = "tmp") -> str:
    """A fresh hidden name beside ``target``: ``<dir>/.<name>.<random>.<kind>``."""
    head, tail = os.path.split(os.fspath(target))
    return os.path.join(head, f".{tail}.{secrets.token_hex(6)}.{kind}")


def write_atomic(
    target: str | os.PathLike[str], data: bytes | bytearray | memoryview | Callable[[BinaryIO], object]
) -> None:
    """Write ``data`` to ``target`` all at once: a temporary file beside it, fsync, rename into place.

    ``data`` is bytes or a function that writes to the open temporary file. The temporary file is created
    with ``O_CREAT | O_EXCL | O_NOFOLLOW`` (a name planted by someone else is never opened) and the usual
    permissions (``0o666`` less the umask); the rename replaces whatever is at ``target`` — a symlink
    there is replaced, never followed. Any failure (a full disk, an exception from ``data``, Ctrl-C)
    removes the temporary file and leaves ``target`` as it was.

    Raises
    ------
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
    tmp = temp_name(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_BINARY, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            if callable(data):
                data(f)
            else:
                f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
