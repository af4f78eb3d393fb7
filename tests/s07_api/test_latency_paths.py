"""The latency paths of the scalers (contract §7: the scalers' values and
fitted attributes, parameters changed after ``fit``; §4 for the maps):
``fit_transform`` of a plain 1-D float ndarray fits and maps in one
extension call (``_core.fit_transform_gaussian`` / ``_linear``), and
``transform`` of one maps through the fit's ``_core.FittedMap`` in one
call. Both must behave exactly as the general path — the same numbers
(against the reference), the same fitted attributes, the same warnings
pointing at the caller — and must notice every parameter or output
setting changed after the fit."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import outprob
import outprob.reference as ref
from outprob import _core

NAMES = list(ref.VARIANTS) + ["linear"]


def _reference(name, x, new=None):
    if name == "linear":
        fit = x[~np.isnan(x)]
        return ref.linear_scaling(x if new is None else new, float(fit.min()), float(fit.max()))
    return ref.variant_probabilities(name, x, new)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("higher_is_outlier", [True, False])
def test_planned_fit_transform_equals_the_general_path_and_the_reference(
    name, dtype, higher_is_outlier, monkeypatch
):
    rng = np.random.default_rng(7)
    x = rng.lognormal(size=300).astype(dtype)
    x[::17] = np.nan
    planned = outprob.scaler(name).set_params(higher_is_outlier=higher_is_outlier)
    general = outprob.scaler(name).set_params(higher_is_outlier=higher_is_outlier)
    fused = "fit_transform_linear" if name == "linear" else "fit_transform_gaussian"
    calls = []
    original = getattr(_core, fused)
    monkeypatch.setattr(_core, fused, lambda *a, **k: calls.append(1) or original(*a, **k))
    p = planned.fit_transform(x)
    assert calls == [1]  # one extension call fitted and mapped
    q = general.fit_transform(list(x))  # a list: converted, the general path
    assert calls == [1]
    assert p.dtype == dtype and p.shape == x.shape
    assert_array_equal(np.isnan(p), np.isnan(x))
    assert planned._state.attributes.keys() == general._state.attributes.keys()
    for key, value in planned._state.attributes.items():
        assert value == general._state.attributes[key], key
    assert_allclose(p, q.astype(dtype), rtol=0, atol=0)
    oriented = x.astype(np.float64) if higher_is_outlier else -x.astype(np.float64)
    want = _reference(name, oriented)
    tol = dict(rtol=2e-6, atol=1e-7) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-9)
    assert_allclose(p, want, **tol)
    # The fit it published maps new scores as fit() would.
    new = rng.lognormal(size=5).astype(dtype)
    assert_array_equal(planned.transform(new), outprob.scaler(name).set_params(
        higher_is_outlier=higher_is_outlier).fit(x).transform(new))


def test_planned_fit_transform_warns_at_the_caller():
    tied = np.array([1.0] * 8 + [2.0, 3.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outprob.GaussianScaler(center="median", scale="nmad").fit_transform(tied)
        outprob.GaussianScaler(center="huber", scale="huber", maxiter=1).fit_transform(
            np.random.default_rng(0).lognormal(size=200)
        )
        outprob.GaussianScaler().fit_transform(np.full(5, 3.0))
    kinds = [type(w.message) for w in caught]
    assert kinds == [outprob.ZeroScaleWarning, outprob.ConvergenceWarning, outprob.ZeroScaleWarning]
    assert all(w.filename == __file__ for w in caught)
    s = outprob.GaussianScaler(center="huber", scale="huber", maxiter=1)
    with pytest.warns(outprob.ConvergenceWarning):
        s.fit_transform(np.random.default_rng(0).lognormal(size=200))
    assert s.converged_ is False and s.n_iter_ == 1


def test_planned_fit_transform_refuses_bad_scores_and_parameters_as_fit_does():
    for bad in (np.array([1.0, np.inf]), np.array([], dtype=float), np.array([np.nan, np.nan])):
        with pytest.raises(ValueError) as planned:
            outprob.GaussianScaler().fit_transform(bad)
        with pytest.raises(ValueError) as general:
            outprob.GaussianScaler().fit(list(bad))
        assert str(planned.value) == str(general.value)
    with pytest.raises(ValueError, match="trim"):
        outprob.GaussianScaler(center="trimmed_mean", trim=1.5).fit_transform(np.arange(5.0))
    with pytest.raises(ValueError, match="NaN"):
        outprob.GaussianScaler(nan_policy="raise").fit_transform(np.array([1.0, np.nan, 2.0]))


def test_parameters_set_after_a_fit_take_effect():
    x = np.random.default_rng(1).lognormal(size=100)
    s = outprob.GaussianScaler()
    s.fit_transform(x)
    p = s.transform(x)
    # A parameter of the map: transform applies it (the general path).
    s.set_params(lam=2.0)
    assert_allclose(s.transform(x), ref.gaussian_scaling(x, s.center_, 2.0 * s.scale_), rtol=1e-12, atol=1e-15)
    # A parameter of the fit: the next fit_transform uses it.
    s.set_params(lam=1.0, center="median", scale="nmad")
    assert_allclose(s.fit_transform(x), ref.variant_probabilities("median_nmad", x), rtol=1e-12, atol=1e-15)
    s.higher_is_outlier = False  # plain assignment, as scikit-learn allows
    assert_allclose(s.fit_transform(x), ref.variant_probabilities("median_nmad", -x), rtol=1e-12, atol=1e-15)
    # An output setting after the fit.
    pd = pytest.importorskip("pandas")
    s.set_output(transform="pandas")
    assert isinstance(s.transform(x), pd.Series)
    assert isinstance(s.fit_transform(x), pd.Series)
    s.set_output(transform="default")
    assert isinstance(s.transform(x), np.ndarray) and p.shape == x.shape


def test_global_output_setting_is_read_at_every_call():
    pd = pytest.importorskip("pandas")
    import sklearn

    x = np.random.default_rng(2).lognormal(size=50)
    s = outprob.GaussianScaler()
    s.fit_transform(x)
    with sklearn.config_context(transform_output="pandas"):
        assert isinstance(s.transform(x), pd.Series)
        assert isinstance(s.fit_transform(x), pd.Series)
    assert isinstance(s.transform(x), np.ndarray)


def test_transform_leaves_the_estimator_as_it_was_and_caches_are_not_pickled():
    x = np.random.default_rng(3).lognormal(size=50)
    s = outprob.GaussianScaler().fit(x)
    before = dict(s.__dict__)
    s.transform(x)
    s.transform(x[:1])
    assert s.__dict__ == before
    s.fit_transform(x)
    data = s.__getstate__()
    # The pickle holds no extension object: the fitted map is made anew
    # from the fitted attributes.
    assert not any(type(v).__module__ == "outprob._core" for v in data.values())
    back = pickle.loads(pickle.dumps(s))
    assert_array_equal(back.transform(x), s.transform(x))
    assert_array_equal(back.fit_transform(x), s.fit_transform(x))


def test_transform_maps_with_the_fit_the_scaler_shows():
    # Fits published one after another (as threads may): the map transform
    # applies is the one published with the attributes the scaler shows.
    x = np.random.default_rng(4).lognormal(size=50)
    s = outprob.GaussianScaler().fit(x)
    s.fit(2.0 * x)
    assert_allclose(s.transform(x), ref.gaussian_scaling(x, s.center_, s.scale_), rtol=1e-12, atol=1e-15)
    s.fit_transform(3.0 * x)
    assert_allclose(s.transform(x), ref.gaussian_scaling(x, s.center_, s.scale_), rtol=1e-12, atol=1e-15)


# A C-contiguous float ndarray takes the latency path of transform (one call
# into the extension); every other input the general path. Both must give
# the reference's numbers, and the same bits.
@pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")
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


# Parameter checks are kept per parameter set, found by the very objects:
# a value equal to the one checked but of another type (30.0 == 30,
# 1 == True, False == 0) is a new parameter set, checked as fit checks it.
@pytest.mark.parametrize(("name", "value", "message"), [
    ("maxiter", 30.0, "maxiter must be an integer"),
    ("higher_is_outlier", 1, "higher_is_outlier must be a bool"),
    ("ddof", False, "ddof must be an integer"),
])
def test_equal_parameters_of_another_type_are_checked_again(name, value, message):
    x = np.random.default_rng(5).lognormal(size=100)
    for _ in range(2):  # the second call finds the parameter set checked
        outprob.GaussianScaler("mean", "nmad").fit_transform(x)
    s = outprob.GaussianScaler("mean", "nmad")
    s.fit_transform(x)
    setattr(s, name, value)
    with pytest.raises(TypeError, match=message):
        s.fit_transform(x)
    with pytest.raises(TypeError, match=message):
        outprob.GaussianScaler("mean", "nmad", **{name: value}).fit_transform(x)
    streamed = outprob.GaussianScaler("mean", "std")
    for _ in range(3):
        streamed.partial_fit(x)
    setattr(streamed, name, value)
    with pytest.raises(TypeError, match=message):
        streamed.partial_fit(x)
    assert streamed.n_samples_seen_ == 300  # the refused batch is not kept


# contract §4: a 1-D Gaussian or linear fit's map, made from its two
# parameters (FittedMap.one_column) or from its state, is the same map.
@pytest.mark.parametrize(("kind", "params", "formula"), [
    ("gaussian", [1.5, 0.25], lambda x, neg: ref.gaussian_scaling(-x if neg else x, 1.5, 0.25)),
    ("linear", [-1.0, 3.0], lambda x, neg: ref.linear_scaling(-x if neg else x, -1.0, 3.0)),
])
@pytest.mark.parametrize("negate", [False, True])
def test_one_column_map_is_the_map_of_its_state(kind, params, formula, negate):
    names = {"gaussian": ("center", "scale"), "linear": ("min", "max")}[kind]
    state = {"kind": kind, "negate": negate, "two_d": False, "pretransform": None,
             "params": {n: [v] for n, v in zip(names, params)}, "sorted": None}
    made = _core.FittedMap.one_column(kind, negate, params)
    assert made.state() == _core.FittedMap(state).state()
    # Its parameters, read back as the fused fit_transform publishes them.
    assert made.column(0) == params == [made.state()["params"][n][0] for n in names]
    with pytest.raises(ValueError, match="column 1"):
        made.column(1)
    x = np.random.default_rng(6).normal(1.0, 2.0, size=257)
    assert_array_equal(made.transform(x), _core.FittedMap(state).transform(x))
    assert_allclose(made.transform(x), formula(x, negate), rtol=1e-12, atol=1e-15)
    bad = [1.5, -0.25] if kind == "gaussian" else [3.0, -1.0]
    with pytest.raises(ValueError):
        _core.FittedMap.one_column(kind, negate, bad)
    with pytest.raises(ValueError):
        _core.FittedMap.one_column(kind, negate, params[:1])
