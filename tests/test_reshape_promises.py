# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Promises of the one folder walk and the one ``archive::member`` splitter, pinned by behaviour."""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

import pytest

from cuda_fatbin._containers import split
from cuda_fatbin._walk import Folder, walk_tree


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts descriptors through /proc/self/fd")
def test_the_walk_closes_every_folder_it_opened_when_subfolders_cannot_be_opened(tmp_path: Path) -> None:
    for i in range(20):
        (tmp_path / f"d{i}").mkdir()
    failures: list[str] = []
    held: list[int] = []

    def visit(folder: Folder) -> list[tuple[str, tuple[int, int] | None]]:
        held.append(_open_fds())
        if folder.rel == "":
            return [(f"d{i}", None) for i in range(20)]
        return [("gone", None)]  # removed by the time it is opened

    before = _open_fds()
    walk_tree(str(tmp_path), visit, lambda path, rel, e: failures.append(rel))
    assert len(failures) == 20 and _open_fds() == before
    # a folder whose only subfolder could not be opened is closed then, not held until the walk ends
    assert max(held) - before <= 4, held


def test_a_separator_in_a_folder_name_is_never_taken_for_an_archive_member(tmp_path: Path) -> None:
    folder = tmp_path / "a.whl::x"
    folder.mkdir()
    (folder / "lib.so").write_bytes(b"\x7fELF")
    path = str(folder / "lib.so")
    assert split(path) == (path, None)
    wheel = tmp_path / "b.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("pkg/lib.so", b"x")
    assert split(f"{wheel}::pkg/lib.so") == (str(wheel), "pkg/lib.so")
    assert split(f"{wheel}::pkg/lib.so", known=lambda left: False) == (f"{wheel}::pkg/lib.so", None)


def _dies_once(item: int, marker_dir: str) -> int:
    """Kill this worker the first time item 2 runs (a file that shrank under a map), then succeed."""
    marker = os.path.join(marker_dir, "died")
    if item == 2 and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)
    return item * 10


def test_fan_out_runs_an_item_whose_worker_died_again_alone_before_giving_up(tmp_path: Path) -> None:
    from cuda_fatbin._jobs import fan_out

    got: dict[int, int] = {}
    fan_out([1, 2, 3], _dies_once, (str(tmp_path),), got.__setitem__, 2, lambda item: -1)
    assert got == {1: 10, 2: 20, 3: 30}
