"""pytest-benchmark: the estimators of ``outprob.stats`` against NumPy,
SciPy and statsmodels, and the floors (one read pass, read + write)."""

import pytest

from suite import SIZES, params, run, size_id


@pytest.mark.parametrize("n", SIZES, ids=size_id)
@pytest.mark.parametrize(("op", "side"), list(params("stats", "floor")))
def test_stats(benchmark, op, side, n):
    run(benchmark, op, side, n)
