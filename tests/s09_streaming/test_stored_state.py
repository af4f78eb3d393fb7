"""Stored streaming state is untrusted (contract §9, "Stored state"; §7,
``from_dict``): a checkpoint whose moments, sketch, window or fitted
attributes contradict each other, or any field replaced by a hostile value,
is refused with ``ValueError`` — never another exception — while the
untouched checkpoint loads."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import outprob


def _checkpoint(**params):
    s = outprob.GaussianScaler(**params).partial_fit(np.arange(100.0) + 5.0)
    return s.to_dict()


def _moments(d):
    return d["stream"]["states"][0]["moments"]


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m.update(dsq=[1.0, -1e308]),
        lambda m: m.update(n=10**15),
        lambda m: m.update(n=m["n"] + 1),
        lambda m: m.update(n=2**53 + 1),
        lambda m: m.update(sum_negative=True),
        lambda m: m.update(shift=1e3),
        lambda m: m.update(min=50.0),
        lambda m: m.update(dsum=[m["dsum"][0] + 1.0, 0.0]),
        lambda m: m.update(k=-80),
    ],
    ids=["dsq", "n=1e15", "n+1", "n>2^53", "sum sign", "shift", "min", "dsum", "k"],
)
@pytest.mark.parametrize("params", [{}, {"center": "median", "scale": "nmad"}], ids=["exact", "sketch"])
def test_contradicting_moments_are_refused(edit, params):
    d = _checkpoint(**params)
    outprob.GaussianScaler.from_dict(copy.deepcopy(d))  # the untouched state loads
    edit(_moments(d))
    with pytest.raises(ValueError, match="state"):
        outprob.GaussianScaler.from_dict(d)


def test_a_sketch_of_other_scores_is_refused():
    d = _checkpoint(center="median", scale="nmad")
    other = _checkpoint(center="median", scale="nmad", higher_is_outlier=False)
    d["stream"]["states"][0]["sketch"] = other["stream"]["states"][0]["sketch"]
    with pytest.raises(ValueError, match="extremes"):
        outprob.GaussianScaler.from_dict(d)


@pytest.mark.parametrize(
    "edit",
    [
        lambda s: s.update(seen=s["seen"] + 1),
        lambda s: s.update(seen=5),
        lambda s: s.update(since_refit=10**6),
        lambda s: s.update(seen=2**60),
    ],
    ids=["seen+1", "seen<held", "since_refit", "seen>2^53"],
)
def test_contradicting_windows_are_refused(edit):
    s = outprob.GaussianScaler(window=50, refit_every=7).partial_fit(np.arange(30.0))
    d = s.to_dict()
    outprob.GaussianScaler.from_dict(copy.deepcopy(d))
    edit(d["stream"]["states"][0])
    with pytest.raises(ValueError, match="not a valid (window|streaming) state"):
        outprob.GaussianScaler.from_dict(d)


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d["fitted"].update(n_samples_seen_=-1),
        lambda d: d["fitted"].update(rank_error_=float("nan")),
        lambda d: d["fitted"].update(center_interval_=[0.0, 1.0]),
        lambda d: d["fitted"].update(probability_error_=2.0),
        lambda d: d["fitted"].update(center_=d["fitted"]["center_"] + 1e-9),
        lambda d: d["fitted"].update(n_samples_seen_=d["fitted"]["n_samples_seen_"] + 1),
        lambda d: d["stream"]["states"].append(d["stream"]["states"][0]),
        lambda d: d["stream"].update(ndim=2),
    ],
    ids=["n<0", "rank nan", "interval", "p>1", "center", "n+1", "columns", "ndim"],
)
def test_fitted_attributes_must_agree_with_the_stream(edit):
    d = outprob.GaussianScaler("median", "nmad", k=64).partial_fit(np.arange(500.0) % 37).to_dict()
    edit(d)
    with pytest.raises(ValueError):
        outprob.GaussianScaler.from_dict(d)


def test_pickled_stream_must_agree_with_the_fit():
    import pickle

    s = outprob.GaussianScaler("median", "nmad").partial_fit(np.arange(50.0))
    state = s.__getstate__()
    state["center_"], state["center_interval_"] = 3.0, (3.0, 3.0)
    t = outprob.GaussianScaler.__new__(outprob.GaussianScaler)
    with pytest.raises(ValueError, match="contradict"):
        t.__setstate__(state)
    back = pickle.loads(pickle.dumps(s))
    assert back.to_dict() == s.to_dict()


HOSTILE = [None, -1, 2**64, 2**70, -(2**70), float("inf"), float("nan"), 1.5, True, "x", [], {}, [1, -1]]


def _leaves(obj, path=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(obj, list) and obj and not all(isinstance(v, (int, float)) for v in obj):
        for i, v in enumerate(obj):
            yield from _leaves(v, path + (i,))
    yield path


def _replaced(d, path, value):
    d = copy.deepcopy(d)
    if not path:
        return value
    target = d
    for p in path[:-1]:
        target = target[p]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return d


_DELETE = object()


@pytest.mark.parametrize(
    "params",
    [
        {"center": "median", "scale": "nmad", "k": 64},
        {},
        {"window": 20, "refit_every": 7},
    ],
    ids=["sketch", "moments", "window"],
)
def test_malformed_stored_state_raises_value_error(params):
    """Every field of a checkpoint replaced by a hostile value (or deleted):
    from_dict loads it (when it still describes a valid state) or raises
    ValueError — never OverflowError, AttributeError, KeyError or TypeError."""
    d = outprob.GaussianScaler(**params).partial_fit(np.arange(300.0) % 41).to_dict()
    calls = 0
    for path in set(_leaves(d)):
        for value in HOSTILE + [_DELETE]:
            if value is _DELETE and not path:
                continue
            broken = _replaced(d, path, value)
            calls += 1
            try:
                outprob.from_dict(broken)
            except ValueError:
                pass
    assert calls > 200


def test_streaming_fit_from_dict_raises_value_error():
    from outprob.streaming import StreamingFit

    good = StreamingFit("median", "nmad", k=64).update(np.arange(100.0)).to_dict()
    for broken in [
        1,
        {**good, "params": 1},
        {**good, "extra": 1},
        {**good, "states": [{"since_refit": 0, "seen": 3, "values": "AAAA"}]},
        {**good, "states": [{**good["states"][0], "sketch": "not base64!"}]},
        {**good, "states": [{**good["states"][0], "seed": -1}]},
        {**good, "ndim": True},
        {**good, "fitted": [{}]},
        {**good, "params": {**good["params"], "k": "800"}},
        {**good, "params": {**good["params"], "higher_is_outlier": "no"}},
    ]:
        with pytest.raises(ValueError):
            StreamingFit.from_dict(broken)


