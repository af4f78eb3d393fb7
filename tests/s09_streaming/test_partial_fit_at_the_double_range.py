"""A streaming fit at the top of the double range (contract §9, "Scalers":
a batch or merge whose fit is refused; "Exactness of running state": a
fit that is not finite is refused on every path): ``partial_fit`` and
``merge`` refuse a scale beyond the double range with the error of
``fit`` (§5), keep nothing of the refused batch, and near the top of the
range give the in-memory fit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import outprob

#: contract §5's example of a scale beyond the double range.
HUGE = np.array([-1.7e308, -1.7e308, 1.7e308, 1.7e308])
BEYOND = "exceeds the double range"


def quiet(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kwargs)


@pytest.mark.parametrize("center,scale", [("median", "nmad"), ("huber", "huber"), ("tukey", "tukey")])
def test_partial_fit_refuses_a_scale_beyond_the_double_range_as_fit_does(center, scale):
    with pytest.raises(ValueError, match=BEYOND) as fitted:
        quiet(outprob.GaussianScaler(center, scale).fit, HUGE)
    s = outprob.GaussianScaler(center, scale)
    with pytest.raises(ValueError, match=BEYOND) as streamed:
        quiet(s.partial_fit, HUGE)
    assert str(streamed.value) == str(fitted.value)
    assert not s.__sklearn_is_fitted__()


@pytest.mark.parametrize("center,scale", [("median", "nmad"), ("huber", "huber"), ("tukey", "tukey")])
@pytest.mark.parametrize("window", [None, 50])
def test_a_refused_batch_is_not_kept(center, scale, window):
    """A batch whose fit is refused leaves the stream as it was: the fit
    after the next batch is the in-memory fit of the batches kept, and the
    checkpoint taken in between loads (contract §9)."""
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(30, 2)), rng.normal(size=(20, 2))
    bad = np.column_stack([np.ones(100), np.tile(HUGE, 25)])  # column 1 alone is refused
    s = outprob.GaussianScaler(center, scale, window=window)
    quiet(s.partial_fit, a)
    before = (s.n_samples_seen_.copy(), s.center_.copy(), s.scale_.copy())
    with pytest.raises(ValueError, match=BEYOND):
        quiet(s.partial_fit, bad)
    after = (s.n_samples_seen_, s.center_, s.scale_)
    for x, y in zip(before, after):
        np.testing.assert_array_equal(x, y)
    resumed = outprob.from_dict(s.to_dict())
    for t in (s, resumed):
        quiet(t.partial_fit, b)
        want = quiet(outprob.GaussianScaler(center, scale).fit, np.vstack([a, b]))
        np.testing.assert_allclose(t.center_, want.center_, rtol=1e-12)
        np.testing.assert_allclose(t.scale_, want.scale_, rtol=1e-12)
        np.testing.assert_array_equal(t.n_samples_seen_, [50, 50])


def test_a_refused_merge_is_not_kept():
    """Each scaler's fit is finite, that of their union is not (§5)."""
    m = 1.7e308
    other = outprob.GaussianScaler("median", "nmad").partial_fit([m, m, m, -m, -m, 0.9 * m, 0.8 * m])
    s = outprob.GaussianScaler("median", "nmad").partial_fit([1.0, 2.0, 3.0, 5.0])
    before = s.to_dict()
    with pytest.raises(ValueError, match=BEYOND):
        s.merge(other)
    assert s.to_dict() == before
    s.partial_fit([4.0])
    want = outprob.GaussianScaler("median", "nmad").fit([1.0, 2.0, 3.0, 5.0, 4.0])
    assert (s.center_, s.scale_, s.n_samples_seen_) == (want.center_, want.scale_, 5)


@pytest.mark.parametrize(
    "x",
    [HUGE, np.full(20, 1.7e308), np.array([1.0, 1.5e308, 1.6e308, 1.7e308, 1.79e308])],
)
def test_partial_fit_near_the_top_of_the_range_equals_fit(x):
    """The trimmed mean from the sketch was NaN here (its sums overflowed)."""
    want = quiet(outprob.GaussianScaler("trimmed_mean", "trimmed_std").fit, x)
    got = quiet(outprob.GaussianScaler("trimmed_mean", "trimmed_std").partial_fit, x)
    assert got.center_ == want.center_
    assert got.scale_ == pytest.approx(want.scale_, rel=1e-15, abs=0)
