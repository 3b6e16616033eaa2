"""The documentation stands alone and covers the public API."""

from __future__ import annotations

import inspect
import re
import subprocess
from pathlib import Path

import cuda_fatbin

ROOT = Path(__file__).parent.parent


def test_every_public_name_has_a_numpydoc_docstring():
    for name in cuda_fatbin.__all__:
        if name == "__version__":
            continue
        obj = getattr(cuda_fatbin, name)
        doc = getattr(obj, "__doc__", None) if not isinstance(obj, dict) else "RULES"
        assert doc and doc.strip(), f"{name} has no docstring"
        if callable(obj) and not isinstance(obj, type) and inspect.signature(obj).parameters:
            assert "Parameters" in doc, f"{name}: no Parameters section"
            assert "Returns" in doc, f"{name}: no Returns section"


def test_the_api_reference_names_every_public_name():
    page = (ROOT / "docs" / "reference" / "index.rst").read_text()
    named = set(re.findall(r"^\.\. auto(?:class|function|data):: (\w+)", page, re.M))
    assert named == set(cuda_fatbin.__all__) - {"__version__"}


# the background notes beside a checkout and this workplace's folders, written so as not to match this file
OUTSIDE = re.compile("|".join([r"(?<![\w.])\.\./" + "shared", "shared" + "/design", "/" + "work/"]))


def test_no_file_refers_to_a_path_outside_the_repository():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    if not files:  # not a git checkout (an sdist, a mutation-testing copy): read the tree, less tool folders
        files = [
            str(p.relative_to(ROOT))
            for p in ROOT.rglob("*")
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(ROOT).parts)
        ]
    bad = []
    for f in files:
        path = ROOT / f
        if path.suffix not in (".py", ".md", ".toml", ".sh", ".rst", ".txt", "") or not path.is_file():
            continue
        text = path.read_text(errors="replace")
        if OUTSIDE.search(text):
            bad.append(f)
    assert not bad, f"these files cite paths outside the repository: {bad}"
