"""Simulation study of the online decisions (contract §12, issue "simulation study").

Measures, with outprob's public API only:

1. false-alarm rate of each exchangeability martingale (jumper, power,
   mixture) at thresholds 20 and 100 on streams of i.i.d. uniform p-values
   and of online conformal p-values of i.i.d. N(0, 1) scores — Ville's
   inequality bounds it by 1/threshold;
2. FDR and power of LORD++, SAFFRON, ADDIS and LOND at α = 0.05 and 0.1,
   against Benjamini–Hochberg on the whole batch, with Monte Carlo standard
   errors (10 % non-nulls, z ~ N(3, 1), one-sided p = Φ(−z));
3. detection delay after a change of location, scale or outlier rate, for
   each monitor (jumper, power, mixture) and alarm statistic (Ville's on
   the martingale, CUSUM, Shiryaev–Roberts), with the false alarms before
   the change (``online_delays.py``);
4. the false-alarm rate of section 1 on real score sets: detector scores
   (PyOD) of the ODDS datasets, shuffled — exchangeable — through online
   conformal p-values, against 1/threshold with a binomial test
   (``online_real.py``);
5. FDR and power of the online rules against BH on real conformal
   p-values: calibration on a random half's inliers, the other half
   (outliers labelled) the test stream.

Run: ``nice -n 10 python benches/online_simulation.py [--quick] [--out
FILE.md] [--figure FILE.png]``; the results are printed as Markdown tables
(and written to ``--out``); ``--figure`` draws the delays and the real
FDR/power. Needs the ``study`` extra (PyOD) and SciPy.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import ndtr

import online_delays
import online_real
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


def _quartiles(q: tuple) -> str:
    return " | ".join("∞" if math.isinf(v) else ("–" if math.isnan(v) else f"{v:.0f}") for v in q)


def delay_lines(res: dict, runs: int, before: int, after: int, thresholds) -> list[str]:
    lines = ["| change | monitor | statistic | c | false alarms before | detected / rest | "
             "delay Q1 | median | Q3 | mean (detected) |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for shift in online_delays.SHIFTS:
        for kind in online_delays.KINDS:
            for stat in online_delays.STATISTICS:
                for c in thresholds:
                    early, det, rest, q, mean = online_delays.summary(res[(shift, kind, stat, c)])
                    lines.append(f"| {shift} | {kind} | {stat} | {c:g} | {early / runs:.3f} | "
                                 f"{det} / {rest} | {_quartiles(q)} | {mean:.1f} |")
    return lines


def real_alarm_lines(counts: dict, thresholds) -> list[str]:
    lines = ["| martingale | c | streams | alarms | rate ± s.e. | 1/c | P(Bin(n, 1/c) ≥ alarms) |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for kind in online_real.KINDS:
        for c in thresholds:
            k = sum(v[0] for key, v in counts.items() if key[1] == kind and key[2] == c)
            n = sum(v[1] for key, v in counts.items() if key[1] == kind and key[2] == c)
            lines.append(f"| {kind} | {c:g} | {n} | {k} | {k / n:.4f} ± {_binom_se(k, n):.4f} | "
                         f"{1 / c:.3f} | {online_real.binom_tail(k, n, 1 / c):.3f} |")
    datasets = sorted({key[0] for key in counts})
    c = min(thresholds)
    lines += ["", f"Per dataset (all its detectors), c = {c:g}: alarms / streams, and the one-sided "
              "binomial p-value of the worst kind.", "",
              "| dataset | " + " | ".join(online_real.KINDS) + " | min P(Bin ≥ k) |",
              "|---|" + "---:|" * (len(online_real.KINDS) + 1)]
    for ds in datasets:
        cells, pmin = [], 1.0
        for kind in online_real.KINDS:
            k, n = counts[(ds, kind, c)]
            cells.append(f"{k} / {n} ({k / n:.3f})")
            pmin = min(pmin, online_real.binom_tail(k, n, 1 / c))
        lines.append(f"| {ds} | " + " | ".join(cells) + f" | {pmin:.3f} |")
    return lines


def real_fdr_lines(res: dict, alphas) -> list[str]:
    names = (*online_real.METHODS, "BH (batch)")
    lines = ["| α | method | replications | FDR ± s.e. | power ± s.e. | mean power / BH's |",
             "|---:|---|---:|---:|---:|---:|"]
    for alpha in alphas:
        pooled = {m: np.concatenate([v for k, v in res.items() if k[1] == m and k[2] == alpha]) for m in names}
        bh = pooled["BH (batch)"][:, 1].mean()
        for m in names:
            v = pooled[m]
            se = v.std(axis=0, ddof=1) / math.sqrt(len(v))
            mean = v.mean(axis=0)
            ratio = f"{mean[1] / bh:.3f}" if bh > 0 else "–"
            lines.append(f"| {alpha:g} | {m} | {len(v)} | {mean[0]:.4f} ± {se[0]:.4f} | "
                         f"{mean[1]:.4f} ± {se[1]:.4f} | {ratio} |")
    alpha = max(alphas)
    datasets = sorted({k[0] for k in res})
    lines += ["", f"Per dataset (all its detectors), α = {alpha:g}: FDR (power).", "",
              "| dataset | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for ds in datasets:
        cells = [f"{res[(ds, m, alpha)][:, 0].mean():.3f} ({res[(ds, m, alpha)][:, 1].mean():.2f})"
                 for m in names]
        lines.append(f"| {ds} | " + " | ".join(cells) + " |")
    return lines


def figure(path: str, delay: dict, c: float, fdr: dict, alpha: float) -> None:
    """Delay box plots per change (one panel each; monitor × statistic, the
    runs detected within the horizon; the share detected and the share of
    false alarms before the change written under each box) and the
    real-data FDR and power of each rule."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(18, 4.6), gridspec_kw={"width_ratios": [3, 3, 3, 2.2]})
    colours = {"jumper": "tab:blue", "power": "tab:orange", "mixture": "tab:green"}
    short = {"martingale": "M", "cusum": "C", "shiryaev_roberts": "SR"}
    for ax, shift in zip(axes, online_delays.SHIFTS):
        data, labels, cols = [], [], []
        for kind in online_delays.KINDS:
            for stat in online_delays.STATISTICS:
                v = delay[(shift, kind, stat, c)]
                early = float(np.mean(v < 0))
                rest = v[v >= 0]
                found = rest[np.isfinite(rest)]
                share = found.size / max(rest.size, 1)
                data.append(found if found.size else [np.nan])
                labels.append(f"{kind[:3]} {short[stat]}\ndet {share:.0%}\nFA {early:.0%}")
                cols.append(colours[kind])
        bp = ax.boxplot(data, patch_artist=True, showfliers=False, widths=0.6)
        for patch, col in zip(bp["boxes"], cols):
            patch.set_facecolor(col)
            patch.set_alpha(0.5)
        ax.set_xticks(range(1, len(labels) + 1), labels, fontsize=6.5)
        ax.set_yscale("log")
        ax.set_title(f"{shift} change: delay at c = {c:g}", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("scores after the change until the alarm")
    ax = axes[3]
    names = (*online_real.METHODS, "BH (batch)")
    pooled = [np.concatenate([v for k, v in fdr.items() if k[1] == m and k[2] == alpha]).mean(axis=0)
              for m in names]
    xs = np.arange(len(names))
    ax.bar(xs - 0.2, [p[0] for p in pooled], 0.4, label="FDR", color="tab:red", alpha=0.7)
    ax.bar(xs + 0.2, [p[1] for p in pooled], 0.4, label="power", color="tab:gray", alpha=0.7)
    ax.axhline(alpha, color="tab:red", ls="--", lw=1, label="α")
    ax.set_xticks(xs, [n.replace(" (batch)", "") for n in names], fontsize=8)
    ax.set_title(f"real conformal p-values, all score sets, α = {alpha:g}", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10000, help="streams per martingale cell")
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--fdr-reps", type=int, default=2000)
    ap.add_argument("--fdr-m", type=int, default=2000)
    ap.add_argument("--delay-runs", type=int, default=1000)
    ap.add_argument("--real-streams", type=int, default=1000, help="shuffled streams per real score set")
    ap.add_argument("--real-splits", type=int, default=20, help="calibration/test halvings per score set")
    ap.add_argument("--data", default="/work/shared/data/odds", help="folder of the ODDS .npz files")
    ap.add_argument("--datasets", default="", help="comma-separated file stems (default: all)")
    ap.add_argument("--detectors", default=",".join(online_real.DETECTORS))
    ap.add_argument("--seed", type=int, default=20261207)
    ap.add_argument("--out", help="also write the Markdown to this file")
    ap.add_argument("--figure", help="draw the delays and the real FDR/power into this PNG")
    ap.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke test")
    a = ap.parse_args()
    data = Path(a.data)
    if not data.is_dir():
        data = Path(__file__).resolve().parent.parent / "paper" / "data"
    names = [n for n in a.datasets.split(",") if n] or sorted(f.stem for f in data.glob("*.npz"))
    detectors = a.detectors.split(",")
    if a.quick:
        a.runs, a.steps, a.fdr_reps, a.fdr_m, a.delay_runs = 50, 500, 20, 500, 20
        a.real_streams, a.real_splits = 20, 3
        names, detectors = names[:2] if a.datasets else ["Glass", "Stamps"], detectors[:2]
    out: list[str] = []

    def emit(*lines: str) -> None:
        for line in lines:
            print(line, flush=True)
            out.append(line)

    emit(f"Python {platform.python_version()}; numpy {np.__version__}; outprob from "
         f"{os.path.dirname(outprob.__file__)}; {os.cpu_count()} logical cores; "
         f"load average at start {os.getloadavg()[0]:.2f}; seed {a.seed}; argv {sys.argv[1:]}", "")
    t0 = time.perf_counter()
    rows = false_alarms(a.runs, a.steps, a.seed)
    t1 = time.perf_counter()
    emit(f"## 1. False alarms: {a.runs} streams × {a.steps} steps ({t1 - t0:.1f} s)", "",
         "| p-values | martingale | threshold c | alarms | rate ± s.e. | Ville bound 1/c |",
         "|---|---|---:|---:|---:|---:|")
    for src, kind, c, k, n in rows:
        emit(f"| {src} | {kind} | {c:g} | {k} | {k / n:.4f} ± {_binom_se(k, n):.4f} | {1 / c:.3f} |")

    res = online_fdr(a.fdr_reps, a.fdr_m, 0.1, 3.0, a.seed + 1)
    t2 = time.perf_counter()
    emit("", f"## 2. Online FDR: {a.fdr_reps} replications × {a.fdr_m} p-values, "
         f"10 % non-nulls z ~ N(3, 1), p = Φ(−z) ({t2 - t1:.1f} s)", "",
         "| α | method | FDR ± s.e. | power ± s.e. | mean power / BH's |", "|---:|---|---:|---:|---:|")
    for alpha in (0.05, 0.1):
        bh_power = res[("BH (batch)", alpha)][:, 1].mean()
        for name in (*METHODS, "BH (batch)"):
            v = res[(name, alpha)]
            se = v.std(axis=0, ddof=1) / math.sqrt(len(v))
            mean = v.mean(axis=0)
            emit(f"| {alpha:g} | {name} | {mean[0]:.4f} ± {se[0]:.4f} | {mean[1]:.4f} ± {se[1]:.4f} "
                 f"| {mean[1] / bh_power:.3f} |")

    before, after, delay_c = 500, 1500, (100.0, 1000.0)
    delay = online_delays.delays(a.delay_runs, before, after, delay_c, a.seed + 2)
    t3 = time.perf_counter()
    emit("", f"## 3. Detection delay: {a.delay_runs} runs per change, change at step {before + 1}, "
         f"{after} steps after it ({t3 - t2:.1f} s)", "",
         "Scores N(0, 1) with 1 % outliers N(3, 1); after the change the inliers move to N(1, 1) "
         "(location), spread to N(0, 2²) (scale), or the outliers make 10 % (outlier rate). Online "
         "conformal p-values; each monitor with its alarm on each statistic at threshold c. "
         "\"false alarms before\" = share of runs alarming in the 500 steps before the change (no "
         "delay); delay 1 = alarm on the first changed score; quartiles are order statistics over "
         "the rest, ∞ = that share undetected.", "",
         *delay_lines(delay, a.delay_runs, before, after, delay_c))

    emit("", f"Real score sets: datasets {', '.join(names)} from {data}; detectors {', '.join(detectors)}.")
    sets = online_real.score_sets(data, names, detectors, a.seed, log=lambda m: print(m, file=sys.stderr))
    t4 = time.perf_counter()
    thresholds = (20.0, 100.0)
    counts = online_real.false_alarms(sets, a.real_streams, a.steps, thresholds, a.seed + 3)
    t5 = time.perf_counter()
    emit("", f"## 4. False alarms on real score sets: {len(sets)} score sets × {a.real_streams} shuffled "
         f"streams of min(n, {a.steps}) scores (scores {t4 - t3:.1f} s, streams {t5 - t4:.1f} s)", "",
         *real_alarm_lines(counts, thresholds))

    alphas = (0.05, 0.1)
    fdr = online_real.online_fdr(sets, a.real_splits, alphas, a.seed + 4)
    t6 = time.perf_counter()
    emit("", f"## 5. Online FDR on real conformal p-values: {len(sets)} score sets × {a.real_splits} "
         f"halvings ({t6 - t5:.1f} s)", "",
         "Calibration: a random half's inliers (ConformalScaler, default ties); test: the other half, "
         "outliers labelled, in random order; BH on the whole test half.", "",
         *real_fdr_lines(fdr, alphas))
    emit("", f"total {t6 - t0:.1f} s")
    if a.out:
        Path(a.out).write_text("\n".join(out) + "\n", encoding="utf-8")
    if a.figure:
        figure(a.figure, delay, delay_c[-1], fdr, max(alphas))


if __name__ == "__main__":
    main()
