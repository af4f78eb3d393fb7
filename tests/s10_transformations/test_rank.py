"""Rank-based scalings (contract §10): "rank", "log_rank" and "top_k" against
the NumPy/SciPy reference (np.searchsorted, scipy.stats.rankdata), float64
and float32, ties, tiny N, degenerate inputs, 2-D, serialisation."""

from __future__ import annotations

import json
import math
import pickle

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

import outprob
import outprob.reference.transformations as rt

from ..strategies import float_dtypes, score_arrays


def probes(x: np.ndarray) -> np.ndarray:
    """The fitted scores, points between and beyond them, ±inf and NaN."""
    u = np.unique(x.astype(np.float64))
    mids = (u[:-1] / 2 + u[1:] / 2) if u.size > 1 else u
    far = np.array([u[0] - abs(u[0]) - 1, u[-1] + abs(u[-1]) + 1, np.inf, -np.inf, np.nan])
    return np.concatenate([u, mids, far]).astype(x.dtype)


def check_close(got: np.ndarray, want: np.ndarray, dtype) -> None:
    assert got.dtype == dtype
    if dtype == np.float32:
        assert_allclose(got, want.astype(np.float32), rtol=2 * np.finfo(np.float32).eps, atol=0)
    else:
        assert_allclose(got, want, rtol=1e-15, atol=0)


@pytest.mark.parametrize("name, log", [("rank", False), ("log_rank", True)])
@given(x=score_arrays(max_size=500, dtype=np.float64) | score_arrays(max_size=500, dtype=np.float32))
def test_rank_matches_the_reference(name, log, x):
    s = outprob.scaler(name).fit(x)
    q = probes(x)
    want = rt.rank_scaling(x, q.astype(np.float64), log=log)
    got = s.transform(q)
    check_close(got, want, x.dtype)
    assert np.isnan(got[-1]) and got[-3] == 1 and got[-2] == 0
    finite = got[~np.isnan(got)]
    assert np.all((finite >= 0) & (finite <= 1))
    order = np.argsort(q[:-1].astype(np.float64), kind="stable")
    assert np.all(np.diff(got[:-1][order].astype(np.float64)) >= 0)  # monotone


@given(x=score_arrays(max_size=300))
def test_rank_of_the_fitted_scores_is_scipys_average_rank(x):
    got = outprob.RankScaler().fit_transform(x)
    assert_allclose(got, rt.rank_of_fitted(x), rtol=1e-15, atol=1e-300)


@pytest.mark.parametrize("binary", [True, False])
@given(x=float_dtypes().flatmap(lambda d: score_arrays(max_size=300, dtype=d)), k=st.integers(1, 400))
# Subnormal fits: the midpoint of [2.2e-309, 0]; the smallest subnormal as
# cutoff and max (halved, it is 0 and the quotient was NaN).
@example(x=np.array([2.22507386e-309, 0.0]), k=2)
@example(x=np.array([5e-324]), k=1)
def test_top_k_matches_the_reference(binary, x, k):
    dtype = x.dtype
    s = outprob.scaler("top_k", k=k, binary=binary).fit(x)
    q = probes(x)
    check_close(s.transform(q), rt.top_k_scaling(x, q.astype(np.float64), k, binary), dtype)
    assert s.k_ == min(k, x.size)
    assert np.count_nonzero(s.transform(x)) >= min(k, x.size) or not binary


@pytest.mark.parametrize("fraction, n, k", [(0.1, 100, 10), (0.1, 101, 11), (0.001, 5, 1), (0.5, 3, 2)])
def test_top_k_fraction(fraction, n, k):
    x = np.arange(n, dtype=float)
    s = outprob.TopKScaler(fraction=fraction).fit(x)
    assert s.k_ == k == max(1, math.ceil(fraction * n))
    assert s.transform(x).sum() == k


def test_documented_small_cases():
    r = outprob.RankScaler()
    assert_array_equal(r.fit_transform([5.0]), [0.5])
    assert_array_equal(r.transform([4.0, 5.0, 6.0]), [0.0, 0.5, 1.0])
    assert_array_equal(r.fit_transform([2.0, 2.0, 2.0]), [0.5, 0.5, 0.5])  # constant
    assert_array_equal(r.fit_transform([1.0, 3.0, 1.0, 3.0]), [1 / 6, 5 / 6, 1 / 6, 5 / 6])  # two values
    assert_array_equal(r.fit_transform([1.0, 2.0, 3.0]), [0.0, 0.5, 1.0])
    assert_array_equal(r.transform([1.5, 2.5]), [0.25, 0.75])  # midpoints between fitted values
    lr = outprob.LogRankScaler().fit([1.0, 2.0, 3.0])
    assert_allclose(lr.transform([1.0, 2.0, 3.0]), [0.0, math.log(1.5) / math.log(2), 1.0], rtol=1e-15)
    t = outprob.TopKScaler(k=1).fit([3.0, 3.0, 1.0])
    assert_array_equal(t.transform([3.0, 1.0, 2.9]), [1.0, 0.0, 0.0])  # ties at the cutoff all count
    lin = outprob.TopKScaler(k=2, binary=False).fit([-5.0, -3.0, -1.0])
    # cutoff −3, g = min(0, −3) = −3: (s + 3)/(−1 + 3)
    assert_array_equal(lin.transform([-4.0, -3.0, -2.0, -1.0, 9.0]), [0.0, 0.0, 0.5, 1.0, 1.0])


