"""``outprob.spark.score_stream`` on a file-source stream (contract §9,
"Spark"; local Spark, the ``spark`` fixture of conftest.py): a query
stopped mid-stream, or failing between storing its fit and finishing a
batch, and restarted on the same checkpoint ends with the fit and the
outputs of an uninterrupted run — nothing lost, nothing counted twice."""

from __future__ import annotations

import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import outprob
import outprob.spark as osp
from outprob import GaussianScaler, LinearScaler

BATCHES = 4
ROWS = 250


def batch_scores(i):
    rng = np.random.default_rng(100 + i)
    x = rng.lognormal(size=ROWS)
    x[:3] = 40 + 10 * i  # a few outliers per batch
    x[5] = np.nan
    return x


def write_batches(folder, which):
    """One Parquet file per batch, with increasing modification times (the
    file source reads them in that order, one per trigger)."""
    folder.mkdir(exist_ok=True)
    for i in which:
        path = folder / f"batch-{i}.parquet"
        ids = np.arange(i * ROWS, (i + 1) * ROWS)
        pq.write_table(pa.table({"id": ids, "score": batch_scores(i)}), path)
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))


class Sink:
    """Keeps each batch's output by batch id (idempotent, as a
    ``foreachBatch`` sink should be); can fail once at a chosen batch."""

    def __init__(self, fail_at=None):
        self.out, self.fail_at, self.calls = {}, fail_at, []

    def __call__(self, df, batch_id):
        self.calls.append(batch_id)
        table = df.toArrow()
        self.out[batch_id] = table.sort_by("id").to_pydict()
        if batch_id == self.fail_at:
            self.fail_at = None
            raise RuntimeError("sink failed")


def run(spark, source, checkpoint, scaler, sink, **kw):
    stream = (spark.readStream.schema("id long, score double").option("maxFilesPerTrigger", 1)
              .parquet(str(source)))
    query = osp.score_stream(stream, scaler, "score", sink, checkpoint=str(checkpoint),
                             trigger={"availableNow": True}, **kw)
    query.awaitTermination()
    return query


def test_restarted_query_continues_the_uninterrupted_fit(spark, tmp_path):
    make = lambda: GaussianScaler("mean", "nmad")  # noqa: E731  (exact mean, sketched nMAD)
    write_batches(tmp_path / "all", range(BATCHES))
    whole = Sink()
    run(spark, tmp_path / "all", tmp_path / "ck-all", make(), whole)
    assert sorted(whole.out) == list(range(BATCHES))
    fit_whole = osp.load_stream_fit(str(tmp_path / "ck-all"))

    # Stopped after two batches, restarted when two more files arrived;
    # the sink fails once at batch 3, after the fit of batch 3 was stored.
    write_batches(tmp_path / "parts", range(2))
    sink = Sink(fail_at=3)
    run(spark, tmp_path / "parts", tmp_path / "ck", make(), sink)
    assert sorted(sink.out) == [0, 1]
    write_batches(tmp_path / "parts", range(2, BATCHES))
    with pytest.raises(Exception, match="sink failed"):
        run(spark, tmp_path / "parts", tmp_path / "ck", make(), sink)
    stored = json.loads((tmp_path / "ck" / "outprob-fit.json").read_text())
    assert stored["batch_id"] == 3  # the fit holds batch 3; Spark did not commit it
    run(spark, tmp_path / "parts", tmp_path / "ck", make(), sink)
    assert sink.calls == [0, 1, 2, 3, 3]
    fit = osp.load_stream_fit(str(tmp_path / "ck"))

    assert fit.to_dict() == fit_whole.to_dict()
    for b in range(BATCHES):
        for name in ("id", "score", "probability"):
            np.testing.assert_array_equal(sink.out[b][name], whole.out[b][name], err_msg=str(b))
    every = np.concatenate([batch_scores(i) for i in range(BATCHES)])
    finite = every[~np.isnan(every)]
    assert fit.n_samples_seen_ == finite.size
    assert fit.center_ == GaussianScaler().fit(finite).center_  # the exact mean, bit for bit

    # Batch b was scored with the fit of the batches before it (batch 0 with its own).
    for b in (0, 3):
        seen = np.concatenate([batch_scores(i) for i in range(max(b, 1))])
        want = GaussianScaler("mean", "nmad").partial_fit(seen)
        assert want.rank_error_ == 0  # fewer than k scores: the sketch is exact
        got = np.array(sink.out[b]["probability"], dtype=float)
        scored = np.array(sink.out[b]["score"], dtype=float)
        ok = ~np.isnan(scored)
        assert np.isnan(got[~ok]).all()
        np.testing.assert_allclose(got[ok], want.transform(scored[ok]), rtol=1e-12, atol=1e-15)


