"""Turn a stream of outlier scores into outlier probabilities as they come.

Reads one score per line from standard input and writes one probability
per line to standard output. Scores are taken in batches (one line at a
time on a terminal, else --flush-every lines): each batch is added to the
fit (partial_fit) and then mapped, so a score's probability uses every
score up to the end of its batch; the output is flushed after each batch.
Order statistics come from a KLL sketch (see --k); with --window the fit is
exact over the newest scores. A line "nan" is a missing score (its
probability is nan).

A bad line (empty, not a number, infinite, or longer than 4096 bytes) is
reported on standard error with its line number, and --on-error says what
happens to it:
  nan   (default) it is a missing score: its probability is nan, the stream
        goes on; one output line per input line
  skip  it gets no output line, the stream goes on
  stop  every line before it is fitted and written, then the command stops
        with an error (exit status 1)
Only the first 10 bad lines are reported one by one; a last warning counts
them all.

With --map the scores are mapped by a stored fitted map (outprob fit --map)
and nothing is fitted.

Online decisions add columns after the probability: --pvalues (each
score's online conformal p-value against every earlier score), --alert
METHOD (a 0/1 online-FDR decision at --alpha), --monitor KIND (ln M of an
exchangeability martingale and a 0/1 alarm at --alarm). --id reads
id<TAB>score lines and --csv-column NAME a CSV table; both write the
identifier (the whole row) back before the columns.

examples:
  outprob stream --variant mean_nmad < scores.txt > probabilities.txt
  tail -f scores.log | outprob stream --variant median_nmad --window 100000 --flush-every 1
  outprob stream --map fitted.json < new_scores.txt
  outprob stream --id --pvalues --alert lord++ --alpha 0.05 --monitor jumper --alarm 100 < events.tsv
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any, Callable, Dict

from ._stream_input import _Report, _reader

NAME = "stream"
HELP = "map a stream of scores (one per line) to probabilities, fitting as it goes"

#: Largest --window, --refit-every and --flush-every.
MAX_SIZE = 2**32


def size(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse type: an integer in [lo, hi] (a usage error otherwise)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"must be an integer in [{lo}, {hi}], got {text}")
        return value

    return parse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--variant", "-v", default="mean_nmad",
                   help="registered transformation that can be fitted incrementally: linear or a "
                        "Gaussian variant (default: mean_nmad; see outprob.VARIANTS)")
    p.add_argument("--window", type=size(1, MAX_SIZE), metavar="W",
                   help="fit exactly over the newest W scores (W ≤ 2^32)")
    p.add_argument("--refit-every", type=size(1, MAX_SIZE), metavar="N",
                   help="with --window: refit after this many scores (default: every batch)")
    p.add_argument("--k", type=size(8, 65535), default=800,
                   help="KLL sketch size for order statistics, 8..65535 (default 800: rank "
                        "error 0.35%%)")
    p.add_argument("--flush-every", type=size(1, MAX_SIZE), metavar="N",
                   help="batch size: fit, map and flush every N lines (default: 1 on a terminal, "
                        "else 8192)")
    p.add_argument("--on-error", choices=("nan", "skip", "stop"), default="nan",
                   help="a bad line's fate: nan (its probability is nan; default), skip (no "
                        "output line) or stop (exit 1 after writing the lines before it)")
    p.add_argument("--lower-is-outlier", action="store_true", help="lower scores are more outlying")
    p.add_argument("--map", type=Path, metavar="JSON",
                   help="map with this stored fitted map (outprob fit --map); fit nothing")
    from . import _stream_alerts as stream_alerts

    stream_alerts.add_arguments(p)


def run(args: argparse.Namespace) -> int:
    batch = args.flush_every or (1 if sys.stdin.isatty() else 8192)
    try:
        return _stream(args, sys.stdin, sys.stdout, batch)
    except BrokenPipeError:
        return _quiet()


def _quiet() -> int:
    """The reader went away (e.g. `| head`): stop quietly, as Unix tools do."""
    import os

    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _stored(args: argparse.Namespace) -> Any:
    """The core's map of the stored map ``--map`` names: nothing fitted."""
    from . import CLIError
    from .scale import load

    given = [o for o, v in (("--window", args.window), ("--refit-every", args.refit_every),
                            ("--lower-is-outlier", args.lower_is_outlier)) if v]
    if given:
        raise CLIError(f"{', '.join(given)} {'does' if len(given) == 1 else 'do'} not apply to "
                       "--map: a stored map is not refitted and keeps the orientation it was "
                       "fitted with")
    return load(args.map)._map


