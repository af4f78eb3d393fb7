"""The scalers' scikit-learn protocol (contract §7): fitted attributes of
shape (k,) for k columns and the "expecting k features" check,
``get_params``/``set_params`` and scikit-learn's messages, ``repr`` of
changed parameters, ``clone`` and pipelines, ``NotFittedError``."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import outprob

pytestmark = pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")


def test_two_dimensional_attributes_and_shape_check():
    X = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0], [9.0, 35.0]])
    s = outprob.GaussianScaler("median", "nmad").fit(X)
    assert s.center_.shape == (2,) and s.scale_.shape == (2,)
    assert_array_equal(s.center_, [2.5, 25.0])
    with pytest.raises(ValueError, match="2 score columns"):
        s.transform(X[:, 0])
    huber = outprob.scaler("huber", maxiter=100).fit(X)
    assert huber.n_iter_.dtype.kind == "i" and huber.converged_.dtype == bool


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


@pytest.mark.parametrize("name", sorted(outprob.TRANSFORMATIONS))
def test_scaler_by_name_is_a_fresh_scaler_at_every_call(name):
    # contract §7: outprob.scaler(name) makes an unfitted scaler of the
    # name's class and fixed parameters — the same on a later call without
    # parameters as with them, and never a scaler made before.
    first = outprob.scaler(name)
    first.set_params(nan_policy="raise")
    again = outprob.scaler(name)
    assert again is not first
    assert again.get_params() == outprob.scaler(name, nan_policy="omit").get_params()
    assert again.nan_policy == "omit" and not hasattr(again, "n_features_in_")
    assert type(again) is type(first) and repr(again) == repr(outprob.scaler(name, **{}))
