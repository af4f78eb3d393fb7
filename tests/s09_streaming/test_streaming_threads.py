"""Streaming state shared by threads (contract §9): concurrent
``partial_fit`` and ``merge`` calls serialise — none fails, none is lost —,
a 2-D batch changes every column or none, and a state merges with itself
as with a copy of itself."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import outprob
from outprob.streaming import KLLSketch, StreamingFit


def _run(workers):
    errors: list = []

    def guarded(work):
        try:
            work()
        except Exception as exc:  # noqa: BLE001 - the test reports any failure
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.parametrize("name", ["median_nmad", "mean_std", "linear"])
def test_concurrent_partial_fit_of_a_two_d_scaler_loses_no_batch(name):
    rng = np.random.default_rng(0)
    batches = [rng.lognormal(size=(200, 3)) for _ in range(8 * 6)]
    s = outprob.scaler(name).partial_fit(rng.lognormal(size=(10, 3)))
    _run([lambda i=i: [s.partial_fit(b) for b in batches[i::8]] for i in range(8)])
    # Every batch reached every column once; the next publish shows them all.
    s.partial_fit(batches[0][:1])
    assert list(s.n_samples_seen_) == [10 + 8 * 6 * 200 + 1] * 3


@pytest.mark.parametrize("name", ["median_nmad", "mean_std", "linear"])
def test_threads_starting_a_stream_share_it_and_the_last_fit_has_every_batch(name):
    rng = np.random.default_rng(1)
    batches = [rng.lognormal(size=(50, 2)) for _ in range(8 * 3)]
    s = outprob.scaler(name)  # not started: the threads race to start it
    _run([lambda i=i: [s.partial_fit(b) for b in batches[i::8]] for i in range(8)])
    assert list(s.n_samples_seen_) == [8 * 3 * 50] * 2
    # The fit published last is that of every batch: its exact statistics
    # are those of one batch of them all.
    whole = outprob.scaler(name).partial_fit(np.concatenate(batches))
    for attr in {"linear": ("min_", "max_"), "mean_std": ("center_",)}.get(name, ()):
        np.testing.assert_array_equal(getattr(s, attr), getattr(whole, attr))

def test_concurrent_updates_and_merges_of_streaming_fits():
    rng = np.random.default_rng(1)
    total = StreamingFit("median", "nmad", k=200)
    parts = [StreamingFit("median", "nmad", k=200).update(rng.normal(size=(500, 2))) for _ in range(8)]
    sketch = KLLSketch(k=200)
    _run([lambda p=p: (total.merge(p), sketch.update(rng.normal(size=100))) for p in parts])
    assert [r.n for r in total.results()] == [8 * 500] * 2
    assert sketch.n == 8 * 100


def test_a_refused_two_d_batch_changes_no_column():
    rng = np.random.default_rng(3)
    s = outprob.GaussianScaler("median", "nmad").partial_fit(rng.normal(size=(4, 3)))
    before = s.to_dict()
    bad = np.ones((5, 3))
    bad[3, 2] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        s.partial_fit(bad)
    assert s.to_dict() == before
    fit = StreamingFit("mean", "std").update(np.ones((4, 2)))
    with pytest.raises(ValueError, match="NaN"):
        StreamingFit("mean", "std", nan_policy="raise").update(np.array([[1.0, np.nan]]))
    bad = np.ones((3, 2))
    bad[1, 1] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        fit.update(bad)
    assert [r.n for r in fit.results()] == [4, 4]


@pytest.mark.parametrize("kind", ["sketch", "fit", "scaler"])
def test_merge_with_itself_counts_every_score_twice(kind):
    x = np.random.default_rng(2).normal(size=1000)
    if kind == "sketch":
        a = KLLSketch(k=200)
        a.update(x)
        a.merge(a)
        assert a.n == 2000
    elif kind == "fit":
        a = StreamingFit("mean", "std").update(x)
        a.merge(a)
        assert a.result().n == 2000
        assert a.result().center == StreamingFit("mean", "std").update(np.r_[x, x]).result().center
    else:
        s = outprob.GaussianScaler().partial_fit(x)
        s.merge(s)
        assert s.n_samples_seen_ == 2000
        assert s.center_ == outprob.GaussianScaler().fit(np.r_[x, x]).center_


@pytest.mark.parametrize("name", ["median_nmad", "mean_std", "linear"])
def test_concurrent_first_partial_fits_lose_no_batch(name):
    rng = np.random.default_rng(0)
    batches = [rng.lognormal(size=(300, 3)) for _ in range(8 * 4)]
    s = outprob.scaler(name)
    snapshots = []

    def work(i):
        for b in batches[i::8]:
            s.partial_fit(b)
            snapshots.append(s.to_dict())

    _run([lambda i=i: work(i) for i in range(8)])
    # Every batch reached every column, and the last publish shows them all.
    assert list(s.n_samples_seen_) == [len(batches) * 300] * 3
    # Each checkpoint taken meanwhile is one consistent state.
    for d in snapshots[::4]:
        outprob.from_dict(d)
