"""Incremental fitting of the scalers (contract §9, "Scalers"): partial_fit
against fit on the concatenation (the in-memory fit is the oracle, itself
tested against outprob.reference), the reported intervals against the
exact values, merge (with itself too), windows, checkpoint/resume (a
resumed window continues as the original), §5 per batch, and the scalers
that cannot be fitted incrementally."""

from __future__ import annotations

import copy
import json
import pickle
import warnings

import numpy as np
import pytest

import outprob
from outprob import stats
from outprob._scalers.base import ScalerBase
from outprob._scalers.fitted_attributes import Fitted
from outprob._common.validation import as_float_array


def splits(x, rng, parts):
    cuts = np.sort(rng.integers(0, len(x) + 1, size=parts))
    return np.split(x, cuts)


def streamed(scaler, x, rng, parts=7):
    for b in splits(x, rng, parts):
        if len(b) and not np.isnan(b).all() or scaler.__sklearn_is_fitted__():
            scaler.partial_fit(b)
    return scaler


@pytest.mark.parametrize("seed", range(8))
def test_mean_std_and_linear_equal_fit_on_the_concatenation(seed):
    rng = np.random.default_rng(seed)
    magnitude = ([1.0, 1e-300, 1e300, 1e9] if seed % 2 == 0 else [1.0, 1e-30, 1e30, 1e4])[seed % 4]
    x = rng.standard_t(2, size=(2000, 2)) * magnitude + [0.0, 3.0 * magnitude]
    x[rng.integers(2000, size=30), rng.integers(2, size=30)] = np.nan
    if seed % 2:
        x = x.astype(np.float32)
    for make in (
        lambda: outprob.GaussianScaler("mean", "std", ddof=seed % 2, higher_is_outlier=seed < 4),
        lambda: outprob.LinearScaler(higher_is_outlier=seed < 4),
    ):
        for data in (x, x[:, 0]):
            s = streamed(make(), data, rng)
            f = make().fit(data)
            a, b = type(s)._PAIR
            if a == "center_":
                assert np.array_equal(s.center_, f.center_)  # bit for bit
                np.testing.assert_allclose(s.scale_, f.scale_, rtol=1e-15, atol=0)
                assert np.all(s.rank_error_ == 0)
            else:
                assert np.array_equal(s.min_, f.min_) and np.array_equal(s.max_, f.max_)
            assert np.array_equal(s.n_samples_seen_, np.sum(~np.isnan(data), axis=0))
            new = data[:50]
            np.testing.assert_allclose(s.transform(new), f.transform(new), rtol=1e-12, atol=1e-15)


CASES = [("median", "nmad"), ("trimmed_mean", "niqr"), ("median", "trimmed_std"), ("mean", "nmad")]


