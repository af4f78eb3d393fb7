"""
Reliability diagram: GS against robust scaling
==============================================

A reliability diagram bins the probabilities and plots, for each bin, the
fraction of true outliers against the mean probability: calibrated
probabilities lie on the diagonal. Here a kNN-like score set with 5% of
outliers is scaled by classic Gaussian scaling (``mean_std``) and by its
robust variant with the nMAD as scale (``mean_nmad``).
"""

import matplotlib.pyplot as plt
import numpy as np

import outprob
from outprob import metrics, plot

rng = np.random.default_rng(7)
inliers = rng.gamma(3.0, 1.0, 950)
outliers = rng.normal(9.0, 2.0, 50)
scores = np.r_[inliers, outliers]
y = np.r_[np.zeros(950, int), np.ones(50, int)]

probabilities = {
    "mean_std (GS)": outprob.scaler("mean_std").fit_transform(scores),
    "mean_nmad": outprob.scaler("mean_nmad").fit_transform(scores),
}
fig = plot.reliability_diagram(y, probabilities, n_bins=10)
plt.show()

# %%
# The robust scale gives the outliers probabilities near 1 and leaves fewer
# of them in the middle bins; the Brier skill score of the outliers says by
# how much their probabilities improved over GS (> 0: better).
skill = metrics.skill_score(y, probabilities["mean_nmad"], probabilities["mean_std (GS)"],
                            stratify="outlier")
print(f"Brier skill of mean_nmad against GS, outliers: {skill:+.3f}")
