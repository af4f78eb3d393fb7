"""Bounds on size parameters (contract §5, "Bounds on size parameters"):
bin counts, ``maxiter``, sketch sizes, windows, seeds, counts and threads
are checked before anything is allocated, and a Python int of any size
gives ``ValueError`` (never ``OverflowError``); the largest allowed bin
count works."""

from __future__ import annotations

import numpy as np
import pytest

import outprob
from outprob import metrics, stats

pytestmark = pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")

SUBNORMAL = np.array([5e-324, 1e-323, 3e-323, 2e-322, 1.5e-323])
HUGE_BIN_COUNTS = [2**62, 10**12, 2**64, 10**100, metrics.MAX_BINS + 1]


@pytest.mark.parametrize("k", HUGE_BIN_COUNTS)
@pytest.mark.parametrize("scheme", metrics.SCHEMES)
def test_bin_edges_refuses_huge_bin_counts(k, scheme):
    with pytest.raises(ValueError, match=r"at most 1000000 bins"):
        metrics.bin_edges([0.1, 0.5], k, scheme)


@pytest.mark.parametrize("k", HUGE_BIN_COUNTS)
@pytest.mark.parametrize(
    "measure",
    [metrics.refinement_error, metrics.calibration_error, metrics.evaluate, metrics.reliability_curve],
)
def test_binned_measures_refuse_huge_bin_counts(measure, k):
    for scheme in metrics.SCHEMES:
        with pytest.raises(ValueError, match=r"n_bins must be at most 1000000 bins"):
            measure([0, 1], [0.1, 0.5], bins=scheme, n_bins=k)


def test_too_many_bin_counts_are_refused():
    with pytest.raises(ValueError, match=r"at most 1000 bin counts"):
        metrics.evaluate([0, 1], [0.1, 0.5], n_bins=[5] * (metrics.MAX_BIN_COUNTS + 1))


def test_largest_bin_count_is_accepted():
    e = metrics.bin_edges([0.1, 0.5], metrics.MAX_BINS, "equal_width")
    assert e.size == metrics.MAX_BINS + 1 and e[0] == 0.0 and e[-1] == 1.0
    assert metrics.bin_edges([0.1, 0.5], metrics.MAX_BINS, "equal_frequency").size <= metrics.MAX_BINS + 1


@pytest.mark.parametrize("k", [0, -1, True, 2.0, "5", None])
def test_bin_counts_of_the_wrong_kind_are_value_errors(k):
    with pytest.raises(ValueError, match=r"must be a positive int"):
        metrics.bin_edges([0.1, 0.5], k)


def test_maxiter_is_bounded():
    for maxiter in (10**9, 2**64, 1001):
        with pytest.raises(ValueError, match=r"maxiter must be at most 1000"):
            outprob.GaussianScaler("tukey", "tukey", maxiter=maxiter).fit(SUBNORMAL)
        with pytest.raises(ValueError, match=r"maxiter must be at most 1000"):
            stats.m_estimate(SUBNORMAL, "huber", maxiter=maxiter)


@pytest.mark.parametrize(
    "make",
    [
        lambda: outprob.GaussianScaler(k=2**32).partial_fit([1.0, 2.0]),
        lambda: outprob.GaussianScaler(k=2**32).fit([1.0, 2.0]),
        lambda: outprob.GaussianScaler(k=7).fit([1.0, 2.0]),
        lambda: outprob.GaussianScaler(window=2**64).partial_fit([1.0, 2.0]),
        lambda: outprob.GaussianScaler(window=5, refit_every=2**64).partial_fit([1.0, 2.0]),
        lambda: outprob.LinearScaler(window=2**64).fit([1.0, 2.0]),
        lambda: outprob.GaussianScaler(ddof=2**70).fit([1.0, 2.0]),
        lambda: outprob.streaming.KLLSketch(k=2**40),
        lambda: outprob.streaming.KLLSketch(seed=2**64),
        lambda: outprob.streaming.KLLSketch.deserialize(outprob.streaming.KLLSketch().serialize(), seed=-1),
        lambda: outprob.streaming.StreamingFit(seed=2**64),
        lambda: outprob.streaming.normalized_rank_error(2**70),
        lambda: outprob.SigmoidScaler(maxiter=2**64).fit([1.0, 2.0, 5.0]),
        lambda: outprob.MixtureScaler(maxiter=2**64).fit([1.0, 2.0, 5.0]),
        lambda: outprob.TopKScaler(k=2**64).fit([1.0, 2.0, 5.0]),
        lambda: outprob.GaussianScaler(threads=2**64).fit([1.0, 2.0, 5.0]),
        lambda: stats.std([1.0, 2.0, 5.0], ddof=2**70),
    ],
)
def test_size_parameters_refuse_any_int_with_value_error(make):
    import outprob.streaming  # noqa: F401 - the lambdas read it

    with pytest.raises(ValueError):
        make()