@pytest.mark.parametrize("kind", ["lognormal", "ties", "shifted"])
def test_sketch_fits_hold_the_exact_values_in_their_intervals(kind):
    rng = np.random.default_rng(["lognormal", "ties", "shifted"].index(kind))
    n = 30_000
    x = {"lognormal": rng.lognormal(size=n), "ties": np.floor(rng.exponential(2.0, n)),
         "shifted": rng.normal(size=n) + 4.0 * (np.arange(n) > n // 2)}[kind]
    grid = np.linspace(np.min(x) - 1, np.max(x) + 1, 2001)
    misses = 0
    for center, scale in CASES:
        s = streamed(outprob.GaussianScaler(center, scale, k=100), x, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", outprob.ZeroScaleWarning)
            exact = outprob.GaussianScaler(center, scale).fit(x)
        assert s.rank_error_ == pytest.approx(outprob.streaming.normalized_rank_error(100))
        lo, hi = s.center_interval_
        slo, shi = s.scale_interval_
        inside = lo <= exact.center_ <= hi and slo <= exact.scale_ <= shi
        misses += not inside
        if inside:
            gap = np.max(np.abs(s.transform(grid) - exact.transform(grid)))
            assert gap <= s.probability_error_ + 1e-12
    # ~99% confidence per sketch; in practice none miss.
    assert misses <= 1


def test_sketch_fit_is_exact_until_the_sketch_compacts():
    x = np.random.default_rng(4).lognormal(size=500)
    s = streamed(outprob.GaussianScaler("median", "nmad"), x, np.random.default_rng(0))
    f = outprob.GaussianScaler("median", "nmad").fit(x)
    assert (s.center_, s.scale_) == (f.center_, f.scale_)
    assert s.rank_error_ == 0.0
    assert s.center_interval_[0] <= f.center_ <= s.center_interval_[1]


def test_m_estimates_from_the_sketch_have_no_interval():
    x = np.random.default_rng(5).normal(size=20_000)
    s = streamed(outprob.GaussianScaler("huber", "huber", k=200), x, np.random.default_rng(1))
    f = outprob.GaussianScaler("huber", "huber").fit(x)
    assert abs(s.center_ - f.center_) < 0.05 * f.scale_ and s.converged_
    with pytest.raises(AttributeError, match="center_interval_"):
        _ = s.center_interval_


def test_each_batch_obeys_section_5_and_a_refused_batch_changes_nothing():
    s = outprob.GaussianScaler("median", "nmad").partial_fit(np.array([1.0, 2.0, np.nan, 4.0]))
    before = json.dumps(s.to_dict())
    with pytest.raises(ValueError, match="infinite"):
        s.partial_fit(np.array([1.0, np.inf]))
    two = outprob.GaussianScaler(nan_policy="raise").partial_fit(np.ones((3, 2)) + np.eye(3, 2))
    two_before = json.dumps(two.to_dict())
    with pytest.raises(ValueError, match="NaN"):
        two.partial_fit(np.array([[1.0, 2.0], [3.0, np.nan]]))
    assert json.dumps(s.to_dict()) == before and json.dumps(two.to_dict()) == two_before
    assert s.partial_fit(np.array([np.nan])).n_samples_seen_ == 3
    with pytest.raises(ValueError, match="NaN"):
        outprob.GaussianScaler().partial_fit(np.array([np.nan, np.nan]))
    with pytest.raises(ValueError, match="empty"):
        outprob.LinearScaler().partial_fit(np.array([]))
    with pytest.raises(ValueError, match="column 1"):
        outprob.LinearScaler().partial_fit(np.array([[1.0, np.nan]]))
    with pytest.raises(ValueError, match="expecting 2 features"):
        two.partial_fit(np.ones((2, 3)))


def test_merge_is_the_fit_of_both_parts():
    rng = np.random.default_rng(6)
    x = rng.standard_t(3, size=40_000)
    a, b = x[:25_000], x[25_000:]
    for center, scale in (("mean", "std"), ("median", "nmad")):
        left = outprob.GaussianScaler(center, scale, k=200).partial_fit(a)
        right = outprob.GaussianScaler(center, scale, k=200).partial_fit(b)
        both = left.merge(right)
        assert both is left and both.n_samples_seen_ == x.size
        exact = outprob.GaussianScaler(center, scale).fit(x)
        if center == "mean":
            assert both.center_ == exact.center_
            assert both.scale_ == pytest.approx(exact.scale_, rel=1e-15)
        assert both.center_interval_[0] <= exact.center_ <= both.center_interval_[1]
        assert both.scale_interval_[0] <= exact.scale_ <= both.scale_interval_[1]
    empty = outprob.GaussianScaler().merge(outprob.GaussianScaler().partial_fit(a))
    assert empty.center_ == outprob.GaussianScaler().fit(a).center_
    with pytest.raises(ValueError, match="same parameters"):
        outprob.GaussianScaler().partial_fit(a).merge(outprob.GaussianScaler(ddof=1).partial_fit(b))
    with pytest.raises(ValueError, match="fit\\(\\)"):
        outprob.GaussianScaler().partial_fit(a).merge(outprob.GaussianScaler().fit(b))
    with pytest.raises(ValueError, match="window"):
        outprob.LinearScaler(window=5).partial_fit(a).merge(outprob.LinearScaler(window=5).partial_fit(b))
    with pytest.raises(TypeError):
        outprob.LinearScaler().partial_fit(a).merge(outprob.GaussianScaler().partial_fit(b))


def test_window_is_the_fit_of_the_newest_scores():
    rng = np.random.default_rng(7)
    x = rng.lognormal(size=6000)
    s = outprob.GaussianScaler("median", "nmad", window=1000)
    seen = 0
    for b in splits(x, rng, 9):
        s.partial_fit(b) if seen or len(b) else None
        seen += len(b)
        if seen:
            last = x[max(0, seen - 1000): seen]
            assert (s.center_, s.scale_) == (stats.median(last), stats.nmad(last))
    lazy = outprob.LinearScaler(window=100, refit_every=50).partial_fit(np.arange(100.0))
    lazy.partial_fit(np.array([500.0]))  # not due: the fit stays
    assert lazy.max_ == 99.0
    assert lazy.refit().max_ == 500.0 and lazy.min_ == 1.0
    lazy.partial_fit(np.full(49, -1.0))  # 49 new scores since the refit: not due
    assert lazy.min_ == 1.0
    lazy.partial_fit(np.array([-1.0]))
    assert lazy.min_ == -1.0
    # fit() with a window is a fresh partial_fit: the newest scores of X.
    f = outprob.GaussianScaler("mean", "std", window=10).fit(np.arange(100.0))
    assert f.center_ == 94.5
    assert np.array_equal(
        outprob.GaussianScaler("mean", "std", window=10).fit_transform(np.arange(100.0)),
        f.transform(np.arange(100.0)),
    )


def test_checkpoint_and_resume_give_the_uninterrupted_fit():
    rng = np.random.default_rng(8)
    batches = [rng.lognormal(size=n) for n in (3000, 5000, 2000)]
    for make in (
        lambda: outprob.GaussianScaler("median", "nmad", k=100),
        lambda: outprob.GaussianScaler("mean", "std"),
        lambda: outprob.LinearScaler(),
        lambda: outprob.GaussianScaler("trimmed_mean", "niqr", window=4000),
    ):
        full = make()
        for b in batches:
            full.partial_fit(b)
        first = make().partial_fit(batches[0])
        via_json = outprob.from_dict(json.loads(json.dumps(first.to_dict())))
        via_pickle = pickle.loads(pickle.dumps(first))
        for resumed in (via_json, via_pickle):
            for b in batches[1:]:
                resumed.partial_fit(b)
            assert resumed.to_dict() == full.to_dict()
    # A plain fit carries no stream; from_dict of a stream checks it.
    assert "stream" not in outprob.GaussianScaler().fit([1.0, 2.0]).to_dict()
    d = outprob.GaussianScaler("median", "nmad").partial_fit([1.0, 2.0, 5.0]).to_dict()
    d["params"]["k"] = 200
    with pytest.raises(ValueError, match="parameters"):
        outprob.from_dict(d)


def test_fit_starts_afresh_and_parameter_changes_are_refused():
    s = outprob.GaussianScaler().partial_fit([1.0, 2.0, 3.0])
    s.fit([10.0, 20.0])
    with pytest.raises(AttributeError, match="n_samples_seen_"):
        _ = s.n_samples_seen_
    s.partial_fit([1.0, 2.0, 3.0])
    assert s.n_samples_seen_ == 3 and s.center_ == 2.0
    s.set_params(scale="nmad")
    with pytest.raises(ValueError, match="changed since its first partial_fit"):
        s.partial_fit([4.0])


def test_dataframe_names_are_kept_and_checked():
    pd = pytest.importorskip("pandas")
    s = outprob.GaussianScaler().partial_fit(pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 5.0]}))
    s.partial_fit(pd.DataFrame({"a": [3.0], "b": [4.0]}))
    assert list(s.feature_names_in_) == ["a", "b"] and list(s.center_) == [2.0, 4.0]
    with pytest.raises(ValueError, match="feature names"):
        s.partial_fit(pd.DataFrame({"b": [3.0], "a": [4.0]}))


