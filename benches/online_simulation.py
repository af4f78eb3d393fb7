"""Simulation study of the online decisions (contract §12, issue "simulation study").

Measures, with outprob's public API only:

1. false-alarm rate of each exchangeability martingale (jumper, power,
   mixture) at thresholds 20 and 100 on streams of i.i.d. uniform p-values
   and of online conformal p-values of i.i.d. N(0, 1) scores — Ville's
   inequality bounds it by 1/threshold;
2. FDR and power of LORD++, SAFFRON, ADDIS and LOND at α = 0.05 and 0.1,
   against Benjamini–Hochberg on the whole batch, with Monte Carlo standard
   errors (10 % non-nulls, z ~ N(3, 1), one-sided p = Φ(−z));
3. detection delay of a jumper martingale at threshold 100 fed with online
   conformal p-values after a mean shift N(0, 1) → N(1.5, 1) at step 500.

Run: ``nice -n 10 python benches/online_simulation.py [--quick]``; the
results are printed as Markdown tables.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time

import numpy as np
from scipy.special import ndtr

import outprob

KINDS = ("jumper", "power", "mixture")
THRESHOLDS = (20.0, 100.0)
METHODS = ("lord++", "saffron", "addis", "lond")


def _binom_se(k: int, n: int) -> float:
    p = k / n
    return math.sqrt(p * (1 - p) / n)


def false_alarms(runs: int, steps: int, seed: int) -> list[tuple[str, str, float, int, int]]:
    """Count streams whose martingale ever reaches each threshold (sup_t M_t ≥ c)."""
    rng = np.random.default_rng(seed)
    counts = {(src, k, c): 0 for src in ("uniform", "conformal") for k in KINDS for c in THRESHOLDS}
    logc = {c: math.log(c) for c in THRESHOLDS}
    for r in range(runs):
        uniform = rng.random(steps)
        scores = rng.standard_normal(steps)
        conformal = outprob.OnlineConformal(seed=seed * 100_003 + r).pvalues(scores)
        for src, p in (("uniform", uniform), ("conformal", conformal)):
            for kind in KINDS:
                peak = float(np.max(outprob.Martingale(kind, threshold=None).update(p).log_martingale))
                for c in THRESHOLDS:
                    counts[(src, kind, c)] += peak >= logc[c]
    return [(src, kind, c, counts[(src, kind, c)], runs) for (src, kind, c) in counts]


def online_fdr(reps: int, m: int, pi1: float, mu: float, seed: int) -> dict[tuple[str, float], np.ndarray]:
    """Per-replication (FDP, TPP) of each online rule and of BH on the batch."""
    rng = np.random.default_rng(seed)
    out: dict[tuple[str, float], list[tuple[float, float]]] = {}
    for _ in range(reps):
        alt = rng.random(m) < pi1
        z = rng.standard_normal(m) + mu * alt
        p = ndtr(-z)
        n_alt = max(int(alt.sum()), 1)
        for alpha in (0.05, 0.1):
            flags = {meth: np.asarray(outprob.OnlineFDR(meth, alpha=alpha).decide(p), dtype=bool) for meth in METHODS}
            bh = np.zeros(m, dtype=bool)
            bh[outprob.select(p, alpha=alpha, method="bh").indices] = True
            flags["BH (batch)"] = bh
            for name, f in flags.items():
                d = int(f.sum())
                fdp = float((f & ~alt).sum()) / max(d, 1)
                tpp = float((f & alt).sum()) / n_alt
                out.setdefault((name, alpha), []).append((fdp, tpp))
    return {k: np.asarray(v) for k, v in out.items()}


def detection_delay(runs: int, before: int, after: int, shift: float, threshold: float, seed: int):
    """Delay from the change to the first alarm of a jumper on online conformal p-values."""
    rng = np.random.default_rng(seed)
    delays = np.full(runs, np.inf)
    early = np.zeros(runs, dtype=bool)
    for r in range(runs):
        scores = np.r_[rng.standard_normal(before), rng.standard_normal(after) + shift]
        p = outprob.OnlineConformal(seed=seed * 100_003 + r).pvalues(scores)
        alarm = np.asarray(outprob.Martingale("jumper", threshold=threshold).update(p).alarm, dtype=bool)
        hits = np.flatnonzero(alarm)
        if hits.size == 0:
            continue
        first = int(hits[0])
        if first < before:
            early[r] = True     # a false alarm before the change: counted apart, no delay
            continue
        delays[r] = first - before + 1
    return delays, early


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10000, help="streams per martingale cell")
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--fdr-reps", type=int, default=2000)
    ap.add_argument("--fdr-m", type=int, default=2000)
    ap.add_argument("--delay-runs", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=20261207)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke test")
    a = ap.parse_args()
    if a.quick:
        a.runs, a.steps, a.fdr_reps, a.fdr_m, a.delay_runs = 50, 500, 20, 500, 20

    print(f"Python {platform.python_version()}; numpy {np.__version__}; outprob from "
          f"{os.path.dirname(outprob.__file__)}; {os.cpu_count()} logical cores; "
          f"load average at start {os.getloadavg()[0]:.2f}; seed {a.seed}; argv {sys.argv[1:]}\n")
    t0 = time.perf_counter()
    rows = false_alarms(a.runs, a.steps, a.seed)
    t1 = time.perf_counter()
    print(f"## 1. False alarms: {a.runs} streams × {a.steps} steps ({t1 - t0:.1f} s)\n")
    print("| p-values | martingale | threshold c | alarms | rate ± s.e. | Ville bound 1/c |")
    print("|---|---|---:|---:|---:|---:|")
    for src, kind, c, k, n in rows:
        print(f"| {src} | {kind} | {c:g} | {k} | {k / n:.4f} ± {_binom_se(k, n):.4f} | {1 / c:.3f} |")

    res = online_fdr(a.fdr_reps, a.fdr_m, 0.1, 3.0, a.seed + 1)
    t2 = time.perf_counter()
    print(f"\n## 2. Online FDR: {a.fdr_reps} replications × {a.fdr_m} p-values, "
          f"10 % non-nulls z ~ N(3, 1), p = Φ(−z) ({t2 - t1:.1f} s)\n")
    print("| α | method | FDR ± s.e. | power ± s.e. | mean power / BH's |")
    print("|---:|---|---:|---:|---:|")
    for alpha in (0.05, 0.1):
        bh_power = res[("BH (batch)", alpha)][:, 1].mean()
        for name in (*METHODS, "BH (batch)"):
            v = res[(name, alpha)]
            se = v.std(axis=0, ddof=1) / math.sqrt(len(v))
            mean = v.mean(axis=0)
            print(f"| {alpha:g} | {name} | {mean[0]:.4f} ± {se[0]:.4f} | {mean[1]:.4f} ± {se[1]:.4f} "
                  f"| {mean[1] / bh_power:.3f} |")

    before, after = 500, 1500
    delays, early = detection_delay(a.delay_runs, before, after, 1.5, 100.0, a.seed + 2)
    t3 = time.perf_counter()
    clean = delays[~early]      # runs without a false alarm before the change; ∞ = never detected
    n_early = int(early.sum())
    detected = int(np.isfinite(clean).sum())
    within = int(np.sum(clean <= 1000))
    print(f"\n## 3. Detection delay: {a.delay_runs} runs, N(0, 1) → N(1.5, 1) at step {before}, "
          f"jumper on online conformal p-values, threshold 100 ({t3 - t2:.1f} s)\n")
    print("| runs | false alarm before change | detected (of the rest) | within 1000 steps | "
          "delay Q1 | median | Q3 |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    # "lower" keeps the quartiles order statistics, so an undetected run (∞) never enters arithmetic
    q = np.quantile(clean, [0.25, 0.5, 0.75], method="lower")
    print(f"| {a.delay_runs} | {n_early} | {detected} / {clean.size} | "
          f"{within / clean.size:.3f} | {q[0]:.0f} | {q[1]:.0f} | {q[2]:.0f} |")
    print(f"\nMean delay over detected runs {np.mean(clean[np.isfinite(clean)]):.1f}; delay 1 = alarm on the "
          "first post-change score; undetected runs count as ∞ in the quartiles.")
    print(f"\ntotal {t3 - t0:.1f} s")


if __name__ == "__main__":
    main()
