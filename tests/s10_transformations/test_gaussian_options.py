"""GaussianScaler's ELKI options (contract §10): pretransform, fixed_center,
lam — against outprob.reference.gaussian_options and ELKI's formulas."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import erf

import outprob
from outprob.reference import gaussian_options as ref

from ..strategies import score_arrays

PRE = st.sampled_from([None, "sqrt", "minus_log"])
SCALES = st.sampled_from(["std", "nmad", "niqr"])


@given(
    score_arrays(max_size=300, kinds=("lognormal", "pareto", "integers", "two_values", "drawn")),
    PRE, SCALES, st.booleans(), st.sampled_from([0.5, 1.0, 3.0]), st.booleans(),
)
def test_options_match_reference(x, pre, scale, fixed, lam, higher):
    x = np.abs(x) + (1e-3 if pre == "minus_log" else 0.0)
    x = x[np.isfinite(x)]
    if x.size == 0 or (pre == "minus_log" and np.any(x <= 0)):
        return
    c = 0.5 if fixed else None
    kw = dict(pretransform=pre, fixed_center=c, lam=lam, higher_is_outlier=higher)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = outprob.GaussianScaler("mean", scale, **kw).fit(x)
        p = s.transform(x)
    want = ref.options_probabilities(
        x, scale=scale, pretransform_kind=pre, fixed_center=c, lam=lam, higher_is_outlier=higher
    )
    assert np.all((p >= 0) & (p <= 1))
    np.testing.assert_allclose(p, want, rtol=1e-9, atol=1e-12)


def test_elki_formulas():
    s = np.array([1.0, 2.0, 3.0, 4.0, 10.0])
    # StandardDeviationScaling with fixed mean 1 and λ = 3: σ about 1, ddof 0.
    g = outprob.GaussianScaler(fixed_center=1.0, lam=3.0).fit(s)
    sigma = np.sqrt(np.mean((s - 1.0) ** 2))
    assert (g.center_, g.scale_) == (1.0, pytest.approx(sigma, rel=1e-15))
    want = np.maximum(0, erf((s - 1.0) / (3.0 * sigma * np.sqrt(2))))
    np.testing.assert_allclose(g.transform(s), want, rtol=1e-14)
    # SqrtStandardDeviationScaling: y = √(s − min), mean and (our ddof=0) SD of y.
    g = outprob.GaussianScaler(pretransform="sqrt").fit(s)
    y = np.sqrt(s - 1.0)
    assert g.pre_min_ == 1.0 and g.center_ == pytest.approx(y.mean(), rel=1e-15)
    np.testing.assert_allclose(
        g.transform([0.0, 5.0]), np.maximum(0, erf((np.sqrt([0.0, 4.0]) - y.mean()) / (y.std() * np.sqrt(2))))
    )
    # MinusLogStandardDeviationScaling: y = −ln s; small scores are strange.
    probs = np.array([0.9, 0.8, 0.85, 0.95, 0.01])
    g = outprob.GaussianScaler(pretransform="minus_log", scale="nmad")
    p = g.fit_transform(probs)
    assert p.argmax() == 4 and p[4] > 0.99
    np.testing.assert_array_equal(g.transform([0.0, -1.0, np.nan]), [1.0, 1.0, np.nan])


def test_domain_and_parameter_errors():
    with pytest.raises(ValueError, match="minus_log"):
        outprob.GaussianScaler(pretransform="minus_log").fit([0.0, 1.0])
    with pytest.raises(ValueError, match="pretransform"):
        outprob.GaussianScaler(pretransform="log").fit([1.0, 2.0])
    with pytest.raises(ValueError, match="fixed_center"):
        outprob.GaussianScaler("median", fixed_center=1.0).fit([1.0, 2.0])
    with pytest.raises((ValueError, TypeError)):
        outprob.GaussianScaler(fixed_center=np.nan).fit([1.0, 2.0])
    with pytest.raises(ValueError):
        outprob.GaussianScaler(lam=0.0).fit([1.0, 2.0])


def test_columns_float32_and_persistence():
    rng = np.random.default_rng(5)
    X = rng.lognormal(size=(300, 3))
    g = outprob.GaussianScaler("mean", "nmad", pretransform="sqrt", lam=2.0).fit(X)
    P = g.transform(X)
    for j in range(3):
        want = ref.options_probabilities(X[:, j], scale="nmad", pretransform_kind="sqrt", lam=2.0)
        np.testing.assert_allclose(P[:, j], want, rtol=1e-12, atol=1e-14)
    P32 = g.transform(X.astype(np.float32))
    assert P32.dtype == np.float32
    back = outprob.from_dict(g.to_dict())
    np.testing.assert_array_equal(back.transform(X), P)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(g)).transform(X), P)
    # Without options the fit is the paper's, bit for bit.
    plain = outprob.GaussianScaler("mean", "nmad").fit(X)
    opt = outprob.GaussianScaler("mean", "nmad", lam=1.0, pretransform=None).fit(X)
    np.testing.assert_array_equal(plain.transform(X), opt.transform(X))
