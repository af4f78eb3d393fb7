"""ExCeeD confidence (contract §10): outprob.pyod.predict_confidence equals
PyOD's own BaseDetector.predict_confidence to 1e-12."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("pyod")

from pyod.models.base import BaseDetector  # noqa: E402
from pyod.models.pca import PCA  # noqa: E402
from pyod.models.iforest import IForest  # noqa: E402
from pyod.models.knn import KNN  # noqa: E402
from pyod.models.lof import LOF  # noqa: E402

from outprob.pyod import predict_confidence  # noqa: E402


def data(seed: int, n: int = 300, m: int = 120):
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal(size=(n, 3)), rng.normal(4, 1, size=(n // 20, 3))]
    new = np.r_[rng.normal(size=(m, 3)), rng.normal(3, 2, size=(m // 4, 3)), X[:10]]
    return X, new


@pytest.mark.parametrize("make", [
    lambda c: KNN(contamination=c), lambda c: LOF(contamination=c),
    lambda c: IForest(n_estimators=20, contamination=c, random_state=0), lambda c: PCA(contamination=c),
])  # fmt: skip
@pytest.mark.parametrize("contamination", [0.01, 0.1, 0.25, 0.5])
def test_equals_pyod(make, contamination):
    X, new = data(int(contamination * 100))
    det = make(contamination).fit(X)
    want = det.predict_confidence(new)
    got = predict_confidence(det, new)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert np.all((got >= 0) & (got <= 1))


class Fake:
    """The attributes predict_confidence reads, with chosen scores."""

    def __init__(self, train, test, contamination, threshold):
        self.decision_scores_ = np.asarray(train, dtype=float)
        self._test = np.asarray(test, dtype=float)
        self.contamination = contamination
        self.threshold_ = threshold
        self.labels_ = (self.decision_scores_ > threshold).astype(int)

    def decision_function(self, X):
        return self._test


@given(
    train=st.lists(st.integers(0, 6).map(float), min_size=1, max_size=60),
    test=st.lists(st.integers(-1, 7).map(float) | st.just(np.nan), min_size=1, max_size=40),
    contamination=st.floats(0.0, 0.5),
    threshold=st.integers(0, 6).map(float),
)
def test_ties_nan_and_tiny_n_as_pyod(train, test, contamination, threshold):
    fake = Fake(train, test, contamination, threshold)
    want = _pyod_unchecked(fake)
    np.testing.assert_allclose(predict_confidence(fake, None), want, rtol=0, atol=1e-12)


def _pyod_unchecked(fake):
    """PyOD's method without its check_is_fitted (a Fake is no estimator)."""
    import pyod.models.base as base

    original = base.check_is_fitted
    base.check_is_fitted = lambda *a, **k: None
    try:
        return BaseDetector.predict_confidence(fake, None)
    finally:
        base.check_is_fitted = original


def test_refuses_unfitted_detectors():
    import outprob

    with pytest.raises(outprob.NotFittedError):
        predict_confidence(KNN(), np.zeros((2, 3)))
    with pytest.raises(TypeError):
        predict_confidence(object(), np.zeros((2, 3)))


def test_predict_confidence_takes_any_real_contamination():
    pytest.importorskip("pyod")
    from pyod.models.knn import KNN

    from outprob.pyod import predict_confidence

    X = np.r_[np.random.default_rng(1).normal(size=(100, 2)), [[5.0, 5.0]]]
    new = np.array([[0.0, 0.0], [1.5, 1.5], [4.0, 4.0]])
    for gamma in (0.1, 0.05):
        knn = KNN(contamination=gamma).fit(X)
        want = knn.predict_confidence(new)  # PyOD takes builtin numbers only
        for same in (np.float32(gamma), np.float64(gamma)):
            knn.contamination = same
            assert np.allclose(predict_confidence(knn, new), want, rtol=0, atol=1e-12)
