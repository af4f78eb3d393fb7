"""The ``outprob`` command.

Every public module of this package (a name without a leading underscore)
is a subcommand and defines ``NAME``, ``HELP``, ``add_arguments(parser)``
and ``run(args) -> int``; a new command is a new module, nothing else
changes. Errors a user can fix (bad paths, columns, values, a missing
extra) print one line ``outprob CMD: error: ...`` and exit 1; set
``OUTPROB_TRACEBACK=1`` for the full traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from typing import Any, List, Optional, Sequence

__all__ = ["main", "CLIError", "commands"]


class CLIError(Exception):
    """A user error, reported on one line."""


def _names() -> List[str]:
    """The subcommand modules' names: the package's public modules (listed
    from its folder; ``pkgutil.iter_modules`` imports ``inspect``, which
    cost every command's start)."""
    folder = os.path.dirname(__file__)
    return sorted(n[:-3] for n in os.listdir(folder) if n.endswith(".py") and not n.startswith("_"))


def commands(names: Optional[Sequence[str]] = None) -> List[Any]:
    """The subcommand modules (all, or those ``names`` names), by name."""
    mods = [importlib.import_module(f"{__name__}.{name}") for name in names or _names()]
    return sorted(mods, key=lambda m: m.NAME)


class _Version(argparse.Action):
    """``--version``: reads the package metadata only when asked, since
    importing ``importlib.metadata`` costs every command's start (``outprob
    stream``'s first line) about as much as NumPy's import."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str = "show the version and exit"
                 ) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any,
                 option_string: Optional[str] = None) -> None:
        from outprob import __version__

        print(f"outprob {__version__}")
        parser.exit()


def _parser(first: Optional[str] = None) -> argparse.ArgumentParser:
    """The parser of every command, or of the command ``first`` names
    alone (the first argument; a module is a command's name): ``outprob
    stream``'s start need not import the other commands."""
    names = _names()
    parser = argparse.ArgumentParser(
        prog="outprob",
        description="Outlier scores to outlier probabilities by (robust) statistical scaling; "
                    "measure them; reproduce the paper's study.",
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for mod in commands([first] if first in names else names):
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def _one_line_warnings(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
    print(f"outprob: warning: {message}", file=sys.stderr)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run ``outprob ARGS``; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = _parser(argv[0] if argv else None).parse_args(argv)
    warnings.showwarning = _one_line_warnings
    try:
        return int(args._run(args))
    except KeyboardInterrupt as exc:
        print(f"outprob {args.command}: {exc or 'interrupted'}", file=sys.stderr)
        return 130
    except (CLIError, ValueError, TypeError, OSError, ImportError) as exc:
        if os.environ.get("OUTPROB_TRACEBACK"):
            raise
        text = " ".join(str(exc).split()) or type(exc).__name__
        print(f"outprob {args.command}: error: {text}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
