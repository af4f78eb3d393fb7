"""Contract §11, "Several detectors": ``outprob.combine_pvalues`` (Cauchy,
harmonic mean) against the formulas in NumPy/SciPy
(``outprob.reference.conformal_tails``: ``scipy.stats.hmean``, ``tan``),
``outprob.ensemble_pvalues`` against the pooled median/nMAD standardisation
(``scipy.stats.median_abs_deviation``) and conformal p-values; validity by
enumeration at small sizes — exact for the ensemble, and for the harmonic
mean whatever the dependence between detectors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

import outprob
import outprob.reference.conformal as rc
import outprob.reference.conformal_tails as rt
from ..strategies import examples


def test_cauchy_and_harmonic_equal_the_formulas():
    p = np.random.default_rng(0).uniform(1e-6, 1.0, size=(500, 4))
    assert_allclose(outprob.combine_pvalues(p, "cauchy"), rt.cauchy(p), rtol=1e-9)
    assert_allclose(outprob.combine_pvalues(p, "harmonic"), rt.harmonic(p), rtol=1e-12)
    assert_allclose(outprob.combine_pvalues(p[:, :2], "harmonic"), rt.harmonic(p[:, :2]), rtol=1e-12)
    # Weights: the weighted mean of the Cauchy terms.
    w = np.array([1.0, 0.0, 3.0, 0.0])
    t = np.tan((0.5 - p) * np.pi) @ (w / w.sum())
    assert_allclose(outprob.combine_pvalues(p, weights=w), 0.5 - np.arctan(t) / np.pi, rtol=1e-9)
    # One detector: the p-value itself; tiny p-values keep relative accuracy.
    assert_allclose(outprob.combine_pvalues(p[:, :1]), p[:, 0], rtol=1e-9)
    assert_allclose(outprob.combine_pvalues(np.full((1, 3), 1e-12)), [1e-12], rtol=1e-9)


def test_combination_edges_and_errors():
    assert np.isnan(outprob.combine_pvalues([[0.1, np.nan]])[0])
    assert outprob.combine_pvalues([[0.0, 0.5]])[0] == 0.0
    with pytest.raises(ValueError, match="pvalues"):
        outprob.combine_pvalues([[0.1, 1.2]])
    with pytest.raises(ValueError, match="rule"):
        outprob.combine_pvalues([[0.1, 0.2]], "fisher")
    with pytest.raises(ValueError, match="weights"):
        outprob.combine_pvalues([[0.1, 0.2]], weights=[1.0])
    with pytest.raises(ValueError, match="weights"):
        outprob.combine_pvalues([[0.1, 0.2]], "harmonic", weights=[1.0, 1.0])
    with pytest.raises(ValueError, match="detectors"):
        outprob.ensemble_pvalues(np.zeros((5, 2)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="combine"):
        outprob.ensemble_pvalues(np.zeros((5, 2)), np.zeros((3, 2)), combine="median")
    with pytest.raises(ValueError, match="NaN"):
        outprob.ensemble_pvalues(np.array([[np.nan, 1.0]]), np.zeros((3, 2)))


@pytest.mark.parametrize("how", ["mean", "max"])
def test_ensemble_equals_the_reference(how):
    rng = np.random.default_rng(4)
    cal = rng.normal(size=(300, 3)) * [1.0, 5.0, 0.1]
    test = rng.normal(size=(100, 3)) * [1.0, 5.0, 0.1] + 0.5
    t_cal, t_test = rt.ensemble_scores(cal, test, how)
    p = outprob.ensemble_pvalues(cal, test, combine=how)
    assert_allclose(p, rc.pvalues(t_cal, t_test), atol=1e-15)
    # Lower-is-outlier scores: the same as the negated ones.
    assert_array_equal(outprob.ensemble_pvalues(-cal, -test, combine=how, higher_is_outlier=False), p)
    # One detector: the detector's own conformal p-values (a monotone map).
    assert_array_equal(outprob.ensemble_pvalues(cal[:, :1], test[:, :1]),
                       outprob.ConformalScaler().fit(cal[:, 0]).pvalues(test[:, 0]))


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(2, 12), st.integers(1, 4), st.integers(0, 2**32 - 1), st.sampled_from(["mean", "max"]))
def test_ensemble_validity_by_enumeration(n, k, seed, how):
    # n + 1 exchangeable rows: each is the test row with probability
    # 1/(n + 1). The pooled standardisation is the same whichever it is, so
    # P(p ≤ α) ≤ α exactly, for every α.
    z = np.random.default_rng(seed).normal(size=(n + 1, k))
    p = np.array([outprob.ensemble_pvalues(np.delete(z, i, axis=0), z[i : i + 1], combine=how)[0]
                  for i in range(n + 1)])
    for j in range(1, n + 2):
        alpha = j / (n + 1)
        assert np.mean(p <= alpha) <= alpha + 1e-12


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(3, 15), st.integers(3, 5), st.integers(0, 2**32 - 1), st.floats(0.01, 0.5))
def test_harmonic_validity_by_enumeration(n, k, seed, alpha):
    # The detectors' scores are arbitrarily dependent (a shared factor,
    # one a monotone transform of another); per-detector conformal
    # p-values of the n + 1 enumerated test rows are each valid, and their
    # harmonic combination stays valid (Vovk & Wang): P(p ≤ α) ≤ α.
    rng = np.random.default_rng(seed)
    f = rng.normal(size=(n + 1, 1))
    z = np.hstack([f + rng.normal(size=(n + 1, k - 1)) * rng.uniform(0, 2), np.exp(f)])
    p = np.array([outprob.combine_pvalues(
        outprob.ConformalScaler().fit(np.delete(z, i, axis=0)).pvalues(z[i : i + 1]), "harmonic")[0]
        for i in range(n + 1)])
    assert np.mean(p <= alpha) <= alpha + 1e-12
