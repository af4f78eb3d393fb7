"""Fit a transformation to a file of outlier scores and print it as JSON.

The JSON is what outprob.from_dict(json.load(...)) turns back into the
fitted scaler; with --map it is the fitted map alone, which
outprob.load_map reads (and outprob stream --map, outprob scale --map
apply) without importing scikit-learn, e.g. in a scoring service. Scores come from a column of a
Parquet or CSV table, a .npy array (1-D, or 2-D: one score column per
column) or a text file with one score per line. The kind is the file's
suffix (.parquet/.pq, .csv/.tsv, .npy, .txt/.dat/.scores; any case) or
--format; a file of another name is refused rather than guessed. With --dask the file is
read and fitted by Dask (outprob[dask]; Parquet, CSV or .npy), with --spark
by a local Spark session (outprob[spark]; Parquet or CSV), exactly: the
same parameters as the in-memory fit.

examples:
  outprob fit scores.parquet --column lof --variant median_nmad > scaler.json
  outprob fit scores.csv --column lof --map > fitted.json   # for outprob stream --map
  outprob fit scores.npy --variant huber --dask
  outprob fit scores.parquet --column lof --spark
  outprob fit scores --format txt            # one score per line, no suffix
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

NAME = "fit"
HELP = "fit a transformation to a file of scores; print it as JSON for outprob.from_dict"

#: File kinds by suffix (compared in lower case).
_KINDS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "csv",
          ".npy": "npy", ".txt": "txt", ".dat": "txt", ".scores": "txt"}
_TABLES = ("parquet", "csv")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("scores", type=Path, help="a .parquet, .csv, .npy or .txt file of scores")
    p.add_argument("--format", "-f", choices=("parquet", "csv", "npy", "txt"),
                   help="how to read the file (default: from its suffix; txt = one score per line)")
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
    kind = args.format or kind_of(path)
    model = outprob.scaler(args.variant, higher_is_outlier=not args.lower_is_outlier)
    if args.column is not None and kind not in _TABLES:
        raise CLIError(f"--column applies to tables (parquet, csv), not to {kind} files")
    if args.dask:
        fitted = _fit_dask(model, path, kind, args.column)
    elif args.spark:
        fitted = _fit_spark(model, path, kind, args.column)
    else:
        fitted = model.fit(_read(path, kind, args.column))
    data = fitted.to_map().to_dict() if args.map else fitted.to_dict()
    print(json.dumps(data, indent=args.indent or None))
    return 0


def kind_of(path: Path) -> str:
    """The file kind its suffix names; any other name is refused: a text
    file read as a CSV table would lose its first score to the header."""
    from . import CLIError

    suffix = path.suffix.lower()
    if suffix not in _KINDS:
        what = f"a {path.suffix!r} suffix" if path.suffix else "no suffix"
        raise CLIError(
            f"{path}: {what}, so its kind is unknown; outprob fit reads .parquet/.pq and "
            ".csv/.tsv tables, .npy arrays and .txt/.dat/.scores text (one score per line): "
            "rename the file or name its kind with --format parquet|csv|npy|txt")
    return _KINDS[suffix]


def _read(path: Path, kind: str, column: Any) -> Any:
    import numpy as np

    if kind == "npy":
        return np.load(path, mmap_mode="r", allow_pickle=False)
    if kind == "txt":
        from ._lines import read_text

        return read_text(str(path))
    from outprob._common.tables import columns_of, read_columns

    from . import CLIError

    parquet = kind == "parquet"
    if column is None:
        names = columns_of(path, parquet=parquet)
        if len(names) != 1:
            raise CLIError(f"{path} has {len(names)} columns ({', '.join(names)}): "
                           "name the scores with --column")
    (x,) = read_columns(path, [column], parquet=parquet)
    return x


def _fit_dask(model: Any, path: Path, kind: str, column: Any) -> Any:
    from outprob._common.optional import require

    require("dask", "the --dask option")
    try:
        return _dask_fit(model, path, kind, column)
    except UnicodeDecodeError:  # a bad byte past the start the CSV sniffer read
        from outprob._common.tables import not_utf8

        raise not_utf8(path) from None


def _dask_fit(model: Any, path: Path, kind: str, column: Any) -> Any:
    import outprob.dask

    from . import CLIError

    if kind == "npy":
        import dask.array as da
        import numpy as np

        x = np.load(path, mmap_mode="r", allow_pickle=False)
        data: Any = da.from_array(x, chunks=(1 << 22,) + x.shape[1:])  # type: ignore[no-untyped-call]
    elif kind in _TABLES:
        import dask.dataframe as dd

        if kind == "csv":
            from outprob._common.tables import csv_header

            _, dialect = csv_header(path)  # the in-memory reader's separators and checks
            frame = dd.read_csv(path, sep=dialect.delimiter, encoding="utf-8-sig")
        else:
            frame = dd.read_parquet(path)
        data = frame[_score_column(path, list(frame.columns), column)].astype("float64")
    else:
        raise CLIError(f"--dask reads parquet, csv or npy files, not {kind} files")
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


def _fit_spark(model: Any, path: Path, kind: str, column: Any) -> Any:
    from outprob._common.optional import require

    from . import CLIError

    require("pyspark", "the --spark option")
    if kind not in _TABLES:
        raise CLIError(f"--spark reads parquet or csv files, not {kind} files")
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
        frame = (spark.read.parquet(str(path)) if kind == "parquet" else
                 spark.read.csv(str(path), header=True, sep=csv_header(path)[1].delimiter,
                                encoding="UTF-8"))
        name = _score_column(path, frame.columns, column)
        scores = frame.select(frame[f"`{name}`"].cast("double").alias(name))
        return outprob.spark.fit(model, scores, name)
    finally:
        if ours:
            spark.stop()
