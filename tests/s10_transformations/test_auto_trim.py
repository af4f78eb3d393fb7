"""trim="auto" (contract §10): the Q–Q criterion against a direct
computation with SciPy's probplot, its recovery of a planted contamination,
and the scaler wiring (trim_, the chosen fraction used by the fit)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

import outprob
from outprob._scalers.auto_trim import FALLBACK, GRID, MIN_SCORES, auto_trim


def probplot_choice(x):
    """The criterion written with scipy.stats.probplot: the grid fraction
    whose retained scores, read as a complete sample, have the largest
    normal Q–Q correlation (Blom's positions, as probplot's are Filliben's:
    the two agree to the third digit; ties to the smallest fraction)."""
    x = np.sort(x)
    n = x.size
    best, chosen = -np.inf, None
    for a in GRID:
        m = n - int(np.floor(a * n))
        z = stats.norm.ppf((np.arange(1, m + 1) - 0.375) / (m + 0.25))
        r = np.corrcoef(x[:m], z)[0, 1]
        if r > best:
            best, chosen = r, float(a)
    return chosen


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("frac", [0.0, 0.02, 0.05, 0.1, 0.2])
def test_recovers_a_planted_contamination(seed, frac):
    rng = np.random.default_rng(seed)
    n = 2000
    k = int(round(frac * n))
    x = np.r_[rng.normal(10, 2, n - k), rng.normal(30, 2, k)]
    assert auto_trim(x) == pytest.approx(frac, abs=0.011)


@pytest.mark.parametrize("seed", range(5))
def test_equals_the_direct_computation(seed):
    rng = np.random.default_rng(100 + seed)
    x = np.r_[rng.lognormal(0, 0.3, 500), rng.uniform(3, 9, rng.integers(0, 60))]
    assert auto_trim(x) == probplot_choice(x)
    # Invariant to shifting and scaling the scores.
    assert auto_trim(3.0 * x - 7.0) == auto_trim(x)


def test_small_and_constant_inputs_take_the_papers_fraction():
    assert auto_trim(np.arange(MIN_SCORES - 1, dtype=float)) == FALLBACK
    assert auto_trim(np.full(100, 2.5)) == FALLBACK


def test_scaler_uses_the_chosen_fraction():
    rng = np.random.default_rng(7)
    x = np.r_[rng.normal(0, 1, 950), rng.normal(9, 1, 50)]
    s = outprob.GaussianScaler("trimmed_mean", "nmad", trim="auto").fit(x)
    assert s.trim_ == pytest.approx(0.05)
    fixed = outprob.GaussianScaler("trimmed_mean", "nmad", trim=s.trim_).fit(x)
    assert_allclose([s.center_, s.scale_], [fixed.center_, fixed.scale_], rtol=0, atol=0)
    assert_allclose(s.transform(x), fixed.transform(x), rtol=0, atol=0)
    # The reference's trimmed mean at that fraction (oracle: outprob.reference).
    assert s.center_ == pytest.approx(outprob.reference.upper_trimmed_mean(x, 0.05), rel=1e-12)
    # higher_is_outlier=False: the criterion reads the negated scores.
    neg = outprob.GaussianScaler("trimmed_mean", "nmad", trim="auto", higher_is_outlier=False).fit(-x)
    assert neg.trim_ == s.trim_
    # Column-wise for 2-D scores, and through to_dict.
    two = outprob.GaussianScaler("trimmed_mean", "std", trim="auto").fit(np.column_stack([x, x[:1000] * 0 + rng.normal(size=1000)]))
    assert two.trim_.shape == (2,) and two.trim_[0] == pytest.approx(0.05)
    back = outprob.from_dict(two.to_dict())
    assert_allclose(back.transform(np.column_stack([x, x])), two.transform(np.column_stack([x, x])))
    assert "trimmed_mean_nmad_auto" in outprob.TRANSFORMATIONS
    assert outprob.scaler("trimmed_mean_nmad_auto").fit(x).trim_ == s.trim_


def test_auto_is_the_only_string():
    with pytest.raises(ValueError, match="trim"):
        outprob.GaussianScaler("trimmed_mean", "std", trim="automatic").fit([1.0, 2.0, 3.0])


def test_partial_fit_refuses_auto_with_a_clear_message():
    with pytest.raises(TypeError, match="all scores at once"):
        outprob.scaler("trimmed_mean_nmad_auto").partial_fit(np.arange(100.0))
