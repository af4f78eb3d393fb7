"""``outprob stream`` with online p-values, an online-FDR decision, a
monitor, and rows that carry an identifier (contract §12, "outprob
stream: p-values, alerts, a monitor").

Kept apart from ``stream.py``'s loop: without these flags ``outprob
stream`` runs that loop and writes exactly what it wrote before.
"""

from __future__ import annotations

import argparse
import math
from typing import Any, Callable, List, Optional, Tuple

from .stream import _Report, _reader

#: Output column names (a CSV header gets them).
NAMES = ("probability", "pvalue", "alert", "log_martingale", "alarm")


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


class _Columns:
    """The §12 state behind the extra columns."""

    def __init__(self, args: argparse.Namespace) -> None:
        from outprob._sequential.martingale import Martingale
        from outprob._sequential.online_fdr import OnlineFDR
        from outprob._sequential.online_pvalues import OnlineConformal

        self.show_p = bool(args.pvalues)
        need_p = self.show_p or args.alert or args.monitor
        self.pv = (OnlineConformal(seed=args.seed, higher_is_outlier=not args.lower_is_outlier)
                   if need_p else None)
        self.fdr = OnlineFDR(args.alert, alpha=args.alpha) if args.alert else None
        self.mon = (Martingale(args.monitor, threshold=args.alarm, on_alarm="restart")
                    if args.monitor else None)

    def names(self) -> List[str]:
        show = [True, self.show_p, self.fdr is not None, self.mon is not None, self.mon is not None]
        return [n for n, s in zip(NAMES, show) if s]

    def compute(self, prob: Any, x: Any) -> Tuple[List[Tuple[Any, int]], List[Any]]:
        import numpy as np

        doubles: List[Tuple[Any, int]] = [(np.ascontiguousarray(prob, dtype=np.float64), 0)]
        flags: List[Any] = []
        if self.pv is None:
            return doubles, flags
        ok = ~np.isnan(x)
        p = np.full(x.size, np.nan)
        p[ok] = self.pv.pvalues(x[ok])
        if self.show_p:
            doubles.append((p, 0))
        if self.fdr is not None:
            alert = np.zeros(x.size, dtype=bool)
            alert[ok] = self.fdr.decide(p[ok])
            flags.append(alert)
        if self.mon is not None:
            steps = self.mon.update(p[ok])
            logm = np.full(x.size, np.nan)
            alarm = np.zeros(x.size, dtype=bool)
            logm[ok], alarm[ok] = steps.log_martingale, steps.alarm
            doubles.append((logm, 0))
            flags.append(alarm)
        return doubles, flags


def run(args: argparse.Namespace, fit: Callable[[Any], Any], inp: Any, out: Any, batch: int) -> int:
    """The loop of ``stream.py`` with the extra columns and row layouts."""
    import numpy as np

    from outprob import _core

    from . import CLIError

    if args.id and args.csv_column:
        raise CLIError("--id and --csv-column are two layouts: give one")
    read = _reader(inp)
    write = out.buffer.write if hasattr(out, "buffer") else (lambda b: out.write(b.decode()))
    cols = _Columns(args)
    delimiter = ord("\t")
    pending = b""
    if args.csv_column:
        # The header: the first line, read whole before any row.
        while b"\n" not in pending:
            data = read()
            if not data:
                break
            pending += data
        header, _, pending = pending.partition(b"\n")
        header = header.removesuffix(b"\r")
        if not header.strip():
            raise CLIError("--csv-column: the input has no header line")
        column, delimiter = _core.csv_layout(header, args.csv_column)
        reader: Any = _core.RowReader(column=column, delimiter=delimiter, first_line=2)
        names = bytes([delimiter]).join(n.encode() for n in cols.names())
        write(header.removeprefix(b"\xef\xbb\xbf") + bytes([delimiter]) + names + b"\n")
    elif args.id:
        reader = _core.RowReader()
    else:
        reader = _core.LineReader()
    if pending:
        reader.feed(pending)
    report = _Report(args.on_error)
    while True:
        while not reader.ready(batch):
            data = read()
            if data:
                reader.feed(data)
            else:
                reader.finish()
        taken = reader.take(batch)
        first, x, bad = taken[0], taken[1], taken[2]
        rows: Optional[Any] = taken[3] if len(taken) > 3 else None
        if not x.size:
            return report.close()
        stop: Tuple[int, str] = (0, "")
        n = x.size
        skip: List[int] = []
        if bad:
            if args.on_error == "stop":
                stop = bad[0]
                cut = stop[0] - first
                skip, x = list(range(cut, n)), x[:cut]
            elif args.on_error == "skip":
                skip = sorted(line - first for line, _ in bad)
            report.add(bad)
        keep = np.ones(x.size, dtype=bool)
        keep[[i for i in skip if i < x.size]] = False
        xs = x[keep]  # the scores that get an output line, in order
        if xs.size:
            prob = fit(xs)
            doubles, flags = cols.compute(prob, xs)
            # Back to one value per row (skipped rows are not written).
            def full(a: Any, fill: Any) -> Any:
                v = np.full(n, fill, dtype=a.dtype)
                v[np.flatnonzero(keep)] = a
                return v

            doubles = [(full(a, np.nan), d) for a, d in doubles]
            flags = [full(f, False) for f in flags]
            write(_core.format_columns(doubles, flags, rows=rows, delimiter=delimiter, skip=skip))
            out.flush()
        if stop[0]:
            raise CLIError(f"standard input, {stop[1]}")
