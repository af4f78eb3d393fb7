"""
Streaming scores with a drift
=============================

Scores arrive in batches, and halfway through the detector's inlier scores
drift upwards. A scaler fitted on the whole stream (``partial_fit``) keeps
remembering the old level and calls many new inliers outliers; one fitted
on a window of the newest 2000 scores (``window=2000``) follows the drift.
"""

import matplotlib.pyplot as plt
import numpy as np

import outprob

rng = np.random.default_rng(3)
n_batches, size = 40, 250
level = np.where(np.arange(n_batches) < n_batches // 2, 1.0, 4.0)
whole = outprob.GaussianScaler("median", "nmad")
window = outprob.GaussianScaler("median", "nmad", window=2000)
flagged = {"whole stream": [], "window of 2000": []}
for shift in level:
    batch = rng.gamma(4.0, 0.5, size) + shift
    for name, scaler in zip(flagged, (whole, window)):
        scaler.partial_fit(batch)
        flagged[name].append(float(np.mean(scaler.transform(batch) > 0.9)))

fig, ax = plt.subplots(figsize=(7, 3.8), layout="constrained")
for name, share in flagged.items():
    ax.plot(np.arange(n_batches) + 1, share, marker="o", markersize=3, label=name)
ax.axvline(n_batches // 2 + 0.5, color="0.5", linestyle="--", linewidth=0.8)
ax.text(n_batches // 2 + 1, 0.9, "drift", color="0.4")
ax.set_xlabel("batch")
ax.set_ylabel("share of batch with p > 0.9")
ax.set_ylim(0, 1)
ax.legend()
ax.set_title("Inlier scores drift upwards: whole-stream fit against a window")
plt.show()
