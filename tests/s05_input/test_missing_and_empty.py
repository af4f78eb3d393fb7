"""Missing, infinite and empty input (contract §5, "Missing values", "Empty
input"): NaN is omitted when fitting and kept by transform, or refused
under ``nan_policy="raise"``; ±inf in fitting data is refused naming the
count and the first index, and maps to 1 and 0 in transform; empty input,
or nothing left after omitting NaN, is a ``ValueError``."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import outprob
from outprob import stats

from ..samples import scores

NAMES = list(outprob.VARIANTS)
quiet = pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")


@quiet
@pytest.mark.parametrize("name", NAMES)
def test_nan_is_omitted_in_fit_and_kept_in_transform(name):
    x = scores()
    holes = x.copy()
    holes[[3, 50, 120]] = np.nan
    clean = np.delete(x, [3, 50, 120])
    a = outprob.scaler(name).fit(holes)
    b = outprob.scaler(name).fit(clean)
    assert a.get_params() == b.get_params()
    for attr in ("center_", "scale_", "min_", "max_"):
        if hasattr(b, attr):
            assert getattr(a, attr) == getattr(b, attr)
    p = a.transform(holes)
    assert np.isnan(p[[3, 50, 120]]).all()
    assert_array_equal(np.delete(p, [3, 50, 120]), b.transform(clean))


@pytest.mark.parametrize("name", NAMES)
def test_nan_policy_raise(name):
    x = scores()
    x[[7, 9]] = np.nan
    with pytest.raises(ValueError, match=r"2 NaN values \(first at index 7\)"):
        outprob.scaler(name, nan_policy="raise").fit(x)
    with pytest.raises(ValueError, match="nan_policy"):
        outprob.scaler(name, nan_policy="ignore").fit(x)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_infinite_scores_in_fit_are_refused_with_count_and_index(name, bad):
    x = scores()
    x[[11, 40, 41]] = bad
    with pytest.raises(ValueError, match=r"3 infinite values \(first at index 11\)"):
        outprob.scaler(name).fit(x)
    with pytest.raises(ValueError, match=r"1 infinite value \(first at index 0\)"):
        stats.median([bad, 1.0])


@quiet
@pytest.mark.parametrize("name", NAMES)
def test_infinite_scores_in_transform(name):
    s = outprob.scaler(name).fit(scores())
    p = s.transform([np.inf, -np.inf, np.nan])
    assert p[0] == 1.0 and p[1] == 0.0 and np.isnan(p[2])
    q = outprob.scaler(name, higher_is_outlier=False).fit(-scores()).transform([-np.inf, np.inf])
    assert_array_equal(q, [1.0, 0.0])


@pytest.mark.parametrize("name", NAMES)
def test_empty_input(name):
    with pytest.raises(ValueError, match="empty"):
        outprob.scaler(name).fit([])
    with pytest.raises(ValueError, match="all 3 scores are NaN"):
        outprob.scaler(name).fit([np.nan] * 3)
    with pytest.raises(ValueError, match="empty"):
        stats.nmad(np.array([], dtype=np.float32))
