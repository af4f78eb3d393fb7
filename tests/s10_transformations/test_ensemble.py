"""outprob.combine (contract §10, ensembles) against NumPy's reductions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.testing import assert_allclose, assert_array_equal

import outprob

probs = st.floats(0.0, 1.0) | st.just(float("nan"))
matrices = st.tuples(st.integers(1, 30), st.integers(1, 6)).flatmap(
    lambda shape: hnp.arrays(np.float64, shape, elements=probs)
)
NUMPY = {"mean": np.nanmean, "max": np.nanmax, "min": np.nanmin, "median": np.nanmedian}


@pytest.mark.parametrize("method", list(NUMPY))
@given(P=matrices)
def test_matches_numpy(method, P):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # NumPy warns on all-NaN rows
        want = NUMPY[method](P, axis=1)
        propagated = getattr(np, method)(P, axis=1)
    assert_allclose(outprob.combine(P, method), want, rtol=1e-15, atol=1e-300)
    assert_allclose(outprob.combine(P, method, nan_policy="propagate"), propagated, rtol=1e-15)
    got = outprob.combine(P.astype(np.float32), method)
    assert got.dtype == np.float32
    finite = got[~np.isnan(got)]
    assert np.all((finite >= 0) & (finite <= 1))


@given(P=matrices, w=st.lists(st.floats(0.0, 10.0), min_size=6, max_size=6))
def test_weighted_mean(P, w):
    w = np.asarray(w[: P.shape[1]])
    if not w.any():
        w[0] = 1.0
    ok = ~np.isnan(P)
    total = (ok * w).sum(axis=1)
    with np.errstate(all="ignore"):
        want = np.where(ok, P, 0.0) @ w / total
    want[total == 0] = np.nan
    assert_allclose(outprob.combine(P, weights=w), np.clip(want, 0, 1), rtol=1e-13, atol=1e-300)


def test_columns_of_a_fitted_scaler_and_errors():
    X = np.random.default_rng(0).lognormal(size=(50, 3))
    P = outprob.scaler("mean_nmad").fit_transform(X)
    assert_array_equal(outprob.combine(P, "max"), P.max(axis=1))
    for bad, err in [(P[:, 0], ValueError), (np.full((2, 2), 1.5), ValueError),
                     (np.empty((3, 0)), ValueError), ([["a", "b"]], outprob.InputError)]:  # fmt: skip
        with pytest.raises(err):
            outprob.combine(bad)
    with pytest.raises(ValueError):
        outprob.combine(P, "product")
    with pytest.raises(ValueError):
        outprob.combine(P, "max", weights=[1, 1, 1])
    with pytest.raises(ValueError):
        outprob.combine(P, weights=[0, 0, 0])
    with pytest.raises(ValueError):
        outprob.combine(np.array([[np.nan, 0.5]]), nan_policy="raise")
    assert np.isnan(outprob.combine(np.array([[np.nan, np.nan]]))[0])
