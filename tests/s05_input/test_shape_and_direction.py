"""Shape and score direction (contract §5, "Shape", "Score direction"):
1-D scores are one vector, 2-D (N, k) scores are k columns each fitted and
transformed on its own, other shapes are refused, a 1-D fit maps any shape
element-wise, and ``higher_is_outlier=False`` negates the scores first."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

import outprob

from ..samples import scores
from ..strategies import score_arrays

pytestmark = pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")


def test_shapes():
    X = np.column_stack([scores(seed=1), scores(seed=2) * 100])
    s = outprob.scaler("mean_nmad").fit(X)
    assert s.transform(X).shape == X.shape
    assert_array_equal(s.transform(X)[:, 1], outprob.scaler("mean_nmad").fit_transform(X[:, 1]))
    with pytest.raises(ValueError, match="1-D .* or 2-D"):
        outprob.GaussianScaler().fit(np.ones((3, 3, 3)))
    with pytest.raises(ValueError, match="no score column"):
        outprob.GaussianScaler().fit(np.ones((3, 0)))
    with pytest.raises(ValueError, match="1-D .* or 2-D"):
        outprob.GaussianScaler().fit(3.0)
    one = outprob.scaler("mean_std").fit(scores())
    assert one.transform(np.ones((2, 3))).shape == (2, 3)  # 1-D fit maps element-wise
    assert isinstance(one.transform(25.0), np.floating)  # scalar in, scalar out


@given(x=score_arrays(max_size=500), k=st.integers(1, 4), data=st.data())
def test_two_dimensional_scores_are_fitted_column_wise(x, k, data):
    cols = [x] + [data.draw(score_arrays(min_size=x.size, max_size=x.size)) for _ in range(k - 1)]
    X = np.stack(cols, axis=1)
    for name in ("mean_nmad", "median_niqr", "linear"):
        s2 = outprob.scaler(name).fit(X)
        P = s2.transform(X)
        assert P.shape == X.shape
        for j in range(k):
            s1 = outprob.scaler(name).fit(X[:, j])
            assert_array_equal(P[:, j], s1.transform(X[:, j]))
        assert s2.n_features_in_ == k


@given(x=score_arrays(max_size=300))
def test_lower_is_outlier_negates(x):
    for name in ("mean_std", "median_nmad", "trimmed_mean_niqr", "linear"):
        a = outprob.scaler(name, higher_is_outlier=False).fit_transform(x)
        b = outprob.scaler(name).fit_transform(-x)
        assert_array_equal(a, b)
