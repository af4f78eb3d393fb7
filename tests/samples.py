"""Fixed example scores shared by the tests of several sections."""

from __future__ import annotations

import numpy as np


def scores(n=200, seed=0):
    """``n`` scores: ``n − 5`` lognormal inliers and 5 outliers in [20, 40]."""
    rng = np.random.default_rng(seed)
    return np.r_[rng.lognormal(size=n - 5), rng.uniform(20, 40, size=5)]
