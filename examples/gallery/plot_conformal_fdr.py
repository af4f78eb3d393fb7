"""
Conformal p-values: flagging with a false discovery rate
========================================================

Probabilities above ½ flag the strange scores but promise nothing about how
many of the flagged are inliers. Conformal p-values, calibrated on scores
of inliers, and Benjamini–Hochberg on them do: the expected fraction of
inliers among the flagged (the false discovery rate) stays at most
``alpha``. Here the detector's inlier scores are gamma-distributed, a batch
of 1000 new scores holds 5% outliers, and 1000 clean scores calibrate.
"""

import matplotlib.pyplot as plt
import numpy as np

import outprob

rng = np.random.default_rng(3)


def batch(n_in=950, n_out=50):
    scores = np.r_[rng.gamma(3.0, 1.0, n_in), rng.normal(11.0, 2.0, n_out)]
    return scores, np.r_[np.zeros(n_in, bool), np.ones(n_out, bool)]


calibration = rng.gamma(3.0, 1.0, 1000)
scores, outlier = batch()
p = outprob.ConformalScaler().fit(calibration).pvalues(scores)
alpha = 0.1
selected = outprob.select(p, alpha=alpha)

order = np.argsort(p)
m = len(p)
k = np.arange(1, m + 1)
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
show = 100
left.scatter(k[:show], p[order][:show], s=10, c=np.where(outlier[order][:show], "C3", "C0"))
left.plot(k[:show], alpha * k[:show] / m, "k--", lw=1, label=r"BH line $\alpha k / m$")
left.axvline(len(selected) + 0.5, color="grey", lw=1, label=f"{len(selected)} selected")
left.set(yscale="log", xlabel="rank k of the p-value", ylabel=f"p-value (smallest {show})",
         title="BH at α = 0.1 (red: true outliers)")
left.legend(loc="upper left")

# %%
# Over repeated batches, the fraction of inliers among the flagged (the
# false discovery proportion) averages below ``alpha`` for BH on the
# p-values, whatever ``alpha`` is; "probability > ½" of robust scaling
# fitted on the same calibration scores has no such bound.
alphas = np.array([0.02, 0.05, 0.1, 0.2, 0.3])
reps = 100
bh = np.zeros((reps, len(alphas)))
half = np.zeros(reps)
conformal = outprob.ConformalScaler().fit(calibration)
robust = outprob.scaler("median_nmad").fit(calibration)
for r in range(reps):
    scores, outlier = batch()
    p = conformal.pvalues(scores)
    for j, a in enumerate(alphas):
        mask = outprob.select(p, alpha=a).mask
        bh[r, j] = (mask & ~outlier).sum() / max(mask.sum(), 1)
    flagged = robust.transform(scores) > 0.5
    half[r] = (flagged & ~outlier).sum() / max(flagged.sum(), 1)

right.plot(alphas, bh.mean(axis=0), "o-", label="BH on conformal p-values")
right.plot(alphas, alphas, "k--", lw=1, label="FDR = α")
right.axhline(half.mean(), color="C1", label="median_nmad probability > ½")
right.set(xlabel="α", ylabel=f"mean false discovery proportion ({reps} batches)",
          title="False discovery rate")
right.legend(loc="center right")
fig.tight_layout()
plt.show()

print(f"BH at alpha={alpha}: {len(selected)} flagged; "
      f"mean FDP over {reps} batches {bh[:, 2].mean():.3f}; "
      f"probability > 1/2: {half.mean():.3f}")
