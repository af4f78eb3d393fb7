"""Streaming fits (contract §9, "Exactness of running state", "Windows"):
exact running moments against the in-memory estimators under any split
into batches, §5 per batch, windows that refit exactly, state round trips
and merges, and the in-memory and streamed SD of tied scores within 1e-15
of exact."""

from __future__ import annotations

import pickle
import statistics

import numpy as np
import pytest

import outprob
from outprob import stats
from outprob.streaming import StreamingFit


def splits(n, rng, parts):
    cuts = np.sort(rng.integers(0, n + 1, size=parts))
    return np.split(np.arange(n), cuts)


@pytest.mark.parametrize("seed", range(6))
def test_mean_and_std_are_exact_under_any_split(seed):
    rng = np.random.default_rng(seed)
    scale = [1.0, 1e-300, 1e300, 1e-310][seed % 4]
    x = (rng.standard_t(2, size=3000) + [0, 1e9, 0, 3][seed % 4]) * scale
    x[rng.integers(3000, size=20)] = np.nan
    for ddof in (0, 1):
        fit = StreamingFit("mean", "std", ddof=ddof)
        other = StreamingFit("mean", "std", ddof=ddof)
        for j, idx in enumerate(splits(x.size, rng, 7)):
            (fit if j % 2 else other).update(x[idx])
        fit.merge(other)
        r = fit.result()
        assert r.center == stats.mean(x)
        want = stats.std(x, ddof=ddof)
        assert abs(r.scale - want) <= 1e-15 * want
        # A subnormal σ is known to one subnormal step (2^-1074), relatively
        # 1.4e-14 at 3.5e-310: the bound carries that step.
        limit = 1e-14 + 2.0**-1074 / want
        assert r.probability_error is not None and r.probability_error < limit


def test_linear_two_d_and_direction():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1000, 3)).astype(np.float32)
    fit = StreamingFit(scaling="linear", higher_is_outlier=False)
    for idx in splits(1000, rng, 4):
        fit.update(x[idx])
    for j, r in enumerate(fit.results()):
        assert (r.center, r.scale) == (float(-x[:, j].max()), float(-x[:, j].min()))
    with pytest.raises(ValueError, match="column"):
        fit.update(x[:, :2])


def test_section5_rules_per_batch():
    fit = StreamingFit("median", "nmad", nan_policy="raise")
    fit.update([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="infinite"):
        fit.update([1.0, np.inf])
    with pytest.raises(ValueError, match="NaN"):
        fit.update([np.nan])
    assert fit.n == 3
    with pytest.raises(ValueError, match="nothing to fit"):
        StreamingFit().result()


def test_small_streams_equal_the_in_memory_fit():
    x = np.random.default_rng(4).gamma(2.0, size=700)
    for center, scale in [("median", "nmad"), ("trimmed_mean", "niqr"), ("median", "trimmed_std")]:
        fit = StreamingFit(center, scale, k=800)
        for idx in splits(700, np.random.default_rng(1), 5):
            fit.update(x[idx])
        r = fit.result()
        assert r.rank_error == 0.0
        c = {"median": stats.median, "trimmed_mean": stats.upper_trimmed_mean}[center](x)
        s = {"nmad": lambda: stats.nmad(x), "niqr": lambda: stats.niqr(x),
             "trimmed_std": lambda: stats.trimmed_std(x, c)}[scale]()
        assert r.center == c
        assert r.scale == pytest.approx(s, rel=1e-15)


def test_window_refits_exactly_and_round_trips():
    rng = np.random.default_rng(3)
    x = rng.lognormal(size=20_000)
    fit = StreamingFit("median", "nmad", window=5000, refit_every=1000)
    seen = 0
    for idx in splits(x.size, rng, 9):
        fit.update(x[idx])
        seen += idx.size
    last = x[seen - 5000: seen]
    r = fit.refit()[0]
    assert (r.center, r.scale) == (stats.median(last), stats.nmad(last))
    back = StreamingFit.from_dict(fit.to_dict())
    assert back.refit()[0] == r
    with pytest.raises(ValueError, match="window"):
        fit.merge(back)


def test_state_round_trips_and_merges():
    rng = np.random.default_rng(8)
    a, b = StreamingFit("huber", "huber", k=200), StreamingFit("huber", "huber", k=200)
    a.update(rng.normal(size=30_000))
    b.update(rng.normal(size=30_000) + 0.5)
    c = pickle.loads(pickle.dumps(a))
    assert c.result() == a.result()
    a.merge(b)
    c.merge(StreamingFit.from_dict(b.to_dict()))
    assert c.result() == a.result()
    r = a.result()
    assert r.center_interval is None and r.n_iter is not None
    with pytest.raises(ValueError):
        a.merge(StreamingFit("median", "nmad"))


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
