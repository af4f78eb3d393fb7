"""Fit a transformation to a file of outlier scores and print it as JSON.

The JSON is what outprob.from_dict(json.load(...)) turns back into the
fitted scaler; with --map it is the fitted map alone, which
outprob.load_map reads (and outprob stream --map, outprob scale --map
apply) without importing scikit-learn, e.g. in a scoring service. Scores come from a column of a
Parquet or CSV table, a .npy array (1-D, or 2-D: one score column per
column) or a text file with one score per line. With --dask the file is
read and fitted by Dask (outprob[dask]; Parquet, CSV or .npy), with --spark
by a local Spark session (outprob[spark]; Parquet or CSV), exactly: the
same parameters as the in-memory fit.

examples:
  outprob fit scores.parquet --column lof --variant median_nmad > scaler.json
  outprob fit scores.csv --column lof --map > fitted.json   # for outprob stream --map
  outprob fit scores.npy --variant huber --dask
  outprob fit scores.parquet --column lof --spark
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

NAME = "fit"
HELP = "fit a transformation to a file of scores; print it as JSON for outprob.from_dict"

_NPY, _TEXT = (".npy",), (".txt", ".dat", ".scores")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("scores", type=Path, help="a .parquet, .csv, .npy or .txt file of scores")
    p.add_argument("--variant", "-v", default="mean_nmad",
                   help="registered transformation (default: mean_nmad; see outprob.VARIANTS)")
    p.add_argument("--column", "-c", help="column of a table (default: its only column)")
    engine = p.add_mutually_exclusive_group()
    engine.add_argument("--dask", action="store_true", help="read and fit with Dask (exact)")
    engine.add_argument("--spark", action="store_true", help="read and fit with local Spark (exact)")
    p.add_argument("--lower-is-outlier", action="store_true", help="lower scores are more outlying")
    p.add_argument("--indent", type=int, default=2, help="JSON indentation (default 2)")
    p.add_argument("--map", action="store_true",
                   help="print the fitted map alone (for outprob.load_map) instead of the scaler")


def run(args: argparse.Namespace) -> int:
    import outprob

    from . import CLIError

    path: Path = args.scores
    if not path.is_file():
        raise CLIError(f"{path}: no such file")
    model = outprob.scaler(args.variant, higher_is_outlier=not args.lower_is_outlier)
    suffix = path.suffix.lower()
    if args.column is not None and suffix in _NPY + _TEXT:
        raise CLIError(f"--column applies to tables (.parquet, .csv), not to {suffix} files")
    if args.dask:
        fitted = _fit_dask(model, path, suffix, args.column)
    elif args.spark:
        fitted = _fit_spark(model, path, suffix, args.column)
    else:
        fitted = model.fit(_read(path, suffix, args.column))
    data = fitted.to_map().to_dict() if args.map else fitted.to_dict()
    print(json.dumps(data, indent=args.indent or None))
    return 0


def _read(path: Path, suffix: str, column: Any) -> Any:
    import numpy as np

    if suffix in _NPY:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    if suffix in _TEXT:
        from ._lines import read_text

        return read_text(str(path))
    from outprob._common.tables import columns_of, read_columns

    from . import CLIError

    if column is None:
        names = columns_of(path)
        if len(names) != 1:
            raise CLIError(f"{path} has {len(names)} columns ({', '.join(names)}): "
                           "name the scores with --column")
    (x,) = read_columns(path, [column])
    return x


def _fit_dask(model: Any, path: Path, suffix: str, column: Any) -> Any:
    from outprob._common.optional import require

    from . import CLIError

    require("dask", "the --dask option")
    import outprob.dask

    if suffix in _NPY:
        import dask.array as da
        import numpy as np

        x = np.load(path, mmap_mode="r", allow_pickle=False)
        data: Any = da.from_array(x, chunks=(1 << 22,) + x.shape[1:])  # type: ignore[no-untyped-call]
    elif suffix in (".parquet", ".pq", ".csv"):
        import dask.dataframe as dd

        if suffix == ".csv":
            from outprob._common.tables import csv_header

            _, dialect = csv_header(path)  # the in-memory reader's separators and checks
            frame = dd.read_csv(path, sep=dialect.delimiter, encoding="utf-8-sig")
        else:
            frame = dd.read_parquet(path)
        data = frame[_score_column(path, list(frame.columns), column)].astype("float64")
    else:
        raise CLIError(f"--dask reads .parquet, .csv or .npy files, not {suffix or 'this'} files")
    return outprob.dask.fit(model, data)


def _score_column(path: Path, names: Any, column: Any) -> Any:
    from . import CLIError

    if column is None:
        if len(names) != 1:
            raise CLIError(f"{path} has {len(names)} columns ({', '.join(map(str, names))}): "
                           "name the scores with --column")
        column = names[0]
    if column not in names:
        raise CLIError(f"{path} has no column {column!r}; its columns: {', '.join(map(str, names))}")
    return column


def _fit_spark(model: Any, path: Path, suffix: str, column: Any) -> Any:
    from outprob._common.optional import require

    from . import CLIError

    require("pyspark", "the --spark option")
    if suffix not in (".parquet", ".pq", ".csv"):
        raise CLIError(f"--spark reads .parquet or .csv files, not {suffix or 'this'} files")
    import os
    import sys

    import outprob.spark
    from pyspark.sql import SparkSession

    from outprob._common.tables import csv_header

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the workers' Python: this one
    ours = SparkSession.getActiveSession() is None
    spark = (SparkSession.builder.master("local[*]").appName("outprob fit")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        frame = (spark.read.parquet(str(path)) if suffix != ".csv" else
                 spark.read.csv(str(path), header=True, sep=csv_header(path)[1].delimiter,
                                encoding="UTF-8"))
        name = _score_column(path, frame.columns, column)
        scores = frame.select(frame[f"`{name}`"].cast("double").alias(name))
        return outprob.spark.fit(model, scores, name)
    finally:
        if ours:
            spark.stop()
