"""Sigmoid and mixture-model scaling (contract §10) against the NumPy EM of
outprob.reference.transformations: float64 and float32, ties, tiny N,
degenerate inputs, extremes, 2-D, serialisation."""

from __future__ import annotations

import json
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

import outprob
import outprob.reference.transformations as rt

from ..strategies import float_dtypes, score_arrays

pytestmark = pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")


def grid(x: np.ndarray) -> np.ndarray:
    lo, hi = float(np.min(x)), float(np.max(x))
    w = (hi - lo) or 1.0
    return np.r_[np.linspace(lo - w, hi + w, 41), x[:50].astype(np.float64), np.nan]


@given(x=float_dtypes().flatmap(lambda d: score_arrays(max_size=400, dtype=d)))
def test_sigmoid_matches_the_numpy_em(x):
    s = outprob.SigmoidScaler().fit(x)
    want = rt.fit_sigmoid(x.astype(np.float64)[~np.isnan(x)])
    assert (s.n_iter_, s.converged_) == (want["n_iter"], want["converged"])
    assert_allclose([s.center_, s.scale_], [want["center"], want["scale"]], rtol=1e-12)
    assert_allclose([s.a_, s.b_], [want["a"], want["b"]], rtol=1e-6, atol=1e-9)
    q = grid(x)
    got = s.transform(q.astype(x.dtype))
    assert got.dtype == x.dtype
    assert_allclose(got, rt.sigmoid_scaling(want, q.astype(x.dtype).astype(np.float64)), atol=1e-6)
    assert np.isnan(got[-1])
    finite = got[:-1]
    assert np.all((finite >= 0) & (finite <= 1))
    if s.a_ >= 0:  # monotone
        assert np.all(np.diff(s.transform(np.sort(q[:-1])).astype(np.float64)) >= 0)


def test_sigmoid_degenerate_and_documented_cases():
    with pytest.warns(outprob.ZeroScaleWarning):
        flat = outprob.SigmoidScaler().fit([2.0, 2.0, 2.0])
    assert_array_equal(flat.transform([-1e300, 2.0, 1e300, np.inf]), [0.5] * 4)
    two = outprob.SigmoidScaler().fit([0.0, 0.0, 0.0, 1.0])
    p = two.transform([0.0, 1.0])
    assert p[1] > 0.5 > p[0]
    s = outprob.SigmoidScaler().fit([0.0, 1.0, 2.0, 3.0, 30.0])
    assert_array_equal(s.transform([np.inf, -np.inf]), [1.0, 0.0])
    one = outprob.SigmoidScaler().fit([7.0])
    assert one.transform(7.0) == 0.5


@pytest.mark.parametrize("factor, shift", [(1e-300, 0.0), (1e300, 0.0), (1.0, 1e6), (3.0, -7.0)])
def test_sigmoid_is_affine_invariant(factor, shift):
    rng = np.random.default_rng(0)
    x = np.r_[rng.normal(size=300), rng.normal(8, 1, size=15)]
    base = outprob.SigmoidScaler().fit(x)
    moved = outprob.SigmoidScaler().fit(x * factor + shift)
    assert_allclose(moved.transform(x * factor + shift), base.transform(x), atol=1e-9)


def nonneg_continuous(dtype):
    return score_arrays(max_size=400, dtype=dtype, kinds=("normal", "lognormal", "pareto")).map(np.abs)


@given(x=float_dtypes().flatmap(nonneg_continuous))
def test_mixture_matches_the_numpy_em(x):
    m = outprob.MixtureScaler().fit(x)
    want = rt.fit_mixture(x.astype(np.float64))
    assert_allclose(m.scale_, want["scale"], rtol=1e-15)
    if 1e-3 < want["alpha"] < 1 - 1e-3 and want["converged"]:
        # A vanishing component's parameters are unidentifiable (and its
        # convergence test ill-conditioned); the probabilities below are not.
        assert m.n_iter_ == want["n_iter"]
        got = [m.alpha_, m.mu_, m.sigma_, m.lambda_]
        assert_allclose(got, [want[k] for k in ("alpha", "mu", "sigma", "lam")], rtol=1e-6)
    q = np.abs(grid(x))
    p = m.transform(q.astype(x.dtype))
    assert p.dtype == x.dtype
    assert_allclose(p, rt.mixture_scaling(want, q.astype(x.dtype).astype(np.float64)), atol=1e-6)
    assert np.isnan(p[-1]) and np.all((p[:-1] >= 0) & (p[:-1] <= 1))


def test_mixture_finds_a_separated_outlier_clump():
    rng = np.random.default_rng(5)
    x = np.r_[rng.exponential(size=500), rng.normal(9, 0.3, size=50)]
    m = outprob.MixtureScaler().fit(x)
    assert m.converged_
    p = m.transform(np.array([0.2, 1.0, 9.0]))
    assert p[0] < 0.01 and p[2] > 0.99
    assert m.transform(np.array([np.inf, 1e300]))[0] == 0.0  # not monotone: the tails
    big = outprob.MixtureScaler().fit(x * 1e300)
    assert_allclose(big.transform(x * 1e300), m.transform(x), atol=1e-9)


def test_mixture_degenerate_inputs():
    with pytest.warns(outprob.ZeroScaleWarning):
        flat = outprob.MixtureScaler().fit([3.0, 3.0])
    assert_array_equal(flat.transform([0.0, 3.0, 9.0]), [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="non-negative"):
        outprob.MixtureScaler().fit([-1.0, 2.0, 3.0])
    two = outprob.MixtureScaler().fit([1.0, 1.0, 1.0, 5.0])  # two distinct values: no crash
    p = two.transform([1.0, 5.0])
    assert np.all((p >= 0) & (p <= 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ties = outprob.MixtureScaler().fit(np.repeat([0.0, 1.0, 2.0, 10.0], [50, 30, 10, 3]))
    assert np.all(np.isfinite(ties.transform(np.arange(12.0))))


@pytest.mark.parametrize("name", ["sigmoid", "mixture"])
@pytest.mark.parametrize("shape", [(60,), (60, 3)])
def test_columns_serialisation_and_orientation(name, shape):
    rng = np.random.default_rng(2)
    x = rng.lognormal(size=shape).astype(np.float32)
    s = outprob.scaler(name).fit(x)
    p = s.transform(x)
    if len(shape) == 2:
        for j in range(shape[1]):
            assert_array_equal(p[:, j], outprob.scaler(name).fit(x[:, j]).transform(x[:, j]))
    data = json.loads(json.dumps(s.to_dict()))
    for t in (type(s).from_dict(data), pickle.loads(pickle.dumps(s))):
        assert_array_equal(t.transform(x), p)
    if name == "sigmoid":
        neg = outprob.scaler(name, higher_is_outlier=False).fit(-x)
        assert_array_equal(neg.transform(-x), p)
    bad = dict(data, fitted={**data["fitted"], "sigma_" if name == "mixture" else "scale_": -1.0})
    if len(shape) == 1:
        with pytest.raises(ValueError):
            type(s).from_dict(bad)
    with pytest.raises(ValueError):
        outprob.scaler(name, maxiter=0).fit(x)


def test_the_registry_names_them():
    assert type(outprob.scaler("sigmoid")) is outprob.SigmoidScaler
    assert type(outprob.scaler("mixture", tol=1e-6)) is outprob.MixtureScaler
