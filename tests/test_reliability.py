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
