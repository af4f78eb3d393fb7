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


def _sketch_of_weight(top):
    """DataSketches' bytes of a valid sketch of 15 items, all at level
    `top` (weight 2^top each): n = 15·2^top (0.94·2^64 for top = 60)."""
    import struct

    from outprob.streaming import KLLSketch

    s = KLLSketch(k=16)
    s.update(np.arange(1.0, 16.0))
    b = bytes(s.serialize())
    assert b[18] == 1 and len(b) == 40 + 15 * 8  # one level of 15 items
    items = [b[40 + 8 * i : 48 + 8 * i] for i in range(15)]
    items.sort(key=lambda v: struct.unpack("<d", v)[0])  # levels above 0 are sorted
    head = bytearray(b[:20])
    struct.pack_into("<Q", head, 8, 15 << top)
    head[18] = top + 1
    for offset in range(2000):  # the free space below the top level
        crafted = bytes(head) + struct.pack(f"<{top + 1}I", *[offset] * (top + 1))
        crafted += b[24:40] + b"".join(items)
        try:
            return KLLSketch.deserialize(crafted)
        except ValueError:
            continue
    raise AssertionError("no offset gives a valid sketch")


def test_sketch_counts_never_wrap():
    big = _sketch_of_weight(60)
    assert big.n == 15 * 2**60 and big.quantile(0.5) == 8.0
    before = big.serialize()
    with pytest.raises(ValueError, match="at most 2\\^64"):
        big.merge(_sketch_of_weight(60))
    assert big.serialize() == before
    half = _sketch_of_weight(59)
    half.merge(_sketch_of_weight(59))  # 2 · 15·2^59 < 2^64: fine
    assert half.n == 15 * 2**60 and half.quantile(0.5) == 8.0


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


# -- 5. from_dict refuses missing parameters ----------------------------------------
def test_from_dict_refuses_every_missing_parameter():
    d = outprob.GaussianScaler(higher_is_outlier=False).fit([1.0, 2.0, 3.0]).to_dict()
    for name in list(d["params"]):
        broken = copy.deepcopy(d)
        del broken["params"][name]
        with pytest.raises(ValueError, match=name):
            outprob.from_dict(broken)


# -- 6. stored fitted attributes that contradict the stream or themselves -------------
@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d["fitted"].update(n_samples_seen_=-1),
        lambda d: d["fitted"].update(rank_error_=float("nan")),
        lambda d: d["fitted"].update(center_interval_=[0.0, 1.0]),
        lambda d: d["fitted"].update(probability_error_=2.0),
        lambda d: d["fitted"].update(center_=d["fitted"]["center_"] + 1e-9),
        lambda d: d["fitted"].update(n_samples_seen_=d["fitted"]["n_samples_seen_"] + 1),
        lambda d: d["stream"]["states"].append(d["stream"]["states"][0]),
        lambda d: d["stream"].update(ndim=2),
    ],
    ids=["n<0", "rank nan", "interval", "p>1", "center", "n+1", "columns", "ndim"],
)
def test_fitted_attributes_must_agree_with_the_stream(edit):
    d = outprob.GaussianScaler("median", "nmad", k=64).partial_fit(np.arange(500.0) % 37).to_dict()
    edit(d)
    with pytest.raises(ValueError):
        outprob.GaussianScaler.from_dict(d)


def test_pickled_stream_must_agree_with_the_fit():
    import pickle

    s = outprob.GaussianScaler("median", "nmad").partial_fit(np.arange(50.0))
    state = s.__getstate__()
    state["center_"], state["center_interval_"] = 3.0, (3.0, 3.0)
    t = outprob.GaussianScaler.__new__(outprob.GaussianScaler)
    with pytest.raises(ValueError, match="contradict"):
        t.__setstate__(state)
    back = pickle.loads(pickle.dumps(s))
    assert back.to_dict() == s.to_dict()


# -- 7. a gamma of subnormal shape: the exact map, no panic -------------------------
def test_gamma_of_a_subnormal_shape_matches_scipy():
    from scipy import special

    s = outprob.GammaScaler(offset=1e-155).fit([-1.0, 1.0])
    k = s.mean_ / s.scale_
    assert 0 < k < np.finfo(float).tiny  # subnormal
    x = np.array([-1.0, 0.0, 0.5, 1.0, 1e10])
    t = (x + s.offset_) / s.scale_
    with np.errstate(invalid="ignore"):
        q = special.gammaincc(k, np.maximum(t, 0.0)) / special.gammaincc(k, k)
    want = np.where(t <= k, 0.0, 1 - q)  # at or below the mean: 0 (contract §10)
    np.testing.assert_allclose(s.transform(x), want, rtol=1e-12, atol=0)