def test_scalers_that_cannot_stream_say_so():
    class Fixed(ScalerBase):
        a_ = Fitted(float, "The lower end.")
        b_ = Fitted(float, "The upper end.")
        _PAIR = ("a_", "b_")
        _KIND = "linear"
        _MAP = {"min": "a_", "max": "b_"}

        def __init__(self, *, nan_policy="omit", higher_is_outlier=True, threads=None):
            self.nan_policy, self.higher_is_outlier, self.threads = nan_policy, higher_is_outlier, threads

    # A scaler that cannot stream has no partial_fit at all (scikit-learn's
    # available_if), so that tools probing for it take the batch path.
    assert not hasattr(Fixed(), "partial_fit") and not hasattr(Fixed(), "merge")
    with pytest.raises(AttributeError, match="partial_fit"):
        Fixed().partial_fit([1.0, 2.0])
    assert not hasattr(outprob.RankScaler(), "partial_fit")
    assert hasattr(outprob.GaussianScaler(), "partial_fit") and hasattr(outprob.LinearScaler(), "merge")

    class WithOption(outprob.GaussianScaler):
        def __init__(self, center="mean", scale="std", *, option=None, **kw):
            super().__init__(center, scale, **kw)
            self.option = option

    assert WithOption().partial_fit([1.0, 2.0]).center_ == 1.5  # the default is supported
    with pytest.raises(TypeError, match=r"option=3\) cannot be fitted incrementally"):
        WithOption(option=3).partial_fit([1.0, 2.0])
    fitted = Fixed()._set_fitted([{"a_": 0.0, "b_": 2.0}], 1)
    assert fitted.transform(np.array([1.0])) == 0.5
    with pytest.raises(ValueError, match="finite"):
        Fixed()._set_fitted([{"a_": 0.0, "b_": np.nan}], 1)