@pytest.mark.parametrize("name", ["rank", "log_rank", "top_k"])
def test_nan_orientation_and_columns(name):
    rng = np.random.default_rng(3)
    X = rng.lognormal(size=(60, 3))
    X[5, 1] = np.nan
    s = outprob.scaler(name).fit(X)
    P = s.transform(X)
    assert np.isnan(P[5, 1]) and np.isnan(P).sum() == 1
    for j in range(3):
        assert_array_equal(P[:, j], outprob.scaler(name).fit(X[:, j]).transform(X[:, j]))
    neg = outprob.scaler(name, higher_is_outlier=False).fit(-X[:, 0])
    assert_array_equal(neg.transform(-X[:, 0]), outprob.scaler(name).fit_transform(X[:, 0]))
    with pytest.raises(ValueError):
        outprob.scaler(name, nan_policy="raise").fit(X)
    with pytest.raises(ValueError):
        outprob.scaler(name).fit([1.0, np.inf])
    with pytest.raises(ValueError):
        outprob.scaler(name).fit([np.nan])
    out = np.empty_like(X)
    assert s.transform(X, out=out) is out


@pytest.mark.parametrize("name", ["rank", "log_rank", "top_k"])
@pytest.mark.parametrize("shape", [(40,), (40, 2)])
def test_serialisation_round_trips(name, shape):
    x = np.random.default_rng(1).normal(size=shape).astype(np.float32)
    s = outprob.scaler(name).fit(x)
    data = json.loads(json.dumps(s.to_dict()))
    for t in (outprob.from_dict(data), type(s).from_dict(data), pickle.loads(pickle.dumps(s))):
        assert type(t) is type(s)
        assert_array_equal(t.transform(x), s.transform(x))


def test_restore_refuses_bad_states():
    data = outprob.RankScaler().fit([1.0, 2.0, 3.0]).to_dict()
    for bad in ([3.0, 1.0], [], [1.0, float("nan")], "abc"):
        with pytest.raises(ValueError):
            outprob.RankScaler.from_dict({**data, "fitted": {"sorted_": bad}})
    top = outprob.TopKScaler(k=1).fit([1.0, 2.0]).to_dict()
    with pytest.raises(ValueError):
        outprob.TopKScaler.from_dict({**top, "fitted": {**top["fitted"], "cutoff_": 5.0}})
    for bad_params in ({"k": 0}, {"k": 1.5}, {"fraction": 0.0}, {"fraction": 1.0}, {"binary": "yes"}):
        with pytest.raises((TypeError, ValueError)):
            outprob.TopKScaler(**bad_params).fit([1.0, 2.0])


def test_the_registry_names_them():
    for name, cls in [("rank", outprob.RankScaler), ("log_rank", outprob.LogRankScaler),
                      ("top_k", outprob.TopKScaler)]:  # fmt: skip
        assert type(outprob.scaler(name)) is cls
        assert name in outprob.TRANSFORMATIONS and name not in outprob.VARIANTS
    assert len(outprob.VARIANTS) == 12


@pytest.mark.parametrize("name", ["rank", "log_rank"])
@given(x=float_dtypes().flatmap(lambda d: score_arrays(max_size=300, dtype=d)),
       higher=st.booleans(), holes=st.booleans())  # fmt: skip
def test_fit_transform_is_fit_then_transform(name, x, higher, holes):
    x = x.copy()
    if holes and x.size > 2:
        x[::3] = np.nan
    if np.all(np.isnan(x)):
        x[0] = 1.0
    fused = outprob.scaler(name, higher_is_outlier=higher)
    got = fused.fit_transform(x)
    s = outprob.scaler(name, higher_is_outlier=higher).fit(x)
    assert_array_equal(got, s.transform(x))
    assert_array_equal(fused.sorted_, s.sorted_)
    out = np.empty_like(x)
    assert fused.fit_transform(x, out=out) is out
    assert_array_equal(out, got)


def test_top_k_parameters_take_effect_at_the_next_fit():
    s = outprob.TopKScaler(k=2, binary=False).fit([-5.0, -3.0, -1.0])
    before = s.transform([-2.0])
    s.set_params(binary=True)
    assert_array_equal(s.transform([-2.0]), before)
    assert_array_equal(s.fit([-5.0, -3.0, -1.0]).transform([-2.0]), [1.0])
