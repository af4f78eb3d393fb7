"""Input that is not real numbers (contract §5, "Input that is not real
numbers raises ``outprob.InputError``"; "``axis=`` … of length 0"): one
clear error per kind — ragged nesting, sparse matrices, strings, ``None``,
complex numbers, dates — the same from every entry point (scalers,
``stats``, ``metrics``, ``outprob.pyod``); object arrays of numbers and
object labels are accepted; an empty axis is a clear ``ValueError``."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import outprob
from outprob import metrics, stats

pytestmark = pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")

# name → (input, pattern of the message). Each message says what to do.
BAD = {
    "ragged": ([[1.0, 2.0], [3.0]], r"ragged.*rectangular \(n, k\) table"),
    "ragged_objects": (np.array([[1.0, 2.0], [3.0]], dtype=object), r"ragged"),
    "strings": (["1.0", "abc"], r"got strings \(dtype <U3\).*np\.asarray\(x, dtype=float\)"),
    "numeric_strings": (np.array(["1", "2"]), r"strings.*numeric text neither"),
    "strings_in_objects": (np.array(["1", "2"], dtype=object), r"\[0\] is the string '1'.*never parsed"),
    "none": ([1.0, None, 3.0], r"\[1\] is None.*float\('nan'\)"),
    "object": (np.array([1.0, {"a": 1}], dtype=object), r"\[1\] is a dict: every argument must be a real number"),
    "complex": (np.array([1 + 2j, 3 + 0j]), r"Complex data not supported.*x\.real"),
    "complex_objects": (np.array([1.0, 2j], dtype=object), r"Complex data not supported"),
    "dates": (np.array(["2024-01-01"], dtype="datetime64[D]"), r"dates or durations"),
}


def sparse_matrix():
    from scipy import sparse

    return sparse.csr_matrix(np.eye(3))


ENTRY_POINTS = {
    "GaussianScaler.fit": lambda x: outprob.GaussianScaler().fit(x),
    "LinearScaler.fit_transform": lambda x: outprob.LinearScaler().fit_transform(x),
    "transform": lambda x: outprob.scaler("mean_nmad").fit([1.0, 2.0, 4.0]).transform(x),
    "stats.mean": lambda x: stats.mean(x),
    "stats.median": lambda x: stats.median(x),
    "stats.quantile": lambda x: stats.quantile(x, 0.5),
    "stats.m_estimate": lambda x: stats.m_estimate(x),
    "metrics.brier_score(p)": lambda x: metrics.brier_score([0, 1], x),
    "metrics.brier_score(y)": lambda y: metrics.brier_score(y, [0.1, 0.9]),
}


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("kind", list(BAD))
def test_one_clear_error_per_kind_of_bad_input(entry, kind):
    x, pattern = BAD[kind]
    with pytest.raises(outprob.InputError, match=pattern) as info:
        ENTRY_POINTS[entry](x)
    # Both kinds of handler catch it: NumPy raises TypeError for objects,
    # ValueError for strings and ragged lists.
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_sparse_matrices_are_refused(entry):
    with pytest.raises(outprob.InputError, match=r"sparse matrices are not supported.*toarray"):
        ENTRY_POINTS[entry](sparse_matrix())


def test_none_never_becomes_nan():
    # np.asarray([1, None], dtype=float) would make it NaN, silently.
    with pytest.raises(outprob.InputError, match="None"):
        outprob.scaler("mean_std").fit_transform(np.array([1.0, None, 2.0], dtype=object))


def test_object_arrays_of_numbers_are_accepted():
    x = np.array([1, 2.5, np.float32(3.0), True, 9], dtype=object)
    want = outprob.scaler("mean_nmad").fit_transform(np.array([1, 2.5, 3.0, 1.0, 9]))
    assert_array_equal(outprob.scaler("mean_nmad").fit_transform(x), want)
    assert stats.mean(x) == stats.mean(np.array([1, 2.5, 3.0, 1.0, 9]))


def test_object_labels_are_accepted():
    # y as an object array of 0/1 (contract §5: labels may be object arrays).
    p = [0.1, 0.8, 0.4]
    y = np.array([0, 1, True], dtype=object)
    assert metrics.brier_score(y, p) == metrics.brier_score([0, 1, 1], p)
    with pytest.raises(outprob.InputError, match="labels"):
        metrics.brier_score(np.array(["0", "1", "1"], dtype=object), p)
    with pytest.raises(ValueError, match=r"y_true\[2\] = 2"):
        metrics.brier_score(np.array([0, 1, 2], dtype=object), p)


def test_numeric_strings_in_object_arrays_are_refused():
    # Text is never parsed: stats.mean(np.array(["1", "2"], dtype=object)) is not 1.5.
    with pytest.raises(outprob.InputError, match="string"):
        stats.mean(np.array(["1", "2"], dtype=object))


def test_std_of_an_empty_axis_is_a_clear_value_error():
    # A message naming the axis and the shape, not NumPy's "cannot reshape".
    with pytest.raises(ValueError, match=r"empty along axis 0 \(shape \(0, 0\)\)"):
        stats.std(np.empty((0, 0)), axis=0)
    with pytest.raises(ValueError, match="empty along axis 1"):
        stats.quantile(np.empty((3, 0)), 0.5, axis=1)
    # Nothing to reduce over is not an error: no lanes, an empty result.
    assert stats.median(np.empty((0, 4)), axis=1).shape == (0,)

