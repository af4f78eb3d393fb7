"""``outprob.dask.fit`` with every option of GaussianScaler (contract §9,
"Exact distributed fit"; the options are §10's): pretransform,
fixed_center, lam equal the in-memory fit; what cannot be distributed is
refused by name; object columns of numbers fit; ``outprob fit --dask``
reads CSV files as the in-memory reader does. (Synchronous scheduler: the
planner, not the cluster, is under test here; test_dask.py runs a
cluster.)"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

import pandas as pd  # noqa: E402

import outprob  # noqa: E402
import outprob.dask as odask  # noqa: E402
from outprob import GaussianScaler  # noqa: E402


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="sync"):
        yield


def scores(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.lognormal(size=n)
    x[rng.integers(n, size=n // 50)] = 50 + rng.pareto(1.0, n // 50)
    x[100:160] = 1.25  # ties
    x[7] = np.nan
    return x


def in_memory(scaler, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return scaler.fit(x)


def fit(scaler, data, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return odask.fit(scaler, data, **kw)


OPTIONS = [
    dict(fixed_center=1.0),
    dict(fixed_center=1.0, ddof=1),
    dict(fixed_center=0.8, scale="nmad"),
    dict(fixed_center=3.0, scale="niqr", higher_is_outlier=False),
    dict(fixed_center=0.5, scale="trimmed_std"),
    dict(fixed_center=1.0, scale="huber"),
    dict(fixed_center=1.25, scale="nmad", trim=0.3),
    dict(pretransform="sqrt"),
    dict(pretransform="sqrt", center="median", scale="nmad", higher_is_outlier=False),
    dict(pretransform="sqrt", center="trimmed_mean", scale="trimmed_std"),
    dict(pretransform="minus_log"),
    dict(pretransform="minus_log", center="median", scale="niqr"),
    dict(pretransform="minus_log", center="tukey", scale="tukey", higher_is_outlier=False),
    dict(pretransform="sqrt", fixed_center=0.9, scale="nmad"),
    dict(lam=3.0),
    dict(lam=0.5, center="huber", scale="huber"),
]


@pytest.mark.parametrize("params", OPTIONS, ids=[str(p) for p in OPTIONS])
def test_options_equal_the_in_memory_fit(params):
    x = scores()
    got = fit(GaussianScaler(**params), da.from_array(x, chunks=(200, 0, 500, 800)),
              collect_max=50)
    want = in_memory(GaussianScaler(**params), x)
    m_est = params.get("center") in ("huber", "tukey") or params.get("scale") in ("huber", "tukey")
    if m_est:
        assert got.center_ == pytest.approx(want.center_, rel=1e-12, abs=1e-12 * want.scale_)
        assert got.scale_ == pytest.approx(want.scale_, rel=1e-12)
    else:
        assert got.center_ == want.center_
        assert got.scale_used_ == want.scale_used_
        assert got.scale_ == pytest.approx(want.scale_, rel=1e-15, abs=0)
    if params.get("pretransform") == "sqrt":
        assert got.pre_min_ == want.pre_min_
    # The probabilities (pretransform and λ at transform time) agree too.
    np.testing.assert_allclose(got.transform(x), want.transform(x), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["huber", "tukey"])
def test_m_estimates_by_reductions_and_gathered(name):
    """Above collect_max the column is summarised in one pass (bucket
    moments) and the scores of the buckets the windows cut collected in
    at most one more — not a reduction per location step; within it the
    column is gathered once and the steps' sums taken on the client (both
    within 1e-12 of the in-memory fit)."""
    x = scores(2000, 9)
    arr = da.from_array(x, chunks=600)
    want = in_memory(outprob.scaler(name), x)
    reduced, info = fit(outprob.scaler(name), arr, collect_max=100, return_info=True)
    assert reduced.center_ == pytest.approx(want.center_, rel=1e-12, abs=1e-12 * want.scale_)
    assert reduced.scale_ == pytest.approx(want.scale_, rel=1e-12)
    # census, median and nMAD brackets with the summary in one pass, collect:
    # 29 steps, no pass each
    assert reduced.n_iter_ == want.n_iter_ and info["passes"] <= 4
    gathered, info = fit(outprob.scaler(name), arr, return_info=True)
    assert gathered.center_ == pytest.approx(want.center_, rel=1e-12, abs=1e-12 * want.scale_)
    assert gathered.scale_ == pytest.approx(want.scale_, rel=1e-12)
    assert gathered.n_iter_ == want.n_iter_
    assert info["passes"] == 3  # census, median and nMAD brackets (one pass), gather


def test_fixed_center_zero_scale_falls_back_about_the_center():
    x = np.r_[np.full(60, 2.0), np.linspace(0, 10, 11)]
    for scale in ("nmad", "std"):
        got = fit(GaussianScaler(fixed_center=2.0, scale=scale), da.from_array(x, chunks=20))
        want = in_memory(GaussianScaler(fixed_center=2.0, scale=scale), x)
        assert (got.center_, got.scale_used_) == (want.center_, want.scale_used_)
        assert got.scale_ == pytest.approx(want.scale_, rel=1e-15)


def test_what_cannot_be_distributed_is_refused_by_name():
    arr = da.from_array(scores(), chunks=500)
    with pytest.raises(ValueError, match="window"):
        odask.fit(GaussianScaler(window=100), arr)
    with pytest.raises(ValueError, match="trim='auto'"):
        odask.fit(outprob.scaler("trimmed_mean_std_auto"), arr)
    for name, why in (("gamma", "GammaScaler"), ("robust_gamma", "GammaScaler"),
                      ("sigmoid", "EM"), ("mixture", "EM"), ("rank", "mid-rank"),
                      ("log_rank", "mid-rank"), ("top_k", "TopKScaler")):
        with pytest.raises(TypeError, match=why):
            odask.fit(outprob.scaler(name), arr)
    with pytest.raises(ValueError, match="minus_log"):
        odask.fit(GaussianScaler(pretransform="minus_log"), da.from_array(np.r_[1.0, 0.0, 2.0], chunks=2))
    with pytest.raises(TypeError, match="pretransform"):
        odask.fit(GaussianScaler(pretransform="sqrt"), arr, method="sketch")


def test_object_columns_of_numbers():
    values = pd.Series([1, 2.5, 3, 4, 10.0, np.nan, 7], dtype=object)
    want = in_memory(GaussianScaler("median", "nmad"), values)
    with dask.config.set({"dataframe.convert-string": False}):
        got = fit(GaussianScaler("median", "nmad"), dd.from_pandas(values, npartitions=3))
    assert (got.center_, got.scale_) == (want.center_, want.scale_)
    # Dask's default turns the object column behind from_pandas into text;
    # the fit reads the pandas data as they are (contract §9).
    got = fit(GaussianScaler("median", "nmad"), dd.from_pandas(values, npartitions=2))
    assert (got.center_, got.scale_) == (want.center_, want.scale_)
    # A column of text is refused, with the way out.
    with pytest.raises(outprob.InputError, match="convert-string"):
        odask.fit(GaussianScaler(), dd.from_pandas(values.astype(str), npartitions=2))


def test_cli_dask_reads_semicolon_csv_as_the_in_memory_reader(tmp_path, capsys):
    from outprob.cli import main

    x = scores(300, 3)
    x = x[~np.isnan(x)]
    path = tmp_path / "scores.csv"
    path.write_text("id;score\n" + "".join(f"{i};{float(v)!r}\n" for i, v in enumerate(x)))
    outs = []
    for extra in ([], ["--dask"]):
        assert main(["fit", str(path), "--column", "score", "--variant", "median_nmad", *extra]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0]["fitted"] == outs[1]["fitted"]


def test_dask_fits_a_pandas_object_series_of_numbers():
    """§9: Dask turns the object column behind from_pandas into text; the
    fit reads the pandas data as they are and equals the in-memory fit,
    while text stays refused."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    import outprob.dask

    values = [1.0, 2, 3, 4, 5.5, 7, 11, 2.5]
    s = pd.Series(values, dtype=object)
    for name in ("mean_std", "median_nmad", "huber"):
        got = outprob.dask.fit(outprob.scaler(name), dd.from_pandas(s, npartitions=3))
        want = outprob.scaler(name).fit(np.array(values, dtype=float))
        assert (float(got.center_), float(got.scale_)) == (float(want.center_), float(want.scale_))
    frame = pd.DataFrame({"a": s, "b": np.arange(8.0)})
    got = outprob.dask.fit(outprob.scaler("mean_std"), dd.from_pandas(frame, npartitions=2))
    want = outprob.scaler("mean_std").fit(frame.astype(float))
    np.testing.assert_array_equal(got.center_, want.center_)
    text = pd.Series(["1", "2", "3"], dtype=object)
    with pytest.raises(ValueError, match="text|string"):
        outprob.dask.fit(outprob.scaler("mean_std"), dd.from_pandas(text, npartitions=1))
    mixed = pd.Series([1.0, "x", 3.0], dtype=object)
    with pytest.raises(ValueError, match="string|text"):
        outprob.dask.fit(outprob.scaler("mean_std"), dd.from_pandas(mixed, npartitions=1))
