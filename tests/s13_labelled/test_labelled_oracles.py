"""Contract §13 against nonconform 2.0.0 (Python >= 3.12, its own
environment, ``tests/nonconform_oracle.py``; ``scripts/dev.py test`` sets
``OUTPROB_NONCONFORM_PYTHON``).

What matches nonconform 2.0.0:

* weighted p-values (``calculate_weighted_p_val``, classical ties) on tied
  scores and uneven weights: equal to 1e-12;
* the classifier weights of ``logistic_weight_estimator`` (same shuffle,
  same pipeline, clipping) against ``outprob.pyod.covariate_shift_weights``:
  equal to 1e-8, and the PyOD bridge's ``pvalues(X, shift=True)`` equal to
  nonconform's ``ConformalDetector`` with ``Split`` and that weight
  estimator (same seed) to 1e-8;
* Label-Trim: nonconform 2.0.0 ships no cleaning module (its Label-Trim
  is in an unreleased branch); the p-values after ``fit(exclude=)`` equal
  its ``Empirical`` p-values on the kept calibration scores to 1e-12.

Integrative p-values have no released nonconform counterpart; they are
held to the paper's definition in ``test_integrative.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import outprob
from outprob.pyod import covariate_shift_weights

from .. import nonconform_run


@pytest.fixture(scope="module")
def nc(tmp_path_factory):
    python = nonconform_run.interpreter()
    rng = np.random.default_rng(13)
    cal = np.round(rng.normal(size=500), 1)
    labels = rng.random(500) < 0.08
    cal[labels] += 3.0
    data = {
        "cal": cal,
        "cal_w": rng.choice([0.2, 1.0, 2.5], size=500),
        "test": np.round(rng.normal(size=2000) * 1.3, 1),
        "test_w": rng.gamma(2.0, 0.5, size=2000),
        "xcal": rng.normal(size=(300, 3)),
        "xtest": rng.normal(0.7, 1.0, size=(200, 3)),
    }
    cand = outprob.label_trim_candidates(cal, 60)
    drop = cand[labels[cand]]
    keep = np.ones(500, bool)
    keep[drop] = False
    data["kept"] = cal[keep]
    data["drop"] = drop
    jobs = [
        {"kind": "weighted", "name": "weighted", "cal": "cal", "cal_w": "cal_w", "test": "test",
         "test_w": "test_w"},
        {"kind": "empirical", "name": "label_trim", "cal": "kept", "test": "test"},
    ]
    data["train"] = rng.normal(size=(300, 2))
    data["xshift"] = np.r_[rng.normal(0.8, 1.0, size=(40, 2)), rng.normal(4, 1, size=(10, 2))]
    for seed in (0, 5):
        jobs.append({"kind": "split_weighted", "name": f"bridge_{seed}", "split": 0.3, "n_neighbors": 5,
                     "seed": seed, "train": "train", "test": "xshift"})
        jobs.append({"kind": "weight_estimator", "name": f"lr_{seed}", "cal": "xcal", "test": "xtest",
                     "seed": seed})
    return data, nonconform_run.run(python, tmp_path_factory, data, jobs)


def test_weighted_pvalues_equal_nonconform(nc):
    data, out = nc
    s = outprob.ConformalScaler().fit(data["cal"], weights=data["cal_w"])
    assert_allclose(s.pvalues(data["test"], weights=data["test_w"]), out["weighted"], rtol=1e-12, atol=0)


def test_label_trim_equals_nonconform_on_the_kept_scores(nc):
    data, out = nc
    s = outprob.ConformalScaler().fit(data["cal"], exclude=data["drop"])
    assert_allclose(s.pvalues(data["test"]), out["label_trim"], rtol=1e-12, atol=0)


@pytest.mark.parametrize("seed", [0, 5])
def test_classifier_weights_equal_nonconform(nc, seed):
    data, out = nc
    w_cal, w_test = covariate_shift_weights(data["xcal"], data["xtest"], random_state=seed)
    assert_allclose(w_cal, out[f"lr_{seed}_cal"], rtol=1e-8)
    assert_allclose(w_test, out[f"lr_{seed}_test"], rtol=1e-8)


@pytest.mark.parametrize("seed", [0, 5])
def test_pyod_bridge_shift_equals_nonconform_weighted_detector(nc, seed):
    from outprob.pyod import conformal

    from ..nonconform_oracle import ToyKnn

    data, out = nc
    model = conformal(ToyKnn(5), data["train"], split=0.3, random_state=seed)
    got = model.pvalues(data["xshift"], shift=True, random_state=seed)
    assert_allclose(got, out[f"bridge_{seed}"], rtol=1e-8)
