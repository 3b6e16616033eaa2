# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""The documentation stands alone and covers the public API."""

from __future__ import annotations

import doctest
import importlib
import inspect
import io
import re
import subprocess
from pathlib import Path

import pytest

import cuda_fatbin

ROOT = Path(__file__).parent.parent


def _sections(doc: str) -> set[str]:
    return set(re.findall(r"^(\w+)\n-{3,}$", inspect.cleandoc(doc), re.M))


# data, not code: RULES is a dict, documented in docs/reference/predicting-the-load.rst and docs/selection.md
_DATA = {"__version__", "RULES"}


@pytest.mark.parametrize("name", sorted(set(cuda_fatbin.__all__) - _DATA))
def test_every_public_name_documents_parameters_returns_raises_and_an_example(name):
    obj = getattr(cuda_fatbin, name)
    doc = obj.__doc__
    assert doc and doc.strip(), f"{name} has no docstring"
    sections = _sections(doc)
    assert "Examples" in sections, f"{name}: no Examples section"
    if isinstance(obj, type):
        assert sections & {"Parameters", "Attributes"} or issubclass(obj, Exception), f"{name}: no Parameters"
    else:
        wanted = {"Returns", "Raises"} | ({"Parameters"} if inspect.signature(obj).parameters else set())
        assert wanted <= sections, f"{name}: missing {', '.join(sorted(wanted - sections))}"


def _modules_with_examples() -> list[str]:
    """Every module of the package whose source holds a docstring example, found, not listed: a module added
    later has its examples run too."""
    package = ROOT / "src" / "cuda_fatbin"
    found = {"." + ".".join(p.relative_to(package).with_suffix("").parts) for p in package.rglob("*.py")
             if ">>> " in p.read_text(encoding="utf-8")}  # fmt: skip
    return sorted(found | set(cuda_fatbin._LAZY.values()))


@pytest.mark.parametrize("module", _modules_with_examples())
def test_docstring_examples_run_as_written(module):
    """Every example in the docstrings runs (those marked +SKIP need a GPU or an old library)."""
    mod = importlib.import_module(module, "cuda_fatbin")
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE | doctest.IGNORE_EXCEPTION_DETAIL
    runner = doctest.DocTestRunner(optionflags=flags)
    out = io.StringIO()
    for test in doctest.DocTestFinder().find(mod, module=mod):
        runner.run(test, out=out.write)
    assert runner.failures == 0, out.getvalue()


def test_the_api_reference_names_every_public_name():
    pages = "\n".join(p.read_text() for p in sorted((ROOT / "docs" / "reference").glob("*.rst")))
    named = re.findall(r"^\.\. auto(?:class|function|data):: (\w+)", pages, re.M)
    assert len(named) == len(set(named)), "a name documented twice"
    named = set(named)
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


def test_the_docs_site_has_a_page_per_guide():
    """docs/index.md lists every guide in docs/ (the site is built with -W by .ci/run)."""
    index = (ROOT / "docs" / "index.md").read_text()
    listed = set(re.findall(r"^([\w-]+)$", index, re.M))
    guides = {p.stem for p in (ROOT / "docs").glob("*.md")} - {"index"}
    assert guides <= listed, guides - listed


def test_the_kept_intersphinx_inventories_are_current_and_name_real_objects(tmp_path):
    """docs/_inv/*.inv are what scripts/make-inventories.py writes now (so a cuda.core name that is gone
    fails here), and Sphinx reads them: the site links into cuda.core's and Python's docs offline."""
    import runpy
    import zlib

    def entries(raw: bytes) -> dict[str, str]:
        head = b"# The remainder of this file is compressed using zlib.\n"
        assert raw.startswith(b"# Sphinx inventory version 2\n") and head in raw
        body = zlib.decompress(raw.split(head, 1)[1]).decode()
        return {line.split()[0]: line.split()[1] for line in body.splitlines()}

    script = runpy.run_path(str(ROOT / "scripts" / "make-inventories.py"), run_name="inventories")
    script["OUT"] = tmp_path
    script["main"].__globals__["OUT"] = tmp_path
    script["main"]()
    for name in ("cuda-core.inv", "python.inv"):
        kept = (ROOT / "docs" / "_inv" / name).read_bytes()
        assert kept == (tmp_path / name).read_bytes(), f"docs/_inv/{name} is stale: run scripts/make-inventories.py"
        assert entries(kept)
    core = entries((ROOT / "docs" / "_inv" / "cuda-core.inv").read_bytes())
    assert core["cuda.core.ObjectCode"] == "py:class" and core["cuda.core.launch"] == "py:function"
    conf = (ROOT / "docs" / "conf.py").read_text()
    assert "_inv/cuda-core.inv" in conf and "_inv/python.inv" in conf


def _prose(root: Path) -> list[Path]:
    """The pages a reader follows: docs/*.md, the README, CONTRIBUTING.md and scripts/README.md."""
    return [
        *sorted((root / "docs").glob("*.md")),
        root / "README.md",
        root / "CONTRIBUTING.md",
        root / "scripts" / "README.md",
    ]


def test_every_test_file_has_a_row_in_the_layers_of_testing_md_and_every_row_names_real_files():
    """docs/testing.md's table of layers names each test file (a glob such as ``test_scan*.py`` counts), and nothing
    it names is gone."""
    import fnmatch

    root = Path(__file__).resolve().parents[1]
    text = (root / "docs" / "testing.md").read_text()
    table = text[text.index("## The layers") : text.index("## Running the tests")]
    named = [t.rsplit("/", 1)[-1] for t in re.findall(r"`([^`\s]+\.py)`", table)]
    files = sorted(p.name for p in (root / "tests").glob("test_*.py"))
    assert [f for f in files if not any(fnmatch.fnmatch(f, n) for n in named)] == []
    here = {p.name for d in ("tests", "scripts") for p in (root / d).glob("*.py")}
    assert [n for n in named if not fnmatch.filter(here, n)] == []


def test_every_module_attribute_the_docs_name_exists():
    """``_module.name`` or ``cuda_fatbin._module.name`` in the docs (``_reader.iter_fatbins``,
    ``_cli.main_scan.run``) names something that is there: functions move between modules."""
    root = Path(__file__).resolve().parents[1]
    modules = {p.stem for p in (root / "src" / "cuda_fatbin").glob("_*") if not p.stem.startswith("__")}
    missing = []
    for page in _prose(root):
        for ref in sorted(set(re.findall(r"\b(?:cuda_fatbin\.)?(_[a-z_]+(?:\.[A-Za-z_]\w*)+)", page.read_text()))):
            head, *rest = ref.split(".")
            if head not in modules or rest[-1] in ("py", "pyx", "pxd", "pyi", "md", "json", "so", "c", "hpp"):
                continue
            obj: object = importlib.import_module(f"cuda_fatbin.{head}")
            for i, name in enumerate(rest):
                if not hasattr(obj, name):
                    try:
                        obj = importlib.import_module(f"cuda_fatbin.{head}.{'.'.join(rest[: i + 1])}")
                        continue
                    except ImportError:
                        missing.append(f"{page.relative_to(root)}: {ref}")
                        break
                obj = getattr(obj, name)
    assert missing == []


def test_every_module_stays_within_800_lines():
    """A module that grows past 800 lines is split by what it does (CONTRIBUTING.md)."""
    import pathlib

    root = pathlib.Path(__file__).resolve().parent.parent / "src" / "cuda_fatbin"
    long = {str(p.relative_to(root)): n for p in root.rglob("*.py") if (n := len(p.read_text().splitlines())) > 800}
    assert long == {}
