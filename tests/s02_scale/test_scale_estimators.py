"""Scale estimators (contract §2): SD (ddof 0 and 1), nMAD, nIQR and the
trimmed SD (with the upper-trimmed mean of §1 it is paired with) from the
Rust core against the NumPy reference (Hypothesis) and against SciPy's
``median_abs_deviation`` and ``iqr`` and NumPy's ``std`` where NumPy is
accurate."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from hypothesis import assume, given
from hypothesis import strategies as st
from numpy.testing import assert_allclose

import outprob.reference as ref
from outprob import stats

from ..estimator_checks import RTOL64, close, equals_reference_test
from ..strategies import score_arrays

# The location estimators of §1 are tested alike in s01_location
# (the comparison both use is in tests/estimator_checks.py).
ESTIMATORS = {
    "std": (stats.std, ref.std),
    "nmad": (stats.nmad, ref.nmad),
    "niqr": (stats.niqr, ref.niqr),
}


test_estimator_equals_reference = equals_reference_test(ESTIMATORS)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@given(data=st.data())
def test_trimmed_estimators_equal_reference(dtype, data):
    x = data.draw(score_arrays(dtype=dtype))
    alpha = data.draw(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9]) | st.floats(0, 0.99))
    x64 = x.astype(np.float64)
    close(stats.upper_trimmed_mean(x, alpha), ref.upper_trimmed_mean(x64, alpha), dtype)
    center = ref.median(x64)
    close(stats.trimmed_std(x, center, alpha), ref.trimmed_std(x64, center, alpha), dtype)


@pytest.mark.parametrize("ddof", [0, 1])
@given(x=score_arrays(min_size=2))
def test_std_ddof_equals_reference(ddof, x):
    assert_allclose(stats.std(x, ddof), ref.std(x, ddof), rtol=RTOL64)


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
