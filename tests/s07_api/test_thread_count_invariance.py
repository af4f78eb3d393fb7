"""The ``threads`` parameter (contract §7; its bound [1, 1024] is §5's):
results are bitwise the same for any number of threads (fixed chunking,
chunk results combined in order), for the scalers, the estimators and the
metrics, and the environment variable caps the threads. Inputs are large
enough for the core to split the work."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import outprob
from outprob import metrics, stats

N = 600_001  # above the core's parallel threshold
pytestmark = pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")


@pytest.fixture(scope="module")
def scores() -> np.ndarray:
    rng = np.random.default_rng(11)
    x = np.r_[rng.lognormal(size=N - N // 40), rng.uniform(30, 300, size=N // 40)]
    x[rng.choice(N, 50, replace=False)] = np.nan
    return x


@pytest.mark.parametrize("name", list(outprob.VARIANTS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_variants_do_not_depend_on_threads(name, dtype, scores):
    x = scores.astype(dtype)
    extra = {"maxiter": 60} if name in ("huber", "tukey") else {}
    one = outprob.scaler(name, threads=1, **extra)
    two = outprob.scaler(name, threads=2, **extra)
    assert_array_equal(one.fit_transform(x), two.fit_transform(x))
    assert one.to_dict()["fitted"] == two.to_dict()["fitted"]


def test_estimators_do_not_depend_on_threads(scores):
    for f in (stats.mean, stats.std, stats.median, stats.nmad, stats.niqr, stats.upper_trimmed_mean):
        assert f(scores, threads=1) == f(scores, threads=2), f.__name__
    assert stats.trimmed_std(scores, 1.0, threads=1) == stats.trimmed_std(scores, 1.0, threads=2)
    for norm in ("huber", "tukey"):
        assert stats.m_estimate(scores, norm, maxiter=60, threads=1) == stats.m_estimate(
            scores, norm, maxiter=60, threads=2
        )


def test_metrics_do_not_depend_on_threads(scores):
    x = scores[~np.isnan(scores)]
    p = outprob.scaler("mean_nmad").fit_transform(x)
    y = (x > 20).astype(int)
    assert metrics.evaluate(y, p, threads=1).to_dict() == metrics.evaluate(y, p, threads=2).to_dict()


def test_threads_argument_is_checked():
    with pytest.raises(ValueError, match="threads"):
        stats.median([1.0, 2.0], threads=0)
    with pytest.raises(TypeError, match="threads"):
        outprob.GaussianScaler(threads=1.5).fit([1.0, 2.0])


def test_environment_variable_caps_threads(scores):
    # A fresh interpreter with OUTPROB_NUM_THREADS=1 computes the same numbers.
    code = textwrap.dedent(
        f"""
        import numpy as np, outprob
        rng = np.random.default_rng(3)
        x = rng.lognormal(size={N})
        print(repr(outprob.stats.nmad(x)), repr(outprob.stats.mean(x)))
        """
    )
    env = {**os.environ, "OUTPROB_NUM_THREADS": "1"}
    capped = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    x = np.random.default_rng(3).lognormal(size=N)
    assert capped.stdout.split() == [repr(stats.nmad(x)), repr(stats.mean(x))]
