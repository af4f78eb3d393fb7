"""Contract §11, "Tails beyond the calibration set": ``ConformalScaler(tail=)``
against the NumPy/SciPy reference (``outprob.reference.conformal_tails``)
and SciPy's distributions — the generalised Pareto fit against
``scipy.stats.genpareto.fit`` (likelihood at least as high), the tail
p-value ``p_u·G(s)`` against ``genpareto.sf``/``norm.sf``/``gamma.sf``
(the Gaussian one's stated accuracy against mpmath),
the DKWM check against ``scipy.stats.kstest`` — the conformal bulk, the
fallback of a rejected tail, and the guarantee kept (exact validity for
α ≥ p_u) by enumeration at small sizes."""

from __future__ import annotations

import math
import pickle

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats

import outprob
import outprob.reference.conformal as rc
import outprob.reference.conformal_tails as rt
from ..strategies import examples

TAILS = ("gpd", "gaussian", "gamma")


def _samples(tail: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.gamma(3.0, 1.0, n) if tail == "gamma" else rng.normal(size=n)


@pytest.mark.parametrize("shape", [0.1, 0.4, 1.0])
def test_gpd_fit_is_scipys_maximum_likelihood(shape):
    # The exceedances' GPD as outprob fits it has a log-likelihood at least
    # SciPy's MLE's (floc=0), and the same parameters to fit accuracy.
    y = stats.genpareto.rvs(shape, scale=2.0, size=2000, random_state=7)
    cal = np.r_[np.zeros(18_000), y]  # threshold 0 at q = 0.9: the exceedances are y
    s = outprob.ConformalScaler(tail="gpd").fit(cal)
    fit = s.tail_
    assert fit["accepted"] and fit["threshold"] == 0.0 and fit["exceedances"] == 2000
    xi, sigma = fit["params"]["shape"], fit["params"]["scale"]
    c, _, scale = stats.genpareto.fit(y, floc=0)
    ours = stats.genpareto.logpdf(y, xi, scale=sigma).sum()
    theirs = stats.genpareto.logpdf(y, c, scale=scale).sum()
    assert ours >= theirs - 1e-6
    assert_allclose([xi, sigma], [c, scale], rtol=2e-3, atol=2e-3)
    assert_allclose([xi, sigma], rt.gpd_fit(y), rtol=1e-6)


def test_a_light_tail_gets_the_exponential():
    # ξ is kept ≥ 0: a bounded tail is fitted by the exponential (SciPy's
    # exponential MLE, σ the mean exceedance), never a finite endpoint.
    y = stats.genpareto.rvs(-0.4, scale=1.0, size=3000, random_state=3)
    cal = np.r_[np.zeros(27_000), y]
    fit = outprob.ConformalScaler(tail="gpd").fit(cal).tail_
    _, scale = stats.expon.fit(y, floc=0)
    assert fit["params"]["shape"] == 0.0
    assert_allclose(fit["params"]["scale"], scale, rtol=1e-6)


@pytest.mark.parametrize("tail", TAILS)
def test_tail_pvalues_equal_the_definition(tail):
    cal = _samples(tail, 4000, 11)
    s = outprob.ConformalScaler(tail=tail).fit(cal)
    assert s.tail_["accepted"], s.tail_
    u, m, p_u = rt.threshold(cal, 0.9)
    assert (s.tail_["threshold"], s.tail_["exceedances"], s.tail_["threshold_pvalue"]) == (u, m, p_u)
    x = np.linspace(cal.min() - 1, cal.max() + 5, 400)
    p = s.pvalues(x)
    # The bulk is the conformal p-value, bit for bit.
    bulk = x <= u
    assert_array_equal(p[bulk], rc.pvalues(cal, x[bulk]))
    # The tail: p_u times SciPy's conditional survival with the fitted parameters.
    params = s.tail_["params"]
    if tail == "gpd":
        g = stats.genpareto.sf(x - u, params["shape"], scale=params["scale"])
    elif tail == "gaussian":
        assert_allclose([params["center"], params["scale"]],
                        [np.median(cal), stats.median_abs_deviation(cal, scale="normal")], rtol=1e-12)
        g = stats.norm.sf(x, params["center"], params["scale"]) / stats.norm.sf(u, params["center"], params["scale"])
    else:
        dist = stats.gamma(params["shape"], loc=-params["offset"], scale=params["scale"])
        g = dist.sf(x) / dist.sf(u)
    assert_allclose(p[~bulk], p_u * g[~bulk], rtol=1e-9, atol=1e-300)
    assert_allclose(p, rt.tail_pvalues(cal, x, tail), rtol=1e-9, atol=1e-300)
    # Continuous at u, non-increasing, and below 1/(n + 1) far out.
    assert np.all(np.diff(p) <= 0)
    assert p[-1] < 1 / (cal.size + 1)
    assert_allclose(s.transform(x), 1 - p)


def test_gaussian_tail_has_the_stated_accuracy():
    # §11: S(z) = erfc(z/√2)/2 to relative 1e-15 where it is a normal
    # double, to 4 units of 2⁻¹⁰⁷⁴ where subnormal. The oracle is mpmath at
    # 40 digits (SciPy's norm.sf rounds z/√2 and errs by up to z²·2⁻⁵³, and
    # underflows with it); p = p_u·S(s)/S(u) adds two roundings of its own.
    mpmath.mp.dps = 40
    cal = _samples("gaussian", 4000, 11)
    s = outprob.ConformalScaler(tail="gaussian").fit(cal)
    fit = s.tail_
    assert fit["accepted"]
    c, sc, u, p_u = fit["params"]["center"], fit["params"]["scale"], fit["threshold"], fit["threshold_pvalue"]
    x = c + sc * np.r_[np.linspace(1.5, 39.0, 1500), np.geomspace(1.5, 38.5, 500)]
    p = s.pvalues(x)
    z = (x - c) / sc  # the standardised scores, rounded as the core rounds them

    def sf(t: float) -> mpmath.mpf:
        return mpmath.erfc(mpmath.mpf(t) / mpmath.sqrt(2)) / 2

    s_u = sf((u - c) / sc)
    tiny = 2.0**-1074
    for zi, pi in zip(z, p):
        exact = sf(float(zi))
        want = float(p_u * exact / s_u)
        if exact >= 2.0**-1022:
            assert abs(pi - want) <= 2.5e-15 * want, (zi, pi, want)
        else:
            assert abs(pi - want) <= 8 * tiny * max(1.0, float(p_u / s_u)), (zi, pi, want)
    # Against SciPy within its own error (the rounding of z/√2, ~z²·2⁻⁵³).
    g = stats.norm.sf(z) / stats.norm.sf((u - c) / sc)
    normal = stats.norm.sf(z) >= 2.0**-1022
    assert np.all(np.abs(p - p_u * g)[normal] <= (4e-15 + 2.5e-16 * z**2)[normal] * (p_u * g)[normal])


@pytest.mark.parametrize("tail", TAILS)
def test_dkwm_check_is_the_kolmogorov_statistic(tail):
    cal = _samples(tail, 3000, 5)
    s = outprob.ConformalScaler(tail=tail, delta=0.1).fit(cal)
    g, _ = rt.survival(cal, tail, 0.9)
    stat, bound = rt.dkwm_check(cal, g, 0.9, 0.1)
    assert_allclose(s.tail_["statistic"], stat, rtol=1e-9)
    assert s.tail_["bound"] == pytest.approx(math.sqrt(math.log(2 / 0.1) / (2 * 300)), rel=1e-12)
    assert s.tail_["bound"] == pytest.approx(bound, rel=1e-12)
    assert s.tail_["accepted"] == (stat <= bound)


def test_a_rejected_or_unfittable_tail_falls_back_to_conformal():
    cal = np.random.default_rng(0).uniform(size=20_000)  # a Gaussian misses the cut-off tail
    x = np.linspace(-0.5, 2.0, 101)
    s = outprob.ConformalScaler(tail="gaussian").fit(cal)
    assert not s.tail_["accepted"] and s.tail_["reason"] == "rejected by the DKWM check"
    assert s.tail_["statistic"] > s.tail_["bound"]
    assert_array_equal(s.pvalues(x), outprob.ConformalScaler().fit(cal).pvalues(x))
    few = outprob.ConformalScaler(tail="gpd").fit(np.arange(50.0))  # 5 exceedances < 10
    assert not few.tail_["accepted"] and few.tail_["reason"].startswith("too few")
    assert_array_equal(few.pvalues(x * 60), rc.pvalues(np.arange(50.0), x * 60))
    assert outprob.ConformalScaler().fit(cal).tail_ is None


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.integers(-50, 50), min_size=3, max_size=14, unique=True),
    st.sampled_from(TAILS),
    st.floats(0.5, 0.95),
)
def test_validity_for_alpha_at_least_p_u_by_enumeration(values, tail, q):
    # Contract §11: for α ≥ p_u the tailed p-value is valid exactly. Given
    # the multiset of n + 1 distinct exchangeable scores, each is the test
    # score with probability 1/(n + 1): P(p ≤ α) is the fraction of them
    # whose p-value against the other n is ≤ α.
    z = np.array(values, dtype=float) / 7.0
    n = z.size - 1
    p = np.empty(z.size)
    p_u = set()
    for i in range(z.size):
        s = outprob.ConformalScaler(tail=tail, tail_quantile=q).fit(np.delete(z, i))
        p[i] = s.pvalues(z[i : i + 1])[0]
        p_u.add(s.tail_["threshold_pvalue"])
    (pu,) = p_u  # distinct scores: p_u = (1 + m)/(n + 1) whichever is left out
    for k in range(1, n + 2):
        alpha = k / (n + 1)
        if alpha >= pu:
            assert np.mean(p <= alpha) <= alpha + 1e-12


