# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Work and output stay linear in the input, round three: each test pins one row of docs/security.md's "Bounds".

Checked by counting the operations that grew (comparisons, bytes written or read) or by an input so large that
the quadratic code could not finish under the test's timeout while the linear one takes well under a second.
"""

from __future__ import annotations

import io
import struct

import pytest

from cuda_fatbin import iter_fatbins, parse_archs
from cuda_fatbin._reader import Fatbin
from cuda_fatbin._select import judge
from cuda_fatbin._term import MAX_PAD, table

from elf_testing import make_elf

_ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")


def _stub_fatbin() -> bytes:
    """A fatbin of one sm_80 cubin without code (no ``.text.*`` section): what nvcc's device-link stubs hold."""
    stub = make_elf([(".nv.info", 0x70000000, bytes(8))], machine=190, flags=80, e_type=2)
    stub += bytes(-len(stub) % 8)
    entry = _ENTRY.pack(2, 0x101, 64, len(stub), 0, 0, 0, 1, 80, 0, 0, 0x11, 0, 0) + stub
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(entry)) + entry


def test_judging_kernel_less_fatbins_compares_each_once(monkeypatch):
    """Issue 51: each registered fatbin was looked up in the list of kernel-less ones (8k/16k/32k: 0.9/3.2/12.7 s
    a GPU). Counted: a lookup compares the fatbins themselves; the work must stay linear in their number."""
    k = 2000
    fatbins = list(iter_fatbins(make_elf([(".nv_fatbin", 1, _stub_fatbin() * k)], e_type=3)))
    compared = 0

    def counting_eq(self: Fatbin, other: object) -> bool:
        nonlocal compared
        compared += 1
        return self is other

    monkeypatch.setattr(Fatbin, "__eq__", counting_eq)
    monkeypatch.setattr(Fatbin, "__hash__", object.__hash__)
    got = judge(fatbins, ["9.0", "8.0"])
    assert got["9.0"] == {"status": "no kernels", "reason": f"its fatbins hold no code; {k} registered fatbins "
                                                            "without code skipped"}  # fmt: skip
    assert got["8.0"]["status"] == "SASS exact"  # a code-less cubin that loads is not skipped
    assert compared <= 4 * k  # the list search made k * k / 2 = 2,000,000 comparisons


@pytest.mark.timeout(60)
def test_parse_archs_is_linear_in_the_words_beside_gencode_clauses():
    """Issue 51: each word next to a gencode clause was looked up in the list of lto_ words (90/180/360 KB:
    0.8/3.2/15.9 s). 1.8 MB here: about 0.8 s; the list search needed hours."""
    spec = "arch=compute_80,code=sm_80 " + "lto_80 x " * 200_000
    with pytest.raises(ValueError, match="malformed gencode spec"):
        parse_archs(spec)
    assert parse_archs("arch=compute_80,code=sm_80 " + "lto_80 LTO_90 " * 100_000).ltoir  # the words are kept


def test_a_long_cell_widens_no_other_row_of_a_table():
    """Issue 51: scan's table padded every row to the longest distribution name (1 MiB x 200 rows: 212 MB).
    A column is padded up to MAX_PAD characters; a longer cell is written once, whole."""
    name = "n" * (1 << 20)
    rows = [(name, 1, "SASS")] + [(f"dist-{i}", 1, "SASS") for i in range(199)]
    out = io.StringIO()
    table(["distribution", "binaries", "9.0"], rows, out)
    text = out.getvalue()
    assert len(text) < len(name) + 202 * (MAX_PAD + 20)  # 1.07 MB; 212 MB before
    assert name in text  # never cut
    short = text.splitlines()[3]
    assert short.startswith("dist-0 ") and len(short) <= MAX_PAD + 2 + len("binaries") + 2 + len("SASS")
