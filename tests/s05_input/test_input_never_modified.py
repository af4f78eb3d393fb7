"""No public entry point modifies its input (contract §5, "Input": the input
array is never modified): after fit, transform, stats, metrics, compare
and persistence, every array passed in has the same bytes, dtype, shape,
strides and flags (writeable, contiguity, alignment) as before; the same
for the scores in every memory layout (lists, float32, strided, reversed,
big-endian, read-only, integer, object, with NaN), for ``transform(out=)``
and for the PyOD bridge's scores and data."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import outprob
from outprob import metrics, stats

pytestmark = pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")

FLAGS = ("C_CONTIGUOUS", "F_CONTIGUOUS", "WRITEABLE", "ALIGNED", "OWNDATA")


def snapshot(a: np.ndarray):
    return (
        a.dtype,
        a.shape,
        a.strides,
        tuple(a.flags[f] for f in FLAGS),
        np.ascontiguousarray(a).tobytes(),
    )


def arrays():
    rng = np.random.default_rng(5)
    scores = np.r_[rng.lognormal(size=79), np.nan]
    p = rng.uniform(size=80)
    y = (rng.uniform(size=80) < 0.3).astype(np.int64)
    ro = scores.copy()
    ro.flags.writeable = False
    return {
        "scores": scores,
        "scores_f32": scores.astype(np.float32),
        "scores_strided": np.repeat(scores, 3)[::3],
        "scores_readonly": ro,
        "scores_2d_f": np.asfortranarray(np.column_stack([scores, scores[::-1]])),
        "p": p,
        "p_f32": p.astype(np.float32),
        "p_strided": np.repeat(p, 2)[::2],
        "y": y,
        "y_bool": y.astype(bool),
        "y_float": y.astype(np.float64),
        "table": rng.uniform(size=(12, 4)),
    }


def _scaler_calls(a):
    s = a["scores"]
    yield lambda: outprob.scaler("median_nmad").fit_transform(a["scores_2d_f"])
    for name in ("linear", "mean_std", "trimmed_mean_nmad", "huber", "tukey"):
        yield lambda name=name: outprob.scaler(name).fit(s).transform(a["scores_strided"])
        yield lambda name=name: outprob.scaler(name).fit(a["scores_readonly"]).transform(a["scores_f32"])
    yield lambda: outprob.from_dict(outprob.scaler("huber").fit(s).to_dict()).transform(s)
    yield lambda: outprob.scaler("mean_nmad").fit(s).transform(s, out=np.empty_like(s))


def _stats_calls(a):
    for x in (a["scores"], a["scores_f32"], a["scores_2d_f"]):
        yield lambda x=x: stats.mean(x, axis=0)
        yield lambda x=x: stats.std(x, axis=0)
        yield lambda x=x: stats.median(x, axis=0)
        yield lambda x=x: stats.nmad(x, axis=0)
        yield lambda x=x: stats.niqr(x, axis=0)
        yield lambda x=x: stats.quantile(x, [0.1, 0.9], axis=0)
        yield lambda x=x: stats.upper_trimmed_mean(x, axis=0)
    yield lambda: stats.trimmed_std(a["scores"], center=1.0)
    yield lambda: stats.m_estimate(a["scores_strided"], "huber")


def _metrics_calls(a):
    for y in (a["y"], a["y_bool"], a["y_float"]):
        for p in (a["p"], a["p_f32"], a["p_strided"]):
            yield lambda y=y, p=p: metrics.brier_score(y, p, stratify="both")
            yield lambda y=y, p=p: metrics.sharpness_error(y, p)
            yield lambda y=y, p=p: metrics.refinement_error(y, p, bins="equal_frequency")
            yield lambda y=y, p=p: metrics.calibration_error(y, p, n_bins=[3, 7])
            yield lambda y=y, p=p: metrics.reliability_curve(y, p, bins="equal_width")
            yield lambda y=y, p=p: metrics.evaluate(y, p)
            yield lambda y=y, p=p: metrics.skill_score(y, p, a["p_strided"])
            yield lambda y=y, p=p: metrics.harmonic_improvement_score(y, p, [a["p"], a["p_f32"]])
    yield lambda: metrics.bin_edges(a["p_strided"], 5)


def _compare_calls(a):
    from outprob.compare import compare

    yield lambda: compare(a["table"])


@pytest.mark.parametrize("calls", [_scaler_calls, _stats_calls, _metrics_calls, _compare_calls],
                         ids=["scalers", "stats", "metrics", "compare"])
def test_no_entry_point_changes_its_arrays(calls):
    a = arrays()
    before = {k: snapshot(v) for k, v in a.items()}
    n = 0
    for call in calls(a):
        call()
        n += 1
        for k, v in a.items():
            assert snapshot(v) == before[k], f"call {n} changed {k}"
    assert n > 0


def layouts():
    rng = np.random.default_rng(11)
    base = np.r_[rng.lognormal(size=59), 30.0]
    readonly = base.copy()
    readonly.flags.writeable = False
    return {
        "list": base.tolist(),
        "float64": base.copy(),
        "float32": base.astype(np.float32),
        "strided": np.repeat(base, 2)[::2],
        "reversed": base[::-1].copy()[::-1],
        "big_endian": base.astype(">f8"),
        "readonly": readonly,
        "int": np.arange(60),
        "object": base.astype(object),
        "nan": np.where(np.arange(60) % 7 == 0, np.nan, base),
    }


def _snapshot(x):
    """Bit-exact: the dtype, the shape and every element (NaN included)."""
    if isinstance(x, list):
        return [repr(v) for v in x]
    if x.dtype == object:
        return x.dtype, x.shape, [repr(v) for v in x.ravel()]
    return x.dtype, x.shape, x.strides, np.ascontiguousarray(x).tobytes()


def _unchanged(before, after):
    assert _snapshot(after) == before


CALLS = {
    "fit_transform": lambda x: outprob.scaler("median_nmad").fit_transform(x),
    "fit+transform": lambda x: outprob.scaler("huber").fit(x).transform(x),
    "linear": lambda x: outprob.LinearScaler(higher_is_outlier=False).fit_transform(x),
    "2-D": lambda x: outprob.scaler("mean_std").fit_transform(np.column_stack([x, x])),
    "mean": stats.mean,
    "std": stats.std,
    "median": stats.median,
    "quantile": lambda x: stats.quantile(x, [0.25, 0.75]),
    "upper_trimmed_mean": stats.upper_trimmed_mean,
    "nmad": stats.nmad,
    "niqr": stats.niqr,
    "trimmed_std": lambda x: stats.trimmed_std(x, center=1.0),
    "m_estimate": lambda x: stats.m_estimate(x, "tukey", maxiter=100),
}


@pytest.mark.parametrize("call", list(CALLS))
def test_no_entry_point_modifies_its_input(call):
    for label, x in layouts().items():
        before = _snapshot(x)
        CALLS[call](x)
        _unchanged(before, x)


def test_transform_with_out_leaves_the_scores_alone():
    for label, x in layouts().items():
        s = outprob.scaler("mean_nmad").fit(x)
        a = np.asarray(x)
        before = _snapshot(x)
        out = np.empty(a.shape, dtype=np.float32 if a.dtype == np.float32 else np.float64)
        s.transform(x, out=out)
        _unchanged(before, x)


def test_pyod_bridge_leaves_scores_and_data_alone():
    pytest.importorskip("pyod")
    from pyod.models.knn import KNN

    from outprob.pyod import predict_proba

    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 2))
    knn = KNN().fit(X)
    scores = knn.decision_scores_.copy()
    new = rng.normal(size=(10, 2))
    new_before = new.copy()
    for method in ("unify", "linear", "tukey"):
        predict_proba(knn, new, method)
        predict_proba(knn, None, method)
    assert_array_equal(knn.decision_scores_, scores)
    assert_array_equal(new, new_before)
