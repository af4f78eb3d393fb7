"""``outprob.stats`` as an API (contract §7, ``outprob.stats``): with
``axis=None`` a NumPy scalar (``numpy.float64``, a ``float``, or
``numpy.float32`` for float32 arrays), with an integer axis an array equal
to a loop over the columns; parameters checked with messages naming them."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import outprob.reference as ref
from outprob import stats

# Closed-form estimators: rtol 1e-12 in float64.
RTOL64 = 1e-12


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


@pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")
def test_one_dimensional_stats_are_floats():
    m = stats.median([3.0, 1.0, 2.0])
    assert isinstance(m, float) and type(m) is np.float64
    assert type(stats.median(np.array([1.0, 2.0], dtype=np.float32))) is np.float32
    assert type(stats.quantile([1.0, 2.0], 0.5)) is np.float64
