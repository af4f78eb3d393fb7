"""Outlier probabilities for a k-nearest-neighbour detector on breast-cancer data.

The Wisconsin diagnostic breast-cancer data bundled with scikit-learn, set up
as outlier-detection benchmarks do (Campos et al. 2016, "WDBC"): all 357
benign tumours are inliers and 10 randomly chosen malignant ones are the
outliers. A kNN detector scores every tumour by the distance to its k-th
nearest neighbour (PyOD's ``KNN``, method "largest"). Each scaling then turns
the scores into outlier probabilities; non-robust Gaussian scaling (GS,
``mean_std``) leaves the true outliers with low probabilities, the robust
variants raise them.

    python3 scripts/dev.py demo            # from the repository root
    python examples/demo.py --k 10 --seed 3
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.neighbors import NearestNeighbors
from sklearn.preprocessing import StandardScaler

import outprob
from outprob import metrics


def knn_scores(x: np.ndarray, k: int) -> np.ndarray:
    """Distance of each point to its k-th nearest other point."""
    nn = NearestNeighbors(n_neighbors=k + 1).fit(x)
    dist, _ = nn.kneighbors(x)
    return dist[:, k]


def wdbc(n_outliers: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    data = load_breast_cancer()
    benign = np.flatnonzero(data.target == 1)
    malignant = np.flatnonzero(data.target == 0)
    rng = np.random.default_rng(seed)
    chosen = rng.choice(malignant, size=n_outliers, replace=False)
    idx = np.concatenate([benign, chosen])
    x = StandardScaler().fit_transform(data.data[idx])
    y = np.r_[np.zeros(benign.size, dtype=int), np.ones(n_outliers, dtype=int)]
    return x, y


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=5, help="neighbour rank of the kNN score")
    ap.add_argument("--outliers", type=int, default=10, help="malignant tumours kept")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    x, y = wdbc(args.outliers, args.seed)
    scores = knn_scores(x, args.k)
    out, inl = y == 1, y == 0
    print(
        f"WDBC: {inl.sum()} benign inliers, {out.sum()} malignant outliers; "
        f"kNN distance scores (k={args.k})\n"
    )

    head = (
        f"{'variant':<19}{'mu':>7}{'sigma':>7} | {'outliers: mean':>14}{'median':>8}{'min':>7}"
        f" | {'inliers: mean':>13}{'p95':>7}{'p>0.5':>7}"
    )
    print(head)
    print("-" * len(head))
    probs = {}
    for name, variant in outprob.VARIANTS.items():
        s = variant.scaler()
        with warnings.catch_warnings():
            # Huber's proposal 2 may need more than statsmodels' 30 steps on
            # long-tailed scores; the last iterate is used either way.
            warnings.simplefilter("ignore", outprob.ConvergenceWarning)
            p = s.fit_transform(scores)
        probs[name] = p
        fitted = (
            f"{s.center_:7.3f}{s.scale_:7.3f}" if hasattr(s, "center_") else f"{'':7}{'':7}"
        )
        po, pi = p[out], p[inl]
        print(
            f"{name:<19}{fitted} | {po.mean():14.3f}{np.median(po):8.3f}{po.min():7.3f}"
            f" | {pi.mean():13.3f}{np.quantile(pi, 0.95):7.3f}{(pi > 0.5).mean():7.1%}"
        )

    print("\nProbabilities of the 10 true outliers, GS (mean_std) next to robust mean_nmad:")
    order = np.argsort(scores[out])[::-1]
    print(f"{'score':>8}{'mean_std':>10}{'mean_nmad':>11}{'median_nmad':>13}")
    for i in order:
        s_i = scores[out][i]
        print(
            f"{s_i:8.3f}{probs['mean_std'][out][i]:10.3f}"
            f"{probs['mean_nmad'][out][i]:11.3f}{probs['median_nmad'][out][i]:13.3f}"
        )

    print("\nIs the scaling any good? Every measure of contract §6, lower is better:")
    for name in ("mean_std", "mean_nmad"):
        print(f"\n{name}:\n{metrics.evaluate(y, probs[name])}")
    ss = metrics.skill_score(y, probs["mean_nmad"], probs["mean_std"], stratify="outlier")
    print(f"\nBrier skill score of mean_nmad against mean_std for the outliers: {ss:+.3f}")


if __name__ == "__main__":
    main()
