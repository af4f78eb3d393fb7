"""The comparison the closed-form estimators of contract §1 and §2 share:
the Rust core's result against the NumPy reference (``outprob.reference``)
on Hypothesis score arrays, in float64 and float32, within the tolerances
below."""

from __future__ import annotations

from typing import Callable, Dict, Tuple

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from .strategies import score_arrays

# Closed-form estimators: rtol 1e-12 in float64 (contract tolerance of the issue).
RTOL64 = 1e-12
# float32 input is computed in float64 and rounded once: one float32 ulp,
# plus one more for a float64 result that differs in its last bits and so
# may round to the neighbouring float32.
RTOL32 = 2 * float(np.finfo(np.float32).eps)


def close(got, want, dtype) -> None:
    """``got`` has the input's dtype and equals ``want`` within its rtol."""
    if dtype == np.float32:
        assert got.dtype == np.float32
        assert_allclose(got, np.float32(want), rtol=RTOL32, atol=0)
    else:
        assert got.dtype == np.float64
        assert_allclose(got, want, rtol=RTOL64, atol=0)


def equals_reference_test(estimators: Dict[str, Tuple[Callable, Callable]]) -> Callable:
    """The test that each of ``estimators`` (name → (``outprob.stats``'
    function, the reference's)) equals the reference computed in float64,
    for float64 and float32 input; a test module binds it to a ``test_``
    name."""

    @pytest.mark.parametrize("name", estimators)
    @pytest.mark.parametrize("dtype", [np.float64, np.float32])
    @given(data=st.data())
    def test(name, dtype, data):
        x = data.draw(score_arrays(dtype=dtype))
        ours, theirs = estimators[name]
        close(ours(x), theirs(x.astype(np.float64)), dtype)

    return test
