"""Pages the site generates at build time, so that they follow the code:

- ``api/outprob*.rst``: one page per public module, listing its public
  names (autosummary writes a page per name under ``api/generated``). A
  public module is every module of the package whose name has no leading
  underscore, except the command line (documented from its own help), and
  every submodule a public module exports (``outprob.reference.metrics``).
  A module's public names are its ``__all__``, or, lacking one, the
  functions and classes it defines whose names have no leading underscore.
- ``_generated/api-summary.rst``: the API reference's landing page body,
  every public module, class and function with the first sentence of its
  docstring, in the groups of ``GROUPS``. Only the grouping is written
  here; a public name or module in no group, or in two, stops the build.
- ``_generated/cli.md``: the help of ``outprob`` and every subcommand.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import sys
import types
from pathlib import Path

HIDDEN = {"cli"}

# The landing page's groups: a title, one sentence, and the public modules
# and names of the package root it shows, in this order. The exceptions and
# warnings group takes every root name that is an exception class.
EXCEPTIONS = "Exceptions and warnings"
GROUPS: list[tuple[str, str, list[str]]] = [
    ("Scalers",
     "Fitted to scores, they map scores to outlier probabilities; every one "
     "is a scikit-learn transformer, and a fitted one is stored as JSON, a "
     "pickle or its map alone.",
     ["GaussianScaler", "LinearScaler", "RankScaler", "LogRankScaler", "TopKScaler",
      "SigmoidScaler", "MixtureScaler", "GammaScaler", "scaler", "VARIANTS", "Variant",
      "TRANSFORMATIONS", "Transformation", "combine", "from_dict", "FittedMap",
      "load_map"]),
    ("Conformal p-values and selection",
     "p-values with a guarantee, and which scores to flag at a stated false "
     "discovery rate (contract §11).",
     ["ConformalScaler", "select", "Selection", "fpr_upper_bound", "label_trim_candidates",
      "combine_pvalues", "ensemble_pvalues"]),
    ("Streaming",
     "Fits over batches of scores, with stated error bounds.",
     ["outprob.streaming"]),
    ("Online decisions on a stream",
     "One decision per score as it arrives: online conformal p-values, "
     "exchangeability martingales that alarm when the stream changes, and "
     "online FDR control (contract §12).",
     ["OnlineConformal", "Martingale", "MartingaleSteps", "OnlineFDR", "DecayedFit",
      "RefitOnDrift", "DriftEvent", "DriftSteps"]),
    ("Distributed fitting (Dask, Spark)",
     "Exact fits on a cluster, the in-memory fit's center and scale.",
     ["outprob.dask", "outprob.spark"]),
    ("Evaluation",
     "How good are outlier probabilities: the measures of contract §6, "
     "comparisons over many score sets, and their figures.",
     ["outprob.metrics", "outprob.compare", "outprob.plot"]),
    ("Estimators",
     "The location and scale estimators on their own.",
     ["outprob.stats"]),
    ("PyOD bridge",
     "Probabilities, confidence and conformal p-values of PyOD detectors.",
     ["outprob.pyod"]),
    ("Study",
     "The paper's study as library code.",
     ["outprob.experiment"]),
    ("Reference implementation",
     "Plain NumPy/SciPy versions of the contract's formulas: the tests' oracle.",
     ["outprob.reference", "outprob.reference.metrics", "outprob.reference.conformal"]),
    (EXCEPTIONS,
     "What outprob raises and warns; each subclasses its scikit-learn or "
     "Python counterpart.",
     []),
]


def public_names(module: types.ModuleType) -> list[str]:
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [n for n, obj in vars(module).items()
            if not n.startswith("_") and getattr(obj, "__module__", None) == module.__name__]


def public_modules() -> list[str]:
    import outprob

    names = [m.name for m in pkgutil.iter_modules(outprob.__path__)
             if not m.name.startswith("_") and m.name not in HIDDEN]
    found = ["outprob", *(f"outprob.{n}" for n in sorted(names))]
    for name in found:  # grows while it is read: exported submodules, recursively
        module = importlib.import_module(name)
        for member in public_names(module):
            obj = getattr(module, member)
            if (isinstance(obj, types.ModuleType) and obj.__name__.startswith("outprob.")
                    and obj.__name__ not in found):
                found.append(obj.__name__)
    return found


def _kind(obj: object) -> str:
    if isinstance(obj, types.ModuleType):
        return "module"
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "data"


def module_page(name: str) -> str:
    module = importlib.import_module(name)
    groups: dict[str, list[str]] = {"class": [], "function": [], "data": [], "module": []}
    for member in public_names(module):
        groups[_kind(getattr(module, member))].append(member)
    title = f"``{name}``"
    lines = [title, "=" * len(title), "", f".. automodule:: {name}", "   :no-members:", "",
             f".. currentmodule:: {name}", ""]
    headings = {"class": "Classes", "function": "Functions", "data": "Constants"}
    for kind, heading in headings.items():
        if not groups[kind]:
            continue
        lines += [heading, "-" * len(heading), "", ".. autosummary::", "   :toctree: generated/",
                  "   :nosignatures:", ""]
        lines += [f"   {m}" for m in sorted(groups[kind], key=str.lower)] + [""]
    if groups["module"]:
        documented = set(public_modules())
        lines += ["Modules", "-------", ""]
        lines += [f"- :mod:`{name}.{m}`" if f"{name}.{m}" in documented else f"- ``{name}.{m}``"
                  for m in sorted(groups["module"])] + [""]
    return "\n".join(lines)


def _first_paragraph(doc: str) -> str:
    lines = []
    for line in doc.strip().splitlines():
        if not line.strip():
            break
        lines.append(line.strip())
    return " ".join(lines)


def summary(doc: str | None) -> str:
    """The first sentence of a docstring: its first paragraph up to the
    first period followed by a capital letter (or the end), outside inline
    markup and parentheses ("Fig. 1", "et al. 2023" and "e.g. X" go on)."""
    text = _first_paragraph(doc or "")
    for m in re.finditer(r"\.(?=\s+[A-Z]|$)", text):
        head = text[:m.end()]
        if (head.count("`") % 2 == 0 and head.count("(") == head.count(")")
                and not head.endswith(("e.g.", "i.e.", "etc.", "vs."))):
            return head
    return text


def _attribute_doc(name: str, obj: object) -> str:
    """The docstring of a module-level constant: the string literal after
    its assignment (or a ``#:`` comment), in whichever outprob module
    assigns it."""
    from sphinx.pycode import ModuleAnalyzer
    from sphinx.errors import PycodeError

    for module in list(sys.modules.values()):
        if (getattr(module, "__name__", "").startswith("outprob")
                and getattr(module, name, None) is obj):
            try:
                docs = ModuleAnalyzer.for_module(module.__name__).find_attr_docs()
            except PycodeError:
                continue
            if ("", name) in docs:
                return "\n".join(docs[("", name)])
    return ""


def _doc(name: str, obj: object) -> str:
    if _kind(obj) == "data":
        return _attribute_doc(name, obj)
    return inspect.getdoc(obj) or ""


def _table(module: str, names: list[str]) -> list[str]:
    lines = [f".. currentmodule:: {module}", "", ".. list-table::", "   :class: autosummary",
             "   :widths: 30 70", ""]
    for member in names:
        obj = getattr(importlib.import_module(module), member)
        text = summary(_doc(member, obj))
        if not text and _kind(obj) != "data":
            raise ValueError(f"{module}.{member} has no docstring: the API summary needs one")
        lines += [f"   * - :obj:`~{module}.{member}`", f"     - {text}"]
    return lines + [""]


def _root_groups() -> dict[str, list[str]]:
    """Each group's names of the package root; every public root name
    that is not a module must fall in exactly one group."""
    import outprob

    names = {n: getattr(outprob, n) for n in public_names(outprob)}
    names = {n: o for n, o in names.items() if not isinstance(o, types.ModuleType)}
    groups = {title: [m for m in members if not m.startswith("outprob.")]
              for title, _, members in GROUPS}
    groups[EXCEPTIONS] = [n for n, o in names.items()
                          if inspect.isclass(o) and issubclass(o, BaseException)]
    placed = [n for members in groups.values() for n in members]
    unknown = sorted(set(placed) - set(names))
    twice = sorted({n for n in placed if placed.count(n) > 1})
    missing = sorted(set(names) - set(placed))
    if unknown or twice or missing:
        raise ValueError(f"docs/_apigen.py GROUPS: not public {unknown}, in two groups "
                         f"{twice}, in no group {missing}")
    return groups


def api_summary() -> str:
    """The landing page's body: per group, the root names' table, then each
    module's summary and its table."""
    modules = [m for m in public_modules() if m != "outprob"]
    grouped = [m for _, _, members in GROUPS for m in members if m.startswith("outprob.")]
    if sorted(grouped) != sorted(modules):
        raise ValueError(f"docs/_apigen.py GROUPS: modules in no group "
                         f"{sorted(set(modules) - set(grouped))}, not public or in two groups "
                         f"{sorted(m for m in set(grouped) if m not in modules or grouped.count(m) > 1)}")
    roots = _root_groups()
    lines: list[str] = []
    for title, blurb, members in GROUPS:
        lines += [title, "-" * len(title), "", blurb, ""]
        if roots[title]:
            lines += _table("outprob", roots[title])
        for module in (m for m in members if m.startswith("outprob.")):
            mod = importlib.import_module(module)
            heading = f":mod:`{module}`"
            lines += [heading, "~" * len(heading), "", summary(inspect.getdoc(mod)), ""]
            names = [n for n in public_names(mod)
                     if not isinstance(getattr(mod, n), types.ModuleType)]
            if names:
                lines += _table(module, names)
    return "\n".join(lines)


def cli_help() -> str:
    import argparse
    import io
    from contextlib import redirect_stdout

    from outprob import cli

    parser = cli._parser()
    out = ["## `outprob --help`", "", "```text", parser.format_help().rstrip(), "```", ""]
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command, p in sorted(sub.choices.items()):
        buf = io.StringIO()
        with redirect_stdout(buf):
            p.print_help()
        out += [f"## `outprob {command}`", "", "```text", buf.getvalue().rstrip(), "```", ""]
    return "\n".join(out)


def _write(path: Path, text: str) -> None:
    # Unchanged pages keep their time stamp, so Sphinx rereads only what changed.
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def write(docs: Path) -> None:
    api = docs / "api"
    wanted = {f"{m}.rst" for m in public_modules()}
    for stale in api.glob("outprob*.rst"):
        if stale.name not in wanted:
            stale.unlink()
    for m in public_modules():
        _write(api / f"{m}.rst", module_page(m))
    _write(docs / "_generated" / "api-summary.rst", api_summary())
    _write(docs / "_generated" / "cli.md", cli_help())
