"""nonconform as a test oracle of contracts §11, §12 and §13 (its p-values,
its exchangeability martingales, its weighted p-values and weights), run in its own environment.

nonconform needs Python >= 3.12 (``scripts/dev.py`` makes that environment
and passes its interpreter in ``OUTPROB_NONCONFORM_PYTHON``). The tests
write their inputs to an ``.npz`` file with a JSON list of jobs, run
``python nonconform_oracle.py IN OUT`` there, and compare outprob's values
with the ``.npz`` of results. :class:`ToyKnn` is importable from both
sides (NumPy and scikit-learn only), so that split- and cross-conformal
p-values of one deterministic detector can be compared.
"""

from __future__ import annotations

import json
import sys

import numpy as np
from sklearn.base import BaseEstimator


class ToyKnn(BaseEstimator):
    """Mean distance to the k nearest training points (deterministic)."""

    def __init__(self, n_neighbors: int = 3, random_state: object = None) -> None:
        self.n_neighbors = n_neighbors
        self.random_state = random_state

    def fit(self, X: np.ndarray, y: object = None) -> "ToyKnn":
        self.train_ = np.asarray(X, dtype=float)
        return self

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        d = np.sqrt(((X[:, None, :] - self.train_[None, :, :]) ** 2).sum(axis=2))
        return np.sort(d, axis=1)[:, : self.n_neighbors].mean(axis=1)


def _run(job: dict, data: dict) -> dict:
    import nonconform
    from nonconform._internal import conditional_calibration as cc

    kind = job["kind"]
    if kind == "empirical":
        p = nonconform.Empirical().compute_p_values(data[job["test"]], data[job["cal"]])
        return {job["name"]: p}
    if kind == "conditional":
        from nonconform.scoring import ConditionalEmpirical

        est = ConditionalEmpirical(delta=job["delta"], method=job["method"])
        return {job["name"]: est.compute_p_values(data[job["test"]], data[job["cal"]])}
    if kind == "calibrate":
        p, _ = cc.calibrate_conditional_p_values(
            data[job["p"]], n_calibration=job["n"], delta=job["delta"], method=job["method"],
            fs_correction=job.get("fs_correction"),
        )
        return {job["name"]: p}
    if kind == "fs_correction":
        rng = np.random.default_rng(job["seed"])
        g = cc.estimate_fs_correction(job["delta"], job["n"], n_mc=job["n_mc"], rng=rng)
        return {job["name"]: np.array([g])}
    if kind == "split_weighted":
        det = nonconform.ConformalDetector(
            ToyKnn(job["n_neighbors"]), nonconform.Split(n_calib=job["split"]),
            estimation=nonconform.Empirical(), score_polarity="higher_is_anomalous",
            weight_estimator=nonconform.logistic_weight_estimator(), seed=job["seed"],
        )
        det.fit(data[job["train"]])
        return {job["name"]: det.compute_p_values(data[job["test"]])}
    if kind in ("split", "cv"):
        if kind == "split":
            strategy = nonconform.Split(n_calib=job["split"])
        else:
            strategy = nonconform.CrossValidation(k=job["k"])
        det = nonconform.ConformalDetector(
            ToyKnn(job["n_neighbors"]), strategy, estimation=nonconform.Empirical(),
            score_polarity="higher_is_anomalous", seed=job["seed"],
        )
        det.fit(data[job["train"]])
        return {job["name"]: det.compute_p_values(data[job["test"]])}
    if kind == "storey":
        from nonconform._internal import p_value_selection as sel

        pi0 = sel.storey_null_proportion(data[job["p"]], n_calibration=job["n"])
        return {job["name"]: np.array([pi0, sel.storey_lambda(job["n"])])}
    if kind == "martingale":
        return _martingale(job, data)
    if kind == "weighted":
        from nonconform.scoring import calculate_weighted_p_val

        p = calculate_weighted_p_val(data[job["test"]], data[job["cal"]], data[job["test_w"]],
                                     data[job["cal_w"]], tie_break="classical")
        return {job["name"]: p}
    if kind == "weight_estimator":
        return _weights(job, data)
    raise ValueError(f"unknown job {kind!r}")


def _martingale(job: dict, data: dict) -> dict:
    """ln M, ln C, ln R and the alarms of nonconform's martingale of
    ``job["martingale"]`` after each p-value (``update_many``)."""
    from nonconform import martingales as mg

    c = job.get("threshold")
    config = mg.AlarmConfig(ville_threshold=c, cusum_threshold=c, shiryaev_roberts_threshold=c)
    which = job["martingale"]
    if which == "power":
        m = mg.PowerMartingale(epsilon=job["epsilon"], alarm_config=config)
    elif which == "mixture":
        m = mg.SimpleMixtureMartingale(
            n_grid=job["n_grid"], min_epsilon=job["min_epsilon"], alarm_config=config
        )
    else:
        m = mg.SimpleJumperMartingale(jump=job["jump"], alarm_config=config)
    states = m.update_many(data[job["p"]])
    name = job["name"]
    alarms = [[a in s.triggered_alarms for a in ("ville", "cusum", "shiryaev_roberts")]
              for s in states]
    return {
        f"{name}_m": np.array([s.log_martingale for s in states]),
        f"{name}_c": np.array([s.log_cusum for s in states]),
        f"{name}_r": np.array([s.log_shiryaev_roberts for s in states]),
        f"{name}_alarm": np.array(alarms, dtype=bool).reshape(len(states), 3),
    }


def _weights(job: dict, data: dict) -> dict:
    """nonconform's classifier-estimated covariate-shift weights of the
    calibration and test features (``logistic_weight_estimator``)."""
    from nonconform import logistic_weight_estimator

    est = logistic_weight_estimator(**job.get("params", {}))
    est.set_seed(job["seed"])
    est.fit(data[job["cal"]], data[job["test"]])
    w_cal, w_test = est.get_weights()
    name = job["name"]
    return {f"{name}_cal": np.asarray(w_cal), f"{name}_test": np.asarray(w_test)}


def main(src: str, dst: str) -> None:
    with np.load(src) as f:
        data = {k: f[k] for k in f.files}
    jobs = json.loads(str(data.pop("jobs")))
    out: dict = {}
    for job in jobs:
        out.update(_run(job, data))
    import nonconform

    out["version"] = np.array(nonconform.__version__)
    np.savez(dst, **out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
