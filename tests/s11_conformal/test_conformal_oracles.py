"""Contract §11 against nonconform (Python >= 3.12, run in its own
environment by ``tests/nonconform_oracle.py``; ``scripts/dev.py test`` makes
it and sets ``OUTPROB_NONCONFORM_PYTHON``) and the PyOD bridge
``outprob.pyod.conformal`` against real PyOD detectors.

What matches nonconform 2.0.0:

* ``Empirical`` (split conformal, classical ties): equal to 1e-12, and its
  ``Split`` and ``CrossValidation`` ("plus", median) strategies equal
  ``outprob.pyod.conformal(split=…/cv=…)`` on one deterministic detector;
* ``ConditionalEmpirical(method="dkwm")``: the paper's formula, equal;
* ``method="simes"`` and the Monte Carlo map given the same correction γ:
  the paper's sequences, equal wherever nonconform finds the rank i of
  p = i/(n + 1) — it computes ``floor((n + 1)(1 − p))`` in floating point,
  which for about a fifth of the ranks rounds to one less, and then returns
  b_{i+1} (more conservative than the paper's b_i); those are checked to be
  exactly b_{i+1};
* the Monte Carlo correction γ: the same definition estimated from other
  random draws (nonconform: NumPy's generator and a bisection), equal
  within the simulations' error.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import outprob
import outprob.reference.conformal as rc

from .. import nonconform_run
from ..nonconform_oracle import ToyKnn

N, DELTAS = 1000, (0.05, 0.1)


@pytest.fixture(scope="module")
def nc(tmp_path_factory):
    python = nonconform_run.interpreter()
    rng = np.random.default_rng(24)
    data = {
        "cal": np.round(rng.normal(size=N), 2),  # ties
        "test": np.round(rng.normal(size=3000) * 1.5, 2),
        "train": rng.normal(size=(300, 2)),
        "xtest": np.r_[rng.normal(size=(40, 2)), rng.normal(4, 1, size=(10, 2))],
    }
    data["marginal"] = outprob.ConformalScaler().fit(data["cal"]).pvalues(data["test"])
    gammas = {d: float(outprob.ConformalScaler(conditional="mc", delta=d, seed=1).fit(data["cal"]).mc_correction_)
              for d in DELTAS}
    jobs = [{"kind": "empirical", "name": "empirical", "cal": "cal", "test": "test"}]
    for d in DELTAS:
        for m in ("simes", "dkwm"):
            jobs.append({"kind": "conditional", "name": f"{m}_{d}", "method": m, "delta": d,
                         "cal": "cal", "test": "test"})
        jobs.append({"kind": "calibrate", "name": f"mc_{d}", "method": "mc", "delta": d, "n": N,
                     "p": "marginal", "fs_correction": gammas[d]})
        jobs.append({"kind": "fs_correction", "name": f"gamma_{d}", "delta": d, "n": N,
                     "n_mc": 10_000, "seed": 3})
    for seed in (0, 7):
        jobs.append({"kind": "split", "name": f"split_{seed}", "split": 0.3, "n_neighbors": 5,
                     "seed": seed, "train": "train", "test": "xtest"})
        jobs.append({"kind": "cv", "name": f"cv_{seed}", "k": 4, "n_neighbors": 5, "seed": seed,
                     "train": "train", "test": "xtest"})
    return data, nonconform_run.run(python, tmp_path_factory, data, jobs), gammas


def test_empirical_pvalues_equal_nonconform(nc):
    data, out, _ = nc
    assert_allclose(data["marginal"], out["empirical"], rtol=1e-12, atol=0)


@pytest.mark.parametrize("delta", DELTAS)
def test_dkwm_equals_nonconform(nc, delta):
    data, out, _ = nc
    ours = outprob.ConformalScaler(conditional="dkwm", delta=delta).fit(data["cal"]).pvalues(data["test"])
    assert_allclose(ours, out[f"dkwm_{delta}"], rtol=1e-12, atol=0)


def _split_by_nonconform_rank(p: np.ndarray) -> tuple:
    """Ranks i = (n + 1)p, and where nonconform's floating-point index
    floor((n + 1)(1 − p)) misses n + 1 − i."""
    rank = np.rint((N + 1) * p).astype(int)
    index = np.floor((N + 1) * (1.0 - p)).astype(int)
    return rank, (index != N + 1 - rank) & (rank <= N)


@pytest.mark.parametrize("delta", DELTAS)
@pytest.mark.parametrize("method", ["simes", "mc"])
def test_simes_and_monte_carlo_maps_equal_nonconform_where_it_finds_the_rank(nc, delta, method):
    data, out, gammas = nc
    kw = {"seed": 1} if method == "mc" else {}
    ours = outprob.ConformalScaler(conditional=method, delta=delta, **kw).fit(data["cal"]).pvalues(data["test"])
    theirs = out[f"{method}_{delta}"]
    rank, missed = _split_by_nonconform_rank(data["marginal"])
    assert 0.05 < missed.mean() < 0.5  # the rounding is common
    assert_allclose(ours[~missed], theirs[~missed], rtol=1e-12, atol=1e-15)
    b = (rc.simes_sequence(N, delta, N // 2) if method == "simes"
         else rc.hybrid_sequence(N, delta, gammas[delta]))
    assert_allclose(theirs[missed], np.r_[b, 1.0][rank[missed]], rtol=1e-12)  # b_{i+1}
    assert np.all(theirs[missed] >= ours[missed])


@pytest.mark.parametrize("delta", DELTAS)
def test_monte_carlo_correction_agrees_with_nonconform(nc, delta):
    """Both estimate the γ at which the boundary is crossed with
    probability δ, from 10⁴ simulations each: the crossing probability
    at either's γ, measured on a third set of simulations, is δ within
    its binomial error."""
    data, out, gammas = nc
    ours, theirs = gammas[delta], float(out[f"gamma_{delta}"][0])
    assert abs(ours - theirs) < 0.05
    u = np.sort(np.random.default_rng(99).uniform(size=(4000, N)), axis=1)
    # Five standard errors of the measurement and of each estimate.
    tolerance = 5 * np.sqrt(delta * (1 - delta)) * (1 / np.sqrt(4000) + 1 / np.sqrt(10_000))
    for g in (ours, theirs):
        crossing = np.mean((u > rc.hybrid_sequence(N, delta, g)).any(axis=1))
        assert abs(crossing - delta) < tolerance, (g, crossing)


@pytest.mark.parametrize("seed", [0, 7])
def test_split_and_cross_conformal_equal_nonconform(nc, seed):
    pytest.importorskip("pyod")
    from outprob.pyod import conformal

    data, out, _ = nc
    split = conformal(ToyKnn(5), data["train"], split=0.3, random_state=seed)
    assert_allclose(split.pvalues(data["xtest"]), out[f"split_{seed}"], rtol=1e-12, atol=0)
    cv = conformal(ToyKnn(5), data["train"], cv=4, random_state=seed)
    assert_allclose(cv.pvalues(data["xtest"]), out[f"cv_{seed}"], rtol=1e-12, atol=0)


def test_pyod_bridge_with_pyod_detectors():
    pytest.importorskip("pyod")
    from pyod.models.iforest import IForest
    from pyod.models.knn import KNN

    from outprob.pyod import conformal

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    X_new = np.r_[rng.normal(size=(90, 3)), rng.normal(5, 1, size=(10, 3))]
    for det in (KNN(), IForest(n_estimators=50)):
        m = conformal(det, X, split=0.5, random_state=1)
        d = m.detectors_[0]
        cal = X[m.calibration_indices_]
        assert_allclose(m.pvalues(X_new), rc.pvalues(d.decision_function(cal), d.decision_function(X_new)))
        sel = m.select(X_new, alpha=0.1)
        assert np.sum(sel.indices >= 90) >= 8 and np.sum(sel.indices < 90) <= 5
        cv = conformal(det, X, cv=3, random_state=1)
        assert len(cv.detectors_) == 3 and cv.scaler_.n_calibration_ == 400
        scores = np.median([m_.decision_function(X_new) for m_ in cv.detectors_], axis=0)
        assert_allclose(cv.pvalues(X_new), rc.pvalues(np.sort(cv.scaler_.sorted_), scores))
    with pytest.raises(ValueError, match="not both"):
        conformal(KNN(), X, split=0.5, cv=3)
    # The detector passed in stays unfitted.
    det = KNN()
    conformal(det, X)
    assert not hasattr(det, "decision_scores_")