def test_gamma_from_untrusted_json_with_a_huge_scale_maps():
    from scipy import special

    d = outprob.GammaScaler().fit(np.random.default_rng(0).gamma(2.0, size=100)).to_dict()
    d["fitted"]["scale_"] = 1e308
    s = outprob.from_dict(d)
    x = np.array([1.0, 2.0, 1e300])
    k, t = s.mean_ / s.scale_, (x + s.offset_) / s.scale_
    want = np.maximum(0.0, 1 - special.gammaincc(k, t) / special.gammaincc(k, k))
    np.testing.assert_allclose(s.transform(x), want, rtol=1e-12, atol=1e-300)


# -- docs: a float32 sketch refuses what float32 cannot hold --------------------------
def test_float32_sketch_refuses_scores_beyond_float32():
    from outprob.streaming import KLLSketch

    s = KLLSketch(k=200, dtype="float32")
    s.update(np.array([1.0, 2.0]))
    before = s.serialize()
    for x in ([3.0, 1e300], [-1e39], np.array([3.0, 1e300])):
        with pytest.raises(ValueError, match="float32"):
            s.update(np.asarray(x, dtype=float))
        assert s.serialize() == before  # nothing added
    s.update(np.array([np.inf, 3.4e38]))  # ±inf and the float32 range stay allowed
    assert s.n == 4


# -- 8. malformed stored state: ValueError, never another exception -------------------
HOSTILE = [None, -1, 2**64, 2**70, -(2**70), float("inf"), float("nan"), 1.5, True, "x", [], {}, [1, -1]]


