# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Every example runs as written (on a machine without a GPU it compiles, inspects and says so)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted(p for p in (Path(__file__).parent.parent / "examples").glob("*.py") if not p.name.startswith("_"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(path, tmp_path):
    res = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip()


def test_readme_first_snippet_runs(tmp_path):
    """The README's opening example runs as written on a machine without a GPU."""
    import re

    readme = (Path(__file__).parent.parent / "README.md").read_text()
    first = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
    res = subprocess.run([sys.executable, "-c", first], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split()[1] == "fatbin"