def test_window_follows_the_stream_exactly(spark, tmp_path):
    write_batches(tmp_path / "in", range(3))
    sink = Sink()
    run(spark, tmp_path / "in", tmp_path / "ck", GaussianScaler("median", "nmad", window=400), sink)
    fit = osp.load_stream_fit(str(tmp_path / "ck"))
    want = GaussianScaler("median", "nmad", window=400)
    for i in range(3):
        want.partial_fit(batch_scores(i))
    assert (fit.center_, fit.scale_) == (want.center_, want.scale_)


def test_refit_none_scores_with_the_given_fit(spark, tmp_path):
    write_batches(tmp_path / "in", range(2))
    fitted = LinearScaler().fit(batch_scores(0))
    sink = Sink()
    run(spark, tmp_path / "in", tmp_path / "ck", fitted, sink, refit="none")
    got = np.array(sink.out[1]["probability"], dtype=float)
    np.testing.assert_array_equal(got, fitted.transform(batch_scores(1)))
    assert not (tmp_path / "ck" / "outprob-fit.json").exists()


def test_score_stream_refuses_clearly(spark, tmp_path):
    write_batches(tmp_path / "in", range(1))
    stream = spark.readStream.schema("id long, score double").parquet(str(tmp_path / "in"))
    batch = spark.read.parquet(str(tmp_path / "in"))
    sink = Sink()
    with pytest.raises(TypeError, match="streaming DataFrame"):
        osp.score_stream(batch, GaussianScaler(), "score", sink, checkpoint=str(tmp_path / "c"))
    with pytest.raises(ValueError, match="fit the scaler first"):
        osp.score_stream(stream, GaussianScaler(), "score", sink, checkpoint=str(tmp_path / "c"),
                         refit="none")
    with pytest.raises(ValueError, match="keeps no streaming state"):
        osp.score_stream(stream, GaussianScaler().fit([1.0, 2.0]), "score", sink,
                         checkpoint=str(tmp_path / "c"))
    with pytest.raises(ValueError, match="refit"):
        osp.score_stream(stream, GaussianScaler(), "score", sink, checkpoint=str(tmp_path / "c"),
                         refit="window")
    with pytest.raises(TypeError, match="incrementally"):
        osp.score_stream(stream, GaussianScaler(pretransform="sqrt"), "score", sink,
                         checkpoint=str(tmp_path / "c"))
    with pytest.raises(ValueError, match="local"):
        osp.score_stream(stream, GaussianScaler(), "score", sink, checkpoint="s3://bucket/ck")
    # A checkpoint that holds a fit of other parameters.
    run(spark, tmp_path / "in", tmp_path / "c", GaussianScaler(), sink)
    with pytest.raises(ValueError, match="other parameters"):
        osp.score_stream(stream, GaussianScaler("median", "nmad"), "score", sink,
                         checkpoint=str(tmp_path / "c"))


def test_the_readme_example_runs(spark, capsys):
    """The README's "On Spark" example, run as written on a DataFrame
    ``df`` of scores: its exact fit is the in-memory fit, and it shows the
    scores with their probabilities."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## On Spark"):]
    start = section.index("```python\n") + len("```python\n")
    code = section[start:section.index("```\n", start)]
    x = np.concatenate([batch_scores(i) for i in range(BATCHES)])
    df = spark.createDataFrame(pa.table({"id": np.arange(x.size), "score": x}).to_pandas())
    namespace = {"df": df}
    exec(compile(code, "README.md", "exec"), namespace)
    want = outprob.scaler("median_nmad").fit(x)
    assert (namespace["scaler"].center_, namespace["scaler"].scale_) == (want.center_, want.scale_)
    assert "probability" in capsys.readouterr().out
