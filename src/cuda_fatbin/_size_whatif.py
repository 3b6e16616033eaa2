# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""What-if for ``cuda-fatbin size``: the projections (``--drop``, ``--keep-ptx-for``, ``--recompress``) and their
spellings, and the ``--budget`` size. Used by :mod:`._size`, which measures; see docs/scan.md ("What-if")."""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from ._elf import Buffer
    from ._reader import FatbinEntry

__all__ = ["RECOMPRESS", "parse_size"]

#: What libnvfatbin 13.x writes per ``-compress-mode`` (with ``-compress-all``): the codec and its level, matched
#: byte for byte against its output (docs/scan.md, "What-if"): ``speed`` a raw LZ4-HC block at level 3,
#: ``balance`` (and ``default``) a zstd frame at level 5, ``size`` a zstd frame at level 19.
RECOMPRESS = {"none": None, "speed": ("lz4hc", 3), "balance": ("zstd", 5), "default": ("zstd", 5), "size": ("zstd", 19)}


def _key(e: FatbinEntry) -> str:
    return f"{e.kind} {e.arch or 'sm_' + str(e.sm)}"


def _compressed_size(data: Buffer, mode: str) -> int:
    """Bytes ``data`` would be stored in, padded to 8, once compressed as libnvfatbin's ``mode`` does (kept
    uncompressed when that does not make it smaller)."""
    codec = RECOMPRESS[mode]
    n = len(data)
    if codec is not None and n:
        if codec[0] == "zstd":
            import zstandard

            n = min(n, len(zstandard.ZstdCompressor(level=codec[1]).compress(bytes(data))))
        else:
            import lz4.block

            n = min(n, len(lz4.block.compress(bytes(data), store_size=False, mode="high_compression",
                                              compression=codec[1])))  # fmt: skip
    return -(-n // 8) * 8


def _project_stream(
    top: FatbinEntry, record: int, rows: list[list[Any]], recompress: str | None, removed: Callable[[str], bool]
) -> None:
    """Project a concatenated entry as libnvfatbin ``-concat`` writes it: the members left (not ``removed``) as one
    stream, compressed as ``recompress`` says, or else as the entry is (LZ4 as ``speed``; zstd as ``balance``
    where that gives its stored size, else in the ratio of its stored size to that: zstd 19 of a large stream
    would take minutes); the record's bytes shared by the members' ``rows`` (of :attr:`BinarySize.payloads`) in
    proportion to their sizes, less the member records of the members removed. Left as it is (each member
    projected alone) when the stream cannot be read."""
    if len(rows) != len(top.members) or any(str(row[0]).startswith("unreadable") for row in rows):
        return
    kept = [(m, row) for m, row in zip(top.members, rows, strict=True) if not removed(_key(m))]
    try:
        stream = top._decompressed()
        left = b"".join(stream[m._member_offset : m._member_offset + m.size] for m, _ in kept)
        if recompress is not None:
            payload = _compressed_size(left, recompress)
        elif top.compression in ("lz4", "zstd"):
            mode = "speed" if top.compression == "lz4" else "balance"
            whole_stream = _compressed_size(stream, mode)
            payload = _compressed_size(left, mode)
            if whole_stream != top.stored_size:
                payload = -(-payload * top.stored_size // max(1, whole_stream) // 8) * 8
        else:
            return
    except (ValueError, MemoryError):
        return
    # each member removed takes its record in the member table (docs/formats.md), about its share of the table
    # after the entry's 64-byte header and the table's count and size
    table = max(0, record - top.stored_size - 72)
    again = record - top.stored_size - table * (len(rows) - len(kept)) // len(rows) + payload if kept else 0
    whole = sum(m.size for m, _ in kept) or 1
    for m, row in kept:
        row[3] = again * m.size // whole


_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE_RE = re.compile(r"(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?", re.IGNORECASE)
_DROP_RE = re.compile(r"(sm|compute)_(\d{2,4}[af]?)")


def parse_size(text: str) -> int:
    """Bytes from ``"100M"``, ``"1.5G"``, ``"300MB"``, ``"512k"`` or ``"1048576"`` (K, M, G, T: powers of 1024).

    Raises
    ------
    ValueError
        ``text`` is not such a size.

    Examples
    --------
    >>> from cuda_fatbin._size import parse_size
    >>> parse_size("100M"), parse_size("1.5G"), parse_size("4096")
    (104857600, 1610612736, 4096)
    """
    m = _SIZE_RE.fullmatch(text.strip()) if len(text) < 40 else None
    if not m:
        raise ValueError(f"not a size: {text!r} (write e.g. 100M, 1.5G or 4096)")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def _entry_keys(specs: Iterable[str], option: str, takes: str) -> set[str]:
    """``sm_90`` -> ``"elf sm_90"`` (its SASS), ``compute_90`` -> ``"ptx sm_90"`` (its PTX); errors name ``option``."""
    keys = set()
    for spec in specs:
        m = _DROP_RE.fullmatch(spec.strip().lower())
        if not m:
            raise ValueError(f"{option} takes {takes}; got {spec!r}")
        keys.add(f"{'elf' if m.group(1) == 'sm' else 'ptx'} sm_{m.group(2)}")
    return keys


def _drop_keys(drop: Iterable[str]) -> set[str]:
    """The ``"kind arch"`` keys ``--drop`` removes: ``sm_90`` its SASS, ``compute_90`` its PTX."""
    return _entry_keys(drop, "--drop", "sm_XY (drops that SASS) or compute_XY (drops that PTX)")


def _removal(drop: Iterable[str], keep_ptx_for: Iterable[str]) -> Callable[[str], bool]:
    """Whether a projection that drops ``drop`` and keeps only ``keep_ptx_for``'s PTX removes a ``"kind arch"``."""
    dropped, keep = _drop_keys(drop), _kept_ptx(keep_ptx_for)
    return lambda key: key in dropped or (keep is not None and key.startswith("ptx ") and key not in keep)


def _kept_ptx(keep: Iterable[str]) -> set[str] | None:
    """``compute_90`` (or ``sm_90``) -> ``"ptx sm_90"``: the PTX ``--keep-ptx-for`` keeps; ``None`` when none is
    named (every PTX is kept)."""
    keys = _entry_keys(keep, "--keep-ptx-for", "compute_XY (or sm_XY): the PTX to keep")
    return {"ptx " + key.split(" ", 1)[1] for key in keys} or None
