"""``outprob stream`` with online p-values, an online-FDR decision, a
monitor, and rows that carry an identifier (contract §12, "outprob
stream: p-values, alerts, a monitor").

Kept apart from ``stream.py``'s loop: the core's ``TextStream`` computes
the columns and writes the rows; ``core_options`` gives its keywords for
these flags.
"""

from __future__ import annotations

import argparse
import math
from typing import Any, Callable, Dict, List, Tuple


def _threshold(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be positive and finite, got {text}")
    return value


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {text}")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("online decisions (contract §12)")
    g.add_argument("--pvalues", action="store_true",
                   help="add each score's online conformal p-value: ranked against every earlier "
                        "score, ties broken at random (independent and uniform while the stream "
                        "is exchangeable)")
    g.add_argument("--alert", choices=("lond", "lord++", "saffron", "addis"),
                   help="add a 0/1 column: the online-FDR decision on the p-value, in arrival "
                        "order (FDR <= --alpha at every time)")
    g.add_argument("--alpha", type=_alpha, default=0.05, help="FDR level of --alert (default 0.05)")
    g.add_argument("--monitor", choices=("jumper", "power", "mixture"),
                   help="add ln M of an exchangeability martingale on the p-values and a 0/1 "
                        "alarm column; the martingale restarts after each alarm")
    g.add_argument("--alarm", type=_threshold, default=100.0, metavar="C",
                   help="alarm threshold of --monitor (default 100: a false alarm with "
                        "probability <= 1/C per test)")
    g.add_argument("--seed", type=int, default=0, help="seed of the p-values' tie breaking")
    g.add_argument("--id", action="store_true",
                   help="lines are id<TAB>score: the identifier is written back first")
    g.add_argument("--csv-column", metavar="NAME",
                   help="lines are CSV with a header; the score is column NAME; every row is "
                        "written back with the new columns appended")


def wanted(args: argparse.Namespace) -> bool:
    """Whether any flag of this module was given."""
    return bool(args.pvalues or args.alert or args.monitor or args.id or args.csv_column)


def _names(args: argparse.Namespace) -> List[str]:
    """The added columns' names, in output order (the core's ``OnlineColumns``)."""
    shown = [args.pvalues, args.monitor, args.alert, args.monitor]
    return [n for n, s in zip(("pvalue", "log_martingale", "alert", "alarm"), shown) if s]


def core_options(args: argparse.Namespace, read: Callable[[], bytes],
                 write: Callable[[bytes], Any]) -> Tuple[Dict[str, Any], bytes]:
    """The keywords of the core's ``TextStream`` for these flags, and the
    input read past a CSV header (whose line, with the new columns' names,
    is written first) — what ``run`` reads and writes before its loop."""
    from . import CLIError

    if not wanted(args):
        return {}, b""
    if args.id and args.csv_column:
        raise CLIError("--id and --csv-column are two layouts: give one")
    if not 0 <= args.seed < 2**64:
        # OnlineConformal's check, without importing NumPy.
        raise ValueError(f"seed must be in [0, 2**64), got {args.seed}")
    monitor = None
    if args.monitor is not None:
        from outprob._sequential.martingale import Martingale

        # The public martingale's parameters: its signature holds the defaults.
        monitor = Martingale(args.monitor, threshold=args.alarm, on_alarm="restart").params
    options: Dict[str, Any] = dict(
        pvalues=args.pvalues, alert=args.alert, alpha=args.alpha, monitor=monitor,
        pvalue_seed=args.seed, rows=bool(args.id or args.csv_column),
    )  # fmt: skip
    pending = b""
    if args.csv_column:
        header, pending = _header(read)
        column, delimiter = _layout(header, args.csv_column)
        options.update(column=column, delimiter=delimiter)
        names = bytes([delimiter]).join(n.encode() for n in ["probability", *_names(args)])
        write(header.removeprefix(b"\xef\xbb\xbf") + bytes([delimiter]) + names + b"\n")
    return options, pending


def _header(read: Callable[[], bytes]) -> Tuple[bytes, bytes]:
    """The first line, read whole before any row, and what follows it."""
    from . import CLIError

    pending = b""
    while b"\n" not in pending:
        data = read()
        if not data:
            break
        pending += data
    header, _, pending = pending.partition(b"\n")
    header = header.removesuffix(b"\r")
    if not header.strip():
        raise CLIError("--csv-column: the input has no header line")
    return header, pending


def _layout(header: bytes, column: str) -> Tuple[int, int]:
    from outprob import _core

    layout: Tuple[int, int] = _core.csv_layout(header, column)
    return layout
