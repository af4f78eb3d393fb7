"""
Case study: kNN on Ionosphere
=============================

The paper's Figure 1: a kNN detector's scores on the Ionosphere dataset,
scaled by classic Gaussian scaling (GS, ``mean_std``) and by robust scaling
with the median and the nMAD (``median_nmad``). Panel (a) shows the fitted
normal densities over the scores, (b) the two maps with the outlier
fraction per score bin, (c) the probabilities of inliers and outliers, and
(d) their distributions.
"""

from pathlib import Path

import matplotlib.pyplot as plt
from pyod.models.knn import KNN

from outprob import experiment, plot

here = Path.cwd()
data = next(p / "paper" / "data" for p in (here, *here.parents) if (p / "paper" / "data").is_dir())
ionosphere = experiment.load_dataset(data / "Ionosphere.npz")

detector = KNN(n_neighbors=10).fit(ionosphere.X)
scores = detector.decision_scores_
fig = plot.case_study(scores, ionosphere.y, reference="mean_std", robust="median_nmad",
                      title="kNN (k = 10) on Ionosphere")
plt.show()
