"""``outprob.spark.fit``'s exact method on a local Spark session (contract §9,
"Exact distributed fit", "Spark"; the ``spark`` fixture of conftest.py):
the same center and scale as the in-memory fit for every variant of
outprob.VARIANTS and every option of GaussianScaler, with the tolerances
of outprob.dask, on uneven partitions with NaN, nulls and ties; what
cannot be distributed is refused by name."""

from __future__ import annotations

import json
import sys

import numpy as np
import pyarrow as pa
import pytest

import outprob
import outprob.spark as osp
from outprob import GaussianScaler, LinearScaler

from ..spark_helpers import in_memory, quiet_fit as fit

F = pytest.importorskip("pyspark.sql.functions")


def assert_same_fit(got, want, name):
    """The tolerances of outprob.dask (contract §9)."""
    if name in ("huber", "tukey") or getattr(want, "scale_used_", None) in ("huber", "tukey"):
        assert got.center_ == pytest.approx(want.center_, rel=1e-12, abs=1e-12 * want.scale_), name
        assert got.scale_ == pytest.approx(want.scale_, rel=1e-12), name
        return
    assert got.center_ == want.center_, name
    assert got.scale_used_ == want.scale_used_, name
    if got.scale_used_ in ("std", "trimmed_std"):
        assert got.scale_ == pytest.approx(want.scale_, rel=1e-15, abs=0), name
    else:
        assert got.scale_ == want.scale_, name


