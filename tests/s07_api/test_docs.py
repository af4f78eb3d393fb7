"""The public API as documented (contract §7: the names users rely on): the
documentation site builds with no warning (nitpicky, warnings as errors,
the gallery executed), its API reference lists every public name, and its
gallery renders its figures. What ``python3 scripts/dev.py docs`` builds,
into a temporary folder."""

from __future__ import annotations

import importlib
import pkgutil
import posixpath
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

pytest.importorskip("sphinx")
pytest.importorskip("sphinx_gallery")

from sphinx.util.inventory import InventoryFile  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MODULES = ["outprob", "outprob.stats", "outprob.metrics", "outprob.pyod", "outprob.dask",
           "outprob.spark", "outprob.streaming", "outprob.experiment", "outprob.plot"]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    run = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-E", "-b", "html",
         "-d", str(out / "doctrees"), str(ROOT / "docs"), str(out / "html")],
        capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-5000:]
    return out / "html"


def public_modules() -> list[str]:
    """The named modules and every other module of the installed package
    without a leading underscore (the command line has its own page)."""
    import outprob

    found = [f"outprob.{m.name}" for m in pkgutil.iter_modules(outprob.__path__)
             if not m.name.startswith("_") and m.name != "cli"]
    return MODULES + sorted(set(found) - set(MODULES))


def public_members(module) -> list[str]:
    """``__all__``, or the functions and classes a module without one
    defines under names without a leading underscore."""
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [n for n, obj in vars(module).items()
            if not n.startswith("_") and getattr(obj, "__module__", None) == module.__name__]


def test_every_public_name_is_in_the_reference(site):
    with open(site / "objects.inv", "rb") as f:
        inventory = InventoryFile.load(f, "", posixpath.join)
    documented = {name for objects in inventory.values() for name in objects}
    missing = []
    modules = public_modules()
    for name in modules:  # grows by the submodules a module exports
        module = importlib.import_module(name)
        assert name in documented, name
        for member in public_members(module):
            obj = getattr(module, member)
            if isinstance(obj, types.ModuleType):
                if obj.__name__ not in modules:
                    modules.append(obj.__name__)
            elif f"{name}.{member}" not in documented:
                missing.append(f"{name}.{member}")
    assert not missing, missing


def test_the_gallery_renders_its_figures(site):
    examples = sorted((ROOT / "examples" / "gallery").glob("plot_*.py"))
    assert len(examples) >= 6
    for example in examples:
        page = site / "gallery" / f"{example.stem}.html"
        assert page.is_file(), page
        figures = list((site / "_images").glob(f"sphx_glr_{example.stem}_0*.png"))
        assert figures, f"{example.name} drew no figure"
        assert all(f.stat().st_size > 10_000 for f in figures), figures


def test_the_site_has_its_pages(site):
    for page in ["index", "getting-started", "contract", "performance", "changelog",
                 "api/index", "user-guide/index", "user-guide/streaming", "user-guide/cli"]:
        assert (site / f"{page}.html").is_file(), page
    assert "outprob reproduce" in (site / "user-guide" / "cli.html").read_text(encoding="utf-8")


def test_the_site_needs_no_other_host(site):
    """Opened with no network (an air-gapped plant), every page has its
    scripts, stylesheets and images, and its formulas are typeset by the
    MathJax shipped in ``_static`` (scripts/browser_check.py renders them)."""
    external = re.compile(r'<(?:script|img|link)\b[^>]*\b(?:src|href)="((?:https?:)?//[^"]+)"')
    found = {}
    for page in site.rglob("*.html"):
        urls = external.findall(page.read_text(encoding="utf-8"))
        if urls:
            found[str(page.relative_to(site))] = urls
    assert not found, found
    conformal = (site / "user-guide" / "conformal.html").read_text(encoding="utf-8")
    assert 'class="math notranslate nohighlight"' in conformal
    (script,) = re.findall(r'<script[^>]+src="([^"]*mathjax[^"]*)"', conformal)
    assert (site / "user-guide" / script).resolve().is_file(), script
    fonts = list((site / "_static" / "mathjax").rglob("*.woff"))
    assert fonts, "MathJax's fonts are not in the site"