def test_unaligned_buffers_are_aligned():
    raw = np.zeros(8 * 100 + 1, np.uint8)[1:].view(np.float64)
    raw[:] = np.arange(100.0)
    assert not raw.flags.aligned
    a = as_float_array(raw)
    assert a.flags.aligned and a.flags.c_contiguous and np.array_equal(a, raw)
    s = outprob.GaussianScaler().fit(raw)
    assert np.array_equal(s.transform(raw), s.transform(np.arange(100.0)))


@pytest.mark.parametrize("name", ["RankScaler", "GammaScaler", "SigmoidScaler", "TopKScaler"])
def test_partial_fit_of_a_batch_only_scaler_is_a_type_error(name):
    s = getattr(outprob, name)()
    for method in ("partial_fit", "merge", "refit"):
        assert not hasattr(s, method)
        with pytest.raises(TypeError, match="cannot be fitted incrementally"):
            getattr(s, method)


def test_merge_with_itself_is_merge_with_a_copy():
    x = np.random.default_rng(5).lognormal(size=3000)
    a = outprob.GaussianScaler("median", "nmad", k=64).partial_fit(x)
    b = copy.deepcopy(a)
    a.merge(a)
    b.merge(copy.deepcopy(b))
    assert a.to_dict() == b.to_dict()
    assert a.n_samples_seen_ == 6000


@pytest.mark.parametrize("how", ["pickle", "to_dict", "deepcopy"])
def test_a_resumed_window_continues_as_the_original(how):
    import json
    import pickle

    rng = np.random.default_rng(1)
    original = outprob.GaussianScaler(window=1000, refit_every=500)
    original.partial_fit(rng.normal(size=1200))
    original.partial_fit(rng.normal(size=300) + 0.3)
    if how == "pickle":
        copy_ = pickle.loads(pickle.dumps(original))
    elif how == "to_dict":
        copy_ = outprob.from_dict(json.loads(json.dumps(original.to_dict())))
    else:
        copy_ = copy.deepcopy(original)
    for batch in (rng.normal(size=100) + 5.0, rng.normal(size=150) - 1.0, rng.normal(size=400)):
        original.partial_fit(batch)
        copy_.partial_fit(batch)
        assert copy_.to_dict() == original.to_dict()
