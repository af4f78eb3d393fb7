"""Scalers (contract §4, §7): every named variant against the reference, custom
center/scale pairs, fit on one array and transform another, 2-D columns,
the scikit-learn parameter protocol and serialisation."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

import outprob
import outprob.reference as ref

from ..strategies import score_arrays

M_VARIANTS = {"huber", "tukey"}
TINY = float(np.finfo(np.float64).tiny)  # below it relative precision is undefined
pytestmark = pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")


def reference_fit(name, x):
    pair = ref.VARIANTS[name]
    return ref.fit_gaussian(x, *pair)


def assert_probabilities_close(name, got, want, dtype=np.float64, fitted=None):
    if dtype == np.float32:
        assert got.dtype == np.float32
        # Computed in float64, rounded once to float32.
        assert_allclose(got, want.astype(np.float32), rtol=2 * np.finfo(np.float32).eps, atol=0)
    elif name in M_VARIANTS:
        # μ, σ agree to 1e-9 (in units of σ), so p to 1e-9 absolute.
        assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    else:
        assert_allclose(got, want, rtol=1e-12, atol=TINY)


@pytest.mark.parametrize("name", list(ref.VARIANTS))
@given(x=score_arrays(max_size=2000), new=score_arrays(max_size=50))
def test_variant_equals_reference(name, x, new):
    if name in M_VARIANTS:
        mu, sigma, _ = reference_fit(name, x)
        assume(sigma == 0 or sigma > 1e-6 * max(abs(mu), float(np.max(np.abs(x)))))
    s = outprob.scaler(name)
    p = s.fit_transform(x)
    assert_probabilities_close(name, p, ref.variant_probabilities(name, x))
    # New scores, including ones outside the fitted range.
    q = s.transform(new)
    assert_probabilities_close(name, q, ref.variant_probabilities(name, x, new))
    assert np.all((p >= 0) & (p <= 1)) and np.all((q >= 0) & (q <= 1))


@pytest.mark.parametrize("name", [n for n in ref.VARIANTS if n not in M_VARIANTS])
@given(x=score_arrays(max_size=2000, dtype=np.float32))
def test_variant_float32_equals_reference(name, x):
    p = outprob.scaler(name).fit_transform(x)
    want = ref.variant_probabilities(name, x.astype(np.float64))
    assert_probabilities_close(name, p, want, dtype=np.float32)


@pytest.mark.parametrize("name", sorted(M_VARIANTS))
@given(x=score_arrays(max_size=800, dtype=np.float32))
def test_m_variant_float32_equals_reference(name, x):
    mu, sigma, _ = reference_fit(name, x.astype(np.float64))
    assume(sigma == 0 or sigma > 1e-6 * max(abs(mu), float(np.max(np.abs(x)))))
    s = outprob.scaler(name)
    p = s.fit_transform(x)
    assert p.dtype == np.float32
    assert_allclose(s.center_, mu, rtol=0, atol=1e-9 * (abs(mu) + sigma))
    # The transform itself, given the fitted numbers, is float32-exact.
    want = ref.gaussian_scaling(x.astype(np.float64), s.center_, s.scale_).astype(np.float32)
    assert_allclose(p, want, rtol=2 * np.finfo(np.float32).eps, atol=0)


CENTERS = ["mean", "median", "trimmed_mean", "huber", "tukey", 0.5]
SCALES = ["std", "nmad", "niqr", "trimmed_std", "huber", "tukey", 2.0]


@pytest.mark.parametrize("center", CENTERS)
@pytest.mark.parametrize("scale", SCALES)
def test_any_center_scale_pair(center, scale):
    rng = np.random.default_rng(7)
    x = np.r_[rng.lognormal(size=500), rng.uniform(30, 60, size=12)]
    s = outprob.GaussianScaler(center, scale, trim=0.2, ddof=1, maxiter=200)
    p = s.fit_transform(x)
    mu = ref.fit_center(x, center, trim=0.2, maxiter=200)
    sigma = ref.fit_scale(x, scale, mu, trim=0.2, ddof=1, maxiter=200)
    assert_allclose(s.center_, mu, rtol=1e-9)
    assert_allclose(s.scale_, sigma, rtol=1e-9)
    assert_allclose(p, ref.gaussian_scaling(x, mu, sigma), rtol=1e-9, atol=1e-12)


@given(x=score_arrays(max_size=500), k=st.integers(1, 4), data=st.data())
def test_two_dimensional_scores_are_fitted_column_wise(x, k, data):
    cols = [x] + [data.draw(score_arrays(min_size=x.size, max_size=x.size)) for _ in range(k - 1)]
    X = np.stack(cols, axis=1)
    for name in ("mean_nmad", "median_niqr", "linear"):
        s2 = outprob.scaler(name).fit(X)
        P = s2.transform(X)
        assert P.shape == X.shape
        for j in range(k):
            s1 = outprob.scaler(name).fit(X[:, j])
            assert_array_equal(P[:, j], s1.transform(X[:, j]))
        assert s2.n_features_in_ == k


def test_two_dimensional_attributes_and_shape_check():
    X = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0], [9.0, 35.0]])
    s = outprob.GaussianScaler("median", "nmad").fit(X)
    assert s.center_.shape == (2,) and s.scale_.shape == (2,)
    assert_array_equal(s.center_, [2.5, 25.0])
    with pytest.raises(ValueError, match="2 score columns"):
        s.transform(X[:, 0])
    huber = outprob.scaler("huber", maxiter=100).fit(X)
    assert huber.n_iter_.dtype.kind == "i" and huber.converged_.dtype == bool


@given(x=score_arrays(max_size=300))
def test_lower_is_outlier_negates(x):
    for name in ("mean_std", "median_nmad", "trimmed_mean_niqr", "linear"):
        a = outprob.scaler(name, higher_is_outlier=False).fit_transform(x)
        b = outprob.scaler(name).fit_transform(-x)
        assert_array_equal(a, b)


def test_monotone_and_bounded():
    x = np.linspace(-5, 20, 1001)
    for name in outprob.VARIANTS:
        p = outprob.scaler(name).fit_transform(x)
        assert np.all(np.diff(p) >= 0), name
        assert p.min() >= 0 and p.max() <= 1


def test_variants_table():
    assert len(outprob.VARIANTS) == 12
    assert set(outprob.VARIANTS) == set(ref.VARIANTS)
    for name, v in outprob.VARIANTS.items():
        s = outprob.scaler(name)
        if v.center is None:
            assert isinstance(s, outprob.LinearScaler)
        else:
            assert isinstance(s, outprob.GaussianScaler)
            assert (s.center, s.scale) == (v.center, v.scale) == ref.VARIANTS[name]
    with pytest.raises(TypeError):
        outprob.VARIANTS["x"] = outprob.VARIANTS["huber"]  # read-only
    with pytest.raises(ValueError, match="mean_nmad"):
        outprob.scaler("mean_nmda")


def test_params_protocol():
    s = outprob.GaussianScaler("median", "nmad", trim=0.2)
    assert s.get_params() == {
        "center": "median", "scale": "nmad", "trim": 0.2, "ddof": 0, "maxiter": 30,
        "tol": 1e-8, "nan_policy": "omit", "higher_is_outlier": True, "threads": None,
        "k": 800, "window": None, "refit_every": None,
        "pretransform": None, "fixed_center": None, "lam": 1.0,
    }  # fmt: skip
    assert s.set_params(scale="niqr") is s and s.scale == "niqr"
    with pytest.raises(ValueError, match="Invalid parameter .sclae."):  # scikit-learn's message
        s.set_params(sclae="std")
    assert repr(s) == "GaussianScaler(center='median', scale='niqr', trim=0.2)"
    assert repr(outprob.LinearScaler()) == "LinearScaler()"


def test_scikit_learn_clone_and_pipeline():
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline

    s = outprob.GaussianScaler("median", "nmad", higher_is_outlier=False)
    c = clone(s)
    assert c.get_params() == s.get_params() and c is not s
    X = np.random.default_rng(0).lognormal(size=(100, 2))
    p = make_pipeline(outprob.GaussianScaler("mean", "nmad")).fit_transform(X)
    assert_array_equal(p, outprob.GaussianScaler("mean", "nmad").fit_transform(X))


def test_not_fitted():
    with pytest.raises(outprob.NotFittedError, match="fit"):
        outprob.GaussianScaler().transform([1.0])
    with pytest.raises(outprob.NotFittedError):
        outprob.LinearScaler().to_dict()


@pytest.mark.parametrize("name", list(outprob.VARIANTS))
@pytest.mark.parametrize("two_d", [False, True])
def test_serialisation_round_trips(name, two_d):
    rng = np.random.default_rng(3)
    x = rng.lognormal(size=(300, 3)) if two_d else rng.lognormal(size=300)
    s = outprob.scaler(name, higher_is_outlier=False).fit(-x)
    new = rng.lognormal(size=x.shape) * 3
    want = s.transform(-new)
    d = json.loads(json.dumps(s.to_dict()))  # survives JSON
    for restored in (outprob.from_dict(d), type(s).from_dict(d), pickle.loads(pickle.dumps(s))):
        assert type(restored) is type(s)
        assert restored.get_params() == s.get_params()
        assert_array_equal(restored.transform(-new), want)


def test_from_dict_rejects_bad_input():
    d = outprob.scaler("mean_nmad").fit([1.0, 2.0, 5.0]).to_dict()
    with pytest.raises(ValueError, match="format"):
        outprob.LinearScaler.from_dict(d)
    with pytest.raises(ValueError, match="version"):
        outprob.from_dict({**d, "version": 99})
    with pytest.raises(ValueError, match="finite"):
        outprob.from_dict({**d, "fitted": {**d["fitted"], "center_": float("nan")}})
    with pytest.raises(ValueError, match="non-negative"):
        outprob.from_dict({**d, "fitted": {**d["fitted"], "scale_": -1.0}})


def test_fixed_center_for_lof():
    # Kriegel et al. fix μ = 1 for LOF; σ is still fitted.
    lof = np.array([0.95, 1.0, 1.02, 0.98, 1.05, 3.0])
    s = outprob.GaussianScaler(center=1.0, scale="std").fit(lof)
    assert s.center_ == 1.0
    assert_allclose(s.scale_, ref.std(lof), rtol=1e-12)
    with pytest.raises(ValueError, match="positive"):
        outprob.GaussianScaler(scale=0.0).fit(lof)
    with pytest.raises(ValueError, match="center"):
        outprob.GaussianScaler(center="average").fit(lof)
    with pytest.raises(TypeError, match="center"):
        outprob.GaussianScaler(center=None).fit(lof)


# A C-contiguous float ndarray takes the latency path of transform (one call
# into the extension); every other input the general path. Both must give
# the reference's numbers, and the same bits.
@pytest.mark.parametrize("name", ["mean_nmad", "linear"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 7, 4095, 4096, 20000])
def test_latency_path_equals_general_path_and_reference(name, dtype, n):
    rng = np.random.default_rng(n)
    fit = rng.lognormal(size=500).astype(dtype)
    x = rng.lognormal(size=n).astype(dtype)
    x[::5] = np.nan
    s = outprob.scaler(name).fit(fit)
    fast = s.transform(x)
    general = s.transform(x, out=np.empty_like(x))
    strided = s.transform(np.repeat(x, 2)[::2])  # not contiguous: general path
    assert fast.dtype == dtype and fast.shape == x.shape
    assert_array_equal(fast, general)
    assert_array_equal(fast, strided)
    params = (s.center_, s.scale_) if name != "linear" else (s.min_, s.max_)
    want = (ref.gaussian_scaling if name != "linear" else ref.linear_scaling)(x.astype(np.float64), *params)
    assert_allclose(fast, want, rtol=1e-6 if dtype == np.float32 else 1e-12, atol=1e-7 if dtype == np.float32 else 1e-15)
    assert_array_equal(x, np.asarray(x))  # untouched
    s2 = outprob.scaler(name).fit(np.column_stack([fit, fit[::-1]]))
    two = np.column_stack([x, x[::-1]])
    assert_array_equal(s2.transform(two), s2.transform(np.asfortranarray(two)))
