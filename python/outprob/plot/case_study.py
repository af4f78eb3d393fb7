"""The paper's case study (Fig. 1): one score set, GS against a robust
variant."""

from __future__ import annotations

from typing import Any, Optional, Tuple, Union

import numpy as np

import outprob

from ._mpl import pyplot

__all__ = ["case_study"]

Scaling = Union[str, Any]


def _fit(scaling: Scaling, scores: np.ndarray) -> Tuple[str, Any, np.ndarray]:
    if isinstance(scaling, str):
        name, model = scaling, outprob.scaler(scaling)
    else:
        name, model = type(scaling).__name__, scaling
    return name, model, np.asarray(model.fit_transform(scores), dtype=float)


def case_study(
    scores: Any,
    y: Any,
    *,
    reference: Scaling = "mean_std",
    robust: Scaling = "median_nmad",
    score_bins: int = 20,
    probability_bins: int = 20,
    title: Optional[str] = None,
    fig: Optional[Any] = None,
) -> Any:
    """Paper Fig. 1 for one score set: GS (``reference``) against a robust
    scaling (the paper: median and nMAD).

    (a) the empirical density of the scores with the fitted Gaussian
    densities ``N(center_, scale_)`` of both; (b) both score → probability maps
    with the fraction of outliers in equal-width score bins; (c) histograms
    of the probabilities per class, one panel per scaling; (d) box plots of
    the residuals ``|y − p|`` per class, one panel per scaling.

    Parameters
    ----------
    scores, y : arrays
        Outlier scores (higher = more outlying) and 0/1 labels.
    reference, robust : variant name or unfitted scaler
        A scaler without ``center_``/``scale_`` (linear) has no density in (a).
    score_bins, probability_bins : bins of (a)/(b) and of (c)

    Returns
    -------
    matplotlib.figure.Figure
        Four subfigures (a)–(d); (c) and (d) hold one axes per scaling.
    """
    from scipy.stats import norm

    s = np.asarray(scores, dtype=float).reshape(-1)
    labels = np.asarray(y).reshape(-1) == 1
    if s.size != labels.size:
        raise ValueError(f"{s.size} scores but {labels.size} labels")
    fitted = [_fit(reference, s), _fit(robust, s)]
    styles = ("-", "--")
    if fig is None:
        fig = pyplot().figure(figsize=(11, 8), layout="constrained")
    (fa, fb), (fc, fd) = fig.subfigures(2, 2)
    grid = np.linspace(s.min(), s.max(), 400)
    edges = np.linspace(s.min(), s.max(), score_bins + 1)

    ax = fa.subplots()
    ax.hist(s, bins=edges, density=True, color="0.8", label="scores")
    for (name, model, _), ls in zip(fitted, styles):
        if hasattr(model, "center_") and hasattr(model, "scale_"):
            mu, sigma = float(model.center_), float(model.scale_)
            ax.plot(grid, norm.pdf(grid, mu, sigma), ls, color="k",
                    label=f"{name}: N({mu:.3g}, {sigma:.3g}²)")
    ax.set_xlabel("outlier score")
    ax.set_ylabel("density")
    ax.legend(fontsize=8)
    fa.suptitle("(a) scores and fitted Gaussian densities", fontsize=10)

    ax = fb.subplots()
    which = np.clip(np.searchsorted(edges, s, side="right") - 1, 0, score_bins - 1)
    count = np.bincount(which, minlength=score_bins)
    frac = np.bincount(which, weights=labels, minlength=score_bins) / np.maximum(count, 1)
    ax.bar(edges[:-1], np.where(count > 0, frac, 0.0), width=np.diff(edges), align="edge",
           color="#f4a582", alpha=0.7, label="outlier fraction in score bin")
    for (name, model, _), ls in zip(fitted, styles):
        ax.plot(grid, model.transform(grid), ls, color="k", label=name)
    ax.set_xlabel("outlier score")
    ax.set_ylabel("outlier probability / fraction")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8)
    fb.suptitle("(b) score → probability and outlier fraction", fontsize=10)

    pbins = np.linspace(0, 1, probability_bins + 1)
    axes = fc.subplots(1, 2, sharey=True)
    for ax, (name, _, p) in zip(axes, fitted):
        ax.hist([p[~labels], p[labels]], bins=pbins, stacked=True, color=["#92c5de", "#ca0020"],
                label=["inliers", "outliers"])
        ax.set_yscale("symlog", linthresh=1)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("outlier probability")
    axes[0].set_ylabel("observations")
    axes[0].legend(fontsize=8)
    fc.suptitle("(c) probabilities per class", fontsize=10)

    axes = fd.subplots(1, 2, sharey=True)
    for ax, (name, _, p) in zip(axes, fitted):
        residual = np.abs(labels.astype(float) - p)
        ax.boxplot([residual[~labels], residual[labels]], whis=1.5, showfliers=True)
        ax.set_xticks([1, 2])
        ax.set_xticklabels(["inliers", "outliers"])
        ax.set_title(name, fontsize=9)
    axes[0].set_ylabel("residual |y − p|")
    fd.suptitle("(d) residuals per class", fontsize=10)
    if title:
        fig.suptitle(title)
    return fig
