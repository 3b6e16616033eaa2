# SPDX-FileCopyrightText: Copyright (c) 2026 The cuda-fatbin developers
# SPDX-License-Identifier: Apache-2.0
"""Sphinx configuration of the documentation site: the README, the guides in docs/ and the API reference.

sphinx-build -W -b html docs build/docs
"""

import cuda_fatbin

project = "cuda-fatbin"
version = release = cuda_fatbin.__version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.intersphinx", "numpydoc", "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the numpydoc sections say the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
myst_heading_anchors = 3  # links to "file.md#a-heading" resolve
exclude_patterns = ["_build", "probe", "_inv"]
html_theme = "alabaster"
html_theme_options = {"fixed_sidebar": True}
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}
nitpicky = False

# Links into cuda.core's and Python's documentation. The inventories kept in _inv/ come first (builds
# without network; scripts/make-inventories.py writes them), then the live ones.
intersphinx_mapping = {
    "python": ("https://docs.python.org/3", ("_inv/python.inv", None)),
    "cuda.core": ("https://nvidia.github.io/cuda-python/cuda-core/latest", ("_inv/cuda-core.inv", None)),
}
numpydoc_xref_param_type = True  # the types in Parameters / Returns become links where they resolve
numpydoc_xref_aliases = {
    name: f"cuda.core.{name}"
    for name in (
        "Device",
        "Stream",
        "LaunchConfig",
        "Program",
        "ProgramOptions",
        "Linker",
        "LinkerOptions",
        "ObjectCode",
        "Kernel",
    )
} | {"Path": "pathlib.Path", "PathLike": "os.PathLike", "Executor": "concurrent.futures.Executor"}
numpydoc_xref_ignore = {"optional", "default", "or", "of", "and", "to", "the", "a", "an", "each", "one", "from"}
