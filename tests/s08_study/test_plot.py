"""The study's figures (contract §8; the critical-difference diagram and the
reliability diagram of §6), ``outprob.plot``: every figure renders on Agg
with the expected artists and labels (no pixel comparison)."""

from __future__ import annotations

import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import outprob  # noqa: E402
from outprob import plot  # noqa: E402
from outprob.compare import compare  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.fixture()
def scores():
    rng = np.random.default_rng(0)
    s = np.r_[rng.gamma(2.0, 1.0, 300), rng.normal(9.0, 1.5, 30)]
    y = np.r_[np.zeros(300, int), np.ones(30, int)]
    return s, y


def _texts(fig):
    return [t.get_text() for t in fig.findobj(matplotlib.text.Text)]


def test_case_study_has_four_panels_and_both_scalings(scores):
    s, y = scores
    fig = plot.case_study(s, y, title="kNN on synthetic")
    fig.canvas.draw()
    texts = _texts(fig)
    for panel in ("(a)", "(b)", "(c)", "(d)"):
        assert any(t.startswith(panel) for t in texts), panel
    assert len(fig.subfigs) == 4 and len(fig.axes) == 6
    ax_a, ax_b = fig.subfigs[0].axes[0], fig.subfigs[1].axes[0]
    legend_a = [t.get_text() for t in ax_a.get_legend().get_texts()]
    gs, rgs = outprob.scaler("mean_std").fit(s), outprob.scaler("median_nmad").fit(s)
    assert f"mean_std: N({gs.center_:.3g}, {gs.scale_:.3g}²)" in legend_a
    assert f"median_nmad: N({rgs.center_:.3g}, {rgs.scale_:.3g}²)" in legend_a
    # (b): the two maps are the fitted scalers' transforms; the bars are outlier fractions.
    lines = ax_b.get_lines()
    assert [ln.get_label() for ln in lines] == ["mean_std", "median_nmad"]
    x, p = lines[0].get_data()
    np.testing.assert_allclose(p, gs.transform(x))
    heights = [r.get_height() for r in ax_b.patches]
    assert len(heights) == 20 and all(0 <= h <= 1 for h in heights)
    # (c): stacked histograms of all probabilities per panel.
    for ax in fig.subfigs[2].axes:
        assert sum(r.get_height() for r in ax.patches[:20]) == (y == 0).sum()
    assert [ax.get_title() for ax in fig.subfigs[3].axes] == ["mean_std", "median_nmad"]
    assert [t.get_text() for t in fig.subfigs[3].axes[0].get_xticklabels()] == ["inliers", "outliers"]


def test_gs_gap_boxplot_one_box_per_measure():
    gaps = {"brier_score": [-1, -2, 0.5], "sharpness_error": [-1, -1, -1],
            "refinement_error": [-3, 1, np.inf], "calibration_error": [0, -1, -2]}
    ax = plot.gs_gap_boxplot(gaps)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["Brier", "sharpness", "refinement", "calibration"]
    assert "outliers vs GS inliers" in ax.get_ylabel()
    # the median line of each box (the infinite value is left out)
    medians = [ln for ln in ax.get_lines() if ln.get_color() == "#b2182b"]
    assert [float(ln.get_ydata()[0]) for ln in medians] == [-1.0, -1.0, -1.0, -1.0]


def test_skill_boxplots_whiskers_follow_the_paper():
    values = np.r_[np.arange(10.0), 100.0]  # 100 lies beyond Q3 + 1.5 IQR
    skills = {m: {"mean_std": np.zeros(11), "linear": values, "mean_nmad": -values}
              for m in ("brier_score", "sharpness_error", "refinement_error", "calibration_error")}
    fig = plot.skill_boxplots(skills)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == [
        "(a) Brier skill score", "(b) sharpness skill score",
        "(c) refinement skill score", "(d) calibration skill score"]
    for ax in axes:
        assert [t.get_text() for t in ax.get_xticklabels()] == ["linear", "mean_nmad"]
        ys = np.concatenate([ln.get_ydata() for ln in ax.get_lines()])
        assert ys.max() == 9.0 and ys.min() == -9.0  # whiskers stop at the last point within 1.5 IQR; no fliers
    assert plot.WHIS == 1.5


