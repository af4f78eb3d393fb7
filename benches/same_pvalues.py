#!/usr/bin/env python3
"""The p-values of the contract §11 tail and §13 paths on fixed inputs,
saved to an .npz, so that two builds can be checked bit for bit:

    before/bin/python benches/same_pvalues.py --out /tmp/before.npz
    .venv/bin/python benches/same_pvalues.py --out /tmp/after.npz --compare /tmp/before.npz

Inputs: plain and weighted p-values (classical and randomised ties, both
orientations, float64 and float32) of smooth, tied, long-tailed and
clustered calibration scores; integrative (a, b) pairs with ties and NaN, both orientations, at
sizes on both sides of the parallel threshold; tailed p-values (gpd,
gaussian, gamma) of normal and tied scores; Label-Trim candidates with
ties and NaN.
"""

from __future__ import annotations

import argparse

import numpy as np


def outputs() -> "dict[str, np.ndarray]":
    import outprob

    rng = np.random.default_rng(7)
    out = {}
    for j, (n, k, m) in enumerate([(50, 10, 400), (2_000, 300, 5_000), (20_000, 2_000, 400_000)]):
        for higher in (True, False):
            inl = np.round(rng.normal(size=(n, 2)), 2 if j else 1)
            outl = np.round(rng.normal(2.0, 1.0, size=(k, 2)), 2 if j else 1)
            test = np.round(rng.normal(0.5, 1.3, size=(m, 2)), 2 if j else 1)
            test[rng.random(m) < 0.01, rng.integers(0, 2)] = np.nan
            s = outprob.ConformalScaler(higher_is_outlier=higher).fit(inl, outlier_scores=outl)
            out[f"integrative-{j}-{higher}"] = s.pvalues(test)
            one = outprob.ConformalScaler(higher_is_outlier=higher).fit(inl[:, 0], outlier_scores=outl[:, 0])
            out[f"integrative-1d-{j}-{higher}"] = one.pvalues(test[:, 0])
    for kind in ("gpd", "gaussian", "gamma"):
        for n, m in [(200, 1_000), (100_000, 1_000_000)]:
            cal = rng.normal(size=n)
            x = rng.normal(size=m) * 1.5
            x[:: 97] = np.nan
            out[f"tail-{kind}-{n}"] = outprob.ConformalScaler(tail=kind).fit(cal).pvalues(x)
            out[f"tail-{kind}-{n}-tied"] = outprob.ConformalScaler(tail=kind).fit(np.round(cal, 1)).pvalues(
                np.round(x, 1))
            out[f"tail-{kind}-{n}-low"] = outprob.ConformalScaler(tail=kind, higher_is_outlier=False).fit(
                cal).pvalues(x)
    for n, m in [(1, 1_000), (300, 5_000), (100_000, 1_000_000)]:
        # Plain and weighted p-values of smooth, tied, long-tailed and
        # clustered calibration scores (the index's buckets at each shape).
        shapes = {"normal": rng.normal(size=n), "tied": np.round(rng.normal(size=n), 1),
                  "pareto": rng.pareto(1.5, size=n), "far": np.r_[rng.normal(size=n - 1), 1e200],
                  "zeros": np.where(rng.random(n) < 0.5, 0.0, rng.normal(size=n) * 1e-300)}
        for name, cal in shapes.items():
            x = np.r_[rng.choice(cal, m // 2), rng.normal(size=m - m // 2) * 2.0]
            x[:: 89] = np.nan
            x[1:: 97] = np.inf
            for higher in (True, False):
                for ties in ("classical", "randomized"):
                    s = outprob.ConformalScaler(tie_break=ties, seed=3, higher_is_outlier=higher).fit(cal)
                    out[f"plain-{name}-{n}-{higher}-{ties}"] = s.pvalues(x)
                    with np.errstate(over="ignore"):  # 1e200 → inf in float32
                        x32 = x.astype(np.float32)
                    out[f"plain32-{name}-{n}-{higher}-{ties}"] = s.pvalues(x32)
                w, wx = rng.gamma(2.0, 0.5, size=n), rng.gamma(2.0, 0.5, size=m)
                s = outprob.ConformalScaler(higher_is_outlier=higher).fit(cal, weights=w)
                out[f"weighted-{name}-{n}-{higher}"] = s.pvalues(x, weights=wx)
    for n in (10, 1_000, 100_000):
        s = np.round(rng.normal(size=n), 1)
        s[rng.random(n) < 0.02] = np.nan
        for budget in (0, 1, n // 10, n // 2, n, n + 5):
            out[f"trim-{n}-{budget}"] = outprob.label_trim_candidates(s, budget)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--compare")
    args = ap.parse_args()
    got = outputs()
    np.savez(args.out, **got)
    if args.compare:
        ref = np.load(args.compare)
        assert sorted(ref.files) == sorted(got), "different sets of outputs"
        bad = [k for k in ref.files
               if ref[k].dtype != got[k].dtype or ref[k].shape != got[k].shape
               or ref[k].tobytes() != got[k].tobytes()]
        total = sum(v.size for v in got.values())
        print(f"{len(got)} outputs, {total:,} values: "
              + ("bit for bit equal" if not bad else f"DIFFERENT: {bad}"))
        raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
