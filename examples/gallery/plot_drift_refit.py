"""
Alarms, a refit, and online FDR on a drifting stream
====================================================

A detector's scores arrive one by one. At score 4000 the inliers drift
upwards. :class:`outprob.RefitOnDrift` ranks each score against the
earlier ones (online conformal p-values), bets against exchangeability
with a martingale, and when it crosses 100 (a false alarm has probability
at most 1/100) refits the robust Gaussian scaler (median, nMAD) on the
2000 scores after the alarm. An online FDR rule (LORD++, α = 0.1) decides
on each score's Gaussian tail p-value (1 − P)/2 as it arrives: with the
stale fit the drifted inliers become false discoveries; after the refit
they stop.

The tail p-value is valid here because the inlier scores are Gaussian.
Conformal p-values need no such model, but they are never below
1/(n + 1) for n calibration scores, while online FDR rules test the first
scores at levels near α/10 · 0.07/t: they find outliers only with very
large calibration sets.
"""

import matplotlib.pyplot as plt
import numpy as np

import outprob

rng = np.random.default_rng(11)
n, drift, rate = 10_000, 4_000, 0.01
truth = rng.uniform(size=n) < rate  # the outliers
level = np.where(np.arange(n) < drift, 0.0, 1.5)
scores = rng.normal(size=n) + level + np.where(truth, 5.0, 0.0)
reference = rng.normal(size=5_000)  # clean scores before the stream

static = outprob.GaussianScaler("median", "nmad").fit(reference)
policy = outprob.RefitOnDrift(outprob.GaussianScaler("median", "nmad").fit(reference),
                              window=2_000)
steps = policy.update(scores)
alarms = [e.index for e in policy.events if e.kind == "alarm"]
refits = [e.index for e in policy.events if e.kind == "refit"]

found = {}
for name, prob in (("static fit", static.transform(scores)),
                   ("refit on alarm", steps.output)):
    # P = erf(z/√2) above the center, so the upper tail is (1 − P)/2.
    found[name] = outprob.OnlineFDR("lord++", alpha=0.1).decide((1.0 - prob) / 2)

fig, axes = plt.subplots(3, 1, figsize=(7.5, 8), sharex=True, layout="constrained")
t = np.arange(n)
ax = axes[0]
ax.scatter(t[~truth], scores[~truth], s=1, color="0.6", label="inliers")
ax.scatter(t[truth], scores[truth], s=4, color="C3", label="outliers")
ax.set_ylabel("score")
ax.legend(loc="upper left", markerscale=3)
ax = axes[1]
ax.plot(t, steps.log_martingale / np.log(10), color="C0", linewidth=0.8)
ax.axhline(2, color="C3", linestyle=":", linewidth=0.8)
ax.text(50, 2.1, "alarm at M = 100", color="C3")
ax.set_ylabel("log10 martingale")
ax = axes[2]
for (name, rejected), color in zip(found.items(), ("C1", "C2")):
    ax.plot(t, np.cumsum(rejected & ~truth), color=color, label=f"{name}: false")
    ax.plot(t, np.cumsum(rejected & truth), color=color, linestyle="--",
            label=f"{name}: true")
ax.set_ylabel("discoveries so far")
ax.set_xlabel("score position")
ax.legend(loc="upper left", fontsize=8)
for ax in axes:
    ax.axvline(drift, color="0.3", linestyle="--", linewidth=0.8)
    for a in alarms:
        ax.axvline(a, color="C3", linewidth=0.8)
    for r in refits:
        ax.axvline(r, color="C2", linewidth=0.8)
axes[0].set_title("drift (dashed), alarm (red) and refit (green)")
plt.show()