def test_cd_diagram_title_names_test_and_correction():
    rng = np.random.default_rng(1)
    table = {"a": rng.normal(0, 1, 12), "b": rng.normal(1, 1, 12), "c": rng.normal(3, 1, 12)}
    comparison = compare(table)
    ax = plot.cd_diagram(comparison)
    title = ax.get_title()
    assert "Wilcoxon signed-rank" in title and "Holm–Bonferroni" in title and "12 score sets" in title
    texts = [t.get_text() for t in ax.texts]
    for name, rank in comparison.ranking():
        assert f"{name} ({rank:.2f})" in texts
    assert plot.cd_diagram(comparison, title="mine").get_title() == "mine"


def test_reliability_diagram_points_and_counts(scores):
    s, y = scores
    probs = {"mean_std": outprob.scaler("mean_std").fit_transform(s),
             "mean_nmad": outprob.scaler("mean_nmad").fit_transform(s)}
    fig = plot.reliability_diagram(y, probs, n_bins=8)
    top, bottom = fig.axes
    labels = [ln.get_label() for ln in top.get_lines()]
    assert labels == ["calibrated", "mean_std", "mean_nmad"]
    curve = outprob.metrics.reliability_curve(y, probs["mean_std"], n_bins=8)
    x, frac = top.get_lines()[1].get_data()
    full = curve.count > 0
    np.testing.assert_array_equal(x, curve.mean_probability[full])
    np.testing.assert_array_equal(frac, curve.outlier_fraction[full])
    assert bottom.get_ylabel() == "observations" and top.get_ylabel() == "outlier fraction in bin"
    assert len(plot.reliability_diagram(y, probs["mean_std"]).axes[0].get_lines()) == 2


def test_missing_matplotlib_names_the_extra(monkeypatch):
    from outprob.plot import _mpl

    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"outprob\[plot\]"):
        _mpl.pyplot()


def test_cd_diagram_legible_at_the_study_size():
    """22 methods over 200 score sets, as the committed study draws: every
    text inside the figure, rank labels thinned and apart, each clique a
    bar rather than a dot."""
    rng = np.random.default_rng(4)
    names = [f"transformation_number_{i:02d}" for i in range(22)]
    # Neighbouring methods differ little, so the cliques join near-equal ranks.
    table = {n: rng.normal(0.05 * i, 1.0, 200) for i, n in enumerate(names)}
    comparison = compare(table)
    assert comparison.cliques, "the data should give cliques"
    ax = plot.cd_diagram(comparison)
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    canvas = fig.bbox
    texts = [*ax.texts, ax.title]  # the axis itself is off: its tick labels are not drawn
    for t in texts:
        box = t.get_window_extent(renderer)
        assert box.x0 >= canvas.x0 - 0.5 and box.x1 <= canvas.x1 + 0.5, t.get_text()
        assert box.y0 >= canvas.y0 - 0.5 and box.y1 <= canvas.y1 + 0.5, t.get_text()
    ticks = sorted((t for t in ax.texts if t.get_text().isdigit()), key=lambda t: int(t.get_text()))
    assert 3 <= len(ticks) <= 13 and ticks[0].get_text() == "1"
    boxes = [t.get_window_extent(renderer) for t in ticks]
    assert all(a.x1 < b.x0 for a, b in zip(boxes, boxes[1:])), "rank labels overlap"
    bars = [ln for ln in ax.get_lines() if ln.get_linewidth() >= 3]
    assert len(bars) == len(comparison.cliques)
    for bar in bars:
        (x0, _), (x1, _) = ax.transData.transform(np.c_[bar.get_xdata(), bar.get_ydata()])
        assert x1 - x0 >= 8, "a clique drawn as a dot"
