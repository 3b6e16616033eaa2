"""Sphinx configuration of the documentation site: the README, the guides in docs/ and the API reference.

sphinx-build -W -b html docs build/docs
"""

import cuda_fatbin

project = "cuda-fatbin"
version = release = cuda_fatbin.__version__
extensions = ["sphinx.ext.autodoc", "numpydoc", "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the numpydoc sections say the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
myst_heading_anchors = 3  # links to "file.md#a-heading" resolve
exclude_patterns = ["_build", "probe"]
html_theme = "alabaster"
html_theme_options = {"fixed_sidebar": True}
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}
nitpicky = False
