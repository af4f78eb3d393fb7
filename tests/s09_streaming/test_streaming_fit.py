"""Streaming fits (contract §9): the KLL sketch against Apache DataSketches,
exact running moments against the in-memory estimators, windows, state
round trips and the coverage of the reported intervals."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from outprob import stats
from outprob.streaming import KLLSketch, StreamingFit, normalized_rank_error

datasketches = pytest.importorskip("datasketches")

RANKS = [0.0, 0.001, 0.1, 0.25, 1 / 3, 0.5, 0.7, 0.9, 0.999, 1.0]


def ds_sketch(x, k=200, double=True):
    s = datasketches.kll_doubles_sketch(k) if double else datasketches.kll_floats_sketch(k)
    s.update(np.asarray(x, np.float64 if double else np.float32))
    return s


@pytest.mark.parametrize("double", [True, False])
@pytest.mark.parametrize("n", [0, 1, 2, 150, 5_000, 120_000])
def test_reads_datasketches_bytes(n, double):
    x = np.random.default_rng(n).lognormal(size=n)
    theirs = ds_sketch(x, double=double)
    ours = KLLSketch.deserialize(theirs.serialize(), "float64" if double else "float32")
    assert ours.n == theirs.n and ours.num_retained == theirs.num_retained
    assert ours.serialize() == theirs.serialize()
    if n == 0:
        assert ours.is_empty
        return
    assert ours.get_normalized_rank_error() == pytest.approx(theirs.normalized_rank_error(False), rel=1e-14)
    for inclusive in (True, False):
        for r in RANKS:
            assert ours.quantile(r, inclusive) == theirs.get_quantile(r, inclusive)
        for y in np.quantile(x, [0.0, 0.2, 0.5, 0.9, 1.0]).tolist() + [-1.0, 1e9]:
            y = float(np.float32(y)) if not double else y
            assert ours.rank(y, inclusive) == theirs.get_rank(y, inclusive)
    assert ours.min == theirs.get_min_value() and ours.max == theirs.get_max_value()


@pytest.mark.parametrize("double", [True, False])
def test_datasketches_reads_ours_and_merges(double):
    rng = np.random.default_rng(5)
    x, y = rng.pareto(1.5, 200_000), rng.normal(size=50_000)
    dtype = "float64" if double else "float32"
    ours = KLLSketch(k=200, dtype=dtype)
    ours.update(x)
    cls = datasketches.kll_doubles_sketch if double else datasketches.kll_floats_sketch
    theirs = cls.deserialize(ours.serialize())
    assert theirs.n == ours.n
    for r in RANKS:
        assert theirs.get_quantile(r, True) == ours.quantile(r, True)
    # Merges across implementations, both ways, keep n and the guarantee.
    other = ds_sketch(y, double=double)
    ours.merge(KLLSketch.deserialize(other.serialize(), dtype))
    theirs.merge(other)
    assert ours.n == theirs.n == 250_000
    back = cls.deserialize(ours.serialize())
    back.update(np.asarray([1.0], np.float64 if double else np.float32))
    assert back.n == 250_001
    both = np.sort(np.concatenate([x, y]).astype(dtype))
    eps = ours.get_normalized_rank_error()
    for r in (0.05, 0.5, 0.95):
        q = ours.quantile(r)
        assert abs(np.searchsorted(both, q, side="right") / both.size - r) <= eps


def test_rank_error_formula_and_default_k():
    assert normalized_rank_error(800) <= 0.0035 < normalized_rank_error(780)
    assert normalized_rank_error(200) == pytest.approx(
        datasketches.kll_doubles_sketch.get_normalized_rank_error(200, False), rel=1e-14
    )
    assert KLLSketch().k == 800


@settings(max_examples=200)
@given(st.binary(max_size=300))
def test_garbage_bytes_raise_value_error(data):
    for dtype in ("float64", "float32"):
        try:
            KLLSketch.deserialize(data, dtype)
        except ValueError:
            pass


def test_flipped_bytes_never_crash():
    s = KLLSketch(k=50)
    s.update(np.random.default_rng(1).normal(size=3000))
    good = s.serialize()
    rng = np.random.default_rng(2)
    for _ in range(300):
        b = bytearray(good)
        b[rng.integers(len(b))] ^= int(rng.integers(1, 256))
        try:
            t = KLLSketch.deserialize(bytes(b))
        except ValueError:
            continue
        t.update([1.0, 2.0])
        t.merge(s)
        t.quantile(0.5)


def test_sketch_pickles_and_rejects_bad_arguments():
    s = KLLSketch(k=100, seed=3)
    s.update(np.arange(10_000.0))
    t = pickle.loads(pickle.dumps(s))
    assert t.serialize() == s.serialize()
    s.update(np.arange(5000.0))
    t.update(np.arange(5000.0))
    assert t.serialize() == s.serialize()  # the seed travels with the pickle
    with pytest.raises(ValueError):
        KLLSketch(k=7)
    with pytest.raises(ValueError):
        KLLSketch(dtype="int")
    with pytest.raises(ValueError, match="empty"):
        KLLSketch().quantile(0.5)
    with pytest.raises(ValueError):
        s.quantile(1.5)


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
