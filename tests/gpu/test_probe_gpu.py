# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""On a real GPU: the whole probe matrix (``cuda-fatbin probe``) agrees with select_entry.

Each case is a fatbin of tagged entries built here, run in a fresh process with a fresh JIT cache (the
warm-cache cases run a warm-up first). ``CUDA_FATBIN_PROBE_JSON`` names a file for the run's JSON (the
record kept in docs/probe/).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu


def test_the_probe_matrix_agrees_with_the_model(device):
    from cuda_fatbin import probe

    report = probe()
    path = os.environ.get("CUDA_FATBIN_PROBE_JSON")
    if path:
        Path(path).write_text(json.dumps(report.to_dict(), indent=1) + "\n")
    wrong = [
        f"{r.case.name}: observed {r.observed}, predicted {r.predicted} ({r.reason})" for r in report.disagreements
    ]
    assert len(report.run) > 400
    assert not wrong, "\n".join(wrong)