@pytest.fixture(scope="module")
def data(spark):
    """1000 scores (normal, Pareto outliers, a run of ties, NaN and nulls)
    in 2 partitions of uneven sizes, cached."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=1000)
    x[rng.integers(1000, size=20)] = 5 + rng.pareto(2.0, 20)
    x[600:630] = 0.25
    x[[10, 500]] = np.nan
    ids = np.arange(1000)
    df = spark.createDataFrame(pa.table({"id": ids, "score": x}))
    df = df.withColumn("score", F.when(F.col("id") == 77, None).otherwise(F.col("score")))
    df = df.repartitionByRange(2, F.when(F.col("id") < 300, 0).otherwise(1)).cache()
    x[77] = np.nan
    yield df, x
    df.unpersist()


def test_every_variant_equals_in_memory(data):
    df, x = data
    for name in outprob.VARIANTS:
        # A tiny collect_max makes some fits go through histogram passes.
        tiny = name in ("median_nmad", "trimmed_mean_niqr", "median_std")
        got, info = fit(outprob.scaler(name), df, "score", collect_max=7 if tiny else 1 << 20,
                        return_info=True)
        want = in_memory(outprob.scaler(name), x)
        if name == "linear":
            assert (got.min_, got.max_) == (want.min_, want.max_)
            continue
        assert_same_fit(got, want, name)
        np.testing.assert_allclose(got.transform(x), want.transform(x), rtol=1e-12, atol=1e-15)
    lin = fit(LinearScaler(higher_is_outlier=False), df, "score")
    want = in_memory(LinearScaler(higher_is_outlier=False), x)
    assert (lin.min_, lin.max_) == (want.min_, want.max_)


def test_m_estimation_by_reductions(data):
    """A column larger than collect_max: one Spark job summarises it
    (bucket moments) and at most one more collects the scores of the
    buckets the windows cut — not one job per location step."""
    df, x = data
    got, info = fit(outprob.scaler("huber"), df, "score", collect_max=400, return_info=True)
    assert_same_fit(got, in_memory(outprob.scaler("huber"), x), "huber")
    # native census, median and nMAD brackets (or their rounds) with the
    # summary read in the median's pass, collect
    assert 3 <= info["passes"] <= 6


def test_median_and_nmad_take_two_passes_and_no_python_census(data, monkeypatch):
    df, x = data
    got, info = fit(GaussianScaler("median", "nmad"), df, "score", return_info=True)
    assert_same_fit(got, in_memory(GaussianScaler("median", "nmad"), x), "median_nmad")
    assert info["passes"] == 2  # native census (sketch), median and deviation brackets fused
    assert info["bytes"] < 200_000  # the partials, not the scores (9.6 kB of them here)


@pytest.mark.parametrize("params", [
    dict(fixed_center=1.0),
    dict(fixed_center=0.7, scale="nmad"),
    dict(fixed_center=2.0, scale="niqr", higher_is_outlier=False),
    dict(fixed_center=0.5, scale="trimmed_std"),
    dict(pretransform="sqrt"),
    dict(pretransform="sqrt", center="trimmed_mean", scale="trimmed_std", higher_is_outlier=False),
    dict(lam=2.5, center="median", scale="niqr"),
    dict(center="median", scale="trimmed_std", trim=0.2, ddof=1),
])
def test_gaussian_options_equal_in_memory(data, params):
    """The options on Spark (with M-estimation and minus_log: test_dask_options.py)."""
    df, x = data
    got = fit(GaussianScaler(**params), df, "score")
    want = in_memory(GaussianScaler(**params), x)
    assert_same_fit(got, want, str(params))
    if params.get("pretransform") == "sqrt":
        assert got.pre_min_ == want.pre_min_
    np.testing.assert_allclose(got.transform(x), want.transform(x), rtol=1e-12, atol=1e-15)


def test_two_columns_with_names(spark):
    rng = np.random.default_rng(8)
    a, b = rng.lognormal(size=700), rng.normal(size=700).astype(np.float32)
    df = spark.createDataFrame(pa.table({"a": a, "b": b})).repartition(3)
    got = fit(GaussianScaler("trimmed_mean", "nmad"), df, ["a", "b"])
    import pandas as pd

    want = in_memory(GaussianScaler("trimmed_mean", "nmad"), pd.DataFrame({"a": a, "b": b}))
    assert list(got.feature_names_in_) == ["a", "b"]
    assert np.array_equal(got.center_, want.center_) and np.array_equal(got.scale_, want.scale_)


def test_refusals_name_the_option(spark, data):
    df, x = data
    with pytest.raises(ValueError, match="window"):
        osp.fit(GaussianScaler(window=100), df, "score")
    with pytest.raises(ValueError, match="trim='auto'"):
        osp.fit(GaussianScaler("trimmed_mean", "std", trim="auto"), df, "score")
    for scaler, why in ((outprob.RankScaler(), "mid-rank"), (outprob.SigmoidScaler(), "EM"),
                        (outprob.MixtureScaler(), "EM"), (outprob.GammaScaler(), "GammaScaler")):
        with pytest.raises(TypeError, match=why):
            osp.fit(scaler, df, "score")
    with pytest.raises(ValueError, match="minus_log"):
        osp.fit(GaussianScaler(pretransform="minus_log"), df, "score")  # normal scores: some <= 0
    positive = spark.createDataFrame(pa.table({"score": np.exp(x)})).repartition(2)
    got = fit(GaussianScaler("median", "nmad", pretransform="minus_log"), positive, "score")
    want = in_memory(GaussianScaler("median", "nmad", pretransform="minus_log"), np.exp(x))
    assert_same_fit(got, want, "minus_log")
    with pytest.raises(ValueError, match="collect_max"):
        osp.fit(GaussianScaler("median", "nmad"), df, "score", collect_max=0)


def test_cli_fit_with_spark_equals_in_memory(spark, tmp_path, capsys):
    from outprob.cli import main

    rng = np.random.default_rng(4)
    x = rng.lognormal(size=400)
    path = tmp_path / "scores.csv"
    path.write_text("id;score\n" + "".join(f"{i};{float(v)!r}\n" for i, v in enumerate(x)))
    outs = []
    for extra in ([], ["--spark"]):
        assert main(["fit", str(path), "--column", "score", "--variant", "median_nmad", *extra]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0]["fitted"] == outs[1]["fitted"]
    assert spark.range(1).count() == 1  # the shared session is still running


def test_ends_of_the_double_range_as_in_memory(spark):
    """§9 "Exact distributed fit": Huber's σ at 1e200 was 0.643× the
    in-memory σ and Tukey's on subnormal scores 0.64×, their partition sums
    of squares out of range; the trimmed mean of ``full(20, 1e307)`` was
    refused ("fitted parameters must be finite numbers")."""
    z = np.random.default_rng(0).normal(size=400)
    for name, x in (("huber", z * 1e200), ("tukey", z * 2.0**-1060),
                    ("trimmed_mean_std", np.full(20, 1e307))):
        df = spark.createDataFrame(pa.table({"score": x})).repartition(2)
        assert_same_fit(fit(outprob.scaler(name), df, "score"), in_memory(outprob.scaler(name), x),
                        name)


def test_integers_beyond_2_to_the_53_read_as_the_nearest_double(spark):
    """§9 "Spark": a bigint column holding 2^62 is read as float64, as
    NumPy reads it (it raised Arrow's ArrowInvalid in the workers)."""
    ints = [2**62, 2**62 + 1, 1, 2, 3, 5, 8, -(2**63)]
    df = spark.createDataFrame(pa.table({"score": pa.array(ints, pa.int64())})).repartition(2)
    x = np.array(ints, dtype=np.int64).astype(float)
    for name in ("median_nmad", "mean_std"):  # native census; census on Arrow batches
        assert_same_fit(fit(outprob.scaler(name), df, "score"), in_memory(outprob.scaler(name), x),
                        name)


@pytest.mark.parametrize("module", ["outprob", "pyarrow"])
def test_workers_that_cannot_import_say_so_in_one_line(spark, tmp_path, module, monkeypatch):
    """§9 "Spark": the Python workers run an interpreter that cannot import
    ``module`` (here the test interpreter with the module hidden): one line
    naming the interpreter and the module, not the workers' traceback."""
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\n"
        "class Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.partition('.')[0] == {module!r}:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Hide())\n")
    python = tmp_path / "python-without"
    python.write_text(f'#!/bin/sh\nPYTHONPATH="{tmp_path}" exec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    df = spark.createDataFrame(pa.table({"score": np.arange(50.0)})).repartition(2)
    monkeypatch.setattr(spark.sparkContext, "pythonExec", str(python))
    with pytest.raises(ImportError) as err:
        osp.fit(outprob.scaler("mean_std"), df, "score")
    message = str(err.value)
    assert "\n" not in message and str(python) in message and f"import {module}" in message
    assert "outprob[spark]" in message
