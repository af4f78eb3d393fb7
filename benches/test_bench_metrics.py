"""pytest-benchmark: ``metrics.evaluate`` (every measure, stratified,
equiareal bins k = 5..20) against ``outprob.reference.metrics``."""

import pytest

from suite import SIZES, params, run, size_id


@pytest.mark.parametrize("n", SIZES, ids=size_id)
@pytest.mark.parametrize(("op", "side"), list(params("metrics")))
def test_metrics(benchmark, op, side, n):
    run(benchmark, op, side, n)
