"""Sphinx configuration of the flexmbs documentation (`make docs`)."""

import flexmbs

project = "flexmbs"
version = release = flexmbs.__version__
author = "the flexmbs authors"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 4
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False}
napoleon_numpy_docstring = True
napoleon_google_docstring = False
html_theme = "furo"
html_title = f"flexmbs {release}"
