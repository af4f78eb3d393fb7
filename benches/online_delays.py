"""Detection delays after an injected change, for each monitor and alarm
statistic of ``outprob.Martingale`` (contract §12): used by
``online_simulation.py`` (section 3); not a command itself.

Scores are N(0, 1) with 1 % outliers N(3, 1) before the change at step
``before``; after it, one of

- ``location``: the inliers move to N(1, 1);
- ``scale``: the inliers spread to N(0, 2²);
- ``outlier rate``: 10 % outliers instead of 1 %.

The scores go through online conformal p-values to a martingale of each
kind with its alarm on each statistic (Ville's on ln M, CUSUM, Shiryaev–
Roberts) at each threshold; an alarm before the change is a false alarm
(that run has no delay), delay 1 is an alarm on the first changed score.
"""

from __future__ import annotations

from typing import Dict, Sequence, Tuple

import numpy as np

import outprob

KINDS = ("jumper", "power", "mixture")
STATISTICS = ("martingale", "cusum", "shiryaev_roberts")
SHIFTS = ("location", "scale", "outlier rate")


def _scores(rng: np.random.Generator, n: int, shift: str, after: bool) -> np.ndarray:
    rate = 0.10 if (after and shift == "outlier rate") else 0.01
    loc = 1.0 if (after and shift == "location") else 0.0
    sd = 2.0 if (after and shift == "scale") else 1.0
    x = loc + sd * rng.standard_normal(n)
    out = rng.random(n) < rate
    x[out] = 3.0 + rng.standard_normal(int(out.sum()))
    return x


def delays(runs: int, before: int, after: int, thresholds: Sequence[float],
           seed: int) -> Dict[Tuple[str, str, str, float], np.ndarray]:
    """Per (shift, kind, statistic, threshold): one value per run — the
    delay (∞ if no alarm within ``after`` steps), or −1 for a false alarm
    before the change. The runs of all cells share their scores."""
    out = {(s, k, st, c): np.empty(runs) for s in SHIFTS for k in KINDS for st in STATISTICS
           for c in thresholds}
    for si, shift in enumerate(SHIFTS):
        rng = np.random.default_rng([seed, si])
        for r in range(runs):
            x = np.r_[_scores(rng, before, shift, False), _scores(rng, after, shift, True)]
            p = outprob.OnlineConformal(seed=seed * 100_003 + si * 10_007 + r).pvalues(x)
            for kind in KINDS:
                for stat in STATISTICS:
                    for c in thresholds:
                        alarm = outprob.Martingale(kind, threshold=c, statistic=stat).update(p).alarm
                        hits = np.flatnonzero(alarm)
                        if hits.size == 0:
                            v = np.inf
                        elif hits[0] < before:
                            v = -1.0
                        else:
                            v = float(hits[0] - before + 1)
                        out[(shift, kind, stat, c)][r] = v
    return out


def summary(v: np.ndarray) -> Tuple[int, int, int, Tuple[float, float, float], float]:
    """(false alarms before the change, detected, runs without a false
    alarm, delay quartiles, mean delay over the detected runs); the
    quartiles are order statistics ("lower"), ∞ where more than that share
    of runs went undetected."""
    early = int(np.sum(v < 0))
    clean = v[v >= 0]
    detected = int(np.isfinite(clean).sum())
    if clean.size:
        q = tuple(float(t) for t in np.quantile(clean, [0.25, 0.5, 0.75], method="lower"))
    else:
        q = (float("nan"),) * 3
    mean = float(np.mean(clean[np.isfinite(clean)])) if detected else float("nan")
    return early, detected, int(clean.size), q, mean  # type: ignore[return-value]
