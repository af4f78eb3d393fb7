"""Critical-difference diagram (paper Fig. 4) and reliability diagram."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Union

import numpy as np

from outprob import metrics

from ._mpl import pyplot

__all__ = ["cd_diagram", "reliability_diagram"]


def cd_diagram(comparison: Any, *, ax: Optional[Any] = None, title: Optional[str] = None) -> Any:
    """Paper Fig. 4: methods on a mean-rank axis (1 = best), a bar joining
    each clique of methods that no test tells apart.

    Parameters
    ----------
    comparison : outprob.compare.Comparison
        From ``outprob.compare.compare(table)``.
    ax : matplotlib Axes, optional
    title : str, optional
        Default: what was ranked over how many score sets, and that the
        cliques come from pairwise Wilcoxon signed-rank tests with
        Holm–Bonferroni correction at the comparison's alpha.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = comparison.plot(ax=ax)
    if title is None:
        title = (f"Mean ranks of {comparison.n_methods} methods over {comparison.n_sets} score sets "
                 f"({'lower' if comparison.lower_is_better else 'higher'} is better)\n"
                 f"bars: cliques by pairwise Wilcoxon signed-rank tests, Holm–Bonferroni corrected, "
                 f"α = {comparison.alpha:g}")
    ax.set_title(title, fontsize=9)
    return ax


def reliability_diagram(
    y_true: Any,
    probabilities: Union[Mapping[str, Any], Any],
    *,
    bins: str = "equiareal",
    n_bins: int = 10,
    fig: Optional[Any] = None,
) -> Any:
    """Reliability diagram: per bin, the outlier fraction against the mean
    probability (calibrated probabilities lie on the diagonal), for one or
    several scalings, with the number of observations per bin below.

    Parameters
    ----------
    y_true : array of 0/1 labels
    probabilities : array, or mapping name → array (several scalings)
    bins, n_bins : binning of ``outprob.metrics.reliability_curve``
    fig : matplotlib Figure, optional

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: the diagram, and the bin counts (log scale).
    """
    if not isinstance(probabilities, Mapping):
        probabilities = {"p": probabilities}
    if fig is None:
        fig = pyplot().figure(figsize=(5.5, 6), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    top.plot([0, 1], [0, 1], color="0.5", linestyle="--", linewidth=0.8, label="calibrated")
    for i, (name, p) in enumerate(probabilities.items()):
        c = metrics.reliability_curve(y_true, p, bins=bins, n_bins=n_bins)
        full = c.count > 0
        color = f"C{i}"
        top.plot(c.mean_probability[full], c.outlier_fraction[full], marker="o", color=color, label=name)
        centres = (c.edges[:-1] + c.edges[1:]) / 2
        bottom.step(np.r_[c.edges[:-1], c.edges[-1]], np.r_[c.count, c.count[-1]], where="post",
                    color=color, label=name)
        bottom.plot(centres[full], c.count[full], linestyle="none", marker=".", color=color)
    top.set_xlim(0, 1)
    top.set_ylim(-0.02, 1.02)
    top.set_ylabel("outlier fraction in bin")
    top.set_title(f"Reliability diagram ({bins} bins, k = {n_bins})")
    top.legend(loc="upper left", fontsize=8)
    bottom.set_yscale("symlog", linthresh=1)
    bottom.set_ylim(bottom=0)
    bottom.set_xlabel("mean probability in bin")
    bottom.set_ylabel("observations")
    return fig
