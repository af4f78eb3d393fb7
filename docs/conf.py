"""Sphinx configuration of the outprob documentation site.

Build with ``python3 scripts/dev.py docs`` (warnings are errors). The API
reference is generated from each public module's ``__all__`` at build time
(``_apigen.py``), so a name or module added to the package appears without
editing these sources.
"""

from __future__ import annotations

import inspect
import sys
from importlib.metadata import version as _version
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _apigen  # noqa: E402

project = "outprob"
author = "The outprob developers"
copyright = "the outprob developers"
release = _version("outprob")
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax copied into _static/mathjax: a site opened with no network (an
    # air-gapped plant) still typesets its formulas; the CDN default would
    # leave them as raw LaTeX.
    "sphinx-mathjax-offline",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
# sphinx-gallery's timing pages load their tables' scripts from CDNs: not
# written (write_computation_times) and, left by an older build, not read.
exclude_patterns = ["_build", "_generated/*", "**/README.md", "sg_execution_times.rst",
                    "**/sg_execution_times.rst"]
templates_path = ["_templates"]
nitpicky = True
# Docstrings name their parameter types in words ("array of 0/1 labels",
# "mapping name -> array"); those are read, not cross-referenced.
numpydoc_xref_param_type = False
numpydoc_show_class_members = False
numpydoc_validation_checks: set = set()
autosummary_imported_members = True
autodoc_default_options: dict = {}
autodoc_typehints = "none"
# Optional back ends a module may import at its top (pip install outprob[spark]).
autodoc_mock_imports = ["pyspark"]
# Names the docstrings mention that have no page of their own: scikit-learn's
# fitted attributes, methods a scaler has only for some parameters
# (available_if), and the compiled core's classes.
nitpick_ignore_regex = [
    (r"py:(obj|attr)", r"(.*\.)?(n_features_in_|feature_names_in_)"),
    (r"py:meth", r"(.*\.)?(partial_fit|refit|merge)"),
    (r"py:class", r"outprob\._core\..*"),
]
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]

html_theme = "pydata_sphinx_theme"
html_title = f"outprob {release}"
html_static_path = ["_static"]
html_theme_options = {
    "github_url": "https://github.com/outprob/outprob",
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 7,
}
html_context = {"default_mode": "light"}

sphinx_gallery_conf = {
    "examples_dirs": str(HERE.parent / "examples" / "gallery"),
    "gallery_dirs": "gallery",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "image_scrapers": ("matplotlib",),
    # Examples run on every build: they exercise the installed package, which
    # changes without their source changing.
    "run_stale_examples": True,
    "write_computation_times": False,
}

# Before autosummary reads them.
_apigen.write(HERE)
# Stub pages for the API pages named here: `True` would scan the documents
# found by the previous build, which lack a module page written for the
# first time on an incremental build.
autosummary_generate = [f"api/{m}.rst" for m in _apigen.public_modules()]

# A class page documents what outprob defines, inherited from its own bases
# too; methods inherited from scikit-learn or Python (get_params,
# set_output, the metadata-routing setters, with_traceback, ...) are
# documented by them.
def _skip_foreign_methods(app, what, name, obj, skip, options):  # noqa: ANN001
    if what != "class" or not inspect.isroutine(obj):
        return None
    owner = getattr(obj, "__objclass__", None)
    module = getattr(obj, "__module__", None) or getattr(owner, "__module__", "") or ""
    return True if not module.startswith("outprob") else None


def setup(app):  # noqa: ANN001 - Sphinx's hook
    app.connect("autodoc-skip-member", _skip_foreign_methods)
