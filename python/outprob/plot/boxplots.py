"""Skill-score box plots: the paper's Fig. 2 and Fig. 3."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import numpy as np

from ._mpl import finite, pyplot

__all__ = ["WHIS", "gs_gap_boxplot", "skill_boxplots", "MEASURE_TITLES"]

#: Whiskers at 1.5 × IQR beyond the quartiles; points beyond are not drawn
#: (the paper: "we do not display skill scores less (greater) than 1.5 times
#: the first (third) quartile").
WHIS = 1.5
MEASURE_TITLES = {
    "brier_score": "Brier skill score",
    "sharpness_error": "sharpness skill score",
    "refinement_error": "refinement skill score",
    "calibration_error": "calibration skill score",
}


def _boxes(ax: Any, data: Mapping[str, Any], *, vertical_labels: bool = False) -> Any:
    labels = list(data)
    values = [finite(data[k]) for k in labels]
    ax.axhline(0.0, color="0.5", linewidth=0.8, linestyle="--", zorder=0)
    ax.boxplot(values, whis=WHIS, showfliers=False, patch_artist=True,
               boxprops={"facecolor": "#cfe0f3"}, medianprops={"color": "#b2182b"})
    ax.set_xticks(np.arange(1, len(labels) + 1))
    ax.set_xticklabels(labels, rotation=90 if vertical_labels else 0)
    ax.grid(axis="y", linewidth=0.4, alpha=0.6)
    return ax


def gs_gap_boxplot(gaps: Mapping[str, Any], *, ax: Optional[Any] = None) -> Any:
    """Paper Fig. 2: per measure, the skill scores of GS's probabilities
    for the outliers against those for the inliers,
    ``−log₂(M_outliers / M_inliers)``, one value per score set. Negative:
    the outliers get worse probabilities than the inliers.

    Parameters
    ----------
    gaps : mapping measure name → values
        E.g. ``{"brier_score": [...], "sharpness_error": [...], ...}``.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    if ax is None:
        _, ax = pyplot().subplots(figsize=(5.5, 3.6), layout="constrained")
    _boxes(ax, {MEASURE_TITLES.get(k, k).replace(" skill score", ""): v for k, v in gaps.items()})
    ax.set_ylabel("skill score GS outliers vs GS inliers")
    ax.set_title("Non-robust Gaussian scaling (GS): outliers vs inliers")
    return ax


def skill_boxplots(
    skills: Mapping[str, Mapping[str, Any]],
    *,
    order: Optional[Sequence[str]] = None,
    reference: str = "mean_std",
    fig: Optional[Any] = None,
) -> Any:
    """Paper Fig. 3: for each measure a panel of box plots, one box per
    transformation, of its outlier skill scores against GS (one value per
    score set). Positive: better probabilities for the outliers than GS.

    Parameters
    ----------
    skills : mapping measure → (mapping transformation → values)
    order : transformations to show, in this order (default: as given,
        without ``reference``, whose skill against itself is 0)
    fig : matplotlib Figure, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    measures = list(skills)
    if fig is None:
        fig = pyplot().figure(figsize=(11, 8), layout="constrained")
    cols = 2 if len(measures) > 1 else 1
    rows = -(-len(measures) // cols)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for i, (ax, m) in enumerate(zip(axes, measures)):
        names = [t for t in (order or skills[m]) if t != reference and t in skills[m]]
        _boxes(ax, {t: skills[m][t] for t in names}, vertical_labels=True)
        ax.set_title(f"({'abcdefgh'[i] if i < 8 else i}) {MEASURE_TITLES.get(m, m)}")
        ax.set_ylabel("skill score vs GS (outliers)")
    for ax in axes[len(measures):]:
        ax.set_visible(False)
    fig.suptitle("Outlier skill scores of each transformation against GS")
    return fig
