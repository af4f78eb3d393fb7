"""Turn a stream of outlier scores into outlier probabilities as they come.

Reads one score per line from standard input and writes one probability
per line to standard output. Scores are taken in batches (one line at a
time on a terminal, else --flush-every lines): each batch is added to the
fit (partial_fit) and then mapped, so a score's probability uses every
score up to the end of its batch; the output is flushed after each batch.
Order statistics come from a KLL sketch (see --k); with --window the fit is
exact over the newest scores. A line "nan" is a missing score (its
probability is nan); any other line that is not a finite number stops the
stream with an error naming the line.

examples:
  outprob stream --variant mean_nmad < scores.txt > probabilities.txt
  tail -f scores.log | outprob stream --variant median_nmad --window 100000 --flush-every 1
"""

from __future__ import annotations

import argparse
import itertools
import sys
import warnings
from typing import Any, Dict

NAME = "stream"
HELP = "map a stream of scores (one per line) to probabilities, fitting as it goes"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--variant", "-v", default="mean_nmad",
                   help="registered transformation (default: mean_nmad; see outprob.VARIANTS)")
    p.add_argument("--window", type=int, help="fit exactly over the newest WINDOW scores")
    p.add_argument("--refit-every", type=int,
                   help="with --window: refit after this many scores (default: every batch)")
    p.add_argument("--k", type=int, default=800,
                   help="KLL sketch size for order statistics (default 800: rank error 0.35%%)")
    p.add_argument("--flush-every", type=int,
                   help="batch size: fit, map and flush every N lines (default: 1 on a terminal, "
                        "else 8192)")
    p.add_argument("--lower-is-outlier", action="store_true", help="lower scores are more outlying")


def run(args: argparse.Namespace) -> int:
    from . import CLIError

    if args.flush_every is not None and args.flush_every < 1:
        raise CLIError(f"--flush-every must be at least 1, got {args.flush_every}")
    batch = args.flush_every or (1 if sys.stdin.isatty() else 8192)
    model = _model(args)
    try:
        return _loop(model, sys.stdin, sys.stdout, batch)
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, as Unix tools do.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _model(args: argparse.Namespace) -> Any:
    import outprob

    params: Dict[str, Any] = {"higher_is_outlier": not args.lower_is_outlier, "window": args.window,
                    "refit_every": args.refit_every}
    if outprob.VARIANTS.get(args.variant) is not None and outprob.VARIANTS[args.variant].center:
        params["k"] = args.k
    return outprob.scaler(args.variant, **params)


def _loop(model: Any, inp: Any, out: Any, batch: int) -> int:
    import numpy as np

    from ._lines import parse

    line = 1
    warned = set()
    while True:
        lines = list(itertools.islice(inp, batch))
        if not lines:
            return 0
        x = parse(lines, line, "standard input")
        line += len(lines)
        if model.__sklearn_is_fitted__() or not np.isnan(x).all():
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                p = model.partial_fit(x).transform(x)
            for w in caught:
                # A stream would repeat a warning at every batch: once is enough.
                if w.category not in warned:
                    warned.add(w.category)
                    warnings.showwarning(w.message, w.category, w.filename, w.lineno)
        else:
            p = x  # nothing to fit yet: missing scores stay missing
        out.write("\n".join(map(repr, p.tolist())) + "\n")
        out.flush()
