"""Contract §13 · Label-Trim: ``outprob.label_trim_candidates`` against the
reference (``outprob.reference.labelled``), ``fit(exclude=...)`` against
the p-values of the kept scores, the stored state, and validity in
simulation: with every calibration outlier inside the label budget the
p-values of inliers are super-uniform and BH keeps FDR ≤ α."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_array_equal
from scipy import stats

import outprob
import outprob.reference.conformal as rc
import outprob.reference.labelled as rl

from ..strategies import score_arrays


@given(x=score_arrays(max_size=200, dtype=np.float64), budget=st.integers(0, 250))
def test_candidates_match_the_reference(x, budget):
    got = outprob.label_trim_candidates(x, budget)
    assert got.dtype == np.intp
    assert_array_equal(got, rl.label_trim_candidates(x, budget))


def test_candidates_are_highest_first_ties_in_order():
    assert_array_equal(outprob.label_trim_candidates([1.0, 5.0, np.nan, 5.0, 2.0], 3), [1, 3, 4])
    assert outprob.label_trim_candidates([1.0, 2.0], 0).size == 0
    assert_array_equal(outprob.label_trim_candidates([np.nan, 1.0], 5), [1])
    with pytest.raises(ValueError, match="budget"):
        outprob.label_trim_candidates([1.0], -1)
    with pytest.raises(TypeError, match="budget"):
        outprob.label_trim_candidates([1.0], 1.5)
    with pytest.raises(ValueError, match="1-D"):
        outprob.label_trim_candidates(np.ones((2, 2)), 1)


@given(x=score_arrays(min_size=2, max_size=200, dtype=np.float64), data=st.data())
def test_exclude_equals_the_kept_scores(x, data):
    drop = data.draw(st.lists(st.integers(0, x.size - 1), unique=True, max_size=x.size - 1))
    kept = np.delete(x, drop)
    if np.all(np.isnan(kept)):
        return
    s = outprob.ConformalScaler().fit(x, exclude=drop)
    q = np.concatenate([np.unique(x[~np.isnan(x)]), [np.inf, -np.inf]])
    assert_array_equal(s.pvalues(q), rc.pvalues(kept[~np.isnan(kept)], q))
    assert s.excluded_ == len(drop)
    again = outprob.ConformalScaler.from_dict(s.to_dict())
    assert again.excluded_ == len(drop)
    assert_array_equal(pickle.loads(pickle.dumps(s)).pvalues(q), s.pvalues(q))


def test_exclude_is_checked_and_leaves_the_input_alone():
    x = np.array([1.0, 2.0, 3.0])
    copy = x.copy()
    s = outprob.ConformalScaler().fit(x, exclude=[-1])
    assert_array_equal(x, copy)
    assert s.n_calibration_ == 2
    with pytest.raises(ValueError, match="outside"):
        outprob.ConformalScaler().fit(x, exclude=[3])
    with pytest.raises(ValueError, match="twice"):
        outprob.ConformalScaler().fit(x, exclude=[0, 0])
    with pytest.raises(TypeError, match="integer"):
        outprob.ConformalScaler().fit(x, exclude=[0.5])
    with pytest.raises(TypeError, match="integer"):
        outprob.ConformalScaler().fit(x, exclude=[True, False, True])
    with pytest.raises(ValueError, match="window"):
        outprob.ConformalScaler(window=5).fit(x, exclude=[0])
    two = outprob.ConformalScaler().fit(np.c_[x, -x], exclude=[0])
    assert_array_equal(two.n_calibration_, [2, 2])


def _contaminated(rng, n0, n1):
    """Inliers N(0, 1); contamination N(3, 1) — above the inliers, the
    setting in which a budget of a few times n₁ finds every outlier."""
    cal = np.r_[rng.normal(size=n0), rng.normal(3.0, 1.0, size=n1)]
    labels = np.r_[np.zeros(n0, bool), np.ones(n1, bool)]
    return cal, labels


def test_label_trim_pvalues_are_super_uniform_when_the_budget_finds_every_outlier():
    """§13: when every calibration outlier is among the annotated
    candidates, the kept set is the inliers and P(p ≤ α) ≤ α. Binomial
    test over 4000 calibration sets (one test inlier each)."""
    rng = np.random.default_rng(5)
    n0, n1, reps, alpha = 19, 3, 4000, 0.1
    hits = found = 0
    for _ in range(reps):
        cal, labels = _contaminated(rng, n0, n1)
        cand = outprob.label_trim_candidates(cal, 12)
        if not labels[cand].sum() == n1:
            continue  # the bound then holds with r > 0 (not this test)
        found += 1
        s = outprob.ConformalScaler().fit(cal, exclude=cand[labels[cand]])
        hits += float(s.pvalues(rng.normal())) <= alpha
    assert found > 0.9 * reps
    assert stats.binomtest(hits, found, alpha, alternative="greater").pvalue > 1e-3


def test_label_trim_with_bh_controls_the_fdr():
    """§13: BH on Label-Trim p-values (budget 4·n₁ on 10 % contamination)
    keeps FDR ≤ α: the mean FDP over 400 runs within 3 standard errors."""
    rng = np.random.default_rng(8)
    alpha, fdps, powers = 0.1, [], []
    for _ in range(400):
        cal, labels = _contaminated(rng, 180, 20)
        cand = outprob.label_trim_candidates(cal, 80)
        s = outprob.ConformalScaler().fit(cal, exclude=cand[labels[cand]])
        test = np.r_[rng.normal(size=90), rng.normal(3.5, 1.0, size=10)]
        sel = outprob.select(s.pvalues(test), alpha=alpha).mask
        fdps.append(sel[:90].sum() / max(1, sel.sum()))
        powers.append(sel[90:].mean())
    fdps = np.asarray(fdps)
    assert fdps.mean() <= alpha + 3 * fdps.std() / np.sqrt(fdps.size)
    # and it finds outliers that the contaminated calibration cannot
    assert np.mean(powers) > 0.2
