"""Sphinx configuration: numpydoc API reference, sphinx-gallery, MyST pages.

Build (from the repository root, after ``pip install ".[docs]"``)::

    python -m sphinx -W -b html docs docs/_build/html

The gallery runs every example in its fast mode (``SKBAYES_SG_FAST=1``) and
sends the examples' own PNG files to ``docs/_build/example_figures`` so a
build never rewrites a file in the repository.
"""

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))

# The examples read these at import time; set them before sphinx-gallery runs them.
os.environ["SKBAYES_SG_FAST"] = "1"
os.environ.setdefault("SKBAYES_SG_FIGURES", str(DOCS / "_build" / "example_figures"))
os.environ.setdefault("PYTHONWARNINGS", "ignore")

import skbayes_sg  # noqa: E402

project = "skbayes_sg"
author = "skbayes_sg developers"
copyright = "skbayes_sg developers, BSD-3-Clause"
version = release = skbayes_sg.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints", "auto_examples/*.md5"]
templates_path = ["_templates"]

# -- API reference -----------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"
numpydoc_show_class_members = False       # autosummary pages list the methods themselves
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()        # the test suite checks docstrings, not the build

# -- Markdown (the benchmark results, dask.md, architecture.md) -----------------
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3
# Committed Markdown links to repository files (scripts, JSON) that are not
# pages of the site; those links stay plain text instead of failing the build.
suppress_warnings = ["myst.xref_missing", "myst.header"]

# -- Gallery -------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    # every example runs, quickstart included (its output is its result)
    "filename_pattern": r"/(plot_|quickstart)",
    "ignore_pattern": r"__init__\.py",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "plot_gallery": "True",
    "matplotlib_animations": False,
    "reference_url": {"skbayes_sg": None},
    # "Examples using X" on every API page (the minigallery in the class template)
    "doc_module": ("skbayes_sg",),
    "backreferences_dir": "generated/backreferences",
}

# -- HTML ------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "skbayes_sg"
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path = []
toc_object_entries_show_parents = "hide"   # "fit", not "BayesianLogisticRegression.fit", in the page TOC


# -- Benchmark result pages: one page per committed benchmarks/results/*.md -----
def _write_result_pages():
    """Write docs/benchmarks/results/<name>.md: the committed table and its figure."""
    out = DOCS / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    for md in sorted((ROOT / "benchmarks" / "results").glob("*.md")):
        lines = [f"# `{md.stem}`\n\n```{{include}} ../../../benchmarks/results/{md.name}\n```\n"]
        png = md.with_suffix(".png")
        if png.is_file():
            lines.append(f"\n```{{image}} ../../../benchmarks/results/{png.name}\n"
                         f":alt: {md.stem}\n:width: 100%\n```\n")
        page = out / md.name
        text = "".join(lines)
        if not page.is_file() or page.read_text() != text:
            page.write_text(text)


_write_result_pages()