def _variant(args: argparse.Namespace) -> Any:
    """The streaming variant ``--variant`` names (a usage error otherwise)."""
    from outprob._scalers.paper_variants import VARIANTS

    from . import CLIError

    variant = VARIANTS.get(args.variant)
    if variant is None:
        import outprob

        outprob.scaler(args.variant)  # an unknown name: its error names the known ones
        raise CLIError(
            f"--variant {args.variant} cannot be fitted incrementally; the streaming variants "
            f"are {', '.join(VARIANTS)}"
        )
    return variant


def _stream(args: argparse.Namespace, inp: Any, out: Any, batch: int) -> int:
    """The extension's ``TextStream`` reads, fits (as ``StreamingFit``'s
    ``partial_fit``: a sketch, or ``--window``'s exact fit) or maps by a
    stored map, and writes each batch, with the online columns and rows
    when asked — without arrays, and so without importing NumPy (but for
    a stored map or a monitor), which costs more than fitting two million
    lines."""
    from outprob import _core
    from outprob._common.fit_warnings import stream_notes

    from . import CLIError
    from . import _stream_alerts as stream_alerts

    read = _reader(inp)
    write = out.buffer.write if hasattr(out, "buffer") else (lambda b: out.write(b.decode()))
    scale = None
    if args.map is not None:
        fit: Dict[str, Any] = dict(map=_stored(args))
    else:
        variant = _variant(args)
        linear = variant.center is None
        scale = None if linear else variant.scale
        # StreamingFit's defaults, as partial_fit's stream has them.
        spec = _core.GaussianSpec(
            center="mean" if linear else variant.center, scale="std" if linear else variant.scale,
            trim=0.1, ddof=0, maxiter=_MAXITER, tol=_TOL, nan_policy="omit",
            negate=args.lower_is_outlier,
        )
        fit = dict(spec=spec, linear=linear)
        if args.window is None:
            fit.update(k=args.k, seed=0)
        else:
            # A window refits at every batch unless told otherwise (as partial_fit).
            fit.update(window=args.window, refit_every=args.refit_every or 1)
    options, pending = stream_alerts.core_options(args, read, write)
    stream = _core.TextStream(**fit, **options)
    if pending:
        stream.feed(pending)
    report = _Report(args.on_error)
    shown = set()
    while True:
        while not stream.ready(batch):
            data = read()
            if data:
                stream.feed(data)
            else:
                stream.finish()
        text, lines, bad, stop, fitted = stream.step(batch, on_error=args.on_error)
        if not lines:
            return report.close()
        report.add(bad)
        if fitted is not None and scale is not None:
            for category, message in stream_notes(_Fit(fitted), scale, _MAXITER, _TOL, ""):
                # A stream would repeat a warning at every batch: once is enough.
                if category not in shown:
                    shown.add(category)
                    warnings.showwarning(message, category, "", 0)
        if text:
            write(text)
            out.flush()
        if stop is not None:
            raise CLIError(f"standard input, {stop}")


#: StreamingFit's maxiter and tol (the M-estimates of huber and tukey).
_MAXITER, _TOL = 30, 1e-8


class _Fit:
    """What ``stream_notes`` reads of a fit: the core's result with
    ``converged`` (``StreamingResult``'s, from its M-estimates)."""

    def __init__(self, r: Any) -> None:
        self.center, self.scale, self.scale_used = r.center, r.scale, r.scale_used
        ms = r.m_estimates
        self.converged = all(m.converged for m in ms) if ms else None
