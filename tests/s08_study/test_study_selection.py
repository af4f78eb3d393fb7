"""The study's FDR section (contract §8, §11): selection rows computed by
hand from the halves, the per-family table and the report section."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import outprob
from outprob.experiment.selection import fdr_section, fdr_table, halves, selection_rows

pd = pytest.importorskip("pandas")


def data():
    rng = np.random.default_rng(0)
    y = np.r_[np.zeros(300, int), np.ones(30, int)]
    scores = np.r_[rng.normal(size=300), rng.normal(4.0, 1.0, size=30)]
    return scores, y


def test_rows_equal_the_selection_by_hand():
    scores, y = data()
    rows = {r[1]: r[2:] for r in selection_rows("conformal", outprob.ConformalScaler, scores, y)}
    assert set(rows) == {"p>0.5", "bh_0.05", "bh_0.1", "bh_0.2", "bh_0.05 clean", "bh_0.1 clean",
                         "bh_0.2 clean"}
    cal, test = halves(y)
    assert sorted(np.r_[cal, test].tolist()) == list(range(y.size))
    assert y[cal].sum() == 15 and y[test].sum() == 15  # stratified
    for rule, inliers_only in (("bh_0.1", False), ("bh_0.1 clean", True)):
        c = scores[cal][y[cal] == 0] if inliers_only else scores[cal]
        p = outprob.ConformalScaler().fit(c).pvalues(scores[test])
        mask = outprob.select(p, 0.1).mask
        fdp = np.sum(mask & (y[test] == 0)) / max(1, mask.sum())
        power = np.sum(mask & (y[test] == 1)) / 15
        assert rows[rule] == (int(mask.sum()), pytest.approx(fdp), pytest.approx(power))
    p = outprob.scaler("mean_nmad").fit(scores[cal]).transform(scores[test])
    assert rows_of("mean_nmad", scores, y)["p>0.5"][0] == int(np.sum(p > 0.5))
    # Contaminated calibration is conservative here: fewer selections.
    assert rows["bh_0.1"][0] <= rows["bh_0.1 clean"][0]


def rows_of(name, scores, y):
    return {r[1]: r[2:] for r in selection_rows(name, lambda: outprob.scaler(name), scores, y)}


def test_table_and_section():
    scores, y = data()
    chosen = []
    for name in ("mean_std", "mean_nmad", "median_nmad", "conformal", "conformal_trimmed"):
        chosen += [["d", "det", *r] for r in selection_rows(name, lambda n=name: outprob.scaler(n), scores, y)]
    sel = pd.DataFrame(chosen, columns=["dataset", "detector", "transformation", "rule", "selected", "fdp", "power"])
    table = fdr_table(sel, list(outprob.VARIANTS))
    robust = table[(table["family"] == "robust Gaussian (paper's 10)") & (table["rule"] == "p>0.5")].iloc[0]
    assert robust.n == 2
    mine = sel[sel["transformation"].isin(["mean_nmad", "median_nmad"]) & (sel["rule"] == "p>0.5")]
    assert_allclose(robust.fdr, mine["fdp"].mean())
    text = "\n".join(fdr_section(sel, list(outprob.VARIANTS)))
    assert "## FDR control" in text and "bh_0.1 clean" in text
