"""No public entry point modifies its input (contract §5, issue #10): after
fit, transform, stats, metrics, compare and persistence, every array passed
in has the same bytes, dtype, shape, strides and flags (writeable,
contiguity, alignment) as before. test_input_errors.py covers the memory
layouts of the scores; this file covers every other entry point and the
flags."""

from __future__ import annotations

import numpy as np
import pytest

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
