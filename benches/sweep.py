#!/usr/bin/env python3
"""outprob at every size: a size sweep, per-call latency, and a log–log plot.

    python benches/sweep.py                       # N = 1e2 … 1e7, float64, one thread
    python benches/sweep.py --large               # adds N = 1e8
    python benches/sweep.py --quick               # fewer, shorter timed runs
    python benches/sweep.py --only tukey --sizes 1e2,1e4
    python benches/sweep.py --only "fit_transform huber,fit_transform tukey,median_nmad"   # M-estimation table alone
    python benches/sweep.py --markdown --plot benches/results/sweep.png

Three sections, all measured in one run with the timing of ``compare.py``
(alternating runs of outprob and its baseline, medians, garbage collector
off; see its docstring):

1. **Size sweep**: ``fit_transform`` of every variant, the two
   M-estimates and the Gaussian transform at every N, each against the
   NumPy/SciPy/statsmodels expression a user would write (the operations of
   ``operations.py``), in ns per score. The M-estimates also by their
   direct path (every score read at every step, the reference the fast
   paths are tested against; ``docs/design/m-estimation.md``).
2. **M-estimation against median_nmad**: the time of a Huber/Tukey fit
   over that of a ``median_nmad`` fit of the same scores at each N (goal
   ≤ 3×), and whether the time per call grows monotonically with N.
3. **Per-call latency**: ``transform`` of 1, 10, 100 and 1000 scores and
   ``fit_transform`` of 100 scores, in µs per call, against the NumPy
   expression (small batches are where fixed costs show).

``--plot`` writes ns per score against N on log–log axes, outprob and its
baseline per operation, one panel per operation.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from functools import partial
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
from scipy.special import erf

import baselines
import compare
from operations import OPERATIONS, Case, Operation, fmt_n, m_estimate_check

import outprob
from outprob import _core

SIZES = "1e2,1e3,1e4,1e5,1e6,1e7"
BATCHES = (1, 10, 100, 1000)
#: The goal of issue #11: an M-estimate costs at most this many
#: ``median_nmad`` fits of the same scores.
M_OVER_MEDIAN_NMAD = 3.0


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    argv = list(argv if argv is not None else sys.argv[1:])
    sweep = argparse.ArgumentParser(add_help=False)
    sweep.add_argument("--no-latency", action="store_true")
    own, rest = sweep.parse_known_args(argv)
    if "--sizes" not in " ".join(rest):
        rest = ["--sizes", SIZES, *rest]
    if "--dtypes" not in " ".join(rest):
        rest = ["--dtypes", "float64", *rest]
    args = compare.parse_args([*rest, "--no-memory", "--threads", "1"])
    args.no_latency = own.no_latency
    return args


def _direct_m_estimate(norm: str, case: Case, threads: int) -> _core.MEstimate:
    return _core.m_estimate(
        case.x, norm=norm, c=1.5, tuning=None, maxiter=baselines.MAXITER, tol=1e-8,
        nan_policy="omit", threads=threads, direct=True,
    )


#: The M-estimates by the direct path, against the same baseline.
DIRECT_PATH = tuple(
    Operation(
        f"{norm} fit (direct path)", partial(_direct_m_estimate, norm), f"statsmodels Huber({kind})",
        lambda c, norm=norm: baselines.m_estimate(c.x, norm), m_estimate_check, slow_baseline=True,
    )
    for norm, kind in (("huber", "HuberT"), ("tukey", "TukeyBiweight"))
)


def swept(op: Operation) -> bool:
    """The operations of the sweep: every fit_transform, the M-estimates,
    and the transform against the NumPy expression (not against the
    floor)."""
    return (
        op.name.startswith("fit_transform")
        or op.name.endswith(("(m_estimate)", "(direct path)"))
        or (op.name.startswith("gaussian transform") and "floor" not in op.baseline_name)
    )


def sweep_table(args: argparse.Namespace) -> List[compare.Row]:
    bench = compare.Bench(args)
    rows: List[compare.Row] = []
    ops = [*OPERATIONS, *DIRECT_PATH]
    chosen = [op for op in ops if swept(op) and compare.selected(op.name, args.only)]
    for n in args.sizes:
        bench.drop_cases(n)
        for dtype in args.dtypes:
            for op in chosen:
                row = bench.row(op, bench.case(op.size(n), dtype))
                compare.report_row(row)
                rows.append(row)
    return rows


def m_estimate_lines(rows: List[compare.Row], args: argparse.Namespace) -> List[str]:
    """M-estimate fit_transform / median_nmad fit_transform per N, and
    monotonicity of the time per call."""
    by: Dict[Tuple[str, str], Dict[int, float]] = {}
    for r in rows:
        if r.ours is not None:
            by.setdefault((r.op.name, r.dtype), {})[r.n] = r.ours.seconds
    headers = ["variant", "dtype", *(f"N={fmt_n(n)}" for n in args.sizes), "monotone in N?"]
    cells = []
    for (name, dtype), times in sorted(by.items()):
        if not name.startswith("fit_transform") or name.split()[-1] not in ("huber", "tukey"):
            continue
        ref = by.get(("fit_transform median_nmad", dtype), {})
        ratios = [
            f"{times[n] / ref[n]:.1f}x" + ("" if times[n] / ref[n] <= M_OVER_MEDIAN_NMAD else " !")
            if n in times and n in ref else "–"
            for n in args.sizes
        ]
        seq = [times[n] for n in args.sizes if n in times]
        monotone = all(b >= a for a, b in zip(seq, seq[1:]))
        cells.append([name.split()[-1], dtype, *ratios, "yes" if monotone else "NO"])
    if not cells:
        return []
    return [
        compare.render(headers, cells, args.markdown),
        "",
        f"time of the M-estimate's fit_transform over median_nmad's (goal <= {M_OVER_MEDIAN_NMAD:g}x; "
        "'!' marks a miss); monotone: time per call never falls as N grows",
    ]


def _numpy_transform(x: np.ndarray, mu: float, sigma: float) -> np.ndarray:
    return np.maximum(0.0, erf((x - mu) / (sigma * np.sqrt(2.0))))


def latency_lines(args: argparse.Namespace) -> List[str]:
    """µs per call of small transforms and fit_transforms, ours and NumPy's."""
    case = Case.make(max(BATCHES), "float64")
    fitted = outprob.scaler("mean_nmad").fit(case.x)
    mu, sigma = float(fitted.center_), float(fitted.scale_)
    calls: List[Tuple[str, Callable[[], object], str, Callable[[], object]]] = []
    for m in BATCHES:
        x = np.ascontiguousarray(case.x[:m])
        calls.append((f"transform, {m} score(s)", lambda x=x: fitted.transform(x),
                      "np.maximum(0, erf(...))", lambda x=x: _numpy_transform(x, mu, sigma)))
    x100 = np.ascontiguousarray(case.x[:100])
    for name in outprob.VARIANTS:
        if compare.selected(name, args.only) and name not in ("huber", "tukey"):
            s = outprob.scaler(name)
            calls.append((f"fit_transform {name}, 100 scores", lambda s=s: s.fit_transform(x100),
                          "NumPy/SciPy", lambda name=name: baselines.variant_fit_transform(name, x100)))
    cells = []
    for label, ours, base_name, base in calls:
        a, b = compare.measure_pair(compare._plan(ours, args), compare._plan(base, args), args)
        compare.progress(f"  {label}: ours {a.seconds * 1e6:.2f} µs, {base_name} {b.seconds * 1e6:.2f} µs")
        cells.append([label, f"{a.seconds * 1e6:.2f}", base_name, f"{b.seconds * 1e6:.2f}",
                      compare.ratio_text(b.seconds / a.seconds)])
    headers = ["call", "ours µs/call", "baseline", "baseline µs/call", "ratio (baseline/ours)"]
    return [compare.render(headers, cells, args.markdown)]


