#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Write the intersphinx inventories that the docs site links through (docs/_inv/*.inv).

The site links into cuda.core's and Python's documentation. Sphinx reads an inventory (``objects.inv``)
for each; CI and build machines may have no network, so the inventories the site needs are kept in the
repository and the site's ``conf.py`` tries them first (then the live ones). This script writes them:

- ``cuda-core.inv``: the cuda.core objects our API names, at the pages that cuda.core's own API reference
  generates for them (``cuda_core/docs/source/api.rst`` in NVIDIA/cuda-python: every name there is an
  ``autosummary`` entry with ``:toctree: generated/``, so its page is ``generated/cuda.core.<Name>.html``).
  Every name is checked against the installed cuda.core before it is written.
- ``python.inv``: the standard-library objects our signatures name, at their docs.python.org anchors.

Run it again when the API names another cuda.core or standard-library object:
``python scripts/make-inventories.py`` (tests/test_docs_site.py checks the files against this list).
"""

from __future__ import annotations

import importlib
import zlib
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "docs" / "_inv"

# cuda.core names (api.rst, "Devices and execution" and "CUDA compilation toolchain")
CUDA_CORE_CLASSES = ["Device", "Stream", "LaunchConfig", "Program", "ProgramOptions", "Linker", "LinkerOptions",
                     "ObjectCode", "Kernel"]  # fmt: skip
CUDA_CORE_FUNCTIONS = ["launch"]

# name -> (role, page#anchor): py roles unless a domain is given
PYTHON = {
    "bytes": ("class", "library/stdtypes.html#bytes"),
    "bytearray": ("class", "library/stdtypes.html#bytearray"),
    "memoryview": ("class", "library/stdtypes.html#memoryview"),
    "str": ("class", "library/stdtypes.html#str"),
    "int": ("class", "library/functions.html#int"),
    "float": ("class", "library/functions.html#float"),
    "bool": ("class", "library/functions.html#bool"),
    "dict": ("class", "library/stdtypes.html#dict"),
    "list": ("class", "library/stdtypes.html#list"),
    "tuple": ("class", "library/stdtypes.html#tuple"),
    "os.PathLike": ("class", "library/os.html#os.PathLike"),
    "pathlib.Path": ("class", "library/pathlib.html#pathlib.Path"),
    "concurrent.futures.Executor": ("class", "library/concurrent.futures.html#concurrent.futures.Executor"),
    "ValueError": ("exception", "library/exceptions.html#ValueError"),
    "TypeError": ("exception", "library/exceptions.html#TypeError"),
    "OSError": ("exception", "library/exceptions.html#OSError"),
    "RuntimeError": ("exception", "library/exceptions.html#RuntimeError"),
    "KeyError": ("exception", "library/exceptions.html#KeyError"),
    # what numpydoc's default type aliases point at (numpydoc.xref.DEFAULT_LINKS)
    "None": ("data", "library/constants.html#None"),
    "True": ("data", "library/constants.html#True"),
    "False": ("data", "library/constants.html#False"),
    "callable": ("function", "library/functions.html#callable"),
    "contextlib.contextmanager": ("function", "library/contextlib.html#contextlib.contextmanager"),
    "collections.namedtuple": ("function", "library/collections.html#collections.namedtuple"),
    "iterable": ("std:term", "glossary.html#term-iterable"),
    "sequence": ("std:term", "glossary.html#term-sequence"),
    "generator": ("std:term", "glossary.html#term-generator"),
    "bltin-boolean-values": ("std:label", "library/stdtypes.html#bltin-boolean-values"),
}


def cuda_core_entries() -> list[tuple[str, str, str]]:
    core = importlib.import_module("cuda.core")
    rows = []
    for name in CUDA_CORE_CLASSES + CUDA_CORE_FUNCTIONS:
        if not hasattr(core, name):
            raise SystemExit(f"cuda.core has no {name}: update the list in {__file__}")
        full = f"cuda.core.{name}"
        role = "function" if name in CUDA_CORE_FUNCTIONS else "class"
        rows.append((full, role, f"generated/{full}.html#{full}"))
    return rows


def python_entries() -> list[tuple[str, str, str]]:
    return [(name, role, uri) for name, (role, uri) in PYTHON.items()]


def write(path: Path, project: str, version: str, rows: list[tuple[str, str, str]]) -> None:
    body = "".join(f"{name} {role if ':' in role else 'py:' + role} 1 {uri} -\n" for name, role, uri in sorted(rows))
    head = f"# Sphinx inventory version 2\n# Project: {project}\n# Version: {version}\n"
    head += "# The remainder of this file is compressed using zlib.\n"
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(head.encode() + zlib.compress(body.encode(), 9))
    tmp.replace(path)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    write(OUT / "cuda-core.inv", "cuda.core", "latest", cuda_core_entries())
    write(OUT / "python.inv", "Python", "3", python_entries())
    print(f"wrote {OUT}/cuda-core.inv and python.inv")


if __name__ == "__main__":
    main()
