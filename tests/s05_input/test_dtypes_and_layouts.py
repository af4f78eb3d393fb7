"""Input dtypes and memory layouts (contract §5, "Input"): float32 in,
float32 out; integers, booleans, lists and tuples become float64;
read-only, strided, negative-stride and big-endian arrays give the same
result without being modified; other dtypes are refused."""

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
def test_float32_in_float32_out(name):
    x = scores().astype(np.float32)
    s = outprob.scaler(name)
    assert s.fit_transform(x).dtype == np.float32
    assert s.transform(x[:5]).dtype == np.float32
    assert s.transform(x[:5].astype(np.float64)).dtype == np.float64


@quiet
@pytest.mark.parametrize("name", NAMES)
def test_integers_booleans_and_lists_become_float64(name):
    ints = np.array([1, 2, 2, 3, 3, 3, 4, 9, 20], dtype=np.int32)
    want = outprob.scaler(name).fit_transform(ints.astype(np.float64))
    for x in (ints, ints.astype(np.uint8), ints.tolist(), tuple(ints.tolist())):
        p = outprob.scaler(name).fit_transform(x)
        assert p.dtype == np.float64
        assert_array_equal(p, want)
    b = outprob.scaler(name).fit_transform(np.array([True, False, False, False, True]))
    assert b.dtype == np.float64


def layouts(x: np.ndarray):
    """The same scores as read-only, strided, reversed and big-endian arrays."""
    ro = x.copy()
    ro.flags.writeable = False
    wide = np.empty(2 * x.size, dtype=x.dtype)
    wide[::2] = x
    rev = x[::-1].copy()[::-1]
    big = x.astype(x.dtype.newbyteorder(">"))
    return {"read-only": ro, "strided": wide[::2], "negative-stride": rev, "big-endian": big}


@quiet
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_any_layout_gives_the_same_result_and_is_not_modified(name, dtype):
    x = scores().astype(dtype)
    want = outprob.scaler(name).fit_transform(x)
    for label, arr in layouts(x).items():
        before = arr.copy()
        s = outprob.scaler(name, higher_is_outlier=False)
        s.fit(arr)
        p = outprob.scaler(name).fit_transform(arr)
        assert_array_equal(p, want, err_msg=label)
        assert p.dtype == dtype
        s.transform(arr)
        assert_array_equal(arr, before, err_msg=label)  # never modified
        assert arr.dtype == before.dtype


@pytest.mark.parametrize("f", [stats.median, stats.nmad, stats.niqr, stats.mean, stats.std])
def test_estimators_accept_any_layout_and_leave_it_alone(f):
    x = scores()
    want = f(x)
    for label, arr in layouts(x).items():
        before = arr.copy()
        assert f(arr) == want, label
        assert_array_equal(arr, before)


def test_other_dtypes_are_refused():
    with pytest.raises(TypeError, match="real numbers"):
        outprob.GaussianScaler().fit(np.array([1 + 2j, 3 + 0j]))
    with pytest.raises(TypeError, match="real numbers"):
        outprob.GaussianScaler().fit(["a", "b"])
    with pytest.raises(TypeError, match="real numbers"):
        stats.median([object(), object()])
