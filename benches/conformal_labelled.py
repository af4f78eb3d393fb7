#!/usr/bin/env python3
"""The p-value paths of contract §13 against today's conformal p-values
(contract §11) and nonconform, measured in the same run, printed as a
Markdown report.

    flock /tmp/outprob-bench.lock .venv/bin/python benches/conformal_labelled.py \\
        --out benches/results/DATE-conformal-labelled-MACHINE.md

* Label-Trim: ``label_trim_candidates`` + ``fit(exclude=…)`` + ``pvalues``
  against ``fit`` + ``pvalues``; nonconform 2.0.0 has no cleaning module,
  so its equivalent is ``Empirical`` on the kept scores after NumPy drops
  the annotated rows.
* weighted: ``fit(weights=…)`` + ``pvalues(weights=…)`` against the plain
  path and nonconform's ``calculate_weighted_p_val``.
* tails (contract §11): ``ConformalScaler(tail=…)`` fit + ``pvalues``
  against the plain path (nonconform has no equivalent);
* integrative: ``fit(outlier_scores=…)`` + ``pvalues`` against the plain
  path; nonconform's integrative p-values are unreleased (its PR #19,
  ``compute_split_single``, one test point at a time, O(n) each): timed
  only with ``--nonconform-branch DIR``, a directory holding that module
  as ``ncpr/icore.py``, on a smaller problem (``--n-small``). Made from a
  clone of github.com/OliverHennhoefer/nonconform::

      mkdir -p DIR/ncpr && touch DIR/ncpr/__init__.py
      git show 952f679:nonconform/integrative/_core.py \
        | sed 's/^from nonconform.integrative.models import IntegrativeModel/IntegrativeModel = object/' \
        > DIR/ncpr/icore.py

nonconform runs in its own Python ≥ 3.12 environment (``.venv-nonconform``,
made by ``scripts/dev.py test``, or ``OUTPROB_NONCONFORM_PYTHON``) on the
same arrays, saved to disk; each baseline's output is checked equal.
Times are the best of ``--repeat`` runs; ratios are the other / outprob's.
``--cpu`` times the CPU time of each process (``time.process_time``, every
thread) instead of wall time: on a loaded machine the waits for a core
drop out of both sides.
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
from machine import cpu_model  # noqa: E402
from timing import best_on, report  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

#: The clock of every timed run (``--cpu``: ``process_time``).
CLOCK = "perf_counter"


def best(fn, repeat):
    """Seconds on ``CLOCK``: the best of ``repeat`` runs of ``fn``."""
    return best_on(CLOCK, fn, repeat)

TIMER = r"""
import sys, time
import numpy as np
kind, d, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
clock = getattr(time, sys.argv[5])
z = np.load(d + "/in.npz")
if kind == "empirical":
    from nonconform import Empirical
    run = lambda: Empirical().compute_p_values(z["x"], z["cal"][z["keep"]])
elif kind == "weighted":
    from nonconform.scoring import calculate_weighted_p_val
    run = lambda: calculate_weighted_p_val(z["x"], z["cal"], z["wx"], z["wc"], tie_break="classical")
else:
    sys.path.insert(0, sys.argv[4])
    from ncpr import icore
    class M:
        name = "m"
    inl, outl, test = z["inl"], z["outl"], z["test"]
    def run():
        st = icore.SplitState(x_in_train=None, x_in_calib=inl, x_out_train=None, x_out_calib=outl,
                              u0_models=[M()], u1_models=[M()],
                              u0_inlier_calib_scores=-inl[:, 0][None, :],
                              u0_outlier_calib_scores=-outl[:, 0][None, :],
                              u1_inlier_calib_scores=inl[:, 1][None, :],
                              u1_outlier_calib_scores=outl[:, 1][None, :])
        u0, u1 = -test[:, 0][None, :], test[:, 1][None, :]
        return np.array([icore.compute_split_single(st, u0_test_scores=u0, u1_test_scores=u1,
                                                    target_idx=j)[0] for j in range(len(test))])
