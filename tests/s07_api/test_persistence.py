"""Pickles and ``to_dict``/``from_dict`` (contract §7): pickles written by
outprob 0.1.0 still load, and the serialised form is plain JSON."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import outprob

DATA = Path(__file__).resolve().parents[1] / "data"
pytestmark = pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")


def old_pickles():
    with open(DATA / "scalers_0.1.0.pkl", "rb") as f:
        blobs = pickle.load(f)
    expected = json.loads((DATA / "scalers_0.1.0.json").read_text())["expected"]
    return blobs, expected


@pytest.mark.parametrize("name", ["mean_nmad_1d", "huber_2d", "linear_2d", "fixed_center_1d"])
def test_pickles_of_version_0_1_0_load_and_transform_as_then(name):
    blobs, expected = old_pickles()
    s = pickle.loads(blobs[name])
    case = expected[name]
    # The oracle: the probabilities outprob 0.1.0 computed before pickling.
    assert_array_equal(s.transform(np.array(case["new"])), np.array(case["p"]))
    # It is a full scikit-learn estimator now.
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(s)
    assert s.n_features_in_ == (3 if name.endswith("2d") else 1)
    again = pickle.loads(pickle.dumps(s))
    assert_array_equal(again.transform(np.array(case["new"])), np.array(case["p"]))
    assert repr(again) == repr(s)


def test_unfitted_pickle_of_version_0_1_0_loads():
    blobs, _ = old_pickles()
    s = pickle.loads(blobs["unfitted"])
    assert s.get_params()["center"] == "median"
    with pytest.raises(outprob.NotFittedError):
        s.transform([1.0])
    assert s.fit([1.0, 2.0, 3.0, 10.0]).transform([10.0]) > 0.9


def test_unknown_pickle_layout_names_the_version():
    s = outprob.scaler("mean_std").fit([1.0, 2.0, 4.0])
    state = s.__getstate__()
    state["_outprob_version"] = "9.0.0"
    state["new_parameter"] = 1
    fresh = outprob.GaussianScaler.__new__(outprob.GaussianScaler)
    with pytest.raises(ValueError, match=r"pickled by outprob 9\.0\.0.*to_dict"):
        fresh.__setstate__(state)


def test_pickle_keeps_feature_names_and_output_config():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1.0, 2.0, 5.0, 3.0], "b": [2.0, 2.5, 9.0, 1.0]})
    s = outprob.LinearScaler().set_output(transform="pandas").fit(df)
    t = pickle.loads(pickle.dumps(s))
    assert list(t.feature_names_in_) == ["a", "b"]
    out = t.transform(df)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["a", "b"]
    with pytest.raises(ValueError, match="same order"):
        t.transform(df[["b", "a"]])


def test_to_dict_is_json_with_numpy_parameters():
    # NumPy scalars (np.False_, np.float64, …) as parameters serialise as builtins.
    s = outprob.GaussianScaler(np.float64(1.0), "std", ddof=np.int64(1), higher_is_outlier=np.False_)
    s.fit(np.array([0.5, 0.2, 0.9, 0.1]))
    d = json.loads(json.dumps(s.to_dict()))
    assert d["params"]["higher_is_outlier"] is False and d["params"]["ddof"] == 1
    restored = outprob.from_dict(d)
    assert_array_equal(restored.transform([0.3, -2.0]), s.transform([0.3, -2.0]))


def test_to_dict_describes_the_fit_not_later_parameter_changes():
    s = outprob.scaler("mean_std").fit([1.0, 2.0, 3.0, 7.0])
    want = s.transform([5.0])
    s.set_params(higher_is_outlier=False)  # takes effect at the next fit
    assert s.transform([5.0]) == want
    assert outprob.from_dict(s.to_dict()).transform([5.0]) == want


def test_from_dict_missing_keys_is_a_value_error():
    d = outprob.scaler("mean_nmad").fit([1.0, 2.0, 5.0]).to_dict()
    for key in ("params", "ndim", "fitted"):
        broken = {k: v for k, v in d.items() if k != key}
        with pytest.raises(ValueError, match=f"lacks the keys \\['{key}'\\]"):
            outprob.from_dict(broken)
    with pytest.raises(ValueError, match=r"missing"):
        outprob.from_dict({**d, "fitted": {"center_": 1.0}})
    with pytest.raises(ValueError, match="unknown parameters"):
        outprob.from_dict({**d, "params": {**d["params"], "sclae": 1}})


def test_from_dict_refuses_two_dimensional_empty_fits():
    d = outprob.scaler("mean_nmad").fit(np.ones((3, 2)) + np.arange(3)[:, None]).to_dict()
    empty = {**d, "fitted": {k: [] for k in d["fitted"]}}
    with pytest.raises(ValueError, match="at least one score column"):
        outprob.from_dict(empty)
    ragged = {**d, "fitted": {**d["fitted"], "scale_": d["fitted"]["scale_"][:1]}}
    with pytest.raises(ValueError, match="one value per column"):
        outprob.from_dict(ragged)


def test_to_dict_keeps_feature_names():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"knn": [1.0, 2.0, 8.0], "lof": [1.0, 1.1, 3.0]})
    d = json.loads(json.dumps(outprob.scaler("mean_std").fit(df).to_dict()))
    assert d["feature_names_in"] == ["knn", "lof"]
    with pytest.raises(ValueError, match="same order"):
        outprob.from_dict(d).transform(df[["lof", "knn"]])


def test_from_dict_refuses_every_missing_parameter():
    d = outprob.GaussianScaler(higher_is_outlier=False).fit([1.0, 2.0, 3.0]).to_dict()
    for name in list(d["params"]):
        broken = copy.deepcopy(d)
        del broken["params"][name]
        with pytest.raises(ValueError, match=name):
            outprob.from_dict(broken)


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
