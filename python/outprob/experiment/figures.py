"""The report's figures, drawn by ``outprob.plot`` from a study's results
and saved as PNG and SVG."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Tuple

from .evaluation import MEASURES
from .findings import gs_gap, his_comparison, skill_scores

__all__ = ["CASE_STUDY", "case_study_pair", "make_figures"]

#: The paper's case study: kNN on Ionosphere, GS against median/nMAD.
CASE_STUDY = ("Ionosphere", "KNN", "median_nmad")


def case_study_pair(result: Any) -> Optional[Tuple[str, str]]:
    """(dataset, detector) of the case study: the paper's if it was run,
    else the first measured score set."""
    ok = result.status[result.status["status"] == "ok"]
    pairs = list(zip(ok["dataset"], ok["detector"]))
    if CASE_STUDY[:2] in pairs:
        return CASE_STUDY[:2]
    return pairs[0] if pairs else None


def _save(fig: Any, folder: Path, name: str) -> Path:
    import matplotlib
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    png = folder / f"{name}.png"
    # SVG text stays text (small files); metadata without a date keeps reruns byte-stable.
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "outprob"}):
        fig.savefig(png, dpi=110, metadata={"Software": None})
        fig.savefig(folder / f"{name}.svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return png


def make_figures(result: Any, folder: Path, *, order: Sequence[str] = ()) -> Dict[str, Path]:
    """Draw every figure that the results allow; name → PNG path (the SVG
    lies beside it)."""
    from outprob import plot

    from .._registry import scaler as _scaler

    table = result.results
    order = list(order) or list(result.transformations)
    out: Dict[str, Path] = {}
    pair = case_study_pair(result)
    got = result.scores(*pair) if pair else None
    if pair is not None and got is not None:
        scores, y = got
        robust = CASE_STUDY[2] if CASE_STUDY[2] in result.transformations else result.transformations[-1]
        fig = plot.case_study(scores, y, reference=result.reference, robust=robust,
                              title=f"Case study: {pair[1]} on {pair[0]}")
        out["case_study"] = _save(fig, folder, "fig1_case_study")
        probs = {}
        for name in (result.reference, "mean_nmad", robust):
            if name in result.transformations and name not in probs:
                probs[name] = _scaler(name).fit_transform(scores)
        fig = plot.reliability_diagram(y, probs)
        fig.suptitle(f"{pair[1]} on {pair[0]}", fontsize=10)
        out["reliability"] = _save(fig, folder, "fig5_reliability")
    if table.empty:
        return out
    gap = gs_gap(table, result.reference)
    ax = plot.gs_gap_boxplot({m: gap[m].to_numpy() for m in MEASURES})
    out["gs_gap"] = _save(ax.figure, folder, "fig2_gs_outliers_vs_inliers")
    skills = {m: {t: col.to_numpy() for t, col in skill_scores(table, m).items()} for m in MEASURES}
    fig = plot.skill_boxplots(skills, order=order, reference=result.reference)
    out["skill"] = _save(fig, folder, "fig3_outlier_skill_vs_gs")
    comparison = his_comparison(table, order)
    ax = plot.cd_diagram(comparison)
    out["cd"] = _save(ax.figure, folder, "fig4_cd_harmonic_improvement")
    selection = getattr(result, "selection", None)
    if selection is not None and len(selection):
        from .._registry import VARIANTS

        from .selection import fdr_figure

        out["fdr"] = _save(fdr_figure(selection, list(VARIANTS)), folder, "fig6_fdr_control")
    return out