best = float("inf")
for _ in range(repeat):
    t = clock()
    p = run()
    best = min(best, clock() - t)
np.save(d + "/p.npy", p)
import nonconform
print(best, nonconform.__version__)
"""




def nonconform(python, kind, arrays, repeat, extra=""):
    """Seconds and output of nonconform's ``kind`` on ``arrays``."""
    with tempfile.TemporaryDirectory() as d:
        np.savez(Path(d) / "in.npz", **arrays)
        run = subprocess.run([python, "-c", TIMER, kind, d, str(repeat), extra, CLOCK],
                             capture_output=True, text=True, check=True)
        return float(run.stdout.split()[0]), np.load(Path(d) / "p.npy"), run.stdout.split()[1]


def pairs(rng, n, centre):
    """(a, b) score pairs of 2-D points: distance to the origin, closeness
    to the labelled outliers' centre."""
    x = rng.normal(centre, 1.0, size=(n, 2))
    return np.c_[np.linalg.norm(x, axis=1), -np.linalg.norm(x - 2.5, axis=1)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n-cal", type=float, default=1e6)
    ap.add_argument("--n-test", type=float, default=1e7)
    ap.add_argument("--n-small", type=float, default=2e3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--nonconform-branch", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--cpu", action="store_true", help="CPU time (time.process_time) instead of wall time")
    args = ap.parse_args()
    global CLOCK
    CLOCK = "process_time" if args.cpu else "perf_counter"
    import outprob

    n, m = int(args.n_cal), int(args.n_test)
    rng = np.random.default_rng(0)
    cal, x = rng.normal(size=n), rng.normal(size=m) * 1.2
    before = os.getloadavg()
    py = os.environ.get("OUTPROB_NONCONFORM_PYTHON") or str(ROOT / ".venv-nonconform/bin/python")
    have_nc = Path(py).exists()
    rows = []

    t_plain = best(lambda: outprob.ConformalScaler().fit(cal).pvalues(x), args.repeat)
    rows.append(("plain: fit + pvalues (today's path)", t_plain, "1.00", ""))

    labels = rng.random(n) < 0.05
    cal_c = np.where(labels, cal + 3.0, cal)
    budget = n // 10

    def trim():
        cand = outprob.label_trim_candidates(cal_c, budget)
        return outprob.ConformalScaler().fit(cal_c, exclude=cand[labels[cand]]).pvalues(x)

    p_trim = trim()
    t_trim = best(trim, args.repeat)
    nc_row = ""
    if have_nc:
        cand = outprob.label_trim_candidates(cal_c, budget)
        keep = np.ones(n, bool)
        keep[cand[labels[cand]]] = False
        t_nc, p_nc, version = nonconform(py, "empirical", {"x": x, "cal": cal_c, "keep": keep}, args.repeat)
        assert np.allclose(p_nc, p_trim, rtol=1e-12, atol=0)
        nc_row = f"nonconform {version} Empirical on the kept scores: {t_nc:.3f} s, {t_nc / t_trim:.1f}×"
    rows.append((f"Label-Trim (budget {budget:,}, 5 % contamination): candidates + fit(exclude) + pvalues",
                 t_trim, f"{t_trim / t_plain:.2f}", nc_row))

    wc, wx = rng.gamma(2.0, 0.5, size=n), rng.gamma(2.0, 0.5, size=m)
    p_w = outprob.ConformalScaler().fit(cal, weights=wc).pvalues(x, weights=wx)
    t_w = best(lambda: outprob.ConformalScaler().fit(cal, weights=wc).pvalues(x, weights=wx), args.repeat)
    nc_row = ""
    if have_nc:
        t_nc, p_nc, version = nonconform(py, "weighted", {"x": x, "cal": cal, "wc": wc, "wx": wx}, args.repeat)
        assert np.allclose(p_nc, p_w, rtol=1e-10, atol=0)
        nc_row = f"nonconform {version} calculate_weighted_p_val: {t_nc:.3f} s, {t_nc / t_w:.1f}×"
    rows.append(("weighted: fit(weights) + pvalues(weights)", t_w, f"{t_w / t_plain:.2f}", nc_row))

    inl, outl = pairs(rng, n, 0.0), pairs(rng, n // 10, 2.5)
    test = pairs(rng, m, 0.0)
    t_i = best(lambda: outprob.ConformalScaler().fit(inl, outlier_scores=outl).pvalues(test), args.repeat)
    rows.append((f"integrative: fit({n:,} pairs, {n // 10:,} outliers) + pvalues", t_i,
                 f"{t_i / t_plain:.2f}", ""))

    for kind in ("gpd", "gaussian", "gamma"):
        t_tail = best(lambda: outprob.ConformalScaler(tail=kind).fit(cal).pvalues(x), args.repeat)
        rows.append((f"tail {kind}: fit + pvalues (contract §11)", t_tail, f"{t_tail / t_plain:.2f}", ""))

    small = int(args.n_small)
    s_inl, s_out, s_test = pairs(rng, small, 0.0), pairs(rng, small // 4, 2.5), pairs(rng, small, 0.0)
    s_cal, s_x = s_inl[:, 0], s_test[:, 0]
    t_ps = best(lambda: outprob.ConformalScaler().fit(s_cal).pvalues(s_x), 20 * args.repeat)
    p_is = outprob.ConformalScaler().fit(s_inl, outlier_scores=s_out).pvalues(s_test)
    t_is = best(lambda: outprob.ConformalScaler().fit(s_inl, outlier_scores=s_out).pvalues(s_test), 20 * args.repeat)
    nc_row = "nonconform: not run (no --nonconform-branch)"
    if have_nc and args.nonconform_branch is not None:
        t_nc, p_nc, version = nonconform(py, "integrative", {"inl": s_inl, "outl": s_out, "test": s_test},
                                         1, str(args.nonconform_branch))
        agree = float(np.mean(p_nc == p_is))
        nc_row = (f"nonconform PR #19 compute_split_single (on {version}): {t_nc:.3f} s, {t_nc / t_is:.0f}×; "
                  f"equal p-values {agree:.4f}")
    rows.append((f"integrative, small: {small:,} pairs, {small // 4:,} outliers, {small:,} tests", t_is,
                 f"{t_is / t_ps:.2f} (plain here: {t_ps:.5f} s)", nc_row))
    after = os.getloadavg()

    import numpy

    lines = [
        "# Contract §13 p-value paths: outprob against today's p-values and nonconform",
        "",
        f"Command: `flock /tmp/outprob-bench.lock {sys.executable} benches/conformal_labelled.py "
        f"--n-cal {args.n_cal:g} --n-test {args.n_test:g} --n-small {args.n_small:g} --repeat {args.repeat}"
        + (f" --nonconform-branch {args.nonconform_branch}" if args.nonconform_branch else "")
        + (" --cpu" if args.cpu else "") + "`",
        "",
        f"{m:,} test scores against {n:,} calibration scores (normal; the integrative rows (a, b) pairs "
        f"of 2-D normal points). Best of {args.repeat}, {'CPU' if args.cpu else 'wall'} seconds. Ratio = this path's time / the plain path's "
        "(goal ≤ 2); the last column: the baseline's time and baseline / outprob (goal ≥ 20).",
        "",
        "| path | seconds | / plain | nonconform |",
        "|---|---|---|---|",
        *[f"| {name} | {t:.4f} | {r} | {nc} |" for name, t, r, nc in rows],
        "",
        f"Machine: {cpu_model()}, {os.cpu_count()} cores; "
        f"{platform.platform()}. Python {platform.python_version()}, outprob {outprob.__version__}, "
        f"NumPy {numpy.__version__}.",
        "",
        "Load average (1, 5, 15 min) before: " + " ".join(f"{v:.2f}" for v in before)
        + "; after: " + " ".join(f"{v:.2f}" for v in after) + ".",
        "",
    ]
    report(lines, args.out)


if __name__ == "__main__":
    main()
