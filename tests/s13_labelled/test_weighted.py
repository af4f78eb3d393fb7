"""Contract §13 · Weighted conformal p-values: ``ConformalScaler.fit(
scores, weights=...)`` and ``pvalues(X, weights=...)`` against the
reference (``outprob.reference.labelled``), unit weights against the
plain p-values, input checks, stored state, and super-uniformity under a
covariate shift with the true likelihood-ratio weights (binomial test)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats

import outprob
import outprob.reference.conformal as rc
import outprob.reference.labelled as rl


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 60), m=st.integers(0, 60),
       negate=st.booleans())
def test_matches_the_reference(seed, n, m, negate):
    rng = np.random.default_rng(seed)
    cal = rng.integers(-4, 4, size=n).astype(float)  # ties
    cw = rng.choice([0.0, 0.5, 1.0, 3.0], size=n)
    if cw.sum() == 0:
        cw[0] = 1.0
    test = np.r_[rng.integers(-5, 5, size=m).astype(float), np.nan]
    tw = rng.choice([0.0, 0.25, 2.0], size=m + 1)
    s = outprob.ConformalScaler(higher_is_outlier=not negate).fit(cal, weights=cw)
    sign = -1.0 if negate else 1.0
    want = rl.weighted_pvalues(sign * cal, cw, sign * test, tw)
    assert_allclose(s.pvalues(test, weights=tw), want, rtol=1e-12, atol=1e-15)
    r = outprob.ConformalScaler(tie_break="randomized", seed=seed, higher_is_outlier=not negate)
    r.fit(cal, weights=cw)
    u = rc.uniforms(seed, m + 1)
    assert_allclose(r.pvalues(test, weights=tw), rl.weighted_pvalues(sign * cal, cw, sign * test, tw, u),
                    rtol=1e-12, atol=1e-15)


def test_unit_weights_are_the_plain_pvalues():
    rng = np.random.default_rng(2)
    cal, test = rng.normal(size=300).round(1), rng.normal(size=500).round(1)
    plain = outprob.ConformalScaler().fit(cal).pvalues(test)
    w = outprob.ConformalScaler().fit(cal, weights=np.ones(300)).pvalues(test, weights=np.ones(500))
    assert_allclose(w, plain, rtol=1e-13)


def test_checks_and_stored_state():
    s = outprob.ConformalScaler().fit([1.0, np.nan, 3.0], weights=[1.0, 7.0, 2.0])
    assert (s.n_calibration_, s.total_weight_) == (2, 3.0)
    assert_allclose(s.pvalues([2.0], weights=[1.0]), [(2.0 + 1.0) / 4.0])
    with pytest.raises(ValueError, match="weights=.*"):
        s.pvalues([2.0])
    with pytest.raises(ValueError, match="pvalues"):
        s.transform([2.0])
    with pytest.raises(ValueError, match="one weight per score"):
        s.pvalues([2.0, 3.0], weights=[1.0])
    with pytest.raises(ValueError, match="weights"):
        s.pvalues([2.0], weights=[-1.0])
    with pytest.raises(ValueError, match="weights"):
        outprob.ConformalScaler().fit([1.0, 2.0], weights=[0.0, 0.0])
    with pytest.raises(ValueError, match="one weight per score"):
        outprob.ConformalScaler().fit([1.0, 2.0], weights=[1.0])
    with pytest.raises(ValueError, match="marginal"):
        outprob.ConformalScaler(conditional="dkwm").fit([1.0, 2.0], weights=[1.0, 1.0])
    with pytest.raises(ValueError, match="NaN"):
        outprob.ConformalScaler(nan_policy="raise").fit([1.0, np.nan], weights=[1.0, 1.0])
    with pytest.raises(ValueError, match="weights are for"):
        outprob.ConformalScaler().fit([1.0]).pvalues([1.0], weights=[1.0])
    for again in (outprob.ConformalScaler.from_dict(s.to_dict()), pickle.loads(pickle.dumps(s))):
        assert_array_equal(again.pvalues([0.5, 2.0, 9.0], weights=[1.0, 2.0, 0.5]),
                           s.pvalues([0.5, 2.0, 9.0], weights=[1.0, 2.0, 0.5]))
    dropped = outprob.ConformalScaler().fit([1.0, 2.0, 3.0], exclude=[2], weights=[1.0, 1.0])
    assert dropped.excluded_ == 1


def test_super_uniform_under_covariate_shift():
    """§13: features X ~ N(0, 1) for calibration, N(1, 1) for the test
    inlier, score |X| + noise; weights w(x) = φ(x − 1)/φ(x) = e^{x − ½}.
    P(p ≤ α) ≤ α over 4000 draws (binomial test), while the unweighted
    p-value over-rejects (the shift moves the test scores up)."""
    rng = np.random.default_rng(11)
    reps, n, alpha = 4000, 40, 0.1
    hits = plain = 0
    for _ in range(reps):
        xc, xt = rng.normal(size=n), rng.normal(1.0, 1.0)
        sc = np.abs(xc) + 0.3 * rng.normal(size=n)
        st_ = abs(xt) + 0.3 * rng.normal()
        s = outprob.ConformalScaler().fit(sc, weights=np.exp(xc - 0.5))
        hits += float(s.pvalues([st_], weights=[np.exp(xt - 0.5)])[0]) <= alpha
        plain += (1 + np.sum(sc >= st_)) / (n + 1) <= alpha
    assert stats.binomtest(hits, reps, alpha, alternative="greater").pvalue > 1e-3
    assert plain / reps > alpha + 0.02


def test_pyod_bridge_shift_checks_and_uses_the_weights():
    from outprob.pyod import conformal, covariate_shift_weights

    from ..nonconform_oracle import ToyKnn

    rng = np.random.default_rng(6)
    train, test = rng.normal(size=(200, 2)), rng.normal(1.0, 1.0, size=(30, 2))
    model = conformal(ToyKnn(3), train, split=0.5, random_state=1)
    w_cal, w_test = covariate_shift_weights(model.calibration_features_, test, random_state=2)
    want = outprob.ConformalScaler().fit(model.calibration_scores_, weights=w_cal).pvalues(
        model.decision_function(test), weights=w_test)
    assert_array_equal(model.pvalues(test, shift=True, random_state=2), want)
    assert_array_equal(model.pvalues(test), model.scaler_.pvalues(model.decision_function(test)))
    with pytest.raises(ValueError, match="same number of columns"):
        covariate_shift_weights(train, test[:, :1])
    with pytest.raises(ValueError, match="clip_quantile"):
        covariate_shift_weights(train, test, clip_quantile=0.5)
    w_cal, _ = covariate_shift_weights(train, test, clip_quantile=None)
    assert np.all(w_cal > 0)
