"""Sphinx configuration of the flexmbs documentation (`make docs`)."""

import flexmbs

project = "flexmbs"
version = release = flexmbs.__version__
author = "the flexmbs authors"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**/.ipynb_checkpoints"]
# The tutorial's notebook is executed by each build, in a folder of its own, and its
# outputs (the viewer's pages among them) go in the site; an error in it fails the build.
nb_execution_mode = "force"
nb_execution_in_temp = True
nb_execution_timeout = 900
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 4
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False}
napoleon_numpy_docstring = True
napoleon_google_docstring = False
html_theme = "furo"
html_title = f"flexmbs {release}"
