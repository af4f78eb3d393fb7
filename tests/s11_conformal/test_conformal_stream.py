"""ConformalScaler.partial_fit (contract §11): the sketch's p-values are
conservative (never below the exact ones while every rank query is within
εn), still valid in a binomial test, exact while the sketch is; windows are
exact; merge and serialisation carry the sketch."""

from __future__ import annotations

import base64
import json
import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats

import outprob
import outprob.reference.conformal as rc


def test_exact_while_the_sketch_is_exact():
    x = np.random.default_rng(0).normal(size=300)
    s = outprob.ConformalScaler(k=400)
    for b in np.array_split(x, 7):
        s.partial_fit(b)
    q = np.linspace(-3, 3, 50)
    assert s.rank_error_ == 0.0 and s.n_samples_seen_ == 300
    assert_allclose(s.pvalues(q), rc.pvalues(x, q), rtol=1e-15)


def test_sketch_pvalues_are_conservative_and_close():
    """In estimation mode every p-value is at least the exact one in at
    least 95 % of sketches (DataSketches' ε holds for 99 %) and exceeds it
    by at most 3ε + 1/(n + 1)."""
    rng = np.random.default_rng(1)
    q = np.quantile(rng.standard_t(3, size=10_000), np.linspace(0.5, 0.9999, 200))
    ok, reps = 0, 40
    for r in range(reps):
        x = rng.standard_t(3, size=20_000)
        s = outprob.ConformalScaler(k=64, seed=r)
        for b in np.array_split(x, 5):
            s.partial_fit(b)
        exact = rc.pvalues(x, q)
        got = s.pvalues(q)
        assert s.rank_error_ > 0
        ok += bool(np.all(got >= exact))
        assert np.all(got - exact <= 3 * s.rank_error_ + 1 / 20_001)
    assert ok >= 0.95 * reps


def test_sketch_pvalues_stay_super_uniform():
    """P(p <= alpha) over 3000 independent (stream, test point) draws:
    at most Bin(3000, alpha) (one-sided binomial p-value > 1e-5)."""
    rng = np.random.default_rng(2)
    alpha, reps, hits = 0.05, 3000, 0
    for r in range(reps):
        s = outprob.ConformalScaler(k=8, seed=r).partial_fit(rng.exponential(size=200))
        hits += bool(s.pvalues(rng.exponential()) <= alpha)
    assert stats.binom.sf(hits - 1, reps, alpha) > 1e-5


def test_window_is_exact_over_the_newest_scores():
    rng = np.random.default_rng(3)
    s = outprob.ConformalScaler(window=50, contamination=0.1)
    seen = []
    for _ in range(6):
        b = rng.normal(size=23)
        b[0] = np.nan
        s.partial_fit(b)
        seen.extend(b[~np.isnan(b)])
    newest = np.sort(seen[-50:])
    q = np.linspace(-3, 3, 31)
    assert_allclose(s.pvalues(q), rc.pvalues(newest[:45], q), rtol=1e-15)
    assert s.n_samples_seen_ == 50 and s.trimmed_ == 5
    t = outprob.ConformalScaler.from_dict(json.loads(json.dumps(s.to_dict())))
    assert_array_equal(t.pvalues(q), s.pvalues(q))
    t.partial_fit(np.array([10.0]))
    s.partial_fit(np.array([10.0]))
    assert_array_equal(t.pvalues(q), s.pvalues(q))
    with pytest.raises(ValueError, match="do not merge"):
        s.merge(t)


def test_merge_equals_one_stream_in_counts():
    rng = np.random.default_rng(4)
    a_x, b_x = rng.normal(size=500), rng.normal(1, 2, size=700)
    both = np.r_[a_x, b_x]
    q = np.linspace(-4, 6, 40)
    # k = 2000: both sketches and their union stay exact.
    a = outprob.ConformalScaler(k=2000).partial_fit(a_x)
    a.merge(outprob.ConformalScaler(k=2000).partial_fit(b_x))
    assert a.n_samples_seen_ == 1200 and a.rank_error_ == 0.0
    assert_allclose(a.pvalues(q), rc.pvalues(both, q), rtol=1e-15)
    # k = 100: estimation mode, conservative and within the bound.
    a = outprob.ConformalScaler(k=100).partial_fit(a_x)
    a.merge(outprob.ConformalScaler(k=100).partial_fit(b_x))
    exact = rc.pvalues(both, q)
    assert a.rank_error_ > 0 and np.all(a.pvalues(q) >= exact)
    assert np.all(a.pvalues(q) - exact <= 3 * a.rank_error_ + 1 / 1201)
    with pytest.raises(ValueError, match="fit\\(\\)"):
        a.merge(outprob.ConformalScaler().fit(a_x))
    with pytest.raises(ValueError, match="same parameters"):
        a.merge(outprob.ConformalScaler(k=100, delta=0.1).partial_fit(a_x))


def test_stream_state_round_trips_and_resumes():
    rng = np.random.default_rng(5)
    s = outprob.ConformalScaler(k=50, conditional="dkwm").partial_fit(rng.normal(size=(3000, 2)))
    q = rng.normal(size=(20, 2))
    d = json.loads(json.dumps(s.to_dict()))
    t = outprob.ConformalScaler.from_dict(d)
    assert_array_equal(t.pvalues(q), s.pvalues(q))
    more = rng.normal(size=(100, 2))
    assert_array_equal(t.partial_fit(more).pvalues(q), s.partial_fit(more).pvalues(q))
    assert_array_equal(pickle.loads(pickle.dumps(s)).pvalues(q), s.pvalues(q))
    d["stream"]["sketches"][0] = base64.b64encode(b"garbage").decode()
    with pytest.raises(ValueError):
        outprob.ConformalScaler.from_dict(d)


def test_batches_obey_contract_5():
    s = outprob.ConformalScaler().partial_fit(np.arange(10.0))
    with pytest.raises(ValueError, match="infinite"):
        s.partial_fit(np.array([1.0, np.inf]))
    assert s.n_samples_seen_ == 10  # a refused batch changes nothing
    with pytest.raises(ValueError, match="sketch cannot"):
        outprob.ConformalScaler(contamination=0.1).partial_fit(np.arange(10.0))
    with pytest.raises(ValueError, match="changed"):
        s.set_params(delta=0.2).partial_fit(np.arange(3.0))
