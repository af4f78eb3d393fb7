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
import pkgutil
import sys
import warnings
from typing import Any, List, Optional, Sequence

__all__ = ["main", "CLIError", "commands"]


class CLIError(Exception):
    """A user error, reported on one line."""


def commands() -> List[Any]:
    """The subcommand modules, by name."""
    mods = [importlib.import_module(f"{__name__}.{m.name}")
            for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="outprob",
        description="Outlier scores to outlier probabilities by (robust) statistical scaling; "
                    "measure them; reproduce the paper's study.",
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for mod in commands():
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def _one_line_warnings(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
    print(f"outprob: warning: {message}", file=sys.stderr)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run ``outprob ARGS``; returns the exit status."""
    args = _parser().parse_args(argv)
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
