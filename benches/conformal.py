#!/usr/bin/env python3
"""Conformal p-values and BH selection (contract §11) against their
baselines, measured in the same run, printed as a Markdown report.

    flock /tmp/outprob-bench.lock .venv/bin/python benches/conformal.py \
        --out benches/results/DATE-conformal-MACHINE.md

* p-values of 10⁷ scores against 10⁶ calibration scores: outprob's
  ``ConformalScaler.pvalues`` (threads: all cores, and 1) against the NumPy
  expression ``(1 + n − searchsorted(sorted, x, "left"))/(n + 1)`` and
  nonconform's ``Empirical().compute_p_values`` (run in nonconform's own
  Python ≥ 3.12 environment, ``.venv-nonconform``, made by
  ``scripts/dev.py test``; the same arrays, saved to disk).
* BH on 10⁷ p-values: ``outprob.select`` against statsmodels'
  ``multipletests(method="fdr_bh")``.

Times are the best of ``--repeat`` runs; ratios are baseline / outprob.
``--cpu`` times the CPU time of each process (``time.process_time``; for
outprob on all cores the sum over its threads) instead of wall time: on a
shared machine it shows the cost without the waits for a core.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import best_on, load, report  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

NONCONFORM_TIMER = r"""
import sys, time
import numpy as np
from nonconform import Empirical
cal, x = np.load(sys.argv[1]), np.load(sys.argv[2])
best = float("inf")
clock = getattr(time, sys.argv[5])
for _ in range(int(sys.argv[3])):
    t = clock()
    p = Empirical().compute_p_values(x, cal)
    best = min(best, clock() - t)
np.save(sys.argv[4], p[:1000])
import nonconform
print(best, nonconform.__version__)
"""


#: The clock of every timed run (``--cpu``: ``process_time``).
CLOCK = "perf_counter"


def best_of(fn, repeat):
    return best_on(CLOCK, fn, repeat)




def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n-cal", type=float, default=1e6)
    ap.add_argument("--n-test", type=float, default=1e7)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--cpu", action="store_true", help="CPU time (time.process_time) instead of wall time")
    args = ap.parse_args()
    global CLOCK
    CLOCK = "process_time" if args.cpu else "perf_counter"
    import outprob
    import scipy
    import statsmodels
    from statsmodels.stats.multitest import multipletests

    n_cal, n_test = int(args.n_cal), int(args.n_test)
    rng = np.random.default_rng(0)
    cal, x = rng.normal(size=n_cal), rng.normal(size=n_test) * 1.2
    before = load()
    rows = []

    s = outprob.ConformalScaler().fit(cal)
    srt = np.sort(cal)

    def searchsorted():
        return (1.0 + n_cal - np.searchsorted(srt, x, side="left")) / (n_cal + 1.0)

    ours = s.pvalues(x)
    assert np.array_equal(ours, searchsorted())
    t_np = best_of(searchsorted, args.repeat)
    t_all = best_of(lambda: s.pvalues(x), args.repeat)
    s1 = outprob.ConformalScaler(threads=1).fit(cal)
    t_one = best_of(lambda: s1.pvalues(x), args.repeat)
    t_fit = best_of(lambda: outprob.ConformalScaler().fit(cal), args.repeat)
    t_npsort = best_of(lambda: np.sort(cal), args.repeat)

    nc_python = os.environ.get("OUTPROB_NONCONFORM_PYTHON") or str(ROOT / ".venv-nonconform/bin/python")
    t_nc, nc_version = None, "not run"
    if Path(nc_python).exists():
        with tempfile.TemporaryDirectory() as d:
            paths = [Path(d) / n for n in ("cal.npy", "x.npy", "p.npy")]
            np.save(paths[0], cal)
            np.save(paths[1], x)
            run = subprocess.run([nc_python, "-c", NONCONFORM_TIMER, str(paths[0]), str(paths[1]),
                                  str(args.repeat), str(paths[2]), CLOCK], capture_output=True, text=True,
                                 check=True)
            t_nc, nc_version = float(run.stdout.split()[0]), run.stdout.split()[1]
            assert np.allclose(np.load(paths[2]), ours[:1000], rtol=1e-12, atol=0)

    rows.append(("p-values: outprob, all cores", t_all, "1.00"))
    rows.append(("p-values: outprob, 1 thread", t_one, f"{t_all / t_one:.2f}"))
    rows.append(("p-values: NumPy searchsorted expression", t_np, f"{t_np / t_all:.1f}× (1 thread: {t_np / t_one:.1f}×)"))
    if t_nc is not None:
        rows.append((f"p-values: nonconform {nc_version} Empirical (incl. its sort)", t_nc,
                     f"{t_nc / t_all:.1f}× (1 thread: {t_nc / t_one:.1f}×) vs outprob incl. fit: "
                     f"{t_nc / (t_all + t_fit):.1f}×"))
    rows.append(("fit: outprob ConformalScaler.fit (copy + sort)", t_fit, ""))
    rows.append(("fit: np.sort", t_npsort, ""))

    p = outprob.ConformalScaler().fit(cal).pvalues(np.r_[x[: n_test - n_test // 100], rng.normal(5, 1, n_test // 100)])
    want = multipletests(p, alpha=0.1, method="fdr_bh")[0]
    assert np.array_equal(outprob.select(p, 0.1).mask, want)
    t_sm = best_of(lambda: multipletests(p, alpha=0.1, method="fdr_bh"), max(2, args.repeat // 2))
    t_bh = best_of(lambda: outprob.select(p, 0.1), args.repeat)
    t_bh1 = best_of(lambda: outprob.select(p, 0.1, threads=1), args.repeat)
    rows.append(("BH: outprob.select, all cores", t_bh, "1.00"))
    rows.append(("BH: outprob.select, 1 thread", t_bh1, f"{t_bh / t_bh1:.2f}"))
    rows.append(("BH: statsmodels multipletests fdr_bh", t_sm, f"{t_sm / t_bh:.1f}× (1 thread: {t_sm / t_bh1:.1f}×)"))
    after = load()

    import numpy

    lines = [
        "# Conformal p-values and BH: outprob against its baselines",
        "",
        f"Command: `flock /tmp/outprob-bench.lock {sys.executable} benches/conformal.py "
        f"--n-cal {args.n_cal:g} --n-test {args.n_test:g} --repeat {args.repeat}"
        f"{' --cpu' if args.cpu else ''}`",
        "",
        f"{n_test:,} scores (normal × 1.2) against {n_cal:,} calibration scores (normal); BH on "
        f"{n_test:,} conformal p-values with 1 % outliers. Best of {args.repeat}; ratio = baseline / outprob; "
        f"{'CPU' if args.cpu else 'wall'} seconds.",
        "",
        "| what | seconds | ratio |",
        "|---|---|---|",
        *[f"| {name} | {t:.4f} | {r} |" for name, t, r in rows],
        "",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        f"{platform.platform()}. Python {platform.python_version()}, outprob {outprob.__version__}, "
        f"NumPy {numpy.__version__}, SciPy {scipy.__version__}, statsmodels {statsmodels.__version__}, "
        f"nonconform {nc_version} (its own Python ≥ 3.12 environment).",
        "",
        f"Load average (1, 5, 15 min) before: {before}; after: {after}.",
        "",
    ]
    report(lines, args.out)


if __name__ == "__main__":
    main()
