"""
GS against every robust variant on a real dataset
=================================================

Isolation Forest on the Cardiotocography dataset (ADBench's version, from
``paper/data``): the outliers' and the inliers' Brier score, sharpness,
refinement and calibration errors for GS (``mean_std``) and for every
robust variant of the paper. Lower is better. The robust variants lower
the outliers' Brier score and raise the inliers'; the calibration error
grows for both — the trade-off the paper reports.
"""

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from pyod.models.iforest import IForest

import outprob
from outprob import experiment, metrics

here = Path.cwd()
data = next(p / "paper" / "data" for p in (here, *here.parents) if (p / "paper" / "data").is_dir())
ctg = experiment.load_dataset(data / "Cardiotocography.npz")
scores = IForest(random_state=0).fit(ctg.X).decision_scores_

names = [v for v in outprob.VARIANTS if v != "linear"]
measures = ["brier_score", "sharpness_error", "refinement_error", "calibration_error"]
errors = {cls: np.empty((len(names), len(measures))) for cls in ("outlier", "inlier")}
for i, name in enumerate(names):
    p = outprob.scaler(name, maxiter=100).fit_transform(scores) if name in ("huber", "tukey") \
        else outprob.scaler(name).fit_transform(scores)
    for j, measure in enumerate(measures):
        fn = getattr(metrics, measure)
        for cls in errors:
            errors[cls][i, j] = fn(ctg.y, p, stratify=cls)

fig, axes = plt.subplots(1, 2, figsize=(10, 4.8), sharey=True, layout="constrained")
x = np.arange(len(measures))
width = 0.8 / len(names)
for ax, cls in zip(axes, errors):
    for i, name in enumerate(names):
        ax.bar(x + (i - len(names) / 2 + 0.5) * width, errors[cls][i], width,
               label=name, color="black" if name == "mean_std" else plt.cm.viridis(i / len(names)))
    ax.set_xticks(x, ["Brier", "sharpness", "refinement", "calibration"])
    ax.set_title(f"{cls}s ({int((ctg.y == (cls == 'outlier')).sum())})")
axes[0].set_ylabel("error (lower is better)")
axes[1].legend(fontsize=7, ncols=2, loc="upper right")
fig.suptitle(f"Isolation Forest on {ctg.name}: GS (black) against the robust variants")
plt.show()
