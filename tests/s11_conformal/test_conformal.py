"""ConformalScaler (contract §11) against the NumPy reference
(``outprob.reference.conformal``): marginal, randomised and
calibration-conditional p-values, contamination, float32, 2-D, NaN rules,
serialisation; the super-uniformity of marginal p-values as a binomial
test over many exchangeable draws."""

from __future__ import annotations

import json
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats

import outprob
import outprob.reference.conformal as rc

from ..strategies import examples, score_arrays


def probes(x: np.ndarray) -> np.ndarray:
    u = np.unique(x.astype(np.float64))
    mids = (u[:-1] / 2 + u[1:] / 2) if u.size > 1 else u
    far = np.array([u[0] - abs(u[0]) - 1, u[-1] + abs(u[-1]) + 1, np.inf, -np.inf, np.nan])
    return np.concatenate([u, mids, far]).astype(x.dtype)


@given(x=score_arrays(max_size=400, dtype=np.float64) | score_arrays(max_size=400, dtype=np.float32),
       negate=st.booleans())
def test_marginal_pvalues_match_the_reference(x, negate):
    s = outprob.ConformalScaler(higher_is_outlier=not negate).fit(x)
    q = probes(x)
    oriented = -x.astype(np.float64) if negate else x.astype(np.float64)
    want = rc.pvalues(oriented[~np.isnan(oriented)], -q.astype(np.float64) if negate else q.astype(np.float64))
    got = s.pvalues(q)
    assert got.dtype == x.dtype
    tol = 2 * np.finfo(x.dtype).eps
    assert_allclose(got, want.astype(x.dtype), rtol=tol, atol=0)
    assert_allclose(s.transform(q), (1 - want).astype(x.dtype), rtol=tol, atol=tol)
    n = int(np.count_nonzero(~np.isnan(x)))
    finite = got[~np.isnan(got)]
    assert np.all((finite >= 1 / (n + 1) * (1 - tol)) & (finite <= 1))
    assert np.isnan(got[-1])


def test_infinities_and_the_smallest_pvalue():
    s = outprob.ConformalScaler().fit([1.0, 2.0, 3.0])
    assert_array_equal(s.pvalues([np.inf, -np.inf, np.nan, 3.0]), [0.25, 1.0, np.nan, 0.5])
    assert_array_equal(s.transform(np.array([np.inf, -np.inf])), [0.75, 0.0])
    assert isinstance(s.pvalues(2.0), np.float64)


def test_randomized_ties_match_the_reference_with_the_same_uniforms():
    rng = np.random.default_rng(1)
    cal = rng.integers(0, 5, size=60).astype(float)
    x = rng.integers(-1, 7, size=300).astype(float)
    s = outprob.ConformalScaler(tie_break="randomized", seed=11).fit(cal)
    want = rc.pvalues(cal, x, u=rc.uniforms(11, x.size))
    assert_allclose(s.pvalues(x), want, rtol=1e-15, atol=0)
    assert_array_equal(s.pvalues(x), s.pvalues(x))  # deterministic
    assert not np.array_equal(s.pvalues(x), s.set_params(seed=12).fit(cal).pvalues(x))


