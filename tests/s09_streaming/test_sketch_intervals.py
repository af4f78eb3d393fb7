"""Value intervals from a sketch (contract §9, "Value intervals from a
sketch"): the exact center and scale lie inside the reported intervals of
long-tailed, tied, shifted and tiny-magnitude streams; ``probability_error_``
bounds the real |p̂ − p| at every magnitude; with a rank error of 0 every
interval is the point."""

from __future__ import annotations

import numpy as np
import pytest

import outprob
from outprob import stats
from outprob.streaming import StreamingFit


def splits(n, rng, parts):
    cuts = np.sort(rng.integers(0, n + 1, size=parts))
    return np.split(np.arange(n), cuts)


def _stream(kind, rng, n):
    if kind == "pareto":
        return rng.pareto(1.2, n)
    if kind == "ties":
        return np.floor(rng.exponential(2.0, n))
    if kind == "shifted":
        x = rng.normal(size=n)
        x[n // 2:] += 4.0
        return x
    return rng.normal(size=n) * 1e-200


def _exact(x):
    med = stats.median(x)
    tm = stats.upper_trimmed_mean(x)
    return {
        ("median", "nmad"): (med, stats.nmad(x)),
        ("trimmed_mean", "niqr"): (tm, stats.niqr(x)),
        ("median", "trimmed_std"): (med, stats.trimmed_std(x, med)),
    }


@pytest.mark.parametrize("kind", ["pareto", "ties", "shifted", "tiny"])
def test_intervals_cover_the_exact_values(kind):
    """Each sketch's intervals hold together with ~99% confidence: over 15
    streams per kind at most one may miss (P(Bin(15, 0.01) > 1) ≈ 1%;
    none miss in practice since block compaction errs less)."""
    rng = np.random.default_rng(["pareto", "ties", "shifted", "tiny"].index(kind))
    misses = 0
    for rep in range(15):
        x = _stream(kind, rng, 20_000)
        exact = _exact(x)
        ok = True
        for (center, scale), (c, s) in exact.items():
            fit = StreamingFit(center, scale, k=100, seed=rep)
            for idx in splits(x.size, rng, 6):
                fit.update(x[idx])
            r = fit.result()
            assert r.rank_error > 0
            ok &= r.center_interval[0] <= c <= r.center_interval[1]
            ok &= r.scale_interval[0] <= s <= r.scale_interval[1]
        misses += not ok
    assert misses <= 1


@pytest.mark.parametrize("magnitude", [1e-200, 1.0, 1e200])
def test_probability_error_bounds_the_real_error_at_every_magnitude(magnitude):
    z = np.random.default_rng(0).normal(size=20_000) * magnitude
    s = outprob.GaussianScaler("mean", "nmad", k=64).partial_fit(z)
    exact = outprob.GaussianScaler("mean", "nmad").fit(z)
    assert s.rank_error_ > 0
    grid = exact.center_ + np.linspace(0, 6, 4001) * exact.scale_
    real = np.max(np.abs(s.transform(grid) - exact.transform(grid)))
    assert 1e-4 < real <= s.probability_error_ < 1.0


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
