"""Contract §13 · Integrative conformal p-values: ``ConformalScaler.fit(
inliers, outlier_scores=...)`` against the paper's definition (Liang,
Sesia & Sun 2024, eqs. (3)–(6), ``outprob.reference.labelled``), the
one-score case against the plain p-values, checks and stored state,
super-uniformity of a test inlier (binomial test) and the FDR of BH on
them in simulation (measured: the paper proves FDR control for its
conditional-calibration selection, not for BH)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_array_equal
from scipy import stats

import outprob
import outprob.reference.labelled as rl


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), k=st.integers(1, 15),
       m=st.integers(0, 30), negate=st.booleans())
def test_matches_the_papers_definition(seed, n, k, m, negate):
    rng = np.random.default_rng(seed)
    cal = rng.integers(-4, 4, size=(n, 2)).astype(float)  # ties in both scores
    out = rng.integers(-4, 4, size=(k, 2)).astype(float)
    test = np.r_[rng.integers(-5, 5, size=(m, 2)).astype(float), [[np.nan, 0.0]]]
    s = outprob.ConformalScaler(higher_is_outlier=not negate).fit(cal, outlier_scores=out)
    sign = -1.0 if negate else 1.0
    assert_array_equal(s.pvalues(test), rl.integrative_pvalues(sign * cal, sign * out[:, 1], sign * test))
    assert_array_equal(s.transform(test), 1 - s.pvalues(test))
    assert (s.n_calibration_, s.n_outliers_) == (n, k)


@given(seed=st.integers(0, 2**32 - 1))
def test_one_score_is_the_plain_pvalue(seed):
    rng = np.random.default_rng(seed)
    cal, out = rng.normal(size=50).round(1), rng.normal(2, 1, size=20).round(1)
    test = rng.normal(size=80).round(1)
    s = outprob.ConformalScaler().fit(cal, outlier_scores=out)
    assert_array_equal(s.pvalues(test), outprob.ConformalScaler().fit(cal).pvalues(test))


def test_checks_and_stored_state():
    cal = np.array([[0.0, 1.0], [1.0, 0.5], [np.nan, 0.0], [2.0, 2.0]])
    out = np.array([[3.0, 3.0], [2.5, 1.0]])
    s = outprob.ConformalScaler().fit(cal, outlier_scores=out, exclude=[0])
    assert (s.n_calibration_, s.n_outliers_, s.excluded_) == (2, 2, 1)
    test = np.array([[0.5, 0.7], [5.0, 5.0]])
    for again in (outprob.ConformalScaler.from_dict(s.to_dict()), pickle.loads(pickle.dumps(s))):
        assert_array_equal(again.pvalues(test), s.pvalues(test))
        assert again.excluded_ == 1
    with pytest.raises(ValueError, match=r"\(m, 2\)"):
        s.pvalues(np.ones(3))
    with pytest.raises(ValueError, match=r"\(k, 2\)"):
        outprob.ConformalScaler().fit(cal, outlier_scores=np.ones(2))
    with pytest.raises(ValueError, match="pairs"):
        outprob.ConformalScaler().fit(np.ones((3, 3)), outlier_scores=np.ones((2, 3)))
    with pytest.raises(ValueError, match="classical"):
        outprob.ConformalScaler(tie_break="randomized").fit(cal, outlier_scores=out)
    with pytest.raises(ValueError, match="not both"):
        outprob.ConformalScaler().fit(cal[:, 0], outlier_scores=out[:, 0], weights=np.ones(4))
    with pytest.raises(ValueError, match="NaN"):
        outprob.ConformalScaler(nan_policy="raise").fit(cal, outlier_scores=out)


def _draw(rng, n, k, m0, m1):
    """Two scores per point: a (distance to the inliers' centre, from an
    inlier-trained model) and b (closeness to the labelled outliers'
    centre (2.5, 2.5), from an outlier-trained model)."""
    def scores(x):
        return np.c_[np.linalg.norm(x, axis=1), -np.linalg.norm(x - 2.5, axis=1)]
    inl = rng.normal(size=(n, 2))
    outl = rng.normal(2.5, 1.0, size=(k, 2))
    test = np.r_[rng.normal(size=(m0, 2)), rng.normal(2.5, 1.0, size=(m1, 2))]
    return scores(inl), scores(outl), scores(test)


def test_super_uniform_for_a_test_inlier():
    """§13 (the paper's Theorem 1): P(p ≤ α) ≤ α for a test inlier,
    binomial test over 4000 calibration sets of 19 inliers and 8 outliers."""
    rng = np.random.default_rng(3)
    reps, alpha, hits = 4000, 0.1, 0
    for _ in range(reps):
        cal, out, test = _draw(rng, 19, 8, 1, 0)
        hits += float(outprob.ConformalScaler().fit(cal, outlier_scores=out).pvalues(test)[0]) <= alpha
    assert stats.binomtest(hits, reps, alpha, alternative="greater").pvalue > 1e-3


def test_bh_fdr_measured_in_simulation():
    """BH on integrative p-values (no proof: the paper's §4): the mean FDP
    over 300 runs stays within 3 standard errors of α here, and the power
    exceeds the plain p-values' with the inlier score alone."""
    rng = np.random.default_rng(4)
    alpha, fdps, power, plain = 0.1, [], [], []
    for _ in range(300):
        cal, out, test = _draw(rng, 100, 30, 90, 10)
        p = outprob.ConformalScaler().fit(cal, outlier_scores=out).pvalues(test)
        sel = outprob.select(p, alpha=alpha).mask
        fdps.append(sel[:90].sum() / max(1, sel.sum()))
        power.append(sel[90:].mean())
        q = outprob.ConformalScaler().fit(cal[:, 0]).pvalues(test[:, 0])
        plain.append(outprob.select(q, alpha=alpha).mask[90:].mean())
    fdps = np.asarray(fdps)
    assert fdps.mean() <= alpha + 3 * fdps.std() / np.sqrt(fdps.size)
    assert np.mean(power) > np.mean(plain)
