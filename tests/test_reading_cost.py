# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""What listing reads and builds, counted rather than timed (docs/performance.md, issue 49)."""

from __future__ import annotations

import pytest

from cuda_fatbin import _source


@pytest.mark.parametrize("padding", [0, 8, 56, 64, 4096 + 8])
def test_padding_before_a_fatbin_reads_about_what_it_holds(tmp_path, padding):
    """The walk asks where the padding before each fatbin ends; a short run must not read 1 MiB each time
    (libcurand's 13 fatbins read 13 MiB for a few zero words)."""
    path = tmp_path / "padded.bin"
    size = 3 << 20  # mapped, read through pread
    with open(path, "wb") as f:
        f.truncate(size)
        f.seek(padding)
        f.write(b"\x50\xed\x55\xba" + b"\1" * 60)
    src = _source._open(str(path))
    assert src.fd is not None
    got: list[int] = []
    read = src.read

    def counting(start: int, end: int) -> bytes:
        got.append(end - start)
        return read(start, end)

    src.read = counting  # type: ignore[method-assign]
    assert src.padding_end(0, size) == padding
    assert sum(got) <= 64 + 16 * max(padding, 64), got
