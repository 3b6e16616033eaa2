# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Write the entries of fat binaries out as files, named as ``cuobjdump -xelf/-xptx`` names them.

Identifiers inside a container are free text from whoever built it, so every file name is made
safe first (:func:`safe_name`), the file is written inside the chosen directory only, with
:func:`~cuda_fatbin._files.written_together` (a temporary file created ``O_CREAT | O_EXCL | O_NOFOLLOW``
beside each target; once all are written, each published whole: with a hard link, which never replaces
anything, or with ``force`` a rename, which replaces a planted symlink instead of following it; a
failure anywhere leaves none of them and every old file), and the bytes written in
one call are bounded by :data:`~cuda_fatbin._reader.MAX_EXPANSION` times the input size. See
docs/security.md.

Reading side: this module does not import the compile side.
"""

from __future__ import annotations

import contextlib
import os
import stat
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from ._arch import Arch
from ._errors import Error
from ._files import describe, stat_path, written_together
from ._reader import MAX_EXPANSION, Fatbin, FatbinEntry, FatbinFormatError, iter_fatbins

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._reader import Source

__all__ = ["EXTENSIONS", "ExtractError", "entry_file_names", "extract_entries", "safe_name"]

#: File extension per entry kind. ``cubin`` and ``ptx`` are cuobjdump's; it cannot extract the others.
EXTENSIONS = {"elf": "cubin", "ptx": "ptx", "ltoir": "ltoir", "reloc": "ptx", "tile_ir": "tileir", "index": "idx"}
#: Longest file name (in UTF-8 bytes) :func:`safe_name` returns for an identifier's part, well under the
#: 255 bytes most file systems allow, leaving room for the number and the ``.sm_XXXa.cubin`` suffix.
MAX_NAME_BYTES = 200
_KIND_ALIASES = {"cubin": "elf", "sass": "elf"}


class ExtractError(Error, OSError):
    """A file could not be written: it exists already (pass ``force``), or the path is not safe to write.

    Examples
    --------
    >>> from cuda_fatbin import Program
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> data = bytes(Program(src, "c++").compile("fatbin", archs=["sm_80", "sm_90"], ptx_for=["sm_90"]).code)
    >>> import tempfile
    >>> from cuda_fatbin import ExtractError, extract_entries
    >>> out = tempfile.mkdtemp()
    >>> _ = extract_entries(data, out, source_name="k.fatbin")
    >>> try:
    ...     extract_entries(data, out, source_name="k.fatbin")  # the files exist: nothing is overwritten
    ... except ExtractError as e:
    ...     print("refused:", type(e).__name__)
    refused: ExtractError
    >>> len(extract_entries(data, out, source_name="k.fatbin", force=True))
    3
    """


def safe_name(text: str) -> str:
    """A file name made from untrusted ``text``: no directory parts, no control characters, bounded length.

    Keeps the part after the last ``/`` or ``\\``, replaces NUL, control and format characters with
    ``_``, replaces a name that is empty, ``.`` or ``..`` with ``_``, and cuts it to
    :data:`MAX_NAME_BYTES` bytes of UTF-8.

    Examples
    --------
    >>> safe_name("../../etc/passwd"), safe_name("a\\x00b"), safe_name("..")
    ('passwd', 'a_b', '_')
    """
    base = text.replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join("_" if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") else c for c in base)
    if base in ("", ".", ".."):
        base = "_"
    raw = base.encode("utf-8", "replace")
    if len(raw) > MAX_NAME_BYTES:
        base = raw[:MAX_NAME_BYTES].decode("utf-8", "ignore")
    return base


def _drop_extension(name: str) -> str:
    stem, dot, _ext = name.rpartition(".")
    return stem if dot and stem else name


def _arch_label(entry: FatbinEntry) -> str:
    a = entry.arch
    if a is None:
        return f"sm_{entry.sm}"
    return f"sm_{a.sm}{'a' if a.suffix == 'a' else ''}"  # cuobjdump names an f entry by its base arch


def entry_file_names(
    fatbins: Iterable[Fatbin], source_name: str, *, unique: bool = True
) -> Iterable[tuple[FatbinEntry, str]]:
    """``(entry, file name)`` for every entry, as cuobjdump names them, each name made safe (and ``unique``).

    An entry with an identifier is named ``<identifier without its directory and last extension>.<arch>.<ext>``;
    one without, ``<source file name without its last extension>.<n>.<arch>.<ext>`` where ``n`` counts
    the entries of that kind from 1 across the file; a standalone cubin or PTX file,
    ``<source stem>.<arch>.<ext>``. The arch is ``sm_XX`` (with ``a``; an ``f`` entry takes its base
    arch). With ``unique`` (default), a name already given gets ``-2``, ``-3``, ... before the arch;
    without, names are exactly cuobjdump's listing names (which can repeat).
    """
    stem = safe_name(_drop_extension(safe_name(source_name)))
    counters: dict[str, int] = {}
    used: set[str] = set()
    next_k: dict[str, int] = {}  # the -k to try next per name: linear work when many entries share one
    for fb in fatbins:
        for e in fb.iter_entries():
            counters[e.kind] = counters.get(e.kind, 0) + 1
            if e.identifier:
                base = safe_name(_drop_extension(safe_name(e.identifier)))
            elif fb.standalone:
                base = stem
            else:
                base = f"{stem}.{counters[e.kind]}"
            suffix = f".{_arch_label(e)}.{EXTENSIONS.get(e.kind, 'bin')}"
            name = base + suffix
            if unique and name.casefold() in used:  # case-insensitive file systems collide on case too
                key, k = name.casefold(), next_k.get(name.casefold(), 2)
                name = f"{base}-{k}{suffix}"
                while name.casefold() in used:
                    k += 1
                    name = f"{base}-{k}{suffix}"
                next_k[key] = k + 1
            used.add(name.casefold())
            yield e, name


def _checked_target(directory: Path, name: str) -> Path:
    target = directory / name
    if target.parent != directory or name in ("", ".", ".."):
        raise ExtractError(f"refusing to write {name!r}: not a plain file name inside {directory}")
    return target


@contextlib.contextmanager
def _refusals(force: bool) -> Iterator[None]:
    """The publishing step's errors as :class:`ExtractError` naming the target (a file, folder or special file
    made there after the checks in :func:`extract_entries`)."""
    try:
        yield
    except FileExistsError as e:
        target = e.filename2 or e.filename
        if force:  # a device, FIFO or socket (_files._refuse_special)
            raise ExtractError(f"{target}: {e.strerror}") from None
        raise ExtractError(f"{target} exists; pass force=True (--force) to replace it") from None
    except IsADirectoryError as e:
        raise ExtractError(f"{e.filename2 or e.filename} is a directory; it is not replaced") from None


def extract_entries(
    source: Source,
    directory: str | os.PathLike[str],
    *,
    kinds: Iterable[str] | None = None,
    archs: Iterable[Arch | str | int] | None = None,
    force: bool = False,
    embedded: bool = False,
    relocatable: bool | None = None,
    source_name: str | None = None,
    on_error: Callable[[FatbinEntry, str, Exception], None] | None = None,
) -> list[Path]:
    """Write the entries of every fatbin in ``source`` as files in ``directory``, named as cuobjdump does.

    Parameters
    ----------
    source : path or bytes-like
        Anything :func:`iter_fatbins` reads.
    directory : path
        Created if missing. Nothing is written outside it, whatever the identifiers in the container say.
    kinds : iterable of str, optional
        Entry kinds to write (``"elf"``/``"cubin"``, ``"ptx"``, ``"ltoir"``, ``"reloc"``, ``"tile_ir"``,
        ``"index"``). Default: all.
    archs : iterable of arch specs, optional
        Only entries for these archs (suffix included: ``sm_90a`` is not ``sm_90``). Default: all.
    force : bool, optional
        Replace existing files (a symlink at a target name is removed, never followed). Default: False.
    embedded, relocatable : optional
        As for :func:`iter_fatbins`.
    source_name : str, optional
        The name to derive file names from when ``source`` is data. Default: the path's name, ``"stdin"`` for
        ``"-"`` (a name starting with ``-`` would read as an option to the next command), or ``"data"``.
    on_error : callable, optional
        Called as ``on_error(entry, name, exc)`` for an entry whose payload cannot be decoded
        (obfuscated LTO-IR, a corrupt stream), and the extraction goes on. Default: None (raise).

    Returns
    -------
    list of Path
        The files written, in container order.

    Raises
    ------
    ExtractError
        A target exists (without ``force``), is a directory, or is the file being read (even with
        ``force``); nothing has been written in that case.
    FatbinFormatError
        The source is malformed, an entry cannot be decoded (without ``on_error``), or the output would
        exceed ``MAX_EXPANSION`` times the input size; nothing has been written.
    OSError
        A file cannot be written (a full disk); nothing has been written, every file there before is
        left as it was.
    ValueError
        An unknown kind or arch in ``kinds``/``archs``.

    Examples
    --------
    >>> from cuda_fatbin import Program
    >>> src = 'extern "C" __global__ void k(float* p) { p[0] = 1; }'
    >>> data = bytes(Program(src, "c++").compile("fatbin", archs=["sm_80", "sm_90"], ptx_for=["sm_90"]).code)
    >>> import tempfile
    >>> from cuda_fatbin import extract_entries
    >>> [p.name for p in extract_entries(data, tempfile.mkdtemp(), source_name="k.fatbin")]
    ['default_program.sm_80.cubin', 'default_program.sm_90.cubin', 'default_program.sm_90.ptx']
    """
    want_kinds = None
    if kinds is not None:
        want_kinds = {_KIND_ALIASES.get(k, k) for k in ([kinds] if isinstance(kinds, str) else kinds)}
        unknown = sorted(want_kinds - set(EXTENSIONS))
        if unknown:
            raise ValueError(f"unknown entry kind(s) {', '.join(unknown)}; use {', '.join(sorted(EXTENSIONS))}")
    want_archs = None if archs is None else {Arch.parse(a) for a in ([archs] if isinstance(archs, str) else archs)}
    if source_name is None:
        if isinstance(source, str) and source == "-":
            source_name = "stdin"
        elif isinstance(source, (str, os.PathLike)):
            source_name = Path(os.fsdecode(source)).name
        else:
            source_name = "data"
    fatbins = list(iter_fatbins(source, embedded=embedded, relocatable=relocatable))
    size = sum(fb.size for fb in fatbins)  # a pipe or FIFO has no size: what it held, at least
    if isinstance(source, (str, os.PathLike)) and source != "-":
        st = stat_path(source)
        if stat.S_ISREG(st.st_mode):
            size = max(size, st.st_size)
    plan = [
        (e, name)
        for e, name in entry_file_names(fatbins, source_name)
        if (want_kinds is None or e.kind in want_kinds) and (want_archs is None or e.arch in want_archs)
    ]
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    out = out.resolve()
    if isinstance(source, (str, os.PathLike)) and source != "-":
        read = stat_path(source)
        for _, name in plan:  # even with force: replacing the file being read loses it (a hard link too)
            try:
                st = os.lstat(out / name)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) == (read.st_dev, read.st_ino):
                raise ExtractError(f"{out / name} is the file being read; extract into another directory")
    if not force:
        clash = [name for _, name in plan if os.path.lexists(out / name)]
        if clash:
            raise ExtractError(f"{out / clash[0]} exists ({len(clash)} file(s) in all); pass --force to replace")
    for _, name in plan:  # what --force does not replace either, refused before anything is written
        try:
            st = os.lstat(out / name)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            raise ExtractError(f"{out / name} is a directory; it is not replaced")
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            raise ExtractError(f"{out / name}: {describe(st)} is there; it is not replaced by a file")
    limit = MAX_EXPANSION * max(size, 1)
    written: list[Path] = []
    total = 0
    # all or nothing: every file is staged first, then all are published (docs/security.md)
    with _refusals(force), written_together(replace=force) as stage:  # without force: hard links, never over anything
        for e, name in plan:
            try:
                data = e.data()
            except FatbinFormatError as exc:
                if on_error is None:
                    raise
                on_error(e, name, exc)
                continue
            if e.kind in ("ptx", "reloc"):
                data = data.rstrip(b"\0")
            total += len(data)
            if total > limit:
                raise FatbinFormatError(
                    f"extracting would write over {limit} bytes ({MAX_EXPANSION}x the input); refused", e.offset
                )
            target = _checked_target(out, name)
            stage(target, data)
            written.append(target)
    return written
