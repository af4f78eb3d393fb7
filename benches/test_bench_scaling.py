"""pytest-benchmark: ``transform(out=)`` against the NumPy/SciPy Gaussian
scaling expression and ``np.copyto``, and every named variant's
``fit_transform`` against the same variant in NumPy/SciPy/statsmodels."""

import pytest

from suite import SIZES, params, run, size_id


@pytest.mark.parametrize("n", SIZES, ids=size_id)
@pytest.mark.parametrize(("op", "side"), list(params("scaling")))
def test_scaling(benchmark, op, side, n):
    run(benchmark, op, side, n)
