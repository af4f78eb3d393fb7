"""Contract §12, ``outprob.spark.score_stream`` with ``pvalues``,
``alert`` and ``monitor`` (local Spark, the ``spark`` fixture of
conftest.py): the columns equal the definition of the online p-values and
online-fdr 1.0's decisions over the whole stream in arrival order
(``order_col``), and a query stopped mid-stream, or failing after storing
its state, ends with the columns of an uninterrupted run."""

from __future__ import annotations

import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import outprob.spark as osp
from outprob import GaussianScaler
from outprob.reference.conformal import uniforms as splitmix_uniforms

BATCHES, ROWS = 4, 200


def batch_scores(i):
    rng = np.random.default_rng(300 + i)
    x = rng.normal(size=ROWS)
    # Rising outliers: each above every earlier score, so their online
    # p-values are small enough for online FDR (contract §12).
    x[::2] = 10 + i * 1000 + np.arange(0, ROWS, 2)
    x[7] = np.nan
    return x


def write_batches(folder, which):
    folder.mkdir(exist_ok=True)
    for i in which:
        path = folder / f"batch-{i}.parquet"
        # Rows shuffled within the file: the arrival order is the id.
        perm = np.random.default_rng(i).permutation(ROWS)
        ids = np.arange(i * ROWS, (i + 1) * ROWS)[perm]
        pq.write_table(pa.table({"id": ids, "score": batch_scores(i)[perm]}), path)
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))


class Sink:
    def __init__(self, fail_at=None):
        self.out, self.fail_at, self.calls = {}, fail_at, []

    def __call__(self, df, batch_id):
        self.calls.append(batch_id)
        self.out[batch_id] = df.toArrow().sort_by("id").to_pydict()
        if batch_id == self.fail_at:
            self.fail_at = None
            raise RuntimeError("sink failed")


KW = {"pvalues": True, "alert": "lond", "alpha": 0.3, "monitor": "power", "alarm": 20.0,
      "seed": 5, "order_col": "id"}


def run(spark, source, checkpoint, sink, **kw):
    stream = (spark.readStream.schema("id long, score double").option("maxFilesPerTrigger", 1)
              .parquet(str(source)))
    query = osp.score_stream(stream, GaussianScaler("mean", "std"), "score", sink,
                             checkpoint=str(checkpoint), trigger={"availableNow": True}, **kw)
    query.awaitTermination()


def column(sink, name):
    return np.concatenate([np.array(sink.out[b][name], dtype=float) for b in range(BATCHES)])


def test_columns_follow_the_definitions_and_resume_exactly(spark, tmp_path):
    online_fdr = pytest.importorskip("online_fdr", reason="online-fdr is in the test extra")
    from online_fdr.p_values import Lond

    write_batches(tmp_path / "all", range(BATCHES))
    whole = Sink()
    run(spark, tmp_path / "all", tmp_path / "ck-all", whole, **KW)
    x = np.concatenate([batch_scores(i) for i in range(BATCHES)])  # in id order
    ok = ~np.isnan(x)
    s = x[ok]
    theta = 1.0 - splitmix_uniforms(5, s.size)
    want_p = np.array([((s[: n + 1] > s[n]).sum() + theta[n] * (s[: n + 1] == s[n]).sum()) / (n + 1)
                       for n in range(s.size)])  # fmt: skip
    p = column(whole, "pvalue")
    assert np.isnan(p[~ok]).all()
    np.testing.assert_array_equal(p[ok], want_p)
    ref = Lond(0.3)
    want_alert = np.array([ref.test_one(float(v)) for v in want_p])
    alert = column(whole, "alert").astype(bool)
    assert want_alert.sum() >= 20 and not alert[~ok].any()
    np.testing.assert_array_equal(alert[ok], want_alert)
    # Power martingale, ε = 1/2, restarting after each alarm at 20.
    logm, t, acc, flags = [], 0, 0.0, []
    for v in want_p:
        t, acc = t + 1, acc + np.log(v)
        logm.append(t * np.log(0.5) - 0.5 * acc)
        flags.append(logm[-1] >= np.log(20))
        if flags[-1]:
            t, acc = 0, 0.0
    np.testing.assert_allclose(column(whole, "log_martingale")[ok], logm, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(column(whole, "alarm").astype(bool)[ok], flags)
    assert online_fdr is not None

    # Stopped after two batches, restarted; the sink fails once at batch 3.
    write_batches(tmp_path / "parts", range(2))
    sink = Sink(fail_at=3)
    run(spark, tmp_path / "parts", tmp_path / "ck", sink, **KW)
    write_batches(tmp_path / "parts", range(2, BATCHES))
    with pytest.raises(Exception, match="sink failed"):
        run(spark, tmp_path / "parts", tmp_path / "ck", sink, **KW)
    assert json.loads((tmp_path / "ck" / "outprob-fit.json").read_text())["batch_id"] == 3
    run(spark, tmp_path / "parts", tmp_path / "ck", sink, **KW)
    assert sink.calls == [0, 1, 2, 3, 3]
    for name in ("pvalue", "alert", "log_martingale", "alarm", "probability"):
        np.testing.assert_array_equal(column(sink, name), column(whole, name), err_msg=name)
    # Other settings on the same checkpoint are refused.
    with pytest.raises(Exception, match="other p-value"):
        write_batches(tmp_path / "parts", range(BATCHES + 1))
        run(spark, tmp_path / "parts", tmp_path / "ck", Sink())
