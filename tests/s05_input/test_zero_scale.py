"""Zero scale (contract §5, "Zero scale"): the chosen scale falls back to
nIQR, then to the SD, with a ``ZeroScaleWarning`` naming the fallback;
constant scores give probability 0 everywhere, never a division by zero
or a NaN."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import outprob
import outprob.reference as ref

NAMES = list(outprob.VARIANTS)


def test_zero_nmad_falls_back_to_niqr_with_warning():
    x = [1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 3.0, 4.0, 5.0]  # 5 of 9 tie: nMAD = 0
    with pytest.warns(outprob.ZeroScaleWarning, match="'nmad' is zero.*fell back to 'niqr'"):
        s = outprob.GaussianScaler("median", "nmad").fit(x)
    assert s.scale_used_ == "niqr"
    assert s.scale_ == ref.niqr(x) > 0


def test_zero_nmad_and_niqr_fall_back_to_std():
    x = [1.0] * 8 + [5.0]
    with pytest.warns(outprob.ZeroScaleWarning, match="fell back to 'std'"):
        s = outprob.GaussianScaler("mean", "nmad").fit(x)
    assert s.scale_used_ == "std"
    assert s.scale_ == pytest.approx(ref.std(x), rel=1e-12)
    with pytest.warns(outprob.ZeroScaleWarning, match="fell back to 'std'"):
        t = outprob.GaussianScaler("median", "trimmed_std", trim=0.2).fit(x)
    assert t.scale_ == pytest.approx(ref.std(x), rel=1e-12)


@pytest.mark.parametrize("name", [n for n in NAMES if n != "linear"])
def test_constant_scores_give_zero_probabilities(name):
    with pytest.warns(outprob.ZeroScaleWarning, match="constant"):
        s = outprob.scaler(name)
        p = s.fit_transform([4.2] * 10)
    assert_array_equal(p, np.zeros(10))
    assert s.scale_ == 0.0 and s.center_ == 4.2
    assert_array_equal(s.transform([4.0, 4.2, 5.0, np.nan])[:3], [0.0, 0.0, 1.0])


def test_constant_scores_linear_and_single_score():
    assert_array_equal(outprob.LinearScaler().fit_transform([2.0, 2.0]), [0.0, 0.0])
    with pytest.warns(outprob.ZeroScaleWarning):
        p = outprob.GaussianScaler("mean", "std", ddof=1).fit_transform([3.0])
    assert_array_equal(p, [0.0])
