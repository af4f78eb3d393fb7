"""The PyOD bridge (contract §7, ``outprob.pyod``): PyOD's own conversions
reproduced to 1e-12 on new data, training probabilities from
decision_scores_ (refitted when they are replaced or changed in place),
ensembles, any object with scores, the missing extra named, and the
pitfall of re-scoring the training data."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

pytest.importorskip("pyod")

from pyod.models.ecod import ECOD  # noqa: E402
from pyod.models.hbos import HBOS  # noqa: E402
from pyod.models.iforest import IForest  # noqa: E402
from pyod.models.knn import KNN  # noqa: E402
from pyod.models.lof import LOF  # noqa: E402

import outprob  # noqa: E402
from outprob.pyod import ScaledDetector, outlier_proba, predict_proba  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")

DETECTORS = {
    "KNN": lambda: KNN(n_neighbors=10),
    "LOF": lambda: LOF(n_neighbors=20),
    "IForest": lambda: IForest(n_estimators=50, random_state=0),
    "HBOS": lambda: HBOS(),
    "ECOD": lambda: ECOD(),
}


def data(seed=0):
    rng = np.random.default_rng(seed)
    train = np.r_[rng.normal(size=(300, 3)), rng.uniform(-6, 6, size=(15, 3))]
    test = np.r_[rng.normal(size=(80, 3)), rng.uniform(-8, 8, size=(20, 3))]
    return train, test


@pytest.fixture(scope="module")
def fitted():
    train, test = data()
    return {name: make().fit(train) for name, make in DETECTORS.items()}, train, test


@pytest.mark.parametrize("name", list(DETECTORS))
@pytest.mark.parametrize("method", ["unify", "linear"])
def test_equals_pyods_own_predict_proba_on_new_data(fitted, name, method):
    detectors, _, test = fitted
    d = detectors[name]
    before = test.copy()
    want = d.predict_proba(test, method=method)  # the oracle: PyOD itself
    got = predict_proba(d, test, method)
    assert got.shape == want.shape == (len(test), 2)
    assert_allclose(got, want, rtol=0, atol=1e-12)
    assert 0 < got[:, 1].max() and got[:, 1].min() < 1  # not a degenerate case
    assert_array_equal(test, before)  # the input is never modified


@pytest.mark.parametrize("name", list(DETECTORS))
def test_training_probabilities_come_from_decision_scores(fitted, name):
    detectors, _, _ = fitted
    d = detectors[name]
    scores = d.decision_scores_.copy()
    p = ScaledDetector(d, "median_nmad").predict_proba()
    want = outprob.scaler("median_nmad").fit_transform(d.decision_scores_)
    assert_array_equal(p[:, 1], want)
    assert_array_equal(p[:, 0], 1 - want)
    assert_array_equal(d.decision_scores_, scores)


def test_scaling_of_new_data_uses_the_training_fit(fitted):
    detectors, _, test = fitted
    d = detectors["KNN"]
    s = outprob.GaussianScaler("trimmed_mean", "nmad").fit(d.decision_scores_)
    got = outlier_proba(d, test, outprob.GaussianScaler("trimmed_mean", "nmad"))
    assert_array_equal(got, s.transform(d.decision_function(test)))


def test_rescoring_the_training_data_is_the_documented_pitfall(fitted):
    # kNN re-scores each training point with itself as a neighbour: lower
    # scores, different probabilities than decision_scores_ gives.
    detectors, train, _ = fitted
    knn = detectors["KNN"]
    right = ScaledDetector(knn, "mean_nmad").outlier_proba()
    rescored = ScaledDetector(knn, "mean_nmad").outlier_proba(train)
    assert np.all(knn.decision_function(train) <= knn.decision_scores_ + 1e-12)
    assert np.max(np.abs(right - rescored)) > 0.05


def test_ensemble_of_detectors(fitted):
    detectors, _, test = fitted
    ds = [detectors[n] for n in ("KNN", "LOF", "IForest")]
    P = outlier_proba(ds, test, "mean_nmad")
    assert P.shape == (len(test), 3)
    for j, d in enumerate(ds):
        assert_array_equal(P[:, j], outlier_proba(d, test, "mean_nmad"))
    assert_array_equal(outlier_proba(ds, test, combine="mean"), P.mean(axis=1))
    mx = predict_proba(ds, test, combine="max")
    assert_array_equal(mx[:, 1], P.max(axis=1))
    assert_array_equal(mx[:, 0], 1 - P.max(axis=1))
    assert outlier_proba(ds, None, combine="mean").shape == (315,)
    with pytest.raises(ValueError, match="combine"):
        predict_proba(ds, test)
    with pytest.raises(ValueError, match="combine"):
        outlier_proba(ds, test, combine="median")


def test_refitted_detector_refits_the_scaling():
    train, test = data(1)
    knn = KNN().fit(train)
    scaled = ScaledDetector(knn, "linear")
    first = scaled.outlier_proba(test)
    knn.fit(train * 3)
    second = scaled.outlier_proba(test)
    assert_array_equal(second, predict_proba(knn, test, "linear")[:, 1])
    assert not np.array_equal(first, second)
    # fit(X) fits the detector too.
    fresh = ScaledDetector(KNN(), "linear").fit(train)
    assert_array_equal(fresh.outlier_proba(test), outlier_proba(KNN().fit(train), test, "linear"))
    assert isinstance(fresh.scalers_[0], outprob.LinearScaler)


def test_bad_detectors_and_methods():
    train, test = data(2)
    with pytest.raises(outprob.NotFittedError, match="fit the detector first"):
        predict_proba(KNN(), test)
    with pytest.raises(TypeError, match="decision_function"):
        predict_proba(object(), test)
    knn = KNN().fit(train)
    with pytest.raises(ValueError, match="unknown method 'mean_nmda'"):
        predict_proba(knn, test, "mean_nmda")
    with pytest.raises(TypeError, match="method"):
        predict_proba(knn, test, 3)


def test_any_object_with_scores_works():
    class Detector:
        decision_scores_ = np.array([1.0, 1.2, 0.9, 1.1, 6.0])

        def decision_function(self, X):
            return np.asarray(X, dtype=float).sum(axis=1)

    X = np.array([[0.5, 0.5], [3.0, 4.0]])
    want = outprob.scaler("mean_nmad").fit(Detector.decision_scores_).transform(X.sum(axis=1))
    assert_array_equal(predict_proba(Detector(), X)[:, 1], want)


def test_missing_pyod_is_a_clear_import_error():
    code = (
        "import sys\n"
        "sys.modules['pyod'] = None\n"
        "try:\n"
        "    import outprob.pyod\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "pip install 'outprob[pyod]'" in run.stdout, run.stdout + run.stderr


class _Detector:
    """The least a detector is (contract §7): training scores and a scorer."""

    def __init__(self, scores):
        self.decision_scores_ = np.asarray(scores, dtype=float)

    def decision_function(self, X):
        return np.asarray(X, dtype=float).reshape(-1)


def test_scaled_detector_notices_scores_changed_in_place():
    from outprob.pyod import ScaledDetector

    d = _Detector(np.arange(20.0))
    scaled = ScaledDetector(d, "mean_std")
    before = scaled.outlier_proba()
    d.decision_scores_ *= 3.0
    d.decision_scores_[-1] = 1000.0
    want = ScaledDetector(_Detector(d.decision_scores_.copy()), "mean_std").outlier_proba()
    got = scaled.outlier_proba()
    assert not np.array_equal(got, before)
    assert np.array_equal(got, want)
