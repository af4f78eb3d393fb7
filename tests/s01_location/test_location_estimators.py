"""Location estimators (contract §1): mean, median, quantiles (type 7) and
the upper-trimmed mean from the Rust core against the NumPy reference
(Hypothesis) and against NumPy itself — the median and quantiles to the
bit, the mean correctly rounded — on small and large inputs (the sampled,
bracketed selection, which also serves the nMAD of §2), and closed-form
values of every §1–§2 estimator."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

import outprob.reference as ref
from outprob import stats

from ..estimator_checks import close, equals_reference_test
from ..strategies import score_arrays

# The scale estimators of §2 are tested alike in s02_scale
# (the comparison both use is in tests/estimator_checks.py).
ESTIMATORS = {
    "mean": (stats.mean, ref.mean),
    "median": (stats.median, ref.median),
    "upper_trimmed_mean": (stats.upper_trimmed_mean, ref.upper_trimmed_mean),
}


test_estimator_equals_reference = equals_reference_test(ESTIMATORS)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@given(data=st.data())
def test_quantile_equals_reference(dtype, data):
    x = data.draw(score_arrays(dtype=dtype))
    q = data.draw(st.lists(st.floats(0, 1), min_size=1, max_size=5))
    got = stats.quantile(x, q)
    want = [ref.quantile(x.astype(np.float64), v) for v in q]
    close(got, np.array(want), dtype)


# -- independent oracles -----------------------------------------------------------


@given(x=score_arrays())
def test_median_and_quantiles_equal_numpy(x):
    # Same order statistics and NumPy's own interpolation: equal to the bit.
    assert stats.median(x) == np.median(x)
    q = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0]
    assert_array_equal(stats.quantile(x, q), np.quantile(x, q))


@given(x=score_arrays())
def test_mean_is_correctly_rounded(x):
    assert stats.mean(x) == math.fsum(x) / x.size


# -- examples ---------------------------------------------------------------------


def test_known_values():
    x = [1.0, 2.0, 3.0, 4.0, 100.0]
    assert stats.median(x) == 3.0
    assert stats.nmad(x) == 1.0 / stats.NMAD_DIVISOR
    assert stats.niqr(x) == 2.0 / stats.NIQR_DIVISOR
    assert stats.upper_trimmed_mean(x, 0.2) == 2.5
    assert stats.trimmed_std(x, 0.0, 0.2) == math.sqrt(30 / 4)
    assert stats.std([2, 4, 4, 4, 5, 5, 7, 9]) == 2.0
    assert stats.mean([1e16, 1.0, -1e16]) == 1.0 / 3.0


# -- large inputs: the sampled, bracketed selection and its parallel read ----------


def _large(kind: str, n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    if kind == "lognormal":
        return rng.lognormal(size=n)
    if kind == "sorted":
        return np.sort(rng.normal(size=n))
    if kind == "ties":
        return rng.integers(0, 7, size=n).astype(np.float64)
    x = rng.exponential(size=n)  # "nan": omitted by the default policy
    x[rng.choice(n, n // 100, replace=False)] = np.nan
    return x


@pytest.mark.parametrize("kind", ["lognormal", "sorted", "ties", "nan"])
@pytest.mark.parametrize("n", [300_001, 600_000])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_large_selection_equals_numpy_and_scipy(kind, n, dtype):
    x = _large(kind, n).astype(dtype)
    kept = x[~np.isnan(x)].astype(np.float64)
    q = [0.0, 0.25, 0.5, 0.75, 0.99, 1.0]
    assert stats.median(x) == np.median(kept).astype(dtype)
    assert_array_equal(stats.quantile(x, q), np.quantile(kept, q).astype(dtype))
    close(stats.nmad(x), scipy.stats.median_abs_deviation(kept, scale="normal"), dtype)
    close(stats.upper_trimmed_mean(x, 0.1), ref.upper_trimmed_mean(kept, 0.1), dtype)
