"""Sphinx configuration of the API reference, built from the numpydoc docstrings.

sphinx-build -W -b html docs/reference build/reference
"""

import cuda_fatbin

project = "cuda-fatbin"
version = release = cuda_fatbin.__version__
extensions = ["sphinx.ext.autodoc", "numpydoc"]
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the numpydoc sections say the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
exclude_patterns = ["_build"]
html_theme = "alabaster"
nitpicky = False
