"""Real score sets for the simulation study of the online decisions
(contract §12): detector scores of the ODDS datasets, shuffled into
exchangeable streams (martingale false alarms) and turned into conformal
p-values against calibration inliers (online FDR against BH).

Used by ``online_simulation.py`` (sections 4 and 5); not a command itself.

A score set is one (dataset, detector) pair. Each dataset's rows are split
at random, stratified by label, into a fit part (40 %) and the rest (60 %);
the detector (PyOD, default hyperparameters, ``random_state`` = seed where
it takes one) is fitted on the standardised fit part and scores the rest.
Infinite or NaN scores (PCA gives some) are clipped to the finite range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Sequence, Tuple

import numpy as np

import outprob

KINDS = ("jumper", "power", "mixture")
METHODS = ("lord++", "saffron", "addis", "lond")
DETECTORS = ("IForest", "KNN", "LOF", "PCA", "HBOS", "ECOD")


@dataclass
class ScoreSet:
    """Scores of the rest part (higher = more outlying) and their labels."""

    dataset: str
    detector: str
    scores: np.ndarray
    labels: np.ndarray


def _detector(name: str, seed: int):
    from outprob.experiment.detectors import _PYOD, _import

    path, seeded, _ = _PYOD[name]
    return _import(path)(**({"random_state": seed} if seeded else {}))


def _finite(s: np.ndarray) -> np.ndarray:
    finite = s[np.isfinite(s)]
    lo, hi = (finite.min(), finite.max()) if finite.size else (0.0, 0.0)
    return np.clip(np.nan_to_num(s, nan=lo, posinf=hi, neginf=lo), lo, hi)


def score_sets(data: Path, names: Sequence[str], detectors: Sequence[str], seed: int,
               log=print) -> List[ScoreSet]:
    """One score set per dataset of ``names`` (file stems under ``data``)
    and detector."""
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    out = []
    for name in names:
        with np.load(data / f"{name}.npz") as d:
            X, y = d["X"].astype(float), d["y"].astype(int).ravel()
        fit, rest = train_test_split(np.arange(len(y)), train_size=0.4, stratify=y, random_state=seed)
        scale = StandardScaler().fit(X[fit])
        for det_name in detectors:
            det = _detector(det_name, seed)
            det.fit(scale.transform(X[fit]))
            s = _finite(np.asarray(det.decision_function(scale.transform(X[rest])), dtype=float))
            out.append(ScoreSet(name, det_name, s, y[rest]))
        log(f"  scores: {name} ({len(y)} rows, {int(y.sum())} outliers)")
    return out


def binom_tail(k: int, n: int, p: float) -> float:
    """P(Binomial(n, p) ≥ k): the one-sided p-value of k alarms under a rate p."""
    from scipy.stats import binom

    return float(binom.sf(k - 1, n, p))


def false_alarms(sets: Iterable[ScoreSet], streams: int, steps: int, thresholds: Sequence[float],
                 seed: int) -> Dict[Tuple[str, str, float], Tuple[int, int]]:
    """Per (dataset, kind, threshold): (streams whose martingale ever reached
    the threshold, streams). Each stream is a random permutation of a score
    set's scores (the first ``steps``), so the scores are exchangeable and
    their online conformal p-values independent and uniform."""
    rng = np.random.default_rng(seed)
    logc = {c: math.log(c) for c in thresholds}
    counts: Dict[Tuple[str, str, float], List[int]] = {}
    for i, ss in enumerate(sets):
        length = min(steps, ss.scores.size)
        for r in range(streams):
            x = ss.scores[rng.permutation(ss.scores.size)[:length]]
            p = outprob.OnlineConformal(seed=(seed + i) * 100_003 + r).pvalues(x)
            for kind in KINDS:
                peak = float(np.max(outprob.Martingale(kind, threshold=None).update(p).log_martingale))
                for c in thresholds:
                    cell = counts.setdefault((ss.dataset, kind, c), [0, 0])
                    cell[0] += peak >= logc[c]
                    cell[1] += 1
    return {k: (v[0], v[1]) for k, v in counts.items()}


def online_fdr(sets: Iterable[ScoreSet], splits: int, alphas: Sequence[float],
               seed: int) -> Dict[Tuple[str, str, float], np.ndarray]:
    """Per (dataset, method, α): rows (FDP, TPP) over ``splits`` random
    halvings of each score set into a calibration half (its inliers only)
    and a test half (inliers and outliers, in random arrival order); the
    test half's conformal p-values go to each online rule and to BH on
    the whole test half. Score sets without a test outlier are skipped."""
    from sklearn.model_selection import train_test_split

    out: Dict[Tuple[str, str, float], List[Tuple[float, float]]] = {}
    for i, ss in enumerate(sets):
        for r in range(splits):
            cal, test = train_test_split(np.arange(ss.scores.size), train_size=0.5, stratify=ss.labels,
                                         random_state=((seed + i) * 1009 + r) % 2**32)
            cal = cal[ss.labels[cal] == 0]
            alt = ss.labels[test] == 1
            if not alt.any() or cal.size < 2:
                continue
            p = np.asarray(outprob.ConformalScaler().fit(ss.scores[cal]).pvalues(ss.scores[test]))
            n_alt = int(alt.sum())
            for alpha in alphas:
                flags = {m: np.asarray(outprob.OnlineFDR(m, alpha=alpha).decide(p), dtype=bool)
                         for m in METHODS}
                bh = np.zeros(p.size, dtype=bool)
                bh[outprob.select(p, alpha=alpha, method="bh").indices] = True
                flags["BH (batch)"] = bh
                for name, f in flags.items():
                    fdp = float((f & ~alt).sum()) / max(int(f.sum()), 1)
                    out.setdefault((ss.dataset, name, alpha), []).append((fdp, float((f & alt).sum()) / n_alt))
    return {k: np.asarray(v) for k, v in out.items()}