def _leaves(obj, path=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(obj, list) and obj and not all(isinstance(v, (int, float)) for v in obj):
        for i, v in enumerate(obj):
            yield from _leaves(v, path + (i,))
    yield path


def _replaced(d, path, value):
    d = copy.deepcopy(d)
    if not path:
        return value
    target = d
    for p in path[:-1]:
        target = target[p]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return d


_DELETE = object()


@pytest.mark.parametrize(
    "params",
    [
        {"center": "median", "scale": "nmad", "k": 64},
        {},
        {"window": 20, "refit_every": 7},
    ],
    ids=["sketch", "moments", "window"],
)
def test_malformed_stored_state_raises_value_error(params):
    """Every field of a checkpoint replaced by a hostile value (or deleted):
    from_dict loads it (when it still describes a valid state) or raises
    ValueError — never OverflowError, AttributeError, KeyError or TypeError."""
    d = outprob.GaussianScaler(**params).partial_fit(np.arange(300.0) % 41).to_dict()
    calls = 0
    for path in set(_leaves(d)):
        for value in HOSTILE + [_DELETE]:
            if value is _DELETE and not path:
                continue
            broken = _replaced(d, path, value)
            calls += 1
            try:
                outprob.from_dict(broken)
            except ValueError:
                pass
    assert calls > 200


def test_streaming_fit_from_dict_raises_value_error():
    from outprob.streaming import StreamingFit

    good = StreamingFit("median", "nmad", k=64).update(np.arange(100.0)).to_dict()
    for broken in [
        1,
        {**good, "params": 1},
        {**good, "extra": 1},
        {**good, "states": [{"since_refit": 0, "seen": 3, "values": "AAAA"}]},
        {**good, "states": [{**good["states"][0], "sketch": "not base64!"}]},
        {**good, "states": [{**good["states"][0], "seed": -1}]},
        {**good, "ndim": True},
        {**good, "fitted": [{}]},
        {**good, "params": {**good["params"], "k": "800"}},
        {**good, "params": {**good["params"], "higher_is_outlier": "no"}},
    ]:
        with pytest.raises(ValueError):
            StreamingFit.from_dict(broken)


# -- 9. size parameters: ValueError for any Python int --------------------------------
@pytest.mark.parametrize(
    "make",
    [
        lambda: outprob.GaussianScaler(k=2**32).partial_fit([1.0, 2.0]),
        lambda: outprob.GaussianScaler(k=2**32).fit([1.0, 2.0]),
        lambda: outprob.GaussianScaler(k=7).fit([1.0, 2.0]),
        lambda: outprob.GaussianScaler(window=2**64).partial_fit([1.0, 2.0]),
        lambda: outprob.GaussianScaler(window=5, refit_every=2**64).partial_fit([1.0, 2.0]),
        lambda: outprob.LinearScaler(window=2**64).fit([1.0, 2.0]),
        lambda: outprob.GaussianScaler(ddof=2**70).fit([1.0, 2.0]),
        lambda: outprob.streaming.KLLSketch(k=2**40),
        lambda: outprob.streaming.KLLSketch(seed=2**64),
        lambda: outprob.streaming.KLLSketch.deserialize(outprob.streaming.KLLSketch().serialize(), seed=-1),
        lambda: outprob.streaming.StreamingFit(seed=2**64),
        lambda: outprob.streaming.normalized_rank_error(2**70),
        lambda: outprob.SigmoidScaler(maxiter=2**64).fit([1.0, 2.0, 5.0]),
        lambda: outprob.MixtureScaler(maxiter=2**64).fit([1.0, 2.0, 5.0]),
        lambda: outprob.TopKScaler(k=2**64).fit([1.0, 2.0, 5.0]),
        lambda: outprob.GaussianScaler(threads=2**64).fit([1.0, 2.0, 5.0]),
        lambda: stats.std([1.0, 2.0, 5.0], ddof=2**70),
    ],
)
def test_size_parameters_refuse_any_int_with_value_error(make):
    import outprob.streaming  # noqa: F401 - the lambdas read it

    with pytest.raises(ValueError):
        make()


# -- 10. partial_fit on scalers that cannot stream, merge with itself -----------------
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


def test_predict_confidence_takes_any_real_contamination():
    pytest.importorskip("pyod")
    from pyod.models.knn import KNN

    from outprob.pyod import predict_confidence

    X = np.r_[np.random.default_rng(1).normal(size=(100, 2)), [[5.0, 5.0]]]
    new = np.array([[0.0, 0.0], [1.5, 1.5], [4.0, 4.0]])
    for gamma in (0.1, 0.05):
        knn = KNN(contamination=gamma).fit(X)
        want = knn.predict_confidence(new)  # PyOD takes builtin numbers only
        for same in (np.float32(gamma), np.float64(gamma)):
            knn.contamination = same
            assert np.allclose(predict_confidence(knn, new), want, rtol=0, atol=1e-12)


# -- docs: ScaledDetector notices scores changed in place ----------------------------
class _Detector:
    """The least a detector is (contract §7): training scores and a scorer."""

    def __init__(self, scores):
        self.decision_scores_ = np.asarray(scores, dtype=float)

    def decision_function(self, X):
        return np.asarray(X, dtype=float).reshape(-1)


def test_scaled_detector_notices_scores_changed_in_place():
    from outprob.pyod import ScaledDetector

    d = _Detector(np.arange(20.0))
    scaled = ScaledDetector(d, "mean_std")
    before = scaled.outlier_proba()
    d.decision_scores_ *= 3.0
    d.decision_scores_[-1] = 1000.0
    want = ScaledDetector(_Detector(d.decision_scores_.copy()), "mean_std").outlier_proba()
    got = scaled.outlier_proba()
    assert not np.array_equal(got, before)
    assert np.array_equal(got, want)


# -- 11. concurrent partial_fit loses nothing, publishes everything -------------------
@pytest.mark.parametrize("name", ["median_nmad", "mean_std", "linear"])
def test_concurrent_first_partial_fits_lose_no_batch(name):
    from tests.s09_streaming.test_streaming_threads import _run

    rng = np.random.default_rng(0)
    batches = [rng.lognormal(size=(300, 3)) for _ in range(8 * 4)]
    s = outprob.scaler(name)
    snapshots = []

    def work(i):
        for b in batches[i::8]:
            s.partial_fit(b)
            snapshots.append(s.to_dict())

    _run([lambda i=i: work(i) for i in range(8)])
    # Every batch reached every column, and the last publish shows them all.
    assert list(s.n_samples_seen_) == [len(batches) * 300] * 3
    # Each checkpoint taken meanwhile is one consistent state.
    for d in snapshots[::4]:
        outprob.from_dict(d)


# -- 13. a resumed window continues as the original ----------------------------------
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
