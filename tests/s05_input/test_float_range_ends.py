"""Regression tests for the reproducers of issue #10 (reliability): each gives
the documented result or a clear ValueError — never a panic, an abort, an
unbounded run or a silently wrong number (contract §5).

Oracles: exact rational arithmetic (``fractions.Fraction``) on the same
doubles, and ``math.fsum`` on data scaled by a power of two."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import outprob
from outprob import metrics, stats

pytestmark = pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")

MAX = float(np.finfo(np.float64).max)


def exact_std(x, ddof=0):
    """Population SD by exact rationals, one rounding at the square root."""
    q = [Fraction(v) for v in x]
    m = sum(q) / len(q)
    var = sum((v - m) ** 2 for v in q) / (len(q) - ddof)
    # sqrt of a rational far above the double range: scale by 4^k first.
    k = max(0, (var.numerator.bit_length() - var.denominator.bit_length()) // 2 - 500)
    return math.sqrt(float(var / 4**k)) * 2.0**k


# -- item 1: bin counts are bounded before anything is allocated ------------------

HUGE_BIN_COUNTS = [2**62, 10**12, 2**64, 10**100, metrics.MAX_BINS + 1]


@pytest.mark.parametrize("k", HUGE_BIN_COUNTS)
@pytest.mark.parametrize("scheme", metrics.SCHEMES)
def test_bin_edges_refuses_huge_bin_counts(k, scheme):
    with pytest.raises(ValueError, match=r"at most 1000000 bins"):
        metrics.bin_edges([0.1, 0.5], k, scheme)


@pytest.mark.parametrize("k", HUGE_BIN_COUNTS)
@pytest.mark.parametrize(
    "measure",
    [metrics.refinement_error, metrics.calibration_error, metrics.evaluate, metrics.reliability_curve],
)
def test_binned_measures_refuse_huge_bin_counts(measure, k):
    for scheme in metrics.SCHEMES:
        with pytest.raises(ValueError, match=r"n_bins must be at most 1000000 bins"):
            measure([0, 1], [0.1, 0.5], bins=scheme, n_bins=k)


def test_too_many_bin_counts_are_refused():
    with pytest.raises(ValueError, match=r"at most 1000 bin counts"):
        metrics.evaluate([0, 1], [0.1, 0.5], n_bins=[5] * (metrics.MAX_BIN_COUNTS + 1))


def test_largest_bin_count_is_accepted():
    e = metrics.bin_edges([0.1, 0.5], metrics.MAX_BINS, "equal_width")
    assert e.size == metrics.MAX_BINS + 1 and e[0] == 0.0 and e[-1] == 1.0
    assert metrics.bin_edges([0.1, 0.5], metrics.MAX_BINS, "equal_frequency").size <= metrics.MAX_BINS + 1


@pytest.mark.parametrize("k", [0, -1, True, 2.0, "5", None])
def test_bin_counts_of_the_wrong_kind_are_value_errors(k):
    with pytest.raises(ValueError, match=r"must be a positive int"):
        metrics.bin_edges([0.1, 0.5], k)


# -- item 2: sums, SD and means at the top of the double range -------------------


def test_upper_trimmed_mean_of_huge_equal_values_is_that_value():
    assert stats.upper_trimmed_mean(np.full(20, 1e307)) == 1e307
    assert stats.upper_trimmed_mean(np.full(20, MAX)) == MAX
    assert stats.upper_trimmed_mean(np.full(20, -MAX)) == -MAX


def test_trimmed_mean_std_scaler_fits_huge_equal_values():
    s = outprob.scaler("trimmed_mean_std").fit(np.full(20, 1e307))
    assert s.center_ == 1e307


@pytest.mark.parametrize(
    "x",
    [
        [-1.5e308, 1.5e308, 1.5e308],
        [MAX, -MAX, MAX / 3],
        [MAX, -MAX],
        [-MAX, -MAX, MAX, 0.0, 1e-300],
    ],
)
def test_std_at_the_top_of_the_double_range_is_exact(x):
    got = stats.std(np.array(x))
    want = exact_std(x)
    assert got == pytest.approx(want, rel=4e-16)


def test_std_is_invariant_to_scaling_by_powers_of_two():
    rng = np.random.default_rng(3)
    x = rng.normal(size=50)
    base = stats.std(x)
    for k in (-1000, -500, 500, 1020):
        assert stats.std(x * 2.0**k) == base * 2.0**k


def test_mean_std_on_huge_scores_is_not_constant():
    with np.errstate(all="raise"):
        s = outprob.scaler("mean_std").fit([-1.5e308, 1.5e308, 1.5e308])
    assert s.scale_ == pytest.approx(exact_std([-1.5e308, 1.5e308, 1.5e308]), rel=4e-16)


def test_reference_mean_and_std_at_the_top_of_the_range():
    import outprob.reference as ref

    assert ref.upper_trimmed_mean(np.full(20, 1e307)) == 1e307
    assert ref.std([-1.5e308, 1.5e308, 1.5e308]) == pytest.approx(exact_std([-1.5e308, 1.5e308, 1.5e308]), rel=4e-16)


# -- item 3: maps do not overflow; an unrepresentable scale is refused -----------

M = 1.7e308


@pytest.mark.parametrize("module", ["outprob", "reference"])
def test_mean_std_map_of_huge_scores_equals_the_scaled_down_map(module):
    x = np.array([-M, -M, M, M])
    if module == "outprob":
        got, down = (outprob.scaler("mean_std").fit_transform(v) for v in (x, x / 10))
    else:
        from outprob.reference import scaling as rs

        got, down = (rs.variant_probabilities("mean_std", v) for v in (x, x / 10))
    np.testing.assert_allclose(got, down, rtol=1e-14)
    np.testing.assert_allclose(got, [0, 0, math.erf(1 / math.sqrt(2))] * 1 + [math.erf(1 / math.sqrt(2))], rtol=1e-14)


def test_median_std_map_is_finite_when_s_minus_mu_overflows():
    x = np.array([-M] * 3 + [1e308] * 2)
    from outprob.reference import scaling as rs

    got = outprob.scaler("median_std").fit_transform(x)
    assert np.isfinite(got).all()
    # μ = −1.7e308, σ = exact SD; z = (1e308 + 1.7e308)/(σ√2) by rationals.
    sigma = exact_std(x.tolist())
    z = float((Fraction(1e308) - Fraction(-M)) / Fraction(sigma)) / math.sqrt(2)
    np.testing.assert_allclose(got, [0, 0, 0, math.erf(z), math.erf(z)], rtol=1e-13)
    np.testing.assert_allclose(rs.variant_probabilities("median_std", x), got, rtol=1e-13)


def test_linear_map_over_the_whole_double_range():
    got = outprob.LinearScaler().fit_transform([-M, 0.0, M])
    np.testing.assert_array_equal(got, [0.0, 0.5, 1.0])
    from outprob.reference import scaling as rs

    np.testing.assert_array_equal(rs.variant_probabilities("linear", [-M, 0.0, M]), [0.0, 0.5, 1.0])
    s = outprob.LinearScaler().fit([-M, M])
    np.testing.assert_array_equal(s.transform([-MAX, -M, M, MAX]), [0.0, 0.0, 1.0, 1.0])


@pytest.mark.parametrize("name", ["median_nmad", "mean_nmad", "huber", "tukey"])
def test_unrepresentable_scale_is_refused_at_fit(name):
    with pytest.raises(ValueError, match=r"exceeds the double range"):
        outprob.scaler(name).fit([-M, -M, M, M])


def test_reference_refuses_an_unrepresentable_scale():
    from outprob.reference import scaling as rs

    with pytest.raises(ValueError, match=r"exceeds the double range"):
        rs.fit_gaussian([-M, -M, M, M], "median", "nmad")


# -- item 4: M-estimation is equivariant under powers of two ---------------------


@pytest.mark.parametrize("norm", ["huber", "tukey"])
def test_m_estimate_is_equivariant_under_powers_of_two(norm):
    import warnings

    small = np.ldexp([-9e307, 4e307, -8e307, 9e307, 4e307], -1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = stats.m_estimate(small, norm)
        for k in (1000, 500, -20):  # 2^1000: the data near 1e308
            got = stats.m_estimate(np.ldexp(small, k), norm)
            assert (got.location, got.scale) == (math.ldexp(base.location, k), math.ldexp(base.scale, k))
            assert (got.n_iter, got.converged) == (base.n_iter, base.converged)


def test_huber_near_the_top_of_the_range_converges_like_its_scaled_copy():
    x = np.array([-9e307, 4e307, -8e307, 9e307, 4e307])
    got = stats.m_estimate(x, "huber")
    assert got.converged and got.n_iter > 0


def test_convergence_warning_states_the_iterations_run():
    x = np.array([1.0, 2.0, 6.0, 40.0, 3.0])
    with pytest.warns(outprob.ConvergenceWarning, match=r"stopped after 2 of at most maxiter=2 iterations"):
        stats.m_estimate(x, "huber", maxiter=2)


@pytest.mark.parametrize("norm", ["huber", "tukey"])
def test_large_n_path_agrees_with_small_n_path_over_a_wide_span(norm):
    import warnings

    import outprob.reference as ref

    rng = np.random.default_rng(0)
    n = 20_000  # ≥ 16384: the bucketed path
    x = np.exp(rng.uniform(np.log(1e-300), np.log(1e300), n)) * rng.choice([-1, 1], n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = stats.m_estimate(x, norm), ref.m_estimate(x, norm)
    assert got.location == pytest.approx(want.location, rel=1e-9, abs=1e-12 * want.scale)
    assert got.scale == pytest.approx(want.scale, rel=1e-9)
    assert got.n_iter == want.n_iter


# -- item 5: no unbounded run ------------------------------------------------------

SUBNORMAL = np.array([5e-324, 1e-323, 3e-323, 2e-322, 1.5e-323])


def test_maxiter_is_bounded():
    for maxiter in (10**9, 2**64, 1001):
        with pytest.raises(ValueError, match=r"maxiter must be at most 1000"):
            outprob.GaussianScaler("tukey", "tukey", maxiter=maxiter).fit(SUBNORMAL)
        with pytest.raises(ValueError, match=r"maxiter must be at most 1000"):
            stats.m_estimate(SUBNORMAL, "huber", maxiter=maxiter)


@pytest.mark.parametrize("norm", ["huber", "tukey"])
def test_subnormal_scores_converge_like_their_scaled_copy(norm):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sub = stats.m_estimate(SUBNORMAL, norm, maxiter=1000)
        big = stats.m_estimate(np.ldexp(SUBNORMAL, 1074), norm, maxiter=1000)
    assert (sub.n_iter, sub.converged) == (big.n_iter, big.converged)
    assert sub.n_iter < 1000
    assert sub.location == pytest.approx(math.ldexp(big.location, -1074), abs=5e-324)
