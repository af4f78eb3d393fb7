"""Pages the site generates at build time, so that they follow the code:

- ``api/outprob*.rst``: one page per public module, listing its public
  names (autosummary writes a page per name under ``api/generated``). A
  public module is every module of the package whose name has no leading
  underscore, except the command line (documented from its own help), and
  every submodule a public module exports (``outprob.reference.metrics``).
  A module's public names are its ``__all__``, or, lacking one, the
  functions and classes it defines whose names have no leading underscore.
- ``_generated/cli.md``: the help of ``outprob`` and every subcommand.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types
from pathlib import Path

HIDDEN = {"cli"}


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
    _write(docs / "_generated" / "cli.md", cli_help())
