#!/usr/bin/env python3
"""Conformal p-values with a contaminated calibration set (contract §11),
measured on the shipped datasets.

    .venv/bin/python benches/conformal_contamination.py \
        --out benches/results/DATE-conformal-contamination.md

For each dataset of ``paper/data``, detector (PyOD's IForest and KNN) and
repetition, the rows are split at random, stratified by label, into a fit
part (40 %), a calibration part (30 %) and a test part (30 %). The detector
is fitted on the fit part (outliers included, as in practice) and scores
the other two. Calibration:

* clean — the calibration part's inliers only (needs labels: the ideal);
* contaminated — the whole calibration part (what one has in practice);
* trimmed (auto) — the whole part, ``contamination="auto"``;
* trimmed (true rate) — the whole part, ``contamination`` = its outlier
  fraction (an oracle of the trim).

On the test part: Benjamini–Hochberg at α ∈ {0.05, 0.1, 0.2}, its realised
FDR (the mean false discovery proportion) and power (the mean fraction of
the test outliers selected), and the marginal validity P(p ≤ α) over the
test inliers. Means over datasets × detectors × repetitions.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
ALPHAS = (0.05, 0.1, 0.2)
CALIBRATIONS = ("clean", "contaminated", "trimmed (auto)", "trimmed (true rate)")


def detectors(seed: int) -> dict:
    from pyod.models.iforest import IForest
    from pyod.models.knn import KNN

    return {"IForest": IForest(random_state=seed), "KNN": KNN()}


def one_run(X: np.ndarray, y: np.ndarray, det, seed: int) -> dict:
    import outprob
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    idx = np.arange(len(y))
    fit, rest = train_test_split(idx, train_size=0.4, stratify=y, random_state=seed)
    cal, test = train_test_split(rest, train_size=0.5, stratify=y[rest], random_state=seed)
    scale = StandardScaler().fit(X[fit])
    det.fit(scale.transform(X[fit]))
    s_cal = det.decision_function(scale.transform(X[cal]))
    s_test = det.decision_function(scale.transform(X[test]))
    y_cal, y_test = y[cal], y[test]
    scalers = {
        "clean": (outprob.ConformalScaler(), s_cal[y_cal == 0]),
        "contaminated": (outprob.ConformalScaler(), s_cal),
        "trimmed (auto)": (outprob.ConformalScaler(contamination="auto"), s_cal),
        "trimmed (true rate)": (outprob.ConformalScaler(contamination=float(y_cal.mean())), s_cal),
    }
    out = {}
    for name, (scaler, scores) in scalers.items():
        p = scaler.fit(scores).pvalues(s_test)
        row = {"trimmed": float(np.mean(getattr(scaler, "contamination_", 0.0)))}
        for a in ALPHAS:
            sel = outprob.select(p, a).mask
            n_sel = int(sel.sum())
            row[f"fdp_{a}"] = float(np.sum(sel & (y_test == 0)) / max(1, n_sel))
            row[f"power_{a}"] = float(np.sum(sel & (y_test == 1)) / max(1, int(y_test.sum())))
            row[f"valid_{a}"] = float(np.mean(p[y_test == 0] <= a))
        out[name] = row
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT / "paper" / "data")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    start = time.perf_counter()
    rows = []  # (dataset, detector, rep, calibration, metrics)
    files = sorted(args.data.glob("*.npz"))
    for f in files:
        with np.load(f) as d:
            X, y = d["X"].astype(float), d["y"].astype(int).ravel()
        for rep in range(args.repeats):
            for dname, det in detectors(rep).items():
                for cname, m in one_run(X, y, det, rep).items():
                    rows.append((f.stem, dname, rep, cname, m))
        print(f"{f.stem}: done ({time.perf_counter() - start:.0f} s)", file=sys.stderr, flush=True)

    def mean(cal: str, key: str, dataset: str | None = None) -> float:
        v = [m[key] for ds, _, _, c, m in rows if c == cal and (dataset is None or ds == dataset)]
        return float(np.mean(v))

    n_runs = len({(d, det, r) for d, det, r, _, _ in rows})
    lines = [
        "# Conformal p-values with a contaminated calibration set",
        "",
        f"Command: `{' '.join(['.venv/bin/python', 'benches/conformal_contamination.py', *sys.argv[1:]])}`",
        "",
        f"{len(files)} datasets of `paper/data` × IForest (random_state = repetition) and KNN × "
        f"{args.repeats} random stratified splits (fit 40 % / calibration 30 % / test 30 %) = "
        f"{n_runs} runs; {time.perf_counter() - start:.0f} s. BH on the test part's conformal p-values; "
        "FDR = mean false discovery proportion, power = mean fraction of test outliers selected, "
        "P(p ≤ α | inlier) = fraction of test inliers with p ≤ α. Means over runs.",
        "",
        "| calibration | α | realised FDR | power | P(p ≤ α \\| inlier) | mean trim |",
        "|---|---|---|---|---|---|",
    ]
    for cal in CALIBRATIONS:
        for a in ALPHAS:
            lines.append(f"| {cal} | {a} | {mean(cal, f'fdp_{a}'):.3f} | {mean(cal, f'power_{a}'):.3f} | "
                         f"{mean(cal, f'valid_{a}'):.3f} | {mean(cal, 'trimmed'):.3f} |")
    lines += ["", "Per dataset, α = 0.1 (FDR / power / P(p ≤ α | inlier)):", "",
              "| dataset | " + " | ".join(CALIBRATIONS) + " |", "|---|" + "---|" * len(CALIBRATIONS)]
    for f in files:
        cells = [f"{mean(c, 'fdp_0.1', f.stem):.2f} / {mean(c, 'power_0.1', f.stem):.2f} / "
                 f"{mean(c, 'valid_0.1', f.stem):.2f}" for c in CALIBRATIONS]
        lines.append(f"| {f.stem} | " + " | ".join(cells) + " |")
    lines += ["", f"Machine: {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f} at the end.", ""]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
