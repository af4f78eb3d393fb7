"""``outprob.spark`` on a local Spark session (contract §9, "Spark"; local[2],
the ``spark`` fixture of conftest.py): the sketch fit's bounds hold
against the in-memory fit, Spark's own KLL sketches interoperate with
outprob's and DataSketches', transform equals the in-memory transform for
every transformation, on batch and streaming DataFrames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import outprob
import outprob.spark as osp
from outprob import GaussianScaler, LinearScaler
from outprob.streaming import KLLSketch, normalized_rank_error

from ..spark_helpers import in_memory, quiet_fit

datasketches = pytest.importorskip("datasketches")
F = pytest.importorskip("pyspark.sql.functions")


def scores(n, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.lognormal(size=n)
    x[rng.integers(n, size=n // 50)] = 50 + rng.pareto(1.0, n // 50)
    return x


def frame(spark, parts=3, **columns):
    """A DataFrame of the given NumPy columns (and ``id``) in ``parts``
    partitions of uneven sizes."""
    n = len(next(iter(columns.values())))
    df = spark.createDataFrame(pa.table({"id": np.arange(n), **columns}))
    return df.repartitionByRange(parts, "id")


def rows(df):
    """The rows of a (small) result in ``id`` order, as a pandas DataFrame."""
    return df.toArrow().sort_by("id").to_pandas()


def test_sketch_fit_bounds_hold_for_every_variant(spark):
    x = scores(20_000)
    df = frame(spark, score=x).cache()
    for name in outprob.VARIANTS:
        got, info = quiet_fit(outprob.scaler(name), df, "score", method="sketch", k=200,
                              return_info=True)
        want = in_memory(outprob.scaler(name), x)
        assert info["passes"] == 1, name  # one census pass, moments taken in it when read
        if name == "linear":
            assert (got.min_, got.max_) == (want.min_, want.max_)
            continue
        assert got.n_samples_seen_ == x.size
        if name in ("huber", "tukey"):  # no interval: within a few % of σ (contract §9)
            assert abs(got.center_ - want.center_) <= 0.05 * want.scale_, name
            assert got.scale_ == pytest.approx(want.scale_, rel=0.05), name
            continue
        lo, hi = got.center_interval_
        assert lo <= want.center_ <= hi, name
        lo, hi = got.scale_interval_
        assert lo <= want.scale_ <= hi, name
        p_err = np.max(np.abs(got.transform(x) - want.transform(x)))
        assert p_err <= got.probability_error_, name
        if name.startswith("mean"):
            assert got.center_ == want.center_  # the exact mean, bit for bit
        if name.endswith("_std"):
            assert got.scale_ == pytest.approx(want.scale_, rel=1e-15, abs=0)
        sketched = name != "mean_std"  # the mean and SD need no sketch
        assert got.rank_error_ == (pytest.approx(normalized_rank_error(200), rel=1e-12)
                                   if sketched else 0.0)
    df.unpersist()


def test_sketch_fit_without_moments_is_one_native_aggregate(spark, monkeypatch):
    import outprob._distributed.spark_engine as engine

    def no_python(*args, **kw):
        raise AssertionError("a pass ran Python over the scores")

    x = scores(5000, 11)
    df = frame(spark, score=x)
    monkeypatch.setattr(engine, "fold", no_python)
    for name in ("median_nmad", "median_niqr", "huber", "linear"):
        got, info = quiet_fit(outprob.scaler(name), df, "score", method="sketch", return_info=True)
        assert info["passes"] == 1 and info["bytes"] < 100_000, name
    with pytest.raises(AssertionError, match="Python"):
        osp.fit(outprob.scaler("mean_nmad"), df, "score", method="sketch")  # the exact mean


def test_sketch_fit_two_columns_and_orientation(spark):
    x, y = scores(600, 1), -scores(600, 2)
    df = frame(spark, a=x, b=y)
    scaler = GaussianScaler("median", "nmad", higher_is_outlier=False)
    got = quiet_fit(scaler, df, ["a", "b"], method="sketch")
    want = in_memory(GaussianScaler("median", "nmad", higher_is_outlier=False),
                     pd.DataFrame({"a": x, "b": y}))
    assert list(got.feature_names_in_) == ["a", "b"]
    assert list(got.rank_error_) == [0.0, 0.0]  # fewer scores than k: the sketch is exact
    for j in range(2):
        assert got.center_[j] == want.center_[j]
        assert got.scale_[j] == want.scale_[j]
    assert not hasattr(scaler, "center_")  # the scaler passed is not modified


def _spark_sketch(spark, x, k):
    df = spark.createDataFrame(pa.table({"x": x}))
    return bytes(df.agg(F.kll_sketch_agg_double("x", k)).first()[0])


def _rank_errors_within_bound(sketch_ranks, data, k):
    """Largest |rank − true rank| over a grid of items, against ε(k)·n."""
    data = np.sort(data)
    items = np.quantile(data, np.linspace(0.001, 0.999, 199))
    true = np.searchsorted(data, items, side="right") / data.size
    worst = np.max(np.abs(np.array([sketch_ranks(v) for v in items]) - true))
    assert worst <= normalized_rank_error(k), (worst, normalized_rank_error(k))


def test_spark_sketch_bytes_interoperate_with_outprob_and_datasketches(spark):
    k = 200
    a, b, c = scores(40_000, 3), scores(30_000, 4) * 2, scores(20_000, 5) + 1
    spark_bytes = _spark_sketch(spark, a, k)
    ours = KLLSketch(k)
    ours.update(b)
    theirs = datasketches.kll_doubles_sketch(k)
    theirs.update(c)
    every = np.concatenate([a, b, c])

    # outprob reads Spark's bytes and merges the others in.
    merged = KLLSketch.deserialize(spark_bytes)
    assert merged.n == a.size and merged.min == a.min() and merged.max == a.max()
    merged.merge(ours)
    merged.merge(KLLSketch.deserialize(theirs.serialize()))
    assert merged.n == every.size
    _rank_errors_within_bound(merged.rank, every, k)

    # Spark merges outprob's and DataSketches' bytes (aggregate and scalar merge).
    table = spark.createDataFrame(
        [(spark_bytes,), (ours.serialize(),), (theirs.serialize(),)], "s binary"
    )
    by_spark = KLLSketch.deserialize(bytes(table.agg(F.kll_merge_agg_double("s")).first()[0]))
    assert by_spark.n == every.size
    _rank_errors_within_bound(by_spark.rank, every, k)
    pair = spark.createDataFrame([(ours.serialize(), spark_bytes)], "a binary, b binary")
    both = KLLSketch.deserialize(bytes(pair.select(F.kll_sketch_merge_double("a", "b")).first()[0]))
    assert both.n == a.size + b.size

    # DataSketches reads Spark's bytes and merges ours.
    ds = datasketches.kll_doubles_sketch.deserialize(spark_bytes)
    ds.merge(datasketches.kll_doubles_sketch.deserialize(ours.serialize()))
    ds.merge(theirs)
    assert ds.n == every.size
    _rank_errors_within_bound(lambda v: ds.get_rank(v), every, k)


def test_transform_equals_in_memory_for_every_transformation(spark):
    x = scores(600, 6)
    fit_on = x.copy()
    x[[3, 50, 400]] = [np.nan, np.inf, -np.inf]
    df = frame(spark, parts=2, score=x).withColumn(
        "score", F.when(F.col("id") == 7, None).otherwise(F.col("score"))
    ).cache()
    x[7] = np.nan
    for name, entry in outprob.TRANSFORMATIONS.items():
        scaler = in_memory(entry.factory(), fit_on)
        out = rows(osp.transform(scaler, df, "score", output_col="p"))
        got = out["p"].to_numpy(dtype=float, na_value=np.nan)
        np.testing.assert_array_equal(got, scaler.transform(x), err_msg=name)
        assert out["p"].isna().iloc[7], name  # null stays null
    df.unpersist()


def test_transform_types_and_columns(spark):
    x, y = scores(500, 7), scores(500, 8) * 3
    pdf = pd.DataFrame({"id": np.arange(500), "f": x.astype(np.float32), "n": (x * 10).astype(int),
                        "a": x, "b": y, "s": ["u"] * 500})
    df = spark.createDataFrame(pa.Table.from_pandas(pdf))
    one = in_memory(GaussianScaler("median", "nmad"), x)
    out = osp.transform(one, df, ["f", "n"], output_col=["pf", "pn"])
    types = dict(out.dtypes)
    assert types["pf"] == "float" and types["pn"] == "double"
    got = rows(out)
    np.testing.assert_array_equal(got["pf"].to_numpy(), one.transform(x.astype(np.float32)))
    np.testing.assert_array_equal(got["pn"].to_numpy(), one.transform((x * 10).astype(int)))

    two = in_memory(GaussianScaler("median", "nmad"), pdf[["a", "b"]])
    got = rows(osp.transform(two, df, ["a", "b"], output_col=["pa", "pb"]))
    want = two.transform(pdf[["a", "b"]])
    np.testing.assert_array_equal(got[["pa", "pb"]].to_numpy(), want)
    with pytest.raises(ValueError, match="fitted on columns"):
        osp.transform(two, df, ["b", "a"], output_col=["pa", "pb"])
    with pytest.raises(ValueError, match="2 score column"):
        osp.transform(two, df, "a")
    with pytest.raises(ValueError, match="already exist"):
        osp.transform(one, df, "a", output_col="b")
    with pytest.raises(TypeError, match="not numbers"):
        osp.transform(one, df, "s")
    with pytest.raises(ValueError, match="no column 'zz'"):
        osp.transform(one, df, "zz")
    with pytest.raises(outprob.NotFittedError):
        osp.transform(GaussianScaler(), df, "a")


def test_transform_on_a_streaming_dataframe(spark, tmp_path):
    x = scores(900, 9)
    (tmp_path / "in").mkdir()
    for i in range(3):
        batch = slice(i * 300, (i + 1) * 300)
        part = pd.DataFrame({"id": np.arange(900)[batch], "score": x[batch]})
        part.to_parquet(tmp_path / "in" / f"part-{i}.parquet")
    scaler = in_memory(GaussianScaler("median", "nmad"), x)
    stream = spark.readStream.schema("id long, score double").parquet(str(tmp_path / "in"))
    assert stream.isStreaming
    query = (osp.transform(scaler, stream, "score").writeStream.format("memory")
             .queryName("outprob_scored").trigger(availableNow=True)
             .option("checkpointLocation", str(tmp_path / "ck")).start())
    query.awaitTermination()
    got = rows(spark.table("outprob_scored"))
    np.testing.assert_array_equal(got["probability"].to_numpy(), scaler.transform(x))


def test_fit_refuses_clearly(spark):
    x = scores(200, 10)
    df = frame(spark, parts=2, score=x, label=np.where(x > 5, "out", "in"))
    with pytest.raises(ValueError, match="window"):
        osp.fit(GaussianScaler(window=50), df, "score", method="sketch")
    with pytest.raises(TypeError, match="RankScaler"):
        osp.fit(outprob.RankScaler(), df, "score", method="sketch")
    with pytest.raises(TypeError, match="pretransform"):
        osp.fit(GaussianScaler(pretransform="sqrt"), df, "score", method="sketch")
    with pytest.raises(TypeError, match="not numbers"):
        osp.fit(GaussianScaler(), df, "label", method="sketch")
    with pytest.raises(ValueError, match="no column"):
        osp.fit(GaussianScaler(), df, "nope", method="sketch")
    with pytest.raises(ValueError, match="method"):
        osp.fit(GaussianScaler(), df, "score", method="fast")
    bad = df.withColumn("score", F.when(F.col("id") == 3, float("inf")).otherwise(F.col("score")))
    with pytest.raises(ValueError, match="1 infinite value"):
        osp.fit(GaussianScaler("median", "nmad"), bad, "score", method="sketch")
    missing = df.withColumn("score", F.when(F.col("id") < 2, None).otherwise(F.col("score")))
    with pytest.raises(ValueError, match="2 NaN values"):
        osp.fit(GaussianScaler(nan_policy="raise"), missing, "score", method="sketch")
    omitted = osp.fit(LinearScaler(), missing, "score", method="sketch")
    assert omitted.min_ == x[2:].min() and omitted.max_ == x[2:].max()
    with pytest.raises(ValueError, match="empty"):
        osp.fit(GaussianScaler(), df.limit(0), "score", method="sketch")
    with pytest.raises(TypeError, match="DataFrame"):
        osp.fit(GaussianScaler(), x, "score", method="sketch")
