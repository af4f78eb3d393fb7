"""Regression tests of the second hardening round: every finding on
streaming state, stored (untrusted) state, size parameters and concurrency
gives the contract's result — the in-memory fit's value, NumPy's or the
standard library's exact value, or the contract's exception (§5, §7, §9).
"""

from __future__ import annotations

import copy
import math
import statistics
import warnings

import numpy as np
import pytest

import outprob
from outprob import stats

#: contract §5's example of a scale beyond the double range.
HUGE = np.array([-1.7e308, -1.7e308, 1.7e308, 1.7e308])
BEYOND = "exceeds the double range"


def quiet(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kwargs)


def erf_map(s, center, scale):
    return np.maximum(0.0, np.array([math.erf(v) for v in (s - center) / (scale * math.sqrt(2))]))


# -- 3. partial_fit publishes only what fit would ------------------------------------
@pytest.mark.parametrize("center,scale", [("median", "nmad"), ("huber", "huber"), ("tukey", "tukey")])
def test_partial_fit_refuses_a_scale_beyond_the_double_range_as_fit_does(center, scale):
    with pytest.raises(ValueError, match=BEYOND) as fitted:
        quiet(outprob.GaussianScaler(center, scale).fit, HUGE)
    s = outprob.GaussianScaler(center, scale)
    with pytest.raises(ValueError, match=BEYOND) as streamed:
        quiet(s.partial_fit, HUGE)
    assert str(streamed.value) == str(fitted.value)
    assert not s.__sklearn_is_fitted__()


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


@pytest.mark.parametrize("norm", ["huber", "tukey"])
def test_batch_m_estimate_refuses_a_scale_beyond_the_double_range(norm):
    # The starting nMAD is finite; the iteration's scale is not.
    x = np.array([7.872883272189519e307, 1.4761656135355349e308, -1.761557632152405e308])
    with pytest.raises(ValueError, match=BEYOND):
        quiet(stats.m_estimate, x, norm=norm)


# -- 4. probability_error_ bounds the real |p̂ − p| at every magnitude ---------------
@pytest.mark.parametrize("magnitude", [1e-200, 1.0, 1e200])
def test_probability_error_bounds_the_real_error_at_every_magnitude(magnitude):
    z = np.random.default_rng(0).normal(size=20_000) * magnitude
    s = outprob.GaussianScaler("mean", "nmad", k=64).partial_fit(z)
    exact = outprob.GaussianScaler("mean", "nmad").fit(z)
    assert s.rank_error_ > 0
    grid = exact.center_ + np.linspace(0, 6, 4001) * exact.scale_
    real = np.max(np.abs(s.transform(grid) - exact.transform(grid)))
    assert 1e-4 < real <= s.probability_error_ < 1.0


# -- exact mode: degenerate intervals ------------------------------------------------
@pytest.mark.parametrize(
    "center,scale", [("median", "nmad"), ("median", "niqr"), ("trimmed_mean", "trimmed_std")]
)
def test_exact_mode_intervals_are_degenerate(center, scale):
    x = np.arange(10.0)
    s = outprob.GaussianScaler(center, scale).partial_fit(x)
    want = outprob.GaussianScaler(center, scale).fit(x)
    assert s.rank_error_ == 0
    assert s.center_interval_[0] <= want.center_ <= s.center_interval_[1]
    assert s.scale_interval_[0] <= want.scale_ <= s.scale_interval_[1]
    assert np.diff(s.center_interval_)[0] <= 1e-14 * abs(want.center_)
    assert np.diff(s.scale_interval_)[0] <= 1e-14 * want.scale_
    assert s.probability_error_ < 1e-13


# -- 6. stored streaming state that contradicts itself ------------------------------
def _checkpoint(**params):
    s = outprob.GaussianScaler(**params).partial_fit(np.arange(100.0) + 5.0)
    return s.to_dict()


def _moments(d):
    return d["stream"]["states"][0]["moments"]


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m.update(dsq=[1.0, -1e308]),
        lambda m: m.update(n=10**15),
        lambda m: m.update(n=m["n"] + 1),
        lambda m: m.update(n=2**53 + 1),
        lambda m: m.update(sum_negative=True),
        lambda m: m.update(shift=1e3),
        lambda m: m.update(min=50.0),
        lambda m: m.update(dsum=[m["dsum"][0] + 1.0, 0.0]),
        lambda m: m.update(k=-80),
    ],
    ids=["dsq", "n=1e15", "n+1", "n>2^53", "sum sign", "shift", "min", "dsum", "k"],
)
@pytest.mark.parametrize("params", [{}, {"center": "median", "scale": "nmad"}], ids=["exact", "sketch"])
def test_contradicting_moments_are_refused(edit, params):
    d = _checkpoint(**params)
    outprob.GaussianScaler.from_dict(copy.deepcopy(d))  # the untouched state loads
    edit(_moments(d))
    with pytest.raises(ValueError, match="state"):
        outprob.GaussianScaler.from_dict(d)


def test_a_sketch_of_other_scores_is_refused():
    d = _checkpoint(center="median", scale="nmad")
    other = _checkpoint(center="median", scale="nmad", higher_is_outlier=False)
    d["stream"]["states"][0]["sketch"] = other["stream"]["states"][0]["sketch"]
    with pytest.raises(ValueError, match="extremes"):
        outprob.GaussianScaler.from_dict(d)


@pytest.mark.parametrize(
    "edit",
    [
        lambda s: s.update(seen=s["seen"] + 1),
        lambda s: s.update(seen=5),
        lambda s: s.update(since_refit=10**6),
        lambda s: s.update(seen=2**60),
    ],
    ids=["seen+1", "seen<held", "since_refit", "seen>2^53"],
)
def test_contradicting_windows_are_refused(edit):
    s = outprob.GaussianScaler(window=50, refit_every=7).partial_fit(np.arange(30.0))
    d = s.to_dict()
    outprob.GaussianScaler.from_dict(copy.deepcopy(d))
    edit(d["stream"]["states"][0])
    with pytest.raises(ValueError, match="not a valid (window|streaming) state"):
        outprob.GaussianScaler.from_dict(d)


# -- docs: stats.std within 1e-15 of exact --------------------------------------------
@pytest.mark.parametrize("seed", range(6))
def test_std_of_integer_scores_is_within_1e15_of_exact(seed):
    """Tied (integer) scores make a plain sum of squares err alike term by
    term (up to 2e-14 relative); the exact oracle is statistics.pstdev."""
    rng = np.random.default_rng(seed)
    n = [1000, 30_000, 100_000][seed % 3]
    x = rng.integers(0, [3, 10, 1000, 10**6][seed % 4], size=n).astype(float)
    exact = statistics.pstdev(x.tolist())
    assert float(stats.std(x)) == pytest.approx(exact, rel=1e-15, abs=0)
    streamed = outprob.GaussianScaler().partial_fit(x[: n // 3]).partial_fit(x[n // 3 :])
    assert streamed.scale_ == pytest.approx(float(stats.std(x)), rel=1e-15, abs=0)
