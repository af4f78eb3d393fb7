"""The estimators of contract §1–§2 from the Rust core against the NumPy
reference (Hypothesis) and against independent libraries (NumPy, SciPy)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from hypothesis import assume, given
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

import outprob.reference as ref
from outprob import stats

from ..strategies import score_arrays

# Closed-form estimators: rtol 1e-12 in float64 (contract tolerance of the issue).
RTOL64 = 1e-12
# float32 input is computed in float64 and rounded once: one float32 ulp,
# plus one more for a float64 result that differs in its last bits and so
# may round to the neighbouring float32.
RTOL32 = 2 * float(np.finfo(np.float32).eps)

ESTIMATORS = {
    "mean": (stats.mean, ref.mean),
    "median": (stats.median, ref.median),
    "std": (stats.std, ref.std),
    "nmad": (stats.nmad, ref.nmad),
    "niqr": (stats.niqr, ref.niqr),
    "upper_trimmed_mean": (stats.upper_trimmed_mean, ref.upper_trimmed_mean),
}


def _close(got, want, dtype):
    if dtype == np.float32:
        assert got.dtype == np.float32
        assert_allclose(got, np.float32(want), rtol=RTOL32, atol=0)
    else:
        assert got.dtype == np.float64
        assert_allclose(got, want, rtol=RTOL64, atol=0)


@pytest.mark.parametrize("name", ESTIMATORS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@given(data=st.data())
def test_estimator_equals_reference(name, dtype, data):
    x = data.draw(score_arrays(dtype=dtype))
    ours, theirs = ESTIMATORS[name]
    _close(ours(x), theirs(x.astype(np.float64)), dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@given(data=st.data())
def test_quantile_equals_reference(dtype, data):
    x = data.draw(score_arrays(dtype=dtype))
    q = data.draw(st.lists(st.floats(0, 1), min_size=1, max_size=5))
    got = stats.quantile(x, q)
    want = [ref.quantile(x.astype(np.float64), v) for v in q]
    _close(got, np.array(want), dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@given(data=st.data())
def test_trimmed_estimators_equal_reference(dtype, data):
    x = data.draw(score_arrays(dtype=dtype))
    alpha = data.draw(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9]) | st.floats(0, 0.99))
    x64 = x.astype(np.float64)
    _close(stats.upper_trimmed_mean(x, alpha), ref.upper_trimmed_mean(x64, alpha), dtype)
    center = ref.median(x64)
    _close(stats.trimmed_std(x, center, alpha), ref.trimmed_std(x64, center, alpha), dtype)


@pytest.mark.parametrize("ddof", [0, 1])
@given(x=score_arrays(min_size=2))
def test_std_ddof_equals_reference(ddof, x):
    assert_allclose(stats.std(x, ddof), ref.std(x, ddof), rtol=RTOL64)


# -- independent oracles -----------------------------------------------------------


@given(x=score_arrays())
def test_median_and_quantiles_equal_numpy(x):
    # Same order statistics and NumPy's own interpolation: equal to the bit.
    assert stats.median(x) == np.median(x)
    q = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0]
    assert_array_equal(stats.quantile(x, q), np.quantile(x, q))


@given(x=score_arrays())
def test_nmad_equals_scipy(x):
    want = scipy.stats.median_abs_deviation(x, scale="normal")
    assert_allclose(stats.nmad(x), want, rtol=RTOL64, atol=0)


@given(x=score_arrays())
def test_niqr_equals_scipy(x):
    # SciPy interpolates its quantiles with a formula of its own (we match
    # NumPy's to the bit, see above): each of its two quantiles may sit one
    # ulp of max|x| away from ours, and the IQR subtracts them, so the
    # oracle's own error is absolute, on the scale of eps * max|x|.
    want = scipy.stats.iqr(x, scale="normal")
    oracle_error = 4 * np.finfo(np.float64).eps * float(np.max(np.abs(x))) / stats.NIQR_DIVISOR
    assert_allclose(stats.niqr(x), want, rtol=RTOL64, atol=oracle_error)


@given(x=score_arrays(min_size=2))
def test_std_equals_numpy_where_numpy_is_accurate(x):
    # numpy.std squares raw deviations from a pairwise-summed mean: compare
    # where its squares are normal numbers and the spread is resolved (a
    # one-ulp change of the mean then moves the SD by < 1e-20 relative).
    spread = float(np.max(x) - np.min(x))
    level = float(np.max(np.abs(x)))
    assume(spread > 1e-6 * level and spread > 1e-140 and level < 1e140)
    assert_allclose(stats.std(x), np.std(x), rtol=1e-12)
    assert_allclose(stats.std(x, ddof=1), np.std(x, ddof=1), rtol=1e-12)


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


def test_float32_results_are_float32():
    x = np.array([1.0, 2.0, 4.0], dtype=np.float32)
    for f in (stats.mean, stats.median, stats.nmad, stats.niqr, stats.std):
        assert isinstance(f(x), np.float32)
    assert stats.quantile(x, [0.5]).dtype == np.float32


def test_axis_matches_loop_over_columns():
    rng = np.random.default_rng(1)
    x = rng.lognormal(size=(50, 3, 4))
    for axis in (0, 1, 2, -1):
        got = stats.nmad(x, axis=axis)
        want = np.apply_along_axis(ref.nmad, axis, x)
        assert got.shape == want.shape
        assert_allclose(got, want, rtol=RTOL64)
    q = stats.quantile(x, [0.25, 0.75], axis=0)
    assert_array_equal(q, np.quantile(x, [0.25, 0.75], axis=0))
    assert stats.quantile(x, 0.5, axis=1).shape == (50, 4)


def test_parameter_errors():
    with pytest.raises(ValueError, match="ddof"):
        stats.std([1.0], ddof=1)
    with pytest.raises(ValueError, match="alpha"):
        stats.upper_trimmed_mean([1.0, 2.0], alpha=1.0)
    with pytest.raises(ValueError, match="q"):
        stats.quantile([1.0, 2.0], 1.5)
    with pytest.raises(ValueError, match="center"):
        stats.trimmed_std([1.0, 2.0], center=np.inf)
    with pytest.raises(ValueError, match="nan_policy"):
        stats.median([1.0], nan_policy="propagate")


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
    _close(stats.nmad(x), scipy.stats.median_abs_deviation(kept, scale="normal"), dtype)
    _close(stats.upper_trimmed_mean(x, 0.1), ref.upper_trimmed_mean(kept, 0.1), dtype)