def plot(rows: List[compare.Row], path: str) -> None:
    """ns per score against N, log–log, one panel per operation: outprob
    solid, its baseline dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(r.op.name for r in rows))
    cols = 4
    nrows = -(-len(names) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4 * cols, 3.2 * nrows), squeeze=False, sharex=True)
    for ax, name in zip(axes.ravel(), names):
        mine = [r for r in rows if r.op.name == name and r.dtype == "float64"]
        for what, style in (("ours", "-o"), ("base", "--s")):
            pts = [(r.n, getattr(r, what).ns_per_element(r.n)) for r in mine if getattr(r, what) is not None]
            if pts:
                label = "outprob" if what == "ours" else mine[0].op.baseline_name
                ax.plot(*zip(*pts), style, ms=3, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(name, fontsize=9)
        ax.legend(fontsize=6)
        ax.grid(True, which="major", lw=0.3)
    for ax in axes.ravel()[len(names):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("N (scores)")
    for ax in axes[:, 0]:
        ax.set_ylabel("ns per score")
    fig.suptitle("outprob (one thread) against the NumPy/SciPy/statsmodels expression, float64")
    fig.tight_layout()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.savefig(path, dpi=110)
    compare.progress(f"wrote {path}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    out = ["# outprob size sweep: " + " ".join(["sweep.py", *(argv if argv is not None else sys.argv[1:])])]
    out += compare.machine_info()
    out.append(
        f"sizes {', '.join(map(fmt_n, args.sizes))}; dtypes {', '.join(args.dtypes)}; one thread; "
        f"long-tailed scores (see compare.py); M-estimates with maxiter={baselines.MAXITER}"
    )
    rows = sweep_table(args)
    out += ["", "## Size sweep: ns per score, outprob (1 thread) vs baseline", *compare.comparison_lines(rows, args)]
    m_lines = m_estimate_lines(rows, args)
    if m_lines:
        out += ["", "## M-estimation against a median_nmad fit", *m_lines]
    if not args.no_latency:
        out += ["", "## Per-call latency (small batches)", *latency_lines(args)]
    out.append("")
    out.append(f"wall time: {time.perf_counter() - started:.0f} s")
    print("\n".join(out), flush=True)
    if args.plot and rows:
        plot(rows, args.plot)
    return 1 if any(r.problem for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
