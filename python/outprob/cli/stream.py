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
from typing import Any, Callable, Dict, List, Tuple

from ._stream_input import _Report, _reader

NAME = "stream"
HELP = "map a stream of scores (one per line) to probabilities, fitting as it goes"

#: Largest --window, --refit-every and --flush-every.
MAX_SIZE = 2**32
#: Bad lines reported one by one; the rest are counted.


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
    from . import _stream_alerts as stream_alerts

    try:
        if args.map is None and args.window is None:
            # The core's stream, with the online columns and rows when asked.
            return _plain(args, sys.stdin, sys.stdout, batch)
    except BrokenPipeError:
        return _quiet()
    fit = _fitter(args) if args.map is None else _stored(args)
    try:
        if stream_alerts.wanted(args):
            return stream_alerts.run(args, fit, sys.stdin, sys.stdout, batch)
        return _loop(fit, sys.stdin, sys.stdout, batch, args.on_error)
    except BrokenPipeError:
        return _quiet()


def _quiet() -> int:
    """The reader went away (e.g. `| head`): stop quietly, as Unix tools do."""
    import os

    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _stored(args: argparse.Namespace) -> Callable[[Any], Any]:
    """``fit(x)`` of a stored map: its probabilities, nothing fitted."""
    from . import CLIError
    from .scale import load

    given = [o for o, v in (("--window", args.window), ("--refit-every", args.refit_every),
                            ("--lower-is-outlier", args.lower_is_outlier)) if v]
    if given:
        raise CLIError(f"{', '.join(given)} {'does' if len(given) == 1 else 'do'} not apply to "
                       "--map: a stored map is not refitted and keeps the orientation it was "
                       "fitted with")
    transform: Callable[[Any], Any] = load(args.map).transform
    return transform


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


def _plain(args: argparse.Namespace, inp: Any, out: Any, batch: int) -> int:
    """The stream without a window or a stored map: the extension's
    ``TextStream`` reads, fits, maps and writes each batch as ``_loop``
    does with ``_fitter``'s ``fit`` (the same bits), and the online columns
    and rows as ``_stream_alerts.run`` does, without arrays — and so
    without importing NumPy, which costs more than fitting two million
    lines."""
    from outprob import _core
    from outprob._common.fit_warnings import stream_notes

    from . import CLIError
    from . import _stream_alerts as stream_alerts

    read = _reader(inp)
    write = out.buffer.write if hasattr(out, "buffer") else (lambda b: out.write(b.decode()))
    variant = _variant(args)
    options, pending = stream_alerts.core_options(args, read, write)
    linear = variant.center is None
    # StreamingFit's defaults, as _fitter's stream has them.
    spec = _core.GaussianSpec(
        center="mean" if linear else variant.center, scale="std" if linear else variant.scale,
        trim=0.1, ddof=0, maxiter=_MAXITER, tol=_TOL, nan_policy="omit",
        negate=args.lower_is_outlier,
    )
    stream = _core.TextStream(spec=spec, k=args.k, seed=0, linear=linear, **options)
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
        text, lines, bad, stop, fit = stream.step(batch, on_error=args.on_error)
        if not lines:
            return report.close()
        report.add(bad)
        if fit is not None and not linear:
            for category, message in stream_notes(_Fit(fit), variant.scale, _MAXITER, _TOL, ""):
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


def _fitter(args: argparse.Namespace) -> Callable[[Any], Any]:
    """``fit(x)``: adds a batch to the fit and returns its probabilities —
    those of the variant's scaler after ``partial_fit(x)``, computed from
    the same streaming state and the same fitted map without the scaler
    classes (and so without importing scikit-learn)."""
    import numpy as np

    from outprob import _core
    from outprob._common.fit_warnings import stream_notes
    from outprob.streaming._fit import StreamingFit
    from outprob.streaming._state import _streaming_result

    variant = _variant(args)
    negate = args.lower_is_outlier
    # A window refits at every batch unless told otherwise (as partial_fit).
    every = args.refit_every if args.window is None or args.refit_every else 1
    if variant.center is None:
        stream = StreamingFit(scaling="linear", higher_is_outlier=not negate, window=args.window,
                              refit_every=every)
    else:
        stream = StreamingFit(variant.center, variant.scale, higher_is_outlier=not negate,
                              k=args.k, window=args.window, refit_every=every)
    p = stream.params
    shown = set()
    # A sketch is queried only when the core's rule says the last fit no
    # longer stands (contract §9, "Command line": "Refits").
    sketched = variant.center is not None and args.window is None
    last: List[Any] = [None, None]  # n at the last fit, and its map

    def fit(x: Any) -> Any:
        if stream.n == 0 and np.isnan(x).all():
            return x  # nothing to fit yet: missing scores stay missing
        if sketched:
            state = stream.update(x)._state
            assert state is not None  # an update makes the state
            fresh = state.stream_fit(last[0])[0]
            if fresh is None:
                return last[1].transform(x)
            r = _streaming_result(fresh)
        else:
            r = stream.update(x).result()
        if variant.center is None:
            kind, params = "linear", {"min": [r.center], "max": [r.scale]}
        else:
            kind, params = "gaussian", {"center": [r.center], "scale": [r.scale]}
            for category, message in stream_notes(r, variant.scale, p["maxiter"], p["tol"], ""):
                # A stream would repeat a warning at every batch: once is enough.
                if category not in shown:
                    shown.add(category)
                    warnings.showwarning(message, category, "", 0)
        fitted = _core.FittedMap({"kind": kind, "negate": negate, "two_d": False,
                                  "pretransform": None, "params": params, "sorted": None})
        last[:] = [r.n, fitted]
        return fitted.transform(x)

    return fit


def _loop(fit: Callable[[Any], Any], inp: Any, out: Any, batch: int, on_error: str) -> int:
    import numpy as np

    from outprob import _core

    from . import CLIError

    read = _reader(inp)
    write = out.buffer.write if hasattr(out, "buffer") else (lambda b: out.write(b.decode()))
    lines = _core.LineReader()
    report = _Report(on_error)
    while True:
        while not lines.ready(batch):
            data = read()
            if data:
                lines.feed(data)
            else:
                lines.finish()
        first, x, bad = lines.take(batch)
        if not x.size:
            return report.close()
        stop: Tuple[int, str] = (0, "")
        if bad:
            if on_error == "stop":
                stop = bad[0]
                x = x[: stop[0] - first]
            elif on_error == "skip":
                x = np.delete(x, [line - first for line, _ in bad])
            report.add(bad)
        if x.size:
            write(_core.format_lines(fit(x)))
            out.flush()
        if stop[0]:
            raise CLIError(f"standard input, {stop[1]}")