@pytest.mark.parametrize("n", [1, 5, 16, 17, 40, 333])
@pytest.mark.parametrize("delta", [0.05, 0.2])
def test_conditional_pvalues_match_the_reference(n, delta):
    rng = np.random.default_rng(n)
    cal = rng.normal(size=n)
    x = np.r_[cal, rng.normal(size=50) * 2, -10.0, 10.0]
    marginal = rc.pvalues(cal, x)
    s = outprob.ConformalScaler(conditional="simes", delta=delta).fit(cal)
    assert_allclose(s.pvalues(x), rc.adjust(marginal, n, rc.simes_sequence(n, delta, max(1, n // 2))),
                    rtol=1e-13, atol=1e-15)
    k = max(1, n // 3)
    s = outprob.ConformalScaler(conditional="simes", delta=delta, simes_k=k).fit(cal)
    assert_allclose(s.pvalues(x), rc.adjust(marginal, n, rc.simes_sequence(n, delta, k)), rtol=1e-13, atol=1e-15)
    s = outprob.ConformalScaler(conditional="dkwm", delta=delta).fit(cal)
    assert_allclose(s.pvalues(x), rc.dkwm(marginal, n, delta), rtol=1e-15)
    s = outprob.ConformalScaler(conditional="mc", delta=delta, mc_simulations=300, seed=4).fit(cal)
    if n < 17:
        assert_allclose(s.pvalues(x), rc.dkwm(marginal, n, delta), rtol=1e-15)
        assert not hasattr(s, "mc_correction_") or n >= 17
    else:
        gamma = s.mc_correction_
        assert gamma == pytest.approx(rc.mc_correction(n, delta, 300, 4), abs=1e-6)
        assert_allclose(s.pvalues(x), rc.adjust(marginal, n, rc.hybrid_sequence(n, delta, gamma)),
                        rtol=1e-12, atol=1e-15)
    # Conditional p-values are never below the marginal ones.
    for c in ("simes", "dkwm", "mc"):
        p = outprob.ConformalScaler(conditional=c, delta=delta, mc_simulations=200).fit(cal).pvalues(x)
        assert np.all(p >= marginal - 1e-15)


def test_conditional_validity_holds_over_calibration_sets():
    # With probability >= 1 - delta over the calibration set,
    # P(p <= a | calibration) <= a for every a: with uniform scores the
    # conditional CDF is known exactly, P(p <= t | cal) = #... computed below.
    n, delta, reps = 100, 0.2, 300
    rng = np.random.default_rng(5)
    grid = np.linspace(0.001, 0.999, 400)
    for method in ("simes", "dkwm"):
        bad = 0
        for _ in range(reps):
            cal = rng.uniform(size=n)
            s = outprob.ConformalScaler(conditional=method, delta=delta).fit(cal)
            # Scores of new inliers on a fine grid: P(p <= a) = measure of {s : p(s) <= a}.
            u = np.linspace(0, 1, 20001)[1:-1]
            p = np.sort(s.pvalues(u))
            if np.any(np.searchsorted(p, grid, side="right") / p.size > grid + 1e-4):
                bad += 1
        # Binomial: bad ~ Bin(reps, <= delta); fail only if P(X >= bad) < 1e-4.
        assert stats.binom.sf(bad - 1, reps, delta) > 1e-4, (method, bad)


@settings(max_examples=examples(12))
@given(
    n=st.integers(1, 60),
    kind=st.sampled_from(["normal", "exponential", "ties"]),
    alpha=st.sampled_from([0.05, 0.1, 0.2, 0.5]),
    seed=st.integers(0, 2**32 - 1),
)
def test_marginal_pvalues_of_exchangeable_inliers_are_super_uniform(n, kind, alpha, seed):
    """P(p <= alpha) <= alpha over 2000 independent (calibration, test)
    draws: the count of p <= alpha is at most Bin(2000, alpha); an example
    fails when the one-sided binomial p-value is below 1e-5 · 12 / N for N
    examples (1e-5 for the 12 derandomised ones of the default run), a
    false alarm rate of at most 12e-5 over the run however many examples
    it has (Bonferroni)."""
    rng = np.random.default_rng(seed)
    reps = 2000
    draw = {
        "normal": lambda size: rng.normal(size=size),
        "exponential": lambda size: rng.exponential(size=size),
        "ties": lambda size: rng.integers(0, 3, size=size).astype(float),
    }[kind]
    data = draw((reps, n + 1))
    hits = 0
    s = outprob.ConformalScaler()
    for row in data:
        hits += bool(s.fit(row[:n]).pvalues(row[n]) <= alpha)
    assert stats.binom.sf(hits - 1, reps, alpha) > 1e-5 * 12 / examples(12), (hits, reps * alpha)


def test_contamination_trims_the_largest_calibration_scores():
    x = np.r_[np.arange(100.0), [1000.0, 2000.0]]
    s = outprob.ConformalScaler(contamination=0.02).fit(x)
    assert s.trimmed_ == 2 and s.n_calibration_ == 100 and s.contamination_ == 0.02
    assert_array_equal(s.sorted_, np.arange(100.0))
    assert_allclose(s.pvalues([99.5, 50.0]), rc.pvalues(np.arange(100.0), [99.5, 50.0]))
    rng = np.random.default_rng(0)
    x = np.r_[rng.normal(size=970), rng.normal(8, 1, size=30)]
    s = outprob.ConformalScaler(contamination="auto").fit(x)
    assert s.contamination_ == 0.03 and s.trimmed_ == 30
    assert outprob.scaler("conformal_trimmed").fit(x).trimmed_ == 30
    with pytest.raises(ValueError, match="contamination"):
        outprob.ConformalScaler(contamination="most").fit(x)


def test_two_dimensional_columns_are_calibrated_on_their_own():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 3))
    s = outprob.ConformalScaler().fit(X)
    Q = rng.normal(size=(10, 3))
    for j in range(3):
        assert_allclose(s.pvalues(Q)[:, j], rc.pvalues(X[:, j], Q[:, j]))
    assert_array_equal(s.n_calibration_, [80, 80, 80])
    with pytest.raises(ValueError, match="expecting 3 features"):
        s.transform(Q[:, :2])


def test_nan_rules_and_bad_parameters():
    x = np.array([1.0, np.nan, 3.0, 2.0])
    s = outprob.ConformalScaler().fit(x)
    assert s.n_calibration_ == 3
    with pytest.raises(ValueError, match="nan_policy='raise'"):
        outprob.ConformalScaler(nan_policy="raise").fit(x)
    with pytest.raises(ValueError, match="infinite"):
        outprob.ConformalScaler().fit([1.0, np.inf])
    with pytest.raises(ValueError, match="empty"):
        outprob.ConformalScaler().fit([])
    for bad in ({"conditional": "bonferroni"}, {"delta": 1.0}, {"tie_break": "up"},
                {"simes_k": 0}, {"mc_simulations": 10}):
        with pytest.raises((ValueError, TypeError)):
            outprob.ConformalScaler(**bad).fit(x)
    before = x.copy()
    s.transform(x)
    assert_array_equal(x, before)


def test_pandas_in_and_out():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"knn": np.arange(10.0), "lof": np.arange(10.0)[::-1]}, index=list("abcdefghij"))
    s = outprob.ConformalScaler().set_output(transform="pandas").fit(df)
    out = s.transform(df)
    assert list(out.columns) == ["knn", "lof"] and list(out.index) == list(df.index)
    p = s.pvalues(df)
    assert isinstance(p, pd.DataFrame)
    assert_allclose(out.to_numpy(), 1 - p.to_numpy())