def test_options_state_and_errors():
    cal = np.random.default_rng(2).normal(size=(3000, 2))
    s = outprob.ConformalScaler(tail="gpd", tail_quantile=0.8).fit(cal)
    assert isinstance(s.tail_, list) and len(s.tail_) == 2
    x = np.random.default_rng(3).normal(size=(50, 2)) * 3
    for copy in (outprob.ConformalScaler.from_dict(s.to_dict()), pickle.loads(pickle.dumps(s))):
        assert_array_equal(copy.pvalues(x), s.pvalues(x))
        assert copy.tail_ == s.tail_
    assert_array_equal(s.pvalues(x.astype(np.float32)),
                       s.pvalues(x.astype(np.float32).astype(np.float64)).astype(np.float32))
    low = outprob.ConformalScaler(tail="gpd", higher_is_outlier=False).fit(-cal[:, 0])
    assert_array_equal(low.pvalues(-x[:, 0]),
                       outprob.ConformalScaler(tail="gpd").fit(cal[:, 0]).pvalues(x[:, 0]))
    assert np.isnan(s.pvalues(np.array([[np.nan, 0.0]]))[0, 0])
    with pytest.raises(ValueError, match="tail must be"):
        outprob.ConformalScaler(tail="pareto").fit(cal)
    with pytest.raises(ValueError, match="tail_quantile"):
        outprob.ConformalScaler(tail="gpd", tail_quantile=1.0).fit(cal)
    with pytest.raises(ValueError, match="tail_quantile"):
        outprob.ConformalScaler(tail="gpd", tail_quantile=0.0).fit(cal)
    with pytest.raises(ValueError, match="conditional"):
        outprob.ConformalScaler(tail="gpd", conditional="dkwm").fit(cal)
    with pytest.raises(ValueError, match="partial_fit"):
        outprob.ConformalScaler(tail="gpd").partial_fit(cal[:, 0])
    bad = s.to_dict()
    bad["spec"]["tail"] = "pareto"
    with pytest.raises(ValueError, match="tail"):
        outprob.ConformalScaler.from_dict(bad)
