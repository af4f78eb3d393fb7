"""The ends of the float range (contract §5, "The ends of the float range"):
sums, SDs and means of scores near ±1.8e308 are exact, the maps of §4 do
not overflow, and a fitted scale that is not a finite double is refused
at fit — by the scalers, the reference and ``stats.m_estimate`` alike.

Oracles: exact rational arithmetic (``fractions.Fraction``) on the same
doubles, and ``math.fsum`` on data scaled by a power of two."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import outprob
from outprob import stats

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


# -- sums, SD and means at the top of the double range ----------------------------


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


# -- maps do not overflow; an unrepresentable scale is refused --------------------

M = 1.7e308
BEYOND = "exceeds the double range"


def quiet(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kwargs)


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


@pytest.mark.parametrize("norm", ["huber", "tukey"])
def test_batch_m_estimate_refuses_a_scale_beyond_the_double_range(norm):
    # The starting nMAD is finite; the iteration's scale is not.
    x = np.array([7.872883272189519e307, 1.4761656135355349e308, -1.761557632152405e308])
    with pytest.raises(ValueError, match=BEYOND):
        quiet(stats.m_estimate, x, norm=norm)