@pytest.mark.parametrize("params", [{}, {"conditional": "simes", "delta": 0.1},
                                    {"conditional": "mc", "mc_simulations": 200},
                                    {"contamination": "auto", "higher_is_outlier": False}])
def test_to_dict_and_pickle_round_trip(params):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(120, 2))
    s = outprob.ConformalScaler(**params).fit(x)
    q = rng.normal(size=(30, 2)) * 2
    d = json.loads(json.dumps(s.to_dict()))
    assert_array_equal(outprob.ConformalScaler.from_dict(d).pvalues(q), s.pvalues(q))
    assert_array_equal(pickle.loads(pickle.dumps(s)).pvalues(q), s.pvalues(q))
    # A parameter changed after fit takes effect at the next fit only.
    s.set_params(delta=0.3)
    assert_array_equal(pickle.loads(pickle.dumps(s)).pvalues(q), s.pvalues(q))
    broken = json.loads(json.dumps(d))
    broken["fitted"]["sorted_"][0][0] = 1e9  # not ascending any more
    with pytest.raises(ValueError, match="ascending"):
        outprob.ConformalScaler.from_dict(broken)
    broken = json.loads(json.dumps(d))
    broken["spec"]["delta"] = 2.0
    with pytest.raises(ValueError):
        outprob.ConformalScaler.from_dict(broken)


def test_fpr_upper_bound_covers_the_true_rate():
    # Uniform scores: the FPR of flagging s >= t is 1 - t exactly.
    rng = np.random.default_rng(8)
    t = np.linspace(0.0, 0.999, 200)
    n, delta, reps = 200, 0.1, 300
    for method in ("dkwm", "simes"):
        misses = sum(
            bool(np.any(outprob.fpr_upper_bound(rng.uniform(size=n), t, delta=delta, method=method) < 1 - t))
            for _ in range(reps)
        )
        assert stats.binom.sf(misses - 1, reps, delta) > 1e-4, (method, misses)
    cal = rng.uniform(size=n)
    eps = math.sqrt(math.log(2 / delta) / (2 * n))
    want = np.minimum(1, (1 + (cal[:, None] >= t).sum(0)) / (n + 1) + eps)
    assert_allclose(outprob.fpr_upper_bound(cal, t, delta=delta), want, rtol=1e-15)


def test_registered_names():
    assert isinstance(outprob.scaler("conformal"), outprob.ConformalScaler)
    assert outprob.scaler("conformal_trimmed").contamination == "auto"
    assert {"conformal", "conformal_trimmed"} <= set(outprob.TRANSFORMATIONS)
    assert "conformal" not in outprob.VARIANTS
